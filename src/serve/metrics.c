/*
 * knut serve's operations view: Prometheus metrics (requests by RPC and
 * status, rows and bytes sent, calls and streams in progress, latency
 * histograms, database reopens) served on --metrics-addr through the net
 * part's shared exposition code, and one JSON log line per request. Every
 * label takes values from fixed tables (the 9 Flight methods, the 17 gRPC
 * codes), so cardinality is bounded; no label or log field ever holds SQL,
 * a parameter, a token or a password.
 */
#include <stdlib.h>
#include <string.h>

#include "serve_int.h"

/* Call durations in seconds: catalog calls in milliseconds up to long exports. */
static const double BUCKETS[] = {0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                 1,     2.5,   5,    10,    30,    60,  300};
#define N_BUCKETS (sizeof BUCKETS / sizeof BUCKETS[0])
#define N_CODES 17

struct knut_serve__metrics {
    pthread_mutex_t mu;
    int64_t requests[KNUT_SERVE__N_METHODS][N_CODES];
    int64_t rows[KNUT_SERVE__N_METHODS], bytes[KNUT_SERVE__N_METHODS];
    int64_t active[KNUT_SERVE__N_METHODS];
    int64_t bucket[KNUT_SERVE__N_METHODS][N_BUCKETS + 1];
    int64_t count[KNUT_SERVE__N_METHODS];
    double sum[KNUT_SERVE__N_METHODS];
    knut_serve *s;
    knut_net_http_server *srv;
    knut_net_prom_endpoint endpoint;
};

knut_status knut_serve__metrics_new(knut_serve *s, knut_error *err)
{
    knut_serve__metrics *m = calloc(1, sizeof *m);
    if (!m)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    pthread_mutex_init(&m->mu, NULL);
    m->s = s;
    s->metrics = m;
    return KNUT_OK;
}

void knut_serve__metrics_free(knut_serve *s)
{
    knut_serve__metrics *m = s->metrics;
    if (!m)
        return;
    knut_net_http_server_stop(m->srv); /* no reader left after this */
    pthread_mutex_destroy(&m->mu);
    free(m);
    s->metrics = NULL;
}

void knut_serve__metrics_begin(knut_serve *s, int method)
{
    pthread_mutex_lock(&s->metrics->mu);
    s->metrics->active[method]++;
    pthread_mutex_unlock(&s->metrics->mu);
}

/* "DoGet" of "/arrow.flight.protocol.FlightService/DoGet". */
static const char *short_name(int method)
{
    const char *n = knut_serve__method_name(method);
    const char *slash = strrchr(n, '/');
    return slash ? slash + 1 : n;
}

void knut_serve__metrics_end(knut_serve *s, int method, const knut_serve__who *who, int code,
                             uint64_t bytes, int64_t ns)
{
    knut_serve__metrics *m = s->metrics;
    double secs = (double)ns / 1e9;
    if (code < 0 || code >= N_CODES)
        code = KNUT_NET_GRPC_UNKNOWN;
    pthread_mutex_lock(&m->mu);
    m->active[method]--;
    m->requests[method][code]++;
    m->rows[method] += who->rows;
    m->bytes[method] += (int64_t)bytes;
    m->bucket[method][knut_net_prom_bucket(BUCKETS, N_BUCKETS, secs)]++;
    m->count[method]++;
    m->sum[method] += secs;
    pthread_mutex_unlock(&m->mu);
    /* one line per request; the identity is a name of the auth file or a
     * certificate subject, never a credential */
    knut_log_field f[] = {
        KNUT_LF_STR("identity", who->name),
        KNUT_LF_STR("rpc", short_name(method)),
        KNUT_LF_STR("command", who->what ? who->what : ""),
        KNUT_LF_INT("rows", who->rows),
        KNUT_LF_INT("bytes", (int64_t)bytes),
        KNUT_LF_STR("status", knut_net_grpc_code_name(code)),
        KNUT_LF_DBL("duration_ms", (double)ns / 1e6),
    };
    knut_log_emit(KNUT_LOG_INFO, SERVE_LOG, f, sizeof f / sizeof f[0], "request");
}

static void per_method(knut_buf *b, const char *name, const char *type, const char *help,
                       const int64_t *v)
{
    knut_net_prom_head(b, name, type, help);
    for (int i = 0; i < KNUT_SERVE__N_METHODS; i++)
        knut_buf_printf(b, "%s{rpc=\"%s\"} %lld\n", name, short_name(i), (long long)v[i]);
}

static knut_status render(void *ctx, knut_buf *b, knut_error *err)
{
    knut_serve__metrics *m = ctx;
    (void)err;
    uint64_t gen = knut_serve__db_generation(m->s);
    pthread_mutex_lock(&m->mu);
    knut_net_prom_head(b, "knut_serve_requests_total", "counter",
                       "Flight calls ended, by RPC and gRPC status.");
    for (int i = 0; i < KNUT_SERVE__N_METHODS; i++)
        for (int c = 0; c < N_CODES; c++)
            if (m->requests[i][c] || c == 0)
                knut_buf_printf(b, "knut_serve_requests_total{rpc=\"%s\",code=\"%s\"} %lld\n",
                                short_name(i), knut_net_grpc_code_name(c),
                                (long long)m->requests[i][c]);
    per_method(b, "knut_serve_rows_sent_total", "counter", "Result rows sent.", m->rows);
    per_method(b, "knut_serve_bytes_sent_total", "counter",
               "Response message bytes sent (FlightData, infos, results).", m->bytes);
    per_method(b, "knut_serve_active_calls", "gauge", "Calls in progress.", m->active);
    knut_net_prom_head(b, "knut_serve_active_streams", "gauge",
                       "DoGet result streams in progress.");
    knut_buf_printf(b, "knut_serve_active_streams %lld\n",
                    (long long)m->active[KNUT_SERVE__METHOD_DOGET]);
    knut_net_prom_head(b, "knut_serve_request_duration_seconds", "histogram",
                       "Duration of Flight calls, by RPC.");
    for (int i = 0; i < KNUT_SERVE__N_METHODS; i++) {
        char labels[64];
        snprintf(labels, sizeof labels, "rpc=\"%s\"", short_name(i));
        knut_net_prom_histogram(b, "knut_serve_request_duration_seconds", labels, BUCKETS,
                                m->bucket[i], N_BUCKETS, m->count[i], m->sum[i]);
    }
    pthread_mutex_unlock(&m->mu);
    knut_net_prom_head(b, "knut_serve_database_reopens_total", "counter",
                       "Times the database was reopened after a fatal DuckDB error.");
    knut_buf_printf(b, "knut_serve_database_reopens_total %llu\n", (unsigned long long)gen);
    return KNUT_OK;
}

knut_status knut_serve__metrics_serve(knut_serve *s, const char *addr, knut_error *err)
{
    knut_serve__metrics *m = s->metrics;
    m->endpoint.render = render;
    m->endpoint.ctx = m;
    knut_status st = knut_net_prom_serve(&m->srv, addr, &m->endpoint, err);
    if (st != KNUT_OK)
        return knut_error_prefix(err, "serve: --metrics-addr ");
    /* tests and operators read the real port (asked 0) from this record */
    knut_log_emit(KNUT_LOG_INFO, SERVE_LOG,
                  (knut_log_field[]){KNUT_LF_STR("addr", knut_net_http_server_addr(m->srv)),
                                     KNUT_LF_INT("port", knut_net_http_server_port(m->srv))},
                  2, "metrics server listening");
    return KNUT_OK;
}
