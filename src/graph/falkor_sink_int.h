/*
 * Internals of the FalkorDB sink shared by its files and its unit test:
 * the batch planner (falkor_sink_batch.c) that turns one set into
 * GRAPH.QUERY texts within a byte and row budget and hands them out a
 * pipeline round at a time, and the list of (label, key) pairs that need a
 * range index. Neither talks to a server, so both are tested without one.
 */
#ifndef KNUT_GRAPH_FALKOR_SINK_INT_H
#define KNUT_GRAPH_FALKOR_SINK_INT_H

#include <stddef.h>
#include <stdint.h>

#include "knut/graph.h"

#define FSINK_BATCH_BYTES_DEFAULT ((size_t)1 << 20)
/* FalkorDB's own tools use 1k-10k rows per UNWIND; 5000 is their default. */
#define FSINK_BATCH_ROWS_DEFAULT 5000
#define FSINK_PIPELINE_DEFAULT 4
#define FSINK_PIPELINE_MAX 64
#define FSINK_INDEX_WAIT_DEFAULT_MS 60000
/* Smallest batch_bytes accepted: room for a query text and one row. */
#define FSINK_BATCH_BYTES_MIN 1024

/* One rendered GRAPH.QUERY text and the stream rows it carries. */
typedef struct fsink_query {
    knut_buf text;
    int64_t first_row; /* stream-wide row number (0-based) of its first row */
    int64_t n_rows;
    int by_id;         /* text updates by node id (a reply row: some missed) */
    knut_buf alt;      /* by_id: the same rows as MERGE, sent when some of the
                        * nodes were gone by the time the update ran */
} fsink_query;

/* Fills ids[0..to-from) with the FalkorDB node id of each batch row's
 * vertex, or -1 where the row must go through MERGE. */
typedef knut_status (*fsink_probe_fn)(void *ctx, const knut_graph_set *set,
                                      const knut_arrow_view *batch, int64_t from, int64_t to,
                                      int64_t *ids, knut_error *err);

/* Receives one pipeline round: q[0..n) in stream order (n >= 1). */
typedef knut_status (*fsink_flush_fn)(void *ctx, const knut_graph_set *set, fsink_query *q,
                                      size_t n, knut_error *err);

typedef struct fsink_plan {
    size_t batch_bytes; /* whole query text, suffix included */
    int64_t batch_rows; /* rows per query */
    size_t pipeline;    /* queries per round (1..FSINK_PIPELINE_MAX) */
    const char *suffix; /* constant text appended to every query; NULL: none */
    fsink_probe_fn probe; /* vertex sets with one integer key; NULL: MERGE only */
} fsink_plan;

/*
 * Reads the set's stream to its end and renders it into queries of at most
 * plan->batch_rows rows and plan->batch_bytes bytes, calling flush for
 * every plan->pipeline queries and once more for the rest. At most one
 * Arrow batch and one round of texts are held at a time. A render error
 * (a null key, a value FalkorDB cannot hold, a row over the budget) stops
 * before that row's query is flushed; queries flushed earlier stay sent.
 */
knut_status knut_graph__fsink_run_set(knut_graph_set *set, const fsink_plan *plan,
                                      fsink_flush_fn flush, void *ctx, knut_error *err);

/* (label, key) pairs that need a range index, without duplicates. */
typedef struct fsink_index_key {
    char *label;
    char *key;
} fsink_index_key;

typedef struct fsink_index_list {
    fsink_index_key *v;
    size_t n;
    size_t cap;
} fsink_index_list;

/* Appends (label, key) unless present. */
knut_status knut_graph__fsink_index_add(fsink_index_list *l, const char *label,
                                        const char *key, knut_error *err);
/* Index of (label, key) in l, or -1. */
int64_t knut_graph__fsink_index_find(const fsink_index_list *l, const char *label,
                                     const char *key);
/* Drops entry i (order is not kept). */
void knut_graph__fsink_index_remove(fsink_index_list *l, size_t i);
void knut_graph__fsink_index_list_reset(fsink_index_list *l);

/*
 * Every pair the mutation's MERGE and MATCH clauses look vertices up by:
 * (first label, each key) of vertex sets, (endpoint label, each endpoint
 * key) of edge sets and edge delete sets, and (label, each key) of delete
 * sets.
 */
knut_status knut_graph__fsink_index_collect(fsink_index_list *out, knut_graph_mutation *m,
                                            knut_error *err);

/* `CREATE INDEX FOR (n:`label`) ON (n.`key`)` (names through
 * knut_graph_cypher_ident, so a backtick is refused). */
knut_status knut_graph__fsink_index_text(knut_buf *out, const char *label, const char *key,
                                         knut_error *err);

/* 1 if the id probe applies: a vertex set keyed by one integer column. */
int knut_graph__fsink_probe_eligible(const knut_graph_set *set, const knut_arrow_view *batch);

/* The probe (falkor_sink_probe.c): one range query over the rows' key span
 * on graph through g; ids as for fsink_probe_fn. */
knut_status knut_graph__fsink_probe(knut_graph_falkor *g, const char *graph,
                                    const knut_graph_set *set, const knut_arrow_view *batch,
                                    int64_t from, int64_t to, int64_t *ids, knut_error *err);

/* Key listing of graph `graph` through g, in pages by id
 * (falkor_sink_keys.c; the sink's keys op). */
knut_status knut_graph__fsink_keys(knut_graph_falkor *g, const char *graph,
                                   const knut_graph_key_scan *scan, knut_graph_sink_keys_fn fn,
                                   void *ctx, knut_error *err);

/* The apply as fenced MULTI/EXEC transactions (falkor_sink_tx.c; see
 * knut_graph_falkor_sink_set_tx): plan for every set but edge sets,
 * edge_plan (with the row-count suffix) for those. */
knut_status knut_graph__fsink_tx_apply(knut_graph_falkor *g, const char *graph,
                                       knut_graph_falkor_tx *tx, knut_graph_mutation *m,
                                       const fsink_plan *plan, const fsink_plan *edge_plan,
                                       knut_graph_sink_stats *stats,
                                       knut_graph_falkor_stats *server, knut_error *err);

/* After an edge query q wrote fewer edges than it had rows: names the
 * first rows' missing endpoints in set->missing, through one read-only
 * query with q's parameter block (falkor_sink_missing.c). q's text ends
 * in a suffix of suffix_len bytes. */
knut_status knut_graph__fsink_missing(knut_graph_falkor *g, const char *graph,
                                      knut_graph_set *set, const fsink_query *q,
                                      size_t suffix_len, knut_error *err);

/* falkor_sink_keytype.c: KNUT_EINVAL (detail KNUT_GRAPH_ERR_TYPE_CHANGE)
 * when a key column of a vertex or edge set has another type than that
 * key on the label's vertices in the graph (one read-only query per key);
 * a label without vertices passes. Other kinds of sets pass. */
knut_status knut_graph__fsink_key_types(knut_graph_falkor *g, const char *graph,
                                        const knut_graph_set *set, knut_error *err);

#endif /* KNUT_GRAPH_FALKOR_SINK_INT_H */
