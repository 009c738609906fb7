/*
 * The libyaml-independent half of the config tree builder: the limits that
 * keep untrusted documents small (node count, alias expansion), deep copies
 * for aliases, and what happens when a map ends: duplicate keys are
 * rejected and YAML merge keys ("<<: *defaults") are applied.
 */
#include "conf_build.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

knut_status knut_core__conf_fail_at(conf_builder *b, knut_status code, int line, int col,
                                    const char *fmt, ...)
{
    char msg[KNUT_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return knut_error_set_at(b->err, code, b->file, line, col, "%s", msg);
}

knut_status knut_core__conf_oom(conf_builder *b)
{
    return knut_error_set_at(b->err, KNUT_ENOMEM, b->file, 0, 0,
                             "out of memory while loading config");
}

knut_status knut_core__conf_count_node(conf_builder *b, int alias, int line, int col)
{
    if (++b->nodes > KNUT_CONF_MAX_NODES)
        return knut_core__conf_fail_at(b, KNUT_ETOOBIG, line, col,
                                       "more than %zu nodes in one document", KNUT_CONF_MAX_NODES);
    if (alias && ++b->alias_nodes > KNUT_CONF_MAX_ALIAS_NODES)
        return knut_core__conf_fail_at(b, KNUT_ETOOBIG, line, col,
                                       "aliases expand to more than %zu nodes (anchor/alias bomb?)",
                                       KNUT_CONF_MAX_ALIAS_NODES);
    return KNUT_OK;
}

knut_status knut_core__conf_bury(conf_builder *b, knut_conf *n)
{
    if (knut_core__conf_append(b->graveyard, n) != KNUT_OK) {
        knut_core__conf_node_free(n);
        return knut_core__conf_oom(b);
    }
    return KNUT_OK;
}

/*
 * Deep copy for an alias; `room` is how many more collection levels fit
 * below the current depth. Copies keep the anchor's positions, which is
 * where the text actually is.
 */
knut_status knut_core__conf_copy_node(conf_builder *b, const knut_conf *src, int room,
                                      knut_conf **out)
{
    *out = NULL;
    knut_status st = knut_core__conf_count_node(b, 1, src->line, src->col);
    if (st != KNUT_OK)
        return st;
    int is_coll = src->kind == KNUT_CONF_SEQ || src->kind == KNUT_CONF_MAP;
    if (is_coll && room <= 0)
        return knut_core__conf_fail_at(b, KNUT_ETOOBIG, src->line, src->col,
                                       "alias nests deeper than %d levels", KNUT_CONF_MAX_DEPTH);
    knut_conf *n = knut_core__conf_node_new(src->kind, src->file, src->line, src->col);
    if (!n)
        return knut_core__conf_oom(b);
    n->plain = src->plain;
    n->key_line = src->key_line;
    n->key_col = src->key_col;
    n->key_plain = src->key_plain;
    if (src->text)
        n->text = strdup(src->text);
    if (src->key)
        n->key = strdup(src->key);
    if ((src->text && !n->text) || (src->key && !n->key)) {
        knut_core__conf_node_free(n);
        return knut_core__conf_oom(b);
    }
    n->text_len = src->text_len;
    for (size_t i = 0; i < src->n; i++) {
        knut_conf *child;
        st = knut_core__conf_copy_node(b, src->items[i], room - 1, &child);
        if (st == KNUT_OK && knut_core__conf_append(n, child) != KNUT_OK) {
            knut_core__conf_node_free(child);
            st = knut_core__conf_oom(b);
        }
        if (st != KNUT_OK) {
            knut_core__conf_node_free(n);
            return st;
        }
    }
    *out = n;
    return KNUT_OK;
}

/* ---- maps: duplicate keys and merge keys ------------------------------- */

/*
 * Keys are checked by sorting (key, priority) pairs rather than hashing, so
 * a hostile document cannot force quadratic work: O(n log n) always.
 * Priority is document order for the map's own keys, then merge order.
 */
typedef struct map_key {
    const knut_conf *node;
    size_t prio;
} map_key;

static int map_key_cmp(const void *a, const void *b)
{
    const map_key *x = a, *y = b;
    int c = strcmp(x->node->key, y->node->key);
    if (c)
        return c;
    return x->prio < y->prio ? -1 : x->prio > y->prio;
}

static int is_merge_entry(const conf_builder *b, const knut_conf *n)
{
    return !b->json && n->key_plain && strcmp(n->key, "<<") == 0;
}

/* The i-th map that merge entry v contributes (v is a map or a seq of maps). */
static const knut_conf *merge_source(const knut_conf *v, size_t i)
{
    return v->kind == KNUT_CONF_MAP ? v : v->items[i];
}

static size_t merge_source_count(const knut_conf *v)
{
    return v->kind == KNUT_CONF_MAP ? 1 : v->n;
}

/*
 * Checks for duplicate keys and applies merge keys: entries of the merged
 * map(s) are copied in unless the map already has the key (explicit keys
 * win; with a list of maps, earlier maps win), as YAML's merge type says.
 */
knut_status knut_core__conf_map_finish(conf_builder *b, knut_conf *m)
{
    knut_status st = KNUT_OK;
    map_key *keys = NULL;
    unsigned char *wins = NULL;
    knut_conf **all = NULL;
    size_t nown = 0, total = 0;
    for (size_t i = 0; i < m->n; i++) {
        const knut_conf *v = m->items[i];
        if (!is_merge_entry(b, v)) {
            nown++;
            continue;
        }
        int ok = v->kind == KNUT_CONF_MAP || v->kind == KNUT_CONF_SEQ;
        for (size_t j = 0; ok && v->kind == KNUT_CONF_SEQ && j < v->n; j++)
            ok = v->items[j]->kind == KNUT_CONF_MAP;
        if (!ok)
            return knut_core__conf_fail_at(b, KNUT_EINVAL, v->line, v->col,
                                           "merge key '<<' expects a map or a list of maps");
        for (size_t s = 0; s < merge_source_count(v); s++)
            total += merge_source(v, s)->n;
    }
    total += nown;
    if (total < 2 && nown == m->n)
        return KNUT_OK;
    keys = malloc((total ? total : 1) * sizeof *keys);
    wins = calloc(total ? total : 1, 1);
    if (!keys || !wins) {
        st = knut_core__conf_oom(b);
        goto cleanup;
    }
    size_t k = 0;
    for (size_t i = 0; i < m->n; i++) {
        if (!is_merge_entry(b, m->items[i])) {
            keys[k] = (map_key){m->items[i], k};
            k++;
        }
    }
    for (size_t i = 0; i < m->n; i++) {
        const knut_conf *v = m->items[i];
        if (!is_merge_entry(b, v))
            continue;
        for (size_t s = 0; s < merge_source_count(v); s++) {
            const knut_conf *src = merge_source(v, s);
            for (size_t j = 0; j < src->n; j++) {
                keys[k] = (map_key){src->items[j], k};
                k++;
            }
        }
    }
    qsort(keys, total, sizeof *keys, map_key_cmp);
    /* In each run of equal keys the lowest priority wins; two of the map's
     * own keys in one run are a duplicate. Report the one that comes first
     * in the document. */
    const map_key *dup = NULL, *dup_first = NULL;
    for (size_t i = 0; i < total;) {
        size_t j = i + 1;
        while (j < total && strcmp(keys[j].node->key, keys[i].node->key) == 0)
            j++;
        wins[keys[i].prio] = 1;
        if (j - i > 1 && keys[i + 1].prio < nown && (!dup || keys[i + 1].prio < dup->prio)) {
            dup = &keys[i + 1];
            dup_first = &keys[i];
        }
        i = j;
    }
    if (dup) {
        st = knut_core__conf_fail_at(b, KNUT_EINVAL, dup->node->key_line, dup->node->key_col,
                                     "duplicate key '%s' (first at %d:%d)", dup->node->key,
                                     dup_first->node->key_line, dup_first->node->key_col);
        goto cleanup;
    }
    if (nown == m->n)
        goto cleanup; /* no merge keys */
    /* Take the merge entries out (anchors may point into them, so they go to
     * the graveyard), then copy in the entries that won. */
    size_t nm = m->n;
    all = m->items;
    m->items = NULL;
    m->n = m->cap = 0;
    for (size_t i = 0; i < nm && st == KNUT_OK; i++) {
        if (is_merge_entry(b, all[i]))
            continue;
        if (knut_core__conf_append(m, all[i]) != KNUT_OK)
            st = knut_core__conf_oom(b); /* what was not moved yet is freed below */
        else
            all[i] = NULL;
    }
    size_t prio = nown;
    for (size_t i = 0; i < nm && st == KNUT_OK; i++) {
        knut_conf *v = all[i];
        if (!v)
            continue;
        all[i] = NULL;
        st = knut_core__conf_bury(b, v);
        for (size_t s = 0; st == KNUT_OK && s < merge_source_count(v); s++) {
            const knut_conf *src = merge_source(v, s);
            for (size_t j = 0; j < src->n && st == KNUT_OK; j++) {
                if (!wins[prio++])
                    continue;
                knut_conf *copy;
                int room = KNUT_CONF_MAX_DEPTH - b->depth;
                st = knut_core__conf_copy_node(b, src->items[j], room, &copy);
                if (st == KNUT_OK && knut_core__conf_append(m, copy) != KNUT_OK) {
                    knut_core__conf_node_free(copy);
                    st = knut_core__conf_oom(b);
                }
            }
        }
    }
    for (size_t i = 0; i < nm; i++)
        knut_core__conf_node_free(all[i]);
cleanup:
    free(all);
    free(keys);
    free(wins);
    return st;
}

