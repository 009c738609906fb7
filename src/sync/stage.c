/*
 * Staging: reads one drop file into the in-memory staging engine, runs
 * the table's SQL step over it (as the view `input`), and checks what the
 * mapping needs (columns present, keys not null, known _change_type
 * values) so a bad file is found and recorded before anything reaches the
 * graph. File paths reach DuckDB only as prepared-statement parameters;
 * the only SQL text from outside is the config's own `sql:` step.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sync_int.h"

#define CHANGE_KINDS "('INSERT', 'UPDATE_AFTER', 'UPDATE_BEFORE', 'DELETE')"

knut_status knut_sync__q_int(knut_duck_conn *c, const char *sql, const char *param, int64_t *out,
                         knut_error *err)
{
    knut_duck_stmt *stmt = NULL;
    struct ArrowArrayStream s = {0};
    struct ArrowSchema schema = {0};
    struct ArrowArray a = {0};
    knut_arrow_view v = {0};
    *out = 0;
    knut_status st = knut_duck_stmt_prepare(&stmt, c, sql, err);
    if (st == KNUT_OK && param)
        st = knut_duck_stmt_bind_text(stmt, 1, param, strlen(param), err);
    if (st == KNUT_OK)
        st = knut_duck_stmt_query(stmt, &s, err);
    if (st != KNUT_OK)
        goto cleanup;
    if (s.get_schema(&s, &schema) != 0 || s.get_next(&s, &a) != 0) {
        st = knut_error_set(err, KNUT_EIO, "%s", s.get_last_error(&s));
        goto cleanup;
    }
    if (a.release && (st = knut_arrow_view_init(&v, &schema, &a, err)) == KNUT_OK &&
        v.length > 0 && v.n_children > 0 && !knut_arrow_view_is_null(&v.children[0], 0))
        *out = knut_arrow_view_get_int64(&v.children[0], 0);
cleanup:
    knut_arrow_view_reset(&v);
    knut_arrow_array_release(&a);
    knut_arrow_schema_release(&schema);
    knut_arrow_stream_release(&s);
    knut_duck_stmt_free(stmt);
    return st;
}

knut_status knut_sync__columns(knut_duck_conn *c, const char *table, sync_names *out,
                               knut_error *err)
{
    knut_buf q = KNUT_BUF_INIT;
    struct ArrowArrayStream s = {0};
    struct ArrowSchema schema = {0};
    memset(out, 0, sizeof *out);
    knut_buf_puts(&q, "SELECT * FROM ");
    knut_duck_ident(&q, table);
    knut_buf_puts(&q, " LIMIT 0");
    knut_status st = knut_buf_check(&q, err);
    if (st == KNUT_OK)
        st = knut_duck_query(c, q.data, &s, err);
    if (st == KNUT_OK && s.get_schema(&s, &schema) != 0)
        st = knut_error_set(err, KNUT_EIO, "%s", s.get_last_error(&s));
    if (st == KNUT_OK) {
        out->n = (size_t)schema.n_children;
        out->names = calloc(out->n ? out->n : 1, sizeof *out->names);
        for (size_t i = 0; out->names && i < out->n; i++)
            out->names[i] = strdup(schema.children[i]->name ? schema.children[i]->name : "");
        for (size_t i = 0; out->names && i < out->n; i++)
            if (!out->names[i])
                st = KNUT_ENOMEM;
        if (!out->names || st != KNUT_OK)
            st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
    }
    knut_arrow_schema_release(&schema);
    knut_arrow_stream_release(&s);
    knut_buf_reset(&q);
    if (st != KNUT_OK)
        knut_sync__names_reset(out);
    return st;
}

void knut_sync__names_reset(sync_names *n)
{
    for (size_t i = 0; n->names && i < n->n; i++)
        free(n->names[i]);
    free(n->names);
    memset(n, 0, sizeof *n);
}

int knut_sync__names_has(const sync_names *n, const char *name)
{
    for (size_t i = 0; i < n->n; i++)
        if (strcmp(n->names[i], name) == 0)
            return 1;
    return 0;
}

static knut_status need_col(const sync_names *cols, const char *col, const void *node,
                            knut_error *err)
{
    if (knut_sync__names_has(cols, col))
        return KNUT_OK;
    const knut_conf *n = node;
    return knut_error_set(err, KNUT_EINVAL, "column '%s' (%s:%d:%d) is missing", col,
                          knut_conf_file(n), knut_conf_line(n), knut_conf_col(n));
}

/* Missing columns, then null keys: what would fail the apply later. */
static knut_status check_mapping(knut_duck_conn *c, const knut_sync_table *t, const char *tbl,
                                 knut_error *err)
{
    sync_names cols;
    knut_buf q = KNUT_BUF_INIT;
    knut_status st = knut_sync__columns(c, tbl, &cols, err);
    if (st != KNUT_OK)
        return st;
    if (t->mode == KNUT_SYNC_MODE_CDC)
        st = need_col(&cols, KNUT_SYNC_CHANGE_COLUMN, t->node, err);
    if (st == KNUT_OK && t->sequence_by) /* cdc: the events' order */
        st = need_col(&cols, t->sequence_by, knut_conf_get(t->node, "sequence_by"), err);
    /* keys[] of every step, then properties (keys must also be non-null) */
    for (size_t i = 0; st == KNUT_OK && i < t->n_vertices; i++) {
        const knut_sync_vertex_step *v = &t->vertices[i];
        for (size_t k = 0; st == KNUT_OK && k < v->n_keys; k++)
            st = need_col(&cols, v->keys[k].column, v->keys[k].node, err);
        for (size_t k = 0; st == KNUT_OK && k < v->n_props; k++)
            st = need_col(&cols, v->props[k].column, v->props[k].node, err);
    }
    for (size_t i = 0; st == KNUT_OK && i < t->n_edges; i++) {
        const knut_sync_edge_step *e = &t->edges[i];
        for (size_t k = 0; st == KNUT_OK && k < e->from.n_keys; k++)
            st = need_col(&cols, e->from.keys[k].column, e->from.keys[k].node, err);
        for (size_t k = 0; st == KNUT_OK && k < e->to.n_keys; k++)
            st = need_col(&cols, e->to.keys[k].column, e->to.keys[k].node, err);
        for (size_t k = 0; st == KNUT_OK && k < e->n_props; k++)
            st = need_col(&cols, e->props[k].column, e->props[k].node, err);
    }
    for (size_t i = 0; st == KNUT_OK && i < t->n_fk_edges; i++)
        st = need_col(&cols, t->fk_edges[i].column, t->fk_edges[i].node, err);
    /* null keys: one count per key column (bounded, no rows materialised) */
    for (size_t i = 0; st == KNUT_OK && i < t->n_vertices + t->n_edges; i++) {
        const knut_sync_prop *keys[2] = {NULL, NULL};
        size_t nk[2] = {0, 0};
        if (i < t->n_vertices) {
            keys[0] = t->vertices[i].keys;
            nk[0] = t->vertices[i].n_keys;
        } else {
            keys[0] = t->edges[i - t->n_vertices].from.keys;
            nk[0] = t->edges[i - t->n_vertices].from.n_keys;
            keys[1] = t->edges[i - t->n_vertices].to.keys;
            nk[1] = t->edges[i - t->n_vertices].to.n_keys;
        }
        for (int s = 0; s < 2 && st == KNUT_OK; s++)
            for (size_t k = 0; k < nk[s] && st == KNUT_OK; k++) {
                int64_t nulls = 0;
                knut_buf_clear(&q);
                knut_buf_puts(&q, "SELECT count(*) FROM ");
                knut_duck_ident(&q, tbl);
                knut_buf_puts(&q, " WHERE ");
                knut_duck_ident(&q, keys[s][k].column);
                knut_buf_puts(&q, " IS NULL");
                if ((st = knut_buf_check(&q, err)) == KNUT_OK)
                    st = knut_sync__q_int(c, q.data, NULL, &nulls, err);
                if (st == KNUT_OK && nulls > 0)
                    st = knut_error_set(err, KNUT_EINVAL, "key column '%s' is null in %lld rows",
                                        keys[s][k].column, (long long)nulls);
            }
    }
    if (st == KNUT_OK && t->mode == KNUT_SYNC_MODE_CDC) {
        int64_t bad = 0;
        knut_buf_clear(&q);
        knut_buf_puts(&q, "SELECT count(*) FROM ");
        knut_duck_ident(&q, tbl);
        knut_buf_puts(&q, " WHERE " KNUT_SYNC_CHANGE_COLUMN " IS NULL OR "
                          KNUT_SYNC_CHANGE_COLUMN "::VARCHAR NOT IN " CHANGE_KINDS);
        if ((st = knut_buf_check(&q, err)) == KNUT_OK)
            st = knut_sync__q_int(c, q.data, NULL, &bad, err);
        if (st == KNUT_OK && bad > 0)
            st = knut_error_set(err, KNUT_EINVAL,
                                "%lld rows have a _change_type other than INSERT, "
                                "UPDATE_AFTER, UPDATE_BEFORE, DELETE", (long long)bad);
    }
    knut_buf_reset(&q);
    knut_sync__names_reset(&cols);
    return st;
}

