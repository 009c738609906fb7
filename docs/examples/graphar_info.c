/*
 * graphar_info: building GraphAr info files in memory, saving them to a
 * directory, loading them back with knut_graphar_graph_load, and asking the
 * layout where every data file lives. The vertex dump is the exact text the
 * reference C++ library writes; paths are relative to the graph prefix
 * (base NULL); count files are 8-byte little-endian integers. The last part
 * shows an error naming file:line:col and the field.
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <knut/graphar.h>

static int fail(const knut_error *err)
{
    fprintf(stderr, "error: %s\n", err->message);
    return 1;
}

static void show_path(const char *what, knut_status st, knut_buf *b)
{
    printf("  %-22s %s\n", what, st == KNUT_OK ? b->data : "(error)");
    knut_buf_clear(b);
}

int main(void)
{
    knut_error err = KNUT_ERROR_INIT;
    char dir[] = "/tmp/knut_graphar_example_XXXXXX";
    if (!mkdtemp(dir))
        return 1;

    /* A person vertex type with two property groups... */
    knut_graphar_vertex_info *person = NULL;
    knut_graphar_property_group *g = NULL;
    if (knut_graphar_vertex_info_new(&person, "person", 100, "vertex/person/", &err) ||
        knut_graphar_vertex_info_add_group(person, KNUT_GRAPHAR_FILE_PARQUET, NULL, &g, &err) ||
        knut_graphar_group_add_property(g, "id", "int64", 1, 0, KNUT_GRAPHAR_CARD_SINGLE, &err) ||
        knut_graphar_vertex_info_add_group(person, KNUT_GRAPHAR_FILE_PARQUET, NULL, &g, &err) ||
        knut_graphar_group_add_property(g, "name", "string", 0, 1, KNUT_GRAPHAR_CARD_SINGLE,
                                        &err) ||
        knut_graphar_group_add_property(g, "emails", "string", 0, 1, KNUT_GRAPHAR_CARD_LIST,
                                        &err))
        return fail(&err);
    /* ... and a knows edge type, stored twice: by source and by destination. */
    knut_graphar_edge_info *knows = NULL;
    if (knut_graphar_edge_info_new(&knows, "person", "knows", "person", 1024, 100, 100, 0,
                                   "edge/person_knows_person/", &err) ||
        knut_graphar_edge_info_add_adj_list(knows, KNUT_GRAPHAR_ORDERED_BY_SOURCE,
                                            KNUT_GRAPHAR_FILE_PARQUET, NULL, &err) ||
        knut_graphar_edge_info_add_adj_list(knows, KNUT_GRAPHAR_UNORDERED_BY_DEST,
                                            KNUT_GRAPHAR_FILE_CSV, NULL, &err) ||
        knut_graphar_edge_info_add_group(knows, KNUT_GRAPHAR_FILE_PARQUET, NULL, &g, &err) ||
        knut_graphar_group_add_property(g, "creationDate", "timestamp", 0, 1,
                                        KNUT_GRAPHAR_CARD_SINGLE, &err))
        return fail(&err);

    knut_buf b = KNUT_BUF_INIT;
    if (knut_graphar_vertex_dump(person, &b, &err))
        return fail(&err);
    printf("person.vertex.yml:\n%s", b.data);
    knut_buf_clear(&b);

    /* The graph takes ownership of the infos it is given. */
    knut_graphar_graph_info *gi = NULL;
    if (knut_graphar_graph_info_new(&gi, "social", NULL, &err) ||
        knut_graphar_graph_info_add_vertex(gi, person, NULL, &err) ||
        knut_graphar_graph_info_add_edge(gi, knows, NULL, &err) ||
        knut_graphar_graph_save_all(gi, dir, &err))
        return fail(&err);
    knut_graphar_graph_info_free(gi);

    /* Load it back: the graph YAML and every file it lists. */
    char path[256];
    snprintf(path, sizeof path, "%s/social.graph.yml", dir);
    if (knut_graphar_graph_load(&gi, path, &err))
        return fail(&err);
    printf("loaded graph '%s': %zu vertex type(s), %zu edge type(s), prefix is the YAML's "
           "directory: %s\n",
           gi->name, gi->n_vertices, gi->n_edges,
           strncmp(gi->prefix, dir, strlen(dir)) == 0 ? "yes" : "no");
    knut_graphar_vertex_info *v = knut_graphar_graph_info_vertex(gi, "person");
    knut_graphar_edge_info *e = knut_graphar_graph_info_edge(gi, "person", "knows", "person");
    const knut_graphar_adj_list *obs =
        knut_graphar_edge_info_adj_list(e, KNUT_GRAPHAR_ORDERED_BY_SOURCE);
    const knut_graphar_adj_list *ubd =
        knut_graphar_edge_info_adj_list(e, KNUT_GRAPHAR_UNORDERED_BY_DEST);

    int64_t vertices = 903;
    printf("layout for %lld persons (%lld vertex chunks, the last with %lld rows):\n",
           (long long)vertices, (long long)knut_graphar_chunk_count(vertices, v->chunk_size),
           (long long)knut_graphar_chunk_rows(vertices, v->chunk_size, 9));
    show_path("vertex chunk 9", knut_graphar_path_vertex_chunk(&b, NULL, v, &v->groups[1], 9), &b);
    show_path("vertex count", knut_graphar_path_vertex_count(&b, NULL, v), &b);
    show_path("adj list part 2/0", knut_graphar_path_adj_chunk(&b, NULL, e, obs, 2, 0), &b);
    show_path("offsets of part 2", knut_graphar_path_offset_chunk(&b, NULL, e, obs, 2), &b);
    show_path("edge property 2/0",
              knut_graphar_path_edge_chunk(&b, NULL, e, obs, &e->groups[0], 2, 0), &b);
    show_path("edges in part 2", knut_graphar_path_edge_count(&b, NULL, e, ubd, 2), &b);
    show_path("offsets (unordered)", knut_graphar_path_offset_chunk(&b, NULL, e, ubd, 2), &b);

    /* Count files: exactly 8 bytes, little-endian. */
    snprintf(path, sizeof path, "%s/vertex_count", dir);
    int64_t n = 0;
    if (knut_graphar_count_write(path, vertices, &err) ||
        knut_graphar_count_read(path, &n, &err))
        return fail(&err);
    printf("count file holds %lld\n", (long long)n);

    /* Errors name the file, line, column and field. */
    const char *bad = "type: person\nchunk_size: 100\nproperty_groups:\n"
                      "  - file_type: parquet\n    properties:\n"
                      "      - {name: id, data_type: uuid}\n";
    knut_graphar_vertex_info *broken = NULL;
    knut_status st = knut_graphar_vertex_load_yaml(&broken, bad, strlen(bad), "bad.vertex.yml",
                                                   &err);
    printf("%s: %s\n", knut_strerror(st), err.message);

    /* Clean up the temporary directory. */
    for (size_t i = 0; i < gi->n_vertex_files; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, gi->vertex_files[i]);
        unlink(path);
    }
    for (size_t i = 0; i < gi->n_edge_files; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, gi->edge_files[i]);
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/social.graph.yml", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/vertex_count", dir);
    unlink(path);
    rmdir(dir);
    knut_buf_reset(&b);
    knut_graphar_graph_info_free(gi);
    return 0;
}
