/*
 * Internals of the GraphAr writer (write.c, write_vertex.c, write_edge.c)
 * and the importer (import*.c): the writer's state, SQL text helpers that
 * quote every identifier and literal, a row cursor over DuckDB results,
 * and the chunk COPY runner. Not part of the public API.
 */
#ifndef KNUT_GRAPHAR_WRITE_INT_H
#define KNUT_GRAPHAR_WRITE_INT_H

#include "graphar_int.h"
#include "knut/duck.h"

/* A vertex type already written: its key -> index table stays in DuckDB
 * (the table's rowid is the vertex index) until the writer is freed. */
typedef struct gar_wvertex {
    char *type;
    char *table;    /* temp table name, unquoted */
    size_t n_keys;  /* key columns __knut_k0.. in table */
    char **key_types; /* their DuckDB types: edge keys are TRY_CAST to them */
    int64_t count;
    int64_t chunk_size;
} gar_wvertex;

struct knut_graphar_writer {
    knut_graphar_graph_info *gi;
    char *dir;          /* output root, with a trailing '/' */
    knut_duck_db *db;
    knut_duck_conn *conn;
    char *own_tmp;      /* spill directory we created, removed at free */
    char *compression;
    int overwrite;
    gar_wvertex *verts;
    size_t n_verts;
    char **prepared;    /* prefix directories already checked or emptied */
    size_t n_prepared;
    unsigned seq;       /* for unique temp table names */
};

/* ---- SQL text ---------------------------------------------------------- */

/* The DuckDB type a property is stored as (BIGINT, TIMESTAMP_MS, DOUBLE[]). */
void knut_graphar__write_sql_type(knut_buf *b, const knut_graphar_property *p);
/* The type values are parsed as: sql_type, but TIMESTAMP for timestamps
 * (the conversion that can fail; what follows is a truncation to ms). */
void knut_graphar__write_sql_parse_type(knut_buf *b, const knut_graphar_property *p);
/* CAST of source column s."column" to p's stored type. */
void knut_graphar__write_sql_cast(knut_buf *b, const char *column, const knut_graphar_property *p);
/* The relation a source reads: "(query)" or the quoted table name. */
void knut_graphar__write_sql_source(knut_buf *b, const char *query, const char *table);

/* Property i (counted across the groups in order) is column __knut_p<i> of
 * the writer's tables, and gets its own name only in the chunk files:
 * a property called `rowid` must not shadow the row position. */
#define KNUT_GRAPHAR_W_PCOL "__knut_p%zu"
/* Index of g's first property among all of groups' properties. */
size_t knut_graphar__write_prop_base(const knut_graphar_property_group *groups,
                                     const knut_graphar_property_group *g);

/* ---- running SQL ------------------------------------------------------- */

/* knut_duck_exec with the error prefixed by what. */
knut_status knut_graphar__write_exec(knut_graphar_writer *w, const char *sql, const char *what,
                                     knut_error *err);
/* Runs sql (one row of integer columns) into out[0..n); NULLs become -1. */
knut_status knut_graphar__write_query_i64(knut_duck_conn *c, const char *sql, int64_t *out,
                                          size_t n, const char *what, knut_error *err);

/* A cursor over a query's rows, batch by batch. */
typedef struct gar_rows {
    struct ArrowArrayStream stream;
    struct ArrowSchema schema;
    struct ArrowArray batch;
    knut_arrow_view view;
    int have_view;
    int64_t row;   /* current row in batch */
    int64_t index; /* current row overall, 0-based */
} gar_rows;

knut_status knut_graphar__write_rows_open(gar_rows *r, knut_duck_conn *c, const char *sql,
                                          knut_error *err);
/* Moves to the next row: KNUT_OK with a row, KNUT_EOF at the end. */
knut_status knut_graphar__write_rows_next(gar_rows *r, knut_error *err);
static inline const knut_arrow_view *knut_graphar_w__rows_col(const gar_rows *r, int64_t k)
{
    return &r->view.children[k];
}
static inline int64_t knut_graphar_w__rows_at(const gar_rows *r)
{
    return knut_arrow_view_child_row(&r->view, r->row);
}
/* Column k of the current row as text ("NULL" for null) into buf. */
void knut_graphar__write_rows_text(const gar_rows *r, int64_t k, char *buf, size_t cap);
void knut_graphar__write_rows_close(gar_rows *r);

/* Names of the columns a relation has (SELECT * ... LIMIT 0); *names is a
 * string vector freed with knut_graphar__strv_free. */
knut_status knut_graphar__write_columns(knut_duck_conn *c, const char *relation, char ***names,
                                        size_t *n, knut_error *err);

/* ---- writing files ----------------------------------------------------- */

/*
 * A prepared `COPY (select) TO $1 (...)` whose select filters on
 * `w.rowid BETWEEN $2 AND $3` (qualified: an output column may be called
 * rowid, and ORDER BY prefers output names). cols are the select's column names (the CSV
 * header); string_cols the columns CSV quotes.
 */
typedef struct gar_copy {
    knut_duck_stmt *stmt;
} gar_copy;

knut_status knut_graphar__write_copy_prepare(knut_graphar_writer *w, gar_copy *cp,
                                             const char *select, knut_graphar_file_type ft,
                                             const char *const *cols, size_t n_cols,
                                             const char *const *string_cols, size_t n_string_cols,
                                             int zstd, knut_error *err);
/* Writes rows lo..hi (inclusive rowids) to path, creating its directory. */
knut_status knut_graphar__write_copy_run(gar_copy *cp, const char *path, int64_t lo, int64_t hi,
                                         knut_error *err);
