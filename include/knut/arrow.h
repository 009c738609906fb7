/*
 * knut arrow: the columnar exchange type between parts. It declares the Arrow
 * C Data Interface and C Stream Interface structs (unchanged from the Arrow
 * specification), parses and prints Arrow format strings, builds arrays
 * (knut_arrow_builder), reads arrays produced by anyone (knut_arrow_view),
 * validates foreign arrays, wraps arrays in streams, and (at the end) reads
 * and writes the Arrow IPC stream format.
 *
 * Ownership follows the Arrow release contract: whoever fills an ArrowSchema,
 * ArrowArray or ArrowArrayStream out-param owns calling its `release`, which
 * sets `release` to NULL. On failure, functions leave out-params released
 * (release == NULL) so there is nothing to clean up.
 */
#ifndef KNUT_ARROW_H
#define KNUT_ARROW_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "knut/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Arrow C Data Interface (from the Arrow specification) ------------- */

/* The guards are the ones the specification and nanoarrow use, so any other
 * header declaring the same structs the same way can be included as well. */
#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE

#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4

struct ArrowSchema {
  // Array type description
  const char* format;
  const char* name;
  const char* metadata;
  int64_t flags;
  int64_t n_children;
  struct ArrowSchema** children;
  struct ArrowSchema* dictionary;

  // Release callback
  void (*release)(struct ArrowSchema*);
  // Opaque producer-specific data
  void* private_data;
};

struct ArrowArray {
  // Array data description
  int64_t length;
  int64_t null_count;
  int64_t offset;
  int64_t n_buffers;
  int64_t n_children;
  const void** buffers;
  struct ArrowArray** children;
  struct ArrowArray* dictionary;

  // Release callback
  void (*release)(struct ArrowArray*);
  // Opaque producer-specific data
  void* private_data;
};

#endif  // ARROW_C_DATA_INTERFACE

#ifndef ARROW_C_STREAM_INTERFACE
#define ARROW_C_STREAM_INTERFACE

struct ArrowArrayStream {
  // Callbacks providing stream functionality
  int (*get_schema)(struct ArrowArrayStream*, struct ArrowSchema* out);
  int (*get_next)(struct ArrowArrayStream*, struct ArrowArray* out);
  const char* (*get_last_error)(struct ArrowArrayStream*);

  // Release callback
  void (*release)(struct ArrowArrayStream*);

  // Opaque producer-specific data
  void* private_data;
};

#endif  // ARROW_C_STREAM_INTERFACE

/* ---- release / move helpers -------------------------------------------- */

/* Calls s->release if s and s->release are non-NULL (NULL-safe, idempotent). */
KNUT_EXTERN void knut_arrow_schema_release(struct ArrowSchema *s);
/* Calls a->release if a and a->release are non-NULL (NULL-safe, idempotent). */
KNUT_EXTERN void knut_arrow_array_release(struct ArrowArray *a);
/* Calls s->release if s and s->release are non-NULL (NULL-safe, idempotent). */
KNUT_EXTERN void knut_arrow_stream_release(struct ArrowArrayStream *s);

/* Moves src into dst (dst must be released); src is left released. */
KNUT_EXTERN void knut_arrow_schema_move(struct ArrowSchema *dst, struct ArrowSchema *src);
KNUT_EXTERN void knut_arrow_array_move(struct ArrowArray *dst, struct ArrowArray *src);
KNUT_EXTERN void knut_arrow_stream_move(struct ArrowArrayStream *dst, struct ArrowArrayStream *src);

/* ---- types and format strings ------------------------------------------ */

