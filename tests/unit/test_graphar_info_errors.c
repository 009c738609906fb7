/*
 * Unit tests for what GraphAr info loading refuses (with file:line:col and
 * the field in the message), what it deliberately keeps for the validator,
 * the in-memory builders' refusals, and saving a whole graph to a
 * directory and loading it back.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "graphar_fixture.h"

static knut_status vertex_bad(const char *text, knut_error *err)
{
    knut_graphar_vertex_info *vi = (knut_graphar_vertex_info *)(uintptr_t)1;
    knut_status st = knut_graphar_vertex_load_yaml(&vi, text, strlen(text), "v.yml", err);
    assert_true(st != KNUT_OK);
    assert_int_equal(err->code, st);
    assert_null(vi);
    return st;
}

static knut_status edge_bad(const char *text, knut_error *err)
{
    knut_graphar_edge_info *ei = (knut_graphar_edge_info *)(uintptr_t)1;
    knut_status st = knut_graphar_edge_load_yaml(&ei, text, strlen(text), "e.yml", err);
    assert_true(st != KNUT_OK);
    assert_null(ei);
    return st;
}

static knut_graphar_vertex_info *vertex_ok(const char *text)
{
    knut_graphar_vertex_info *vi = NULL;
    knut_error err = KNUT_ERROR_INIT;
    if (knut_graphar_vertex_load_yaml(&vi, text, strlen(text), "v.yml", &err) != KNUT_OK)
        fail_msg("unexpected error: %s", err.message);
    return vi;
}

#define V_HEAD "type: person\nchunk_size: 100\n"
#define PG_ONE "property_groups:\n  - file_type: parquet\n    properties:\n"

static void test_graphar_info_errors__vertex_refusals(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;

    assert_int_equal(vertex_bad("type: person\nchunk_size: [1\n", &err), KNUT_EPARSE);
    assert_non_null(strstr(err.message, "v.yml:"));

    assert_int_equal(vertex_bad("chunk_size: 100\nprefix: v/\n", &err), KNUT_ENOTFOUND);
    assert_string_equal(err.message, "v.yml:1:1: type: missing required field");

    assert_int_equal(vertex_bad("type: person\nchunk_size: 0\n", &err), KNUT_EINVAL);
    assert_string_equal(err.message, "v.yml:2:13: chunk_size: must be > 0, got 0");

    assert_int_equal(vertex_bad("type: person\nchunk_size: -5\n", &err), KNUT_EINVAL);
    assert_non_null(strstr(err.message, "must be > 0, got -5"));

    assert_int_equal(vertex_bad("type: person\nchunk_size: lots\n", &err), KNUT_EINVAL);
    assert_string_equal(err.message, "v.yml:2:13: chunk_size: expected an integer, got 'lots'");

    assert_int_equal(vertex_bad("type: person\n", &err), KNUT_ENOTFOUND);
    assert_string_equal(err.message, "v.yml:1:1: chunk_size: missing required field");

    assert_int_equal(vertex_bad(V_HEAD "version: gar/v2\n", &err), KNUT_EINVAL);
    assert_non_null(strstr(err.message, "v.yml:3:10: version: invalid version string 'gar/v2'"));

    assert_int_equal(vertex_bad(V_HEAD PG_ONE "      - name: id\n        data_type: int128\n",
                                &err),
                     KNUT_EINVAL);
    assert_non_null(strstr(err.message, "v.yml:7:20: property_groups[0].properties[0].data_type: "
                                        "unsupported data type 'int128'"));

    assert_int_equal(vertex_bad(V_HEAD PG_ONE "      - data_type: int64\n", &err), KNUT_ENOTFOUND);
    assert_string_equal(err.message,
                        "v.yml:6:9: property_groups[0].properties[0].name: missing required field");

    assert_int_equal(vertex_bad(V_HEAD "property_groups:\n  - properties: []\n", &err),
                     KNUT_ENOTFOUND);
    assert_non_null(strstr(err.message, "v.yml:4:5: property_groups[0].file_type: missing"));

    assert_int_equal(vertex_bad(V_HEAD "property_groups:\n  - file_type: avro\n", &err),
                     KNUT_EINVAL);
    assert_non_null(strstr(err.message, "unsupported file type 'avro'"));

    assert_int_equal(vertex_bad(V_HEAD PG_ONE "      - name: id\n        data_type: int64\n"
                                              "        cardinality: bag\n",
                                &err),
                     KNUT_EINVAL);
    assert_non_null(strstr(err.message, "v.yml:8:22: property_groups[0].properties[0]."
                                        "cardinality: unsupported cardinality 'bag'"));

    assert_int_equal(vertex_bad(V_HEAD PG_ONE "      - name: id\n        data_type: int64\n"
                                              "        is_primary: maybe\n",
                                &err),
                     KNUT_EINVAL);
    assert_non_null(strstr(err.message, "is_primary: expected true or false, got 'maybe'"));

    assert_int_equal(vertex_bad("type: {a: 1}\nchunk_size: 1\n", &err), KNUT_EINVAL);
    assert_string_equal(err.message, "v.yml:1:7: type: expected a string, got a map");

    assert_int_equal(vertex_bad(V_HEAD "labels: city\n", &err), KNUT_EINVAL);
    assert_non_null(strstr(err.message, "labels: expected a list, got a scalar"));

    assert_int_equal(vertex_bad(V_HEAD "property_groups:\n  - 3\n", &err), KNUT_EINVAL);
    assert_non_null(strstr(err.message, "property_groups[0]: expected a map"));

    assert_int_equal(vertex_bad("- just\n- a list\n", &err), KNUT_EINVAL);
    assert_non_null(strstr(err.message, "a vertex info must be a map"));

    assert_int_equal(vertex_bad("type: ''\nchunk_size: 1\n", &err), KNUT_EINVAL);
    assert_non_null(strstr(err.message, "type: must not be empty"));
}

static void test_graphar_info_errors__edge_refusals(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    const char *head = "src_type: a\nedge_type: r\ndst_type: b\nchunk_size: 10\n"
                       "src_chunk_size: 5\ndst_chunk_size: 5\n";
    char text[1024];

    assert_int_equal(edge_bad("src_type: a\nedge_type: r\nchunk_size: 1\n", &err),
                     KNUT_ENOTFOUND);
    assert_string_equal(err.message, "e.yml:1:1: dst_type: missing required field");

    snprintf(text, sizeof text, "%.*sdst_chunk_size: 0\n", (int)(strlen(head) - 18), head);
    assert_int_equal(edge_bad(text, &err), KNUT_EINVAL);
    assert_string_equal(err.message, "e.yml:6:17: dst_chunk_size: must be > 0, got 0");

    snprintf(text, sizeof text,
             "%sproperty_groups:\n  - file_type: parquet\n    properties:\n"
             "      - name: w\n        data_type: double\n        cardinality: list\n",
             head);
    assert_int_equal(edge_bad(text, &err), KNUT_EINVAL);
    assert_string_equal(err.message, "e.yml:12:22: property_groups[0].properties[0].cardinality: "
                                     "'list' cardinality is not allowed on an edge property "
                                     "(only single)");

    snprintf(text, sizeof text, "%sadj_lists:\n  - aligned_by: src\n    file_type: csv\n", head);
    assert_int_equal(edge_bad(text, &err), KNUT_ENOTFOUND);
    assert_string_equal(err.message, "e.yml:8:5: adj_lists[0].ordered: missing required field");

    snprintf(text, sizeof text, "%sadj_lists: yes\n", head);
    assert_int_equal(edge_bad(text, &err), KNUT_EINVAL);
    assert_non_null(strstr(err.message, "adj_lists: expected a list"));

    snprintf(text, sizeof text, "%sdirected: sometimes\n", head);
    assert_int_equal(edge_bad(text, &err), KNUT_EINVAL);
    assert_non_null(strstr(err.message, "e.yml:7:11: directed: expected true or false"));
}

static void test_graphar_info_errors__soft_problems_load(void **state)
{
    (void)state;
    gar_log_count logs = {0};
    knut_log_set(KNUT_LOG_WARN, gar_log_sink, &logs);
    /* Two primary keys, a duplicate name, JSON, a list in CSV, a primary
     * declared nullable, a group without properties: all for the validator. */
    knut_graphar_vertex_info *vi = vertex_ok(V_HEAD "property_groups:\n"
                                                    "  - file_type: json\n    properties:\n"
                                                    "      - {name: a, data_type: int64, "
                                                    "is_primary: true, is_nullable: true}\n"
                                                    "      - {name: b, data_type: string, "
                                                    "is_primary: yes}\n"
                                                    "  - file_type: csv\n    properties:\n"
                                                    "      - {name: a, data_type: list<int32>}\n"
                                                    "  - file_type: orc\n");
    assert_int_equal(vi->n_groups, 3);
    assert_int_equal(vi->groups[0].file_type, KNUT_GRAPHAR_FILE_JSON);
    const knut_graphar_property *a = &vi->groups[0].props[0];
    assert_true(a->is_primary);
    assert_true(a->nullable_declared);
    assert_false(a->is_nullable);
    assert_true(vi->groups[0].props[1].is_primary);
    assert_int_equal(vi->groups[1].props[0].type, KNUT_GRAPHAR_TYPE_LIST);
    assert_int_equal(vi->groups[2].n_props, 0);
    assert_string_equal(vi->groups[2].prefix, "");
    assert_false(vi->version.present);
    knut_graphar_vertex_info_free(vi);

    /* No adj_lists, a duplicated adj list type, an odd aligned_by. */
    const char *e = "src_type: a\nedge_type: r\ndst_type: b\nchunk_size: 10\n"
                    "src_chunk_size: 5\ndst_chunk_size: 5\n";
    knut_graphar_edge_info *ei = NULL;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_graphar_edge_load_yaml(&ei, e, strlen(e), "e.yml", &err), KNUT_OK);
    assert_int_equal(ei->n_adj_lists, 0);
    assert_string_equal(ei->prefix, "a_r_b/");
    knut_graphar_edge_info_free(ei);
    char text[1024];
    snprintf(text, sizeof text,
             "%sadj_lists:\n  - {ordered: true, aligned_by: source, file_type: csv}\n"
             "  - {ordered: 1, aligned_by: dst, file_type: csv}\n",
             e);
    assert_int_equal(knut_graphar_edge_load_yaml(&ei, text, strlen(text), "e.yml", &err),
                     KNUT_OK);
    assert_int_equal(ei->adj_lists[0].type, KNUT_GRAPHAR_ORDERED_BY_DEST);
    assert_string_equal(ei->adj_lists[0].aligned_by_text, "source");
    assert_int_equal(ei->adj_lists[1].type, KNUT_GRAPHAR_ORDERED_BY_DEST);
    assert_int_equal(logs.warnings, 1);
    assert_non_null(strstr(logs.last, "'source' is neither src nor dst"));
    knut_graphar_edge_info_free(ei);
    knut_log_set(KNUT_LOG_OFF, NULL, NULL);
}

