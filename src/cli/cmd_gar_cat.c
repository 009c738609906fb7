/*
 * `knut gar cat`: prints the vertices or edges of one type of a GraphAr
 * graph as a table, CSV, JSON lines or an Arrow IPC stream. Vertices come
 * with every property group joined on the vertex index (and the label
 * columns); edges with source, destination and every edge property, from
 * one adjacency list. Rows stream from the chunk files through the
 * renderer, so any graph prints in bounded memory, and --limit stops
 * reading chunks once enough rows are out.
 */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gar_graph.h"
#include "knut/knut.h"
#include "render.h"

const char knut_cmd_gar_cat_usage[] =
    "usage: knut gar cat [OPTIONS] PATH TYPE\n"
    "\n"
    "Prints every vertex or edge of one type of a GraphAr (gar/v1) graph.\n"
    "PATH is a *.graph.yml, or a directory holding exactly one. TYPE is:\n"
    "  a vertex type    person             columns: _graphArVertexIndex, the\n"
    "                                      properties of every group, then one\n"
    "                                      boolean column per label\n"
    "  an edge type     person_knows_person  or  person,knows,person\n"
    "                                      columns: _graphArSrcIndex,\n"
    "                                      _graphArDstIndex, the edge properties\n"
    "Parquet, CSV and JSON Lines chunks are read (ORC is not supported). Values\n"
    "have the GraphAr types: timestamps in ms, strings, lists, booleans.\n"
    "\n"
    "Options:\n"
    "  -f, --format FMT   table   aligned text table (the default)\n"
    "                     csv     RFC 4180, header row, NULL as an empty field\n"
    "                     json    one JSON object per line; NULL as null,\n"
    "                             dates and timestamps as ISO 8601 strings\n"
    "                     arrow   Arrow IPC stream (binary; not to a terminal)\n"
    "  -n, --limit N      print at most N rows (default: all; a table shows\n"
    "                     1000 unless --limit is given)\n"
    "  --adj-list TYPE    the adjacency list edges are read from:\n"
    "                     ordered_by_source, ordered_by_dest,\n"
    "                     unordered_by_source, unordered_by_dest (default: the\n"
    "                     first one listed that has data)\n"
    "  --data-dir DIR     read the chunks under DIR instead of the graph prefix\n"
    "  --max-width N      table only: cut cells longer than N characters\n"
    "  -h, --help         show this help\n"
    "\n"
    "Examples:\n"
    "  knut gar cat ../shared/data/graphar-testing/modern_graph person\n"
    "  knut gar cat -f json -n 5 ../shared/data/graphar-testing/neo4j Person\n"
    "  knut gar cat --adj-list ordered_by_dest -f csv \\\n"
    "      ../shared/data/graphar-testing/ldbc_sample/csv person_knows_person > knows.csv\n"
    "  knut gar cat -f arrow ../shared/data/graphar-testing/modern_graph \\\n"
    "      person,created,software > created.arrows\n"
    "\n"
    "Exit status: 0 ok, 1 the graph, the type or a chunk could not be read\n"
    "(the message names the file), 2 usage error.\n";

typedef struct cat_args {
    const char *path;
    const char *type;
    const char *data_dir;
    const char *adj_list;
    int64_t limit;
    knut_cli_render_opts render;
} cat_args;

static int usage_error(const char *msg, const char *arg)
{
    fprintf(stderr, "knut gar cat: %s%s%s\nusage: knut gar cat [OPTIONS] PATH TYPE\n", msg,
            arg ? " " : "", arg ? arg : "");
    return KNUT_EXIT_USAGE;
}

static int parse_count(const char *s, int64_t *out)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (!*s || *end || v < 0 || errno)
        return -1;
    *out = v;
    return 0;
}

