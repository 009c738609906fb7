/*
 * knut graph, the model: mutations (vertex, edge and delete sets over Arrow
 * streams) and the Cypher renderer that turns them into GRAPH.QUERY texts.
 * Part of knut/graph.h.
 */
#ifndef KNUT_GRAPH_MODEL_H
#define KNUT_GRAPH_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "knut/arrow.h"
#include "knut/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- mutation model (src/graph/mutation*.c) ---- */

/*
 * Set descriptions filled by the caller. Strings and arrays are borrowed for
 * the duration of the add call (everything is copied); the stream is taken
 * over by the mutation (also on failure: it is released then).
 */
typedef struct knut_graph_vertex_set {
    int version;                /* KNUT_GRAPH_SET_VERSION */
    const char *name;           /* for messages; NULL: the first label */
    const char *const *labels;  /* >= 1; rows are MERGEd on labels[0] + keys */
    size_t n_labels;
    const char *const *keys;    /* >= 1 key columns; column name = property name */
    size_t n_keys;
    const char *const *props;   /* property columns (ignored when all_props) */
    size_t n_props;
    int all_props;              /* 1: every column that is not a key */
    struct ArrowArrayStream stream;
    /* Properties (of props) declared text: a sink with column types may
     * turn a stored column of another type into VARCHAR for them. */
    const char *const *text_props;
    size_t n_text_props;
} knut_graph_vertex_set;

/* One end of an edge: the vertex label and the key properties that find it.
 * columns[i] is the stream column holding keys[i] (NULL array: same names). */
typedef struct knut_graph_endpoint {
    const char *label;
    const char *const *keys;
    const char *const *columns;
    size_t n_keys;
} knut_graph_endpoint;

typedef struct knut_graph_edge_set {
    int version;                /* KNUT_GRAPH_SET_VERSION */
    const char *name;           /* for messages; NULL: the type */
    const char *type;
    knut_graph_endpoint src;
    knut_graph_endpoint dst;
    /* Optional edge keys: with none, one edge of `type` per (src, dst) pair
     * is MERGEd; with some, one per distinct key tuple. */
    const char *const *keys;
    size_t n_keys;
    const char *const *props;   /* property columns (ignored when all_props) */
    size_t n_props;
    int all_props;              /* 1: every column not used as endpoint or key */
    struct ArrowArrayStream stream;
    /* What a row whose endpoint vertex does not exist does:
     * KNUT_GRAPH_MISSING_SKIP (0, counted in the set's `skipped`) or
     * KNUT_GRAPH_MISSING_FAIL (the apply fails with KNUT_EINVAL, detail
     * KNUT_GRAPH_ERR_MISSING_ENDPOINT, naming the first missing vertex). */
    int missing_endpoints;
    const char *const *text_props; /* as in knut_graph_vertex_set */
    size_t n_text_props;
} knut_graph_edge_set;

#define KNUT_GRAPH_MISSING_SKIP 0
#define KNUT_GRAPH_MISSING_FAIL 1
/* knut_error.detail of the apply failure of a KNUT_GRAPH_MISSING_FAIL set. */
#define KNUT_GRAPH_ERR_MISSING_ENDPOINT 0x4d50
/* knut_error.detail of an apply that fails (KNUT_EINVAL) because a column's
 * type differs from what the sink holds and cannot change without loss
 * (a key of another type; a stored column that cannot widen). */
#define KNUT_GRAPH_ERR_TYPE_CHANGE 0x5443
/* Room for the first missing endpoints' description in a set. */
#define KNUT_GRAPH_MISSING_MAX 256

/* Vertices to DETACH DELETE, found by label + key columns. */
typedef struct knut_graph_delete_set {
    int version;                /* KNUT_GRAPH_SET_VERSION */
    const char *name;           /* for messages; NULL: the label */
    const char *label;
    const char *const *keys;
    size_t n_keys;
    struct ArrowArrayStream stream;
} knut_graph_delete_set;

/*
 * Edges to DELETE (the endpoint vertices stay), found by type + the label
 * and key columns of both endpoints: every edge of `type` from the source
 * vertex to the destination vertex goes. With edge keys, only the edges
 * whose keys also match (for edge sets that MERGE on edge keys). A row
 * whose edge (or endpoint) does not exist deletes nothing.
 */
