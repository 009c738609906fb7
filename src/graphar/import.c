/*
 * Loading the `knut gar import` config (YAML or JSON, schema in
 * docs/graphar.md "Importing tables"). Everything that can be checked
 * without reading data is checked here, each error naming file:line:col
 * and the field path: unknown keys (typos), kinds, chunk sizes, file and
 * adj-list types, a source given as exactly one of table/query, edges
 * naming defined vertex types with as many key columns. Running
 * (import_run.c) then only meets data problems.
 */
#include "import_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define FAIL knut_graphar__fail

static knut_status oom(knut_error *err)
{
    return knut_error_set(err, KNUT_ENOMEM, "import: out of memory");
}

char *knut_graphar__import_resolve(const char *dir, const char *path)
{
    if (path[0] == '/' || !dir || !*dir)
        return strdup(path);
    char *s = malloc(strlen(dir) + strlen(path) + 1);
    if (s)
        sprintf(s, "%s%s", dir, path);
    return s;
}

static const knut_conf *present(const knut_conf *map, const char *key)
{
    const knut_conf *n = knut_conf_get(map, key);
    return n && knut_conf_kind_of(n) != KNUT_CONF_NULL ? n : NULL;
}

/* Refuses keys outside allowed (a NULL-terminated list): typos in a config
 * should not silently fall back to defaults. */
static knut_status check_keys(const knut_conf *map, const char *const *allowed,
                              const char *field, knut_error *err)
{
    for (size_t i = 0; i < knut_conf_len(map); i++) {
        const char *k = knut_conf_key_at(map, i);
        size_t a = 0;
        while (allowed[a] && strcmp(allowed[a], k) != 0)
            a++;
        if (!allowed[a])
            return FAIL(err, KNUT_EINVAL, knut_conf_at(map, i), field, "unknown key '%s'", k);
    }
    return KNUT_OK;
}

static knut_status want_map(const knut_conf *n, const char *field, knut_error *err)
{
    if (knut_conf_kind_of(n) != KNUT_CONF_MAP)
        return FAIL(err, KNUT_EINVAL, n, field, "expected a map");
    return KNUT_OK;
}

static knut_status get_str(const knut_conf *map, const char *key, const char *field,
                           int required, const char **out, knut_error *err)
{
    const knut_conf *n = present(map, key);
    *out = NULL;
    if (!n)
        return required ? FAIL(err, KNUT_ENOTFOUND, map, field, "missing required key '%s'", key)
                        : KNUT_OK;
    if (knut_conf_kind_of(n) != KNUT_CONF_SCALAR || !*knut_conf_str(n))
        return FAIL(err, KNUT_EINVAL, n, field, "'%s' must be a non-empty string", key);
    *out = knut_conf_str(n);
    return KNUT_OK;
}

static knut_status get_pos(const knut_conf *map, const char *key, const char *field,
                           int64_t def, int64_t *out, knut_error *err)
{
    const knut_conf *n = present(map, key);
    *out = def;
    if (!n)
        return KNUT_OK;
    if (knut_conf_get_i64(map, key, out, NULL) != KNUT_OK || *out <= 0)
        return FAIL(err, KNUT_EINVAL, n, field, "'%s' must be an integer > 0", key);
    return KNUT_OK;
}

static knut_status get_bool(const knut_conf *map, const char *key, const char *field, int def,
                            int *out, int *given, knut_error *err)
{
    const knut_conf *n = present(map, key);
    *out = def;
    if (given)
        *given = n != NULL;
    if (n && knut_conf_get_bool(map, key, out, NULL) != KNUT_OK)
        return FAIL(err, KNUT_EINVAL, n, field, "'%s' must be true or false", key);
    return KNUT_OK;
}

