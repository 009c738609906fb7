/*
 * Unit tests for the graph mutation model and the set-level renderer:
 * binding vertex, edge and delete sets to their stream's schema (and every
 * refusal naming set and column), stream ownership, reading batches, the
 * query text of each shape (byte-identical for different values), and
 * parameter blocks: exact rows, sliced batches, null keys, byte budgets.
 */
#include <stdio.h>

#include "graph/cypher_int.h"
#include "graph_fixture.h"

/* A people batch: id int64, name utf8, born date32, tags list<utf8>, w double.
 * Row i has id base + i; name NULL on row 2. */
static void people(fx_arr *a, int n, int base)
{
    knut_arrow_builder *id = fx_col(KNUT_ARROW_INT64, "id");
    knut_arrow_builder *name = fx_col(KNUT_ARROW_UTF8, "name");
    knut_arrow_builder *born = fx_col(KNUT_ARROW_DATE32, "born");
    knut_arrow_builder *tag = fx_col(KNUT_ARROW_UTF8, "item");
    knut_arrow_builder *tags = fx_nested(KNUT_ARROW_LIST, "tags", 1, tag);
    knut_arrow_builder *w = fx_col(KNUT_ARROW_DOUBLE, "w");
    knut_arrow_builder *root = fx_nested(KNUT_ARROW_STRUCT, "", 5, id, name, born, tags, w);
    for (int i = 0; i < n; i++) {
        char s[32];
        snprintf(s, sizeof(s), "p'%d", base + i);
        OK(knut_arrow_builder_append_int(id, base + i, &e_));
        if (i == 2)
            OK(knut_arrow_builder_append_null(name, &e_));
        else
            OK(knut_arrow_builder_append_str(name, s, &e_));
        OK(knut_arrow_builder_append_int(born, 18321 + i, &e_));
        OK(knut_arrow_builder_append_str(tag, "t", &e_));
        OK(knut_arrow_builder_finish_element(tags, &e_));
        OK(knut_arrow_builder_append_double(w, 0.5 * i, &e_));
        OK(knut_arrow_builder_finish_element(root, &e_));
    }
    fx_finish(a, root);
}

static knut_status add_people(knut_graph_mutation *m, int n, int base, const char *const *labels,
                              size_t n_labels, const char *const *props, size_t n_props,
                              knut_error *err)
{
    static const char *const keys[] = {"id"};
    fx_arr a;
    knut_graph_vertex_set vs = KNUT_GRAPH_VERTEX_SET_INIT;
    people(&a, n, base);
    fx_stream(&vs.stream, &a);
    vs.labels = labels;
    vs.n_labels = n_labels;
    vs.keys = keys;
    vs.n_keys = 1;
    vs.props = props;
    vs.n_props = n_props;
    vs.all_props = props == NULL;
    knut_status st = knut_graph_mutation_add_vertex_set(m, &vs, err);
    assert_null(vs.stream.release); /* taken over in every case */
    return st;
}

static char *query_of(knut_graph_set *set)
{
    knut_buf b = KNUT_BUF_INIT;
    OK(knut_graph_cypher_query(&b, set, &e_));
    return knut_buf_detach(&b, NULL);
}

/* Reads the set's only batch and renders rows [from, to) with a budget. */
static char *params_of(knut_graph_set *set, int64_t from, int64_t to, size_t budget,
                       int64_t *n_rows, knut_status *st, knut_error *err)
{
    struct ArrowArray batch;
    knut_arrow_view v;
    knut_buf b = KNUT_BUF_INIT;
    OK(knut_graph_set_next(set, &batch, &e_));
    assert_non_null(batch.release);
    OK(knut_arrow_view_init(&v, &set->schema, &batch, &e_));
    knut_buf_puts(&b, "keep|");
    *st = knut_graph_cypher_params(&b, set, &v, from, to, 100, budget, n_rows, err);
    knut_arrow_view_reset(&v);
    knut_arrow_array_release(&batch);
    if (*st != KNUT_OK)
        assert_string_equal("keep|", b.data); /* out left as it was */
    char *s = knut_buf_detach(&b, NULL);
    memmove(s, s + 5, strlen(s + 5) + 1);
    return s;
}