typedef enum knut_arrow_type {
    KNUT_ARROW_NA = 0,      /* "n": no buffers */
    KNUT_ARROW_BOOL,        /* "b": bit-packed values */
    KNUT_ARROW_INT8,        /* "c" */
    KNUT_ARROW_UINT8,       /* "C" */
    KNUT_ARROW_INT16,       /* "s" */
    KNUT_ARROW_UINT16,      /* "S" */
    KNUT_ARROW_INT32,       /* "i" */
    KNUT_ARROW_UINT32,      /* "I" */
    KNUT_ARROW_INT64,       /* "l" */
    KNUT_ARROW_UINT64,      /* "L" */
    KNUT_ARROW_HALF_FLOAT,  /* "e": raw uint16 bits */
    KNUT_ARROW_FLOAT,       /* "f" */
    KNUT_ARROW_DOUBLE,      /* "g" */
    KNUT_ARROW_UTF8,        /* "u": int32 offsets */
    KNUT_ARROW_LARGE_UTF8,  /* "U": int64 offsets */
    KNUT_ARROW_BINARY,      /* "z" */
    KNUT_ARROW_LARGE_BINARY,/* "Z" */
    KNUT_ARROW_FIXED_BINARY,/* "w:N", byte_width = N */
    KNUT_ARROW_DECIMAL128,  /* "d:P,S" or "d:P,S,128": 16-byte little-endian */
    KNUT_ARROW_DATE32,      /* "tdD": int32 days since the epoch */
    KNUT_ARROW_DATE64,      /* "tdm": int64 milliseconds since the epoch */
    KNUT_ARROW_TIME32,      /* "tts" / "ttm": int32 */
    KNUT_ARROW_TIME64,      /* "ttu" / "ttn": int64 */
    KNUT_ARROW_TIMESTAMP,   /* "tsX:TZ": int64, unit X, optional timezone */
    KNUT_ARROW_DURATION,    /* "tDX": int64 */
    KNUT_ARROW_INTERVAL_MONTHS,   /* "tiM": int32 */
    KNUT_ARROW_INTERVAL_DAY_TIME, /* "tiD": 2 x int32 */
    KNUT_ARROW_INTERVAL_MDN,      /* "tin": int32 months, int32 days, int64 ns */
    KNUT_ARROW_LIST,        /* "+l": int32 offsets, one child */
    KNUT_ARROW_LARGE_LIST,  /* "+L": int64 offsets, one child */
    KNUT_ARROW_STRUCT,      /* "+s": N children */
    KNUT_ARROW_MAP,         /* "+m": list<struct<key, value>> layout */
    KNUT_ARROW_TYPE_COUNT
} knut_arrow_type;

typedef enum knut_arrow_time_unit {
    KNUT_ARROW_SECOND = 0,
    KNUT_ARROW_MILLI,
    KNUT_ARROW_MICRO,
    KNUT_ARROW_NANO
} knut_arrow_time_unit;

#define KNUT_ARROW_TZ_MAX 64

/*
 * A parsed format string. Self-contained (no pointers into the schema) so it
 * can be copied freely. For dictionary-encoded schemas this describes the
 * index type; the value type is the schema's dictionary.
 */
typedef struct knut_arrow_type_info {
    knut_arrow_type type;
    knut_arrow_time_unit unit;         /* TIME32/TIME64/TIMESTAMP/DURATION */
    char timezone[KNUT_ARROW_TZ_MAX];  /* TIMESTAMP; "" = none */
    int32_t byte_width;  /* bytes per value for fixed-width types (FIXED_BINARY: N);
                            0 for BOOL (bits), NA and nested/var-length types */
    int32_t precision;   /* DECIMAL128 */
    int32_t scale;       /* DECIMAL128 */
} knut_arrow_type_info;

/* Fills *out with `type` and its defaults (TIMESTAMP: microseconds, no tz;
 * FIXED_BINARY needs byte_width set afterwards). */
KNUT_EXTERN void knut_arrow_type_info_init(knut_arrow_type_info *out, knut_arrow_type type);

/* Short type name ("int64", "utf8", "timestamp", ...); never NULL. */
KNUT_EXTERN const char *knut_arrow_type_name(knut_arrow_type type);

/* Parses an Arrow format string ("l", "tsu:UTC", "+l", "w:16", ...). */
KNUT_EXTERN knut_status knut_arrow_format_parse(const char *format, knut_arrow_type_info *out,
                                                knut_error *err);

