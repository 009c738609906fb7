/*
 * One Arrow value as text or JSON: numbers that round-trip, exact
 * decimals, ISO 8601 dates, times and timestamps, nested lists, structs
 * and maps as JSON arrays and objects, dictionary values resolved. Reads
 * through knut_arrow_view, so sliced arrays (offsets) render correctly.
 */
#include "render.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int knut_cli_render_is_numeric(const knut_arrow_view *v)
{
    if (v->dictionary)
        return knut_cli_render_is_numeric(v->dictionary);
    switch (v->type.type) {
    case KNUT_ARROW_INT8:
    case KNUT_ARROW_UINT8:
    case KNUT_ARROW_INT16:
    case KNUT_ARROW_UINT16:
    case KNUT_ARROW_INT32:
    case KNUT_ARROW_UINT32:
    case KNUT_ARROW_INT64:
    case KNUT_ARROW_UINT64:
    case KNUT_ARROW_HALF_FLOAT:
    case KNUT_ARROW_FLOAT:
    case KNUT_ARROW_DOUBLE:
    case KNUT_ARROW_DECIMAL128:
        return 1;
    default:
        return 0;
    }
}

/* ---- numbers ----------------------------------------------------------- */

static void put_i64(knut_buf *b, int64_t x)
{
    char tmp[24];
    char *p = tmp + sizeof tmp;
    uint64_t u = x < 0 ? (uint64_t)0 - (uint64_t)x : (uint64_t)x;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (x < 0)
        *--p = '-';
    knut_buf_append(b, p, (size_t)(tmp + sizeof tmp - p));
}

static void put_u64(knut_buf *b, uint64_t u)
{
    char tmp[24];
    char *p = tmp + sizeof tmp;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    knut_buf_append(b, p, (size_t)(tmp + sizeof tmp - p));
}

/* Shortest "%.*g" that reads back as the same value (15 digits usually
 * suffice; 17 always do for doubles, 9 for floats). */
static void put_double(knut_buf *b, double d, int is_float, knut_cli_value_style style)
{
    char tmp[40];
    if (isnan(d) || isinf(d)) {
        const char *s = isnan(d) ? "NaN" : d > 0 ? "Infinity" : "-Infinity";
        /* JSON has no literal for these: a string keeps the value. */
        if (style == KNUT_CLI_VALUE_JSON)
            knut_buf_put_json_str(b, s, strlen(s));
        else
            knut_buf_puts(b, isnan(d) ? "nan" : d > 0 ? "inf" : "-inf");
        return;
    }
    int lo = is_float ? 6 : 15, hi = is_float ? 9 : 17;
    for (int prec = lo; prec <= hi; prec++) {
        snprintf(tmp, sizeof tmp, "%.*g", prec, d);
        if (is_float ? (strtof(tmp, NULL) == (float)d) : (strtod(tmp, NULL) == d))
            break;
    }
    knut_buf_puts(b, tmp);
}

static double half_to_double(uint16_t h)
{
    int sign = h >> 15, exp = (h >> 10) & 0x1f, frac = h & 0x3ff;
    double v;
    if (exp == 0)
        v = ldexp(frac, -24);
    else if (exp == 31)
        v = frac ? NAN : INFINITY;
    else
        v = ldexp(frac + 1024, exp - 25);
    return sign ? -v : v;
}

/* 128-bit two's complement little-endian, scaled by 10^-scale. */
static void put_decimal128(knut_buf *b, const uint8_t *p, int32_t scale)
{
    uint64_t lo, hi;
    memcpy(&lo, p, 8);
    memcpy(&hi, p + 8, 8);
    unsigned __int128 u = ((unsigned __int128)hi << 64) | lo;
    int neg = (hi >> 63) != 0;
    if (neg)
        u = ~u + 1;
    char digits[48];
    int n = 0;
    do {
        digits[n++] = (char)('0' + (int)(u % 10));
        u /= 10;
    } while (u);
    if (neg)
        knut_buf_putc(b, '-');
    if (scale <= 0) {
        for (int i = n - 1; i >= 0; i--)
            knut_buf_putc(b, digits[i]);
        for (int i = 0; i < -scale; i++)
            knut_buf_putc(b, '0');
        return;
    }
    if (n <= scale) {
        knut_buf_puts(b, "0.");
        for (int i = 0; i < scale - n; i++)
            knut_buf_putc(b, '0');
        for (int i = n - 1; i >= 0; i--)
            knut_buf_putc(b, digits[i]);
        return;
    }
    for (int i = n - 1; i >= 0; i--) {
        knut_buf_putc(b, digits[i]);
        if (i == scale)
            knut_buf_putc(b, '.');
    }
}

