/*
 * Parameters of a prepared statement, from one row of an Arrow batch (what
 * a client's DoPut sent) to DuckDB's typed binds: column k binds $k+1.
 * Values are only ever bound, never spliced into SQL text. Types a client
 * sends for ordinary parameters are taken; any other is refused naming the
 * column and its Arrow format.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve_int.h"

static int bit(const uint8_t *bits, int64_t i)
{
    return (bits[i / 8] >> (i % 8)) & 1;
}

/* Arrow timestamps in any unit, to DuckDB's microseconds; with a time
 * zone the value is an instant (TIMESTAMPTZ), without one a wall clock.
 * The JDBC driver sends milliseconds for setTimestamp. */
static knut_status bind_timestamp(knut_duck_stmt *stmt, size_t idx, const char *f, int64_t v,
                                  knut_error *err)
{
    int64_t us;
    switch (f[2]) {
    case 's': us = v * 1000000; break;
    case 'm': us = v * 1000; break;
    case 'u': us = v; break;
    case 'n': us = v / 1000 - (v % 1000 < 0); break; /* floor, as DuckDB truncates */
    default:
        return knut_error_set(err, KNUT_EUNSUPPORTED, "parameter %zu: Arrow timestamp '%s' has "
                                                      "no known unit", idx, f);
    }
    if ((f[2] == 's' && (v > INT64_MAX / 1000000 || v < INT64_MIN / 1000000)) ||
        (f[2] == 'm' && (v > INT64_MAX / 1000 || v < INT64_MIN / 1000)))
        return knut_error_set(err, KNUT_EINVAL, "parameter %zu: timestamp %lld is out of "
                                                "DuckDB's range", idx, (long long)v);
    return f[4] ? knut_duck_stmt_bind_timestamp_tz(stmt, idx, us, err)
                : knut_duck_stmt_bind_timestamp(stmt, idx, us, err);
}

/* "d:P,S" or "d:P,S,128": decimal128, 16 little-endian bytes of the
 * unscaled value. Other widths (32, 64, 256) are refused by name. */
static knut_status bind_decimal(knut_duck_stmt *stmt, size_t idx, const char *f,
                                const uint8_t *p, knut_error *err)
{
    int prec = 0, scale = 0, bits = 128, n = 0;
    if (sscanf(f + 2, "%d,%d%n", &prec, &scale, &n) != 2 ||
        (f[2 + n] && (sscanf(f + 2 + n, ",%d", &bits) != 1 || bits != 128)))
        return knut_error_set(err, KNUT_EUNSUPPORTED, "parameter %zu: Arrow decimal '%s' cannot "
                                                      "be bound (decimal128 only)", idx, f);
    int64_t lo, hi;
    memcpy(&lo, p, 8);
    memcpy(&hi, p + 8, 8);
    return knut_duck_stmt_bind_decimal(stmt, idx, lo, hi, prec, scale, err);
}

