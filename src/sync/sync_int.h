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
#include "order_int.h"

#define SYNC_LOG "sync"
/* Default FalkorDB socket timeout of a sync: long enough for any one batch
 * reply, short enough that a hung (not dead) server fails the round. */
#define SYNC_FALKORDB_TIMEOUT_MS 300000

/* ---- source.c (also the small helpers) ---- */
char *knut_sync__path_join(const char *dir, const char *path); /* path if absolute */
char *knut_sync__dirname(const char *path);

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
/* 1 if a base name is one files_list skips as still being written
 * (dot-files, `_*`, `*.tmp`, `*.part`, `*~`). */
int knut_sync__name_skipped(const char *base);
/* Content hash (SHA-256, streamed), then a second stat: *stable = 0 if
 * size or mtime moved since the listing (the file is still being written). */
knut_status knut_sync__file_hash(sync_file *f, int *stable, knut_error *err);

/* ---- ledger.c ---- */
typedef struct sync_entry {
    char *table, *path, *hash, *status, *reason;
    int64_t size, mtime_ns, round, rows;
    char *config; /* the table's config hash when recorded (table_hash.c); NULL: unknown */
} sync_entry;

/* ---- ledger_entry.c: one entry as JSON, for the file and Valkey ledgers ---- */

/* One entry's text at most, encoded or decoded: a path, a hash and a
 * failure reason fit many times over. */
#define SYNC_ENTRY_MAX 65536
struct json_t;
/*
 * The entry as one compact JSON object of exactly the keys table, path,
 * size, mtime, hash, status, reason, round, rows (hash, reason: null when
 * NULL), and config when it is not NULL (optional on load: older entries). out is cleared first. The decoder's rules are checked first, so
 * nothing is written that would not load: EPARSE naming the key, EINVAL for
 * text that is not UTF-8, ETOOBIG past SYNC_ENTRY_MAX. where names the
 * ledger and the entry in messages ("ledger FILE, entry 3").
 */
knut_status knut_sync__entry_encode(knut_buf *out, const sync_entry *e, const char *where,
                                    knut_error *err);
/*
 * Decodes an entry into e (owned strings: knut_sync__entry_reset; all NULL
 * on failure). Strict: every key present with its type (table, path,
 * status non-empty strings; hash, reason a string or null; the four
 * numbers integers), status done/failed/removed, hash at most 64 lowercase
 * hex digits, size/round/rows >= 0 (size -1 too for a "removed"
 * tombstone); an unknown key is refused. EPARSE
 * names where and the key; ETOOBIG past SYNC_ENTRY_MAX bytes.
 */
knut_status knut_sync__entry_decode(const char *s, size_t len, const char *where, sync_entry *e,
                                    knut_error *err);
/* The same from an object already parsed (an item of the file's array). */
knut_status knut_sync__entry_from_json(const struct json_t *o, const char *where, sync_entry *e,
                                       knut_error *err);
void knut_sync__entry_reset(sync_entry *e);

typedef struct sync_ledger {
    sync_entry *items;
    size_t n, cap;
    size_t *slots;             /* open-addressing index: entry index + 1, 0 empty */
    size_t n_slots;            /* a power of two, > 2 n */
    char *file;                /* file backend: the JSON file; NULL: embedded */
    knut_duck_conn *conn;      /* embedded backend: the store's connection */
    struct sync_valkey *valkey; /* shared backend (ledger_valkey.c), not owned; NULL: none */
    uint64_t gen;              /* bumped on every change in memory (status_file.c) */
} sync_ledger;

knut_status knut_sync__ledger_open_store(sync_ledger *l, knut_duck_conn *conn, knut_error *err);
/* Loads the store's ledger table into l (as open_store, without creating
 * or altering it: read-only; has_config 0 for a ledger from before the
 * config column). l->conn is left as it is. */
knut_status knut_sync__ledger_load_store(sync_ledger *l, knut_duck_conn *conn, int has_config,
                                         knut_error *err);
/* The file ledger is read whole and rewritten whole on each commit: fine
 * for thousands of files (about 250 bytes an entry), and 256 MiB, a
 * million entries, is where it stops (a write that would pass it fails,
 * so the file always loads again). */
#define SYNC_LEDGER_FILE_MAX ((size_t)256 << 20)
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
/* Remembers every entry of a JSON array (a ledger file's, a status
 * snapshot's); errors name "<what>, entry N". */
knut_status knut_sync__ledger_remember_json(sync_ledger *l, const struct json_t *entries, const char *what,
                                            knut_error *err);
/* Writes entries at once (outside any mutation), then remembers them. */
knut_status knut_sync__ledger_record(sync_ledger *l, const sync_entry *e, size_t n,
                                     knut_error *err);
