/*
 * Unit tests of edge delete sets (knut_graph_mutation_add_edge_delete_set):
 * binding errors, the FalkorDB query text and parameter rows, and the
 * embedded store applying them: composite endpoint keys, edge keys, a
 * missing edge, upsert + delete of one edge in one mutation, parallel
 * edges of other types and the endpoint vertices left alone, null keys.
 */
#include <stdio.h>

#include "graph_fixture.h"

/* A struct batch from a type string ('i' int64, 's' utf8) and row-major
 * cells (NULL = null) as text. */
static void mk(struct ArrowArrayStream *out, const char *types, const char *const *names,
               int nrows, const char *const *cells)
{
    int nc = (int)strlen(types);
    knut_arrow_builder *root = fx_col(KNUT_ARROW_STRUCT, "");
    for (int c = 0; c < nc; c++)
        OK(knut_arrow_builder_add_child(
            root, fx_col(types[c] == 'i' ? KNUT_ARROW_INT64 : KNUT_ARROW_UTF8, names[c]), &e_));
    for (int r = 0; r < nrows; r++) {
        for (int c = 0; c < nc; c++) {
            knut_arrow_builder *b = knut_arrow_builder_child(root, c);
            const char *v = cells[r * nc + c];
            if (!v)
                OK(knut_arrow_builder_append_null(b, &e_));
            else if (types[c] == 's')
                OK(knut_arrow_builder_append_bytes(b, v, strlen(v), &e_));
            else
                OK(knut_arrow_builder_append_int(b, strtoll(v, NULL, 10), &e_));
        }
        OK(knut_arrow_builder_finish_element(root, &e_));
    }
    fx_arr a;
    fx_finish(&a, root);
    fx_stream(out, &a);
}

static knut_graph_mutation *mut(void)
{
    knut_graph_mutation *m = NULL;
    OK(knut_graph_mutation_new(&m, &e_));
    return m;
}

/* The shapes used throughout: Person {id}, City {country, name}, and
 * (:Person)-[:T]->(:City) edges whose rows are (pid, country, city[, k]). */
static const char *const ID[] = {"id"};
static const char *const CITY_KEYS[] = {"country", "name"};
static const char *const PID[] = {"pid"};
static const char *const CCOLS[] = {"country", "city"};
static const char *const EK[] = {"role"};

static void add_people(knut_graph_mutation *m)
{
    static const char *const label[] = {"Person"}, *const cols[] = {"id", "nm"};
    static const char *const rows[] = {"1", "ann", "2", "bob"};
    knut_graph_vertex_set vs = KNUT_GRAPH_VERTEX_SET_INIT;
    vs.labels = label;
    vs.n_labels = 1;
    vs.keys = ID;
    vs.n_keys = 1;
    vs.all_props = 1;
    mk(&vs.stream, "is", cols, 2, rows);
    OK(knut_graph_mutation_add_vertex_set(m, &vs, &e_));
}

static void add_cities(knut_graph_mutation *m)
{
    static const char *const label[] = {"City"}, *const cols[] = {"country", "name", "pop"};
    static const char *const rows[] = {"fr", "paris", "2", "us", "paris", "1", "fr", "lyon", "3"};
    knut_graph_vertex_set vs = KNUT_GRAPH_VERTEX_SET_INIT;
    vs.labels = label;
    vs.n_labels = 1;
    vs.keys = CITY_KEYS;
    vs.n_keys = 2;
    vs.all_props = 1;
    mk(&vs.stream, "ssi", cols, 3, rows);
    OK(knut_graph_mutation_add_vertex_set(m, &vs, &e_));
}

/* Edge upserts of type `type`; with_key: a 4th column `role` is an edge key. */
static void add_edges(knut_graph_mutation *m, const char *type, int with_key, int nrows,
                      const char *const *rows)
{
    static const char *const cols[] = {"pid", "country", "city", "role"};
    knut_graph_edge_set es = KNUT_GRAPH_EDGE_SET_INIT;
    es.type = type;
    es.src = (knut_graph_endpoint){"Person", ID, PID, 1};
    es.dst = (knut_graph_endpoint){"City", CITY_KEYS, CCOLS, 2};
    es.keys = with_key ? EK : NULL;
    es.n_keys = with_key ? 1 : 0;
    mk(&es.stream, with_key ? "isss" : "iss", cols, nrows, rows);
    OK(knut_graph_mutation_add_edge_set(m, &es, &e_));
}

