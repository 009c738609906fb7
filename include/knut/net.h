/*
 * knut net: the network transports every other part talks through. An
 * HTTP client over libcurl (REST peers such as Airflow), a small HTTP
 * server over libmicrohttpd (knut sync's /metrics, Server-Sent Events),
 * redis:// URL parsing with the wiping free for secrets (every
 * Valkey/FalkorDB client), and gRPC servers and channels over the gRPC C
 * core (Flight SQL, Spark Connect).
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
/* Frees the body and zeroes the status (NULL-safe); r may be reused. */
KNUT_EXTERN void knut_net_http_response_reset(knut_net_http_response *r);

/* Creates a client for base_url, http[s]://host[:port][/prefix] (request
 * paths are appended); o may be NULL (defaults). The caller frees *out
 * with knut_net_http_client_free. Errors: KNUT_EINVAL (not an http/https
 * URL, options version), KNUT_ERROR (libcurl would not start),
 * KNUT_ENOMEM. */
KNUT_EXTERN knut_status knut_net_http_client_new(knut_net_http_client **out,
                                                 const char *base_url,
                                                 const knut_net_http_options *o,
                                                 knut_error *err);
/* Frees the client and wipes its secrets (NULL-safe). */
KNUT_EXTERN void knut_net_http_client_free(knut_net_http_client *c);
/* Authorization for the following requests: a bearer token, HTTP Basic,
 * or none (both NULL). Secrets are copied (the caller keeps its own) and
 * wiped on change and free. KNUT_ENOMEM is the only error. */
KNUT_EXTERN knut_status knut_net_http_client_set_bearer(knut_net_http_client *c,
                                                        const char *token, knut_error *err);
KNUT_EXTERN knut_status knut_net_http_client_set_basic(knut_net_http_client *c,
                                                       const char *user, const char *password,
                                                       knut_error *err);
/* The peer as shown in messages: scheme://host:port (no credentials);
 * owned by c. */
KNUT_EXTERN const char *knut_net_http_client_peer(const knut_net_http_client *c);

/*
 * One request. Any HTTP status is KNUT_OK (the caller judges resp->status);
 * transport failures are KNUT_EPEER (connect, reset, timeout), a body over
 * the cap KNUT_ETOOBIG, a cancel KNUT_ECANCELLED. body may be NULL (no
 * body); content_type NULL means application/json when there is a body.
 * body is borrowed; resp is the caller's (reset first, then filled: its
 * body capped at max_response; knut_net_http_response_reset it).
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
    /* Set by the server: the request's Last-Event-ID header (an SSE
     * client reconnecting), borrowed for the handler call; NULL: none. */
    const char *last_event_id;
} knut_net_http_reply;

/* path excludes the query string. Runs on the connection's thread. */
typedef void (*knut_net_http_handler)(void *ctx, const char *method, const char *path,
                                      knut_net_http_reply *reply);

/* Binds addr ("127.0.0.1:0": an ephemeral port) and starts serving; fn
 * and ctx are borrowed until knut_net_http_server_stop, which frees *out.
 * Errors: KNUT_EINVAL (addr not IP:PORT), KNUT_EIO (cannot bind or start;
 * names addr), KNUT_ENOMEM. */
KNUT_EXTERN knut_status knut_net_http_server_start(knut_net_http_server **out, const char *addr,
                                                   knut_net_http_handler fn, void *ctx,
                                                   knut_error *err);
/* The bound port (the real one when asked for port 0). */
KNUT_EXTERN int knut_net_http_server_port(const knut_net_http_server *s);
/* The bound address as IP:PORT ("[v6]:PORT"); owned by s. */
KNUT_EXTERN const char *knut_net_http_server_addr(const knut_net_http_server *s);
/* Calls every waiting stream function at once (new data to send); any
 * thread, NULL-safe. */
KNUT_EXTERN void knut_net_http_server_wake(knut_net_http_server *s);
/* Stops and frees s: open streams get their last call and end (waited
 * for at most 2 s), then requests in progress finish and the threads are
 * joined; NULL-safe. */
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

