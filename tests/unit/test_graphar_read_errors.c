/*
 * Unit tests of the chunk readers on bad and unusual input: ORC chunks,
 * truncated Parquet, missing chunk files, vertex index columns that
 * disagree, row counts that do not match the count files, renamed
 * columns, values that do not parse, CSV dialects and text encodings of
 * every type, a vertex type without property files, and the reader's
 * connection rules (one stream at a time, insertion order kept).
 */
#include "graphar_read_fixture.h"

#include <unistd.h>

/* Opens every vertex of type in the graph at dir/file; returns the status
 * of the open, or of the first failed get_next (err filled). */
static knut_status read_all(const char *dir, const char *file, const char *type,
                            int64_t *rows, knut_error *err)
{
    knut_graphar_graph_info *gi = load_path(dir, file);
    knut_graphar_reader *r = reader_for(gi, 0);
    struct ArrowArrayStream st = {0};
    knut_status s = knut_graphar_reader_vertices(r, knut_graphar_graph_info_vertex(gi, type), &st,
                                                 err);
    *rows = 0;
    while (s == KNUT_OK) {
        struct ArrowArray a;
        int rc = st.get_next(&st, &a);
        if (rc != 0) {
            s = knut_graphar_stream_status(&st, rc, err);
            break;
        }
        if (!a.release)
            break;
        *rows += a.length;
        a.release(&a);
    }
    knut_arrow_stream_release(&st);
    knut_graphar_reader_free(r);
    knut_graphar_graph_info_free(gi);
    return s;
}

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_graphar_read__orc_unsupported(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    int64_t rows;
    char dir[512];
    snprintf(dir, sizeof dir, "%s/ldbc_sample/orc", GAR_CORPUS);
    assert_int_equal(read_all(dir, "ldbc_sample.graph.yml", "person", &rows, &err),
                     KNUT_EUNSUPPORTED);
    assert_non_null(strstr(err.message, "ldbc_sample/orc/vertex/person/id/chunk0"));
    assert_non_null(strstr(err.message, "ORC chunks are not supported (DuckDB has no ORC reader)"));
}

static void test_graphar_read__truncated_parquet(void **state)
{
    (void)state;
    char *dir = scratch_copy("ldbc_sample/parquet");
    char path[1024];
    knut_error err = KNUT_ERROR_INIT;
    int64_t rows;
    snprintf(path, sizeof path, "%s/vertex/person/firstName_lastName_gender/chunk3", dir);
    assert_int_equal(truncate(path, 700), 0);
    knut_status st = read_all(dir, "ldbc_sample.graph.yml", "person", &rows, &err);
    assert_int_not_equal(st, KNUT_OK);
    assert_non_null(strstr(err.message, "firstName_lastName_gender/chunk3"));
    assert_int_equal(rows, 300); /* chunks 0..2 were read */
    /* The first chunk broken: the open fails. */
    snprintf(path, sizeof path, "%s/vertex/person/id/chunk0", dir);
    assert_int_equal(truncate(path, 10), 0);
    assert_int_not_equal(read_all(dir, "ldbc_sample.graph.yml", "person", &rows, &err), KNUT_OK);
    assert_non_null(strstr(err.message, "vertex/person/id/chunk0"));
    assert_int_equal(rows, 0);
    scratch_free(dir);
}

static void test_graphar_read__missing_files(void **state)
{
    (void)state;
    char *dir = scratch_copy("ldbc_sample/parquet");
    char path[1024];
    knut_error err = KNUT_ERROR_INIT;
    int64_t rows;
    snprintf(path, sizeof path, "%s/vertex/person/id/chunk5", dir);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(read_all(dir, "ldbc_sample.graph.yml", "person", &rows, &err),
                     KNUT_ENOTFOUND);
    assert_non_null(strstr(err.message, path)); /* before any row */
    /* An adj-list chunk and an edge count. */
    knut_graphar_graph_info *gi = load_path(dir, "ldbc_sample.graph.yml");
    const knut_graphar_edge_info *ei = knut_graphar_graph_info_edge(gi, "person", "knows",
                                                                    "person");
    knut_graphar_reader *r = reader_for(gi, 0);
    struct ArrowArrayStream st;
    snprintf(path, sizeof path, "%s/edge/person_knows_person/ordered_by_dest/adj_list/part2/chunk0",
             dir);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(knut_graphar_reader_edges(r, ei, KNUT_GRAPHAR_ORDERED_BY_DEST, &st, &err),
                     KNUT_ENOTFOUND);
    assert_non_null(strstr(err.message, path));
    snprintf(path, sizeof path, "%s/edge/person_knows_person/ordered_by_source/edge_count4", dir);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(knut_graphar_reader_adj_list(r, ei, KNUT_GRAPHAR_ORDERED_BY_SOURCE,
                                                  KNUT_GRAPHAR_ALL, KNUT_GRAPHAR_ALL, &st, &err),
                     KNUT_ENOTFOUND);
    assert_non_null(strstr(err.message, "edge_count4"));
    /* Without its count a single chunk is still readable. */
    if (knut_graphar_reader_adj_list(r, ei, KNUT_GRAPHAR_ORDERED_BY_SOURCE, 4, 0, &st, &err))
        fail_msg("%s", err.message);
    table t;
    table_read(&st, &t);
    assert_true(t.rows > 0);
    table_free(&t);
    knut_graphar_reader_free(r);
    knut_graphar_graph_info_free(gi);
    scratch_free(dir);
}

