/*
 * The viewer graph: nodes and edges added by the caller or built from a
 * resolved pipeline (one node per flow, an edge per dataset a flow
 * reads that another flow writes).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "viewer_int.h"

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

knut_status knut_viewer_graph_new(knut_viewer_graph **out, const char *title, knut_error *err)
{
    KNUT_ASSERT_ARG(err, out != NULL);
    *out = NULL;
    knut_viewer__impl *g = calloc(1, sizeof *g);
    if (!g)
        return knut_error_set(err, KNUT_ENOMEM, "viewer graph: out of memory");
    if (title && !(g->pub.title = strdup(title))) {
        free(g);
        return knut_error_set(err, KNUT_ENOMEM, "viewer graph: out of memory");
    }
    *out = &g->pub;
    return KNUT_OK;
}

void knut_viewer_graph_free(knut_viewer_graph *pub)
{
    if (!pub)
        return;
    knut_viewer__impl *g = (knut_viewer__impl *)pub;
    for (size_t i = 0; i < pub->nnodes; i++) {
        knut_viewer_node *n = &pub->nodes[i];
        free((char *)n->name);
        free((char *)n->kind);
        free((char *)n->flow_kind);
        free((char *)n->target);
    }
    for (size_t i = 0; i < pub->nedges; i++) {
        free((char *)pub->edges[i].label);
        free(pub->edges[i].points);
    }
    free(pub->nodes);
    free(pub->edges);
    free((char *)pub->title);
    free(g->ehash);
    free(g);
}

size_t knut_viewer_graph_find(const knut_viewer_graph *g, const char *name)
{
    for (size_t i = 0; g && name && i < g->nnodes; i++)
        if (strcmp(g->nodes[i].name, name) == 0)
            return i;
    return (size_t)-1;
}

knut_status knut_viewer_graph_add_node(knut_viewer_graph *pub, const char *name, const char *kind,
                                       const char *flow_kind, const char *target, size_t *id,
                                       knut_error *err)
{
    KNUT_ASSERT_ARG(err, pub != NULL);
    knut_viewer__impl *g = (knut_viewer__impl *)pub;
    if (!name || !*name)
        return knut_error_set(err, KNUT_EINVAL, "viewer graph: a node needs a name");
    if (pub->nnodes >= KNUT_VIEWER_MAX_NODES)
        return knut_error_set(err, KNUT_ETOOBIG, "viewer graph: more than %d nodes",
                              KNUT_VIEWER_MAX_NODES);
    /* Linear, but bounded by the cap and only paid while building. */
    if (knut_viewer_graph_find(pub, name) != (size_t)-1)
        return knut_error_set(err, KNUT_EINVAL, "viewer graph: node '%s' added twice", name);
    if (pub->nnodes == g->cap_nodes) {
        size_t cap = g->cap_nodes ? g->cap_nodes * 2 : 16;
        knut_viewer_node *n = realloc(pub->nodes, cap * sizeof *n);
        if (!n)
            return knut_error_set(err, KNUT_ENOMEM, "viewer graph: out of memory");
        pub->nodes = n;
        g->cap_nodes = cap;
    }
    knut_viewer_node *n = &pub->nodes[pub->nnodes];
    memset(n, 0, sizeof *n);
    n->name = strdup(name);
    n->kind = dup_or_null(kind);
    n->flow_kind = dup_or_null(flow_kind);
    n->target = dup_or_null(target);
    if (!n->name || (kind && !n->kind) || (flow_kind && !n->flow_kind) ||
        (target && !n->target)) {
        free((char *)n->name);
        free((char *)n->kind);
        free((char *)n->flow_kind);
        free((char *)n->target);
        return knut_error_set(err, KNUT_ENOMEM, "viewer graph: out of memory");
    }
    if (id)
        *id = pub->nnodes;
    pub->nnodes++;
    pub->laid_out = 0;
    return KNUT_OK;
}

static size_t pair_hash(size_t from, size_t to, size_t cap)
{
    uint64_t h = ((uint64_t)from * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)to + 0x632BE59BD9B4E019ull);
    h ^= h >> 29;
    return (size_t)(h & (cap - 1));
}

/* Index + 1 of the edge from -> to, or 0; grows the set first when it
 * is half full (the caller is about to add one). */
static knut_status edge_slot(knut_viewer__impl *g, size_t from, size_t to, size_t **slot)
{
    if ((g->pub.nedges + 1) * 2 > g->ehash_cap) {
        size_t cap = g->ehash_cap ? g->ehash_cap * 2 : 64;
        size_t *h = calloc(cap, sizeof *h);
        if (!h)
            return KNUT_ENOMEM;
        for (size_t i = 0; i < g->pub.nedges; i++) {
            size_t k = pair_hash(g->pub.edges[i].from, g->pub.edges[i].to, cap);
            while (h[k])
                k = (k + 1) & (cap - 1);
            h[k] = i + 1;
        }
        free(g->ehash);
        g->ehash = h;
        g->ehash_cap = cap;
    }
    size_t k = pair_hash(from, to, g->ehash_cap);
    while (g->ehash[k]) {
        const knut_viewer_edge *e = &g->pub.edges[g->ehash[k] - 1];
        if (e->from == from && e->to == to)
            break;
        k = (k + 1) & (g->ehash_cap - 1);
    }
    *slot = &g->ehash[k];
    return KNUT_OK;
}

