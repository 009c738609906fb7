/*
 * knut graphar, writing: the writer that turns tables into a GraphAr
 * graph, and the import that drives it from a YAML file. Part of
 * knut/graphar.h.
 */
#ifndef KNUT_GRAPHAR_WRITE_H
#define KNUT_GRAPHAR_WRITE_H

#include <stddef.h>
#include <stdint.h>

#include "knut/core.h"
#include "knut/duck.h"
#include "knut/graphar_info.h"
#include "knut/graphar_layout.h"

#ifdef __cplusplus
extern "C" {
#endif

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
 * Those are KNUT_EINVAL; a file or directory that cannot be written is
 * KNUT_EIO naming it, a DuckDB failure DuckDB's error (knut/duck.h), and
 * any call may fail with KNUT_ENOMEM. A writer belongs to one thread.
 */
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
 * written. opts may be NULL (defaults; copied). A gi->prefix that was
 * given must name dir (KNUT_EINVAL). The caller frees *out with
 * knut_graphar_writer_free.
 */
KNUT_EXTERN knut_status knut_graphar_writer_new(knut_graphar_writer **out,
                                                knut_graphar_graph_info *gi, const char *dir,
                                                const knut_graphar_writer_options *opts,
                                                knut_error *err);
/* The writer's connection, to register Arrow streams or create tables the
 * sources read. Owned by the writer. */
KNUT_EXTERN knut_duck_conn *knut_graphar_writer_conn(knut_graphar_writer *w);
/* Writes every data file of vertex type `type` (once per type; src is
 * borrowed for the call). stats may be NULL. The key -> index mapping
 * stays in DuckDB for the edges. Errors as in the rules above;
 * KNUT_ENOTFOUND for a type gi does not have. */
KNUT_EXTERN knut_status knut_graphar_writer_write_vertices(knut_graphar_writer *w, const char *type,
                                                           const knut_graphar_vertex_source *src,
                                                           knut_graphar_write_stats *stats,
                                                           knut_error *err);
/* Writes every adj list (and its property groups) of the edge type; its
 * vertex types must be written first (KNUT_EINVAL otherwise). As above. */
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
 * `knut export --format graphar` (src/graphar/export.c): the rows of one
 * query written under dir as a GraphAr graph, either as vertex type
 * `label` (every column a property; `key`, default the first column, the
 * primary key: non-null and unique) or as edge type src_type -edge_type->
 * dst_type (columns src_column and dst_column are the endpoint keys, every
 * other column an edge property; the endpoint types are written too, each
 * with one property `id` holding the distinct keys in key order, so the
 * graph is complete and validates). chunk_rows bounds every chunk file.
 * Rows come from query (SQL on the writer's own DuckDB, with the DuckDB
 * file `attach` attached read-only and searched first) or from stream
 * (taken over: released before the call returns). Written into a staging
 * directory beside dir and swapped in only when complete, so a failure
 * leaves dir as it was. Errors as the writer's.
 */
#define KNUT_GRAPHAR_EXPORT_OPTIONS_VERSION 1
typedef struct knut_graphar_export_options {
    int version;                     /* KNUT_GRAPHAR_EXPORT_OPTIONS_VERSION */
    const char *graph;               /* graph name; NULL: "graph" */
    const char *query;               /* exactly one of query and stream */
    struct ArrowArrayStream *stream;
    const char *attach;              /* a DuckDB file for query; NULL: none */
    const char *label;               /* a vertex export, or ... */
    const char *key;                 /* its key column; NULL: the first column */
    const char *src_type, *edge_type, *dst_type; /* ... an edge export */
    const char *src_column, *dst_column;
    int64_t chunk_rows;              /* rows per chunk file (vertices and edges) */
    const char *file_type;           /* "parquet" (NULL) or "csv" */
    int order_by_key;                /* vertices: index = rank by key */
    const char *memory_limit;        /* DuckDB's; NULL: its default */
    int threads;                     /* 0: DuckDB's default */
    int overwrite;                   /* 1: replace a non-empty dir (swapped in at the end) */
} knut_graphar_export_options;
#define KNUT_GRAPHAR_EXPORT_OPTIONS_INIT {.version = KNUT_GRAPHAR_EXPORT_OPTIONS_VERSION}

KNUT_EXTERN knut_status knut_graphar_export_query(const char *dir,
                                                  const knut_graphar_export_options *o,
                                                  knut_graphar_write_stats *stats,
                                                  knut_error *err);

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

/* Loads and checks an import config (YAML, at most KNUT_CONF_MAX_BYTES);
 * errors as knut_conf_load_file, then KNUT_EINVAL / KNUT_ENOTFOUND naming
 * file:line:col (also err->line, err->col). The caller frees *out with
 * knut_graphar_import_free (NULL-safe). */
KNUT_EXTERN knut_status knut_graphar_import_load(knut_graphar_import **out, const char *path,
                                                 knut_error *err);
/* Runs the import (opts may be NULL). *graph_yml (may be NULL) gets the
 * path of the written graph YAML (caller frees). Errors as the writer's,
 * each prefixed with the config position of the step that failed. */
KNUT_EXTERN knut_status knut_graphar_import_run(knut_graphar_import *imp,
                                                const knut_graphar_import_options *opts,
                                                char **graph_yml, knut_error *err);
KNUT_EXTERN void knut_graphar_import_free(knut_graphar_import *imp);

#ifdef __cplusplus
}
#endif

#endif /* KNUT_GRAPHAR_WRITE_H */
