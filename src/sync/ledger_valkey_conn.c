/*
 * The shared ledger's plumbing: the redis:// URL, one hiredis connection
 * (connect and command timeouts, AUTH, reconnect after any failure), and
 * the hash field of a ledger entry (its value is the ledger codec's JSON). hiredis
 * writes with write(2), which raises SIGPIPE when the server has gone: the
 * signal is blocked around each command and a pending one is consumed, so
 * a Valkey restart is an error for the round, never the death of the job.
 */
#include "ledger_valkey_int.h"
#include "knut/net.h"

#include <hiredis/hiredis.h>

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>

void knut_sync__vk_addr_reset(vk_addr *a)
{
    free(a->host);
    knut_net_secret_free(a->user);
    knut_net_secret_free(a->pass);
    memset(a, 0, sizeof *a);
}

knut_status knut_sync__vk_addr_parse(vk_addr *a, const char *url, knut_error *err)
{
    knut_net_redis_url u;
    knut_error perr = KNUT_ERROR_INIT;
    memset(a, 0, sizeof *a);
    if (knut_net_redis_url_parse(&u, url, &perr) != KNUT_OK)
        return knut_error_set(err, KNUT_EINVAL, "ledger URL: %s", perr.message);
    a->host = u.host; /* the parts move over: nothing to copy or wipe twice */
    a->port = u.port;
    a->user = u.user;
    a->pass = u.password;
    snprintf(a->peer, sizeof a->peer, strchr(a->host, ':') ? "valkey [%.256s]:%d" : "valkey %.256s:%d",
             a->host, a->port);
    return KNUT_OK;
}

void knut_sync__vk_close(vk_conn *c)
{
    if (c->rc)
        redisFree(c->rc);
    c->rc = NULL;
}

static knut_status vk_connect(vk_conn *c, knut_error *err)
{
    const vk_addr *a = c->addr;
    struct timeval tv = {VK_CONNECT_MS / 1000, (VK_CONNECT_MS % 1000) * 1000};
    c->rc = redisConnectWithTimeout(a->host, a->port, tv);
    if (!c->rc)
        return knut_error_set(err, KNUT_ENOMEM, "%s: out of memory", a->peer);
    if (c->rc->err) {
        knut_status st = knut_error_set(err, KNUT_EIO, "%s: connect: %s", a->peer, c->rc->errstr);
        knut_sync__vk_close(c);
        return st;
    }
    tv.tv_sec = VK_COMMAND_MS / 1000;
    tv.tv_usec = (VK_COMMAND_MS % 1000) * 1000;
    if (redisSetTimeout(c->rc, tv) != REDIS_OK) {
        knut_sync__vk_close(c);
        return knut_error_set(err, KNUT_EIO, "%s: cannot set the command timeout", a->peer);
    }
    if (!a->pass)
        return KNUT_OK;
    const char *argv[3] = {"AUTH", a->user ? a->user : a->pass, a->pass};
    redisReply *r = redisCommandArgv(c->rc, a->user ? 3 : 2, argv, NULL);
    /* The reply text is the server's, never the password: safe to show. */
    knut_status st = !r                            ? knut_error_set(err, KNUT_EIO, "%s: AUTH: %s",
                                                                    a->peer, c->rc->errstr)
                     : r->type == REDIS_REPLY_ERROR ? knut_error_set(err, KNUT_EPEER,
                                                                    "%s: authentication failed: %s",
                                                                    a->peer, r->str)
                                                    : KNUT_OK;
    if (r)
        freeReplyObject(r);
    if (st != KNUT_OK)
        knut_sync__vk_close(c);
    return st;
}

/* A kept connection is usable if the server has not closed it meanwhile. */
static int alive(vk_conn *c)
{
    char ch;
    ssize_t n = recv(c->rc->fd, &ch, 1, MSG_PEEK | MSG_DONTWAIT);
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
}

/*
 * redisCommandArgv, with the reply capped: hiredis 0.14 reads a reply
 * whole, whatever its size (its reader's maxbuf only says when an idle
 * buffer is freed), so the read loop is ours and counts the bytes
 * received for this reply against VK_REPLY_MAX. What it cannot bound is
 * one array header's element count, which hiredis allocates as it reads
 * it (docs/sync.md).
 */
static knut_status capped_command(vk_conn *c, int argc, const char **argv, const size_t *lens,
                                  redisReply **out, knut_error *err)
{
    redisContext *rc = c->rc;
    int done = 0;
    void *reply = NULL;
    if (redisAppendCommandArgv(rc, argc, argv, lens) != REDIS_OK)
        goto io;
    while (!done)
        if (redisBufferWrite(rc, &done) != REDIS_OK)
            goto io;
    size_t got = 0;
    for (;;) {
        if (redisGetReplyFromReader(rc, &reply) != REDIS_OK)
            goto io;
        if (reply)
            break;
        size_t before = rc->reader->len;
        if (redisBufferRead(rc) != REDIS_OK)
            goto io;
        got += rc->reader->len - before;
        if (got > VK_REPLY_MAX)
            return knut_error_set(err, KNUT_ETOOBIG, "%s: %s: reply over the %zu-byte cap",
                                  c->addr->peer, argv[0], VK_REPLY_MAX);
    }
    *out = reply;
    return KNUT_OK;
io:
    return knut_error_set(err, KNUT_EIO, "%s: %s: %s", c->addr->peer, argv[0],
                          rc->errstr[0] ? rc->errstr : "connection lost");
}

knut_status knut_sync__vk_cmd(vk_conn *c, int argc, const char **argv, const size_t *lens,
                              redisReply **out, knut_error *err)
{
    knut_status st = KNUT_OK;
    sigset_t pipe_set, old;
    *out = NULL;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
    if (c->rc && !alive(c))
        knut_sync__vk_close(c);
    if (!c->rc && (st = vk_connect(c, err)) != KNUT_OK)
        goto cleanup;
    redisReply *r = NULL;
    if ((st = capped_command(c, argc, argv, lens, &r, err)) != KNUT_OK) {
        knut_sync__vk_close(c); /* a failed context cannot be reused */
        goto cleanup;
    }
    if (r->type == REDIS_REPLY_ERROR) {
        st = knut_error_set(err, KNUT_EPEER, "%s: %s: %s", c->addr->peer, argv[0], r->str);
        freeReplyObject(r);
        goto cleanup;
    }
    *out = r;
cleanup:
    if (!sigismember(&old, SIGPIPE)) {
        /* consume a SIGPIPE this thread raised while it was blocked */
        struct timespec zero = {0, 0};
        sigset_t pending;
        sigpending(&pending);
        if (sigismember(&pending, SIGPIPE))
            sigtimedwait(&pipe_set, NULL, &zero);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    return st;
}

/* ---- entry encoding ------------------------------------------------------ */

knut_status knut_sync__vk_field(knut_buf *out, const char *table, const char *path)
{
    knut_buf_clear(out);
    knut_buf_append(out, table, strlen(table));
    knut_buf_putc(out, '\0');
    return knut_buf_append(out, path, strlen(path));
}
