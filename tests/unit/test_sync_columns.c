/*
 * Declared schemas (src/sync/columns.c) and the store's widening rule
 * (src/graph/store.c): `columns:` is parsed with DuckDB's own type names
 * (INT becomes INTEGER), an unknown or malformed type and a column declared
 * twice are config errors naming file:line:col; a CSV header splits as
 * CSV (quotes, doubled quotes) and a malformed one is refused; a stored
 * column widens only where no stored value changes; a declared type the
 * sink cannot store is refused when sync opens (FalkorDB: BLOB; either
 * sink: a list as a key).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "graph/store_int.h"
#include "sync/sync_int.h"

static const char *table_yaml(const char *columns)
{
    static char buf[1024];
    snprintf(buf, sizeof buf,
             "store: g.duckdb\n"
             "tables:\n"
             "  t:\n"
             "    path: t/\n"
             "    columns: %s\n"
             "    vertices: [{labels: [T], keys: [id]}]\n",
             columns);
    return buf;
}

static knut_status parse(const char *columns, knut_sync_config **cfg, knut_error *err)
{
    const char *y = table_yaml(columns);
    return knut_sync_config_parse(cfg, y, strlen(y), "sync.yml", ".", err);
}

static void test_columns_parsed_with_duckdb_names(void **state)
{
    (void)state;
    knut_sync_config *cfg = NULL;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(parse("{id: INT, name: text, born: date, price: 'DECIMAL(10,2)', "
                           "tags: 'VARCHAR[]'}", &cfg, &err), KNUT_OK);
    const knut_sync_table *t = &cfg->tables[0];
    assert_int_equal(t->n_columns, 5);
    assert_string_equal(t->columns[0].name, "id");
    assert_string_equal(t->columns[0].type, "INTEGER");
    assert_string_equal(t->columns[1].type, "VARCHAR");
    assert_string_equal(t->columns[2].type, "DATE");
    assert_string_equal(t->columns[3].type, "DECIMAL(10,2)");
    assert_string_equal(t->columns[4].type, "VARCHAR[]");
    assert_ptr_equal(knut_sync__column_find(t, "BORN"), &t->columns[2]);
    assert_null(knut_sync__column_find(t, "age"));
    /* both sinks store these, and the key is a scalar */
    assert_int_equal(knut_sync__columns_sink_check(cfg, 0, &err), KNUT_OK);
    knut_sync_config_free(cfg);
}

static void test_columns_config_errors(void **state)
{
    (void)state;
    static const struct {
        const char *columns, *words;
        int col;
    } cases[] = {
        {"{id: BIGINT, age: NUMBERISH}", "'NUMBERISH' is not a DuckDB type", 32},
        {"{id: BIGINT, age: 'INT; DROP TABLE x'}", "is not a DuckDB type (not a type name)", 32},
        {"{id: BIGINT, age: 'INT) AS a, (1'}", "is not a DuckDB type", 32},
        {"{id: BIGINT, age: ''}", "is not a DuckDB type", 32},
        {"{id: BIGINT, ID: INT}", "column 'ID' is declared twice", 31},
        {"[id, age]", "'columns' must be a map", 14},
        {"{}", "'columns' must be a map", 14},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        knut_sync_config *cfg = NULL;
        knut_error err = KNUT_ERROR_INIT;
        assert_int_equal(parse(cases[i].columns, &cfg, &err), KNUT_EINVAL);
        assert_null(cfg);
        if (!strstr(err.message, cases[i].words) || !strstr(err.message, "sync.yml:5:"))
            fail_msg("case %zu: %s", i, err.message);
        assert_int_equal(err.line, 5);
        assert_int_equal(err.col, cases[i].col);
    }
}

static void test_columns_sink_check(void **state)
{
    (void)state;
    knut_sync_config *cfg = NULL;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(parse("{id: BIGINT, data: BLOB}", &cfg, &err), KNUT_OK);
    assert_int_equal(knut_sync__columns_sink_check(cfg, 0, &err), KNUT_OK); /* embedded */
    assert_int_equal(knut_sync__columns_sink_check(cfg, 1, &err), KNUT_EINVAL);
    assert_non_null(strstr(err.message, "sync.yml:5:33: table 't': column 'data' is declared "
                                        "BLOB, which the FalkorDB sink cannot store"));
    knut_sync_config_free(cfg);
    assert_int_equal(parse("{id: 'INTEGER[]'}", &cfg, &err), KNUT_OK);
    assert_int_equal(knut_sync__columns_sink_check(cfg, 0, &err), KNUT_EINVAL);
    assert_non_null(strstr(err.message, "column 'id' is declared INTEGER[], which the embedded "
                                        "sink cannot store: a key of type list"));
    knut_sync_config_free(cfg);
}

static void header_is(const char *line, size_t n, const char *const *want)
{
    sync_names h = {0};
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_sync__csv_header(line, strlen(line), &h, &err), KNUT_OK);
    assert_int_equal(h.n, n);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(h.names[i], want[i]);
    knut_sync__names_reset(&h);
}

static void test_csv_header(void **state)
{
    (void)state;
    header_is("id,name,born\r\n", 3, (const char *const[]){"id", "name", "born"});
    header_is("\"a,b\",\"say \"\"hi\"\"\",,x", 4,
              (const char *const[]){"a,b", "say \"hi\"", "", "x"});
    header_is("only", 1, (const char *const[]){"only"});
    header_is("\xEF\xBB\xBFid,name\n", 2, (const char *const[]){"id", "name"}); /* BOM */
    static const char *const bad[] = {"id,\"name", "id,na\"me", "\"id\"x,name"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sync_names h = {0};
        knut_error err = KNUT_ERROR_INIT;
        assert_int_equal(knut_sync__csv_header(bad[i], strlen(bad[i]), &h, &err), KNUT_EINVAL);
        assert_non_null(strstr(err.message, "header line"));
        assert_int_equal(h.n, 0);
    }
}

static void test_store_widen_rule(void **state)
{
    (void)state;
    static const struct {
        const char *have, *incoming, *to;
        int exact;
    } cases[] = {
        {"INTEGER", "BIGINT", "BIGINT", 0},
        {"SMALLINT", "INTEGER", "INTEGER", 0},
        {"UINTEGER", "BIGINT", "BIGINT", 0},
        {"FLOAT", "DOUBLE", "DOUBLE", 0},
        {"INTEGER", "DOUBLE", "DOUBLE", 0},
        {"BIGINT", "DOUBLE", "DOUBLE", 1},  /* only if the stored values are exact */
        {"BIGINT", "INTEGER", NULL, 0},     /* fits already: nothing to widen */
        {"BIGINT", "UBIGINT", NULL, 0},     /* no type holds both exactly here */
        {"BIGINT", "VARCHAR", NULL, 0},     /* text only when declared */
        {"DATE", "TIMESTAMP", NULL, 0},
        {"DOUBLE", "BIGINT", NULL, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int exact = -1;
        const char *to = knut_graph__store_type_widen(cases[i].have, cases[i].incoming, &exact);
        if (cases[i].to == NULL ? to != NULL : !to || strcmp(to, cases[i].to) != 0)
            fail_msg("case %zu: %s -> %s gave %s", i, cases[i].have, cases[i].incoming,
                     to ? to : "NULL");
        if (to)
            assert_int_equal(exact, cases[i].exact);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_columns_parsed_with_duckdb_names),
        cmocka_unit_test(test_columns_config_errors),
        cmocka_unit_test(test_columns_sink_check),
        cmocka_unit_test(test_csv_header),
        cmocka_unit_test(test_store_widen_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
