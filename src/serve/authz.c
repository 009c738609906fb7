/*
 * Authorization: what an identity may read. Without `allow` lines every
 * identity reads everything; with them, an identity reads the tables
 * its own lines and the lines for "*" name, as patterns TABLE,
 * SCHEMA.TABLE or CATALOG.SCHEMA.TABLE (each part a name, case-insensitive
 * as DuckDB's, with '*' matching any run). An identity whose patterns
 * include one of only '*' parts reads everything, as without lines.
 *
 * A query of a restricted identity is checked with DuckDB's own parser
 * and binder, never the text: it must be a SELECT; its table functions
 * (from json_serialize_sql's syntax tree) must be ones that read no table
 * (range, generate_series, unnest); and every table the binder says it
 * reads (duckdb_get_table_names: views expanded to their tables, CTEs
 * resolved) must be allowed. What DuckDB cannot answer for is refused.
 * The catalog commands list only the tables an identity may read, and
 * the schemas and catalogs that hold one.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "serve_int.h"

#define MAX_PARTS 3
/* Separators of the visible lists bound into the catalog queries. */
#define SEP_FIELD '\x1f'
#define SEP_ROW '\x1e'

static const char *const safe_functions[] = {"range", "generate_series", "unnest"};

typedef struct strings_ctx {
    knut_buf *out;
    size_t n;
} strings_ctx;

static knut_status strings_batch(void *ctx, const knut_arrow_view *v, knut_error *err)
{
    strings_ctx *c = ctx;
    for (int64_t r = 0; r < v->length; r++)
        for (int64_t k = 0; k < v->n_children; k++) {
            const knut_arrow_view *col = &v->children[k];
            int64_t len = 0;
            const char *p = knut_arrow_view_is_null(col, r) ? "" : knut_arrow_view_get_str(col, r,
                                                                                       &len);
            if (memchr(p, 0, (size_t)len))
                len = (int64_t)strlen(p); /* a name with a NUL is cut there: never matched */
            knut_buf_append(c->out, p, (size_t)len);
            knut_buf_putc(c->out, 0);
            c->n++;
        }
    return knut_buf_check(c->out, err);
}

knut_status knut_serve__stream_strings(struct ArrowArrayStream *rows, knut_buf *out, size_t *n,
                                       knut_error *err)
{
    strings_ctx c = {out, 0};
    knut_buf_clear(out);
    knut_status st = knut_arrow_stream_each(rows, strings_batch, &c, err);
    *n = c.n;
    return st;
}

/* Splits a pattern or a parsed name into at most MAX_PARTS parts. */
static int parts_of(const char *p, char parts[MAX_PARTS][KNUT_SERVE__MAX_IDENT])
{
    int n = 0;
    for (;;) {
        size_t len = strcspn(p, ".");
        if (n == MAX_PARTS || len == 0 || len >= KNUT_SERVE__MAX_IDENT)
            return -1;
        memcpy(parts[n], p, len);
        parts[n++][len] = 0;
        if (!p[len])
            return n;
        p += len + 1;
    }
}

int knut_serve__pattern_check(const char *pattern)
{
    char parts[MAX_PARTS][KNUT_SERVE__MAX_IDENT];
    return parts_of(pattern, parts) > 0 ? 0 : -1;
}

/* A glob of '*' only, ASCII case-insensitive (DuckDB's identifiers are). */
static int glob(const char *p, const char *s)
{
    const char *star = NULL, *resume = NULL;
    while (*s) {
        if (*p == '*') {
            star = p++;
            resume = s;
        } else if (*p && strncasecmp(p, s, 1) == 0) {
            p++;
            s++;
        } else if (star) {
            p = star + 1;
            s = ++resume;
        } else {
            return 0;
        }
    }
    while (*p == '*')
        p++;
    return !*p;
}

