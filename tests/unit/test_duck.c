/*
 * Unit tests of the duck part against the real DuckDB library: results as
 * Arrow streams (types, NULLs, bounded batches, lifetimes), multi-statement
 * queries, error text, database options and files, and interrupts.
 * Prepared statements, Arrow streams as tables and Parquet/CSV files are in
 * test_duck_io.c.
 */
#include "duck_fixture.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static int64_t drain(struct ArrowArrayStream *st, int64_t *nbatches, int64_t *max_len)
{
    int64_t rows = 0;
    *nbatches = 0;
    *max_len = 0;
    for (;;) {
        struct ArrowArray a;
        int rc = st->get_next(st, &a);
        if (rc != 0)
            fail_msg("get_next: %s", st->get_last_error(st));
        if (!a.release)
            return rows;
        rows += a.length;
        (*nbatches)++;
        if (a.length > *max_len)
            *max_len = a.length;
        a.release(&a);
    }
}

static void test_duck_select_42(void **state)
{
    fixture *f = *state;
    struct ArrowArrayStream st;
    batch b;
    query_first(f->conn, "SELECT 42 AS answer", &st, &b);
    assert_string_equal(b.schema.format, "+s");
    assert_int_equal(b.schema.n_children, 1);
    assert_string_equal(b.schema.children[0]->name, "answer");
    assert_int_equal(b.array.length, 1);
    assert_int_equal(knut_arrow_view_get_int64(col(&b, 0), 0), 42);
    batch_reset(&b);
    struct ArrowArray end;
    assert_int_equal(st.get_next(&st, &end), 0);
    assert_null(end.release);
    st.release(&st);
    assert_null(st.release);
}

static void test_duck_types_round_trip(void **state)
{
    fixture *f = *state;
    struct ArrowArrayStream st;
    batch b;
    query_first(f->conn,
                "SELECT * FROM (VALUES "
                " (1::INTEGER, 9000000000::BIGINT, 2.5::DOUBLE, 'héllo', true,"
                "  DATE '2024-02-29', TIMESTAMP '2024-02-29 12:34:56.789',"
                "  [1, 2, 3], {'a': 7, 'b': 'x'}),"
                " (NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),"
                " (-3, -1, -0.5, '', false, DATE '1969-12-31', TIMESTAMP '1970-01-01 00:00:00',"
                "  [], {'a': NULL, 'b': 'y'})"
                ") t(i, l, d, s, b, dt, ts, li, st) ORDER BY i NULLS LAST",
                &st, &b);
    static const char *const formats[] = {"i", "l", "g", "u", "b", "tdD", "tsu:", "+l", "+s"};
    assert_int_equal(b.schema.n_children, 9);
    for (int k = 0; k < 9; k++)
        assert_string_equal(b.schema.children[k]->format, formats[k]);
    assert_int_equal(b.array.length, 3);

    /* Row 0 is the negative row (ORDER BY i), row 1 the positive, row 2 NULLs. */
    assert_int_equal(knut_arrow_view_get_int64(col(&b, 0), 0), -3);
    assert_int_equal(knut_arrow_view_get_int64(col(&b, 0), 1), 1);
    assert_int_equal(knut_arrow_view_get_int64(col(&b, 1), 1), 9000000000LL);
    assert_true(knut_arrow_view_get_double(col(&b, 2), 1) == 2.5);
    assert_str_at(col(&b, 3), 1, "héllo");
    assert_str_at(col(&b, 3), 0, "");
    assert_true(knut_arrow_view_get_bool(col(&b, 4), 1));
    assert_false(knut_arrow_view_get_bool(col(&b, 4), 0));
    assert_int_equal(knut_arrow_view_get_int64(col(&b, 5), 1), 19782); /* days to 2024-02-29 */
    assert_int_equal(knut_arrow_view_get_int64(col(&b, 5), 0), -1);
    assert_int_equal(knut_arrow_view_get_int64(col(&b, 6), 1), 1709210096789000LL);
    assert_int_equal(knut_arrow_view_get_int64(col(&b, 6), 0), 0);

    const knut_arrow_view *li = col(&b, 7);
    int64_t s0, e0;
    knut_arrow_view_list_range(li, 1, &s0, &e0);
    assert_int_equal(e0 - s0, 3);
    for (int64_t k = 0; k < 3; k++)
        assert_int_equal(knut_arrow_view_get_int64(knut_arrow_view_child(li, 0), s0 + k), k + 1);
    knut_arrow_view_list_range(li, 0, &s0, &e0);
    assert_int_equal(e0 - s0, 0);

    const knut_arrow_view *stv = col(&b, 8);
    assert_string_equal(b.schema.children[8]->children[0]->name, "a");
    const knut_arrow_view *sa = knut_arrow_view_child(stv, 0);
    const knut_arrow_view *sb = knut_arrow_view_child(stv, 1);
    assert_int_equal(knut_arrow_view_get_int64(sa, knut_arrow_view_child_row(stv, 1)), 7);
    assert_str_at(sb, knut_arrow_view_child_row(stv, 1), "x");
    assert_true(knut_arrow_view_is_null(sa, knut_arrow_view_child_row(stv, 0)));
    assert_false(knut_arrow_view_is_null(stv, 0));

    for (int k = 0; k < 9; k++) {
        assert_true(knut_arrow_view_is_null(col(&b, k), 2));
        assert_false(knut_arrow_view_is_null(col(&b, k), 1));
    }
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_arrow_array_validate(&b.schema, &b.array, KNUT_ARROW_VALIDATE_FULL, &err),
                     KNUT_OK);
    batch_reset(&b);
    st.release(&st);
}

