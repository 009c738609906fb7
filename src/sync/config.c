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

#include "sync_int.h"

#define CONF(n) ((const knut_conf *)(n))

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
    for (size_t i = 0; i < knut_conf_len(n); i++) {
        const char *k = knut_conf_key_at(n, i);
        size_t j = 0;
        while (allowed[j] && strcmp(allowed[j], k) != 0)
            j++;
        if (allowed[j])
            continue;
        /* the key's own position (its value may be lines below), and the
         * nearest allowed key: a typo is the usual reason */
        const knut_conf *v = knut_conf_at(n, i);
        const char *near = knut_str_suggest(k, allowed);
        char hint[96] = "";
        if (near)
            snprintf(hint, sizeof hint, " (did you mean '%s'?)", near);
        int line = knut_conf_key_line(v) > 0 ? knut_conf_key_line(v) : knut_conf_line(v);
        int col = knut_conf_key_line(v) > 0 ? knut_conf_key_col(v) : knut_conf_col(v);
        return knut_error_set_at(err, KNUT_EINVAL, knut_conf_file(v), line, col,
                                 "%s%s%sunknown key '%s' in %s%s", table ? "table '" : "",
                                 table ? table : "", table ? "': " : "", k, what, hint);
    }
    return KNUT_OK;
}

/* A non-empty scalar, or an error naming key. */
static knut_status req_str(const knut_conf *map, const char *key, const char *table,
                           const char *what, const char **out, knut_error *err)
{
    const knut_conf *n = knut_conf_get(map, key);
    if (!n)
        return cerr(err, map, table, "%s needs '%s'", what, key);
    const char *s = knut_conf_str(n);
    if (!s || !*s)
        return cerr(err, n, table, "'%s' of %s must be a non-empty string", key, what);
    *out = s;
    return KNUT_OK;
}

const char *knut_sync__renamed(const void *rename_map, const char *column)
{
    const knut_conf *r = knut_conf_get(CONF(rename_map), column);
    const char *s = r ? knut_conf_str(r) : NULL;
    return s && *s ? s : column;
}

/* A list of names (scalars, or {name, column} maps with with_maps). */
static knut_status prop_list(const knut_conf *seq, const knut_conf *rename, int with_maps,
                             const char *table, const char *what, knut_sync_prop **out,
                             size_t *n_out, knut_error *err)
{
    if (knut_conf_kind_of(seq) != KNUT_CONF_SEQ)
        return cerr(err, seq, table, "%s must be a list", what);
    size_t n = knut_conf_len(seq);
    knut_sync_prop *p = calloc(n ? n : 1, sizeof *p);
    if (!p)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    *out = p;
    *n_out = n;
    for (size_t i = 0; i < n; i++) {
        const knut_conf *it = knut_conf_at(seq, i);
        p[i].node = it;
        if (knut_conf_kind_of(it) == KNUT_CONF_MAP && with_maps) {
            static const char *const allowed[] = {"name", "column", NULL};
            knut_status st = check_keys(it, table, what, allowed, err);
            if (st == KNUT_OK)
                st = req_str(it, "name", table, what, &p[i].prop, err);
            if (st != KNUT_OK)
                return st;
            const knut_conf *c = knut_conf_get(it, "column");
            p[i].column = c && knut_conf_str(c) && *knut_conf_str(c) ? knut_conf_str(c) : p[i].prop;
        } else {
            const char *s = knut_conf_str(it);
            if (!s || !*s)
                return cerr(err, it, table, "%s: item %zu must be a column name%s", what, i + 1,
                            with_maps ? " or {name, column}" : "");
            p[i].column = s;
            p[i].prop = knut_sync__renamed(rename, s);
        }
        if (strcmp(p[i].column, KNUT_SYNC_CHANGE_COLUMN) == 0)
            return cerr(err, it, table, "%s: column '%s' is the CDC tag and never reaches the graph",
                        what, p[i].column);
        for (size_t j = 0; j < i; j++)
            if (strcmp(p[j].prop, p[i].prop) == 0)
                return cerr(err, it, table, "%s: property '%s' listed twice", what, p[i].prop);
    }
    return KNUT_OK;
}

