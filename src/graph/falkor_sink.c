/*
 * The FalkorDB sink: applies a mutation to one graph through a borrowed
 * knut_graph_falkor client. It first makes sure every vertex lookup key has
 * a range index that is OPERATIONAL (MERGE and MATCH without one scan the
 * whole label for every row, which makes a load quadratic), then sends the
 * sets through the batch planner as pipelined UNWIND queries and sums what
 * the server acknowledged. A failure anywhere fails the apply: a partial
 * load is never reported as success.
 */
#include "falkor_sink_int.h"

#include <stdlib.h>
#include <string.h>

#include "cypher_int.h"

#define LOG_TARGET "graph"

/* Appended to edge queries so each MERGEd edge returns one row: the reply's
 * row count is then the number of edges written (rows whose endpoint is
 * missing produce none). */
#define EDGE_COUNT_SUFFIX " RETURN 1"

/* One row per (label, range-indexed key) of node indexes, with its status. */
static const char index_status_query[] =
    "CALL db.indexes() YIELD label, types, status, entitytype "
    "WITH label, types, status WHERE entitytype = 'NODE' "
    "UNWIND keys(types) AS k WITH label, k, status, types[k] AS t "
    "WHERE 'RANGE' IN t RETURN label, k, status";

typedef struct falkor_sink {
    knut_graph_sink base;
    knut_graph_falkor *g; /* borrowed */
    char *graph;
    size_t batch_bytes;
    int64_t batch_rows;
    size_t pipeline;
    int index_wait_ms;
    fsink_index_list ready; /* indexes seen OPERATIONAL */
    knut_graph_falkor_batch_item items[FSINK_PIPELINE_MAX];
    knut_graph_falkor_stats server; /* last apply */
    knut_graph_falkor_tx *tx;       /* next apply in transactions (falkor_sink_tx.c) */
} falkor_sink;

/* What one apply has acknowledged so far. */
typedef struct apply_ctx {
    falkor_sink *s;
    knut_graph_sink_stats *stats;
    const knut_graph_set *checked; /* the set whose key types were checked */
} apply_ctx;

static void stats_add(knut_graph_falkor_stats *a, const knut_graph_falkor_stats *b)
{
    a->labels_added += b->labels_added;
    a->labels_removed += b->labels_removed;
    a->nodes_created += b->nodes_created;
    a->nodes_deleted += b->nodes_deleted;
    a->properties_set += b->properties_set;
    a->properties_removed += b->properties_removed;
    a->relationships_created += b->relationships_created;
    a->relationships_deleted += b->relationships_deleted;
    a->indices_created += b->indices_created;
    a->indices_deleted += b->indices_deleted;
    a->constraints_created += b->constraints_created;
    a->constraints_deleted += b->constraints_deleted;
    a->execution_ms += b->execution_ms;
}

/* ---- indexes ----------------------------------------------------------- */

static knut_status index_create(falkor_sink *s, const fsink_index_key *k, knut_error *err)
{
    knut_buf q = KNUT_BUF_INIT;
    knut_graph_falkor_result r;
    knut_status st = knut_graph__fsink_index_text(&q, k->label, k->key, err);
    if (st == KNUT_OK) {
        st = knut_graph_falkor_query(s->g, s->graph, q.data, 0, &r, err);
        knut_graph_falkor_result_reset(&r);
        /* Someone (or an earlier sink) made it already: that is the goal. */
        if (st == KNUT_EPEER && err->detail == KNUT_GRAPH_FALKOR_ERR_INDEX_EXISTS) {
            knut_error_clear(err);
            st = KNUT_OK;
        }
        if (st != KNUT_OK)
            knut_error_prefix(err, "graph '%s': creating the index on :%s(%s): ", s->graph,
                              k->label, k->key);
    }
    knut_buf_reset(&q);
    return st;
}

/* Marks every pending pair that db.indexes() reports OPERATIONAL as ready;
 * *first_status gets the status of pending[0] (for the timeout message). */
