/*
 * The leases of the shared ledger (see ledger_valkey.c for the keys): take
 * (set if free, or already ours, with a time to live), renew from a thread
 * with its own connection every lease/3 (compare, then PEXPIRE), check at
 * the round's safe points, release (compare, then DEL), and the fenced
 * ledger write: one script that HSETs the entries only while the lease
 * still holds this instance's id. All compare-and-act steps are Lua
 * scripts, so each is atomic on the server.
 */
#include "ledger_valkey_int.h"

#include <hiredis/hiredis.h>

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Takes the lease if free (or already ours) and returns {'', the table's
 * ledger version}; else {holder, 0}. */
static const char take_lua[] =
    "local h = redis.call('GET', KEYS[1]) "
    "if h and h ~= ARGV[1] then return {h, 0} end "
    "redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) "
    "return {'', tonumber(redis.call('GET', KEYS[2]) or '0')}";
static const char renew_lua[] =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then "
    "return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0";
static const char release_lua[] =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end "
    "return 0";
/* Returns the table's new ledger version (>= 1), or 0 if the lease is not ours. */
static const char commit_lua[] =
    "if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end "
    "for i = 2, #ARGV, 2 do redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1]) end "
    "return redis.call('INCR', KEYS[3])";

void knut_sync__vk_lease_lost_warn(struct sync_valkey *v, const char *table, const char *why)
{
    knut_log_emit(KNUT_LOG_WARN, SYNC_LOG,
                  (knut_log_field[]){KNUT_LF_STR("table", table),
                                     KNUT_LF_STR("instance", v->instance),
                                     KNUT_LF_STR("reason", why)},
                  3, "table %s: lease lost; stopped work on it without committing", table);
}

/* ---- the renewal thread ------------------------------------------------- */

/* One renewal: 1 renewed, 0 not ours any more, -1 could not ask. */
static int renew_once(struct sync_valkey *v, vk_conn *c, const char *key, char *why,
                      size_t why_cap)
{
    char ttl[32];
    snprintf(ttl, sizeof ttl, "%lld", (long long)v->lease_ms);
    const char *argv[] = {"EVAL", renew_lua, "1", key, v->instance, ttl};
    redisReply *r = NULL;
    knut_error err = KNUT_ERROR_INIT;
    if (knut_sync__vk_cmd(c, 6, argv, NULL, &r, &err) != KNUT_OK) {
        snprintf(why, why_cap, "could not renew it within the lease: %.200s", err.message);
        return -1;
    }
    int ok = r->type == REDIS_REPLY_INTEGER && r->integer == 1;
    freeReplyObject(r);
    if (!ok)
        snprintf(why, why_cap, "it expired or another instance holds it");
    return ok;
}

static void *renew_main(void *arg)
{
    struct sync_valkey *v = arg;
    vk_conn c = {&v->addr, NULL};
    pthread_mutex_lock(&v->mu);
    while (!v->stop) {
        if (v->lease_key && !v->lost) {
            char *key = strdup(v->lease_key), why[sizeof v->lost_why] = "";
            uint64_t gen = v->lease_gen;
            int64_t t0 = knut_clock_mono_ns();
            pthread_mutex_unlock(&v->mu);
            int ok = key ? renew_once(v, &c, key, why, sizeof why) : -1;
            free(key);
            pthread_mutex_lock(&v->mu);
            if (v->lease_key && gen == v->lease_gen) {
                if (ok == 1)
                    v->renewed_ns = t0; /* counted from before the ask: conservative */
                else if (ok == 0 || knut_clock_mono_ns() - v->renewed_ns >= v->lease_ms * 1000000)
                    v->lost = 1;
                if (v->lost)
                    snprintf(v->lost_why, sizeof v->lost_why, "%s", why);
            }
        }
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        int64_t ns = ts.tv_nsec + v->lease_ms * 1000000 / 3;
        ts.tv_sec += ns / 1000000000;
        ts.tv_nsec = ns % 1000000000;
        if (!v->stop)
            pthread_cond_timedwait(&v->cv, &v->mu, &ts);
    }
    pthread_mutex_unlock(&v->mu);
    knut_sync__vk_close(&c);
    return NULL;
}

/* path as stored: relative to the config's folder when under it. */
static const char *stored_path(const struct sync_valkey *v, const char *path)
{
    size_t n = strlen(v->base);
    if (strcmp(v->base, ".") == 0 || strcmp(v->base, "/") == 0)
        return path;
    return strncmp(path, v->base, n) == 0 && path[n] == '/' && path[n + 1] ? path + n + 1 : path;
}

