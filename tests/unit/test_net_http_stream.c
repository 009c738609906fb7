/*
 * Streamed replies of the HTTP server (src/net/http_stream.c) read by a
 * real client (libcurl): Server-Sent Events as sent, wake-ups, the
 * per-connection bound, HEAD, keepalive comments, and a stop that does not
 * hang while a stream is open. Also the SSE event writer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "knut/net.h"

/* ---- the server side --------------------------------------------------- */

typedef struct app {
    pthread_mutex_t mu;
    int available; /* events the producer made (the /wake route) */
    int calls;     /* stream function calls */
    int frees;     /* stream_free calls */
    int saw_stop;
} app;

typedef struct stream_state {
    app *a;
    int next;
    char route[16];
} stream_state;

static void stream_free(void *ctx)
{
    stream_state *st = ctx;
    pthread_mutex_lock(&st->a->mu);
    st->a->frees++;
    pthread_mutex_unlock(&st->a->mu);
    free(st);
}

static knut_status stream_fn(void *ctx, knut_net_http_stream *s, knut_buf *out)
{
    stream_state *st = ctx;
    app *a = st->a;
    char id[16];
    pthread_mutex_lock(&a->mu);
    a->calls++;
    int available = a->available;
    pthread_mutex_unlock(&a->mu);
    if (strcmp(st->route, "/events") == 0) {
        if (st->next == 3)
            return KNUT_EOF;
        snprintf(id, sizeof id, "%d", ++st->next);
        return knut_net_http_sse_event(out, id, "tick", st->next == 1 ? "a\nb" : "c", NULL);
    }
    if (strcmp(st->route, "/hold") == 0 || strcmp(st->route, "/quiet") == 0) {
        if (!knut_net_http_stream_stopping(s))
            return KNUT_EAGAIN;
        pthread_mutex_lock(&a->mu);
        a->saw_stop = 1;
        pthread_mutex_unlock(&a->mu);
        knut_net_http_sse_event(out, NULL, "bye", "server stopping", NULL);
        return KNUT_EOF;
    }
    if (strcmp(st->route, "/wake") == 0) {
        if (st->next == 3)
            return KNUT_EOF;
        if (st->next >= available)
            return KNUT_EAGAIN;
        snprintf(id, sizeof id, "%d", ++st->next);
        return knut_net_http_sse_event(out, id, NULL, "made", NULL);
    }
    /* /big: more than one connection may hold */
    static char chunk[4096];
    memset(chunk, 'x', sizeof chunk);
    for (int i = 0; i < 20; i++)
        knut_buf_append(out, chunk, sizeof chunk);
    return KNUT_OK;
}

static void handler(void *ctx, const char *method, const char *path, knut_net_http_reply *reply)
{
    if (strcmp(path, "/metrics") == 0) {
        knut_buf_puts(&reply->body, "up 1\n");
        return;
    }
    stream_state *st = calloc(1, sizeof *st);
    assert_non_null(st);
    st->a = ctx;
    snprintf(st->route, sizeof st->route, "%s", path);
    reply->stream = stream_fn;
    reply->stream_ctx = st;
    reply->stream_free = stream_free;
}

/* ---- the client side --------------------------------------------------- */

typedef struct fetch {
    char url[128];
    int head;
    const char *stop_after; /* close once the body holds this */
    knut_buf body;
    char content_type[128];
    char cache_control[64];
    CURLcode rc;
    long status;
} fetch;

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
    fetch *f = ud;
    knut_buf_append(&f->body, p, size * n);
    if (f->stop_after && f->body.data && strstr(f->body.data, f->stop_after))
        return 0;
    return size * n;
}

static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
    fetch *f = ud;
    size_t len = size * n;
    char line[256];
    snprintf(line, sizeof line, "%.*s", (int)(len < 255 ? len : 255), p);
    line[strcspn(line, "\r\n")] = 0;
    if (strncasecmp(line, "Content-Type: ", 14) == 0)
        snprintf(f->content_type, sizeof f->content_type, "%.100s", line + 14);
    if (strncasecmp(line, "Cache-Control: ", 15) == 0)
        snprintf(f->cache_control, sizeof f->cache_control, "%.60s", line + 15);
    return len;
}

