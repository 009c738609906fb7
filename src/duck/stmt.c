/*
 * Prepared statements: prepare once, bind typed parameters by position,
 * execute many times as a result stream or for a changed-rows count.
 * Binding errors name the parameter, since DuckDB's bind calls return no
 * message of their own.
 */
#include "duck_int.h"

#include <stdlib.h>
#include <string.h>

knut_status knut_duck_stmt_prepare(knut_duck_stmt **out, knut_duck_conn *conn, const char *sql,
                                   knut_error *err)
{
    KNUT_ASSERT_ARG(err, out != NULL);
    *out = NULL;
    KNUT_ASSERT_ARG(err, conn != NULL);
    KNUT_ASSERT_ARG(err, sql != NULL);
    knut_status st = KNUT_OK;
    duckdb_prepared_statement prep = NULL;
    knut_duck_stmt *stmt = NULL;

    /* A prepare can supersede an open result stream on this connection
     * just as an execution does. */
    knut_duck__conn_begin(conn);
    if (duckdb_prepare(conn->conn, sql, &prep) != DuckDBSuccess) {
        st = knut_duck__text_error(duckdb_prepare_error(prep), "preparing statement", err);
        goto cleanup;
    }
    stmt = calloc(1, sizeof *stmt);
    if (stmt && !(stmt->sql = strdup(sql))) {
        free(stmt);
        stmt = NULL;
    }
    if (!stmt) {
        st = knut_error_set(err, KNUT_ENOMEM, "preparing statement: out of memory");
        goto cleanup;
    }
    stmt->conn = knut_duck__conn_ref(conn);
    stmt->prep = prep;
    stmt->nparams = (size_t)duckdb_nparams(prep);
    prep = NULL;
    *out = stmt;

cleanup:
    /* Destroy even a failed prepare: it holds the error text. */
    if (prep)
        duckdb_destroy_prepare(&prep);
    return st;
}

void knut_duck_stmt_free(knut_duck_stmt *stmt)
{
    if (!stmt)
        return;
    duckdb_destroy_prepare(&stmt->prep);
    knut_duck__conn_unref(stmt->conn);
    free(stmt->sql);
    free(stmt);
}

const char *knut_duck_stmt_sql(const knut_duck_stmt *stmt)
{
    return stmt ? stmt->sql : NULL;
}

size_t knut_duck_stmt_param_count(const knut_duck_stmt *stmt)
{
    return stmt ? stmt->nparams : 0;
}

static knut_status bind_check(knut_duck_stmt *stmt, size_t idx, knut_error *err)
{
    KNUT_ASSERT_ARG(err, stmt != NULL);
    if (idx < 1 || idx > stmt->nparams)
        return knut_error_set(err, KNUT_EINVAL,
                              "binding parameter %zu: out of range (the statement has %zu)", idx,
                              stmt->nparams);
    return KNUT_OK;
}

static knut_status bind_done(duckdb_state s, size_t idx, const char *type, knut_error *err)
{
    if (s == DuckDBSuccess)
        return KNUT_OK;
    return knut_error_set(err, KNUT_EINVAL, "binding parameter %zu: DuckDB rejected the %s value",
                          idx, type);
}

knut_status knut_duck_stmt_bind_null(knut_duck_stmt *stmt, size_t idx, knut_error *err)
{
    knut_status st = bind_check(stmt, idx, err);
    if (st != KNUT_OK)
        return st;
    return bind_done(duckdb_bind_null(stmt->prep, idx), idx, "NULL", err);
}

knut_status knut_duck_stmt_bind_bool(knut_duck_stmt *stmt, size_t idx, int v, knut_error *err)
{
    knut_status st = bind_check(stmt, idx, err);
    if (st != KNUT_OK)
        return st;
    return bind_done(duckdb_bind_boolean(stmt->prep, idx, v != 0), idx, "boolean", err);
}

knut_status knut_duck_stmt_bind_int64(knut_duck_stmt *stmt, size_t idx, int64_t v,
                                      knut_error *err)
{
    knut_status st = bind_check(stmt, idx, err);
    if (st != KNUT_OK)
        return st;
    return bind_done(duckdb_bind_int64(stmt->prep, idx, v), idx, "int64", err);
}

knut_status knut_duck_stmt_bind_double(knut_duck_stmt *stmt, size_t idx, double v,
                                       knut_error *err)
{
    knut_status st = bind_check(stmt, idx, err);
    if (st != KNUT_OK)
        return st;
    return bind_done(duckdb_bind_double(stmt->prep, idx, v), idx, "double", err);
}

knut_status knut_duck_stmt_bind_text(knut_duck_stmt *stmt, size_t idx, const char *s, size_t len,
                                     knut_error *err)
{
    knut_status st = bind_check(stmt, idx, err);
    if (st != KNUT_OK)
        return st;
    KNUT_ASSERT_ARG(err, s != NULL || len == 0);
    /* DuckDB checks the bytes are UTF-8 and refuses them otherwise. */
    return bind_done(duckdb_bind_varchar_length(stmt->prep, idx, s ? s : "", len), idx,
                     "text (not valid UTF-8?)", err);
}

