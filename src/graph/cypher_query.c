/*
 * Query texts and parameter blocks for the sets of a mutation. The query
 * text is built from the set's shape alone (labels, type, key and property
 * names, their conversions), so every batch of a set hits FalkorDB's plan
 * cache (keyed on the text after the parameter block); the rows travel in
 * `CYPHER rows=[...]` as
 *   vertex: {k:[keys...], p:{`prop`: v, ...}, t:[temporal props...]}
 *   edge:   {s:[src keys], d:[dst keys], k:[edge keys], p:{...}, t:[...]}
 *   delete: {k:[keys...]}
 *   edge delete: {s:[src keys], d:[dst keys], k:[edge keys]}
 * Keys and temporal values are positional (the query indexes them), plain
 * properties a map so `SET x += r.p` applies them in one step. p and t are
 * left out when the set has no such properties, as are empty clauses.
 */
#include <inttypes.h>
#include <string.h>

#include "cypher_int.h"

/* ---- query text -------------------------------------------------------- */

static int conv_is_plain(knut_graph_conv c)
{
    return c == KNUT_GRAPH_CONV_NONE;
}

/* The expression that turns r.<list>[idx] into the stored value. */
static void put_conv(knut_buf *out, knut_graph_conv conv, const char *list, size_t idx)
{
    static const char *const fn[] = {"", "date", "localdatetime", "localtime",
                                     "date", "localdatetime", "localtime"};
    switch (conv) {
    case KNUT_GRAPH_CONV_NONE:
        knut_buf_printf(out, "r.%s[%zu]", list, idx);
        break;
    case KNUT_GRAPH_CONV_DATE:
    case KNUT_GRAPH_CONV_LOCALDATETIME:
    case KNUT_GRAPH_CONV_LOCALTIME:
        knut_buf_printf(out, "%s(r.%s[%zu])", fn[conv], list, idx);
        break;
    default:
        knut_buf_printf(out, "[x IN r.%s[%zu] | %s(x)]", list, idx, fn[conv]);
        break;
    }
}

/* {`k1`: r.k[0], `k2`: date(r.k[1])} */
static knut_status put_key_pattern(knut_buf *out, const knut_graph_column *cols, size_t n,
                                   const char *list, knut_error *err)
{
    knut_buf_putc(out, '{');
    for (size_t i = 0; i < n; i++) {
        if (i > 0)
            knut_buf_puts(out, ", ");
        knut_status st = knut_graph_cypher_ident(out, cols[i].prop, strlen(cols[i].prop),
                                                 "property", err);
        if (st != KNUT_OK)
            return st;
        knut_buf_puts(out, ": ");
        put_conv(out, cols[i].conv, list, i);
    }
    return knut_buf_putc(out, '}');
}

/* SET v += r.p and SET v.`d` = date(r.t[0]), ... for the set's properties. */
static knut_status put_prop_sets(knut_buf *out, const knut_graph_set *set, const char *var,
                                 knut_error *err)
{
    size_t n_plain = 0, n_conv = 0;
    for (size_t i = 0; i < set->n_props; i++) {
        if (conv_is_plain(set->props[i].conv))
            n_plain++;
    }
    if (n_plain > 0)
        knut_buf_printf(out, " SET %s += r.p", var);
    for (size_t i = 0; i < set->n_props; i++) {
        const knut_graph_column *c = &set->props[i];
        if (conv_is_plain(c->conv))
            continue;
        knut_buf_printf(out, n_conv == 0 ? " SET %s." : ", %s.", var);
        knut_status st = knut_graph_cypher_ident(out, c->prop, strlen(c->prop), "property", err);
        if (st != KNUT_OK)
            return st;
        knut_buf_puts(out, " = ");
        put_conv(out, c->conv, "t", n_conv++);
    }
    return knut_buf_check(out, err);
}

static knut_status put_label(knut_buf *out, const char *label, const char *what, knut_error *err)
{
    knut_buf_putc(out, ':');
    return knut_graph_cypher_ident(out, label, strlen(label), what, err);
}

/* "(var:`L` {k: r.list[0], ...}" : a node pattern, its closing paren left
 * to the caller (a MATCH may go on with a relationship). */
