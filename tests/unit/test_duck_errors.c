/*
 * Unit tests of how DuckDB errors become knut_error: every message prefix
 * in the one table of src/duck/db.c is provoked for real through a failed
 * prepare (which gives text only) and must give its status and detail; a
 * few typed errors (failed executions) check the type half of the table;
 * and every section knut_duck_error_trim cuts is provoked too.
 */
#include "duck_fixture.h"

#include <stdio.h>
#include <unistd.h>

/* Prepares sql, which must fail: the error's code and detail. */
static knut_error prepare_fails(knut_duck_conn *conn, const char *sql)
{
    knut_error err = KNUT_ERROR_INIT;
    knut_duck_stmt *stmt = NULL;
    if (knut_duck_stmt_prepare(&stmt, conn, sql, &err) == KNUT_OK)
        fail_msg("prepared, expected an error: %s", sql);
    assert_null(stmt);
    return err;
}

static void expect(const knut_error *e, knut_status code, int detail, const char *prefix)
{
    if (e->code != code || e->detail != detail || !strstr(e->message, prefix))
        fail_msg("got code %d detail %#x: %s", e->code, e->detail, e->message);
}

/* Prepares read_csv('<a file holding bytes>'<options>), which must fail:
 * the error. */
static knut_error csv_prepare_fails(knut_duck_conn *conn, const char *bytes, const char *options)
{
    char dir[] = "/tmp/knut-duck-XXXXXX", path[256], sql[512];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/f.csv", dir);
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    fputs(bytes, fp);
    fclose(fp);
    snprintf(sql, sizeof sql, "SELECT * FROM read_csv('%s'%s)", path, options);
    knut_error e = prepare_fails(conn, sql);
    unlink(path);
    rmdir(dir);
    return e;
}

#define NOT_UTF8 "id,name\n1,P\xff\xfem\n"

/* ---- one test per prefix of the table ----------------------------------- */

static void test_duck_error_parser(void **state)
{
    fixture *f = *state;
    knut_error e = prepare_fails(f->conn, "SELEC 1");
    expect(&e, KNUT_EPARSE, KNUT_DUCK_ERR_PARSER, "Parser Error: ");
}

static void test_duck_error_catalog(void **state)
{
    fixture *f = *state;
    knut_error e = prepare_fails(f->conn, "SELECT * FROM no_such_table");
    expect(&e, KNUT_ENOTFOUND, KNUT_DUCK_ERR_CATALOG, "Catalog Error: ");
}

static void test_duck_error_binder(void **state)
{
    fixture *f = *state;
    knut_error e = prepare_fails(f->conn, "SELECT no_such_column");
    expect(&e, KNUT_EINVAL, KNUT_DUCK_ERR_BINDER, "Binder Error: ");
}

static void test_duck_error_conversion(void **state)
{
    fixture *f = *state; /* a table function's argument is cast while binding */
    knut_error e = prepare_fails(f->conn, "SELECT * FROM range('x'::INT)");
    expect(&e, KNUT_EINVAL, KNUT_DUCK_ERR_CONVERSION, "Conversion Error: ");
}

static void test_duck_error_invalid_input(void **state)
{
    fixture *f = *state;
    knut_error e = csv_prepare_fails(f->conn, NOT_UTF8, "");
    expect(&e, KNUT_EINVAL, KNUT_DUCK_ERR_INVALID_INPUT, "Invalid Input Error: ");
}

static void test_duck_error_io(void **state)
{
    fixture *f = *state;
    knut_error e = prepare_fails(f->conn, "SELECT * FROM read_csv('/nonexistent/knut/x.csv')");
    expect(&e, KNUT_EIO, KNUT_DUCK_ERR_IO, "IO Error: ");
}

static void test_duck_error_out_of_memory(void **state)
{
    fixture *f = *state; /* the CSV sniffer's buffer is far above the limit */
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_duck_exec(f->conn, "SET memory_limit = '100KB'", &err), KNUT_OK);
    knut_error e = csv_prepare_fails(f->conn, "id,name\n1,a\n", "");
    expect(&e, KNUT_ENOMEM, KNUT_DUCK_ERR_OUT_OF_MEMORY, "Out of Memory Error: ");
}

