/*
 * Unit tests for GraphAr info loading and dumping (src/graphar/info*.c,
 * types.c) against the official corpus: every graph YAML loads, concrete
 * fields of several, legacy keys, load -> dump -> load round trips, and
 * the dump text compared byte for byte with the reference C++ output.
 * Errors and the in-memory builders are in test_graphar_info_errors.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graphar_fixture.h"

static const char *const corpus_graphs[] = {
    "ldbc_sample/csv/ldbc_sample.graph.yml",
    "ldbc_sample/json/LdbcSample.graph.yml",
    "ldbc_sample/orc/ldbc_sample.graph.yml",
    "ldbc_sample/parquet/ldbc_sample.graph.yml",
    "ldbc_sample/parquet/ldbc_sample_date.graph.yml",
    "ldbc_sample/parquet/ldbc_sample_timestamp.graph.yml",
    "ldbc_sample/parquet/ldbc_sample_with_feature.graph.yml",
    "modern_graph/modern_graph.graph.yml",
    "nebula/basketballplayergraph.graph.yml",
    "neo4j/MovieGraph.graph.yml",
    "ldbc/ldbc.graph.yml",
    "ldbc/parquet/ldbc.graph.yml",
    "transformer/ldbc_sample.graph.yml",
    "java/ldbc_sample/csv/ldbc_sample.graph.yml",
    "java/ldbc_sample/orc/ldbc_sample.graph.yml",
    "java/ldbc_sample/parquet/ldbc_sample.graph.yml",
};
#define N_GRAPHS (sizeof corpus_graphs / sizeof corpus_graphs[0])

static knut_graphar_graph_info *load_graph(const char *rel)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", GAR_CORPUS, rel);
    knut_graphar_graph_info *gi = NULL;
    knut_error err = KNUT_ERROR_INIT;
    knut_status st = knut_graphar_graph_load(&gi, path, &err);
    if (st != KNUT_OK)
        fail_msg("%s: %s", rel, err.message);
    assert_non_null(gi);
    return gi;
}

static void test_graphar_info__every_corpus_graph_loads(void **state)
{
    (void)state;
    size_t vertices = 0, edges = 0;
    for (size_t i = 0; i < N_GRAPHS; i++) {
        knut_graphar_graph_info *gi = load_graph(corpus_graphs[i]);
        assert_int_equal(gi->n_vertices, gi->n_vertex_files);
        assert_int_equal(gi->n_edges, gi->n_edge_files);
        assert_true(gi->n_vertices > 0);
        assert_true(gi->n_edges > 0);
        assert_true(gi->version.present);
        assert_int_equal(gi->version.major, 1);
        for (size_t k = 0; k < gi->n_vertices; k++) {
            assert_true(gi->vertices[k]->chunk_size > 0);
            assert_non_null(strstr(gi->vertices[k]->source, gi->vertex_files[k]));
        }
        for (size_t k = 0; k < gi->n_edges; k++)
            assert_true(gi->edges[k]->n_adj_lists > 0);
        vertices += gi->n_vertices;
        edges += gi->n_edges;
        knut_graphar_graph_info_free(gi);
    }
    /* 1+1+1+4+2+2+2+8+3+1+3 vertex infos and 1+1+1+4+2+2+6+23+2+1+3 edge infos. */
    assert_int_equal(vertices, 28);
    assert_int_equal(edges, 46);
}

