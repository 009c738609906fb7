/*
 * knut graph, the embedded store: a property graph in one DuckDB file,
 * usable as a sink and exportable as GraphAr. Part of knut/graph.h.
 */
#ifndef KNUT_GRAPH_STORE_H
#define KNUT_GRAPH_STORE_H

#include <stdint.h>

#include "knut/arrow.h"
#include "knut/core.h"
#include "knut/graph_sink.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- embedded graph store (src/graph/store*.c) ---- */

/*
 * A property graph kept in one DuckDB file (docs/graph.md, "Embedded graph
 * store"): a table per vertex label ("v_<label>": a surrogate vertex id
 * `_knut_vid` from a sequence, the merge keys as PRIMARY KEY, property
 * columns) and per edge type ("e_<type>": `_knut_src`, `_knut_dst`, the
 * endpoint labels, optional edge keys, UNIQUE over those, properties),
 * catalog tables naming them, and `_knut_vertex_labels_of(vid, label)`
 * holding every label of every vertex. A vertex is MERGEd on its first
 * label + keys, as FalkorDB does. New property columns are added as sets
 * bring them; a type that cannot be widened safely is an error naming the
 * set, the column and both types. The store is not thread-safe.
 */
typedef struct knut_graph_store knut_graph_store;

/* Opens (or creates) the store at path; NULL, "" or ":memory:" opens a
 * private in-memory store. The caller closes *out with
 * knut_graph_store_close; it is NULL on failure. Errors: DuckDB's (a file
 * locked by another process, not a database: knut/duck.h), KNUT_ENOMEM. */
KNUT_EXTERN knut_status knut_graph_store_open(knut_graph_store **out, const char *path,
                                              knut_error *err);
/* Closes the store (NULL-safe). Same as closing its sink: close one only. */
KNUT_EXTERN void knut_graph_store_close(knut_graph_store *store);

/*
 * The store as a sink (owned by the store; knut_graph_sink_close on it
 * closes the store). apply runs BEGIN, every vertex set, every edge set,
 * every edge delete set, every delete set, the commit callback (with the store's connection, so
 * the ledger rows land in the same transaction), COMMIT; on any error it
 * rolls back and nothing of the mutation is visible. Null keys and
 * endpoint keys are refused naming the set, row and column; duplicate
 * keys inside one batch: the last row wins. A null property value sets the
 * column NULL (FalkorDB removes the property). Edges whose endpoint vertex
 * does not exist are skipped (FalkorDB's MATCH finds nothing) and counted:
 * knut_graph_store_edges_skipped. Deleting a vertex removes its edges from
 * every edge table (counted in edges_deleted, as are the edges of edge
 * delete sets). Errors as knut_graph_sink_apply.
 */
KNUT_EXTERN knut_graph_sink *knut_graph_store_sink(knut_graph_store *store);
/* An apply whose mutation only upserts and has a set of more than rows
 * rows (default 1000000; <= 0: the default) runs in several transactions,
 * the commit callback in the last: each set's rows split by key hash into
 * ceil(set rows / rows) chunks, so the memory DuckDB cannot spill (the
 * primary key's transaction-local index) is bounded by a chunk. Re-applying
 * a mutation interrupted between chunks gives the same graph. */
KNUT_EXTERN void knut_graph_store_set_txn_rows(knut_graph_store *store, int64_t rows);
/* Edge rows skipped for missing endpoints by the last apply. */
KNUT_EXTERN int64_t knut_graph_store_edges_skipped(const knut_graph_store *store);
/* The store's connection, for reads (and the ledger) between applies;
 * owned by the store. */
KNUT_EXTERN struct knut_duck_conn *knut_graph_store_conn(knut_graph_store *store);
/* The store's DuckDB instance, owned by the store: more connections into
 * it share its buffer pool and memory_limit (sync stages files in an
 * in-memory database attached to it, so one limit bounds both). */
KNUT_EXTERN struct knut_duck_db *knut_graph_store_db(knut_graph_store *store);

/* Runs read SQL on the store (knut_duck_query rules and errors apply). */
KNUT_EXTERN knut_status knut_graph_store_query(knut_graph_store *store, const char *sql,
                                               struct ArrowArrayStream *out, knut_error *err);
/* One row per vertex label and edge type, ordered by kind then name:
 * kind ('vertex'|'edge'), name, table_name, keys (JSON array), rows. The
 * caller releases *out; DuckDB's errors. */
KNUT_EXTERN knut_status knut_graph_store_list(knut_graph_store *store, struct ArrowArrayStream *out,
                                              knut_error *err);

#define KNUT_GRAPH_STORE_EXPORT_OPTIONS_VERSION 1
typedef struct knut_graph_store_export_options {
    int version;                /* KNUT_GRAPH_STORE_EXPORT_OPTIONS_VERSION */
    const char *name;           /* graph name; NULL: "graph" */
    const char *file_type;      /* "parquet" (NULL) or "csv" */
    int64_t vertex_chunk_size;  /* 0: 262144 (also the edges' src/dst chunk size) */
    int64_t edge_chunk_size;    /* 0: 4194304 */
    unsigned adj_lists;         /* bits 1u << knut_graphar_adj_list_type; 0: ordered
                                 * by source + ordered by dest */
    int overwrite;              /* 1: empty existing type directories first */
} knut_graph_store_export_options;
#define KNUT_GRAPH_STORE_EXPORT_OPTIONS_INIT \
    {.version = KNUT_GRAPH_STORE_EXPORT_OPTIONS_VERSION}

/*
 * Writes the store as a GraphAr graph under out_dir through the GraphAr
 * writer: one vertex type per label table (its merge keys primary, other
 * labels of its vertices as GraphAr labels), one edge type per (source
 * label, type, destination label) present. Column types map to GraphAr
 * types (bool, int32, int64, float, double, string, date, timestamp,
 * lists in Parquet); others (and lists in CSV) are written as strings.
 * opts may be NULL. Errors: the GraphAr writer's (KNUT_EIO naming the
 * file, KNUT_EINVAL) and DuckDB's; a failed export may leave some files
 * under out_dir.
 */
KNUT_EXTERN knut_status knut_graph_store_export_graphar(knut_graph_store *store,
                                                        const char *out_dir,
                                                        const knut_graph_store_export_options *opts,
                                                        knut_error *err);

#ifdef __cplusplus
}
#endif

#endif /* KNUT_GRAPH_STORE_H */