/* A string or a list of strings (keys, table paths). */
static knut_status get_strs(const knut_conf *map, const char *key, const char *field,
                            const char ***out, size_t *n_out, knut_error *err)
{
    const knut_conf *n = present(map, key);
    *out = NULL;
    *n_out = 0;
    if (!n)
        return KNUT_OK;
    size_t len = knut_conf_kind_of(n) == KNUT_CONF_SEQ ? knut_conf_len(n) : 1;
    if (knut_conf_kind_of(n) == KNUT_CONF_MAP || len == 0 || len > KNUT_GRAPHAR_MAX_ITEMS)
        return FAIL(err, KNUT_EINVAL, n, field, "'%s' must be a string or a list of strings",
                    key);
    const char **v = calloc(len, sizeof *v);
    if (!v)
        return oom(err);
    for (size_t i = 0; i < len; i++) {
        const knut_conf *it = knut_conf_kind_of(n) == KNUT_CONF_SEQ ? knut_conf_at(n, i) : n;
        if (knut_conf_kind_of(it) != KNUT_CONF_SCALAR || !*knut_conf_str(it)) {
            free(v);
            return FAIL(err, KNUT_EINVAL, it, field, "'%s' items must be non-empty strings",
                        key);
        }
        v[i] = knut_conf_str(it);
    }
    *out = v;
    *n_out = len;
    return KNUT_OK;
}

static knut_status get_file_type(const knut_conf *map, const char *field,
                                 knut_graphar_file_type def, knut_graphar_file_type *out,
                                 knut_error *err)
{
    const char *s = NULL;
    knut_status st = get_str(map, "file_type", field, 0, &s, err);
    *out = def;
    if (st || !s)
        return st;
    knut_error sub = KNUT_ERROR_INIT;
    if (knut_graphar_file_type_parse(s, out, &sub))
        return FAIL(err, KNUT_EINVAL, present(map, "file_type"), field, "%s", sub.message);
    if (*out != KNUT_GRAPHAR_FILE_PARQUET && *out != KNUT_GRAPHAR_FILE_CSV)
        return FAIL(err, KNUT_EUNSUPPORTED, present(map, "file_type"), field,
                    "file_type %s cannot be written (parquet and csv can)", s);
    return KNUT_OK;
}

/* ---- properties -------------------------------------------------------- */

static knut_status parse_prop(const knut_conf *n, const char *field, int edge, imp_prop *p,
                              knut_error *err)
{
    static const char *const keys[] = {"name", "column", "type", "primary", "nullable",
                                       "cardinality", "delimiter", NULL};
    memset(p, 0, sizeof *p);
    p->node = n;
    p->nullable = 1;
    if (knut_conf_kind_of(n) == KNUT_CONF_SCALAR) {
        p->name = p->column = knut_conf_str(n);
        return KNUT_OK;
    }
    knut_status st;
    if ((st = want_map(n, field, err)) || (st = check_keys(n, keys, field, err)) ||
        (st = get_str(n, "name", field, 1, &p->name, err)) ||
        (st = get_str(n, "column", field, 0, &p->column, err)) ||
        (st = get_str(n, "type", field, 0, &p->type, err)) ||
        (st = get_str(n, "delimiter", field, 0, &p->delimiter, err)) ||
        (st = get_bool(n, "primary", field, 0, &p->primary, &p->primary_given, err)) ||
        (st = get_bool(n, "nullable", field, 1, &p->nullable, &p->nullable_given, err)))
        return st;
    if (!p->column)
        p->column = p->name;
    if (p->type) {
        knut_graphar_type t, e;
        knut_error sub = KNUT_ERROR_INIT;
        if (knut_graphar_type_parse(p->type, &t, &e, &sub))
            return FAIL(err, KNUT_EINVAL, present(n, "type"), field, "%s", sub.message);
    }
    const char *card = NULL;
    if ((st = get_str(n, "cardinality", field, 0, &card, err)))
        return st;
    if (card) {
        knut_error sub = KNUT_ERROR_INIT;
        if (knut_graphar_cardinality_parse(card, &p->card, &sub))
            return FAIL(err, KNUT_EINVAL, present(n, "cardinality"), field, "%s", sub.message);
        if (edge && p->card != KNUT_GRAPHAR_CARD_SINGLE)
            return FAIL(err, KNUT_EINVAL, present(n, "cardinality"), field,
                        "edge properties must have single cardinality");
    }
    if (p->delimiter && !p->type && p->card == KNUT_GRAPHAR_CARD_SINGLE)
        p->card = KNUT_GRAPHAR_CARD_LIST; /* a split column is a list of strings */
    return KNUT_OK;
}

