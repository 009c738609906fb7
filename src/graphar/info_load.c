/*
 * Vertex and edge info loading: walks a config tree (core's YAML loader,
 * which keeps file:line:col on every node) into the info structs, applying
 * the reference C++ defaults. Structural faults (missing required fields,
 * wrong kinds, unknown spellings, chunk sizes <= 0) are errors naming the
 * file, position and field path; faults the reference loads are kept for
 * the validator, and the legacy pre-v0.13 key names are read with a warning.
 */
#include "graphar_int.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- context helpers --------------------------------------------------- */

knut_status knut_graphar__fail(knut_error *err, knut_status code, const knut_conf *n,
                               const char *field, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return knut_error_set_at(err, code, knut_conf_file(n), knut_conf_line(n), knut_conf_col(n),
                             "%s: %s", field, msg);
}

static knut_status oom(knut_error *err)
{
    return knut_error_set(err, KNUT_ENOMEM, "graphar: out of memory");
}

/* Present means: there, and not a YAML null (`key:` or `key: ~`). */
static const knut_conf *present(const knut_conf *map, const char *key)
{
    const knut_conf *n = knut_conf_get(map, key);
    return n && knut_conf_kind_of(n) != KNUT_CONF_NULL ? n : NULL;
}

knut_status knut_graphar__get_str(const knut_conf *map, const char *key, const char *field,
                                  int required, char **out, knut_error *err)
{
    *out = NULL;
    const knut_conf *n = present(map, key);
    if (!n) {
        if (required)
            return knut_graphar__fail(err, KNUT_ENOTFOUND, map, field,
                                      "missing required field");
        return KNUT_OK;
    }
    if (knut_conf_kind_of(n) != KNUT_CONF_SCALAR)
        return knut_graphar__fail(err, KNUT_EINVAL, n, field, "expected a string, got %s",
                                  knut_conf_kind_name(knut_conf_kind_of(n)));
    if (!(*out = strdup(knut_conf_str(n))))
        return oom(err);
    return KNUT_OK;
}

knut_status knut_graphar__get_strv(const knut_conf *map, const char *key, const char *field,
                                   char ***out, size_t *n_out, knut_error *err)
{
    *out = NULL;
    *n_out = 0;
    const knut_conf *n = present(map, key);
    if (!n)
        return KNUT_OK;
    if (knut_conf_kind_of(n) != KNUT_CONF_SEQ)
        return knut_graphar__fail(err, KNUT_EINVAL, n, field, "expected a list, got %s",
                                  knut_conf_kind_name(knut_conf_kind_of(n)));
    size_t len = knut_conf_len(n);
    if (len > KNUT_GRAPHAR_MAX_ITEMS)
        return knut_graphar__fail(err, KNUT_ETOOBIG, n, field, "more than %d items",
                                  KNUT_GRAPHAR_MAX_ITEMS);
    char **v = NULL;
    size_t nv = 0;
    knut_status st = KNUT_OK;
    for (size_t i = 0; i < len; i++) {
        const knut_conf *item = knut_conf_at(n, i);
        if (knut_conf_kind_of(item) != KNUT_CONF_SCALAR) {
            st = knut_graphar__fail(err, KNUT_EINVAL, item, field,
                                    "item %zu: expected a string, got %s", i,
                                    knut_conf_kind_name(knut_conf_kind_of(item)));
            goto cleanup;
        }
        char **slot = knut_graphar__push((void **)&v, &nv, sizeof *slot);
        if (!slot || !(*slot = strdup(knut_conf_str(item)))) {
            st = oom(err);
            goto cleanup;
        }
        nv++;
    }
    *out = v;
    *n_out = nv;
    v = NULL;
cleanup:
    knut_graphar__strv_free(v, nv);
    return st;
}

/* mini-yaml's true words plus the usual false ones: anything else is
 * refused rather than silently read as false (as the reference does). */
static int parse_bool(const char *s, int *out)
{
    static const char *const yes[] = {"true", "yes", "on", "1"};
    static const char *const no[] = {"false", "no", "off", "0"};
    for (size_t i = 0; i < 4; i++) {
        if (strcasecmp(s, yes[i]) == 0) {
            *out = 1;
            return 1;
        }
        if (strcasecmp(s, no[i]) == 0) {
            *out = 0;
            return 1;
        }
    }
    return 0;
}

