/*
 * Unit tests for the pipeline statement parser (src/pipeline/sql_parse.c,
 * sql_lex.c): dataset and flow headers into the IR, expectations, CDC
 * clauses, the statement splitter's quoting rules, STREAM()/LIVE. and
 * file sources, and every error with its file:line:col.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "knut/pipeline.h"

static knut_pipeline *parse(const char *sql, knut_status want, knut_error *err)
{
    knut_pipeline *p = NULL;
    assert_int_equal(knut_pipeline_new(&p, "t", "st", err), KNUT_OK);
    knut_status st = knut_pipeline_parse_sql(p, sql, strlen(sql), "f.sql", err);
    assert_int_equal(st, want);
    return p;
}

static void test_pipeline_parse__materialized_view_with_expectations(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    knut_pipeline *p = parse("-- silver\n"
                             "CREATE OR REFRESH MATERIALIZED VIEW people (\n"
                             "  CONSTRAINT adult EXPECT (age BETWEEN 0 AND 120),\n"
                             "  CONSTRAINT named EXPECT (name IS NOT NULL) ON VIOLATION DROP ROW,\n"
                             "  CONSTRAINT pos EXPECT (f(x, (y))) ON VIOLATION FAIL UPDATE,\n"
                             "  CONSTRAINT q EXPECT (a > 0) ON VIOLATION QUARANTINE,\n"
                             "  CONSTRAINT pk EXPECT UNIQUE (id, \"Other\")\n"
                             ") COMMENT 'the people' TBLPROPERTIES ('a.b' = 'it''s', c.d = 2)\n"
                             "AS SELECT * FROM raw;",
                             KNUT_OK, &err);
    assert_int_equal(p->ndatasets, 1);
    const knut_pipeline_dataset *d = &p->datasets[0];
    assert_string_equal(d->name, "people");
    assert_int_equal(d->kind, KNUT_PIPELINE_MATERIALIZED_VIEW);
    assert_string_equal(d->comment, "the people");
    assert_int_equal(d->nproperties, 2);
    assert_string_equal(d->properties[0].name, "a.b");
    assert_string_equal(d->properties[0].value, "it's");
    assert_string_equal(d->properties[1].name, "c.d");
    assert_string_equal(d->properties[1].value, "2");
    assert_int_equal(d->pos.line, 2);
    assert_int_equal(d->pos.col, 1);
    assert_int_equal(d->nexpectations, 5);
    assert_string_equal(d->expectations[0].name, "adult");
    assert_string_equal(d->expectations[0].constraint, "age BETWEEN 0 AND 120");
    assert_int_equal(d->expectations[0].action, KNUT_PIPELINE_WARN);
    assert_int_equal(d->expectations[0].pos.line, 3);
    assert_int_equal(d->expectations[0].pos.col, 3);
    assert_int_equal(d->expectations[1].action, KNUT_PIPELINE_DROP);
    assert_string_equal(d->expectations[2].constraint, "f(x, (y))");
    assert_int_equal(d->expectations[2].action, KNUT_PIPELINE_FAIL);
    assert_int_equal(d->expectations[3].action, KNUT_PIPELINE_QUARANTINE);
    assert_null(d->expectations[4].constraint);
    assert_int_equal(d->expectations[4].nunique, 2);
    assert_string_equal(d->expectations[4].unique_cols[1], "Other");
    assert_int_equal(p->nflows, 1);
    assert_string_equal(p->flows[0].name, "people");
    assert_string_equal(p->flows[0].target, "people");
    assert_int_equal(p->flows[0].kind, KNUT_PIPELINE_FLOW_BATCH);
    assert_string_equal(p->flows[0].sql, "SELECT * FROM raw");
    assert_int_equal(p->flows[0].sql_pos.line, 9);
    assert_int_equal(p->flows[0].sql_pos.col, 4);
    knut_pipeline_free(p);
}

static void test_pipeline_parse__splitter_quoting(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    const char *q = "SELECT ';' AS a, \"x;y\" AS b, $$;$$ AS c, $t$ $$; $t$ AS d, E'\\';' AS e"
                    " /* ; /* nested ; */ */ -- ;\n FROM t";
    char sql[512];
    snprintf(sql, sizeof sql, "CREATE TEMPORARY VIEW v AS %s;\n;\nCREATE TEMP VIEW w AS SELECT 2",
             q);
    knut_pipeline *p = parse(sql, KNUT_OK, &err);
    assert_int_equal(p->nflows, 2);
    assert_string_equal(p->flows[0].sql, q);
    assert_int_equal(p->datasets[0].kind, KNUT_PIPELINE_TEMPORARY_VIEW);
    assert_string_equal(p->flows[1].name, "w");
    assert_int_equal(p->flows[1].pos.line, 4);
    knut_pipeline_free(p);
}