void knut_graphar__write_copy_free(gar_copy *cp);

/* Creates every missing directory of path (the last component too when
 * is_dir). */
knut_status knut_graphar__write_mkdirs(const char *path, int is_dir, knut_error *err);
/* Removes dir and everything in it, never following symlinks (a missing
 * dir is KNUT_OK). */
knut_status knut_graphar__remove_tree(const char *dir, knut_error *err);
/* 1 if dir has any entry, 0 if empty or missing, -1 on error (errno). */
int knut_graphar__dir_has_entries(const char *dir);

/*
 * A graph written beside its destination and swapped in only when whole
 * (import_stage.c): begin makes the empty staging directory next to out
 * (refusing a non-empty out unless overwrite), commit puts it in out's
 * place atomically (the old graph, if any, removed after), abort removes
 * it. *staging is freed by commit/abort.
 */
knut_status knut_graphar__stage_begin(const char *out, int overwrite, char **staging,
                                      knut_error *err);
knut_status knut_graphar__stage_commit(char *staging, const char *out, knut_error *err);
void knut_graphar__stage_abort(char *staging);
/*
 * Makes the directory dir ready to receive a vertex/edge type: created if
 * missing; if not empty, emptied (w->overwrite) or refused. Once per
 * directory per writer (two edge infos may share one prefix).
 */
knut_status knut_graphar__write_prepare_dir(knut_graphar_writer *w, const char *dir,
                                            knut_error *err);
/* Writes a count file, creating its directory. */
knut_status knut_graphar__write_count(const char *path, int64_t value, knut_error *err);

/* A prefix is a relative path without '..' parts: info prefixes end up in
 * paths the writer creates and may empty, so they must stay inside the
 * output directory. */
int knut_graphar__write_prefix_safe(const char *p);
/* Refuses file types the writer cannot produce (ORC, JSON). */
knut_status knut_graphar__write_check_file_type(knut_graphar_file_type ft, const char *what,
                                                knut_error *err);
/* Checks a group can be written: file type, and no lists in CSV. */
knut_status knut_graphar__write_check_group(const knut_graphar_property_group *g, const char *what,
                                            knut_error *err);

/* A fresh temp table name "__knut_gar_<tag><n>". */
char *knut_graphar__write_temp_name(knut_graphar_writer *w, const char *tag);
/* Row count of a fresh table, checking its rowids are 0..count-1 (the
 * writer uses rowid as the position in write order). */
knut_status knut_graphar__write_table_count(knut_graphar_writer *w, const char *table,
                                            int64_t *count, knut_error *err);

/*
 * After a CAST in `select_casts` failed: finds the first source row whose
 * value does not convert. exprs[i] is the source column of item i and
 * types[i] its SQL type; labels[i] names it in the message. Sets err to
 * "<source>: row N, column 'c': cannot convert 'v' to <type>" and returns
 * EINVAL, or returns KNUT_OK when no row fails (the caller keeps DuckDB's
 * own error then).
 */
/*
 * After a statement that cast the source's columns failed with st: takes
 * ownership of cols (borrowed names) and types (n malloc'ed DuckDB type
 * names; either array, or entries of types, may be NULL after a failed
 * allocation), asks diagnose_casts for the row and column DuckDB left
 * out, frees both arrays and returns the status to report, with err
 * prefixed by what ("vertex person").
 */
knut_status knut_graphar__write_report_cast_failure(knut_graphar_writer *w, const char *relation,
                                                    const char *source_name, const char *what,
                                                    const char **cols, char **types, size_t n,
                                                    knut_status st, knut_error *err);

knut_status knut_graphar__write_diagnose_casts(knut_graphar_writer *w, const char *relation,
                                               const char *source_name, const char *const *columns,
                                               const char *const *types, const char *const *labels,
                                               size_t n, knut_error *err);

/*
 * Streams relation (aliased s) in order and finds the first row where the
 * SQL condition cond holds: *row is its 1-based number (-1: none), and val
 * (may be NULL) gets the text of the SQL expression value on that row.
 * Used only after an aggregate found a problem, to name the exact row.
 */
knut_status knut_graphar__write_first_row(knut_graphar_writer *w, const char *relation,
                                          const char *cond, const char *value, int64_t *row,
                                          char *val, size_t cap, knut_error *err);

/*
 * Writes one adj list of an edge type from the mapped edge table `map`
 * (__knut_row, __knut_src, __knut_dst, then the edge properties by name):
 * sorted per the list's type, adj_list and property chunks per part,
 * edge_count<i>, offsets (ordered types) and the aligned vertex_count.
 * aligned_count is the aligned vertex type's count; *files is increased by
 * the number of files written.
 */
knut_status knut_graphar__write_adj(knut_graphar_writer *w, const knut_graphar_edge_info *ei,
                                    const knut_graphar_adj_list *al, const char *map,
                                    int64_t aligned_count, const char *what, int64_t *files,
                                    knut_error *err);

/* Looks up a written vertex type. */
gar_wvertex *knut_graphar__written_vertex(knut_graphar_writer *w, const char *type);

/*
 * KNUT_ECANCELLED once a stop was requested (knut_signal_install: the CLI's
 * Ctrl-C), checked between statements, so an interrupted write still frees
 * its spill directory; what names the step in the message.
 */
knut_status knut_graphar__write_check_stop(const char *what, knut_error *err);

/* Wall clock for stats. */
double knut_graphar__write_now(void);

#endif
