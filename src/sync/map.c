/*
 * Mapping: turns the staged rows of one table and round ("_knut_batch")
 * into a knut_graph_mutation: one vertex set per vertex step, one edge set
 * per edge and foreign-key edge step and, in cdc mode, one delete set per
 * vertex step (DELETE rows remove the row's vertex and with it its edges)
 * or, for a table of edge steps only, one edge delete set per edge step
 * (DELETE rows remove the row's edge; the endpoint vertices belong to
 * other tables and stay). Each set is a DuckDB query on its own staging
 * connection (a stream stays readable only until its connection runs
 * something else). Within a round the last row of a key wins (ordered by
 * _knut_ord); in cdc mode each key's last event (sequence_by, then
 * _knut_ord; UPDATE_BEFORE rows dropped) decides: an INSERT/UPDATE_AFTER
 * upserts it, a DELETE deletes it.
 */
#include <stdlib.h>
#include <string.h>

#include "sync_int.h"

#define BATCH "_knut_batch"
#define ORD "_knut_ord"
#define UPSERT_ROWS KNUT_SYNC_CHANGE_COLUMN " IN ('INSERT', 'UPDATE_AFTER')"

/* Column names of the set's rows and the property names they carry. */
typedef struct sel {
    knut_buf sql;
    const char *names[256]; /* property names (borrowed) */
    size_t n;
    const knut_sync_table *t; /* set: note the columns declared VARCHAR */
    const char *text[256];    /* their property names (borrowed) */
    size_t n_text;
    int unique; /* no two batch rows share the set's keys: no window */
} sel;

static void sel_col(sel *s, const char *column, const char *as)
{
    const knut_sync_column *d = s->t ? knut_sync__column_find(s->t, column) : NULL;
    if (d && strcmp(d->type, "VARCHAR") == 0 && s->n_text < sizeof s->text / sizeof s->text[0])
        s->text[s->n_text++] = as; /* columns.c: may turn a stored column into text */
    knut_buf_puts(&s->sql, s->n ? ", " : "SELECT ");
    knut_duck_ident(&s->sql, column);
    knut_buf_puts(&s->sql, " AS ");
    knut_duck_ident(&s->sql, as);
    if (s->n < sizeof s->names / sizeof s->names[0])
        s->names[s->n] = as;
    s->n++;
}

static void key_list(knut_buf *q, const char *const *keys, size_t n_keys)
{
    for (size_t i = 0; i < n_keys; i++) {
        if (i)
            knut_buf_puts(q, ", ");
        knut_duck_ident(q, keys[i]);
    }
}

/*
 * cdc: each key's last event in changelog order (sequence_by if set, then
 * file, then row: _knut_ord), as a subquery of batch rows. UPDATE_BEFORE
 * rows are the old image, not an event. The caller keeps the upserts
 * (INSERT, UPDATE_AFTER) or the deletes of it, so a key is upserted or
 * deleted, never both, and the sink's upserts-before-deletes order cannot
 * turn a DELETE then INSERT into a delete, however files were batched.
 */
static void cdc_last_events(knut_buf *q, const knut_sync_table *t, const char *const *keys,
                            size_t n_keys)
{
    knut_buf_puts(q, "(SELECT * FROM " BATCH " WHERE " KNUT_SYNC_CHANGE_COLUMN
                     " <> 'UPDATE_BEFORE' QUALIFY row_number() OVER (PARTITION BY ");
    key_list(q, keys, n_keys);
    knut_buf_puts(q, " ORDER BY ");
    if (t->sequence_by) {
        knut_duck_ident(q, t->sequence_by);
        knut_buf_puts(q, " DESC NULLS LAST, ");
    }
    knut_buf_puts(q, ORD " DESC) = 1)");
}

/* FROM + WHERE + "last row of a key wins"; keys are batch columns. In
 * cdc mode the last event of each key, kept when it is an upsert. */
