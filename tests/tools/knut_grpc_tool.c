/*
 * Test helper for the gRPC transport (src/net/grpc_*.c), driven by
 * tests/integration/test_net_grpc.py against Python grpcio.
 *
 *   knut_grpc_tool serve [TLS] [--max-receive N] [--threads N] [--grace-ms MS]
 *       An echo server on 127.0.0.1 (a free port, printed as "port N").
 *       SIGTERM/SIGINT: graceful shutdown, "stopped" and exit 0.
 *   knut_grpc_tool call TARGET METHOD [TLS] [--data TEXT] [--md KEY=VALUE]...
 *                  [--timeout-ms MS] [--max-receive N] [--stream]
 *       One call; prints "message N TEXT" per response, then
 *       "status CODE MESSAGE", "trailer KEY=VALUE" lines and "knut STATUS".
 *   TLS: --cert F --key F [--ca F] [--server-name NAME]
 *
 * Methods of the server (service knut.test.Echo):
 *   Echo      the request back
 *   Stream    x-count (default 3) messages "I:REQUEST"
 *   Auth      the request back when authorization is "Bearer s3cret",
 *             else UNAUTHENTICATED
 *   Metadata  "KEY=VALUE\n" per request header (-bin values in hex); the
 *             trailers x-trailer: yes and x-raw-bin: 00 ff
 *   Slow      the request back after x-delay-ms (default 2000), unless the
 *             call is cancelled first
 *   Endless   "tick N" every 50 ms until the server stops (then OK)
 *   Fail      NOT_FOUND through a handler that returns KNUT_ENOTFOUND
 *   Bidi      bidirectional: "N:MSG" for each request as it comes, then
 *             "total:N" once the client closes its side
 * Exit: 0 ok (call: the call's status was OK), 1 error, 2 usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "knut/net.h"

static int usage(void)
{
    fprintf(stderr, "usage: knut_grpc_tool serve [--cert F --key F [--ca F]] [--max-receive N] "
                    "[--threads N] [--grace-ms MS]\n"
                    "       knut_grpc_tool call TARGET METHOD [--cert F --key F] [--ca F] "
                    "[--server-name N] [--data TEXT] [--md K=V]... [--timeout-ms MS] "
                    "[--max-receive N] [--stream]\n");
    return 2;
}

static knut_status echo(void *ctx, knut_net_grpc_call *c, knut_error *err)
{
    knut_buf req = KNUT_BUF_INIT;
    knut_status st = knut_net_grpc_call_read(c, &req, err);
    if (st == KNUT_OK)
        st = knut_net_grpc_call_write(c, req.data ? req.data : "", req.len, err);
    knut_buf_reset(&req);
    return st;
}

static long md_long(knut_net_grpc_call *c, const char *key, long def)
{
    const knut_net_grpc_header *h = knut_net_grpc_metadata_find(knut_net_grpc_call_metadata(c), key);
    return h ? strtol(h->value, NULL, 10) : def;
}

static knut_status stream(void *ctx, knut_net_grpc_call *c, knut_error *err)
{
    knut_buf req = KNUT_BUF_INIT, msg = KNUT_BUF_INIT;
    knut_status st = knut_net_grpc_call_read(c, &req, err);
    long n = md_long(c, "x-count", 3);
    for (long i = 0; st == KNUT_OK && i < n; i++) {
        knut_buf_clear(&msg);
        knut_buf_printf(&msg, "%ld:%s", i, req.data ? req.data : "");
        st = knut_net_grpc_call_write(c, msg.data, msg.len, err);
    }
    knut_buf_reset(&req);
    knut_buf_reset(&msg);
    return st;
}

/* Bidirectional: answers each request message as it comes ("n:msg"), then
 * one "total:N" after the client closes its side (the shape of Flight's
 * Handshake and DoPut). */
static knut_status bidi(void *ctx, knut_net_grpc_call *c, knut_error *err)
{
    knut_buf req = KNUT_BUF_INIT, msg = KNUT_BUF_INIT;
    knut_status st;
    long n = 0;
    while ((st = knut_net_grpc_call_read(c, &req, err)) == KNUT_OK) {
        knut_buf_clear(&msg);
        knut_buf_printf(&msg, "%ld:%.*s", n++, (int)req.len, req.data ? req.data : "");
        if ((st = knut_net_grpc_call_write(c, msg.data, msg.len, err)) != KNUT_OK)
            break;
    }
    if (st == KNUT_EOF) {
        knut_buf_clear(&msg);
        knut_buf_printf(&msg, "total:%ld", n);
        st = knut_net_grpc_call_write(c, msg.data, msg.len, err);
    }
    knut_buf_reset(&req);
    knut_buf_reset(&msg);
    return st;
}

static knut_status auth(void *ctx, knut_net_grpc_call *c, knut_error *err)
{
    const knut_net_grpc_header *h =
        knut_net_grpc_metadata_find(knut_net_grpc_call_metadata(c), "Authorization");
    if (!h || strcmp(h->value, "Bearer s3cret") != 0)
        return knut_net_grpc_call_finish(c, KNUT_NET_GRPC_UNAUTHENTICATED,
                                         "missing or wrong authorization", NULL, err);
    return echo(ctx, c, err);
}

