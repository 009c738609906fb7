/*
 * Fuzz target for the graph mapping syntax (src/graph/map_conf.c), shared
 * by sync.yml tables and pipeline graph sinks: the bytes are loaded as
 * YAML and, when they load, parsed as a mapping (vertices, edges,
 * fk_edges) and freed, so every error path of the steps runs.
 */
#include <stddef.h>
#include <stdint.h>

#include "knut/core.h"
#include "knut/graph_map.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    knut_conf *root = NULL;
    knut_error err = KNUT_ERROR_INIT;
    if (knut_conf_load_yaml(&root, (const char *)data, size, "fuzz.yml", &err) != KNUT_OK)
        return 0;
    knut_graph_map m;
    if (knut_conf_kind_of(root) == KNUT_CONF_MAP) {
        (void)knut_graph_map_parse(root, "sink", "fuzz", "_change_type", &m, &err);
        knut_graph_map_free(&m);
    }
    knut_conf_free(root);
    return 0;
}
