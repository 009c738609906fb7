/*
 * The gRPC server: bound at creation, methods dispatched by full name from
 * our own table (any other name gets UNIMPLEMENTED), and a fixed set of
 * call threads. Each thread owns a completion queue registered with the
 * server and serves one call at a time on it: it asks for a call, runs
 * the handler, which blocks on the same queue for each operation, and
 * asks again. Shutdown: grpc_server_shutdown_and_notify, a grace bound,
 * then grpc_server_cancel_all_calls; the threads end when their request
 * for a call fails.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "grpc_int.h"

#define MAX_METHODS 256
#define DEFAULT_THREADS 2
#define FREE_GRACE_MS 5000

typedef struct method {
    char *name;
    knut_net_grpc_handler fn;
    void *ctx;
} method;

typedef struct worker {
    knut_net_grpc_server *srv;
    grpc_completion_queue *cq;
    pthread_t thread;
    int running;
    char tag_request;
} worker;

struct knut_net_grpc_server {
    grpc_server *server;
    int port;
    size_t max_send;
    int nthreads;
    method *methods;
    size_t n_methods;
    worker *workers;
    int started, shut;
    atomic_int stopping;
};

int knut_net__grpc_server_stopping(const knut_net_grpc_server *s)
{
    return atomic_load(&((knut_net_grpc_server *)s)->stopping);
}

knut_status knut_net_grpc_server_new(knut_net_grpc_server **out,
                                     const knut_net_grpc_server_options *o, knut_error *err)
{
    KNUT_ASSERT_ARG(err, out);
    *out = NULL;
    KNUT_CHECK_VERSION(o, KNUT_NET_GRPC_SERVER_OPTIONS_VERSION, err);
    knut_net_grpc_server_options def = KNUT_NET_GRPC_SERVER_OPTIONS_INIT;
    if (!o)
        o = &def;
    const char *addr = o->addr ? o->addr : "127.0.0.1:0";
    size_t max_recv = o->max_receive ? o->max_receive : KNUT_NET_GRPC_DEFAULT_MAX_MESSAGE;
    size_t max_send = o->max_send ? o->max_send : KNUT_NET_GRPC_DEFAULT_MAX_MESSAGE;
    if (max_recv > INT32_MAX || max_send > INT32_MAX || o->threads < 0 ||
        o->threads > KNUT_NET_GRPC_MAX_THREADS)
        return knut_error_set(err, KNUT_EINVAL, "gRPC server: message caps up to 2 GiB, "
                                                "threads 0..%d", KNUT_NET_GRPC_MAX_THREADS);
    knut_net_grpc_server *s = calloc(1, sizeof *s);
    if (!s)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    knut_net__grpc_ref();
    s->max_send = max_send;
    s->nthreads = o->threads ? o->threads : DEFAULT_THREADS;
    grpc_arg args[2] = {
        {GRPC_ARG_INTEGER, GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH, {.integer = (int)max_recv}},
        {GRPC_ARG_INTEGER, GRPC_ARG_MAX_SEND_MESSAGE_LENGTH, {.integer = (int)max_send}},
    };
    grpc_channel_args ca = {2, args};
    grpc_server_credentials *creds = NULL;
    knut_status st = knut_net__grpc_server_creds(o->tls, &creds, err);
    if (st != KNUT_OK)
        goto cleanup;
    s->server = grpc_server_create(&ca, NULL);
    s->port = s->server ? grpc_server_add_http2_port(s->server, addr, creds) : 0;
    grpc_server_credentials_release(creds);
    if (s->port <= 0)
        st = knut_error_set(err, KNUT_EIO, "gRPC server: cannot bind %s (in use, or not a "
                                           "host:port of this machine)", addr);
cleanup:
    if (st != KNUT_OK) {
        knut_net_grpc_server_free(s);
        return st;
    }
    *out = s;
    return KNUT_OK;
}

knut_status knut_net_grpc_server_add_method(knut_net_grpc_server *s, const char *name,
                                            knut_net_grpc_handler fn, void *ctx, knut_error *err)
{
    KNUT_ASSERT_ARG(err, s && name && fn);
    if (s->started)
        return knut_error_set(err, KNUT_EINVAL, "gRPC server: methods are added before start");
    const char *slash = strchr(name + (name[0] == '/'), '/');
    if (name[0] != '/' || !slash || slash == name + 1 || !slash[1] || strchr(slash + 1, '/') ||
        strlen(name) >= sizeof ((knut_net_grpc_call *)0)->method)
        return knut_error_set(err, KNUT_EINVAL, "gRPC method '%.300s': expected "
                                                "/package.Service/Method", name);
    for (size_t i = 0; i < s->n_methods; i++)
        if (strcmp(s->methods[i].name, name) == 0)
            return knut_error_set(err, KNUT_EINVAL, "gRPC method '%s' added twice", name);
    if (s->n_methods == MAX_METHODS)
        return knut_error_set(err, KNUT_ETOOBIG, "gRPC server: over %d methods", MAX_METHODS);
    method *m = realloc(s->methods, (s->n_methods + 1) * sizeof *m);
    if (!m)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    s->methods = m;
    if (!(m[s->n_methods].name = strdup(name)))
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    m[s->n_methods].fn = fn;
    m[s->n_methods].ctx = ctx;
    s->n_methods++;
    return KNUT_OK;
}

static const method *find_method(const knut_net_grpc_server *s, const char *name)
{
    for (size_t i = 0; i < s->n_methods; i++)
        if (strcmp(s->methods[i].name, name) == 0)
            return &s->methods[i];
    return NULL;
}

/* One call, from its arrival to its end. */
static void serve(worker *w, grpc_call *call, const grpc_call_details *det,
                  const grpc_metadata_array *md)
{
    knut_net_grpc_call c = {0};
    knut_error err = KNUT_ERROR_INIT;
    c.srv = w->srv;
    c.call = call;
    c.cq = w->cq;
    c.deadline = det->deadline;
    c.max_send = w->srv->max_send;
    knut_status st = knut_net__grpc_call_begin(&c, &err);
    if (st != KNUT_OK) {
        grpc_call_unref(call); /* nothing was started on it */
        return;
    }
    const method *m = NULL;
    if (GRPC_SLICE_LENGTH(det->method) >= sizeof c.method)
        st = knut_error_set(&err, KNUT_EUNSUPPORTED, "Method not found (name too long)");
    else {
        knut_net__grpc_slice_str(det->method, c.method, sizeof c.method);
        if (!(m = find_method(w->srv, c.method)))
            st = knut_error_set(&err, KNUT_EUNSUPPORTED, "Method not found: %s", c.method);
    }
    if (st == KNUT_OK && (st = knut_net__grpc_md_in(md, &c.md, &err)) != KNUT_OK)
        knut_error_prefix(&err, "request metadata: ");
    if (st == KNUT_OK)
        st = m->fn(m->ctx, &c, &err);
    knut_net__grpc_call_end(&c, st, &err);
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    for (;;) {
        grpc_call *call = NULL;
        grpc_call_details det;
        grpc_metadata_array md;
        grpc_call_details_init(&det);
        grpc_metadata_array_init(&md);
        int got = 0;
        if (grpc_server_request_call(w->srv->server, &call, &det, &md, w->cq, w->cq,
                                     &w->tag_request) == GRPC_CALL_OK) {
            /* nothing else is outstanding on this queue between calls */
            grpc_event ev = grpc_completion_queue_next(w->cq, gpr_inf_future(GPR_CLOCK_REALTIME),
                                                       NULL);
            got = ev.type == GRPC_OP_COMPLETE && ev.tag == &w->tag_request && ev.success;
        }
        if (got)
            serve(w, call, &det, &md);
        grpc_call_details_destroy(&det);
        grpc_metadata_array_destroy(&md);
        if (!got)
            return NULL; /* the server shuts down */
    }
}

