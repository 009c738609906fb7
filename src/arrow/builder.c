/*
 * Array builders: growable 64-byte-aligned buffers with a per-buffer cap,
 * and the append operations for every supported type. The validity bitmap
 * is only allocated at the first null, so all-valid columns never touch it
 * and the inline append in arrow.h stays a bounds check plus a memcpy.
 * Finishing into an ArrowArray lives in builder_finish.c.
 */
#include "arrow_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builder_int.h"

#define BUF_ALIGN 64

static knut_status too_big(const knut_arrow_builder *b, const char *what, knut_error *err)
{
    return knut_error_set(err, KNUT_ETOOBIG, "column '%s': %s would exceed %lld bytes", b->name,
                          what, (long long)b->max_bytes);
}

knut_status knut_arrow__bytes_reserve(knut_arrow_builder *b, knut_arrow_bytes *buf,
                                      int64_t extra, knut_error *err)
{
    if (extra <= buf->cap - buf->len)
        return KNUT_OK;
    int64_t max = b->max_bytes;
    if (extra < 0 || extra > max - buf->len)
        return too_big(b, "a buffer", err);
    int64_t need = buf->len + extra;
    int64_t cap = buf->cap < BUF_ALIGN ? BUF_ALIGN : buf->cap;
    while (cap < need)
        cap = cap > max / 2 ? max : cap * 2;
    cap = (cap + BUF_ALIGN - 1) & ~(int64_t)(BUF_ALIGN - 1);
    if (cap > max)
        cap = max;
    void *p = NULL;
    if (posix_memalign(&p, BUF_ALIGN, (size_t)cap) != 0)
        return knut_error_set(err, KNUT_ENOMEM, "column '%s': out of memory growing to %lld bytes",
                              b->name, (long long)cap);
    if (buf->len > 0)
        memcpy(p, buf->data, (size_t)buf->len);
    /* Bitmaps are written bit by bit, so they start cleared; value and data
     * bytes are always written before use (finish zeroes their padding). */
    if (buf == &b->validity || (buf == &b->values && b->type.type == KNUT_ARROW_BOOL))
        memset((uint8_t *)p + buf->len, 0, (size_t)(cap - buf->len));
    free(buf->data);
    buf->data = p;
    buf->cap = cap;
    return KNUT_OK;
}

/* Sets bit i of a bitmap buffer, growing it to cover i. */
static knut_status bit_put(knut_arrow_builder *b, knut_arrow_bytes *bm, int64_t i, int v,
                           knut_error *err)
{
    int64_t need = (i >> 3) + 1;
    if (need > bm->len) {
        knut_status st = knut_arrow__bytes_reserve(b, bm, need - bm->len, err);
        if (st != KNUT_OK)
            return st;
        bm->len = need;
    }
    if (v)
        bm->data[i >> 3] |= (uint8_t)(1u << (i & 7));
    else
        bm->data[i >> 3] &= (uint8_t)~(1u << (i & 7));
    return KNUT_OK;
}

/* Sets bits [start, start + n) of a bitmap that already covers them. */
static void bits_fill(uint8_t *bits, int64_t start, int64_t n, int v)
{
    int64_t i = start, end = start + n;
    for (; i < end && (i & 7); i++)
        bits[i >> 3] = v ? (uint8_t)(bits[i >> 3] | (1u << (i & 7)))
                         : (uint8_t)(bits[i >> 3] & ~(1u << (i & 7)));
    if (end - i >= 8) {
        memset(bits + (i >> 3), v ? 0xff : 0, (size_t)((end - i) >> 3));
        i += (end - i) & ~(int64_t)7;
    }
    for (; i < end; i++)
        bits[i >> 3] = v ? (uint8_t)(bits[i >> 3] | (1u << (i & 7)))
                         : (uint8_t)(bits[i >> 3] & ~(1u << (i & 7)));
}

