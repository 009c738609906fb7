/*
 * Unit tests for resolving a pipeline (src/pipeline/deps.c, dag.c) and
 * loading its spec (spec.c): reads from DuckDB's parser (CTEs excluded),
 * run order, cycles, unknown datasets, two flows into a materialized view,
 * streaming reads of batch datasets, declared reads, and the spec errors,
 * each with its file:line:col.
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

#include "knut/pipeline.h"

static knut_pipeline *resolve(const char *sql, knut_status want, knut_error *err)
{
    knut_pipeline *p = NULL;
    assert_int_equal(knut_pipeline_new(&p, "t", "st", err), KNUT_OK);
    assert_int_equal(knut_pipeline_parse_sql(p, sql, strlen(sql), "f.sql", err), KNUT_OK);
    knut_status st = knut_pipeline_resolve(p, err);
    if (st != want)
        fail_msg("resolve: %d, want %d: %s", st, want, err->message);
    return p;
}

static const char *flow_at(const knut_pipeline *p, size_t i)
{
    return p->flows[p->order[i]].name;
}

/* Conformance 1: definition order is irrelevant, a runs before b. */
static void test_pipeline_dag__reverse_order_resolves(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    knut_pipeline *p = resolve("CREATE MATERIALIZED VIEW b AS SELECT * FROM a;\n"
                               "CREATE MATERIALIZED VIEW a AS SELECT 1 AS x;",
                               KNUT_OK, &err);
    assert_string_equal(flow_at(p, 0), "a");
    assert_string_equal(flow_at(p, 1), "b");
    assert_int_equal(p->flows[0].nreads, 1);
    assert_string_equal(p->flows[0].reads[0].name, "a");
    assert_true(p->flows[0].reads[0].internal);
    assert_false(p->flows[0].reads[0].streaming);
    knut_pipeline_free(p);
}

static void test_pipeline_dag__reads_from_duckdb_parser(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    knut_pipeline *p = resolve(
        "CREATE MATERIALIZED VIEW a AS SELECT 1 AS x;\n"
        "CREATE MATERIALIZED VIEW b AS SELECT 2 AS x;\n"
        "CREATE TEMPORARY VIEW c AS SELECT 3 AS x;\n"
        "CREATE MATERIALIZED VIEW d AS WITH a AS (SELECT 5 AS x) SELECT * FROM a, main.b\n"
        "  WHERE x IN (SELECT x FROM c) UNION ALL SELECT x FROM ext.tbl;\n",
        KNUT_OK, &err);
    const knut_pipeline_flow *d = &p->flows[3];
    assert_int_equal(d->nreads, 3); /* b, c and ext.tbl; the CTE a is no read */
    assert_string_equal(d->reads[0].name, "b");
    assert_true(d->reads[0].internal);
    assert_string_equal(d->reads[1].name, "c");
    assert_string_equal(d->reads[2].name, "tbl");
    assert_false(d->reads[2].internal);
    assert_string_equal(flow_at(p, 3), "d");
    knut_buf b = KNUT_BUF_INIT;
    assert_int_equal(knut_pipeline_show(p, KNUT_PIPELINE_FORMAT_DOT, &b, &err), KNUT_OK);
    assert_non_null(strstr(b.data, "\"b\" -> \"d\" [label=\"d\"];"));
    knut_buf_reset(&b);
    knut_pipeline_free(p);
}

typedef struct bad_case {
    const char *sql;
    knut_status code;
    int line, col;
    const char *text;
} bad_case;

