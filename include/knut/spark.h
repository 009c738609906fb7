/*
 * knut spark: a Spark Connect client. A session to one server (an sc://
 * URL), SQL executed with ExecutePlan and its Arrow results read as an
 * ArrowArrayStream in bounded memory (one server message at a time),
 * execution progress as events, reattachable execution (ReattachExecute
 * after a dropped stream, ReleaseExecute at the end), Interrupt, and
 * errors carrying Spark's error class and SQLSTATE. docs/spark.md.
 *
 * Messages are protobuf-c code generated from the project's own subset of
 * the Spark Connect protos (src/spark/proto); the transport is net's gRPC
 * channel. The bearer token is never logged and never in an error.
 */
#ifndef KNUT_SPARK_H
#define KNUT_SPARK_H

#include <stddef.h>
#include <stdint.h>

#include "knut/arrow_types.h"
#include "knut/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- sc:// URLs (src/spark/url.c) ---------------------------------------- */

#define KNUT_SPARK_DEFAULT_PORT 15002
#define KNUT_SPARK_DEFAULT_MAX_MESSAGE ((size_t)128 << 20)

/*
 * sc://host[:port]/[;name=value]... (host may be [v6]); values are
 * percent-decoded. Parameters: token (bearer; wiped on reset), use_ssl
 * (true|false), user_id, user_agent, session_id (a UUID),
 * grpc_max_message_size (bytes). Any other parameter is an error, as is a
 * repeated one.
 */
typedef struct knut_spark_url {
    char *host;
    int port;            /* 15002 when not given */
    char *token;         /* NULL: none */
    int use_ssl;
    char *user_id;       /* NULL: none */
    char *user_agent;    /* NULL: none */
    char *session_id;    /* NULL: a random one per session */
    size_t max_message;  /* 0: not given */
} knut_spark_url;

/* Parses url into *u (the caller frees with knut_spark_url_reset, also
 * after an error). KNUT_EINVAL says what is wrong (never quoting a token
 * value); KNUT_ENOMEM. */
KNUT_EXTERN knut_status knut_spark_url_parse(knut_spark_url *u, const char *url, knut_error *err);
/* Frees u's strings, wiping the token (NULL-safe); u may be reused. */
KNUT_EXTERN void knut_spark_url_reset(knut_spark_url *u);

/* ---- sessions (src/spark/session.c) --------------------------------------- */

typedef struct knut_spark_session knut_spark_session;

#define KNUT_SPARK_OPTIONS_VERSION 1
typedef struct knut_spark_options {
    int version; /* KNUT_SPARK_OPTIONS_VERSION */
    /* Send the token over plaintext gRPC (no TLS). Off: a token without
     * use_ssl=true is refused, so a secret never crosses a network in
     * clear text by accident. */
    int allow_insecure_token;
    const char *ca_file;          /* TLS: PEM roots (NULL: the system's) */
    int64_t connect_timeout_ms;   /* unary calls' deadline; 0: 30000 */
    const char *token;            /* the bearer token (from a file or the
                                   * environment); NULL: the URL's, if any */
} knut_spark_options;
#define KNUT_SPARK_OPTIONS_INIT {KNUT_SPARK_OPTIONS_VERSION, 0, NULL, 0, NULL}

/* Opens a session to url (connects lazily); o may be NULL. The caller
 * frees *out with knut_spark_session_free. KNUT_EINVAL (the URL, a token
 * over plaintext without allow_insecure_token), KNUT_ENOMEM. */
KNUT_EXTERN knut_status knut_spark_session_new(knut_spark_session **out, const char *url,
                                               const knut_spark_options *o, knut_error *err);
/* Frees s (NULL-safe), wiping the token. Every stream made from s must be
 * released first. */
KNUT_EXTERN void knut_spark_session_free(knut_spark_session *s);
/* The server as errors name it: "sc://host:port" (no parameters). */
KNUT_EXTERN const char *knut_spark_session_peer(const knut_spark_session *s);
/* The session id sent (a UUID). */
KNUT_EXTERN const char *knut_spark_session_id(const knut_spark_session *s);

/* The server's Spark version ("4.3.0") into a malloc'ed *out (AnalyzePlan
 * spark_version). Errors as knut_spark_sql's. */
KNUT_EXTERN knut_status knut_spark_version(knut_spark_session *s, char **out, knut_error *err);

/* What a failed call said, when the server said it as Spark does. */
typedef struct knut_spark_error_info {
    char error_class[128]; /* "TABLE_OR_VIEW_NOT_FOUND"; "" if none */
    char sql_state[16];    /* "42P01"; "" if none */
    char exception[128];   /* "org.apache.spark.sql.AnalysisException"; "" */
    int grpc_code;         /* knut_net_grpc_code of the call; 0 if none */
} knut_spark_error_info;

/* ---- execution (src/spark/exec.c) ----------------------------------------- */