/* ---- dates and times --------------------------------------------------- */

static int64_t floor_div(int64_t a, int64_t d)
{
    int64_t q = a / d;
    return (a % d != 0 && (a < 0) != (d < 0)) ? q - 1 : q;
}

/* Proleptic Gregorian date of a day count since 1970-01-01, by whole
 * 400-year eras (146097 days each) counted from 0000-03-01, so leap days
 * fall at the end of each shifted year. */
static void date_of_days(int64_t days, int64_t *y, int *m, int *d)
{
    int64_t z = days + 719468; /* days from 0000-03-01 to 1970-01-01 */
    int64_t era = floor_div(z, 146097);
    int64_t doe = z - era * 146097;                                  /* [0, 146096] */
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365; /* [0, 399] */
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);           /* [0, 365] */
    int64_t mp = (5 * doy + 2) / 153;                                /* March = 0 */
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

static void put_date(knut_buf *b, int64_t days)
{
    int64_t y;
    int m, d;
    date_of_days(days, &y, &m, &d);
    if (y < 0)
        knut_buf_printf(b, "-%04" PRId64 "-%02d-%02d", -y, m, d);
    else
        knut_buf_printf(b, "%04" PRId64 "-%02d-%02d", y, m, d);
}

static const int64_t unit_per_second[] = {1, 1000, 1000000, 1000000000};
static const int unit_digits[] = {0, 3, 6, 9};

/* HH:MM:SS plus the fraction without trailing zeros. */
static void put_time_of_day(knut_buf *b, int64_t ticks, knut_arrow_time_unit unit)
{
    int64_t per = unit_per_second[unit];
    int64_t secs = ticks / per, frac = ticks % per;
    knut_buf_printf(b, "%02d:%02d:%02d", (int)(secs / 3600), (int)(secs / 60 % 60),
                    (int)(secs % 60));
    if (frac) {
        char f[16];
        int nd = unit_digits[unit];
        snprintf(f, sizeof f, "%0*" PRId64, nd, frac);
        while (nd > 0 && f[nd - 1] == '0')
            f[--nd] = '\0';
        knut_buf_putc(b, '.');
        knut_buf_puts(b, f);
    }
}

static void put_timestamp(knut_buf *b, int64_t ticks, const knut_arrow_type_info *t, int json)
{
    int64_t per_day = unit_per_second[t->unit] * 86400;
    int64_t days = floor_div(ticks, per_day);
    put_date(b, days);
    knut_buf_putc(b, json ? 'T' : ' ');
    put_time_of_day(b, ticks - days * per_day, t->unit);
    /* A timestamp with a zone is an instant in UTC: say so. */
    if (t->timezone[0])
        knut_buf_puts(b, json ? "Z" : "+00");
}

static const char *const unit_suffix[] = {"s", "ms", "us", "ns"};

/* ISO 8601 duration: P<m>M<d>DT<s>S (any part may be negative). */
static void put_interval(knut_buf *b, int64_t months, int64_t days, int64_t nanos)
{
    knut_buf_putc(b, 'P');
    if (months)
        knut_buf_printf(b, "%" PRId64 "M", months);
    if (days)
        knut_buf_printf(b, "%" PRId64 "D", days);
    if (nanos || (!months && !days)) {
        int64_t s = nanos / 1000000000, f = nanos % 1000000000;
        knut_buf_puts(b, "T");
        if (f < 0 && s == 0)
            knut_buf_putc(b, '-');
        put_i64(b, s);
        if (f) {
            char tmp[16];
            int nd = 9;
            snprintf(tmp, sizeof tmp, "%09" PRId64, f < 0 ? -f : f);
            while (nd > 0 && tmp[nd - 1] == '0')
                tmp[--nd] = '\0';
            knut_buf_putc(b, '.');
            knut_buf_puts(b, tmp);
        }
        knut_buf_putc(b, 'S');
    }
}

/* ---- bytes ------------------------------------------------------------- */

/* Binary as text the way DuckDB shows blobs: printable ASCII kept, every
 * other byte as \xNN. */
