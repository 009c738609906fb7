/*
 * Unit tests for the Cypher renderer: the string escaper and identifier
 * quoting (table-driven), every Arrow type as a parameter value (nulls,
 * sliced and nested arrays included), refused values naming row and
 * column, query texts that depend on the shape only, and parameter blocks
 * split by a byte budget.
 */
#include <math.h>
#include <stdio.h>

#include "graph/cypher_int.h"
#include "graph_fixture.h"

/* ---- strings and identifiers ------------------------------------------- */

typedef struct esc_case {
    const char *in;
    size_t len;
    const char *want;
} esc_case;

#define ESC(s, w) {s, sizeof(s) - 1, w}

static void test_graph_cypher__string_escape_table(void **state)
{
    (void)state;
    static const esc_case cases[] = {
        ESC("", "''"),
        ESC("abc", "'abc'"),
        ESC("a'b", "'a\\'b'"),
        ESC("a\"b", "'a\"b'"),
        ESC("a\\b", "'a\\\\b'"),
        ESC("\\'", "'\\\\\\''"),
        ESC("l1\nl2\rl3\tend", "'l1\\nl2\\rl3\\tend'"),
        ESC("\x01\x1f\x7f", "'\x01\x1f\x7f'"),
        ESC("\\u0041\\x41", "'\\\\u0041\\\\x41'"),
        ESC("'}) DETACH DELETE n //", "'\\'}) DETACH DELETE n //'"),
        ESC("$rows }] `x`", "'$rows }] `x`'"),
        ESC("\xc3\xa9\xf0\x9f\x99\x82\xd7\xa9\xe2\x80\xae", "'\xc3\xa9\xf0\x9f\x99\x82\xd7\xa9\xe2\x80\xae'"),
        ESC("\xf4\x8f\xbf\xbf", "'\xf4\x8f\xbf\xbf'"), /* U+10FFFF */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        knut_buf b = KNUT_BUF_INIT;
        OK(knut_graph_cypher_string(&b, cases[i].in, cases[i].len, &e_));
        assert_string_equal(cases[i].want, b.data);
        knut_buf_reset(&b);
    }
}

static void test_graph_cypher__string_refused(void **state)
{
    (void)state;
    static const esc_case bad[] = {
        ESC("a\0b", "NUL byte at byte offset 1"),
        ESC("ok\xff", "not valid UTF-8 at byte offset 2"),
        ESC("\xc0\x80", "not valid UTF-8 at byte offset 0"),      /* overlong NUL */
        ESC("x\xed\xa0\x80", "not valid UTF-8 at byte offset 1"), /* surrogate */
        ESC("\xe2\x82", "not valid UTF-8 at byte offset 0"),      /* truncated */
        ESC("\xf4\x90\x80\x80", "not valid UTF-8 at byte offset 0"), /* > U+10FFFF */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        knut_buf b = KNUT_BUF_INIT;
        knut_error err = KNUT_ERROR_INIT;
        knut_buf_puts(&b, "keep");
        assert_int_equal(KNUT_EINVAL, knut_graph_cypher_string(&b, bad[i].in, bad[i].len, &err));
        fx_expect_msg(&err, bad[i].want, NULL);
        assert_string_equal("keep", b.data); /* out is left as it was */
        knut_buf_reset(&b);
    }
}

static void test_graph_cypher__identifiers(void **state)
{
    (void)state;
    static const esc_case good[] = {
        ESC("name", "`name`"),
        ESC("a b", "`a b`"),
        ESC("it's \"q\" \\", "`it's \"q\" \\`"),
        ESC("line\nbreak", "`line\nbreak`"),
        ESC("\xc3\xbc\xf0\x9f\x99\x82", "`\xc3\xbc\xf0\x9f\x99\x82`"),
        ESC("}) DETACH DELETE n //", "`}) DETACH DELETE n //`"),
    };
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        knut_buf b = KNUT_BUF_INIT;
        OK(knut_graph_cypher_ident(&b, good[i].in, good[i].len, "label", &e_));
        assert_string_equal(good[i].want, b.data);
        knut_buf_reset(&b);
    }
    static const esc_case bad[] = {
        ESC("", "label name is empty"),
        ESC("a`b", "backtick at offset 1"),
        ESC("`) DETACH DELETE n //", "backtick at offset 0"),
        ESC("a\0b", "NUL byte at offset 1"),
        ESC("a\xff", "not valid UTF-8 at offset 1"),
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        knut_buf b = KNUT_BUF_INIT;
        knut_error err = KNUT_ERROR_INIT;
        assert_int_equal(KNUT_EINVAL,
                         knut_graph_cypher_ident(&b, bad[i].in, bad[i].len, "label", &err));
        fx_expect_msg(&err, bad[i].want, NULL);
        assert_int_equal(0, b.len);
        knut_buf_reset(&b);
    }
}

