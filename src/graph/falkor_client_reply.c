/*
 * The first pass over a compact GRAPH.QUERY reply: checks the structure
 * ([stats] or [header, rows, stats]), surfaces server errors wherever they
 * sit at the top level, parses the statistics, and (when asked) works out
 * each column's type and the largest label / type / property-key ids, so
 * the names can be fetched before the second pass builds Arrow. Every
 * value is fully validated here; the second pass re-checks cheaply.
 */
#include "falkor_int.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "knut/arrow.h"

typedef struct scan_ctx {
    falkor_reply *r;
    falkor_cur c;
    int64_t row, col;
    knut_error *err;
} scan_ctx;

static knut_status fail(scan_ctx *s, knut_status code, const char *fmt, ...) KNUT_PRINTF(3, 4);

/* "peer: row R, column 'c': what" (or "peer: reply: what" outside rows). */
static knut_status fail(scan_ctx *s, knut_status code, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    const falkor_reply *r = s->r;
    if (s->row >= 0 && (s->col < 0 || s->col >= r->n_cols))
        return knut_error_set(s->err, code, "%s: row %lld: %s", r->peer, (long long)s->row, what);
    if (s->row < 0 || s->col < 0 || s->col >= r->n_cols)
        return knut_error_set(s->err, code, "%s: reply: %s", r->peer, what);
    const falkor_col *c = &r->cols[s->col];
    return knut_error_set(s->err, code, "%s: row %lld, column '%.*s': %s", r->peer,
                          (long long)s->row, (int)(c->name_len > 200 ? 200 : c->name_len),
                          c->name, what);
}

static knut_status next(scan_ctx *s, falkor_item *it, char want, const char *what)
{
    if (knut_graph__falkor_cur_next(&s->c, it) != KNUT_OK)
        return fail(s, KNUT_EPARSE, "malformed RESP in %s", what);
    if (want && it->type != want)
        return fail(s, KNUT_EPARSE, "%s: expected '%c', got '%c'", what, want,
                    it->type ? it->type : '?');
    return KNUT_OK;
}

knut_status knut_graph__falkor_cell_open(falkor_cur *c, int64_t *code, falkor_item *val)
{
    falkor_item it;
    if (knut_graph__falkor_cur_next(c, &it) != KNUT_OK || it.type != '*' || it.n != 2)
        return KNUT_EPARSE;
    if (knut_graph__falkor_cur_next(c, &it) != KNUT_OK || it.type != ':')
        return KNUT_EPARSE;
    *code = it.n;
    return knut_graph__falkor_cur_next(c, val);
}

int knut_graph__falkor_parse_double(const falkor_item *it, double *out)
{
    if (it->type == ':') {
        *out = (double)it->n;
        return 1;
    }
    char tmp[64];
    if ((it->type != '$' && it->type != '+') || it->n <= 0 || it->n >= (int64_t)sizeof tmp)
        return 0;
    memcpy(tmp, it->s, (size_t)it->n);
    tmp[it->n] = '\0';
    if (tmp[0] == ' ' || tmp[0] == '\t')
        return 0;
    char *end = NULL;
    *out = strtod(tmp, &end);
    return end == tmp + it->n;
}

const char *knut_graph__falkor_name(const char *const *v, int64_t n, int64_t id)
{
    if (v == NULL || id < 0 || id >= n)
        return NULL;
    return v[id];
}

/* ---- type trees -------------------------------------------------------- */

static void ty_free(falkor_ty *t)
{
    while (t != NULL) {
        falkor_ty *c = t->child;
        free(t);
        t = c;
    }
}

/*
 * Merges one value of `kind` into *slot and says where its children's types
 * go (*child: NULL = validate only). Different kinds in one slot collapse
 * it to TEXT for good: every value is then rendered as JSON text.
 */
