/*
 * Unit tests for the arrow builders: every type with nulls, empty arrays,
 * caps, batch reuse, nested list<struct<...>> and map, and the finished
 * arrays' layout (alignment, omitted validity, buffer counts).
 */
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

static void check_valid(const struct ArrowSchema *s, const struct ArrowArray *a)
{
    knut_error e = KNUT_ERROR_INIT;
    knut_status st = knut_arrow_array_validate(s, a, KNUT_ARROW_VALIDATE_FULL |
                                                         KNUT_ARROW_VALIDATE_UTF8, &e);
    if (st != KNUT_OK)
        fail_msg("validate: %s", e.message);
}

static void check_aligned(const struct ArrowArray *a)
{
    for (int64_t i = 0; i < a->n_buffers; i++)
        assert_true(((uintptr_t)a->buffers[i] & 63) == 0);
    for (int64_t i = 0; i < a->n_children; i++)
        check_aligned(a->children[i]);
}

/* ---- primitive builders ------------------------------------------------ */

static void test_arrow_builder__ints_with_nulls(void **state)
{
    (void)state;
    static const knut_arrow_type types[] = {
        KNUT_ARROW_INT8,   KNUT_ARROW_UINT8,  KNUT_ARROW_INT16,  KNUT_ARROW_UINT16,
        KNUT_ARROW_INT32,  KNUT_ARROW_UINT32, KNUT_ARROW_INT64,  KNUT_ARROW_UINT64,
        KNUT_ARROW_DATE32, KNUT_ARROW_DATE64, KNUT_ARROW_TIME32, KNUT_ARROW_TIME64,
        KNUT_ARROW_TIMESTAMP, KNUT_ARROW_DURATION, KNUT_ARROW_INTERVAL_MONTHS,
        KNUT_ARROW_FLOAT,  KNUT_ARROW_DOUBLE,
    };
    for (size_t k = 0; k < sizeof(types) / sizeof(types[0]); k++) {
        knut_arrow_builder *b;
        struct ArrowArray a;
        struct ArrowSchema s;
        OK(knut_arrow_builder_new_simple(&b, types[k], "x", &e_));
        for (int64_t i = 0; i < 100; i++) {
            if (i % 7 == 3)
                OK(knut_arrow_builder_append_null(b, &e_));
            else
                OK(knut_arrow_builder_append_int(b, i, &e_));
        }
        OK(knut_arrow_builder_finish(b, &a, &s, &e_));
        assert_int_equal(100, a.length);
        assert_int_equal(14, a.null_count);
        assert_int_equal(2, a.n_buffers);
        assert_non_null(a.buffers[0]);
        check_aligned(&a);
        check_valid(&s, &a);

        knut_arrow_view v;
        OK(knut_arrow_view_init(&v, &s, &a, &e_));
        assert_int_equal(types[k], v.type.type);
        assert_int_equal(14, knut_arrow_view_count_nulls(&v));
        for (int64_t i = 0; i < 100; i++) {
            assert_int_equal(i % 7 == 3, knut_arrow_view_is_null(&v, i));
            if (i % 7 != 3) {
                assert_int_equal(i, knut_arrow_view_get_int64(&v, i));
                assert_true(knut_arrow_view_get_double(&v, i) == (double)i);
            }
        }
        knut_arrow_view_reset(&v);
        knut_arrow_array_release(&a);
        knut_arrow_schema_release(&s);
        assert_null(a.release);
        assert_null(s.release);
        knut_arrow_builder_free(b);
    }
}

static void test_arrow_builder__no_nulls_omits_validity(void **state)
{
    (void)state;
    knut_arrow_builder *b;
    struct ArrowArray a;
    OK(knut_arrow_builder_new_simple(&b, KNUT_ARROW_INT64, "x", &e_));
    for (int64_t i = 0; i < 1000; i++)
        OK(knut_arrow_builder_append_fixed(b, &i, &e_));
    OK(knut_arrow_builder_finish(b, &a, NULL, &e_));
    assert_int_equal(0, a.null_count);
    assert_null(a.buffers[0]);
    const int64_t *vals = a.buffers[1];
    assert_int_equal(999, vals[999]);
    knut_arrow_array_release(&a);
    knut_arrow_array_release(&a); /* idempotent */
    knut_arrow_array_release(NULL);
    knut_arrow_builder_free(b);
    knut_arrow_builder_free(NULL);
}

