/*
 * Unit tests for the Arrow IPC reader on bytes that are wrong on purpose:
 * messages crafted with the internal FlatBuffers builder (buffers outside
 * the body, wrong node and buffer counts, short buffers, bad offsets,
 * dictionaries, compression, unsupported types, old metadata versions,
 * deep nesting), framing errors and size caps, and random mutations of a
 * valid stream. Each error is checked for its code and its message.
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

#include "../tools/ipc_gen.h"
#include "arrow/ipc_int.h"
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

/* ---- crafting messages ------------------------------------------------- */

static void put_u32(knut_buf *out, uint32_t v)
{
    OK(knut_buf_append(out, &v, 4));
}

/* Frames a Message whose header (type htype) is already in b. */
static void frame(knut_buf *out, knut_fb_builder *b, uint8_t htype, knut_fb_ref header,
                  int64_t body_len, int16_t version)
{
    const uint8_t *meta;
    size_t len;
    knut_arrow__fb_table_start(b);
    knut_arrow__fb_table_add_i16(b, KNUT_IPC_MESSAGE_VERSION, version, 0);
    knut_arrow__fb_table_add_u8(b, KNUT_IPC_MESSAGE_HEADER_TYPE, htype, 0);
    knut_arrow__fb_table_add_ref(b, KNUT_IPC_MESSAGE_HEADER, header);
    knut_arrow__fb_table_add_i64(b, KNUT_IPC_MESSAGE_BODY_LENGTH, body_len, 0);
    knut_fb_ref msg = knut_arrow__fb_table_end(b);
    OK(knut_arrow__fb_builder_finish(b, msg, &meta, &len, err));
    put_u32(out, KNUT_IPC_CONTINUATION);
    put_u32(out, (uint32_t)len);
    OK(knut_buf_append(out, meta, len));
}

/* A RecordBatch message with the given nodes/buffers (pairs) and body. */
static void put_batch(knut_buf *out, int64_t length, const int64_t *nodes, int nn,
                      const int64_t *bufs, int nb, const void *body, int64_t body_len,
                      int compressed)
{
    knut_fb_builder b;
    knut_arrow__fb_builder_init(&b, 0);
    knut_fb_ref comp = 0;
    if (compressed) {
        knut_arrow__fb_table_start(&b);
        knut_arrow__fb_table_add_u8(&b, 0, 1, 0); /* ZSTD */
        comp = knut_arrow__fb_table_end(&b);
    }
    knut_fb_ref vn = knut_arrow__fb_vector_structs_create(&b, nodes, 16, (size_t)nn, 8);
    knut_fb_ref vb = knut_arrow__fb_vector_structs_create(&b, bufs, 16, (size_t)nb, 8);
    knut_arrow__fb_table_start(&b);
    knut_arrow__fb_table_add_i64(&b, KNUT_IPC_BATCH_LENGTH, length, 0);
    knut_arrow__fb_table_add_ref(&b, KNUT_IPC_BATCH_NODES, vn);
    knut_arrow__fb_table_add_ref(&b, KNUT_IPC_BATCH_BUFFERS, vb);
    knut_arrow__fb_table_add_ref(&b, KNUT_IPC_BATCH_COMPRESSION, comp);
    knut_fb_ref rb = knut_arrow__fb_table_end(&b);
    frame(out, &b, KNUT_IPC_HDR_RECORD_BATCH, rb, body_len, KNUT_IPC_METADATA_V5);
    if (body_len)
        OK(knut_buf_append(out, body, (size_t)body_len));
    knut_arrow__fb_builder_reset(&b);
}