static knut_status parse_vertex(const knut_conf *n, const char *table, knut_sync_vertex_step *v,
                                knut_error *err)
{
    static const char *const allowed[] = {"labels", "label", "keys", "properties", "rename", NULL};
    knut_status st = check_keys(n, table, "a vertex step", allowed, err);
    if (st != KNUT_OK)
        return st;
    const knut_conf *rename = knut_conf_get(n, "rename");
    if (rename && knut_conf_kind_of(rename) != KNUT_CONF_MAP)
        return cerr(err, rename, table, "'rename' must be a map of column: property");
    v->rename = rename;
    const knut_conf *labels = knut_conf_get(n, "labels");
    if (!labels)
        labels = knut_conf_get(n, "label");
    if (!labels)
        return cerr(err, n, table, "a vertex step needs 'labels'");
    size_t nl = knut_conf_kind_of(labels) == KNUT_CONF_SEQ ? knut_conf_len(labels) : 1;
    v->labels = calloc(nl ? nl : 1, sizeof *v->labels);
    if (!v->labels)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    v->n_labels = nl;
    for (size_t i = 0; i < nl; i++) {
        const knut_conf *l = knut_conf_kind_of(labels) == KNUT_CONF_SEQ ? knut_conf_at(labels, i)
                                                                        : labels;
        const char *s = knut_conf_str(l);
        if (!s || !*s || strchr(s, '`'))
            return cerr(err, l, table, "a label must be a non-empty name without backticks");
        v->labels[i] = s;
    }
    if (nl == 0)
        return cerr(err, labels, table, "a vertex step needs at least one label");
    const knut_conf *keys = knut_conf_get(n, "keys");
    if (!keys)
        return cerr(err, n, table, "vertex step '%s' needs 'keys'", v->labels[0]);
    st = prop_list(keys, rename, 0, table, "keys", &v->keys, &v->n_keys, err);
    if (st == KNUT_OK && v->n_keys == 0)
        st = cerr(err, keys, table, "vertex step '%s' needs at least one key", v->labels[0]);
    if (st != KNUT_OK)
        return st;
    const knut_conf *props = knut_conf_get(n, "properties");
    v->all_props = props == NULL;
    if (props)
        st = prop_list(props, rename, 1, table, "properties", &v->props, &v->n_props, err);
    return st;
}

/* from:/to: {label, keys: {prop: column} | [columns]} */
static knut_status parse_endpoint(const knut_conf *n, const char *table, const char *what,
                                  knut_sync_endpoint *e, knut_error *err)
{
    static const char *const allowed[] = {"label", "keys", NULL};
    if (knut_conf_kind_of(n) != KNUT_CONF_MAP)
        return cerr(err, n, table, "'%s' must be a map with label and keys", what);
    knut_status st = check_keys(n, table, what, allowed, err);
    if (st == KNUT_OK)
        st = req_str(n, "label", table, what, &e->label, err);
    if (st != KNUT_OK)
        return st;
    const knut_conf *keys = knut_conf_get(n, "keys");
    if (!keys || knut_conf_len(keys) == 0)
        return cerr(err, keys ? keys : n, table, "'%s' needs 'keys' (property: column)", what);
    if (knut_conf_kind_of(keys) == KNUT_CONF_SEQ)
        return prop_list(keys, NULL, 0, table, what, &e->keys, &e->n_keys, err);
    if (knut_conf_kind_of(keys) != KNUT_CONF_MAP)
        return cerr(err, keys, table, "'keys' of '%s' must map property: column", what);
    e->n_keys = knut_conf_len(keys);
    e->keys = calloc(e->n_keys, sizeof *e->keys);
    if (!e->keys)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    for (size_t i = 0; i < e->n_keys; i++) {
        const knut_conf *c = knut_conf_at(keys, i);
        e->keys[i].prop = knut_conf_key_at(keys, i);
        e->keys[i].column = knut_conf_str(c);
        e->keys[i].node = c;
        if (!e->keys[i].column || !*e->keys[i].column)
            return cerr(err, c, table, "key '%s' of '%s' must name a column", e->keys[i].prop,
                        what);
    }
    return KNUT_OK;
}

static knut_status parse_edge(const knut_conf *n, const char *table, knut_sync_edge_step *e,
                              knut_error *err)
{
    static const char *const allowed[] = {"type", "from", "to", "properties", "rename", NULL};
    knut_status st = check_keys(n, table, "an edge step", allowed, err);
    if (st == KNUT_OK)
        st = req_str(n, "type", table, "an edge step", &e->type, err);
    if (st != KNUT_OK)
        return st;
    if (strchr(e->type, '`'))
        return cerr(err, knut_conf_get(n, "type"), table, "an edge type cannot hold a backtick");
    const knut_conf *from = knut_conf_get(n, "from"), *to = knut_conf_get(n, "to");
    if (!from || !to)
        return cerr(err, n, table, "edge step '%s' needs 'from' and 'to'", e->type);
    st = parse_endpoint(from, table, "from", &e->from, err);
    if (st == KNUT_OK)
        st = parse_endpoint(to, table, "to", &e->to, err);
    if (st != KNUT_OK)
        return st;
    const knut_conf *rename = knut_conf_get(n, "rename");
    if (rename && knut_conf_kind_of(rename) != KNUT_CONF_MAP)
        return cerr(err, rename, table, "'rename' must be a map of column: property");
    e->rename = rename;
    const knut_conf *props = knut_conf_get(n, "properties");
    e->all_props = props == NULL;
    if (props)
        st = prop_list(props, rename, 1, table, "properties", &e->props, &e->n_props, err);
    return st;
}