static void test_graphar_info__ldbc_sample_parquet_fields(void **state)
{
    (void)state;
    knut_graphar_graph_info *gi = load_graph("ldbc_sample/parquet/ldbc_sample.graph.yml");
    assert_string_equal(gi->name, "ldbc_sample");
    assert_false(gi->prefix_given);
    /* No prefix in the YAML: the reference defaults to the YAML's directory. */
    assert_string_equal(gi->prefix, GAR_CORPUS "/ldbc_sample/parquet/");
    assert_string_equal(gi->base_dir, gi->prefix);
    assert_string_equal(gi->vertex_files[0], "person.vertex.yml");

    knut_graphar_vertex_info *v = knut_graphar_graph_info_vertex(gi, "person");
    assert_non_null(v);
    assert_int_equal(v->chunk_size, 100);
    assert_string_equal(v->prefix, "vertex/person/");
    assert_int_equal(v->n_groups, 2);
    assert_int_equal(v->n_labels, 0);
    /* Group prefixes are absent in this file: names joined by '_' + "/". */
    assert_false(v->groups[0].prefix_given);
    assert_string_equal(v->groups[0].prefix, "id/");
    assert_string_equal(v->groups[1].prefix, "firstName_lastName_gender/");
    assert_int_equal(v->groups[1].file_type, KNUT_GRAPHAR_FILE_PARQUET);
    const knut_graphar_property_group *g = NULL;
    const knut_graphar_property *id = knut_graphar_vertex_info_property(v, "id", &g);
    assert_non_null(id);
    assert_ptr_equal(g, &v->groups[0]);
    assert_int_equal(id->type, KNUT_GRAPHAR_TYPE_INT64);
    assert_true(id->is_primary);
    assert_false(id->is_nullable); /* primary forces non-null */
    assert_false(id->nullable_given);
    assert_int_equal(id->cardinality, KNUT_GRAPHAR_CARD_SINGLE);
    const knut_graphar_property *gender = knut_graphar_vertex_info_property(v, "gender", NULL);
    assert_int_equal(gender->type, KNUT_GRAPHAR_TYPE_STRING);
    assert_true(gender->is_nullable); /* default */
    assert_null(knut_graphar_vertex_info_property(v, "nope", NULL));
    assert_int_equal(id->pos.line, 6); /* the `- name: id` item */

    knut_graphar_edge_info *e = knut_graphar_graph_info_edge(gi, "person", "knows", "person");
    assert_non_null(e);
    assert_int_equal(e->chunk_size, 1024);
    assert_int_equal(e->src_chunk_size, 100);
    assert_int_equal(e->dst_chunk_size, 100);
    assert_false(e->directed);
    assert_true(e->directed_given);
    assert_string_equal(e->prefix, "edge/person_knows_person/");
    assert_int_equal(e->n_adj_lists, 3);
    assert_int_equal(e->adj_lists[0].type, KNUT_GRAPHAR_UNORDERED_BY_SOURCE);
    assert_int_equal(e->adj_lists[1].type, KNUT_GRAPHAR_ORDERED_BY_SOURCE);
    assert_int_equal(e->adj_lists[2].type, KNUT_GRAPHAR_ORDERED_BY_DEST);
    assert_string_equal(e->adj_lists[0].prefix, "unordered_by_source/");
    assert_string_equal(e->adj_lists[2].prefix, "ordered_by_dest/");
    assert_false(e->adj_lists[2].prefix_given);
    const knut_graphar_adj_list *al =
        knut_graphar_edge_info_adj_list(e, KNUT_GRAPHAR_ORDERED_BY_SOURCE);
    assert_ptr_equal(al, &e->adj_lists[1]);
    assert_null(knut_graphar_edge_info_adj_list(e, KNUT_GRAPHAR_UNORDERED_BY_DEST));
    assert_int_equal(e->n_groups, 1);
    assert_string_equal(e->groups[0].prefix, "creationDate/");
    assert_null(knut_graphar_graph_info_edge(gi, "person", "likes", "person"));
    knut_graphar_graph_info_free(gi);
}

