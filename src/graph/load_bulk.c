/*
 * GRAPH.BULK for a fresh FalkorDB graph (falkordb.md §2): node and
 * relation blobs encoded from the GraphAr reader's Arrow batches, one blob
 * per call, the first call with BEGIN (the key must not exist). Every
 * call carries the 4 counts after BEGIN: nodes, edges, node blobs,
 * relation blobs.
 *
 * Why the encoder is this careful: a C FalkorDB reads a blob with no
 * bounds checks and deletes the whole graph on any failed call, so every
 * byte is produced from validated arrays (FULL + UTF-8), strings holding
 * NUL (which would end a BI_STRING early) and nulls inside lists are
 * refused before anything is sent, names are checked (no ':' in a label or
 * type, at most 512 bytes), and every node has at least one property
 * (`_gar_id`, so a node record is never 0 bytes).
 *
 * Node ids: on a graph made by BEGIN, nodes get ids 0..N-1 in send order,
 * so a vertex's id is its type's offset (the counts of the types sent
 * before it) plus its GraphAr index; edge records carry those ids.
 * The bulk format has no temporal codes: dates and timestamps travel as
 * ISO strings and are converted afterwards with date()/localdatetime() in
 * batched Cypher (values never in the query text: the range bounds are
 * parameters). Node and edge counts are checked at the end.
 *
 * The calls and the value encoding are falkor_bulk_enc.c's. Memory: one
 * blob (at most KNUT_FBULK_BLOB_MAX bytes) plus one Arrow batch.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cypher_int.h"
#include "falkor_int.h"
#include "load_int.h"

/* Rows per temporal-conversion query. */
#define BULK_CONVERT_ROWS 100000

typedef struct bulk_state {
    load_ctx *c;
    knut_graph_falkor *g;
    const char *graph;
    fbulk_io io;      /* falkor_bulk_enc.c: the blob and the calls */
    int64_t *offsets; /* node id offset per plan item (vertices) */
} bulk_state;

int knut_graph__load_bulk_possible(const load_ctx *c)
{
    for (size_t i = 0; i < c->n_items; i++) {
        const load_item *it = &c->items[i];
        const char *name = it->kind == KNUT_GRAPH_LOAD_VERTICES ? it->vi->type : it->ei->edge_type;
        if (!knut_graph__fbulk_name_ok(name, 0))
            return 0;
        const knut_graphar_property_group *gs =
            it->kind == KNUT_GRAPH_LOAD_VERTICES ? it->vi->groups : it->ei->groups;
        size_t ng = it->kind == KNUT_GRAPH_LOAD_VERTICES ? it->vi->n_groups : it->ei->n_groups;
        for (size_t g = 0; g < ng; g++)
            for (size_t p = 0; p < gs[g].n_props; p++)
                if (!knut_graph__fbulk_name_ok(gs[g].props[p].name, 1))
                    return 0;
    }
    return 1;
}

/* ---- one item ---- */

static int64_t vertex_offset(const bulk_state *s, const char *type, int64_t *count)
{
    for (size_t i = 0; i < s->c->n_items; i++)
        if (s->c->items[i].kind == KNUT_GRAPH_LOAD_VERTICES &&
            strcmp(s->c->items[i].vi->type, type) == 0) {
            *count = s->c->items[i].total;
            return s->offsets[i];
        }
    return -1;
}