static knut_status parse_fk(const knut_conf *n, const char *table, knut_sync_fk_step *f,
                            knut_error *err)
{
    static const char *const allowed[] = {"type", "column", "to", NULL};
    static const char *const to_allowed[] = {"label", "key", NULL};
    f->node = n;
    knut_status st = check_keys(n, table, "a foreign-key edge step", allowed, err);
    if (st == KNUT_OK)
        st = req_str(n, "type", table, "a foreign-key edge step", &f->type, err);
    if (st == KNUT_OK)
        st = req_str(n, "column", table, "a foreign-key edge step", &f->column, err);
    if (st != KNUT_OK)
        return st;
    const knut_conf *to = knut_conf_get(n, "to");
    if (!to || knut_conf_kind_of(to) != KNUT_CONF_MAP)
        return cerr(err, to ? to : n, table, "foreign-key edge '%s' needs 'to: {label, key}'",
                    f->type);
    st = check_keys(to, table, "to", to_allowed, err);
    if (st == KNUT_OK)
        st = req_str(to, "label", table, "to", &f->to_label, err);
    if (st == KNUT_OK)
        st = req_str(to, "key", table, "to", &f->to_key, err);
    return st;
}

/* Runs parse over every item of the optional list `key`. */
#define PARSE_LIST(tnode, key, name, arr, narr, fn)                                        \
    do {                                                                                   \
        const knut_conf *l_ = knut_conf_get(tnode, key);                                   \
        if (!l_)                                                                           \
            break;                                                                         \
        if (knut_conf_kind_of(l_) != KNUT_CONF_SEQ)                                        \
            return cerr(err, l_, name, "'%s' must be a list of steps", key);               \
        (narr) = knut_conf_len(l_);                                                        \
        (arr) = calloc((narr) ? (narr) : 1, sizeof *(arr));                                \
        if (!(arr))                                                                        \
            return knut_error_set(err, KNUT_ENOMEM, "out of memory");                      \
        for (size_t i_ = 0; i_ < (narr); i_++) {                                           \
            const knut_conf *it_ = knut_conf_at(l_, i_);                                   \
            if (knut_conf_kind_of(it_) != KNUT_CONF_MAP)                                   \
                return cerr(err, it_, name, "each item of '%s' must be a map", key);       \
            knut_status s_ = fn(it_, name, &(arr)[i_], err);                               \
            if (s_ != KNUT_OK)                                                             \
                return s_;                                                                 \
        }                                                                                  \
    } while (0)

static knut_status parse_table(const knut_conf *n, const char *name, const char *dir,
                               knut_sync_table *t, knut_error *err)
{
    static const char *const allowed[] = {"path", "format", "mode", "sql", "vertices",
                                          "edges", "fk_edges", "asset", "sequence_by",
                                          "missing_endpoints", "missing_endpoints_timeout",
                                          "columns", NULL};
    t->name = name;
    t->node = n;
    if (knut_conf_kind_of(n) != KNUT_CONF_MAP)
        return cerr(err, n, name, "a table must be a map");
    knut_status st = check_keys(n, name, "the table", allowed, err);
    const char *path = NULL, *s;
    if (st == KNUT_OK)
        st = req_str(n, "path", name, "the table", &path, err);
    if (st != KNUT_OK)
        return st;
    if (!(t->path = knut_sync__path_join(dir, path)))
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
    PARSE_LIST(n, "vertices", name, t->vertices, t->n_vertices, parse_vertex);
    PARSE_LIST(n, "edges", name, t->edges, t->n_edges, parse_edge);
    PARSE_LIST(n, "fk_edges", name, t->fk_edges, t->n_fk_edges, parse_fk);
    if (t->n_vertices + t->n_edges == 0)
        return cerr(err, n, name, "the table needs at least one vertex or edge step");
    if (t->n_fk_edges && t->n_vertices == 0)
        return cerr(err, knut_conf_get(n, "fk_edges"), name,
                    "fk_edges start at the table's first vertex step: add one under 'vertices'");
    for (size_t i = 0; i < t->n_fk_edges; i++)
        if (t->vertices[0].n_keys != 1)
            return cerr(err, t->fk_edges[i].node, name,
                        "fk_edges need a single-key first vertex step");
    return KNUT_OK;
}

static void table_free(knut_sync_table *t)
{
    for (size_t i = 0; i < t->n_vertices; i++) {
        free(t->vertices[i].labels);
        free(t->vertices[i].keys);
        free(t->vertices[i].props);
    }
    for (size_t i = 0; i < t->n_edges; i++) {
        free(t->edges[i].from.keys);
        free(t->edges[i].to.keys);
        free(t->edges[i].props);
    }
    free(t->vertices);
    free(t->edges);
    free(t->fk_edges);
    free(t->path);
    knut_sync__columns_free(t);
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
