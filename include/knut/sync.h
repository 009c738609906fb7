/*
 * knut sync: the main job. Keeps a property graph in step with tables of
 * Parquet/CSV drops. A YAML mapping (knut_sync_config) says, per table,
 * where its files are, how rows arrive (mode) and which vertices and edges
 * they become; a round (knut_sync_round) finds the table's new or changed
 * files, reads them with DuckDB, maps them into one knut_graph_mutation per
 * table and applies it through a knut_graph_sink together with the ledger
 * of done files: inside the embedded store's transaction (exactly once) or,
 * for FalkorDB, into a local ledger file after the server acknowledged
 * (idempotent MERGE makes a replay harmless). knut_sync_run is the round
 * loop with backoff and clean stopping on SIGINT/SIGTERM.
 */
#ifndef KNUT_SYNC_H
#define KNUT_SYNC_H

#include <stddef.h>
#include <stdint.h>

#include "knut/core.h"
#include "knut/graph_map.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- mapping config (src/sync/config.c) ---- */

typedef enum knut_sync_mode {
    KNUT_SYNC_MODE_INCREMENTAL = 0, /* rows are upserted */
    KNUT_SYNC_MODE_CDC,             /* rows carry _change_type */
    KNUT_SYNC_MODE_FULL             /* the files are the whole table: what they
                                     * lack is deleted (docs/sync.md) */
} knut_sync_mode;

typedef enum knut_sync_format {
    KNUT_SYNC_FORMAT_AUTO = 0, /* by extension: .parquet/.pq, .csv */
    KNUT_SYNC_FORMAT_PARQUET,
    KNUT_SYNC_FORMAT_CSV
} knut_sync_format;

/* The CDC tag column; it never reaches the graph. */
#define KNUT_SYNC_CHANGE_COLUMN "_change_type"

/*
 * Everything below is read-only for callers and owned by the config.
 * Strings point into the config's YAML tree, whose nodes (`node`) give
 * file:line:col for error messages at run time too.
 */
/* The steps: the mapping syntax shared with pipeline graph sinks
 * (knut/graph_map.h, src/graph/map_conf.c). */
typedef knut_graph_map_prop knut_sync_prop;
typedef knut_graph_map_vertex knut_sync_vertex_step;
typedef knut_graph_map_endpoint knut_sync_endpoint;
typedef knut_graph_map_edge knut_sync_edge_step;
typedef knut_graph_map_fk knut_sync_fk_step;

/* `missing_endpoints:` what an edge row whose endpoint vertex does not
 * exist does (docs/sync.md "Missing endpoints"). */
typedef enum knut_sync_missing {
    KNUT_SYNC_MISSING_WAIT = 0, /* the default (full mode: skip): pending, then failed */
    KNUT_SYNC_MISSING_SKIP,     /* the edge is left out, counted */
    KNUT_SYNC_MISSING_FAIL      /* the file fails, naming the missing vertex */
} knut_sync_missing;
/* `missing_endpoints_timeout:` default, seconds. */
#define KNUT_SYNC_MISSING_TIMEOUT_DEFAULT_S 3600

/* One entry of a table's `columns:`: the files' column and the type they
 * are read as (DuckDB's own name for it, e.g. "INT" becomes "INTEGER"). */
typedef struct knut_sync_column {
    const char *name;
    char *type;       /* owned */
    const void *node; /* const knut_conf *: the entry's value */
} knut_sync_column;

/* `iceberg:` a table that follows an Iceberg table's snapshots instead of
 * files (src/sync/iceberg.c, docs/sync.md "Iceberg tables"). */
typedef struct knut_sync_iceberg {
    char *catalog;            /* `catalog:` the SQLite SQL catalog, resolved; NULL: `path:` form */
    const char *catalog_name; /* `catalog_name:`; NULL: "default" */
    const char *identifier;   /* `table:` "namespace.name" (catalog form) */
    char *path;               /* `path:` table folder or metadata file, resolved; or NULL */
    char *key;                /* the ledger entry's path: "iceberg:<table or path>" */
    const void *node;         /* the `iceberg:` map */
} knut_sync_iceberg;

/* `spark:` a table read through Spark Connect, its changes found by
 * comparing it with the state last synced (src/sync/spark.c, docs/sync.md
 * "Spark tables"). */
