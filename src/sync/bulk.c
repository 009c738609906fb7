/*
 * The first round at bulk speed: into a FalkorDB graph that does not exist
 * yet, the round's tables go in with GRAPH.BULK (as `knut load` does)
 * instead of batched UNWIND MERGE, as long as that writes exactly what
 * the MERGE path would. The rules (docs/sync.md, "First round at bulk
 * speed"):
 *
 * - the graph key is absent at the start of the round, the ledger is the
 *   local one (a shared or exactly-once ledger commits per table, under a
 *   lease: MERGE), and --no-bulk was not given;
 * - tables are taken in the round's order, and the bulk is the longest
 *   prefix of them that qualifies; from the first that does not, the
 *   MERGE path goes on (in order, after the bulk is in the graph);
 * - a table qualifies when it is incremental (not cdc, not full), has no
 *   foreign-key edges, every vertex step has one label that no earlier
 *   step of the bulk wrote, every edge step a type no earlier step wrote
 *   and both endpoints on labels an earlier table of the bulk wrote, found
 *   by that step's key properties with the same column types, and every
 *   edge row finds both endpoints (else missing_endpoints decides, on the
 *   MERGE path); every column has a bulk code (no dates, timestamps,
 *   lists: they go MERGE).
 *
 * The bulk is built in a temporary key (<graph>:knut-bulk) and renamed
 * onto the graph with RENAMENX only at the end; the files are recorded
 * done after that. A crash mid-bulk leaves only the temporary key (deleted
 * by the next bulk) and no file done; a crash between the rename and the
 * ledger write leaves files not done whose rows are in: the next round
 * MERGEs them again (the graph now exists), which is harmless. Any failure
 * of the bulk deletes the temporary key and runs the round as usual.
 *
 * Node ids come from send order: each vertex set is copied into a fresh
 * table of the staging engine (_knut_bv<n>) and sent in rowid order, so a
 * node's id is the set's first id plus its rowid; an edge set finds its
 * endpoints' ids there with a join.
 */
#include <stdlib.h>
#include <string.h>

#include "sync_int.h"

#define BULK_SUFFIX ":knut-bulk"
#define BULK_MAX_SETS 64

typedef struct bulk_label {
    const char *label;
    const knut_sync_vertex_step *v;
    int table;     /* _knut_bv<table> */
    int64_t first; /* node id of its rowid 0 */
} bulk_label;

typedef struct bulk_table {
    size_t i; /* config index */
    sync_table_stats ts;
    sync_file_list files;
    sync_staged sg;
    int64_t dur_us;
} bulk_table;

typedef struct bulk_run {
    knut_sync *s;
    knut_graph_falkor_bulk *w;
    knut_buf tmp; /* the temporary key */
    bulk_label labels[BULK_MAX_SETS];
    size_t n_labels, n_sets;
    const char *types[BULK_MAX_SETS];
    size_t n_types;
    int64_t next_id;
    bulk_table *tables;
    size_t n_tables;
} bulk_run;

static const bulk_label *label_find(const bulk_run *b, const char *label, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(b->labels[i].label, label) == 0)
            return &b->labels[i];
    return NULL;
}

static int type_used(const bulk_run *b, const char *type)
{
    for (size_t i = 0; i < b->n_types; i++)
        if (strcmp(b->types[i], type) == 0)
            return 1;
    return 0;
}

/* The endpoint is found by the same key properties, in the same order. */
static int endpoint_ok(const bulk_label *l, const knut_sync_endpoint *ep)
{
    if (!l || l->v->n_keys != ep->n_keys)
        return 0;
    for (size_t k = 0; k < ep->n_keys; k++)
        if (strcmp(l->v->keys[k].prop, ep->keys[k].prop) != 0)
            return 0;
    return 1;
}

/* The table's config qualifies (labels and types checked against those of
 * the earlier tables of the bulk). */