static void put_blob_text(knut_buf *b, const char *p, int64_t len)
{
    static const char hex[] = "0123456789ABCDEF";
    for (int64_t k = 0; k < len; k++) {
        unsigned char c = (unsigned char)p[k];
        if (c >= 0x20 && c < 0x7f && c != '\\') {
            knut_buf_putc(b, (char)c);
        } else {
            char e[4] = {'\\', 'x', hex[c >> 4], hex[c & 15]};
            knut_buf_append(b, e, 4);
        }
    }
}

static void put_blob(knut_buf *b, const char *p, int64_t len, knut_cli_value_style style)
{
    if (style == KNUT_CLI_VALUE_TEXT) {
        put_blob_text(b, p, len);
        return;
    }
    knut_buf tmp = KNUT_BUF_INIT;
    put_blob_text(&tmp, p, len);
    knut_buf_put_json_str(b, tmp.data ? tmp.data : "", tmp.len);
    knut_buf_reset(&tmp);
}

/* ---- values ------------------------------------------------------------ */

static void put_str(knut_buf *b, const char *s, size_t len, knut_cli_value_style style)
{
    if (style == KNUT_CLI_VALUE_JSON)
        knut_buf_put_json_str(b, s, len);
    else
        knut_buf_append(b, s, len);
}

/* Map keys become JSON object keys, so they are rendered as text first. */
static void put_key(knut_buf *b, const knut_arrow_view *v, int64_t i)
{
    knut_buf tmp = KNUT_BUF_INIT;
    knut_cli_render_value(&tmp, v, i, KNUT_CLI_VALUE_TEXT);
    knut_buf_put_json_str(b, tmp.data ? tmp.data : "", tmp.len);
    knut_buf_reset(&tmp);
}

static void render_value(knut_buf *b, const knut_arrow_view *v, int64_t i,
                         knut_cli_value_style style, int spaced);

/* Lists, structs and maps as JSON; spaced (", " and ": ") when shown as
 * text for people, compact inside JSON output. */
static void put_nested(knut_buf *b, const knut_arrow_view *v, int64_t i, int spaced)
{
    const char *comma = spaced ? ", " : ",", *colon = spaced ? ": " : ":";
    const knut_arrow_type t = v->type.type;
    if (t == KNUT_ARROW_STRUCT) {
        knut_buf_putc(b, '{');
        for (int64_t k = 0; k < v->n_children; k++) {
            const knut_arrow_view *c = &v->children[k];
            const char *name = c->schema->name ? c->schema->name : "";
            if (k)
                knut_buf_puts(b, comma);
            knut_buf_put_json_str(b, name, strlen(name));
            knut_buf_puts(b, colon);
            render_value(b, c, knut_arrow_view_child_row(v, i), KNUT_CLI_VALUE_JSON, spaced);
        }
        knut_buf_putc(b, '}');
        return;
    }
    int64_t start, end;
    knut_arrow_view_list_range(v, i, &start, &end);
    const knut_arrow_view *items = &v->children[0];
    if (t == KNUT_ARROW_MAP && items->n_children == 2) {
        knut_buf_putc(b, '{');
        for (int64_t k = start; k < end; k++) {
            int64_t row = knut_arrow_view_child_row(items, k);
            if (k > start)
                knut_buf_puts(b, comma);
            put_key(b, &items->children[0], row);
            knut_buf_puts(b, colon);
            render_value(b, &items->children[1], row, KNUT_CLI_VALUE_JSON, spaced);
        }
        knut_buf_putc(b, '}');
        return;
    }
    knut_buf_putc(b, '[');
    for (int64_t k = start; k < end; k++) {
        if (k > start)
            knut_buf_puts(b, comma);
        render_value(b, items, k, KNUT_CLI_VALUE_JSON, spaced);
    }
    knut_buf_putc(b, ']');
}

void knut_cli_render_value(knut_buf *b, const knut_arrow_view *v, int64_t i,
                           knut_cli_value_style style)
{
    render_value(b, v, i, style, style == KNUT_CLI_VALUE_TEXT);
}

