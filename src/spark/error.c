/*
 * A failed Spark Connect call as the user should read it. Transport
 * failures name the server; Spark's own errors come with a
 * google.rpc.Status in the grpc-status-details-bin trailer whose ErrorInfo
 * (domain org.apache.spark) holds the error class, SQLSTATE and an
 * errorId; FetchErrorDetails(errorId) gives the full message (the status
 * message may be cut to fit a header).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spark/rpc_status.pb-c.h"
#include "spark_int.h"

#define ERRORINFO_TYPE "type.googleapis.com/google.rpc.ErrorInfo"

static void copy(char *dst, size_t n, const char *src)
{
    snprintf(dst, n, "%s", src ? src : "");
}

/* The ErrorInfo of the trailer into info; *error_id (malloc'ed) if any. */
static void error_info(const knut_net_grpc_status *st, knut_spark_error_info *info,
                       char **error_id)
{
    const knut_net_grpc_header *h = knut_net_grpc_metadata_find(&st->trailers,
                                                                "grpc-status-details-bin");
    if (!h)
        return;
    KnutSpark__Rpc__Status *gs = knut_spark__rpc__status__unpack(NULL, h->len, (uint8_t *)h->value);
    if (!gs)
        return;
    for (size_t i = 0; i < gs->n_details; i++) {
        KnutSpark__Rpc__Any *a = gs->details[i];
        if (!a->type_url || strcmp(a->type_url, ERRORINFO_TYPE) != 0)
            continue;
        KnutSpark__Rpc__ErrorInfo *ei =
            knut_spark__rpc__error_info__unpack(NULL, a->value.len, a->value.data);
        if (!ei)
            continue;
        copy(info->exception, sizeof info->exception, ei->reason);
        for (size_t j = 0; j < ei->n_metadata; j++) {
            const char *k = ei->metadata[j]->key, *v = ei->metadata[j]->value;
            if (!k || !v)
                continue;
            if (strcmp(k, "errorClass") == 0)
                copy(info->error_class, sizeof info->error_class, v);
            else if (strcmp(k, "sqlState") == 0)
                copy(info->sql_state, sizeof info->sql_state, v);
            else if (strcmp(k, "errorId") == 0 && !*error_id)
                *error_id = strdup(v);
        }
        knut_spark__rpc__error_info__free_unpacked(ei, NULL);
    }
    knut_spark__rpc__status__free_unpacked(gs, NULL);
}

/* FetchErrorDetails: the root error's message into *msg (malloc'ed), its
 * class and SQLSTATE into info when the trailer had none. Best effort. */
static void fetch_details(knut_spark_session *s, const char *error_id,
                          knut_spark_error_info *info, char **msg)
{
    KnutSpark__UserContext uc;
    knut_spark__user_ctx(s, &uc);
    KnutSpark__FetchErrorDetailsRequest req = KNUT_SPARK__FETCH_ERROR_DETAILS_REQUEST__INIT;
    req.session_id = s->session_id;
    req.user_context = &uc;
    req.error_id = (char *)error_id;
    size_t n = knut_spark__fetch_error_details_request__get_packed_size(&req);
    uint8_t *buf = malloc(n ? n : 1);
    if (!buf)
        return;
    knut_spark__fetch_error_details_request__pack(&req, buf);
    knut_buf resp;
    knut_buf_init(&resp, (size_t)4 << 20);
    knut_net_grpc_status gst = KNUT_NET_GRPC_STATUS_INIT;
    knut_error e = KNUT_ERROR_INIT;
    if (knut_net_grpc_channel_unary(s->ch, SPARK_SERVICE "FetchErrorDetails", &s->md,
                                    s->timeout_ms, buf, n, &resp, &gst, &e) == KNUT_OK) {
        KnutSpark__FetchErrorDetailsResponse *r =
            knut_spark__fetch_error_details_response__unpack(NULL, resp.len,
                                                                 (uint8_t *)resp.data);
        if (r && r->n_errors > 0) {
            size_t root = r->_root_error_idx_case ? (size_t)r->root_error_idx : 0;
            if (root >= r->n_errors)
                root = 0;
            KnutSpark__FetchErrorDetailsResponse__Error *er = r->errors[root];
            if (er->message)
                *msg = strdup(er->message);
            if (er->n_error_type_hierarchy && !info->exception[0])
                copy(info->exception, sizeof info->exception, er->error_type_hierarchy[0]);
            KnutSpark__FetchErrorDetailsResponse__SparkThrowable *t = er->spark_throwable;
            if (er->_spark_throwable_case && t) {
                if (t->_error_class_case && !info->error_class[0])
                    copy(info->error_class, sizeof info->error_class, t->error_class);
                if (t->_sql_state_case && !info->sql_state[0])
                    copy(info->sql_state, sizeof info->sql_state, t->sql_state);
            }
        }
        if (r)
            knut_spark__fetch_error_details_response__free_unpacked(r, NULL);
    }
    knut_net_grpc_status_reset(&gst);
    knut_buf_reset(&resp);
    free(buf);
}

knut_status knut_spark__call_error(knut_spark_session *s, const char *rpc,
                                   const knut_net_grpc_status *st, knut_status rc,
                                   knut_spark_error_info *info_out, knut_error *err)
{
    knut_spark_error_info info;
    memset(&info, 0, sizeof info);
    info.grpc_code = st->code;
    char *error_id = NULL, *full = NULL;
    error_info(st, &info, &error_id);
    if (error_id)
        fetch_details(s, error_id, &info, &full);
    const char *msg = full ? full : st->message;
    switch (st->code) {
    case KNUT_NET_GRPC_UNAVAILABLE:
    case KNUT_NET_GRPC_DEADLINE_EXCEEDED:
        rc = knut_error_set(err, KNUT_EPEER, "Spark Connect server %s is not reachable (%s: "
                            "%s): is it running?", s->peer, knut_net_grpc_code_name(st->code),
                            st->message);
        break;
    case KNUT_NET_GRPC_UNAUTHENTICATED:
        rc = knut_error_set(err, KNUT_EPEER, "Spark Connect server %s refused the "
                            "credentials: %s", s->peer, st->message);
        break;
    case KNUT_NET_GRPC_CANCELLED:
        rc = knut_error_set(err, KNUT_ECANCELLED, "%s: %s cancelled", s->peer, rpc);
        break;
    default:
        if (info.error_class[0] || info.sql_state[0]) {
            /* SQLSTATE class 42: the query itself is wrong (syntax, names) */
            rc = strncmp(info.sql_state, "42", 2) == 0 ? KNUT_EINVAL : KNUT_ERROR;
            rc = knut_error_set(err, rc, "%s: Spark error %s (SQLSTATE %s): %s", s->peer,
                                info.error_class[0] ? info.error_class : "(no class)",
                                info.sql_state[0] ? info.sql_state : "none", msg);
        } else {
            rc = knut_error_set(err, rc == KNUT_OK ? KNUT_ERROR : rc, "%s: %s: %s%s%s", s->peer,
                                rpc, knut_net_grpc_code_name(st->code), msg[0] ? ": " : "",
                                msg);
        }
        break;
    }
    if (info_out)
        *info_out = info;
    free(error_id);
    free(full);
    return rc;
}
