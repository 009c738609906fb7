/*
 * Unit tests of the chunk readers on the official corpus: vertices and
 * edges of ldbc_sample in Parquet, CSV and JSON (the same values each
 * way), offsets, counts, modern_graph's sparse parts, neo4j's nulls,
 * nebula's missing index column, ldbc's labels and list cardinality, the
 * date/timestamp/list<float> variants, and the exact Arrow output types.
 */
#include "graphar_read_fixture.h"

static const knut_graphar_vertex_info *vertex(const knut_graphar_graph_info *gi, const char *t)
{
    const knut_graphar_vertex_info *vi = knut_graphar_graph_info_vertex(gi, t);
    assert_non_null(vi);
    return vi;
}

static void read_vertices(const char *graph, const char *type, table *t)
{
    knut_graphar_graph_info *gi = load_graph(graph);
    knut_graphar_reader *r = reader_for(gi, 0);
    struct ArrowArrayStream st;
    knut_error err = KNUT_ERROR_INIT;
    if (knut_graphar_reader_vertices(r, vertex(gi, type), &st, &err) != KNUT_OK)
        fail_msg("%s", err.message);
    knut_graphar_reader_free(r); /* the stream keeps it alive */
    table_read(&st, t);
    knut_graphar_graph_info_free(gi);
}

static void read_edges(const char *graph, const char *s, const char *e, const char *d,
                       knut_graphar_adj_list_type type, table *t)
{
    knut_graphar_graph_info *gi = load_graph(graph);
    knut_graphar_reader *r = reader_for(gi, 0);
    struct ArrowArrayStream st;
    knut_error err = KNUT_ERROR_INIT;
    const knut_graphar_edge_info *ei = knut_graphar_graph_info_edge(gi, s, e, d);
    assert_non_null(ei);
    if (knut_graphar_reader_edges(r, ei, type, &st, &err) != KNUT_OK)
        fail_msg("%s", err.message);
    table_read(&st, t);
    knut_graphar_reader_free(r);
    knut_graphar_graph_info_free(gi);
}

static void check_ldbc_person(const table *t, int64_t n_cols)
{
    assert_int_equal(t->rows, 903);
    assert_string_equal(table_format(t, "_graphArVertexIndex"), "l");
    assert_string_equal(table_format(t, "id"), "l");
    assert_string_equal(table_format(t, "firstName"), "U");
    assert_int_equal(t->schema.n_children, n_cols);
    for (int64_t i = 0; i < 903; i++)
        assert_int_equal(t_int(t, "_graphArVertexIndex", i), i);
    assert_int_equal(t_int(t, "id", 0), 933);
    assert_str_at(t, "firstName", 0, "Mahinda");
    assert_str_at(t, "lastName", 0, "Perera");
    assert_str_at(t, "gender", 0, "male");
    assert_int_equal(t_int(t, "id", 901), 32985348833794);
    assert_str_at(t, "firstName", 901, "Mohamed");
    assert_str_at(t, "lastName", 901, "Ben Dhifallah");
    assert_str_at(t, "gender", 901, "female");
    assert_int_equal(t_int(t, "id", 902), 32985348834100);
    assert_str_at(t, "firstName", 902, "Bruno");
}

/* The same values, row by row, in two tables. */
static void assert_tables_equal(const table *a, const table *b, const char *const *cols,
                                size_t n)
{
    char x[512], y[512];
    assert_int_equal(a->rows, b->rows);
    for (size_t c = 0; c < n; c++) {
        int is_str = strcmp(table_format(a, cols[c]), "U") == 0;
        for (int64_t i = 0; i < a->rows; i++) {
            if (is_str)
                assert_string_equal(t_str(a, cols[c], i, x, sizeof x),
                                    t_str(b, cols[c], i, y, sizeof y));
            else
                assert_int_equal(t_int(a, cols[c], i), t_int(b, cols[c], i));
        }
    }
}

