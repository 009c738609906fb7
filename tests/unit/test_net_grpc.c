/*
 * The gRPC layer without a network peer of another kind: the status
 * mapping (one check per table row, both ways), metadata helpers, deadline
 * helpers, and a knut channel calling a knut server in-process on
 * 127.0.0.1 (the grpcio peer is in tests/integration/test_net_grpc.py).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "knut/net.h"
#include "net/grpc_int.h"

#define S2C(st, code) assert_int_equal(knut_net_grpc_code_from_status(st), KNUT_NET_GRPC_##code)
#define C2S(code, st) assert_int_equal(knut_net_grpc_status_from_code(KNUT_NET_GRPC_##code), st)

static void test_status_to_code(void **state)
{
    (void)state;
    S2C(KNUT_OK, OK);
    S2C(KNUT_ERROR, UNKNOWN);
    S2C(KNUT_EINVAL, INVALID_ARGUMENT);
    S2C(KNUT_ENOTFOUND, NOT_FOUND);
    S2C(KNUT_ENOMEM, RESOURCE_EXHAUSTED);
    S2C(KNUT_ETOOBIG, RESOURCE_EXHAUSTED);
    S2C(KNUT_EIO, INTERNAL);
    S2C(KNUT_EPARSE, INVALID_ARGUMENT);
    S2C(KNUT_EUNSUPPORTED, UNIMPLEMENTED);
    S2C(KNUT_EAGAIN, UNAVAILABLE);
    S2C(KNUT_EPEER, UNAVAILABLE);
    S2C(KNUT_ECANCELLED, CANCELLED);
    S2C(KNUT_EOF, OUT_OF_RANGE);
    S2C((knut_status)-99, UNKNOWN);
}

static void test_code_to_status(void **state)
{
    (void)state;
    C2S(OK, KNUT_OK);
    C2S(CANCELLED, KNUT_ECANCELLED);
    C2S(UNKNOWN, KNUT_EPEER);
    C2S(INVALID_ARGUMENT, KNUT_EINVAL);
    C2S(DEADLINE_EXCEEDED, KNUT_EAGAIN);
    C2S(NOT_FOUND, KNUT_ENOTFOUND);
    C2S(ALREADY_EXISTS, KNUT_EINVAL);
    C2S(PERMISSION_DENIED, KNUT_EPEER);
    C2S(RESOURCE_EXHAUSTED, KNUT_ETOOBIG);
    C2S(FAILED_PRECONDITION, KNUT_EINVAL);
    C2S(ABORTED, KNUT_EAGAIN);
    C2S(OUT_OF_RANGE, KNUT_EOF);
    C2S(UNIMPLEMENTED, KNUT_EUNSUPPORTED);
    C2S(INTERNAL, KNUT_EPEER);
    C2S(UNAVAILABLE, KNUT_EAGAIN);
    C2S(DATA_LOSS, KNUT_EIO);
    C2S(UNAUTHENTICATED, KNUT_EPEER);
    assert_int_equal(knut_net_grpc_status_from_code(17), KNUT_EPEER);
    assert_int_equal(knut_net_grpc_status_from_code(-1), KNUT_EPEER);
    assert_string_equal(knut_net_grpc_code_name(4), "DEADLINE_EXCEEDED");
    assert_string_equal(knut_net_grpc_code_name(16), "UNAUTHENTICATED");
    assert_string_equal(knut_net_grpc_code_name(99), "UNKNOWN_CODE");
}

static void test_metadata(void **state)
{
    (void)state;
    knut_net_grpc_metadata md = KNUT_NET_GRPC_METADATA_INIT;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_net_grpc_metadata_add(&md, "Authorization", "Bearer x", 8, &err),
                     KNUT_OK);
    assert_int_equal(knut_net_grpc_metadata_add(&md, "trace-bin", "\x00\x01", 2, &err), KNUT_OK);
    assert_string_equal(md.items[0].key, "authorization"); /* lowered for the wire */
    const knut_net_grpc_header *h = knut_net_grpc_metadata_find(&md, "AUTHORIZATION");
    assert_non_null(h);
    assert_string_equal(h->value, "Bearer x");
    assert_int_equal(knut_net_grpc_metadata_find(&md, "trace-bin")->len, 2);
    assert_null(knut_net_grpc_metadata_find(&md, "missing"));
    assert_true(knut_net_grpc_key_is_binary("trace-bin"));
    assert_true(knut_net_grpc_key_is_binary("X-BIN"));
    assert_false(knut_net_grpc_key_is_binary("bin"));
    assert_false(knut_net_grpc_key_is_binary("authorization"));
    /* a text value with a control byte; the value is not quoted (a secret) */
    assert_int_equal(knut_net_grpc_metadata_add(&md, "x-t", "s3cret\n", 7, &err), KNUT_EINVAL);
    assert_null(strstr(err.message, "s3cret"));
    assert_int_equal(knut_net_grpc_metadata_add(&md, "bad key", "v", 1, &err), KNUT_EINVAL);
    assert_int_equal(knut_net_grpc_metadata_add(&md, "", "v", 1, &err), KNUT_EINVAL);
    static char big[KNUT_NET_GRPC_MAX_METADATA];
    memset(big, 'a', sizeof big);
    assert_int_equal(knut_net_grpc_metadata_add(&md, "x-big", big, sizeof big, &err),
                     KNUT_ETOOBIG);
    for (int i = 2; i < KNUT_NET_GRPC_MAX_HEADERS; i++)
        assert_int_equal(knut_net_grpc_metadata_add(&md, "x-n", "1", 1, &err), KNUT_OK);
    assert_int_equal(knut_net_grpc_metadata_add(&md, "x-n", "1", 1, &err), KNUT_ETOOBIG);
    knut_net_grpc_metadata_reset(&md);
    assert_int_equal(md.count, 0);
    knut_net_grpc_metadata_reset(&md); /* twice is fine */
}