static void test_duck_large_result_in_bounded_batches(void **state)
{
    fixture *f = *state;
    knut_error err = KNUT_ERROR_INIT;
    struct ArrowArrayStream st;
    assert_int_equal(
        knut_duck_query(f->conn, "SELECT range AS i, range * 2 AS j FROM range(100000)", &st, &err),
        KNUT_OK);
    struct ArrowSchema schema;
    assert_int_equal(st.get_schema(&st, &schema), 0);
    int64_t rows = 0, batches = 0, sum = 0;
    for (;;) {
        struct ArrowArray a;
        assert_int_equal(st.get_next(&st, &a), 0);
        if (!a.release)
            break;
        assert_true(a.length > 0 && a.length <= 2048);
        knut_arrow_view v;
        assert_int_equal(knut_arrow_view_init(&v, &schema, &a, &err), KNUT_OK);
        for (int64_t i = 0; i < a.length; i++)
            sum += knut_arrow_view_get_int64(knut_arrow_view_child(&v, 0), i);
        knut_arrow_view_reset(&v);
        rows += a.length;
        batches++;
        a.release(&a);
    }
    assert_int_equal(rows, 100000);
    assert_true(batches >= 100000 / 2048);
    assert_int_equal(sum, (int64_t)99999 * 100000 / 2);
    schema.release(&schema);
    st.release(&st);
}

static void test_duck_stream_outlives_connection(void **state)
{
    fixture *f = *state;
    knut_error err = KNUT_ERROR_INIT;
    knut_duck_conn *c2 = NULL;
    struct ArrowArrayStream st;
    assert_int_equal(knut_duck_conn_open(&c2, f->db, &err), KNUT_OK);
    assert_int_equal(knut_duck_query(c2, "SELECT * FROM range(50000)", &st, &err), KNUT_OK);
    struct ArrowArray a;
    assert_int_equal(st.get_next(&st, &a), 0);
    assert_non_null(a.release);
    int64_t first = a.length;
    a.release(&a);
    /* The caller lets go of the connection; the stream still reads to the end. */
    knut_duck_conn_close(c2);
    int64_t n, maxlen;
    int64_t rest = drain(&st, &n, &maxlen);
    assert_int_equal(first + rest, 50000);
    assert_true(maxlen <= 2048);
    st.release(&st);

    /* Released early, without reading anything. */
    assert_int_equal(knut_duck_query(f->conn, "SELECT * FROM range(50000)", &st, &err), KNUT_OK);
    st.release(&st);
    assert_null(st.release);
}