static knut_status bind_one(knut_duck_stmt *stmt, size_t idx, const struct ArrowSchema *sc,
                            const struct ArrowArray *a, int64_t row, knut_error *err)
{
    int64_t j = a->offset + row;
    const char *f = sc->format;
    if (f[0] == 'n' || (a->null_count != 0 && a->buffers[0] && !bit(a->buffers[0], j)))
        return knut_duck_stmt_bind_null(stmt, idx, err);
    const void *v = a->n_buffers > 1 ? a->buffers[1] : NULL;
    if (!f[1]) {
        switch (f[0]) {
        case 'b':
            return knut_duck_stmt_bind_bool(stmt, idx, bit(v, j), err);
        case 'c':
            return knut_duck_stmt_bind_int64(stmt, idx, ((const int8_t *)v)[j], err);
        case 'C':
            return knut_duck_stmt_bind_int64(stmt, idx, ((const uint8_t *)v)[j], err);
        case 's':
            return knut_duck_stmt_bind_int64(stmt, idx, ((const int16_t *)v)[j], err);
        case 'S':
            return knut_duck_stmt_bind_int64(stmt, idx, ((const uint16_t *)v)[j], err);
        case 'i':
            return knut_duck_stmt_bind_int64(stmt, idx, ((const int32_t *)v)[j], err);
        case 'I':
            return knut_duck_stmt_bind_int64(stmt, idx, ((const uint32_t *)v)[j], err);
        case 'l':
            return knut_duck_stmt_bind_int64(stmt, idx, ((const int64_t *)v)[j], err);
        case 'L': {
            uint64_t u = ((const uint64_t *)v)[j];
            if (u > INT64_MAX)
                return knut_error_set(err, KNUT_EINVAL, "parameter %zu: uint64 %llu is over "
                                                        "the int64 range", idx,
                                      (unsigned long long)u);
            return knut_duck_stmt_bind_int64(stmt, idx, (int64_t)u, err);
        }
        case 'f':
            return knut_duck_stmt_bind_double(stmt, idx, ((const float *)v)[j], err);
        case 'g':
            return knut_duck_stmt_bind_double(stmt, idx, ((const double *)v)[j], err);
        case 'u':
        case 'z': {
            const int32_t *off = v;
            const char *data = a->buffers[2];
            size_t n = (size_t)(off[j + 1] - off[j]);
            return f[0] == 'u' ? knut_duck_stmt_bind_text(stmt, idx, data + off[j], n, err)
                               : knut_duck_stmt_bind_blob(stmt, idx, data + off[j], n, err);
        }
        case 'U':
        case 'Z': {
            const int64_t *off = v;
            const char *data = a->buffers[2];
            size_t n = (size_t)(off[j + 1] - off[j]);
            return f[0] == 'U' ? knut_duck_stmt_bind_text(stmt, idx, data + off[j], n, err)
                               : knut_duck_stmt_bind_blob(stmt, idx, data + off[j], n, err);
        }
        default:
            break;
        }
    } else if (strcmp(f, "tdD") == 0) {
        return knut_duck_stmt_bind_date(stmt, idx, ((const int32_t *)v)[j], err);
    } else if (f[0] == 't' && f[1] == 's' && f[2] && f[3] == ':') {
        return bind_timestamp(stmt, idx, f, ((const int64_t *)v)[j], err);
    } else if (f[0] == 'd' && f[1] == ':') {
        return bind_decimal(stmt, idx, f, (const uint8_t *)v + (size_t)j * 16, err);
    }
    return knut_error_set(err, KNUT_EUNSUPPORTED, "parameter %zu ('%s'): Arrow type '%s' cannot "
                                                  "be bound yet", idx,
                          sc->name ? sc->name : "", f);
}

knut_status knut_serve__params_bind(knut_duck_stmt *stmt, const struct ArrowSchema *schema,
                                    const struct ArrowArray *batch, int64_t row, knut_error *err)
{
    size_t want = knut_duck_stmt_param_count(stmt);
    if ((size_t)batch->n_children != want)
        return knut_error_set(err, KNUT_EINVAL, "the statement takes %zu parameters, the batch "
                                                "has %lld columns", want,
                              (long long)batch->n_children);
    if (row < 0 || row >= batch->length)
        return knut_error_set(err, KNUT_EINVAL, "parameter row %lld of %lld", (long long)row,
                              (long long)batch->length);
    knut_status st = KNUT_OK;
    for (int64_t k = 0; st == KNUT_OK && k < batch->n_children; k++)
        st = bind_one(stmt, (size_t)k + 1, schema->children[k], batch->children[k],
                      batch->offset + row, err);
    return st;
}

void knut_serve__params_schema_ms(struct ArrowSchema *ps)
{
    if (knut_serve__schema_own(ps) != 0)
        return;
    for (int64_t i = 0; i < ps->n_children; i++) {
        struct ArrowSchema *c = ps->children[i], ms;
        if (strcmp(c->format, "tsu:") != 0)
            continue;
        if (knut_arrow_schema_init(&ms, "tsm:", c->name, c->flags, 0, NULL) != KNUT_OK)
            return;
        if (knut_arrow_schema_set_metadata(&ms, c->metadata, NULL) != KNUT_OK ||
            knut_arrow_schema_set_child(ps, i, &ms, NULL) != KNUT_OK) {
            if (ms.release)
                ms.release(&ms);
            return;
        }
    }
}
