/*
 * The bulk writer (knut_graph_falkor_bulk_*): GRAPH.BULK for callers that
 * are not `knut load`, such as sync's first round. The caller assigns
 * nothing: node ids follow from send order, the writer counts them and
 * gives each set its first id; edges arrive with resolved ids. The calls
 * and the encoding are falkor_bulk_enc.c's.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "falkor_int.h"

struct knut_graph_falkor_bulk {
    fbulk_io io;
    char *graph;
    int64_t nodes, edges; /* sent */
    int failed;
};

knut_status knut_graph_falkor_bulk_new(knut_graph_falkor_bulk **out, knut_graph_falkor *g,
                                       const char *graph, knut_error *err)
{
    KNUT_ASSERT_ARG(err, out && g && graph);
    *out = NULL;
    knut_graph_falkor_bulk *b = calloc(1, sizeof *b);
    char *name = strdup(graph);
    if (!b || !name) {
        free(b);
        free(name);
        return knut_error_set(err, KNUT_ENOMEM, "bulk: out of memory");
    }
    b->graph = name;
    b->io.g = g;
    b->io.graph = b->graph;
    knut_buf_init(&b->io.blob, KNUT_FBULK_BLOB_MAX + ((size_t)1 << 20)); /* + one record */
    *out = b;
    return KNUT_OK;
}

static int type_ok(const struct ArrowSchema *c)
{
    knut_arrow_type_info t;
    knut_error e = KNUT_ERROR_INIT;
    if (!c->format || knut_arrow_format_parse(c->format, &t, &e) != KNUT_OK)
        return 0;
    switch (t.type) {
    case KNUT_ARROW_BOOL: case KNUT_ARROW_INT8: case KNUT_ARROW_INT16: case KNUT_ARROW_INT32:
    case KNUT_ARROW_INT64: case KNUT_ARROW_UINT8: case KNUT_ARROW_UINT16:
    case KNUT_ARROW_UINT32: case KNUT_ARROW_FLOAT: case KNUT_ARROW_DOUBLE:
    case KNUT_ARROW_UTF8: case KNUT_ARROW_LARGE_UTF8:
        return 1;
    default:
        return 0; /* temporal values would need a conversion pass; lists, maps: MERGE */
    }
}

int knut_graph_falkor_bulk_types_ok(const struct ArrowSchema *schema, int64_t first)
{
    if (!schema || schema->n_children - first >= 65535)
        return 0;
    for (int64_t k = first; k < schema->n_children; k++)
        if (!type_ok(schema->children[k]) ||
            !knut_graph__fbulk_name_ok(schema->children[k]->name, 1))
            return 0;
    return 1;
}

/* Streams rows into blobs; first = 2 for edges (the two id columns), 1
 * for nodes (the position, checked against the row count). */
