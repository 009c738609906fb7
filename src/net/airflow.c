/*
 * Airflow asset events (docs/operations.md), for knut sync's rounds and
 * knut pipeline's runs: queued by the caller and sent by the shared
 * background sender (outbox.c), so Airflow being slow, down or
 * misconfigured never blocks or fails the caller's work. Events of one
 * asset go out in round order; one asset that cannot be sent (not declared
 * in any DAG yet) does not hold up the others. All records go to the log
 * target given (default "assets").
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "airflow_int.h"

struct knut_net_airflow {
    airflow_client client; /* the sender thread's only */
    outbox *out;
};

static int cancel_cb(void *ctx)
{
    struct knut_net_airflow *a = ctx;
    return a->out && knut_net__outbox_give_up(a->out);
}

static outbox_result send_cb(void *ctx, const outbox_msg *m, knut_error *err)
{
    struct knut_net_airflow *a = ctx;
    return knut_net__airflow_send(&a->client, m, err);
}

static char *instance_id(void)
{
    char host[256] = "localhost", buf[300];
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = 0;
    snprintf(buf, sizeof buf, "%s:%ld", host, (long)getpid());
    return strdup(buf);
}

knut_status knut_net_airflow_open(knut_net_airflow **out, const knut_net_airflow_options *o,
                                  knut_error *err)
{
    *out = NULL;
    if (!o->url || !o->user || !*o->user || !o->password)
        return knut_error_set(err, KNUT_EINVAL,
                              "Airflow asset events need a URL, a user and a password");
    struct knut_net_airflow *a = calloc(1, sizeof *a);
    char *inst = o->instance ? strdup(o->instance) : instance_id();
    const char *target = o->log_target ? o->log_target : "assets";
    knut_status st = KNUT_ENOMEM;
    if (!a || !inst) {
        knut_error_set(err, st, "out of memory");
        goto cleanup;
    }
    knut_net_http_options ho = KNUT_NET_HTTP_OPTIONS_INIT;
    ho.connect_timeout_ms = 3000;
    ho.timeout_ms = 10000;
    ho.max_response = (size_t)1 << 20;
    ho.cancel = cancel_cb;
    ho.cancel_ctx = a;
    st = knut_net__airflow_open(&a->client, o->url, o->user, o->password, inst, &ho, err);
    if (st != KNUT_OK)
        goto cleanup;
    outbox_options ob = {target,
                         "asset event",
                         "uri",
                         o->label_field ? o->label_field : "table",
                         o->seq_field ? o->seq_field : "round",
                         o->drain_ms,
                         send_cb,
                         a,
                         o->on_sent,
                         o->on_sent_ctx};
    if ((st = knut_net__outbox_open(&a->out, &ob, err)) != KNUT_OK)
        goto cleanup;
    KNUT_LOG(KNUT_LOG_INFO, target, "Airflow at %s, user %s",
             knut_net_http_client_peer(a->client.http), o->user);
cleanup:
    free(inst);
    if (st != KNUT_OK) {
        knut_net_airflow_close(a);
        return st;
    }
    *out = a;
    return KNUT_OK;
}

void knut_net_airflow_emit(knut_net_airflow *a, const char *uri, const char *label, int64_t seq,
                           const char *extra_json)
{
    if (a)
        knut_net__outbox_push(a->out, uri, label, seq, extra_json ? extra_json : "{}");
}

void knut_net_airflow_close(knut_net_airflow *a)
{
    if (!a)
        return;
    knut_net__outbox_close(a->out); /* drains first: the client is still needed */
    knut_net__airflow_close(&a->client);
    free(a);
}
