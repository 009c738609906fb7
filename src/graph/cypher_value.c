/*
 * Cypher values for FalkorDB's `CYPHER name=value` parameter block. The
 * grammar (FalkorDB src/ast/param_parser.c, checked against a real v4.16.3
 * server) has quoted strings with backslash escapes, decimal integers,
 * doubles that need a '.' or an exponent, true/false/null, lists and maps
 * with backticked keys, and nothing else: no NaN, no temporal literals, no
 * escape for a backtick inside a backticked name. Everything here either
 * renders a value that parses back to exactly what the Arrow row holds, or
 * refuses it with an error naming set, row and column.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cypher_int.h"

/* ---- names in messages, UTF-8, identifiers ------------------------------ */

const char *knut_graph__msg_name(char *dst, size_t cap, const char *s, size_t len)
{
    if (cap == 0)
        return dst;
    size_t keep = len;
    int cut = 0;
    if (cap < 4) {
        dst[0] = '\0';
        return dst;
    }
    if (keep > cap - 1) {
        keep = cap - 4;
        /* back off to a character boundary so the cut stays valid UTF-8 */
        while (keep > 0 && ((unsigned char)s[keep] & 0xC0) == 0x80)
            keep--;
        cut = 1;
    }
    for (size_t i = 0; i < keep; i++) {
        unsigned char c = (unsigned char)s[i];
        dst[i] = (c < 0x20 || c == 0x7F) ? '?' : (char)c;
    }
    if (cut) {
        memcpy(dst + keep, "...", 3);
        keep += 3;
    }
    dst[keep] = '\0';
    return dst;
}

