/*
 * Unit tests for the sync mapping config (src/sync/config.c): a complete
 * config parses into the expected steps (rename, {name, column}
 * properties, endpoint keys, fk edges, cdc), every mistake names
 * file:line:col, the table and the key or column; the shipped example
 * loads; `mode: full` opens and owns its labels and edge types; `name:`
 * (the shared ledger's key namespace) is a plain word, and its absence is
 * an error naming file:line and the old default; and the round loop's
 * backoff.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "knut/sync.h"
#include "sync/sync_int.h"

static knut_sync_config *parse_ok(const char *text)
{
    knut_sync_config *c = NULL;
    knut_error err = KNUT_ERROR_INIT;
    if (knut_sync_config_parse(&c, text, strlen(text), "sync.yml", "/data", &err) != KNUT_OK)
        fail_msg("unexpected error: %s", err.message);
    return c;
}

/* text must fail with a message containing every NULL-terminated needle. */
static void parse_bad(const char *text, ...)
{
    knut_sync_config *c = (knut_sync_config *)(uintptr_t)1;
    knut_error err = KNUT_ERROR_INIT;
    knut_status st = knut_sync_config_parse(&c, text, strlen(text), "sync.yml", NULL, &err);
    assert_int_not_equal(st, KNUT_OK);
    assert_null(c);
    va_list ap;
    va_start(ap, text);
    for (const char *n; (n = va_arg(ap, const char *)) != NULL;)
        if (!strstr(err.message, n))
            fail_msg("message '%s' lacks '%s'", err.message, n);
    va_end(ap);
}

static const char full_cfg[] =
    "store: g.duckdb\n"
    "tables:\n"
    "  people:\n"
    "    path: people/\n"
    "    sql: SELECT * FROM input\n"
    "    vertices:\n"
    "      - labels: [Person, Employee]\n"
    "        keys: [person_id]\n"
    "        properties: [name, {name: birthday, column: born}]\n"
    "        rename: {person_id: id, name: full_name}\n"
    "    fk_edges:\n"
    "      - {type: REPORTS_TO, column: manager_id, to: {label: Person, key: id}}\n"
    "  work:\n"
    "    path: /abs/work-*.parquet\n"
    "    format: parquet\n"
    "    mode: cdc\n"
    "    vertices:\n"
    "      - label: Job\n"
    "        keys: [job_id]\n"
    "    edges:\n"
    "      - type: AT\n"
    "        from: {label: Person, keys: {id: person_id}}\n"
    "        to: {label: Company, keys: [company_id]}\n";

static void test_parse_complete(void **state)
{
    (void)state;
    knut_sync_config *c = parse_ok(full_cfg);
    assert_string_equal(c->store, "/data/g.duckdb");
    assert_int_equal(c->n_tables, 2);
    const knut_sync_table *p = &c->tables[0];
    assert_string_equal(p->name, "people");
    assert_string_equal(p->path, "/data/people/");
    assert_int_equal(p->mode, KNUT_SYNC_MODE_INCREMENTAL);
    assert_int_equal(p->format, KNUT_SYNC_FORMAT_AUTO);
    assert_string_equal(p->sql, "SELECT * FROM input");
    assert_int_equal(p->n_vertices, 1);
    assert_int_equal(p->vertices[0].n_labels, 2);
    assert_string_equal(p->vertices[0].labels[1], "Employee");
    assert_string_equal(p->vertices[0].keys[0].prop, "id");
    assert_string_equal(p->vertices[0].keys[0].column, "person_id");
    assert_int_equal(p->vertices[0].all_props, 0);
    assert_string_equal(p->vertices[0].props[0].prop, "full_name");
    assert_string_equal(p->vertices[0].props[0].column, "name");
    assert_string_equal(p->vertices[0].props[1].prop, "birthday");
    assert_string_equal(p->vertices[0].props[1].column, "born");
    assert_int_equal(p->n_fk_edges, 1);
    assert_string_equal(p->fk_edges[0].to_key, "id");
    const knut_sync_table *w = &c->tables[1];
    assert_string_equal(w->path, "/abs/work-*.parquet");
    assert_int_equal(w->format, KNUT_SYNC_FORMAT_PARQUET);
    assert_int_equal(w->mode, KNUT_SYNC_MODE_CDC);
    assert_string_equal(w->vertices[0].labels[0], "Job");
    assert_int_equal(w->vertices[0].all_props, 1);
    assert_string_equal(w->edges[0].from.keys[0].prop, "id");
    assert_string_equal(w->edges[0].from.keys[0].column, "person_id");
    assert_string_equal(w->edges[0].to.keys[0].prop, "company_id");
    assert_int_equal(w->edges[0].all_props, 1);
    knut_sync_config_free(c);
}

