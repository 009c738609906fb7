/*
 * Loading a whole GraphAr graph into a sink (FalkorDB or the embedded
 * store): the plan (one item per vertex type, then one per edge type), the
 * counting stream wrapper, and the UNWIND path, which applies one
 * mutation per item so that only one reader stream is open at a time (the
 * reader's rule) and each set gets its own progress and transaction.
 *
 * Edges are joined to their endpoints by (type, _gar_id): every vertex
 * keeps its GraphAr index as a property, so an edge row's src/dst indices
 * are already the lookup keys and no index-to-key table (which would grow
 * with the graph) is ever built. The sink creates the (type, _gar_id)
 * range indexes the MATCH clauses need.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load_int.h"

/* ---- the counting, renaming stream wrapper ---- */

typedef struct wrap_priv {
    struct ArrowArrayStream inner;
    struct ArrowSchema schema; /* renamed copy, made at the first get_schema */
    load_ctx *c;
    const load_item *it;
    int64_t rows;
    int rename;
} wrap_priv;

static int wrap_get_schema(struct ArrowArrayStream *s, struct ArrowSchema *out)
{
    wrap_priv *p = s->private_data;
    if (!p->schema.release) {
        struct ArrowSchema tmp;
        int rc = p->inner.get_schema(&p->inner, &tmp);
        if (rc != 0)
            return rc;
        knut_status st = knut_arrow_schema_deep_copy(&p->schema, &tmp, NULL);
        tmp.release(&tmp);
        if (st != KNUT_OK)
            return 12; /* ENOMEM */
        if (p->rename && p->schema.n_children > 0 &&
            knut_arrow_schema_set_name(p->schema.children[0], KNUT_LOAD_GAR_ID, NULL) != KNUT_OK)
            return 12;
    }
    return knut_arrow_schema_deep_copy(out, &p->schema, NULL) == KNUT_OK ? 0 : 12;
}

static int wrap_get_next(struct ArrowArrayStream *s, struct ArrowArray *out)
{
    wrap_priv *p = s->private_data;
    int rc = p->inner.get_next(&p->inner, out);
    if (rc == 0 && out->release) {
        p->rows += out->length;
        p->c->rows += out->length;
        knut_graph__load_report(p->c, p->it, p->rows, 0);
    }
    return rc;
}

static const char *wrap_get_last_error(struct ArrowArrayStream *s)
{
    wrap_priv *p = s->private_data;
    return p->inner.get_last_error ? p->inner.get_last_error(&p->inner) : NULL;
}

static void wrap_release(struct ArrowArrayStream *s)
{
    wrap_priv *p = s->private_data;
    if (p) {
        if (p->inner.release)
            p->inner.release(&p->inner);
        if (p->schema.release)
            p->schema.release(&p->schema);
        free(p);
    }
    s->release = NULL;
}

knut_status knut_graph__load_stream(load_ctx *c, const load_item *it,
                                    struct ArrowArrayStream *out, knut_error *err)
{
    memset(out, 0, sizeof *out);
    wrap_priv *p = calloc(1, sizeof *p);
    if (!p)
        return knut_error_set(err, KNUT_ENOMEM, "load: out of memory");
    knut_status st;
    if (it->kind == KNUT_GRAPH_LOAD_VERTICES)
        st = knut_graphar_reader_vertices(c->reader, it->vi, &p->inner, err);
    else
        st = knut_graphar_reader_edges(c->reader, it->ei, it->adj, &p->inner, err);
    if (st != KNUT_OK) {
        free(p);
        return st;
    }
    p->c = c;
    p->it = it;
    p->rename = it->kind == KNUT_GRAPH_LOAD_VERTICES;
    out->get_schema = wrap_get_schema;
    out->get_next = wrap_get_next;
    out->get_last_error = wrap_get_last_error;
    out->release = wrap_release;
    out->private_data = p;
    return KNUT_OK;
}

void knut_graph__load_report(load_ctx *c, const load_item *it, int64_t set_rows, int done)
{
    if (!c->opts || !c->opts->progress)
        return;
    knut_graph_load_progress p = {it->kind, it->name, set_rows, it->total, c->rows, c->total,
                                  knut_clock_mono_ns() - c->t0, done, c->method};
    c->opts->progress(&p, c->opts->progress_ctx);
}