static knut_status ty_merge(scan_ctx *s, falkor_ty **slot, falkor_kind kind, falkor_ty ***child)
{
    *child = NULL;
    if (slot == NULL)
        return KNUT_OK;
    if (*slot == NULL) {
        *slot = calloc(1, sizeof **slot);
        if (*slot == NULL)
            return fail(s, KNUT_ENOMEM, "out of memory");
        (*slot)->kind = kind;
    } else if ((*slot)->kind != kind) {
        ty_free((*slot)->child);
        (*slot)->child = NULL;
        (*slot)->kind = FK_TEXT;
        return KNUT_OK;
    }
    if (kind == FK_LIST || kind == FK_MAP)
        *child = &(*slot)->child;
    return KNUT_OK;
}

/* ---- values ------------------------------------------------------------ */

static knut_status infer_value(scan_ctx *s, int64_t code, const falkor_item *v, falkor_ty **slot,
                               int depth);

static knut_status infer_cell(scan_ctx *s, falkor_ty **slot, int depth)
{
    int64_t code;
    falkor_item v;
    if (knut_graph__falkor_cell_open(&s->c, &code, &v) != KNUT_OK)
        return fail(s, KNUT_EPARSE, "a value is not a [type, value] pair");
    return infer_value(s, code, &v, slot, depth);
}

static knut_status want_id(scan_ctx *s, const char *what, int64_t *max)
{
    falkor_item it;
    knut_status st = next(s, &it, ':', what);
    if (st == KNUT_OK && it.n < 0)
        return fail(s, KNUT_EPARSE, "negative %s %lld", what, (long long)it.n);
    if (st == KNUT_OK && max != NULL && it.n > *max)
        *max = it.n;
    return st;
}

/* [[key_id, type, value]...]: values are validated, their types not kept. */
static knut_status check_props(scan_ctx *s, int depth)
{
    falkor_item list, it, v;
    knut_status st = next(s, &list, '*', "property list");
    for (int64_t i = 0; st == KNUT_OK && i < list.n; i++) {
        st = next(s, &it, '*', "property");
        if (st == KNUT_OK && it.n != 3)
            st = fail(s, KNUT_EPARSE, "a property has %lld elements, not 3", (long long)it.n);
        if (st == KNUT_OK)
            st = want_id(s, "property key id", &s->r->max_prop_key);
        if (st == KNUT_OK)
            st = next(s, &it, ':', "property type");
        if (st == KNUT_OK && knut_graph__falkor_cur_next(&s->c, &v) != KNUT_OK)
            st = fail(s, KNUT_EPARSE, "malformed property value");
        if (st == KNUT_OK)
            st = infer_value(s, it.n, &v, NULL, depth + 1);
    }
    return st;
}

static knut_status check_node(scan_ctx *s, const falkor_item *v, int depth)
{
    falkor_item it;
    if (v->type != '*' || v->n != 3)
        return fail(s, KNUT_EPARSE, "a node is not [id, labels, properties]");
    knut_status st = want_id(s, "node id", NULL);
    if (st == KNUT_OK)
        st = next(s, &it, '*', "node labels");
    for (int64_t i = 0; st == KNUT_OK && i < it.n; i++)
        st = want_id(s, "label id", &s->r->max_label);
    return st == KNUT_OK ? check_props(s, depth) : st;
}

static knut_status check_edge(scan_ctx *s, const falkor_item *v, int depth)
{
    if (v->type != '*' || v->n != 5)
        return fail(s, KNUT_EPARSE, "an edge is not [id, type, src, dst, properties]");
    knut_status st = want_id(s, "edge id", NULL);
    if (st == KNUT_OK)
        st = want_id(s, "relationship type id", &s->r->max_rel_type);
    if (st == KNUT_OK)
        st = want_id(s, "source node id", NULL);
    if (st == KNUT_OK)
        st = want_id(s, "destination node id", NULL);
    return st == KNUT_OK ? check_props(s, depth) : st;
}