static void test_graph_mutation__vertex_query_text(void **state)
{
    (void)state;
    static const char *const labels[] = {"Person", "Hu man"};
    knut_graph_mutation *m;
    OK(knut_graph_mutation_new(&m, &e_));
    OK(add_people(m, 3, 1, labels, 2, NULL, 0, &e_));
    assert_int_equal(1, knut_graph_mutation_count(m, KNUT_GRAPH_SET_VERTEX));
    knut_graph_set *set = knut_graph_mutation_get(m, KNUT_GRAPH_SET_VERTEX, 0);
    assert_string_equal("Person", set->name);
    assert_int_equal(4, set->n_props); /* every non-key column */
    assert_int_equal(KNUT_GRAPH_CONV_DATE, set->props[1].conv);
    char *q = query_of(set);
    assert_string_equal("UNWIND $rows AS r MERGE (n:`Person` {`id`: r.k[0]}) SET n:`Hu man` "
                        "SET n += r.p SET n.`born` = date(r.t[0])",
                        q);

    /* same shape, other values and row counts: byte-identical text */
    knut_graph_mutation *m2;
    OK(knut_graph_mutation_new(&m2, &e_));
    OK(add_people(m2, 7, 1000, labels, 2, NULL, 0, &e_));
    char *q2 = query_of(knut_graph_mutation_get(m2, KNUT_GRAPH_SET_VERTEX, 0));
    assert_string_equal(q, q2);
    free(q2);
    free(q);
    knut_graph_mutation_free(m2);

    /* a shape with temporal properties only has no `SET n += r.p` */
    static const char *const born[] = {"born"};
    OK(add_people(m, 1, 1, labels, 1, born, 1, &e_));
    q = query_of(knut_graph_mutation_get(m, KNUT_GRAPH_SET_VERTEX, 1));
    assert_string_equal("UNWIND $rows AS r MERGE (n:`Person` {`id`: r.k[0]}) "
                        "SET n.`born` = date(r.t[0])",
                        q);
    free(q);
    knut_graph_mutation_free(m);
}

static void test_graph_mutation__vertex_params(void **state)
{
    (void)state;
    static const char *const labels[] = {"P"};
    knut_graph_mutation *m;
    int64_t n;
    knut_status st;
    OK(knut_graph_mutation_new(&m, &e_));
    OK(add_people(m, 3, 1, labels, 1, NULL, 0, &e_));
    char *p = params_of(knut_graph_mutation_get(m, KNUT_GRAPH_SET_VERTEX, 0), 1, 3, 0, &n, &st,
                        NULL);
    assert_int_equal(KNUT_OK, st);
    assert_int_equal(2, n);
    assert_string_equal("CYPHER rows=["
                        "{k:[2],p:{`name`:'p\\'2',`tags`:['t'],`w`:0.5},t:['2020-03-01']},"
                        "{k:[3],p:{`name`:null,`tags`:['t'],`w`:1.0},t:['2020-03-02']}] ",
                        p);
    free(p);
    knut_graph_mutation_free(m);
}

static void test_graph_mutation__params_budget(void **state)
{
    (void)state;
    static const char *const labels[] = {"P"};
    knut_graph_mutation *m;
    int64_t n;
    knut_status st;
    knut_error err = KNUT_ERROR_INIT;
    OK(knut_graph_mutation_new(&m, &e_));
    for (int i = 0; i < 4; i++)
        OK(add_people(m, 5, 10, labels, 1, NULL, 0, &e_));
    char *all = params_of(knut_graph_mutation_get(m, KNUT_GRAPH_SET_VERTEX, 0), 0, 5, 0, &n,
                          &st, NULL);
    assert_int_equal(5, n);
    /* a budget one byte short of everything: four rows fit */
    char *part = params_of(knut_graph_mutation_get(m, KNUT_GRAPH_SET_VERTEX, 1), 0, 5,
                           strlen(all) - 1, &n, &st, NULL);
    assert_int_equal(KNUT_OK, st);
    assert_int_equal(4, n);
    assert_true(strlen(part) <= strlen(all) - 1);
    assert_string_equal("] ", part + strlen(part) - 2);
    assert_memory_equal(all, part, strlen(part) - 2); /* same rows, same bytes */
    free(part);
    /* a budget too small for the first row names it (rows count from 100) */
    part = params_of(knut_graph_mutation_get(m, KNUT_GRAPH_SET_VERTEX, 2), 2, 5, 40, &n, &st,
                     &err);
    assert_null(part == NULL ? NULL : (free(part), NULL));
    assert_int_equal(KNUT_ETOOBIG, st);
    fx_expect_msg(&err, "set 'P': row 102 alone needs", "40-byte budget");
    /* from == to renders an empty block */
    part = params_of(knut_graph_mutation_get(m, KNUT_GRAPH_SET_VERTEX, 3), 3, 3, 0, &n, &st,
                     NULL);
    assert_int_equal(0, n);
    assert_string_equal("CYPHER rows=[] ", part);
    free(part);
    free(all);
    knut_graph_mutation_free(m);
}