/* Writes the format string for t into buf (NUL-terminated); KNUT_ETOOBIG if
 * cap is too small (64 bytes + the timezone length always suffices). */
KNUT_EXTERN knut_status knut_arrow_format_print(const knut_arrow_type_info *t, char *buf,
                                                size_t cap, knut_error *err);

/* Parses schema->format, and checks n_children matches the type. */
KNUT_EXTERN knut_status knut_arrow_schema_parse_type(const struct ArrowSchema *schema,
                                                     knut_arrow_type_info *out, knut_error *err);

/* Number of buffers an array of type t has in the C Data Interface (with
 * validity): NA 0, STRUCT 1, fixed-width/BOOL/LIST/MAP 2, var-length 3. */
KNUT_EXTERN int knut_arrow_type_n_buffers(knut_arrow_type type);

/* Number of children a type needs: LIST/LARGE_LIST/MAP 1, STRUCT any (-1),
 * everything else 0. */
KNUT_EXTERN int knut_arrow_type_n_children(knut_arrow_type type);

/* ---- schema building --------------------------------------------------- */

/*
 * Initialises *out as a malloc-owned schema node with copies of format and
 * name (name may be NULL) and n_children child slots, each an allocated,
 * released (release == NULL) ArrowSchema to fill with knut_arrow_schema_init
 * or knut_arrow_schema_set_child. out->release frees the node recursively.
 */
KNUT_EXTERN knut_status knut_arrow_schema_init(struct ArrowSchema *out, const char *format,
                                               const char *name, int64_t flags, int64_t n_children,
                                               knut_error *err);

/* Same, with the format string printed from t. */
KNUT_EXTERN knut_status knut_arrow_schema_init_type(struct ArrowSchema *out,
                                                    const knut_arrow_type_info *t, const char *name,
                                                    int64_t flags, int64_t n_children,
                                                    knut_error *err);

/* Moves child into slot i of a schema made by knut_arrow_schema_init
 * (releasing whatever was there). child is left released. */
KNUT_EXTERN knut_status knut_arrow_schema_set_child(struct ArrowSchema *schema, int64_t i,
                                                    struct ArrowSchema *child, knut_error *err);

/* Replaces the metadata of a schema made by knut_arrow_schema_init with a
 * copy of the encoded blob (NULL clears it). */
KNUT_EXTERN knut_status knut_arrow_schema_set_metadata(struct ArrowSchema *schema,
                                                       const char *metadata, knut_error *err);

/* Replaces the name of a schema made by knut_arrow_schema_init. */
KNUT_EXTERN knut_status knut_arrow_schema_set_name(struct ArrowSchema *schema, const char *name,
                                                   knut_error *err);

/* Deep copy of any schema (children, dictionary, metadata) into a
 * malloc-owned one. */
KNUT_EXTERN knut_status knut_arrow_schema_deep_copy(struct ArrowSchema *out,
                                                    const struct ArrowSchema *src, knut_error *err);

/* ---- schema metadata (int32 count, then length-prefixed key/value pairs) */

/* Byte length of an encoded metadata blob (0 for NULL). */
KNUT_EXTERN size_t knut_arrow_metadata_size(const char *metadata);

/* Encodes n key/value pairs into a malloc'ed blob (*out, free with free()). */
KNUT_EXTERN knut_status knut_arrow_metadata_build(char **out, const char *const *keys,
                                                  const char *const *values, int32_t n,
                                                  knut_error *err);

/* Iterates an encoded blob. Key and value are not NUL-terminated. */
typedef struct knut_arrow_metadata_reader {
    const char *pos;
    int32_t remaining;
} knut_arrow_metadata_reader;

KNUT_EXTERN void knut_arrow_metadata_reader_init(knut_arrow_metadata_reader *r,
                                                 const char *metadata);
