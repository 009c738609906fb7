/*
 * The embedded graph store: opening the DuckDB file and its catalog, the
 * label/type -> table mapping, the type-widening rules of schema
 * evolution, read helpers, and the SQL helpers the apply and export files
 * share. Catalog rows and every value reach DuckDB as binds; only table
 * and column names (quoted) and DuckDB's own type names are SQL text.
 */
#include "store_int.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void store_sink_close(knut_graph_sink *sink)
{
    knut_graph_store_close((knut_graph_store *)sink);
}

static const knut_graph_sink_ops store_sink_ops = {"embedded", knut_graph__store_apply,
                                                   store_sink_close, knut_graph__store_keys};

knut_status knut_graph__store_exec(knut_duck_conn *conn, const char *sql, const char *const *binds,
                                   size_t n, uint64_t *changes, knut_error *err)
{
    knut_duck_stmt *stmt = NULL;
    knut_status st = knut_duck_stmt_prepare_text(&stmt, conn, sql, binds, n, err);
    if (st == KNUT_OK)
        st = knut_duck_stmt_exec(stmt, changes, err);
    knut_duck_stmt_free(stmt);
    return st;
}

knut_status knut_graph__store_query(knut_duck_conn *conn, const char *sql, const char *const *binds,
                                    size_t n, struct ArrowArrayStream *out, knut_error *err)
{
    knut_duck_stmt *stmt = NULL;
    knut_status st = knut_duck_stmt_prepare_text(&stmt, conn, sql, binds, n, err);
    if (st == KNUT_OK)
        st = knut_duck_stmt_query(stmt, out, err);
    knut_duck_stmt_free(stmt);
    return st;
}

typedef struct scalar_ctx {
    int64_t value;
    int seen;
} scalar_ctx;

static knut_status scalar_batch(void *ctx, const knut_arrow_view *v, knut_error *err)
{
    scalar_ctx *c = ctx;
    if (c->seen || v->length == 0 || v->n_children == 0)
        return KNUT_OK;
    c->seen = 1;
    const knut_arrow_view *col = &v->children[0];
    int64_t r = knut_arrow_view_child_row(v, 0);
    if (!knut_arrow_view_is_null(col, r))
        c->value = col->type.type == KNUT_ARROW_DOUBLE || col->type.type == KNUT_ARROW_FLOAT
                       ? knut_arrow__f64_to_i64(knut_arrow_view_get_double(col, r))
                       : knut_arrow_view_get_int64(col, r);
    return KNUT_OK;
}

knut_status knut_graph__store_scalar_i64(knut_duck_conn *conn, const char *sql,
                                         const char *const *binds, size_t n, int64_t *out,
                                         knut_error *err)
{
    struct ArrowArrayStream s = {0};
    scalar_ctx c = {0, 0};
    knut_status st = knut_graph__store_query(conn, sql, binds, n, &s, err);
    if (st == KNUT_OK)
        st = knut_arrow_stream_each(&s, scalar_batch, &c, err);
    knut_arrow_stream_release(&s);
    *out = c.value;
    return st;
}

static knut_status rows_batch(void *ctx, const knut_arrow_view *v, knut_error *err)
{
    knut_gs_rows *r = ctx;
    if (r->n_cols == 0)
        r->n_cols = (size_t)v->n_children;
    if (r->n_cols == 0 || (size_t)v->n_children != r->n_cols)
        return knut_error_set(err, KNUT_EINVAL, "catalog query: unexpected result shape");
    size_t old = r->n_rows * r->n_cols, add = (size_t)v->length * r->n_cols;
    char **cells = realloc(r->cells, (old + add) * sizeof *cells);
    if (!cells)
        return knut_error_set(err, KNUT_ENOMEM, "catalog query: out of memory");
    r->cells = cells;
    int oom = 0;
    for (int64_t i = 0; i < v->length; i++) {
        int64_t row = knut_arrow_view_child_row(v, i);
        for (size_t k = 0; k < r->n_cols; k++) {
            const knut_arrow_view *col = &v->children[k];
            char *text = NULL;
            if (!knut_arrow_view_is_null(col, row)) {
                knut_buf b = KNUT_BUF_INIT;
                int64_t len = 0;
                if (col->type.type == KNUT_ARROW_UTF8 || col->type.type == KNUT_ARROW_LARGE_UTF8) {
                    const char *p = knut_arrow_view_get_str(col, row, &len);
                    knut_buf_append(&b, p, (size_t)len);
                } else {
                    knut_buf_printf(&b, "%lld", (long long)knut_arrow_view_get_int64(col, row));
                }
                text = knut_buf_detach(&b, NULL);
                oom |= text == NULL;
            }
            cells[old + (size_t)i * r->n_cols + k] = text;
        }
    }
    r->n_rows += (size_t)v->length;
    return oom ? knut_error_set(err, KNUT_ENOMEM, "catalog query: out of memory") : KNUT_OK;
}

