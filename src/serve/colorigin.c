/*
 * Where a query's result columns come from: ARROW:FLIGHT:SQL:CATALOG_NAME,
 * SCHEMA_NAME (and the spec's DB_SCHEMA_NAME) and TABLE_NAME on a column
 * that is a table's column as it stands (JDBC's getTableName, DBeaver's
 * editable result grids). DuckDB's C API does not tell a result column's
 * origin, so it is derived from DuckDB's own parse (json_serialize_sql)
 * and catalog (duckdb_columns()), and only where that is unambiguous: one
 * SELECT (no CTE, no set operation), FROM base tables and joins of them,
 * each select item a plain column reference (qualified by a FROM alias, or
 * unqualified and found in exactly one FROM table) or `*` over a single
 * table. Anything else leaves the columns without an origin, and the whole
 * query goes without when the result's column names do not line up with
 * the select list (the last safety net against a misreading).
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "serve_int.h"

#define KEY "ARROW:FLIGHT:SQL:"
#define MAX_FROM 16
#define MAX_TABLE_COLS 4096

typedef struct from_table {
    const char *alias;  /* what a qualified reference names: the alias, else the table */
    json_t *cols;       /* [[db, schema, table, column], ...] in column order; NULL: unknown */
} from_table;

struct knut_serve__origins {
    int64_t n;
    char **cat, **schema, **table; /* per result column; NULL: no origin */
};

