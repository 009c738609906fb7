/*
 * Metadata, deadlines and byte buffers between knut and the gRPC C core,
 * and the library's reference count.
 */
#include <grpc/byte_buffer_reader.h>
#include <grpc/support/time.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "grpc_int.h"

void knut_net__grpc_ref(void)
{
    grpc_init();
}

void knut_net__grpc_unref(void)
{
    grpc_shutdown();
}

gpr_timespec knut_net__grpc_deadline(int64_t ms)
{
    if (ms < 0)
        return gpr_inf_future(GPR_CLOCK_MONOTONIC);
    return gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_millis(ms, GPR_TIMESPAN));
}

int64_t knut_net__grpc_remaining_ms(gpr_timespec t)
{
    if (gpr_time_cmp(t, gpr_inf_future(t.clock_type)) == 0)
        return INT64_MAX;
    gpr_timespec now = gpr_now(t.clock_type == GPR_TIMESPAN ? GPR_CLOCK_MONOTONIC : t.clock_type);
    if (gpr_time_cmp(t, now) <= 0)
        return 0;
    gpr_timespec d = gpr_time_sub(t, now);
    return (int64_t)d.tv_sec * 1000 + d.tv_nsec / 1000000;
}

knut_status knut_net__grpc_bb_read(grpc_byte_buffer *bb, knut_buf *out, knut_error *err)
{
    knut_buf_clear(out);
    size_t max = out->max ? out->max : KNUT_BUF_DEFAULT_MAX;
    size_t n = grpc_byte_buffer_length(bb);
    if (n > max)
        return knut_error_set(err, KNUT_ETOOBIG, "gRPC message of %zu bytes over the %zu-byte cap",
                              n, max);
    grpc_byte_buffer_reader r;
    if (!grpc_byte_buffer_reader_init(&r, bb))
        return knut_error_set(err, KNUT_EPARSE, "gRPC message cannot be decompressed");
    grpc_slice s;
    while (grpc_byte_buffer_reader_next(&r, &s)) {
        knut_buf_append(out, GRPC_SLICE_START_PTR(s), GRPC_SLICE_LENGTH(s));
        grpc_slice_unref(s);
    }
    grpc_byte_buffer_reader_destroy(&r);
    return knut_buf_check(out, err);
}

grpc_byte_buffer *knut_net__grpc_bb_new(const void *data, size_t len)
{
    grpc_slice s = grpc_slice_from_copied_buffer(len ? data : "", len);
    grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(&s, 1);
    grpc_slice_unref(s);
    return bb;
}

void knut_net__grpc_slice_str(grpc_slice s, char *dst, size_t n)
{
    size_t len = GRPC_SLICE_LENGTH(s);
    if (len >= n)
        len = n - 1;
    memcpy(dst, GRPC_SLICE_START_PTR(s), len);
    dst[len] = 0;
}

int knut_net_grpc_key_is_binary(const char *key)
{
    size_t n = key ? strlen(key) : 0;
    return n > 4 && strcasecmp(key + n - 4, "-bin") == 0;
}

