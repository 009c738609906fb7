/*
 * knut arrow, builders: growable arrays (and their children) handed out
 * as ArrowArray batches. Part of knut/arrow.h.
 */
#ifndef KNUT_ARROW_BUILDER_H
#define KNUT_ARROW_BUILDER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "knut/arrow_types.h"
#include "knut/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- builders ---------------------------------------------------------- */

/* Default cap on each buffer of a builder. Offsets of 32-bit types ("u",
 * "z", "+l") overflow first, at INT32_MAX, which is KNUT_ETOOBIG too. */
#define KNUT_ARROW_BUILDER_DEFAULT_MAX ((int64_t)2 << 30)

/* One growable 64-byte-aligned buffer. */
typedef struct knut_arrow_bytes {
    uint8_t *data;
    int64_t len; /* bytes used */
    int64_t cap; /* bytes allocated */
} knut_arrow_bytes;

/*
 * Builds one array (and its children). Fields are visible so the hot append
 * paths below can be inlined; treat them as read-only.
 *
 *   list:   append the element's items to child 0, then finish_element;
 *   struct: append one value to every child, then finish_element;
 *   null/empty rows of lists and structs: append_null / append_empty
 *           (these fill the struct's children themselves).
 *
 * knut_arrow_builder_finish hands the data out as an ArrowArray and leaves
 * the builder empty and reusable, so one builder makes many batches.
 *
 * Every append returns KNUT_OK, KNUT_EINVAL (a value of the wrong type or
 * out of its range, naming the builder), KNUT_ETOOBIG (past max_bytes for
 * a buffer or past 32-bit offsets) or KNUT_ENOMEM; a failed append adds
 * nothing. A builder belongs to one thread at a time.
 */
typedef struct knut_arrow_builder {
    knut_arrow_type_info type;
    char *name;
    int64_t flags;          /* ARROW_FLAG_NULLABLE by default */
    int64_t length;
    int64_t null_count;
    int64_t max_bytes;      /* cap per buffer */
    knut_arrow_bytes validity; /* allocated at the first null */
    knut_arrow_bytes values;   /* values (fixed-width, BOOL bits) or offsets */
    knut_arrow_bytes data;     /* var-length bytes */
    int64_t n_children;
    struct knut_arrow_builder **children;
} knut_arrow_builder;

/* Makes a builder for type t (copied; name may be NULL, copied too); the
 * caller frees *out with knut_arrow_builder_free. LIST/LARGE_LIST/MAP/
 * STRUCT start without children: add them with knut_arrow_builder_add_child.
 * KNUT_EINVAL for a type it cannot build, KNUT_ENOMEM. */
KNUT_EXTERN knut_status knut_arrow_builder_new(knut_arrow_builder **out,
                                               const knut_arrow_type_info *t, const char *name,
                                               knut_error *err);
/* Shorthand for types that need no parameters (timestamp: µs, no tz). */
KNUT_EXTERN knut_status knut_arrow_builder_new_simple(knut_arrow_builder **out,
                                                      knut_arrow_type type, const char *name,
                                                      knut_error *err);
/* Makes a builder tree matching schema (borrowed; not dictionary-encoded
 * ones: KNUT_EUNSUPPORTED); errors otherwise as knut_arrow_builder_new. */
KNUT_EXTERN knut_status knut_arrow_builder_new_from_schema(knut_arrow_builder **out,
                                                           const struct ArrowSchema *schema,
                                                           knut_error *err);
/* Frees b and its children (NULL-safe). */
KNUT_EXTERN void knut_arrow_builder_free(knut_arrow_builder *b);
/* Drops every row of b and its children, keeping the type tree; for
 * recovering after an error (a failed STRUCT append_null/append_empty may
 * leave some children one value ahead, which finish reports). */
KNUT_EXTERN void knut_arrow_builder_reset(knut_arrow_builder *b);

/* Adds child (takes ownership, also on failure) to a LIST/MAP (one child)
 * or STRUCT builder; only while the builder is empty. */
KNUT_EXTERN knut_status knut_arrow_builder_add_child(knut_arrow_builder *b,
                                                     knut_arrow_builder *child, knut_error *err);
static inline knut_arrow_builder *knut_arrow_builder_child(knut_arrow_builder *b, int64_t i)
{
    return (i >= 0 && i < b->n_children) ? b->children[i] : NULL;
}
/* Sets the per-buffer cap of b and its children (bytes; <= 0 = default). */
KNUT_EXTERN void knut_arrow_builder_set_max_bytes(knut_arrow_builder *b, int64_t max_bytes);
/* Sets or clears ARROW_FLAG_NULLABLE in the finished schema. */
KNUT_EXTERN void knut_arrow_builder_set_nullable(knut_arrow_builder *b, int nullable);
/* Reserves room for n more values (and avg_bytes * n of var-length data). */
KNUT_EXTERN knut_status knut_arrow_builder_reserve(knut_arrow_builder *b, int64_t n,
                                                   int64_t avg_bytes, knut_error *err);

