/*
 * Unit tests for Arrow format strings (parse/print round trips and
 * rejects) and the schema helpers: malloc-owned nodes, children, names,
 * metadata blobs, deep copies and move/release semantics.
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

/* ---- format strings ---------------------------------------------------- */

static void test_arrow_schema__format_round_trip(void **state)
{
    (void)state;
    static const char *const formats[] = {
        "n", "b", "c", "C", "s", "S", "i", "I", "l", "L", "e", "f", "g", "u", "U", "z", "Z",
        "w:16", "d:38,10", "d:5,-2", "tdD", "tdm", "tts", "ttm", "ttu", "ttn", "tss:", "tsm:",
        "tsu:UTC", "tsn:Europe/Paris", "tDs", "tDn", "tiM", "tiD", "tin", "+l", "+L", "+s", "+m",
    };
    for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
        knut_arrow_type_info t;
        char buf[128];
        knut_error e = KNUT_ERROR_INIT;
        assert_int_equal(KNUT_OK, knut_arrow_format_parse(formats[i], &t, &e));
        assert_int_equal(KNUT_OK, knut_arrow_format_print(&t, buf, sizeof(buf), &e));
        assert_string_equal(formats[i], buf);
    }
    knut_arrow_type_info t;
    assert_int_equal(KNUT_OK, knut_arrow_format_parse("tsu:UTC", &t, NULL));
    assert_int_equal(KNUT_ARROW_TIMESTAMP, t.type);
    assert_int_equal(KNUT_ARROW_MICRO, t.unit);
    assert_string_equal("UTC", t.timezone);
    assert_int_equal(8, t.byte_width);
    assert_int_equal(KNUT_OK, knut_arrow_format_parse("tsn", &t, NULL)); /* colon optional */
    assert_int_equal(KNUT_ARROW_NANO, t.unit);
    assert_string_equal("", t.timezone);
    assert_int_equal(KNUT_OK, knut_arrow_format_parse("d:38,10,128", &t, NULL));
    assert_int_equal(38, t.precision);
    assert_int_equal(10, t.scale);
    assert_int_equal(KNUT_OK, knut_arrow_format_parse("w:3", &t, NULL));
    assert_int_equal(3, t.byte_width);
}

static void test_arrow_schema__format_rejects(void **state)
{
    (void)state;
    static const char *const bad[] = {"", "x", "ll", "w:", "w:0", "w:-1", "d:", "d:10",
                                      "tdX", "ttx", "tsx:", "tsu!UTC", "tt", "tiX", "d:a,b"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        knut_arrow_type_info t;
        knut_error e = KNUT_ERROR_INIT;
        assert_int_equal(KNUT_EINVAL, knut_arrow_format_parse(bad[i], &t, &e));
        assert_non_null(strstr(e.message, "format"));
    }
    knut_arrow_type_info t;
    assert_int_equal(KNUT_EUNSUPPORTED, knut_arrow_format_parse("+us:0,1", &t, NULL));
    assert_int_equal(KNUT_EUNSUPPORTED, knut_arrow_format_parse("vu", &t, NULL));
    assert_int_equal(KNUT_EUNSUPPORTED, knut_arrow_format_parse("d:76,2,256", &t, NULL));
    /* A too-small print buffer is reported, not overflowed. */
    char small[3];
    knut_arrow_type_info_init(&t, KNUT_ARROW_TIMESTAMP);
    assert_int_equal(KNUT_ETOOBIG, knut_arrow_format_print(&t, small, sizeof(small), NULL));
    /* time32 cannot be in microseconds. */
    knut_arrow_type_info_init(&t, KNUT_ARROW_TIME32);
    t.unit = KNUT_ARROW_MICRO;
    char buf[32];
    assert_int_equal(KNUT_EINVAL, knut_arrow_format_print(&t, buf, sizeof(buf), NULL));
}

/* ---- schema helpers ---------------------------------------------------- */

