/*
 * Streamed replies of the HTTP server (Server-Sent Events): a libmicrohttpd
 * content-reader callback over the handler's stream function, and the SSE
 * event writer.
 *
 * The reader runs on the connection's own thread. It never hands
 * libmicrohttpd an empty read (that busy-loops): while the stream function
 * has nothing, it waits on the server's condition variable in slices, so a
 * wake-up or a stop is seen at once. What one connection holds unsent is
 * the stream function's buffer, capped at KNUT_NET_HTTP_STREAM_MAX_BUFFER.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "http_int.h"

#define STREAM_POLL_MS 250
#define STREAM_KEEPALIVE_MS 5000
#define STREAM_STOP_WAIT_MS 2000
#define STREAM_BLOCK ((size_t)16 << 10) /* what libmicrohttpd asks for at most */
#define SSE_TYPE "text/event-stream"

struct knut_net_http_stream {
    knut_net_http_server *srv;
    knut_net_http_stream_fn fn;
    void *ctx;
    void (*free_fn)(void *ctx);
    knut_buf pending; /* the bytes the last call produced */
    size_t off;       /* how many of them are sent */
    uint64_t sent;
    int done;         /* ends once pending is sent */
    int keepalive;    /* a text/event-stream: comments may be sent */
};

knut_status knut_net__http_streams_init(knut_net_http_server *s, knut_error *err)
{
    pthread_condattr_t ca;
    int ok = pthread_condattr_init(&ca) == 0;
    /* monotonic: a wall-clock step cannot stretch a wait */
    ok = ok && pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0;
    ok = ok && pthread_cond_init(&s->cv, &ca) == 0;
    pthread_condattr_destroy(&ca);
    if (!ok)
        return knut_error_set(err, KNUT_ERROR, "HTTP server: cannot make a condition variable");
    if (pthread_mutex_init(&s->mu, NULL) != 0) {
        pthread_cond_destroy(&s->cv);
        return knut_error_set(err, KNUT_ERROR, "HTTP server: cannot make a mutex");
    }
    return KNUT_OK;
}

static struct timespec deadline_in(int64_t ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += (time_t)(ms / 1000);
    ts.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

void knut_net__http_streams_stop(knut_net_http_server *s)
{
    struct timespec until = deadline_in(STREAM_STOP_WAIT_MS);
    pthread_mutex_lock(&s->mu);
    s->stopping = 1;
    pthread_cond_broadcast(&s->cv);
    /* the streams end themselves once they see the flag; a client that does
     * not read is cut off by MHD_stop_daemon after the bound */
    while (s->streams > 0 && pthread_cond_timedwait(&s->cv, &s->mu, &until) == 0)
        ;
    pthread_mutex_unlock(&s->mu);
}

void knut_net_http_server_wake(knut_net_http_server *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->mu);
    s->wake_gen++;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

int knut_net_http_stream_stopping(const knut_net_http_stream *s)
{
    if (!s)
        return 1;
    pthread_mutex_lock(&s->srv->mu);
    int v = s->srv->stopping;
    pthread_mutex_unlock(&s->srv->mu);
    return v;
}

uint64_t knut_net_http_stream_sent(const knut_net_http_stream *s)
{
    return s ? s->sent : 0;
}

/* Refills st->pending; returns 0 to go on, -1 to drop the connection. */
static int refill(knut_net_http_stream *st)
{
    knut_net_http_server *srv = st->srv;
    int64_t idle_ms = 0;
    for (;;) {
        pthread_mutex_lock(&srv->mu);
        unsigned gen = srv->wake_gen;
        int stopping = srv->stopping;
        pthread_mutex_unlock(&srv->mu);
        knut_buf_clear(&st->pending);
        st->off = 0;
        knut_status rc = st->fn(st->ctx, st, &st->pending);
        if (st->pending.error != KNUT_OK) {
            KNUT_LOG(KNUT_LOG_WARN, "net", "HTTP stream: over the %zu-byte buffer: dropped",
                     (size_t)KNUT_NET_HTTP_STREAM_MAX_BUFFER);
            return -1;
        }
        if (rc != KNUT_OK && rc != KNUT_EAGAIN && rc != KNUT_EOF) {
            KNUT_LOG(KNUT_LOG_DEBUG, "net", "HTTP stream: ended by its producer (%s)",
                     knut_strerror(rc));
            return -1;
        }
        if (rc == KNUT_EOF || stopping)
            st->done = 1;
        if (st->pending.len > 0 || st->done)
            return 0;
        if (st->keepalive && idle_ms >= STREAM_KEEPALIVE_MS) {
            knut_buf_puts(&st->pending, ": keepalive\n\n");
            return 0;
        }
        pthread_mutex_lock(&srv->mu);
        struct timespec until = deadline_in(STREAM_POLL_MS);
        while (!srv->stopping && srv->wake_gen == gen &&
               pthread_cond_timedwait(&srv->cv, &srv->mu, &until) == 0)
            ;
        int woken = srv->stopping || srv->wake_gen != gen;
        pthread_mutex_unlock(&srv->mu);
        idle_ms = woken ? idle_ms : idle_ms + STREAM_POLL_MS;
    }
}

static ssize_t on_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    knut_net_http_stream *st = cls;
    if (st->off >= st->pending.len) {
        if (st->done)
            return MHD_CONTENT_READER_END_OF_STREAM;
        if (refill(st) != 0)
            return MHD_CONTENT_READER_END_WITH_ERROR;
        if (st->pending.len == 0)
            return MHD_CONTENT_READER_END_OF_STREAM; /* done with nothing left */
    }
    size_t n = st->pending.len - st->off;
    if (n > max)
        n = max;
    memcpy(buf, st->pending.data + st->off, n);
    st->off += n;
    st->sent += n;
    return (ssize_t)n;
}