/* The sink's commit callback (knut_graph_sink_commit) writing entries on
 * the sink's connection, inside the mutation's transaction. */
typedef struct sync_ledger_commit {
    sync_ledger *ledger;
    const sync_entry *entries;
    size_t n;
} sync_ledger_commit;
knut_status knut_sync__ledger_commit_fn(void *ctx, struct knut_duck_conn *conn, knut_error *err);

/* A list of column names (owned). */
typedef struct sync_names {
    char **names;
    size_t n;
} sync_names;
knut_status knut_sync__columns(knut_duck_conn *c, const char *table, sync_names *out,
                               knut_error *err);
void knut_sync__names_reset(sync_names *n);
int knut_sync__names_has(const sync_names *n, const char *name);

/* ---- columns.c, columns_config.c: declared schemas (`columns:`) ---- */
/* The most columns a table declares, or a CSV header names. */
#define SYNC_COLUMNS_MAX 4096
/* Parses the table's `columns:` (DuckDB checks each type name; an unknown
 * one is KNUT_EINVAL naming file:line:col) into t->columns. */
knut_status knut_sync__columns_parse(const knut_conf *n, const char *table, knut_sync_table *t,
                                     knut_error *err);
void knut_sync__columns_free(knut_sync_table *t);
/* The declared column of that name (case-insensitive, as DuckDB), or NULL. */
const knut_sync_column *knut_sync__column_find(const knut_sync_table *t, const char *name);
/* KNUT_EINVAL naming the config position of a declared type the sink
 * (falkordb or the embedded store) cannot store (tables without `sql:`). */
knut_status knut_sync__columns_sink_check(const knut_sync_config *cfg, int falkordb,
                                          knut_error *err);
/* Appends to q the SELECT that reads f (path: parameter $1) with t's
 * declared types; KNUT_EINVAL when a declared column is not in the file. */
knut_status knut_sync__columns_reader(knut_duck_conn *c, const knut_sync_table *t,
                                      const sync_file *f, knut_buf *q, knut_error *err);
/* After a declared table's file f failed to stage with st: as
 * knut_sync__stage_explain, and a value that does not cast is named by
 * its data row (1-based), column and text. Returns the status. */
knut_status knut_sync__columns_explain(knut_duck_conn *c, const knut_sync_table *t,
                                       const sync_file *f, knut_status st, knut_error *err);
/* 1 when s is written like a DuckDB type name (letters, digits, '_', ' ',
 * ',', balanced brackets; at most 256 bytes): safe in a cast's text. */
int knut_sync__type_text_ok(const char *s);
/* Splits one CSV header line (comma, double quotes) into its names. */
knut_status knut_sync__csv_header(const char *line, size_t len, sync_names *out, knut_error *err);
/* Every row's first column of sql (one optional text parameter) as text. */
knut_status knut_sync__q_names(knut_duck_conn *c, const char *sql, const char *param,
                               sync_names *out, knut_error *err);

/* ---- stage.c + map.c: reading files and building the mutation ---- */
/* First column of the first row of sql (one optional text parameter) as
 * int64; 0 when there is no row or it is null. */
knut_status knut_sync__q_int(knut_duck_conn *c, const char *sql, const char *param, int64_t *out,
                             knut_error *err);
/* The standalone staging engine's memory cap (FalkorDB sink, `sync
 * check`); past it DuckDB spills to its spill directory, so one huge drop
 * file does not take the machine's memory. */
#define SYNC_STAGE_MEMORY_LIMIT "128MB"
/* The embedded store's cap while syncing (sync.c; --memory-limit). It
 * bounds the staged files too: they are staged in the store's instance
 * (knut_sync__stage_attach), one buffer pool for both (docs/sync.md,
 * "Memory"). */
#define SYNC_STORE_MEMORY_LIMIT "256MB"
/* The in-memory database every staging connection works in (USE). */
#define SYNC_STAGE_DB "_knut_staging"
/* Opens the standalone in-memory staging engine with a fresh spill
 * directory under $TMPDIR (*spill_dir, freed and removed by
 * knut_sync__stage_close). */
knut_status knut_sync__stage_open(knut_duck_db **db, char **spill_dir, knut_error *err);
/* Stages inside the store's own instance instead: attaches the in-memory
 * SYNC_STAGE_DB to it (the store closes it; stage_close(NULL, NULL)). */
knut_status knut_sync__stage_attach(knut_duck_db *store_db, knut_error *err);
/* A connection to the staging engine db, working in SYNC_STAGE_DB. */
knut_status knut_sync__stage_conn(knut_duck_conn **c, knut_duck_db *db, knut_error *err);
void knut_sync__stage_close(knut_duck_db *db, char *spill_dir);
/* Loads file f into staging table "_knut_m<idx>" (after the SQL step) and
 * checks the columns and keys the mapping needs; *rows gets its row count. */