/* A set over columns k (int64, null on row 1) and l (list<int64> with a
 * null item on row 2), to check refusals name row and column. */
static void test_graph_mutation__params_refusals(void **state)
{
    (void)state;
    static const char *const labels[] = {"L"};
    static const char *const keys[] = {"k"};
    knut_arrow_builder *k = fx_col(KNUT_ARROW_INT64, "k");
    knut_arrow_builder *item = fx_col(KNUT_ARROW_INT64, "item");
    knut_arrow_builder *l = fx_nested(KNUT_ARROW_LIST, "l", 1, item);
    knut_arrow_builder *root = fx_nested(KNUT_ARROW_STRUCT, "", 2, k, l);
    for (int i = 0; i < 3; i++) {
        if (i == 1)
            OK(knut_arrow_builder_append_null(k, &e_));
        else
            OK(knut_arrow_builder_append_int(k, i, &e_));
        OK(knut_arrow_builder_append_int(item, 1, &e_));
        if (i == 2)
            OK(knut_arrow_builder_append_null(item, &e_));
        OK(knut_arrow_builder_finish_element(l, &e_));
        OK(knut_arrow_builder_finish_element(root, &e_));
    }
    fx_arr a;
    fx_finish(&a, root);
    knut_graph_vertex_set vs = KNUT_GRAPH_VERTEX_SET_INIT;
    vs.name = "my set";
    vs.labels = labels;
    vs.n_labels = 1;
    vs.keys = keys;
    vs.n_keys = 1;
    vs.all_props = 1;
    fx_stream(&vs.stream, &a);
    knut_graph_mutation *m;
    OK(knut_graph_mutation_new(&m, &e_));
    OK(knut_graph_mutation_add_vertex_set(m, &vs, &e_));
    knut_graph_set *set = knut_graph_mutation_get(m, KNUT_GRAPH_SET_VERTEX, 0);
    struct ArrowArray batch;
    knut_arrow_view v;
    OK(knut_graph_set_next(set, &batch, &e_));
    OK(knut_arrow_view_init(&v, &set->schema, &batch, &e_));
    knut_buf b = KNUT_BUF_INIT;
    knut_error err = KNUT_ERROR_INIT;
    int64_t n;
    assert_int_equal(KNUT_EINVAL, knut_graph_cypher_params(&b, set, &v, 0, 3, 40, 0, &n, &err));
    fx_expect_msg(&err, "set 'my set': row 41, column 'k'", "vertex key is null");
    assert_int_equal(KNUT_EINVAL, knut_graph_cypher_params(&b, set, &v, 2, 3, 40, 0, &n, &err));
    fx_expect_msg(&err, "set 'my set': row 42, column 'l'", "list element 1 is null");
    assert_int_equal(0, b.len);
    OK(knut_graph_cypher_params(&b, set, &v, 0, 1, 40, 0, &n, &e_));
    assert_string_equal("CYPHER rows=[{k:[0],p:{`l`:[1]}}] ", b.data);
    knut_buf_reset(&b);
    knut_arrow_view_reset(&v);
    knut_arrow_array_release(&batch);
    OK(knut_graph_set_next(set, &batch, &e_));
    assert_null(batch.release); /* end of stream */
    assert_int_equal(3, set->rows_read);
    knut_graph_mutation_free(m);
}

