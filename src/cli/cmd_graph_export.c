/*
 * `knut graph export`: writes an embedded graph store (a DuckDB file made
 * by the store sink) as a GraphAr directory, through
 * knut_graph_store_export_graphar. Wired by the `graph` dispatcher.
 */
#include "cli.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "knut/graph.h"

typedef struct export_args {
    const char *db, *out;
    int file_type; /* index in file_types; -1: not given */
    knut_graph_store_export_options o;
} export_args;

static const char *const file_types[] = {"parquet", "csv", NULL};

static const knut_cli_opt export_opts[] = {
    KNUT_CLI_OPT_STR("db", 0, export_args, db, "FILE", "the graph store file (must exist)"),
    KNUT_CLI_OPT_STR("out", 0, export_args, out, "DIR", "output directory (created if missing)"),
    KNUT_CLI_OPT_STR("name", 0, export_args, o.name, "G", "graph name (default: graph)"),
    KNUT_CLI_OPT_CHOICE("file-type", 0, export_args, file_type, "T", file_types,
                        "parquet (default) or csv"),
    KNUT_CLI_OPT_INT("chunk-size", 0, export_args, o.vertex_chunk_size, "N", 1, INT64_MAX,
                     "vertices per chunk (default 262144)"),
    KNUT_CLI_OPT_INT("edge-chunk-size", 0, export_args, o.edge_chunk_size, "N", 1, INT64_MAX,
                     "edges per chunk (default 4194304)"),
    KNUT_CLI_OPT_FLAG("overwrite", 0, export_args, o.overwrite,
                      "replace existing type directories in DIR"),
    KNUT_CLI_OPT_END,
};

const knut_cli_spec knut_cmd_graph_export_spec = {
    .name = "graph export",
    .synopsis = "usage: knut graph export --db FILE --out DIR [--name G]\n"
                "                         [--file-type parquet|csv] [--chunk-size N]\n"
                "                         [--edge-chunk-size N] [--overwrite]\n",
    .about = "Writes the embedded graph store FILE as a GraphAr (gar/v1) graph in DIR:\n"
             "one vertex type per vertex label, one edge type per (source label, edge\n"
             "type, destination label), adjacency lists ordered by source and by\n"
             "destination.\n",
    .opts = export_opts,
    .epilog = "Example:\n"
              "  knut graph export --db graph.duckdb --out out/ --name social\n",
    .col = 23,
};

int knut_cmd_graph_export(int argc, char **argv)
{
    export_args a = {.file_type = -1, .o = KNUT_GRAPH_STORE_EXPORT_OPTIONS_INIT};
    int rc = knut_cli_args_parse(&knut_cmd_graph_export_spec, argc, argv, &a);
    if (rc != KNUT_CLI_RUN)
        return rc;
    if (!a.db)
        return knut_cli_args_missing(&knut_cmd_graph_export_spec, "--db FILE");
    if (!a.out)
        return knut_cli_args_missing(&knut_cmd_graph_export_spec, "--out DIR");
    const char *db = a.db, *out = a.out;
    knut_graph_store_export_options o = a.o;
    if (a.file_type >= 0)
        o.file_type = file_types[a.file_type];
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
