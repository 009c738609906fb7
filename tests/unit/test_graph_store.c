/*
 * Unit tests of the embedded graph store (src/graph/store*.c): upsert
 * idempotence, multi-label membership, composite keys, null keys, edges to
 * missing endpoints, deletes with incident edges, schema evolution and type
 * conflicts, the commit callback inside the transaction, reopening, and a
 * child SIGKILLed in the middle of a large mutation (all or nothing).
 */
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "graph_fixture.h"
#include "knut/duck.h"
#include "knut/graphar.h"

/* A struct batch from a type string ('i' int64, 'I' int32, 's' utf8,
 * 'd' double) and row-major cells (NULL = null) as text. */
static void mk(struct ArrowArrayStream *out, const char *types, const char *const *names,
               int nrows, const char *const *cells)
{
    int nc = (int)strlen(types);
    knut_arrow_builder *root = fx_col(KNUT_ARROW_STRUCT, "");
    for (int c = 0; c < nc; c++) {
        knut_arrow_type t = types[c] == 'i'   ? KNUT_ARROW_INT64
                            : types[c] == 'I' ? KNUT_ARROW_INT32
                            : types[c] == 'd' ? KNUT_ARROW_DOUBLE
                                              : KNUT_ARROW_UTF8;
        OK(knut_arrow_builder_add_child(root, fx_col(t, names[c]), &e_));
    }
    for (int r = 0; r < nrows; r++) {
        for (int c = 0; c < nc; c++) {
            knut_arrow_builder *b = knut_arrow_builder_child(root, c);
            const char *v = cells[r * nc + c];
            if (!v)
                OK(knut_arrow_builder_append_null(b, &e_));
            else if (types[c] == 's')
                OK(knut_arrow_builder_append_bytes(b, v, strlen(v), &e_));
            else if (types[c] == 'd')
                OK(knut_arrow_builder_append_double(b, strtod(v, NULL), &e_));
            else
                OK(knut_arrow_builder_append_int(b, strtoll(v, NULL, 10), &e_));
        }
        OK(knut_arrow_builder_finish_element(root, &e_));
    }
    fx_arr a;
    fx_finish(&a, root);
    fx_stream(out, &a);
}

static void add_vertices(knut_graph_mutation *m, const char *const *labels, size_t nl,
                         const char *const *keys, size_t nk, const char *types,
                         const char *const *names, int nrows, const char *const *cells)
{
    knut_graph_vertex_set vs = KNUT_GRAPH_VERTEX_SET_INIT;
    vs.labels = labels;
    vs.n_labels = nl;
    vs.keys = keys;
    vs.n_keys = nk;
    vs.all_props = 1;
    mk(&vs.stream, types, names, nrows, cells);
    OK(knut_graph_mutation_add_vertex_set(m, &vs, &e_));
}

/* Edges (src id, dst id, props...) between labels keyed on "id". */
static int edge_policy = KNUT_GRAPH_MISSING_SKIP; /* of the edge sets add_edges makes */

static void add_edges(knut_graph_mutation *m, const char *type, const char *sl, const char *dl,
                      const char *types, const char *const *names, int nrows,
                      const char *const *cells)
{
    static const char *const id[] = {"id"}, *const scol[] = {"src"}, *const dcol[] = {"dst"};
    knut_graph_edge_set es = KNUT_GRAPH_EDGE_SET_INIT;
    es.missing_endpoints = edge_policy;
    es.type = type;
    es.src = (knut_graph_endpoint){sl, id, scol, 1};
    es.dst = (knut_graph_endpoint){dl, id, dcol, 1};
    es.all_props = 1;
    mk(&es.stream, types, names, nrows, cells);
    OK(knut_graph_mutation_add_edge_set(m, &es, &e_));
}

static void add_deletes(knut_graph_mutation *m, const char *label, int nrows,
                        const char *const *ids)
{
    static const char *const id[] = {"id"};
    knut_graph_delete_set ds = KNUT_GRAPH_DELETE_SET_INIT;
    ds.label = label;
    ds.keys = id;
    ds.n_keys = 1;
    mk(&ds.stream, "i", id, nrows, ids);
    OK(knut_graph_mutation_add_delete_set(m, &ds, &e_));
}

static knut_graph_mutation *mut(void)
{
    knut_graph_mutation *m = NULL;
    OK(knut_graph_mutation_new(&m, &e_));
    return m;
}