static int pattern_match(const char *pattern, const char *cat, const char *sch, const char *tbl)
{
    char parts[MAX_PARTS][KNUT_SERVE__MAX_IDENT];
    int n = parts_of(pattern, parts);
    const char *name[MAX_PARTS] = {cat, sch, tbl};
    int ok = n > 0;
    for (int i = 0; ok && i < n; i++)
        ok = glob(parts[n - 1 - i], name[MAX_PARTS - 1 - i]);
    /* CATALOG.TABLE names a table of a catalog's main schema too, as
     * DuckDB binds `x.t` when x is a catalog (serve.yml views, cypher.q) */
    if (!ok && n == 2 && strcasecmp(sch, "main") == 0)
        ok = glob(parts[0], cat) && glob(parts[1], tbl);
    return ok;
}

static int all_stars(const char *pattern)
{
    for (const char *p = pattern; *p; p++)
        if (*p != '*' && *p != '.')
            return 0;
    return 1;
}

static int rule_applies(const knut_serve__rule *r, const knut_serve__who *who)
{
    return strcmp(r->ident, "*") == 0 || strcmp(r->ident, who->name) == 0;
}

int knut_serve__authz_full(const knut_serve__who *who)
{
    const knut_serve__auth *a = who->auth;
    if (!a || !a->on || a->n_rules == 0)
        return 1;
    for (size_t i = 0; i < a->n_rules; i++)
        for (size_t j = 0; rule_applies(&a->rules[i], who) && j < a->rules[i].n; j++)
            if (all_stars(a->rules[i].patterns[j]))
                return 1;
    return 0;
}

int knut_serve__authz_table(const knut_serve__who *who, const char *cat, const char *sch,
                            const char *tbl)
{
    if (knut_serve__authz_full(who))
        return 1;
    const knut_serve__auth *a = who->auth;
    for (size_t i = 0; i < a->n_rules; i++)
        for (size_t j = 0; rule_applies(&a->rules[i], who) && j < a->rules[i].n; j++)
            if (pattern_match(a->rules[i].patterns[j], cat, sch, tbl))
                return 1;
    return 0;
}

knut_status knut_serve__denied(knut_serve__who *who, knut_error *err, const char *fmt, ...)
{
    who->denied = 1;
    va_list ap;
    va_start(ap, fmt);
    knut_error_setv(err, KNUT_EPEER, fmt, ap);
    va_end(ap);
    KNUT_LOG(KNUT_LOG_INFO, SERVE_LOG, "permission denied to '%s': %s", who->name, err->message);
    return KNUT_EPEER;
}

int knut_serve__name_parse(const char *s, char parts[3][KNUT_SERVE__MAX_IDENT])
{
    int n = 0;
    for (;;) {
        size_t k = 0;
        if (n == MAX_PARTS)
            return -1;
        if (*s == '"') {
            for (s++;; s++) {
                if (!*s)
                    return -1;
                if (*s == '"' && s[1] != '"')
                    break;
                if (*s == '"')
                    s++; /* "" inside quotes is one quote */
                if (k + 1 >= KNUT_SERVE__MAX_IDENT)
                    return -1;
                parts[n][k++] = *s;
            }
            s++;
        } else {
            while (*s && *s != '.' && *s != ' ' && *s != '"') {
                if (k + 1 >= KNUT_SERVE__MAX_IDENT)
                    return -1;
                parts[n][k++] = *s++;
            }
        }
        if (k == 0)
            return -1;
        parts[n++][k] = 0;
        if (*s == '.') {
            s++;
            continue;
        }
        return !*s || strncasecmp(s, " AS ", 4) == 0 ? n : -1;
    }
}

/* Whether schema names a schema of the default catalog (so x.y is a
 * schema and a table, as DuckDB binds it, not a catalog and a table). */
