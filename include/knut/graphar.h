/*
 * knut graphar: Apache GraphAr `gar/v1`. This header holds the info model
 * (graph, vertex and edge info YAML files), loading them with file:line:col
 * errors, dumping them in the exact text form the reference C++ library
 * writes, the directory/chunk layout (every data file's path), chunk math,
 * and the 8-byte count files. Chunk readers, the writer and the validator
 * build on these structs, which are therefore transparent.
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
#ifndef KNUT_GRAPHAR_H
#define KNUT_GRAPHAR_H

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

/* Parses text into v (reset first); EINVAL "invalid version string". */
KNUT_EXTERN knut_status knut_graphar_version_parse(knut_graphar_version *v, const char *text,
                                                   knut_error *err);
/* Appends "gar/v1" or "gar/v1 (t1,t2)" to out. */
KNUT_EXTERN knut_status knut_graphar_version_format(const knut_graphar_version *v, knut_buf *out);
KNUT_EXTERN void knut_graphar_version_reset(knut_graphar_version *v);

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

KNUT_EXTERN void knut_graphar_vertex_info_free(knut_graphar_vertex_info *vi);
KNUT_EXTERN void knut_graphar_edge_info_free(knut_graphar_edge_info *ei);
KNUT_EXTERN void knut_graphar_graph_info_free(knut_graphar_graph_info *gi);

/* ---- building infos in memory ------------------------------------------ */

/*
 * Constructors take copies of their strings. prefix NULL means the default.
 * They refuse what the reference's Create* factories refuse (empty names,
 * chunk sizes <= 0). Version is set to gar/v1.
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

/* First match or NULL. */
KNUT_EXTERN knut_graphar_vertex_info *
knut_graphar_graph_info_vertex(const knut_graphar_graph_info *gi, const char *type);
KNUT_EXTERN knut_graphar_edge_info *knut_graphar_graph_info_edge(const knut_graphar_graph_info *gi,
                                                                 const char *src_type,
                                                                 const char *edge_type,
                                                                 const char *dst_type);
/* Property by name across groups; *group_out (may be NULL) gets its group. */
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
 * Spark uses the prefix instead). Errors name file:line:col and the field.
 */
KNUT_EXTERN knut_status knut_graphar_graph_load(knut_graphar_graph_info **out, const char *path,
                                                knut_error *err);
/*
 * The graph YAML from memory. name is used in error positions. dir is the
 * directory the listed files resolve against (it is also the default
 * prefix); dir NULL parses the graph YAML only: the listed files are
 * kept in vertex_files/edge_files but not loaded (n_vertices = n_edges = 0)
 * and a missing prefix stays "".
 */
KNUT_EXTERN knut_status knut_graphar_graph_load_yaml(knut_graphar_graph_info **out,
                                                     const char *text, size_t len, const char *name,
                                                     const char *dir, knut_error *err);
/* Single vertex / edge info files, from a path or from memory. */
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
KNUT_EXTERN knut_status knut_graphar_graph_dump(const knut_graphar_graph_info *gi, unsigned flags,
                                                knut_buf *out, knut_error *err);

/* Writes one YAML file (created or truncated). */
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

/* ---- layout: paths ----------------------------------------------------- */

/*
 * Every function appends one path to out. base goes first, plus a '/' if
 * it lacks one: pass NULL for the path relative to the graph prefix (what
 * the reference's getters return), gi->prefix for the path the reference
 * reads (it concatenates `prefix + path`), or gi->base_dir to find data
 * beside the YAML (the nebula corpus has an absolute prefix that does not
 * exist). Parts are joined with a '/' added after any part that does not
 * end in one (the reference's BuildPath), so an info prefix without a
 * trailing slash still works, except in the label path, which the
 * reference builds by plain concatenation.
 * They return KNUT_EINVAL on a NULL info or negative index, or out's
 * sticky error.
 */
/* V/P/  and  V/P/chunk<c> */
KNUT_EXTERN knut_status knut_graphar_path_vertex_group(knut_buf *out, const char *base,
                                                       const knut_graphar_vertex_info *vi,
                                                       const knut_graphar_property_group *g);
