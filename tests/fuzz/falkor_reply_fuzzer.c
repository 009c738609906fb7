/*
 * Fuzz target for the FalkorDB compact-reply decoder: RESP2 bytes go
 * through the same scanner and decoder the client uses on the socket. The
 * first byte picks the limits (depth cap, rows per batch). A decoded
 * result must validate as Arrow at the FULL level and every value is read
 * through the views; a failure must leave nothing behind and say why.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "knut/arrow.h"
#include "knut/graph.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const NAMES[16] = {"A", "B", "C", "D", "E", "F", "G", "H",
                                      "I", "J", "K", "L", "M", "N", "O", "P"};

static uint64_t touch(const knut_arrow_view *v, int64_t i)
{
    int64_t len, s, e;
    uint64_t h = 0;
    const char *p;
    if (knut_arrow_view_is_null(v, i))
        return 1;
    switch (v->type.type) {
    case KNUT_ARROW_UTF8:
        p = knut_arrow_view_get_str(v, i, &len);
        return len > 0 ? (uint8_t)p[len - 1] : 2;
    case KNUT_ARROW_FLOAT:
    case KNUT_ARROW_DOUBLE:
        return (uint64_t)(knut_arrow_view_get_double(v, i) != 0.0);
    case KNUT_ARROW_LIST:
    case KNUT_ARROW_MAP:
        knut_arrow_view_list_range(v, i, &s, &e);
        for (int64_t k = s; k < e; k++)
            h += touch(&v->children[0], k);
        return h;
    case KNUT_ARROW_STRUCT:
        for (int64_t k = 0; k < v->n_children; k++)
            h += touch(&v->children[k], knut_arrow_view_child_row(v, i));
        return h;
    default:
        return (uint64_t)knut_arrow_view_get_int64(v, i);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static volatile uint64_t sink;
    knut_graph_falkor_names names = {NAMES, 16, NAMES, 16, NAMES, 16};
    knut_graph_falkor_options o = KNUT_GRAPH_FALKOR_OPTIONS_INIT;
    knut_graph_falkor_result r;
    knut_error err = KNUT_ERROR_INIT;
    if (size < 1)
        return 0;
    o.max_depth = (data[0] & 1) ? 12 : 0;
    o.batch_rows = 1 + ((data[0] >> 1) & 3);
    o.max_reply_bytes = 1 << 20;
    if (knut_graph_falkor_reply_decode(&r, data + 1, size - 1, &names, &o, &err) != KNUT_OK) {
        if (r.stream.release != NULL || err.message[0] == '\0')
            __builtin_trap();
        return 0;
    }
    struct ArrowSchema schema;
    struct ArrowArray *arrays = NULL;
    int64_t n = 0, rows = 0;
    if (knut_arrow_stream_collect(&r.stream, &schema, &arrays, &n, 0, &err) != KNUT_OK)
        __builtin_trap();
    for (int64_t b = 0; b < n; b++) {
        knut_arrow_view v;
        if (knut_arrow_array_validate(&schema, &arrays[b],
                                      KNUT_ARROW_VALIDATE_FULL | KNUT_ARROW_VALIDATE_UTF8,
                                      &err) != KNUT_OK)
            __builtin_trap(); /* the decoder built an inconsistent array */
        if (knut_arrow_view_init(&v, &schema, &arrays[b], &err) != KNUT_OK)
            __builtin_trap();
        for (int64_t i = 0; i < v.length; i++)
            sink += touch(&v, i);
        rows += v.length;
        knut_arrow_view_reset(&v);
    }
    if (rows != r.n_rows || schema.n_children != r.n_columns)
        __builtin_trap();
    knut_arrow_arrays_free(arrays, n);
    knut_arrow_schema_release(&schema);
    knut_graph_falkor_result_reset(&r);
    return 0;
}
