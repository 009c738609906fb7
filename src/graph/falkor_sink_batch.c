/*
 * The FalkorDB sink's batch planner and index list. The planner reads one
 * set batch by batch, renders rows into GRAPH.QUERY texts (parameter block
 * plus the set's constant query text) that respect both a row count and a
 * byte budget, and hands them to the sender a pipeline round at a time, so
 * memory stays at one Arrow batch plus one round of texts whatever the set's
 * size. The index list names the (label, key) pairs whose lookups need a
 * range index. Nothing here talks to a server.
 */
#include "falkor_sink_int.h"

#include <stdlib.h>
#include <string.h>

#include "cypher_int.h"

/* Row lists of one probed chunk: rows found by id (with their ids), the
 * rest for MERGE. Grown to the largest chunk seen. */
typedef struct probe_rows {
    int64_t *ids, *found, *found_ids, *rest;
    int64_t cap;
} probe_rows;

static knut_status probe_rows_reserve(probe_rows *p, int64_t n, knut_error *err)
{
    if (n <= p->cap)
        return KNUT_OK;
    int64_t **v[] = {&p->ids, &p->found, &p->found_ids, &p->rest};
    for (size_t i = 0; i < 4; i++) {
        int64_t *x = realloc(*v[i], (size_t)n * sizeof **v[i]);
        if (!x)
            return knut_error_set(err, KNUT_ENOMEM, "out of memory planning id updates");
        *v[i] = x;
    }
    p->cap = n;
    return KNUT_OK;
}

static void probe_rows_reset(probe_rows *p)
{
    free(p->ids);
    free(p->found);
    free(p->found_ids);
    free(p->rest);
}

/* Renders rows[0..n) (by node id when ids) into as many queries as the
 * budget needs, flushing every plan->pipeline of them. */
static knut_status emit_subset(knut_graph_set *set, const fsink_plan *plan, fsink_flush_fn flush,
                               void *ctx, const knut_arrow_view *view, const int64_t *rows,
                               const int64_t *ids, int64_t n, int64_t base, size_t budget,
                               fsink_query *q, size_t *nq, knut_error *err)
{
    knut_status st = KNUT_OK;
    for (int64_t k = 0; k < n && st == KNUT_OK;) {
        fsink_query *cur = &q[*nq];
        int64_t m = 0, m_alt = 0;
        knut_buf_clear(&cur->text);
        knut_buf_clear(&cur->alt);
        st = knut_graph__cypher_render_subset(&cur->text, set, view, rows + k,
                                              ids ? ids + k : NULL, n - k, base, budget, &m, err);
        /* The MERGE form of the same rows is shorter, so it fits too. */
        if (st == KNUT_OK && ids) {
            st = knut_graph__cypher_render_subset(&cur->alt, set, view, rows + k, NULL, m, base,
                                                  budget, &m_alt, err);
            if (st == KNUT_OK && m_alt != m)
                st = knut_error_set(err, KNUT_ERROR, "set '%s': the MERGE form of %lld rows "
                                    "did not fit the budget", set->name, (long long)m);
        }
        if (st != KNUT_OK)
            break;
        cur->by_id = ids != NULL;
        cur->first_row = base + rows[k];
        cur->n_rows = m;
        k += m;
        if (++*nq == plan->pipeline) {
            st = flush(ctx, set, q, *nq, err);
            *nq = 0;
        }
    }
    return st;
}

/* One chunk through the probe: returns *done = 0 when no row was found by
 * id (the caller then renders the chunk as usual). */
static knut_status run_probed(knut_graph_set *set, const fsink_plan *plan, fsink_flush_fn flush,
                              void *ctx, const knut_arrow_view *view, int64_t from, int64_t to,
                              int64_t base, size_t budget, probe_rows *pr, fsink_query *q,
                              size_t *nq, int *done, knut_error *err)
{
    int64_t n = to - from, nf = 0, nr = 0;
    knut_status st = probe_rows_reserve(pr, n, err);
    *done = 0;
    if (st == KNUT_OK)
        st = plan->probe(ctx, set, view, from, to, pr->ids, err);
    if (st != KNUT_OK)
        return st;
    for (int64_t j = 0; j < n; j++) {
        if (pr->ids[j] >= 0) {
            pr->found[nf] = from + j;
            pr->found_ids[nf++] = pr->ids[j];
        } else {
            pr->rest[nr++] = from + j;
        }
    }
    if (nf == 0)
        return KNUT_OK;
    *done = 1;
    st = emit_subset(set, plan, flush, ctx, view, pr->found, pr->found_ids, nf, base, budget, q,
                     nq, err);
    if (st == KNUT_OK)
        st = emit_subset(set, plan, flush, ctx, view, pr->rest, NULL, nr, base, budget, q, nq,
                         err);
    return st;
}