static void test_graphar_info_errors__graph_refusals(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    knut_graphar_graph_info *gi = NULL;
    const char *g = "name: g\nvertices:\n  - person.vertex.yml\n  - nobody.vertex.yml\n";
    /* Parse only: the list is kept, nothing is loaded, prefix stays "". */
    assert_int_equal(knut_graphar_graph_load_yaml(&gi, g, strlen(g), "g.yml", NULL, &err),
                     KNUT_OK);
    assert_int_equal(gi->n_vertex_files, 2);
    assert_int_equal(gi->n_vertices, 0);
    assert_string_equal(gi->prefix, "");
    /* ... and cannot be saved as a whole. */
    assert_int_equal(knut_graphar_graph_save_all(gi, "/nonexistent", &err), KNUT_EINVAL);
    knut_graphar_graph_info_free(gi);

    /* A listed file that is missing: both places are named. */
    const char *dir = GAR_CORPUS "/ldbc_sample/parquet";
    assert_int_equal(knut_graphar_graph_load_yaml(&gi, g, strlen(g), "g.yml", dir, &err),
                     KNUT_ENOTFOUND);
    assert_null(gi);
    assert_non_null(strstr(err.message, "g.yml:4:5: vertices[1] 'nobody.vertex.yml': "));
    assert_non_null(strstr(err.message, "nobody.vertex.yml"));

    /* A listed file that is broken: its own position appears. */
    char tmp[] = "/tmp/knut_gar_err_XXXXXX";
    assert_non_null(mkdtemp(tmp));
    char path[256];
    snprintf(path, sizeof path, "%s/bad.vertex.yml", tmp);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("type: x\nchunk_size: 0\n", f);
    fclose(f);
    const char *g2 = "edges: []\nvertices: [bad.vertex.yml]\nversion: gar/v1\n";
    assert_int_equal(knut_graphar_graph_load_yaml(&gi, g2, strlen(g2), "g2.yml", tmp, &err),
                     KNUT_EINVAL);
    assert_non_null(strstr(err.message, "g2.yml:2:12: vertices[0] 'bad.vertex.yml': "));
    assert_non_null(strstr(err.message, "bad.vertex.yml:2:13: chunk_size: must be > 0"));
    unlink(path);
    rmdir(tmp);

    const char *g3 = "name: g\nversion: gar/v1 (a\nextra_info: [{key: k}]\n";
    assert_int_equal(knut_graphar_graph_load_yaml(&gi, g3, strlen(g3), "g3.yml", NULL, &err),
                     KNUT_OK);
    assert_int_equal(gi->n_extra, 1);
    assert_string_equal(gi->extra[0].value, "");
    knut_graphar_graph_info_free(gi);
    const char *g4 = "extra_info: [{value: v}]\n";
    assert_int_equal(knut_graphar_graph_load_yaml(&gi, g4, strlen(g4), "g4.yml", NULL, &err),
                     KNUT_ENOTFOUND);
    assert_non_null(strstr(err.message, "extra_info[0].key: missing required field"));
    const char *g5 = "vertices: person.vertex.yml\n";
    assert_int_equal(knut_graphar_graph_load_yaml(&gi, g5, strlen(g5), "g5.yml", NULL, &err),
                     KNUT_EINVAL);
    assert_string_equal(err.message, "g5.yml:1:11: vertices: expected a list, got a scalar");
}