static void test_deadline(void **state)
{
    (void)state;
    int64_t ms = knut_net__grpc_remaining_ms(knut_net__grpc_deadline(5000));
    assert_true(ms > 4000 && ms <= 5000);
    assert_int_equal(knut_net__grpc_remaining_ms(knut_net__grpc_deadline(-1)), INT64_MAX);
    assert_int_equal(knut_net__grpc_remaining_ms(gpr_inf_past(GPR_CLOCK_MONOTONIC)), 0);
    gpr_timespec rt = gpr_time_add(gpr_now(GPR_CLOCK_REALTIME), gpr_time_from_millis(3000, GPR_TIMESPAN));
    ms = knut_net__grpc_remaining_ms(rt);
    assert_true(ms > 2000 && ms <= 3000);
}

static knut_status echo_upper(void *ctx, knut_net_grpc_call *c, knut_error *err)
{
    knut_buf req = KNUT_BUF_INIT;
    knut_status st = knut_net_grpc_call_read(c, &req, err);
    for (size_t i = 0; st == KNUT_OK && i < req.len; i++)
        if (req.data[i] >= 'a' && req.data[i] <= 'z')
            req.data[i] = (char)(req.data[i] - 32);
    if (st == KNUT_OK)
        st = knut_net_grpc_call_write(c, req.data, req.len, err);
    if (st == KNUT_OK && knut_net_grpc_call_read(c, &req, err) != KNUT_EOF)
        st = knut_error_set(err, KNUT_EINVAL, "a second request message");
    knut_buf_reset(&req);
    return st;
}

static atomic_int owned_frees;

static void owned_free(void *p)
{
    free(p);
    atomic_fetch_add(&owned_frees, 1);
}

/* Answers with two messages handed over without a copy. */
static knut_status owned_twice(void *ctx, knut_net_grpc_call *c, knut_error *err)
{
    knut_buf req = KNUT_BUF_INIT;
    knut_status st = knut_net_grpc_call_read(c, &req, err);
    knut_buf_reset(&req);
    for (int i = 0; st == KNUT_OK && i < 2; i++) {
        char *p = malloc(6);
        memcpy(p, i ? "world" : "hello", 6);
        st = knut_net_grpc_call_write_owned(c, p, 5, owned_free, err);
    }
    return st;
}