/*
 * 1 when a failed staging statement failed in the table's SQL step rather
 * than in the file's reader. DuckDB's kind says so for errors about the
 * query text; any other (a value that does not convert, error(), a bad
 * file) is the reader's only if reading the file alone fails too. That
 * reads the file once more, on the failure path only, and every column of
 * it: with count(*) alone DuckDB would convert none.
 */
static int sql_step_failed(knut_duck_conn *c, const sync_file *f, const knut_error *err)
{
    if (err->detail == KNUT_DUCK_ERR_PARSER || err->detail == KNUT_DUCK_ERR_CATALOG ||
        err->detail == KNUT_DUCK_ERR_BINDER)
        return 1;
    int64_t rows;
    return knut_sync__q_int(c,
                            f->format == KNUT_SYNC_FORMAT_PARQUET
                                ? "SELECT count(*) FROM read_parquet($1::VARCHAR) t "
                                  "WHERE t IS NOT NULL"
                                : "SELECT count(*) FROM read_csv($1::VARCHAR) t "
                                  "WHERE t IS NOT NULL",
                            f->path, &rows, NULL) == KNUT_OK;
}

knut_status knut_sync__stage_file(knut_duck_db *db, const knut_sync_table *t, const sync_file *f,
                                  int idx, int64_t *rows, knut_error *err)
{
    knut_duck_conn *c = NULL;
    knut_duck_stmt *stmt = NULL;
    knut_buf q = KNUT_BUF_INIT;
    char tbl[32];
    snprintf(tbl, sizeof tbl, "_knut_m%d", idx);
    *rows = 0;
    /* One statement from the file to the staged table: `input` is a CTE
     * over the reader (the path a parameter), so the rows are written
     * once, not first copied into a raw table. _knut_ord keeps file then
     * row order (the last row of a key wins); row_number() OVER () streams. */
    knut_status st = knut_sync__stage_precheck(f, err); /* stage_check.c */
    if (st == KNUT_OK)
        st = knut_sync__stage_conn(&c, db, err);
    if (st != KNUT_OK)
        goto cleanup;
    knut_buf_printf(&q, "CREATE OR REPLACE TABLE %s AS WITH input AS (", tbl);
    if (t->n_columns) /* columns.c: the declared types, CSV read strictly */
        st = knut_sync__columns_reader(c, t, f, &q, err);
    else
        knut_buf_printf(&q, "SELECT * FROM %s($1::VARCHAR)",
                        f->format == KNUT_SYNC_FORMAT_PARQUET ? "read_parquet" : "read_csv");
    if (st != KNUT_OK)
        goto cleanup;
    knut_buf_printf(&q, ") SELECT *, (%d::BIGINT << 32) + row_number() OVER () AS _knut_ord FROM (",
                    idx);
    if (t->sql) {
        size_t n = strlen(t->sql);
        while (n > 0 && (t->sql[n - 1] == ';' || t->sql[n - 1] == ' ' || t->sql[n - 1] == '\n' ||
                         t->sql[n - 1] == '\t' || t->sql[n - 1] == '\r'))
            n--;
        knut_buf_append(&q, t->sql, n);
        knut_buf_puts(&q, "\n");
    } else {
        knut_buf_puts(&q, "SELECT * FROM input");
    }
    knut_buf_puts(&q, ")");
    st = knut_buf_check(&q, err);
    if (st == KNUT_OK)
        st = knut_duck_stmt_prepare(&stmt, c, q.data, err);
    if (st == KNUT_OK)
        st = knut_duck_stmt_bind_text(stmt, 1, f->path, strlen(f->path), err);
    if (st == KNUT_OK)
        st = knut_duck_stmt_exec(stmt, NULL, err);
    if (st != KNUT_OK) {
        if (t->sql && err && c && sql_step_failed(c, f, err))
            knut_error_prefix(err, "sql step: ");
        goto cleanup;
    }
    st = check_mapping(c, t, tbl, err);
    if (st == KNUT_OK)
        st = knut_sync__stage_check_keys(c, t, tbl, err);
    if (st == KNUT_OK) {
        knut_buf_clear(&q);
        knut_buf_printf(&q, "SELECT count(*) FROM %s", tbl);
        if ((st = knut_buf_check(&q, err)) == KNUT_OK)
            st = knut_sync__q_int(c, q.data, NULL, rows, err);
    }
cleanup:
    if (st != KNUT_OK && c) {
        /* DuckDB's advice trimmed; a CSV read as one column: which line */
        st = t->n_columns ? knut_sync__columns_explain(c, t, f, st, err)
                          : knut_sync__stage_explain(c, f, st, err);
        knut_buf_clear(&q);
        knut_buf_printf(&q, "DROP TABLE IF EXISTS %s", tbl);
        knut_duck_exec(c, q.data, NULL);
    }
    knut_buf_reset(&q);
    knut_duck_stmt_free(stmt);
    knut_duck_conn_close(c);
    return st;
}

