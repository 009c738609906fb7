/*
 * Unit tests for validating foreign arrays: each structural defect at
 * MINIMAL, offset defects at DEFAULT/FULL, null counts, UTF-8, and the
 * column paths in the messages. Arrays are built correct, then corrupted.
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

/* Expects validation at `level` to fail with EINVAL and `msg` in the text. */
static void expect_invalid(const struct ArrowSchema *s, const struct ArrowArray *a,
                           unsigned level, const char *msg)
{
    knut_error e = KNUT_ERROR_INIT;
    knut_status st = knut_arrow_array_validate(s, a, level, &e);
    if (st != KNUT_EINVAL || strstr(e.message, msg) == NULL)
        fail_msg("level %u: expected EINVAL with '%s', got %d '%s'", level, msg, (int)st,
                 e.message);
}

static void expect_valid(const struct ArrowSchema *s, const struct ArrowArray *a, unsigned level)
{
    knut_error e = KNUT_ERROR_INIT;
    if (knut_arrow_array_validate(s, a, level, &e) != KNUT_OK)
        fail_msg("level %u: %s", level, e.message);
}

/* struct "a" { b: utf8 (30 rows "v0".."v29", row 3 null), n: int32 } */
static void build_ab(struct ArrowArray *a, struct ArrowSchema *s)
{
    knut_arrow_builder *st, *b, *n;
    OK(knut_arrow_builder_new_simple(&st, KNUT_ARROW_STRUCT, "a", &e_));
    OK(knut_arrow_builder_new_simple(&b, KNUT_ARROW_UTF8, "b", &e_));
    OK(knut_arrow_builder_new_simple(&n, KNUT_ARROW_INT32, "n", &e_));
    OK(knut_arrow_builder_add_child(st, b, &e_));
    OK(knut_arrow_builder_add_child(st, n, &e_));
    for (int i = 0; i < 30; i++) {
        char buf[8];
        snprintf(buf, sizeof(buf), "v%d", i);
        if (i == 3)
            OK(knut_arrow_builder_append_null(b, &e_));
        else
            OK(knut_arrow_builder_append_str(b, buf, &e_));
        OK(knut_arrow_builder_append_int(n, i, &e_));
        OK(knut_arrow_builder_finish_element(st, &e_));
    }
    OK(knut_arrow_builder_finish(st, a, s, &e_));
    knut_arrow_builder_free(st);
}

static int32_t *offsets_of(struct ArrowArray *a)
{
    return (int32_t *)(uintptr_t)a->buffers[1];
}

static void test_arrow_validate__good_arrays_pass(void **state)
{
    (void)state;
    struct ArrowArray a;
    struct ArrowSchema s;
    build_ab(&a, &s);
    expect_valid(&s, &a, KNUT_ARROW_VALIDATE_MINIMAL);
    expect_valid(&s, &a, KNUT_ARROW_VALIDATE_DEFAULT);
    expect_valid(&s, &a, KNUT_ARROW_VALIDATE_FULL | KNUT_ARROW_VALIDATE_UTF8);
    knut_error e = KNUT_ERROR_INIT;
    assert_int_equal(KNUT_EINVAL, knut_arrow_array_validate(&s, &a, 7, &e));
    assert_int_equal(KNUT_EINVAL, knut_arrow_array_validate(NULL, &a, 0, &e));
    knut_arrow_array_release(&a);
    knut_arrow_schema_release(&s);
}

static void test_arrow_validate__offsets_not_monotonic(void **state)
{
    (void)state;
    struct ArrowArray a;
    struct ArrowSchema s;
    build_ab(&a, &s);
    int32_t *off = offsets_of(a.children[0]);
    off[18] = off[17] - 1; /* row 17 now ends before it starts */
    expect_valid(&s, &a, KNUT_ARROW_VALIDATE_MINIMAL);
    expect_valid(&s, &a, KNUT_ARROW_VALIDATE_DEFAULT); /* only ends are checked */
    knut_error e = KNUT_ERROR_INIT;
    assert_int_equal(KNUT_EINVAL,
                     knut_arrow_array_validate(&s, &a, KNUT_ARROW_VALIDATE_FULL, &e));
    assert_string_equal("column 'a.b': offsets not monotonic at row 17", e.message);

    /* rows are counted from the array's offset */
    struct ArrowArray child = *a.children[0];
    child.offset = 10;
    child.length = 15;
    child.null_count = -1;
    struct ArrowArray *kids[2] = {&child, a.children[1]};
    struct ArrowArray parent = a;
    parent.children = kids;
    parent.length = 15;
    assert_int_equal(KNUT_EINVAL,
                     knut_arrow_array_validate(&s, &parent, KNUT_ARROW_VALIDATE_FULL, &e));
    assert_string_equal("column 'a.b': offsets not monotonic at row 7", e.message);
    knut_arrow_array_release(&a);
    knut_arrow_schema_release(&s);
}