static knut_status put_node(knut_buf *out, const char *var, const char *label, const char *what,
                            const knut_graph_column *keys, size_t n_keys, const char *list,
                            knut_error *err)
{
    knut_buf_printf(out, "(%s", var);
    knut_status st = put_label(out, label, what, err);
    if (st != KNUT_OK)
        return st;
    knut_buf_putc(out, ' ');
    return put_key_pattern(out, keys, n_keys, list, err);
}

knut_status knut_graph__cypher_rel(knut_buf *out, const char *var, const char *type,
                                   const char *what, const knut_graph_column *keys,
                                   size_t n_keys, const char *list, knut_error *err)
{
    knut_buf_printf(out, "-[%s", var);
    knut_status st = put_label(out, type, what, err);
    if (st == KNUT_OK && n_keys > 0) {
        knut_buf_putc(out, ' ');
        st = put_key_pattern(out, keys, n_keys, list, err);
    }
    if (st == KNUT_OK)
        knut_buf_puts(out, "]->");
    return st;
}

/* "(a:`Src` {...}" or "(b:`Dst` {...}": an edge set's endpoint, unclosed. */
static knut_status put_endpoint(knut_buf *out, const knut_graph_set *set, int dst,
                                knut_error *err)
{
    return dst ? put_node(out, "b", set->dst_label, "destination label", set->dst_keys,
                          set->n_dst_keys, "d", err)
               : put_node(out, "a", set->src_label, "source label", set->src_keys,
                          set->n_src_keys, "s", err);
}

/* One MATCH over the whole pattern: the endpoints are found through their
 * indexes, and only the edge itself is deleted (never a vertex). A row
 * whose pattern matches nothing deletes nothing. */
static knut_status edge_delete_text(knut_buf *out, const knut_graph_set *set, knut_error *err)
{
    knut_status st;
    knut_buf_puts(out, "MATCH ");
    if ((st = put_endpoint(out, set, 0, err)) != KNUT_OK)
        return st;
    knut_buf_putc(out, ')');
    if ((st = knut_graph__cypher_rel(out, "e", set->type, "relationship type", set->keys,
                                     set->n_keys, "k", err)) != KNUT_OK)
        return st;
    if ((st = put_endpoint(out, set, 1, err)) != KNUT_OK)
        return st;
    knut_buf_puts(out, ") DELETE e");
    return knut_buf_check(out, err);
}

knut_status knut_graph__cypher_missing_query(knut_buf *out, const knut_graph_set *set,
                                            knut_error *err)
{
    knut_status st;
    KNUT_ASSERT_ARG(err, set->kind == KNUT_GRAPH_SET_EDGE);
    knut_buf_puts(out, "UNWIND $rows AS r OPTIONAL MATCH ");
    if ((st = put_endpoint(out, set, 0, err)) != KNUT_OK)
        return st;
    knut_buf_puts(out, ") WITH r, a OPTIONAL MATCH ");
    if ((st = put_endpoint(out, set, 1, err)) != KNUT_OK)
        return st;
    knut_buf_puts(out, ") WITH r, a, b WHERE a IS NULL OR b IS NULL RETURN "
                       "CASE WHEN a IS NULL THEN 1 ELSE 0 END, "
                       "CASE WHEN b IS NULL THEN 1 ELSE 0 END");
    for (size_t k = 0; k < set->n_src_keys; k++)
        knut_buf_printf(out, ", toString(r.s[%zu])", k);
    for (size_t k = 0; k < set->n_dst_keys; k++)
        knut_buf_printf(out, ", toString(r.d[%zu])", k);
    knut_buf_printf(out, " LIMIT %d", KNUT_GRAPH__MISSING_ROWS);
    return knut_buf_check(out, err);
}

