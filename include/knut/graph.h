/*
 * knut graph: the property-graph side of knut. A mutation (vertex sets, edge
 * sets, vertex delete sets, edge delete sets, each an Arrow stream of rows
 * plus the names that say how rows map onto the graph) is what sources
 * produce and sinks apply.
 * The Cypher renderer turns a set into one constant query text per shape and
 * its rows into `CYPHER rows=[...]` parameter blocks, so values never reach
 * the query text and FalkorDB's plan cache keeps working.
 *
 * This umbrella includes the parts: graph_model.h (mutations, Cypher),
 * graph_sink.h (the sink interface), graph_falkor.h (the FalkorDB client
 * and sink), graph_store.h (the embedded store), graph_load.h (loading).
 */
#ifndef KNUT_GRAPH_H
#define KNUT_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "knut/arrow.h"
#include "knut/core.h"

#include "knut/graph_model.h"
#include "knut/graph_sink.h"
#include "knut/graph_falkor.h"
#include "knut/graph_store.h"
#include "knut/graph_load.h"
#include "knut/graph_map.h"

#endif /* KNUT_GRAPH_H */