/* Returns 1 and fills the pair, or 0 when done. */
KNUT_EXTERN int knut_arrow_metadata_next(knut_arrow_metadata_reader *r, const char **key,
                                         int32_t *key_len, const char **value, int32_t *value_len);
/* Finds key; returns 1 and fills value/len, or 0 if absent. */
KNUT_EXTERN int knut_arrow_metadata_get(const char *metadata, const char *key, const char **value,
                                        int32_t *value_len);

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

/* Makes a builder for type t. LIST/LARGE_LIST/MAP/STRUCT start without
 * children: add them with knut_arrow_builder_add_child. */
KNUT_EXTERN knut_status knut_arrow_builder_new(knut_arrow_builder **out,
                                               const knut_arrow_type_info *t, const char *name,
                                               knut_error *err);
/* Shorthand for types that need no parameters (timestamp: µs, no tz). */
KNUT_EXTERN knut_status knut_arrow_builder_new_simple(knut_arrow_builder **out,
                                                      knut_arrow_type type, const char *name,
                                                      knut_error *err);
/* Makes a builder tree matching schema (not dictionary-encoded ones). */
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
/* The schema of what b builds (malloc-owned). */
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

/* Initialises v over schema/array (both must outlive v). */
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
 */
KNUT_EXTERN knut_status knut_arrow_array_validate(const struct ArrowSchema *schema,
                                                  const struct ArrowArray *array, unsigned level,
                                                  knut_error *err);

/* Checks len bytes are valid UTF-8 (no overlongs, surrogates or > U+10FFFF). */
KNUT_EXTERN int knut_arrow_utf8_valid(const uint8_t *s, int64_t len);

/* ---- streams ----------------------------------------------------------- */

/* Max batches knut_arrow_stream_collect keeps unless told otherwise. */
#define KNUT_ARROW_COLLECT_DEFAULT_MAX ((int64_t)1 << 20)

/*
 * Makes a stream yielding the n arrays in order, then end of stream.
 * Takes ownership of schema and of every array (also on failure: they are
 * released); `arrays` itself is the caller's.
 */
KNUT_EXTERN knut_status knut_arrow_stream_from_arrays(struct ArrowArrayStream *out,
                                                      struct ArrowSchema *schema,
                                                      struct ArrowArray *arrays, int64_t n,
                                                      knut_error *err);

/*
 * Reads the stream to its end: *out_schema gets the schema, *out_arrays a
 * malloc'ed vector of *out_n arrays (free with knut_arrow_arrays_free).
 * KNUT_ETOOBIG past max_arrays batches (<= 0 = default). Does not release
 * the stream. On failure everything collected so far is released.
 */
KNUT_EXTERN knut_status knut_arrow_stream_collect(struct ArrowArrayStream *stream,
                                                  struct ArrowSchema *out_schema,
                                                  struct ArrowArray **out_arrays, int64_t *out_n,
                                                  int64_t max_arrays, knut_error *err);

/* Releases every array and frees the vector (NULL-safe). */
KNUT_EXTERN void knut_arrow_arrays_free(struct ArrowArray *arrays, int64_t n);

/* Reads the stream to its end and sums the array lengths (the schema is
 * fetched and released). Does not release the stream. */
KNUT_EXTERN knut_status knut_arrow_stream_count_rows(struct ArrowArrayStream *stream, int64_t *out,
                                                     knut_error *err);

/* Maps a stream callback's errno-style result to a knut status, with
 * get_last_error's text (if any) in err, prefixed by `what`. */
KNUT_EXTERN knut_status knut_arrow_stream_error(struct ArrowArrayStream *stream, int code,
                                                const char *what, knut_error *err);

/* ---- Arrow IPC stream format (src/arrow/ipc_*.c) ---- */

