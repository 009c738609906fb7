/*
 * knut pipeline (þund): declarative pipelines run natively on DuckDB.
 *
 * A pipeline is a spec file (YAML, in the spirit of spark-pipeline.yml:
 * name, storage, catalog, schema, configuration, libraries globbing SQL
 * files) plus SQL files of CREATE MATERIALIZED VIEW / STREAMING TABLE /
 * TEMPORARY VIEW / FLOW statements. The project parses the statement
 * headers (names, constraints, flow kinds, CDC clauses) into the IR below;
 * the query bodies are handed to DuckDB, whose own parser
 * (json_serialize_sql) names the tables each query reads, so the
 * dependency graph never comes from regexes.
 *
 * The IR structs are plain data owned by their knut_pipeline: every
 * string and array in them belongs to it and lives until
 * knut_pipeline_free. Positions are the file and 1-based line and column
 * (bytes) of the statement or clause they came from.
 */
#ifndef KNUT_PIPELINE_H
#define KNUT_PIPELINE_H

#include <stddef.h>
#include <stdint.h>

#include "knut/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Caps on what a spec may hold: SQL bytes per file, files, statements,
 * expectations per dataset. */
#define KNUT_PIPELINE_SQL_MAX_BYTES ((size_t)4 << 20)
#define KNUT_PIPELINE_MAX_FILES 4096
#define KNUT_PIPELINE_MAX_STATEMENTS 16384
#define KNUT_PIPELINE_MAX_EXPECTATIONS 256 /* per dataset */
/* Files one update of a streaming flow reads at most (per source); more
 * are read by further updates in the same run. The spec's configuration
 * key knut.max_files_per_update lowers it. */
#define KNUT_PIPELINE_FILES_PER_UPDATE 10000

/* Where a piece of the spec came from. */
typedef struct knut_pipeline_pos {
    const char *file;
    int line, col;
} knut_pipeline_pos;

typedef enum knut_pipeline_dataset_kind {
    KNUT_PIPELINE_STREAMING_TABLE,
    KNUT_PIPELINE_MATERIALIZED_VIEW,
    KNUT_PIPELINE_TEMPORARY_VIEW,
    KNUT_PIPELINE_SINK /* a graph sink: the spec's `sinks:` (docs/pipelines.md) */
} knut_pipeline_dataset_kind;

typedef enum knut_pipeline_flow_kind {
    KNUT_PIPELINE_FLOW_BATCH,       /* recomputed (materialized view, temporary view) */
    KNUT_PIPELINE_FLOW_APPEND_ONCE, /* INSERT INTO ONCE: runs once, again on full refresh */
    KNUT_PIPELINE_FLOW_STREAMING,   /* appends only input new since the last run */
    KNUT_PIPELINE_FLOW_CDC          /* AUTO CDC INTO / APPLY CHANGES INTO */
} knut_pipeline_flow_kind;

typedef enum knut_pipeline_action {
    KNUT_PIPELINE_WARN,       /* keep the row, count it */
    KNUT_PIPELINE_DROP,       /* ON VIOLATION DROP ROW */
    KNUT_PIPELINE_FAIL,       /* ON VIOLATION FAIL UPDATE */
    KNUT_PIPELINE_QUARANTINE  /* ON VIOLATION QUARANTINE: to <target>__quarantine */
} knut_pipeline_action;

/* CONSTRAINT name EXPECT (constraint) or EXPECT UNIQUE (cols). A row
 * passes when the constraint is TRUE or NULL, fails when it is FALSE. */
typedef struct knut_pipeline_expectation {
    const char *name;
    const char *constraint;   /* SQL boolean expression; NULL for UNIQUE */
    const char **unique_cols; /* EXPECT UNIQUE (cols); NULL otherwise */
    size_t nunique;
    knut_pipeline_action action;
    knut_pipeline_pos pos;
} knut_pipeline_expectation;

/* A list of column names (COLUMNS / TRACK HISTORY ON), or "* EXCEPT". */
typedef struct knut_pipeline_cols {
    const char **names;
    size_t n;
    int except; /* 1: every column but names; 0 with n == 0: not given */
} knut_pipeline_cols;

/* The clauses of AUTO CDC INTO / APPLY CHANGES INTO (semantics:
 * docs/pipelines.md, "CDC"). */
