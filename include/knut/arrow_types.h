/*
 * knut arrow, the types: the Arrow C Data and C Stream Interface structs,
 * their release and move helpers, format strings, schema building and
 * schema metadata. Part of knut/arrow.h (ownership rules there).
 */
#ifndef KNUT_ARROW_TYPES_H
#define KNUT_ARROW_TYPES_H

#include <stddef.h>
#include <stdint.h>

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
    KNUT_ARROW_DENSE_UNION, /* "+ud:I,J,...": int8 type ids, int32 offsets, no validity;
                               one child per type id (IPC: written, not read yet) */
    KNUT_ARROW_TYPE_COUNT
} knut_arrow_type;

typedef enum knut_arrow_time_unit {
    KNUT_ARROW_SECOND = 0,
    KNUT_ARROW_MILLI,
    KNUT_ARROW_MICRO,
    KNUT_ARROW_NANO
} knut_arrow_time_unit;

#define KNUT_ARROW_TZ_MAX 64
#define KNUT_ARROW_UNION_MAX 128 /* type ids are 0..127 */

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
    int32_t n_type_ids;  /* DENSE_UNION: children, each with the type id at its index */
    int8_t type_ids[KNUT_ARROW_UNION_MAX];
} knut_arrow_type_info;

/* Fills *out with `type` and its defaults (TIMESTAMP: microseconds, no tz;
 * FIXED_BINARY needs byte_width set afterwards). */
KNUT_EXTERN void knut_arrow_type_info_init(knut_arrow_type_info *out, knut_arrow_type type);

/* Short type name ("int64", "utf8", "timestamp", ...); never NULL. */
KNUT_EXTERN const char *knut_arrow_type_name(knut_arrow_type type);

/* Parses an Arrow format string ("l", "tsu:UTC", "+l", "w:16", ...) into
 * *out (its timezone points into format, which must outlive it).
 * KNUT_EINVAL for a malformed string, KNUT_EUNSUPPORTED for a valid type
 * knut does not handle (unions, views, ...). */
KNUT_EXTERN knut_status knut_arrow_format_parse(const char *format, knut_arrow_type_info *out,
                                                knut_error *err);

/* Writes the format string for t into buf (NUL-terminated); KNUT_ETOOBIG if
 * cap is too small (64 bytes + the timezone length always suffices). */
KNUT_EXTERN knut_status knut_arrow_format_print(const knut_arrow_type_info *t, char *buf,
                                                size_t cap, knut_error *err);

/* Parses schema->format and checks n_children matches the type; errors as
 * knut_arrow_format_parse, and KNUT_EINVAL naming the field. */
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

/* Same, with the format string printed from t; KNUT_ENOMEM, or
 * KNUT_ETOOBIG for an overlong timezone. */
KNUT_EXTERN knut_status knut_arrow_schema_init_type(struct ArrowSchema *out,
                                                    const knut_arrow_type_info *t, const char *name,
                                                    int64_t flags, int64_t n_children,
                                                    knut_error *err);

/* Moves child into slot i of a schema made by knut_arrow_schema_init
 * (releasing whatever was there). child is left released. KNUT_EINVAL if
 * there is no slot i. */
KNUT_EXTERN knut_status knut_arrow_schema_set_child(struct ArrowSchema *schema, int64_t i,
                                                    struct ArrowSchema *child, knut_error *err);

/* Replaces the metadata of a schema made by knut_arrow_schema_init with a
 * copy of the encoded blob (NULL clears it); KNUT_ENOMEM. */
KNUT_EXTERN knut_status knut_arrow_schema_set_metadata(struct ArrowSchema *schema,
                                                       const char *metadata, knut_error *err);

/* Sets n pairs in the metadata of a schema made by knut_arrow_schema_init,
 * keeping its other pairs in order: an old pair whose key is among keys is
 * dropped, the new pairs go last. KNUT_ETOOBIG past int32 sizes,
 * KNUT_ENOMEM. */
KNUT_EXTERN knut_status knut_arrow_schema_put_metadata(struct ArrowSchema *schema,
                                                       const char *const *keys,
                                                       const char *const *values, int32_t n,
                                                       knut_error *err);

/* Replaces the name of a schema made by knut_arrow_schema_init with a copy
 * of name; KNUT_ENOMEM. */
KNUT_EXTERN knut_status knut_arrow_schema_set_name(struct ArrowSchema *schema, const char *name,
                                                   knut_error *err);

/* Deep copy of any schema (children, dictionary, metadata) into a
 * malloc-owned one the caller releases. KNUT_EINVAL for a released or
 * malformed source, KNUT_ENOMEM; out is left released on error. */
KNUT_EXTERN knut_status knut_arrow_schema_deep_copy(struct ArrowSchema *out,
                                                    const struct ArrowSchema *src, knut_error *err);

/* ---- schema metadata (int32 count, then length-prefixed key/value pairs) */

/* Byte length of an encoded metadata blob (0 for NULL). */
KNUT_EXTERN size_t knut_arrow_metadata_size(const char *metadata);

/* Encodes n key/value pairs (copied) into a malloc'ed blob (*out, the
 * caller frees it with free()); KNUT_ETOOBIG past int32 sizes, KNUT_ENOMEM. */
KNUT_EXTERN knut_status knut_arrow_metadata_build(char **out, const char *const *keys,
                                                  const char *const *values, int32_t n,
                                                  knut_error *err);

/* Iterates an encoded blob. Key and value are not NUL-terminated. */
typedef struct knut_arrow_metadata_reader {
    const char *pos;
    int32_t remaining;
} knut_arrow_metadata_reader;

/* Starts reading metadata (NULL: no pairs). The blob is borrowed: it must
 * outlive the reader and the key/value pointers it hands out. */
KNUT_EXTERN void knut_arrow_metadata_reader_init(knut_arrow_metadata_reader *r,
                                                 const char *metadata);
/* Returns 1 and fills the pair, or 0 when done. */
KNUT_EXTERN int knut_arrow_metadata_next(knut_arrow_metadata_reader *r, const char **key,
                                         int32_t *key_len, const char **value, int32_t *value_len);
/* Finds key; returns 1 and fills value/len, or 0 if absent. */
KNUT_EXTERN int knut_arrow_metadata_get(const char *metadata, const char *key, const char **value,
                                        int32_t *value_len);

#ifdef __cplusplus
}
#endif

#endif /* KNUT_ARROW_TYPES_H */