/* ---- scalar values ----------------------------------------------------- */

static void test_graph_cypher__null_bool_ints(void **state)
{
    (void)state;
    fx_arr a;
    knut_arrow_builder *b = fx_col(KNUT_ARROW_BOOL, "c");
    OK(knut_arrow_builder_append_bool(b, 1, &e_));
    OK(knut_arrow_builder_append_bool(b, 0, &e_));
    OK(knut_arrow_builder_append_null(b, &e_));
    fx_finish(&a, b);
    fx_expect_value(&a.view, 0, "true");
    fx_expect_value(&a.view, 1, "false");
    fx_expect_value(&a.view, 2, "null");
    fx_arr_free(&a);

    b = fx_col(KNUT_ARROW_INT8, "c");
    OK(knut_arrow_builder_append_int(b, -128, &e_));
    OK(knut_arrow_builder_append_int(b, 127, &e_));
    fx_finish(&a, b);
    fx_expect_value(&a.view, 0, "-128");
    fx_expect_value(&a.view, 1, "127");
    fx_arr_free(&a);

    b = fx_col(KNUT_ARROW_INT64, "c");
    OK(knut_arrow_builder_append_int(b, INT64_MIN, &e_));
    OK(knut_arrow_builder_append_int(b, INT64_MAX, &e_));
    fx_finish(&a, b);
    fx_expect_value(&a.view, 0, "-9223372036854775808");
    fx_expect_value(&a.view, 1, "9223372036854775807");
    fx_arr_free(&a);

    b = fx_col(KNUT_ARROW_UINT32, "c");
    OK(knut_arrow_builder_append_uint(b, UINT32_MAX, &e_));
    fx_finish(&a, b);
    fx_expect_value(&a.view, 0, "4294967295");
    fx_arr_free(&a);

    b = fx_col(KNUT_ARROW_UINT64, "c");
    OK(knut_arrow_builder_append_uint(b, (uint64_t)INT64_MAX, &e_));
    OK(knut_arrow_builder_append_uint(b, (uint64_t)INT64_MAX + 1, &e_));
    OK(knut_arrow_builder_append_uint(b, UINT64_MAX, &e_));
    fx_finish(&a, b);
    fx_expect_value(&a.view, 0, "9223372036854775807");
    fx_expect_value_error(&a.view, 1, KNUT_EINVAL, "9223372036854775808 is above the int64");
    fx_expect_value_error(&a.view, 2, KNUT_EINVAL, "18446744073709551615");
    fx_arr_free(&a);

    b = fx_col(KNUT_ARROW_NA, "c");
    OK(knut_arrow_builder_append_null(b, &e_));
    fx_finish(&a, b);
    fx_expect_value(&a.view, 0, "null");
    fx_arr_free(&a);
}