knut_status knut_net_grpc_server_start(knut_net_grpc_server *s, knut_error *err)
{
    KNUT_ASSERT_ARG(err, s);
    if (s->started || s->shut)
        return knut_error_set(err, KNUT_EINVAL, "gRPC server: already %s",
                              s->shut ? "shut down" : "started");
    if (!(s->workers = calloc((size_t)s->nthreads, sizeof *s->workers)))
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    for (int i = 0; i < s->nthreads; i++) {
        s->workers[i].srv = s;
        s->workers[i].cq = grpc_completion_queue_create_for_next(NULL);
        grpc_server_register_completion_queue(s->server, s->workers[i].cq, NULL);
    }
    grpc_server_start(s->server);
    s->started = 1;
    for (int i = 0; i < s->nthreads; i++) {
        if (pthread_create(&s->workers[i].thread, NULL, worker_main, &s->workers[i]) != 0) {
            knut_net_grpc_server_shutdown(s, 0);
            return knut_error_set(err, KNUT_ERROR, "gRPC server: cannot start a call thread");
        }
        s->workers[i].running = 1;
    }
    KNUT_LOG(KNUT_LOG_DEBUG, GRPC_LOG, "gRPC server on port %d, %d threads", s->port,
             s->nthreads);
    return KNUT_OK;
}

int knut_net_grpc_server_port(const knut_net_grpc_server *s)
{
    return s ? s->port : 0;
}

void knut_net_grpc_server_shutdown(knut_net_grpc_server *s, int64_t grace_ms)
{
    /* A server never started is shut down too: gRPC asserts when one that
     * holds a bound port is destroyed without it (an error between _new
     * and _start, such as a bad --metrics-addr, would abort). */
    if (!s || !s->server || s->shut)
        return;
    s->shut = 1;
    atomic_store(&s->stopping, 1);
    grpc_completion_queue *done = grpc_completion_queue_create_for_pluck(NULL);
    char tag;
    grpc_server_shutdown_and_notify(s->server, done, &tag);
    grpc_event ev = grpc_completion_queue_pluck(done, &tag,
                                                knut_net__grpc_deadline(grace_ms < 0 ? 0 : grace_ms),
                                                NULL);
    if (ev.type == GRPC_QUEUE_TIMEOUT) {
        KNUT_LOG(KNUT_LOG_INFO, GRPC_LOG, "gRPC server: grace over, cancelling the calls left");
        grpc_server_cancel_all_calls(s->server);
        grpc_completion_queue_pluck(done, &tag, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    }
    grpc_completion_queue_shutdown(done);
    grpc_completion_queue_destroy(done);
    for (int i = 0; s->workers && i < s->nthreads; i++) {
        worker *w = &s->workers[i];
        if (!w->cq)
            continue;
        if (w->running)
            pthread_join(w->thread, NULL);
        w->running = 0;
        grpc_completion_queue_shutdown(w->cq);
        while (grpc_completion_queue_next(w->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type !=
               GRPC_QUEUE_SHUTDOWN)
            ;
        grpc_completion_queue_destroy(w->cq);
        w->cq = NULL;
    }
}

void knut_net_grpc_server_free(knut_net_grpc_server *s)
{
    if (!s)
        return;
    knut_net_grpc_server_shutdown(s, FREE_GRACE_MS);
    if (s->server)
        grpc_server_destroy(s->server);
    for (size_t i = 0; i < s->n_methods; i++)
        free(s->methods[i].name);
    free(s->methods);
    free(s->workers);
    free(s);
    knut_net__grpc_unref();
}
