/*
 * Shared helpers for the graphar unit tests: where the official corpus is,
 * a deep comparison of infos (everything except where they were read from),
 * and a log sink that counts warnings of the "graphar" target.
 */
#ifndef KNUT_TEST_GRAPHAR_FIXTURE_H
#define KNUT_TEST_GRAPHAR_FIXTURE_H

#include <stdio.h>
#include <string.h>

#include "knut/graphar.h"

#define GAR_CORPUS KNUT_SHARED_DIR "/data/graphar-testing"

static inline int gar_streq(const char *a, const char *b)
{
    if (!a || !b)
        return a == b;
    return strcmp(a, b) == 0;
}

static inline int gar_version_equal(const knut_graphar_version *a, const knut_graphar_version *b)
{
    if (a->present != b->present || a->major != b->major || a->n_user_types != b->n_user_types)
        return 0;
    for (size_t i = 0; i < a->n_user_types; i++)
        if (!gar_streq(a->user_types[i], b->user_types[i]))
            return 0;
    return 1;
}

static inline int gar_strv_equal(char *const *a, size_t na, char *const *b, size_t nb)
{
    if (na != nb)
        return 0;
    for (size_t i = 0; i < na; i++)
        if (!gar_streq(a[i], b[i]))
            return 0;
    return 1;
}

static inline int gar_groups_equal(const knut_graphar_property_group *a, size_t na,
                            const knut_graphar_property_group *b, size_t nb)
{
    if (na != nb)
        return 0;
    for (size_t i = 0; i < na; i++) {
        if (a[i].file_type != b[i].file_type || !gar_streq(a[i].prefix, b[i].prefix) ||
            a[i].n_props != b[i].n_props)
            return 0;
        for (size_t k = 0; k < a[i].n_props; k++) {
            const knut_graphar_property *p = &a[i].props[k], *q = &b[i].props[k];
            if (!gar_streq(p->name, q->name) || p->type != q->type ||
                p->elem_type != q->elem_type || p->is_primary != q->is_primary ||
                p->is_nullable != q->is_nullable || p->cardinality != q->cardinality)
                return 0;
        }
    }
    return 1;
}

static inline int gar_vertex_equal(const knut_graphar_vertex_info *a, const knut_graphar_vertex_info *b)
{
    return gar_streq(a->type, b->type) && a->chunk_size == b->chunk_size &&
           gar_streq(a->prefix, b->prefix) &&
           gar_strv_equal(a->labels, a->n_labels, b->labels, b->n_labels) &&
           gar_groups_equal(a->groups, a->n_groups, b->groups, b->n_groups) &&
           gar_version_equal(&a->version, &b->version);
}

static inline int gar_edge_equal(const knut_graphar_edge_info *a, const knut_graphar_edge_info *b)
{
    if (!gar_streq(a->src_type, b->src_type) || !gar_streq(a->edge_type, b->edge_type) ||
        !gar_streq(a->dst_type, b->dst_type) || a->chunk_size != b->chunk_size ||
        a->src_chunk_size != b->src_chunk_size || a->dst_chunk_size != b->dst_chunk_size ||
        a->directed != b->directed || !gar_streq(a->prefix, b->prefix) ||
        a->n_adj_lists != b->n_adj_lists || !gar_version_equal(&a->version, &b->version))
        return 0;
    for (size_t i = 0; i < a->n_adj_lists; i++)
        if (a->adj_lists[i].type != b->adj_lists[i].type ||
            a->adj_lists[i].file_type != b->adj_lists[i].file_type ||
            !gar_streq(a->adj_lists[i].prefix, b->adj_lists[i].prefix))
            return 0;
    return gar_groups_equal(a->groups, a->n_groups, b->groups, b->n_groups);
}

static inline int gar_graph_equal(const knut_graphar_graph_info *a, const knut_graphar_graph_info *b)
{
    if (!gar_streq(a->name, b->name) || !gar_streq(a->prefix, b->prefix) ||
        !gar_strv_equal(a->labels, a->n_labels, b->labels, b->n_labels) ||
        !gar_version_equal(&a->version, &b->version) || a->n_extra != b->n_extra ||
        !gar_strv_equal(a->vertex_files, a->n_vertex_files, b->vertex_files,
                        b->n_vertex_files) ||
        !gar_strv_equal(a->edge_files, a->n_edge_files, b->edge_files, b->n_edge_files) ||
        a->n_vertices != b->n_vertices || a->n_edges != b->n_edges)
        return 0;
    for (size_t i = 0; i < a->n_extra; i++)
        if (!gar_streq(a->extra[i].key, b->extra[i].key) ||
            !gar_streq(a->extra[i].value, b->extra[i].value))
            return 0;
    for (size_t i = 0; i < a->n_vertices; i++)
        if (!gar_vertex_equal(a->vertices[i], b->vertices[i]))
            return 0;
    for (size_t i = 0; i < a->n_edges; i++)
        if (!gar_edge_equal(a->edges[i], b->edges[i]))
            return 0;
    return 1;
}

/* Counts WARN records from the graphar target; remembers the last one. */
typedef struct gar_log_count {
    int warnings;
    char last[512];
} gar_log_count;

static inline void gar_log_sink(const knut_log_record *rec, void *ctx)
{
    gar_log_count *c = ctx;
    if (rec->level == KNUT_LOG_WARN && strcmp(rec->target, "graphar") == 0) {
        c->warnings++;
        snprintf(c->last, sizeof c->last, "%s", rec->msg);
    }
}

#endif