knut_status knut_graphar__get_bool(const knut_conf *map, const char *key, const char *field,
                                   int def, int *out, int *given, knut_error *err)
{
    const knut_conf *n = present(map, key);
    *out = def;
    if (given)
        *given = n != NULL;
    if (!n)
        return KNUT_OK;
    const char *s = knut_conf_str(n);
    if (!s || !parse_bool(s, out))
        return knut_graphar__fail(err, KNUT_EINVAL, n, field, "expected true or false, got %s%.40s%s",
                                  s ? "'" : "", s ? s : knut_conf_kind_name(knut_conf_kind_of(n)),
                                  s ? "'" : "");
    return KNUT_OK;
}

/* Required positive int64 (chunk sizes). */
static knut_status get_chunk_size(const knut_conf *map, const char *key, int64_t *out,
                                  knut_error *err)
{
    const knut_conf *n = present(map, key);
    if (!n)
        return knut_graphar__fail(err, KNUT_ENOTFOUND, map, key, "missing required field");
    int64_t v = 0;
    if (knut_conf_get_i64(map, key, &v, NULL) != KNUT_OK) {
        const char *s = knut_conf_str(n);
        return knut_graphar__fail(err, KNUT_EINVAL, n, key, "expected an integer, got %s%.40s%s",
                                  s ? "'" : "", s ? s : knut_conf_kind_name(knut_conf_kind_of(n)),
                                  s ? "'" : "");
    }
    if (v <= 0)
        return knut_graphar__fail(err, KNUT_EINVAL, n, key, "must be > 0, got %lld",
                                  (long long)v);
    *out = v;
    return KNUT_OK;
}

static knut_status get_version(const knut_conf *map, knut_graphar_version *v, knut_error *err)
{
    const knut_conf *n = present(map, "version");
    if (!n)
        return KNUT_OK;
    const char *s = knut_conf_str(n);
    if (!s)
        return knut_graphar__fail(err, KNUT_EINVAL, n, "version", "expected a string, got %s",
                                  knut_conf_kind_name(knut_conf_kind_of(n)));
    knut_error sub = KNUT_ERROR_INIT;
    knut_status st = knut_graphar_version_parse(v, s, &sub);
    if (st != KNUT_OK)
        return knut_graphar__fail(err, st, n, "version", "%s", sub.message);
    return KNUT_OK;
}

static knut_status get_file_type(const knut_conf *map, const char *field,
                                 knut_graphar_file_type *out, knut_error *err)
{
    char *s = NULL;
    knut_status st = knut_graphar__get_str(map, "file_type", field, 1, &s, err);
    if (st != KNUT_OK)
        return st;
    knut_error sub = KNUT_ERROR_INIT;
    st = knut_graphar_file_type_parse(s, out, &sub);
    if (st != KNUT_OK)
        st = knut_graphar__fail(err, st, knut_conf_get(map, "file_type"), field, "%s",
                                sub.message);
    free(s);
    return st;
}

static void pos_of(knut_graphar_pos *pos, const knut_conf *n)
{
    pos->line = knut_conf_line(n);
    pos->col = knut_conf_col(n);
}

/* ---- properties and groups --------------------------------------------- */

