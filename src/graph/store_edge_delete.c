/*
 * Edge deletes in the embedded store: the rows of an edge delete set,
 * staged as a temp table, name edges by the keys of both endpoints (and
 * optionally the edge keys). One DELETE ... USING finds the endpoint
 * vertex ids through the label tables, exactly as the edge upsert does,
 * and removes the matching rows of the type's edge table; the endpoint
 * vertices stay. A type, label or key column the store does not have
 * means no stored edge can match, so the set deletes nothing.
 */
#include <stdlib.h>

#include "store_int.h"

/* The table of `name` (kind 'v' or 'e') if it has every column in cols,
 * else *out NULL. */
static knut_status table_with(knut_graph_store *s, char kind, const char *name,
                              const knut_graph_column *cols, size_t n, char **out,
                              knut_error *err)
{
    knut_status st = knut_graph__store_catalog_get(s, kind, name, out, NULL, err);
    for (size_t k = 0; k < n && st == KNUT_OK && *out; k++) {
        char *type = NULL;
        st = knut_graph__store_column_type(s->conn, *out, cols[k].prop, &type, err);
        if (st == KNUT_OK && !type) {
            free(*out);
            *out = NULL;
        }
        free(type);
    }
    return st;
}

/* "a."k" = s."c" AND ..." joining a vertex table to the staged rows. */
static void join_on(knut_buf *b, const char *alias, const knut_graph_column *cols, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        knut_buf_printf(b, "%s%s.", k ? " AND " : "", alias);
        knut_duck_ident(b, cols[k].prop);
        knut_buf_puts(b, " = s.");
        knut_duck_ident(b, cols[k].column);
    }
}

knut_status knut_graph__store_edge_delete_sql(knut_graph_store *s, const knut_graph_set *set,
                                              const char *stage, knut_buf *out, knut_error *err)
{
    char *table = NULL, *src = NULL, *dst = NULL;
    knut_status st = table_with(s, 'e', set->type, set->keys, set->n_keys, &table, err);
    if (st == KNUT_OK && table)
        st = table_with(s, 'v', set->src_label, set->src_keys, set->n_src_keys, &src, err);
    if (st == KNUT_OK && src)
        st = table_with(s, 'v', set->dst_label, set->dst_keys, set->n_dst_keys, &dst, err);
    if (st != KNUT_OK || !dst)
        goto cleanup;
    /* DISTINCT: a row named twice must not make DuckDB see one edge twice. */
    knut_buf_puts(out, "DELETE FROM ");
    knut_duck_ident(out, table);
    knut_buf_puts(out, " AS e USING (SELECT DISTINCT a.\"" KNUT_GS_VID "\" AS \"_knut_s\", b.\""
                       KNUT_GS_VID "\" AS \"_knut_d\"");
    for (size_t k = 0; k < set->n_keys; k++) {
        knut_buf_puts(out, ", s.");
        knut_duck_ident(out, set->keys[k].column);
        knut_buf_printf(out, " AS \"_knut_k%zu\"", k);
    }
    knut_buf_puts(out, " FROM ");
    knut_duck_ident(out, stage);
    knut_buf_puts(out, " AS s JOIN ");
    knut_duck_ident(out, src);
    knut_buf_puts(out, " AS a ON ");
    join_on(out, "a", set->src_keys, set->n_src_keys);
    knut_buf_puts(out, " JOIN ");
    knut_duck_ident(out, dst);
    knut_buf_puts(out, " AS b ON ");
    join_on(out, "b", set->dst_keys, set->n_dst_keys);
    knut_buf_puts(out, ") AS d WHERE e.\"" KNUT_GS_SRC "\" = d.\"_knut_s\" AND e.\"" KNUT_GS_DST
                       "\" = d.\"_knut_d\" AND e.\"" KNUT_GS_SRC_LABEL "\" = $1 AND e.\""
                       KNUT_GS_DST_LABEL "\" = $2");
    for (size_t k = 0; k < set->n_keys; k++) {
        knut_buf_puts(out, " AND e.");
        knut_duck_ident(out, set->keys[k].prop);
        knut_buf_printf(out, " = d.\"_knut_k%zu\"", k);
    }
    st = knut_buf_check(out, err);
cleanup:
    free(table);
    free(src);
    free(dst);
    return st;
}
