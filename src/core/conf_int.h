/*
 * Internals of the config tree shared by conf.c (tree, getters, files),
 * conf_yaml.c (the libyaml event builder) and conf_json.c (jansson
 * validation). Not part of the public API.
 */
#ifndef KNUT_CORE_CONF_INT_H
#define KNUT_CORE_CONF_INT_H

#include "knut/core.h"

/* Deepest nesting of sequences and maps accepted in a config. */
#define KNUT_CONF_MAX_DEPTH 64
/* Most nodes in one document: bounds memory whatever the input. */
#define KNUT_CONF_MAX_NODES ((size_t)1 << 20)
/* Most nodes created by expanding aliases, which copy their anchor: this is
 * what keeps "billion laughs" documents small. */
#define KNUT_CONF_MAX_ALIAS_NODES ((size_t)1 << 16)
/* Most distinct anchors in one document. */
#define KNUT_CONF_MAX_ANCHORS 1024

struct knut_conf {
    knut_conf_kind kind;
    int line; /* 1-based */
    int col;  /* 1-based, in characters */
    const char *file;  /* shared; owned by the root's file_owned */
    char *file_owned;  /* set on the root only */
    char *text;        /* scalar text, NUL-terminated; NULL otherwise */
    size_t text_len;
    int plain;         /* unquoted, untagged scalar (null rules, merge keys) */
    /* When this node is a map value: its key and where the key was. */
    char *key;
    int key_line, key_col;
    int key_plain;
    /* Sequence items or map values, in document order. */
    knut_conf **items;
    size_t n, cap;
};

/* Allocates a node of the given kind at line:col, sharing the file name. */
knut_conf *knut_core__conf_node_new(knut_conf_kind kind, const char *file, int line, int col);
/* Appends child to a seq or map (the key is already set on child). */
knut_status knut_core__conf_append(knut_conf *parent, knut_conf *child);
/* Frees a node and everything below it (not the shared file name). */
void knut_core__conf_node_free(knut_conf *n);

/* Builds the tree from YAML with libyaml. json != 0 turns off YAML-only
 * features (merge keys) so a JSON key "<<" stays an ordinary key. */
knut_status knut_core__conf_parse_yaml(knut_conf **out, const char *text, size_t len,
                                       const char *name, int json, knut_error *err);

#endif