static int table_ok(const bulk_run *b, const knut_sync_table *t)
{
    if (t->mode != KNUT_SYNC_MODE_INCREMENTAL || t->n_fk_edges > 0 ||
        t->n_vertices + t->n_edges == 0 ||
        b->n_labels + t->n_vertices > BULK_MAX_SETS || b->n_types + t->n_edges > BULK_MAX_SETS)
        return 0;
    for (size_t i = 0; i < t->n_vertices; i++) {
        const knut_sync_vertex_step *v = &t->vertices[i];
        if (v->n_labels != 1 || strchr(v->labels[0], ':') ||
            label_find(b, v->labels[0], b->n_labels))
            return 0;
        for (size_t j = 0; j < i; j++)
            if (strcmp(t->vertices[j].labels[0], v->labels[0]) == 0)
                return 0;
    }
    for (size_t i = 0; i < t->n_edges; i++) {
        const knut_sync_edge_step *e = &t->edges[i];
        if (strchr(e->type, ':') || type_used(b, e->type) ||
            !endpoint_ok(label_find(b, e->from.label, b->n_labels), &e->from) ||
            !endpoint_ok(label_find(b, e->to.label, b->n_labels), &e->to))
            return 0;
        for (size_t j = 0; j < i; j++)
            if (strcmp(t->edges[j].type, e->type) == 0)
                return 0;
    }
    return 1;
}

/* A query's column formats (LIMIT 0); *sc owned by the caller. */
static knut_status schema_of(knut_duck_conn *c, const char *sql, struct ArrowSchema *sc,
                             knut_error *err)
{
    knut_buf q = KNUT_BUF_INIT;
    struct ArrowArrayStream st_ = {0};
    knut_buf_printf(&q, "SELECT * FROM (%s) LIMIT 0", sql);
    knut_status st = knut_buf_check(&q, err);
    if (st == KNUT_OK)
        st = knut_duck_query(c, q.data, &st_, err);
    if (st == KNUT_OK && st_.get_schema(&st_, sc) != 0)
        st = knut_error_set(err, KNUT_EIO, "%s", st_.get_last_error(&st_));
    knut_arrow_stream_release(&st_);
    knut_buf_reset(&q);
    return st;
}

static const char *col_format(const struct ArrowSchema *sc, const char *name)
{
    for (int64_t k = 0; k < sc->n_children; k++)
        if (strcmp(sc->children[k]->name, name) == 0)
            return sc->children[k]->format;
    return NULL;
}

/* e.<ecol_k> = <alias>.<key prop k> for the endpoint's keys. */
static void join_on(knut_buf *q, const char *alias, const knut_sync_endpoint *ep, char side)
{
    for (size_t k = 0; k < ep->n_keys; k++) {
        knut_buf_printf(q, "%s%s.", k ? " AND " : "", alias);
        knut_duck_ident(q, ep->keys[k].prop);
        knut_buf_printf(q, " = e._knut_%c%u", side, (unsigned)k);
    }
}

/*
 * Checks an edge step against the bulk and resolves its endpoints: every
 * column has a bulk code, the endpoint key columns have the types of the
 * vertices' keys, and every row finds both endpoints. The rows go into
 * table _knut_be<ei> with the endpoints' node ids first (_knut_src,
 * _knut_dst, then the properties): one join, whose result is a table, so
 * the send is a plain scan (a join streamed straight to the server ran
 * out of the staging engine's 128 MB over a view batch). *ok = 0
 * otherwise (the table goes MERGE).
 */
