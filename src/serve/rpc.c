/*
 * The Flight RPCs, each a handler on the net part's gRPC server. Requests
 * are read into buffers capped at the server's receive size, decoded with
 * protobuf-c, and every failure becomes a status naming what was wrong:
 * a request that does not decode INVALID_ARGUMENT, a command or action
 * this server does not have UNIMPLEMENTED, DuckDB's errors by their kind.
 */
#include <string.h>

#include "serve_int.h"

/* A command or an action holds at most one SQL text or prepared statement
 * handle and small fields: anything larger is refused before protobuf-c
 * unpacks it (a message of many tiny repeated fields would cost an
 * allocation each). */
#define COMMAND_MAX (KNUT_SERVE__MAX_HANDLE + ((size_t)64 << 10))

/* Reads the one request message of a unary or server-streaming call. */
static knut_status read_one(knut_serve *s, knut_net_grpc_call *call, knut_buf *msg,
                            knut_error *err)
{
    knut_buf_init(msg, s->max_receive < COMMAND_MAX ? s->max_receive : COMMAND_MAX);
    knut_status st = knut_net_grpc_call_read(call, msg, err);
    if (st == KNUT_EOF)
        return knut_error_set(err, KNUT_EPARSE, "%s: no request message",
                              knut_net_grpc_call_method(call));
    return st;
}

static knut_status write_msg(knut_net_grpc_call *call, const ProtobufCMessage *m,
                             knut_error *err)
{
    knut_buf out = KNUT_BUF_INIT;
    knut_status st = knut_serve__pack(m, &out, err);
    if (st == KNUT_OK)
        st = knut_net_grpc_call_write(call, out.data, out.len, err);
    knut_buf_reset(&out);
    return st;
}

/* Handshake: the credentials were checked before (Basic ones answered
 * with a session token in the response headers, sent first: Go's client
 * waits for them before it reads); the requests (none, or some) are read
 * to the end and the call ends OK. */
static knut_status rpc_handshake(knut_serve *s, knut_serve__who *who, knut_net_grpc_call *call,
                                 knut_error *err)
{
    (void)who;
    knut_status hs = s->auth.on ? knut_net_grpc_call_send_headers(call, err) : KNUT_OK;
    if (hs != KNUT_OK)
        return hs;
    knut_buf msg;
    knut_buf_init(&msg, s->max_receive);
    knut_status st;
    while ((st = knut_net_grpc_call_read(call, &msg, err)) == KNUT_OK)
        ;
    knut_buf_reset(&msg);
    return st == KNUT_EOF ? KNUT_OK : st;
}

/* ListFlights: there are no named flights here, only commands. */
static knut_status rpc_list_flights(knut_serve *ctx, knut_serve__who *who,
                                    knut_net_grpc_call *call, knut_error *err)
{
    (void)who;
    knut_buf msg;
    knut_status st = read_one(ctx, call, &msg, err);
    KnutServe__Criteria *c =
        st == KNUT_OK ? knut_serve__criteria__unpack(NULL, msg.len,
                                                                  (const uint8_t *)msg.data)
                      : NULL;
    if (st == KNUT_OK && !c)
        st = knut_error_set(err, KNUT_EPARSE, "ListFlights: the Criteria does not decode");
    if (c)
        knut_serve__criteria__free_unpacked(c, NULL);
    knut_buf_reset(&msg);
    return st;
}