static int parse_args(int argc, char **argv, cat_args *a)
{
    int opts_done = 0;
    int64_t n;
    a->render.format = KNUT_CLI_FORMAT_TABLE;
    a->render.max_rows = KNUT_CLI_TABLE_DEFAULT_MAX_ROWS;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *v;
        if (!opts_done && strcmp(arg, "--") == 0) {
            opts_done = 1;
        } else if (opts_done || arg[0] != '-') {
            if (!a->path)
                a->path = arg;
            else if (!a->type)
                a->type = arg;
            else
                return usage_error("unexpected argument", arg);
        } else if (knut_cli_gar_is_opt(arg, "--format", "-f")) {
            if (!(v = knut_cli_gar_opt_value(argc, argv, &i, "--format", "-f")) ||
                knut_cli_format_parse(v, &a->render.format) != 0)
                return usage_error("--format is table, csv, json or arrow", NULL);
        } else if (knut_cli_gar_is_opt(arg, "--limit", "-n")) {
            if (!(v = knut_cli_gar_opt_value(argc, argv, &i, "--limit", "-n")) ||
                parse_count(v, &n) != 0 || n == 0)
                return usage_error("--limit needs a row count > 0", NULL);
            a->limit = n;
            a->render.max_rows = n;
        } else if (knut_cli_gar_is_opt(arg, "--adj-list", NULL)) {
            if (!(a->adj_list = knut_cli_gar_opt_value(argc, argv, &i, "--adj-list", NULL)))
                return usage_error("--adj-list needs a type", NULL);
        } else if (knut_cli_gar_is_opt(arg, "--data-dir", NULL)) {
            if (!(a->data_dir = knut_cli_gar_opt_value(argc, argv, &i, "--data-dir", NULL)))
                return usage_error("--data-dir needs a directory", NULL);
        } else if (knut_cli_gar_is_opt(arg, "--max-width", NULL)) {
            if (!(v = knut_cli_gar_opt_value(argc, argv, &i, "--max-width", NULL)) ||
                parse_count(v, &n) != 0 || n < 1 || n > 100000)
                return usage_error("--max-width needs a width of 1 or more", NULL);
            a->render.max_width = (int)n;
        } else {
            return usage_error("unknown option", arg);
        }
    }
    if (!a->path || !a->type)
        return usage_error(!a->path ? "no PATH given" : "no TYPE given", NULL);
    return KNUT_EXIT_OK;
}

/* The edge TYPE names: "s,e,d" exactly, or the "s_e_d" key. */
static const knut_graphar_edge_info *find_edge(const knut_graphar_graph_info *gi,
                                               const char *type)
{
    const char *c1 = strchr(type, ','), *c2 = c1 ? strchr(c1 + 1, ',') : NULL;
    for (size_t i = 0; i < gi->n_edges; i++) {
        const knut_graphar_edge_info *ei = gi->edges[i];
        const char *s = ei->src_type ? ei->src_type : "", *e = ei->edge_type ? ei->edge_type : "",
                   *d = ei->dst_type ? ei->dst_type : "";
        size_t ls = strlen(s), le = strlen(e);
        if (c2) {
            if ((size_t)(c1 - type) == ls && strncmp(type, s, ls) == 0 &&
                (size_t)(c2 - c1 - 1) == le && strncmp(c1 + 1, e, le) == 0 &&
                strcmp(c2 + 1, d) == 0)
                return ei;
        } else if (strncmp(type, s, ls) == 0 && type[ls] == '_' &&
                   strncmp(type + ls + 1, e, le) == 0 && type[ls + 1 + le] == '_' &&
                   strcmp(type + ls + le + 2, d) == 0) {
            return ei;
        }
    }
    return NULL;
}

static knut_status no_such_type(const knut_graphar_graph_info *gi, const char *type,
                                knut_error *err)
{
    knut_buf b = KNUT_BUF_INIT;
    for (size_t i = 0; i < gi->n_vertices; i++)
        knut_buf_printf(&b, "%s%s", i ? ", " : "", gi->vertices[i]->type);
    knut_buf_puts(&b, gi->n_vertices ? "; edge types: " : "edge types: ");
    for (size_t i = 0; i < gi->n_edges; i++)
        knut_buf_printf(&b, "%s%s_%s_%s", i ? ", " : "", gi->edges[i]->src_type,
                        gi->edges[i]->edge_type, gi->edges[i]->dst_type);
    knut_status st = knut_error_set(err, KNUT_ENOTFOUND,
                                    "graph %s has no vertex or edge type '%s' (vertex types: %s)",
                                    gi->name, type, b.data ? b.data : "");
    knut_buf_reset(&b);
    return st;
}

