/*
 * The HTTP client wrapper over libcurl: one easy handle per client (it
 * keeps the connection alive between requests), timeouts, a hard cap on
 * the response body, no redirects, http/https only.
 *
 * Secrets (URL userinfo, bearer tokens, passwords) live only in the curl
 * handle and in buffers that are wiped; every message names the peer as
 * scheme://host:port from the parsed URL, never the URL as given.
 */
#include <curl/curl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "knut/net.h"

struct knut_net_http_client {
    CURL *curl;
    char *base;    /* base URL without a trailing slash (may hold userinfo) */
    char peer[256];
    knut_net_http_options o;
    struct curl_slist *auth;  /* the Authorization header, or NULL */
    char errbuf[CURL_ERROR_SIZE];
};

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc = CURLE_OK;

/* curl_global_init is not thread-safe on older libcurl: run it once. */
static void global_init(void)
{
    global_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}


static void auth_clear(knut_net_http_client *c)
{
    for (struct curl_slist *l = c->auth; l; l = l->next) {
        volatile char *p = l->data;
        while (*p)
            *p++ = 0;
    }
    curl_slist_free_all(c->auth);
    c->auth = NULL;
}

/* scheme://host[:port] of url, or an error when it is not http(s). */
static knut_status parse_peer(knut_net_http_client *c, const char *url, knut_error *err)
{
    CURLU *u = curl_url();
    char *scheme = NULL, *host = NULL, *port = NULL;
    knut_status st = KNUT_OK;
    if (!u)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK) {
        st = knut_error_set(err, KNUT_EINVAL, "not a valid http(s) URL (expected http://host:port)");
        goto cleanup;
    }
    if (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0) {
        st = knut_error_set(err, KNUT_EINVAL, "URL scheme '%.16s' is not http or https", scheme);
        goto cleanup;
    }
    curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT);
    snprintf(c->peer, sizeof c->peer, "%s://%s:%s", scheme, host, port ? port : "?");
cleanup:
    curl_free(scheme);
    curl_free(host);
    curl_free(port);
    curl_url_cleanup(u);
    return st;
}

knut_status knut_net_http_client_new(knut_net_http_client **out, const char *base_url,
                                 const knut_net_http_options *o, knut_error *err)
{
    KNUT_ASSERT_ARG(err, out && base_url);
    *out = NULL;
    KNUT_CHECK_VERSION(o, KNUT_NET_HTTP_OPTIONS_VERSION, err);
    pthread_once(&global_once, global_init);
    if (global_rc != CURLE_OK)
        return knut_error_set(err, KNUT_ERROR, "libcurl: %s", curl_easy_strerror(global_rc));
    knut_net_http_client *c = calloc(1, sizeof *c);
    if (!c)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    knut_net_http_options def = KNUT_NET_HTTP_OPTIONS_INIT;
    c->o = o ? *o : def;
    if (c->o.connect_timeout_ms <= 0)
        c->o.connect_timeout_ms = 5000;
    if (c->o.timeout_ms <= 0)
        c->o.timeout_ms = 30000;
    if (c->o.max_response == 0)
        c->o.max_response = KNUT_NET_HTTP_MAX_RESPONSE;
    knut_status st = parse_peer(c, base_url, err);
    if (st != KNUT_OK)
        goto cleanup;
    size_t n = strlen(base_url);
    while (n > 0 && base_url[n - 1] == '/')
        n--;
    c->base = strndup(base_url, n);
    c->curl = curl_easy_init();
    if (!c->base || !c->curl) {
        st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
        goto cleanup;
    }
cleanup:
    if (st != KNUT_OK) {
        knut_net_http_client_free(c);
        return st;
    }
    *out = c;
    return KNUT_OK;
}

void knut_net_http_client_free(knut_net_http_client *c)
{
    if (!c)
        return;
    auth_clear(c);
    if (c->curl)
        curl_easy_cleanup(c->curl);
    knut_net_secret_free(c->base);
    free(c);
}

const char *knut_net_http_client_peer(const knut_net_http_client *c)
{
    return c ? c->peer : "";
}

