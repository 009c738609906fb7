/*
 * The FalkorDB client's commands: GRAPH.QUERY / GRAPH.RO_QUERY with the
 * reconnect-once policy, the RESULTSET_SIZE truncation check, the per-graph
 * cache of label / relationship-type / property-key names, pipelined
 * batches for loaders, plain commands, and decoding a reply from bytes.
 */
#include "falkor_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "knut/arrow.h"

void knut_graph_falkor_result_reset(knut_graph_falkor_result *r)
{
    if (r == NULL)
        return;
    knut_arrow_stream_release(&r->stream);
    memset(r, 0, sizeof *r);
}

/* Appends " (...)" to err's message (NULL-safe). */
static void note(knut_error *err, const char *text)
{
    if (err == NULL)
        return;
    size_t n = strlen(err->message);
    snprintf(err->message + n, sizeof err->message - n, " (%s)", text);
}

knut_status knut_graph__falkor_query_cmd(const knut_graph_falkor *g, knut_buf *cmd,
                                         const char *graph, const char *query, unsigned flags,
                                         knut_error *err)
{
    char timeout[24];
    const char *argv[6] = {(flags & KNUT_GRAPH_FALKOR_READ_ONLY) ? "GRAPH.RO_QUERY"
                                                                  : "GRAPH.QUERY",
                           graph, query, "--compact", "TIMEOUT", timeout};
    snprintf(timeout, sizeof timeout, "%d", g->opts.query_timeout_ms);
    knut_status st =
        knut_graph__falkor_cmd_append(cmd, g->opts.query_timeout_ms > 0 ? 6 : 4, argv, err);
    if (st != KNUT_OK) /* every error of the client names the peer (graph.h) */
        knut_error_prefix(err, "%s: ", g->peer);
    return st;
}

/*
 * Sends cmd and takes its reply. A dead connection is reopened before
 * sending; a connection lost after sending is reopened and cmd resent only
 * if resend_ok (read-only work). At most one reconnect per call.
 */
static knut_status call(knut_graph_falkor *g, const knut_buf *cmd, int resend_ok, char **reply,
                        size_t *len, knut_error *err)
{
    int reconnected = 0;
    for (;;) {
        int sent = 0;
        knut_status st = knut_graph__falkor_ensure(g, &reconnected, err);
        if (st != KNUT_OK)
            return st;
        g->lost = 0;
        st = knut_graph__falkor_send(g, cmd->data, cmd->len, err);
        if (st == KNUT_OK) {
            sent = 1;
            st = knut_graph__falkor_recv(g, len, err);
        }
        if (st == KNUT_OK)
            return knut_graph__falkor_take(g, *len, reply, err);
        if (st != KNUT_EIO || !g->lost)
            return st; /* a timeout, a cap, bad bytes: resending would not help */
        if (sent && !resend_ok) {
            note(err, "the command was sent and may have been applied");
            return st;
        }
        if (reconnected)
            return st;
        reconnected = 1;
        KNUT_LOG(KNUT_LOG_INFO, "graph", "%s: connection lost, resending once", g->peer);
    }
}

/* ---- names ------------------------------------------------------------- */

void knut_graph_falkor_names_reset(knut_graph_falkor *g)
{
    if (g == NULL)
        return;
    while (g->names != NULL) {
        falkor_names_cache *c = g->names;
        g->names = c->next;
        for (int k = 0; k < 3; k++)
            knut_graph__falkor_strings_free(c->v[k], c->n[k]);
        free(c->graph);
        free(c);
    }
}