static void test_graphar_info_errors__builders_refuse(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    knut_graphar_vertex_info *vi = NULL;
    assert_int_equal(knut_graphar_vertex_info_new(&vi, "", 10, NULL, &err), KNUT_EINVAL);
    assert_int_equal(knut_graphar_vertex_info_new(&vi, "v", 0, NULL, &err), KNUT_EINVAL);
    assert_null(vi);
    assert_int_equal(knut_graphar_vertex_info_new(&vi, "v", 10, NULL, &err), KNUT_OK);
    assert_string_equal(vi->prefix, "v/");
    knut_graphar_property_group *g = NULL;
    assert_int_equal(knut_graphar_vertex_info_add_group(vi, KNUT_GRAPHAR_FILE_CSV, NULL, &g, &err),
                     KNUT_OK);
    assert_int_equal(
        knut_graphar_group_add_property(g, "x", "int64", 1, 0, KNUT_GRAPHAR_CARD_SINGLE, &err),
        KNUT_OK);
    assert_int_equal(
        knut_graphar_group_add_property(g, "x", "int32", 0, 1, KNUT_GRAPHAR_CARD_SINGLE, &err),
        KNUT_EINVAL);
    assert_int_equal(
        knut_graphar_group_add_property(g, "y", "uuid", 0, 1, KNUT_GRAPHAR_CARD_SINGLE, &err),
        KNUT_EINVAL);
    assert_non_null(strstr(err.message, "property 'y': unsupported data type 'uuid'"));
    assert_int_equal(g->n_props, 1);
    assert_string_equal(g->prefix, "x/");

    knut_graphar_edge_info *ei = NULL;
    assert_int_equal(knut_graphar_edge_info_new(&ei, "v", "e", "v", 10, 10, -1, 0, NULL, &err),
                     KNUT_EINVAL);
    assert_int_equal(knut_graphar_edge_info_new(&ei, "v", "e", "v", 10, 10, 10, 0, "p", &err),
                     KNUT_OK);
    assert_int_equal(knut_graphar_edge_info_add_adj_list(ei, KNUT_GRAPHAR_ORDERED_BY_DEST,
                                                         KNUT_GRAPHAR_FILE_CSV, NULL, &err),
                     KNUT_OK);
    assert_int_equal(knut_graphar_edge_info_add_adj_list(ei, KNUT_GRAPHAR_ORDERED_BY_DEST,
                                                         KNUT_GRAPHAR_FILE_ORC, NULL, &err),
                     KNUT_EINVAL);
    assert_non_null(strstr(err.message, "ordered_by_dest already exists"));
    /* An edge property with list cardinality cannot be dumped faithfully. */
    knut_graphar_property_group *eg = NULL;
    assert_int_equal(knut_graphar_edge_info_add_group(ei, KNUT_GRAPHAR_FILE_PARQUET, NULL, &eg,
                                                      &err),
                     KNUT_OK);
    assert_int_equal(
        knut_graphar_group_add_property(eg, "w", "double", 0, 1, KNUT_GRAPHAR_CARD_SET, &err),
        KNUT_OK);
    knut_buf b = KNUT_BUF_INIT;
    assert_int_equal(knut_graphar_edge_dump(ei, &b, &err), KNUT_EINVAL);
    assert_non_null(strstr(err.message, "set cardinality"));
    knut_buf_reset(&b);

    knut_graphar_graph_info *gi = NULL;
    assert_int_equal(knut_graphar_graph_info_new(&gi, "", NULL, &err), KNUT_EINVAL);
    assert_int_equal(knut_graphar_graph_info_new(&gi, "g", "/data/g/", &err), KNUT_OK);
    assert_int_equal(knut_graphar_graph_info_add_vertex(gi, vi, NULL, &err), KNUT_OK);
    knut_graphar_vertex_info *dup = NULL;
    assert_int_equal(knut_graphar_vertex_info_new(&dup, "v", 5, NULL, &err), KNUT_OK);
    assert_int_equal(knut_graphar_graph_info_add_vertex(gi, dup, NULL, &err), KNUT_EINVAL);
    knut_graphar_vertex_info_free(dup); /* not taken on failure */
    assert_int_equal(knut_graphar_graph_info_add_edge(gi, ei, "sub/../../x.edge.yml", &err),
                     KNUT_OK);
    /* Saving refuses a listed name that leaves the directory. */
    assert_int_equal(knut_graphar_graph_save_all(gi, "/tmp", &err), KNUT_EINVAL);
    assert_non_null(strstr(err.message, "leaves the directory"));
    knut_graphar_graph_info_free(gi);
}

