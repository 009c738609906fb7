/*
 * The FalkorDB sink's account of skipped edge rows. `UNWIND ... MATCH (a)
 * MATCH (b) MERGE (a)-[e]->(b) RETURN 1` writes nothing for a row whose
 * endpoint is missing, and says nothing either: the reply's row count is
 * the edges written, so rows sent minus rows returned is what was skipped.
 * Only when some were, one read-only query with the same parameter block
 * finds which rows and which endpoint, so the common case costs nothing.
 */
#include "falkor_sink_int.h"

#include <stdlib.h>
#include <string.h>

#include "cypher_int.h"

knut_status knut_graph__fsink_missing(knut_graph_falkor *g, const char *graph,
                                      knut_graph_set *set, const fsink_query *q,
                                      size_t suffix_len, knut_error *err)
{
    knut_buf own = KNUT_BUF_INIT, text = KNUT_BUF_INIT;
    knut_graph_falkor_result r = {0};
    struct ArrowSchema schema = {0};
    struct ArrowArray *arrays = NULL;
    int64_t n_arrays = 0;
    size_t ns = set->n_src_keys, nd = set->n_dst_keys;
    /* The rendered text is parameter block + the set's text + suffix. */
    knut_status st = knut_graph_cypher_query(&own, set, err);
    if (st != KNUT_OK)
        goto cleanup;
    if (q->text.len < own.len + suffix_len ||
        memcmp(q->text.data + q->text.len - suffix_len - own.len, own.data, own.len) != 0) {
        st = knut_error_set(err, KNUT_ERROR, "set '%s': cannot find the parameter block",
                            set->name);
        goto cleanup;
    }
    knut_buf_append(&text, q->text.data, q->text.len - suffix_len - own.len);
    if ((st = knut_graph__cypher_missing_query(&text, set, err)) != KNUT_OK)
        goto cleanup;
    st = knut_graph_falkor_query(g, graph, text.data, KNUT_GRAPH_FALKOR_READ_ONLY, &r, err);
    if (st != KNUT_OK) {
        knut_error_prefix(err, "set '%s': finding the missing endpoints: ", set->name);
        goto cleanup;
    }
    if (r.n_rows > 0 && r.n_columns == (int64_t)(2 + ns + nd))
        st = knut_arrow_stream_collect(&r.stream, &schema, &arrays, &n_arrays, 0, err);
    for (int64_t b = 0; st == KNUT_OK && b < n_arrays; b++) {
        knut_arrow_view v;
        if ((st = knut_arrow_view_init(&v, &schema, &arrays[b], err)) != KNUT_OK)
            break;
        for (int64_t i = 0; i < v.length && !knut_graph__missing_full(set); i++) {
            int64_t row = knut_arrow_view_child_row(&v, i);
            char vals[32][KNUT_GRAPH__MSG_NAME_MAX];
            const char *pv[32];
            int flag[2] = {1, 1};
            for (int f = 0; f < 2; f++)
                if (v.children[f].type.type == KNUT_ARROW_INT64 &&
                    !knut_arrow_view_is_null(&v.children[f], row))
                    flag[f] = knut_arrow_view_get_int64(&v.children[f], row) != 0;
            for (size_t k = 0; k < ns + nd && k < 32; k++) {
                const knut_arrow_view *c = &v.children[2 + k];
                int64_t len = 0;
                pv[k] = NULL;
                if ((c->type.type == KNUT_ARROW_UTF8 || c->type.type == KNUT_ARROW_LARGE_UTF8) &&
                    !knut_arrow_view_is_null(c, row)) {
                    const char *s = knut_arrow_view_get_str(c, row, &len);
                    pv[k] = knut_graph__msg_name(vals[k], sizeof vals[k], s, (size_t)len);
                }
            }
            if (ns + nd <= 32)
                knut_graph__missing_add(set, flag[0], flag[1], pv, pv + ns);
        }
        knut_arrow_view_reset(&v);
    }
cleanup:
    knut_arrow_arrays_free(arrays, n_arrays);
    if (schema.release)
        schema.release(&schema);
    knut_graph_falkor_result_reset(&r);
    knut_buf_reset(&own);
    knut_buf_reset(&text);
    return st;
}
