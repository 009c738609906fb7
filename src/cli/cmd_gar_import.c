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

#include "knut/graphar.h"

typedef struct import_args {
    const char *config;
    int quiet;
    int64_t threads;
    knut_graphar_import_options o;
} import_args;

static const knut_cli_opt import_opts[] = {
    KNUT_CLI_OPT_STR("config", 'c', import_args, config, "FILE", "the import config (required)"),
    KNUT_CLI_OPT_STR("output", 'o', import_args, o.output, "DIR",
                     "write the graph under DIR (overrides the config's `output`, which is "
                     "relative to the config file)"),
    KNUT_CLI_OPT_FLAG("overwrite", 0, import_args, o.overwrite,
                      "empty the vertex and edge directories of an earlier graph in DIR first "
                      "(they are refused otherwise)"),
    KNUT_CLI_OPT_STR("memory-limit", 0, import_args, o.memory_limit, "SIZE",
                     "DuckDB memory limit, e.g. 2GB (overrides settings)"),
    KNUT_CLI_OPT_STR("temp-dir", 0, import_args, o.temp_directory, "DIR",
                     "where DuckDB spills (default: a fresh directory under $TMPDIR, removed "
                     "afterwards)"),
    KNUT_CLI_OPT_INT("threads", 0, import_args, threads, "N", 1, 1024,
                     "DuckDB threads (default: all cores)"),
    KNUT_CLI_OPT_FLAG("quiet", 'q', import_args, quiet, "no progress lines on stderr"),
    KNUT_CLI_OPT_END,
};

const knut_cli_spec knut_cmd_gar_import_spec = {
    .name = "gar import",
    .synopsis = "usage: knut gar import -c|--config FILE [-o|--output DIR] [--overwrite]\n"
                "                       [--memory-limit SIZE] [--temp-dir DIR] [--threads N]\n"
                "                       [-q|--quiet]\n",
    .about =
        "Writes an Apache GraphAr (gar/v1) graph from tables: Parquet or CSV files\n"
        "(paths or globs) or SQL queries, mapped onto vertex and edge types by a\n"
        "YAML (or JSON) config; see docs/graphar.md, \"Importing tables\". Vertex\n"
        "indices follow input order (or key order), edges are mapped to them by\n"
        "key, sorted per adjacency list, and cut into chunks with counts and\n"
        "offsets; then the graph, vertex and edge YAML files are saved. DuckDB\n"
        "does the work and spills to disk past its memory limit, so tables larger\n"
        "than memory import fine.\n",
    .opts = import_opts,
    .epilog =
        "Examples:\n"
        "  knut gar import -c import.yml\n"
        "  knut gar import -c import.yml -o /data/graphs/ldbc --overwrite --memory-limit 4GB\n"
        "  knut gar import -c import.yml -q && knut gar validate out/ldbc.graph.yml\n"
        "\n"
        "Exit status: 0 ok, 1 the data was refused (the message names the table,\n"
        "row and column), 2 usage or config error (the config is missing or refused:\n"
        "the message names its file, line and column).\n",
    .more_hint = "the config goes after --config",
    .col = 24,
};

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
    int rc = knut_cli_args_parse(&knut_cmd_gar_import_spec, argc, argv, &a);
    if (rc != KNUT_CLI_RUN)
        return rc;
    if (!a.config)
        return knut_cli_args_missing(&knut_cmd_gar_import_spec, "--config FILE");
    a.o.threads = (int)a.threads;
    rc = KNUT_EXIT_OK;
    if (!a.quiet)
        a.o.progress = progress;
    knut_error err = KNUT_ERROR_INIT;
    knut_graphar_import *imp = NULL;
    char *yml = NULL;
    /* Ctrl-C stops at the next statement, so the spill directory is still
     * removed; a second Ctrl-C kills at once. */
    if (knut_signal_install(&err) != KNUT_OK)
        fprintf(stderr, "knut gar import: %s (Ctrl-C will not clean up)\n", err.message);
    knut_status st;
    if ((rc = knut_cli_config_check("gar import", a.config)) != 0)
        return rc;
    if ((st = knut_graphar_import_load(&imp, a.config, &err)) != KNUT_OK) {
        /* the config itself is refused: a config error, as for knut sync */
        fprintf(stderr, "knut gar import: %s\n", err.message);
        rc = knut_cli_config_exit(st);
    } else if (knut_graphar_import_run(imp, &a.o, &yml, &err) != KNUT_OK) {
        fprintf(stderr, "knut gar import: %s\n", err.message);
        rc = KNUT_EXIT_FAIL;
    } else {
        printf("%s\n", yml);
    }
    free(yml);
    knut_graphar_import_free(imp);
    return rc;
}