/* Makes the validity bitmap exist, with rows 0 .. length-1 valid. */
static knut_status validity_start(knut_arrow_builder *b, knut_error *err)
{
    if (b->validity.data != NULL)
        return KNUT_OK;
    int64_t bytes = (b->length >> 3) + 1;
    knut_status st = knut_arrow__bytes_reserve(b, &b->validity, bytes, err);
    if (st != KNUT_OK)
        return st;
    bits_fill(b->validity.data, 0, b->length, 1);
    b->validity.len = (b->length + 7) >> 3;
    return KNUT_OK;
}

/* Records the validity of row `length` (before the value lands). */
static knut_status set_valid(knut_arrow_builder *b, int valid, knut_error *err)
{
    if (b->validity.data == NULL) {
        if (valid)
            return KNUT_OK;
        knut_status st = validity_start(b, err);
        if (st != KNUT_OK)
            return st;
    }
    return bit_put(b, &b->validity, b->length, valid, err);
}

/* Writes offset[0] = 0 for offset types that have none yet. */
knut_status knut_arrow__offsets_start(knut_arrow_builder *b, knut_error *err)
{
    int ow = knut_arrow__offset_width(b->type.type);
    if (ow == 0 || b->values.len > 0)
        return KNUT_OK;
    knut_status st = knut_arrow__bytes_reserve(b, &b->values, ow, err);
    if (st != KNUT_OK)
        return st;
    memset(b->values.data, 0, (size_t)ow);
    b->values.len = ow;
    return KNUT_OK;
}

int64_t knut_arrow__last_offset(const knut_arrow_builder *b)
{
    int ow = knut_arrow__offset_width(b->type.type);
    if (b->values.len == 0)
        return 0;
    return knut_arrow__offset_at(b->values.data, ow, b->values.len / ow - 1);
}

static knut_status push_offset(knut_arrow_builder *b, int64_t off, knut_error *err)
{
    int ow = knut_arrow__offset_width(b->type.type);
    knut_status st = knut_arrow__offsets_start(b, err);
    if (st == KNUT_OK)
        st = knut_arrow__bytes_reserve(b, &b->values, ow, err);
    if (st != KNUT_OK)
        return st;
    if (ow == 8) {
        memcpy(b->values.data + b->values.len, &off, 8);
    } else {
        int32_t o = (int32_t)off;
        memcpy(b->values.data + b->values.len, &o, 4);
    }
    b->values.len += ow;
    return KNUT_OK;
}

/* Appends one fixed-width value (v == NULL: zeros) with its validity. */
static knut_status push_fixed(knut_arrow_builder *b, const void *v, int valid, knut_error *err)
{
    int64_t w = b->type.byte_width;
    knut_status st = knut_arrow__bytes_reserve(b, &b->values, w, err);
    if (st == KNUT_OK)
        st = set_valid(b, valid, err);
    if (st != KNUT_OK)
        return st;
    if (v != NULL)
        memcpy(b->values.data + b->values.len, v, (size_t)w);
    else
        memset(b->values.data + b->values.len, 0, (size_t)w);
    b->values.len += w;
    b->length++;
    if (!valid)
        b->null_count++;
    return KNUT_OK;
}

static knut_status push_bool(knut_arrow_builder *b, int v, int valid, knut_error *err)
{
    knut_status st = set_valid(b, valid, err);
    if (st == KNUT_OK)
        st = bit_put(b, &b->values, b->length, v, err);
    if (st != KNUT_OK)
        return st;
    b->length++;
    if (!valid)
        b->null_count++;
    return KNUT_OK;
}

knut_status knut_arrow_builder__append_fixed_slow(knut_arrow_builder *b, const void *v,
                                                  knut_error *err)
{
    if (b->type.byte_width <= 0)
        return knut_error_set(err, KNUT_EINVAL, "column '%s': %s is not a fixed-width type",
                              b->name, knut_arrow_type_name(b->type.type));
    return push_fixed(b, v, 1, err);
}