knut_status knut_duck_stmt_bind_blob(knut_duck_stmt *stmt, size_t idx, const void *p, size_t len,
                                     knut_error *err)
{
    knut_status st = bind_check(stmt, idx, err);
    if (st != KNUT_OK)
        return st;
    KNUT_ASSERT_ARG(err, p != NULL || len == 0);
    return bind_done(duckdb_bind_blob(stmt->prep, idx, p ? p : "", len), idx, "blob", err);
}

knut_status knut_duck_stmt_bind_date(knut_duck_stmt *stmt, size_t idx, int32_t days,
                                     knut_error *err)
{
    knut_status st = bind_check(stmt, idx, err);
    if (st != KNUT_OK)
        return st;
    duckdb_date d = {days};
    return bind_done(duckdb_bind_date(stmt->prep, idx, d), idx, "date", err);
}

knut_status knut_duck_stmt_bind_timestamp(knut_duck_stmt *stmt, size_t idx, int64_t micros,
                                          knut_error *err)
{
    knut_status st = bind_check(stmt, idx, err);
    if (st != KNUT_OK)
        return st;
    duckdb_timestamp t = {micros};
    return bind_done(duckdb_bind_timestamp(stmt->prep, idx, t), idx, "timestamp", err);
}

knut_status knut_duck_stmt_bind_decimal(knut_duck_stmt *stmt, size_t idx, int64_t lo_bits,
                                        int64_t hi, int precision, int scale, knut_error *err)
{
    knut_status st = bind_check(stmt, idx, err);
    if (st != KNUT_OK)
        return st;
    /* DuckDB's DECIMAL holds at most 38 digits, as Arrow's decimal128. */
    if (precision < 1 || precision > 38 || scale < 0 || scale > precision)
        return knut_error_set(err, KNUT_EINVAL, "binding parameter %zu: DECIMAL(%d, %d) is "
                                                "outside DECIMAL(1..38, 0..precision)",
                              idx, precision, scale);
    duckdb_decimal d = {(uint8_t)precision, (uint8_t)scale, {(uint64_t)lo_bits, hi}};
    return bind_done(duckdb_bind_decimal(stmt->prep, idx, d), idx, "decimal", err);
}

knut_status knut_duck_stmt_bind_timestamp_tz(knut_duck_stmt *stmt, size_t idx, int64_t micros,
                                             knut_error *err)
{
    knut_status st = bind_check(stmt, idx, err);
    if (st != KNUT_OK)
        return st;
    duckdb_timestamp t = {micros};
    return bind_done(duckdb_bind_timestamp_tz(stmt->prep, idx, t), idx, "timestamptz", err);
}

knut_status knut_duck_stmt_clear(knut_duck_stmt *stmt, knut_error *err)
{
    KNUT_ASSERT_ARG(err, stmt != NULL);
    if (duckdb_clear_bindings(stmt->prep) != DuckDBSuccess)
        return knut_error_set(err, KNUT_ERROR, "clearing bindings: DuckDB refused");
    return KNUT_OK;
}

knut_status knut_duck_stmt_query(knut_duck_stmt *stmt, struct ArrowArrayStream *out,
                                 knut_error *err)
{
    KNUT_ASSERT_ARG(err, out != NULL);
    out->release = NULL;
    KNUT_ASSERT_ARG(err, stmt != NULL);
    return knut_duck__stream_from_prepared(stmt->conn, &stmt->prep, 0, out, err);
}

knut_status knut_duck_stmt_exec(knut_duck_stmt *stmt, uint64_t *changes, knut_error *err)
{
    KNUT_ASSERT_ARG(err, stmt != NULL);
    if (changes)
        *changes = 0;
    duckdb_result res;
    knut_status st = KNUT_OK;
    knut_duck__conn_begin(stmt->conn);
    if (duckdb_execute_prepared(stmt->prep, &res) != DuckDBSuccess)
        st = knut_duck__result_error(&res, "executing statement", err);
    else if (changes)
        *changes = (uint64_t)duckdb_rows_changed(&res);
    duckdb_destroy_result(&res);
    knut_duck__conn_txn_note(stmt->conn, stmt->prep, st == KNUT_OK);
    return st;
}

knut_status knut_duck_stmt_prepare_text(knut_duck_stmt **out, knut_duck_conn *conn,
                                        const char *sql, const char *const *binds, size_t n,
                                        knut_error *err)
{
    KNUT_ASSERT_ARG(err, out && (binds || n == 0));
    knut_status st = knut_duck_stmt_prepare(out, conn, sql, err);
    for (size_t i = 0; i < n && st == KNUT_OK; i++)
        st = binds[i] ? knut_duck_stmt_bind_text(*out, i + 1, binds[i], strlen(binds[i]), err)
                      : knut_duck_stmt_bind_null(*out, i + 1, err);
    if (st != KNUT_OK) {
        knut_duck_stmt_free(*out);
        *out = NULL;
    }
    return st;
}
