/*
 * Airflow asset events after each round (docs/operations.md): one event
 * per table that committed files, queued by the round and sent by a
 * background thread, so Airflow being slow, down or misconfigured never
 * blocks or fails a sync. The queue is bounded (a full queue drops the new
 * event with a log record); a failed send is retried with exponential
 * backoff up to ASSETS_MAX_ATTEMPTS; on close, the thread gets the drain
 * time (5 s by default) to send what is left, then every unsent event is logged
 * as dropped. All records go to the log target "assets".
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "assets_int.h"

#define ASSETS_QUEUE 256
#define ASSETS_MAX_ATTEMPTS 10
#define ASSETS_BACKOFF_NS ((int64_t)1000000000)       /* first retry after 1 s */
#define ASSETS_BACKOFF_MAX_NS ((int64_t)60000000000)  /* then doubling up to 60 s */
#define ASSETS_DRAIN_NS ((int64_t)5000000000)         /* default time left to send on close */

struct sync_assets {
    airflow_client client;        /* the sender thread's only */
    struct sync_metrics *metrics; /* borrowed; outlives the thread */
    char **uris, **sources;       /* per config table: asset URI, absolute path */
    size_t n_tables;
    const knut_sync_config *cfg;
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
    free(e->table);
    free(e->source);
    memset(e, 0, sizeof *e);
}

static void log_event(knut_log_level lvl, const asset_event *e, const char *error,
                      int64_t retry_ms, const char *msg)
{
    if (!knut_log_enabled(lvl))
        return;
    knut_log_field f[] = {
        KNUT_LF_INT("round", e->round),       KNUT_LF_STR("table", e->table),
        KNUT_LF_STR("uri", e->uri),           KNUT_LF_INT("attempts", e->attempts),
        KNUT_LF_STR("error", error ? error : ""), KNUT_LF_INT("retry_in_ms", retry_ms),
    };
    size_t n = error ? (retry_ms >= 0 ? 6 : 5) : 4;
    knut_log_emit(lvl, ASSETS_LOG, f, n, "%s", msg);
}

static int cancel_cb(void *ctx)
{
    struct sync_assets *a = ctx;
    pthread_mutex_lock(&a->lock);
    int over = a->stopping && knut_clock_mono_ns() > a->deadline_ns;
    pthread_mutex_unlock(&a->lock);
    return over;
}

static void wait_until(struct sync_assets *a, int64_t mono_ns)
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
static asset_event *pick_next(struct sync_assets *a, int64_t now, int64_t *wake_ns)
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

static void remove_event(struct sync_assets *a, asset_event *e)
{
    size_t i = (size_t)(e - a->q);
    event_reset(e);
    memmove(&a->q[i], &a->q[i + 1], (a->n - i - 1) * sizeof a->q[0]);
    a->n--;
}

static void *sender(void *arg)
{
    struct sync_assets *a = arg;
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
        airflow_result r = knut_sync__airflow_send(&a->client, e, &err);
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
            log_event(KNUT_LOG_INFO, e, NULL, -1, "asset event sent");
            knut_sync__metrics_assets_add(a->metrics, 1);
        } else if (done) {
            log_event(KNUT_LOG_ERROR, e, err.message, -1, "asset event dropped");
        } else {
            log_event(KNUT_LOG_WARN, e, err.message, wait / 1000000, "asset event not sent yet");
        }
        if (done)
            remove_event(a, e);
    }
    while (a->n > 0) { /* the drain time is over */
        log_event(KNUT_LOG_ERROR, &a->q[0], "not sent before shutdown", -1, "asset event dropped");
        remove_event(a, &a->q[0]);
    }
    pthread_mutex_unlock(&a->lock);
    return NULL;
}

/* knut://<graph or store name>/<table>, each part percent-encoded. */
static char *default_uri(const knut_sync_config *cfg, const knut_sync_options *o,
                         const char *table)
{
    char name[256];
    if (o->falkordb_url) {
        snprintf(name, sizeof name, "%s", o->graph ? o->graph : "knut");
    } else {
        const char *store = o->store ? o->store : cfg->store ? cfg->store : "knut";
        const char *base = strrchr(store, '/');
        snprintf(name, sizeof name, "%s", base ? base + 1 : store);
        char *dot = strrchr(name, '.');
        if (dot && dot != name)
            *dot = 0;
    }
    char *n = knut_net_http_escape(name), *t = knut_net_http_escape(table), *uri = NULL;
    knut_buf b = KNUT_BUF_INIT;
    if (n && t) {
        knut_buf_printf(&b, "knut://%s/%s", n, t);
        uri = knut_buf_detach(&b, NULL);
    }
    free(n);
    free(t);
    return uri;
}

