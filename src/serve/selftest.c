/*
 * The self-test's client side: Flight SQL calls made the way the ADBC
 * driver and pyarrow.flight make them (commands Any-packed in a CMD
 * descriptor, DoGet of the ticket, actions with Any bodies, DoPut of a
 * descriptor-carrying schema message and a batch), on the net part's gRPC
 * channel. Responses are bounded (ST_MAX_RESULT) and decoded by the
 * project's own IPC reader, which validates every batch: a server that
 * sends garbage fails a check, never the test.
 */
#include "selftest_int.h"

#include <stdlib.h>
#include <string.h>

static knut_status oom(knut_error *err)
{
    return knut_error_set(err, KNUT_ENOMEM, "self-test: out of memory");
}

static void status_from(st_status *st, const knut_net_grpc_status *gs)
{
    st->code = gs->code;
    snprintf(st->message, sizeof st->message, "%s", gs->message);
}

/* The descriptor of a command: Any(m) as a CMD FlightDescriptor. */
static knut_status descriptor(const char *name, const ProtobufCMessage *m, knut_buf *out,
                              knut_error *err)
{
    knut_buf any = KNUT_BUF_INIT;
    knut_status st = knut_serve__any_pack(name, m, &any, err);
    if (st == KNUT_OK) {
        KnutServe__FlightDescriptor d = KNUT_SERVE__FLIGHT_DESCRIPTOR__INIT;
        d.type = KNUT_SERVE__FLIGHT_DESCRIPTOR__DESCRIPTOR_TYPE__CMD;
        d.cmd.data = (uint8_t *)any.data;
        d.cmd.len = any.len;
        st = knut_serve__pack(&d.base, out, err);
    }
    knut_buf_reset(&any);
    return st;
}

/* A unary call: the response into resp, the status into st. */
static knut_status unary(st_client *c, const char *method, const knut_buf *req, knut_buf *resp,
                         st_status *st)
{
    knut_net_grpc_status gs = KNUT_NET_GRPC_STATUS_INIT;
    knut_error cerr = KNUT_ERROR_INIT;
    knut_status rc = knut_net_grpc_channel_unary(c->ch, method, &c->md, c->timeout_ms,
                                                 req->data, req->len, resp, &gs, &cerr);
    status_from(st, &gs);
    if (rc != KNUT_OK && gs.code == 0) { /* ours: over the cap, ... */
        st->code = KNUT_NET_GRPC_UNKNOWN;
        snprintf(st->message, sizeof st->message, "%.500s", cerr.message);
    }
    knut_net_grpc_status_reset(&gs);
    return KNUT_OK;
}

knut_status knut_serve__st_flight_info(st_client *c, const char *method, const char *name,
                           const ProtobufCMessage *m, KnutServe__FlightInfo **info,
                           st_status *st, knut_error *err)
{
    knut_buf req = KNUT_BUF_INIT, resp = KNUT_BUF_INIT;
    knut_buf_init(&resp, ST_MAX_RESULT);
    *info = NULL;
    knut_status rc = descriptor(name, m, &req, err);
    if (rc == KNUT_OK)
        rc = unary(c, method, &req, &resp, st);
    if (rc == KNUT_OK && st->code == 0) {
        int poll = strstr(method, "PollFlightInfo") != NULL;
        if (poll) {
            KnutServe__PollInfo *p = knut_serve__poll_info__unpack(NULL, resp.len,
                                                                   (uint8_t *)resp.data);
            if (p && p->info) {
                *info = p->info;
                p->info = NULL;
            }
            if (p)
                knut_serve__poll_info__free_unpacked(p, NULL);
        } else {
            *info = knut_serve__flight_info__unpack(NULL, resp.len, (uint8_t *)resp.data);
        }
        if (!*info) {
            st->code = KNUT_NET_GRPC_INTERNAL;
            snprintf(st->message, sizeof st->message, "the answer is no %s",
                     poll ? "PollInfo with an info" : "FlightInfo message");
        }
    }
    knut_buf_reset(&req);
    knut_buf_reset(&resp);
    return rc;
}

