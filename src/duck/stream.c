/*
 * Query results as Arrow C streams. A DuckDB streaming result is pulled one
 * chunk at a time and each chunk is converted with DuckDB's own Arrow
 * bridge, so a result of any size is read in bounded memory. The stream
 * owns the result (and, for one-shot queries, the prepared statement) and
 * holds a connection reference, so releasing it is always safe.
 */
#include "duck_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct duck_stream {
    knut_duck_conn *conn;   /* a reference */
    uint64_t epoch;         /* the statement this result belongs to */
    duckdb_prepared_statement prep; /* owned, or NULL */
    duckdb_result res;
    duckdb_arrow_options opts;
    idx_t ncols;
    duckdb_logical_type *types;
    const char **names;     /* owned by res */
    int done;
    int failed;             /* sticky: the stream never recovers */
    int failed_errno;
    char last_error[KNUT_ERROR_MSG_MAX];
} duck_stream;

static int stream_fail(duck_stream *s, int code, const knut_error *e)
{
    s->failed = 1;
    s->failed_errno = code;
    snprintf(s->last_error, sizeof s->last_error, "%s", e->message);
    return code;
}

static int errno_of(knut_status st)
{
    switch (st) {
    case KNUT_ENOMEM:
        return ENOMEM;
    case KNUT_EINVAL:
    case KNUT_EPARSE:
        return EINVAL;
    case KNUT_ECANCELLED:
        return ECANCELED;
    default:
        return EIO;
    }
}

static int duck_stream_get_schema(struct ArrowArrayStream *stream, struct ArrowSchema *out)
{
    duck_stream *s = stream->private_data;
    out->release = NULL;
    /* The schema comes from the result's types, so it stays available even
     * after a read error; it is rebuilt per call because each caller owns
     * (and releases) its copy. */
    duckdb_error_data ed = duckdb_to_arrow_schema(s->opts, s->types, s->names, s->ncols, out);
    if (ed && duckdb_error_data_has_error(ed)) {
        knut_error e = KNUT_ERROR_INIT;
        knut_status st = knut_duck__error_data(&ed, "converting the result schema to Arrow", &e);
        out->release = NULL;
        snprintf(s->last_error, sizeof s->last_error, "%s", e.message);
        return errno_of(st);
    }
    if (ed)
        duckdb_destroy_error_data(&ed);
    return 0;
}

static int duck_stream_get_next(struct ArrowArrayStream *stream, struct ArrowArray *out)
{
    duck_stream *s = stream->private_data;
    knut_error e = KNUT_ERROR_INIT;
    out->release = NULL;
    if (s->failed)
        return s->failed_errno;
    if (s->done)
        return 0;
    if ((uint64_t)atomic_load(&s->conn->epoch) != s->epoch) {
        knut_error_set(&e, KNUT_EINVAL,
                       "reading results: result stream was superseded by a later statement "
                       "on the same connection");
        return stream_fail(s, EINVAL, &e);
    }
    for (;;) {
        duckdb_data_chunk chunk = duckdb_fetch_chunk(s->res);
        if (!chunk) {
            /* NULL means either the end or a failure while executing. */
            if (duckdb_result_error(&s->res) != NULL) {
                knut_status st = knut_duck__result_error(&s->res, "reading results", &e);
                return stream_fail(s, errno_of(st), &e);
            }
            s->done = 1;
            return 0;
        }
        if (duckdb_data_chunk_get_size(chunk) == 0) {
            duckdb_destroy_data_chunk(&chunk);
            continue;
        }
        duckdb_error_data ed = duckdb_data_chunk_to_arrow(s->opts, chunk, out);
        duckdb_destroy_data_chunk(&chunk);
        if (ed && duckdb_error_data_has_error(ed)) {
            knut_status st = knut_duck__error_data(&ed, "converting results to Arrow", &e);
            if (out->release)
                out->release(out);
            out->release = NULL;
            return stream_fail(s, errno_of(st), &e);
        }
        if (ed)
            duckdb_destroy_error_data(&ed);
        return 0;
    }
}

static const char *duck_stream_last_error(struct ArrowArrayStream *stream)
{
    duck_stream *s = stream->private_data;
    return s->last_error[0] ? s->last_error : NULL;
}

static void duck_stream_free(duck_stream *s)
{
    if (!s)
        return;
    if (s->types) {
        for (idx_t i = 0; i < s->ncols; i++)
            if (s->types[i])
                duckdb_destroy_logical_type(&s->types[i]);
        free(s->types);
    }
    free(s->names);
    if (s->opts)
        duckdb_destroy_arrow_options(&s->opts);
    duckdb_destroy_result(&s->res);
    if (s->prep)
        duckdb_destroy_prepare(&s->prep);
    knut_duck__conn_unref(s->conn);
    free(s);
}

static void duck_stream_release(struct ArrowArrayStream *stream)
{
    if (!stream || !stream->release)
        return;
    duck_stream_free(stream->private_data);
    stream->private_data = NULL;
    stream->release = NULL;
}

knut_status knut_duck__stream_from_prepared(knut_duck_conn *conn,
                                            duckdb_prepared_statement *prep, int own_prep,
                                            struct ArrowArrayStream *out, knut_error *err)
{
    knut_status st = KNUT_OK;
    duckdb_pending_result pending = NULL;
    duck_stream *s = calloc(1, sizeof *s);
    out->release = NULL;
    if (!s) {
        st = knut_error_set(err, KNUT_ENOMEM, "running query: out of memory");
        goto cleanup;
    }
    s->conn = knut_duck__conn_ref(conn);
    s->epoch = knut_duck__conn_begin(conn);

