/*
 * The background sender shared by the event emitters (outbox_int.h): a
 * bounded queue, one thread, exponential backoff per message, ordering per
 * key, and a bounded drain on close.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "outbox_int.h"

#define OUTBOX_QUEUE 256
#define OUTBOX_MAX_ATTEMPTS 10
#define OUTBOX_BACKOFF_NS ((int64_t)1000000000)      /* first retry after 1 s */
#define OUTBOX_BACKOFF_MAX_NS ((int64_t)60000000000) /* then doubling up to 60 s */
#define OUTBOX_DRAIN_NS ((int64_t)5000000000)        /* default time left to send on close */

struct outbox {
    outbox_result (*send)(void *ctx, const outbox_msg *m, knut_error *err);
    void *send_ctx;
    void (*on_sent)(void *ctx);
    void *on_sent_ctx;
    char *target, *what, *key_f, *label_f, *seq_f;
    pthread_t thread;
    int started;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    /* Oldest first. The caller only appends, so a message's slot stays put
     * while the sender works on it unlocked; only the sender removes. */
    outbox_msg q[OUTBOX_QUEUE];
    size_t n;
    int stopping;
    int64_t drain_ns;    /* time given to unsent messages at close */
    int64_t deadline_ns; /* with stopping: drain until then */
};

static void msg_reset(outbox_msg *m)
{
    free(m->key);
    free(m->label);
    free(m->body);
    memset(m, 0, sizeof *m);
}

static void log_msg(const outbox *ob, knut_log_level lvl, const outbox_msg *m, const char *error,
                    int64_t retry_ms, const char *what_happened)
{
    if (!knut_log_enabled(lvl))
        return;
    knut_log_field f[] = {
        KNUT_LF_INT(ob->seq_f, m->seq),       KNUT_LF_STR(ob->label_f, m->label),
        KNUT_LF_STR(ob->key_f, m->key),       KNUT_LF_INT("attempts", m->attempts),
        KNUT_LF_STR("error", error ? error : ""), KNUT_LF_INT("retry_in_ms", retry_ms),
    };
    size_t n = error ? (retry_ms >= 0 ? 6 : 5) : 4;
    knut_log_emit(lvl, ob->target, f, n, "%s %s", ob->what, what_happened);
}

int knut_net__outbox_give_up(outbox *ob)
{
    pthread_mutex_lock(&ob->lock);
    int over = ob->stopping && knut_clock_mono_ns() > ob->deadline_ns;
    pthread_mutex_unlock(&ob->lock);
    return over;
}

static void wait_until(outbox *ob, int64_t mono_ns)
{
    /* the condition variable runs on CLOCK_MONOTONIC, like knut_clock_mono_ns:
     * a wall-clock step neither stretches nor skips a backoff */
    if (mono_ns <= knut_clock_mono_ns())
        return;
    struct timespec ts = {(time_t)(mono_ns / 1000000000), (long)(mono_ns % 1000000000)};
    pthread_cond_timedwait(&ob->cond, &ob->lock, &ts);
}

/*
 * The next message to try: the oldest unsent one of its key, among those
 * whose backoff is over. *wake_ns gets the earliest backoff end otherwise.
 */
static outbox_msg *pick_next(outbox *ob, int64_t now, int64_t *wake_ns)
{
    *wake_ns = INT64_MAX;
    for (size_t i = 0; i < ob->n; i++) {
        size_t j = 0;
        while (j < i && strcmp(ob->q[j].key, ob->q[i].key) != 0)
            j++;
        if (j < i)
            continue; /* an older message of this key goes first */
        if (ob->q[i].next_ns <= now)
            return &ob->q[i];
        if (ob->q[i].next_ns < *wake_ns)
            *wake_ns = ob->q[i].next_ns;
    }
    return NULL;
}

static void remove_msg(outbox *ob, outbox_msg *m)
{
    size_t i = (size_t)(m - ob->q);
    msg_reset(m);
    memmove(&ob->q[i], &ob->q[i + 1], (ob->n - i - 1) * sizeof ob->q[0]);
    ob->n--;
}

