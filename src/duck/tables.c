/*
 * What a query reads, as DuckDB's binder sees it: the tables (views
 * expanded to the tables they read, common table expressions resolved,
 * subqueries and query_table() included), and whether a prepared
 * statement is a plain SELECT. The serve part checks a client's SQL
 * against an allow-list with these, so it never guesses from the text.
 */
#include <stdlib.h>
#include <string.h>

#include "duck_int.h"

/* What a parameter becomes for the binder: NULL binds wherever a value may
 * stand, and which tables are read does not depend on values. */
#define NULL_CONSTANT                                                                   \
    "{\"class\":\"CONSTANT\",\"type\":\"VALUE_CONSTANT\",\"alias\":\"\",\"query_location\":0," \
    "\"value\":{\"type\":{\"id\":\"NULL\",\"type_info\":null},\"is_null\":true}}"
#define PARAM_NODE "{\"class\":\"PARAMETER\""

/* The one text value of a query with one text parameter; caller frees
 * (duckdb_free). NULL when it fails. */
static char *scalar_text(knut_duck_conn *conn, const char *sql, const char *arg)
{
    duckdb_prepared_statement prep = NULL;
    duckdb_result res;
    char *out = NULL;
    knut_duck__conn_begin(conn);
    if (duckdb_prepare(conn->conn, sql, &prep) == DuckDBSuccess &&
        duckdb_bind_varchar(prep, 1, arg) == DuckDBSuccess) {
        if (duckdb_execute_prepared(prep, &res) == DuckDBSuccess && duckdb_row_count(&res) == 1)
            out = duckdb_value_varchar(&res, 0, 0);
        duckdb_destroy_result(&res);
    }
    duckdb_destroy_prepare(&prep);
    return out;
}

/* Past the JSON object or string at p (DuckDB's own output, so well
 * formed); NULL if it ends first. */
static const char *json_skip(const char *p)
{
    int depth = 0, in_str = 0;
    for (; *p; p++) {
        if (in_str) {
            if (*p == '\\' && p[1])
                p++;
            else if (*p == '"')
                in_str = 0;
        } else if (*p == '"') {
            in_str = 1;
        } else if (*p == '{') {
            depth++;
        } else if (*p == '}' && --depth == 0) {
            return p + 1;
        }
    }
    return NULL;
}

/* sql with its parameters ($1, ?) as NULL, through DuckDB's syntax tree
 * (json_serialize_sql, the parameter nodes swapped, json_deserialize_sql):
 * DuckDB's binder cannot bind a query whose parameters have no values.
 * Caller frees (duckdb_free); NULL when DuckDB cannot. */
static char *params_as_null(knut_duck_conn *conn, const char *sql)
{
    char *json = scalar_text(conn, "SELECT json_serialize_sql($1::VARCHAR)", sql);
    if (!json)
        return NULL;
    knut_buf b = KNUT_BUF_INIT;
    int in_str = 0;
    for (const char *p = json; *p;) {
        if (!in_str && strncmp(p, PARAM_NODE, sizeof PARAM_NODE - 1) == 0) {
            const char *end = json_skip(p);
            if (!end)
                break;
            knut_buf_puts(&b, NULL_CONSTANT);
            p = end;
            continue;
        }
        if (in_str && *p == '\\' && p[1]) {
            knut_buf_append(&b, p, 2);
            p += 2;
            continue;
        }
        if (*p == '"')
            in_str = !in_str;
        knut_buf_putc(&b, *p++);
    }
    duckdb_free(json);
    knut_error e = KNUT_ERROR_INIT;
    char *out = knut_buf_check(&b, &e) == KNUT_OK
                    ? scalar_text(conn, "SELECT json_deserialize_sql($1::JSON)", b.data)
                    : NULL;
    knut_buf_reset(&b);
    return out;
}

knut_status knut_duck_table_names(knut_duck_conn *conn, const char *sql, knut_buf *out,
                                  size_t *n, knut_error *err)
{
    KNUT_ASSERT_ARG(err, conn && sql && out && n);
    knut_buf_clear(out);
    *n = 0;
    knut_duck__conn_begin(conn);
    duckdb_value v = duckdb_get_table_names(conn->conn, sql, true);
    if (!v) { /* parameters, maybe: the same query with NULL for each */
        char *bare = params_as_null(conn, sql);
        if (bare)
            v = duckdb_get_table_names(conn->conn, bare, true);
        duckdb_free(bare);
    }
    if (!v) /* a parse or bind error, several statements, a table function it cannot bind */
        return knut_error_set(err, KNUT_EINVAL, "DuckDB cannot tell which tables the query "
                                                "reads");
    idx_t count = duckdb_get_list_size(v);
    knut_status st = KNUT_OK;
    for (idx_t i = 0; st == KNUT_OK && i < count; i++) {
        duckdb_value c = duckdb_get_list_child(v, i);
        char *s = c ? duckdb_get_varchar(c) : NULL;
        if (!s)
            st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
        else {
            knut_buf_append(out, s, strlen(s) + 1); /* the NUL separates the names */
            st = knut_buf_check(out, err);
            (*n)++;
        }
        duckdb_free(s);
        duckdb_destroy_value(&c);
    }
    duckdb_destroy_value(&v);
    return st;
}

int knut_duck_stmt_is_select(const knut_duck_stmt *stmt)
{
    return stmt && duckdb_prepared_statement_type(stmt->prep) == DUCKDB_STATEMENT_TYPE_SELECT;
}
