/*
 * The config tree builder shared by the YAML event handlers (conf_yaml.c)
 * and the parts that do not depend on libyaml (conf_build.c: limits,
 * alias copies, duplicate and merge keys). Internal to core.
 */
#ifndef KNUT_CORE_CONF_BUILD_H
#define KNUT_CORE_CONF_BUILD_H

#include "conf_int.h"

typedef struct conf_frame {
    knut_conf *node;  /* open seq or map, not yet attached to its parent */
    char *anchor;     /* registered when the collection ends */
    int have_key;     /* map only: a key is waiting for its value */
    char *key;
    int key_line, key_col, key_plain;
} conf_frame;

typedef struct conf_anchor {
    char *name;
    const knut_conf *node;
} conf_anchor;

typedef struct conf_builder {
    const char *text;
    size_t len;
    char *file; /* owned until handed to the root */
    int json;
    knut_conf *root;
    conf_frame frames[KNUT_CONF_MAX_DEPTH];
    int depth;
    conf_anchor anchors[KNUT_CONF_MAX_ANCHORS];
    int nanchors;
    size_t nodes, alias_nodes;
    /* Nodes dropped from the tree that anchors may still point at (keys,
     * merge sources): kept alive until the parse ends. */
    knut_conf *graveyard;
    knut_error *err;
} conf_builder;

/* Sets err to "file:line:col: message" and returns code. */
knut_status knut_core__conf_fail_at(conf_builder *b, knut_status code, int line, int col,
                                    const char *fmt, ...) KNUT_PRINTF(5, 6);
knut_status knut_core__conf_oom(conf_builder *b);
/* Counts a new node against the document's limits. */
knut_status knut_core__conf_count_node(conf_builder *b, int alias, int line, int col);
/* Keeps a node dropped from the tree alive until the parse ends. */
knut_status knut_core__conf_bury(conf_builder *b, knut_conf *n);
/* Deep copy for an alias or a merge; `room` is how many more collection
 * levels fit below the current depth. */
knut_status knut_core__conf_copy_node(conf_builder *b, const knut_conf *src, int room,
                                      knut_conf **out);
/* Rejects duplicate keys and applies merge keys when a map ends. */
knut_status knut_core__conf_map_finish(conf_builder *b, knut_conf *m);

#endif