static void test_graphar_read__ldbc_sample_person_formats(void **state)
{
    (void)state;
    table pq, csv, json;
    read_vertices("ldbc_sample/parquet/ldbc_sample.graph.yml", "person", &pq);
    read_vertices("ldbc_sample/csv/ldbc_sample.graph.yml", "person", &csv);
    read_vertices("ldbc_sample/json/LdbcSample.graph.yml", "Person", &json);
    check_ldbc_person(&pq, 5);
    check_ldbc_person(&csv, 5);
    check_ldbc_person(&json, 5);
    static const char *const cols[] = {"_graphArVertexIndex", "id", "firstName", "lastName",
                                       "gender"};
    assert_tables_equal(&pq, &csv, cols, 5);
    assert_tables_equal(&pq, &json, cols, 5);
    table_free(&pq);
    table_free(&csv);
    table_free(&json);
}

static void test_graphar_read__knows_edges_and_offsets(void **state)
{
    (void)state;
    table pq, csv;
    read_edges("ldbc_sample/parquet/ldbc_sample.graph.yml", "person", "knows", "person",
               KNUT_GRAPHAR_ORDERED_BY_SOURCE, &pq);
    read_edges("ldbc_sample/csv/ldbc_sample.graph.yml", "person", "knows", "person",
               KNUT_GRAPHAR_ORDERED_BY_SOURCE, &csv);
    assert_int_equal(pq.rows, 6626);
    assert_string_equal(table_format(&pq, "_graphArSrcIndex"), "l");
    assert_string_equal(table_format(&pq, "creationDate"), "U");
    assert_int_equal(t_int(&pq, "_graphArSrcIndex", 0), 0);
    assert_int_equal(t_int(&pq, "_graphArDstIndex", 0), 87);
    assert_str_at(&pq, "creationDate", 0, "2010-07-30T15:19:53.298+0000");
    for (int64_t i = 1; i < pq.rows; i++) /* ordered by source */
        assert_true(t_int(&pq, "_graphArSrcIndex", i - 1) <= t_int(&pq, "_graphArSrcIndex", i));
    static const char *const cols[] = {"_graphArSrcIndex", "_graphArDstIndex", "creationDate"};
    assert_tables_equal(&pq, &csv, cols, 3);
    table_free(&pq);
    table_free(&csv);

    /* Per part: offsets are monotonic and end at the part's edge count. */
    knut_graphar_graph_info *gi = load_graph("ldbc_sample/parquet/ldbc_sample.graph.yml");
    const knut_graphar_edge_info *ei = knut_graphar_graph_info_edge(gi, "person", "knows",
                                                                    "person");
    knut_graphar_reader *r = reader_for(gi, 0);
    knut_error err = KNUT_ERROR_INIT;
    int64_t n = 0, total = 0;
    assert_int_equal(knut_graphar_reader_edge_count(r, ei, KNUT_GRAPHAR_ORDERED_BY_SOURCE,
                                                    KNUT_GRAPHAR_ALL, &total, &err),
                     KNUT_OK);
    assert_int_equal(total, 6626);
    assert_int_equal(knut_graphar_reader_aligned_count(r, ei, KNUT_GRAPHAR_ORDERED_BY_SOURCE,
                                                       &n, &err),
                     KNUT_OK);
    assert_int_equal(n, 903);
    static const int64_t part_edges[] = {667, 644};
    for (int64_t part = 0; part < 10; part++) {
        struct ArrowArrayStream st;
        table off, adj;
        assert_int_equal(knut_graphar_reader_edge_count(r, ei, KNUT_GRAPHAR_ORDERED_BY_SOURCE,
                                                        part, &n, &err),
                         KNUT_OK);
        if (part < 2)
            assert_int_equal(n, part_edges[part]);
        if (part == 9)
            assert_int_equal(n, 4);
        assert_int_equal(knut_graphar_reader_offsets(r, ei, KNUT_GRAPHAR_ORDERED_BY_SOURCE, part,
                                                     &st, &err),
                         KNUT_OK);
        table_read(&st, &off);
        assert_string_equal(table_format(&off, "_graphArOffset"), "l");
        assert_int_equal(off.rows, part == 9 ? 4 : 101); /* the last chunk is trimmed */
        assert_int_equal(t_int(&off, "_graphArOffset", 0), 0);
        for (int64_t i = 1; i < off.rows; i++)
            assert_true(t_int(&off, "_graphArOffset", i - 1) <= t_int(&off, "_graphArOffset", i));
        assert_int_equal(t_int(&off, "_graphArOffset", off.rows - 1), n);
        assert_int_equal(knut_graphar_reader_adj_list(r, ei, KNUT_GRAPHAR_ORDERED_BY_SOURCE, part,
                                                      KNUT_GRAPHAR_ALL, &st, &err),
                         KNUT_OK);
        table_read(&st, &adj);
        assert_int_equal(adj.rows, n);
        /* offset[k+1] - offset[k] = edges of vertex part * 100 + k */
        for (int64_t i = 0; i < adj.rows; i++) {
            int64_t k = t_int(&adj, "_graphArSrcIndex", i) - part * 100;
            assert_true(k >= 0 && k < off.rows - 1);
            assert_true(t_int(&off, "_graphArOffset", k) <= i);
            assert_true(i < t_int(&off, "_graphArOffset", k + 1));
        }
        table_free(&off);
        table_free(&adj);
    }
    knut_graphar_reader_free(r);
    knut_graphar_graph_info_free(gi);
}