    /* The streaming variants are deprecated in 1.4 but remain the only way
     * to read a result without materialising it; the plain
     * duckdb_execute_prepared would hold every row in memory. */
    if (duckdb_pending_prepared_streaming(*prep, &pending) != DuckDBSuccess) {
        st = knut_duck__text_error(duckdb_pending_error(pending), "running query", err);
        goto cleanup;
    }
    /* The result must be destroyed even when execution fails: it holds the
     * error; duck_stream_free does that. */
    if (duckdb_execute_pending(pending, &s->res) != DuckDBSuccess) {
        st = knut_duck__result_error(&s->res, "running query", err);
        knut_duck__conn_txn_note(conn, *prep, 0);
        goto cleanup;
    }
    knut_duck__conn_txn_note(conn, *prep, 1);
    s->ncols = duckdb_column_count(&s->res);
    s->opts = duckdb_result_get_arrow_options(&s->res);
    s->types = calloc(s->ncols ? s->ncols : 1, sizeof *s->types);
    s->names = calloc(s->ncols ? s->ncols : 1, sizeof *s->names);
    if (!s->types || !s->names) {
        st = knut_error_set(err, KNUT_ENOMEM, "running query: out of memory");
        goto cleanup;
    }
    for (idx_t i = 0; i < s->ncols; i++) {
        s->types[i] = duckdb_column_logical_type(&s->res, i);
        s->names[i] = duckdb_column_name(&s->res, i);
    }
    if (own_prep) {
        s->prep = *prep;
        *prep = NULL;
    }
    out->get_schema = duck_stream_get_schema;
    out->get_next = duck_stream_get_next;
    out->get_last_error = duck_stream_last_error;
    out->release = duck_stream_release;
    out->private_data = s;
    s = NULL;

cleanup:
    if (pending)
        duckdb_destroy_pending(&pending);
    duck_stream_free(s);
    return st;
}

/* Runs statement i of n materialised: it is not the one whose rows count. */
static knut_status duck_run_extracted(knut_duck_conn *conn, duckdb_extracted_statements ext,
                                      idx_t i, idx_t n, knut_error *err)
{
    duckdb_prepared_statement prep = NULL;
    duckdb_result res;
    int have_res = 0;
    knut_status st = KNUT_OK;
    char what[96];
    snprintf(what, sizeof what, "preparing statement %llu of %llu", (unsigned long long)i + 1,
             (unsigned long long)n);
    if (duckdb_prepare_extracted_statement(conn->conn, ext, i, &prep) != DuckDBSuccess) {
        st = knut_duck__text_error(duckdb_prepare_error(prep), what, err);
        goto cleanup;
    }
    knut_duck__conn_begin(conn);
    have_res = 1;
    if (duckdb_execute_prepared(prep, &res) != DuckDBSuccess) {
        snprintf(what, sizeof what, "running statement %llu of %llu", (unsigned long long)i + 1,
                 (unsigned long long)n);
        st = knut_duck__result_error(&res, what, err);
    }
    knut_duck__conn_txn_note(conn, prep, st == KNUT_OK);

cleanup:
    if (have_res)
        duckdb_destroy_result(&res);
    duckdb_destroy_prepare(&prep);
    return st;
}

knut_status knut_duck_query(knut_duck_conn *conn, const char *sql,
                            struct ArrowArrayStream *out, knut_error *err)
{
    KNUT_ASSERT_ARG(err, out != NULL);
    out->release = NULL;
    KNUT_ASSERT_ARG(err, conn != NULL);
    KNUT_ASSERT_ARG(err, sql != NULL);
    knut_status st = KNUT_OK;
    duckdb_extracted_statements ext = NULL;
    duckdb_prepared_statement prep = NULL;

    /* Parsing alone already closes an open result stream in DuckDB. */
    knut_duck__conn_begin(conn);
    idx_t n = duckdb_extract_statements(conn->conn, sql, &ext);
    if (n == 0) {
        const char *msg = duckdb_extract_statements_error(ext);
        if (msg)
            st = knut_duck__text_error(msg, "parsing SQL", err);
        else
            st = knut_error_set(err, KNUT_EINVAL, "parsing SQL: no statement to run");
        goto cleanup;
    }
    for (idx_t i = 0; i + 1 < n; i++) {
        st = duck_run_extracted(conn, ext, i, n, err);
        if (st != KNUT_OK)
            goto cleanup;
    }
    if (duckdb_prepare_extracted_statement(conn->conn, ext, n - 1, &prep) != DuckDBSuccess) {
        char what[96] = "preparing query";
        if (n > 1)
            snprintf(what, sizeof what, "preparing statement %llu of %llu", (unsigned long long)n,
                     (unsigned long long)n);
        st = knut_duck__text_error(duckdb_prepare_error(prep), what, err);
        goto cleanup;
    }
    st = knut_duck__stream_from_prepared(conn, &prep, 1, out, err);

cleanup:
    if (prep)
        duckdb_destroy_prepare(&prep);
    duckdb_destroy_extracted(&ext);
    return st;
}
