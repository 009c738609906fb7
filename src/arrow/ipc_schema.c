/*
 * Arrow schemas <-> IPC Schema tables. Encoding maps each parsed format
 * string onto its Type union member; decoding does the reverse for bytes
 * from anywhere, so it checks child counts, bit widths and units, limits
 * nesting and the total number of fields, and names the field (as a dotted
 * path) in every error.
 */
#include "ipc_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Members of Schema.fbs's `union Type`. */
enum {
    T_NULL = 1, T_INT = 2, T_FLOAT = 3, T_BINARY = 4, T_UTF8 = 5, T_BOOL = 6,
    T_DECIMAL = 7, T_DATE = 8, T_TIME = 9, T_TIMESTAMP = 10, T_INTERVAL = 11,
    T_LIST = 12, T_STRUCT = 13, T_UNION = 14, T_FIXED_BINARY = 15,
    T_FIXED_LIST = 16, T_MAP = 17, T_DURATION = 18, T_LARGE_BINARY = 19,
    T_LARGE_UTF8 = 20, T_LARGE_LIST = 21, T_RUN_END = 22, T_BINARY_VIEW = 23,
    T_UTF8_VIEW = 24, T_LIST_VIEW = 25, T_LARGE_LIST_VIEW = 26
};

static const char *const fb_type_names[] = {
    "NONE", "Null", "Int", "FloatingPoint", "Binary", "Utf8", "Bool", "Decimal", "Date",
    "Time", "Timestamp", "Interval", "List", "Struct", "Union", "FixedSizeBinary",
    "FixedSizeList", "Map", "Duration", "LargeBinary", "LargeUtf8", "LargeList",
    "RunEndEncoded", "BinaryView", "Utf8View", "ListView", "LargeListView"};

/* Enum values shared with the format: DateUnit DAY = 0, MILLISECOND = 1;
 * TimeUnit SECOND..NANOSECOND = 0..3 (as knut_arrow_time_unit);
 * IntervalUnit YEAR_MONTH, DAY_TIME, MONTH_DAY_NANO = 0..2;
 * Precision HALF, SINGLE, DOUBLE = 0..2. */

/* ---- flattening -------------------------------------------------------- */

static knut_status flatten(knut_ipc_fields *f, const struct ArrowSchema *s, int depth,
                           size_t *cap, knut_error *err)
{
    const char *name = s->name ? s->name : "";
    if (depth > KNUT_FB_MAX_DEPTH)
        return knut_error_set(err, KNUT_EUNSUPPORTED, "column '%s': nested deeper than %d",
                              name, KNUT_FB_MAX_DEPTH);
    if (s->dictionary)
        return knut_error_set(err, KNUT_EUNSUPPORTED,
                              "column '%s': dictionary-encoded columns are not supported in "
                              "IPC",
                              name);
    if ((size_t)f->n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 16;
        knut_ipc_field *ni = realloc(f->items, ncap * sizeof *ni);
        if (!ni)
            return knut_error_set(err, KNUT_ENOMEM, "out of memory flattening the schema");
        f->items = ni;
        *cap = ncap;
    }
    knut_ipc_field *it = &f->items[f->n];
    knut_status st = knut_arrow_schema_parse_type(s, &it->type, err);
    if (st)
        return knut_error_prefix(err, "column '%s': ", name);
    it->schema = s;
    it->n_buffers = knut_arrow_type_n_buffers(it->type.type);
    f->n_buffers += it->n_buffers;
    f->n++;
    for (int64_t i = 0; i < s->n_children; i++) {
        st = flatten(f, s->children[i], depth + 1, cap, err);
        if (st)
            return st;
    }
    return KNUT_OK;
}

knut_status knut_ipc_fields_init(knut_ipc_fields *out, const struct ArrowSchema *schema,
                                 knut_error *err)
{
    memset(out, 0, sizeof *out);
    KNUT_ASSERT_ARG(err, schema && schema->release && schema->format);
    if (strcmp(schema->format, "+s") != 0)
        return knut_error_set(err, KNUT_EINVAL,
                              "IPC schema must be a struct (\"+s\") of columns, got \"%s\"",
                              schema->format);
    size_t cap = 0;
    knut_status st = KNUT_OK;
    for (int64_t i = 0; i < schema->n_children && !st; i++)
        st = flatten(out, schema->children[i], 1, &cap, err);
    if (st)
        knut_ipc_fields_reset(out);
    return st;
}