static void test_errors_name_position(void **state)
{
    (void)state;
    parse_bad("tables: {}\n", "sync.yml:1:", "'tables'", NULL);
    parse_bad("tablez: {}\n", "sync.yml:1:", "unknown key 'tablez'", NULL);
    parse_bad("tables:\n  t:\n    vertices: [{labels: [A], keys: [k]}]\n",
              "sync.yml:3:5", "table 't'", "'path'", NULL);
    parse_bad("tables:\n  t:\n    path: x\n    mode: append\n"
              "    vertices: [{labels: [A], keys: [k]}]\n",
              "sync.yml:4:11", "table 't'", "mode must be", NULL);
    parse_bad("tables:\n  t:\n    path: x\n    format: orc\n"
              "    vertices: [{labels: [A], keys: [k]}]\n",
              "sync.yml:4:13", "table 't'", "parquet or csv", NULL);
    parse_bad("tables:\n  t:\n    path: x\n", "table 't'", "at least one vertex or edge", NULL);
    parse_bad("tables:\n  t:\n    path: x\n    vertices:\n      - labels: [A]\n",
              "sync.yml:5:", "table 't'", "needs 'keys'", NULL);
    parse_bad("tables:\n  t:\n    path: x\n    vertices:\n      - labels: [A]\n"
              "        keys: [id]\n        propertys: [a]\n",
              "sync.yml:7:", "table 't'", "unknown key 'propertys'", NULL);
    parse_bad("tables:\n  t:\n    path: x\n    vertices:\n      - labels: [A]\n"
              "        keys: [id]\n        properties: [a, a]\n",
              "sync.yml:7:", "table 't'", "'a' listed twice", NULL);
    parse_bad("tables:\n  t:\n    path: x\n    vertices:\n      - labels: [A]\n"
              "        keys: [id]\n        properties: [_change_type]\n",
              "sync.yml:7:", "'_change_type'", NULL);
    parse_bad("tables:\n  t:\n    path: x\n    vertices:\n      - labels: ['a`b']\n"
              "        keys: [id]\n",
              "sync.yml:5:", "backtick", NULL);
    parse_bad("tables:\n  t:\n    path: x\n    edges:\n      - type: E\n"
              "        from: {label: A, keys: {id: ''}}\n        to: {label: B, keys: [id]}\n",
              "sync.yml:6:", "table 't'", "key 'id' of 'from'", NULL);
    parse_bad("tables:\n  t:\n    path: x\n    edges:\n      - type: E\n        from: {label: A}\n"
              "        to: {label: B, keys: [id]}\n",
              "sync.yml:6:", "'from' needs 'keys'", NULL);
    parse_bad("tables:\n  t:\n    path: x\n    edges:\n      - {type: E, to: {label: B, keys: [id]}}\n",
              "sync.yml:5:", "needs 'from' and 'to'", NULL);
    parse_bad("tables:\n  t:\n    path: x\n    edges:\n      - type: E\n"
              "        from: {label: A, keys: [a]}\n        to: {label: B, keys: [b]}\n"
              "    fk_edges: [{type: F, column: c, to: {label: B, key: b}}]\n",
              "sync.yml:8:", "first vertex step", NULL);
    parse_bad("tables:\n  t:\n    path: x\n    vertices: [{labels: [A], keys: [k]}]\n"
              "    fk_edges: [{type: F, column: c, to: {label: B}}]\n",
              "sync.yml:5:", "table 't'", "'key'", NULL);
    parse_bad("tables:\n  t:\n    path: x\n    sql: ''\n    vertices: [{labels: [A], keys: [k]}]\n",
              "sync.yml:4:", "'sql'", NULL);
    /* cdc with edge steps only is fine: its DELETE rows delete edges */
    knut_sync_config *cdc_edges = parse_ok(
        "tables:\n  t:\n    path: x\n    mode: cdc\n    edges:\n      - type: E\n"
        "        from: {label: A, keys: [a]}\n        to: {label: B, keys: [b]}\n");
    assert_int_equal(KNUT_SYNC_MODE_CDC, cdc_edges->tables[0].mode);
    assert_int_equal(1, cdc_edges->tables[0].n_edges);
    knut_sync_config_free(cdc_edges);
    parse_bad("tables: [\n", "sync.yml", NULL);
}

