/*
 * The Arrow schemas of a prepared statement, known without running it:
 * its result columns and its parameters. A server answers "what will this
 * query return" (Flight SQL GetFlightInfo, a prepared statement's dataset
 * and parameter schemas) from these, so the query runs once, when its
 * rows are fetched. The types go through DuckDB's own Arrow bridge with
 * the connection's Arrow settings, so they are the types the result
 * stream will carry.
 */
#include "duck_int.h"

#include <stdio.h>
#include <stdlib.h>

typedef duckdb_logical_type (*type_at_fn)(duckdb_prepared_statement p, idx_t i);

static duckdb_logical_type column_type(duckdb_prepared_statement p, idx_t i)
{
    return duckdb_prepared_statement_column_logical_type(p, i);
}

static duckdb_logical_type param_type(duckdb_prepared_statement p, idx_t i)
{
    /* parameters are numbered from 1 in DuckDB's C API */
    return duckdb_param_logical_type(p, i + 1);
}

static knut_status to_arrow(knut_duck_stmt *stmt, idx_t n, type_at_fn type_at,
                            const char **names, const char *what,
                            struct ArrowSchema *out, knut_error *err)
{
    knut_status st = KNUT_OK;
    duckdb_arrow_options opts = NULL;
    duckdb_logical_type *types = calloc(n ? n : 1, sizeof *types);
    if (!types)
        return knut_error_set(err, KNUT_ENOMEM, "%s: out of memory", what);
    for (idx_t i = 0; i < n; i++) {
        types[i] = type_at(stmt->prep, i);
        duckdb_type id = types[i] ? duckdb_get_type_id(types[i]) : DUCKDB_TYPE_INVALID;
        if (id == DUCKDB_TYPE_INVALID || id == DUCKDB_TYPE_ANY) {
            /* e.g. SELECT $1 + 1: the parameter's value decides, at execution */
            st = knut_error_set(err, KNUT_EAGAIN, "%s: the type of column %llu is known only "
                                                  "when the statement runs", what,
                                (unsigned long long)i + 1);
            goto cleanup;
        }
    }
    duckdb_connection_get_arrow_options(stmt->conn->conn, &opts);
    duckdb_error_data ed = duckdb_to_arrow_schema(opts, types, names, n, out);
    if (ed && duckdb_error_data_has_error(ed)) {
        out->release = NULL;
        st = knut_duck__error_data(&ed, what, err);
    } else if (ed) {
        duckdb_destroy_error_data(&ed);
    }

cleanup:
    for (idx_t i = 0; i < n; i++)
        if (types[i])
            duckdb_destroy_logical_type(&types[i]);
    free(types);
    if (opts)
        duckdb_destroy_arrow_options(&opts);
    return st;
}

knut_status knut_duck_stmt_schema(knut_duck_stmt *stmt, struct ArrowSchema *out, knut_error *err)
{
    KNUT_ASSERT_ARG(err, stmt && out);
    out->release = NULL;
    idx_t n = duckdb_prepared_statement_column_count(stmt->prep);
    const char **names = calloc(n ? n : 1, sizeof *names);
    if (!names)
        return knut_error_set(err, KNUT_ENOMEM, "result schema: out of memory");
    for (idx_t i = 0; i < n; i++)
        names[i] = duckdb_prepared_statement_column_name(stmt->prep, i);
    knut_status st = to_arrow(stmt, n, column_type, names, "result schema", out, err);
    for (idx_t i = 0; i < n; i++)
        duckdb_free((void *)names[i]);
    free(names);
    return st;
}

knut_status knut_duck_stmt_param_schema(knut_duck_stmt *stmt, struct ArrowSchema *out,
                                        knut_error *err)
{
    KNUT_ASSERT_ARG(err, stmt && out);
    out->release = NULL;
    idx_t n = (idx_t)stmt->nparams;
    char (*text)[24] = calloc(n ? n : 1, sizeof *text);
    const char **names = calloc(n ? n : 1, sizeof *names);
    knut_status st;
    if (!text || !names) {
        st = knut_error_set(err, KNUT_ENOMEM, "parameter schema: out of memory");
        goto cleanup;
    }
    for (idx_t i = 0; i < n; i++) {
        /* named as the placeholder's position, the name DuckDB uses for $N */
        snprintf(text[i], sizeof text[i], "%llu", (unsigned long long)i + 1);
        names[i] = text[i];
    }
    st = to_arrow(stmt, n, param_type, names, "parameter schema", out, err);
cleanup:
    free(text);
    free(names);
    return st;
}