typedef struct knut_pipeline_cdc {
    const char *source; /* the FROM name */
    int source_stream;  /* FROM STREAM(source) */
    const char **keys;
    size_t nkeys;
    const char *sequence_by;   /* expression text (a column or STRUCT(...)) */
    const char *delete_when;   /* APPLY AS DELETE WHEN; NULL: none */
    const char *truncate_when; /* APPLY AS TRUNCATE WHEN; NULL: none */
    int scd_type;              /* 1 or 2 */
    int ignore_null_updates;
    knut_pipeline_cols columns;
    knut_pipeline_cols track_history;
    /* AUTO CDC INTO t FROM SNAPSHOT source (docs/pipelines.md, "CDC from
     * snapshots"): the source is a whole snapshot each update, diffed with
     * the target; sequence_by is then optional (the rows' own version). */
    int snapshot;
    int ignore_deletes;        /* IGNORE DELETES: a key missing from a snapshot stays */
    const char *initial_start; /* INITIAL START AT expr; NULL: none */
} knut_pipeline_cdc;

/* Event-time streaming (docs/pipelines.md, "Streaming"): the WATERMARK
 * clause of a flow's FROM item and the WINDOW / OUTPUT MODE / TRIGGER
 * clauses of its header. Durations are microseconds. */
typedef enum knut_pipeline_window_kind {
    KNUT_PIPELINE_WINDOW_NONE,
    KNUT_PIPELINE_WINDOW_TUMBLING, /* WINDOW TUMBLING (size [, START offset]) */
    KNUT_PIPELINE_WINDOW_HOPPING,  /* WINDOW HOPPING (size, slide [, START offset]) */
    KNUT_PIPELINE_WINDOW_SESSION   /* WINDOW SESSION (gap) KEYS (cols) */
} knut_pipeline_window_kind;

typedef enum knut_pipeline_output_mode {
    KNUT_PIPELINE_OUTPUT_APPEND, /* each window once, when the watermark passes its end */
    KNUT_PIPELINE_OUTPUT_UPDATE, /* the windows a batch changed, rewritten */
    KNUT_PIPELINE_OUTPUT_COMPLETE /* the whole result, every batch */
} knut_pipeline_output_mode;

typedef enum knut_pipeline_trigger {
    KNUT_PIPELINE_TRIGGER_AVAILABLE_NOW, /* bounded batches until the input is read */
    KNUT_PIPELINE_TRIGGER_ONCE,          /* one batch per run */
    KNUT_PIPELINE_TRIGGER_PROCESSING_TIME /* AVAILABLE NOW every interval (--continuous) */
} knut_pipeline_trigger;

typedef struct knut_pipeline_streaming {
    const char *watermark_col; /* the event-time column; NULL: no WATERMARK */
    int64_t delay_us;
    knut_pipeline_pos watermark_pos;
    size_t item_at, item_len; /* the FROM item before WATERMARK, bytes in the flow's sql */
    knut_pipeline_window_kind window;
    int64_t size_us, slide_us, start_us, gap_us;
    const char **session_keys;
    size_t nsession_keys;
    knut_pipeline_pos window_pos;
    knut_pipeline_output_mode mode;
    int mode_given;
    knut_pipeline_pos mode_pos;
    knut_pipeline_trigger trigger;
    int64_t interval_us; /* PROCESSING TIME */
    knut_pipeline_pos trigger_pos;
} knut_pipeline_streaming;

/* A table a flow's query reads, as DuckDB's parser saw it. */
typedef struct knut_pipeline_read {
    const char *name;    /* the dataset name (or the external table's) */
    int streaming;       /* read as STREAM(name) */
    int internal;        /* names a dataset of this pipeline */
    knut_pipeline_pos pos;
} knut_pipeline_read;

/* A file source: read_parquet / read_csv / read_json on a path or glob
 * in the query of a streaming flow (read incrementally). */
typedef struct knut_pipeline_source {
    const char *function; /* "read_parquet", ... */
    const char *pattern;  /* as written; relative paths are the spec folder's */
    size_t at, len;       /* the literal's bytes in the flow's sql */
} knut_pipeline_source;

