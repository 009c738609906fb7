/*
 * GRAPH.BULK, the calls and the encoding (falkordb.md §2), shared by
 * `knut load` (load_bulk.c) and sync's first round (the bulk writer
 * below): node and relation blobs, one blob per call, the first call with
 * BEGIN (the key must not exist). Every call carries the 4 counts after
 * BEGIN: nodes, edges, node blobs, relation blobs.
 *
 * Why the encoder is this careful: a C FalkorDB reads a blob with no
 * bounds checks and deletes the whole graph on any failed call, so every
 * byte is produced from validated arrays (FULL + UTF-8), strings holding
 * NUL (which would end a BI_STRING early) and nulls inside lists are
 * refused before anything is sent, and names are checked (no ':' in a
 * label or type, at most 512 bytes).
 *
 * Node ids: on a graph made by BEGIN, nodes get ids 0..N-1 in send order;
 * edge records carry those ids. Memory: one blob (at most
 * KNUT_FBULK_BLOB_MAX bytes) plus one Arrow batch. A call is sent, then the
 * next blob is encoded while the server works, and only then is the
 * previous reply read.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "falkor_int.h"

enum { BI_NULL = 0, BI_BOOL = 1, BI_DOUBLE = 2, BI_STRING = 3, BI_LONG = 4, BI_ARRAY = 5 };

int knut_graph__fbulk_name_ok(const char *s, int colon_ok)
{
    size_t n = strlen(s);
    return n > 0 && n <= KNUT_FBULK_NAME_MAX && (colon_ok || !strchr(s, ':'));
}


static void put_u32(knut_buf *b, uint32_t v)
{
    knut_buf_append(b, &v, sizeof v); /* native order, as the server reads it */
}

void knut_graph__fbulk_put_u64(knut_buf *b, uint64_t v)
{
    knut_buf_append(b, &v, sizeof v);
}

knut_status knut_graph__fbulk_reply(fbulk_io *s, knut_error *err)
{
    size_t len = 0;
    char *reply = NULL;
    knut_status st = knut_graph__falkor_recv(s->g, &len, err);
    if (st == KNUT_OK)
        st = knut_graph__falkor_take(s->g, len, &reply, err);
    if (st == KNUT_OK) {
        falkor_cur cur = {reply, reply + len};
        falkor_item it;
        if (knut_graph__falkor_cur_next(&cur, &it) != KNUT_OK)
            st = knut_error_set(err, KNUT_EPARSE, "%s: GRAPH.BULK: malformed reply",
                                s->g->peer);
        else if (it.type == '-')
            st = knut_graph__falkor_peer_error(s->g, "GRAPH.BULK", it.s, (size_t)it.n, err);
    }
    free(reply);
    s->pending = 0;
    return st;
}

