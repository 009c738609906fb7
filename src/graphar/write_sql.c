/*
 * SQL plumbing for the GraphAr writer: quoting (every identifier and
 * literal that reaches DuckDB as text goes through here), GraphAr -> DuckDB
 * types, a row cursor over result streams, the prepared chunk COPY, and the
 * diagnosis that turns DuckDB's "Could not convert" into an error naming
 * the source row and column. File paths and row ranges travel as statement
 * parameters, never as SQL text.
 */
#include "write_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- types ------------------------------------------------------------ */

void knut_graphar__write_sql_type(knut_buf *b, const knut_graphar_property *p)
{
    knut_graphar_type t = knut_graphar__prop_scalar(p);
    knut_buf_puts(b, knut_graphar__sql_scalar(t));
    if (knut_graphar__prop_is_list(p))
        knut_buf_puts(b, "[]");
}

void knut_graphar__write_sql_parse_type(knut_buf *b, const knut_graphar_property *p)
{
    knut_graphar_type t = knut_graphar__prop_scalar(p);
    knut_buf_puts(b, t == KNUT_GRAPHAR_TYPE_TIMESTAMP ? "TIMESTAMP" : knut_graphar__sql_scalar(t));
    if (knut_graphar__prop_is_list(p))
        knut_buf_puts(b, "[]");
}

void knut_graphar__write_sql_cast(knut_buf *b, const char *column, const knut_graphar_property *p)
{
    /* DuckDB casts text and TIMESTAMP WITH TIME ZONE (in UTC, the writer's
     * TimeZone) to TIMESTAMP, not straight to TIMESTAMP_MS: two steps. */
    knut_graphar_type t = knut_graphar__prop_scalar(p);
    int two = t == KNUT_GRAPHAR_TYPE_TIMESTAMP;
    knut_buf_puts(b, two ? "CAST(CAST(s." : "CAST(s.");
    knut_duck_ident(b, column);
    knut_buf_puts(b, " AS ");
    knut_graphar__write_sql_parse_type(b, p);
    if (two) {
        knut_buf_puts(b, ") AS ");
        knut_graphar__write_sql_type(b, p);
    }
    knut_buf_puts(b, ")");
}

size_t knut_graphar__write_prop_base(const knut_graphar_property_group *groups,
                                     const knut_graphar_property_group *g)
{
    size_t n = 0;
    for (const knut_graphar_property_group *x = groups; x < g; x++)
        n += x->n_props;
    return n;
}

void knut_graphar__write_sql_source(knut_buf *b, const char *query, const char *table)
{
    if (query) {
        knut_buf_puts(b, "(");
        knut_buf_puts(b, query);
        /* A newline first, so a query ending in a -- comment still closes. */
        knut_buf_puts(b, "\n)");
    } else {
        knut_duck_ident(b, table);
    }
}

/* ---- running SQL ------------------------------------------------------- */

knut_status knut_graphar__write_exec(knut_graphar_writer *w, const char *sql, const char *what,
                                     knut_error *err)
{
    knut_status st = knut_duck_exec(w->conn, sql, err);
    if (st)
        knut_error_prefix(err, "%s: ", what);
    return st;
}

knut_status knut_graphar__write_rows_open(gar_rows *r, knut_duck_conn *c, const char *sql,
                                          knut_error *err)
{
    memset(r, 0, sizeof *r);
    r->row = -1;
    r->index = -1;
    knut_status st = knut_duck_query(c, sql, &r->stream, err);
    if (st)
        return st;
    int rc = r->stream.get_schema(&r->stream, &r->schema);
    if (rc) {
        st = knut_arrow_stream_error(&r->stream, rc, "reading a result schema", err);
        knut_graphar__write_rows_close(r);
    }
    return st;
}

knut_status knut_graphar__write_rows_next(gar_rows *r, knut_error *err)
{
    r->row++;
    r->index++;
    while (!r->have_view || r->row >= r->view.length) {
        if (r->have_view) {
            knut_arrow_view_reset(&r->view);
            r->have_view = 0;
        }
        knut_arrow_array_release(&r->batch);
        int rc = r->stream.get_next(&r->stream, &r->batch);
        if (rc)
            return knut_arrow_stream_error(&r->stream, rc, "reading a result", err);
        if (!r->batch.release)
            return KNUT_EOF;
        knut_status st = knut_arrow_view_init(&r->view, &r->schema, &r->batch, err);
        if (st)
            return st;
        r->have_view = 1;
        r->row = 0;
    }
    return KNUT_OK;
}