static void test_arrow_schema__schema_helpers(void **state)
{
    (void)state;
    struct ArrowSchema root, child, copy;
    char *md;
    const char *keys[] = {"k1", "owner"};
    const char *vals[] = {"", "knut"};
    OK(knut_arrow_schema_init(&root, "+s", "", 0, 2, &e_));
    OK(knut_arrow_schema_init(&child, "l", "a", ARROW_FLAG_NULLABLE, 0, &e_));
    OK(knut_arrow_schema_set_child(&root, 0, &child, &e_));
    assert_null(child.release);
    OK(knut_arrow_schema_init(&child, "tsu:UTC", "b", 0, 0, &e_));
    assert_int_equal(KNUT_EINVAL, knut_arrow_schema_set_child(&root, 5, &child, NULL));
    assert_null(child.release); /* released on failure: ownership was taken */
    OK(knut_arrow_schema_init(&child, "tsu:UTC", "b", 0, 0, &e_));
    OK(knut_arrow_schema_set_child(&root, 1, &child, &e_));
    OK(knut_arrow_metadata_build(&md, keys, vals, 2, &e_));
    OK(knut_arrow_schema_set_metadata(&root, md, &e_));
    free(md);
    OK(knut_arrow_schema_set_name(&root, "batch", &e_));

    OK(knut_arrow_schema_deep_copy(&copy, &root, &e_));
    knut_arrow_schema_release(&root);
    assert_null(root.release);
    assert_string_equal("batch", copy.name);
    assert_int_equal(2, copy.n_children);
    assert_string_equal("tsu:UTC", copy.children[1]->format);
    assert_string_equal("a", copy.children[0]->name);
    assert_int_equal(ARROW_FLAG_NULLABLE, copy.children[0]->flags);
    const char *v;
    int32_t vlen;
    assert_true(knut_arrow_metadata_get(copy.metadata, "owner", &v, &vlen));
    assert_int_equal(4, vlen);
    assert_memory_equal("knut", v, 4);
    assert_true(knut_arrow_metadata_get(copy.metadata, "k1", &v, &vlen));
    assert_int_equal(0, vlen);
    assert_false(knut_arrow_metadata_get(copy.metadata, "nope", &v, &vlen));
    assert_int_equal(4 + (4 + 2 + 4 + 0) + (4 + 5 + 4 + 4), knut_arrow_metadata_size(copy.metadata));
    knut_arrow_type_info t;
    OK(knut_arrow_schema_parse_type(&copy, &t, &e_));
    assert_int_equal(KNUT_ARROW_STRUCT, t.type);

    struct ArrowSchema moved;
    knut_arrow_schema_move(&moved, &copy);
    assert_null(copy.release);
    knut_arrow_schema_release(&moved);
    knut_arrow_schema_release(&moved);
    knut_arrow_schema_release(NULL);

    /* parse_type checks children counts */
    struct ArrowSchema bad;
    OK(knut_arrow_schema_init(&bad, "+l", "l", 0, 0, &e_));
    knut_error e = KNUT_ERROR_INIT;
    assert_int_equal(KNUT_EINVAL, knut_arrow_schema_parse_type(&bad, &t, &e));
    assert_non_null(strstr(e.message, "children"));
    knut_arrow_schema_release(&bad);
    assert_string_equal("timestamp", knut_arrow_type_name(KNUT_ARROW_TIMESTAMP));
}

/* put_metadata replaces pairs of the same key, keeps the others in order
 * and appends the new ones. */
static void test_arrow_schema__put_metadata(void **state)
{
    (void)state;
    struct ArrowSchema s;
    const char *k0[] = {"a", "b"}, *v0[] = {"1", "2"};
    const char *k1[] = {"b", "c"}, *v1[] = {"22", ""};
    OK(knut_arrow_schema_init(&s, "i", "x", 0, 0, &e_));
    OK(knut_arrow_schema_put_metadata(&s, k0, v0, 2, &e_)); /* onto no metadata */
    OK(knut_arrow_schema_put_metadata(&s, k1, v1, 2, &e_));
    knut_arrow_metadata_reader r;
    const char *k, *v;
    int32_t kl, vl, n = 0;
    const char *want[][2] = {{"a", "1"}, {"b", "22"}, {"c", ""}};
    knut_arrow_metadata_reader_init(&r, s.metadata);
    while (knut_arrow_metadata_next(&r, &k, &kl, &v, &vl)) {
        assert_true(n < 3);
        assert_int_equal(strlen(want[n][0]), kl);
        assert_memory_equal(want[n][0], k, (size_t)kl);
        assert_int_equal(strlen(want[n][1]), vl);
        assert_memory_equal(want[n][1], v, (size_t)vl);
        n++;
    }
    assert_int_equal(3, n);
    assert_int_equal(4 + 3 * 8 + 2 + 3 + 1, knut_arrow_metadata_size(s.metadata));
    knut_arrow_schema_release(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arrow_schema__format_round_trip),
        cmocka_unit_test(test_arrow_schema__format_rejects),
        cmocka_unit_test(test_arrow_schema__schema_helpers),
        cmocka_unit_test(test_arrow_schema__put_metadata),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
