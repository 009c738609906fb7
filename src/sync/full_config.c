/*
 * Config rules of `mode: full`. A full table deletes the vertices of its
 * merge labels and the edges of its edge types that its snapshot lacks,
 * so it must own them: no other table may write those labels (as any
 * label of a vertex step: FalkorDB finds a node by each of its labels) or
 * edge types, and inside the table each merge label and each (type,
 * source label, target label) is written by one step only (the snapshot
 * of a label is one step's keys).
 */
#include <string.h>

#include "sync_int.h"

/* Item i of the table's step list `key`, for its file:line:col. */
static const knut_conf *step_node(const knut_sync_table *t, const char *key, size_t i)
{
    const knut_conf *l = knut_conf_get(t->node, key);
    const knut_conf *it = l ? knut_conf_at(l, i) : NULL;
    return it ? it : t->node;
}

static knut_status owned(knut_error *err, const knut_sync_table *full, const knut_conf *fnode,
                         const knut_sync_table *other, const knut_conf *onode, const char *what,
                         const char *name)
{
    if (full == other)
        return knut_error_set(err, KNUT_EINVAL,
                              "%s:%d:%d: table '%s': %s '%s' is written twice by full table "
                              "'%s' (also %s:%d:%d); a full table's %s must come from one step",
                              knut_conf_file(onode), knut_conf_line(onode), knut_conf_col(onode),
                              other->name, what, name, full->name, knut_conf_file(fnode),
                              knut_conf_line(fnode), knut_conf_col(fnode), what);
    return knut_error_set(err, KNUT_EINVAL,
                          "%s:%d:%d: table '%s': %s '%s' belongs to full table '%s' (%s:%d:%d), "
                          "which deletes what its snapshot lacks; no other table may write it",
                          knut_conf_file(onode), knut_conf_line(onode), knut_conf_col(onode),
                          other->name, what, name, full->name, knut_conf_file(fnode),
                          knut_conf_line(fnode), knut_conf_col(fnode));
}

/* Does `o` (another table, or the full table itself at steps other than
 * (skip_kind, skip_i)) write label L? *node gets where. */
static int writes_label(const knut_sync_table *o, const char *label, int skip, size_t skip_i,
                        const knut_conf **node)
{
    for (size_t i = 0; i < o->n_vertices; i++) {
        if (skip && i == skip_i)
            continue;
        for (size_t k = 0; k < o->vertices[i].n_labels; k++)
            if (strcmp(o->vertices[i].labels[k], label) == 0) {
                *node = step_node(o, "vertices", i);
                return 1;
            }
    }
    return 0;
}

/* The (type, from label, to label) of edge-like step j of t: edges first,
 * then fk_edges. */
static void edge_of(const knut_sync_table *t, size_t j, const char **type, const char **from,
                    const char **to, const knut_conf **node)
{
    if (j < t->n_edges) {
        *type = t->edges[j].type;
        *from = t->edges[j].from.label;
        *to = t->edges[j].to.label;
        *node = step_node(t, "edges", j);
    } else {
        const knut_sync_fk_step *f = &t->fk_edges[j - t->n_edges];
        *type = f->type;
        *from = t->vertices[0].labels[0];
        *to = f->to_label;
        *node = f->node;
    }
}

static knut_status check_table(const knut_sync_config *c, const knut_sync_table *f,
                               knut_error *err)
{
    const knut_conf *fn, *on;
    for (size_t i = 0; i < f->n_vertices; i++) {
        const char *label = f->vertices[i].labels[0];
        fn = step_node(f, "vertices", i);
        for (size_t t = 0; t < c->n_tables; t++) {
            const knut_sync_table *o = &c->tables[t];
            if (writes_label(o, label, o == f, i, &on))
                return owned(err, f, fn, o, on, "label", label);
        }
    }
    size_t nf = f->n_edges + f->n_fk_edges;
    for (size_t i = 0; i < nf; i++) {
        const char *type, *from, *to, *ot, *of, *oto;
        edge_of(f, i, &type, &from, &to, &fn);
        for (size_t t = 0; t < c->n_tables; t++) {
            const knut_sync_table *o = &c->tables[t];
            for (size_t j = 0; j < o->n_edges + o->n_fk_edges; j++) {
                if (o == f && j == i)
                    continue;
                edge_of(o, j, &ot, &of, &oto, &on);
                if (strcmp(ot, type) != 0)
                    continue;
                /* inside the full table, one type may link other labels */
                if (o == f && (strcmp(of, from) != 0 || strcmp(oto, to) != 0))
                    continue;
                return owned(err, f, fn, o, on, "edge type", type);
            }
        }
    }
    return KNUT_OK;
}

knut_status knut_sync__full_check(const knut_sync_config *c, knut_error *err)
{
    for (size_t t = 0; t < c->n_tables; t++) {
        if (c->tables[t].mode != KNUT_SYNC_MODE_FULL)
            continue;
        knut_status st = check_table(c, &c->tables[t], err);
        if (st != KNUT_OK)
            return st;
    }
    return KNUT_OK;
}