/* The Schema message of one column (format, name "x"), from the writer. */
static void put_schema(knut_buf *out, const char *format, const char *child_format)
{
    struct ArrowSchema s, c;
    OK(knut_arrow_schema_init(&s, "+s", "", 0, 1, err));
    OK(knut_arrow_schema_init(&c, format, "x", ARROW_FLAG_NULLABLE, child_format ? 1 : 0, err));
    if (child_format)
        OK(knut_arrow_schema_init(c.children[0], child_format, "item", ARROW_FLAG_NULLABLE, 0,
                                  err));
    OK(knut_arrow_schema_set_child(&s, 0, &c, err));
    knut_arrow_ipc_writer *w;
    OK(knut_arrow_ipc_writer_new(&w, knut_arrow_ipc_sink_buf(out), &s, err));
    knut_arrow_ipc_writer_free(w);
    knut_arrow_schema_release(&s);
}

static knut_fb_ref empty_table(knut_fb_builder *b)
{
    knut_arrow__fb_table_start(b);
    return knut_arrow__fb_table_end(b);
}

static knut_fb_ref craft_field(knut_fb_builder *b, const char *name, uint8_t type_type,
                               knut_fb_ref type, const knut_fb_ref *kids, int n,
                               knut_fb_ref dict)
{
    knut_fb_ref vk = knut_arrow__fb_vector_refs_create(b, kids, (size_t)n);
    knut_fb_ref nm = knut_arrow__fb_string_create(b, name, strlen(name));
    knut_arrow__fb_table_start(b);
    knut_arrow__fb_table_add_ref(b, KNUT_IPC_FIELD_NAME, nm);
    knut_arrow__fb_table_add_u8(b, KNUT_IPC_FIELD_NULLABLE, 1, 0);
    knut_arrow__fb_table_add_u8(b, KNUT_IPC_FIELD_TYPE_TYPE, type_type, 0);
    knut_arrow__fb_table_add_ref(b, KNUT_IPC_FIELD_TYPE, type);
    knut_arrow__fb_table_add_ref(b, KNUT_IPC_FIELD_DICTIONARY, dict);
    knut_arrow__fb_table_add_ref(b, KNUT_IPC_FIELD_CHILDREN, vk);
    return knut_arrow__fb_table_end(b);
}

static void put_crafted_schema(knut_buf *out, knut_fb_builder *b, knut_fb_ref field,
                               int16_t version)
{
    knut_fb_ref fields = knut_arrow__fb_vector_refs_create(b, &field, 1);
    knut_arrow__fb_table_start(b);
    knut_arrow__fb_table_add_ref(b, KNUT_IPC_SCHEMA_FIELDS, fields);
    knut_fb_ref schema = knut_arrow__fb_table_end(b);
    frame(out, b, KNUT_IPC_HDR_SCHEMA, schema, 0, version);
}

/* Reads buf to the end; returns the first error (or OK) with its text. */
static knut_status read_all(const knut_buf *buf, const knut_arrow_ipc_read_options *opts,
                            knut_error *e, int64_t *batches)
{
    knut_arrow_ipc_source src;
    knut_arrow_ipc_reader *r = NULL;
    OK(knut_arrow_ipc_source_mem(&src, buf->data, buf->len, err));
    knut_status st = knut_arrow_ipc_reader_new(&r, src, opts, e);
    if (batches)
        *batches = 0;
    while (st == KNUT_OK) {
        struct ArrowArray a;
        st = knut_arrow_ipc_reader_next(r, &a, e);
        if (st || !a.release)
            break;
        /* whatever the reader returns must be safe to read in full */
        knut_error v = KNUT_ERROR_INIT;
        if (knut_arrow_array_validate(knut_arrow_ipc_reader_schema(r), &a,
                                      KNUT_ARROW_VALIDATE_FULL, &v) != KNUT_OK)
            fail_msg("reader returned an invalid batch: %s", v.message);
        if (batches)
            (*batches)++;
        knut_arrow_array_release(&a);
    }
    knut_arrow_ipc_reader_free(r);
    return st;
}

