/*
 * Arrow types: parsing and printing the C Data Interface format strings
 * ("l", "tsu:UTC", "+l", "w:16", "d:38,10", ...) into a self-contained
 * knut_arrow_type_info, plus the per-type layout facts (buffer and child
 * counts, value widths) that the builder, view and validator share.
 */
#include "knut/arrow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const type_names[KNUT_ARROW_TYPE_COUNT] = {
    [KNUT_ARROW_NA] = "na",
    [KNUT_ARROW_BOOL] = "bool",
    [KNUT_ARROW_INT8] = "int8",
    [KNUT_ARROW_UINT8] = "uint8",
    [KNUT_ARROW_INT16] = "int16",
    [KNUT_ARROW_UINT16] = "uint16",
    [KNUT_ARROW_INT32] = "int32",
    [KNUT_ARROW_UINT32] = "uint32",
    [KNUT_ARROW_INT64] = "int64",
    [KNUT_ARROW_UINT64] = "uint64",
    [KNUT_ARROW_HALF_FLOAT] = "half_float",
    [KNUT_ARROW_FLOAT] = "float",
    [KNUT_ARROW_DOUBLE] = "double",
    [KNUT_ARROW_UTF8] = "utf8",
    [KNUT_ARROW_LARGE_UTF8] = "large_utf8",
    [KNUT_ARROW_BINARY] = "binary",
    [KNUT_ARROW_LARGE_BINARY] = "large_binary",
    [KNUT_ARROW_FIXED_BINARY] = "fixed_size_binary",
    [KNUT_ARROW_DECIMAL128] = "decimal128",
    [KNUT_ARROW_DATE32] = "date32",
    [KNUT_ARROW_DATE64] = "date64",
    [KNUT_ARROW_TIME32] = "time32",
    [KNUT_ARROW_TIME64] = "time64",
    [KNUT_ARROW_TIMESTAMP] = "timestamp",
    [KNUT_ARROW_DURATION] = "duration",
    [KNUT_ARROW_INTERVAL_MONTHS] = "interval_months",
    [KNUT_ARROW_INTERVAL_DAY_TIME] = "interval_day_time",
    [KNUT_ARROW_INTERVAL_MDN] = "interval_month_day_nano",
    [KNUT_ARROW_LIST] = "list",
    [KNUT_ARROW_LARGE_LIST] = "large_list",
    [KNUT_ARROW_STRUCT] = "struct",
    [KNUT_ARROW_MAP] = "map",
    [KNUT_ARROW_DENSE_UNION] = "dense_union",
};

const char *knut_arrow_type_name(knut_arrow_type type)
{
    if ((int)type < 0 || type >= KNUT_ARROW_TYPE_COUNT)
        return "unknown";
    return type_names[type];
}

/* Bytes per value, 0 where the values are not a fixed-width vector. */
static int32_t type_width(knut_arrow_type type)
{
    switch (type) {
    case KNUT_ARROW_INT8:
    case KNUT_ARROW_UINT8:
        return 1;
    case KNUT_ARROW_INT16:
    case KNUT_ARROW_UINT16:
    case KNUT_ARROW_HALF_FLOAT:
        return 2;
    case KNUT_ARROW_INT32:
    case KNUT_ARROW_UINT32:
    case KNUT_ARROW_FLOAT:
    case KNUT_ARROW_DATE32:
    case KNUT_ARROW_TIME32:
    case KNUT_ARROW_INTERVAL_MONTHS:
        return 4;
    case KNUT_ARROW_INT64:
    case KNUT_ARROW_UINT64:
    case KNUT_ARROW_DOUBLE:
    case KNUT_ARROW_DATE64:
    case KNUT_ARROW_TIME64:
    case KNUT_ARROW_TIMESTAMP:
    case KNUT_ARROW_DURATION:
    case KNUT_ARROW_INTERVAL_DAY_TIME:
        return 8;
    case KNUT_ARROW_DECIMAL128:
    case KNUT_ARROW_INTERVAL_MDN:
        return 16;
    default:
        return 0;
    }
}

