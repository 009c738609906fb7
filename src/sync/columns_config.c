/*
 * Declared schemas, the config side: `columns:` is read when the config
 * loads, each type checked by DuckDB itself (a throwaway in-memory engine
 * prints the type back under its own name: INT is INTEGER), and when sync
 * opens, checked against what the sink can store (columns.c reads the
 * files with them). Type text reaches SQL only after a character check
 * (letters, digits, '_', ' ', ',', balanced brackets), so it cannot end
 * the cast it is put in.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sync_int.h"

#define CONF(n) ((const knut_conf *)(n))

/* The longest type text accepted, and the most columns one table declares. */
#define COLUMNS_TYPE_MAX 256
#define COLUMNS_MAX SYNC_COLUMNS_MAX

/* Characters a DuckDB type name is written with (INTEGER, DECIMAL(10,2),
 * VARCHAR[], STRUCT(a INTEGER), TIMESTAMP WITH TIME ZONE), and balanced
 * brackets: nothing that could end the cast it is put in. */
int knut_sync__type_text_ok(const char *s)
{
    int depth = 0;
    size_t n = strlen(s);
    if (n == 0 || n > COLUMNS_TYPE_MAX)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (ch == '(' || ch == '[')
            depth++;
        else if (ch == ')' || ch == ']')
            depth--;
        else if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                   (ch >= '0' && ch <= '9') || ch == '_' || ch == ' ' || ch == ','))
            return 0;
        if (depth < 0)
            return 0;
    }
    return depth == 0;
}

/* DuckDB's name of type text (*out owned), or its error. */
static knut_status type_canon(knut_duck_conn *c, const char *text, char **out, knut_error *err)
{
    knut_buf q = KNUT_BUF_INIT;
    sync_names r = {0};
    *out = NULL;
    knut_buf_printf(&q, "SELECT typeof(CAST(NULL AS %s))", text);
    knut_status st = knut_buf_check(&q, err);
    if (st == KNUT_OK)
        st = knut_sync__q_names(c, q.data, NULL, &r, err);
    if (st == KNUT_OK && (r.n != 1 || !knut_sync__type_text_ok(r.names[0])))
        st = knut_error_set(err, KNUT_EINVAL, "not a column type");
    if (st == KNUT_OK) {
        *out = r.names[0];
        r.names[0] = NULL;
    }
    knut_sync__names_reset(&r);
    knut_buf_reset(&q);
    return st;
}

knut_status knut_sync__columns_parse(const knut_conf *n, const char *table, knut_sync_table *t,
                                     knut_error *err)
{
    const knut_conf *m = knut_conf_get(n, "columns");
    knut_duck_db *db = NULL;
    knut_duck_conn *c = NULL;
    knut_status st = KNUT_OK;
    if (!m)
        return KNUT_OK;
    size_t len = knut_conf_len(m);
    if (knut_conf_kind_of(m) != KNUT_CONF_MAP || len == 0 || len > COLUMNS_MAX)
        return knut_error_set_at(err, KNUT_EINVAL, knut_conf_file(m), knut_conf_line(m),
                                 knut_conf_col(m),
                                 "table '%s': 'columns' must be a map of 1 to %d column: type "
                                 "(DuckDB type names: {id: BIGINT, born: DATE})",
                                 table, COLUMNS_MAX);
    if (!(t->columns = calloc(len, sizeof *t->columns)))
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    /* a throwaway engine: DuckDB itself says what a type name means */
    st = knut_duck_db_open(&db, NULL, NULL, 0, err);
    if (st == KNUT_OK)
        st = knut_duck_conn_open(&c, db, err);
    for (size_t i = 0; st == KNUT_OK && i < len; i++) {
        const knut_conf *v = knut_conf_at(m, i);
        const char *name = knut_conf_key_at(m, i), *text = knut_conf_str(v);
        knut_sync_column *col = &t->columns[t->n_columns];
        if (knut_sync__column_find(t, name)) { /* DuckDB's names ignore case */
            st = knut_error_set_at(err, KNUT_EINVAL, knut_conf_file(v), knut_conf_line(v),
                                   knut_conf_col(v), "table '%s': column '%s' is declared twice",
                                   table, name);
            break;
        }
        if (!name[0] || !text || !knut_sync__type_text_ok(text) ||
            type_canon(c, text, &col->type, err) != KNUT_OK) {
            knut_duck_error_trim(err);
            char why[256];
            const char *msg = err && err->message[0] && text && knut_sync__type_text_ok(text)
                                  ? err->message : "not a type name";
            if (strncmp(msg, "preparing statement: ", 21) == 0)
                msg += 21;
            snprintf(why, sizeof why, "%.200s", msg);
            st = knut_error_set_at(err, KNUT_EINVAL, knut_conf_file(v), knut_conf_line(v),
                                   knut_conf_col(v),
                                   "table '%s': column '%s': '%s' is not a DuckDB type (%s)",
                                   table, name, text ? text : "", why);
            break;
        }
        col->name = name;
        col->node = v;
        t->n_columns++;
    }
    knut_duck_conn_close(c);
    knut_duck_db_close(db);
    return st;
}