static void test_pipeline_dag__errors_name_the_flow(void **state)
{
    (void)state;
    static const bad_case cases[] = {
        /* Conformance 2: a cycle, with its path. */
        {"CREATE MATERIALIZED VIEW x AS SELECT * FROM y;\n"
         "CREATE MATERIALIZED VIEW y AS SELECT * FROM x;",
         KNUT_EINVAL, 2, 1, "flow 'y' is in a dependency cycle: y -> x -> y"},
        {"CREATE MATERIALIZED VIEW x AS SELECT * FROM x;", KNUT_EINVAL, 1, 1,
         "flow 'x' is in a dependency cycle: x -> x"},
        /* Conformance 3: two flows into a materialized view. */
        {"CREATE MATERIALIZED VIEW m AS SELECT 1 AS x;\n"
         "CREATE FLOW f AS INSERT INTO m SELECT 2 AS x;",
         KNUT_EINVAL, 2, 1, "only a streaming table takes more flows"},
        /* Conformance 11: a streaming read of a batch temporary view. */
        {"CREATE TEMPORARY VIEW v AS SELECT 1 AS x;\n"
         "CREATE STREAMING TABLE s AS SELECT * FROM STREAM(v), read_csv('a.csv');",
         KNUT_EINVAL, 2, 50, "reads temporary_view 'v' as a stream"},
        {"CREATE MATERIALIZED VIEW a AS\n  SELECT * FROM nowhere;", KNUT_ENOTFOUND, 2, 17,
         "flow 'a' reads 'nowhere', which is no dataset of this pipeline"},
        {"CREATE MATERIALIZED VIEW a AS\nSELECT * FROM\n  WHERE;", KNUT_EPARSE, 3, 3,
         "flow 'a': DuckDB cannot parse it: syntax error at or near \"WHERE\""},
        {"CREATE MATERIALIZED VIEW a (\n CONSTRAINT c EXPECT (x >)) AS SELECT 1 AS x;",
         KNUT_EPARSE, 2, 2, "flow 'a', expectation 'c': DuckDB cannot parse it"},
        {"CREATE FLOW f AS INSERT INTO t SELECT 1;", KNUT_ENOTFOUND, 1, 1,
         "flow 'f' writes into 't', which is not defined"},
        {"CREATE STREAMING TABLE t;", KNUT_EINVAL, 1, 1,
         "streaming table 't' has no flow writing into it"},
        {"CREATE STREAMING TABLE t AS SELECT 1 AS x;", KNUT_EINVAL, 1, 1,
         "is a streaming flow but reads no file source"},
        {"CREATE TEMPORARY VIEW v (CONSTRAINT c EXPECT (x > 0)) AS SELECT 1 AS x;",
         KNUT_EUNSUPPORTED, 1, 26, "expectations on temporary view 'v' are not supported yet"},
        {"CREATE STREAMING TABLE t;\n"
         "CREATE FLOW f AS AUTO CDC INTO t FROM missing KEYS (k) SEQUENCE BY s;",
         KNUT_ENOTFOUND, 2, 1, "applies changes from 'missing'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        knut_error err = KNUT_ERROR_INIT;
        knut_pipeline *p = resolve(cases[i].sql, cases[i].code, &err);
        if (err.line != cases[i].line || err.col != cases[i].col ||
            !strstr(err.message, cases[i].text) || strncmp(err.message, "f.sql:", 6) != 0)
            fail_msg("case %zu: got '%s' (%d:%d)", i, err.message, err.line, err.col);
        knut_pipeline_free(p);
    }
}

/* A folder with a spec and SQL files, for the spec loader. */
static void write_file(const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static char *make_project(const char *spec)
{
    char tmpl[] = "/tmp/knut_pipeline_XXXXXX";
    char *dir = mkdtemp(tmpl);
    assert_non_null(dir);
    char sub[600];
    snprintf(sub, sizeof sub, "%s/t", dir);
    assert_int_equal(mkdir(sub, 0755), 0);
    snprintf(sub, sizeof sub, "%s/t/deep", dir);
    assert_int_equal(mkdir(sub, 0755), 0);
    write_file(dir, "pipeline.yml", spec);
    write_file(dir, "t/b.sql", "CREATE MATERIALIZED VIEW b AS SELECT * FROM a;");
    write_file(dir, "t/deep/a.sql", "CREATE MATERIALIZED VIEW a AS SELECT 1 AS x;");
    return strdup(dir);
}

static void remove_project(char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    free(dir);
}

static void test_pipeline_dag__spec_loads_libraries(void **state)
{
    (void)state;
    char *dir = make_project("name: demo\nstorage: file:///tmp/x\ncatalog: cat\nschema: s\n"
                             "configuration:\n  threads: '1'\n"
                             "libraries:\n  - glob:\n      include: t/**\n"
                             "reads:\n  b: [a]\n");
    char spec[600];
    snprintf(spec, sizeof spec, "%s/pipeline.yml", dir);
    knut_pipeline *p = NULL;
    knut_error err = KNUT_ERROR_INIT;
    if (knut_pipeline_load(&p, spec, &err) != KNUT_OK)
        fail_msg("%s", err.message);
    assert_string_equal(p->name, "demo");
    assert_string_equal(p->storage, "/tmp/x");
    assert_string_equal(p->catalog, "cat");
    assert_string_equal(p->schema, "s");
    assert_int_equal(p->nconfiguration, 1);
    assert_int_equal(p->nfiles, 2);
    assert_non_null(strstr(p->files[0], "t/b.sql"));
    assert_non_null(strstr(p->files[1], "t/deep/a.sql"));
    assert_true(p->flows[0].has_declared);
    assert_int_equal(knut_pipeline_resolve(p, &err), KNUT_OK);
    assert_string_equal(flow_at(p, 0), "a");
    knut_pipeline_free(p);
    remove_project(dir);
}

typedef struct spec_case {
    const char *spec;
    knut_status code;
    int line, col;
    const char *text;
} spec_case;

/* Conformance 10 and the rest of the spec's errors. */
static void test_pipeline_dag__spec_errors(void **state)
{
    (void)state;
    static const spec_case cases[] = {
        {"name: a\nstorage: s\nfoo: 1\nlibraries: []\n", KNUT_EPARSE, 3, 6,
         "unexpected field 'foo'"},
        {"name: a\nlibraries: []\n", KNUT_EINVAL, 1, 1, "the spec needs 'storage:'"},
        {"name: a\nstorage: s\nlibraries:\n  - glob:\n      include: t/**/*.sql\n", KNUT_EPARSE,
         5, 16, "invalid glob 't/**/*.sql'"},
        {"name: a\nstorage: s\nlibraries:\n  - glob:\n      include: pipeline.yml\n",
         KNUT_EPARSE, 5, 16, "is not a .sql file"},
        {"name: a\nstorage: s\nlibraries:\n  - glob:\n      include: nope.sql\n", KNUT_ENOTFOUND,
         5, 16, "does not exist"},
        {"name: a\nstorage: s\nlibraries:\n  - t/**\n", KNUT_EPARSE, 4, 5,
         "a library is '- glob: {include: PATH}'"},
        {"name: a\nstorage: s\nlibraries:\n  - glob:\n      include: t/**\nreads:\n  zz: [a]\n",
         KNUT_EINVAL, 7, 7, "reads: no flow named 'zz'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *dir = make_project(cases[i].spec);
        char spec[600];
        snprintf(spec, sizeof spec, "%s/pipeline.yml", dir);
        knut_pipeline *p = NULL;
        knut_error err = KNUT_ERROR_INIT;
        knut_status st = knut_pipeline_load(&p, spec, &err);
        if (st != cases[i].code || err.line != cases[i].line || err.col != cases[i].col ||
            !strstr(err.message, cases[i].text))
            fail_msg("case %zu: %d '%s' (%d:%d)", i, st, err.message, err.line, err.col);
        assert_null(p);
        remove_project(dir);
    }
}

static void test_pipeline_dag__declared_reads_must_match(void **state)
{
    (void)state;
    char *dir = make_project("name: a\nstorage: s\nlibraries:\n  - glob:\n      include: t/**\n"
                             "reads:\n  a: [b]\n");
    char spec[600];
    snprintf(spec, sizeof spec, "%s/pipeline.yml", dir);
    knut_pipeline *p = NULL;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_pipeline_load(&p, spec, &err), KNUT_OK);
    assert_int_equal(knut_pipeline_resolve(p, &err), KNUT_EINVAL);
    assert_non_null(strstr(err.message, "flow 'a' declares that it reads 'b', but its query "
                                        "does not read it"));
    assert_int_equal(err.line, 1);
    knut_pipeline_free(p);
    remove_project(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pipeline_dag__reverse_order_resolves),
        cmocka_unit_test(test_pipeline_dag__reads_from_duckdb_parser),
        cmocka_unit_test(test_pipeline_dag__errors_name_the_flow),
        cmocka_unit_test(test_pipeline_dag__spec_loads_libraries),
        cmocka_unit_test(test_pipeline_dag__spec_errors),
        cmocka_unit_test(test_pipeline_dag__declared_reads_must_match),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