static knut_status is_schema(knut_duck_conn *conn, const char *schema, int *yes,
                             knut_error *err)
{
    knut_duck_stmt *stmt = NULL;
    struct ArrowArrayStream rows = {0};
    const char *binds[1] = {schema};
    knut_status st = knut_duck_stmt_prepare_text(
        &stmt, conn, "SELECT 1 FROM duckdb_schemas() WHERE database_name = current_database() "
                     "AND lower(schema_name) = lower($1)", binds, 1, err);
    if (st == KNUT_OK)
        st = knut_duck_stmt_query(stmt, &rows, err);
    int64_t n = 0;
    if (st == KNUT_OK)
        st = knut_arrow_stream_count_rows(&rows, &n, err);
    *yes = n > 0;
    knut_arrow_stream_release(&rows);
    knut_duck_stmt_free(stmt);
    return st;
}

/* The table functions of the query that read no table are fine; the
 * others (pragma_storage_info, query, duckdb_* ...) are refused, and so is
 * SQL the syntax tree does not cover. */
static knut_status check_functions(knut_serve__who *who, knut_duck_conn *conn, const char *sql,
                                   knut_error *err)
{
    knut_duck_stmt *stmt = NULL;
    struct ArrowArrayStream rows = {0};
    knut_buf names = KNUT_BUF_INIT;
    const char *binds[1] = {sql};
    knut_status st = knut_duck_stmt_prepare_text(
        &stmt, conn,
        "WITH t AS (SELECT * FROM json_tree(json_serialize_sql($1::VARCHAR))) "
        "SELECT coalesce(json_extract_string(p.value, '$.function.function_name'), '?') "
        "FROM t c JOIN t p ON c.parent = p.id "
        "WHERE c.key = 'type' AND c.value::VARCHAR = '\"TABLE_FUNCTION\"' "
        /* DuckDB's catalog views (information_schema, pg_catalog,
         * duckdb_tables, ...) are built on table functions, so the binder
         * names no table under them: marked '#' and refused */
        "UNION ALL SELECT '#' || coalesce(json_extract_string(p.value, '$.table_name'), '?') "
        "FROM t c JOIN t p ON c.parent = p.id "
        "WHERE c.key = 'type' AND c.value::VARCHAR = '\"BASE_TABLE\"' AND ("
        "lower(json_extract_string(p.value, '$.schema_name')) IN "
        "('information_schema', 'pg_catalog') "
        "OR lower(json_extract_string(p.value, '$.catalog_name')) IN ('system', 'temp') "
        "OR (lower(json_extract_string(p.value, '$.schema_name')) IN ('', 'main') "
        "AND lower(json_extract_string(p.value, '$.table_name')) IN "
        "(SELECT lower(view_name) FROM duckdb_views() WHERE internal))) "
        "UNION ALL SELECT '' FROM (SELECT json_serialize_sql($1::VARCHAR)) s(j) "
        "WHERE json_extract(j, '$.error')::BOOLEAN",
        binds, 1, err);
    if (st == KNUT_OK)
        st = knut_duck_stmt_query(stmt, &rows, err);
    size_t n = 0;
    if (st == KNUT_OK)
        st = knut_serve__stream_strings(&rows, &names, &n, err);
    if (st != KNUT_OK) {
        knut_error_prefix(err, "checking the query's table functions: ");
        goto cleanup;
    }
    for (const char *f = names.data; n > 0; n--, f += strlen(f) + 1) {
        int safe = 0;
        for (size_t i = 0; i < sizeof safe_functions / sizeof safe_functions[0]; i++)
            safe |= strcasecmp(f, safe_functions[i]) == 0;
        if (!*f) {
            st = knut_serve__denied(who, err, "only SELECT queries can be checked against "
                                              "the tables you may read");
            break;
        }
        if (*f == '#') {
            st = knut_serve__denied(who, err, "DuckDB's catalog view %.100s is not readable by "
                                              "a restricted identity (the Flight SQL catalog "
                                              "commands list what it may see)", f + 1);
            break;
        }
        if (!safe) {
            st = knut_serve__denied(who, err, "the table function %.100s() is not allowed "
                                              "to a restricted identity (only range, "
                                              "generate_series, unnest)", f);
            break;
        }
    }
cleanup:
    knut_buf_reset(&names);
    knut_arrow_stream_release(&rows);
    knut_duck_stmt_free(stmt);
    return st;
}