static void slice_release(struct ArrowArray *x)
{
    x->release = NULL;
}

static void test_graph_mutation__sliced_batch_and_render(void **state)
{
    (void)state;
    static const char *const labels[] = {"P"};
    static const char *const props[] = {"w"};
    knut_graph_mutation *m;
    OK(knut_graph_mutation_new(&m, &e_));
    OK(add_people(m, 1, 0, labels, 1, props, 1, &e_));
    knut_graph_set *set = knut_graph_mutation_get(m, KNUT_GRAPH_SET_VERTEX, 0);
    fx_arr a;
    people(&a, 4, 0);
    knut_arrow_view_reset(&a.view);
    struct ArrowArray sl = a.array;
    sl.offset = 2;
    sl.length = 2;
    sl.release = slice_release;
    knut_arrow_view v;
    OK(knut_arrow_view_init(&v, &a.schema, &sl, &e_));
    knut_buf b = KNUT_BUF_INIT;
    int64_t n;
    OK(knut_graph_cypher_render(&b, set, &v, 0, 2, 0, 0, &n, &e_));
    assert_int_equal(2, n);
    assert_string_equal("CYPHER rows=[{k:[2],p:{`w`:1.0}},{k:[3],p:{`w`:1.5}}] "
                        "UNWIND $rows AS r MERGE (n:`P` {`id`: r.k[0]}) SET n += r.p",
                        b.data);
    /* the render budget covers the query text too */
    size_t full = b.len;
    knut_buf_clear(&b);
    OK(knut_graph_cypher_render(&b, set, &v, 0, 2, 0, full - 1, &n, &e_));
    assert_int_equal(1, n);
    assert_true(b.len <= full - 1);
    knut_buf_reset(&b);
    knut_arrow_view_reset(&v);
    knut_arrow_array_release(&a.array);
    knut_arrow_schema_release(&a.schema);
    knut_graph_mutation_free(m);
}

/* ---- binding refusals -------------------------------------------------- */

static void expect_vertex_error(const char *const *labels, size_t n_labels,
                                const char *const *keys, size_t n_keys,
                                const char *const *props, size_t n_props, knut_status want,
                                const char *frag1, const char *frag2)
{
    fx_arr a;
    knut_graph_mutation *m;
    knut_error err = KNUT_ERROR_INIT;
    knut_graph_vertex_set vs = KNUT_GRAPH_VERTEX_SET_INIT;
    people(&a, 2, 0);
    fx_stream(&vs.stream, &a);
    vs.labels = labels;
    vs.n_labels = n_labels;
    vs.keys = keys;
    vs.n_keys = n_keys;
    vs.props = props;
    vs.n_props = n_props;
    OK(knut_graph_mutation_new(&m, &e_));
    assert_int_equal(want, knut_graph_mutation_add_vertex_set(m, &vs, &err));
    assert_null(vs.stream.release);
    assert_int_equal(0, knut_graph_mutation_count(m, KNUT_GRAPH_SET_VERTEX));
    fx_expect_msg(&err, frag1, frag2);
    knut_graph_mutation_free(m);
}