knut_status knut_graph__fsink_run_set(knut_graph_set *set, const fsink_plan *plan,
                                      fsink_flush_fn flush, void *ctx, knut_error *err)
{
    KNUT_ASSERT_ARG(err, set != NULL && plan != NULL && flush != NULL);
    KNUT_ASSERT_ARG(err, plan->pipeline >= 1 && plan->pipeline <= FSINK_PIPELINE_MAX);
    KNUT_ASSERT_ARG(err, plan->batch_rows >= 1);
    size_t suffix_len = plan->suffix ? strlen(plan->suffix) : 0;
    /* The render budget excludes the suffix; 0 would mean "no budget". */
    KNUT_ASSERT_ARG(err, plan->batch_bytes > suffix_len + 1);
    size_t budget = plan->batch_bytes - suffix_len;

    fsink_query q[FSINK_PIPELINE_MAX];
    struct ArrowArray batch = {0};
    knut_arrow_view view;
    probe_rows pr = {0};
    int have_view = 0;
    size_t nq = 0;
    knut_status st = KNUT_OK;
    for (size_t i = 0; i < plan->pipeline; i++) {
        knut_buf_init(&q[i].text, 0);
        knut_buf_init(&q[i].alt, 0);
        q[i].first_row = q[i].n_rows = 0;
        q[i].by_id = 0;
    }
    for (;;) {
        if ((st = knut_graph_set_next(set, &batch, err)) != KNUT_OK)
            goto cleanup;
        if (batch.release == NULL)
            break;
        if ((st = knut_arrow_view_init(&view, &set->schema, &batch, err)) != KNUT_OK)
            goto cleanup;
        have_view = 1;
        int64_t base = set->rows_read - batch.length;
        int probing = plan->probe && suffix_len == 0 &&
                      knut_graph__fsink_probe_eligible(set, &view);
        for (int64_t from = 0; from < batch.length;) {
            int64_t to = batch.length - from > plan->batch_rows ? from + plan->batch_rows
                                                                 : batch.length;
            int64_t n = 0;
            if (probing) {
                int done = 0;
                st = run_probed(set, plan, flush, ctx, &view, from, to, base, budget, &pr, q,
                                &nq, &done, err);
                if (st != KNUT_OK)
                    goto cleanup;
                if (done) {
                    from = to;
                    continue;
                }
            }
            fsink_query *cur = &q[nq];
            cur->by_id = 0;
            knut_buf_clear(&cur->text);
            st = knut_graph_cypher_render(&cur->text, set, &view, from, to, base, budget, &n,
                                          err);
            if (st != KNUT_OK)
                goto cleanup;
            if (suffix_len > 0)
                knut_buf_append(&cur->text, plan->suffix, suffix_len);
            if ((st = knut_buf_check(&cur->text, err)) != KNUT_OK)
                goto cleanup;
            cur->first_row = base + from;
            cur->n_rows = n;
            from += n;
            if (++nq == plan->pipeline) {
                st = flush(ctx, set, q, nq, err);
                nq = 0;
                if (st != KNUT_OK)
                    goto cleanup;
            }
        }
        knut_arrow_view_reset(&view);
        have_view = 0;
        knut_arrow_array_release(&batch);
    }
    if (nq > 0)
        st = flush(ctx, set, q, nq, err);

cleanup:
    if (have_view)
        knut_arrow_view_reset(&view);
    knut_arrow_array_release(&batch);
    for (size_t i = 0; i < plan->pipeline; i++) {
        knut_buf_reset(&q[i].text);
        knut_buf_reset(&q[i].alt);
    }
    probe_rows_reset(&pr);
    return st;
}

/* ---- index list -------------------------------------------------------- */