knut_status knut_serve__st_get_schema(st_client *c, const char *name, const ProtobufCMessage *m,
                          knut_buf *out, st_status *st, knut_error *err)
{
    knut_buf req = KNUT_BUF_INIT, resp = KNUT_BUF_INIT;
    knut_buf_init(&resp, ST_MAX_RESULT);
    knut_buf_clear(out);
    knut_status rc = descriptor(name, m, &req, err);
    if (rc == KNUT_OK)
        rc = unary(c, SERVE_PKG "GetSchema", &req, &resp, st);
    if (rc == KNUT_OK && st->code == 0) {
        KnutServe__SchemaResult *r = knut_serve__schema_result__unpack(NULL, resp.len,
                                                                       (uint8_t *)resp.data);
        if (r) {
            knut_buf_append(out, r->schema.data, r->schema.len);
            knut_serve__schema_result__free_unpacked(r, NULL);
            rc = knut_buf_check(out, err);
        } else {
            st->code = KNUT_NET_GRPC_INTERNAL;
            snprintf(st->message, sizeof st->message, "the answer is no SchemaResult");
        }
    }
    knut_buf_reset(&req);
    knut_buf_reset(&resp);
    return rc;
}

knut_status knut_serve__st_schema_decode(const uint8_t *data, size_t len, struct ArrowSchema *out,
                             knut_error *err)
{
    memset(out, 0, sizeof *out);
    knut_arrow_ipc_source src;
    knut_arrow_ipc_reader *r = NULL;
    knut_status st = knut_arrow_ipc_source_mem(&src, data, len, err);
    if (st == KNUT_OK)
        st = knut_arrow_ipc_reader_new(&r, src, NULL, err);
    if (st == KNUT_OK)
        st = knut_arrow_schema_deep_copy(out, knut_arrow_ipc_reader_schema(r), err);
    knut_arrow_ipc_reader_free(r);
    return st;
}

void knut_serve__st_result_reset(st_result *r)
{
    for (size_t i = 0; i < r->n; i++)
        knut_arrow_array_release(&r->batches[i]);
    free(r->batches);
    knut_arrow_ipc_reader_free(r->reader);
    knut_buf_reset(&r->ipc);
    memset(r, 0, sizeof *r);
}

/* Decodes the collected IPC stream: schema, then every batch. */
static knut_status result_read(st_result *r, st_status *st, knut_error *err)
{
    static const uint32_t eos[2] = {0xFFFFFFFFu, 0};
    knut_buf_append(&r->ipc, eos, sizeof eos);
    knut_arrow_ipc_source src;
    knut_status rc = knut_buf_check(&r->ipc, err);
    if (rc == KNUT_OK)
        rc = knut_arrow_ipc_source_mem(&src, r->ipc.data, r->ipc.len, err);
    if (rc != KNUT_OK)
        return rc;
    knut_error derr = KNUT_ERROR_INIT;
    knut_status d = knut_arrow_ipc_reader_new(&r->reader, src, NULL, &derr);
    for (;;) {
        if (d != KNUT_OK)
            break;
        struct ArrowArray a = {0};
        if ((d = knut_arrow_ipc_reader_next(r->reader, &a, &derr)) != KNUT_OK || !a.release)
            break;
        struct ArrowArray *more = realloc(r->batches, (r->n + 1) * sizeof *more);
        if (!more) {
            knut_arrow_array_release(&a);
            return oom(err);
        }
        r->batches = more;
        r->batches[r->n++] = a;
        r->rows += a.length;
    }
    if (d != KNUT_OK) { /* the server's bytes, not our failure */
        st->code = KNUT_NET_GRPC_INTERNAL;
        snprintf(st->message, sizeof st->message, "the stream does not decode: %.400s",
                 derr.message);
    }
    return KNUT_OK;
}

