/*
 * JSON text for the FalkorDB client: values of mixed-type fields and the
 * properties of nodes and edges are rendered here, straight from the reply
 * bytes, with ids resolved to names. Also the small reading helpers the
 * Arrow pass shares (position errors, id lookups).
 */
#include "falkor_int.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

knut_status knut_graph__falkor_malformed(falkor_build *b)
{
    return knut_error_set(b->err, KNUT_EPARSE, "malformed value");
}

knut_status knut_graph__falkor_next(falkor_build *b, falkor_item *it, char want)
{
    if (knut_graph__falkor_cur_next(&b->c, it) != KNUT_OK || (want && it->type != want))
        return knut_graph__falkor_malformed(b);
    return KNUT_OK;
}

static knut_status unknown_id(falkor_build *b, const char *what, const char *call, int64_t id,
                              int64_t n)
{
    return knut_error_set(b->err, KNUT_EPARSE, "%s id %lld is not among the %lld of %s", what,
                          (long long)id, (long long)n, call);
}

knut_status knut_graph__falkor_label(falkor_build *b, int64_t id, const char **out)
{
    const knut_graph_falkor_names *nm = b->names;
    *out = knut_graph__falkor_name(nm->labels, nm->n_labels, id);
    return *out ? KNUT_OK : unknown_id(b, "label", "db.labels()", id, nm->n_labels);
}

knut_status knut_graph__falkor_type(falkor_build *b, int64_t id, const char **out)
{
    const knut_graph_falkor_names *nm = b->names;
    *out = knut_graph__falkor_name(nm->rel_types, nm->n_rel_types, id);
    return *out ? KNUT_OK
                : unknown_id(b, "relationship type", "db.relationshipTypes()", id,
                             nm->n_rel_types);
}

static knut_status key_name(falkor_build *b, int64_t id, const char **out)
{
    const knut_graph_falkor_names *nm = b->names;
    *out = knut_graph__falkor_name(nm->property_keys, nm->n_property_keys, id);
    return *out ? KNUT_OK
                : unknown_id(b, "property key", "db.propertyKeys()", id, nm->n_property_keys);
}

/* ---- JSON text --------------------------------------------------------- */

/* NaN and the infinities as Python's json module writes and reads them. */
static void put_double(knut_buf *o, double d, int digits)
{
    if (isnan(d))
        knut_buf_puts(o, "NaN");
    else if (isinf(d))
        knut_buf_puts(o, d > 0 ? "Infinity" : "-Infinity");
    else
        knut_buf_printf(o, "%.*g", digits, d);
}

