/*
 * A read-only HTTP server over libmicrohttpd, for live endpoints such as
 * knut sync's /metrics and Server-Sent Events (http_stream.c). The
 * listening socket is made here (so a bind failure is an error naming the
 * address and errno, not libmicrohttpd's silent NULL) and handed to the
 * library, which runs one thread per connection: a stream that waits for
 * its next event holds only its own connection. Requests are answered on
 * their first callback: the body of a request is never read, and the
 * library's per-connection memory limit caps the request headers.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "http_int.h"

#define HTTP_MAX_REPLY ((size_t)16 << 20)
#define HTTP_MAX_CONNECTIONS 32
#define HTTP_IDLE_TIMEOUT_S 10

/* Splits "IP:PORT" / "[IPv6]:PORT" into host and port (numeric only). */
static knut_status split_addr(const char *addr, char *host, size_t hn, char *port, size_t pn,
                              knut_error *err)
{
    const char *colon = strrchr(addr, ':');
    const char *h = addr, *he = colon;
    if (!colon || !colon[1] || strlen(colon + 1) >= pn)
        return knut_error_set(err, KNUT_EINVAL, "'%s': expected IP:PORT (e.g. 127.0.0.1:9464)",
                              addr);
    if (addr[0] == '[') {
        h = addr + 1;
        if (colon == addr || colon[-1] != ']')
            return knut_error_set(err, KNUT_EINVAL, "'%s': expected [IPv6]:PORT", addr);
        he = colon - 1;
    }
    if (he <= h || (size_t)(he - h) >= hn)
        return knut_error_set(err, KNUT_EINVAL, "'%s': expected IP:PORT (e.g. 127.0.0.1:9464)",
                              addr);
    memcpy(host, h, (size_t)(he - h));
    host[he - h] = 0;
    if (addr[0] != '[' && strchr(host, ':'))
        return knut_error_set(err, KNUT_EINVAL, "'%s': write an IPv6 address as [IPv6]:PORT",
                              addr);
    strcpy(port, colon + 1);
    for (const char *p = port; *p; p++)
        if (*p < '0' || *p > '9')
            return knut_error_set(err, KNUT_EINVAL, "'%s': the port must be a number", addr);
    if (atol(port) > 65535)
        return knut_error_set(err, KNUT_EINVAL, "'%s': port over 65535", addr);
    return KNUT_OK;
}

/* socket + bind + listen on a numeric address; *fd = -1 on failure. */
static knut_status listen_on(const char *addr, int *fd, int *family, knut_error *err)
{
    char host[INET6_ADDRSTRLEN + 8], port[8];
    struct addrinfo hints = {0}, *ai = NULL;
    knut_status st = split_addr(addr, host, sizeof host, port, sizeof port, err);
    *fd = -1;
    if (st != KNUT_OK)
        return st;
    hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, port, &hints, &ai) != 0 || !ai)
        return knut_error_set(err, KNUT_EINVAL,
                              "'%s': not a numeric IP address (a host name is not accepted)", addr);
    int s = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    if (s < 0) {
        st = knut_error_set(err, KNUT_EIO, "%s: socket: %s", addr, strerror(errno));
        goto cleanup;
    }
    /* a restart must not wait for the old socket's TIME_WAIT */
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (ai->ai_family == AF_INET6)
        setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    if (bind(s, ai->ai_addr, ai->ai_addrlen) != 0 || listen(s, 16) != 0) {
        st = knut_error_set(err, KNUT_EIO, "%s: bind/listen: %s", addr, strerror(errno));
        close(s);
        goto cleanup;
    }
    *fd = s;
    *family = ai->ai_family;
cleanup:
    freeaddrinfo(ai);
    return st;
}

static enum MHD_Result queue(struct MHD_Connection *conn, unsigned status, const char *type,
                             const void *body, size_t len, const char *allow)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(len, (void *)(len ? body : ""), MHD_RESPMEM_MUST_COPY);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    if (allow)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
    enum MHD_Result ret = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return ret;
}