static void test_pipeline_parse__stream_live_and_sources(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    knut_pipeline *p = parse("CREATE STREAMING TABLE s AS SELECT * FROM STREAM(LIVE.a) JOIN "
                             "STREAM b USING (id), read_parquet('in/*.parquet', union_by_name = "
                             "true);\nCREATE LIVE TABLE m AS SELECT * FROM LIVE.s",
                             KNUT_OK, &err);
    const knut_pipeline_flow *f = &p->flows[0];
    assert_int_equal(f->kind, KNUT_PIPELINE_FLOW_STREAMING);
    assert_int_equal(f->nstream_names, 2);
    assert_string_equal(f->stream_names[0], "a");
    assert_string_equal(f->stream_names[1], "b");
    /* Blanked in place: DuckDB's offsets still point into the file. */
    assert_string_equal(f->sql, "SELECT * FROM             a  JOIN        b USING (id), "
                                "read_parquet('in/*.parquet', union_by_name = true)");
    assert_int_equal(f->nsources, 1);
    assert_string_equal(f->sources[0].function, "read_parquet");
    assert_string_equal(f->sources[0].pattern, "in/*.parquet");
    assert_memory_equal(f->sql + f->sources[0].at, "'in/*.parquet'", f->sources[0].len);
    assert_int_equal(p->datasets[1].kind, KNUT_PIPELINE_MATERIALIZED_VIEW);
    assert_string_equal(p->flows[1].sql, "SELECT * FROM      s");
    knut_pipeline_free(p);
}

static void test_pipeline_parse__flows_and_declared_tables(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    knut_pipeline *p = parse("CREATE OR REFRESH STREAMING TABLE t;\n"
                             "CREATE FLOW f1 AS INSERT INTO t BY NAME SELECT * FROM read_csv('a.csv');\n"
                             "CREATE FLOW f2 COMMENT 'backfill' AS INSERT INTO ONCE t SELECT 9 AS x;\n"
                             "CREATE FLOW f3 AS INSERT ONCE INTO t SELECT 8 AS x",
                             KNUT_OK, &err);
    assert_int_equal(p->ndatasets, 1);
    assert_int_equal(p->nflows, 3);
    assert_int_equal(p->flows[0].kind, KNUT_PIPELINE_FLOW_STREAMING);
    assert_string_equal(p->flows[0].target, "t");
    assert_int_equal(p->flows[1].kind, KNUT_PIPELINE_FLOW_APPEND_ONCE);
    assert_string_equal(p->flows[1].sql, "SELECT 9 AS x");
    assert_int_equal(p->flows[2].kind, KNUT_PIPELINE_FLOW_APPEND_ONCE);
    assert_int_equal(p->flows[2].pos.line, 4);
    knut_pipeline_free(p);
}

static void test_pipeline_parse__auto_cdc(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    knut_pipeline *p = parse(
        "CREATE STREAMING TABLE users;\n"
        "CREATE FLOW u AS AUTO CDC INTO users FROM STREAM(changes) KEYS (id, region)\n"
        "  IGNORE NULL UPDATES APPLY AS DELETE WHEN op = 'D' AND (x > 1)\n"
        "  APPLY AS TRUNCATE WHEN op = 'T' SEQUENCE BY STRUCT(ts, seq)\n"
        "  COLUMNS * EXCEPT (op, seq) STORED AS SCD TYPE 2 TRACK HISTORY ON * EXCEPT (city);\n"
        "APPLY CHANGES INTO LIVE.old FROM changes KEYS (id) SEQUENCE BY seq COLUMNS a, b",
        KNUT_OK, &err);
    assert_int_equal(p->nflows, 2);
    const knut_pipeline_cdc *c = p->flows[0].cdc;
    assert_int_equal(p->flows[0].kind, KNUT_PIPELINE_FLOW_CDC);
    assert_string_equal(c->source, "changes");
    assert_true(c->source_stream);
    assert_int_equal(c->nkeys, 2);
    assert_string_equal(c->keys[1], "region");
    assert_true(c->ignore_null_updates);
    assert_string_equal(c->delete_when, "op = 'D' AND (x > 1)");
    assert_string_equal(c->truncate_when, "op = 'T'");
    assert_string_equal(c->sequence_by, "STRUCT(ts, seq)");
    assert_true(c->columns.except);
    assert_int_equal(c->columns.n, 2);
    assert_int_equal(c->scd_type, 2);
    assert_true(c->track_history.except);
    assert_string_equal(c->track_history.names[0], "city");
    const knut_pipeline_cdc *o = p->flows[1].cdc;
    assert_string_equal(p->flows[1].name, "old");
    assert_string_equal(p->flows[1].target, "old");
    assert_int_equal(o->scd_type, 1);
    assert_false(o->columns.except);
    assert_int_equal(o->columns.n, 2);
    knut_pipeline_free(p);
}

