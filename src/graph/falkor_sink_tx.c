/*
 * The FalkorDB sink's transactional apply (knut_graph_falkor_sink_set_tx):
 * the mutation's GRAPH.QUERY texts, rendered by the same batch planner as
 * the pipelined apply, are grouped into MULTI/EXEC transactions of bounded
 * size, each sent only while a fence key holds the holder's value:
 *
 *   WATCH fence; GET fence           -> not the value: UNWATCH, fenced
 *   MULTI; GRAPH.QUERY ... x n; [the caller's commands, last unit]; EXEC
 *
 * FalkorDB runs GRAPH.QUERY inside MULTI/EXEC (not from Lua scripts), the
 * AOF keeps the transaction whole, and WATCH aborts the EXEC when the key
 * changed, expired or was renewed meanwhile (docs/sync.md "Exactly once
 * into FalkorDB"; the evidence: tests/integration/test_sync_exactly_once.py).
 *
 * Edge rows whose endpoint is missing are counted from the EXEC reply (rows
 * sent minus rows returned) and looked up afterwards, as the pipelined
 * apply does; with edge sets the caller's commands go in a transaction of
 * their own, so a missing endpoint can still stop them (graph_falkor.h).
 */
#include "cypher_int.h"
#include "falkor_int.h"
#include "falkor_sink_int.h"

#include <stdlib.h>
#include <string.h>

#define TX_UNIT_QUERIES_DEFAULT 16
#define TX_UNIT_QUERIES_MAX 256
#define TX_UNIT_BYTES_DEFAULT ((size_t)16 << 20)
/* An EXEC aborted while the fence still holds our value (a renewal touched
 * the key) is sent again; more aborts in a row mean something else is
 * writing the key. */
#define TX_ATTEMPTS 5

typedef struct tx_state {
    knut_graph_falkor *g;
    const char *graph;
    knut_graph_falkor_tx *tx;
    knut_graph_sink_stats *stats;
    knut_graph_falkor_stats *server;
    knut_buf cmds;        /* the unit's GRAPH.QUERY commands, RESP */
    int64_t n_q;
    int64_t max_q;
    size_t max_bytes;
    size_t edge_suffix_len; /* the edge plan's row-count suffix */
    knut_graph_set_kind kind[TX_UNIT_QUERIES_MAX];
    int64_t rows[TX_UNIT_QUERIES_MAX];
    knut_graph_set *set[TX_UNIT_QUERIES_MAX];
    size_t text_at[TX_UNIT_QUERIES_MAX]; /* the query text inside cmds */
    size_t text_len[TX_UNIT_QUERIES_MAX];
    unsigned char short_rows[TX_UNIT_QUERIES_MAX]; /* edge rows skipped: look up */
    const knut_graph_set *checked; /* the set whose key types were checked */
} tx_state;

/* The offset, inside one RESP command made by knut_graph__falkor_query_cmd
 * (GRAPH.QUERY key text ...), of the query text: past "*N\r\n" and two
 * bulks "$L\r\n...\r\n", then the third bulk's header. len if malformed. */
static size_t query_text_offset(const char *cmd, size_t len)
{
    const char *p = memchr(cmd, '\n', len), *end = cmd + len;
    for (int arg = 0; p && arg < 2; arg++) {
        char *e;
        p++;
        if (p >= end || *p != '$')
            return len;
        unsigned long long n = strtoull(p + 1, &e, 10);
        if (e + 2 > end || e[0] != '\r' || (unsigned long long)(end - (e + 2)) < n + 2)
            return len;
        p = e + 2 + n + 1; /* at the bulk's '\n' */
    }
    const char *nl = p ? memchr(p + 1, '\n', (size_t)(end - p - 1)) : NULL;
    return nl ? (size_t)(nl + 1 - cmd) : len;
}

/* Receives one reply and reads its first header; the bytes stay at
 * g->rbuf + g->rpos (length *len) until consumed. */