static void test_arrow_validate__offsets_out_of_range(void **state)
{
    (void)state;
    struct ArrowArray a;
    struct ArrowSchema s;
    build_ab(&a, &s);
    int32_t *off = offsets_of(a.children[0]);
    int32_t first = off[0], last = off[30];
    off[0] = -4;
    expect_invalid(&s, &a, KNUT_ARROW_VALIDATE_DEFAULT, "first offset -4 is negative");
    off[0] = first;
    off[30] = -1;
    expect_invalid(&s, &a, KNUT_ARROW_VALIDATE_DEFAULT,
                   "last offset -1 is before first offset 0");
    off[30] = last;

    /* offsets spanning bytes with no data buffer */
    const void **bufs = a.children[0]->buffers;
    const void *data = bufs[2];
    bufs[2] = NULL;
    expect_valid(&s, &a, KNUT_ARROW_VALIDATE_MINIMAL);
    expect_invalid(&s, &a, KNUT_ARROW_VALIDATE_DEFAULT, "data buffer is NULL");
    bufs[2] = data;
    expect_valid(&s, &a, KNUT_ARROW_VALIDATE_FULL);
    knut_arrow_array_release(&a);
    knut_arrow_schema_release(&s);
}

static void test_arrow_validate__list_offsets_past_child(void **state)
{
    (void)state;
    knut_arrow_builder *l, *item;
    struct ArrowArray a;
    struct ArrowSchema s;
    OK(knut_arrow_builder_new_simple(&l, KNUT_ARROW_LIST, "tags", &e_));
    OK(knut_arrow_builder_new_simple(&item, KNUT_ARROW_INT64, "item", &e_));
    OK(knut_arrow_builder_add_child(l, item, &e_));
    for (int i = 0; i < 5; i++) {
        OK(knut_arrow_builder_append_int(item, i, &e_));
        OK(knut_arrow_builder_finish_element(l, &e_));
    }
    OK(knut_arrow_builder_finish(l, &a, &s, &e_));
    knut_arrow_builder_free(l);
    expect_valid(&s, &a, KNUT_ARROW_VALIDATE_FULL);
    a.children[0]->length = 4; /* the last list reaches item 5 */
    expect_valid(&s, &a, KNUT_ARROW_VALIDATE_MINIMAL);
    expect_invalid(&s, &a, KNUT_ARROW_VALIDATE_DEFAULT,
                   "column 'tags': offsets end at 5 past child length 4");
    a.children[0]->length = 5;
    knut_arrow_array_release(&a);
    knut_arrow_schema_release(&s);
}

static void test_arrow_validate__structure(void **state)
{
    (void)state;
    struct ArrowArray a;
    struct ArrowSchema s;
    build_ab(&a, &s);
    struct ArrowArray *b = a.children[0], *n = a.children[1];

    n->n_buffers = 3;
    expect_invalid(&s, &a, 0, "column 'a.n': int32 array has 3 buffers, expected 2");
    n->n_buffers = 2;

    a.n_children = 1;
    expect_invalid(&s, &a, 0, "array has 1 children, schema has 2");
    a.n_children = 2;

    const void *vals = n->buffers[1];
    n->buffers[1] = NULL;
    expect_invalid(&s, &a, 0, "column 'a.n': values buffer is NULL at length 30");
    n->buffers[1] = vals;

    const void *validity = b->buffers[0];
    b->buffers[0] = NULL;
    expect_invalid(&s, &a, 0, "column 'a.b': null_count 1 but no validity buffer");
    b->buffers[0] = validity;

    b->null_count = 31;
    expect_invalid(&s, &a, 0, "null_count 31 outside [-1, 30]");
    b->null_count = 2; /* plausible but wrong: FULL counts the bitmap */
    expect_valid(&s, &a, KNUT_ARROW_VALIDATE_DEFAULT);
    expect_invalid(&s, &a, KNUT_ARROW_VALIDATE_FULL, "null_count 2 but the bitmap has 1 nulls");
    b->null_count = 1;

    n->length = 29;
    expect_invalid(&s, &a, 0, "child 'n' has 29 rows, struct needs 30");
    n->length = 30;

    a.offset = -1;
    expect_invalid(&s, &a, 0, "column 'a': bad length 30 / offset -1");
    a.offset = 0;

    struct ArrowArray dict = a;
    a.dictionary = &dict;
    expect_invalid(&s, &a, 0, "dictionary present in only one");
    a.dictionary = NULL;

    void (*rel)(struct ArrowArray *) = n->release;
    n->release = NULL;
    expect_invalid(&s, &a, 0, "column 'a.n': array is released");
    n->release = rel;

    expect_valid(&s, &a, KNUT_ARROW_VALIDATE_FULL);
    knut_arrow_array_release(&a);
    knut_arrow_schema_release(&s);
}

