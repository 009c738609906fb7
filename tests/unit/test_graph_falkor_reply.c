/*
 * Unit tests for the FalkorDB compact-reply decoder, fed raw RESP2 bytes
 * built here (no server): every value type code into its Arrow type, name
 * resolution, the mixed-type policy, statistics, server errors at the top
 * level and inside the reply, malformed and truncated structure, the caps,
 * and the resumable RESP scanner that frames replies off the socket.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "graph/falkor_int.h"
#include "knut/arrow.h"
#include "knut/graph.h"

#define OK(expr)                                                          \
    do {                                                                  \
        knut_error e_ = KNUT_ERROR_INIT;                                  \
        knut_status s_ = (expr);                                          \
        if (s_ != KNUT_OK)                                                \
            fail_msg("%s -> %d: %s", #expr, (int)s_, e_.message);         \
    } while (0)

/* ---- RESP building ----------------------------------------------------- */

static knut_buf R = KNUT_BUF_INIT;

static void arr(int n) { knut_buf_printf(&R, "*%d\r\n", n); }
static void num(long long v) { knut_buf_printf(&R, ":%lld\r\n", v); }
static void str(const char *s) { knut_buf_printf(&R, "$%zu\r\n%s\r\n", strlen(s), s); }
static void nil(void) { knut_buf_puts(&R, "$-1\r\n"); }
static void cell_i(int code, long long v) { arr(2), num(code), num(v); }
static void cell_s(int code, const char *s) { arr(2), num(code), str(s); }
static void cell_null(void) { arr(2), num(1), nil(); }

static void header(int n, ...)
{
    va_list ap;
    va_start(ap, n);
    arr(n);
    for (int i = 0; i < n; i++) {
        arr(2);
        num(1);
        str(va_arg(ap, const char *));
    }
    va_end(ap);
}

static void stats(void)
{
    arr(2);
    str("Cached execution: 0");
    str("Query internal execution time: 0.500000 milliseconds");
}

/* Node 1 :Person:Admin {name: 'x', tags: [7]} (ids: labels 0,1; keys 0,2). */
static void node1(void)
{
    arr(3), num(1);
    arr(2), num(0), num(1);
    arr(2);
    arr(3), num(0), num(2), str("x");
    arr(3), num(2), num(6), arr(1), cell_i(3, 7);
}

/* Node 2 :Person {} */
static void node2(void)
{
    arr(3), num(2), arr(1), num(0), arr(0);
}

/* Edge 10 (1)-[:KNOWS {w: 2.5}]->(2) */
static void edge10(void)
{
    arr(5), num(10), num(0), num(1), num(2);
    arr(1), arr(3), num(1), num(5), str("2.5");
}

static const char *const LABELS[] = {"Person", "Admin"};
static const char *const TYPES[] = {"KNOWS"};
static const char *const KEYS[] = {"name", "w", "tags"};
static const knut_graph_falkor_names NAMES = {LABELS, 2, TYPES, 1, KEYS, 3};

static int setup(void **state)
{
    (void)state;
    knut_buf_init(&R, 0);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    knut_buf_reset(&R);
    return 0;
}

/* ---- decoding helpers -------------------------------------------------- */

typedef struct decoded {
    knut_graph_falkor_result res;
    struct ArrowSchema schema;
    struct ArrowArray *arrays;
    int64_t n;
    knut_arrow_view view; /* of arrays[0] */
} decoded;

static knut_status decode(decoded *d, const knut_graph_falkor_options *o, knut_error *e)
{
    memset(d, 0, sizeof *d);
    knut_status st = knut_graph_falkor_reply_decode(&d->res, R.data, R.len, &NAMES, o, e);
    if (st == KNUT_OK)
        st = knut_arrow_stream_collect(&d->res.stream, &d->schema, &d->arrays, &d->n, 0, e);
    if (st == KNUT_OK && d->n > 0)
        st = knut_arrow_view_init(&d->view, &d->schema, &d->arrays[0], e);
    return st;
}

static void decoded_free(decoded *d)
{
    if (d->n > 0)
        knut_arrow_view_reset(&d->view);
    knut_arrow_arrays_free(d->arrays, d->n);
    knut_arrow_schema_release(&d->schema);
    knut_graph_falkor_result_reset(&d->res);
}

