/*
 * Fuzz target for GraphAr info loading: the same bytes go through the
 * vertex, edge and graph (parse-only) loaders from memory. Every info that
 * loads is dumped, the dump must load again and dump to the same text (a
 * fixed point), and every layout path is built for it, so the
 * loader's error paths, the defaults, the emitter's quoting and folding and
 * the path builders are exercised together.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "knut/graphar.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_failure(knut_status st, const void *out, const knut_error *err)
{
    /* A failure leaves no info and always says why. */
    if (st != KNUT_OK && (out != NULL || err->message[0] == '\0'))
        __builtin_trap();
}

static void same_text(const knut_buf *a, const knut_buf *b)
{
    if (a->len != b->len || memcmp(a->data, b->data, a->len) != 0)
        __builtin_trap();
}

static void paths_vertex(const knut_graphar_vertex_info *v)
{
    knut_buf b = KNUT_BUF_INIT;
    knut_graphar_path_vertex_count(&b, "/base", v);
    knut_graphar_path_label_chunk(&b, NULL, v, 3);
    for (size_t g = 0; g < v->n_groups; g++) {
        knut_graphar_path_vertex_group(&b, NULL, v, &v->groups[g]);
        knut_graphar_path_vertex_chunk(&b, "/base/", v, &v->groups[g], 7);
    }
    knut_buf_reset(&b);
}

static void paths_edge(const knut_graphar_edge_info *e)
{
    knut_buf b = KNUT_BUF_INIT;
    for (size_t a = 0; a < e->n_adj_lists; a++) {
        const knut_graphar_adj_list *al = &e->adj_lists[a];
        knut_graphar_path_adj_list_dir(&b, NULL, e, al);
        knut_graphar_path_adj_chunk(&b, NULL, e, al, 1, 2);
        knut_graphar_path_offset_chunk(&b, NULL, e, al, 1);
        knut_graphar_path_edge_count(&b, NULL, e, al, 1);
        knut_graphar_path_aligned_vertex_count(&b, NULL, e, al);
        (void)knut_graphar_chunk_count(1000, knut_graphar_aligned_chunk_size(e, al->type));
        for (size_t g = 0; g < e->n_groups; g++)
            knut_graphar_path_edge_chunk(&b, NULL, e, al, &e->groups[g], 1, 2);
    }
    knut_buf_reset(&b);
}

static void fuzz_vertex(const char *text, size_t size)
{
    knut_graphar_vertex_info *v = NULL, *v2 = NULL;
    knut_error err = KNUT_ERROR_INIT;
    knut_status st = knut_graphar_vertex_load_yaml(&v, text, size, "fuzz.vertex.yml", &err);
    check_failure(st, v, &err);
    if (st != KNUT_OK)
        return;
    paths_vertex(v);
    knut_buf d1 = KNUT_BUF_INIT, d2 = KNUT_BUF_INIT;
    if (knut_graphar_vertex_dump(v, &d1, &err) != KNUT_OK)
        __builtin_trap();
    /* Every dump loads back to an info that dumps to the same text. */
    if (knut_graphar_vertex_load_yaml(&v2, d1.data, d1.len, "dump.yml", &err) != KNUT_OK ||
        knut_graphar_vertex_dump(v2, &d2, &err) != KNUT_OK)
        __builtin_trap();
    same_text(&d1, &d2);
    knut_buf_reset(&d1);
    knut_buf_reset(&d2);
    knut_graphar_vertex_info_free(v2);
    knut_graphar_vertex_info_free(v);
}

static void fuzz_edge(const char *text, size_t size)
{
    knut_graphar_edge_info *e = NULL, *e2 = NULL;
    knut_error err = KNUT_ERROR_INIT;
    knut_status st = knut_graphar_edge_load_yaml(&e, text, size, "fuzz.edge.yml", &err);
    check_failure(st, e, &err);
    if (st != KNUT_OK)
        return;
    paths_edge(e);
    knut_buf d1 = KNUT_BUF_INIT;
    /* Loaded edges never have non-single cardinality, so dumping succeeds. */
    if (knut_graphar_edge_dump(e, &d1, &err) != KNUT_OK)
        __builtin_trap();
    knut_buf d2 = KNUT_BUF_INIT;
    if (knut_graphar_edge_load_yaml(&e2, d1.data, d1.len, "dump.yml", &err) != KNUT_OK ||
        knut_graphar_edge_dump(e2, &d2, &err) != KNUT_OK)
        __builtin_trap();
    same_text(&d1, &d2);
    knut_buf_reset(&d2);
    knut_buf_reset(&d1);
    knut_graphar_edge_info_free(e2);
    knut_graphar_edge_info_free(e);
}

static void fuzz_graph(const char *text, size_t size)
{
    knut_graphar_graph_info *g = NULL;
    knut_error err = KNUT_ERROR_INIT;
    /* Parse only (dir NULL): the fuzzer must not open files. */
    knut_status st = knut_graphar_graph_load_yaml(&g, text, size, "fuzz.graph.yml", NULL, &err);
    check_failure(st, g, &err);
    if (st != KNUT_OK)
        return;
    if (g->n_vertices != 0 || g->n_edges != 0)
        __builtin_trap();
    knut_buf d = KNUT_BUF_INIT, d2 = KNUT_BUF_INIT;
    knut_graphar_graph_info *g2 = NULL;
    if (knut_graphar_graph_dump(g, 0, &d, &err) != KNUT_OK ||
        knut_graphar_graph_load_yaml(&g2, d.data, d.len, "dump.yml", NULL, &err) != KNUT_OK ||
        knut_graphar_graph_dump(g2, 0, &d2, &err) != KNUT_OK)
        __builtin_trap();
    same_text(&d, &d2);
    knut_buf_clear(&d);
    if (knut_graphar_graph_dump(g, KNUT_GRAPHAR_DUMP_CXX, &d, &err) != KNUT_OK)
        __builtin_trap();
    knut_buf_reset(&d);
    knut_buf_reset(&d2);
    knut_graphar_graph_info_free(g2);
    knut_graphar_graph_info_free(g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    fuzz_vertex(text, size);
    fuzz_edge(text, size);
    fuzz_graph(text, size);
    /* The count decoder takes any bytes. */
    int64_t v;
    knut_error err = KNUT_ERROR_INIT;
    if (knut_graphar_count_decode(data, size, "fuzz", &v, &err) == KNUT_OK && (size != 8 || v < 0))
        __builtin_trap();
    return 0;
}
