/*
 * Unit tests for the commit step of the append writer (commit.c), the
 * part that must never let two writers both win: a commit built on a base
 * that is no longer current is KNUT_EAGAIN and leaves nothing behind, on
 * the filesystem catalog (v<N+1>.metadata.json taken by link()) and on the
 * SQL catalog (the compare-and-swap UPDATE, the INSERT of a new table).
 * The concurrent processes of tests/integration/test_iceberg_write.py
 * take the same path by racing; here it is taken every time.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "iceberg/write_int.h"

static char root[256];

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/knut-test-iceberg-commit-XXXXXX");
    return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : -1;
}

/* A valid new table's metadata JSON (the base a commit writes). */
static char *table_json(const char *location)
{
    knut_iceberg__col col = {.name = "id", .id = 1, .type = "long", .duck = "BIGINT"};
    json_t *j = NULL;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_iceberg__meta_create(&j, location, &col, 1, &err), KNUT_OK);
    char *s = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    return s;
}

/* Entries of dir (hidden ones too, not . and ..) whose name ends with
 * suffix ("" for all). */
static size_t count_files(const char *dir, const char *suffix)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    size_t n = 0, sl = strlen(suffix);
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t l = strlen(de->d_name);
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") && l >= sl &&
            strcmp(de->d_name + l - sl, suffix) == 0)
            n++;
    }
    closedir(d);
    return n;
}

