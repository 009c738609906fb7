/*
 * Unit tests of the FalkorDB sink's parts that need no server: the batch
 * planner (row and byte budgets, pipeline rounds, the edge suffix, null
 * keys refused before their query is flushed), the index list and the
 * index statement, and option checks of knut_graph_falkor_sink_new and
 * knut_graph_falkor_sink_set_tx.
 */
#include "graph_fixture.h"

#include "graph/falkor_sink_int.h"

/* A vertex set 'P' keyed by id over n rows; row null_at (if >= 0) has a null id. */
static knut_graph_mutation *people(int n, int null_at)
{
    static const char *const labels[] = {"P"};
    static const char *const keys[] = {"id"};
    knut_graph_mutation *m = NULL;
    knut_arrow_builder *id = fx_col(KNUT_ARROW_INT64, "id");
    knut_arrow_builder *name = fx_col(KNUT_ARROW_UTF8, "name");
    knut_arrow_builder *root = fx_nested(KNUT_ARROW_STRUCT, "", 2, id, name);
    fx_arr a;
    for (int i = 0; i < n; i++) {
        if (i == null_at)
            OK(knut_arrow_builder_append_null(id, &e_));
        else
            OK(knut_arrow_builder_append_int(id, i, &e_));
        OK(knut_arrow_builder_append_str(name, "someone with a name", &e_));
        OK(knut_arrow_builder_finish_element(root, &e_));
    }
    fx_finish(&a, root);
    knut_graph_vertex_set vs = KNUT_GRAPH_VERTEX_SET_INIT;
    fx_stream(&vs.stream, &a);
    vs.labels = labels;
    vs.n_labels = 1;
    vs.keys = keys;
    vs.n_keys = 1;
    vs.all_props = 1;
    OK(knut_graph_mutation_new(&m, &e_));
    OK(knut_graph_mutation_add_vertex_set(m, &vs, &e_));
    return m;
}

typedef struct rounds {
    int n_rounds;
    int64_t rows;
    int64_t next_row;
    size_t max_len;
    size_t per_round[64];
    int fail_at; /* round number that fails, or -1 */
    const char *suffix;
} rounds;

static knut_status record(void *ctx, const knut_graph_set *set, fsink_query *q, size_t n,
                          knut_error *err)
{
    rounds *r = ctx;
    assert_string_equal("P", set->name);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(r->next_row, q[i].first_row); /* in order, none lost */
        r->next_row += q[i].n_rows;
        r->rows += q[i].n_rows;
        if (q[i].text.len > r->max_len)
            r->max_len = q[i].text.len;
        assert_non_null(strstr(q[i].text.data, "UNWIND $rows AS r MERGE (n:`P`"));
        if (r->suffix) {
            size_t sl = strlen(r->suffix);
            assert_true(q[i].text.len > sl);
            assert_string_equal(r->suffix, q[i].text.data + q[i].text.len - sl);
        }
    }
    if (r->n_rounds < 64)
        r->per_round[r->n_rounds] = n;
    if (r->n_rounds++ == r->fail_at)
        return knut_error_set(err, KNUT_EPEER, "server said no");
    return KNUT_OK;
}

static void test_graph_falkor_sink__rows_and_pipeline(void **state)
{
    (void)state;
    knut_graph_mutation *m = people(103, -1);
    knut_graph_set *set = knut_graph_mutation_get(m, KNUT_GRAPH_SET_VERTEX, 0);
    rounds r = {0};
    r.fail_at = -1;
    r.suffix = " RETURN 1";
    fsink_plan plan = {FSINK_BATCH_BYTES_DEFAULT, 10, 4, " RETURN 1", NULL};
    OK(knut_graph__fsink_run_set(set, &plan, record, &r, &e_));
    /* 103 rows at 10 per query: 11 queries, rounds of 4, 4, 3 */
    assert_int_equal(103, r.rows);
    assert_int_equal(3, r.n_rounds);
    assert_int_equal(4, r.per_round[0]);
    assert_int_equal(4, r.per_round[1]);
    assert_int_equal(3, r.per_round[2]);
    assert_int_equal(103, set->rows_read);
    knut_graph_mutation_free(m);
}

static void test_graph_falkor_sink__byte_budget(void **state)
{
    (void)state;
    knut_graph_mutation *m = people(200, -1);
    knut_graph_set *set = knut_graph_mutation_get(m, KNUT_GRAPH_SET_VERTEX, 0);
    rounds r = {0};
    r.fail_at = -1;
    fsink_plan plan = {2048, 100000, 1, NULL, NULL};
    OK(knut_graph__fsink_run_set(set, &plan, record, &r, &e_));
    assert_int_equal(200, r.rows);
    assert_true(r.max_len <= 2048);
    assert_true(r.n_rounds >= 4); /* the budget, not the row cap, split it */
    knut_graph_mutation_free(m);
}