void knut_graphar__write_rows_text(const gar_rows *r, int64_t k, char *buf, size_t cap)
{
    const knut_arrow_view *v = knut_graphar_w__rows_col(r, k);
    int64_t i = knut_graphar_w__rows_at(r), len = 0;
    if (knut_arrow_view_is_null(v, i)) {
        snprintf(buf, cap, "NULL");
        return;
    }
    switch (v->type.type) {
    case KNUT_ARROW_UTF8:
    case KNUT_ARROW_LARGE_UTF8: {
        const char *s = knut_arrow_view_get_str(v, i, &len);
        /* Long values are cut: the message names the row anyway. */
        if (len > 200)
            snprintf(buf, cap, "%.200s...", s);
        else
            snprintf(buf, cap, "%.*s", (int)len, s);
        return;
    }
    default:
        snprintf(buf, cap, "%lld", (long long)knut_arrow_view_get_int64(v, i));
    }
}

void knut_graphar__write_rows_close(gar_rows *r)
{
    if (r->have_view)
        knut_arrow_view_reset(&r->view);
    r->have_view = 0;
    knut_arrow_array_release(&r->batch);
    knut_arrow_schema_release(&r->schema);
    knut_arrow_stream_release(&r->stream);
}

knut_status knut_graphar__write_query_i64(knut_duck_conn *c, const char *sql, int64_t *out,
                                          size_t n, const char *what, knut_error *err)
{
    gar_rows r;
    knut_status st = knut_graphar__write_rows_open(&r, c, sql, err);
    if (st)
        return knut_error_prefix(err, "%s: ", what);
    st = knut_graphar__write_rows_next(&r, err);
    if (st == KNUT_EOF)
        st = knut_error_set(err, KNUT_ERROR, "%s: no result row", what);
    else if (st)
        knut_error_prefix(err, "%s: ", what);
    else if (r.view.n_children < (int64_t)n)
        st = knut_error_set(err, KNUT_ERROR, "%s: expected %zu columns", what, n);
    for (size_t k = 0; !st && k < n; k++) {
        const knut_arrow_view *v = knut_graphar_w__rows_col(&r, (int64_t)k);
        int64_t i = knut_graphar_w__rows_at(&r);
        out[k] = knut_arrow_view_is_null(v, i) ? -1 : knut_arrow_view_get_int64(v, i);
    }
    knut_graphar__write_rows_close(&r);
    return st;
}

knut_status knut_graphar__write_columns(knut_duck_conn *c, const char *relation, char ***names,
                                        size_t *n, knut_error *err)
{
    *names = NULL;
    *n = 0;
    knut_buf sql = KNUT_BUF_INIT;
    knut_buf_printf(&sql, "SELECT * FROM %s AS s LIMIT 0", relation);
    knut_status st = knut_buf_check(&sql, err);
    gar_rows r;
    memset(&r, 0, sizeof r);
    if (!st)
        st = knut_graphar__write_rows_open(&r, c, sql.data, err);
    if (!st) {
        char **v = calloc((size_t)r.schema.n_children + 1, sizeof *v);
        if (!v)
            st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
        for (int64_t k = 0; !st && k < r.schema.n_children; k++) {
            const char *nm = r.schema.children[k]->name;
            if (!(v[k] = strdup(nm ? nm : "")))
                st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
            else
                (*n)++;
        }
        if (st) {
            knut_graphar__strv_free(v, *n);
            *n = 0;
        } else {
            *names = v;
        }
    }
    knut_graphar__write_rows_close(&r);
    knut_buf_reset(&sql);
    return st;
}

/* ---- chunk COPY -------------------------------------------------------- */

knut_status knut_graphar__write_copy_prepare(knut_graphar_writer *w, gar_copy *cp,
                                             const char *select, knut_graphar_file_type ft,
                                             const char *const *cols, size_t n_cols,
                                             const char *const *string_cols, size_t n_string_cols,
                                             int zstd, knut_error *err)
{
    cp->stmt = NULL;
    knut_buf sql = KNUT_BUF_INIT, head = KNUT_BUF_INIT;
    knut_buf_printf(&sql, "COPY (%s) TO $1 (", select);
    if (ft == KNUT_GRAPHAR_FILE_PARQUET) {
        /* Chunk files have no extension, so the format is always named. */
        knut_buf_puts(&sql, "FORMAT parquet, COMPRESSION ");
        /* COPY options are constants in DuckDB's grammar, never parameters. */
        const char *codec = zstd ? "zstd" : w->compression;
        knut_duck_literal(&sql, codec, strlen(codec));
    } else {
        /* The reference's CSV dialect (Arrow's writer): a header of quoted
         * names, ',', '"' quoting, null as an empty field, every string
         * quoted so an empty string stays distinguishable from null.
         * DuckDB's own header would quote only the forced columns, so the
         * header goes in as PREFIX; SUFFIX replaces the last row's newline
         * (chunks are never empty, so no blank line appears). */
        for (size_t i = 0; i < n_cols; i++) {
            if (i)
                knut_buf_putc(&head, ',');
            knut_buf_putc(&head, '"');
            for (const char *c = cols[i]; *c; c++) {
                if (*c == '"')
                    knut_buf_putc(&head, '"');
                knut_buf_putc(&head, *c);
            }
            knut_buf_putc(&head, '"');
        }
        knut_buf_putc(&head, '\n');
        knut_buf_puts(&sql, "FORMAT csv, HEADER false, DELIMITER ',', QUOTE '\"', "
                            "ESCAPE '\"', NULLSTR '', SUFFIX '\n', PREFIX ");
        knut_duck_literal(&sql, head.data, head.len); /* a COPY option: constant */
        if (n_string_cols) {
            knut_buf_puts(&sql, ", FORCE_QUOTE (");
            for (size_t i = 0; i < n_string_cols; i++) {
                if (i)
                    knut_buf_puts(&sql, ", ");
                knut_duck_ident(&sql, string_cols[i]);
            }
            knut_buf_puts(&sql, ")");
        }
    }
    knut_buf_puts(&sql, ")");
    knut_status st = knut_buf_check(&head, err);
    if (!st)
        st = knut_buf_check(&sql, err);
    if (!st)
        st = knut_duck_stmt_prepare(&cp->stmt, w->conn, sql.data, err);
    knut_buf_reset(&sql);
    knut_buf_reset(&head);
    return st;
}

