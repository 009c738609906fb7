/*
 * Airflow asset events (docs/operations.md), for knut sync's rounds and
 * knut pipeline's runs: queued by the caller and sent by a background
 * thread, so Airflow being slow, down or misconfigured never blocks or
 * fails the caller's work. The queue is bounded (a full queue drops the new
 * event with a log record); a failed send is retried with exponential
 * backoff up to ASSETS_MAX_ATTEMPTS; on close, the thread gets the drain
 * time (5 s by default) to send what is left, then every unsent event is logged
 * as dropped. All records go to the log target given (default "assets").
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "airflow_int.h"

#define ASSETS_QUEUE 256
#define ASSETS_MAX_ATTEMPTS 10
#define ASSETS_BACKOFF_NS ((int64_t)1000000000)       /* first retry after 1 s */
#define ASSETS_BACKOFF_MAX_NS ((int64_t)60000000000)  /* then doubling up to 60 s */
#define ASSETS_DRAIN_NS ((int64_t)5000000000)         /* default time left to send on close */

struct knut_net_airflow {
    airflow_client client;        /* the sender thread's only */
    void (*on_sent)(void *ctx);
    void *on_sent_ctx;
    const char *target;           /* static strings or copies below */
    char *target_s, *label_f, *seq_f;
    pthread_t thread;
    int started;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    /* Oldest first. The round only appends, so an event's slot stays put
     * while the sender works on it unlocked; only the sender removes. */
    asset_event q[ASSETS_QUEUE];
    size_t n;
    int stopping;
    int64_t drain_ns;            /* time given to unsent events at close */
    int64_t deadline_ns;         /* with stopping: drain until then */
};

static void event_reset(asset_event *e)
{
    free(e->uri);
    free(e->label);
    free(e->extra);
    memset(e, 0, sizeof *e);
}

static void log_event(const struct knut_net_airflow *a, knut_log_level lvl, const asset_event *e,
                      const char *error, int64_t retry_ms, const char *msg)
{
    if (!knut_log_enabled(lvl))
        return;
    knut_log_field f[] = {
        KNUT_LF_INT(a->seq_f, e->seq),        KNUT_LF_STR(a->label_f, e->label),
        KNUT_LF_STR("uri", e->uri),           KNUT_LF_INT("attempts", e->attempts),
        KNUT_LF_STR("error", error ? error : ""), KNUT_LF_INT("retry_in_ms", retry_ms),
    };
    size_t n = error ? (retry_ms >= 0 ? 6 : 5) : 4;
    knut_log_emit(lvl, a->target, f, n, "%s", msg);
}

static int cancel_cb(void *ctx)
{
    struct knut_net_airflow *a = ctx;
    pthread_mutex_lock(&a->lock);
    int over = a->stopping && knut_clock_mono_ns() > a->deadline_ns;
    pthread_mutex_unlock(&a->lock);
    return over;
}

static void wait_until(struct knut_net_airflow *a, int64_t mono_ns)
{
    /* the condition variable runs on CLOCK_MONOTONIC, like knut_clock_mono_ns:
     * a wall-clock step neither stretches nor skips a backoff */
    if (mono_ns <= knut_clock_mono_ns())
        return;
    struct timespec ts = {(time_t)(mono_ns / 1000000000), (long)(mono_ns % 1000000000)};
    pthread_cond_timedwait(&a->cond, &a->lock, &ts);
}

/*
 * The next event to try: the oldest unsent one of its asset (events of one
 * asset go out in round order), among those whose backoff is over. One
 * asset that cannot be sent (not declared in any DAG yet) does not hold up
 * the others. *wake_ns gets the earliest backoff end otherwise.
 */
static asset_event *pick_next(struct knut_net_airflow *a, int64_t now, int64_t *wake_ns)
{
    *wake_ns = INT64_MAX;
    for (size_t i = 0; i < a->n; i++) {
        size_t j = 0;
        while (j < i && strcmp(a->q[j].uri, a->q[i].uri) != 0)
            j++;
        if (j < i)
            continue; /* an older event of this asset goes first */
        if (a->q[i].next_ns <= now)
            return &a->q[i];
        if (a->q[i].next_ns < *wake_ns)
            *wake_ns = a->q[i].next_ns;
    }
    return NULL;
}

static void remove_event(struct knut_net_airflow *a, asset_event *e)
{
    size_t i = (size_t)(e - a->q);
    event_reset(e);
    memmove(&a->q[i], &a->q[i + 1], (a->n - i - 1) * sizeof a->q[0]);
    a->n--;
}