static void sel_tail(sel *s, const knut_sync_table *t, const char *extra_where,
                     const char *const *keys, size_t n_keys)
{
    if (t->mode == KNUT_SYNC_MODE_CDC) {
        knut_buf_puts(&s->sql, " FROM ");
        cdc_last_events(&s->sql, t, keys, n_keys);
        knut_buf_puts(&s->sql, " WHERE " UPSERT_ROWS);
        if (extra_where)
            knut_buf_printf(&s->sql, " AND %s", extra_where);
        return;
    }
    knut_buf_puts(&s->sql, " FROM " BATCH " WHERE true");
    if (extra_where)
        knut_buf_printf(&s->sql, " AND %s", extra_where);
    if (s->unique)
        return; /* every key once: the window would keep every row */
    knut_buf_puts(&s->sql, " QUALIFY row_number() OVER (PARTITION BY ");
    key_list(&s->sql, keys, n_keys);
    knut_buf_puts(&s->sql, " ORDER BY " ORD " DESC) = 1");
}

/* cdc: FROM + WHERE of a delete set: the keys whose last event is a DELETE. */
static void sel_deletes(sel *s, const knut_sync_table *t, const char *const *keys,
                        size_t n_keys)
{
    knut_buf_puts(&s->sql, " FROM ");
    cdc_last_events(&s->sql, t, keys, n_keys);
    knut_buf_puts(&s->sql, " WHERE " KNUT_SYNC_CHANGE_COLUMN " = 'DELETE'");
}

/* The batch columns a step's rows are told apart by (at most 64). */
static size_t step_keys(const knut_sync_table *t, int kind, size_t i, const char **kc)
{
    size_t n = 0;
    if (kind == 0) {
        for (size_t k = 0; k < t->vertices[i].n_keys && n < 64; k++)
            kc[n++] = t->vertices[i].keys[k].column;
    } else if (kind == 1) {
        for (size_t k = 0; k < t->edges[i].from.n_keys && n < 64; k++)
            kc[n++] = t->edges[i].from.keys[k].column;
        for (size_t k = 0; k < t->edges[i].to.n_keys && n < 64; k++)
            kc[n++] = t->edges[i].to.keys[k].column;
    } else {
        kc[n++] = t->vertices[0].keys[0].column;
        kc[n++] = t->fk_edges[i].column;
    }
    return n;
}

/* Whether step (kind 0 vertex, 1 edge, 2 foreign key) i may skip the
 * window; when it may not, a view batch becomes a table first (the window
 * over the view ran out of the staging engine's memory). cdc: never (the
 * last event decides, and deletes are sets of their own). */
static knut_status step_unique(knut_duck_db *db, const knut_sync_table *t, int kind, size_t i,
                               int *unique, knut_error *err)
{
    const char *kc[64];
    *unique = 0;
    knut_status st = KNUT_OK;
    if (t->mode != KNUT_SYNC_MODE_CDC)
        st = knut_sync__batch_keys_unique(db, kc, step_keys(t, kind, i, kc), unique, err);
    if (st == KNUT_OK && !*unique)
        st = knut_sync__stage_batch_table(db, err);
    return st;
}

static int is_internal(const char *col)
{
    return strcmp(col, ORD) == 0 || strcmp(col, KNUT_SYNC_CHANGE_COLUMN) == 0;
}

static int prop_uses(const knut_sync_prop *p, size_t n, const char *column)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(p[i].column, column) == 0)
            return 1;
    return 0;
}

static knut_status run(knut_duck_db *db, sel *s, struct ArrowArrayStream *out, knut_error *err)
{
    knut_duck_conn *c = NULL;
    if (s->n > sizeof s->names / sizeof s->names[0]) /* the file's shape: a data error */
        return knut_error_set(err, KNUT_EINVAL, "%zu columns in one set, at most %zu",
                              s->n, sizeof s->names / sizeof s->names[0]);
    knut_status st = knut_buf_check(&s->sql, err);
    if (st == KNUT_OK)
        st = knut_sync__stage_conn(&c, db, err);
    if (st == KNUT_OK)
        st = knut_duck_query(c, s->sql.data, out, err);
    knut_duck_conn_close(c); /* the stream keeps its connection */
    return st;
}