/* The FlightInfo of the descriptor in msg, packed into out. */
static knut_status flight_info(knut_serve *s, knut_serve__who *who, const knut_buf *msg,
                               knut_buf *out, int schema_only, knut_error *err)
{
    KnutServe__FlightDescriptor *d = NULL;
    knut_serve__cmd cmd = KNUT_SERVE__CMD_INIT;
    struct ArrowSchema schema = {0};
    knut_buf sb = KNUT_BUF_INIT, ticket = KNUT_BUF_INIT;
    knut_status st = knut_serve__descriptor_parse((const uint8_t *)msg->data, msg->len, &d, &cmd,
                                                  err);
    who->what = cmd.name;
    if (st == KNUT_OK)
        st = knut_serve__sql_schema(s, who, &cmd, &schema, err);
    if (st == KNUT_EAGAIN && !schema_only) {
        /* known only once it runs (SELECT $1 + 1): an empty schema tells the
         * client to take the stream's own */
        knut_error_clear(err);
        st = KNUT_OK;
    } else if (st == KNUT_EAGAIN) {
        st = knut_error_set(err, KNUT_EUNSUPPORTED, "the result's types depend on the "
                                                    "parameters' values: they are known once "
                                                    "the query runs (DoGet)");
    } else if (st == KNUT_OK) {
        st = knut_serve__schema_bytes(&schema, &sb, err);
    }
    if (st == KNUT_OK && schema_only) {
        KnutServe__SchemaResult r = KNUT_SERVE__SCHEMA_RESULT__INIT;
        r.schema.data = (uint8_t *)sb.data;
        r.schema.len = sb.len;
        st = knut_serve__pack(&r.base, out, err);
    } else if (st == KNUT_OK) {
        st = knut_serve__sql_ticket(&cmd, d->cmd.data, d->cmd.len, &ticket, err);
        KnutServe__Ticket t = KNUT_SERVE__TICKET__INIT;
        t.ticket.data = (uint8_t *)ticket.data;
        t.ticket.len = ticket.len;
        /* no locations: redeem the ticket here, on the same connection */
        KnutServe__FlightEndpoint ep = KNUT_SERVE__FLIGHT_ENDPOINT__INIT;
        ep.ticket = &t;
        KnutServe__FlightEndpoint *eps[1] = {&ep};
        KnutServe__FlightInfo fi = KNUT_SERVE__FLIGHT_INFO__INIT;
        fi.schema.data = (uint8_t *)sb.data;
        fi.schema.len = sb.len;
        fi.flight_descriptor = d;
        fi.n_endpoint = 1;
        fi.endpoint = eps;
        fi.total_records = -1;
        fi.total_bytes = -1;
        if (st == KNUT_OK)
            st = knut_serve__pack(&fi.base, out, err);
    }
    knut_arrow_schema_release(&schema);
    knut_buf_reset(&sb);
    knut_buf_reset(&ticket);
    knut_serve__cmd_reset(&cmd);
    if (d)
        knut_serve__flight_descriptor__free_unpacked(d, NULL);
    return st;
}

static knut_status rpc_get_flight_info(knut_serve *ctx, knut_serve__who *who,
                                       knut_net_grpc_call *call, knut_error *err)
{
    knut_buf msg, out = KNUT_BUF_INIT;
    knut_status st = read_one(ctx, call, &msg, err);
    if (st == KNUT_OK)
        st = flight_info(ctx, who, &msg, &out, 0, err);
    if (st == KNUT_OK)
        st = knut_net_grpc_call_write(call, out.data, out.len, err);
    knut_buf_reset(&msg);
    knut_buf_reset(&out);
    return st;
}

/* PollFlightInfo: queries are not run ahead, so the info is final at once
 * (no descriptor to poll again, progress 1). */
static knut_status rpc_poll_flight_info(knut_serve *ctx, knut_serve__who *who,
                                        knut_net_grpc_call *call, knut_error *err)
{
    knut_buf msg, out = KNUT_BUF_INIT;
    KnutServe__FlightInfo *fi = NULL;
    knut_status st = read_one(ctx, call, &msg, err);
    if (st == KNUT_OK)
        st = flight_info(ctx, who, &msg, &out, 0, err);
    if (st == KNUT_OK &&
        !(fi = knut_serve__flight_info__unpack(NULL, out.len,
                                                            (const uint8_t *)out.data)))
        st = knut_error_set(err, KNUT_ENOMEM, "PollFlightInfo: out of memory");
    if (st == KNUT_OK) {
        KnutServe__PollInfo pi = KNUT_SERVE__POLL_INFO__INIT;
        pi.info = fi;
        pi._progress_case = KNUT_SERVE__POLL_INFO___PROGRESS_PROGRESS;
        pi.progress = 1.0;
        st = write_msg(call, &pi.base, err);
    }
    if (fi)
        knut_serve__flight_info__free_unpacked(fi, NULL);
    knut_buf_reset(&msg);
    knut_buf_reset(&out);
    return st;
}