/* The batch may be a view (over _knut_m*) or a table: both drops, each
 * failing quietly on the other kind. */
static void batch_drop(knut_duck_conn *c)
{
    knut_duck_exec(c, "DROP VIEW IF EXISTS _knut_batch", NULL);
    knut_duck_exec(c, "DROP TABLE IF EXISTS _knut_batch", NULL);
}

/* The staged files' tables (_knut_m<i>) still there. */
static void staged_drop(knut_duck_conn *c)
{
    sync_names n = {0};
    if (knut_sync__q_names(c, "SELECT table_name FROM duckdb_tables() WHERE "
                              "starts_with(table_name, '_knut_m') AND NOT temporary "
                              "AND database_name = current_database()",
                           NULL, &n, NULL) != KNUT_OK)
        return;
    for (size_t i = 0; i < n.n; i++) {
        knut_buf q = KNUT_BUF_INIT;
        knut_buf_puts(&q, "DROP TABLE IF EXISTS ");
        knut_duck_ident(&q, n.names[i]);
        if (knut_buf_check(&q, NULL) == KNUT_OK)
            knut_duck_exec(c, q.data, NULL);
        knut_buf_reset(&q);
    }
    knut_sync__names_reset(&n);
}

knut_status knut_sync__stage_batch(knut_duck_db *db, const int *idx, size_t n, int as_view,
                                   knut_error *err)
{
    knut_duck_conn *c = NULL;
    knut_buf q = KNUT_BUF_INIT;
    knut_status st = knut_sync__stage_conn(&c, db, err);
    if (st != KNUT_OK)
        return st;
    batch_drop(c);
    /* One file (the common case, and the big one): rename, no copy. */
    if (n == 1) {
        knut_buf_printf(&q, "ALTER TABLE _knut_m%d RENAME TO _knut_batch", idx[0]);
    } else {
        /* As a view the files' rows are not copied (the staged tables stay
         * until the batch is dropped); a set that must drop repeated keys
         * makes it a table first (knut_sync__stage_batch_table). Files
         * disagreeing on a column's type: EINVAL, applied one by one. */
        knut_buf_puts(&q, as_view ? "CREATE VIEW _knut_batch AS "
                                  : "CREATE TABLE _knut_batch AS ");
        st = knut_sync__stage_union(c, idx, n, &q, err);
    }
    if (st == KNUT_OK && (st = knut_buf_check(&q, err)) == KNUT_OK)
        st = knut_duck_exec(c, q.data, err);
    if (st != KNUT_OK || n == 1 || !as_view) {
        for (size_t i = 0; i < n; i++) {
            knut_buf_clear(&q);
            knut_buf_printf(&q, "DROP TABLE IF EXISTS _knut_m%d", idx[i]);
            knut_duck_exec(c, q.data, NULL);
        }
    }
    knut_buf_reset(&q);
    knut_duck_conn_close(c);
    return st;
}

