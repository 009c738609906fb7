/*
 * Unit tests for the Arrow IPC stream writer and reader: round trips of
 * every type with nulls, empty batches, streams without batches, sliced
 * arrays (top-level and per column, bit offsets not multiple of 8), nested
 * list<struct<...>>, computed null counts, the sinks and sources, the C
 * stream wrapper, truncation at every byte of a small stream, and the
 * recycling of message bodies (batches released in any order, on any
 * thread, before or after the reader). The malformed-metadata cases are in
 * test_arrow_ipc_malformed.c.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../tools/ipc_gen.h"
#include "knut/arrow.h"

#define OK(expr)                                                                  \
    do {                                                                          \
        knut_error e_ = KNUT_ERROR_INIT;                                          \
        knut_error *err = &e_;                                                    \
        (void)err;                                                                \
        knut_status s_ = (expr);                                                  \
        if (s_ != KNUT_OK)                                                        \
            fail_msg("%s -> %d: %s", #expr, (int)s_, e_.message);                 \
    } while (0)

/* ---- comparing arrays logically (offsets applied) ---------------------- */

static void rows_equal(const knut_arrow_view *a, int64_t i, const knut_arrow_view *b, int64_t j,
                       const char *name)
{
    int na = knut_arrow_view_is_null(a, i), nb = knut_arrow_view_is_null(b, j);
    if (na != nb)
        fail_msg("column '%s': row %lld null %d vs row %lld null %d", name, (long long)i, na,
                 (long long)j, nb);
    if (na)
        return;
    knut_arrow_type t = a->type.type;
    assert_int_equal(t, b->type.type);
    if (t == KNUT_ARROW_BOOL) {
        assert_int_equal(knut_arrow_view_get_bool(a, i), knut_arrow_view_get_bool(b, j));
    } else if (t == KNUT_ARROW_LIST || t == KNUT_ARROW_LARGE_LIST || t == KNUT_ARROW_MAP) {
        int64_t s1, e1, s2, e2;
        knut_arrow_view_list_range(a, i, &s1, &e1);
        knut_arrow_view_list_range(b, j, &s2, &e2);
        if (e1 - s1 != e2 - s2)
            fail_msg("column '%s': row %lld list length %lld vs %lld", name, (long long)i,
                     (long long)(e1 - s1), (long long)(e2 - s2));
        for (int64_t k = 0; k < e1 - s1; k++)
            rows_equal(&a->children[0], s1 + k, &b->children[0], s2 + k, name);
    } else if (t == KNUT_ARROW_STRUCT) {
        for (int64_t k = 0; k < a->n_children; k++)
            rows_equal(&a->children[k], knut_arrow_view_child_row(a, i), &b->children[k],
                       knut_arrow_view_child_row(b, j), name);
    } else {
        int64_t l1, l2;
        const char *p1 = knut_arrow_view_get_bytes(a, i, &l1);
        const char *p2 = knut_arrow_view_get_bytes(b, j, &l2);
        if (l1 != l2 || (l1 && memcmp(p1, p2, (size_t)l1) != 0))
            fail_msg("column '%s': row %lld value differs (%lld vs %lld bytes)", name,
                     (long long)i, (long long)l1, (long long)l2);
    }
}

static void schemas_equal(const struct ArrowSchema *a, const struct ArrowSchema *b)
{
    assert_string_equal(a->format, b->format);
    assert_string_equal(a->name ? a->name : "", b->name ? b->name : "");
    assert_int_equal(a->flags & (ARROW_FLAG_NULLABLE | ARROW_FLAG_MAP_KEYS_SORTED),
                     b->flags & (ARROW_FLAG_NULLABLE | ARROW_FLAG_MAP_KEYS_SORTED));
    assert_int_equal(a->n_children, b->n_children);
    for (int64_t i = 0; i < a->n_children; i++)
        schemas_equal(a->children[i], b->children[i]);
}

/* The top level is not a field in IPC (its flags do not travel). */
static void top_schemas_equal(const struct ArrowSchema *a, const struct ArrowSchema *b)
{
    assert_string_equal("+s", b->format);
    assert_int_equal(a->n_children, b->n_children);
    for (int64_t i = 0; i < a->n_children; i++)
        schemas_equal(a->children[i], b->children[i]);
}

/* Batch b (as read) holds the same rows as a (as written, maybe sliced). */
static void batches_equal(const struct ArrowSchema *s, const struct ArrowArray *a,
                          const struct ArrowArray *b)
{
    knut_arrow_view va, vb;
    assert_int_equal(a->length, b->length);
    OK(knut_arrow_view_init(&va, s, a, err));
    OK(knut_arrow_view_init(&vb, s, b, err));
    for (int64_t k = 0; k < va.n_children; k++)
        for (int64_t r = 0; r < a->length; r++)
            rows_equal(&va.children[k], knut_arrow_view_child_row(&va, r), &vb.children[k],
                       knut_arrow_view_child_row(&vb, r), s->children[k]->name);
    knut_arrow_view_reset(&va);
    knut_arrow_view_reset(&vb);
}