static knut_status bulk_item(bulk_state *s, size_t idx, knut_graph_load_stats *stats,
                             knut_error *err)
{
    const load_item *it = &s->c->items[idx];
    int is_node = it->kind == KNUT_GRAPH_LOAD_VERTICES;
    struct ArrowArrayStream stream;
    struct ArrowSchema sc = {0};
    struct ArrowArray batch = {0};
    knut_arrow_view view = {0};
    int64_t src_off = 0, dst_off = 0, src_n = 0, dst_n = 0, row = 0;
    knut_status st = knut_graph__load_stream(s->c, it, &stream, err);
    if (st != KNUT_OK)
        return st;
    int rc = stream.get_schema(&stream, &sc);
    if (rc != 0) {
        st = knut_graphar_stream_status(&stream, rc, err);
        goto cleanup;
    }
    /* Vertices: _gar_id and the properties (label columns are left out);
     * edges: src, dst, then the properties. */
    int64_t n_props = 0;
    if (is_node) {
        n_props = 1;
        for (size_t g = 0; g < it->vi->n_groups; g++)
            n_props += (int64_t)it->vi->groups[g].n_props;
    } else {
        n_props = sc.n_children - 2;
        src_off = vertex_offset(s, it->ei->src_type, &src_n);
        dst_off = vertex_offset(s, it->ei->dst_type, &dst_n);
        if (src_off < 0 || dst_off < 0) {
            st = knut_error_set(err, KNUT_EINVAL, "edge type %s: endpoint type not in the graph",
                                it->name);
            goto cleanup;
        }
    }
    int64_t first = is_node ? 0 : 2;
    if (n_props + first > sc.n_children || n_props >= 65535) {
        st = knut_error_set(err, KNUT_EINVAL, "%s: unexpected columns", it->name);
        goto cleanup;
    }
    const char *name = is_node ? it->vi->type : it->ei->edge_type;
    for (;;) {
        rc = stream.get_next(&stream, &batch);
        if (rc != 0) {
            st = knut_graphar_stream_status(&stream, rc, err);
            goto cleanup;
        }
        if (!batch.release)
            break;
        st = knut_arrow_array_validate(&sc, &batch, KNUT_ARROW_VALIDATE_FULL | KNUT_ARROW_VALIDATE_UTF8, err);
        if (st == KNUT_OK)
            st = knut_arrow_view_init(&view, &sc, &batch, err);
        for (int64_t i = 0; i < batch.length && st == KNUT_OK; i++, row++) {
            int64_t r = knut_arrow_view_child_row(&view, i);
            if (s->io.blob_rows == 0)
                knut_graph__fbulk_header(&s->io.blob, name, &sc, first, n_props);
            if (is_node) {
                /* ids are implied by send order: the index must be the row */
                if (knut_arrow_view_get_int64(&view.children[0], r) != row) {
                    st = knut_error_set(err, KNUT_EINVAL, "%s: vertex index %" PRId64
                                        " out of order", it->name, row);
                    break;
                }
            } else {
                int64_t a = knut_arrow_view_get_int64(&view.children[0], r);
                int64_t b = knut_arrow_view_get_int64(&view.children[1], r);
                if (a < 0 || a >= src_n || b < 0 || b >= dst_n) {
                    st = knut_error_set(err, KNUT_EINVAL, "%s: edge row %" PRId64
                                        ": endpoint index out of range", it->name, row);
                    break;
                }
                knut_graph__fbulk_put_u64(&s->io.blob, (uint64_t)(src_off + a));
                knut_graph__fbulk_put_u64(&s->io.blob, (uint64_t)(dst_off + b));
            }
            for (int64_t k = first; k < first + n_props && st == KNUT_OK; k++)
                st = knut_graph__fbulk_value(&s->io.blob, &view.children[k], r, 0,
                                              sc.children[k]->name, err);
            if (st != KNUT_OK) {
                knut_error_prefix(err, "%s: row %" PRId64 ": ", it->name, row);
                break;
            }
            s->io.blob_rows++;
            if (s->io.blob.len >= KNUT_FBULK_BLOB_MAX)
                st = knut_graph__fbulk_send(&s->io, is_node, err);
        }
        knut_arrow_view_reset(&view);
        memset(&view, 0, sizeof view);
        batch.release(&batch);
        if (st != KNUT_OK)
            goto cleanup;
    }
    st = knut_graph__fbulk_send(&s->io, is_node, err);
    if (st == KNUT_OK && row != it->total)
        st = knut_error_set(err, KNUT_EINVAL, "%s: %" PRId64 " rows read, the count files say %"
                            PRId64, it->name, row, it->total);
    if (st == KNUT_OK) {
        if (is_node)
            stats->vertices += row;
        else
            stats->edges += row;
    }
cleanup:
    if (batch.release)
        batch.release(&batch);
    if (sc.release)
        sc.release(&sc);
    stream.release(&stream);
    return st;
}

