/*
 * Internals of the viewer part: the graph's owner struct (growth
 * capacities and the edge set that drops duplicate edges) and the page's
 * frames shared by the live server.
 */
#ifndef KNUT_VIEWER_INT_H
#define KNUT_VIEWER_INT_H

#include <stddef.h>

#include "knut/viewer.h"

/* The public struct first, so a knut_viewer_graph * is one of these. */
typedef struct knut_viewer__impl {
    knut_viewer_graph pub;
    size_t cap_nodes, cap_edges;
    size_t *ehash; /* open addressing over (from, to): edge index + 1, 0 empty */
    size_t ehash_cap;
} knut_viewer__impl;

/* Layout constants (pixels): node size bounds, the gaps between layers
 * and between nodes of a layer, the margin around the drawing. */
#define KNUT_VIEWER__NODE_H 64.0
#define KNUT_VIEWER__NODE_MIN_W 150.0
#define KNUT_VIEWER__NODE_MAX_W 280.0
#define KNUT_VIEWER__GAP_X 90.0
#define KNUT_VIEWER__GAP_Y 28.0
#define KNUT_VIEWER__DUMMY_H 10.0
#define KNUT_VIEWER__MARGIN 24.0

/* The width a node's box gets for its name (the longest of name and
 * target at ~7.5 px a byte, within the bounds above). */
double knut_viewer__node_width(const knut_viewer_node *n);

#endif /* KNUT_VIEWER_INT_H */
