/*
 * Unit tests for the viewer layout (src/viewer/layout.c, graph.c,
 * render.c): longest-path layers, no overlapping boxes, routes that point
 * rightward, crossings removed by the barycenter sweeps, the same picture
 * whatever order the nodes were added in, cycles refused, and a graph
 * built from a real resolved pipeline (edge labels batch/streaming/cdc).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "knut/viewer.h"

/* A graph from "a>b b>c ..." (nodes added in first-seen order, or in the
 * reverse when reverse is set). */
static knut_viewer_graph *build(const char *const *nodes, size_t nn, const char *edges,
                                int reverse)
{
    knut_error err = KNUT_ERROR_INIT;
    knut_viewer_graph *g = NULL;
    assert_int_equal(knut_viewer_graph_new(&g, "t", &err), KNUT_OK);
    for (size_t i = 0; i < nn; i++) {
        const char *name = nodes[reverse ? nn - 1 - i : i];
        assert_int_equal(knut_viewer_graph_add_node(g, name, NULL, "batch", NULL, NULL, &err),
                         KNUT_OK);
    }
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", edges);
    for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) {
        char *gt = strchr(tok, '>');
        assert_non_null(gt);
        *gt = 0;
        size_t a = knut_viewer_graph_find(g, tok), b = knut_viewer_graph_find(g, gt + 1);
        assert_true(a != (size_t)-1 && b != (size_t)-1);
        assert_int_equal(knut_viewer_graph_add_edge(g, a, b, NULL, &err), KNUT_OK);
    }
    assert_int_equal(knut_viewer_layout(g, &err), KNUT_OK);
    return g;
}

static const knut_viewer_node *node(const knut_viewer_graph *g, const char *name)
{
    size_t i = knut_viewer_graph_find(g, name);
    assert_true(i != (size_t)-1);
    return &g->nodes[i];
}

/* No two boxes overlap, every box is inside the drawing, every route
 * starts on its source's right side, ends on its target's left side and
 * its x grows strictly. */
static void check_geometry(const knut_viewer_graph *g)
{
    for (size_t i = 0; i < g->nnodes; i++) {
        const knut_viewer_node *a = &g->nodes[i];
        assert_true(a->w > 0 && a->h > 0);
        assert_true(a->x >= 0 && a->y >= 0);
        assert_true(a->x + a->w <= g->width && a->y + a->h <= g->height);
        for (size_t j = i + 1; j < g->nnodes; j++) {
            const knut_viewer_node *b = &g->nodes[j];
            int apart = a->x + a->w <= b->x || b->x + b->w <= a->x || a->y + a->h <= b->y ||
                        b->y + b->h <= a->y;
            if (!apart)
                fail_msg("boxes of %s and %s overlap", a->name, b->name);
        }
    }
    for (size_t e = 0; e < g->nedges; e++) {
        const knut_viewer_edge *ed = &g->edges[e];
        const knut_viewer_node *a = &g->nodes[ed->from], *b = &g->nodes[ed->to];
        assert_true(b->layer > a->layer);
        assert_true(ed->npoints >= 2);
        assert_true(fabs(ed->points[0].x - (a->x + a->w)) < 1e-9);
        assert_true(fabs(ed->points[ed->npoints - 1].x - b->x) < 1e-9);
        for (size_t k = 1; k < ed->npoints; k++)
            if (!(ed->points[k].x > ed->points[k - 1].x))
                fail_msg("edge %s -> %s: point %zu does not go right", a->name, b->name, k);
        /* one pair of points (in and out of a column) per layer crossed */
        assert_int_equal(ed->npoints, 2 + 2 * (size_t)(b->layer - a->layer - 1));
    }
}

static void test_viewer_layout__layers_are_longest_paths(void **state)
{
    (void)state;
    const char *n[] = {"a", "b", "c", "d", "e"};
    /* a -> b -> c -> d and a -> d, e alone */
    knut_viewer_graph *g = build(n, 5, "a>b b>c c>d a>d", 0);
    assert_int_equal(node(g, "a")->layer, 0);
    assert_int_equal(node(g, "b")->layer, 1);
    assert_int_equal(node(g, "c")->layer, 2);
    assert_int_equal(node(g, "d")->layer, 3);
    assert_int_equal(node(g, "e")->layer, 0);
    assert_int_equal(g->nlayers, 4);
    check_geometry(g);
    /* columns left to right */
    assert_true(node(g, "a")->x < node(g, "b")->x);
    assert_true(node(g, "c")->x < node(g, "d")->x);
    /* a -> d passes two layers: 6 points */
    assert_int_equal(g->edges[3].npoints, 6);
    knut_viewer_graph_free(g);
}

