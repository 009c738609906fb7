/*
 * Staging checks that turn a bad drop file into a clear reason instead of
 * a confusing later error or silently changed types:
 *
 *  - an empty (0-byte) file is refused before DuckDB sniffs it (the sniffer
 *    would invent a column and the reason would be "column 'id' is
 *    missing");
 *  - a CSV whose rows do not all have the header's number of fields makes
 *    DuckDB's sniffer give up on the delimiter and read every line as one
 *    column; the reason then names the first line whose field count differs;
 *  - a NUL byte in a key is refused with its row (the sinks would cut the
 *    key there or refuse the whole batch);
 *  - files of one round whose columns disagree on type (a CSV column
 *    inferred as VARCHAR in one file, BIGINT in the others) are not unioned
 *    into the widest type, which would change the type of every good file's
 *    values: the batch is refused with KNUT_EINVAL, so the round applies the
 *    files one by one and the sink judges each. A column that is null in
 *    every row of a file is left out of that file's part of the union (its
 *    inferred type means nothing) and comes back as NULL.
 *
 * Paths and column names reach DuckDB as parameters or quoted identifiers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sync_int.h"

/* Diagnose a CSV's field counts only up to this size (read_text holds the
 * whole file; this runs on the failure path only). */
#define SYNC_CSV_DIAG_MAX_BYTES ((int64_t)64 << 20)

knut_status knut_sync__stage_precheck(const sync_file *f, knut_error *err)
{
    if (f->size == 0)
        return knut_error_set(err, KNUT_EINVAL, "empty file (0 bytes)");
    return KNUT_OK;
}

/* The first line (1-based; CR dropped) whose field count differs from
 * the header's. Lines with a quote are passed over (a quoted comma would
 * be miscounted); this only runs once DuckDB could not read the header. */
#define LINES_SQL                                                                        \
    "WITH f AS (SELECT string_split(replace(content, chr(13), ''), chr(10)) AS ls "      \
    "FROM read_text($1::VARCHAR)), "                                                     \
    "l AS (SELECT unnest(ls) AS line, generate_subscripts(ls, 1) AS n FROM f), "         \
    "h AS (SELECT len(string_split(line, ',')) AS hc FROM l WHERE n = 1), "              \
    "bad AS (SELECT n, len(string_split(line, ',')) AS fc, hc FROM l, h "                \
    "WHERE n > 1 AND line <> '' AND strpos(line, '\"') = 0 "                              \
    "AND len(string_split(line, ',')) <> hc ORDER BY n LIMIT 1) "

knut_status knut_sync__stage_explain(knut_duck_conn *c, const sync_file *f, knut_status st,
                                     knut_error *err)
{
    int64_t gave_up = 0, line = 0, fields = 0, header = 0;
    struct stat sb;
    if (stat(f->path, &sb) != 0 && errno == ENOENT)
        /* not the file's fault: the round counts it pending */
        return knut_error_set(err, KNUT_ENOTFOUND, "vanished while being read");
    /* DuckDB's advice and the echo of our statement cut off: the reason
     * keeps what broke and where (file, line), not our SQL text. */
    knut_duck_error_reading(err);
    if (!err || f->format != KNUT_SYNC_FORMAT_CSV || f->size > SYNC_CSV_DIAG_MAX_BYTES)
        return st;
    /* DuckDB's sniffer gave up on the header: one column named like
     * "id,name,age", or no header at all (column0, column1, ...) */
    if (knut_sync__q_int(c,
              "SELECT ((count(*) = 1 AND bool_and(column_name LIKE '%,%')) OR "
              "bool_or(column_name = 'column0'))::BIGINT FROM "
              "(DESCRIBE SELECT * FROM read_csv($1::VARCHAR))",
              f->path, &gave_up, NULL) != KNUT_OK ||
        !gave_up)
        return st;
    if (knut_sync__q_int(c, LINES_SQL "SELECT n FROM bad", f->path, &line, NULL) != KNUT_OK || line == 0 ||
        knut_sync__q_int(c, LINES_SQL "SELECT fc FROM bad", f->path, &fields, NULL) != KNUT_OK ||
        knut_sync__q_int(c, LINES_SQL "SELECT hc FROM bad", f->path, &header, NULL) != KNUT_OK)
        return st;
    return knut_error_set(err, KNUT_EINVAL, "line %lld has %lld fields, the header has %lld",
                          (long long)line, (long long)fields, (long long)header);
}

