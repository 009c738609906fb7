/*
 * Naming the vertices an edge set could not find: both sinks describe a
 * skipped edge row's missing endpoint the same way, "Person {id: 7}", in
 * the set's `missing` text (the first few only), so the sync's round log,
 * ledger note and failure reason read alike whichever sink is in use.
 */
#include <stdio.h>
#include <string.h>

#include "cypher_int.h"

/* Appends s to the set's text, cut (at a character boundary) when full. */
static void put(knut_graph_set *set, const char *s)
{
    size_t have = strlen(set->missing), room = sizeof set->missing - have;
    if (room <= 1)
        return;
    knut_graph__msg_name(set->missing + have, room, s, strlen(s));
}

static void put_vertex(knut_graph_set *set, const char *label, const knut_graph_column *keys,
                       size_t n, const char *const *vals)
{
    put(set, set->missing[0] ? ", " : "");
    put(set, label);
    put(set, " {");
    for (size_t k = 0; k < n; k++) {
        put(set, k ? ", " : "");
        put(set, keys[k].prop);
        put(set, ": ");
        put(set, vals[k] ? vals[k] : "null");
    }
    put(set, "}");
    set->n_missing++;
}

int knut_graph__missing_full(const knut_graph_set *set)
{
    /* counted, not read back from the text: a key value may hold '}' */
    return set->n_missing >= KNUT_GRAPH__MISSING_ROWS;
}

void knut_graph__missing_add(knut_graph_set *set, int src_missing, int dst_missing,
                             const char *const *src_vals, const char *const *dst_vals)
{
    if (knut_graph__missing_full(set))
        return;
    if (src_missing)
        put_vertex(set, set->src_label, set->src_keys, set->n_src_keys, src_vals);
    if (dst_missing && !knut_graph__missing_full(set))
        put_vertex(set, set->dst_label, set->dst_keys, set->n_dst_keys, dst_vals);
}

knut_status knut_graph__missing_fail(const knut_graph_set *set, knut_error *err)
{
    knut_status st = knut_error_set(err, KNUT_EINVAL,
                                    "edge set '%s': %lld rows name an endpoint vertex that does "
                                    "not exist (missing_endpoints: fail); first missing: %s",
                                    set->name, (long long)set->skipped,
                                    set->missing[0] ? set->missing : "?");
    if (err)
        err->detail = KNUT_GRAPH_ERR_MISSING_ENDPOINT;
    return st;
}