/* ---- helpers ----------------------------------------------------------- */

static void make_batch(int64_t first, int64_t n, struct ArrowArray *out, struct ArrowSchema *schema)
{
    knut_arrow_builder *top = NULL;
    OK(ipcgen_builder_new(&top, err));
    OK(ipcgen_rows(top, first, n, err));
    OK(knut_arrow_builder_finish(top, out, schema, err));
    knut_arrow_builder_free(top);
}

static void write_stream(knut_buf *out, const struct ArrowSchema *s, const struct ArrowArray *b,
                         int n)
{
    knut_arrow_ipc_writer *w;
    OK(knut_arrow_ipc_writer_new(&w, knut_arrow_ipc_sink_buf(out), s, err));
    for (int i = 0; i < n; i++)
        OK(knut_arrow_ipc_writer_write(w, &b[i], err));
    OK(knut_arrow_ipc_writer_finish(w, err));
    assert_int_equal(knut_arrow_ipc_writer_bytes(w), (int64_t)out->len);
    knut_arrow_ipc_writer_free(w);
}

static knut_arrow_ipc_reader *open_mem(const void *data, size_t len)
{
    knut_arrow_ipc_source src;
    knut_arrow_ipc_reader *r;
    OK(knut_arrow_ipc_source_mem(&src, data, len, err));
    OK(knut_arrow_ipc_reader_new(&r, src, NULL, err));
    return r;
}

/* Reads every batch of buf and checks it against want[0..n). */
static void read_and_compare(const knut_buf *buf, const struct ArrowSchema *s,
                             const struct ArrowArray *want, int n)
{
    knut_arrow_ipc_reader *r = open_mem(buf->data, buf->len);
    top_schemas_equal(s, knut_arrow_ipc_reader_schema(r));
    for (int i = 0; i <= n; i++) {
        struct ArrowArray got;
        OK(knut_arrow_ipc_reader_next(r, &got, err));
        if (i == n) {
            assert_null(got.release);
            break;
        }
        assert_non_null(got.release);
        OK(knut_arrow_array_validate(s, &got, KNUT_ARROW_VALIDATE_FULL | KNUT_ARROW_VALIDATE_UTF8,
                                     err));
        batches_equal(s, &want[i], &got);
        knut_arrow_array_release(&got);
    }
    knut_arrow_ipc_reader_free(r);
}

/* ---- tests ------------------------------------------------------------- */

static void test_arrow_ipc__round_trip_every_type(void **state)
{
    (void)state;
    struct ArrowSchema s;
    struct ArrowArray b[3];
    struct ArrowSchema tmp;
    make_batch(0, 50, &b[0], &s);
    make_batch(50, 7, &b[1], &tmp);
    knut_arrow_schema_release(&tmp);
    make_batch(57, 130, &b[2], &tmp);
    knut_arrow_schema_release(&tmp);
    /* schema-level metadata survives too */
    const char *keys[] = {"origin", "empty"}, *vals[] = {"knut unit test", ""};
    char *meta;
    OK(knut_arrow_metadata_build(&meta, keys, vals, 2, err));
    OK(knut_arrow_schema_set_metadata(&s, meta, err));
    free(meta);

    knut_buf buf = KNUT_BUF_INIT;
    write_stream(&buf, &s, b, 3);
    read_and_compare(&buf, &s, b, 3);

    knut_arrow_ipc_reader *r = open_mem(buf.data, buf.len);
    const char *v;
    int32_t vl;
    assert_true(knut_arrow_metadata_get(knut_arrow_ipc_reader_schema(r)->metadata, "origin", &v,
                                        &vl));
    assert_int_equal(14, vl);
    assert_memory_equal("knut unit test", v, 14);
    knut_arrow_ipc_reader_free(r);

    for (int i = 0; i < 3; i++)
        knut_arrow_array_release(&b[i]);
    knut_arrow_schema_release(&s);
    knut_buf_reset(&buf);
}