static void test_arrow_validate__schema_problems(void **state)
{
    (void)state;
    struct ArrowArray a;
    struct ArrowSchema s;
    build_ab(&a, &s);
    const char *fmt = s.children[1]->format;
    s.children[1]->format = "q";
    expect_invalid(&s, &a, 0, "column 'a.n': invalid Arrow format string 'q'");
    s.children[1]->format = "+us:0"; /* sparse unions: not supported */
    knut_error e = KNUT_ERROR_INIT;
    assert_int_equal(KNUT_EUNSUPPORTED, knut_arrow_array_validate(&s, &a, 0, &e));
    s.children[1]->format = "l"; /* int64 schema over int32 data: same layout, allowed */
    expect_valid(&s, &a, KNUT_ARROW_VALIDATE_FULL);
    s.children[1]->format = "+l"; /* a list needs a child */
    expect_invalid(&s, &a, 0, "list schema has 0 children, expected 1");
    s.children[1]->format = fmt;

    /* unnamed children show as [index] */
    const char *name = s.children[0]->name;
    s.children[0]->name = "";
    a.children[0]->n_buffers = 2;
    expect_invalid(&s, &a, 0, "column 'a.[0]': utf8 array has 2 buffers");
    a.children[0]->n_buffers = 3;
    s.children[0]->name = name;
    knut_arrow_array_release(&a);
    knut_arrow_schema_release(&s);
}