static knut_status index_poll(falkor_sink *s, fsink_index_list *pending, char *first_status,
                              size_t first_cap, knut_error *err)
{
    knut_graph_falkor_result r;
    struct ArrowSchema schema = {0};
    struct ArrowArray *arrays = NULL;
    int64_t n_arrays = 0;
    knut_status st = knut_graph_falkor_query(s->g, s->graph, index_status_query,
                                             KNUT_GRAPH_FALKOR_READ_ONLY, &r, err);
    if (st != KNUT_OK)
        return knut_error_prefix(err, "graph '%s': listing indexes: ", s->graph);
    if (r.n_rows > 0 && r.n_columns == 3)
        st = knut_arrow_stream_collect(&r.stream, &schema, &arrays, &n_arrays, 0, err);
    snprintf(first_status, first_cap, "%s", "missing");
    for (int64_t b = 0; st == KNUT_OK && b < n_arrays; b++) {
        knut_arrow_view v;
        if ((st = knut_arrow_view_init(&v, &schema, &arrays[b], err)) != KNUT_OK)
            break;
        for (int64_t i = 0; i < v.length && v.n_children == 3; i++) {
            int64_t row = knut_arrow_view_child_row(&v, i), ll, kl, sl;
            const knut_arrow_view *c[3] = {&v.children[0], &v.children[1], &v.children[2]};
            if (c[0]->type.type != KNUT_ARROW_UTF8 || c[1]->type.type != KNUT_ARROW_UTF8 ||
                c[2]->type.type != KNUT_ARROW_UTF8 || knut_arrow_view_is_null(c[0], row) ||
                knut_arrow_view_is_null(c[1], row) || knut_arrow_view_is_null(c[2], row))
                continue;
            const char *label = knut_arrow_view_get_str(c[0], row, &ll);
            const char *key = knut_arrow_view_get_str(c[1], row, &kl);
            const char *status = knut_arrow_view_get_str(c[2], row, &sl);
            for (size_t p = 0; p < pending->n; p++) {
                const fsink_index_key *k = &pending->v[p];
                if (strlen(k->label) != (size_t)ll || memcmp(k->label, label, (size_t)ll) ||
                    strlen(k->key) != (size_t)kl || memcmp(k->key, key, (size_t)kl))
                    continue;
                if (p == 0)
                    snprintf(first_status, first_cap, "%.*s", (int)sl, status);
                if (sl == 11 && memcmp(status, "OPERATIONAL", 11) == 0) {
                    st = knut_graph__fsink_index_add(&s->ready, k->label, k->key, err);
                    knut_graph__fsink_index_remove(pending, p);
                }
                break;
            }
        }
        knut_arrow_view_reset(&v);
    }
    knut_arrow_arrays_free(arrays, n_arrays);
    if (schema.release)
        schema.release(&schema);
    knut_graph_falkor_result_reset(&r);
    return st;
}

static knut_status indexes_ensure(falkor_sink *s, knut_graph_mutation *m, knut_error *err)
{
    fsink_index_list pending = {0};
    char status[64];
    knut_status st = knut_graph__fsink_index_collect(&pending, m, err);
    for (size_t i = pending.n; st == KNUT_OK && i-- > 0;)
        if (knut_graph__fsink_index_find(&s->ready, pending.v[i].label, pending.v[i].key) >= 0)
            knut_graph__fsink_index_remove(&pending, i);
    for (size_t i = 0; st == KNUT_OK && i < pending.n; i++)
        st = index_create(s, &pending.v[i], err);
    int64_t deadline = knut_clock_mono_ns() + (int64_t)s->index_wait_ms * 1000000;
    int64_t nap = 2000000; /* 2 ms, doubling to 100 ms: small graphs index at once */
    while (st == KNUT_OK && pending.n > 0) {
        if ((st = index_poll(s, &pending, status, sizeof status, err)) != KNUT_OK ||
            pending.n == 0)
            break;
        if (knut_clock_mono_ns() > deadline) {
            st = knut_error_set(err, KNUT_EAGAIN,
                                "%s: graph '%s': the index on :%s(%s) is not operational "
                                "after %d ms (status: %s)",
                                knut_graph_falkor_peer(s->g), s->graph, pending.v[0].label,
                                pending.v[0].key, s->index_wait_ms, status);
            break;
        }
        if ((st = knut_clock_sleep_ns(nap)) != KNUT_OK) {
            knut_error_set(err, st, "graph '%s': stopped while waiting for indexes", s->graph);
            break;
        }
        nap = nap * 2 > 100000000 ? 100000000 : nap * 2;
    }
    knut_graph__fsink_index_list_reset(&pending);
    return st;
}

