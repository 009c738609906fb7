/*
 * The FalkorDB connection: URL parsing, connect (hiredis, with timeouts),
 * AUTH, reading the server's RESULTSET_SIZE, and the raw socket I/O the
 * client does itself: sends with MSG_NOSIGNAL (a closed peer must not
 * raise SIGPIPE in the host process), receives into a capped buffer that
 * the RESP scanner cuts into replies, and a liveness check that finds a
 * connection the server closed while it sat idle. Any I/O failure closes
 * the socket: a half-read reply cannot be resynchronised.
 */
#include "falkor_int.h"
#include "knut/net.h"

#include <hiredis/hiredis.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>

#define RECV_CHUNK 65536

static knut_status oom(const knut_graph_falkor *g, knut_error *err)
{
    return knut_error_set(err, KNUT_ENOMEM, "%s: out of memory", g->peer);
}

/* Replaces every copy of secret in text (NUL-terminated) by "***". */
static void scrub(char *text, const char *secret)
{
    size_t n = secret ? strlen(secret) : 0;
    char *p;
    if (n == 0)
        return;
    /* search on after each replacement: a secret of stars would match again */
    while ((p = strstr(text, secret)) != NULL) {
        memcpy(p, "***", n < 3 ? n : 3);
        if (n > 3)
            memmove(p + 3, p + n, strlen(p + n) + 1);
        text = p + (n < 3 ? n : 3);
    }
}

knut_status knut_graph__falkor_peer_error(const knut_graph_falkor *g, const char *what,
                                          const char *msg, size_t len, knut_error *err)
{
    char text[768];
    size_t n = len < sizeof text - 1 ? len : sizeof text - 1;
    memcpy(text, msg, n);
    text[n] = '\0';
    scrub(text, g->password);
    return knut_graph__falkor_server_error(err, g->peer, what, text, strlen(text));
}

/* ---- socket I/O -------------------------------------------------------- */

void knut_graph__falkor_drop(knut_graph_falkor *g)
{
    if (g->rc != NULL)
        redisFree(g->rc);
    g->rc = NULL;
    g->rpos = g->rlen = 0;
    knut_graph__falkor_frame_init(&g->frame, g->opts.max_depth, g->opts.max_reply_bytes);
}

/* Closes the socket and says why; lost = the peer went away (retryable). */
static knut_status io_fail(knut_graph_falkor *g, int lost, const char *what, knut_error *err)
{
    knut_graph__falkor_drop(g);
    g->lost = lost;
    return knut_error_set(err, KNUT_EIO, "%s: %s", g->peer, what);
}

static knut_status io_errno(knut_graph_falkor *g, const char *verb, int e, knut_error *err)
{
    char what[160];
    if (e == EAGAIN || e == EWOULDBLOCK) {
        if (strcmp(verb, "send") == 0)
            snprintf(what, sizeof what, "could not send within %d ms (connection closed)",
                     g->opts.command_timeout_ms);
        else
            snprintf(what, sizeof what,
                     "no reply within %d ms (connection closed; the next call reconnects)",
                     g->opts.command_timeout_ms);
        return io_fail(g, 0, what, err);
    }
    snprintf(what, sizeof what, "connection lost: %s: %s", verb, strerror(e));
    return io_fail(g, 1, what, err);
}

knut_status knut_graph__falkor_send(knut_graph_falkor *g, const char *bytes, size_t len,
                                    knut_error *err)
{
    if (g->rc == NULL)
        return io_fail(g, 1, "not connected", err);
    while (len > 0) {
        ssize_t n = send(g->rc->fd, bytes, len, MSG_NOSIGNAL);
        if (n > 0) {
            bytes += n;
            len -= (size_t)n;
        } else if (n < 0 && errno == EINTR) {
            if (knut_signal_stop_requested()) {
                knut_graph__falkor_drop(g);
                return knut_error_set(err, KNUT_ECANCELLED, "%s: cancelled while sending",
                                      g->peer);
            }
        } else {
            return io_errno(g, "send", n < 0 ? errno : EPIPE, err);
        }
    }
    return KNUT_OK;
}

