/*
 * Unit tests for the stream helpers: a stream over built arrays round
 * trips through collect and count_rows, caps and producer errors are
 * reported, and ownership is honoured on every path (run under ASan to
 * catch leaks and double releases).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "knut/arrow.h"

#define OK(expr)                                                          \
    do {                                                                  \
        knut_error e_ = KNUT_ERROR_INIT;                                  \
        knut_status s_ = (expr);                                          \
        if (s_ != KNUT_OK)                                                \
            fail_msg("%s -> %d: %s", #expr, (int)s_, e_.message);         \
    } while (0)

/* Builds n batches of struct<id: int64, name: utf8>, batch k has k+2 rows
 * with ids continuing across batches. */
static void make_batches(struct ArrowSchema *schema, struct ArrowArray *arrays, int n)
{
    knut_arrow_builder *root, *id, *name;
    OK(knut_arrow_builder_new_simple(&root, KNUT_ARROW_STRUCT, "", &e_));
    OK(knut_arrow_builder_new_simple(&id, KNUT_ARROW_INT64, "id", &e_));
    OK(knut_arrow_builder_new_simple(&name, KNUT_ARROW_UTF8, "name", &e_));
    OK(knut_arrow_builder_add_child(root, id, &e_));
    OK(knut_arrow_builder_add_child(root, name, &e_));
    int64_t next = 0;
    for (int k = 0; k < n; k++) {
        for (int r = 0; r < k + 2; r++, next++) {
            char buf[32];
            snprintf(buf, sizeof(buf), "name-%lld", (long long)next);
            OK(knut_arrow_builder_append_int(id, next, &e_));
            OK(knut_arrow_builder_append_str(name, buf, &e_));
            OK(knut_arrow_builder_finish_element(root, &e_));
        }
        OK(knut_arrow_builder_finish(root, &arrays[k], k == 0 ? schema : NULL, &e_));
    }
    knut_arrow_builder_free(root);
}

static void test_arrow_stream__round_trip(void **state)
{
    (void)state;
    struct ArrowSchema schema, got_schema, again;
    struct ArrowArray arrays[3];
    struct ArrowArrayStream stream;
    make_batches(&schema, arrays, 3);
    OK(knut_arrow_stream_from_arrays(&stream, &schema, arrays, 3, &e_));
    assert_null(schema.release);
    for (int k = 0; k < 3; k++)
        assert_null(arrays[k].release);

    /* get_schema hands out independent copies */
    assert_int_equal(0, stream.get_schema(&stream, &again));
    assert_int_equal(2, again.n_children);
    knut_arrow_schema_release(&again);

    struct ArrowArray *got;
    int64_t n;
    OK(knut_arrow_stream_collect(&stream, &got_schema, &got, &n, 0, &e_));
    assert_int_equal(3, n);
    assert_string_equal("+s", got_schema.format);
    assert_string_equal("name", got_schema.children[1]->name);
    int64_t expect = 0;
    for (int64_t k = 0; k < n; k++) {
        knut_arrow_view v;
        int64_t len;
        OK(knut_arrow_array_validate(&got_schema, &got[k], KNUT_ARROW_VALIDATE_FULL, &e_));
        OK(knut_arrow_view_init(&v, &got_schema, &got[k], &e_));
        assert_int_equal(k + 2, v.length);
        for (int64_t r = 0; r < v.length; r++, expect++) {
            char buf[32];
            snprintf(buf, sizeof(buf), "name-%lld", (long long)expect);
            assert_int_equal(expect, knut_arrow_view_get_int64(&v.children[0], r));
            const char *p = knut_arrow_view_get_str(&v.children[1], r, &len);
            assert_int_equal((int64_t)strlen(buf), len);
            assert_memory_equal(buf, p, (size_t)len);
        }
        knut_arrow_view_reset(&v);
    }
    assert_int_equal(2 + 3 + 4, expect);
    /* the stream stays at its end */
    struct ArrowArray end;
    assert_int_equal(0, stream.get_next(&stream, &end));
    assert_null(end.release);
    assert_null(stream.get_last_error(&stream));
    knut_arrow_arrays_free(got, n);
    knut_arrow_arrays_free(NULL, 0);
    knut_arrow_schema_release(&got_schema);
    knut_arrow_stream_release(&stream);
    assert_null(stream.release);
    knut_arrow_stream_release(&stream);
    knut_arrow_stream_release(NULL);
}