static void test_graph_cypher__floats(void **state)
{
    (void)state;
    static const struct {
        double v;
        const char *want;
    } cases[] = {
        {1.5, "1.5"},       {3.0, "3.0"},         {-0.0, "-0.0"},
        {0.1, "0.1"},       {1e300, "1e+300"},    {-2.5e-7, "-2.5e-07"},
        {1.0 / 3.0, "0.3333333333333333"},        {123456789012.0, "123456789012.0"},
        {5e-324, "4.94065645841247e-324"},      {1.7976931348623157e308, "1.7976931348623157e+308"},
    };
    fx_arr a;
    knut_arrow_builder *b = fx_col(KNUT_ARROW_DOUBLE, "c");
    size_t n = sizeof(cases) / sizeof(cases[0]);
    for (size_t i = 0; i < n; i++)
        OK(knut_arrow_builder_append_double(b, cases[i].v, &e_));
    OK(knut_arrow_builder_append_double(b, NAN, &e_));
    OK(knut_arrow_builder_append_double(b, INFINITY, &e_));
    OK(knut_arrow_builder_append_double(b, -INFINITY, &e_));
    fx_finish(&a, b);
    for (size_t i = 0; i < n; i++) {
        fx_expect_value(&a.view, (int64_t)i, cases[i].want);
        knut_status st;
        char *s = fx_value(&a.view, (int64_t)i, "c", &st, NULL);
        assert_true(strtod(s, NULL) == cases[i].v); /* exact round trip */
        free(s);
    }
    fx_expect_value_error(&a.view, (int64_t)n, KNUT_EINVAL, "NaN");
    fx_expect_value(&a.view, (int64_t)n + 1, "1e999");
    fx_expect_value(&a.view, (int64_t)n + 2, "-1e999");
    fx_arr_free(&a);

    /* float32 is widened exactly: the rendered double is the float's value */
    b = fx_col(KNUT_ARROW_FLOAT, "c");
    OK(knut_arrow_builder_append_double(b, 0.5, &e_));
    OK(knut_arrow_builder_append_double(b, 0.1, &e_));
    OK(knut_arrow_builder_append_double(b, NAN, &e_));
    fx_finish(&a, b);
    fx_expect_value(&a.view, 0, "0.5");
    knut_status st;
    char *s = fx_value(&a.view, 1, "c", &st, NULL);
    assert_true(strtod(s, NULL) == (double)0.1f);
    free(s);
    fx_expect_value_error(&a.view, 2, KNUT_EINVAL, "NaN");
    fx_arr_free(&a);

    b = fx_col(KNUT_ARROW_HALF_FLOAT, "c");
    /* 1.0, -2.5, the smallest subnormal, NaN */
    static const uint16_t halves[] = {0x3C00, 0xC100, 0x0001, 0x7E00};
    OK(knut_arrow_builder_append_values(b, halves, 4, NULL, &e_));
    fx_finish(&a, b);
    fx_expect_value(&a.view, 0, "1.0");
    fx_expect_value(&a.view, 1, "-2.5");
    fx_expect_value(&a.view, 2, "5.9604644775390625e-08");
    fx_expect_value_error(&a.view, 3, KNUT_EINVAL, "NaN");
    fx_arr_free(&a);
}

static void test_graph_cypher__string_columns(void **state)
{
    (void)state;
    knut_arrow_type types[] = {KNUT_ARROW_UTF8, KNUT_ARROW_LARGE_UTF8};
    for (int t = 0; t < 2; t++) {
        fx_arr a;
        knut_arrow_builder *b = fx_col(types[t], "c");
        OK(knut_arrow_builder_append_str(b, "it's", &e_));
        OK(knut_arrow_builder_append_null(b, &e_));
        OK(knut_arrow_builder_append_bytes(b, "a\0b", 3, &e_));
        OK(knut_arrow_builder_append_bytes(b, "\xe2\x28\xa1", 3, &e_));
        OK(knut_arrow_builder_append_str(b, "", &e_));
        fx_finish(&a, b);
        fx_expect_value(&a.view, 0, "'it\\'s'");
        fx_expect_value(&a.view, 1, "null");
        fx_expect_value_error(&a.view, 2, KNUT_EINVAL, "NUL byte at offset 1");
        fx_expect_value_error(&a.view, 3, KNUT_EINVAL, "not valid UTF-8 at byte offset 0");
        fx_expect_value(&a.view, 4, "''");
        fx_arr_free(&a);
    }
}

static void test_graph_cypher__dictionary(void **state)
{
    (void)state;
    fx_arr dict, idx;
    knut_arrow_builder *d = fx_col(KNUT_ARROW_UTF8, "c");
    OK(knut_arrow_builder_append_str(d, "red", &e_));
    OK(knut_arrow_builder_append_str(d, "it's blue", &e_));
    fx_finish(&dict, d);
    knut_arrow_view_reset(&dict.view);
    knut_arrow_builder *i = fx_col(KNUT_ARROW_INT8, "c");
    OK(knut_arrow_builder_append_int(i, 1, &e_));
    OK(knut_arrow_builder_append_null(i, &e_));
    OK(knut_arrow_builder_append_int(i, 0, &e_));
    OK(knut_arrow_builder_finish(i, &idx.array, &idx.schema, &e_));
    knut_arrow_builder_free(i);
    /* attach the dictionary by hand, as a foreign producer would */
    struct ArrowSchema *ds = malloc(sizeof(*ds));
    struct ArrowArray *da = malloc(sizeof(*da));
    knut_arrow_schema_move(ds, &dict.schema);
    knut_arrow_array_move(da, &dict.array);
    idx.schema.dictionary = ds;
    idx.array.dictionary = da;
    OK(knut_arrow_view_init(&idx.view, &idx.schema, &idx.array, &e_));
    fx_expect_value(&idx.view, 0, "'it\\'s blue'");
    fx_expect_value(&idx.view, 1, "null");
    fx_expect_value(&idx.view, 2, "'red'");
    knut_arrow_view_reset(&idx.view);
    idx.schema.dictionary = NULL;
    idx.array.dictionary = NULL;
    knut_arrow_schema_release(ds);
    knut_arrow_array_release(da);
    free(ds);
    free(da);
    knut_arrow_array_release(&idx.array);
    knut_arrow_schema_release(&idx.schema);
}