/* A NUL byte in one key column: the first row (in the staged order). */
static knut_status key_nul(knut_duck_conn *c, const char *tbl, const knut_sync_prop *k,
                           knut_buf *q, knut_error *err)
{
    int64_t row = 0;
    knut_buf_clear(q);
    knut_buf_puts(q, "SELECT min(_knut_ord & 4294967295) FROM ");
    knut_duck_ident(q, tbl);
    knut_buf_puts(q, " WHERE strpos(CAST(");
    knut_duck_ident(q, k->column);
    knut_buf_puts(q, " AS VARCHAR), chr(0)) > 0");
    knut_status st = knut_buf_check(q, err);
    if (st == KNUT_OK)
        st = knut_sync__q_int(c, q->data, NULL, &row, err);
    if (st == KNUT_OK && row > 0)
        st = knut_error_set(err, KNUT_EINVAL, "key column '%s' has a NUL byte in row %lld",
                            k->column, (long long)row);
    return st;
}

knut_status knut_sync__stage_check_keys(knut_duck_conn *c, const knut_sync_table *t,
                                        const char *tbl, knut_error *err)
{
    knut_buf q = KNUT_BUF_INIT;
    knut_status st = KNUT_OK;
    for (size_t i = 0; st == KNUT_OK && i < t->n_vertices; i++)
        for (size_t k = 0; st == KNUT_OK && k < t->vertices[i].n_keys; k++)
            st = key_nul(c, tbl, &t->vertices[i].keys[k], &q, err);
    for (size_t i = 0; st == KNUT_OK && i < t->n_edges; i++) {
        const knut_sync_edge_step *e = &t->edges[i];
        for (size_t k = 0; st == KNUT_OK && k < e->from.n_keys; k++)
            st = key_nul(c, tbl, &e->from.keys[k], &q, err);
        for (size_t k = 0; st == KNUT_OK && k < e->to.n_keys; k++)
            st = key_nul(c, tbl, &e->to.keys[k], &q, err);
    }
    for (size_t i = 0; st == KNUT_OK && i < t->n_fk_edges; i++)
        st = key_nul(c, tbl, &(knut_sync_prop){.column = t->fk_edges[i].column}, &q, err);
    knut_buf_reset(&q);
    return st;
}

/* "('_knut_m0', '_knut_m3', ...)": staged table names are ours. */
static void table_list(knut_buf *b, const int *idx, size_t n)
{
    knut_buf_puts(b, "(");
    for (size_t i = 0; i < n; i++)
        knut_buf_printf(b, "%s'_knut_m%d'", i ? ", " : "", idx[i]);
    knut_buf_puts(b, ")");
}

/* How many types column col has among the staged files where it holds a
 * value (*kinds_out); more than one fails. */
static knut_status col_types(knut_duck_conn *c, const int *idx, size_t n, const sync_names *cols,
                             const char *col, knut_buf *q, int64_t *kinds_out, knut_error *err)
{
    int64_t kinds = 0;
    knut_buf_clear(q);
    knut_buf_puts(q, "SELECT count(DISTINCT t) FROM (");
    int first = 1;
    for (size_t i = 0; i < n; i++) {
        if (!knut_sync__names_has(&cols[i], col))
            continue;
        knut_buf_printf(q, "%s(SELECT typeof(", first ? "" : " UNION ALL ");
        knut_duck_ident(q, col);
        knut_buf_printf(q, ") AS t FROM _knut_m%d WHERE ", idx[i]);
        knut_duck_ident(q, col);
        knut_buf_puts(q, " IS NOT NULL LIMIT 1)");
        first = 0;
    }
    knut_buf_puts(q, ")");
    knut_status st = knut_buf_check(q, err);
    if (st == KNUT_OK)
        st = knut_sync__q_int(c, q->data, NULL, &kinds, err);
    if (st == KNUT_OK && kinds > 1)
        st = knut_error_set(err, KNUT_EINVAL,
                            "column '%s' has different types in this round's files", col);
    *kinds_out = kinds;
    return st;
}