static void test_graphar_info__types_labels_cardinality(void **state)
{
    (void)state;
    knut_graphar_graph_info *gi =
        load_graph("ldbc_sample/parquet/ldbc_sample_with_feature.graph.yml");
    const knut_graphar_property *f =
        knut_graphar_vertex_info_property(gi->vertices[0], "feature", NULL);
    assert_int_equal(f->type, KNUT_GRAPHAR_TYPE_LIST);
    assert_int_equal(f->elem_type, KNUT_GRAPHAR_TYPE_FLOAT);
    assert_string_equal(f->type_text, "list<float>");
    knut_graphar_graph_info_free(gi);

    gi = load_graph("ldbc_sample/parquet/ldbc_sample_date.graph.yml");
    assert_string_equal(gi->edges[0]->edge_type, "knows-date");
    assert_string_equal(gi->edges[0]->groups[0].prefix, "creationDate-date/");
    assert_int_equal(gi->edges[0]->groups[0].props[0].type, KNUT_GRAPHAR_TYPE_DATE);
    knut_graphar_graph_info_free(gi);
    gi = load_graph("ldbc_sample/parquet/ldbc_sample_timestamp.graph.yml");
    assert_int_equal(gi->edges[0]->groups[0].props[0].type, KNUT_GRAPHAR_TYPE_TIMESTAMP);
    knut_graphar_graph_info_free(gi);

    gi = load_graph("ldbc/parquet/ldbc.graph.yml");
    knut_graphar_vertex_info *org = knut_graphar_graph_info_vertex(gi, "organisation");
    assert_int_equal(org->n_labels, 3);
    assert_string_equal(org->labels[0], "university");
    assert_string_equal(org->labels[2], "public");
    const knut_graphar_property *emails =
        knut_graphar_vertex_info_property(knut_graphar_graph_info_vertex(gi, "person"), "emails",
                                          NULL);
    assert_int_equal(emails->cardinality, KNUT_GRAPHAR_CARD_LIST);
    assert_int_equal(emails->type, KNUT_GRAPHAR_TYPE_STRING);
    knut_graphar_edge_info *loc =
        knut_graphar_graph_info_edge(gi, "organisation", "isLocatedIn", "place");
    /* Kept as written: the validator warns about the missing slash. */
    assert_string_equal(loc->prefix, "edge/organisation_isLocatedIn_place");
    assert_true(loc->directed);
    assert_int_equal(loc->adj_lists[0].type, KNUT_GRAPHAR_ORDERED_BY_DEST);
    knut_graphar_graph_info_free(gi);

    gi = load_graph("ldbc_sample/csv/ldbc_sample.graph.yml");
    const knut_graphar_property *id =
        knut_graphar_vertex_info_property(gi->vertices[0], "id", NULL);
    assert_true(id->nullable_given);
    assert_false(id->nullable_declared);
    assert_int_equal(gi->vertices[0]->groups[0].file_type, KNUT_GRAPHAR_FILE_CSV);
    knut_graphar_graph_info_free(gi);

    gi = load_graph("ldbc_sample/json/LdbcSample.graph.yml");
    assert_string_equal(gi->name, "LdbcSample");
    assert_int_equal(gi->edges[0]->groups[0].file_type, KNUT_GRAPHAR_FILE_JSON);
    assert_false(gi->edges[0]->directed_given); /* no key: false */
    assert_false(gi->edges[0]->directed);
    knut_graphar_graph_info_free(gi);

    gi = load_graph("transformer/ldbc_sample.graph.yml");
    knut_graphar_edge_info *tk = gi->edges[0];
    assert_int_equal(tk->adj_lists[0].type, KNUT_GRAPHAR_UNORDERED_BY_DEST);
    assert_int_equal(tk->adj_lists[0].file_type, KNUT_GRAPHAR_FILE_CSV);
    assert_int_equal(tk->adj_lists[1].file_type, KNUT_GRAPHAR_FILE_ORC);
    assert_int_equal(gi->vertices[0]->chunk_size, 50);
    knut_graphar_graph_info_free(gi);
}