knut_status knut_graph__store_rows(knut_duck_conn *conn, const char *sql, const char *const *binds,
                                   size_t n, knut_gs_rows *out, knut_error *err)
{
    struct ArrowArrayStream s = {0};
    memset(out, 0, sizeof *out);
    knut_status st = knut_graph__store_query(conn, sql, binds, n, &s, err);
    if (st == KNUT_OK)
        st = knut_arrow_stream_each(&s, rows_batch, out, err);
    knut_arrow_stream_release(&s);
    if (st != KNUT_OK)
        knut_graph__store_rows_reset(out);
    return st;
}

void knut_graph__store_rows_reset(knut_gs_rows *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n_rows * r->n_cols; i++)
        free(r->cells[i]);
    free(r->cells);
    memset(r, 0, sizeof *r);
}

knut_status knut_graph__store_column_type(knut_duck_conn *conn, const char *table,
                                          const char *column, char **out, knut_error *err)
{
    const char *binds[] = {table, column};
    knut_gs_rows rows;
    *out = NULL;
    knut_status st =
        knut_graph__store_rows(conn,
                               "SELECT data_type FROM duckdb_columns() WHERE database_name = "
                               "current_database() AND schema_name = 'main' AND table_name = $1 "
                               "AND lower(column_name) = lower($2)",
                               binds, 2, &rows, err);
    if (st != KNUT_OK)
        return st;
    if (rows.n_rows > 0 && knut_gs__cell(&rows, 0, 0)) {
        *out = strdup(knut_gs__cell(&rows, 0, 0));
        if (!*out)
            st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
    }
    knut_graph__store_rows_reset(&rows);
    return st;
}

/* ---- catalog ----------------------------------------------------------- */

static const char *catalog_table(char kind)
{
    return kind == 'v' ? KNUT_GS_VLABELS : KNUT_GS_ETYPES;
}

knut_status knut_graph__store_catalog_get(knut_graph_store *s, char kind, const char *name,
                                          char **table, char **keys_json, knut_error *err)
{
    char sql[160];
    knut_gs_rows rows;
    *table = NULL;
    if (keys_json)
        *keys_json = NULL;
    snprintf(sql, sizeof sql, "SELECT table_name, keys FROM \"%s\" WHERE %s = $1",
             catalog_table(kind), kind == 'v' ? "label" : "type");
    knut_status st = knut_graph__store_rows(s->conn, sql, &name, 1, &rows, err);
    if (st != KNUT_OK || rows.n_rows == 0)
        goto cleanup;
    *table = strdup(knut_gs__cell(&rows, 0, 0));
    if (keys_json)
        *keys_json = strdup(knut_gs__cell(&rows, 0, 1));
    if (!*table || (keys_json && !*keys_json)) {
        free(*table);
        *table = NULL;
        st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
    }
cleanup:
    knut_graph__store_rows_reset(&rows);
    return st;
}

