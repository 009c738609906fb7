/*
 * The sync mapping config (sync.yml): loads the YAML tree with knut_conf
 * and turns it into knut_sync_table steps. Strings stay in the tree (kept
 * alive by the config) so messages at run time can still point at
 * file:line:col. Every error names the position, the table and the key.
 */
#include "knut/sync.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "knut/graph_map.h"
#include "sync_int.h"


/* "file:line:col: table 'x': " + message */
static knut_status cerr(knut_error *err, const knut_conf *n, const char *table, const char *fmt,
                        ...) KNUT_PRINTF(4, 5);
static knut_status cerr(knut_error *err, const knut_conf *n, const char *table, const char *fmt,
                        ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (table)
        return knut_error_set_at(err, KNUT_EINVAL, knut_conf_file(n), knut_conf_line(n),
                                 knut_conf_col(n), "table '%s': %s", table, msg);
    return knut_error_set_at(err, KNUT_EINVAL, knut_conf_file(n), knut_conf_line(n),
                             knut_conf_col(n), "%s", msg);
}

/* Refuses keys of map n not in the NULL-terminated list. */
static knut_status check_keys(const knut_conf *n, const char *table, const char *what,
                              const char *const *allowed, knut_error *err)
{
    return knut_graph_map_check_keys(n, "table", table, what, allowed, err);
}

static knut_status parse_table(const knut_conf *n, const char *name, const char *dir,
                               knut_sync_table *t, knut_error *err)
{
    static const char *const allowed[] = {"path", "format", "mode", "sql", "vertices",
                                          "edges", "fk_edges", "asset", "sequence_by",
                                          "missing_endpoints", "missing_endpoints_timeout",
                                          "columns", "iceberg", "spark", NULL};
    t->name = name;
    t->node = n;
    if (knut_conf_kind_of(n) != KNUT_CONF_MAP)
        return cerr(err, n, name, "a table must be a map");
    knut_status st = check_keys(n, name, "the table", allowed, err);
    const char *path = NULL, *s;
    int ice = knut_conf_get(n, "iceberg") != NULL, spark = knut_conf_get(n, "spark") != NULL;
    if (st == KNUT_OK && ice && spark)
        return cerr(err, knut_conf_get(n, "spark"), name,
                    "a table follows 'iceberg:' or 'spark:', not both");
    if (st == KNUT_OK && ice) /* iceberg_config.c: snapshots, not files */
        st = knut_sync__iceberg_parse(n, name, dir, t, err);
    else if (st == KNUT_OK && spark) /* spark_config.c: a table behind Spark Connect */
        st = knut_sync__spark_parse(n, name, dir, t, err);
    else if (st == KNUT_OK)
        st = knut_graph_map_req_str(n, "path", "table", name, "the table", &path, err);
    if (st != KNUT_OK)
        return st;
    if (!ice && !spark && !(t->path = knut_sync__path_join(dir, path)))
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    const knut_conf *f = knut_conf_get(n, "format");
    if (f) {
        s = knut_conf_str(f);
        if (s && strcmp(s, "parquet") == 0)
            t->format = KNUT_SYNC_FORMAT_PARQUET;
        else if (s && strcmp(s, "csv") == 0)
            t->format = KNUT_SYNC_FORMAT_CSV;
        else
            return cerr(err, f, name, "format must be parquet or csv, not '%s'", s ? s : "");
    }
    const knut_conf *m = knut_conf_get(n, "mode");
    if (m) {
        s = knut_conf_str(m);
        if (s && strcmp(s, "incremental") == 0)
            t->mode = KNUT_SYNC_MODE_INCREMENTAL;
        else if (s && strcmp(s, "cdc") == 0)
            t->mode = KNUT_SYNC_MODE_CDC;
        else if (s && strcmp(s, "full") == 0)
            t->mode = KNUT_SYNC_MODE_FULL;
        else
            return cerr(err, m, name, "mode must be full, incremental or cdc, not '%s'",
                        s ? s : "");
    }
    if ((ice || spark) &&
        (st = knut_sync__source_mode(n, name, ice ? "iceberg" : "spark", t, err)) != KNUT_OK)
        return st;
    const knut_conf *q = knut_conf_get(n, "sql");
    if (q && (!(t->sql = knut_conf_str(q)) || !*t->sql))
        return cerr(err, q, name, "'sql' must be a non-empty SQL text over the view 'input'");
    const knut_conf *sb = knut_conf_get(n, "sequence_by");
    if (sb && (!(t->sequence_by = knut_conf_str(sb)) || !*t->sequence_by))
        return cerr(err, sb, name, "'sequence_by' must be a column name");
    if (sb && t->mode != KNUT_SYNC_MODE_CDC)
        return cerr(err, sb, name, "'sequence_by' orders a changelog: only with mode: cdc");
    const knut_conf *as = knut_conf_get(n, "asset");
    if (as) { /* the table's Airflow asset URI (docs/operations.md) */
        char why[256];
        if (!(t->asset = knut_conf_str(as)) || knut_sync__asset_uri_check(t->asset, why,
                                                                           sizeof why) != 0)
            return cerr(err, as, name, "'asset': %s", t->asset ? why : "must be a URI");
    }
    if ((st = knut_sync__missing_parse(n, name, t, err)) != KNUT_OK) /* missing.c */
        return st;
    if ((st = knut_sync__columns_parse(n, name, t, err)) != KNUT_OK) /* columns.c */
        return st;
    /* the steps: the mapping shared with pipeline graph sinks (src/graph/map_conf.c) */
    knut_graph_map gm;
    st = knut_graph_map_parse(n, "table", name, KNUT_SYNC_CHANGE_COLUMN, &gm, err);
    t->vertices = gm.vertices;
    t->n_vertices = gm.n_vertices;
    t->edges = gm.edges;
    t->n_edges = gm.n_edges;
    t->fk_edges = gm.fk_edges;
    t->n_fk_edges = gm.n_fk_edges;
    return st;
}