void knut_arrow_type_info_init(knut_arrow_type_info *out, knut_arrow_type type)
{
    memset(out, 0, sizeof(*out));
    out->type = type;
    out->byte_width = type_width(type);
    if (type == KNUT_ARROW_TIMESTAMP || type == KNUT_ARROW_TIME64 || type == KNUT_ARROW_DURATION)
        out->unit = KNUT_ARROW_MICRO;
    else if (type == KNUT_ARROW_TIME32)
        out->unit = KNUT_ARROW_MILLI;
    if (type == KNUT_ARROW_DECIMAL128)
        out->precision = 38;
}

int knut_arrow_type_n_buffers(knut_arrow_type type)
{
    switch (type) {
    case KNUT_ARROW_NA:
        return 0;
    case KNUT_ARROW_STRUCT:
        return 1;
    case KNUT_ARROW_DENSE_UNION: /* type ids, offsets: a union has no validity */
        return 2;
    case KNUT_ARROW_UTF8:
    case KNUT_ARROW_LARGE_UTF8:
    case KNUT_ARROW_BINARY:
    case KNUT_ARROW_LARGE_BINARY:
        return 3;
    default:
        return 2;
    }
}

int knut_arrow_type_n_children(knut_arrow_type type)
{
    switch (type) {
    case KNUT_ARROW_LIST:
    case KNUT_ARROW_LARGE_LIST:
    case KNUT_ARROW_MAP:
        return 1;
    case KNUT_ARROW_STRUCT:
    case KNUT_ARROW_DENSE_UNION:
        return -1;
    default:
        return 0;
    }
}

static int32_t parse_i32(const char **p);

/* "+ud:I,J,...": the type ids, each 0..127, distinct. */
static knut_status parse_union(const char *format, knut_arrow_type_info *out, knut_error *err)
{
    knut_arrow_type_info_init(out, KNUT_ARROW_DENSE_UNION);
    const char *p = format + 4;
    uint8_t seen[KNUT_ARROW_UNION_MAX] = {0};
    if (*p == '\0')
        return KNUT_OK; /* a union of no children */
    for (;;) {
        int32_t id = parse_i32(&p);
        if (id < 0 || id >= KNUT_ARROW_UNION_MAX || seen[id] ||
            out->n_type_ids == KNUT_ARROW_UNION_MAX)
            return knut_error_set(err, KNUT_EINVAL, "bad union type ids in '%.64s'", format);
        seen[id] = 1;
        out->type_ids[out->n_type_ids++] = (int8_t)id;
        if (*p == '\0')
            return KNUT_OK;
        if (*p++ != ',')
            return knut_error_set(err, KNUT_EINVAL, "bad union type ids in '%.64s'", format);
    }
}

/* Parses a decimal int32 at *p (advancing it); -1 if absent or too big. */
static int32_t parse_i32(const char **p)
{
    const char *s = *p;
    int64_t v = 0;
    if (*s < '0' || *s > '9')
        return -1;
    while (*s >= '0' && *s <= '9') {
        v = v * 10 + (*s - '0');
        if (v > INT32_MAX)
            return -1;
        s++;
    }
    *p = s;
    return (int32_t)v;
}

static int parse_unit(char c, knut_arrow_time_unit *out)
{
    switch (c) {
    case 's': *out = KNUT_ARROW_SECOND; return 1;
    case 'm': *out = KNUT_ARROW_MILLI; return 1;
    case 'u': *out = KNUT_ARROW_MICRO; return 1;
    case 'n': *out = KNUT_ARROW_NANO; return 1;
    default: return 0;
    }
}

static const char unit_chars[] = {'s', 'm', 'u', 'n'};

static knut_status bad_format(knut_error *err, const char *format)
{
    return knut_error_set(err, KNUT_EINVAL, "invalid Arrow format string '%.64s'", format);
}