static void *sender(void *arg)
{
    struct knut_net_airflow *a = arg;
    pthread_mutex_lock(&a->lock);
    for (;;) {
        int64_t now = knut_clock_mono_ns(), wake = 0;
        if (a->stopping && (a->n == 0 || now >= a->deadline_ns))
            break;
        if (a->n == 0) {
            pthread_cond_wait(&a->cond, &a->lock);
            continue;
        }
        asset_event *e = pick_next(a, now, &wake);
        if (!e) {
            wait_until(a, a->stopping && a->deadline_ns < wake ? a->deadline_ns : wake);
            continue;
        }
        pthread_mutex_unlock(&a->lock);
        knut_error err = KNUT_ERROR_INIT;
        airflow_result r = knut_net__airflow_send(&a->client, e, &err);
        pthread_mutex_lock(&a->lock);
        e->attempts++;
        int done = r != AIRFLOW_RETRY || e->attempts >= ASSETS_MAX_ATTEMPTS;
        int64_t wait = ASSETS_BACKOFF_NS << (e->attempts - 1 < 6 ? e->attempts - 1 : 6);
        if (wait > ASSETS_BACKOFF_MAX_NS)
            wait = ASSETS_BACKOFF_MAX_NS;
        if (a->stopping && wait > ASSETS_BACKOFF_NS)
            wait = ASSETS_BACKOFF_NS; /* draining: keep trying, gently */
        e->next_ns = knut_clock_mono_ns() + wait;
        if (r == AIRFLOW_SENT) {
            log_event(a, KNUT_LOG_INFO, e, NULL, -1, "asset event sent");
            if (a->on_sent)
                a->on_sent(a->on_sent_ctx);
        } else if (done) {
            log_event(a, KNUT_LOG_ERROR, e, err.message, -1, "asset event dropped");
        } else {
            log_event(a, KNUT_LOG_WARN, e, err.message, wait / 1000000, "asset event not sent yet");
        }
        if (done)
            remove_event(a, e);
    }
    while (a->n > 0) { /* the drain time is over */
        log_event(a, KNUT_LOG_ERROR, &a->q[0], "not sent before shutdown", -1, "asset event dropped");
        remove_event(a, &a->q[0]);
    }
    pthread_mutex_unlock(&a->lock);
    return NULL;
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
    knut_status st = KNUT_ENOMEM;
    if (!a || !inst ||
        !(a->target_s = strdup(o->log_target ? o->log_target : "assets")) ||
        !(a->label_f = strdup(o->label_field ? o->label_field : "table")) ||
        !(a->seq_f = strdup(o->seq_field ? o->seq_field : "round"))) {
        knut_error_set(err, st, "out of memory");
        goto cleanup;
    }
    a->target = a->target_s;
    a->on_sent = o->on_sent;
    a->on_sent_ctx = o->on_sent_ctx;
    a->drain_ns = o->drain_ms > 0 ? o->drain_ms * 1000000 : ASSETS_DRAIN_NS;
    knut_net_http_options ho = KNUT_NET_HTTP_OPTIONS_INIT;
    ho.connect_timeout_ms = 3000;
    ho.timeout_ms = 10000;
    ho.max_response = (size_t)1 << 20;
    ho.cancel = cancel_cb;
    ho.cancel_ctx = a;
    st = knut_net__airflow_open(&a->client, o->url, o->user, o->password, inst, &ho, err);
    if (st != KNUT_OK)
        goto cleanup;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&a->lock, NULL);
    pthread_cond_init(&a->cond, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&a->thread, NULL, sender, a) != 0) {
        pthread_cond_destroy(&a->cond);
        pthread_mutex_destroy(&a->lock);
        st = knut_error_set(err, KNUT_ERROR, "cannot start the Airflow event thread");
        goto cleanup;
    }
    a->started = 1;
    KNUT_LOG(KNUT_LOG_INFO, a->target, "Airflow at %s, user %s",
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
    if (!a)
        return;
    asset_event e = {0};
    e.uri = strdup(uri ? uri : "");
    e.label = strdup(label ? label : "");
    e.extra = strdup(extra_json ? extra_json : "{}");
    e.seq = seq;
    if (!e.uri || !e.label || !e.extra) {
        log_event(a, KNUT_LOG_ERROR, &e, "out of memory", -1, "asset event dropped");
        event_reset(&e);
        return;
    }
    pthread_mutex_lock(&a->lock);
    int full = a->n == ASSETS_QUEUE;
    if (!full) {
        a->q[a->n++] = e;
        pthread_cond_signal(&a->cond);
    }
    pthread_mutex_unlock(&a->lock);
    if (full) {
        log_event(a, KNUT_LOG_ERROR, &e, "the queue is full (Airflow unreachable for long)", -1,
                  "asset event dropped");
        event_reset(&e);
    }
}

void knut_net_airflow_close(knut_net_airflow *a)
{
    if (!a)
        return;
    if (a->started) {
        pthread_mutex_lock(&a->lock);
        a->stopping = 1;
        a->deadline_ns = knut_clock_mono_ns() + a->drain_ns;
        for (size_t i = 0; i < a->n; i++) /* one more try now, not after a long backoff */
            a->q[i].next_ns = 0;
        pthread_cond_signal(&a->cond);
        pthread_mutex_unlock(&a->lock);
        pthread_join(a->thread, NULL);
        pthread_cond_destroy(&a->cond);
        pthread_mutex_destroy(&a->lock);
    }
    knut_net__airflow_close(&a->client);
    free(a->target_s);
    free(a->label_f);
    free(a->seq_f);
    free(a);
}