static knut_status property_from_conf(knut_graphar_property *p, const knut_conf *n,
                                      const char *at, int is_edge, knut_error *err)
{
    char field[256];
    knut_status st;
    pos_of(&p->pos, n);
    if (knut_conf_kind_of(n) != KNUT_CONF_MAP)
        return knut_graphar__fail(err, KNUT_EINVAL, n, at, "expected a map, got %s",
                                  knut_conf_kind_name(knut_conf_kind_of(n)));
    snprintf(field, sizeof field, "%s.name", at);
    if ((st = knut_graphar__get_str(n, "name", field, 1, &p->name, err)) != KNUT_OK)
        return st;
    if (!*p->name)
        return knut_graphar__fail(err, KNUT_EINVAL, knut_conf_get(n, "name"), field,
                                  "must not be empty");
    snprintf(field, sizeof field, "%s.data_type", at);
    if ((st = knut_graphar__get_str(n, "data_type", field, 1, &p->type_text, err)) != KNUT_OK)
        return st;
    knut_error sub = KNUT_ERROR_INIT;
    if (knut_graphar_type_parse(p->type_text, &p->type, &p->elem_type, &sub) != KNUT_OK)
        return knut_graphar__fail(err, KNUT_EINVAL, knut_conf_get(n, "data_type"), field, "%s",
                                  sub.message);
    snprintf(field, sizeof field, "%s.is_primary", at);
    if ((st = knut_graphar__get_bool(n, "is_primary", field, 0, &p->is_primary, NULL, err)))
        return st;
    snprintf(field, sizeof field, "%s.is_nullable", at);
    if ((st = knut_graphar__get_bool(n, "is_nullable", field, 1, &p->nullable_declared,
                                     &p->nullable_given, err)))
        return st;
    /* The reference's Property constructor: a primary key is never null. */
    p->is_nullable = !p->is_primary && p->nullable_declared;
    p->cardinality = KNUT_GRAPHAR_CARD_SINGLE;
    snprintf(field, sizeof field, "%s.cardinality", at);
    char *card = NULL;
    if ((st = knut_graphar__get_str(n, "cardinality", field, 0, &card, err)) != KNUT_OK)
        return st;
    if (card) {
        st = knut_graphar_cardinality_parse(card, &p->cardinality, &sub);
        free(card);
        if (st != KNUT_OK)
            return knut_graphar__fail(err, st, knut_conf_get(n, "cardinality"), field, "%s",
                                      sub.message);
        /* EdgeInfo::Load refuses this outright (YamlError). */
        if (is_edge && p->cardinality != KNUT_GRAPHAR_CARD_SINGLE)
            return knut_graphar__fail(err, KNUT_EINVAL, knut_conf_get(n, "cardinality"), field,
                                      "'%s' cardinality is not allowed on an edge property "
                                      "(only single)",
                                      knut_graphar_cardinality_name(p->cardinality));
    }
    return KNUT_OK;
}

static knut_status group_from_conf(knut_graphar_property_group *g, const knut_conf *n,
                                   const char *at, int is_edge, knut_error *err)
{
    char field[192];
    knut_status st;
    pos_of(&g->pos, n);
    if (knut_conf_kind_of(n) != KNUT_CONF_MAP)
        return knut_graphar__fail(err, KNUT_EINVAL, n, at, "expected a map, got %s",
                                  knut_conf_kind_name(knut_conf_kind_of(n)));
    snprintf(field, sizeof field, "%s.file_type", at);
    if ((st = get_file_type(n, field, &g->file_type, err)) != KNUT_OK)
        return st;
    snprintf(field, sizeof field, "%s.prefix", at);
    if ((st = knut_graphar__get_str(n, "prefix", field, 0, &g->prefix, err)) != KNUT_OK)
        return st;
    g->prefix_given = g->prefix && *g->prefix;
    /* An absent `properties` leaves an empty group: the reference loads it
     * and only IsValidated() rejects it, so the validator reports it. */
    const knut_conf *props = present(n, "properties");
    snprintf(field, sizeof field, "%s.properties", at);
    if (props && knut_conf_kind_of(props) != KNUT_CONF_SEQ)
        return knut_graphar__fail(err, KNUT_EINVAL, props, field, "expected a list, got %s",
                                  knut_conf_kind_name(knut_conf_kind_of(props)));
    size_t len = knut_conf_len(props);
    if (len > KNUT_GRAPHAR_MAX_ITEMS)
        return knut_graphar__fail(err, KNUT_ETOOBIG, props, field, "more than %d items",
                                  KNUT_GRAPHAR_MAX_ITEMS);
    for (size_t i = 0; i < len; i++) {
        knut_graphar_property *p =
            knut_graphar__push((void **)&g->props, &g->n_props, sizeof *p);
        if (!p)
            return oom(err);
        g->n_props++; /* counted first so the group's reset frees a partial one */
        char pf[224];
        snprintf(pf, sizeof pf, "%s[%zu]", field, i);
        if ((st = property_from_conf(p, knut_conf_at(props, i), pf, is_edge, err)) != KNUT_OK)
            return st;
    }
    if (!g->prefix_given && knut_graphar__group_default_prefix(g) != KNUT_OK)
        return oom(err);
    return KNUT_OK;
}