static const char *jstr(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

/* The first text column of every row of sql with its text binds. */
static json_t *texts(knut_duck_conn *conn, const char *sql, const char *const *binds, size_t n,
                     size_t max)
{
    knut_error err = KNUT_ERROR_INIT;
    knut_duck_stmt *stmt = NULL;
    struct ArrowArrayStream rows = {0};
    char **t = NULL;
    size_t nt = 0;
    json_t *out = NULL;
    knut_status st = knut_duck_stmt_prepare_text(&stmt, conn, sql, binds, n, &err);
    if (st == KNUT_OK)
        st = knut_duck_stmt_query(stmt, &rows, &err);
    if (st == KNUT_OK)
        st = knut_arrow_stream_texts(&rows, max, &t, &nt, &err);
    if (st == KNUT_OK && (out = json_array()) != NULL)
        for (size_t i = 0; i < nt; i++) {
            /* as reals: DuckDB writes query_location -1 as 2^64-1 */
            json_t *j = json_loads(t[i], JSON_DECODE_INT_AS_REAL, NULL);
            if (!j || json_array_append_new(out, j) != 0) {
                json_decref(out);
                out = NULL;
                break;
            }
        }
    for (size_t i = 0; i < nt; i++)
        free(t[i]);
    free(t);
    knut_arrow_stream_release(&rows);
    knut_duck_stmt_free(stmt);
    knut_error_clear(&err);
    return out;
}

/* A FROM base table's columns, when its name resolves to exactly one
 * (database, schema) of DuckDB's catalog: an unqualified name in the
 * current schema (a temporary table of that name too makes it
 * ambiguous), schema.table in the current database, catalog.schema.table
 * as written. A two-part name DuckDB would read as catalog.table is left
 * unresolved. */
static json_t *table_cols(knut_duck_conn *conn, json_t *ref)
{
    const char *binds[] = {jstr(ref, "table_name"), jstr(ref, "schema_name"),
                           jstr(ref, "catalog_name")};
    json_t *cols = texts(conn,
                         "SELECT to_json([database_name, schema_name, table_name, column_name])"
                         "::VARCHAR FROM duckdb_columns() WHERE lower(table_name) = lower($1) "
                         "AND (($3 <> '' AND lower(database_name) = lower($3) "
                         "      AND lower(schema_name) = lower(CASE $2 WHEN '' THEN 'main' "
                         "                                     ELSE $2 END)) "
                         "  OR ($3 = '' AND $2 <> '' AND database_name = current_database() "
                         "      AND lower(schema_name) = lower($2)) "
                         "  OR ($3 = '' AND $2 = '' AND (database_name = 'temp' "
                         "      OR (database_name = current_database() "
                         "          AND schema_name = current_schema())))) "
                         "ORDER BY database_name, schema_name, column_index",
                         binds, 3, MAX_TABLE_COLS);
    size_t n = json_array_size(cols);
    for (size_t i = 1; i < n; i++) {
        json_t *a = json_array_get(cols, 0), *b = json_array_get(cols, i);
        if (strcmp(json_string_value(json_array_get(a, 0)), json_string_value(json_array_get(b, 0))) ||
            strcmp(json_string_value(json_array_get(a, 1)), json_string_value(json_array_get(b, 1)))) {
            json_decref(cols); /* the same name in two schemas: ambiguous */
            return NULL;
        }
    }
    if (n == 0) {
        json_decref(cols);
        return NULL;
    }
    return cols;
}

/* The FROM clause's base tables into f; 0 when it holds anything else
 * (a subquery, a table function, a USING or NATURAL join). */
static int from_walk(knut_duck_conn *conn, json_t *node, from_table *f, int *nf)
{
    const char *type = jstr(node, "type");
    if (strcmp(type, "BASE_TABLE") == 0) {
        if (*nf >= MAX_FROM)
            return 0;
        const char *alias = jstr(node, "alias");
        f[*nf].alias = alias[0] ? alias : jstr(node, "table_name");
        f[*nf].cols = table_cols(conn, node);
        (*nf)++;
        return json_array_size(json_object_get(node, "column_name_alias")) == 0;
    }
    if (strcmp(type, "JOIN") == 0) {
        if (json_array_size(json_object_get(node, "using_columns")) != 0 ||
            (strcmp(jstr(node, "ref_type"), "REGULAR") != 0 &&
             strcmp(jstr(node, "ref_type"), "CROSS") != 0))
            return 0;
        return from_walk(conn, json_object_get(node, "left"), f, nf) &&
               from_walk(conn, json_object_get(node, "right"), f, nf);
    }
    return 0;
}

/* The [db, schema, table, column] of `column` in table t, or NULL. */
static json_t *find_col(const from_table *t, const char *column)
{
    size_t i;
    json_t *c;
    json_array_foreach(t->cols, i, c)
        if (strcasecmp(json_string_value(json_array_get(c, 3)), column) == 0)
            return c;
    return NULL;
}

/* The origin of one column reference, or NULL. */
static json_t *ref_origin(json_t *ref, const from_table *f, int nf)
{
    json_t *names = json_object_get(ref, "column_names");
    size_t n = json_array_size(names);
    if (n == 1) {
        json_t *hit = NULL;
        for (int i = 0; i < nf; i++) {
            if (!f[i].cols)
                return NULL; /* an unknown table might hold it too */
            json_t *c = find_col(&f[i], json_string_value(json_array_get(names, 0)));
            if (c && hit)
                return NULL;
            hit = c ? c : hit;
        }
        return hit;
    }
    if (n == 2) {
        const char *q = json_string_value(json_array_get(names, 0));
        const from_table *t = NULL;
        for (int i = 0; i < nf; i++)
            if (strcasecmp(f[i].alias, q) == 0) {
                if (t)
                    return NULL;
                t = &f[i];
            }
        return t && t->cols ? find_col(t, json_string_value(json_array_get(names, 1))) : NULL;
    }
    return NULL;
}

static int star_plain(json_t *e)
{
    return json_array_size(json_object_get(e, "exclude_list")) == 0 &&
           json_array_size(json_object_get(e, "replace_list")) == 0 &&
           json_array_size(json_object_get(e, "rename_list")) == 0 &&
           !json_is_true(json_object_get(e, "columns")) &&
           !json_is_true(json_object_get(e, "unpacked")) &&
           (!json_object_get(e, "expr") || json_is_null(json_object_get(e, "expr")));
}

static void origin_set(knut_serve__origins *o, int64_t k, json_t *c)
{
    if (!c)
        return;
    o->cat[k] = strdup(json_string_value(json_array_get(c, 0)));
    o->schema[k] = strdup(json_string_value(json_array_get(c, 1)));
    o->table[k] = strdup(json_string_value(json_array_get(c, 2)));
}

/* Walks the select list against the result's names; 0 when they do not
 * line up. */
static int select_walk(json_t *list, const from_table *f, int nf, const struct ArrowSchema *s,
                       knut_serve__origins *o)
{
    int64_t k = 0;
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e) {
        const char *cls = jstr(e, "class");
        if (strcmp(cls, "STAR") == 0) {
            if (nf != 1 || !f[0].cols || !star_plain(e) ||
                (jstr(e, "relation_name")[0] && strcasecmp(jstr(e, "relation_name"), f[0].alias)))
                return 0;
            size_t j;
            json_t *c;
            json_array_foreach(f[0].cols, j, c) {
                if (k >= s->n_children ||
                    strcasecmp(s->children[k]->name, json_string_value(json_array_get(c, 3))))
                    return 0;
                origin_set(o, k++, c);
            }
            continue;
        }
        if (k >= s->n_children)
            return 0;
        const char *alias = jstr(e, "alias");
        if (strcmp(cls, "COLUMN_REF") == 0) {
            json_t *names = json_object_get(e, "column_names");
            const char *last = json_string_value(json_array_get(names,
                                                                json_array_size(names) - 1));
            if (!last || strcasecmp(s->children[k]->name, alias[0] ? alias : last))
                return 0;
            origin_set(o, k, ref_origin(e, f, nf));
        } else if (alias[0] && strcasecmp(s->children[k]->name, alias)) {
            return 0;
        }
        k++;
    }
    return k == s->n_children;
}

