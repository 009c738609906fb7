/*
 * knut graph, mappings: how rows become vertices and edges, in the YAML
 * syntax of sync.yml (`vertices:`, `edges:`, `fk_edges:`; docs/sync.md
 * "Mapping"). `knut sync` (per table) and `knut pipeline` graph sinks
 * (per sink) parse it here (src/graph/map_conf.c) and turn rows of a
 * DuckDB relation into a knut_graph_mutation (src/graph/map_build.c).
 * Part of knut/graph.h.
 */
#ifndef KNUT_GRAPH_MAP_H
#define KNUT_GRAPH_MAP_H

#include <stddef.h>

#include "knut/core.h"
#include "knut/graph_model.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Everything below is read-only for callers. Strings point into the YAML
 * tree the mapping was parsed from (which must outlive it); nodes
 * (`node`, const knut_conf *) give file:line:col for messages at run time.
 */
typedef struct knut_graph_map_prop {
    const char *prop;   /* property name in the graph */
    const char *column; /* column of the rows */
    const void *node;   /* const knut_conf *: where it was written */
} knut_graph_map_prop;

typedef struct knut_graph_map_vertex {
    const char **labels; /* >= 1; labels[0] is the merge label */
    size_t n_labels;
    knut_graph_map_prop *keys; /* >= 1 */
    size_t n_keys;
    knut_graph_map_prop *props;
    size_t n_props;
    int all_props;      /* no `properties:`: every column not a key */
    const void *rename; /* const knut_conf * map column: property, or NULL */
} knut_graph_map_vertex;

typedef struct knut_graph_map_endpoint {
    const char *label;
    knut_graph_map_prop *keys; /* prop: key property of the vertex; column: the row's */
    size_t n_keys;
} knut_graph_map_endpoint;

typedef struct knut_graph_map_edge {
    const char *type;
    knut_graph_map_endpoint from;
    knut_graph_map_endpoint to;
    knut_graph_map_prop *props;
    size_t n_props;
    int all_props;      /* no `properties:`: every column not an endpoint key */
    const void *rename; /* const knut_conf * map column: property, or NULL */
} knut_graph_map_edge;

/* An edge from the row's vertex (the first vertex step) to the vertex of
 * `to_label` whose `to_key` equals the row's `column`. */
typedef struct knut_graph_map_fk {
    const char *type;
    const char *column;
    const char *to_label;
    const char *to_key;
    const void *node;
} knut_graph_map_fk;

typedef struct knut_graph_map {
    knut_graph_map_vertex *vertices;
    size_t n_vertices;
    knut_graph_map_edge *edges;
    size_t n_edges;
    knut_graph_map_fk *fk_edges;
    size_t n_fk_edges;
} knut_graph_map;

/*
 * Parses the `vertices:`, `edges:` and `fk_edges:` keys of the map node
 * (other keys are the caller's to check) into *m (zeroed first). Errors
 * are KNUT_EINVAL at file:line:col, prefixed "<kind> '<name>': " (kind
 * "table", "sink"); a column named `reserved` (NULL: none) is refused
 * (sync's CDC tag). At least one vertex or edge step is required. On
 * error *m may hold what was parsed: free it with knut_graph_map_free.
 */
KNUT_EXTERN knut_status knut_graph_map_parse(const knut_conf *node, const char *kind,
                                             const char *name, const char *reserved,
                                             knut_graph_map *m, knut_error *err);
/* Frees what knut_graph_map_parse allocated (not m itself; NULL-safe). */
KNUT_EXTERN void knut_graph_map_free(knut_graph_map *m);
/* The property name of column under a `rename:` map (column itself when
 * the map has no entry for it). */
KNUT_EXTERN const char *knut_graph_map_renamed(const void *rename, const char *column);
/* Refuses a key of map n not in the NULL-terminated allowed list (with a
 * did-you-mean hint), KNUT_EINVAL at the key; kind/name as above (NULL:
 * no prefix); what names the map in the message. */
KNUT_EXTERN knut_status knut_graph_map_check_keys(const knut_conf *n, const char *kind,
                                                  const char *name, const char *what,
                                                  const char *const *allowed, knut_error *err);

/* The non-empty string at map[key] into *out, or KNUT_EINVAL naming key
 * (missing: at the map; empty or not a scalar: at the value); kind/name
 * and what as for knut_graph_map_check_keys. */
KNUT_EXTERN knut_status knut_graph_map_req_str(const knut_conf *map, const char *key,
                                               const char *kind, const char *name,
                                               const char *what, const char **out,
                                               knut_error *err);

struct knut_duck_db;

/*
 * Builds the upserts of every row of `relation` (SQL text naming a table
 * of db, quoted by the caller) under m: one vertex set per vertex step, one edge set
 * per edge and fk step; within the rows the last row (by rowid order of
 * the relation's scan) of a key wins. Edge sets get missing_endpoints
 * (KNUT_GRAPH_MISSING_*). Each set is a query on a connection of its own
 * (the streams stay readable until *out is applied or freed). Errors:
 * KNUT_EINVAL naming the step for a mapped column the relation lacks,
 * DuckDB's, KNUT_ENOMEM. The caller frees *out.
 */
KNUT_EXTERN knut_status knut_graph_map_mutation(struct knut_duck_db *db, const char *relation,
                                                const knut_graph_map *m, int missing_endpoints,
                                                knut_graph_mutation **out, knut_error *err);

#ifdef __cplusplus
}
#endif

#endif /* KNUT_GRAPH_MAP_H */
