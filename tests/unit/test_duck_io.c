/*
 * Unit tests of data in and out of the duck part: prepared statements with
 * every bind type, Arrow streams (built with the arrow builders or read
 * from another connection) loaded as tables, also inside the caller's
 * transaction, transaction tracking, and Parquet/CSV files written by COPY
 * and read back.
 */
#include "duck_fixture.h"

#include <stdio.h>
#include <unistd.h>

static void test_duck_prepared_every_bind_type(void **state)
{
    fixture *f = *state;
    knut_error err = KNUT_ERROR_INIT;
    knut_duck_stmt *ins = NULL, *sel = NULL;
    uint64_t changes = 0;
    assert_int_equal(knut_duck_exec(f->conn,
                                    "CREATE TABLE p (n INTEGER, b BOOLEAN, i BIGINT, d DOUBLE, "
                                    "s VARCHAR, bl BLOB, dt DATE, ts TIMESTAMP)",
                                    &err),
                     KNUT_OK);
    assert_int_equal(knut_duck_stmt_prepare(&ins, f->conn,
                                            "INSERT INTO p VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                                            &err),
                     KNUT_OK);
    assert_int_equal(knut_duck_stmt_param_count(ins), 8);
    assert_int_equal(knut_duck_stmt_bind_null(ins, 1, &err), KNUT_OK);
    assert_int_equal(knut_duck_stmt_bind_bool(ins, 2, 1, &err), KNUT_OK);
    assert_int_equal(knut_duck_stmt_bind_int64(ins, 3, INT64_MIN + 1, &err), KNUT_OK);
    assert_int_equal(knut_duck_stmt_bind_double(ins, 4, 0.125, &err), KNUT_OK);
    assert_int_equal(knut_duck_stmt_bind_text(ins, 5, "it's \"q\"xyz", 8, &err), KNUT_OK);
    assert_int_equal(knut_duck_stmt_bind_blob(ins, 6, "\0\1\2", 3, &err), KNUT_OK);
    assert_int_equal(knut_duck_stmt_bind_date(ins, 7, 19782, &err), KNUT_OK);
    assert_int_equal(knut_duck_stmt_bind_timestamp(ins, 8, 1709210096789000LL, &err), KNUT_OK);
    assert_int_equal(knut_duck_stmt_exec(ins, &changes, &err), KNUT_OK);
    assert_int_equal(changes, 1);
    /* Bindings persist: a second execution inserts the same row again. */
    assert_int_equal(knut_duck_stmt_exec(ins, &changes, &err), KNUT_OK);
    assert_int_equal(changes, 1);

    /* Out-of-range index and invalid UTF-8 are errors, not crashes. */
    assert_int_equal(knut_duck_stmt_bind_int64(ins, 9, 1, &err), KNUT_EINVAL);
    assert_non_null(strstr(err.message, "parameter 9"));
    assert_int_equal(knut_duck_stmt_bind_int64(ins, 0, 1, &err), KNUT_EINVAL);
    assert_int_not_equal(knut_duck_stmt_bind_text(ins, 5, "\xff\xfe", 2, &err), KNUT_OK);
    knut_duck_stmt_free(ins);

    assert_int_equal(knut_duck_stmt_prepare(&sel, f->conn,
                                            "SELECT n, b, i, d, s, bl, dt, ts FROM p "
                                            "WHERE s = $1 AND dt = $2 LIMIT 1",
                                            &err),
                     KNUT_OK);
    assert_int_equal(knut_duck_stmt_bind_text(sel, 1, "it's \"q\"", 8, &err), KNUT_OK);
    assert_int_equal(knut_duck_stmt_bind_date(sel, 2, 19782, &err), KNUT_OK);
    struct ArrowArrayStream st;
    batch b;
    assert_int_equal(knut_duck_stmt_query(sel, &st, &err), KNUT_OK);
    assert_int_equal(st.get_schema(&st, &b.schema), 0);
    assert_int_equal(st.get_next(&st, &b.array), 0);
    assert_int_equal(knut_arrow_view_init(&b.view, &b.schema, &b.array, &err), KNUT_OK);
    assert_int_equal(b.array.length, 1);
    assert_true(knut_arrow_view_is_null(col(&b, 0), 0));
    assert_true(knut_arrow_view_get_bool(col(&b, 1), 0));
    assert_int_equal(knut_arrow_view_get_int64(col(&b, 2), 0), INT64_MIN + 1);
    assert_true(knut_arrow_view_get_double(col(&b, 3), 0) == 0.125);
    assert_str_at(col(&b, 4), 0, "it's \"q\"");
    int64_t len;
    const char *blob = knut_arrow_view_get_bytes(col(&b, 5), 0, &len);
    assert_int_equal(len, 3);
    assert_memory_equal(blob, "\0\1\2", 3);
    assert_int_equal(knut_arrow_view_get_int64(col(&b, 6), 0), 19782);
    assert_int_equal(knut_arrow_view_get_int64(col(&b, 7), 0), 1709210096789000LL);
    batch_reset(&b);
    /* The statement may go first; its stream stays readable. */
    knut_duck_stmt_free(sel);
    struct ArrowArray end;
    assert_int_equal(st.get_next(&st, &end), 0);
    assert_null(end.release);
    st.release(&st);

    /* Cleared bindings make execution fail with DuckDB's message. */
    assert_int_equal(knut_duck_stmt_prepare(&sel, f->conn, "SELECT $1::INTEGER + 1", &err),
                     KNUT_OK);
    assert_int_equal(knut_duck_stmt_bind_int64(sel, 1, 41, &err), KNUT_OK);
    assert_int_equal(knut_duck_stmt_clear(sel, &err), KNUT_OK);
    assert_int_not_equal(knut_duck_stmt_query(sel, &st, &err), KNUT_OK);
    assert_null(st.release);
    assert_true(strlen(err.message) > 0);
    knut_duck_stmt_free(sel);
}

static void make_people_stream(struct ArrowArrayStream *out, int64_t first_id)
{
    knut_error err = KNUT_ERROR_INIT;
    knut_arrow_builder *root = NULL, *id = NULL, *name = NULL, *score = NULL;
    assert_int_equal(knut_arrow_builder_new_simple(&root, KNUT_ARROW_STRUCT, "", &err), KNUT_OK);
    assert_int_equal(knut_arrow_builder_new_simple(&id, KNUT_ARROW_INT64, "id", &err), KNUT_OK);
    assert_int_equal(knut_arrow_builder_new_simple(&name, KNUT_ARROW_UTF8, "name", &err), KNUT_OK);
    assert_int_equal(knut_arrow_builder_new_simple(&score, KNUT_ARROW_DOUBLE, "score", &err),
                     KNUT_OK);
    assert_int_equal(knut_arrow_builder_add_child(root, id, &err), KNUT_OK);
    assert_int_equal(knut_arrow_builder_add_child(root, name, &err), KNUT_OK);
    assert_int_equal(knut_arrow_builder_add_child(root, score, &err), KNUT_OK);

    static const char *const names[] = {"ada", "brian", "chen", "dana", "eve"};
    struct ArrowArray arrays[2];
    struct ArrowSchema schema;
    int64_t k = 0;
    for (int batch_no = 0; batch_no < 2; batch_no++) {
        int rows = batch_no == 0 ? 3 : 2;
        for (int r = 0; r < rows; r++, k++) {
            assert_int_equal(knut_arrow_builder_append_int(id, first_id + k, &err), KNUT_OK);
            assert_int_equal(knut_arrow_builder_append_str(name, names[k], &err), KNUT_OK);
            if (k == 4)
                assert_int_equal(knut_arrow_builder_append_null(score, &err), KNUT_OK);
            else
                assert_int_equal(knut_arrow_builder_append_double(score, 0.5 * (double)k, &err),
                                 KNUT_OK);
            assert_int_equal(knut_arrow_builder_finish_element(root, &err), KNUT_OK);
        }
        assert_int_equal(knut_arrow_builder_finish(root, &arrays[batch_no],
                                                   batch_no == 0 ? &schema : NULL, &err),
                         KNUT_OK);
    }
    knut_arrow_builder_free(root);
    assert_int_equal(knut_arrow_stream_from_arrays(out, &schema, arrays, 2, &err), KNUT_OK);
}

static void test_duck_register_stream_as_table(void **state)
{
    fixture *f = *state;
    knut_error err = KNUT_ERROR_INIT;
    struct ArrowArrayStream in, st;
    batch b;
    make_people_stream(&in, 1);
    assert_int_equal(knut_duck_register_stream(f->conn, "people", &in, &err), KNUT_OK);
    assert_null(in.release);
    /* Readable any number of times. */
    for (int round = 0; round < 2; round++) {
        query_first(f->conn,
                    "SELECT count(*) AS n, sum(id)::BIGINT AS s, "
                    "string_agg(name, ',' ORDER BY id) AS names, count(score) AS scored "
                    "FROM people",
                    &st, &b);
        assert_int_equal(knut_arrow_view_get_int64(col(&b, 0), 0), 5);
        assert_int_equal(knut_arrow_view_get_int64(col(&b, 1), 0), 15);
        assert_str_at(col(&b, 2), 0, "ada,brian,chen,dana,eve");
        assert_int_equal(knut_arrow_view_get_int64(col(&b, 3), 0), 4);
        batch_reset(&b);
        st.release(&st);
    }

    /* Append to an existing table (columns by position). */
    uint64_t rows = 0;
    assert_int_equal(knut_duck_exec(f->conn, "CREATE TABLE people2 (id BIGINT, name VARCHAR, "
                                             "score DOUBLE)",
                                    &err),
                     KNUT_OK);
    make_people_stream(&in, 100);
    assert_int_equal(knut_duck_append_stream(f->conn, "people2", &in, &rows, &err), KNUT_OK);
    assert_int_equal(rows, 5);
    make_people_stream(&in, 200);
    assert_int_equal(knut_duck_append_stream(f->conn, "people2", &in, &rows, &err), KNUT_OK);
    query_first(f->conn, "SELECT count(*), min(id), max(id) FROM people2", &st, &b);
    assert_int_equal(knut_arrow_view_get_int64(col(&b, 0), 0), 10);
    assert_int_equal(knut_arrow_view_get_int64(col(&b, 1), 0), 100);
    assert_int_equal(knut_arrow_view_get_int64(col(&b, 2), 0), 204);
    batch_reset(&b);
    st.release(&st);

    /* Failures release the stream too, and leave no helper view behind. */
    make_people_stream(&in, 1);
    assert_int_not_equal(knut_duck_append_stream(f->conn, "no_such", &in, &rows, &err), KNUT_OK);
    assert_null(in.release);
    assert_non_null(strstr(err.message, "no_such"));
    query_first(f->conn, "SELECT count(*) FROM duckdb_views() WHERE NOT internal", &st, &b);
    assert_int_equal(knut_arrow_view_get_int64(col(&b, 0), 0), 0);
    batch_reset(&b);
    st.release(&st);

    /* A query stream from another connection loads straight into a table. */
    knut_duck_conn *c2 = NULL;
    assert_int_equal(knut_duck_conn_open(&c2, f->db, &err), KNUT_OK);
    assert_int_equal(knut_duck_query(c2, "SELECT range AS i, range::VARCHAR AS s FROM range(10000)",
                                     &in, &err),
                     KNUT_OK);
    assert_int_equal(knut_duck_register_stream(f->conn, "copied", &in, &err), KNUT_OK);
    knut_duck_conn_close(c2);
    query_first(f->conn, "SELECT count(*), sum(i)::BIGINT, max(length(s)) FROM copied", &st, &b);
    assert_int_equal(knut_arrow_view_get_int64(col(&b, 0), 0), 10000);
    assert_int_equal(knut_arrow_view_get_int64(col(&b, 1), 0), (int64_t)9999 * 10000 / 2);
    assert_int_equal(knut_arrow_view_get_int64(col(&b, 2), 0), 4);
    batch_reset(&b);
    st.release(&st);
}

static int64_t count_rows(knut_duck_conn *conn, const char *sql)
{
    struct ArrowArrayStream st;
    batch b;
    query_first(conn, sql, &st, &b);
    int64_t n = knut_arrow_view_get_int64(col(&b, 0), 0);
    batch_reset(&b);
    st.release(&st);
    return n;
}

/* Register and append inside the caller's transaction: the caller's
 * rollback or commit decides, and the transaction survives the loads. */
static void test_duck_stream_in_caller_transaction(void **state)
{
    fixture *f = *state;
    knut_error err = KNUT_ERROR_INIT;
    struct ArrowArrayStream in;
    uint64_t rows = 0;
    assert_int_equal(knut_duck_exec(f->conn, "CREATE TABLE t (id BIGINT, name VARCHAR, "
                                             "score DOUBLE)",
                                    &err),
                     KNUT_OK);
    assert_int_equal(knut_duck_conn_in_transaction(f->conn), 0);

    /* Rollback: neither the temp table nor the appended rows remain. */
    assert_int_equal(knut_duck_conn_begin(f->conn, &err), KNUT_OK);
    assert_int_equal(knut_duck_conn_in_transaction(f->conn), 1);
    make_people_stream(&in, 1);
    assert_int_equal(knut_duck_register_stream(f->conn, "staged", &in, &err), KNUT_OK);
    make_people_stream(&in, 10);
    assert_int_equal(knut_duck_append_stream(f->conn, "t", &in, &rows, &err), KNUT_OK);
    assert_int_equal(rows, 5);
    assert_int_equal(knut_duck_conn_in_transaction(f->conn), 1);
    assert_int_equal(count_rows(f->conn, "SELECT count(*) FROM t"), 5);
    assert_int_equal(count_rows(f->conn, "SELECT count(*) FROM staged"), 5);
    /* A nested begin is refused without harming the open transaction. */
    assert_int_equal(knut_duck_conn_begin(f->conn, &err), KNUT_EINVAL);
    assert_int_equal(count_rows(f->conn, "SELECT count(*) FROM t"), 5);
    assert_int_equal(knut_duck_conn_rollback(f->conn, &err), KNUT_OK);
    assert_int_equal(knut_duck_conn_in_transaction(f->conn), 0);
    assert_int_equal(count_rows(f->conn, "SELECT count(*) FROM t"), 0);
    assert_int_equal(count_rows(f->conn, "SELECT count(*) FROM duckdb_tables() "
                                         "WHERE table_name = 'staged'"),
                     0);

    /* Commit, with the transaction opened by plain SQL this time. */
    assert_int_equal(knut_duck_exec(f->conn, "BEGIN TRANSACTION", &err), KNUT_OK);
    assert_int_equal(knut_duck_conn_in_transaction(f->conn), 1);
    make_people_stream(&in, 1);
    assert_int_equal(knut_duck_register_stream(f->conn, "staged", &in, &err), KNUT_OK);
    make_people_stream(&in, 10);
    assert_int_equal(knut_duck_append_stream(f->conn, "t", &in, &rows, &err), KNUT_OK);
    assert_int_equal(knut_duck_exec(f->conn, "INSERT INTO t SELECT * FROM staged", &err),
                     KNUT_OK);
    assert_int_equal(knut_duck_exec(f->conn, "COMMIT", &err), KNUT_OK);
    assert_int_equal(knut_duck_conn_in_transaction(f->conn), 0);
    assert_int_equal(count_rows(f->conn, "SELECT count(*) FROM t"), 10);
    assert_int_equal(count_rows(f->conn, "SELECT count(*) FROM staged"), 5);
    /* No helper view survives either way. */
    assert_int_equal(count_rows(f->conn, "SELECT count(*) FROM duckdb_views() WHERE NOT internal"),
                     0);

    /* A failed load inside the caller's transaction leaves it open for the
     * caller to roll back, and the earlier work goes with it. */
    assert_int_equal(knut_duck_conn_begin(f->conn, &err), KNUT_OK);
    make_people_stream(&in, 100);
    assert_int_equal(knut_duck_append_stream(f->conn, "t", &in, &rows, &err), KNUT_OK);
    make_people_stream(&in, 200);
    assert_int_not_equal(knut_duck_append_stream(f->conn, "no_such", &in, &rows, &err), KNUT_OK);
    assert_int_equal(knut_duck_conn_in_transaction(f->conn), 1);
    assert_int_equal(knut_duck_conn_rollback(f->conn, &err), KNUT_OK);
    assert_int_equal(count_rows(f->conn, "SELECT count(*) FROM t"), 10);

    /* Commit and rollback with nothing open. */
    assert_int_equal(knut_duck_conn_commit(f->conn, &err), KNUT_EINVAL);
    assert_int_equal(knut_duck_conn_rollback(f->conn, &err), KNUT_OK);
}

/* Transaction statements in multi-statement SQL and through
 * knut_duck_query are tracked, as is a commit of an aborted transaction. */
static void test_duck_transaction_tracking(void **state)
{
    fixture *f = *state;
    knut_error err = KNUT_ERROR_INIT;
    struct ArrowArrayStream st;
    assert_int_equal(knut_duck_exec(f->conn, "CREATE TABLE t (x INTEGER); BEGIN; "
                                             "INSERT INTO t VALUES (1)",
                                    &err),
                     KNUT_OK);
    assert_int_equal(knut_duck_conn_in_transaction(f->conn), 1);
    assert_int_equal(knut_duck_exec(f->conn, "INSERT INTO t VALUES (2); COMMIT", &err), KNUT_OK);
    assert_int_equal(knut_duck_conn_in_transaction(f->conn), 0);
    /* A failure after BEGIN in the same SQL still leaves it open. */
    assert_int_not_equal(knut_duck_exec(f->conn, "BEGIN; SELECT * FROM no_such", &err), KNUT_OK);
    assert_int_equal(knut_duck_conn_in_transaction(f->conn), 1);
    assert_int_equal(knut_duck_query(f->conn, "ROLLBACK", &st, &err), KNUT_OK);
    st.release(&st);
    assert_int_equal(knut_duck_conn_in_transaction(f->conn), 0);
    /* CASE ... END takes the statement-by-statement path, still right. */
    assert_int_equal(count_rows(f->conn, "SELECT sum(CASE WHEN x > 0 THEN 1 ELSE 0 END) "
                                         "::BIGINT FROM t"),
                     2);

    /* DuckDB aborts a transaction when a BEGIN runs inside it; committing
     * it then must fail instead of silently losing the insert. */
    assert_int_equal(knut_duck_exec(f->conn, "BEGIN; INSERT INTO t VALUES (3)", &err), KNUT_OK);
    assert_int_not_equal(knut_duck_exec(f->conn, "BEGIN", &err), KNUT_OK);
    assert_int_equal(knut_duck_conn_in_transaction(f->conn), 1);
    assert_int_not_equal(knut_duck_conn_commit(f->conn, &err), KNUT_OK);
    assert_non_null(strstr(err.message, "aborted"));
    assert_int_equal(knut_duck_conn_in_transaction(f->conn), 0);
    assert_int_equal(count_rows(f->conn, "SELECT count(*) FROM t"), 2);
}

static void test_duck_parquet_and_csv_files(void **state)
{
    fixture *f = *state;
    knut_error err = KNUT_ERROR_INIT;
    char dir[] = "/tmp/knut-duck-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char sql[1024], pq[256], csv[256];
    snprintf(pq, sizeof pq, "%s/t.parquet", dir);
    snprintf(csv, sizeof csv, "%s/t.csv", dir);

    snprintf(sql, sizeof sql,
             "COPY (SELECT range AS id, 'n' || range AS name, range / 4 AS q FROM range(5000)) "
             "TO '%s' (FORMAT parquet)",
             pq);
    assert_int_equal(knut_duck_exec(f->conn, sql, &err), KNUT_OK);
    snprintf(sql, sizeof sql,
             "COPY (SELECT range AS id, 'a,\"b\"' || range AS name FROM range(300)) TO '%s' "
             "(FORMAT csv, HEADER)",
             csv);
    assert_int_equal(knut_duck_exec(f->conn, sql, &err), KNUT_OK);

    struct ArrowArrayStream st;
    batch b;
    snprintf(sql, sizeof sql,
             "SELECT count(*), sum(id)::BIGINT, max(name) FROM read_parquet('%s')", pq);
    query_first(f->conn, sql, &st, &b);
    assert_int_equal(knut_arrow_view_get_int64(col(&b, 0), 0), 5000);
    assert_int_equal(knut_arrow_view_get_int64(col(&b, 1), 0), (int64_t)4999 * 5000 / 2);
    assert_str_at(col(&b, 2), 0, "n999");
    batch_reset(&b);
    st.release(&st);

    /* A file path as a table name works as well. */
    snprintf(sql, sizeof sql, "SELECT name FROM '%s' WHERE id = 7", csv);
    query_first(f->conn, sql, &st, &b);
    assert_str_at(col(&b, 0), 0, "a,\"b\"7");
    batch_reset(&b);
    st.release(&st);
    snprintf(sql, sizeof sql, "SELECT count(*) FROM read_csv('%s')", csv);
    query_first(f->conn, sql, &st, &b);
    assert_int_equal(knut_arrow_view_get_int64(col(&b, 0), 0), 300);
    batch_reset(&b);
    st.release(&st);

    /* A missing file is an error naming it. */
    snprintf(sql, sizeof sql, "SELECT * FROM read_parquet('%s/missing.parquet')", dir);
    assert_int_not_equal(knut_duck_query(f->conn, sql, &st, &err), KNUT_OK);
    assert_non_null(strstr(err.message, "missing.parquet"));

    unlink(pq);
    unlink(csv);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_duck_prepared_every_bind_type, setup, teardown),
        cmocka_unit_test_setup_teardown(test_duck_register_stream_as_table, setup, teardown),
        cmocka_unit_test_setup_teardown(test_duck_stream_in_caller_transaction, setup, teardown),
        cmocka_unit_test_setup_teardown(test_duck_transaction_tracking, setup, teardown),
        cmocka_unit_test_setup_teardown(test_duck_parquet_and_csv_files, setup, teardown),
    };
    return cmocka_run_group_tests_name("duck_io", tests, NULL, NULL);
}
