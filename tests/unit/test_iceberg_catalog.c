/*
 * Unit tests for finding a table's current metadata file: table folders
 * with and without version-hint.text, pyiceberg's NNNNN-<uuid> names, a
 * SQLite catalog made here the way pyiceberg's SqlCatalog makes it, and
 * turning metadata locations into local paths.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "knut/iceberg.h"

static char root[] = "/tmp/knut_ice_cat_XXXXXX";

static void put(const char *rel, const char *text)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    knut_error err = KNUT_ERROR_INIT;
    if (knut_file_write_atomic(p, text, strlen(text), &err) != KNUT_OK)
        fail_msg("%s", err.message);
}

static void mk(const char *rel)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    assert_int_equal(mkdir(p, 0755), 0);
}

/* Locates ref (its path relative to root) and checks the answer's tail. */
static void locate_is(knut_iceberg_catalog_kind kind, const char *rel, const char *catalog,
                      const char *id, const char *want_tail)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    knut_iceberg_ref ref = {kind, p, catalog, id};
    char *out = NULL;
    knut_error err = KNUT_ERROR_INIT;
    if (knut_iceberg_catalog_locate(&ref, &out, &err) != KNUT_OK)
        fail_msg("%s: %s", rel, err.message);
    size_t n = strlen(out), m = strlen(want_tail);
    if (n < m || strcmp(out + n - m, want_tail) != 0)
        fail_msg("%s: got %s, want ...%s", rel, out, want_tail);
    free(out);
}

static knut_status locate_bad(knut_iceberg_catalog_kind kind, const char *rel,
                              const char *catalog, const char *id, const char *msg)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    knut_iceberg_ref ref = {kind, p, catalog, id};
    char *out = (char *)(uintptr_t)1;
    knut_error err = KNUT_ERROR_INIT;
    knut_status st = knut_iceberg_catalog_locate(&ref, &out, &err);
    assert_true(st != KNUT_OK);
    assert_null(out);
    if (!strstr(err.message, msg))
        fail_msg("message '%s' lacks '%s'", err.message, msg);
    return st;
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd);
}

static void test_iceberg_catalog__folders(void **state)
{
    (void)state;
    /* a hint, as Java writes it (no newline); v3 exists too: the hint lags */
    mk("hinted");
    mk("hinted/metadata");
    put("hinted/metadata/v1.metadata.json", "{}");
    put("hinted/metadata/v2.metadata.json", "{}");
    put("hinted/metadata/v3.metadata.json", "{}");
    put("hinted/metadata/version-hint.text", "2");
    locate_is(KNUT_ICEBERG_CATALOG_PATH, "hinted", NULL, NULL, "hinted/metadata/v3.metadata.json");
    put("hinted/metadata/version-hint.text", " 1 \n");
    locate_is(KNUT_ICEBERG_CATALOG_PATH, "hinted", NULL, NULL, "hinted/metadata/v3.metadata.json");
    /* a hint that names a file; one that points nowhere falls back to the scan */
    put("hinted/metadata/version-hint.text", "v1.metadata.json\n");
    locate_is(KNUT_ICEBERG_CATALOG_PATH, "hinted", NULL, NULL, "hinted/metadata/v1.metadata.json");
    put("hinted/metadata/version-hint.text", "9");
    locate_is(KNUT_ICEBERG_CATALOG_PATH, "hinted/", NULL, NULL, "metadata/v3.metadata.json");
    /* the metadata folder itself, and a metadata file given directly */
    locate_is(KNUT_ICEBERG_CATALOG_PATH, "hinted/metadata", NULL, NULL, "/v3.metadata.json");
    locate_is(KNUT_ICEBERG_CATALOG_PATH, "hinted/metadata/v2.metadata.json", NULL, NULL,
              "hinted/metadata/v2.metadata.json");

    /* no hint: the highest v<N> by number, not by name (v10 > v9); gzip names count */
    mk("nohint");
    mk("nohint/metadata");
    put("nohint/metadata/v9.metadata.json", "{}");
    put("nohint/metadata/v10.gz.metadata.json", "{}");
    put("nohint/metadata/snap-1-0-abc.avro", "");
    put("nohint/metadata/00099-x.metadata.json", "{}"); /* v<N> wins over numbered */
    locate_is(KNUT_ICEBERG_CATALOG_PATH, "nohint", NULL, NULL, "nohint/metadata/v10.gz.metadata.json");

    /* pyiceberg: NNNNN-<uuid>.metadata.json, no hint */
    mk("py");
    mk("py/metadata");
    put("py/metadata/00000-0c1a-4f.metadata.json", "{}");
    put("py/metadata/00002-7e3b-11.metadata.json", "{}");
    put("py/metadata/00001-ffff-ff.metadata.json", "{}");
    put("py/metadata/00010-a.metadata.json.tmp", "{}");
    locate_is(KNUT_ICEBERG_CATALOG_PATH, "py", NULL, NULL, "py/metadata/00002-7e3b-11.metadata.json");
    /* file: URIs are paths too */
    char uri[600];
    snprintf(uri, sizeof uri, "file://%s/py", root);
    knut_iceberg_ref ref = {KNUT_ICEBERG_CATALOG_PATH, uri, NULL, NULL};
    char *out = NULL;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_iceberg_catalog_locate(&ref, &out, &err), KNUT_OK);
    assert_non_null(strstr(out, "00002-7e3b-11"));
    free(out);

    /* nothing there */
    mk("empty");
    mk("empty/metadata");
    assert_int_equal(locate_bad(KNUT_ICEBERG_CATALOG_PATH, "empty", NULL, NULL,
                                "no version-hint.text, v<N>.metadata.json or"),
                     KNUT_ENOTFOUND);
    mk("nometa");
    assert_int_equal(locate_bad(KNUT_ICEBERG_CATALOG_PATH, "nometa", NULL, NULL,
                                "no metadata folder"),
                     KNUT_ENOTFOUND);
    assert_int_equal(locate_bad(KNUT_ICEBERG_CATALOG_PATH, "absent", NULL, NULL,
                                "no such table folder"),
                     KNUT_ENOTFOUND);
    assert_int_equal(locate_bad(KNUT_ICEBERG_CATALOG_PATH, "py/metadata/00010-a.metadata.json.tmp",
                                NULL, NULL, "not a table folder or a *.metadata.json file"),
                     KNUT_EINVAL);
    ref.path = "s3://bucket/t";
    assert_int_equal(knut_iceberg_catalog_locate(&ref, &out, &err), KNUT_EUNSUPPORTED);
    assert_non_null(strstr(err.message, "scheme 's3'"));
}

