/*
 * A Spark Connect session: the sc:// URL, one gRPC channel, the request
 * metadata (the bearer token, only over TLS unless the caller allows
 * plaintext), the session id every request names, and the unary RPCs
 * (AnalyzePlan's spark_version, Interrupt).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "spark_int.h"

knut_status knut_spark__uuid(char out[37], knut_error *err)
{
    unsigned char b[16];
    size_t got = 0;
    while (got < sizeof b) {
        ssize_t n = getrandom(b + got, sizeof b - got, 0);
        if (n < 0)
            return knut_error_set(err, KNUT_ERROR, "no random bytes for a UUID");
        got += (size_t)n;
    }
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40); /* version 4 */
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80); /* RFC 4122 variant */
    snprintf(out, 37,
             "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
             b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
             b[14], b[15]);
    return KNUT_OK;
}

knut_status knut_spark_session_new(knut_spark_session **out, const char *url,
                                   const knut_spark_options *o, knut_error *err)
{
    KNUT_ASSERT_ARG(err, out && url);
    *out = NULL;
    KNUT_CHECK_VERSION(o, KNUT_SPARK_OPTIONS_VERSION, err);
    knut_spark_options def = KNUT_SPARK_OPTIONS_INIT;
    if (!o)
        o = &def;
    knut_spark_session *s = calloc(1, sizeof *s);
    if (!s)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    knut_status st = knut_spark_url_parse(&s->url, url, err);
    if (st != KNUT_OK) {
        knut_error_prefix(err, "Spark Connect URL: ");
        goto cleanup;
    }
    if (o->token) {
        knut_net_secret_free(s->url.token);
        if (!(s->url.token = strdup(o->token))) {
            st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
            goto cleanup;
        }
    }
    int v6 = strchr(s->url.host, ':') != NULL;
    snprintf(s->peer, sizeof s->peer, "sc://%s%.200s%s:%d", v6 ? "[" : "", s->url.host,
             v6 ? "]" : "", s->url.port);
    if (s->url.token && !s->url.use_ssl && !o->allow_insecure_token) {
        st = knut_error_set(err, KNUT_EINVAL,
                            "%s: the token would travel in plain text: add ;use_ssl=true "
                            "(TLS) or allow plaintext explicitly (--allow-insecure-token)",
                            s->peer);
        goto cleanup;
    }
    if (s->url.session_id)
        snprintf(s->session_id, sizeof s->session_id, "%s", s->url.session_id);
    else if ((st = knut_spark__uuid(s->session_id, err)) != KNUT_OK)
        goto cleanup;
    snprintf(s->user_agent, sizeof s->user_agent, "%.200s",
             s->url.user_agent ? s->url.user_agent : SPARK_CLIENT_TYPE);
    s->timeout_ms = o->connect_timeout_ms > 0 ? o->connect_timeout_ms : 30000;
    if (s->url.token) {
        size_t n = strlen(s->url.token) + 8;
        char *bearer = malloc(n);
        if (!bearer) {
            st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
            goto cleanup;
        }
        snprintf(bearer, n, "Bearer %s", s->url.token);
        st = knut_net_grpc_metadata_add(&s->md, "authorization", bearer, strlen(bearer), err);
        knut_net_secret_free(bearer);
        if (st != KNUT_OK) {
            /* the metadata error would not quote the value, but say why */
            knut_error_set(err, st, "%s: the token is not printable ASCII or too long",
                           s->peer);
            goto cleanup;
        }
    }
    char target[300];
    snprintf(target, sizeof target, "%s%.200s%s:%d", v6 ? "[" : "", s->url.host, v6 ? "]" : "",
             s->url.port);
    knut_net_grpc_tls tls = {NULL, NULL, o->ca_file, NULL};
    knut_net_grpc_channel_options co = KNUT_NET_GRPC_CHANNEL_OPTIONS_INIT;
    co.tls = s->url.use_ssl ? &tls : NULL;
    co.max_receive = s->url.max_message ? s->url.max_message : KNUT_SPARK_DEFAULT_MAX_MESSAGE;
    co.max_send = co.max_receive;
    st = knut_net_grpc_channel_new(&s->ch, target, &co, err);
    if (st != KNUT_OK)
        knut_error_prefix(err, "%s: ", s->peer);
cleanup:
    if (st != KNUT_OK) {
        knut_spark_session_free(s);
        return st;
    }
    *out = s;
    return KNUT_OK;
}

void knut_spark_session_free(knut_spark_session *s)
{
    if (!s)
        return;
    knut_net_grpc_channel_free(s->ch);
    knut_net_grpc_metadata_reset(&s->md);
    knut_spark_url_reset(&s->url);
    free(s);
}

const char *knut_spark_session_peer(const knut_spark_session *s)
{
    return s ? s->peer : "";
}

const char *knut_spark_session_id(const knut_spark_session *s)
{
    return s ? s->session_id : "";
}

void knut_spark__user_ctx(const knut_spark_session *s, KnutSpark__UserContext *uc)
{
    knut_spark__user_context__init(uc);
    uc->user_id = s->url.user_id ? s->url.user_id : "";
}