knut_status knut_net_grpc_metadata_add(knut_net_grpc_metadata *md, const char *key,
                                       const void *value, size_t len, knut_error *err)
{
    KNUT_ASSERT_ARG(err, md && key && (value || len == 0));
    size_t kn = strlen(key);
    if (kn == 0 || kn > 255)
        return knut_error_set(err, KNUT_EINVAL, "gRPC metadata key of %zu bytes", kn);
    for (const char *p = key; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '-' || *p == '_' || *p == '.'))
            return knut_error_set(err, KNUT_EINVAL, "gRPC metadata key '%.64s': only letters, "
                                                    "digits, '-', '_' and '.'", key);
    if (!knut_net_grpc_key_is_binary(key))
        for (size_t i = 0; i < len; i++) {
            unsigned char ch = ((const unsigned char *)value)[i];
            if (ch < 0x20 || ch > 0x7e) /* the value itself is not quoted: it may be a secret */
                return knut_error_set(err, KNUT_EINVAL,
                                      "gRPC metadata '%.64s': a text value is printable ASCII "
                                      "(name the key ...-bin for bytes)", key);
        }
    if (md->count >= KNUT_NET_GRPC_MAX_HEADERS || kn + len > KNUT_NET_GRPC_MAX_METADATA ||
        md->bytes > KNUT_NET_GRPC_MAX_METADATA - kn - len)
        return knut_error_set(err, KNUT_ETOOBIG, "gRPC metadata over %d entries or %zu bytes",
                              KNUT_NET_GRPC_MAX_HEADERS, (size_t)KNUT_NET_GRPC_MAX_METADATA);
    if (md->count == md->cap) {
        size_t cap = md->cap ? md->cap * 2 : 8;
        knut_net_grpc_header *items = realloc(md->items, cap * sizeof *items);
        if (!items)
            return knut_error_set(err, KNUT_ENOMEM, "out of memory");
        md->items = items;
        md->cap = cap;
    }
    char *k = malloc(kn + 1), *v = malloc(len + 1);
    if (!k || !v) {
        free(k);
        free(v);
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i <= kn; i++) /* gRPC keys are lowercase on the wire */
        k[i] = (char)(key[i] >= 'A' && key[i] <= 'Z' ? key[i] - 'A' + 'a' : key[i]);
    if (len)
        memcpy(v, value, len);
    v[len] = 0;
    md->items[md->count++] = (knut_net_grpc_header){k, v, len};
    md->bytes += kn + len;
    return KNUT_OK;
}

const knut_net_grpc_header *knut_net_grpc_metadata_find(const knut_net_grpc_metadata *md,
                                                        const char *key)
{
    if (!md || !key)
        return NULL;
    for (size_t i = 0; i < md->count; i++)
        if (strcasecmp(md->items[i].key, key) == 0)
            return &md->items[i];
    return NULL;
}

void knut_net_grpc_metadata_reset(knut_net_grpc_metadata *md)
{
    if (!md)
        return;
    for (size_t i = 0; i < md->count; i++) {
        volatile char *p = md->items[i].value; /* volatile: the wipe must stay */
        for (size_t j = 0; j < md->items[i].len; j++)
            p[j] = 0;
        free(md->items[i].key);
        free(md->items[i].value);
    }
    free(md->items);
    memset(md, 0, sizeof *md);
}

void knut_net_grpc_status_reset(knut_net_grpc_status *st)
{
    if (!st)
        return;
    knut_net_grpc_metadata_reset(&st->trailers);
    st->code = 0;
    st->message[0] = 0;
}

knut_status knut_net__grpc_md_out(const knut_net_grpc_metadata *md, grpc_metadata **out,
                                  knut_error *err)
{
    *out = NULL;
    if (!md || md->count == 0)
        return KNUT_OK;
    grpc_metadata *a = calloc(md->count, sizeof *a);
    if (!a)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    for (size_t i = 0; i < md->count; i++) {
        /* static slices: they point into md, which outlives the batch */
        a[i].key = grpc_slice_from_static_string(md->items[i].key);
        a[i].value = grpc_slice_from_static_buffer(md->items[i].value, md->items[i].len);
    }
    *out = a;
    return KNUT_OK;
}

knut_status knut_net__grpc_md_in(const grpc_metadata_array *in, knut_net_grpc_metadata *md,
                                 knut_error *err)
{
    knut_net_grpc_metadata_reset(md);
    for (size_t i = 0; i < in->count; i++) {
        char key[256];
        if (GRPC_SLICE_LENGTH(in->metadata[i].key) >= sizeof key)
            continue; /* gRPC itself refuses such keys */
        knut_net__grpc_slice_str(in->metadata[i].key, key, sizeof key);
        knut_error e = KNUT_ERROR_INIT;
        knut_status st = knut_net_grpc_metadata_add(md, key,
                                                    GRPC_SLICE_START_PTR(in->metadata[i].value),
                                                    GRPC_SLICE_LENGTH(in->metadata[i].value), &e);
        if (st == KNUT_ETOOBIG || st == KNUT_ENOMEM)
            return knut_error_set(err, st, "%s", e.message);
        /* a text value that is not printable ASCII is dropped, as gRPC drops
         * what it cannot pass on */
    }
    return KNUT_OK;
}
