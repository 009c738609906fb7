/*
 * knut_duck_ident and knut_duck_literal: the exact bytes (quotes doubled,
 * empty, non-ASCII, a long run), the refusals (NULL name, a NUL byte in a
 * literal) through the buffer's sticky error, the buffer's cap, and that
 * DuckDB reads back the very name and text that went in.
 */
#include "duck_fixture.h"

#include <stdio.h>

static void expect(knut_status st, const knut_buf *b, const char *want)
{
    assert_int_equal(st, KNUT_OK);
    assert_int_equal(b->error, KNUT_OK);
    assert_string_equal(b->data, want);
}

static void test_ident_bytes(void **state)
{
    (void)state;
    knut_buf b = KNUT_BUF_INIT;
    expect(knut_duck_ident(&b, "people"), &b, "\"people\"");
    knut_buf_clear(&b);
    expect(knut_duck_ident(&b, ""), &b, "\"\"");
    knut_buf_clear(&b);
    expect(knut_duck_ident(&b, "a\"b"), &b, "\"a\"\"b\"");
    knut_buf_clear(&b);
    expect(knut_duck_ident(&b, "\"\""), &b, "\"\"\"\"\"\"");
    knut_buf_clear(&b);
    expect(knut_duck_ident(&b, "it's"), &b, "\"it's\""); /* single quotes stay single */
    knut_buf_clear(&b);
    expect(knut_duck_ident(&b, "gr\xc3\xb6\xc3\x9f" "e \xe2\x9c\x93"), &b,
           "\"gr\xc3\xb6\xc3\x9f" "e \xe2\x9c\x93\"");
    knut_buf_clear(&b);
    /* appends after what is there */
    knut_buf_puts(&b, "SELECT ");
    expect(knut_duck_ident(&b, "x"), &b, "SELECT \"x\"");
    knut_buf_reset(&b);
}

static void test_literal_bytes(void **state)
{
    (void)state;
    knut_buf b = KNUT_BUF_INIT;
    expect(knut_duck_literal(&b, "a.csv", 5), &b, "'a.csv'");
    knut_buf_clear(&b);
    expect(knut_duck_literal(&b, "", 0), &b, "''");
    knut_buf_clear(&b);
    expect(knut_duck_literal(&b, NULL, 0), &b, "''");
    knut_buf_clear(&b);
    expect(knut_duck_literal(&b, "O'Brien's", 9), &b, "'O''Brien''s'");
    knut_buf_clear(&b);
    expect(knut_duck_literal(&b, "''", 2), &b, "''''''");
    knut_buf_clear(&b);
    expect(knut_duck_literal(&b, "say \"hi\"", 8), &b, "'say \"hi\"'");
    knut_buf_clear(&b);
    expect(knut_duck_literal(&b, "abcdef", 3), &b, "'abc'"); /* len, not the NUL, ends it */
    knut_buf_clear(&b);
    expect(knut_duck_literal(&b, "/d/\xc3\xa9t\xc3\xa9.csv", 12), &b,
           "'/d/\xc3\xa9t\xc3\xa9.csv'");
    knut_buf_reset(&b);
}

static void test_refused(void **state)
{
    (void)state;
    knut_buf b = KNUT_BUF_INIT;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_duck_literal(&b, "a\0b", 3), KNUT_EINVAL);
    assert_int_equal(b.len, 0); /* nothing appended */
    assert_int_equal(knut_buf_check(&b, &err), KNUT_EINVAL);
    /* sticky: later appends are ignored, the error stays */
    assert_int_equal(knut_duck_ident(&b, "x"), KNUT_EINVAL);
    assert_int_equal(b.len, 0);
    knut_buf_reset(&b);

    assert_int_equal(knut_duck_literal(&b, NULL, 1), KNUT_EINVAL);
    knut_buf_reset(&b);
    assert_int_equal(knut_duck_ident(&b, NULL), KNUT_EINVAL);
    knut_buf_reset(&b);
    assert_int_equal(knut_duck_ident(NULL, "x"), KNUT_EINVAL);
    assert_int_equal(knut_duck_literal(NULL, "x", 1), KNUT_EINVAL);

    /* the buffer's cap holds: "abc" needs 5 bytes quoted */
    knut_buf_init(&b, 4);
    assert_int_equal(knut_duck_literal(&b, "abc", 3), KNUT_ETOOBIG);
    assert_int_equal(knut_buf_check(&b, &err), KNUT_ETOOBIG);
    knut_buf_reset(&b);
}

/* A long text of quotes and plain runs: every quote doubled, nothing lost. */
static void test_long(void **state)
{
    (void)state;
    size_t n = 1 << 20;
    char *s = malloc(n + 1);
    assert_non_null(s);
    size_t quotes = 0;
    for (size_t i = 0; i < n; i++) {
        s[i] = i % 97 == 0 ? '\'' : i % 89 == 0 ? '"' : (char)('a' + i % 26);
        quotes += s[i] == '\'';
    }
    s[n] = '\0';
    knut_buf b = KNUT_BUF_INIT;
    assert_int_equal(knut_duck_literal(&b, s, n), KNUT_OK);
    assert_int_equal(b.len, n + quotes + 2);
    size_t j = 1;
    for (size_t i = 0; i < n; i++) {
        assert_true(b.data[j] == s[i]);
        j += s[i] == '\'' ? 2 : 1;
    }
    knut_buf_reset(&b);
    free(s);
}

/* DuckDB parses what was written back into the same name and text. */
static void test_duckdb_reads_them_back(void **state)
{
    fixture *f = *state;
    static const char *const texts[] = {"plain", "", "O'Brien", "''", "a\"b\"\"c",
                                        "gr\xc3\xb6\xc3\x9f" "e \xe2\x9c\x93 \xf0\x9f\x90\x98",
                                        "select", "line\nbreak"};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        knut_buf sql = KNUT_BUF_INIT;
        knut_buf_puts(&sql, "SELECT ");
        knut_duck_literal(&sql, texts[i], strlen(texts[i]));
        knut_buf_puts(&sql, " AS ");
        /* DuckDB refuses a zero-length identifier; the empty name is tested above */
        knut_duck_ident(&sql, texts[i][0] ? texts[i] : "empty");
        knut_error err = KNUT_ERROR_INIT;
        assert_int_equal(knut_buf_check(&sql, &err), KNUT_OK);
        struct ArrowArrayStream st;
        batch bt;
        query_first(f->conn, sql.data, &st, &bt);
        assert_string_equal(bt.schema.children[0]->name, texts[i][0] ? texts[i] : "empty");
        assert_str_at(col(&bt, 0), 0, texts[i]);
        batch_reset(&bt);
        st.release(&st);
        knut_buf_reset(&sql);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ident_bytes),
        cmocka_unit_test(test_literal_bytes),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_long),
        cmocka_unit_test_setup_teardown(test_duckdb_reads_them_back, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
