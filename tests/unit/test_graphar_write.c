/*
 * Unit tests for the GraphAr writer (src/graphar/write*.c): a small graph
 * (10 vertices in chunks of 3, 25 edges in chunks of 4, all four adj-list
 * kinds, Parquet and CSV groups, every type including null, date,
 * timestamp and list) is written to a temp dir and read back through a
 * separate DuckDB: file names, row counts, index columns, column types,
 * sort order, offsets, counts, labels and property alignment with the
 * adj lists. Then the refusals: unknown endpoint keys (error and skip),
 * unconvertible values, duplicate and null keys, ORC, a non-empty output.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "knut/duck.h"
#include "knut/graphar.h"

#define NV 10
#define VCS 3
#define NE 25
#define ECS 4

/* ---- reading back ------------------------------------------------------ */

static knut_duck_db *chk_db;
static knut_duck_conn *chk;

static void sql_lit(knut_buf *b, const char *s)
{
    knut_buf_putc(b, '\'');
    for (; *s; s++) {
        if (*s == '\'')
            knut_buf_putc(b, '\'');
        knut_buf_putc(b, *s);
    }
    knut_buf_putc(b, '\'');
}

/* "read_parquet('p')" or "read_csv('p', header = true)" for a chunk file. */
static void reader(knut_buf *b, const char *path, int csv)
{
    knut_buf_puts(b, csv ? "read_csv(" : "read_parquet(");
    sql_lit(b, path);
    knut_buf_puts(b, csv ? ", header = true, auto_detect = true)" : ")");
}

/* Runs sql; returns the first column of every row as int64 in out (up to
 * max), -999 for nulls; the row count. */
static int64_t q_i64s(const char *sql, int64_t *out, int64_t max)
{
    struct ArrowArrayStream s;
    knut_error err = KNUT_ERROR_INIT;
    if (knut_duck_query(chk, sql, &s, &err) != KNUT_OK)
        fail_msg("%s\n  in: %s", err.message, sql);
    struct ArrowSchema schema;
    assert_int_equal(s.get_schema(&s, &schema), 0);
    int64_t n = 0;
    for (;;) {
        struct ArrowArray a;
        assert_int_equal(s.get_next(&s, &a), 0);
        if (!a.release)
            break;
        knut_arrow_view v;
        assert_int_equal(knut_arrow_view_init(&v, &schema, &a, &err), KNUT_OK);
        for (int64_t i = 0; i < v.length; i++, n++) {
            const knut_arrow_view *c = &v.children[0];
            int64_t r = knut_arrow_view_child_row(&v, i);
            if (n < max)
                out[n] = knut_arrow_view_is_null(c, r) ? -999 : knut_arrow_view_get_int64(c, r);
        }
        knut_arrow_view_reset(&v);
        a.release(&a);
    }
    schema.release(&schema);
    s.release(&s);
    return n;
}

static int64_t q_i64(const char *sql)
{
    int64_t v = -1;
    assert_int_equal(q_i64s(sql, &v, 1), 1);
    return v;
}

/* One VARCHAR value. */
static void q_str(const char *sql, char *out, size_t cap)
{
    struct ArrowArrayStream s;
    knut_error err = KNUT_ERROR_INIT;
    if (knut_duck_query(chk, sql, &s, &err) != KNUT_OK)
        fail_msg("%s\n  in: %s", err.message, sql);
    struct ArrowSchema schema;
    assert_int_equal(s.get_schema(&s, &schema), 0);
    struct ArrowArray a;
    assert_int_equal(s.get_next(&s, &a), 0);
    assert_non_null(a.release);
    knut_arrow_view v;
    assert_int_equal(knut_arrow_view_init(&v, &schema, &a, &err), KNUT_OK);
    int64_t len = 0;
    const char *p = knut_arrow_view_get_str(&v.children[0], knut_arrow_view_child_row(&v, 0), &len);
    snprintf(out, cap, "%.*s", (int)len, p ? p : "");
    knut_arrow_view_reset(&v);
    a.release(&a);
    schema.release(&schema);
    s.release(&s);
}

static int file_exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

static int64_t count_file(const char *path)
{
    int64_t v = -1;
    knut_error err = KNUT_ERROR_INIT;
    if (knut_graphar_count_read(path, &v, &err) != KNUT_OK)
        fail_msg("%s", err.message);
    return v;
}

/* The column types of a chunk file, comma-separated. */
static void types_of(const char *path, int csv, char *out, size_t cap)
{
    knut_buf b = KNUT_BUF_INIT;
    knut_buf_puts(&b, "SELECT string_agg(column_name || ':' || column_type, ',') FROM "
                      "(DESCRIBE SELECT * FROM ");
    reader(&b, path, csv);
    knut_buf_puts(&b, ")");
    q_str(b.data, out, cap);
    knut_buf_reset(&b);
}

/* Column col of a chunk file, in file order. */
static int64_t read_col(const char *path, int csv, const char *col, int64_t *out, int64_t max)
{
    knut_buf b = KNUT_BUF_INIT;
    knut_buf_printf(&b, "SELECT %s FROM ", col);
    reader(&b, path, csv);
    int64_t n = q_i64s(b.data, out, max);
    knut_buf_reset(&b);
    return n;
}

/* ---- the graph --------------------------------------------------------- */

static int src_of(int e)
{
    return e % NV;
}

static int dst_of(int e)
{
    return (e * 3 + 1 + e / 10) % NV;
}