static knut_status wrong_type(const knut_arrow_builder *b, const char *op, knut_error *err)
{
    return knut_error_set(err, KNUT_EINVAL, "column '%s': cannot %s to a %s column", b->name, op,
                          knut_arrow_type_name(b->type.type));
}

static knut_status list_pending(const knut_arrow_builder *b, knut_error *err)
{
    if (b->children[0]->length != knut_arrow__last_offset(b))
        return knut_error_set(err, KNUT_EINVAL,
                              "column '%s': child has items not closed by finish_element",
                              b->name);
    return KNUT_OK;
}

/* A null (valid == 0) or empty (valid == 1) row of any type. */
static knut_status append_blank(knut_arrow_builder *b, int valid, knut_error *err)
{
    knut_status st = KNUT_OK;
    knut_arrow_type t = b->type.type;
    if (t == KNUT_ARROW_NA) {
        b->length++;
        b->null_count++;
        return KNUT_OK;
    }
    if (t == KNUT_ARROW_BOOL)
        return push_bool(b, 0, valid, err);
    if (b->type.byte_width > 0)
        return push_fixed(b, NULL, valid, err);
    if (t == KNUT_ARROW_STRUCT) {
        /* Children need a value at every row; nullable ones get a null. */
        for (int64_t i = 0; i < b->n_children && st == KNUT_OK; i++) {
            knut_arrow_builder *c = b->children[i];
            int child_null = !valid && (c->flags & ARROW_FLAG_NULLABLE);
            st = append_blank(c, !child_null, err);
        }
    } else if (knut_arrow__is_list(t)) {
        if (b->n_children != 1)
            return knut_error_set(err, KNUT_EINVAL, "column '%s': list has no child builder",
                                  b->name);
        st = list_pending(b, err);
        if (st == KNUT_OK)
            st = set_valid(b, valid, err);
        if (st == KNUT_OK)
            st = push_offset(b, knut_arrow__last_offset(b), err);
    } else {
        st = set_valid(b, valid, err);
        if (st == KNUT_OK)
            st = push_offset(b, knut_arrow__last_offset(b), err);
    }
    if (st == KNUT_OK && t == KNUT_ARROW_STRUCT)
        st = set_valid(b, valid, err);
    if (st != KNUT_OK)
        return st;
    b->length++;
    if (!valid)
        b->null_count++;
    return KNUT_OK;
}

knut_status knut_arrow_builder_append_null(knut_arrow_builder *b, knut_error *err)
{
    KNUT_ASSERT_ARG(err, b != NULL);
    return append_blank(b, 0, err);
}

knut_status knut_arrow_builder_append_nulls(knut_arrow_builder *b, int64_t n, knut_error *err)
{
    KNUT_ASSERT_ARG(err, b != NULL && n >= 0);
    for (int64_t i = 0; i < n; i++) {
        knut_status st = append_blank(b, 0, err);
        if (st != KNUT_OK)
            return st;
    }
    return KNUT_OK;
}

knut_status knut_arrow_builder_append_empty(knut_arrow_builder *b, knut_error *err)
{
    KNUT_ASSERT_ARG(err, b != NULL);
    if (b->type.type == KNUT_ARROW_NA)
        return wrong_type(b, "append a non-null value", err);
    return append_blank(b, 1, err);
}

static knut_status out_of_range(const knut_arrow_builder *b, const char *v, knut_error *err)
{
    return knut_error_set(err, KNUT_EINVAL, "column '%s': value %s out of range for %s", b->name,
                          v, knut_arrow_type_name(b->type.type));
}

#define PUSH_AS(ctype, val)                   \
    do {                                      \
        ctype x_ = (ctype)(val);              \
        return push_fixed(b, &x_, 1, err);    \
    } while (0)