static knut_status rpc_get_schema(knut_serve *ctx, knut_serve__who *who,
                                  knut_net_grpc_call *call, knut_error *err)
{
    knut_buf msg, out = KNUT_BUF_INIT;
    knut_status st = read_one(ctx, call, &msg, err);
    if (st == KNUT_OK)
        st = flight_info(ctx, who, &msg, &out, 1, err);
    if (st == KNUT_OK)
        st = knut_net_grpc_call_write(call, out.data, out.len, err);
    knut_buf_reset(&msg);
    knut_buf_reset(&out);
    return st;
}

static knut_status rpc_do_get(knut_serve *ctx, knut_serve__who *who,
                              knut_net_grpc_call *call, knut_error *err)
{
    knut_buf msg;
    knut_serve__cmd cmd = KNUT_SERVE__CMD_INIT;
    knut_status st = read_one(ctx, call, &msg, err);
    KnutServe__Ticket *t =
        st == KNUT_OK ? knut_serve__ticket__unpack(NULL, msg.len,
                                                                (const uint8_t *)msg.data)
                      : NULL;
    if (st == KNUT_OK && !t)
        st = knut_error_set(err, KNUT_EPARSE, "DoGet: the Ticket does not decode");
    if (st == KNUT_OK)
        st = knut_serve__cmd_parse(t->ticket.data, t->ticket.len, &cmd, err);
    who->what = cmd.name;
    if (st == KNUT_OK)
        st = knut_serve__sql_doget(ctx, who, call, &cmd, err);
    knut_serve__cmd_reset(&cmd);
    if (t)
        knut_serve__ticket__free_unpacked(t, NULL);
    knut_buf_reset(&msg);
    return st;
}

/* DoPut: parameters of a prepared statement. Updates need a writable
 * database, which this server does not open. */
static knut_status rpc_do_put(knut_serve *s, knut_serve__who *who, knut_net_grpc_call *call,
                              knut_error *err)
{
    knut_buf msg;
    knut_serve__cmd cmd = KNUT_SERVE__CMD_INIT;
    knut_buf_init(&msg, s->max_receive);
    knut_status st = knut_net_grpc_call_read(call, &msg, err);
    if (st == KNUT_EOF)
        st = knut_error_set(err, KNUT_EPARSE, "DoPut: no FlightData was sent");
    KnutServe__FlightData *fd =
        st == KNUT_OK ? knut_serve__flight_data__unpack(NULL, msg.len,
                                                                     (const uint8_t *)msg.data)
                      : NULL;
    if (st == KNUT_OK && !fd)
        st = knut_error_set(err, KNUT_EPARSE, "DoPut: the first message is not FlightData");
    if (st == KNUT_OK && !fd->flight_descriptor)
        st = knut_error_set(err, KNUT_EPARSE, "DoPut: the first FlightData has no descriptor");
    if (st == KNUT_OK) {
        const KnutServe__FlightDescriptor *d = fd->flight_descriptor;
        if (d->type != KNUT_SERVE__FLIGHT_DESCRIPTOR__DESCRIPTOR_TYPE__CMD)
            st = knut_error_set(err, KNUT_EUNSUPPORTED, "DoPut: only Flight SQL commands");
        else
            st = knut_serve__cmd_parse(d->cmd.data, d->cmd.len, &cmd, err);
        who->what = cmd.name;
    }
    if (st == KNUT_OK && cmd.kind == KNUT_SERVE__CMD_PREPARED_QUERY) {
        const KnutServe__Flightsql__CommandPreparedStatementQuery *p = (void *)cmd.msg;
        st = knut_serve__prepared_bind(s, who, p->prepared_statement_handle.data,
                                       p->prepared_statement_handle.len, call, fd, err);
    } else if (st == KNUT_OK && (cmd.kind == KNUT_SERVE__CMD_STATEMENT_UPDATE ||
                                 cmd.kind == KNUT_SERVE__CMD_PREPARED_UPDATE)) {
        st = knut_error_set(err, KNUT_EUNSUPPORTED, "%s: the database is served read-only",
                            cmd.name);
    } else if (st == KNUT_OK) {
        st = knut_error_set(err, KNUT_EUNSUPPORTED, "DoPut of %s is not served", cmd.name);
    }
    knut_serve__cmd_reset(&cmd);
    if (fd)
        knut_serve__flight_data__free_unpacked(fd, NULL);
    knut_buf_reset(&msg);
    return st;
}

