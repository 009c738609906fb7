/*
 * Dense unions: the "+ud:" format, validation of type ids and offsets,
 * and the IPC writer (the reader refuses unions with a clear status; the
 * written bytes are checked by pyarrow in tests/integration/test_serve.py,
 * through Flight SQL's GetSqlInfo).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "knut/arrow.h"

static void test_format(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    knut_arrow_type_info t;
    char buf[64];
    assert_int_equal(knut_arrow_format_parse("+ud:0,1,5", &t, &err), KNUT_OK);
    assert_int_equal(t.type, KNUT_ARROW_DENSE_UNION);
    assert_int_equal(t.n_type_ids, 3);
    assert_int_equal(t.type_ids[2], 5);
    assert_int_equal(knut_arrow_format_print(&t, buf, sizeof buf, &err), KNUT_OK);
    assert_string_equal(buf, "+ud:0,1,5");
    assert_string_equal(knut_arrow_type_name(t.type), "dense_union");
    const char *bad[] = {"+ud:0,0", "+ud:128", "+ud:1,", "+ud:x", "+ud:-1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(knut_arrow_format_parse(bad[i], &t, &err), KNUT_EINVAL);
    assert_int_equal(knut_arrow_format_parse("+us:0,1", &t, &err), KNUT_EUNSUPPORTED);
}

/* A union of an int32 child (id 3) and a utf8 child (id 7), 3 rows. */
typedef struct fixture {
    struct ArrowSchema schema; /* struct { u: dense_union } */
    struct ArrowArray ints, strs, uni, top;
    struct ArrowArray *kids[2], *cols[1];
    int8_t ids[3];
    int32_t offs[3];
    const void *ubufs[2], *tbufs[1];
} fixture;

static void noop_release(struct ArrowArray *a)
{
    a->release = NULL;
}

static void make(fixture *f)
{
    knut_error err = KNUT_ERROR_INIT;
    knut_arrow_builder *bi = NULL, *bs = NULL;
    memset(f, 0, sizeof *f);
    assert_int_equal(knut_arrow_schema_init(&f->schema, "+s", NULL, 0, 1, &err), KNUT_OK);
    assert_int_equal(knut_arrow_schema_init(f->schema.children[0], "+ud:3,7", "u", 0, 2, &err),
                     KNUT_OK);
    assert_int_equal(knut_arrow_schema_init(f->schema.children[0]->children[0], "i", "n", 0, 0,
                                            &err), KNUT_OK);
    assert_int_equal(knut_arrow_schema_init(f->schema.children[0]->children[1], "u", "s", 0, 0,
                                            &err), KNUT_OK);
    assert_int_equal(knut_arrow_builder_new_simple(&bi, KNUT_ARROW_INT32, "n", &err), KNUT_OK);
    assert_int_equal(knut_arrow_builder_new_simple(&bs, KNUT_ARROW_UTF8, "s", &err), KNUT_OK);
    assert_int_equal(knut_arrow_builder_append_int(bi, 42, &err), KNUT_OK);
    assert_int_equal(knut_arrow_builder_append_str(bs, "a", &err), KNUT_OK);
    assert_int_equal(knut_arrow_builder_append_str(bs, "b", &err), KNUT_OK);
    assert_int_equal(knut_arrow_builder_finish(bi, &f->ints, NULL, &err), KNUT_OK);
    assert_int_equal(knut_arrow_builder_finish(bs, &f->strs, NULL, &err), KNUT_OK);
    knut_arrow_builder_free(bi);
    knut_arrow_builder_free(bs);
    f->ids[0] = 7, f->ids[1] = 3, f->ids[2] = 7;
    f->offs[0] = 0, f->offs[1] = 0, f->offs[2] = 1;
    f->kids[0] = &f->ints;
    f->kids[1] = &f->strs;
    f->ubufs[0] = f->ids;
    f->ubufs[1] = f->offs;
    f->uni = (struct ArrowArray){.length = 3, .n_buffers = 2, .n_children = 2,
                                 .buffers = f->ubufs, .children = f->kids,
                                 .release = noop_release};
    f->cols[0] = &f->uni;
    f->top = (struct ArrowArray){.length = 3, .n_buffers = 1, .n_children = 1,
                                 .buffers = f->tbufs, .children = f->cols,
                                 .release = noop_release};
}