/* A streamed reply; HEAD gets its headers without starting the stream. */
static enum MHD_Result queue_stream(knut_net_http_server *s, struct MHD_Connection *conn,
                                    int head, knut_net_http_reply *reply)
{
    unsigned status = reply->status ? (unsigned)reply->status : MHD_HTTP_OK;
    if (head) {
        if (reply->stream_free)
            reply->stream_free(reply->stream_ctx);
        return queue(conn, status, reply->content_type ? reply->content_type : "text/event-stream",
                     NULL, 0, NULL);
    }
    struct MHD_Response *r = knut_net__http_stream_response(s, reply);
    if (!r)
        return MHD_NO;
    enum MHD_Result ret = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
    knut_net_http_server *s = cls;
    static const char text[] = "text/plain; charset=utf-8";
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        return queue(conn, MHD_HTTP_METHOD_NOT_ALLOWED, text, "method not allowed\n", 19,
                     "GET, HEAD");
    const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
    const char *te = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Transfer-Encoding");
    if (te || (cl && strtoll(cl, NULL, 10) != 0) || (upload_data_size && *upload_data_size))
        return queue(conn, MHD_HTTP_CONTENT_TOO_LARGE, text, "no request body accepted\n", 25,
                     NULL);
    knut_net_http_reply reply = {0, NULL, KNUT_BUF_INIT, NULL, NULL, NULL, NULL};
    reply.last_event_id = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Last-Event-ID");
    knut_buf_init(&reply.body, HTTP_MAX_REPLY);
    s->fn(s->ctx, method, url, &reply);
    enum MHD_Result ret;
    if (reply.stream)
        ret = queue_stream(s, conn, strcmp(method, "HEAD") == 0, &reply);
    else if (reply.body.error != KNUT_OK)
        ret = queue(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, text, "reply too large\n", 16, NULL);
    else
        ret = queue(conn, reply.status ? (unsigned)reply.status : MHD_HTTP_OK,
                    reply.content_type ? reply.content_type : text, reply.body.data,
                    reply.body.len, NULL);
    knut_buf_reset(&reply.body);
    return ret;
}

knut_status knut_net_http_server_start(knut_net_http_server **out, const char *addr,
                                   knut_net_http_handler fn, void *ctx, knut_error *err)
{
    KNUT_ASSERT_ARG(err, out && addr && fn);
    *out = NULL;
    int fd = -1, family = AF_INET;
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    knut_net_http_server *s = calloc(1, sizeof *s);
    if (!s)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    s->fn = fn;
    s->ctx = ctx;
    knut_status st = knut_net__http_streams_init(s, err);
    if (st != KNUT_OK) {
        free(s);
        return st;
    }
    st = listen_on(addr, &fd, &family, err);
    if (st != KNUT_OK)
        goto cleanup;
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) != 0) {
        st = knut_error_set(err, KNUT_EIO, "%s: getsockname: %s", addr, strerror(errno));
        goto cleanup;
    }
    char ip[INET6_ADDRSTRLEN] = "";
    if (family == AF_INET6) {
        struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
        inet_ntop(AF_INET6, &a6->sin6_addr, ip, sizeof ip);
        s->port = ntohs(a6->sin6_port);
        snprintf(s->addr, sizeof s->addr, "[%s]:%d", ip, s->port);
    } else {
        struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
        inet_ntop(AF_INET, &a4->sin_addr, ip, sizeof ip);
        s->port = ntohs(a4->sin_port);
        snprintf(s->addr, sizeof s->addr, "%s:%d", ip, s->port);
    }
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL_INTERNAL_THREAD |
                     (family == AF_INET6 ? MHD_USE_IPv6 : 0);
    s->daemon = MHD_start_daemon(
        flags, 0, NULL, NULL, on_request, s, MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned)HTTP_MAX_CONNECTIONS,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)HTTP_IDLE_TIMEOUT_S,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)KNUT_NET_HTTP_SERVER_MAX_REQUEST * 2,
        MHD_OPTION_END);
    if (!s->daemon) {
        st = knut_error_set(err, KNUT_EIO, "%s: cannot start the HTTP server", addr);
        goto cleanup;
    }
    fd = -1; /* the daemon owns it now */
cleanup:
    if (fd >= 0)
        close(fd);
    if (st != KNUT_OK) {
        knut_net__http_streams_stop(s);
        pthread_cond_destroy(&s->cv);
        pthread_mutex_destroy(&s->mu);
        free(s);
        return st;
    }
    *out = s;
    return KNUT_OK;
}

int knut_net_http_server_port(const knut_net_http_server *s)
{
    return s ? s->port : 0;
}

const char *knut_net_http_server_addr(const knut_net_http_server *s)
{
    return s ? s->addr : "";
}

void knut_net_http_server_stop(knut_net_http_server *s)
{
    if (!s)
        return;
    knut_net__http_streams_stop(s);
    MHD_stop_daemon(s->daemon);
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    free(s);
}
