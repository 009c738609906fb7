/*
 * The ledger in the FalkorDB server itself (`ledger: falkordb`, or
 * --ledger-url naming the FalkorDB server): the shared ledger's hash,
 * leases and versions (ledger_valkey*.c) on the server that holds the
 * graph, so a table's mutation and its ledger entries commit in one
 * MULTI/EXEC, fenced by WATCH on the table's lease (the FalkorDB sink's
 * transactions, src/graph/falkor_sink_tx.c). The last EXEC of an apply is
 *
 *   GRAPH.QUERY ...;  DEL pending;  HSET pending <field> <previous value>...;
 *   HSET ledger <field> <entry>...;  INCR version
 *
 * Redis does not roll a transaction back: a query that fails inside EXEC
 * leaves the HSETs applied. So the EXEC also writes a journal, the
 * "pending:<table>" hash of the entries' previous values ("" = none),
 * which is deleted once every reply was seen OK. A journal that is still
 * there (a failed query; or the sync, the connection or the server died
 * before the replies were read) is rolled back before the table is worked
 * on again: the entries go back to what they were, and the files are
 * replayed (MERGE makes that harmless). So a file recorded done always has
 * every one of its queries applied, exactly once when its mutation fit one
 * transaction (docs/sync.md "Exactly once into FalkorDB").
 */
#include "ledger_valkey_int.h"

#include "knut/net.h"

#include <hiredis/hiredis.h>

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* KEYS: lease, pending, ledger, version; ARGV: instance. Returns nil when
 * the lease is not ours, else the fields rolled back (none: no journal). */
static const char recover_lua[] =
    "if redis.call('GET', KEYS[1]) ~= ARGV[1] then return false end "
    "local p = redis.call('HGETALL', KEYS[2]) "
    "local f = {} "
    "for i = 1, #p, 2 do "
    "if p[i + 1] == '' then redis.call('HDEL', KEYS[3], p[i]) "
    "else redis.call('HSET', KEYS[3], p[i], p[i + 1]) end "
    "f[#f + 1] = p[i] end "
    "if #f > 0 then redis.call('DEL', KEYS[2]) redis.call('INCR', KEYS[4]) end "
    "return f";
/* KEYS: lease, pending; ARGV: instance. */
static const char forget_lua[] =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[2]) end "
    "return 0";

knut_status knut_sync__ledger_url(const knut_sync_options *o, const char *ledger,
                                  const char **url, int *in_falkor, knut_error *err)
{
    *url = o->ledger_url;
    *in_falkor = 0;
    if (ledger && strcmp(ledger, SYNC_LEDGER_FALKORDB) == 0) {
        if (!o->falkordb_url)
            return knut_error_set(err, KNUT_EINVAL, "ledger '%s' needs the FalkorDB sink "
                                  "(--falkordb URL)", SYNC_LEDGER_FALKORDB);
        if (o->ledger_url)
            return knut_error_set(err, KNUT_EINVAL, "ledger '%s' and --ledger-url: give one",
                                  SYNC_LEDGER_FALKORDB);
        *url = o->falkordb_url;
        *in_falkor = 1;
        return KNUT_OK;
    }
    if (!o->ledger_url || !o->falkordb_url)
        return KNUT_OK;
    knut_net_redis_url a, b;
    knut_error perr = KNUT_ERROR_INIT;
    if (knut_net_redis_url_parse(&a, o->ledger_url, &perr) != KNUT_OK)
        return knut_error_set(err, KNUT_EINVAL, "ledger URL: %s", perr.message);
    if (knut_net_redis_url_parse(&b, o->falkordb_url, &perr) != KNUT_OK) {
        knut_net_redis_url_reset(&a);
        return knut_error_set(err, KNUT_EINVAL, "FalkorDB URL: %s", perr.message);
    }
    *in_falkor = strcasecmp(a.host, b.host) == 0 && a.port == b.port;
    knut_net_redis_url_reset(&a);
    knut_net_redis_url_reset(&b);
    return KNUT_OK;
}

/* "<prefix><what>:<table>" */
static knut_status table_key(knut_buf *b, const struct sync_valkey *v, const char *what,
                             const char *table, knut_error *err)
{
    knut_buf_printf(b, "%s%s:%s", v->prefix, what, table);
    return knut_buf_check(b, err);
}

/* Rolls back the journal of table if there is one (the lease must be
 * ours), then re-reads the table's entries into memory. */