typedef struct knut_sync_spark {
    const char *connect;    /* `connect:` sc://...; NULL: $SPARK_REMOTE */
    const char *table;      /* `table:` [catalog.]db.name (each part quoted for Spark) */
    char *token_file;       /* `token_file:` resolved; NULL: $SPARK_CONNECT_AUTHENTICATE_TOKEN
                             * or the URL's ;token= */
    char *ca_file;          /* `ca_file:` resolved, or NULL */
    int allow_insecure_token; /* `allow_insecure_token:` */
    char *state;            /* `state:` the folder of the last synced states, resolved */
    int changelog;          /* `changes: changelog`: Iceberg's changelog view (else compare) */
    char *key;              /* the ledger entry's path: "spark:<table>" */
    const void *node;       /* the `spark:` map */
} knut_sync_spark;

typedef struct knut_sync_table {
    const char *name;
    char *path;            /* directory or glob, resolved against the config's folder;
                            * an Iceberg table: the folder watched for commits */
    knut_sync_format format;
    knut_sync_mode mode;
    const char *sql;       /* optional DuckDB SQL over the view `input` */
    knut_sync_vertex_step *vertices;
    size_t n_vertices;
    knut_sync_edge_step *edges;
    size_t n_edges;
    knut_sync_fk_step *fk_edges;
    size_t n_fk_edges;
    const void *node;      /* the table's map */
    const char *asset;     /* `asset:` Airflow asset URI, or NULL: knut://<graph>/<table> */
    const char *sequence_by; /* cdc: the column ordering the events (then file, row); or NULL */
    knut_sync_missing missing_endpoints; /* an edge row whose endpoint vertex is missing */
    int64_t missing_timeout_ms;          /* wait: how long after the file's mtime */
    knut_sync_column *columns; /* `columns:` the declared schema of the files, or NULL */
    size_t n_columns;
    knut_sync_iceberg *iceberg; /* `iceberg:` (then no files: mode cdc or full), or NULL */
    knut_sync_spark *spark;     /* `spark:` (then no files: mode cdc or full), or NULL */
} knut_sync_table;

typedef struct knut_sync_config {
    char *file;            /* the config file as given */
    char *store;           /* `store:` resolved, or NULL */
    char *ledger;          /* `ledger:` resolved, or NULL */
    const char *name;      /* `name:` the deployment's name, or NULL: the shared
                            * ledger's key namespace (knut:sync:<name>:...) */
    knut_sync_table *tables;
    size_t n_tables;
    knut_conf *root;
} knut_sync_config;

/*
 * Loads and validates a sync.yml. Every mistake is one error naming
 * file:line:col, the table and the key or column (unknown keys too).
 * Relative paths are resolved against the config file's folder. The file
 * is read through knut_conf_load_file (capped at KNUT_CONF_MAX_BYTES; its
 * errors as there); a mistake is KNUT_EINVAL (a missing key
 * KNUT_ENOTFOUND), its position also in err->line and err->col. The caller
 * frees *out with knut_sync_config_free (NULL-safe); on error it is NULL.
 */
KNUT_EXTERN knut_status knut_sync_config_load(knut_sync_config **out, const char *path,
                                              knut_error *err);
/* Same from text (borrowed); name is used in messages and dir (NULL: ".")
 * resolves paths. */
KNUT_EXTERN knut_status knut_sync_config_parse(knut_sync_config **out, const char *text, size_t len,
                                               const char *name, const char *dir, knut_error *err);
KNUT_EXTERN void knut_sync_config_free(knut_sync_config *cfg);

/* ---- sync: sinks, ledgers, rounds (src/sync/sync.c, round.c) ---- */

typedef struct knut_sync knut_sync;

/* A long round's progress, reported after each file read and each table
 * applied (and once with done = 1 when the round ends). */
typedef struct knut_sync_progress {
    int64_t round;
    const char *table;  /* the table being worked on (borrowed), or NULL */
    int64_t files;      /* files read this round so far */
    int64_t rows;       /* their rows */
    int64_t files_done; /* files committed this round so far */
    int64_t elapsed_ns; /* since the round began */
    int done;           /* 1: the round has ended */
} knut_sync_progress;
typedef void (*knut_sync_progress_fn)(const knut_sync_progress *p, void *ctx);