static knut_status apply(knut_graph_store *s, knut_graph_mutation *m,
                         const knut_graph_sink_commit *c, knut_graph_sink_stats *st,
                         knut_error *err)
{
    knut_status r = knut_graph_sink_apply(knut_graph_store_sink(s), m, c, st, err);
    knut_graph_mutation_free(m);
    return r;
}

/* First column of the first row, as text ("NULL" for null). */
static char *q(knut_graph_store *s, const char *sql)
{
    struct ArrowArrayStream st;
    struct ArrowSchema schema;
    struct ArrowArray *arrays = NULL;
    int64_t n = 0;
    knut_arrow_view v;
    OK(knut_graph_store_query(s, sql, &st, &e_));
    OK(knut_arrow_stream_collect(&st, &schema, &arrays, &n, 0, &e_));
    knut_arrow_stream_release(&st);
    assert_true(n >= 1);
    OK(knut_arrow_view_init(&v, &schema, &arrays[0], &e_));
    const knut_arrow_view *c = &v.children[0];
    char buf[256];
    int64_t len = 0;
    if (knut_arrow_view_is_null(c, 0))
        snprintf(buf, sizeof buf, "NULL");
    else if (c->type.type == KNUT_ARROW_UTF8 || c->type.type == KNUT_ARROW_LARGE_UTF8) {
        const char *p = knut_arrow_view_get_str(c, 0, &len);
        snprintf(buf, sizeof buf, "%.*s", (int)len, p);
    } else
        snprintf(buf, sizeof buf, "%lld", (long long)knut_arrow_view_get_int64(c, 0));
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

static const char *const PERSON[] = {"Person", "Employee"};
static const char *const ID[] = {"id"};
static const char *const PCOLS[] = {"id", "name", "age"};

static void people(knut_graph_mutation *m)
{
    static const char *const rows[] = {"1", "ann", "30", "2", "bob", NULL, "3", "cy", "40"};
    add_vertices(m, PERSON, 2, ID, 1, "isi", PCOLS, 3, rows);
}

static void test_upsert_idempotent_multilabel(void **state)
{
    (void)state;
    knut_graph_store *s;
    knut_graph_sink_stats st;
    OK(knut_graph_store_open(&s, NULL, &e_));
    for (int round = 0; round < 2; round++) {
        knut_graph_mutation *m = mut();
        people(m);
        OK(apply(s, m, NULL, &st, &e_));
        assert_int_equal(3, st.vertices_written);
        assert_int_equal(3, st.rows);
    }
    expect(s, "SELECT count(*) FROM v_Person", "3");
    expect(s, "SELECT string_agg(name, ',' ORDER BY id) FROM v_Person", "ann,bob,cy");
    expect(s, "SELECT count(*) FROM _knut_vertex_labels_of", "6");
    expect(s, "SELECT count(*) FROM _knut_vertex_labels_of WHERE label = 'Employee'", "3");
    expect(s, "SELECT count(DISTINCT _knut_vid) FROM v_Person", "3");
    /* A null property sets the column NULL (FalkorDB removes it). */
    knut_graph_mutation *m = mut();
    static const char *const upd[] = {"1", "ann", NULL};
    add_vertices(m, PERSON, 1, ID, 1, "isi", PCOLS, 1, upd);
    OK(apply(s, m, NULL, NULL, &e_));
    expect(s, "SELECT coalesce(age::VARCHAR, 'NULL') FROM v_Person WHERE id = 1", "NULL");
    knut_graph_store_close(s);
}

static void test_composite_and_dups(void **state)
{
    (void)state;
    knut_graph_store *s;
    OK(knut_graph_store_open(&s, NULL, &e_));
    static const char *const city[] = {"City"}, *const keys[] = {"country", "name"};
    static const char *const cols[] = {"country", "name", "pop"};
    static const char *const rows[] = {"fr", "paris", "1", "us", "paris", "2", "fr", "paris", "3"};
    knut_graph_mutation *m = mut();
    add_vertices(m, city, 1, keys, 2, "ssi", cols, 3, rows);
    OK(apply(s, m, NULL, NULL, &e_));
    expect(s, "SELECT count(*) FROM v_City", "2");
    /* Duplicate keys in one batch: the last row wins. */
    expect(s, "SELECT pop FROM v_City WHERE country = 'fr'", "3");
    expect(s, "SELECT keys FROM _knut_vertex_labels WHERE label = 'City'", "[\"country\",\"name\"]");
    knut_graph_store_close(s);
}

static void test_null_key(void **state)
{
    (void)state;
    knut_graph_store *s;
    knut_error err = KNUT_ERROR_INIT;
    OK(knut_graph_store_open(&s, NULL, &e_));
    static const char *const rows[] = {"1", "a", "1", NULL, "b", "2"};
    knut_graph_mutation *m = mut();
    add_vertices(m, PERSON, 1, ID, 1, "isi", PCOLS, 2, rows);
    assert_int_equal(KNUT_EINVAL, apply(s, m, NULL, NULL, &err));
    fx_expect_msg(&err, "set 'Person': row 1, column 'id'", "key is null");
    /* Rolled back: not even the table exists. */
    expect(s, "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'v_Person'", "0");
    knut_graph_store_close(s);
}

static void test_edges_and_deletes(void **state)
{
    (void)state;
    knut_graph_store *s;
    knut_graph_sink_stats st;
    OK(knut_graph_store_open(&s, NULL, &e_));
    static const char *const ecols[] = {"src", "dst", "since"};
    static const char *const knows[] = {"1", "2", "2001", "2", "3", "2002", "1", "9", "2003",
                                        "8", "9", "2004"};
    static const char *const likes[] = {"3", "1", "1", "2", "1", "2"};
    knut_graph_mutation *m = mut();
    people(m);
    add_edges(m, "KNOWS", "Person", "Person", "iii", ecols, 4, knows);
    add_edges(m, "LIKES", "Person", "Person", "iii", ecols, 2, likes);
    memset(&st, 0, sizeof st);
    OK(knut_graph_sink_apply(knut_graph_store_sink(s), m, NULL, &st, &e_));
    assert_int_equal(4, st.edges_written);
    assert_int_equal(2, st.edges_skipped);
    assert_int_equal(2, knut_graph_store_edges_skipped(s));
    /* the skipped rows, per set, with the vertices they name that are missing */
    const knut_graph_set *ks = knut_graph_mutation_get(m, KNUT_GRAPH_SET_EDGE, 0);
    assert_int_equal(2, ks->skipped);
    assert_string_equal(ks->missing, "Person {id: 9}, Person {id: 8}, Person {id: 9}");
    assert_int_equal(0, knut_graph_mutation_get(m, KNUT_GRAPH_SET_EDGE, 1)->skipped);
    knut_graph_mutation_free(m);
    expect(s, "SELECT count(*) FROM e_KNOWS", "2");
    /* Upserting the same edges again changes nothing, and counts the same:
     * a matched edge is written too, as on FalkorDB. */
    m = mut();
    add_edges(m, "KNOWS", "Person", "Person", "iii", ecols, 4, knows);
    memset(&st, 0, sizeof st);
    OK(apply(s, m, NULL, &st, &e_));
    assert_int_equal(2, st.edges_written);
    expect(s, "SELECT count(*) FROM e_KNOWS", "2");
    /* missing_endpoints FAIL: the apply fails naming the first missing
     * vertex, detail KNUT_GRAPH_ERR_MISSING_ENDPOINT, and rolls back */
    static const char *const more[] = {"3", "2", "2005", "1", "9", "2006"};
    edge_policy = KNUT_GRAPH_MISSING_FAIL;
    m = mut();
    add_edges(m, "KNOWS", "Person", "Person", "iii", ecols, 2, more);
    edge_policy = KNUT_GRAPH_MISSING_SKIP;
    knut_error ferr = KNUT_ERROR_INIT;
    assert_int_equal(KNUT_EINVAL, apply(s, m, NULL, &st, &ferr));
    assert_int_equal(KNUT_GRAPH_ERR_MISSING_ENDPOINT, ferr.detail);
    assert_non_null(strstr(ferr.message, "first missing: Person {id: 9}"));
    expect(s, "SELECT count(*) FROM e_KNOWS", "2");
    /* Deleting vertex 1 removes its edges in both edge tables. */
    static const char *const del[] = {"1"};
    m = mut();
    add_deletes(m, "Person", 1, del);
    OK(apply(s, m, NULL, &st, &e_));
    assert_int_equal(1, st.vertices_deleted);
    assert_int_equal(3, st.edges_deleted); /* 1->2 KNOWS, 3->1 and 2->1 LIKES */
    expect(s, "SELECT count(*) FROM e_KNOWS", "1");
    expect(s, "SELECT count(*) FROM e_LIKES", "0");
    expect(s, "SELECT count(*) FROM v_Person", "2");
    expect(s, "SELECT count(*) FROM _knut_vertex_labels_of", "4");
    knut_graph_store_close(s);
}

static void test_schema_evolution(void **state)
{
    (void)state;
    knut_graph_store *s;
    knut_error err = KNUT_ERROR_INIT;
    OK(knut_graph_store_open(&s, NULL, &e_));
    knut_graph_mutation *m = mut();
    people(m);
    OK(apply(s, m, NULL, NULL, &e_));
    /* A new column; an INTEGER into a BIGINT column is a safe widening. */
    static const char *const cols[] = {"id", "age", "email"};
    static const char *const rows[] = {"4", "50", "d@x"};
    m = mut();
    add_vertices(m, PERSON, 1, ID, 1, "iIs", cols, 1, rows);
    OK(apply(s, m, NULL, NULL, &e_));
    expect(s, "SELECT email FROM v_Person WHERE id = 4", "d@x");
    expect(s, "SELECT data_type FROM duckdb_columns() WHERE table_name = 'v_Person' AND "
              "column_name = 'age'", "BIGINT");
    /* VARCHAR into BIGINT is not. */
    static const char *const bad[] = {"5", "old"};
    static const char *const bcols[] = {"id", "age"};
    m = mut();
    add_vertices(m, PERSON, 1, ID, 1, "is", bcols, 1, bad);
    assert_int_equal(KNUT_EINVAL, apply(s, m, NULL, NULL, &err));
    fx_expect_msg(&err, "vertex set 'Person': column 'age'", "stored as BIGINT, the set has VARCHAR");
    expect(s, "SELECT count(*) FROM v_Person", "4");
    knut_graph_store_close(s);
}

typedef struct ledger {
    int64_t seq;
    int fail;
} ledger;

static knut_status ledger_commit(void *ctx, knut_duck_conn *conn, knut_error *err)
{
    ledger *l = ctx;
    knut_duck_stmt *st = NULL;
    knut_status r = knut_duck_exec(conn, "CREATE TABLE IF NOT EXISTS ledger (seq BIGINT)", err);
    if (r == KNUT_OK)
        r = knut_duck_stmt_prepare(&st, conn, "INSERT INTO ledger VALUES ($1)", err);
    if (r == KNUT_OK)
        r = knut_duck_stmt_bind_int64(st, 1, l->seq, err);
    if (r == KNUT_OK)
        r = knut_duck_stmt_exec(st, NULL, err);
    knut_duck_stmt_free(st);
    if (r == KNUT_OK && l->fail)
        r = knut_error_set(err, KNUT_EIO, "ledger unavailable");
    return r;
}

static void test_commit_callback_and_reopen(void **state)
{
    (void)state;
    char path[] = "/tmp/knut_gstore_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    unlink(path);
    knut_graph_store *s;
    knut_error err = KNUT_ERROR_INIT;
    OK(knut_graph_store_open(&s, path, &e_));
    ledger l = {1, 0};
    knut_graph_sink_commit c = {ledger_commit, &l};
    knut_graph_mutation *m = mut();
    people(m);
    OK(apply(s, m, &c, NULL, &e_));
    expect(s, "SELECT max(seq) FROM ledger", "1");
    /* A failing callback rolls back the mutation and its ledger row. */
    l.seq = 2;
    l.fail = 1;
    static const char *const rows[] = {"7", "zed", "70"};
    m = mut();
    add_vertices(m, PERSON, 1, ID, 1, "isi", PCOLS, 1, rows);
    assert_int_equal(KNUT_EIO, apply(s, m, &c, NULL, &err));
    fx_expect_msg(&err, "commit callback", "ledger unavailable");
    expect(s, "SELECT max(seq) FROM ledger", "1");
    expect(s, "SELECT count(*) FROM v_Person", "3");
    knut_graph_store_close(s);
    /* Everything survives a reopen. */
    OK(knut_graph_store_open(&s, path, &e_));
    expect(s, "SELECT count(*) FROM v_Person", "3");
    expect(s, "SELECT count(*) FROM _knut_vertex_labels_of", "6");
    expect(s, "SELECT max(seq) FROM ledger", "1");
    /* The sequence goes on: a new vertex gets a fresh id. */
    l.fail = 0;
    m = mut();
    add_vertices(m, PERSON, 1, ID, 1, "isi", PCOLS, 1, rows);
    OK(apply(s, m, &c, NULL, &e_));
    expect(s, "SELECT count(DISTINCT _knut_vid) FROM v_Person", "4");
    knut_graph_store_close(s);
    unlink(path);
    char wal[64];
    snprintf(wal, sizeof wal, "%s.wal", path);
    unlink(wal);
}

/* DuckDB 1.4.4 cannot replay a WAL holding ALTER TABLE ADD COLUMN on a
 * table with a DEFAULT nextval(...) column: a store killed after schema
 * evolution must still reopen. The child exits without closing (no
 * checkpoint), as a kill -9 would leave it. */
static void test_reopen_after_crash_with_new_column(void **state)
{
    (void)state;
    char path[] = "/tmp/knut_gwal_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    unlink(path);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        knut_graph_store *s;
        knut_error err = KNUT_ERROR_INIT;
        static const char *const two[] = {"id", "name"};
        static const char *const r1[] = {"1", "ada"};
        static const char *const r2[] = {"2", "bob", "42"};
        if (knut_graph_store_open(&s, path, &err) != KNUT_OK)
            _exit(3);
        knut_graph_mutation *m = mut();
        add_vertices(m, PERSON, 1, ID, 1, "is", two, 1, r1);
        if (apply(s, m, NULL, NULL, &err) != KNUT_OK)
            _exit(4);
        m = mut();
        add_vertices(m, PERSON, 1, ID, 1, "isi", PCOLS, 1, r2); /* adds column age */
        if (apply(s, m, NULL, NULL, &err) != KNUT_OK)
            _exit(5);
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    knut_graph_store *s;
    OK(knut_graph_store_open(&s, path, &e_));
    expect(s, "SELECT count(*) FROM v_Person", "2");
    expect(s, "SELECT age FROM v_Person WHERE id = 2", "42");
    knut_graph_store_close(s);
    unlink(path);
    char wal[64];
    snprintf(wal, sizeof wal, "%s.wal", path);
    unlink(wal);
}

/* The child applies many batches; the parent kills it part-way. */
static void big_apply(const char *path, int64_t seq)
{
    knut_graph_store *s;
    knut_graph_sink_stats st;
    knut_error err = KNUT_ERROR_INIT;
    if (knut_graph_store_open(&s, path, &err) != KNUT_OK)
        _exit(3);
    knut_graph_mutation *m = mut();
    for (int b = 0; b < 400; b++) {
        char *cells[3 * 500];
        for (int r = 0; r < 500; r++) {
            char buf[32];
            snprintf(buf, sizeof buf, "%d", b * 500 + r);
            cells[r * 3] = strdup(buf);
            cells[r * 3 + 1] = strdup("n");
            cells[r * 3 + 2] = strdup(buf);
        }
        add_vertices(m, PERSON, 1, ID, 1, "isi", PCOLS, 500, (const char *const *)cells);
        for (int i = 0; i < 1500; i++)
            free(cells[i]);
    }
    ledger l = {seq, 0};
    knut_graph_sink_commit c = {ledger_commit, &l};
    knut_status r = apply(s, m, &c, &st, &err);
    knut_graph_store_close(s);
    _exit(r == KNUT_OK ? 0 : 4);
}

static void test_crash_all_or_nothing(void **state)
{
    (void)state;
#ifdef KNUT_TSAN_BUILD
    /* Not under ThreadSanitizer: up to nine forked children each apply
     * 200k rows before being killed, minutes under TSan, and what it
     * checks is DuckDB's crash atomicity, not knut's threads (the plain
     * and ASan runs keep it). */
    skip();
#endif
    char path[] = "/tmp/knut_gcrash_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    unlink(path);
    /* Kill after increasing delays until one run completes; every run
     * must leave all of its mutation or none of it. */
    int completed = 0;
    for (int attempt = 0; attempt < 8 && !completed; attempt++) {
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
            big_apply(path, attempt + 1);
        usleep((useconds_t)(150000 * (1 << attempt)));
        kill(pid, SIGKILL);
        int status = 0;
        waitpid(pid, &status, 0);
        completed = WIFEXITED(status) && WEXITSTATUS(status) == 0;
        knut_graph_store *s;
        OK(knut_graph_store_open(&s, path, &e_));
        char *rows = q(s, "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'v_Person'");
        int have_table = strcmp(rows, "1") == 0;
        free(rows);
        if (have_table) {
            expect(s, "SELECT count(*) FROM v_Person", "200000");
            expect(s, "SELECT count(*) FROM ledger", "1");
            completed = 1; /* a committed run: later ones would only upsert */
        } else {
            expect(s, "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'ledger'", "0");
        }
        knut_graph_store_close(s);
    }
    if (!completed) {
        /* A slow machine (sanitizer builds) may never finish inside the
         * kill window: let one run complete, so the committed state is
         * checked too, without making the test depend on timing. */
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
            big_apply(path, 99);
        int status = 0;
        waitpid(pid, &status, 0);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        knut_graph_store *s;
        OK(knut_graph_store_open(&s, path, &e_));
        expect(s, "SELECT count(*) FROM v_Person", "200000");
        expect(s, "SELECT count(*) FROM ledger", "1");
        knut_graph_store_close(s);
    }
    unlink(path);
    char wal[64];
    snprintf(wal, sizeof wal, "%s.wal", path);
    unlink(wal);
}

static void test_list(void **state)
{
    (void)state;
    knut_graph_store *s;
    OK(knut_graph_store_open(&s, NULL, &e_));
    knut_graph_mutation *m = mut();
    people(m);
    static const char *const weird[] = {"Per son\"x"};
    static const char *const rows[] = {"1", "a", "1"};
    add_vertices(m, weird, 1, ID, 1, "isi", PCOLS, 1, rows);
    OK(apply(s, m, NULL, NULL, &e_));
    struct ArrowArrayStream st;
    int64_t n = 0;
    OK(knut_graph_store_list(s, &st, &e_));
    OK(knut_arrow_stream_count_rows(&st, &n, &e_));
    knut_arrow_stream_release(&st);
    assert_int_equal(2, n);
    expect(s, "SELECT table_name FROM _knut_vertex_labels WHERE label = 'Per son\"x'",
           "v_Per_son_x_9f378da2");
    knut_graph_store_close(s);
}

/* Export: the GraphAr validator finds no error; vertex counts match. */
static void test_export_graphar(void **state)
{
    (void)state;
    knut_graph_store *s;
    OK(knut_graph_store_open(&s, NULL, &e_));
    static const char *const ecols[] = {"src", "dst", "since"};
    static const char *const knows[] = {"1", "2", "2001", "2", "3", "2002"};
    knut_graph_mutation *m = mut();
    people(m);
    add_edges(m, "KNOWS", "Person", "Person", "iii", ecols, 2, knows);
    OK(apply(s, m, NULL, NULL, &e_));
    char dir[] = "/tmp/knut_gexport_XXXXXX";
    assert_non_null(mkdtemp(dir));
    knut_graph_store_export_options o = KNUT_GRAPH_STORE_EXPORT_OPTIONS_INIT;
    o.name = "g";
    o.vertex_chunk_size = 2;
    o.overwrite = 1;
    OK(knut_graph_store_export_graphar(s, dir, &o, &e_));
    char path[128];
    snprintf(path, sizeof path, "%s/g.graph.yml", dir);
    knut_graphar_issues *issues = NULL;
    OK(knut_graphar_validate(path, NULL, &issues, &e_));
    for (size_t i = 0; i < issues->n; i++)
        print_message("%s: %s\n", issues->items[i].rule, issues->items[i].message);
    assert_int_equal(0, issues->n_errors);
    knut_graphar_issues_free(issues);
    int64_t n = 0;
    snprintf(path, sizeof path, "%s/Person/vertex_count", dir);
    OK(knut_graphar_count_read(path, &n, &e_));
    assert_int_equal(3, n);
    knut_graph_store_close(s);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(0, system(cmd));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_upsert_idempotent_multilabel),
        cmocka_unit_test(test_composite_and_dups),
        cmocka_unit_test(test_null_key),
        cmocka_unit_test(test_edges_and_deletes),
        cmocka_unit_test(test_schema_evolution),
        cmocka_unit_test(test_commit_callback_and_reopen),
        cmocka_unit_test(test_crash_all_or_nothing),
        cmocka_unit_test(test_reopen_after_crash_with_new_column),
        cmocka_unit_test(test_list),
        cmocka_unit_test(test_export_graphar),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