/* Length of the valid UTF-8 sequence at p (at most n bytes), or 0. */
static size_t utf8_seq(const uint8_t *p, size_t n)
{
    uint8_t c = p[0];
    size_t len;
    uint32_t cp;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
        cp = c & 0x1Fu;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        cp = c & 0x0Fu;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        cp = c & 0x07u;
    } else {
        return 0;
    }
    if (len > n)
        return 0;
    for (size_t k = 1; k < len; k++) {
        if ((p[k] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (p[k] & 0x3Fu);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
        return 0;
    if (cp >= 0xD800 && cp <= 0xDFFF)
        return 0;
    return len;
}

int64_t knut_graph__utf8_bad_offset(const uint8_t *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        if (s[i] < 0x80) {
            i++;
            continue;
        }
        size_t n = utf8_seq(s + i, len - i);
        if (n == 0)
            return (int64_t)i;
        i += n;
    }
    return -1;
}

knut_status knut_graph__ident_check(const char *name, size_t len, const char *what,
                                    knut_error *err)
{
    char shown[KNUT_GRAPH__MSG_NAME_MAX];
    if (name == NULL || len == 0)
        return knut_error_set(err, KNUT_EINVAL, "%s name is empty", what);
    knut_graph__msg_name(shown, sizeof(shown), name, len);
    const char *nul = memchr(name, '\0', len);
    if (nul != NULL)
        return knut_error_set(err, KNUT_EINVAL, "%s name '%s' contains a NUL byte at offset %zu",
                              what, shown, (size_t)(nul - name));
    const char *tick = memchr(name, '`', len);
    if (tick != NULL)
        return knut_error_set(err, KNUT_EINVAL,
                              "%s name '%s' contains a backtick at offset %zu, which FalkorDB "
                              "identifiers cannot hold (no escape exists for it)",
                              what, shown, (size_t)(tick - name));
    int64_t bad = knut_graph__utf8_bad_offset((const uint8_t *)name, len);
    if (bad >= 0)
        return knut_error_set(err, KNUT_EINVAL, "%s name '%s' is not valid UTF-8 at offset %" PRId64,
                              what, shown, bad);
    return KNUT_OK;
}

knut_status knut_graph_cypher_ident(knut_buf *out, const char *name, size_t len,
                                    const char *what, knut_error *err)
{
    KNUT_ASSERT_ARG(err, out != NULL);
    knut_status st = knut_graph__ident_check(name, len, what ? what : "identifier", err);
    if (st != KNUT_OK)
        return st;
    knut_buf_putc(out, '`');
    knut_buf_append(out, name, len);
    knut_buf_putc(out, '`');
    return knut_buf_check(out, err);
}

/* ---- strings ----------------------------------------------------------- */

/*
 * Single quotes, with \' and \\ escaped as the parser requires; \n, \r and
 * \t are escaped too although the parser takes them raw, so a rendered
 * command stays on one line in logs. Other bytes go through unchanged.
 * Returns the offset of a NUL or invalid UTF-8 byte in *bad (-1 if none;
 * then nothing useful is in out and the caller reports).
 */
static knut_status put_string(knut_buf *out, const char *s, size_t len, int64_t *bad,
                              int *bad_is_nul)
{
    const uint8_t *p = (const uint8_t *)s;
    size_t run = 0, i = 0;
    *bad = -1;
    *bad_is_nul = 0;
    knut_buf_putc(out, '\'');
    while (i < len) {
        uint8_t c = p[i];
        const char *esc = NULL;
        size_t step = 1;
        if (c == '\'')
            esc = "\\'";
        else if (c == '\\')
            esc = "\\\\";
        else if (c == '\n')
            esc = "\\n";
        else if (c == '\r')
            esc = "\\r";
        else if (c == '\t')
            esc = "\\t";
        else if (c == 0) {
            *bad = (int64_t)i;
            *bad_is_nul = 1;
            return KNUT_EINVAL;
        } else if (c >= 0x80) {
            step = utf8_seq(p + i, len - i);
            if (step == 0) {
                *bad = (int64_t)i;
                return KNUT_EINVAL;
            }
        }
        if (esc != NULL) {
            knut_buf_append(out, p + i - run, run);
            run = 0;
            knut_buf_puts(out, esc);
        } else {
            run += step;
        }
        i += step;
    }
    knut_buf_append(out, p + len - run, run);
    return knut_buf_putc(out, '\'');
}

knut_status knut_graph_cypher_string(knut_buf *out, const char *s, size_t len, knut_error *err)
{
    KNUT_ASSERT_ARG(err, out != NULL);
    KNUT_ASSERT_ARG(err, s != NULL || len == 0);
    size_t mark = out->len;
    int64_t bad;
    int is_nul;
    knut_status st = put_string(out, s ? s : "", len, &bad, &is_nul);
    if (bad >= 0) {
        if (out->error == KNUT_OK && out->data != NULL) {
            out->len = mark;
            out->data[mark] = '\0';
        }
        return knut_error_set(err, KNUT_EINVAL, "string %s at byte offset %" PRId64,
                              is_nul ? "contains a NUL byte" : "is not valid UTF-8", bad);
    }
    if (st != KNUT_OK)
        return knut_buf_check(out, err);
    return KNUT_OK;
}

/* ---- errors naming set, row and column --------------------------------- */

static knut_status loc_error(knut_error *err, knut_status code, const knut_graph_cypher_loc *loc,
                             const char *fmt, ...) KNUT_PRINTF(4, 5);

static knut_status loc_error(knut_error *err, knut_status code, const knut_graph_cypher_loc *loc,
                             const char *fmt, ...)
{
    char what[KNUT_ERROR_MSG_MAX];
    char set[KNUT_GRAPH__MSG_NAME_MAX], col[KNUT_GRAPH__MSG_NAME_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    const char *sname = loc && loc->set ? loc->set : NULL;
    const char *cname = loc && loc->column ? loc->column : "?";
    knut_graph__msg_name(col, sizeof(col), cname, strlen(cname));
    if (sname != NULL) {
        knut_graph__msg_name(set, sizeof(set), sname, strlen(sname));
        return knut_error_set(err, code, "set '%s': row %" PRId64 ", column '%s': %s", set,
                              loc->row, col, what);
    }
    return knut_error_set(err, code, "row %" PRId64 ", column '%s': %s", loc ? loc->row : 0, col,
                          what);
}

/* ---- numbers ----------------------------------------------------------- */

/* IEEE half bits to float, so half-float columns render like the others. */
static double half_to_double(uint16_t h)
{
    int sign = (h >> 15) & 1;
    int exp = (h >> 10) & 0x1F;
    int mant = h & 0x3FF;
    double v;
    if (exp == 0)
        v = ldexp((double)mant, -24);
    else if (exp == 31)
        v = mant ? NAN : INFINITY;
    else
        v = ldexp((double)(mant | 0x400), exp - 25);
    return sign ? -v : v;
}

/*
 * The shortest of %.15g..%.17g that reads back as d, so values stay exact
 * and short. A result without '.' or exponent gets ".0": the parser would
 * read "3" as an integer. The decimal point is forced to '.' whatever the
 * process locale says.
 */
static void format_double(char *buf, size_t cap, double d)
{
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, cap, "%.*g", prec, d);
        for (char *c = buf; *c; c++)
            if (*c == ',')
                *c = '.';
        if (strtod(buf, NULL) == d)
            break;
    }
    if (strpbrk(buf, ".e") == NULL) {
        size_t n = strlen(buf);
        if (n + 3 <= cap)
            memcpy(buf + n, ".0", 3);
    }
}