void knut_ipc_fields_reset(knut_ipc_fields *f)
{
    if (!f)
        return;
    free(f->items);
    memset(f, 0, sizeof *f);
}

/* ---- encoding ---------------------------------------------------------- */

static knut_fb_ref metadata_encode(knut_fb_builder *b, const char *metadata)
{
    if (!metadata)
        return 0;
    knut_arrow_metadata_reader r;
    knut_arrow_metadata_reader_init(&r, metadata);
    int32_t n = r.remaining > 0 ? r.remaining : 0;
    if (n == 0)
        return 0;
    knut_fb_ref *kv = malloc((size_t)n * sizeof *kv);
    if (!kv) {
        b->error = b->error ? b->error : KNUT_ENOMEM;
        return 0;
    }
    const char *k, *v;
    int32_t kl, vl, i = 0;
    while (i < n && knut_arrow_metadata_next(&r, &k, &kl, &v, &vl)) {
        knut_fb_ref ks = knut_fb_string_create(b, k, (size_t)kl);
        knut_fb_ref vs = knut_fb_string_create(b, v, (size_t)vl);
        knut_fb_table_start(b);
        knut_fb_table_add_ref(b, KNUT_IPC_KV_KEY, ks);
        knut_fb_table_add_ref(b, KNUT_IPC_KV_VALUE, vs);
        kv[i++] = knut_fb_table_end(b);
    }
    knut_fb_ref vec = knut_fb_vector_refs_create(b, kv, (size_t)i);
    free(kv);
    return vec;
}

/* Builds the Type table of t; *type_id gets its union member. */
static knut_fb_ref type_encode(knut_fb_builder *b, const knut_arrow_type_info *t, int64_t flags,
                               uint8_t *type_id)
{
    knut_fb_ref tz = 0;
    if (t->type == KNUT_ARROW_TIMESTAMP && t->timezone[0])
        tz = knut_fb_string_create(b, t->timezone, strlen(t->timezone));
    knut_fb_table_start(b);
    switch (t->type) {
    case KNUT_ARROW_NA: *type_id = T_NULL; break;
    case KNUT_ARROW_BOOL: *type_id = T_BOOL; break;
    case KNUT_ARROW_INT8: case KNUT_ARROW_UINT8: case KNUT_ARROW_INT16:
    case KNUT_ARROW_UINT16: case KNUT_ARROW_INT32: case KNUT_ARROW_UINT32:
    case KNUT_ARROW_INT64: case KNUT_ARROW_UINT64: {
        int is_signed = t->type == KNUT_ARROW_INT8 || t->type == KNUT_ARROW_INT16 ||
                        t->type == KNUT_ARROW_INT32 || t->type == KNUT_ARROW_INT64;
        *type_id = T_INT;
        knut_fb_table_add_i32(b, 0, t->byte_width * 8, 0);
        knut_fb_table_add_u8(b, 1, (uint8_t)is_signed, 0);
        break;
    }
    case KNUT_ARROW_HALF_FLOAT: *type_id = T_FLOAT; break; /* HALF is the default */
    case KNUT_ARROW_FLOAT: *type_id = T_FLOAT; knut_fb_table_add_i16(b, 0, 1, 0); break;
    case KNUT_ARROW_DOUBLE: *type_id = T_FLOAT; knut_fb_table_add_i16(b, 0, 2, 0); break;
    case KNUT_ARROW_UTF8: *type_id = T_UTF8; break;
    case KNUT_ARROW_LARGE_UTF8: *type_id = T_LARGE_UTF8; break;
    case KNUT_ARROW_BINARY: *type_id = T_BINARY; break;
    case KNUT_ARROW_LARGE_BINARY: *type_id = T_LARGE_BINARY; break;
    case KNUT_ARROW_FIXED_BINARY:
        *type_id = T_FIXED_BINARY;
        knut_fb_table_add_i32(b, 0, t->byte_width, 0);
        break;
    case KNUT_ARROW_DECIMAL128:
        *type_id = T_DECIMAL;
        knut_fb_table_add_i32(b, 0, t->precision, 0);
        knut_fb_table_add_i32(b, 1, t->scale, 0);
        knut_fb_table_add_i32(b, 2, 128, 128);
        break;
    case KNUT_ARROW_DATE32: *type_id = T_DATE; knut_fb_table_add_i16(b, 0, 0, 1); break;
    case KNUT_ARROW_DATE64: *type_id = T_DATE; knut_fb_table_add_i16(b, 0, 1, 1); break;
    case KNUT_ARROW_TIME32: case KNUT_ARROW_TIME64:
        *type_id = T_TIME;
        knut_fb_table_add_i16(b, 0, (int16_t)t->unit, 1);
        knut_fb_table_add_i32(b, 1, t->type == KNUT_ARROW_TIME32 ? 32 : 64, 32);
        break;
    case KNUT_ARROW_TIMESTAMP:
        *type_id = T_TIMESTAMP;
        knut_fb_table_add_i16(b, 0, (int16_t)t->unit, 0);
        knut_fb_table_add_ref(b, 1, tz);
        break;
    case KNUT_ARROW_DURATION:
        *type_id = T_DURATION;
        knut_fb_table_add_i16(b, 0, (int16_t)t->unit, 1);
        break;
    case KNUT_ARROW_INTERVAL_MONTHS: *type_id = T_INTERVAL; break;
    case KNUT_ARROW_INTERVAL_DAY_TIME:
        *type_id = T_INTERVAL;
        knut_fb_table_add_i16(b, 0, 1, 0);
        break;
    case KNUT_ARROW_INTERVAL_MDN: *type_id = T_INTERVAL; knut_fb_table_add_i16(b, 0, 2, 0); break;
    case KNUT_ARROW_LIST: *type_id = T_LIST; break;
    case KNUT_ARROW_LARGE_LIST: *type_id = T_LARGE_LIST; break;
    case KNUT_ARROW_STRUCT: *type_id = T_STRUCT; break;
    case KNUT_ARROW_MAP:
        *type_id = T_MAP;
        knut_fb_table_add_u8(b, 0, (flags & ARROW_FLAG_MAP_KEYS_SORTED) ? 1 : 0, 0);
        break;
    default:
        *type_id = 0;
        break;
    }
    return knut_fb_table_end(b);
}

