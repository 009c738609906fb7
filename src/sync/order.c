/*
 * The order tables run in within a round, derived from the mapping: a
 * table that writes edges (edge or fk-edge steps) depends on the tables
 * that write its endpoints' labels (any label of a vertex step: FalkorDB
 * and the store find an endpoint by that label), so its edges meet their
 * endpoints. Tables are ordered topologically, stable with respect to the
 * config order; for a label the table writes itself, only the writers
 * before it in the config count (two tables both writing Person, each with
 * REPORTS_TO edges, keep their config order instead of forming a cycle).
 * A real cycle (A's edges end at B's label and B's at A's) falls back to
 * config order for its tables and is reported once, when the sync opens.
 * During a round, a table whose dependency failed, was skipped (another
 * instance holds its lease) or was itself held back is held back too.
 */
#include <stdlib.h>
#include <string.h>

#include "sync_int.h"

static int writes_label(const knut_sync_table *t, const char *label)
{
    for (size_t i = 0; i < t->n_vertices; i++)
        for (size_t k = 0; k < t->vertices[i].n_labels; k++)
            if (strcmp(t->vertices[i].labels[k], label) == 0)
                return 1;
    return 0;
}

/* Marks dep[t][u] for every u != t that writes label (see the header). */
static void depend_on_writers(const knut_sync_config *c, size_t t, const char *label,
                              unsigned char *dep)
{
    int own = writes_label(&c->tables[t], label);
    for (size_t u = 0; u < c->n_tables; u++)
        if (u != t && (!own || u < t) && writes_label(&c->tables[u], label))
            dep[t * c->n_tables + u] = 1;
}

knut_status knut_sync__order_build(sync_order *o, const knut_sync_config *c, knut_error *err)
{
    size_t n = c->n_tables;
    memset(o, 0, sizeof *o);
    o->n = n;
    o->dep = calloc(n > 0 ? n * n : 1, 1);
    o->idx = calloc(n ? n : 1, sizeof *o->idx);
    o->state = calloc(n ? n : 1, sizeof *o->state);
    o->hash = calloc(n ? n : 1, sizeof *o->hash);
    unsigned char *placed = calloc(n ? n : 1, 1);
    if (!o->dep || !o->idx || !o->state || !o->hash || !placed) {
        free(placed);
        knut_sync__order_reset(o);
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    }
    for (size_t t = 0; t < n; t++) {
        const knut_sync_table *tb = &c->tables[t];
        knut_sync__table_hash(tb, o->hash[t]);
        for (size_t i = 0; i < tb->n_edges; i++) {
            depend_on_writers(c, t, tb->edges[i].from.label, o->dep);
            depend_on_writers(c, t, tb->edges[i].to.label, o->dep);
        }
        for (size_t i = 0; i < tb->n_fk_edges; i++)
            depend_on_writers(c, t, tb->fk_edges[i].to_label, o->dep);
    }
    /* Kahn's algorithm, always taking the first ready table in config
     * order; when none is ready the rest hold a cycle: the first remaining
     * table goes next (config order) and the cycle is reported. */
    knut_buf cyc = KNUT_BUF_INIT;
    for (size_t k = 0; k < n; k++) {
        size_t pick = n;
        for (size_t t = 0; t < n && pick == n; t++) {
            if (placed[t])
                continue;
            int ready = 1;
            for (size_t u = 0; u < n && ready; u++)
                ready = placed[u] || !o->dep[t * n + u];
            if (ready)
                pick = t;
        }
        if (pick == n) {
            for (pick = 0; placed[pick]; pick++)
                ;
            if (!o->cycle)
                for (size_t t = 0; t < n; t++)
                    if (!placed[t])
                        knut_buf_printf(&cyc, "%s'%s'", cyc.len ? ", " : "", c->tables[t].name);
            o->cycle = 1;
        }
        placed[pick] = 1;
        o->idx[k] = pick;
    }
    free(placed);
    if (o->cycle && knut_buf_check(&cyc, NULL) == KNUT_OK)
        KNUT_LOG(KNUT_LOG_WARN, SYNC_LOG,
                 "tables %s hold edges to each other's labels (a cycle): they run in config "
                 "order, and an edge to a vertex of a later one is skipped until its next round",
                 cyc.data);
    knut_buf_reset(&cyc);
    return KNUT_OK;
}

void knut_sync__order_reset(sync_order *o)
{
    free(o->dep);
    free(o->idx);
    free(o->state);
    free(o->hash);
    memset(o, 0, sizeof *o);
}

void knut_sync__order_round_begin(sync_order *o)
{
    if (o->state)
        memset(o->state, SYNC_TABLE_WAITING, o->n);
}

size_t knut_sync__order_waits_for(const sync_order *o, size_t t)
{
    for (size_t u = 0; u < o->n; u++)
        if (o->dep[t * o->n + u] && o->state[u] != SYNC_TABLE_WAITING &&
            o->state[u] != SYNC_TABLE_RAN)
            return u;
    return o->n;
}
