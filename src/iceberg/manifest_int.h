/*
 * Shared by manifest.c and manifest_value.c: reading Iceberg fields out of
 * decoded Avro records, with errors naming file, record and field.
 */
#ifndef KNUT_ICEBERG_MANIFEST_INT_H
#define KNUT_ICEBERG_MANIFEST_INT_H

#include "iceberg_int.h"

/* Entries (manifest list rows, manifest entries) read from one file. */
#define KNUT_ICEBERG__MAX_ENTRIES ((size_t)4 << 20)

typedef struct knut_iceberg__mf_ctx {
    const char *name; /* the file, for errors */
    int64_t rec_no;   /* 1-based record being read */
    knut_error *err;
} knut_iceberg__mf_ctx;

/* Sets err to "name: record N: field: text" and returns code. */
knut_status knut_iceberg__mf_fail(const knut_iceberg__mf_ctx *c, knut_status code,
                                  const char *field, const char *fmt, ...) KNUT_PRINTF(4, 5);

/* 1 and *out set when rec has the field and it is not null (a union with
 * null is unwrapped); 0 when absent or null. */
int knut_iceberg__mf_field(avro_value_t *rec, const char *name, avro_value_t *out);
/* 1 when rec's schema has the field (null or not). */
int knut_iceberg__mf_has(avro_value_t *rec, const char *name);

/*
 * Typed getters: name is the Avro field, field the path for errors. An
 * absent or null field is KNUT_EPARSE "missing required field" when
 * required, else leaves *out as it was (and *present 0). An int or long
 * Avro value is accepted for either; any other type is KNUT_EPARSE.
 */
knut_status knut_iceberg__mf_long(const knut_iceberg__mf_ctx *c, avro_value_t *rec,
                                  const char *name, const char *field, int required,
                                  int64_t *out, int *present);
knut_status knut_iceberg__mf_int(const knut_iceberg__mf_ctx *c, avro_value_t *rec,
                                 const char *name, const char *field, int required, int32_t *out);
/* *out malloc'd, or NULL when absent. */
knut_status knut_iceberg__mf_str(const knut_iceberg__mf_ctx *c, avro_value_t *rec,
                                 const char *name, const char *field, int required, char **out);
/* An optional array of ints (equality_ids). */
knut_status knut_iceberg__mf_int_list(const knut_iceberg__mf_ctx *c, avro_value_t *rec,
                                      const char *name, const char *field, int32_t **out,
                                      size_t *n);
/* data_file.partition (required) as a JSON array of its values, in field
 * order: numbers, JSON strings, booleans, null, bytes/fixed as a hex
 * string, doubles %.17g; "[]" for an empty record. */
knut_status knut_iceberg__mf_partition(const knut_iceberg__mf_ctx *c, avro_value_t *rec,
                                       char **out);
void knut_iceberg__mf_lower(char *s);

#endif
