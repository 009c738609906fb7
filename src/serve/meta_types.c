/*
 * CommandGetXdbcTypeInfo: one row per DuckDB type a knut result column can
 * have that an xDBC type code names, in the protocol's 19 columns. Power
 * BI's ADBC path asks for it before each preview and types the columns it
 * shows from it. The rows are a VALUES list DuckDB types and filters (the
 * data_type filter bound as a parameter); the fix function gives the
 * result the protocol's nullability and the list child's name "item".
 */
#include <string.h>

#include "serve_int.h"

/* Columns: type_name, data_type, column_size, literal_prefix,
 * literal_suffix, create_params, nullable (1: NULLABLE), case_sensitive,
 * searchable (2: basic, 3: full), unsigned_attribute, fixed_prec_scale,
 * auto_increment, local_type_name, minimum_scale, maximum_scale,
 * sql_data_type, datetime_subcode, num_prec_radix, interval_precision.
 * Codes are XdbcDataType's; date/time types have sql_data_type DATETIME
 * (9) with subcode 1 date, 2 time, 3 timestamp, as ODBC does. */
#define N NULL
#define T(n, dt, sz, pre, suf, params, cs, srch, uns, fps, mins, maxs, sqlt, sub, radix) \
    "(" n ", " dt ", " sz ", " pre ", " suf ", " params ", 1, " cs ", " srch ", " uns ", " fps \
    ", false, " n ", " mins ", " maxs ", " sqlt ", " sub ", " radix ", NULL)"
static const char types_sql[] =
    "SELECT CAST(type_name AS VARCHAR) AS type_name, CAST(data_type AS INTEGER) AS data_type,"
    " CAST(column_size AS INTEGER) AS column_size,"
    " CAST(literal_prefix AS VARCHAR) AS literal_prefix,"
    " CAST(literal_suffix AS VARCHAR) AS literal_suffix,"
    " CAST(create_params AS VARCHAR[]) AS create_params,"
    " CAST(nullable AS INTEGER) AS nullable, CAST(case_sensitive AS BOOLEAN) AS case_sensitive,"
    " CAST(searchable AS INTEGER) AS searchable,"
    " CAST(unsigned_attribute AS BOOLEAN) AS unsigned_attribute,"
    " CAST(fixed_prec_scale AS BOOLEAN) AS fixed_prec_scale,"
    " CAST(auto_increment AS BOOLEAN) AS auto_increment,"
    " CAST(local_type_name AS VARCHAR) AS local_type_name,"
    " CAST(minimum_scale AS INTEGER) AS minimum_scale,"
    " CAST(maximum_scale AS INTEGER) AS maximum_scale,"
    " CAST(sql_data_type AS INTEGER) AS sql_data_type,"
    " CAST(datetime_subcode AS INTEGER) AS datetime_subcode,"
    " CAST(num_prec_radix AS INTEGER) AS num_prec_radix,"
    " CAST(interval_precision AS INTEGER) AS interval_precision FROM (VALUES "
    T("'BOOLEAN'", "-7", "1", "NULL", "NULL", "NULL", "false", "2", "NULL", "false", "NULL",
      "NULL", "-7", "NULL", "NULL") ", "
    T("'TINYINT'", "-6", "3", "NULL", "NULL", "NULL", "false", "2", "false", "false", "0", "0",
      "-6", "NULL", "10") ", "
    T("'UTINYINT'", "-6", "3", "NULL", "NULL", "NULL", "false", "2", "true", "false", "0", "0",
      "-6", "NULL", "10") ", "
    T("'SMALLINT'", "5", "5", "NULL", "NULL", "NULL", "false", "2", "false", "false", "0", "0",
      "5", "NULL", "10") ", "
    T("'USMALLINT'", "5", "5", "NULL", "NULL", "NULL", "false", "2", "true", "false", "0", "0",
      "5", "NULL", "10") ", "
    T("'INTEGER'", "4", "10", "NULL", "NULL", "NULL", "false", "2", "false", "false", "0", "0",
      "4", "NULL", "10") ", "
    T("'UINTEGER'", "4", "10", "NULL", "NULL", "NULL", "false", "2", "true", "false", "0", "0",
      "4", "NULL", "10") ", "
    T("'BIGINT'", "-5", "19", "NULL", "NULL", "NULL", "false", "2", "false", "false", "0", "0",
      "-5", "NULL", "10") ", "
    T("'UBIGINT'", "-5", "20", "NULL", "NULL", "NULL", "false", "2", "true", "false", "0", "0",
      "-5", "NULL", "10") ", "
    T("'FLOAT'", "7", "24", "NULL", "NULL", "NULL", "false", "2", "false", "false", "NULL",
      "NULL", "7", "NULL", "2") ", "
    T("'DOUBLE'", "8", "53", "NULL", "NULL", "NULL", "false", "2", "false", "false", "NULL",
      "NULL", "8", "NULL", "2") ", "
    T("'DECIMAL'", "3", "38", "NULL", "NULL", "['precision', 'scale']", "false", "2", "false",
      "true", "0", "38", "3", "NULL", "10") ", "
    T("'VARCHAR'", "12", "NULL", "''''", "''''", "NULL", "true", "3", "NULL", "false", "NULL",
      "NULL", "12", "NULL", "NULL") ", "
    T("'BLOB'", "-3", "NULL", "''''", "'''::BLOB'", "NULL", "false", "2", "NULL", "false",
      "NULL", "NULL", "-3", "NULL", "NULL") ", "
    T("'DATE'", "91", "10", "'DATE '''", "''''", "NULL", "false", "2", "NULL", "false", "NULL",
      "NULL", "9", "1", "NULL") ", "
    T("'TIME'", "92", "15", "'TIME '''", "''''", "NULL", "false", "2", "NULL", "false", "0", "6",
      "9", "2", "NULL") ", "
    T("'TIMESTAMP'", "93", "26", "'TIMESTAMP '''", "''''", "NULL", "false", "2", "NULL",
      "false", "0", "6", "9", "3", "NULL") ", "
    T("'TIMESTAMP WITH TIME ZONE'", "93", "32", "'TIMESTAMPTZ '''", "''''", "NULL", "false",
      "2", "NULL", "false", "0", "6", "9", "3", "NULL") ", "
    T("'INTERVAL'", "10", "NULL", "'INTERVAL '''", "''''", "NULL", "false", "2", "NULL",
      "false", "NULL", "NULL", "10", "NULL", "NULL")
    ") t(type_name, data_type, column_size, literal_prefix, literal_suffix, create_params,"
    " nullable, case_sensitive, searchable, unsigned_attribute, fixed_prec_scale,"
    " auto_increment, local_type_name, minimum_scale, maximum_scale, sql_data_type,"
    " datetime_subcode, num_prec_radix, interval_precision)"
    " WHERE CAST($1 AS INTEGER) IS NULL OR data_type = $1 ORDER BY data_type, type_name";