knut_status knut_serve__st_do_get(st_client *c, const ProtobufCBinaryData *ticket, st_result *r,
                      st_status *st, knut_error *err)
{
    knut_serve__st_result_reset(r);
    knut_buf_init(&r->ipc, ST_MAX_RESULT);
    knut_buf req = KNUT_BUF_INIT, msg = KNUT_BUF_INIT;
    knut_buf_init(&msg, ST_MAX_RESULT);
    KnutServe__Ticket t = KNUT_SERVE__TICKET__INIT;
    t.ticket = *ticket;
    knut_net_grpc_client_call *call = NULL;
    knut_status rc = knut_serve__pack(&t.base, &req, err);
    if (rc == KNUT_OK)
        rc = knut_net_grpc_channel_call(c->ch, SERVE_PKG "DoGet", &c->md, c->timeout_ms, req.data,
                                        req.len, &call, err);
    int bad = 0;
    knut_error rerr = KNUT_ERROR_INIT;
    while (rc == KNUT_OK && !bad) {
        knut_status r2 = knut_net_grpc_client_call_read(call, &msg, &rerr);
        if (r2 == KNUT_EOF)
            break;
        KnutServe__FlightData *fd = r2 == KNUT_OK
            ? knut_serve__flight_data__unpack(NULL, msg.len, (uint8_t *)msg.data)
            : NULL;
        if (!fd || knut_serve__flightdata_to_ipc(fd, &r->ipc, &rerr) != KNUT_OK)
            bad = 1;
        if (fd)
            knut_serve__flight_data__free_unpacked(fd, NULL);
    }
    if (call) {
        knut_net_grpc_status gs = KNUT_NET_GRPC_STATUS_INIT;
        knut_net_grpc_client_call_finish(call, &gs, NULL);
        status_from(st, &gs);
        knut_net_grpc_status_reset(&gs);
        if (bad && st->code == 0) {
            st->code = KNUT_NET_GRPC_INTERNAL;
            snprintf(st->message, sizeof st->message,
                     "a FlightData message does not decode%s%.400s",
                     rerr.message[0] ? ": " : "", rerr.message);
        }
    }
    if (rc == KNUT_OK && st->code == 0)
        rc = result_read(r, st, err);
    knut_net_grpc_client_call_free(call);
    knut_buf_reset(&req);
    knut_buf_reset(&msg);
    return rc;
}

knut_status knut_serve__st_raw_call(st_client *c, const char *method, const void *req, size_t len,
                        knut_buf *first, size_t *n, st_status *st, knut_error *err)
{
    knut_net_grpc_client_call *call = NULL;
    knut_buf msg = KNUT_BUF_INIT;
    knut_buf_init(&msg, ST_MAX_RESULT);
    *n = 0;
    if (first)
        knut_buf_clear(first);
    knut_status rc = knut_net_grpc_channel_call(c->ch, method, &c->md, c->timeout_ms, req, len,
                                                &call, err);
    while (rc == KNUT_OK && knut_net_grpc_client_call_read(call, &msg, NULL) == KNUT_OK) {
        (*n)++;
        uint32_t l = (uint32_t)msg.len;
        if (first) {
            knut_buf_append(first, &l, sizeof l);
            knut_buf_append(first, msg.data, msg.len);
        }
    }
    if (call) {
        knut_net_grpc_status gs = KNUT_NET_GRPC_STATUS_INIT;
        knut_net_grpc_client_call_finish(call, &gs, NULL);
        status_from(st, &gs);
        knut_net_grpc_status_reset(&gs);
    }
    knut_net_grpc_client_call_free(call);
    knut_buf_reset(&msg);
    return rc == KNUT_OK && first ? knut_buf_check(first, err) : rc;
}

knut_status knut_serve__st_do_action(st_client *c, const char *type, const knut_buf *body,
                                     knut_buf *out,
                         st_status *st, knut_error *err)
{
    KnutServe__Action a = KNUT_SERVE__ACTION__INIT;
    a.type = (char *)type;
    a.body.data = body ? (uint8_t *)body->data : NULL;
    a.body.len = body ? body->len : 0;
    knut_buf req = KNUT_BUF_INIT, msg = KNUT_BUF_INIT;
    knut_buf_init(&msg, ST_MAX_RESULT);
    knut_buf_clear(out);
    knut_net_grpc_client_call *call = NULL;
    knut_status rc = knut_serve__pack(&a.base, &req, err);
    if (rc == KNUT_OK)
        rc = knut_net_grpc_channel_call(c->ch, SERVE_PKG "DoAction", &c->md, c->timeout_ms,
                                        req.data, req.len, &call, err);
    while (rc == KNUT_OK && knut_net_grpc_client_call_read(call, &msg, NULL) == KNUT_OK) {
        KnutServe__Result *r = knut_serve__result__unpack(NULL, msg.len, (uint8_t *)msg.data);
        uint32_t l = r ? (uint32_t)r->body.len : 0;
        knut_buf_append(out, &l, sizeof l);
        if (r) {
            knut_buf_append(out, r->body.data, r->body.len);
            knut_serve__result__free_unpacked(r, NULL);
        }
    }
    if (call) {
        knut_net_grpc_status gs = KNUT_NET_GRPC_STATUS_INIT;
        knut_net_grpc_client_call_finish(call, &gs, NULL);
        status_from(st, &gs);
        knut_net_grpc_status_reset(&gs);
    }
    knut_net_grpc_client_call_free(call);
    knut_buf_reset(&req);
    knut_buf_reset(&msg);
    return rc == KNUT_OK ? knut_buf_check(out, err) : rc;
}