typedef struct knut_pipeline_flow {
    const char *name;
    const char *target;
    knut_pipeline_flow_kind kind;
    const char *sql; /* the query body given to DuckDB (NULL for CDC) */
    const char *source_sql; /* the same bytes as written (STREAM, LIVE. kept) */
    knut_pipeline_pos pos;     /* the CREATE keyword */
    knut_pipeline_pos sql_pos; /* the first byte of sql */
    knut_pipeline_read *reads; /* inferred by knut_pipeline_resolve */
    size_t nreads;
    const char **declared_reads; /* the spec's reads: for this flow, or NULL */
    size_t ndeclared;
    int has_declared;
    knut_pipeline_source *sources;
    size_t nsources;
    const char **stream_names; /* names the query reads as STREAM(x) */
    size_t nstream_names;
    knut_pipeline_cdc *cdc; /* KNUT_PIPELINE_FLOW_CDC only */
    knut_pipeline_streaming *stream; /* event-time clauses; NULL: none */
    /* The target dataset's expectations (borrowed from it). */
    const knut_pipeline_expectation *expectations;
    size_t nexpectations;
} knut_pipeline_flow;

/* One name -> value entry: a configuration entry (applied as a DuckDB
 * setting) or a table property. */
typedef struct knut_pipeline_setting {
    const char *name, *value;
    knut_pipeline_pos pos;
} knut_pipeline_setting;

struct knut_graph_map;

/* A graph sink (the spec's `sinks:`): where its rows go and how they map
 * onto vertices and edges (sync.yml's syntax, knut/graph_map.h). */
typedef struct knut_pipeline_graph_sink {
    const char *store;    /* the embedded store file (spec-folder relative), or NULL */
    const char *falkordb; /* redis://host:port of a FalkorDB server, or NULL */
    const char *graph;    /* FalkorDB graph name ("knut") */
    const char *password_env; /* FalkorDB: the environment variable holding the password */
    int missing_endpoints;    /* KNUT_GRAPH_MISSING_SKIP (0) or _FAIL (1) */
    const struct knut_graph_map *map;
} knut_pipeline_graph_sink;

typedef struct knut_pipeline_dataset {
    const char *name;
    knut_pipeline_dataset_kind kind;
    const char *comment;
    knut_pipeline_pos pos;
    knut_pipeline_expectation *expectations;
    size_t nexpectations;
    /* TBLPROPERTIES ('k' = 'v', ...); pipelines.reset.allowed = false
     * turns a full refresh of the dataset into a normal update. */
    knut_pipeline_setting *properties;
    size_t nproperties;
    const knut_pipeline_graph_sink *graph_sink; /* KNUT_PIPELINE_SINK only */
} knut_pipeline_dataset;

/* The spec's `airflow:` (docs/pipelines.md "Airflow asset events"): after
 * a run, one asset event per completed dataset, URI asset_prefix + name. */
typedef struct knut_pipeline_airflow {
    const char *url;           /* http://host:port of the Airflow API server */
    const char *user;
    const char *password_env;  /* the variable holding the password (KNUT_AIRFLOW_PASSWORD) */
    const char *password_file; /* or a file with it (absolute); one of the two */
    const char *asset_prefix;  /* "knut://<pipeline name>/" unless given */
    int64_t drain_ms;          /* time unsent events get after the run; 0: 5000 */
} knut_pipeline_airflow;

/* The spec's `lineage:` (docs/lineage.md): OpenLineage run events of the
 * run and of each flow update, to url or appended to file. */
typedef struct knut_pipeline_lineage {
    const char *url;          /* http(s)://host:port of the consumer; or */
    const char *file;         /* a JSON-lines file (absolute) */
    const char *endpoint;     /* path under url; NULL: api/v1/lineage */
    const char *api_key_env;  /* the variable holding the API key; or */
    const char *api_key_file; /* a file with it (absolute); NULL both: none */
    const char *ns;           /* the jobs' namespace; NULL: "knut" */
    int64_t drain_ms;         /* time unsent events get after the run; 0: 5000 */
} knut_pipeline_lineage;

typedef struct knut_pipeline {
    const char *name;
    const char *spec_path; /* the spec file (NULL for SQL given directly) */
    const char *root;      /* its folder: relative paths start here */
    const char *storage;   /* the storage folder (absolute or root-relative) */
    const char *catalog;   /* the database's name: <storage>/<catalog>.duckdb */
    const char *schema;    /* where datasets are created ("main") */
    knut_pipeline_setting *configuration;
    size_t nconfiguration;
    const char **files; /* the SQL files the libraries matched, in order */
    size_t nfiles;
    knut_pipeline_dataset *datasets;
    size_t ndatasets;
    knut_pipeline_flow *flows; /* definition order */
    size_t nflows;
    const knut_pipeline_airflow *airflow; /* NULL: no asset events */
    const knut_pipeline_lineage *lineage; /* NULL: OPENLINEAGE_URL, else none */
    size_t *order; /* flow indexes in run order (after resolve) */
    int resolved;
} knut_pipeline;

