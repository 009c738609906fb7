/*
 * Unit tests for the GraphAr layout (src/graphar/layout.c): every path
 * builder checked against files that exist in the official corpus (each
 * data graph is walked with the chunk math and the count files, so every
 * vertex chunk, adj-list chunk, offset, edge property chunk and count file
 * the layout predicts must be there), exact path strings for the corner
 * cases, chunk arithmetic, and the 8-byte count files.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "graphar_fixture.h"

static knut_graphar_graph_info *load(const char *rel)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", GAR_CORPUS, rel);
    knut_graphar_graph_info *gi = NULL;
    knut_error err = KNUT_ERROR_INIT;
    if (knut_graphar_graph_load(&gi, path, &err) != KNUT_OK)
        fail_msg("%s", err.message);
    return gi;
}

static void assert_exists(const char *path)
{
    struct stat sb;
    if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
        fail_msg("expected file missing: %s", path);
}

static int64_t read_count(knut_buf *b)
{
    int64_t v = -1;
    knut_error err = KNUT_ERROR_INIT;
    if (knut_graphar_count_read(b->data, &v, &err) != KNUT_OK)
        fail_msg("%s", err.message);
    return v;
}

/* Walks one data graph; returns how many files were checked. */
static size_t walk_graph(const knut_graphar_graph_info *gi)
{
    size_t files = 0;
    knut_buf b = KNUT_BUF_INIT;
    const char *base = gi->base_dir; /* nebula's prefix does not exist */
    for (size_t i = 0; i < gi->n_vertices; i++) {
        const knut_graphar_vertex_info *v = gi->vertices[i];
        knut_buf_clear(&b);
        assert_int_equal(knut_graphar_path_vertex_count(&b, base, v), KNUT_OK);
        int64_t n = read_count(&b);
        files++;
        int64_t chunks = knut_graphar_chunk_count(n, v->chunk_size);
        for (size_t g = 0; g < v->n_groups; g++) {
            for (int64_t c = 0; c < chunks; c++, files++) {
                knut_buf_clear(&b);
                assert_int_equal(knut_graphar_path_vertex_chunk(&b, base, v, &v->groups[g], c),
                                 KNUT_OK);
                assert_exists(b.data);
            }
            /* Vertex chunks are dense: nothing past the last one. */
            knut_buf_clear(&b);
            knut_graphar_path_vertex_chunk(&b, base, v, &v->groups[g], chunks);
            assert_int_equal(access(b.data, F_OK), -1);
        }
    }
    for (size_t i = 0; i < gi->n_edges; i++) {
        const knut_graphar_edge_info *e = gi->edges[i];
        for (size_t a = 0; a < e->n_adj_lists; a++) {
            const knut_graphar_adj_list *al = &e->adj_lists[a];
            knut_buf_clear(&b);
            assert_int_equal(knut_graphar_path_aligned_vertex_count(&b, base, e, al), KNUT_OK);
            int64_t m = read_count(&b);
            files++;
            /* The aligned count is the aligned vertex type's count. */
            const knut_graphar_vertex_info *av =
                knut_graphar_graph_info_vertex(gi, knut_graphar_aligned_type(e, al->type));
            assert_non_null(av);
            knut_buf_clear(&b);
            knut_graphar_path_vertex_count(&b, base, av);
            assert_int_equal(m, read_count(&b));
            int64_t parts =
                knut_graphar_chunk_count(m, knut_graphar_aligned_chunk_size(e, al->type));
            for (int64_t p = 0; p < parts; p++) {
                knut_buf_clear(&b);
                assert_int_equal(knut_graphar_path_edge_count(&b, base, e, al, p), KNUT_OK);
                int64_t ec = read_count(&b);
                files++;
                if (knut_graphar_adj_list_type_is_ordered(al->type)) {
                    knut_buf_clear(&b);
                    assert_int_equal(knut_graphar_path_offset_chunk(&b, base, e, al, p), KNUT_OK);
                    assert_exists(b.data);
                    files++;
                }
                int64_t ecs = knut_graphar_chunk_count(ec, e->chunk_size);
                for (int64_t c = 0; c < ecs; c++) {
                    knut_buf_clear(&b);
                    assert_int_equal(knut_graphar_path_adj_chunk(&b, base, e, al, p, c), KNUT_OK);
                    assert_exists(b.data);
                    files++;
                    for (size_t g = 0; g < e->n_groups; g++, files++) {
                        knut_buf_clear(&b);
                        assert_int_equal(knut_graphar_path_edge_chunk(&b, base, e, al,
                                                                      &e->groups[g], p, c),
                                         KNUT_OK);
                        assert_exists(b.data);
                    }
                }
            }
        }
    }
    knut_buf_reset(&b);
    return files;
}