static void expect_str(const knut_arrow_view *v, int64_t i, const char *want)
{
    int64_t len;
    const char *p = knut_arrow_view_get_str(v, i, &len);
    assert_false(knut_arrow_view_is_null(v, i));
    if ((size_t)len != strlen(want) || memcmp(p, want, (size_t)len) != 0)
        fail_msg("got '%.*s', want '%s'", (int)len, p, want);
}

static void expect_fail(knut_status want, const char *fragment, const knut_graph_falkor_options *o)
{
    knut_error e = KNUT_ERROR_INIT;
    knut_graph_falkor_result r;
    knut_status st = knut_graph_falkor_reply_decode(&r, R.data, R.len, &NAMES, o, &e);
    if (st != want || strstr(e.message, fragment) == NULL)
        fail_msg("status %d (want %d), message '%s' (want '%s')", (int)st, (int)want,
                 e.message, fragment);
    assert_null(r.stream.release);
    knut_buf_clear(&R);
}

/* ---- tests ------------------------------------------------------------- */

static void test_graph_falkor_reply__every_type(void **state)
{
    (void)state;
    static const char *const formats[] = {"n", "u", "l", "b", "g", "+l", "+s", "+s",
                                          "+s", "+m", "+s", "+l", "tss:", "tdD", "tts", "tDs"};
    arr(3);
    header(16, "null", "s", "i", "b", "d", "list", "edge", "node", "path", "map", "point",
           "vec", "dt", "date", "time", "dur");
    arr(1), arr(16);
    cell_null();
    cell_s(2, "h\xc3\xa9llo");
    cell_i(3, -42);
    cell_s(4, "true");
    cell_s(5, "0.333333333333333");
    arr(2), num(6), arr(3), cell_i(3, 1), cell_null(), cell_i(3, 3);
    arr(2), num(7), edge10();
    arr(2), num(8), node1();
    arr(2), num(9), arr(2);
    arr(2), num(6), arr(2), arr(2), num(8), node1(), arr(2), num(8), node2();
    arr(2), num(6), arr(1), arr(2), num(7), edge10();
    arr(2), num(10), arr(4), str("k"), cell_i(3, 1), str("m"), cell_null();
    arr(2), num(11), arr(2), str("1.5"), str("-2.25");
    arr(2), num(12), arr(2), str("1.100000023841858"), str("2.5");
    cell_i(13, 1709210096);
    cell_i(14, 1709164800);
    cell_i(15, -2208943504LL);
    cell_i(16, 93600);
    stats();

    decoded d;
    OK(decode(&d, NULL, &e_));
    assert_int_equal(d.res.n_rows, 1);
    assert_int_equal(d.res.n_columns, 16);
    assert_int_equal(d.n, 1);
    for (int c = 0; c < 16; c++)
        assert_string_equal(d.schema.children[c]->format, formats[c]);
    const knut_arrow_view *v = d.view.children, *x;
    assert_true(knut_arrow_view_is_null(&v[0], 0));
    expect_str(&v[1], 0, "h\xc3\xa9llo");
    assert_int_equal(knut_arrow_view_get_int64(&v[2], 0), -42);
    assert_true(knut_arrow_view_get_bool(&v[3], 0));
    assert_true(knut_arrow_view_get_double(&v[4], 0) == 0.333333333333333);
    int64_t s, e;
    knut_arrow_view_list_range(&v[5], 0, &s, &e);
    assert_int_equal(e - s, 3);
    assert_true(knut_arrow_view_is_null(&v[5].children[0], s + 1));
    assert_int_equal(knut_arrow_view_get_int64(&v[5].children[0], s + 2), 3);
    /* edge: id, type, src, dst, properties */
    x = v[6].children;
    assert_int_equal(knut_arrow_view_get_int64(&x[0], 0), 10);
    expect_str(&x[1], 0, "KNOWS");
    assert_int_equal(knut_arrow_view_get_int64(&x[2], 0), 1);
    assert_int_equal(knut_arrow_view_get_int64(&x[3], 0), 2);
    expect_str(&x[4], 0, "{\"w\":2.5}");
    /* node: id, labels, properties */
    x = v[7].children;
    assert_int_equal(knut_arrow_view_get_int64(&x[0], 0), 1);
    knut_arrow_view_list_range(&x[1], 0, &s, &e);
    assert_int_equal(e - s, 2);
    expect_str(&x[1].children[0], s, "Person");
    expect_str(&x[1].children[0], s + 1, "Admin");
    expect_str(&x[2], 0, "{\"name\":\"x\",\"tags\":[7]}");
    /* path: nodes [1, 2], edges [10] */
    knut_arrow_view_list_range(&v[8].children[0], 0, &s, &e);
    assert_int_equal(e - s, 2);
    assert_int_equal(knut_arrow_view_get_int64(&v[8].children[0].children[0].children[0], s + 1),
                     2);
    knut_arrow_view_list_range(&v[8].children[1], 0, &s, &e);
    assert_int_equal(e - s, 1);
    /* map<utf8, int64> {k: 1, m: null} */
    knut_arrow_view_list_range(&v[9], 0, &s, &e);
    assert_int_equal(e - s, 2);
    expect_str(&v[9].children[0].children[0], s + 1, "m");
    assert_int_equal(knut_arrow_view_get_int64(&v[9].children[0].children[1], s), 1);
    assert_true(knut_arrow_view_is_null(&v[9].children[0].children[1], s + 1));
    assert_true(knut_arrow_view_get_double(&v[10].children[1], 0) == -2.25);
    knut_arrow_view_list_range(&v[11], 0, &s, &e);
    assert_true(knut_arrow_view_get_double(&v[11].children[0], s) == (double)1.1f);
    assert_int_equal(knut_arrow_view_get_int64(&v[12], 0), 1709210096);
    assert_int_equal(knut_arrow_view_get_int64(&v[13], 0), 19782);
    assert_int_equal(knut_arrow_view_get_int64(&v[14], 0), 12 * 3600 + 34 * 60 + 56);
    assert_int_equal(knut_arrow_view_get_int64(&v[15], 0), 93600);
    assert_int_equal(d.res.stats.cached_execution, 0);
    assert_true(d.res.stats.execution_ms == 0.5);
    decoded_free(&d);
}