/* ---- temporal ---------------------------------------------------------- */

static void test_graph_cypher__dates_and_times(void **state)
{
    (void)state;
    fx_arr a;
    knut_arrow_builder *b = fx_col(KNUT_ARROW_DATE32, "c");
    int64_t days[] = {0, 18321, -1, -719528, 2932896, -719529, 2932897};
    for (int i = 0; i < 7; i++)
        OK(knut_arrow_builder_append_int(b, days[i], &e_));
    fx_finish(&a, b);
    fx_expect_value(&a.view, 0, "'1970-01-01'");
    fx_expect_value(&a.view, 1, "'2020-02-29'");
    fx_expect_value(&a.view, 2, "'1969-12-31'");
    fx_expect_value(&a.view, 3, "'0000-01-01'");
    fx_expect_value(&a.view, 4, "'9999-12-31'");
    fx_expect_value_error(&a.view, 5, KNUT_EINVAL, "outside years 0000-9999");
    fx_expect_value_error(&a.view, 6, KNUT_EINVAL, "outside years 0000-9999");
    fx_arr_free(&a);

    b = fx_col(KNUT_ARROW_DATE64, "c");
    OK(knut_arrow_builder_append_int(b, -1, &e_)); /* 1 ms before the epoch */
    OK(knut_arrow_builder_append_int(b, INT64_C(951782400000), &e_));
    fx_finish(&a, b);
    fx_expect_value(&a.view, 0, "'1969-12-31'");
    fx_expect_value(&a.view, 1, "'2000-02-29'");
    fx_arr_free(&a);

    b = fx_col_unit(KNUT_ARROW_TIME32, KNUT_ARROW_SECOND, NULL, "c");
    OK(knut_arrow_builder_append_int(b, 3661, &e_));
    OK(knut_arrow_builder_append_int(b, 86400, &e_));
    fx_finish(&a, b);
    fx_expect_value(&a.view, 0, "'01:01:01'");
    fx_expect_value_error(&a.view, 1, KNUT_EINVAL, "outside 00:00-24:00");
    fx_arr_free(&a);

    b = fx_col_unit(KNUT_ARROW_TIME64, KNUT_ARROW_NANO, NULL, "c");
    OK(knut_arrow_builder_append_int(b, INT64_C(86399999999999), &e_));
    OK(knut_arrow_builder_append_int(b, -1, &e_));
    fx_finish(&a, b);
    fx_expect_value(&a.view, 0, "'23:59:59.999999999'");
    fx_expect_value_error(&a.view, 1, KNUT_EINVAL, "outside 00:00-24:00");
    fx_arr_free(&a);
}

