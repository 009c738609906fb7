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