static knut_graphar_graph_info *make_info(knut_graphar_file_type third)
{
    knut_error err = KNUT_ERROR_INIT;
    knut_graphar_graph_info *gi = NULL;
    knut_graphar_vertex_info *vi = NULL;
    knut_graphar_edge_info *ei = NULL;
    knut_graphar_property_group *g = NULL;
    assert_int_equal(knut_graphar_graph_info_new(&gi, "tiny", NULL, &err), KNUT_OK);
    assert_int_equal(knut_graphar_vertex_info_new(&vi, "person", VCS, "vertex/person/", &err), 0);
    assert_int_equal(knut_graphar_vertex_info_add_label(vi, "admin", &err), 0);
    assert_int_equal(knut_graphar_vertex_info_add_label(vi, "guest", &err), 0);
    assert_int_equal(knut_graphar_vertex_info_add_group(vi, KNUT_GRAPHAR_FILE_PARQUET, NULL, &g,
                                                        &err), 0);
    assert_int_equal(knut_graphar_group_add_property(g, "id", "int64", 1, 0,
                                                     KNUT_GRAPHAR_CARD_SINGLE, &err), 0);
    assert_int_equal(knut_graphar_group_add_property(g, "name", "string", 0, 1,
                                                     KNUT_GRAPHAR_CARD_SINGLE, &err), 0);
    assert_int_equal(knut_graphar_vertex_info_add_group(vi, KNUT_GRAPHAR_FILE_PARQUET, NULL, &g,
                                                        &err), 0);
    static const char *const more[][2] = {{"score", "double"}, {"born", "date"},
                                          {"seen", "timestamp"}, {"tags", "list<string>"},
                                          {"flag", "bool"}, {"n32", "int32"}, {"f32", "float"}};
    for (size_t i = 0; i < sizeof more / sizeof more[0]; i++)
        assert_int_equal(knut_graphar_group_add_property(g, more[i][0], more[i][1], 0, 1,
                                                         KNUT_GRAPHAR_CARD_SINGLE, &err), 0);
    assert_int_equal(knut_graphar_vertex_info_add_group(vi, third, NULL, &g, &err), 0);
    assert_int_equal(knut_graphar_group_add_property(g, "nick", "string", 0, 1,
                                                     KNUT_GRAPHAR_CARD_SINGLE, &err), 0);
    assert_int_equal(knut_graphar_group_add_property(g, "age", "int64", 0, 1,
                                                     KNUT_GRAPHAR_CARD_SINGLE, &err), 0);
    assert_int_equal(knut_graphar_graph_info_add_vertex(gi, vi, NULL, &err), 0);

    assert_int_equal(knut_graphar_edge_info_new(&ei, "person", "knows", "person", ECS, VCS, VCS,
                                                1, "edge/person_knows_person/", &err), 0);
    assert_int_equal(knut_graphar_edge_info_add_adj_list(ei, KNUT_GRAPHAR_ORDERED_BY_SOURCE,
                                                         KNUT_GRAPHAR_FILE_PARQUET, NULL, &err), 0);
    assert_int_equal(knut_graphar_edge_info_add_adj_list(ei, KNUT_GRAPHAR_ORDERED_BY_DEST,
                                                         KNUT_GRAPHAR_FILE_CSV, NULL, &err), 0);
    assert_int_equal(knut_graphar_edge_info_add_adj_list(ei, KNUT_GRAPHAR_UNORDERED_BY_SOURCE,
                                                         KNUT_GRAPHAR_FILE_PARQUET, NULL, &err), 0);
    assert_int_equal(knut_graphar_edge_info_add_adj_list(ei, KNUT_GRAPHAR_UNORDERED_BY_DEST,
                                                         KNUT_GRAPHAR_FILE_PARQUET, NULL, &err), 0);
    assert_int_equal(knut_graphar_edge_info_add_group(ei, KNUT_GRAPHAR_FILE_PARQUET, NULL, &g,
                                                      &err), 0);
    assert_int_equal(knut_graphar_group_add_property(g, "since", "int64", 0, 1,
                                                     KNUT_GRAPHAR_CARD_SINGLE, &err), 0);
    assert_int_equal(knut_graphar_group_add_property(g, "at", "timestamp", 0, 1,
                                                     KNUT_GRAPHAR_CARD_SINGLE, &err), 0);
    assert_int_equal(knut_graphar_edge_info_add_group(ei, KNUT_GRAPHAR_FILE_CSV, NULL, &g, &err),
                     0);
    assert_int_equal(knut_graphar_group_add_property(g, "note", "string", 0, 1,
                                                     KNUT_GRAPHAR_CARD_SINGLE, &err), 0);
    assert_int_equal(knut_graphar_graph_info_add_edge(gi, ei, NULL, &err), 0);
    return gi;
}

/* Vertex i has key 100 + (7 i mod 10): input order differs from key order. */
static const char people_sql[] =
    "CREATE TABLE people AS SELECT 100 + (i * 7) % 10 AS id, "
    "CASE WHEN i = 4 THEN NULL ELSE 'p' || i END AS name, i * 1.5 AS score, "
    "DATE '2000-01-01' + i::INTEGER AS born, "
    "TIMESTAMP '2020-01-01 00:00:00.123' + to_hours(i) AS seen, "
    "CASE WHEN i = 2 THEN NULL ELSE ['a' || i, 'b'] END AS tags, i % 2 = 0 AS flag, "
    "i::INTEGER AS n32, (i / 2)::FLOAT AS f32, "
    "CASE WHEN i = 1 THEN '' WHEN i = 3 THEN NULL ELSE 'n' || i END AS nick, "
    "CAST(i + 20 AS VARCHAR) AS age, i % 3 = 0 AS admin, "
    "CASE WHEN i = 5 THEN NULL ELSE i % 2 = 1 END AS guest FROM range(10) t(i) ORDER BY i";