static void table_free(knut_sync_table *t)
{
    knut_graph_map gm = {t->vertices, t->n_vertices, t->edges, t->n_edges, t->fk_edges,
                         t->n_fk_edges};
    knut_graph_map_free(&gm);
    free(t->path);
    knut_sync__columns_free(t);
    knut_sync__iceberg_free(t);
    knut_sync__spark_free(t);
}

void knut_sync_config_free(knut_sync_config *cfg)
{
    if (!cfg)
        return;
    for (size_t i = 0; i < cfg->n_tables; i++)
        table_free(&cfg->tables[i]);
    free(cfg->tables);
    free(cfg->file);
    free(cfg->store);
    free(cfg->ledger);
    knut_conf_free(cfg->root);
    free(cfg);
}

/* `name:` is a Valkey key part (knut:sync:<name>:ledger): a ':' or a
 * space in it would let two names share keys, so it is a plain word. */
static knut_status parse_name(const knut_conf *root, const char **out, knut_error *err)
{
    const knut_conf *n = knut_conf_get(root, "name");
    if (!n)
        return KNUT_OK;
    const char *s = knut_conf_str(n);
    size_t len = s ? strlen(s) : 0;
    if (len == 0 || len > SYNC_NAME_MAX || strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                     "abcdefghijklmnopqrstuvwxyz"
                                                     "0123456789._-") != len)
        return cerr(err, n, NULL,
                    "'name' must be 1 to %d letters, digits, '.', '_' or '-' (it names the "
                    "shared ledger's keys)", SYNC_NAME_MAX);
    *out = s;
    return KNUT_OK;
}

knut_status knut_sync__config_name(const knut_sync_config *cfg, const char *what,
                                   const char **out, knut_error *err)
{
    if (cfg->name) {
        *out = cfg->name;
        return KNUT_OK;
    }
    /* the old default was the file's base name: say it, so an existing
     * deployment keeps its keys */
    const char *base = strrchr(cfg->file, '/');
    base = base ? base + 1 : cfg->file;
    const char *dot = strrchr(base, '.');
    int n = (int)(dot && dot != base ? dot - base : (long)strlen(base));
    const knut_conf *root = cfg->root;
    return knut_error_set(err, KNUT_EINVAL,
                          "%s:%d:%d: %s needs 'name:' in the config: it names the shared keys "
                          "(knut:sync:<name>:...), the same for every instance of this deployment "
                          "and different from any other; an existing deployment keeps its keys "
                          "with 'name: %.*s' (docs/operations.md)",
                          knut_conf_file(root), knut_conf_line(root), knut_conf_col(root), what, n,
                          base);
}

