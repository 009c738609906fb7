/*
 * Flight SQL catalog commands as queries on DuckDB's own catalog, the
 * filters bound as parameters. What is listed: the attached databases
 * that are not DuckDB's internal ones (system, temp) as catalogs, their
 * schemas but information_schema and pg_catalog, and their tables and
 * views. DuckDB says every column may be null; the protocol fixes which
 * may not, and clients compare schemas exactly, so a fix function sets the
 * flags on the stream's schema before it is sent.
 */
#include <stdlib.h>
#include <string.h>

#include "serve_int.h"

#define USER_DBS "(SELECT database_name FROM duckdb_databases() WHERE NOT internal)"
/* A restricted identity's visible list (authz.c), or NULL for everything:
 * keys of fields split by chr(31), rows by chr(30). */
#define VISIBLE(param, key) \
    " AND (CAST(" param " AS VARCHAR) IS NULL OR list_contains(string_split(" param \
    ", chr(30)), " key "))"
#define SKIP_SCHEMAS "('information_schema', 'pg_catalog')"
/* At most this many table types in a GetTables filter (one placeholder each). */
#define MAX_TABLE_TYPES 16

void knut_serve__meta_nullable(struct ArrowSchema *s, unsigned mask)
{
    for (int64_t i = 0; i < s->n_children; i++) {
        if (mask & (1u << i))
            s->children[i]->flags |= ARROW_FLAG_NULLABLE;
        else
            s->children[i]->flags &= ~(int64_t)ARROW_FLAG_NULLABLE;
    }
}

int knut_serve__schema_own(struct ArrowSchema *s)
{
    struct ArrowSchema copy;
    if (knut_arrow_schema_deep_copy(&copy, s, NULL) != KNUT_OK)
        return -1;
    knut_arrow_schema_release(s);
    knut_arrow_schema_move(s, &copy);
    return 0;
}

static void fix_catalogs(struct ArrowSchema *s)
{
    knut_serve__meta_nullable(s, 0); /* catalog_name */
}

static void fix_db_schemas(struct ArrowSchema *s)
{
    knut_serve__meta_nullable(s, 1); /* catalog_name N, db_schema_name NN */
}

static void fix_tables(struct ArrowSchema *s)
{
    knut_serve__meta_nullable(s, 3); /* catalog N, schema N, table NN, type NN (, table_schema NN) */
}

static void fix_table_types(struct ArrowSchema *s)
{
    knut_serve__meta_nullable(s, 0);
}

/* Binds list i of vis (NULL when everything is visible). */
static knut_status bind_visible(knut_duck_stmt *stmt, size_t idx, const knut_serve__visible *vis,
                                int i, knut_error *err)
{
    if (!vis || !vis->on)
        return knut_duck_stmt_bind_null(stmt, idx, err);
    return knut_duck_stmt_bind_text(stmt, idx, vis->list[i].data, vis->list[i].len, err);
}

/* Binds an optional string filter: the value, or NULL (no filter). */
static knut_status bind_opt(knut_duck_stmt *stmt, size_t idx, int present, const char *v,
                            knut_error *err)
{
    if (!present || !v)
        return knut_duck_stmt_bind_null(stmt, idx, err);
    return knut_duck_stmt_bind_text(stmt, idx, v, strlen(v), err);
}

static knut_status run(knut_duck_conn *conn, const char *sql, knut_duck_stmt **stmt,
                       knut_error *err)
{
    knut_status st = knut_duck_stmt_prepare(stmt, conn, sql, err);
    if (st != KNUT_OK)
        knut_error_prefix(err, "catalog query: ");
    return st;
}

static knut_status get_catalogs(knut_duck_conn *conn, const knut_serve__visible *vis,
                                struct ArrowArrayStream *out, knut_error *err)
{
    knut_duck_stmt *stmt = NULL;
    knut_status st = run(conn,
                         "SELECT database_name AS catalog_name FROM " USER_DBS " t WHERE true"
                         VISIBLE("$1", "database_name") " ORDER BY 1",
                         &stmt, err);
    if (st == KNUT_OK)
        st = bind_visible(stmt, 1, vis, KNUT_SERVE__VIS_CATALOGS, err);
    if (st == KNUT_OK)
        st = knut_duck_stmt_query(stmt, out, err);
    knut_duck_stmt_free(stmt);
    return st;
}

static knut_status get_db_schemas(knut_duck_conn *conn,
                                  const KnutServe__Flightsql__CommandGetDbSchemas *c,
                                  const knut_serve__visible *vis,
                                  struct ArrowArrayStream *out, knut_error *err)
{
    knut_duck_stmt *stmt = NULL;
    knut_status st = run(conn,
                         "SELECT catalog_name, schema_name AS db_schema_name "
                         "FROM information_schema.schemata WHERE catalog_name IN " USER_DBS
                         " AND schema_name NOT IN " SKIP_SCHEMAS
                         " AND (CAST($1 AS VARCHAR) IS NULL OR catalog_name = $1)"
                         " AND (CAST($2 AS VARCHAR) IS NULL OR schema_name LIKE $2)"
                         VISIBLE("$3", "catalog_name || chr(31) || schema_name")
                         " ORDER BY 1, 2",
                         &stmt, err);
    if (st == KNUT_OK)
        st = bind_opt(stmt, 1, c->_catalog_case != 0, c->catalog, err);
    if (st == KNUT_OK)
        st = bind_opt(stmt, 2, c->_db_schema_filter_pattern_case != 0,
                      c->db_schema_filter_pattern, err);
    if (st == KNUT_OK)
        st = bind_visible(stmt, 3, vis, KNUT_SERVE__VIS_SCHEMAS, err);
    if (st == KNUT_OK)
        st = knut_duck_stmt_query(stmt, out, err);
    knut_duck_stmt_free(stmt);
    return st;
}