/* Sends the blob as one GRAPH.BULK call (after reading the previous reply). */
knut_status knut_graph__fbulk_send(fbulk_io *s, int is_node, knut_error *err)
{
    if (s->blob_rows == 0)
        return KNUT_OK;
    knut_status st = knut_buf_check(&s->blob, err);
    if (st == KNUT_OK && s->pending)
        st = knut_graph__fbulk_reply(s, err);
    if (st != KNUT_OK)
        return st;
    char counts[4][24];
    snprintf(counts[0], sizeof counts[0], "%" PRId64, is_node ? s->blob_rows : 0);
    snprintf(counts[1], sizeof counts[1], "%" PRId64, is_node ? 0 : s->blob_rows);
    snprintf(counts[2], sizeof counts[2], "%d", is_node);
    snprintf(counts[3], sizeof counts[3], "%d", !is_node);
    const char *argv[8] = {"GRAPH.BULK", s->graph};
    int argc = 2;
    if (!s->begun)
        argv[argc++] = "BEGIN";
    for (int i = 0; i < 4; i++)
        argv[argc++] = counts[i];
    knut_buf head = KNUT_BUF_INIT;
    /* The command's argument count covers the blob; its bytes are sent
     * separately so the blob is never copied. */
    knut_buf_printf(&head, "*%d\r\n", argc + 1);
    for (int i = 0; i < argc; i++)
        knut_buf_printf(&head, "$%zu\r\n%s\r\n", strlen(argv[i]), argv[i]);
    knut_buf_printf(&head, "$%zu\r\n", s->blob.len);
    int reconnected = 1; /* never reconnect mid-load: ids would be lost */
    st = knut_buf_check(&head, err);
    if (st == KNUT_OK && !s->begun)
        st = knut_graph__falkor_ensure(s->g, &reconnected, err);
    if (st == KNUT_OK)
        st = knut_graph__falkor_send(s->g, head.data, head.len, err);
    if (st == KNUT_OK)
        st = knut_graph__falkor_send(s->g, s->blob.data, s->blob.len, err);
    if (st == KNUT_OK)
        st = knut_graph__falkor_send(s->g, "\r\n", 2, err);
    knut_buf_reset(&head);
    if (st == KNUT_OK) {
        s->begun = 1;
        s->pending = 1;
    }
    s->blob_rows = 0;
    knut_buf_clear(&s->blob);
    return st;
}

/* ---- values ---- */

