/*
 * Arrow streams into DuckDB tables. The stream is exposed to SQL through
 * DuckDB's Arrow scan under a hidden view for the length of one
 * CREATE TABLE AS / INSERT ... SELECT, so batches go straight from the
 * producer into DuckDB's storage without being gathered first.
 *
 * Two quirks of duckdb_arrow_scan (1.4) shape this file:
 *  - it never releases the schemas it asks the stream for, so the stream it
 *    sees hands out borrowed schemas (a no-op release) while this file owns
 *    the real one;
 *  - it creates a *persistent* view, so the work runs inside a transaction
 *    (the caller's, or its own when none is open) and the view is dropped
 *    before any commit: nothing that points into this process's memory
 *    ever reaches a database file.
 * A stream can be read only once, which is why the public API copies into
 * a table rather than leaving a view that a second query would find empty.
 */
#include "duck_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The view counter makes names unique across connections and threads. */
static atomic_uint_fast64_t view_seq;

typedef struct scan_src {
    struct ArrowArrayStream outer; /* what DuckDB reads */
    struct ArrowArrayStream src;   /* the caller's stream (owned) */
    struct ArrowSchema schema;     /* src's schema (owned) */
    char last_error[KNUT_ERROR_MSG_MAX];
} scan_src;

static void borrowed_schema_release(struct ArrowSchema *s)
{
    s->release = NULL;
}

static int scan_get_schema(struct ArrowArrayStream *stream, struct ArrowSchema *out)
{
    scan_src *a = stream->private_data;
    *out = a->schema;
    out->release = borrowed_schema_release;
    out->private_data = NULL;
    return 0;
}

static int scan_next(scan_src *a, struct ArrowArray *out)
{
    knut_error e = KNUT_ERROR_INIT;
    out->release = NULL;
    int rc = a->src.get_next(&a->src, out);
    if (rc != 0) {
        knut_arrow_stream_error(&a->src, rc, "reading the input stream", &e);
        snprintf(a->last_error, sizeof a->last_error, "%s", e.message);
        return rc;
    }
    if (!out->release)
        return 0;
    /* DuckDB trusts the buffers it is given; a malformed batch must end
     * the load with an error, not a crash inside the scan. */
    if (knut_arrow_array_validate(&a->schema, out, KNUT_ARROW_VALIDATE_DEFAULT, &e) != KNUT_OK) {
        knut_error_prefix(&e, "invalid batch in the input stream: ");
        snprintf(a->last_error, sizeof a->last_error, "%s", e.message);
        out->release(out);
        out->release = NULL;
        return EINVAL;
    }
    return 0;
}

/* Runs on a DuckDB worker thread. */
static int scan_get_next(struct ArrowArrayStream *stream, struct ArrowArray *out)
{
    scan_src *a = stream->private_data;
    int rc = scan_next(a, out);
    knut_duck__tsan_release(a);
    return rc;
}

static const char *scan_last_error(struct ArrowArrayStream *stream)
{
    scan_src *a = stream->private_data;
    return a->last_error[0] ? a->last_error : NULL;
}

static void scan_outer_release(struct ArrowArrayStream *stream)
{
    /* DuckDB does not own the adapter: scan_src_free does. */
    stream->release = NULL;
}

static void scan_src_free(scan_src *a)
{
    if (!a)
        return;
    knut_arrow_schema_release(&a->schema);
    knut_arrow_stream_release(&a->src);
    free(a);
}

static knut_status run_sql(knut_duck_conn *conn, const char *sql, const char *what,
                           uint64_t *changes, knut_error *err)
{
    duckdb_result res;
    knut_status st = KNUT_OK;
    knut_duck__conn_begin(conn);
    if (duckdb_query(conn->conn, sql, &res) != DuckDBSuccess) {
        if (what)
            st = knut_duck__result_error(&res, what, err);
        else
            st = KNUT_ERROR;
    } else if (changes) {
        *changes = (uint64_t)duckdb_rows_changed(&res);
    }
    duckdb_destroy_result(&res);
    return st;
}

/* Loads stream through a hidden view: into a new temp table `name`
 * (append == 0) or appended to table `name`. */