static knut_status recv_item(knut_graph_falkor *g, size_t *len, falkor_item *it, knut_error *err)
{
    knut_status st = knut_graph__falkor_recv(g, len, err);
    if (st != KNUT_OK)
        return st;
    falkor_cur c = {g->rbuf + g->rpos, g->rbuf + g->rpos + *len};
    if (knut_graph__falkor_cur_next(&c, it) != KNUT_OK) {
        knut_graph__falkor_drop(g);
        return knut_error_set(err, KNUT_EPARSE, "%s: malformed reply in a transaction", g->peer);
    }
    return KNUT_OK;
}

/* WATCH + GET: *ours = 1 if the fence holds the value (the WATCH stays). */
static knut_status fence_check(tx_state *t, int *ours, knut_error *err)
{
    knut_graph_falkor *g = t->g;
    knut_buf b = KNUT_BUF_INIT;
    const char *w[] = {"WATCH", t->tx->fence_key}, *gv[] = {"GET", t->tx->fence_key};
    size_t len;
    falkor_item it;
    *ours = 0;
    knut_status st = knut_graph__falkor_cmd_append(&b, 2, w, err);
    if (st == KNUT_OK)
        st = knut_graph__falkor_cmd_append(&b, 2, gv, err);
    if (st == KNUT_OK)
        st = knut_graph__falkor_send(g, b.data, b.len, err);
    if (st == KNUT_OK && (st = recv_item(g, &len, &it, err)) == KNUT_OK) {
        if (it.type == '-')
            st = knut_graph__falkor_peer_error(g, "WATCH", it.s, (size_t)it.n, err);
        knut_graph__falkor_consume(g, len);
    }
    if (st == KNUT_OK && (st = recv_item(g, &len, &it, err)) == KNUT_OK) {
        size_t vl = strlen(t->tx->fence_value);
        if (it.type == '-')
            st = knut_graph__falkor_peer_error(g, "GET", it.s, (size_t)it.n, err);
        else
            *ours = it.type == '$' && (size_t)it.n == vl && memcmp(it.s, t->tx->fence_value, vl) == 0;
        knut_graph__falkor_consume(g, len);
    }
    if (st != KNUT_OK && st != KNUT_EIO) /* a reply may be left unread */
        knut_graph__falkor_drop(g);
    if (st == KNUT_OK && !*ours) { /* leave the connection clean */
        const char *u[] = {"UNWATCH"};
        knut_buf_clear(&b);
        if ((st = knut_graph__falkor_cmd_append(&b, 1, u, err)) == KNUT_OK &&
            (st = knut_graph__falkor_send(g, b.data, b.len, err)) == KNUT_OK &&
            (st = recv_item(g, &len, &it, err)) == KNUT_OK)
            knut_graph__falkor_consume(g, len);
    }
    knut_buf_reset(&b);
    return st;
}

/* Counts query i's acknowledged reply (as the pipelined apply does). */
static void count(tx_state *t, int64_t i, const falkor_reply *r)
{
    knut_graph_sink_stats *s = t->stats;
    const knut_graph_falkor_stats *x = &r->stats;
    knut_graph_falkor_stats *a = t->server;
    a->labels_added += x->labels_added;
    a->nodes_created += x->nodes_created;
    a->nodes_deleted += x->nodes_deleted;
    a->properties_set += x->properties_set;
    a->properties_removed += x->properties_removed;
    a->relationships_created += x->relationships_created;
    a->relationships_deleted += x->relationships_deleted;
    a->execution_ms += x->execution_ms;
    switch (t->kind[i]) {
    case KNUT_GRAPH_SET_VERTEX:
        s->vertices_written += t->rows[i];
        break;
    case KNUT_GRAPH_SET_EDGE:
        s->edges_written += r->n_rows;
        if (r->n_rows < t->rows[i]) { /* an endpoint missing: nothing said */
            t->set[i]->skipped += t->rows[i] - r->n_rows;
            s->edges_skipped += t->rows[i] - r->n_rows;
            t->short_rows[i] = !knut_graph__missing_full(t->set[i]);
        }
        break;
    case KNUT_GRAPH_SET_DELETE:
        s->vertices_deleted += x->nodes_deleted;
        s->edges_deleted += x->relationships_deleted;
        break;
    case KNUT_GRAPH_SET_EDGE_DELETE:
        s->edges_deleted += x->relationships_deleted;
        break;
    }
}

