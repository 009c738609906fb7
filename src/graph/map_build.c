/*
 * Mapping rows to a mutation (knut/graph_map.h): the upserts of every row
 * of one table under a knut_graph_map, for callers whose rows are already
 * the new ones (pipeline graph sinks). One vertex set per vertex step, one
 * edge set per edge and fk step, each a DuckDB query on its own connection
 * (a stream stays readable only until its connection runs something
 * else). Within the rows the last row of a key wins (rowid order).
 * Column names are quoted; no value is spliced into SQL.
 */
#include "knut/graph_map.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "knut/arrow.h"
#include "knut/duck.h"

#define MAX_COLS 256

/* One set's SELECT and the property names its columns carry. */
typedef struct sel {
    knut_buf sql;
    const char *names[MAX_COLS]; /* borrowed */
    size_t n;
} sel;

/* The relation's column names (owned: free each and the array). */
typedef struct cols {
    char **v;
    size_t n;
} cols;

static void cols_free(cols *c)
{
    for (size_t i = 0; c->v && i < c->n; i++)
        free(c->v[i]);
    free(c->v);
    memset(c, 0, sizeof *c);
}

static knut_status cols_get(knut_duck_db *db, const char *rel, cols *out, knut_error *err)
{
    knut_buf q = KNUT_BUF_INIT;
    knut_duck_conn *c = NULL;
    struct ArrowArrayStream s = {0};
    struct ArrowSchema schema = {0};
    knut_buf_printf(&q, "SELECT * FROM %s LIMIT 0", rel);
    knut_status st = knut_buf_check(&q, err);
    if (st == KNUT_OK)
        st = knut_duck_conn_open(&c, db, err);
    if (st == KNUT_OK)
        st = knut_duck_query(c, q.data, &s, err);
    if (st == KNUT_OK && s.get_schema(&s, &schema) != 0)
        st = knut_error_set(err, KNUT_EIO, "%s", s.get_last_error(&s));
    if (st == KNUT_OK) {
        out->n = (size_t)schema.n_children;
        out->v = calloc(out->n ? out->n : 1, sizeof *out->v);
        for (size_t i = 0; out->v && i < out->n; i++)
            if (!(out->v[i] = strdup(schema.children[i]->name ? schema.children[i]->name : "")))
                st = KNUT_ENOMEM;
        if (!out->v || st != KNUT_OK)
            st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
    }
    if (schema.release)
        schema.release(&schema);
    if (s.release)
        s.release(&s);
    knut_duck_conn_close(c);
    knut_buf_reset(&q);
    return st;
}

static int has(const cols *c, const char *name)
{
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->v[i], name) == 0)
            return 1;
    return 0;
}

static int uses(const knut_graph_map_prop *p, size_t n, const char *column)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(p[i].column, column) == 0)
            return 1;
    return 0;
}

static knut_status col(sel *s, const cols *c, const char *column, const char *as,
                       const char *step, knut_error *err)
{
    if (!has(c, column))
        return knut_error_set(err, KNUT_EINVAL, "%s: the rows have no column '%s'", step, column);
    if (s->n >= MAX_COLS)
        return knut_error_set(err, KNUT_EINVAL, "%s: more than %d columns in one set", step,
                              MAX_COLS);
    knut_buf_puts(&s->sql, s->n ? ", " : "SELECT ");
    knut_duck_ident(&s->sql, column);
    knut_buf_puts(&s->sql, " AS ");
    knut_duck_ident(&s->sql, as);
    s->names[s->n++] = as;
    return KNUT_OK;
}

/* FROM + "the last row of a key wins" over the key columns kc[0..n). */
static void tail(sel *s, const char *rel, const char *const *kc, size_t n, const char *where)
{
    knut_buf_printf(&s->sql, " FROM %s", rel);
    if (where)
        knut_buf_printf(&s->sql, " WHERE %s", where);
    knut_buf_puts(&s->sql, " QUALIFY row_number() OVER (PARTITION BY ");
    for (size_t i = 0; i < n; i++) {
        if (i)
            knut_buf_puts(&s->sql, ", ");
        knut_duck_ident(&s->sql, kc[i]);
    }
    knut_buf_puts(&s->sql, " ORDER BY rowid DESC) = 1");
}