/* A real fatal error: DuckDB's own checkpoint_abort debug setting aborts a
 * checkpoint of a file database, which invalidates it; the CHECKPOINT is a
 * typed FATAL, and so is every later execution (a prepare still works). */
static void test_duck_error_fatal(void **state)
{
    (void)state;
    char dir[] = "/tmp/knut-duck-XXXXXX", path[256];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/f.duckdb", dir);
    knut_duck_db *db = NULL;
    knut_duck_conn *conn = NULL;
    knut_error e = KNUT_ERROR_INIT;
    assert_int_equal(knut_duck_db_open(&db, path, NULL, 0, &e), KNUT_OK);
    assert_int_equal(knut_duck_conn_open(&conn, db, &e), KNUT_OK);
    assert_int_equal(knut_duck_exec(conn, "SET debug_checkpoint_abort = 'before_header'; "
                                          "CREATE TABLE t AS SELECT range AS i FROM range(1000)",
                                    &e),
                     KNUT_OK);
    assert_int_equal(knut_duck_exec(conn, "CHECKPOINT", &e), KNUT_ERROR);
    expect(&e, KNUT_ERROR, KNUT_DUCK_ERR_FATAL, "FATAL Error: ");
    knut_error p = KNUT_ERROR_INIT;
    assert_int_equal(knut_duck_exec(conn, "SELECT 1", &p), KNUT_ERROR);
    expect(&p, KNUT_ERROR, KNUT_DUCK_ERR_FATAL, "FATAL Error: ");
    assert_non_null(strstr(p.message, "database has been invalidated"));
    knut_duck_conn_close(conn);
    knut_duck_db_close(db);
    char wal[300];
    snprintf(wal, sizeof wal, "%s.wal", path);
    unlink(wal);
    unlink(path);
    rmdir(dir);
}

/* ---- the type half: executions fail with a typed result ----------------- */

static void test_duck_error_types(void **state)
{
    fixture *f = *state;
    knut_error e = KNUT_ERROR_INIT;
    assert_int_equal(knut_duck_exec(f->conn, "SELECT 'x'::INT", &e), KNUT_EINVAL);
    expect(&e, KNUT_EINVAL, KNUT_DUCK_ERR_CONVERSION, "Conversion Error: ");
    assert_int_equal(knut_duck_exec(f->conn, "SELECT error('boom')", &e), KNUT_EINVAL);
    expect(&e, KNUT_EINVAL, KNUT_DUCK_ERR_INVALID_INPUT, "boom");
    assert_int_equal(knut_duck_exec(f->conn,
                                    "CREATE TABLE t (k INT PRIMARY KEY); "
                                    "INSERT INTO t VALUES (1), (1)",
                                    &e),
                     KNUT_EINVAL);
    expect(&e, KNUT_EINVAL, KNUT_DUCK_ERR_CONSTRAINT, "Constraint Error: ");
    /* a new error resets the detail; a prefix keeps it */
    knut_error_prefix(&e, "ctx: ");
    assert_int_equal(e.detail, KNUT_DUCK_ERR_CONSTRAINT);
    knut_error_set(&e, KNUT_EINVAL, "mine");
    assert_int_equal(e.detail, 0);
}

/* ---- knut_duck_error_trim: one test per section it cuts ----------------- */

static void trimmed(knut_error e, const char *cut, const char *kept)
{
    if (!strstr(e.message, cut))
        fail_msg("DuckDB's message has no '%s' any more: %s", cut, e.message);
    knut_duck_error_trim(&e);
    if (strstr(e.message, cut) || !strstr(e.message, kept))
        fail_msg("trimmed to: %s", e.message);
}

static void test_duck_error_trim_statement_echo(void **state)
{
    fixture *f = *state;
    trimmed(prepare_fails(f->conn, "SELECT no_such_column"), "; LINE 1:", "no_such_column");
}

