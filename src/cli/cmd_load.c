/*
 * `knut load`: a whole GraphAr graph into FalkorDB (GRAPH.BULK on a new
 * graph, UNWIND MERGE otherwise) or the embedded store, through
 * knut_graph_load_graphar_*. Progress: a one-line bar on stderr when it is
 * a terminal, else one JSON log line per finished set; "done" (stdout and
 * the log) only after everything was acknowledged.
 */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "knut/knut.h"

typedef struct load_args {
    const char *graphar, *mapping, *url, *graph, *db, *password_file;
    int quiet;
    knut_graph_load_options o;
} load_args;

static const knut_cli_opt load_opts[] = {
    KNUT_CLI_OPT_STR("graphar", 0, load_args, graphar, "PATH",
                     "a *.graph.yml, or a directory holding exactly one"),
    KNUT_CLI_OPT_STR("mapping", 0, load_args, mapping, "FILE",
                     "a sync config (tables + mapping) instead of --graphar"),
    KNUT_CLI_OPT_STR("falkordb", 0, load_args, url, "URL",
                     "redis://[[user]:password@]host[:port] (else $KNUT_FALKORDB_URL); a "
                     "password here is visible to every local user: use "
                     "--falkordb-password-file"),
    KNUT_CLI_OPT_STR("falkordb-password-file", 0, load_args, password_file, "FILE",
                     "file holding FalkorDB's password (one line); else "
                     "$KNUT_FALKORDB_PASSWORD"),
    KNUT_CLI_OPT_STR("graph", 0, load_args, graph, "NAME", "the FalkorDB graph (key) to load into"),
    KNUT_CLI_OPT_STR("db", 0, load_args, db, "FILE",
                     "the embedded graph store file instead of FalkorDB"),
    KNUT_CLI_OPT_INT("batch-rows", 0, load_args, o.batch_rows, "N", 1, INT64_MAX,
                     "rows per query / bulk blob (default 5000)"),
    KNUT_CLI_OPT_FLAG("no-bulk", 0, load_args, o.no_bulk, "never use GRAPH.BULK"),
    KNUT_CLI_OPT_FLAG("quiet", 'q', load_args, quiet, "no progress output"),
    KNUT_CLI_OPT_END,
};

const knut_cli_spec knut_cmd_load_spec = {
    .name = "load",
    .synopsis =
        "usage: knut load (--graphar PATH | --mapping SYNC.yml)\n"
        "                 (--falkordb URL --graph NAME [--falkordb-password-file FILE]\n"
        "                  | --db FILE)\n"
        "                 [--batch-rows N] [--no-bulk] [-q|--quiet]\n",
    .about =
        "Loads every vertex and edge of a GraphAr (gar/v1) graph into FalkorDB or\n"
        "into the embedded graph store (a DuckDB file, created if missing).\n"
        "With --mapping, loads tables (Parquet/CSV files) instead, mapped by a\n"
        "`knut sync` config (see docs/sync.md): every file of every table, in\n"
        "rounds, until none is left; a bad file fails the load (exit 1).\n"
        "\n"
        "Each vertex type becomes a label; vertices are merged on the type's\n"
        "primary property (or, without one, on `_gar_id`) and keep their GraphAr\n"
        "vertex index as the property `_gar_id`. Each edge type becomes a\n"
        "relationship type whose endpoints are found by (type, _gar_id); edges are\n"
        "read from one adjacency list (ordered by source when there is one).\n"
        "\n"
        "FalkorDB: a graph key that does not exist yet is built with GRAPH.BULK\n"
        "(much faster; node and edge counts are checked afterwards); an existing\n"
        "graph, or --no-bulk, gets batched UNWIND MERGE queries, so loading the\n"
        "same data twice leaves the same graph.\n",
    .opts = load_opts,
    .epilog =
        "Progress goes to stderr: a bar (rows, rows/s, ETA) on a terminal, else\n"
        "one JSON line per loaded type (--mapping: a bar over files, one JSON line\n"
        "per sync round). Exit 1 on any failure (nothing is then\n"
        "reported as done; rerun the load: it converges).\n"
        "\n"
        "Examples:\n"
        "  knut load --graphar ldbc/ldbc_sample.graph.yml \\\n"
        "            --falkordb redis://127.0.0.1:6379 --graph ldbc\n"
        "  knut load --graphar modern_graph/ --db graph.duckdb\n"
        "  knut load --mapping examples/lakehouse/sync.yml --db graph.duckdb\n",
};

typedef struct progress_state {
    int tty;
    int quiet;
    knut_cli_progress bar;
} progress_state;

static void progress_bar(const knut_graph_load_progress *p, progress_state *ps)
{
    knut_cli_progress_line l = {NULL, p->rows, p->total, "rows", -1, (double)p->elapsed_ns / 1e9,
                                p->set};
    knut_cli_progress_draw(&ps->bar, &l, p->done);
}