static void *sender(void *arg)
{
    outbox *ob = arg;
    pthread_mutex_lock(&ob->lock);
    for (;;) {
        int64_t now = knut_clock_mono_ns(), wake = 0;
        if (ob->stopping && (ob->n == 0 || now >= ob->deadline_ns))
            break;
        if (ob->n == 0) {
            pthread_cond_wait(&ob->cond, &ob->lock);
            continue;
        }
        outbox_msg *m = pick_next(ob, now, &wake);
        if (!m) {
            wait_until(ob, ob->stopping && ob->deadline_ns < wake ? ob->deadline_ns : wake);
            continue;
        }
        pthread_mutex_unlock(&ob->lock);
        knut_error err = KNUT_ERROR_INIT;
        outbox_result r = ob->send(ob->send_ctx, m, &err);
        pthread_mutex_lock(&ob->lock);
        m->attempts++;
        int done = r != OUTBOX_RETRY || m->attempts >= OUTBOX_MAX_ATTEMPTS;
        int64_t wait = OUTBOX_BACKOFF_NS << (m->attempts - 1 < 6 ? m->attempts - 1 : 6);
        if (wait > OUTBOX_BACKOFF_MAX_NS)
            wait = OUTBOX_BACKOFF_MAX_NS;
        if (ob->stopping && wait > OUTBOX_BACKOFF_NS)
            wait = OUTBOX_BACKOFF_NS; /* draining: keep trying, gently */
        m->next_ns = knut_clock_mono_ns() + wait;
        if (r == OUTBOX_SENT) {
            log_msg(ob, KNUT_LOG_INFO, m, NULL, -1, "sent");
            if (ob->on_sent)
                ob->on_sent(ob->on_sent_ctx);
        } else if (done) {
            log_msg(ob, KNUT_LOG_ERROR, m, err.message, -1, "dropped");
        } else {
            log_msg(ob, KNUT_LOG_WARN, m, err.message, wait / 1000000, "not sent yet");
        }
        if (done)
            remove_msg(ob, m);
    }
    while (ob->n > 0) { /* the drain time is over */
        log_msg(ob, KNUT_LOG_ERROR, &ob->q[0], "not sent before shutdown", -1, "dropped");
        remove_msg(ob, &ob->q[0]);
    }
    pthread_mutex_unlock(&ob->lock);
    return NULL;
}

static void outbox_free(outbox *ob)
{
    free(ob->target);
    free(ob->what);
    free(ob->key_f);
    free(ob->label_f);
    free(ob->seq_f);
    free(ob);
}

knut_status knut_net__outbox_open(outbox **out, const outbox_options *o, knut_error *err)
{
    *out = NULL;
    outbox *ob = calloc(1, sizeof *ob);
    if (!ob || !(ob->target = strdup(o->log_target)) || !(ob->what = strdup(o->what)) ||
        !(ob->key_f = strdup(o->key_field)) || !(ob->label_f = strdup(o->label_field)) ||
        !(ob->seq_f = strdup(o->seq_field))) {
        if (ob)
            outbox_free(ob);
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    }
    ob->send = o->send;
    ob->send_ctx = o->send_ctx;
    ob->on_sent = o->on_sent;
    ob->on_sent_ctx = o->on_sent_ctx;
    ob->drain_ns = o->drain_ms > 0 ? o->drain_ms * 1000000 : OUTBOX_DRAIN_NS;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&ob->lock, NULL);
    pthread_cond_init(&ob->cond, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&ob->thread, NULL, sender, ob) != 0) {
        pthread_cond_destroy(&ob->cond);
        pthread_mutex_destroy(&ob->lock);
        knut_status st = knut_error_set(err, KNUT_ERROR, "cannot start the %s thread", o->what);
        outbox_free(ob);
        return st;
    }
    ob->started = 1;
    *out = ob;
    return KNUT_OK;
}

void knut_net__outbox_push(outbox *ob, const char *key, const char *label, int64_t seq,
                           const char *body)
{
    outbox_msg m = {0};
    m.key = strdup(key ? key : "");
    m.label = strdup(label ? label : "");
    m.body = strdup(body ? body : "");
    m.seq = seq;
    if (!m.key || !m.label || !m.body) {
        log_msg(ob, KNUT_LOG_ERROR, &m, "out of memory", -1, "dropped");
        msg_reset(&m);
        return;
    }
    pthread_mutex_lock(&ob->lock);
    int full = ob->n == OUTBOX_QUEUE;
    if (!full) {
        ob->q[ob->n++] = m;
        pthread_cond_signal(&ob->cond);
    }
    pthread_mutex_unlock(&ob->lock);
    if (full) {
        log_msg(ob, KNUT_LOG_ERROR, &m, "the queue is full (the peer unreachable for long)", -1,
                "dropped");
        msg_reset(&m);
    }
}

void knut_net__outbox_close(outbox *ob)
{
    if (!ob)
        return;
    if (ob->started) {
        pthread_mutex_lock(&ob->lock);
        ob->stopping = 1;
        ob->deadline_ns = knut_clock_mono_ns() + ob->drain_ns;
        for (size_t i = 0; i < ob->n; i++) /* one more try now, not after a long backoff */
            ob->q[i].next_ns = 0;
        pthread_cond_signal(&ob->cond);
        pthread_mutex_unlock(&ob->lock);
        pthread_join(ob->thread, NULL);
        pthread_cond_destroy(&ob->cond);
        pthread_mutex_destroy(&ob->lock);
    }
    outbox_free(ob);
}