knut_status knut_sync__stage_file(knut_duck_db *db, const knut_sync_table *t, const sync_file *f,
                                  int idx, int64_t *rows, knut_error *err);
/* Unions the staged tables idx[0..n) into "_knut_batch": one file's table
 * is renamed; several are copied into a table or, with as_view, become a
 * view over them (they stay until knut_sync__stage_batch_drop). */
knut_status knut_sync__stage_batch(knut_duck_db *db, const int *idx, size_t n, int as_view,
                                   knut_error *err);
/* unique.c: *unique = 1 when no two rows of "_knut_batch" share the key
 * columns keys[0..n) (exact; 0 also when it cannot tell within memory). */
knut_status knut_sync__batch_keys_unique(knut_duck_db *db, const char *const *keys, size_t n,
                                         int *unique, knut_error *err);
/* Makes a view batch a table (a copy; the staged tables are dropped). */
knut_status knut_sync__stage_batch_table(knut_duck_db *db, knut_error *err);
/* Drops the batch, view or table, and any staged table left. */
void knut_sync__stage_batch_drop(knut_duck_db *db);
/* ---- stage_check.c: clear reasons for bad drop files ---- */
/* KNUT_EINVAL for a file that cannot hold rows (0 bytes). */
knut_status knut_sync__stage_precheck(const sync_file *f, knut_error *err);
/* After f failed to stage with st: KNUT_ENOTFOUND if it vanished (not
 * its fault: pending, not failed); else trims DuckDB's advice and SQL echo
 * off err, and if DuckDB read a CSV as one column because rows have
 * different field counts, names the first such line. Returns the status. */
knut_status knut_sync__stage_explain(knut_duck_conn *c, const sync_file *f, knut_status st,
                                     knut_error *err);
/* KNUT_EINVAL naming the column and row of a NUL byte in a key. */
knut_status knut_sync__stage_check_keys(knut_duck_conn *c, const knut_sync_table *t,
                                        const char *tbl, knut_error *err);
/* Appends to out the union of the staged tables idx[0..n) (UNION ALL BY
 * NAME; a column null in all of a file's rows is left out of that file's
 * part when the files disagree on its type); KNUT_EINVAL when files with
 * values disagree on a column's type (the caller applies them one by one). */
knut_status knut_sync__stage_union(knut_duck_conn *c, const int *idx, size_t n, knut_buf *out,
                                   knut_error *err);
/* Builds the mutation for the table from "_knut_batch" (one staging
 * connection per set so the set streams stay readable together). */
/* The SELECT (over _knut_batch) of vertex step i (edge: edge step i) of t,
 * as map_build streams it, appended to sql: the keys first (*n_keys
 * columns; an edge's are _knut_s0.., then _knut_d0..), then properties.
 * *windowed = 1 when it drops repeated keys with a window (the batch is
 * then a table); 0 when every key occurs once and it is a plain scan. */
knut_status knut_sync__map_step_sql(knut_duck_db *db, const knut_sync_table *t, int edge,
                                    size_t i, knut_buf *sql, size_t *n_keys, int *windowed,
                                    knut_error *err);
knut_status knut_sync__map_build(knut_duck_db *db, const knut_sync_table *t,
                                 knut_graph_mutation **out, knut_error *err);

/* ---- missing.c: edge rows whose endpoint vertex is missing ---- */
/* Parses `missing_endpoints` and `missing_endpoints_timeout` of table n. */
knut_status knut_sync__missing_parse(const knut_conf *n, const char *table, knut_sync_table *t,
                                     knut_error *err);
/* The edge sets' KNUT_GRAPH_MISSING_* for t (wait and fail: FAIL). */
int knut_sync__missing_sink_policy(const knut_sync_table *t);
/* The sink's commit callback around the ledger's: before the entries are
 * written, notes the mutation's skipped edges in their reason. */
typedef struct sync_missing_commit {
    sync_ledger_commit *inner;
    knut_graph_mutation *m;
    sync_entry *entries; /* inner's entries, writable */
    size_t n;
    char *note;          /* the entries' reason points here: it must outlive
                          * the remember after the apply (knut_sync's) */
    size_t note_cap;
} sync_missing_commit;
#define SYNC_MISSING_NOTE_MAX 512
knut_status knut_sync__missing_commit_fn(void *ctx, struct knut_duck_conn *conn, knut_error *err);
/* The note itself: m's skipped edges written into buf, and the done
 * entries' reason pointed at it (unchanged when nothing was skipped). */
void knut_sync__missing_note(knut_graph_mutation *m, sync_entry *entries, size_t n, char *buf,
                             size_t cap);
