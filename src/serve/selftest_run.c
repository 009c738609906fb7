/*
 * The self-test's entry: the URL, the channel, the table, and the checks
 * of the transport (Handshake, ListActions, unknown actions, commands and
 * methods); the Flight SQL ones are in selftest_checks.c. The first call
 * is the Handshake: if nothing answers at the URL there is no table, an
 * error says so instead.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "selftest_int.h"

#define ST_TIMEOUT_MS 10000

void knut_serve__st_row(st_run *r, const char *name, int ok, const char *fmt, ...)
{
    char detail[DETAIL + 1];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    /* one line per row, whatever the server's message holds */
    for (char *p = detail; *p; p++)
        if (*p == '\n' || *p == '\r' || *p == '\t')
            *p = ' ';
    fprintf(r->out, "%-30s %-4s %s\n", name, ok ? "pass" : "FAIL", detail);
    fflush(r->out);
    if (ok)
        r->pass++;
    else
        r->fail++;
}

/* "grpc[+tcp|+tls]://HOST:PORT" to the gRPC target "HOST:PORT"; *tls set
 * for grpc+tls. */
static knut_status parse_url(const char *url, char *target, size_t cap, int *tls,
                             knut_error *err)
{
    static const char *const schemes[] = {"grpc://", "grpc+tcp://", "grpc+tls://"};
    const char *rest = NULL;
    for (int i = 0; i < 3 && !rest; i++)
        if (strncmp(url, schemes[i], strlen(schemes[i])) == 0) {
            rest = url + strlen(schemes[i]);
            *tls = i == 2;
        }
    const char *colon = rest ? strrchr(rest, ':') : NULL;
    size_t n = rest ? strcspn(rest, "/?#") : 0;
    if (!rest || !colon || colon == rest || !colon[1] || n >= cap || colon - rest >= (long)n ||
        strspn(colon + 1, "0123456789") != n - (size_t)(colon + 1 - rest))
        return knut_error_set(err, KNUT_EINVAL, "self-test URL '%.200s': expected "
                                                "grpc://HOST:PORT or grpc+tls://HOST:PORT", url);
    snprintf(target, cap, "%.*s", (int)n, rest);
    return KNUT_OK;
}

static int unreachable(int code)
{
    return code == KNUT_NET_GRPC_UNAVAILABLE || code == KNUT_NET_GRPC_DEADLINE_EXCEEDED;
}

/* Handshake with no payload: OK, or UNAUTHENTICATED when credentials are
 * required and none (or a token) were sent; either way the server spoke. */
static knut_status handshake(st_run *r, st_status *hs, knut_error *err)
{
    knut_net_grpc_client_call *call = NULL;
    st_status st = {0};
    KnutServe__HandshakeRequest hr = KNUT_SERVE__HANDSHAKE_REQUEST__INIT;
    knut_buf req = KNUT_BUF_INIT;
    knut_status rc = knut_serve__pack(&hr.base, &req, err);
    if (rc == KNUT_OK)
        rc = knut_net_grpc_channel_open(r->c.ch, SERVE_PKG "Handshake", &r->c.md,
                                        r->c.timeout_ms, &call, err);
    if (rc == KNUT_OK) {
        knut_net_grpc_client_call_write(call, req.data, req.len, NULL);
        knut_net_grpc_client_call_close_send(call, NULL);
        knut_net_grpc_status gs = KNUT_NET_GRPC_STATUS_INIT;
        knut_net_grpc_client_call_finish(call, &gs, NULL);
        st.code = gs.code;
        snprintf(st.message, sizeof st.message, "%s", gs.message);
        knut_net_grpc_status_reset(&gs);
        *hs = st;
    }
    knut_net_grpc_client_call_free(call);
    knut_buf_reset(&req);
    return rc;
}

static knut_status list_actions(st_run *r, knut_error *err)
{
    knut_buf all = KNUT_BUF_INIT, names = KNUT_BUF_INIT;
    knut_buf_init(&all, ST_MAX_RESULT);
    size_t n = 0;
    st_status st = {0};
    KnutServe__Empty e = KNUT_SERVE__EMPTY__INIT;
    knut_buf req = KNUT_BUF_INIT;
    knut_status rc = knut_serve__pack(&e.base, &req, err);
    if (rc == KNUT_OK)
        rc = knut_serve__st_raw_call(&r->c, SERVE_PKG "ListActions", req.data, req.len, &all, &n,
                                     &st, err);
    int create = 0, close = 0;
    for (size_t off = 0; rc == KNUT_OK && off + 4 <= all.len;) {
        uint32_t len;
        memcpy(&len, all.data + off, 4);
        if (off + 4 + len > all.len)
            break;
        KnutServe__ActionType *t =
            knut_serve__action_type__unpack(NULL, len, (uint8_t *)all.data + off + 4);
        if (t && t->type) {
            create |= strcmp(t->type, "CreatePreparedStatement") == 0;
            close |= strcmp(t->type, "ClosePreparedStatement") == 0;
        }
        if (t)
            knut_serve__action_type__free_unpacked(t, NULL);
        off += 4 + len;
    }
    if (rc == KNUT_OK) {
        if (st.code)
            knut_serve__st_row(r, "ListActions", 0, "%s %s", knut_net_grpc_code_name(st.code),
                               st.message);
        else
            knut_serve__st_row(r, "ListActions", create && close,
                   "%zu actions%s", n,
                   create && close ? ", the prepared statement ones among them"
                                   : "; CreatePreparedStatement/ClosePreparedStatement missing");
    }
    knut_buf_reset(&all);
    knut_buf_reset(&names);
    knut_buf_reset(&req);
    return rc;
}

