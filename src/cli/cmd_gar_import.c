/*
 * `knut gar import`: writes a GraphAr graph from Parquet/CSV tables or SQL
 * queries as a YAML config describes (schema in docs/graphar.md,
 * "Importing tables"). The library does the work in DuckDB with bounded
 * memory; this file parses options, prints one progress line per type on
 * stderr and the written graph YAML's path on stdout.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#include "gar_graph.h"
#include "knut/graphar.h"

const char knut_cmd_gar_import_usage[] =
    "usage: knut gar import --config FILE [OPTIONS]\n"
    "\n"
    "Writes an Apache GraphAr (gar/v1) graph from tables: Parquet or CSV files\n"
    "(paths or globs) or SQL queries, mapped onto vertex and edge types by a\n"
    "YAML (or JSON) config; see docs/graphar.md, \"Importing tables\". Vertex\n"
    "indices follow input order (or key order), edges are mapped to them by\n"
    "key, sorted per adjacency list, and cut into chunks with counts and\n"
    "offsets; then the graph, vertex and edge YAML files are saved. DuckDB\n"
    "does the work and spills to disk past its memory limit, so tables larger\n"
    "than memory import fine.\n"
    "\n"
    "Options:\n"
    "  -c, --config FILE     the import config (required)\n"
    "  -o, --output DIR      write the graph under DIR (overrides the config's\n"
    "                        `output`, which is relative to the config file)\n"
    "  --overwrite           empty the vertex and edge directories of an earlier\n"
    "                        graph in DIR first (they are refused otherwise)\n"
    "  --memory-limit SIZE   DuckDB memory limit, e.g. 2GB (overrides settings)\n"
    "  --temp-dir DIR        where DuckDB spills (default: a fresh directory under\n"
    "                        $TMPDIR, removed afterwards)\n"
    "  --threads N           DuckDB threads (default: all cores)\n"
    "  -q, --quiet           no progress lines on stderr\n"
    "  -h, --help            show this help\n"
    "\n"
    "Examples:\n"
    "  knut gar import -c import.yml\n"
    "  knut gar import -c import.yml -o /data/graphs/ldbc --overwrite --memory-limit 4GB\n"
    "  knut gar import -c import.yml -q && knut gar validate out/ldbc.graph.yml\n"
    "\n"
    "Exit status: 0 ok, 1 the config or the data was refused (the message names\n"
    "the file, line and column, or the table, row and column), 2 usage error.\n";

typedef struct import_args {
    const char *config;
    int quiet;
    knut_graphar_import_options o;
} import_args;

static int usage(const char *msg, const char *arg)
{
    fprintf(stderr, "knut gar import: %s%s%s\n", msg, arg ? " " : "", arg ? arg : "");
    fputs("usage: knut gar import --config FILE [OPTIONS] (see --help)\n", stderr);
    return KNUT_EXIT_USAGE;
}

static int parse_args(int argc, char **argv, import_args *a)
{
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *v;
        if (knut_cli_gar_is_opt(arg, "--config", "-c")) {
            if (!(a->config = knut_cli_gar_opt_value(argc, argv, &i, "--config", "-c")))
                return usage("--config needs a file", NULL);
        } else if (knut_cli_gar_is_opt(arg, "--output", "-o")) {
            if (!(a->o.output = knut_cli_gar_opt_value(argc, argv, &i, "--output", "-o")))
                return usage("--output needs a directory", NULL);
        } else if (knut_cli_gar_is_opt(arg, "--memory-limit", NULL)) {
            if (!(a->o.memory_limit =
                      knut_cli_gar_opt_value(argc, argv, &i, "--memory-limit", NULL)))
                return usage("--memory-limit needs a size such as 2GB", NULL);
        } else if (knut_cli_gar_is_opt(arg, "--temp-dir", NULL)) {
            if (!(a->o.temp_directory = knut_cli_gar_opt_value(argc, argv, &i, "--temp-dir", NULL)))
                return usage("--temp-dir needs a directory", NULL);
        } else if (knut_cli_gar_is_opt(arg, "--threads", NULL)) {
            char *end = NULL;
            v = knut_cli_gar_opt_value(argc, argv, &i, "--threads", NULL);
            long n = v ? strtol(v, &end, 10) : 0;
            if (!v || !*v || *end || n < 1 || n > 1024)
                return usage("--threads needs a number from 1 to 1024", NULL);
            a->o.threads = (int)n;
        } else if (strcmp(arg, "--overwrite") == 0) {
            a->o.overwrite = 1;
        } else if (strcmp(arg, "--quiet") == 0 || strcmp(arg, "-q") == 0) {
            a->quiet = 1;
        } else if (arg[0] == '-') {
            return usage("unknown option", arg);
        } else {
            return usage("unexpected argument (the config goes after --config):", arg);
        }
    }
    if (!a->config)
        return usage("--config FILE is required", NULL);
    return KNUT_EXIT_OK;
}

static void progress(void *ctx, const char *what, const knut_graphar_write_stats *st)
{
    (void)ctx;
    fprintf(stderr, "knut gar import: %s: %lld rows, %lld files, %.2f s", what,
            (long long)st->rows, (long long)st->files, st->seconds);
    if (st->skipped)
        fprintf(stderr, " (%lld rows skipped: unknown endpoint keys)", (long long)st->skipped);
    fputc('\n', stderr);
}

int knut_cmd_gar_import(int argc, char **argv)
{
    import_args a;
    memset(&a, 0, sizeof a);
    knut_graphar_import_options defaults = KNUT_GRAPHAR_IMPORT_OPTIONS_INIT;
    a.o = defaults;
    int rc = parse_args(argc, argv, &a);
    if (rc != KNUT_EXIT_OK)
        return rc;
    if (!a.quiet)
        a.o.progress = progress;
    knut_error err = KNUT_ERROR_INIT;
    knut_graphar_import *imp = NULL;
    char *yml = NULL;
    /* Ctrl-C stops at the next statement, so the spill directory is still
     * removed; a second Ctrl-C kills at once. */
    if (knut_signal_install(&err) != KNUT_OK)
        fprintf(stderr, "knut gar import: %s (Ctrl-C will not clean up)\n", err.message);
    if (knut_graphar_import_load(&imp, a.config, &err) != KNUT_OK ||
        knut_graphar_import_run(imp, &a.o, &yml, &err) != KNUT_OK) {
        fprintf(stderr, "knut gar import: %s\n", err.message);
        rc = KNUT_EXIT_FAIL;
    } else {
        printf("%s\n", yml);
    }
    free(yml);
    knut_graphar_import_free(imp);
    return rc;
}