static void test_arrow_stream__count_rows_and_partial_release(void **state)
{
    (void)state;
    struct ArrowSchema schema;
    struct ArrowArray arrays[4];
    struct ArrowArrayStream stream, moved;
    make_batches(&schema, arrays, 4);
    OK(knut_arrow_stream_from_arrays(&stream, &schema, arrays, 4, &e_));
    knut_arrow_stream_move(&moved, &stream);
    assert_null(stream.release);
    int64_t rows = -1;
    OK(knut_arrow_stream_count_rows(&moved, &rows, &e_));
    assert_int_equal(2 + 3 + 4 + 5, rows);
    knut_arrow_stream_release(&moved);

    /* released after one batch: the unread batches are freed (ASan) */
    make_batches(&schema, arrays, 4);
    OK(knut_arrow_stream_from_arrays(&stream, &schema, arrays, 4, &e_));
    struct ArrowArray first;
    assert_int_equal(0, stream.get_next(&stream, &first));
    assert_int_equal(2, first.length);
    knut_arrow_stream_release(&stream);
    knut_arrow_array_release(&first);

    /* an empty stream: schema, then end */
    struct ArrowSchema s2;
    OK(knut_arrow_schema_init(&s2, "+s", "", 0, 0, &e_));
    OK(knut_arrow_stream_from_arrays(&stream, &s2, NULL, 0, &e_));
    OK(knut_arrow_stream_count_rows(&stream, &rows, &e_));
    assert_int_equal(0, rows);
    knut_arrow_stream_release(&stream);
}

/* knut_arrow_stream_each: every batch as a view, and a callback's error stops it. */
typedef struct each_ctx {
    int64_t rows, calls, stop_at;
} each_ctx;

static knut_status each_count(void *ctx, const knut_arrow_view *v, knut_error *err)
{
    each_ctx *c = ctx;
    if (++c->calls == c->stop_at)
        return knut_error_set(err, KNUT_ECANCELLED, "stop");
    c->rows += v->length;
    return KNUT_OK;
}

static void test_arrow_stream__each(void **state)
{
    (void)state;
    struct ArrowSchema schema;
    struct ArrowArray arrays[4];
    struct ArrowArrayStream stream;
    make_batches(&schema, arrays, 4);
    OK(knut_arrow_stream_from_arrays(&stream, &schema, arrays, 4, &e_));
    each_ctx c = {0, 0, -1};
    OK(knut_arrow_stream_each(&stream, each_count, &c, &e_));
    assert_int_equal(4, c.calls);
    assert_int_equal(2 + 3 + 4 + 5, c.rows); /* make_batches: batch k has k + 2 rows */
    knut_arrow_stream_release(&stream);
    make_batches(&schema, arrays, 4);
    OK(knut_arrow_stream_from_arrays(&stream, &schema, arrays, 4, &e_));
    each_ctx s = {0, 0, 2};
    knut_error e = KNUT_ERROR_INIT;
    assert_int_equal(KNUT_ECANCELLED, knut_arrow_stream_each(&stream, each_count, &s, &e));
    assert_int_equal(2, s.calls);
    assert_int_equal(2, s.rows);
    knut_arrow_stream_release(&stream); /* the unread batches are freed (ASan) */
}

/* knut_arrow_stream_texts: the first column as owned strings, NULL as "",
 * capped, appended; a first column that is not text is refused. */