struct knut_sync;
/* After a committed apply: logs `edges skipped` per edge set that skipped
 * rows (table, type, count, the first missing vertices) and counts them. */
void knut_sync__missing_report(struct knut_sync *s, const knut_sync_table *t,
                               knut_graph_mutation *m);
/* 1 when the apply failure (st, err) of file f is a missing endpoint and
 * t waits for it (pending: nothing recorded); 0 otherwise, and a wait that
 * timed out gets its reason extended in err. */
int knut_sync__missing_wait(const knut_sync_table *t, const sync_file *f, knut_status st,
                            knut_error *err);

/* ---- full_config.c + full.c: mode full ---- */
/* Each full table owns its merge labels and edge types (config rule). */
knut_status knut_sync__full_check(const knut_sync_config *c, knut_error *err);
/* A ledger entry with this status is a file of a full table removed from
 * its snapshot (size -1, no hash: a re-added file syncs again). */
#define SYNC_STATUS_REMOVED "removed"
typedef struct sync_full_result {
    int64_t files, failed, pending, rows;
    knut_graph_sink_stats sink;
} sync_full_result;
struct knut_sync;
/* One round of a full table over its listed files: when a file is new,
 * changed or removed, the whole snapshot is staged, upserted, and what the
 * graph holds beyond it deleted, with the ledger, in one apply. */
knut_status knut_sync__full_table(struct knut_sync *s, const knut_sync_table *t,
                                  sync_file_list *files, sync_full_result *r, knut_error *err);
/* Adds to m the delete sets of t's labels and edge types: what the sink
 * holds that "_knut_batch" (the snapshot, `rows` rows) lacks. */
knut_status knut_sync__full_deletes(struct knut_sync *s, const knut_sync_table *t, int64_t rows,
                                    knut_graph_mutation *m, knut_error *err);

/* ---- step.c: tables whose rows are a source's versions (iceberg.c,
 * spark.c), one changes file per step ---- */
struct knut_sync;
struct sync_table_stats;
/* COPY (sql) TO a new temporary Parquet file in $TMPDIR; its path in *out
 * (malloc'd; the caller unlinks and frees it). COPY streams: memory is
 * DuckDB's budget, not the rows'. */
knut_status knut_sync__step_write(knut_duck_db *db, const char *sql, char **out, knut_error *err);
/* The same on the connection c (sql may read its temporary tables). */
knut_status knut_sync__step_write_on(knut_duck_conn *c, const char *sql, char **out,
                                    knut_error *err);
/* A full apply deletes what the version lacks from t's labels and edge
 * types: mode full's rule (full_config.c) must hold for t as if it were a
 * full table. */
knut_status knut_sync__step_owns(struct knut_sync *s, const knut_sync_table *t, knut_error *err);
/* Stages file (the changes; with full, the whole version), maps it (plus
 * full's deletes) and applies it with the ledger entry {t, key, hash (the
 * version), note}; then removes and frees file. *done = 1 when it
 * committed; a data error or a missing_endpoints wait is logged and
 * counted in ts, records nothing and returns KNUT_OK with *done = 0. */
knut_status knut_sync__step_apply(struct knut_sync *s, const knut_sync_table *t, char *file,
                                  int64_t mtime_ns, int full, const char *key, const char *hash,
                                  const char *note, struct sync_table_stats *ts, int *done,
                                  knut_error *err);
void knut_sync__step_log(knut_log_level lvl, const struct knut_sync *s, const knut_sync_table *t,
                         const char *version, const char *reason, const char *what);

/* ---- source_config.c: what `iceberg:` and `spark:` configs share ---- */
/* KNUT_EINVAL at n: "table 'TABLE': MSG". */
knut_status knut_sync__source_err(knut_error *err, const knut_conf *n, const char *table,
                                  const char *msg);
/* The optional non-empty string map[key] into *out (NULL when absent). */
knut_status knut_sync__source_str(const knut_conf *map, const char *key, const char *table,
                                  const char *source, const char **out, knut_error *err);
/* Refuses the keys that describe files (path, format, columns,
 * sequence_by) next to `source:`; rows says what the table's rows are. */
knut_status knut_sync__source_no_file_keys(const knut_conf *n, const char *table,
                                           const char *prefix, const char *source,
                                           const char *rows, knut_error *err);

/* ---- spark_config.c + spark.c: tables with `spark:` ---- */
/* The ledger entry of a Spark table has the path "spark:<table>". */
#define SYNC_SPARK_KEY_PREFIX "spark:"
/* 1 when a ledger entry's path is a version source's key, not a file. */
int knut_sync__entry_is_source_key(const char *path);
/* Parses table n's `spark:` into t->spark; refuses the keys of file
 * tables next to it. */
