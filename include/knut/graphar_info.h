/*
 * knut graphar: Apache GraphAr `gar/v1`. This header holds the info model
 * (graph, vertex and edge info YAML files), loading them with file:line:col
 * errors, and dumping them in the exact text form the reference C++ library
 * writes (the layout, chunk math and count files are in graphar_layout.h).
 * Chunk readers, the writer and the validator build on these structs,
 * which are therefore transparent.
 *
 * Ownership: every string and array inside an info struct belongs to it and
 * is freed by its _free function. Infos added to a graph belong to the graph.
 *
 * What loading refuses, with an error naming file:line:col and the field
 * path (e.g. "property_groups[1].properties[0].data_type"):
 *  - YAML that does not parse, or whose root is not a map; a key holding
 *    the wrong kind (a map where a string or list is expected, ...);
 *  - a missing, non-integer or <= 0 `chunk_size`, `src_chunk_size` or
 *    `dst_chunk_size` (the reference reads those as 0 and fails later);
 *  - a missing or empty vertex `type` / edge `src_type`, `edge_type`,
 *    `dst_type` (the legacy `label`, `src_label`, ... are read instead, with
 *    a warning logged under target "graphar");
 *  - a property without `name` or `data_type`, an unknown `data_type`,
 *    `file_type` or `cardinality`, a group or adj list without `file_type`,
 *    an adj list without `ordered` or `aligned_by` (the reference throws on
 *    the unknown spellings and silently defaults the missing keys);
 *  - a boolean other than true/false/yes/no/on/off/1/0 (the reference
 *    reads anything else as false);
 *  - a non-single `cardinality` on an edge property (as the reference);
 *  - a `version` not matching `gar/v<N>...` with N = 1 (as the reference);
 *  - in a graph, a listed vertex/edge file that fails to load;
 *  - lists of more than 65536 items.
 * What loading keeps, so that the validator can report it (the reference
 * loads it too): several or no primary keys, duplicate property names,
 * empty property groups, missing or empty `adj_lists`, duplicate adj-list
 * types, duplicate vertex types or edge triples in a graph, `file_type:
 * json`, list types or non-single cardinality in CSV groups, `is_primary`
 * with `is_nullable: true` (nullable is forced false, the declared value
 * is kept), prefixes without a trailing '/', a graph prefix given as "",
 * `aligned_by` values other than src/dst (read as dst, as the reference
 * does, with a warning), legacy `adj_lists[].property_groups` (ignored, as
 * the reference does, with a warning and legacy_groups set), legacy key
 * names (legacy_keys set), an absent `version` or `directed`.
 */
#ifndef KNUT_GRAPHAR_INFO_H
#define KNUT_GRAPHAR_INFO_H

#include <stddef.h>
#include <stdint.h>

#include "knut/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- enums ------------------------------------------------------------- */

typedef enum knut_graphar_type {
    KNUT_GRAPHAR_TYPE_BOOL,
    KNUT_GRAPHAR_TYPE_INT32,
    KNUT_GRAPHAR_TYPE_INT64,
    KNUT_GRAPHAR_TYPE_FLOAT,
    KNUT_GRAPHAR_TYPE_DOUBLE,
    KNUT_GRAPHAR_TYPE_STRING,
    KNUT_GRAPHAR_TYPE_DATE,      /* days since the epoch (Arrow date32) */
    KNUT_GRAPHAR_TYPE_TIMESTAMP, /* ms since the epoch (Arrow timestamp[ms]) */
    KNUT_GRAPHAR_TYPE_LIST       /* list<elem>: elem is int32/int64/float/double/string */
} knut_graphar_type;

typedef enum knut_graphar_file_type {
    KNUT_GRAPHAR_FILE_CSV,
    KNUT_GRAPHAR_FILE_PARQUET,
    KNUT_GRAPHAR_FILE_ORC,
    KNUT_GRAPHAR_FILE_JSON /* readable (JSON Lines), but invalid for the reference */
} knut_graphar_file_type;

typedef enum knut_graphar_cardinality {
    KNUT_GRAPHAR_CARD_SINGLE,
    KNUT_GRAPHAR_CARD_LIST,
    KNUT_GRAPHAR_CARD_SET
} knut_graphar_cardinality;

/* The values match the reference C++ AdjListType. */
typedef enum knut_graphar_adj_list_type {
    KNUT_GRAPHAR_UNORDERED_BY_SOURCE = 0,
    KNUT_GRAPHAR_UNORDERED_BY_DEST = 1,
    KNUT_GRAPHAR_ORDERED_BY_SOURCE = 2,
    KNUT_GRAPHAR_ORDERED_BY_DEST = 3
} knut_graphar_adj_list_type;