static knut_status query_text(knut_buf *out, const knut_graph_set *set, knut_error *err)
{
    knut_status st;
    knut_buf_puts(out, "UNWIND $rows AS r ");
    switch (set->kind) {
    case KNUT_GRAPH_SET_VERTEX:
        knut_buf_puts(out, "MERGE ");
        if ((st = put_node(out, "n", set->labels[0], "label", set->keys, set->n_keys, "k",
                           err)) != KNUT_OK)
            return st;
        knut_buf_putc(out, ')');
        /* MERGE on the first label only, then add the others: a MERGE on
         * all labels would duplicate a vertex that has just some of them. */
        if (set->n_labels > 1) {
            knut_buf_puts(out, " SET n");
            for (size_t i = 1; i < set->n_labels; i++) {
                if ((st = put_label(out, set->labels[i], "label", err)) != KNUT_OK)
                    return st;
            }
        }
        return put_prop_sets(out, set, "n", err);
    case KNUT_GRAPH_SET_EDGE:
        knut_buf_puts(out, "MATCH ");
        if ((st = put_endpoint(out, set, 0, err)) != KNUT_OK)
            return st;
        knut_buf_puts(out, ") MATCH ");
        if ((st = put_endpoint(out, set, 1, err)) != KNUT_OK)
            return st;
        knut_buf_puts(out, ") MERGE (a)");
        if ((st = knut_graph__cypher_rel(out, "e", set->type, "relationship type", set->keys,
                                         set->n_keys, "k", err)) != KNUT_OK)
            return st;
        knut_buf_puts(out, "(b)");
        return put_prop_sets(out, set, "e", err);
    case KNUT_GRAPH_SET_DELETE:
        knut_buf_puts(out, "MATCH ");
        if ((st = put_node(out, "n", set->labels[0], "label", set->keys, set->n_keys, "k",
                           err)) != KNUT_OK)
            return st;
        knut_buf_puts(out, ") DETACH DELETE n");
        return knut_buf_check(out, err);
    case KNUT_GRAPH_SET_EDGE_DELETE:
        return edge_delete_text(out, set, err);
    }
    return knut_error_set(err, KNUT_EINVAL, "unknown set kind %d", (int)set->kind);
}

static void buf_truncate(knut_buf *b, size_t len)
{
    b->error = KNUT_OK;
    if (b->data != NULL) {
        b->len = len;
        b->data[len] = '\0';
    }
}

knut_status knut_graph_cypher_query(knut_buf *out, const knut_graph_set *set, knut_error *err)
{
    KNUT_ASSERT_ARG(err, out != NULL && set != NULL);
    if (out->error != KNUT_OK)
        return knut_buf_check(out, err);
    size_t mark = out->len;
    knut_status st = query_text(out, set, err);
    if (st == KNUT_OK)
        st = knut_buf_check(out, err);
    if (st != KNUT_OK)
        buf_truncate(out, mark);
    return st;
}

/* ---- parameter rows ---------------------------------------------------- */

typedef struct row_ctx {
    const knut_graph_set *set;
    const knut_arrow_view *batch;
    knut_graph_cypher_loc loc;
    const int64_t *rows; /* subset rendering: batch rows to render, or NULL */
    const int64_t *ids;  /* with rows: FalkorDB node ids (the `i` field), or NULL */
} row_ctx;

static knut_status put_key_list(knut_buf *out, row_ctx *c, const char *list,
                                const knut_graph_column *cols, size_t n, const char *role,
                                int64_t i, knut_error *err)
{
    /* a batch may be a slice: its columns are read at the struct's offset */
    int64_t row = knut_arrow_view_child_row(c->batch, i);
    knut_buf_printf(out, "%s:[", list);
    for (size_t k = 0; k < n; k++) {
        const knut_arrow_view *v = &c->batch->children[cols[k].index];
        c->loc.column = cols[k].column;
        if (k > 0)
            knut_buf_putc(out, ',');
        if (knut_arrow_view_is_null(v, row)) {
            char set[KNUT_GRAPH__MSG_NAME_MAX], col[KNUT_GRAPH__MSG_NAME_MAX];
            return knut_error_set(
                err, KNUT_EINVAL,
                "set '%s': row %" PRId64 ", column '%s': %s key is null (FalkorDB cannot "
                "MERGE or MATCH on a null key)",
                knut_graph__msg_name(set, sizeof(set), c->set->name, strlen(c->set->name)),
                c->loc.row,
                knut_graph__msg_name(col, sizeof(col), cols[k].column, strlen(cols[k].column)),
                role);
        }
        knut_status st = knut_graph__value(out, v, row, &c->loc, 0, err);
        if (st != KNUT_OK)
            return st;
    }
    return knut_buf_putc(out, ']');
}