static void test_example_loads(void **state)
{
    (void)state;
    knut_sync_config *c = NULL;
    knut_error err = KNUT_ERROR_INIT;
    if (knut_sync_config_load(&c, KNUT_SOURCE_DIR "/examples/lakehouse/sync.yml", &err) != KNUT_OK)
        fail_msg("%s", err.message);
    assert_int_equal(c->n_tables, 4);
    assert_string_equal(c->tables[3].name, "people_changes");
    assert_int_equal(c->tables[3].mode, KNUT_SYNC_MODE_CDC);
    knut_sync_config_free(c);
    assert_int_not_equal(knut_sync_config_load(&c, "/nonexistent/sync.yml", &err), KNUT_OK);
    assert_non_null(strstr(err.message, "/nonexistent/sync.yml"));
}

/* mode full opens; a full table owns its merge labels and edge types. */
static void test_full_mode_owns_labels_and_types(void **state)
{
    (void)state;
    knut_sync_config *c = parse_ok("tables:\n  t:\n    path: x\n    mode: full\n"
                                   "    vertices: [{labels: [A], keys: [k]}]\n");
    knut_sync *s = NULL;
    knut_error err = KNUT_ERROR_INIT;
    knut_sync_options o = KNUT_SYNC_OPTIONS_INIT;
    o.store = ":memory:";
    assert_int_equal(knut_sync_open(&s, c, &o, &err), KNUT_OK);
    knut_sync_close(s);
    knut_sync_config_free(c);
    /* another table writing the merge label, even as a second label */
    parse_bad("tables:\n"
              "  t:\n    path: x\n    mode: full\n"
              "    vertices:\n      - {labels: [A], keys: [k]}\n"
              "  u:\n    path: y\n"
              "    vertices:\n      - {labels: [B, A], keys: [k]}\n",
              "sync.yml:10:9: table 'u': label 'A' belongs to full table 't' (sync.yml:6:9)",
              NULL);
    /* an edge type, as an edge step or a foreign-key step */
    parse_bad("tables:\n"
              "  t:\n    path: x\n    mode: full\n"
              "    edges:\n      - {type: E, from: {label: A, keys: [k]}, to: {label: A, "
              "keys: [j]}}\n"
              "  u:\n    path: y\n"
              "    vertices: [{labels: [B], keys: [k]}]\n"
              "    fk_edges: [{type: E, column: c, to: {label: A, key: k}}]\n",
              "table 'u': edge type 'E' belongs to full table 't' (sync.yml:6:9)", NULL);
    /* inside the full table: one step per merge label, and per (type, labels) */
    parse_bad("tables:\n  t:\n    path: x\n    mode: full\n"
              "    vertices:\n      - {labels: [A], keys: [k]}\n"
              "      - {labels: [A], keys: [j]}\n",
              "table 't': label 'A' is written twice by full table 't'", NULL);
    c = parse_ok("tables:\n  t:\n    path: x\n    mode: full\n"
                 "    edges:\n      - {type: E, from: {label: A, keys: [k]}, to: {label: A, "
                 "keys: [j]}}\n"
                 "      - {type: E, from: {label: A, keys: [k]}, to: {label: B, keys: [j]}}\n"
                 "  u:\n    path: y\n"
                 "    edges:\n      - {type: F, from: {label: A, keys: [k]}, to: {label: A, "
                 "keys: [j]}}\n");
    knut_sync_config_free(c); /* other labels for one type; others may link to A */
}