KNUT_EXTERN knut_status knut_graphar_path_vertex_chunk(knut_buf *out, const char *base,
                                                       const knut_graphar_vertex_info *vi,
                                                       const knut_graphar_property_group *g,
                                                       int64_t chunk);
/* V/vertex_count */
KNUT_EXTERN knut_status knut_graphar_path_vertex_count(knut_buf *out, const char *base,
                                                       const knut_graphar_vertex_info *vi);
/* <V as written>labels/chunk<c> (always Parquet) */
KNUT_EXTERN knut_status knut_graphar_path_label_chunk(knut_buf *out, const char *base,
                                                      const knut_graphar_vertex_info *vi,
                                                      int64_t chunk);
/* E/A/ : the adj list's directory */
KNUT_EXTERN knut_status knut_graphar_path_adj_list_dir(knut_buf *out, const char *base,
                                                       const knut_graphar_edge_info *ei,
                                                       const knut_graphar_adj_list *al);
/* E/A/adj_list/part<part>/chunk<chunk> */
KNUT_EXTERN knut_status knut_graphar_path_adj_chunk(knut_buf *out, const char *base,
                                                    const knut_graphar_edge_info *ei,
                                                    const knut_graphar_adj_list *al, int64_t part,
                                                    int64_t chunk);
/* E/A/offset/chunk<part> (ordered types only: EINVAL otherwise) */
KNUT_EXTERN knut_status knut_graphar_path_offset_chunk(knut_buf *out, const char *base,
                                                       const knut_graphar_edge_info *ei,
                                                       const knut_graphar_adj_list *al,
                                                       int64_t part);
/* E/A/P/part<part>/chunk<chunk> */
KNUT_EXTERN knut_status knut_graphar_path_edge_chunk(knut_buf *out, const char *base,
                                                     const knut_graphar_edge_info *ei,
                                                     const knut_graphar_adj_list *al,
                                                     const knut_graphar_property_group *g,
                                                     int64_t part, int64_t chunk);
/* E/A/edge_count<part> */
KNUT_EXTERN knut_status knut_graphar_path_edge_count(knut_buf *out, const char *base,
                                                     const knut_graphar_edge_info *ei,
                                                     const knut_graphar_adj_list *al, int64_t part);
/* E/A/vertex_count: the aligned vertex type's count */
KNUT_EXTERN knut_status knut_graphar_path_aligned_vertex_count(knut_buf *out, const char *base,
                                                               const knut_graphar_edge_info *ei,
                                                               const knut_graphar_adj_list *al);

/* ---- layout: chunk math ------------------------------------------------ */

/* ceil(count / chunk_size); 0 for count <= 0 or chunk_size <= 0. Used for
 * vertex chunks, parts (aligned vertex count / aligned chunk size) and edge
 * chunks of a part (edge_count<i> / chunk_size). */
KNUT_EXTERN int64_t knut_graphar_chunk_count(int64_t count, int64_t chunk_size);
/* Rows in chunk c of count rows cut into chunk_size pieces (0 past the end). */
KNUT_EXTERN int64_t knut_graphar_chunk_rows(int64_t count, int64_t chunk_size, int64_t c);
/* The aligned side's chunk size: src_chunk_size for *_by_source, else dst. */
KNUT_EXTERN int64_t knut_graphar_aligned_chunk_size(const knut_graphar_edge_info *ei,
                                                    knut_graphar_adj_list_type t);
/* The aligned side's vertex type name: src_type for *_by_source, else dst. */
KNUT_EXTERN const char *knut_graphar_aligned_type(const knut_graphar_edge_info *ei,
                                                  knut_graphar_adj_list_type t);

/* ---- count files ------------------------------------------------------- */

/*
 * vertex_count and edge_count<i> hold exactly 8 bytes: a little-endian
 * int64, no header. Reading checks the size (EPARSE naming the file and the
 * size found) and refuses negative values; ENOTFOUND if the file is absent.
 */