knut_status knut_sync__spark_parse(const knut_conf *n, const char *table, const char *dir,
                                   knut_sync_table *t, knut_error *err);
void knut_sync__spark_free(knut_sync_table *t);
/* One round of a Spark table: when its fingerprint is not the one the
 * ledger records, it is read whole into the state folder and what
 * changed since the state last synced (or, with mode: full or that state
 * gone, all of it) is applied with the new fingerprint as the entry. */
knut_status knut_sync__spark_table(struct knut_sync *s, const knut_sync_table *t,
                                   struct sync_table_stats *ts, knut_error *err);
/* spark.c's pieces that spark_changelog.c shares: the session from the
 * table's `spark:` keys; name as Spark SQL (each dot-separated part in
 * backticks when dotted); q run with its parameters (errors name the
 * table); a result read to its end. */
struct knut_spark_session;
knut_status knut_sync__spark_open(const knut_sync_table *t, struct knut_spark_session **out,
                                  knut_error *err);
void knut_sync__spark_ident(knut_buf *q, const char *name, int dotted);
struct knut_spark_param;
knut_status knut_sync__spark_run(struct knut_spark_session *s, const knut_sync_table *t,
                                 const knut_buf *q, const struct knut_spark_param *params,
                                 size_t n, struct ArrowArrayStream *out, knut_error *err);
knut_status knut_sync__spark_drain(struct ArrowArrayStream *rows, knut_error *err);
/* A round of a `changes: changelog` table (spark_changelog.c): Iceberg's
 * changelog view between the recorded snapshot and the current one. */
knut_status knut_sync__spark_changelog_table(struct knut_sync *s, const knut_sync_table *t,
                                             struct sync_table_stats *ts, knut_error *err);
/* `knut sync check`: the table's columns (with _change_type for cdc) as
 * an empty Parquet file, as knut_sync__iceberg_schema_file. */
knut_status knut_sync__spark_schema_file(knut_duck_db *db, const knut_sync_table *t, char **out,
                                         knut_error *err);

/* ---- iceberg_config.c + iceberg.c: tables with `iceberg:` ---- */
/* The ledger entry of an Iceberg table has the path "iceberg:<table or
 * folder>": not a file, never joined to a folder. */
#define SYNC_ICEBERG_KEY_PREFIX "iceberg:"
/* Parses table n's `iceberg:` into t->iceberg (and t->path, the folder
 * watched); refuses the keys of file tables next to it. */
knut_status knut_sync__iceberg_parse(const knut_conf *n, const char *table, const char *dir,
                                     knut_sync_table *t, knut_error *err);
/* After `mode:` is read, for a table of versions (its `key:` "iceberg" or
 * "spark"): cdc without one; incremental refused. */
knut_status knut_sync__source_mode(const knut_conf *n, const char *table, const char *key,
                                   knut_sync_table *t, knut_error *err);
void knut_sync__iceberg_free(knut_sync_table *t);
struct sync_table_stats;
/* One round of an Iceberg table: when its current snapshot is not the one
 * the ledger records, the changelog since that one (or, with mode: full
 * or a broken lineage, the whole snapshot) is applied with the new
 * snapshot id as the ledger entry, in one apply. */
knut_status knut_sync__iceberg_table(struct knut_sync *s, const knut_sync_table *t,
                                     struct sync_table_stats *ts, knut_error *err);
/* `knut sync check`: writes the columns the mapping sees (the current
 * schema's, with _change_type for cdc) as an empty Parquet file; its path
 * in *out (malloc'd; the caller unlinks and frees it). A table that does
 * not load is the error. */
knut_status knut_sync__iceberg_schema_file(knut_duck_db *db, const knut_sync_table *t, char **out,
                                           knut_error *err);
/* Drops the staged files _knut_m0.._knut_m<n-1>, the full deletes' old
 * keys and the batch (full.c). */
void knut_sync__full_drop_staged(struct knut_sync *s, const knut_sync_table *t, size_t n);

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

/* ---- metrics.c: Prometheus counters of the sync (docs/operations.md) ----
 * The counting functions and free accept m == NULL (no metrics); all are
 * thread-safe: the HTTP server thread renders while the round and the
 * asset thread add. */
/* The table label set is fixed from cfg (bounded cardinality). */
knut_status knut_sync__metrics_create(struct sync_metrics **out, const knut_sync_config *cfg,
                                      knut_error *err);
void knut_sync__metrics_free(struct sync_metrics *m);
/* Adds one table's result of a round (unknown tables are ignored). */
void knut_sync__metrics_table(struct sync_metrics *m, const sync_table_result *r);
/* Same with the success time given (the unit test's fixed clock). */
void knut_sync__metrics_table_at(struct sync_metrics *m, const sync_table_result *r,
                                 int64_t wall_us);
