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
