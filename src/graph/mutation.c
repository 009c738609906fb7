/*
 * The graph mutation: the vertex sets, edge sets, vertex delete sets and
 * edge delete sets one round of a sync applies, each an Arrow stream plus the names that map its
 * columns onto labels, keys and properties. Adding a set binds those names
 * to the stream's schema once (column index, value type, query-text
 * conversion), so mistakes surface as one clear error naming the set and
 * the column before anything reaches a sink, and sinks can trust the set.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cypher_int.h"

struct knut_graph_mutation {
    knut_graph_set **sets[4]; /* indexed by knut_graph_set_kind */
    size_t n[4];
    size_t cap[4];
};

static const char *const kind_name[] = {"vertex set", "edge set", "delete set",
                                        "edge delete set"};

/* ---- set lifetime ------------------------------------------------------ */

static void columns_free(knut_graph_column *cols, size_t n)
{
    for (size_t i = 0; cols != NULL && i < n; i++) {
        free(cols[i].prop);
        free(cols[i].column);
    }
    free(cols);
}

static void set_free(knut_graph_set *s)
{
    if (s == NULL)
        return;
    free(s->name);
    for (size_t i = 0; s->labels != NULL && i < s->n_labels; i++)
        free(s->labels[i]);
    free(s->labels);
    free(s->type);
    free(s->src_label);
    free(s->dst_label);
    columns_free(s->keys, s->n_keys);
    columns_free(s->src_keys, s->n_src_keys);
    columns_free(s->dst_keys, s->n_dst_keys);
    columns_free(s->props, s->n_props);
    knut_arrow_schema_release(&s->schema);
    knut_arrow_stream_release(&s->stream);
    free(s);
}

knut_status knut_graph_mutation_new(knut_graph_mutation **out, knut_error *err)
{
    KNUT_ASSERT_ARG(err, out != NULL);
    *out = calloc(1, sizeof(**out));
    if (*out == NULL)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory allocating a graph mutation");
    return KNUT_OK;
}

void knut_graph_mutation_free(knut_graph_mutation *m)
{
    if (m == NULL)
        return;
    for (int k = 0; k < 4; k++) {
        for (size_t i = 0; i < m->n[k]; i++)
            set_free(m->sets[k][i]);
        free(m->sets[k]);
    }
    free(m);
}

size_t knut_graph_mutation_count(const knut_graph_mutation *m, knut_graph_set_kind kind)
{
    if (m == NULL || (unsigned)kind > KNUT_GRAPH_SET_EDGE_DELETE)
        return 0;
    return m->n[kind];
}

knut_graph_set *knut_graph_mutation_get(knut_graph_mutation *m, knut_graph_set_kind kind,
                                        size_t i)
{
    if (m == NULL || (unsigned)kind > KNUT_GRAPH_SET_EDGE_DELETE || i >= m->n[kind])
        return NULL;
    return m->sets[kind][i];
}

/* ---- binding names to the schema --------------------------------------- */

/* What binding one set needs to know besides the set itself. */
typedef struct bind_ctx {
    knut_graph_set *set;
    knut_error *err;
    char shown[KNUT_GRAPH__MSG_NAME_MAX]; /* the set's name, message-safe */
} bind_ctx;

static knut_status bind_fail(bind_ctx *b, knut_status code, const char *fmt, ...)
    KNUT_PRINTF(3, 4);