knut_status knut_sync__stage_batch_table(knut_duck_db *db, knut_error *err)
{
    knut_duck_conn *c = NULL;
    int64_t views = 0;
    knut_status st = knut_sync__stage_conn(&c, db, err);
    if (st == KNUT_OK)
        st = knut_sync__q_int(c, "SELECT count(*) FROM duckdb_views() WHERE view_name = "
                                 "'_knut_batch' AND NOT temporary AND database_name = "
                                 "current_database()", NULL, &views, err);
    if (st == KNUT_OK && views > 0) {
        st = knut_duck_exec(c, "CREATE OR REPLACE TABLE _knut_batch_t AS SELECT * FROM "
                               "_knut_batch", err);
        if (st == KNUT_OK)
            st = knut_duck_exec(c, "DROP VIEW _knut_batch", err);
        if (st == KNUT_OK)
            st = knut_duck_exec(c, "ALTER TABLE _knut_batch_t RENAME TO _knut_batch", err);
        if (st == KNUT_OK)
            staged_drop(c);
        else
            knut_duck_exec(c, "DROP TABLE IF EXISTS _knut_batch_t", NULL);
    }
    knut_duck_conn_close(c);
    return st;
}

void knut_sync__stage_batch_drop(knut_duck_db *db)
{
    knut_duck_conn *c = NULL;
    if (knut_sync__stage_conn(&c, db, NULL) != KNUT_OK)
        return;
    batch_drop(c);
    staged_drop(c);
    knut_duck_conn_close(c);
}