/* Chunks of one Parquet group written differently: chunk 1 without the
 * index column, chunk 2 with id as text (the reused schema must not be
 * trusted blindly). */
static void test_graphar_read__mixed_parquet_chunks(void **state)
{
    (void)state;
    char *dir = scratch_copy("ldbc_sample/parquet");
    char sql[4096];
    knut_duck_db *db = NULL;
    knut_duck_conn *conn = NULL;
    knut_error err = KNUT_ERROR_INIT;
    int64_t rows;
    assert_int_equal(knut_duck_db_open(&db, NULL, NULL, 0, &err), KNUT_OK);
    assert_int_equal(knut_duck_conn_open(&conn, db, &err), KNUT_OK);
    snprintf(sql, sizeof sql,
             "COPY (SELECT id FROM read_parquet('%s/vertex/person/id/chunk1')) TO "
             "'%s/c1' (FORMAT parquet);"
             "COPY (SELECT _graphArVertexIndex, id::VARCHAR AS id FROM "
             "read_parquet('%s/vertex/person/id/chunk2')) TO '%s/c2' (FORMAT parquet);",
             dir, dir, dir, dir);
    if (knut_duck_exec(conn, sql, &err) != KNUT_OK)
        fail_msg("%s", err.message);
    knut_duck_conn_close(conn);
    knut_duck_db_close(db);
    snprintf(sql, sizeof sql, "mv %s/c1 %s/vertex/person/id/chunk1 && mv %s/c2 "
             "%s/vertex/person/id/chunk2", dir, dir, dir, dir);
    assert_int_equal(system(sql), 0);
    if (read_all(dir, "ldbc_sample.graph.yml", "person", &rows, &err) != KNUT_OK)
        fail_msg("%s", err.message);
    assert_int_equal(rows, 903);
    knut_graphar_graph_info *gi = load_path(dir, "ldbc_sample.graph.yml");
    knut_graphar_reader *r = reader_for(gi, 0);
    struct ArrowArrayStream st;
    table t;
    assert_int_equal(knut_graphar_reader_vertices(r, knut_graphar_graph_info_vertex(gi, "person"),
                                                  &st, &err),
                     KNUT_OK);
    table_read(&st, &t);
    assert_string_equal(table_format(&t, "id"), "l");
    assert_int_equal(t_int(&t, "_graphArVertexIndex", 150), 150);
    assert_int_equal(t_int(&t, "id", 902), 32985348834100);
    table_free(&t);
    knut_graphar_reader_free(r);
    knut_graphar_graph_info_free(gi);
    scratch_free(dir);
}