static knut_status parse_temporal(const char *f, knut_arrow_type_info *out, knut_error *err)
{
    const char *format = f;
    f++; /* 't' */
    switch (*f) {
    case 'd':
        if (strcmp(f, "dD") == 0)
            knut_arrow_type_info_init(out, KNUT_ARROW_DATE32);
        else if (strcmp(f, "dm") == 0)
            knut_arrow_type_info_init(out, KNUT_ARROW_DATE64);
        else
            return bad_format(err, format);
        return KNUT_OK;
    case 't': {
        knut_arrow_time_unit u;
        if (!parse_unit(f[1], &u) || f[2] != '\0')
            return bad_format(err, format);
        knut_arrow_type_info_init(out, u <= KNUT_ARROW_MILLI ? KNUT_ARROW_TIME32
                                                             : KNUT_ARROW_TIME64);
        out->unit = u;
        return KNUT_OK;
    }
    case 'D': {
        knut_arrow_time_unit u;
        if (!parse_unit(f[1], &u) || f[2] != '\0')
            return bad_format(err, format);
        knut_arrow_type_info_init(out, KNUT_ARROW_DURATION);
        out->unit = u;
        return KNUT_OK;
    }
    case 's': {
        knut_arrow_time_unit u;
        if (!parse_unit(f[1], &u))
            return bad_format(err, format);
        knut_arrow_type_info_init(out, KNUT_ARROW_TIMESTAMP);
        out->unit = u;
        /* The spec always writes the colon ("tsu:"); accept "tsu" too. */
        if (f[2] == '\0')
            return KNUT_OK;
        if (f[2] != ':')
            return bad_format(err, format);
        size_t n = strlen(f + 3);
        if (n >= sizeof(out->timezone))
            return knut_error_set(err, KNUT_ETOOBIG, "timezone too long in format '%.64s'",
                                  format);
        memcpy(out->timezone, f + 3, n + 1);
        return KNUT_OK;
    }
    case 'i':
        if (strcmp(f, "iM") == 0)
            knut_arrow_type_info_init(out, KNUT_ARROW_INTERVAL_MONTHS);
        else if (strcmp(f, "iD") == 0)
            knut_arrow_type_info_init(out, KNUT_ARROW_INTERVAL_DAY_TIME);
        else if (strcmp(f, "in") == 0)
            knut_arrow_type_info_init(out, KNUT_ARROW_INTERVAL_MDN);
        else
            return bad_format(err, format);
        return KNUT_OK;
    default:
        return bad_format(err, format);
    }
}

static knut_status parse_decimal(const char *format, knut_arrow_type_info *out, knut_error *err)
{
    const char *p = format + 2;
    int32_t prec = parse_i32(&p), scale, bits = 128;
    if (prec < 1 || *p++ != ',')
        return bad_format(err, format);
    int neg = (*p == '-');
    if (neg)
        p++;
    scale = parse_i32(&p);
    if (scale < 0)
        return bad_format(err, format);
    if (*p == ',') {
        p++;
        bits = parse_i32(&p);
    }
    if (*p != '\0')
        return bad_format(err, format);
    if (bits != 128)
        return knut_error_set(err, KNUT_EUNSUPPORTED, "unsupported decimal bit width in '%.64s'",
                              format);
    knut_arrow_type_info_init(out, KNUT_ARROW_DECIMAL128);
    out->precision = prec;
    out->scale = neg ? -scale : scale;
    return KNUT_OK;
}

knut_status knut_arrow_format_parse(const char *format, knut_arrow_type_info *out,
                                    knut_error *err)
{
    KNUT_ASSERT_ARG(err, format != NULL);
    KNUT_ASSERT_ARG(err, out != NULL);
    static const struct {
        char c;
        knut_arrow_type t;
    } simple[] = {
        {'n', KNUT_ARROW_NA},         {'b', KNUT_ARROW_BOOL},       {'c', KNUT_ARROW_INT8},
        {'C', KNUT_ARROW_UINT8},      {'s', KNUT_ARROW_INT16},      {'S', KNUT_ARROW_UINT16},
        {'i', KNUT_ARROW_INT32},      {'I', KNUT_ARROW_UINT32},     {'l', KNUT_ARROW_INT64},
        {'L', KNUT_ARROW_UINT64},     {'e', KNUT_ARROW_HALF_FLOAT}, {'f', KNUT_ARROW_FLOAT},
        {'g', KNUT_ARROW_DOUBLE},     {'u', KNUT_ARROW_UTF8},       {'U', KNUT_ARROW_LARGE_UTF8},
        {'z', KNUT_ARROW_BINARY},     {'Z', KNUT_ARROW_LARGE_BINARY},
    };
    if (format[0] != '\0' && format[1] == '\0') {
        for (size_t i = 0; i < sizeof(simple) / sizeof(simple[0]); i++) {
            if (simple[i].c == format[0]) {
                knut_arrow_type_info_init(out, simple[i].t);
                return KNUT_OK;
            }
        }
        return bad_format(err, format);
    }
    switch (format[0]) {
    case 't':
        return parse_temporal(format, out, err);
    case 'd':
        if (format[1] != ':')
            return bad_format(err, format);
        return parse_decimal(format, out, err);
    case 'w': {
        const char *p = format + 2;
        int32_t w;
        if (format[1] != ':' || (w = parse_i32(&p)) < 1 || *p != '\0')
            return bad_format(err, format);
        knut_arrow_type_info_init(out, KNUT_ARROW_FIXED_BINARY);
        out->byte_width = w;
        return KNUT_OK;
    }
    case '+':
        if (strncmp(format, "+ud:", 4) == 0)
            return parse_union(format, out, err);
        if (format[2] == '\0') {
            switch (format[1]) {
            case 'l': knut_arrow_type_info_init(out, KNUT_ARROW_LIST); return KNUT_OK;
            case 'L': knut_arrow_type_info_init(out, KNUT_ARROW_LARGE_LIST); return KNUT_OK;
            case 's': knut_arrow_type_info_init(out, KNUT_ARROW_STRUCT); return KNUT_OK;
            case 'm': knut_arrow_type_info_init(out, KNUT_ARROW_MAP); return KNUT_OK;
            default: break;
            }
        }
        return knut_error_set(err, KNUT_EUNSUPPORTED, "unsupported Arrow nested type '%.64s'",
                              format);
    case 'v':
        return knut_error_set(err, KNUT_EUNSUPPORTED, "unsupported Arrow view type '%.64s'",
                              format);
    default:
        return bad_format(err, format);
    }
}