static knut_status bind_fail(bind_ctx *b, knut_status code, const char *fmt, ...)
{
    char what[KNUT_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    return knut_error_set(b->err, code, "%s '%s': %s", kind_name[b->set->kind], b->shown, what);
}

/* Adds the set's prefix to an error a helper already filled. */
static knut_status bind_prefix(bind_ctx *b, knut_status st)
{
    knut_error_prefix(b->err, "%s '%s': ", kind_name[b->set->kind], b->shown);
    return st;
}

static const char *shown(char *dst, const char *s)
{
    return knut_graph__msg_name(dst, KNUT_GRAPH__MSG_NAME_MAX, s, strlen(s));
}

static knut_status dup_str(bind_ctx *b, char **out, const char *s)
{
    *out = strdup(s);
    if (*out == NULL)
        return bind_fail(b, KNUT_ENOMEM, "out of memory");
    return KNUT_OK;
}

static knut_status check_ident(bind_ctx *b, const char *name, const char *what)
{
    if (name == NULL)
        return bind_fail(b, KNUT_EINVAL, "%s name is missing", what);
    knut_status st = knut_graph__ident_check(name, strlen(name), what, b->err);
    return st == KNUT_OK ? st : bind_prefix(b, st);
}

static int64_t find_column(const struct ArrowSchema *schema, const char *name)
{
    for (int64_t i = 0; i < schema->n_children; i++) {
        const char *n = schema->children[i]->name;
        if (n != NULL && strcmp(n, name) == 0)
            return i;
    }
    return -1;
}

/* Fetches the stream's schema: a struct whose columns all have distinct,
 * non-empty names (a name lookup must never be ambiguous). */
static knut_status bind_schema(bind_ctx *b)
{
    knut_graph_set *s = b->set;
    knut_arrow_type_info t;
    char col[KNUT_GRAPH__MSG_NAME_MAX];
    if (s->stream.release == NULL || s->stream.get_schema == NULL)
        return bind_fail(b, KNUT_EINVAL, "the stream is released");
    int rc = s->stream.get_schema(&s->stream, &s->schema);
    if (rc != 0) {
        s->schema.release = NULL;
        return bind_prefix(b, knut_arrow_stream_error(&s->stream, rc, "stream get_schema",
                                                      b->err));
    }
    knut_status st = knut_arrow_schema_parse_type(&s->schema, &t, b->err);
    if (st != KNUT_OK)
        return bind_prefix(b, st);
    if (t.type != KNUT_ARROW_STRUCT)
        return bind_fail(b, KNUT_EINVAL, "the stream's schema is %s, not a struct of columns",
                         knut_arrow_type_name(t.type));
    for (int64_t i = 0; i < s->schema.n_children; i++) {
        const char *n = s->schema.children[i]->name;
        if (n == NULL || n[0] == '\0')
            return bind_fail(b, KNUT_EINVAL, "stream column %" PRId64 " has no name", i);
        for (int64_t j = 0; j < i; j++) {
            if (strcmp(n, s->schema.children[j]->name) == 0)
                return bind_fail(b, KNUT_EINVAL,
                                 "column '%s' appears twice in the stream schema (columns %"
                                 PRId64 " and %" PRId64 ")",
                                 shown(col, n), j, i);
        }
    }
    return KNUT_OK;
}

/*
 * Binds stream column `column` as graph property `prop` into *out. role is
 * "key", "source key", "property", ...: keys must be scalars FalkorDB can
 * match on, properties anything it can store.
 */
static knut_status bind_column(bind_ctx *b, knut_graph_column *out, const char *prop,
                               const char *column, const char *role, int is_key)
{
    char col[KNUT_GRAPH__MSG_NAME_MAX];
    knut_status st;
    if (column == NULL)
        return bind_fail(b, KNUT_EINVAL, "%s column name is missing", role);
    if ((st = check_ident(b, prop, is_key ? "key property" : "property")) != KNUT_OK)
        return st;
    int64_t idx = find_column(&b->set->schema, column);
    if (idx < 0)
        return bind_fail(b, KNUT_ENOTFOUND, "%s column '%s' not found in the stream", role,
                         shown(col, column));
    const struct ArrowSchema *child = b->set->schema.children[idx];
    out->index = idx;
    if ((st = knut_graph__value_type(child, &out->type, b->err)) != KNUT_OK) {
        knut_error_prefix(b->err, "%s column '%s': ", role, shown(col, column));
        return bind_prefix(b, st);
    }
    if (is_key) {
        if (!knut_graph__scalar_ok(out->type.type))
            return bind_fail(b, KNUT_EUNSUPPORTED,
                             "%s column '%s' has type %s; keys must be bool, integer, float, "
                             "string, date, time or timestamp",
                             role, shown(col, column), knut_arrow_type_name(out->type.type));
        out->conv = knut_graph__scalar_conv(out->type.type);
    } else if ((st = knut_graph__prop_type(child, &out->conv, b->err)) == KNUT_EUNSUPPORTED) {
        /* Not storable in FalkorDB, fine for the embedded store: each
         * sink judges its property types when it applies the set. */
        knut_error_clear(b->err);
        out->conv = KNUT_GRAPH_CONV_NONE;
    } else if (st != KNUT_OK) {
        knut_error_prefix(b->err, "%s column '%s': ", role, shown(col, column));
        return bind_prefix(b, st);
    }
    if ((st = dup_str(b, &out->prop, prop)) != KNUT_OK)
        return st;
    return dup_str(b, &out->column, column);
}

/* Binds n columns; props[i] names the property, columns[i] (or props[i]
 * when columns is NULL) the stream column. */
static knut_status bind_columns(bind_ctx *b, knut_graph_column **out, size_t *n_out,
                                const char *const *props, const char *const *columns, size_t n,
                                const char *role, int is_key)
{
    if (n > 0 && props == NULL)
        return bind_fail(b, KNUT_EINVAL, "%s names are missing", role);
    if (n == 0)
        return KNUT_OK;
    *out = calloc(n, sizeof(**out));
    if (*out == NULL)
        return bind_fail(b, KNUT_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        knut_status st = bind_column(b, &(*out)[i], props[i], columns ? columns[i] : props[i],
                                     role, is_key);
        *n_out = i + 1; /* so the entry is freed even when half-filled */
        if (st != KNUT_OK)
            return st;
    }
    return KNUT_OK;
}

/* Property names must be distinct across the lists that land on one
 * vertex or edge: the same name twice would be set twice per row. */
static knut_status check_distinct(bind_ctx *b, const knut_graph_column *x, size_t nx,
                                  const knut_graph_column *y, size_t ny, const char *what)
{
    char name[KNUT_GRAPH__MSG_NAME_MAX];
    for (size_t i = 0; i < nx; i++) {
        size_t start = (x == y) ? i + 1 : 0;
        for (size_t j = start; j < ny; j++) {
            if (strcmp(x[i].prop, y[j].prop) == 0)
                return bind_fail(b, KNUT_EINVAL, "%s '%s' is listed twice", what,
                                 shown(name, x[i].prop));
        }
    }
    return KNUT_OK;
}

static int name_in(const char *name, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (list[i] != NULL && strcmp(name, list[i]) == 0)
            return 1;
    return 0;
}

/* The properties of a set: the named columns, or every column not in any
 * of the `used` lists when all_props is set. */
static knut_status bind_props(bind_ctx *b, const char *const *props, size_t n_props,
                              int all_props, const char *const *const *used,
                              const size_t *n_used, size_t n_lists)
{
    knut_graph_set *s = b->set;
    if (!all_props)
        return bind_columns(b, &s->props, &s->n_props, props, NULL, n_props, "property", 0);
    const struct ArrowSchema *sch = &s->schema;
    const char **names = calloc((size_t)sch->n_children + 1, sizeof(*names));
    size_t n = 0;
    if (names == NULL)
        return bind_fail(b, KNUT_ENOMEM, "out of memory");
    for (int64_t i = 0; i < sch->n_children; i++) {
        const char *c = sch->children[i]->name;
        int taken = 0;
        for (size_t l = 0; l < n_lists && !taken; l++)
            taken = name_in(c, used[l], n_used[l]);
        if (!taken)
            names[n++] = c;
    }
    knut_status st = bind_columns(b, &s->props, &s->n_props, names, NULL, n, "property", 0);
    free(names);
    return st;
}

/* ---- adding sets ------------------------------------------------------- */

static knut_status append_set(knut_graph_mutation *m, knut_graph_set *s, knut_error *err)
{
    knut_graph_set_kind k = s->kind;
    if (m->n[k] == m->cap[k]) {
        size_t cap = m->cap[k] ? m->cap[k] * 2 : 4;
        knut_graph_set **grown = realloc(m->sets[k], cap * sizeof(*grown));
        if (grown == NULL)
            return knut_error_set(err, KNUT_ENOMEM, "out of memory adding a %s", kind_name[k]);
        m->sets[k] = grown;
        m->cap[k] = cap;
    }
    m->sets[k][m->n[k]++] = s;
    return KNUT_OK;
}

/* The description's version, checked first; the stream is taken over
 * whatever happens, so a refused description releases it. */
#define SET_CHECK_VERSION(set, err)                                  \
    do {                                                             \
        if ((set)->version != KNUT_GRAPH_SET_VERSION)                \
            knut_arrow_stream_release(&(set)->stream);               \
        KNUT_CHECK_VERSION((set), KNUT_GRAPH_SET_VERSION, (err));    \
    } while (0)

/* Starts a set: takes the stream over (whatever happens next) and names it. */
static knut_status set_start(knut_graph_set **out, bind_ctx *b, knut_graph_set_kind kind,
                             const char *name, const char *fallback,
                             struct ArrowArrayStream *stream, knut_error *err)
{
    knut_graph_set *s = calloc(1, sizeof(*s));
    *out = s;
    if (s == NULL) {
        knut_arrow_stream_release(stream);
        return knut_error_set(err, KNUT_ENOMEM, "out of memory adding a %s", kind_name[kind]);
    }
    knut_arrow_stream_move(&s->stream, stream);
    s->kind = kind;
    b->set = s;
    b->err = err;
    const char *nm = name ? name : fallback ? fallback : "";
    shown(b->shown, nm);
    knut_status st = dup_str(b, &s->name, nm);
    if (st == KNUT_OK)
        st = bind_schema(b);
    return st;
}

static knut_status set_finish(knut_graph_mutation *m, knut_graph_set *s, knut_status st,
                              knut_error *err)
{
    if (st == KNUT_OK)
        st = append_set(m, s, err);
    if (st != KNUT_OK)
        set_free(s);
    return st;
}

/* Marks the properties named in text_props (declared text). */
static void mark_text(knut_graph_set *s, const char *const *text, size_t n)
{
    for (size_t i = 0; text && i < n; i++)
        for (size_t k = 0; k < s->n_props; k++)
            if (text[i] && strcmp(s->props[k].prop, text[i]) == 0)
                s->props[k].text_ok = 1;
}

knut_status knut_graph_mutation_add_vertex_set(knut_graph_mutation *m,
                                               knut_graph_vertex_set *vs, knut_error *err)
{
    if (m == NULL || vs == NULL) {
        if (vs != NULL)
            knut_arrow_stream_release(&vs->stream);
        return knut_error_set(err, KNUT_EINVAL, "%s: NULL argument", __func__);
    }
    SET_CHECK_VERSION(vs, err);
    bind_ctx b;
    knut_graph_set *s;
    const char *first = vs->n_labels > 0 && vs->labels ? vs->labels[0] : NULL;
    knut_status st = set_start(&s, &b, KNUT_GRAPH_SET_VERTEX, vs->name, first,
                               &vs->stream, err);
    if (st != KNUT_OK)
        goto done;
    if (vs->n_labels == 0 || vs->labels == NULL) {
        st = bind_fail(&b, KNUT_EINVAL, "a vertex set needs at least one label");
        goto done;
    }
    if (vs->n_keys == 0) {
        st = bind_fail(&b, KNUT_EINVAL, "a vertex set needs at least one key column");
        goto done;
    }
    s->labels = calloc(vs->n_labels, sizeof(*s->labels));
    if (s->labels == NULL) {
        st = bind_fail(&b, KNUT_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < vs->n_labels; i++) {
        if ((st = check_ident(&b, vs->labels[i], "label")) != KNUT_OK)
            goto done;
        for (size_t j = 0; j < i; j++) {
            if (strcmp(vs->labels[i], vs->labels[j]) == 0) {
                char l[KNUT_GRAPH__MSG_NAME_MAX];
                st = bind_fail(&b, KNUT_EINVAL, "label '%s' is listed twice",
                               shown(l, vs->labels[i]));
                goto done;
            }
        }
        s->n_labels = i + 1;
        if ((st = dup_str(&b, &s->labels[i], vs->labels[i])) != KNUT_OK)
            goto done;
    }
    st = bind_columns(&b, &s->keys, &s->n_keys, vs->keys, NULL, vs->n_keys, "key", 1);
    if (st == KNUT_OK) {
        const char *const *used[] = {vs->keys};
        size_t n_used[] = {vs->n_keys};
        st = bind_props(&b, vs->props, vs->n_props, vs->all_props, used, n_used, 1);
    }
    if (st == KNUT_OK)
        st = check_distinct(&b, s->keys, s->n_keys, s->keys, s->n_keys, "key");
    if (st == KNUT_OK)
        st = check_distinct(&b, s->props, s->n_props, s->props, s->n_props, "property");
    if (st == KNUT_OK)
        st = check_distinct(&b, s->keys, s->n_keys, s->props, s->n_props,
                            "key used as a property");
    if (st == KNUT_OK)
        mark_text(s, vs->text_props, vs->n_text_props);
done:
    return set_finish(m, s, st, err);
}

static knut_status bind_endpoint(bind_ctx *b, const knut_graph_endpoint *ep, char **label,
                                 knut_graph_column **cols, size_t *n, const char *role)
{
    char what[48];
    knut_status st;
    snprintf(what, sizeof(what), "%s label", role);
    if ((st = check_ident(b, ep->label, what)) != KNUT_OK)
        return st;
    if ((st = dup_str(b, label, ep->label)) != KNUT_OK)
        return st;
    if (ep->n_keys == 0)
        return bind_fail(b, KNUT_EINVAL, "the %s endpoint needs at least one key", role);
    snprintf(what, sizeof(what), "%s key", role);
    st = bind_columns(b, cols, n, ep->keys, ep->columns, ep->n_keys, what, 1);
    if (st == KNUT_OK)
        st = check_distinct(b, *cols, *n, *cols, *n, what);
    return st;
}

/* What an edge set and an edge delete set share: the type, both endpoints
 * and the optional edge keys. */
static knut_status bind_edge_shape(bind_ctx *b, knut_graph_set *s, const char *type,
                                   const knut_graph_endpoint *src,
                                   const knut_graph_endpoint *dst, const char *const *keys,
                                   size_t n_keys)
{
    knut_status st;
    if ((st = check_ident(b, type, "relationship type")) != KNUT_OK ||
        (st = dup_str(b, &s->type, type)) != KNUT_OK)
        return st;
    st = bind_endpoint(b, src, &s->src_label, &s->src_keys, &s->n_src_keys, "source");
    if (st == KNUT_OK)
        st = bind_endpoint(b, dst, &s->dst_label, &s->dst_keys, &s->n_dst_keys, "destination");
    if (st == KNUT_OK)
        st = bind_columns(b, &s->keys, &s->n_keys, keys, NULL, n_keys, "edge key", 1);
    return st;
}

knut_status knut_graph_mutation_add_edge_set(knut_graph_mutation *m, knut_graph_edge_set *es,
                                             knut_error *err)
{
    if (m == NULL || es == NULL) {
        if (es != NULL)
            knut_arrow_stream_release(&es->stream);
        return knut_error_set(err, KNUT_EINVAL, "%s: NULL argument", __func__);
    }
    SET_CHECK_VERSION(es, err);
    bind_ctx b;
    knut_graph_set *s;
    knut_status st = set_start(&s, &b, KNUT_GRAPH_SET_EDGE, es->name, es->type,
                               &es->stream, err);
    if (st != KNUT_OK)
        goto done;
    s->missing_endpoints = es->missing_endpoints;
    st = bind_edge_shape(&b, s, es->type, &es->src, &es->dst, es->keys, es->n_keys);
    if (st == KNUT_OK) {
        const char *const *used[] = {es->src.columns ? es->src.columns : es->src.keys,
                                     es->dst.columns ? es->dst.columns : es->dst.keys,
                                     es->keys};
        size_t n_used[] = {es->src.n_keys, es->dst.n_keys, es->n_keys};
        st = bind_props(&b, es->props, es->n_props, es->all_props, used, n_used, 3);
    }
    if (st == KNUT_OK)
        st = check_distinct(&b, s->keys, s->n_keys, s->keys, s->n_keys, "edge key");
    if (st == KNUT_OK)
        st = check_distinct(&b, s->props, s->n_props, s->props, s->n_props, "property");
    if (st == KNUT_OK)
        st = check_distinct(&b, s->keys, s->n_keys, s->props, s->n_props,
                            "edge key used as a property");
    if (st == KNUT_OK)
        mark_text(s, es->text_props, es->n_text_props);
done:
    return set_finish(m, s, st, err);
}

knut_status knut_graph_mutation_add_delete_set(knut_graph_mutation *m,
                                               knut_graph_delete_set *ds, knut_error *err)
{
    if (m == NULL || ds == NULL) {
        if (ds != NULL)
            knut_arrow_stream_release(&ds->stream);
        return knut_error_set(err, KNUT_EINVAL, "%s: NULL argument", __func__);
    }
    SET_CHECK_VERSION(ds, err);
    bind_ctx b;
    knut_graph_set *s;
    knut_status st = set_start(&s, &b, KNUT_GRAPH_SET_DELETE, ds->name, ds->label,
                               &ds->stream, err);
    if (st != KNUT_OK)
        goto done;
    if ((st = check_ident(&b, ds->label, "label")) != KNUT_OK)
        goto done;
    s->labels = calloc(1, sizeof(*s->labels));
    if (s->labels == NULL) {
        st = bind_fail(&b, KNUT_ENOMEM, "out of memory");
        goto done;
    }
    s->n_labels = 1;
    if ((st = dup_str(&b, &s->labels[0], ds->label)) != KNUT_OK)
        goto done;
    if (ds->n_keys == 0) {
        st = bind_fail(&b, KNUT_EINVAL, "a delete set needs at least one key column");
        goto done;
    }
    st = bind_columns(&b, &s->keys, &s->n_keys, ds->keys, NULL, ds->n_keys, "key", 1);
    if (st == KNUT_OK)
        st = check_distinct(&b, s->keys, s->n_keys, s->keys, s->n_keys, "key");
done:
    return set_finish(m, s, st, err);
}

/* An edge set minus the properties: the endpoints (and optional edge keys)
 * only find the edges to delete, so the same binding rules apply. */
knut_status knut_graph_mutation_add_edge_delete_set(knut_graph_mutation *m,
                                                    knut_graph_edge_delete_set *es,
                                                    knut_error *err)
{
    if (m == NULL || es == NULL) {
        if (es != NULL)
            knut_arrow_stream_release(&es->stream);
        return knut_error_set(err, KNUT_EINVAL, "%s: NULL argument", __func__);
    }
    SET_CHECK_VERSION(es, err);
    bind_ctx b;
    knut_graph_set *s;
    knut_status st = set_start(&s, &b, KNUT_GRAPH_SET_EDGE_DELETE, es->name,
                               es->type, &es->stream, err);
    if (st != KNUT_OK)
        goto done;
    st = bind_edge_shape(&b, s, es->type, &es->src, &es->dst, es->keys, es->n_keys);
    if (st == KNUT_OK)
        st = check_distinct(&b, s->keys, s->n_keys, s->keys, s->n_keys, "edge key");
done:
    return set_finish(m, s, st, err);
}

/* ---- reading a set ----------------------------------------------------- */

knut_status knut_graph_set_next(knut_graph_set *set, struct ArrowArray *out, knut_error *err)
{
    KNUT_ASSERT_ARG(err, set != NULL && out != NULL);
    char name[KNUT_GRAPH__MSG_NAME_MAX];
    out->release = NULL;
    if (set->stream.release == NULL)
        return knut_error_set(err, KNUT_EINVAL, "%s '%s': the stream is released",
                              kind_name[set->kind], shown(name, set->name));
    int rc = set->stream.get_next(&set->stream, out);
    if (rc != 0) {
        out->release = NULL;
        knut_status st = knut_arrow_stream_error(&set->stream, rc, "stream get_next", err);
        knut_error_prefix(err, "%s '%s': ", kind_name[set->kind], shown(name, set->name));
        return st;
    }
    if (out->release == NULL)
        return KNUT_OK;
    knut_status st = knut_arrow_array_validate(
        &set->schema, out, KNUT_ARROW_VALIDATE_FULL | KNUT_ARROW_VALIDATE_UTF8, err);
    if (st != KNUT_OK) {
        knut_arrow_array_release(out);
        knut_error_prefix(err, "%s '%s': batch after row %" PRId64 ": ", kind_name[set->kind],
                          shown(name, set->name), set->rows_read);
        return st;
    }
    set->rows_read += out->length;
    return KNUT_OK;
}