static void test_graphar_read__index_and_count_mismatch(void **state)
{
    (void)state;
    char *dir = scratch_copy("ldbc_sample/csv");
    char path[1024];
    knut_error err = KNUT_ERROR_INIT;
    int64_t rows;
    /* chunk1 row 2 claims to be vertex 7 */
    snprintf(path, sizeof path, "%s/vertex/person/id/chunk1", dir);
    FILE *f = fopen(path, "r+");
    assert_non_null(f);
    char line[256];
    assert_non_null(fgets(line, sizeof line, f)); /* header */
    assert_non_null(fgets(line, sizeof line, f)); /* 100,... */
    long at = ftell(f);
    assert_non_null(fgets(line, sizeof line, f)); /* 101,... */
    assert_int_equal(strncmp(line, "101,", 4), 0);
    fseek(f, at, SEEK_SET);
    fputs("  7", f);
    fclose(f);
    assert_int_equal(read_all(dir, "ldbc_sample.graph.yml", "person", &rows, &err), KNUT_EINVAL);
    assert_non_null(strstr(err.message, "vertex/person/id/chunk1: _graphArVertexIndex is 7 at "
                                        "row 1, expected 101"));
    /* Restore it; now claim 905 vertices: the last chunk is 2 rows short. */
    f = fopen(path, "r+");
    fseek(f, at, SEEK_SET);
    fputs("101", f);
    fclose(f);
    snprintf(path, sizeof path, "%s/vertex/person/vertex_count", dir);
    assert_int_equal(knut_graphar_count_write(path, 905, &err), KNUT_OK);
    assert_int_equal(read_all(dir, "ldbc_sample.graph.yml", "person", &rows, &err), KNUT_EINVAL);
    assert_non_null(strstr(err.message, "3 rows, expected 5"));
    assert_non_null(strstr(err.message, "chunk9"));
    assert_int_equal(knut_graphar_count_write(path, 903, &err), KNUT_OK);
    /* A renamed column. */
    write_file(dir, "vertex/person/firstName_lastName_gender/chunk0",
               "_graphArVertexIndex,first,lastName,gender\n0,a,b,c\n");
    assert_int_equal(read_all(dir, "ldbc_sample.graph.yml", "person", &rows, &err), KNUT_EINVAL);
    assert_non_null(strstr(err.message, "no column 'firstName' (the file has: "
                                        "_graphArVertexIndex, first, lastName, gender)"));
    /* A value that is not an int64 (DuckDB's message, with the file). */
    write_file(dir, "vertex/person/firstName_lastName_gender/chunk0",
               "_graphArVertexIndex,firstName,lastName,gender\n0,a,b,c\n");
    write_file(dir, "vertex/person/id/chunk0", "_graphArVertexIndex,id\n0,abc\n");
    assert_int_not_equal(read_all(dir, "ldbc_sample.graph.yml", "person", &rows, &err), KNUT_OK);
    assert_non_null(strstr(err.message, "vertex/person/id/chunk0"));
    assert_non_null(strstr(err.message, "abc"));
    scratch_free(dir);
}

/* A hand-made graph: one vertex type with every type in CSV (both
 * dialects) and one without any property group. */
static char *make_typed_graph(void)
{
    char tmpl[] = "/tmp/knut_gread_XXXXXX";
    char cmd[1024];
    knut_error err = KNUT_ERROR_INIT;
    assert_non_null(mkdtemp(tmpl));
    snprintf(cmd, sizeof cmd, "mkdir -p %s/v/t/a %s/v/t/b %s/v/bare", tmpl, tmpl, tmpl);
    assert_int_equal(system(cmd), 0);
    write_file(tmpl, "g.graph.yml", "name: g\nvertices: [t.vertex.yml, bare.vertex.yml]\n"
                                    "version: gar/v1\n");
    write_file(tmpl, "t.vertex.yml",
               "type: t\nchunk_size: 2\nprefix: v/t/\nversion: gar/v1\nproperty_groups:\n"
               "  - file_type: csv\n    prefix: a/\n    properties:\n"
               "      - {name: s, data_type: string, is_primary: true}\n"
               "      - {name: i, data_type: int32, is_primary: false}\n"
               "      - {name: b, data_type: bool, is_primary: false}\n"
               "      - {name: f, data_type: float, is_primary: false}\n"
               "  - file_type: csv\n    prefix: b/\n    properties:\n"
               "      - {name: d, data_type: date, is_primary: false}\n"
               "      - {name: ts, data_type: timestamp, is_primary: false}\n"
               "      - {name: l, data_type: list<int64>, is_primary: false}\n");
    write_file(tmpl, "bare.vertex.yml", "type: bare\nchunk_size: 3000\nprefix: v/bare/\n");
    /* Arrow style: quoted header and strings; Spark style '|' without quotes. */
    write_file(tmpl, "v/t/a/chunk0",
               "\"_graphArVertexIndex\",\"s\",\"i\",\"b\",\"f\"\n"
               "0,\"say \"\"hi\"\", ok\",-7,true,1.5\n1,\"\",,false,\n");
    write_file(tmpl, "v/t/a/chunk1", "\"s\",\"i\",\"b\",\"f\"\n\"x\",2147483647,TRUE,-0.25\n");
    write_file(tmpl, "v/t/b/chunk0", "_graphArVertexIndex|d|ts|l\n"
                                     "0|2020-01-02|2020-01-01T10:00:00+02:00|[1, 2]\n"
                                     "1||2020-01-01 10:00:00.1239|[]\n");
    write_file(tmpl, "v/t/b/chunk1", "_graphArVertexIndex|d|ts|l\n2|1969-12-31|1000|\n");
    char path[1024];
    snprintf(path, sizeof path, "%s/v/t/vertex_count", tmpl);
    assert_int_equal(knut_graphar_count_write(path, 3, &err), KNUT_OK);
    snprintf(path, sizeof path, "%s/v/bare/vertex_count", tmpl);
    assert_int_equal(knut_graphar_count_write(path, 5000, &err), KNUT_OK);
    return strdup(tmpl);
}