/* The staged tables live in an attached in-memory database, in the
 * standalone engine as in the store's instance (knut_sync__stage_attach),
 * so every staging statement reads the same either way. */
static knut_status attach(knut_duck_db *db, knut_error *err)
{
    knut_duck_conn *c = NULL;
    knut_status st = knut_duck_conn_open(&c, db, err);
    if (st == KNUT_OK)
        st = knut_duck_exec(c, "ATTACH IF NOT EXISTS ':memory:' AS " SYNC_STAGE_DB, err);
    knut_duck_conn_close(c);
    return st != KNUT_OK ? knut_error_prefix(err, "staging: ") : st;
}

knut_status knut_sync__stage_conn(knut_duck_conn **c, knut_duck_db *db, knut_error *err)
{
    knut_status st = knut_duck_conn_open(c, db, err);
    if (st == KNUT_OK && (st = knut_duck_exec(*c, "USE " SYNC_STAGE_DB, err)) != KNUT_OK) {
        knut_duck_conn_close(*c);
        *c = NULL;
    }
    return st;
}

knut_status knut_sync__stage_attach(knut_duck_db *store_db, knut_error *err)
{
    return attach(store_db, err);
}

knut_status knut_sync__stage_open(knut_duck_db **out, char **spill_dir, knut_error *err)
{
    const char *tmp = getenv("TMPDIR");
    knut_buf dir = KNUT_BUF_INIT;
    *out = NULL;
    *spill_dir = NULL;
    knut_buf_printf(&dir, "%s/knut-sync-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    knut_status st = knut_buf_check(&dir, err);
    if (st == KNUT_OK && !mkdtemp(dir.data))
        st = knut_error_set(err, KNUT_EIO, "staging: cannot create a spill directory %s: %s",
                            dir.data, strerror(errno));
    if (st != KNUT_OK) {
        knut_buf_reset(&dir);
        return st;
    }
    /* mkdtemp only picked a fresh random name: DuckDB creates the
     * directory when it first spills and removes it at close, so a process
     * that never spills (most) and is then killed leaves nothing behind. */
    rmdir(dir.data);
    /* A drop file may be larger than memory: past the limit DuckDB spills
     * the staged tables and its sorts to the spill directory. */
    const knut_duck_option opts[] = {{"threads", "2"},
                                     {"memory_limit", SYNC_STAGE_MEMORY_LIMIT},
                                     {"temp_directory", dir.data}};
    st = knut_duck_db_open(out, NULL, opts, sizeof opts / sizeof opts[0], err);
    if (st != KNUT_OK) {
        knut_buf_reset(&dir);
        return knut_error_prefix(err, "staging: ");
    }
    if ((st = attach(*out, err)) != KNUT_OK) {
        knut_duck_db_close(*out);
        *out = NULL;
        knut_buf_reset(&dir);
        return st;
    }
    *spill_dir = dir.data; /* the buffer's memory, now owned by the caller */
    return KNUT_OK;
}

void knut_sync__stage_close(knut_duck_db *db, char *spill_dir)
{
    knut_duck_db_close(db);
    if (!spill_dir)
        return;
    /* DuckDB removes its spill files and directory on close; anything it
     * left is ours. */
    DIR *d = opendir(spill_dir);
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        char *p = knut_sync__path_join(spill_dir, de->d_name);
        if (p)
            unlink(p);
        free(p);
    }
    if (d)
        closedir(d);
    rmdir(spill_dir);
    free(spill_dir);
}