static knut_status put_props(knut_buf *out, row_ctx *c, int64_t i, knut_error *err)
{
    const knut_graph_set *set = c->set;
    int64_t row = knut_arrow_view_child_row(c->batch, i);
    size_t n_plain = 0, n_conv = 0;
    for (size_t k = 0; k < set->n_props; k++) {
        if (!conv_is_plain(set->props[k].conv))
            continue;
        const knut_graph_column *col = &set->props[k];
        knut_buf_puts(out, n_plain++ == 0 ? ",p:{`" : ",`");
        knut_buf_puts(out, col->prop);
        knut_buf_puts(out, "`:");
        c->loc.column = col->column;
        knut_status st = knut_graph__value(out, &c->batch->children[col->index], row, &c->loc,
                                           KNUT_GRAPH__STORABLE, err);
        if (st != KNUT_OK)
            return st;
    }
    if (n_plain > 0)
        knut_buf_putc(out, '}');
    for (size_t k = 0; k < set->n_props; k++) {
        if (conv_is_plain(set->props[k].conv))
            continue;
        const knut_graph_column *col = &set->props[k];
        knut_buf_puts(out, n_conv++ == 0 ? ",t:[" : ",");
        c->loc.column = col->column;
        knut_status st = knut_graph__value(out, &c->batch->children[col->index], row, &c->loc,
                                           KNUT_GRAPH__STORABLE, err);
        if (st != KNUT_OK)
            return st;
    }
    if (n_conv > 0)
        knut_buf_putc(out, ']');
    return KNUT_OK;
}

static knut_status put_row(knut_buf *out, row_ctx *c, int64_t i, int64_t id, knut_error *err)
{
    const knut_graph_set *set = c->set;
    knut_status st;
    knut_buf_putc(out, '{');
    if (id >= 0)
        knut_buf_printf(out, "i:%" PRId64 ",", id);
    switch (set->kind) {
    case KNUT_GRAPH_SET_VERTEX:
    case KNUT_GRAPH_SET_DELETE:
        st = put_key_list(out, c, "k", set->keys, set->n_keys, "vertex", i, err);
        break;
    case KNUT_GRAPH_SET_EDGE:
    case KNUT_GRAPH_SET_EDGE_DELETE:
        st = put_key_list(out, c, "s", set->src_keys, set->n_src_keys, "source", i, err);
        if (st == KNUT_OK) {
            knut_buf_putc(out, ',');
            st = put_key_list(out, c, "d", set->dst_keys, set->n_dst_keys, "destination", i,
                              err);
        }
        if (st == KNUT_OK && set->n_keys > 0) {
            knut_buf_putc(out, ',');
            st = put_key_list(out, c, "k", set->keys, set->n_keys, "edge", i, err);
        }
        break;
    default:
        return knut_error_set(err, KNUT_EINVAL, "unknown set kind %d", (int)set->kind);
    }
    if (st == KNUT_OK && set->kind != KNUT_GRAPH_SET_DELETE &&
        set->kind != KNUT_GRAPH_SET_EDGE_DELETE)
        st = put_props(out, c, i, err);
    if (st != KNUT_OK)
        return st;
    return knut_buf_putc(out, '}');
}

/* The widest child index the set reads, so a mismatched batch is caught
 * before any child view is touched. */
static int64_t max_index(const knut_graph_set *set)
{
    int64_t m = -1;
    const knut_graph_column *lists[] = {set->keys, set->src_keys, set->dst_keys, set->props};
    size_t ns[] = {set->n_keys, set->n_src_keys, set->n_dst_keys, set->n_props};
    for (size_t l = 0; l < 4; l++)
        for (size_t k = 0; k < ns[l]; k++)
            if (lists[l][k].index > m)
                m = lists[l][k].index;
    return m;
}

static knut_status params_rows(knut_buf *out, const knut_graph_set *set,
                               const knut_arrow_view *batch, const int64_t *rows,
                               const int64_t *ids, int64_t from, int64_t to, int64_t row_base,
                               size_t budget, size_t tail, int64_t *n_rows, knut_error *err);

/* Parameter block with room for `tail` more bytes inside the budget. */
static knut_status params(knut_buf *out, const knut_graph_set *set, const knut_arrow_view *batch,
                          int64_t from, int64_t to, int64_t row_base, size_t budget, size_t tail,
                          int64_t *n_rows, knut_error *err)
{
    return params_rows(out, set, batch, NULL, NULL, from, to, row_base, budget, tail, n_rows,
                       err);
}

/* params over rows[from..to) of the batch when rows is not NULL (each with
 * the node id ids[j] when ids is not NULL), else over batch rows from..to. */
