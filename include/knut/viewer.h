/*
 * knut viewer: the pipeline DAG laid out for people to look at.
 *
 * A viewer graph holds nodes (a pipeline's flows) and directed edges (a
 * flow reading what another flow writes, labelled by how it reads:
 * "batch", "streaming" or "cdc"). knut_viewer_layout places it left to
 * right in the layered (Sugiyama) style: each node's layer is its longest
 * path from a source, edges that span layers pass through invisible
 * points of the layers between, and the order inside each layer comes
 * from barycenter sweeps that keep the order with the fewest crossings.
 * Every tie is broken by node name (digit runs compared as numbers), so
 * the same graph always gets the same picture (frames of a live view
 * never jump). Every edge route
 * points rightward: its x grows strictly from the source's right side to
 * the target's left side.
 *
 * The structs are plain data owned by their knut_viewer_graph; strings
 * are copied in and live until knut_viewer_graph_free.
 */
#ifndef KNUT_VIEWER_H
#define KNUT_VIEWER_H

#include <stddef.h>

#include "knut/core.h"
#include "knut/pipeline.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Caps on what one graph may hold (a layout is quadratic at worst in
 * the points it routes through). */
#define KNUT_VIEWER_MAX_NODES 20000
#define KNUT_VIEWER_MAX_EDGES 100000

typedef struct knut_viewer_point {
    double x, y;
} knut_viewer_point;

typedef struct knut_viewer_node {
    const char *name;      /* unique in the graph: the node's id */
    const char *kind;      /* e.g. the target's dataset kind ("materialized_view"); may be NULL */
    const char *flow_kind; /* "batch", "streaming", "cdc", "append_once"; may be NULL */
    const char *target;    /* the dataset the flow writes; may be NULL */
    size_t nexpectations;  /* the target's expectations */
    /* Set by knut_viewer_layout: layer 0 is the leftmost column, order the
     * position from the top inside the layer; x, y the top-left corner. */
    int layer, order;
    double x, y, w, h;
} knut_viewer_node;

typedef struct knut_viewer_edge {
    size_t from, to;   /* node indexes */
    const char *label; /* "batch", "streaming", "cdc" (or the caller's) */
    /* Set by knut_viewer_layout: from the source's right side through one
     * point per layer crossed to the target's left side (>= 2 points). */
    knut_viewer_point *points;
    size_t npoints;
} knut_viewer_edge;

typedef struct knut_viewer_graph {
    const char *title;
    knut_viewer_node *nodes; /* in the order added */
    size_t nnodes;
    knut_viewer_edge *edges;
    size_t nedges;
    int nlayers;
    double width, height; /* the drawing's size, margins included */
    int laid_out;
} knut_viewer_graph;

/* An empty graph titled title (copied; may be NULL). Errors: KNUT_ENOMEM. */
KNUT_EXTERN knut_status knut_viewer_graph_new(knut_viewer_graph **out, const char *title,
                                              knut_error *err);
/* Adds a node (strings copied; kind, flow_kind, target may be NULL) and
 * returns its index in *id (may be NULL). Errors: KNUT_EINVAL (an empty
 * or duplicate name), KNUT_ETOOBIG (KNUT_VIEWER_MAX_NODES), KNUT_ENOMEM. */
KNUT_EXTERN knut_status knut_viewer_graph_add_node(knut_viewer_graph *g, const char *name,
                                                   const char *kind, const char *flow_kind,
                                                   const char *target, size_t *id,
                                                   knut_error *err);
/* Adds the edge from -> to (label copied; NULL: "batch"). A second edge
 * between the same nodes is dropped (the first label stays). Errors:
 * KNUT_EINVAL (an unknown index, a self-loop), KNUT_ETOOBIG, KNUT_ENOMEM. */
KNUT_EXTERN knut_status knut_viewer_graph_add_edge(knut_viewer_graph *g, size_t from, size_t to,
                                                   const char *label, knut_error *err);
/* The index of the node named name, or (size_t)-1. */
KNUT_EXTERN size_t knut_viewer_graph_find(const knut_viewer_graph *g, const char *name);
/* Frees g (NULL-safe). */
KNUT_EXTERN void knut_viewer_graph_free(knut_viewer_graph *g);

/*
 * The graph of a resolved pipeline, laid out: one node per flow (named as
 * the flow), an edge A -> B for each dataset flow A writes that flow B
 * reads, labelled "cdc" when B applies changes from it, "streaming" for a
 * STREAM(x) read, "batch" otherwise. Errors: KNUT_EINVAL (p not
 * resolved), those of the calls above.
 */
KNUT_EXTERN knut_status knut_viewer_graph_from_pipeline(knut_viewer_graph **out,
                                                        const knut_pipeline *p, knut_error *err);

/* Lays g out (again: the result depends only on the graph). Errors:
 * KNUT_EINVAL (a cycle, naming a node on it), KNUT_ENOMEM. */
KNUT_EXTERN knut_status knut_viewer_layout(knut_viewer_graph *g, knut_error *err);

/* Appends g (laid out) as one JSON object: {title, width, height,
 * layers, nodes[{id, name, kind, flow_kind, target, expectations, layer,
 * order, x, y, w, h}], edges[{from, to, label, points[[x,y]...]}]} with
 * from/to the node names. Errors: KNUT_EINVAL (not laid out), b's. */
KNUT_EXTERN knut_status knut_viewer_graph_json(const knut_viewer_graph *g, knut_buf *b,
                                               knut_error *err);
/* Appends g (laid out) as a standalone SVG document: a box per node
 * (name, flow kind, target), the edge routes with arrowheads and their
 * labels (streaming dashed, cdc dotted). Errors as knut_viewer_graph_json. */
KNUT_EXTERN knut_status knut_viewer_graph_svg(const knut_viewer_graph *g, knut_buf *b,
                                              knut_error *err);

#ifdef __cplusplus
}
#endif

#endif /* KNUT_VIEWER_H */
