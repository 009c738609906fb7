/*
 * serve.yml: views over Parquet/CSV files, GraphAr graphs (each vertex
 * and edge type a table), the FalkorDB connection and the named Cypher
 * queries served as tables (docs/serve.md has the format). GraphAr info
 * files are loaded here, so a missing or broken one stops the start. Loaded with the core conf module; every error names
 * file:line:col, an unknown key also the nearest known one. Strings stay
 * in the tree, which the config keeps. The FalkorDB password comes from a
 * file or the environment, never from serve.yml itself.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "knut/graph.h"
#include "knut/graphar.h"
#include "serve_int.h"

#define PASSWORD_FILE_MAX 4096
/* Names become DuckDB identifiers of the temp tables behind the views. */
#define NAME_MAX_LEN 128

static knut_status cerr(knut_error *err, const knut_conf *n, const char *fmt, ...)
    KNUT_PRINTF(3, 4);
static knut_status cerr(knut_error *err, const knut_conf *n, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return knut_error_set_at(err, KNUT_EINVAL, knut_conf_file(n), knut_conf_line(n),
                             knut_conf_col(n), "%s", msg);
}

/* Refuses keys of map n not in allowed, naming the nearest. */
static knut_status check_keys(const knut_conf *n, const char *what, const char *const *allowed,
                              knut_error *err)
{
    for (size_t i = 0; i < knut_conf_len(n); i++) {
        const char *k = knut_conf_key_at(n, i);
        size_t j = 0;
        while (allowed[j] && strcmp(allowed[j], k) != 0)
            j++;
        if (allowed[j])
            continue;
        const knut_conf *v = knut_conf_at(n, i);
        const char *near = knut_str_suggest(k, allowed);
        char hint[96] = "";
        if (near)
            snprintf(hint, sizeof hint, " (did you mean '%s'?)", near);
        int line = knut_conf_key_line(v) > 0 ? knut_conf_key_line(v) : knut_conf_line(v);
        int col = knut_conf_key_line(v) > 0 ? knut_conf_key_col(v) : knut_conf_col(v);
        return knut_error_set_at(err, KNUT_EINVAL, knut_conf_file(v), line, col,
                                 "unknown key '%s' in %s%s", k, what, hint);
    }
    return KNUT_OK;
}

static knut_status need_map(const knut_conf *n, const char *what, knut_error *err)
{
    return knut_conf_kind_of(n) == KNUT_CONF_MAP
               ? KNUT_OK
               : cerr(err, n, "%s must be a map, not %s", what,
                      knut_conf_kind_name(knut_conf_kind_of(n)));
}

/* A non-empty scalar at map[key]; *out NULL when absent and optional. */
static knut_status get_str(const knut_conf *map, const char *key, int required, const char *what,
                           const char **out, knut_error *err)
{
    const knut_conf *n = knut_conf_get(map, key);
    *out = NULL;
    if (!n)
        return required ? cerr(err, map, "%s needs '%s'", what, key) : KNUT_OK;
    const char *s = knut_conf_str(n);
    if (!s || !*s)
        return cerr(err, n, "'%s' of %s must be a non-empty string", key, what);
    *out = s;
    return KNUT_OK;
}

/* A name of a catalog, view, query or column: printable, no NUL, short. */
static knut_status check_name(const knut_conf *n, const char *s, const char *what,
                              knut_error *err)
{
    size_t len = strlen(s);
    if (len == 0 || len > NAME_MAX_LEN)
        return cerr(err, n, "%s '%.64s' must have 1 to %d characters", what, s, NAME_MAX_LEN);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            return cerr(err, n, "%s '%.64s' holds a control character", what, s);
    return KNUT_OK;
}

/* A Cypher parameter name: what FalkorDB's parameter block takes. */
static int param_name_ok(const char *s)
{
    if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
        return 0;
    for (s++; *s; s++)
        if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
              *s == '_'))
            return 0;
    return 1;
}

/* A DuckDB type name as written in serve.yml: letters, digits, blanks,
 * '(', ')', ',', '[', ']' only (DuckDB itself checks it is a type when
 * the tables are made; this keeps anything else out of the SQL). */