static knut_status recover(knut_sync *s, const char *table, const char *lease_key,
                           knut_error *err)
{
    struct sync_valkey *v = s->valkey;
    knut_buf pk = KNUT_BUF_INIT, vk = KNUT_BUF_INIT;
    redisReply *r = NULL;
    knut_status st = table_key(&pk, v, "pending", table, err);
    if (st == KNUT_OK)
        st = table_key(&vk, v, "version", table, err);
    if (st != KNUT_OK)
        goto cleanup;
    const char *argv[] = {"EVAL", recover_lua, "4", lease_key, pk.data, v->hash_key, vk.data,
                          v->instance};
    if ((st = knut_sync__vk_cmd(&v->conn, 8, argv, NULL, &r, err)) != KNUT_OK)
        goto cleanup;
    if (r->type != REDIS_REPLY_ARRAY || r->elements == 0)
        goto cleanup; /* not ours (nil): the holder recovers; or no journal */
    KNUT_LOG(KNUT_LOG_WARN, SYNC_LOG, "table %s: %zu ledger entries of a commit whose outcome "
             "was not seen are rolled back; their files are synced again", table, r->elements);
    /* memory follows the server: drop the table's entries, read them again */
    for (size_t i = s->ledger.n; i-- > 0;)
        if (i < s->ledger.n && strcmp(s->ledger.items[i].table, table) == 0) {
            char *path = strdup(s->ledger.items[i].path);
            if (!path) {
                st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
                goto cleanup;
            }
            knut_sync__ledger_forget(&s->ledger, table, path);
            free(path);
        }
    if (v->cur)
        v->cur->ver = -1;
    st = knut_sync__valkey_load(v, &s->ledger, table, err);
cleanup:
    if (r)
        freeReplyObject(r);
    knut_buf_reset(&pk);
    knut_buf_reset(&vk);
    return st;
}

knut_status knut_sync__ledger_recover(knut_sync *s, const char *table, knut_error *err)
{
    if (!s->falkor_ledger)
        return KNUT_OK;
    const char *t;
    char *key = knut_sync__vk_lease_key_copy(s->valkey, &t);
    knut_status st = key ? recover(s, table, key, err)
                         : knut_error_set(err, KNUT_ERROR, "table '%s': no lease held", table);
    free(key);
    return st;
}

/* The last EXEC's commands: DEL pending, HSET pending, HSET ledger, INCR. */
typedef struct commit_cmds {
    knut_buf *bufs;       /* 3 n: field, entry, previous entry */
    const char **argv;
    size_t *lens;
    int argc[4];
    size_t n_args;
} commit_cmds;

static void arg(commit_cmds *c, const char *s, size_t len)
{
    c->argv[c->n_args] = s;
    c->lens[c->n_args++] = len;
}

static knut_status cmds_build(knut_sync *s, commit_cmds *c, const sync_entry *e, size_t n,
                              const char *pending, const char *version, knut_error *err)
{
    struct sync_valkey *v = s->valkey;
    knut_status st = KNUT_OK;
    c->bufs = calloc(3 * n + 1, sizeof *c->bufs);
    c->argv = calloc(8 + 4 * n, sizeof *c->argv);
    c->lens = calloc(8 + 4 * n, sizeof *c->lens);
    if (!c->bufs || !c->argv || !c->lens)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    for (size_t i = 0; i < n && st == KNUT_OK; i++) {
        /* the journal holds the previous value, "" for none */
        const sync_entry *old = knut_sync__ledger_find(&s->ledger, e[i].table, e[i].path);
        st = knut_sync__vk_entry_kv(v, &e[i], &c->bufs[3 * i], &c->bufs[3 * i + 1], err);
        knut_buf_clear(&c->bufs[3 * i + 2]);
        if (st == KNUT_OK)
            st = old ? knut_sync__vk_entry_kv(v, old, NULL, &c->bufs[3 * i + 2], err)
                     : knut_buf_append(&c->bufs[3 * i + 2], "", 0);
        if (st == KNUT_OK)
            st = knut_buf_check(&c->bufs[3 * i + 2], err);
    }
    if (st != KNUT_OK)
        return st;
    arg(c, "DEL", 3);
    arg(c, pending, strlen(pending));
    c->argc[0] = 2;
    arg(c, "HSET", 4);
    arg(c, pending, strlen(pending));
    for (size_t i = 0; i < n; i++) {
        arg(c, c->bufs[3 * i].data, c->bufs[3 * i].len);
        arg(c, c->bufs[3 * i + 2].data ? c->bufs[3 * i + 2].data : "", c->bufs[3 * i + 2].len);
    }
    c->argc[1] = 2 + 2 * (int)n;
    arg(c, "HSET", 4);
    arg(c, v->hash_key, strlen(v->hash_key));
    for (size_t i = 0; i < n; i++) {
        arg(c, c->bufs[3 * i].data, c->bufs[3 * i].len);
        arg(c, c->bufs[3 * i + 1].data, c->bufs[3 * i + 1].len);
    }
    c->argc[2] = 2 + 2 * (int)n;
    arg(c, "INCR", 4);
    arg(c, version, strlen(version));
    c->argc[3] = 2;
    return KNUT_OK;
}

/* The transaction's prepare: once the edge replies are in, the entries
 * get the skipped-edges note (missing.c) and become the last EXEC's
 * commands. */