/* ---- sending ----------------------------------------------------------- */

/* A by-id update that found fewer nodes than it had rows (a node deleted
 * or re-keyed since the probe): its rows again, as MERGE, which converges
 * whatever happened in between. */
static knut_status resend_as_merge(falkor_sink *s, const knut_graph_set *set,
                                   const fsink_query *q, knut_error *err)
{
    knut_graph_falkor_batch_item it = {0};
    knut_error e = KNUT_ERROR_INIT;
    it.query = q->alt.data;
    knut_status st = knut_graph_falkor_batch(s->g, s->graph, &it, 1, 0, &e);
    if (st == KNUT_OK && it.status == KNUT_OK) {
        stats_add(&s->server, &it.stats);
        return KNUT_OK;
    }
    return knut_error_set(err, st != KNUT_OK ? st : it.status, "set '%s': rows %lld-%lld: %s",
                          set->name, (long long)q->first_row,
                          (long long)(q->first_row + q->n_rows - 1),
                          it.error.message[0] ? it.error.message : e.message);
}

static knut_status probe_ids(void *ctx, const knut_graph_set *set, const knut_arrow_view *batch,
                             int64_t from, int64_t to, int64_t *ids, knut_error *err)
{
    apply_ctx *a = ctx;
    return knut_graph__fsink_probe(a->s->g, a->s->graph, set, batch, from, to, ids, err);
}