static void *run_fetch(void *arg)
{
    fetch *f = arg;
    CURL *h = curl_easy_init();
    curl_easy_setopt(h, CURLOPT_URL, f->url);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 15000L);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, f);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, f);
    if (f->head)
        curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
    f->rc = curl_easy_perform(h);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &f->status);
    curl_easy_cleanup(h);
    return NULL;
}

static knut_net_http_server *start(app *a)
{
    knut_net_http_server *srv = NULL;
    knut_error err = KNUT_ERROR_INIT;
    memset(a, 0, sizeof *a);
    pthread_mutex_init(&a->mu, NULL);
    if (knut_net_http_server_start(&srv, "127.0.0.1:0", handler, a, &err) != KNUT_OK)
        fail_msg("%s", err.message);
    return srv;
}

static void fetch_init(fetch *f, knut_net_http_server *srv, const char *path)
{
    memset(f, 0, sizeof *f);
    snprintf(f->url, sizeof f->url, "http://%s%s", knut_net_http_server_addr(srv), path);
    knut_buf_init(&f->body, 1 << 20);
}

static int frees(app *a)
{
    pthread_mutex_lock(&a->mu);
    int n = a->frees;
    pthread_mutex_unlock(&a->mu);
    return n;
}

static void test_events(void **state)
{
    (void)state;
    app a;
    knut_net_http_server *srv = start(&a);
    fetch f;
    fetch_init(&f, srv, "/events");
    run_fetch(&f);
    assert_int_equal(f.rc, CURLE_OK);
    assert_int_equal(f.status, 200);
    assert_string_equal(f.content_type, "text/event-stream");
    assert_string_equal(f.cache_control, "no-cache");
    assert_string_equal(f.body.data, "id: 1\nevent: tick\ndata: a\ndata: b\n\n"
                                     "id: 2\nevent: tick\ndata: c\n\n"
                                     "id: 3\nevent: tick\ndata: c\n\n");
    knut_buf_reset(&f.body);

    /* the plain routes are as before, also while streams are served */
    fetch_init(&f, srv, "/metrics");
    run_fetch(&f);
    assert_int_equal(f.status, 200);
    assert_string_equal(f.body.data, "up 1\n");
    assert_string_equal(f.content_type, "text/plain; charset=utf-8");
    knut_buf_reset(&f.body);

    /* HEAD: the stream's headers, its function never called, freed once */
    int calls = a.calls;
    fetch_init(&f, srv, "/events");
    f.head = 1;
    run_fetch(&f);
    assert_int_equal(f.rc, CURLE_OK);
    assert_string_equal(f.content_type, "text/event-stream");
    assert_int_equal(f.body.len, 0);
    assert_int_equal(a.calls, calls);
    knut_buf_reset(&f.body);
    knut_net_http_server_stop(srv);
    assert_int_equal(a.frees, 2);
    pthread_mutex_destroy(&a.mu);
}

static void *produce(void *arg)
{
    void **args = arg;
    app *a = args[0];
    for (int i = 0; i < 3; i++) {
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
        pthread_mutex_lock(&a->mu);
        a->available++;
        pthread_mutex_unlock(&a->mu);
        knut_net_http_server_wake(args[1]);
    }
    return NULL;
}

static void test_wake(void **state)
{
    (void)state;
    app a;
    knut_net_http_server *srv = start(&a);
    fetch f;
    fetch_init(&f, srv, "/wake");
    pthread_t prod;
    void *args[2] = {&a, srv};
    assert_int_equal(pthread_create(&prod, NULL, produce, args), 0);
    run_fetch(&f);
    pthread_join(prod, NULL);
    assert_int_equal(f.rc, CURLE_OK);
    assert_string_equal(f.body.data, "id: 1\ndata: made\n\nid: 2\ndata: made\n\n"
                                     "id: 3\ndata: made\n\n");
    knut_buf_reset(&f.body);
    knut_net_http_server_stop(srv);
    assert_int_equal(a.frees, 1);
    pthread_mutex_destroy(&a.mu);
}

