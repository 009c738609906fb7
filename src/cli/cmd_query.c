/*
 * `knut query`: runs SQL on the embedded engine and prints the rows of the
 * last statement as a table, CSV, JSON lines or an Arrow IPC stream. Rows
 * stream from DuckDB through the renderer batch by batch, so a query of
 * any size prints in bounded memory.
 */
#include "cli.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "knut/knut.h"
#include "render.h"

const char knut_cmd_query_usage[] =
    "usage: knut query [OPTIONS] SQL\n"
    "       knut query [OPTIONS] -        (read the SQL from stdin)\n"
    "\n"
    "Runs SQL on the embedded engine (DuckDB) and prints the rows of the last\n"
    "statement. Several statements separated by ';' run in order. Parquet,\n"
    "CSV and JSON files can be queried directly by path or glob:\n"
    "  SELECT * FROM 'data/*.parquet'\n"
    "\n"
    "Options:\n"
    "  --db FILE          database file, created if missing (default: a fresh\n"
    "                     in-memory database)\n"
    "  --read-only        open --db FILE read-only; it must exist\n"
    "  -f, --format FMT   table   aligned text table (the default)\n"
    "                     csv     RFC 4180, header row, NULL as an empty field\n"
    "                     json    one JSON object per line; NULL as null,\n"
    "                             dates and timestamps as ISO 8601 strings\n"
    "                     arrow   Arrow IPC stream (binary; not to a terminal)\n"
    "  --max-rows N       table only: show at most N rows (default 1000, 0 = all)\n"
    "  --max-width N      table only: cut cells longer than N characters\n"
    "                     (default 48); widths come from the first 2048 rows\n"
    "  --set NAME=VALUE   a DuckDB setting applied when opening, e.g.\n"
    "                     threads=4, memory_limit=2GB (repeatable)\n"
    "  -h, --help         show this help\n"
    "\n"
    "Examples:\n"
    "  knut query \"SELECT 42\"\n"
    "  knut query -f csv \"SELECT * FROM 'events.parquet' WHERE n > 10\" > big.csv\n"
    "  knut query -f json \"SELECT * FROM read_csv('people.csv') LIMIT 10\"\n"
    "  knut query --db g.duckdb \"CREATE TABLE v AS FROM 'v.parquet'; SELECT count(*) FROM v\"\n"
    "  echo \"SELECT count(*) FROM 'logs/*.csv'\" | knut query -\n"
    "  knut query -f arrow \"SELECT * FROM 'x.parquet'\" > x.arrows\n"
    "\n"
    "Exit status: 0 ok, 1 the query or the output failed, 2 usage error.\n";

/* Cap on SQL read from stdin: a script, not a data file. */
#define QUERY_STDIN_MAX ((size_t)16 << 20)
#define QUERY_MAX_SETTINGS 32

typedef struct query_args {
    const char *db;
    const char *sql;
    int read_only;
    knut_cli_render_opts render;
    knut_duck_option settings[QUERY_MAX_SETTINGS + 1];
    size_t nsettings;
} query_args;

static int usage_error(const char *fmt, ...) KNUT_PRINTF(1, 2);

static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("knut query: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\n"
          "usage: knut query [OPTIONS] SQL\n"
          "       knut query [OPTIONS] -\n"
          "Run 'knut query --help' for the options and examples.\n",
          stderr);
    return KNUT_EXIT_USAGE;
}

/* "--name VALUE" or "--name=VALUE"; returns the value or NULL. */
static const char *opt_value(int argc, char **argv, int *i, const char *longname,
                             const char *shortname)
{
    const char *a = argv[*i];
    size_t n = strlen(longname);
    if (strncmp(a, longname, n) == 0 && a[n] == '=')
        return a + n + 1;
    if (strcmp(a, longname) == 0 || (shortname && strcmp(a, shortname) == 0)) {
        if (*i + 1 >= argc)
            return NULL;
        return argv[++*i];
    }
    return NULL;
}

static int is_opt(const char *a, const char *longname, const char *shortname)
{
    size_t n = strlen(longname);
    return strcmp(a, longname) == 0 || (strncmp(a, longname, n) == 0 && a[n] == '=') ||
           (shortname && strcmp(a, shortname) == 0);
}