static void render_value(knut_buf *b, const knut_arrow_view *v, int64_t i,
                         knut_cli_value_style style, int spaced)
{
    const int json = style == KNUT_CLI_VALUE_JSON;
    if (knut_arrow_view_is_null(v, i)) {
        knut_buf_puts(b, json ? "null" : "NULL");
        return;
    }
    if (v->dictionary) {
        render_value(b, v->dictionary, knut_arrow_view_get_int64(v, i), style, spaced);
        return;
    }
    const knut_arrow_type_info *t = &v->type;
    int64_t len = 0;
    const char *p;
    switch (t->type) {
    case KNUT_ARROW_NA:
        knut_buf_puts(b, json ? "null" : "NULL");
        break;
    case KNUT_ARROW_BOOL:
        knut_buf_puts(b, knut_arrow_view_get_bool(v, i) ? "true" : "false");
        break;
    case KNUT_ARROW_INT8:
    case KNUT_ARROW_INT16:
    case KNUT_ARROW_INT32:
    case KNUT_ARROW_INT64:
    case KNUT_ARROW_UINT8:
    case KNUT_ARROW_UINT16:
    case KNUT_ARROW_UINT32:
        put_i64(b, knut_arrow_view_get_int64(v, i));
        break;
    case KNUT_ARROW_UINT64:
        put_u64(b, knut_arrow_view_get_uint64(v, i));
        break;
    case KNUT_ARROW_HALF_FLOAT:
        put_double(b, half_to_double((uint16_t)knut_arrow_view_get_uint64(v, i)), 1, style);
        break;
    case KNUT_ARROW_FLOAT:
        put_double(b, knut_arrow_view_get_double(v, i), 1, style);
        break;
    case KNUT_ARROW_DOUBLE:
        put_double(b, knut_arrow_view_get_double(v, i), 0, style);
        break;
    case KNUT_ARROW_DECIMAL128:
        p = knut_arrow_view_get_bytes(v, i, &len);
        put_decimal128(b, (const uint8_t *)p, t->scale);
        break;
    case KNUT_ARROW_UTF8:
    case KNUT_ARROW_LARGE_UTF8:
        p = knut_arrow_view_get_str(v, i, &len);
        put_str(b, p, (size_t)len, style);
        break;
    case KNUT_ARROW_BINARY:
    case KNUT_ARROW_LARGE_BINARY:
    case KNUT_ARROW_FIXED_BINARY:
        p = knut_arrow_view_get_bytes(v, i, &len);
        put_blob(b, p, len, style);
        break;
    case KNUT_ARROW_DATE32:
    case KNUT_ARROW_DATE64: {
        int64_t days = knut_arrow_view_get_int64(v, i);
        if (t->type == KNUT_ARROW_DATE64)
            days = floor_div(days, 86400000);
        if (json)
            knut_buf_putc(b, '"');
        put_date(b, days);
        if (json)
            knut_buf_putc(b, '"');
        break;
    }
    case KNUT_ARROW_TIME32:
    case KNUT_ARROW_TIME64:
        if (json)
            knut_buf_putc(b, '"');
        put_time_of_day(b, knut_arrow_view_get_int64(v, i), t->unit);
        if (json)
            knut_buf_putc(b, '"');
        break;
    case KNUT_ARROW_TIMESTAMP:
        if (json)
            knut_buf_putc(b, '"');
        put_timestamp(b, knut_arrow_view_get_int64(v, i), t, json);
        if (json)
            knut_buf_putc(b, '"');
        break;
    case KNUT_ARROW_DURATION:
        if (json)
            knut_buf_putc(b, '"');
        put_i64(b, knut_arrow_view_get_int64(v, i));
        knut_buf_puts(b, unit_suffix[t->unit]);
        if (json)
            knut_buf_putc(b, '"');
        break;
    case KNUT_ARROW_INTERVAL_MONTHS:
    case KNUT_ARROW_INTERVAL_DAY_TIME:
    case KNUT_ARROW_INTERVAL_MDN: {
        p = knut_arrow_view_get_bytes(v, i, &len);
        int32_t months = 0, days = 0;
        int64_t nanos = 0;
        if (t->type == KNUT_ARROW_INTERVAL_MONTHS) {
            memcpy(&months, p, 4);
        } else if (t->type == KNUT_ARROW_INTERVAL_DAY_TIME) {
            int32_t ms;
            memcpy(&days, p, 4);
            memcpy(&ms, p + 4, 4);
            nanos = (int64_t)ms * 1000000;
        } else {
            memcpy(&months, p, 4);
            memcpy(&days, p + 4, 4);
            memcpy(&nanos, p + 8, 8);
        }
        if (json)
            knut_buf_putc(b, '"');
        put_interval(b, months, days, nanos);
        if (json)
            knut_buf_putc(b, '"');
        break;
    }
    case KNUT_ARROW_LIST:
    case KNUT_ARROW_LARGE_LIST:
    case KNUT_ARROW_STRUCT:
    case KNUT_ARROW_MAP:
        put_nested(b, v, i, spaced);
        break;
    default:
        knut_buf_puts(b, json ? "null" : "?");
        break;
    }
}