/* Canonical names, never NULL ("list" for LIST: a property's full spelling
 * is "list<" + the elem_type name + ">", as kept in its type_text). */
KNUT_EXTERN const char *knut_graphar_type_name(knut_graphar_type t);
KNUT_EXTERN const char *knut_graphar_file_type_name(knut_graphar_file_type ft);
KNUT_EXTERN const char *knut_graphar_cardinality_name(knut_graphar_cardinality c);
/* "ordered_by_source", "ordered_by_dest", "unordered_by_source", ... */
KNUT_EXTERN const char *knut_graphar_adj_list_type_name(knut_graphar_adj_list_type t);

/* Parsers for the YAML spellings (exact, case-sensitive, as the reference);
 * EINVAL for anything else, err naming the text. */
KNUT_EXTERN knut_status knut_graphar_type_parse(const char *text, knut_graphar_type *type,
                                                knut_graphar_type *elem, knut_error *err);
KNUT_EXTERN knut_status knut_graphar_file_type_parse(const char *text, knut_graphar_file_type *out,
                                                     knut_error *err);
KNUT_EXTERN knut_status knut_graphar_cardinality_parse(const char *text,
                                                       knut_graphar_cardinality *out,
                                                       knut_error *err);
KNUT_EXTERN knut_status knut_graphar_adj_list_type_parse(const char *text,
                                                         knut_graphar_adj_list_type *out,
                                                         knut_error *err);

/* ordered/aligned_by <-> type, as the reference's OrderedAlignedToAdjListType. */
KNUT_EXTERN knut_graphar_adj_list_type knut_graphar_adj_list_type_of(int ordered,
                                                                     int aligned_by_src);
KNUT_EXTERN int knut_graphar_adj_list_type_is_ordered(knut_graphar_adj_list_type t);
KNUT_EXTERN int knut_graphar_adj_list_type_by_source(knut_graphar_adj_list_type t);

/* ---- version ----------------------------------------------------------- */

/*
 * `gar/v1` or `gar/v1 (t1,t2)`: the user-type list is kept but does not make
 * those types loadable (as in the reference). present == 0: the info had no
 * `version` key (dump then omits it).
 */
typedef struct knut_graphar_version {
    int present;
    int major;          /* always 1 when present */
    char **user_types;  /* trimmed, empties dropped */
    size_t n_user_types;
} knut_graphar_version;

/* Parses text into v (reset first; the caller frees it with
 * knut_graphar_version_reset); KNUT_EINVAL "invalid version string",
 * KNUT_ENOMEM. */
KNUT_EXTERN knut_status knut_graphar_version_parse(knut_graphar_version *v, const char *text,
                                                   knut_error *err);
/* Appends "gar/v1" or "gar/v1 (t1,t2)" to out; out's sticky status. */
KNUT_EXTERN knut_status knut_graphar_version_format(const knut_graphar_version *v, knut_buf *out);
KNUT_EXTERN void knut_graphar_version_reset(knut_graphar_version *v); /* frees; NULL-safe */

/* ---- info model -------------------------------------------------------- */

/* Where an item was read from, within its info's `source` file (0 = built
 * in memory). Validators print "source:line:col". */
typedef struct knut_graphar_pos {
    int line;
    int col;
} knut_graphar_pos;

typedef struct knut_graphar_property {
    char *name;
    knut_graphar_type type;
    knut_graphar_type elem_type; /* for KNUT_GRAPHAR_TYPE_LIST, else = type */
    char *type_text;             /* data_type as written ("list<float>") */
    int is_primary;
    int is_nullable;             /* default true; forced false when primary */
    int nullable_given;          /* is_nullable was in the YAML */
    int nullable_declared;       /* the YAML's value, before the primary rule */
    knut_graphar_cardinality cardinality;
    knut_graphar_pos pos;
} knut_graphar_property;

typedef struct knut_graphar_property_group {
    knut_graphar_property *props;
    size_t n_props;
    knut_graphar_file_type file_type;
    char *prefix;       /* after defaulting: names joined by '_' + "/" */
    int prefix_given;   /* prefix came from the YAML / caller */
    knut_graphar_pos pos;
} knut_graphar_property_group;

typedef struct knut_graphar_adj_list {
    knut_graphar_adj_list_type type;
    knut_graphar_file_type file_type;
    char *prefix;            /* after defaulting: "<type name>/" */
    int prefix_given;
    char *aligned_by_text;   /* as written ("src", "dst", or an oddity) */
    int legacy_groups;       /* had adj_lists[].property_groups (ignored) */
    knut_graphar_pos pos;
} knut_graphar_adj_list;