/*
 * The Arrow IPC *streaming* format: a Schema message, RecordBatch messages,
 * then an end-of-stream marker. Each message is framed as 0xFFFFFFFF, an
 * int32 metadata length, a FlatBuffers Message (metadata version V5) padded
 * so the body starts 8-byte aligned, then the body buffers (8-byte aligned
 * and padded). No compression, no dictionaries.
 *
 * Types: null, bool, int8..int64, uint8..uint64, half/float/double, utf8,
 * large_utf8, binary, large_binary, fixed_size_binary, decimal128, date32,
 * date64, time32/64, timestamp (unit + timezone), duration, intervals,
 * list, large_list, struct, map. Field names, nullability and the schema's
 * and fields' custom metadata are kept. Written and read on little-endian
 * hosts only.
 */

/* Where a writer puts bytes: write() stores all len bytes or fails (and
 * fills err). */
typedef struct knut_arrow_ipc_sink {
    knut_status (*write)(void *ctx, const void *data, size_t len, knut_error *err);
    void *ctx;
} knut_arrow_ipc_sink;

/* Sinks over a FILE* (fwrite; not closed), a file descriptor (write(2)
 * with EINTR/short-write handling; not closed) and a knut_buf (appends;
 * the buffer's cap applies: KNUT_ETOOBIG). Each must outlive the writer. */
KNUT_EXTERN knut_arrow_ipc_sink knut_arrow_ipc_sink_file(FILE *f);
KNUT_EXTERN knut_arrow_ipc_sink knut_arrow_ipc_sink_fd(int fd);
KNUT_EXTERN knut_arrow_ipc_sink knut_arrow_ipc_sink_buf(knut_buf *b);

typedef struct knut_arrow_ipc_writer knut_arrow_ipc_writer;

/*
 * Makes a writer and writes the Schema message. schema must be a struct
 * ("+s") whose children are the columns; it is copied. Dictionary-encoded
 * or unsupported column types: KNUT_EUNSUPPORTED naming the column.
 * *out is NULL on failure.
 */
KNUT_EXTERN knut_status knut_arrow_ipc_writer_new(knut_arrow_ipc_writer **out,
                                                  knut_arrow_ipc_sink sink,
                                                  const struct ArrowSchema *schema,
                                                  knut_error *err);

/*
 * Writes one RecordBatch message. batch is a struct array matching the
 * schema; it is read, not consumed (the caller still releases it). Sliced
 * arrays (offset != 0, at any level) are written re-based; null counts of
 * -1 are computed. The batch is checked at KNUT_ARROW_VALIDATE_DEFAULT
 * first, so a malformed in-process array is an error, not a wild read.
 */
KNUT_EXTERN knut_status knut_arrow_ipc_writer_write(knut_arrow_ipc_writer *w,
                                                    const struct ArrowArray *batch,
                                                    knut_error *err);

/* Writes the end-of-stream marker (0xFFFFFFFF, int32 0). Further writes
 * fail. Idempotent. */
KNUT_EXTERN knut_status knut_arrow_ipc_writer_finish(knut_arrow_ipc_writer *w, knut_error *err);

/* Frees w (NULL-safe); does not write the end-of-stream marker. */
KNUT_EXTERN void knut_arrow_ipc_writer_free(knut_arrow_ipc_writer *w);

/* Bytes handed to the sink so far (framing, metadata, bodies). */
KNUT_EXTERN int64_t knut_arrow_ipc_writer_bytes(const knut_arrow_ipc_writer *w);

/* Writes a whole stream (schema, every batch, end-of-stream marker). The
 * stream is read to its end but not released. */
KNUT_EXTERN knut_status knut_arrow_ipc_write_stream(knut_arrow_ipc_sink sink,
                                                    struct ArrowArrayStream *stream,
                                                    knut_error *err);

/*
 * Where a reader gets bytes. read() fills buf with up to len bytes and sets
 * *nread; fewer than len only at the end of the input (0 = end). remaining
 * (may be NULL) says how many bytes are left, or -1 if unknown; with it,
 * sizes declared by the stream are checked before anything is allocated.
 * release (may be NULL) is called once when the reader is done with ctx.
 */