typedef struct knut_graph_edge_delete_set {
    int version;                /* KNUT_GRAPH_SET_VERSION */
    const char *name;           /* for messages; NULL: the type */
    const char *type;
    knut_graph_endpoint src;
    knut_graph_endpoint dst;
    const char *const *keys;    /* optional edge keys; column name = property name */
    size_t n_keys;
    struct ArrowArrayStream stream;
} knut_graph_edge_delete_set;

#define KNUT_GRAPH_SET_VERSION 1
#define KNUT_GRAPH_VERTEX_SET_INIT {.version = KNUT_GRAPH_SET_VERSION}
#define KNUT_GRAPH_EDGE_SET_INIT {.version = KNUT_GRAPH_SET_VERSION}
#define KNUT_GRAPH_DELETE_SET_INIT {.version = KNUT_GRAPH_SET_VERSION}
#define KNUT_GRAPH_EDGE_DELETE_SET_INIT {.version = KNUT_GRAPH_SET_VERSION}

typedef enum knut_graph_set_kind {
    KNUT_GRAPH_SET_VERTEX = 0,
    KNUT_GRAPH_SET_EDGE,
    KNUT_GRAPH_SET_DELETE,      /* vertex deletes */
    KNUT_GRAPH_SET_EDGE_DELETE
} knut_graph_set_kind;

/*
 * How the query text turns a column's parameter value into the stored value.
 * FalkorDB's parameter grammar has no temporal literals, so temporal values
 * travel as ISO strings and are converted in the (constant) query text.
 */
typedef enum knut_graph_conv {
    KNUT_GRAPH_CONV_NONE = 0,
    KNUT_GRAPH_CONV_DATE,               /* date($s) */
    KNUT_GRAPH_CONV_LOCALDATETIME,      /* localdatetime($s), UTC */
    KNUT_GRAPH_CONV_LOCALTIME,          /* localtime($s) */
    KNUT_GRAPH_CONV_LIST_DATE,          /* [x IN $l | date(x)] */
    KNUT_GRAPH_CONV_LIST_LOCALDATETIME, /* [x IN $l | localdatetime(x)] */
    KNUT_GRAPH_CONV_LIST_LOCALTIME      /* [x IN $l | localtime(x)] */
} knut_graph_conv;

/* A stream column bound to a graph property. */
typedef struct knut_graph_column {
    char *prop;                 /* property name in the graph */
    char *column;               /* column name in the stream */
    int64_t index;              /* child index in the stream's struct schema */
    knut_arrow_type_info type;  /* the column's value type (dictionaries: value type) */
    knut_graph_conv conv;
    int text_ok;                /* a property of the set's text_props */
} knut_graph_column;

/*
 * A set validated against its stream's schema. Read-only for callers; the
 * mutation owns it. For vertex sets `labels` has every label; for delete
 * sets exactly one. Edge sets and edge delete sets use type, src_label,
 * dst_label, src_keys and dst_keys; `keys` are then the (optional) edge
 * keys.
 */
typedef struct knut_graph_set {
    knut_graph_set_kind kind;
    char *name;
    char **labels;
    size_t n_labels;
    char *type;
    char *src_label;
    char *dst_label;
    knut_graph_column *keys;
    size_t n_keys;
    knut_graph_column *src_keys;
    size_t n_src_keys;
    knut_graph_column *dst_keys;
    size_t n_dst_keys;
    knut_graph_column *props;
    size_t n_props;
    struct ArrowSchema schema;      /* the stream's schema (owned) */
    struct ArrowArrayStream stream; /* owned; read it with knut_graph_set_next */
    int64_t rows_read;              /* rows handed out by knut_graph_set_next so far */
    int missing_endpoints;          /* edge sets: KNUT_GRAPH_MISSING_* */
    /* Filled by the sink's apply (edge sets): rows skipped because an
     * endpoint vertex does not exist, and the first few missing vertices
     * ("Person {id: 7}, Company {id: 9}"; "" when none). */
    int64_t skipped;
    char missing[KNUT_GRAPH_MISSING_MAX];
    int n_missing;                  /* vertices named in missing */
} knut_graph_set;

typedef struct knut_graph_mutation knut_graph_mutation;

/* Makes an empty mutation (free with knut_graph_mutation_free); KNUT_ENOMEM
 * with *out NULL on failure. A mutation belongs to one thread at a time. */
KNUT_EXTERN knut_status knut_graph_mutation_new(knut_graph_mutation **out, knut_error *err);
/* Frees m, every set, and releases every stream (NULL-safe). */
KNUT_EXTERN void knut_graph_mutation_free(knut_graph_mutation *m);

