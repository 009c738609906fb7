/*
 * What the Spark Connect commands share (`knut spark sql|version`,
 * `knut watch`): the connection options, the session opened from them
 * (the token from --token-file or the environment, never argv), and the
 * Ctrl-C that interrupts the running operation on the server.
 */
#ifndef KNUT_CLI_SPARK_CLI_H
#define KNUT_CLI_SPARK_CLI_H

#include <stdatomic.h>

#include "cli.h"
#include "knut/spark.h"

#define KNUT_CLI_SPARK_TOKEN_ENV "SPARK_CONNECT_AUTHENTICATE_TOKEN"

typedef struct knut_cli_spark_conn {
    const char *connect;
    const char *token_file;
    const char *ca_file;
    int allow_insecure;
} knut_cli_spark_conn;

/* The connection options of a command whose argument struct T has a
 * knut_cli_spark_conn member m. */
#define KNUT_CLI_SPARK_CONN_OPTS(T, m)                                                        \
    KNUT_CLI_OPT_STR("connect", 'c', T, m.connect, "URL",                                     \
                     "the server, sc://host:port/[;user_id=..;session_id=..;use_ssl=true]"     \
                     " (default: $SPARK_REMOTE)"),                                             \
    KNUT_CLI_OPT_STR("token-file", 0, T, m.token_file, "FILE",                                \
                     "the bearer token, the file's one line (default: $"                       \
                     KNUT_CLI_SPARK_TOKEN_ENV ", else the URL's ;token=)"),                    \
    KNUT_CLI_OPT_FLAG("allow-insecure-token", 0, T, m.allow_insecure,                         \
                      "send the token without TLS (a loopback or trusted network only)"),     \
    KNUT_CLI_OPT_STR("ca-file", 0, T, m.ca_file, "FILE",                                      \
                     "TLS (use_ssl=true): PEM roots for the server (default: the system's)")

/* The session for c into *out (the URL: c->connect, else positional (may
 * be NULL), else $SPARK_REMOTE). Returns KNUT_EXIT_OK, or the exit code
 * after printing why as spec's error: KNUT_EXIT_USAGE for no URL at all,
 * else KNUT_EXIT_FAIL. */
int knut_cli_spark_open(const knut_cli_spec *spec, const knut_cli_spark_conn *c,
                        const char *positional, knut_spark_session **out);

/* Progress is pushed every spark.connect.progress.reportInterval (2 s
 * unless the session says otherwise): a live view wants it sooner. Sets
 * it to secs for the session (the value is ours, a number). */
knut_status knut_cli_spark_report_interval(knut_spark_session *s, double secs, knut_error *err);

/* The stages of one Spark operation as its progress reports them (each
 * report is cumulative: every stage so far), kept in stage id order. */
#define KNUT_CLI_SPARK_MAX_STAGES 256 /* stages tracked; later ones are dropped */

typedef struct knut_cli_spark_stage_seen {
    knut_spark_stage s;
    int64_t first_ns, end_ns; /* when first reported, when reported done */
    int ended;   /* the operation ended with it not reported done */
    int changed; /* by the last merge or end */
} knut_cli_spark_stage_seen;

typedef struct knut_cli_spark_stages {
    knut_cli_spark_stage_seen at[KNUT_CLI_SPARK_MAX_STAGES];
    size_t n;
} knut_cli_spark_stages;

/* Merges ev's stages (a PROGRESS event) at time now: sets changed on the
 * stages that are new or moved. Returns how many were new. */
size_t knut_cli_spark_stages_merge(knut_cli_spark_stages *t, const knut_spark_event *ev,
                                   int64_t now);
/* The operation ended at now: a stage not reported done is "ended" (a
 * stage a job listed but Spark skipped, reusing a shuffle's output, or one
 * whose last tasks finished after the last progress report; the server
 * does not say which). Sets changed on those. */
void knut_cli_spark_stages_end(knut_cli_spark_stages *t, int64_t now);

/* SQL parameters from the command line: --param NAME=[TYPE:]VALUE
 * (:NAME markers) and --arg [TYPE:]VALUE (? markers, in order), TYPE one
 * of string, int, double, bool (no prefix: a string). Into out[0..*n)
 * (pointing into the argv strings; out holds 2 * KNUT_CLI_STRS_MAX).
 * Returns KNUT_EXIT_OK, or KNUT_EXIT_USAGE after printing why. */
int knut_cli_spark_params(const knut_cli_spec *spec, const knut_cli_strs *named,
                          const knut_cli_strs *pos, knut_spark_param *out, size_t *n);

/* Ctrl-C (SIGINT/SIGTERM) while an operation runs: the signal watcher's
 * thread asks the server to interrupt op. Armed before the ExecutePlan
 * is sent (its id is chosen by the client), disarmed after. */
typedef struct knut_cli_spark_stop {
    knut_spark_session *s;
    const char *cmd; /* "spark sql": its messages read "knut CMD: ..." */
    char op[37];
    atomic_int armed;
} knut_cli_spark_stop;

/* Installs the signal handlers and the watcher for st (st->s set);
 * knut_signal_unwatch undoes it. */
knut_status knut_cli_spark_stop_watch(knut_cli_spark_stop *st, knut_error *err);

/* Runs sql as a watched operation (`knut watch`, `knut web --sql`): the
 * session's progress interval set to interval seconds, Ctrl-C armed to
 * interrupt it on the server (stop->s set here), progress and batches to
 * fn, the result into *rows, a failure's class into *info. *watching
 * says whether the signal watcher was installed: the caller disarms stop
 * once it has read the result and then calls knut_signal_unwatch. */
knut_status knut_cli_spark_watched_sql(knut_spark_session *s, knut_cli_spark_stop *stop,
                                       double interval, const char *sql,
                                       knut_spark_event_fn fn, void *ctx,
                                       knut_spark_error_info *info,
                                       struct ArrowArrayStream *rows, int *watching,
                                       knut_error *err);

struct knut_pipeline;
struct knut_pipeline_run_options;

/* The options of `knut pipeline run --backend spark`. */
typedef struct knut_cli_spark_args {
    knut_cli_spark_conn conn;
    const char *version; /* --spark-version (dry run) */
    const char *storage; /* --spark-storage URI */
} knut_cli_spark_args;

/* Runs (or with o->dry_run, lowers and reports) p on Spark; o's on_event
 * prints the events. Returns the exit code (src/cli/cmd_pipeline_spark.c). */
int knut_cli_pipeline_spark(const knut_cli_spec *spec, struct knut_pipeline *p,
                            const struct knut_pipeline_run_options *o,
                            const knut_cli_spark_args *sa, int json);

#endif