/* One progress message: stages are cumulative for the operation. */
typedef struct knut_spark_stage {
    int64_t stage_id, num_tasks, num_completed_tasks, input_bytes_read;
    int done;
} knut_spark_stage;

typedef enum knut_spark_event_kind {
    KNUT_SPARK_EVENT_PROGRESS = 0, /* stages, inflight_tasks */
    KNUT_SPARK_EVENT_REATTACH,     /* the stream dropped; attached again */
    KNUT_SPARK_EVENT_BATCH         /* an Arrow batch arrived: rows, total_rows */
} knut_spark_event_kind;

typedef struct knut_spark_event {
    knut_spark_event_kind kind;
    const char *operation_id;
    const knut_spark_stage *stages; /* PROGRESS: valid during the call */
    size_t nstages;
    int64_t inflight_tasks;
    int64_t rows, total_rows;       /* BATCH */
    int reattaches;                 /* REATTACH: how many so far */
} knut_spark_event;

/* Called on the reading thread, between batches; must not block long. */
typedef void (*knut_spark_event_fn)(void *ctx, const knut_spark_event *ev);

#define KNUT_SPARK_EXEC_OPTIONS_VERSION 1
typedef struct knut_spark_exec_options {
    int version;                /* KNUT_SPARK_EXEC_OPTIONS_VERSION */
    int not_reattachable;       /* 0: reattachable execution (the default) */
    knut_spark_event_fn on_event; /* NULL: no events */
    void *event_ctx;
    const char *tag;            /* an operation tag (Interrupt by tag); NULL: none */
    /* The operation's id (a UUID chosen by the client before it is sent),
     * copied here when not NULL: knut_spark_interrupt takes it. */
    char *operation_id_out;     /* at least 37 bytes */
    /* Filled when the execution fails (may be NULL). */
    knut_spark_error_info *error_info;
} knut_spark_exec_options;
#define KNUT_SPARK_EXEC_OPTIONS_INIT {KNUT_SPARK_EXEC_OPTIONS_VERSION, 0, NULL, NULL, NULL, NULL, NULL}

/*
 * Executes sql (Plan.root = Relation.sql) and makes *out a stream of its
 * result: get_schema and get_next read server messages one at a time (the
 * first Arrow batch is read here, so a bad query fails here), decoding
 * each Arrow IPC batch; progress messages become events. A dropped stream
 * is reattached where it stopped (up to 5 times in a row). The stream
 * holds s (release it first); it must be read on one thread. Errors:
 * KNUT_EPEER (the server is down or refused, naming it),
 * KNUT_EINVAL/KNUT_ERROR from Spark (its class and SQLSTATE in the text
 * and in o->error_info), KNUT_EPARSE (a malformed message), KNUT_ENOMEM.
 */
KNUT_EXTERN knut_status knut_spark_sql(knut_spark_session *s, const char *sql,
                                       const knut_spark_exec_options *o,
                                       struct ArrowArrayStream *out, knut_error *err);

/* A SQL parameter: a value bound by the server, never spliced into the
 * text. Named ones match :name markers, positional ones (name NULL) the
 * ? markers in order; one query takes one kind or the other. */
typedef enum knut_spark_param_kind {
    KNUT_SPARK_PARAM_STRING = 0, /* s (UTF-8, NUL-terminated) */
    KNUT_SPARK_PARAM_INT64,      /* i: a BIGINT */
    KNUT_SPARK_PARAM_DOUBLE,     /* d */
    KNUT_SPARK_PARAM_BOOL,       /* i: 0 or not */
    KNUT_SPARK_PARAM_BINARY,     /* s, len bytes */
    KNUT_SPARK_PARAM_DATE,       /* i: days since 1970-01-01 */
    KNUT_SPARK_PARAM_TIMESTAMP   /* i: microseconds since the epoch (UTC) */
} knut_spark_param_kind;

typedef struct knut_spark_param {
    const char *name; /* NULL: positional */
    knut_spark_param_kind kind;
    const char *s;
    size_t len;       /* BINARY only */
    int64_t i;
    double d;
} knut_spark_param;

/* knut_spark_sql with parameters: SQL.named_arguments or pos_arguments,
 * each a literal in the plan. KNUT_EINVAL for named and positional mixed,
 * an empty or repeated name, or a STRING that is not UTF-8. */
KNUT_EXTERN knut_status knut_spark_sql_params(knut_spark_session *s, const char *sql,
                                              const knut_spark_param *params, size_t nparams,
                                              const knut_spark_exec_options *o,
                                              struct ArrowArrayStream *out, knut_error *err);

/* Interrupts the operation operation_id (NULL: every operation of the
 * session) on the server; thread-safe (another thread may be reading the
 * operation's stream, which then ends with the server's error).
 * *interrupted (may be NULL) gets how many operations the server stopped. */
