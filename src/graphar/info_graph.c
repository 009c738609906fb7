/*
 * Graph info loading: the graph YAML's own fields (name, prefix, labels,
 * version, extra_info, the vertex and edge file lists) and then every listed
 * vertex and edge info, resolved against the graph YAML's directory as the
 * reference C++ GraphInfo::Load does. A failure in a listed file is reported
 * with both places: the graph entry and the inner file:line:col.
 */
#include "graphar_int.h"

#include <stdlib.h>
#include <string.h>

static knut_status oom(knut_error *err)
{
    return knut_error_set(err, KNUT_ENOMEM, "graphar: out of memory");
}

/* dir with a trailing '/' ("" stays ""). */
static char *dir_with_slash(const char *dir, size_t len)
{
    int add = len > 0 && dir[len - 1] != '/';
    char *s = malloc(len + (size_t)add + 1);
    if (!s)
        return NULL;
    memcpy(s, dir, len);
    if (add)
        s[len++] = '/';
    s[len] = '\0';
    return s;
}

static knut_status extra_from_conf(knut_graphar_graph_info *gi, const knut_conf *root,
                                   knut_error *err)
{
    const knut_conf *seq = knut_conf_get(root, "extra_info");
    if (!seq || knut_conf_kind_of(seq) == KNUT_CONF_NULL)
        return KNUT_OK;
    if (knut_conf_kind_of(seq) != KNUT_CONF_SEQ)
        return knut_graphar__fail(err, KNUT_EINVAL, seq, "extra_info", "expected a list");
    size_t len = knut_conf_len(seq);
    if (len > KNUT_GRAPHAR_MAX_ITEMS)
        return knut_graphar__fail(err, KNUT_ETOOBIG, seq, "extra_info", "more than %d items",
                                  KNUT_GRAPHAR_MAX_ITEMS);
    for (size_t i = 0; i < len; i++) {
        const knut_conf *item = knut_conf_at(seq, i);
        char field[64];
        snprintf(field, sizeof field, "extra_info[%zu]", i);
        if (knut_conf_kind_of(item) != KNUT_CONF_MAP)
            return knut_graphar__fail(err, KNUT_EINVAL, item, field,
                                      "expected a map with key and value");
        knut_graphar_extra_info *e =
            knut_graphar__push((void **)&gi->extra, &gi->n_extra, sizeof *e);
        if (!e)
            return oom(err);
        gi->n_extra++;
        char kf[80], vf[80];
        snprintf(kf, sizeof kf, "%s.key", field);
        snprintf(vf, sizeof vf, "%s.value", field);
        knut_status st = knut_graphar__get_str(item, "key", kf, 1, &e->key, err);
        if (st == KNUT_OK)
            st = knut_graphar__get_str(item, "value", vf, 0, &e->value, err);
        if (st == KNUT_OK && !e->value && !(e->value = strdup("")))
            st = oom(err);
        if (st != KNUT_OK)
            return st;
    }
    return KNUT_OK;
}

/* Loads base_dir + files[i] for every listed info; kind: 'v' or 'e'. */
static knut_status load_listed(knut_graphar_graph_info *gi, const knut_conf *root, int kind,
                               knut_error *err)
{
    const char *key = kind == 'v' ? "vertices" : "edges";
    char **files = kind == 'v' ? gi->vertex_files : gi->edge_files;
    size_t n = kind == 'v' ? gi->n_vertex_files : gi->n_edge_files;
    /* Power-of-two capacity: later add_vertex/add_edge calls grow this
     * array with knut_graphar__push. */
    size_t cap = 1;
    while (cap < n)
        cap <<= 1;
    void **items = calloc(cap, sizeof *items);
    if (!items)
        return oom(err);
    if (kind == 'v')
        gi->vertices = (knut_graphar_vertex_info **)items;
    else
        gi->edges = (knut_graphar_edge_info **)items;
    const knut_conf *seq = knut_conf_get(root, key);
    size_t base_len = strlen(gi->base_dir);
    for (size_t i = 0; i < n; i++) {
        size_t flen = strlen(files[i]);
        char *path = malloc(base_len + flen + 1);
        if (!path)
            return oom(err);
        memcpy(path, gi->base_dir, base_len);
        memcpy(path + base_len, files[i], flen + 1);
        knut_status st;
        if (kind == 'v') {
            st = knut_graphar_vertex_load((knut_graphar_vertex_info **)&items[i], path, err);
            if (st == KNUT_OK)
                gi->n_vertices++;
        } else {
            st = knut_graphar_edge_load((knut_graphar_edge_info **)&items[i], path, err);
            if (st == KNUT_OK)
                gi->n_edges++;
        }
        free(path);
        if (st != KNUT_OK) {
            const knut_conf *at = knut_conf_at(seq, i);
            return knut_error_prefix(err, "%s:%d:%d: %s[%zu] '%s': ", knut_conf_file(at),
                                     knut_conf_line(at), knut_conf_col(at), key, i, files[i]);
        }
    }
    return KNUT_OK;
}