static const char knows_sql[] =
    "CREATE TABLE knows AS SELECT 100 + ((e % 10) * 7) % 10 AS a, "
    "100 + (((e * 3 + 1 + e // 10) % 10) * 7) % 10 AS b, "
    "(e % 10) * 100 + (e * 3 + 1 + e // 10) % 10 AS since, "
    "TIMESTAMP '2021-06-01 12:00:00' + to_minutes(e) AS at, 'e' || e AS note "
    "FROM range(25) t(e) ORDER BY e";

typedef struct fixture {
    char dir[256];
    knut_graphar_graph_info *gi;
    knut_graphar_writer *w;
} fixture;

static void fx_open(fixture *f, knut_graphar_file_type third)
{
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(f->dir, sizeof f->dir, "%s/knut-gw-XXXXXX", tmp);
    assert_non_null(mkdtemp(f->dir));
    f->gi = make_info(third);
    knut_error err = KNUT_ERROR_INIT;
    knut_graphar_writer_options o = KNUT_GRAPHAR_WRITER_OPTIONS_INIT;
    o.threads = 2;
    o.memory_limit = "256MB";
    if (knut_graphar_writer_new(&f->w, f->gi, f->dir, &o, &err) != KNUT_OK)
        fail_msg("%s", err.message);
    knut_duck_conn *c = knut_graphar_writer_conn(f->w);
    if (knut_duck_exec(c, people_sql, &err) || knut_duck_exec(c, knows_sql, &err))
        fail_msg("%s", err.message);
}

static void fx_close(fixture *f)
{
    knut_graphar_writer_free(f->w);
    knut_graphar_graph_info_free(f->gi);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
    assert_int_equal(system(cmd), 0);
}

static const char *const person_keys[] = {"id"};
static const char *const src_keys[] = {"a"};
static const char *const dst_keys[] = {"b"};

static knut_status write_people(fixture *f, knut_error *err)
{
    knut_graphar_vertex_source vs = {0};
    vs.table = "people";
    return knut_graphar_writer_write_vertices(f->w, "person", &vs, NULL, err);
}

static knut_status write_knows(fixture *f, const char *table, knut_graphar_unknown_key on,
                               const char *rejects, knut_graphar_write_stats *st,
                               knut_error *err)
{
    knut_graphar_edge_source es = {0};
    es.table = table;
    es.src_keys = src_keys;
    es.n_src_keys = 1;
    es.dst_keys = dst_keys;
    es.n_dst_keys = 1;
    es.on_unknown = on;
    es.rejects_path = rejects;
    return knut_graphar_writer_write_edges(f->w, "person", "knows", "person", &es, st, err);
}

/* ---- tests ------------------------------------------------------------- */