static void test_duck_stream_superseded_fails_loudly(void **state)
{
    fixture *f = *state;
    knut_error err = KNUT_ERROR_INIT;
    struct ArrowArrayStream st;
    assert_int_equal(knut_duck_query(f->conn, "SELECT * FROM range(100000)", &st, &err), KNUT_OK);
    struct ArrowArray a;
    assert_int_equal(st.get_next(&st, &a), 0);
    a.release(&a);
    assert_int_equal(knut_duck_exec(f->conn, "CREATE TABLE x AS SELECT 1 AS y", &err), KNUT_OK);
    assert_int_not_equal(st.get_next(&st, &a), 0);
    assert_null(a.release);
    assert_non_null(strstr(st.get_last_error(&st), "superseded"));
    st.release(&st);
}

static void test_duck_multi_statement_query(void **state)
{
    fixture *f = *state;
    struct ArrowArrayStream st;
    batch b;
    query_first(f->conn, "CREATE TABLE m AS SELECT 41 AS x; INSERT INTO m VALUES (1); "
                         "SELECT sum(x)::BIGINT AS s FROM m",
                &st, &b);
    assert_int_equal(knut_arrow_view_get_int64(col(&b, 0), 0), 42);
    batch_reset(&b);
    st.release(&st);
}

static void test_duck_invalid_sql_reports_duckdb_message(void **state)
{
    fixture *f = *state;
    knut_error err = KNUT_ERROR_INIT;
    struct ArrowArrayStream st;
    assert_int_equal(knut_duck_query(f->conn, "SELEC 42", &st, &err), KNUT_EPARSE);
    assert_null(st.release);
    assert_non_null(strstr(err.message, "syntax error"));
    assert_null(strchr(err.message, '\n'));

    assert_int_equal(knut_duck_query(f->conn, "SELECT * FROM no_such_table", &st, &err),
                     KNUT_ENOTFOUND);
    assert_non_null(strstr(err.message, "no_such_table"));

    assert_int_not_equal(knut_duck_exec(f->conn, "INSERT INTO nowhere VALUES (1)", &err), KNUT_OK);
    assert_non_null(strstr(err.message, "executing SQL: "));
    assert_non_null(strstr(err.message, "nowhere"));

    knut_duck_stmt *stmt = NULL;
    assert_int_equal(knut_duck_stmt_prepare(&stmt, f->conn, "SELECT FROM WHERE", &err),
                     KNUT_EPARSE);
    assert_null(stmt);
    assert_non_null(strstr(err.message, "preparing statement: "));

    /* An error while rows are produced (row 5000 does not convert) comes
     * from the query call or, once streaming has begun, from get_next. */
    if (knut_duck_query(f->conn,
                        "SELECT (CASE WHEN range < 5000 THEN range::VARCHAR ELSE 'x' END)::INTEGER "
                        "FROM range(10000)",
                        &st, &err) != KNUT_OK) {
        assert_non_null(strstr(err.message, "Conversion"));
    } else {
        int rc = 0;
        struct ArrowArray a;
        while ((rc = st.get_next(&st, &a)) == 0 && a.release)
            a.release(&a);
        assert_int_not_equal(rc, 0);
        assert_non_null(strstr(st.get_last_error(&st), "Conversion"));
        /* The failure is sticky. */
        assert_int_equal(st.get_next(&st, &a), rc);
        st.release(&st);
    }

    assert_int_equal(knut_duck_query(f->conn, "  ", &st, &err), KNUT_EINVAL);
}