static void test_write_owned(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    knut_net_grpc_server *s = NULL;
    assert_int_equal(knut_net_grpc_server_new(&s, NULL, &err), KNUT_OK);
    assert_int_equal(knut_net_grpc_server_add_method(s, "/t.S/Owned", owned_twice, NULL, &err),
                     KNUT_OK);
    assert_int_equal(knut_net_grpc_server_start(s, &err), KNUT_OK);
    char target[64];
    snprintf(target, sizeof target, "127.0.0.1:%d", knut_net_grpc_server_port(s));
    knut_net_grpc_channel *ch = NULL;
    assert_int_equal(knut_net_grpc_channel_new(&ch, target, NULL, &err), KNUT_OK);
    knut_net_grpc_client_call *cc = NULL;
    assert_int_equal(knut_net_grpc_channel_call(ch, "/t.S/Owned", NULL, 5000, "x", 1, &cc, &err),
                     KNUT_OK);
    knut_buf msg = KNUT_BUF_INIT;
    assert_int_equal(knut_net_grpc_client_call_read(cc, &msg, &err), KNUT_OK);
    assert_int_equal(msg.len, 5);
    assert_memory_equal(msg.data, "hello", 5);
    assert_int_equal(knut_net_grpc_client_call_read(cc, &msg, &err), KNUT_OK);
    assert_memory_equal(msg.data, "world", 5);
    assert_int_equal(knut_net_grpc_client_call_read(cc, &msg, &err), KNUT_EOF);
    assert_int_equal(knut_net_grpc_client_call_finish(cc, NULL, &err), KNUT_OK);
    knut_net_grpc_client_call_free(cc);
    knut_buf_reset(&msg);
    knut_net_grpc_channel_free(ch);
    knut_net_grpc_server_free(s);
    /* every message handed over was freed exactly once */
    assert_int_equal(atomic_load(&owned_frees), 2);
}

/* A stream that writes one message and then waits until the client goes. */
static knut_status wait_cancel(void *ctx, knut_net_grpc_call *c, knut_error *err)
{
    (void)ctx;
    knut_buf req = KNUT_BUF_INIT;
    knut_status st = knut_net_grpc_call_read(c, &req, err);
    knut_buf_reset(&req);
    if (st != KNUT_OK)
        return st;
    st = knut_net_grpc_call_write(c, "first", 5, err);
    while (st == KNUT_OK && !knut_net_grpc_call_cancelled(c) && !knut_net_grpc_call_stopping(c))
        usleep(10000);
    return st;
}

static void *cancel_later(void *arg)
{
    usleep(100000);
    knut_net_grpc_client_call_cancel(arg);
    return NULL;
}

/* No deadline, then a cancel from another thread: the blocked read ends. */
static void test_cancel_no_deadline(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    knut_net_grpc_server *s = NULL;
    assert_int_equal(knut_net_grpc_server_new(&s, NULL, &err), KNUT_OK);
    assert_int_equal(knut_net_grpc_server_add_method(s, "/t.S/Wait", wait_cancel, NULL, &err),
                     KNUT_OK);
    assert_int_equal(knut_net_grpc_server_start(s, &err), KNUT_OK);
    char target[64];
    snprintf(target, sizeof target, "127.0.0.1:%d", knut_net_grpc_server_port(s));
    knut_net_grpc_channel *ch = NULL;
    assert_int_equal(knut_net_grpc_channel_new(&ch, target, NULL, &err), KNUT_OK);
    knut_net_grpc_client_call *cc = NULL;
    assert_int_equal(knut_net_grpc_channel_call(ch, "/t.S/Wait", NULL, KNUT_NET_GRPC_NO_DEADLINE,
                                                "x", 1, &cc, &err),
                     KNUT_OK);
    knut_buf msg = KNUT_BUF_INIT;
    assert_int_equal(knut_net_grpc_client_call_read(cc, &msg, &err), KNUT_OK);
    assert_memory_equal(msg.data, "first", 5);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, cancel_later, cc), 0);
    assert_int_equal(knut_net_grpc_client_call_read(cc, &msg, &err), KNUT_EOF);
    pthread_join(t, NULL);
    knut_net_grpc_status gst = KNUT_NET_GRPC_STATUS_INIT;
    assert_int_not_equal(knut_net_grpc_client_call_finish(cc, &gst, &err), KNUT_OK);
    assert_int_equal(gst.code, KNUT_NET_GRPC_CANCELLED);
    knut_net_grpc_client_call_cancel(cc); /* idempotent after the end */
    knut_net_grpc_status_reset(&gst);
    knut_net_grpc_client_call_free(cc);
    knut_buf_reset(&msg);
    knut_net_grpc_channel_free(ch);
    knut_net_grpc_server_free(s);
}

