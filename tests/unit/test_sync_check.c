/*
 * Unit tests for knut_sync_check (src/sync/check.c, check_graph.c) on
 * configs parsed from text over a temporary folder: a clean config has no
 * problem; the problems of the tables together (labels edges use that no
 * table writes, a label merged on other keys, an edge finding a label by
 * other keys) and of the targets (no store, a store whose folder is
 * missing) are reported with their kind and table; a path matching no
 * file; the count matches the callback's calls, and fn may be NULL.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "knut/sync.h"

typedef struct seen {
    int n;
    char kinds[16][16];
    char tables[16][32];
    char messages[16][1024];
} seen;

static void note(const knut_sync_problem *p, void *ctx)
{
    seen *s = ctx;
    if (s->n >= 16)
        return;
    snprintf(s->kinds[s->n], sizeof s->kinds[0], "%s", p->kind);
    snprintf(s->tables[s->n], sizeof s->tables[0], "%s", p->table ? p->table : "");
    snprintf(s->messages[s->n], sizeof s->messages[0], "%s", p->message);
    s->n++;
}

static char dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/knut-check-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    char p[128];
    snprintf(p, sizeof p, "%s/c.csv", dir);
    FILE *f = fopen(p, "w");
    if (!f)
        return -1;
    fputs("id,name\n1,Acme\n", f);
    fclose(f);
    snprintf(p, sizeof p, "%s/p.csv", dir);
    if (!(f = fopen(p, "w")))
        return -1;
    fputs("pid,cid\n1,1\n", f);
    fclose(f);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char p[128];
    snprintf(p, sizeof p, "%s/c.csv", dir);
    unlink(p);
    snprintf(p, sizeof p, "%s/p.csv", dir);
    unlink(p);
    rmdir(dir);
    return 0;
}

static seen run(const char *text, int64_t *n)
{
    knut_sync_config *c = NULL;
    knut_error err = KNUT_ERROR_INIT;
    seen s = {0};
    if (knut_sync_config_parse(&c, text, strlen(text), "sync.yml", dir, &err) != KNUT_OK)
        fail_msg("config: %s", err.message);
    if (knut_sync_check(c, NULL, note, &s, n, &err) != KNUT_OK)
        fail_msg("check: %s", err.message);
    int64_t again = -1;
    assert_int_equal(knut_sync_check(c, NULL, NULL, NULL, &again, &err), KNUT_OK);
    assert_int_equal(again, *n); /* no callback: the same count */
    knut_sync_config_free(c);
    return s;
}

static int has(const seen *s, const char *kind, const char *table, const char *needle)
{
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->kinds[i], kind) == 0 && strcmp(s->tables[i], table) == 0 &&
            strstr(s->messages[i], needle))
            return 1;
    return 0;
}

#define COMPANIES                                                                        \
    "  companies:\n"                                                                     \
    "    path: c.csv\n"                                                                  \
    "    vertices:\n"                                                                    \
    "      - {labels: [Company], keys: [id]}\n"

static void test_sync_check__clean(void **state)
{
    (void)state;
    int64_t n = -1;
    seen s = run("store: g.duckdb\ntables:\n" COMPANIES
                 "  people:\n"
                 "    path: p.csv\n"
                 "    vertices:\n"
                 "      - {labels: [Person], keys: [pid]}\n"
                 "    fk_edges:\n"
                 "      - {type: AT, column: cid, to: {label: Company, key: id}}\n",
                 &n);
    assert_int_equal(n, 0);
    assert_int_equal(s.n, 0);
}

static void test_sync_check__labels_and_keys(void **state)
{
    (void)state;
    int64_t n = -1;
    seen s = run("store: g.duckdb\ntables:\n" COMPANIES
                 "  people:\n"
                 "    path: p.csv\n"
                 "    vertices:\n"
                 "      - {labels: [Company], keys: [cid]}\n"
                 "    edges:\n"
                 "      - type: AT\n"
                 "        from: {label: Firm, keys: {id: pid}}\n"
                 "        to: {label: Company, keys: {name: cid}}\n",
                 &n);
    assert_int_equal(n, s.n);
    assert_true(has(&s, "label", "people", "its from label 'Firm' is written by no table"));
    assert_true(has(&s, "keys", "people", "label 'Company' is merged on {cid}"));
    assert_true(has(&s, "keys", "people", "finds its to 'Company' by {name}"));
    assert_int_equal(n, 3);
}

static void test_sync_check__targets_and_paths(void **state)
{
    (void)state;
    int64_t n = -1;
    seen s = run("tables:\n" COMPANIES, &n);
    assert_int_equal(n, 1);
    assert_true(has(&s, "store", "", "no graph store"));
    s = run("store: nowhere/g.duckdb\ntables:\n"
            "  companies:\n"
            "    path: nothing-*.csv\n"
            "    vertices:\n"
            "      - {labels: [Company], keys: [id]}\n",
            &n);
    assert_int_equal(n, 2);
    assert_true(has(&s, "path", "companies", "matches no data file"));
    assert_true(has(&s, "store", "", "does not exist"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sync_check__clean),
        cmocka_unit_test(test_sync_check__labels_and_keys),
        cmocka_unit_test(test_sync_check__targets_and_paths),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
