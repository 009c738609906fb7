/*
 * `knut query`: runs SQL on the embedded engine and prints the rows of the
 * last statement as a table, CSV, JSON lines or an Arrow IPC stream. Rows
 * stream from DuckDB through the renderer batch by batch, so a query of
 * any size prints in bounded memory.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "knut/knut.h"
#include "query_csv.h"
#include "render.h"

/* Cap on SQL read from stdin: a script, not a data file. */
#define QUERY_STDIN_MAX ((size_t)16 << 20)
#define QUERY_MAX_SETTINGS 32

typedef struct query_args {
    const char *db;
    const char *sql;
    int read_only;
    int strict; /* a CSV the sniffer reads lossily is an error, not a warning */
    int format;
    int64_t max_width;
    knut_cli_strs set;
    knut_cli_render_opts render;
    knut_duck_option settings[QUERY_MAX_SETTINGS + 1];
    size_t nsettings;
} query_args;

static const knut_cli_opt query_opts[] = {
    KNUT_CLI_OPT_STR("db", 0, query_args, db, "FILE",
                     "database file, created if missing (default: a fresh in-memory database)"),
    KNUT_CLI_OPT_FLAG("read-only", 0, query_args, read_only,
                      "open --db FILE read-only; it must exist"),
    KNUT_CLI_OPT_FLAG("strict", 0, query_args, strict,
                      "a CSV file that DuckDB's sniffer reads by skipping lines or naming "
                      "columns itself (column0, id_1) is an error, not a warning"),
    KNUT_CLI_OPT_CHOICE("format", 'f', query_args, format, "FMT", knut_cli_format_names,
                        KNUT_CLI_FORMAT_HELP),
    KNUT_CLI_OPT_INT("max-rows", 0, query_args, render.max_rows, "N", 0, INT64_MAX,
                     "table only: show at most N rows (default 1000, 0 = all)"),
    KNUT_CLI_OPT_INT("max-width", 0, query_args, max_width, "N", 1, 100000,
                     "table only: cut cells longer than N characters (default 48); widths "
                     "come from the first 2048 rows"),
    KNUT_CLI_OPT_STRS("set", 0, query_args, set, "NAME=VALUE", QUERY_MAX_SETTINGS,
                      "a DuckDB setting applied when opening, e.g. threads=4, "
                      "memory_limit=2GB (repeatable)"),
    KNUT_CLI_OPT_END,
};

static const knut_cli_arg query_pos[] = {KNUT_CLI_ARG("SQL", query_args, sql), KNUT_CLI_ARG_END};

const knut_cli_spec knut_cmd_query_spec = {
    .name = "query",
    .synopsis = "usage: knut query [--db FILE [--read-only]] [-f|--format table|csv|json|arrow]\n"
                "                  [--max-rows N] [--max-width N] [--set NAME=VALUE]...\n"
                "                  [--strict] SQL\n"
                "       knut query [OPTIONS] -        (read the SQL from stdin)\n",
    .about = "Runs SQL on the embedded engine (DuckDB) and prints the rows of the last\n"
             "statement. Several statements separated by ';' run in order. Parquet,\n"
             "CSV and JSON files can be queried directly by path or glob:\n"
             "  SELECT * FROM 'data/*.parquet'\n"
             "A CSV file whose sniffed reading skips lines or makes up column names\n"
             "(no header found: column0, column1, ...; an empty or repeated header name)\n"
             "gets a warning on stderr naming the file; --strict makes it an error.\n",
    .opts = query_opts,
    .args = query_pos,
    .epilog =
        "Examples:\n"
        "  knut query \"SELECT 42\"\n"
        "  knut query -f csv \"SELECT * FROM 'events.parquet' WHERE n > 10\" > big.csv\n"
        "  knut query -f json \"SELECT * FROM read_csv('people.csv') LIMIT 10\"\n"
        "  knut query --db g.duckdb \"CREATE TABLE v AS FROM 'v.parquet'; SELECT count(*) FROM v\"\n"
        "  echo \"SELECT count(*) FROM 'logs/*.csv'\" | knut query -\n"
        "  knut query -f arrow \"SELECT * FROM 'x.parquet'\" > x.arrows\n"
        "\n"
        "  knut query --strict \"SELECT * FROM 'drops/*.csv'\"\n"
        "\n"
        "Exit status: 0 ok, 1 the query or the output failed (with --strict: also a\n"
        "CSV read lossily), 2 usage error.\n",
    .more_hint = "quote the SQL",
};