typedef struct commit_prep {
    knut_sync *s;
    knut_graph_mutation *m;
    commit_cmds *cc;
    sync_entry *e;
    size_t n;
    const char *pending, *version;
} commit_prep;

static knut_status commit_prepare(void *ctx, knut_graph_falkor_tx *tx, knut_error *err)
{
    commit_prep *p = ctx;
    knut_sync__missing_note(p->m, p->e, p->n, p->s->missing_note, sizeof p->s->missing_note);
    knut_status st = cmds_build(p->s, p->cc, p->e, p->n, p->pending, p->version, err);
    tx->cmd_argc = p->cc->argc;
    tx->cmd_argv = p->cc->argv;
    tx->cmd_lens = p->cc->lens;
    return st;
}

static void cmds_reset(commit_cmds *c, size_t n)
{
    for (size_t i = 0; c->bufs && i < 3 * n; i++)
        knut_buf_reset(&c->bufs[i]);
    free(c->bufs);
    free(c->argv);
    free(c->lens);
}

knut_status knut_sync__ledger_apply(knut_sync *s, knut_graph_mutation *m, const sync_entry *e,
                                    size_t n, knut_graph_sink_stats *stats, knut_error *err)
{
    if (!s->falkor_ledger) { /* the sink's commit callback writes the ledger */
        sync_ledger_commit cc = {&s->ledger, e, n};
        /* missing.c: the entries carry the skipped-edges note */
        sync_missing_commit mc = {&cc, m, (sync_entry *)e, n, s->missing_note,
                                  sizeof s->missing_note};
        knut_graph_sink_commit commit = {knut_sync__missing_commit_fn, &mc};
        return knut_graph_sink_apply(s->sink, m, &commit, stats, err);
    }
    struct sync_valkey *v = s->valkey;
    knut_buf pk = KNUT_BUF_INIT, vk = KNUT_BUF_INIT;
    commit_cmds cc = {0};
    redisReply *r = NULL;
    const char *table = "?";
    char *lease = knut_sync__vk_lease_key_copy(v, &table);
    knut_status st = lease ? KNUT_OK : knut_error_set(err, KNUT_ERROR, "no lease held");
    if (st == KNUT_OK && n > 0)
        st = table_key(&pk, v, "pending", e[0].table, err);
    if (st == KNUT_OK && n > 0)
        st = table_key(&vk, v, "version", e[0].table, err);
    commit_prep prep = {s, m, &cc, (sync_entry *)e, n, pk.data, vk.data};
    knut_graph_falkor_tx tx = KNUT_GRAPH_FALKOR_TX_INIT;
    tx.fence_key = lease;
    tx.fence_value = v->instance;
    tx.n_cmds = n > 0 ? 4 : 0;
    if (n > 0) {
        tx.prepare = commit_prepare;
        tx.prepare_ctx = &prep;
    }
    if (st == KNUT_OK)
        st = knut_graph_falkor_sink_set_tx(s->sink, &tx, err);
    if (st == KNUT_OK)
        st = knut_graph_sink_apply(s->sink, m, NULL, stats, err);
    if (st == KNUT_OK && n > 0) {
        /* committed with the graph; the journal is no longer needed */
        if (v->cur && tx.last_integer >= 1 && v->cur->ver == tx.last_integer - 1)
            v->cur->ver = tx.last_integer;
        const char *argv[] = {"EVAL", forget_lua, "2", lease, pk.data, v->instance};
        knut_error ferr = KNUT_ERROR_INIT;
        if (knut_sync__vk_cmd(&v->conn, 6, argv, NULL, &r, &ferr) != KNUT_OK)
            KNUT_LOG(KNUT_LOG_WARN, SYNC_LOG, "table %s: %s (the commit is rolled back and "
                     "its files synced again when the table is next taken)", table,
                     ferr.message);
    } else if (st != KNUT_OK && tx.fenced) {
        pthread_mutex_lock(&v->mu);
        v->lost = 1;
        pthread_mutex_unlock(&v->mu);
        knut_sync__vk_lease_lost_warn(v, table, "another instance holds it at commit time");
        knut_error_prefix(err, "lease on table '%s' lost: ", table);
    } else if (st != KNUT_OK && lease) {
        /* A query failed inside the last EXEC (its ledger writes applied),
         * or the outcome is unknown (a lost connection, a timeout, a stop):
         * undo the entries now if the server answers (nothing to undo
         * without a journal), else when the table is next taken. */
        knut_error rerr = KNUT_ERROR_INIT;
        if (recover(s, table, lease, &rerr) != KNUT_OK)
            KNUT_LOG(KNUT_LOG_WARN, SYNC_LOG, "table %s: %s (rolled back when the table is "
                     "next taken)", table, rerr.message);
    }
    if (r)
        freeReplyObject(r);
    cmds_reset(&cc, n);
    knut_buf_reset(&pk);
    knut_buf_reset(&vk);
    free(lease);
    return st;
}