static knut_status edge_resolve(bulk_run *b, knut_duck_conn *c, const knut_sync_edge_step *e,
                                size_t ei, const char *sql, size_t ne, int *ok, knut_error *err)
{
    struct ArrowSchema sc = {0}, vs[2] = {{0}, {0}};
    knut_buf q = KNUT_BUF_INIT;
    const knut_sync_endpoint *eps[2] = {&e->from, &e->to};
    knut_status st = schema_of(c, sql, &sc, err);
    *ok = st == KNUT_OK && knut_graph_falkor_bulk_types_ok(&sc, (int64_t)ne);
    for (int side = 0; st == KNUT_OK && *ok && side < 2; side++) {
        const bulk_label *l = label_find(b, eps[side]->label, b->n_labels);
        knut_buf_clear(&q);
        knut_buf_printf(&q, "SELECT * FROM _knut_bv%d", l->table);
        if ((st = knut_buf_check(&q, err)) == KNUT_OK)
            st = schema_of(c, q.data, &vs[side], err);
        for (size_t k = 0; st == KNUT_OK && k < eps[side]->n_keys; k++) {
            char name[24];
            snprintf(name, sizeof name, "_knut_%c%u", side ? 'd' : 's', (unsigned)k);
            const char *ef = col_format(&sc, name);
            const char *vf = col_format(&vs[side], eps[side]->keys[k].prop);
            if (!ef || !vf || strcmp(ef, vf) != 0)
                *ok = 0; /* MERGE compares values as FalkorDB does; a join might cast */
        }
    }
    int64_t lost = 0;
    if (st == KNUT_OK && *ok) {
        const bulk_label *ls = label_find(b, e->from.label, b->n_labels);
        const bulk_label *ld = label_find(b, e->to.label, b->n_labels);
        knut_buf_clear(&q);
        /* two hash joins (NOT EXISTS ... OR NOT EXISTS plans as a cross product) */
        knut_buf_printf(&q, "CREATE OR REPLACE TABLE _knut_be%zu AS SELECT s.rowid + %lld AS "
                            "_knut_src, d.rowid + %lld AS _knut_dst, e.*",
                        ei, (long long)ls->first, (long long)ld->first);
        if (ne) {
            knut_buf_puts(&q, " EXCLUDE (");
            for (size_t k = 0; k < e->from.n_keys + e->to.n_keys; k++)
                knut_buf_printf(&q, "%s_knut_%c%u", k ? ", " : "",
                                k < e->from.n_keys ? 's' : 'd',
                                (unsigned)(k < e->from.n_keys ? k : k - e->from.n_keys));
            knut_buf_puts(&q, ")");
        }
        knut_buf_printf(&q, " FROM (%s) e LEFT JOIN _knut_bv%d s ON ", sql, ls->table);
        join_on(&q, "s", &e->from, 's');
        knut_buf_printf(&q, " LEFT JOIN _knut_bv%d d ON ", ld->table);
        join_on(&q, "d", &e->to, 'd');
        if ((st = knut_buf_check(&q, err)) == KNUT_OK)
            st = knut_duck_exec(c, q.data, err);
        knut_buf_clear(&q);
        knut_buf_printf(&q, "SELECT count(*) FROM _knut_be%zu WHERE _knut_src IS NULL OR "
                            "_knut_dst IS NULL", ei);
        if (st == KNUT_OK && (st = knut_buf_check(&q, err)) == KNUT_OK)
            st = knut_sync__q_int(c, q.data, NULL, &lost, err);
        *ok = st == KNUT_OK && lost == 0;
    }
    knut_arrow_schema_release(&sc);
    knut_arrow_schema_release(&vs[0]);
    knut_arrow_schema_release(&vs[1]);
    knut_buf_reset(&q);
    return st;
}

static knut_status stream_of(knut_duck_db *db, const char *sql, struct ArrowArrayStream *out,
                             knut_error *err)
{
    knut_duck_conn *c = NULL;
    knut_status st = knut_sync__stage_conn(&c, db, err);
    if (st == KNUT_OK)
        st = knut_duck_query(c, sql, out, err);
    knut_duck_conn_close(c); /* the stream keeps its connection */
    return st;
}