static void test_graph_falkor_reply__mixed_becomes_json_text(void **state)
{
    (void)state;
    arr(3);
    header(2, "x", "l");
    arr(5);
    arr(2), cell_i(3, 1), arr(2), num(6), arr(2), cell_i(3, 1), cell_s(2, "a");
    arr(2), cell_s(2, "a"), arr(2), num(6), arr(0);
    arr(2), cell_null(), cell_null();
    arr(2), arr(2), num(6), arr(1), cell_s(5, "nan"), arr(2), num(6), arr(1), cell_i(13, 0);
    arr(2), arr(2), num(8), node2(), arr(2), num(6), arr(1), cell_s(4, "false");
    stats();
    decoded d;
    OK(decode(&d, NULL, &e_));
    assert_string_equal(d.schema.children[0]->format, "u");
    assert_string_equal(d.schema.children[1]->format, "+l");
    assert_string_equal(d.schema.children[1]->children[0]->format, "u");
    const char *md;
    int32_t md_len;
    assert_true(knut_arrow_metadata_get(d.schema.children[0]->metadata, "knut.falkordb.kind",
                                        &md, &md_len));
    assert_int_equal(md_len, 5);
    assert_true(knut_arrow_metadata_get(d.schema.children[1]->children[0]->metadata,
                                        "knut.falkordb.kind", &md, &md_len));
    const knut_arrow_view *x = &d.view.children[0], *l = &d.view.children[1].children[0];
    expect_str(x, 0, "1");
    expect_str(x, 1, "\"a\"");
    assert_true(knut_arrow_view_is_null(x, 2));
    expect_str(x, 3, "[NaN]");
    expect_str(x, 4, "{\"id\":2,\"labels\":[\"Person\"],\"properties\":{}}");
    expect_str(l, 0, "1");
    expect_str(l, 1, "\"a\"");
    expect_str(l, 2, "\"1970-01-01T00:00:00\"");
    expect_str(l, 3, "false");
    decoded_free(&d);
}