static void sql(sqlite3 *db, const char *s)
{
    char *msg = NULL;
    if (sqlite3_exec(db, s, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("%s: %s", s, msg);
}

/* What both catalogs must do, in order: two writers that saw no table
 * both create it, one wins (names[0]) and the other gets KNUT_EAGAIN
 * (lost[0] in the message); a writer on the new table commits (names[1])
 * and its base is then stale (KNUT_EAGAIN, lost[1]). *b is that base
 * (the caller clears it), at number first. Uses root/<dir>. */
static void race(const knut_iceberg_ref *ref, const char *dir, const char *const names[2],
                 const char *const lost[2], long long first, knut_iceberg__base *b)
{
    char table[300], mdir[320], uri[340];
    snprintf(table, sizeof table, "%s/%s", root, dir);
    snprintf(mdir, sizeof mdir, "%s/metadata", table);
    snprintf(uri, sizeof uri, "file://%s", mdir);
    assert_int_equal(mkdir(table, 0755), 0);
    assert_int_equal(mkdir(mdir, 0755), 0);
    knut_error err = KNUT_ERROR_INIT;
    knut_iceberg__base stale;
    char *json = table_json(table), *written = NULL;
    assert_int_equal(knut_iceberg__base_load(&stale, ref, &err), KNUT_OK);
    assert_false(stale.exists);
    for (int round = 0; round < 2; round++) {
        const knut_iceberg__base *on = round ? b : &stale;
        assert_int_equal(knut_iceberg__commit(ref, on, mdir, uri, json, strlen(json), &written,
                                              &err),
                         KNUT_OK);
        assert_non_null(strstr(written, names[round]));
        free(written);
        written = NULL;
        /* The same base again: another writer that read it too. */
        assert_int_equal(knut_iceberg__commit(ref, on, mdir, uri, json, strlen(json),
                                              &written, &err),
                         KNUT_EAGAIN);
        assert_null(written);
        assert_non_null(strstr(err.message, lost[round]));
        if (round == 0) {
            assert_int_equal(knut_iceberg__base_load(b, ref, &err), KNUT_OK);
            assert_true(b->exists && b->number == first);
        }
    }
    /* The two files that landed, nothing of the lost commits. */
    assert_int_equal(count_files(mdir, ".metadata.json"), 2);
    knut_iceberg__base_clear(&stale);
    free(json);
}

static void test_iceberg_commit__filesystem_cas(void **state)
{
    (void)state;
    char table[300];
    snprintf(table, sizeof table, "%s/fs", root);
    knut_iceberg_ref ref = {KNUT_ICEBERG_CATALOG_PATH, table, NULL, NULL};
    static const char *const names[2] = {"/metadata/v1.metadata.json",
                                         "/metadata/v2.metadata.json"};
    static const char *const lost[2] = {"another writer committed this version first",
                                        "another writer committed this version first"};
    knut_iceberg__base b;
    race(&ref, "fs", names, lost, 1, &b);
    knut_iceberg__base_clear(&b);
    /* The versions and the hint: no temp file of a lost commit. */
    char mdir[320], hint[400];
    snprintf(mdir, sizeof mdir, "%s/metadata", table);
    assert_int_equal(count_files(mdir, ""), 3);
    snprintf(hint, sizeof hint, "%s/version-hint.text", mdir);
    knut_error err = KNUT_ERROR_INIT;
    knut_buf text = KNUT_BUF_INIT;
    assert_int_equal(knut_file_read(hint, 64, &text, &err), KNUT_OK);
    assert_int_equal(text.len, 1);
    assert_memory_equal(text.data, "2", 1);
    knut_buf_reset(&text);
}

static void test_iceberg_commit__sql_cas(void **state)
{
    (void)state;
    char path[300];
    snprintf(path, sizeof path, "%s/catalog.db", root);
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    /* pyiceberg 0.12's SqlCatalog tables */
    sql(db, "CREATE TABLE iceberg_tables (catalog_name VARCHAR(255) NOT NULL, table_namespace "
            "VARCHAR(255) NOT NULL, table_name VARCHAR(255) NOT NULL, metadata_location "
            "VARCHAR(1000), previous_metadata_location VARCHAR(1000), PRIMARY KEY "
            "(catalog_name, table_namespace, table_name))");
    sql(db, "CREATE TABLE iceberg_namespace_properties (catalog_name VARCHAR(255) NOT NULL, "
            "namespace VARCHAR(255) NOT NULL, property_key VARCHAR(255) NOT NULL, "
            "property_value VARCHAR(1000) NOT NULL, PRIMARY KEY (catalog_name, namespace, "
            "property_key))");
    knut_iceberg_ref ref = {KNUT_ICEBERG_CATALOG_SQLITE, path, NULL, "a.b.t"};
    static const char *const names[2] = {"/metadata/00000-", "/metadata/00001-"};
    static const char *const lost[2] = {"was created concurrently", "changed since it was read"};
    knut_iceberg__base b;
    race(&ref, "sql", names, lost, 0, &b);
    assert_non_null(strstr(b.pointer, "file://"));
    /* The row: the namespace split at the last dot, the previous pointer,
     * the namespace recorded for pyiceberg. */
    sqlite3_stmt *q = NULL;
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT table_namespace, table_name, "
                                        "previous_metadata_location = ?1, (SELECT count(*) FROM "
                                        "iceberg_namespace_properties WHERE namespace = 'a.b') "
                                        "FROM iceberg_tables",
                                        -1, &q, NULL),
                     SQLITE_OK);
    sqlite3_bind_text(q, 1, b.pointer, -1, SQLITE_STATIC);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(q, 0), "a.b");
    assert_string_equal((const char *)sqlite3_column_text(q, 1), "t");
    assert_int_equal(sqlite3_column_int(q, 2), 1);
    assert_int_equal(sqlite3_column_int(q, 3), 1);
    assert_int_equal(sqlite3_step(q), SQLITE_DONE);
    sqlite3_finalize(q);
    sqlite3_close(db);
    knut_iceberg__base_clear(&b);
}


static void test_iceberg_commit__no_catalog_file(void **state)
{
    (void)state;
    char path[300];
    snprintf(path, sizeof path, "%s/none.db", root);
    knut_iceberg_ref ref = {KNUT_ICEBERG_CATALOG_SQLITE, path, NULL, "db.t"};
    knut_error err = KNUT_ERROR_INIT;
    knut_iceberg__base b;
    assert_int_equal(knut_iceberg__base_load(&b, &ref, &err), KNUT_ENOTFOUND);
    assert_non_null(strstr(err.message, "no such SQLite catalog file"));
    assert_int_not_equal(access(path, F_OK), 0); /* not created */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_iceberg_commit__filesystem_cas),
        cmocka_unit_test(test_iceberg_commit__sql_cas),
        cmocka_unit_test(test_iceberg_commit__no_catalog_file),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