/* The vertex step's SELECT: keys first (*nk of them), then properties. */
static void vertex_sel(sel *s, const knut_sync_table *t, const knut_sync_vertex_step *v,
                       const sync_names *cols, size_t *nk_out)
{
    s->t = t;
    for (size_t k = 0; k < v->n_keys; k++)
        sel_col(s, v->keys[k].column, v->keys[k].prop);
    size_t nk = s->n;
    if (v->all_props) {
        for (size_t i = 0; i < cols->n; i++)
            if (!is_internal(cols->names[i]) && !prop_uses(v->keys, v->n_keys, cols->names[i]))
                sel_col(s, cols->names[i], knut_graph_map_renamed(v->rename, cols->names[i]));
    } else {
        for (size_t k = 0; k < v->n_props; k++)
            sel_col(s, v->props[k].column, v->props[k].prop);
    }
    const char *ok[64];
    for (size_t k = 0; k < v->n_keys && k < 64; k++)
        ok[k] = v->keys[k].column;
    sel_tail(s, t, NULL, ok, nk < 64 ? nk : 64);
    *nk_out = nk;
}

static knut_status vertex_set(knut_duck_db *db, const knut_sync_table *t,
                              const knut_sync_vertex_step *v, const sync_names *cols, int unique,
                              knut_graph_mutation *m, knut_error *err)
{
    sel s = {.sql = KNUT_BUF_INIT, .unique = unique};
    knut_graph_vertex_set vs = KNUT_GRAPH_VERTEX_SET_INIT;
    size_t nk = 0;
    vertex_sel(&s, t, v, cols, &nk);
    knut_status st = run(db, &s, &vs.stream, err);
    if (st == KNUT_OK) {
        vs.labels = v->labels;
        vs.n_labels = v->n_labels;
        vs.keys = s.names;
        vs.n_keys = nk;
        vs.props = s.names + nk;
        vs.n_props = s.n - nk;
        vs.text_props = s.text;
        vs.n_text_props = s.n_text;
        st = knut_graph_mutation_add_vertex_set(m, &vs, err);
    }
    knut_buf_reset(&s.sql);
    return st;
}

/* The edge step's SELECT: the endpoint keys (_knut_s*, _knut_d*: names
 * holds them, *ne_out counts them), then properties. At most 16 keys an
 * endpoint (the caller checks). */
static void edge_sel(sel *sp, const knut_sync_table *t, const knut_sync_edge_step *e,
                     const sync_names *cols, char names[2][16][24], size_t *ne_out)
{
    sel s = *sp;
    s.t = t;
    for (size_t k = 0; k < e->from.n_keys; k++) {
        snprintf(names[0][k], sizeof names[0][k], "_knut_s%u", (unsigned)k);
        sel_col(&s, e->from.keys[k].column, names[0][k]);
    }
    for (size_t k = 0; k < e->to.n_keys; k++) {
        snprintf(names[1][k], sizeof names[1][k], "_knut_d%u", (unsigned)k);
        sel_col(&s, e->to.keys[k].column, names[1][k]);
    }
    size_t ne = s.n;
    const char *kc[32];
    for (size_t k = 0; k < e->from.n_keys; k++)
        kc[k] = e->from.keys[k].column;
    for (size_t k = 0; k < e->to.n_keys; k++)
        kc[e->from.n_keys + k] = e->to.keys[k].column;
    if (e->all_props) {
        for (size_t i = 0; i < cols->n; i++)
            if (!is_internal(cols->names[i]) &&
                !prop_uses(e->from.keys, e->from.n_keys, cols->names[i]) &&
                !prop_uses(e->to.keys, e->to.n_keys, cols->names[i]))
                sel_col(&s, cols->names[i], knut_graph_map_renamed(e->rename, cols->names[i]));
    } else {
        for (size_t k = 0; k < e->n_props; k++)
            sel_col(&s, e->props[k].column, e->props[k].prop);
    }
    sel_tail(&s, t, NULL, kc, ne);
    *sp = s;
    *ne_out = ne;
}

