/*
 * Key listing of the FalkorDB sink (knut_graph_sink_vertex_keys /
 * _edge_keys). One read-only query per page:
 *   CYPHER after=N MATCH (n:`L`) WHERE id(n) > $after AND n.`k` IS NOT NULL
 *   RETURN id(n) AS _knut_id, n.`k` AS `k` ORDER BY id(n) LIMIT 10000
 * Paging by id (not SKIP) keeps each page a seek, not a rescan of what was
 * already read, and makes a page cut short by the server's RESULTSET_SIZE
 * harmless: the next page simply starts after the last id received. Names
 * go through knut_graph_cypher_ident; the only value is the id parameter.
 */
#include "cypher_int.h"
#include "falkor_sink_int.h"

#include <string.h>

#define KEYS_PAGE_ROWS 10000

static knut_status keys_text(knut_buf *b, const knut_graph_key_scan *scan, knut_error *err)
{
    knut_status st = KNUT_OK;
    const char *elem = scan->type ? "e" : "n";
    if (scan->type) {
        knut_buf_puts(b, "MATCH (a:");
        st = knut_graph_cypher_ident(b, scan->src.label, strlen(scan->src.label), "label", err);
        knut_buf_puts(b, ")");
        if (st == KNUT_OK)
            st = knut_graph__cypher_rel(b, "e", scan->type, "type", NULL, 0, NULL, err);
        knut_buf_puts(b, "(b:");
        if (st == KNUT_OK)
            st = knut_graph_cypher_ident(b, scan->dst.label, strlen(scan->dst.label), "label",
                                         err);
        knut_buf_puts(b, ")");
    } else {
        knut_buf_puts(b, "MATCH (n:");
        st = knut_graph_cypher_ident(b, scan->label, strlen(scan->label), "label", err);
        knut_buf_puts(b, ")");
    }
    knut_buf_printf(b, " WHERE id(%s) > $after", elem);
    /* (alias, keys, count, column prefix) for the vertex or both endpoints */
    const char *alias[2] = {scan->type ? "a" : "n", "b"};
    const char *const *keys[2] = {scan->type ? scan->src.keys : scan->keys, scan->dst.keys};
    size_t nk[2] = {scan->type ? scan->src.n_keys : scan->n_keys, scan->dst.n_keys};
    const char *prefix[2] = {scan->type ? "_knut_s" : NULL, "_knut_d"};
    int parts = scan->type ? 2 : 1;
    for (int p = 0; p < parts; p++)
        for (size_t k = 0; k < nk[p] && st == KNUT_OK; k++) {
            knut_buf_printf(b, " AND %s.", alias[p]);
            st = knut_graph_cypher_ident(b, keys[p][k], strlen(keys[p][k]), "property", err);
            knut_buf_puts(b, " IS NOT NULL");
        }
    knut_buf_printf(b, " RETURN id(%s) AS _knut_id", elem);
    for (int p = 0; p < parts; p++)
        for (size_t k = 0; k < nk[p] && st == KNUT_OK; k++) {
            knut_buf_printf(b, ", %s.", alias[p]);
            st = knut_graph_cypher_ident(b, keys[p][k], strlen(keys[p][k]), "property", err);
            if (prefix[p])
                knut_buf_printf(b, " AS %s%zu", prefix[p], k);
            else if (st == KNUT_OK) {
                knut_buf_puts(b, " AS ");
                st = knut_graph_cypher_ident(b, keys[p][k], strlen(keys[p][k]), "property", err);
            }
        }
    knut_buf_printf(b, " ORDER BY id(%s) LIMIT %d", elem, KEYS_PAGE_ROWS);
    if (st == KNUT_OK)
        st = knut_buf_check(b, err);
    return st;
}