static knut_status params_rows(knut_buf *out, const knut_graph_set *set,
                               const knut_arrow_view *batch, const int64_t *rows,
                               const int64_t *ids, int64_t from, int64_t to, int64_t row_base,
                               size_t budget, size_t tail, int64_t *n_rows, knut_error *err)
{
    size_t start = out->len;
    row_ctx c = {set, batch, {set->name, NULL, 0}, rows, ids};
    int64_t j, i = from;
    *n_rows = 0;
    knut_buf_puts(out, "CYPHER rows=[");
    for (j = from; j < to; j++) {
        size_t before = out->len;
        i = rows ? rows[j] : j;
        if (j > from)
            knut_buf_putc(out, ',');
        c.loc.row = row_base + i;
        knut_status st = put_row(out, &c, i, rows && ids ? ids[j] : -1, err);
        if (out->error == KNUT_ENOMEM) {
            buf_truncate(out, start);
            return knut_error_set(err, KNUT_ENOMEM, "set: out of memory rendering row %" PRId64,
                                  row_base + i);
        }
        if (out->error == KNUT_OK && st != KNUT_OK) {
            buf_truncate(out, start);
            return st;
        }
        /* The row did not fit the buffer's own cap or the budget. */
        if (out->error != KNUT_OK || (budget > 0 && out->len - start + 2 + tail > budget)) {
            size_t need = out->error != KNUT_OK ? 0 : out->len - start + 2 + tail;
            buf_truncate(out, before);
            if (j > from)
                break;
            buf_truncate(out, start);
            char name[KNUT_GRAPH__MSG_NAME_MAX];
            knut_graph__msg_name(name, sizeof(name), set->name, strlen(set->name));
            if (need == 0)
                return knut_error_set(err, KNUT_ETOOBIG,
                                      "set '%s': row %" PRId64 " does not fit the output "
                                      "buffer's size limit",
                                      name, row_base + i);
            return knut_error_set(err, KNUT_ETOOBIG,
                                  "set '%s': row %" PRId64 " alone needs %zu bytes, over the "
                                  "%zu-byte budget",
                                  name, row_base + i, need, budget);
        }
    }
    knut_buf_puts(out, "] ");
    if (out->error != KNUT_OK) {
        knut_status st = knut_buf_check(out, err);
        buf_truncate(out, start);
        return st;
    }
    *n_rows = j - from;
    return KNUT_OK;
}

static knut_status check_args(knut_buf *out, const knut_graph_set *set,
                              const knut_arrow_view *batch, int64_t from, int64_t to,
                              int64_t *n_rows, knut_error *err)
{
    KNUT_ASSERT_ARG(err, out != NULL && set != NULL && batch != NULL && n_rows != NULL);
    KNUT_ASSERT_ARG(err, from >= 0 && from <= to && to <= batch->length);
    if (out->error != KNUT_OK)
        return knut_buf_check(out, err);
    if (batch->type.type != KNUT_ARROW_STRUCT || max_index(set) >= batch->n_children) {
        char name[KNUT_GRAPH__MSG_NAME_MAX];
        return knut_error_set(err, KNUT_EINVAL,
                              "set '%s': the batch is not a struct with the set's %" PRId64
                              " columns",
                              knut_graph__msg_name(name, sizeof(name), set->name,
                                                   strlen(set->name)),
                              set->schema.n_children);
    }
    return KNUT_OK;
}

knut_status knut_graph_cypher_params(knut_buf *out, const knut_graph_set *set,
                                     const knut_arrow_view *batch, int64_t from, int64_t to,
                                     int64_t row_base, size_t budget, int64_t *n_rows,
                                     knut_error *err)
{
    knut_status st = check_args(out, set, batch, from, to, n_rows, err);
    if (st != KNUT_OK)
        return st;
    return params(out, set, batch, from, to, row_base, budget, 0, n_rows, err);
}

knut_status knut_graph_cypher_render(knut_buf *out, const knut_graph_set *set,
                                     const knut_arrow_view *batch, int64_t from, int64_t to,
                                     int64_t row_base, size_t budget, int64_t *n_rows,
                                     knut_error *err)
{
    knut_buf query = KNUT_BUF_INIT;
    knut_status st = check_args(out, set, batch, from, to, n_rows, err);
    if (st != KNUT_OK)
        return st;
    /* The mutation takes every column type (each sink judges its own);
     * Cypher is FalkorDB's, so its types are checked here too. */
    if ((st = knut_graph__falkor_set_check(set, err)) != KNUT_OK)
        return st;
    size_t start = out->len;
    st = knut_graph_cypher_query(&query, set, err);
    if (st != KNUT_OK)
        goto cleanup;
    st = params(out, set, batch, from, to, row_base, budget, query.len, n_rows, err);
    if (st != KNUT_OK)
        goto cleanup;
    knut_buf_append(out, query.data, query.len);
    st = knut_buf_check(out, err);
    if (st != KNUT_OK) {
        buf_truncate(out, start);
        *n_rows = 0;
    }
cleanup:
    knut_buf_reset(&query);
    return st;
}

