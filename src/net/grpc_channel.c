/*
 * The gRPC client: a channel to one target and calls on it that send one
 * request (unary and server-streaming), read the responses one at a time
 * and end with the status. Each call has its own pluck queue, so calls on
 * one channel may run on different threads.
 */
#include <grpc/support/alloc.h>
#include <stdlib.h>
#include <string.h>

#include "grpc_int.h"

struct knut_net_grpc_channel {
    grpc_channel *ch;
    size_t max_receive, max_send;
};

struct knut_net_grpc_client_call {
    grpc_call *call;
    grpc_completion_queue *cq;
    char method[256];
    size_t max_receive;
    size_t max_send;    /* 0: channel_call's, which sent its one message */
    grpc_metadata_array initial;
    int got_initial, eof, finished;
    int send_closed;
    char tag;
};

knut_status knut_net_grpc_channel_new(knut_net_grpc_channel **out, const char *target,
                                      const knut_net_grpc_channel_options *o, knut_error *err)
{
    KNUT_ASSERT_ARG(err, out && target);
    *out = NULL;
    KNUT_CHECK_VERSION(o, KNUT_NET_GRPC_CHANNEL_OPTIONS_VERSION, err);
    knut_net_grpc_channel_options def = KNUT_NET_GRPC_CHANNEL_OPTIONS_INIT;
    if (!o)
        o = &def;
    size_t max_recv = o->max_receive ? o->max_receive : KNUT_NET_GRPC_DEFAULT_MAX_MESSAGE;
    size_t max_send = o->max_send ? o->max_send : KNUT_NET_GRPC_DEFAULT_MAX_MESSAGE;
    if (max_recv > INT32_MAX || max_send > INT32_MAX)
        return knut_error_set(err, KNUT_EINVAL, "gRPC channel: message caps up to 2 GiB");
    knut_net_grpc_channel *c = calloc(1, sizeof *c);
    if (!c)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    knut_net__grpc_ref();
    c->max_receive = max_recv;
    c->max_send = max_send;
    grpc_arg args[3] = {
        {GRPC_ARG_INTEGER, GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH, {.integer = (int)max_recv}},
        {GRPC_ARG_INTEGER, GRPC_ARG_MAX_SEND_MESSAGE_LENGTH, {.integer = (int)max_send}},
        {GRPC_ARG_STRING, GRPC_SSL_TARGET_NAME_OVERRIDE_ARG, {.string = NULL}},
    };
    grpc_channel_args ca = {2, args};
    if (o->tls && o->tls->server_name) {
        args[2].value.string = (char *)o->tls->server_name;
        ca.num_args = 3;
    }
    grpc_channel_credentials *creds = NULL;
    knut_status st = knut_net__grpc_channel_creds(o->tls, &creds, err);
    if (st == KNUT_OK) {
        c->ch = grpc_channel_create(target, creds, &ca);
        grpc_channel_credentials_release(creds);
        if (!c->ch)
            st = knut_error_set(err, KNUT_EINVAL, "gRPC channel to '%.200s': refused", target);
    }
    if (st != KNUT_OK) {
        knut_net_grpc_channel_free(c);
        return st;
    }
    *out = c;
    return KNUT_OK;
}

void knut_net_grpc_channel_free(knut_net_grpc_channel *c)
{
    if (!c)
        return;
    if (c->ch)
        grpc_channel_destroy(c->ch);
    free(c);
    knut_net__grpc_unref();
}