/* One half of a path: [6, [[code, entity]...]] with every code `want`. */
static knut_status check_path_half(scan_ctx *s, int64_t want, int depth)
{
    int64_t code;
    falkor_item list, v;
    if (knut_graph__falkor_cell_open(&s->c, &code, &list) != KNUT_OK || code != FK_LIST ||
        list.type != '*')
        return fail(s, KNUT_EPARSE, "a path part is not a [6, list] pair");
    for (int64_t i = 0; i < list.n; i++) {
        if (knut_graph__falkor_cell_open(&s->c, &code, &v) != KNUT_OK || code != want)
            return fail(s, KNUT_EPARSE, "a path holds a value of type %lld where %lld belongs",
                        (long long)code, (long long)want);
        knut_status st = want == FK_NODE ? check_node(s, &v, depth) : check_edge(s, &v, depth);
        if (st != KNUT_OK)
            return st;
    }
    return KNUT_OK;
}

static int is_string(const falkor_item *v)
{
    return (v->type == '$' || v->type == '+') &&
           knut_arrow_utf8_valid((const uint8_t *)v->s, v->n);
}

static knut_status infer_value(scan_ctx *s, int64_t code, const falkor_item *v, falkor_ty **slot,
                               int depth)
{
    falkor_ty **child = NULL;
    knut_status st = KNUT_OK;
    double d;
    if (depth > FALKOR_DEPTH_MAX)
        return fail(s, KNUT_ETOOBIG, "values nested too deeply");
    if (code == FALKOR_CODE_NULL)
        return v->type == '_' ? KNUT_OK : fail(s, KNUT_EPARSE, "a null carries a value");
    if (code < FK_STRING || code > FALKOR_CODE_MAX)
        return fail(s, KNUT_EUNSUPPORTED, "unknown value type %lld", (long long)code);
    switch ((falkor_kind)code) {
    case FK_STRING:
        if (!is_string(v))
            return fail(s, KNUT_EPARSE, "a string is not valid UTF-8 text");
        break;
    case FK_INT:
    case FK_DATETIME:
    case FK_DATE:
    case FK_TIME:
    case FK_DURATION:
        if (v->type != ':')
            return fail(s, KNUT_EPARSE, "value of type %lld is not an integer", (long long)code);
        break;
    case FK_BOOL:
        if (v->type != '$' || !((v->n == 4 && memcmp(v->s, "true", 4) == 0) ||
                                (v->n == 5 && memcmp(v->s, "false", 5) == 0)))
            return fail(s, KNUT_EPARSE, "a boolean is neither \"true\" nor \"false\"");
        break;
    case FK_DOUBLE:
        if (!knut_graph__falkor_parse_double(v, &d))
            return fail(s, KNUT_EPARSE, "a double is not a number");
        break;
    case FK_POINT:
    case FK_VECTOR:
        if (v->type != '*' || (code == FK_POINT && v->n != 2))
            return fail(s, KNUT_EPARSE, "malformed %s", code == FK_POINT ? "point" : "vector");
        for (int64_t i = 0; i < v->n; i++) {
            falkor_item x;
            if (knut_graph__falkor_cur_next(&s->c, &x) != KNUT_OK ||
                !knut_graph__falkor_parse_double(&x, &d))
                return fail(s, KNUT_EPARSE, "a %s coordinate is not a number",
                            code == FK_POINT ? "point" : "vector");
        }
        break;
    case FK_LIST:
        if (v->type != '*')
            return fail(s, KNUT_EPARSE, "an array value is not an array");
        st = ty_merge(s, slot, FK_LIST, &child);
        for (int64_t i = 0; st == KNUT_OK && i < v->n; i++)
            st = infer_cell(s, child, depth + 1);
        return st;
    case FK_MAP:
        if (v->type != '*' || v->n % 2 != 0)
            return fail(s, KNUT_EPARSE, "a map is not a flat key/value array");
        st = ty_merge(s, slot, FK_MAP, &child);
        for (int64_t i = 0; st == KNUT_OK && i < v->n; i += 2) {
            falkor_item k;
            if (knut_graph__falkor_cur_next(&s->c, &k) != KNUT_OK || !is_string(&k))
                return fail(s, KNUT_EPARSE, "a map key is not a string");
            st = infer_cell(s, child, depth + 1);
        }
        return st;
    case FK_NODE:
        st = check_node(s, v, depth);
        break;
    case FK_EDGE:
        st = check_edge(s, v, depth);
        break;
    case FK_PATH:
        if (v->type != '*' || v->n != 2)
            return fail(s, KNUT_EPARSE, "a path is not [nodes, edges]");
        st = check_path_half(s, FK_NODE, depth);
        if (st == KNUT_OK)
            st = check_path_half(s, FK_EDGE, depth);
        break;
    default:
        return fail(s, KNUT_EUNSUPPORTED, "unknown value type %lld", (long long)code);
    }
    return st == KNUT_OK ? ty_merge(s, slot, (falkor_kind)code, &child) : st;
}