/* ---- vertex updates by node id ----------------------------------------- */

/*
 * FalkorDB's range index answers an equality lookup on an integer key by
 * scanning a numeric range-tree leaf (~25 us a row, the bulk of a MERGE
 * update), while one range query returns the ids of a whole sorted batch
 * at index speed. The FalkorDB sink therefore finds the ids of the rows
 * that exist first and updates those with a NodeByIdSeek; the key is
 * compared again, so a node deleted (and its id reused) since the lookup
 * is not touched: the query then returns the count of rows it did update
 * (normally it returns nothing), and the sink sends its rows again as a
 * MERGE. `WITH r, r.i AS i` is what makes FalkorDB plan an id
 * seek (an id compared to r.i directly is planned as a label scan).
 */
knut_status knut_graph__cypher_query_by_id(knut_buf *out, const knut_graph_set *set,
                                           knut_error *err)
{
    KNUT_ASSERT_ARG(err, out != NULL && set != NULL);
    KNUT_ASSERT_ARG(err, set->kind == KNUT_GRAPH_SET_VERTEX && set->n_keys >= 1);
    size_t mark = out->len;
    knut_status st;
    knut_buf_puts(out, "UNWIND $rows AS r WITH r, r.i AS i MATCH (n) WHERE id(n) = i "
                       "WITH n, r WHERE n");
    if ((st = put_label(out, set->labels[0], "label", err)) != KNUT_OK)
        goto done;
    for (size_t k = 0; k < set->n_keys; k++) {
        knut_buf_puts(out, " AND n.");
        st = knut_graph_cypher_ident(out, set->keys[k].prop, strlen(set->keys[k].prop),
                                     "property", err);
        if (st != KNUT_OK)
            goto done;
        knut_buf_puts(out, " = ");
        put_conv(out, set->keys[k].conv, "k", k);
    }
    if (set->n_labels > 1) {
        knut_buf_puts(out, " SET n");
        for (size_t l = 1; l < set->n_labels; l++)
            if ((st = put_label(out, set->labels[l], "label", err)) != KNUT_OK)
                goto done;
    }
    /* A reply row only when some row found no node: the sink then resends
     * the rows as MERGE. (A row per update would cost the reply 5000 rows.) */
    if ((st = put_prop_sets(out, set, "n", err)) == KNUT_OK) {
        knut_buf_puts(out, " WITH count(n) AS c WHERE c < size($rows) RETURN c");
        st = knut_buf_check(out, err);
    }
done:
    if (st != KNUT_OK)
        buf_truncate(out, mark);
    return st;
}

knut_status knut_graph__cypher_render_subset(knut_buf *out, const knut_graph_set *set,
                                             const knut_arrow_view *batch, const int64_t *rows,
                                             const int64_t *ids, int64_t n, int64_t row_base,
                                             size_t budget, int64_t *n_rows, knut_error *err)
{
    knut_buf query = KNUT_BUF_INIT;
    knut_status st = check_args(out, set, batch, 0, 0, n_rows, err);
    KNUT_ASSERT_ARG(err, rows != NULL && n >= 0);
    if (st != KNUT_OK)
        return st;
    for (int64_t j = 0; j < n; j++)
        KNUT_ASSERT_ARG(err, rows[j] >= 0 && rows[j] < batch->length);
    size_t start = out->len;
    st = ids ? knut_graph__cypher_query_by_id(&query, set, err)
             : knut_graph_cypher_query(&query, set, err);
    if (st == KNUT_OK)
        st = params_rows(out, set, batch, rows, ids, 0, n, row_base, budget, query.len, n_rows,
                         err);
    if (st == KNUT_OK) {
        knut_buf_append(out, query.data, query.len);
        if ((st = knut_buf_check(out, err)) != KNUT_OK) {
            buf_truncate(out, start);
            *n_rows = 0;
        }
    }
    knut_buf_reset(&query);
    return st;
}