knut_status knut_viewer_graph_add_edge(knut_viewer_graph *pub, size_t from, size_t to,
                                       const char *label, knut_error *err)
{
    KNUT_ASSERT_ARG(err, pub != NULL);
    knut_viewer__impl *g = (knut_viewer__impl *)pub;
    if (from >= pub->nnodes || to >= pub->nnodes)
        return knut_error_set(err, KNUT_EINVAL, "viewer graph: edge %zu -> %zu: no such node",
                              from, to);
    if (from == to)
        return knut_error_set(err, KNUT_EINVAL, "viewer graph: edge from '%s' to itself",
                              pub->nodes[from].name);
    size_t *slot;
    if (edge_slot(g, from, to, &slot) != KNUT_OK)
        return knut_error_set(err, KNUT_ENOMEM, "viewer graph: out of memory");
    if (*slot)
        return KNUT_OK;
    if (pub->nedges >= KNUT_VIEWER_MAX_EDGES)
        return knut_error_set(err, KNUT_ETOOBIG, "viewer graph: more than %d edges",
                              KNUT_VIEWER_MAX_EDGES);
    if (pub->nedges == g->cap_edges) {
        size_t cap = g->cap_edges ? g->cap_edges * 2 : 16;
        knut_viewer_edge *e = realloc(pub->edges, cap * sizeof *e);
        if (!e)
            return knut_error_set(err, KNUT_ENOMEM, "viewer graph: out of memory");
        pub->edges = e;
        g->cap_edges = cap;
    }
    knut_viewer_edge *e = &pub->edges[pub->nedges];
    memset(e, 0, sizeof *e);
    e->from = from;
    e->to = to;
    if (!(e->label = strdup(label ? label : "batch")))
        return knut_error_set(err, KNUT_ENOMEM, "viewer graph: out of memory");
    *slot = ++pub->nedges;
    pub->laid_out = 0;
    return KNUT_OK;
}

/* How flow f reads dataset r: "cdc" for the source of its changes. */
static const char *read_label(const knut_pipeline_flow *f, const knut_pipeline_read *r)
{
    if (f->kind == KNUT_PIPELINE_FLOW_CDC && f->cdc && f->cdc->source &&
        strcmp(f->cdc->source, r->name) == 0)
        return "cdc";
    return r->streaming ? "streaming" : "batch";
}

knut_status knut_viewer_graph_from_pipeline(knut_viewer_graph **out, const knut_pipeline *p,
                                            knut_error *err)
{
    KNUT_ASSERT_ARG(err, out != NULL && p != NULL);
    *out = NULL;
    if (!p->resolved)
        return knut_error_set(err, KNUT_EINVAL, "pipeline %s: not resolved", p->name);
    knut_viewer_graph *g = NULL;
    knut_status st = knut_viewer_graph_new(&g, p->name, err);
    if (st != KNUT_OK)
        return st;
    /* Nodes in run order: node i is flow p->order[i]. */
    for (size_t i = 0; i < p->nflows && st == KNUT_OK; i++) {
        const knut_pipeline_flow *f = &p->flows[p->order[i]];
        const knut_pipeline_dataset *d = knut_pipeline_dataset_find(p, f->target);
        size_t id;
        st = knut_viewer_graph_add_node(g, f->name, d ? knut_pipeline_dataset_kind_name(d->kind)
                                                      : NULL,
                                        knut_pipeline_flow_kind_name(f->kind), f->target, &id,
                                        err);
        if (st == KNUT_OK)
            g->nodes[id].nexpectations = f->nexpectations;
    }
    for (size_t i = 0; i < p->nflows && st == KNUT_OK; i++) {
        const knut_pipeline_flow *f = &p->flows[p->order[i]];
        for (size_t k = 0; k < f->nreads && st == KNUT_OK; k++) {
            const knut_pipeline_read *r = &f->reads[k];
            if (!r->internal)
                continue;
            /* Writers of r come before f in run order: only they are
             * edges, so the graph is acyclic as the run order is. */
            for (size_t j = 0; j < i && st == KNUT_OK; j++)
                if (strcmp(p->flows[p->order[j]].target, r->name) == 0)
                    st = knut_viewer_graph_add_edge(g, j, i, read_label(f, r), err);
        }
    }
    if (st == KNUT_OK)
        st = knut_viewer_layout(g, err);
    if (st != KNUT_OK) {
        knut_viewer_graph_free(g);
        return st;
    }
    *out = g;
    return KNUT_OK;
}