static void test_backoff(void **state)
{
    (void)state;
    const int64_t i = 10, max = 100;
    int64_t w = i;
    w = knut_sync_backoff_next(w, i, max, 0);
    assert_int_equal(w, 20);
    w = knut_sync_backoff_next(w, i, max, 0);
    assert_int_equal(w, 40);
    w = knut_sync_backoff_next(w, i, max, 0);
    assert_int_equal(w, 80);
    w = knut_sync_backoff_next(w, i, max, 0);
    assert_int_equal(w, 100); /* capped */
    w = knut_sync_backoff_next(w, i, max, 0);
    assert_int_equal(w, 100);
    w = knut_sync_backoff_next(w, i, max, 1); /* progress resets */
    assert_int_equal(w, 10);
    assert_int_equal(knut_sync_backoff_next(10, 10, 5, 0), 10); /* max below interval */
    assert_int_equal(knut_sync_backoff_next(INT64_MAX / 2 + 1, 10, INT64_MAX, 0), INT64_MAX);
}

/* missing_endpoints: wait by default (skip for mode: full), each value,
 * the timeout, and the mistakes. */
static void test_missing_endpoints(void **state)
{
    (void)state;
    knut_sync_config *c = parse_ok(
        "tables:\n"
        "  a: {path: a/, vertices: [{labels: [A], keys: [id]}]}\n"
        "  b: {path: b/, missing_endpoints: skip, vertices: [{labels: [B], keys: [id]}]}\n"
        "  c: {path: c/, missing_endpoints: fail, vertices: [{labels: [C], keys: [id]}]}\n"
        "  d: {path: d/, missing_endpoints: wait, missing_endpoints_timeout: 2.5,\n"
        "      vertices: [{labels: [D], keys: [id]}]}\n"
        "  e: {path: e/, mode: full, vertices: [{labels: [E], keys: [id]}]}\n");
    assert_int_equal(c->tables[0].missing_endpoints, KNUT_SYNC_MISSING_WAIT);
    assert_int_equal(c->tables[0].missing_timeout_ms,
                     (int64_t)KNUT_SYNC_MISSING_TIMEOUT_DEFAULT_S * 1000);
    assert_int_equal(c->tables[1].missing_endpoints, KNUT_SYNC_MISSING_SKIP);
    assert_int_equal(c->tables[2].missing_endpoints, KNUT_SYNC_MISSING_FAIL);
    assert_int_equal(c->tables[3].missing_endpoints, KNUT_SYNC_MISSING_WAIT);
    assert_int_equal(c->tables[3].missing_timeout_ms, 2500);
    assert_int_equal(c->tables[4].missing_endpoints, KNUT_SYNC_MISSING_SKIP);
    knut_sync_config_free(c);
    parse_bad("tables:\n  a: {path: a/, missing_endpoints: later, vertices: [{labels: [A], "
              "keys: [id]}]}\n",
              "sync.yml:2:", "table 'a'", "missing_endpoints must be wait, skip or fail",
              NULL);
    parse_bad("tables:\n  a: {path: a/, missing_endpoints: fail, missing_endpoints_timeout: "
              "3, vertices: [{labels: [A], keys: [id]}]}\n",
              "table 'a'", "needs missing_endpoints: wait", NULL);
    parse_bad("tables:\n  a: {path: a/, missing_endpoints_timeout: -1, vertices: "
              "[{labels: [A], keys: [id]}]}\n",
              "missing_endpoints_timeout must be seconds", NULL);
    parse_bad("tables:\n  a: {path: a/, mode: full, missing_endpoints: wait, vertices: "
              "[{labels: [A], keys: [id]}]}\n",
              "wait is not for mode: full", NULL);
}