static void test_arrow_builder__range_checks(void **state)
{
    (void)state;
    knut_arrow_builder *b;
    knut_error e = KNUT_ERROR_INIT;
    OK(knut_arrow_builder_new_simple(&b, KNUT_ARROW_INT8, "small", &e_));
    assert_int_equal(KNUT_EINVAL, knut_arrow_builder_append_int(b, 128, &e));
    assert_non_null(strstr(e.message, "column 'small'"));
    assert_non_null(strstr(e.message, "128"));
    assert_int_equal(KNUT_OK, knut_arrow_builder_append_int(b, -128, &e));
    assert_int_equal(KNUT_EINVAL, knut_arrow_builder_append_str(b, "no", &e));
    assert_int_equal(KNUT_EINVAL, knut_arrow_builder_append_double(b, 1.5, &e));
    assert_int_equal(KNUT_EINVAL, knut_arrow_builder_finish_element(b, &e));
    assert_int_equal(1, b->length);
    knut_arrow_builder_free(b);

    OK(knut_arrow_builder_new_simple(&b, KNUT_ARROW_UINT64, "u", &e_));
    assert_int_equal(KNUT_EINVAL, knut_arrow_builder_append_int(b, -1, &e));
    OK(knut_arrow_builder_append_uint(b, UINT64_MAX, &e_));
    struct ArrowArray a;
    struct ArrowSchema s;
    OK(knut_arrow_builder_finish(b, &a, &s, &e_));
    knut_arrow_view v;
    OK(knut_arrow_view_init(&v, &s, &a, &e_));
    assert_true(knut_arrow_view_get_uint64(&v, 0) == UINT64_MAX);
    knut_arrow_view_reset(&v);
    knut_arrow_array_release(&a);
    knut_arrow_schema_release(&s);
    knut_arrow_builder_free(b);
}

static void test_arrow_builder__bool_and_na(void **state)
{
    (void)state;
    knut_arrow_builder *b, *n;
    struct ArrowArray a, an;
    struct ArrowSchema s, sn;
    OK(knut_arrow_builder_new_simple(&b, KNUT_ARROW_BOOL, "flag", &e_));
    for (int i = 0; i < 21; i++) {
        if (i == 20)
            OK(knut_arrow_builder_append_null(b, &e_));
        else
            OK(knut_arrow_builder_append_bool(b, i % 3 == 0, &e_));
    }
    uint8_t bytes[5] = {1, 0, 0, 7, 0};
    uint8_t valid[5] = {1, 1, 0, 1, 1};
    OK(knut_arrow_builder_append_values(b, bytes, 5, valid, &e_));
    OK(knut_arrow_builder_finish(b, &a, &s, &e_));
    assert_string_equal("b", s.format);
    assert_int_equal(26, a.length);
    assert_int_equal(2, a.null_count);
    check_valid(&s, &a);
    knut_arrow_view v;
    OK(knut_arrow_view_init(&v, &s, &a, &e_));
    for (int i = 0; i < 20; i++)
        assert_int_equal(i % 3 == 0, knut_arrow_view_get_bool(&v, i));
    assert_true(knut_arrow_view_is_null(&v, 20));
    assert_true(knut_arrow_view_get_bool(&v, 21));
    assert_false(knut_arrow_view_get_bool(&v, 22));
    assert_true(knut_arrow_view_is_null(&v, 23));
    assert_true(knut_arrow_view_get_bool(&v, 24));
    assert_false(knut_arrow_view_is_null(&v, 25));
    knut_arrow_view_reset(&v);
    knut_arrow_array_release(&a);
    knut_arrow_schema_release(&s);
    knut_arrow_builder_free(b);

    OK(knut_arrow_builder_new_simple(&n, KNUT_ARROW_NA, "nothing", &e_));
    OK(knut_arrow_builder_append_nulls(n, 4, &e_));
    assert_int_equal(KNUT_EINVAL, knut_arrow_builder_append_empty(n, NULL));
    OK(knut_arrow_builder_finish(n, &an, &sn, &e_));
    assert_int_equal(0, an.n_buffers);
    assert_int_equal(4, an.null_count);
    check_valid(&sn, &an);
    OK(knut_arrow_view_init(&v, &sn, &an, &e_));
    assert_true(knut_arrow_view_is_null(&v, 3));
    assert_int_equal(4, knut_arrow_view_count_nulls(&v));
    knut_arrow_view_reset(&v);
    knut_arrow_array_release(&an);
    knut_arrow_schema_release(&sn);
    knut_arrow_builder_free(n);
}