static void test_arrow_ipc__empty_batch_and_zero_batches(void **state)
{
    (void)state;
    struct ArrowSchema s;
    struct ArrowArray b[2];
    struct ArrowSchema tmp;
    make_batch(0, 0, &b[0], &s);
    make_batch(0, 3, &b[1], &tmp);
    knut_arrow_schema_release(&tmp);

    knut_buf buf = KNUT_BUF_INIT;
    write_stream(&buf, &s, b, 2); /* an empty batch, then 3 rows */
    read_and_compare(&buf, &s, b, 2);

    /* zero batches: schema, then end of stream */
    knut_buf_clear(&buf);
    write_stream(&buf, &s, b, 0);
    read_and_compare(&buf, &s, b, 0);
    /* the stream ends with 0xFFFFFFFF 00000000 */
    assert_true(buf.len >= 8);
    assert_memory_equal("\xff\xff\xff\xff\0\0\0\0", buf.data + buf.len - 8, 8);

    knut_arrow_array_release(&b[0]);
    knut_arrow_array_release(&b[1]);
    knut_arrow_schema_release(&s);
    knut_buf_reset(&buf);
}

static void test_arrow_ipc__sliced_arrays(void **state)
{
    (void)state;
    struct ArrowSchema s;
    struct ArrowArray full;
    make_batch(0, 64, &full, &s);
    knut_buf buf = KNUT_BUF_INIT;

    /* the whole batch sliced: rows 5..29 (bit offset 5) */
    struct ArrowArray top;
    ipcgen_slice(&top, &full, 5, 25);
    write_stream(&buf, &s, &top, 1);
    read_and_compare(&buf, &s, &top, 1);

    /* each column sliced on its own, at offsets 8, 3, 13, ... */
    int64_t n = full.n_children;
    struct ArrowArray *cols = calloc((size_t)n, sizeof *cols);
    struct ArrowArray **ptrs = calloc((size_t)n, sizeof *ptrs);
    assert_non_null(cols);
    assert_non_null(ptrs);
    for (int64_t i = 0; i < n; i++) {
        static const int64_t offs[] = {8, 3, 13, 1, 0, 21};
        ipcgen_slice(&cols[i], full.children[i], offs[i % 6], 30);
        ptrs[i] = &cols[i];
    }
    struct ArrowArray batch = full;
    batch.length = 30;
    batch.children = ptrs;
    batch.release = ipcgen_view_release;
    knut_buf_clear(&buf);
    write_stream(&buf, &s, &batch, 1);
    read_and_compare(&buf, &s, &batch, 1);

    /* offsets of a sliced string column are re-based to start at 0 */
    knut_arrow_ipc_reader *r = open_mem(buf.data, buf.len);
    struct ArrowArray got;
    OK(knut_arrow_ipc_reader_next(r, &got, err));
    for (int64_t i = 0; i < n; i++) {
        if (strcmp(s.children[i]->format, "u") == 0) {
            assert_int_equal(0, ((const int32_t *)got.children[i]->buffers[1])[0]);
            assert_int_equal(0, got.children[i]->offset);
        }
    }
    knut_arrow_array_release(&got);
    knut_arrow_ipc_reader_free(r);

    free(cols);
    free(ptrs);
    knut_arrow_array_release(&full);
    knut_arrow_schema_release(&s);
    knut_buf_reset(&buf);
}

/* list<struct<...>> sliced in the middle of its child ranges, written on
 * its own (a one-column batch) so the nested offsets are the only path. */
static void test_arrow_ipc__nested_list_struct(void **state)
{
    (void)state;
    struct ArrowSchema s;
    struct ArrowArray full;
    make_batch(0, 40, &full, &s);
    int64_t col = -1;
    for (int64_t i = 0; i < s.n_children; i++)
        if (strcmp(s.children[i]->name, "list_struct") == 0)
            col = i;
    assert_true(col >= 0);

    struct ArrowSchema one;
    OK(knut_arrow_schema_init(&one, "+s", "", 0, 1, err));
    struct ArrowSchema colschema;
    OK(knut_arrow_schema_deep_copy(&colschema, s.children[col], err));
    OK(knut_arrow_schema_set_child(&one, 0, &colschema, err));

    for (int64_t off = 0; off < 12; off += 5) {
        struct ArrowArray c, *ptr = &c, batch;
        ipcgen_slice(&c, full.children[col], off, 40 - off - 3);
        batch = full;
        batch.length = c.length;
        batch.n_children = 1;
        batch.children = &ptr;
        batch.release = ipcgen_view_release;
        knut_buf buf = KNUT_BUF_INIT;
        write_stream(&buf, &one, &batch, 1);
        read_and_compare(&buf, &one, &batch, 1);
        knut_buf_reset(&buf);
    }
    knut_arrow_schema_release(&one);
    knut_arrow_array_release(&full);
    knut_arrow_schema_release(&s);
}

