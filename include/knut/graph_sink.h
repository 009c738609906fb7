/*
 * knut graph, sinks: the interface every graph sink (FalkorDB, the
 * embedded store) implements and sync talks to. Part of knut/graph.h.
 */
#ifndef KNUT_GRAPH_SINK_H
#define KNUT_GRAPH_SINK_H

#include <stddef.h>
#include <stdint.h>

#include "knut/core.h"
#include "knut/graph_model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- sinks: the common interface (src/graph/sink.c) ---- */

/*
 * A sink applies a whole mutation: every vertex set, then every edge set,
 * then every edge delete set, then every delete set (upserts before
 * deletes, so an upsert and a delete of one key or edge in the same
 * mutation end deleted). Sinks are FalkorDB and the
 * embedded graph store; sync talks to them only through this interface.
 */
typedef struct knut_graph_sink_stats {
    int64_t rows;             /* input rows consumed, all sets */
    int64_t vertices_written; /* vertex rows upserted */
    int64_t edges_written;    /* edge rows upserted */
    int64_t vertices_deleted;
    int64_t edges_deleted;    /* by edge delete sets + removed with deleted vertices */
    int64_t edges_skipped;    /* edge rows whose endpoint vertex does not exist */
} knut_graph_sink_stats;
/*
 * The counts mean the same on every sink: vertices_written counts the
 * distinct vertices of each vertex set (created or matched, after the set's
 * own de-duplication: the last row of a key wins), edges_written the
 * distinct edges of each edge set whose two endpoints exist (created, or
 * matched and their properties set; an edge written again without a
 * change counts too), edges_skipped the edge rows left out for a missing
 * endpoint (per set in knut_graph_set.skipped).
 */

struct knut_duck_conn;

/*
 * The caller's ledger update, committed with the mutation. The embedded
 * store calls it inside its open transaction with its own connection, so
 * the mutation and the ledger commit together or not at all (exactly
 * once). FalkorDB calls it after the server acknowledged every batch, with
 * conn NULL (at-least-once; MERGE makes a replay harmless). An error from
 * the callback fails the apply (the embedded store rolls back).
 */
typedef struct knut_graph_sink_commit {
    knut_status (*fn)(void *ctx, struct knut_duck_conn *conn, knut_error *err);
    void *ctx;
} knut_graph_sink_commit;

typedef struct knut_graph_sink knut_graph_sink;

/*
 * Key listing, for snapshot syncs (sync's `mode: full`): what the graph
 * holds now, so the caller can find what a snapshot no longer has. A scan
 * names vertices (label + key properties) or edges (type + the labels and
 * key properties of both endpoints; endpoint `columns` are ignored).
 */
typedef struct knut_graph_key_scan {
    const char *label;          /* vertices: the label; NULL for an edge scan */
    const char *const *keys;    /* vertices: key properties */
    size_t n_keys;
    const char *type;           /* edges: the type; NULL for a vertex scan */
    knut_graph_endpoint src;
    knut_graph_endpoint dst;
} knut_graph_key_scan;

/* Gets the rows a stream at a time (takes it over: release it, also on
 * error); an error stops the listing and is returned as is. */
typedef knut_status (*knut_graph_sink_keys_fn)(void *ctx, struct ArrowArrayStream *rows,
                                               knut_error *err);

typedef struct knut_graph_sink_ops {
    const char *name; /* "falkordb", "embedded" */
    knut_status (*apply)(knut_graph_sink *sink, knut_graph_mutation *m,
                         const knut_graph_sink_commit *commit, knut_graph_sink_stats *stats,
                         knut_error *err);
    void (*close)(knut_graph_sink *sink);
    /* knut_graph_sink_vertex_keys / _edge_keys; NULL: not supported */
    knut_status (*keys)(knut_graph_sink *sink, const knut_graph_key_scan *scan,
                        knut_graph_sink_keys_fn fn, void *ctx, knut_error *err);
} knut_graph_sink_ops;

/* Implementations embed this as their first member. */
struct knut_graph_sink {
    const knut_graph_sink_ops *ops;
};

/* Applies m (consuming its streams; m itself stays the caller's to free);
 * commit may be NULL; stats (may be NULL) gets what was written. Errors:
 * the sink's (FalkorDB: KNUT_EIO / KNUT_EPEER, the server's error kind in
 * err->detail; embedded: DuckDB's), rendering and validation errors
 * naming the set, row and column (KNUT_EINVAL, KNUT_EUNSUPPORTED), and
 * the commit callback's own. After an error the embedded store has rolled
 * everything back; FalkorDB may have applied some batches (MERGE makes a
 * retry harmless). One thread at a time per sink. */
KNUT_EXTERN knut_status knut_graph_sink_apply(knut_graph_sink *sink, knut_graph_mutation *m,
                                              const knut_graph_sink_commit *commit,
                                              knut_graph_sink_stats *stats, knut_error *err);
/* Closes and frees the sink (NULL-safe). */
KNUT_EXTERN void knut_graph_sink_close(knut_graph_sink *sink);
/* Whether a column of type `schema` can be a key (is_key: on both sinks a
 * bool, integer, float, string, date, time or timestamp) or, with
 * falkordb, a FalkorDB property (the embedded store keeps any type):
 * KNUT_EUNSUPPORTED with the reason, before any file is read. */
KNUT_EXTERN knut_status knut_graph_column_type_check(const struct ArrowSchema *schema, int is_key,
                                                     int falkordb, knut_error *err);

/*
 * Streams the keys of every vertex of `label` that has every key property
 * (a vertex lacking one can never be found by its keys) into fn. Rows are
 * struct arrays: column 0 `_knut_id` (int64, the sink's own id of the
 * vertex), then the keys in the order given. The embedded store lists the
 * vertices merged on `label` (its label table) in one stream; FalkorDB
 * lists every node carrying the label with GRAPH.RO_QUERY in pages ordered
 * by node id, each page starting after the last id seen, so a server
 * RESULTSET_SIZE below the page size only makes pages shorter. Column
 * types are the sink's (FalkorDB: per page, as its client decodes them).
 * A label the sink has never seen lists nothing. KNUT_EUNSUPPORTED for a
 * sink without key listing; the sink's errors as for apply, and fn's.
 * label and keys are borrowed for the call.
 */
KNUT_EXTERN knut_status knut_graph_sink_vertex_keys(knut_graph_sink *sink, const char *label,
                                                    const char *const *keys, size_t n_keys,
                                                    knut_graph_sink_keys_fn fn, void *ctx,
                                                    knut_error *err);
/*
 * The same for every edge of `type` from a src.label vertex to a dst.label
 * vertex: column 0 `_knut_id` (int64), then the source's keys
 * (`_knut_s0`..), then the destination's keys (`_knut_d0`..).
 */
KNUT_EXTERN knut_status knut_graph_sink_edge_keys(knut_graph_sink *sink, const char *type,
                                                  const knut_graph_endpoint *src,
                                                  const knut_graph_endpoint *dst,
                                                  knut_graph_sink_keys_fn fn, void *ctx,
                                                  knut_error *err);

#ifdef __cplusplus
}
#endif

#endif /* KNUT_GRAPH_SINK_H */
