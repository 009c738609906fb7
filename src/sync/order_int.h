/*
 * Ordering inside a round (docs/sync.md, "The ordering contract"): the
 * table order derived from the mapping (order.c), the changelog order of a
 * cdc table's files (cdc_order.c) and of its events within a round (map.c),
 * and the hash of a table's config that lets a config fix retry what the
 * old config failed (table_hash.c).
 */
#ifndef KNUT_SYNC_ORDER_INT_H
#define KNUT_SYNC_ORDER_INT_H

#include "knut/sync.h"

/* ---- order.c: the table order of a round ---- */
enum {
    SYNC_TABLE_WAITING = 0, /* not visited yet this round */
    SYNC_TABLE_RAN,         /* visited and its apply did not fail */
    SYNC_TABLE_FAILED,      /* its apply failed */
    SYNC_TABLE_SKIPPED,     /* another instance holds its lease */
    SYNC_TABLE_HELD         /* held back: a table it depends on did not run */
};
typedef struct sync_order {
    size_t n;             /* tables */
    size_t *idx;          /* the round's visiting order: table indexes */
    unsigned char *dep;   /* dep[t * n + u]: t's edges need u's labels first */
    unsigned char *state; /* SYNC_TABLE_*, per table, this round */
    int cycle;            /* a cycle fell back to config order (reported) */
    char (*hash)[17];     /* per table: knut_sync__table_hash */
} sync_order;

/* Derives the order from the endpoint labels of c's edge and fk-edge
 * steps; a cycle is logged once (warn) and ordered by config order. */
knut_status knut_sync__order_build(sync_order *o, const knut_sync_config *c, knut_error *err);
void knut_sync__order_reset(sync_order *o);
/* Every table back to SYNC_TABLE_WAITING. */
void knut_sync__order_round_begin(sync_order *o);
/* The table t waits for (a dependency that failed, was skipped or held
 * back this round), or o->n when t may run. */
size_t knut_sync__order_waits_for(const sync_order *o, size_t t);

/* ---- table_hash.c ---- */
/* The hash of everything in t's config that decides how its files are read
 * and mapped (path, format, mode, sql, sequence_by, every step), as 16 hex
 * digits: a failed file whose entry holds another hash is retried. */
void knut_sync__table_hash(const knut_sync_table *t, char out[17]);
struct knut_sync;
/* t's hash, computed when the sync opened (t is one of the sync's tables). */
const char *knut_sync__config_hash(const struct knut_sync *s, const knut_sync_table *t);

/* ---- cdc_order.c: a changelog's files in name order ---- */
struct sync_ledger;
struct sync_file_list;
struct sync_entry;
/* One past the last file of files (sorted) that t's ledger records done;
 * 0 when none is. A recorded file that changed before it is out of order. */
size_t knut_sync__cdc_done_end(struct sync_ledger *l, const knut_sync_table *t,
                               const struct sync_file_list *files);
/* Records e (a failed entry of a file before done_end) with the reason
 * naming the applied file it sorts before, and logs it `file failed`. */
knut_status knut_sync__cdc_refuse(struct sync_ledger *l, struct sync_entry *e,
                                  const struct sync_file_list *files, size_t done_end,
                                  knut_error *err);

#endif