/* Temporal values as ISO 8601 text; FalkorDB keeps whole seconds, UTC. */
static void put_time(knut_buf *o, int64_t code, int64_t secs)
{
    struct tm tm;
    time_t t = (time_t)secs;
    if (code == FK_DURATION) {
        knut_buf_printf(o, "\"PT%" PRId64 "S\"", secs);
        return;
    }
    if (gmtime_r(&t, &tm) == NULL) {
        knut_buf_printf(o, "%" PRId64, secs);
        return;
    }
    if (code == FK_DATE)
        knut_buf_printf(o, "\"%04d-%02d-%02d\"", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
    else if (code == FK_TIME)
        knut_buf_printf(o, "\"%02d:%02d:%02d\"", tm.tm_hour, tm.tm_min, tm.tm_sec);
    else
        knut_buf_printf(o, "\"%04d-%02d-%02dT%02d:%02d:%02d\"", tm.tm_year + 1900,
                        tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

/* {"key": value, ...} from [[key_id, type, value]...]. */
knut_status knut_graph__falkor_render_props(falkor_build *b, knut_buf *o)
{
    falkor_item list, it, code, v;
    const char *name;
    knut_status st = knut_graph__falkor_next(b, &list, '*');
    knut_buf_putc(o, '{');
    for (int64_t i = 0; st == KNUT_OK && i < list.n; i++) {
        st = knut_graph__falkor_next(b, &it, '*');
        if (st == KNUT_OK)
            st = knut_graph__falkor_next(b, &it, ':');
        if (st == KNUT_OK)
            st = key_name(b, it.n, &name);
        if (st == KNUT_OK)
            st = knut_graph__falkor_next(b, &code, ':');
        if (st == KNUT_OK)
            st = knut_graph__falkor_next(b, &v, 0);
        if (st != KNUT_OK)
            break;
        if (i > 0)
            knut_buf_putc(o, ',');
        knut_buf_put_json_str(o, name, strlen(name));
        knut_buf_putc(o, ':');
        st = knut_graph__falkor_render(b, o, code.n, &v);
    }
    knut_buf_putc(o, '}');
    return st;
}

static knut_status render_entity(falkor_build *b, knut_buf *o, int64_t code)
{
    falkor_item id, it;
    const char *name;
    knut_status st = knut_graph__falkor_next(b, &id, ':');
    if (st == KNUT_OK && code == FK_NODE) {
        knut_buf_printf(o, "{\"id\":%" PRId64 ",\"labels\":[", id.n);
        st = knut_graph__falkor_next(b, &it, '*');
        for (int64_t i = 0, n = it.n; st == KNUT_OK && i < n; i++) {
            st = knut_graph__falkor_next(b, &it, ':');
            if (st == KNUT_OK)
                st = knut_graph__falkor_label(b, it.n, &name);
            if (st == KNUT_OK) {
                knut_buf_puts(o, i > 0 ? "," : "");
                knut_buf_put_json_str(o, name, strlen(name));
            }
        }
        knut_buf_puts(o, "],\"properties\":");
    } else if (st == KNUT_OK) {
        falkor_item src, dst;
        st = knut_graph__falkor_next(b, &it, ':');
        if (st == KNUT_OK)
            st = knut_graph__falkor_type(b, it.n, &name);
        if (st == KNUT_OK)
            st = knut_graph__falkor_next(b, &src, ':');
        if (st == KNUT_OK)
            st = knut_graph__falkor_next(b, &dst, ':');
        if (st == KNUT_OK) {
            knut_buf_printf(o, "{\"id\":%" PRId64 ",\"type\":", id.n);
            knut_buf_put_json_str(o, name, strlen(name));
            knut_buf_printf(o, ",\"src\":%" PRId64 ",\"dst\":%" PRId64 ",\"properties\":", src.n,
                            dst.n);
        }
    }
    if (st == KNUT_OK)
        st = knut_graph__falkor_render_props(b, o);
    knut_buf_putc(o, '}');
    return st;
}

knut_status knut_graph__falkor_render(falkor_build *b, knut_buf *o, int64_t code,
                                       const falkor_item *v)
{
    knut_status st = KNUT_OK;
    int64_t c2;
    falkor_item x;
    double d;
    switch (code) {
    case FALKOR_CODE_NULL:
        knut_buf_puts(o, "null");
        break;
    case FK_STRING:
        knut_buf_put_json_str(o, v->s, (size_t)v->n);
        break;
    case FK_INT:
        knut_buf_printf(o, "%" PRId64, v->n);
        break;
    case FK_BOOL:
        knut_buf_puts(o, v->n == 4 ? "true" : "false");
        break;
    case FK_DOUBLE:
        if (!knut_graph__falkor_parse_double(v, &d))
            return knut_graph__falkor_malformed(b);
        put_double(o, d, 15);
        break;
    case FK_DATETIME:
    case FK_DATE:
    case FK_TIME:
    case FK_DURATION:
        put_time(o, code, v->n);
        break;
    case FK_LIST:
    case FK_VECTOR:
        knut_buf_putc(o, '[');
        for (int64_t i = 0; st == KNUT_OK && i < v->n; i++) {
            knut_buf_puts(o, i > 0 ? "," : "");
            if (code == FK_VECTOR) {
                st = knut_graph__falkor_next(b, &x, 0);
                if (st == KNUT_OK && !knut_graph__falkor_parse_double(&x, &d))
                    st = knut_graph__falkor_malformed(b);
                if (st == KNUT_OK)
                    put_double(o, (double)(float)d, 9);
            } else if (knut_graph__falkor_cell_open(&b->c, &c2, &x) != KNUT_OK) {
                st = knut_graph__falkor_malformed(b);
            } else {
                st = knut_graph__falkor_render(b, o, c2, &x);
            }
        }
        knut_buf_putc(o, ']');
        break;
    case FK_MAP:
        knut_buf_putc(o, '{');
        for (int64_t i = 0; st == KNUT_OK && i < v->n; i += 2) {
            st = knut_graph__falkor_next(b, &x, 0);
            if (st != KNUT_OK)
                break;
            knut_buf_puts(o, i > 0 ? "," : "");
            knut_buf_put_json_str(o, x.s, (size_t)x.n);
            knut_buf_putc(o, ':');
            if (knut_graph__falkor_cell_open(&b->c, &c2, &x) != KNUT_OK)
                st = knut_graph__falkor_malformed(b);
            else
                st = knut_graph__falkor_render(b, o, c2, &x);
        }
        knut_buf_putc(o, '}');
        break;
    case FK_POINT:
        for (int i = 0; st == KNUT_OK && i < 2; i++) {
            st = knut_graph__falkor_next(b, &x, 0);
            if (st == KNUT_OK && !knut_graph__falkor_parse_double(&x, &d))
                st = knut_graph__falkor_malformed(b);
            if (st != KNUT_OK)
                break;
            knut_buf_puts(o, i == 0 ? "{\"latitude\":" : ",\"longitude\":");
            put_double(o, d, 15);
        }
        knut_buf_putc(o, '}');
        break;
    case FK_NODE:
    case FK_EDGE:
        st = render_entity(b, o, code);
        break;
    case FK_PATH:
        for (int half = 0; st == KNUT_OK && half < 2; half++) {
            if (knut_graph__falkor_cell_open(&b->c, &c2, &x) != KNUT_OK || x.type != '*')
                return knut_graph__falkor_malformed(b);
            knut_buf_puts(o, half == 0 ? "{\"nodes\":[" : "],\"edges\":[");
            for (int64_t i = 0, n = x.n; st == KNUT_OK && i < n; i++) {
                knut_buf_puts(o, i > 0 ? "," : "");
                if (knut_graph__falkor_cell_open(&b->c, &c2, &x) != KNUT_OK)
                    return knut_graph__falkor_malformed(b);
                st = render_entity(b, o, c2);
            }
        }
        knut_buf_puts(o, "]}");
        break;
    default:
        return knut_graph__falkor_malformed(b);
    }
    return st;
}