static void check_vertices(const char *dir)
{
    char p[1024], types[1024];
    int64_t v[16];
    snprintf(p, sizeof p, "%s/vertex/person/vertex_count", dir);
    assert_int_equal(count_file(p), NV);
    for (int c = 0; c < 4; c++) {
        int rows = c < 3 ? 3 : 1;
        snprintf(p, sizeof p, "%s/vertex/person/id_name/chunk%d", dir, c);
        assert_int_equal(read_col(p, 0, "_graphArVertexIndex", v, 16), rows);
        for (int r = 0; r < rows; r++)
            assert_int_equal(v[r], c * VCS + r);
        /* Input order: vertex i has id 100 + 7i mod 10. */
        read_col(p, 0, "id", v, 16);
        for (int r = 0; r < rows; r++)
            assert_int_equal(v[r], 100 + ((c * VCS + r) * 7) % 10);
        snprintf(p, sizeof p, "%s/vertex/person/score_born_seen_tags_flag_n32_f32/chunk%d", dir,
                 c);
        assert_int_equal(read_col(p, 0, "n32", v, 16), rows);
        snprintf(p, sizeof p, "%s/vertex/person/nick_age/chunk%d", dir, c);
        assert_int_equal(read_col(p, 1, "age", v, 16), rows);
        assert_int_equal(v[0], 20 + c * VCS);
        snprintf(p, sizeof p, "%s/vertex/person/labels/chunk%d", dir, c);
        assert_int_equal(read_col(p, 0, "guest::BIGINT", v, 16), rows);
        for (int r = 0; r < rows; r++) {
            int i = c * VCS + r;
            assert_int_equal(v[r], i == 5 ? 0 : i % 2);
        }
    }
    snprintf(p, sizeof p, "%s/vertex/person/id_name/chunk4", dir);
    assert_false(file_exists(p));
    snprintf(p, sizeof p, "%s/vertex/person/id_name/chunk0", dir);
    types_of(p, 0, types, sizeof types);
    assert_string_equal(types, "_graphArVertexIndex:BIGINT,id:BIGINT,name:VARCHAR");
    snprintf(p, sizeof p, "%s/vertex/person/score_born_seen_tags_flag_n32_f32/chunk0", dir);
    types_of(p, 0, types, sizeof types);
    assert_string_equal(types, "_graphArVertexIndex:BIGINT,score:DOUBLE,born:DATE,"
                               "seen:TIMESTAMP,tags:VARCHAR[],flag:BOOLEAN,n32:INTEGER,"
                               "f32:FLOAT");
    /* Timestamps are stored as the reference's Arrow type says: ms, not
     * adjusted to UTC. */
    {
        knut_buf q = KNUT_BUF_INIT;
        knut_buf_puts(&q, "SELECT converted_type FROM parquet_schema(");
        sql_lit(&q, p);
        knut_buf_puts(&q, ") WHERE name = 'seen'");
        q_str(q.data, types, sizeof types);
        assert_string_equal(types, "TIMESTAMP_MILLIS");
        knut_buf_reset(&q);
    }
    snprintf(p, sizeof p, "%s/vertex/person/labels/chunk0", dir);
    types_of(p, 0, types, sizeof types);
    assert_string_equal(types, "admin:BOOLEAN,guest:BOOLEAN");
    /* Nulls survive; values convert (date, timestamp ms, list). */
    knut_buf b = KNUT_BUF_INIT;
    knut_buf_puts(&b, "SELECT count(*) FROM ");
    snprintf(p, sizeof p, "%s/vertex/person/id_name/chunk1", dir);
    reader(&b, p, 0);
    knut_buf_puts(&b, " WHERE name IS NULL AND _graphArVertexIndex = 4");
    assert_int_equal(q_i64(b.data), 1);
    knut_buf_clear(&b);
    knut_buf_puts(&b, "SELECT (born = DATE '2000-01-04' AND seen = TIMESTAMP '2020-01-01 "
                      "03:00:00.123' AND tags = ['a3', 'b'])::BIGINT FROM ");
    snprintf(p, sizeof p, "%s/vertex/person/score_born_seen_tags_flag_n32_f32/chunk1", dir);
    reader(&b, p, 0);
    knut_buf_puts(&b, " WHERE _graphArVertexIndex = 3");
    assert_int_equal(q_i64(b.data), 1);
    knut_buf_reset(&b);
    /* CSV: header, strings quoted, "" is empty, an empty field is null. */
    snprintf(p, sizeof p, "%s/vertex/person/nick_age/chunk0", dir);
    FILE *fp = fopen(p, "r");
    assert_non_null(fp);
    char text[512] = "";
    size_t n = fread(text, 1, sizeof text - 1, fp);
    fclose(fp);
    text[n] = '\0';
    assert_string_equal(text, "\"_graphArVertexIndex\",\"nick\",\"age\"\n"
                              "0,\"n0\",20\n1,\"\",21\n2,\"n2\",22\n");
    snprintf(p, sizeof p, "%s/vertex/person/nick_age/chunk1", dir);
    fp = fopen(p, "r");
    assert_non_null(fp);
    n = fread(text, 1, sizeof text - 1, fp);
    fclose(fp);
    text[n] = '\0';
    assert_string_equal(text, "\"_graphArVertexIndex\",\"nick\",\"age\"\n"
                              "3,,23\n4,\"n4\",24\n5,\"n5\",25\n");
}

/* Checks one adj list against the edge formula. */
static void check_adj(const char *dir, const char *name, int by_src, int ordered, int csv)
{
    char p[1024];
    int64_t total = 0;
    snprintf(p, sizeof p, "%s/edge/person_knows_person/%s/vertex_count", dir, name);
    assert_int_equal(count_file(p), NV);
    for (int part = 0; part < 4; part++) {
        int expect = 0, deg[VCS] = {0};
        for (int e = 0; e < NE; e++) {
            int key = by_src ? src_of(e) : dst_of(e);
            if (key / VCS == part) {
                expect++;
                deg[key % VCS]++;
            }
        }
        snprintf(p, sizeof p, "%s/edge/person_knows_person/%s/edge_count%d", dir, name, part);
        assert_int_equal(count_file(p), expect);
        total += expect;
        int64_t src[NE], dst[NE], since[NE];
        int64_t got = 0;
        int nchunks = (expect + ECS - 1) / ECS;
        for (int c = 0; c < nchunks; c++) {
            int rows = c < nchunks - 1 ? ECS : expect - c * ECS;
            snprintf(p, sizeof p, "%s/edge/person_knows_person/%s/adj_list/part%d/chunk%d", dir,
                     name, part, c);
            assert_int_equal(read_col(p, csv, "_graphArSrcIndex", src + got, NE - got), rows);
            read_col(p, csv, "_graphArDstIndex", dst + got, NE - got);
            snprintf(p, sizeof p, "%s/edge/person_knows_person/%s/since_at/part%d/chunk%d", dir,
                     name, part, c);
            assert_int_equal(read_col(p, 0, "since", since + got, NE - got), rows);
            snprintf(p, sizeof p, "%s/edge/person_knows_person/%s/note/part%d/chunk%d", dir,
                     name, part, c);
            assert_true(file_exists(p));
            got += rows;
        }
        snprintf(p, sizeof p, "%s/edge/person_knows_person/%s/adj_list/part%d/chunk%d", dir, name,
                 part, nchunks);
        assert_false(file_exists(p));
        for (int64_t r = 0; r < got; r++) {
            int64_t key = by_src ? src[r] : dst[r], other = by_src ? dst[r] : src[r];
            assert_int_equal(key / VCS, part);
            /* Property rows line up with their edges. */
            assert_int_equal(since[r], src[r] * 100 + dst[r]);
            if (ordered && r > 0) {
                int64_t pk = by_src ? src[r - 1] : dst[r - 1];
                int64_t po = by_src ? dst[r - 1] : src[r - 1];
                assert_true(pk < key || (pk == key && po <= other));
            }
        }
        snprintf(p, sizeof p, "%s/edge/person_knows_person/%s/offset/chunk%d", dir, name, part);
        if (!ordered) {
            assert_false(file_exists(p));
            continue;
        }
        int64_t off[8];
        assert_int_equal(read_col(p, csv, "_graphArOffset", off, 8), VCS + 1);
        assert_int_equal(off[0], 0);
        for (int k = 0; k < VCS; k++)
            assert_int_equal(off[k + 1] - off[k], deg[k]);
        assert_int_equal(off[VCS], expect);
    }
    assert_int_equal(total, NE);
}