static void test_graphar_info__nebula_and_legacy_keys(void **state)
{
    (void)state;
    gar_log_count logs = {0};
    knut_log_set(KNUT_LOG_WARN, gar_log_sink, &logs);
    knut_graphar_graph_info *gi = load_graph("nebula/basketballplayergraph.graph.yml");
    assert_true(gi->prefix_given);
    assert_string_equal(gi->prefix, "/tmp/graphar/nebula2graphar/");
    assert_string_equal(gi->base_dir, GAR_CORPUS "/nebula/");
    knut_graphar_edge_info *serve = knut_graphar_graph_info_edge(gi, "player", "serve", "team");
    assert_true(serve->adj_lists[0].legacy_groups);
    assert_false(serve->adj_lists[1].legacy_groups);
    assert_int_equal(serve->n_groups, 1);
    assert_int_equal(serve->groups[0].n_props, 3);
    assert_int_equal(logs.warnings, 1); /* the ignored legacy groups */
    assert_non_null(strstr(logs.last, "adj_lists[0].property_groups"));
    knut_graphar_graph_info_free(gi);

    logs.warnings = 0;
    gi = load_graph("java/ldbc_sample/parquet/ldbc_sample.graph.yml");
    assert_true(gi->vertices[0]->legacy_keys);
    assert_string_equal(gi->vertices[0]->type, "person");
    knut_graphar_edge_info *e = gi->edges[0];
    assert_true(e->legacy_keys);
    assert_string_equal(e->src_type, "person");
    assert_string_equal(e->edge_type, "knows");
    assert_string_equal(e->dst_type, "person");
    assert_int_equal(e->n_adj_lists, 3);
    /* One warning per file, naming the legacy key. */
    assert_int_equal(logs.warnings, 2);
    assert_non_null(strstr(logs.last, "legacy key 'src_label'"));
    knut_graphar_graph_info_free(gi);
    knut_log_set(KNUT_LOG_OFF, NULL, NULL);
}

/* Dumps every info of g, loads the text back and compares. */
static void round_trip(const knut_graphar_graph_info *g)
{
    knut_error err = KNUT_ERROR_INIT;
    for (size_t i = 0; i < g->n_vertices; i++) {
        knut_buf b = KNUT_BUF_INIT, b2 = KNUT_BUF_INIT;
        assert_int_equal(knut_graphar_vertex_dump(g->vertices[i], &b, &err), KNUT_OK);
        knut_graphar_vertex_info *v = NULL;
        if (knut_graphar_vertex_load_yaml(&v, b.data, b.len, "dump.yml", &err) != KNUT_OK)
            fail_msg("%s\n%s", err.message, b.data);
        assert_true(gar_vertex_equal(g->vertices[i], v));
        /* Dumping is a fixed point. */
        assert_int_equal(knut_graphar_vertex_dump(v, &b2, &err), KNUT_OK);
        assert_string_equal(b.data, b2.data);
        knut_graphar_vertex_info_free(v);
        knut_buf_reset(&b);
        knut_buf_reset(&b2);
    }
    for (size_t i = 0; i < g->n_edges; i++) {
        knut_buf b = KNUT_BUF_INIT;
        assert_int_equal(knut_graphar_edge_dump(g->edges[i], &b, &err), KNUT_OK);
        knut_graphar_edge_info *e = NULL;
        if (knut_graphar_edge_load_yaml(&e, b.data, b.len, "dump.yml", &err) != KNUT_OK)
            fail_msg("%s\n%s", err.message, b.data);
        assert_true(gar_edge_equal(g->edges[i], e));
        knut_graphar_edge_info_free(e);
        knut_buf_reset(&b);
    }
    knut_buf b = KNUT_BUF_INIT;
    assert_int_equal(knut_graphar_graph_dump(g, 0, &b, &err), KNUT_OK);
    knut_graphar_graph_info *back = NULL;
    /* Loading the text with the original directory loads the same infos. */
    if (knut_graphar_graph_load_yaml(&back, b.data, b.len, "dump.graph.yml", g->base_dir, &err))
        fail_msg("%s\n%s", err.message, b.data);
    assert_true(gar_graph_equal(g, back));
    knut_graphar_graph_info_free(back);
    knut_buf_reset(&b);
}

static void test_graphar_info__round_trip_whole_corpus(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_GRAPHS; i++) {
        knut_graphar_graph_info *gi = load_graph(corpus_graphs[i]);
        round_trip(gi);
        knut_graphar_graph_info_free(gi);
    }
}