static void on_free(void *cls)
{
    knut_net_http_stream *st = cls;
    knut_net_http_server *srv = st->srv;
    if (st->free_fn)
        st->free_fn(st->ctx);
    knut_buf_reset(&st->pending);
    free(st);
    pthread_mutex_lock(&srv->mu);
    srv->streams--;
    pthread_cond_broadcast(&srv->cv);
    pthread_mutex_unlock(&srv->mu);
}

struct MHD_Response *knut_net__http_stream_response(knut_net_http_server *s,
                                                    knut_net_http_reply *reply)
{
    knut_net_http_stream *st = calloc(1, sizeof *st);
    if (!st) {
        if (reply->stream_free)
            reply->stream_free(reply->stream_ctx);
        return NULL;
    }
    const char *type = reply->content_type ? reply->content_type : SSE_TYPE;
    st->srv = s;
    st->fn = reply->stream;
    st->ctx = reply->stream_ctx;
    st->free_fn = reply->stream_free;
    st->keepalive = strncmp(type, SSE_TYPE, strlen(SSE_TYPE)) == 0;
    knut_buf_init(&st->pending, KNUT_NET_HTTP_STREAM_MAX_BUFFER);
    pthread_mutex_lock(&s->mu);
    s->streams++;
    pthread_mutex_unlock(&s->mu);
    /* from here on on_free is the one owner of st, also on failure */
    struct MHD_Response *r =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, STREAM_BLOCK, on_read, st, on_free);
    if (!r) {
        on_free(st);
        return NULL;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    return r;
}

/* ---- the SSE event writer ---------------------------------------------- */

/* Writes s to b (when not NULL) as one "data: LINE\n" per line (split on
 * \n, \r\n and \r; "" is one empty line); returns how many bytes that is. */
static size_t data_lines(knut_buf *b, const char *s)
{
    size_t total = 0;
    for (;;) {
        size_t n = strcspn(s, "\r\n");
        total += 6 + n + 1;
        if (b) {
            knut_buf_puts(b, "data: ");
            knut_buf_append(b, s, n);
            knut_buf_putc(b, '\n');
        }
        if (!s[n])
            return total;
        s += n + (s[n] == '\r' && s[n + 1] == '\n' ? 2 : 1);
    }
}

knut_status knut_net_http_sse_event(knut_buf *out, const char *id, const char *event,
                                    const char *data, knut_error *err)
{
    KNUT_ASSERT_ARG(err, out);
    if ((id && strpbrk(id, "\r\n")) || (event && strpbrk(event, "\r\n")))
        return knut_error_set(err, KNUT_EINVAL, "SSE event: an id or event name cannot hold a "
                                                "line break");
    if (out->error != KNUT_OK)
        return knut_buf_check(out, err);
    if (!data)
        data = "";
    size_t need = (id ? 4 + strlen(id) + 1 : 0) + (event ? 7 + strlen(event) + 1 : 0) +
                  data_lines(NULL, data) + 1;
    size_t max = out->max ? out->max : KNUT_BUF_DEFAULT_MAX;
    if (need > max || out->len > max - need)
        return knut_error_set(err, KNUT_ETOOBIG, "SSE event: %zu bytes do not fit in the "
                                                 "%zu-byte buffer (%zu used)",
                              need, max, out->len);
    if (id)
        knut_buf_printf(out, "id: %s\n", id);
    if (event)
        knut_buf_printf(out, "event: %s\n", event);
    data_lines(out, data);
    knut_buf_putc(out, '\n');
    return knut_buf_check(out, err);
}
