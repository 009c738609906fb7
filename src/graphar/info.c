/*
 * The in-memory info model: destructors, the constructors and builders used
 * by writers that create a graph from scratch, lookups, and the default
 * prefixes the reference C++ constructors fill in. Building refuses what
 * the reference's Create and Add functions refuse (empty names, chunk sizes
 * <= 0, duplicate properties, adj-list types or vertex/edge types), while
 * loading (info_load.c) keeps such files readable for the validator.
 */
#include "graphar_int.h"

#include <stdlib.h>
#include <string.h>

/* ---- small helpers ----------------------------------------------------- */

char *knut_graphar__strdup(const char *s)
{
    return s ? strdup(s) : NULL;
}

void *knut_graphar__push(void **arr, size_t *n, size_t elem)
{
    /* Capacity is the next power of two at or above the count, so a push
     * reallocates exactly when the count is 0 or a power of two. Every array
     * pushed to must therefore have been grown by this function only. */
    if (*n == 0 || (*n & (*n - 1)) == 0) {
        size_t cap = *n ? *n * 2 : 1;
        if (cap > SIZE_MAX / elem)
            return NULL;
        void *p = realloc(*arr, cap * elem);
        if (!p)
            return NULL;
        *arr = p;
    }
    char *slot = (char *)*arr + *n * elem;
    memset(slot, 0, elem);
    return slot;
}