/* Counts one round (ok = 0: failed) with its duration. */
void knut_sync__metrics_round(struct sync_metrics *m, const knut_sync_round_stats *st, int ok);
/* Edge rows of table t and edge type skipped for a missing endpoint. */
void knut_sync__metrics_edges_skipped(struct sync_metrics *m, const knut_sync_table *t,
                                      const char *type, int64_t n);
/* Airflow asset events accepted (assets.c's thread). */
void knut_sync__metrics_assets_add(struct sync_metrics *m, int64_t n);
/* Appends the Prometheus text exposition format 0.0.4 to out. */
knut_status knut_sync__metrics_render(struct sync_metrics *m, knut_buf *out, knut_error *err);
/* Serves GET /metrics on addr (IP:PORT) until metrics_free; logs the bound address. */
knut_status knut_sync__metrics_serve(struct sync_metrics *m, const char *addr, knut_error *err);
/* The bound port of the server (0: not serving). */
int knut_sync__metrics_port(struct sync_metrics *m);
/* Renders into file atomically (temp file, fsync, rename). */
knut_status knut_sync__metrics_write_file(struct sync_metrics *m, const char *file,
                                          knut_error *err);

/* ---- config.c: the deployment's name ---- */
/* Longest `name:` (a key part of the shared ledger). */
#define SYNC_NAME_MAX 128
/* The config's `name:`, required by what (e.g. "a shared ledger
 * (--ledger-url)"): without one, KNUT_EINVAL naming file:line of the
 * config and the name that keeps an old deployment's keys. */
knut_status knut_sync__config_name(const knut_sync_config *cfg, const char *what,
                                   const char **out, knut_error *err);

/* ---- ledger_valkey.c: the shared ledger in Valkey/Redis (docs/operations.md) ---- */
/* Parses url (errors never quote it; password, if not NULL, is used when
 * the URL has none), names the keys after the config's `name:`
 * ("knut:sync:<name>:", required); no I/O yet. lease_ms 0: 30000. */
knut_status knut_sync__valkey_open(struct sync_valkey **out, const char *url,
                                   const char *password, const knut_sync_config *cfg,
                                   const char *instance, int64_t lease_ms, knut_error *err);
/* Releases a lease still held, stops the renewal thread. NULL-safe. */
void knut_sync__valkey_close(struct sync_valkey *v);
/* Opens l on the shared hash: every entry loaded; writes go to the hash. */
knut_status knut_sync__ledger_open_valkey(sync_ledger *l, struct sync_valkey *v, knut_error *err);
/* Loads the hash's entries of table (NULL: all) into l (replacing). */
knut_status knut_sync__valkey_load(struct sync_valkey *v, sync_ledger *l, const char *table,
                                   knut_error *err);
/* Takes the table's lease and re-reads its entries; *skip = 1 (logged,
 * not an error) when another instance holds it. */
knut_status knut_sync__valkey_table_begin(struct sync_valkey *v, sync_ledger *l,
                                          const char *table, int *skip, knut_error *err);
/* Releases the lease taken by table_begin (compare, then DEL). */
void knut_sync__valkey_table_end(struct sync_valkey *v);
/* KNUT_ECANCELLED (and a warning) if the lease was lost: stop, do not commit. */
knut_status knut_sync__valkey_lease_check(struct sync_valkey *v, knut_error *err);
/* The fenced ledger write: HSETs the entries only while the lease is ours. */
knut_status knut_sync__valkey_write(struct sync_valkey *v, const sync_entry *e, size_t n,
                                    knut_error *err);

/* ---- ledger_falkor.c: the ledger in the FalkorDB server, committed with
 * the graph in MULTI/EXEC (docs/sync.md "Exactly once into FalkorDB") ---- */
/* `ledger: falkordb` (config) or `--ledger falkordb`. */
#define SYNC_LEDGER_FALKORDB "falkordb"
/* The shared-ledger URL to use: ledger_url, or the FalkorDB URL when
 * `ledger` is SYNC_LEDGER_FALKORDB (NULL: none); *in_falkor = 1 when that
 * server is the FalkorDB server (same host and port). */
knut_status knut_sync__ledger_url(const knut_sync_options *o, const char *ledger,
                                  const char **url, int *in_falkor, knut_error *err);
struct knut_sync;
/* Applies m to the sink with entries e[0..n) as its ledger commit: with
 * the ledger in the FalkorDB server, in the mutation's last MULTI/EXEC
 * (fenced by the table's lease); else through the sink's commit callback. */
knut_status knut_sync__ledger_apply(struct knut_sync *s, knut_graph_mutation *m,
                                    const sync_entry *e, size_t n, knut_graph_sink_stats *stats,
                                    knut_error *err);