/* Reads every request to the end, answers their concatenation. */
static knut_status concat(void *ctx, knut_net_grpc_call *c, knut_error *err)
{
    knut_buf req = KNUT_BUF_INIT, all = KNUT_BUF_INIT;
    knut_status st;
    while ((st = knut_net_grpc_call_read(c, &req, err)) == KNUT_OK)
        knut_buf_append(&all, req.data, req.len);
    if (st == KNUT_EOF)
        st = knut_net_grpc_call_write(c, all.data ? all.data : "", all.len, err);
    knut_buf_reset(&req);
    knut_buf_reset(&all);
    return st;
}

static void test_client_stream(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    knut_net_grpc_server *s = NULL;
    assert_int_equal(knut_net_grpc_server_new(&s, NULL, &err), KNUT_OK);
    assert_int_equal(knut_net_grpc_server_add_method(s, "/t.S/Cat", concat, NULL, &err), KNUT_OK);
    assert_int_equal(knut_net_grpc_server_start(s, &err), KNUT_OK);
    char target[64];
    snprintf(target, sizeof target, "127.0.0.1:%d", knut_net_grpc_server_port(s));
    knut_net_grpc_channel_options co = KNUT_NET_GRPC_CHANNEL_OPTIONS_INIT;
    co.max_send = 16;
    knut_net_grpc_channel *ch = NULL;
    assert_int_equal(knut_net_grpc_channel_new(&ch, target, &co, &err), KNUT_OK);
    knut_net_grpc_client_call *cc = NULL;
    assert_int_equal(knut_net_grpc_channel_open(ch, "/t.S/Cat", NULL, 5000, &cc, &err), KNUT_OK);
    assert_int_equal(knut_net_grpc_client_call_write(cc, "ab", 2, &err), KNUT_OK);
    assert_int_equal(knut_net_grpc_client_call_write(cc, "", 0, &err), KNUT_OK);
    assert_int_equal(knut_net_grpc_client_call_write(cc, "cdef", 4, &err), KNUT_OK);
    char big[17] = {0};
    assert_int_equal(knut_net_grpc_client_call_write(cc, big, sizeof big, &err), KNUT_ETOOBIG);
    assert_int_equal(knut_net_grpc_client_call_close_send(cc, &err), KNUT_OK);
    assert_int_equal(knut_net_grpc_client_call_close_send(cc, &err), KNUT_OK); /* idempotent */
    assert_int_equal(knut_net_grpc_client_call_write(cc, "x", 1, &err), KNUT_ECANCELLED);
    knut_buf msg = KNUT_BUF_INIT;
    assert_int_equal(knut_net_grpc_client_call_read(cc, &msg, &err), KNUT_OK);
    assert_int_equal(msg.len, 6);
    assert_memory_equal(msg.data, "abcdef", 6);
    assert_int_equal(knut_net_grpc_client_call_read(cc, &msg, &err), KNUT_EOF);
    assert_int_equal(knut_net_grpc_client_call_finish(cc, NULL, &err), KNUT_OK);
    knut_net_grpc_client_call_free(cc);
    /* a call of channel_call sent its one message: no more writes */
    assert_int_equal(knut_net_grpc_channel_call(ch, "/t.S/Cat", NULL, 5000, "z", 1, &cc, &err),
                     KNUT_OK);
    assert_int_equal(knut_net_grpc_client_call_write(cc, "x", 1, &err), KNUT_EINVAL);
    assert_int_equal(knut_net_grpc_client_call_read(cc, &msg, &err), KNUT_OK);
    assert_memory_equal(msg.data, "z", 1);
    assert_int_equal(knut_net_grpc_client_call_finish(cc, NULL, &err), KNUT_OK);
    knut_net_grpc_client_call_free(cc);
    /* an opened call freed unfinished is cancelled, not leaked */
    assert_int_equal(knut_net_grpc_channel_open(ch, "/t.S/Cat", NULL, 5000, &cc, &err), KNUT_OK);
    assert_int_equal(knut_net_grpc_client_call_write(cc, "q", 1, &err), KNUT_OK);
    knut_net_grpc_client_call_free(cc);
    knut_buf_reset(&msg);
    knut_net_grpc_channel_free(ch);
    knut_net_grpc_server_free(s);
}