static knut_status set_auth(knut_net_http_client *c, const char *value, knut_error *err)
{
    auth_clear(c);
    if (!value)
        return KNUT_OK;
    if (!(c->auth = curl_slist_append(NULL, value)))
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    return KNUT_OK;
}

knut_status knut_net_http_client_set_bearer(knut_net_http_client *c, const char *token, knut_error *err)
{
    KNUT_ASSERT_ARG(err, c);
    if (!token)
        return set_auth(c, NULL, err);
    if (strpbrk(token, "\r\n"))
        return knut_error_set(err, KNUT_EINVAL, "%s: a bearer token cannot hold a line break",
                              c->peer);
    knut_buf b = KNUT_BUF_INIT;
    knut_buf_printf(&b, "Authorization: Bearer %s", token);
    knut_status st = knut_buf_check(&b, err);
    if (st == KNUT_OK)
        st = set_auth(c, b.data, err);
    knut_net_secret_free(knut_buf_detach(&b, NULL));
    return st;
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

knut_status knut_net_http_client_set_basic(knut_net_http_client *c, const char *user,
                                       const char *password, knut_error *err)
{
    KNUT_ASSERT_ARG(err, c);
    if (!user)
        return set_auth(c, NULL, err);
    knut_buf raw = KNUT_BUF_INIT, hdr = KNUT_BUF_INIT;
    knut_buf_printf(&raw, "%s:%s", user, password ? password : "");
    knut_buf_puts(&hdr, "Authorization: Basic ");
    const unsigned char *p = (const unsigned char *)(raw.data ? raw.data : "");
    for (size_t i = 0; i < raw.len; i += 3) {
        unsigned v = (unsigned)p[i] << 16 | (i + 1 < raw.len ? (unsigned)p[i + 1] << 8 : 0) |
                     (i + 2 < raw.len ? p[i + 2] : 0);
        char q[4] = {b64[v >> 18 & 63], b64[v >> 12 & 63],
                     i + 1 < raw.len ? b64[v >> 6 & 63] : '=', i + 2 < raw.len ? b64[v & 63] : '='};
        knut_buf_append(&hdr, q, 4);
    }
    knut_status st = knut_buf_check(&raw, err);
    if (st == KNUT_OK)
        st = knut_buf_check(&hdr, err);
    if (st == KNUT_OK)
        st = set_auth(c, hdr.data, err);
    knut_net_secret_free(knut_buf_detach(&raw, NULL));
    knut_net_secret_free(knut_buf_detach(&hdr, NULL));
    return st;
}

void knut_net_http_response_reset(knut_net_http_response *r)
{
    if (!r)
        return;
    r->status = 0;
    knut_buf_reset(&r->body);
}

typedef struct sink_ctx {
    knut_buf *body;
    int too_big;
} sink_ctx;

static size_t on_data(char *ptr, size_t size, size_t n, void *ud)
{
    sink_ctx *s = ud;
    if (knut_buf_append(s->body, ptr, size * n) != KNUT_OK) {
        s->too_big = s->body->error == KNUT_ETOOBIG;
        return 0; /* makes curl stop with CURLE_WRITE_ERROR */
    }
    return size * n;
}

static int on_progress(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
    const knut_net_http_client *c = ud;
    return c->o.cancel && c->o.cancel(c->o.cancel_ctx) ? 1 : 0;
}

/* Path for messages: up to the query (query values may be anything). */
static int path_len(const char *path)
{
    size_t n = strcspn(path, "?");
    return (int)(n > 200 ? 200 : n);
}

knut_status knut_net_http_client_request(knut_net_http_client *c, const char *method, const char *path,
                                     const char *content_type, const void *body, size_t len,
                                     knut_net_http_response *resp, knut_error *err)
{
    KNUT_ASSERT_ARG(err, c && method && path && resp);
    knut_buf url = KNUT_BUF_INIT;
    struct curl_slist *hdrs = NULL;
    knut_status st = KNUT_OK;
    knut_net_http_response_reset(resp);
    knut_buf_init(&resp->body, c->o.max_response);
    sink_ctx sink = {&resp->body, 0};
    knut_buf_printf(&url, "%s%s%s", c->base, path[0] == '/' ? "" : "/", path);
    if ((st = knut_buf_check(&url, err)) != KNUT_OK)
        goto cleanup;
    char ct[128];
    if (body) {
        snprintf(ct, sizeof ct, "Content-Type: %s", content_type ? content_type : "application/json");
        hdrs = curl_slist_append(hdrs, ct);
    }
    hdrs = curl_slist_append(hdrs, "Accept: application/json");
    hdrs = curl_slist_append(hdrs, "Expect:"); /* no 100-continue round trip */
    for (struct curl_slist *a = c->auth; a; a = a->next)
        hdrs = curl_slist_append(hdrs, a->data);
    if (!hdrs) {
        st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
        goto cleanup;
    }
    CURL *h = c->curl;
    curl_easy_reset(h); /* keeps the connection cache, drops the last request's options */
    c->errbuf[0] = 0;
    curl_easy_setopt(h, CURLOPT_URL, url.data);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L); /* threads: no SIGALRM for DNS timeouts */
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)c->o.connect_timeout_ms);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)c->o.timeout_ms);
    curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)c->o.max_response);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "knut/" KNUT_VERSION);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, c->errbuf);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &sink);
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, c);
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    if (body) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, (const char *)body);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    } else if (strcmp(method, "GET") == 0) {
        curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
    }
    CURLcode rc = curl_easy_perform(h);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &resp->status);
    if (rc == CURLE_OK)
        goto cleanup;
    if (sink.too_big || rc == CURLE_FILESIZE_EXCEEDED)
        st = knut_error_set(err, KNUT_ETOOBIG, "%s: %s %.*s: response over the %zu-byte cap",
                            c->peer, method, path_len(path), path, c->o.max_response);
    else if (rc == CURLE_ABORTED_BY_CALLBACK)
        st = knut_error_set(err, KNUT_ECANCELLED, "%s: %s %.*s: cancelled", c->peer, method,
                            path_len(path), path);
    else
        /* curl's error buffer names host and port at most, never headers */
        st = knut_error_set(err, KNUT_EPEER, "%s: %s %.*s: %s", c->peer, method, path_len(path),
                            path, c->errbuf[0] ? c->errbuf : curl_easy_strerror(rc));