KNUT_EXTERN knut_status knut_graphar_count_read(const char *path, int64_t *out, knut_error *err);
/* Decodes bytes already read (name is used in messages). */
KNUT_EXTERN knut_status knut_graphar_count_decode(const void *bytes, size_t len, const char *name,
                                                  int64_t *out, knut_error *err);
KNUT_EXTERN void knut_graphar_count_encode(int64_t value, unsigned char out[8]);
/* Writes the file (created or truncated), creating no directories. */
KNUT_EXTERN knut_status knut_graphar_count_write(const char *path, int64_t value, knut_error *err);

/* ---- chunk readers (src/graphar/read*.c) ---- */

/*
 * Reading chunk data as Arrow C streams, over DuckDB (read_parquet,
 * read_csv, read_json). Every stream yields struct batches of at most 2048
 * rows (DuckDB's vector size), walking the chunk files one at a time, so
 * memory stays bounded by one chunk's row group whatever the graph size.
 *
 * Output types are exactly the reference's Arrow types (graphar.md §4.1),
 * whatever the file stored: bool -> boolean, int32/int64, float/double,
 * string -> large_utf8, date -> date32, timestamp -> timestamp[ms] (no
 * zone; Parquet MICROS/NANOS are truncated to ms, CSV/JSON text with a UTC
 * offset is converted to UTC), list<T> and cardinality list/set ->
 * list<T> (child "item"). Types come from the info, never from sniffing:
 * CSV columns are declared (the header is read to learn the column order
 * and the delimiter, ',' or '|' or ';' or tab), and CSV strings are never
 * null (an empty field is "", as in the reference's Arrow CSV reader).
 *
 * Columns: vertex streams start with `_graphArVertexIndex` (int64, not
 * null), always computed as chunk * chunk_size + row; where a chunk file
 * has the column (it may lack it, as the nebula corpus does), its values
 * must agree or the read fails naming the file and row. Adj-list streams
 * have `_graphArSrcIndex`, `_graphArDstIndex` (int64, not null), offset
 * streams `_graphArOffset` (int64; Spark's int32 is widened). Label
 * streams: the vertex index, then one boolean column per label.
 *
 * Files: Parquet, CSV (header row, '"' quoting) and JSON Lines. ORC chunks
 * fail with KNUT_EUNSUPPORTED naming the file (DuckDB has no ORC reader).
 * Opening a stream checks every chunk file it will read exists (a missing
 * one is KNUT_ENOTFOUND naming its path, before any row) and opens the
 * first chunk; a file DuckDB cannot read fails with DuckDB's message
 * prefixed by the file's path. Row counts are checked per chunk against
 * vertex_count / edge_count<i> (every chunk but the last is full).
 *
 * Counts follow the reference: reading all chunks of a vertex type needs
 * V/vertex_count; all parts of an adj list need E/A/vertex_count (the
 * number of parts) and E/A/edge_count<i> (parts with 0 edges have no
 * files and are skipped).
 *
 * Lifetimes: the infos passed in must outlive the streams made from them.
 * A reader runs one stream at a time (they share its DuckDB connection):
 * opening a second while one is unreleased fails with KNUT_EAGAIN. A
 * stream keeps its reader alive, so the reader may be freed first. A
 * connection passed in must stay open until the reader and its streams
 * are released, and must keep DuckDB's preserve_insertion_order on (the
 * default; chunk rows would come out of order otherwise: KNUT_EINVAL).
 */
struct ArrowArrayStream;
typedef struct knut_duck_conn knut_duck_conn;

typedef struct knut_graphar_reader knut_graphar_reader;

/* "Every chunk / part" in the range arguments below. */
#define KNUT_GRAPHAR_ALL ((int64_t)-1)

typedef struct knut_graphar_read_options {
    int version;     /* KNUT_GRAPHAR_READ_OPTIONS_VERSION */
    int64_t limit;   /* each stream ends after this many rows (no further
                        chunk is opened); <= 0: no limit */
} knut_graphar_read_options;

#define KNUT_GRAPHAR_READ_OPTIONS_VERSION 1
#define KNUT_GRAPHAR_READ_OPTIONS_INIT {.version = KNUT_GRAPHAR_READ_OPTIONS_VERSION}