static void test_graph_mutation__vertex_refusals(void **state)
{
    (void)state;
    static const char *const p[] = {"Person"};
    static const char *const id[] = {"id"};
    static const char *const nope[] = {"nope"};
    static const char *const tags[] = {"tags"};
    static const char *const two[] = {"Person", "Person"};
    static const char *const tick[] = {"Per`son"};
    static const char *const empty[] = {""};
    static const char *const name_twice[] = {"name", "name"};
    expect_vertex_error(p, 1, nope, 1, NULL, 0, KNUT_ENOTFOUND,
                        "vertex set 'Person': key column 'nope' not found", NULL);
    expect_vertex_error(p, 1, id, 1, nope, 1, KNUT_ENOTFOUND, "property column 'nope'", NULL);
    expect_vertex_error(p, 1, tags, 1, NULL, 0, KNUT_EUNSUPPORTED, "key column 'tags'",
                        "keys must be bool");
    expect_vertex_error(p, 0, id, 1, NULL, 0, KNUT_EINVAL, "at least one label", NULL);
    expect_vertex_error(p, 1, id, 0, NULL, 0, KNUT_EINVAL, "at least one key", NULL);
    expect_vertex_error(two, 2, id, 1, NULL, 0, KNUT_EINVAL, "label 'Person' is listed twice",
                        NULL);
    expect_vertex_error(tick, 1, id, 1, NULL, 0, KNUT_EINVAL, "vertex set 'Per`son'",
                        "backtick");
    expect_vertex_error(empty, 1, id, 1, NULL, 0, KNUT_EINVAL, "vertex set '': label name is empty",
                        NULL);
    expect_vertex_error(p, 1, id, 1, name_twice, 2, KNUT_EINVAL, "property 'name' is listed",
                        NULL);
    expect_vertex_error(p, 1, id, 1, id, 1, KNUT_EINVAL, "key used as a property 'id'", NULL);
}

static void test_graph_mutation__schema_refusals(void **state)
{
    (void)state;
    static const char *const p[] = {"P"};
    static const char *const keys[] = {"a"};
    knut_graph_mutation *m;
    knut_error err = KNUT_ERROR_INIT;
    OK(knut_graph_mutation_new(&m, &e_));

    /* duplicate column names in the stream */
    fx_arr a;
    knut_arrow_builder *a1 = fx_col(KNUT_ARROW_INT64, "a");
    knut_arrow_builder *a2 = fx_col(KNUT_ARROW_INT64, "a");
    fx_finish(&a, fx_nested(KNUT_ARROW_STRUCT, "", 2, a1, a2));
    knut_graph_vertex_set vs = KNUT_GRAPH_VERTEX_SET_INIT;
    vs.labels = p;
    vs.n_labels = 1;
    vs.keys = keys;
    vs.n_keys = 1;
    vs.all_props = 1;
    fx_stream(&vs.stream, &a);
    assert_int_equal(KNUT_EINVAL, knut_graph_mutation_add_vertex_set(m, &vs, &err));
    fx_expect_msg(&err, "column 'a' appears twice", NULL);

    /* struct and nested temporal-list properties: the mutation takes them
     * (the embedded store keeps them), FalkorDB's check refuses them */
    knut_arrow_builder *key = fx_col(KNUT_ARROW_INT64, "a");
    knut_arrow_builder *sx = fx_col(KNUT_ARROW_INT64, "x");
    knut_arrow_builder *st = fx_nested(KNUT_ARROW_STRUCT, "s", 1, sx);
    fx_finish(&a, fx_nested(KNUT_ARROW_STRUCT, "", 2, key, st));
    vs = (knut_graph_vertex_set)KNUT_GRAPH_VERTEX_SET_INIT;
    vs.labels = p;
    vs.n_labels = 1;
    vs.keys = keys;
    vs.n_keys = 1;
    vs.all_props = 1;
    fx_stream(&vs.stream, &a);
    assert_int_equal(KNUT_OK, knut_graph_mutation_add_vertex_set(m, &vs, &err));
    size_t last = knut_graph_mutation_count(m, KNUT_GRAPH_SET_VERTEX) - 1;
    assert_int_equal(KNUT_EUNSUPPORTED,
                     knut_graph__falkor_set_check(
                         knut_graph_mutation_get(m, KNUT_GRAPH_SET_VERTEX, last), &err));
    fx_expect_msg(&err, "vertex set 'P': property column 's'", "cannot be maps");

    key = fx_col(KNUT_ARROW_INT64, "a");
    knut_arrow_builder *d = fx_col(KNUT_ARROW_DATE32, "d");
    knut_arrow_builder *inner = fx_nested(KNUT_ARROW_LIST, "i", 1, d);
    knut_arrow_builder *outer = fx_nested(KNUT_ARROW_LIST, "dd", 1, inner);
    fx_finish(&a, fx_nested(KNUT_ARROW_STRUCT, "", 2, key, outer));
    vs = (knut_graph_vertex_set)KNUT_GRAPH_VERTEX_SET_INIT;
    vs.labels = p;
    vs.n_labels = 1;
    vs.keys = keys;
    vs.n_keys = 1;
    vs.all_props = 1;
    fx_stream(&vs.stream, &a);
    assert_int_equal(KNUT_OK, knut_graph_mutation_add_vertex_set(m, &vs, &err));
    last = knut_graph_mutation_count(m, KNUT_GRAPH_SET_VERTEX) - 1;
    assert_int_equal(KNUT_EUNSUPPORTED,
                     knut_graph__falkor_set_check(
                         knut_graph_mutation_get(m, KNUT_GRAPH_SET_VERTEX, last), &err));
    fx_expect_msg(&err, "property column 'dd'", "nested lists of date32");

    /* an unknown description version */
    people(&a, 1, 0);
    vs = (knut_graph_vertex_set)KNUT_GRAPH_VERTEX_SET_INIT;
    vs.labels = p;
    vs.n_labels = 1;
    vs.keys = keys;
    vs.n_keys = 1;
    vs.version = 99;
    fx_stream(&vs.stream, &a);
    assert_int_equal(KNUT_EINVAL, knut_graph_mutation_add_vertex_set(m, &vs, &err));
    fx_expect_msg(&err, "options version 99", NULL);
    assert_null(vs.stream.release);
    assert_int_equal(2, knut_graph_mutation_count(m, KNUT_GRAPH_SET_VERTEX)); /* the two above */
    knut_graph_mutation_free(m);
}