static knut_status groups_from_conf(knut_graphar_property_group **groups, size_t *n_groups,
                                    const knut_conf *map, const char *key, int is_edge,
                                    knut_error *err)
{
    const knut_conf *seq = present(map, key);
    if (!seq)
        return KNUT_OK;
    if (knut_conf_kind_of(seq) != KNUT_CONF_SEQ)
        return knut_graphar__fail(err, KNUT_EINVAL, seq, key, "expected a list, got %s",
                                  knut_conf_kind_name(knut_conf_kind_of(seq)));
    size_t len = knut_conf_len(seq);
    if (len > KNUT_GRAPHAR_MAX_ITEMS)
        return knut_graphar__fail(err, KNUT_ETOOBIG, seq, key, "more than %d items",
                                  KNUT_GRAPHAR_MAX_ITEMS);
    for (size_t i = 0; i < len; i++) {
        knut_graphar_property_group *g =
            knut_graphar__push((void **)groups, n_groups, sizeof *g);
        if (!g)
            return oom(err);
        (*n_groups)++;
        char at[64];
        snprintf(at, sizeof at, "%s[%zu]", key, i);
        knut_status st = group_from_conf(g, knut_conf_at(seq, i), at, is_edge, err);
        if (st != KNUT_OK)
            return st;
    }
    return KNUT_OK;
}

/* ---- legacy keys ------------------------------------------------------- */

/*
 * Reads key, else its pre-v0.13 name (warning once per file), else fails.
 * The reference at v0.13 reads only the new names; files in the official
 * corpus (java/) still use the old ones, so reading them keeps those usable.
 */
static knut_status get_type_name(const knut_conf *root, const char *key, const char *legacy,
                                 char **out, int *legacy_used, knut_error *err)
{
    knut_status st = knut_graphar__get_str(root, key, key, 0, out, err);
    if (st != KNUT_OK)
        return st;
    const char *used = key;
    if (!*out) {
        if ((st = knut_graphar__get_str(root, legacy, legacy, 0, out, err)) != KNUT_OK)
            return st;
        if (!*out)
            return knut_graphar__fail(err, KNUT_ENOTFOUND, root, key, "missing required field");
        used = legacy;
        if (!*legacy_used) {
            const knut_conf *n = knut_conf_get(root, legacy);
            KNUT_LOG(KNUT_LOG_WARN, KNUT_GRAPHAR_LOG,
                     "%s:%d:%d: legacy key '%s' read as '%s' (renamed in GraphAr v0.13)",
                     knut_conf_file(n), knut_conf_line(n), knut_conf_col(n), legacy, key);
        }
        *legacy_used = 1;
    }
    if (!**out)
        return knut_graphar__fail(err, KNUT_EINVAL, knut_conf_get(root, used), used,
                                  "must not be empty");
    return KNUT_OK;
}

static knut_status check_root(const knut_conf *root, const char *what, knut_error *err)
{
    if (knut_conf_kind_of(root) != KNUT_CONF_MAP)
        return knut_graphar__fail(err, KNUT_EINVAL, root, "(document)",
                                  "a %s info must be a map, got %s", what,
                                  knut_conf_kind_name(knut_conf_kind_of(root)));
    return KNUT_OK;
}

/* ---- vertex ------------------------------------------------------------ */

knut_status knut_graphar__vertex_from_conf(knut_graphar_vertex_info **out,
                                           const knut_conf *root, const char *source,
                                           knut_error *err)
{
    *out = NULL;
    knut_status st = check_root(root, "vertex", err);
    if (st != KNUT_OK)
        return st;
    knut_graphar_vertex_info *vi = calloc(1, sizeof *vi);
    if (!vi)
        return oom(err);
    if ((st = get_type_name(root, "type", "label", &vi->type, &vi->legacy_keys, err)))
        goto cleanup;
    if ((st = get_chunk_size(root, "chunk_size", &vi->chunk_size, err)))
        goto cleanup;
    if ((st = knut_graphar__get_str(root, "prefix", "prefix", 0, &vi->prefix, err)))
        goto cleanup;
    vi->prefix_given = vi->prefix && *vi->prefix;
    if (!vi->prefix_given) {
        free(vi->prefix);
        if (!(vi->prefix = knut_graphar__vertex_default_prefix(vi->type))) {
            st = oom(err);
            goto cleanup;
        }
    }
    if ((st = knut_graphar__get_strv(root, "labels", "labels", &vi->labels, &vi->n_labels, err)))
        goto cleanup;
    if ((st = get_version(root, &vi->version, err)))
        goto cleanup;
    if ((st = groups_from_conf(&vi->groups, &vi->n_groups, root, "property_groups", 0, err)))
        goto cleanup;
    if (source && !(vi->source = strdup(source))) {
        st = oom(err);
        goto cleanup;
    }
    *out = vi;
    vi = NULL;
cleanup:
    knut_graphar_vertex_info_free(vi);
    return st;
}