knut_status knut_graphar__write_copy_run(gar_copy *cp, const char *path, int64_t lo, int64_t hi,
                                         knut_error *err)
{
    knut_status st = knut_graphar__write_check_stop(path, err);
    if (st)
        return st;
    if (!(st = knut_graphar__write_mkdirs(path, 0, err)))
        st = knut_duck_stmt_bind_text(cp->stmt, 1, path, strlen(path), err);
    if (!st)
        st = knut_duck_stmt_bind_int64(cp->stmt, 2, lo, err);
    if (!st)
        st = knut_duck_stmt_bind_int64(cp->stmt, 3, hi, err);
    if (!st)
        st = knut_duck_stmt_exec(cp->stmt, NULL, err);
    if (st)
        knut_error_prefix(err, "writing %s: ", path);
    return st;
}

void knut_graphar__write_copy_free(gar_copy *cp)
{
    knut_duck_stmt_free(cp->stmt);
    cp->stmt = NULL;
}

/* ---- temp tables ------------------------------------------------------- */

char *knut_graphar__write_temp_name(knut_graphar_writer *w, const char *tag)
{
    char *s = malloc(strlen(tag) + 32);
    if (s)
        sprintf(s, "__knut_gar_%s%u", tag, w->seq++);
    return s;
}

knut_status knut_graphar__write_table_count(knut_graphar_writer *w, const char *table,
                                            int64_t *count, knut_error *err)
{
    knut_buf sql = KNUT_BUF_INIT;
    knut_buf_puts(&sql, "SELECT count(*), min(rowid), max(rowid) FROM ");
    knut_duck_ident(&sql, table);
    int64_t v[3] = {0, 0, 0};
    knut_status st = knut_buf_check(&sql, err);
    if (!st)
        st = knut_graphar__write_query_i64(w->conn, sql.data, v, 3, "counting rows", err);
    knut_buf_reset(&sql);
    if (st)
        return st;
    /* rowid doubles as the write position: a fresh table must number its
     * rows 0..n-1 in insertion order, or chunks would miss rows. */
    if (v[0] > 0 && (v[1] != 0 || v[2] != v[0] - 1))
        return knut_error_set(err, KNUT_ERROR,
                              "internal: table %s has rowids %lld..%lld for %lld rows", table,
                              (long long)v[1], (long long)v[2], (long long)v[0]);
    *count = v[0];
    return KNUT_OK;
}

/* ---- conversion diagnosis ---------------------------------------------- */

