/*
 * Internals of the whole-graph loader shared by its files: the plan (one
 * entry per vertex type and per edge type, with its row count and the
 * adjacency list edges are read from), the counting stream wrapper that
 * renames the GraphAr index column and reports progress, and the
 * GRAPH.BULK path (load_bulk.c).
 */
#ifndef KNUT_GRAPH_LOAD_INT_H
#define KNUT_GRAPH_LOAD_INT_H

#include "knut/graph.h"
#include "knut/graphar.h"

/* The property every loaded vertex keeps: its GraphAr vertex index. Edges
 * find their endpoints by (type, _gar_id). */
#define KNUT_LOAD_GAR_ID "_gar_id"
#define KNUT_LOAD_BATCH_ROWS_DEFAULT 5000

typedef struct load_item {
    knut_graph_load_kind kind;
    const knut_graphar_vertex_info *vi;
    const knut_graphar_edge_info *ei;
    knut_graphar_adj_list_type adj; /* edges: the list read */
    const char *key;                /* vertices: the merge key property */
    char name[512];                 /* vertex type or "src,edge,dst" */
    int64_t total;                  /* rows (count files) */
} load_item;

typedef struct load_ctx {
    const knut_graph_load_options *opts;
    knut_graphar_reader *reader;
    load_item *items;
    size_t n_items;
    int64_t total;   /* rows over all items */
    int64_t rows;    /* rows read so far */
    int64_t t0;      /* knut_clock_mono_ns at start */
    const char *method;
} load_ctx;

/* Reports progress for item it (set_rows rows read in it so far). */
void knut_graph__load_report(load_ctx *c, const load_item *it, int64_t set_rows, int done);

/*
 * The item's stream: reader rows with `_graphArVertexIndex` renamed
 * `_gar_id` (vertices), each batch counted into c and reported. *out is
 * released on failure.
 */
knut_status knut_graph__load_stream(load_ctx *c, const load_item *it,
                                    struct ArrowArrayStream *out, knut_error *err);

/*
 * Adds the GraphAr labels of vertex item it (vi->labels, per-vertex boolean
 * columns) to the vertices already applied through sink: one vertex set per
 * label, labels [type, label], the merge keys of the rows whose column is
 * true, no properties (src/graph/load_labels.c). No-op for edge items.
 */
knut_status knut_graph__load_labels(load_ctx *c, const load_item *it, knut_graph_sink *sink,
                                    knut_error *err);

/* 1 if every vertex type and edge type can be sent with GRAPH.BULK. */
int knut_graph__load_bulk_possible(const load_ctx *c);

/*
 * Builds a fresh graph with GRAPH.BULK (BEGIN on the first call): every
 * vertex type in plan order (node ids 0..N-1 in send order, so a vertex's
 * id is its type's offset plus its GraphAr index), then every edge type.
 * Checks the node and edge counts afterwards. stats gets the rows sent.
 */
knut_status knut_graph__load_bulk(load_ctx *c, knut_graph_falkor *g, const char *graph,
                                  knut_graph_load_stats *stats, knut_error *err);

#endif