static knut_status field_encode(knut_fb_builder *b, const struct ArrowSchema *s, int depth,
                                knut_fb_ref *out, knut_error *err)
{
    const char *name = s->name ? s->name : "";
    knut_arrow_type_info t;
    knut_fb_ref *kids = NULL;
    knut_status st = KNUT_OK;
    if (depth > KNUT_FB_MAX_DEPTH)
        return knut_error_set(err, KNUT_EUNSUPPORTED, "column '%s': nested deeper than %d",
                              name, KNUT_FB_MAX_DEPTH);
    if (s->dictionary)
        return knut_error_set(err, KNUT_EUNSUPPORTED,
                              "column '%s': dictionary-encoded columns are not supported in "
                              "IPC",
                              name);
    st = knut_arrow_schema_parse_type(s, &t, err);
    if (st)
        return knut_error_prefix(err, "column '%s': ", name);
    if (s->n_children > 0) {
        kids = malloc((size_t)s->n_children * sizeof *kids);
        if (!kids)
            return knut_error_set(err, KNUT_ENOMEM, "out of memory encoding the schema");
    }
    for (int64_t i = 0; i < s->n_children; i++) {
        st = field_encode(b, s->children[i], depth + 1, &kids[i], err);
        if (st)
            goto cleanup;
    }
    /* Arrow C++ rejects a Field without a children vector, even a leaf. */
    knut_fb_ref children = knut_fb_vector_refs_create(b, kids, (size_t)s->n_children);
    knut_fb_ref name_ref = knut_fb_string_create(b, name, strlen(name));
    knut_fb_ref meta = metadata_encode(b, s->metadata);
    uint8_t type_id = 0;
    knut_fb_ref type = type_encode(b, &t, s->flags, &type_id);
    if (!type_id) {
        st = knut_error_set(err, KNUT_EUNSUPPORTED, "column '%s': type %s not supported in IPC",
                            name, knut_arrow_type_name(t.type));
        goto cleanup;
    }
    knut_fb_table_start(b);
    knut_fb_table_add_ref(b, KNUT_IPC_FIELD_NAME, name_ref);
    knut_fb_table_add_u8(b, KNUT_IPC_FIELD_NULLABLE, (s->flags & ARROW_FLAG_NULLABLE) ? 1 : 0,
                         0);
    knut_fb_table_add_u8(b, KNUT_IPC_FIELD_TYPE_TYPE, type_id, 0);
    knut_fb_table_add_ref(b, KNUT_IPC_FIELD_TYPE, type);
    knut_fb_table_add_ref(b, KNUT_IPC_FIELD_CHILDREN, children);
    knut_fb_table_add_ref(b, KNUT_IPC_FIELD_METADATA, meta);
    *out = knut_fb_table_end(b);

cleanup:
    free(kids);
    return st;
}

