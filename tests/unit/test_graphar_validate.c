/*
 * Unit tests of the GraphAr validator. A tiny graph is built on disk per
 * test (infos saved with the library, chunks written by DuckDB COPY, count
 * files by knut_graphar_count_write), checked clean, then broken one way
 * at a time; info rules are driven by YAML text written to a temp dir,
 * which also exercises the load that survives broken files. The official
 * corpus is checked clean where it is present.
 */
#define _XOPEN_SOURCE 700 /* nftw, for removing the temp dirs */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "graphar_fixture.h"
#include "knut/duck.h"
#include "knut/graphar.h"

typedef struct fx {
    char dir[64];
    knut_duck_db *db;
    knut_duck_conn *conn;
} fx;

static int rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(p);
}

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    knut_error err = KNUT_ERROR_INIT;
    assert_non_null(f);
    snprintf(f->dir, sizeof f->dir, "/tmp/knut_gval_XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    assert_int_equal(knut_duck_db_open(&f->db, NULL, NULL, 0, &err), KNUT_OK);
    assert_int_equal(knut_duck_conn_open(&f->conn, f->db, &err), KNUT_OK);
    knut_log_set(KNUT_LOG_OFF, NULL, NULL);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    knut_duck_conn_close(f->conn);
    knut_duck_db_close(f->db);
    nftw(f->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(f);
    return 0;
}

/* f->dir + "/" + rel, in a static buffer (one at a time). */
static const char *at(const fx *f, const char *rel)
{
    static char buf[2][512];
    static int k;
    k ^= 1;
    snprintf(buf[k], sizeof buf[k], "%s/%s", f->dir, rel);
    return buf[k];
}

static void mkdirs_for(const char *path)
{
    char tmp[512];
    snprintf(tmp, sizeof tmp, "%s", path);
    for (char *p = tmp + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(tmp, 0755);
            *p = '/';
        }
}

static void write_file(const fx *f, const char *rel, const char *text)
{
    const char *path = at(f, rel);
    mkdirs_for(path);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

/* Raw little-endian bytes: count_write refuses negative values. */
static void write_raw_count(const fx *f, const char *rel, int64_t v)
{
    unsigned char b[8];
    uint64_t u = (uint64_t)v;
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(u >> (8 * i));
    FILE *fp = fopen(at(f, rel), "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(b, 1, 8, fp), 8);
    fclose(fp);
}

static void write_count(const fx *f, const char *rel, int64_t v)
{
    knut_error err = KNUT_ERROR_INIT;
    const char *path = at(f, rel);
    mkdirs_for(path);
    assert_int_equal(knut_graphar_count_write(path, v, &err), KNUT_OK);
}

/* COPY (SELECT <select>) TO dir/rel as Parquet. */
static void write_parquet(const fx *f, const char *rel, const char *select)
{
    char sql[2048];
    knut_error err = KNUT_ERROR_INIT;
    const char *path = at(f, rel);
    mkdirs_for(path);
    snprintf(sql, sizeof sql, "COPY (%s) TO '%s' (FORMAT parquet)", select, path);
    if (knut_duck_exec(f->conn, sql, &err) != KNUT_OK)
        fail_msg("%s: %s", sql, err.message);
}

/*
 * The tiny graph: vertex v (chunk 2, 3 vertices, group id: int64 primary),
 * edge v-e-v (chunk 2, ordered_by_source, group w: double) with edges
 * (0,1) (0,2) (1,2) | (2,0): part0 = 3 edges in chunk0 + chunk1, part1 = 1.
 */
static void build_tiny(const fx *f)
{
    knut_error err = KNUT_ERROR_INIT;
    knut_graphar_graph_info *gi = NULL;
    knut_graphar_vertex_info *vi = NULL;
    knut_graphar_edge_info *ei = NULL;
    knut_graphar_property_group *g = NULL;
    assert_int_equal(knut_graphar_graph_info_new(&gi, "tiny", NULL, &err), KNUT_OK);
    assert_int_equal(knut_graphar_vertex_info_new(&vi, "v", 2, "vertex/v/", &err), KNUT_OK);
    assert_int_equal(knut_graphar_vertex_info_add_group(vi, KNUT_GRAPHAR_FILE_PARQUET, NULL, &g,
                                                        &err), KNUT_OK);
    assert_int_equal(knut_graphar_group_add_property(g, "id", "int64", 1, 0,
                                                     KNUT_GRAPHAR_CARD_SINGLE, &err), KNUT_OK);
    assert_int_equal(knut_graphar_graph_info_add_vertex(gi, vi, NULL, &err), KNUT_OK);
    assert_int_equal(knut_graphar_edge_info_new(&ei, "v", "e", "v", 2, 2, 2, 1, "edge/v_e_v/",
                                                &err), KNUT_OK);
    assert_int_equal(knut_graphar_edge_info_add_adj_list(ei, KNUT_GRAPHAR_ORDERED_BY_SOURCE,
                                                         KNUT_GRAPHAR_FILE_PARQUET, NULL, &err),
                     KNUT_OK);
    assert_int_equal(knut_graphar_edge_info_add_group(ei, KNUT_GRAPHAR_FILE_PARQUET, NULL, &g,
                                                      &err), KNUT_OK);
    assert_int_equal(knut_graphar_group_add_property(g, "w", "double", 0, 1,
                                                     KNUT_GRAPHAR_CARD_SINGLE, &err), KNUT_OK);
    assert_int_equal(knut_graphar_graph_info_add_edge(gi, ei, NULL, &err), KNUT_OK);
    assert_int_equal(knut_graphar_graph_save_all(gi, f->dir, &err), KNUT_OK);
    knut_graphar_graph_info_free(gi);

    write_count(f, "vertex/v/vertex_count", 3);
    write_parquet(f, "vertex/v/id/chunk0",
                  "SELECT * FROM (VALUES (0::BIGINT, 100::BIGINT), (1, 101)) t(_graphArVertexIndex, id)");
    write_parquet(f, "vertex/v/id/chunk1",
                  "SELECT 2::BIGINT AS _graphArVertexIndex, 102::BIGINT AS id");
    const char *a = "edge/v_e_v/ordered_by_source/";
    char rel[256];
#define REL(x) (snprintf(rel, sizeof rel, "%s%s", a, (x)), rel)
    write_count(f, REL("vertex_count"), 3);
    write_count(f, REL("edge_count0"), 3);
    write_count(f, REL("edge_count1"), 1);
    write_parquet(f, REL("adj_list/part0/chunk0"),
                  "SELECT * FROM (VALUES (0::BIGINT, 1::BIGINT), (0, 2)) t(_graphArSrcIndex, "
                  "_graphArDstIndex)");
    write_parquet(f, REL("adj_list/part0/chunk1"),
                  "SELECT 1::BIGINT AS _graphArSrcIndex, 2::BIGINT AS _graphArDstIndex");
    write_parquet(f, REL("adj_list/part1/chunk0"),
                  "SELECT 2::BIGINT AS _graphArSrcIndex, 0::BIGINT AS _graphArDstIndex");
    write_parquet(f, REL("offset/chunk0"),
                  "SELECT * FROM (VALUES (0::BIGINT), (2), (3)) t(_graphArOffset)");
    /* Trimmed (vertices in part + 1), as ldbc_sample's last chunk. */
    write_parquet(f, REL("offset/chunk1"),
                  "SELECT * FROM (VALUES (0::BIGINT), (1)) t(_graphArOffset)");
    write_parquet(f, REL("w/part0/chunk0"), "SELECT * FROM (VALUES (0.5::DOUBLE), (1.5)) t(w)");
    write_parquet(f, REL("w/part0/chunk1"), "SELECT 2.5::DOUBLE AS w");
    write_parquet(f, REL("w/part1/chunk0"), "SELECT 3.5::DOUBLE AS w");
#undef REL
}

static knut_graphar_issues *run_path(const char *path, const knut_graphar_validate_options *o)
{
    knut_error err = KNUT_ERROR_INIT;
    knut_graphar_issues *is = NULL;
    if (knut_graphar_validate(path, o, &is, &err) != KNUT_OK)
        fail_msg("validate %s: %s", path, err.message);
    assert_non_null(is);
    return is;
}

static knut_graphar_issues *run_tiny(const fx *f)
{
    return run_path(at(f, "tiny.graph.yml"), NULL);
}

/* Issues with rule (and a file ending in suffix, if given). */
static size_t count_rule(const knut_graphar_issues *is, const char *rule, const char *suffix)
{
    size_t n = 0;
    for (size_t i = 0; i < is->n; i++) {
        const knut_graphar_issue *it = &is->items[i];
        size_t fl = strlen(it->file), sl = suffix ? strlen(suffix) : 0;
        if (strcmp(it->rule, rule) == 0 && (!suffix || (fl >= sl && !strcmp(it->file + fl - sl, suffix))))
            n++;
    }
    return n;
}

static void dump(const knut_graphar_issues *is)
{
    for (size_t i = 0; i < is->n; i++)
        print_message("  %s %s: %s: %s [%s]\n", knut_graphar_severity_name(is->items[i].severity),
                      is->items[i].file, is->items[i].field, is->items[i].message,
                      is->items[i].rule);
}

#define ASSERT_RULE(is, rule, suffix)                                  \
    do {                                                               \
        if (count_rule((is), (rule), (suffix)) == 0) {                 \
            dump(is);                                                  \
            fail_msg("no %s issue on ...%s", (rule), (suffix) ? (suffix) : ""); \
        }                                                              \
    } while (0)

/* ---- the tiny graph ------------------------------------------------------ */

static void test_graphar_validate__tiny_graph_is_clean(void **state)
{
    fx *f = *state;
    build_tiny(f);
    knut_graphar_issues *is = run_tiny(f);
    if (is->n)
        dump(is);
    assert_int_equal(is->n, 0);
    assert_int_equal(is->truncated, 0);
    knut_graphar_issues_free(is);

    /* The same through an info loaded by the caller. */
    knut_error err = KNUT_ERROR_INIT;
    knut_graphar_graph_info *gi = NULL;
    assert_int_equal(knut_graphar_graph_load(&gi, at(f, "tiny.graph.yml"), &err), KNUT_OK);
    assert_int_equal(knut_graphar_validate_graph(gi, NULL, &is, &err), KNUT_OK);
    assert_int_equal(is->n_errors, 0);
    knut_graphar_issues_free(is);
    knut_graphar_graph_info_free(gi);
}

static void test_graphar_validate__vertex_chunks(void **state)
{
    fx *f = *state;
    build_tiny(f);
    /* chunk0 gone while chunk1 exists: a gap; one row short: rows. */
    assert_int_equal(remove(at(f, "vertex/v/id/chunk0")), 0);
    write_parquet(f, "vertex/v/id/chunk2", "SELECT 4::BIGINT AS _graphArVertexIndex, 1::BIGINT AS id");
    knut_graphar_issues *is = run_tiny(f);
    ASSERT_RULE(is, "chunk.gap", "vertex/v/id/chunk0");
    ASSERT_RULE(is, "chunk.extra", "vertex/v/id/chunk2");
    assert_int_equal(count_rule(is, "chunk.missing", NULL), 0);
    knut_graphar_issues_free(is);

    write_parquet(f, "vertex/v/id/chunk0", "SELECT 0::BIGINT AS _graphArVertexIndex, 100::BIGINT AS id");
    write_count(f, "vertex/v/vertex_count", 5);
    is = run_tiny(f);
    ASSERT_RULE(is, "chunk.rows", "vertex/v/id/chunk0");
    ASSERT_RULE(is, "chunk.rows", "vertex/v/id/chunk1");
    ASSERT_RULE(is, "count.mismatch", "ordered_by_source/vertex_count");
    assert_int_equal(count_rule(is, "chunk.extra", NULL), 0); /* chunk2 is now expected */
    knut_graphar_issues_free(is);
}

static void test_graphar_validate__vertex_columns(void **state)
{
    fx *f = *state;
    build_tiny(f);
    write_parquet(f, "vertex/v/id/chunk0",
                  "SELECT * FROM (VALUES (0::BIGINT, 'a'), (5, NULL)) t(_graphArVertexIndex, id)");
    write_parquet(f, "vertex/v/id/chunk1", "SELECT 102::BIGINT AS id");
    knut_graphar_issues *is = run_tiny(f);
    ASSERT_RULE(is, "column.type_mismatch", "vertex/v/id/chunk0");
    ASSERT_RULE(is, "column.index_value", "vertex/v/id/chunk0");
    ASSERT_RULE(is, "column.null", "vertex/v/id/chunk0");
    ASSERT_RULE(is, "column.index_missing", "vertex/v/id/chunk1");
    assert_true(is->n_errors >= 3);
    knut_graphar_issues_free(is);
}

static void test_graphar_validate__count_files(void **state)
{
    fx *f = *state;
    build_tiny(f);
    write_file(f, "vertex/v/vertex_count", "1234567");
    write_raw_count(f, "edge/v_e_v/ordered_by_source/edge_count1", -1);
    assert_int_equal(remove(at(f, "edge/v_e_v/ordered_by_source/edge_count0")), 0);
    knut_graphar_issues *is = run_tiny(f);
    ASSERT_RULE(is, "count.size", "vertex/v/vertex_count");
    ASSERT_RULE(is, "count.negative", "ordered_by_source/edge_count1");
    ASSERT_RULE(is, "count.missing", "ordered_by_source/edge_count0");
    knut_graphar_issues_free(is);
}

static void test_graphar_validate__adjacency(void **state)
{
    fx *f = *state;
    build_tiny(f);
    const char *p0c1 = "edge/v_e_v/ordered_by_source/adj_list/part0/chunk1";
    /* chunk1 of part0 goes back to source 0 after chunk0's 1s: unsorted
     * across chunks, and dst 7 is out of range; part1 holds an edge of
     * source 0 (the wrong part). */
    write_parquet(f, "edge/v_e_v/ordered_by_source/adj_list/part0/chunk0",
                  "SELECT * FROM (VALUES (1::BIGINT, 0::BIGINT), (1, 2)) t(_graphArSrcIndex, "
                  "_graphArDstIndex)");
    write_parquet(f, p0c1, "SELECT 0::BIGINT AS _graphArSrcIndex, 7::BIGINT AS _graphArDstIndex");
    write_parquet(f, "edge/v_e_v/ordered_by_source/adj_list/part1/chunk0",
                  "SELECT 0::BIGINT AS _graphArSrcIndex, 0::BIGINT AS _graphArDstIndex");
    knut_graphar_issues *is = run_tiny(f);
    ASSERT_RULE(is, "adj.unsorted", p0c1);
    ASSERT_RULE(is, "adj.dst_range", p0c1);
    ASSERT_RULE(is, "adj.partition", "part1/chunk0");
    /* Degrees changed (vertex 0: 1, vertex 1: 2) while the offsets stayed. */
    ASSERT_RULE(is, "offset.degree", "ordered_by_source/offset/chunk0");
    knut_graphar_issues_free(is);
}

static void test_graphar_validate__offsets(void **state)
{
    fx *f = *state;
    build_tiny(f);
    const char *o0 = "edge/v_e_v/ordered_by_source/offset/chunk0";
    write_parquet(f, o0, "SELECT * FROM (VALUES (1::BIGINT), (3), (2)) t(_graphArOffset)");
    write_parquet(f, "edge/v_e_v/ordered_by_source/offset/chunk1",
                  "SELECT * FROM (VALUES (0::INTEGER), (1), (1), (1)) t(_graphArOffset)");
    knut_graphar_issues *is = run_tiny(f);
    ASSERT_RULE(is, "offset.first", o0);
    ASSERT_RULE(is, "offset.non_monotonic", o0);
    ASSERT_RULE(is, "offset.last", o0);
    ASSERT_RULE(is, "offset.length", "offset/chunk1");
    ASSERT_RULE(is, "offset.int32", "offset/chunk1");
    knut_graphar_issues_free(is);

    /* Padded is as good as trimmed; a missing one is an error. */
    write_parquet(f, o0, "SELECT * FROM (VALUES (0::BIGINT), (2), (3)) t(_graphArOffset)");
    write_parquet(f, "edge/v_e_v/ordered_by_source/offset/chunk1",
                  "SELECT * FROM (VALUES (0::BIGINT), (1), (1)) t(_graphArOffset)");
    is = run_tiny(f);
    assert_int_equal(is->n, 0);
    knut_graphar_issues_free(is);
    assert_int_equal(remove(at(f, "edge/v_e_v/ordered_by_source/offset/chunk1")), 0);
    is = run_tiny(f);
    ASSERT_RULE(is, "offset.missing", "offset/chunk1");
    knut_graphar_issues_free(is);
}

static void test_graphar_validate__edge_property_chunks(void **state)
{
    fx *f = *state;
    build_tiny(f);
    assert_int_equal(remove(at(f, "edge/v_e_v/ordered_by_source/w/part0/chunk1")), 0);
    write_parquet(f, "edge/v_e_v/ordered_by_source/w/part1/chunk0",
                  "SELECT * FROM (VALUES ('x'), ('y')) t(w)");
    knut_graphar_issues *is = run_tiny(f);
    ASSERT_RULE(is, "chunk.missing", "w/part0/chunk1");
    ASSERT_RULE(is, "chunk.rows", "w/part1/chunk0");
    ASSERT_RULE(is, "column.type_mismatch", "w/part1/chunk0");
    knut_graphar_issues_free(is);
}

static void test_graphar_validate__options(void **state)
{
    fx *f = *state;
    build_tiny(f);
    assert_int_equal(remove(at(f, "vertex/v/id/chunk0")), 0);
    assert_int_equal(remove(at(f, "vertex/v/id/chunk1")), 0);
    assert_int_equal(remove(at(f, "vertex/v/vertex_count")), 0);
    knut_graphar_validate_options o = KNUT_GRAPHAR_VALIDATE_OPTIONS_INIT;
    knut_graphar_issues *is = run_path(at(f, "tiny.graph.yml"), &o);
    ASSERT_RULE(is, "data.absent", "vertex/v/");
    assert_int_equal(is->n_errors, 0);
    knut_graphar_issues_free(is);
    o.require_data = 1;
    is = run_path(at(f, "tiny.graph.yml"), &o);
    ASSERT_RULE(is, "data.missing", "vertex/v/");
    knut_graphar_issues_free(is);
    o.require_data = 0;
    o.info_only = 1;
    is = run_path(at(f, "tiny.graph.yml"), &o);
    assert_int_equal(is->n, 0);
    knut_graphar_issues_free(is);

    /* The cap stops the run and says so. */
    write_count(f, "vertex/v/vertex_count", 20);
    o.info_only = 0;
    o.max_issues = 1;
    is = run_path(at(f, "tiny.graph.yml"), &o);
    assert_int_equal(is->n, 1);
    assert_int_equal(is->truncated, 1);
    knut_graphar_issues_free(is);

    /* data_dir: the data is elsewhere (here: nowhere). */
    o.max_issues = 0;
    o.data_dir = at(f, "elsewhere");
    is = run_path(at(f, "tiny.graph.yml"), &o);
    assert_int_equal(count_rule(is, "data.absent", NULL), 2);
    knut_graphar_issues_free(is);

    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_graphar_validate(NULL, NULL, &is, &err), KNUT_EINVAL);
    assert_int_equal(knut_graphar_validate(at(f, "tiny.graph.yml"), NULL, NULL, &err),
                     KNUT_EINVAL);
    o.version = 99;
    is = (knut_graphar_issues *)1;
    assert_int_equal(knut_graphar_validate(at(f, "tiny.graph.yml"), &o, &is, &err), KNUT_EINVAL);
    assert_null(is);
    knut_graphar_issues_free(NULL);
}

/* ---- info rules from YAML text ------------------------------------------ */

static void test_graphar_validate__info_rules(void **state)
{
    fx *f = *state;
    write_file(f, "g.graph.yml",
               "name: g\nprefix: data\nvertices:\n  - a.vertex.yml\n  - b.vertex.yml\n"
               "  - dup.vertex.yml\nedges:\n  - a_x_c.edge.yml\n  - a_y_a.edge.yml\n"
               "version: gar/v1\n");
    write_file(f, "a.vertex.yml",
               "type: a\nchunk_size: 10\nversion: gar/v1\nlabels: [l, l]\nproperty_groups:\n"
               "  - file_type: parquet\n    properties:\n"
               "      - {name: id, data_type: int64, is_primary: true, is_nullable: true}\n"
               "      - {name: k, data_type: string, is_primary: true}\n"
               "  - file_type: csv\n    properties:\n"
               "      - {name: id, data_type: int64, is_primary: false}\n"
               "      - {name: f, data_type: 'list<float>', is_primary: false}\n"
               "  - file_type: json\n    properties:\n"
               "      - {name: _graphArVertexIndex, data_type: int64, is_primary: false}\n"
               "  - file_type: parquet\n    properties: []\n");
    write_file(f, "b.vertex.yml", "type: b\nchunk_size: 5\nproperty_groups:\n"
                                  "  - file_type: parquet\n    properties:\n"
                                  "      - {name: n, data_type: string, is_primary: false}\n");
    write_file(f, "dup.vertex.yml", "type: a\nchunk_size: 10\nversion: gar/v1\n");
    write_file(f, "a_x_c.edge.yml",
               "src_type: a\nedge_type: x\ndst_type: c\nchunk_size: 4\nsrc_chunk_size: 9\n"
               "dst_chunk_size: 10\nversion: gar/v1\nadj_lists: []\n");
    write_file(f, "a_y_a.edge.yml",
               "src_type: a\nedge_type: y\ndst_type: a\nchunk_size: 4\nsrc_chunk_size: 10\n"
               "dst_chunk_size: 10\ndirected: true\nversion: gar/v1\nprefix: e\nadj_lists:\n"
               "  - {ordered: true, aligned_by: src, file_type: parquet}\n"
               "  - {ordered: true, aligned_by: source, file_type: parquet}\n"
               "  - {ordered: true, aligned_by: dst, file_type: parquet}\n");
    knut_graphar_validate_options o = KNUT_GRAPHAR_VALIDATE_OPTIONS_INIT;
    o.info_only = 1;
    knut_graphar_issues *is = run_path(at(f, "g.graph.yml"), &o);
    const char *const want[][2] = {
        {"prefix.no_slash", "g.graph.yml"},           {"property.duplicate", "a.vertex.yml"},
        {"property.primary_multiple", "a.vertex.yml"}, {"property.primary_nullable", "a.vertex.yml"},
        {"label.duplicate", "a.vertex.yml"},          {"csv.list", "a.vertex.yml"},
        {"file_type.json", "a.vertex.yml"},           {"property.reserved", "a.vertex.yml"},
        {"group.empty", "a.vertex.yml"},              {"version.missing", "b.vertex.yml"},
        {"property.primary_missing", "b.vertex.yml"}, {"vertex.duplicate", "dup.vertex.yml"},
        {"edge.vertex_type_missing", "a_x_c.edge.yml"}, {"edge.chunk_size_mismatch", "a_x_c.edge.yml"},
        {"edge.directed_missing", "a_x_c.edge.yml"},  {"adj_list.none", "a_x_c.edge.yml"},
        {"adj_list.duplicate", "a_y_a.edge.yml"},     {"adj_list.aligned_by", "a_y_a.edge.yml"},
        {"prefix.no_slash", "a_y_a.edge.yml"},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        ASSERT_RULE(is, want[i][0], want[i][1]);
    /* Positions come from the YAML. */
    for (size_t i = 0; i < is->n; i++)
        if (!strcmp(is->items[i].rule, "property.duplicate"))
            assert_int_equal(is->items[i].line, 12);
    knut_graphar_issues_free(is);
}

static void test_graphar_validate__broken_files_do_not_hide_the_rest(void **state)
{
    fx *f = *state;
    write_file(f, "g.graph.yml",
               "name: g\nvertices:\n  - t.vertex.yml\n  - v.vertex.yml\n  - gone.vertex.yml\n"
               "  - y.vertex.yml\n  - ok.vertex.yml\nedges:\n  - e.edge.yml\nversion: gar/v1\n");
    write_file(f, "t.vertex.yml", "type: t\nchunk_size: 1\nproperty_groups:\n"
                                  "  - file_type: parquet\n    properties:\n"
                                  "      - {name: p, data_type: uuid, is_primary: true}\n"
                                  "  - file_type: feather\n    properties:\n"
                                  "      - {name: q, data_type: int64, cardinality: bag}\n");
    write_file(f, "v.vertex.yml", "type: v\nchunk_size: 0\nversion: gar/v9\n");
    write_file(f, "y.vertex.yml", "type: [unclosed\n");
    write_file(f, "ok.vertex.yml", "type: ok\nchunk_size: 1\nversion: gar/v1\n");
    write_file(f, "e.edge.yml",
               "src_type: t\nedge_type: e\ndst_type: nobody\nchunk_size: 4\nsrc_chunk_size: 1\n"
               "dst_chunk_size: 1\ndirected: false\nversion: gar/v1\nadj_lists:\n"
               "  - {ordered: false, aligned_by: src, file_type: parquet}\n"
               "property_groups:\n  - file_type: parquet\n    properties:\n"
               "      - {name: w, data_type: double, cardinality: list}\n");
    knut_graphar_issues *is = run_path(at(f, "g.graph.yml"), NULL);
    ASSERT_RULE(is, "type.unknown", "t.vertex.yml");
    ASSERT_RULE(is, "file_type.unknown", "t.vertex.yml");
    ASSERT_RULE(is, "cardinality.unknown", "t.vertex.yml");
    ASSERT_RULE(is, "chunk_size.invalid", "v.vertex.yml");
    ASSERT_RULE(is, "version.bad", "v.vertex.yml");
    ASSERT_RULE(is, "info.unreadable", "gone.vertex.yml");
    ASSERT_RULE(is, "yaml.parse", "y.vertex.yml");
    ASSERT_RULE(is, "cardinality.edge", "e.edge.yml");
    /* ok loaded and was checked (it has no data). */
    ASSERT_RULE(is, "data.absent", "/ok/"); /* the reference's default prefix <type>/ */
    assert_int_equal(count_rule(is, "info.load", NULL), 0);
    for (size_t i = 0; i < is->n; i++)
        if (!strcmp(is->items[i].rule, "type.unknown"))
            assert_int_equal(is->items[i].line, 6);
    knut_graphar_issues_free(is);

    knut_error err = KNUT_ERROR_INIT;
    knut_graphar_graph_info *gi = NULL;
    write_file(f, "bad.graph.yml", "name: g\nversion: 2\nvertices: 3\n");
    is = run_path(at(f, "bad.graph.yml"), NULL);
    ASSERT_RULE(is, "version.bad", "bad.graph.yml");
    knut_graphar_issues_free(is);
    /* A vertex YAML given as the graph: loads as an empty graph. */
    write_file(f, "v.graph.yml", "type: t\nchunk_size: 1\nversion: gar/v1\n");
    is = run_path(at(f, "v.graph.yml"), NULL);
    ASSERT_RULE(is, "graph.empty", "v.graph.yml");
    knut_graphar_issues_free(is);
    write_file(f, "list.graph.yml", "- a\n- b\n");
    is = run_path(at(f, "list.graph.yml"), NULL);
    ASSERT_RULE(is, "yaml.parse", "list.graph.yml");
    assert_int_equal(knut_graphar_graph_load(&gi, at(f, "list.graph.yml"), &err), KNUT_EINVAL);
    knut_graphar_issues_free(is);
}

/* ---- the rule table and the corpus --------------------------------------- */

static void test_graphar_validate__rule_table(void **state)
{
    (void)state;
    size_t n = 0;
    const knut_graphar_rule *r = knut_graphar_validate_rules(&n);
    assert_true(n >= 60);
    for (size_t i = 0; i < n; i++) {
        assert_non_null(strchr(r[i].id, '.'));
        assert_true(strlen(r[i].meaning) > 10);
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(r[i].id, r[j].id);
    }
    assert_string_equal(knut_graphar_severity_name(KNUT_GRAPHAR_SEV_ERROR), "error");
    assert_string_equal(knut_graphar_severity_name(KNUT_GRAPHAR_SEV_WARNING), "warning");
}

static void test_graphar_validate__corpus_is_clean(void **state)
{
    (void)state;
    static const char *const graphs[] = {
        "/ldbc_sample/parquet/ldbc_sample.graph.yml", "/ldbc_sample/csv/ldbc_sample.graph.yml",
        "/modern_graph/modern_graph.graph.yml",       "/neo4j/MovieGraph.graph.yml",
        "/ldbc/parquet/ldbc.graph.yml",
    };
    char path[512];
    snprintf(path, sizeof path, "%s%s", GAR_CORPUS, graphs[0]);
    if (access(path, R_OK) != 0)
        skip();
    for (size_t i = 0; i < sizeof graphs / sizeof graphs[0]; i++) {
        snprintf(path, sizeof path, "%s%s", GAR_CORPUS, graphs[i]);
        knut_graphar_issues *is = run_path(path, NULL);
        if (is->n_errors)
            dump(is);
        assert_int_equal(is->n_errors, 0);
        knut_graphar_issues_free(is);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_graphar_validate__tiny_graph_is_clean, setup, teardown),
        cmocka_unit_test_setup_teardown(test_graphar_validate__vertex_chunks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_graphar_validate__vertex_columns, setup, teardown),
        cmocka_unit_test_setup_teardown(test_graphar_validate__count_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_graphar_validate__adjacency, setup, teardown),
        cmocka_unit_test_setup_teardown(test_graphar_validate__offsets, setup, teardown),
        cmocka_unit_test_setup_teardown(test_graphar_validate__edge_property_chunks, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_graphar_validate__options, setup, teardown),
        cmocka_unit_test_setup_teardown(test_graphar_validate__info_rules, setup, teardown),
        cmocka_unit_test_setup_teardown(test_graphar_validate__broken_files_do_not_hide_the_rest,
                                        setup, teardown),
        cmocka_unit_test(test_graphar_validate__rule_table),
        cmocka_unit_test(test_graphar_validate__corpus_is_clean),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
