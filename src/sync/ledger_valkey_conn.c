/*
 * The shared ledger's plumbing: the redis:// URL, one hiredis connection
 * (connect and command timeouts, AUTH, reconnect after any failure), and
 * the encoding of a ledger entry as a hash field and a JSON value. hiredis
 * writes with write(2), which raises SIGPIPE when the server has gone: the
 * signal is blocked around each command and a pending one is consumed, so
 * a Valkey restart is an error for the round, never the death of the job.
 */
#include "ledger_valkey_int.h"
#include "knut/net.h"

#include <hiredis/hiredis.h>
#include <jansson.h>

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
    redisReply *r = redisCommandArgv(c->rc, argc, argv, lens);
    if (!r) {
        st = knut_error_set(err, KNUT_EIO, "%s: %s: %s", c->addr->peer, argv[0],
                            c->rc->errstr[0] ? c->rc->errstr : "connection lost");
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

knut_status knut_sync__vk_entry_encode(knut_buf *out, const sync_entry *e)
{
    json_t *o = json_pack("{s:s, s:s, s:I, s:I, s:s?, s:s, s:s?, s:I, s:I}", "table", e->table,
                          "path", e->path, "size", (json_int_t)e->size, "mtime",
                          (json_int_t)e->mtime_ns, "hash", e->hash, "status", e->status,
                          "reason", e->reason, "round", (json_int_t)e->round, "rows",
                          (json_int_t)e->rows);
    char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    knut_status st = text ? KNUT_OK : KNUT_ENOMEM;
    knut_buf_clear(out);
    if (text)
        st = knut_buf_puts(out, text);
    free(text);
    json_decref(o);
    return st;
}

void knut_sync__vk_entry_reset(sync_entry *e)
{
    free(e->table);
    free(e->path);
    free(e->hash);
    free(e->status);
    free(e->reason);
    memset(e, 0, sizeof *e);
}

static char *opt_str(json_t *o, const char *key, int *bad)
{
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return NULL;
    char *s = json_is_string(v) ? strdup(json_string_value(v)) : NULL;
    if (!s)
        *bad = 1;
    return s;
}

knut_status knut_sync__vk_entry_decode(const char *s, size_t len, sync_entry *e, knut_error *err)
{
    memset(e, 0, sizeof *e);
    if (len > VK_MAX_ENTRY)
        return knut_error_set(err, KNUT_ETOOBIG, "entry of %zu bytes (cap %d)", len,
                              VK_MAX_ENTRY);
    json_error_t je;
    json_t *o = json_loadb(s, len, JSON_REJECT_DUPLICATES, &je);
    if (!o)
        return knut_error_set(err, KNUT_EPARSE, "entry is not JSON: %s (column %d)", je.text,
                              je.column);
    int bad = !json_is_object(o);
    static const char *const ints[] = {"size", "mtime", "round", "rows"};
    int64_t *dst[] = {&e->size, &e->mtime_ns, &e->round, &e->rows};
    for (size_t i = 0; i < 4 && !bad; i++) {
        json_t *v = json_object_get(o, ints[i]);
        if (v && !json_is_integer(v))
            bad = 1;
        *dst[i] = v ? json_integer_value(v) : 0;
    }
    if (!bad) {
        e->table = opt_str(o, "table", &bad);
        e->path = opt_str(o, "path", &bad);
        e->hash = opt_str(o, "hash", &bad);
        e->status = opt_str(o, "status", &bad);
        e->reason = opt_str(o, "reason", &bad);
    }
    json_decref(o);
    if (bad || !e->table || !e->path || !e->status) {
        knut_sync__vk_entry_reset(e);
        return knut_error_set(err, KNUT_EPARSE,
                              "entry lacks table/path/status or has a value of the wrong type");
    }
    return KNUT_OK;
}
