/*
 * Reading Iceberg fields out of decoded Avro records, by name (Iceberg's
 * Avro schemas name fields as the spec does; ids are not needed to find
 * them): optional fields may be absent from the writer's schema or be a
 * union with null, and ints and longs are read as either width. Every
 * error names the file, the record and the field.
 */
#include "manifest_int.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

knut_status knut_iceberg__mf_fail(const knut_iceberg__mf_ctx *c, knut_status code,
                                  const char *field, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return knut_error_set_at(c->err, code, c->name, 0, 0, "record %lld: %s: %s",
                             (long long)c->rec_no, field, msg);
}

/* The value inside a union, if v is one. 1 when it is null. */
static int unwrap(avro_value_t *v)
{
    if (avro_value_get_type(v) == AVRO_UNION) {
        avro_value_t b;
        if (avro_value_get_current_branch(v, &b) != 0)
            return 1;
        *v = b;
    }
    return avro_value_get_type(v) == AVRO_NULL;
}

int knut_iceberg__mf_field(avro_value_t *rec, const char *name, avro_value_t *out)
{
    if (avro_value_get_by_name(rec, name, out, NULL) != 0)
        return 0;
    return !unwrap(out);
}

int knut_iceberg__mf_has(avro_value_t *rec, const char *name)
{
    avro_value_t v;
    return avro_value_get_by_name(rec, name, &v, NULL) == 0;
}

static const char *type_name(avro_type_t t)
{
    switch (t) {
    case AVRO_STRING: return "string";
    case AVRO_BYTES: return "bytes";
    case AVRO_INT32: return "int";
    case AVRO_INT64: return "long";
    case AVRO_FLOAT: return "float";
    case AVRO_DOUBLE: return "double";
    case AVRO_BOOLEAN: return "boolean";
    case AVRO_NULL: return "null";
    case AVRO_RECORD: return "record";
    case AVRO_ENUM: return "enum";
    case AVRO_FIXED: return "fixed";
    case AVRO_MAP: return "map";
    case AVRO_ARRAY: return "array";
    case AVRO_UNION: return "union";
    default: return "link";
    }
}

static knut_status missing(const knut_iceberg__mf_ctx *c, const char *field)
{
    return knut_iceberg__mf_fail(c, KNUT_EPARSE, field, "missing required field");
}

knut_status knut_iceberg__mf_long(const knut_iceberg__mf_ctx *c, avro_value_t *rec,
                                  const char *name, const char *field, int required,
                                  int64_t *out, int *present)
{
    avro_value_t v;
    if (present)
        *present = 0;
    if (!knut_iceberg__mf_field(rec, name, &v))
        return required ? missing(c, field) : KNUT_OK;
    avro_type_t t = avro_value_get_type(&v);
    if (t == AVRO_INT32) {
        int32_t i = 0;
        avro_value_get_int(&v, &i);
        *out = i;
    } else if (t == AVRO_INT64) {
        avro_value_get_long(&v, out);
    } else {
        return knut_iceberg__mf_fail(c, KNUT_EPARSE, field, "expected a long, got %s",
                                     type_name(t));
    }
    if (present)
        *present = 1;
    return KNUT_OK;
}

knut_status knut_iceberg__mf_int(const knut_iceberg__mf_ctx *c, avro_value_t *rec,
                                 const char *name, const char *field, int required, int32_t *out)
{
    int64_t v = 0;
    int present = 0;
    knut_status st = knut_iceberg__mf_long(c, rec, name, field, required, &v, &present);
    if (st != KNUT_OK || !present)
        return st;
    if (v < INT32_MIN || v > INT32_MAX)
        return knut_iceberg__mf_fail(c, KNUT_EPARSE, field, "%lld is out of range for an int",
                                     (long long)v);
    *out = (int32_t)v;
    return KNUT_OK;
}