/*
 * Makes a reader of the data under base (the directory paths are relative
 * to: see knut_graphar_graph_data_dir; NULL or "" = the current directory).
 * conn NULL: a private in-memory DuckDB database is opened at the first
 * stream. opts may be NULL.
 */
KNUT_EXTERN knut_status knut_graphar_reader_new(knut_graphar_reader **out, knut_duck_conn *conn,
                                                const char *base,
                                                const knut_graphar_read_options *opts,
                                                knut_error *err);
/* Drops the caller's handle (NULL-safe); open streams keep working. */
KNUT_EXTERN void knut_graphar_reader_free(knut_graphar_reader *r);

/*
 * Where a loaded graph's data is: gi->prefix (what the reference reads) if
 * it is an existing directory, else gi->base_dir (the YAML's directory;
 * the nebula corpus names an absolute prefix that does not exist), with a
 * warning logged. Points into gi.
 */
KNUT_EXTERN const char *knut_graphar_graph_data_dir(const knut_graphar_graph_info *gi);

/* ---- counts (8-byte files; no DuckDB needed) */

/* V/vertex_count. */
KNUT_EXTERN knut_status knut_graphar_reader_vertex_count(knut_graphar_reader *r,
                                                         const knut_graphar_vertex_info *vi,
                                                         int64_t *out, knut_error *err);
/* E/A/vertex_count: the aligned side's vertex count (the parts' basis). */
KNUT_EXTERN knut_status knut_graphar_reader_aligned_count(knut_graphar_reader *r,
                                                          const knut_graphar_edge_info *ei,
                                                          knut_graphar_adj_list_type type,
                                                          int64_t *out, knut_error *err);
/* E/A/edge_count<part>, or with part = KNUT_GRAPHAR_ALL the sum over every
 * part (ceil(aligned count / aligned chunk size) of them). */
KNUT_EXTERN knut_status knut_graphar_reader_edge_count(knut_graphar_reader *r,
                                                       const knut_graphar_edge_info *ei,
                                                       knut_graphar_adj_list_type type,
                                                       int64_t part, int64_t *out, knut_error *err);

/* ---- streams (release *out when done, read to the end or not) */

/*
 * One property group of a vertex type: chunks [chunk, chunk + n_chunks),
 * n_chunks = KNUT_GRAPHAR_ALL for through the last chunk (needs
 * vertex_count). Columns: vertex index, then the group's properties.
 */
KNUT_EXTERN knut_status knut_graphar_reader_vertex_group(knut_graphar_reader *r,
                                                         const knut_graphar_vertex_info *vi,
                                                         const knut_graphar_property_group *g,
                                                         int64_t chunk, int64_t n_chunks,
                                                         struct ArrowArrayStream *out,
                                                         knut_error *err);
/* The label chunks of a vertex type (vi->n_labels > 0), same range rules. */
KNUT_EXTERN knut_status knut_graphar_reader_labels(knut_graphar_reader *r,
                                                   const knut_graphar_vertex_info *vi,
                                                   int64_t chunk, int64_t n_chunks,
                                                   struct ArrowArrayStream *out, knut_error *err);
/* Every vertex of the type: the vertex index, every group's properties (in
 * YAML order) and the label columns, the groups' chunks joined row by row
 * (their vertex index columns must agree). */
KNUT_EXTERN knut_status knut_graphar_reader_vertices(knut_graphar_reader *r,
                                                     const knut_graphar_vertex_info *vi,
                                                     struct ArrowArrayStream *out, knut_error *err);
/*
 * An adjacency list: chunk `chunk` of part `part`; chunk = ALL for every
 * chunk of the part; part = ALL (chunk must be ALL) for every part.
 */
KNUT_EXTERN knut_status knut_graphar_reader_adj_list(knut_graphar_reader *r,
                                                     const knut_graphar_edge_info *ei,
                                                     knut_graphar_adj_list_type type, int64_t part,
                                                     int64_t chunk, struct ArrowArrayStream *out,
                                                     knut_error *err);