/* Sends one FlightData: descriptor (may be NULL), header, body. */
static knut_status put_one(knut_net_grpc_client_call *call, const knut_buf *desc,
                           const uint8_t *header, size_t hlen, const uint8_t *body, size_t blen,
                           knut_error *err)
{
    KnutServe__FlightData fd = KNUT_SERVE__FLIGHT_DATA__INIT;
    KnutServe__FlightDescriptor *d = NULL;
    if (desc && !(d = knut_serve__flight_descriptor__unpack(NULL, desc->len,
                                                             (uint8_t *)desc->data)))
        return knut_error_set(err, KNUT_EINVAL, "self-test: a descriptor of our own");
    fd.flight_descriptor = d;
    fd.data_header.data = (uint8_t *)header;
    fd.data_header.len = hlen;
    fd.data_body.data = (uint8_t *)body;
    fd.data_body.len = blen;
    knut_buf m = KNUT_BUF_INIT;
    knut_status st = knut_serve__pack(&fd.base, &m, err);
    if (st == KNUT_OK)
        st = knut_net_grpc_client_call_write(call, m.data, m.len, err);
    knut_buf_reset(&m);
    if (d)
        knut_serve__flight_descriptor__free_unpacked(d, NULL);
    return st;
}

/* The IPC stream of schema + batch cut into FlightData messages, the
 * first carrying the descriptor. */
static knut_status put_batch(knut_net_grpc_client_call *call, const knut_buf *desc,
                             const struct ArrowSchema *schema, const struct ArrowArray *batch,
                             knut_error *err)
{
    knut_buf ipc = KNUT_BUF_INIT;
    knut_arrow_ipc_writer *w = NULL;
    knut_status st = knut_arrow_ipc_writer_new(&w, knut_arrow_ipc_sink_buf(&ipc), schema, err);
    if (st == KNUT_OK)
        st = knut_arrow_ipc_writer_write(w, batch, err);
    knut_arrow_ipc_writer_free(w);
    const uint8_t *p = (const uint8_t *)ipc.data;
    size_t off = 0, n = 0;
    while (st == KNUT_OK && off + 8 <= ipc.len) {
        uint32_t mark, mlen;
        memcpy(&mark, p + off, 4);
        memcpy(&mlen, p + off + 4, 4);
        if (mark != 0xFFFFFFFFu || mlen == 0 || off + 8 + mlen > ipc.len)
            break;
        int64_t body = knut_serve__fb_body_length(p + off + 8, mlen);
        if (body < 0 || off + 8 + mlen + (uint64_t)body > ipc.len)
            break;
        st = put_one(call, n == 0 ? desc : NULL, p + off + 8, mlen, p + off + 8 + mlen,
                     (size_t)body, err);
        off += 8 + mlen + (size_t)body;
        n++;
    }
    if (st == KNUT_OK && n < 2)
        st = knut_error_set(err, KNUT_EINVAL, "self-test: the parameter batch did not encode");
    knut_buf_reset(&ipc);
    return st;
}