knut_status knut_iceberg__mf_str(const knut_iceberg__mf_ctx *c, avro_value_t *rec,
                                 const char *name, const char *field, int required, char **out)
{
    avro_value_t v;
    *out = NULL;
    if (!knut_iceberg__mf_field(rec, name, &v))
        return required ? missing(c, field) : KNUT_OK;
    if (avro_value_get_type(&v) != AVRO_STRING)
        return knut_iceberg__mf_fail(c, KNUT_EPARSE, field, "expected a string, got %s",
                                     type_name(avro_value_get_type(&v)));
    const char *s = NULL;
    size_t size = 0;
    avro_value_get_string(&v, &s, &size);
    /* size counts avro-c's terminating NUL. */
    if (!(*out = strndup(s ? s : "", size ? size - 1 : 0)))
        return knut_iceberg__mf_fail(c, KNUT_ENOMEM, field, "out of memory");
    return KNUT_OK;
}

knut_status knut_iceberg__mf_int_list(const knut_iceberg__mf_ctx *c, avro_value_t *rec,
                                      const char *name, const char *field, int32_t **out,
                                      size_t *n)
{
    avro_value_t v;
    *out = NULL;
    *n = 0;
    if (!knut_iceberg__mf_field(rec, name, &v))
        return KNUT_OK;
    if (avro_value_get_type(&v) != AVRO_ARRAY)
        return knut_iceberg__mf_fail(c, KNUT_EPARSE, field, "expected an array, got %s",
                                     type_name(avro_value_get_type(&v)));
    size_t len = 0;
    avro_value_get_size(&v, &len);
    if (len == 0)
        return KNUT_OK;
    int32_t *ids = calloc(len, sizeof *ids);
    if (!ids)
        return knut_iceberg__mf_fail(c, KNUT_ENOMEM, field, "out of memory");
    /* Field ids are ints, but pyiceberg 0.12 declares equality_ids'
     * items as long: take either, if the value fits. */
    for (size_t i = 0; i < len; i++) {
        avro_value_t e;
        int32_t x = 0;
        int64_t l = 0;
        int ok = avro_value_get_by_index(&v, i, &e, NULL) == 0 && !unwrap(&e);
        if (ok && avro_value_get_type(&e) == AVRO_INT32)
            ok = avro_value_get_int(&e, &x) == 0;
        else if (ok && avro_value_get_type(&e) == AVRO_INT64)
            ok = avro_value_get_long(&e, &l) == 0 && l >= INT32_MIN && l <= INT32_MAX &&
                 ((x = (int32_t)l), 1);
        else
            ok = 0;
        if (!ok) {
            free(ids);
            return knut_iceberg__mf_fail(c, KNUT_EPARSE, field, "item %zu is not an int", i);
        }
        ids[i] = x;
    }
    *out = ids;
    *n = len;
    return KNUT_OK;
}

/* ---- the partition tuple as JSON ---------------------------------------- */

static void put_hex(knut_buf *b, const void *p, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    const uint8_t *u = p;
    knut_buf_putc(b, '"');
    for (size_t i = 0; i < n; i++) {
        knut_buf_putc(b, hex[u[i] >> 4]);
        knut_buf_putc(b, hex[u[i] & 15]);
    }
    knut_buf_putc(b, '"');
}

static void put_double(knut_buf *b, double d, int digits)
{
    /* JSON has no NaN or infinities: they become strings. */
    if (isnan(d))
        knut_buf_puts(b, "\"NaN\"");
    else if (isinf(d))
        knut_buf_puts(b, d > 0 ? "\"Infinity\"" : "\"-Infinity\"");
    else
        knut_buf_printf(b, "%.*g", digits, d);
}