static knut_status put_double(knut_buf *out, double d, const knut_graph_cypher_loc *loc,
                              knut_error *err)
{
    char buf[40];
    if (isnan(d))
        return loc_error(err, KNUT_EINVAL, loc,
                         "NaN cannot be sent to FalkorDB (its parameter grammar has no NaN)");
    if (isinf(d)) {
        /* No Inf literal exists, but the parser's strtod overflows 1e999 to
         * ±Inf, which FalkorDB stores and returns as inf (checked on a real
         * server, and kept honest by the integration test). */
        return knut_buf_puts(out, d > 0 ? "1e999" : "-1e999");
    }
    format_double(buf, sizeof(buf), d);
    return knut_buf_puts(out, buf);
}

/* ---- temporal ---------------------------------------------------------- */

/* Days since 1970-01-01 of 0000-01-01 and of 9999-12-31: FalkorDB's date()
 * and localdatetime() parse four-digit years only. */
#define DAYS_MIN INT64_C(-719528)
#define DAYS_MAX INT64_C(2932896)

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        q--;
    return q;
}

/* Proleptic Gregorian civil date of a day number (days since 1970-01-01),
 * by counting 400-year eras of 146097 days from 0000-03-01. */
static void civil_from_days(int64_t days, int *y, int *m, int *d)
{
    int64_t z = days + 719468;
    int64_t era = floor_div(z, 146097);
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    int64_t day = doy - (153 * mp + 2) / 5 + 1;
    int64_t month = mp < 10 ? mp + 3 : mp - 9;
    *y = (int)(yoe + era * 400 + (month <= 2));
    *m = (int)month;
    *d = (int)day;
}

static int64_t unit_per_second(knut_arrow_time_unit u)
{
    switch (u) {
    case KNUT_ARROW_SECOND:
        return 1;
    case KNUT_ARROW_MILLI:
        return 1000;
    case KNUT_ARROW_MICRO:
        return 1000000;
    default:
        return 1000000000;
    }
}

static int unit_digits(knut_arrow_time_unit u)
{
    return u == KNUT_ARROW_MILLI ? 3 : u == KNUT_ARROW_MICRO ? 6 : 9;
}

static knut_status put_date(knut_buf *out, int64_t days, const knut_graph_cypher_loc *loc,
                            knut_error *err)
{
    int y, m, d;
    if (days < DAYS_MIN || days > DAYS_MAX)
        return loc_error(err, KNUT_EINVAL, loc,
                         "date %" PRId64 " days from 1970-01-01 is outside years 0000-9999, "
                         "which FalkorDB cannot parse",
                         days);
    civil_from_days(days, &y, &m, &d);
    return knut_buf_printf(out, "'%04d-%02d-%02d'", y, m, d);
}

/* 'HH:MM:SS' plus the fraction, if any, at the unit's precision. */
static void put_clock(knut_buf *out, int64_t sod, int64_t frac, knut_arrow_time_unit unit)
{
    knut_buf_printf(out, "%02d:%02d:%02d", (int)(sod / 3600), (int)(sod / 60 % 60),
                    (int)(sod % 60));
    if (frac != 0)
        knut_buf_printf(out, ".%0*" PRId64, unit_digits(unit), frac);
}

