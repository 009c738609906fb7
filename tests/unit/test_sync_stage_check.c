/*
 * Staging checks (src/sync/stage_check.c) on an in-memory DuckDB: the
 * union of staged files refuses columns whose types disagree where they
 * hold values and leaves an all-null column out of its file's part; a NUL
 * byte in a key names its row; an empty file is refused; a CSV whose rows
 * have a different field count than the header names the first such line;
 * a file gone since the listing is KNUT_ENOTFOUND (pending, not failed).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "sync/sync_int.h"

typedef struct fixture {
    knut_duck_db *db;
    knut_duck_conn *c;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    assert_int_equal(knut_duck_db_open(&f->db, NULL, NULL, 0, NULL), KNUT_OK);
    assert_int_equal(knut_duck_conn_open(&f->c, f->db, NULL), KNUT_OK);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    knut_duck_conn_close(f->c);
    knut_duck_db_close(f->db);
    free(f);
    return 0;
}

static void exec(fixture *f, const char *sql)
{
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_duck_exec(f->c, sql, &err), KNUT_OK);
}

static knut_status do_union(fixture *f, size_t n, knut_buf *out, knut_error *err)
{
    static const int idx[] = {0, 1, 2};
    knut_buf_clear(out);
    knut_buf_puts(out, "CREATE OR REPLACE TABLE _knut_batch AS ");
    knut_status st = knut_sync__stage_union(f->c, idx, n, out, err);
    if (st == KNUT_OK)
        st = knut_duck_exec(f->c, out->data, err);
    return st;
}

static void test_union_types(void **state)
{
    fixture *f = *state;
    knut_error err = KNUT_ERROR_INIT;
    knut_buf q = KNUT_BUF_INIT;
    /* same types: a plain union */
    exec(f, "CREATE TABLE _knut_m0 AS SELECT 1::BIGINT AS id, 31::BIGINT AS age");
    exec(f, "CREATE TABLE _knut_m1 AS SELECT 2::BIGINT AS id, 42::BIGINT AS age");
    assert_int_equal(do_union(f, 2, &q, &err), KNUT_OK);
    assert_null(strstr(q.data, "EXCLUDE"));
    /* an all-null VARCHAR column takes the others' type */
    exec(f, "CREATE TABLE _knut_m2 AS SELECT 3::BIGINT AS id, NULL::VARCHAR AS age");
    assert_int_equal(do_union(f, 3, &q, &err), KNUT_OK);
    assert_non_null(strstr(q.data, "EXCLUDE (\"age\") FROM _knut_m2"));
    exec(f, "SELECT CASE WHEN data_type <> 'BIGINT' THEN error('age is ' || data_type) END "
            "FROM information_schema.columns "
            "WHERE table_name = '_knut_batch' AND column_name = 'age'");
    /* values of two types: refused, naming the column */
    exec(f, "CREATE OR REPLACE TABLE _knut_m1 AS SELECT 2::BIGINT AS id, 'old' AS age");
    assert_int_equal(do_union(f, 2, &q, &err), KNUT_EINVAL);
    assert_non_null(strstr(err.message, "column 'age' has different types"));
    knut_buf_reset(&q);
}

static void test_nul_key_and_empty(void **state)
{
    fixture *f = *state;
    knut_error err = KNUT_ERROR_INIT;
    knut_sync_prop key = {.column = "id"};
    knut_sync_vertex_step v = {.keys = &key, .n_keys = 1};
    knut_sync_table t = {.name = "people", .vertices = &v, .n_vertices = 1};
    exec(f, "CREATE TABLE _knut_m5 AS SELECT * FROM (VALUES ('a', 1::BIGINT), "
            "('b' || chr(0) || 'c', 2::BIGINT)) v(id, _knut_ord)");
    assert_int_equal(knut_sync__stage_check_keys(f->c, &t, "_knut_m5", &err), KNUT_EINVAL);
    assert_string_equal(err.message, "key column 'id' has a NUL byte in row 2");
    exec(f, "DELETE FROM _knut_m5 WHERE _knut_ord = 2");
    assert_int_equal(knut_sync__stage_check_keys(f->c, &t, "_knut_m5", &err), KNUT_OK);

    sync_file empty = {.path = "x.csv", .size = 0, .format = KNUT_SYNC_FORMAT_CSV};
    assert_int_equal(knut_sync__stage_precheck(&empty, &err), KNUT_EINVAL);
    assert_string_equal(err.message, "empty file (0 bytes)");
}

static void test_explain(void **state)
{
    fixture *f = *state;
    char path[] = "/tmp/knut-stage-check-XXXXXX.csv";
    int fd = mkstemps(path, 4);
    assert_true(fd >= 0);
    static const char text[] = "id,name,age\n1,a,1\n2,b,2\n3,c,3,x\n4,d,4\n";
    assert_int_equal(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
    close(fd);
    sync_file file = {.path = path, .size = sizeof text - 1, .format = KNUT_SYNC_FORMAT_CSV};
    knut_error err = KNUT_ERROR_INIT;
    knut_error_set(&err, KNUT_EINVAL, "column 'id' is missing; LINE 1: SELECT ...");
    assert_int_equal(knut_sync__stage_explain(f->c, &file, KNUT_EINVAL, &err), KNUT_EINVAL);
    assert_string_equal(err.message, "line 4 has 4 fields, the header has 3");
    unlink(path);
    /* gone since the listing: not the file's fault */
    knut_error_set(&err, KNUT_EIO, "No files found that match the pattern");
    assert_int_equal(knut_sync__stage_explain(f->c, &file, KNUT_EIO, &err), KNUT_ENOTFOUND);
    /* a Parquet reader error loses only DuckDB's echo of the statement */
    knut_error_set(&err, KNUT_EIO, "No magic bytes found at end of file 'p'; LINE 1: CREATE");
    char here[] = "/tmp"; /* exists */
    sync_file dir = {.path = here, .size = 10, .format = KNUT_SYNC_FORMAT_PARQUET};
    assert_int_equal(knut_sync__stage_explain(f->c, &dir, KNUT_EIO, &err), KNUT_EIO);
    assert_string_equal(err.message, "No magic bytes found at end of file 'p'");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_union_types, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nul_key_and_empty, setup, teardown),
        cmocka_unit_test_setup_teardown(test_explain, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