/* Two sources with crossed fan-outs: the sweeps must untangle them. */
static void test_viewer_layout__crossings_removed(void **state)
{
    (void)state;
    const char *n[] = {"a", "b", "x", "y"};
    /* by name, layer 1 starts as x, y: a -> y and b -> x cross */
    knut_viewer_graph *g = build(n, 4, "a>y b>x", 0);
    const knut_viewer_node *a = node(g, "a"), *b = node(g, "b");
    const knut_viewer_node *x = node(g, "x"), *y = node(g, "y");
    /* the order of targets follows the order of sources */
    assert_int_equal(a->order < b->order, y->order < x->order);
    assert_int_equal(a->y < b->y, y->y < x->y);
    check_geometry(g);
    knut_viewer_graph_free(g);
}

/* The same graph added in another order lays out identically. */
static void test_viewer_layout__deterministic(void **state)
{
    (void)state;
    const char *n[] = {"src1", "src2", "clean", "join", "agg", "report", "audit", "side"};
    const char *e = "src1>clean src2>clean clean>join src2>join join>agg agg>report "
                    "join>report src1>audit side>report";
    knut_viewer_graph *g1 = build(n, 8, e, 0), *g2 = build(n, 8, e, 1), *g3 = build(n, 8, e, 0);
    check_geometry(g1);
    for (size_t i = 0; i < 8; i++) {
        const knut_viewer_node *a = node(g1, n[i]), *b = node(g2, n[i]), *c = node(g3, n[i]);
        assert_int_equal(a->layer, b->layer);
        assert_int_equal(a->order, b->order);
        assert_true(a->x == b->x && a->y == b->y);
        assert_true(a->x == c->x && a->y == c->y);
    }
    knut_error err = KNUT_ERROR_INIT;
    knut_buf j1 = KNUT_BUF_INIT, j3 = KNUT_BUF_INIT;
    assert_int_equal(knut_viewer_graph_json(g1, &j1, &err), KNUT_OK);
    assert_int_equal(knut_viewer_graph_json(g3, &j3, &err), KNUT_OK);
    assert_int_equal(j1.len, j3.len);
    assert_memory_equal(j1.data, j3.data, j1.len);
    /* laying out again changes nothing */
    assert_int_equal(knut_viewer_layout(g1, &err), KNUT_OK);
    knut_buf_clear(&j3);
    assert_int_equal(knut_viewer_graph_json(g1, &j3, &err), KNUT_OK);
    assert_int_equal(j1.len, j3.len);
    assert_memory_equal(j1.data, j3.data, j1.len);
    knut_buf_reset(&j1);
    knut_buf_reset(&j3);
    knut_viewer_graph_free(g1);
    knut_viewer_graph_free(g2);
    knut_viewer_graph_free(g3);
}

/* A wide layered graph: many nodes per layer, long edges. */
static void test_viewer_layout__wide_graph_no_overlaps(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    knut_viewer_graph *g = NULL;
    assert_int_equal(knut_viewer_graph_new(&g, "wide", &err), KNUT_OK);
    char name[32];
    for (int i = 0; i < 60; i++) {
        snprintf(name, sizeof name, "n%02d", i);
        assert_int_equal(knut_viewer_graph_add_node(g, name, NULL, NULL, NULL, NULL, &err),
                         KNUT_OK);
    }
    unsigned seed = 7;
    for (int i = 10; i < 60; i++)
        for (int k = 0; k < 2; k++) {
            seed = seed * 1103515245u + 12345u;
            size_t from = (seed >> 8) % (size_t)i;
            assert_int_equal(knut_viewer_graph_add_edge(g, from, (size_t)i, "streaming", &err),
                             KNUT_OK);
        }
    assert_int_equal(knut_viewer_layout(g, &err), KNUT_OK);
    check_geometry(g);
    knut_viewer_graph_free(g);
}