knut_status knut_ipc_schema_encode(knut_fb_builder *b, const struct ArrowSchema *schema,
                                   knut_fb_ref *out, knut_error *err)
{
    knut_fb_ref *cols = NULL;
    knut_status st = KNUT_OK;
    int64_t n = schema->n_children;
    if (n > 0) {
        cols = malloc((size_t)n * sizeof *cols);
        if (!cols)
            return knut_error_set(err, KNUT_ENOMEM, "out of memory encoding the schema");
    }
    for (int64_t i = 0; i < n && !st; i++)
        st = field_encode(b, schema->children[i], 1, &cols[i], err);
    if (!st) {
        knut_fb_ref fields = knut_fb_vector_refs_create(b, cols, (size_t)n);
        knut_fb_ref meta = metadata_encode(b, schema->metadata);
        knut_fb_table_start(b);
        /* endianness Little is the default, so it is left out */
        knut_fb_table_add_ref(b, KNUT_IPC_SCHEMA_FIELDS, fields);
        knut_fb_table_add_ref(b, KNUT_IPC_SCHEMA_METADATA, meta);
        *out = knut_fb_table_end(b);
    }
    free(cols);
    return st;
}

/* ---- decoding ---------------------------------------------------------- */

typedef struct decode_ctx {
    int64_t max_fields;
    int64_t n_fields;
    char path[256]; /* dotted field path for messages */
    knut_error *err;
} decode_ctx;

static knut_status metadata_decode(const knut_fb_table *t, int id, char **out, decode_ctx *c)
{
    knut_fb_vector v;
    int present;
    knut_status st = knut_fb_read_vector(t, id, 4, &v, &present, c->err);
    char **keys = NULL, **vals = NULL;
    *out = NULL;
    if (st || !present || v.count == 0)
        return st;
    /* count is bounded by the metadata size (4 bytes per entry) */
    keys = calloc(v.count, sizeof *keys);
    vals = calloc(v.count, sizeof *vals);
    if (!keys || !vals) {
        st = knut_error_set(c->err, KNUT_ENOMEM, "out of memory reading metadata");
        goto cleanup;
    }
    for (uint32_t i = 0; i < v.count; i++) {
        knut_fb_table kv;
        const char *k = "", *val = "";
        size_t kl = 0, vl = 0;
        int kp, vp;
        st = knut_fb_vector_table(&v, i, &kv, c->err);
        if (!st)
            st = knut_fb_read_string(&kv, KNUT_IPC_KV_KEY, &k, &kl, &kp, c->err);
        if (!st)
            st = knut_fb_read_string(&kv, KNUT_IPC_KV_VALUE, &val, &vl, &vp, c->err);
        if (st)
            goto cleanup;
        keys[i] = strndup(kp ? k : "", kp ? kl : 0);
        vals[i] = strndup(vp ? val : "", vp ? vl : 0);
        if (!keys[i] || !vals[i]) {
            st = knut_error_set(c->err, KNUT_ENOMEM, "out of memory reading metadata");
            goto cleanup;
        }
    }
    st = knut_arrow_metadata_build(out, (const char *const *)keys, (const char *const *)vals,
                                   (int32_t)v.count, c->err);

cleanup:
    for (uint32_t i = 0; keys && vals && i < v.count; i++) {
        free(keys[i]);
        free(vals[i]);
    }
    free(keys);
    free(vals);
    return st;
}

static knut_status bad_field(decode_ctx *c, knut_status code, const char *what)
{
    return knut_error_set(c->err, code, "field '%s': %s", c->path, what);
}

