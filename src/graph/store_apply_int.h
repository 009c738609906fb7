/*
 * Internals shared by the store's sink apply (store_apply.c) and its
 * chunked form for large upsert-only mutations (store_chunk.c).
 */
#ifndef KNUT_GRAPH_STORE_APPLY_INT_H
#define KNUT_GRAPH_STORE_APPLY_INT_H

#include "store_int.h"

/* What one set needs while its batches are applied. */
typedef struct set_job {
    knut_graph_store *s;
    knut_graph_set *set;
    char **types;     /* DuckDB type per stream column (from a probe) */
    size_t n_types;
    char *table;      /* the vertex / edge table (NULL: label unknown) */
    char *src_table;  /* edges: endpoint vertex tables (NULL: unknown) */
    char *dst_table;
    int endpoints_ok; /* edges: both endpoint tables have the key columns */
    knut_buf upsert;  /* vertex/edge upsert */
    knut_buf members; /* vertex: label membership ($1 = label) */
    knut_buf skipped; /* edge: count of rows without both endpoints */
    knut_buf written; /* no properties: count of the rows the upsert covers
                       * (ON CONFLICT DO NOTHING counts only new ones) */
    knut_buf remove;  /* edge delete: the DELETE (empty: nothing can match) */
    knut_gs_rows edge_tables; /* delete: every edge table */
    char stage_name[48];      /* temp table holding the set's rows */
    char src_name[48];        /* what the upserts read: the stage, or the
                               * view of its chunk (apply_chunked) */
    int64_t staged;           /* rows in it */
    knut_graph_sink_stats *stats;
    knut_error stage_err;     /* what the staging stream refused */
    struct ArrowArrayStream feed;
} set_job;

/* Builds the set's statements (and makes its table and columns) inside
 * the open transaction; reads from j->src_name (default: the stage). */
knut_status knut_graph__store_set_prepare(set_job *j, knut_error *err);
/* Runs the set's statements over j->src_name (n_rows: its rows). */
knut_status knut_graph__store_set_apply(set_job *j, int64_t n_rows, knut_graph_sink_stats *stats,
                                        knut_error *err);
/* The commit callback (the ledger), then COMMIT of the open transaction. */
knut_status knut_graph__store_commit(knut_graph_store *s, const knut_graph_sink_commit *commit,
                                     knut_error *err);
/* store_chunk.c: how many transactions the staged jobs[0..n) take: 1
 * unless the mutation only upserts (no delete rows, no edge set that
 * fails on a missing endpoint) and a set holds more than the store's
 * txn_rows rows. */
size_t knut_graph__store_chunks(const knut_graph_store *s, const set_job *jobs, size_t n);
/* Applies jobs[0..n) set by set, each set's rows split by key hash into
 * ceil(rows / txn_rows) transactions; commit runs in the last one. */
knut_status knut_graph__store_apply_chunked(knut_graph_store *s, set_job *jobs, size_t n,
                                            size_t chunks, const knut_graph_sink_commit *commit,
                                            knut_error *err);

#endif