static knut_status metadata(void *ctx, knut_net_grpc_call *c, knut_error *err)
{
    const knut_net_grpc_metadata *md = knut_net_grpc_call_metadata(c);
    knut_buf out = KNUT_BUF_INIT, req = KNUT_BUF_INIT;
    knut_net_grpc_metadata tr = KNUT_NET_GRPC_METADATA_INIT;
    knut_status st = knut_net_grpc_call_read(c, &req, err);
    for (size_t i = 0; st == KNUT_OK && i < md->count; i++) {
        knut_buf_printf(&out, "%s=", md->items[i].key);
        if (knut_net_grpc_key_is_binary(md->items[i].key))
            for (size_t j = 0; j < md->items[i].len; j++)
                knut_buf_printf(&out, "%02x", (unsigned char)md->items[i].value[j]);
        else
            knut_buf_puts(&out, md->items[i].value);
        knut_buf_putc(&out, '\n');
    }
    if (st == KNUT_OK)
        st = knut_buf_check(&out, err);
    if (st == KNUT_OK)
        st = knut_net_grpc_call_write(c, out.data ? out.data : "", out.len, err);
    if (st == KNUT_OK)
        st = knut_net_grpc_metadata_add(&tr, "x-trailer", "yes", 3, err);
    if (st == KNUT_OK)
        st = knut_net_grpc_metadata_add(&tr, "x-raw-bin", "\x00\xff", 2, err);
    if (st == KNUT_OK)
        st = knut_net_grpc_call_finish(c, KNUT_NET_GRPC_OK, NULL, &tr, err);
    knut_net_grpc_metadata_reset(&tr);
    knut_buf_reset(&out);
    knut_buf_reset(&req);
    return st;
}

static knut_status slow(void *ctx, knut_net_grpc_call *c, knut_error *err)
{
    int64_t end = knut_clock_mono_ns() + md_long(c, "x-delay-ms", 2000) * 1000000;
    while (knut_clock_mono_ns() < end) {
        if (knut_net_grpc_call_cancelled(c))
            return knut_error_set(err, KNUT_ECANCELLED, "cancelled while waiting");
        knut_clock_sleep_ns(20 * 1000000);
    }
    return echo(ctx, c, err);
}

static knut_status endless(void *ctx, knut_net_grpc_call *c, knut_error *err)
{
    knut_buf req = KNUT_BUF_INIT;
    knut_status st = knut_net_grpc_call_read(c, &req, err);
    knut_buf_reset(&req);
    for (long i = 0; st == KNUT_OK && !knut_net_grpc_call_stopping(c); i++) {
        char msg[32];
        int n = snprintf(msg, sizeof msg, "tick %ld", i);
        st = knut_net_grpc_call_write(c, msg, (size_t)n, err);
        for (int w = 0; w < 5 && !knut_net_grpc_call_stopping(c); w++)
            knut_clock_sleep_ns(10 * 1000000);
    }
    return st; /* OK once the server stops: the stream ends cleanly */
}

static knut_status fail(void *ctx, knut_net_grpc_call *c, knut_error *err)
{
    return knut_error_set(err, KNUT_ENOTFOUND, "no such thing");
}

typedef struct args {
    knut_net_grpc_tls tls;
    int use_tls;
    size_t max_receive;
    int threads, stream;
    int64_t grace_ms, timeout_ms;
    const char *data;
    knut_net_grpc_metadata md;
} args;

/* Parses the options from argv[i]; returns 0, or 2 on a usage error. */
static int parse(int argc, char **argv, int i, args *a, knut_error *err)
{
    for (; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(o, "--stream") == 0) {
            a->stream = 1;
            continue;
        }
        if (!v)
            return 2;
        i++;
        if (strcmp(o, "--cert") == 0)
            a->tls.cert_file = v, a->use_tls = 1;
        else if (strcmp(o, "--key") == 0)
            a->tls.key_file = v, a->use_tls = 1;
        else if (strcmp(o, "--ca") == 0)
            a->tls.ca_file = v, a->use_tls = 1;
        else if (strcmp(o, "--server-name") == 0)
            a->tls.server_name = v, a->use_tls = 1;
        else if (strcmp(o, "--max-receive") == 0)
            a->max_receive = (size_t)strtoull(v, NULL, 10);
        else if (strcmp(o, "--threads") == 0)
            a->threads = atoi(v);
        else if (strcmp(o, "--grace-ms") == 0)
            a->grace_ms = strtoll(v, NULL, 10);
        else if (strcmp(o, "--timeout-ms") == 0)
            a->timeout_ms = strtoll(v, NULL, 10);
        else if (strcmp(o, "--data") == 0)
            a->data = v;
        else if (strcmp(o, "--md") == 0) {
            const char *eq = strchr(v, '=');
            char key[256];
            if (!eq || (size_t)(eq - v) >= sizeof key)
                return 2;
            snprintf(key, sizeof key, "%.*s", (int)(eq - v), v);
            if (knut_net_grpc_metadata_add(&a->md, key, eq + 1, strlen(eq + 1), err) != KNUT_OK)
                return 1;
        } else
            return 2;
    }
    return 0;
}

