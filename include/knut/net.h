/*
 * knut net: the network transports every other part talks through. An
 * HTTP client over libcurl (REST peers such as Airflow), a small HTTP
 * server over libmicrohttpd (knut sync's /metrics), redis:// URL parsing
 * with the wiping free for secrets (every Valkey/FalkorDB client).
 *
 * Nothing here exposes a third-party type: bodies are bytes or text, so a
 * program that includes knut.h needs none of those libraries' headers.
 */
#ifndef KNUT_NET_H
#define KNUT_NET_H

#include <stddef.h>
#include <stdint.h>

#include "knut/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- HTTP client (src/net/http_client.c, libcurl) ---------------------- */

/*
 * A small HTTP/1.1 client for talking to REST peers (Airflow, ...). One
 * client is one connection cache and belongs to one thread at a time.
 * Requests have a connect and a total timeout, the response body has a
 * hard size cap, redirects are not followed (credentials never travel to
 * another host) and only http/https are spoken. Error messages name the
 * peer as scheme://host:port/path only: credentials in the URL, headers
 * and bodies never appear in them.
 */
typedef struct knut_net_http_client knut_net_http_client;

#define KNUT_NET_HTTP_OPTIONS_VERSION 1
typedef struct knut_net_http_options {
    int version;                /* KNUT_NET_HTTP_OPTIONS_VERSION */
    int64_t connect_timeout_ms; /* 0: 5000 */
    int64_t timeout_ms;         /* whole request; 0: 30000 */
    size_t max_response;        /* response body cap; 0: KNUT_NET_HTTP_MAX_RESPONSE */
    /* Polled during a transfer; returning non-zero aborts it with
     * KNUT_ECANCELLED (a shutdown that must not wait for a timeout). */
    int (*cancel)(void *ctx);
    void *cancel_ctx;
} knut_net_http_options;
#define KNUT_NET_HTTP_OPTIONS_INIT {KNUT_NET_HTTP_OPTIONS_VERSION, 0, 0, 0, NULL, NULL}
#define KNUT_NET_HTTP_MAX_RESPONSE ((size_t)4 << 20)

typedef struct knut_net_http_response {
    long status;   /* HTTP status; 0 before a response */
    knut_buf body; /* capped at max_response */
} knut_net_http_response;
#define KNUT_NET_HTTP_RESPONSE_INIT {0, KNUT_BUF_INIT}
KNUT_EXTERN void knut_net_http_response_reset(knut_net_http_response *r);

/* base_url: http[s]://host[:port][/prefix]; request paths are appended. */
KNUT_EXTERN knut_status knut_net_http_client_new(knut_net_http_client **out,
                                                 const char *base_url,
                                                 const knut_net_http_options *o,
                                                 knut_error *err);
KNUT_EXTERN void knut_net_http_client_free(knut_net_http_client *c);
/* Authorization for the following requests: a bearer token, HTTP Basic,
 * or none (both NULL). Secrets are copied and wiped on change and free. */
KNUT_EXTERN knut_status knut_net_http_client_set_bearer(knut_net_http_client *c,
                                                        const char *token, knut_error *err);
KNUT_EXTERN knut_status knut_net_http_client_set_basic(knut_net_http_client *c,
                                                       const char *user, const char *password,
                                                       knut_error *err);
/* The peer as shown in messages: scheme://host:port (no credentials). */
KNUT_EXTERN const char *knut_net_http_client_peer(const knut_net_http_client *c);

/*
 * One request. Any HTTP status is KNUT_OK (the caller judges resp->status);
 * transport failures are KNUT_EPEER (connect, reset, timeout), a body over
 * the cap KNUT_ETOOBIG, a cancel KNUT_ECANCELLED. body may be NULL (no
 * body); content_type NULL means application/json when there is a body.
 */
KNUT_EXTERN knut_status knut_net_http_client_request(knut_net_http_client *c, const char *method,
                                                     const char *path, const char *content_type,
                                                     const void *body, size_t len,
                                                     knut_net_http_response *resp,
                                                     knut_error *err);

/*
 * A JSON request as text, so this header names no JSON library: json (may
 * be NULL: no body) is sent as application/json; *status gets the HTTP
 * status; out (may be NULL: not wanted) gets the body of a 2xx reply and
 * is left empty for any other status. Parsing is the caller's (with its
 * own JSON library), and so is wiping a body that holds a secret.
 */
KNUT_EXTERN knut_status knut_net_http_client_request_json(knut_net_http_client *c,
                                                          const char *method, const char *path,
                                                          const char *json, long *status,
                                                          knut_buf *out, knut_error *err);

/* Percent-encodes s for a URL query value or path segment (RFC 3986
 * unreserved characters stay); caller frees. NULL when out of memory. */
KNUT_EXTERN char *knut_net_http_escape(const char *s);

/* ---- HTTP server (src/net/http_server.c, libmicrohttpd) ---------------- */

/*
 * A small read-only HTTP/1.1 server for live endpoints (knut sync's
 * /metrics, Server-Sent Events). Each connection is served by its own
 * thread (at most 32 connections are open at once, each closed after 10 s
 * idle), and the handler runs on that thread: handlers must be
 * thread-safe. Only GET and HEAD reach the handler: other methods get 405,
 * a request with a body 413, request headers beyond
 * KNUT_NET_HTTP_SERVER_MAX_REQUEST bytes are refused by the library. The
 * address is IP:PORT ("[::1]:PORT" for IPv6), numeric only, bound as
 * given: callers choose loopback unless told otherwise.
 */