static knut_status check_type(const knut_conf *n, const char *s, knut_error *err)
{
    if (!*s || strlen(s) > NAME_MAX_LEN)
        return cerr(err, n, "a type name of 1 to %d characters is needed", NAME_MAX_LEN);
    for (const char *p = s; *p; p++)
        if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 (),[]_",
                    *p))
            return cerr(err, n, "type '%.64s' is not a DuckDB type name", s);
    return KNUT_OK;
}

/* name: TYPE pairs of a map into parallel arrays. */
static knut_status typed_names(const knut_conf *map, const char *what, int params,
                               const char ***names, const char ***types, size_t *n,
                               knut_error *err)
{
    knut_status st = need_map(map, what, err);
    if (st != KNUT_OK)
        return st;
    *n = knut_conf_len(map);
    *names = calloc(*n ? *n : 1, sizeof **names);
    *types = calloc(*n ? *n : 1, sizeof **types);
    if (!*names || !*types)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    for (size_t i = 0; i < *n; i++) {
        const knut_conf *v = knut_conf_at(map, i);
        (*names)[i] = knut_conf_key_at(map, i);
        if (params && !param_name_ok((*names)[i]))
            return cerr(err, v, "parameter '%.64s' of %s: a name of letters, digits and '_'",
                        (*names)[i], what);
        if ((st = check_name(v, (*names)[i], "column", err)) != KNUT_OK)
            return st;
        (*types)[i] = knut_conf_str(v);
        if (!(*types)[i])
            return cerr(err, v, "'%s' of %s needs a DuckDB type (VARCHAR, BIGINT, ...)",
                        (*names)[i], what);
        if ((st = check_type(v, (*types)[i], err)) != KNUT_OK)
            return st;
    }
    return KNUT_OK;
}

/* The absolute form of path, relative ones taken from the config's folder. */
static char *path_from(const char *config, const char *path)
{
    if (path[0] == '/')
        return strdup(path);
    const char *slash = strrchr(config, '/');
    char *dir = slash ? strndup(config, (size_t)(slash - config + 1)) : strdup("./");
    char base[PATH_MAX];
    char *abs = dir ? realpath(dir, base) : NULL;
    knut_buf b = KNUT_BUF_INIT;
    knut_buf_printf(&b, "%s/%s", abs ? abs : ".", path);
    free(dir);
    if (knut_buf_check(&b, NULL) != KNUT_OK) {
        knut_buf_reset(&b);
        return NULL;
    }
    return b.data;
}

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), m = strlen(tail);
    return n >= m && strcasecmp(s + n - m, tail) == 0;
}

/* A schema of views or GraphAr tables: a name, not one DuckDB or knut keeps. */
static knut_status check_schema(const knut_conf *n, const char *name, const char *what,
                                knut_error *err)
{
    knut_status st = check_name(n, name, what, err);
    if (st == KNUT_OK && (strcasecmp(name, KNUT_SERVE__CYPHER_CATALOG) == 0 ||
                          strcasecmp(name, "temp") == 0 || strcasecmp(name, "system") == 0 ||
                          strcasecmp(name, "memory") == 0 || strcasecmp(name, "main") == 0))
        st = cerr(err, n, "%s '%s' is a name DuckDB or knut keeps", what, name);
    return st;
}