static void test_graph_falkor_reply__nulls_empty_and_batches(void **state)
{
    (void)state;
    knut_graph_falkor_options o = KNUT_GRAPH_FALKOR_OPTIONS_INIT;
    o.batch_rows = 2;
    arr(3);
    header(2, "n", "l");
    arr(5);
    for (int i = 0; i < 5; i++) {
        arr(2), cell_null();
        if (i == 1)
            arr(2), num(6), arr(0);
        else if (i == 2)
            arr(2), num(6), arr(1), cell_i(3, i);
        else
            cell_null();
    }
    stats();
    decoded d;
    OK(decode(&d, &o, &e_));
    assert_int_equal(d.n, 3);
    assert_int_equal(d.arrays[0].length + d.arrays[1].length + d.arrays[2].length, 5);
    assert_int_equal(d.arrays[2].length, 1);
    assert_string_equal(d.schema.children[0]->format, "n");
    assert_string_equal(d.schema.children[1]->children[0]->format, "l");
    decoded_free(&d);
    /* Only nulls inside lists: list<null>. */
    knut_buf_clear(&R);
    arr(3), header(1, "l"), arr(1), arr(1), arr(2), num(6), arr(1), cell_null(), stats();
    OK(decode(&d, NULL, &e_));
    assert_string_equal(d.schema.children[0]->children[0]->format, "n");
    decoded_free(&d);
    /* No RETURN: [stats] gives a stream with no columns and no batch. */
    knut_buf_clear(&R);
    arr(1), arr(3), str("Nodes created: 2"), str("Cached execution: 1"),
        str("Query internal execution time: 1.250000 milliseconds");
    OK(decode(&d, NULL, &e_));
    assert_int_equal(d.res.n_columns, 0);
    assert_int_equal(d.n, 0);
    assert_int_equal(d.schema.n_children, 0);
    assert_int_equal(d.res.stats.nodes_created, 2);
    assert_int_equal(d.res.stats.cached_execution, 1);
    decoded_free(&d);
}

static void test_graph_falkor_reply__every_statistic(void **state)
{
    (void)state;
    static const char *const lines[] = {
        "Labels added: 1", "Labels removed: 2", "Nodes created: 3", "Properties set: 4",
        "Properties removed: 5", "Relationships created: 6", "Nodes deleted: 7",
        "Relationships deleted: 8", "Indices created: 9", "Indices deleted: 10",
        "Constraints created: 11", "Constraints deleted: 12", "Some future counter: 99",
        "Cached execution: 1", "Query internal execution time: 0.125000 milliseconds"};
    arr(1), arr(15);
    for (int i = 0; i < 15; i++)
        str(lines[i]);
    decoded d;
    OK(decode(&d, NULL, &e_));
    const knut_graph_falkor_stats *s = &d.res.stats;
    int64_t got[] = {s->labels_added, s->labels_removed, s->nodes_created, s->properties_set,
                     s->properties_removed, s->relationships_created, s->nodes_deleted,
                     s->relationships_deleted, s->indices_created, s->indices_deleted,
                     s->constraints_created, s->constraints_deleted};
    for (int i = 0; i < 12; i++)
        assert_int_equal(got[i], i + 1);
    assert_int_equal(s->cached_execution, 1);
    assert_true(s->execution_ms == 0.125);
    decoded_free(&d);
}

static void test_graph_falkor_reply__server_errors(void **state)
{
    (void)state;
    knut_buf_puts(&R, "-Division by zero\r\n");
    expect_fail(KNUT_EPEER, "falkordb reply: Division by zero", NULL);
    /* the legacy form: a runtime error as the last element */
    arr(3), header(1, "x"), arr(1), arr(1), cell_i(3, 1);
    knut_buf_puts(&R, "-Type mismatch: expected Integer\r\n");
    expect_fail(KNUT_EPEER, "Type mismatch: expected Integer", NULL);
    /* version mismatch: [error, current version] */
    knut_buf_puts(&R, "*2\r\n-version mismatch\r\n:7\r\n");
    expect_fail(KNUT_EPEER, "version mismatch", NULL);
}

/* Each server error text knut acts on, as FalkorDB 4 sends it, gets its
 * detail kind (and the message keeps the text). */