static void test_arrow_builder__strings(void **state)
{
    (void)state;
    static const knut_arrow_type types[] = {KNUT_ARROW_UTF8, KNUT_ARROW_LARGE_UTF8,
                                            KNUT_ARROW_BINARY, KNUT_ARROW_LARGE_BINARY};
    for (size_t k = 0; k < 4; k++) {
        knut_arrow_builder *b;
        struct ArrowArray a;
        struct ArrowSchema s;
        OK(knut_arrow_builder_new_simple(&b, types[k], "s", &e_));
        OK(knut_arrow_builder_reserve(b, 10, 4, &e_));
        OK(knut_arrow_builder_append_str(b, "héllo", &e_));
        OK(knut_arrow_builder_append_null(b, &e_));
        OK(knut_arrow_builder_append_empty(b, &e_));
        OK(knut_arrow_builder_append_bytes(b, "a\0b", 3, &e_));
        OK(knut_arrow_builder_finish(b, &a, &s, &e_));
        assert_int_equal(3, a.n_buffers);
        assert_int_equal(1, a.null_count);
        check_aligned(&a);
        check_valid(&s, &a);
        knut_arrow_view v;
        int64_t len;
        OK(knut_arrow_view_init(&v, &s, &a, &e_));
        const char *p = knut_arrow_view_get_str(&v, 0, &len);
        assert_int_equal(6, len);
        assert_memory_equal("héllo", p, 6);
        assert_true(knut_arrow_view_is_null(&v, 1));
        knut_arrow_view_get_str(&v, 1, &len);
        assert_int_equal(0, len);
        knut_arrow_view_get_str(&v, 2, &len);
        assert_int_equal(0, len);
        assert_false(knut_arrow_view_is_null(&v, 2));
        p = knut_arrow_view_get_bytes(&v, 3, &len);
        assert_int_equal(3, len);
        assert_memory_equal("a\0b", p, 3);
        knut_arrow_view_reset(&v);
        knut_arrow_array_release(&a);
        knut_arrow_schema_release(&s);
        knut_arrow_builder_free(b);
    }
}