/* ---- the plan ---- */

static const char *primary_key(const knut_graphar_vertex_info *vi)
{
    for (size_t g = 0; g < vi->n_groups; g++)
        for (size_t i = 0; i < vi->groups[g].n_props; i++)
            if (vi->groups[g].props[i].is_primary)
                return vi->groups[g].props[i].name;
    return NULL;
}

/* The adjacency list edges are read from: any holds every edge once; an
 * ordered-by-source one reads in the most local order. */
static knut_graphar_adj_list_type pick_adj(const knut_graphar_edge_info *ei)
{
    for (size_t i = 0; i < ei->n_adj_lists; i++)
        if (ei->adj_lists[i].type == KNUT_GRAPHAR_ORDERED_BY_SOURCE)
            return ei->adj_lists[i].type;
    return ei->adj_lists[0].type;
}

static void ctx_reset(load_ctx *c)
{
    free(c->items);
    knut_graphar_reader_free(c->reader);
    memset(c, 0, sizeof *c);
}

static knut_status ctx_init(load_ctx *c, const knut_graphar_graph_info *gi,
                            const knut_graph_load_options *opts, knut_error *err)
{
    memset(c, 0, sizeof *c);
    c->opts = opts;
    c->t0 = knut_clock_mono_ns();
    knut_status st = knut_graphar_reader_new(&c->reader, NULL, knut_graphar_graph_data_dir(gi),
                                             NULL, err);
    if (st != KNUT_OK)
        return st;
    c->items = calloc(gi->n_vertices + gi->n_edges + 1, sizeof *c->items);
    if (!c->items)
        return knut_error_set(err, KNUT_ENOMEM, "load: out of memory");
    for (size_t i = 0; i < gi->n_vertices && st == KNUT_OK; i++) {
        load_item *it = &c->items[c->n_items++];
        it->kind = KNUT_GRAPH_LOAD_VERTICES;
        it->vi = gi->vertices[i];
        it->key = primary_key(it->vi);
        snprintf(it->name, sizeof it->name, "%s", it->vi->type);
        st = knut_graphar_reader_vertex_count(c->reader, it->vi, &it->total, err);
    }
    for (size_t i = 0; i < gi->n_edges && st == KNUT_OK; i++) {
        load_item *it = &c->items[c->n_items++];
        it->kind = KNUT_GRAPH_LOAD_EDGES;
        it->ei = gi->edges[i];
        snprintf(it->name, sizeof it->name, "%s,%s,%s", it->ei->src_type, it->ei->edge_type,
                 it->ei->dst_type);
        if (it->ei->n_adj_lists == 0)
            return knut_error_set(err, KNUT_EINVAL, "load: edge type %s has no adjacency list",
                                  it->name);
        it->adj = pick_adj(it->ei);
        st = knut_graphar_reader_edge_count(c->reader, it->ei, it->adj, KNUT_GRAPHAR_ALL,
                                            &it->total, err);
    }
    for (size_t i = 0; i < c->n_items; i++)
        c->total += c->items[i].total;
    return st;
}

/* ---- the UNWIND path: one mutation per item through the sink ---- */

static knut_status add_vertex_set(load_ctx *c, const load_item *it, knut_graph_mutation *m,
                                  knut_error *err)
{
    const knut_graphar_vertex_info *vi = it->vi;
    size_t n = 1;
    for (size_t g = 0; g < vi->n_groups; g++)
        n += vi->groups[g].n_props;
    const char **props = calloc(n, sizeof *props);
    if (!props)
        return knut_error_set(err, KNUT_ENOMEM, "load: out of memory");
    size_t np = 0;
    if (it->key)
        props[np++] = KNUT_LOAD_GAR_ID;
    for (size_t g = 0; g < vi->n_groups; g++)
        for (size_t i = 0; i < vi->groups[g].n_props; i++)
            if (!it->key || strcmp(vi->groups[g].props[i].name, it->key) != 0)
                props[np++] = vi->groups[g].props[i].name;
    const char *labels[] = {vi->type};
    const char *keys[] = {it->key ? it->key : KNUT_LOAD_GAR_ID};
    knut_graph_vertex_set vs = KNUT_GRAPH_VERTEX_SET_INIT;
    vs.name = vi->type;
    vs.labels = labels;
    vs.n_labels = 1;
    vs.keys = keys;
    vs.n_keys = 1;
    vs.props = props;
    vs.n_props = np;
    knut_status st = knut_graph__load_stream(c, it, &vs.stream, err);
    if (st == KNUT_OK)
        st = knut_graph_mutation_add_vertex_set(m, &vs, err);
    free(props);
    return st;
}