/* ---- after the load: temporal conversion, indexes, counts ---- */

static knut_status run_query(knut_graph_falkor *g, const char *graph, const char *q,
                             knut_error *err)
{
    knut_graph_falkor_result r;
    knut_status st = knut_graph_falkor_query(g, graph, q, 0, &r, err);
    knut_graph_falkor_result_reset(&r);
    return st;
}

/* CREATE INDEX on (label, prop), an index already there being fine. */
static knut_status make_index(bulk_state *s, const char *label, const char *prop,
                              knut_error *err)
{
    knut_buf q = KNUT_BUF_INIT;
    knut_buf_puts(&q, "CREATE INDEX FOR (n:");
    knut_status st = knut_graph_cypher_ident(&q, label, strlen(label), "label", err);
    knut_buf_puts(&q, ") ON (n.");
    if (st == KNUT_OK)
        st = knut_graph_cypher_ident(&q, prop, strlen(prop), "property", err);
    knut_buf_puts(&q, ")");
    if (st == KNUT_OK)
        st = knut_buf_check(&q, err);
    knut_error e = KNUT_ERROR_INIT;
    if (st == KNUT_OK && (st = run_query(s->g, s->graph, q.data, &e)) != KNUT_OK) {
        if (e.detail == KNUT_GRAPH_FALKOR_ERR_INDEX_EXISTS)
            st = KNUT_OK;
        else if (err)
            *err = e;
    }
    knut_buf_reset(&q);
    return st;
}

/* SET x = date(x) / localdatetime(x) for the item's temporal properties,
 * BULK_CONVERT_ROWS vertices (or source vertices) per query. */
static knut_status convert_item(bulk_state *s, const load_item *it, knut_error *err)
{
    const knut_graphar_property_group *gs = it->kind == KNUT_GRAPH_LOAD_VERTICES ? it->vi->groups
                                                                               : it->ei->groups;
    size_t ng = it->kind == KNUT_GRAPH_LOAD_VERTICES ? it->vi->n_groups : it->ei->n_groups;
    knut_buf set = KNUT_BUF_INIT, q = KNUT_BUF_INIT;
    knut_status st = KNUT_OK;
    const char *var = it->kind == KNUT_GRAPH_LOAD_VERTICES ? "n" : "e";
    for (size_t g = 0; g < ng && st == KNUT_OK; g++)
        for (size_t p = 0; p < gs[g].n_props && st == KNUT_OK; p++) {
            const knut_graphar_property *pr = &gs[g].props[p];
            if (pr->type != KNUT_GRAPHAR_TYPE_DATE && pr->type != KNUT_GRAPHAR_TYPE_TIMESTAMP)
                continue;
            const char *fn = pr->type == KNUT_GRAPHAR_TYPE_DATE ? "date" : "localdatetime";
            knut_buf_printf(&set, "%s %s.", set.len ? "," : " SET", var);
            st = knut_graph_cypher_ident(&set, pr->name, strlen(pr->name), "property", err);
            knut_buf_printf(&set, " = %s(%s.", fn, var);
            if (st == KNUT_OK)
                st = knut_graph_cypher_ident(&set, pr->name, strlen(pr->name), "property", err);
            knut_buf_puts(&set, ")");
        }
    if (st != KNUT_OK || set.len == 0)
        goto cleanup;
    const char *label = it->kind == KNUT_GRAPH_LOAD_VERTICES ? it->vi->type : it->ei->src_type;
    int64_t n = 0;
    vertex_offset(s, label, &n);
    st = make_index(s, label, KNUT_LOAD_GAR_ID, err);
    for (int64_t from = 0; from < n && st == KNUT_OK; from += BULK_CONVERT_ROWS) {
        knut_buf_clear(&q);
        knut_buf_printf(&q, "CYPHER lo=%" PRId64 " hi=%" PRId64 " MATCH (n:", from,
                        from + BULK_CONVERT_ROWS);
        st = knut_graph_cypher_ident(&q, label, strlen(label), "label", err);
        knut_buf_puts(&q, ")");
        if (st == KNUT_OK && it->kind == KNUT_GRAPH_LOAD_EDGES) {
            st = knut_graph__cypher_rel(&q, "e", it->ei->edge_type, "type", NULL, 0, NULL, err);
            knut_buf_puts(&q, "(:");
            if (st == KNUT_OK)
                st = knut_graph_cypher_ident(&q, it->ei->dst_type, strlen(it->ei->dst_type),
                                             "label", err);
            knut_buf_puts(&q, ")");
        }
        knut_buf_puts(&q, " WHERE n._gar_id >= $lo AND n._gar_id < $hi");
        knut_buf_append(&q, set.data, set.len);
        if (st == KNUT_OK)
            st = knut_buf_check(&q, err);
        if (st == KNUT_OK)
            st = run_query(s->g, s->graph, q.data, err);
    }
    if (st != KNUT_OK)
        knut_error_prefix(err, "converting temporal values of %s: ", it->name);
cleanup:
    knut_buf_reset(&set);
    knut_buf_reset(&q);
    return st;
}