/* Verbatim from the reference's cpp/test/test_info.cc (graphar.md §1.5). */
static const char expected_vertex_dump[] = "chunk_size: 100\n"
                                           "prefix: test_vertex\n"
                                           "property_groups: \n"
                                           "  - file_type: parquet\n"
                                           "    prefix: p0_p1/\n"
                                           "    properties: \n"
                                           "      - data_type: int32\n"
                                           "        is_nullable: false\n"
                                           "        is_primary: true\n"
                                           "        name: p0\n"
                                           "      - cardinality: list\n"
                                           "        data_type: string\n"
                                           "        is_nullable: true\n"
                                           "        is_primary: false\n"
                                           "        name: p1\n"
                                           "type: test_vertex\n"
                                           "version: gar/v1\n";

static void test_graphar_info__vertex_dump_matches_reference(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    knut_graphar_vertex_info *vi = NULL;
    assert_int_equal(knut_graphar_vertex_info_new(&vi, "test_vertex", 100, "test_vertex", &err),
                     KNUT_OK);
    knut_graphar_property_group *g = NULL;
    assert_int_equal(
        knut_graphar_vertex_info_add_group(vi, KNUT_GRAPHAR_FILE_PARQUET, NULL, &g, &err),
        KNUT_OK);
    assert_int_equal(knut_graphar_group_add_property(g, "p0", "int32", 1, 1,
                                                     KNUT_GRAPHAR_CARD_SINGLE, &err),
                     KNUT_OK);
    assert_int_equal(knut_graphar_group_add_property(g, "p1", "string", 0, 1,
                                                     KNUT_GRAPHAR_CARD_LIST, &err),
                     KNUT_OK);
    assert_string_equal(g->prefix, "p0_p1/");
    knut_buf b = KNUT_BUF_INIT;
    assert_int_equal(knut_graphar_vertex_dump(vi, &b, &err), KNUT_OK);
    assert_string_equal(b.data, expected_vertex_dump);
    knut_buf_reset(&b);
    knut_graphar_vertex_info_free(vi);
}

static const char expected_edge_dump[] = "adj_lists: \n"
                                         "  - aligned_by: src\n"
                                         "    file_type: parquet\n"
                                         "    ordered: true\n"
                                         "    prefix: ordered_by_source/\n"
                                         "  - aligned_by: dst\n"
                                         "    file_type: csv\n"
                                         "    ordered: false\n"
                                         "    prefix: \"by-dst/\"\n"
                                         "chunk_size: 1024\n"
                                         "directed: true\n"
                                         "dst_chunk_size: 50\n"
                                         "dst_type: post\n"
                                         "edge_type: likes\n"
                                         "prefix: person_likes_post/\n"
                                         "property_groups: \n"
                                         "  - file_type: parquet\n"
                                         "    prefix: creationDate/\n"
                                         "    properties: \n"
                                         "      - data_type: \"list<double>\"\n"
                                         "        is_nullable: true\n"
                                         "        is_primary: false\n"
                                         "        name: creationDate\n"
                                         "src_chunk_size: 100\n"
                                         "src_type: person\n"
                                         "version: gar/v1\n";