#define PUSH_RANGED(ctype, lo, hi)                                      \
    do {                                                                \
        if (v < (lo) || v > (hi)) {                                     \
            char s_[32];                                                \
            snprintf(s_, sizeof(s_), "%lld", (long long)v);             \
            return out_of_range(b, s_, err);                            \
        }                                                               \
        PUSH_AS(ctype, v);                                              \
    } while (0)

knut_status knut_arrow_builder_append_int(knut_arrow_builder *b, int64_t v, knut_error *err)
{
    KNUT_ASSERT_ARG(err, b != NULL);
    switch (b->type.type) {
    case KNUT_ARROW_BOOL:
        return push_bool(b, v != 0, 1, err);
    case KNUT_ARROW_INT8: PUSH_RANGED(int8_t, INT8_MIN, INT8_MAX);
    case KNUT_ARROW_UINT8: PUSH_RANGED(uint8_t, 0, UINT8_MAX);
    case KNUT_ARROW_INT16: PUSH_RANGED(int16_t, INT16_MIN, INT16_MAX);
    case KNUT_ARROW_UINT16: PUSH_RANGED(uint16_t, 0, UINT16_MAX);
    case KNUT_ARROW_INT32:
    case KNUT_ARROW_DATE32:
    case KNUT_ARROW_TIME32:
    case KNUT_ARROW_INTERVAL_MONTHS: PUSH_RANGED(int32_t, INT32_MIN, INT32_MAX);
    case KNUT_ARROW_UINT32: PUSH_RANGED(uint32_t, 0, UINT32_MAX);
    case KNUT_ARROW_INT64:
    case KNUT_ARROW_DATE64:
    case KNUT_ARROW_TIME64:
    case KNUT_ARROW_TIMESTAMP:
    case KNUT_ARROW_DURATION: PUSH_AS(int64_t, v);
    case KNUT_ARROW_UINT64: PUSH_RANGED(uint64_t, 0, INT64_MAX);
    case KNUT_ARROW_FLOAT: PUSH_AS(float, v);
    case KNUT_ARROW_DOUBLE: PUSH_AS(double, v);
    default:
        return wrong_type(b, "append an integer", err);
    }
}

knut_status knut_arrow_builder_append_uint(knut_arrow_builder *b, uint64_t v, knut_error *err)
{
    KNUT_ASSERT_ARG(err, b != NULL);
    if (v <= (uint64_t)INT64_MAX)
        return knut_arrow_builder_append_int(b, (int64_t)v, err);
    switch (b->type.type) {
    case KNUT_ARROW_UINT64: PUSH_AS(uint64_t, v);
    case KNUT_ARROW_FLOAT: PUSH_AS(float, v);
    case KNUT_ARROW_DOUBLE: PUSH_AS(double, v);
    case KNUT_ARROW_BOOL:
        return push_bool(b, 1, 1, err);
    default: {
        char s[32];
        snprintf(s, sizeof(s), "%llu", (unsigned long long)v);
        return out_of_range(b, s, err);
    }
    }
}

knut_status knut_arrow_builder_append_double(knut_arrow_builder *b, double v, knut_error *err)
{
    KNUT_ASSERT_ARG(err, b != NULL);
    if (b->type.type == KNUT_ARROW_DOUBLE)
        PUSH_AS(double, v);
    if (b->type.type == KNUT_ARROW_FLOAT)
        PUSH_AS(float, v);
    return wrong_type(b, "append a double", err);
}

knut_status knut_arrow_builder_append_bool(knut_arrow_builder *b, int v, knut_error *err)
{
    KNUT_ASSERT_ARG(err, b != NULL);
    if (b->type.type != KNUT_ARROW_BOOL)
        return wrong_type(b, "append a bool", err);
    return push_bool(b, v != 0, 1, err);
}