static knut_status parse_props(const knut_conf *list, const char *field, int edge,
                               imp_prop **out, size_t *n_out, knut_error *err)
{
    if (knut_conf_kind_of(list) != KNUT_CONF_SEQ || knut_conf_len(list) == 0 ||
        knut_conf_len(list) > KNUT_GRAPHAR_MAX_ITEMS)
        return FAIL(err, KNUT_EINVAL, list, field, "expected a non-empty list of properties");
    size_t n = knut_conf_len(list);
    imp_prop *v = calloc(n, sizeof *v);
    if (!v)
        return oom(err);
    *out = v;
    *n_out = n;
    char f[256];
    for (size_t i = 0; i < n; i++) {
        snprintf(f, sizeof f, "%s[%zu]", field, i);
        knut_status st = parse_prop(knut_conf_at(list, i), f, edge, &v[i], err);
        if (st)
            return st;
    }
    return KNUT_OK;
}

/* `properties:` (one group) or `property_groups:`; neither: n 0. */
static knut_status parse_groups(const knut_conf *map, const char *field, int edge,
                                knut_graphar_file_type def_ft, imp_group **out, size_t *n_out,
                                knut_error *err)
{
    static const char *const keys[] = {"file_type", "prefix", "properties", NULL};
    const knut_conf *props = present(map, "properties"), *groups = present(map, "property_groups");
    char f[256];
    knut_status st;
    *out = NULL;
    *n_out = 0;
    if (props && groups)
        return FAIL(err, KNUT_EINVAL, groups, field,
                    "give either properties or property_groups, not both");
    if (props) {
        if (!(*out = calloc(1, sizeof **out)))
            return oom(err);
        *n_out = 1;
        (*out)->node = props;
        (*out)->ft = def_ft;
        snprintf(f, sizeof f, "%s.properties", field);
        return parse_props(props, f, edge, &(*out)->props, &(*out)->n_props, err);
    }
    if (!groups)
        return KNUT_OK;
    size_t n = knut_conf_kind_of(groups) == KNUT_CONF_SEQ ? knut_conf_len(groups) : 0;
    if (n == 0 || n > KNUT_GRAPHAR_MAX_ITEMS)
        return FAIL(err, KNUT_EINVAL, groups, field,
                    "property_groups must be a non-empty list");
    if (!(*out = calloc(n, sizeof **out)))
        return oom(err);
    *n_out = n;
    for (size_t i = 0; i < n; i++) {
        const knut_conf *g = knut_conf_at(groups, i);
        imp_group *ig = &(*out)[i];
        ig->node = g;
        snprintf(f, sizeof f, "%s.property_groups[%zu]", field, i);
        if ((st = want_map(g, f, err)) || (st = check_keys(g, keys, f, err)) ||
            (st = get_file_type(g, f, def_ft, &ig->ft, err)) ||
            (st = get_str(g, "prefix", f, 0, &ig->prefix, err)))
            return st;
        if (!present(g, "properties"))
            return FAIL(err, KNUT_ENOTFOUND, g, f, "missing required key 'properties'");
        snprintf(f, sizeof f, "%s.property_groups[%zu].properties", field, i);
        if ((st = parse_props(present(g, "properties"), f, edge, &ig->props, &ig->n_props, err)))
            return st;
    }
    return KNUT_OK;
}

/* ---- sources ----------------------------------------------------------- */

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcasecmp(s + a - b, suffix) == 0;
}