void knut_graphar__strv_free(char **v, size_t n)
{
    if (!v)
        return;
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static char *concat(const char *a, const char *b, const char *c, const char *d, const char *e,
                    const char *f)
{
    const char *parts[] = {a, b, c, d, e, f};
    size_t len = 0;
    for (size_t i = 0; i < 6; i++)
        len += parts[i] ? strlen(parts[i]) : 0;
    char *s = malloc(len + 1);
    if (!s)
        return NULL;
    char *p = s;
    for (size_t i = 0; i < 6; i++) {
        if (!parts[i])
            continue;
        size_t l = strlen(parts[i]);
        memcpy(p, parts[i], l);
        p += l;
    }
    *p = '\0';
    return s;
}

char *knut_graphar__vertex_default_prefix(const char *type)
{
    return concat(type, "/", NULL, NULL, NULL, NULL);
}

char *knut_graphar__edge_key(const char *src, const char *edge, const char *dst,
                             const char *suffix)
{
    /* "_" is the reference's REGULAR_SEPARATOR. */
    return concat(src, "_", edge, "_", dst, suffix);
}

char *knut_graphar__edge_default_prefix(const char *src, const char *edge, const char *dst)
{
    return knut_graphar__edge_key(src, edge, dst, "/");
}

knut_status knut_graphar__group_default_prefix(knut_graphar_property_group *g)
{
    size_t len = 0;
    for (size_t i = 0; i < g->n_props; i++)
        len += strlen(g->props[i].name) + 1;
    char *s = malloc(len + 1);
    if (!s)
        return KNUT_ENOMEM;
    char *p = s;
    for (size_t i = 0; i < g->n_props; i++) {
        size_t l = strlen(g->props[i].name);
        memcpy(p, g->props[i].name, l);
        p += l;
        *p++ = i + 1 < g->n_props ? '_' : '/';
    }
    *p = '\0';
    free(g->prefix);
    g->prefix = s;
    return KNUT_OK;
}

/* ---- destructors ------------------------------------------------------- */

static void property_reset(knut_graphar_property *p)
{
    free(p->name);
    free(p->type_text);
}

void knut_graphar__group_reset(knut_graphar_property_group *g)
{
    if (!g)
        return;
    for (size_t i = 0; i < g->n_props; i++)
        property_reset(&g->props[i]);
    free(g->props);
    free(g->prefix);
    memset(g, 0, sizeof *g);
}

void knut_graphar__adj_list_reset(knut_graphar_adj_list *al)
{
    if (!al)
        return;
    free(al->prefix);
    free(al->aligned_by_text);
    memset(al, 0, sizeof *al);
}

void knut_graphar_vertex_info_free(knut_graphar_vertex_info *vi)
{
    if (!vi)
        return;
    free(vi->type);
    free(vi->prefix);
    knut_graphar__strv_free(vi->labels, vi->n_labels);
    for (size_t i = 0; i < vi->n_groups; i++)
        knut_graphar__group_reset(&vi->groups[i]);
    free(vi->groups);
    knut_graphar_version_reset(&vi->version);
    free(vi->source);
    free(vi);
}

void knut_graphar_edge_info_free(knut_graphar_edge_info *ei)
{
    if (!ei)
        return;
    free(ei->src_type);
    free(ei->edge_type);
    free(ei->dst_type);
    free(ei->prefix);
    for (size_t i = 0; i < ei->n_adj_lists; i++)
        knut_graphar__adj_list_reset(&ei->adj_lists[i]);
    free(ei->adj_lists);
    for (size_t i = 0; i < ei->n_groups; i++)
        knut_graphar__group_reset(&ei->groups[i]);
    free(ei->groups);
    knut_graphar_version_reset(&ei->version);
    free(ei->source);
    free(ei);
}

void knut_graphar_graph_info_free(knut_graphar_graph_info *gi)
{
    if (!gi)
        return;
    free(gi->name);
    free(gi->prefix);
    free(gi->base_dir);
    knut_graphar__strv_free(gi->labels, gi->n_labels);
    for (size_t i = 0; i < gi->n_extra; i++) {
        free(gi->extra[i].key);
        free(gi->extra[i].value);
    }
    free(gi->extra);
    knut_graphar_version_reset(&gi->version);
    knut_graphar__strv_free(gi->vertex_files, gi->n_vertex_files);
    knut_graphar__strv_free(gi->edge_files, gi->n_edge_files);
    for (size_t i = 0; i < gi->n_vertices; i++)
        knut_graphar_vertex_info_free(gi->vertices[i]);
    free(gi->vertices);
    for (size_t i = 0; i < gi->n_edges; i++)
        knut_graphar_edge_info_free(gi->edges[i]);
    free(gi->edges);
    free(gi->source);
    free(gi);
}

/* ---- building ---------------------------------------------------------- */

static knut_status oom(knut_error *err)
{
    return knut_error_set(err, KNUT_ENOMEM, "graphar: out of memory");
}

static void set_v1(knut_graphar_version *v)
{
    memset(v, 0, sizeof *v);
    v->present = 1;
    v->major = 1;
}

knut_status knut_graphar_vertex_info_new(knut_graphar_vertex_info **out, const char *type,
                                         int64_t chunk_size, const char *prefix,
                                         knut_error *err)
{
    KNUT_ASSERT_ARG(err, out);
    *out = NULL;
    if (!type || !*type)
        return knut_error_set(err, KNUT_EINVAL, "vertex info: empty type");
    if (chunk_size <= 0)
        return knut_error_set(err, KNUT_EINVAL, "vertex info '%s': chunk_size must be > 0, got %lld",
                              type, (long long)chunk_size);
    knut_graphar_vertex_info *vi = calloc(1, sizeof *vi);
    if (!vi)
        return oom(err);
    vi->type = strdup(type);
    vi->chunk_size = chunk_size;
    vi->prefix_given = prefix && *prefix;
    vi->prefix = vi->prefix_given ? strdup(prefix) : knut_graphar__vertex_default_prefix(type);
    set_v1(&vi->version);
    if (!vi->type || !vi->prefix) {
        knut_graphar_vertex_info_free(vi);
        return oom(err);
    }
    *out = vi;
    return KNUT_OK;
}

knut_status knut_graphar_vertex_info_add_label(knut_graphar_vertex_info *vi, const char *label,
                                               knut_error *err)
{
    KNUT_ASSERT_ARG(err, vi && label && *label);
    char **slot = knut_graphar__push((void **)&vi->labels, &vi->n_labels, sizeof *slot);
    if (!slot || !(*slot = strdup(label)))
        return oom(err);
    vi->n_labels++;
    return KNUT_OK;
}

static knut_status add_group(knut_graphar_property_group **groups, size_t *n,
                             knut_graphar_file_type ft, const char *prefix,
                             knut_graphar_property_group **out, knut_error *err)
{
    if ((unsigned)ft > KNUT_GRAPHAR_FILE_JSON)
        return knut_error_set(err, KNUT_EINVAL, "property group: invalid file type %d", (int)ft);
    knut_graphar_property_group *g = knut_graphar__push((void **)groups, n, sizeof *g);
    if (!g)
        return oom(err);
    g->file_type = ft;
    g->prefix_given = prefix && *prefix;
    g->prefix = strdup(g->prefix_given ? prefix : "");
    if (!g->prefix)
        return oom(err);
    (*n)++;
    if (out)
        *out = g;
    return KNUT_OK;
}

knut_status knut_graphar_vertex_info_add_group(knut_graphar_vertex_info *vi,
                                               knut_graphar_file_type ft, const char *prefix,
                                               knut_graphar_property_group **out,
                                               knut_error *err)
{
    KNUT_ASSERT_ARG(err, vi);
    return add_group(&vi->groups, &vi->n_groups, ft, prefix, out, err);
}

knut_status knut_graphar_edge_info_add_group(knut_graphar_edge_info *ei,
                                             knut_graphar_file_type ft, const char *prefix,
                                             knut_graphar_property_group **out,
                                             knut_error *err)
{
    KNUT_ASSERT_ARG(err, ei);
    return add_group(&ei->groups, &ei->n_groups, ft, prefix, out, err);
}

knut_status knut_graphar_group_add_property(knut_graphar_property_group *g, const char *name,
                                            const char *data_type, int is_primary,
                                            int is_nullable, knut_graphar_cardinality card,
                                            knut_error *err)
{
    KNUT_ASSERT_ARG(err, g && name && data_type);
    if (!*name)
        return knut_error_set(err, KNUT_EINVAL, "property: empty name");
    if ((unsigned)card > KNUT_GRAPHAR_CARD_SET)
        return knut_error_set(err, KNUT_EINVAL, "property '%s': invalid cardinality", name);
    for (size_t i = 0; i < g->n_props; i++)
        if (strcmp(g->props[i].name, name) == 0)
            return knut_error_set(err, KNUT_EINVAL, "property '%s' already exists in the group",
                                  name);
    knut_graphar_type t, elem;
    knut_status st = knut_graphar_type_parse(data_type, &t, &elem, err);
    if (st != KNUT_OK)
        return knut_error_prefix(err, "property '%s': ", name);
    knut_graphar_property *p = knut_graphar__push((void **)&g->props, &g->n_props, sizeof *p);
    if (!p)
        return oom(err);
    p->name = strdup(name);
    p->type_text = strdup(data_type);
    if (!p->name || !p->type_text) {
        property_reset(p);
        memset(p, 0, sizeof *p);
        return oom(err);
    }
    p->type = t;
    p->elem_type = elem;
    p->is_primary = !!is_primary;
    p->nullable_given = 1;
    p->nullable_declared = !!is_nullable;
    /* The reference's Property constructor: a primary key is never null. */
    p->is_nullable = !is_primary && is_nullable;
    p->cardinality = card;
    g->n_props++;
    if (!g->prefix_given && knut_graphar__group_default_prefix(g) != KNUT_OK)
        return oom(err);
    return KNUT_OK;
}

knut_status knut_graphar_edge_info_new(knut_graphar_edge_info **out, const char *src_type,
                                       const char *edge_type, const char *dst_type,
                                       int64_t chunk_size, int64_t src_chunk_size,
                                       int64_t dst_chunk_size, int directed,
                                       const char *prefix, knut_error *err)
{
    KNUT_ASSERT_ARG(err, out);
    *out = NULL;
    if (!src_type || !*src_type || !edge_type || !*edge_type || !dst_type || !*dst_type)
        return knut_error_set(err, KNUT_EINVAL, "edge info: empty src, edge or dst type");
    if (chunk_size <= 0 || src_chunk_size <= 0 || dst_chunk_size <= 0)
        return knut_error_set(err, KNUT_EINVAL,
                              "edge info '%s_%s_%s': chunk sizes must be > 0, got %lld/%lld/%lld",
                              src_type, edge_type, dst_type, (long long)chunk_size,
                              (long long)src_chunk_size, (long long)dst_chunk_size);
    knut_graphar_edge_info *ei = calloc(1, sizeof *ei);
    if (!ei)
        return oom(err);
    ei->src_type = strdup(src_type);
    ei->edge_type = strdup(edge_type);
    ei->dst_type = strdup(dst_type);
    ei->chunk_size = chunk_size;
    ei->src_chunk_size = src_chunk_size;
    ei->dst_chunk_size = dst_chunk_size;
    ei->directed = !!directed;
    ei->directed_given = 1;
    ei->prefix_given = prefix && *prefix;
    ei->prefix = ei->prefix_given
                     ? strdup(prefix)
                     : knut_graphar__edge_default_prefix(src_type, edge_type, dst_type);
    set_v1(&ei->version);
    if (!ei->src_type || !ei->edge_type || !ei->dst_type || !ei->prefix) {
        knut_graphar_edge_info_free(ei);
        return oom(err);
    }
    *out = ei;
    return KNUT_OK;
}

knut_status knut_graphar_edge_info_add_adj_list(knut_graphar_edge_info *ei,
                                                knut_graphar_adj_list_type type,
                                                knut_graphar_file_type ft, const char *prefix,
                                                knut_error *err)
{
    KNUT_ASSERT_ARG(err, ei);
    if ((unsigned)type > KNUT_GRAPHAR_ORDERED_BY_DEST || (unsigned)ft > KNUT_GRAPHAR_FILE_JSON)
        return knut_error_set(err, KNUT_EINVAL, "adj list: invalid type or file type");
    if (knut_graphar_edge_info_adj_list(ei, type))
        return knut_error_set(err, KNUT_EINVAL, "adj list type %s already exists",
                              knut_graphar_adj_list_type_name(type));
    knut_graphar_adj_list *al =
        knut_graphar__push((void **)&ei->adj_lists, &ei->n_adj_lists, sizeof *al);
    if (!al)
        return oom(err);
    al->type = type;
    al->file_type = ft;
    al->prefix_given = prefix && *prefix;
    al->prefix = al->prefix_given ? strdup(prefix)
                                  : concat(knut_graphar_adj_list_type_name(type), "/", NULL,
                                           NULL, NULL, NULL);
    al->aligned_by_text = strdup(knut_graphar_adj_list_type_by_source(type) ? "src" : "dst");
    if (!al->prefix || !al->aligned_by_text) {
        knut_graphar__adj_list_reset(al);
        return oom(err);
    }
    ei->n_adj_lists++;
    return KNUT_OK;
}

knut_status knut_graphar_graph_info_new(knut_graphar_graph_info **out, const char *name,
                                        const char *prefix, knut_error *err)
{
    KNUT_ASSERT_ARG(err, out);
    *out = NULL;
    if (!name || !*name)
        return knut_error_set(err, KNUT_EINVAL, "graph info: empty name");
    knut_graphar_graph_info *gi = calloc(1, sizeof *gi);
    if (!gi)
        return oom(err);
    gi->name = strdup(name);
    gi->prefix_given = prefix && *prefix;
    gi->prefix = strdup(gi->prefix_given ? prefix : "./");
    gi->base_dir = strdup("");
    set_v1(&gi->version);
    if (!gi->name || !gi->prefix || !gi->base_dir) {
        knut_graphar_graph_info_free(gi);
        return oom(err);
    }
    *out = gi;
    return KNUT_OK;
}

/* Appends item + file name to the parallel arrays of a graph. */
static knut_status add_info(void ***items, size_t *n_items, char ***files, size_t *n_files,
                            void *item, char *file, knut_error *err)
{
    if (*n_items != *n_files) {
        free(file);
        return knut_error_set(err, KNUT_EINVAL,
                              "graph info was parsed without loading its info files");
    }
    void **slot = file ? knut_graphar__push((void **)items, n_items, sizeof *slot) : NULL;
    char **fslot = slot ? knut_graphar__push((void **)files, n_files, sizeof *fslot) : NULL;
    if (!fslot) {
        free(file);
        return oom(err);
    }
    *slot = item;
    *fslot = file;
    (*n_items)++;
    (*n_files)++;
    return KNUT_OK;
}

knut_status knut_graphar_graph_info_add_vertex(knut_graphar_graph_info *gi,
                                               knut_graphar_vertex_info *vi, const char *file,
                                               knut_error *err)
{
    KNUT_ASSERT_ARG(err, gi && vi && vi->type);
    if (knut_graphar_graph_info_vertex(gi, vi->type))
        return knut_error_set(err, KNUT_EINVAL, "vertex type '%s' already exists in graph '%s'",
                              vi->type, gi->name);
    char *f = file ? strdup(file) : concat(vi->type, ".vertex.yml", NULL, NULL, NULL, NULL);
    return add_info((void ***)&gi->vertices, &gi->n_vertices, &gi->vertex_files,
                    &gi->n_vertex_files, vi, f, err);
}

knut_status knut_graphar_graph_info_add_edge(knut_graphar_graph_info *gi,
                                             knut_graphar_edge_info *ei, const char *file,
                                             knut_error *err)
{
    KNUT_ASSERT_ARG(err, gi && ei && ei->src_type && ei->edge_type && ei->dst_type);
    if (knut_graphar_graph_info_edge(gi, ei->src_type, ei->edge_type, ei->dst_type))
        return knut_error_set(err, KNUT_EINVAL,
                              "edge type '%s_%s_%s' already exists in graph '%s'", ei->src_type,
                              ei->edge_type, ei->dst_type, gi->name);
    char *f = file ? strdup(file)
                   : knut_graphar__edge_key(ei->src_type, ei->edge_type, ei->dst_type,
                                            ".edge.yml");
    return add_info((void ***)&gi->edges, &gi->n_edges, &gi->edge_files, &gi->n_edge_files, ei,
                    f, err);
}

/* ---- lookups ----------------------------------------------------------- */

static int streq(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

knut_graphar_vertex_info *knut_graphar_graph_info_vertex(const knut_graphar_graph_info *gi,
                                                         const char *type)
{
    if (!gi)
        return NULL;
    for (size_t i = 0; i < gi->n_vertices; i++)
        if (streq(gi->vertices[i]->type, type))
            return gi->vertices[i];
    return NULL;
}

knut_graphar_edge_info *knut_graphar_graph_info_edge(const knut_graphar_graph_info *gi,
                                                     const char *src_type,
                                                     const char *edge_type,
                                                     const char *dst_type)
{
    if (!gi)
        return NULL;
    for (size_t i = 0; i < gi->n_edges; i++) {
        knut_graphar_edge_info *e = gi->edges[i];
        if (streq(e->src_type, src_type) && streq(e->edge_type, edge_type) &&
            streq(e->dst_type, dst_type))
            return e;
    }
    return NULL;
}

static const knut_graphar_property *find_property(const knut_graphar_property_group *groups,
                                                  size_t n, const char *name,
                                                  const knut_graphar_property_group **group_out)
{
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < groups[i].n_props; k++) {
            if (streq(groups[i].props[k].name, name)) {
                if (group_out)
                    *group_out = &groups[i];
                return &groups[i].props[k];
            }
        }
    }
    if (group_out)
        *group_out = NULL;
    return NULL;
}

const knut_graphar_property *
knut_graphar_vertex_info_property(const knut_graphar_vertex_info *vi, const char *name,
                                  const knut_graphar_property_group **group_out)
{
    if (!vi) {
        if (group_out)
            *group_out = NULL;
        return NULL;
    }
    return find_property(vi->groups, vi->n_groups, name, group_out);
}

const knut_graphar_property *
knut_graphar_edge_info_property(const knut_graphar_edge_info *ei, const char *name,
                                const knut_graphar_property_group **group_out)
{
    if (!ei) {
        if (group_out)
            *group_out = NULL;
        return NULL;
    }
    return find_property(ei->groups, ei->n_groups, name, group_out);
}

const knut_graphar_adj_list *knut_graphar_edge_info_adj_list(const knut_graphar_edge_info *ei,
                                                             knut_graphar_adj_list_type type)
{
    if (!ei)
        return NULL;
    for (size_t i = 0; i < ei->n_adj_lists; i++)
        if (ei->adj_lists[i].type == type)
            return &ei->adj_lists[i];
    return NULL;
}