static knut_status add_edge_set(load_ctx *c, const load_item *it, knut_graph_mutation *m,
                                knut_error *err)
{
    const knut_graphar_edge_info *ei = it->ei;
    static const char *const gar_id[] = {KNUT_LOAD_GAR_ID};
    static const char *const src_col[] = {"_graphArSrcIndex"};
    static const char *const dst_col[] = {"_graphArDstIndex"};
    knut_graph_edge_set es = KNUT_GRAPH_EDGE_SET_INIT;
    es.name = it->name;
    es.type = ei->edge_type;
    es.src = (knut_graph_endpoint){ei->src_type, gar_id, src_col, 1};
    es.dst = (knut_graph_endpoint){ei->dst_type, gar_id, dst_col, 1};
    es.all_props = 1;
    knut_status st = knut_graph__load_stream(c, it, &es.stream, err);
    if (st == KNUT_OK)
        st = knut_graph_mutation_add_edge_set(m, &es, err);
    return st;
}

static knut_status load_sink(load_ctx *c, knut_graph_sink *sink, knut_graph_load_stats *stats,
                             knut_error *err)
{
    knut_status st = KNUT_OK;
    for (size_t i = 0; i < c->n_items && st == KNUT_OK; i++) {
        load_item *it = &c->items[i];
        knut_graph_mutation *m = NULL;
        knut_graph_sink_stats ss = {0};
        int64_t before = c->rows;
        st = knut_graph_mutation_new(&m, err);
        if (st == KNUT_OK)
            st = it->kind == KNUT_GRAPH_LOAD_VERTICES ? add_vertex_set(c, it, m, err)
                                                      : add_edge_set(c, it, m, err);
        if (st == KNUT_OK)
            st = knut_graph_sink_apply(sink, m, NULL, &ss, err);
        knut_graph_mutation_free(m);
        if (stats) {
            stats->vertices += ss.vertices_written;
            stats->edges += ss.edges_written;
        }
        if (st == KNUT_OK)
            st = knut_graph__load_labels(c, it, sink, err);
        if (st == KNUT_OK)
            knut_graph__load_report(c, it, c->rows - before, 1);
        else
            knut_error_prefix(err, "load %s %s: ",
                              it->kind == KNUT_GRAPH_LOAD_VERTICES ? "vertex type" : "edge type",
                              it->name);
    }
    return st;
}

static knut_status bulk_labels(load_ctx *c, knut_graph_falkor *g, const char *graph,
                               knut_error *err)
{
    knut_graph_sink *sink = NULL;
    knut_status st = KNUT_OK;
    for (size_t i = 0; i < c->n_items && st == KNUT_OK; i++) {
        const load_item *it = &c->items[i];
        if (it->kind != KNUT_GRAPH_LOAD_VERTICES || it->vi->n_labels == 0)
            continue;
        if (!sink) {
            knut_graph_falkor_sink_options so = KNUT_GRAPH_FALKOR_SINK_OPTIONS_INIT;
            so.batch_rows = c->opts->batch_rows;
            st = knut_graph_falkor_sink_new(&sink, g, graph, &so, err);
        }
        if (st == KNUT_OK && (st = knut_graph__load_labels(c, it, sink, err)) != KNUT_OK)
            knut_error_prefix(err, "load vertex type %s: ", it->name);
    }
    knut_graph_sink_close(sink);
    return st;
}

