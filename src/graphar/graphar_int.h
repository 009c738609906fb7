/*
 * Internals shared by the graphar part's files: small string and array
 * helpers, the load context that formats "file:line:col: field: ..."
 * messages, and the entry points the graph loader uses to parse vertex and
 * edge infos from an already loaded config tree. Not part of the public API.
 */
#ifndef KNUT_GRAPHAR_INT_H
#define KNUT_GRAPHAR_INT_H

#include "knut/graphar.h"

/* Log target for warnings (legacy keys, odd values the reference accepts). */
#define KNUT_GRAPHAR_LOG "graphar"

/* Most items in any one info list (groups, properties, adj lists, files,
 * labels): far above real graphs, low enough that a hostile file cannot
 * make us allocate per-item structures without bound. */
#define KNUT_GRAPHAR_MAX_ITEMS 65536

/* DuckDB's name for a GraphAr scalar type (a list's element type too):
 * the reader's casts and the writer's column types agree by using it.
 * TIMESTAMP is TIMESTAMP_MS: the reference's Arrow type is timestamp[ms],
 * which DuckDB writes as Parquet TIMESTAMP(MILLIS, not UTC-adjusted). */
const char *knut_graphar__sql_scalar(knut_graphar_type t);
/* 1 if a property holds a list (type list, or a list/set cardinality). */
int knut_graphar__prop_is_list(const knut_graphar_property *p);
/* The property's scalar type: its element type for a list. */
knut_graphar_type knut_graphar__prop_scalar(const knut_graphar_property *p);

/* strdup that accepts NULL (gives NULL). */
char *knut_graphar__strdup(const char *s);
/* Grows *arr (elements of size elem) to hold one more item; *n unchanged
 * (the caller increments it once the slot is filled). Returns the new,
 * zeroed slot or NULL on OOM. Only for arrays grown by this function. */
void *knut_graphar__push(void **arr, size_t *n, size_t elem);
/* Frees n strings and the array. */
void knut_graphar__strv_free(char **v, size_t n);

/* Frees the contents of a group / adj list (not the struct itself). */
void knut_graphar__group_reset(knut_graphar_property_group *g);
void knut_graphar__adj_list_reset(knut_graphar_adj_list *al);
/* Sets g->prefix to the reference default: names joined by '_' + "/"
 * ("" for a group with no properties). */
knut_status knut_graphar__group_default_prefix(knut_graphar_property_group *g);

/* Default prefixes of the reference C++ constructors. */
char *knut_graphar__vertex_default_prefix(const char *type);
char *knut_graphar__edge_default_prefix(const char *src, const char *edge, const char *dst);
/* "<src>_<edge>_<dst>" + suffix (the key of an edge type, and file names). */
char *knut_graphar__edge_key(const char *src, const char *edge, const char *dst,
                             const char *suffix);

/* Parses a vertex / edge info from a loaded tree (root must be its map).
 * source is remembered as vi->source (may be NULL). */
knut_status knut_graphar__vertex_from_conf(knut_graphar_vertex_info **out,
                                           const knut_conf *root, const char *source,
                                           knut_error *err);
knut_status knut_graphar__edge_from_conf(knut_graphar_edge_info **out, const knut_conf *root,
                                         const char *source, knut_error *err);

/* ---- count files (layout.c) -------------------------------------------- */

/*
 * The one reader of GraphAr's 8-byte little-endian count files, for the
 * readers (knut_graphar_count_read) and the validator (which reports each
 * case as its own rule). *value gets the raw int64, negative too: the
 * caller judges it. KNUT_ENOTFOUND: no such file or folder; KNUT_EIO: not
 * a regular file, or unreadable; KNUT_EPARSE: not exactly 8 bytes, *size
 * (may be NULL) getting the size found. err names the file.
 */
knut_status knut_graphar__count_load(const char *path, int64_t *value, int64_t *size,
                                     knut_error *err);

/* ---- load context helpers (info_load.c) -------------------------------- */

/* Sets err to "file:line:col: field: <fmt>" at node n. */
knut_status knut_graphar__fail(knut_error *err, knut_status code, const knut_conf *n,
                               const char *field, const char *fmt, ...) KNUT_PRINTF(5, 6);
/*
 * Reads map[key] as a string copy. Absent (or YAML null): *out = NULL and
 * KNUT_OK, unless required (then ENOTFOUND naming the field). A list or map
 * is EINVAL. field is the path used in messages ("property_groups[0].prefix").
 */
knut_status knut_graphar__get_str(const knut_conf *map, const char *key, const char *field,
                                  int required, char **out, knut_error *err);
/* Reads map[key] as a sequence of strings (absent: 0 items). */
knut_status knut_graphar__get_strv(const knut_conf *map, const char *key, const char *field,
                                   char ***out, size_t *n_out, knut_error *err);
/* Reads map[key] as a boolean (true/false/yes/no/on/off/1/0, any case);
 * absent: def, *given = 0. */
knut_status knut_graphar__get_bool(const knut_conf *map, const char *key, const char *field,
                                   int def, int *out, int *given, knut_error *err);

#endif