static void test_graph_mutation__edge_and_delete(void **state)
{
    (void)state;
    /* columns: src, dst (keys of Person.id), since (edge key), w, note */
    knut_arrow_builder *src = fx_col(KNUT_ARROW_INT64, "src");
    knut_arrow_builder *dst = fx_col(KNUT_ARROW_INT64, "dst");
    knut_arrow_builder *since = fx_col(KNUT_ARROW_DATE32, "since");
    knut_arrow_builder *w = fx_col(KNUT_ARROW_DOUBLE, "w");
    knut_arrow_builder *root = fx_nested(KNUT_ARROW_STRUCT, "", 4, src, dst, since, w);
    OK(knut_arrow_builder_append_int(src, 1, &e_));
    OK(knut_arrow_builder_append_int(dst, 2, &e_));
    OK(knut_arrow_builder_append_int(since, 0, &e_));
    OK(knut_arrow_builder_append_double(w, 2.0, &e_));
    OK(knut_arrow_builder_finish_element(root, &e_));
    fx_arr a;
    fx_finish(&a, root);
    static const char *const id[] = {"id"};
    static const char *const src_col[] = {"src"};
    static const char *const dst_col[] = {"dst"};
    static const char *const ekey[] = {"since"};
    knut_graph_edge_set es = KNUT_GRAPH_EDGE_SET_INIT;
    es.type = "KNOWS";
    es.src = (knut_graph_endpoint){"Person", id, src_col, 1};
    es.dst = (knut_graph_endpoint){"Person", id, dst_col, 1};
    es.keys = ekey;
    es.n_keys = 1;
    es.all_props = 1;
    fx_stream(&es.stream, &a);
    knut_graph_mutation *m;
    OK(knut_graph_mutation_new(&m, &e_));
    OK(knut_graph_mutation_add_edge_set(m, &es, &e_));
    knut_graph_set *set = knut_graph_mutation_get(m, KNUT_GRAPH_SET_EDGE, 0);
    assert_string_equal("KNOWS", set->name);
    assert_int_equal(1, set->n_props); /* w: endpoints and edge key are not properties */
    char *q = query_of(set);
    assert_string_equal("UNWIND $rows AS r MATCH (a:`Person` {`id`: r.s[0]}) "
                        "MATCH (b:`Person` {`id`: r.d[0]}) "
                        "MERGE (a)-[e:`KNOWS` {`since`: date(r.k[0])}]->(b) SET e += r.p",
                        q);
    free(q);
    int64_t n;
    knut_status st;
    char *p = params_of(set, 0, 1, 0, &n, &st, NULL);
    assert_string_equal("CYPHER rows=[{s:[1],d:[2],k:['1970-01-01'],p:{`w`:2.0}}] ", p);
    free(p);

    /* an edge set naming a missing endpoint column */
    knut_arrow_builder *only = fx_col(KNUT_ARROW_INT64, "src");
    fx_finish(&a, fx_nested(KNUT_ARROW_STRUCT, "", 1, only));
    es = (knut_graph_edge_set)KNUT_GRAPH_EDGE_SET_INIT;
    es.type = "KNOWS";
    es.src = (knut_graph_endpoint){"Person", id, src_col, 1};
    es.dst = (knut_graph_endpoint){"Person", id, dst_col, 1};
    fx_stream(&es.stream, &a);
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(KNUT_ENOTFOUND, knut_graph_mutation_add_edge_set(m, &es, &err));
    fx_expect_msg(&err, "edge set 'KNOWS': destination key column 'dst' not found", NULL);

    /* delete set */
    knut_arrow_builder *k = fx_col(KNUT_ARROW_UTF8, "id");
    root = fx_nested(KNUT_ARROW_STRUCT, "", 1, k);
    OK(knut_arrow_builder_append_str(k, "x'y", &e_));
    OK(knut_arrow_builder_finish_element(root, &e_));
    fx_finish(&a, root);
    knut_graph_delete_set ds = KNUT_GRAPH_DELETE_SET_INIT;
    ds.label = "Person";
    ds.keys = id;
    ds.n_keys = 1;
    fx_stream(&ds.stream, &a);
    OK(knut_graph_mutation_add_delete_set(m, &ds, &e_));
    set = knut_graph_mutation_get(m, KNUT_GRAPH_SET_DELETE, 0);
    q = query_of(set);
    assert_string_equal("UNWIND $rows AS r MATCH (n:`Person` {`id`: r.k[0]}) DETACH DELETE n",
                        q);
    free(q);
    p = params_of(set, 0, 1, 0, &n, &st, NULL);
    assert_string_equal("CYPHER rows=[{k:['x\\'y']}] ", p);
    free(p);
    assert_null(knut_graph_mutation_get(m, KNUT_GRAPH_SET_DELETE, 1));
    knut_graph_mutation_free(m);
}

