/*
 * What each reader reads: the public stream functions turn their
 * arguments into a plan (the files of one output chunk, the columns, the
 * chunk or part range, checked against the count files) and the walk
 * below turns the plan into chunk paths one step at a time, using the
 * layout functions so the paths are the reference's. Edge walks read each
 * part's edge_count<i> when they reach it and skip empty parts, which have
 * no files (graphar.md §3.4).
 */
#include "read_int.h"

#include <stdlib.h>
#include <string.h>

void knut_graphar__plan_reset(knut_graphar__plan *p)
{
    if (!p)
        return;
    free(p->srcs);
    free(p->cols);
    memset(p, 0, sizeof *p);
}

static knut_status add_src(knut_graphar__plan *p, knut_graphar__src_kind kind,
                           knut_graphar_file_type ft, const knut_graphar_property_group *g,
                           knut_error *err)
{
    knut_graphar__src *s = knut_graphar__push((void **)&p->srcs, &p->n_srcs, sizeof *s);
    if (!s)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    s->kind = kind;
    s->ft = ft;
    s->g = g;
    p->n_srcs++;
    return KNUT_OK;
}

static knut_status add_col(knut_graphar__plan *p, const char *name, knut_graphar__col_kind kind,
                           const knut_graphar_property *prop, knut_error *err)
{
    knut_graphar__col *c = knut_graphar__push((void **)&p->cols, &p->n_cols, sizeof *c);
    if (!c)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    c->name = name;
    c->kind = kind;
    c->src = p->n_srcs ? p->n_srcs - 1 : 0; /* the source added last */
    c->prop = prop;
    p->n_cols++;
    return KNUT_OK;
}

/* A group as a source, and its properties as columns. */
static knut_status add_group(knut_graphar__plan *p, knut_graphar__src_kind kind,
                             const knut_graphar_property_group *g, knut_error *err)
{
    if (g->n_props == 0)
        return knut_error_set(err, KNUT_EINVAL, "%s: property group %s has no properties",
                              p->what, g->prefix ? g->prefix : "?");
    knut_status st = add_src(p, kind, g->file_type, g, err);
    for (size_t i = 0; st == KNUT_OK && i < g->n_props; i++)
        st = add_col(p, g->props[i].name, KNUT_GRAPHAR__COL_PROP, &g->props[i], err);
    return st;
}

static knut_status add_labels(knut_graphar__plan *p, const knut_graphar_vertex_info *vi,
                              knut_error *err)
{
    /* Label chunks are Parquet whatever the groups use (graphar.md §5.1). */
    knut_status st = add_src(p, KNUT_GRAPHAR__SRC_LABELS, KNUT_GRAPHAR_FILE_PARQUET, NULL, err);
    for (size_t i = 0; st == KNUT_OK && i < vi->n_labels; i++)
        st = add_col(p, vi->labels[i], KNUT_GRAPHAR__COL_LABEL, NULL, err);
    return st;
}

/* ---- ranges ------------------------------------------------------------ */

static knut_status vertex_range(knut_graphar_reader *r, knut_graphar__plan *p, int64_t chunk,
                                int64_t n_chunks, knut_error *err)
{
    const knut_graphar_vertex_info *vi = p->vi;
    if (chunk < 0 || (n_chunks != KNUT_GRAPHAR_ALL && (n_chunks <= 0 ||
                                                       n_chunks > INT64_MAX - chunk)))
        return knut_error_set(err, KNUT_EINVAL, "%s: invalid chunk range %lld + %lld", p->what,
                              (long long)chunk, (long long)n_chunks);
    int64_t count = -1;
    knut_status st = knut_graphar_reader_vertex_count(r, vi, &count, err);
    if (st == KNUT_ENOTFOUND && n_chunks != KNUT_GRAPHAR_ALL) {
        count = -1; /* explicit chunks can be read without the count */
        knut_error_clear(err);
    } else if (st != KNUT_OK) {
        return st;
    }
    p->count = count;
    p->first = chunk;
    p->end = n_chunks == KNUT_GRAPHAR_ALL ? -1 : chunk + n_chunks;
    if (count >= 0) {
        int64_t have = knut_graphar_chunk_count(count, vi->chunk_size);
        if (p->end < 0)
            p->end = have;
        if (chunk > have || p->end > have || (n_chunks != KNUT_GRAPHAR_ALL && chunk >= have))
            return knut_error_set(err, KNUT_ENOTFOUND,
                                  "%s has %lld chunks (%lld vertices, chunk size %lld): no "
                                  "chunk %lld",
                                  p->what, (long long)have, (long long)count,
                                  (long long)vi->chunk_size,
                                  (long long)(chunk >= have ? chunk : have));
    }
    return KNUT_OK;
}