/* The offset chunk of a part (ordered adj lists only); its length is the
 * aligned chunk size + 1 (padded) or the part's vertices + 1. */
KNUT_EXTERN knut_status knut_graphar_reader_offsets(knut_graphar_reader *r,
                                                    const knut_graphar_edge_info *ei,
                                                    knut_graphar_adj_list_type type, int64_t part,
                                                    struct ArrowArrayStream *out, knut_error *err);
/* An edge property group, stored per adj list: part/chunk as for adj_list. */
KNUT_EXTERN knut_status knut_graphar_reader_edge_group(knut_graphar_reader *r,
                                                       const knut_graphar_edge_info *ei,
                                                       knut_graphar_adj_list_type type,
                                                       const knut_graphar_property_group *g,
                                                       int64_t part, int64_t chunk,
                                                       struct ArrowArrayStream *out,
                                                       knut_error *err);
/* Every edge of one adj list: src, dst, then every group's properties. */
KNUT_EXTERN knut_status knut_graphar_reader_edges(knut_graphar_reader *r,
                                                  const knut_graphar_edge_info *ei,
                                                  knut_graphar_adj_list_type type,
                                                  struct ArrowArrayStream *out, knut_error *err);

/*
 * Turns a failed get_schema/get_next result (code) of a reader stream into
 * its exact status and message (ENOTFOUND, EUNSUPPORTED, ... which errno
 * codes cannot carry); for other streams as knut_arrow_stream_error.
 */
KNUT_EXTERN knut_status knut_graphar_stream_status(struct ArrowArrayStream *stream, int code,
                                                   knut_error *err);

/* ---- writer and builders (src/graphar/write*.c) ---- */

/*
 * The writer turns rows into a GraphAr graph with DuckDB doing the heavy
 * work: vertex indices, key -> index mapping, sorting edges per adj list,
 * and writing every chunk with COPY, so memory stays bounded by DuckDB's
 * memory_limit (it spills to temp_directory) however large the input.
 *
 * Usage: build a graph info (knut_graphar_graph_info_new + vertex/edge
 * infos, or a loaded one), create a writer over it, write each vertex type,
 * then each edge type (its endpoint types must be written first), then
 * finish (saves the YAML files). Sources are SQL queries or tables on the
 * writer's connection, e.g. an Arrow stream registered with
 * knut_duck_register_stream(knut_graphar_writer_conn(w), "people", ...).
 *
 * What is written, per the reference C++ writer:
 *  - vertex indices 0..N-1 in input order (or in key order on request);
 *    every property group gets V/P/chunk<c> with `_graphArVertexIndex`
 *    (int64, never null) first, then the group's properties in info order,
 *    cast to their GraphAr types (timestamp: ms, list<T>: LIST of T);
 *    V/vertex_count; V/labels/chunk<c> (Parquet, one bool column per label,
 *    zstd) when the info has labels;
 *  - per adj list: edges sorted by (src, dst) for ordered_by_source, by
 *    (dst, src) for ordered_by_dest, grouped by the aligned vertex chunk only
 *    for unordered_* (input order inside a part); E/A/adj_list/part<i>/
 *    chunk<j> with `_graphArSrcIndex`, `_graphArDstIndex` (int64); parts
 *    with no edges get no directory; E/A/edge_count<i> for every part;
 *    E/A/offset/chunk<i> for ordered lists, padded to aligned chunk size + 1
 *    entries as current C++ does; E/A/vertex_count (the aligned type's
 *    count); every edge property group as E/A/P/part<i>/chunk<j> in the adj
 *    list's order.
 *  - Parquet (compression per options, default snappy) or CSV in the Arrow
 *    writer's dialect: header row, ',', strings always double-quoted (so ""
 *    is an empty string and an empty field is null), numbers bare. ORC and
 *    JSON are KNUT_EUNSUPPORTED; list types in CSV are KNUT_EINVAL.
 * Deviation: DuckDB 1.4 writes every Parquet column OPTIONAL, so the index
 * columns are OPTIONAL (as Spark writes them) where C++ writes REQUIRED.
 *
 * Checked before anything is written, with errors naming the source, the
 * 1-based row and the column: values that do not convert to the property's
 * type, nulls in non-nullable properties or in keys, duplicate keys,
 * duplicates in `set` properties, and edge endpoints whose key matches no
 * vertex (rejected, or skipped and recorded with KNUT_GRAPHAR_UNKNOWN_SKIP).
 */