/*
 * Loads a spec file and every SQL file its libraries match, and parses
 * them into *out (not yet resolved). The caller frees *out with
 * knut_pipeline_free; on error *out is NULL. Errors name file:line:col
 * (also in err->line/col): KNUT_EPARSE (YAML or SQL syntax, an unknown
 * key, a bad glob, an unsupported statement), KNUT_EINVAL (a missing
 * name/storage, a duplicate dataset or flow, a flow into something that
 * is not a streaming table), KNUT_ENOTFOUND / KNUT_EIO (a file),
 * KNUT_ETOOBIG (the caps above), KNUT_ENOMEM.
 */
KNUT_EXTERN knut_status knut_pipeline_load(knut_pipeline **out, const char *spec_path,
                                           knut_error *err);
/* An empty pipeline named name with storage storage (both copied), for
 * SQL given by knut_pipeline_parse_sql; errors: KNUT_ENOMEM. */
KNUT_EXTERN knut_status knut_pipeline_new(knut_pipeline **out, const char *name,
                                          const char *storage, knut_error *err);
/* Parses SQL text[0..len) (borrowed; at most KNUT_PIPELINE_SQL_MAX_BYTES)
 * named file in positions, adding its datasets and flows to p. Errors as
 * for knut_pipeline_load; on error p may hold the statements before the
 * bad one and must only be freed. */
KNUT_EXTERN knut_status knut_pipeline_parse_sql(knut_pipeline *p, const char *text, size_t len,
                                                const char *file, knut_error *err);
/* Frees p and everything in it (NULL-safe). */
KNUT_EXTERN void knut_pipeline_free(knut_pipeline *p);

/*
 * Resolves p: each flow's reads from DuckDB's parser (an in-memory
 * DuckDB; STREAM(x) marks a streaming read; CTE names are not reads),
 * checked against its declared reads, and the run order. Errors name the
 * flow and its file:line:col: KNUT_EPARSE (DuckDB cannot parse a query,
 * with its message), KNUT_ENOTFOUND (an unqualified read that names no
 * dataset), KNUT_EINVAL (a cycle, with its path; two flows into one
 * materialized view; a streaming read of a batch dataset; reads that
 * differ from the declared ones; CDC over an unknown source).
 */
KNUT_EXTERN knut_status knut_pipeline_resolve(knut_pipeline *p, knut_error *err);

/* Names used in text and JSON ("streaming_table", "batch", "drop", ...). */
KNUT_EXTERN const char *knut_pipeline_dataset_kind_name(knut_pipeline_dataset_kind k);
KNUT_EXTERN const char *knut_pipeline_flow_kind_name(knut_pipeline_flow_kind k);
KNUT_EXTERN const char *knut_pipeline_action_name(knut_pipeline_action a);
/* The dataset named name, or NULL. */
KNUT_EXTERN const knut_pipeline_dataset *knut_pipeline_dataset_find(const knut_pipeline *p,
                                                                    const char *name);

/* ---- showing the graph ------------------------------------------------ */

typedef enum knut_pipeline_format {
    KNUT_PIPELINE_FORMAT_TEXT,
    KNUT_PIPELINE_FORMAT_JSON,
    KNUT_PIPELINE_FORMAT_DOT
} knut_pipeline_format;

/* Appends the resolved DAG of p to b as text (one line per flow in run
 * order), one JSON object, or a Graphviz digraph. Errors: KNUT_EINVAL
 * (p not resolved), b's sticky error. */
KNUT_EXTERN knut_status knut_pipeline_show(const knut_pipeline *p, knut_pipeline_format fmt,
                                           knut_buf *b, knut_error *err);

/* ---- running ---------------------------------------------------------- */

/* Receives each run event as one JSON object (no newline), borrowed for
 * the call. See docs/pipelines.md for the schema. */
typedef void (*knut_pipeline_event_fn)(const char *json, size_t len, void *ctx);

#define KNUT_PIPELINE_RUN_OPTIONS_VERSION 2

typedef struct knut_pipeline_run_options {
    int version;
    int full_refresh_all;           /* --full-refresh with no names */
    const char *const *full_refresh; /* datasets to fully refresh */
    size_t nfull_refresh;
    int dry_run;                    /* plan only: read nothing, write nothing */
    knut_pipeline_event_fn on_event; /* may be NULL; never called twice at once */
    void *ctx;
    /* Flows run at the same time, each on its own DuckDB connection (0 or
     * 1: one at a time, in run order). See docs/pipelines.md "Parallel
     * flows". */
    int parallel;
    /* The run's execution time as DuckDB TIMESTAMP text (the version of an
     * AUTO CDC FROM SNAPSHOT update); NULL: the run's start
     * (_knut.runs.started_at). */
    const char *execution_time;
} knut_pipeline_run_options;

