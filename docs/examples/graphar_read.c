/*
 * graphar_read: reading GraphAr chunk data as Arrow streams. The example
 * writes a tiny graph (YAML, CSV chunks, 8-byte count files) to a
 * temporary directory, then reads every vertex (both property groups
 * joined on the vertex index) and every edge of an adjacency list with
 * knut_graphar_reader, printing each column's Arrow format and the rows.
 * Strings come out as large_utf8 ("U") and timestamps as timestamp[ms]
 * ("tsm:"), the reference's Arrow types. The last part shows the error for
 * a missing chunk file.
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <knut/knut.h>

static char dir[] = "/tmp/knut_graphar_read_XXXXXX";

/* Writes dir/name, creating its directories. */
static void put(const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    for (char *p = path + strlen(dir) + 1; (p = strchr(p, '/')) != NULL; p++) {
        *p = '\0';
        mkdir(path, 0755);
        *p = '/';
    }
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void put_count(const char *name, int64_t n)
{
    char path[512];
    knut_error err = KNUT_ERROR_INIT;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    knut_graphar_count_write(path, n, &err);
}

/* Prints a stream: a header of name:format, then one line per row. */
static knut_status print_stream(struct ArrowArrayStream *st, knut_error *err)
{
    struct ArrowSchema schema;
    knut_status s = knut_graphar_stream_status(st, st->get_schema(st, &schema), err);
    if (s != KNUT_OK)
        return s;
    for (int64_t c = 0; c < schema.n_children; c++)
        printf("  %s:%s", schema.children[c]->name, schema.children[c]->format);
    printf("\n");
    for (;;) {
        struct ArrowArray batch;
        knut_arrow_view v;
        if ((s = knut_graphar_stream_status(st, st->get_next(st, &batch), err)) != KNUT_OK ||
            !batch.release)
            break;
        if ((s = knut_arrow_view_init(&v, &schema, &batch, err)) != KNUT_OK) {
            batch.release(&batch);
            break;
        }
        for (int64_t i = 0; i < batch.length; i++) {
            for (int64_t c = 0; c < v.n_children; c++) {
                const knut_arrow_view *col = knut_arrow_view_child(&v, c);
                int64_t len = 0;
                printf("  ");
                if (knut_arrow_view_is_null(col, i)) {
                    printf("NULL");
                } else if (col->type.type == KNUT_ARROW_LARGE_UTF8) {
                    const char *text = knut_arrow_view_get_str(col, i, &len);
                    printf("%.*s", (int)len, text);
                } else if (col->type.type == KNUT_ARROW_DOUBLE) {
                    printf("%g", knut_arrow_view_get_double(col, i));
                } else { /* int64, and timestamp[ms] as ms since the epoch */
                    printf("%lld", (long long)knut_arrow_view_get_int64(col, i));
                }
            }
            printf("\n");
        }
        knut_arrow_view_reset(&v);
        batch.release(&batch);
    }
    schema.release(&schema);
    return s;
}

int main(void)
{
    knut_error err = KNUT_ERROR_INIT;
    knut_graphar_graph_info *gi = NULL;
    knut_graphar_reader *r = NULL;
    struct ArrowArrayStream st;
    int rc = 1;
    if (!mkdtemp(dir))
        return 1;

    put("social.graph.yml", "name: social\nversion: gar/v1\n"
                            "vertices: [person.vertex.yml]\nedges: [person_knows_person.edge.yml]\n");
    put("person.vertex.yml",
        "type: person\nchunk_size: 2\nprefix: vertex/person/\nversion: gar/v1\n"
        "property_groups:\n"
        "  - {file_type: csv, properties: [{name: id, data_type: int64, is_primary: true}]}\n"
        "  - file_type: csv\n"
        "    properties:\n"
        "      - {name: name, data_type: string, is_primary: false}\n"
        "      - {name: joined, data_type: timestamp, is_primary: false}\n");
    put("person_knows_person.edge.yml",
        "src_type: person\nedge_type: knows\ndst_type: person\nversion: gar/v1\n"
        "chunk_size: 1024\nsrc_chunk_size: 2\ndst_chunk_size: 2\ndirected: true\n"
        "prefix: edge/person_knows_person/\n"
        "adj_lists: [{ordered: true, aligned_by: src, file_type: csv}]\n"
        "property_groups:\n"
        "  - {file_type: csv, properties: [{name: weight, data_type: double, is_primary: false}]}\n");
    put("vertex/person/id/chunk0", "_graphArVertexIndex,id\n0,933\n1,1129\n");
    put("vertex/person/id/chunk1", "_graphArVertexIndex,id\n2,4194\n");
    put("vertex/person/name_joined/chunk0",
        "_graphArVertexIndex,name,joined\n0,\"Perera, Mahinda\",2010-02-14 15:32:10.447\n"
        "1,Carmen,\n");
    put("vertex/person/name_joined/chunk1", "_graphArVertexIndex,name,joined\n2,Hồ Chi,0\n");
    put("edge/person_knows_person/ordered_by_source/adj_list/part0/chunk0",
        "_graphArSrcIndex,_graphArDstIndex\n0,1\n1,2\n");
    put("edge/person_knows_person/ordered_by_source/adj_list/part1/chunk0",
        "_graphArSrcIndex,_graphArDstIndex\n2,0\n");
    put("edge/person_knows_person/ordered_by_source/weight/part0/chunk0", "weight\n0.5\n1\n");
    put("edge/person_knows_person/ordered_by_source/weight/part1/chunk0", "weight\n0.25\n");
    /* Count files last: they go into directories the chunks created. */
    put_count("vertex/person/vertex_count", 3);
    put_count("edge/person_knows_person/ordered_by_source/vertex_count", 3);
    put_count("edge/person_knows_person/ordered_by_source/edge_count0", 2);
    put_count("edge/person_knows_person/ordered_by_source/edge_count1", 1);

    char path[512];
    snprintf(path, sizeof path, "%s/social.graph.yml", dir);
    if (knut_graphar_graph_load(&gi, path, &err) != KNUT_OK ||
        knut_graphar_reader_new(&r, NULL, knut_graphar_graph_data_dir(gi), NULL, &err))
        goto cleanup;
    const knut_graphar_vertex_info *person = knut_graphar_graph_info_vertex(gi, "person");
    const knut_graphar_edge_info *knows =
        knut_graphar_graph_info_edge(gi, "person", "knows", "person");
    int64_t n = 0;
    if (knut_graphar_reader_vertex_count(r, person, &n, &err) != KNUT_OK)
        goto cleanup;
    printf("person: %lld vertices\n", (long long)n);
    if (knut_graphar_reader_vertices(r, person, &st, &err) != KNUT_OK)
        goto cleanup;
    knut_status s = print_stream(&st, &err);
    st.release(&st);
    if (s != KNUT_OK)
        goto cleanup;
    if (knut_graphar_reader_edge_count(r, knows, KNUT_GRAPHAR_ORDERED_BY_SOURCE,
                                       KNUT_GRAPHAR_ALL, &n, &err) != KNUT_OK)
        goto cleanup;
    printf("person_knows_person (ordered_by_source): %lld edges\n", (long long)n);
    if (knut_graphar_reader_edges(r, knows, KNUT_GRAPHAR_ORDERED_BY_SOURCE, &st, &err))
        goto cleanup;
    s = print_stream(&st, &err);
    st.release(&st);
    if (s != KNUT_OK)
        goto cleanup;

    /* A chunk file gone: the stream does not open, and the error names it. */
    snprintf(path, sizeof path, "%s/vertex/person/name_joined/chunk1", dir);
    unlink(path);
    s = knut_graphar_reader_vertices(r, person, &st, &err);
    printf("without chunk1: %s: %s\n", knut_strerror(s),
           strstr(err.message, "vertex/person/name_joined/chunk1") ? "message names the file"
                                                                  : err.message);
    rc = 0;
cleanup:
    if (rc)
        fprintf(stderr, "error: %s\n", err.message);
    knut_graphar_reader_free(r);
    knut_graphar_graph_info_free(gi);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        rc = 1;
    return rc;
}