static knut_status grow(knut_graph_falkor *g, knut_error *err)
{
    if (g->rpos > 0) { /* keep the unconsumed bytes at the front */
        memmove(g->rbuf, g->rbuf + g->rpos, g->rlen - g->rpos);
        g->rlen -= g->rpos;
        g->rpos = 0;
    }
    if (g->rcap - g->rlen >= RECV_CHUNK / 4)
        return KNUT_OK;
    /* The scanner refuses a reply past max_reply_bytes, so this bounds it. */
    size_t limit = (size_t)g->opts.max_reply_bytes + RECV_CHUNK;
    size_t cap = g->rcap ? g->rcap * 2 : RECV_CHUNK;
    if (cap > limit)
        cap = limit;
    if (cap <= g->rlen)
        return knut_error_set(err, KNUT_ETOOBIG, "%s: reply larger than the %lld-byte cap",
                              g->peer, (long long)g->opts.max_reply_bytes);
    char *nb = realloc(g->rbuf, cap);
    if (nb == NULL)
        return oom(g, err);
    g->rbuf = nb;
    g->rcap = cap;
    return KNUT_OK;
}

knut_status knut_graph__falkor_recv(knut_graph_falkor *g, size_t *len, knut_error *err)
{
    knut_status st;
    for (;;) {
        if (g->rc == NULL)
            return io_fail(g, 1, "not connected", err);
        if (g->rlen > g->rpos) {
            st = knut_graph__falkor_frame_scan(&g->frame, g->rbuf + g->rpos, g->rlen - g->rpos,
                                               len, g->peer, err);
            if (st == KNUT_OK)
                return KNUT_OK;
            if (st != KNUT_EAGAIN) {
                knut_graph__falkor_drop(g);
                g->lost = 0;
                return st;
            }
        }
        st = grow(g, err);
        if (st != KNUT_OK) {
            knut_graph__falkor_drop(g);
            g->lost = 0;
            return st;
        }
        ssize_t n = recv(g->rc->fd, g->rbuf + g->rlen, g->rcap - g->rlen, 0);
        if (n > 0) {
            g->rlen += (size_t)n;
        } else if (n == 0) {
            return io_fail(g, 1, "connection lost: closed by the server", err);
        } else if (errno == EINTR) {
            if (knut_signal_stop_requested()) {
                knut_graph__falkor_drop(g);
                return knut_error_set(err, KNUT_ECANCELLED, "%s: cancelled while waiting",
                                      g->peer);
            }
        } else {
            return io_errno(g, "recv", errno, err);
        }
    }
}

void knut_graph__falkor_consume(knut_graph_falkor *g, size_t len)
{
    g->rpos += len;
    if (g->rpos >= g->rlen)
        g->rpos = g->rlen = 0;
}

knut_status knut_graph__falkor_take(knut_graph_falkor *g, size_t len, char **out,
                                    knut_error *err)
{
    if (g->rpos == 0 && len == g->rlen) {
        *out = g->rbuf;
        g->rbuf = NULL;
        g->rpos = g->rlen = g->rcap = 0;
        return KNUT_OK;
    }
    *out = malloc(len ? len : 1);
    if (*out == NULL)
        return oom(g, err);
    memcpy(*out, g->rbuf + g->rpos, len);
    knut_graph__falkor_consume(g, len);
    return KNUT_OK;
}

/* One command, one reply, on the open connection (no reconnecting). */
static knut_status roundtrip(knut_graph_falkor *g, int argc, const char *const *argv,
                             size_t *len, knut_error *err)
{
    knut_buf cmd = KNUT_BUF_INIT;
    knut_status st = knut_graph__falkor_cmd_append(&cmd, argc, argv, err);
    if (st == KNUT_OK)
        st = knut_graph__falkor_send(g, cmd.data, cmd.len, err);
    if (st == KNUT_OK)
        st = knut_graph__falkor_recv(g, len, err);
    knut_buf_reset(&cmd);
    return st;
}

/* ---- connecting -------------------------------------------------------- */

static knut_status auth(knut_graph_falkor *g, knut_error *err)
{
    const char *argv[3] = {"AUTH", g->username ? g->username : g->password, g->password};
    size_t len;
    knut_status st = roundtrip(g, g->username ? 3 : 2, argv, &len, err);
    if (st != KNUT_OK)
        return st;
    falkor_cur c = {g->rbuf + g->rpos, g->rbuf + g->rpos + len};
    falkor_item it;
    if (knut_graph__falkor_cur_next(&c, &it) == KNUT_OK && it.type == '-')
        st = knut_graph__falkor_peer_error(g, "authentication failed", it.s, (size_t)it.n, err);
    else if (it.type != '+')
        st = knut_error_set(err, KNUT_EPARSE, "%s: unexpected reply to AUTH", g->peer);
    knut_graph__falkor_consume(g, len);
    return st;
}