static void test_graphar_read__csv_types(void **state)
{
    (void)state;
    char *dir = make_typed_graph();
    knut_graphar_graph_info *gi = load_path(dir, "g.graph.yml");
    knut_graphar_reader *r = reader_for(gi, 0);
    knut_error err = KNUT_ERROR_INIT;
    struct ArrowArrayStream st;
    table t;
    if (knut_graphar_reader_vertices(r, knut_graphar_graph_info_vertex(gi, "t"), &st, &err))
        fail_msg("%s", err.message);
    table_read(&st, &t);
    assert_int_equal(t.rows, 3);
    assert_string_equal(table_format(&t, "s"), "U");
    assert_string_equal(table_format(&t, "i"), "i");
    assert_string_equal(table_format(&t, "b"), "b");
    assert_string_equal(table_format(&t, "f"), "f");
    assert_string_equal(table_format(&t, "d"), "tdD");
    assert_string_equal(table_format(&t, "ts"), "tsm:");
    assert_string_equal(table_format(&t, "l"), "+l");
    assert_str_at(&t, "s", 0, "say \"hi\", ok");
    assert_false(t_null(&t, "s", 1)); /* an empty string stays "" */
    assert_str_at(&t, "s", 1, "");
    assert_int_equal(t_int(&t, "i", 0), -7);
    assert_true(t_null(&t, "i", 1));
    assert_int_equal(t_int(&t, "i", 2), 2147483647);
    assert_int_equal(t_int(&t, "b", 0), 1);
    assert_int_equal(t_int(&t, "b", 1), 0);
    assert_true(t_dbl(&t, "f", 2) == -0.25);
    assert_true(t_null(&t, "f", 1));
    assert_int_equal(t_int(&t, "d", 0), 18263);
    assert_true(t_null(&t, "d", 1));
    assert_int_equal(t_int(&t, "d", 2), -1);
    assert_int_equal(t_int(&t, "ts", 0), INT64_C(1577865600000)); /* 08:00 UTC */
    assert_int_equal(t_int(&t, "ts", 1), INT64_C(1577872800123)); /* truncated to ms */
    assert_int_equal(t_int(&t, "ts", 2), 1000);
    int64_t row = 0, start, end;
    const knut_arrow_view *v = table_at(&t, "l", &row);
    knut_arrow_view_list_range(v, row, &start, &end);
    assert_int_equal(end - start, 2);
    assert_int_equal(knut_arrow_view_get_int64(knut_arrow_view_child(v, 0), start + 1), 2);
    assert_true(t_null(&t, "l", 2));
    table_free(&t);

    /* No property files: the vertex index alone, in bounded batches. */
    assert_int_equal(knut_graphar_reader_vertices(r, knut_graphar_graph_info_vertex(gi, "bare"),
                                                  &st, &err),
                     KNUT_OK);
    table_read(&st, &t);
    assert_int_equal(t.rows, 5000);
    assert_int_equal(t.schema.n_children, 1);
    assert_int_equal(t_int(&t, "_graphArVertexIndex", 4999), 4999);
    assert_true(t.n >= 3);
    table_free(&t);
    knut_graphar_reader_free(r);
    knut_graphar_graph_info_free(gi);
    scratch_free(dir);
}

static void test_graphar_read__json_edges(void **state)
{
    (void)state;
    knut_graphar_graph_info *gi = load_graph("ldbc_sample/json/LdbcSample.graph.yml");
    const knut_graphar_edge_info *ei = knut_graphar_graph_info_edge(gi, "Person", "Knows",
                                                                    "Person");
    knut_graphar_reader *r = reader_for(gi, 0);
    knut_error err = KNUT_ERROR_INIT;
    struct ArrowArrayStream st;
    table t;
    assert_non_null(ei);
    assert_int_equal(knut_graphar_reader_edges(r, ei, KNUT_GRAPHAR_ORDERED_BY_DEST, &st, &err),
                     KNUT_OK);
    table_read(&st, &t);
    assert_int_equal(t.rows, 6626);
    assert_string_equal(table_format(&t, "creationDate"), "U");
    table_free(&t);
    assert_int_equal(knut_graphar_reader_offsets(r, ei, KNUT_GRAPHAR_ORDERED_BY_DEST, 9, &st,
                                                 &err),
                     KNUT_OK);
    table_read(&st, &t);
    assert_int_equal(t.rows, 101); /* padded, as Spark writes */
    table_free(&t);
    knut_graphar_reader_free(r);
    knut_graphar_graph_info_free(gi);
}

