/*
 * CommandGetPrimaryKeys, GetExportedKeys, GetImportedKeys and
 * GetCrossReference from DuckDB's own catalog, duckdb_constraints(): one
 * row per key column, with its place in the key. DuckDB's foreign keys
 * reference a table of the same schema and have no ON UPDATE/ON DELETE
 * action, so both rules are NO ACTION (3). Names and filters are bound as
 * parameters; a restricted identity sees only keys between tables it may
 * read.
 */
#include <string.h>

#include "serve_int.h"

#define USER_DBS "(SELECT database_name FROM duckdb_databases() WHERE NOT internal)"
#define VISIBLE(param, key) \
    " AND (CAST(" param " AS VARCHAR) IS NULL OR list_contains(string_split(" param \
    ", chr(30)), " key "))"
#define OPT_EQ(param, col) " AND (CAST(" param " AS VARCHAR) IS NULL OR " col " = " param ")"
#define TABLE_KEY(tbl) "database_name || chr(31) || schema_name || chr(31) || " tbl

static const char pk_sql[] =
    "SELECT database_name AS catalog_name, schema_name AS db_schema_name, table_name,"
    " unnest(constraint_column_names) AS column_name,"
    " CAST(unnest(generate_series(1, len(constraint_column_names))) AS INTEGER) AS key_sequence,"
    " constraint_name AS key_name FROM duckdb_constraints()"
    " WHERE constraint_type = 'PRIMARY KEY' AND database_name IN " USER_DBS
    OPT_EQ("$1", "database_name") OPT_EQ("$2", "schema_name") " AND table_name = $3"
    VISIBLE("$4", TABLE_KEY("table_name")) " ORDER BY 1, 2, 3, 5";

/* The foreign keys, one row per column pair; then the filter of each
 * command and its order. */
#define FK_SQL                                                                                 \
    "WITH fk AS (SELECT DISTINCT database_name AS cat, schema_name AS sch,"                    \
    " referenced_table AS pk_table, table_name AS fk_table,"                                   \
    " unnest(referenced_column_names) AS pk_col, unnest(constraint_column_names) AS fk_col,"   \
    " unnest(generate_series(1, len(constraint_column_names))) AS seq, constraint_name"       \
    " FROM duckdb_constraints() WHERE constraint_type = 'FOREIGN KEY' AND database_name IN "  \
    USER_DBS " AND true" VISIBLE("$7", TABLE_KEY("table_name"))                               \
    VISIBLE("$7", TABLE_KEY("referenced_table")) ")"                                           \
    " SELECT cat AS pk_catalog_name, sch AS pk_db_schema_name, pk_table AS pk_table_name,"     \
    " pk_col AS pk_column_name, cat AS fk_catalog_name, sch AS fk_db_schema_name,"             \
    " fk_table AS fk_table_name, fk_col AS fk_column_name, CAST(seq AS INTEGER) AS key_sequence," \
    " constraint_name AS fk_key_name, CAST(NULL AS VARCHAR) AS pk_key_name,"                   \
    " CAST(3 AS UTINYINT) AS update_rule, CAST(3 AS UTINYINT) AS delete_rule FROM fk WHERE true"

static const char exported_sql[] =
    FK_SQL OPT_EQ("$1", "cat") OPT_EQ("$2", "sch") " AND pk_table = $3"
    " AND CAST($4 AS VARCHAR) IS NULL AND CAST($5 AS VARCHAR) IS NULL"
    " AND CAST($6 AS VARCHAR) IS NULL ORDER BY 5, 6, 7, 9";
static const char imported_sql[] =
    FK_SQL OPT_EQ("$1", "cat") OPT_EQ("$2", "sch") " AND fk_table = $3"
    " AND CAST($4 AS VARCHAR) IS NULL AND CAST($5 AS VARCHAR) IS NULL"
    " AND CAST($6 AS VARCHAR) IS NULL ORDER BY 1, 2, 3, 9";
static const char cross_sql[] =
    FK_SQL OPT_EQ("$1", "cat") OPT_EQ("$2", "sch") " AND pk_table = $3"
    OPT_EQ("$4", "cat") OPT_EQ("$5", "sch") " AND fk_table = $6 ORDER BY 5, 6, 7, 9";