static void test_graphar_info__edge_and_graph_dump_text(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    knut_graphar_edge_info *ei = NULL;
    assert_int_equal(knut_graphar_edge_info_new(&ei, "person", "likes", "post", 1024, 100, 50, 1,
                                                NULL, &err),
                     KNUT_OK);
    assert_int_equal(knut_graphar_edge_info_add_adj_list(ei, KNUT_GRAPHAR_ORDERED_BY_SOURCE,
                                                         KNUT_GRAPHAR_FILE_PARQUET, NULL, &err),
                     KNUT_OK);
    assert_int_equal(knut_graphar_edge_info_add_adj_list(ei, KNUT_GRAPHAR_UNORDERED_BY_DEST,
                                                         KNUT_GRAPHAR_FILE_CSV, "by-dst/", &err),
                     KNUT_OK);
    knut_graphar_property_group *g = NULL;
    assert_int_equal(
        knut_graphar_edge_info_add_group(ei, KNUT_GRAPHAR_FILE_PARQUET, NULL, &g, &err), KNUT_OK);
    assert_int_equal(knut_graphar_group_add_property(g, "creationDate", "list<double>", 0, 1,
                                                     KNUT_GRAPHAR_CARD_SINGLE, &err),
                     KNUT_OK);
    knut_buf b = KNUT_BUF_INIT;
    assert_int_equal(knut_graphar_edge_dump(ei, &b, &err), KNUT_OK);
    assert_string_equal(b.data, expected_edge_dump);
    knut_buf_clear(&b);

    knut_graphar_vertex_info *person = NULL, *post = NULL;
    assert_int_equal(knut_graphar_vertex_info_new(&person, "person", 100, NULL, &err), KNUT_OK);
    assert_int_equal(knut_graphar_vertex_info_new(&post, "post", 50, NULL, &err), KNUT_OK);
    knut_graphar_graph_info *gi = NULL;
    assert_int_equal(knut_graphar_graph_info_new(&gi, "social", NULL, &err), KNUT_OK);
    assert_int_equal(knut_graphar_graph_info_add_vertex(gi, person, NULL, &err), KNUT_OK);
    assert_int_equal(knut_graphar_graph_info_add_vertex(gi, post, NULL, &err), KNUT_OK);
    assert_int_equal(knut_graphar_graph_info_add_edge(gi, ei, NULL, &err), KNUT_OK);
    gi->extra = calloc(1, sizeof *gi->extra);
    gi->n_extra = 1;
    gi->extra[0].key = strdup("source");
    gi->extra[0].value = strdup("");
    assert_int_equal(knut_graphar_graph_dump(gi, 0, &b, &err), KNUT_OK);
    /* Our form: the names of the files we write, no defaulted prefix. */
    assert_string_equal(b.data, "edges: \n"
                                "  - person_likes_post.edge.yml\n"
                                "extra_info: \n"
                                "  - key: source\n"
                                "    value: \"\"\n"
                                "name: social\n"
                                "version: gar/v1\n"
                                "vertices: \n"
                                "  - person.vertex.yml\n"
                                "  - post.vertex.yml\n");
    knut_buf_clear(&b);
    /* The reference's form: .yaml names and the prefix always. */
    assert_int_equal(knut_graphar_graph_dump(gi, KNUT_GRAPHAR_DUMP_CXX, &b, &err), KNUT_OK);
    assert_string_equal(b.data, "edges: \n"
                                "  - person_likes_post.edge.yaml\n"
                                "extra_info: \n"
                                "  - key: source\n"
                                "    value: \"\"\n"
                                "name: social\n"
                                "prefix: ./\n"
                                "version: gar/v1\n"
                                "vertices: \n"
                                "  - person.vertex.yaml\n"
                                "  - post.vertex.yaml\n");
    knut_buf_reset(&b);
    knut_graphar_graph_info_free(gi);
}

static void test_graphar_info__scalar_quoting_and_folding(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    knut_graphar_vertex_info *vi = NULL;
    /* 70 characters with spaces: folded at the first space after 64. */
    const char *long_type = "a vertex type name that is long enough to be folded by the emitter "
                            "xx";
    assert_int_equal(knut_graphar_vertex_info_new(&vi, long_type, 7, "v/", &err), KNUT_OK);
    assert_int_equal(knut_graphar_vertex_info_add_label(vi, "a:b", &err), KNUT_OK);
    assert_int_equal(knut_graphar_vertex_info_add_label(vi, "plain", &err), KNUT_OK);
    vi->version.present = 0;
    knut_buf b = KNUT_BUF_INIT;
    assert_int_equal(knut_graphar_vertex_dump(vi, &b, &err), KNUT_OK);
    assert_string_equal(b.data,
                        "chunk_size: 7\n"
                        "labels: \n"
                        "  - \"a:b\"\n"
                        "  - plain\n"
                        "prefix: v/\n"
                        "type: >-\n"
                        "  a vertex type name that is long enough to be folded by the emitter\n"
                        "  xx\n");
    /* Our loader reads the folded block back to the same name. */
    knut_graphar_vertex_info *back = NULL;
    assert_int_equal(knut_graphar_vertex_load_yaml(&back, b.data, b.len, "f.yml", &err), KNUT_OK);
    assert_string_equal(back->type, long_type);
    assert_string_equal(back->labels[0], "a:b");
    assert_false(back->version.present);
    knut_graphar_vertex_info_free(back);
    knut_buf_reset(&b);
    knut_graphar_vertex_info_free(vi);
}