/* After the table's lease is taken: undoes a commit whose outcome was not
 * seen (its journal is still there), in the server and in memory. */
knut_status knut_sync__ledger_recover(struct knut_sync *s, const char *table, knut_error *err);

/* ---- assets.c: Airflow asset events (docs/operations.md) ---- */
/* With o->airflow_url: starts the sender thread (no request yet); else
 * *out = NULL. metrics (may be NULL) counts the events sent. */
knut_status knut_sync__assets_open(struct sync_assets **out, const knut_sync_config *cfg,
                                   const knut_sync_options *o, struct sync_metrics *metrics,
                                   knut_error *err);
/* Queues one event per result that is ok with files > 0; never blocks on
 * Airflow, never fails (problems are logged, target "assets"). a may be NULL. */
void knut_sync__assets_round(struct sync_assets *a, const sync_table_result *r, size_t n);
/* Gives queued events a bounded time to go out, logs the rest dropped. */
void knut_sync__assets_close(struct sync_assets *a);
/* 0 if uri is an Airflow asset URI knut can match exactly, else -1 and why. */
int knut_sync__asset_uri_check(const char *uri, char *why, size_t n);

/* ---- lineage.c: OpenLineage run events (docs/lineage.md) ---- */
struct sync_lineage;
/* With o->lineage_url or o->lineage_file: starts the sender (no request
 * yet); else *out = NULL. */
knut_status knut_sync__lineage_open(struct sync_lineage **out, const knut_sync_config *cfg,
                                    const knut_sync_options *o, knut_error *err);
/* A table's turn ended: its run's START and COMPLETE or FAIL, when it read
 * or failed anything. Never blocks, never fails. l may be NULL. */
void knut_sync__lineage_table(struct sync_lineage *l, const sync_table_result *r);
/* Gives queued events a bounded time to go out, logs the rest dropped. */
void knut_sync__lineage_close(struct sync_lineage *l);

/* ---- sync.c ---- */
/* ---- rounds (round.c) and the bulk first round (bulk.c) ---- */

/* Files staged per table and round; the rest wait for the next round, so
 * the staging engine holds a bounded number of files. */
#define SYNC_MAX_FILES_PER_ROUND 64

typedef struct sync_table_stats {
    int64_t files, failed, pending, rows;
    knut_graph_sink_stats sink;
    int apply_failed;
    const char *path; /* how the rows went in: "bulk" (GRAPH.BULK) or "merge" */
} sync_table_stats;

/* The good files of a table's round after staging. */
typedef struct sync_staged {
    size_t n_good, good_pos[SYNC_MAX_FILES_PER_ROUND];
    int good_idx[SYNC_MAX_FILES_PER_ROUND];
    sync_entry done[SYNC_MAX_FILES_PER_ROUND];
    int64_t rows_total;
} sync_staged;

struct knut_sync;
/* The table's files to stage this round (round.c). */
knut_status knut_sync__round_pick(struct knut_sync *s, const knut_sync_table *t,
                                  sync_file_list *files, size_t *cand, size_t *n_cand,
                                  sync_table_stats *ts, knut_error *err);
/* Stages files[cand[0..n)]: a bad file is recorded failed, a vanished one
 * counted pending; the good ones land in *out with their done entries. */
knut_status knut_sync__round_stage(struct knut_sync *s, const knut_sync_table *t,
                                   sync_file_list *files, const size_t *cand, size_t n,
                                   sync_table_stats *ts, sync_staged *out, knut_error *err);
/* Drops the round's staged batch of a table. */
void knut_sync__round_drop_batch(struct knut_sync *s);
/* After table i's turn: the log record, metrics, assets, the round's sums. */
void knut_sync__round_table_done(struct knut_sync *s, size_t i, sync_table_stats *ts,
                                 int64_t dur_us, knut_status st, const char *error,
                                 knut_sync_round_stats *out);
/*
 * The first round at bulk speed (bulk.c): when the FalkorDB graph does not
 * exist, the longest prefix of the round's tables that can be written with
 * GRAPH.BULK is, into a temporary key renamed onto the graph at the end;
 * their files are recorded done after the rename. *next gets the index in
 * the round's order where the MERGE path goes on (0: no bulk, the whole
 * round as usual). A bulk that fails leaves nothing behind and no file
 * recorded done; the round then runs as usual. Files that failed staging
 * are recorded failed either way, and the MERGE path will not pick them
 * again: failed[i] (n_tables, zeroed by the caller) gets their count for
 * each table i that goes the MERGE way, to count in its round.
 */
knut_status knut_sync__bulk_round(struct knut_sync *s, knut_sync_round_stats *out, size_t *next,
                                  int64_t *failed, knut_error *err);