/* ---- Prometheus text exposition (src/net/prom.c) ---------------------- */

/*
 * The pieces of the text format 0.0.4 every /metrics of knut writes (knut
 * sync, knut serve), so names, escaping and histograms read the same, and
 * the endpoint that serves them. Appending to a knut_buf: its sticky error
 * is the caller's to check.
 */
/* "# HELP name help\n# TYPE name type\n". */
KNUT_EXTERN void knut_net_prom_head(knut_buf *b, const char *name, const char *type,
                                    const char *help);
/* A label value with backslash, double quote and newline escaped. */
KNUT_EXTERN void knut_net_prom_label(knut_buf *b, const char *v);
/* The series of a histogram: cumulative _bucket{labels,le=...} lines for
 * bounds[0..n) (counts[i]: observations in (bounds[i-1], bounds[i]], not
 * cumulative) and +Inf, then _sum and _count. labels: "k=\"v\"" text
 * already escaped, or NULL/"" for none. */
KNUT_EXTERN void knut_net_prom_histogram(knut_buf *b, const char *name, const char *labels,
                                         const double *bounds, const int64_t *counts, size_t n,
                                         int64_t count, double sum);
/* The index of the bucket v falls in (n: above every bound). */
KNUT_EXTERN size_t knut_net_prom_bucket(const double *bounds, size_t n, double v);
/* What /metrics answers: render appends the text to b (an error becomes
 * a 500 naming it); called on the HTTP server's threads. */
typedef struct knut_net_prom_endpoint {
    knut_status (*render)(void *ctx, knut_buf *b, knut_error *err);
    void *ctx;
} knut_net_prom_endpoint;
/* Serves GET /metrics on addr ("IP:PORT"; a bare "PORT" is 127.0.0.1:PORT,
 * loopback) with ep's text (other paths 404), on a knut_net_http_server
 * the caller stops with knut_net_http_server_stop; ep is borrowed until
 * then. Errors as knut_net_http_server_start. */
KNUT_EXTERN knut_status knut_net_prom_serve(knut_net_http_server **out, const char *addr,
                                            const knut_net_prom_endpoint *ep, knut_error *err);

/* ---- redis:// URLs and secrets (src/net/url.c) ------------------------- */

/* Frees a secret after overwriting it with zeros; NULL-safe. */
KNUT_EXTERN void knut_net_secret_free(char *s);
/* The secret in the file at path (src/net/secret.c): its one line, the
 * newline trimmed, into *out (free it with knut_net_secret_free). Errors
 * name the file, never what it holds: knut_file_read's (a file over 4 KiB:
 * KNUT_ETOOBIG), KNUT_EINVAL (empty, or more than one line), KNUT_ENOMEM. */
KNUT_EXTERN knut_status knut_net_secret_file_read(const char *path, char **out, knut_error *err);

/* redis://[[user]:password@]host[:port][/], host may be [v6]. */
typedef struct knut_net_redis_url {
    char *host;
    int port;       /* 6379 when not given */
    char *user;     /* NULL: none (percent-decoded) */
    char *password; /* NULL: none (percent-decoded; wiped on reset) */
} knut_net_redis_url;

/* Parses url into *u, whose strings the caller frees with
 * knut_net_redis_url_reset (also after an error). KNUT_EINVAL says what is
 * wrong and never quotes the URL (it may hold a password); KNUT_ENOMEM.
 * Callers prefix what the URL is for. */
KNUT_EXTERN knut_status knut_net_redis_url_parse(knut_net_redis_url *u, const char *url,
                                                 knut_error *err);
/* Frees u's strings, wiping the secrets (NULL-safe); u may be reused. */
KNUT_EXTERN void knut_net_redis_url_reset(knut_net_redis_url *u);

/* ---- gRPC (src/net/grpc_*.c, the gRPC C core) -------------------------- */

/*
 * The gRPC transport that the Flight SQL server and the Spark Connect
 * client share. Messages are raw bytes: protobuf encoding is the caller's.
 * This header names no gRPC type (status codes are the protocol's numbers,
 * deadlines milliseconds), so including it needs no gRPC headers.
 */