/* A stream whose function overfills its buffer is dropped, not grown. */
static void test_bound(void **state)
{
    (void)state;
    app a;
    knut_net_http_server *srv = start(&a);
    fetch f;
    fetch_init(&f, srv, "/big");
    run_fetch(&f);
    assert_int_not_equal(f.rc, CURLE_OK);
    assert_int_equal(f.body.len, 0);
    knut_buf_reset(&f.body);
    knut_net_http_server_stop(srv);
    assert_int_equal(a.frees, 1);
    pthread_mutex_destroy(&a.mu);
}

/* Stop while a client holds a stream open: the stream function gets its
 * last call, the client its goodbye event and a clean end, and stop
 * returns at once. */
static void test_stop_while_open(void **state)
{
    (void)state;
    app a;
    knut_net_http_server *srv = start(&a);
    fetch f;
    fetch_init(&f, srv, "/hold");
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, run_fetch, &f), 0);
    for (int i = 0; i < 500; i++) {
        pthread_mutex_lock(&a.mu);
        int calls = a.calls;
        pthread_mutex_unlock(&a.mu);
        if (calls > 0)
            break;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    assert_true(a.calls > 0);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    knut_net_http_server_stop(srv);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    pthread_join(t, NULL);
    double took = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    assert_true(took < 1.5);
    assert_int_equal(a.saw_stop, 1);
    assert_int_equal(f.rc, CURLE_OK);
    assert_string_equal(f.body.data, "event: bye\ndata: server stopping\n\n");
    assert_int_equal(frees(&a), 1);
    knut_buf_reset(&f.body);
    pthread_mutex_destroy(&a.mu);
}

/* A quiet text/event-stream gets a comment line after 5 s. */
static void test_keepalive(void **state)
{
    (void)state;
    app a;
    knut_net_http_server *srv = start(&a);
    fetch f;
    fetch_init(&f, srv, "/quiet");
    f.stop_after = ": keepalive\n\n";
    run_fetch(&f);
    assert_int_equal(f.rc, CURLE_WRITE_ERROR); /* closed by the client, as asked */
    assert_string_equal(f.body.data, ": keepalive\n\n");
    knut_buf_reset(&f.body);
    knut_net_http_server_stop(srv);
    assert_int_equal(a.frees, 1);
    pthread_mutex_destroy(&a.mu);
}

static void test_sse_event(void **state)
{
    (void)state;
    knut_buf b = KNUT_BUF_INIT;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_net_http_sse_event(&b, "7", "row", "x\r\ny\rz\n", &err), KNUT_OK);
    assert_string_equal(b.data, "id: 7\nevent: row\ndata: x\ndata: y\ndata: z\ndata: \n\n");
    knut_buf_clear(&b);
    assert_int_equal(knut_net_http_sse_event(&b, NULL, NULL, NULL, &err), KNUT_OK);
    assert_string_equal(b.data, "data: \n\n");
    assert_int_equal(knut_net_http_sse_event(&b, "1\n2", NULL, "d", &err), KNUT_EINVAL);
    assert_int_equal(knut_net_http_sse_event(&b, NULL, "a\rb", "d", &err), KNUT_EINVAL);
    assert_string_equal(b.data, "data: \n\n");
    knut_buf_reset(&b);

    /* an event that does not fit is not written, and the buffer stays usable */
    knut_buf_init(&b, 20);
    assert_int_equal(knut_net_http_sse_event(&b, NULL, NULL, "0123456789", &err), KNUT_OK);
    assert_int_equal(b.len, 18);
    assert_int_equal(knut_net_http_sse_event(&b, NULL, NULL, "x", &err), KNUT_ETOOBIG);
    assert_non_null(strstr(err.message, "20-byte buffer"));
    assert_int_equal(b.len, 18);
    assert_int_equal(b.error, KNUT_OK);
    knut_buf_reset(&b);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sse_event),
        cmocka_unit_test(test_events),
        cmocka_unit_test(test_wake),
        cmocka_unit_test(test_bound),
        cmocka_unit_test(test_stop_while_open),
        cmocka_unit_test(test_keepalive),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