static knut_status names_refresh(knut_graph_falkor *g, falkor_names_cache *c, int kind,
                                 knut_error *err)
{
    static const char *const calls[3] = {"CALL db.labels()", "CALL db.relationshipTypes()",
                                         "CALL db.propertyKeys()"};
    knut_buf cmd = KNUT_BUF_INIT;
    char *reply = NULL, **v = NULL;
    size_t len = 0;
    int64_t n = 0;
    knut_status st = knut_graph__falkor_query_cmd(g, &cmd, c->graph, calls[kind],
                                                  KNUT_GRAPH_FALKOR_READ_ONLY, err);
    if (st == KNUT_OK)
        st = call(g, &cmd, 1, &reply, &len, err);
    if (st == KNUT_OK)
        st = knut_graph__falkor_reply_strings(reply, len, g->peer, &v, &n, err);
    if (st == KNUT_OK) {
        knut_graph__falkor_strings_free(c->v[kind], c->n[kind]);
        c->v[kind] = v;
        c->n[kind] = n;
        KNUT_LOG(KNUT_LOG_DEBUG, "graph", "%s: graph '%s': %s gave %lld names", g->peer,
                 c->graph, calls[kind], (long long)n);
    }
    free(reply);
    knut_buf_reset(&cmd);
    return st;
}

/* Fills names for graph so that every id r saw resolves, refreshing the
 * cache for the kinds where r saw an id beyond it. */
static knut_status names_ensure(knut_graph_falkor *g, const char *graph, const falkor_reply *r,
                                knut_graph_falkor_names *names, knut_error *err)
{
    static const char *const what[3] = {"label", "relationship type", "property key"};
    const int64_t need[3] = {r->max_label, r->max_rel_type, r->max_prop_key};
    falkor_names_cache *c = g->names;
    while (c != NULL && strcmp(c->graph, graph) != 0)
        c = c->next;
    if (c == NULL && (need[0] >= 0 || need[1] >= 0 || need[2] >= 0)) {
        c = calloc(1, sizeof *c);
        if (c == NULL || (c->graph = strdup(graph)) == NULL) {
            free(c);
            return knut_error_set(err, KNUT_ENOMEM, "%s: out of memory for names", g->peer);
        }
        c->next = g->names;
        g->names = c;
    }
    for (int k = 0; k < 3 && c != NULL; k++) {
        if (need[k] < c->n[k])
            continue;
        knut_status st = names_refresh(g, c, k, err);
        if (st != KNUT_OK)
            return st;
        if (need[k] >= c->n[k])
            return knut_error_set(err, KNUT_EPEER, "%s: graph '%s': %s id %lld is unknown to "
                                                   "the server's list of %lld",
                                  g->peer, graph, what[k], (long long)need[k],
                                  (long long)c->n[k]);
    }
    memset(names, 0, sizeof *names);
    if (c != NULL) {
        names->labels = (const char *const *)c->v[0];
        names->n_labels = c->n[0];
        names->rel_types = (const char *const *)c->v[1];
        names->n_rel_types = c->n[1];
        names->property_keys = (const char *const *)c->v[2];
        names->n_property_keys = c->n[2];
    }
    return KNUT_OK;
}

/* ---- queries ----------------------------------------------------------- */

/* RESULTSET_SIZE makes the server drop rows without a word: a result that
 * has exactly that many rows may have been cut, so it is never passed on as
 * complete. A result with exactly the limit in genuine rows is reported
 * too: the reply cannot tell the two apart. */
static knut_status check_truncation(const knut_graph_falkor *g, const falkor_reply *r,
                                    unsigned flags, int *truncated, knut_error *err)
{
    *truncated = 0;
    if (!r->has_columns || g->resultset_limit < 0 || r->n_rows != g->resultset_limit)
        return KNUT_OK;
    if (!(flags & KNUT_GRAPH_FALKOR_ALLOW_TRUNCATED))
        return knut_error_set(err, KNUT_ETOOBIG,
                              "%s: %lld rows, exactly the server's RESULTSET_SIZE: the result "
                              "may be truncated (GRAPH.CONFIG SET RESULTSET_SIZE -1, or page "
                              "with SKIP/LIMIT)",
                              g->peer, (long long)r->n_rows);
    KNUT_LOG(KNUT_LOG_WARN, "graph", "%s: %lld rows = RESULTSET_SIZE: result may be truncated",
             g->peer, (long long)r->n_rows);
    *truncated = 1;
    return KNUT_OK;
}