#undef T
#undef N

knut_status knut_serve__meta_xdbc_types(knut_duck_conn *conn,
                                        const KnutServe__Flightsql__CommandGetXdbcTypeInfo *c,
                                        struct ArrowArrayStream *out, knut_error *err)
{
    knut_duck_stmt *stmt = NULL;
    knut_status st = knut_duck_stmt_prepare(&stmt, conn, types_sql, err);
    if (st == KNUT_OK)
        st = c->_data_type_case ? knut_duck_stmt_bind_int64(stmt, 1, c->data_type, err)
                                : knut_duck_stmt_bind_null(stmt, 1, err);
    if (st == KNUT_OK)
        st = knut_duck_stmt_query(stmt, out, err);
    if (st != KNUT_OK)
        knut_error_prefix(err, "GetXdbcTypeInfo: ");
    knut_duck_stmt_free(stmt);
    return st;
}

/* Not null: type_name, data_type, nullable, case_sensitive, searchable,
 * fixed_prec_scale, sql_data_type; the rest may be null. create_params is
 * list<item: utf8 not null>. */
void knut_serve__meta_xdbc_fix(struct ArrowSchema *s)
{
    knut_serve__meta_nullable(s, ~((1u << 0) | (1u << 1) | (1u << 6) | (1u << 7) | (1u << 8) |
                                   (1u << 10) | (1u << 15)));
    if (s->n_children < 6 || s->children[5]->n_children != 1)
        return;
    struct ArrowSchema *item = s->children[5]->children[0];
    item->flags &= ~(int64_t)ARROW_FLAG_NULLABLE;
    if (strcmp(item->name ? item->name : "", "item") != 0 && knut_serve__schema_own(s) == 0)
        (void)knut_arrow_schema_set_name(s->children[5]->children[0], "item", NULL);
}