typedef struct knut_graphar_vertex_info {
    char *type;
    int64_t chunk_size;
    char *prefix;        /* after defaulting: "<type>/" */
    int prefix_given;
    char **labels;
    size_t n_labels;
    knut_graphar_property_group *groups;
    size_t n_groups;
    knut_graphar_version version;
    int legacy_keys;     /* read `label` instead of `type` */
    char *source;        /* file path or name it was loaded from, or NULL */
} knut_graphar_vertex_info;

typedef struct knut_graphar_edge_info {
    char *src_type;
    char *edge_type;
    char *dst_type;
    int64_t chunk_size;
    int64_t src_chunk_size;
    int64_t dst_chunk_size;
    int directed;        /* absent: false */
    int directed_given;
    char *prefix;        /* after defaulting: "<src>_<edge>_<dst>/" */
    int prefix_given;
    knut_graphar_adj_list *adj_lists;
    size_t n_adj_lists;
    knut_graphar_property_group *groups;
    size_t n_groups;
    knut_graphar_version version;
    int legacy_keys;     /* read src_label/edge_label/dst_label */
    char *source;
} knut_graphar_edge_info;

typedef struct knut_graphar_extra_info {
    char *key;
    char *value;
} knut_graphar_extra_info;

typedef struct knut_graphar_graph_info {
    char *name;          /* default "graph" */
    char *prefix;        /* as given (even ""), else the YAML's directory + "/"
                          * ("./" if its path has none; "" when parse-only) */
    int prefix_given;
    char *base_dir;      /* directory of the graph YAML + "/", where listed
                          * vertex/edge files resolve ("" if unknown or the
                          * current directory) */
    char **labels;
    size_t n_labels;
    knut_graphar_extra_info *extra;
    size_t n_extra;
    knut_graphar_version version;
    /* vertex_files: the YAML's `vertices` list (names relative to
     * base_dir). Once loaded, n_vertices == n_vertex_files and vertices[i]
     * came from (or is saved as) vertex_files[i]; a parse-only load leaves
     * n_vertices at 0. The same for edges. */
    char **vertex_files;
    size_t n_vertex_files;
    knut_graphar_vertex_info **vertices;
    size_t n_vertices;
    char **edge_files;
    size_t n_edge_files;
    knut_graphar_edge_info **edges;
    size_t n_edges;
    char *source;
} knut_graphar_graph_info;

/* Free an info and everything in it (NULL-safe). A graph frees the vertex
 * and edge infos added to it: do not free those separately. */
KNUT_EXTERN void knut_graphar_vertex_info_free(knut_graphar_vertex_info *vi);
KNUT_EXTERN void knut_graphar_edge_info_free(knut_graphar_edge_info *ei);
KNUT_EXTERN void knut_graphar_graph_info_free(knut_graphar_graph_info *gi);

/* ---- building infos in memory ------------------------------------------ */

/*
 * Constructors take copies of their strings. prefix NULL means the default.
 * They refuse what the reference's Create* factories refuse (empty names,
 * chunk sizes <= 0, duplicates: KNUT_EINVAL, naming it). Version is set to
 * gar/v1. All may fail with KNUT_ENOMEM; a failed add changes nothing. The
 * caller frees a new info with its _free unless it was added to a graph.
 */
KNUT_EXTERN knut_status knut_graphar_vertex_info_new(knut_graphar_vertex_info **out,
                                                     const char *type, int64_t chunk_size,
                                                     const char *prefix, knut_error *err);
KNUT_EXTERN knut_status knut_graphar_vertex_info_add_label(knut_graphar_vertex_info *vi,
                                                           const char *label, knut_error *err);
/* Adds an empty group; *out (may be NULL) points into vi->groups and stays
 * valid until the next group is added. */
KNUT_EXTERN knut_status knut_graphar_vertex_info_add_group(knut_graphar_vertex_info *vi,
                                                           knut_graphar_file_type ft,
                                                           const char *prefix,
                                                           knut_graphar_property_group **out,
                                                           knut_error *err);

/* Makes an edge info without adjacency lists or groups (add them below);
 * chunk sizes must be > 0 (KNUT_EINVAL), prefix NULL: the default one.
 * Free with knut_graphar_edge_info_free unless added to a graph. */
KNUT_EXTERN knut_status knut_graphar_edge_info_new(knut_graphar_edge_info **out,
                                                   const char *src_type, const char *edge_type,
                                                   const char *dst_type, int64_t chunk_size,
                                                   int64_t src_chunk_size, int64_t dst_chunk_size,
                                                   int directed, const char *prefix,
                                                   knut_error *err);