knut_status knut_graph_falkor_query(knut_graph_falkor *g, const char *graph, const char *query,
                                    unsigned flags, knut_graph_falkor_result *out,
                                    knut_error *err)
{
    knut_buf cmd = KNUT_BUF_INIT;
    char *reply = NULL;
    size_t len = 0;
    falkor_reply r;
    knut_graph_falkor_names names;
    int truncated = 0;
    KNUT_ASSERT_ARG(err, out != NULL);
    memset(out, 0, sizeof *out);
    memset(&r, 0, sizeof r);
    KNUT_ASSERT_ARG(err, g != NULL && graph != NULL && query != NULL);
    knut_status st = knut_graph__falkor_query_cmd(g, &cmd, graph, query, flags, err);
    if (st == KNUT_OK)
        st = call(g, &cmd, (flags & KNUT_GRAPH_FALKOR_READ_ONLY) != 0, &reply, &len, err);
    if (st == KNUT_OK)
        st = knut_graph__falkor_reply_scan(&r, reply, len, 1, g->peer, err);
    if (st == KNUT_OK)
        st = check_truncation(g, &r, flags, &truncated, err);
    if (st == KNUT_OK)
        st = names_ensure(g, graph, &r, &names, err);
    if (st == KNUT_OK)
        st = knut_graph__falkor_reply_build(&r, &names, g->opts.batch_rows, out, err);
    if (st == KNUT_OK)
        out->truncated = truncated;
    knut_graph__falkor_reply_reset(&r);
    free(reply);
    knut_buf_reset(&cmd);
    return st;
}

knut_status knut_graph_falkor_command(knut_graph_falkor *g, int argc, const char *const *argv,
                                      knut_error *err)
{
    knut_buf cmd = KNUT_BUF_INIT;
    char *reply = NULL;
    size_t len = 0;
    KNUT_ASSERT_ARG(err, g != NULL && argc > 0 && argv != NULL);
    knut_status st = knut_graph__falkor_cmd_append(&cmd, argc, argv, err);
    if (st == KNUT_OK)
        st = call(g, &cmd, 0, &reply, &len, err);
    if (st == KNUT_OK) {
        falkor_cur c = {reply, reply + len};
        falkor_item it;
        if (knut_graph__falkor_cur_next(&c, &it) == KNUT_OK && it.type == '-')
            st = knut_graph__falkor_peer_error(g, argv[0], it.s, (size_t)it.n, err);
    }
    free(reply);
    knut_buf_reset(&cmd);
    return st;
}

/* ---- pipelined batches ------------------------------------------------- */

static void fail_rest(knut_graph_falkor_batch_item *items, size_t from, size_t n,
                      const knut_error *cause, const char *why)
{
    for (size_t i = from; i < n; i++) {
        items[i].status = cause->code;
        knut_error_set(&items[i].error, cause->code, "%s (%s)", cause->message, why);
        items[i].error.detail = cause->detail;
    }
}