static void test_pipeline_parse__auto_cdc_from_snapshot(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    knut_pipeline *p = parse(
        "CREATE FLOW s AS AUTO CDC INTO menu FROM SNAPSHOT(LIVE.src) KEYS (id)\n"
        "  IGNORE DELETES SEQUENCE BY updated_at INITIAL START AT TIMESTAMP '1970-01-01'\n"
        "  STORED AS SCD TYPE 2 TRACK HISTORY ON name;\n"
        "CREATE FLOW t AS AUTO CDC INTO other FROM SNAPSHOT src KEYS (id);\n"
        "CREATE FLOW u AS AUTO CDC INTO third FROM snapshot KEYS (id) SEQUENCE BY seq",
        KNUT_OK, &err);
    assert_int_equal(p->nflows, 3);
    const knut_pipeline_cdc *c = p->flows[0].cdc;
    assert_true(c->snapshot);
    assert_false(c->source_stream);
    assert_string_equal(c->source, "src");
    assert_true(c->ignore_deletes);
    assert_string_equal(c->sequence_by, "updated_at");
    assert_string_equal(c->initial_start, "TIMESTAMP '1970-01-01'");
    assert_int_equal(c->scd_type, 2);
    assert_string_equal(c->track_history.names[0], "name");
    c = p->flows[1].cdc;
    assert_true(c->snapshot);
    assert_null(c->sequence_by);
    assert_int_equal(c->scd_type, 1);
    /* a change feed from a dataset named "snapshot" */
    c = p->flows[2].cdc;
    assert_false(c->snapshot);
    assert_string_equal(c->source, "snapshot");
    knut_pipeline_free(p);
}

typedef struct bad_case {
    const char *sql;
    knut_status code;
    int line, col;
    const char *text;
} bad_case;

