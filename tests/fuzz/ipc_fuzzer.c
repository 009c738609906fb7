/*
 * Fuzz target for the Arrow IPC stream reader: reads every batch of the
 * input, touches every value a consumer could (through the read views, so
 * an out-of-bounds buffer shows up under ASan), and releases everything.
 * Small limits keep a hostile length from being an allocation test.
 */
#include <stddef.h>
#include <stdint.h>

#include "knut/arrow.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Values left to read for the current input: a list<null> may claim
 * billions of child rows without a byte of body. */
static int64_t budget;

/* Reads row i of v and its children; returns a checksum so the reads are
 * not optimised away. */
static uint64_t touch(const knut_arrow_view *v, int64_t i)
{
    if (--budget < 0)
        return 0;
    if (knut_arrow_view_is_null(v, i))
        return 1;
    int64_t len, s, e;
    uint64_t h = 0;
    const char *p;
    switch (v->type.type) {
    case KNUT_ARROW_NA:
        return 1;
    case KNUT_ARROW_UTF8: case KNUT_ARROW_LARGE_UTF8: case KNUT_ARROW_BINARY:
    case KNUT_ARROW_LARGE_BINARY: case KNUT_ARROW_FIXED_BINARY: case KNUT_ARROW_DECIMAL128:
    case KNUT_ARROW_INTERVAL_DAY_TIME: case KNUT_ARROW_INTERVAL_MDN:
        p = knut_arrow_view_get_bytes(v, i, &len);
        for (int64_t k = 0; k < len; k++)
            h = h * 31 + (uint8_t)p[k];
        return h;
    case KNUT_ARROW_LIST: case KNUT_ARROW_LARGE_LIST: case KNUT_ARROW_MAP:
        knut_arrow_view_list_range(v, i, &s, &e);
        for (int64_t k = s; k < e; k++)
            h += touch(&v->children[0], k);
        return h;
    case KNUT_ARROW_STRUCT:
        for (int64_t k = 0; k < v->n_children; k++)
            h += touch(&v->children[k], knut_arrow_view_child_row(v, i));
        return h;
    case KNUT_ARROW_BOOL:
        return (uint64_t)knut_arrow_view_get_bool(v, i);
    default: /* fixed width: the raw bytes (a float cast to int could be UB) */
        p = knut_arrow_view_get_bytes(v, i, &len);
        for (int64_t k = 0; k < len; k++)
            h = h * 31 + (uint8_t)p[k];
        return h;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    knut_arrow_ipc_source src;
    knut_arrow_ipc_reader *r = NULL;
    knut_arrow_ipc_read_options opts = KNUT_ARROW_IPC_READ_OPTIONS_INIT;
    opts.max_metadata = 1 << 20;
    opts.max_body = 16 << 20;
    opts.max_fields = 1024;
    static volatile uint64_t sink;
    if (knut_arrow_ipc_source_mem(&src, data, size, NULL) != KNUT_OK)
        return 0;
    if (knut_arrow_ipc_reader_new(&r, src, &opts, NULL) != KNUT_OK)
        return 0;
    for (int batch = 0; batch < 64; batch++) {
        struct ArrowArray a;
        knut_arrow_view v;
        if (knut_arrow_ipc_reader_next(r, &a, NULL) != KNUT_OK || !a.release)
            break;
        if (knut_arrow_view_init(&v, knut_arrow_ipc_reader_schema(r), &a, NULL) == KNUT_OK) {
            budget = 1 << 20;
            for (int64_t i = 0; i < a.length && budget > 0; i++)
                sink += touch(&v, i);
            knut_arrow_view_reset(&v);
        }
        knut_arrow_array_release(&a);
    }
    knut_arrow_ipc_reader_free(r);
    return 0;
}