knut_status knut_sync__vk_entry_kv(const struct sync_valkey *v, const sync_entry *e,
                                   knut_buf *field, knut_buf *value, knut_error *err)
{
    sync_entry se = *e;
    char where[600];
    se.path = (char *)stored_path(v, e->path);
    snprintf(where, sizeof where, "%s: ledger '%s'", v->addr.peer, v->hash_key);
    knut_status st = field ? knut_sync__vk_field(field, se.table, se.path) : KNUT_OK;
    if (st == KNUT_OK)
        st = field ? knut_buf_check(field, err) : KNUT_OK;
    if (st == KNUT_OK)
        st = knut_sync__entry_encode(value, &se, where, err);
    return st;
}

/* ---- leases and the fenced write ------------------------------------------ */

static vk_seen *seen_of(struct sync_valkey *v, const char *table)
{
    for (size_t i = 0; i < v->n_seen; i++)
        if (strcmp(v->seen[i].table, table) == 0)
            return &v->seen[i];
    vk_seen *p = realloc(v->seen, (v->n_seen + 1) * sizeof *p);
    if (!p)
        return NULL;
    v->seen = p;
    if (!(p[v->n_seen].table = strdup(table)))
        return NULL;
    p[v->n_seen].ver = -1;
    return &p[v->n_seen++];
}

knut_status knut_sync__valkey_table_begin(struct sync_valkey *v, sync_ledger *l,
                                          const char *table, int *skip, knut_error *err)
{
    knut_buf key = KNUT_BUF_INIT, vkey = KNUT_BUF_INIT;
    redisReply *r = NULL;
    char ttl[32];
    *skip = 0;
    snprintf(ttl, sizeof ttl, "%lld", (long long)v->lease_ms);
    knut_buf_printf(&key, "%slease:%s", v->prefix, table);
    knut_buf_printf(&vkey, "%sversion:%s", v->prefix, table);
    knut_status st = knut_buf_check(&key, err);
    if (st == KNUT_OK)
        st = knut_buf_check(&vkey, err);
    if (st == KNUT_OK && !(v->cur = seen_of(v, table)))
        st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
    if (st != KNUT_OK)
        goto cleanup;
    const char *argv[] = {"EVAL", take_lua, "2", key.data, vkey.data, v->instance, ttl};
    int64_t t0 = knut_clock_mono_ns();
    if ((st = knut_sync__vk_cmd(&v->conn, 7, argv, NULL, &r, err)) != KNUT_OK)
        goto cleanup;
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
        r->element[0]->type != REDIS_REPLY_STRING || r->element[1]->type != REDIS_REPLY_INTEGER) {
        st = knut_error_set(err, KNUT_EPARSE, "%s: unexpected reply taking the lease of '%s'",
                            v->addr.peer, table);
        goto cleanup;
    }
    if (r->element[0]->len > 0) { /* someone else works on it: not a failure */
        *skip = 1;
        knut_log_emit(KNUT_LOG_INFO, SYNC_LOG,
                      (knut_log_field[]){KNUT_LF_STR("table", table),
                                         KNUT_LF_STR("holder", r->element[0]->str),
                                         KNUT_LF_STR("instance", v->instance)},
                      3, "table %s skipped: its lease is held by another instance", table);
        goto cleanup;
    }
    pthread_mutex_lock(&v->mu);
    free(v->lease_key);
    v->lease_key = knut_buf_detach(&key, NULL);
    v->lease_table = table;
    v->lease_gen++;
    v->lost = 0;
    v->lost_why[0] = '\0';
    v->renewed_ns = t0;
    if (!v->renewer_started) {
        /* Signals stay with the round's thread: SIGINT/SIGTERM must
         * interrupt its waits, not the renewer's. */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, &old);
        v->renewer_started = pthread_create(&v->renewer, NULL, renew_main, v) == 0;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    pthread_cond_signal(&v->cv);
    int started = v->renewer_started;
    pthread_mutex_unlock(&v->mu);
    if (!started)
        st = knut_error_set(err, KNUT_ERROR, "cannot start the lease renewal thread");
    /* Another instance may have done files of it meanwhile: re-read its
     * entries, unless no commit happened since memory last had them. */
    int64_t ver = r->element[1]->integer;
    if (st == KNUT_OK && ver != v->cur->ver) {
        st = knut_sync__valkey_load(v, l, table, err);
        if (st == KNUT_OK)
            v->cur->ver = ver;
    }
    if (st != KNUT_OK)
        knut_sync__valkey_table_end(v);
cleanup:
    if (r)
        freeReplyObject(r);
    knut_buf_reset(&key);
    knut_buf_reset(&vkey);
    return st;
}