/* Whether cat is a catalog serve.yml made (views, the Cypher queries). */
static int config_catalog(const knut_serve *s, const char *cat)
{
    if (s->conf.n_queries && strcasecmp(cat, KNUT_SERVE__CYPHER_CATALOG) == 0)
        return 1;
    for (size_t i = 0; i < s->conf.n_views; i++)
        if (strcasecmp(cat, s->conf.views[i].catalog) == 0)
            return 1;
    return 0;
}

/* The views of serve.yml read no table the binder could name (files,
 * FalkorDB): each one the query names is checked by its own name, from
 * the syntax tree (a CTE is never qualified, so `x.v` is a table). */
static knut_status check_config_views(knut_serve *s, knut_serve__who *who, knut_duck_conn *conn,
                                      const char *sql, knut_error *err)
{
    if (!s->conf.n_views && !s->conf.n_queries)
        return KNUT_OK;
    knut_duck_stmt *stmt = NULL;
    struct ArrowArrayStream rows = {0};
    knut_buf cells = KNUT_BUF_INIT;
    const char *binds[1] = {sql};
    size_t n = 0;
    knut_status st = knut_duck_stmt_prepare_text(
        &stmt, conn,
        "WITH t AS (SELECT * FROM json_tree(json_serialize_sql($1::VARCHAR))) "
        "SELECT coalesce(json_extract_string(p.value, '$.catalog_name'), ''), "
        "coalesce(json_extract_string(p.value, '$.schema_name'), ''), "
        "coalesce(json_extract_string(p.value, '$.table_name'), '') "
        "FROM t c JOIN t p ON c.parent = p.id "
        "WHERE c.key = 'type' AND c.value::VARCHAR = '\"BASE_TABLE\"'",
        binds, 1, err);
    if (st == KNUT_OK)
        st = knut_duck_stmt_query(stmt, &rows, err);
    if (st == KNUT_OK)
        st = knut_serve__stream_strings(&rows, &cells, &n, err);
    const char *c = cells.data;
    for (size_t i = 0; st == KNUT_OK && i + 3 <= n; i += 3) {
        const char *cat = c, *sch = cat + strlen(cat) + 1, *tbl = sch + strlen(sch) + 1;
        c = tbl + strlen(tbl) + 1;
        if (!*cat && *sch) {
            int yes = 0;
            if ((st = is_schema(conn, sch, &yes, err)) != KNUT_OK || yes)
                continue;
            cat = sch;
            sch = "";
        }
        if (!*cat || !config_catalog(s, cat))
            continue;
        if (!knut_serve__authz_table(who, cat, *sch ? sch : "main", tbl))
            st = knut_serve__denied(who, err, "'%s' may not read %s.%s", who->name, cat, tbl);
    }
    knut_buf_reset(&cells);
    knut_arrow_stream_release(&rows);
    knut_duck_stmt_free(stmt);
    return st;
}