static knut_status load_views(knut_serve__config *c, const knut_conf *views, const char *file,
                              knut_error *err)
{
    knut_status st = need_map(views, "views", err);
    size_t total = 0;
    for (size_t i = 0; st == KNUT_OK && i < knut_conf_len(views); i++) {
        const knut_conf *cat = knut_conf_at(views, i);
        if ((st = need_map(cat, "a views schema (view name: {path, format})", err)) == KNUT_OK)
            total += knut_conf_len(cat);
    }
    if (st != KNUT_OK)
        return st;
    if (!(c->views = calloc(total ? total : 1, sizeof *c->views)))
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    static const char *const keys[] = {"path", "format", NULL};
    for (size_t i = 0; st == KNUT_OK && i < knut_conf_len(views); i++) {
        const knut_conf *cat = knut_conf_at(views, i);
        const char *catalog = knut_conf_key_at(views, i);
        st = check_schema(cat, catalog, "views schema", err);
        for (size_t j = 0; st == KNUT_OK && j < knut_conf_len(cat); j++) {
            const knut_conf *v = knut_conf_at(cat, j);
            knut_serve__view *w = &c->views[c->n_views++];
            const char *path = NULL, *format = NULL;
            w->catalog = catalog;
            w->name = knut_conf_key_at(cat, j);
            w->node = v;
            if ((st = check_name(v, w->name, "view", err)) == KNUT_OK &&
                (st = need_map(v, "a view", err)) == KNUT_OK &&
                (st = check_keys(v, "a view", keys, err)) == KNUT_OK &&
                (st = get_str(v, "path", 1, "a view", &path, err)) == KNUT_OK)
                st = get_str(v, "format", 0, "a view", &format, err);
            if (st != KNUT_OK)
                break;
            if (format && strcmp(format, "parquet") != 0 && strcmp(format, "csv") != 0) {
                st = cerr(err, knut_conf_get(v, "format"), "format '%.32s': parquet or csv",
                          format);
                break;
            }
            w->csv = format ? strcmp(format, "csv") == 0 : ends_with(path, ".csv");
            if (!(w->path = path_from(file, path)))
                st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
        }
    }
    return st;
}

/* ---- graphar: GraphAr graphs, each a schema of tables ------------------ */

/* The adj list an edge type is served from: the one asked for, else the
 * first there of by-source (ordered first), then by-destination. */
static knut_status pick_adj(const knut_conf *item, const knut_graphar_edge_info *ei,
                            const char *want, int *out, knut_error *err)
{
    static const knut_graphar_adj_list_type order[] = {
        KNUT_GRAPHAR_ORDERED_BY_SOURCE, KNUT_GRAPHAR_UNORDERED_BY_SOURCE,
        KNUT_GRAPHAR_ORDERED_BY_DEST, KNUT_GRAPHAR_UNORDERED_BY_DEST};
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        if (want && strcmp(want, knut_graphar_adj_list_type_name(order[i])) != 0)
            continue;
        if (knut_graphar_edge_info_adj_list(ei, order[i])) {
            *out = (int)order[i];
            return KNUT_OK;
        }
    }
    return cerr(err, item, "graphar: edge %s_%s_%s has %s adj list", ei->src_type,
                ei->edge_type, ei->dst_type, want ? want : "no");
}

static knut_serve__view *add_view(knut_serve__config *c, knut_error *err)
{
    knut_serve__view *v = realloc(c->views, (c->n_views + 1) * sizeof *v);
    if (!v) {
        knut_error_set(err, KNUT_ENOMEM, "out of memory");
        return NULL;
    }
    c->views = v;
    memset(&v[c->n_views], 0, sizeof *v);
    return &v[c->n_views++];
}

/* The tables of graph gi in schema: every vertex type, every edge type. */
static knut_status graph_tables(knut_serve__config *c, const knut_conf *item,
                                const knut_graphar_graph_info *gi, const char *schema,
                                const char *adj, const char *dir, knut_error *err)
{
    knut_status st = KNUT_OK;
    size_t first = c->n_views;
    for (size_t i = 0; st == KNUT_OK && i < gi->n_vertices + gi->n_edges; i++) {
        knut_serve__view *v = add_view(c, err);
        if (!v)
            return err->code;
        v->catalog = schema;
        v->node = item;
        if (!(v->path = strdup(dir)))
            return knut_error_set(err, KNUT_ENOMEM, "out of memory");
        if (i < gi->n_vertices) {
            v->gar_vertex = gi->vertices[i];
            v->name = gi->vertices[i]->type;
        } else {
            const knut_graphar_edge_info *ei = gi->edges[i - gi->n_vertices];
            knut_buf b = KNUT_BUF_INIT;
            knut_buf_printf(&b, "%s_%s_%s", ei->src_type, ei->edge_type, ei->dst_type);
            if ((st = knut_buf_check(&b, err)) != KNUT_OK)
                return st;
            v->name = v->own = knut_buf_detach(&b, NULL);
            v->gar_edge = ei;
            st = pick_adj(item, ei, adj, &v->gar_adj, err);
        }
        if (st == KNUT_OK)
            st = check_name(item, v->name, "graphar table", err);
        for (size_t j = first; st == KNUT_OK && j + 1 < c->n_views; j++)
            if (strcasecmp(c->views[j].name, v->name) == 0)
                st = cerr(err, item, "graphar: two tables named '%s' in schema %s", v->name,
                          schema);
    }
    return st;
}

