/*
 * Unit tests for arrow read views: sliced arrays (offset > 0) of every
 * layout, struct and list children with their own offsets, hand-made
 * "foreign" arrays laid out the way other producers do (shared buffers,
 * NULL data buffers, null_count -1), dictionary-encoded columns, and the
 * widening accessors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
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

/* A non-owning slice: same buffers, other offset/length. Its release only
 * marks it released; the original keeps ownership. */
static void slice_release(struct ArrowArray *a)
{
    a->release = NULL;
}

static struct ArrowArray slice(const struct ArrowArray *a, int64_t offset, int64_t length)
{
    struct ArrowArray s = *a;
    s.offset = a->offset + offset;
    s.length = length;
    s.null_count = -1; /* unknown, as slices usually say */
    s.release = slice_release;
    s.private_data = NULL;
    return s;
}

static void build_int32(struct ArrowArray *a, struct ArrowSchema *s, int n, int null_every)
{
    knut_arrow_builder *b;
    OK(knut_arrow_builder_new_simple(&b, KNUT_ARROW_INT32, "i", &e_));
    for (int i = 0; i < n; i++) {
        if (null_every && i % null_every == 0)
            OK(knut_arrow_builder_append_null(b, &e_));
        else
            OK(knut_arrow_builder_append_int(b, i * 10, &e_));
    }
    OK(knut_arrow_builder_finish(b, a, s, &e_));
    knut_arrow_builder_free(b);
}

static void test_arrow_view__sliced_fixed_and_bool(void **state)
{
    (void)state;
    struct ArrowArray a, sl;
    struct ArrowSchema s;
    build_int32(&a, &s, 50, 4);
    sl = slice(&a, 13, 20);
    OK(knut_arrow_array_validate(&s, &sl, KNUT_ARROW_VALIDATE_FULL, &e_));
    knut_arrow_view v;
    OK(knut_arrow_view_init(&v, &s, &sl, &e_));
    assert_int_equal(20, v.length);
    assert_int_equal(13, v.offset);
    for (int64_t i = 0; i < 20; i++) {
        int64_t row = 13 + i;
        assert_int_equal(row % 4 == 0, knut_arrow_view_is_null(&v, i));
        if (row % 4 != 0)
            assert_int_equal(row * 10, knut_arrow_view_get_int64(&v, i));
    }
    assert_int_equal(5, knut_arrow_view_count_nulls(&v)); /* 16, 20, 24, 28, 32 */
    assert_int_equal(140, ((const int32_t *)knut_arrow_view_values(&v))[1]);
    knut_arrow_view_reset(&v);
    knut_arrow_array_release(&sl);
    knut_arrow_array_release(&a);
    knut_arrow_schema_release(&s);

    /* bool values at a bit offset that is not a byte boundary */
    knut_arrow_builder *b;
    OK(knut_arrow_builder_new_simple(&b, KNUT_ARROW_BOOL, "b", &e_));
    for (int i = 0; i < 40; i++) {
        if (i == 11)
            OK(knut_arrow_builder_append_null(b, &e_));
        else
            OK(knut_arrow_builder_append_bool(b, (i * 7) % 5 < 2, &e_));
    }
    OK(knut_arrow_builder_finish(b, &a, &s, &e_));
    knut_arrow_builder_free(b);
    sl = slice(&a, 3, 30);
    OK(knut_arrow_view_init(&v, &s, &sl, &e_));
    for (int64_t i = 0; i < 30; i++) {
        int64_t row = i + 3;
        assert_int_equal(row == 11, knut_arrow_view_is_null(&v, i));
        if (row != 11)
            assert_int_equal((row * 7) % 5 < 2, knut_arrow_view_get_bool(&v, i));
    }
    assert_int_equal(1, knut_arrow_view_count_nulls(&v));
    knut_arrow_view_reset(&v);
    knut_arrow_array_release(&a);
    knut_arrow_schema_release(&s);
}