/* Refuses a type already present (as the reference's AddAdjacentList). */
KNUT_EXTERN knut_status knut_graphar_edge_info_add_adj_list(knut_graphar_edge_info *ei,
                                                            knut_graphar_adj_list_type type,
                                                            knut_graphar_file_type ft,
                                                            const char *prefix, knut_error *err);
KNUT_EXTERN knut_status knut_graphar_edge_info_add_group(knut_graphar_edge_info *ei,
                                                         knut_graphar_file_type ft,
                                                         const char *prefix,
                                                         knut_graphar_property_group **out,
                                                         knut_error *err);

/*
 * Appends a property; data_type is a YAML spelling ("int64", "list<float>").
 * If the group's prefix is the default, it is recomputed. Refuses a name
 * already in the group (as the reference's AddPropertyGroup).
 */
KNUT_EXTERN knut_status knut_graphar_group_add_property(knut_graphar_property_group *g,
                                                        const char *name, const char *data_type,
                                                        int is_primary, int is_nullable,
                                                        knut_graphar_cardinality card,
                                                        knut_error *err);

/* prefix NULL: "./" (prefix_given = 0, so dumps leave it out and loaders
 * default it to the saved file's directory). */
KNUT_EXTERN knut_status knut_graphar_graph_info_new(knut_graphar_graph_info **out, const char *name,
                                                    const char *prefix, knut_error *err);
/* Takes ownership of vi/ei on success only. file NULL: "<type>.vertex.yml"
 * (or "<src>_<edge>_<dst>.edge.yml"). Refuses a duplicate type / triple. */
KNUT_EXTERN knut_status knut_graphar_graph_info_add_vertex(knut_graphar_graph_info *gi,
                                                           knut_graphar_vertex_info *vi,
                                                           const char *file, knut_error *err);
KNUT_EXTERN knut_status knut_graphar_graph_info_add_edge(knut_graphar_graph_info *gi,
                                                         knut_graphar_edge_info *ei,
                                                         const char *file, knut_error *err);

/* ---- lookups ----------------------------------------------------------- */

/* First match or NULL; the info is owned by gi. */
KNUT_EXTERN knut_graphar_vertex_info *
knut_graphar_graph_info_vertex(const knut_graphar_graph_info *gi, const char *type);
KNUT_EXTERN knut_graphar_edge_info *knut_graphar_graph_info_edge(const knut_graphar_graph_info *gi,
                                                                 const char *src_type,
                                                                 const char *edge_type,
                                                                 const char *dst_type);
/* Property by name across groups, or NULL; *group_out (may be NULL) gets
 * its group. Both are owned by the info. Then an edge's adjacency list of
 * one type (or NULL). */
KNUT_EXTERN const knut_graphar_property *
knut_graphar_vertex_info_property(const knut_graphar_vertex_info *vi, const char *name,
                                  const knut_graphar_property_group **group_out);
KNUT_EXTERN const knut_graphar_property *
knut_graphar_edge_info_property(const knut_graphar_edge_info *ei, const char *name,
                                const knut_graphar_property_group **group_out);
KNUT_EXTERN const knut_graphar_adj_list *
knut_graphar_edge_info_adj_list(const knut_graphar_edge_info *ei, knut_graphar_adj_list_type type);

/* ---- loading ----------------------------------------------------------- */

/*
 * Loads the graph YAML at path and every vertex/edge YAML it lists,
 * resolved against the graph YAML's directory (as the reference C++ does;
 * Spark uses the prefix instead). The caller frees *out with
 * knut_graphar_graph_info_free; on error it is NULL. Errors name
 * file:line:col (also in err->line, err->col) and the field: KNUT_EINVAL
 * (wrong fields), KNUT_ENOTFOUND (a missing required field, a file that
 * is not there), KNUT_EPARSE (YAML syntax), KNUT_EIO (a file that cannot
 * be read), KNUT_ETOOBIG (over KNUT_CONF_MAX_BYTES, sizes out of range),
 * KNUT_ENOMEM.
 */
KNUT_EXTERN knut_status knut_graphar_graph_load(knut_graphar_graph_info **out, const char *path,
                                                knut_error *err);
/* The graph at path: a *.graph.yml / *.graph.yaml file, or a directory
 * holding exactly one (KNUT_ENOTFOUND if none or the path is not there,
 * KNUT_EINVAL naming them if several); then as knut_graphar_graph_load. */
KNUT_EXTERN knut_status knut_graphar_graph_load_path(knut_graphar_graph_info **out,
                                                     const char *path, knut_error *err);