knut_status knut_graph__load_bulk(load_ctx *c, knut_graph_falkor *g, const char *graph,
                                  knut_graph_load_stats *stats, knut_error *err)
{
    bulk_state s = {c, g, graph, {g, graph, KNUT_BUF_INIT, 0, 0, 0}, NULL};
    knut_status st = KNUT_OK;
    knut_buf_init(&s.io.blob, KNUT_FBULK_BLOB_MAX + ((size_t)1 << 20)); /* + one record's slack */
    s.offsets = calloc(c->n_items + 1, sizeof *s.offsets);
    if (!s.offsets) {
        st = knut_error_set(err, KNUT_ENOMEM, "load: out of memory");
        goto cleanup;
    }
    int64_t nodes = 0, edges = 0;
    for (size_t i = 0; i < c->n_items; i++) {
        if (c->items[i].kind == KNUT_GRAPH_LOAD_VERTICES) {
            s.offsets[i] = nodes;
            nodes += c->items[i].total;
        } else {
            edges += c->items[i].total;
        }
    }
    for (size_t i = 0; i < c->n_items && st == KNUT_OK; i++) {
        int64_t before = c->rows;
        st = bulk_item(&s, i, stats, err);
        if (st == KNUT_OK && i + 1 < c->n_items && c->items[i + 1].kind != c->items[i].kind &&
            s.io.pending)
            st = knut_graph__fbulk_reply(&s.io, err); /* nodes in before edges name them */
        if (st == KNUT_OK)
            knut_graph__load_report(c, &c->items[i], c->rows - before, 1);
    }
    if (st == KNUT_OK && s.io.pending)
        st = knut_graph__fbulk_reply(&s.io, err);
    /* The indexes later UNWIND loads (and the conversions) look vertices up by. */
    for (size_t i = 0; i < c->n_items && st == KNUT_OK; i++) {
        const load_item *it = &c->items[i];
        if (it->kind != KNUT_GRAPH_LOAD_VERTICES)
            continue;
        st = make_index(&s, it->vi->type, KNUT_LOAD_GAR_ID, err);
        if (st == KNUT_OK && it->key)
            st = make_index(&s, it->vi->type, it->key, err);
    }
    for (size_t i = 0; i < c->n_items && st == KNUT_OK; i++)
        st = convert_item(&s, &c->items[i], err);
    if (st == KNUT_OK && s.io.begun)
        st = knut_graph__fbulk_check_counts(g, graph, nodes, edges, err);
    knut_graph_falkor_names_reset(g);
cleanup:
    if (st != KNUT_OK && s.io.pending)
        knut_graph__falkor_drop(g); /* an unread reply would desynchronise the connection */
    knut_buf_reset(&s.io.blob);
    free(s.offsets);
    return st;
}