static void test_graphar_read__connection_rules(void **state)
{
    (void)state;
    knut_graphar_graph_info *gi = load_graph("modern_graph/modern_graph.graph.yml");
    const knut_graphar_vertex_info *vi = knut_graphar_graph_info_vertex(gi, "person");
    knut_duck_db *db = NULL;
    knut_duck_conn *conn = NULL;
    knut_graphar_reader *r = NULL;
    knut_error err = KNUT_ERROR_INIT;
    struct ArrowArrayStream a, b;
    table t;
    assert_int_equal(knut_duck_db_open(&db, NULL, NULL, 0, &err), KNUT_OK);
    assert_int_equal(knut_duck_conn_open(&conn, db, &err), KNUT_OK);
    assert_int_equal(knut_graphar_reader_new(&r, conn, knut_graphar_graph_data_dir(gi), NULL,
                                             &err),
                     KNUT_OK);
    assert_int_equal(knut_graphar_reader_vertices(r, vi, &a, &err), KNUT_OK);
    assert_int_equal(knut_graphar_reader_vertices(r, vi, &b, &err), KNUT_EAGAIN);
    table_read(&a, &t); /* released: the reader is free again */
    assert_int_equal(t.rows, 4);
    table_free(&t);
    assert_int_equal(knut_graphar_reader_vertices(r, vi, &b, &err), KNUT_OK);
    knut_arrow_stream_release(&b);
    knut_graphar_reader_free(r);
    /* A connection exporting large strings and large lists still gives
     * the reference's types (list offsets are narrowed). */
    knut_graphar_graph_info *ldbc = load_graph("ldbc/parquet/ldbc.graph.yml");
    assert_int_equal(knut_duck_exec(conn, "SET arrow_large_buffer_size = true", &err), KNUT_OK);
    assert_int_equal(knut_graphar_reader_new(&r, conn, knut_graphar_graph_data_dir(ldbc), NULL,
                                             &err),
                     KNUT_OK);
    assert_int_equal(knut_graphar_reader_vertices(r, knut_graphar_graph_info_vertex(ldbc,
                                                                                     "person"),
                                                  &a, &err),
                     KNUT_OK);
    table_read(&a, &t);
    assert_int_equal(t.rows, 1528);
    assert_string_equal(table_format(&t, "firstName"), "U");
    assert_string_equal(table_format(&t, "emails"), "+l");
    assert_string_equal(t.schema.children[table_col(&t, "emails")]->children[0]->format, "U");
    int64_t row = 1527, start, end, len;
    const knut_arrow_view *v = table_at(&t, "emails", &row);
    knut_arrow_view_list_range(v, row, &start, &end);
    assert_true(end > start);
    assert_non_null(knut_arrow_view_get_str(knut_arrow_view_child(v, 0), end - 1, &len));
    assert_true(len > 0);
    table_free(&t);
    knut_graphar_reader_free(r);
    knut_graphar_graph_info_free(ldbc);
    /* Without insertion order, rows would be shuffled: refused. */
    assert_int_equal(knut_duck_exec(conn, "SET preserve_insertion_order = false", &err), KNUT_OK);
    assert_int_equal(knut_graphar_reader_new(&r, conn, knut_graphar_graph_data_dir(gi), NULL,
                                             &err),
                     KNUT_OK);
    assert_int_equal(knut_graphar_reader_vertices(r, vi, &a, &err), KNUT_EINVAL);
    assert_non_null(strstr(err.message, "preserve_insertion_order"));
    knut_graphar_reader_free(r);
    knut_duck_conn_close(conn);
    knut_duck_db_close(db);
    /* Options with an unknown version are refused. */
    knut_graphar_read_options o = {99, 0};
    assert_int_equal(knut_graphar_reader_new(&r, NULL, NULL, &o, &err), KNUT_EINVAL);
    assert_null(r);
    knut_graphar_graph_info_free(gi);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_graphar_read__orc_unsupported),
        cmocka_unit_test(test_graphar_read__truncated_parquet),
        cmocka_unit_test(test_graphar_read__missing_files),
        cmocka_unit_test(test_graphar_read__mixed_parquet_chunks),
        cmocka_unit_test(test_graphar_read__index_and_count_mismatch),
        cmocka_unit_test(test_graphar_read__csv_types),
        cmocka_unit_test(test_graphar_read__json_edges),
        cmocka_unit_test(test_graphar_read__connection_rules),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