/* Reads the Type table into *t (and map's sorted-keys flag into *flags). */
static knut_status type_decode(const knut_fb_table *f, knut_arrow_type_info *t, int64_t *flags,
                               decode_ctx *c)
{
    uint8_t tt;
    knut_fb_table tbl;
    int present;
    knut_status st = knut_fb_read_u8(f, KNUT_IPC_FIELD_TYPE_TYPE, 0, &tt, c->err);
    if (!st)
        st = knut_fb_read_table(f, KNUT_IPC_FIELD_TYPE, &tbl, &present, c->err);
    if (st)
        return st;
    if (tt == 0 || !present)
        return bad_field(c, KNUT_EPARSE, "no type");
    int32_t i32a = 0, i32b = 0, i32c = 0;
    int16_t unit = 0;
    uint8_t u8 = 0;
    char buf[96];
    switch (tt) {
    case T_NULL: knut_arrow_type_info_init(t, KNUT_ARROW_NA); return KNUT_OK;
    case T_BOOL: knut_arrow_type_info_init(t, KNUT_ARROW_BOOL); return KNUT_OK;
    case T_UTF8: knut_arrow_type_info_init(t, KNUT_ARROW_UTF8); return KNUT_OK;
    case T_LARGE_UTF8: knut_arrow_type_info_init(t, KNUT_ARROW_LARGE_UTF8); return KNUT_OK;
    case T_BINARY: knut_arrow_type_info_init(t, KNUT_ARROW_BINARY); return KNUT_OK;
    case T_LARGE_BINARY: knut_arrow_type_info_init(t, KNUT_ARROW_LARGE_BINARY); return KNUT_OK;
    case T_LIST: knut_arrow_type_info_init(t, KNUT_ARROW_LIST); return KNUT_OK;
    case T_LARGE_LIST: knut_arrow_type_info_init(t, KNUT_ARROW_LARGE_LIST); return KNUT_OK;
    case T_STRUCT: knut_arrow_type_info_init(t, KNUT_ARROW_STRUCT); return KNUT_OK;
    case T_INT: {
        st = knut_fb_read_i32(&tbl, 0, 0, &i32a, c->err);
        if (!st)
            st = knut_fb_read_u8(&tbl, 1, 0, &u8, c->err);
        if (st)
            return st;
        static const knut_arrow_type sig[] = {KNUT_ARROW_INT8, KNUT_ARROW_INT16,
                                              KNUT_ARROW_INT32, KNUT_ARROW_INT64};
        static const knut_arrow_type uns[] = {KNUT_ARROW_UINT8, KNUT_ARROW_UINT16,
                                              KNUT_ARROW_UINT32, KNUT_ARROW_UINT64};
        int k = i32a == 8 ? 0 : i32a == 16 ? 1 : i32a == 32 ? 2 : i32a == 64 ? 3 : -1;
        if (k < 0) {
            snprintf(buf, sizeof buf, "unsupported integer bit width %d", (int)i32a);
            return bad_field(c, KNUT_EUNSUPPORTED, buf);
        }
        knut_arrow_type_info_init(t, u8 ? sig[k] : uns[k]);
        return KNUT_OK;
    }
    case T_FLOAT:
        st = knut_fb_read_i16(&tbl, 0, 0, &unit, c->err);
        if (st)
            return st;
        if (unit < 0 || unit > 2)
            return bad_field(c, KNUT_EPARSE, "bad floating point precision");
        knut_arrow_type_info_init(t, unit == 0 ? KNUT_ARROW_HALF_FLOAT
                                     : unit == 1 ? KNUT_ARROW_FLOAT
                                                 : KNUT_ARROW_DOUBLE);
        return KNUT_OK;
    case T_FIXED_BINARY:
        st = knut_fb_read_i32(&tbl, 0, 0, &i32a, c->err);
        if (st)
            return st;
        if (i32a <= 0)
            return bad_field(c, KNUT_EPARSE, "fixed-size binary width must be positive");
        knut_arrow_type_info_init(t, KNUT_ARROW_FIXED_BINARY);
        t->byte_width = i32a;
        return KNUT_OK;
    case T_DECIMAL:
        st = knut_fb_read_i32(&tbl, 0, 0, &i32a, c->err);
        if (!st)
            st = knut_fb_read_i32(&tbl, 1, 0, &i32b, c->err);
        if (!st)
            st = knut_fb_read_i32(&tbl, 2, 128, &i32c, c->err);
        if (st)
            return st;
        if (i32c != 128)
            return bad_field(c, KNUT_EUNSUPPORTED, "only 128-bit decimals are supported");
        if (i32a < 1 || i32a > 38)
            return bad_field(c, KNUT_EPARSE, "decimal precision out of range 1..38");
        knut_arrow_type_info_init(t, KNUT_ARROW_DECIMAL128);
        t->precision = i32a;
        t->scale = i32b;
        return KNUT_OK;
    case T_DATE:
        st = knut_fb_read_i16(&tbl, 0, 1, &unit, c->err);
        if (st)
            return st;
        if (unit != 0 && unit != 1)
            return bad_field(c, KNUT_EPARSE, "bad date unit");
        knut_arrow_type_info_init(t, unit == 0 ? KNUT_ARROW_DATE32 : KNUT_ARROW_DATE64);
        return KNUT_OK;
    case T_TIME:
        st = knut_fb_read_i16(&tbl, 0, 1, &unit, c->err);
        if (!st)
            st = knut_fb_read_i32(&tbl, 1, 32, &i32a, c->err);
        if (st)
            return st;
        if (!((unit == 0 || unit == 1) && i32a == 32) && !((unit == 2 || unit == 3) && i32a == 64))
            return bad_field(c, KNUT_EPARSE, "time unit and bit width do not match");
        knut_arrow_type_info_init(t, i32a == 32 ? KNUT_ARROW_TIME32 : KNUT_ARROW_TIME64);
        t->unit = (knut_arrow_time_unit)unit;
        return KNUT_OK;
    case T_TIMESTAMP: {
        const char *tz = NULL;
        size_t tzl = 0;
        st = knut_fb_read_i16(&tbl, 0, 0, &unit, c->err);
        if (!st)
            st = knut_fb_read_string(&tbl, 1, &tz, &tzl, &present, c->err);
        if (st)
            return st;
        if (unit < 0 || unit > 3)
            return bad_field(c, KNUT_EPARSE, "bad timestamp unit");
        knut_arrow_type_info_init(t, KNUT_ARROW_TIMESTAMP);
        t->unit = (knut_arrow_time_unit)unit;
        if (present) {
            if (tzl >= sizeof t->timezone || memchr(tz, 0, tzl))
                return bad_field(c, KNUT_EUNSUPPORTED, "timezone name too long or not text");
            memcpy(t->timezone, tz, tzl);
            t->timezone[tzl] = '\0';
        }
        return KNUT_OK;
    }
    case T_DURATION:
        st = knut_fb_read_i16(&tbl, 0, 1, &unit, c->err);
        if (st)
            return st;
        if (unit < 0 || unit > 3)
            return bad_field(c, KNUT_EPARSE, "bad duration unit");
        knut_arrow_type_info_init(t, KNUT_ARROW_DURATION);
        t->unit = (knut_arrow_time_unit)unit;
        return KNUT_OK;
    case T_INTERVAL:
        st = knut_fb_read_i16(&tbl, 0, 0, &unit, c->err);
        if (st)
            return st;
        if (unit < 0 || unit > 2)
            return bad_field(c, KNUT_EPARSE, "bad interval unit");
        knut_arrow_type_info_init(t, unit == 0 ? KNUT_ARROW_INTERVAL_MONTHS
                                     : unit == 1 ? KNUT_ARROW_INTERVAL_DAY_TIME
                                                 : KNUT_ARROW_INTERVAL_MDN);
        return KNUT_OK;
    case T_MAP:
        st = knut_fb_read_u8(&tbl, 0, 0, &u8, c->err);
        if (st)
            return st;
        knut_arrow_type_info_init(t, KNUT_ARROW_MAP);
        if (u8)
            *flags |= ARROW_FLAG_MAP_KEYS_SORTED;
        return KNUT_OK;
    default:
        snprintf(buf, sizeof buf, "type %s is not supported",
                 tt < sizeof fb_type_names / sizeof fb_type_names[0] ? fb_type_names[tt]
                                                                    : "(unknown)");
        return bad_field(c, KNUT_EUNSUPPORTED, buf);
    }
}