static void test_arrow_view__sliced_strings(void **state)
{
    (void)state;
    static const knut_arrow_type types[] = {KNUT_ARROW_UTF8, KNUT_ARROW_LARGE_BINARY};
    for (int k = 0; k < 2; k++) {
        knut_arrow_builder *b;
        struct ArrowArray a, sl;
        struct ArrowSchema s;
        char buf[32];
        OK(knut_arrow_builder_new_simple(&b, types[k], "s", &e_));
        for (int i = 0; i < 30; i++) {
            snprintf(buf, sizeof(buf), "row-%d", i);
            if (i % 9 == 0)
                OK(knut_arrow_builder_append_null(b, &e_));
            else
                OK(knut_arrow_builder_append_str(b, buf, &e_));
        }
        OK(knut_arrow_builder_finish(b, &a, &s, &e_));
        knut_arrow_builder_free(b);
        sl = slice(&a, 7, 15);
        OK(knut_arrow_array_validate(&s, &sl, KNUT_ARROW_VALIDATE_FULL | KNUT_ARROW_VALIDATE_UTF8,
                                     &e_));
        knut_arrow_view v;
        OK(knut_arrow_view_init(&v, &s, &sl, &e_));
        for (int64_t i = 0; i < 15; i++) {
            int64_t row = i + 7, len;
            assert_int_equal(row % 9 == 0, knut_arrow_view_is_null(&v, i));
            if (row % 9 == 0)
                continue;
            snprintf(buf, sizeof(buf), "row-%d", (int)row);
            const char *p = knut_arrow_view_get_str(&v, i, &len);
            assert_int_equal((int64_t)strlen(buf), len);
            assert_memory_equal(buf, p, (size_t)len);
        }
        knut_arrow_view_reset(&v);
        knut_arrow_array_release(&a);
        knut_arrow_schema_release(&s);
    }
}

/* struct<a: int64, b: utf8> sliced at the parent; child a also carries its
 * own offset (as producers that share child buffers do). */
static void test_arrow_view__sliced_struct_and_child_offsets(void **state)
{
    (void)state;
    knut_arrow_builder *st, *ca, *cb;
    OK(knut_arrow_builder_new_simple(&st, KNUT_ARROW_STRUCT, "", &e_));
    OK(knut_arrow_builder_new_simple(&ca, KNUT_ARROW_INT64, "a", &e_));
    OK(knut_arrow_builder_new_simple(&cb, KNUT_ARROW_UTF8, "b", &e_));
    OK(knut_arrow_builder_add_child(st, ca, &e_));
    OK(knut_arrow_builder_add_child(st, cb, &e_));
    for (int i = 0; i < 12; i++) {
        char buf[8];
        snprintf(buf, sizeof(buf), "s%d", i);
        if (i == 5) {
            OK(knut_arrow_builder_append_null(st, &e_));
            continue;
        }
        OK(knut_arrow_builder_append_int(ca, 100 + i, &e_));
        OK(knut_arrow_builder_append_str(cb, buf, &e_));
        OK(knut_arrow_builder_finish_element(st, &e_));
    }
    struct ArrowArray a;
    struct ArrowSchema s;
    OK(knut_arrow_builder_finish(st, &a, &s, &e_));
    knut_arrow_builder_free(st);

    /* Parent rows 4..9; child a re-based by 2 (its logical row j is built
     * row j + 2), which shifts what row i of the parent sees in a. */
    struct ArrowArray child_a = slice(a.children[0], 2, a.children[0]->length - 2);
    struct ArrowArray *kids[2] = {&child_a, a.children[1]};
    struct ArrowArray parent = slice(&a, 4, 6);
    parent.children = kids;
    OK(knut_arrow_array_validate(&s, &parent, KNUT_ARROW_VALIDATE_FULL, &e_));

    knut_arrow_view v;
    int64_t len;
    OK(knut_arrow_view_init(&v, &s, &parent, &e_));
    const knut_arrow_view *va = knut_arrow_view_child(&v, 0);
    const knut_arrow_view *vb = knut_arrow_view_child(&v, 1);
    for (int64_t i = 0; i < 6; i++) {
        int64_t row = 4 + i, r = knut_arrow_view_child_row(&v, i);
        assert_int_equal(row, r);
        assert_int_equal(row == 5, knut_arrow_view_is_null(&v, i));
        if (row == 5)
            continue;
        char buf[8];
        snprintf(buf, sizeof(buf), "s%d", (int)row);
        assert_memory_equal(buf, knut_arrow_view_get_str(vb, r, &len), strlen(buf));
        if (row + 2 != 5)
            assert_int_equal(100 + row + 2, knut_arrow_view_get_int64(va, r));
    }
    /* A child too short for the parent's offset + length is caught. */
    child_a.length = 8;
    knut_error e = KNUT_ERROR_INIT;
    assert_int_equal(KNUT_EINVAL, knut_arrow_array_validate(&s, &parent, 0, &e));
    assert_non_null(strstr(e.message, "child 'a'"));
    knut_arrow_view_reset(&v);
    knut_arrow_array_release(&a);
    knut_arrow_schema_release(&s);
}