static knut_status put_timestamp(knut_buf *out, int64_t v, knut_arrow_time_unit unit,
                                 const knut_graph_cypher_loc *loc, knut_error *err)
{
    int64_t per = unit_per_second(unit);
    int64_t secs = floor_div(v, per);
    int64_t frac = v % per; /* not v - secs * per: that overflows near INT64_MIN */
    if (frac < 0)
        frac += per;
    int64_t days = floor_div(secs, 86400);
    int y, m, d;
    if (days < DAYS_MIN || days > DAYS_MAX)
        return loc_error(err, KNUT_EINVAL, loc,
                         "timestamp %" PRId64 " is outside years 0000-9999, which FalkorDB "
                         "cannot parse",
                         v);
    if (secs == -1)
        return loc_error(err, KNUT_EINVAL, loc,
                         "timestamp 1969-12-31T23:59:59 UTC cannot be stored: FalkorDB's "
                         "localdatetime() takes it for its -1 error value and fails");
    civil_from_days(days, &y, &m, &d);
    knut_buf_printf(out, "'%04d-%02d-%02dT", y, m, d);
    put_clock(out, secs - days * 86400, frac, unit);
    return knut_buf_putc(out, '\'');
}

static knut_status put_time(knut_buf *out, int64_t v, knut_arrow_time_unit unit,
                            const knut_graph_cypher_loc *loc, knut_error *err)
{
    int64_t per = unit_per_second(unit);
    if (v < 0 || v / per >= 86400)
        return loc_error(err, KNUT_EINVAL, loc, "time of day %" PRId64 " is outside 00:00-24:00",
                         v);
    knut_buf_putc(out, '\'');
    put_clock(out, v / per, v % per, unit);
    return knut_buf_putc(out, '\'');
}

/* ---- values ------------------------------------------------------------ */

static knut_status put_str_value(knut_buf *out, const char *s, int64_t len,
                                 const knut_graph_cypher_loc *loc, knut_error *err)
{
    size_t mark = out->len;
    int64_t bad;
    int is_nul;
    knut_status st = put_string(out, s, (size_t)len, &bad, &is_nul);
    if (bad < 0)
        return st;
    if (out->error == KNUT_OK && out->data != NULL) {
        out->len = mark;
        out->data[mark] = '\0';
    }
    if (is_nul)
        return loc_error(err, KNUT_EINVAL, loc,
                         "string contains a NUL byte at offset %" PRId64
                         ", which FalkorDB strings cannot hold",
                         bad);
    return loc_error(err, KNUT_EINVAL, loc, "string is not valid UTF-8 at byte offset %" PRId64,
                     bad);
}

/* A map key (struct field or map key) as a backticked name. */
static knut_status put_key(knut_buf *out, const char *name, size_t len,
                           const knut_graph_cypher_loc *loc, knut_error *err)
{
    knut_error sub = KNUT_ERROR_INIT;
    if (knut_graph__ident_check(name, len, "map key", &sub) != KNUT_OK)
        return loc_error(err, KNUT_EINVAL, loc, "%s", sub.message);
    knut_buf_putc(out, '`');
    knut_buf_append(out, name, len);
    knut_buf_putc(out, '`');
    return knut_buf_puts(out, ":");
}

static knut_status put_list(knut_buf *out, const knut_arrow_view *v, int64_t i,
                            const knut_graph_cypher_loc *loc, unsigned flags, knut_error *err)
{
    int64_t start, end;
    const knut_arrow_view *child = knut_arrow_view_child(v, 0);
    knut_arrow_view_list_range(v, i, &start, &end);
    knut_buf_putc(out, '[');
    for (int64_t j = start; j < end; j++) {
        if (j > start)
            knut_buf_putc(out, ',');
        if ((flags & KNUT_GRAPH__STORABLE) && knut_arrow_view_is_null(child, j))
            return loc_error(err, KNUT_EINVAL, loc,
                             "list element %" PRId64 " is null, which FalkorDB cannot store "
                             "inside a list",
                             j - start);
        knut_status st = knut_graph__value(out, child, j, loc, flags, err);
        if (st != KNUT_OK)
            return st;
    }
    return knut_buf_putc(out, ']');
}