typedef struct knut_arrow_ipc_source {
    knut_status (*read)(void *ctx, void *buf, size_t len, size_t *nread, knut_error *err);
    int64_t (*remaining)(void *ctx);
    void (*release)(void *ctx);
    void *ctx;
} knut_arrow_ipc_source;

/* Sources over a FILE* and a file descriptor (not closed; must outlive the
 * reader), and over memory (the bytes are not copied and must outlive the
 * reader; the small cursor it allocates is freed by the reader). */
KNUT_EXTERN knut_arrow_ipc_source knut_arrow_ipc_source_file(FILE *f);
KNUT_EXTERN knut_arrow_ipc_source knut_arrow_ipc_source_fd(int fd);
KNUT_EXTERN knut_status knut_arrow_ipc_source_mem(knut_arrow_ipc_source *out, const void *data,
                                                  size_t len, knut_error *err);

/* Limits on what a stream may declare; 0 means the default. */
#define KNUT_ARROW_IPC_MAX_METADATA_DEFAULT ((int64_t)64 << 20)
#define KNUT_ARROW_IPC_MAX_BODY_DEFAULT ((int64_t)2 << 30)
#define KNUT_ARROW_IPC_MAX_FIELDS_DEFAULT ((int64_t)1 << 16)

typedef struct knut_arrow_ipc_read_options {
    int version;          /* KNUT_ARROW_IPC_READ_OPTIONS_VERSION */
    int64_t max_metadata; /* bytes of FlatBuffers metadata per message */
    int64_t max_body;     /* bytes of body per message */
    int64_t max_fields;   /* fields in the schema, nested ones included */
} knut_arrow_ipc_read_options;

#define KNUT_ARROW_IPC_READ_OPTIONS_VERSION 1
#define KNUT_ARROW_IPC_READ_OPTIONS_INIT {.version = KNUT_ARROW_IPC_READ_OPTIONS_VERSION}

typedef struct knut_arrow_ipc_reader knut_arrow_ipc_reader;

/*
 * Makes a reader over src (taking it over: its release is called by the
 * reader, also on failure) and reads the Schema message. opts may be NULL.
 * Accepts the current framing and the pre-1.0 one without the 0xFFFFFFFF
 * marker. Limits exceeded: KNUT_ETOOBIG; malformed bytes: KNUT_EPARSE;
 * dictionaries, compression, unknown types: KNUT_EUNSUPPORTED. Messages
 * name the message index (0 = schema) and its byte offset in the stream.
 */
KNUT_EXTERN knut_status knut_arrow_ipc_reader_new(knut_arrow_ipc_reader **out,
                                                  knut_arrow_ipc_source src,
                                                  const knut_arrow_ipc_read_options *opts,
                                                  knut_error *err);

/* The stream's schema (owned by the reader). */
KNUT_EXTERN const struct ArrowSchema *knut_arrow_ipc_reader_schema(const knut_arrow_ipc_reader *r);

/*
 * Reads the next RecordBatch into *out (a struct array, caller releases).
 * At the end of the stream returns KNUT_OK with out->release == NULL. The
 * arrays point into the message body, shared and freed with the last
 * release; every buffer is checked against the body and the batch is
 * validated at KNUT_ARROW_VALIDATE_FULL before it is returned.
 */
KNUT_EXTERN knut_status knut_arrow_ipc_reader_next(knut_arrow_ipc_reader *r, struct ArrowArray *out,
                                                   knut_error *err);

/* Frees r (NULL-safe); arrays already returned stay valid. */
KNUT_EXTERN void knut_arrow_ipc_reader_free(knut_arrow_ipc_reader *r);

/*
 * The reader as a C stream: reads the schema now (errors are returned
 * here), batches on get_next (released array at the end). Takes src over.
 */
KNUT_EXTERN knut_status knut_arrow_ipc_stream_open(struct ArrowArrayStream *out,
                                                   knut_arrow_ipc_source src,
                                                   const knut_arrow_ipc_read_options *opts,
                                                   knut_error *err);

#ifdef __cplusplus
}
#endif

#endif /* KNUT_ARROW_H */