static void test_graphar_info__version_strings(void **state)
{
    (void)state;
    knut_graphar_version v = {0};
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_graphar_version_parse(&v, "gar/v1 (t1, t2 ,,t3)", &err), KNUT_OK);
    assert_int_equal(v.n_user_types, 3);
    assert_string_equal(v.user_types[1], "t2");
    knut_buf b = KNUT_BUF_INIT;
    assert_int_equal(knut_graphar_version_format(&v, &b), KNUT_OK);
    assert_string_equal(b.data, "gar/v1 (t1,t2,t3)");
    knut_buf_reset(&b);
    assert_int_equal(knut_graphar_version_parse(&v, "gar/v1", &err), KNUT_OK);
    assert_int_equal(v.n_user_types, 0);
    assert_int_equal(knut_graphar_version_parse(&v, "gar/v1-beta", &err), KNUT_OK);
    const char *bad[] = {"gar/v2", "gar/v", "v1", "gar/v10", "GAR/v1", "gar/v1\nx", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(knut_graphar_version_parse(&v, bad[i], &err), KNUT_EINVAL);
        assert_non_null(strstr(err.message, "invalid version string"));
        assert_false(v.present);
    }
    knut_graphar_version_reset(&v);
}

static void test_graphar_info__type_names(void **state)
{
    (void)state;
    knut_graphar_type t, e;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_graphar_type_parse("list<string>", &t, &e, &err), KNUT_OK);
    assert_int_equal(t, KNUT_GRAPHAR_TYPE_LIST);
    assert_int_equal(e, KNUT_GRAPHAR_TYPE_STRING);
    assert_int_equal(knut_graphar_type_parse("timestamp", &t, &e, &err), KNUT_OK);
    assert_int_equal(t, KNUT_GRAPHAR_TYPE_TIMESTAMP);
    const char *bad[] = {"list<bool>", "list<date>", "list<list<int32>>", "Int64", "list", "list<>",
                         "int"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(knut_graphar_type_parse(bad[i], &t, &e, &err), KNUT_EINVAL);
    knut_graphar_adj_list_type a;
    assert_int_equal(knut_graphar_adj_list_type_parse("unordered_by_dest", &a, &err), KNUT_OK);
    assert_int_equal(a, KNUT_GRAPHAR_UNORDERED_BY_DEST);
    assert_string_equal(knut_graphar_adj_list_type_name(KNUT_GRAPHAR_ORDERED_BY_SOURCE),
                        "ordered_by_source");
    assert_int_equal(knut_graphar_adj_list_type_of(1, 0), KNUT_GRAPHAR_ORDERED_BY_DEST);
    knut_graphar_file_type ft;
    assert_int_equal(knut_graphar_file_type_parse("Parquet", &ft, &err), KNUT_EINVAL);
    assert_non_null(strstr(err.message, "'Parquet'"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_graphar_info__every_corpus_graph_loads),
        cmocka_unit_test(test_graphar_info__ldbc_sample_parquet_fields),
        cmocka_unit_test(test_graphar_info__types_labels_cardinality),
        cmocka_unit_test(test_graphar_info__nebula_and_legacy_keys),
        cmocka_unit_test(test_graphar_info__round_trip_whole_corpus),
        cmocka_unit_test(test_graphar_info__vertex_dump_matches_reference),
        cmocka_unit_test(test_graphar_info__edge_and_graph_dump_text),
        cmocka_unit_test(test_graphar_info__scalar_quoting_and_folding),
        cmocka_unit_test(test_graphar_info__version_strings),
        cmocka_unit_test(test_graphar_info__type_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