/* Ties go by name with digit runs read as numbers: a Spark job's
 * "stage 2", "stage 9", "stage 10" stand in that order, whatever order
 * they were added in; leading zeros and plain text still order totally. */
static void test_viewer_layout__ties_in_natural_order(void **state)
{
    (void)state;
    /* (build splits its edge list on spaces: names without them) */
    static const char *const names[] = {"stage10", "stage9", "result", "stage2", "stage010",
                                        "stage1a", "stage"};
    for (int rev = 0; rev < 2; rev++) {
        knut_viewer_graph *g = build(names, 7,
                                     "stage10>result stage9>result stage2>result "
                                     "stage010>result stage1a>result stage>result",
                                     rev);
        static const char *const want[] = {"stage", "stage1a", "stage2", "stage9", "stage010",
                                           "stage10"};
        for (int i = 0; i < 6; i++)
            assert_int_equal(node(g, want[i])->order, i);
        knut_viewer_graph_free(g);
    }
}

static void test_viewer_layout__errors(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    knut_viewer_graph *g = NULL;
    assert_int_equal(knut_viewer_graph_new(&g, NULL, &err), KNUT_OK);
    size_t a, b, c;
    assert_int_equal(knut_viewer_graph_add_node(g, "a", NULL, NULL, NULL, &a, &err), KNUT_OK);
    assert_int_equal(knut_viewer_graph_add_node(g, "a", NULL, NULL, NULL, NULL, &err),
                     KNUT_EINVAL);
    assert_non_null(strstr(err.message, "'a' added twice"));
    assert_int_equal(knut_viewer_graph_add_node(g, "", NULL, NULL, NULL, NULL, &err),
                     KNUT_EINVAL);
    assert_int_equal(knut_viewer_graph_add_node(g, "b", NULL, NULL, NULL, &b, &err), KNUT_OK);
    assert_int_equal(knut_viewer_graph_add_node(g, "c", NULL, NULL, NULL, &c, &err), KNUT_OK);
    assert_int_equal(knut_viewer_graph_add_edge(g, a, a, NULL, &err), KNUT_EINVAL);
    assert_int_equal(knut_viewer_graph_add_edge(g, a, 9, NULL, &err), KNUT_EINVAL);
    knut_buf out = KNUT_BUF_INIT;
    assert_int_equal(knut_viewer_graph_json(g, &out, &err), KNUT_EINVAL); /* not laid out */
    assert_int_equal(knut_viewer_graph_add_edge(g, a, b, "cdc", &err), KNUT_OK);
    assert_int_equal(knut_viewer_graph_add_edge(g, a, b, "batch", &err), KNUT_OK); /* dropped */
    assert_int_equal(g->nedges, 1);
    assert_string_equal(g->edges[0].label, "cdc");
    assert_int_equal(knut_viewer_graph_add_edge(g, b, c, NULL, &err), KNUT_OK);
    assert_int_equal(knut_viewer_graph_add_edge(g, c, a, NULL, &err), KNUT_OK);
    assert_int_equal(knut_viewer_layout(g, &err), KNUT_EINVAL);
    assert_non_null(strstr(err.message, "cycle"));
    assert_false(g->laid_out);
    knut_buf_reset(&out);
    knut_viewer_graph_free(g);
    /* the empty graph lays out */
    assert_int_equal(knut_viewer_graph_new(&g, "empty", &err), KNUT_OK);
    assert_int_equal(knut_viewer_layout(g, &err), KNUT_OK);
    assert_int_equal(g->nlayers, 0);
    knut_viewer_graph_free(g);
}

