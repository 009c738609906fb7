/*
 * duck_query: DuckDB through knut. Opens an in-memory database with a
 * setting, runs DDL with knut_duck_exec, reads a query's rows as an Arrow
 * C stream (one batch per DuckDB chunk of at most 2048 rows), runs a
 * prepared statement twice with new bindings, loads an Arrow stream into a
 * temporary table, and shows how DuckDB errors arrive in knut_error: one
 * line, prefixed with what was being done, with a mapped status code.
 */
#include <stdio.h>
#include <stdlib.h>

#include <knut/duck.h>

#define CHECK(call)                                                             \
    do {                                                                        \
        if ((call) != KNUT_OK) {                                                \
            fprintf(stderr, "%s: %s\n", knut_strerror(err.code), err.message); \
            return 1;                                                           \
        }                                                                       \
    } while (0)

/* Reads a stream to its end, printing batch sizes and the first column. */
static knut_status print_rows(struct ArrowArrayStream *s, int show, knut_error *err)
{
    struct ArrowSchema schema;
    int rc = s->get_schema(s, &schema);
    if (rc != 0)
        return knut_arrow_stream_error(s, rc, "schema", err);
    knut_status st = KNUT_OK;
    for (;;) {
        struct ArrowArray batch;
        rc = s->get_next(s, &batch);
        if (rc != 0) {
            st = knut_arrow_stream_error(s, rc, "reading rows", err);
            break;
        }
        if (!batch.release) /* end of stream */
            break;
        knut_arrow_view v;
        st = knut_arrow_view_init(&v, &schema, &batch, err);
        printf("  batch of %lld rows", (long long)batch.length);
        for (int64_t i = 0; st == KNUT_OK && i < v.length && i < show; i++) {
            int64_t row = knut_arrow_view_child_row(&v, i), n = 0;
            const knut_arrow_view *c = &v.children[0];
            if (c->type.type == KNUT_ARROW_UTF8) {
                const char *p = knut_arrow_view_get_str(c, row, &n);
                printf(" %.*s", (int)n, p);
            } else {
                printf(" %lld", (long long)knut_arrow_view_get_int64(c, row));
            }
        }
        printf("\n");
        knut_arrow_view_reset(&v);
        batch.release(&batch);
        if (st != KNUT_OK)
            break;
    }
    schema.release(&schema);
    return st;
}

int main(void)
{
    knut_error err = KNUT_ERROR_INIT;
    knut_duck_db *db = NULL;
    knut_duck_conn *conn = NULL;
    knut_duck_stmt *stmt = NULL;
    struct ArrowArrayStream rows;
    printf("DuckDB %s\n", knut_duck_library_version());

    knut_duck_option opts[] = {{"threads", "1"}};
    CHECK(knut_duck_db_open(&db, NULL, opts, 1, &err)); /* NULL: private in-memory db */
    CHECK(knut_duck_conn_open(&conn, db, &err));
    CHECK(knut_duck_exec(conn,
                         "CREATE TABLE people (id INTEGER, name VARCHAR);"
                         "INSERT INTO people VALUES (1, 'Ada'), (2, 'Grace'), (3, 'Edsger')",
                         &err));

    printf("5000 rows arrive in bounded batches:\n");
    CHECK(knut_duck_query(conn, "SELECT range AS n FROM range(5000)", &rows, &err));
    CHECK(print_rows(&rows, 3, &err));
    knut_arrow_stream_release(&rows);

    printf("prepared, run twice:\n");
    CHECK(knut_duck_stmt_prepare(&stmt, conn, "SELECT name FROM people WHERE id >= $1 ORDER BY id",
                                 &err));
    printf("  %zu parameter\n", knut_duck_stmt_param_count(stmt));
    for (int64_t min_id = 2; min_id <= 3; min_id++) {
        CHECK(knut_duck_stmt_bind_int64(stmt, 1, min_id, &err));
        CHECK(knut_duck_stmt_query(stmt, &rows, &err));
        CHECK(print_rows(&rows, 10, &err));
        knut_arrow_stream_release(&rows);
    }
    knut_duck_stmt_free(stmt);

    printf("an Arrow stream loaded as a temp table, read twice:\n");
    CHECK(knut_duck_query(conn, "SELECT id * 10 AS id, upper(name) AS name FROM people", &rows,
                          &err));
    /* The result stream of this connection must not be loaded on the same
     * connection (the load would supersede it): collect it first. */
    struct ArrowSchema schema;
    struct ArrowArray *batches = NULL;
    int64_t nbatches = 0;
    CHECK(knut_arrow_stream_collect(&rows, &schema, &batches, &nbatches, 0, &err));
    knut_arrow_stream_release(&rows);
    struct ArrowArrayStream in;
    CHECK(knut_arrow_stream_from_arrays(&in, &schema, batches, nbatches, &err));
    free(batches); /* the arrays were moved into the stream; the vector is ours */
    CHECK(knut_duck_register_stream(conn, "loud", &in, &err)); /* consumes `in` */
    for (int round = 0; round < 2; round++) {
        CHECK(knut_duck_query(conn, "SELECT name FROM loud ORDER BY id", &rows, &err));
        CHECK(print_rows(&rows, 10, &err));
        knut_arrow_stream_release(&rows);
    }

    printf("a result stream is superseded by the next statement on its connection:\n");
    CHECK(knut_duck_query(conn, "SELECT range AS n FROM range(10000)", &rows, &err));
    CHECK(knut_duck_exec(conn, "SELECT 1", &err));
    knut_status st = print_rows(&rows, 0, &err);
    knut_arrow_stream_release(&rows);
    printf("  %s -> %s\n", knut_strerror(st), err.message);

    printf("errors:\n");
    const char *bad[] = {
        "SELEC 1",
        "SELECT * FROM no_such_table",
        "SELECT 'x'::INTEGER",
        "SELECT * FROM '/nonexistent/file.parquet'",
        "SELECT (CASE WHEN range < 500000 THEN range::VARCHAR ELSE 'x' END)::INTEGER "
        "FROM range(1000000)",
    };
    for (int i = 0; i < 5; i++) {
        st = knut_duck_query(conn, bad[i], &rows, &err);
        int64_t n = 0;
        if (st == KNUT_OK) /* some errors only show up while reading */
            st = knut_arrow_stream_count_rows(&rows, &n, &err);
        knut_arrow_stream_release(&rows);
        printf("  %s -> %s\n", knut_strerror(st), err.message);
    }
    knut_duck_conn_close(conn);
    knut_duck_db_close(db);
    return 0;
}
