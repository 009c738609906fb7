/*
 * graph_cypher: builds a two-row batch, adds it to a mutation as a vertex
 * set (two labels, key `id`, every other column a property) and prints the
 * GRAPH.QUERY text knut renders for it, then shows a value being refused.
 */
#include <stdio.h>

#include <knut/graph.h>

#define CHECK(expr)                                                        \
    do {                                                                   \
        if ((expr) != KNUT_OK) {                                           \
            fprintf(stderr, "%s: %s\n", #expr, err.message);               \
            return 1;                                                      \
        }                                                                  \
    } while (0)

int main(void)
{
    knut_error err = KNUT_ERROR_INIT;
    knut_arrow_builder *root, *id, *name, *born, *score;
    CHECK(knut_arrow_builder_new_simple(&root, KNUT_ARROW_STRUCT, "", &err));
    CHECK(knut_arrow_builder_new_simple(&id, KNUT_ARROW_INT64, "id", &err));
    CHECK(knut_arrow_builder_new_simple(&name, KNUT_ARROW_UTF8, "name", &err));
    CHECK(knut_arrow_builder_new_simple(&born, KNUT_ARROW_DATE32, "born", &err));
    CHECK(knut_arrow_builder_new_simple(&score, KNUT_ARROW_DOUBLE, "score", &err));
    CHECK(knut_arrow_builder_add_child(root, id, &err));
    CHECK(knut_arrow_builder_add_child(root, name, &err));
    CHECK(knut_arrow_builder_add_child(root, born, &err));
    CHECK(knut_arrow_builder_add_child(root, score, &err));

    /* row 0 tries to break out of the string; row 1 has a NaN score */
    CHECK(knut_arrow_builder_append_int(id, 1, &err));
    CHECK(knut_arrow_builder_append_str(name, "O'Brien'}) DETACH DELETE n //", &err));
    CHECK(knut_arrow_builder_append_int(born, 18321, &err)); /* 2020-02-29 */
    CHECK(knut_arrow_builder_append_double(score, 3.0, &err));
    CHECK(knut_arrow_builder_finish_element(root, &err));
    CHECK(knut_arrow_builder_append_int(id, 2, &err));
    CHECK(knut_arrow_builder_append_null(name, &err));
    CHECK(knut_arrow_builder_append_null(born, &err));
    CHECK(knut_arrow_builder_append_double(score, 0.0 / 0.0, &err));
    CHECK(knut_arrow_builder_finish_element(root, &err));

    struct ArrowArray batch;
    struct ArrowSchema schema;
    CHECK(knut_arrow_builder_finish(root, &batch, &schema, &err));
    knut_arrow_builder_free(root);

    /* The mutation takes the stream over, whatever add_vertex_set returns. */
    static const char *const labels[] = {"Person", "Employee"};
    static const char *const keys[] = {"id"};
    knut_graph_vertex_set vs = KNUT_GRAPH_VERTEX_SET_INIT;
    vs.labels = labels;
    vs.n_labels = 2;
    vs.keys = keys;
    vs.n_keys = 1;
    vs.all_props = 1;
    CHECK(knut_arrow_stream_from_arrays(&vs.stream, &schema, &batch, 1, &err));
    knut_graph_mutation *m;
    CHECK(knut_graph_mutation_new(&m, &err));
    CHECK(knut_graph_mutation_add_vertex_set(m, &vs, &err));

    knut_graph_set *set = knut_graph_mutation_get(m, KNUT_GRAPH_SET_VERTEX, 0);
    struct ArrowArray b;
    knut_arrow_view view;
    CHECK(knut_graph_set_next(set, &b, &err));
    CHECK(knut_arrow_view_init(&view, &set->schema, &b, &err));

    knut_buf text = KNUT_BUF_INIT;
    int64_t n_rows;
    CHECK(knut_graph_cypher_render(&text, set, &view, 0, 1, 0, 0, &n_rows, &err));
    printf("%s\n", text.data);

    knut_buf_clear(&text);
    knut_status st = knut_graph_cypher_render(&text, set, &view, 1, 2, 0, 0, &n_rows, &err);
    printf("%s: %s\n", knut_strerror(st), err.message);

    knut_buf_reset(&text);
    knut_arrow_view_reset(&view);
    knut_arrow_array_release(&b);
    knut_graph_mutation_free(m);
    return 0;
}