typedef struct knut_duck_conn knut_duck_conn; /* knut/duck.h */
typedef struct knut_graphar_writer knut_graphar_writer;

#define KNUT_GRAPHAR_WRITER_OPTIONS_VERSION 1
typedef struct knut_graphar_writer_options {
    int version;                     /* KNUT_GRAPHAR_WRITER_OPTIONS_VERSION */
    const char *memory_limit;        /* DuckDB memory_limit ("2GB"); NULL: DuckDB's default */
    const char *temp_directory;      /* where DuckDB spills; NULL: a fresh directory under
                                      * $TMPDIR (or /tmp), removed by knut_graphar_writer_free */
    int threads;                     /* DuckDB threads; 0: DuckDB's default (all cores) */
    const char *parquet_compression; /* DuckDB codec name; NULL: "snappy" */
    int overwrite;                   /* 1: empty each vertex/edge prefix directory before
                                      * writing it; 0: refuse a non-empty one */
} knut_graphar_writer_options;
#define KNUT_GRAPHAR_WRITER_OPTIONS_INIT {.version = KNUT_GRAPHAR_WRITER_OPTIONS_VERSION}

/* What one write produced. */
typedef struct knut_graphar_write_stats {
    int64_t rows;    /* vertices or edges written (edges: once, not per adj list) */
    int64_t skipped; /* edges dropped for unknown endpoints (KNUT_GRAPHAR_UNKNOWN_SKIP) */
    int64_t files;   /* files written: chunks, offsets, labels, counts */
    double seconds;  /* wall time of the call */
} knut_graphar_write_stats;

/*
 * Where vertices come from: exactly one of query (SQL whose result rows are
 * the vertices) or table (a table or view on the writer's connection). The
 * rows need a column named like each property of the vertex info (extra
 * columns are ignored). name describes the source in error messages (the
 * file the rows came from, say); NULL: the table name or "query".
 */
typedef struct knut_graphar_vertex_source {
    const char *query;
    const char *table;
    const char *name;
    /* Columns that identify a vertex; edges name the same number of columns
     * to refer to it. n_keys 0: the info's single primary-key property. */
    const char *const *keys;
    size_t n_keys;
    /* One boolean column per vi->labels[i] (null counts as false); NULL:
     * columns named like the labels. Ignored when the info has no labels. */
    const char *const *label_columns;
    int order_by_key; /* 1: index = rank by key; 0: input order */
} knut_graphar_vertex_source;

typedef enum knut_graphar_unknown_key {
    KNUT_GRAPHAR_UNKNOWN_ERROR = 0, /* fail, naming the first such row and key */
    KNUT_GRAPHAR_UNKNOWN_SKIP       /* drop those edges, log a warning with the count,
                                     * and write them to rejects_path if set */
} knut_graphar_unknown_key;

/*
 * Where edges come from: query or table as for vertices, with src_keys /
 * dst_keys naming the columns matched (in order) against the keys the
 * endpoint vertex types were written with, and a column per edge property.
 */
typedef struct knut_graphar_edge_source {
    const char *query;
    const char *table;
    const char *name;
    const char *const *src_keys;
    size_t n_src_keys;
    const char *const *dst_keys;
    size_t n_dst_keys;
    knut_graphar_unknown_key on_unknown;
    /* With SKIP: a Parquet file receiving the dropped rows (their key and
     * property columns plus `row`, the 1-based source row); NULL: none. */
    const char *rejects_path;
} knut_graphar_edge_source;

/*
 * Creates a writer that writes gi's data under dir (created if missing;
 * the graph's prefix) with its own in-memory DuckDB. gi is borrowed: it
 * must outlive the writer, and may gain vertex/edge infos until they are
 * written. opts may be NULL (defaults). A gi->prefix that was given must
 * name dir.
 */