static void expect_error(const knut_buf *buf, const knut_arrow_ipc_read_options *opts,
                         knut_status code, const char *text)
{
    knut_error e = KNUT_ERROR_INIT;
    knut_status st = read_all(buf, opts, &e, NULL);
    if (st != code || strstr(e.message, text) == NULL)
        fail_msg("expected %d containing \"%s\", got %d: \"%s\"", (int)code, text, (int)st,
                 e.message);
}

static void end_stream(knut_buf *out)
{
    put_u32(out, KNUT_IPC_CONTINUATION);
    put_u32(out, 0);
}

/* ---- record batches ---------------------------------------------------- */

static void test_arrow_ipc_malformed__crafted_valid(void **state)
{
    (void)state;
    knut_buf buf = KNUT_BUF_INIT;
    int64_t body[3] = {0x02, 7, -9}; /* validity 0b10, values */
    int64_t nodes[] = {2, 1}, bufs[] = {0, 1, 8, 16};
    put_schema(&buf, "l", NULL);
    put_batch(&buf, 2, nodes, 1, bufs, 2, body, 24, 0);
    end_stream(&buf);
    knut_arrow_ipc_source src;
    knut_arrow_ipc_reader *r;
    OK(knut_arrow_ipc_source_mem(&src, buf.data, buf.len, err));
    OK(knut_arrow_ipc_reader_new(&r, src, NULL, err));
    struct ArrowArray a;
    OK(knut_arrow_ipc_reader_next(r, &a, err));
    assert_int_equal(2, a.length);
    assert_int_equal(1, a.children[0]->null_count);
    assert_int_equal(-9, ((const int64_t *)a.children[0]->buffers[1])[1]);
    knut_arrow_array_release(&a);
    knut_arrow_ipc_reader_free(r);
    knut_buf_reset(&buf);
}

static void test_arrow_ipc_malformed__buffers_and_nodes(void **state)
{
    (void)state;
    int64_t body[4] = {0};
    knut_buf buf = KNUT_BUF_INIT;
    struct {
        int64_t length;
        int64_t nodes[2];
        int nn;
        int64_t bufs[4];
        int nb;
        int64_t body_len;
        const char *text;
    } cases[] = {
        {2, {2, 0}, 1, {0, 0, 8, 16}, 2, 16,
         "buffer 1 (offset 8, length 16) lies outside the body (16 bytes)"},
        {2, {2, 0}, 1, {0, 0, -8, 16}, 2, 16, "buffer 1 (offset -8, length 16)"},
        {2, {2, 0}, 1, {0, 0, 0, INT64_MAX}, 2, 16, "lies outside the body"},
        {2, {0, 0}, 0, {0, 0, 0, 16}, 2, 16, "has 0 field nodes, the schema needs 1"},
        {2, {2, 0}, 1, {0, 16}, 1, 16, "has 1 buffers, the schema needs 2"},
        {3, {3, 0}, 1, {0, 0, 0, 16}, 2, 16, "values buffer has 16 bytes, needs 24"},
        {2, {2, 3}, 1, {0, 0, 0, 16}, 2, 16, "null count 3"},
        {-1, {2, 0}, 1, {0, 0, 0, 16}, 2, 16, "length -1 is negative"},
        {20, {20, 1}, 1, {0, 1, 0, 16}, 2, 16, "validity buffer has 1 bytes, needs 3"},
        {5, {2, 0}, 1, {0, 0, 0, 16}, 2, 16, "column 'x' has 2 rows, the record batch 5"},
        {2, {2, 1}, 1, {16, 8, 0, 16}, 2, 32, "null_count 1 but the bitmap has 0 nulls"},
    };
    body[2] = -1; /* an all-valid bitmap at byte 16 */
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        knut_buf_clear(&buf);
        put_schema(&buf, "l", NULL);
        put_batch(&buf, cases[i].length, cases[i].nodes, cases[i].nn, cases[i].bufs,
                  cases[i].nb, body, cases[i].body_len, 0);
        end_stream(&buf);
        expect_error(&buf, NULL, KNUT_EPARSE, cases[i].text);
        expect_error(&buf, NULL, KNUT_EPARSE, "message 1 at byte ");
    }
    knut_buf_reset(&buf);
}

