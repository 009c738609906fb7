/*
 * The schemas of a prepared statement without running it: result columns
 * equal what the result stream carries, parameters are one child per
 * placeholder; a statement with side effects does not run.
 */
#include "duck_fixture.h"

static void test_duck_stmt_schema_matches_stream(void **state)
{
    fixture *f = *state;
    knut_error err = KNUT_ERROR_INIT;
    knut_duck_stmt *stmt = NULL;
    assert_int_equal(knut_duck_exec(f->conn, "CREATE TABLE t (a INTEGER, b VARCHAR, c DOUBLE)",
                                    &err), KNUT_OK);
    assert_int_equal(knut_duck_stmt_prepare(&stmt, f->conn,
                                            "SELECT a, b AS name, c * 2 AS c2 FROM t WHERE a > $1",
                                            &err), KNUT_OK);
    struct ArrowSchema s, p, fromstream;
    assert_int_equal(knut_duck_stmt_schema(stmt, &s, &err), KNUT_OK);
    assert_int_equal(s.n_children, 3);
    assert_string_equal(s.children[0]->name, "a");
    assert_string_equal(s.children[0]->format, "i");
    assert_string_equal(s.children[1]->name, "name");
    assert_string_equal(s.children[1]->format, "u");
    assert_string_equal(s.children[2]->format, "g");
    assert_int_equal(knut_duck_stmt_param_schema(stmt, &p, &err), KNUT_OK);
    assert_int_equal(p.n_children, 1);
    assert_string_equal(p.children[0]->name, "1");
    assert_string_equal(p.children[0]->format, "i");

    struct ArrowArrayStream rows;
    assert_int_equal(knut_duck_stmt_bind_int64(stmt, 1, 0, &err), KNUT_OK);
    assert_int_equal(knut_duck_stmt_query(stmt, &rows, &err), KNUT_OK);
    assert_int_equal(rows.get_schema(&rows, &fromstream), 0);
    assert_int_equal(fromstream.n_children, s.n_children);
    for (int64_t i = 0; i < s.n_children; i++) {
        assert_string_equal(fromstream.children[i]->name, s.children[i]->name);
        assert_string_equal(fromstream.children[i]->format, s.children[i]->format);
    }
    fromstream.release(&fromstream);
    rows.release(&rows);
    s.release(&s);
    p.release(&p);
    knut_duck_stmt_free(stmt);
}

static void test_duck_stmt_schema_does_not_run(void **state)
{
    fixture *f = *state;
    knut_error err = KNUT_ERROR_INIT;
    knut_duck_stmt *stmt = NULL;
    assert_int_equal(knut_duck_exec(f->conn, "CREATE TABLE u (x INTEGER)", &err), KNUT_OK);
    assert_int_equal(knut_duck_stmt_prepare(&stmt, f->conn, "INSERT INTO u VALUES (1) RETURNING x",
                                            &err), KNUT_OK);
    struct ArrowSchema s;
    assert_int_equal(knut_duck_stmt_schema(stmt, &s, &err), KNUT_OK);
    assert_int_equal(s.n_children, 1);
    s.release(&s);
    knut_duck_stmt_free(stmt);
    struct ArrowArrayStream st;
    batch b;
    query_first(f->conn, "SELECT count(*) FROM u", &st, &b);
    assert_int_equal(((const int64_t *)b.array.children[0]->buffers[1])[0], 0);
    batch_reset(&b);
    st.release(&st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_duck_stmt_schema_matches_stream, setup, teardown),
        cmocka_unit_test_setup_teardown(test_duck_stmt_schema_does_not_run, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