/* Sends one round of queries and counts what the server acknowledged. */
static knut_status flush_round(void *ctx, const knut_graph_set *set, fsink_query *q, size_t n,
                               knut_error *err)
{
    apply_ctx *a = ctx;
    falkor_sink *s = a->s;
    knut_error batch_err = KNUT_ERROR_INIT;
    /* before a set's first query: its key types (falkor_sink_keytype.c) */
    if (a->checked != set) {
        a->checked = set;
        knut_status kst = knut_graph__fsink_key_types(s->g, s->graph, set, err);
        if (kst != KNUT_OK)
            return kst;
    }
    for (size_t i = 0; i < n; i++)
        s->items[i].query = q[i].text.data;
    knut_status st = knut_graph_falkor_batch(s->g, s->graph, s->items, n, 0, &batch_err);
    size_t failed = 0, first = n, short_by_id = 0;
    for (size_t i = 0; i < n; i++) {
        const knut_graph_falkor_batch_item *it = &s->items[i];
        if (it->status != KNUT_OK) {
            if (failed++ == 0)
                first = i;
            continue;
        }
        if (q[i].by_id && it->n_rows > 0)
            short_by_id++;
        /* Each query is all-or-nothing on the server, so an acknowledged
         * one counts in full even when a neighbour in the round failed. */
        stats_add(&s->server, &it->stats);
        switch (set->kind) {
        case KNUT_GRAPH_SET_VERTEX:
            a->stats->vertices_written += q[i].n_rows;
            break;
        case KNUT_GRAPH_SET_EDGE:
            a->stats->edges_written += it->n_rows;
            if (it->n_rows < q[i].n_rows) { /* an endpoint missing: nothing said */
                knut_graph_set *es = (knut_graph_set *)set;
                es->skipped += q[i].n_rows - it->n_rows;
                a->stats->edges_skipped += q[i].n_rows - it->n_rows;
                if (!knut_graph__missing_full(es) && st == KNUT_OK &&
                    (st = knut_graph__fsink_missing(s->g, s->graph, es, &q[i],
                                                    strlen(EDGE_COUNT_SUFFIX),
                                                    &batch_err)) != KNUT_OK)
                    first = n; /* reported as the round's failure below */
            }
            break;
        case KNUT_GRAPH_SET_DELETE:
            a->stats->vertices_deleted += it->stats.nodes_deleted;
            a->stats->edges_deleted += it->stats.relationships_deleted;
            break;
        case KNUT_GRAPH_SET_EDGE_DELETE:
            a->stats->edges_deleted += it->stats.relationships_deleted;
            break;
        }
    }
    for (size_t i = 0; st == KNUT_OK && failed == 0 && short_by_id > 0 && i < n; i++)
        if (q[i].by_id && s->items[i].n_rows > 0 &&
            (st = resend_as_merge(s, set, &q[i], err)) != KNUT_OK)
            return st;
    if (st == KNUT_OK && failed == 0 && set->kind == KNUT_GRAPH_SET_EDGE &&
        set->skipped > 0 && set->missing_endpoints == KNUT_GRAPH_MISSING_FAIL)
        return knut_graph__missing_fail(set, err);
    if (st == KNUT_OK && failed == 0)
        return KNUT_OK;
    if (first == n) /* the batch call failed before any item did */
        return knut_error_set(err, st, "set '%s': rows %lld-%lld: %s", set->name,
                              (long long)q[0].first_row,
                              (long long)(q[n - 1].first_row + q[n - 1].n_rows - 1),
                              batch_err.message);
    /* The item's message names the server already (graph.h). A refusal of
     * the rows' values is theirs (a data error: their file fails), any
     * other the server's. */
    const knut_graph_falkor_batch_item *it = &s->items[first];
    int refused = it->status == KNUT_EPEER && it->error.detail == KNUT_GRAPH_FALKOR_ERR_VALUE;
    return knut_error_set(err, refused ? KNUT_EINVAL : it->status,
                          "set '%s': rows %lld-%lld: %s (%zu of %zu queries of this round "
                          "failed; later rounds were not sent)",
                          set->name, (long long)q[first].first_row,
                          (long long)(q[first].first_row + q[first].n_rows - 1),
                          it->error.message, failed, n);
}

static knut_status edge_plan_rows(falkor_sink *s, int64_t *rows, knut_error *err)
{
    /* Edge queries return a row per edge, and RESULTSET_SIZE cuts replies
     * off silently: keep every query below the limit. */
    int64_t limit = knut_graph_falkor_resultset_limit(s->g);
    *rows = s->batch_rows;
    if (limit == KNUT_GRAPH_FALKOR_LIMIT_UNLIMITED || limit < 0 || limit > s->batch_rows)
        return KNUT_OK;
    if (limit < 2)
        return knut_error_set(err, KNUT_EUNSUPPORTED,
                              "%s: RESULTSET_SIZE is %lld; edge upserts count their rows and "
                              "need at least 2 (GRAPH.CONFIG SET RESULTSET_SIZE -1)",
                              knut_graph_falkor_peer(s->g), (long long)limit);
    *rows = limit - 1;
    return KNUT_OK;
}

/* Property types FalkorDB cannot store without loss refuse the whole
 * mutation before anything is sent: a data error (KNUT_EINVAL) of the
 * rows, not a failure of the server. */
static knut_status check_types(knut_graph_mutation *m, knut_error *err)
{
    static const knut_graph_set_kind kinds[] = {KNUT_GRAPH_SET_VERTEX, KNUT_GRAPH_SET_EDGE};
    for (size_t k = 0; k < 2; k++)
        for (size_t i = 0; i < knut_graph_mutation_count(m, kinds[k]); i++) {
            const knut_graph_set *set = knut_graph_mutation_get(m, kinds[k], i);
            if (knut_graph__falkor_set_check(set, err) != KNUT_OK) {
                err->code = KNUT_EINVAL;
                return KNUT_EINVAL;
            }
        }
    return KNUT_OK;
}

