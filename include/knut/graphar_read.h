/*
 * knut graphar, reading: chunk readers that hand vertex and edge data out
 * as Arrow streams (through DuckDB). Part of knut/graphar.h.
 */
#ifndef KNUT_GRAPHAR_READ_H
#define KNUT_GRAPHAR_READ_H

#include <stddef.h>
#include <stdint.h>

#include "knut/core.h"
#include "knut/duck.h"
#include "knut/graphar_info.h"
#include "knut/graphar_layout.h"

#ifdef __cplusplus
extern "C" {
#endif

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
 * stream. opts may be NULL. base is copied, conn borrowed (see Lifetimes);
 * the caller frees *out with knut_graphar_reader_free. KNUT_EINVAL
 * (options version), KNUT_ENOMEM.
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

/* ---- counts (8-byte files; no DuckDB needed; errors as
 * knut_graphar_count_read, and KNUT_EINVAL for an index out of range) */

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

/* ---- streams (release *out when done, read to the end or not; errors as
 * in the rules above: KNUT_ENOTFOUND, KNUT_EUNSUPPORTED, KNUT_EAGAIN,
 * KNUT_EINVAL, and DuckDB's own, each naming the file) */

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
 * Views (src/graphar/read_sql.c): appends to out the text of one DuckDB
 * SELECT over every row of a vertex type (the columns of
 * knut_graphar_reader_vertices: the vertex index, the groups' properties,
 * the labels) or of one adj list of an edge type (those of
 * knut_graphar_reader_edges: src and dst indices, then the properties),
 * for a view that DuckDB then runs on its own: read_parquet over a glob
 * of each Parquet group's chunk files (keyed by their names), read_csv /
 * read_json of each CSV / JSON chunk named in the text, the groups joined
 * on (chunk, row); no list or struct constant, so duckdb_get_table_names
 * can bind the view. Types are the streams', except that timestamps are
 * TIMESTAMP (microseconds, whole ms) and strings VARCHAR. The chunk list
 * comes from the count files now; every chunk file must exist
 * (KNUT_ENOTFOUND naming it),
 * CSV headers must all be alike (KNUT_EINVAL naming the file), ORC is
 * KNUT_EUNSUPPORTED, over 16384 chunks KNUT_ETOOBIG. Parquet schemas are
 * read through the reader's connection (it must be able to read the
 * files: before a lock-down). A type with no chunks gives a typed SELECT
 * of no rows.
 */
KNUT_EXTERN knut_status knut_graphar_reader_vertices_sql(knut_graphar_reader *r,
                                                         const knut_graphar_vertex_info *vi,
                                                         knut_buf *out, knut_error *err);
KNUT_EXTERN knut_status knut_graphar_reader_edges_sql(knut_graphar_reader *r,
                                                      const knut_graphar_edge_info *ei,
                                                      knut_graphar_adj_list_type type,
                                                      knut_buf *out, knut_error *err);

/*
 * Turns a failed get_schema/get_next result (code) of a reader stream into
 * its exact status and message (ENOTFOUND, EUNSUPPORTED, ... which errno
 * codes cannot carry); for other streams as knut_arrow_stream_error.
 */
KNUT_EXTERN knut_status knut_graphar_stream_status(struct ArrowArrayStream *stream, int code,
                                                   knut_error *err);

#ifdef __cplusplus
}
#endif

#endif /* KNUT_GRAPHAR_READ_H */
