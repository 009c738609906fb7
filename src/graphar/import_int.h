/*
 * Internals of `knut gar import` (import.c loads and checks the config,
 * import_run.c turns it into infos and writer calls). Strings are borrowed
 * from the config tree, which the plan keeps alive, so every later error
 * can still name the file:line:col it came from.
 */
#ifndef KNUT_GRAPHAR_IMPORT_INT_H
#define KNUT_GRAPHAR_IMPORT_INT_H

#include "write_int.h"

/* One property of the config: a source column, maybe renamed, maybe typed. */
typedef struct imp_prop {
    const knut_conf *node;
    const char *name;
    const char *column;   /* source column (default: name) */
    const char *type;     /* data_type text; NULL: inferred from the source */
    int primary, primary_given;
    int nullable, nullable_given;
    knut_graphar_cardinality card;
    const char *delimiter; /* split a string column into a list */
} imp_prop;

typedef struct imp_group {
    const knut_conf *node;
    knut_graphar_file_type ft;
    const char *prefix;   /* NULL: the reference default */
    imp_prop *props;
    size_t n_props;
} imp_group;

/* Where rows come from: files (Parquet or CSV, paths or globs) or SQL. */
typedef struct imp_source {
    const knut_conf *node;
    char **paths;         /* resolved against the config's directory */
    size_t n_paths;
    const char *query;
    int csv;
    const knut_conf *csv_opts; /* map of read_csv options, or NULL */
} imp_source;

typedef struct imp_label {
    const char *name;
    const char *column;   /* boolean column; NULL: from label_column */
} imp_label;

typedef struct imp_vertex {
    const knut_conf *node;
    const char *type;
    imp_source src;
    const char **keys;
    size_t n_keys;
    const knut_conf *key_node;
    int order_by_key;
    int64_t chunk_size;
    const char *prefix;
    imp_label *labels;
    size_t n_labels;
    const char *label_column;
    const char *label_delimiter;
    imp_group *groups;    /* n_groups 0: every source column, one group */
    size_t n_groups;
} imp_vertex;

typedef struct imp_adj {
    knut_graphar_adj_list_type type;
    knut_graphar_file_type ft;
    const char *prefix;
} imp_adj;

typedef struct imp_edge {
    const knut_conf *node;
    const char *edge_type;
    const char *src_type, *dst_type;
    const char **src_keys, **dst_keys;
    size_t n_src_keys, n_dst_keys;
    imp_source src;
    int directed;
    int64_t chunk_size;
    const char *prefix;
    imp_adj *adj;
    size_t n_adj;
    imp_group *groups;
    size_t n_groups;
    knut_graphar_unknown_key on_unknown;
    char *rejects;        /* resolved path or NULL */
} imp_edge;

struct knut_graphar_import {
    knut_conf *root;
    char *dir;            /* the config file's directory, with '/' */
    const char *graph;
    char *output;         /* resolved, or NULL */
    knut_graphar_file_type ft;
    int64_t vchunk, echunk;
    const char *compression;
    const char *memory_limit, *temp_directory;
    int64_t threads;
    imp_vertex *v;
    size_t nv;
    imp_edge *e;
    size_t ne;
};

/* Defaults (those of the Spark writer: 2^18 vertices, 2^22 edges per chunk). */
#define KNUT_GRAPHAR_IMPORT_VCHUNK ((int64_t)1 << 18)
#define KNUT_GRAPHAR_IMPORT_ECHUNK ((int64_t)1 << 22)

/* path as given if absolute, else dir + path (malloc'ed). */
char *knut_graphar__import_resolve(const char *dir, const char *path);

/* The relation's columns with their Arrow formats (list: the element's). */
typedef struct scol {
    char *name;
    char fmt[64];
    char elem[64]; /* "" unless a list */
} scol;

/* ---- import_source.c ---------------------------------------------------- */

/* The SQL relation a source reads: read_parquet / read_csv over the
 * paths (quoted literals), or the query in parentheses. */
void knut_graphar__import_source_sql(const imp_source *s, knut_buf *b);
/* The source as messages name it: the first path, or "query at file:line". */
void knut_graphar__import_source_name(const imp_source *s, char *out, size_t cap);
/* The relation's columns and their Arrow formats (SELECT ... LIMIT 0). */
knut_status knut_graphar__import_describe(knut_duck_conn *conn, const char *rel, const char *name,
                                          scol **out, size_t *n_out, knut_error *err);
void knut_graphar__import_scols_free(scol *c, size_t n);
const scol *knut_graphar__import_find_col(const scol *c, size_t n, const char *name);
/* The data_type text of property p over column c (its own or inferred). */
knut_status knut_graphar__import_prop_type(const imp_prop *p, const scol *c, const char *field,
                                           char *buf, size_t cap, knut_error *err);
/*
 * Appends ", s.col AS alias" to sel for key column k and returns the alias
 * (malloc'ed): the column's own name, so the writer's messages name it,
 * unless a property in gs or an earlier key (taken) has that name; then
 * fallback + k. A property that is this very column is shared (nothing
 * appended).
 */
char *knut_graphar__import_key_alias(knut_buf *sel, const imp_group *gs, size_t ng,
                                     char *const *taken, size_t n_taken, const char *col,
                                     const char *fallback, size_t k);

#endif