static void civil(int64_t days, int *y, unsigned *m, unsigned *d)
{
    /* days since 1970-01-01 to a proleptic Gregorian date (era arithmetic) */
    days += 719468;
    int64_t era = (days >= 0 ? days : days - 146096) / 146097;
    unsigned doe = (unsigned)(days - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = (int)(yoe + era * 400 + (*m <= 2));
}

static int64_t floor_div(int64_t a, int64_t b)
{
    return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

knut_status knut_graph__fbulk_value(knut_buf *b, const knut_arrow_view *v, int64_t i, int in_list,
                                    const char *col, knut_error *err)
{
    if (knut_arrow_view_is_null(v, i)) {
        if (in_list)
            return knut_error_set(err, KNUT_EINVAL, "column '%s': null inside a list", col);
        return knut_buf_putc(b, BI_NULL);
    }
    char tmp[40];
    int y;
    unsigned mo, d;
    switch (v->type.type) {
    case KNUT_ARROW_BOOL:
        knut_buf_putc(b, BI_BOOL);
        return knut_buf_putc(b, (char)knut_arrow_view_get_bool(v, i));
    case KNUT_ARROW_INT8: case KNUT_ARROW_INT16: case KNUT_ARROW_INT32: case KNUT_ARROW_INT64:
    case KNUT_ARROW_UINT8: case KNUT_ARROW_UINT16: case KNUT_ARROW_UINT32: {
        int64_t x = knut_arrow_view_get_int64(v, i);
        knut_buf_putc(b, BI_LONG);
        return knut_buf_append(b, &x, sizeof x);
    }
    case KNUT_ARROW_FLOAT: case KNUT_ARROW_DOUBLE: {
        double x = knut_arrow_view_get_double(v, i);
        knut_buf_putc(b, BI_DOUBLE);
        return knut_buf_append(b, &x, sizeof x);
    }
    case KNUT_ARROW_UTF8: case KNUT_ARROW_LARGE_UTF8: {
        int64_t n = 0;
        const char *p = knut_arrow_view_get_str(v, i, &n);
        if (memchr(p, 0, (size_t)n))
            return knut_error_set(err, KNUT_EINVAL, "column '%s': a string holds a NUL byte",
                                  col);
        knut_buf_putc(b, BI_STRING);
        knut_buf_append(b, p, (size_t)n);
        return knut_buf_putc(b, 0);
    }
    case KNUT_ARROW_DATE32:
        civil(knut_arrow_view_get_int64(v, i), &y, &mo, &d);
        snprintf(tmp, sizeof tmp, "%04d-%02u-%02u", y, mo, d);
        goto temporal;
    case KNUT_ARROW_TIMESTAMP: {
        static const int64_t per_sec[] = {1, 1000, 1000000, 1000000000};
        int64_t secs = floor_div(knut_arrow_view_get_int64(v, i), per_sec[v->type.unit]);
        int64_t sod = secs - floor_div(secs, 86400) * 86400;
        civil(floor_div(secs, 86400), &y, &mo, &d);
        snprintf(tmp, sizeof tmp, "%04d-%02u-%02uT%02d:%02d:%02d", y, mo, d, (int)(sod / 3600),
                 (int)(sod / 60 % 60), (int)(sod % 60));
        goto temporal;
    }
    case KNUT_ARROW_LIST: case KNUT_ARROW_LARGE_LIST: {
        int64_t s = 0, e = 0;
        knut_arrow_view_list_range(v, i, &s, &e);
        int64_t n = e - s;
        knut_buf_putc(b, BI_ARRAY);
        knut_buf_append(b, &n, sizeof n);
        knut_status st = KNUT_OK;
        for (int64_t k = s; k < e && st == KNUT_OK; k++)
            st = knut_graph__fbulk_value(b, &v->children[0], k, 1, col, err);
        return st;
    }
    default:
        return knut_error_set(err, KNUT_EUNSUPPORTED, "column '%s': type %s has no bulk code",
                              col, knut_arrow_type_name(v->type.type));
    }
temporal:
    if (y < 0 || y > 9999)
        return knut_error_set(err, KNUT_EINVAL, "column '%s': year %d out of range", col, y);
    knut_buf_putc(b, BI_STRING);
    return knut_buf_append(b, tmp, strlen(tmp) + 1);
}

void knut_graph__fbulk_header(knut_buf *b, const char *name, const struct ArrowSchema *sc,
                              int64_t first, int64_t n)
{
    knut_buf_append(b, name, strlen(name) + 1);
    put_u32(b, (uint32_t)n);
    for (int64_t k = first; k < first + n; k++)
        knut_buf_append(b, sc->children[k]->name, strlen(sc->children[k]->name) + 1);
}

/* One integer from a read-only query's first row (-1 if there is none). */
static knut_status query_int(knut_graph_falkor *g, const char *graph, const char *q,
                             int64_t *out, knut_error *err)
{
    knut_graph_falkor_result r;
    struct ArrowArray a = {0};
    struct ArrowSchema sc = {0};
    knut_arrow_view v = {0};
    *out = -1;
    knut_status st = knut_graph_falkor_query(g, graph, q, KNUT_GRAPH_FALKOR_READ_ONLY, &r, err);
    if (st != KNUT_OK)
        return st;
    if (r.stream.get_schema(&r.stream, &sc) == 0 && r.stream.get_next(&r.stream, &a) == 0 &&
        a.release && a.length == 1 && knut_arrow_view_init(&v, &sc, &a, err) == KNUT_OK) {
        *out = knut_arrow_view_get_int64(&v.children[0], knut_arrow_view_child_row(&v, 0));
        knut_arrow_view_reset(&v);
    }
    knut_arrow_array_release(&a);
    knut_arrow_schema_release(&sc);
    knut_graph_falkor_result_reset(&r);
    return st;
}

knut_status knut_graph__fbulk_check_counts(knut_graph_falkor *g, const char *graph,
                                           int64_t nodes, int64_t edges, knut_error *err)
{
    int64_t got_n = -1, got_e = -1;
    knut_status st = query_int(g, graph, "MATCH (n) RETURN count(n)", &got_n, err);
    if (st == KNUT_OK)
        st = query_int(g, graph, "MATCH ()-[e]->() RETURN count(e)", &got_e, err);
    if (st == KNUT_OK && (got_n != nodes || got_e != edges))
        st = knut_error_set(err, KNUT_EIO, "%s: GRAPH.BULK built %" PRId64 " nodes and %" PRId64
                            " edges, expected %" PRId64 " and %" PRId64, g->peer, got_n, got_e,
                            nodes, edges);
    return st;
}
