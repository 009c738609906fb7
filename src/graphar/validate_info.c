/*
 * Info-level rules of the GraphAr validator: what the reference's
 * IsValidated() and `graphar check` refuse (errors), what the official
 * corpus does that the reference accepts (warnings), and a walk over the
 * raw YAML tree of a file the loader refused, so that the issue names the
 * specific rule (type.unknown, version.bad, ...) and its line.
 */
#include "validate_int.h"

#include <stdlib.h>
#include <string.h>

/* ---- helpers ----------------------------------------------------------- */

static int ends_with(const char *s, const char *suffix)
{
    size_t ls = strlen(s), lx = strlen(suffix);
    return ls >= lx && strcmp(s + ls - lx, suffix) == 0;
}

static int lacks_slash(const char *prefix, int given)
{
    return given && prefix && *prefix && prefix[strlen(prefix) - 1] != '/';
}

static const char *const reserved[] = {"_graphArVertexIndex", "_graphArSrcIndex",
                                       "_graphArDstIndex", "_graphArOffset"};

static int is_reserved(const char *name)
{
    for (size_t i = 0; i < sizeof reserved / sizeof reserved[0]; i++)
        if (strcmp(name, reserved[i]) == 0)
            return 1;
    return 0;
}

/* One property seen in a vertex or edge, for the duplicate check. */
typedef struct prop_ref {
    const char *name;
    size_t group, index;
    const knut_graphar_pos *pos;
} prop_ref;