knut_status knut_arrow_builder_append_bytes(knut_arrow_builder *b, const void *p, size_t len,
                                            knut_error *err)
{
    KNUT_ASSERT_ARG(err, b != NULL);
    KNUT_ASSERT_ARG(err, p != NULL || len == 0);
    knut_arrow_type t = b->type.type;
    if (!knut_arrow__is_varlen(t)) {
        if (b->type.byte_width <= 0)
            return wrong_type(b, "append bytes", err);
        if (len != (size_t)b->type.byte_width)
            return knut_error_set(err, KNUT_EINVAL, "column '%s': %zu bytes for a %d-byte %s",
                                  b->name, len, (int)b->type.byte_width,
                                  knut_arrow_type_name(t));
        return push_fixed(b, p, 1, err);
    }
    if (len > (size_t)INT64_MAX - (size_t)b->data.len)
        return too_big(b, "the data buffer", err);
    int64_t end = b->data.len + (int64_t)len;
    int ow = knut_arrow__offset_width(t);
    /* Fast path: room in both buffers, no bitmap, offsets started. */
    if (b->validity.data == NULL && b->values.len > 0 && (int64_t)len <= b->data.cap - b->data.len &&
        ow <= b->values.cap - b->values.len && (ow == 8 || end <= INT32_MAX)) {
        if (len > 0)
            memcpy(b->data.data + b->data.len, p, len);
        if (ow == 8) {
            memcpy(b->values.data + b->values.len, &end, 8);
        } else {
            int32_t o = (int32_t)end;
            memcpy(b->values.data + b->values.len, &o, 4);
        }
        b->values.len += ow;
        b->data.len = end;
        b->length++;
        return KNUT_OK;
    }
    if (ow == 4 && end > INT32_MAX)
        return knut_error_set(err, KNUT_ETOOBIG,
                              "column '%s': %s data past 2 GiB overflows int32 offsets "
                              "(use the large type)",
                              b->name, knut_arrow_type_name(t));
    /* The offset goes last: once it is pushed the row is committed. */
    knut_status st = knut_arrow__bytes_reserve(b, &b->data, (int64_t)len, err);
    if (st == KNUT_OK)
        st = set_valid(b, 1, err);
    if (st == KNUT_OK)
        st = push_offset(b, end, err);
    if (st != KNUT_OK)
        return st;
    if (len > 0)
        memcpy(b->data.data + b->data.len, p, len);
    b->data.len = end;
    b->length++;
    return KNUT_OK;
}

knut_status knut_arrow_builder_append_values(knut_arrow_builder *b, const void *values,
                                             int64_t n, const uint8_t *valid, knut_error *err)
{
    KNUT_ASSERT_ARG(err, b != NULL && n >= 0);
    KNUT_ASSERT_ARG(err, values != NULL || n == 0);
    int is_bool = b->type.type == KNUT_ARROW_BOOL;
    int64_t w = b->type.byte_width;
    knut_status st;
    if (!is_bool && w <= 0)
        return wrong_type(b, "append fixed-width values", err);
    if (n == 0)
        return KNUT_OK;
    int64_t nulls = 0;
    if (valid != NULL) {
        for (int64_t i = 0; i < n; i++)
            nulls += valid[i] == 0;
    }
    if (n > INT64_MAX / 8 - b->length)
        return too_big(b, "the values buffer", err);
    int64_t end = b->length + n;
    if (is_bool) {
        st = knut_arrow__bytes_reserve(b, &b->values, ((end + 7) >> 3) - b->values.len, err);
    } else {
        if (n > (b->max_bytes - b->values.len) / w)
            return too_big(b, "the values buffer", err);
        st = knut_arrow__bytes_reserve(b, &b->values, n * w, err);
    }
    if (st == KNUT_OK && nulls > 0)
        st = validity_start(b, err);
    if (st == KNUT_OK && b->validity.data != NULL)
        st = knut_arrow__bytes_reserve(b, &b->validity, ((end + 7) >> 3) - b->validity.len, err);
    if (st != KNUT_OK)
        return st;

    if (b->validity.data != NULL) {
        if (valid == NULL) {
            bits_fill(b->validity.data, b->length, n, 1);
        } else {
            for (int64_t i = 0; i < n; i++)
                bits_fill(b->validity.data, b->length + i, 1, valid[i] != 0);
        }
        b->validity.len = (end + 7) >> 3;
    }
    if (is_bool) {
        const uint8_t *src = values;
        for (int64_t i = 0; i < n; i++)
            bits_fill(b->values.data, b->length + i, 1, src[i] != 0);
        b->values.len = (end + 7) >> 3;
    } else {
        memcpy(b->values.data + b->values.len, values, (size_t)(n * w));
        b->values.len += n * w;
    }
    b->length = end;
    b->null_count += nulls;
    return KNUT_OK;
}