KNUT_EXTERN knut_status knut_graphar_writer_new(knut_graphar_writer **out,
                                                knut_graphar_graph_info *gi, const char *dir,
                                                const knut_graphar_writer_options *opts,
                                                knut_error *err);
/* The writer's connection, to register Arrow streams or create tables the
 * sources read. Owned by the writer. */
KNUT_EXTERN knut_duck_conn *knut_graphar_writer_conn(knut_graphar_writer *w);
/* Writes every data file of vertex type `type` (once per type). stats may
 * be NULL. The key -> index mapping stays in DuckDB for the edges. */
KNUT_EXTERN knut_status knut_graphar_writer_write_vertices(knut_graphar_writer *w, const char *type,
                                                           const knut_graphar_vertex_source *src,
                                                           knut_graphar_write_stats *stats,
                                                           knut_error *err);
/* Writes every adj list (and its property groups) of the edge type. */
KNUT_EXTERN knut_status knut_graphar_writer_write_edges(knut_graphar_writer *w,
                                                        const char *src_type, const char *edge_type,
                                                        const char *dst_type,
                                                        const knut_graphar_edge_source *src,
                                                        knut_graphar_write_stats *stats,
                                                        knut_error *err);
/* Saves dir/<name>.graph.yml and every vertex/edge info YAML beside it
 * (knut_graphar_graph_save_all). Infos that were not written get YAML
 * files too: write every type first. */
KNUT_EXTERN knut_status knut_graphar_writer_finish(knut_graphar_writer *w, knut_error *err);
/* Closes the database and removes the writer's own spill directory (NULL-safe). */
KNUT_EXTERN void knut_graphar_writer_free(knut_graphar_writer *w);

/*
 * `knut gar import`: a YAML/JSON config naming tables (Parquet/CSV paths,
 * globs or SQL queries) and how they map onto vertex and edge types; the
 * schema is in docs/graphar.md, "Importing tables". Loading checks the
 * config's shape with errors naming file:line:col; running builds the infos
 * (inferring property types from the sources where none is given), writes
 * every type with the writer and saves the YAMLs.
 */
typedef struct knut_graphar_import knut_graphar_import;

#define KNUT_GRAPHAR_IMPORT_OPTIONS_VERSION 1
typedef struct knut_graphar_import_options {
    int version;              /* KNUT_GRAPHAR_IMPORT_OPTIONS_VERSION */
    const char *output;       /* overrides the config's `output` (relative to the cwd) */
    const char *memory_limit; /* override the config's settings */
    const char *temp_directory;
    int threads;              /* 0: the config's, else DuckDB's default */
    int overwrite;            /* as knut_graphar_writer_options.overwrite */
    /* Called after each vertex/edge type is written (may be NULL); what is
     * "vertex <type>" or "edge <src>_<edge>_<dst>". */
    void (*progress)(void *ctx, const char *what, const knut_graphar_write_stats *st);
    void *progress_ctx;
} knut_graphar_import_options;
#define KNUT_GRAPHAR_IMPORT_OPTIONS_INIT {.version = KNUT_GRAPHAR_IMPORT_OPTIONS_VERSION}

KNUT_EXTERN knut_status knut_graphar_import_load(knut_graphar_import **out, const char *path,
                                                 knut_error *err);
/* Runs the import (opts may be NULL). *graph_yml (may be NULL) gets the
 * path of the written graph YAML (caller frees). */
KNUT_EXTERN knut_status knut_graphar_import_run(knut_graphar_import *imp,
                                                const knut_graphar_import_options *opts,
                                                char **graph_yml, knut_error *err);
KNUT_EXTERN void knut_graphar_import_free(knut_graphar_import *imp);

/* ---- validator (src/graphar/validate*.c) ---- */