static int serve(args *a)
{
    knut_error err = KNUT_ERROR_INIT;
    knut_net_grpc_server *s = NULL;
    knut_net_grpc_server_options o = KNUT_NET_GRPC_SERVER_OPTIONS_INIT;
    o.tls = a->use_tls ? &a->tls : NULL;
    o.max_receive = a->max_receive;
    o.threads = a->threads;
    static const struct {
        const char *name;
        knut_net_grpc_handler fn;
    } methods[] = {{"Echo", echo}, {"Stream", stream}, {"Auth", auth}, {"Metadata", metadata},
                   {"Slow", slow}, {"Endless", endless}, {"Fail", fail},
                   {"Bidi", bidi}};
    if (knut_signal_install(&err) != KNUT_OK || knut_net_grpc_server_new(&s, &o, &err) != KNUT_OK)
        goto fail;
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) {
        char name[64];
        snprintf(name, sizeof name, "/knut.test.Echo/%s", methods[i].name);
        if (knut_net_grpc_server_add_method(s, name, methods[i].fn, NULL, &err) != KNUT_OK)
            goto fail;
    }
    if (knut_net_grpc_server_start(s, &err) != KNUT_OK)
        goto fail;
    printf("port %d\n", knut_net_grpc_server_port(s));
    fflush(stdout);
    while (!knut_signal_stop_requested())
        knut_clock_sleep_ns(100 * 1000000);
    knut_net_grpc_server_shutdown(s, a->grace_ms > 0 ? a->grace_ms : 2000);
    knut_net_grpc_server_free(s);
    printf("stopped\n");
    return 0;
fail:
    fprintf(stderr, "knut_grpc_tool: %s\n", err.message);
    knut_net_grpc_server_free(s);
    return 1;
}

static void print_message(const knut_buf *m)
{
    printf("message %zu %.*s\n", m->len, (int)m->len, m->data ? m->data : "");
}

static int call(const char *target, const char *method, args *a)
{
    knut_error err = KNUT_ERROR_INIT;
    knut_net_grpc_channel *ch = NULL;
    knut_net_grpc_client_call *c = NULL;
    knut_net_grpc_status status = KNUT_NET_GRPC_STATUS_INIT;
    knut_net_grpc_channel_options o = KNUT_NET_GRPC_CHANNEL_OPTIONS_INIT;
    knut_buf msg = KNUT_BUF_INIT;
    const char *data = a->data ? a->data : "";
    o.tls = a->use_tls ? &a->tls : NULL;
    o.max_receive = a->max_receive;
    knut_status st = knut_net_grpc_channel_new(&ch, target, &o, &err);
    if (st == KNUT_OK && !a->stream) {
        st = knut_net_grpc_channel_unary(ch, method, &a->md, a->timeout_ms, data, strlen(data),
                                         &msg, &status, &err);
        if (msg.len || status.code == KNUT_NET_GRPC_OK)
            print_message(&msg);
    } else if (st == KNUT_OK) {
        st = knut_net_grpc_channel_call(ch, method, &a->md, a->timeout_ms, data, strlen(data), &c,
                                        &err);
        while (st == KNUT_OK && knut_net_grpc_client_call_read(c, &msg, NULL) == KNUT_OK)
            print_message(&msg);
        if (st == KNUT_OK)
            st = knut_net_grpc_client_call_finish(c, &status, &err);
    }
    printf("status %s %s\n", knut_net_grpc_code_name(status.code), status.message);
    for (size_t i = 0; i < status.trailers.count; i++)
        printf("trailer %s=%s\n", status.trailers.items[i].key,
               knut_net_grpc_key_is_binary(status.trailers.items[i].key) ? "(bytes)"
                                                                         : status.trailers.items[i].value);
    printf("knut %s%s%s\n", knut_strerror(st), st ? ": " : "", st ? err.message : "");
    knut_net_grpc_client_call_free(c);
    knut_net_grpc_status_reset(&status);
    knut_buf_reset(&msg);
    knut_net_grpc_channel_free(ch);
    return st == KNUT_OK ? 0 : 1;
}

int main(int argc, char **argv)
{
    args a = {0};
    knut_error err = KNUT_ERROR_INIT;
    int rc;
    int serving = argc >= 2 && strcmp(argv[1], "serve") == 0;
    if (serving || (argc >= 4 && strcmp(argv[1], "call") == 0)) {
        rc = parse(argc, argv, serving ? 2 : 4, &a, &err);
        if (rc == 0)
            rc = serving ? serve(&a) : call(argv[2], argv[3], &a);
    } else
        rc = 2;
    if (rc == 2)
        usage();
    if (err.code != KNUT_OK)
        fprintf(stderr, "knut_grpc_tool: %s\n", err.message);
    knut_net_grpc_metadata_reset(&a.md);
    return rc;
}