/* A buffer placed at an odd offset is copied, so typed loads stay aligned. */
static void test_arrow_ipc_malformed__misaligned_buffer(void **state)
{
    (void)state;
    uint8_t body[24] = {0};
    int64_t v[2] = {123456789012345LL, -5};
    memcpy(body + 4, v, 16);
    int64_t nodes[] = {2, 0}, bufs[] = {0, 0, 4, 16};
    knut_buf buf = KNUT_BUF_INIT;
    put_schema(&buf, "l", NULL);
    put_batch(&buf, 2, nodes, 1, bufs, 2, body, 24, 0);
    knut_arrow_ipc_source src;
    knut_arrow_ipc_reader *r;
    OK(knut_arrow_ipc_source_mem(&src, buf.data, buf.len, err));
    OK(knut_arrow_ipc_reader_new(&r, src, NULL, err));
    struct ArrowArray a;
    OK(knut_arrow_ipc_reader_next(r, &a, err));
    const int64_t *p = a.children[0]->buffers[1];
    assert_int_equal(0, (uintptr_t)p % 8);
    assert_int_equal(v[0], p[0]);
    assert_int_equal(v[1], p[1]);
    knut_arrow_array_release(&a);
    /* no end marker: a clean end of input ends the stream */
    OK(knut_arrow_ipc_reader_next(r, &a, err));
    assert_null(a.release);
    knut_arrow_ipc_reader_free(r);
    knut_buf_reset(&buf);
}

static void test_arrow_ipc_malformed__offsets(void **state)
{
    (void)state;
    knut_buf buf = KNUT_BUF_INIT;
    /* utf8: offsets [0, 3, 10] but only 4 data bytes */
    int32_t body1[6] = {0, 3, 10, 0, 0x64636261, 0};
    int64_t nodes[] = {2, 0}, bufs[] = {0, 0, 0, 12, 16, 4};
    put_schema(&buf, "u", NULL);
    put_batch(&buf, 2, nodes, 1, bufs, 3, body1, 24, 0);
    expect_error(&buf, NULL, KNUT_EPARSE, "data buffer has 4 bytes, needs 10");

    /* utf8: offsets [0, 5, -1] end before they start */
    int32_t body2[6] = {0, 5, -1, 0, 0x64636261, 0x68676665};
    int64_t bufs2[] = {0, 0, 0, 12, 16, 8};
    knut_buf_clear(&buf);
    put_schema(&buf, "u", NULL);
    put_batch(&buf, 2, nodes, 1, bufs2, 3, body2, 24, 0);
    expect_error(&buf, NULL, KNUT_EPARSE, "offsets run from 0 to -1");
    /* [0, 7, 5] go backwards in the middle (found by FULL validation) */
    int32_t body3[6] = {0, 7, 5, 0, 0x64636261, 0x68676665};
    knut_buf_clear(&buf);
    put_schema(&buf, "u", NULL);
    put_batch(&buf, 2, nodes, 1, bufs2, 3, body3, 24, 0);
    expect_error(&buf, NULL, KNUT_EPARSE, "offsets not monotonic at row 1");

    /* list<int32>: offsets [0, 5] but the child has 2 rows */
    int32_t body4[4] = {0, 5, 1, 2};
    int64_t lnodes[] = {1, 0, 2, 0}, lbufs[] = {0, 0, 0, 8, 0, 0, 8, 8};
    knut_buf_clear(&buf);
    put_schema(&buf, "+l", "i");
    put_batch(&buf, 1, lnodes, 2, lbufs, 4, body4, 16, 0);
    expect_error(&buf, NULL, KNUT_EPARSE, "offsets reach row 5 of a child of 2 rows");

    /* offsets buffer shorter than length + 1 */
    int64_t nodes3[] = {3, 0};
    knut_buf_clear(&buf);
    put_schema(&buf, "u", NULL);
    put_batch(&buf, 3, nodes3, 1, bufs2, 3, body3, 24, 0);
    expect_error(&buf, NULL, KNUT_EPARSE, "offsets buffer has 12 bytes, needs 16");
    knut_buf_reset(&buf);
}