/*
 * Checks a graph against the reference's info rules (IsValidated, the
 * `graphar check` CLI) and against its data: count files, the chunk set
 * each count implies, rows per chunk, column names and types, vertex
 * indices, adjacency ranges, partitioning, sort order and offsets. Data is
 * read through DuckDB with aggregates only (count, min/max, lag), so memory
 * stays bounded whatever the graph size. Parquet and CSV chunks are read;
 * ORC and JSON chunks are checked for existence only.
 *
 * Severity follows the reference: what it refuses, or what breaks readers,
 * is an error; what it accepts (and the official corpus contains) is at
 * most a warning. Every rule has a stable id, listed by
 * knut_graphar_validate_rules() and in docs/graphar.md.
 */
typedef enum knut_graphar_severity {
    KNUT_GRAPHAR_SEV_ERROR,
    KNUT_GRAPHAR_SEV_WARNING
} knut_graphar_severity;

/* "error" / "warning". */
KNUT_EXTERN const char *knut_graphar_severity_name(knut_graphar_severity s);

typedef struct knut_graphar_issue {
    knut_graphar_severity severity;
    const char *rule;   /* stable id, e.g. "chunk.missing" (static string) */
    char *file;         /* the YAML or data file (or directory) concerned */
    int line, col;      /* position in a YAML file; 0 when not applicable */
    char *field;        /* YAML field path, column, or chunk; "" if none */
    char *message;      /* one line */
} knut_graphar_issue;

typedef struct knut_graphar_issues {
    knut_graphar_issue *items; /* in the order found */
    size_t n;
    size_t n_errors;    /* among items */
    size_t n_warnings;
    int truncated;      /* max_issues was reached: checking stopped there */
} knut_graphar_issues;

/* NULL-safe; frees the list and everything in it. */
KNUT_EXTERN void knut_graphar_issues_free(knut_graphar_issues *issues);

/* One rule: its id, severity and one-line meaning. */
typedef struct knut_graphar_rule {
    const char *id;
    knut_graphar_severity severity;
    const char *meaning;
} knut_graphar_rule;

/* The rule table (static; *n gets its length). */
KNUT_EXTERN const knut_graphar_rule *knut_graphar_validate_rules(size_t *n);

#define KNUT_GRAPHAR_VALIDATE_OPTIONS_VERSION 1
#define KNUT_GRAPHAR_VALIDATE_DEFAULT_MAX_ISSUES 1000

typedef struct knut_graphar_validate_options {
    int version;          /* KNUT_GRAPHAR_VALIDATE_OPTIONS_VERSION */
    int info_only;        /* skip every data check */
    int require_data;     /* a type without any data is an error (data.missing)
                           * instead of a warning (data.absent) */
    size_t max_issues;    /* stop after this many; 0 = the default above */
    const char *data_dir; /* read data here instead of the graph prefix */
} knut_graphar_validate_options;

#define KNUT_GRAPHAR_VALIDATE_OPTIONS_INIT {.version = KNUT_GRAPHAR_VALIDATE_OPTIONS_VERSION}

/*
 * Validates the graph YAML at path (or the single *.graph.yml/.yaml in a
 * directory). Unlike knut_graphar_graph_load, a vertex or edge file that
 * fails to load does not stop the run: the failure becomes an issue naming
 * that file and the rule it breaks (type.unknown, version.bad, ...), and
 * the other files are still checked. Data is read from the graph prefix; a
 * prefix that does not exist (the nebula corpus has an absolute /tmp one)
 * falls back to the YAML's directory with a prefix.not_found warning.
 *
 * opts may be NULL (defaults). Returns KNUT_OK when the checks ran, even
 * if they found errors: *out (caller frees) holds the issues. Fails only on
 * bad arguments, OOM or an engine failure (*out is then NULL).
 */
KNUT_EXTERN knut_status knut_graphar_validate(const char *path,
                                              const knut_graphar_validate_options *opts,
                                              knut_graphar_issues **out, knut_error *err);

/* The same for a graph info already loaded or built in memory (data under
 * opts->data_dir, else gi->prefix with the same fallback to gi->base_dir). */
KNUT_EXTERN knut_status knut_graphar_validate_graph(const knut_graphar_graph_info *gi,
                                                    const knut_graphar_validate_options *opts,
                                                    knut_graphar_issues **out, knut_error *err);

#ifdef __cplusplus
}
#endif

#endif /* KNUT_GRAPHAR_H */