static void test_arrow_builder__fixed_width_bytes(void **state)
{
    (void)state;
    knut_arrow_type_info t;
    knut_arrow_builder *b;
    struct ArrowArray a;
    struct ArrowSchema s;
    knut_arrow_type_info_init(&t, KNUT_ARROW_FIXED_BINARY);
    t.byte_width = 3;
    OK(knut_arrow_builder_new(&b, &t, "uuidish", &e_));
    OK(knut_arrow_builder_append_bytes(b, "abc", 3, &e_));
    assert_int_equal(KNUT_EINVAL, knut_arrow_builder_append_bytes(b, "ab", 2, NULL));
    OK(knut_arrow_builder_append_null(b, &e_));
    OK(knut_arrow_builder_append_bytes(b, "xyz", 3, &e_));
    OK(knut_arrow_builder_finish(b, &a, &s, &e_));
    assert_string_equal("w:3", s.format);
    check_valid(&s, &a);
    knut_arrow_view v;
    int64_t len;
    OK(knut_arrow_view_init(&v, &s, &a, &e_));
    assert_memory_equal("xyz", knut_arrow_view_get_bytes(&v, 2, &len), 3);
    assert_int_equal(3, len);
    knut_arrow_view_reset(&v);
    knut_arrow_array_release(&a);
    knut_arrow_schema_release(&s);
    knut_arrow_builder_free(b);

    /* decimal128 takes its 16 raw bytes; timestamps keep unit and zone. */
    knut_arrow_type_info_init(&t, KNUT_ARROW_DECIMAL128);
    t.precision = 10;
    t.scale = 2;
    OK(knut_arrow_builder_new(&b, &t, "price", &e_));
    uint8_t dec[16] = {0x39, 0x30}; /* 12345 -> 123.45 */
    OK(knut_arrow_builder_append_bytes(b, dec, 16, &e_));
    OK(knut_arrow_builder_finish(b, &a, &s, &e_));
    assert_string_equal("d:10,2", s.format);
    check_valid(&s, &a);
    knut_arrow_array_release(&a);
    knut_arrow_schema_release(&s);
    knut_arrow_builder_free(b);

    knut_arrow_type_info_init(&t, KNUT_ARROW_TIMESTAMP);
    t.unit = KNUT_ARROW_NANO;
    strcpy(t.timezone, "UTC");
    OK(knut_arrow_builder_new(&b, &t, "ts", &e_));
    OK(knut_arrow_builder_append_int(b, 1700000000000000000LL, &e_));
    OK(knut_arrow_builder_schema(b, &s, &e_));
    assert_string_equal("tsn:UTC", s.format);
    assert_string_equal("ts", s.name);
    assert_true(s.flags & ARROW_FLAG_NULLABLE);
    knut_arrow_schema_release(&s);
    knut_arrow_builder_free(b);
}

static void test_arrow_builder__append_values_fast_path(void **state)
{
    (void)state;
    knut_arrow_builder *b;
    struct ArrowArray a;
    struct ArrowSchema s;
    int32_t vals[300];
    uint8_t valid[300];
    for (int i = 0; i < 300; i++) {
        vals[i] = i * 3;
        valid[i] = (uint8_t)(i % 50 != 0);
    }
    OK(knut_arrow_builder_new_simple(&b, KNUT_ARROW_INT32, "v", &e_));
    OK(knut_arrow_builder_append_values(b, vals, 100, NULL, &e_));   /* no bitmap yet */
    OK(knut_arrow_builder_append_values(b, vals + 100, 200, valid + 100, &e_));
    int32_t one = -5;
    OK(knut_arrow_builder_append_fixed(b, &one, &e_)); /* slow path: bitmap exists */
    OK(knut_arrow_builder_finish(b, &a, &s, &e_));
    assert_int_equal(301, a.length);
    assert_int_equal(4, a.null_count); /* rows 100, 150, 200, 250 */
    check_valid(&s, &a);
    knut_arrow_view v;
    OK(knut_arrow_view_init(&v, &s, &a, &e_));
    const int32_t *p = knut_arrow_view_values(&v);
    for (int i = 0; i < 300; i++) {
        assert_int_equal(i >= 100 && i % 50 == 0, knut_arrow_view_is_null(&v, i));
        assert_int_equal(i * 3, p[i]);
    }
    assert_int_equal(-5, knut_arrow_view_get_int64(&v, 300));
    knut_arrow_view_reset(&v);
    knut_arrow_array_release(&a);
    knut_arrow_schema_release(&s);
    knut_arrow_builder_free(b);

    OK(knut_arrow_builder_new_simple(&b, KNUT_ARROW_UTF8, "s", &e_));
    assert_int_equal(KNUT_EINVAL, knut_arrow_builder_append_values(b, vals, 1, NULL, NULL));
    int64_t x = 1;
    assert_int_equal(KNUT_EINVAL, knut_arrow_builder_append_fixed(b, &x, NULL));
    knut_arrow_builder_free(b);
}

/* ---- caps -------------------------------------------------------------- */

