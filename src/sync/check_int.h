/*
 * Internals of `knut sync check` (check.c: the files of each table;
 * check_graph.c: what the tables write together, and where the sync would
 * write). Only src/sync/check*.c include it.
 */
#ifndef KNUT_SYNC_CHECK_INT_H
#define KNUT_SYNC_CHECK_INT_H

#include "sync_int.h"

/* The longest problem line; a longer one is cut. */
#define SYNC_CHECK_MSG_MAX 1024

typedef struct sync_check {
    const knut_sync_config *cfg;
    const knut_sync_options *opts;
    int falkordb;              /* the sink is FalkorDB */
    knut_sync_problem_fn fn;
    void *ctx;
    int64_t n;                 /* problems reported */
} sync_check;

/* Reports one problem (message: table/file/column named by the caller). */
void knut_sync__check_report(sync_check *c, const char *kind, const knut_sync_table *t,
                             const char *file, const char *column, const char *fmt, ...)
    KNUT_PRINTF(6, 7);
/* Labels edges use that no table writes; a label merged on different
 * keys by two steps, or found by an edge on keys it is not merged on. */
void knut_sync__check_labels(sync_check *c);
/* The store (embedded) or the ledger file (FalkorDB) can be written, and
 * the FalkorDB server answers. */
void knut_sync__check_targets(sync_check *c);

#endif