static void test_graph_mutation__next_validates(void **state)
{
    (void)state;
    /* a batch whose string is not UTF-8 is refused when read, naming the set */
    knut_arrow_builder *k = fx_col(KNUT_ARROW_UTF8, "id");
    knut_arrow_builder *root = fx_nested(KNUT_ARROW_STRUCT, "", 1, k);
    OK(knut_arrow_builder_append_bytes(k, "\xff", 1, &e_));
    OK(knut_arrow_builder_finish_element(root, &e_));
    fx_arr a;
    fx_finish(&a, root);
    static const char *const id[] = {"id"};
    knut_graph_delete_set ds = KNUT_GRAPH_DELETE_SET_INIT;
    ds.name = "gone";
    ds.label = "Person";
    ds.keys = id;
    ds.n_keys = 1;
    fx_stream(&ds.stream, &a);
    knut_graph_mutation *m;
    OK(knut_graph_mutation_new(&m, &e_));
    OK(knut_graph_mutation_add_delete_set(m, &ds, &e_));
    struct ArrowArray batch;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(KNUT_EINVAL, knut_graph_set_next(knut_graph_mutation_get(
                                                          m, KNUT_GRAPH_SET_DELETE, 0),
                                                      &batch, &err));
    assert_null(batch.release);
    fx_expect_msg(&err, "delete set 'gone': batch after row 0", "UTF-8");
    knut_graph_mutation_free(m);
    knut_graph_mutation_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_graph_mutation__vertex_query_text),
        cmocka_unit_test(test_graph_mutation__vertex_params),
        cmocka_unit_test(test_graph_mutation__params_budget),
        cmocka_unit_test(test_graph_mutation__params_refusals),
        cmocka_unit_test(test_graph_mutation__sliced_batch_and_render),
        cmocka_unit_test(test_graph_mutation__vertex_refusals),
        cmocka_unit_test(test_graph_mutation__schema_refusals),
        cmocka_unit_test(test_graph_mutation__edge_and_delete),
        cmocka_unit_test(test_graph_mutation__next_validates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