static void progress_json(const knut_graph_load_progress *p)
{
    double secs = (double)p->elapsed_ns / 1e9;
    knut_log_field f[] = {
        KNUT_LF_STR("kind", p->kind == KNUT_GRAPH_LOAD_VERTICES ? "vertices" : "edges"),
        KNUT_LF_STR("set", p->set),
        KNUT_LF_INT("set_rows", p->set_rows),
        KNUT_LF_INT("rows", p->rows),
        KNUT_LF_INT("total", p->total),
        KNUT_LF_DBL("seconds", secs),
        KNUT_LF_DBL("rows_per_s", secs > 0 ? (double)p->rows / secs : 0),
        KNUT_LF_STR("method", p->method ? p->method : ""),
    };
    knut_log_record rec = {knut_clock_wall_us(), KNUT_LOG_INFO, "load", "set loaded", f,
                           sizeof f / sizeof f[0]};
    knut_log_sink_json(&rec, stderr);
}

static void on_progress(const knut_graph_load_progress *p, void *ctx)
{
    progress_state *ps = ctx;
    if (ps->quiet)
        return;
    if (ps->tty)
        progress_bar(p, ps);
    else if (p->done)
        progress_json(p);
}

int knut_cmd_load(int argc, char **argv)
{
    load_args a = {.o = KNUT_GRAPH_LOAD_OPTIONS_INIT};
    int rc = knut_cli_args_parse(&knut_cmd_load_spec, argc, argv, &a);
    if (rc != KNUT_CLI_RUN)
        return rc;
    const char *gar = a.graphar, *mapping = a.mapping, *url = a.url, *graph = a.graph, *db = a.db;
    const char *env_url = getenv("KNUT_FALKORDB_URL"); /* other users cannot read it (ps can) */
    int url_from_env = !url && !db && env_url && *env_url;
    if (url_from_env)
        url = env_url;
    const knut_cli_spec *sp = &knut_cmd_load_spec;
    if (!gar && !mapping)
        return knut_cli_args_missing(sp, "--graphar PATH or --mapping FILE");
    if (gar && mapping)
        return knut_cli_args_error(sp, "%s", "--graphar and --mapping exclude each other");
    if (mapping && a.o.batch_rows != 0) /* 0: not given (the default 5000) */
        return knut_cli_args_error(sp, "%s", "--batch-rows is for --graphar (a --mapping load "
                                             "batches as knut sync does)");
    if (!db && !url)
        return knut_cli_args_missing(sp, "--db FILE or --falkordb URL (or KNUT_FALKORDB_URL)");
    if (db && url)
        return knut_cli_args_error(sp, "%s", "--db and --falkordb exclude each other");
    if (url && !graph)
        return knut_cli_args_missing(sp, "--graph NAME (the FalkorDB graph to load into)");
    if (a.password_file && !url)
        return knut_cli_args_error(&knut_cmd_load_spec, "%s",
                                   "--falkordb-password-file needs --falkordb (or "
                                   "KNUT_FALKORDB_URL)");
    char *password = NULL;
    if (url && knut_cli_peer_password("load", "--falkordb", "--falkordb-password-file", url,
                                      url_from_env, a.password_file, "KNUT_FALKORDB_PASSWORD",
                                      &password) != 0)
        return KNUT_EXIT_USAGE;
    progress_state ps = {isatty(STDERR_FILENO), a.quiet, {0}};
    knut_graph_load_options o = a.o;
    if (mapping) {
        rc = knut_cli_load_mapping(mapping, url, password, graph, db, a.o.no_bulk, ps.quiet);
        knut_net_secret_free(password);
        return rc;
    }
    o.progress = on_progress;
    o.progress_ctx = &ps;
    knut_error err = KNUT_ERROR_INIT;
    knut_graphar_graph_info *gi = NULL;
    knut_graph_falkor *g = NULL;
    knut_graph_store *s = NULL;
    knut_graph_load_stats stats = {0};
    knut_status st = knut_graphar_graph_load_path(&gi, gar, &err);
    if (st == KNUT_OK && url) {
        knut_graph_falkor_options fo = KNUT_GRAPH_FALKOR_OPTIONS_INIT;
        fo.password = password;
        st = knut_graph_falkor_connect_url(&g, url, &fo, &err);
        if (st == KNUT_OK)
            st = knut_graph_load_graphar_falkor(g, graph, gi, &o, &stats, &err);
    } else if (st == KNUT_OK) {
        st = knut_graph_store_open(&s, db, &err);
        if (st == KNUT_OK)
            st = knut_graph_load_graphar_store(s, gi, &o, &stats, &err);
    }
    knut_graph_falkor_close(g);
    knut_net_secret_free(password); /* the client wiped its own copy */
    knut_graph_store_close(s);
    knut_graphar_graph_info_free(gi);
    if (ps.tty && !ps.quiet)
        knut_cli_progress_end(&ps.bar, 1);
    if (st != KNUT_OK) {
        fprintf(stderr, "knut load: %s\n", err.message);
        return KNUT_EXIT_FAIL;
    }
    const char *method = url ? (stats.bulk ? "bulk" : "unwind") : "embedded";
    if (!ps.tty && !ps.quiet) {
        knut_log_field f[] = {KNUT_LF_INT("vertices", stats.vertices),
                              KNUT_LF_INT("edges", stats.edges),
                              KNUT_LF_DBL("seconds", stats.seconds),
                              KNUT_LF_STR("method", method)};
        knut_log_record rec = {knut_clock_wall_us(), KNUT_LOG_INFO, "load", "done", f, 4};
        knut_log_sink_json(&rec, stderr);
    }
    printf("done: %lld vertices, %lld edges in %.2f s (%s)\n", (long long)stats.vertices,
           (long long)stats.edges, stats.seconds, method);
    return KNUT_EXIT_OK;
}
