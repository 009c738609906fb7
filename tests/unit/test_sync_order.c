/*
 * Unit tests for the ordering of a round (src/sync/order.c, table_hash.c):
 * tables that write edges come after the tables of their endpoint labels,
 * stably w.r.t. the config order; a label a table writes itself keeps the
 * config order among its writers; a cycle falls back to config order; a
 * failed, skipped or held-back dependency holds a table back; the config
 * hash changes with what maps the files and only with it; and the ledger
 * codec keeps entries without a config hash loadable.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "sync/sync_int.h"

static knut_sync_config *parse(const char *text)
{
    knut_sync_config *c = NULL;
    knut_error err = KNUT_ERROR_INIT;
    if (knut_sync_config_parse(&c, text, strlen(text), "sync.yml", "/data", &err) != KNUT_OK)
        fail_msg("unexpected error: %s", err.message);
    return c;
}

static const char LAKE[] =
    "tables:\n"
    "  employment:\n"
    "    path: e.csv\n"
    "    edges: [{type: W, from: {label: Person, keys: {id: p}}, to: {label: Company, keys: "
    "{id: c}}}]\n"
    "  tags:\n"
    "    path: t.csv\n"
    "    vertices: [{labels: [Tag], keys: [id]}]\n"
    "  people:\n"
    "    path: p.csv\n"
    "    vertices: [{labels: [Person, Employee], keys: [id]}]\n"
    "    fk_edges: [{type: R, column: m, to: {label: Person, key: id}}]\n"
    "  more_people:\n"
    "    path: q.csv\n"
    "    vertices: [{labels: [Person], keys: [id]}]\n"
    "    fk_edges: [{type: R, column: m, to: {label: Person, key: id}}]\n"
    "  companies:\n"
    "    path: c.csv\n"
    "    vertices: [{labels: [Company], keys: [id]}]\n";

static void test_order_follows_endpoints(void **state)
{
    (void)state;
    knut_sync_config *c = parse(LAKE);
    sync_order o;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_sync__order_build(&o, c, &err), KNUT_OK);
    assert_false(o.cycle);
    /* tags, people, more_people (after people: both write Person), companies,
     * then employment, which needs Person and Company */
    size_t want[] = {1, 2, 3, 4, 0};
    for (size_t k = 0; k < 5; k++)
        assert_int_equal(o.idx[k], want[k]);
    knut_sync__order_round_begin(&o);
    assert_int_equal(knut_sync__order_waits_for(&o, 0), o.n);
    o.state[1] = SYNC_TABLE_SKIPPED; /* tags: nobody needs it */
    o.state[2] = SYNC_TABLE_RAN;
    o.state[3] = SYNC_TABLE_SKIPPED; /* more_people: lease held elsewhere */
    assert_int_equal(knut_sync__order_waits_for(&o, 0), 3);
    o.state[3] = SYNC_TABLE_RAN;
    o.state[4] = SYNC_TABLE_FAILED;
    assert_int_equal(knut_sync__order_waits_for(&o, 0), 4);
    o.state[4] = SYNC_TABLE_HELD;
    assert_int_equal(knut_sync__order_waits_for(&o, 0), 4);
    knut_sync__order_round_begin(&o); /* a new round forgets */
    assert_int_equal(knut_sync__order_waits_for(&o, 0), o.n);
    knut_sync__order_reset(&o);
    knut_sync_config_free(c);
}

static void test_cycle_keeps_config_order(void **state)
{
    (void)state;
    knut_sync_config *c = parse(
        "tables:\n"
        "  b:\n"
        "    path: b.csv\n"
        "    vertices: [{labels: [B], keys: [id]}]\n"
        "    fk_edges: [{type: T, column: a, to: {label: A, key: id}}]\n"
        "  a:\n"
        "    path: a.csv\n"
        "    vertices: [{labels: [A], keys: [id]}]\n"
        "    fk_edges: [{type: T, column: b, to: {label: B, key: id}}]\n"
        "  z:\n"
        "    path: z.csv\n"
        "    vertices: [{labels: [Z], keys: [id]}]\n");
    sync_order o;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_sync__order_build(&o, c, &err), KNUT_OK);
    assert_true(o.cycle);
    size_t want[] = {2, 0, 1}; /* z is ready; b and a in config order */
    for (size_t k = 0; k < 3; k++)
        assert_int_equal(o.idx[k], want[k]);
    knut_sync__order_reset(&o);
    knut_sync_config_free(c);
}