static knut_status run(knut_duck_db *db, sel *s, struct ArrowArrayStream *out, knut_error *err)
{
    knut_duck_conn *c = NULL;
    knut_status st = knut_buf_check(&s->sql, err);
    if (st == KNUT_OK)
        st = knut_duck_conn_open(&c, db, err);
    if (st == KNUT_OK)
        st = knut_duck_query(c, s->sql.data, out, err);
    knut_duck_conn_close(c); /* the stream keeps its connection */
    return st;
}

static knut_status vertex_set(knut_duck_db *db, const char *rel, const cols *c,
                              const knut_graph_map_vertex *v, knut_graph_mutation *m,
                              knut_error *err)
{
    sel s = {.sql = KNUT_BUF_INIT};
    knut_graph_vertex_set vs = KNUT_GRAPH_VERTEX_SET_INIT;
    const char *kc[64];
    char step[160];
    snprintf(step, sizeof step, "vertex step '%s'", v->labels[0]);
    knut_status st = v->n_keys > 64 ? knut_error_set(err, KNUT_EINVAL, "%s: at most 64 keys",
                                                     step)
                                    : KNUT_OK;
    for (size_t k = 0; st == KNUT_OK && k < v->n_keys; k++) {
        kc[k] = v->keys[k].column;
        st = col(&s, c, v->keys[k].column, v->keys[k].prop, step, err);
    }
    size_t nk = s.n;
    for (size_t i = 0; st == KNUT_OK && v->all_props && i < c->n; i++)
        if (!uses(v->keys, v->n_keys, c->v[i]))
            st = col(&s, c, c->v[i], knut_graph_map_renamed(v->rename, c->v[i]), step, err);
    for (size_t k = 0; st == KNUT_OK && !v->all_props && k < v->n_props; k++)
        st = col(&s, c, v->props[k].column, v->props[k].prop, step, err);
    if (st == KNUT_OK) {
        tail(&s, rel, kc, v->n_keys, NULL);
        st = run(db, &s, &vs.stream, err);
    }
    if (st == KNUT_OK) {
        vs.labels = v->labels;
        vs.n_labels = v->n_labels;
        vs.keys = s.names;
        vs.n_keys = nk;
        vs.props = s.names + nk;
        vs.n_props = s.n - nk;
        st = knut_graph_mutation_add_vertex_set(m, &vs, err);
    }
    knut_buf_reset(&s.sql);
    return st;
}

static knut_status edge_set(knut_duck_db *db, const char *rel, const cols *c,
                            const knut_graph_map_edge *e, int missing, knut_graph_mutation *m,
                            knut_error *err)
{
    sel s = {.sql = KNUT_BUF_INIT};
    knut_graph_edge_set es = KNUT_GRAPH_EDGE_SET_INIT;
    char names[2][16][24], step[160];
    const char *skeys[16], *dkeys[16], *kc[32];
    snprintf(step, sizeof step, "edge step '%s'", e->type);
    if (e->from.n_keys > 16 || e->to.n_keys > 16)
        return knut_error_set(err, KNUT_EINVAL, "%s: at most 16 endpoint keys", step);
    knut_status st = KNUT_OK;
    for (size_t k = 0; st == KNUT_OK && k < e->from.n_keys; k++) {
        snprintf(names[0][k], sizeof names[0][k], "_knut_s%u", (unsigned)k);
        skeys[k] = e->from.keys[k].prop;
        kc[k] = e->from.keys[k].column;
        st = col(&s, c, e->from.keys[k].column, names[0][k], step, err);
    }
    for (size_t k = 0; st == KNUT_OK && k < e->to.n_keys; k++) {
        snprintf(names[1][k], sizeof names[1][k], "_knut_d%u", (unsigned)k);
        dkeys[k] = e->to.keys[k].prop;
        kc[e->from.n_keys + k] = e->to.keys[k].column;
        st = col(&s, c, e->to.keys[k].column, names[1][k], step, err);
    }
    size_t ne = s.n;
    for (size_t i = 0; st == KNUT_OK && e->all_props && i < c->n; i++)
        if (!uses(e->from.keys, e->from.n_keys, c->v[i]) &&
            !uses(e->to.keys, e->to.n_keys, c->v[i]))
            st = col(&s, c, c->v[i], knut_graph_map_renamed(e->rename, c->v[i]), step, err);
    for (size_t k = 0; st == KNUT_OK && !e->all_props && k < e->n_props; k++)
        st = col(&s, c, e->props[k].column, e->props[k].prop, step, err);
    if (st == KNUT_OK) {
        tail(&s, rel, kc, ne, NULL);
        st = run(db, &s, &es.stream, err);
    }
    if (st == KNUT_OK) {
        es.type = e->type;
        es.src = (knut_graph_endpoint){e->from.label, skeys, s.names, e->from.n_keys};
        es.dst = (knut_graph_endpoint){e->to.label, dkeys, s.names + e->from.n_keys,
                                       e->to.n_keys};
        es.props = s.names + ne;
        es.n_props = s.n - ne;
        es.missing_endpoints = missing;
        st = knut_graph_mutation_add_edge_set(m, &es, err);
    }
    knut_buf_reset(&s.sql);
    return st;
}