static knut_status add_edge_deletes(knut_graph_mutation *m, const char *type, int with_key,
                                    int nrows, const char *const *rows, knut_error *err)
{
    static const char *const cols[] = {"pid", "country", "city", "role"};
    knut_graph_edge_delete_set ds = KNUT_GRAPH_EDGE_DELETE_SET_INIT;
    ds.type = type;
    ds.src = (knut_graph_endpoint){"Person", ID, PID, 1};
    ds.dst = (knut_graph_endpoint){"City", CITY_KEYS, CCOLS, 2};
    ds.keys = with_key ? EK : NULL;
    ds.n_keys = with_key ? 1 : 0;
    mk(&ds.stream, with_key ? "isss" : "iss", cols, nrows, rows);
    return knut_graph_mutation_add_edge_delete_set(m, &ds, err);
}

/* ---- mutation and Cypher --------------------------------------------------- */

static void test_query_text_and_params(void **state)
{
    (void)state;
    knut_graph_mutation *m = mut();
    static const char *const rows[] = {"1", "fr", "paris", "boss", "2", "us", "paris", "dev"};
    OK(add_edge_deletes(m, "WORKS_AT", 0, 2, rows, &e_));
    OK(add_edge_deletes(m, "WORKS_AT", 1, 2, rows, &e_));
    assert_int_equal(2, knut_graph_mutation_count(m, KNUT_GRAPH_SET_EDGE_DELETE));
    assert_int_equal(0, knut_graph_mutation_count(m, KNUT_GRAPH_SET_DELETE));
    knut_graph_set *set = knut_graph_mutation_get(m, KNUT_GRAPH_SET_EDGE_DELETE, 0);
    assert_string_equal("WORKS_AT", set->name);
    assert_int_equal(0, set->n_props);
    knut_buf b = KNUT_BUF_INIT;
    OK(knut_graph_cypher_query(&b, set, &e_));
    assert_string_equal("UNWIND $rows AS r MATCH (a:`Person` {`id`: r.s[0]})-[e:`WORKS_AT`]->"
                        "(b:`City` {`country`: r.d[0], `name`: r.d[1]}) DELETE e",
                        b.data);
    knut_buf_clear(&b);
    OK(knut_graph_cypher_query(&b, knut_graph_mutation_get(m, KNUT_GRAPH_SET_EDGE_DELETE, 1),
                               &e_));
    assert_string_equal("UNWIND $rows AS r MATCH (a:`Person` {`id`: r.s[0]})-[e:`WORKS_AT` "
                        "{`role`: r.k[0]}]->(b:`City` {`country`: r.d[0], `name`: r.d[1]}) "
                        "DELETE e",
                        b.data);
    /* values travel only in the parameter block */
    knut_buf_clear(&b);
    struct ArrowArray batch;
    knut_arrow_view v;
    int64_t n = 0;
    set = knut_graph_mutation_get(m, KNUT_GRAPH_SET_EDGE_DELETE, 1);
    OK(knut_graph_set_next(set, &batch, &e_));
    OK(knut_arrow_view_init(&v, &set->schema, &batch, &e_));
    OK(knut_graph_cypher_params(&b, set, &v, 0, 2, 0, 0, &n, &e_));
    assert_int_equal(2, n);
    assert_string_equal("CYPHER rows=[{s:[1],d:['fr','paris'],k:['boss']},"
                        "{s:[2],d:['us','paris'],k:['dev']}] ",
                        b.data);
    knut_arrow_view_reset(&v);
    knut_arrow_array_release(&batch);
    knut_buf_reset(&b);
    knut_graph_mutation_free(m);
}