typedef struct knut_net_http_server knut_net_http_server;
#define KNUT_NET_HTTP_SERVER_MAX_REQUEST ((size_t)16 << 10)

/*
 * A streamed reply (Server-Sent Events and the like): the server calls the
 * stream function on the connection's thread each time the previous bytes
 * are sent. It appends the next bytes to out, which starts empty each
 * call and is capped at KNUT_NET_HTTP_STREAM_MAX_BUFFER (what one
 * connection holds unsent), and returns
 *   KNUT_OK      out holds the next bytes (empty: as KNUT_EAGAIN),
 *   KNUT_EAGAIN  nothing yet: called again after up to 250 ms, or at once
 *                after knut_net_http_server_wake() or a stop,
 *   KNUT_EOF     the body ends after what out holds,
 *   any error    the connection is dropped (so is a full out).
 * It must not block: wait by returning KNUT_EAGAIN. Once
 * knut_net_http_stream_stopping(s) is true the call is the last one (write
 * a goodbye event if wanted); the stream then ends whatever is returned.
 * A text/event-stream that sends nothing for 5 s gets a comment line
 * (": keepalive"), which also finds clients that went away.
 */
typedef struct knut_net_http_stream knut_net_http_stream;
typedef knut_status (*knut_net_http_stream_fn)(void *ctx, knut_net_http_stream *s,
                                               knut_buf *out);
#define KNUT_NET_HTTP_STREAM_MAX_BUFFER ((size_t)64 << 10)

/* What a handler answers. body starts empty, capped at 16 MiB (a body over
 * the cap turns into a 500); content_type NULL: text/plain. A handler that
 * sets stream answers with a streamed body instead (body is ignored;
 * content_type NULL: text/event-stream; HEAD gets the headers only).
 * stream_free (may be NULL) gets stream_ctx exactly once, when the stream
 * is over or was never started. */
typedef struct knut_net_http_reply {
    int status;               /* HTTP status; 0: 200 */
    const char *content_type; /* static string */
    knut_buf body;
    knut_net_http_stream_fn stream;
    void *stream_ctx;
    void (*stream_free)(void *stream_ctx);
} knut_net_http_reply;

/* path excludes the query string. Runs on the connection's thread. */
typedef void (*knut_net_http_handler)(void *ctx, const char *method, const char *path,
                                      knut_net_http_reply *reply);

/* Binds addr ("127.0.0.1:0": an ephemeral port) and starts serving. */
KNUT_EXTERN knut_status knut_net_http_server_start(knut_net_http_server **out, const char *addr,
                                                   knut_net_http_handler fn, void *ctx,
                                                   knut_error *err);
/* The bound port (the real one when asked for port 0). */
KNUT_EXTERN int knut_net_http_server_port(const knut_net_http_server *s);
/* The bound address as IP:PORT ("[v6]:PORT"). */
KNUT_EXTERN const char *knut_net_http_server_addr(const knut_net_http_server *s);
/* Calls every waiting stream function at once (new data to send); any
 * thread, NULL-safe. */
KNUT_EXTERN void knut_net_http_server_wake(knut_net_http_server *s);
/* Stops: open streams get their last call and end (waited for at most
 * 2 s), then requests in progress finish and the threads are joined;
 * NULL-safe. */
KNUT_EXTERN void knut_net_http_server_stop(knut_net_http_server *s);

/* Non-zero once the stream's server is stopping. */
KNUT_EXTERN int knut_net_http_stream_stopping(const knut_net_http_stream *s);
/* Bytes sent on the stream so far. */
KNUT_EXTERN uint64_t knut_net_http_stream_sent(const knut_net_http_stream *s);

/*
 * Appends one Server-Sent Event to out: "id: ID" and "event: EVENT" lines
 * (each omitted when NULL), one "data: " line per line of data (split on
 * \n, \r\n and \r; NULL is empty data), then the blank line that ends
 * the event. id and event cannot hold a line break (KNUT_EINVAL). An
 * event that would take out over its cap is not written at all
 * (KNUT_ETOOBIG, out unchanged and without a sticky error): send what out
 * holds and write the event on the next call.
 */
KNUT_EXTERN knut_status knut_net_http_sse_event(knut_buf *out, const char *id, const char *event,
                                                const char *data, knut_error *err);

/* ---- redis:// URLs and secrets (src/net/url.c) ------------------------- */

/* Frees a secret after overwriting it with zeros; NULL-safe. */
KNUT_EXTERN void knut_net_secret_free(char *s);

/* redis://[[user]:password@]host[:port][/], host may be [v6]. */
typedef struct knut_net_redis_url {
    char *host;
    int port;       /* 6379 when not given */
    char *user;     /* NULL: none (percent-decoded) */
    char *password; /* NULL: none (percent-decoded; wiped on reset) */
} knut_net_redis_url;

/* Parses url; errors say what is wrong and never quote the URL (it may
 * hold a password). Callers prefix what the URL is for. */
KNUT_EXTERN knut_status knut_net_redis_url_parse(knut_net_redis_url *u, const char *url,
                                                 knut_error *err);
KNUT_EXTERN void knut_net_redis_url_reset(knut_net_redis_url *u);

#ifdef __cplusplus
}
#endif

#endif /* KNUT_NET_H */