knut_status knut_sync__stage_union(knut_duck_conn *c, const int *idx, size_t n, knut_buf *out,
                                   knut_error *err)
{
    knut_buf q = KNUT_BUF_INIT;
    sync_names *cols = calloc(n, sizeof *cols);
    int64_t conflicts = 0;
    knut_status st = cols ? KNUT_OK : knut_error_set(err, KNUT_ENOMEM, "out of memory");
    /* the common case: every shared column has one type */
    knut_buf_puts(&q, "SELECT count(*) FROM (SELECT column_name FROM information_schema.columns "
                      "WHERE table_catalog = current_database() AND table_name IN ");
    table_list(&q, idx, n);
    knut_buf_puts(&q, " GROUP BY column_name HAVING count(DISTINCT data_type) > 1)");
    if (st == KNUT_OK && (st = knut_buf_check(&q, err)) == KNUT_OK)
        st = knut_sync__q_int(c, q.data, NULL, &conflicts, err);
    for (size_t i = 0; st == KNUT_OK && conflicts && i < n; i++) {
        char tbl[32];
        snprintf(tbl, sizeof tbl, "_knut_m%d", idx[i]);
        st = knut_sync__columns(c, tbl, &cols[i], err);
    }
    for (size_t i = 0; st == KNUT_OK && i < n; i++) {
        knut_buf_printf(out, "%sSELECT * ", i ? " UNION ALL BY NAME " : "");
        int excluded = 0;
        for (size_t k = 0; st == KNUT_OK && conflicts && k < cols[i].n; k++) {
            const char *col = cols[i].names[k];
            int64_t types = 0, kinds = 0, values = 0;
            knut_buf_clear(&q);
            knut_buf_puts(&q, "SELECT count(DISTINCT data_type) FROM information_schema.columns "
                              "WHERE table_catalog = current_database() AND column_name = $1 AND "
                              "table_name IN ");
            table_list(&q, idx, n);
            if ((st = knut_buf_check(&q, err)) == KNUT_OK)
                st = knut_sync__q_int(c, q.data, col, &types, err);
            if (st != KNUT_OK || types < 2)
                continue;
            st = col_types(c, idx, n, cols, col, &q, &kinds, err);
            if (st != KNUT_OK || kinds == 0)
                continue; /* null everywhere: the union's type is as good as any */
            knut_buf_clear(&q);
            knut_buf_puts(&q, "SELECT count(");
            knut_duck_ident(&q, col);
            knut_buf_printf(&q, ") FROM _knut_m%d", idx[i]);
            if (st == KNUT_OK && (st = knut_buf_check(&q, err)) == KNUT_OK)
                st = knut_sync__q_int(c, q.data, NULL, &values, err);
            if (st != KNUT_OK || values > 0)
                continue;
            knut_buf_puts(out, excluded ? ", " : "EXCLUDE (");
            knut_duck_ident(out, col);
            excluded = 1;
        }
        knut_buf_printf(out, "%sFROM _knut_m%d", excluded ? ") " : "", idx[i]);
    }
    for (size_t i = 0; cols && i < n; i++)
        knut_sync__names_reset(&cols[i]);
    free(cols);
    knut_buf_reset(&q);
    return st == KNUT_OK ? knut_buf_check(out, err) : st;
}