/* gRPC status codes, with the protocol's numbers. */
#define KNUT_NET_GRPC_CODE_MAP(X)        \
    X(OK, 0)                             \
    X(CANCELLED, 1)                      \
    X(UNKNOWN, 2)                        \
    X(INVALID_ARGUMENT, 3)               \
    X(DEADLINE_EXCEEDED, 4)              \
    X(NOT_FOUND, 5)                      \
    X(ALREADY_EXISTS, 6)                 \
    X(PERMISSION_DENIED, 7)              \
    X(RESOURCE_EXHAUSTED, 8)             \
    X(FAILED_PRECONDITION, 9)            \
    X(ABORTED, 10)                       \
    X(OUT_OF_RANGE, 11)                  \
    X(UNIMPLEMENTED, 12)                 \
    X(INTERNAL, 13)                      \
    X(UNAVAILABLE, 14)                   \
    X(DATA_LOSS, 15)                     \
    X(UNAUTHENTICATED, 16)

typedef enum knut_net_grpc_code {
#define KNUT_X_GRPC_ENUM(name, val) KNUT_NET_GRPC_##name = (val),
    KNUT_NET_GRPC_CODE_MAP(KNUT_X_GRPC_ENUM)
#undef KNUT_X_GRPC_ENUM
} knut_net_grpc_code;

/* "DEADLINE_EXCEEDED", ...; "UNKNOWN_CODE" for a number outside the table. */
KNUT_EXTERN const char *knut_net_grpc_code_name(int code);
/* What a server answers for a knut status (EINVAL -> INVALID_ARGUMENT,
 * ETOOBIG -> RESOURCE_EXHAUSTED, ...), and what a client makes of a gRPC
 * code (DEADLINE_EXCEEDED and UNAVAILABLE -> EAGAIN, ...). docs/net.md has
 * the table. */
KNUT_EXTERN knut_net_grpc_code knut_net_grpc_code_from_status(knut_status st);
KNUT_EXTERN knut_status knut_net_grpc_status_from_code(int code);

/*
 * Metadata (request headers, trailers): an owned list of key/value pairs.
 * Keys are lowercase [0-9a-z_.-] (added keys are lowered); a key ending in
 * "-bin" holds any bytes (base64 on the wire, done by gRPC), any other
 * value printable ASCII. At most KNUT_NET_GRPC_MAX_METADATA bytes and
 * KNUT_NET_GRPC_MAX_HEADERS entries; values are wiped on reset (they may
 * be an authorization).
 */
typedef struct knut_net_grpc_header {
    char *key;
    char *value;  /* NUL-terminated copy; len bytes (a -bin value may hold NULs) */
    size_t len;
} knut_net_grpc_header;
typedef struct knut_net_grpc_metadata {
    knut_net_grpc_header *items;
    size_t count;
    size_t cap;
    size_t bytes; /* keys and values so far */
} knut_net_grpc_metadata;
#define KNUT_NET_GRPC_METADATA_INIT {NULL, 0, 0, 0}
#define KNUT_NET_GRPC_MAX_METADATA ((size_t)16 << 10)
#define KNUT_NET_GRPC_MAX_HEADERS 128

/* Appends a copy of key (lowered) and value[0..len) to md. Errors:
 * KNUT_EINVAL (a key or value outside the rules above), KNUT_ETOOBIG (past
 * the caps), KNUT_ENOMEM; md is unchanged on error. */
KNUT_EXTERN knut_status knut_net_grpc_metadata_add(knut_net_grpc_metadata *md, const char *key,
                                                   const void *value, size_t len,
                                                   knut_error *err);
/* The first entry whose key equals key ignoring case (owned by md); NULL
 * if none. */
KNUT_EXTERN const knut_net_grpc_header *knut_net_grpc_metadata_find(
    const knut_net_grpc_metadata *md, const char *key);
/* Frees every entry, wiping the values (NULL-safe); md may be reused. */
KNUT_EXTERN void knut_net_grpc_metadata_reset(knut_net_grpc_metadata *md);
/* Non-zero when key names a binary value (ends in "-bin"). */
KNUT_EXTERN int knut_net_grpc_key_is_binary(const char *key);