static void test_bind_errors(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    knut_graph_mutation *m = mut();
    static const char *const rows[] = {"1", "fr", "paris"};
    /* a backtick in the type can never be quoted */
    assert_int_equal(KNUT_EINVAL, add_edge_deletes(m, "WORKS`AT", 0, 1, rows, &err));
    fx_expect_msg(&err, "edge delete set 'WORKS`AT'", "relationship type");
    /* an edge key column the stream does not have */
    static const char *const cols[] = {"pid", "country", "city"};
    knut_graph_edge_delete_set ds = KNUT_GRAPH_EDGE_DELETE_SET_INIT;
    ds.type = "W";
    ds.src = (knut_graph_endpoint){"Person", ID, PID, 1};
    ds.dst = (knut_graph_endpoint){"City", CITY_KEYS, CCOLS, 2};
    ds.keys = EK;
    ds.n_keys = 1;
    mk(&ds.stream, "iss", cols, 1, rows);
    assert_int_equal(KNUT_ENOTFOUND, knut_graph_mutation_add_edge_delete_set(m, &ds, &err));
    fx_expect_msg(&err, "edge delete set 'W'", "edge key column 'role' not found");
    /* an endpoint without keys */
    ds.keys = NULL;
    ds.n_keys = 0;
    ds.src = (knut_graph_endpoint){"Person", NULL, NULL, 0};
    mk(&ds.stream, "iss", cols, 1, rows);
    assert_int_equal(KNUT_EINVAL, knut_graph_mutation_add_edge_delete_set(m, &ds, &err));
    fx_expect_msg(&err, "source endpoint needs at least one key", NULL);
    assert_null(ds.stream.release); /* taken over, also on failure */
    assert_int_equal(0, knut_graph_mutation_count(m, KNUT_GRAPH_SET_EDGE_DELETE));
    /* a null endpoint key names the row */
    static const char *const bad[] = {"1", "fr", "paris", "2", NULL, "paris"};
    OK(add_edge_deletes(m, "W", 0, 2, bad, &e_));
    knut_graph_set *set = knut_graph_mutation_get(m, KNUT_GRAPH_SET_EDGE_DELETE, 0);
    struct ArrowArray batch;
    knut_arrow_view v;
    knut_buf b = KNUT_BUF_INIT;
    int64_t n = 0;
    OK(knut_graph_set_next(set, &batch, &e_));
    OK(knut_arrow_view_init(&v, &set->schema, &batch, &e_));
    assert_int_equal(KNUT_EINVAL, knut_graph_cypher_params(&b, set, &v, 0, 2, 0, 0, &n, &err));
    fx_expect_msg(&err, "row 1, column 'country'", "destination key is null");
    knut_arrow_view_reset(&v);
    knut_arrow_array_release(&batch);
    knut_buf_reset(&b);
    knut_graph_mutation_free(m);
}

/* ---- embedded store -------------------------------------------------------- */

/* First column of the first row of sql, as text. */
static char *q(knut_graph_store *s, const char *sql)
{
    struct ArrowArrayStream st;
    struct ArrowSchema schema;
    struct ArrowArray *arrays = NULL;
    int64_t n = 0;
    knut_arrow_view v;
    char buf[512] = "NULL";
    int64_t len = 0;
    OK(knut_graph_store_query(s, sql, &st, &e_));
    OK(knut_arrow_stream_collect(&st, &schema, &arrays, &n, 0, &e_));
    knut_arrow_stream_release(&st);
    assert_true(n >= 1);
    OK(knut_arrow_view_init(&v, &schema, &arrays[0], &e_));
    const knut_arrow_view *c = &v.children[0];
    if (knut_arrow_view_is_null(c, 0)) {
        /* keep "NULL" */
    } else if (c->type.type == KNUT_ARROW_UTF8 || c->type.type == KNUT_ARROW_LARGE_UTF8) {
        const char *p = knut_arrow_view_get_str(c, 0, &len);
        snprintf(buf, sizeof buf, "%.*s", (int)len, p);
    } else {
        snprintf(buf, sizeof buf, "%lld", (long long)knut_arrow_view_get_int64(c, 0));
    }
    knut_arrow_view_reset(&v);
    knut_arrow_arrays_free(arrays, n);
    knut_arrow_schema_release(&schema);
    return strdup(buf);
}

static void expect(knut_graph_store *s, const char *sql, const char *want)
{
    char *got = q(s, sql);
    if (strcmp(got, want) != 0)
        fail_msg("%s: got %s, want %s", sql, got, want);
    free(got);
}

static knut_status apply(knut_graph_store *s, knut_graph_mutation *m, knut_graph_sink_stats *st,
                         knut_error *err)
{
    knut_graph_sink_stats ignored;
    knut_status r = knut_graph_sink_apply(knut_graph_store_sink(s), m, NULL, st ? st : &ignored,
                                          err);
    knut_graph_mutation_free(m);
    return r;
}