static knut_status field_decode(const knut_fb_table *f, struct ArrowSchema *out, decode_ctx *c)
{
    const char *name = "";
    size_t name_len = 0, path_len = strlen(c->path);
    int present;
    char *name_z = NULL, *meta = NULL;
    knut_fb_table dict;
    knut_fb_vector kids = {0};
    knut_arrow_type_info t;
    int64_t flags = 0;
    uint8_t nullable = 0;
    knut_status st;

    if (++c->n_fields > c->max_fields)
        return knut_error_set(c->err, KNUT_ETOOBIG, "schema has more than %lld fields",
                              (long long)c->max_fields);
    st = knut_fb_read_string(f, KNUT_IPC_FIELD_NAME, &name, &name_len, &present, c->err);
    if (st)
        return st;
    name_z = strndup(present ? name : "", present ? name_len : 0);
    if (!name_z)
        return knut_error_set(c->err, KNUT_ENOMEM, "out of memory reading the schema");
    /* path for messages: parent.name, truncated if long */
    snprintf(c->path + path_len, sizeof c->path - path_len, "%s%s", path_len ? "." : "",
             name_z);

    st = knut_fb_read_u8(f, KNUT_IPC_FIELD_NULLABLE, 0, &nullable, c->err);
    if (!st)
        st = knut_fb_read_table(f, KNUT_IPC_FIELD_DICTIONARY, &dict, &present, c->err);
    if (st)
        goto cleanup;
    if (present) {
        st = bad_field(c, KNUT_EUNSUPPORTED, "dictionary-encoded fields are not supported");
        goto cleanup;
    }
    st = type_decode(f, &t, &flags, c);
    if (!st)
        st = knut_fb_read_vector(f, KNUT_IPC_FIELD_CHILDREN, 4, &kids, &present, c->err);
    if (!st)
        st = metadata_decode(f, KNUT_IPC_FIELD_METADATA, &meta, c);
    if (st)
        goto cleanup;
    int need = knut_arrow_type_n_children(t.type);
    if ((need >= 0 && (int64_t)kids.count != need)) {
        char buf[96];
        snprintf(buf, sizeof buf, "type %s needs %d child field(s), has %u",
                 knut_arrow_type_name(t.type), need, kids.count);
        st = bad_field(c, KNUT_EPARSE, buf);
        goto cleanup;
    }
    if ((int64_t)kids.count > c->max_fields - c->n_fields) {
        st = knut_error_set(c->err, KNUT_ETOOBIG, "schema has more than %lld fields",
                            (long long)c->max_fields);
        goto cleanup;
    }
    if (nullable)
        flags |= ARROW_FLAG_NULLABLE;
    st = knut_arrow_schema_init_type(out, &t, name_z, flags, kids.count, c->err);
    if (!st && meta)
        st = knut_arrow_schema_set_metadata(out, meta, c->err);
    for (uint32_t i = 0; !st && i < kids.count; i++) {
        knut_fb_table kt;
        st = knut_fb_vector_table(&kids, i, &kt, c->err);
        if (!st)
            st = field_decode(&kt, out->children[i], c);
    }
    if (!st && t.type == KNUT_ARROW_MAP) {
        const struct ArrowSchema *e = out->children[0];
        if (strcmp(e->format, "+s") != 0 || e->n_children != 2)
            st = bad_field(c, KNUT_EPARSE, "map entries must be a struct of key and value");
    }

cleanup:
    if (st && out->release)
        out->release(out);
    c->path[path_len] = '\0';
    free(name_z);
    free(meta);
    return st;
}