static void csv_warn(const char *file, const char *what, void *ctx)
{
    const query_args *a = ctx;
    fprintf(stderr, "knut query: %s%s: %s\n", a->strict ? "" : "warning: ", file, what);
}

static int parse_args(int argc, char **argv, query_args *a)
{
    a->render.max_rows = KNUT_CLI_TABLE_DEFAULT_MAX_ROWS;
    int rc = knut_cli_args_parse(&knut_cmd_query_spec, argc, argv, a);
    if (rc != KNUT_CLI_RUN)
        return rc;
    a->render.format = (knut_cli_format)a->format;
    a->render.max_width = (int)a->max_width;
    for (size_t i = 0; i < a->set.n; i++) {
        char *v = a->set.v[i], *eq = strchr(v, '=');
        if (!eq || eq == v)
            return knut_cli_args_error(&knut_cmd_query_spec, "--set needs NAME=VALUE, not '%s'",
                                       v);
        /* argv strings are writable: split NAME=VALUE in place. */
        *eq = '\0';
        a->settings[a->nsettings].name = v;
        a->settings[a->nsettings].value = eq + 1;
        a->nsettings++;
    }
    if (a->read_only && !a->db)
        return knut_cli_args_error(&knut_cmd_query_spec, "%s", "--read-only needs --db FILE");
    if (a->read_only) {
        a->settings[a->nsettings].name = "access_mode";
        a->settings[a->nsettings].value = "READ_ONLY";
        a->nsettings++;
    }
    return KNUT_CLI_RUN;
}

int knut_cmd_query(int argc, char **argv)
{
    query_args a = {0};
    knut_error err = KNUT_ERROR_INIT;
    knut_buf input = KNUT_BUF_INIT;
    knut_duck_db *db = NULL;
    knut_duck_conn *conn = NULL;
    struct ArrowArrayStream rows = {0};
    int rc = parse_args(argc, argv, &a);
    if (rc != KNUT_CLI_RUN)
        return rc;
    if (a.render.format == KNUT_CLI_FORMAT_ARROW && isatty(STDOUT_FILENO))
        return knut_cli_args_error(&knut_cmd_query_spec, "%s", "refusing to write Arrow IPC bytes to a terminal: redirect "
                                 "stdout to a file or a pipe");

    rc = KNUT_EXIT_FAIL;
    const char *sql = NULL;
    if (knut_cli_query_text(a.sql, &input, QUERY_STDIN_MAX, "SQL", &sql, &err) != KNUT_OK)
        goto cleanup;
    if (knut_duck_db_open(&db, a.db, a.settings, a.nsettings, &err) != KNUT_OK)
        goto cleanup;
    if (knut_duck_conn_open(&conn, db, &err) != KNUT_OK)
        goto cleanup;
    int lossy = 0; /* query_csv.c: CSV files the sniffer reads lossily */
    if (knut_cli_query_csv_check(conn, sql, csv_warn, &a, &lossy, &err) != KNUT_OK)
        goto cleanup;
    if (a.strict && lossy > 0) {
        knut_error_set(&err, KNUT_EINVAL, "%d lossy CSV reading%s (--strict): fix the file "
                       "or say how to read it (read_csv options header, skip, names)", lossy,
                       lossy == 1 ? "" : "s");
        goto cleanup;
    }
    if (knut_duck_query(conn, sql, &rows, &err) != KNUT_OK)
        goto cleanup;
    /* Block buffering pays off for large outputs into pipes and files. */
    if (!isatty(STDOUT_FILENO))
        setvbuf(stdout, NULL, _IOFBF, (size_t)1 << 16);
    int64_t nrows = 0;
    if (knut_cli_render_stream(stdout, &rows, &a.render, &nrows, &err) != KNUT_OK)
        goto cleanup;
    KNUT_LOG(KNUT_LOG_DEBUG, "query", "printed %lld rows", (long long)nrows);
    rc = KNUT_EXIT_OK;

cleanup:
    if (rc != KNUT_EXIT_OK) {
        fflush(stdout);
        fprintf(stderr, "knut query: %s\n", err.message[0] ? err.message : knut_strerror(err.code));
    }
    knut_arrow_stream_release(&rows);
    knut_duck_conn_close(conn);
    knut_duck_db_close(db);
    knut_buf_reset(&input);
    return rc;
}
