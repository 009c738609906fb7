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

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "knut/knut.h"
#include "render.h"

typedef struct cat_args {
    const char *path;
    const char *type;
    const char *data_dir;
    const char *adj_list;
    int format;
    int64_t limit;
    int64_t max_width;
    knut_cli_render_opts render;
} cat_args;

static const knut_cli_opt cat_opts[] = {
    KNUT_CLI_OPT_CHOICE("format", 'f', cat_args, format, "FMT", knut_cli_format_names,
                        KNUT_CLI_FORMAT_HELP),
    KNUT_CLI_OPT_INT("limit", 'n', cat_args, limit, "N", 1, INT64_MAX,
                     "print at most N rows (default: all; a table shows 1000 unless --limit "
                     "is given)"),
    KNUT_CLI_OPT_STR("adj-list", 0, cat_args, adj_list, "TYPE",
                     "the adjacency list edges are read from:\n"
                     "ordered_by_source, ordered_by_dest,\n"
                     "unordered_by_source, unordered_by_dest (default: the first one listed "
                     "that has data)"),
    KNUT_CLI_OPT_STR("data-dir", 0, cat_args, data_dir, "DIR",
                     "read the chunks under DIR instead of the graph prefix"),
    KNUT_CLI_OPT_INT("max-width", 0, cat_args, max_width, "N", 1, 100000,
                     "table only: cut cells longer than N characters"),
    KNUT_CLI_OPT_END,
};

static const knut_cli_arg cat_pos[] = {
    KNUT_CLI_ARG("PATH", cat_args, path),
    KNUT_CLI_ARG("TYPE", cat_args, type),
    KNUT_CLI_ARG_END,
};

const knut_cli_spec knut_cmd_gar_cat_spec = {
    .name = "gar cat",
    .synopsis = "usage: knut gar cat [-f|--format table|csv|json|arrow] [-n|--limit N]\n"
                "                    [--adj-list TYPE] [--data-dir DIR] [--max-width N] PATH TYPE\n",
    .about =
        "Prints every vertex or edge of one type of a GraphAr (gar/v1) graph.\n"
        "PATH is a *.graph.yml, or a directory holding exactly one. TYPE is:\n"
        "  a vertex type    person             columns: _graphArVertexIndex, the\n"
        "                                      properties of every group, then one\n"
        "                                      boolean column per label\n"
        "  an edge type     person_knows_person  or  person,knows,person\n"
        "                                      columns: _graphArSrcIndex,\n"
        "                                      _graphArDstIndex, the edge properties\n"
        "Parquet, CSV and JSON Lines chunks are read (ORC is not supported). Values\n"
        "have the GraphAr types: timestamps in ms, strings, lists, booleans.\n",
    .opts = cat_opts,
    .args = cat_pos,
    .epilog =
        "Examples:\n"
        "  knut gar cat ../shared/data/graphar-testing/modern_graph person\n"
        "  knut gar cat -f json -n 5 ../shared/data/graphar-testing/neo4j Person\n"
        "  knut gar cat --adj-list ordered_by_dest -f csv \\\n"
        "      ../shared/data/graphar-testing/ldbc_sample/csv person_knows_person > knows.csv\n"
        "  knut gar cat -f arrow ../shared/data/graphar-testing/modern_graph \\\n"
        "      person,created,software > created.arrows\n"
        "\n"
        "Exit status: 0 ok, 1 the graph, the type or a chunk could not be read\n"
        "(the message names the file), 2 usage error.\n",
};

static int parse_args(int argc, char **argv, cat_args *a)
{
    int rc = knut_cli_args_parse(&knut_cmd_gar_cat_spec, argc, argv, a);
    if (rc != KNUT_CLI_RUN)
        return rc;
    a->render.format = (knut_cli_format)a->format;
    a->render.max_rows = a->limit ? a->limit : KNUT_CLI_TABLE_DEFAULT_MAX_ROWS;
    a->render.max_width = (int)a->max_width;
    return KNUT_CLI_RUN;
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
    if (rc != KNUT_CLI_RUN)
        return rc;
    if (a.render.format == KNUT_CLI_FORMAT_ARROW && isatty(STDOUT_FILENO))
        return knut_cli_args_error(&knut_cmd_gar_cat_spec, "%s", "refusing to write Arrow IPC bytes to a "
                                                    "terminal: redirect stdout");
    rc = KNUT_EXIT_FAIL;
    if (knut_graphar_graph_load_path(&gi, a.path, &err) != KNUT_OK)
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