static int run(knut_net_grpc_client_call *c, const grpc_op *ops, size_t n)
{
    if (grpc_call_start_batch(c->call, ops, n, &c->tag, NULL) != GRPC_CALL_OK)
        return 0;
    /* the call's deadline ends every batch: no wait of our own is needed */
    grpc_event ev = grpc_completion_queue_pluck(c->cq, &c->tag,
                                                gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    return ev.type == GRPC_OP_COMPLETE && ev.success;
}

knut_status knut_net_grpc_channel_call(knut_net_grpc_channel *ch, const char *method,
                                       const knut_net_grpc_metadata *md, int64_t timeout_ms,
                                       const void *req, size_t len,
                                       knut_net_grpc_client_call **out, knut_error *err)
{
    KNUT_ASSERT_ARG(err, ch && method && out && (req || len == 0));
    *out = NULL;
    if (len > ch->max_send)
        return knut_error_set(err, KNUT_ETOOBIG, "%.200s: request of %zu bytes over the "
                                                 "%zu-byte cap", method, len, ch->max_send);
    if (strlen(method) >= sizeof ((knut_net_grpc_client_call *)0)->method || method[0] != '/')
        return knut_error_set(err, KNUT_EINVAL, "gRPC method '%.200s': expected "
                                                "/package.Service/Method", method);
    knut_net_grpc_client_call *c = calloc(1, sizeof *c);
    if (!c)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    snprintf(c->method, sizeof c->method, "%s", method);
    c->max_receive = ch->max_receive;
    grpc_metadata_array_init(&c->initial);
    grpc_metadata *gm = NULL;
    grpc_byte_buffer *bb = NULL;
    knut_status st = knut_net__grpc_md_out(md, &gm, err);
    if (st != KNUT_OK)
        goto cleanup;
    c->cq = grpc_completion_queue_create_for_pluck(NULL);
    grpc_slice m = grpc_slice_from_copied_string(method);
    c->call = grpc_channel_create_call(
        ch->ch, NULL, GRPC_PROPAGATE_DEFAULTS, c->cq, m, NULL,
        knut_net__grpc_deadline(timeout_ms < 0   ? -1
                                : timeout_ms > 0 ? timeout_ms
                                                 : GRPC_DEFAULT_TIMEOUT_MS),
        NULL);
    grpc_slice_unref(m);
    bb = knut_net__grpc_bb_new(req, len);
    if (!c->call || !bb) {
        st = knut_error_set(err, KNUT_ENOMEM, "%s: cannot start the call", method);
        goto cleanup;
    }
    grpc_op ops[3];
    memset(ops, 0, sizeof ops);
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[0].data.send_initial_metadata.count = gm ? md->count : 0;
    ops[0].data.send_initial_metadata.metadata = gm;
    ops[1].op = GRPC_OP_SEND_MESSAGE;
    ops[1].data.send_message.send_message = bb;
    ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
    /* a failed send is no error here: the status says why (unavailable, ...) */
    run(c, ops, 3);
cleanup:
    grpc_byte_buffer_destroy(bb);
    free(gm);
    if (st != KNUT_OK) {
        knut_net_grpc_client_call_free(c);
        return st;
    }
    *out = c;
    return KNUT_OK;
}

knut_status knut_net_grpc_channel_open(knut_net_grpc_channel *ch, const char *method,
                                       const knut_net_grpc_metadata *md, int64_t timeout_ms,
                                       knut_net_grpc_client_call **out, knut_error *err)
{
    KNUT_ASSERT_ARG(err, ch && method && out);
    *out = NULL;
    if (strlen(method) >= sizeof ((knut_net_grpc_client_call *)0)->method || method[0] != '/')
        return knut_error_set(err, KNUT_EINVAL, "gRPC method '%.200s': expected "
                                                "/package.Service/Method", method);
    knut_net_grpc_client_call *c = calloc(1, sizeof *c);
    if (!c)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    snprintf(c->method, sizeof c->method, "%s", method);
    c->max_receive = ch->max_receive;
    c->max_send = ch->max_send;
    grpc_metadata_array_init(&c->initial);
    grpc_metadata *gm = NULL;
    knut_status st = knut_net__grpc_md_out(md, &gm, err);
    if (st != KNUT_OK)
        goto cleanup;
    c->cq = grpc_completion_queue_create_for_pluck(NULL);
    grpc_slice m = grpc_slice_from_copied_string(method);
    c->call = grpc_channel_create_call(
        ch->ch, NULL, GRPC_PROPAGATE_DEFAULTS, c->cq, m, NULL,
        knut_net__grpc_deadline(timeout_ms > 0 ? timeout_ms : GRPC_DEFAULT_TIMEOUT_MS), NULL);
    grpc_slice_unref(m);
    if (!c->call) {
        st = knut_error_set(err, KNUT_ENOMEM, "%s: cannot start the call", method);
        goto cleanup;
    }
    grpc_op op;
    memset(&op, 0, sizeof op);
    op.op = GRPC_OP_SEND_INITIAL_METADATA;
    op.data.send_initial_metadata.count = gm ? md->count : 0;
    op.data.send_initial_metadata.metadata = gm;
    /* a failed send is no error here: the status says why (unavailable, ...) */
    if (!run(c, &op, 1))
        c->send_closed = 1;
cleanup:
    free(gm);
    if (st != KNUT_OK) {
        knut_net_grpc_client_call_free(c);
        return st;
    }
    *out = c;
    return KNUT_OK;
}

knut_status knut_net_grpc_client_call_write(knut_net_grpc_client_call *c, const void *data,
                                            size_t len, knut_error *err)
{
    KNUT_ASSERT_ARG(err, c && (data || len == 0));
    if (!c->max_send)
        return knut_error_set(err, KNUT_EINVAL, "%s: a call of channel_call sends no more",
                              c->method);
    if (len > c->max_send)
        return knut_error_set(err, KNUT_ETOOBIG, "%s: request of %zu bytes over the "
                                                 "%zu-byte cap", c->method, len, c->max_send);
    if (c->send_closed || c->finished)
        return knut_error_set(err, KNUT_ECANCELLED, "%s: the call is over for sending "
                                                    "(finish tells why)", c->method);
    grpc_byte_buffer *bb = knut_net__grpc_bb_new(data, len);
    if (!bb)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    grpc_op op;
    memset(&op, 0, sizeof op);
    op.op = GRPC_OP_SEND_MESSAGE;
    op.data.send_message.send_message = bb;
    int ok = run(c, &op, 1);
    grpc_byte_buffer_destroy(bb);
    if (!ok) {
        c->send_closed = 1;
        return knut_error_set(err, KNUT_ECANCELLED, "%s: the peer ended the call (finish "
                                                    "tells why)", c->method);
    }
    return KNUT_OK;
}

knut_status knut_net_grpc_client_call_close_send(knut_net_grpc_client_call *c, knut_error *err)
{
    KNUT_ASSERT_ARG(err, c);
    if (c->send_closed || c->finished)
        return KNUT_OK;
    c->send_closed = 1;
    grpc_op op;
    memset(&op, 0, sizeof op);
    op.op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
    (void)run(c, &op, 1); /* a call already over: the status tells */
    return KNUT_OK;
}

knut_status knut_net_grpc_client_call_read(knut_net_grpc_client_call *c, knut_buf *msg,
                                           knut_error *err)
{
    KNUT_ASSERT_ARG(err, c && msg);
    knut_buf_clear(msg);
    if (c->eof || c->finished)
        return knut_error_set(err, KNUT_EOF, "%s: no more response messages", c->method);
    grpc_byte_buffer *bb = NULL;
    grpc_op ops[2];
    size_t n = 0;
    memset(ops, 0, sizeof ops);
    if (!c->got_initial) {
        ops[n].op = GRPC_OP_RECV_INITIAL_METADATA;
        ops[n++].data.recv_initial_metadata.recv_initial_metadata = &c->initial;
        c->got_initial = 1;
    }
    ops[n].op = GRPC_OP_RECV_MESSAGE;
    ops[n++].data.recv_message.recv_message = &bb;
    if (!run(c, ops, n) || !bb) {
        grpc_byte_buffer_destroy(bb);
        c->eof = 1;
        return knut_error_set(err, KNUT_EOF, "%s: no more response messages", c->method);
    }
    knut_status st = knut_net__grpc_bb_read(bb, msg, err);
    grpc_byte_buffer_destroy(bb);
    if (st != KNUT_OK)
        knut_error_prefix(err, "%s: response: ", c->method);
    return st;
}

knut_status knut_net_grpc_client_call_finish(knut_net_grpc_client_call *c,
                                             knut_net_grpc_status *st, knut_error *err)
{
    KNUT_ASSERT_ARG(err, c);
    if (st)
        knut_net_grpc_status_reset(st);
    if (c->finished)
        return knut_error_set(err, KNUT_EINVAL, "%s: finished twice", c->method);
    knut_buf drop;
    knut_buf_init(&drop, c->max_receive);
    while (!c->eof && knut_net_grpc_client_call_read(c, &drop, NULL) != KNUT_EOF)
        ;
    knut_buf_reset(&drop);
    grpc_metadata_array trailers;
    grpc_metadata_array_init(&trailers);
    grpc_status_code code = GRPC_STATUS_UNKNOWN;
    grpc_slice details = grpc_empty_slice();
    const char *detail_err = NULL;
    grpc_op op;
    memset(&op, 0, sizeof op);
    op.op = GRPC_OP_RECV_STATUS_ON_CLIENT;
    op.data.recv_status_on_client.trailing_metadata = &trailers;
    op.data.recv_status_on_client.status = &code;
    op.data.recv_status_on_client.status_details = &details;
    op.data.recv_status_on_client.error_string = &detail_err;
    c->finished = 1;
    if (!run(c, &op, 1))
        code = GRPC_STATUS_UNKNOWN;
    char message[512];
    knut_net__grpc_slice_str(details, message, sizeof message);
    knut_status rc = knut_net_grpc_status_from_code(code);
    if (st) {
        st->code = (int)code;
        memcpy(st->message, message, sizeof st->message);
        knut_error merr = KNUT_ERROR_INIT;
        if (knut_net__grpc_md_in(&trailers, &st->trailers, &merr) != KNUT_OK)
            KNUT_LOG(KNUT_LOG_WARN, GRPC_LOG, "%s: trailers dropped: %s", c->method,
                     merr.message);
    }
    if (rc != KNUT_OK)
        knut_error_set(err, rc, "%s: %s%s%s", c->method, knut_net_grpc_code_name(code),
                       message[0] ? ": " : "", message);
    grpc_slice_unref(details);
    gpr_free((void *)detail_err);
    grpc_metadata_array_destroy(&trailers);
    return rc;
}

void knut_net_grpc_client_call_cancel(knut_net_grpc_client_call *c)
{
    /* grpc_call_cancel is thread-safe: the blocked pluck completes with
     * a failed batch, which read reports as the end of the stream. */
    if (c && c->call)
        grpc_call_cancel(c->call, NULL);
}

void knut_net_grpc_client_call_free(knut_net_grpc_client_call *c)
{
    if (!c)
        return;
    if (c->call) {
        if (!c->finished)
            grpc_call_cancel(c->call, NULL);
        grpc_call_unref(c->call);
    }
    grpc_metadata_array_destroy(&c->initial);
    if (c->cq) {
        grpc_completion_queue_shutdown(c->cq);
        grpc_completion_queue_destroy(c->cq);
    }
    free(c);
}

knut_status knut_net_grpc_channel_unary(knut_net_grpc_channel *ch, const char *method,
                                        const knut_net_grpc_metadata *md, int64_t timeout_ms,
                                        const void *req, size_t len, knut_buf *resp,
                                        knut_net_grpc_status *st, knut_error *err)
{
    KNUT_ASSERT_ARG(err, resp);
    knut_net_grpc_client_call *c = NULL;
    knut_buf_clear(resp);
    knut_status rc = knut_net_grpc_channel_call(ch, method, md, timeout_ms, req, len, &c, err);
    if (rc != KNUT_OK)
        return rc;
    knut_error rerr = KNUT_ERROR_INIT;
    knut_status read = knut_net_grpc_client_call_read(c, resp, &rerr);
    rc = knut_net_grpc_client_call_finish(c, st, err);
    if (rc == KNUT_OK && read != KNUT_OK && read != KNUT_EOF)
        rc = knut_error_set(err, read, "%s", rerr.message); /* over resp's cap */
    knut_net_grpc_client_call_free(c);
    return rc;
}