static knut_status put_struct(knut_buf *out, const knut_arrow_view *v, int64_t i,
                              const knut_graph_cypher_loc *loc, unsigned flags, knut_error *err)
{
    int64_t row = knut_arrow_view_child_row(v, i);
    knut_buf_putc(out, '{');
    for (int64_t k = 0; k < v->n_children; k++) {
        const knut_arrow_view *c = &v->children[k];
        const char *name = c->schema->name ? c->schema->name : "";
        if (k > 0)
            knut_buf_putc(out, ',');
        knut_status st = put_key(out, name, strlen(name), loc, err);
        if (st == KNUT_OK)
            st = knut_graph__value(out, c, row, loc, flags, err);
        if (st != KNUT_OK)
            return st;
    }
    return knut_buf_putc(out, '}');
}

static knut_status put_map(knut_buf *out, const knut_arrow_view *v, int64_t i,
                           const knut_graph_cypher_loc *loc, unsigned flags, knut_error *err)
{
    int64_t start, end;
    const knut_arrow_view *entries = knut_arrow_view_child(v, 0);
    const knut_arrow_view *keys = entries ? knut_arrow_view_child(entries, 0) : NULL;
    const knut_arrow_view *vals = entries ? knut_arrow_view_child(entries, 1) : NULL;
    if (keys == NULL || vals == NULL ||
        (keys->type.type != KNUT_ARROW_UTF8 && keys->type.type != KNUT_ARROW_LARGE_UTF8) ||
        keys->dictionary != NULL)
        return loc_error(err, KNUT_EUNSUPPORTED, loc, "map keys must be strings");
    knut_arrow_view_list_range(v, i, &start, &end);
    knut_buf_putc(out, '{');
    for (int64_t j = start; j < end; j++) {
        int64_t row = knut_arrow_view_child_row(entries, j);
        int64_t klen;
        if (j > start)
            knut_buf_putc(out, ',');
        if (knut_arrow_view_is_null(keys, row))
            return loc_error(err, KNUT_EINVAL, loc, "map key %" PRId64 " is null", j - start);
        const char *key = knut_arrow_view_get_str(keys, row, &klen);
        knut_status st = put_key(out, key, (size_t)klen, loc, err);
        if (st == KNUT_OK)
            st = knut_graph__value(out, vals, row, loc, flags, err);
        if (st != KNUT_OK)
            return st;
    }
    return knut_buf_putc(out, '}');
}

/* A DECIMAL of scale 0 and at most 18 digits as the integer it is (16
 * little-endian bytes, two's complement); any other is refused, never
 * rounded (the sink refuses such a column before rendering). */
static knut_status put_decimal(knut_buf *out, const knut_arrow_view *v, int64_t i,
                               const knut_graph_cypher_loc *loc, knut_error *err)
{
    if (!knut_graph__decimal_is_int(&v->type))
        return loc_error(err, KNUT_EINVAL, loc,
                         "decimal(%d,%d) has no exact FalkorDB form (only scale 0 and "
                         "precision <= 18, as an integer)",
                         (int)v->type.precision, (int)v->type.scale);
    const uint8_t *p = (const uint8_t *)v->values + (size_t)(v->offset + i) * 16;
    uint64_t lo = 0, hi = 0;
    for (int b = 7; b >= 0; b--) {
        lo = lo << 8 | p[b];
        hi = hi << 8 | p[8 + b];
    }
    int64_t x = (int64_t)lo;
    if (hi != (x < 0 ? UINT64_MAX : 0))
        return loc_error(err, KNUT_EINVAL, loc, "decimal value does not fit 64 bits");
    return knut_buf_printf(out, "%" PRId64, x);
}