static void test_graph_falkor_reply__server_error_kinds(void **state)
{
    (void)state;
    static const struct {
        const char *reply;
        int kind;
    } cases[] = {
        {"-Attribute 'k' is already indexed\r\n", KNUT_GRAPH_FALKOR_ERR_INDEX_EXISTS},
        {"-ERR Invalid graph operation on empty key\r\n", KNUT_GRAPH_FALKOR_ERR_EMPTY_KEY},
        {"-errMsg: Invalid input 'R': expected RETURN line: 1, column: 4, offset: 3 errCtx: "
         "RETRN 1 errCtxOffset: 3\r\n",
         KNUT_GRAPH_FALKOR_ERR_SYNTAX},
        {"-Query timed out\r\n", KNUT_GRAPH_FALKOR_ERR_TIMEOUT},
        {"-Query's mem consumption exceeded capacity\r\n", KNUT_GRAPH_FALKOR_ERR_OOM},
        {"-OOM command not allowed when used memory > 'maxmemory'.\r\n",
         KNUT_GRAPH_FALKOR_ERR_OOM},
        {"-ERR unknown command 'GRAPH.QUERY', with args beginning with: \r\n",
         KNUT_GRAPH_FALKOR_ERR_UNKNOWN_COMMAND},
        {"-unique constraint violation on node of type P\r\n", KNUT_GRAPH_FALKOR_ERR_VALUE},
        {"-Cannot merge node using null property value\r\n", KNUT_GRAPH_FALKOR_ERR_VALUE},
        {"-Property values can only be of primitive types or arrays of primitive types\r\n",
         KNUT_GRAPH_FALKOR_ERR_VALUE},
        {"-Division by zero\r\n", KNUT_GRAPH_FALKOR_ERR_OTHER},
        /* a kind is matched where FalkorDB puts it, not anywhere */
        {"-'Query timed out' not defined\r\n", KNUT_GRAPH_FALKOR_ERR_OTHER},
        /* the legacy form: the error as the last element */
        {"*2\r\n*0\r\n-Query timed out\r\n", KNUT_GRAPH_FALKOR_ERR_TIMEOUT},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        knut_error e = KNUT_ERROR_INIT;
        knut_graph_falkor_result r;
        knut_buf_clear(&R);
        knut_buf_puts(&R, cases[i].reply);
        assert_int_equal(knut_graph_falkor_reply_decode(&r, R.data, R.len, &NAMES, NULL, &e),
                         KNUT_EPEER);
        if (e.detail != cases[i].kind)
            fail_msg("'%s': detail %#x, want %#x", cases[i].reply, e.detail, cases[i].kind);
    }
    knut_buf_clear(&R);
}