static void test_arrow_ipc__null_count_computed(void **state)
{
    (void)state;
    struct ArrowSchema s;
    struct ArrowArray b;
    make_batch(0, 20, &b, &s);
    /* producers may say "unknown" (-1): the writer must count */
    for (int64_t i = 0; i < b.n_children; i++)
        b.children[i]->null_count = -1;
    knut_buf buf = KNUT_BUF_INIT;
    write_stream(&buf, &s, &b, 1);
    knut_arrow_ipc_reader *r = open_mem(buf.data, buf.len);
    struct ArrowArray got;
    OK(knut_arrow_ipc_reader_next(r, &got, err));
    for (int64_t i = 0; i < b.n_children; i++) {
        const char *f = s.children[i]->format;
        if (strcmp(f, "n") == 0)
            assert_int_equal(20, got.children[i]->null_count);
        else if (s.children[i]->flags & ARROW_FLAG_NULLABLE)
            assert_int_equal(7, got.children[i]->null_count); /* rows 1, 4, ..., 19 */
        else
            assert_int_equal(0, got.children[i]->null_count);
    }
    knut_arrow_array_release(&got);
    knut_arrow_ipc_reader_free(r);
    knut_arrow_array_release(&b);
    knut_arrow_schema_release(&s);
    knut_buf_reset(&buf);
}

/* Arrays of a batch stay valid after the reader is gone and after their
 * siblings and parent are released (the body is refcounted). */
static void test_arrow_ipc__arrays_outlive_reader(void **state)
{
    (void)state;
    struct ArrowSchema s;
    struct ArrowArray b;
    make_batch(0, 33, &b, &s);
    knut_buf buf = KNUT_BUF_INIT;
    write_stream(&buf, &s, &b, 1);
    knut_arrow_ipc_reader *r = open_mem(buf.data, buf.len);
    struct ArrowArray got, col;
    OK(knut_arrow_ipc_reader_next(r, &got, err));
    knut_arrow_ipc_reader_free(r);
    int64_t k = 13; /* utf8 */
    assert_string_equal("u", s.children[k]->format);
    knut_arrow_array_move(&col, got.children[k]);
    knut_arrow_array_release(&got);
    knut_arrow_view v;
    OK(knut_arrow_view_init(&v, s.children[k], &col, err));
    int64_t len;
    const char *p = knut_arrow_view_get_str(&v, 2, &len);
    assert_int_equal(5, len);
    assert_memory_equal("v2-\xc3\xa9", p, 5);
    knut_arrow_view_reset(&v);
    knut_arrow_array_release(&col);
    knut_arrow_array_release(&b);
    knut_arrow_schema_release(&s);
    knut_buf_reset(&buf);
}

static void test_arrow_ipc__file_and_fd_io(void **state)
{
    (void)state;
    struct ArrowSchema s;
    struct ArrowArray b;
    make_batch(0, 10, &b, &s);
    FILE *f = tmpfile();
    assert_non_null(f);
    knut_arrow_ipc_writer *w;
    OK(knut_arrow_ipc_writer_new(&w, knut_arrow_ipc_sink_file(f), &s, err));
    OK(knut_arrow_ipc_writer_write(w, &b, err));
    OK(knut_arrow_ipc_writer_finish(w, err));
    OK(knut_arrow_ipc_writer_finish(w, err)); /* idempotent */
    knut_error e = KNUT_ERROR_INIT;
    assert_int_equal(KNUT_EINVAL, knut_arrow_ipc_writer_write(w, &b, &e));
    assert_non_null(strstr(e.message, "after finish"));
    knut_arrow_ipc_writer_free(w);
    fflush(f);

    rewind(f);
    knut_arrow_ipc_reader *r;
    OK(knut_arrow_ipc_reader_new(&r, knut_arrow_ipc_source_file(f), NULL, err));
    struct ArrowArray got;
    OK(knut_arrow_ipc_reader_next(r, &got, err));
    batches_equal(&s, &b, &got);
    knut_arrow_array_release(&got);
    OK(knut_arrow_ipc_reader_next(r, &got, err));
    assert_null(got.release);
    knut_arrow_ipc_reader_free(r);

    /* the fd source through the C stream interface */
    assert_int_equal(0, lseek(fileno(f), 0, SEEK_SET));
    struct ArrowArrayStream st;
    OK(knut_arrow_ipc_stream_open(&st, knut_arrow_ipc_source_fd(fileno(f)), NULL, err));
    struct ArrowSchema got_s;
    assert_int_equal(0, st.get_schema(&st, &got_s));
    top_schemas_equal(&s, &got_s);
    knut_arrow_schema_release(&got_s);
    assert_int_equal(0, st.get_next(&st, &got));
    batches_equal(&s, &b, &got);
    knut_arrow_array_release(&got);
    assert_int_equal(0, st.get_next(&st, &got));
    assert_null(got.release);
    assert_null(st.get_last_error(&st));
    st.release(&st);
    assert_null(st.release);
    fclose(f);

    /* write_stream over a stream of arrays: the same bytes as a writer */
    struct ArrowArrayStream in;
    struct ArrowSchema s2;
    struct ArrowArray b2;
    make_batch(0, 10, &b2, &s2);
    OK(knut_arrow_stream_from_arrays(&in, &s2, &b2, 1, err));
    knut_buf a = KNUT_BUF_INIT, c = KNUT_BUF_INIT;
    OK(knut_arrow_ipc_write_stream(knut_arrow_ipc_sink_buf(&a), &in, err));
    in.release(&in);
    write_stream(&c, &s, &b, 1);
    assert_int_equal(a.len, c.len);
    assert_memory_equal(a.data, c.data, a.len);
    knut_buf_reset(&a);
    knut_buf_reset(&c);

    knut_arrow_array_release(&b);
    knut_arrow_schema_release(&s);
}

