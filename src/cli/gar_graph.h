/*
 * Helpers shared by the `knut gar` readers (info, cat): finding and loading
 * the graph a PATH argument names.
 */
#ifndef KNUT_CLI_GAR_GRAPH_H
#define KNUT_CLI_GAR_GRAPH_H

#include "knut/graphar.h"

/*
 * Loads the graph at path: a *.graph.yml / *.graph.yaml file, or a
 * directory holding exactly one (ENOTFOUND if none, EINVAL naming them if
 * several).
 */
knut_status knut_cli_gar_load(const char *path, knut_graphar_graph_info **out,
                              knut_error *err);

#endif