static knut_status parse_source(knut_graphar_import *imp, const knut_conf *map,
                                const char *field, imp_source *s, knut_error *err)
{
    const char **paths = NULL;
    size_t n = 0;
    s->node = map;
    knut_status st = get_strs(map, "table", field, &paths, &n, err);
    if (!st)
        st = get_str(map, "query", field, 0, &s->query, err);
    if (!st && !n == !s->query)
        st = FAIL(err, KNUT_EINVAL, map, field, "give exactly one of 'table' and 'query'");
    const char *format = NULL;
    if (!st)
        st = get_str(map, "format", field, 0, &format, err);
    if (!st && format && strcmp(format, "csv") != 0 && strcmp(format, "parquet") != 0)
        st = FAIL(err, KNUT_EINVAL, present(map, "format"), field,
                  "format must be parquet or csv, got '%s'", format);
    if (!st && format && s->query)
        st = FAIL(err, KNUT_EINVAL, present(map, "format"), field,
                  "format applies to 'table', not to 'query'");
    s->csv_opts = present(map, "csv");
    if (!st && s->csv_opts && knut_conf_kind_of(s->csv_opts) != KNUT_CONF_MAP)
        st = FAIL(err, KNUT_EINVAL, s->csv_opts, field, "csv must be a map of read_csv options");
    for (size_t i = 0; !st && s->csv_opts && i < knut_conf_len(s->csv_opts); i++) {
        const char *k = knut_conf_key_at(s->csv_opts, i);
        const knut_conf *v = knut_conf_at(s->csv_opts, i);
        /* Option names become SQL text: only plain identifiers pass. */
        int ok = *k != '\0';
        for (const char *c = k; *c; c++)
            ok &= (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || *c == '_';
        if (!ok || knut_conf_kind_of(v) != KNUT_CONF_SCALAR)
            st = FAIL(err, KNUT_EINVAL, v, field,
                      "csv option '%s' must be a plain name with a scalar value", k);
    }
    if (!st && n) {
        s->csv = format ? strcmp(format, "csv") == 0
                        : ends_with(paths[0], ".csv") || ends_with(paths[0], ".tsv") ||
                              ends_with(paths[0], ".csv.gz") || ends_with(paths[0], ".txt");
        if (!(s->paths = calloc(n, sizeof *s->paths)))
            st = oom(err);
        for (size_t i = 0; !st && i < n; i++, s->n_paths++)
            if (!(s->paths[i] = knut_graphar__import_resolve(imp->dir, paths[i])))
                st = oom(err);
    }
    if (!st && s->csv_opts && !s->csv)
        st = FAIL(err, KNUT_EINVAL, s->csv_opts, field, "csv options given for a Parquet table");
    free(paths);
    return st;
}

/* ---- vertices and edges ------------------------------------------------ */

static const imp_vertex *find_vertex(const knut_graphar_import *imp, const char *type)
{
    for (size_t i = 0; i < imp->nv; i++)
        if (strcmp(imp->v[i].type, type) == 0)
            return &imp->v[i];
    return NULL;
}

static knut_status parse_vertex(knut_graphar_import *imp, const knut_conf *n, const char *f,
                                imp_vertex *v, knut_error *err)
{
    static const char *const keys[] = {
        "type", "table", "query", "format", "csv", "key", "order", "chunk_size", "prefix",
        "labels", "label_column", "label_delimiter", "properties", "property_groups", NULL};
    knut_status st;
    v->node = n;
    const char *order = NULL;
    if ((st = want_map(n, f, err)) || (st = check_keys(n, keys, f, err)) ||
        (st = get_str(n, "type", f, 1, &v->type, err)) ||
        (st = parse_source(imp, n, f, &v->src, err)) ||
        (st = get_strs(n, "key", f, &v->keys, &v->n_keys, err)) ||
        (st = get_str(n, "order", f, 0, &order, err)) ||
        (st = get_pos(n, "chunk_size", f, imp->vchunk, &v->chunk_size, err)) ||
        (st = get_str(n, "prefix", f, 0, &v->prefix, err)) ||
        (st = get_str(n, "label_column", f, 0, &v->label_column, err)) ||
        (st = get_str(n, "label_delimiter", f, 0, &v->label_delimiter, err)) ||
        (st = parse_groups(n, f, 0, imp->ft, &v->groups, &v->n_groups, err)))
        return st;
    v->key_node = present(n, "key");
    if (order && strcmp(order, "key") != 0 && strcmp(order, "input") != 0)
        return FAIL(err, KNUT_EINVAL, present(n, "order"), f,
                    "order must be input or key, got '%s'", order);
    v->order_by_key = order && strcmp(order, "key") == 0;
    if (!v->label_delimiter)
        v->label_delimiter = ";";
    const knut_conf *labels = present(n, "labels");
    if (labels) {
        size_t nl = knut_conf_kind_of(labels) == KNUT_CONF_SEQ ? knut_conf_len(labels) : 0;
        if (nl == 0 || nl > KNUT_GRAPHAR_MAX_ITEMS)
            return FAIL(err, KNUT_EINVAL, labels, f, "labels must be a non-empty list");
        if (!(v->labels = calloc(nl, sizeof *v->labels)))
            return oom(err);
        v->n_labels = nl;
        for (size_t i = 0; i < nl; i++) {
            const knut_conf *l = knut_conf_at(labels, i);
            static const char *const lkeys[] = {"name", "column", NULL};
            if (knut_conf_kind_of(l) == KNUT_CONF_SCALAR) {
                v->labels[i].name = knut_conf_str(l);
            } else if ((st = want_map(l, f, err)) || (st = check_keys(l, lkeys, f, err)) ||
                       (st = get_str(l, "name", f, 1, &v->labels[i].name, err)) ||
                       (st = get_str(l, "column", f, 0, &v->labels[i].column, err))) {
                return st;
            }
            if (!v->labels[i].column && !v->label_column)
                return FAIL(err, KNUT_EINVAL, l, f,
                            "label '%s' needs a boolean 'column' or a 'label_column' holding "
                            "label names",
                            v->labels[i].name);
        }
    }
    if (find_vertex(imp, v->type) != v)
        return FAIL(err, KNUT_EINVAL, present(n, "type"), f, "vertex type '%s' given twice",
                    v->type);
    return KNUT_OK;
}

static knut_status parse_end(const knut_graphar_import *imp, const knut_conf *e,
                             const char *side, const char *f, const char **type,
                             const char ***keys, size_t *n_keys, knut_error *err)
{
    static const char *const ekeys[] = {"type", "key", NULL};
    const knut_conf *n = present(e, side);
    char ff[300];
    snprintf(ff, sizeof ff, "%s.%s", f, side);
    if (!n)
        return FAIL(err, KNUT_ENOTFOUND, e, f, "missing required key '%s'", side);
    knut_status st;
    if ((st = want_map(n, ff, err)) || (st = check_keys(n, ekeys, ff, err)) ||
        (st = get_str(n, "type", ff, 1, type, err)) ||
        (st = get_strs(n, "key", ff, keys, n_keys, err)))
        return st;
    if (!*n_keys)
        return FAIL(err, KNUT_ENOTFOUND, n, ff, "missing required key 'key'");
    const imp_vertex *v = find_vertex(imp, *type);
    if (!v)
        return FAIL(err, KNUT_EINVAL, present(n, "type"), ff, "no vertex type '%s' in vertices",
                    *type);
    /* The vertex key count is known only when given; a defaulted (primary)
     * key is one column. */
    size_t want = v->n_keys ? v->n_keys : 1;
    if (*n_keys != want)
        return FAIL(err, KNUT_EINVAL, present(n, "key"), ff,
                    "%zu key columns given; vertex type '%s' is keyed by %zu", *n_keys, *type,
                    want);
    return KNUT_OK;
}

static knut_status parse_edge(knut_graphar_import *imp, const knut_conf *n, const char *f,
                              imp_edge *e, knut_error *err)
{
    static const char *const keys[] = {
        "type", "src", "dst", "table", "query", "format", "csv", "directed", "chunk_size",
        "prefix", "adj_lists", "properties", "property_groups", "on_unknown_key", "rejects",
        NULL};
    knut_status st;
    e->node = n;
    const char *unk = NULL, *rej = NULL;
    if ((st = want_map(n, f, err)) || (st = check_keys(n, keys, f, err)) ||
        (st = get_str(n, "type", f, 1, &e->edge_type, err)) ||
        (st = parse_end(imp, n, "src", f, &e->src_type, &e->src_keys, &e->n_src_keys, err)) ||
        (st = parse_end(imp, n, "dst", f, &e->dst_type, &e->dst_keys, &e->n_dst_keys, err)) ||
        (st = parse_source(imp, n, f, &e->src, err)) ||
        (st = get_bool(n, "directed", f, 1, &e->directed, NULL, err)) ||
        (st = get_pos(n, "chunk_size", f, imp->echunk, &e->chunk_size, err)) ||
        (st = get_str(n, "prefix", f, 0, &e->prefix, err)) ||
        (st = get_str(n, "on_unknown_key", f, 0, &unk, err)) ||
        (st = get_str(n, "rejects", f, 0, &rej, err)) ||
        (st = parse_groups(n, f, 1, imp->ft, &e->groups, &e->n_groups, err)))
        return st;
    if (unk && strcmp(unk, "error") != 0 && strcmp(unk, "skip") != 0)
        return FAIL(err, KNUT_EINVAL, present(n, "on_unknown_key"), f,
                    "on_unknown_key must be error or skip, got '%s'", unk);
    e->on_unknown = unk && strcmp(unk, "skip") == 0 ? KNUT_GRAPHAR_UNKNOWN_SKIP
                                                     : KNUT_GRAPHAR_UNKNOWN_ERROR;
    if (rej && e->on_unknown != KNUT_GRAPHAR_UNKNOWN_SKIP)
        return FAIL(err, KNUT_EINVAL, present(n, "rejects"), f,
                    "rejects needs on_unknown_key: skip");
    if (rej && !(e->rejects = knut_graphar__import_resolve(imp->dir, rej)))
        return oom(err);
    const knut_conf *adj = present(n, "adj_lists");
    size_t na = adj ? (knut_conf_kind_of(adj) == KNUT_CONF_SEQ ? knut_conf_len(adj) : 0) : 2;
    if (na == 0 || na > 4)
        return FAIL(err, KNUT_EINVAL, adj, f, "adj_lists must list 1 to 4 adj list types");
    if (!(e->adj = calloc(na, sizeof *e->adj)))
        return oom(err);
    e->n_adj = na;
    for (size_t i = 0; i < na; i++) {
        static const char *const akeys[] = {"type", "file_type", "prefix", NULL};
        const char *t = i == 0 ? "ordered_by_source" : "ordered_by_dest";
        const knut_conf *a = adj ? knut_conf_at(adj, i) : NULL;
        char af[300];
        snprintf(af, sizeof af, "%s.adj_lists[%zu]", f, i);
        e->adj[i].ft = imp->ft;
        if (a && knut_conf_kind_of(a) == KNUT_CONF_SCALAR) {
            t = knut_conf_str(a);
        } else if (a && ((st = want_map(a, af, err)) || (st = check_keys(a, akeys, af, err)) ||
                         (st = get_str(a, "type", af, 1, &t, err)) ||
                         (st = get_file_type(a, af, imp->ft, &e->adj[i].ft, err)) ||
                         (st = get_str(a, "prefix", af, 0, &e->adj[i].prefix, err)))) {
            return st;
        }
        knut_error sub = KNUT_ERROR_INIT;
        if (knut_graphar_adj_list_type_parse(t, &e->adj[i].type, &sub))
            return FAIL(err, KNUT_EINVAL, a, af, "%s", sub.message);
        for (size_t k = 0; k < i; k++)
            if (e->adj[k].type == e->adj[i].type)
                return FAIL(err, KNUT_EINVAL, a, af, "adj list %s given twice", t);
    }
    for (size_t i = 0; i < imp->ne && &imp->e[i] != e; i++)
        if (strcmp(imp->e[i].edge_type, e->edge_type) == 0 &&
            strcmp(imp->e[i].src_type, e->src_type) == 0 &&
            strcmp(imp->e[i].dst_type, e->dst_type) == 0)
            return FAIL(err, KNUT_EINVAL, n, f, "edge type %s_%s_%s given twice", e->src_type,
                        e->edge_type, e->dst_type);
    return KNUT_OK;
}

/* ---- the config -------------------------------------------------------- */

static knut_status parse_top(knut_graphar_import *imp, knut_error *err)
{
    static const char *const keys[] = {"graph",      "output",          "file_type",
                                       "vertex_chunk_size", "edge_chunk_size",
                                       "parquet_compression", "settings", "vertices", "edges",
                                       NULL};
    static const char *const skeys[] = {"memory_limit", "threads", "temp_directory", NULL};
    const knut_conf *r = imp->root;
    const char *out = NULL;
    knut_status st;
    if ((st = want_map(r, "(root)", err)) || (st = check_keys(r, keys, "(root)", err)) ||
        (st = get_str(r, "graph", "graph", 1, &imp->graph, err)) ||
        (st = get_str(r, "output", "output", 0, &out, err)) ||
        (st = get_file_type(r, "file_type", KNUT_GRAPHAR_FILE_PARQUET, &imp->ft, err)) ||
        (st = get_pos(r, "vertex_chunk_size", "vertex_chunk_size", KNUT_GRAPHAR_IMPORT_VCHUNK,
                      &imp->vchunk, err)) ||
        (st = get_pos(r, "edge_chunk_size", "edge_chunk_size", KNUT_GRAPHAR_IMPORT_ECHUNK,
                      &imp->echunk, err)) ||
        (st = get_str(r, "parquet_compression", "parquet_compression", 0, &imp->compression,
                      err)))
        return st;
    if (strchr(imp->graph, '/'))
        return FAIL(err, KNUT_EINVAL, present(r, "graph"), "graph",
                    "the graph name becomes a file name and cannot hold '/'");
    if (out && !(imp->output = knut_graphar__import_resolve(imp->dir, out)))
        return oom(err);
    const knut_conf *s = present(r, "settings");
    if (s && ((st = want_map(s, "settings", err)) ||
              (st = check_keys(s, skeys, "settings", err)) ||
              (st = get_str(s, "memory_limit", "settings", 0, &imp->memory_limit, err)) ||
              (st = get_str(s, "temp_directory", "settings", 0, &imp->temp_directory, err)) ||
              (st = get_pos(s, "threads", "settings", 0, &imp->threads, err))))
        return st;
    const knut_conf *vs = present(r, "vertices"), *es = present(r, "edges");
    if (!vs || knut_conf_kind_of(vs) != KNUT_CONF_SEQ || knut_conf_len(vs) == 0)
        return FAIL(err, KNUT_EINVAL, vs ? vs : r, "vertices",
                    "expected a non-empty list of vertex types");
    if (es && knut_conf_kind_of(es) != KNUT_CONF_SEQ)
        return FAIL(err, KNUT_EINVAL, es, "edges", "expected a list of edge types");
    size_t nv = knut_conf_len(vs), ne = es ? knut_conf_len(es) : 0;
    if (nv > KNUT_GRAPHAR_MAX_ITEMS || ne > KNUT_GRAPHAR_MAX_ITEMS)
        return FAIL(err, KNUT_ETOOBIG, r, "(root)", "too many vertex or edge types");
    if (!(imp->v = calloc(nv, sizeof *imp->v)) || (ne && !(imp->e = calloc(ne, sizeof *imp->e))))
        return oom(err);
    char f[64];
    /* Counted before parsing, so a half-parsed item is freed too. */
    for (size_t i = 0; i < nv; i++) {
        imp->nv = i + 1;
        snprintf(f, sizeof f, "vertices[%zu]", i);
        if ((st = parse_vertex(imp, knut_conf_at(vs, i), f, &imp->v[i], err)))
            return st;
    }
    for (size_t i = 0; i < ne; i++) {
        imp->ne = i + 1;
        snprintf(f, sizeof f, "edges[%zu]", i);
        if ((st = parse_edge(imp, knut_conf_at(es, i), f, &imp->e[i], err)))
            return st;
    }
    return KNUT_OK;
}

knut_status knut_graphar_import_load(knut_graphar_import **out, const char *path,
                                     knut_error *err)
{
    KNUT_ASSERT_ARG(err, out && path);
    *out = NULL;
    knut_graphar_import *imp = calloc(1, sizeof *imp);
    if (!imp)
        return oom(err);
    const char *slash = strrchr(path, '/');
    size_t dl = slash ? (size_t)(slash - path) + 1 : 0;
    knut_status st = KNUT_OK;
    if (!(imp->dir = malloc(dl + 1))) {
        st = oom(err);
        goto cleanup;
    }
    memcpy(imp->dir, path, dl);
    imp->dir[dl] = '\0';
    if ((st = knut_conf_load_file(&imp->root, path, err)) || (st = parse_top(imp, err)))
        goto cleanup;
    *out = imp;
    imp = NULL;
cleanup:
    knut_graphar_import_free(imp);
    return st;
}

static void source_reset(imp_source *s)
{
    knut_graphar__strv_free(s->paths, s->n_paths);
}

static void groups_free(imp_group *g, size_t n)
{
    for (size_t i = 0; g && i < n; i++)
        free(g[i].props);
    free(g);
}

void knut_graphar_import_free(knut_graphar_import *imp)
{
    if (!imp)
        return;
    for (size_t i = 0; i < imp->nv; i++) {
        source_reset(&imp->v[i].src);
        free(imp->v[i].keys);
        free(imp->v[i].labels);
        groups_free(imp->v[i].groups, imp->v[i].n_groups);
    }
    for (size_t i = 0; i < imp->ne; i++) {
        source_reset(&imp->e[i].src);
        free(imp->e[i].src_keys);
        free(imp->e[i].dst_keys);
        free(imp->e[i].adj);
        free(imp->e[i].rejects);
        groups_free(imp->e[i].groups, imp->e[i].n_groups);
    }
    free(imp->v);
    free(imp->e);
    free(imp->output);
    free(imp->dir);
    knut_conf_free(imp->root);
    free(imp);
}