static knut_status config_build(knut_sync_config *c, const char *dir, knut_error *err)
{
    static const char *const allowed[] = {"name", "store", "ledger", "tables", NULL};
    const knut_conf *root = c->root;
    if (knut_conf_kind_of(root) != KNUT_CONF_MAP)
        return cerr(err, root, NULL, "a sync config is a map with 'tables'");
    knut_status st = check_keys(root, NULL, "the sync config", allowed, err);
    if (st == KNUT_OK)
        st = parse_name(root, &c->name, err);
    if (st != KNUT_OK)
        return st;
    static const char *const paths[] = {"store", "ledger"};
    for (int i = 0; i < 2; i++) {
        const knut_conf *p = knut_conf_get(root, paths[i]);
        if (!p)
            continue;
        const char *s = knut_conf_str(p);
        if (!s || !*s)
            return cerr(err, p, NULL, "'%s' must be a file path", paths[i]);
        /* `ledger: falkordb`: the ledger lives in the FalkorDB server (ledger_falkor.c) */
        char *j = i == 1 && strcmp(s, SYNC_LEDGER_FALKORDB) == 0 ? strdup(s)
                                                                 : knut_sync__path_join(dir, s);
        if (!j)
            return knut_error_set(err, KNUT_ENOMEM, "out of memory");
        *(i == 0 ? &c->store : &c->ledger) = j;
    }
    const knut_conf *tables = knut_conf_get(root, "tables");
    if (!tables || knut_conf_kind_of(tables) != KNUT_CONF_MAP || knut_conf_len(tables) == 0)
        return cerr(err, tables ? tables : root, NULL, "'tables' must be a non-empty map of name: table");
    c->n_tables = knut_conf_len(tables);
    if (!(c->tables = calloc(c->n_tables, sizeof *c->tables))) {
        c->n_tables = 0;
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < c->n_tables; i++) {
        st = parse_table(knut_conf_at(tables, i), knut_conf_key_at(tables, i), dir, &c->tables[i],
                         err);
        if (st != KNUT_OK)
            return st;
    }
    return knut_sync__full_check(c, err); /* full tables own their labels and types */
}

knut_status knut_sync_config_parse(knut_sync_config **out, const char *text, size_t len,
                                   const char *name, const char *dir, knut_error *err)
{
    KNUT_ASSERT_ARG(err, out && text && name);
    *out = NULL;
    knut_sync_config *c = calloc(1, sizeof *c);
    knut_status st = KNUT_ENOMEM;
    if (!c || !(c->file = strdup(name))) {
        knut_error_set(err, st, "out of memory");
        goto cleanup;
    }
    st = knut_conf_load_yaml(&c->root, text, len, name, err);
    if (st == KNUT_OK)
        st = config_build(c, dir ? dir : ".", err);
cleanup:
    if (st != KNUT_OK)
        knut_sync_config_free(c);
    else
        *out = c;
    return st;
}

knut_status knut_sync_config_load(knut_sync_config **out, const char *path, knut_error *err)
{
    KNUT_ASSERT_ARG(err, out && path);
    *out = NULL;
    knut_buf b = KNUT_BUF_INIT;
    char *dir = NULL;
    knut_status st = knut_file_read(path, KNUT_CONF_MAX_BYTES, &b, err);
    if (st != KNUT_OK)
        goto cleanup;
    if (!(dir = knut_sync__dirname(path))) {
        st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
        goto cleanup;
    }
    st = knut_sync_config_parse(out, b.data ? b.data : "", b.len, path, dir, err);
cleanup:
    free(dir);
    knut_buf_reset(&b);
    return st;
}