static knut_status fsink_apply(knut_graph_sink *base, knut_graph_mutation *m,
                               const knut_graph_sink_commit *commit,
                               knut_graph_sink_stats *stats, knut_error *user_err)
{
    falkor_sink *s = (falkor_sink *)base;
    /* A local error: index creation reads the server's error kind. */
    knut_error local = KNUT_ERROR_INIT, *err = &local;
    /* Edge deletes after the upserts (an edge upserted and deleted in one
     * mutation ends deleted) and before vertex deletes (which would take
     * the edges along anyway). */
    static const knut_graph_set_kind order[] = {KNUT_GRAPH_SET_VERTEX, KNUT_GRAPH_SET_EDGE,
                                                KNUT_GRAPH_SET_EDGE_DELETE,
                                                KNUT_GRAPH_SET_DELETE};
    apply_ctx a = {s, stats, NULL};
    knut_status st;
    memset(&s->server, 0, sizeof s->server);
    if ((st = check_types(m, err)) != KNUT_OK)
        goto done;
    if ((st = indexes_ensure(s, m, err)) != KNUT_OK)
        goto done;
    if (s->tx) { /* fenced MULTI/EXEC units, the commit inside (falkor_sink_tx.c) */
        fsink_plan plan = {s->batch_bytes, s->batch_rows, s->pipeline, NULL, NULL};
        fsink_plan edges = {s->batch_bytes, s->batch_rows, s->pipeline, EDGE_COUNT_SUFFIX, NULL};
        if (knut_graph_mutation_count(m, KNUT_GRAPH_SET_EDGE) > 0 &&
            (st = edge_plan_rows(s, &edges.batch_rows, err)) != KNUT_OK)
            goto done;
        st = knut_graph__fsink_tx_apply(s->g, s->graph, s->tx, m, &plan, &edges, stats,
                                        &s->server, err);
        goto done;
    }
    for (size_t k = 0; k < sizeof order / sizeof order[0]; k++) {
        size_t n = knut_graph_mutation_count(m, order[k]);
        fsink_plan plan = {s->batch_bytes, s->batch_rows, s->pipeline, NULL, NULL};
        /* (the probe keeps its own reply below RESULTSET_SIZE) */
        if (order[k] == KNUT_GRAPH_SET_VERTEX)
            plan.probe = probe_ids;
        if (order[k] == KNUT_GRAPH_SET_EDGE) {
            plan.suffix = EDGE_COUNT_SUFFIX;
            if (n > 0 && (st = edge_plan_rows(s, &plan.batch_rows, err)) != KNUT_OK)
                goto done;
        }
        for (size_t i = 0; i < n; i++) {
            knut_graph_set *set = knut_graph_mutation_get(m, order[k], i);
            int64_t before = set->rows_read;
            st = knut_graph__fsink_run_set(set, &plan, flush_round, &a, err);
            stats->rows += set->rows_read - before;
            if (st != KNUT_OK)
                goto done;
            KNUT_LOG(KNUT_LOG_DEBUG, LOG_TARGET, "falkordb %s graph '%s': set '%s' applied "
                     "(%lld rows)", knut_graph_falkor_peer(s->g), s->graph, set->name,
                     (long long)(set->rows_read - before));
        }
    }
    /* Only now is everything acknowledged: the ledger may move on. */
    if (commit && commit->fn && (st = commit->fn(commit->ctx, NULL, err)) != KNUT_OK)
        knut_error_prefix(err, "graph '%s': commit callback: ", s->graph);
done:
    s->tx = NULL; /* one apply only */
    if (st != KNUT_OK) {
        knut_error_prefix(err, "falkordb sink: ");
        KNUT_LOG(KNUT_LOG_WARN, LOG_TARGET, "%s", err->message);
        if (user_err)
            *user_err = local;
    }
    return st;
}