static void test_arrow_validate__utf8(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        int len;
        int ok;
    } cases[] = {
        {"plain", 5, 1},
        {"h\xc3\xa9", 3, 1},
        {"\xe2\x82\xac", 3, 1},         /* euro sign */
        {"\xf0\x9f\x98\x80", 4, 1},     /* emoji */
        {"\xc0\x80", 2, 0},             /* overlong NUL */
        {"\xe0\x80\xaf", 3, 0},         /* overlong '/' */
        {"\xed\xa0\x80", 3, 0},         /* surrogate */
        {"\xf4\x90\x80\x80", 4, 0},     /* > U+10FFFF */
        {"\xe2\x82", 2, 0},             /* truncated */
        {"\x80", 1, 0},                 /* lone continuation */
        {"\xff", 1, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        assert_int_equal(cases[i].ok,
                         knut_arrow_utf8_valid((const uint8_t *)cases[i].s, cases[i].len));

    struct ArrowArray a;
    struct ArrowSchema s;
    build_ab(&a, &s);
    uint8_t *data = (uint8_t *)(uintptr_t)a.children[0]->buffers[2];
    int32_t *off = offsets_of(a.children[0]);
    data[off[12]] = 0xff; /* "v12" -> invalid */
    expect_valid(&s, &a, KNUT_ARROW_VALIDATE_FULL); /* UTF-8 is opt-in */
    expect_invalid(&s, &a, KNUT_ARROW_VALIDATE_FULL | KNUT_ARROW_VALIDATE_UTF8,
                   "column 'a.b': invalid UTF-8 at row 12");
    /* binary columns are never checked */
    const char *fmt = s.children[0]->format;
    s.children[0]->format = "z";
    expect_valid(&s, &a, KNUT_ARROW_VALIDATE_FULL | KNUT_ARROW_VALIDATE_UTF8);
    s.children[0]->format = fmt;
    /* null rows may hold anything: null out row 12 */
    uint8_t *validity = (uint8_t *)(uintptr_t)a.children[0]->buffers[0];
    validity[12 / 8] &= (uint8_t)~(1u << (12 % 8));
    a.children[0]->null_count = 2;
    expect_valid(&s, &a, KNUT_ARROW_VALIDATE_FULL | KNUT_ARROW_VALIDATE_UTF8);
    knut_arrow_array_release(&a);
    knut_arrow_schema_release(&s);
}

static void test_arrow_validate__depth_limit(void **state)
{
    (void)state;
    /* 70 nested lists built bottom-up */
    knut_arrow_builder *inner;
    OK(knut_arrow_builder_new_simple(&inner, KNUT_ARROW_INT8, "leaf", &e_));
    for (int i = 0; i < 70; i++) {
        knut_arrow_builder *l;
        OK(knut_arrow_builder_new_simple(&l, KNUT_ARROW_LIST, "l", &e_));
        OK(knut_arrow_builder_add_child(l, inner, &e_));
        inner = l;
    }
    struct ArrowArray a;
    struct ArrowSchema s;
    OK(knut_arrow_builder_finish(inner, &a, &s, &e_));
    knut_arrow_builder_free(inner);
    expect_invalid(&s, &a, 0, "nested deeper than 64");
    struct ArrowSchema copy;
    knut_error e = KNUT_ERROR_INIT;
    assert_int_equal(KNUT_ETOOBIG, knut_arrow_schema_deep_copy(&copy, &s, &e));
    assert_null(copy.release);
    knut_arrow_builder *b;
    assert_int_equal(KNUT_ETOOBIG, knut_arrow_builder_new_from_schema(&b, &s, &e));
    assert_null(b);
    knut_arrow_array_release(&a);
    knut_arrow_schema_release(&s);
}

static void noop_schema_release(struct ArrowSchema *s)
{
    s->release = NULL;
}

static void noop_array_release(struct ArrowArray *a)
{
    a->release = NULL;
}

/*
 * FULL counts the nulls of a bitmap a word at a time: for every start bit
 * 0..71 and length 0..199 (plus a few long ones) over a random bitmap, the
 * count must match a bit-by-bit one, so bits before the offset, after the
 * tail, and in partial head and tail bytes are all excluded. The bitmap is
 * allocated to exactly the bytes the range needs, so a sanitizer build
 * also catches a word load that runs past its end.
 */
static void test_arrow_validate__null_count_unaligned(void **state)
{
    (void)state;
    struct ArrowSchema s = {.format = "c", .name = "x", .release = noop_schema_release};
    static const int64_t long_lens[] = {511, 512, 513, 1000, 4099};
    uint64_t rng = 0x9e3779b97f4a7c15u;
    for (int64_t off = 0; off < 72; off++) {
        for (int64_t li = 0; li < 200 + 5; li++) {
            int64_t len = li < 200 ? li : long_lens[li - 200];
            size_t nbytes = (size_t)((off + len + 7) / 8);
            uint8_t *bits = malloc(nbytes ? nbytes : 1);
            int8_t *values = calloc((size_t)(off + len) + 1, 1);
            assert_non_null(bits);
            assert_non_null(values);
            for (size_t i = 0; i < nbytes; i++) {
                rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
                bits[i] = (uint8_t)rng;
            }
            int64_t nulls = 0;
            for (int64_t i = off; i < off + len; i++)
                nulls += !knut_arrow_bit_get(bits, i);
            const void *buffers[2] = {bits, values};
            struct ArrowArray a = {.length = len, .null_count = nulls, .offset = off,
                                   .n_buffers = 2, .buffers = buffers,
                                   .release = noop_array_release};
            expect_valid(&s, &a, KNUT_ARROW_VALIDATE_FULL);
            char want[96];
            snprintf(want, sizeof want, "but the bitmap has %lld nulls", (long long)nulls);
            if (nulls < len) {
                a.null_count = nulls + 1;
                expect_invalid(&s, &a, KNUT_ARROW_VALIDATE_FULL, want);
            }
            if (nulls > 1) {
                a.null_count = nulls - 1;
                expect_invalid(&s, &a, KNUT_ARROW_VALIDATE_FULL, want);
            }
            free(bits);
            free(values);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arrow_validate__good_arrays_pass),
        cmocka_unit_test(test_arrow_validate__offsets_not_monotonic),
        cmocka_unit_test(test_arrow_validate__offsets_out_of_range),
        cmocka_unit_test(test_arrow_validate__list_offsets_past_child),
        cmocka_unit_test(test_arrow_validate__structure),
        cmocka_unit_test(test_arrow_validate__schema_problems),
        cmocka_unit_test(test_arrow_validate__utf8),
        cmocka_unit_test(test_arrow_validate__depth_limit),
        cmocka_unit_test(test_arrow_validate__null_count_unaligned),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