static void test_arrow_builder__caps(void **state)
{
    (void)state;
    knut_arrow_builder *b;
    knut_error e = KNUT_ERROR_INIT;
    OK(knut_arrow_builder_new_simple(&b, KNUT_ARROW_INT64, "capped", &e_));
    knut_arrow_builder_set_max_bytes(b, 1024);
    int64_t i = 0;
    knut_status st = KNUT_OK;
    for (; i < 1000 && st == KNUT_OK; i++)
        st = knut_arrow_builder_append_int(b, i, &e);
    assert_int_equal(KNUT_ETOOBIG, st);
    assert_int_equal(128, b->length); /* exactly 1024 bytes fit */
    assert_non_null(strstr(e.message, "column 'capped'"));
    int64_t vals[4] = {0};
    assert_int_equal(KNUT_ETOOBIG, knut_arrow_builder_append_values(b, vals, 4, NULL, NULL));
    assert_int_equal(KNUT_ETOOBIG, knut_arrow_builder_reserve(b, 1000, 0, NULL));
    struct ArrowArray a;
    OK(knut_arrow_builder_finish(b, &a, NULL, &e_));
    assert_int_equal(128, a.length);
    knut_arrow_array_release(&a);
    knut_arrow_builder_free(b);

    /* utf8 offsets are int32: data past INT32_MAX is refused before any
     * allocation (the used length is faked so no 2 GiB is needed). */
    OK(knut_arrow_builder_new_simple(&b, KNUT_ARROW_UTF8, "big", &e_));
    OK(knut_arrow_builder_append_str(b, "x", &e_));
    int64_t saved = b->data.len;
    b->data.len = INT32_MAX - 2;
    assert_int_equal(KNUT_ETOOBIG, knut_arrow_builder_append_str(b, "12345", &e));
    assert_non_null(strstr(e.message, "int32 offsets"));
    b->data.len = saved;
    assert_int_equal(1, b->length);
    knut_arrow_builder_free(b);

    /* large_utf8 has no such limit, only the byte cap. */
    OK(knut_arrow_builder_new_simple(&b, KNUT_ARROW_LARGE_UTF8, "large", &e_));
    knut_arrow_builder_set_max_bytes(b, 100);
    assert_int_equal(KNUT_ETOOBIG, knut_arrow_builder_append_bytes(b, "x", 101, &e));
    assert_int_equal(0, b->length);
    OK(knut_arrow_builder_append_bytes(b, "0123456789", 10, &e_));
    knut_arrow_builder_free(b);

    /* A struct row that fails half-way is reported at finish; reset
     * recovers the builder. */
    knut_arrow_builder *sb, *c1, *c2;
    OK(knut_arrow_builder_new_simple(&sb, KNUT_ARROW_STRUCT, "s", &e_));
    OK(knut_arrow_builder_new_simple(&c1, KNUT_ARROW_INT8, "c1", &e_));
    OK(knut_arrow_builder_new_simple(&c2, KNUT_ARROW_INT64, "c2", &e_));
    OK(knut_arrow_builder_add_child(sb, c1, &e_));
    OK(knut_arrow_builder_add_child(sb, c2, &e_));
    knut_arrow_builder_set_max_bytes(c2, 8);
    OK(knut_arrow_builder_append_null(sb, &e_));
    assert_int_equal(KNUT_ETOOBIG, knut_arrow_builder_append_null(sb, NULL));
    assert_int_equal(2, c1->length);
    assert_int_equal(1, c2->length);
    struct ArrowArray sa;
    assert_int_equal(KNUT_EINVAL, knut_arrow_builder_finish(sb, &sa, NULL, &e));
    assert_non_null(strstr(e.message, "child 'c1' has 2 rows, struct has 1"));
    knut_arrow_builder_reset(sb);
    knut_arrow_builder_reset(NULL);
    assert_int_equal(0, c1->length);
    OK(knut_arrow_builder_append_empty(sb, &e_));
    OK(knut_arrow_builder_finish(sb, &sa, NULL, &e_));
    assert_int_equal(1, sa.length);
    assert_int_equal(0, sa.null_count);
    knut_arrow_array_release(&sa);
    knut_arrow_builder_free(sb);
}

