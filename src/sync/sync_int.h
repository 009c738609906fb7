/*
 * Internals of the sync part: path and file helpers, the file source, the
 * in-memory ledger with its two backends (embedded store table, local JSON
 * file), the staging engine and the mutation builder. Only src/sync/ includes it.
 */
#ifndef KNUT_SYNC_INT_H
#define KNUT_SYNC_INT_H

#include <stdint.h>

#include "knut/duck.h"
#include "knut/graph.h"
#include "knut/sync.h"

#define SYNC_LOG "sync"

/* ---- config.c ---- */
/* The property name of column under a `rename:` map (NULL: none). */
const char *knut_sync__renamed(const void *rename_map, const char *column);

/* ---- source.c (also the small helpers) ---- */
char *knut_sync__path_join(const char *dir, const char *path); /* path if absolute */
char *knut_sync__dirname(const char *path);
knut_status knut_sync__file_read(knut_buf *b, const char *path, size_t max, knut_error *err);
/* Appends "name" (double quotes doubled) to b. */
void knut_sync__ident(knut_buf *b, const char *name);

/* ---- source.c: files of a table ---- */
typedef struct sync_file {
    char *path;
    int64_t size;
    int64_t mtime_ns;
    char hash[65];   /* SHA-256, hex; "" until computed */
    knut_sync_format format;
} sync_file;

typedef struct sync_file_list {
    sync_file *items;
    size_t n, cap;
} sync_file_list;

void knut_sync__files_reset(sync_file_list *l);
/* Lists the table's candidate files (sorted by path, skipping dot-files,
 * `_*`, `*.tmp`, `*.part`, `*~` and unknown extensions) with size and mtime. */
knut_status knut_sync__files_list(const knut_sync_table *t, sync_file_list *out, knut_error *err);
/* Content hash (SHA-256, streamed), then a second stat: *stable = 0 if
 * size or mtime moved since the listing (the file is still being written). */
knut_status knut_sync__file_hash(sync_file *f, int *stable, knut_error *err);

/* ---- ledger.c ---- */
typedef struct sync_entry {
    char *table, *path, *hash, *status, *reason;
    int64_t size, mtime_ns, round, rows;
} sync_entry;

typedef struct sync_ledger {
    sync_entry *items;
    size_t n, cap;
    size_t *slots;             /* open-addressing index: entry index + 1, 0 empty */
    size_t n_slots;            /* a power of two, > 2 n */
    char *file;                /* file backend: the JSON file; NULL: embedded */
    knut_duck_conn *conn;      /* embedded backend: the store's connection */
} sync_ledger;

knut_status knut_sync__ledger_open_store(sync_ledger *l, knut_duck_conn *conn, knut_error *err);
knut_status knut_sync__ledger_open_file(sync_ledger *l, const char *file, knut_error *err);
void knut_sync__ledger_reset(sync_ledger *l);
sync_entry *knut_sync__ledger_find(sync_ledger *l, const char *table, const char *path);
/* Drops the entry from memory (the backend is the caller's business). */
void knut_sync__ledger_forget(sync_ledger *l, const char *table, const char *path);
int64_t knut_sync__ledger_max_round(const sync_ledger *l);
/* Writes entries into the backend; embedded: on conn (inside the sink's
 * transaction, or NULL: the ledger's own, autocommit); file: the whole
 * ledger plus e, write + fsync + rename. Memory is not touched: call
 * remember once the write is known to be committed. */
knut_status knut_sync__ledger_write(sync_ledger *l, knut_duck_conn *conn, const sync_entry *e,
                                    size_t n, knut_error *err);
knut_status knut_sync__ledger_remember(sync_ledger *l, const sync_entry *e, size_t n,
                                       knut_error *err);

/* A list of column names (owned). */
typedef struct sync_names {
    char **names;
    size_t n;
} sync_names;
knut_status knut_sync__columns(knut_duck_conn *c, const char *table, sync_names *out,
                               knut_error *err);
void knut_sync__names_reset(sync_names *n);
int knut_sync__names_has(const sync_names *n, const char *name);

/* ---- stage.c + map.c: reading files and building the mutation ---- */
/* Loads file f into staging table "_knut_m<idx>" (after the SQL step) and
 * checks the columns and keys the mapping needs; *rows gets its row count. */
knut_status knut_sync__stage_file(knut_duck_db *db, const knut_sync_table *t, const sync_file *f,
                                  int idx, int64_t *rows, knut_error *err);
/* Unions the staged tables idx[0..n) into "_knut_batch" and drops them. */
knut_status knut_sync__stage_batch(knut_duck_db *db, const int *idx, size_t n, knut_error *err);
/* Builds the mutation for the table from "_knut_batch" (one staging
 * connection per set so the set streams stay readable together). */
knut_status knut_sync__map_build(knut_duck_db *db, const knut_sync_table *t,
                                 knut_graph_mutation **out, knut_error *err);

/* ---- what a round tells the metrics (metrics.c) and the Airflow asset
 * events (assets.c): one result per table visited ---- */
typedef struct sync_table_result {
    const knut_sync_table *table;
    int64_t round;
    int64_t files, failed_files, pending_files;
    int64_t rows, vertices, edges, deletes;
    int64_t duration_us;
    int ok;            /* no apply failure (a table with nothing new is ok) */
    const char *error; /* apply failure, or NULL */
} sync_table_result;

struct sync_metrics;  /* metrics.c */
struct sync_assets;   /* assets.c */
struct sync_valkey;   /* ledger_valkey.c: shared ledger + leases */

/* ---- sync.c ---- */
struct knut_sync {
    struct sync_metrics *metrics; /* NULL: none */
    struct sync_assets *assets;   /* NULL: no Airflow */
    struct sync_valkey *valkey;   /* NULL: local ledger */
    const knut_sync_config *cfg;
    knut_graph_store *store;
    knut_graph_falkor *falkor;
    knut_graph_sink *sink;     /* store's sink or the FalkorDB sink */
    knut_duck_db *stage;       /* in-memory engine for reading files */
    sync_ledger ledger;
    int64_t round;
};

#endif