static void test_arrow_ipc_malformed__unsupported_messages(void **state)
{
    (void)state;
    knut_buf buf = KNUT_BUF_INIT;
    knut_fb_builder b;
    knut_arrow__fb_builder_init(&b, 0);
    int64_t body[2] = {1, 2};
    int64_t nodes[] = {2, 0}, bufs[] = {0, 0, 0, 16};

    put_schema(&buf, "l", NULL);
    put_batch(&buf, 2, nodes, 1, bufs, 2, body, 16, 0);
    size_t at = buf.len;
    frame(&buf, &b, KNUT_IPC_HDR_DICTIONARY_BATCH, empty_table(&b), 0, KNUT_IPC_METADATA_V5);
    char want[128];
    snprintf(want, sizeof want, "message 2 at byte %zu: dictionary batches are not supported",
             at);
    expect_error(&buf, NULL, KNUT_EUNSUPPORTED, want);

    knut_buf_clear(&buf);
    put_schema(&buf, "l", NULL);
    put_batch(&buf, 2, nodes, 1, bufs, 2, body, 16, 1);
    expect_error(&buf, NULL, KNUT_EUNSUPPORTED, "compressed record batches");

    knut_buf_clear(&buf);
    put_schema(&buf, "l", NULL);
    at = buf.len;
    put_schema(&buf, "l", NULL);
    snprintf(want, sizeof want, "message 1 at byte %zu: a second Schema message", at);
    expect_error(&buf, NULL, KNUT_EPARSE, want);

    knut_buf_clear(&buf);
    put_batch(&buf, 2, nodes, 1, bufs, 2, body, 16, 0);
    expect_error(&buf, NULL, KNUT_EPARSE, "message 0 at byte 0: expected a Schema message");

    knut_buf_clear(&buf);
    knut_arrow__fb_builder_clear(&b);
    frame(&buf, &b, 4, empty_table(&b), 0, KNUT_IPC_METADATA_V5);
    expect_error(&buf, NULL, KNUT_EPARSE, "expected a Schema message, got Tensor");

    /* a Schema in metadata version V3 (0.7 and older) */
    knut_buf_clear(&buf);
    knut_arrow__fb_builder_clear(&b);
    knut_fb_ref f = craft_field(&b, "x", 2, empty_table(&b), NULL, 0, 0);
    put_crafted_schema(&buf, &b, f, 2);
    expect_error(&buf, NULL, KNUT_EUNSUPPORTED, "metadata version V3 is not supported");
    knut_arrow__fb_builder_reset(&b);
    knut_buf_reset(&buf);
}

/* ---- schemas ----------------------------------------------------------- */