/* 1 when FalkorDB has no key `graph` (RO_QUERY refuses an empty key). */
static knut_status graph_missing(knut_graph_falkor *g, const char *graph, int *missing,
                                 knut_error *err)
{
    knut_graph_falkor_result r;
    knut_error e = KNUT_ERROR_INIT;
    knut_status st = knut_graph_falkor_query(g, graph, "RETURN 1", KNUT_GRAPH_FALKOR_READ_ONLY,
                                             &r, &e);
    knut_graph_falkor_result_reset(&r);
    *missing = 0;
    if (st == KNUT_OK)
        return KNUT_OK;
    if (st == KNUT_EPEER && e.detail == KNUT_GRAPH_FALKOR_ERR_EMPTY_KEY) {
        *missing = 1;
        return KNUT_OK;
    }
    if (err)
        *err = e;
    return st;
}

knut_status knut_graph_load_graphar_falkor(knut_graph_falkor *g, const char *graph,
                                           const knut_graphar_graph_info *gi,
                                           const knut_graph_load_options *opts,
                                           knut_graph_load_stats *stats, knut_error *err)
{
    KNUT_ASSERT_ARG(err, g && graph && gi);
    KNUT_CHECK_VERSION(opts, KNUT_GRAPH_LOAD_OPTIONS_VERSION, err);
    knut_graph_load_options defaults = KNUT_GRAPH_LOAD_OPTIONS_INIT;
    if (!opts)
        opts = &defaults;
    knut_graph_load_stats local = {0};
    if (!stats)
        stats = &local;
    memset(stats, 0, sizeof *stats);
    load_ctx c;
    knut_graph_sink *sink = NULL;
    int missing = 0;
    knut_status st = ctx_init(&c, gi, opts, err);
    int64_t t0 = c.t0;
    if (st == KNUT_OK && !opts->no_bulk)
        st = graph_missing(g, graph, &missing, err);
    if (st != KNUT_OK)
        goto cleanup;
    if (missing && knut_graph__load_bulk_possible(&c)) {
        c.method = "bulk";
        stats->bulk = 1;
        st = knut_graph__load_bulk(&c, g, graph, stats, err);
        /* GRAPH.BULK gives each node one label; the GraphAr labels follow
         * as UNWIND sets (node ids must stay offset + index, so vertices
         * cannot be split into blobs by label combination). */
        if (st == KNUT_OK)
            st = bulk_labels(&c, g, graph, err);
        goto cleanup;
    }
    c.method = "unwind";
    knut_graph_falkor_sink_options so = KNUT_GRAPH_FALKOR_SINK_OPTIONS_INIT;
    so.batch_rows = opts->batch_rows;
    st = knut_graph_falkor_sink_new(&sink, g, graph, &so, err);
    if (st == KNUT_OK)
        st = load_sink(&c, sink, stats, err);
cleanup:
    knut_graph_sink_close(sink);
    ctx_reset(&c);
    stats->seconds = (double)(knut_clock_mono_ns() - t0) / 1e9;
    return st;
}

knut_status knut_graph_load_graphar_store(knut_graph_store *store,
                                          const knut_graphar_graph_info *gi,
                                          const knut_graph_load_options *opts,
                                          knut_graph_load_stats *stats, knut_error *err)
{
    KNUT_ASSERT_ARG(err, store && gi);
    KNUT_CHECK_VERSION(opts, KNUT_GRAPH_LOAD_OPTIONS_VERSION, err);
    knut_graph_load_options defaults = KNUT_GRAPH_LOAD_OPTIONS_INIT;
    if (!opts)
        opts = &defaults;
    knut_graph_load_stats local = {0};
    if (!stats)
        stats = &local;
    memset(stats, 0, sizeof *stats);
    load_ctx c;
    knut_status st = ctx_init(&c, gi, opts, err);
    int64_t t0 = c.t0;
    c.method = "embedded";
    if (st == KNUT_OK)
        st = load_sink(&c, knut_graph_store_sink(store), stats, err);
    ctx_reset(&c);
    stats->seconds = (double)(knut_clock_mono_ns() - t0) / 1e9;
    return st;
}