/* Reads the EXEC reply's elements: the queries' replies, then the
 * caller's commands' (final unit). The first failed query is the error. */
static knut_status exec_reply(tx_state *t, const char *buf, size_t len, int final,
                              knut_error *err)
{
    falkor_cur c = {buf, buf + len};
    falkor_item it = {0};
    knut_status st = KNUT_OK;
    int64_t n_elems = t->n_q + (final ? (int64_t)t->tx->n_cmds : 0);
    if (knut_graph__falkor_cur_next(&c, &it) != KNUT_OK || it.type != '*' || it.n != n_elems)
        return knut_error_set(err, KNUT_EPARSE, "%s: EXEC: %lld replies, expected %lld",
                              t->g->peer, (long long)it.n, (long long)n_elems);
    for (int64_t i = 0; i < n_elems; i++) {
        const char *start = c.p;
        if (knut_graph__falkor_cur_next(&c, &it) != KNUT_OK ||
            knut_graph__falkor_cur_skip(&c, &it) != KNUT_OK)
            return knut_error_set(err, KNUT_EPARSE, "%s: EXEC: malformed reply %lld",
                                  t->g->peer, (long long)i);
        if (i >= t->n_q) { /* the caller's commands */
            if (it.type == '-' && st == KNUT_OK)
                st = knut_graph__falkor_peer_error(t->g, "EXEC", it.s, (size_t)it.n, err);
            if (i == n_elems - 1)
                t->tx->last_integer = it.type == ':' ? it.n : -1;
            continue;
        }
        falkor_reply r;
        knut_error qerr = KNUT_ERROR_INIT;
        knut_status qst = knut_graph__falkor_reply_scan(&r, start, (size_t)(c.p - start), 0,
                                                        t->g->peer, &qerr);
        if (qst == KNUT_OK)
            count(t, i, &r);
        else if (st == KNUT_OK) {
            /* the rows' values refused: a data error (falkor_sink.c) */
            int refused = qst == KNUT_EPEER && qerr.detail == KNUT_GRAPH_FALKOR_ERR_VALUE;
            st = knut_error_set(err, refused ? KNUT_EINVAL : qst,
                                "set '%s': %s (in a transaction: FalkorDB undid this query, "
                                "the transaction's other commands stay applied)",
                                t->set[i]->name, qerr.message);
            if (err)
                err->detail = qerr.detail; /* the server error's kind */
        }
        knut_graph__falkor_reply_reset(&r);
    }
    return st;
}

/* After an EXEC: which endpoints the edge queries that came back short
 * missed (a read-only query each, with the same parameter block). */
static knut_status missing_lookup(tx_state *t, knut_error *err)
{
    knut_status st = KNUT_OK;
    for (int64_t i = 0; st == KNUT_OK && i < t->n_q; i++) {
        if (!t->short_rows[i] || knut_graph__missing_full(t->set[i]))
            continue;
        fsink_query q = {0};
        q.text.data = t->cmds.data + t->text_at[i]; /* borrowed, not reset */
        q.text.len = t->text_len[i];
        st = knut_graph__fsink_missing(t->g, t->graph, t->set[i], &q, t->edge_suffix_len, err);
    }
    return st;
}