cleanup:
    if (c->curl)
        curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, NULL);
    /* the list holds a copy of the Authorization header */
    for (struct curl_slist *l = hdrs; l; l = l->next) {
        volatile char *p = l->data;
        while (*p)
            *p++ = 0;
    }
    curl_slist_free_all(hdrs);
    knut_buf_reset(&url);
    return st;
}

knut_status knut_net_http_client_request_json(knut_net_http_client *c, const char *method,
                                              const char *path, const char *json, long *status,
                                              knut_buf *out, knut_error *err)
{
    KNUT_ASSERT_ARG(err, c && method && path && status);
    knut_net_http_response r = KNUT_NET_HTTP_RESPONSE_INIT;
    *status = 0;
    if (out)
        knut_buf_clear(out);
    knut_status st = knut_net_http_client_request(c, method, path, NULL, json,
                                                  json ? strlen(json) : 0, &r, err);
    *status = r.status;
    if (st == KNUT_OK && out && r.status >= 200 && r.status <= 299 && r.body.len > 0) {
        knut_buf_append(out, r.body.data, r.body.len);
        st = knut_buf_check(out, err);
        if (st != KNUT_OK)
            knut_error_prefix(err, "%s: %s %.*s: ", c->peer, method, path_len(path), path);
    }
    knut_net_http_response_reset(&r);
    return st;
}

char *knut_net_http_escape(const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = strlen(s);
    char *o = malloc(3 * n + 1), *p = o;
    if (!o)
        return NULL;
    for (const unsigned char *q = (const unsigned char *)s; *q; q++) {
        if ((*q >= 'A' && *q <= 'Z') || (*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') ||
            *q == '-' || *q == '.' || *q == '_' || *q == '~') {
            *p++ = (char)*q;
        } else {
            *p++ = '%';
            *p++ = hex[*q >> 4];
            *p++ = hex[*q & 15];
        }
    }
    *p = 0;
    return o;
}
