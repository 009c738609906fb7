/*
 * The FalkorDB sink's id probe for vertex upserts keyed by one integer
 * column. FalkorDB 4.16 answers each MERGE's equality lookup on an integer
 * range index by scanning a RediSearch numeric range-tree leaf: ~25 us a
 * row, most of an update's server time (GRAPH.PROFILE: "Node By Index
 * Scan" 276 ms of 313 ms for 5000 rows). One range query over the batch's
 * key span returns the node ids of all existing rows at index speed (<1 ms
 * for 5000), and rows with an id are then updated by NodeByIdSeek
 * (cypher_query.c, knut_graph__cypher_query_by_id). Rows without one go
 * through MERGE as before. The probe only ever narrows what MERGE would do:
 * a key held by several nodes, a span holding more than twice the batch's
 * rows, or a key of another type leave the rows to MERGE.
 */
#include "falkor_sink_int.h"

#include <stdlib.h>
#include <string.h>

/* Open addressing, key -> node id; FSINK_PROBE_DUP marks a key seen twice. */
#define FSINK_PROBE_DUP (-2)

typedef struct idmap {
    int64_t *keys, *ids;
    uint8_t *used;
    size_t cap; /* power of two */
} idmap;

static size_t slot_of(const idmap *m, int64_t key)
{
    uint64_t h = (uint64_t)key * UINT64_C(0x9E3779B97F4A7C15);
    return (size_t)(h >> 17) & (m->cap - 1);
}

static void map_put(idmap *m, int64_t key, int64_t id)
{
    size_t i = slot_of(m, key);
    while (m->used[i] && m->keys[i] != key)
        i = (i + 1) & (m->cap - 1);
    if (m->used[i]) {
        m->ids[i] = FSINK_PROBE_DUP;
        return;
    }
    m->used[i] = 1;
    m->keys[i] = key;
    m->ids[i] = id;
}

static int64_t map_get(const idmap *m, int64_t key)
{
    size_t i = slot_of(m, key);
    while (m->used[i]) {
        if (m->keys[i] == key)
            return m->ids[i] < 0 ? -1 : m->ids[i];
        i = (i + 1) & (m->cap - 1);
    }
    return -1;
}

int knut_graph__fsink_probe_eligible(const knut_graph_set *set, const knut_arrow_view *batch)
{
    if (set->kind != KNUT_GRAPH_SET_VERTEX || set->n_keys != 1 ||
        set->keys[0].conv != KNUT_GRAPH_CONV_NONE || set->keys[0].index >= batch->n_children)
        return 0;
    switch (batch->children[set->keys[0].index].type.type) {
    case KNUT_ARROW_INT8:
    case KNUT_ARROW_INT16:
    case KNUT_ARROW_INT32:
    case KNUT_ARROW_INT64:
    case KNUT_ARROW_UINT8:
    case KNUT_ARROW_UINT16:
    case KNUT_ARROW_UINT32:
        return 1;
    default:
        return 0;
    }
}

/* Reads the (key, id) rows of the probe's reply into m; *ok = 0 if the
 * reply is not two int64 columns (keys of another type exist). */
static knut_status read_reply(knut_graph_falkor_result *r, idmap *m, int *ok, knut_error *err)
{
    struct ArrowSchema schema = {0};
    struct ArrowArray *arrays = NULL;
    int64_t n_arrays = 0;
    *ok = 1;
    if (r->n_rows == 0)
        return KNUT_OK;
    knut_status st = knut_arrow_stream_collect(&r->stream, &schema, &arrays, &n_arrays, 0, err);
    for (int64_t b = 0; st == KNUT_OK && *ok && b < n_arrays; b++) {
        knut_arrow_view v;
        if ((st = knut_arrow_view_init(&v, &schema, &arrays[b], err)) != KNUT_OK)
            break;
        if (v.n_children != 2 || v.children[0].type.type != KNUT_ARROW_INT64 ||
            v.children[1].type.type != KNUT_ARROW_INT64)
            *ok = 0;
        for (int64_t i = 0; *ok && i < v.length; i++) {
            int64_t row = knut_arrow_view_child_row(&v, i);
            if (knut_arrow_view_is_null(&v.children[0], row) ||
                knut_arrow_view_is_null(&v.children[1], row))
                continue;
            map_put(m, knut_arrow_view_get_int64(&v.children[0], row),
                    knut_arrow_view_get_int64(&v.children[1], row));
        }
        knut_arrow_view_reset(&v);
    }
    knut_arrow_arrays_free(arrays, n_arrays);
    if (schema.release)
        schema.release(&schema);
    return st;
}