void knut_sync__columns_free(knut_sync_table *t)
{
    for (size_t i = 0; i < t->n_columns; i++)
        free(t->columns[i].type);
    free(t->columns);
    t->columns = NULL;
    t->n_columns = 0;
}

const knut_sync_column *knut_sync__column_find(const knut_sync_table *t, const char *name)
{
    for (size_t i = 0; i < t->n_columns; i++)
        if (strcasecmp(t->columns[i].name, name) == 0)
            return &t->columns[i];
    return NULL;
}

static int prop_is(const knut_sync_prop *p, size_t n, const char *col)
{
    for (size_t i = 0; i < n; i++)
        if (strcasecmp(p[i].column, col) == 0)
            return 1;
    return 0;
}

/* 1 when col is a key column of one of t's steps (a vertex key, an
 * endpoint key, a foreign-key column). */
static int key_column(const knut_sync_table *t, const char *col)
{
    for (size_t i = 0; i < t->n_vertices; i++)
        if (prop_is(t->vertices[i].keys, t->vertices[i].n_keys, col))
            return 1;
    for (size_t i = 0; i < t->n_edges; i++)
        if (prop_is(t->edges[i].from.keys, t->edges[i].from.n_keys, col) ||
            prop_is(t->edges[i].to.keys, t->edges[i].to.n_keys, col))
            return 1;
    for (size_t i = 0; i < t->n_fk_edges; i++)
        if (strcasecmp(t->fk_edges[i].column, col) == 0)
            return 1;
    return 0;
}

/* One declared column against the sink, through the Arrow type DuckDB
 * gives the type (what a staged file of it would have). */
static knut_status column_sink_check(knut_duck_conn *c, const knut_sync_table *t,
                                     const knut_sync_column *col, int falkordb, knut_error *err)
{
    knut_buf q = KNUT_BUF_INIT;
    struct ArrowArrayStream s = {0};
    struct ArrowSchema schema = {0};
    knut_buf_printf(&q, "SELECT CAST(NULL AS %s) AS c", col->type);
    knut_status st = knut_buf_check(&q, err);
    if (st == KNUT_OK)
        st = knut_duck_query(c, q.data, &s, err);
    if (st == KNUT_OK && s.get_schema(&s, &schema) != 0)
        st = knut_error_set(err, KNUT_EIO, "%s", s.get_last_error(&s));
    if (st == KNUT_OK && schema.n_children == 1 &&
        knut_graph_column_type_check(schema.children[0], key_column(t, col->name), falkordb,
                                     err) != KNUT_OK) {
        char why[320];
        snprintf(why, sizeof why, "%.300s", err->message);
        const knut_conf *n = CONF(col->node);
        st = knut_error_set_at(err, KNUT_EINVAL, knut_conf_file(n), knut_conf_line(n),
                               knut_conf_col(n),
                               "table '%s': column '%s' is declared %s, which the %s sink "
                               "cannot store: %s",
                               t->name, col->name, col->type, falkordb ? "FalkorDB" : "embedded",
                               why);
    }
    knut_arrow_schema_release(&schema);
    knut_arrow_stream_release(&s);
    knut_buf_reset(&q);
    return st;
}

knut_status knut_sync__columns_sink_check(const knut_sync_config *cfg, int falkordb,
                                          knut_error *err)
{
    knut_duck_db *db = NULL;
    knut_duck_conn *c = NULL;
    knut_status st = KNUT_OK;
    for (size_t i = 0; st == KNUT_OK && i < cfg->n_tables; i++) {
        const knut_sync_table *t = &cfg->tables[i];
        /* with an sql step the mapped columns are its result, not the
         * files': its types are judged per file, as without columns: */
        if (!t->n_columns || t->sql)
            continue;
        if (!c && ((st = knut_duck_db_open(&db, NULL, NULL, 0, err)) != KNUT_OK ||
                   (st = knut_duck_conn_open(&c, db, err)) != KNUT_OK))
            break;
        for (size_t k = 0; st == KNUT_OK && k < t->n_columns; k++)
            st = column_sink_check(c, t, &t->columns[k], falkordb, err);
    }
    knut_duck_conn_close(c);
    knut_duck_db_close(db);
    return st;
}