/* Sends the unit as one fenced transaction; final: with the caller's commands. */
static knut_status send_unit(tx_state *t, int final, knut_error *err)
{
    knut_graph_falkor *g = t->g;
    knut_buf b = KNUT_BUF_INIT;
    knut_status st = KNUT_OK;
    int reconnected = 0;
    for (int attempt = 0; attempt < TX_ATTEMPTS; attempt++) {
        int ours = 0;
        size_t len;
        falkor_item it;
        if ((st = knut_graph__falkor_ensure(g, &reconnected, err)) != KNUT_OK ||
            (st = fence_check(t, &ours, err)) != KNUT_OK)
            goto cleanup;
        if (!ours) {
            t->tx->fenced = 1;
            st = knut_error_set(err, KNUT_ECANCELLED, "%s: fence '%s' no longer holds this "
                                "holder's value: nothing written by this transaction",
                                g->peer, t->tx->fence_key);
            goto cleanup;
        }
        const char *multi[] = {"MULTI"}, *exec[] = {"EXEC"};
        knut_buf_clear(&b);
        knut_graph__falkor_cmd_append(&b, 1, multi, err);
        knut_buf_append(&b, t->cmds.data ? t->cmds.data : "", t->cmds.len);
        size_t at = 0; /* ledger fields hold a NUL: lengths, not strlen */
        for (size_t i = 0; final && i < t->tx->n_cmds; i++) {
            knut_graph__falkor_cmd_append_lens(&b, t->tx->cmd_argc[i], t->tx->cmd_argv + at,
                                               t->tx->cmd_lens ? t->tx->cmd_lens + at : NULL,
                                               err);
            at += (size_t)t->tx->cmd_argc[i];
        }
        if ((st = knut_graph__falkor_cmd_append(&b, 1, exec, err)) != KNUT_OK ||
            (st = knut_graph__falkor_send(g, b.data, b.len, err)) != KNUT_OK)
            goto cleanup;
        /* MULTI's +OK and one +QUEUED per command; an error here makes
         * EXEC answer EXECABORT (nothing applied). */
        int64_t n_queued = 1 + t->n_q + (final ? (int64_t)t->tx->n_cmds : 0);
        for (int64_t i = 0; i < n_queued; i++) {
            if ((st = recv_item(g, &len, &it, err)) != KNUT_OK)
                goto cleanup;
            knut_graph__falkor_consume(g, len);
        }
        if ((st = recv_item(g, &len, &it, err)) != KNUT_OK)
            goto cleanup;
        if (it.type == '_') { /* WATCH saw the key change: nothing applied */
            knut_graph__falkor_consume(g, len);
            KNUT_LOG(KNUT_LOG_DEBUG, "graph", "%s: EXEC aborted by WATCH on '%s'; checking "
                     "the fence again", g->peer, t->tx->fence_key);
            continue;
        }
        if (it.type == '-') {
            st = knut_graph__falkor_peer_error(g, "EXEC", it.s, (size_t)it.n, err);
            knut_graph__falkor_consume(g, len);
            goto cleanup;
        }
        t->tx->transactions++;
        if (final)
            t->tx->cmds_applied = 1;
        memset(t->short_rows, 0, sizeof t->short_rows);
        st = exec_reply(t, g->rbuf + g->rpos, len, final, err);
        knut_graph__falkor_consume(g, len);
        if (st != KNUT_OK && st != KNUT_EPEER && st != KNUT_EINVAL)
            knut_graph__falkor_drop(g); /* unread bytes would follow */
        if (st == KNUT_OK)
            st = missing_lookup(t, err);
        knut_buf_clear(&t->cmds);
        t->n_q = 0;
        goto cleanup;
    }
    t->tx->fenced = 1;
    st = knut_error_set(err, KNUT_ECANCELLED, "%s: fence '%s': EXEC aborted %d times in a row "
                        "(the key keeps changing): nothing written by this transaction",
                        g->peer, t->tx->fence_key, TX_ATTEMPTS);
cleanup:
    knut_buf_reset(&b);
    return st;
}

/* The planner's flush: appends each query to the unit, sending the unit
 * first when the query would not fit. */
static knut_status tx_flush(void *ctx, const knut_graph_set *set, fsink_query *q, size_t n,
                            knut_error *err)
{
    tx_state *t = ctx;
    knut_status st = KNUT_OK;
    /* before a set's first query: its key types (falkor_sink_keytype.c) */
    if (t->checked != set) {
        t->checked = set;
        if ((st = knut_graph__fsink_key_types(t->g, t->graph, set, err)) != KNUT_OK)
            return st;
    }
    for (size_t i = 0; i < n && st == KNUT_OK; i++) {
        size_t before = t->cmds.len;
        st = knut_graph__falkor_query_cmd(t->g, &t->cmds, t->graph, q[i].text.data, 0, err);
        if (st != KNUT_OK)
            break;
        size_t text_at = query_text_offset(t->cmds.data + before, t->cmds.len - before);
        if (t->n_q > 0 && t->cmds.len > t->max_bytes) { /* the unit so far, then this */
            knut_buf b = KNUT_BUF_INIT;
            knut_buf_append(&b, t->cmds.data + before, t->cmds.len - before);
            t->cmds.len = before;
            st = knut_buf_check(&b, err);
            if (st == KNUT_OK)
                st = send_unit(t, 0, err);
            if (st == KNUT_OK)
                st = knut_buf_append(&t->cmds, b.data, b.len);
            knut_buf_reset(&b);
            if (st != KNUT_OK)
                break;
            before = 0; /* the query now opens the next unit */
        }
        t->kind[t->n_q] = set->kind;
        t->rows[t->n_q] = q[i].n_rows;
        t->set[t->n_q] = (knut_graph_set *)set; /* its skipped count is ours to keep */
        t->text_at[t->n_q] = before + text_at;
        t->text_len[t->n_q] = q[i].text.len;
        if (++t->n_q == t->max_q)
            st = send_unit(t, 0, err);
    }
    return st;
}