static knut_status fk_set(knut_duck_db *db, const char *rel, const cols *c,
                          const knut_graph_map_vertex *v, const knut_graph_map_fk *f, int missing,
                          knut_graph_mutation *m, knut_error *err)
{
    sel s = {.sql = KNUT_BUF_INIT};
    knut_buf where = KNUT_BUF_INIT;
    knut_graph_edge_set es = KNUT_GRAPH_EDGE_SET_INIT;
    char step[160];
    snprintf(step, sizeof step, "fk edge step '%s'", f->type);
    knut_status st = col(&s, c, v->keys[0].column, "_knut_s0", step, err);
    if (st == KNUT_OK)
        st = col(&s, c, f->column, "_knut_d0", step, err);
    knut_duck_ident(&where, f->column);
    knut_buf_puts(&where, " IS NOT NULL"); /* no foreign key: no edge */
    if (st == KNUT_OK && (st = knut_buf_check(&where, err)) == KNUT_OK) {
        const char *kc[2] = {v->keys[0].column, f->column};
        tail(&s, rel, kc, 2, where.data);
        st = run(db, &s, &es.stream, err);
    }
    if (st == KNUT_OK) {
        const char *sk[1] = {v->keys[0].prop}, *dk[1] = {f->to_key};
        es.type = f->type;
        es.src = (knut_graph_endpoint){v->labels[0], sk, s.names, 1};
        es.dst = (knut_graph_endpoint){f->to_label, dk, s.names + 1, 1};
        es.missing_endpoints = missing;
        st = knut_graph_mutation_add_edge_set(m, &es, err);
    }
    knut_buf_reset(&where);
    knut_buf_reset(&s.sql);
    return st;
}

knut_status knut_graph_map_mutation(knut_duck_db *db, const char *relation,
                                    const knut_graph_map *map, int missing_endpoints,
                                    knut_graph_mutation **out, knut_error *err)
{
    KNUT_ASSERT_ARG(err, db != NULL && relation != NULL && map != NULL && out != NULL);
    knut_graph_mutation *m = NULL;
    cols c = {0};
    *out = NULL;
    knut_status st = cols_get(db, relation, &c, err);
    if (st == KNUT_OK)
        st = knut_graph_mutation_new(&m, err);
    for (size_t i = 0; st == KNUT_OK && i < map->n_vertices; i++)
        st = vertex_set(db, relation, &c, &map->vertices[i], m, err);
    for (size_t i = 0; st == KNUT_OK && i < map->n_edges; i++)
        st = edge_set(db, relation, &c, &map->edges[i], missing_endpoints, m, err);
    for (size_t i = 0; st == KNUT_OK && i < map->n_fk_edges; i++)
        st = fk_set(db, relation, &c, &map->vertices[0], &map->fk_edges[i], missing_endpoints,
                    m, err);
    cols_free(&c);
    if (st != KNUT_OK) {
        knut_graph_mutation_free(m);
        return st;
    }
    *out = m;
    return KNUT_OK;
}
