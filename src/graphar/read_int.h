/*
 * Internals of the chunk readers (read*.c). A read is described by a plan:
 * the files that make up one output chunk (one per property group, label
 * set or adjacency list, joined row by row), the output columns and which
 * file each comes from, and the range of chunks or parts to walk. The
 * stream (read_stream.c) walks the plan chunk by chunk, asks DuckDB for
 * each chunk with SQL built by read_source.c, and re-types DuckDB's Arrow
 * batches into the exact GraphAr Arrow types (read_array.c).
 */
#ifndef KNUT_GRAPHAR_READ_INT_H
#define KNUT_GRAPHAR_READ_INT_H

#include <stdatomic.h>

#include "graphar_int.h"
#include "knut/arrow.h"
#include "knut/duck.h"

/* Reserved column names (graphar.md §3.1). */
#define KNUT_GRAPHAR__VINDEX "_graphArVertexIndex"
#define KNUT_GRAPHAR__SRC "_graphArSrcIndex"
#define KNUT_GRAPHAR__DST "_graphArDstIndex"
#define KNUT_GRAPHAR__OFFSET "_graphArOffset"

struct knut_graphar_reader {
    /* Atomic because a stream may be released on another thread. */
    atomic_int refs;        /* the caller's handle + one per open stream */
    atomic_int busy;        /* a stream is open: one at a time per connection */
    char *base;             /* data directory (with a trailing '/') or "" */
    knut_graphar_read_options opts;
    knut_duck_db *own_db;   /* opened lazily when no connection was given */
    knut_duck_conn *conn;
    int own_conn;
    int order_checked;      /* preserve_insertion_order was verified */
};

/* The connection, opening the private in-memory database on first use. */
knut_status knut_graphar__reader_conn(knut_graphar_reader *r, knut_duck_conn **out,
                                      knut_error *err);
void knut_graphar__reader_unref(knut_graphar_reader *r);
/* E/A/vertex_count and E/A/edge_count<part> under the reader's base. */
knut_status knut_graphar__aligned_count(const knut_graphar_reader *r,
                                        const knut_graphar_edge_info *ei,
                                        const knut_graphar_adj_list *al, int64_t *out,
                                        knut_error *err);
knut_status knut_graphar__part_count(const knut_graphar_reader *r,
                                     const knut_graphar_edge_info *ei,
                                     const knut_graphar_adj_list *al, int64_t part,
                                     int64_t *out, knut_error *err);

/* ---- plans -------------------------------------------------------------- */

typedef enum knut_graphar__src_kind {
    KNUT_GRAPHAR__SRC_VGROUP, /* vertex property group chunk */
    KNUT_GRAPHAR__SRC_LABELS, /* vertex label chunk (always Parquet) */
    KNUT_GRAPHAR__SRC_ADJ,    /* adjacency list chunk */
    KNUT_GRAPHAR__SRC_EGROUP, /* edge property group chunk */
    KNUT_GRAPHAR__SRC_OFFSET  /* offset chunk of a part */
} knut_graphar__src_kind;

typedef struct knut_graphar__src {
    knut_graphar__src_kind kind;
    knut_graphar_file_type ft;
    const knut_graphar_property_group *g; /* VGROUP / EGROUP */
} knut_graphar__src;

typedef enum knut_graphar__col_kind {
    /* _graphArVertexIndex: made from chunk * chunk_size + row; copies in
     * the files are read as hidden columns and must agree. */
    KNUT_GRAPHAR__COL_VINDEX,
    KNUT_GRAPHAR__COL_ID,    /* reserved int64 column from the file, never null */
    KNUT_GRAPHAR__COL_PROP,  /* a property, cast to its GraphAr type */
    KNUT_GRAPHAR__COL_LABEL  /* one label: boolean */
} knut_graphar__col_kind;

typedef struct knut_graphar__col {
    const char *name;   /* output name = column name in the file */
    knut_graphar__col_kind kind;
    size_t src;         /* the chunk file it is read from (not VINDEX) */
    const knut_graphar_property *prop; /* PROP */
} knut_graphar__col;

typedef enum knut_graphar__walk {
    KNUT_GRAPHAR__WALK_VERTEX, /* vertex chunks [first, end) */
    KNUT_GRAPHAR__WALK_EDGE,   /* parts [first, end), chunks of each part */
    KNUT_GRAPHAR__WALK_OFFSET  /* offset chunks of parts [first, end) */
} knut_graphar__walk;

typedef struct knut_graphar__plan {
    char what[256];     /* "vertex person", "edge person_knows_person ...", for messages */
    const knut_graphar_vertex_info *vi;
    const knut_graphar_edge_info *ei;
    const knut_graphar_adj_list *al;
    knut_graphar__src *srcs;
    size_t n_srcs;
    knut_graphar__col *cols;
    size_t n_cols;
    knut_graphar__walk walk;
    int64_t first, end;     /* vertex chunks or parts */
    int64_t count;          /* vertex_count, -1 unknown (WALK_VERTEX) */
    int64_t part_chunk;     /* WALK_EDGE: the one chunk of each part, or ALL */
    int part_count_required; /* WALK_EDGE: edge_count<i> must exist */
} knut_graphar__plan;

/* Where the walk is. */
typedef struct knut_graphar__cursor {
    int64_t pos;        /* vertex chunk or part */
    int64_t chunk;      /* WALK_EDGE: next chunk within the part */
    int64_t part_edges; /* WALK_EDGE: edge_count of the part, -1 unknown */
    int part_open;      /* WALK_EDGE: part_edges is loaded for pos */
} knut_graphar__cursor;