knut_status knut_graph__fsink_tx_apply(knut_graph_falkor *g, const char *graph,
                                       knut_graph_falkor_tx *tx, knut_graph_mutation *m,
                                       const fsink_plan *plan, const fsink_plan *edge_plan,
                                       knut_graph_sink_stats *stats,
                                       knut_graph_falkor_stats *server, knut_error *err)
{
    static const knut_graph_set_kind order[] = {KNUT_GRAPH_SET_VERTEX, KNUT_GRAPH_SET_EDGE,
                                                KNUT_GRAPH_SET_EDGE_DELETE,
                                                KNUT_GRAPH_SET_DELETE};
    tx_state *t = calloc(1, sizeof *t);
    if (!t)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    t->g = g;
    t->graph = graph;
    t->tx = tx;
    t->stats = stats;
    t->server = server;
    t->max_q = tx->unit_queries > 0 && tx->unit_queries < TX_UNIT_QUERIES_MAX
                   ? tx->unit_queries
               : tx->unit_queries > 0 ? TX_UNIT_QUERIES_MAX
                                      : TX_UNIT_QUERIES_DEFAULT;
    t->max_bytes = tx->unit_bytes > 0 ? tx->unit_bytes : TX_UNIT_BYTES_DEFAULT;
    t->edge_suffix_len = edge_plan->suffix ? strlen(edge_plan->suffix) : 0;
    tx->last_integer = -1;
    tx->transactions = 0;
    tx->cmds_applied = 0;
    tx->fenced = 0;
    knut_status st = KNUT_OK;
    for (size_t k = 0; st == KNUT_OK && k < sizeof order / sizeof order[0]; k++) {
        fsink_plan p = order[k] == KNUT_GRAPH_SET_EDGE ? *edge_plan : *plan;
        p.probe = NULL; /* a by-id update that misses would need a second EXEC */
        size_t n = knut_graph_mutation_count(m, order[k]);
        for (size_t i = 0; st == KNUT_OK && i < n; i++) {
            knut_graph_set *set = knut_graph_mutation_get(m, order[k], i);
            int64_t before = set->rows_read;
            st = knut_graph__fsink_run_set(set, &p, tx_flush, t, err);
            stats->rows += set->rows_read - before;
        }
    }
    /* With edges, the caller's commands wait for every query's reply: a
     * missing endpoint found there can still keep them from being sent. */
    size_t n_edge = knut_graph_mutation_count(m, KNUT_GRAPH_SET_EDGE);
    if (st == KNUT_OK && n_edge > 0 && t->n_q > 0)
        st = send_unit(t, 0, err);
    for (size_t i = 0; st == KNUT_OK && i < n_edge; i++) {
        const knut_graph_set *es = knut_graph_mutation_get(m, KNUT_GRAPH_SET_EDGE, i);
        if (es->skipped > 0 && es->missing_endpoints == KNUT_GRAPH_MISSING_FAIL)
            st = knut_graph__missing_fail(es, err);
    }
    if (st == KNUT_OK && tx->prepare)
        st = tx->prepare(tx->prepare_ctx, tx, err);
    if (st == KNUT_OK)
        st = send_unit(t, 1, err);
    knut_buf_reset(&t->cmds);
    free(t);
    return st;
}
