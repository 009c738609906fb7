/*
 * `knut graph`: property-graph tools. Dispatches to one function per
 * sub-command, each in cmd_graph_<name>.c.
 */
#include "cli.h"

static const knut_cli_sub subs[] = {
    {"query", knut_cmd_graph_query, "run Cypher on FalkorDB and print the result",
     &knut_cmd_graph_query_spec},
    {"export", knut_cmd_graph_export, "write the embedded graph store out (GraphAr)",
     &knut_cmd_graph_export_spec},
    {NULL, NULL, NULL, NULL},
};

const knut_cli_group knut_cmd_graph_group = {
    "graph", "Work with property graphs: FalkorDB and the embedded graph store.", subs};

int knut_cmd_graph(int argc, char **argv)
{
    return knut_cli_dispatch(&knut_cmd_graph_group, argc, argv);
}