static void test_graphar_write__small_graph(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, KNUT_GRAPHAR_FILE_CSV);
    knut_error err = KNUT_ERROR_INIT;
    knut_graphar_write_stats st;
    if (write_people(&f, &err))
        fail_msg("%s", err.message);
    if (write_knows(&f, "knows", KNUT_GRAPHAR_UNKNOWN_ERROR, NULL, &st, &err))
        fail_msg("%s", err.message);
    assert_int_equal(st.rows, NE);
    assert_int_equal(st.skipped, 0);
    assert_true(st.files > 4 * 4);
    if (knut_graphar_writer_finish(f.w, &err))
        fail_msg("%s", err.message);
    check_vertices(f.dir);
    check_adj(f.dir, "ordered_by_source", 1, 1, 0);
    check_adj(f.dir, "ordered_by_dest", 0, 1, 1);
    check_adj(f.dir, "unordered_by_source", 1, 0, 0);
    check_adj(f.dir, "unordered_by_dest", 0, 0, 0);
    /* Offsets are int64; adj lists in CSV have the reference header. */
    char p[1024], types[512];
    snprintf(p, sizeof p, "%s/edge/person_knows_person/ordered_by_source/offset/chunk0", f.dir);
    types_of(p, 0, types, sizeof types);
    assert_string_equal(types, "_graphArOffset:BIGINT");
    snprintf(p, sizeof p,
             "%s/edge/person_knows_person/ordered_by_source/since_at/part0/chunk0", f.dir);
    types_of(p, 0, types, sizeof types);
    assert_string_equal(types, "since:BIGINT,at:TIMESTAMP");
    snprintf(p, sizeof p, "%s/edge/person_knows_person/ordered_by_dest/adj_list/part0/chunk0",
             f.dir);
    FILE *fp = fopen(p, "r");
    assert_non_null(fp);
    char line[128];
    assert_non_null(fgets(line, sizeof line, fp));
    fclose(fp);
    assert_string_equal(line, "\"_graphArSrcIndex\",\"_graphArDstIndex\"\n");
    /* The YAMLs load back with the same shape. */
    snprintf(p, sizeof p, "%s/tiny.graph.yml", f.dir);
    knut_graphar_graph_info *back = NULL;
    if (knut_graphar_graph_load(&back, p, &err))
        fail_msg("%s", err.message);
    assert_int_equal(back->n_vertices, 1);
    assert_int_equal(back->n_edges, 1);
    assert_int_equal(back->edges[0]->n_adj_lists, 4);
    assert_int_equal(back->vertices[0]->n_labels, 2);
    knut_graphar_graph_info_free(back);
    fx_close(&f);
}

static void test_graphar_write__key_order(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, KNUT_GRAPHAR_FILE_PARQUET);
    knut_error err = KNUT_ERROR_INIT;
    knut_graphar_vertex_source vs = {0};
    vs.table = "people";
    vs.keys = person_keys;
    vs.n_keys = 1;
    vs.order_by_key = 1;
    if (knut_graphar_writer_write_vertices(f.w, "person", &vs, NULL, &err))
        fail_msg("%s", err.message);
    if (write_knows(&f, "knows", KNUT_GRAPHAR_UNKNOWN_ERROR, NULL, NULL, &err))
        fail_msg("%s", err.message);
    char p[1024];
    int64_t v[4];
    snprintf(p, sizeof p, "%s/vertex/person/id_name/chunk1", f.dir);
    assert_int_equal(read_col(p, 0, "id", v, 4), 3);
    assert_int_equal(v[0], 103);
    assert_int_equal(v[2], 105);
    /* Edges map through the new indices: index = id - 100. */
    snprintf(p, sizeof p, "%s/edge/person_knows_person/ordered_by_source/adj_list/part0/chunk0",
             f.dir);
    assert_int_equal(read_col(p, 0, "_graphArSrcIndex", v, 4), 4);
    assert_int_equal(v[0], 0);
    fx_close(&f);
}