static void test_graph_cypher__timestamps(void **state)
{
    (void)state;
    static const struct {
        knut_arrow_time_unit unit;
        const char *tz;
        int64_t v;
        const char *want;
    } cases[] = {
        {KNUT_ARROW_SECOND, NULL, 0, "'1970-01-01T00:00:00'"},
        {KNUT_ARROW_SECOND, "UTC", 1582934400, "'2020-02-29T00:00:00'"},
        /* the zone only says how to display: the value is already UTC */
        {KNUT_ARROW_SECOND, "America/New_York", 1582934400, "'2020-02-29T00:00:00'"},
        {KNUT_ARROW_SECOND, "+05:30", 1582934400, "'2020-02-29T00:00:00'"},
        {KNUT_ARROW_MILLI, NULL, 1500, "'1970-01-01T00:00:01.500'"},
        {KNUT_ARROW_MILLI, NULL, -1001, "'1969-12-31T23:59:58.999'"},
        {KNUT_ARROW_MICRO, "Europe/Oslo", 1577873472123456, "'2020-01-01T10:11:12.123456'"},
        {KNUT_ARROW_NANO, NULL, 1, "'1970-01-01T00:00:00.000000001'"},
        {KNUT_ARROW_NANO, NULL, INT64_MIN, "'1677-09-21T00:12:43.145224192'"},
        {KNUT_ARROW_SECOND, NULL, INT64_C(-62167219200), "'0000-01-01T00:00:00'"},
        {KNUT_ARROW_SECOND, NULL, INT64_C(253402300799), "'9999-12-31T23:59:59'"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        fx_arr a;
        knut_arrow_builder *b =
            fx_col_unit(KNUT_ARROW_TIMESTAMP, cases[i].unit, cases[i].tz, "c");
        OK(knut_arrow_builder_append_int(b, cases[i].v, &e_));
        fx_finish(&a, b);
        fx_expect_value(&a.view, 0, cases[i].want);
        fx_arr_free(&a);
    }
    fx_arr a;
    knut_arrow_builder *b = fx_col_unit(KNUT_ARROW_TIMESTAMP, KNUT_ARROW_MICRO, NULL, "c");
    OK(knut_arrow_builder_append_int(b, -1000000, &e_));  /* 23:59:59 exactly */
    OK(knut_arrow_builder_append_int(b, -1, &e_));        /* 23:59:59.999999 */
    OK(knut_arrow_builder_append_int(b, INT64_C(253402300800000000), &e_)); /* year 10000 */
    OK(knut_arrow_builder_append_int(b, INT64_MIN, &e_));
    fx_finish(&a, b);
    fx_expect_value_error(&a.view, 0, KNUT_EINVAL, "1969-12-31T23:59:59");
    fx_expect_value_error(&a.view, 1, KNUT_EINVAL, "error value");
    fx_expect_value_error(&a.view, 2, KNUT_EINVAL, "outside years 0000-9999");
    fx_expect_value_error(&a.view, 3, KNUT_EINVAL, "outside years 0000-9999");
    fx_arr_free(&a);
}

/* ---- nested ------------------------------------------------------------ */

static void test_graph_cypher__lists(void **state)
{
    (void)state;
    fx_arr a;
    knut_arrow_builder *items = fx_col(KNUT_ARROW_INT64, "item");
    knut_arrow_builder *b = fx_nested(KNUT_ARROW_LIST, "c", 1, items);
    OK(knut_arrow_builder_append_int(items, 1, &e_));
    OK(knut_arrow_builder_append_null(items, &e_));
    OK(knut_arrow_builder_append_int(items, -3, &e_));
    OK(knut_arrow_builder_finish_element(b, &e_));
    OK(knut_arrow_builder_append_empty(b, &e_));
    OK(knut_arrow_builder_append_null(b, &e_));
    OK(knut_arrow_builder_append_int(items, 7, &e_));
    OK(knut_arrow_builder_finish_element(b, &e_));
    fx_finish(&a, b);
    fx_expect_value(&a.view, 0, "[1,null,-3]");
    fx_expect_value(&a.view, 1, "[]");
    fx_expect_value(&a.view, 2, "null");
    fx_expect_value(&a.view, 3, "[7]");
    fx_arr_free(&a);

    /* list<list<utf8>> and list<date32>, large offsets */
    knut_arrow_builder *s = fx_col(KNUT_ARROW_UTF8, "s");
    knut_arrow_builder *inner = fx_nested(KNUT_ARROW_LIST, "inner", 1, s);
    b = fx_nested(KNUT_ARROW_LARGE_LIST, "c", 1, inner);
    OK(knut_arrow_builder_append_str(s, "a'", &e_));
    OK(knut_arrow_builder_finish_element(inner, &e_));
    OK(knut_arrow_builder_append_empty(inner, &e_));
    OK(knut_arrow_builder_finish_element(b, &e_));
    OK(knut_arrow_builder_append_bytes(s, "\0", 1, &e_));
    OK(knut_arrow_builder_finish_element(inner, &e_));
    OK(knut_arrow_builder_finish_element(b, &e_));
    fx_finish(&a, b);
    fx_expect_value(&a.view, 0, "[['a\\''],[]]");
    fx_expect_value_error(&a.view, 1, KNUT_EINVAL, "NUL byte");
    fx_arr_free(&a);

    knut_arrow_builder *d = fx_col(KNUT_ARROW_DATE32, "d");
    b = fx_nested(KNUT_ARROW_LIST, "c", 1, d);
    OK(knut_arrow_builder_append_int(d, 0, &e_));
    OK(knut_arrow_builder_append_int(d, 18321, &e_));
    OK(knut_arrow_builder_finish_element(b, &e_));
    fx_finish(&a, b);
    fx_expect_value(&a.view, 0, "['1970-01-01','2020-02-29']");
    fx_arr_free(&a);
}

static void test_graph_cypher__structs_and_maps(void **state)
{
    (void)state;
    fx_arr a;
    knut_arrow_builder *x = fx_col(KNUT_ARROW_INT32, "x");
    knut_arrow_builder *y = fx_col(KNUT_ARROW_UTF8, "y z'");
    knut_arrow_builder *b = fx_nested(KNUT_ARROW_STRUCT, "c", 2, x, y);
    OK(knut_arrow_builder_append_int(x, 1, &e_));
    OK(knut_arrow_builder_append_str(y, "v", &e_));
    OK(knut_arrow_builder_finish_element(b, &e_));
    OK(knut_arrow_builder_append_null(b, &e_));
    OK(knut_arrow_builder_append_null(x, &e_));
    OK(knut_arrow_builder_append_str(y, "}]", &e_));
    OK(knut_arrow_builder_finish_element(b, &e_));
    fx_finish(&a, b);
    fx_expect_value(&a.view, 0, "{`x`:1,`y z'`:'v'}");
    fx_expect_value(&a.view, 1, "null");
    fx_expect_value(&a.view, 2, "{`x`:null,`y z'`:'}]'}");
    fx_arr_free(&a);

    x = fx_col(KNUT_ARROW_INT32, "a`b");
    b = fx_nested(KNUT_ARROW_STRUCT, "c", 1, x);
    OK(knut_arrow_builder_append_int(x, 1, &e_));
    OK(knut_arrow_builder_finish_element(b, &e_));
    fx_finish(&a, b);
    fx_expect_value_error(&a.view, 0, KNUT_EINVAL, "backtick");
    fx_arr_free(&a);

    knut_arrow_builder *k = fx_col(KNUT_ARROW_UTF8, "key");
    knut_arrow_builder *v = fx_col(KNUT_ARROW_DOUBLE, "value");
    knut_arrow_builder *entries = fx_nested(KNUT_ARROW_STRUCT, "entries", 2, k, v);
    b = fx_nested(KNUT_ARROW_MAP, "c", 1, entries);
    OK(knut_arrow_builder_append_str(k, "w", &e_));
    OK(knut_arrow_builder_append_double(v, 2.0, &e_));
    OK(knut_arrow_builder_finish_element(entries, &e_));
    OK(knut_arrow_builder_append_str(k, "a b", &e_));
    OK(knut_arrow_builder_append_null(v, &e_));
    OK(knut_arrow_builder_finish_element(entries, &e_));
    OK(knut_arrow_builder_finish_element(b, &e_));
    OK(knut_arrow_builder_append_empty(b, &e_));
    fx_finish(&a, b);
    fx_expect_value(&a.view, 0, "{`w`:2.0,`a b`:null}");
    fx_expect_value(&a.view, 1, "{}");
    fx_arr_free(&a);
}

static void slice_release(struct ArrowArray *x)
{
    x->release = NULL;
}

static void test_graph_cypher__sliced(void **state)
{
    (void)state;
    fx_arr a;
    knut_arrow_builder *items = fx_col(KNUT_ARROW_UTF8, "item");
    knut_arrow_builder *b = fx_nested(KNUT_ARROW_LIST, "c", 1, items);
    for (int i = 0; i < 6; i++) {
        char s[8];
        snprintf(s, sizeof(s), "s%d", i % 10);
        OK(knut_arrow_builder_append_str(items, s, &e_));
        if (i % 2 == 1)
            OK(knut_arrow_builder_finish_element(b, &e_)); /* [s0,s1] [s2,s3] [s4,s5] */
    }
    fx_finish(&a, b);
    knut_arrow_view_reset(&a.view);
    struct ArrowArray sl = a.array;
    sl.offset = 1;
    sl.length = 2;
    sl.release = slice_release;
    knut_arrow_view v;
    OK(knut_arrow_view_init(&v, &a.schema, &sl, &e_));
    fx_expect_value(&v, 0, "['s2','s3']");
    fx_expect_value(&v, 1, "['s4','s5']");
    knut_arrow_view_reset(&v);
    knut_arrow_array_release(&a.array);
    knut_arrow_schema_release(&a.schema);
}

static void test_graph_cypher__unsupported(void **state)
{
    (void)state;
    fx_arr a;
    knut_arrow_builder *b = fx_col(KNUT_ARROW_BINARY, "c");
    OK(knut_arrow_builder_append_bytes(b, "\x00\x01", 2, &e_));
    fx_finish(&a, b);
    fx_expect_value_error(&a.view, 0, KNUT_EUNSUPPORTED, "binary values have no FalkorDB");
    fx_arr_free(&a);

    b = fx_col_unit(KNUT_ARROW_DURATION, KNUT_ARROW_SECOND, NULL, "c");
    OK(knut_arrow_builder_append_int(b, 5, &e_));
    fx_finish(&a, b);
    fx_expect_value_error(&a.view, 0, KNUT_EUNSUPPORTED, "duration");
    fx_arr_free(&a);
}

/* DECIMAL: scale 0 and at most 18 digits is the integer it holds; any
 * other has no exact FalkorDB form and is refused, never rounded. */
static knut_arrow_builder *decimal_col(int32_t precision, int32_t scale)
{
    knut_arrow_type_info t;
    knut_arrow_builder *b = NULL;
    knut_arrow_type_info_init(&t, KNUT_ARROW_DECIMAL128);
    t.precision = precision;
    t.scale = scale;
    t.byte_width = 16;
    OK(knut_arrow_builder_new(&b, &t, "d", &e_));
    return b;
}

static void put_dec(knut_arrow_builder *b, int64_t v)
{
    uint8_t bytes[16];
    uint64_t u = (uint64_t)v;
    for (int i = 0; i < 16; i++)
        bytes[i] = i < 8 ? (uint8_t)(u >> (8 * i)) : (v < 0 ? 0xff : 0);
    OK(knut_arrow_builder_append_fixed(b, bytes, &e_));
}

static void test_graph_cypher__decimals(void **state)
{
    (void)state;
    knut_error perr = KNUT_ERROR_INIT;
    fx_arr a;
    knut_arrow_builder *b = decimal_col(18, 0);
    put_dec(b, 42);
    put_dec(b, -7);
    put_dec(b, 999999999999999999LL);
    OK(knut_arrow_builder_append_null(b, &e_));
    fx_finish(&a, b);
    fx_expect_value(&a.view, 0, "42");
    fx_expect_value(&a.view, 1, "-7");
    fx_expect_value(&a.view, 2, "999999999999999999");
    fx_expect_value(&a.view, 3, "null");
    knut_graph_conv conv;
    assert_int_equal(KNUT_OK, knut_graph__prop_type(&a.schema, &conv, &perr));
    fx_arr_free(&a);

    b = decimal_col(10, 2);
    put_dec(b, 1234);
    fx_finish(&a, b);
    fx_expect_value_error(&a.view, 0, KNUT_EINVAL, "decimal(10,2) has no exact FalkorDB form");
    assert_int_equal(KNUT_EUNSUPPORTED, knut_graph__prop_type(&a.schema, &conv, &perr));
    assert_non_null(strstr(perr.message, "cannot be stored in FalkorDB without loss"));
    fx_arr_free(&a);

    b = decimal_col(19, 0); /* may not fit int64 */
    put_dec(b, 1);
    fx_finish(&a, b);
    assert_int_equal(KNUT_EUNSUPPORTED, knut_graph__prop_type(&a.schema, &conv, &perr));
    fx_arr_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_graph_cypher__string_escape_table),
        cmocka_unit_test(test_graph_cypher__string_refused),
        cmocka_unit_test(test_graph_cypher__identifiers),
        cmocka_unit_test(test_graph_cypher__null_bool_ints),
        cmocka_unit_test(test_graph_cypher__floats),
        cmocka_unit_test(test_graph_cypher__string_columns),
        cmocka_unit_test(test_graph_cypher__dictionary),
        cmocka_unit_test(test_graph_cypher__dates_and_times),
        cmocka_unit_test(test_graph_cypher__timestamps),
        cmocka_unit_test(test_graph_cypher__lists),
        cmocka_unit_test(test_graph_cypher__structs_and_maps),
        cmocka_unit_test(test_graph_cypher__sliced),
        cmocka_unit_test(test_graph_cypher__unsupported),
        cmocka_unit_test(test_graph_cypher__decimals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