/* One step of the walk: the files of the next output chunk. */
typedef struct knut_graphar__step {
    knut_buf *paths;    /* n_srcs paths */
    int64_t base_id;    /* first vertex id of the chunk (VINDEX) */
    int64_t rows;       /* rows the chunk must have, -1 unknown */
    int64_t max_rows;   /* rows it may have at most, -1 unbounded */
    int64_t index;      /* vertex chunk, or edge chunk within the part */
    int64_t part;       /* WALK_EDGE / WALK_OFFSET */
} knut_graphar__step;

/* Fills step with the next chunk; KNUT_EOF after the last. */
knut_status knut_graphar__plan_next(const knut_graphar_reader *r, const knut_graphar__plan *p,
                                    knut_graphar__cursor *cur, knut_graphar__step *step,
                                    knut_error *err);

/* The plans behind knut_graphar_reader_vertices and _edges (every chunk
 * and part, checked against the count files), for the streams and the
 * view SQL (read_sql.c). On failure p is reset. */
knut_status knut_graphar__plan_vertices(knut_graphar_reader *r, knut_graphar__plan *p,
                                        const knut_graphar_vertex_info *vi, knut_error *err);
knut_status knut_graphar__plan_edges(knut_graphar_reader *r, knut_graphar__plan *p,
                                     const knut_graphar_edge_info *ei,
                                     knut_graphar_adj_list_type type, knut_error *err);

/* Before any row: the file types are readable (not ORC) and every chunk
 * file of the plan exists, errors naming the path. */
knut_status knut_graphar__plan_check_files(const knut_graphar_reader *r,
                                          const knut_graphar__plan *p, knut_error *err);
/* Makes the stream over plan p (taken over: its arrays are freed with the
 * stream, also on failure). Checks the file types, that every chunk file
 * exists, and opens the first chunk, so the common errors come from here. */
knut_status knut_graphar__stream_open(knut_graphar_reader *r, knut_graphar__plan *p,
                                      struct ArrowArrayStream *out, knut_error *err);
void knut_graphar__plan_reset(knut_graphar__plan *p);

/* ---- chunk sources (read_source.c) ------------------------------------- */

/* What a chunk file holds, found by reading its header / schema. */
typedef struct knut_graphar__probe {
    char **names;           /* columns in file order */
    size_t n_names;
    knut_arrow_type_info *types; /* Parquet: each column's Arrow type */
    char delim;             /* CSV */
} knut_graphar__probe;

void knut_graphar__probe_reset(knut_graphar__probe *pr);
/* Reads the header (CSV, JSON Lines: first line) or schema (Parquet, via
 * DuckDB) of path. want: the column names expected (helps pick the CSV
 * delimiter). Errors name the file. */
knut_status knut_graphar__probe_file(knut_duck_conn *conn, const char *path,
                                     knut_graphar_file_type ft, const char *const *want,
                                     size_t n_want, knut_graphar__probe *out, knut_error *err);
/* Index of a column in the probe, or -1. */
int64_t knut_graphar__probe_find(const knut_graphar__probe *pr, const char *name);

/* Appends the SQL table expression reading files (SQL text: a parameter
 * "$1", a string literal, or for Parquet a list of them) as file type ft
 * with the probed columns, declaring CSV / JSON column types from the
 * plan's columns of source src. */
knut_status knut_graphar__sql_source(knut_buf *sql, const knut_graphar__plan *p, size_t src,
                                     const knut_graphar__probe *pr, const char *files,
                                     knut_error *err);
/* Appends the SELECT expression of column c, read from alias s<c->src>. */
knut_status knut_graphar__sql_column(knut_buf *sql, const knut_graphar__col *c,
                                     const knut_graphar_file_type ft,
                                     const knut_graphar__probe *pr, knut_error *err);

/* ---- output types and batches (read_array.c) --------------------------- */

/* The Arrow type a column has in the output: its format string, and the
 * element format for lists ("" otherwise). */
typedef struct knut_graphar__otype {
    knut_arrow_type_info type;
    knut_arrow_type_info elem; /* LIST only */
    int is_list;
} knut_graphar__otype;

/* The output type of column c (string: large_utf8, timestamp: ms, ...). */
knut_status knut_graphar__col_otype(const knut_graphar__col *c, knut_graphar__otype *out,
                                    knut_error *err);
/* The output schema: a struct with one child per column. */
knut_status knut_graphar__plan_schema(const knut_graphar__plan *p, struct ArrowSchema *out,
                                      knut_error *err);

/* How one DuckDB column becomes one output column. */
typedef struct knut_graphar__conv {
    const char *name;             /* the column, for messages */
    knut_graphar__otype out;
    knut_arrow_type_info in;      /* DuckDB's type */
    knut_arrow_type_info in_elem; /* DuckDB's list element type */
} knut_graphar__conv;

/* Checks DuckDB's type can become the output type without copying values
 * (same layout; utf8 offsets widen; list offsets narrow). */
knut_status knut_graphar__conv_check(const knut_graphar__conv *cv, const char *column,
                                     knut_error *err);

/* Builds the output batch: a struct of n_out children. Column i is DuckDB
 * child map[i] converted by conv[i], or (map[i] < 0) the vertex index
 * first_id + row. DuckDB's batch is taken over and stays alive as long as
 * any output array points into it. rows: the output length (<= the
 * batch's, for limits). */
knut_status knut_graphar__batch_build(struct ArrowArray *out, struct ArrowArray *duck,
                                      const knut_graphar__conv *conv, const int *map,
                                      size_t n_out, int64_t first_id, int64_t rows,
                                      knut_error *err);

#endif