#define KNUT_SYNC_OPTIONS_VERSION 1
typedef struct knut_sync_options {
    int version;              /* KNUT_SYNC_OPTIONS_VERSION */
    const char *store;        /* embedded store file; NULL: config `store:` */
    const char *falkordb_url; /* redis://...: sink to FalkorDB instead */
    const char *graph;        /* FalkorDB graph name; NULL: "knut" */
    const char *ledger;       /* FalkorDB ledger file; NULL: config `ledger:`,
                               * else "<config>.ledger.json" */
    int status_only;          /* 1: open the ledger only (knut sync status) */
    /* shared ledger (src/sync/ledger_valkey.c) */
    const char *ledger_url;   /* redis://...: the ledger in a Valkey/Redis hash,
                               * with a lease per table; NULL: local ledger */
    const char *instance;     /* lease owner id; NULL: hostname:pid */
    int64_t lease_ms;         /* lease time to live; 0: 30000 */
    /* metrics (src/sync/metrics.c) */
    const char *metrics_file; /* Prometheus text written atomically on close */
    const char *metrics_addr; /* IP:PORT serving live /metrics */
    /* Airflow asset events (src/sync/assets.c) */
    const char *airflow_url;  /* http://host:port of the Airflow API server */
    const char *airflow_user;
    const char *airflow_password; /* a secret: never logged */
    int64_t airflow_drain_ms; /* time unsent events get at close; 0: 5000 */
    const char *memory_limit; /* embedded store's DuckDB memory_limit ("1GB");
                               * NULL: 256MB (a large apply spills past it) */
    int64_t txn_rows;         /* embedded store: rows per transaction of a large
                               * upsert-only apply; 0: 1000000 */
    int64_t falkordb_timeout_ms; /* each FalkorDB socket read/write; 0: 300000;
                                  * < 0: none. A hung server then fails the
                                  * round (backoff) instead of holding it. */
    /* Passwords when their URLs hold none (secrets: never logged; a
     * password both here and in the URL: the URL's wins) */
    const char *falkordb_password;
    const char *ledger_password;
    int no_bulk; /* 1: no GRAPH.BULK first round into FalkorDB (docs/sync.md) */
    /* with status_only: open nothing for writing (`knut sync status`): the
     * store read-only, or the snapshot of the sync that holds it; the
     * ledger file of a FalkorDB sync without falkordb_url */
    int read_only;
    knut_sync_progress_fn progress; /* NULL: none */
    void *progress_ctx;
    /* 1: write no status snapshot beside the store or ledger (`knut load`:
     * a one-shot run that nothing watches, whose ledger may be temporary) */
    int no_status_file;
    /* OpenLineage run events (src/sync/lineage.c, docs/lineage.md): to
     * lineage_url ({url}/{endpoint}) or appended to lineage_file */
    const char *lineage_url;
    const char *lineage_file;
    const char *lineage_endpoint;  /* NULL: "api/v1/lineage" */
    const char *lineage_api_key;   /* a secret: never logged; NULL: none */
    const char *lineage_namespace; /* the jobs' namespace; NULL: "knut" */
    int64_t lineage_drain_ms;      /* time unsent events get at close; 0: 5000 */
} knut_sync_options;
#define KNUT_SYNC_OPTIONS_INIT {.version = KNUT_SYNC_OPTIONS_VERSION}

/* Opens the sink and the ledger for cfg (borrowed: it must outlive the
 * sync); opts may be NULL (read during the call only). The caller frees *out with knut_sync_close (NULL-safe). Errors:
 * KNUT_EINVAL (options that do not fit the config), the store's or the
 * FalkorDB client's open errors, the ledger's (a ledger file that does not
 * load: KNUT_EPARSE / KNUT_ETOOBIG past its 256 MiB cap; Valkey: KNUT_EIO,
 * KNUT_EPEER), KNUT_ENOMEM. One thread drives a sync. */
KNUT_EXTERN knut_status knut_sync_open(knut_sync **out, const knut_sync_config *cfg,
                                       const knut_sync_options *opts, knut_error *err);
KNUT_EXTERN void knut_sync_close(knut_sync *s);