/* Every WORKS_AT edge as "pid>country/city" in order, ';'-separated. */
#define WORKS_AT_EDGES                                                                     \
    "SELECT coalesce(string_agg(a.id || '>' || b.country || '/' || b.name, ';' ORDER BY "   \
    "a.id, b.country, b.name), '') FROM e_WORKS_AT e JOIN v_Person a ON a._knut_vid = "      \
    "e._knut_src JOIN v_City b ON b._knut_vid = e._knut_dst"

/* Ann works in fr/paris and us/paris, bob in fr/lyon and fr/paris; ann
 * also LIVES_IN fr/paris (a parallel edge of another type). */
static knut_graph_store *seeded(void)
{
    knut_graph_store *s;
    OK(knut_graph_store_open(&s, NULL, &e_));
    static const char *const works[] = {"1", "fr", "paris", "1", "us", "paris",
                                        "2", "fr", "lyon",  "2", "fr", "paris"};
    static const char *const lives[] = {"1", "fr", "paris"};
    knut_graph_mutation *m = mut();
    add_people(m);
    add_cities(m);
    add_edges(m, "WORKS_AT", 0, 4, works);
    add_edges(m, "LIVES_IN", 0, 1, lives);
    OK(apply(s, m, NULL, &e_));
    expect(s, WORKS_AT_EDGES, "1>fr/paris;1>us/paris;2>fr/lyon;2>fr/paris");
    return s;
}

static void test_store_composite_keys(void **state)
{
    (void)state;
    knut_graph_store *s = seeded();
    knut_graph_sink_stats st;
    /* us/paris differs from fr/paris only in the first key column; the
     * second row names the same edge twice */
    static const char *const del[] = {"1", "us", "paris", "2", "fr", "lyon", "2", "fr", "lyon"};
    knut_graph_mutation *m = mut();
    OK(add_edge_deletes(m, "WORKS_AT", 0, 3, del, &e_));
    OK(apply(s, m, &st, &e_));
    assert_int_equal(2, st.edges_deleted);
    assert_int_equal(0, st.vertices_deleted);
    assert_int_equal(3, st.rows);
    expect(s, WORKS_AT_EDGES, "1>fr/paris;2>fr/paris");
    /* the endpoints and the parallel LIVES_IN edge stay */
    expect(s, "SELECT count(*) FROM v_Person", "2");
    expect(s, "SELECT count(*) FROM v_City", "3");
    expect(s, "SELECT count(*) FROM e_LIVES_IN", "1");
    knut_graph_store_close(s);
}

static void test_store_missing_is_harmless(void **state)
{
    (void)state;
    knut_graph_store *s = seeded();
    knut_graph_sink_stats st;
    /* no such edge (1 -> fr/lyon), no such vertices (9, xx/yy) */
    static const char *const del[] = {"1", "fr", "lyon", "9", "fr", "paris", "1", "xx", "yy"};
    knut_graph_mutation *m = mut();
    OK(add_edge_deletes(m, "WORKS_AT", 0, 3, del, &e_));
    /* a type and a label the store has never seen */
    OK(add_edge_deletes(m, "NEVER_SEEN", 0, 3, del, &e_));
    knut_graph_edge_delete_set ds = KNUT_GRAPH_EDGE_DELETE_SET_INIT;
    ds.type = "WORKS_AT";
    ds.src = (knut_graph_endpoint){"Robot", ID, PID, 1};
    ds.dst = (knut_graph_endpoint){"City", CITY_KEYS, CCOLS, 2};
    static const char *const cols[] = {"pid", "country", "city"};
    mk(&ds.stream, "iss", cols, 1, del);
    OK(knut_graph_mutation_add_edge_delete_set(m, &ds, &e_));
    /* edge keys the stored type does not have: nothing can match */
    OK(add_edge_deletes(m, "WORKS_AT", 1, 0, del, &e_));
    OK(apply(s, m, &st, &e_));
    assert_int_equal(0, st.edges_deleted);
    expect(s, WORKS_AT_EDGES, "1>fr/paris;1>us/paris;2>fr/lyon;2>fr/paris");
    expect(s, "SELECT count(*) FROM duckdb_tables() WHERE table_name ILIKE '%never%'", "0");
    knut_graph_store_close(s);
}