/* TLS material, each a PEM file (read up to 1 MiB). Server: cert_file and
 * key_file are its chain and key; ca_file, when set, turns on mutual TLS
 * (a client certificate signed by it is required and verified). Client:
 * ca_file verifies the server (NULL: the system roots), cert_file and
 * key_file are its own certificate for mutual TLS (both or neither), and
 * server_name overrides the name checked in the server's certificate. */
typedef struct knut_net_grpc_tls {
    const char *cert_file;
    const char *key_file;
    const char *ca_file;
    const char *server_name;
} knut_net_grpc_tls;

#define KNUT_NET_GRPC_DEFAULT_MAX_MESSAGE ((size_t)4 << 20)
#define KNUT_NET_GRPC_MAX_THREADS 64

/* -- server -- */

typedef struct knut_net_grpc_server knut_net_grpc_server;
typedef struct knut_net_grpc_call knut_net_grpc_call;

#define KNUT_NET_GRPC_SERVER_OPTIONS_VERSION 1
typedef struct knut_net_grpc_server_options {
    int version;             /* KNUT_NET_GRPC_SERVER_OPTIONS_VERSION */
    const char *addr;        /* "host:port"; NULL: "127.0.0.1:0" (loopback, a free port) */
    const knut_net_grpc_tls *tls; /* NULL: insecure (plaintext HTTP/2) */
    size_t max_receive;      /* per request message; 0: 4 MiB (RESOURCE_EXHAUSTED above) */
    size_t max_send;         /* per response message; 0: 4 MiB */
    int threads;             /* call threads; 0: 2 (each serves one call at a time) */
} knut_net_grpc_server_options;
#define KNUT_NET_GRPC_SERVER_OPTIONS_INIT {KNUT_NET_GRPC_SERVER_OPTIONS_VERSION, NULL, NULL, 0, 0, 0}

/*
 * A method handler: runs on a call thread, reads the request with
 * knut_net_grpc_call_read, answers with knut_net_grpc_call_write (once for
 * unary, any number of times for server streaming) and may finish the
 * call itself (knut_net_grpc_call_finish, for a chosen code and
 * trailers). Returning without finishing finishes it: KNUT_OK as OK, an
 * error with knut_net_grpc_code_from_status and err's message.
 */
typedef knut_status (*knut_net_grpc_handler)(void *ctx, knut_net_grpc_call *call,
                                             knut_error *err);

/* Creates the server and binds it (the port is known from here on); o
 * may be NULL (defaults) and is copied, its TLS files read now. Unknown
 * methods get UNIMPLEMENTED. The caller frees *out with
 * knut_net_grpc_server_free. Errors: KNUT_EINVAL (options, caps over
 * 2 GiB, bad TLS material), KNUT_EIO (cannot bind addr, unreadable PEM
 * file), KNUT_ENOMEM. */
KNUT_EXTERN knut_status knut_net_grpc_server_new(knut_net_grpc_server **out,
                                                 const knut_net_grpc_server_options *o,
                                                 knut_error *err);
/* Routes method, the full name "/pkg.Service/Method" (copied), to fn with
 * ctx (borrowed until the server is freed); before start only. Errors:
 * KNUT_EINVAL (after start, a malformed or repeated name), KNUT_ETOOBIG
 * (too many methods), KNUT_ENOMEM. */
KNUT_EXTERN knut_status knut_net_grpc_server_add_method(knut_net_grpc_server *s,
                                                        const char *method,
                                                        knut_net_grpc_handler fn, void *ctx,
                                                        knut_error *err);
/* Starts the call threads: KNUT_EINVAL if already started, KNUT_ERROR if
 * a thread cannot start, KNUT_ENOMEM. */