static knut_status edge_set(knut_duck_db *db, const knut_sync_table *t,
                            const knut_sync_edge_step *e, const sync_names *cols, int unique,
                            knut_graph_mutation *m, knut_error *err)
{
    sel s = {.sql = KNUT_BUF_INIT, .unique = unique};
    knut_graph_edge_set es = KNUT_GRAPH_EDGE_SET_INIT;
    char names[2][16][24];
    const char *skeys[16], *dkeys[16];
    size_t ne = 0;
    if (e->from.n_keys > 16 || e->to.n_keys > 16)
        return knut_error_set(err, KNUT_EINVAL, "edge '%s': at most 16 endpoint keys", e->type);
    for (size_t k = 0; k < e->from.n_keys; k++)
        skeys[k] = e->from.keys[k].prop;
    for (size_t k = 0; k < e->to.n_keys; k++)
        dkeys[k] = e->to.keys[k].prop;
    edge_sel(&s, t, e, cols, names, &ne);
    knut_status st = run(db, &s, &es.stream, err);
    if (st == KNUT_OK) {
        es.type = e->type;
        es.src = (knut_graph_endpoint){e->from.label, skeys, s.names, e->from.n_keys};
        es.dst = (knut_graph_endpoint){e->to.label, dkeys, s.names + e->from.n_keys,
                                       e->to.n_keys};
        es.props = s.names + ne;
        es.n_props = s.n - ne;
        es.missing_endpoints = knut_sync__missing_sink_policy(t);
        es.text_props = s.text;
        es.n_text_props = s.n_text;
        st = knut_graph_mutation_add_edge_set(m, &es, err);
    }
    knut_buf_reset(&s.sql);
    return st;
}

static knut_status fk_set(knut_duck_db *db, const knut_sync_table *t, const knut_sync_fk_step *f,
                          int unique, knut_graph_mutation *m, knut_error *err)
{
    sel s = {.sql = KNUT_BUF_INIT, .unique = unique};
    knut_buf where = KNUT_BUF_INIT;
    knut_graph_edge_set es = KNUT_GRAPH_EDGE_SET_INIT;
    const knut_sync_vertex_step *v = &t->vertices[0];
    sel_col(&s, v->keys[0].column, "_knut_s0");
    sel_col(&s, f->column, "_knut_d0");
    knut_duck_ident(&where, f->column);
    knut_buf_puts(&where, " IS NOT NULL"); /* no foreign key: no edge */
    knut_status st = knut_buf_check(&where, err);
    if (st == KNUT_OK) {
        const char *kc[2] = {v->keys[0].column, f->column};
        sel_tail(&s, t, where.data, kc, 2);
        st = run(db, &s, &es.stream, err);
    }
    if (st == KNUT_OK) {
        const char *sk[1] = {v->keys[0].prop}, *dk[1] = {f->to_key};
        es.type = f->type;
        es.src = (knut_graph_endpoint){v->labels[0], sk, s.names, 1};
        es.dst = (knut_graph_endpoint){f->to_label, dk, s.names + 1, 1};
        es.missing_endpoints = knut_sync__missing_sink_policy(t);
        es.text_props = s.text;
        es.n_text_props = s.n_text;
        st = knut_graph_mutation_add_edge_set(m, &es, err);
    }
    knut_buf_reset(&where);
    knut_buf_reset(&s.sql);
    return st;
}