static void test_graphar_info_errors__save_all_and_reload(void **state)
{
    (void)state;
    char path[1024];
    snprintf(path, sizeof path, "%s/ldbc/parquet/ldbc.graph.yml", GAR_CORPUS);
    knut_error err = KNUT_ERROR_INIT;
    knut_graphar_graph_info *gi = NULL;
    assert_int_equal(knut_graphar_graph_load(&gi, path, &err), KNUT_OK);
    char tmp[] = "/tmp/knut_gar_save_XXXXXX";
    assert_non_null(mkdtemp(tmp));
    assert_int_equal(knut_graphar_graph_save_all(gi, tmp, &err), KNUT_OK);
    snprintf(path, sizeof path, "%s/ldbc.graph.yml", tmp);
    knut_graphar_graph_info *back = NULL;
    if (knut_graphar_graph_load(&back, path, &err) != KNUT_OK)
        fail_msg("%s", err.message);
    /* Same infos; the defaulted prefix now points at the new directory. */
    char want_prefix[512];
    snprintf(want_prefix, sizeof want_prefix, "%s/", tmp);
    assert_string_equal(back->prefix, want_prefix);
    free(back->prefix);
    back->prefix = strdup(gi->prefix);
    assert_true(gar_graph_equal(gi, back));
    for (size_t i = 0; i < back->n_vertex_files; i++) {
        snprintf(path, sizeof path, "%s/%s", tmp, back->vertex_files[i]);
        assert_int_equal(unlink(path), 0);
    }
    for (size_t i = 0; i < back->n_edge_files; i++) {
        snprintf(path, sizeof path, "%s/%s", tmp, back->edge_files[i]);
        assert_int_equal(unlink(path), 0);
    }
    snprintf(path, sizeof path, "%s/ldbc.graph.yml", tmp);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(rmdir(tmp), 0); /* no temporary files left behind */
    knut_graphar_graph_info_free(back);
    knut_graphar_graph_info_free(gi);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_graphar_info_errors__vertex_refusals),
        cmocka_unit_test(test_graphar_info_errors__edge_refusals),
        cmocka_unit_test(test_graphar_info_errors__soft_problems_load),
        cmocka_unit_test(test_graphar_info_errors__graph_refusals),
        cmocka_unit_test(test_graphar_info_errors__builders_refuse),
        cmocka_unit_test(test_graphar_info_errors__save_all_and_reload),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