static knut_status load_stream(knut_duck_conn *conn, const char *name,
                               struct ArrowArrayStream *stream, int append, uint64_t *rows,
                               knut_error *err)
{
    knut_status st = KNUT_OK;
    knut_buf sql = KNUT_BUF_INIT;
    knut_buf drop = KNUT_BUF_INIT;
    knut_arrow_type_info t;
    int own_txn = 0, have_view = 0;
    char view[64];
    char what[KNUT_ERROR_MSG_MAX / 4];
    scan_src *a = calloc(1, sizeof *a);

    snprintf(what, sizeof what, "%s stream into table '%s'", append ? "appending" : "loading",
             name);
    if (!a) {
        st = knut_error_set(err, KNUT_ENOMEM, "%s: out of memory", what);
        goto cleanup;
    }
    if (!stream->release) {
        st = knut_error_set(err, KNUT_EINVAL, "%s: the stream was already released", what);
        goto cleanup;
    }
    knut_arrow_stream_move(&a->src, stream);
    int rc = a->src.get_schema(&a->src, &a->schema);
    if (rc != 0) {
        a->schema.release = NULL;
        st = knut_arrow_stream_error(&a->src, rc, "reading the stream schema", err);
        knut_error_prefix(err, "%s: ", what);
        goto cleanup;
    }
    st = knut_arrow_schema_parse_type(&a->schema, &t, err);
    if (st == KNUT_OK && (t.type != KNUT_ARROW_STRUCT || a->schema.n_children < 1))
        st = knut_error_set(err, KNUT_EINVAL,
                            "the stream's schema is not a struct of columns (format '%s')",
                            a->schema.format);
    if (st != KNUT_OK) {
        knut_error_prefix(err, "%s: ", what);
        goto cleanup;
    }
    a->outer.get_schema = scan_get_schema;
    a->outer.get_next = scan_get_next;
    a->outer.get_last_error = scan_last_error;
    a->outer.release = scan_outer_release;
    a->outer.private_data = a;

    /* Inside the caller's open transaction the view lives (and is dropped)
     * in theirs, and their commit or rollback decides about the rows. */
    if (!knut_duck_conn_in_transaction(conn)) {
        st = knut_duck_conn_begin(conn, err);
        if (st != KNUT_OK) {
            knut_error_prefix(err, "%s: ", what);
            goto cleanup;
        }
        own_txn = 1;
    }
    snprintf(view, sizeof view, "__knut_stream_%llu",
             (unsigned long long)atomic_fetch_add(&view_seq, 1));
    knut_duck__conn_begin(conn);
    if (duckdb_arrow_scan(conn->conn, view, (duckdb_arrow_stream)&a->outer) != DuckDBSuccess) {
        st = knut_error_set(err, KNUT_EUNSUPPORTED,
                            "%s: DuckDB's Arrow scan rejected the stream (unsupported column "
                            "type, or a read-only database)",
                            what);
        goto cleanup;
    }
    have_view = 1;

    if (append) {
        knut_buf_puts(&sql, "INSERT INTO ");
        knut_duck_ident(&sql, name);
    } else {
        knut_buf_puts(&sql, "CREATE OR REPLACE TEMP TABLE ");
        knut_duck_ident(&sql, name);
        knut_buf_puts(&sql, " AS");
    }
    knut_buf_puts(&sql, " SELECT * FROM ");
    knut_duck_ident(&sql, view);
    st = knut_buf_check(&sql, err);
    if (st != KNUT_OK)
        goto cleanup;
    st = run_sql(conn, sql.data, what, rows, err);
    knut_duck__tsan_acquire(a);

cleanup:
    if (have_view) {
        knut_buf_puts(&drop, "DROP VIEW IF EXISTS ");
        knut_duck_ident(&drop, view);
        if (knut_buf_check(&drop, NULL) == KNUT_OK)
            run_sql(conn, drop.data, NULL, NULL, NULL);
    }
    if (own_txn) {
        if (st == KNUT_OK)
            st = knut_duck_conn_commit(conn, err);
        else
            knut_duck_conn_rollback(conn, NULL);
    }
    scan_src_free(a);
    /* Ownership was taken also on failure. */
    knut_arrow_stream_release(stream);
    knut_buf_reset(&sql);
    knut_buf_reset(&drop);
    return st;
}

knut_status knut_duck_register_stream(knut_duck_conn *conn, const char *name,
                                      struct ArrowArrayStream *stream, knut_error *err)
{
    KNUT_ASSERT_ARG(err, stream != NULL);
    if (!conn || !name || !name[0]) {
        knut_arrow_stream_release(stream);
        return knut_error_set(err, KNUT_EINVAL, "registering stream: no connection or table name");
    }
    return load_stream(conn, name, stream, 0, NULL, err);
}

knut_status knut_duck_append_stream(knut_duck_conn *conn, const char *table,
                                    struct ArrowArrayStream *stream, uint64_t *rows,
                                    knut_error *err)
{
    KNUT_ASSERT_ARG(err, stream != NULL);
    if (rows)
        *rows = 0;
    if (!conn || !table || !table[0]) {
        knut_arrow_stream_release(stream);
        return knut_error_set(err, KNUT_EINVAL, "appending stream: no connection or table name");
    }
    return load_stream(conn, table, stream, 1, rows, err);
}