static void test_graphar_read__single_chunks(void **state)
{
    (void)state;
    knut_graphar_graph_info *gi = load_graph("ldbc_sample/parquet/ldbc_sample.graph.yml");
    const knut_graphar_vertex_info *vi = vertex(gi, "person");
    const knut_graphar_edge_info *ei = knut_graphar_graph_info_edge(gi, "person", "knows",
                                                                    "person");
    knut_graphar_reader *r = reader_for(gi, 0);
    knut_error err = KNUT_ERROR_INIT;
    struct ArrowArrayStream st;
    table t;
    int64_t n = 0;
    assert_int_equal(knut_graphar_reader_vertex_count(r, vi, &n, &err), KNUT_OK);
    assert_int_equal(n, 903);
    /* The last chunk: 3 rows, ids 900..902. */
    assert_int_equal(knut_graphar_reader_vertex_group(r, vi, &vi->groups[1], 9, 1, &st, &err),
                     KNUT_OK);
    table_read(&st, &t);
    assert_int_equal(t.rows, 3);
    assert_int_equal(t.schema.n_children, 4);
    assert_int_equal(t_int(&t, "_graphArVertexIndex", 0), 900);
    assert_str_at(&t, "firstName", 0, "Aisso");
    assert_str_at(&t, "lastName", 2, "Oliveira");
    table_free(&t);
    /* A range of chunks, and a range past the end. */
    assert_int_equal(knut_graphar_reader_vertex_group(r, vi, &vi->groups[0], 3, 2, &st, &err),
                     KNUT_OK);
    table_read(&st, &t);
    assert_int_equal(t.rows, 200);
    assert_int_equal(t_int(&t, "_graphArVertexIndex", 0), 300);
    assert_int_equal(t_int(&t, "_graphArVertexIndex", 199), 499);
    table_free(&t);
    assert_int_equal(knut_graphar_reader_vertex_group(r, vi, &vi->groups[0], 9, 2, &st, &err),
                     KNUT_ENOTFOUND);
    assert_non_null(strstr(err.message, "10 chunks"));
    /* Edge chunk: part 1 chunk 0 holds all 644 edges of the part. */
    assert_int_equal(knut_graphar_reader_adj_list(r, ei, KNUT_GRAPHAR_ORDERED_BY_DEST, 1, 0, &st,
                                                  &err),
                     KNUT_OK);
    table_read(&st, &t);
    for (int64_t i = 0; i < t.rows; i++) {
        int64_t dst = t_int(&t, "_graphArDstIndex", i);
        assert_true(dst >= 100 && dst < 200);
    }
    table_free(&t);
    assert_int_equal(knut_graphar_reader_adj_list(r, ei, KNUT_GRAPHAR_ORDERED_BY_SOURCE, 1, 1,
                                                  &st, &err),
                     KNUT_ENOTFOUND);
    assert_int_equal(knut_graphar_reader_edge_group(r, ei, KNUT_GRAPHAR_UNORDERED_BY_SOURCE,
                                                    &ei->groups[0], 0, 0, &st, &err),
                     KNUT_OK);
    table_read(&st, &t);
    assert_int_equal(t.rows, 667);
    assert_int_equal(t.schema.n_children, 1);
    table_free(&t);
    /* Offsets only for ordered lists; the other adj list types exist. */
    assert_int_equal(knut_graphar_reader_offsets(r, ei, KNUT_GRAPHAR_UNORDERED_BY_SOURCE, 0,
                                                 &st, &err),
                     KNUT_EINVAL);
    assert_int_equal(knut_graphar_reader_adj_list(r, ei, KNUT_GRAPHAR_UNORDERED_BY_DEST,
                                                  KNUT_GRAPHAR_ALL, KNUT_GRAPHAR_ALL, &st, &err),
                     KNUT_ENOTFOUND);
    knut_graphar_reader_free(r);
    knut_graphar_graph_info_free(gi);
}