static void test_store_upsert_then_delete(void **state)
{
    (void)state;
    knut_graph_store *s = seeded();
    knut_graph_sink_stats st;
    /* added first, but applied after the upsert of the same edge: the
     * mutation's order is by kind, not by the order sets were added */
    static const char *const edge[] = {"2", "us", "paris"};
    knut_graph_mutation *m = mut();
    OK(add_edge_deletes(m, "WORKS_AT", 0, 1, edge, &e_));
    add_edges(m, "WORKS_AT", 0, 1, edge);
    OK(apply(s, m, &st, &e_));
    assert_int_equal(1, st.edges_written);
    assert_int_equal(1, st.edges_deleted);
    expect(s, WORKS_AT_EDGES, "1>fr/paris;1>us/paris;2>fr/lyon;2>fr/paris");
    knut_graph_store_close(s);
}

static void test_store_edge_keys(void **state)
{
    (void)state;
    knut_graph_store *s;
    knut_graph_sink_stats st;
    OK(knut_graph_store_open(&s, NULL, &e_));
    /* two HOLDS edges between the same pair, told apart by `role` */
    static const char *const holds[] = {"1", "fr", "paris", "boss", "1", "fr", "paris", "dev",
                                        "2", "fr", "paris", "dev"};
    knut_graph_mutation *m = mut();
    add_people(m);
    add_cities(m);
    add_edges(m, "HOLDS", 1, 3, holds);
    OK(apply(s, m, NULL, &e_));
    expect(s, "SELECT count(*) FROM e_HOLDS", "3");
    /* with the edge key: only ann's dev edge */
    static const char *const one[] = {"1", "fr", "paris", "dev"};
    m = mut();
    OK(add_edge_deletes(m, "HOLDS", 1, 1, one, &e_));
    OK(apply(s, m, &st, &e_));
    assert_int_equal(1, st.edges_deleted);
    expect(s, "SELECT string_agg(role, ',' ORDER BY role) FROM e_HOLDS", "boss,dev");
    /* without it: every HOLDS edge between the pair */
    m = mut();
    OK(add_edge_deletes(m, "HOLDS", 0, 1, one, &e_));
    OK(apply(s, m, &st, &e_));
    assert_int_equal(1, st.edges_deleted);
    expect(s, "SELECT string_agg(role, ',' ORDER BY role) FROM e_HOLDS", "dev");
    knut_graph_store_close(s);
}

static void test_store_null_key_rolls_back(void **state)
{
    (void)state;
    knut_graph_store *s = seeded();
    knut_error err = KNUT_ERROR_INIT;
    static const char *const del[] = {"1", "fr", "paris", NULL, "fr", "lyon"};
    knut_graph_mutation *m = mut();
    OK(add_edge_deletes(m, "WORKS_AT", 0, 2, del, &e_));
    assert_int_equal(KNUT_EINVAL, apply(s, m, NULL, &err));
    fx_expect_msg(&err, "edge delete set 'WORKS_AT': row 1, column 'pid'", "source key is null");
    /* nothing of the mutation applied: the first row's edge is still there */
    expect(s, WORKS_AT_EDGES, "1>fr/paris;1>us/paris;2>fr/lyon;2>fr/paris");
    knut_graph_store_close(s);
}

/* Edge deletes run before vertex deletes; a vertex delete still removes
 * the edges no edge delete named. */
static void test_store_with_vertex_delete(void **state)
{
    (void)state;
    knut_graph_store *s = seeded();
    knut_graph_sink_stats st;
    static const char *const del[] = {"1", "fr", "paris"};
    static const char *const bob[] = {"2"};
    knut_graph_delete_set vd = KNUT_GRAPH_DELETE_SET_INIT;
    vd.label = "Person";
    vd.keys = ID;
    vd.n_keys = 1;
    mk(&vd.stream, "i", ID, 1, bob);
    knut_graph_mutation *m = mut();
    OK(knut_graph_mutation_add_delete_set(m, &vd, &e_));
    OK(add_edge_deletes(m, "WORKS_AT", 0, 1, del, &e_));
    OK(apply(s, m, &st, &e_));
    assert_int_equal(1, st.vertices_deleted);
    assert_int_equal(3, st.edges_deleted); /* 1 named + bob's 2 */
    expect(s, WORKS_AT_EDGES, "1>us/paris");
    knut_graph_store_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_query_text_and_params),
        cmocka_unit_test(test_bind_errors),
        cmocka_unit_test(test_store_composite_keys),
        cmocka_unit_test(test_store_missing_is_harmless),
        cmocka_unit_test(test_store_upsert_then_delete),
        cmocka_unit_test(test_store_edge_keys),
        cmocka_unit_test(test_store_null_key_rolls_back),
        cmocka_unit_test(test_store_with_vertex_delete),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