static void test_arrow_ipc_malformed__schema_types(void **state)
{
    (void)state;
    knut_buf buf = KNUT_BUF_INIT;
    knut_fb_builder b;
    knut_arrow__fb_builder_init(&b, 0);

    /* Union (14) of the default mode: sparse, which the reader refuses */
    knut_fb_ref f = craft_field(&b, "u", 14, empty_table(&b), NULL, 0, 0);
    put_crafted_schema(&buf, &b, f, KNUT_IPC_METADATA_V5);
    expect_error(&buf, NULL, KNUT_EUNSUPPORTED, "field 'u': sparse unions are not supported");

    /* a BinaryView (23) inside a struct: the message names the path */
    knut_buf_clear(&buf);
    knut_arrow__fb_builder_clear(&b);
    knut_fb_ref inner = craft_field(&b, "inner", 23, empty_table(&b), NULL, 0, 0);
    f = craft_field(&b, "outer", 13, empty_table(&b), &inner, 1, 0);
    put_crafted_schema(&buf, &b, f, KNUT_IPC_METADATA_V5);
    expect_error(&buf, NULL, KNUT_EUNSUPPORTED, "field 'outer.inner': type BinaryView");

    /* an unknown type number */
    knut_buf_clear(&buf);
    knut_arrow__fb_builder_clear(&b);
    f = craft_field(&b, "z", 99, empty_table(&b), NULL, 0, 0);
    put_crafted_schema(&buf, &b, f, KNUT_IPC_METADATA_V5);
    expect_error(&buf, NULL, KNUT_EUNSUPPORTED, "field 'z': type (unknown)");

    /* Int with a 7-bit width */
    knut_buf_clear(&buf);
    knut_arrow__fb_builder_clear(&b);
    knut_arrow__fb_table_start(&b);
    knut_arrow__fb_table_add_i32(&b, 0, 7, 0);
    knut_fb_ref t = knut_arrow__fb_table_end(&b);
    f = craft_field(&b, "odd", 2, t, NULL, 0, 0);
    put_crafted_schema(&buf, &b, f, KNUT_IPC_METADATA_V5);
    expect_error(&buf, NULL, KNUT_EUNSUPPORTED, "field 'odd': unsupported integer bit width 7");

    /* dictionary-encoded field */
    knut_buf_clear(&buf);
    knut_arrow__fb_builder_clear(&b);
    knut_fb_ref dict = empty_table(&b);
    f = craft_field(&b, "city", 5, empty_table(&b), NULL, 0, dict);
    put_crafted_schema(&buf, &b, f, KNUT_IPC_METADATA_V5);
    expect_error(&buf, NULL, KNUT_EUNSUPPORTED, "field 'city': dictionary-encoded");

    /* a list without its child */
    knut_buf_clear(&buf);
    knut_arrow__fb_builder_clear(&b);
    f = craft_field(&b, "l", 12, empty_table(&b), NULL, 0, 0);
    put_crafted_schema(&buf, &b, f, KNUT_IPC_METADATA_V5);
    expect_error(&buf, NULL, KNUT_EPARSE, "field 'l': type list needs 1 child field(s), has 0");

    /* a field without a type */
    knut_buf_clear(&buf);
    knut_arrow__fb_builder_clear(&b);
    f = craft_field(&b, "none", 0, 0, NULL, 0, 0);
    put_crafted_schema(&buf, &b, f, KNUT_IPC_METADATA_V5);
    expect_error(&buf, NULL, KNUT_EPARSE, "field 'none': no type");

    knut_arrow__fb_builder_reset(&b);
    knut_buf_reset(&buf);
}

static void test_arrow_ipc_malformed__schema_limits(void **state)
{
    (void)state;
    knut_buf buf = KNUT_BUF_INIT;
    knut_fb_builder b;
    knut_arrow__fb_builder_init(&b, 0);

    /* 100 nested structs: deeper than any reader should recurse */
    knut_fb_ref f = craft_field(&b, "leaf", 6, empty_table(&b), NULL, 0, 0);
    for (int i = 0; i < 100; i++)
        f = craft_field(&b, "s", 13, empty_table(&b), &f, 1, 0);
    put_crafted_schema(&buf, &b, f, KNUT_IPC_METADATA_V5);
    expect_error(&buf, NULL, KNUT_EPARSE, "nested deeper than 64");

    /* more fields than allowed */
    knut_buf_clear(&buf);
    knut_arrow__fb_builder_clear(&b);
    knut_fb_ref kids[3];
    for (int i = 0; i < 3; i++)
        kids[i] = craft_field(&b, "k", 6, empty_table(&b), NULL, 0, 0);
    f = craft_field(&b, "s", 13, empty_table(&b), kids, 3, 0);
    put_crafted_schema(&buf, &b, f, KNUT_IPC_METADATA_V5);
    knut_arrow_ipc_read_options o = KNUT_ARROW_IPC_READ_OPTIONS_INIT;
    o.max_fields = 3;
    expect_error(&buf, &o, KNUT_ETOOBIG, "schema has more than 3 fields");
    o.max_fields = 4;
    knut_error e = KNUT_ERROR_INIT;
    assert_int_equal(KNUT_OK, read_all(&buf, &o, &e, NULL));

    knut_arrow__fb_builder_reset(&b);
    knut_buf_reset(&buf);
}