/* --adj-list, or the first adj list whose data is there. */
static knut_status pick_adj_list(knut_graphar_reader *r, const knut_graphar_edge_info *ei,
                                 const char *name, knut_graphar_adj_list_type *out,
                                 knut_error *err)
{
    if (name) {
        knut_status st = knut_graphar_adj_list_type_parse(name, out, err);
        if (st != KNUT_OK)
            return st;
        if (!knut_graphar_edge_info_adj_list(ei, *out))
            return knut_error_set(err, KNUT_ENOTFOUND, "edge %s_%s_%s has no %s adj list",
                                  ei->src_type, ei->edge_type, ei->dst_type, name);
        return KNUT_OK;
    }
    if (ei->n_adj_lists == 0)
        return knut_error_set(err, KNUT_ENOTFOUND, "edge %s_%s_%s has no adj list",
                              ei->src_type, ei->edge_type, ei->dst_type);
    *out = ei->adj_lists[0].type;
    for (size_t i = 0; i < ei->n_adj_lists; i++) {
        int64_t n;
        knut_error e = KNUT_ERROR_INIT;
        if (knut_graphar_reader_aligned_count(r, ei, ei->adj_lists[i].type, &n, &e) == KNUT_OK) {
            *out = ei->adj_lists[i].type;
            break;
        }
    }
    return KNUT_OK;
}

int knut_cmd_gar_cat(int argc, char **argv)
{
    cat_args a = {0};
    knut_error err = KNUT_ERROR_INIT;
    knut_graphar_graph_info *gi = NULL;
    knut_graphar_reader *r = NULL;
    struct ArrowArrayStream rows = {0};
    int rc = parse_args(argc, argv, &a);
    if (rc != KNUT_EXIT_OK)
        return rc;
    if (a.render.format == KNUT_CLI_FORMAT_ARROW && isatty(STDOUT_FILENO))
        return usage_error("refusing to write Arrow IPC bytes to a terminal: redirect stdout",
                           NULL);
    rc = KNUT_EXIT_FAIL;
    if (knut_cli_gar_load(a.path, &gi, &err) != KNUT_OK)
        goto cleanup;
    knut_graphar_read_options opts = KNUT_GRAPHAR_READ_OPTIONS_INIT;
    opts.limit = a.limit;
    const char *dir = a.data_dir ? a.data_dir : knut_graphar_graph_data_dir(gi);
    if (knut_graphar_reader_new(&r, NULL, dir, &opts, &err) != KNUT_OK)
        goto cleanup;
    const knut_graphar_vertex_info *vi = knut_graphar_graph_info_vertex(gi, a.type);
    const knut_graphar_edge_info *ei = vi ? NULL : find_edge(gi, a.type);
    knut_status st;
    if (vi) {
        if (a.adj_list) {
            knut_error_set(&err, KNUT_EINVAL, "--adj-list is for edge types; %s is a vertex type",
                           a.type);
            goto cleanup;
        }
        st = knut_graphar_reader_vertices(r, vi, &rows, &err);
    } else if (ei) {
        knut_graphar_adj_list_type t;
        st = pick_adj_list(r, ei, a.adj_list, &t, &err);
        if (st == KNUT_OK)
            st = knut_graphar_reader_edges(r, ei, t, &rows, &err);
    } else {
        st = no_such_type(gi, a.type, &err);
    }
    if (st != KNUT_OK)
        goto cleanup;
    if (!isatty(STDOUT_FILENO))
        setvbuf(stdout, NULL, _IOFBF, (size_t)1 << 16);
    int64_t n = 0;
    if (knut_cli_render_stream(stdout, &rows, &a.render, &n, &err) != KNUT_OK)
        goto cleanup;
    KNUT_LOG(KNUT_LOG_DEBUG, "graphar", "printed %lld rows of %s", (long long)n, a.type);
    rc = KNUT_EXIT_OK;
cleanup:
    if (rc != KNUT_EXIT_OK) {
        fflush(stdout);
        fprintf(stderr, "knut gar cat: %s\n", err.message[0] ? err.message : "failed");
    }
    knut_arrow_stream_release(&rows);
    knut_graphar_reader_free(r);
    knut_graphar_graph_info_free(gi);
    return rc;
}