static void fix_pk(struct ArrowSchema *s)
{
    knut_serve__meta_nullable(s, 0x23); /* catalog, schema, key_name may be null */
}

static void fix_fk(struct ArrowSchema *s)
{
    /* the catalogs, schemas and key names may be null */
    knut_serve__meta_nullable(s, 0x1 | 0x2 | 0x10 | 0x20 | 0x200 | 0x400);
}

static knut_status bind_opt(knut_duck_stmt *stmt, size_t idx, int present, const char *v,
                            knut_error *err)
{
    if (!present || !v)
        return knut_duck_stmt_bind_null(stmt, idx, err);
    return knut_duck_stmt_bind_text(stmt, idx, v, strlen(v), err);
}

knut_status knut_serve__meta_keys(knut_duck_conn *conn, const knut_serve__cmd *cmd,
                                  const knut_serve__visible *vis, struct ArrowArrayStream *out,
                                  void (**fix)(struct ArrowSchema *), knut_error *err)
{
    /* the six names of a command: catalog, schema, table (x2 for cross) */
    int has[6] = {0};
    const char *v[6] = {0};
    const char *sql = NULL;
    size_t visible_idx = 7;
    if (cmd->kind == KNUT_SERVE__CMD_GET_PRIMARY_KEYS) {
        const KnutServe__Flightsql__CommandGetPrimaryKeys *c = (const void *)cmd->msg;
        has[0] = c->_catalog_case != 0, v[0] = c->catalog;
        has[1] = c->_db_schema_case != 0, v[1] = c->db_schema;
        has[2] = 1, v[2] = c->table;
        sql = pk_sql, visible_idx = 4, *fix = fix_pk;
    } else if (cmd->kind == KNUT_SERVE__CMD_GET_CROSS_REFERENCE) {
        const KnutServe__Flightsql__CommandGetCrossReference *c = (const void *)cmd->msg;
        has[0] = c->_pk_catalog_case != 0, v[0] = c->pk_catalog;
        has[1] = c->_pk_db_schema_case != 0, v[1] = c->pk_db_schema;
        has[2] = 1, v[2] = c->pk_table;
        has[3] = c->_fk_catalog_case != 0, v[3] = c->fk_catalog;
        has[4] = c->_fk_db_schema_case != 0, v[4] = c->fk_db_schema;
        has[5] = 1, v[5] = c->fk_table;
        sql = cross_sql, *fix = fix_fk;
    } else {
        /* Exported and Imported have the same fields */
        const KnutServe__Flightsql__CommandGetExportedKeys *c = (const void *)cmd->msg;
        has[0] = c->_catalog_case != 0, v[0] = c->catalog;
        has[1] = c->_db_schema_case != 0, v[1] = c->db_schema;
        has[2] = 1, v[2] = c->table;
        sql = cmd->kind == KNUT_SERVE__CMD_GET_EXPORTED_KEYS ? exported_sql : imported_sql;
        *fix = fix_fk;
    }
    knut_duck_stmt *stmt = NULL;
    knut_status st = knut_duck_stmt_prepare(&stmt, conn, sql, err);
    size_t n_names = cmd->kind == KNUT_SERVE__CMD_GET_CROSS_REFERENCE ? 6 : 3;
    for (size_t i = 0; st == KNUT_OK && i < n_names; i++)
        st = bind_opt(stmt, i + 1, has[i], v[i], err);
    for (size_t i = n_names + 1; st == KNUT_OK && i < visible_idx; i++)
        st = knut_duck_stmt_bind_null(stmt, i, err); /* $4..$6 of Exported/Imported */
    if (st == KNUT_OK)
        st = !vis || !vis->on
                 ? knut_duck_stmt_bind_null(stmt, visible_idx, err)
                 : knut_duck_stmt_bind_text(stmt, visible_idx,
                                            vis->list[KNUT_SERVE__VIS_TABLES].data,
                                            vis->list[KNUT_SERVE__VIS_TABLES].len, err);
    if (st == KNUT_OK)
        st = knut_duck_stmt_query(stmt, out, err);
    if (st != KNUT_OK)
        knut_error_prefix(err, "%s: ", cmd->name);
    knut_duck_stmt_free(stmt);
    return st;
}