/* Numbers vertex step vi's set into _knut_bv<n> and sends it. */
static knut_status send_vertices(bulk_run *b, knut_duck_conn *c, const knut_sync_table *t,
                                 size_t vi, const char *sql, int64_t *out, knut_error *err)
{
    knut_buf q = KNUT_BUF_INIT;
    struct ArrowArrayStream rows = {0};
    int n = (int)b->n_sets++;
    int64_t first = 0, sent = 0;
    *out = 0;
    /* A fresh table's rowids are 0..n-1: a node's id is first + rowid (a
     * row_number() over the whole set would be one unspillable window).
     * The scan comes in insertion order, so no sort; the writer checks
     * each row's rowid against its position (a row out of place fails
     * the bulk, and the round goes MERGE). */
    knut_buf_printf(&q, "CREATE OR REPLACE TABLE _knut_bv%d AS %s", n, sql);
    knut_status st = knut_buf_check(&q, err);
    if (st == KNUT_OK && (st = knut_duck_exec(c, q.data, err)) != KNUT_OK)
        knut_error_prefix(err, "numbering the vertices: ");
    knut_buf_clear(&q);
    knut_buf_printf(&q, "SELECT rowid AS _knut_pos, * FROM _knut_bv%d", n);
    if (st == KNUT_OK && (st = knut_buf_check(&q, err)) == KNUT_OK)
        st = stream_of(b->s->stage, q.data, &rows, err);
    if (st == KNUT_OK)
        st = knut_graph_falkor_bulk_nodes(b->w, t->vertices[vi].labels[0], &rows, &first, &sent,
                                          err);
    if (st == KNUT_OK && first != b->next_id)
        st = knut_error_set(err, KNUT_ERROR, "bulk: %lld vertices sent from id %lld, not %lld",
                            (long long)sent, (long long)first, (long long)b->next_id);
    if (st == KNUT_OK) {
        *out = sent;
        b->next_id += sent;
        b->labels[b->n_labels++] =
            (bulk_label){t->vertices[vi].labels[0], &t->vertices[vi], n, first};
    }
    knut_buf_reset(&q);
    return st;
}

/* Sends edge step ei's resolved rows (_knut_be<ei>, edge_resolve). */
static knut_status send_edges(bulk_run *b, const knut_sync_edge_step *e, size_t ei,
                              int64_t *sent, knut_error *err)
{
    struct ArrowArrayStream rows = {0};
    char q[64];
    snprintf(q, sizeof q, "SELECT * FROM _knut_be%zu", ei);
    knut_status st = stream_of(b->s->stage, q, &rows, err);
    if (st == KNUT_OK)
        st = knut_graph_falkor_bulk_edges(b->w, e->type, &rows, sent, err);
    if (st == KNUT_OK)
        b->types[b->n_types++] = e->type;
    return st;
}

/*
 * One table into the bulk: checks its sets, then sends them. *ok = 0
 * (nothing sent) when it does not qualify.
 */
static knut_status bulk_table_send(bulk_run *b, const knut_sync_table *t, bulk_table *bt,
                                   int *ok, knut_error *err)
{
    knut_sync *s = b->s;
    size_t n_sets = t->n_vertices + t->n_edges;
    knut_buf *sql = calloc(n_sets, sizeof *sql);
    size_t *nk = calloc(n_sets, sizeof *nk);
    int *win = calloc(n_sets, sizeof *win);
    knut_duck_conn *c = NULL;
    knut_status st = sql && nk && win ? knut_sync__stage_conn(&c, s->stage, err)
                               : knut_error_set(err, KNUT_ENOMEM, "out of memory");
    *ok = 1;
    for (size_t i = 0; st == KNUT_OK && i < n_sets; i++) {
        int edge = i >= t->n_vertices;
        size_t j = edge ? i - t->n_vertices : i;
        knut_buf_init(&sql[i], 0);
        st = knut_sync__map_step_sql(s->stage, t, edge, j, &sql[i], &nk[i], &win[i], err);
        if (st == KNUT_EINVAL) { /* the file's shape: the MERGE path reports it */
            knut_error_clear(err);
            st = KNUT_OK;
            *ok = 0;
            break;
        }
        if (st == KNUT_OK && !edge) {
            struct ArrowSchema sc = {0};
            st = schema_of(c, sql[i].data, &sc, err);
            *ok = st == KNUT_OK && knut_graph_falkor_bulk_types_ok(&sc, 0);
            knut_arrow_schema_release(&sc);
        }
        if (!*ok)
            break;
    }
    /* An edge set that drops repeated keys is copied out of the batch
     * first: the join then reads a plain table (joined straight over the
     * window query, DuckDB ran out of its 128 MB in one run). A plain scan
     * is joined as it is. */
    for (size_t i = 0; st == KNUT_OK && *ok && i < t->n_edges; i++) {
        knut_buf *q = &sql[t->n_vertices + i];
        if (!win[t->n_vertices + i])
            continue;
        knut_buf mk = KNUT_BUF_INIT;
        knut_buf_printf(&mk, "CREATE OR REPLACE TABLE _knut_bw%zu AS %s", i, q->data);
        if ((st = knut_buf_check(&mk, err)) == KNUT_OK)
            st = knut_duck_exec(c, mk.data, err);
        knut_buf_reset(&mk);
        knut_buf_clear(q);
        knut_buf_printf(q, "SELECT * FROM _knut_bw%zu", i);
        if (st == KNUT_OK)
            st = knut_buf_check(q, err);
    }
    /* vertices first: the table's own edges cannot name them (table_ok) */
    for (size_t i = 0; st == KNUT_OK && *ok && i < t->n_edges; i++)
        st = edge_resolve(b, c, &t->edges[i], i, sql[t->n_vertices + i].data,
                          nk[t->n_vertices + i], ok, err);
    for (size_t i = 0; st == KNUT_OK && *ok && i < t->n_vertices; i++) {
        int64_t sent = 0;
        st = send_vertices(b, c, t, i, sql[i].data, &sent, err);
        bt->ts.sink.vertices_written += sent;
    }
    for (size_t i = 0; st == KNUT_OK && *ok && i < t->n_edges; i++) {
        int64_t sent = 0;
        st = send_edges(b, &t->edges[i], i, &sent, err);
        bt->ts.sink.edges_written += sent;
    }
    for (size_t i = 0; c && i < t->n_edges; i++) {
        char q[64];
        snprintf(q, sizeof q, "DROP TABLE IF EXISTS _knut_be%zu", i);
        knut_duck_exec(c, q, NULL);
        snprintf(q, sizeof q, "DROP TABLE IF EXISTS _knut_bw%zu", i);
        knut_duck_exec(c, q, NULL);
    }
    for (size_t i = 0; sql && i < n_sets; i++)
        knut_buf_reset(&sql[i]);
    free(sql);
    free(nk);
    free(win);
    knut_duck_conn_close(c);
    return st;
}

