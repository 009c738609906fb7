/*
 * `knut graph export`: writes an embedded graph store (a DuckDB file made
 * by the store sink) as a GraphAr directory, through
 * knut_graph_store_export_graphar. Wired by the `graph` dispatcher.
 */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "knut/graph.h"


const char knut_cmd_graph_export_usage[] =
    "usage: knut graph export --db FILE --out DIR [OPTIONS]\n"
    "\n"
    "Writes the embedded graph store FILE as a GraphAr (gar/v1) graph in DIR:\n"
    "one vertex type per vertex label, one edge type per (source label, edge\n"
    "type, destination label), adjacency lists ordered by source and by\n"
    "destination.\n"
    "\n"
    "Options:\n"
    "  --db FILE            the graph store file (must exist)\n"
    "  --out DIR            output directory (created if missing)\n"
    "  --name G             graph name (default: graph)\n"
    "  --file-type T        parquet (default) or csv\n"
    "  --chunk-size N       vertices per chunk (default 262144)\n"
    "  --edge-chunk-size N  edges per chunk (default 4194304)\n"
    "  --overwrite          replace existing type directories in DIR\n"
    "  -h, --help           show this help\n"
    "\n"
    "Example:\n"
    "  knut graph export --db graph.duckdb --out out/ --name social\n";

static const char *opt_value(int argc, char **argv, int *i, const char *name)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, name, n) == 0 && a[n] == '=')
        return a + n + 1;
    if (*i + 1 < argc)
        return argv[++*i];
    fprintf(stderr, "knut graph export: %s needs a value\n", name);
    return NULL;
}

static int is_opt(const char *a, const char *name)
{
    size_t n = strlen(name);
    return strcmp(a, name) == 0 || (strncmp(a, name, n) == 0 && a[n] == '=');
}

static int parse_size(const char *v, const char *name, int64_t *out)
{
    char *end = NULL;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    if (errno || !end || *end || end == v || n <= 0) {
        fprintf(stderr, "knut graph export: %s needs a number > 0, not '%s'\n", name, v);
        return KNUT_EXIT_USAGE;
    }
    *out = n;
    return KNUT_EXIT_OK;
}

int knut_cmd_graph_export(int argc, char **argv)
{
    knut_graph_store_export_options o = KNUT_GRAPH_STORE_EXPORT_OPTIONS_INIT;
    const char *db = NULL, *out = NULL, *v;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(knut_cmd_graph_export_usage, stdout);
            return KNUT_EXIT_OK;
        } else if (strcmp(a, "--overwrite") == 0) {
            o.overwrite = 1;
        } else if (is_opt(a, "--db") || is_opt(a, "--out") || is_opt(a, "--name") ||
                   is_opt(a, "--file-type") || is_opt(a, "--chunk-size") ||
                   is_opt(a, "--edge-chunk-size")) {
            char name[32];
            size_t n = strcspn(a, "=");
            snprintf(name, sizeof name, "%.*s", (int)n, a);
            if (!(v = opt_value(argc, argv, &i, name)))
                return KNUT_EXIT_USAGE;
            if (strcmp(name, "--db") == 0)
                db = v;
            else if (strcmp(name, "--out") == 0)
                out = v;
            else if (strcmp(name, "--name") == 0)
                o.name = v;
            else if (strcmp(name, "--file-type") == 0) {
                if (strcmp(v, "parquet") != 0 && strcmp(v, "csv") != 0) {
                    fprintf(stderr, "knut graph export: --file-type is parquet or csv, not '%s'\n",
                            v);
                    return KNUT_EXIT_USAGE;
                }
                o.file_type = v;
            } else if (parse_size(v, name, strcmp(name, "--chunk-size") == 0
                                              ? &o.vertex_chunk_size
                                              : &o.edge_chunk_size) != KNUT_EXIT_OK)
                return KNUT_EXIT_USAGE;
        } else {
            fprintf(stderr, "knut graph export: unknown argument '%s' (see --help)\n", a);
            return KNUT_EXIT_USAGE;
        }
    }
    if (!db || !out) {
        fputs(knut_cmd_graph_export_usage, stderr);
        return KNUT_EXIT_USAGE;
    }
    if (access(db, R_OK) != 0) {
        fprintf(stderr, "knut graph export: %s: %s\n", db, strerror(errno));
        return KNUT_EXIT_FAIL;
    }
    knut_cli_log_setup();
    knut_error err = KNUT_ERROR_INIT;
    knut_graph_store *s = NULL;
    knut_status st = knut_graph_store_open(&s, db, &err);
    if (st == KNUT_OK)
        st = knut_graph_store_export_graphar(s, out, &o, &err);
    knut_graph_store_close(s);
    if (st != KNUT_OK) {
        fprintf(stderr, "knut graph export: %s\n", err.message);
        return KNUT_EXIT_FAIL;
    }
    return KNUT_EXIT_OK;
}