/* ---- framing and caps -------------------------------------------------- */

static void test_arrow_ipc_malformed__framing_and_caps(void **state)
{
    (void)state;
    knut_buf buf = KNUT_BUF_INIT;
    expect_error(&buf, NULL, KNUT_EPARSE, "stream has no Schema message");

    /* neither the marker nor a plausible legacy length */
    OK(knut_buf_append(&buf, "\xfe\xff\xff\xff\0\0\0\0", 8));
    expect_error(&buf, NULL, KNUT_EPARSE, "negative metadata length -2");

    knut_buf_clear(&buf);
    put_u32(&buf, KNUT_IPC_CONTINUATION);
    put_u32(&buf, 0x7fffffff);
    expect_error(&buf, NULL, KNUT_ETOOBIG,
                 "metadata length 2147483647 exceeds the limit of 67108864 bytes");

    knut_buf_clear(&buf);
    put_u32(&buf, KNUT_IPC_CONTINUATION);
    put_u32(&buf, 4096);
    OK(knut_buf_append(&buf, "abcd", 4));
    expect_error(&buf, NULL, KNUT_EPARSE,
                 "stream truncated in the metadata: 4096 bytes needed, 4 left");

    /* metadata that is not a flatbuffer */
    knut_buf_clear(&buf);
    put_u32(&buf, KNUT_IPC_CONTINUATION);
    put_u32(&buf, 8);
    OK(knut_buf_append(&buf, "\xf0\xff\0\0\x10\0\0\0", 8));
    expect_error(&buf, NULL, KNUT_EPARSE, "flatbuffer: table at byte 65520 out of range");

    /* options: a small metadata cap, a small body cap */
    int64_t body[2] = {1, 2};
    int64_t nodes[] = {2, 0}, bufs[] = {0, 0, 0, 16};
    knut_buf_clear(&buf);
    put_schema(&buf, "l", NULL);
    put_batch(&buf, 2, nodes, 1, bufs, 2, body, 16, 0);
    knut_arrow_ipc_read_options o = KNUT_ARROW_IPC_READ_OPTIONS_INIT;
    o.max_metadata = 16;
    expect_error(&buf, &o, KNUT_ETOOBIG, "exceeds the limit of 16 bytes");
    o.max_metadata = 0;
    o.max_body = 8;
    expect_error(&buf, &o, KNUT_ETOOBIG, "body length 16 exceeds the limit of 8 bytes");

    /* a body longer than what is left: refused before allocating */
    knut_buf_clear(&buf);
    put_schema(&buf, "l", NULL);
    put_batch(&buf, 2, nodes, 1, bufs, 2, body, 16, 0);
    buf.len -= 8;
    expect_error(&buf, NULL, KNUT_EPARSE,
                 "truncated in the message body: 16 bytes needed, 8 left");

    o = (knut_arrow_ipc_read_options)KNUT_ARROW_IPC_READ_OPTIONS_INIT;
    o.version = 99;
    expect_error(&buf, &o, KNUT_EINVAL, "options version 99");
    knut_buf_reset(&buf);
}