static void test_graph_falkor_sink__null_key_before_send(void **state)
{
    (void)state;
    knut_graph_mutation *m = people(50, 37);
    knut_graph_set *set = knut_graph_mutation_get(m, KNUT_GRAPH_SET_VERTEX, 0);
    rounds r = {0};
    knut_error err = KNUT_ERROR_INIT;
    r.fail_at = -1;
    fsink_plan plan = {FSINK_BATCH_BYTES_DEFAULT, 10, 2, NULL, NULL};
    assert_int_not_equal(KNUT_OK, knut_graph__fsink_run_set(set, &plan, record, &r, &err));
    fx_expect_msg(&err, "row 37", "set 'P'");
    /* rows 0-19 went out in the first round; 20-29 waited for a second
     * query to fill the round and were dropped with the refused row's query */
    assert_int_equal(1, r.n_rounds);
    assert_int_equal(20, r.rows);
    knut_graph_mutation_free(m);
}

static void test_graph_falkor_sink__flush_error_stops(void **state)
{
    (void)state;
    knut_graph_mutation *m = people(100, -1);
    knut_graph_set *set = knut_graph_mutation_get(m, KNUT_GRAPH_SET_VERTEX, 0);
    rounds r = {0};
    knut_error err = KNUT_ERROR_INIT;
    r.fail_at = 1;
    fsink_plan plan = {FSINK_BATCH_BYTES_DEFAULT, 10, 2, NULL, NULL};
    assert_int_equal(KNUT_EPEER, knut_graph__fsink_run_set(set, &plan, record, &r, &err));
    assert_string_equal("server said no", err.message);
    assert_int_equal(2, r.n_rounds); /* nothing after the failed round */
    knut_graph_mutation_free(m);
}

static void test_graph_falkor_sink__index_list(void **state)
{
    (void)state;
    fsink_index_list l = {0};
    knut_buf b = KNUT_BUF_INIT;
    knut_error err = KNUT_ERROR_INIT;
    knut_graph_mutation *m = people(3, -1);
    OK(knut_graph__fsink_index_collect(&l, m, &e_));
    OK(knut_graph__fsink_index_add(&l, "P", "id", &e_)); /* duplicate: ignored */
    OK(knut_graph__fsink_index_add(&l, "Q", "a b", &e_));
    assert_int_equal(2, l.n);
    assert_int_equal(0, knut_graph__fsink_index_find(&l, "P", "id"));
    assert_int_equal(-1, knut_graph__fsink_index_find(&l, "P", "name"));
    OK(knut_graph__fsink_index_text(&b, "Q", "a b", &e_));
    assert_string_equal("CREATE INDEX FOR (n:`Q`) ON (n.`a b`)", b.data);
    knut_buf_clear(&b);
    assert_int_equal(KNUT_EINVAL, knut_graph__fsink_index_text(&b, "Q", "a`b", &err));
    knut_graph__fsink_index_remove(&l, 0);
    assert_int_equal(1, l.n);
    assert_int_equal(0, knut_graph__fsink_index_find(&l, "Q", "a b"));
    knut_graph__fsink_index_list_reset(&l);
    knut_graph__fsink_index_list_reset(&l); /* twice is fine */
    knut_buf_reset(&b);
    knut_graph_mutation_free(m);
}

static void test_graph_falkor_sink__options(void **state)
{
    (void)state;
    knut_graph_sink *s = (knut_graph_sink *)1;
    knut_error err = KNUT_ERROR_INIT;
    knut_graph_falkor_sink_options o = KNUT_GRAPH_FALKOR_SINK_OPTIONS_INIT;
    /* no client */
    assert_int_equal(KNUT_EINVAL, knut_graph_falkor_sink_new(&s, NULL, "g", NULL, &err));
    assert_null(s);
    o.batch_bytes = 10;
    knut_graph_falkor *fake = (knut_graph_falkor *)&o; /* never dereferenced: options fail first */
    assert_int_equal(KNUT_EINVAL, knut_graph_falkor_sink_new(&s, fake, "g", &o, &err));
    fx_expect_msg(&err, "batch_bytes", NULL);
    o.batch_bytes = 0;
    o.pipeline = 65;
    assert_int_equal(KNUT_EINVAL, knut_graph_falkor_sink_new(&s, fake, "g", &o, &err));
    o.pipeline = 0;
    o.version = 99;
    assert_int_equal(KNUT_EINVAL, knut_graph_falkor_sink_new(&s, fake, "g", &o, &err));
    assert_null(s);
    knut_graph_sink_close(NULL);
}

/* The id probe's plan: rows whose probe gives an id go into by-id queries
 * (with a MERGE form of the same rows kept for a resend), the others into
 * MERGE queries, every row exactly once. The probe here answers "ids for
 * the even keys", as a server holding only those vertices would. */
static knut_status even_ids(void *ctx, const knut_graph_set *set, const knut_arrow_view *batch,
                            int64_t from, int64_t to, int64_t *ids, knut_error *err)
{
    (void)ctx;
    (void)set;
    (void)err;
    for (int64_t j = 0; j < to - from; j++)
        ids[j] = (from + j) % 2 == 0 ? 1000 + from + j : -1;
    assert_true(knut_graph__fsink_probe_eligible(set, batch));
    return KNUT_OK;
}