static knut_status edge_range(knut_graphar_reader *r, knut_graphar__plan *p, int64_t part,
                              int64_t chunk, knut_error *err)
{
    const knut_graphar_edge_info *ei = p->ei;
    const knut_graphar_adj_list *al = p->al;
    if ((part < 0 && part != KNUT_GRAPHAR_ALL) || (chunk < 0 && chunk != KNUT_GRAPHAR_ALL) ||
        (part == KNUT_GRAPHAR_ALL && chunk != KNUT_GRAPHAR_ALL))
        return knut_error_set(err, KNUT_EINVAL, "%s: invalid part %lld / chunk %lld", p->what,
                              (long long)part, (long long)chunk);
    int64_t aligned = -1;
    knut_status st = knut_graphar__aligned_count(r, ei, al, &aligned, err);
    if (st == KNUT_ENOTFOUND && part != KNUT_GRAPHAR_ALL) {
        aligned = -1;
        knut_error_clear(err);
    } else if (st != KNUT_OK) {
        return st;
    }
    int64_t parts = aligned < 0 ? -1
                                : knut_graphar_chunk_count(
                                      aligned, knut_graphar_aligned_chunk_size(ei, al->type));
    if (part != KNUT_GRAPHAR_ALL && parts >= 0 && part >= parts)
        return knut_error_set(err, KNUT_ENOTFOUND, "%s has %lld parts (%lld %s vertices): no "
                              "part %lld",
                              p->what, (long long)parts, (long long)aligned,
                              knut_graphar_aligned_type(ei, al->type), (long long)part);
    p->first = part == KNUT_GRAPHAR_ALL ? 0 : part;
    p->end = part == KNUT_GRAPHAR_ALL ? parts : part + 1;
    p->part_chunk = chunk;
    p->part_count_required = chunk == KNUT_GRAPHAR_ALL;
    if (p->walk != KNUT_GRAPHAR__WALK_EDGE || chunk == KNUT_GRAPHAR_ALL)
        return KNUT_OK;
    int64_t edges = -1;
    st = knut_graphar__part_count(r, ei, al, part, &edges, err);
    if (st == KNUT_ENOTFOUND) {
        knut_error_clear(err);
        return KNUT_OK;
    }
    if (st != KNUT_OK)
        return st;
    int64_t have = knut_graphar_chunk_count(edges, ei->chunk_size);
    if (chunk >= have)
        return knut_error_set(err, KNUT_ENOTFOUND,
                              "%s part %lld has %lld chunks (%lld edges): no chunk %lld",
                              p->what, (long long)part, (long long)have, (long long)edges,
                              (long long)chunk);
    return KNUT_OK;
}

/* ---- the walk ---------------------------------------------------------- */