static void test_graphar_read__date_timestamp_feature(void **state)
{
    (void)state;
    table t;
    read_edges("ldbc_sample/parquet/ldbc_sample_date.graph.yml", "person", "knows-date",
               "person", KNUT_GRAPHAR_ORDERED_BY_SOURCE, &t);
    assert_int_equal(t.rows, 6626);
    assert_string_equal(table_format(&t, "creationDate-date"), "tdD");
    assert_int_equal(t_int(&t, "creationDate-date", 0), 14820); /* 2010-07-30 */
    table_free(&t);
    read_edges("ldbc_sample/parquet/ldbc_sample_timestamp.graph.yml", "person",
               "knows-timestamp", "person", KNUT_GRAPHAR_ORDERED_BY_SOURCE, &t);
    assert_string_equal(table_format(&t, "creationDate-timestamp"), "tsm:");
    /* Stored as MICROS; read as ms: 2010-07-30 15:19:53.298 */
    assert_int_equal(t_int(&t, "creationDate-timestamp", 0), INT64_C(1280503193298));
    table_free(&t);

    read_vertices("ldbc_sample/parquet/ldbc_sample_with_feature.graph.yml", "person", &t);
    assert_int_equal(t.rows, 903);
    assert_string_equal(table_format(&t, "feature"), "+l");
    int c = table_col(&t, "feature");
    assert_string_equal(t.schema.children[c]->children[0]->format, "f");
    int64_t row = 1, start, end;
    const knut_arrow_view *v = table_at(&t, "feature", &row);
    knut_arrow_view_list_range(v, row, &start, &end);
    assert_int_equal(end - start, 3);
    const knut_arrow_view *item = knut_arrow_view_child(v, 0);
    assert_true(knut_arrow_view_get_double(item, start) == 1.0);
    assert_true(knut_arrow_view_get_double(item, start + 2) == 3.0);
    check_ldbc_person(&t, 6); /* the other groups are unchanged */
    table_free(&t);
}

static void test_graphar_read__modern_graph(void **state)
{
    (void)state;
    table t;
    char buf[64];
    read_vertices("modern_graph/modern_graph.graph.yml", "person", &t);
    assert_int_equal(t.rows, 4);
    assert_int_equal(t_int(&t, "id", 0), 2);
    assert_str_at(&t, "name", 0, "vadas");
    assert_int_equal(t_int(&t, "age", 1), 35);
    assert_int_equal(t_int(&t, "_graphArVertexIndex", 3), 3);
    table_free(&t);
    /* Sparse: only part1 has files; Arrow-style quoted CSV. */
    read_edges("modern_graph/modern_graph.graph.yml", "person", "knows", "person",
               KNUT_GRAPHAR_ORDERED_BY_SOURCE, &t);
    assert_int_equal(t.rows, 2);
    assert_string_equal(table_format(&t, "weight"), "g");
    assert_int_equal(t_int(&t, "_graphArSrcIndex", 0), 3);
    assert_int_equal(t_int(&t, "_graphArDstIndex", 0), 0);
    assert_true(t_dbl(&t, "weight", 0) == 0.5);
    table_free(&t);
    read_edges("modern_graph/modern_graph.graph.yml", "person", "created", "software",
               KNUT_GRAPHAR_ORDERED_BY_SOURCE, &t);
    assert_int_equal(t.rows, 4);
    assert_true(t_dbl(&t, "weight", 0) == 0.2);
    table_free(&t);
    read_vertices("modern_graph/modern_graph.graph.yml", "software", &t);
    assert_int_equal(t.rows, 2);
    assert_string_equal(t_str(&t, "lang", 1, buf, sizeof buf), "java");
    table_free(&t);
}