knut_status knut_graph__value(knut_buf *out, const knut_arrow_view *v, int64_t i,
                              const knut_graph_cypher_loc *loc, unsigned flags, knut_error *err)
{
    if (knut_arrow_view_is_null(v, i))
        return knut_buf_puts(out, "null");
    if (v->dictionary != NULL) {
        int64_t idx = knut_arrow_view_get_int64(v, i);
        if (idx < 0 || idx >= v->dictionary->length)
            return loc_error(err, KNUT_EINVAL, loc,
                             "dictionary index %" PRId64 " is outside the dictionary", idx);
        return knut_graph__value(out, v->dictionary, idx, loc, flags, err);
    }
    switch (v->type.type) {
    case KNUT_ARROW_BOOL:
        return knut_buf_puts(out, knut_arrow_view_get_bool(v, i) ? "true" : "false");
    case KNUT_ARROW_INT8:
    case KNUT_ARROW_INT16:
    case KNUT_ARROW_INT32:
    case KNUT_ARROW_INT64:
    case KNUT_ARROW_UINT8:
    case KNUT_ARROW_UINT16:
    case KNUT_ARROW_UINT32:
        return knut_buf_printf(out, "%" PRId64, knut_arrow_view_get_int64(v, i));
    case KNUT_ARROW_UINT64: {
        uint64_t u = knut_arrow_view_get_uint64(v, i);
        if (u > (uint64_t)INT64_MAX)
            return loc_error(err, KNUT_EINVAL, loc,
                             "unsigned value %" PRIu64 " is above the int64 maximum that "
                             "FalkorDB integers hold",
                             u);
        return knut_buf_printf(out, "%" PRIu64, u);
    }
    case KNUT_ARROW_HALF_FLOAT: {
        uint16_t bits = ((const uint16_t *)(const void *)v->values)[v->offset + i];
        return put_double(out, half_to_double(bits), loc, err);
    }
    case KNUT_ARROW_FLOAT:
    case KNUT_ARROW_DOUBLE:
        return put_double(out, knut_arrow_view_get_double(v, i), loc, err);
    case KNUT_ARROW_UTF8:
    case KNUT_ARROW_LARGE_UTF8: {
        int64_t len;
        const char *s = knut_arrow_view_get_str(v, i, &len);
        return put_str_value(out, s, len, loc, err);
    }
    case KNUT_ARROW_DATE32:
        return put_date(out, knut_arrow_view_get_int64(v, i), loc, err);
    case KNUT_ARROW_DATE64:
        return put_date(out, floor_div(knut_arrow_view_get_int64(v, i), 86400000), loc, err);
    case KNUT_ARROW_TIME32:
    case KNUT_ARROW_TIME64:
        return put_time(out, knut_arrow_view_get_int64(v, i), v->type.unit, loc, err);
    case KNUT_ARROW_TIMESTAMP:
        /* Arrow stores instants as UTC epoch values whether or not a zone is
         * attached (the zone only says how to display them), so the UTC
         * civil time is the value itself. */
        return put_timestamp(out, knut_arrow_view_get_int64(v, i), v->type.unit, loc, err);
    case KNUT_ARROW_DECIMAL128:
        return put_decimal(out, v, i, loc, err);
    case KNUT_ARROW_LIST:
    case KNUT_ARROW_LARGE_LIST:
        return put_list(out, v, i, loc, flags, err);
    case KNUT_ARROW_STRUCT:
        return put_struct(out, v, i, loc, flags, err);
    case KNUT_ARROW_MAP:
        return put_map(out, v, i, loc, flags, err);
    default:
        return loc_error(err, KNUT_EUNSUPPORTED, loc,
                         "%s values have no FalkorDB parameter form; cast the column first",
                         knut_arrow_type_name(v->type.type));
    }
}

knut_status knut_graph_cypher_value(knut_buf *out, const knut_arrow_view *v, int64_t i,
                                    const knut_graph_cypher_loc *loc, knut_error *err)
{
    KNUT_ASSERT_ARG(err, out != NULL && v != NULL);
    KNUT_ASSERT_ARG(err, i >= 0 && i < v->length);
    if (out->error != KNUT_OK)
        return knut_buf_check(out, err);
    size_t mark = out->len;
    knut_status st = knut_graph__value(out, v, i, loc, 0, err);
    if (st == KNUT_OK && out->error == KNUT_OK)
        return KNUT_OK;
    if (out->error != KNUT_OK) {
        st = knut_buf_check(out, err);
        out->error = KNUT_OK;
    }
    if (out->data != NULL) {
        out->len = mark;
        out->data[mark] = '\0';
    }
    return st;
}