knut_status knut_graph_falkor_batch(knut_graph_falkor *g, const char *graph,
                                    knut_graph_falkor_batch_item *items, size_t n,
                                    unsigned flags, knut_error *err)
{
    knut_buf cmd = KNUT_BUF_INIT;
    knut_error io = KNUT_ERROR_INIT;
    size_t i = 0, failed = 0, first = 0;
    int reconnected = 0;
    KNUT_ASSERT_ARG(err, g != NULL && graph != NULL && (items != NULL || n == 0));
    for (i = 0; i < n; i++) {
        memset(&items[i].stats, 0, sizeof items[i].stats);
        items[i].n_rows = 0;
        items[i].status = KNUT_OK;
        knut_error_clear(&items[i].error);
        if (items[i].query == NULL)
            return knut_error_set(err, KNUT_EINVAL, "%s: batch query %zu is NULL", g->peer, i);
    }
    knut_status st = KNUT_OK;
    for (i = 0; i < n && st == KNUT_OK; i++)
        st = knut_graph__falkor_query_cmd(g, &cmd, graph, items[i].query, flags, &io);
    if (st == KNUT_OK)
        st = knut_graph__falkor_ensure(g, &reconnected, &io);
    if (st != KNUT_OK) {
        fail_rest(items, 0, n, &io, "not sent");
        goto done;
    }
    st = knut_graph__falkor_send(g, cmd.data, cmd.len, &io);
    if (st != KNUT_OK) {
        fail_rest(items, 0, n, &io, "the batch may have been partly applied");
        goto done;
    }
    for (i = 0; i < n; i++) {
        size_t len;
        falkor_reply r;
        int truncated;
        st = knut_graph__falkor_recv(g, &len, &io);
        if (st != KNUT_OK) {
            fail_rest(items, i, n, &io, "no reply: the query may have been applied");
            break;
        }
        knut_graph_falkor_batch_item *it = &items[i];
        it->status = knut_graph__falkor_reply_scan(&r, g->rbuf + g->rpos, len, 0, g->peer,
                                                   &it->error);
        knut_graph__falkor_consume(g, len);
        if (it->status == KNUT_OK) {
            it->stats = r.stats;
            it->n_rows = r.n_rows;
            it->status = check_truncation(g, &r, flags, &truncated, &it->error);
        }
        knut_graph__falkor_reply_reset(&r);
    }
    st = KNUT_OK;
done:
    for (i = 0; i < n; i++) {
        if (items[i].status != KNUT_OK && failed++ == 0)
            first = i;
    }
    knut_buf_reset(&cmd);
    if (failed == 0)
        return KNUT_OK;
    if (st == KNUT_OK && items[first].status != KNUT_OK)
        st = items[first].status;
    knut_error_set(err, st, "%s: %zu of %zu batched queries failed; first (#%zu): %s", g->peer,
                   failed, n, first, items[first].error.message);
    if (err)
        err->detail = items[first].error.detail;
    return st;
}

/* ---- decoding without a server ----------------------------------------- */

knut_status knut_graph_falkor_reply_decode(knut_graph_falkor_result *out, const void *resp,
                                           size_t len, const knut_graph_falkor_names *names,
                                           const knut_graph_falkor_options *opts,
                                           knut_error *err)
{
    static const char peer[] = "falkordb reply";
    falkor_frame *f = NULL;
    falkor_reply r;
    size_t end = 0;
    KNUT_ASSERT_ARG(err, out != NULL);
    memset(out, 0, sizeof *out);
    memset(&r, 0, sizeof r);
    KNUT_ASSERT_ARG(err, resp != NULL || len == 0);
    KNUT_CHECK_VERSION(opts, KNUT_GRAPH_FALKOR_OPTIONS_VERSION, err);
    f = malloc(sizeof *f);
    if (f == NULL)
        return knut_error_set(err, KNUT_ENOMEM, "%s: out of memory", peer);
    knut_graph__falkor_frame_init(f, opts ? opts->max_depth : 0, opts ? opts->max_reply_bytes : 0);
    knut_status st = knut_graph__falkor_frame_scan(f, resp, len, &end, peer, err);
    if (st == KNUT_EAGAIN)
        st = knut_error_set(err, KNUT_EPARSE, "%s: incomplete (%zu bytes)", peer, len);
    if (st == KNUT_OK && end != len)
        st = knut_error_set(err, KNUT_EPARSE, "%s: %zu bytes after the reply", peer, len - end);
    if (st == KNUT_OK)
        st = knut_graph__falkor_reply_scan(&r, resp, len, 1, peer, err);
    if (st == KNUT_OK)
        st = knut_graph__falkor_reply_build(&r, names, opts ? opts->batch_rows : 0, out, err);
    knut_graph__falkor_reply_reset(&r);
    free(f);
    return st;
}