static void test_name(void **state)
{
    (void)state;
    static const char tail[] = "tables:\n  t:\n    path: t/\n"
                               "    vertices: [{labels: [T], keys: [id]}]\n";
    char text[512];
    knut_error err = KNUT_ERROR_INIT;
    const char *name = NULL;
    snprintf(text, sizeof text, "name: sales-lake_2.eu\n%s", tail);
    knut_sync_config *c = parse_ok(text);
    assert_string_equal(c->name, "sales-lake_2.eu");
    assert_int_equal(knut_sync__config_name(c, "a shared ledger", &name, &err), KNUT_OK);
    assert_string_equal(name, "sales-lake_2.eu");
    knut_sync_config_free(c);

    c = parse_ok(tail); /* fine without a shared ledger; required with one */
    assert_null(c->name);
    assert_int_equal(knut_sync__config_name(c, "a shared ledger (--ledger-url)", &name, &err),
                     KNUT_EINVAL);
    assert_non_null(strstr(err.message, "sync.yml:1:1: a shared ledger (--ledger-url) needs "
                                        "'name:' in the config"));
    assert_non_null(strstr(err.message, "'name: sync'")); /* the old keys' name */
    knut_sync_config_free(c);

    static const char *const bad[] = {"a:b", "two words", "''", "[x]", "caf\xc3\xa9"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(text, sizeof text, "name: %s\n%s", bad[i], tail);
        parse_bad(text, "sync.yml:1:7: 'name' must be 1 to 128 letters", NULL);
    }
}

/* `iceberg:` instead of `path:` (iceberg_config.c): the two forms, the
 * cdc default, and each mistake at its key. */