knut_status knut_graphar__plan_next(const knut_graphar_reader *r, const knut_graphar__plan *p,
                                    knut_graphar__cursor *cur, knut_graphar__step *step,
                                    knut_error *err)
{
    knut_status st = KNUT_OK;
    if (p->walk == KNUT_GRAPHAR__WALK_EDGE) {
        for (;;) {
            if (cur->pos >= p->end)
                return KNUT_EOF;
            if (!cur->part_open) {
                st = knut_graphar__part_count(r, p->ei, p->al, cur->pos, &cur->part_edges, err);
                if (st == KNUT_ENOTFOUND && !p->part_count_required) {
                    knut_error_clear(err);
                    cur->part_edges = -1;
                    st = KNUT_OK;
                } else if (st != KNUT_OK) {
                    return st;
                }
                cur->chunk = p->part_chunk >= 0 ? p->part_chunk : 0;
                cur->part_open = 1;
            }
            int64_t have = cur->part_edges >= 0
                               ? knut_graphar_chunk_count(cur->part_edges, p->ei->chunk_size)
                               : p->part_chunk + 1;
            if (cur->chunk < have && (p->part_chunk < 0 || cur->chunk == p->part_chunk))
                break;
            cur->pos++; /* the part is done (or empty: it has no files) */
            cur->part_open = 0;
        }
        step->part = cur->pos;
        step->index = cur->chunk++;
        step->base_id = 0;
        step->rows = cur->part_edges >= 0
                         ? knut_graphar_chunk_rows(cur->part_edges, p->ei->chunk_size,
                                                   step->index)
                         : -1;
        step->max_rows = p->ei->chunk_size;
    } else {
        if (cur->pos >= p->end)
            return KNUT_EOF;
        step->index = cur->pos++;
        step->part = step->index;
        if (p->walk == KNUT_GRAPHAR__WALK_VERTEX) {
            step->base_id = step->index * p->vi->chunk_size;
            step->rows = p->count >= 0 ? knut_graphar_chunk_rows(p->count, p->vi->chunk_size,
                                                                 step->index)
                                       : -1;
            step->max_rows = p->vi->chunk_size;
        } else {
            /* Offsets: aligned chunk size + 1 (padded) or fewer (trimmed). */
            step->base_id = 0;
            step->rows = -1;
            step->max_rows = knut_graphar_aligned_chunk_size(p->ei, p->al->type) + 1;
        }
    }
    for (size_t k = 0; st == KNUT_OK && k < p->n_srcs; k++) {
        knut_buf *b = &step->paths[k];
        const knut_graphar__src *s = &p->srcs[k];
        knut_buf_clear(b);
        switch (s->kind) {
        case KNUT_GRAPHAR__SRC_VGROUP:
            st = knut_graphar_path_vertex_chunk(b, r->base, p->vi, s->g, step->index);
            break;
        case KNUT_GRAPHAR__SRC_LABELS:
            st = knut_graphar_path_label_chunk(b, r->base, p->vi, step->index);
            break;
        case KNUT_GRAPHAR__SRC_ADJ:
            st = knut_graphar_path_adj_chunk(b, r->base, p->ei, p->al, step->part, step->index);
            break;
        case KNUT_GRAPHAR__SRC_EGROUP:
            st = knut_graphar_path_edge_chunk(b, r->base, p->ei, p->al, s->g, step->part,
                                              step->index);
            break;
        case KNUT_GRAPHAR__SRC_OFFSET:
            st = knut_graphar_path_offset_chunk(b, r->base, p->ei, p->al, step->part);
            break;
        }
        if (st != KNUT_OK)
            return knut_error_set(err, st, "%s: cannot build a chunk path", p->what);
    }
    return KNUT_OK;
}

/* ---- public streams ---------------------------------------------------- */

static int group_of(const knut_graphar_property_group *g,
                    const knut_graphar_property_group *groups, size_t n)
{
    return g && groups && g >= groups && g < groups + n;
}

static knut_status vertex_plan(knut_graphar__plan *p, const knut_graphar_vertex_info *vi,
                               knut_error *err)
{
    memset(p, 0, sizeof *p);
    p->vi = vi;
    p->walk = KNUT_GRAPHAR__WALK_VERTEX;
    snprintf(p->what, sizeof p->what, "vertex %s", vi->type ? vi->type : "?");
    if (vi->chunk_size <= 0)
        return knut_error_set(err, KNUT_EINVAL, "%s: chunk_size %lld", p->what,
                              (long long)vi->chunk_size);
    return add_col(p, KNUT_GRAPHAR__VINDEX, KNUT_GRAPHAR__COL_VINDEX, NULL, err);
}

static knut_status finish(knut_graphar_reader *r, knut_graphar__plan *p, knut_status st,
                          struct ArrowArrayStream *out, knut_error *err)
{
    if (st != KNUT_OK) {
        knut_graphar__plan_reset(p);
        out->release = NULL;
        return st;
    }
    return knut_graphar__stream_open(r, p, out, err);
}