static void test_graphar_write__unknown_endpoint(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, KNUT_GRAPHAR_FILE_PARQUET);
    knut_error err = KNUT_ERROR_INIT;
    knut_duck_conn *c = knut_graphar_writer_conn(f.w);
    if (knut_duck_exec(c,
                       "CREATE TABLE bad AS SELECT * FROM knows ORDER BY rowid;"
                       "UPDATE bad SET b = 777 WHERE rowid = 6;"
                       "UPDATE bad SET a = NULL WHERE rowid = 11",
                       &err))
        fail_msg("%s", err.message);
    /* Edges before their vertex types: refused. */
    assert_int_equal(write_knows(&f, "bad", KNUT_GRAPHAR_UNKNOWN_ERROR, NULL, NULL, &err),
                     KNUT_EINVAL);
    assert_non_null(strstr(err.message, "write the vertex type 'person' first"));
    if (write_people(&f, &err))
        fail_msg("%s", err.message);
    assert_int_equal(write_knows(&f, "bad", KNUT_GRAPHAR_UNKNOWN_ERROR, NULL, NULL, &err),
                     KNUT_EINVAL);
    assert_non_null(strstr(err.message, "bad: row 7: dst key (b) = (777) matches no 'person'"));
    assert_non_null(strstr(err.message, "(2 edge rows have unknown endpoints)"));
    char rejects[512];
    snprintf(rejects, sizeof rejects, "%s/rejects.parquet", f.dir);
    knut_graphar_write_stats st;
    if (write_knows(&f, "bad", KNUT_GRAPHAR_UNKNOWN_SKIP, rejects, &st, &err))
        fail_msg("%s", err.message);
    assert_int_equal(st.rows, NE - 2);
    assert_int_equal(st.skipped, 2);
    knut_buf b = KNUT_BUF_INIT;
    int64_t rows[4];
    knut_buf_puts(&b, "SELECT \"row\" FROM ");
    reader(&b, rejects, 0);
    assert_int_equal(q_i64s(b.data, rows, 4), 2);
    assert_int_equal(rows[0], 7);
    assert_int_equal(rows[1], 12);
    knut_buf_reset(&b);
    int64_t total = 0;
    char p[1024];
    for (int i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "%s/edge/person_knows_person/ordered_by_dest/edge_count%d", f.dir, i);
        total += count_file(p);
    }
    assert_int_equal(total, NE - 2);
    fx_close(&f);
}

static void test_graphar_write__bad_values(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, KNUT_GRAPHAR_FILE_PARQUET);
    knut_error err = KNUT_ERROR_INIT;
    knut_duck_conn *c = knut_graphar_writer_conn(f.w);
    if (knut_duck_exec(c,
                       "CREATE TABLE p2 AS SELECT * FROM people ORDER BY rowid;"
                       "UPDATE p2 SET age = 'old' WHERE rowid = 2;"
                       "CREATE TABLE p3 AS SELECT * FROM people ORDER BY rowid;"
                       "UPDATE p3 SET id = 103 WHERE rowid = 8;"
                       "CREATE TABLE p4 AS SELECT * FROM people ORDER BY rowid;"
                       "UPDATE p4 SET id = NULL WHERE rowid = 5;"
                       "CREATE TABLE p5 AS SELECT * EXCLUDE (f32) FROM people",
                       &err))
        fail_msg("%s", err.message);
    knut_graphar_vertex_source vs = {0};
    vs.table = "p2";
    vs.name = "people.csv";
    assert_int_equal(knut_graphar_writer_write_vertices(f.w, "person", &vs, NULL, &err),
                     KNUT_EINVAL);
    assert_string_equal(err.message, "vertex type 'person': people.csv: row 3, column 'age': "
                                     "cannot convert 'old' to BIGINT");
    vs.table = "p3";
    vs.name = NULL;
    assert_int_equal(knut_graphar_writer_write_vertices(f.w, "person", &vs, NULL, &err),
                     KNUT_EINVAL);
    assert_non_null(strstr(err.message, "key (id) = (103) appears 2 times (rows 9 and 10)") ||
                    strstr(err.message, "key (id) = (103) appears 2 times (rows 10 and 9)"));
    vs.table = "p4";
    assert_int_equal(knut_graphar_writer_write_vertices(f.w, "person", &vs, NULL, &err),
                     KNUT_EINVAL);
    assert_non_null(strstr(err.message, "p4: row 6: a key column is null"));
    vs.table = "p5";
    assert_int_equal(knut_graphar_writer_write_vertices(f.w, "person", &vs, NULL, &err),
                     KNUT_EINVAL);
    assert_non_null(strstr(err.message, "p5: no column 'f32' (a property)"));
    /* Nothing was registered: the good table still writes. */
    if (write_people(&f, &err))
        fail_msg("%s", err.message);
    assert_int_equal(write_people(&f, &err), KNUT_EINVAL);
    assert_non_null(strstr(err.message, "already written"));
    fx_close(&f);
}

