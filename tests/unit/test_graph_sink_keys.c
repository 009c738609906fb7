/*
 * Unit tests for the embedded store's key listing (knut_graph_sink_vertex_keys
 * / _edge_keys, src/graph/store_keys.c): the keys of a label and the
 * endpoint keys of an edge type come back with the sink id first; an
 * unknown label or type, or a key the label table lacks, lists nothing; an
 * error from the callback stops the listing and is returned. (FalkorDB's
 * paged listing is tested against a real server in
 * tests/integration/test_sync_full.py.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "knut/duck.h"
#include "knut/graph.h"

/* Rows of a DuckDB query as a stream (the source of the sets). */
static void sql_stream(knut_duck_db *db, const char *sql, struct ArrowArrayStream *out)
{
    knut_duck_conn *c = NULL;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_duck_conn_open(&c, db, &err), KNUT_OK);
    if (knut_duck_query(c, sql, out, &err) != KNUT_OK)
        fail_msg("%s", err.message);
    knut_duck_conn_close(c);
}

static knut_graph_store *populated(knut_duck_db *db)
{
    knut_graph_store *s = NULL;
    knut_graph_mutation *m = NULL;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_graph_store_open(&s, NULL, &err), KNUT_OK);
    assert_int_equal(knut_graph_mutation_new(&m, &err), KNUT_OK);
    const char *labels[] = {"P"}, *keys[] = {"id"}, *props[] = {"name"};
    knut_graph_vertex_set vs = KNUT_GRAPH_VERTEX_SET_INIT;
    vs.labels = labels;
    vs.n_labels = 1;
    vs.keys = keys;
    vs.n_keys = 1;
    vs.props = props;
    vs.n_props = 1;
    sql_stream(db, "SELECT * FROM (VALUES (1, 'a'), (2, 'b'), (3, 'c')) t(id, name)", &vs.stream);
    assert_int_equal(knut_graph_mutation_add_vertex_set(m, &vs, &err), KNUT_OK);
    const char *cols_s[] = {"s"}, *cols_d[] = {"d"};
    knut_graph_edge_set es = KNUT_GRAPH_EDGE_SET_INIT;
    es.type = "K";
    es.src = (knut_graph_endpoint){"P", keys, cols_s, 1};
    es.dst = (knut_graph_endpoint){"P", keys, cols_d, 1};
    sql_stream(db, "SELECT * FROM (VALUES (1, 2), (2, 3)) t(s, d)", &es.stream);
    assert_int_equal(knut_graph_mutation_add_edge_set(m, &es, &err), KNUT_OK);
    if (knut_graph_sink_apply(knut_graph_store_sink(s), m, NULL, NULL, &err) != KNUT_OK)
        fail_msg("%s", err.message);
    knut_graph_mutation_free(m);
    return s;
}

/* Collects "id:k1:k2..." of each row (ints), ids replaced by '#'. */
typedef struct got {
    char text[256];
    int calls;
    int fail;
} got;

static knut_status collect(void *ctx, struct ArrowArrayStream *rows, knut_error *err)
{
    got *g = ctx;
    struct ArrowSchema schema = {0};
    struct ArrowArray a = {0};
    knut_arrow_view v = {0};
    g->calls++;
    knut_status st = KNUT_OK;
    if (g->fail) {
        st = knut_error_set(err, KNUT_EIO, "callback says no");
        goto cleanup;
    }
    assert_int_equal(rows->get_schema(rows, &schema), 0);
    assert_string_equal(schema.children[0]->name, "_knut_id");
    for (;;) {
        assert_int_equal(rows->get_next(rows, &a), 0);
        if (!a.release)
            break;
        assert_int_equal(knut_arrow_view_init(&v, &schema, &a, err), KNUT_OK);
        for (int64_t i = 0; i < v.length; i++) {
            size_t n = strlen(g->text);
            snprintf(g->text + n, sizeof g->text - n, "%s#", n ? " " : "");
            for (int64_t c = 1; c < v.n_children; c++) {
                n = strlen(g->text);
                snprintf(g->text + n, sizeof g->text - n, ":%lld",
                         (long long)knut_arrow_view_get_int64(&v.children[c], i));
            }
        }
        knut_arrow_view_reset(&v);
        memset(&v, 0, sizeof v);
        knut_arrow_array_release(&a);
    }
cleanup:
    knut_arrow_schema_release(&schema);
    knut_arrow_stream_release(rows);
    return st;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The listing has no order: sort its tokens in place. */
static const char *sorted(got *g)
{
    char copy[256], *tok[32], *save = NULL;
    size_t n = 0;
    snprintf(copy, sizeof copy, "%s", g->text);
    for (char *t = strtok_r(copy, " ", &save); t && n < 32; t = strtok_r(NULL, " ", &save))
        tok[n++] = t;
    qsort(tok, n, sizeof *tok, cmp_str);
    g->text[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(g->text);
        snprintf(g->text + len, sizeof g->text - len, "%s%s", i ? " " : "", tok[i]);
    }
    return g->text;
}

static void test_store_keys(void **state)
{
    (void)state;
    knut_duck_db *db = NULL;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_duck_db_open(&db, NULL, NULL, 0, &err), KNUT_OK);
    knut_graph_store *s = populated(db);
    knut_graph_sink *sink = knut_graph_store_sink(s);
    const char *keys[] = {"id"}, *nokey[] = {"nope"};

    got g = {{0}, 0, 0};
    assert_int_equal(knut_graph_sink_vertex_keys(sink, "P", keys, 1, collect, &g, &err), KNUT_OK);
    assert_string_equal(sorted(&g), "#:1 #:2 #:3");

    knut_graph_endpoint ep = {"P", keys, NULL, 1};
    memset(&g, 0, sizeof g);
    assert_int_equal(knut_graph_sink_edge_keys(sink, "K", &ep, &ep, collect, &g, &err), KNUT_OK);
    assert_string_equal(sorted(&g), "#:1:2 #:2:3");

    /* nothing stored under these: the callback is never called */
    memset(&g, 0, sizeof g);
    assert_int_equal(knut_graph_sink_vertex_keys(sink, "Q", keys, 1, collect, &g, &err), KNUT_OK);
    assert_int_equal(knut_graph_sink_vertex_keys(sink, "P", nokey, 1, collect, &g, &err),
                     KNUT_OK);
    assert_int_equal(knut_graph_sink_edge_keys(sink, "L", &ep, &ep, collect, &g, &err), KNUT_OK);
    knut_graph_endpoint other = {"Q", keys, NULL, 1};
    assert_int_equal(knut_graph_sink_edge_keys(sink, "K", &ep, &other, collect, &g, &err),
                     KNUT_OK);
    assert_int_equal(g.calls, 0);

    /* the callback's error is the listing's */
    g.fail = 1;
    assert_int_equal(knut_graph_sink_vertex_keys(sink, "P", keys, 1, collect, &g, &err), KNUT_EIO);
    assert_non_null(strstr(err.message, "callback says no"));
    assert_non_null(strstr(err.message, "label 'P'"));

    knut_graph_sink_close(sink);
    knut_duck_db_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_store_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