/* One malformed reply per line: what is wrong, and what the error says. */
static void test_graph_falkor_reply__malformed(void **state)
{
    (void)state;
    static const struct {
        const char *resp;
        knut_status st;
        const char *msg;
    } cases[] = {
        {"hello\r\n", KNUT_EPARSE, "not RESP2"},
        {"*3\r\n*0\r\n", KNUT_EPARSE, "incomplete"},
        {"*1\r\n*0\r\n:1\r\n", KNUT_EPARSE, "bytes after the reply"},
        {":12x\r\n", KNUT_EPARSE, "not RESP2"},
        {"$3\r\nabcd\r\n", KNUT_EPARSE, "not RESP2"},
        {"*2\r\n*0\r\n*0\r\n", KNUT_EPARSE, "2 elements"},
        {":5\r\n", KNUT_EPARSE, "not an array"},
        {"*3\r\n:1\r\n*0\r\n*0\r\n", KNUT_EPARSE, "header"},
        {"*3\r\n*1\r\n*2\r\n:1\r\n$1\r\nx\r\n*1\r\n*2\r\n*2\r\n:3\r\n:1\r\n*2\r\n:3\r\n:1\r\n*0\r\n",
         KNUT_EPARSE, "row 0: 2 values for 1 columns"},
        {"*3\r\n*1\r\n*2\r\n:1\r\n$1\r\nx\r\n*1\r\n*1\r\n*3\r\n:3\r\n:1\r\n:1\r\n*0\r\n",
         KNUT_EPARSE, "row 0, column 'x': a value is not a [type, value] pair"},
        {"*3\r\n*1\r\n*2\r\n:1\r\n$1\r\nx\r\n*1\r\n*1\r\n*2\r\n:99\r\n:1\r\n*0\r\n",
         KNUT_EUNSUPPORTED, "unknown value type 99"},
        {"*3\r\n*1\r\n*2\r\n:1\r\n$1\r\nx\r\n*1\r\n*1\r\n*2\r\n:0\r\n:1\r\n*0\r\n",
         KNUT_EUNSUPPORTED, "unknown value type 0"},
        {"*3\r\n*1\r\n*2\r\n:1\r\n$1\r\nx\r\n*1\r\n*1\r\n*2\r\n:4\r\n$3\r\nyes\r\n*0\r\n",
         KNUT_EPARSE, "boolean"},
        {"*3\r\n*1\r\n*2\r\n:1\r\n$1\r\nx\r\n*1\r\n*1\r\n*2\r\n:5\r\n$3\r\nabc\r\n*0\r\n",
         KNUT_EPARSE, "double is not a number"},
        {"*3\r\n*1\r\n*2\r\n:1\r\n$1\r\nx\r\n*1\r\n*1\r\n*2\r\n:2\r\n$2\r\n\xff\xfe\r\n*0\r\n",
         KNUT_EPARSE, "not valid UTF-8"},
        {"*3\r\n*1\r\n*2\r\n:1\r\n$1\r\nx\r\n*1\r\n*1\r\n*2\r\n:1\r\n:1\r\n*0\r\n", KNUT_EPARSE,
         "a null carries a value"},
        {"*3\r\n*1\r\n*2\r\n:1\r\n$1\r\nx\r\n*1\r\n*1\r\n*2\r\n:10\r\n*1\r\n$1\r\nk\r\n*0\r\n",
         KNUT_EPARSE, "flat key/value"},
        {"*3\r\n*1\r\n*2\r\n:1\r\n$1\r\nx\r\n*1\r\n*1\r\n*2\r\n:8\r\n*3\r\n:1\r\n*1\r\n:-1\r\n"
         "*0\r\n*0\r\n",
         KNUT_EPARSE, "negative label id"},
        {"*3\r\n*1\r\n*2\r\n:1\r\n$1\r\nx\r\n*1\r\n*1\r\n*2\r\n:8\r\n*3\r\n:1\r\n*1\r\n:5\r\n"
         "*0\r\n*0\r\n",
         KNUT_EPARSE, "row 0, column 'x': label id 5 is not among the 2 of db.labels()"},
        {"*3\r\n*1\r\n*2\r\n:1\r\n$1\r\nx\r\n*1\r\n*1\r\n*2\r\n:7\r\n*4\r\n:1\r\n:0\r\n:0\r\n"
         ":0\r\n*0\r\n",
         KNUT_EPARSE, "an edge is not"},
        {"*3\r\n*1\r\n*2\r\n:1\r\n$1\r\nx\r\n*1\r\n*1\r\n*2\r\n:9\r\n*2\r\n*2\r\n:6\r\n*1\r\n"
         "*2\r\n:7\r\n*0\r\n*2\r\n:6\r\n*0\r\n*0\r\n",
         KNUT_EPARSE, "a path holds a value of type 7"},
        {"*3\r\n*1\r\n*2\r\n:1\r\n$1\r\nx\r\n*1\r\n*1\r\n*2\r\n:11\r\n*1\r\n$1\r\n1\r\n*0\r\n",
         KNUT_EPARSE, "malformed point"},
        {"*1\r\n*1\r\n$16\r\nNodes created: x\r\n", KNUT_EPARSE, "is not a count"},
        {"*1\r\n*1\r\n:3\r\n", KNUT_EPARSE, "statistic is not a string"},
        {"*1000000000\r\n", KNUT_ETOOBIG, "byte cap"},
    };
    knut_graph_falkor_options o = KNUT_GRAPH_FALKOR_OPTIONS_INIT;
    o.max_reply_bytes = 1 << 20;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        knut_buf_puts(&R, cases[i].resp);
        expect_fail(cases[i].st, cases[i].msg, &o);
    }
    /* every prefix of a valid reply is an error, never a crash */
    arr(3), header(1, "n"), arr(1), arr(1), arr(2), num(8), node1(), stats();
    char *full = knut_buf_detach(&R, NULL);
    size_t n = strlen(full);
    knut_buf_init(&R, 0);
    for (size_t k = 0; k < n; k++) {
        knut_buf_append(&R, full, k);
        expect_fail(KNUT_EPARSE, "", NULL);
    }
    free(full);
}

