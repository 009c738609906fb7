/*
 * The shared ledger: several `knut sync` instances (FalkorDB sink) share
 * one set of tables through Valkey/Redis.
 *  - The ledger is one hash, "knut:sync:<name>:ledger" (<name>: the
 *    config's `name:`, required: the deployment, not the file), field
 *    "table NUL path", value the entry as JSON, the path relative to the
 *    config's folder. It is loaded at open, and a table's entries are
 *    re-read when its lease is taken if its version ("...:version:<table>", bumped by each ledger write) moved:
 *    another instance did files of it meanwhile.
 *  - A table is worked on only under its lease, "knut:sync:<name>:lease:
 *    <table>" = instance id, set NX with a time to live. A thread with its
 *    own connection renews it every lease/3 (compare, then PEXPIRE), so a
 *    long FalkorDB apply keeps it; when a renewal finds it gone, or cannot
 *    renew for a whole lease, the lease counts as lost.
 *  - The ledger write is a script that HSETs the entries only if the lease
 *    is still ours (fencing): an instance that lost its lease never records
 *    a file, and the new holder redoes it (MERGE makes that harmless).
 *  - The lease is released (compare, then DEL) after the table.
 */
#include "ledger_valkey_int.h"

#include <hiredis/hiredis.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- open, load, close ---------------------------------------------------- */

knut_status knut_sync__valkey_open(struct sync_valkey **out, const char *url,
                                   const char *password, const knut_sync_config *cfg,
                                   const char *instance, int64_t lease_ms, knut_error *err)
{
    knut_buf b = KNUT_BUF_INIT;
    const char *name = NULL;
    *out = NULL;
    knut_status st = knut_sync__config_name(cfg, "a shared ledger (--ledger-url)", &name, err);
    if (st != KNUT_OK)
        return st;
    if (lease_ms < 0 || (lease_ms > 0 && lease_ms < 100)) /* renewals every lease/3 */
        return knut_error_set(err, KNUT_EINVAL, "lease of %lld ms: at least 100 ms (0.1 s)",
                              (long long)lease_ms);
    struct sync_valkey *v = calloc(1, sizeof *v);
    if (!v)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    pthread_mutex_init(&v->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&v->cv, &ca);
    pthread_condattr_destroy(&ca);
    v->lease_ms = lease_ms > 0 ? lease_ms : 30000;
    if ((st = knut_sync__vk_addr_parse(&v->addr, url, err)) != KNUT_OK)
        goto cleanup;
    if (!v->addr.pass && password && *password && !(v->addr.pass = strdup(password))) {
        st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
        goto cleanup;
    }
    v->conn.addr = &v->addr;
    if (instance && *instance) {
        knut_buf_puts(&b, instance);
    } else {
        char host[256] = "localhost";
        gethostname(host, sizeof host - 1);
        knut_buf_printf(&b, "%s:%ld", host, (long)getpid());
    }
    v->instance = knut_buf_detach(&b, NULL);
    knut_buf_printf(&b, "knut:sync:%s:", name); /* the config's name: */
    v->prefix = knut_buf_detach(&b, NULL);
    if (v->prefix) {
        knut_buf_printf(&b, "%sledger", v->prefix);
        v->hash_key = knut_buf_detach(&b, NULL);
    }
    v->base = knut_sync__dirname(cfg->file);
    if (!v->instance || !v->prefix || !v->hash_key || !v->base)
        st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
cleanup:
    knut_buf_reset(&b);
    if (st != KNUT_OK) {
        knut_sync__valkey_close(v);
        return st;
    }
    *out = v;
    return KNUT_OK;
}
/* The field for messages: table/path, cut to fit. */
static void field_show(char *dst, size_t cap, const char *f, size_t len)
{
    size_t n = len < cap - 1 ? len : cap - 1;
    for (size_t i = 0; i < n; i++)
        dst[i] = f[i] ? f[i] : '/';
    dst[n] = '\0';
}

