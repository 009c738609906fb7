/*
 * What a query reads, as DuckDB's binder sees it: the tables (views
 * expanded to the tables they read, common table expressions resolved,
 * subqueries and query_table() included), and whether a prepared
 * statement is a plain SELECT. The serve part checks a client's SQL
 * against an allow-list with these, so it never guesses from the text.
 */
#include <string.h>

#include "duck_int.h"

knut_status knut_duck_table_names(knut_duck_conn *conn, const char *sql, knut_buf *out,
                                  size_t *n, knut_error *err)
{
    KNUT_ASSERT_ARG(err, conn && sql && out && n);
    knut_buf_clear(out);
    *n = 0;
    knut_duck__conn_begin(conn);
    duckdb_value v = duckdb_get_table_names(conn->conn, sql, true);
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
