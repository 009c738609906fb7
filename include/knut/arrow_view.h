/*
 * knut arrow, reading arrays: views over arrays produced by anyone, and
 * the validation of foreign arrays. Part of knut/arrow.h.
 */
#ifndef KNUT_ARROW_VIEW_H
#define KNUT_ARROW_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "knut/arrow_types.h"
#include "knut/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- read views -------------------------------------------------------- */

/*
 * A read-only view of (schema, array) from any producer. Index i is always
 * logical (0 .. length-1); the array offset is applied here. Children are
 * viewed as whole arrays: for a STRUCT row i, read child k at
 * knut_arrow_view_child_row(v, i); for a LIST row i, read child 0 at
 * [start, end) from knut_arrow_view_list_range.
 *
 * Init checks the structure (as KNUT_ARROW_VALIDATE_MINIMAL) but not the
 * offsets: run knut_arrow_array_validate at FULL on untrusted arrays first.
 */
typedef struct knut_arrow_view {
    const struct ArrowSchema *schema;
    const struct ArrowArray *array;
    knut_arrow_type_info type;
    int64_t length;
    int64_t offset;
    int64_t null_count;        /* as given by the producer; may be -1 */
    const uint8_t *validity;   /* NULL = no nulls */
    const uint8_t *values;     /* values / offsets buffer, NOT offset-adjusted */
    const uint8_t *data;       /* var-length data buffer */
    int64_t n_children;
    struct knut_arrow_view *children;
    struct knut_arrow_view *dictionary; /* value view for dictionary-encoded */
} knut_arrow_view;

/* Initialises v over schema/array (borrowed: both must outlive v; free v
 * with knut_arrow_view_reset, also after an error). Errors as
 * knut_arrow_array_validate at MINIMAL (KNUT_EINVAL, KNUT_EUNSUPPORTED
 * naming the column), and KNUT_ENOMEM. */
KNUT_EXTERN knut_status knut_arrow_view_init(knut_arrow_view *v, const struct ArrowSchema *schema,
                                             const struct ArrowArray *array, knut_error *err);
/* Frees what init allocated (NULL-safe); the arrays are untouched. */
KNUT_EXTERN void knut_arrow_view_reset(knut_arrow_view *v);
/* Counts nulls in the view's range (from the bitmap, not null_count). */
KNUT_EXTERN int64_t knut_arrow_view_count_nulls(const knut_arrow_view *v);

static inline int knut_arrow_bit_get(const uint8_t *bits, int64_t i)
{
    return (bits[i >> 3] >> (i & 7)) & 1;
}

static inline int knut_arrow_view_is_null(const knut_arrow_view *v, int64_t i)
{
    if (v->type.type == KNUT_ARROW_NA)
        return 1;
    return v->validity != NULL && !knut_arrow_bit_get(v->validity, v->offset + i);
}

/* Typed value pointer at logical row 0 (fixed-width types, not BOOL). */
static inline const void *knut_arrow_view_values(const knut_arrow_view *v)
{
    return v->values + v->offset * (int64_t)v->type.byte_width;
}

/* Float to int64 without undefined behaviour: NaN gives 0, out-of-range
 * values saturate (a plain cast is UB there, and inputs come from files). */
static inline int64_t knut_arrow__f64_to_i64(double d)
{
    if (d != d)
        return 0;
    if (d >= 9223372036854775807.0)
        return INT64_MAX;
    if (d <= -9223372036854775808.0)
        return INT64_MIN;
    return (int64_t)d;
}

/* Integer-like value widened to int64 (ints, UINT64 wraps above INT64_MAX,
 * BOOL, DATE/TIME/TIMESTAMP/DURATION, INTERVAL_MONTHS, dictionary indices);
 * FLOAT/DOUBLE truncated (saturating; NaN → 0); 0 for other types. Does not check nulls. */
static inline int64_t knut_arrow_view_get_int64(const knut_arrow_view *v, int64_t i)
{
    int64_t j = v->offset + i;
    switch (v->type.type) {
    case KNUT_ARROW_BOOL:
        return knut_arrow_bit_get(v->values, j);
    case KNUT_ARROW_INT8:
        return ((const int8_t *)v->values)[j];
    case KNUT_ARROW_UINT8:
        return ((const uint8_t *)v->values)[j];
    case KNUT_ARROW_INT16:
        return ((const int16_t *)(const void *)v->values)[j];
    case KNUT_ARROW_UINT16:
        return ((const uint16_t *)(const void *)v->values)[j];
    case KNUT_ARROW_INT32:
    case KNUT_ARROW_DATE32:
    case KNUT_ARROW_TIME32:
    case KNUT_ARROW_INTERVAL_MONTHS:
        return ((const int32_t *)(const void *)v->values)[j];
    case KNUT_ARROW_UINT32:
        return ((const uint32_t *)(const void *)v->values)[j];
    case KNUT_ARROW_INT64:
    case KNUT_ARROW_DATE64:
    case KNUT_ARROW_TIME64:
    case KNUT_ARROW_TIMESTAMP:
    case KNUT_ARROW_DURATION:
        return ((const int64_t *)(const void *)v->values)[j];
    case KNUT_ARROW_UINT64:
        return (int64_t)((const uint64_t *)(const void *)v->values)[j];
    case KNUT_ARROW_FLOAT:
        return knut_arrow__f64_to_i64(((const float *)(const void *)v->values)[j]);
    case KNUT_ARROW_DOUBLE:
        return knut_arrow__f64_to_i64(((const double *)(const void *)v->values)[j]);
    default:
        return 0;
    }
}