/* cdc: the keys whose last event is a DELETE (one row a key). */
static knut_status delete_set(knut_duck_db *db, const knut_sync_table *t,
                              const knut_sync_vertex_step *v, knut_graph_mutation *m,
                              knut_error *err)
{
    sel s = {.sql = KNUT_BUF_INIT};
    knut_graph_delete_set ds = KNUT_GRAPH_DELETE_SET_INIT;
    const char *kc[64];
    if (v->n_keys > 64)
        return knut_error_set(err, KNUT_EINVAL, "label '%s': at most 64 keys", v->labels[0]);
    for (size_t k = 0; k < v->n_keys; k++) {
        sel_col(&s, v->keys[k].column, v->keys[k].prop);
        kc[k] = v->keys[k].column;
    }
    sel_deletes(&s, t, kc, v->n_keys);
    knut_status st = run(db, &s, &ds.stream, err);
    if (st == KNUT_OK) {
        ds.label = v->labels[0];
        ds.keys = s.names;
        ds.n_keys = s.n;
        st = knut_graph_mutation_add_delete_set(m, &ds, err);
    }
    knut_buf_reset(&s.sql);
    return st;
}

/* cdc, edge-only table: the endpoint keys of the edges whose last event
 * is a DELETE. */
static knut_status edge_delete_set(knut_duck_db *db, const knut_sync_table *t,
                                   const knut_sync_edge_step *e, knut_graph_mutation *m,
                                   knut_error *err)
{
    sel s = {.sql = KNUT_BUF_INIT};
    const char *kc[32];
    knut_graph_edge_delete_set ds = KNUT_GRAPH_EDGE_DELETE_SET_INIT;
    char names[2][16][24];
    const char *skeys[16], *dkeys[16];
    if (e->from.n_keys > 16 || e->to.n_keys > 16)
        return knut_error_set(err, KNUT_EINVAL, "edge '%s': at most 16 endpoint keys", e->type);
    for (size_t k = 0; k < e->from.n_keys; k++) {
        snprintf(names[0][k], sizeof names[0][k], "_knut_s%u", (unsigned)k);
        sel_col(&s, e->from.keys[k].column, names[0][k]);
        skeys[k] = e->from.keys[k].prop;
    }
    for (size_t k = 0; k < e->to.n_keys; k++) {
        snprintf(names[1][k], sizeof names[1][k], "_knut_d%u", (unsigned)k);
        sel_col(&s, e->to.keys[k].column, names[1][k]);
        dkeys[k] = e->to.keys[k].prop;
    }
    for (size_t k = 0; k < e->from.n_keys; k++)
        kc[k] = e->from.keys[k].column;
    for (size_t k = 0; k < e->to.n_keys; k++)
        kc[e->from.n_keys + k] = e->to.keys[k].column;
    sel_deletes(&s, t, kc, e->from.n_keys + e->to.n_keys);
    knut_status st = run(db, &s, &ds.stream, err);
    if (st == KNUT_OK) {
        ds.type = e->type;
        ds.src = (knut_graph_endpoint){e->from.label, skeys, s.names, e->from.n_keys};
        ds.dst = (knut_graph_endpoint){e->to.label, dkeys, s.names + e->from.n_keys,
                                       e->to.n_keys};
        st = knut_graph_mutation_add_edge_delete_set(m, &ds, err);
    }
    knut_buf_reset(&s.sql);
    return st;
}

