/*
 * Internals of table metadata parsing (metadata*.c): a
 * small reading context that keeps the JSON path of the value being read,
 * so every error names the file and the field ("t.json: snapshots[2].
 * summary.operation: missing"), and the typed getters built on it.
 */
#ifndef KNUT_ICEBERG_METADATA_INT_H
#define KNUT_ICEBERG_METADATA_INT_H

#include <jansson.h>

#include "knut/iceberg.h"

/* Nesting of schema types (struct in list in map ...), and items of any
 * one list or object: far above what real tables hold, low enough that a
 * hostile file cannot recurse the stack away or allocate without bound. */
#define KNUT_ICEBERG__DEPTH_MAX 32
#define KNUT_ICEBERG__ITEMS_MAX 1000000

typedef struct knut_iceberg__jctx {
    const char *name;  /* the file, for errors */
    int version;       /* the table's format version: 1 or 2 */
    knut_error *err;
    char path[512];    /* JSON path of the value being read; "" = the root */
    size_t len;
} knut_iceberg__jctx;

/* Path steps: each returns a mark that knut_iceberg__jpop goes back to. */
size_t knut_iceberg__jpush_key(knut_iceberg__jctx *c, const char *key);
size_t knut_iceberg__jpush_index(knut_iceberg__jctx *c, size_t i);
void knut_iceberg__jpop(knut_iceberg__jctx *c, size_t mark);

/* Sets the error "<file>: <path>: <text>"; returns code. */
knut_status knut_iceberg__jfail(knut_iceberg__jctx *c, knut_status code, const char *fmt, ...)
    KNUT_PRINTF(3, 4);
knut_status knut_iceberg__joom(knut_iceberg__jctx *c);
/* "an object", "a list", "a string", ... for "expected X, got Y". */
const char *knut_iceberg__jtype_name(const json_t *j);

/*
 * Typed getters of obj[key]. A missing key (or a JSON null, which writers
 * use for "absent") is an error when required, else *out is left as the
 * default given. The wrong JSON type, or an integer outside [min, max], is
 * always an error; both name the path with the key.
 */
knut_status knut_iceberg__jint(knut_iceberg__jctx *c, json_t *obj, const char *key, int required,
                               int64_t min, int64_t max, int64_t *out);
knut_status knut_iceberg__jstr(knut_iceberg__jctx *c, json_t *obj, const char *key, int required,
                               char **out);
knut_status knut_iceberg__jbool(knut_iceberg__jctx *c, json_t *obj, const char *key,
                                int required, int *out);
/* An array or object member (want JSON_ARRAY / JSON_OBJECT); *out NULL
 * when absent and not required. Arrays and objects over ITEMS_MAX fail. */
knut_status knut_iceberg__jget(knut_iceberg__jctx *c, json_t *obj, const char *key, int required,
                               json_type want, json_t **out);

/* One schema object ({"type":"struct","schema-id":..,"fields":[..]}) into
 * out; schema-id defaults to default_id where the version allows it. */
knut_status knut_iceberg__schema_parse(knut_iceberg__jctx *c, json_t *j, int32_t default_id,
                                       knut_iceberg_schema *out);
void knut_iceberg__schema_clear(knut_iceberg_schema *s);
/* The table's schemas (v2 "schemas" + "current-schema-id", v1 "schema")
 * and partition specs ("partition-specs" + "default-spec-id", v1
 * "partition-spec") into t; c->version says which forms are allowed. */
knut_status knut_iceberg__schemas_parse(knut_iceberg__jctx *c, json_t *root,
                                        knut_iceberg_table *t);
knut_status knut_iceberg__specs_parse(knut_iceberg__jctx *c, json_t *root, knut_iceberg_table *t);
void knut_iceberg__spec_clear(knut_iceberg_spec *s);

/* Gunzips data[0..len) (one or more gzip members) into out, at most
 * KNUT_ICEBERG_METADATA_MAX bytes; errors name the file. */
knut_status knut_iceberg__gunzip(const void *data, size_t len, const char *name, knut_buf *out,
                                 knut_error *err);

#endif