static void test_arrow_ipc__sink_buf_cap(void **state)
{
    (void)state;
    struct ArrowSchema s;
    struct ArrowArray b;
    make_batch(0, 100, &b, &s);
    knut_buf buf = KNUT_BUF_INIT;
    knut_arrow_ipc_writer *w;
    OK(knut_arrow_ipc_writer_new(&w, knut_arrow_ipc_sink_buf(&buf), &s, err));
    knut_arrow_ipc_writer_free(w);
    size_t cap = buf.len + 100; /* room for the schema, not the batch */
    knut_buf_reset(&buf);
    knut_buf_init(&buf, cap);
    OK(knut_arrow_ipc_writer_new(&w, knut_arrow_ipc_sink_buf(&buf), &s, err));
    knut_error e = KNUT_ERROR_INIT;
    assert_int_equal(KNUT_ETOOBIG, knut_arrow_ipc_writer_write(w, &b, &e));
    char want[64];
    snprintf(want, sizeof want, "cap of %zu bytes", cap);
    assert_non_null(strstr(e.message, want));
    /* a torn stream cannot be continued */
    assert_int_equal(KNUT_ETOOBIG, knut_arrow_ipc_writer_finish(w, &e));
    knut_arrow_ipc_writer_free(w);
    knut_buf_reset(&buf);
    knut_arrow_array_release(&b);
    knut_arrow_schema_release(&s);
}

static void test_arrow_ipc__writer_rejects(void **state)
{
    (void)state;
    knut_buf buf = KNUT_BUF_INIT;
    knut_arrow_ipc_writer *w = (knut_arrow_ipc_writer *)&buf;
    knut_error e = KNUT_ERROR_INIT;
    struct ArrowSchema s;
    /* the top level must be a struct of columns */
    OK(knut_arrow_schema_init(&s, "l", "x", 0, 0, err));
    assert_int_equal(KNUT_EINVAL, knut_arrow_ipc_writer_new(&w, knut_arrow_ipc_sink_buf(&buf),
                                                            &s, &e));
    assert_null(w);
    assert_non_null(strstr(e.message, "must be a struct"));
    knut_arrow_schema_release(&s);

    /* dictionary-encoded columns are named in the error */
    struct ArrowSchema col, dict;
    OK(knut_arrow_schema_init(&s, "+s", "", 0, 1, err));
    OK(knut_arrow_schema_init(&col, "i", "city", ARROW_FLAG_NULLABLE, 0, err));
    OK(knut_arrow_schema_init(&dict, "u", "", 0, 0, err));
    col.dictionary = malloc(sizeof *col.dictionary);
    assert_non_null(col.dictionary);
    knut_arrow_schema_move(col.dictionary, &dict);
    OK(knut_arrow_schema_set_child(&s, 0, &col, err));
    assert_int_equal(KNUT_EUNSUPPORTED,
                     knut_arrow_ipc_writer_new(&w, knut_arrow_ipc_sink_buf(&buf), &s, &e));
    assert_non_null(strstr(e.message, "'city'"));
    assert_non_null(strstr(e.message, "dictionary"));
    /* the dictionary was attached by hand, so it is freed by hand */
    struct ArrowSchema *d = s.children[0]->dictionary;
    s.children[0]->dictionary = NULL;
    knut_arrow_schema_release(d);
    free(d);
    knut_arrow_schema_release(&s);

    /* a batch that does not match the schema */
    struct ArrowArray b;
    make_batch(0, 4, &b, &s);
    OK(knut_arrow_ipc_writer_new(&w, knut_arrow_ipc_sink_buf(&buf), &s, err));
    struct ArrowArray bad = b;
    bad.n_children = 2;
    assert_int_equal(KNUT_EINVAL, knut_arrow_ipc_writer_write(w, &bad, &e));
    assert_non_null(strstr(e.message, "columns"));
    /* list offsets past the child are caught before any byte is read */
    int64_t k = 0;
    while (strcmp(s.children[k]->name, "list_i32") != 0)
        k++;
    int32_t *offs = (int32_t *)(void *)b.children[k]->buffers[1];
    int32_t saved = offs[4];
    offs[4] = 1000000;
    assert_int_equal(KNUT_EINVAL, knut_arrow_ipc_writer_write(w, &b, &e));
    assert_non_null(strstr(e.message, "list_i32"));
    offs[4] = saved;
    /* nulls at the top level have no place in a record batch */
    uint8_t top_bits[1] = {0xF7}; /* row 3 of 4 is null */
    const void *top_bufs[1] = {top_bits};
    struct ArrowArray with_nulls = b;
    with_nulls.buffers = top_bufs;
    with_nulls.null_count = -1;
    assert_int_equal(KNUT_EINVAL, knut_arrow_ipc_writer_write(w, &with_nulls, &e));
    assert_non_null(strstr(e.message, "1 null rows at the top level"));
    OK(knut_arrow_ipc_writer_write(w, &b, err));
    knut_arrow_ipc_writer_free(w);
    knut_arrow_array_release(&b);
    knut_arrow_schema_release(&s);
    knut_buf_reset(&buf);
}

