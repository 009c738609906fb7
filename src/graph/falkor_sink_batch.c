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
    int have_view = 0;
    size_t nq = 0;
    knut_status st = KNUT_OK;
    for (size_t i = 0; i < plan->pipeline; i++) {
        knut_buf_init(&q[i].text, 0);
        q[i].first_row = q[i].n_rows = 0;
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
        for (int64_t from = 0; from < batch.length;) {
            int64_t to = batch.length - from > plan->batch_rows ? from + plan->batch_rows
                                                                 : batch.length;
            int64_t n = 0;
            fsink_query *cur = &q[nq];
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
    for (size_t i = 0; i < plan->pipeline; i++)
        knut_buf_reset(&q[i].text);
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
    n = knut_graph_mutation_count(m, KNUT_GRAPH_SET_EDGE);
    for (size_t i = 0; i < n && st == KNUT_OK; i++) {
        const knut_graph_set *s = knut_graph_mutation_get(m, KNUT_GRAPH_SET_EDGE, i);
        st = add_columns(out, s->src_label, s->src_keys, s->n_src_keys, err);
        if (st == KNUT_OK)
            st = add_columns(out, s->dst_label, s->dst_keys, s->n_dst_keys, err);
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