static const struct {
    const char *type, *description;
} actions[] = {
    {"CreatePreparedStatement", "Prepare a SQL statement: its handle, result and parameter "
                                "schemas"},
    {"ClosePreparedStatement", "Forget a prepared statement"},
    {"CancelFlightInfo", "Cancel a query (queries run only while their DoGet streams, so the "
                         "answer is NOT_CANCELLABLE: cancel the DoGet)"},
};

static knut_status rpc_list_actions(knut_serve *ctx, knut_serve__who *who,
                                    knut_net_grpc_call *call, knut_error *err)
{
    (void)who;
    knut_buf msg;
    knut_status st = read_one(ctx, call, &msg, err);
    for (size_t i = 0; st == KNUT_OK && i < sizeof actions / sizeof actions[0]; i++) {
        KnutServe__ActionType t = KNUT_SERVE__ACTION_TYPE__INIT;
        t.type = (char *)actions[i].type;
        t.description = (char *)actions[i].description;
        st = write_msg(call, &t.base, err);
    }
    knut_buf_reset(&msg);
    return st;
}

static knut_status rpc_do_action(knut_serve *s, knut_serve__who *who, knut_net_grpc_call *call,
                                 knut_error *err)
{
    knut_buf msg, out = KNUT_BUF_INIT;
    knut_status st = read_one(s, call, &msg, err);
    KnutServe__Action *a =
        st == KNUT_OK ? knut_serve__action__unpack(NULL, msg.len,
                                                                (const uint8_t *)msg.data)
                      : NULL;
    if (st == KNUT_OK && !a)
        st = knut_error_set(err, KNUT_EPARSE, "DoAction: the Action does not decode");
    const char *type = a && a->type ? a->type : "";
    if (st != KNUT_OK) {
        /* nothing more */
    } else if (strcmp(type, "CreatePreparedStatement") == 0) {
        who->what = "CreatePreparedStatement";
        st = knut_serve__prepared_create(s, who, a->body.data, a->body.len, &out, err);
        KnutServe__Result r = KNUT_SERVE__RESULT__INIT;
        r.body.data = (uint8_t *)out.data;
        r.body.len = out.len;
        if (st == KNUT_OK)
            st = write_msg(call, &r.base, err);
    } else if (strcmp(type, "ClosePreparedStatement") == 0) {
        who->what = "ClosePreparedStatement";
        st = knut_serve__prepared_close(s, who, a->body.data, a->body.len, err);
    } else if (strcmp(type, "CancelFlightInfo") == 0) {
        who->what = "CancelFlightInfo";
        KnutServe__CancelFlightInfoRequest *req =
            knut_serve__cancel_flight_info_request__unpack(NULL, a->body.len,
                                                                        a->body.data);
        if (!req)
            st = knut_error_set(err, KNUT_EPARSE, "CancelFlightInfo: the request does not "
                                                  "decode");
        KnutServe__CancelFlightInfoResult r =
            KNUT_SERVE__CANCEL_FLIGHT_INFO_RESULT__INIT;
        r.status =
            KNUT_SERVE__CANCEL_FLIGHT_INFO_RESULT__CANCEL_STATUS__CANCEL_STATUS_NOT_CANCELLABLE;
        knut_buf body = KNUT_BUF_INIT;
        if (st == KNUT_OK)
            st = knut_serve__pack(&r.base, &body, err);
        KnutServe__Result res = KNUT_SERVE__RESULT__INIT;
        res.body.data = (uint8_t *)body.data;
        res.body.len = body.len;
        if (st == KNUT_OK)
            st = write_msg(call, &res.base, err);
        knut_buf_reset(&body);
        if (req)
            knut_serve__cancel_flight_info_request__free_unpacked(req, NULL);
    } else {
        char shown[96];
        size_t k = 0;
        for (const char *p = type; *p && k + 1 < sizeof shown; p++)
            shown[k++] = (*p >= 0x20 && *p < 0x7f) ? *p : '?';
        shown[k] = 0;
        st = knut_error_set(err, KNUT_EUNSUPPORTED, "unknown action '%s'", shown);
    }
    if (a)
        knut_serve__action__free_unpacked(a, NULL);
    knut_buf_reset(&msg);
    knut_buf_reset(&out);
    return st;
}