/* After an error the reader (and its C stream) keeps failing with it. */
static void test_arrow_ipc_malformed__stream_errors(void **state)
{
    (void)state;
    knut_buf buf = KNUT_BUF_INIT;
    int64_t body[2] = {1, 2};
    int64_t nodes[] = {3, 0}, bufs[] = {0, 0, 0, 16};
    put_schema(&buf, "l", NULL);
    put_batch(&buf, 3, nodes, 1, bufs, 2, body, 16, 0);
    knut_arrow_ipc_source src;
    struct ArrowArrayStream s;
    OK(knut_arrow_ipc_source_mem(&src, buf.data, buf.len, err));
    OK(knut_arrow_ipc_stream_open(&s, src, NULL, err));
    struct ArrowArray a;
    assert_int_equal(EINVAL, s.get_next(&s, &a));
    assert_null(a.release);
    assert_non_null(strstr(s.get_last_error(&s), "values buffer has 16 bytes, needs 24"));
    assert_int_equal(EINVAL, s.get_next(&s, &a));
    assert_non_null(strstr(s.get_last_error(&s), "message 1 at byte"));
    s.release(&s);
    knut_buf_reset(&buf);
}

/* Random damage to a valid stream of every type: whatever comes back is
 * either an error with a message or a batch that passes FULL validation
 * (read_all checks it). Run under ASan this also proves no wild reads. */
static void test_arrow_ipc_malformed__random_mutations(void **state)
{
    (void)state;
    knut_arrow_builder *top = NULL;
    struct ArrowSchema s;
    struct ArrowArray a;
    knut_buf good = KNUT_BUF_INIT, bad = KNUT_BUF_INIT;
    OK(ipcgen_builder_new(&top, err));
    OK(ipcgen_rows(top, 0, 12, err));
    OK(knut_arrow_builder_finish(top, &a, &s, err));
    knut_arrow_builder_free(top);
    knut_arrow_ipc_writer *w;
    OK(knut_arrow_ipc_writer_new(&w, knut_arrow_ipc_sink_buf(&good), &s, err));
    OK(knut_arrow_ipc_writer_write(w, &a, err));
    OK(knut_arrow_ipc_writer_finish(w, err));
    knut_arrow_ipc_writer_free(w);

    uint64_t rng = 0x9E3779B97F4A7C15u;
    int errors = 0, oks = 0;
    for (int iter = 0; iter < 3000; iter++) {
        knut_buf_clear(&bad);
        OK(knut_buf_append(&bad, good.data, good.len));
        int flips = 1 + iter % 4;
        for (int k = 0; k < flips; k++) {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            size_t pos = (size_t)(rng % bad.len);
            bad.data[pos] = (char)(rng >> 32);
        }
        knut_error e = KNUT_ERROR_INIT;
        knut_status st = read_all(&bad, NULL, &e, NULL);
        if (st != KNUT_OK) {
            assert_true(e.message[0] != '\0');
            errors++;
        } else {
            oks++;
        }
    }
    assert_true(errors > 0);
    assert_true(oks > 0); /* flips inside values leave the stream valid */
    knut_buf_reset(&good);
    knut_buf_reset(&bad);
    knut_arrow_array_release(&a);
    knut_arrow_schema_release(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arrow_ipc_malformed__crafted_valid),
        cmocka_unit_test(test_arrow_ipc_malformed__buffers_and_nodes),
        cmocka_unit_test(test_arrow_ipc_malformed__misaligned_buffer),
        cmocka_unit_test(test_arrow_ipc_malformed__offsets),
        cmocka_unit_test(test_arrow_ipc_malformed__unsupported_messages),
        cmocka_unit_test(test_arrow_ipc_malformed__schema_types),
        cmocka_unit_test(test_arrow_ipc_malformed__schema_limits),
        cmocka_unit_test(test_arrow_ipc_malformed__framing_and_caps),
        cmocka_unit_test(test_arrow_ipc_malformed__stream_errors),
        cmocka_unit_test(test_arrow_ipc_malformed__random_mutations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