/*
 * Parses a loaded graph YAML tree. dir: the directory listed files resolve
 * against (NULL: parse only). source: remembered as gi->source.
 */
static knut_status graph_from_conf(knut_graphar_graph_info **out, const knut_conf *root,
                                   const char *source, const char *dir, size_t dir_len,
                                   knut_error *err)
{
    *out = NULL;
    if (knut_conf_kind_of(root) != KNUT_CONF_MAP)
        return knut_graphar__fail(err, KNUT_EINVAL, root, "(document)",
                                  "a graph info must be a map");
    knut_status st;
    knut_graphar_graph_info *gi = calloc(1, sizeof *gi);
    if (!gi)
        return oom(err);
    if ((st = knut_graphar__get_str(root, "name", "name", 0, &gi->name, err)))
        goto cleanup;
    /* The reference's default name. */
    if (!gi->name && !(gi->name = strdup("graph"))) {
        st = oom(err);
        goto cleanup;
    }
    if (!(gi->base_dir = dir ? dir_with_slash(dir, dir_len) : strdup(""))) {
        st = oom(err);
        goto cleanup;
    }
    /* A given prefix is kept verbatim, even "" (the reference does not
     * default it then, and the validator reports it). */
    if ((st = knut_graphar__get_str(root, "prefix", "prefix", 0, &gi->prefix, err)))
        goto cleanup;
    gi->prefix_given = gi->prefix != NULL;
    if (!gi->prefix) {
        /* A YAML path without a directory part: data sits beside it, in the
         * current directory, so "./" rather than the reference's quirk of
         * using the file name itself. */
        const char *def = dir ? (*gi->base_dir ? gi->base_dir : "./") : "";
        if (!(gi->prefix = strdup(def))) {
            st = oom(err);
            goto cleanup;
        }
    }
    if ((st = knut_graphar__get_strv(root, "labels", "labels", &gi->labels, &gi->n_labels, err)))
        goto cleanup;
    const knut_conf *v = knut_conf_get(root, "version");
    if (v && knut_conf_kind_of(v) != KNUT_CONF_NULL) {
        knut_error sub = KNUT_ERROR_INIT;
        const char *s = knut_conf_str(v);
        st = s ? knut_graphar_version_parse(&gi->version, s, &sub)
               : knut_error_set(&sub, KNUT_EINVAL, "expected a string");
        if (st != KNUT_OK) {
            st = knut_graphar__fail(err, st, v, "version", "%s", sub.message);
            goto cleanup;
        }
    }
    if ((st = extra_from_conf(gi, root, err)))
        goto cleanup;
    if ((st = knut_graphar__get_strv(root, "vertices", "vertices", &gi->vertex_files,
                                     &gi->n_vertex_files, err)) ||
        (st = knut_graphar__get_strv(root, "edges", "edges", &gi->edge_files, &gi->n_edge_files,
                                     err)))
        goto cleanup;
    if (source && !(gi->source = strdup(source))) {
        st = oom(err);
        goto cleanup;
    }
    if (dir && ((st = load_listed(gi, root, 'v', err)) || (st = load_listed(gi, root, 'e', err))))
        goto cleanup;
    *out = gi;
    gi = NULL;
cleanup:
    knut_graphar_graph_info_free(gi);
    return st;
}

knut_status knut_graphar_graph_load_yaml(knut_graphar_graph_info **out, const char *text,
                                         size_t len, const char *name, const char *dir,
                                         knut_error *err)
{
    KNUT_ASSERT_ARG(err, out);
    *out = NULL;
    knut_conf *root = NULL;
    knut_status st = knut_conf_load_yaml(&root, text, len, name, err);
    if (st == KNUT_OK)
        st = graph_from_conf(out, root, name, dir, dir ? strlen(dir) : 0, err);
    knut_conf_free(root);
    return st;
}

knut_status knut_graphar_graph_load(knut_graphar_graph_info **out, const char *path,
                                    knut_error *err)
{
    KNUT_ASSERT_ARG(err, out && path);
    *out = NULL;
    knut_conf *root = NULL;
    knut_status st = knut_conf_load_file(&root, path, err);
    if (st == KNUT_OK) {
        const char *slash = strrchr(path, '/');
        size_t dir_len = slash ? (size_t)(slash - path) + 1 : 0;
        st = graph_from_conf(out, root, path, path, dir_len, err);
    }
    knut_conf_free(root);
    return st;
}
