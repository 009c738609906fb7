/*
 * knut graph, loading: whole GraphAr graphs into FalkorDB or the embedded
 * store. Part of knut/graph.h.
 */
#ifndef KNUT_GRAPH_LOAD_H
#define KNUT_GRAPH_LOAD_H

#include <stdint.h>

#include "knut/core.h"
#include "knut/graph_falkor.h"
#include "knut/graph_store.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- loading whole graphs (src/graph/load*.c) ---- */

/*
 * Loads every vertex and edge of a GraphAr graph into FalkorDB or the
 * embedded store (docs/graph.md, "Loading whole graphs"). Each vertex type
 * becomes a vertex set (label = the type; key = its primary property, or
 * `_gar_id` when it has none) whose vertices also keep their GraphAr
 * vertex index as the property `_gar_id`; each edge type becomes an edge
 * set (one adjacency list read) whose endpoints are found by (endpoint
 * type, `_gar_id`), so edges stream straight from the chunk files without
 * an index-to-key lookup table. Memory is one Arrow batch plus one round
 * of queries (or one bulk call) whatever the graph size.
 */
typedef enum knut_graph_load_kind {
    KNUT_GRAPH_LOAD_VERTICES = 0,
    KNUT_GRAPH_LOAD_EDGES
} knut_graph_load_kind;

/* What the progress callback gets: after every Arrow batch applied, and once
 * more with done = 1 when a set is finished. */
typedef struct knut_graph_load_progress {
    knut_graph_load_kind kind;
    const char *set;     /* vertex type, or "src_type,edge_type,dst_type" */
    int64_t set_rows;    /* rows of this set read so far */
    int64_t set_total;   /* rows of this set (from the count files) */
    int64_t rows;        /* rows of all sets read so far */
    int64_t total;       /* rows of all sets */
    int64_t elapsed_ns;  /* since the load started */
    int done;            /* 1: the set is fully applied */
    const char *method;  /* "bulk" or "unwind" (FalkorDB), "embedded" */
} knut_graph_load_progress;

typedef void (*knut_graph_load_progress_fn)(const knut_graph_load_progress *p, void *ctx);

#define KNUT_GRAPH_LOAD_OPTIONS_VERSION 1
typedef struct knut_graph_load_options {
    int version;             /* KNUT_GRAPH_LOAD_OPTIONS_VERSION */
    int64_t batch_rows;      /* rows per GRAPH.QUERY / rows buffered per bulk blob; 0: 5000 */
    int no_bulk;             /* 1: never GRAPH.BULK, always UNWIND MERGE */
    knut_graph_load_progress_fn progress; /* may be NULL */
    void *progress_ctx;
} knut_graph_load_options;
#define KNUT_GRAPH_LOAD_OPTIONS_INIT {.version = KNUT_GRAPH_LOAD_OPTIONS_VERSION}

typedef struct knut_graph_load_stats {
    int64_t vertices;    /* vertex rows applied */
    int64_t edges;       /* edge rows applied (FalkorDB UNWIND: edges MERGEd) */
    int bulk;            /* 1: GRAPH.BULK was used */
    double seconds;
} knut_graph_load_stats;

struct knut_graphar_graph_info;

/*
 * Into FalkorDB graph `graph` through g. When the graph key does not exist
 * and no_bulk is 0, the graph is built with GRAPH.BULK (see load_bulk.c)
 * and its node and edge counts are checked afterwards; otherwise (or when
 * the graph has types bulk cannot hold) vertices and edges are MERGEd in
 * UNWIND batches, so loading twice gives the same graph. g, graph and gi
 * are borrowed for the call; opts may be NULL. Errors name the set and
 * the peer: the GraphAr readers' (KNUT_ENOTFOUND, KNUT_EIO, ...), the
 * client's (KNUT_EIO, KNUT_EPEER), KNUT_EINVAL (options, rows the model
 * refuses, rows read that differ from the count files), and KNUT_EIO when
 * the graph GRAPH.BULK built has other counts than were sent; stats
 * (may be NULL) count what was acknowledged, also after an error.
 */
KNUT_EXTERN knut_status knut_graph_load_graphar_falkor(knut_graph_falkor *g, const char *graph,
                                                       const struct knut_graphar_graph_info *gi,
                                                       const knut_graph_load_options *opts,
                                                       knut_graph_load_stats *stats,
                                                       knut_error *err);

/* Into the embedded store, one transaction per set (MERGE semantics): a
 * failure leaves the sets before it applied and its own rolled back.
 * Arguments and errors as above, the store's instead of the client's. */
KNUT_EXTERN knut_status knut_graph_load_graphar_store(knut_graph_store *store,
                                                      const struct knut_graphar_graph_info *gi,
                                                      const knut_graph_load_options *opts,
                                                      knut_graph_load_stats *stats,
                                                      knut_error *err);

#ifdef __cplusplus
}
#endif

#endif /* KNUT_GRAPH_LOAD_H */