knut_status knut_graphar__write_diagnose_casts(knut_graphar_writer *w, const char *relation,
                                               const char *source_name, const char *const *columns,
                                               const char *const *types, const char *const *labels,
                                               size_t n, knut_error *err)
{
    if (n == 0)
        return KNUT_OK;
    /* One streamed pass in source order: the first row where a non-null
     * value gives NULL under TRY_CAST is the culprit. Counting rows here,
     * not in SQL, keeps the row number exact whatever DuckDB parallelises. */
    knut_buf sql = KNUT_BUF_INIT;
    knut_buf_puts(&sql, "SELECT CASE");
    for (size_t i = 0; i < n; i++) {
        knut_buf_puts(&sql, " WHEN s.");
        knut_duck_ident(&sql, columns[i]);
        knut_buf_puts(&sql, " IS NOT NULL AND TRY_CAST(s.");
        knut_duck_ident(&sql, columns[i]);
        knut_buf_printf(&sql, " AS %s) IS NULL THEN %zu", types[i], i + 1);
    }
    knut_buf_puts(&sql, " ELSE 0 END::BIGINT AS bad, CASE");
    for (size_t i = 0; i < n; i++) {
        knut_buf_puts(&sql, " WHEN s.");
        knut_duck_ident(&sql, columns[i]);
        knut_buf_puts(&sql, " IS NOT NULL AND TRY_CAST(s.");
        knut_duck_ident(&sql, columns[i]);
        knut_buf_printf(&sql, " AS %s) IS NULL THEN CAST(s.", types[i]);
        knut_duck_ident(&sql, columns[i]);
        knut_buf_puts(&sql, " AS VARCHAR)");
    }
    knut_buf_printf(&sql, " END AS val FROM %s AS s", relation);
    knut_error local = KNUT_ERROR_INIT;
    knut_status st = knut_buf_check(&sql, &local);
    gar_rows r;
    memset(&r, 0, sizeof r);
    if (!st)
        st = knut_graphar__write_rows_open(&r, w->conn, sql.data, &local);
    knut_buf_reset(&sql);
    if (st)
        return KNUT_OK; /* keep DuckDB's first error */
    knut_status found = KNUT_OK;
    while (knut_graphar__write_rows_next(&r, &local) == KNUT_OK) {
        const knut_arrow_view *bad = knut_graphar_w__rows_col(&r, 0);
        int64_t k = knut_arrow_view_get_int64(bad, knut_graphar_w__rows_at(&r));
        if (k <= 0)
            continue;
        char val[256];
        knut_graphar__write_rows_text(&r, 1, val, sizeof val);
        found = knut_error_set(err, KNUT_EINVAL,
                               "%s: row %lld, column '%s': cannot convert '%s' to %s",
                               source_name, (long long)r.index + 1, labels[k - 1], val,
                               types[k - 1]);
        break;
    }
    knut_graphar__write_rows_close(&r);
    return found;
}

knut_status knut_graphar__write_check_stop(const char *what, knut_error *err)
{
    if (!knut_signal_stop_requested())
        return KNUT_OK;
    return knut_error_set(err, KNUT_ECANCELLED, "%s: interrupted", what);
}

double knut_graphar__write_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

knut_status knut_graphar__write_first_row(knut_graphar_writer *w, const char *relation,
                                          const char *cond, const char *value, int64_t *row,
                                          char *val, size_t cap, knut_error *err)
{
    *row = -1;
    if (val && cap)
        val[0] = '\0';
    knut_buf sql = KNUT_BUF_INIT;
    knut_buf_printf(&sql, "SELECT coalesce((%s), false)::BIGINT AS bad", cond);
    if (value)
        knut_buf_printf(&sql, ", CASE WHEN coalesce((%s), false) THEN CAST((%s) AS VARCHAR) END",
                        cond, value);
    knut_buf_printf(&sql, " FROM %s AS s", relation);
    knut_status st = knut_buf_check(&sql, err);
    gar_rows r;
    memset(&r, 0, sizeof r);
    if (!st)
        st = knut_graphar__write_rows_open(&r, w->conn, sql.data, err);
    knut_buf_reset(&sql);
    while (!st && (st = knut_graphar__write_rows_next(&r, err)) == KNUT_OK) {
        const knut_arrow_view *bad = knut_graphar_w__rows_col(&r, 0);
        if (!knut_arrow_view_get_int64(bad, knut_graphar_w__rows_at(&r)))
            continue;
        *row = r.index + 1;
        if (value && val)
            knut_graphar__write_rows_text(&r, 1, val, cap);
        break;
    }
    if (st == KNUT_EOF)
        st = KNUT_OK;
    knut_graphar__write_rows_close(&r);
    return st;
}

knut_status knut_graphar__write_report_cast_failure(knut_graphar_writer *w, const char *relation,
                                                    const char *source_name, const char *what,
                                                    const char **cols, char **types, size_t n,
                                                    knut_status st, knut_error *err)
{
    int complete = cols != NULL && types != NULL;
    for (size_t k = 0; complete && k < n; k++)
        complete = types[k] != NULL;
    knut_error diag = KNUT_ERROR_INIT;
    knut_status d = KNUT_OK;
    if (complete)
        d = knut_graphar__write_diagnose_casts(w, relation, source_name, cols,
                                               (const char *const *)types, cols, n, &diag);
    for (size_t k = 0; types && k < n; k++)
        free(types[k]);
    free(types);
    free(cols);
    if (d) {
        if (err)
            *err = diag;
        knut_error_prefix(err, "%s: ", what);
        return d;
    }
    knut_duck_error_reading(err); /* as sync says it of the same file */
    knut_error_prefix(err, "%s: reading %s: ", what, source_name);
    return st;
}