/* A real pipeline: streaming, CDC and batch reads become edge labels. */
static void test_viewer_layout__from_pipeline(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    knut_pipeline *p = NULL;
    const char *sql =
        "CREATE STREAMING TABLE changes AS SELECT * FROM read_json('in/*.json');\n"
        "CREATE STREAMING TABLE customers;\n"
        "CREATE FLOW apply AS AUTO CDC INTO customers FROM STREAM(changes) KEYS (id)\n"
        "  SEQUENCE BY seq STORED AS SCD TYPE 1;\n"
        "CREATE STREAMING TABLE copy AS SELECT * FROM STREAM(changes);\n"
        "CREATE MATERIALIZED VIEW <b&> AS SELECT count(*) AS n FROM customers;\n";
    assert_int_equal(knut_pipeline_new(&p, "demo", "st", &err), KNUT_OK);
    knut_status st = knut_pipeline_parse_sql(p, sql, strlen(sql), "f.sql", &err);
    if (st != KNUT_OK) { /* "<b&>" is not a name: the same without it */
        knut_pipeline_free(p);
        p = NULL;
        sql = "CREATE STREAMING TABLE changes AS SELECT * FROM read_json('in/*.json');\n"
              "CREATE STREAMING TABLE customers;\n"
              "CREATE FLOW apply AS AUTO CDC INTO customers FROM STREAM(changes) KEYS (id)\n"
              "  SEQUENCE BY seq STORED AS SCD TYPE 1;\n"
              "CREATE STREAMING TABLE copy AS SELECT * FROM STREAM(changes);\n"
              "CREATE MATERIALIZED VIEW \"<b&>\" AS SELECT count(*) AS n FROM customers;\n";
        assert_int_equal(knut_pipeline_new(&p, "demo", "st", &err), KNUT_OK);
        st = knut_pipeline_parse_sql(p, sql, strlen(sql), "f.sql", &err);
        if (st != KNUT_OK)
            fail_msg("parse: %s", err.message);
    }
    knut_viewer_graph *g = NULL;
    assert_int_equal(knut_viewer_graph_from_pipeline(&g, p, &err), KNUT_EINVAL); /* unresolved */
    if (knut_pipeline_resolve(p, &err) != KNUT_OK)
        fail_msg("resolve: %s", err.message);
    if (knut_viewer_graph_from_pipeline(&g, p, &err) != KNUT_OK)
        fail_msg("graph: %s", err.message);
    assert_int_equal(g->nnodes, 4);
    assert_int_equal(g->nedges, 3);
    check_geometry(g);
    size_t changes = knut_viewer_graph_find(g, "changes"), apply = knut_viewer_graph_find(g, "apply");
    size_t copy = knut_viewer_graph_find(g, "copy");
    int seen = 0;
    for (size_t e = 0; e < g->nedges; e++) {
        const knut_viewer_edge *ed = &g->edges[e];
        if (ed->from == changes && ed->to == apply) {
            assert_string_equal(ed->label, "cdc");
            seen |= 1;
        } else if (ed->from == changes && ed->to == copy) {
            assert_string_equal(ed->label, "streaming");
            seen |= 2;
        } else if (ed->from == apply) {
            assert_string_equal(ed->label, "batch");
            seen |= 4;
        }
    }
    assert_int_equal(seen, 7);
    assert_string_equal(node(g, "changes")->flow_kind, "streaming");
    assert_string_equal(node(g, "changes")->kind, "streaming_table");
    knut_buf b = KNUT_BUF_INIT;
    assert_int_equal(knut_viewer_graph_svg(g, &b, &err), KNUT_OK);
    assert_non_null(strstr(b.data, "<svg xmlns=\"http://www.w3.org/2000/svg\""));
    assert_non_null(strstr(b.data, "&lt;b&amp;&gt;")); /* names are escaped */
    assert_null(strstr(b.data, "<b&>"));
    assert_non_null(strstr(b.data, "stroke-dasharray=\"2 3\"")); /* the cdc edge */
    assert_non_null(strstr(b.data, "</svg>\n"));
    knut_buf_clear(&b);
    assert_int_equal(knut_viewer_graph_json(g, &b, &err), KNUT_OK);
    assert_non_null(strstr(b.data, "\"from\":\"changes\",\"to\":\"apply\",\"label\":\"cdc\""));
    knut_buf_reset(&b);
    knut_viewer_graph_free(g);
    knut_pipeline_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_viewer_layout__layers_are_longest_paths),
        cmocka_unit_test(test_viewer_layout__crossings_removed),
        cmocka_unit_test(test_viewer_layout__deterministic),
        cmocka_unit_test(test_viewer_layout__wide_graph_no_overlaps),
        cmocka_unit_test(test_viewer_layout__ties_in_natural_order),
        cmocka_unit_test(test_viewer_layout__errors),
        cmocka_unit_test(test_viewer_layout__from_pipeline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