knut_status knut_arrow_format_print(const knut_arrow_type_info *t, char *buf, size_t cap,
                                    knut_error *err)
{
    KNUT_ASSERT_ARG(err, t != NULL);
    KNUT_ASSERT_ARG(err, buf != NULL || cap == 0);
    static const char *const fixed[KNUT_ARROW_TYPE_COUNT] = {
        [KNUT_ARROW_NA] = "n",         [KNUT_ARROW_BOOL] = "b",
        [KNUT_ARROW_INT8] = "c",       [KNUT_ARROW_UINT8] = "C",
        [KNUT_ARROW_INT16] = "s",      [KNUT_ARROW_UINT16] = "S",
        [KNUT_ARROW_INT32] = "i",      [KNUT_ARROW_UINT32] = "I",
        [KNUT_ARROW_INT64] = "l",      [KNUT_ARROW_UINT64] = "L",
        [KNUT_ARROW_HALF_FLOAT] = "e", [KNUT_ARROW_FLOAT] = "f",
        [KNUT_ARROW_DOUBLE] = "g",     [KNUT_ARROW_UTF8] = "u",
        [KNUT_ARROW_LARGE_UTF8] = "U", [KNUT_ARROW_BINARY] = "z",
        [KNUT_ARROW_LARGE_BINARY] = "Z", [KNUT_ARROW_DATE32] = "tdD",
        [KNUT_ARROW_DATE64] = "tdm",   [KNUT_ARROW_INTERVAL_MONTHS] = "tiM",
        [KNUT_ARROW_INTERVAL_DAY_TIME] = "tiD", [KNUT_ARROW_INTERVAL_MDN] = "tin",
        [KNUT_ARROW_LIST] = "+l",      [KNUT_ARROW_LARGE_LIST] = "+L",
        [KNUT_ARROW_STRUCT] = "+s",    [KNUT_ARROW_MAP] = "+m",
    };
    int n;
    if ((int)t->type < 0 || t->type >= KNUT_ARROW_TYPE_COUNT)
        return knut_error_set(err, KNUT_EINVAL, "format_print: unknown type %d", (int)t->type);
    if ((int)t->unit < 0 || t->unit > KNUT_ARROW_NANO)
        return knut_error_set(err, KNUT_EINVAL, "format_print: unknown time unit %d",
                              (int)t->unit);
    switch (t->type) {
    case KNUT_ARROW_FIXED_BINARY:
        if (t->byte_width < 1)
            return knut_error_set(err, KNUT_EINVAL, "fixed_size_binary needs byte_width >= 1");
        n = snprintf(buf, cap, "w:%d", (int)t->byte_width);
        break;
    case KNUT_ARROW_DECIMAL128:
        n = snprintf(buf, cap, "d:%d,%d", (int)t->precision, (int)t->scale);
        break;
    case KNUT_ARROW_DENSE_UNION: {
        if (t->n_type_ids < 0 || t->n_type_ids > KNUT_ARROW_UNION_MAX)
            return knut_error_set(err, KNUT_EINVAL, "dense_union with %d type ids",
                                  (int)t->n_type_ids);
        n = snprintf(buf, cap, "+ud:");
        for (int32_t i = 0; i < t->n_type_ids && n >= 0 && (size_t)n < cap; i++) {
            int k = snprintf(buf + n, cap - (size_t)n, "%s%d", i ? "," : "", (int)t->type_ids[i]);
            n = k < 0 ? k : n + k;
        }
        break;
    }
    case KNUT_ARROW_TIME32:
    case KNUT_ARROW_TIME64:
        if ((t->type == KNUT_ARROW_TIME32) != (t->unit <= KNUT_ARROW_MILLI))
            return knut_error_set(err, KNUT_EINVAL, "%s cannot have unit '%c'",
                                  knut_arrow_type_name(t->type), unit_chars[t->unit]);
        n = snprintf(buf, cap, "tt%c", unit_chars[t->unit]);
        break;
    case KNUT_ARROW_DURATION:
        n = snprintf(buf, cap, "tD%c", unit_chars[t->unit]);
        break;
    case KNUT_ARROW_TIMESTAMP:
        if (memchr(t->timezone, '\0', sizeof(t->timezone)) == NULL)
            return knut_error_set(err, KNUT_EINVAL, "timestamp timezone not terminated");
        n = snprintf(buf, cap, "ts%c:%s", unit_chars[t->unit], t->timezone);
        break;
    default:
        n = snprintf(buf, cap, "%s", fixed[t->type]);
        break;
    }
    if (n < 0 || (size_t)n >= cap)
        return knut_error_set(err, KNUT_ETOOBIG, "format_print: buffer of %zu bytes too small",
                              cap);
    return KNUT_OK;
}

