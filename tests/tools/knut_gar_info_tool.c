/*
 * knut_gar_info_tool: a small driver of the GraphAr info loader and dumper
 * for the conformance tests against the Python `graphar` package. Modes:
 *   dump GRAPH.yml      load the graph and print the graph dump in the
 *                       reference's form (KNUT_GRAPHAR_DUMP_CXX), then every
 *                       vertex and every edge dump, each preceded by a line
 *                       "====" (so the pieces split cleanly)
 *   save GRAPH.yml DIR  load the graph and save every info into DIR
 * Errors go to stderr as one line; the exit code is 1 (2 for usage).
 */
#include <stdio.h>
#include <string.h>

#include "knut/graphar.h"

static int fail(const knut_error *e)
{
    fprintf(stderr, "knut_gar_info_tool: %s\n",
            e->message[0] ? e->message : knut_strerror(e->code));
    return 1;
}

static int cmd_dump(const knut_graphar_graph_info *gi)
{
    knut_error err = KNUT_ERROR_INIT;
    knut_buf b = KNUT_BUF_INIT;
    knut_status st = knut_graphar_graph_dump(gi, KNUT_GRAPHAR_DUMP_CXX, &b, &err);
    for (size_t i = 0; st == KNUT_OK && i < gi->n_vertices; i++) {
        knut_buf_puts(&b, "====\n");
        st = knut_graphar_vertex_dump(gi->vertices[i], &b, &err);
    }
    for (size_t i = 0; st == KNUT_OK && i < gi->n_edges; i++) {
        knut_buf_puts(&b, "====\n");
        st = knut_graphar_edge_dump(gi->edges[i], &b, &err);
    }
    if (st == KNUT_OK)
        fwrite(b.data, 1, b.len, stdout);
    knut_buf_reset(&b);
    return st == KNUT_OK ? 0 : fail(&err);
}

int main(int argc, char **argv)
{
    int save = argc == 4 && strcmp(argv[1], "save") == 0;
    if (!save && !(argc == 3 && strcmp(argv[1], "dump") == 0)) {
        fprintf(stderr, "usage: knut_gar_info_tool dump GRAPH.yml | save GRAPH.yml DIR\n");
        return 2;
    }
    knut_error err = KNUT_ERROR_INIT;
    knut_graphar_graph_info *gi = NULL;
    if (knut_graphar_graph_load(&gi, argv[2], &err) != KNUT_OK)
        return fail(&err);
    int rc = 0;
    if (save)
        rc = knut_graphar_graph_save_all(gi, argv[3], &err) == KNUT_OK ? 0 : fail(&err);
    else
        rc = cmd_dump(gi);
    knut_graphar_graph_info_free(gi);
    return rc;
}