static void test_graphar_layout__corpus_files_exist(void **state)
{
    (void)state;
    static const char *const data_graphs[] = {
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
        /* Not java/ldbc_sample: its data dirs are symlinks upstream, but
         * plain files holding the link target in the shared copy. */
    };
    size_t total = 0;
    for (size_t i = 0; i < sizeof data_graphs / sizeof data_graphs[0]; i++) {
        knut_graphar_graph_info *gi = load(data_graphs[i]);
        size_t n = walk_graph(gi);
        assert_true(n > 10);
        total += n;
        knut_graphar_graph_info_free(gi);
    }
    assert_true(total > 500);
}

static void test_graphar_layout__named_paths(void **state)
{
    (void)state;
    knut_graphar_graph_info *gi = load("ldbc_sample/parquet/ldbc_sample.graph.yml");
    knut_graphar_vertex_info *v = gi->vertices[0];
    knut_graphar_edge_info *e = gi->edges[0];
    const knut_graphar_adj_list *obs =
        knut_graphar_edge_info_adj_list(e, KNUT_GRAPHAR_ORDERED_BY_SOURCE);
    const knut_graphar_adj_list *obd =
        knut_graphar_edge_info_adj_list(e, KNUT_GRAPHAR_ORDERED_BY_DEST);
    const knut_graphar_adj_list *ubs =
        knut_graphar_edge_info_adj_list(e, KNUT_GRAPHAR_UNORDERED_BY_SOURCE);
    knut_buf b = KNUT_BUF_INIT;

    assert_int_equal(knut_graphar_path_edge_chunk(&b, NULL, e, obs, &e->groups[0], 2, 1), KNUT_OK);
    assert_string_equal(b.data, "edge/person_knows_person/ordered_by_source/creationDate/part2/"
                                "chunk1");
    knut_buf_clear(&b);
    assert_int_equal(knut_graphar_path_edge_chunk(&b, gi->prefix, e, obs, &e->groups[0], 2, 1),
                     KNUT_OK);
    assert_string_equal(b.data, GAR_CORPUS "/ldbc_sample/parquet/edge/person_knows_person/"
                                           "ordered_by_source/creationDate/part2/chunk1");
    assert_exists(b.data);
    knut_buf_clear(&b);
    knut_graphar_path_adj_chunk(&b, NULL, e, ubs, 9, 0);
    assert_string_equal(b.data, "edge/person_knows_person/unordered_by_source/adj_list/part9/"
                                "chunk0");
    knut_buf_clear(&b);
    knut_graphar_path_offset_chunk(&b, NULL, e, obd, 3);
    assert_string_equal(b.data, "edge/person_knows_person/ordered_by_dest/offset/chunk3");
    knut_buf_clear(&b);
    /* Unordered adj lists have no offsets. */
    assert_int_equal(knut_graphar_path_offset_chunk(&b, NULL, e, ubs, 0), KNUT_EINVAL);
    knut_graphar_path_edge_count(&b, NULL, e, obd, 7);
    assert_string_equal(b.data, "edge/person_knows_person/ordered_by_dest/edge_count7");
    knut_buf_clear(&b);
    knut_graphar_path_aligned_vertex_count(&b, NULL, e, obd);
    assert_string_equal(b.data, "edge/person_knows_person/ordered_by_dest/vertex_count");
    knut_buf_clear(&b);
    knut_graphar_path_adj_list_dir(&b, "/data/g", e, obd); /* base gets its '/' */
    assert_string_equal(b.data, "/data/g/edge/person_knows_person/ordered_by_dest/");
    knut_buf_clear(&b);
    knut_graphar_path_vertex_group(&b, NULL, v, &v->groups[1]);
    assert_string_equal(b.data, "vertex/person/firstName_lastName_gender/");
    knut_buf_clear(&b);
    knut_graphar_path_vertex_chunk(&b, NULL, v, &v->groups[0], 12);
    assert_string_equal(b.data, "vertex/person/id/chunk12");
    knut_buf_clear(&b);
    assert_int_equal(knut_graphar_path_vertex_chunk(&b, NULL, v, &v->groups[0], -1), KNUT_EINVAL);
    assert_int_equal(knut_graphar_path_vertex_count(&b, NULL, NULL), KNUT_EINVAL);

    /* The count files of ldbc_sample person: 87 03 00 ... = 903. */
    knut_graphar_path_vertex_count(&b, gi->prefix, v);
    assert_int_equal(read_count(&b), 903);
    knut_buf_reset(&b);
    knut_graphar_graph_info_free(gi);

    /* Labels: ldbc/parquet organisation, and the unnormalised prefix rule. */
    gi = load("ldbc/parquet/ldbc.graph.yml");
    v = knut_graphar_graph_info_vertex(gi, "organisation");
    knut_graphar_path_label_chunk(&b, gi->prefix, v, 1);
    assert_string_equal(b.data, GAR_CORPUS "/ldbc/parquet/vertex/organisation/labels/chunk1");
    assert_exists(b.data);
    knut_buf_clear(&b);
    free(v->prefix);
    v->prefix = strdup("vertex/organisation");
    knut_graphar_path_label_chunk(&b, NULL, v, 0);
    assert_string_equal(b.data, "vertex/organisationlabels/chunk0");
    knut_buf_clear(&b);
    knut_graphar_path_vertex_count(&b, NULL, v);
    assert_string_equal(b.data, "vertex/organisation/vertex_count");
    knut_buf_clear(&b);
    /* An edge prefix without '/' (as in this corpus graph) still joins. */
    e = knut_graphar_graph_info_edge(gi, "organisation", "isLocatedIn", "place");
    knut_graphar_path_adj_chunk(&b, NULL, e, &e->adj_lists[0], 0, 0);
    assert_string_equal(b.data, "edge/organisation_isLocatedIn_place/ordered_by_dest/adj_list/"
                                "part0/chunk0");
    knut_buf_reset(&b);
    knut_graphar_graph_info_free(gi);

    /* The fourth kind: unordered_by_dest (metadata only in the corpus). */
    gi = load("transformer/ldbc_sample.graph.yml");
    e = gi->edges[0];
    const knut_graphar_adj_list *ubd =
        knut_graphar_edge_info_adj_list(e, KNUT_GRAPHAR_UNORDERED_BY_DEST);
    assert_non_null(ubd);
    knut_graphar_path_edge_chunk(&b, NULL, e, ubd, &e->groups[0], 0, 4);
    assert_string_equal(b.data, "edge/person_knows_person/unordered_by_dest/creationDate/part0/"
                                "chunk4");
    assert_int_equal(knut_graphar_aligned_chunk_size(e, ubd->type), e->dst_chunk_size);
    assert_string_equal(knut_graphar_aligned_type(e, ubd->type), "person");
    knut_buf_reset(&b);
    knut_graphar_graph_info_free(gi);
}