void knut_sync__valkey_table_end(struct sync_valkey *v)
{
    pthread_mutex_lock(&v->mu);
    char *key = v->lease_key;
    v->lease_key = NULL;
    v->lease_table = NULL;
    v->cur = NULL;
    pthread_mutex_unlock(&v->mu);
    if (!key)
        return;
    const char *argv[] = {"EVAL", release_lua, "1", key, v->instance};
    redisReply *r = NULL;
    knut_error err = KNUT_ERROR_INIT;
    if (knut_sync__vk_cmd(&v->conn, 5, argv, NULL, &r, &err) != KNUT_OK)
        KNUT_LOG(KNUT_LOG_WARN, SYNC_LOG, "%s (the lease expires by itself)", err.message);
    if (r)
        freeReplyObject(r);
    free(key);
}

knut_status knut_sync__valkey_lease_check(struct sync_valkey *v, knut_error *err)
{
    char why[sizeof v->lost_why];
    pthread_mutex_lock(&v->mu);
    const char *table = v->lease_table ? v->lease_table : "?";
    int lost = !v->lease_key || v->lost ||
               knut_clock_mono_ns() - v->renewed_ns >= v->lease_ms * 1000000;
    snprintf(why, sizeof why, "%s", v->lost_why[0] ? v->lost_why : "not renewed within the lease");
    if (lost)
        v->lost = 1;
    pthread_mutex_unlock(&v->mu);
    if (!lost)
        return KNUT_OK;
    knut_sync__vk_lease_lost_warn(v, table, why);
    return knut_error_set(err, KNUT_ECANCELLED, "%s: lease on table '%s' lost (%s)", v->addr.peer,
                          table, why);
}

char *knut_sync__vk_lease_key_copy(struct sync_valkey *v, const char **table)
{
    pthread_mutex_lock(&v->mu);
    char *key = v->lease_key ? strdup(v->lease_key) : NULL;
    *table = v->lease_table ? v->lease_table : "?";
    pthread_mutex_unlock(&v->mu);
    return key;
}

knut_status knut_sync__valkey_write(struct sync_valkey *v, const sync_entry *e, size_t n,
                                    knut_error *err)
{
    /* EVAL script 3 lease-key hash-key version-key instance (field value)... */
    size_t argc = 7 + 2 * n;
    const char **argv = calloc(argc, sizeof *argv);
    size_t *lens = calloc(argc, sizeof *lens);
    knut_buf *bufs = calloc(2 * n + 1, sizeof *bufs);
    redisReply *r = NULL;
    char *key = NULL;
    const char *table = "?";
    knut_buf vkey = KNUT_BUF_INIT;
    knut_status st = argv && lens && bufs ? KNUT_OK
                                          : knut_error_set(err, KNUT_ENOMEM, "out of memory");
    if (st == KNUT_OK)
        st = knut_sync__valkey_lease_check(v, err);
    if (st != KNUT_OK)
        goto cleanup;
    key = knut_sync__vk_lease_key_copy(v, &table);
    knut_buf_printf(&vkey, "%sversion:%s", v->prefix, table);
    if (!key || (st = knut_buf_check(&vkey, err)) != KNUT_OK) {
        st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
        goto cleanup;
    }
    const char *head[] = {"EVAL", commit_lua, "3", key, v->hash_key, vkey.data, v->instance};
    for (size_t i = 0; i < 7; i++) {
        argv[i] = head[i];
        lens[i] = strlen(head[i]);
    }
    for (size_t i = 0; i < n && st == KNUT_OK; i++) {
        st = knut_sync__vk_entry_kv(v, &e[i], &bufs[2 * i], &bufs[2 * i + 1], err);
        for (size_t k = 0; k < 2 && st == KNUT_OK; k++) {
            argv[7 + 2 * i + k] = bufs[2 * i + k].data;
            lens[7 + 2 * i + k] = bufs[2 * i + k].len;
        }
    }
    if (st == KNUT_OK)
        st = knut_sync__vk_cmd(&v->conn, (int)argc, argv, lens, &r, err);
    if (st == KNUT_OK && r->type == REDIS_REPLY_INTEGER && r->integer >= 1) {
        /* memory will hold these entries (the caller remembers them): the
         * version they make is known, unless another commit slipped in */
        if (v->cur && v->cur->ver == r->integer - 1)
            v->cur->ver = r->integer;
    } else if (st == KNUT_OK) {
        pthread_mutex_lock(&v->mu);
        v->lost = 1;
        pthread_mutex_unlock(&v->mu);
        knut_sync__vk_lease_lost_warn(v, table, "another instance holds it at commit time");
        st = knut_error_set(err, KNUT_ECANCELLED,
                            "%s: lease on table '%s' lost before the ledger commit; nothing "
                            "recorded", v->addr.peer, table);
    }
cleanup:
    if (r)
        freeReplyObject(r);
    for (size_t i = 0; bufs && i < 2 * n; i++)
        knut_buf_reset(&bufs[i]);
    free(bufs);
    free(argv);
    free(lens);
    free(key);
    knut_buf_reset(&vkey);
    return st;
}