/* Puts the entries of one HSCAN page (field, value, ...) into l. */
static knut_status load_page(struct sync_valkey *v, sync_ledger *l, const redisReply *arr,
                             knut_buf *fb, knut_error *err)
{
    knut_status st = KNUT_OK;
    for (size_t i = 0; i + 1 < arr->elements && st == KNUT_OK; i += 2) {
        const redisReply *f = arr->element[i], *val = arr->element[i + 1];
        char field[512], where[1024];
        sync_entry e;
        if (f->type != REDIS_REPLY_STRING || val->type != REDIS_REPLY_STRING)
            return knut_error_set(err, KNUT_EPARSE, "%s: ledger '%s': unexpected HSCAN reply",
                                  v->addr.peer, v->hash_key);
        field_show(field, sizeof field, f->str, f->len);
        snprintf(where, sizeof where, "%s: ledger '%s' field '%s'", v->addr.peer, v->hash_key,
                 field);
        st = knut_sync__entry_decode(val->str, val->len, where, &e, err);
        if (st == KNUT_OK) {
            knut_sync__vk_field(fb, e.table, e.path);
            if (fb->len != f->len || memcmp(fb->data, f->str, f->len) != 0)
                st = knut_error_set(err, KNUT_EPARSE, "%s: entry names another table/path",
                                    where);
        }
        /* an Iceberg or Spark table's entry names no file: kept as it is */
        if (st == KNUT_OK && e.path[0] != '/' && strcmp(v->base, ".") != 0 &&
            !knut_sync__entry_is_source_key(e.path)) {
            char *full = knut_sync__path_join(v->base, e.path); /* as the source lists it */
            if (!full)
                st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
            free(e.path);
            e.path = full;
        }
        if (st == KNUT_OK)
            st = knut_sync__ledger_remember(l, &e, 1, err);
        knut_sync__entry_reset(&e);
    }
    return st;
}

knut_status knut_sync__valkey_load(struct sync_valkey *v, sync_ledger *l, const char *table,
                                   knut_error *err)
{
    knut_buf pat = KNUT_BUF_INIT, fb = KNUT_BUF_INIT;
    char cursor[32] = "0";
    redisReply *r = NULL;
    knut_status st = KNUT_OK;
    if (table) { /* MATCH "<table, glob-escaped>\0*" */
        for (const char *p = table; *p; p++) {
            if (strchr("*?[]\\", *p))
                knut_buf_putc(&pat, '\\');
            knut_buf_putc(&pat, *p);
        }
        knut_buf_putc(&pat, '\0');
        knut_buf_putc(&pat, '*');
        if ((st = knut_buf_check(&pat, err)) != KNUT_OK)
            goto cleanup;
    }
    do {
        const char *argv[] = {"HSCAN", v->hash_key, cursor, "COUNT", VK_SCAN_COUNT, "MATCH",
                              pat.data};
        size_t lens[] = {5, strlen(v->hash_key), strlen(cursor), 5, strlen(VK_SCAN_COUNT), 5,
                         pat.len};
        if ((st = knut_sync__vk_cmd(&v->conn, table ? 7 : 5, argv, lens, &r, err)) != KNUT_OK)
            goto cleanup;
        if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
            r->element[0]->type != REDIS_REPLY_STRING || r->element[0]->len >= sizeof cursor ||
            r->element[1]->type != REDIS_REPLY_ARRAY) {
            st = knut_error_set(err, KNUT_EPARSE, "%s: ledger '%s': unexpected HSCAN reply",
                                v->addr.peer, v->hash_key);
            goto cleanup;
        }
        memcpy(cursor, r->element[0]->str, r->element[0]->len);
        cursor[r->element[0]->len] = '\0';
        if ((st = load_page(v, l, r->element[1], &fb, err)) != KNUT_OK)
            goto cleanup;
        freeReplyObject(r);
        r = NULL;
    } while (strcmp(cursor, "0") != 0);
cleanup:
    if (r)
        freeReplyObject(r);
    knut_buf_reset(&pat);
    knut_buf_reset(&fb);
    return st;
}

knut_status knut_sync__ledger_open_valkey(sync_ledger *l, struct sync_valkey *v, knut_error *err)
{
    memset(l, 0, sizeof *l);
    l->valkey = v;
    return knut_sync__valkey_load(v, l, NULL, err);
}

void knut_sync__valkey_close(struct sync_valkey *v)
{
    if (!v)
        return;
    if (v->lease_key)
        knut_sync__valkey_table_end(v);
    pthread_mutex_lock(&v->mu);
    v->stop = 1;
    pthread_cond_signal(&v->cv);
    pthread_mutex_unlock(&v->mu);
    if (v->renewer_started)
        pthread_join(v->renewer, NULL);
    pthread_cond_destroy(&v->cv);
    pthread_mutex_destroy(&v->mu);
    knut_sync__vk_close(&v->conn);
    knut_sync__vk_addr_reset(&v->addr);
    free(v->instance);
    free(v->prefix);
    free(v->hash_key);
    free(v->base);
    for (size_t i = 0; i < v->n_seen; i++)
        free(v->seen[i].table);
    free(v->seen);
    free(v);
}
