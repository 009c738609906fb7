/*
 * Staging checks (src/sync/stage_check.c) on an in-memory DuckDB: the
 * union of staged files refuses columns whose types disagree where they
 * hold values and leaves an all-null column out of its file's part; a NUL
 * byte in a key names its row; an empty file is refused; a CSV whose rows
 * have a different field count than the header names the first such line;
 * a file gone since the listing is KNUT_ENOTFOUND (pending, not failed);
 * a failure of the table's SQL step says "sql step:", one of the file's
 * reader does not (told apart by DuckDB's error kind, not its text).
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
    /* stage_file works in the staging database, as in a sync session */
    assert_int_equal(knut_sync__stage_attach(f->db, NULL), KNUT_OK);
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

/* Writes bytes to a fresh file from the mkstemps template path. */
static sync_file temp_file(char *path, int suffix_len, const char *bytes, size_t len,
                           knut_sync_format format)
{
    int fd = mkstemps(path, suffix_len);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, bytes, len), (ssize_t)len);
    close(fd);
    sync_file file = {.path = path, .size = (int64_t)len, .format = format};
    return file;
}

static void stage_fails(fixture *f, const sync_file *file, const char *sql, int sql_step,
                        const char *words)
{
    knut_sync_prop key = {.column = "id"};
    knut_sync_vertex_step v = {.keys = &key, .n_keys = 1};
    knut_sync_table t = {.name = "people", .sql = sql, .vertices = &v, .n_vertices = 1};
    knut_error err = KNUT_ERROR_INIT;
    int64_t rows = 0;
    assert_int_not_equal(knut_sync__stage_file(f->db, &t, file, 0, &rows, &err), KNUT_OK);
    if ((strncmp(err.message, "sql step: ", 10) == 0) != sql_step || !strstr(err.message, words))
        fail_msg("%s: %s", sql, err.message);
}

static void test_sql_step_or_reader(void **state)
{
    fixture *f = *state;
    char csv[] = "/tmp/knut-stage-sql-XXXXXX.csv", late[] = "/tmp/knut-stage-sql-XXXXXX.csv";
    char pq[] = "/tmp/knut-stage-sql-XXXXXX.parquet";
    static const char text[] = "id,name\n1,a\n";
    sync_file c = temp_file(csv, 4, text, sizeof text - 1, KNUT_SYNC_FORMAT_CSV);
    /* the step's text does not bind */
    stage_fails(f, &c, "SELECT nope FROM input", 1, "nope");
    /* the step's own cast fails while running: the file alone reads fine */
    stage_fails(f, &c, "SELECT CAST(name AS INT) AS id FROM input", 1,
                "Could not convert string 'a'");
    unlink(csv);
    /* the reader fails, with the same kind of error as the cast above: a
     * value past the sniffer's sample does not fit the inferred type */
    knut_buf big = KNUT_BUF_INIT;
    knut_buf_puts(&big, "id,name\n");
    for (int i = 0; i < 30000; i++)
        knut_buf_printf(&big, "%d,n\n", i);
    knut_buf_puts(&big, "x,n\n");
    assert_int_equal(knut_buf_check(&big, NULL), KNUT_OK);
    c = temp_file(late, 4, big.data, big.len, KNUT_SYNC_FORMAT_CSV);
    stage_fails(f, &c, "SELECT * FROM input", 0, "line 30002: Error when converting column");
    unlink(late);
    knut_buf_reset(&big);
    /* not Parquet at all */
    static const char junk[] = "PAR1 this is not parquet";
    sync_file p = temp_file(pq, 8, junk, sizeof junk - 1, KNUT_SYNC_FORMAT_PARQUET);
    stage_fails(f, &p, "SELECT * FROM input", 0, "magic bytes");
    unlink(pq);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_union_types, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nul_key_and_empty, setup, teardown),
        cmocka_unit_test_setup_teardown(test_explain, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sql_step_or_reader, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