void knut_serve__origins_free(knut_serve__origins *o)
{
    if (!o)
        return;
    for (int64_t i = 0; i < o->n; i++) {
        free(o->cat[i]);
        free(o->schema[i]);
        free(o->table[i]);
    }
    free(o->cat);
    free(o->schema);
    free(o->table);
    free(o);
}

knut_serve__origins *knut_serve__origins_find(knut_duck_conn *conn, const char *sql,
                                              const struct ArrowSchema *s)
{
    const char *binds[] = {sql};
    from_table f[MAX_FROM] = {{0}};
    int nf = 0, ok = 0;
    knut_serve__origins *o = NULL;
    json_t *tree = texts(conn, "SELECT json_serialize_sql($1::VARCHAR)::VARCHAR", binds, 1, 1);
    json_t *root = json_array_get(tree, 0);
    json_t *stmts = json_object_get(root, "statements");
    json_t *node = json_object_get(json_array_get(stmts, 0), "node");
    if (!node || json_is_true(json_object_get(root, "error")) || json_array_size(stmts) != 1 ||
        strcmp(jstr(node, "type"), "SELECT_NODE") != 0 ||
        json_array_size(json_object_get(json_object_get(node, "cte_map"), "map")) != 0 ||
        !from_walk(conn, json_object_get(node, "from_table"), f, &nf) || nf == 0)
        goto done;
    if (!(o = calloc(1, sizeof *o)) || !(o->cat = calloc((size_t)s->n_children + 1, sizeof(char *))) ||
        !(o->schema = calloc((size_t)s->n_children + 1, sizeof(char *))) ||
        !(o->table = calloc((size_t)s->n_children + 1, sizeof(char *))))
        goto done;
    o->n = s->n_children;
    ok = select_walk(json_object_get(node, "select_list"), f, nf, s, o);

done:
    for (int i = 0; i < nf; i++)
        json_decref(f[i].cols);
    json_decref(tree);
    if (!ok) {
        knut_serve__origins_free(o);
        o = NULL;
    }
    return o;
}

/* Adds the origin's keys to one column's metadata, keeping the rest. */
static knut_status add_keys(struct ArrowSchema *col, const char *cat, const char *schema,
                            const char *table, knut_error *err)
{
    const char *keys[4] = {KEY "CATALOG_NAME", KEY "SCHEMA_NAME", KEY "DB_SCHEMA_NAME",
                           KEY "TABLE_NAME"};
    const char *vals[4] = {cat, schema, schema, table};
    return knut_arrow_schema_put_metadata(col, keys, vals, 4, err);
}

void knut_serve__origins_apply(const knut_serve__origins *o, struct ArrowSchema *s)
{
    if (!o || o->n != s->n_children || knut_serve__schema_own(s) != 0)
        return;
    for (int64_t i = 0; i < s->n_children; i++)
        if (o->cat[i] && o->schema[i] && o->table[i] &&
            add_keys(s->children[i], o->cat[i], o->schema[i], o->table[i], NULL) != KNUT_OK)
            return;
}

/* DoGet's result stream with the column metadata and the origins set on
 * its schema (knut_serve__stream_send's fix takes no context). */
typedef struct origin_stream {
    struct ArrowArrayStream inner;
    knut_serve__origins *o;
} origin_stream;

static int os_schema(struct ArrowArrayStream *self, struct ArrowSchema *out)
{
    origin_stream *w = self->private_data;
    int rc = w->inner.get_schema(&w->inner, out);
    if (rc == 0) {
        knut_serve__column_metadata(out);
        knut_serve__origins_apply(w->o, out);
    }
    return rc;
}

static int os_next(struct ArrowArrayStream *self, struct ArrowArray *out)
{
    origin_stream *w = self->private_data;
    return w->inner.get_next(&w->inner, out);
}

static const char *os_error(struct ArrowArrayStream *self)
{
    origin_stream *w = self->private_data;
    return w->inner.get_last_error(&w->inner);
}

static void os_release(struct ArrowArrayStream *self)
{
    origin_stream *w = self->private_data;
    knut_arrow_stream_release(&w->inner);
    knut_serve__origins_free(w->o);
    free(w);
    self->release = NULL;
}

int knut_serve__origins_wrap(struct ArrowArrayStream *rows, knut_serve__origins *o)
{
    origin_stream *w = calloc(1, sizeof *w);
    if (!w) {
        knut_serve__origins_free(o);
        return -1;
    }
    w->inner = *rows;
    w->o = o;
    rows->get_schema = os_schema;
    rows->get_next = os_next;
    rows->get_last_error = os_error;
    rows->release = os_release;
    rows->private_data = w;
    return 0;
}