/* Hands one page's batches to fn; *last gets the largest id seen. */
static knut_status page_feed(knut_graph_falkor_result *res, knut_graph_sink_keys_fn fn,
                             void *ctx, int64_t *last, knut_error *err)
{
    struct ArrowSchema schema = {0}, copy = {0};
    struct ArrowArray batch = {0};
    knut_arrow_view v = {0};
    int rc = res->stream.get_schema(&res->stream, &schema);
    knut_status st = rc ? knut_arrow_stream_error(&res->stream, rc, "key page", err) : KNUT_OK;
    while (st == KNUT_OK) {
        rc = res->stream.get_next(&res->stream, &batch);
        if (rc) {
            st = knut_arrow_stream_error(&res->stream, rc, "key page", err);
            break;
        }
        if (!batch.release)
            break;
        st = knut_arrow_view_init(&v, &schema, &batch, err);
        if (st == KNUT_OK && v.length > 0 &&
            (v.n_children < 1 || v.children[0].type.type != KNUT_ARROW_INT64))
            st = knut_error_set(err, KNUT_EPEER, "key page: column 0 is not an integer id");
        for (int64_t i = 0; st == KNUT_OK && i < v.length; i++)
            if (!knut_arrow_view_is_null(&v.children[0], i) &&
                knut_arrow_view_get_int64(&v.children[0], i) > *last)
                *last = knut_arrow_view_get_int64(&v.children[0], i);
        /* A key column of several value types arrives as JSON text, which
         * would never equal the caller's values: every such key would look
         * absent. Refuse rather than let a caller delete live vertices. */
        for (int64_t c = 1; st == KNUT_OK && batch.length > 0 && c < schema.n_children; c++) {
            const char *kind = NULL;
            int32_t len = 0;
            if (knut_arrow_metadata_get(schema.children[c]->metadata, "knut.falkordb.kind", &kind,
                                        &len))
                st = knut_error_set(err, KNUT_EUNSUPPORTED,
                                    "key '%s' holds values of several types in the graph",
                                    schema.children[c]->name ? schema.children[c]->name : "");
        }
        knut_arrow_view_reset(&v);
        memset(&v, 0, sizeof v);
        if (st == KNUT_OK && batch.length > 0) /* an empty page may carry null types */
            st = knut_arrow_schema_deep_copy(&copy, &schema, err);
        else
            knut_arrow_array_release(&batch);
        if (st == KNUT_OK && batch.release) {
            struct ArrowArrayStream one = {0};
            st = knut_arrow_stream_from_arrays(&one, &copy, &batch, 1, err); /* takes both */
            if (st == KNUT_OK)
                st = fn(ctx, &one, err);
        }
        knut_arrow_array_release(&batch);
    }
    knut_arrow_view_reset(&v);
    knut_arrow_array_release(&batch);
    knut_arrow_schema_release(&schema);
    return st;
}

knut_status knut_graph__fsink_keys(knut_graph_falkor *g, const char *graph,
                                   const knut_graph_key_scan *scan, knut_graph_sink_keys_fn fn,
                                   void *ctx, knut_error *err)
{
    knut_buf body = KNUT_BUF_INIT, q = KNUT_BUF_INIT;
    knut_graph_falkor_result res = {0};
    int64_t after = -1;
    knut_status st = keys_text(&body, scan, err);
    while (st == KNUT_OK) {
        knut_buf_clear(&q);
        knut_buf_printf(&q, "CYPHER after=%lld %s", (long long)after, body.data);
        if ((st = knut_buf_check(&q, err)) != KNUT_OK)
            break;
        knut_error qerr = KNUT_ERROR_INIT;
        st = knut_graph_falkor_query(g, graph, q.data,
                                     KNUT_GRAPH_FALKOR_READ_ONLY |
                                         KNUT_GRAPH_FALKOR_ALLOW_TRUNCATED,
                                     &res, &qerr);
        if (st == KNUT_EPEER && after < 0 && qerr.detail == KNUT_GRAPH_FALKOR_ERR_EMPTY_KEY) {
            st = KNUT_OK; /* no such graph yet: it holds nothing */
            break;
        }
        if (st != KNUT_OK && err)
            *err = qerr;
        int64_t last = after;
        if (st == KNUT_OK)
            st = page_feed(&res, fn, ctx, &last, err);
        int more = res.truncated || res.n_rows == KEYS_PAGE_ROWS;
        if (st == KNUT_OK && more && last <= after)
            st = knut_error_set(err, KNUT_EPEER,
                                "falkordb %s: a key page ended without progress "
                                "(RESULTSET_SIZE %lld)",
                                knut_graph_falkor_peer(g),
                                (long long)knut_graph_falkor_resultset_limit(g));
        knut_graph_falkor_result_reset(&res);
        if (st != KNUT_OK || !more)
            break;
        after = last;
    }
    if (st != KNUT_OK)
        knut_error_prefix(err, "falkordb sink: %s '%s': ", scan->type ? "edge type" : "label",
                          scan->type ? scan->type : scan->label);
    knut_buf_reset(&body);
    knut_buf_reset(&q);
    return st;
}
