/*
 * Internals of the embedded graph store (src/graph/store*.c): the store
 * struct, the catalog names, and small SQL helpers shared by the open /
 * catalog code (store.c), the sink apply (store_apply.c) and the GraphAr
 * export (store_export.c). Values only ever reach DuckDB as binds or
 * Arrow streams; these helpers quote identifiers and bind text.
 */
#ifndef KNUT_GRAPH_STORE_INT_H
#define KNUT_GRAPH_STORE_INT_H

#include "knut/duck.h"
#include "knut/graph.h"

/* Catalog and internal column names. Property names starting with
 * KNUT_GS_RESERVED are refused so they can never collide with these. */
#define KNUT_GS_RESERVED "_knut_"
#define KNUT_GS_VLABELS "_knut_vertex_labels"   /* label, table_name, keys */
#define KNUT_GS_ETYPES "_knut_edge_types"       /* type, table_name, keys */
#define KNUT_GS_MEMBERS "_knut_vertex_labels_of" /* vid, label */
#define KNUT_GS_SEQ "_knut_vid"
#define KNUT_GS_VID "_knut_vid"
#define KNUT_GS_SRC "_knut_src"
#define KNUT_GS_DST "_knut_dst"
#define KNUT_GS_SRC_LABEL "_knut_src_label"
#define KNUT_GS_DST_LABEL "_knut_dst_label"
#define KNUT_GS_STAGE "_knut_stage"

struct knut_graph_store {
    knut_graph_sink sink; /* first member: the store is its own sink */
    knut_duck_db *db;
    knut_duck_conn *conn;
    int64_t edges_skipped; /* by the last apply */
    int64_t txn_rows;      /* a larger upsert-only set is applied in several
                            * transactions (store_chunk.c); 0: default */
};
/* The default of knut_graph_store_set_txn_rows. */
#define KNUT_GS_TXN_ROWS 1000000

/* Runs sql (a prepared statement) with n text binds ($1..$n; NULL binds
 * NULL). *changes (may be NULL) gets the rows changed. */
knut_status knut_graph__store_exec(knut_duck_conn *conn, const char *sql, const char *const *binds,
                                   size_t n, uint64_t *changes, knut_error *err);
/* The same, handing the rows out as a stream. */
knut_status knut_graph__store_query(knut_duck_conn *conn, const char *sql, const char *const *binds,
                                    size_t n, struct ArrowArrayStream *out, knut_error *err);
/* First column of the first row as int64 (*out = 0 without rows or on null). */
knut_status knut_graph__store_scalar_i64(knut_duck_conn *conn, const char *sql,
                                         const char *const *binds, size_t n, int64_t *out,
                                         knut_error *err);

/* Rows of text columns, read whole (catalog-sized results only). */
typedef struct knut_gs_rows {
    char **cells; /* n_rows * n_cols, row-major; NULL for SQL NULL */
    size_t n_rows;
    size_t n_cols;
} knut_gs_rows;
knut_status knut_graph__store_rows(knut_duck_conn *conn, const char *sql, const char *const *binds,
                                   size_t n, knut_gs_rows *out, knut_error *err);
void knut_graph__store_rows_reset(knut_gs_rows *r);
static inline const char *knut_gs__cell(const knut_gs_rows *r, size_t row, size_t col)
{
    return r->cells[row * r->n_cols + col];
}

/* The stored DuckDB type of table.column (case-insensitive, as DuckDB
 * resolves names), or *out NULL if there is no such column. */
knut_status knut_graph__store_column_type(knut_duck_conn *conn, const char *table,
                                          const char *column, char **out, knut_error *err);

/* The table of a vertex label (kind 'v') or edge type ('e') from the
 * catalog, and its keys as JSON; *table NULL when unknown. */
knut_status knut_graph__store_catalog_get(knut_graph_store *s, char kind, const char *name,
                                          char **table, char **keys_json, knut_error *err);
/* Registers name -> a fresh table name (derived from name, unique among
 * the database's tables) with keys_json; *table gets the name. */
knut_status knut_graph__store_catalog_add(knut_graph_store *s, char kind, const char *name,
                                          const char *keys_json, char **table, knut_error *err);

/* 1 if a column of DuckDB type `incoming` can be stored in a column of
 * type `existing` without loss (same type, or a safe widening). */
int knut_graph__store_type_fits(const char *existing, const char *incoming);
/* The type a stored column of type `existing` can be altered to so that
 * `incoming` values fit without loss of the stored ones (INTEGER ->
 * BIGINT, FLOAT -> DOUBLE, ...), or NULL; *exact = 1 when that holds only
 * if every stored value is an integer within +-2^53 (BIGINT -> DOUBLE). */
const char *knut_graph__store_type_widen(const char *existing, const char *incoming, int *exact);
/* Widens table.column (stored as have) so that values of type want fit
 * (knut_graph__store_type_widen; BIGINT -> DOUBLE only when every stored
 * value is exact; anything -> VARCHAR with text_ok, a column declared
 * text), logging `column widened`; *to NULL when it cannot. */
knut_status knut_graph__store_column_widen(knut_duck_conn *conn, const char *table,
                                           const char *column, const char *have,
                                           const char *want, int text_ok, const char **to,
                                           knut_error *err);
/* The type a new column gets for incoming values (timestamps of coarser
 * units become TIMESTAMP, so later batches in microseconds still fit). */
const char *knut_graph__store_type_for_column(const char *incoming);

/* The sink apply (store_apply.c). */
knut_status knut_graph__store_apply(knut_graph_sink *sink, knut_graph_mutation *m,
                                    const knut_graph_sink_commit *commit,
                                    knut_graph_sink_stats *stats, knut_error *err);

/* The DELETE removing the edges an edge delete set's rows (staged in temp
 * table `stage`) name, binds $1 = source label, $2 = destination label;
 * out stays empty when no stored edge can match (store_edge_delete.c). */
knut_status knut_graph__store_edge_delete_sql(knut_graph_store *s, const knut_graph_set *set,
                                              const char *stage, knut_buf *out, knut_error *err);

/* Key listing (store_keys.c). */
knut_status knut_graph__store_keys(knut_graph_sink *sink, const knut_graph_key_scan *scan,
                                   knut_graph_sink_keys_fn fn, void *ctx, knut_error *err);

/* store_missing.c: names the first staged rows' missing endpoints in
 * set->missing (src_table/dst_table NULL: that label has no table). */
knut_status knut_graph__store_edge_missing(knut_duck_conn *conn, knut_graph_set *set,
                                           const char *stage, const char *src_table,
                                           const char *dst_table, knut_error *err);

#endif