/* ---- edge -------------------------------------------------------------- */

static knut_status adj_list_from_conf(knut_graphar_adj_list *al, const knut_conf *n,
                                      const char *at, knut_error *err)
{
    char field[96];
    knut_status st;
    pos_of(&al->pos, n);
    if (knut_conf_kind_of(n) != KNUT_CONF_MAP)
        return knut_graphar__fail(err, KNUT_EINVAL, n, at, "expected a map, got %s",
                                  knut_conf_kind_name(knut_conf_kind_of(n)));
    int ordered = 0;
    snprintf(field, sizeof field, "%s.ordered", at);
    if (!present(n, "ordered"))
        return knut_graphar__fail(err, KNUT_ENOTFOUND, n, field, "missing required field");
    if ((st = knut_graphar__get_bool(n, "ordered", field, 0, &ordered, NULL, err)))
        return st;
    snprintf(field, sizeof field, "%s.aligned_by", at);
    if ((st = knut_graphar__get_str(n, "aligned_by", field, 1, &al->aligned_by_text, err)))
        return st;
    int by_src = strcmp(al->aligned_by_text, "src") == 0;
    if (!by_src && strcmp(al->aligned_by_text, "dst") != 0) {
        const knut_conf *a = knut_conf_get(n, "aligned_by");
        KNUT_LOG(KNUT_LOG_WARN, KNUT_GRAPHAR_LOG,
                 "%s:%d:%d: %s: '%.40s' is neither src nor dst; read as dst, as the reference "
                 "does",
                 knut_conf_file(a), knut_conf_line(a), knut_conf_col(a), field,
                 al->aligned_by_text);
    }
    al->type = knut_graphar_adj_list_type_of(ordered, by_src);
    snprintf(field, sizeof field, "%s.file_type", at);
    if ((st = get_file_type(n, field, &al->file_type, err)))
        return st;
    snprintf(field, sizeof field, "%s.prefix", at);
    if ((st = knut_graphar__get_str(n, "prefix", field, 0, &al->prefix, err)))
        return st;
    al->prefix_given = al->prefix && *al->prefix;
    if (!al->prefix_given) {
        free(al->prefix);
        const char *name = knut_graphar_adj_list_type_name(al->type);
        size_t len = strlen(name);
        if (!(al->prefix = malloc(len + 2)))
            return oom(err);
        memcpy(al->prefix, name, len);
        memcpy(al->prefix + len, "/", 2);
    }
    const knut_conf *legacy = present(n, "property_groups");
    if (legacy) {
        /* Pre-v0.11 layout: the reference ignores these groups silently. */
        al->legacy_groups = 1;
        KNUT_LOG(KNUT_LOG_WARN, KNUT_GRAPHAR_LOG,
                 "%s:%d:%d: %s.property_groups: legacy per-adj-list property groups are ignored "
                 "(edge-level property_groups apply since GraphAr v0.11)",
                 knut_conf_file(legacy), knut_conf_line(legacy), knut_conf_col(legacy), at);
    }
    return KNUT_OK;
}

