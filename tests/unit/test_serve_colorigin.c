/*
 * Result columns' origins (colorigin.c) on a real in-memory DuckDB: set
 * on plain column references, aliased ones, `*`, qualified references in
 * joins; left off computed columns, ambiguous names, subqueries, CTEs and
 * set operations; the column's other metadata kept.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve/serve_int.h"

static knut_duck_db *db;
static knut_duck_conn *conn;

static int setup(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_duck_db_open(&db, NULL, NULL, 0, &err), KNUT_OK);
    assert_int_equal(knut_duck_conn_open(&conn, db, &err), KNUT_OK);
    assert_int_equal(knut_duck_exec(conn,
                                    "CREATE TABLE people (id INTEGER, name VARCHAR, paid "
                                    "DECIMAL(10,2));"
                                    "CREATE SCHEMA g; CREATE TABLE g.knows (src INTEGER, dst "
                                    "INTEGER, id INTEGER);"
                                    "CREATE TABLE g.people (x INTEGER);",
                                    &err),
                     KNUT_OK);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    knut_duck_conn_close(conn);
    knut_duck_db_close(db);
    return 0;
}

/* The value of key on column i of the schema's metadata, or NULL. */
static char *meta(const struct ArrowSchema *s, int i, const char *key)
{
    knut_arrow_metadata_reader r;
    const char *k, *v;
    int32_t kl, vl;
    knut_arrow_metadata_reader_init(&r, s->children[i]->metadata);
    while (knut_arrow_metadata_next(&r, &k, &kl, &v, &vl))
        if ((size_t)kl == strlen(key) && memcmp(k, key, (size_t)kl) == 0)
            return strndup(v, (size_t)vl);
    return NULL;
}

/* "catalog.schema.table" of each result column ("-" for none), joined
 * by spaces, into out. */
static void origins_of(const char *sql, char *out, size_t cap)
{
    knut_error err = KNUT_ERROR_INIT;
    knut_duck_stmt *stmt = NULL;
    struct ArrowSchema s = {0};
    assert_int_equal(knut_duck_stmt_prepare(&stmt, conn, sql, &err), KNUT_OK);
    assert_int_equal(knut_duck_stmt_schema(stmt, &s, &err), KNUT_OK);
    knut_serve__origins *o = knut_serve__origins_find(conn, knut_duck_stmt_sql(stmt), &s);
    knut_serve__column_metadata(&s);
    knut_serve__origins_apply(o, &s);
    knut_serve__origins_free(o);
    out[0] = 0;
    for (int64_t i = 0; i < s.n_children; i++) {
        char *c = meta(&s, (int)i, "ARROW:FLIGHT:SQL:CATALOG_NAME");
        char *sc = meta(&s, (int)i, "ARROW:FLIGHT:SQL:SCHEMA_NAME");
        char *dsc = meta(&s, (int)i, "ARROW:FLIGHT:SQL:DB_SCHEMA_NAME");
        char *t = meta(&s, (int)i, "ARROW:FLIGHT:SQL:TABLE_NAME");
        char *ty = meta(&s, (int)i, "ARROW:FLIGHT:SQL:TYPE_NAME");
        assert_non_null(ty); /* the type name stays */
        size_t n = strlen(out);
        if (c && sc && t) {
            assert_string_equal(sc, dsc);
            snprintf(out + n, cap - n, "%s%s.%s.%s", n ? " " : "", c, sc, t);
        } else {
            assert_null(c);
            assert_null(t);
            snprintf(out + n, cap - n, "%s-", n ? " " : "");
        }
        free(c), free(sc), free(dsc), free(t), free(ty);
    }
    s.release(&s);
    knut_duck_stmt_free(stmt);
}

#define EXPECT(sql, want)                        \
    do {                                         \
        char got[512];                           \
        origins_of(sql, got, sizeof got);        \
        assert_string_equal(got, want);          \
    } while (0)

static void test_plain_columns(void **state)
{
    (void)state;
    EXPECT("SELECT id, name FROM people", "memory.main.people memory.main.people");
    EXPECT("SELECT id AS k, NAME FROM main.people p WHERE p.id > ? ORDER BY 1",
           "memory.main.people memory.main.people");
    EXPECT("SELECT * FROM people", "memory.main.people memory.main.people memory.main.people");
    EXPECT("SELECT p.* FROM people p", "memory.main.people memory.main.people memory.main.people");
    EXPECT("SELECT x FROM g.people", "memory.g.people");
}

static void test_joins(void **state)
{
    (void)state;
    EXPECT("SELECT p.id, k.id, name, src FROM people p JOIN g.knows k ON p.id = k.src",
           "memory.main.people memory.g.knows memory.main.people memory.g.knows");
    /* id is in both tables: the unqualified name is ambiguous */
    EXPECT("SELECT name, src FROM people, g.knows", "memory.main.people memory.g.knows");
    EXPECT("SELECT * FROM people JOIN g.knows USING (id)", "- - - - -");
}

static void test_computed_and_opaque(void **state)
{
    (void)state;
    EXPECT("SELECT id + 1, upper(name) AS n, paid FROM people", "- - memory.main.people");
    EXPECT("SELECT count(*) AS c, name FROM people GROUP BY name", "- memory.main.people");
    EXPECT("SELECT id FROM (SELECT id FROM people)", "-");
    EXPECT("WITH t AS (SELECT id FROM people) SELECT id FROM t", "-");
    EXPECT("SELECT id FROM people UNION ALL SELECT id FROM people", "-");
    EXPECT("SELECT * EXCLUDE (name) FROM people", "- -");
    EXPECT("SELECT 1 AS one", "-");
    EXPECT("SELECT i FROM range(3) t(i)", "-");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_columns),
        cmocka_unit_test(test_joins),
        cmocka_unit_test(test_computed_and_opaque),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
