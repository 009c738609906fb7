/*
 * The view SQL of a vertex type / an edge type's adj list
 * (knut_graphar_reader_vertices_sql / _edges_sql) against the streams of
 * the same reader part: for every type of several corpus graphs (Parquet
 * with labels and lists, CSV, JSON Lines, a graph without the vertex index
 * column, nulls, dates and timestamps) DuckDB runs the SQL and the rows
 * must be exactly the stream's, both ways (EXCEPT ALL). Also: the SQL is
 * accepted by duckdb_get_table_names (knut serve asks it about every
 * query over a view), ORC is refused naming a file, a type with no chunk
 * gives a typed empty SELECT.
 */
#include "graphar_read_fixture.h"

typedef struct ctx {
    knut_duck_db *db;
    knut_duck_conn *conn;
} ctx;

static void exec_ok(knut_duck_conn *conn, const char *sql)
{
    knut_error err = KNUT_ERROR_INIT;
    if (knut_duck_exec(conn, sql, &err) != KNUT_OK)
        fail_msg("%s\n-- %.2000s", err.message, sql);
}

/* view v (made from sql) holds exactly the rows of stream s */
static void same_rows(knut_duck_conn *conn, const char *what, const knut_buf *sql,
                      struct ArrowArrayStream *s)
{
    knut_error err = KNUT_ERROR_INIT;
    knut_buf q = KNUT_BUF_INIT;
    exec_ok(conn, "DROP VIEW IF EXISTS v; DROP TABLE IF EXISTS want");
    knut_buf_printf(&q, "CREATE VIEW v AS %s", sql->data);
    exec_ok(conn, q.data);
    if (knut_duck_register_stream(conn, "want", s, &err) != KNUT_OK)
        fail_msg("%s: %s", what, err.message);
    knut_buf_clear(&q);
    knut_buf_printf(&q, "SELECT CASE WHEN (SELECT count(*) FROM (SELECT * FROM v EXCEPT ALL "
                        "SELECT * FROM want)) + (SELECT count(*) FROM (SELECT * FROM want "
                        "EXCEPT ALL SELECT * FROM v)) > 0 OR (SELECT count(*) FROM v) = 0 "
                        "THEN error('%s: the view differs from the stream') END",
                    what);
    exec_ok(conn, q.data);
    /* what knut serve asks about a query over the view */
    knut_buf names = KNUT_BUF_INIT;
    size_t n = 0;
    if (knut_duck_table_names(conn, "SELECT count(*) FROM v", &names, &n, &err) != KNUT_OK)
        fail_msg("%s: duckdb_get_table_names refuses the view: %s", what, err.message);
    knut_buf_reset(&names);
    knut_buf_reset(&q);
}

/* only: one vertex type (and no edge), or NULL for every type */
static void check_graph(ctx *c, const char *rel, const char *only)
{
    knut_graphar_graph_info *gi = load_graph(rel);
    knut_error err = KNUT_ERROR_INIT;
    knut_graphar_reader *view = NULL, *stream = reader_for(gi, 0);
    assert_int_equal(knut_graphar_reader_new(&view, c->conn, knut_graphar_graph_data_dir(gi),
                                             NULL, &err),
                     KNUT_OK);
    for (size_t i = 0; i < gi->n_vertices; i++) {
        if (only && strcmp(only, gi->vertices[i]->type) != 0)
            continue;
        knut_buf sql = KNUT_BUF_INIT;
        struct ArrowArrayStream s = {0};
        if (knut_graphar_reader_vertices_sql(view, gi->vertices[i], &sql, &err) != KNUT_OK)
            fail_msg("%s %s: %s", rel, gi->vertices[i]->type, err.message);
        if (knut_graphar_reader_vertices(stream, gi->vertices[i], &s, &err) != KNUT_OK)
            fail_msg("%s: %s", rel, err.message);
        same_rows(c->conn, gi->vertices[i]->type, &sql, &s);
        knut_buf_reset(&sql);
    }
    for (size_t i = 0; !only && i < gi->n_edges; i++) {
        const knut_graphar_edge_info *ei = gi->edges[i];
        for (size_t a = 0; a < ei->n_adj_lists; a++) {
            knut_buf sql = KNUT_BUF_INIT;
            struct ArrowArrayStream s = {0};
            knut_graphar_adj_list_type t = ei->adj_lists[a].type;
            if (knut_graphar_reader_edges_sql(view, ei, t, &sql, &err) != KNUT_OK)
                fail_msg("%s %s: %s", rel, ei->edge_type, err.message);
            if (knut_graphar_reader_edges(stream, ei, t, &s, &err) != KNUT_OK)
                fail_msg("%s: %s", rel, err.message);
            same_rows(c->conn, ei->edge_type, &sql, &s);
            knut_buf_reset(&sql);
        }
    }
    knut_graphar_reader_free(view);
    knut_graphar_reader_free(stream);
    knut_graphar_graph_info_free(gi);
}

static int setup(void **state)
{
    ctx *c = calloc(1, sizeof *c);
    knut_error err = KNUT_ERROR_INIT;
    if (knut_duck_db_open(&c->db, NULL, NULL, 0, &err) != KNUT_OK ||
        knut_duck_conn_open(&c->conn, c->db, &err) != KNUT_OK)
        fail_msg("%s", err.message);
    *state = c;
    return 0;
}

static int teardown(void **state)
{
    ctx *c = *state;
    knut_duck_conn_close(c->conn);
    knut_duck_db_close(c->db);
    free(c);
    return 0;
}

static void test_views_equal_streams(void **state)
{
    static const char *const graphs[] = {
        "ldbc_sample/parquet/ldbc_sample.graph.yml",
        "ldbc_sample/csv/ldbc_sample.graph.yml",
        "ldbc_sample/json/LdbcSample.graph.yml",
        "ldbc_sample/parquet/ldbc_sample_with_feature.graph.yml",
        "ldbc_sample/parquet/ldbc_sample_date.graph.yml",
        "ldbc_sample/parquet/ldbc_sample_timestamp.graph.yml",
        "modern_graph/modern_graph.graph.yml",
        "neo4j/MovieGraph.graph.yml",
        "nebula/basketballplayergraph.graph.yml",
    };
    for (size_t i = 0; i < sizeof graphs / sizeof graphs[0]; i++)
        check_graph(*state, graphs[i], NULL);
    /* labels and list properties (the other types have no data) */
    check_graph(*state, "ldbc/parquet/ldbc.graph.yml", "organisation");
    check_graph(*state, "ldbc/parquet/ldbc.graph.yml", "person");
}

static void test_orc_refused(void **state)
{
    ctx *c = *state;
    knut_graphar_graph_info *gi = load_graph("ldbc_sample/orc/ldbc_sample.graph.yml");
    knut_error err = KNUT_ERROR_INIT;
    knut_graphar_reader *r = NULL;
    knut_buf sql = KNUT_BUF_INIT;
    assert_int_equal(knut_graphar_reader_new(&r, c->conn, knut_graphar_graph_data_dir(gi), NULL,
                                             &err),
                     KNUT_OK);
    assert_int_equal(knut_graphar_reader_vertices_sql(r, gi->vertices[0], &sql, &err),
                     KNUT_EUNSUPPORTED);
    assert_non_null(strstr(err.message, "ldbc_sample/orc/vertex/person/"));
    knut_buf_reset(&sql);
    knut_graphar_reader_free(r);
    knut_graphar_graph_info_free(gi);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_views_equal_streams, setup, teardown),
        cmocka_unit_test_setup_teardown(test_orc_refused, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