static char *instance_id(const knut_sync_options *o)
{
    if (o->instance)
        return strdup(o->instance);
    char host[256] = "localhost", buf[300];
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = 0;
    snprintf(buf, sizeof buf, "%s:%ld", host, (long)getpid());
    return strdup(buf);
}

knut_status knut_sync__assets_open(struct sync_assets **out, const knut_sync_config *cfg,
                                   const knut_sync_options *o, struct sync_metrics *metrics,
                                   knut_error *err)
{
    *out = NULL;
    if (!o->airflow_url)
        return KNUT_OK;
    if (!o->airflow_user || !*o->airflow_user || !o->airflow_password)
        return knut_error_set(err, KNUT_EINVAL,
                              "Airflow asset events need a user and a password "
                              "(--airflow-user, KNUT_AIRFLOW_PASSWORD or --airflow-password-file)");
    struct sync_assets *a = calloc(1, sizeof *a);
    char *inst = instance_id(o);
    knut_status st = KNUT_ENOMEM;
    size_t nt = cfg->n_tables ? cfg->n_tables : 1;
    if (!a || !inst || !(a->uris = calloc(nt, sizeof *a->uris)) ||
        !(a->sources = calloc(nt, sizeof *a->sources))) {
        knut_error_set(err, st, "out of memory");
        goto cleanup;
    }
    a->cfg = cfg;
    a->metrics = metrics;
    a->n_tables = cfg->n_tables;
    a->drain_ns = o->airflow_drain_ms > 0 ? o->airflow_drain_ms * 1000000 : ASSETS_DRAIN_NS;
    for (size_t i = 0; i < cfg->n_tables; i++) {
        const knut_sync_table *t = &cfg->tables[i];
        a->uris[i] = t->asset ? strdup(t->asset) : default_uri(cfg, o, t->name);
        /* consumers read extra.source: absolute, whatever the working folder */
        a->sources[i] = realpath(t->path, NULL);
        if (!a->sources[i])
            a->sources[i] = strdup(t->path); /* a glob, or not there yet */
        if (!a->uris[i] || !a->sources[i]) {
            knut_error_set(err, st, "out of memory");
            goto cleanup;
        }
    }
    knut_net_http_options ho = KNUT_NET_HTTP_OPTIONS_INIT;
    ho.connect_timeout_ms = 3000;
    ho.timeout_ms = 10000;
    ho.max_response = (size_t)1 << 20;
    ho.cancel = cancel_cb;
    ho.cancel_ctx = a;
    st = knut_sync__airflow_open(&a->client, o->airflow_url, o->airflow_user,
                                 o->airflow_password, inst, &ho, err);
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
    KNUT_LOG(KNUT_LOG_INFO, ASSETS_LOG, "Airflow at %s, user %s",
             knut_net_http_client_peer(a->client.http), o->airflow_user);
cleanup:
    free(inst);
    if (st != KNUT_OK) {
        knut_sync__assets_close(a);
        return st;
    }
    *out = a;
    return KNUT_OK;
}

void knut_sync__assets_round(struct sync_assets *a, const sync_table_result *r, size_t n)
{
    if (!a)
        return;
    for (size_t i = 0; i < n; i++) {
        if (!r[i].ok || r[i].files <= 0 || !r[i].table)
            continue;
        size_t ti = (size_t)(r[i].table - a->cfg->tables);
        asset_event e = {0};
        e.uri = ti < a->n_tables ? strdup(a->uris[ti]) : NULL;
        e.table = strdup(r[i].table->name);
        e.source = ti < a->n_tables ? strdup(a->sources[ti]) : NULL;
        e.round = r[i].round;
        e.rows = r[i].rows;
        e.files = r[i].files;
        e.vertices = r[i].vertices;
        e.edges = r[i].edges;
        e.deletes = r[i].deletes;
        e.synced_us = knut_clock_wall_us();
        if (!e.uri || !e.table || !e.source) {
            log_event(KNUT_LOG_ERROR, &e, "out of memory", -1, "asset event dropped");
            event_reset(&e);
            continue;
        }
        pthread_mutex_lock(&a->lock);
        int full = a->n == ASSETS_QUEUE;
        if (!full) {
            a->q[a->n++] = e;
            pthread_cond_signal(&a->cond);
        }
        pthread_mutex_unlock(&a->lock);
        if (full) {
            log_event(KNUT_LOG_ERROR, &e, "the queue is full (Airflow unreachable for long)", -1,
                      "asset event dropped");
            event_reset(&e);
        }
    }
}

void knut_sync__assets_close(struct sync_assets *a)
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
    knut_sync__airflow_close(&a->client);
    for (size_t i = 0; i < a->n_tables; i++) {
        free(a->uris ? a->uris[i] : NULL);
        free(a->sources ? a->sources[i] : NULL);
    }
    free(a->uris);
    free(a->sources);
    free(a);
}