knut_status knut_ipc_schema_decode(const knut_fb_table *schema, int64_t max_fields,
                                   struct ArrowSchema *out, knut_error *err)
{
    decode_ctx c = {.max_fields = max_fields, .err = err};
    knut_fb_vector fields = {0};
    int present;
    uint8_t big = 0;
    char *meta = NULL;
    knut_status st;

    out->release = NULL;
    st = knut_fb_read_u8(schema, KNUT_IPC_SCHEMA_ENDIANNESS, 0, &big, err);
    if (st)
        return st;
    if (big)
        return knut_error_set(err, KNUT_EUNSUPPORTED, "big-endian streams are not supported");
    st = knut_fb_read_vector(schema, KNUT_IPC_SCHEMA_FIELDS, 4, &fields, &present, err);
    if (!st && (int64_t)fields.count > max_fields)
        st = knut_error_set(err, KNUT_ETOOBIG, "schema has more than %lld fields",
                            (long long)max_fields);
    if (!st)
        st = metadata_decode(schema, KNUT_IPC_SCHEMA_METADATA, &meta, &c);
    if (!st)
        st = knut_arrow_schema_init(out, "+s", "", 0, fields.count, err);
    if (!st && meta)
        st = knut_arrow_schema_set_metadata(out, meta, err);
    for (uint32_t i = 0; !st && i < fields.count; i++) {
        knut_fb_table ft;
        st = knut_fb_vector_table(&fields, i, &ft, err);
        if (!st)
            st = field_decode(&ft, out->children[i], &c);
    }
    if (st && out->release)
        out->release(out);
    free(meta);
    return st;
}
