/*
 * `knut sync check`: what a round would find wrong, found before one
 * runs, with nothing written. Per table: the files `path:` matches and
 * whether they are what `format:` says; the first file read through the
 * same staging as a round (the declared types, the `sql:` step), then
 * every column the mapping names looked up and the type of every mapped
 * column judged by the sink's own rule (knut_graph_column_type_check) on
 * the exact SELECT the round would stream (knut_sync__map_step_sql). The
 * tables together and the write targets: check_graph.c.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_int.h"

#define CONF(n) ((const knut_conf *)(n))

/* The most files of one table whose first bytes are looked at. */
#define CHECK_MAGIC_FILES_MAX 1000

void knut_sync__check_report(sync_check *c, const char *kind, const knut_sync_table *t,
                             const char *file, const char *column, const char *fmt, ...)
{
    char msg[SYNC_CHECK_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    c->n++;
    if (!c->fn)
        return;
    knut_sync_problem p = {.kind = kind,
                           .table = t ? t->name : NULL,
                           .file = file,
                           .column = column,
                           .message = msg};
    c->fn(&p, c->ctx);
}

/* 1 if the file begins with Parquet's magic "PAR1"; -1 if unreadable. */
static int parquet_magic(const char *path)
{
    char b[4];
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return -1;
    size_t n = fread(b, 1, sizeof b, fp);
    fclose(fp);
    return n == 4 && memcmp(b, "PAR1", 4) == 0;
}

static const char *format_name(knut_sync_format f)
{
    return f == KNUT_SYNC_FORMAT_PARQUET ? "parquet" : "csv";
}

/* Lists t's files into *files; a path that matches none, or only files
 * that `format:` leaves out, and files whose content is not their
 * format, are problems. */
static knut_status check_files(sync_check *c, const knut_sync_table *t, sync_file_list *files,
                               knut_error *err)
{
    knut_status st = knut_sync__files_list(t, files, err);
    if (st != KNUT_OK) {
        knut_sync__check_report(c, "path", t, t->path, NULL, "table '%s': %s", t->name,
                                err->message);
        knut_error_clear(err);
        return KNUT_OK;
    }
    if (files->n == 0) {
        /* the same path by extension: files format: refuses, or none */
        knut_sync_table any = *t;
        sync_file_list all = {0};
        any.format = KNUT_SYNC_FORMAT_AUTO;
        st = knut_sync__files_list(&any, &all, err);
        if (st != KNUT_OK)
            return st;
        if (all.n > 0)
            knut_sync__check_report(c, "format", t, all.items[0].path, NULL,
                                    "table '%s': format: %s, but the %zu file%s '%s' matches "
                                    "%s named as %s (e.g. %s), which a round ignores",
                                    t->name, format_name(t->format), all.n,
                                    all.n == 1 ? "" : "s", t->path, all.n == 1 ? "is" : "are",
                                    format_name(all.items[0].format), all.items[0].path);
        else
            knut_sync__check_report(c, "path", t, t->path, NULL,
                                    "table '%s': path '%s' matches no data file (.parquet, "
                                    ".pq, .csv)",
                                    t->name, t->path);
        knut_sync__files_reset(&all);
        return KNUT_OK;
    }
    for (size_t i = 0; i < files->n && i < CHECK_MAGIC_FILES_MAX; i++) {
        const sync_file *f = &files->items[i];
        int pq = parquet_magic(f->path);
        if (pq < 0)
            knut_sync__check_report(c, "read", t, f->path, NULL, "table '%s': file %s cannot "
                                    "be opened", t->name, f->path);
        else if (pq != (f->format == KNUT_SYNC_FORMAT_PARQUET))
            knut_sync__check_report(c, "format", t, f->path, NULL,
                                    "table '%s': file %s is read as %s (%s) but %s", t->name,
                                    f->path, format_name(f->format),
                                    t->format != KNUT_SYNC_FORMAT_AUTO ? "format:"
                                                                       : "by its extension",
                                    pq ? "is a Parquet file" : "is not a Parquet file");
    }
    return KNUT_OK;
}

/* Every column the mapping names, as check_mapping in stage.c requires
 * them, looked up in the staged file: one problem per missing one. */
static void need(sync_check *c, const knut_sync_table *t, const sync_file *f,
                 const sync_names *cols, const char *col, const void *node, const char *what)
{
    if (knut_sync__names_has(cols, col))
        return;
    const knut_conf *n = CONF(node);
    knut_sync__check_report(c, "column", t, f->path, col,
                            "table '%s': file %s: column '%s' (%s, %s:%d:%d) is missing%s",
                            t->name, f->path, col, what, knut_conf_file(n), knut_conf_line(n),
                            knut_conf_col(n), t->sql ? " from the sql step's result" : "");
}

/* 1 when every mapped column is there. */
static int check_columns(sync_check *c, const knut_sync_table *t, const sync_file *f,
                         const sync_names *cols)
{
    int64_t before = c->n;
    if (t->mode == KNUT_SYNC_MODE_CDC)
        need(c, t, f, cols, KNUT_SYNC_CHANGE_COLUMN, t->node, "mode: cdc");
    if (t->sequence_by)
        need(c, t, f, cols, t->sequence_by, knut_conf_get(CONF(t->node), "sequence_by"),
             "sequence_by");
    for (size_t i = 0; i < t->n_vertices; i++) {
        const knut_sync_vertex_step *v = &t->vertices[i];
        for (size_t k = 0; k < v->n_keys; k++)
            need(c, t, f, cols, v->keys[k].column, v->keys[k].node, "a vertex key");
        for (size_t k = 0; k < v->n_props; k++)
            need(c, t, f, cols, v->props[k].column, v->props[k].node, "a vertex property");
    }
    for (size_t i = 0; i < t->n_edges; i++) {
        const knut_sync_edge_step *e = &t->edges[i];
        for (size_t k = 0; k < e->from.n_keys; k++)
            need(c, t, f, cols, e->from.keys[k].column, e->from.keys[k].node, "an edge's from key");
        for (size_t k = 0; k < e->to.n_keys; k++)
            need(c, t, f, cols, e->to.keys[k].column, e->to.keys[k].node, "an edge's to key");
        for (size_t k = 0; k < e->n_props; k++)
            need(c, t, f, cols, e->props[k].column, e->props[k].node, "an edge property");
    }
    for (size_t i = 0; i < t->n_fk_edges; i++)
        need(c, t, f, cols, t->fk_edges[i].column, t->fk_edges[i].node, "a foreign-key column");
    return c->n == before;
}

/* The schema of sql's result (no rows read) into *schema. */
static knut_status result_schema(knut_duck_db *db, const char *sql, struct ArrowSchema *schema,
                                 knut_error *err)
{
    knut_duck_conn *conn = NULL;
    knut_buf q = KNUT_BUF_INIT;
    struct ArrowArrayStream s = {0};
    knut_buf_printf(&q, "SELECT * FROM (%s) LIMIT 0", sql);
    knut_status st = knut_buf_check(&q, err);
    if (st == KNUT_OK)
        st = knut_sync__stage_conn(&conn, db, err);
    if (st == KNUT_OK)
        st = knut_duck_query(conn, q.data, &s, err);
    if (st == KNUT_OK && s.get_schema(&s, schema) != 0)
        st = knut_error_set(err, KNUT_EIO, "%s", s.get_last_error(&s));
    knut_arrow_stream_release(&s);
    knut_duck_conn_close(conn);
    knut_buf_reset(&q);
    return st;
}

/* The column name a step's i-th SELECT column comes from (keys: the
 * config's columns; properties: their names as the SELECT gives them). */
static const char *step_column(const knut_sync_table *t, int edge, size_t step, size_t i,
                               size_t n_keys, const char *name)
{
    if (i >= n_keys)
        return name;
    if (!edge)
        return t->vertices[step].keys[i].column;
    const knut_sync_edge_step *e = &t->edges[step];
    return i < e->from.n_keys ? e->from.keys[i].column : e->to.keys[i - e->from.n_keys].column;
}

/* The sink's verdict on every column of one step's SELECT. */
static knut_status check_step_types(sync_check *c, knut_duck_db *db, const knut_sync_table *t,
                                    const sync_file *f, int edge, size_t step, knut_error *err)
{
    knut_buf sql = KNUT_BUF_INIT;
    struct ArrowSchema schema = {0};
    size_t n_keys = 0;
    int windowed = 0; /* the types are the same either way */
    knut_status st = knut_sync__map_step_sql(db, t, edge, step, &sql, &n_keys, &windowed, err);
    if (st == KNUT_OK)
        st = result_schema(db, sql.data, &schema, err);
    if (st != KNUT_OK && st != KNUT_ENOMEM) { /* the file's, not the check's: a problem */
        knut_duck_error_trim(err);
        knut_sync__check_report(c, "read", t, f->path, NULL, "table '%s': file %s: %s", t->name,
                                f->path, err->message);
        knut_error_clear(err);
        st = KNUT_OK;
        goto cleanup;
    }
    for (int64_t i = 0; i < schema.n_children; i++) {
        const char *name = schema.children[i]->name ? schema.children[i]->name : "";
        int key = (size_t)i < n_keys;
        if (!key && (strncmp(name, "_knut_", 6) == 0 || strcmp(name, KNUT_SYNC_CHANGE_COLUMN) == 0))
            continue; /* the round's own columns */
        knut_error e = KNUT_ERROR_INIT;
        if (knut_graph_column_type_check(schema.children[i], key, c->falkordb, &e) == KNUT_OK)
            continue;
        const char *col = step_column(t, edge, step, (size_t)i, n_keys, name);
        knut_sync__check_report(c, "type", t, f->path, col,
                                "table '%s': file %s: %s '%s' of %s '%s': the %s sink cannot "
                                "store it: %s",
                                t->name, f->path, key ? "key column" : "property", col,
                                edge ? "edge" : "vertex",
                                edge ? t->edges[step].type : t->vertices[step].labels[0],
                                c->falkordb ? "FalkorDB" : "embedded", e.message);
    }
cleanup:
    knut_arrow_schema_release(&schema);
    knut_buf_reset(&sql);
    return st;
}

/* A foreign-key column is a key of the vertex it names. */
static knut_status check_fk_types(sync_check *c, knut_duck_db *db, const knut_sync_table *t,
                                  const sync_file *f, knut_error *err)
{
    knut_status st = KNUT_OK;
    for (size_t i = 0; st == KNUT_OK && i < t->n_fk_edges; i++) {
        knut_buf q = KNUT_BUF_INIT;
        struct ArrowSchema schema = {0};
        knut_buf_puts(&q, "SELECT ");
        knut_duck_ident(&q, t->fk_edges[i].column);
        knut_buf_puts(&q, " FROM _knut_batch");
        if ((st = knut_buf_check(&q, err)) == KNUT_OK)
            st = result_schema(db, q.data, &schema, err);
        knut_error e = KNUT_ERROR_INIT;
        if (st == KNUT_OK && schema.n_children == 1 &&
            knut_graph_column_type_check(schema.children[0], 1, c->falkordb, &e) != KNUT_OK)
            knut_sync__check_report(c, "type", t, f->path, t->fk_edges[i].column,
                                    "table '%s': file %s: foreign-key column '%s' of edge '%s': "
                                    "%s",
                                    t->name, f->path, t->fk_edges[i].column, t->fk_edges[i].type,
                                    e.message);
        knut_arrow_schema_release(&schema);
        knut_buf_reset(&q);
    }
    return st;
}

/* Reads the table's first file as a round would (declared types, sql
 * step), without the mapping's checks, which are made here one by one. */
static knut_status check_first_file(sync_check *c, knut_duck_db *db, const knut_sync_table *t,
                                    const sync_file *f, knut_error *err)
{
    knut_sync_table raw = *t; /* no steps: staging alone */
    raw.n_vertices = raw.n_edges = raw.n_fk_edges = 0;
    raw.mode = KNUT_SYNC_MODE_INCREMENTAL;
    raw.sequence_by = NULL;
    int64_t rows = 0;
    sync_names cols = {0};
    knut_duck_conn *conn = NULL;
    knut_status st = knut_sync__stage_file(db, &raw, f, 0, &rows, err);
    if (st == KNUT_ENOMEM)
        return st;
    if (st != KNUT_OK) {
        int sql = strncmp(err->message, "sql step: ", 10) == 0;
        knut_sync__check_report(c, sql ? "sql" : "read", t, f->path, NULL,
                                "table '%s': file %s: %s", t->name, f->path, err->message);
        knut_error_clear(err);
        return KNUT_OK;
    }
    int idx = 0;
    st = knut_sync__stage_conn(&conn, db, err);
    if (st == KNUT_OK)
        st = knut_sync__columns(conn, "_knut_m0", &cols, err);
    knut_duck_conn_close(conn);
    if (st == KNUT_OK && check_columns(c, t, f, &cols)) {
        st = knut_sync__stage_batch(db, &idx, 1, 0, err);
        for (size_t i = 0; st == KNUT_OK && i < t->n_vertices; i++)
            st = check_step_types(c, db, t, f, 0, i, err);
        for (size_t i = 0; st == KNUT_OK && i < t->n_edges; i++)
            st = check_step_types(c, db, t, f, 1, i, err);
        if (st == KNUT_OK)
            st = check_fk_types(c, db, t, f, err);
    }
    knut_sync__names_reset(&cols);
    return st;
}

/* An Iceberg or Spark table: it loads, and the mapping finds its columns
 * in the current schema (read as an empty file of what a round stages). */
static knut_status check_source(sync_check *c, knut_duck_db *db, const knut_sync_table *t,
                                knut_error *err)
{
    char *file = NULL;
    knut_error e = KNUT_ERROR_INIT;
    knut_status st = t->iceberg ? knut_sync__iceberg_schema_file(db, t, &file, &e)
                                : knut_sync__spark_schema_file(db, t, &file, &e);
    if (st == KNUT_ENOMEM)
        return knut_error_set(err, st, "%s", e.message);
    if (st != KNUT_OK) {
        knut_sync__check_report(c, t->iceberg ? "iceberg" : "spark", t,
                                t->iceberg ? t->iceberg->key : t->spark->key, NULL, "%s",
                                e.message);
        return KNUT_OK;
    }
    struct stat sb;
    sync_file f = {file, stat(file, &sb) == 0 ? (int64_t)sb.st_size : 0, 0, "",
                   KNUT_SYNC_FORMAT_PARQUET};
    st = check_first_file(c, db, t, &f, err);
    unlink(file);
    free(file);
    return st;
}

void knut_sync__no_files_note(knut_sync *s, const knut_sync_table *t, size_t n_files)
{
    size_t i = (size_t)(t - s->cfg->tables);
    if (i >= s->cfg->n_tables)
        return;
    if (!s->no_files && !(s->no_files = calloc(s->cfg->n_tables, 1)))
        return; /* only a warning lost */
    if (n_files > 0 || s->no_files[i]) {
        s->no_files[i] = n_files == 0;
        return;
    }
    s->no_files[i] = 1;
    const knut_conf *n = CONF(knut_conf_get(CONF(t->node), "path"));
    knut_log_field f[] = {KNUT_LF_STR("table", t->name), KNUT_LF_STR("path", t->path)};
    if (knut_log_enabled(KNUT_LOG_WARN))
        knut_log_emit(KNUT_LOG_WARN, SYNC_LOG, f, sizeof f / sizeof f[0],
                      "path matches no data file yet: table %s, path %s (%s:%d:%d); a typo? "
                      "see knut sync check",
                      t->name, t->path, knut_conf_file(n), knut_conf_line(n), knut_conf_col(n));
}

knut_status knut_sync_check(const knut_sync_config *cfg, const knut_sync_options *opts,
                            knut_sync_problem_fn fn, void *ctx, int64_t *problems,
                            knut_error *err)
{
    knut_sync_options none = KNUT_SYNC_OPTIONS_INIT;
    sync_check c = {.cfg = cfg, .opts = opts ? opts : &none, .fn = fn, .ctx = ctx};
    c.falkordb = c.opts->falkordb_url != NULL;
    knut_duck_db *db = NULL;
    char *spill = NULL;
    knut_error local = KNUT_ERROR_INIT;
    KNUT_ASSERT_ARG(err, cfg != NULL);
    if (!err) /* the file's errors become problems: their text is needed */
        err = &local;
    knut_status st = knut_sync__stage_open(&db, &spill, err);
    /* declared types the sink cannot store (the rule sync open applies) */
    knut_error e = KNUT_ERROR_INIT;
    if (st == KNUT_OK && knut_sync__columns_sink_check(cfg, c.falkordb, &e) != KNUT_OK)
        knut_sync__check_report(&c, "type", NULL, cfg->file, NULL, "%s", e.message);
    for (size_t i = 0; st == KNUT_OK && i < cfg->n_tables; i++) {
        const knut_sync_table *t = &cfg->tables[i];
        sync_file_list files = {0};
        int64_t before = c.n;
        if (t->iceberg || t->spark) {
            st = check_source(&c, db, t, err);
            continue;
        }
        st = check_files(&c, t, &files, err);
        if (st == KNUT_OK && files.n > 0 && c.n == before)
            st = check_first_file(&c, db, t, &files.items[0], err);
        knut_sync__files_reset(&files);
    }
    if (st == KNUT_OK) {
        knut_sync__check_labels(&c);
        knut_sync__check_targets(&c);
    }
    knut_sync__stage_close(db, spill);
    if (problems)
        *problems = c.n;
    return st;
}