KNUT_EXTERN knut_status knut_net_grpc_server_start(knut_net_grpc_server *s, knut_error *err);
/* The bound port (the real one when asked for port 0). */
KNUT_EXTERN int knut_net_grpc_server_port(const knut_net_grpc_server *s);
/* Graceful shutdown: no new calls; calls in progress see
 * knut_net_grpc_call_stopping and get grace_ms to finish, then are
 * cancelled; returns once the threads are joined. Idempotent. A server
 * never started may be shut down (or freed) too; it cannot start after. */
KNUT_EXTERN void knut_net_grpc_server_shutdown(knut_net_grpc_server *s, int64_t grace_ms);
/* Shuts down (5 s grace) if still running, then frees; NULL-safe, and
 * fine for a server that was never started. */
KNUT_EXTERN void knut_net_grpc_server_free(knut_net_grpc_server *s);

/* -- a call, as its handler sees it -- */

/* The call's full method name; owned by the call. */
KNUT_EXTERN const char *knut_net_grpc_call_method(const knut_net_grpc_call *c);
/* The request metadata, owned by the call (":authority" and the like are
 * not in it). */
KNUT_EXTERN const knut_net_grpc_metadata *knut_net_grpc_call_metadata(
    const knut_net_grpc_call *c);
/* The subject of the client's certificate, as gRPC gives it (RFC 2253,
 * "CN=alice,O=example"), into buf (NUL-terminated): 1 when the peer is a
 * client certificate verified by the server's CA (mutual TLS), 0 otherwise
 * (buf empty; also when the subject does not fit in n bytes). */
KNUT_EXTERN int knut_net_grpc_call_peer_subject(const knut_net_grpc_call *c, char *buf,
                                                size_t n);
/* A response header (initial metadata: "authorization" for a Flight
 * Handshake), sent with the first message or the status, or by
 * knut_net_grpc_call_send_headers; before either only (KNUT_EINVAL after).
 * The rules and caps of knut_net_grpc_metadata_add; the value is wiped
 * when the call ends. */
KNUT_EXTERN knut_status knut_net_grpc_call_add_header(knut_net_grpc_call *c, const char *key,
                                                      const void *value, size_t len,
                                                      knut_error *err);
/* Sends the response headers now, without a message (clients that wait
 * for headers before reading); KNUT_EINVAL when they are sent already. */
KNUT_EXTERN knut_status knut_net_grpc_call_send_headers(knut_net_grpc_call *c, knut_error *err);
/* Milliseconds until the client's deadline (0 when past); INT64_MAX if none. */
KNUT_EXTERN int64_t knut_net_grpc_call_remaining_ms(const knut_net_grpc_call *c);
/* Non-zero once the call is cancelled (by the client, its deadline, or the
 * end of a shutdown's grace): stop working on it. */
KNUT_EXTERN int knut_net_grpc_call_cancelled(knut_net_grpc_call *c);
/* Non-zero once the server shuts down: a long stream should finish. */
KNUT_EXTERN int knut_net_grpc_call_stopping(const knut_net_grpc_call *c);
/* The next request message into msg (cleared first; its cap and the
 * server's max_receive bound it): KNUT_OK, KNUT_EOF when the client sent
 * no more, KNUT_ETOOBIG over msg's cap, KNUT_ECANCELLED. */
KNUT_EXTERN knut_status knut_net_grpc_call_read(knut_net_grpc_call *c, knut_buf *msg,
                                                knut_error *err);
/* Sends one response message (the initial metadata first, once);
 * KNUT_ETOOBIG over max_send, KNUT_ECANCELLED when the call is gone. */
KNUT_EXTERN knut_status knut_net_grpc_call_write(knut_net_grpc_call *c, const void *data,
                                                 size_t len, knut_error *err);
/* As knut_net_grpc_call_write, without copying data: gRPC takes it over
 * and calls free_fn(data) once it has sent it (possibly after this
 * returns, on a gRPC thread); free_fn is called on failure too. For large
 * responses (Flight's record batches) built in memory of their own. */
typedef void (*knut_net_grpc_free_fn)(void *data);
KNUT_EXTERN knut_status knut_net_grpc_call_write_owned(knut_net_grpc_call *c, void *data,
                                                       size_t len, knut_net_grpc_free_fn free_fn,
                                                       knut_error *err);