knut_status knut_graphar_reader_vertex_group(knut_graphar_reader *r,
                                             const knut_graphar_vertex_info *vi,
                                             const knut_graphar_property_group *g,
                                             int64_t chunk, int64_t n_chunks,
                                             struct ArrowArrayStream *out, knut_error *err)
{
    KNUT_ASSERT_ARG(err, r && vi && out && group_of(g, vi->groups, vi->n_groups));
    knut_graphar__plan p;
    knut_status st = vertex_plan(&p, vi, err);
    if (st == KNUT_OK)
        st = add_group(&p, KNUT_GRAPHAR__SRC_VGROUP, g, err);
    if (st == KNUT_OK)
        st = vertex_range(r, &p, chunk, n_chunks, err);
    return finish(r, &p, st, out, err);
}

knut_status knut_graphar_reader_labels(knut_graphar_reader *r, const knut_graphar_vertex_info *vi,
                                       int64_t chunk, int64_t n_chunks,
                                       struct ArrowArrayStream *out, knut_error *err)
{
    KNUT_ASSERT_ARG(err, r && vi && out);
    knut_graphar__plan p;
    knut_status st = vertex_plan(&p, vi, err);
    if (st == KNUT_OK && vi->n_labels == 0)
        st = knut_error_set(err, KNUT_EINVAL, "%s declares no labels", p.what);
    if (st == KNUT_OK)
        st = add_labels(&p, vi, err);
    if (st == KNUT_OK)
        st = vertex_range(r, &p, chunk, n_chunks, err);
    return finish(r, &p, st, out, err);
}

knut_status knut_graphar__plan_vertices(knut_graphar_reader *r, knut_graphar__plan *p,
                                        const knut_graphar_vertex_info *vi, knut_error *err)
{
    knut_status st = vertex_plan(p, vi, err);
    for (size_t i = 0; st == KNUT_OK && i < vi->n_groups; i++)
        st = add_group(p, KNUT_GRAPHAR__SRC_VGROUP, &vi->groups[i], err);
    if (st == KNUT_OK && vi->n_labels > 0)
        st = add_labels(p, vi, err);
    if (st == KNUT_OK)
        st = vertex_range(r, p, 0, KNUT_GRAPHAR_ALL, err);
    if (st != KNUT_OK)
        knut_graphar__plan_reset(p);
    return st;
}

knut_status knut_graphar_reader_vertices(knut_graphar_reader *r,
                                         const knut_graphar_vertex_info *vi,
                                         struct ArrowArrayStream *out, knut_error *err)
{
    KNUT_ASSERT_ARG(err, r && vi && out);
    knut_graphar__plan p;
    return finish(r, &p, knut_graphar__plan_vertices(r, &p, vi, err), out, err);
}

static knut_status edge_plan(knut_graphar__plan *p, const knut_graphar_edge_info *ei,
                             knut_graphar_adj_list_type type, knut_graphar__walk walk,
                             knut_error *err)
{
    memset(p, 0, sizeof *p);
    p->ei = ei;
    p->walk = walk;
    snprintf(p->what, sizeof p->what, "edge %s_%s_%s (%s)", ei->src_type ? ei->src_type : "?",
             ei->edge_type ? ei->edge_type : "?", ei->dst_type ? ei->dst_type : "?",
             knut_graphar_adj_list_type_name(type));
    p->al = knut_graphar_edge_info_adj_list(ei, type);
    if (!p->al)
        return knut_error_set(err, KNUT_ENOTFOUND, "%s: the edge has no such adj list", p->what);
    if (ei->chunk_size <= 0 || knut_graphar_aligned_chunk_size(ei, type) <= 0)
        return knut_error_set(err, KNUT_EINVAL, "%s: chunk sizes must be > 0", p->what);
    return KNUT_OK;
}

static knut_status add_adj(knut_graphar__plan *p, knut_error *err)
{
    knut_status st = add_src(p, KNUT_GRAPHAR__SRC_ADJ, p->al->file_type, NULL, err);
    if (st == KNUT_OK)
        st = add_col(p, KNUT_GRAPHAR__SRC, KNUT_GRAPHAR__COL_ID, NULL, err);
    if (st == KNUT_OK)
        st = add_col(p, KNUT_GRAPHAR__DST, KNUT_GRAPHAR__COL_ID, NULL, err);
    return st;
}