static knut_status put_value(const knut_iceberg__mf_ctx *c, knut_buf *b, avro_value_t *v,
                             const char *fname)
{
    if (unwrap(v)) {
        knut_buf_puts(b, "null");
        return KNUT_OK;
    }
    const void *p = NULL;
    size_t size = 0;
    switch (avro_value_get_type(v)) {
    case AVRO_INT32: {
        int32_t i = 0;
        avro_value_get_int(v, &i);
        knut_buf_printf(b, "%d", (int)i);
        return KNUT_OK;
    }
    case AVRO_INT64: {
        int64_t l = 0;
        avro_value_get_long(v, &l);
        knut_buf_printf(b, "%lld", (long long)l);
        return KNUT_OK;
    }
    case AVRO_BOOLEAN: {
        int t = 0;
        avro_value_get_boolean(v, &t);
        knut_buf_puts(b, t ? "true" : "false");
        return KNUT_OK;
    }
    case AVRO_STRING: {
        const char *s = NULL;
        avro_value_get_string(v, &s, &size);
        knut_buf_put_json_str(b, s ? s : "", size ? size - 1 : 0);
        return KNUT_OK;
    }
    case AVRO_BYTES:
        avro_value_get_bytes(v, &p, &size);
        put_hex(b, p, size);
        return KNUT_OK;
    case AVRO_FIXED:
        avro_value_get_fixed(v, &p, &size);
        put_hex(b, p, size);
        return KNUT_OK;
    case AVRO_FLOAT: {
        float f = 0;
        avro_value_get_float(v, &f);
        put_double(b, f, 9);
        return KNUT_OK;
    }
    case AVRO_DOUBLE: {
        double d = 0;
        avro_value_get_double(v, &d);
        put_double(b, d, 17);
        return KNUT_OK;
    }
    case AVRO_ENUM: {
        int e = 0;
        avro_value_get_enum(v, &e);
        const char *sym = avro_schema_enum_get(avro_value_get_schema(v), e);
        knut_buf_put_json_str(b, sym ? sym : "", sym ? strlen(sym) : 0);
        return KNUT_OK;
    }
    default:
        return knut_iceberg__mf_fail(c, KNUT_EPARSE, "data_file.partition",
                                     "field %s: a %s is not a partition value", fname,
                                     type_name(avro_value_get_type(v)));
    }
}

knut_status knut_iceberg__mf_partition(const knut_iceberg__mf_ctx *c, avro_value_t *rec,
                                       char **out)
{
    avro_value_t v;
    *out = NULL;
    if (!knut_iceberg__mf_field(rec, "partition", &v))
        return missing(c, "data_file.partition");
    if (avro_value_get_type(&v) != AVRO_RECORD)
        return knut_iceberg__mf_fail(c, KNUT_EPARSE, "data_file.partition",
                                     "expected a record, got %s",
                                     type_name(avro_value_get_type(&v)));
    knut_buf b;
    knut_buf_init(&b, (size_t)1 << 20);
    knut_buf_putc(&b, '[');
    size_t n = 0;
    avro_value_get_size(&v, &n);
    knut_status st = KNUT_OK;
    for (size_t i = 0; i < n && st == KNUT_OK; i++) {
        avro_value_t f;
        const char *fname = NULL;
        if (i)
            knut_buf_putc(&b, ',');
        if (avro_value_get_by_index(&v, i, &f, &fname) != 0)
            st = knut_iceberg__mf_fail(c, KNUT_EPARSE, "data_file.partition", "bad field %zu", i);
        else
            st = put_value(c, &b, &f, fname ? fname : "?");
    }
    knut_buf_putc(&b, ']');
    if (st == KNUT_OK && b.error != KNUT_OK)
        st = knut_iceberg__mf_fail(c, b.error, "data_file.partition", "%s",
                                   b.error == KNUT_ETOOBIG ? "over 1 MiB as JSON"
                                                           : "out of memory");
    if (st == KNUT_OK)
        *out = knut_buf_detach(&b, NULL);
    knut_buf_reset(&b);
    return st;
}

void knut_iceberg__mf_lower(char *s)
{
    for (; s && *s; s++)
        *s = (char)tolower((unsigned char)*s);
}