typedef struct knut_sync_round_stats {
    int64_t round;          /* round id (persisted: ledger max + 1) */
    int64_t files_done;     /* files committed this round */
    int64_t files_failed;   /* bad files recorded failed this round */
    int64_t files_pending;  /* seen but not stable yet */
    int64_t tables_failed;  /* tables whose apply failed (nothing recorded) */
    int64_t rows, vertices, edges, deletes;
    int64_t duration_us;
    int64_t edges_deleted;  /* edge deletes + edges removed with their vertices */
} knut_sync_round_stats;

/*
 * One round over every table, in the order derived from the mapping
 * (tables writing edges after the tables of their endpoint labels; a table
 * whose dependency failed or was skipped is held back). Bad files are
 * recorded failed and do not fail the round's return value; a table whose
 * apply fails is logged and counted in tables_failed, and ends the round
 * (later tables, which may hold edges to its vertices, wait for the next
 * round). Returns an error only when the round could not run at all (the
 * ledger or the sink failed outside a table, KNUT_ENOMEM). Logs one JSON
 * record per table and one per round (target "sync"). out (may be NULL)
 * gets the counts.
 */
KNUT_EXTERN knut_status knut_sync_round(knut_sync *s, knut_sync_round_stats *out, knut_error *err);

/* The wait after a round (ns): reset to interval on progress, else doubled
 * (failed or idle) up to max_backoff. */
KNUT_EXTERN int64_t knut_sync_backoff_next(int64_t wait, int64_t interval, int64_t max_backoff,
                                           int progress);

#define KNUT_SYNC_RUN_OPTIONS_VERSION 1
typedef struct knut_sync_run_options {
    int version;           /* KNUT_SYNC_RUN_OPTIONS_VERSION */
    int64_t interval_ns;   /* 0: 10 s */
    int64_t max_backoff_ns;/* 0: 10 x interval */
    int once;              /* 1: one round */
    /* Called between rounds after a SIGHUP (knut_signal_install_reload):
     * the caller reads its config again and calls knut_sync_reload. */
    void (*reload)(knut_sync *s, void *ctx);
    void *reload_ctx;
} knut_sync_run_options;
#define KNUT_SYNC_RUN_OPTIONS_INIT {.version = KNUT_SYNC_RUN_OPTIONS_VERSION}

/*
 * The round loop: runs rounds until a stop is requested
 * (knut_signal_stop_requested), waiting between them (woken early by
 * inotify when a watched table folder changes). A stop never interrupts a
 * round. *errors (may be NULL) gets the number of rounds with errors
 * (bad files, failed tables); with once, that of the one round. Errors:
 * those knut_sync_round returns, which end the loop; o may be NULL.
 */
KNUT_EXTERN knut_status knut_sync_run(knut_sync *s, const knut_sync_run_options *o, int64_t *errors,
                                      knut_error *err);

/* One file of `knut sync status`. state: "done", "failed" or "pending". */
typedef struct knut_sync_file_status {
    const char *table;
    const char *path;
    const char *state;
    const char *reason; /* failed: why; done: a note (edges skipped) or NULL */
    int64_t rows;
    int64_t round;
} knut_sync_file_status;

typedef void (*knut_sync_status_fn)(const knut_sync_file_status *st, void *ctx);

/* Reports every ledger entry and every pending file of every table to fn
 * (each status and its strings borrowed for the call); errors from listing
 * a table's folder (KNUT_EIO naming it). */
KNUT_EXTERN knut_status knut_sync_status(knut_sync *s, knut_sync_status_fn fn, void *ctx,
                                         knut_error *err);

/* Where `knut sync status` read (sync opened with status_only). */
typedef struct knut_sync_status_source {
    const char *kind;   /* "store" (read-only), "store snapshot" (of a running
                         * sync), "ledger file", "shared ledger", "none" (no
                         * store yet) */
    const char *path;   /* the file read, or the shared ledger's config name */
    int64_t pid;        /* store snapshot: the running sync's process id; else 0 */
    int64_t round;      /* the last round the ledger records */
    int64_t updated_us; /* store snapshot: when it was written; else 0 */
} knut_sync_status_source;
KNUT_EXTERN void knut_sync_status_source_get(const knut_sync *s, knut_sync_status_source *out);