knut_status knut_graph__fsink_probe(knut_graph_falkor *g, const char *graph,
                                    const knut_graph_set *set, const knut_arrow_view *batch,
                                    int64_t from, int64_t to, int64_t *ids, knut_error *err)
{
    KNUT_ASSERT_ARG(err, g && graph && set && batch && ids && from >= 0 && from <= to);
    const knut_arrow_view *key = &batch->children[set->keys[0].index];
    int64_t n = to - from, lo = INT64_MAX, hi = INT64_MIN;
    for (int64_t j = 0; j < n; j++)
        ids[j] = -1;
    for (int64_t j = 0; j < n; j++) {
        int64_t row = knut_arrow_view_child_row(batch, from + j);
        if (knut_arrow_view_is_null(key, row))
            return KNUT_OK; /* the renderer names the null key */
        int64_t k = knut_arrow_view_get_int64(key, row);
        lo = k < lo ? k : lo;
        hi = k > hi ? k : hi;
    }
    /* Keys spread over more than twice the rows' count of existing nodes
     * are cheaper to MERGE one by one than to list; the cap also stays
     * below RESULTSET_SIZE, whose truncation the client refuses. */
    int64_t cap = 2 * n + 1, limit = knut_graph_falkor_resultset_limit(g);
    if (limit != KNUT_GRAPH_FALKOR_LIMIT_UNLIMITED && limit > 0 && cap >= limit)
        cap = limit - 1;
    if (n == 0 || cap <= n)
        return KNUT_OK;
    knut_buf q = KNUT_BUF_INIT;
    knut_graph_falkor_result r = {0};
    idmap m = {0};
    knut_status st;
    knut_buf_printf(&q, "CYPHER lo=%lld hi=%lld cap=%lld MATCH (n", (long long)lo,
                    (long long)hi, (long long)cap);
    knut_buf_putc(&q, ':');
    if ((st = knut_graph_cypher_ident(&q, set->labels[0], strlen(set->labels[0]), "label",
                                      err)) != KNUT_OK)
        goto cleanup;
    knut_buf_puts(&q, ") WHERE n.");
    const char *prop = set->keys[0].prop;
    if ((st = knut_graph_cypher_ident(&q, prop, strlen(prop), "property", err)) != KNUT_OK)
        goto cleanup;
    knut_buf_puts(&q, " >= $lo AND n.");
    knut_graph_cypher_ident(&q, prop, strlen(prop), "property", err);
    knut_buf_puts(&q, " <= $hi RETURN n.");
    knut_graph_cypher_ident(&q, prop, strlen(prop), "property", err);
    knut_buf_puts(&q, ", id(n) LIMIT $cap");
    if ((st = knut_buf_check(&q, err)) != KNUT_OK)
        goto cleanup;
    st = knut_graph_falkor_query(g, graph, q.data, KNUT_GRAPH_FALKOR_READ_ONLY, &r, err);
    /* A graph deleted behind the sink's back holds nothing: MERGE (which
     * creates it again) decides, as it would without the probe. */
    if (st == KNUT_EPEER && err && err->detail == KNUT_GRAPH_FALKOR_ERR_EMPTY_KEY) {
        knut_error_clear(err);
        st = KNUT_OK;
        goto cleanup;
    }
    if (st != KNUT_OK) {
        knut_error_prefix(err, "graph '%s': set '%s': looking up the ids of %lld rows: ", graph,
                          set->name, (long long)n);
        goto cleanup;
    }
    if (r.n_rows >= cap || r.n_rows == 0)
        goto cleanup; /* too many nodes in the span, or none: MERGE them */
    for (m.cap = 16; m.cap < (size_t)r.n_rows * 2; m.cap *= 2) {
    }
    m.keys = malloc(m.cap * sizeof *m.keys);
    m.ids = malloc(m.cap * sizeof *m.ids);
    m.used = calloc(m.cap, 1);
    if (!m.keys || !m.ids || !m.used) {
        st = knut_error_set(err, KNUT_ENOMEM, "out of memory looking up node ids");
        goto cleanup;
    }
    int ok = 0;
    if ((st = read_reply(&r, &m, &ok, err)) != KNUT_OK || !ok)
        goto cleanup;
    for (int64_t j = 0; j < n; j++) {
        int64_t row = knut_arrow_view_child_row(batch, from + j);
        ids[j] = map_get(&m, knut_arrow_view_get_int64(key, row));
    }
cleanup:
    free(m.keys);
    free(m.ids);
    free(m.used);
    knut_graph_falkor_result_reset(&r);
    knut_buf_reset(&q);
    return st;
}
