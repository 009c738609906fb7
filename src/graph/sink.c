/*
 * The sink interface: a thin dispatch so sync and `knut load` apply a
 * mutation the same way to FalkorDB or to the embedded graph store.
 */
#include "knut/graph.h"

#include <string.h>

knut_status knut_graph_sink_apply(knut_graph_sink *sink, knut_graph_mutation *m,
                                  const knut_graph_sink_commit *commit,
                                  knut_graph_sink_stats *stats, knut_error *err)
{
    KNUT_ASSERT_ARG(err, sink != NULL && sink->ops != NULL && m != NULL);
    knut_graph_sink_stats local;
    if (!stats)
        stats = &local;
    memset(stats, 0, sizeof *stats);
    return sink->ops->apply(sink, m, commit, stats, err);
}

void knut_graph_sink_close(knut_graph_sink *sink)
{
    if (sink && sink->ops && sink->ops->close)
        sink->ops->close(sink);
}

static knut_status sink_keys(knut_graph_sink *sink, const knut_graph_key_scan *scan,
                             knut_graph_sink_keys_fn fn, void *ctx, knut_error *err)
{
    if (!sink->ops->keys)
        return knut_error_set(err, KNUT_EUNSUPPORTED, "%s sink: no key listing",
                              sink->ops->name);
    return sink->ops->keys(sink, scan, fn, ctx, err);
}

knut_status knut_graph_sink_vertex_keys(knut_graph_sink *sink, const char *label,
                                        const char *const *keys, size_t n_keys,
                                        knut_graph_sink_keys_fn fn, void *ctx, knut_error *err)
{
    KNUT_ASSERT_ARG(err, sink != NULL && sink->ops != NULL && label != NULL && fn != NULL &&
                             (keys != NULL || n_keys == 0));
    knut_graph_key_scan scan = {label, keys, n_keys, NULL, {0}, {0}};
    return sink_keys(sink, &scan, fn, ctx, err);
}

knut_status knut_graph_sink_edge_keys(knut_graph_sink *sink, const char *type,
                                      const knut_graph_endpoint *src,
                                      const knut_graph_endpoint *dst,
                                      knut_graph_sink_keys_fn fn, void *ctx, knut_error *err)
{
    KNUT_ASSERT_ARG(err, sink != NULL && sink->ops != NULL && type != NULL && src != NULL &&
                             dst != NULL && src->label != NULL && dst->label != NULL &&
                             fn != NULL);
    knut_graph_key_scan scan = {NULL, NULL, 0, type, *src, *dst};
    return sink_keys(sink, &scan, fn, ctx, err);
}