/* ---- reuse, nested ----------------------------------------------------- */

static void test_arrow_builder__batches_reuse(void **state)
{
    (void)state;
    knut_arrow_builder *b;
    OK(knut_arrow_builder_new_simple(&b, KNUT_ARROW_UTF8, "s", &e_));
    for (int batch = 0; batch < 3; batch++) {
        struct ArrowArray a;
        struct ArrowSchema s;
        char buf[16];
        for (int i = 0; i < 10 + batch; i++) {
            snprintf(buf, sizeof(buf), "b%d-%d", batch, i);
            OK(knut_arrow_builder_append_str(b, buf, &e_));
        }
        if (batch == 1)
            OK(knut_arrow_builder_append_null(b, &e_));
        OK(knut_arrow_builder_finish(b, &a, &s, &e_));
        assert_int_equal(0, b->length);
        assert_int_equal(10 + batch + (batch == 1), a.length);
        assert_int_equal(batch == 1, a.null_count);
        assert_true(batch == 1 || a.buffers[0] == NULL);
        check_valid(&s, &a);
        knut_arrow_view v;
        int64_t len;
        OK(knut_arrow_view_init(&v, &s, &a, &e_));
        snprintf(buf, sizeof(buf), "b%d-%d", batch, 0);
        assert_memory_equal(buf, knut_arrow_view_get_str(&v, 0, &len), strlen(buf));
        knut_arrow_view_reset(&v);
        knut_arrow_array_release(&a);
        knut_arrow_schema_release(&s);
    }
    knut_arrow_builder_free(b);
}

static void test_arrow_builder__empty_arrays(void **state)
{
    (void)state;
    for (int k = 0; k < KNUT_ARROW_TYPE_COUNT; k++) {
        knut_arrow_type_info t;
        knut_arrow_builder *b, *c = NULL;
        struct ArrowArray a;
        struct ArrowSchema s;
        knut_arrow_type_info_init(&t, (knut_arrow_type)k);
        if (k == KNUT_ARROW_FIXED_BINARY)
            t.byte_width = 4;
        if (k == KNUT_ARROW_DENSE_UNION) { /* assembled from built children, not built */
            assert_int_equal(knut_arrow_builder_new(&b, &t, "e", NULL), KNUT_EUNSUPPORTED);
            continue;
        }
        OK(knut_arrow_builder_new(&b, &t, "e", &e_));
        if (k == KNUT_ARROW_LIST || k == KNUT_ARROW_LARGE_LIST)
            OK(knut_arrow_builder_new_simple(&c, KNUT_ARROW_INT32, "item", &e_));
        if (k == KNUT_ARROW_MAP) {
            knut_arrow_builder *key, *val;
            OK(knut_arrow_builder_new_simple(&c, KNUT_ARROW_STRUCT, "entries", &e_));
            OK(knut_arrow_builder_new_simple(&key, KNUT_ARROW_UTF8, "key", &e_));
            knut_arrow_builder_set_nullable(key, 0);
            OK(knut_arrow_builder_new_simple(&val, KNUT_ARROW_INT64, "value", &e_));
            OK(knut_arrow_builder_add_child(c, key, &e_));
            OK(knut_arrow_builder_add_child(c, val, &e_));
            knut_arrow_builder_set_nullable(c, 0);
        }
        if (c != NULL)
            OK(knut_arrow_builder_add_child(b, c, &e_));
        OK(knut_arrow_builder_finish(b, &a, &s, &e_));
        assert_int_equal(0, a.length);
        assert_int_equal(knut_arrow_type_n_buffers((knut_arrow_type)k), a.n_buffers);
        for (int64_t i = 1; i < a.n_buffers; i++)
            assert_non_null(a.buffers[i]);
        check_valid(&s, &a);
        knut_arrow_view v;
        OK(knut_arrow_view_init(&v, &s, &a, &e_));
        assert_int_equal(0, v.length);
        knut_arrow_view_reset(&v);
        knut_arrow_array_release(&a);
        knut_arrow_schema_release(&s);
        knut_arrow_builder_free(b);
    }
}