typedef struct split {
    int64_t by_id, merged, queries;
    int seen[64];
} split;

static knut_status record_split(void *ctx, const knut_graph_set *set, fsink_query *q, size_t n,
                                knut_error *err)
{
    split *sp = ctx;
    (void)set;
    (void)err;
    for (size_t i = 0; i < n; i++) {
        const char *t = q[i].text.data;
        sp->queries++;
        if (q[i].by_id) {
            assert_non_null(strstr(t, "WITH r, r.i AS i MATCH (n) WHERE id(n) = i WITH n, r "
                                      "WHERE n:`P` AND n.`id` = r.k[0] SET n += r.p WITH count(n) AS c "
                                      "WHERE c < size($rows) RETURN c"));
            assert_non_null(strstr(q[i].alt.data, "UNWIND $rows AS r MERGE (n:`P`"));
            assert_null(strstr(q[i].alt.data, "i:"));
            sp->by_id += q[i].n_rows;
        } else {
            assert_non_null(strstr(t, "UNWIND $rows AS r MERGE (n:`P`"));
            sp->merged += q[i].n_rows;
        }
        /* every row's key appears once, in the query that carries it */
        for (int k = 0; k < 40; k++) {
            char needle[32];
            snprintf(needle, sizeof needle, "k:[%d]", k);
            const char *hit = strstr(t, needle);
            if (hit) {
                sp->seen[k]++;
                int even = k % 2 == 0;
                assert_int_equal(even, q[i].by_id);
                if (even) {
                    char id[32];
                    snprintf(id, sizeof id, "{i:%d,k:[%d]", 1000 + k, k);
                    assert_non_null(strstr(t, id));
                }
            }
        }
    }
    return KNUT_OK;
}

static void test_graph_falkor_sink__probe_splits_rows(void **state)
{
    (void)state;
    knut_graph_mutation *m = people(40, -1);
    knut_graph_set *set = knut_graph_mutation_get(m, KNUT_GRAPH_SET_VERTEX, 0);
    split sp = {0};
    fsink_plan plan = {FSINK_BATCH_BYTES_DEFAULT, 15, 3, NULL, even_ids};
    OK(knut_graph__fsink_run_set(set, &plan, record_split, &sp, &e_));
    assert_int_equal(20, sp.by_id);
    assert_int_equal(20, sp.merged);
    for (int k = 0; k < 40; k++)
        assert_int_equal(1, sp.seen[k]);
    knut_graph_mutation_free(m);
}

/* knut_graph_falkor_sink_set_tx checks its settings (no server needed:
 * the client is not touched before an apply). */
static void test_graph_falkor_sink__set_tx_checks(void **state)
{
    (void)state;
    knut_graph_sink *s = NULL;
    knut_error err = KNUT_ERROR_INIT;
    knut_graph_falkor_sink_options o = KNUT_GRAPH_FALKOR_SINK_OPTIONS_INIT;
    knut_graph_falkor *fake = (knut_graph_falkor *)&o; /* never dereferenced */
    OK(knut_graph_falkor_sink_new(&s, fake, "g", NULL, &e_));
    knut_graph_falkor_tx tx = KNUT_GRAPH_FALKOR_TX_INIT;
    /* a fence is required */
    assert_int_equal(KNUT_EINVAL, knut_graph_falkor_sink_set_tx(s, &tx, &err));
    tx.fence_key = "lease";
    tx.fence_value = "me";
    tx.n_cmds = 1; /* commands without their arguments */
    assert_int_equal(KNUT_EINVAL, knut_graph_falkor_sink_set_tx(s, &tx, &err));
    tx.n_cmds = 0;
    tx.version = 99;
    assert_int_equal(KNUT_EINVAL, knut_graph_falkor_sink_set_tx(s, &tx, &err));
    fx_expect_msg(&err, "version 99", NULL);
    tx.version = KNUT_GRAPH_FALKOR_TX_VERSION;
    OK(knut_graph_falkor_sink_set_tx(s, &tx, &e_));
    OK(knut_graph_falkor_sink_set_tx(s, NULL, &e_)); /* back to pipelined applies */
    /* only a FalkorDB sink takes one */
    knut_graph_store *store = NULL;
    OK(knut_graph_store_open(&store, NULL, &e_));
    assert_int_equal(KNUT_EINVAL,
                     knut_graph_falkor_sink_set_tx(knut_graph_store_sink(store), &tx, &err));
    knut_graph_store_close(store);
    knut_graph_sink_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_graph_falkor_sink__rows_and_pipeline),
        cmocka_unit_test(test_graph_falkor_sink__byte_budget),
        cmocka_unit_test(test_graph_falkor_sink__null_key_before_send),
        cmocka_unit_test(test_graph_falkor_sink__flush_error_stops),
        cmocka_unit_test(test_graph_falkor_sink__index_list),
        cmocka_unit_test(test_graph_falkor_sink__options),
        cmocka_unit_test(test_graph_falkor_sink__probe_splits_rows),
        cmocka_unit_test(test_graph_falkor_sink__set_tx_checks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