static void test_graph_falkor_reply__depth_and_size_caps(void **state)
{
    (void)state;
    /* 20 nested lists: deeper than hiredis 0.14 can read, fine here */
    arr(3), header(1, "deep"), arr(1), arr(1);
    for (int i = 0; i < 20; i++)
        arr(2), num(6), arr(1);
    cell_i(3, 5);
    stats();
    decoded d;
    OK(decode(&d, NULL, &e_));
    const knut_arrow_view *v = &d.view.children[0];
    for (int i = 0; i < 20; i++)
        v = &v->children[0];
    assert_int_equal(knut_arrow_view_get_int64(v, 0), 5);
    decoded_free(&d);
    knut_graph_falkor_options o = KNUT_GRAPH_FALKOR_OPTIONS_INIT;
    o.max_depth = 16;
    knut_buf_clear(&R);
    arr(3), header(1, "deep"), arr(1), arr(1);
    for (int i = 0; i < 20; i++)
        arr(2), num(6), arr(1);
    cell_i(3, 5), stats();
    expect_fail(KNUT_ETOOBIG, "nested deeper than 16 arrays", &o);
    o.max_depth = 0;
    o.max_reply_bytes = 64;
    arr(3), header(1, "s"), arr(1), arr(1), cell_s(2, "0123456789012345678901234567890123456789"),
        stats();
    expect_fail(KNUT_ETOOBIG, "larger than the 64-byte cap", &o);
}

/* The scanner finds the same end whether bytes come at once or one by one,
 * and stops at the end of the first of two pipelined replies. */
static void test_graph_falkor_reply__frame_incremental(void **state)
{
    (void)state;
    knut_error e = KNUT_ERROR_INIT;
    falkor_frame f;
    size_t end = 0;
    arr(3), header(1, "n"), arr(1), arr(1), arr(2), num(8), node1(), stats();
    size_t first = R.len;
    knut_buf_puts(&R, "-second\r\n");
    knut_graph__falkor_frame_init(&f, 0, 0);
    for (size_t k = 1; k < first; k++)
        assert_int_equal(knut_graph__falkor_frame_scan(&f, R.data, k, &end, "p", &e),
                         KNUT_EAGAIN);
    assert_int_equal(knut_graph__falkor_frame_scan(&f, R.data, first, &end, "p", &e), KNUT_OK);
    assert_int_equal(end, first);
    assert_int_equal(knut_graph__falkor_frame_scan(&f, R.data, R.len, &end, "p", &e), KNUT_OK);
    assert_int_equal(end, first);
    assert_int_equal(knut_graph__falkor_frame_scan(&f, R.data + first, R.len - first, &end, "p",
                                                   &e),
                     KNUT_OK);
    assert_int_equal(end, R.len - first);
    /* the cursor skips a whole element */
    falkor_cur c = {R.data, R.data + first};
    falkor_item it;
    OK(knut_graph__falkor_cur_next(&c, &it));
    OK(knut_graph__falkor_cur_skip(&c, &it));
    assert_ptr_equal(c.p, R.data + first);
}

static void test_graph_falkor_reply__command_encoding(void **state)
{
    (void)state;
    const char *argv[] = {"GRAPH.QUERY", "g", "RETURN 'é'", "--compact"};
    OK(knut_graph__falkor_cmd_append(&R, 4, argv, &e_));
    assert_string_equal(R.data, "*4\r\n$11\r\nGRAPH.QUERY\r\n$1\r\ng\r\n$11\r\nRETURN 'é'\r\n"
                                "$9\r\n--compact\r\n");
    /* with lengths, arguments may hold a NUL (the sync ledger's fields) */
    static const char field[] = {'t', '\0', 'p'};
    const char *hset[] = {"HSET", "h", field};
    const size_t lens[] = {4, 1, sizeof field};
    knut_buf_clear(&R);
    OK(knut_graph__falkor_cmd_append_lens(&R, 3, hset, lens, &e_));
    assert_int_equal(R.len, 30);
    assert_memory_equal(R.data, "*3\r\n$4\r\nHSET\r\n$1\r\nh\r\n$3\r\nt\0p\r\n", 30);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_graph_falkor_reply__every_type, setup, teardown),
        cmocka_unit_test_setup_teardown(test_graph_falkor_reply__server_error_kinds, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_graph_falkor_reply__mixed_becomes_json_text, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_graph_falkor_reply__nulls_empty_and_batches, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_graph_falkor_reply__every_statistic, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_graph_falkor_reply__server_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_graph_falkor_reply__malformed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_graph_falkor_reply__depth_and_size_caps, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_graph_falkor_reply__frame_incremental, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_graph_falkor_reply__command_encoding, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