/* The tables pyiceberg's SqlCatalog creates (schema "v1"). */
static const char CATALOG_DDL[] =
    "CREATE TABLE iceberg_tables (catalog_name VARCHAR(255) NOT NULL, "
    "table_namespace VARCHAR(255) NOT NULL, table_name VARCHAR(255) NOT NULL, "
    "metadata_location VARCHAR(1000), previous_metadata_location VARCHAR(1000), "
    "iceberg_type VARCHAR(5), PRIMARY KEY (catalog_name, table_namespace, table_name));"
    "CREATE TABLE iceberg_namespace_properties (catalog_name VARCHAR(255) NOT NULL, "
    "namespace VARCHAR(255) NOT NULL, property_key VARCHAR(255) NOT NULL, "
    "property_value VARCHAR(1000) NOT NULL, PRIMARY KEY (catalog_name, namespace, property_key));";

static void test_iceberg_catalog__sqlite(void **state)
{
    (void)state;
    char db_path[512], sql[2048];
    snprintf(db_path, sizeof db_path, "%s/catalog.db", root);
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(db_path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, CATALOG_DDL, NULL, NULL, NULL), SQLITE_OK);
    snprintf(sql, sizeof sql,
             "INSERT INTO iceberg_tables VALUES "
             "('default','db','t','file://%s/wh/db.db/t/metadata/00001-ab.metadata.json',"
             "'file://%s/wh/db.db/t/metadata/00000-cd.metadata.json','TABLE'),"
             "('other','db','t','%s/other.metadata.json',NULL,'TABLE'),"
             "('default','a.b','t 2','file://%s/wh/a.b.db/t%%202/metadata/00000-x.metadata.json',"
             "NULL,'TABLE'),"
             "('default','db','s3t','s3://bucket/t/metadata/00000-y.metadata.json',NULL,'TABLE'),"
             "('default','db','nometa',NULL,NULL,'TABLE'),"
             "('default','db','x'' OR 1=1 --','/inj.metadata.json',NULL,'TABLE')",
             root, root, root, root);
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);

    const knut_iceberg_catalog_kind K = KNUT_ICEBERG_CATALOG_SQLITE;
    locate_is(K, "catalog.db", NULL, "db.t", "/wh/db.db/t/metadata/00001-ab.metadata.json");
    locate_is(K, "catalog.db", "default", "db.t", "/wh/db.db/t/metadata/00001-ab.metadata.json");
    locate_is(K, "catalog.db", "other", "db.t", "/other.metadata.json");
    /* a dotted namespace: the last dot splits; the URI's %20 is decoded */
    locate_is(K, "catalog.db", NULL, "a.b.t 2", "/wh/a.b.db/t 2/metadata/00000-x.metadata.json");
    /* values are bound, never SQL text */
    locate_is(K, "catalog.db", NULL, "db.x' OR 1=1 --", "/inj.metadata.json");

    assert_int_equal(locate_bad(K, "catalog.db", NULL, "db.nope",
                                "catalog 'default' has no table 'db.nope'"),
                     KNUT_ENOTFOUND);
    assert_int_equal(locate_bad(K, "catalog.db", "cat2", "db.t", "catalog 'cat2' has no table"),
                     KNUT_ENOTFOUND);
    assert_int_equal(locate_bad(K, "catalog.db", NULL, "a.t 2", "no table 'a.t 2'"),
                     KNUT_ENOTFOUND);
    assert_int_equal(locate_bad(K, "catalog.db", NULL, "db.nometa", "no metadata_location"),
                     KNUT_ENOTFOUND);
    assert_int_equal(locate_bad(K, "catalog.db", NULL, "db.s3t", "scheme 's3'"),
                     KNUT_EUNSUPPORTED);
    assert_int_equal(locate_bad(K, "catalog.db", NULL, "t", "expected namespace.table"),
                     KNUT_EINVAL);
    assert_int_equal(locate_bad(K, "catalog.db", NULL, "db.", "expected namespace.table"),
                     KNUT_EINVAL);
    assert_int_equal(locate_bad(K, "absent.db", NULL, "db.t", "no such SQLite catalog"),
                     KNUT_ENOTFOUND);
    /* a SQLite file that is no catalog, and a file that is no database */
    snprintf(db_path, sizeof db_path, "%s/plain.db", root);
    assert_int_equal(sqlite3_open(db_path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "CREATE TABLE x(a)", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    assert_int_equal(locate_bad(K, "plain.db", NULL, "db.t", "not an Iceberg SQL catalog"),
                     KNUT_EINVAL);
    put("junk.db", "this is not a database, just text long enough to be looked at.......");
    locate_bad(K, "junk.db", NULL, "db.t", "junk.db");
}

static void path_is(const char *uri, const char *base, const char *want)
{
    char *out = NULL;
    knut_error err = KNUT_ERROR_INIT;
    if (knut_iceberg_path_local(uri, base, &out, &err) != KNUT_OK)
        fail_msg("%s: %s", uri, err.message);
    if (strcmp(out, want) != 0)
        fail_msg("%s: got '%s', want '%s'", uri, out, want);
    free(out);
}

static void path_bad(const char *uri, knut_status code, const char *msg)
{
    char *out = NULL;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_iceberg_path_local(uri, NULL, &out, &err), code);
    assert_null(out);
    if (!strstr(err.message, msg))
        fail_msg("message '%s' lacks '%s'", err.message, msg);
}

