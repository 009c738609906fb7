/*
 * Unit tests for the "did you mean" of config keys (src/core/suggest.c)
 * and the key positions of config nodes (knut_conf_key_line/col).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "knut/core.h"

static const char *const keys[] = {"path", "format", "mode", "sql", "vertices", "edges",
                                   "fk_edges", "missing_endpoints", NULL};

static void test_core_suggest__typos_find_the_key(void **state)
{
    (void)state;
    assert_string_equal(knut_str_suggest("mdoe", keys), "mode");       /* a swap */
    assert_string_equal(knut_str_suggest("pth", keys), "path");        /* a deletion */
    assert_string_equal(knut_str_suggest("formatt", keys), "format");  /* an insertion */
    assert_string_equal(knut_str_suggest("vertexes", keys), "vertices");
    assert_string_equal(knut_str_suggest("missing_endpoint", keys), "missing_endpoints");
}

static void test_core_suggest__nothing_close_is_null(void **state)
{
    (void)state;
    assert_null(knut_str_suggest("zzz", keys));
    assert_null(knut_str_suggest("q", keys));
    assert_null(knut_str_suggest("completely_different", keys));
    assert_null(knut_str_suggest(NULL, keys));
    assert_null(knut_str_suggest("mode", NULL));
    char long_name[200];
    memset(long_name, 'a', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    assert_null(knut_str_suggest(long_name, keys)); /* too long to compare: no hint */
}

static void test_core_suggest__the_closest_wins(void **state)
{
    (void)state;
    static const char *const c[] = {"edges", "fk_edges", NULL};
    assert_string_equal(knut_str_suggest("edge", c), "edges");
    assert_string_equal(knut_str_suggest("fk_edge", c), "fk_edges");
}

static void test_core_suggest__key_positions(void **state)
{
    (void)state;
    knut_conf *root = NULL;
    knut_error err = KNUT_ERROR_INIT;
    const char *y = "a: 1\nouter:\n  mdoe:\n    deep: x\n";
    assert_int_equal(knut_conf_load_yaml(&root, y, strlen(y), "t.yml", &err), KNUT_OK);
    const knut_conf *outer = knut_conf_get(root, "outer");
    const knut_conf *v = knut_conf_get(outer, "mdoe");
    assert_non_null(v);
    assert_int_equal(knut_conf_key_line(v), 3); /* the key's own line */
    assert_int_equal(knut_conf_key_col(v), 3);
    assert_int_equal(knut_conf_line(v), 4);      /* its value starts below */
    assert_int_equal(knut_conf_key_line(root), 0); /* not a map value */
    assert_int_equal(knut_conf_key_line(NULL), 0);
    knut_conf_free(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_core_suggest__typos_find_the_key),
        cmocka_unit_test(test_core_suggest__nothing_close_is_null),
        cmocka_unit_test(test_core_suggest__the_closest_wins),
        cmocka_unit_test(test_core_suggest__key_positions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