/* 1 when FalkorDB has no key named graph (RO_QUERY refuses an empty key
 * and, unlike GRAPH.QUERY, does not make one). */
static knut_status key_absent(knut_graph_falkor *g, const char *graph, int *absent,
                              knut_error *err)
{
    knut_graph_falkor_result r;
    knut_error e = KNUT_ERROR_INIT;
    knut_status st = knut_graph_falkor_query(g, graph, "RETURN 1", KNUT_GRAPH_FALKOR_READ_ONLY,
                                             &r, &e);
    knut_graph_falkor_result_reset(&r);
    *absent = 0;
    if (st == KNUT_EPEER && e.detail == KNUT_GRAPH_FALKOR_ERR_EMPTY_KEY) {
        *absent = 1;
        return KNUT_OK;
    }
    if (st != KNUT_OK && err)
        *err = e;
    return st;
}

static void tmp_delete(bulk_run *b)
{
    int absent = 0;
    const char *argv[] = {"GRAPH.DELETE", b->tmp.data};
    if (key_absent(b->s->falkor, b->tmp.data, &absent, NULL) == KNUT_OK && !absent)
        knut_graph_falkor_command(b->s->falkor, 2, argv, NULL);
}

/* The range index the MERGE path looks each label up by (FalkorDB makes
 * it in the background; the sink waits for it before its first MERGE). */
static knut_status make_indexes(bulk_run *b, knut_error *err)
{
    knut_buf q = KNUT_BUF_INIT;
    knut_status st = KNUT_OK;
    for (size_t i = 0; st == KNUT_OK && i < b->n_labels; i++) {
        const knut_sync_vertex_step *v = b->labels[i].v;
        for (size_t k = 0; st == KNUT_OK && k < v->n_keys; k++) {
            knut_graph_falkor_result r;
            knut_buf_clear(&q);
            knut_buf_puts(&q, "CREATE INDEX FOR (n:");
            st = knut_graph_cypher_ident(&q, b->labels[i].label, strlen(b->labels[i].label),
                                         "label", err);
            knut_buf_puts(&q, ") ON (n.");
            if (st == KNUT_OK)
                st = knut_graph_cypher_ident(&q, v->keys[k].prop, strlen(v->keys[k].prop),
                                             "property", err);
            knut_buf_puts(&q, ")");
            if (st == KNUT_OK && (st = knut_buf_check(&q, err)) == KNUT_OK)
                st = knut_graph_falkor_query(b->s->falkor, b->tmp.data, q.data, 0, &r, err);
            knut_graph_falkor_result_reset(&r);
        }
    }
    knut_buf_reset(&q);
    return st;
}