/* Bytes of the response messages written so far (metrics, request logs). */
KNUT_EXTERN uint64_t knut_net_grpc_call_bytes_sent(const knut_net_grpc_call *c);
/* Ends the call with code, message (may be NULL) and trailers (may be
 * NULL), all borrowed for the call; later writes are refused. Errors:
 * KNUT_EINVAL (already finished), KNUT_ECANCELLED (the call is gone). */
KNUT_EXTERN knut_status knut_net_grpc_call_finish(knut_net_grpc_call *c, int code,
                                                  const char *message,
                                                  const knut_net_grpc_metadata *trailers,
                                                  knut_error *err);

/* -- channel (client) -- */

typedef struct knut_net_grpc_channel knut_net_grpc_channel;
typedef struct knut_net_grpc_client_call knut_net_grpc_client_call;

/* A call timeout meaning no deadline at all (knut_net_grpc_channel_call). */
#define KNUT_NET_GRPC_NO_DEADLINE ((int64_t)-1)

#define KNUT_NET_GRPC_CHANNEL_OPTIONS_VERSION 1
typedef struct knut_net_grpc_channel_options {
    int version;                  /* KNUT_NET_GRPC_CHANNEL_OPTIONS_VERSION */
    const knut_net_grpc_tls *tls; /* NULL: insecure */
    size_t max_receive;           /* per response message; 0: 4 MiB */
    size_t max_send;              /* per request message; 0: 4 MiB */
} knut_net_grpc_channel_options;
#define KNUT_NET_GRPC_CHANNEL_OPTIONS_INIT {KNUT_NET_GRPC_CHANNEL_OPTIONS_VERSION, NULL, 0, 0}

/* The final status of a client call. */
typedef struct knut_net_grpc_status {
    int code;                       /* knut_net_grpc_code */
    char message[512];              /* the status message, cut to fit */
    knut_net_grpc_metadata trailers;
} knut_net_grpc_status;
#define KNUT_NET_GRPC_STATUS_INIT {0, {0}, KNUT_NET_GRPC_METADATA_INIT}
/* Frees the trailers and clears the rest (NULL-safe); st may be reused. */
KNUT_EXTERN void knut_net_grpc_status_reset(knut_net_grpc_status *st);

/* A channel to target ("host:port"); connects lazily, thread-safe; o may
 * be NULL (defaults), its TLS files read now. The caller frees *out with
 * knut_net_grpc_channel_free (NULL-safe), after every call on it is freed.
 * Errors: KNUT_EINVAL (options, caps over 2 GiB, bad TLS material, a
 * target gRPC refuses), KNUT_EIO (unreadable PEM file), KNUT_ENOMEM. */
KNUT_EXTERN knut_status knut_net_grpc_channel_new(knut_net_grpc_channel **out,
                                                  const char *target,
                                                  const knut_net_grpc_channel_options *o,
                                                  knut_error *err);
KNUT_EXTERN void knut_net_grpc_channel_free(knut_net_grpc_channel *ch);

/*
 * Starts a call of method with metadata md (may be NULL) and a deadline
 * timeout_ms from now (0: 30 s; KNUT_NET_GRPC_NO_DEADLINE, any negative
 * value: none, for long streams such as a Spark query), sends the one request message and closes
 * the sending side (unary and server-streaming calls). Then read the
 * responses and finish; one thread at a time per call. md and req are
 * borrowed for the call only; the caller frees *out with
 * knut_net_grpc_client_call_free. Errors: KNUT_ETOOBIG (req over
 * max_send), KNUT_EINVAL, KNUT_ENOMEM; the peer's own failures come from
 * read and finish.
 */
KNUT_EXTERN knut_status knut_net_grpc_channel_call(knut_net_grpc_channel *ch, const char *method,
                                                   const knut_net_grpc_metadata *md,
                                                   int64_t timeout_ms, const void *req,
                                                   size_t len, knut_net_grpc_client_call **out,
                                                   knut_error *err);