/* Appends one (append_null) or n null rows; the validity bitmap is allocated
 * at the first null. KNUT_ETOOBIG past the per-buffer cap. */
KNUT_EXTERN knut_status knut_arrow_builder_append_null(knut_arrow_builder *b, knut_error *err);
KNUT_EXTERN knut_status knut_arrow_builder_append_nulls(knut_arrow_builder *b, int64_t n,
                                                        knut_error *err);
/* A valid zero / empty string / empty list / struct of empty children. */
KNUT_EXTERN knut_status knut_arrow_builder_append_empty(knut_arrow_builder *b, knut_error *err);
/* Integer types (range-checked), BOOL, DATE/TIME/TIMESTAMP/DURATION,
 * INTERVAL_MONTHS, FLOAT/DOUBLE (converted). */
KNUT_EXTERN knut_status knut_arrow_builder_append_int(knut_arrow_builder *b, int64_t v,
                                                      knut_error *err);
KNUT_EXTERN knut_status knut_arrow_builder_append_uint(knut_arrow_builder *b, uint64_t v,
                                                       knut_error *err);
/* FLOAT/DOUBLE (HALF_FLOAT is not converted: append its bits as uint). */
KNUT_EXTERN knut_status knut_arrow_builder_append_double(knut_arrow_builder *b, double v,
                                                         knut_error *err);
KNUT_EXTERN knut_status knut_arrow_builder_append_bool(knut_arrow_builder *b, int v,
                                                       knut_error *err);
/* UTF8/BINARY (+LARGE); FIXED_BINARY/DECIMAL128/INTERVAL_* need exactly
 * byte_width bytes. UTF-8 is not checked here (see validation). */
KNUT_EXTERN knut_status knut_arrow_builder_append_bytes(knut_arrow_builder *b, const void *p,
                                                        size_t len, knut_error *err);
static inline knut_status knut_arrow_builder_append_str(knut_arrow_builder *b, const char *s,
                                                        knut_error *err)
{
    return knut_arrow_builder_append_bytes(b, s, strlen(s), err);
}
/*
 * Fast path: n fixed-width values laid out as in the Arrow values buffer
 * (byte_width bytes each; BOOL: one byte per value, nonzero = true).
 * valid: one byte per value (nonzero = valid), or NULL for all valid.
 */
KNUT_EXTERN knut_status knut_arrow_builder_append_values(knut_arrow_builder *b, const void *values,
                                                         int64_t n, const uint8_t *valid,
                                                         knut_error *err);
/* Closes the current LIST/MAP element (the child items appended since the
 * previous one) or STRUCT row (every child must have one more value). */
KNUT_EXTERN knut_status knut_arrow_builder_finish_element(knut_arrow_builder *b, knut_error *err);

/*
 * Moves the built data into *out_array (and a matching schema into
 * *out_schema, which may be NULL). Buffers are 64-byte aligned; the validity
 * buffer is NULL when null_count == 0. b is left empty and reusable.
 * KNUT_EINVAL (nothing changed) if a list element or struct row is left
 * open; on other failures the rows are discarded.
 */
KNUT_EXTERN knut_status knut_arrow_builder_finish(knut_arrow_builder *b,
                                                  struct ArrowArray *out_array,
                                                  struct ArrowSchema *out_schema, knut_error *err);
/* The schema of what b builds, into *out, which the caller releases;
 * KNUT_ENOMEM. */
KNUT_EXTERN knut_status knut_arrow_builder_schema(const knut_arrow_builder *b,
                                                  struct ArrowSchema *out, knut_error *err);

/* Out-of-line slow path of the inline appends below (grows, then appends). */
KNUT_EXTERN knut_status knut_arrow_builder__append_fixed_slow(knut_arrow_builder *b, const void *v,
                                                              knut_error *err);

/*
 * Inline fast path for fixed-width types: appends one value of exactly
 * byte_width bytes (the caller matches the type: int64_t for INT64, etc.).
 */
static inline knut_status knut_arrow_builder_append_fixed(knut_arrow_builder *b, const void *v,
                                                          knut_error *err)
{
    int64_t w = b->type.byte_width;
    if (w > 0 && b->values.len + w <= b->values.cap && b->validity.data == NULL) {
        memcpy(b->values.data + b->values.len, v, (size_t)w);
        b->values.len += w;
        b->length++;
        return KNUT_OK;
    }
    return knut_arrow_builder__append_fixed_slow(b, v, err);
}

#ifdef __cplusplus
}
#endif

#endif /* KNUT_ARROW_BUILDER_H */