knut_status knut_sync__map_build(knut_duck_db *db, const knut_sync_table *t,
                                 knut_graph_mutation **out, knut_error *err)
{
    knut_graph_mutation *m = NULL;
    sync_names cols = {0};
    knut_duck_conn *c = NULL;
    size_t n_steps = t->n_vertices + t->n_edges + t->n_fk_edges;
    int *unique = calloc(n_steps ? n_steps : 1, sizeof *unique);
    *out = NULL;
    knut_status st = unique ? KNUT_OK : knut_error_set(err, KNUT_ENOMEM, "out of memory");
    /* every check before the first set's stream: making a view batch a
     * table must not happen under an open stream */
    for (size_t i = 0; st == KNUT_OK && i < n_steps; i++) {
        int kind = i < t->n_vertices ? 0 : i < t->n_vertices + t->n_edges ? 1 : 2;
        size_t j = kind == 0 ? i : kind == 1 ? i - t->n_vertices : i - t->n_vertices - t->n_edges;
        st = step_unique(db, t, kind, j, &unique[i], err);
    }
    if (st == KNUT_OK)
        st = knut_sync__stage_conn(&c, db, err);
    if (st == KNUT_OK)
        st = knut_sync__columns(c, BATCH, &cols, err);
    knut_duck_conn_close(c);
    if (st == KNUT_OK)
        st = knut_graph_mutation_new(&m, err);
    for (size_t i = 0; st == KNUT_OK && i < t->n_vertices; i++)
        st = vertex_set(db, t, &t->vertices[i], &cols, unique[i], m, err);
    for (size_t i = 0; st == KNUT_OK && i < t->n_edges; i++)
        st = edge_set(db, t, &t->edges[i], &cols, unique[t->n_vertices + i], m, err);
    for (size_t i = 0; st == KNUT_OK && i < t->n_fk_edges; i++)
        st = fk_set(db, t, &t->fk_edges[i], unique[t->n_vertices + t->n_edges + i], m, err);
    free(unique);
    for (size_t i = 0; st == KNUT_OK && t->mode == KNUT_SYNC_MODE_CDC && i < t->n_vertices; i++)
        st = delete_set(db, t, &t->vertices[i], m, err);
    /* With a vertex step, deleting the vertex already takes its edges;
     * without one the row is the edge, and only the edge goes. */
    for (size_t i = 0; st == KNUT_OK && t->mode == KNUT_SYNC_MODE_CDC && t->n_vertices == 0 &&
                       i < t->n_edges;
         i++)
        st = edge_delete_set(db, t, &t->edges[i], m, err);
    knut_sync__names_reset(&cols);
    if (st != KNUT_OK) {
        knut_graph_mutation_free(m);
        /* A key type no sink can match on, a column the set cannot bind:
         * the file's data, pinned on it (EINVAL), not a failed table. */
        if ((st == KNUT_EUNSUPPORTED || st == KNUT_ENOTFOUND || st == KNUT_ETOOBIG) && err)
            err->code = st = KNUT_EINVAL;
        return knut_error_prefix(err, "table '%s': ", t->name);
    }
    *out = m;
    return KNUT_OK;
}

knut_status knut_sync__map_step_sql(knut_duck_db *db, const knut_sync_table *t, int edge,
                                    size_t i, knut_buf *sql, size_t *n_keys, int *windowed,
                                    knut_error *err)
{
    sel s = {.sql = KNUT_BUF_INIT};
    sync_names cols = {0};
    knut_duck_conn *c = NULL;
    char names[2][16][24];
    knut_status st = step_unique(db, t, edge, i, &s.unique, err);
    *windowed = !s.unique;
    if (st == KNUT_OK)
        st = knut_sync__stage_conn(&c, db, err);
    if (st == KNUT_OK)
        st = knut_sync__columns(c, BATCH, &cols, err);
    knut_duck_conn_close(c);
    if (st == KNUT_OK && edge && (t->edges[i].from.n_keys > 16 || t->edges[i].to.n_keys > 16))
        st = knut_error_set(err, KNUT_EINVAL, "edge '%s': at most 16 endpoint keys",
                            t->edges[i].type);
    if (st == KNUT_OK) {
        if (edge)
            edge_sel(&s, t, &t->edges[i], &cols, names, n_keys);
        else
            vertex_sel(&s, t, &t->vertices[i], &cols, n_keys);
        if (s.n > sizeof s.names / sizeof s.names[0])
            st = knut_error_set(err, KNUT_EINVAL, "%zu columns in one set, at most %zu", s.n,
                                sizeof s.names / sizeof s.names[0]);
    }
    if (st == KNUT_OK && (st = knut_buf_check(&s.sql, err)) == KNUT_OK)
        knut_buf_append(sql, s.sql.data, s.sql.len);
    knut_buf_reset(&s.sql);
    knut_sync__names_reset(&cols);
    return st == KNUT_OK ? knut_buf_check(sql, err) : st;
}
