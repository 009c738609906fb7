/*
 * `knut spark`: a Spark Connect client on the command line. `sql` runs a
 * query on the server and prints its rows as they stream in (table, CSV,
 * JSON lines or Arrow IPC); `version` asks the server its Spark version.
 * The token comes from --token-file or $SPARK_CONNECT_AUTHENTICATE_TOKEN
 * (or the URL); over plaintext it needs --allow-insecure-token.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "knut/knut.h"
#include "render.h"
#include "spark_cli.h"

#define SPARK_SQL_MAX ((size_t)16 << 20)

typedef struct spark_args {
    knut_cli_spark_conn conn;
    int no_reattach;
    int events;
    int format;
    int64_t max_width;
    knut_cli_render_opts render;
    knut_cli_strs params, args;
    const char *sql;
} spark_args;

#define SPARK_CONN_OPTS KNUT_CLI_SPARK_CONN_OPTS(spark_args, conn)

static const knut_cli_opt sql_opts[] = {
    SPARK_CONN_OPTS,
    KNUT_CLI_OPT_CHOICE("format", 'f', spark_args, format, "FMT", knut_cli_format_names,
                        KNUT_CLI_FORMAT_HELP),
    KNUT_CLI_OPT_INT("max-rows", 0, spark_args, render.max_rows, "N", 0, INT64_MAX,
                     "table only: show at most N rows (default 1000, 0 = all)"),
    KNUT_CLI_OPT_INT("max-width", 0, spark_args, max_width, "N", 1, 100000,
                     "table only: cut cells longer than N characters (default 48)"),
    KNUT_CLI_OPT_FLAG("events", 0, spark_args, events,
                      "write execution events (progress per stage, reattaches, batches) "
                      "to stderr as JSON lines"),
    KNUT_CLI_OPT_FLAG("no-reattach", 0, spark_args, no_reattach,
                      "plain execution: a dropped stream is an error, not reattached"),
    KNUT_CLI_OPT_STRS("param", 'p', spark_args, params, "NAME=[TYPE:]VALUE", KNUT_CLI_STRS_MAX,
                      "bind :NAME in the SQL to VALUE, sent as a literal, never as text; "
                      "TYPE string (the default), int, double or bool (repeatable)"),
    KNUT_CLI_OPT_STRS("arg", 0, spark_args, args, "[TYPE:]VALUE", KNUT_CLI_STRS_MAX,
                      "bind the next ? in the SQL to VALUE, as --param (repeatable; not "
                      "with --param)"),
    KNUT_CLI_OPT_END,
};
static const knut_cli_opt version_opts[] = {SPARK_CONN_OPTS, KNUT_CLI_OPT_END};
static const knut_cli_arg sql_pos[] = {KNUT_CLI_ARG("SQL", spark_args, sql), KNUT_CLI_ARG_END};

static const knut_cli_spec sql_spec = {
    .name = "spark sql",
    .synopsis = "usage: knut spark sql [-c|--connect URL] [--token-file FILE]\n"
                "                      [--allow-insecure-token] [--ca-file FILE]\n"
                "                      [-f|--format table|csv|json|arrow] [--max-rows N]\n"
                "                      [--max-width N] [--events] [--no-reattach]\n"
                "                      [-p|--param NAME=[TYPE:]VALUE]... [--arg [TYPE:]VALUE]... SQL\n"
                "       knut spark sql [OPTIONS] -        (read the SQL from stdin)\n",
    .about = "Runs SQL on a Spark Connect server (ExecutePlan) and prints the rows as\n"
             "they stream in, batch by batch, in bounded memory. Ctrl-C interrupts the\n"
             "operation on the server. Spark's errors are printed with their error\n"
             "class and SQLSTATE.\n",
    .opts = sql_opts,
    .args = sql_pos,
    .epilog = "Examples:\n"
              "  knut spark sql -c sc://localhost:15002/ \"SELECT 1 AS one\"\n"
              "  knut spark sql -c sc://spark:15002/;use_ssl=true --token-file tok \\\n"
              "      -f arrow \"SELECT * FROM sales\" > sales.arrows\n"
              "  knut spark sql -c sc://localhost:15002/ -p lo=int:10 -p who=ann \\\n"
              "      \"SELECT * FROM events WHERE id >= :lo AND user = :who\"\n"
              "\n"
              "Exit status: 0 ok, 1 the query or the server failed, 2 usage error,\n"
              "130 interrupted.\n",
    .more_hint = "quote the SQL",
};

static const knut_cli_spec version_spec = {
    .name = "spark version",
    .synopsis = "usage: knut spark version [-c|--connect URL] [--token-file FILE]\n"
                "                          [--allow-insecure-token] [--ca-file FILE]\n",
    .about = "Prints the Spark version of a Spark Connect server.\n",
    .opts = version_opts,
    .epilog = "Example:\n  knut spark version -c sc://localhost:15002/\n",
};

static void on_event(void *ctx, const knut_spark_event *ev)
{
    (void)ctx;
    knut_buf b;
    knut_buf_init(&b, (size_t)1 << 20);
    if (ev->kind == KNUT_SPARK_EVENT_PROGRESS) {
        knut_buf_printf(&b, "{\"event\":\"progress\",\"operation_id\":\"%s\","
                        "\"inflight_tasks\":%lld,\"stages\":[", ev->operation_id,
                        (long long)ev->inflight_tasks);
        for (size_t i = 0; i < ev->nstages; i++) {
            const knut_spark_stage *s = &ev->stages[i];
            knut_buf_printf(&b, "%s{\"stage_id\":%lld,\"num_tasks\":%lld,"
                            "\"num_completed_tasks\":%lld,\"input_bytes_read\":%lld,"
                            "\"done\":%s}", i ? "," : "", (long long)s->stage_id,
                            (long long)s->num_tasks, (long long)s->num_completed_tasks,
                            (long long)s->input_bytes_read, s->done ? "true" : "false");
        }
        knut_buf_puts(&b, "]}\n");
    } else if (ev->kind == KNUT_SPARK_EVENT_REATTACH) {
        knut_buf_printf(&b, "{\"event\":\"reattach\",\"operation_id\":\"%s\",\"reattaches\":%d}\n",
                        ev->operation_id, ev->reattaches);
    } else {
        knut_buf_printf(&b, "{\"event\":\"batch\",\"operation_id\":\"%s\",\"rows\":%lld,"
                        "\"total_rows\":%lld}\n", ev->operation_id, (long long)ev->rows,
                        (long long)ev->total_rows);
    }
    fwrite(b.data, 1, b.len, stderr);
    knut_buf_reset(&b);
}

static int cmd_sql(int argc, char **argv)
{
    spark_args a = {0};
    a.render.max_rows = KNUT_CLI_TABLE_DEFAULT_MAX_ROWS;
    int rc = knut_cli_args_parse(&sql_spec, argc, argv, &a);
    if (rc != KNUT_CLI_RUN)
        return rc;
    a.render.format = (knut_cli_format)a.format;
    a.render.max_width = (int)a.max_width;
    if (a.render.format == KNUT_CLI_FORMAT_ARROW && isatty(STDOUT_FILENO))
        return knut_cli_args_error(&sql_spec, "%s", "refusing to write Arrow IPC bytes to a "
                                   "terminal: redirect stdout to a file or a pipe");
    knut_error err = KNUT_ERROR_INIT;
    knut_buf input = KNUT_BUF_INIT;
    struct ArrowArrayStream rows = {0};
    knut_cli_spark_stop ic = {.cmd = "spark sql"};
    int watching = 0;
    const char *sql = NULL;
    static knut_spark_param params[2 * KNUT_CLI_STRS_MAX];
    size_t nparams = 0;
    if ((rc = knut_cli_spark_params(&sql_spec, &a.params, &a.args, params, &nparams)) !=
        KNUT_EXIT_OK)
        return rc;
    knut_spark_session *s = NULL;
    if ((rc = knut_cli_spark_open(&sql_spec, &a.conn, NULL, &s)) != KNUT_EXIT_OK)
        return rc;
    rc = KNUT_EXIT_FAIL;
    if (knut_cli_query_text(a.sql, &input, SPARK_SQL_MAX, "SQL", &sql, &err) != KNUT_OK)
        goto cleanup;
    ic.s = s;
    if (knut_cli_spark_stop_watch(&ic, &err) != KNUT_OK)
        goto cleanup;
    watching = 1;
    knut_spark_exec_options eo = KNUT_SPARK_EXEC_OPTIONS_INIT;
    eo.not_reattachable = a.no_reattach;
    eo.on_event = a.events ? on_event : NULL;
    eo.operation_id_out = ic.op;
    /* armed before the call: the id is chosen before the request is sent */
    atomic_store(&ic.armed, 1);
    if (knut_spark_sql_params(s, sql, params, nparams, &eo, &rows, &err) != KNUT_OK)
        goto cleanup;
    if (!isatty(STDOUT_FILENO))
        setvbuf(stdout, NULL, _IOFBF, (size_t)1 << 16);
    int64_t n = 0;
    if (knut_cli_render_stream(stdout, &rows, &a.render, &n, &err) != KNUT_OK)
        goto cleanup;
    rc = KNUT_EXIT_OK;