static void test_arrow_view__sliced_list(void **state)
{
    (void)state;
    knut_arrow_builder *l, *item;
    OK(knut_arrow_builder_new_simple(&l, KNUT_ARROW_LARGE_LIST, "l", &e_));
    OK(knut_arrow_builder_new_simple(&item, KNUT_ARROW_INT16, "item", &e_));
    OK(knut_arrow_builder_add_child(l, item, &e_));
    /* row i holds i items: i*100, i*100+1, ... */
    for (int i = 0; i < 8; i++) {
        for (int j = 0; j < i; j++)
            OK(knut_arrow_builder_append_int(item, i * 100 + j, &e_));
        OK(knut_arrow_builder_finish_element(l, &e_));
    }
    struct ArrowArray a, sl;
    struct ArrowSchema s;
    OK(knut_arrow_builder_finish(l, &a, &s, &e_));
    knut_arrow_builder_free(l);
    sl = slice(&a, 5, 3);
    OK(knut_arrow_array_validate(&s, &sl, KNUT_ARROW_VALIDATE_FULL, &e_));
    knut_arrow_view v;
    OK(knut_arrow_view_init(&v, &s, &sl, &e_));
    for (int64_t i = 0; i < 3; i++) {
        int64_t start, end, row = i + 5;
        knut_arrow_view_list_range(&v, i, &start, &end);
        assert_int_equal(row, end - start);
        for (int64_t j = start; j < end; j++)
            assert_int_equal(row * 100 + (j - start), knut_arrow_view_get_int64(&v.children[0], j));
    }
    knut_arrow_view_reset(&v);
    knut_arrow_array_release(&a);
    knut_arrow_schema_release(&s);
}

/* ---- foreign arrays ---------------------------------------------------- */

static int foreign_released;

static void foreign_release(struct ArrowArray *a)
{
    foreign_released++;
    a->release = NULL;
}

static void foreign_schema_release(struct ArrowSchema *s)
{
    s->release = NULL;
}

/* What other producers do: NULL data for an all-empty utf8 column, a
 * validity bitmap with null_count -1, uint64 past INT64_MAX, all on
 * unaligned stack memory. */
static void test_arrow_view__foreign_layouts(void **state)
{
    (void)state;
    struct ArrowSchema s = {.format = "u", .name = "e", .release = foreign_schema_release};
    int32_t offs[4] = {0, 0, 0, 0};
    const void *bufs[3] = {NULL, offs, NULL};
    struct ArrowArray a = {.length = 3, .null_count = 0, .n_buffers = 3, .buffers = bufs,
                           .release = foreign_release};
    knut_arrow_view v;
    int64_t len;
    OK(knut_arrow_array_validate(&s, &a, KNUT_ARROW_VALIDATE_FULL | KNUT_ARROW_VALIDATE_UTF8,
                                 &e_));
    OK(knut_arrow_view_init(&v, &s, &a, &e_));
    assert_non_null(knut_arrow_view_get_str(&v, 2, &len));
    assert_int_equal(0, len);
    knut_arrow_view_reset(&v);
    knut_arrow_array_release(&a);
    assert_int_equal(1, foreign_released);
    assert_null(a.release);

    struct ArrowSchema su = {.format = "L", .name = "u", .release = foreign_schema_release};
    uint64_t uv[3] = {1, UINT64_MAX, 42};
    uint8_t valid[1] = {0x05}; /* rows 0 and 2 valid */
    const void *ubufs[2] = {valid, uv};
    struct ArrowArray ua = {.length = 3, .null_count = -1, .n_buffers = 2, .buffers = ubufs,
                            .release = foreign_release};
    OK(knut_arrow_view_init(&v, &su, &ua, &e_));
    assert_false(knut_arrow_view_is_null(&v, 0));
    assert_true(knut_arrow_view_is_null(&v, 1));
    assert_true(knut_arrow_view_get_uint64(&v, 1) == UINT64_MAX);
    assert_true(knut_arrow_view_get_double(&v, 1) > 1.8e19);
    assert_int_equal(42, knut_arrow_view_get_int64(&v, 2));
    assert_int_equal(1, knut_arrow_view_count_nulls(&v));
    knut_arrow_view_reset(&v);

    /* null_count 0 with a bitmap present: the bitmap is ignored */
    ua.null_count = 0;
    OK(knut_arrow_view_init(&v, &su, &ua, &e_));
    assert_false(knut_arrow_view_is_null(&v, 1));
    knut_arrow_view_reset(&v);

    /* float and int16 widening */
    struct ArrowSchema sf = {.format = "f", .name = "f", .release = foreign_schema_release};
    float fv[2] = {1.5f, -2.25f};
    const void *fbufs[2] = {NULL, fv};
    struct ArrowArray fa = {.length = 2, .n_buffers = 2, .buffers = fbufs,
                            .release = foreign_release};
    OK(knut_arrow_view_init(&v, &sf, &fa, &e_));
    assert_true(knut_arrow_view_get_double(&v, 1) == -2.25);
    assert_int_equal(-2, knut_arrow_view_get_int64(&v, 1));
    knut_arrow_view_reset(&v);
    struct ArrowSchema ss = {.format = "s", .name = "s", .release = foreign_schema_release};
    int16_t sv[2] = {-300, 300};
    const void *sbufs[2] = {NULL, sv};
    struct ArrowArray sa = {.length = 2, .n_buffers = 2, .buffers = sbufs,
                            .release = foreign_release};
    OK(knut_arrow_view_init(&v, &ss, &sa, &e_));
    assert_int_equal(-300, knut_arrow_view_get_int64(&v, 0));
    assert_true(knut_arrow_view_get_double(&v, 1) == 300.0);
    knut_arrow_view_reset(&v);

    /* view init refuses what it cannot read */
    struct ArrowSchema bad = {.format = "+w:4", .name = "x", .release = foreign_schema_release};
    knut_error e = KNUT_ERROR_INIT;
    assert_int_equal(KNUT_EUNSUPPORTED, knut_arrow_view_init(&v, &bad, &sa, &e));
    assert_non_null(strstr(e.message, "unsupported"));
    assert_null(v.children);
    knut_arrow_view_reset(NULL);
}