static knut_status send_rows(knut_graph_falkor_bulk *b, const char *name, int is_node,
                             struct ArrowArrayStream *rows, int64_t *n, knut_error *err)
{
    struct ArrowSchema sc = {0};
    struct ArrowArray batch = {0};
    knut_arrow_view view = {0};
    int64_t first = is_node ? 1 : 2, row = 0;
    knut_status st = KNUT_OK;
    *n = 0;
    if (b->failed)
        st = knut_error_set(err, KNUT_ERROR, "bulk: the writer failed earlier");
    else if (!knut_graph__fbulk_name_ok(name, 0))
        st = knut_error_set(err, KNUT_EINVAL, "bulk: '%s' cannot be a bulk label or type", name);
    if (st == KNUT_OK && rows->get_schema(rows, &sc) != 0)
        st = knut_error_set(err, KNUT_EIO, "bulk %s: %s", name, rows->get_last_error(rows));
    if (st == KNUT_OK && (sc.n_children < first + (is_node ? 1 : 0) ||
                          strcmp(sc.children[0]->format, "l") != 0 ||
                          strcmp(sc.children[first - 1]->format, "l") != 0 ||
                          !knut_graph_falkor_bulk_types_ok(&sc, first)))
        st = knut_error_set(err, KNUT_EUNSUPPORTED, "bulk %s: columns without a bulk code",
                            name);
    /* a set's records must not share a blob with another set's header */
    if (st == KNUT_OK)
        st = knut_graph__fbulk_send(&b->io, is_node, err);
    int64_t n_props = sc.n_children - first;
    while (st == KNUT_OK) {
        if (rows->get_next(rows, &batch) != 0) {
            st = knut_error_set(err, KNUT_EIO, "bulk %s: %s", name, rows->get_last_error(rows));
            break;
        }
        if (!batch.release)
            break;
        st = knut_arrow_array_validate(&sc, &batch,
                                       KNUT_ARROW_VALIDATE_FULL | KNUT_ARROW_VALIDATE_UTF8, err);
        if (st == KNUT_OK)
            st = knut_arrow_view_init(&view, &sc, &batch, err);
        for (int64_t i = 0; i < batch.length && st == KNUT_OK; i++, row++) {
            int64_t r = knut_arrow_view_child_row(&view, i), set = 0;
            if (b->io.blob_rows == 0)
                knut_graph__fbulk_header(&b->io.blob, name, &sc, first, n_props);
            if (is_node && (knut_arrow_view_is_null(&view.children[0], r) ||
                            knut_arrow_view_get_int64(&view.children[0], r) != row)) {
                /* an id would name another row's node */
                st = knut_error_set(err, KNUT_EINVAL, "bulk %s: row %" PRId64
                                    " is not at its position", name, row);
                break;
            } else if (!is_node) {
                int64_t s = knut_arrow_view_get_int64(&view.children[0], r);
                int64_t d = knut_arrow_view_get_int64(&view.children[1], r);
                if (knut_arrow_view_is_null(&view.children[0], r) ||
                    knut_arrow_view_is_null(&view.children[1], r) || s < 0 || s >= b->nodes ||
                    d < 0 || d >= b->nodes) {
                    st = knut_error_set(err, KNUT_EINVAL, "bulk %s: row %" PRId64
                                        ": endpoint id out of range", name, row);
                    break;
                }
                knut_graph__fbulk_put_u64(&b->io.blob, (uint64_t)s);
                knut_graph__fbulk_put_u64(&b->io.blob, (uint64_t)d);
            }
            for (int64_t k = first; k < sc.n_children && st == KNUT_OK; k++) {
                set += !knut_arrow_view_is_null(&view.children[k], r);
                st = knut_graph__fbulk_value(&b->io.blob, &view.children[k], r, 0,
                                             sc.children[k]->name, err);
            }
            if (st == KNUT_OK && is_node && set == 0) /* a 0-byte record breaks the reader */
                st = knut_error_set(err, KNUT_EINVAL, "every property is null");
            if (st != KNUT_OK) {
                knut_error_prefix(err, "bulk %s: row %" PRId64 ": ", name, row);
                break;
            }
            b->io.blob_rows++;
            if (b->io.blob.len >= KNUT_FBULK_BLOB_MAX)
                st = knut_graph__fbulk_send(&b->io, is_node, err);
        }
        knut_arrow_view_reset(&view);
        memset(&view, 0, sizeof view);
        batch.release(&batch);
        memset(&batch, 0, sizeof batch);
    }
    if (st == KNUT_OK)
        st = knut_graph__fbulk_send(&b->io, is_node, err);
    if (st == KNUT_OK && is_node && b->io.pending)
        st = knut_graph__fbulk_reply(&b->io, err); /* nodes are in before edges name them */
    if (st == KNUT_OK)
        *n = row;
    else
        b->failed = 1;
    if (batch.release)
        batch.release(&batch);
    knut_arrow_schema_release(&sc);
    knut_arrow_stream_release(rows);
    return st;
}

knut_status knut_graph_falkor_bulk_nodes(knut_graph_falkor_bulk *b, const char *label,
                                         struct ArrowArrayStream *rows, int64_t *first_id,
                                         int64_t *n, knut_error *err)
{
    KNUT_ASSERT_ARG(err, b && label && rows && first_id && n);
    *first_id = b->nodes;
    knut_status st = send_rows(b, label, 1, rows, n, err);
    if (st == KNUT_OK)
        b->nodes += *n;
    return st;
}

knut_status knut_graph_falkor_bulk_edges(knut_graph_falkor_bulk *b, const char *type,
                                         struct ArrowArrayStream *rows, int64_t *n,
                                         knut_error *err)
{
    KNUT_ASSERT_ARG(err, b && type && rows && n);
    knut_status st = send_rows(b, type, 0, rows, n, err);
    if (st == KNUT_OK)
        b->edges += *n;
    return st;
}

knut_status knut_graph_falkor_bulk_finish(knut_graph_falkor_bulk *b, int *begun, knut_error *err)
{
    KNUT_ASSERT_ARG(err, b && begun);
    knut_status st = b->failed ? knut_error_set(err, KNUT_ERROR, "bulk: the writer failed")
                               : KNUT_OK;
    if (st == KNUT_OK && b->io.pending)
        st = knut_graph__fbulk_reply(&b->io, err);
    *begun = b->io.begun;
    if (st == KNUT_OK && b->io.begun)
        st = knut_graph__fbulk_check_counts(b->io.g, b->graph, b->nodes, b->edges, err);
    knut_graph_falkor_names_reset(b->io.g);
    if (st != KNUT_OK)
        b->failed = 1;
    return st;
}

void knut_graph_falkor_bulk_free(knut_graph_falkor_bulk *b)
{
    if (!b)
        return;
    if (b->io.pending)
        knut_graph__falkor_drop(b->io.g); /* an unread reply would desynchronise the client */
    knut_buf_reset(&b->io.blob);
    free(b->graph);
    free(b);
}