static void test_graphar_write__refusals(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, KNUT_GRAPHAR_FILE_ORC);
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(write_people(&f, &err), KNUT_EUNSUPPORTED);
    assert_non_null(strstr(err.message, "file_type orc cannot be written"));
    fx_close(&f);

    /* A second writer over a written graph: refused unless overwriting. */
    fx_open(&f, KNUT_GRAPHAR_FILE_PARQUET);
    if (write_people(&f, &err))
        fail_msg("%s", err.message);
    knut_graphar_writer *w2 = NULL;
    knut_graphar_writer_options o = KNUT_GRAPHAR_WRITER_OPTIONS_INIT;
    o.threads = 1;
    assert_int_equal(knut_graphar_writer_new(&w2, f.gi, f.dir, &o, &err), KNUT_OK);
    assert_int_equal(knut_duck_exec(knut_graphar_writer_conn(w2), people_sql, &err), KNUT_OK);
    knut_graphar_vertex_source vs = {0};
    vs.table = "people";
    assert_int_equal(knut_graphar_writer_write_vertices(w2, "person", &vs, NULL, &err),
                     KNUT_EINVAL);
    assert_non_null(strstr(err.message, "exists and is not empty"));
    knut_graphar_writer_free(w2);
    o.overwrite = 1;
    assert_int_equal(knut_graphar_writer_new(&w2, f.gi, f.dir, &o, &err), KNUT_OK);
    assert_int_equal(knut_duck_exec(knut_graphar_writer_conn(w2), people_sql, &err), KNUT_OK);
    if (knut_graphar_writer_write_vertices(w2, "person", &vs, NULL, &err))
        fail_msg("%s", err.message);
    knut_graphar_writer_free(w2);
    /* A prefix leaving the output directory is refused. */
    free(f.gi->vertices[0]->prefix);
    f.gi->vertices[0]->prefix = strdup("../escape/");
    assert_int_equal(knut_graphar_writer_new(&w2, f.gi, f.dir, &o, &err), KNUT_OK);
    assert_int_equal(knut_duck_exec(knut_graphar_writer_conn(w2), people_sql, &err), KNUT_OK);
    assert_int_equal(knut_graphar_writer_write_vertices(w2, "person", &vs, NULL, &err),
                     KNUT_EINVAL);
    assert_non_null(strstr(err.message, "relative paths without '..'"));
    knut_graphar_writer_free(w2);
    fx_close(&f);
}

/* Vertices from an Arrow C stream registered on the writer's connection
 * (here another database's result stream, as any producer would hand it). */
static void test_graphar_write__arrow_stream_source(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, KNUT_GRAPHAR_FILE_PARQUET);
    knut_error err = KNUT_ERROR_INIT;
    struct ArrowArrayStream stream;
    char sql[sizeof people_sql];
    /* people_sql without "CREATE TABLE people AS ": the same rows. */
    snprintf(sql, sizeof sql, "%s", people_sql + strlen("CREATE TABLE people AS "));
    if (knut_duck_query(chk, sql, &stream, &err) ||
        knut_duck_register_stream(knut_graphar_writer_conn(f.w), "people_arrow", &stream, &err))
        fail_msg("%s", err.message);
    knut_graphar_vertex_source vs = {0};
    vs.table = "people_arrow";
    knut_graphar_write_stats st;
    if (knut_graphar_writer_write_vertices(f.w, "person", &vs, &st, &err) ||
        write_knows(&f, "knows", KNUT_GRAPHAR_UNKNOWN_ERROR, NULL, NULL, &err))
        fail_msg("%s", err.message);
    assert_int_equal(st.rows, NV);
    assert_int_equal(st.files, 4 * 4 + 1); /* 3 groups + labels, 4 chunks each; vertex_count */
    char p[1024];
    int64_t v[4];
    snprintf(p, sizeof p, "%s/vertex/person/id_name/chunk3", f.dir);
    assert_int_equal(read_col(p, 0, "id", v, 4), 1);
    assert_int_equal(v[0], 100 + (9 * 7) % 10);
    fx_close(&f);
}