static int is_index_type(knut_arrow_type t)
{
    return t >= KNUT_ARROW_INT8 && t <= KNUT_ARROW_UINT64;
}

knut_status knut_arrow_schema_parse_type(const struct ArrowSchema *schema,
                                         knut_arrow_type_info *out, knut_error *err)
{
    KNUT_ASSERT_ARG(err, schema != NULL);
    KNUT_ASSERT_ARG(err, out != NULL);
    if (schema->release == NULL)
        return knut_error_set(err, KNUT_EINVAL, "schema is released");
    if (schema->format == NULL)
        return knut_error_set(err, KNUT_EINVAL, "schema has no format string");
    knut_status st = knut_arrow_format_parse(schema->format, out, err);
    if (st != KNUT_OK)
        return st;
    int want = knut_arrow_type_n_children(out->type);
    if (schema->n_children < 0 || (want >= 0 && schema->n_children != want))
        return knut_error_set(err, KNUT_EINVAL, "%s schema has %lld children, expected %d",
                              knut_arrow_type_name(out->type), (long long)schema->n_children,
                              want < 0 ? 0 : want);
    if (schema->n_children > 0 && schema->children == NULL)
        return knut_error_set(err, KNUT_EINVAL, "schema children pointer is NULL");
    for (int64_t i = 0; i < schema->n_children; i++) {
        if (schema->children[i] == NULL)
            return knut_error_set(err, KNUT_EINVAL, "schema child %lld is NULL", (long long)i);
    }
    if (out->type == KNUT_ARROW_DENSE_UNION && schema->n_children != out->n_type_ids)
        return knut_error_set(err, KNUT_EINVAL, "dense_union schema has %lld children and %d "
                                                "type ids", (long long)schema->n_children,
                              (int)out->n_type_ids);
    if (out->type == KNUT_ARROW_MAP) {
        const struct ArrowSchema *e = schema->children[0];
        if (e->format == NULL || strcmp(e->format, "+s") != 0 || e->n_children != 2)
            return knut_error_set(err, KNUT_EINVAL, "map entries must be a struct of 2 fields");
    }
    if (schema->dictionary != NULL && !is_index_type(out->type))
        return knut_error_set(err, KNUT_EINVAL, "dictionary index type %s is not an integer",
                              knut_arrow_type_name(out->type));
    return KNUT_OK;
}