/* ---- statistics -------------------------------------------------------- */

#define STAT(name, field) {name, sizeof(name) - 1, offsetof(knut_graph_falkor_stats, field)}
static const struct {
    const char *name;
    size_t len;
    size_t off;
} stat_fields[] = {
    STAT("Labels added", labels_added),
    STAT("Labels removed", labels_removed),
    STAT("Nodes created", nodes_created),
    STAT("Nodes deleted", nodes_deleted),
    STAT("Properties set", properties_set),
    STAT("Properties removed", properties_removed),
    STAT("Relationships created", relationships_created),
    STAT("Relationships deleted", relationships_deleted),
    STAT("Indices created", indices_created),
    STAT("Indices deleted", indices_deleted),
    STAT("Constraints created", constraints_created),
    STAT("Constraints deleted", constraints_deleted),
};

/* "Name: value" lines; names this client does not know are skipped, so a
 * newer server's extra counters do not fail every query. */
static knut_status parse_stat(scan_ctx *s, const falkor_item *it)
{
    knut_graph_falkor_stats *st = &s->r->stats;
    const char *p = it->s, *colon = memchr(p, ':', (size_t)it->n);
    if (colon == NULL || colon + 1 >= p + it->n || colon[1] != ' ')
        return KNUT_OK;
    size_t name_len = (size_t)(colon - p);
    char num[64];
    size_t num_len = (size_t)(p + it->n - (colon + 2));
    if (num_len == 0 || num_len >= sizeof num)
        return fail(s, KNUT_EPARSE, "statistic '%.*s' has no value", (int)name_len, p);
    memcpy(num, colon + 2, num_len);
    num[num_len] = '\0';
    char *end = NULL;
    for (size_t i = 0; i < sizeof stat_fields / sizeof stat_fields[0]; i++) {
        if (stat_fields[i].len != name_len || memcmp(stat_fields[i].name, p, name_len) != 0)
            continue;
        long long v = strtoll(num, &end, 10);
        if (*end != '\0' || v < 0)
            return fail(s, KNUT_EPARSE, "statistic '%.*s' is not a count", (int)name_len, p);
        *(int64_t *)(void *)((char *)st + stat_fields[i].off) = v;
        return KNUT_OK;
    }
    if (name_len == 16 && memcmp(p, "Cached execution", 16) == 0) {
        long v = strtol(num, &end, 10);
        if (*end != '\0' || (v != 0 && v != 1))
            return fail(s, KNUT_EPARSE, "statistic 'Cached execution' is not 0 or 1");
        st->cached_execution = (int)v;
    } else if (name_len == 29 && memcmp(p, "Query internal execution time", 29) == 0) {
        st->execution_ms = strtod(num, &end);
        if (end == num || strcmp(end, " milliseconds") != 0)
            return fail(s, KNUT_EPARSE, "statistic 'Query internal execution time' is malformed");
    }
    return KNUT_OK;
}