knut_status knut_serve__authz_sql(knut_serve *s, knut_serve__who *who, knut_duck_conn *conn,
                                  const char *sql, const knut_duck_stmt *stmt, knut_error *err)
{
    if (knut_serve__authz_full(who))
        return KNUT_OK;
    if (!knut_duck_stmt_is_select(stmt))
        return knut_serve__denied(who, err, "only SELECT queries can be checked against the "
                                            "tables you may read");
    knut_status st = check_functions(who, conn, sql, err);
    if (st == KNUT_OK)
        st = check_config_views(s, who, conn, sql, err);
    knut_buf names = KNUT_BUF_INIT;
    size_t n = 0;
    if (st == KNUT_OK && knut_duck_table_names(conn, sql, &names, &n, err) != KNUT_OK)
        st = knut_serve__denied(who, err, "DuckDB cannot tell which tables the query reads");
    const char *name = names.data;
    for (; st == KNUT_OK && n > 0; n--, name += strlen(name) + 1) {
        char parts[MAX_PARTS][KNUT_SERVE__MAX_IDENT];
        int k = knut_serve__name_parse(name, parts);
        const char *cat = s->catalog, *sch = "main", *tbl;
        if (k < 0) {
            st = knut_serve__denied(who, err, "the table name '%.200s' cannot be checked", name);
            break;
        }
        tbl = parts[k - 1];
        if (k == 3) {
            cat = parts[0];
            sch = parts[1];
        } else if (k == 2) {
            int yes = 0;
            if ((st = is_schema(conn, parts[0], &yes, err)) != KNUT_OK)
                break;
            *(yes ? &sch : &cat) = parts[0];
        }
        /* the tables behind the Cypher views: checked by the view's name */
        if (knut_serve__cypher_internal(cat, sch, tbl))
            continue;
        if (!knut_serve__authz_table(who, cat, sch, tbl))
            st = knut_serve__denied(who, err, "'%s' may not read %s.%s.%s", who->name, cat, sch,
                                    tbl);
    }
    knut_buf_reset(&names);
    return st;
}

void knut_serve__visible_reset(knut_serve__visible *v)
{
    for (int i = 0; i < 3; i++)
        knut_buf_reset(&v->list[i]);
    v->on = 0;
}

/* Appends the fields of one row, each ended by SEP_FIELD but the last. */
static void put_key(knut_buf *b, const char *const *f, int n)
{
    for (int i = 0; i < n; i++) {
        knut_buf_puts(b, f[i]);
        knut_buf_putc(b, i + 1 < n ? SEP_FIELD : SEP_ROW);
    }
}

knut_status knut_serve__authz_visible(knut_serve__who *who, knut_duck_conn *conn,
                                      knut_serve__visible *v, knut_error *err)
{
    memset(v, 0, sizeof *v);
    if (knut_serve__authz_full(who))
        return KNUT_OK;
    v->on = 1;
    struct ArrowArrayStream rows = {0};
    knut_buf cells = KNUT_BUF_INIT;
    size_t n = 0;
    knut_status st = knut_duck_query(conn,
                                     "SELECT table_catalog, table_schema, table_name FROM "
                                     "information_schema.tables ORDER BY 1, 2, 3",
                                     &rows, err);
    if (st == KNUT_OK)
        st = knut_serve__stream_strings(&rows, &cells, &n, err);
    const char *c = cells.data;
    for (size_t i = 0; st == KNUT_OK && i + 3 <= n; i += 3) {
        const char *f[3] = {c, c + strlen(c) + 1, NULL};
        f[2] = f[1] + strlen(f[1]) + 1;
        c = f[2] + strlen(f[2]) + 1;
        if (!knut_serve__authz_table(who, f[0], f[1], f[2]))
            continue;
        put_key(&v->list[KNUT_SERVE__VIS_TABLES], f, 3);
        put_key(&v->list[KNUT_SERVE__VIS_SCHEMAS], f, 2);
        put_key(&v->list[KNUT_SERVE__VIS_CATALOGS], f, 1);
    }
    for (int i = 0; st == KNUT_OK && i < 3; i++) {
        knut_buf_putc(&v->list[i], SEP_ROW); /* never empty: a list that matches nothing */
        st = knut_buf_check(&v->list[i], err);
    }
    if (st != KNUT_OK) {
        knut_error_prefix(err, "listing what '%s' may see: ", who->name);
        knut_serve__visible_reset(v);
    }
    knut_buf_reset(&cells);
    knut_arrow_stream_release(&rows);
    return st;
}
