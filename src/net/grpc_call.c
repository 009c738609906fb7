/*
 * The server's side of a call, as its handler uses it: read request
 * messages, write responses, finish with a status. Each operation is one
 * batch waited for on the call thread's own completion queue; the only
 * other completion that can arrive there is the call's close watch
 * (RECV_CLOSE_ON_SERVER), which tells a cancelled call.
 */
#include <stdlib.h>
#include <string.h>

#include "grpc_int.h"

/* Waits until tag completes; notes the close watch when it passes by.
 * Returns the batch's success. */
static int wait_for(knut_net_grpc_call *c, void *tag)
{
    for (;;) {
        grpc_event ev = grpc_completion_queue_next(c->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
        if (ev.type != GRPC_OP_COMPLETE)
            return 0;
        if (ev.tag == &c->tag_close)
            c->closed = 1;
        if (ev.tag == tag)
            return ev.success;
    }
}

static int start(knut_net_grpc_call *c, const grpc_op *ops, size_t n, void *tag)
{
    return grpc_call_start_batch(c->call, ops, n, tag, NULL) == GRPC_CALL_OK;
}

knut_status knut_net__grpc_call_begin(knut_net_grpc_call *c, knut_error *err)
{
    grpc_op op = {0};
    op.op = GRPC_OP_RECV_CLOSE_ON_SERVER;
    op.data.recv_close_on_server.cancelled = &c->cancelled;
    if (!start(c, &op, 1, &c->tag_close))
        return knut_error_set(err, KNUT_ERROR, "gRPC: cannot watch the call");
    return KNUT_OK;
}

const char *knut_net_grpc_call_method(const knut_net_grpc_call *c)
{
    return c ? c->method : "";
}

const knut_net_grpc_metadata *knut_net_grpc_call_metadata(const knut_net_grpc_call *c)
{
    return c ? &c->md : NULL;
}

int64_t knut_net_grpc_call_remaining_ms(const knut_net_grpc_call *c)
{
    return c ? knut_net__grpc_remaining_ms(c->deadline) : 0;
}

int knut_net_grpc_call_stopping(const knut_net_grpc_call *c)
{
    return !c || knut_net__grpc_server_stopping(c->srv);
}

int knut_net_grpc_call_cancelled(knut_net_grpc_call *c)
{
    if (!c)
        return 1;
    while (!c->closed) { /* take a close that already arrived, without waiting */
        grpc_event ev = grpc_completion_queue_next(c->cq, gpr_inf_past(GPR_CLOCK_REALTIME), NULL);
        if (ev.type != GRPC_OP_COMPLETE)
            break;
        if (ev.tag == &c->tag_close)
            c->closed = 1;
    }
    return (c->closed && c->cancelled) || knut_net__grpc_remaining_ms(c->deadline) == 0;
}

knut_status knut_net_grpc_call_read(knut_net_grpc_call *c, knut_buf *msg, knut_error *err)
{
    KNUT_ASSERT_ARG(err, c && msg);
    knut_buf_clear(msg);
    grpc_byte_buffer *bb = NULL;
    grpc_op op = {0};
    op.op = GRPC_OP_RECV_MESSAGE;
    op.data.recv_message.recv_message = &bb;
    if (c->finished || !start(c, &op, 1, &c->tag_op) || !wait_for(c, &c->tag_op)) {
        grpc_byte_buffer_destroy(bb);
        return knut_error_set(err, KNUT_ECANCELLED, "%s: the call is over", c->method);
    }
    if (!bb)
        return knut_error_set(err, KNUT_EOF, "%s: no more request messages", c->method);
    knut_status st = knut_net__grpc_bb_read(bb, msg, err);
    grpc_byte_buffer_destroy(bb);
    if (st != KNUT_OK)
        knut_error_prefix(err, "%s: request: ", c->method);
    return st;
}

/* ops[0] becomes the initial metadata when it is not sent yet; returns
 * where the caller's next op goes. *md gets the array the op points to
 * (the caller frees it once the batch is over). */
static size_t initial(knut_net_grpc_call *c, grpc_op *ops, grpc_metadata **md)
{
    *md = NULL;
    if (c->sent_initial)
        return 0;
    memset(&ops[0], 0, sizeof ops[0]);
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    knut_error e = KNUT_ERROR_INIT;
    if (knut_net__grpc_md_out(&c->headers, md, &e) == KNUT_OK && *md) {
        ops[0].data.send_initial_metadata.count = c->headers.count;
        ops[0].data.send_initial_metadata.metadata = *md;
    } /* out of memory for the array: the headers are left out, the call goes on */
    c->sent_initial = 1;
    return 1;
}

knut_status knut_net_grpc_call_add_header(knut_net_grpc_call *c, const char *key,
                                          const void *value, size_t len, knut_error *err)
{
    KNUT_ASSERT_ARG(err, c && key);
    if (c->sent_initial)
        return knut_error_set(err, KNUT_EINVAL, "%s: the response headers are sent already",
                              c->method);
    return knut_net_grpc_metadata_add(&c->headers, key, value, len, err);
}

knut_status knut_net_grpc_call_send_headers(knut_net_grpc_call *c, knut_error *err)
{
    KNUT_ASSERT_ARG(err, c);
    if (c->sent_initial || c->finished)
        return knut_error_set(err, KNUT_EINVAL, "%s: the response headers are sent already",
                              c->method);
    grpc_op ops[1];
    grpc_metadata *md;
    initial(c, ops, &md);
    int ok = start(c, ops, 1, &c->tag_op) && wait_for(c, &c->tag_op);
    free(md);
    if (!ok)
        return knut_error_set(err, KNUT_ECANCELLED, "%s: the call was cancelled", c->method);
    return KNUT_OK;
}

int knut_net_grpc_call_peer_subject(const knut_net_grpc_call *c, char *buf, size_t n)
{
    if (n)
        buf[0] = 0;
    if (!c || !c->call || n == 0)
        return 0;
    grpc_auth_context *ctx = grpc_call_auth_context(c->call);
    if (!ctx)
        return 0;
    int got = 0;
    /* only a certificate the TLS handshake verified: an insecure or TLS-only
     * connection has no authenticated peer */
    if (grpc_auth_context_peer_is_authenticated(ctx)) {
        grpc_auth_property_iterator it =
            grpc_auth_context_find_properties_by_name(ctx, GRPC_X509_SUBJECT_PROPERTY_NAME);
        const grpc_auth_property *p = grpc_auth_property_iterator_next(&it);
        if (p && p->value && p->value_length > 0 && p->value_length < n &&
            !memchr(p->value, 0, p->value_length)) {
            memcpy(buf, p->value, p->value_length);
            buf[p->value_length] = 0;
            got = 1;
        }
    }
    grpc_auth_context_release(ctx);
    return got;
}

/* Sends bb (consumed) as the next response message. */
static knut_status write_bb(knut_net_grpc_call *c, grpc_byte_buffer *bb, knut_error *err)
{
    grpc_op ops[2];
    grpc_metadata *md;
    size_t n = initial(c, ops, &md);
    memset(&ops[n], 0, sizeof ops[n]);
    ops[n].op = GRPC_OP_SEND_MESSAGE;
    ops[n].data.send_message.send_message = bb;
    int ok = start(c, ops, n + 1, &c->tag_op) && wait_for(c, &c->tag_op);
    free(md);
    grpc_byte_buffer_destroy(bb);
    if (!ok)
        return knut_error_set(err, KNUT_ECANCELLED, "%s: the call was cancelled", c->method);
    return KNUT_OK;
}

static knut_status write_check(knut_net_grpc_call *c, size_t len, knut_error *err)
{
    if (c->finished)
        return knut_error_set(err, KNUT_EINVAL, "%s: write after finish", c->method);
    if (len > c->max_send)
        return knut_error_set(err, KNUT_ETOOBIG, "%s: response of %zu bytes over the %zu-byte "
                                                 "cap", c->method, len, c->max_send);
    return KNUT_OK;
}

knut_status knut_net_grpc_call_write(knut_net_grpc_call *c, const void *data, size_t len,
                                     knut_error *err)
{
    KNUT_ASSERT_ARG(err, c && (data || len == 0));
    knut_status st = write_check(c, len, err);
    if (st != KNUT_OK)
        return st;
    grpc_byte_buffer *bb = knut_net__grpc_bb_new(data, len);
    if (!bb)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    st = write_bb(c, bb, err);
    if (st == KNUT_OK)
        c->bytes_sent += len;
    return st;
}

/* The slice's destructor gets one user-data pointer: a small cell with the
 * caller's data and free function, one per message. */
typedef struct owned {
    void *data;
    knut_net_grpc_free_fn free_fn;
} owned;

static void owned_destroy(void *p)
{
    owned *o = p;
    o->free_fn(o->data);
    free(o);
}

knut_status knut_net_grpc_call_write_owned(knut_net_grpc_call *c, void *data, size_t len,
                                           knut_net_grpc_free_fn free_fn, knut_error *err)
{
    KNUT_ASSERT_ARG(err, c && free_fn && (data || len == 0));
    knut_status st = write_check(c, len, err);
    owned *o = st == KNUT_OK ? malloc(sizeof *o) : NULL;
    if (!o) {
        free_fn(data);
        return st != KNUT_OK ? st : knut_error_set(err, KNUT_ENOMEM, "out of memory");
    }
    o->data = data;
    o->free_fn = free_fn;
    grpc_slice s = grpc_slice_new_with_user_data(data, len, owned_destroy, o);
    grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(&s, 1);
    grpc_slice_unref(s); /* the byte buffer holds its own reference */
    if (!bb)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    st = write_bb(c, bb, err);
    if (st == KNUT_OK)
        c->bytes_sent += len;
    return st;
}

uint64_t knut_net_grpc_call_bytes_sent(const knut_net_grpc_call *c)
{
    return c ? c->bytes_sent : 0;
}

knut_status knut_net_grpc_call_finish(knut_net_grpc_call *c, int code, const char *message,
                                      const knut_net_grpc_metadata *trailers, knut_error *err)
{
    KNUT_ASSERT_ARG(err, c);
    if (c->finished)
        return knut_error_set(err, KNUT_EINVAL, "%s: finished twice", c->method);
    grpc_metadata *tm = NULL;
    knut_status st = knut_net__grpc_md_out(trailers, &tm, err);
    if (st != KNUT_OK)
        return st;
    c->finished = 1;
    grpc_slice details = grpc_slice_from_copied_string(message ? message : "");
    grpc_op ops[2];
    grpc_metadata *md;
    size_t n = initial(c, ops, &md);
    memset(&ops[n], 0, sizeof ops[n]);
    ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
    ops[n].data.send_status_from_server.status = (grpc_status_code)code;
    ops[n].data.send_status_from_server.status_details = &details;
    ops[n].data.send_status_from_server.trailing_metadata = tm;
    ops[n].data.send_status_from_server.trailing_metadata_count = tm ? trailers->count : 0;
    int ok = start(c, ops, n + 1, &c->tag_op) && wait_for(c, &c->tag_op);
    grpc_slice_unref(details);
    free(tm);
    free(md);
    if (!ok)
        return knut_error_set(err, KNUT_ECANCELLED, "%s: the call was cancelled", c->method);
    return KNUT_OK;
}

void knut_net__grpc_call_end(knut_net_grpc_call *c, knut_status st, const knut_error *err)
{
    if (!c->finished) {
        knut_error ferr = KNUT_ERROR_INIT;
        const char *msg = st == KNUT_OK ? NULL : err && err->message[0] ? err->message
                                                                         : knut_strerror(st);
        if (st != KNUT_OK)
            KNUT_LOG(KNUT_LOG_DEBUG, GRPC_LOG, "%s: %s", c->method, msg);
        knut_net_grpc_call_finish(c, knut_net_grpc_code_from_status(st), msg, NULL, &ferr);
    }
    if (!c->closed)
        wait_for(c, &c->tag_close); /* nothing may complete on the queue after this */
    grpc_call_unref(c->call);
    knut_net_grpc_metadata_reset(&c->md);
    knut_net_grpc_metadata_reset(&c->headers);
}