static int parse_count(const char *s, int64_t *out)
{
    char *end = NULL;
    long long v = strtoll(s, &end, 10);
    if (!*s || *end || v < 0)
        return -1;
    *out = v;
    return 0;
}

static int parse_args(int argc, char **argv, query_args *a)
{
    int64_t n;
    a->render.format = KNUT_CLI_FORMAT_TABLE;
    a->render.max_rows = KNUT_CLI_TABLE_DEFAULT_MAX_ROWS;
    int opts_done = 0;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char *v;
        if (!opts_done && strcmp(arg, "--") == 0) {
            opts_done = 1;
        } else if (opts_done || arg[0] != '-' || strcmp(arg, "-") == 0) {
            if (a->sql)
                return usage_error("more than one SQL argument ('%s'); quote the SQL", arg);
            a->sql = arg;
        } else if (is_opt(arg, "--db", NULL)) {
            if (!(v = opt_value(argc, argv, &i, "--db", NULL)))
                return usage_error("%s needs a file name", arg);
            a->db = v;
        } else if (strcmp(arg, "--read-only") == 0) {
            a->read_only = 1;
        } else if (is_opt(arg, "--format", "-f")) {
            if (!(v = opt_value(argc, argv, &i, "--format", "-f")))
                return usage_error("%s needs table, csv, json or arrow", arg);
            if (knut_cli_format_parse(v, &a->render.format) != 0)
                return usage_error("unknown format '%s' (want table, csv, json or arrow)", v);
        } else if (is_opt(arg, "--max-rows", NULL)) {
            if (!(v = opt_value(argc, argv, &i, "--max-rows", NULL)) || parse_count(v, &n) != 0)
                return usage_error("%s needs a count (0 = all)", arg);
            a->render.max_rows = n;
        } else if (is_opt(arg, "--max-width", NULL)) {
            if (!(v = opt_value(argc, argv, &i, "--max-width", NULL)) || parse_count(v, &n) != 0 ||
                n < 1 || n > 100000)
                return usage_error("%s needs a width of 1 or more characters", arg);
            a->render.max_width = (int)n;
        } else if (is_opt(arg, "--set", NULL)) {
            char *eq;
            v = opt_value(argc, argv, &i, "--set", NULL);
            if (!v || !(eq = strchr(v, '=')) || eq == v)
                return usage_error("%s needs NAME=VALUE", arg);
            if (a->nsettings == QUERY_MAX_SETTINGS)
                return usage_error("too many --set options (at most %d)", QUERY_MAX_SETTINGS);
            /* argv strings are writable: split NAME=VALUE in place. */
            *eq = '\0';
            a->settings[a->nsettings].name = v;
            a->settings[a->nsettings].value = eq + 1;
            a->nsettings++;
        } else {
            return usage_error("unknown option '%s'", arg);
        }
    }
    if (!a->sql)
        return usage_error("%s", "no SQL given");
    if (a->read_only && !a->db)
        return usage_error("%s", "--read-only needs --db FILE");
    if (a->read_only) {
        a->settings[a->nsettings].name = "access_mode";
        a->settings[a->nsettings].value = "READ_ONLY";
        a->nsettings++;
    }
    return KNUT_EXIT_OK;
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
    if (rc != KNUT_EXIT_OK)
        return rc;
    if (a.render.format == KNUT_CLI_FORMAT_ARROW && isatty(STDOUT_FILENO))
        return usage_error("%s", "refusing to write Arrow IPC bytes to a terminal: redirect "
                                 "stdout to a file or a pipe");

    rc = KNUT_EXIT_FAIL;
    const char *sql = NULL;
    if (knut_cli_query_text(a.sql, &input, QUERY_STDIN_MAX, "SQL", &sql, &err) != KNUT_OK)
        goto cleanup;
    if (knut_duck_db_open(&db, a.db, a.settings, a.nsettings, &err) != KNUT_OK)
        goto cleanup;
    if (knut_duck_conn_open(&conn, db, &err) != KNUT_OK)
        goto cleanup;
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