static void test_config_hash(void **state)
{
    (void)state;
    const char *base = "tables:\n  t:\n    path: t.csv\n    sql: SELECT * FROM input\n"
                       "    vertices: [{labels: [P], keys: [id], rename: {id: key}}]\n";
    char h1[17], h2[17], h3[17], h4[17];
    knut_sync_config *c = parse(base);
    knut_sync__table_hash(&c->tables[0], h1);
    knut_sync__table_hash(&c->tables[0], h2);
    assert_string_equal(h1, h2);
    assert_int_equal(strlen(h1), 16);
    knut_sync_config_free(c);
    c = parse("tables:\n  t:\n    path: t.csv\n    sql: SELECT id FROM input\n"
              "    vertices: [{labels: [P], keys: [id], rename: {id: key}}]\n");
    knut_sync__table_hash(&c->tables[0], h3);
    knut_sync_config_free(c);
    assert_string_not_equal(h1, h3); /* the sql step */
    c = parse("tables:\n  t:\n    path: t.csv\n    sql: SELECT * FROM input\n"
              "    vertices: [{labels: [P], keys: [id], rename: {id: k2}}]\n");
    knut_sync__table_hash(&c->tables[0], h4);
    knut_sync_config_free(c);
    assert_string_not_equal(h1, h4); /* the rename */
    /* layout alone (flow vs block style, comments) is not a change */
    c = parse("tables:\n  t:  # people\n    path: t.csv\n    sql: SELECT * FROM input\n"
              "    vertices:\n      - labels: [P]\n        keys: [id]\n"
              "        rename: {id: key}\n");
    knut_sync__table_hash(&c->tables[0], h2);
    knut_sync_config_free(c);
    assert_string_equal(h1, h2);
}

static void test_sequence_by_config(void **state)
{
    (void)state;
    knut_sync_config *c = parse("tables:\n  t:\n    path: t/\n    mode: cdc\n"
                                "    sequence_by: lsn\n"
                                "    vertices: [{labels: [P], keys: [id]}]\n");
    assert_string_equal(c->tables[0].sequence_by, "lsn");
    knut_sync_config_free(c);
    const char *bad = "tables:\n  t:\n    path: t/\n    sequence_by: lsn\n"
                      "    vertices: [{labels: [P], keys: [id]}]\n";
    knut_sync_config *b = NULL;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_not_equal(knut_sync_config_parse(&b, bad, strlen(bad), "sync.yml", NULL, &err),
                         KNUT_OK);
    assert_non_null(strstr(err.message, "only with mode: cdc"));
    assert_non_null(strstr(err.message, "sync.yml:4:"));
}

static void test_entry_config_hash_codec(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    sync_entry e;
    /* written before the config hash: loads, config NULL */
    const char *old = "{\"table\":\"t\",\"path\":\"p\",\"size\":1,\"mtime\":2,\"hash\":null,"
                      "\"status\":\"failed\",\"reason\":\"x\",\"round\":1,\"rows\":0}";
    assert_int_equal(knut_sync__entry_decode(old, strlen(old), "w", &e, &err), KNUT_OK);
    assert_null(e.config);
    knut_sync__entry_reset(&e);
    sync_entry in = {"t", "p", NULL, "failed", "x", 1, 2, 1, 0, "00ff00ff00ff00ff"};
    knut_buf b = KNUT_BUF_INIT;
    assert_int_equal(knut_sync__entry_encode(&b, &in, "w", &err), KNUT_OK);
    assert_non_null(strstr(b.data, "\"config\":\"00ff00ff00ff00ff\""));
    assert_int_equal(knut_sync__entry_decode(b.data, b.len, "w", &e, &err), KNUT_OK);
    assert_string_equal(e.config, "00ff00ff00ff00ff");
    knut_sync__entry_reset(&e);
    in.config = "NOT HEX";
    assert_int_not_equal(knut_sync__entry_encode(&b, &in, "w", &err), KNUT_OK);
    assert_non_null(strstr(err.message, "\"config\""));
    const char *bad = "{\"table\":\"t\",\"path\":\"p\",\"size\":1,\"mtime\":2,\"hash\":null,"
                      "\"status\":\"done\",\"reason\":null,\"round\":1,\"rows\":0,\"config\":7}";
    assert_int_not_equal(knut_sync__entry_decode(bad, strlen(bad), "w", &e, &err), KNUT_OK);
    assert_non_null(strstr(err.message, "\"config\""));
    knut_buf_reset(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order_follows_endpoints),
        cmocka_unit_test(test_cycle_keeps_config_order),
        cmocka_unit_test(test_config_hash),
        cmocka_unit_test(test_sequence_by_config),
        cmocka_unit_test(test_entry_config_hash_codec),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
