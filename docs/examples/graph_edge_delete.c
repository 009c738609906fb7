/*
 * graph_edge_delete: writes two people, a company and three edges into an
 * in-memory embedded store, then deletes one WORKS_AT edge with an edge
 * delete set: prints the GRAPH.QUERY text FalkorDB would get for it, the
 * apply's stats, and what is left (the vertices and the other edges stay).
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

/* A stream of one batch of int64 columns named names[0..nc), row-major. */
static knut_status ints(struct ArrowArrayStream *out, const char *const *names, int nc,
                        const int64_t *v, int nrows, knut_error *err)
{
    knut_arrow_builder *root, *col;
    struct ArrowArray batch;
    struct ArrowSchema schema;
    knut_status st = knut_arrow_builder_new_simple(&root, KNUT_ARROW_STRUCT, "", err);
    for (int c = 0; c < nc && st == KNUT_OK; c++)
        if ((st = knut_arrow_builder_new_simple(&col, KNUT_ARROW_INT64, names[c], err)) ==
            KNUT_OK)
            st = knut_arrow_builder_add_child(root, col, err);
    for (int r = 0; r < nrows && st == KNUT_OK; r++) {
        for (int c = 0; c < nc && st == KNUT_OK; c++)
            st = knut_arrow_builder_append_int(knut_arrow_builder_child(root, c), v[r * nc + c],
                                               err);
        if (st == KNUT_OK)
            st = knut_arrow_builder_finish_element(root, err);
    }
    if (st == KNUT_OK)
        st = knut_arrow_builder_finish(root, &batch, &schema, err);
    knut_arrow_builder_free(root);
    if (st == KNUT_OK)
        st = knut_arrow_stream_from_arrays(out, &schema, &batch, 1, err);
    return st;
}

/* The first column of the first row of sql, as an integer. */
static knut_status count(knut_graph_store *s, const char *sql, int64_t *out, knut_error *err)
{
    struct ArrowArrayStream rows;
    struct ArrowSchema schema;
    struct ArrowArray *arrays = NULL;
    int64_t n = 0;
    knut_arrow_view v;
    knut_status st = knut_graph_store_query(s, sql, &rows, err);
    if (st != KNUT_OK)
        return st;
    st = knut_arrow_stream_collect(&rows, &schema, &arrays, &n, 0, err);
    knut_arrow_stream_release(&rows);
    if (st == KNUT_OK && (st = knut_arrow_view_init(&v, &schema, &arrays[0], err)) == KNUT_OK) {
        *out = knut_arrow_view_get_int64(&v.children[0], 0);
        knut_arrow_view_reset(&v);
    }
    knut_arrow_arrays_free(arrays, n);
    knut_arrow_schema_release(&schema);
    return st;
}

static const char *const ID[] = {"id"}, *const SRC[] = {"src"}, *const DST[] = {"dst"};
static const char *const EDGE_COLS[] = {"src", "dst"};

static knut_status add_edges(knut_graph_mutation *m, const char *type, const int64_t *pairs,
                             int n, knut_error *err)
{
    knut_graph_edge_set es = KNUT_GRAPH_EDGE_SET_INIT;
    es.type = type;
    es.src = (knut_graph_endpoint){"Person", ID, SRC, 1};
    es.dst = (knut_graph_endpoint){"Company", ID, DST, 1};
    knut_status st = ints(&es.stream, EDGE_COLS, 2, pairs, n, err);
    return st == KNUT_OK ? knut_graph_mutation_add_edge_set(m, &es, err) : st;
}

int main(void)
{
    knut_error err = KNUT_ERROR_INIT;
    knut_graph_store *store;
    knut_graph_mutation *m;
    knut_graph_sink_stats stats = {0};
    CHECK(knut_graph_store_open(&store, NULL, &err));

    /* people 1 and 2 work at company 10; person 1 also lives there */
    static const char *const person[] = {"Person"}, *const company[] = {"Company"};
    static const int64_t people[] = {1, 2}, companies[] = {10};
    static const int64_t works[] = {1, 10, 2, 10}, lives[] = {1, 10};
    knut_graph_vertex_set vs = KNUT_GRAPH_VERTEX_SET_INIT;
    vs.keys = ID;
    vs.n_keys = 1;
    vs.n_labels = 1;
    CHECK(knut_graph_mutation_new(&m, &err));
    vs.labels = person;
    CHECK(ints(&vs.stream, ID, 1, people, 2, &err));
    CHECK(knut_graph_mutation_add_vertex_set(m, &vs, &err));
    vs.labels = company;
    CHECK(ints(&vs.stream, ID, 1, companies, 1, &err));
    CHECK(knut_graph_mutation_add_vertex_set(m, &vs, &err));
    CHECK(add_edges(m, "WORKS_AT", works, 2, &err));
    CHECK(add_edges(m, "LIVES_IN", lives, 1, &err));
    CHECK(knut_graph_sink_apply(knut_graph_store_sink(store), m, NULL, &stats, &err));
    knut_graph_mutation_free(m);

    /* person 1 leaves company 10: delete that WORKS_AT edge only */
    knut_graph_edge_delete_set ds = KNUT_GRAPH_EDGE_DELETE_SET_INIT;
    ds.type = "WORKS_AT";
    ds.src = (knut_graph_endpoint){"Person", ID, SRC, 1};
    ds.dst = (knut_graph_endpoint){"Company", ID, DST, 1};
    CHECK(ints(&ds.stream, EDGE_COLS, 2, works, 1, &err));
    CHECK(knut_graph_mutation_new(&m, &err));
    CHECK(knut_graph_mutation_add_edge_delete_set(m, &ds, &err));

    knut_buf text = KNUT_BUF_INIT;
    CHECK(knut_graph_cypher_query(&text,
                                  knut_graph_mutation_get(m, KNUT_GRAPH_SET_EDGE_DELETE, 0),
                                  &err));
    printf("FalkorDB: %s\n", text.data);
    knut_buf_reset(&text);

    stats = (knut_graph_sink_stats){0};
    CHECK(knut_graph_sink_apply(knut_graph_store_sink(store), m, NULL, &stats, &err));
    knut_graph_mutation_free(m);
    printf("edges deleted: %lld, vertices deleted: %lld\n", (long long)stats.edges_deleted,
           (long long)stats.vertices_deleted);

    int64_t works_at, lives_in, vertices;
    CHECK(count(store, "SELECT count(*) FROM e_WORKS_AT", &works_at, &err));
    CHECK(count(store, "SELECT count(*) FROM e_LIVES_IN", &lives_in, &err));
    CHECK(count(store, "SELECT (SELECT count(*) FROM v_Person) + (SELECT count(*) FROM "
                       "v_Company)", &vertices, &err));
    printf("left: %lld WORKS_AT, %lld LIVES_IN, %lld vertices\n", (long long)works_at,
           (long long)lives_in, (long long)vertices);
    knut_graph_store_close(store);
    return 0;
}