/*
 * Validate the description against its stream's schema (fetched here) and
 * append it. Errors name the set and the column: a missing column, a
 * column name appearing twice in the schema, a name listed twice (or as
 * both key and property), a key of an unsupported type (keys must be bool,
 * integer, float, string, date, time or timestamp), and labels, types or property names that are
 * empty or hold a backtick (see knut_graph_cypher_ident). Property types
 * are the sink's business (the embedded store keeps every DuckDB type;
 * FalkorDB refuses at apply what it cannot store without loss: docs/
 * graph.md "Property types per sink"). With all_props,
 * the properties are the remaining columns in schema order. Property names
 * are the column names (endpoint keys may map columns to other names).
 * The stream is taken over in every case (released on failure); the set
 * struct itself is copied. Those faults are KNUT_EINVAL (a missing column:
 * KNUT_ENOTFOUND), unsupported types KNUT_EUNSUPPORTED; KNUT_ENOMEM.
 */
KNUT_EXTERN knut_status knut_graph_mutation_add_vertex_set(knut_graph_mutation *m,
                                                           knut_graph_vertex_set *set,
                                                           knut_error *err);
KNUT_EXTERN knut_status knut_graph_mutation_add_edge_set(knut_graph_mutation *m,
                                                         knut_graph_edge_set *set, knut_error *err);
KNUT_EXTERN knut_status knut_graph_mutation_add_delete_set(knut_graph_mutation *m,
                                                           knut_graph_delete_set *set,
                                                           knut_error *err);
/* Same rules as an edge set; sinks apply edge deletes after every upsert
 * and before the vertex deletes. */
KNUT_EXTERN knut_status knut_graph_mutation_add_edge_delete_set(knut_graph_mutation *m,
                                                                knut_graph_edge_delete_set *set,
                                                                knut_error *err);

/* Sets in the order they were added, one list per kind; a set is owned by
 * m (NULL past the count). */
KNUT_EXTERN size_t knut_graph_mutation_count(const knut_graph_mutation *m,
                                             knut_graph_set_kind kind);
KNUT_EXTERN knut_graph_set *knut_graph_mutation_get(knut_graph_mutation *m,
                                                    knut_graph_set_kind kind, size_t i);

/*
 * Next batch of the set's stream into *out (caller releases). At the end
 * returns KNUT_OK with out->release == NULL. Each batch is validated
 * (KNUT_ARROW_VALIDATE_FULL | UTF8) against the set's schema, so the
 * renderer can trust offsets; rows_read advances by the batch length.
 * Errors: the stream's own (as knut_arrow_stream_error maps them), and
 * KNUT_EINVAL for a batch that fails validation, naming the set.
 */
KNUT_EXTERN knut_status knut_graph_set_next(knut_graph_set *set, struct ArrowArray *out,
                                            knut_error *err);

/* ---- Cypher rendering (src/graph/cypher*.c) ---- */

/*
 * Appends name as a backticked identifier: `name`. Inside backticks
 * FalkorDB takes every byte literally (quotes, backslashes, newlines,
 * unicode) except the backtick itself, which it cannot escape at all (the
 * openCypher doubling `a``b` is a syntax error in FalkorDB 4.16), so names
 * holding a backtick are refused, as are empty names, NUL bytes and invalid
 * UTF-8 (KNUT_EINVAL, with `what`, e.g. "label", in the message).
 */
KNUT_EXTERN knut_status knut_graph_cypher_ident(knut_buf *out, const char *name, size_t len,
                                                const char *what, knut_error *err);

/*
 * Appends s as a single-quoted string literal for the CYPHER parameter
 * block. NUL bytes and invalid UTF-8 are refused (KNUT_EINVAL, naming the
 * byte offset); everything else round-trips exactly.
 */
KNUT_EXTERN knut_status knut_graph_cypher_string(knut_buf *out, const char *s, size_t len,
                                                 knut_error *err);

/*
 * Appends "name=value " for a parameter typed by a person (src/graph/
 * cypher_param.c): text is null, true, false, an integer (64-bit, range-
 * checked), a finite double, a 'single' or "double" quoted string (escapes
 * \\ \' \" \n \t \r), or a list [..] / map {key: ..} of those. The value is
 * parsed and re-rendered, never copied, so it cannot leave the parameter
 * block. name must match [A-Za-z_][A-Za-z0-9_]*. On error (KNUT_EINVAL
 * naming the parameter and character position) out is left as it was.
 */
KNUT_EXTERN knut_status knut_graph_cypher_param(knut_buf *out, const char *name, size_t name_len,
                                                const char *text, size_t len, knut_error *err);