knut_status knut_arrow_builder_finish_element(knut_arrow_builder *b, knut_error *err)
{
    KNUT_ASSERT_ARG(err, b != NULL);
    knut_status st;
    knut_arrow_type t = b->type.type;
    if (t == KNUT_ARROW_STRUCT) {
        for (int64_t i = 0; i < b->n_children; i++) {
            if (b->children[i]->length != b->length + 1)
                return knut_error_set(err, KNUT_EINVAL,
                                      "column '%s': child '%s' has %lld values at row %lld",
                                      b->name, b->children[i]->name,
                                      (long long)b->children[i]->length, (long long)b->length);
        }
    } else if (knut_arrow__is_list(t)) {
        if (b->n_children != 1)
            return knut_error_set(err, KNUT_EINVAL, "column '%s': list has no child builder",
                                  b->name);
        int64_t end = b->children[0]->length;
        if (end < knut_arrow__last_offset(b))
            return knut_error_set(err, KNUT_EINVAL, "column '%s': child shrank below offset",
                                  b->name);
        if (knut_arrow__offset_width(t) == 4 && end > INT32_MAX)
            return knut_error_set(err, KNUT_ETOOBIG,
                                  "column '%s': list child past INT32_MAX items (use large_list)",
                                  b->name);
        st = set_valid(b, 1, err);
        if (st == KNUT_OK)
            st = push_offset(b, end, err);
        if (st != KNUT_OK)
            return st;
        b->length++;
        return KNUT_OK;
    } else {
        return wrong_type(b, "finish an element", err);
    }
    st = set_valid(b, 1, err);
    if (st != KNUT_OK)
        return st;
    b->length++;
    return KNUT_OK;
}

knut_status knut_arrow_builder_reserve(knut_arrow_builder *b, int64_t n, int64_t avg_bytes,
                                       knut_error *err)
{
    KNUT_ASSERT_ARG(err, b != NULL && n >= 0 && avg_bytes >= 0);
    knut_status st = KNUT_OK;
    int64_t end = b->length + n;
    int ow = knut_arrow__offset_width(b->type.type);
    if (n > b->max_bytes)
        return too_big(b, "a reservation", err);
    if (b->type.type == KNUT_ARROW_BOOL)
        st = knut_arrow__bytes_reserve(b, &b->values, ((end + 7) >> 3) - b->values.len, err);
    else if (b->type.byte_width > 0)
        st = (n > b->max_bytes / b->type.byte_width)
                 ? too_big(b, "a reservation", err)
                 : knut_arrow__bytes_reserve(b, &b->values, n * b->type.byte_width, err);
    else if (ow > 0)
        st = knut_arrow__bytes_reserve(b, &b->values, (end + 1) * ow - b->values.len, err);
    if (st == KNUT_OK && knut_arrow__is_varlen(b->type.type)) {
        if (avg_bytes > 0 && n > b->max_bytes / avg_bytes)
            return too_big(b, "a reservation", err);
        st = knut_arrow__bytes_reserve(b, &b->data, n * avg_bytes, err);
    }
    if (st == KNUT_OK && b->validity.data != NULL)
        st = knut_arrow__bytes_reserve(b, &b->validity, ((end + 7) >> 3) - b->validity.len, err);
    return st;
}