/* ---- the reply --------------------------------------------------------- */

static knut_status scan_header(scan_ctx *s)
{
    falkor_item h, it;
    knut_status st = next(s, &h, '*', "header");
    if (st == KNUT_OK && h.n > (s->c.end - s->c.p) / 4)
        st = fail(s, KNUT_EPARSE, "header claims %lld columns", (long long)h.n);
    if (st == KNUT_OK && h.n > 0) {
        s->r->cols = calloc((size_t)h.n, sizeof *s->r->cols);
        if (s->r->cols == NULL)
            st = fail(s, KNUT_ENOMEM, "out of memory for %lld columns", (long long)h.n);
    }
    for (int64_t i = 0; st == KNUT_OK && i < h.n; i++) {
        st = next(s, &it, '*', "header column");
        if (st == KNUT_OK && it.n != 2)
            st = fail(s, KNUT_EPARSE, "a header column is not [type, name]");
        if (st == KNUT_OK)
            st = next(s, &it, ':', "header column type");
        if (st == KNUT_OK)
            st = next(s, &it, 0, "header column name");
        if (st == KNUT_OK && !is_string(&it))
            st = fail(s, KNUT_EPARSE, "a column name is not a string");
        if (st == KNUT_OK) {
            s->r->cols[i].name = it.s;
            s->r->cols[i].name_len = (size_t)it.n;
            s->r->n_cols = i + 1;
        }
    }
    return st;
}

static knut_status scan_rows(scan_ctx *s, int infer)
{
    falkor_reply *r = s->r;
    falkor_item rows, row;
    knut_status st = next(s, &rows, '*', "rows");
    if (st != KNUT_OK)
        return st;
    r->n_rows = rows.n;
    r->rows_at = s->c.p;
    if (!infer)
        return knut_graph__falkor_cur_skip(&s->c, &rows) == KNUT_OK
                   ? KNUT_OK
                   : fail(s, KNUT_EPARSE, "malformed rows");
    for (s->row = 0; s->row < rows.n; s->row++) {
        s->col = -1;
        st = next(s, &row, '*', "row");
        if (st == KNUT_OK && row.n != r->n_cols)
            st = fail(s, KNUT_EPARSE, "%lld values for %lld columns", (long long)row.n,
                      (long long)r->n_cols);
        for (s->col = 0; st == KNUT_OK && s->col < r->n_cols; s->col++)
            st = infer_cell(s, &r->cols[s->col].ty, 0);
        if (st != KNUT_OK)
            return st;
    }
    s->row = s->col = -1;
    return KNUT_OK;
}

static knut_status scan_stats(scan_ctx *s)
{
    falkor_item list, it;
    knut_status st = next(s, &list, '*', "statistics");
    for (int64_t i = 0; st == KNUT_OK && i < list.n; i++) {
        st = next(s, &it, 0, "statistics");
        if (st == KNUT_OK && it.type != '$' && it.type != '+')
            st = fail(s, KNUT_EPARSE, "a statistic is not a string");
        if (st == KNUT_OK)
            st = parse_stat(s, &it);
    }
    return st;
}