knut_status knut_spark__unary(knut_spark_session *s, const char *rpc,
                              const ProtobufCMessage *req, knut_buf *resp,
                              knut_spark_error_info *info, knut_error *err)
{
    char method[128];
    snprintf(method, sizeof method, SPARK_SERVICE "%s", rpc);
    size_t n = protobuf_c_message_get_packed_size(req);
    uint8_t *buf = malloc(n ? n : 1);
    if (!buf)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    protobuf_c_message_pack(req, buf);
    knut_net_grpc_status gst = KNUT_NET_GRPC_STATUS_INIT;
    knut_error cerr = KNUT_ERROR_INIT;
    knut_status st = knut_net_grpc_channel_unary(s->ch, method, &s->md, s->timeout_ms, buf, n,
                                                 resp, &gst, &cerr);
    free(buf);
    if (st != KNUT_OK && gst.code != 0)
        st = knut_spark__call_error(s, rpc, &gst, st, info, err);
    else if (st != KNUT_OK)
        st = knut_error_set(err, st, "%s: %s", s->peer, cerr.message);
    knut_net_grpc_status_reset(&gst);
    return st;
}

knut_status knut_spark__call_open(knut_spark_session *s, const char *rpc,
                                  const ProtobufCMessage *req, knut_net_grpc_client_call **call,
                                  knut_error *err)
{
    char method[128];
    snprintf(method, sizeof method, SPARK_SERVICE "%s", rpc);
    size_t n = protobuf_c_message_get_packed_size(req);
    uint8_t *buf = malloc(n ? n : 1);
    if (!buf)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    protobuf_c_message_pack(req, buf);
    knut_status st = knut_net_grpc_channel_call(s->ch, method, &s->md, KNUT_NET_GRPC_NO_DEADLINE,
                                                buf, n, call, err);
    free(buf);
    return st;
}

knut_status knut_spark_version(knut_spark_session *s, char **out, knut_error *err)
{
    KNUT_ASSERT_ARG(err, s && out);
    *out = NULL;
    KnutSpark__UserContext uc;
    knut_spark__user_ctx(s, &uc);
    KnutSpark__AnalyzePlanRequest req = KNUT_SPARK__ANALYZE_PLAN_REQUEST__INIT;
    KnutSpark__AnalyzePlanRequest__SparkVersion sv =
        KNUT_SPARK__ANALYZE_PLAN_REQUEST__SPARK_VERSION__INIT;
    req.session_id = s->session_id;
    req.user_context = &uc;
    req._client_type_case = KNUT_SPARK__ANALYZE_PLAN_REQUEST___CLIENT_TYPE_CLIENT_TYPE;
    req.client_type = s->user_agent;
    req.analyze_case = KNUT_SPARK__ANALYZE_PLAN_REQUEST__ANALYZE_SPARK_VERSION;
    req.spark_version = &sv;
    knut_buf resp;
    knut_buf_init(&resp, (size_t)1 << 20);
    knut_status st = knut_spark__unary(s, "AnalyzePlan", &req.base, &resp, NULL, err);
    if (st != KNUT_OK)
        goto cleanup;
    KnutSpark__AnalyzePlanResponse *r =
        knut_spark__analyze_plan_response__unpack(NULL, resp.len, (uint8_t *)resp.data);
    if (!r || r->result_case != KNUT_SPARK__ANALYZE_PLAN_RESPONSE__RESULT_SPARK_VERSION ||
        !r->spark_version->version) {
        st = knut_error_set(err, KNUT_EPARSE, "%s: AnalyzePlan: no spark_version in the "
                                              "reply", s->peer);
    } else if (!(*out = strdup(r->spark_version->version))) {
        st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
    }
    if (r)
        knut_spark__analyze_plan_response__free_unpacked(r, NULL);
cleanup:
    knut_buf_reset(&resp);
    return st;
}

knut_status knut_spark_interrupt(knut_spark_session *s, const char *operation_id,
                                 size_t *interrupted, knut_error *err)
{
    KNUT_ASSERT_ARG(err, s);
    if (interrupted)
        *interrupted = 0;
    KnutSpark__UserContext uc;
    knut_spark__user_ctx(s, &uc);
    KnutSpark__InterruptRequest req = KNUT_SPARK__INTERRUPT_REQUEST__INIT;
    req.session_id = s->session_id;
    req.user_context = &uc;
    req._client_type_case = KNUT_SPARK__INTERRUPT_REQUEST___CLIENT_TYPE_CLIENT_TYPE;
    req.client_type = s->user_agent;
    if (operation_id) {
        if (!knut_spark__is_uuid(operation_id))
            return knut_error_set(err, KNUT_EINVAL, "interrupt: the operation id must be a UUID");
        req.interrupt_type =
            KNUT_SPARK__INTERRUPT_REQUEST__INTERRUPT_TYPE__INTERRUPT_TYPE_OPERATION_ID;
        req.interrupt_case = KNUT_SPARK__INTERRUPT_REQUEST__INTERRUPT_OPERATION_ID;
        req.operation_id = (char *)operation_id;
    } else {
        req.interrupt_type = KNUT_SPARK__INTERRUPT_REQUEST__INTERRUPT_TYPE__INTERRUPT_TYPE_ALL;
    }
    knut_buf resp;
    knut_buf_init(&resp, (size_t)1 << 20);
    knut_status st = knut_spark__unary(s, "Interrupt", &req.base, &resp, NULL, err);
    if (st == KNUT_OK && interrupted) {
        KnutSpark__InterruptResponse *r =
            knut_spark__interrupt_response__unpack(NULL, resp.len, (uint8_t *)resp.data);
        if (r) {
            *interrupted = r->n_interrupted_ids;
            knut_spark__interrupt_response__free_unpacked(r, NULL);
        }
    }
    knut_buf_reset(&resp);
    return st;
}