/*
 * The graph YAML from memory. name is used in error positions. dir is the
 * directory the listed files resolve against (it is also the default
 * prefix); dir NULL parses the graph YAML only: the listed files are
 * kept in vertex_files/edge_files but not loaded (n_vertices = n_edges = 0)
 * and a missing prefix stays "". text is borrowed; errors as above.
 */
KNUT_EXTERN knut_status knut_graphar_graph_load_yaml(knut_graphar_graph_info **out,
                                                     const char *text, size_t len, const char *name,
                                                     const char *dir, knut_error *err);
/* Single vertex / edge info files, from a path (read through
 * knut_conf_load_file, so capped at KNUT_CONF_MAX_BYTES) or from memory.
 * The caller frees *out with its _info_free; errors as above. */
KNUT_EXTERN knut_status knut_graphar_vertex_load(knut_graphar_vertex_info **out, const char *path,
                                                 knut_error *err);
KNUT_EXTERN knut_status knut_graphar_vertex_load_yaml(knut_graphar_vertex_info **out,
                                                      const char *text, size_t len,
                                                      const char *name, knut_error *err);
KNUT_EXTERN knut_status knut_graphar_edge_load(knut_graphar_edge_info **out, const char *path,
                                               knut_error *err);
KNUT_EXTERN knut_status knut_graphar_edge_load_yaml(knut_graphar_edge_info **out, const char *text,
                                                    size_t len, const char *name, knut_error *err);

/* ---- dumping and saving ------------------------------------------------ */

/*
 * Appends the YAML text the reference C++ Dump() writes: ASCII-ordered keys,
 * 2-space indents, "key: " + newline before nested values, "- " items,
 * double quotes around scalars holding any of ":{}[],&*#?|-<>=!%@",
 * lines over 64 characters folded as `>-` blocks, true/false, a trailing
 * newline. Deviations, each so that every dump loads back to the same info:
 * values the reference would garble (control characters and line breaks,
 * '"', '\', leading/trailing spaces, a leading ' or `, YAML null words,
 * "") are written as escaped double-quoted scalars; an edge property with
 * non-single cardinality is refused (EINVAL) rather than dropped. Unlike
 * the reference, dumping does not refuse infos its IsValidated() rejects.
 */
KNUT_EXTERN knut_status knut_graphar_vertex_dump(const knut_graphar_vertex_info *vi, knut_buf *out,
                                                 knut_error *err);
KNUT_EXTERN knut_status knut_graphar_edge_dump(const knut_graphar_edge_info *ei, knut_buf *out,
                                               knut_error *err);

/*
 * Graph dump flags. By default the `vertices`/`edges` lists name the files
 * the infos were loaded from or will be saved as (gi->vertex_files), so
 * that what we write loads again, in C++/Python too, and `prefix` is
 * written only when it was given (a prefix defaulted to the YAML's
 * directory is left out, so the file stays relocatable: every loader
 * defaults it to the file's own directory again). KNUT_GRAPHAR_DUMP_CXX
 * reproduces the reference instead, for byte comparisons with `graphar
 * show`: the lists become "<type>.vertex.yaml" / "<src>_<edge>_<dst>
 * .edge.yaml" (note .yaml, even for files saved as .yml, which then fail to
 * load) and the prefix is always written.
 */
#define KNUT_GRAPHAR_DUMP_CXX 0x1u
/* Appends the graph YAML to out (the buffer's cap applies: KNUT_ETOOBIG). */
KNUT_EXTERN knut_status knut_graphar_graph_dump(const knut_graphar_graph_info *gi, unsigned flags,
                                                knut_buf *out, knut_error *err);

/* Writes one YAML file (created or truncated): KNUT_EIO naming the path,
 * or the dump's error. */
KNUT_EXTERN knut_status knut_graphar_vertex_save(const knut_graphar_vertex_info *vi,
                                                 const char *path, knut_error *err);
KNUT_EXTERN knut_status knut_graphar_edge_save(const knut_graphar_edge_info *ei, const char *path,
                                               knut_error *err);
KNUT_EXTERN knut_status knut_graphar_graph_save(const knut_graphar_graph_info *gi, const char *path,
                                                knut_error *err);
/*
 * Writes dir/<name>.graph.yml plus every vertex and edge info as
 * dir/<vertex_files[i]> and dir/<edge_files[i]>. dir must exist.
 */
KNUT_EXTERN knut_status knut_graphar_graph_save_all(const knut_graphar_graph_info *gi,
                                                    const char *dir, knut_error *err);

#ifdef __cplusplus
}
#endif

#endif /* KNUT_GRAPHAR_INFO_H */