static void test_in_process(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    knut_net_grpc_server *s = NULL;
    knut_net_grpc_server_options o = KNUT_NET_GRPC_SERVER_OPTIONS_INIT;
    o.max_receive = 64;
    assert_int_equal(knut_net_grpc_server_new(&s, &o, &err), KNUT_OK);
    assert_int_equal(knut_net_grpc_server_add_method(s, "no-slash", echo_upper, NULL, &err),
                     KNUT_EINVAL);
    assert_int_equal(knut_net_grpc_server_add_method(s, "/t.S/Up", echo_upper, NULL, &err),
                     KNUT_OK);
    assert_int_equal(knut_net_grpc_server_add_method(s, "/t.S/Up", echo_upper, NULL, &err),
                     KNUT_EINVAL);
    assert_int_equal(knut_net_grpc_server_start(s, &err), KNUT_OK);
    assert_true(knut_net_grpc_server_port(s) > 0);

    char target[64];
    snprintf(target, sizeof target, "127.0.0.1:%d", knut_net_grpc_server_port(s));
    knut_net_grpc_channel *ch = NULL;
    assert_int_equal(knut_net_grpc_channel_new(&ch, target, NULL, &err), KNUT_OK);
    knut_buf resp = KNUT_BUF_INIT;
    knut_net_grpc_status st = KNUT_NET_GRPC_STATUS_INIT;
    assert_int_equal(knut_net_grpc_channel_unary(ch, "/t.S/Up", NULL, 5000, "abc", 3, &resp, &st,
                                                 &err),
                     KNUT_OK);
    assert_int_equal(st.code, KNUT_NET_GRPC_OK);
    assert_int_equal(resp.len, 3);
    assert_memory_equal(resp.data, "ABC", 3);
    /* over the server's receive cap */
    char big[100] = {0};
    assert_int_equal(knut_net_grpc_channel_unary(ch, "/t.S/Up", NULL, 5000, big, sizeof big,
                                                 &resp, &st, &err),
                     KNUT_ETOOBIG);
    assert_int_equal(st.code, KNUT_NET_GRPC_RESOURCE_EXHAUSTED);
    assert_non_null(strstr(err.message, "/t.S/Up: RESOURCE_EXHAUSTED"));
    assert_int_equal(knut_net_grpc_channel_unary(ch, "/t.S/Nope", NULL, 5000, "x", 1, &resp, &st,
                                                 &err),
                     KNUT_EUNSUPPORTED);
    assert_int_equal(st.code, KNUT_NET_GRPC_UNIMPLEMENTED);
    /* the reply over the caller's buffer cap */
    knut_buf small;
    knut_buf_init(&small, 2);
    assert_int_equal(knut_net_grpc_channel_unary(ch, "/t.S/Up", NULL, 5000, "abc", 3, &small,
                                                 &st, &err),
                     KNUT_ETOOBIG);
    knut_buf_reset(&small);
    knut_net_grpc_status_reset(&st);
    knut_buf_reset(&resp);
    knut_net_grpc_channel_free(ch);
    knut_net_grpc_server_shutdown(s, 1000);
    knut_net_grpc_server_shutdown(s, 1000); /* idempotent */
    knut_net_grpc_server_free(s);

    /* nothing listens there any more: UNAVAILABLE, as EAGAIN */
    assert_int_equal(knut_net_grpc_channel_new(&ch, target, NULL, &err), KNUT_OK);
    assert_int_equal(knut_net_grpc_channel_unary(ch, "/t.S/Up", NULL, 2000, "a", 1, &resp, &st,
                                                 &err),
                     KNUT_EAGAIN);
    assert_int_equal(st.code, KNUT_NET_GRPC_UNAVAILABLE);
    knut_net_grpc_status_reset(&st);
    knut_buf_reset(&resp);
    knut_net_grpc_channel_free(ch);
}

