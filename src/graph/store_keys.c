/*
 * Key listing of the embedded store (knut_graph_sink_vertex_keys /
 * _edge_keys): one SELECT over a label table, or over an edge table joined
 * to its endpoint label tables, handed out as one stream. Labels, types
 * and key columns the store does not have list nothing: no stored element
 * can then match the scan.
 */
#include <stdlib.h>

#include "store_int.h"

/* The label's table if it has every key column, else *out NULL. */
static knut_status keyed_table(knut_graph_store *s, const char *label, const char *const *keys,
                               size_t n, char **out, knut_error *err)
{
    knut_status st = knut_graph__store_catalog_get(s, 'v', label, out, NULL, err);
    for (size_t k = 0; k < n && st == KNUT_OK && *out; k++) {
        char *type = NULL;
        st = knut_graph__store_column_type(s->conn, *out, keys[k], &type, err);
        if (st == KNUT_OK && !type) {
            free(*out);
            *out = NULL;
        }
        free(type);
    }
    return st;
}

static void select_keys(knut_buf *b, const char *alias, const char *const *keys, size_t n,
                        const char *prefix)
{
    for (size_t k = 0; k < n; k++) {
        knut_buf_printf(b, ", %s.", alias);
        knut_duck_ident(b, keys[k]);
        if (prefix)
            knut_buf_printf(b, " AS \"%s%zu\"", prefix, k);
    }
}

static knut_status vertex_keys(knut_graph_store *s, const knut_graph_key_scan *scan,
                               knut_buf *sql, char **table, knut_error *err)
{
    knut_status st = keyed_table(s, scan->label, scan->keys, scan->n_keys, table, err);
    if (st != KNUT_OK || !*table)
        return st;
    knut_buf_puts(sql, "SELECT v.\"" KNUT_GS_VID "\"::BIGINT AS \"_knut_id\"");
    select_keys(sql, "v", scan->keys, scan->n_keys, NULL);
    knut_buf_puts(sql, " FROM ");
    knut_duck_ident(sql, *table);
    knut_buf_puts(sql, " AS v");
    return knut_buf_check(sql, err);
}

/* Edges of the type between the two labels; the endpoint labels travel as
 * binds $1, $2. */
static knut_status edge_keys(knut_graph_store *s, const knut_graph_key_scan *scan,
                             knut_buf *sql, char **table, knut_error *err)
{
    char *src = NULL, *dst = NULL;
    knut_status st = knut_graph__store_catalog_get(s, 'e', scan->type, table, NULL, err);
    if (st == KNUT_OK && *table)
        st = keyed_table(s, scan->src.label, scan->src.keys, scan->src.n_keys, &src, err);
    if (st == KNUT_OK && src)
        st = keyed_table(s, scan->dst.label, scan->dst.keys, scan->dst.n_keys, &dst, err);
    if (st != KNUT_OK || !dst) {
        free(*table);
        *table = NULL;
        goto cleanup;
    }
    knut_buf_puts(sql, "SELECT e.rowid::BIGINT AS \"_knut_id\"");
    select_keys(sql, "a", scan->src.keys, scan->src.n_keys, "_knut_s");
    select_keys(sql, "b", scan->dst.keys, scan->dst.n_keys, "_knut_d");
    knut_buf_puts(sql, " FROM ");
    knut_duck_ident(sql, *table);
    knut_buf_puts(sql, " AS e JOIN ");
    knut_duck_ident(sql, src);
    knut_buf_puts(sql, " AS a ON a.\"" KNUT_GS_VID "\" = e.\"" KNUT_GS_SRC "\" JOIN ");
    knut_duck_ident(sql, dst);
    knut_buf_puts(sql, " AS b ON b.\"" KNUT_GS_VID "\" = e.\"" KNUT_GS_DST "\" WHERE e.\""
                       KNUT_GS_SRC_LABEL "\" = $1 AND e.\"" KNUT_GS_DST_LABEL "\" = $2");
    st = knut_buf_check(sql, err);
cleanup:
    free(src);
    free(dst);
    return st;
}

knut_status knut_graph__store_keys(knut_graph_sink *sink, const knut_graph_key_scan *scan,
                                   knut_graph_sink_keys_fn fn, void *ctx, knut_error *err)
{
    knut_graph_store *s = (knut_graph_store *)sink;
    knut_buf sql = KNUT_BUF_INIT;
    char *table = NULL;
    struct ArrowArrayStream rows = {0};
    const char *binds[2] = {scan->src.label, scan->dst.label};
    knut_status st = scan->type ? edge_keys(s, scan, &sql, &table, err)
                                : vertex_keys(s, scan, &sql, &table, err);
    if (st == KNUT_OK && table)
        st = knut_graph__store_query(s->conn, sql.data, binds, scan->type ? 2 : 0, &rows, err);
    if (st == KNUT_OK && table)
        st = fn(ctx, &rows, err); /* fn owns rows now */
    if (st != KNUT_OK)
        knut_error_prefix(err, "graph store: %s '%s': ", scan->type ? "edge type" : "label",
                          scan->type ? scan->type : scan->label);
    free(table);
    knut_buf_reset(&sql);
    return st;
}