int64_t knut_graph__fsink_index_find(const fsink_index_list *l, const char *label,
                                     const char *key)
{
    for (size_t i = 0; l && i < l->n; i++)
        if (strcmp(l->v[i].label, label) == 0 && strcmp(l->v[i].key, key) == 0)
            return (int64_t)i;
    return -1;
}

knut_status knut_graph__fsink_index_add(fsink_index_list *l, const char *label,
                                        const char *key, knut_error *err)
{
    KNUT_ASSERT_ARG(err, l != NULL && label != NULL && key != NULL);
    if (knut_graph__fsink_index_find(l, label, key) >= 0)
        return KNUT_OK;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        fsink_index_key *v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return knut_error_set(err, KNUT_ENOMEM, "out of memory listing indexes");
        l->v = v;
        l->cap = cap;
    }
    char *a = strdup(label), *b = strdup(key);
    if (!a || !b) {
        free(a);
        free(b);
        return knut_error_set(err, KNUT_ENOMEM, "out of memory listing indexes");
    }
    l->v[l->n].label = a;
    l->v[l->n].key = b;
    l->n++;
    return KNUT_OK;
}

void knut_graph__fsink_index_remove(fsink_index_list *l, size_t i)
{
    if (!l || i >= l->n)
        return;
    free(l->v[i].label);
    free(l->v[i].key);
    l->v[i] = l->v[--l->n];
}

void knut_graph__fsink_index_list_reset(fsink_index_list *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].label);
        free(l->v[i].key);
    }
    free(l->v);
    memset(l, 0, sizeof *l);
}

static knut_status add_columns(fsink_index_list *out, const char *label,
                               const knut_graph_column *cols, size_t n, knut_error *err)
{
    knut_status st = KNUT_OK;
    for (size_t i = 0; i < n && st == KNUT_OK; i++)
        st = knut_graph__fsink_index_add(out, label, cols[i].prop, err);
    return st;
}

knut_status knut_graph__fsink_index_collect(fsink_index_list *out, knut_graph_mutation *m,
                                            knut_error *err)
{
    KNUT_ASSERT_ARG(err, out != NULL && m != NULL);
    knut_status st = KNUT_OK;
    size_t n = knut_graph_mutation_count(m, KNUT_GRAPH_SET_VERTEX);
    for (size_t i = 0; i < n && st == KNUT_OK; i++) {
        const knut_graph_set *s = knut_graph_mutation_get(m, KNUT_GRAPH_SET_VERTEX, i);
        st = add_columns(out, s->labels[0], s->keys, s->n_keys, err);
    }
    /* edge upserts and edge deletes find both endpoints the same way */
    static const knut_graph_set_kind edge_kinds[] = {KNUT_GRAPH_SET_EDGE,
                                                     KNUT_GRAPH_SET_EDGE_DELETE};
    for (size_t k = 0; k < 2 && st == KNUT_OK; k++) {
        n = knut_graph_mutation_count(m, edge_kinds[k]);
        for (size_t i = 0; i < n && st == KNUT_OK; i++) {
            const knut_graph_set *s = knut_graph_mutation_get(m, edge_kinds[k], i);
            st = add_columns(out, s->src_label, s->src_keys, s->n_src_keys, err);
            if (st == KNUT_OK)
                st = add_columns(out, s->dst_label, s->dst_keys, s->n_dst_keys, err);
        }
    }
    n = knut_graph_mutation_count(m, KNUT_GRAPH_SET_DELETE);
    for (size_t i = 0; i < n && st == KNUT_OK; i++) {
        const knut_graph_set *s = knut_graph_mutation_get(m, KNUT_GRAPH_SET_DELETE, i);
        st = add_columns(out, s->labels[0], s->keys, s->n_keys, err);
    }
    return st;
}

knut_status knut_graph__fsink_index_text(knut_buf *out, const char *label, const char *key,
                                         knut_error *err)
{
    knut_status st;
    knut_buf_puts(out, "CREATE INDEX FOR (n:");
    if ((st = knut_graph_cypher_ident(out, label, strlen(label), "label", err)) != KNUT_OK)
        return st;
    knut_buf_puts(out, ") ON (n.");
    if ((st = knut_graph_cypher_ident(out, key, strlen(key), "property name", err)) != KNUT_OK)
        return st;
    knut_buf_putc(out, ')');
    return knut_buf_check(out, err);
}