knut_status knut_graphar_reader_adj_list(knut_graphar_reader *r, const knut_graphar_edge_info *ei,
                                         knut_graphar_adj_list_type type, int64_t part,
                                         int64_t chunk, struct ArrowArrayStream *out,
                                         knut_error *err)
{
    KNUT_ASSERT_ARG(err, r && ei && out);
    knut_graphar__plan p;
    knut_status st = edge_plan(&p, ei, type, KNUT_GRAPHAR__WALK_EDGE, err);
    if (st == KNUT_OK)
        st = add_adj(&p, err);
    if (st == KNUT_OK)
        st = edge_range(r, &p, part, chunk, err);
    return finish(r, &p, st, out, err);
}

knut_status knut_graphar_reader_offsets(knut_graphar_reader *r, const knut_graphar_edge_info *ei,
                                        knut_graphar_adj_list_type type, int64_t part,
                                        struct ArrowArrayStream *out, knut_error *err)
{
    KNUT_ASSERT_ARG(err, r && ei && out && part >= 0);
    knut_graphar__plan p;
    knut_status st = edge_plan(&p, ei, type, KNUT_GRAPHAR__WALK_OFFSET, err);
    if (st == KNUT_OK && !knut_graphar_adj_list_type_is_ordered(type))
        st = knut_error_set(err, KNUT_EINVAL, "%s: only ordered adj lists have offsets",
                            p.what);
    if (st == KNUT_OK)
        st = add_src(&p, KNUT_GRAPHAR__SRC_OFFSET, p.al->file_type, NULL, err);
    if (st == KNUT_OK)
        st = add_col(&p, KNUT_GRAPHAR__OFFSET, KNUT_GRAPHAR__COL_ID, NULL, err);
    if (st == KNUT_OK)
        st = edge_range(r, &p, part, KNUT_GRAPHAR_ALL, err);
    return finish(r, &p, st, out, err);
}

knut_status knut_graphar_reader_edge_group(knut_graphar_reader *r,
                                           const knut_graphar_edge_info *ei,
                                           knut_graphar_adj_list_type type,
                                           const knut_graphar_property_group *g, int64_t part,
                                           int64_t chunk, struct ArrowArrayStream *out,
                                           knut_error *err)
{
    KNUT_ASSERT_ARG(err, r && ei && out && group_of(g, ei->groups, ei->n_groups));
    knut_graphar__plan p;
    knut_status st = edge_plan(&p, ei, type, KNUT_GRAPHAR__WALK_EDGE, err);
    if (st == KNUT_OK)
        st = add_group(&p, KNUT_GRAPHAR__SRC_EGROUP, g, err);
    if (st == KNUT_OK)
        st = edge_range(r, &p, part, chunk, err);
    return finish(r, &p, st, out, err);
}

knut_status knut_graphar__plan_edges(knut_graphar_reader *r, knut_graphar__plan *p,
                                     const knut_graphar_edge_info *ei,
                                     knut_graphar_adj_list_type type, knut_error *err)
{
    knut_status st = edge_plan(p, ei, type, KNUT_GRAPHAR__WALK_EDGE, err);
    if (st == KNUT_OK)
        st = add_adj(p, err);
    for (size_t i = 0; st == KNUT_OK && i < ei->n_groups; i++)
        st = add_group(p, KNUT_GRAPHAR__SRC_EGROUP, &ei->groups[i], err);
    if (st == KNUT_OK)
        st = edge_range(r, p, KNUT_GRAPHAR_ALL, KNUT_GRAPHAR_ALL, err);
    if (st != KNUT_OK)
        knut_graphar__plan_reset(p);
    return st;
}

knut_status knut_graphar_reader_edges(knut_graphar_reader *r, const knut_graphar_edge_info *ei,
                                      knut_graphar_adj_list_type type,
                                      struct ArrowArrayStream *out, knut_error *err)
{
    KNUT_ASSERT_ARG(err, r && ei && out);
    knut_graphar__plan p;
    return finish(r, &p, knut_graphar__plan_edges(r, &p, ei, type, err), out, err);
}