static void test_bad_options(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    knut_net_grpc_server *s = NULL;
    knut_net_grpc_server_options o = KNUT_NET_GRPC_SERVER_OPTIONS_INIT;
    o.version = 99;
    assert_int_equal(knut_net_grpc_server_new(&s, &o, &err), KNUT_EINVAL);
    o.version = KNUT_NET_GRPC_SERVER_OPTIONS_VERSION;
    knut_net_grpc_tls tls = {"/nonexistent/cert.pem", "/nonexistent/key.pem", NULL, NULL};
    o.tls = &tls;
    assert_int_equal(knut_net_grpc_server_new(&s, &o, &err), KNUT_EIO);
    assert_non_null(strstr(err.message, "/nonexistent/cert.pem"));
    tls.key_file = NULL;
    assert_int_equal(knut_net_grpc_server_new(&s, &o, &err), KNUT_EINVAL);
    o.tls = NULL;
    o.addr = "192.0.2.1:0"; /* TEST-NET: no address of this machine; binding sends nothing */
    assert_int_equal(knut_net_grpc_server_new(&s, &o, &err), KNUT_EIO);
    assert_null(s);
}

static knut_status never_called(void *ctx, knut_net_grpc_call *call, knut_error *err)
{
    (void)ctx;
    (void)call;
    return knut_error_set(err, KNUT_ERROR, "never called");
}

/* A server bound but never started is freed (or shut down, then freed)
 * cleanly: gRPC asserts when one holding a bound port is destroyed without
 * a shutdown. Its port is released: binding it again works. */
static void test_free_without_start(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    knut_net_grpc_server *s = NULL;
    assert_int_equal(knut_net_grpc_server_new(&s, NULL, &err), KNUT_OK);
    assert_int_equal(knut_net_grpc_server_add_method(s, "/t.S/M", never_called, NULL, &err),
                     KNUT_OK);
    int port = knut_net_grpc_server_port(s);
    assert_true(port > 0);
    knut_net_grpc_server_free(s);

    char addr[32];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", port);
    knut_net_grpc_server_options o = KNUT_NET_GRPC_SERVER_OPTIONS_INIT;
    o.addr = addr;
    assert_int_equal(knut_net_grpc_server_new(&s, &o, &err), KNUT_OK);
    assert_int_equal(knut_net_grpc_server_port(s), port);
    knut_net_grpc_server_shutdown(s, 100);
    knut_net_grpc_server_shutdown(s, 100); /* idempotent */
    assert_int_equal(knut_net_grpc_server_start(s, &err), KNUT_EINVAL);
    assert_non_null(strstr(err.message, "shut down"));
    knut_net_grpc_server_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_to_code), cmocka_unit_test(test_code_to_status),
        cmocka_unit_test(test_metadata),       cmocka_unit_test(test_deadline),
        cmocka_unit_test(test_in_process),     cmocka_unit_test(test_write_owned),
        cmocka_unit_test(test_cancel_no_deadline), cmocka_unit_test(test_client_stream),
        cmocka_unit_test(test_bad_options), cmocka_unit_test(test_free_without_start),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