static knut_status read_limit(knut_graph_falkor *g, knut_error *err)
{
    static const char *const argv[] = {"GRAPH.CONFIG", "GET", "RESULTSET_SIZE"};
    size_t len;
    knut_status st = roundtrip(g, 3, argv, &len, err);
    if (st != KNUT_OK)
        return st;
    falkor_cur c = {g->rbuf + g->rpos, g->rbuf + g->rpos + len};
    falkor_item it, v;
    if (knut_graph__falkor_cur_next(&c, &it) == KNUT_OK && it.type == '-') {
        /* an unknown command means a plain Redis/Valkey: say so */
        int plain = knut_graph__falkor_error_kind(it.s, (size_t)it.n) ==
                    KNUT_GRAPH_FALKOR_ERR_UNKNOWN_COMMAND;
        st = knut_graph__falkor_peer_error(g, plain ? "GRAPH.CONFIG (is the FalkorDB module "
                                                      "loaded?)"
                                                    : "GRAPH.CONFIG GET RESULTSET_SIZE",
                                           it.s, (size_t)it.n, err);
    } else if (it.type != '*' || it.n != 2 || knut_graph__falkor_cur_next(&c, &v) != KNUT_OK ||
               knut_graph__falkor_cur_next(&c, &v) != KNUT_OK || v.type != ':') {
        st = knut_error_set(err, KNUT_EPARSE, "%s: unexpected reply to GRAPH.CONFIG GET "
                                              "RESULTSET_SIZE", g->peer);
    } else {
        /* Negative means unlimited on the server. */
        g->resultset_limit = v.n < 0 ? KNUT_GRAPH_FALKOR_LIMIT_UNLIMITED : v.n;
    }
    knut_graph__falkor_consume(g, len);
    return st;
}

static knut_status open_conn(knut_graph_falkor *g, knut_error *err)
{
    struct timeval tv;
    int ms = g->opts.connect_timeout_ms;
    knut_graph__falkor_drop(g);
    if (ms > 0) {
        tv.tv_sec = ms / 1000;
        tv.tv_usec = (ms % 1000) * 1000;
        g->rc = redisConnectWithTimeout(g->host, g->port, tv);
    } else {
        g->rc = redisConnect(g->host, g->port);
    }
    if (g->rc == NULL)
        return oom(g, err);
    if (g->rc->err) {
        knut_status st = knut_error_set(err, KNUT_EIO, "%s: connect: %s", g->peer,
                                        g->rc->errstr);
        knut_graph__falkor_drop(g);
        return st;
    }
    ms = g->opts.command_timeout_ms;
    tv.tv_sec = ms / 1000;
    tv.tv_usec = (ms % 1000) * 1000;
    if (redisSetTimeout(g->rc, tv) != REDIS_OK)
        return io_fail(g, 0, "cannot set the command timeout", err);
    knut_status st = g->password ? auth(g, err) : KNUT_OK;
    if (st == KNUT_OK)
        st = read_limit(g, err);
    if (st != KNUT_OK) {
        knut_graph__falkor_drop(g);
        return st;
    }
    KNUT_LOG(KNUT_LOG_DEBUG, "graph", "%s: connected (RESULTSET_SIZE %lld)", g->peer,
             (long long)g->resultset_limit);
    return KNUT_OK;
}

/* A connection is usable if nothing is pending on it: no EOF from a server
 * that went away, no bytes nobody asked for. */