static void test_iceberg(void **state)
{
    (void)state;
    static const char steps[] = "    vertices: [{labels: [T], keys: [id]}]\n";
    char text[1024];
    snprintf(text, sizeof text,
             "tables:\n  t:\n    iceberg: {table: db.t, catalog: cat.db}\n%s"
             "  u:\n    iceberg: {path: /wh/db/u}\n    mode: full\n"
             "    vertices: [{labels: [U], keys: [id]}]\n", steps);
    knut_sync_config *c = parse_ok(text);
    const knut_sync_iceberg *a = c->tables[0].iceberg, *b = c->tables[1].iceberg;
    assert_non_null(a);
    assert_string_equal(a->catalog, "/data/cat.db");
    assert_string_equal(a->identifier, "db.t");
    assert_null(a->catalog_name);
    assert_string_equal(a->key, "iceberg:db.t");
    assert_int_equal(c->tables[0].mode, KNUT_SYNC_MODE_CDC);
    assert_string_equal(c->tables[0].path, "/data/cat.db"); /* its folder is watched */
    assert_null(b->catalog);
    assert_string_equal(b->path, "/wh/db/u");
    assert_string_equal(b->key, "iceberg:/wh/db/u");
    assert_string_equal(c->tables[1].path, "/wh/db/u/metadata");
    assert_int_equal(c->tables[1].mode, KNUT_SYNC_MODE_FULL);
    assert_null(c->tables[0].columns);
    knut_sync_config_free(c);

    static const struct {
        const char *table, *needle;
    } bad[] = {
        {"    path: t/\n    iceberg: {path: x}\n", "sync.yml:3:11: table 't': 'path' describes"},
        {"    iceberg: {path: x}\n    sequence_by: v\n", "sync.yml:4:18: table 't': 'sequence_by'"},
        {"    iceberg: {path: x, tabel: y}\n",
         "sync.yml:3:24: table 't': unknown key 'tabel' in iceberg (did you mean 'table'?)"},
        {"    iceberg: {table: db.t}\n", "sync.yml:3:14: table 't': iceberg: needs 'table'"},
        {"    iceberg: {table: t, catalog: c.db}\n", "sync.yml:3:22: table 't': iceberg: 'table' "
                                                   "must be namespace.name"},
        {"    iceberg: {path: x, catalog_name: d}\n", "goes with none"},
        {"    iceberg: {path: ''}\n", "'path' must be a non-empty string"},
        {"    iceberg: {path: x}\n    mode: incremental\n", "sync.yml:4:11: table 't': a table "
                                                              "with 'iceberg:' is mode cdc"},
        {"    iceberg: [x]\n", "'iceberg' must be a map"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(text, sizeof text, "tables:\n  t:\n%s%s", bad[i].table, steps);
        parse_bad(text, bad[i].needle, NULL);
    }
}

static void test_spark(void **state)
{
    (void)state;
    static const char steps[] = "    vertices: [{labels: [T], keys: [id]}]\n";
    char text[1024];
    snprintf(text, sizeof text,
             "tables:\n  t:\n    spark: {table: cat.db.t, connect: 'sc://h:1/', token_file: tok,\n"
             "            allow_insecure_token: yes}\n%s"
             "  u:\n    spark: {table: u, state: /var/lib/knut/spark, ca_file: /etc/ca.pem,\n"
             "            changes: changelog}\n"
             "    mode: full\n    vertices: [{labels: [U], keys: [id]}]\n", steps);
    knut_sync_config *c = parse_ok(text);
    const knut_sync_spark *a = c->tables[0].spark, *b = c->tables[1].spark;
    assert_non_null(a);
    assert_string_equal(a->table, "cat.db.t");
    assert_string_equal(a->connect, "sc://h:1/");
    assert_string_equal(a->token_file, "/data/tok");
    assert_int_equal(a->allow_insecure_token, 1);
    assert_string_equal(a->state, "/data/.knut-spark");
    assert_string_equal(a->key, "spark:cat.db.t");
    assert_string_equal(c->tables[0].path, "spark:cat.db.t");
    assert_int_equal(c->tables[0].mode, KNUT_SYNC_MODE_CDC);
    assert_null(b->connect);
    assert_null(b->token_file);
    assert_string_equal(b->ca_file, "/etc/ca.pem");
    assert_string_equal(b->state, "/var/lib/knut/spark");
    assert_int_equal(c->tables[1].mode, KNUT_SYNC_MODE_FULL);
    assert_int_equal(a->changelog, 0);
    assert_int_equal(b->changelog, 1);
    assert_null(c->tables[0].iceberg);
    knut_sync_config_free(c);

    static const struct {
        const char *table, *needle;
    } bad[] = {
        {"    path: t/\n    spark: {table: t}\n", "sync.yml:3:11: table 't': spark: 'path' "
                                                  "describes"},
        {"    spark: {table: t, tabel: y}\n",
         "sync.yml:3:23: table 't': unknown key 'tabel' in spark (did you mean 'table'?)"},
        {"    spark: {connect: 'sc://h/'}\n", "sync.yml:3:12: table 't': spark: needs 'table'"},
        {"    spark: {table: a.b.c.d}\n", "'table' must be name, db.name or catalog.db.name"},
        {"    spark: {table: 'a`b'}\n", "(no backticks)"},
        {"    spark: {table: t, connect: 'grpc://h'}\n", "'connect' must be an sc:// URL"},
        {"    spark: {table: t, allow_insecure_token: maybe}\n", "allow_insecure_token"},
        {"    spark: {table: t}\n    mode: incremental\n", "sync.yml:4:11: table 't': a table "
                                                         "with 'spark:' is mode cdc"},
        {"    spark: {table: t}\n    iceberg: {path: x}\n", "not both"},
        {"    spark: [x]\n", "spark: must be a map"},
        {"    spark: {table: t, changes: cdc}\n", "'changes' must be compare"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(text, sizeof text, "tables:\n  t:\n%s%s", bad[i].table, steps);
        parse_bad(text, bad[i].needle, NULL);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_complete),
        cmocka_unit_test(test_errors_name_position),
        cmocka_unit_test(test_example_loads),
        cmocka_unit_test(test_full_mode_owns_labels_and_types),
        cmocka_unit_test(test_backoff),
        cmocka_unit_test(test_missing_endpoints),
        cmocka_unit_test(test_name),
        cmocka_unit_test(test_iceberg),
        cmocka_unit_test(test_spark),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