/* RENAMENX: the graph must still be absent (*moved = 0 when someone made
 * it meanwhile: the bulk is then thrown away). */
static knut_status tmp_rename(bulk_run *b, int *moved, knut_error *err)
{
    const char *argv[] = {"RENAMENX", b->tmp.data, b->s->graph};
    int gone = 0;
    knut_status st = knut_graph_falkor_command(b->s->falkor, 3, argv, err);
    if (st == KNUT_OK)
        st = key_absent(b->s->falkor, b->tmp.data, &gone, err);
    *moved = st == KNUT_OK && gone;
    return st;
}

/* Asks FalkorDB only until the graph exists: from then on (the bulk made
 * it, or someone else) every round MERGEs without a look. */
static int round_wanted(knut_sync *s, knut_error *err)
{
    int absent = 0;
    if (!s->falkor || s->no_bulk || s->valkey || s->falkor_ledger ||
        knut_signal_stop_requested())
        return 0;
    knut_error e = KNUT_ERROR_INIT;
    if (key_absent(s->falkor, s->graph, &absent, &e) != KNUT_OK)
        return 0; /* the MERGE path meets the same error and reports it */
    if (!absent)
        s->no_bulk = 1;
    return absent;
}

/* Stages table t's files and sends it: *ok = 0 when it goes MERGE. */
static knut_status table_turn(bulk_run *b, const knut_sync_table *t, bulk_table *bt, int *ok,
                              knut_error *err)
{
    size_t cand[SYNC_MAX_FILES_PER_ROUND], n_cand = 0;
    knut_status st = knut_sync__files_list(t, &bt->files, err);
    if (st == KNUT_OK)
        st = knut_sync__round_pick(b->s, t, &bt->files, cand, &n_cand, &bt->ts, err);
    if (st == KNUT_OK && n_cand > 0)
        st = knut_sync__round_stage(b->s, t, &bt->files, cand, n_cand, &bt->ts, &bt->sg, err);
    if (st != KNUT_OK || n_cand == 0 || bt->sg.n_good == 0)
        return st;
    st = knut_sync__stage_batch(b->s->stage, bt->sg.good_idx, bt->sg.n_good, 1, err);
    if (st == KNUT_EINVAL) { /* files that disagree on a type: MERGE tries them one by one */
        knut_error_clear(err);
        *ok = 0;
        return KNUT_OK;
    }
    if (st == KNUT_OK && !b->w)
        st = knut_graph_falkor_bulk_new(&b->w, b->s->falkor, b->tmp.data, err);
    if (st == KNUT_OK)
        st = bulk_table_send(b, t, bt, ok, err);
    knut_sync__round_drop_batch(b->s);
    return st != KNUT_OK ? knut_error_prefix(err, "table '%s': ", t->name) : st;
}

/* Records the bulk tables' files done and logs them, once the graph is in. */
static knut_status commit_tables(bulk_run *b, knut_sync_round_stats *out, knut_error *err)
{
    knut_sync *s = b->s;
    knut_status st = KNUT_OK;
    for (size_t k = 0; st == KNUT_OK && k < b->n_tables; k++) {
        bulk_table *bt = &b->tables[k];
        if (bt->sg.n_good)
            st = knut_sync__ledger_record(&s->ledger, bt->sg.done, bt->sg.n_good, err);
        if (st != KNUT_OK)
            break;
        bt->ts.files += (int64_t)bt->sg.n_good;
        bt->ts.rows += bt->sg.rows_total;
        bt->ts.sink.rows += bt->sg.rows_total;
        if (bt->sg.n_good)
            bt->ts.path = "bulk";
        s->order.state[bt->i] = SYNC_TABLE_RAN;
        knut_sync__round_table_done(s, bt->i, &bt->ts, bt->dur_us, KNUT_OK, NULL, out);
    }
    return st;
}