/* One table's summary in `knut sync status`. */
typedef struct knut_sync_table_status {
    const char *table;
    int64_t done, failed, pending; /* files, each in its latest state */
    int64_t rows;                  /* rows of the done files */
    int64_t last_success_us;       /* its last round that synced files; 0: unknown */
    int64_t edges_skipped;         /* edge rows skipped (missing endpoint); -1: unknown */
} knut_sync_table_status;
typedef void (*knut_sync_table_status_fn)(const knut_sync_table_status *st, void *ctx);

/* As knut_sync_status, each file once in its latest state (a recorded
 * file changed since is pending), and after each table's files table_fn
 * (may be NULL) with its summary. */
KNUT_EXTERN knut_status knut_sync_status_tables(knut_sync *s, knut_sync_status_fn file_fn,
                                                knut_sync_table_status_fn table_fn, void *ctx,
                                                knut_error *err);

/*
 * Takes cfg (borrowed, as at open) in place of the sync's config between
 * rounds: tables, steps and modes may change; the store, the ledger and
 * `name:` may not (KNUT_EINVAL: a restart uses another sink). opts are
 * those of the open (for the Airflow sender, restarted on the new
 * tables). On error the old config stays in use and nothing changed; on
 * success the caller may free the old config.
 */
KNUT_EXTERN knut_status knut_sync_reload(knut_sync *s, const knut_sync_config *cfg,
                                         const knut_sync_options *opts, knut_error *err);

/* `knut sync retry` (src/sync/retry.c). */
#define KNUT_SYNC_RETRY_OPTIONS_VERSION 1
typedef struct knut_sync_retry_options {
    int version;      /* KNUT_SYNC_RETRY_OPTIONS_VERSION */
    const char *table; /* only this table; NULL: every table */
    const char *file;  /* only this file (as the ledger or status names it); NULL: all */
    int skip;          /* 1: mark them done without reading them (a cdc table's
                        * changelog then goes on past them); 0: re-queue them */
} knut_sync_retry_options;
#define KNUT_SYNC_RETRY_OPTIONS_INIT {.version = KNUT_SYNC_RETRY_OPTIONS_VERSION}

/*
 * Re-queues the failed files that match o (the next round reads them as
 * changed files), or with o->skip marks them done unread. *n gets their
 * number. Works on a sync opened with status_only (the ledger alone); with
 * a shared ledger, each table's entries change under its lease
 * (KNUT_EAGAIN while another instance holds it). KNUT_ENOTFOUND: no such
 * table.
 */
KNUT_EXTERN knut_status knut_sync_retry(knut_sync *s, const knut_sync_retry_options *o,
                                        int64_t *n, knut_error *err);

/* ---- checking a config without syncing (src/sync/check.c, check_graph.c) ---- */

/* One problem `knut sync check` found. Every string is borrowed for the
 * callback; table, file and column are NULL when they do not apply. */
typedef struct knut_sync_problem {
    const char *kind;    /* "path", "format", "column", "type", "sql", "read",
                          * "label", "keys", "ledger", "store", "peer" */
    const char *table;
    const char *file;    /* the data file (or the store / ledger file) */
    const char *column;
    const char *message; /* the whole problem, one line */
} knut_sync_problem;

typedef void (*knut_sync_problem_fn)(const knut_sync_problem *p, void *ctx);

/*
 * Checks cfg for the sink opts chooses (store, falkordb_url, ledger;
 * opts may be NULL: the embedded store of the config) and writes
 * nothing: every table's `path:` matches a file and agrees with
 * `format:`; the first file of each table is read, its `sql:` step
 * run, every mapped column present with a type the sink can store;
 * labels that edges use are written by some table; a label is merged on
 * the same keys by every table (and found by edges on them); the store
 * or the ledger file can be written (access(2) only) and the FalkorDB
 * server answers. Each problem goes to fn (may be NULL); *problems (may
 * be NULL) gets their number. Errors only when the check could not run
 * (KNUT_ENOMEM, the staging engine).
 */
KNUT_EXTERN knut_status knut_sync_check(const knut_sync_config *cfg,
                                        const knut_sync_options *opts, knut_sync_problem_fn fn,
                                        void *ctx, int64_t *problems, knut_error *err);

#ifdef __cplusplus
}
#endif

#endif /* KNUT_SYNC_H */