cleanup:
    atomic_store(&ic.armed, 0);
    if (watching)
        knut_signal_unwatch();
    if (rc != KNUT_EXIT_OK) {
        fflush(stdout);
        if (knut_signal_stop_requested()) {
            fprintf(stderr, "knut spark sql: interrupted (operation %s stopped on %s)\n", ic.op,
                    knut_spark_session_peer(s));
            rc = 130;
        } else {
            fprintf(stderr, "knut spark sql: %s\n",
                    err.message[0] ? err.message : knut_strerror(err.code));
        }
    }
    knut_arrow_stream_release(&rows);
    knut_spark_session_free(s);
    knut_buf_reset(&input);
    return rc;
}

static int cmd_version(int argc, char **argv)
{
    spark_args a = {0};
    int rc = knut_cli_args_parse(&version_spec, argc, argv, &a);
    if (rc != KNUT_CLI_RUN)
        return rc;
    knut_spark_session *s = NULL;
    if ((rc = knut_cli_spark_open(&version_spec, &a.conn, NULL, &s)) != KNUT_EXIT_OK)
        return rc;
    knut_error err = KNUT_ERROR_INIT;
    char *v = NULL;
    rc = KNUT_EXIT_FAIL;
    if (knut_spark_version(s, &v, &err) == KNUT_OK) {
        printf("%s\n", v);
        rc = KNUT_EXIT_OK;
    } else {
        fprintf(stderr, "knut spark version: %s\n", err.message);
    }
    free(v);
    knut_spark_session_free(s);
    return rc;
}

static const knut_cli_sub subs[] = {
    {"sql", cmd_sql, "run SQL on a Spark Connect server and print the rows", &sql_spec},
    {"version", cmd_version, "print a Spark Connect server's Spark version", &version_spec},
    {NULL, NULL, NULL, NULL},
};

const knut_cli_group knut_cmd_spark_group = {
    "spark", "Work with Spark through Spark Connect (sc:// URLs).", subs};

int knut_cmd_spark(int argc, char **argv)
{
    return knut_cli_dispatch(&knut_cmd_spark_group, argc, argv);
}