static void drop_sets(bulk_run *b)
{
    knut_duck_conn *c = NULL;
    if (b->n_sets == 0 || knut_sync__stage_conn(&c, b->s->stage, NULL) != KNUT_OK)
        return;
    for (size_t i = 0; i < b->n_sets; i++) {
        char q[64];
        snprintf(q, sizeof q, "DROP TABLE IF EXISTS _knut_bv%zu", i);
        knut_duck_exec(c, q, NULL);
    }
    knut_duck_conn_close(c);
}

knut_status knut_sync__bulk_round(knut_sync *s, knut_sync_round_stats *out, size_t *next,
                                  int64_t *failed, knut_error *err)
{
    *next = 0;
    if (!round_wanted(s, err))
        return KNUT_OK;
    bulk_run b = {.s = s, .tmp = KNUT_BUF_INIT};
    knut_error berr = KNUT_ERROR_INIT;
    knut_buf_printf(&b.tmp, "%s" BULK_SUFFIX, s->graph);
    b.tables = calloc(s->cfg->n_tables, sizeof *b.tables);
    knut_status st = b.tables ? knut_buf_check(&b.tmp, &berr)
                              : knut_error_set(&berr, KNUT_ENOMEM, "out of memory");
    if (st == KNUT_OK)
        tmp_delete(&b); /* a crashed bulk's leftovers: never renamed, never recorded */
    size_t k = 0;
    for (; st == KNUT_OK && k < s->cfg->n_tables; k++) {
        size_t i = s->order.idx[k];
        const knut_sync_table *t = &s->cfg->tables[i];
        if (!table_ok(&b, t))
            break;
        bulk_table *bt = &b.tables[b.n_tables];
        int64_t t1 = knut_clock_mono_ns();
        int ok = 1;
        bt->i = i;
        st = table_turn(&b, t, bt, &ok, &berr);
        bt->dur_us = (knut_clock_mono_ns() - t1) / 1000;
        if (st != KNUT_OK || !ok) {
            failed[i] += bt->ts.failed; /* recorded: counted where it goes MERGE */
            knut_sync__files_reset(&bt->files);
            memset(bt, 0, sizeof *bt);
            break;
        }
        b.n_tables++;
    }
    int begun = 0, moved = 0;
    if (st == KNUT_OK && b.w)
        st = knut_graph_falkor_bulk_finish(b.w, &begun, &berr);
    if (st == KNUT_OK && begun)
        st = make_indexes(&b, &berr);
    if (st == KNUT_OK && begun) {
        st = tmp_rename(&b, &moved, &berr);
        if (st == KNUT_OK && !moved)
            st = knut_error_set(&berr, KNUT_ECANCELLED, "graph '%s' appeared meanwhile",
                                s->graph);
    }
    if (st == KNUT_OK) {
        /* in the graph: the files may be recorded now */
        st = commit_tables(&b, out, err);
        *next = k;
        s->no_bulk |= begun; /* the graph exists now */
        if (begun)
            KNUT_LOG(KNUT_LOG_INFO, SYNC_LOG, "round %lld: %zu table(s) built graph '%s' with "
                     "GRAPH.BULK; the rest of the round goes MERGE", (long long)s->round,
                     b.n_tables, s->graph);
    } else {
        /* nothing recorded done: the whole round again, the MERGE way */
        for (size_t j = 0; j < b.n_tables; j++)
            failed[b.tables[j].i] += b.tables[j].ts.failed;
        KNUT_LOG(KNUT_LOG_WARN, SYNC_LOG, "round %lld: GRAPH.BULK into graph '%s' failed (%s); "
                 "the round goes the MERGE path", (long long)s->round, s->graph, berr.message);
        knut_graph_falkor_bulk_free(b.w);
        b.w = NULL;
        tmp_delete(&b);
        s->no_bulk = 1;
        st = KNUT_OK;
    }
    knut_graph_falkor_bulk_free(b.w);
    drop_sets(&b);
    for (size_t j = 0; b.tables && j < s->cfg->n_tables; j++)
        knut_sync__files_reset(&b.tables[j].files);
    free(b.tables);
    knut_buf_reset(&b.tmp);
    return st;
}