/* Properties named like DuckDB's row position do not disturb it. */
static void test_graphar_write__reserved_names(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    knut_graphar_graph_info *gi = NULL;
    knut_graphar_vertex_info *vi = NULL;
    knut_graphar_edge_info *ei = NULL;
    knut_graphar_property_group *g = NULL;
    assert_int_equal(knut_graphar_graph_info_new(&gi, "g", NULL, &err), 0);
    assert_int_equal(knut_graphar_vertex_info_new(&vi, "v", 2, NULL, &err), 0);
    assert_int_equal(knut_graphar_vertex_info_add_group(vi, KNUT_GRAPHAR_FILE_PARQUET, NULL, &g,
                                                        &err), 0);
    assert_int_equal(knut_graphar_group_add_property(g, "rowid", "int64", 1, 0,
                                                     KNUT_GRAPHAR_CARD_SINGLE, &err), 0);
    assert_int_equal(knut_graphar_graph_info_add_vertex(gi, vi, NULL, &err), 0);
    assert_int_equal(knut_graphar_edge_info_new(&ei, "v", "e", "v", 2, 2, 2, 1, NULL, &err), 0);
    assert_int_equal(knut_graphar_edge_info_add_adj_list(ei, KNUT_GRAPHAR_ORDERED_BY_SOURCE,
                                                         KNUT_GRAPHAR_FILE_PARQUET, NULL, &err), 0);
    assert_int_equal(knut_graphar_edge_info_add_group(ei, KNUT_GRAPHAR_FILE_PARQUET, NULL, &g,
                                                      &err), 0);
    assert_int_equal(knut_graphar_group_add_property(g, "rowid", "int64", 0, 1,
                                                     KNUT_GRAPHAR_CARD_SINGLE, &err), 0);
    assert_int_equal(knut_graphar_graph_info_add_edge(gi, ei, NULL, &err), 0);
    char dir[256];
    snprintf(dir, sizeof dir, "%s/knut-gw-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    assert_non_null(mkdtemp(dir));
    knut_graphar_writer *w = NULL;
    assert_int_equal(knut_graphar_writer_new(&w, gi, dir, NULL, &err), 0);
    if (knut_duck_exec(knut_graphar_writer_conn(w),
                       "CREATE TABLE v AS SELECT * FROM (VALUES (30), (10), (20)) t(rowid);"
                       "CREATE TABLE e AS SELECT * FROM (VALUES (20, 10, 7), (10, 30, 8)) "
                       "t(a, b, rowid)",
                       &err))
        fail_msg("%s", err.message);
    knut_graphar_vertex_source vs = {0};
    vs.table = "v";
    const char *const a[] = {"a"}, *const b[] = {"b"};
    knut_graphar_edge_source es = {0};
    es.table = "e";
    es.src_keys = a;
    es.n_src_keys = 1;
    es.dst_keys = b;
    es.n_dst_keys = 1;
    if (knut_graphar_writer_write_vertices(w, "v", &vs, NULL, &err) ||
        knut_graphar_writer_write_edges(w, "v", "e", "v", &es, NULL, &err))
        fail_msg("%s", err.message);
    char p[512];
    int64_t got[4];
    snprintf(p, sizeof p, "%s/v/rowid/chunk0", dir);
    assert_int_equal(read_col(p, 0, "rowid", got, 4), 2);
    assert_int_equal(got[0], 30);
    assert_int_equal(got[1], 10);
    read_col(p, 0, "_graphArVertexIndex", got, 4);
    assert_int_equal(got[1], 1);
    snprintf(p, sizeof p, "%s/v_e_v/ordered_by_source/rowid/part0/chunk0", dir);
    assert_int_equal(read_col(p, 0, "rowid", got, 4), 1);
    assert_int_equal(got[0], 8); /* the edge from vertex 1 (key 10) sorts first */
    knut_graphar_writer_free(w);
    knut_graphar_graph_info_free(gi);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* A set with a repeated value, a null in a non-nullable property. */
static void test_graphar_write__set_and_not_null(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    knut_graphar_graph_info *gi = NULL;
    knut_graphar_vertex_info *vi = NULL;
    knut_graphar_property_group *g = NULL;
    assert_int_equal(knut_graphar_graph_info_new(&gi, "g", NULL, &err), 0);
    assert_int_equal(knut_graphar_vertex_info_new(&vi, "v", 2, NULL, &err), 0);
    assert_int_equal(knut_graphar_vertex_info_add_group(vi, KNUT_GRAPHAR_FILE_PARQUET, NULL, &g,
                                                        &err), 0);
    assert_int_equal(knut_graphar_group_add_property(g, "k", "int64", 1, 0,
                                                     KNUT_GRAPHAR_CARD_SINGLE, &err), 0);
    assert_int_equal(knut_graphar_group_add_property(g, "s", "string", 0, 1, KNUT_GRAPHAR_CARD_SET,
                                                     &err), 0);
    assert_int_equal(knut_graphar_group_add_property(g, "nn", "string", 0, 0,
                                                     KNUT_GRAPHAR_CARD_SINGLE, &err), 0);
    assert_int_equal(knut_graphar_graph_info_add_vertex(gi, vi, NULL, &err), 0);
    char dir[256];
    snprintf(dir, sizeof dir, "%s/knut-gw-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    assert_non_null(mkdtemp(dir));
    knut_graphar_writer *w = NULL;
    assert_int_equal(knut_graphar_writer_new(&w, gi, dir, NULL, &err), 0);
    knut_duck_conn *c = knut_graphar_writer_conn(w);
    if (knut_duck_exec(c,
                       "CREATE TABLE t1(k BIGINT, s VARCHAR[], nn VARCHAR);"
                       "INSERT INTO t1 VALUES (1, ['a', 'b'], 'x'), (2, ['a', NULL, 'a'], 'y'),"
                       " (3, NULL, NULL);"
                       "CREATE TABLE t2 AS SELECT k, [s[1]] AS s, nn FROM t1",
                       &err))
        fail_msg("%s", err.message);
    knut_graphar_vertex_source vs = {0};
    vs.table = "t1";
    assert_int_equal(knut_graphar_writer_write_vertices(w, "v", &vs, NULL, &err), KNUT_EINVAL);
    assert_string_equal(err.message, "vertex type 'v': t1: row 2: column 's' holds duplicate "
                                     "values but the property is a set: [a, NULL, a]");
    vs.table = "t2";
    assert_int_equal(knut_graphar_writer_write_vertices(w, "v", &vs, NULL, &err), KNUT_EINVAL);
    assert_string_equal(err.message, "vertex type 'v': t2: row 3: column 'nn' is null but the "
                                     "property is not nullable");
    knut_graphar_writer_free(w);
    knut_graphar_graph_info_free(gi);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static int setup(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    knut_duck_option o[] = {{"threads", "1"}};
    if (knut_duck_db_open(&chk_db, NULL, o, 1, &err) || knut_duck_conn_open(&chk, chk_db, &err))
        return -1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    knut_duck_conn_close(chk);
    knut_duck_db_close(chk_db);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_graphar_write__small_graph),
        cmocka_unit_test(test_graphar_write__key_order),
        cmocka_unit_test(test_graphar_write__unknown_endpoint),
        cmocka_unit_test(test_graphar_write__bad_values),
        cmocka_unit_test(test_graphar_write__refusals),
        cmocka_unit_test(test_graphar_write__set_and_not_null),
        cmocka_unit_test(test_graphar_write__arrow_stream_source),
        cmocka_unit_test(test_graphar_write__reserved_names),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