static void texts_free(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static void text_stream(struct ArrowArrayStream *stream)
{
    knut_arrow_builder *root, *name;
    struct ArrowSchema schema;
    struct ArrowArray arrays[2];
    OK(knut_arrow_builder_new_simple(&root, KNUT_ARROW_STRUCT, "", &e_));
    OK(knut_arrow_builder_new_simple(&name, KNUT_ARROW_UTF8, "name", &e_));
    OK(knut_arrow_builder_add_child(root, name, &e_));
    OK(knut_arrow_builder_append_str(name, "a", &e_));
    OK(knut_arrow_builder_finish_element(root, &e_));
    OK(knut_arrow_builder_append_null(name, &e_));
    OK(knut_arrow_builder_finish_element(root, &e_));
    OK(knut_arrow_builder_finish(root, &arrays[0], &schema, &e_));
    OK(knut_arrow_builder_append_str(name, "bc", &e_));
    OK(knut_arrow_builder_finish_element(root, &e_));
    OK(knut_arrow_builder_finish(root, &arrays[1], NULL, &e_));
    knut_arrow_builder_free(root);
    OK(knut_arrow_stream_from_arrays(stream, &schema, arrays, 2, &e_));
}

static void test_arrow_stream__texts(void **state)
{
    (void)state;
    struct ArrowArrayStream stream;
    char **v = NULL;
    size_t n = 0;
    knut_error e = KNUT_ERROR_INIT;
    text_stream(&stream);
    OK(knut_arrow_stream_texts(&stream, 10, &v, &n, &e_));
    knut_arrow_stream_release(&stream);
    assert_int_equal(3, n);
    assert_string_equal("a", v[0]);
    assert_string_equal("", v[1]);
    assert_string_equal("bc", v[2]);
    text_stream(&stream); /* appended, and the cap counts what was there */
    assert_int_equal(KNUT_ETOOBIG, knut_arrow_stream_texts(&stream, 4, &v, &n, &e));
    assert_string_equal("more than 4 rows", e.message);
    assert_int_equal(4, n);
    knut_arrow_stream_release(&stream);
    texts_free(v, n);
    struct ArrowSchema schema;
    struct ArrowArray arrays[1];
    make_batches(&schema, arrays, 1); /* first column: int64 */
    OK(knut_arrow_stream_from_arrays(&stream, &schema, arrays, 1, &e_));
    v = NULL;
    n = 0;
    assert_int_equal(KNUT_EINVAL, knut_arrow_stream_texts(&stream, 10, &v, &n, &e));
    assert_int_equal(0, n);
    knut_arrow_stream_release(&stream);
    free(v);
}

static void test_arrow_stream__collect_cap(void **state)
{
    (void)state;
    struct ArrowSchema schema, got_schema;
    struct ArrowArray arrays[5];
    struct ArrowArrayStream stream;
    struct ArrowArray *got;
    int64_t n;
    knut_error e = KNUT_ERROR_INIT;
    make_batches(&schema, arrays, 5);
    OK(knut_arrow_stream_from_arrays(&stream, &schema, arrays, 5, &e_));
    assert_int_equal(KNUT_ETOOBIG,
                     knut_arrow_stream_collect(&stream, &got_schema, &got, &n, 3, &e));
    assert_string_equal("stream has more than 3 batches", e.message);
    assert_null(got);
    assert_int_equal(0, n);
    assert_null(got_schema.release);
    knut_arrow_stream_release(&stream);
}

/* A producer that fails after `ok` batches. */
typedef struct failing {
    int ok;
    int served;
} failing;

static int failing_schema(struct ArrowArrayStream *s, struct ArrowSchema *out)
{
    (void)s;
    return knut_arrow_schema_init(out, "i", "x", 0, 0, NULL) == KNUT_OK ? 0 : ENOMEM;
}

static int failing_next(struct ArrowArrayStream *s, struct ArrowArray *out)
{
    failing *f = s->private_data;
    if (f->served >= f->ok)
        return EIO;
    f->served++;
    knut_arrow_builder *b;
    if (knut_arrow_builder_new_simple(&b, KNUT_ARROW_INT32, "x", NULL) != KNUT_OK)
        return ENOMEM;
    int rc = knut_arrow_builder_append_int(b, 7, NULL) == KNUT_OK &&
                     knut_arrow_builder_finish(b, out, NULL, NULL) == KNUT_OK
                 ? 0
                 : ENOMEM;
    knut_arrow_builder_free(b);
    return rc;
}

static const char *failing_error(struct ArrowArrayStream *s)
{
    (void)s;
    return "disk on fire";
}

static void failing_release(struct ArrowArrayStream *s)
{
    s->release = NULL;
}

static void test_arrow_stream__producer_error(void **state)
{
    (void)state;
    failing f = {2, 0};
    struct ArrowArrayStream stream = {failing_schema, failing_next, failing_error,
                                      failing_release, &f};
    struct ArrowSchema got_schema;
    struct ArrowArray *got;
    int64_t n, rows;
    knut_error e = KNUT_ERROR_INIT;
    assert_int_equal(KNUT_EIO, knut_arrow_stream_collect(&stream, &got_schema, &got, &n, 0, &e));
    assert_string_equal("stream get_next: disk on fire", e.message);
    assert_null(got);
    assert_null(got_schema.release); /* the two good batches were released too (ASan) */
    f.served = 0;
    assert_int_equal(KNUT_EIO, knut_arrow_stream_count_rows(&stream, &rows, &e));
    assert_int_equal(0, rows);

    assert_int_equal(KNUT_OK, knut_arrow_stream_error(&stream, 0, "x", &e));
    assert_int_equal(KNUT_ENOMEM, knut_arrow_stream_error(NULL, ENOMEM, "read", &e));
    assert_non_null(strstr(e.message, "read: "));
    assert_int_equal(KNUT_EUNSUPPORTED, knut_arrow_stream_error(NULL, ENOSYS, NULL, &e));
    assert_int_equal(KNUT_ERROR, knut_arrow_stream_error(NULL, EPIPE, NULL, NULL));
    knut_arrow_stream_release(&stream);
}

static void test_arrow_stream__bad_arguments_release_inputs(void **state)
{
    (void)state;
    struct ArrowSchema schema;
    struct ArrowArray arrays[2];
    make_batches(&schema, arrays, 2);
    knut_error e = KNUT_ERROR_INIT;
    assert_int_equal(KNUT_EINVAL, knut_arrow_stream_from_arrays(NULL, &schema, arrays, 2, &e));
    /* ownership was taken even though it failed (ASan checks the frees) */
    assert_null(schema.release);
    assert_null(arrays[0].release);
    assert_null(arrays[1].release);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arrow_stream__round_trip),
        cmocka_unit_test(test_arrow_stream__count_rows_and_partial_release),
        cmocka_unit_test(test_arrow_stream__each),
        cmocka_unit_test(test_arrow_stream__texts),
        cmocka_unit_test(test_arrow_stream__collect_cap),
        cmocka_unit_test(test_arrow_stream__producer_error),
        cmocka_unit_test(test_arrow_stream__bad_arguments_release_inputs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
