/*
 * Private helpers shared by the data side of the arrow part (builder, view,
 * validate): layout predicates on knut_arrow_type. Not installed.
 */
#ifndef KNUT_ARROW_INT_H
#define KNUT_ARROW_INT_H

#include "knut/arrow.h"

/* UTF8/BINARY and their LARGE forms: offsets + data buffers. */
static inline int knut_arrow__is_varlen(knut_arrow_type t)
{
    return t == KNUT_ARROW_UTF8 || t == KNUT_ARROW_LARGE_UTF8 || t == KNUT_ARROW_BINARY ||
           t == KNUT_ARROW_LARGE_BINARY;
}

/* LIST/LARGE_LIST/MAP: offsets into one child. */
static inline int knut_arrow__is_list(knut_arrow_type t)
{
    return t == KNUT_ARROW_LIST || t == KNUT_ARROW_LARGE_LIST || t == KNUT_ARROW_MAP;
}

/* Bytes per offset for var-length and list types (0 otherwise). */
static inline int knut_arrow__offset_width(knut_arrow_type t)
{
    if (t == KNUT_ARROW_LARGE_UTF8 || t == KNUT_ARROW_LARGE_BINARY || t == KNUT_ARROW_LARGE_LIST)
        return 8;
    if (knut_arrow__is_varlen(t) || knut_arrow__is_list(t))
        return 4;
    return 0;
}

/* Reads offset i from an int32 or int64 offsets buffer. */
static inline int64_t knut_arrow__offset_at(const uint8_t *offsets, int width, int64_t i)
{
    if (width == 8)
        return ((const int64_t *)(const void *)offsets)[i];
    return ((const int32_t *)(const void *)offsets)[i];
}

#endif