/* Cutting a small stream at every byte: an error, except exactly between
 * messages (a stream may end without its end-of-stream marker). */
static void test_arrow_ipc__truncated_everywhere(void **state)
{
    (void)state;
    struct ArrowSchema s;
    struct ArrowArray b[2], tmp_a;
    struct ArrowSchema tmp;
    make_batch(0, 5, &b[0], &s);
    make_batch(5, 2, &b[1], &tmp);
    knut_arrow_schema_release(&tmp);
    (void)tmp_a;

    knut_buf buf = KNUT_BUF_INIT;
    knut_arrow_ipc_writer *w;
    size_t bounds[3];
    OK(knut_arrow_ipc_writer_new(&w, knut_arrow_ipc_sink_buf(&buf), &s, err));
    bounds[0] = buf.len;
    OK(knut_arrow_ipc_writer_write(w, &b[0], err));
    bounds[1] = buf.len;
    OK(knut_arrow_ipc_writer_write(w, &b[1], err));
    bounds[2] = buf.len;
    OK(knut_arrow_ipc_writer_finish(w, err));
    knut_arrow_ipc_writer_free(w);

    for (size_t cut = 0; cut < buf.len; cut++) {
        knut_arrow_ipc_source src;
        knut_arrow_ipc_reader *r = NULL;
        knut_error e = KNUT_ERROR_INIT;
        OK(knut_arrow_ipc_source_mem(&src, buf.data, cut, err));
        knut_status st = knut_arrow_ipc_reader_new(&r, src, NULL, &e);
        int batches = 0;
        while (st == KNUT_OK) {
            struct ArrowArray got;
            st = knut_arrow_ipc_reader_next(r, &got, &e);
            if (st || !got.release)
                break;
            batches_equal(&s, &b[batches], &got);
            batches++;
            knut_arrow_array_release(&got);
        }
        knut_arrow_ipc_reader_free(r);
        int boundary = cut == bounds[0] || cut == bounds[1] || cut == bounds[2];
        if (boundary) {
            if (st != KNUT_OK)
                fail_msg("cut at message boundary %zu: %s", cut, e.message);
        } else {
            if (st == KNUT_OK)
                fail_msg("cut at byte %zu of %zu was accepted", cut, buf.len);
            assert_true(st == KNUT_EPARSE);
            assert_true(strstr(e.message, "truncated") != NULL ||
                        strstr(e.message, "no Schema") != NULL);
            assert_non_null(strstr(e.message, "message "));
        }
    }
    knut_arrow_array_release(&b[0]);
    knut_arrow_array_release(&b[1]);
    knut_arrow_schema_release(&s);
    knut_buf_reset(&buf);
}