static knut_status load_graph(knut_serve__config *c, const knut_conf *item, const char *file,
                              knut_error *err)
{
    static const char *const keys[] = {"path", "schema", "adj_list", NULL};
    const char *path = NULL, *schema = NULL, *adj = NULL;
    knut_status st = need_map(item, "a graphar source (path, schema, adj_list)", err);
    if (st == KNUT_OK)
        st = check_keys(item, "a graphar source", keys, err);
    if (st == KNUT_OK)
        st = get_str(item, "path", 1, "a graphar source", &path, err);
    if (st == KNUT_OK)
        st = get_str(item, "schema", 0, "a graphar source", &schema, err);
    if (st == KNUT_OK)
        st = get_str(item, "adj_list", 0, "a graphar source", &adj, err);
    if (st == KNUT_OK && adj) {
        knut_graphar_adj_list_type t;
        if (knut_graphar_adj_list_type_parse(adj, &t, err) != KNUT_OK)
            st = cerr(err, knut_conf_get(item, "adj_list"), "adj_list '%.40s': "
                      "ordered_by_source, ordered_by_dest, unordered_by_source or "
                      "unordered_by_dest", adj);
    }
    if (st != KNUT_OK)
        return st;
    struct knut_graphar_graph_info **g = realloc(c->graphs, (c->n_graphs + 1) * sizeof *g);
    if (!g)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    c->graphs = g;
    g[c->n_graphs] = NULL;
    char *abs = path_from(file, path);
    if (!abs)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    /* the info files are read now: a missing or broken one stops the start */
    st = knut_graphar_graph_load_path(&g[c->n_graphs], abs, err);
    free(abs);
    if (st != KNUT_OK) {
        char where[512];
        snprintf(where, sizeof where, "%s:%d:%d: graphar source %.200s: ", knut_conf_file(item),
                 knut_conf_line(item), knut_conf_col(item), path);
        knut_error_prefix(err, "%s", where);
        err->code = KNUT_EINVAL; /* the config names a graph that cannot be loaded */
        return KNUT_EINVAL;
    }
    const knut_graphar_graph_info *gi = g[c->n_graphs++];
    if (!schema)
        schema = gi->name;
    if ((st = check_schema(item, schema, "graphar schema", err)) != KNUT_OK)
        return st;
    for (size_t i = 0; i < c->n_views; i++)
        if (strcasecmp(c->views[i].catalog, schema) == 0)
            return cerr(err, item, "graphar schema '%s' is already a %s schema (give "
                        "another with 'schema:')", schema,
                        c->views[i].gar_vertex || c->views[i].gar_edge ? "graphar" : "views");
    char real[PATH_MAX];
    const char *data = knut_graphar_graph_data_dir(gi);
    if (!realpath(data && *data ? data : ".", real))
        return cerr(err, item, "graphar source %.200s: its data folder %.200s: %s", path,
                    data, strerror(errno));
    knut_buf dir = KNUT_BUF_INIT;
    knut_buf_printf(&dir, "%s/", real);
    st = knut_buf_check(&dir, err);
    if (st == KNUT_OK)
        st = graph_tables(c, item, gi, schema, adj, dir.data, err);
    knut_buf_reset(&dir);
    return st;
}

static knut_status load_graphar(knut_serve__config *c, const knut_conf *list, const char *file,
                                knut_error *err)
{
    if (knut_conf_kind_of(list) != KNUT_CONF_SEQ)
        return cerr(err, list, "graphar must be a list of sources (- path: ...), not %s",
                    knut_conf_kind_name(knut_conf_kind_of(list)));
    knut_status st = KNUT_OK;
    for (size_t i = 0; st == KNUT_OK && i < knut_conf_len(list); i++)
        st = load_graph(c, knut_conf_at(list, i), file, err);
    return st;
}