/* FNV-1a: a short stable suffix that tells apart names that sanitise alike. */
static uint32_t name_hash(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

knut_status knut_graph__store_catalog_add(knut_graph_store *s, char kind, const char *name,
                                          const char *keys_json, char **table, knut_error *err)
{
    knut_buf base = KNUT_BUF_INIT, cand = KNUT_BUF_INIT;
    int changed = 0;
    knut_status st;
    *table = NULL;
    /* Readable names for ordinary labels; anything else is mapped to '_'
     * and disambiguated by a hash of the original. */
    knut_buf_puts(&base, kind == 'v' ? "v_" : "e_");
    size_t i = 0;
    for (const char *p = name; *p; p++, i++) {
        int ok = isalnum((unsigned char)*p) || *p == '_';
        changed |= !ok || i >= 48;
        if (i < 48)
            knut_buf_putc(&base, ok ? *p : '_');
    }
    if (changed)
        knut_buf_printf(&base, "_%08x", (unsigned)name_hash(name));
    if ((st = knut_buf_check(&base, err)) != KNUT_OK)
        goto cleanup;
    /* DuckDB resolves names case-insensitively: "Person" and "person"
     * would share a table, so a taken name gets a counter. */
    for (int n = 1;; n++) {
        knut_buf_clear(&cand);
        knut_buf_puts(&cand, base.data);
        if (n > 1)
            knut_buf_printf(&cand, "_%d", n);
        if ((st = knut_buf_check(&cand, err)) != KNUT_OK)
            goto cleanup;
        int64_t taken = 0;
        const char *b1 = cand.data;
        st = knut_graph__store_scalar_i64(
            s->conn,
            "SELECT count(*) FROM duckdb_tables() WHERE database_name = "
            "current_database() AND lower(table_name) = lower($1)",
            &b1, 1, &taken, err);
        if (st != KNUT_OK)
            goto cleanup;
        if (!taken)
            break;
    }
    char sql[160];
    snprintf(sql, sizeof sql, "INSERT INTO \"%s\" VALUES ($1, $2, $3)", catalog_table(kind));
    const char *binds[] = {name, cand.data, keys_json};
    if ((st = knut_graph__store_exec(s->conn, sql, binds, 3, NULL, err)) != KNUT_OK)
        goto cleanup;
    *table = knut_buf_detach(&cand, NULL);
    if (!*table)
        st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
cleanup:
    knut_buf_reset(&base);
    knut_buf_reset(&cand);
    return st;
}

/* ---- types ------------------------------------------------------------- */

/* Integer ranks: a value fits a column of higher (or equal) rank; an
 * unsigned value needs a strictly larger signed type. */
static int int_rank(const char *t, int *is_unsigned)
{
    static const char *const sgn[] = {"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT"};
    static const char *const uns[] = {"UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT", "UHUGEINT"};
    for (int i = 0; i < 5; i++) {
        if (strcmp(t, sgn[i]) == 0) {
            *is_unsigned = 0;
            return i + 1;
        }
        if (strcmp(t, uns[i]) == 0) {
            *is_unsigned = 1;
            return i + 1;
        }
    }
    return 0;
}

const char *knut_graph__store_type_for_column(const char *incoming)
{
    if (strcmp(incoming, "TIMESTAMP_S") == 0 || strcmp(incoming, "TIMESTAMP_MS") == 0)
        return "TIMESTAMP";
    return incoming;
}

int knut_graph__store_type_fits(const char *existing, const char *incoming)
{
    if (strcmp(existing, incoming) == 0 ||
        strcmp(existing, knut_graph__store_type_for_column(incoming)) == 0)
        return 1;
    int eu = 0, iu = 0;
    int er = int_rank(existing, &eu), ir = int_rank(incoming, &iu);
    if (er && ir) {
        if (eu == iu)
            return ir <= er;
        return !eu && iu && ir < er;
    }
    /* Floats and small integers are exact in DOUBLE; BIGINT is not. */
    if (strcmp(existing, "DOUBLE") == 0)
        return strcmp(incoming, "FLOAT") == 0 || (ir && ir <= 3 && !(iu && ir == 3));
    return 0;
}

const char *knut_graph__store_type_widen(const char *existing, const char *incoming, int *exact)
{
    *exact = 0;
    const char *to = knut_graph__store_type_for_column(incoming);
    int eu = 0;
    /* every stored value fits the incoming type: the column takes it */
    if (strcmp(existing, to) != 0 && knut_graph__store_type_fits(to, existing))
        return to;
    /* BIGINT into DOUBLE: exact for the values stored only if each is
     * within +-2^53 (the caller checks) */
    if (strcmp(to, "DOUBLE") == 0 && int_rank(existing, &eu) == 4 && !eu) {
        *exact = 1;
        return to;
    }
    return NULL;
}

knut_status knut_graph__store_column_widen(knut_duck_conn *conn, const char *table,
                                           const char *column, const char *have,
                                           const char *want, int text_ok, const char **to,
                                           knut_error *err)
{
    knut_buf q = KNUT_BUF_INIT;
    int exact = 0;
    int64_t inexact = 0;
    knut_status st = KNUT_OK;
    *to = knut_graph__store_type_widen(have, want, &exact);
    /* into text only when the column is declared text: every value has
     * a text form, but it stops being a number or a date */
    if (!*to && text_ok && strcmp(want, "VARCHAR") == 0)
        *to = "VARCHAR";
    if (!*to)
        return KNUT_OK;
    if (exact) {
        knut_buf_puts(&q, "SELECT count(*) FROM ");
        knut_duck_ident(&q, table);
        knut_buf_puts(&q, " WHERE ");
        knut_duck_ident(&q, column);
        knut_buf_puts(&q, " NOT BETWEEN -9007199254740992 AND 9007199254740992");
        if ((st = knut_buf_check(&q, err)) == KNUT_OK)
            st = knut_graph__store_scalar_i64(conn, q.data, NULL, 0, &inexact, err);
        if (st != KNUT_OK || inexact > 0) {
            *to = NULL; /* a stored value would round: no widening */
            goto cleanup;
        }
        knut_buf_clear(&q);
    }
    /* in the apply's transaction: a file that fails later undoes it too */
    knut_buf_puts(&q, "ALTER TABLE ");
    knut_duck_ident(&q, table);
    knut_buf_puts(&q, " ALTER COLUMN ");
    knut_duck_ident(&q, column);
    knut_buf_printf(&q, " TYPE %s", *to);
    if ((st = knut_buf_check(&q, err)) == KNUT_OK)
        st = knut_duck_exec(conn, q.data, err);
    if (st == KNUT_OK) {
        const knut_log_field f[] = {KNUT_LF_STR("table", table), KNUT_LF_STR("column", column),
                                    KNUT_LF_STR("from", have), KNUT_LF_STR("to", *to)};
        knut_log_emit(KNUT_LOG_INFO, "graph", f, sizeof f / sizeof f[0], "column widened");
    }
cleanup:
    knut_buf_reset(&q);
    return st;
}

/* ---- open / close ------------------------------------------------------ */

static const char catalog_ddl[] =
    "CREATE TABLE IF NOT EXISTS \"" KNUT_GS_VLABELS "\" (label VARCHAR PRIMARY KEY, "
    "table_name VARCHAR NOT NULL UNIQUE, keys VARCHAR NOT NULL);"
    "CREATE TABLE IF NOT EXISTS \"" KNUT_GS_ETYPES "\" (type VARCHAR PRIMARY KEY, "
    "table_name VARCHAR NOT NULL UNIQUE, keys VARCHAR NOT NULL);"
    "CREATE TABLE IF NOT EXISTS \"" KNUT_GS_MEMBERS "\" (vid BIGINT NOT NULL, "
    "label VARCHAR NOT NULL);" /* no index: store_apply.c keeps (vid, label) unique */
    "CREATE SEQUENCE IF NOT EXISTS \"" KNUT_GS_SEQ "\";";

knut_status knut_graph_store_open(knut_graph_store **out, const char *path, knut_error *err)
{
    KNUT_ASSERT_ARG(err, out != NULL);
    *out = NULL;
    knut_graph_store *s = calloc(1, sizeof *s);
    if (!s)
        return knut_error_set(err, KNUT_ENOMEM, "graph store: out of memory");
    s->sink.ops = &store_sink_ops;
    knut_status st = knut_duck_db_open(&s->db, path, NULL, 0, err);
    if (st == KNUT_OK)
        st = knut_duck_conn_open(&s->conn, s->db, err);
    if (st == KNUT_OK)
        st = knut_duck_exec(s->conn, catalog_ddl, err);
    if (st != KNUT_OK) {
        knut_error_prefix(err, "graph store %s: ", path && *path ? path : ":memory:");
        knut_graph_store_close(s);
        return st;
    }
    *out = s;
    return KNUT_OK;
}

void knut_graph_store_close(knut_graph_store *store)
{
    if (!store)
        return;
    knut_duck_conn_close(store->conn);
    knut_duck_db_close(store->db);
    free(store);
}

knut_graph_sink *knut_graph_store_sink(knut_graph_store *store)
{
    return store ? &store->sink : NULL;
}

int64_t knut_graph_store_edges_skipped(const knut_graph_store *store)
{
    return store ? store->edges_skipped : 0;
}

struct knut_duck_conn *knut_graph_store_conn(knut_graph_store *store)
{
    return store ? store->conn : NULL;
}

void knut_graph_store_set_txn_rows(knut_graph_store *store, int64_t rows)
{
    if (store)
        store->txn_rows = rows > 0 ? rows : 0;
}

struct knut_duck_db *knut_graph_store_db(knut_graph_store *store)
{
    return store ? store->db : NULL;
}

knut_status knut_graph_store_query(knut_graph_store *store, const char *sql,
                                   struct ArrowArrayStream *out, knut_error *err)
{
    KNUT_ASSERT_ARG(err, store != NULL && sql != NULL && out != NULL);
    return knut_duck_query(store->conn, sql, out, err);
}

knut_status knut_graph_store_list(knut_graph_store *store, struct ArrowArrayStream *out,
                                  knut_error *err)
{
    KNUT_ASSERT_ARG(err, store != NULL && out != NULL);
    knut_gs_rows cat;
    knut_buf sql = KNUT_BUF_INIT;
    const char **binds = NULL;
    knut_status st = knut_graph__store_rows(
        store->conn,
        "SELECT 'vertex', label, table_name, keys FROM \"" KNUT_GS_VLABELS
        "\" UNION ALL SELECT 'edge', type, table_name, keys FROM \"" KNUT_GS_ETYPES
        "\" ORDER BY 1 DESC, 2",
        NULL, 0, &cat, err);
    if (st != KNUT_OK)
        return st;
    /* One count per table; names travel as binds ($1.. per row). */
    binds = calloc(cat.n_rows * 4 + 1, sizeof *binds);
    if (!binds) {
        st = knut_error_set(err, KNUT_ENOMEM, "graph store: out of memory");
        goto cleanup;
    }
    knut_buf_puts(&sql, "SELECT * FROM (");
    for (size_t r = 0; r < cat.n_rows; r++) {
        for (size_t c = 0; c < 4; c++)
            binds[r * 4 + c] = knut_gs__cell(&cat, r, c);
        knut_buf_printf(&sql,
                        "%sSELECT $%zu::VARCHAR AS kind, $%zu::VARCHAR AS name, $%zu::VARCHAR AS "
                        "table_name, $%zu::VARCHAR AS keys, count(*) AS rows FROM ",
                        r ? " UNION ALL " : "", r * 4 + 1, r * 4 + 2, r * 4 + 3, r * 4 + 4);
        knut_duck_ident(&sql, knut_gs__cell(&cat, r, 2));
    }
    if (cat.n_rows == 0)
        knut_buf_puts(&sql, "SELECT NULL::VARCHAR AS kind, NULL::VARCHAR AS name, NULL::VARCHAR "
                            "AS table_name, NULL::VARCHAR AS keys, 0::BIGINT AS rows WHERE false");
    knut_buf_puts(&sql, ") ORDER BY kind DESC, name");
    if ((st = knut_buf_check(&sql, err)) != KNUT_OK)
        goto cleanup;
    st = knut_graph__store_query(store->conn, sql.data, binds, cat.n_rows * 4, out, err);
cleanup:
    free(binds);
    knut_buf_reset(&sql);
    knut_graph__store_rows_reset(&cat);
    return st;
}