static void test_pipeline_parse__errors_name_file_line_col(void **state)
{
    (void)state;
    static const bad_case cases[] = {
        {"CREATE MATERIALIZED VIEW a AS SELECT 'x", KNUT_EPARSE, 1, 38, "unterminated string"},
        {"\n  SELECT 1", KNUT_EPARSE, 2, 3, "expected CREATE or APPLY CHANGES"},
        {"CREATE MATERIALIZED VIEW a AS SELECT 1 /* open", KNUT_EPARSE, 1, 40,
         "unterminated /* comment"},
        {"CREATE VIEW a AS SELECT 1", KNUT_EPARSE, 1, 8, "expected MATERIALIZED VIEW"},
        {"CREATE MATERIALIZED VIEW a;", KNUT_EPARSE, 1, 27, "expected AS and a query"},
        {"CREATE MATERIALIZED VIEW a AS SELECT 1;\nCREATE MATERIALIZED VIEW a AS SELECT 2",
         KNUT_EINVAL, 2, 26, "dataset 'a' is defined twice"},
        {"CREATE MATERIALIZED VIEW a (CONSTRAINT c EXPECT (x), CONSTRAINT c EXPECT (y)) AS "
         "SELECT 1",
         KNUT_EINVAL, 1, 54, "two expectations named 'c'"},
        {"CREATE MATERIALIZED VIEW a (id INT) AS SELECT 1", KNUT_EPARSE, 1, 29,
         "column definitions are not supported yet"},
        {"CREATE MATERIALIZED VIEW a (CONSTRAINT c EXPECT (x) ON VIOLATION SKIP) AS SELECT 1",
         KNUT_EPARSE, 1, 66, "expected DROP ROW, FAIL UPDATE or QUARANTINE"},
        {"CREATE MATERIALIZED VIEW s.a AS SELECT 1", KNUT_EPARSE, 1, 26,
         "dataset names are not qualified"},
        {"CREATE FLOW f AS AUTO CDC INTO t FROM s SEQUENCE BY x", KNUT_EPARSE, 1, 1,
         "CDC needs KEYS"},
        {"CREATE FLOW f AS AUTO CDC INTO t FROM s KEYS (k) SEQUENCE BY x TRACK HISTORY ON a",
         KNUT_EPARSE, 1, 64, "TRACK HISTORY ON needs STORED AS SCD TYPE 2"},
        {"CREATE FLOW f AS AUTO CDC INTO t FROM SNAPSHOT s KEYS (k) IGNORE NULL UPDATES",
         KNUT_EPARSE, 1, 66, "expected deletes, found 'NULL'"},
        {"CREATE FLOW f AS AUTO CDC INTO t FROM SNAPSHOT s KEYS (k) SEQUENCE BY x", KNUT_EPARSE,
         1, 1, "SEQUENCE BY and INITIAL START AT of FROM SNAPSHOT are for SCD TYPE 2"},
        {"CREATE MATERIALIZED VIEW a AS SELECT $$x", KNUT_EPARSE, 1, 38,
         "unterminated dollar-quoted string"},
        {"CREATE MATERIALIZED VIEW a (CONSTRAINT c EXPECT (x > 1) AS SELECT 1", KNUT_EPARSE, 1,
         57, "expected ',' or ')'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        knut_error err = KNUT_ERROR_INIT;
        knut_pipeline *p = parse(cases[i].sql, cases[i].code, &err);
        if (err.line != cases[i].line || err.col != cases[i].col ||
            !strstr(err.message, cases[i].text) || strncmp(err.message, "f.sql:", 6) != 0)
            fail_msg("case %zu: got '%s' (%d:%d)", i, err.message, err.line, err.col);
        knut_pipeline_free(p);
    }
}

static void test_pipeline_parse__nul_byte_and_cap(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    knut_pipeline *p = NULL;
    assert_int_equal(knut_pipeline_new(&p, "t", "st", &err), KNUT_OK);
    const char sql[] = "CREATE MATERIALIZED VIEW a AS SELECT '\0'";
    assert_int_equal(knut_pipeline_parse_sql(p, sql, sizeof sql - 1, "f.sql", &err), KNUT_EPARSE);
    assert_non_null(strstr(err.message, "NUL byte"));
    const char in_comment[] = "CREATE MATERIALIZED VIEW b AS SELECT 1 -- \0\n";
    assert_int_equal(knut_pipeline_parse_sql(p, in_comment, sizeof in_comment - 1, "f.sql", &err),
                     KNUT_EPARSE);
    assert_int_equal(err.col, 43);
    const char in_block[] = "CREATE MATERIALIZED VIEW c AS SELECT 1 /* \0 */";
    assert_int_equal(knut_pipeline_parse_sql(p, in_block, sizeof in_block - 1, "f.sql", &err),
                     KNUT_EPARSE);
    /* escaped: the byte after a backslash in E'' is checked too */
    const char escaped[] = "CREATE MATERIALIZED VIEW e AS SELECT E'\\\0'";
    assert_int_equal(knut_pipeline_parse_sql(p, escaped, sizeof escaped - 1, "f.sql", &err),
                     KNUT_EPARSE);
    assert_non_null(strstr(err.message, "NUL byte"));
    assert_int_equal(knut_pipeline_parse_sql(p, sql, KNUT_PIPELINE_SQL_MAX_BYTES + 1, "f.sql",
                                             &err),
                     KNUT_ETOOBIG);
    knut_pipeline_free(p);
}

static void test_pipeline_parse__expectation_cap(void **state)
{
    (void)state;
    knut_buf b = KNUT_BUF_INIT;
    knut_buf_puts(&b, "CREATE MATERIALIZED VIEW a (");
    for (int i = 0; i <= KNUT_PIPELINE_MAX_EXPECTATIONS; i++)
        knut_buf_printf(&b, "%sCONSTRAINT c%d EXPECT (x > %d)", i ? ", " : "", i, i);
    knut_buf_puts(&b, ") AS SELECT 1 AS x");
    assert_int_equal(knut_buf_check(&b, NULL), KNUT_OK);
    knut_error err = KNUT_ERROR_INIT;
    knut_pipeline *p = parse(b.data, KNUT_ETOOBIG, &err);
    assert_non_null(strstr(err.message, "more than 256 expectations"));
    knut_pipeline_free(p);
    knut_buf_reset(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pipeline_parse__materialized_view_with_expectations),
        cmocka_unit_test(test_pipeline_parse__splitter_quoting),
        cmocka_unit_test(test_pipeline_parse__stream_live_and_sources),
        cmocka_unit_test(test_pipeline_parse__flows_and_declared_tables),
        cmocka_unit_test(test_pipeline_parse__auto_cdc),
        cmocka_unit_test(test_pipeline_parse__auto_cdc_from_snapshot),
        cmocka_unit_test(test_pipeline_parse__errors_name_file_line_col),
        cmocka_unit_test(test_pipeline_parse__nul_byte_and_cap),
        cmocka_unit_test(test_pipeline_parse__expectation_cap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
