/*
 * The embedded store's account of skipped edge rows: which vertices the
 * first rows of an edge set named that do not exist (set->missing), read
 * from the set's staged rows in their order, only when rows were skipped.
 */
#include "store_int.h"

#include "cypher_int.h"

/* "NOT EXISTS (SELECT 1 FROM t AS x WHERE x.k = s.c ...)", or "true" when
 * the label has no table (no vertex of it can exist). */
static void not_exists(knut_buf *b, const char *table, const char *alias,
                       const knut_graph_column *keys, size_t n)
{
    if (!table) {
        knut_buf_puts(b, "true");
        return;
    }
    knut_buf_puts(b, "NOT EXISTS (SELECT 1 FROM ");
    knut_duck_ident(b, table);
    knut_buf_printf(b, " AS %s WHERE ", alias);
    for (size_t k = 0; k < n; k++) {
        knut_buf_printf(b, "%s%s.", k ? " AND " : "", alias);
        knut_duck_ident(b, keys[k].prop);
        knut_buf_puts(b, " = s.");
        knut_duck_ident(b, keys[k].column);
    }
    knut_buf_putc(b, ')');
}

knut_status knut_graph__store_edge_missing(knut_duck_conn *conn, knut_graph_set *set,
                                           const char *stage, const char *src_table,
                                           const char *dst_table, knut_error *err)
{
    knut_buf q = KNUT_BUF_INIT, a = KNUT_BUF_INIT, b = KNUT_BUF_INIT;
    knut_gs_rows rows = {0};
    size_t ns = set->n_src_keys, nd = set->n_dst_keys;
    if (ns + nd > 32)
        return KNUT_OK; /* (mutation keys are few; nothing to name then) */
    not_exists(&a, src_table, "a", set->src_keys, ns);
    not_exists(&b, dst_table, "b", set->dst_keys, nd);
    knut_buf_printf(&q, "SELECT (%s)::INTEGER, (%s)::INTEGER", a.data ? a.data : "true",
                    b.data ? b.data : "true");
    for (size_t g = 0; g < 2; g++) {
        const knut_graph_column *keys = g ? set->dst_keys : set->src_keys;
        for (size_t k = 0; k < (g ? nd : ns); k++) {
            knut_buf_puts(&q, ", s.");
            knut_duck_ident(&q, keys[k].column);
            knut_buf_puts(&q, "::VARCHAR");
        }
    }
    knut_buf_puts(&q, " FROM ");
    knut_duck_ident(&q, stage);
    knut_buf_printf(&q, " AS s WHERE (%s) OR (%s) ORDER BY s.rowid LIMIT %d",
                    a.data ? a.data : "true", b.data ? b.data : "true",
                    KNUT_GRAPH__MISSING_ROWS);
    knut_status st = knut_buf_check(&a, err);
    if (st == KNUT_OK)
        st = knut_buf_check(&b, err);
    if (st == KNUT_OK)
        st = knut_buf_check(&q, err);
    if (st == KNUT_OK)
        st = knut_graph__store_rows(conn, q.data, NULL, 0, &rows, err);
    for (size_t r = 0; st == KNUT_OK && r < rows.n_rows; r++) {
        const char *vals[32];
        for (size_t k = 0; k < ns + nd; k++)
            vals[k] = knut_gs__cell(&rows, r, 2 + k);
        const char *fa = knut_gs__cell(&rows, r, 0), *fb = knut_gs__cell(&rows, r, 1);
        knut_graph__missing_add(set, fa && fa[0] == '1', fb && fb[0] == '1', vals, vals + ns);
    }
    knut_graph__store_rows_reset(&rows);
    knut_buf_reset(&q);
    knut_buf_reset(&a);
    knut_buf_reset(&b);
    return st;
}