static void test_graphar_layout__chunk_math(void **state)
{
    (void)state;
    assert_int_equal(knut_graphar_chunk_count(903, 100), 10);
    assert_int_equal(knut_graphar_chunk_count(900, 100), 9);
    assert_int_equal(knut_graphar_chunk_count(0, 100), 0);
    assert_int_equal(knut_graphar_chunk_count(5, 0), 0);
    assert_int_equal(knut_graphar_chunk_count(INT64_MAX, 2), INT64_MAX / 2 + 1);
    assert_int_equal(knut_graphar_chunk_rows(903, 100, 0), 100);
    assert_int_equal(knut_graphar_chunk_rows(903, 100, 9), 3);
    assert_int_equal(knut_graphar_chunk_rows(903, 100, 10), 0);
    assert_int_equal(knut_graphar_chunk_rows(900, 100, 8), 100);
    assert_int_equal(knut_graphar_chunk_rows(903, 100, -1), 0);
    /* ldbc_sample ordered_by_source part0: 667 edges, chunk size 1024. */
    assert_int_equal(knut_graphar_chunk_count(667, 1024), 1);
}

static void test_graphar_layout__count_files(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    char dir[] = "/tmp/knut_gar_count_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/vertex_count", dir);
    assert_int_equal(knut_graphar_count_write(path, 903, &err), KNUT_OK);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_size, 8);
    unsigned char raw[8];
    FILE *f = fopen(path, "rb");
    assert_int_equal(fread(raw, 1, 8, f), 8);
    fclose(f);
    const unsigned char want[8] = {0x87, 0x03, 0, 0, 0, 0, 0, 0};
    assert_memory_equal(raw, want, 8);
    int64_t v = 0;
    assert_int_equal(knut_graphar_count_read(path, &v, &err), KNUT_OK);
    assert_int_equal(v, 903);
    assert_int_equal(knut_graphar_count_write(path, INT64_C(0x0102030405060708), &err), KNUT_OK);
    assert_int_equal(knut_graphar_count_read(path, &v, &err), KNUT_OK);
    assert_int_equal(v, INT64_C(0x0102030405060708));
    assert_int_equal(knut_graphar_count_write(path, -1, &err), KNUT_EINVAL);

    /* Wrong sizes name the file and what was found. */
    f = fopen(path, "ab");
    fputc(0, f);
    fclose(f);
    assert_int_equal(knut_graphar_count_read(path, &v, &err), KNUT_EPARSE);
    assert_non_null(strstr(err.message, path));
    assert_non_null(strstr(err.message, "exactly 8 bytes"));
    assert_non_null(strstr(err.message, "found 9"));
    f = fopen(path, "wb");
    fputs("903\n", f);
    fclose(f);
    assert_int_equal(knut_graphar_count_read(path, &v, &err), KNUT_EPARSE);
    assert_non_null(strstr(err.message, "found 4"));
    f = fopen(path, "wb");
    fclose(f);
    assert_int_equal(knut_graphar_count_read(path, &v, &err), KNUT_EPARSE);
    assert_non_null(strstr(err.message, "found 0"));
    const unsigned char neg[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    assert_int_equal(knut_graphar_count_decode(neg, 8, "edge_count0", &v, &err), KNUT_EPARSE);
    assert_string_equal(err.message, "edge_count0: negative count -1");
    unsigned char enc[8];
    knut_graphar_count_encode(6626, enc);
    assert_int_equal(knut_graphar_count_decode(enc, 8, "x", &v, &err), KNUT_OK);
    assert_int_equal(v, 6626);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(knut_graphar_count_read(path, &v, &err), KNUT_ENOTFOUND);
    assert_non_null(strstr(err.message, path));
    snprintf(path, sizeof path, "%s/no/such/dir/edge_count0", dir);
    assert_int_equal(knut_graphar_count_write(path, 1, &err), KNUT_ENOTFOUND);
    /* a missing folder is a missing file, a folder is not a count file */
    assert_int_equal(knut_graphar_count_read(path, &v, &err), KNUT_ENOTFOUND);
    assert_int_equal(knut_graphar_count_read(dir, &v, &err), KNUT_EIO);
    assert_non_null(strstr(err.message, "not a regular file"));
    /* a negative count read from a file: the one reader hands it up raw,
     * count_read refuses it */
    snprintf(path, sizeof path, "%s/edge_count0", dir);
    f = fopen(path, "wb");
    assert_int_equal(fwrite(neg, 1, 8, f), 8);
    fclose(f);
    assert_int_equal(knut_graphar_count_read(path, &v, &err), KNUT_EPARSE);
    assert_non_null(strstr(err.message, "negative count -1"));
    assert_int_equal(unlink(path), 0);
    assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_graphar_layout__corpus_files_exist),
        cmocka_unit_test(test_graphar_layout__named_paths),
        cmocka_unit_test(test_graphar_layout__chunk_math),
        cmocka_unit_test(test_graphar_layout__count_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
