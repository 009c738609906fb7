/*
 * Prometheus text exposition (format 0.0.4) shared by every /metrics of
 * knut: the HELP/TYPE head, label escaping, histogram series, and the
 * endpoint on the small HTTP server. Each part keeps its own counters and
 * lock; this file only writes them out.
 */
#include <stdio.h>
#include <string.h>

#include "knut/net.h"

void knut_net_prom_head(knut_buf *b, const char *name, const char *type, const char *help)
{
    knut_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

void knut_net_prom_label(knut_buf *b, const char *v)
{
    for (; v && *v; v++) {
        if (*v == '\\' || *v == '"')
            knut_buf_putc(b, '\\');
        if (*v == '\n')
            knut_buf_puts(b, "\\n");
        else
            knut_buf_putc(b, *v);
    }
}

size_t knut_net_prom_bucket(const double *bounds, size_t n, double v)
{
    size_t i = 0;
    while (i < n && v > bounds[i])
        i++;
    return i;
}

void knut_net_prom_histogram(knut_buf *b, const char *name, const char *labels,
                             const double *bounds, const int64_t *counts, size_t n,
                             int64_t count, double sum)
{
    int lab = labels && *labels;
    int64_t cum = 0;
    for (size_t i = 0; i < n; i++) {
        cum += counts[i];
        knut_buf_printf(b, "%s_bucket{%s%sle=\"%g\"} %lld\n", name, lab ? labels : "",
                        lab ? "," : "", bounds[i], (long long)cum);
    }
    knut_buf_printf(b, "%s_bucket{%s%sle=\"+Inf\"} %lld\n", name, lab ? labels : "",
                    lab ? "," : "", (long long)count);
    knut_buf_printf(b, "%s_sum%s%s%s %.6f\n", name, lab ? "{" : "", lab ? labels : "",
                    lab ? "}" : "", sum);
    knut_buf_printf(b, "%s_count%s%s%s %lld\n", name, lab ? "{" : "", lab ? labels : "",
                    lab ? "}" : "", (long long)count);
}

/* GET /metrics; every other path 404 (the server answers 405 to other methods). */
static void on_http(void *ctx, const char *method, const char *path, knut_net_http_reply *reply)
{
    (void)method;
    const knut_net_prom_endpoint *ep = ctx;
    if (strcmp(path, "/metrics") != 0) {
        reply->status = 404;
        knut_buf_puts(&reply->body, "not found: try /metrics\n");
        return;
    }
    knut_error err = KNUT_ERROR_INIT;
    reply->content_type = "text/plain; version=0.0.4; charset=utf-8";
    knut_status st = ep->render(ep->ctx, &reply->body, &err);
    if (st == KNUT_OK)
        st = knut_buf_check(&reply->body, &err);
    if (st != KNUT_OK) {
        reply->status = 500;
        knut_buf_clear(&reply->body);
        knut_buf_printf(&reply->body, "%s\n", err.message);
    }
}

knut_status knut_net_prom_serve(knut_net_http_server **out, const char *addr,
                                const knut_net_prom_endpoint *ep, knut_error *err)
{
    KNUT_ASSERT_ARG(err, out && addr && ep && ep->render);
    char full[300];
    /* a bare port: loopback, as every server of knut binds unless told */
    if (addr[0] && strspn(addr, "0123456789") == strlen(addr))
        snprintf(full, sizeof full, "127.0.0.1:%s", addr);
    else
        snprintf(full, sizeof full, "%s", addr);
    return knut_net_http_server_start(out, full, on_http, (void *)ep, err);
}