/* UINT64 (and the other unsigned types) without wrapping. */
static inline uint64_t knut_arrow_view_get_uint64(const knut_arrow_view *v, int64_t i)
{
    if (v->type.type == KNUT_ARROW_UINT64)
        return ((const uint64_t *)(const void *)v->values)[v->offset + i];
    return (uint64_t)knut_arrow_view_get_int64(v, i);
}

/* FLOAT/DOUBLE, or any integer-like type converted. */
static inline double knut_arrow_view_get_double(const knut_arrow_view *v, int64_t i)
{
    if (v->type.type == KNUT_ARROW_DOUBLE)
        return ((const double *)(const void *)v->values)[v->offset + i];
    if (v->type.type == KNUT_ARROW_FLOAT)
        return ((const float *)(const void *)v->values)[v->offset + i];
    if (v->type.type == KNUT_ARROW_UINT64)
        return (double)knut_arrow_view_get_uint64(v, i);
    return (double)knut_arrow_view_get_int64(v, i);
}

static inline int knut_arrow_view_get_bool(const knut_arrow_view *v, int64_t i)
{
    return knut_arrow_view_get_int64(v, i) != 0;
}

/* Bytes of row i for UTF8/BINARY (+LARGE) and fixed-width types (raw
 * value bytes); NULL with *len 0 for others. Not NUL-terminated. */
static inline const char *knut_arrow_view_get_bytes(const knut_arrow_view *v, int64_t i,
                                                    int64_t *len)
{
    int64_t j = v->offset + i;
    switch (v->type.type) {
    case KNUT_ARROW_UTF8:
    case KNUT_ARROW_BINARY: {
        const int32_t *o = (const int32_t *)(const void *)v->values;
        *len = (int64_t)o[j + 1] - o[j];
        return (const char *)v->data + o[j];
    }
    case KNUT_ARROW_LARGE_UTF8:
    case KNUT_ARROW_LARGE_BINARY: {
        const int64_t *o = (const int64_t *)(const void *)v->values;
        *len = o[j + 1] - o[j];
        return (const char *)v->data + o[j];
    }
    default:
        if (v->type.byte_width > 0) {
            *len = v->type.byte_width;
            return (const char *)v->values + j * (int64_t)v->type.byte_width;
        }
        *len = 0;
        return NULL;
    }
}

/* Alias of get_bytes for string columns. */
static inline const char *knut_arrow_view_get_str(const knut_arrow_view *v, int64_t i,
                                                  int64_t *len)
{
    return knut_arrow_view_get_bytes(v, i, len);
}

/* LIST/LARGE_LIST/MAP row i as a range [*start, *end) of child 0 rows. */
static inline void knut_arrow_view_list_range(const knut_arrow_view *v, int64_t i,
                                              int64_t *start, int64_t *end)
{
    int64_t j = v->offset + i;
    if (v->type.type == KNUT_ARROW_LARGE_LIST) {
        const int64_t *o = (const int64_t *)(const void *)v->values;
        *start = o[j];
        *end = o[j + 1];
    } else {
        const int32_t *o = (const int32_t *)(const void *)v->values;
        *start = o[j];
        *end = o[j + 1];
    }
}

/* Child k (NULL if out of range). */
static inline const knut_arrow_view *knut_arrow_view_child(const knut_arrow_view *v, int64_t k)
{
    return (k >= 0 && k < v->n_children) ? &v->children[k] : NULL;
}

/* The child row that holds STRUCT row i. */
static inline int64_t knut_arrow_view_child_row(const knut_arrow_view *v, int64_t i)
{
    return v->offset + i;
}

/* ---- validation of foreign arrays -------------------------------------- */

typedef enum knut_arrow_validate_level {
    /* Structure: buffer and child counts, required buffers present,
     * children long enough. O(number of arrays). */
    KNUT_ARROW_VALIDATE_MINIMAL = 0,
    /* + first/last offsets within the data/child lengths. O(arrays). */
    KNUT_ARROW_VALIDATE_DEFAULT = 1,
    /* + every offset monotonic and in range, null_count matches the bitmap,
     * dictionary indices in range. O(data). For bytes from disk or network. */
    KNUT_ARROW_VALIDATE_FULL = 2
} knut_arrow_validate_level;

/* OR into the level to also check UTF8/LARGE_UTF8 values are valid UTF-8
 * (only with KNUT_ARROW_VALIDATE_FULL). */
#define KNUT_ARROW_VALIDATE_UTF8 0x100u

/*
 * Validates array against schema. Errors name the column path and row:
 * "column 'a.b': offsets not monotonic at row 17" (KNUT_EINVAL).
 * Buffer sizes are not known through the C interface, so lengths are checked
 * against each other (offsets against data, lists against children).
 * Both are borrowed; KNUT_EUNSUPPORTED for a type knut does not read.
 */
KNUT_EXTERN knut_status knut_arrow_array_validate(const struct ArrowSchema *schema,
                                                  const struct ArrowArray *array, unsigned level,
                                                  knut_error *err);

/* Checks len bytes are valid UTF-8 (no overlongs, surrogates or > U+10FFFF). */
KNUT_EXTERN int knut_arrow_utf8_valid(const uint8_t *s, int64_t len);

#ifdef __cplusplus
}
#endif

#endif /* KNUT_ARROW_VIEW_H */
