/*
 * The serve part's auth pieces without a server: the auth file (its mode,
 * each directive, errors that name the line and never the secret), the
 * tokens of the environment, table patterns and the allow-list, and the
 * parser of the table names DuckDB's binder reports.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "serve/serve_int.h"

static char path[64];

static void write_file(const char *text, mode_t mode)
{
    snprintf(path, sizeof path, "/tmp/knut-authz-%d.auth", (int)getpid());
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    assert_int_equal(chmod(path, mode), 0);
}

static knut_status load(knut_serve__auth *a, const char *text, mode_t mode, const char *tokens,
                        knut_error *err)
{
    knut_serve_options o = KNUT_SERVE_OPTIONS_INIT;
    if (text) {
        write_file(text, mode);
        o.auth_file = path;
    }
    o.auth_tokens = tokens;
    knut_status st = knut_serve__auth_load(a, &o, err);
    if (text)
        unlink(path);
    return st;
}

static void test_file_directives(void **state)
{
    (void)state;
    knut_serve__auth a;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(load(&a, "# comment\n"
                              "token alice t1\ntoken alice t2   # rotation\r\n"
                              "user bob pw\n"
                              "user dave pbkdf2-sha256$1000$salt$"
                              "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n"
                              "\n  allow \"CN=x y,O=z\" main.* graph.knows\n",
                          0600, "erin:e1 e2", &err),
                     KNUT_OK);
    assert_true(a.on);
    assert_int_equal(a.n_tokens, 4);
    assert_string_equal(a.tokens[1].name, "alice");
    assert_string_equal(a.tokens[2].name, "erin");
    assert_string_equal(a.tokens[3].name, "token"); /* no NAME: given */
    assert_int_equal(a.n_users, 2);
    assert_int_equal(a.users[0].iterations, 0);
    assert_int_equal(a.users[1].iterations, 1000);
    assert_string_equal(a.users[1].salt, "salt");
    assert_int_equal(a.n_rules, 1);
    assert_string_equal(a.rules[0].ident, "CN=x y,O=z");
    assert_int_equal(a.rules[0].n, 2);
    knut_serve__auth_free(&a);
}

static void test_file_errors(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        mode_t mode;
        const char *want;
    } cases[] = {
        {"token alice hunter2\n", 0640, "chmod 600"},
        {"token alice hunter2\n", 0604, "chmod 600"},
        {"token alice\n", 0600, "line 1"},
        {"\ntoken alice hunter2 more\n", 0600, "line 2"},
        {"user dave pbkdf2-sha256$0$salt$00\n", 0600, "pbkdf2-sha256$ITERATIONS"},
        {"user dave pbkdf2-sha256$10$$00\n", 0600, "pbkdf2-sha256$ITERATIONS"},
        {"allow bob\n", 0600, "allow IDENTITY PATTERN"},
        {"allow bob a.b.c.d\n", 0600, "table pattern"},
        {"allow bob .x\n", 0600, "table pattern"},
        {"token \"alice hunter2\n", 0600, "unclosed quote"},
        {"hunter2\n", 0600, "unknown directive"},
        {"allow bob people\n", 0600, "nobody could connect"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        knut_serve__auth a;
        knut_error err = KNUT_ERROR_INIT;
        assert_int_not_equal(load(&a, cases[i].text, cases[i].mode, NULL, &err), KNUT_OK);
        if (!strstr(err.message, cases[i].want))
            fail_msg("case %zu: '%s' lacks '%s'", i, err.message, cases[i].want);
        if (strstr(err.message, "hunter2")) /* the line's content is never quoted */
            fail_msg("case %zu: a secret in '%s'", i, err.message);
        knut_serve__auth_free(&a);
    }
    knut_serve__auth a;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(load(&a, NULL, 0, "bad name:x", &err), KNUT_OK); /* blanks split */
    knut_serve__auth_free(&a);
    assert_int_equal(load(&a, NULL, 0, "alice:", &err), KNUT_EINVAL);
    knut_serve__auth_free(&a);
    /* nothing given: off */
    assert_int_equal(load(&a, NULL, 0, NULL, &err), KNUT_OK);
    assert_false(a.on);
    knut_serve__auth_free(&a);
}

static void test_allow_list(void **state)
{
    (void)state;
    knut_serve__auth a;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(load(&a, "token x y\nallow bob main.peo* graph.*\nallow * public\n"
                              "allow root *.*\nallow cat store.vault.keys\n",
                          0600, NULL, &err),
                     KNUT_OK);
    knut_serve__who bob = {&a, "bob", 0, 0, NULL, 0}, root = {&a, "root", 0, 0, NULL, 0},
                    cat = {&a, "cat", 0, 0, NULL, 0}, nobody = {&a, "nobody", 0, 0, NULL, 0};
    assert_false(knut_serve__authz_full(&bob));
    assert_true(knut_serve__authz_full(&root));
    assert_true(knut_serve__authz_table(&bob, "store", "main", "people"));
    assert_true(knut_serve__authz_table(&bob, "store", "MAIN", "PEOPLE")); /* as DuckDB */
    assert_true(knut_serve__authz_table(&bob, "other", "main", "peo"));
    assert_false(knut_serve__authz_table(&bob, "store", "main", "secret"));
    assert_true(knut_serve__authz_table(&bob, "store", "graph", "knows"));
    assert_false(knut_serve__authz_table(&bob, "store", "graphs", "knows"));
    assert_true(knut_serve__authz_table(&bob, "store", "x", "public")); /* "*" lines */
    assert_true(knut_serve__authz_table(&nobody, "store", "main", "public"));
    assert_false(knut_serve__authz_table(&nobody, "store", "main", "people"));
    assert_true(knut_serve__authz_table(&cat, "store", "vault", "keys"));
    assert_false(knut_serve__authz_table(&cat, "other", "vault", "keys"));
    knut_serve__auth_free(&a);
    /* no allow line: everything */
    assert_int_equal(load(&a, "token x y\n", 0600, NULL, &err), KNUT_OK);
    knut_serve__who x = {&a, "x", 0, 0, NULL, 0};
    assert_true(knut_serve__authz_full(&x));
    knut_serve__auth_free(&a);
}

static void test_name_parse(void **state)
{
    (void)state;
    char p[3][KNUT_SERVE__MAX_IDENT];
    assert_int_equal(knut_serve__name_parse("people", p), 1);
    assert_string_equal(p[0], "people");
    assert_int_equal(knut_serve__name_parse("graph.knows AS k", p), 2);
    assert_string_equal(p[0], "graph");
    assert_string_equal(p[1], "knows");
    assert_int_equal(knut_serve__name_parse("store.\"my schema\".\"a\"\"b.c\"", p), 3);
    assert_string_equal(p[1], "my schema");
    assert_string_equal(p[2], "a\"b.c");
    assert_int_equal(knut_serve__name_parse("\"a.b\" AS \"x y\"", p), 1);
    assert_string_equal(p[0], "a.b");
    static const char *const bad[] = {"", ".", "a.", ".a", "a.b.c.d", "\"open", "a b",
                                      "a\"b\"", "\"\""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (knut_serve__name_parse(bad[i], p) >= 0)
            fail_msg("'%s' parsed", bad[i]);
    assert_int_equal(knut_serve__pattern_check("*"), 0);
    assert_int_equal(knut_serve__pattern_check("c.s.t*"), 0);
    assert_int_equal(knut_serve__pattern_check("a..b"), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_file_directives),
        cmocka_unit_test(test_file_errors),
        cmocka_unit_test(test_allow_list),
        cmocka_unit_test(test_name_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
