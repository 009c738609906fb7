/*
 * Unit tests for typed parameters written by a person
 * (knut_graph_cypher_param, `knut graph query --param`): every value kind
 * re-rendered in FalkorDB's parameter grammar, hostile text kept inside a
 * string literal, and malformed values refused with the parameter named and
 * the output left as it was.
 */
#include "graph_fixture.h"

typedef struct pcase {
    const char *text;
    const char *want; /* rendering, or NULL: refused */
    const char *msg;  /* refused: part of the message */
} pcase;

static void test_graph_cypher_param__table(void **state)
{
    (void)state;
    static const pcase cases[] = {
        {"42", "x=42 ", NULL},
        {"-7", "x=-7 ", NULL},
        {" 5 ", "x=5 ", NULL},
        {"9223372036854775807", "x=9223372036854775807 ", NULL},
        {"9223372036854775808", NULL, "64-bit range"},
        {"2.5", "x=2.5 ", NULL},
        {"-.5", "x=-0.5 ", NULL},
        {"1e3", "x=1000.0 ", NULL},
        {"0.1", "x=0.1 ", NULL},
        {"1e999", NULL, "finite"},
        {"nan", NULL, "strings need quotes"},
        {"true", "x=true ", NULL},
        {"FALSE", "x=false ", NULL},
        {"null", "x=null ", NULL},
        {"nullx", NULL, "strings need quotes"},
        {"'a'", "x='a' ", NULL},
        {"\"it's\"", "x='it\\'s' ", NULL},
        {"'a\\nb\\\\'", "x='a\\nb\\\\' ", NULL},
        {"'x\\q'", NULL, "unknown escape"},
        {"'open", NULL, "unterminated"},
        {"'x\\'}) MATCH (n) DETACH DELETE n //'", "x='x\\'}) MATCH (n) DETACH DELETE n //' ", NULL},
        {"'x'}) MATCH (n) DETACH DELETE n //'", NULL, "unexpected text"},
        {"1 MATCH (n) DELETE n", NULL, "unexpected text"},
        {"'a' 'b'", NULL, "unexpected text"},
        {"[]", "x=[] ", NULL},
        {"[1, 'a', [true, null], 0.5]", "x=[1,'a',[true,null],0.5] ", NULL},
        {"[1,", NULL, "missing value"},
        {"[1 2]", NULL, "expected ',' or ']'"},
        {"{}", "x={} ", NULL},
        {"{k: 1, 'odd key': 'v'}", "x={`k`:1,`odd key`:'v'} ", NULL},
        {"{'a`b': 1}", NULL, "backtick"},
        {"{1: 2}", NULL, "expected a map key"},
        {"{k 1}", NULL, "expected ':'"},
        {"Alice", NULL, "strings need quotes"},
        {"", NULL, "missing value"},
        {"0x10", NULL, "unexpected text"},
        {"1.2.3", NULL, "not a finite number"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        knut_buf b = KNUT_BUF_INIT;
        knut_error err = KNUT_ERROR_INIT;
        knut_buf_puts(&b, "CYPHER ");
        knut_status st = knut_graph_cypher_param(&b, "x", 1, cases[i].text,
                                                 strlen(cases[i].text), &err);
        if (cases[i].want) {
            if (st != KNUT_OK)
                fail_msg("case %zu (%s): %s", i, cases[i].text, err.message);
            assert_string_equal(b.data + 7, cases[i].want);
        } else {
            if (st == KNUT_OK)
                fail_msg("case %zu (%s) accepted as %s", i, cases[i].text, b.data);
            assert_string_equal(b.data, "CYPHER "); /* left as it was */
            assert_non_null(strstr(err.message, "parameter"));
            if (!strstr(err.message, cases[i].msg))
                fail_msg("case %zu: '%s' not in '%s'", i, cases[i].msg, err.message);
        }
        knut_buf_reset(&b);
    }
}

static void test_graph_cypher_param__names(void **state)
{
    (void)state;
    static const char *const good[] = {"a", "_x", "abc_09"};
    static const char *const bad[] = {"", "1a", "a-b", "a b", "`a`", "a=b"};
    knut_error err = KNUT_ERROR_INIT;
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        knut_buf b = KNUT_BUF_INIT;
        assert_int_equal(knut_graph_cypher_param(&b, good[i], strlen(good[i]), "1", 1, &err),
                         KNUT_OK);
        knut_buf_reset(&b);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        knut_buf b = KNUT_BUF_INIT;
        assert_int_equal(knut_graph_cypher_param(&b, bad[i], strlen(bad[i]), "1", 1, &err),
                         KNUT_EINVAL);
        assert_non_null(strstr(err.message, "parameter name"));
        assert_int_equal(b.len, 0);
        knut_buf_reset(&b);
    }
}

static void test_graph_cypher_param__nul_and_depth(void **state)
{
    (void)state;
    knut_buf b = KNUT_BUF_INIT;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_graph_cypher_param(&b, "x", 1, "'a\0b'", 5, &err), KNUT_EINVAL);
    assert_non_null(strstr(err.message, "NUL"));
    char deep[200];
    memset(deep, '[', 100);
    memset(deep + 100, ']', 100);
    assert_int_equal(knut_graph_cypher_param(&b, "x", 1, deep, sizeof deep, &err), KNUT_EINVAL);
    assert_non_null(strstr(err.message, "nested too deeply"));
    assert_int_equal(knut_graph_cypher_param(&b, "x", 1, deep + 70, 60, &err), KNUT_OK);
    knut_buf_reset(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_graph_cypher_param__table),
        cmocka_unit_test(test_graph_cypher_param__names),
        cmocka_unit_test(test_graph_cypher_param__nul_and_depth),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