KNUT_EXTERN knut_status knut_spark_interrupt(knut_spark_session *s, const char *operation_id,
                                             size_t *interrupted, knut_error *err);

/* ---- Spark Declarative Pipelines (src/spark/sdp.c) ------------------------- */

/*
 * The dataflow-graph commands of Spark 4.1+ (pipelines.proto), each one
 * ExecutePlan with a PipelineCommand on the session (the graph lives in
 * the session that made it). The caller says what to send; the pipeline
 * part lowers knut's IR to these (knut/pipeline.h). Errors as
 * knut_spark_sql's, naming the command; info (may be NULL) gets Spark's
 * error class.
 */
typedef enum knut_spark_sdp_output_type {
    KNUT_SPARK_SDP_MATERIALIZED_VIEW = 1,
    KNUT_SPARK_SDP_TABLE = 2,          /* a streaming table */
    KNUT_SPARK_SDP_TEMPORARY_VIEW = 3
} knut_spark_sdp_output_type;

typedef struct knut_spark_sdp_kv {
    const char *key, *value;
} knut_spark_sdp_kv;

typedef struct knut_spark_sdp_output {
    const char *name;
    knut_spark_sdp_output_type type;
    const char *comment;                /* NULL: none */
    const knut_spark_sdp_kv *properties; /* tables only */
    size_t nproperties;
    const char *file;                   /* source location; NULL: none */
    int line;
} knut_spark_sdp_output;

/* A list of column names, or every column but them (except). */
typedef struct knut_spark_sdp_cols {
    const char *const *names;
    size_t n;
    int except;
} knut_spark_sdp_cols;

/* AutoCdcFlowDetails (4.2+; scd_type 2 and track_history 4.3+). */
typedef struct knut_spark_sdp_cdc {
    const char *source;
    const char *const *keys;
    size_t nkeys;
    const char *sequence_by;  /* SQL expression text */
    const char *delete_when;  /* SQL expression text; NULL: none */
    knut_spark_sdp_cols columns;
    int scd_type;             /* 1 or 2 */
    knut_spark_sdp_cols track_history;
} knut_spark_sdp_cdc;

/* A flow: exactly one of sql (a SQL relation), read_format (files read by
 * a data source) or cdc. */
typedef struct knut_spark_sdp_flow {
    const char *name, *target;
    const char *sql;
    const char *read_format;          /* "parquet", "csv", "json" */
    const char *const *read_paths;
    size_t nread_paths;
    const knut_spark_sdp_kv *read_options;
    size_t nread_options;
    int read_streaming;
    const knut_spark_sdp_cdc *cdc;
    const knut_spark_sdp_kv *conf;    /* the flow's SQL conf */
    size_t nconf;
    const char *file;
    int line;
} knut_spark_sdp_flow;

/* CreateDataflowGraph: database (NULL: the session's), conf applied to
 * every flow; the graph's id into graph_id. */
KNUT_EXTERN knut_status knut_spark_sdp_graph_new(knut_spark_session *s, const char *database,
                                                 const knut_spark_sdp_kv *conf, size_t nconf,
                                                 char graph_id[64], knut_spark_error_info *info,
                                                 knut_error *err);
KNUT_EXTERN knut_status knut_spark_sdp_output_define(knut_spark_session *s, const char *graph_id,
                                                     const knut_spark_sdp_output *o,
                                                     knut_spark_error_info *info,
                                                     knut_error *err);
KNUT_EXTERN knut_status knut_spark_sdp_flow_define(knut_spark_session *s, const char *graph_id,
                                                   const knut_spark_sdp_flow *f,
                                                   knut_spark_error_info *info, knut_error *err);

/* A pipeline event as the server sent it: free text ("Flow x is RUNNING."). */
typedef void (*knut_spark_sdp_event_fn)(void *ctx, int64_t ts_us, const char *message);

typedef struct knut_spark_sdp_run_options {
    const char *storage;            /* a URI (file:///..., s3a://...) */
    int dry;                        /* resolve and validate only */
    int full_refresh_all;
    const char *const *full_refresh; /* datasets to fully refresh */
    size_t nfull_refresh;
    knut_spark_sdp_event_fn on_event;
    void *ctx;
} knut_spark_sdp_run_options;

/* StartRun: blocks until the run ends, events to o->on_event. A failed run
 * is the call's error (Spark streams no FAILED run event). */
KNUT_EXTERN knut_status knut_spark_sdp_run(knut_spark_session *s, const char *graph_id,
                                           const knut_spark_sdp_run_options *o,
                                           knut_spark_error_info *info, knut_error *err);
/* DropDataflowGraph (best effort at the end of a run). */
KNUT_EXTERN knut_status knut_spark_sdp_graph_drop(knut_spark_session *s, const char *graph_id,
                                                  knut_error *err);

#ifdef __cplusplus
}
#endif

#endif /* KNUT_SPARK_H */
