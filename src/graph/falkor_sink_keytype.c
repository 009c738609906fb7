/*
 * The FalkorDB sink's key type check. FalkorDB has no column types: a
 * vertex keyed {id: 1} and a row keyed {id: "1"} do not match, so MERGE
 * would make a second vertex, and an edge row would find no endpoint. The
 * graph's established type of a key is the type of that key on a vertex
 * of the label already there; a set whose key column has another type is
 * a data error of its rows (KNUT_EINVAL: the sync fails that file, not
 * the table), found with one read-only `LIMIT 1` query per key before the
 * set's first query is sent (so a set without rows, whose all-null columns
 * mean nothing, is not judged). A label with no vertex yet takes the
 * set's types.
 */
#include "falkor_sink_int.h"

#include <string.h>

#include "cypher_int.h"

/* FalkorDB's typeOf() name of the values a key column sends, or NULL. */
static const char *falkor_type(const knut_graph_column *c)
{
    if (c->conv == KNUT_GRAPH_CONV_DATE)
        return "Date";
    if (c->conv == KNUT_GRAPH_CONV_LOCALDATETIME)
        return "Datetime";
    if (c->conv == KNUT_GRAPH_CONV_LOCALTIME)
        return "Time";
    switch (c->type.type) {
    case KNUT_ARROW_BOOL:
        return "Boolean";
    case KNUT_ARROW_INT8:
    case KNUT_ARROW_UINT8:
    case KNUT_ARROW_INT16:
    case KNUT_ARROW_UINT16:
    case KNUT_ARROW_INT32:
    case KNUT_ARROW_UINT32:
    case KNUT_ARROW_INT64:
    case KNUT_ARROW_UINT64:
        return "Integer";
    case KNUT_ARROW_HALF_FLOAT:
    case KNUT_ARROW_FLOAT:
    case KNUT_ARROW_DOUBLE:
        return "Float";
    case KNUT_ARROW_UTF8:
    case KNUT_ARROW_LARGE_UTF8:
        return "String";
    case KNUT_ARROW_DECIMAL128:
        return knut_graph__decimal_is_int(&c->type) ? "Integer" : NULL;
    default:
        return NULL;
    }
}

/* The type of key `prop` on some vertex of label (*have "" when none). */
static knut_status stored_type(knut_graph_falkor *g, const char *graph, const char *label,
                               const char *prop, char *have, size_t cap, knut_error *err)
{
    knut_buf q = KNUT_BUF_INIT;
    knut_graph_falkor_result r = {0};
    struct ArrowSchema schema = {0};
    struct ArrowArray a = {0};
    knut_arrow_view v;
    memset(&v, 0, sizeof v);
    have[0] = '\0';
    knut_buf_puts(&q, "MATCH (n:");
    knut_status st = knut_graph_cypher_ident(&q, label, strlen(label), "label", err);
    for (int i = 0; i < 2 && st == KNUT_OK; i++) {
        knut_buf_puts(&q, i == 0 ? ") WHERE n." : " IS NOT NULL RETURN typeOf(n.");
        st = knut_graph_cypher_ident(&q, prop, strlen(prop), "property", err);
    }
    knut_buf_puts(&q, ") LIMIT 1");
    if (st == KNUT_OK)
        st = knut_buf_check(&q, err);
    if (st == KNUT_OK)
        st = knut_graph_falkor_query(g, graph, q.data, KNUT_GRAPH_FALKOR_READ_ONLY, &r, err);
    if (st == KNUT_EPEER && err && err->detail == KNUT_GRAPH_FALKOR_ERR_EMPTY_KEY) {
        knut_error_clear(err); /* no graph yet: no vertex either */
        st = KNUT_OK;
    }
    if (st == KNUT_OK && r.n_rows > 0 && r.stream.get_schema(&r.stream, &schema) == 0 &&
        r.stream.get_next(&r.stream, &a) == 0 && a.release &&
        knut_arrow_view_init(&v, &schema, &a, NULL) == KNUT_OK && v.length > 0 &&
        v.n_children > 0 && !knut_arrow_view_is_null(&v.children[0], 0) &&
        (v.children[0].type.type == KNUT_ARROW_UTF8 ||
         v.children[0].type.type == KNUT_ARROW_LARGE_UTF8)) {
        int64_t len = 0;
        const char *s = knut_arrow_view_get_str(&v.children[0], knut_arrow_view_child_row(&v, 0),
                                                &len);
        snprintf(have, cap, "%.*s", (int)len, s);
    }
    knut_arrow_view_reset(&v);
    knut_arrow_array_release(&a);
    knut_arrow_schema_release(&schema);
    knut_graph_falkor_result_reset(&r);
    knut_buf_reset(&q);
    return st;
}

static knut_status keys_check(knut_graph_falkor *g, const char *graph, const knut_graph_set *set,
                              const char *label, const knut_graph_column *keys, size_t n,
                              const char *role, knut_error *err)
{
    static const char *const kind[] = {"vertex set", "edge set", "delete set",
                                       "edge delete set"};
    char have[32];
    for (size_t k = 0; k < n; k++) {
        const char *want = falkor_type(&keys[k]);
        if (!want)
            continue;
        knut_status st = stored_type(g, graph, label, keys[k].prop, have, sizeof have, err);
        if (st != KNUT_OK)
            return knut_error_prefix(err, "%s '%s': the type of key '%s': ", kind[set->kind],
                                     set->name, keys[k].prop);
        if (have[0] && strcmp(have, want) != 0) {
            knut_error_set(err, KNUT_EINVAL,
                           "%s '%s': %skey column '%s': %s '%s' holds %s keys in the graph, the "
                           "set has %s (a key's type does not change: these rows would %s)",
                           kind[set->kind], set->name, role, keys[k].column, label, keys[k].prop,
                           have, want,
                           set->kind == KNUT_GRAPH_SET_VERTEX ? "be new vertices"
                                                              : "find no vertex");
            if (err)
                err->detail = KNUT_GRAPH_ERR_TYPE_CHANGE;
            return KNUT_EINVAL;
        }
    }
    return KNUT_OK;
}

knut_status knut_graph__fsink_key_types(knut_graph_falkor *g, const char *graph,
                                        const knut_graph_set *set, knut_error *err)
{
    if (set->kind == KNUT_GRAPH_SET_VERTEX)
        return keys_check(g, graph, set, set->labels[0], set->keys, set->n_keys, "", err);
    if (set->kind != KNUT_GRAPH_SET_EDGE)
        return KNUT_OK;
    knut_status st = keys_check(g, graph, set, set->src_label, set->src_keys, set->n_src_keys,
                                "source ", err);
    if (st == KNUT_OK)
        st = keys_check(g, graph, set, set->dst_label, set->dst_keys, set->n_dst_keys,
                        "destination ", err);
    return st;
}