static int cmp_prop_ref(const void *a, const void *b)
{
    const prop_ref *x = a, *y = b;
    int r = strcmp(x->name, y->name);
    if (r)
        return r;
    /* Stable by position, so the later one is reported. */
    if (x->group != y->group)
        return x->group < y->group ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Equal strings, NULL counting as "". */
static int gv_streq_null(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

static int cmp_str_ptr(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* ---- property groups --------------------------------------------------- */

static void check_groups(gv_ctx *c, const char *file, const knut_graphar_property_group *groups,
                         size_t n_groups, int is_edge, size_t *n_primary)
{
    char field[160];
    size_t total = 0;
    for (size_t g = 0; g < n_groups; g++)
        total += groups[g].n_props;
    prop_ref *refs = total ? calloc(total, sizeof *refs) : NULL;
    if (total && !refs) {
        knut_graphar__validate_fail(c, KNUT_ENOMEM, NULL);
        return;
    }
    size_t nr = 0;
    *n_primary = 0;
    for (size_t g = 0; g < n_groups && !gv_done(c); g++) {
        const knut_graphar_property_group *pg = &groups[g];
        snprintf(field, sizeof field, "property_groups[%zu]", g);
        if (pg->n_props == 0)
            knut_graphar__validate_issue(c, GV_GROUP_EMPTY, file, &pg->pos, field,
                                         "property group has no properties");
        if (pg->file_type == KNUT_GRAPHAR_FILE_JSON)
            knut_graphar__validate_issue(
                c, GV_FILE_TYPE_JSON, file, &pg->pos, field,
                "file_type json is not valid for the reference (csv, parquet, orc)");
        if (lacks_slash(pg->prefix, pg->prefix_given))
            knut_graphar__validate_issue(c, GV_PREFIX_NO_SLASH, file, &pg->pos, field,
                                         "prefix '%s' does not end in '/'", pg->prefix);
        for (size_t k = 0; k < pg->n_props; k++) {
            const knut_graphar_property *p = &pg->props[k];
            snprintf(field, sizeof field, "property_groups[%zu].properties[%zu]", g, k);
            if (!p->name || !*p->name) {
                knut_graphar__validate_issue(c, GV_FIELD_MISSING, file, &p->pos, field,
                                             "property has no name");
                continue;
            }
            refs[nr++] = (prop_ref){p->name, g, k, &p->pos};
            if (is_reserved(p->name))
                knut_graphar__validate_issue(c, GV_PROPERTY_RESERVED, file, &p->pos, field,
                                             "'%s' is a reserved column name", p->name);
            int multi = p->type == KNUT_GRAPHAR_TYPE_LIST ||
                        p->cardinality != KNUT_GRAPHAR_CARD_SINGLE;
            if (pg->file_type == KNUT_GRAPHAR_FILE_CSV && multi)
                knut_graphar__validate_issue(
                    c, GV_CSV_LIST, file, &p->pos, field,
                    "'%s' (%s, cardinality %s) cannot be stored in CSV", p->name,
                    p->type_text ? p->type_text : knut_graphar_type_name(p->type),
                    knut_graphar_cardinality_name(p->cardinality));
            if (is_edge && p->cardinality != KNUT_GRAPHAR_CARD_SINGLE)
                knut_graphar__validate_issue(
                    c, GV_CARDINALITY_EDGE, file, &p->pos, field,
                    "'%s' has cardinality %s; edge properties must be single", p->name,
                    knut_graphar_cardinality_name(p->cardinality));
            if (p->is_primary) {
                (*n_primary)++;
                if (p->nullable_given && p->nullable_declared)
                    knut_graphar__validate_issue(
                        c, GV_PROPERTY_PRIMARY_NULLABLE, file, &p->pos, field,
                        "primary key '%s' declares is_nullable: true (read as false)", p->name);
            }
        }
    }
    if (nr > 1)
        qsort(refs, nr, sizeof *refs, cmp_prop_ref);
    for (size_t i = 1; i < nr && !gv_done(c); i++) {
        if (strcmp(refs[i].name, refs[i - 1].name) != 0)
            continue;
        snprintf(field, sizeof field, "property_groups[%zu].properties[%zu]", refs[i].group,
                 refs[i].index);
        knut_graphar__validate_issue(
            c, GV_PROPERTY_DUPLICATE, file, refs[i].pos, field,
            "property '%s' is already defined at property_groups[%zu].properties[%zu]",
            refs[i].name, refs[i - 1].group, refs[i - 1].index);
    }
    free(refs);
}

/* The position of the n-th primary key (for the "several" warning). */
static const knut_graphar_property *nth_primary(const knut_graphar_property_group *groups,
                                                size_t n_groups, size_t n, size_t *g_out,
                                                size_t *k_out)
{
    size_t seen = 0;
    for (size_t g = 0; g < n_groups; g++)
        for (size_t k = 0; k < groups[g].n_props; k++)
            if (groups[g].props[k].is_primary && seen++ == n) {
                *g_out = g;
                *k_out = k;
                return &groups[g].props[k];
            }
    return NULL;
}

/* ---- vertex and edge infos --------------------------------------------- */

static void check_version(gv_ctx *c, const char *file, const knut_graphar_version *v)
{
    if (!v->present)
        knut_graphar__validate_issue(c, GV_VERSION_MISSING, file, NULL, "version",
                                     "no version (gar/v1 expected)");
}

static void check_vertex(gv_ctx *c, const knut_graphar_vertex_info *vi)
{
    const char *file = vi->source ? vi->source : vi->type;
    if (vi->legacy_keys)
        knut_graphar__validate_issue(
            c, GV_INFO_LEGACY_KEYS, file, NULL, "label",
            "legacy key 'label' (renamed 'type' in GraphAr v0.13): the reference reads "
            "an empty type and rejects the vertex");
    if (!vi->type || !*vi->type)
        knut_graphar__validate_issue(c, GV_FIELD_MISSING, file, NULL, "type",
                                     "vertex type is empty");
    if (vi->chunk_size <= 0)
        knut_graphar__validate_issue(c, GV_CHUNK_SIZE_INVALID, file, NULL, "chunk_size",
                                     "must be > 0, got %lld", (long long)vi->chunk_size);
    if (lacks_slash(vi->prefix, vi->prefix_given))
        knut_graphar__validate_issue(c, GV_PREFIX_NO_SLASH, file, NULL, "prefix",
                                     "prefix '%s' does not end in '/'", vi->prefix);
    check_version(c, file, &vi->version);
    if (vi->n_labels > 1) {
        const char **sorted = malloc(vi->n_labels * sizeof *sorted);
        if (!sorted) {
            knut_graphar__validate_fail(c, KNUT_ENOMEM, NULL);
            return;
        }
        memcpy(sorted, vi->labels, vi->n_labels * sizeof *sorted);
        qsort(sorted, vi->n_labels, sizeof *sorted, cmp_str_ptr);
        for (size_t i = 1; i < vi->n_labels; i++)
            if (strcmp(sorted[i], sorted[i - 1]) == 0 && (i < 2 || strcmp(sorted[i], sorted[i - 2])))
                knut_graphar__validate_issue(c, GV_LABEL_DUPLICATE, file, NULL, "labels",
                                             "label '%s' is listed twice", sorted[i]);
        free(sorted);
    }
    size_t n_primary = 0, total = 0;
    check_groups(c, file, vi->groups, vi->n_groups, 0, &n_primary);
    for (size_t g = 0; g < vi->n_groups; g++)
        total += vi->groups[g].n_props;
    if (n_primary > 1) {
        size_t g = 0, k = 0;
        const knut_graphar_property *p = nth_primary(vi->groups, vi->n_groups, 1, &g, &k);
        char field[96];
        snprintf(field, sizeof field, "property_groups[%zu].properties[%zu]", g, k);
        knut_graphar__validate_issue(
            c, GV_PROPERTY_PRIMARY_MULTIPLE, file, p ? &p->pos : NULL, field,
            "%zu primary keys in vertex type '%s' (the reference allows it; its importer "
            "and most readers expect one)",
            n_primary, vi->type ? vi->type : "");
    } else if (n_primary == 0 && total > 0) {
        knut_graphar__validate_issue(c, GV_PROPERTY_PRIMARY_MISSING, file, NULL, "property_groups",
                                     "vertex type '%s' has no primary key",
                                     vi->type ? vi->type : "");
    }
}

static ptrdiff_t find_vertex(const gv_ctx *c, const char *type)
{
    for (size_t i = 0; i < c->n_vertices; i++)
        if (c->vertices[i] && c->vertices[i]->type && type &&
            strcmp(c->vertices[i]->type, type) == 0)
            return (ptrdiff_t)i;
    return -1;
}

static void check_edge_endpoint(gv_ctx *c, const knut_graphar_edge_info *ei, const char *file,
                                const char *which, const char *type, int64_t chunk_size)
{
    char field[32];
    snprintf(field, sizeof field, "%s_type", which);
    ptrdiff_t v = find_vertex(c, type);
    for (size_t i = 0; v < 0 && type && i < c->n_failed_types; i++)
        if (strcmp(c->failed_types[i], type) == 0)
            return; /* its file failed to load: reported there */
    if (v < 0) {
        knut_graphar__validate_issue(c, GV_EDGE_VERTEX_TYPE_MISSING, file, NULL, field,
                                     "%s vertex type '%s' of edge '%s' is not in the graph", which,
                                     type ? type : "", ei->edge_type ? ei->edge_type : "");
        return;
    }
    const knut_graphar_vertex_info *vi = c->vertices[v];
    snprintf(field, sizeof field, "%s_chunk_size", which);
    if (chunk_size != vi->chunk_size)
        knut_graphar__validate_issue(c, GV_EDGE_CHUNK_SIZE_MISMATCH, file, NULL, field,
                                     "%lld, but vertex type '%s' has chunk_size %lld",
                                     (long long)chunk_size, vi->type, (long long)vi->chunk_size);
}

static void check_edge(gv_ctx *c, const knut_graphar_edge_info *ei)
{
    const char *file = ei->source ? ei->source : ei->edge_type;
    if (ei->legacy_keys)
        knut_graphar__validate_issue(
            c, GV_INFO_LEGACY_KEYS, file, NULL, "src_label",
            "legacy keys src_label/edge_label/dst_label (renamed *_type in GraphAr "
            "v0.13): the reference reads empty types and rejects the edge");
    const char *names[3] = {ei->src_type, ei->edge_type, ei->dst_type};
    const char *keys[3] = {"src_type", "edge_type", "dst_type"};
    for (int i = 0; i < 3; i++)
        if (!names[i] || !*names[i])
            knut_graphar__validate_issue(c, GV_FIELD_MISSING, file, NULL, keys[i],
                                         "must not be empty");
    const int64_t sizes[3] = {ei->chunk_size, ei->src_chunk_size, ei->dst_chunk_size};
    const char *skeys[3] = {"chunk_size", "src_chunk_size", "dst_chunk_size"};
    for (int i = 0; i < 3; i++)
        if (sizes[i] <= 0)
            knut_graphar__validate_issue(c, GV_CHUNK_SIZE_INVALID, file, NULL, skeys[i],
                                         "must be > 0, got %lld", (long long)sizes[i]);
    if (lacks_slash(ei->prefix, ei->prefix_given))
        knut_graphar__validate_issue(c, GV_PREFIX_NO_SLASH, file, NULL, "prefix",
                                     "prefix '%s' does not end in '/'", ei->prefix);
    check_version(c, file, &ei->version);
    if (!ei->directed_given)
        knut_graphar__validate_issue(c, GV_EDGE_DIRECTED_MISSING, file, NULL, "directed",
                                     "no 'directed' key: read as false");
    /* Only a graph knows its vertex types (`graphar check` rule). */
    if (c->gi) {
        check_edge_endpoint(c, ei, file, "src", ei->src_type, ei->src_chunk_size);
        check_edge_endpoint(c, ei, file, "dst", ei->dst_type, ei->dst_chunk_size);
    }
    if (ei->n_adj_lists == 0)
        knut_graphar__validate_issue(c, GV_ADJ_LIST_NONE, file, NULL, "adj_lists",
                                     "edge has no adj_lists");
    char field[64];
    for (size_t i = 0; i < ei->n_adj_lists; i++) {
        const knut_graphar_adj_list *al = &ei->adj_lists[i];
        snprintf(field, sizeof field, "adj_lists[%zu]", i);
        for (size_t j = 0; j < i; j++)
            if (ei->adj_lists[j].type == al->type) {
                knut_graphar__validate_issue(c, GV_ADJ_LIST_DUPLICATE, file, &al->pos, field,
                                             "adj list type %s is already adj_lists[%zu]",
                                             knut_graphar_adj_list_type_name(al->type), j);
                break;
            }
        if (al->aligned_by_text && strcmp(al->aligned_by_text, "src") != 0 &&
            strcmp(al->aligned_by_text, "dst") != 0)
            knut_graphar__validate_issue(c, GV_ADJ_LIST_ALIGNED_BY, file, &al->pos, field,
                                         "aligned_by '%s' is neither src nor dst: read as dst",
                                         al->aligned_by_text);
        if (al->legacy_groups)
            knut_graphar__validate_issue(
                c, GV_ADJ_LIST_LEGACY_GROUPS, file, &al->pos, field,
                "legacy per-adj-list property_groups are ignored (edge-level groups apply)");
        if (al->file_type == KNUT_GRAPHAR_FILE_JSON)
            knut_graphar__validate_issue(
                c, GV_FILE_TYPE_JSON, file, &al->pos, field,
                "file_type json is not valid for the reference (csv, parquet, orc)");
        if (lacks_slash(al->prefix, al->prefix_given))
            knut_graphar__validate_issue(c, GV_PREFIX_NO_SLASH, file, &al->pos, field,
                                         "prefix '%s' does not end in '/'", al->prefix);
    }
    size_t n_primary = 0;
    check_groups(c, file, ei->groups, ei->n_groups, 1, &n_primary);
}

/* ---- the graph --------------------------------------------------------- */

/* An info and its place in the graph's list, for the duplicate check. */
typedef struct info_ref {
    const char *key[3];
    const char *source;
    size_t index;
} info_ref;

static int cmp_info_ref(const void *a, const void *b)
{
    const info_ref *x = a, *y = b;
    for (int k = 0; k < 3; k++) {
        int r = strcmp(x->key[k] ? x->key[k] : "", y->key[k] ? y->key[k] : "");
        if (r)
            return r;
    }
    /* By list position, so the later file is the one reported. */
    return x->index < y->index ? -1 : x->index > y->index;
}

static int same_key(const info_ref *x, const info_ref *y)
{
    for (int k = 0; k < 3; k++)
        if (!gv_streq_null(x->key[k], y->key[k]))
            return 0;
    return 1;
}

/* Duplicates by sorting: n can be large in a hostile graph. */
static void check_duplicates(gv_ctx *c)
{
    info_ref *refs = calloc(c->n_vertices + c->n_edges + 1, sizeof *refs);
    if (!refs) {
        knut_graphar__validate_fail(c, KNUT_ENOMEM, NULL);
        return;
    }
    size_t n = 0;
    for (size_t i = 0; i < c->n_vertices; i++)
        if (c->vertices[i])
            refs[n++] = (info_ref){{c->vertices[i]->type, NULL, NULL}, c->vertices[i]->source, i};
    qsort(refs, n, sizeof *refs, cmp_info_ref);
    for (size_t i = 1; i < n; i++)
        if (same_key(&refs[i - 1], &refs[i]))
            knut_graphar__validate_issue(c, GV_VERTEX_DUPLICATE, refs[i].source, NULL, "type",
                                         "vertex type '%s' is also defined in %s", refs[i].key[0],
                                         refs[i - 1].source ? refs[i - 1].source
                                                            : "another vertex info");
    n = 0;
    for (size_t i = 0; i < c->n_edges; i++) {
        const knut_graphar_edge_info *ei = c->edges[i];
        if (ei)
            refs[n++] = (info_ref){{ei->src_type, ei->edge_type, ei->dst_type}, ei->source, i};
    }
    qsort(refs, n, sizeof *refs, cmp_info_ref);
    for (size_t i = 1; i < n; i++)
        if (same_key(&refs[i - 1], &refs[i]))
            knut_graphar__validate_issue(
                c, GV_EDGE_DUPLICATE, refs[i].source, NULL, "edge_type",
                "edge (%s, %s, %s) is also defined in %s", refs[i].key[0], refs[i].key[1],
                refs[i].key[2], refs[i - 1].source ? refs[i - 1].source : "another edge info");
    free(refs);
}

static void check_graph(gv_ctx *c)
{
    const knut_graphar_graph_info *gi = c->gi;
    const char *file = c->graph_file;
    if (!gi->name || !*gi->name)
        knut_graphar__validate_issue(c, GV_GRAPH_NAME_EMPTY, file, NULL, "name",
                                     "graph name is empty");
    if (gi->n_vertex_files == 0 && gi->n_edge_files == 0 && gi->n_vertices == 0 &&
        gi->n_edges == 0)
        knut_graphar__validate_issue(c, GV_GRAPH_EMPTY, file, NULL, "vertices",
                                     "no vertex or edge infos listed (is this a graph YAML?)");
    if (gi->prefix_given && gi->prefix && !*gi->prefix)
        knut_graphar__validate_issue(c, GV_PREFIX_EMPTY, file, NULL, "prefix",
                                     "prefix is empty (the reference rejects it)");
    if (lacks_slash(gi->prefix, gi->prefix_given))
        knut_graphar__validate_issue(
            c, GV_PREFIX_NO_SLASH, file, NULL, "prefix",
            "prefix '%s' does not end in '/' (the reference joins it to paths as is)", gi->prefix);
    check_version(c, file, &gi->version);
    char field[48];
    for (size_t i = 0; i < gi->n_vertex_files; i++)
        if (!ends_with(gi->vertex_files[i], ".yml") && !ends_with(gi->vertex_files[i], ".yaml")) {
            snprintf(field, sizeof field, "vertices[%zu]", i);
            knut_graphar__validate_issue(c, GV_FILE_EXTENSION, file, NULL, field,
                                         "'%s' is not a .yml/.yaml file", gi->vertex_files[i]);
        }
    for (size_t i = 0; i < gi->n_edge_files; i++)
        if (!ends_with(gi->edge_files[i], ".yml") && !ends_with(gi->edge_files[i], ".yaml")) {
            snprintf(field, sizeof field, "edges[%zu]", i);
            knut_graphar__validate_issue(c, GV_FILE_EXTENSION, file, NULL, field,
                                         "'%s' is not a .yml/.yaml file", gi->edge_files[i]);
        }
    check_duplicates(c);
}

void knut_graphar__validate_infos(gv_ctx *c)
{
    if (c->gi)
        check_graph(c);
    for (size_t i = 0; i < c->n_vertices && !gv_done(c); i++)
        if (c->vertices[i])
            check_vertex(c, c->vertices[i]);
    for (size_t i = 0; i < c->n_edges && !gv_done(c); i++)
        if (c->edges[i])
            check_edge(c, c->edges[i]);
}