/* Where a value came from, for error messages ("set 'P': row 7, column 'x': ..."). */
typedef struct knut_graph_cypher_loc {
    const char *set;    /* may be NULL */
    const char *column; /* may be NULL */
    int64_t row;        /* row number reported (caller's numbering) */
} knut_graph_cypher_loc;

/*
 * Appends row i of column view v as a parameter value: null, true/false,
 * integers (uint64 above INT64_MAX refused), doubles as the shortest exact
 * decimal with a '.' or exponent (NaN refused: no literal exists; ±Inf sent
 * as 1e999 / -1e999, which FalkorDB's strtod turns into ±Inf), strings (see
 * knut_graph_cypher_string), date32/64 'YYYY-MM-DD', time32/64
 * 'HH:MM:SS[.fff]', timestamps (any unit, any timezone: Arrow values are
 * UTC instants) as 'YYYY-MM-DDTHH:MM:SS[.fff]' in UTC, lists [..]
 * recursively, structs and string-keyed maps as {`k`:v}, dictionaries by
 * their value. Temporal values are strings here because the parameter
 * grammar has no temporal literals; knut_graph_cypher_query wraps them in
 * date()/localdatetime()/localtime(). Years outside 0000-9999 and the
 * instant 1969-12-31T23:59:59 (FalkorDB's parse-error value) are refused.
 * Binary, decimal, duration and interval values are KNUT_EUNSUPPORTED.
 * Errors name loc's set, row and column; on error out is left as it was.
 */
KNUT_EXTERN knut_status knut_graph_cypher_value(knut_buf *out, const knut_arrow_view *v, int64_t i,
                                                const knut_graph_cypher_loc *loc, knut_error *err);

/*
 * The query text of a set (no parameter block): a function of the set's
 * shape only (labels, type, key and property names and their conversions),
 * never of its values, so every batch of a set shares one cached plan.
 *   vertex: UNWIND $rows AS r MERGE (n:`L1` {`k`: r.k[0], ...}) SET n:`L2`
 *           SET n += r.p [SET n.`d` = date(r.t[0]) ...]
 *   edge:   UNWIND $rows AS r MATCH (a:`S` {..: r.s[0]}) MATCH (b:`D` {..: r.d[0]})
 *           MERGE (a)-[e:`T` {..: r.k[0]}]->(b) SET e += r.p ...
 *   delete: UNWIND $rows AS r MATCH (n:`L` {..: r.k[0]}) DETACH DELETE n
 *   edge delete: UNWIND $rows AS r MATCH (a:`S` {..: r.s[0]})-[e:`T` [{..: r.k[0]}]]->
 *           (b:`D` {..: r.d[0]}) DELETE e
 */
KNUT_EXTERN knut_status knut_graph_cypher_query(knut_buf *out, const knut_graph_set *set,
                                                knut_error *err);

/*
 * Appends the parameter block `CYPHER rows=[{...},...] ` for rows
 * [from, to) of batch (a view over a struct array matching set->schema),
 * stopping before the row that would make this call append more than
 * `budget` bytes (0 = no budget; the buffer's own cap also ends a block).
 * *n_rows gets the number of rows rendered (at least 1 unless from == to);
 * render the rest with from += *n_rows. A first row over the budget is
 * KNUT_ETOOBIG naming it. Errors report row numbers as row_base + i (pass
 * set->rows_read minus the batch length to number rows across the
 * stream). Null keys are refused (MERGE and MATCH cannot use them), as are
 * nulls inside list properties. On error out is left as it was.
 */
KNUT_EXTERN knut_status knut_graph_cypher_params(knut_buf *out, const knut_graph_set *set,
                                                 const knut_arrow_view *batch, int64_t from,
                                                 int64_t to, int64_t row_base, size_t budget,
                                                 int64_t *n_rows, knut_error *err);

/*
 * The whole GRAPH.QUERY text: knut_graph_cypher_params followed by
 * knut_graph_cypher_query; same budget and row semantics (the budget
 * covers both). This is the only form in which values reach FalkorDB.
 */
KNUT_EXTERN knut_status knut_graph_cypher_render(knut_buf *out, const knut_graph_set *set,
                                                 const knut_arrow_view *batch, int64_t from,
                                                 int64_t to, int64_t row_base, size_t budget,
                                                 int64_t *n_rows, knut_error *err);

#ifdef __cplusplus
}
#endif

#endif /* KNUT_GRAPH_MODEL_H */