static void drop(fixture *f)
{
    knut_arrow_array_release(&f->ints);
    knut_arrow_array_release(&f->strs);
    knut_arrow_schema_release(&f->schema);
}

static void test_validate(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    fixture f;
    make(&f);
    assert_int_equal(knut_arrow_array_validate(&f.schema, &f.top, KNUT_ARROW_VALIDATE_FULL, &err),
                     KNUT_OK);
    f.ids[1] = 4; /* not an id of the union */
    assert_int_equal(knut_arrow_array_validate(&f.schema, &f.top, KNUT_ARROW_VALIDATE_DEFAULT,
                                               &err), KNUT_EINVAL);
    assert_non_null(strstr(err.message, "type id 4"));
    f.ids[1] = 3;
    f.offs[2] = 2; /* the utf8 child has 2 rows */
    assert_int_equal(knut_arrow_array_validate(&f.schema, &f.top, KNUT_ARROW_VALIDATE_DEFAULT,
                                               &err), KNUT_EINVAL);
    assert_non_null(strstr(err.message, "offset 2"));
    f.offs[2] = 1;
    f.uni.null_count = 1;
    assert_int_equal(knut_arrow_array_validate(&f.schema, &f.top, KNUT_ARROW_VALIDATE_MINIMAL,
                                               &err), KNUT_EINVAL);
    drop(&f);
}

static void test_ipc_write(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    fixture f;
    make(&f);
    knut_buf out = KNUT_BUF_INIT;
    knut_arrow_ipc_writer *w = NULL;
    assert_int_equal(knut_arrow_ipc_writer_new(&w, knut_arrow_ipc_sink_buf(&out), &f.schema, &err),
                     KNUT_OK);
    size_t schema_len = out.len;
    assert_int_equal(knut_arrow_ipc_writer_write(w, &f.top, &err), KNUT_OK);
    assert_int_equal(knut_arrow_ipc_writer_finish(w, &err), KNUT_OK);
    assert_true(out.len > schema_len + 8 + 3 + 12);
    /* the reader takes it back: same schema, ids, offsets and children */
    knut_arrow_ipc_source src;
    knut_arrow_ipc_reader *r = NULL;
    assert_int_equal(knut_arrow_ipc_source_mem(&src, out.data, out.len, &err), KNUT_OK);
    assert_int_equal(knut_arrow_ipc_reader_new(&r, src, NULL, &err), KNUT_OK);
    const struct ArrowSchema *rs = knut_arrow_ipc_reader_schema(r);
    assert_string_equal(rs->children[0]->format, "+ud:3,7");
    assert_int_equal(rs->children[0]->n_children, 2);
    struct ArrowArray a = {0};
    assert_int_equal(knut_arrow_ipc_reader_next(r, &a, &err), KNUT_OK);
    assert_int_equal(a.length, 3);
    const struct ArrowArray *u = a.children[0];
    assert_int_equal(u->null_count, 0);
    const int8_t *ids = u->buffers[0];
    const int32_t *offs = u->buffers[1];
    for (int i = 0; i < 3; i++) {
        assert_int_equal(ids[u->offset + i], f.ids[i]);
        assert_int_equal(offs[u->offset + i], f.offs[i]);
    }
    assert_int_equal(u->children[0]->length, f.ints.length);
    assert_int_equal(u->children[1]->length, f.strs.length);
    assert_int_equal(((const int32_t *)u->children[0]->buffers[1])[u->children[0]->offset],
                     ((const int32_t *)f.ints.buffers[1])[f.ints.offset]);
    knut_arrow_array_release(&a);
    assert_int_equal(knut_arrow_ipc_reader_next(r, &a, &err), KNUT_OK);
    assert_null(a.release);
    knut_arrow_ipc_reader_free(r);
    knut_arrow_ipc_writer_free(w);
    knut_buf_reset(&out);
    /* nor does the builder */
    knut_arrow_builder *b = NULL;
    assert_int_equal(knut_arrow_builder_new_from_schema(&b, f.schema.children[0], &err),
                     KNUT_EUNSUPPORTED);
    drop(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_format),
        cmocka_unit_test(test_validate),
        cmocka_unit_test(test_ipc_write),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