/*
 * A call whose requests are sent one by one (client-streaming and bidi:
 * DoPut, Handshake): starts it with metadata md (may be NULL) and the
 * deadline as for channel_call, sending no message yet. Then write each
 * request, close_send, read the responses and finish (reads may come
 * between writes; one thread at a time per call). Errors as channel_call.
 */
KNUT_EXTERN knut_status knut_net_grpc_channel_open(knut_net_grpc_channel *ch, const char *method,
                                                   const knut_net_grpc_metadata *md,
                                                   int64_t timeout_ms,
                                                   knut_net_grpc_client_call **out,
                                                   knut_error *err);
/* Sends one request message of an opened call (copied). Errors:
 * KNUT_ETOOBIG (over max_send), KNUT_ECANCELLED (the peer ended the call
 * or sending was closed: finish tells why), KNUT_EINVAL (a call of
 * channel_call, which sends its one message itself). */
KNUT_EXTERN knut_status knut_net_grpc_client_call_write(knut_net_grpc_client_call *c,
                                                        const void *data, size_t len,
                                                        knut_error *err);
/* Half-closes an opened call: no more requests (idempotent). */
KNUT_EXTERN knut_status knut_net_grpc_client_call_close_send(knut_net_grpc_client_call *c,
                                                             knut_error *err);
/* The next response message into msg (cleared first; its cap bounds it):
 * KNUT_OK, KNUT_EOF when there is no more (then finish tells why),
 * KNUT_ETOOBIG over msg's cap. */
KNUT_EXTERN knut_status knut_net_grpc_client_call_read(knut_net_grpc_client_call *c,
                                                       knut_buf *msg, knut_error *err);
/* Waits for the status (messages not read are read and dropped) into st
 * (may be NULL); returns knut_net_grpc_status_from_code of it, with err
 * naming the method, the code and the message. */
KNUT_EXTERN knut_status knut_net_grpc_client_call_finish(knut_net_grpc_client_call *c,
                                                         knut_net_grpc_status *st,
                                                         knut_error *err);
/* Cancels the call (the client's side of a Ctrl-C): a read blocked on
 * another thread returns KNUT_EOF at once and finish says CANCELLED.
 * Thread-safe, idempotent; c stays the caller's to finish and free. */
KNUT_EXTERN void knut_net_grpc_client_call_cancel(knut_net_grpc_client_call *c);
/* Frees the call, cancelling it if not finished; NULL-safe. */
KNUT_EXTERN void knut_net_grpc_client_call_free(knut_net_grpc_client_call *c);

/* A unary call: the one response message into resp; status as finish. A
 * reply without a message (a non-OK status) leaves resp empty. */
KNUT_EXTERN knut_status knut_net_grpc_channel_unary(knut_net_grpc_channel *ch, const char *method,
                                                    const knut_net_grpc_metadata *md,
                                                    int64_t timeout_ms, const void *req,
                                                    size_t len, knut_buf *resp,
                                                    knut_net_grpc_status *st, knut_error *err);

/* ---- Airflow asset events (airflow.c, airflow_client.c; docs/operations.md) ----
 * A background sender: knut_net_airflow_emit queues an event and returns at
 * once; a thread posts it to Airflow 3 (/api/v2, JWT) or 2.9+ (/api/v1,
 * Basic), retrying with backoff. The queue is bounded; close gives the
 * unsent events drain_ms, then logs them as dropped. Nothing here ever
 * fails the caller's work: every problem is a log record (log_target). */
typedef struct knut_net_airflow knut_net_airflow;

typedef struct knut_net_airflow_options {
    const char *url;        /* http://host:port of the Airflow API server */
    const char *user;
    const char *password;   /* a secret: never logged */
    const char *instance;   /* extra.knut_instance; NULL: host:pid */
    int64_t drain_ms;       /* time unsent events get at close; 0: 5000 */
    const char *log_target; /* NULL: "assets" */
    const char *label_field, *seq_field; /* log field names; NULL: "table", "round" */
    void (*on_sent)(void *ctx); /* after each event Airflow recorded (sender thread) */
    void *on_sent_ctx;
} knut_net_airflow_options;