static void test_duck_error_trim_possible_solution(void **state)
{
    fixture *f = *state;
    trimmed(csv_prepare_fails(f->conn, NOT_UTF8, ""),
            "; Possible Solution:", "Line: 2");
}

static void test_duck_error_trim_possible_fixes(void **state)
{
    fixture *f = *state; /* the sniffer cannot fit the file to the given columns */
    trimmed(csv_prepare_fails(f->conn, "a,b,c\n1,2\n1,2,3,4\n1\n",
                              ", delim=',', header=true, "
                              "columns={'a': 'INT', 'b': 'INT', 'c': 'INT'}"),
            "; Possible fixes:", "sniffing file");
    knut_duck_error_trim(NULL);
}

/* ---- knut_duck_error_reading: the reason a user reads ------------------ */

static void test_duck_error_reading_csv(void **state)
{
    fixture *f = *state; /* the line number, what is wrong; no prefixes, no data */
    knut_error e = csv_prepare_fails(f->conn, NOT_UTF8, "");
    knut_duck_error_reading(&e);
    assert_int_equal(e.code, KNUT_EINVAL);
    assert_int_equal(e.detail, KNUT_DUCK_ERR_INVALID_INPUT);
    if (strncmp(e.message, "line 2: ", 8) != 0 || !strstr(e.message, "not utf-8 encoded") ||
        strstr(e.message, "Error") || strstr(e.message, "Original Line") ||
        strstr(e.message, "preparing") || strstr(e.message, "file = "))
        fail_msg("got: %s", e.message);
    /* a caller's context stays, knut's "preparing query: " goes */
    e = csv_prepare_fails(f->conn, NOT_UTF8, "");
    knut_error_prefix(&e, "sql step: ");
    knut_duck_error_reading(&e);
    if (strncmp(e.message, "sql step: line 2: ", 18) != 0)
        fail_msg("got: %s", e.message);
}

static void test_duck_error_reading_other(void **state)
{
    fixture *f = *state; /* not a CSV error: DuckDB's text without the prefixes */
    knut_error e = prepare_fails(f->conn, "SELECT * FROM read_csv('/nonexistent/knut/x.csv')");
    knut_duck_error_reading(&e);
    if (strstr(e.message, "IO Error") || strstr(e.message, "preparing") ||
        !strstr(e.message, "/nonexistent/knut/x.csv"))
        fail_msg("got: %s", e.message);
    /* not DuckDB's: left alone */
    knut_error mine = KNUT_ERROR_INIT;
    knut_error_set(&mine, KNUT_EINVAL, "x: Invalid Input Error: kept");
    knut_duck_error_reading(&mine);
    assert_string_equal(mine.message, "x: Invalid Input Error: kept");
    knut_duck_error_reading(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_duck_error_parser, setup, teardown),
        cmocka_unit_test_setup_teardown(test_duck_error_catalog, setup, teardown),
        cmocka_unit_test_setup_teardown(test_duck_error_binder, setup, teardown),
        cmocka_unit_test_setup_teardown(test_duck_error_conversion, setup, teardown),
        cmocka_unit_test_setup_teardown(test_duck_error_invalid_input, setup, teardown),
        cmocka_unit_test_setup_teardown(test_duck_error_io, setup, teardown),
        cmocka_unit_test_setup_teardown(test_duck_error_out_of_memory, setup, teardown),
        cmocka_unit_test_setup_teardown(test_duck_error_types, setup, teardown),
        cmocka_unit_test_setup_teardown(test_duck_error_trim_statement_echo, setup, teardown),
        cmocka_unit_test_setup_teardown(test_duck_error_trim_possible_solution, setup, teardown),
        cmocka_unit_test_setup_teardown(test_duck_error_trim_possible_fixes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_duck_error_reading_csv, setup, teardown),
        cmocka_unit_test(test_duck_error_fatal),
        cmocka_unit_test_setup_teardown(test_duck_error_reading_other, setup, teardown),
    };
    return cmocka_run_group_tests_name("duck_errors", tests, NULL, NULL);
}