static void test_graphar_read__neo4j_nulls(void **state)
{
    (void)state;
    table t;
    read_vertices("neo4j/MovieGraph.graph.yml", "Person", &t);
    assert_int_equal(t.rows, 133);
    int64_t nulls = 0;
    for (int64_t i = 0; i < t.rows; i++)
        nulls += t_null(&t, "born", i);
    assert_int_equal(nulls, 5); /* born is non-null for 128 of 133 */
    assert_str_at(&t, "name", 0, "Keanu Reeves");
    assert_int_equal(t_int(&t, "born", 0), 1964);
    table_free(&t);
    /* int32 offsets (Spark) are read as int64; sparse parts. */
    knut_graphar_graph_info *gi = load_graph("neo4j/MovieGraph.graph.yml");
    const knut_graphar_edge_info *ei = knut_graphar_graph_info_edge(gi, "Person", "FOLLOWS",
                                                                    "Person");
    knut_graphar_reader *r = reader_for(gi, 0);
    knut_error err = KNUT_ERROR_INIT;
    struct ArrowArrayStream st;
    assert_int_equal(knut_graphar_reader_offsets(r, ei, KNUT_GRAPHAR_ORDERED_BY_SOURCE, 1, &st,
                                                 &err),
                     KNUT_OK);
    table_read(&st, &t);
    assert_string_equal(table_format(&t, "_graphArOffset"), "l");
    assert_int_equal(t.rows, 101);
    assert_int_equal(t_int(&t, "_graphArOffset", 100), 3);
    table_free(&t);
    assert_int_equal(knut_graphar_reader_edges(r, ei, KNUT_GRAPHAR_ORDERED_BY_SOURCE, &st, &err),
                     KNUT_OK);
    table_read(&st, &t);
    assert_int_equal(t.rows, 3);
    table_free(&t);
    knut_graphar_reader_free(r);
    knut_graphar_graph_info_free(gi);
    read_edges("neo4j/MovieGraph.graph.yml", "Person", "REVIEWED", "Movie",
               KNUT_GRAPHAR_ORDERED_BY_DEST, &t);
    assert_int_equal(t.rows, 9);
    assert_string_equal(table_format(&t, "rating"), "l");
    table_free(&t);
}

static void test_graphar_read__nebula_without_index(void **state)
{
    (void)state;
    table t;
    /* The graph prefix names a directory that does not exist: data_dir
     * falls back to the YAML's directory. */
    read_vertices("nebula/basketballplayergraph.graph.yml", "player", &t);
    assert_int_equal(t.rows, 51);
    assert_int_equal(t_int(&t, "_graphArVertexIndex", 50), 50); /* derived */
    assert_str_at(&t, "_vertexId", 0, "player105");
    assert_str_at(&t, "name", 0, "Danny Green");
    assert_int_equal(t_int(&t, "age", 0), 31);
    table_free(&t);
    read_edges("nebula/basketballplayergraph.graph.yml", "player", "serve", "team",
               KNUT_GRAPHAR_ORDERED_BY_DEST, &t);
    assert_int_equal(t.rows, 152);
    table_free(&t);
}