/* Checks the options and starts the thread; does not talk to Airflow yet. */
KNUT_EXTERN knut_status knut_net_airflow_open(knut_net_airflow **out, const knut_net_airflow_options *o,
                                  knut_error *err);
/* Queues one event for uri; extra_json is a JSON object (copied; knut_instance
 * is added); label and seq only name the event in the log. Never blocks on
 * Airflow, never fails (a full queue drops the event with a log record). */
KNUT_EXTERN void knut_net_airflow_emit(knut_net_airflow *a, const char *uri, const char *label, int64_t seq,
                           const char *extra_json);
/* Drains (up to drain_ms), stops the thread, frees. a may be NULL. */
KNUT_EXTERN void knut_net_airflow_close(knut_net_airflow *a);
/* 0 if uri is an Airflow asset URI knut can match exactly, else -1 and why. */
KNUT_EXTERN int knut_net_airflow_uri_check(const char *uri, char *why, size_t n);

/* ---- OpenLineage run events (lineage.c; docs/lineage.md) ----------------
 * Run events (START, COMPLETE, FAIL) with the datasets a run read and
 * wrote, as OpenLineage 2-0-2 RunEvent JSON: posted to an HTTP endpoint
 * ({url}/api/v1/lineage, optionally with a bearer API key) or appended to
 * a JSON-lines file, by the shared background sender, so a slow or absent
 * consumer never blocks or fails the caller's work: every problem is a
 * log record (target "lineage"). Events of one run go out in order. */
typedef struct knut_net_lineage knut_net_lineage;

typedef struct knut_net_lineage_options {
    const char *url;       /* http[s]://host:port[/prefix] of the consumer; or */
    const char *file;      /* a JSON-lines file events are appended to (one of the two) */
    const char *endpoint;  /* path under url; NULL: "api/v1/lineage" */
    const char *api_key;   /* a secret (Authorization: Bearer): never logged; NULL: none */
    const char *job_namespace; /* the jobs' namespace; NULL: "knut" */
    int64_t drain_ms;      /* time unsent events get at close; 0: 5000 */
} knut_net_lineage_options;

/* A dataset as OpenLineage names it (namespace + name), with the
 * statistics facet when a count is known (-1: unknown, left out). */
typedef struct knut_net_lineage_dataset {
    const char *ns;
    const char *name;
    int64_t rows, files, bytes;
} knut_net_lineage_dataset;

typedef struct knut_net_lineage_event {
    const char *type;         /* "START", "RUNNING", "COMPLETE", "FAIL", "ABORT" */
    const char *run_id;       /* a UUID (knut_uuid_v7) shared by the run's events */
    const char *job;          /* the job's name in the namespace */
    int64_t time_us;          /* wall clock of the event; 0: now */
    const char *job_type;     /* the jobType facet's jobType ("SYNC_TABLE", ...) */
    int streaming;            /* processingType STREAMING, else BATCH */
    const knut_net_lineage_dataset *inputs;
    size_t n_inputs;
    const knut_net_lineage_dataset *outputs;
    size_t n_outputs;
    const char *error;        /* FAIL: the errorMessage facet's message; NULL: none */
    const char *parent_run_id, *parent_job; /* the parent facet (a pipeline's flow); NULL: none */
    int64_t seq;              /* the round or run number, for the log */
} knut_net_lineage_event;

/* Checks the options and starts the sender; does not talk to the peer yet.
 * KNUT_EINVAL: neither or both of url and file, a bad URL. */
KNUT_EXTERN knut_status knut_net_lineage_open(knut_net_lineage **out,
                                              const knut_net_lineage_options *o, knut_error *err);
/* Queues one event (everything copied). Never blocks on the peer, never
 * fails (problems are log records). l may be NULL (no lineage). */
KNUT_EXTERN void knut_net_lineage_emit(knut_net_lineage *l, const knut_net_lineage_event *e);
/* Drains (up to drain_ms), stops the sender, frees. l may be NULL. */
KNUT_EXTERN void knut_net_lineage_close(knut_net_lineage *l);

#ifdef __cplusplus
}
#endif

#endif /* KNUT_NET_H */