knut_status knut_graph__falkor_reply_scan(falkor_reply *r, const char *buf, size_t len,
                                          int infer, const char *peer, knut_error *err)
{
    memset(r, 0, sizeof *r);
    r->peer = peer;
    r->buf = buf;
    r->len = len;
    r->max_label = r->max_rel_type = r->max_prop_key = -1;
    scan_ctx s = {r, {buf, buf + len}, -1, -1, err};
    falkor_item top, it;
    knut_status st = next(&s, &top, 0, "reply");
    if (st == KNUT_OK && top.type == '-')
        return knut_graph__falkor_server_error(err, peer, NULL, top.s, (size_t)top.n);
    if (st == KNUT_OK && top.type != '*')
        st = fail(&s, KNUT_EPARSE, "the reply is not an array (RESP '%c')", top.type);
    /* An error element anywhere at the top level is the server's verdict:
     * the legacy runtime-error-as-last-element form, or a version mismatch. */
    for (int64_t i = 0; st == KNUT_OK && i < top.n; i++) {
        st = next(&s, &it, 0, "reply");
        if (st == KNUT_OK && it.type == '-')
            return knut_graph__falkor_server_error(err, peer, NULL, it.s, (size_t)it.n);
        if (st == KNUT_OK && knut_graph__falkor_cur_skip(&s.c, &it) != KNUT_OK)
            st = fail(&s, KNUT_EPARSE, "malformed RESP in element %lld", (long long)i);
    }
    if (st != KNUT_OK)
        goto cleanup;
    s.c.p = buf;
    (void)next(&s, &top, '*', "reply");
    if (top.n == 3) {
        r->has_columns = 1;
        st = scan_header(&s);
        if (st == KNUT_OK)
            st = scan_rows(&s, infer);
    } else if (top.n != 1) {
        st = fail(&s, KNUT_EPARSE, "the reply has %lld elements, not 1 or 3", (long long)top.n);
    }
    if (st == KNUT_OK)
        st = scan_stats(&s);
    if (st == KNUT_OK && s.c.p != s.c.end)
        st = fail(&s, KNUT_EPARSE, "%zu bytes after the reply", (size_t)(s.c.end - s.c.p));
cleanup:
    if (st != KNUT_OK)
        knut_graph__falkor_reply_reset(r);
    return st;
}

void knut_graph__falkor_reply_reset(falkor_reply *r)
{
    if (r == NULL)
        return;
    for (int64_t i = 0; i < r->n_cols; i++)
        ty_free(r->cols[i].ty);
    free(r->cols);
    r->cols = NULL;
    r->n_cols = 0;
}

void knut_graph__falkor_strings_free(char **v, int64_t n)
{
    for (int64_t i = 0; v != NULL && i < n; i++)
        free(v[i]);
    free(v);
}

knut_status knut_graph__falkor_reply_strings(const char *buf, size_t len, const char *peer,
                                             char ***out, int64_t *n, knut_error *err)
{
    falkor_reply r;
    char **v = NULL;
    int64_t got = 0;
    knut_status st = knut_graph__falkor_reply_scan(&r, buf, len, 0, peer, err);
    if (st != KNUT_OK)
        return st;
    if (!r.has_columns || r.n_cols != 1) {
        st = knut_error_set(err, KNUT_EPARSE, "%s: a name list has %lld columns, not 1", peer,
                            (long long)r.n_cols);
        goto cleanup;
    }
    v = calloc((size_t)(r.n_rows > 0 ? r.n_rows : 1), sizeof *v);
    if (v == NULL) {
        st = knut_error_set(err, KNUT_ENOMEM, "%s: out of memory for names", peer);
        goto cleanup;
    }
    falkor_cur c = {r.rows_at, buf + len};
    for (; got < r.n_rows; got++) {
        falkor_item row, val;
        int64_t code;
        if (knut_graph__falkor_cur_next(&c, &row) != KNUT_OK || row.type != '*' || row.n != 1 ||
            knut_graph__falkor_cell_open(&c, &code, &val) != KNUT_OK || code != FK_STRING ||
            !is_string(&val)) {
            st = knut_error_set(err, KNUT_EPARSE, "%s: name %lld is not a string", peer,
                                (long long)got);
            goto cleanup;
        }
        v[got] = strndup(val.s, (size_t)val.n);
        if (v[got] == NULL) {
            st = knut_error_set(err, KNUT_ENOMEM, "%s: out of memory for names", peer);
            goto cleanup;
        }
    }
    *out = v;
    *n = got;
    v = NULL;
cleanup:
    knut_graph__falkor_strings_free(v, got);
    knut_graph__falkor_reply_reset(&r);
    return st;
}