static int alive(knut_graph_falkor *g)
{
    char c;
    if (g->rc == NULL || g->rlen > g->rpos)
        return 0;
    ssize_t n = recv(g->rc->fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    return 0;
}

knut_status knut_graph__falkor_ensure(knut_graph_falkor *g, int *reconnected, knut_error *err)
{
    if (g->rc == NULL) /* closed by an earlier failure: opening is no retry */
        return open_conn(g, err);
    if (alive(g))
        return KNUT_OK;
    if (*reconnected)
        return io_fail(g, 1, "connection lost again after reconnecting", err);
    *reconnected = 1;
    KNUT_LOG(KNUT_LOG_INFO, "graph", "%s: connection found closed, reconnecting", g->peer);
    return open_conn(g, err);
}

knut_status knut_graph_falkor_limits_refresh(knut_graph_falkor *g, knut_error *err)
{
    int reconnected = 0;
    KNUT_ASSERT_ARG(err, g != NULL);
    knut_status st = knut_graph__falkor_ensure(g, &reconnected, err);
    return st == KNUT_OK && !reconnected ? read_limit(g, err) : st;
}

int64_t knut_graph_falkor_resultset_limit(const knut_graph_falkor *g)
{
    return g ? g->resultset_limit : KNUT_GRAPH_FALKOR_LIMIT_UNLIMITED;
}

const char *knut_graph_falkor_peer(const knut_graph_falkor *g)
{
    /* "falkordb host:port" → "host:port" */
    return g ? g->peer + 9 : "";
}

static knut_status connect_impl(knut_graph_falkor **out, const char *host, int port,
                                const char *user, const char *password,
                                const knut_graph_falkor_options *opts, knut_error *err)
{
    knut_graph_falkor *g = NULL;
    knut_status st = KNUT_OK;
    if (host == NULL || *host == '\0' || port <= 0 || port > 65535)
        return knut_error_set(err, KNUT_EINVAL, "FalkorDB: a host and a port in 1..65535 are "
                                                "needed");
    g = calloc(1, sizeof *g);
    if (g == NULL)
        return knut_error_set(err, KNUT_ENOMEM, "FalkorDB: out of memory");
    if (opts != NULL)
        g->opts = *opts;
    g->opts.version = KNUT_GRAPH_FALKOR_OPTIONS_VERSION;
    g->opts.username = g->opts.password = NULL;
    if (g->opts.connect_timeout_ms == 0)
        g->opts.connect_timeout_ms = FALKOR_CONNECT_TIMEOUT_DEFAULT;
    if (g->opts.command_timeout_ms < 0)
        g->opts.command_timeout_ms = 0;
    if (g->opts.max_reply_bytes <= 0)
        g->opts.max_reply_bytes = KNUT_GRAPH_FALKOR_MAX_REPLY_DEFAULT;
    if (g->opts.max_depth <= 0)
        g->opts.max_depth = FALKOR_DEPTH_DEFAULT;
    if (g->opts.max_depth > FALKOR_DEPTH_MAX)
        g->opts.max_depth = FALKOR_DEPTH_MAX;
    if (g->opts.batch_rows <= 0)
        g->opts.batch_rows = FALKOR_BATCH_ROWS_DEFAULT;
    g->port = port;
    g->resultset_limit = KNUT_GRAPH_FALKOR_LIMIT_UNLIMITED;
    snprintf(g->peer, sizeof g->peer, strchr(host, ':') ? "falkordb [%.256s]:%d"
                                                        : "falkordb %.256s:%d", host, port);
    g->host = strdup(host);
    g->username = user ? strdup(user) : NULL;
    g->password = password ? strdup(password) : NULL;
    if (!g->host || (user && !g->username) || (password && !g->password))
        st = oom(g, err);
    if (st == KNUT_OK)
        st = open_conn(g, err);
    if (st != KNUT_OK) {
        knut_graph_falkor_close(g);
        g = NULL;
    }
    *out = g;
    return st;
}

knut_status knut_graph_falkor_connect(knut_graph_falkor **out, const char *host, int port,
                                      const knut_graph_falkor_options *opts, knut_error *err)
{
    KNUT_ASSERT_ARG(err, out != NULL);
    *out = NULL;
    KNUT_CHECK_VERSION(opts, KNUT_GRAPH_FALKOR_OPTIONS_VERSION, err);
    return connect_impl(out, host, port, opts ? opts->username : NULL,
                        opts ? opts->password : NULL, opts, err);
}

void knut_graph_falkor_close(knut_graph_falkor *g)
{
    if (g == NULL)
        return;
    knut_graph__falkor_drop(g);
    free(g->rbuf);
    free(g->host);
    knut_net_secret_free(g->username);
    knut_net_secret_free(g->password);
    knut_graph_falkor_names_reset(g);
    free(g);
}

/* ---- URLs -------------------------------------------------------------- */

/* Errors never quote the URL: it may hold the password. */
knut_status knut_graph_falkor_connect_url(knut_graph_falkor **out, const char *url,
                                          const knut_graph_falkor_options *opts,
                                          knut_error *err)
{
    knut_net_redis_url u;
    KNUT_ASSERT_ARG(err, out != NULL);
    *out = NULL;
    KNUT_ASSERT_ARG(err, url != NULL);
    KNUT_CHECK_VERSION(opts, KNUT_GRAPH_FALKOR_OPTIONS_VERSION, err);
    knut_error perr = KNUT_ERROR_INIT;
    if (knut_net_redis_url_parse(&u, url, &perr) != KNUT_OK)
        return knut_error_set(err, KNUT_EINVAL, "FalkorDB URL: %s", perr.message);
    knut_graph_falkor_options o = KNUT_GRAPH_FALKOR_OPTIONS_INIT;
    if (opts != NULL)
        o = *opts;
    knut_status st = connect_impl(out, u.host, u.port, u.user ? u.user : o.username,
                                  u.password ? u.password : o.password, opts ? &o : NULL, err);
    knut_net_redis_url_reset(&u);
    return st;
}