/* What the server must refuse with UNIMPLEMENTED. */
static knut_status unknown(st_run *r, knut_error *err)
{
    st_status st = {0};
    knut_buf out = KNUT_BUF_INIT;
    knut_buf_init(&out, ST_MAX_RESULT);
    knut_status rc = knut_serve__st_do_action(&r->c, "KnutSelfTestNoSuchAction", NULL, &out, &st,
                                              err);
    if (rc == KNUT_OK)
        knut_serve__st_row(r, "error: unknown action", st.code == KNUT_NET_GRPC_UNIMPLEMENTED,
               "DoAction KnutSelfTestNoSuchAction -> %s", knut_net_grpc_code_name(st.code));
    size_t n = 0;
    if (rc == KNUT_OK)
        rc = knut_serve__st_raw_call(&r->c, SERVE_PKG "KnutSelfTestNoSuchMethod", "", 0, NULL, &n,
                                     &st, err);
    if (rc == KNUT_OK)
        knut_serve__st_row(r, "error: unknown method", st.code == KNUT_NET_GRPC_UNIMPLEMENTED,
               "/arrow.flight.protocol.FlightService/KnutSelfTestNoSuchMethod -> %s",
               knut_net_grpc_code_name(st.code));
    /* a command type no Flight SQL server knows, in a well-formed Any */
    KnutServe__Flightsql__CommandGetCatalogs m = KNUT_SERVE__FLIGHTSQL__COMMAND_GET_CATALOGS__INIT;
    KnutServe__FlightInfo *info = NULL;
    if (rc == KNUT_OK)
        rc = knut_serve__st_flight_info(&r->c, SERVE_PKG "GetFlightInfo",
                                        "KnutSelfTestNoSuchCommand", &m.base, &info, &st, err);
    if (rc == KNUT_OK)
        knut_serve__st_row(r, "error: unknown command",
                           !info && (st.code == KNUT_NET_GRPC_UNIMPLEMENTED ||
                                                      st.code == KNUT_NET_GRPC_INVALID_ARGUMENT),
               "GetFlightInfo(KnutSelfTestNoSuchCommand) -> %s",
               info ? "a FlightInfo" : knut_net_grpc_code_name(st.code));
    knut_serve__flight_info__free_unpacked(info, NULL);
    knut_buf_reset(&out);
    return rc;
}

knut_status knut_serve_self_test(const char *url, const knut_net_grpc_tls *tls,
                                 const char *token, FILE *out, int *failed, knut_error *err)
{
    KNUT_ASSERT_ARG(err, url && out && failed);
    *failed = 0;
    char target[512];
    int use_tls = 0;
    st_status hs = {0};
    knut_status rc = parse_url(url, target, sizeof target, &use_tls, err);
    if (rc != KNUT_OK)
        return rc;
    knut_net_grpc_tls none = {NULL, NULL, NULL, NULL};
    knut_net_grpc_channel_options co = KNUT_NET_GRPC_CHANNEL_OPTIONS_INIT;
    co.tls = use_tls ? (tls ? tls : &none) : NULL;
    co.max_receive = ST_MAX_RESULT;
    co.max_send = (size_t)16 << 20;
    st_run r = {0};
    r.out = out;
    r.c.timeout_ms = ST_TIMEOUT_MS;
    if ((rc = knut_net_grpc_channel_new(&r.c.ch, target, &co, err)) != KNUT_OK)
        return rc;
    if (token && *token) {
        size_t n = strlen(token) + sizeof "Bearer ";
        char *v = malloc(n);
        if (!v) {
            rc = knut_error_set(err, KNUT_ENOMEM, "out of memory");
            goto done;
        }
        snprintf(v, n, "Bearer %s", token);
        rc = knut_net_grpc_metadata_add(&r.c.md, "authorization", v, strlen(v), err);
        knut_net_secret_free(v); /* wipes it */
        if (rc != KNUT_OK)
            goto done;
    }
    if ((rc = handshake(&r, &hs, err)) != KNUT_OK)
        goto done;
    if (unreachable(hs.code)) { /* no table: nothing answered */
        rc = knut_error_set(err, KNUT_EIO, "%s: no Flight server answers: %s: %.300s", url,
                            knut_net_grpc_code_name(hs.code), hs.message);
        goto done;
    }
    fprintf(out, "%-30s %-4s %s\n", "CHECK", "", "DETAIL");
    knut_serve__st_row(&r, "Handshake", hs.code == 0, "%s%s%.300s",
           hs.code ? knut_net_grpc_code_name(hs.code) : "OK", hs.message[0] ? ": " : "",
           hs.message);
    if (!(rc = list_actions(&r, err)) && !(rc = knut_serve__st_checks_metadata(&r, err)) &&
        !(rc = knut_serve__st_checks_statements(&r, err)))
        rc = unknown(&r, err);
    if (rc == KNUT_OK)
        fprintf(out, "\n%d checks: %d passed, %d failed (%s)\n", r.pass + r.fail, r.pass, r.fail,
                url);
    *failed = r.fail;
done:
    knut_net_grpc_metadata_reset(&r.c.md);
    knut_net_grpc_channel_free(r.c.ch);
    return rc;
}