/* list<struct<id: int64, tag: utf8>> with null lists, empty lists, null
 * structs; then read back through views. */
static void test_arrow_builder__list_of_struct(void **state)
{
    (void)state;
    knut_arrow_builder *list, *st, *id, *tag;
    OK(knut_arrow_builder_new_simple(&list, KNUT_ARROW_LIST, "items", &e_));
    OK(knut_arrow_builder_new_simple(&st, KNUT_ARROW_STRUCT, "item", &e_));
    OK(knut_arrow_builder_new_simple(&id, KNUT_ARROW_INT64, "id", &e_));
    OK(knut_arrow_builder_new_simple(&tag, KNUT_ARROW_UTF8, "tag", &e_));
    OK(knut_arrow_builder_add_child(st, id, &e_));
    OK(knut_arrow_builder_add_child(st, tag, &e_));
    OK(knut_arrow_builder_add_child(list, st, &e_));
    assert_int_equal(KNUT_EINVAL, knut_arrow_builder_add_child(id, NULL, NULL));

    /* row 0: [{1,"a"}, {2,null}], row 1: null, row 2: [], row 3: [null, {4,"d"}] */
    OK(knut_arrow_builder_append_int(id, 1, &e_));
    OK(knut_arrow_builder_append_str(tag, "a", &e_));
    OK(knut_arrow_builder_finish_element(st, &e_));
    OK(knut_arrow_builder_append_int(id, 2, &e_));
    OK(knut_arrow_builder_append_null(tag, &e_));
    OK(knut_arrow_builder_finish_element(st, &e_));
    OK(knut_arrow_builder_finish_element(list, &e_));
    OK(knut_arrow_builder_append_null(list, &e_));
    OK(knut_arrow_builder_append_empty(list, &e_));
    OK(knut_arrow_builder_append_null(st, &e_));
    OK(knut_arrow_builder_append_int(id, 4, &e_));
    knut_error e = KNUT_ERROR_INIT;
    struct ArrowArray a;
    struct ArrowSchema s;
    assert_int_equal(KNUT_EINVAL, knut_arrow_builder_finish(list, &a, &s, &e));
    assert_null(a.release);
    assert_null(s.release);
    OK(knut_arrow_builder_append_str(tag, "d", &e_));
    OK(knut_arrow_builder_finish_element(st, &e_));
    OK(knut_arrow_builder_finish_element(list, &e_));
    OK(knut_arrow_builder_finish(list, &a, &s, &e_));
    check_aligned(&a);
    check_valid(&s, &a);
    assert_string_equal("+l", s.format);
    assert_string_equal("+s", s.children[0]->format);
    assert_string_equal("tag", s.children[0]->children[1]->name);

    knut_arrow_view v;
    OK(knut_arrow_view_init(&v, &s, &a, &e_));
    assert_int_equal(4, v.length);
    assert_true(knut_arrow_view_is_null(&v, 1));
    int64_t start, end, len;
    knut_arrow_view_list_range(&v, 0, &start, &end);
    assert_int_equal(0, start);
    assert_int_equal(2, end);
    knut_arrow_view_list_range(&v, 2, &start, &end);
    assert_int_equal(start, end);
    knut_arrow_view_list_range(&v, 3, &start, &end);
    assert_int_equal(2, start);
    assert_int_equal(4, end);
    const knut_arrow_view *item = knut_arrow_view_child(&v, 0);
    const knut_arrow_view *ids = knut_arrow_view_child(item, 0);
    const knut_arrow_view *tags = knut_arrow_view_child(item, 1);
    assert_null(knut_arrow_view_child(item, 2));
    assert_true(knut_arrow_view_is_null(item, 2));
    int64_t r = knut_arrow_view_child_row(item, 3);
    assert_int_equal(4, knut_arrow_view_get_int64(ids, r));
    assert_memory_equal("d", knut_arrow_view_get_str(tags, r, &len), 1);
    assert_true(knut_arrow_view_is_null(tags, knut_arrow_view_child_row(item, 1)));
    /* the null struct's nullable children got nulls */
    assert_true(knut_arrow_view_is_null(ids, 2));
    knut_arrow_view_reset(&v);
    knut_arrow_array_release(&a);
    knut_arrow_schema_release(&s);

    /* builder_new_from_schema reproduces the tree */
    knut_arrow_builder *copy;
    OK(knut_arrow_builder_schema(list, &s, &e_));
    OK(knut_arrow_builder_new_from_schema(&copy, &s, &e_));
    assert_int_equal(1, copy->n_children);
    assert_int_equal(2, knut_arrow_builder_child(copy, 0)->n_children);
    assert_string_equal("tag", knut_arrow_builder_child(copy, 0)->children[1]->name);
    assert_null(knut_arrow_builder_child(copy, 1));
    knut_arrow_schema_release(&s);
    knut_arrow_builder_free(copy);
    knut_arrow_builder_free(list);
}