static void test_duck_open_options_and_file(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    knut_duck_db *db = NULL;
    knut_duck_conn *conn = NULL;
    const knut_duck_option good[] = {{"threads", "1"}, {"memory_limit", "256MB"}};
    const knut_duck_option bad[] = {{"no_such_setting", "1"}};
    assert_int_equal(knut_duck_db_open(&db, ":memory:", bad, 1, &err), KNUT_EINVAL);
    assert_non_null(strstr(err.message, "not recognized"));
    assert_null(db);
    assert_non_null(strstr(err.message, "no_such_setting"));

    char dir[] = "/tmp/knut-duck-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/t.duckdb", dir);
    assert_int_equal(knut_duck_db_open(&db, path, good, 2, &err), KNUT_OK);
    assert_int_equal(knut_duck_conn_open(&conn, db, &err), KNUT_OK);
    assert_int_equal(knut_duck_exec(conn, "CREATE TABLE k AS SELECT 7 AS v", &err), KNUT_OK);
    knut_duck_conn_close(conn);
    knut_duck_db_close(db);

    assert_int_equal(knut_duck_db_open(&db, path, NULL, 0, &err), KNUT_OK);
    assert_int_equal(knut_duck_conn_open(&conn, db, &err), KNUT_OK);
    struct ArrowArrayStream st;
    batch b;
    query_first(conn, "SELECT v, current_setting('threads') AS t FROM k", &st, &b);
    assert_int_equal(knut_arrow_view_get_int64(col(&b, 0), 0), 7);
    batch_reset(&b);
    st.release(&st);
    knut_duck_conn_close(conn);
    knut_duck_db_close(db);

    /* A directory is not a database file: DuckDB's message comes through. */
    assert_int_equal(knut_duck_db_open(&db, dir, NULL, 0, &err), KNUT_EIO);
    assert_non_null(strstr(err.message, dir));
    unlink(path);
    char wal[300];
    snprintf(wal, sizeof wal, "%s.wal", path);
    unlink(wal);
    rmdir(dir);
}

/* A two-batch stream of (id int64, name utf8, score double) made with the builders. */
typedef struct interrupter {
    knut_duck_conn *conn;
    atomic_int stop;
} interrupter;

/* Interrupts repeatedly: one call could land before the query starts. */
static void *interrupt_loop(void *arg)
{
    interrupter *it = arg;
    const struct timespec pause = {0, 20 * 1000 * 1000};
    while (!atomic_load(&it->stop)) {
        nanosleep(&pause, NULL);
        knut_duck_conn_interrupt(it->conn);
    }
    return NULL;
}

static void test_duck_interrupt_cancels_query(void **state)
{
    fixture *f = *state;
    knut_error err = KNUT_ERROR_INIT;
    interrupter it = {f->conn, 0};
    pthread_t th;
    struct ArrowArrayStream st;
    assert_int_equal(pthread_create(&th, NULL, interrupt_loop, &it), 0);
    /* Minutes of work unless interrupted. */
    knut_status rc = knut_duck_query(f->conn,
                                     "SELECT count(*) FROM range(1000000000000) a "
                                     "WHERE a.range % 7 = 3",
                                     &st, &err);
    if (rc == KNUT_OK) {
        struct ArrowArray a;
        int code = st.get_next(&st, &a);
        assert_int_not_equal(code, 0);
        assert_non_null(strstr(st.get_last_error(&st), "nterrupt"));
        st.release(&st);
    } else {
        assert_int_equal(rc, KNUT_ECANCELLED);
        assert_non_null(strstr(err.message, "nterrupt"));
    }
    atomic_store(&it.stop, 1);
    pthread_join(th, NULL);
    /* The connection is usable afterwards. */
    batch b;
    query_first(f->conn, "SELECT 1", &st, &b);
    batch_reset(&b);
    st.release(&st);
}

static void test_duck_library_version(void **state)
{
    (void)state;
    const char *v = knut_duck_library_version();
    assert_non_null(v);
    assert_true(v[0] == 'v' && strchr(v, '.') != NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_duck_library_version),
        cmocka_unit_test_setup_teardown(test_duck_select_42, setup, teardown),
        cmocka_unit_test_setup_teardown(test_duck_types_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_duck_large_result_in_bounded_batches, setup, teardown),
        cmocka_unit_test_setup_teardown(test_duck_stream_outlives_connection, setup, teardown),
        cmocka_unit_test_setup_teardown(test_duck_stream_superseded_fails_loudly, setup, teardown),
        cmocka_unit_test_setup_teardown(test_duck_multi_statement_query, setup, teardown),
        cmocka_unit_test_setup_teardown(test_duck_invalid_sql_reports_duckdb_message, setup,
                                        teardown),
        cmocka_unit_test(test_duck_open_options_and_file),
        cmocka_unit_test_setup_teardown(test_duck_interrupt_cancels_query, setup, teardown),
    };
    return cmocka_run_group_tests_name("duck", tests, NULL, NULL);
}