knut_status knut_graphar__edge_from_conf(knut_graphar_edge_info **out, const knut_conf *root,
                                         const char *source, knut_error *err)
{
    *out = NULL;
    knut_status st = check_root(root, "edge", err);
    if (st != KNUT_OK)
        return st;
    knut_graphar_edge_info *ei = calloc(1, sizeof *ei);
    if (!ei)
        return oom(err);
    if ((st = get_type_name(root, "src_type", "src_label", &ei->src_type, &ei->legacy_keys, err)))
        goto cleanup;
    if ((st = get_type_name(root, "edge_type", "edge_label", &ei->edge_type, &ei->legacy_keys,
                            err)))
        goto cleanup;
    if ((st = get_type_name(root, "dst_type", "dst_label", &ei->dst_type, &ei->legacy_keys, err)))
        goto cleanup;
    if ((st = get_chunk_size(root, "chunk_size", &ei->chunk_size, err)) ||
        (st = get_chunk_size(root, "src_chunk_size", &ei->src_chunk_size, err)) ||
        (st = get_chunk_size(root, "dst_chunk_size", &ei->dst_chunk_size, err)))
        goto cleanup;
    if ((st = knut_graphar__get_bool(root, "directed", "directed", 0, &ei->directed,
                                     &ei->directed_given, err)))
        goto cleanup;
    if ((st = knut_graphar__get_str(root, "prefix", "prefix", 0, &ei->prefix, err)))
        goto cleanup;
    ei->prefix_given = ei->prefix && *ei->prefix;
    if (!ei->prefix_given) {
        free(ei->prefix);
        ei->prefix = knut_graphar__edge_default_prefix(ei->src_type, ei->edge_type, ei->dst_type);
        if (!ei->prefix) {
            st = oom(err);
            goto cleanup;
        }
    }
    if ((st = get_version(root, &ei->version, err)))
        goto cleanup;
    /* An absent or empty adj_lists loads (the reference's IsValidated()
     * rejects it later); the validator reports it. */
    const knut_conf *adj = present(root, "adj_lists");
    if (adj && knut_conf_kind_of(adj) != KNUT_CONF_SEQ) {
        st = knut_graphar__fail(err, KNUT_EINVAL, adj, "adj_lists", "expected a list, got %s",
                                knut_conf_kind_name(knut_conf_kind_of(adj)));
        goto cleanup;
    }
    size_t n_adj = knut_conf_len(adj);
    if (n_adj > KNUT_GRAPHAR_MAX_ITEMS) {
        st = knut_graphar__fail(err, KNUT_ETOOBIG, adj, "adj_lists", "more than %d items",
                                KNUT_GRAPHAR_MAX_ITEMS);
        goto cleanup;
    }
    for (size_t i = 0; i < n_adj; i++) {
        knut_graphar_adj_list *al =
            knut_graphar__push((void **)&ei->adj_lists, &ei->n_adj_lists, sizeof *al);
        if (!al) {
            st = oom(err);
            goto cleanup;
        }
        ei->n_adj_lists++;
        char at[48];
        snprintf(at, sizeof at, "adj_lists[%zu]", i);
        if ((st = adj_list_from_conf(al, knut_conf_at(adj, i), at, err)))
            goto cleanup;
    }
    if ((st = groups_from_conf(&ei->groups, &ei->n_groups, root, "property_groups", 1, err)))
        goto cleanup;
    if (source && !(ei->source = strdup(source))) {
        st = oom(err);
        goto cleanup;
    }
    *out = ei;
    ei = NULL;
cleanup:
    knut_graphar_edge_info_free(ei);
    return st;
}

/* ---- public single-file loaders ---------------------------------------- */

knut_status knut_graphar_vertex_load_yaml(knut_graphar_vertex_info **out, const char *text,
                                          size_t len, const char *name, knut_error *err)
{
    KNUT_ASSERT_ARG(err, out);
    *out = NULL;
    knut_conf *root = NULL;
    knut_status st = knut_conf_load_yaml(&root, text, len, name, err);
    if (st == KNUT_OK)
        st = knut_graphar__vertex_from_conf(out, root, name, err);
    knut_conf_free(root);
    return st;
}

knut_status knut_graphar_edge_load_yaml(knut_graphar_edge_info **out, const char *text,
                                        size_t len, const char *name, knut_error *err)
{
    KNUT_ASSERT_ARG(err, out);
    *out = NULL;
    knut_conf *root = NULL;
    knut_status st = knut_conf_load_yaml(&root, text, len, name, err);
    if (st == KNUT_OK)
        st = knut_graphar__edge_from_conf(out, root, name, err);
    knut_conf_free(root);
    return st;
}

knut_status knut_graphar_vertex_load(knut_graphar_vertex_info **out, const char *path,
                                     knut_error *err)
{
    KNUT_ASSERT_ARG(err, out && path);
    *out = NULL;
    knut_conf *root = NULL;
    knut_status st = knut_conf_load_file(&root, path, err);
    if (st == KNUT_OK)
        st = knut_graphar__vertex_from_conf(out, root, path, err);
    knut_conf_free(root);
    return st;
}

knut_status knut_graphar_edge_load(knut_graphar_edge_info **out, const char *path,
                                   knut_error *err)
{
    KNUT_ASSERT_ARG(err, out && path);
    *out = NULL;
    knut_conf *root = NULL;
    knut_status st = knut_conf_load_file(&root, path, err);
    if (st == KNUT_OK)
        st = knut_graphar__edge_from_conf(out, root, path, err);
    knut_conf_free(root);
    return st;
}