/* ---- status_file.c: the status snapshot a running sync writes (docs/sync.md
 * "Inspecting a running sync") ---- */
/* What the sync knows of a table beyond the ledger, kept in the snapshot
 * so a restart and `knut sync status` see it too. */
typedef struct sync_table_note {
    char *table;
    int64_t last_success_us; /* wall clock of the last round that synced files; 0: none */
    int64_t edges_skipped;   /* edge rows skipped for a missing endpoint, all rounds */
} sync_table_note;
/* The snapshot's name: "<store or ledger file>.status.json". */
#define SYNC_STATUS_SUFFIX ".status.json"
/* Sets s->status_file beside the ledger (NULL for a shared ledger, which
 * several instances write: status reads it directly), makes s->notes for
 * s->cfg's tables and takes the notes of a previous snapshot, if any. */
knut_status knut_sync__status_file_init(struct knut_sync *s, const char *beside, knut_error *err);
/* Rewrites the snapshot (temp, fsync, rename) when the ledger or the notes
 * changed since the last write; a failure is logged once, never fatal. */
void knut_sync__status_file_write(struct knut_sync *s);
/* Reads the snapshot file: its pid, round and time, the notes into
 * s->notes (by table name), and with l its ledger entries (KNUT_EPARSE if
 * it has none: a FalkorDB sync's snapshot). KNUT_ENOTFOUND: no file. */
knut_status knut_sync__status_file_read(struct knut_sync *s, const char *file,
                                        struct sync_ledger *l, int64_t *pid, knut_error *err);
/* The note of table (NULL: not one of the config's). */
sync_table_note *knut_sync__note(struct knut_sync *s, const char *table);
void knut_sync__notes_free(sync_table_note *n, size_t count);
/* ---- status.c: opening for `knut sync status` (read-only) ---- */
knut_status knut_sync__status_open(struct knut_sync *s, const knut_sync_options *o,
                                   knut_error *err);
/* round.c: the progress callback's counters of the round running */
typedef struct sync_progress_state {
    int64_t t0, files, rows, files_done;
} sync_progress_state;
/* Calls the progress callback (if any) with the counters of the round. */
void knut_sync__progress(struct knut_sync *s, const char *table, int done);

struct knut_sync {
    struct sync_metrics *metrics; /* NULL: none */
    char *metrics_file;           /* written on close; NULL: none */
    struct sync_assets *assets;   /* NULL: no Airflow */
    struct sync_lineage *lineage; /* NULL: no OpenLineage */
    struct sync_valkey *valkey;   /* NULL: local ledger */
    int falkor_ledger;            /* valkey is the FalkorDB server: commit in MULTI/EXEC */
    const knut_sync_config *cfg;
    knut_graph_store *store;
    knut_graph_falkor *falkor;
    char *graph;               /* FalkorDB: the graph's key */
    int no_bulk;               /* bulk.c: no bulk first round (option, or it failed) */
    knut_graph_sink *sink;     /* store's sink or the FalkorDB sink */
    knut_duck_db *stage;       /* engine for reading files: the store's own
                                * instance (stage_shared), or a standalone one */
    int stage_shared;
    char *stage_spill;         /* its spill directory */
    sync_ledger ledger;
    int64_t round;
    sync_order order; /* order.c: the tables' order in a round */
    char missing_note[SYNC_MISSING_NOTE_MAX]; /* missing.c: the last apply's note */
    unsigned char *no_files; /* check.c: per table, 1 while its path matches no file
                              * (warned once); NULL until first needed */
    /* status_file.c, status.c */
    char *status_file;        /* the snapshot this sync writes; NULL: none */
    uint64_t status_gen;      /* ledger.gen when last written (+1: never written) */
    int status_dirty;         /* notes changed since the last write */
    int status_warned;        /* a failed write was logged */
    sync_table_note *notes;   /* per config table (s->cfg order) */
    size_t n_notes;
    const char *status_kind;  /* status: "store", "store snapshot", "ledger file", ... */
    char *status_path;        /* status: what was read */
    int64_t status_pid, status_updated_us;
    /* round.c */
    int64_t idle_log_ns;      /* the loop's interval: an idle round logs once per it at
                               * most, idle tables at debug; 0 (one round): every table */
    int64_t last_idle_log_ns; /* when the last idle round was logged; 0: never */
    knut_sync_progress_fn progress;
    void *progress_ctx;
    sync_progress_state prog;
};

/* ---- check.c: at run time ---- */
/* Logs a warning the first round a table's path matches no file (and
 * again only after files came and went): a typo in `path:` is otherwise
 * an idle round that says nothing. */
void knut_sync__no_files_note(struct knut_sync *s, const knut_sync_table *t, size_t n_files);

#endif