/* A dictionary-encoded utf8 column (int8 indices), as DuckDB exports ENUMs. */
static void test_arrow_view__dictionary(void **state)
{
    (void)state;
    knut_arrow_builder *db;
    struct ArrowArray dict;
    struct ArrowSchema dict_schema;
    OK(knut_arrow_builder_new_simple(&db, KNUT_ARROW_UTF8, "", &e_));
    OK(knut_arrow_builder_append_str(db, "red", &e_));
    OK(knut_arrow_builder_append_str(db, "green", &e_));
    OK(knut_arrow_builder_finish(db, &dict, &dict_schema, &e_));
    knut_arrow_builder_free(db);

    int8_t idx[4] = {1, 0, 0, 1};
    uint8_t valid[1] = {0x0b}; /* row 2 null */
    const void *bufs[2] = {valid, idx};
    struct ArrowArray a = {.length = 4, .null_count = 1, .n_buffers = 2, .buffers = bufs,
                           .dictionary = &dict, .release = foreign_release};
    struct ArrowSchema s = {.format = "c", .name = "color", .dictionary = &dict_schema,
                            .release = foreign_schema_release};
    OK(knut_arrow_array_validate(&s, &a, KNUT_ARROW_VALIDATE_FULL, &e_));
    knut_arrow_view v;
    int64_t len;
    OK(knut_arrow_view_init(&v, &s, &a, &e_));
    assert_non_null(v.dictionary);
    assert_int_equal(KNUT_ARROW_INT8, v.type.type);
    int64_t k = knut_arrow_view_get_int64(&v, 0);
    assert_memory_equal("green", knut_arrow_view_get_str(v.dictionary, k, &len), 5);
    assert_true(knut_arrow_view_is_null(&v, 2));
    knut_arrow_view_reset(&v);

    /* an index past the dictionary is caught at FULL only */
    idx[3] = 2;
    knut_error e = KNUT_ERROR_INIT;
    assert_int_equal(KNUT_OK, knut_arrow_array_validate(&s, &a, KNUT_ARROW_VALIDATE_DEFAULT, &e));
    assert_int_equal(KNUT_EINVAL, knut_arrow_array_validate(&s, &a, KNUT_ARROW_VALIDATE_FULL, &e));
    assert_string_equal("column 'color': dictionary index 2 out of range [0, 2) at row 3",
                        e.message);
    /* a null slot may hold any index */
    idx[3] = 1;
    idx[2] = 99;
    assert_int_equal(KNUT_OK, knut_arrow_array_validate(&s, &a, KNUT_ARROW_VALIDATE_FULL, &e));

    knut_arrow_array_release(&dict);
    knut_arrow_schema_release(&dict_schema);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arrow_view__sliced_fixed_and_bool),
        cmocka_unit_test(test_arrow_view__sliced_strings),
        cmocka_unit_test(test_arrow_view__sliced_struct_and_child_offsets),
        cmocka_unit_test(test_arrow_view__sliced_list),
        cmocka_unit_test(test_arrow_view__foreign_layouts),
        cmocka_unit_test(test_arrow_view__dictionary),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