/* Streams from before format 1.0 have no 0xFFFFFFFF marker. */
static void test_arrow_ipc__legacy_framing(void **state)
{
    (void)state;
    struct ArrowSchema s;
    struct ArrowArray b;
    make_batch(0, 9, &b, &s);
    knut_buf buf = KNUT_BUF_INIT, legacy = KNUT_BUF_INIT;
    write_stream(&buf, &s, &b, 1);
    /* drop every marker (message starts: walk the framing) */
    size_t pos = 0;
    while (pos + 8 <= buf.len) {
        uint32_t marker, len;
        memcpy(&marker, buf.data + pos, 4);
        memcpy(&len, buf.data + pos + 4, 4);
        assert_int_equal(0xFFFFFFFFu, marker);
        OK(knut_buf_append(&legacy, buf.data + pos + 4, 4 + len));
        if (len == 0) {
            pos += 8;
            break;
        }
        /* bodyLength: parse it back with the reader on the prefix seen so far */
        size_t body = 0;
        if (pos > 0) {
            /* a RecordBatch: its body runs to the end marker */
            body = buf.len - 8 - (pos + 8 + len);
        }
        OK(knut_buf_append(&legacy, buf.data + pos + 8 + len, body));
        pos += 8 + len + body;
    }
    assert_int_equal(buf.len, pos);
    read_and_compare(&legacy, &s, &b, 1);
    knut_buf_reset(&buf);
    knut_buf_reset(&legacy);
    knut_arrow_array_release(&b);
    knut_arrow_schema_release(&s);
}

/* ---- recycled bodies --------------------------------------------------- */

/* Batch sizes of one int64 column: bodies above and below 4 MiB (mapped
 * and malloc'd storage), one above the reader's 16 MiB first step for
 * sources of unknown size, a short and an empty one, so recycled storage
 * is both reused and passed over. */
static const int64_t big_rows[] = {700000, 720000, 650000, 16, 0, 2300000, 690000, 700000};
#define BIG_N ((int)(sizeof big_rows / sizeof big_rows[0]))

static int64_t big_value(int64_t row)
{
    return (int64_t)((uint64_t)row * 2654435761u ^ 0x5bd1e995u);
}

static void noop_schema_release(struct ArrowSchema *a)
{
    a->release = NULL;
}

static void noop_array_release(struct ArrowArray *a)
{
    a->release = NULL;
}

/* A stream of big_rows batches of column "v", rows numbered across them. */
static void write_big(knut_buf *out)
{
    int64_t total = 0;
    for (int i = 0; i < BIG_N; i++)
        total += big_rows[i];
    int64_t *v = malloc((size_t)total * sizeof *v);
    assert_non_null(v);
    for (int64_t r = 0; r < total; r++)
        v[r] = big_value(r);
    struct ArrowSchema col = {.format = "l", .name = "v", .release = noop_schema_release};
    struct ArrowSchema *cols[1] = {&col};
    struct ArrowSchema s = {.format = "+s", .name = "", .n_children = 1, .children = cols,
                            .release = noop_schema_release};
    knut_arrow_ipc_writer *w;
    OK(knut_arrow_ipc_writer_new(&w, knut_arrow_ipc_sink_buf(out), &s, err));
    int64_t first = 0;
    for (int i = 0; i < BIG_N; i++) {
        const void *cbufs[2] = {NULL, v}, *tbufs[1] = {NULL};
        struct ArrowArray c = {.length = big_rows[i], .offset = first, .n_buffers = 2,
                               .buffers = cbufs, .release = noop_array_release};
        struct ArrowArray *kids[1] = {&c};
        struct ArrowArray top = {.length = big_rows[i], .n_buffers = 1, .buffers = tbufs,
                                 .n_children = 1, .children = kids,
                                 .release = noop_array_release};
        OK(knut_arrow_ipc_writer_write(w, &top, err));
        first += big_rows[i];
    }
    OK(knut_arrow_ipc_writer_finish(w, err));
    knut_arrow_ipc_writer_free(w);
    free(v);
}

/* Every value of batch i, so stale bytes of recycled storage show. */
static void check_big(const struct ArrowArray *got, int i)
{
    int64_t first = 0;
    for (int k = 0; k < i; k++)
        first += big_rows[k];
    assert_non_null(got->release);
    assert_int_equal(big_rows[i], got->length);
    const struct ArrowArray *c = got->children[0];
    const int64_t *v = (const int64_t *)c->buffers[1] + c->offset;
    for (int64_t r = 0; r < got->length; r++)
        if (v[r] != big_value(first + r))
            fail_msg("batch %d row %lld: %lld, expected %lld", i, (long long)r,
                     (long long)v[r], (long long)big_value(first + r));
}

/* Reads every batch, checking and releasing each before the next. */
static void read_big_streaming(knut_arrow_ipc_reader *r)
{
    for (int i = 0; i <= BIG_N; i++) {
        struct ArrowArray got;
        OK(knut_arrow_ipc_reader_next(r, &got, err));
        if (i == BIG_N) {
            assert_null(got.release);
            break;
        }
        check_big(&got, i);
        knut_arrow_array_release(&got);
    }
}

typedef struct feed {
    int fd;
    const uint8_t *data;
    size_t len;
} feed;