static void test_graphar_read__ldbc_labels_and_lists(void **state)
{
    (void)state;
    table t;
    read_vertices("ldbc/parquet/ldbc.graph.yml", "organisation", &t);
    assert_int_equal(t.rows, 7955);
    assert_string_equal(table_format(&t, "university"), "b");
    int64_t u = 0, c = 0, p = 0;
    for (int64_t i = 0; i < t.rows; i++) {
        u += t_int(&t, "university", i);
        c += t_int(&t, "company", i);
        p += t_int(&t, "public", i);
    }
    assert_int_equal(u, 6380);
    assert_int_equal(c, 1575);
    assert_int_equal(p, 10);
    table_free(&t);

    read_vertices("ldbc/parquet/ldbc.graph.yml", "person", &t);
    assert_int_equal(t.rows, 1528);
    assert_int_equal(t_int(&t, "id", 0), 933);
    assert_string_equal(table_format(&t, "emails"), "+l"); /* cardinality: list */
    int col = table_col(&t, "emails");
    assert_string_equal(t.schema.children[col]->children[0]->format, "U");
    int64_t row = 0, start, end, len;
    const knut_arrow_view *v = table_at(&t, "emails", &row);
    knut_arrow_view_list_range(v, row, &start, &end);
    assert_int_equal(end - start, 4);
    const char *s = knut_arrow_view_get_str(knut_arrow_view_child(v, 0), start + 1, &len);
    assert_int_equal(len, 22);
    assert_memory_equal(s, "Mahinda933@hotmail.com", 22);
    table_free(&t);

    /* Labels on their own: the index, then one boolean per label. */
    knut_graphar_graph_info *gi = load_graph("ldbc/parquet/ldbc.graph.yml");
    knut_graphar_reader *r = reader_for(gi, 0);
    knut_error err = KNUT_ERROR_INIT;
    struct ArrowArrayStream st;
    assert_int_equal(knut_graphar_reader_labels(r, vertex(gi, "organisation"), 1, 1, &st, &err),
                     KNUT_OK);
    table_read(&st, &t);
    assert_int_equal(t.schema.n_children, 4);
    assert_int_equal(t_int(&t, "_graphArVertexIndex", 0), 4096);
    assert_int_equal(t.rows, 7955 - 4096);
    table_free(&t);
    assert_int_equal(knut_graphar_reader_labels(r, vertex(gi, "person"), 0, 1, &st, &err),
                     KNUT_EINVAL);
    /* place declares labels but has no data at all. */
    assert_int_equal(knut_graphar_reader_vertices(r, vertex(gi, "place"), &st, &err),
                     KNUT_ENOTFOUND);
    assert_non_null(strstr(err.message, "vertex_count"));
    knut_graphar_reader_free(r);
    knut_graphar_graph_info_free(gi);
}

static void test_graphar_read__limit(void **state)
{
    (void)state;
    knut_graphar_graph_info *gi = load_graph("ldbc_sample/csv/ldbc_sample.graph.yml");
    knut_graphar_reader *r = reader_for(gi, 150);
    knut_error err = KNUT_ERROR_INIT;
    struct ArrowArrayStream st;
    table t;
    assert_int_equal(knut_graphar_reader_vertices(r, vertex(gi, "person"), &st, &err), KNUT_OK);
    table_read(&st, &t);
    assert_int_equal(t.rows, 150);
    assert_int_equal(t_int(&t, "_graphArVertexIndex", 149), 149);
    assert_str_at(&t, "firstName", 0, "Mahinda");
    table_free(&t);
    knut_graphar_reader_free(r);
    knut_graphar_graph_info_free(gi);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_graphar_read__ldbc_sample_person_formats),
        cmocka_unit_test(test_graphar_read__knows_edges_and_offsets),
        cmocka_unit_test(test_graphar_read__single_chunks),
        cmocka_unit_test(test_graphar_read__date_timestamp_feature),
        cmocka_unit_test(test_graphar_read__modern_graph),
        cmocka_unit_test(test_graphar_read__neo4j_nulls),
        cmocka_unit_test(test_graphar_read__nebula_without_index),
        cmocka_unit_test(test_graphar_read__ldbc_labels_and_lists),
        cmocka_unit_test(test_graphar_read__limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