typedef knut_status (*rpc_fn)(knut_serve *s, knut_serve__who *who, knut_net_grpc_call *call,
                              knut_error *err);

static const struct {
    const char *name;
    rpc_fn fn;
} methods[KNUT_SERVE__N_METHODS] = {
    {SERVE_PKG "Handshake", rpc_handshake}, /* index 0: where Basic credentials count */
    {SERVE_PKG "ListFlights", rpc_list_flights},
    {SERVE_PKG "GetFlightInfo", rpc_get_flight_info},
    {SERVE_PKG "PollFlightInfo", rpc_poll_flight_info},
    {SERVE_PKG "GetSchema", rpc_get_schema},
    {SERVE_PKG "DoGet", rpc_do_get},
    {SERVE_PKG "DoPut", rpc_do_put},
    {SERVE_PKG "DoAction", rpc_do_action},
    {SERVE_PKG "ListActions", rpc_list_actions},
};

/* Every method comes through here: who the call is first (nothing of the
 * request is read before), then the method; a refusal by either ends the
 * call UNAUTHENTICATED or PERMISSION_DENIED with its reason. */
static knut_status rpc_entry(void *ctx, knut_net_grpc_call *call, knut_error *err)
{
    knut_serve__method *m = ctx;
    knut_serve__who who;
    int64_t t0 = knut_clock_mono_ns();
    knut_serve__metrics_begin(m->s, m->index);
    knut_status st = knut_serve__auth_call(m->s, call, m->index == 0, &who, err);
    who.what = NULL;
    who.rows = 0;
    if (st == KNUT_OK)
        st = methods[m->index].fn(m->s, &who, call, err);
    st = knut_serve__db_recover(m->s, st, err); /* a fatal DuckDB error: reopen */
    int code = st == KNUT_OK ? KNUT_NET_GRPC_OK : (int)knut_net_grpc_code_from_status(st);
    if (st != KNUT_OK && (who.unauthenticated || who.denied)) {
        knut_error ferr = KNUT_ERROR_INIT;
        code = who.unauthenticated ? KNUT_NET_GRPC_UNAUTHENTICATED
                                   : KNUT_NET_GRPC_PERMISSION_DENIED;
        knut_net_grpc_call_finish(call, code, err->message, NULL, &ferr);
    } else if (st != KNUT_OK && knut_net_grpc_call_cancelled(call)) {
        code = KNUT_NET_GRPC_CANCELLED;
    }
    knut_serve__metrics_end(m->s, m->index, &who, code, knut_net_grpc_call_bytes_sent(call),
                            knut_clock_mono_ns() - t0);
    return st;
}

const char *knut_serve__method_name(int i)
{
    return i >= 0 && i < KNUT_SERVE__N_METHODS ? methods[i].name : "";
}

knut_status knut_serve__rpc_register(knut_serve *s, knut_error *err)
{
    knut_status st = KNUT_OK;
    for (int i = 0; st == KNUT_OK && i < KNUT_SERVE__N_METHODS; i++) {
        s->methods[i].s = s;
        s->methods[i].index = i;
        st = knut_net_grpc_server_add_method(s->srv, methods[i].name, rpc_entry,
                                             &s->methods[i], err);
    }
    return st;
}