static void fsink_close(knut_graph_sink *base)
{
    falkor_sink *s = (falkor_sink *)base;
    knut_graph__fsink_index_list_reset(&s->ready);
    free(s->graph);
    free(s);
}

static knut_status fsink_keys(knut_graph_sink *base, const knut_graph_key_scan *scan,
                              knut_graph_sink_keys_fn fn, void *ctx, knut_error *err)
{
    falkor_sink *s = (falkor_sink *)base;
    return knut_graph__fsink_keys(s->g, s->graph, scan, fn, ctx, err);
}

static const knut_graph_sink_ops fsink_ops = {"falkordb", fsink_apply, fsink_close, fsink_keys};

knut_status knut_graph_falkor_sink_new(knut_graph_sink **out, knut_graph_falkor *g,
                                       const char *graph,
                                       const knut_graph_falkor_sink_options *opts,
                                       knut_error *err)
{
    KNUT_ASSERT_ARG(err, out != NULL);
    *out = NULL;
    KNUT_ASSERT_ARG(err, g != NULL && graph != NULL && graph[0] != '\0');
    KNUT_CHECK_VERSION(opts, KNUT_GRAPH_FALKOR_SINK_OPTIONS_VERSION, err);
    knut_graph_falkor_sink_options o = KNUT_GRAPH_FALKOR_SINK_OPTIONS_INIT;
    if (opts)
        o = *opts;
    if (o.batch_bytes == 0)
        o.batch_bytes = FSINK_BATCH_BYTES_DEFAULT;
    if (o.batch_rows == 0)
        o.batch_rows = FSINK_BATCH_ROWS_DEFAULT;
    if (o.pipeline == 0)
        o.pipeline = FSINK_PIPELINE_DEFAULT;
    if (o.index_wait_ms == 0)
        o.index_wait_ms = FSINK_INDEX_WAIT_DEFAULT_MS;
    if (o.batch_bytes < FSINK_BATCH_BYTES_MIN || o.batch_rows < 1 || o.pipeline < 1 ||
        o.pipeline > FSINK_PIPELINE_MAX || o.index_wait_ms < 0)
        return knut_error_set(err, KNUT_EINVAL,
                              "falkordb sink: batch_bytes must be >= %d, batch_rows >= 1, "
                              "pipeline 1..%d and index_wait_ms >= 0",
                              FSINK_BATCH_BYTES_MIN, FSINK_PIPELINE_MAX);
    falkor_sink *s = calloc(1, sizeof *s);
    if (!s || !(s->graph = strdup(graph))) {
        free(s);
        return knut_error_set(err, KNUT_ENOMEM, "falkordb sink: out of memory");
    }
    s->base.ops = &fsink_ops;
    s->g = g;
    s->batch_bytes = o.batch_bytes;
    s->batch_rows = o.batch_rows;
    s->pipeline = (size_t)o.pipeline;
    s->index_wait_ms = o.index_wait_ms;
    *out = &s->base;
    return KNUT_OK;
}

knut_status knut_graph_falkor_sink_set_tx(knut_graph_sink *sink, knut_graph_falkor_tx *tx,
                                          knut_error *err)
{
    KNUT_ASSERT_ARG(err, sink != NULL && sink->ops == &fsink_ops);
    KNUT_ASSERT_ARG(err, tx == NULL || (tx->fence_key && tx->fence_value &&
                                        (tx->n_cmds == 0 || tx->prepare ||
                                                         (tx->cmd_argc && tx->cmd_argv))));
    KNUT_CHECK_VERSION(tx, KNUT_GRAPH_FALKOR_TX_VERSION, err);
    ((falkor_sink *)sink)->tx = tx;
    return KNUT_OK;
}

void knut_graph_falkor_sink_server_stats(const knut_graph_sink *sink,
                                         knut_graph_falkor_stats *out)
{
    if (!out)
        return;
    memset(out, 0, sizeof *out);
    if (sink && sink->ops == &fsink_ops)
        *out = ((const falkor_sink *)sink)->server;
}