/* The password: from password_file (one line) or password_env. */
static knut_status load_password(knut_serve__config *c, const knut_conf *f, const char *file,
                                 knut_error *err)
{
    const char *pfile = NULL, *penv = NULL;
    knut_status st = get_str(f, "password_file", 0, "falkordb", &pfile, err);
    if (st == KNUT_OK)
        st = get_str(f, "password_env", 0, "falkordb", &penv, err);
    if (st != KNUT_OK || (!pfile && !penv))
        return st;
    if (pfile && penv)
        return cerr(err, f, "falkordb: password_file or password_env, not both");
    if (penv) {
        const char *v = getenv(penv);
        if (!v || !*v)
            return cerr(err, knut_conf_get(f, "password_env"),
                        "falkordb: the environment variable %.64s is not set", penv);
        c->falkor_password = strdup(v);
    } else {
        char *abs = path_from(file, pfile);
        knut_buf b = KNUT_BUF_INIT;
        st = abs ? knut_file_read(abs, PASSWORD_FILE_MAX, &b, err)
                 : knut_error_set(err, KNUT_ENOMEM, "out of memory");
        free(abs);
        if (st != KNUT_OK) {
            const knut_conf *n = knut_conf_get(f, "password_file");
            knut_buf_reset(&b);
            knut_error_prefix(err, "%s:%d:%d: falkordb password_file: ", knut_conf_file(n),
                              knut_conf_line(n), knut_conf_col(n));
            return st;
        }
        while (b.len && (b.data[b.len - 1] == '\n' || b.data[b.len - 1] == '\r'))
            b.len--;
        c->falkor_password = strndup(b.data ? b.data : "", b.len);
        for (volatile char *p = b.data; p && p < b.data + b.cap; p++)
            *p = 0;
        knut_buf_reset(&b);
    }
    return c->falkor_password ? KNUT_OK : knut_error_set(err, KNUT_ENOMEM, "out of memory");
}

static knut_status load_falkor(knut_serve__config *c, const knut_conf *f, const char *file,
                               knut_error *err)
{
    static const char *const keys[] = {"url", "graph", "password_file", "password_env",
                                       "timeout_ms", NULL};
    const char *url = NULL, *graph = NULL;
    knut_status st = need_map(f, "falkordb", err);
    if (st == KNUT_OK)
        st = check_keys(f, "falkordb", keys, err);
    if (st == KNUT_OK)
        st = get_str(f, "url", 1, "falkordb", &url, err);
    if (st == KNUT_OK)
        st = get_str(f, "graph", 1, "falkordb", &graph, err);
    if (st == KNUT_OK && strncmp(url, "redis://", 8) != 0)
        st = cerr(err, knut_conf_get(f, "url"), "falkordb url must be redis://host:port");
    if (st == KNUT_OK && strchr(url + 8, '@'))
        st = cerr(err, knut_conf_get(f, "url"), "falkordb url holds a password: give it by "
                                                "password_file or password_env instead");
    int64_t t = 30000;
    if (st == KNUT_OK && knut_conf_get(f, "timeout_ms"))
        st = knut_conf_get_i64(f, "timeout_ms", &t, err);
    if (st == KNUT_OK && (t < 1 || t > 3600000))
        st = cerr(err, knut_conf_get(f, "timeout_ms"), "timeout_ms from 1 to 3600000");
    if (st != KNUT_OK)
        return st;
    c->falkor_timeout_ms = (int)t;
    if (!(c->falkor_url = strdup(url)) || !(c->falkor_graph = strdup(graph)))
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    return load_password(c, f, file, err);
}