#define KNUT_PIPELINE_RUN_OPTIONS_INIT {.version = KNUT_PIPELINE_RUN_OPTIONS_VERSION}

/* What a run did. */
typedef struct knut_pipeline_run_result {
    int64_t run_id;      /* 1, 2, ... per storage */
    size_t completed, failed, skipped, idle;
} knut_pipeline_run_result;

/*
 * Runs a resolved pipeline: opens (creating) the storage folder and its
 * database, then runs the flows in dependency order (opts->parallel of
 * them at a time; on_event may then be called from several threads, one
 * call at a time). Each flow's update is one transaction (target,
 * quarantine table, checkpoints): a failed flow leaves them as they were,
 * flows downstream of it are skipped, and independent flows still run.
 * Events go to opts->on_event, to <storage>/events.jsonl and to the
 * table _knut.event_log. Returns
 * KNUT_OK when every flow completed (or was idle), else KNUT_ERROR with
 * the first failure in err (the flow, its file:line:col and DuckDB's
 * message); KNUT_EINVAL for bad options (an unknown --full-refresh
 * dataset), KNUT_EIO / DuckDB's errors for the storage itself.
 */
KNUT_EXTERN knut_status knut_pipeline_run(knut_pipeline *p, const knut_pipeline_run_options *opts,
                                          knut_pipeline_run_result *result, knut_error *err);

/* ---- lowering to Spark Declarative Pipelines (spark_*.c) ------------------- */

struct knut_spark_session;

/* A pipeline lowered to a Spark dataflow graph for one Spark version:
 * the outputs and flows to define, what the version cannot run (per flow,
 * with the reason) and the report of knobs dropped or changed.
 * docs/spark.md, "Running a pipeline on Spark". */
typedef struct knut_pipeline_spark_plan knut_pipeline_spark_plan;

#define KNUT_PIPELINE_SPARK_OPTIONS_VERSION 1
typedef struct knut_pipeline_spark_options {
    int version;
    const char *storage; /* StartRun's storage URI; NULL: file://<storage>/spark */
} knut_pipeline_spark_options;
#define KNUT_PIPELINE_SPARK_OPTIONS_INIT {KNUT_PIPELINE_SPARK_OPTIONS_VERSION, NULL}

/* Lowers resolved p for Spark spark_version ("4.3.0"); refusals are part
 * of the plan, not errors (knut_pipeline_spark_refused). *out borrows p
 * (free the plan first). Errors: KNUT_EINVAL (p not resolved, a version
 * that is no version), KNUT_ENOMEM. */
KNUT_EXTERN knut_status knut_pipeline_spark_lower(const knut_pipeline *p, const char *spark_version,
                                                  const knut_pipeline_spark_options *o,
                                                  knut_pipeline_spark_plan **out,
                                                  knut_error *err);
/* How many flows the target refuses (plus 1 when it refuses the whole
 * pipeline, e.g. a version without Declarative Pipelines). */
KNUT_EXTERN size_t knut_pipeline_spark_refused(const knut_pipeline_spark_plan *pl);
/* Appends the lowering and its report to b, as text or one JSON object. */
KNUT_EXTERN knut_status knut_pipeline_spark_show(const knut_pipeline_spark_plan *pl, int json,
                                                 knut_buf *b, knut_error *err);
/*
 * Runs the plan on session s (its server must be the version lowered
 * for): defines the graph, starts the run and turns the server's events
 * into knut's run events (opts->on_event, the native JSON format). Only
 * opts' full-refresh fields, dry_run (StartRun dry) and on_event are used.
 * A refused plan is KNUT_EINVAL with the first reason; a failed run
 * KNUT_ERROR with Spark's error; KNUT_EPEER when the server is not there.
 */
KNUT_EXTERN knut_status knut_pipeline_spark_run(knut_pipeline_spark_plan *pl,
                                                struct knut_spark_session *s,
                                                const knut_pipeline_run_options *opts,
                                                knut_pipeline_run_result *result,
                                                knut_error *err);
KNUT_EXTERN void knut_pipeline_spark_plan_free(knut_pipeline_spark_plan *pl);

#ifdef __cplusplus
}
#endif

#endif /* KNUT_PIPELINE_H */