static void test_iceberg_catalog__path_local(void **state)
{
    (void)state;
    path_is("file:///x/y.avro", NULL, "/x/y.avro");
    path_is("file://localhost/x", NULL, "/x");
    path_is("FILE://LocalHost/x", NULL, "/x");
    path_is("file:/x/y", NULL, "/x/y");
    path_is("/x/y", NULL, "/x/y");
    path_is("/x/a%20b", NULL, "/x/a%20b"); /* a bare path is not a URI: no decoding */
    path_is("file:///x/a%20b/c%2Fd%zz%", NULL, "/x/a b/c/d%zz%");
    path_is("data/f.parquet", "file:///tmp/t", "/tmp/t/data/f.parquet");
    path_is("./data/f.parquet", "/tmp/t/", "/tmp/t/data/f.parquet");
    path_is("data/f.parquet", "file:/tmp/a%20t", "/tmp/a t/data/f.parquet");
    path_is("data/f.parquet", NULL, "data/f.parquet");
    path_bad("s3://bucket/x", KNUT_EUNSUPPORTED, "s3://bucket/x: scheme 's3' is not supported");
    path_bad("hdfs://nn:8020/x", KNUT_EUNSUPPORTED, "scheme 'hdfs'");
    path_bad("file://otherhost/x", KNUT_EUNSUPPORTED, "another host");
    path_bad("file:relative", KNUT_EINVAL, "needs an absolute path");
    path_bad("file://", KNUT_EINVAL, "needs an absolute path");
    path_bad("file://localhost", KNUT_EINVAL, "needs an absolute path");
    path_bad("file:///x%00y", KNUT_EINVAL, "%00");
    path_bad("", KNUT_EINVAL, "empty location");
    char *out = NULL;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_iceberg_path_local("d/f", "s3://b/t", &out, &err), KNUT_EUNSUPPORTED);
    assert_non_null(strstr(err.message, "relative to the table location"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_iceberg_catalog__folders),
        cmocka_unit_test(test_iceberg_catalog__sqlite),
        cmocka_unit_test(test_iceberg_catalog__path_local),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