static knut_status load_queries(knut_serve__config *c, const knut_conf *qs, knut_error *err)
{
    static const char *const keys[] = {"cypher", "params", "columns", NULL};
    knut_status st = need_map(qs, "queries", err);
    if (st != KNUT_OK)
        return st;
    c->n_queries = knut_conf_len(qs);
    if (!(c->queries = calloc(c->n_queries ? c->n_queries : 1, sizeof *c->queries)))
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    for (size_t i = 0; st == KNUT_OK && i < c->n_queries; i++) {
        const knut_conf *q = knut_conf_at(qs, i);
        knut_serve__query *d = &c->queries[i];
        d->name = knut_conf_key_at(qs, i);
        d->node = q;
        if ((st = check_name(q, d->name, "query", err)) != KNUT_OK ||
            (st = need_map(q, "a query", err)) != KNUT_OK ||
            (st = check_keys(q, "a query", keys, err)) != KNUT_OK ||
            (st = get_str(q, "cypher", 1, "a query", &d->cypher, err)) != KNUT_OK)
            break;
        const knut_conf *p = knut_conf_get(q, "params");
        if (p && (st = typed_names(p, "params", 1, &d->params, &d->param_types, &d->n_params,
                                   err)) != KNUT_OK)
            break;
        const knut_conf *cols = knut_conf_get(q, "columns");
        if (cols && (st = typed_names(cols, "columns", 0, &d->cols, &d->col_types, &d->n_cols,
                                      err)) != KNUT_OK)
            break;
        if (cols && d->n_cols == 0)
            st = cerr(err, cols, "query '%s': columns is empty", d->name);
        for (size_t a = 0; st == KNUT_OK && a < d->n_params; a++)
            for (size_t b = 0; st == KNUT_OK && b < d->n_cols; b++)
                if (strcasecmp(d->params[a], d->cols[b]) == 0)
                    st = cerr(err, cols, "query '%s': '%s' is a parameter and a column",
                              d->name, d->params[a]);
    }
    if (st == KNUT_OK && c->n_queries && !c->falkor_url)
        st = cerr(err, qs, "queries need a 'falkordb:' connection");
    return st;
}

knut_status knut_serve__config_load(knut_serve__config *c, const char *path, knut_error *err)
{
    memset(c, 0, sizeof *c);
    pthread_mutex_init(&c->lock, NULL);
    c->loaded = 1;
    knut_conf *tree = NULL;
    knut_status st = knut_conf_load_file(&tree, path, err);
    c->tree = tree;
    static const char *const keys[] = {"views", "graphar", "falkordb", "queries", NULL};
    if (st == KNUT_OK && knut_conf_kind_of(tree) == KNUT_CONF_NULL)
        return KNUT_OK; /* an empty file: nothing to add */
    if (st == KNUT_OK)
        st = need_map(tree, "serve.yml", err);
    if (st == KNUT_OK)
        st = check_keys(tree, "serve.yml", keys, err);
    if (st == KNUT_OK && knut_conf_get(tree, "views"))
        st = load_views(c, knut_conf_get(tree, "views"), path, err);
    if (st == KNUT_OK && knut_conf_get(tree, "graphar"))
        st = load_graphar(c, knut_conf_get(tree, "graphar"), path, err);
    if (st == KNUT_OK && knut_conf_get(tree, "falkordb"))
        st = load_falkor(c, knut_conf_get(tree, "falkordb"), path, err);
    if (st == KNUT_OK && knut_conf_get(tree, "queries"))
        st = load_queries(c, knut_conf_get(tree, "queries"), err);
    return st;
}

void knut_serve__config_free(knut_serve__config *c)
{
    if (!c->loaded)
        return;
    for (size_t i = 0; i < c->n_views; i++) {
        free(c->views[i].path);
        free(c->views[i].own);
    }
    free(c->views);
    for (size_t i = 0; i < c->n_graphs; i++)
        knut_graphar_graph_info_free(c->graphs[i]);
    free(c->graphs);
    for (size_t i = 0; i < c->n_queries; i++) {
        free(c->queries[i].cols);
        free(c->queries[i].col_types);
        free(c->queries[i].params);
        free(c->queries[i].param_types);
        free(c->queries[i].inferred);
    }
    free(c->queries);
    free(c->falkor_url);
    free(c->falkor_graph);
    if (c->falkor_password) {
        for (volatile char *p = c->falkor_password; *p; p++)
            *p = 0;
        free(c->falkor_password);
    }
    knut_graph_falkor_close(c->falkor);
    free(c->conn_sql);
    knut_conf_free(c->tree);
    pthread_mutex_destroy(&c->lock);
    memset(c, 0, sizeof *c);
}