knut_status knut_serve__st_do_put(st_client *c, const char *name, const ProtobufCMessage *m,
                      const struct ArrowSchema *schema, const struct ArrowArray *batch,
                      knut_buf *out, st_status *st, knut_error *err)
{
    knut_buf desc = KNUT_BUF_INIT, msg = KNUT_BUF_INIT;
    knut_buf_init(&msg, ST_MAX_RESULT);
    knut_buf_clear(out);
    knut_net_grpc_client_call *call = NULL;
    knut_status rc = descriptor(name, m, &desc, err);
    if (rc == KNUT_OK)
        rc = knut_net_grpc_channel_open(c->ch, SERVE_PKG "DoPut", &c->md, c->timeout_ms, &call,
                                        err);
    knut_error werr = KNUT_ERROR_INIT;
    knut_status w = KNUT_OK;
    if (rc == KNUT_OK)
        w = schema ? put_batch(call, &desc, schema, batch, &werr)
                   : put_one(call, &desc, NULL, 0, NULL, 0, &werr);
    if (w == KNUT_EINVAL || w == KNUT_ENOMEM) /* ours, not the server's */
        rc = knut_error_set(err, w, "%s", werr.message);
    if (call) {
        knut_net_grpc_client_call_close_send(call, NULL);
        if (knut_net_grpc_client_call_read(call, &msg, NULL) == KNUT_OK) {
            KnutServe__PutResult *pr = knut_serve__put_result__unpack(NULL, msg.len,
                                                                      (uint8_t *)msg.data);
            if (pr) {
                knut_buf_append(out, pr->app_metadata.data, pr->app_metadata.len);
                knut_serve__put_result__free_unpacked(pr, NULL);
            }
        }
        knut_net_grpc_status gs = KNUT_NET_GRPC_STATUS_INIT;
        knut_net_grpc_client_call_finish(call, &gs, NULL);
        status_from(st, &gs);
        knut_net_grpc_status_reset(&gs);
    }
    knut_net_grpc_client_call_free(call);
    knut_buf_reset(&desc);
    knut_buf_reset(&msg);
    return rc;
}

/* ---- schema comparison -------------------------------------------------- */

static int nullable(const struct ArrowSchema *s)
{
    return (s->flags & ARROW_FLAG_NULLABLE) != 0;
}

int knut_serve__st_schema_is(const struct ArrowSchema *schema, const char *spec, char *why,
                             size_t cap)
{
    int64_t i = 0;
    const char *p = spec;
    while (*p) {
        char name[128], fmt[64], nn[4];
        const char *end = strchr(p, ';');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char field[256];
        snprintf(field, sizeof field, "%.*s", (int)len, p);
        if (sscanf(field, "%127[^|]|%63[^|]|%3s", name, fmt, nn) != 3) {
            snprintf(why, cap, "bad spec '%s'", field);
            return 0;
        }
        if (i >= schema->n_children) {
            snprintf(why, cap, "%lld columns, expected column %lld '%s'",
                     (long long)schema->n_children, (long long)i + 1, name);
            return 0;
        }
        const struct ArrowSchema *c = schema->children[i];
        int want_null = strcmp(nn, "N") == 0;
        if (!c->name || strcmp(c->name, name) != 0 || strcmp(c->format, fmt) != 0 ||
            nullable(c) != want_null) {
            snprintf(why, cap, "column %lld is %s %s %s, expected %s %s %s", (long long)i + 1,
                     c->name ? c->name : "(unnamed)", c->format, nullable(c) ? "N" : "NN", name,
                     fmt, nn);
            return 0;
        }
        i++;
        p += len;
        if (*p == ';')
            p++;
    }
    if (i != schema->n_children) {
        snprintf(why, cap, "%lld columns, expected %lld", (long long)schema->n_children,
                 (long long)i);
        return 0;
    }
    return 1;
}

int knut_serve__st_schema_same(const struct ArrowSchema *a, const struct ArrowSchema *b, char *why,
                   size_t cap)
{
    if (strcmp(a->format, b->format) != 0 || a->n_children != b->n_children ||
        strcmp(a->name ? a->name : "", b->name ? b->name : "") != 0 ||
        nullable(a) != nullable(b)) {
        snprintf(why, cap, "'%s' %s%s vs '%s' %s%s (%lld vs %lld children)",
                 a->name ? a->name : "", a->format, nullable(a) ? "" : " NN",
                 b->name ? b->name : "", b->format, nullable(b) ? "" : " NN",
                 (long long)a->n_children, (long long)b->n_children);
        return 0;
    }
    for (int64_t i = 0; i < a->n_children; i++)
        if (!knut_serve__st_schema_same(a->children[i], b->children[i], why, cap))
            return 0;
    return 1;
}
