/*
 * The mapping part of a graph config (sync.yml tables, pipeline graph
 * sinks): `vertices:`, `edges:` and `fk_edges:` into knut_graph_map steps
 * (knut/graph_map.h). Strings stay in the YAML tree so messages at run
 * time can still point at file:line:col. Every error names the position,
 * the owner (table or sink) and the key.
 */
#include "knut/graph_map.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONF(n) ((const knut_conf *)(n))

/* Who the mapping belongs to, for messages: "table 'x'", "sink 'g'". */
typedef struct owner {
    const char *kind, *name;
    const char *reserved; /* a column no step may use, or NULL */
} owner;

/* "file:line:col: table 'x': " + message */
static knut_status cerr(knut_error *err, const knut_conf *n, const owner *table, const char *fmt,
                        ...) KNUT_PRINTF(4, 5);
static knut_status cerr(knut_error *err, const knut_conf *n, const owner *table, const char *fmt,
                        ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (table && table->name)
        return knut_error_set_at(err, KNUT_EINVAL, knut_conf_file(n), knut_conf_line(n),
                                 knut_conf_col(n), "%s '%s': %s", table->kind, table->name, msg);
    return knut_error_set_at(err, KNUT_EINVAL, knut_conf_file(n), knut_conf_line(n),
                             knut_conf_col(n), "%s", msg);
}

/* Refuses keys of map n not in the NULL-terminated list. */
static knut_status check_keys(const knut_conf *n, const owner *table, const char *what,
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
        int named = table && table->name;
        const char *near = knut_str_suggest(k, allowed);
        char hint[96] = "";
        if (near)
            snprintf(hint, sizeof hint, " (did you mean '%s'?)", near);
        int line = knut_conf_key_line(v) > 0 ? knut_conf_key_line(v) : knut_conf_line(v);
        int col = knut_conf_key_line(v) > 0 ? knut_conf_key_col(v) : knut_conf_col(v);
        return knut_error_set_at(err, KNUT_EINVAL, knut_conf_file(v), line, col,
                                 "%s%s%s%s%sunknown key '%s' in %s%s", named ? table->kind : "",
                                 named ? " '" : "", named ? table->name : "",
                                 named ? "': " : "", "", k, what, hint);
    }
    return KNUT_OK;
}

/* A non-empty scalar, or an error naming key. */
static knut_status req_str(const knut_conf *map, const char *key, const owner *table,
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

const char *knut_graph_map_renamed(const void *rename_map, const char *column)
{
    const knut_conf *r = knut_conf_get(CONF(rename_map), column);
    const char *s = r ? knut_conf_str(r) : NULL;
    return s && *s ? s : column;
}

/* A list of names (scalars, or {name, column} maps with with_maps). */
static knut_status prop_list(const knut_conf *seq, const knut_conf *rename, int with_maps,
                             const owner *table, const char *what, knut_graph_map_prop **out,
                             size_t *n_out, knut_error *err)
{
    if (knut_conf_kind_of(seq) != KNUT_CONF_SEQ)
        return cerr(err, seq, table, "%s must be a list", what);
    size_t n = knut_conf_len(seq);
    knut_graph_map_prop *p = calloc(n ? n : 1, sizeof *p);
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
            p[i].prop = knut_graph_map_renamed(rename, s);
        }
        if (table && table->reserved && strcmp(p[i].column, table->reserved) == 0)
            return cerr(err, it, table, "%s: column '%s' is the CDC tag and never reaches the graph",
                        what, p[i].column);
        for (size_t j = 0; j < i; j++)
            if (strcmp(p[j].prop, p[i].prop) == 0)
                return cerr(err, it, table, "%s: property '%s' listed twice", what, p[i].prop);
    }
    return KNUT_OK;
}

static knut_status parse_vertex(const knut_conf *n, const owner *table, knut_graph_map_vertex *v,
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
static knut_status parse_endpoint(const knut_conf *n, const owner *table, const char *what,
                                  knut_graph_map_endpoint *e, knut_error *err)
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

static knut_status parse_edge(const knut_conf *n, const owner *table, knut_graph_map_edge *e,
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

static knut_status parse_fk(const knut_conf *n, const owner *table, knut_graph_map_fk *f,
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


knut_status knut_graph_map_parse(const knut_conf *n, const char *kind, const char *name,
                                 const char *reserved, knut_graph_map *m, knut_error *err)
{
    owner o = {kind ? kind : "table", name, reserved};
    const owner *on = &o;
    memset(m, 0, sizeof *m);
    PARSE_LIST(n, "vertices", on, m->vertices, m->n_vertices, parse_vertex);
    PARSE_LIST(n, "edges", on, m->edges, m->n_edges, parse_edge);
    PARSE_LIST(n, "fk_edges", on, m->fk_edges, m->n_fk_edges, parse_fk);
    if (m->n_vertices + m->n_edges == 0)
        return cerr(err, n, on, "the %s needs at least one vertex or edge step", o.kind);
    if (m->n_fk_edges && m->n_vertices == 0)
        return cerr(err, knut_conf_get(n, "fk_edges"), on,
                    "fk_edges start at the %s's first vertex step: add one under 'vertices'",
                    o.kind);
    for (size_t i = 0; i < m->n_fk_edges; i++)
        if (m->vertices[0].n_keys != 1)
            return cerr(err, m->fk_edges[i].node, on,
                        "fk_edges need a single-key first vertex step");
    return KNUT_OK;
}

void knut_graph_map_free(knut_graph_map *m)
{
    if (!m)
        return;
    for (size_t i = 0; m->vertices && i < m->n_vertices; i++) {
        free(m->vertices[i].labels);
        free(m->vertices[i].keys);
        free(m->vertices[i].props);
    }
    for (size_t i = 0; m->edges && i < m->n_edges; i++) {
        free(m->edges[i].from.keys);
        free(m->edges[i].to.keys);
        free(m->edges[i].props);
    }
    free(m->vertices);
    free(m->edges);
    free(m->fk_edges);
    memset(m, 0, sizeof *m);
}

knut_status knut_graph_map_check_keys(const knut_conf *n, const char *kind, const char *name,
                                      const char *what, const char *const *allowed,
                                      knut_error *err)
{
    owner o = {kind ? kind : "table", name, NULL};
    return check_keys(n, &o, what, allowed, err);
}

knut_status knut_graph_map_req_str(const knut_conf *map, const char *key, const char *kind,
                                   const char *name, const char *what, const char **out,
                                   knut_error *err)
{
    owner o = {kind ? kind : "table", name, NULL};
    return req_str(map, key, &o, what, out, err);
}