/* Writes a buffer into a pipe and closes it: a source of unknown size. */
static void *feed_pipe(void *arg)
{
    feed *f = arg;
    for (size_t off = 0; off < f->len;) {
        ssize_t n = write(f->fd, f->data + off, f->len - off);
        if (n <= 0)
            break;
        off += (size_t)n;
    }
    close(f->fd);
    return NULL;
}

static void test_arrow_ipc__recycled_bodies_streaming(void **state)
{
    (void)state;
    knut_buf buf = KNUT_BUF_INIT;
    write_big(&buf);
    knut_arrow_ipc_reader *r = open_mem(buf.data, buf.len);
    read_big_streaming(r);
    knut_arrow_ipc_reader_free(r);

    /* through a pipe: bodies grow step by step unless recycled storage fits */
    int fds[2];
    assert_int_equal(0, pipe(fds));
    feed f = {fds[1], (const uint8_t *)buf.data, buf.len};
    pthread_t t;
    assert_int_equal(0, pthread_create(&t, NULL, feed_pipe, &f));
    OK(knut_arrow_ipc_reader_new(&r, knut_arrow_ipc_source_fd(fds[0]), NULL, err));
    read_big_streaming(r);
    knut_arrow_ipc_reader_free(r);
    assert_int_equal(0, pthread_join(t, NULL));
    close(fds[0]);
    knut_buf_reset(&buf);
}

/* Releases the arrays whose pointers come through a pipe, until NULL. */
static void *release_from_pipe(void *arg)
{
    int fd = *(int *)arg;
    struct ArrowArray *a;
    while (read(fd, &a, sizeof a) == (ssize_t)sizeof a && a) {
        knut_arrow_array_release(a);
        free(a);
    }
    return NULL;
}

static void test_arrow_ipc__recycled_bodies_any_order_any_thread(void **state)
{
    (void)state;
    knut_buf buf = KNUT_BUF_INIT;
    write_big(&buf);
    int fds[2];
    assert_int_equal(0, pipe(fds));
    pthread_t t;
    assert_int_equal(0, pthread_create(&t, NULL, release_from_pipe, &fds[0]));

    /* even batches go to another thread to be released while the reader
     * goes on (and recycles them); odd ones are held past the reader */
    struct ArrowArray held[BIG_N], col;
    knut_arrow_ipc_reader *r = open_mem(buf.data, buf.len);
    for (int i = 0; i < BIG_N; i++) {
        struct ArrowArray *got = malloc(sizeof *got);
        assert_non_null(got);
        OK(knut_arrow_ipc_reader_next(r, got, err));
        check_big(got, i);
        if (i % 2) {
            knut_arrow_array_move(&held[i], got);
            free(got);
        } else {
            assert_int_equal((ssize_t)sizeof got, write(fds[1], &got, sizeof got));
        }
    }
    struct ArrowArray end;
    OK(knut_arrow_ipc_reader_next(r, &end, err));
    assert_null(end.release);
    struct ArrowArray *stop = NULL;
    assert_int_equal((ssize_t)sizeof stop, write(fds[1], &stop, sizeof stop));
    knut_arrow_ipc_reader_free(r);
    assert_int_equal(0, pthread_join(t, NULL));
    close(fds[0]);
    close(fds[1]);

    /* nothing recycled while still referenced; released in reverse, and
     * one column after its batch */
    knut_arrow_array_move(&col, held[1].children[0]);
    for (int i = BIG_N - 1; i >= 1; i -= 2) {
        check_big(&held[i], i);
        knut_arrow_array_release(&held[i]);
    }
    int64_t first = big_rows[0];
    for (int64_t k = 0; k < big_rows[1]; k++)
        assert_int_equal(big_value(first + k), ((const int64_t *)col.buffers[1])[col.offset + k]);
    knut_arrow_array_release(&col);
    knut_buf_reset(&buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arrow_ipc__round_trip_every_type),
        cmocka_unit_test(test_arrow_ipc__empty_batch_and_zero_batches),
        cmocka_unit_test(test_arrow_ipc__sliced_arrays),
        cmocka_unit_test(test_arrow_ipc__nested_list_struct),
        cmocka_unit_test(test_arrow_ipc__null_count_computed),
        cmocka_unit_test(test_arrow_ipc__arrays_outlive_reader),
        cmocka_unit_test(test_arrow_ipc__file_and_fd_io),
        cmocka_unit_test(test_arrow_ipc__sink_buf_cap),
        cmocka_unit_test(test_arrow_ipc__writer_rejects),
        cmocka_unit_test(test_arrow_ipc__truncated_everywhere),
        cmocka_unit_test(test_arrow_ipc__legacy_framing),
        cmocka_unit_test(test_arrow_ipc__recycled_bodies_streaming),
        cmocka_unit_test(test_arrow_ipc__recycled_bodies_any_order_any_thread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