/* The types filter is one placeholder per type: values stay parameters. */
knut_status knut_serve__meta_tables(knut_duck_conn *conn,
                                    const KnutServe__Flightsql__CommandGetTables *c,
                                    const knut_serve__visible *vis,
                                    struct ArrowArrayStream *out, knut_error *err)
{
    if (c->n_table_types > MAX_TABLE_TYPES)
        return knut_error_set(err, KNUT_EINVAL, "GetTables: over %d table types",
                              MAX_TABLE_TYPES);
    knut_buf sql = KNUT_BUF_INIT;
    knut_duck_stmt *stmt = NULL;
    knut_buf_puts(&sql, "SELECT table_catalog AS catalog_name, table_schema AS db_schema_name, "
                        "table_name, table_type FROM information_schema.tables "
                        "WHERE table_catalog IN " USER_DBS " AND table_schema NOT IN "
                        SKIP_SCHEMAS
                        " AND (CAST($1 AS VARCHAR) IS NULL OR table_catalog = $1)"
                        " AND (CAST($2 AS VARCHAR) IS NULL OR table_schema LIKE $2)"
                        " AND (CAST($3 AS VARCHAR) IS NULL OR table_name LIKE $3)"
                        VISIBLE("$4", "table_catalog || chr(31) || table_schema || chr(31) || "
                                      "table_name"));
    for (size_t i = 0; i < c->n_table_types; i++)
        knut_buf_printf(&sql, "%s$%zu", i ? ", " : " AND table_type IN (", i + 5);
    knut_buf_puts(&sql, c->n_table_types ? ") ORDER BY 1, 2, 3, 4" : " ORDER BY 1, 2, 3, 4");
    knut_status st = knut_buf_check(&sql, err);
    if (st == KNUT_OK)
        st = run(conn, sql.data, &stmt, err);
    if (st == KNUT_OK)
        st = bind_opt(stmt, 1, c->_catalog_case != 0, c->catalog, err);
    if (st == KNUT_OK)
        st = bind_opt(stmt, 2, c->_db_schema_filter_pattern_case != 0,
                      c->db_schema_filter_pattern, err);
    if (st == KNUT_OK)
        st = bind_opt(stmt, 3, c->_table_name_filter_pattern_case != 0,
                      c->table_name_filter_pattern, err);
    if (st == KNUT_OK)
        st = bind_visible(stmt, 4, vis, KNUT_SERVE__VIS_TABLES, err);
    for (size_t i = 0; st == KNUT_OK && i < c->n_table_types; i++)
        st = bind_opt(stmt, i + 5, 1, c->table_types[i], err);
    if (st == KNUT_OK)
        st = knut_duck_stmt_query(stmt, out, err);
    knut_duck_stmt_free(stmt);
    knut_buf_reset(&sql);
    return st;
}

knut_status knut_serve__meta_query(knut_duck_conn *conn, const knut_serve__cmd *cmd,
                                   const knut_serve__visible *vis, struct ArrowArrayStream *out,
                                   void (**fix)(struct ArrowSchema *), knut_error *err)
{
    out->release = NULL;
    switch (cmd->kind) {
    case KNUT_SERVE__CMD_GET_CATALOGS:
        *fix = fix_catalogs;
        return get_catalogs(conn, vis, out, err);
    case KNUT_SERVE__CMD_GET_DB_SCHEMAS:
        *fix = fix_db_schemas;
        return get_db_schemas(conn, (const void *)cmd->msg, vis, out, err);
    case KNUT_SERVE__CMD_GET_TABLE_TYPES:
        /* the table types DuckDB's information_schema.tables uses */
        *fix = fix_table_types;
        return knut_duck_query(conn, "SELECT * FROM (VALUES ('BASE TABLE'), ('LOCAL TEMPORARY'),"
                                     " ('VIEW')) t(table_type) ORDER BY 1", out, err);
    case KNUT_SERVE__CMD_GET_TABLES: {
        const KnutServe__Flightsql__CommandGetTables *c = (const void *)cmd->msg;
        *fix = fix_tables;
        if (!c->include_schema)
            return knut_serve__meta_tables(conn, c, vis, out, err);
        struct ArrowArrayStream rows = {0};
        knut_status st = knut_serve__meta_tables(conn, c, vis, &rows, err);
        if (st == KNUT_OK)
            st = knut_serve__meta_tables_with_schema(conn, &rows, out, err);
        knut_arrow_stream_release(&rows);
        return st;
    }
    case KNUT_SERVE__CMD_GET_SQL_INFO:
        *fix = NULL; /* built with the protocol's nullability */
        return knut_serve__sqlinfo_query(conn, cmd, out, err);
    case KNUT_SERVE__CMD_GET_XDBC_TYPE_INFO:
        *fix = knut_serve__meta_xdbc_fix;
        return knut_serve__meta_xdbc_types(conn, (const void *)cmd->msg, out, err);
    case KNUT_SERVE__CMD_GET_PRIMARY_KEYS:
    case KNUT_SERVE__CMD_GET_EXPORTED_KEYS:
    case KNUT_SERVE__CMD_GET_IMPORTED_KEYS:
    case KNUT_SERVE__CMD_GET_CROSS_REFERENCE:
        return knut_serve__meta_keys(conn, cmd, vis, out, fix, err);
    default:
        return knut_error_set(err, KNUT_EUNSUPPORTED, "%s is not served yet", cmd->name);
    }
}