static void test_arrow_builder__map(void **state)
{
    (void)state;
    knut_arrow_builder *m, *entries, *key, *val;
    OK(knut_arrow_builder_new_simple(&m, KNUT_ARROW_MAP, "props", &e_));
    OK(knut_arrow_builder_new_simple(&entries, KNUT_ARROW_STRUCT, "entries", &e_));
    OK(knut_arrow_builder_new_simple(&key, KNUT_ARROW_UTF8, "key", &e_));
    OK(knut_arrow_builder_new_simple(&val, KNUT_ARROW_DOUBLE, "value", &e_));
    knut_arrow_builder_set_nullable(key, 0);
    knut_arrow_builder_set_nullable(entries, 0);
    OK(knut_arrow_builder_add_child(entries, key, &e_));
    OK(knut_arrow_builder_add_child(entries, val, &e_));
    knut_arrow_builder *stray;
    OK(knut_arrow_builder_new_simple(&stray, KNUT_ARROW_INT32, "x", &e_));
    assert_int_equal(KNUT_EINVAL, knut_arrow_builder_add_child(m, stray, NULL)); /* freed */
    OK(knut_arrow_builder_add_child(m, entries, &e_));
    OK(knut_arrow_builder_append_str(key, "w", &e_));
    OK(knut_arrow_builder_append_double(val, 2.5, &e_));
    OK(knut_arrow_builder_finish_element(entries, &e_));
    OK(knut_arrow_builder_finish_element(m, &e_));
    OK(knut_arrow_builder_append_null(m, &e_));
    struct ArrowArray a;
    struct ArrowSchema s;
    OK(knut_arrow_builder_finish(m, &a, &s, &e_));
    assert_string_equal("+m", s.format);
    assert_false(s.children[0]->flags & ARROW_FLAG_NULLABLE);
    check_valid(&s, &a);
    knut_arrow_view v;
    int64_t start, end;
    OK(knut_arrow_view_init(&v, &s, &a, &e_));
    knut_arrow_view_list_range(&v, 0, &start, &end);
    assert_int_equal(1, end - start);
    assert_true(knut_arrow_view_get_double(&v.children[0].children[1], start) == 2.5);
    knut_arrow_view_reset(&v);
    knut_arrow_array_release(&a);
    knut_arrow_schema_release(&s);
    knut_arrow_builder_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arrow_builder__ints_with_nulls),
        cmocka_unit_test(test_arrow_builder__no_nulls_omits_validity),
        cmocka_unit_test(test_arrow_builder__range_checks),
        cmocka_unit_test(test_arrow_builder__bool_and_na),
        cmocka_unit_test(test_arrow_builder__strings),
        cmocka_unit_test(test_arrow_builder__fixed_width_bytes),
        cmocka_unit_test(test_arrow_builder__append_values_fast_path),
        cmocka_unit_test(test_arrow_builder__caps),
        cmocka_unit_test(test_arrow_builder__batches_reuse),
        cmocka_unit_test(test_arrow_builder__empty_arrays),
        cmocka_unit_test(test_arrow_builder__list_of_struct),
        cmocka_unit_test(test_arrow_builder__map),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
