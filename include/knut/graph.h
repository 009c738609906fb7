/*
 * knut graph: the property-graph side of knut. A mutation (vertex sets, edge
 * sets, vertex delete sets, edge delete sets, each an Arrow stream of rows
 * plus the names that say how rows map onto the graph) is what sources
 * produce and sinks apply.
 * The Cypher renderer turns a set into one constant query text per shape and
 * its rows into `CYPHER rows=[...]` parameter blocks, so values never reach
 * the query text and FalkorDB's plan cache keeps working. The FalkorDB
 * client (connection, GRAPH.QUERY, reply parsing) closes the header.
 */
#ifndef KNUT_GRAPH_H
#define KNUT_GRAPH_H

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
} knut_graph_edge_set;

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
} knut_graph_set;

typedef struct knut_graph_mutation knut_graph_mutation;

KNUT_EXTERN knut_status knut_graph_mutation_new(knut_graph_mutation **out, knut_error *err);
/* Frees m, every set, and releases every stream (NULL-safe). */
KNUT_EXTERN void knut_graph_mutation_free(knut_graph_mutation *m);

/*
 * Validate the description against its stream's schema (fetched here) and
 * append it. Errors name the set and the column: a missing column, a
 * column name appearing twice in the schema, a name listed twice (or as
 * both key and property), a key of an unsupported type (keys must be bool,
 * integer, float, string, date, time or timestamp), a property of a type
 * FalkorDB cannot store (struct, map, binary, decimal, nested lists of
 * temporal values, ...), and labels, types or property names that are
 * empty or hold a backtick (see knut_graph_cypher_ident). With all_props,
 * the properties are the remaining columns in schema order. Property names
 * are the column names (endpoint keys may map columns to other names).
 * The stream is taken over in every case (released on failure).
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

/* Sets in the order they were added, one list per kind. */
KNUT_EXTERN size_t knut_graph_mutation_count(const knut_graph_mutation *m,
                                             knut_graph_set_kind kind);
KNUT_EXTERN knut_graph_set *knut_graph_mutation_get(knut_graph_mutation *m,
                                                    knut_graph_set_kind kind, size_t i);

/*
 * Next batch of the set's stream into *out (caller releases). At the end
 * returns KNUT_OK with out->release == NULL. Each batch is validated
 * (KNUT_ARROW_VALIDATE_FULL | UTF8) against the set's schema, so the
 * renderer can trust offsets; rows_read advances by the batch length.
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

/* ---- FalkorDB client (src/graph/falkor_client*.c) ---- */

/*
 * A blocking client for one FalkorDB server (Redis or Valkey with the graph
 * module). hiredis opens the connection; commands are sent with GRAPH.QUERY
 * or GRAPH.RO_QUERY and --compact, and replies are read by knut's own RESP2
 * reader: hiredis 0.14's reader refuses arrays nested deeper than 7, and a
 * path, or a node with a list property, is deeper than that.
 *
 * Compact replies become Arrow (docs/graph.md, "FalkorDB client"): a column
 * takes the type of its non-null values; a column (or list element, or map
 * value) whose values have different FalkorDB types becomes utf8 holding
 * each value as JSON text. Nodes, edges and paths are structs whose
 * properties are one JSON object text. Label, relationship-type and
 * property-key ids are resolved through db.labels(), db.relationshipTypes()
 * and db.propertyKeys(), cached per graph and refreshed when an id beyond
 * the cache appears.
 *
 * Every error names the peer ("falkordb host:port: ..."); server errors,
 * top-level or inside a reply, are KNUT_EPEER with FalkorDB's message. The
 * password never appears in an error or a log record. A handle is not
 * thread-safe: use one per thread.
 */
typedef struct knut_graph_falkor knut_graph_falkor;

#define KNUT_GRAPH_FALKOR_OPTIONS_VERSION 1
#define KNUT_GRAPH_FALKOR_MAX_REPLY_DEFAULT ((int64_t)512 << 20)

typedef struct knut_graph_falkor_options {
    int version;             /* KNUT_GRAPH_FALKOR_OPTIONS_VERSION */
    const char *username;    /* ACL user for AUTH; NULL: the default user */
    const char *password;    /* NULL: no AUTH; a password in the URL wins */
    int connect_timeout_ms;  /* 0: 5000; < 0: no timeout */
    int command_timeout_ms;  /* each socket read/write; 0: no timeout */
    int64_t max_reply_bytes; /* one reply; 0: KNUT_GRAPH_FALKOR_MAX_REPLY_DEFAULT */
    int max_depth;           /* arrays nested in a reply; 0: 64; at most 1024 */
    int64_t batch_rows;      /* rows per Arrow batch of a result; 0: 65536 */
    int query_timeout_ms;    /* sent as TIMEOUT <ms> with each query; 0: server default */
} knut_graph_falkor_options;

#define KNUT_GRAPH_FALKOR_OPTIONS_INIT {.version = KNUT_GRAPH_FALKOR_OPTIONS_VERSION}

/* Query flags. */
#define KNUT_GRAPH_FALKOR_READ_ONLY 1u       /* GRAPH.RO_QUERY (also: safe to resend) */
#define KNUT_GRAPH_FALKOR_ALLOW_TRUNCATED 2u /* RESULTSET_SIZE hit: flag, not error */

/* The statistics of one query; counters the server leaves out are 0. */
typedef struct knut_graph_falkor_stats {
    int64_t labels_added;
    int64_t labels_removed;
    int64_t nodes_created;
    int64_t nodes_deleted;
    int64_t properties_set;
    int64_t properties_removed;
    int64_t relationships_created;
    int64_t relationships_deleted;
    int64_t indices_created;
    int64_t indices_deleted;
    int64_t constraints_created;
    int64_t constraints_deleted;
    int cached_execution;  /* 1: the plan came from the server's cache */
    double execution_ms;   /* "Query internal execution time" */
} knut_graph_falkor_stats;

/*
 * One query's result, filled by knut_graph_falkor_query (caller-owned; free
 * with knut_graph_falkor_result_reset). The stream yields struct batches of
 * up to batch_rows rows, one child per returned column (none without
 * RETURN). A utf8 field holding JSON text of mixed values (a column, a
 * list item or a map value) has the metadata knut.falkordb.kind = "mixed".
 */
typedef struct knut_graph_falkor_result {
    struct ArrowArrayStream stream;
    int64_t n_rows;
    int64_t n_columns;
    int truncated; /* 1: n_rows equals RESULTSET_SIZE (with ALLOW_TRUNCATED) */
    knut_graph_falkor_stats stats;
} knut_graph_falkor_result;

/* Releases the stream and zeroes r (NULL-safe). */
KNUT_EXTERN void knut_graph_falkor_result_reset(knut_graph_falkor_result *r);

/*
 * Connects to host:port, authenticates (AUTH [username] password) when a
 * password is given, and reads the server's RESULTSET_SIZE with
 * GRAPH.CONFIG GET (which fails here if the graph module is not loaded).
 * opts may be NULL. *out is NULL on failure.
 */
KNUT_EXTERN knut_status knut_graph_falkor_connect(knut_graph_falkor **out, const char *host,
                                                  int port, const knut_graph_falkor_options *opts,
                                                  knut_error *err);

/* Same from "redis://[[user]:password@]host[:port]" (port 6379 by default;
 * user and password may be percent-encoded; IPv6 hosts in brackets). */
KNUT_EXTERN knut_status knut_graph_falkor_connect_url(knut_graph_falkor **out, const char *url,
                                                      const knut_graph_falkor_options *opts,
                                                      knut_error *err);

/* Closes the connection and frees g (NULL-safe); the password is wiped. */
KNUT_EXTERN void knut_graph_falkor_close(knut_graph_falkor *g);

/* "host:port" of the server, as used in messages. */
KNUT_EXTERN const char *knut_graph_falkor_peer(const knut_graph_falkor *g);

#define KNUT_GRAPH_FALKOR_LIMIT_UNLIMITED (-1)

/* The server's RESULTSET_SIZE as read at the last (re)connect, or
 * KNUT_GRAPH_FALKOR_LIMIT_UNLIMITED. */
KNUT_EXTERN int64_t knut_graph_falkor_resultset_limit(const knut_graph_falkor *g);

/* Reads RESULTSET_SIZE again (after a GRAPH.CONFIG SET by anyone). */
KNUT_EXTERN knut_status knut_graph_falkor_limits_refresh(knut_graph_falkor *g, knut_error *err);

/* Drops every cached label / type / property-key name (for example after
 * GRAPH.DELETE, when ids start again from 0). */
KNUT_EXTERN void knut_graph_falkor_names_reset(knut_graph_falkor *g);

/*
 * Runs `GRAPH.QUERY <graph> <query> --compact` (GRAPH.RO_QUERY with
 * KNUT_GRAPH_FALKOR_READ_ONLY) and decodes the reply into *out (zeroed
 * first; on failure left reset). A result whose row count equals a
 * non-negative RESULTSET_SIZE is KNUT_ETOOBIG (the server cuts rows off
 * silently) unless KNUT_GRAPH_FALKOR_ALLOW_TRUNCATED, which sets
 * out->truncated instead.
 *
 * A connection found broken before sending is reopened (once per call).
 * If it breaks after the query was sent, a read-only query is resent once
 * on a new connection; any other query fails with KNUT_EIO saying it may
 * have been applied. A command timeout closes the connection.
 */
KNUT_EXTERN knut_status knut_graph_falkor_query(knut_graph_falkor *g, const char *graph,
                                                const char *query, unsigned flags,
                                                knut_graph_falkor_result *out, knut_error *err);

/* Sends one command (argv strings, for example GRAPH.DELETE g) and checks
 * its reply is not an error; the reply is discarded. Never resent. */
KNUT_EXTERN knut_status knut_graph_falkor_command(knut_graph_falkor *g, int argc,
                                                  const char *const *argv, knut_error *err);

/* One query of a pipelined batch: `query` is the input, the rest output. */
typedef struct knut_graph_falkor_batch_item {
    const char *query;
    knut_status status;
    int64_t n_rows;  /* rows returned (not decoded) */
    knut_graph_falkor_stats stats;
    knut_error error;
} knut_graph_falkor_batch_item;

/*
 * Sends n queries on `graph` (flags as for query) back to back, then reads
 * the n replies: one round trip for a loader's batches. Each item gets its
 * own status, stats and error; the return value is KNUT_OK when every item
 * succeeded, else the first failure's status with err saying how many
 * failed. A batch is never resent: if the connection breaks after sending,
 * the items without a reply say they may have been applied.
 */
KNUT_EXTERN knut_status knut_graph_falkor_batch(knut_graph_falkor *g, const char *graph,
                                                knut_graph_falkor_batch_item *items, size_t n,
                                                unsigned flags, knut_error *err);

/* Id → name tables for decoding a reply without a server. */
typedef struct knut_graph_falkor_names {
    const char *const *labels;
    int64_t n_labels;
    const char *const *rel_types;
    int64_t n_rel_types;
    const char *const *property_keys;
    int64_t n_property_keys;
} knut_graph_falkor_names;

/*
 * Decodes one complete compact GRAPH.QUERY reply given as raw RESP2 bytes
 * (exactly one reply, nothing after it) with the given names (NULL: none;
 * an id outside the tables is KNUT_EPARSE). opts (may be NULL) supplies
 * max_reply_bytes, max_depth and batch_rows. For tests, fuzzing and replays.
 */
KNUT_EXTERN knut_status knut_graph_falkor_reply_decode(knut_graph_falkor_result *out,
                                                       const void *resp, size_t len,
                                                       const knut_graph_falkor_names *names,
                                                       const knut_graph_falkor_options *opts,
                                                       knut_error *err);

/* ---- sinks: the common interface (src/graph/sink.c) ---- */

/*
 * A sink applies a whole mutation: every vertex set, then every edge set,
 * then every edge delete set, then every delete set (upserts before
 * deletes, so an upsert and a delete of one key or edge in the same
 * mutation end deleted). Sinks are FalkorDB and the
 * embedded graph store; sync talks to them only through this interface.
 */
typedef struct knut_graph_sink_stats {
    int64_t rows;             /* input rows consumed, all sets */
    int64_t vertices_written; /* vertex rows upserted */
    int64_t edges_written;    /* edge rows upserted */
    int64_t vertices_deleted;
    int64_t edges_deleted;    /* by edge delete sets + removed with deleted vertices */
} knut_graph_sink_stats;

struct knut_duck_conn;

/*
 * The caller's ledger update, committed with the mutation. The embedded
 * store calls it inside its open transaction with its own connection, so
 * the mutation and the ledger commit together or not at all (exactly
 * once). FalkorDB calls it after the server acknowledged every batch, with
 * conn NULL (at-least-once; MERGE makes a replay harmless). An error from
 * the callback fails the apply (the embedded store rolls back).
 */
typedef struct knut_graph_sink_commit {
    knut_status (*fn)(void *ctx, struct knut_duck_conn *conn, knut_error *err);
    void *ctx;
} knut_graph_sink_commit;

typedef struct knut_graph_sink knut_graph_sink;

/*
 * Key listing, for snapshot syncs (sync's `mode: full`): what the graph
 * holds now, so the caller can find what a snapshot no longer has. A scan
 * names vertices (label + key properties) or edges (type + the labels and
 * key properties of both endpoints; endpoint `columns` are ignored).
 */
typedef struct knut_graph_key_scan {
    const char *label;          /* vertices: the label; NULL for an edge scan */
    const char *const *keys;    /* vertices: key properties */
    size_t n_keys;
    const char *type;           /* edges: the type; NULL for a vertex scan */
    knut_graph_endpoint src;
    knut_graph_endpoint dst;
} knut_graph_key_scan;

/* Gets the rows a stream at a time (takes it over: release it, also on
 * error); an error stops the listing and is returned as is. */
typedef knut_status (*knut_graph_sink_keys_fn)(void *ctx, struct ArrowArrayStream *rows,
                                               knut_error *err);

typedef struct knut_graph_sink_ops {
    const char *name; /* "falkordb", "embedded" */
    knut_status (*apply)(knut_graph_sink *sink, knut_graph_mutation *m,
                         const knut_graph_sink_commit *commit, knut_graph_sink_stats *stats,
                         knut_error *err);
    void (*close)(knut_graph_sink *sink);
    /* knut_graph_sink_vertex_keys / _edge_keys; NULL: not supported */
    knut_status (*keys)(knut_graph_sink *sink, const knut_graph_key_scan *scan,
                        knut_graph_sink_keys_fn fn, void *ctx, knut_error *err);
} knut_graph_sink_ops;

/* Implementations embed this as their first member. */
struct knut_graph_sink {
    const knut_graph_sink_ops *ops;
};

/* Applies m (consuming its streams); commit may be NULL; stats may be NULL. */
KNUT_EXTERN knut_status knut_graph_sink_apply(knut_graph_sink *sink, knut_graph_mutation *m,
                                              const knut_graph_sink_commit *commit,
                                              knut_graph_sink_stats *stats, knut_error *err);
/* Closes and frees the sink (NULL-safe). */
KNUT_EXTERN void knut_graph_sink_close(knut_graph_sink *sink);

/*
 * Streams the keys of every vertex of `label` that has every key property
 * (a vertex lacking one can never be found by its keys) into fn. Rows are
 * struct arrays: column 0 `_knut_id` (int64, the sink's own id of the
 * vertex), then the keys in the order given. The embedded store lists the
 * vertices merged on `label` (its label table) in one stream; FalkorDB
 * lists every node carrying the label with GRAPH.RO_QUERY in pages ordered
 * by node id, each page starting after the last id seen, so a server
 * RESULTSET_SIZE below the page size only makes pages shorter. Column
 * types are the sink's (FalkorDB: per page, as its client decodes them).
 * A label the sink has never seen lists nothing. KNUT_EUNSUPPORTED for a
 * sink without key listing.
 */
KNUT_EXTERN knut_status knut_graph_sink_vertex_keys(knut_graph_sink *sink, const char *label,
                                                    const char *const *keys, size_t n_keys,
                                                    knut_graph_sink_keys_fn fn, void *ctx,
                                                    knut_error *err);
/*
 * The same for every edge of `type` from a src.label vertex to a dst.label
 * vertex: column 0 `_knut_id` (int64), then the source's keys
 * (`_knut_s0`..), then the destination's keys (`_knut_d0`..).
 */
KNUT_EXTERN knut_status knut_graph_sink_edge_keys(knut_graph_sink *sink, const char *type,
                                                  const knut_graph_endpoint *src,
                                                  const knut_graph_endpoint *dst,
                                                  knut_graph_sink_keys_fn fn, void *ctx,
                                                  knut_error *err);

/* ---- FalkorDB sink (src/graph/falkor_sink*.c) ---- */

/*
 * A knut_graph_sink that applies mutations to one FalkorDB graph through a
 * knut_graph_falkor client. Before loading, every (label, key) the MERGE
 * and MATCH clauses look vertices up by gets a range index (CREATE INDEX
 * FOR (n:`L`) ON (n.`k`); "already indexed" is fine), and apply waits until
 * db.indexes() reports each OPERATIONAL; indexes known to be ready are
 * remembered by the sink. Sets are then sent as UNWIND batches rendered by
 * knut_graph_cypher_render (at most batch_rows rows and batch_bytes bytes
 * each), `pipeline` queries per round trip: vertex sets, edge sets, edge
 * delete sets, delete sets, in that order.
 *
 * Stats: vertices_written counts vertex rows acknowledged; edges_written
 * counts edges MERGEd (an edge row whose endpoint vertex is missing is
 * skipped by FalkorDB and not counted); vertices_deleted and edges_deleted
 * are FalkorDB's "Nodes deleted" / "Relationships deleted" of the delete
 * and edge delete sets. Any failure (a null key, a server error, a lost connection) fails
 * the apply with the set, the rows and the peer named; stats then count
 * only what the server acknowledged, and the commit callback is not called.
 * FalkorDB rolls each failed query back, but earlier queries stay applied:
 * re-applying the mutation is harmless (every write is a MERGE).
 */
#define KNUT_GRAPH_FALKOR_SINK_OPTIONS_VERSION 1

typedef struct knut_graph_falkor_sink_options {
    int version;         /* KNUT_GRAPH_FALKOR_SINK_OPTIONS_VERSION */
    size_t batch_bytes;  /* bytes of one GRAPH.QUERY text; 0: 1 MiB; at least 1024 */
    int64_t batch_rows;  /* rows per GRAPH.QUERY; 0: 5000 */
    int pipeline;        /* queries sent per round trip; 0: 4; at most 64 */
    int index_wait_ms;   /* how long apply waits for indexes; 0: 60000 */
} knut_graph_falkor_sink_options;

#define KNUT_GRAPH_FALKOR_SINK_OPTIONS_INIT {.version = KNUT_GRAPH_FALKOR_SINK_OPTIONS_VERSION}

/*
 * Makes a sink writing to `graph` through g. The client is borrowed: it
 * must outlive the sink, and knut_graph_sink_close does not close it. opts
 * may be NULL. *out is NULL on failure.
 */
KNUT_EXTERN knut_status knut_graph_falkor_sink_new(knut_graph_sink **out, knut_graph_falkor *g,
                                                   const char *graph,
                                                   const knut_graph_falkor_sink_options *opts,
                                                   knut_error *err);

/* FalkorDB's statistics summed over the last apply's queries (index
 * creation excluded); zero before the first apply. sink must be one made
 * by knut_graph_falkor_sink_new. */
KNUT_EXTERN void knut_graph_falkor_sink_server_stats(const knut_graph_sink *sink,
                                                     knut_graph_falkor_stats *out);

/* ---- embedded graph store (src/graph/store*.c) ---- */

/*
 * A property graph kept in one DuckDB file (docs/graph.md, "Embedded graph
 * store"): a table per vertex label ("v_<label>": a surrogate vertex id
 * `_knut_vid` from a sequence, the merge keys as PRIMARY KEY, property
 * columns) and per edge type ("e_<type>": `_knut_src`, `_knut_dst`, the
 * endpoint labels, optional edge keys, UNIQUE over those, properties),
 * catalog tables naming them, and `_knut_vertex_labels_of(vid, label)`
 * holding every label of every vertex. A vertex is MERGEd on its first
 * label + keys, as FalkorDB does. New property columns are added as sets
 * bring them; a type that cannot be widened safely is an error naming the
 * set, the column and both types. The store is not thread-safe.
 */
typedef struct knut_graph_store knut_graph_store;

/* Opens (or creates) the store at path; NULL, "" or ":memory:" opens a
 * private in-memory store. *out is NULL on failure. */
KNUT_EXTERN knut_status knut_graph_store_open(knut_graph_store **out, const char *path,
                                              knut_error *err);
/* Closes the store (NULL-safe). Same as closing its sink: close one only. */
KNUT_EXTERN void knut_graph_store_close(knut_graph_store *store);

/*
 * The store as a sink (owned by the store; knut_graph_sink_close on it
 * closes the store). apply runs BEGIN, every vertex set, every edge set,
 * every edge delete set, every delete set, the commit callback (with the store's connection, so
 * the ledger rows land in the same transaction), COMMIT; on any error it
 * rolls back and nothing of the mutation is visible. Null keys and
 * endpoint keys are refused naming the set, row and column; duplicate
 * keys inside one batch: the last row wins. A null property value sets the
 * column NULL (FalkorDB removes the property). Edges whose endpoint vertex
 * does not exist are skipped (FalkorDB's MATCH finds nothing) and counted:
 * knut_graph_store_edges_skipped. Deleting a vertex removes its edges from
 * every edge table (counted in edges_deleted, as are the edges of edge
 * delete sets).
 */
KNUT_EXTERN knut_graph_sink *knut_graph_store_sink(knut_graph_store *store);
/* Edge rows skipped for missing endpoints by the last apply. */
KNUT_EXTERN int64_t knut_graph_store_edges_skipped(const knut_graph_store *store);
/* The store's connection, for reads (and the ledger) between applies. */
KNUT_EXTERN struct knut_duck_conn *knut_graph_store_conn(knut_graph_store *store);

/* Runs read SQL on the store (knut_duck_query rules apply to *out). */
KNUT_EXTERN knut_status knut_graph_store_query(knut_graph_store *store, const char *sql,
                                               struct ArrowArrayStream *out, knut_error *err);
/* One row per vertex label and edge type, ordered by kind then name:
 * kind ('vertex'|'edge'), name, table_name, keys (JSON array), rows. */
KNUT_EXTERN knut_status knut_graph_store_list(knut_graph_store *store, struct ArrowArrayStream *out,
                                              knut_error *err);

#define KNUT_GRAPH_STORE_EXPORT_OPTIONS_VERSION 1
typedef struct knut_graph_store_export_options {
    int version;                /* KNUT_GRAPH_STORE_EXPORT_OPTIONS_VERSION */
    const char *name;           /* graph name; NULL: "graph" */
    const char *file_type;      /* "parquet" (NULL) or "csv" */
    int64_t vertex_chunk_size;  /* 0: 262144 (also the edges' src/dst chunk size) */
    int64_t edge_chunk_size;    /* 0: 4194304 */
    unsigned adj_lists;         /* bits 1u << knut_graphar_adj_list_type; 0: ordered
                                 * by source + ordered by dest */
    int overwrite;              /* 1: empty existing type directories first */
} knut_graph_store_export_options;
#define KNUT_GRAPH_STORE_EXPORT_OPTIONS_INIT \
    {.version = KNUT_GRAPH_STORE_EXPORT_OPTIONS_VERSION}

/*
 * Writes the store as a GraphAr graph under out_dir through the GraphAr
 * writer: one vertex type per label table (its merge keys primary, other
 * labels of its vertices as GraphAr labels), one edge type per (source
 * label, type, destination label) present. Column types map to GraphAr
 * types (bool, int32, int64, float, double, string, date, timestamp,
 * lists in Parquet); others (and lists in CSV) are written as strings.
 * opts may be NULL.
 */
KNUT_EXTERN knut_status knut_graph_store_export_graphar(knut_graph_store *store,
                                                        const char *out_dir,
                                                        const knut_graph_store_export_options *opts,
                                                        knut_error *err);

/* ---- loading whole graphs (src/graph/load*.c) ---- */

/*
 * Loads every vertex and edge of a GraphAr graph into FalkorDB or the
 * embedded store (docs/graph.md, "Loading whole graphs"). Each vertex type
 * becomes a vertex set (label = the type; key = its primary property, or
 * `_gar_id` when it has none) whose vertices also keep their GraphAr
 * vertex index as the property `_gar_id`; each edge type becomes an edge
 * set (one adjacency list read) whose endpoints are found by (endpoint
 * type, `_gar_id`), so edges stream straight from the chunk files without
 * an index-to-key lookup table. Memory is one Arrow batch plus one round
 * of queries (or one bulk call) whatever the graph size.
 */
typedef enum knut_graph_load_kind {
    KNUT_GRAPH_LOAD_VERTICES = 0,
    KNUT_GRAPH_LOAD_EDGES
} knut_graph_load_kind;

/* What the progress callback gets: after every Arrow batch applied, and once
 * more with done = 1 when a set is finished. */
typedef struct knut_graph_load_progress {
    knut_graph_load_kind kind;
    const char *set;     /* vertex type, or "src_type,edge_type,dst_type" */
    int64_t set_rows;    /* rows of this set read so far */
    int64_t set_total;   /* rows of this set (from the count files) */
    int64_t rows;        /* rows of all sets read so far */
    int64_t total;       /* rows of all sets */
    int64_t elapsed_ns;  /* since the load started */
    int done;            /* 1: the set is fully applied */
    const char *method;  /* "bulk" or "unwind" (FalkorDB), "embedded" */
} knut_graph_load_progress;

typedef void (*knut_graph_load_progress_fn)(const knut_graph_load_progress *p, void *ctx);

#define KNUT_GRAPH_LOAD_OPTIONS_VERSION 1
typedef struct knut_graph_load_options {
    int version;             /* KNUT_GRAPH_LOAD_OPTIONS_VERSION */
    int64_t batch_rows;      /* rows per GRAPH.QUERY / rows buffered per bulk blob; 0: 5000 */
    int no_bulk;             /* 1: never GRAPH.BULK, always UNWIND MERGE */
    knut_graph_load_progress_fn progress; /* may be NULL */
    void *progress_ctx;
} knut_graph_load_options;
#define KNUT_GRAPH_LOAD_OPTIONS_INIT {.version = KNUT_GRAPH_LOAD_OPTIONS_VERSION}

typedef struct knut_graph_load_stats {
    int64_t vertices;    /* vertex rows applied */
    int64_t edges;       /* edge rows applied (FalkorDB UNWIND: edges MERGEd) */
    int bulk;            /* 1: GRAPH.BULK was used */
    double seconds;
} knut_graph_load_stats;

struct knut_graphar_graph_info;

/*
 * Into FalkorDB graph `graph` through g. When the graph key does not exist
 * and no_bulk is 0, the graph is built with GRAPH.BULK (see load_bulk.c)
 * and its node and edge counts are checked afterwards; otherwise (or when
 * the graph has types bulk cannot hold) vertices and edges are MERGEd in
 * UNWIND batches, so loading twice gives the same graph. Errors name the
 * set and the peer; stats (may be NULL) count what was acknowledged.
 */
KNUT_EXTERN knut_status knut_graph_load_graphar_falkor(knut_graph_falkor *g, const char *graph,
                                                       const struct knut_graphar_graph_info *gi,
                                                       const knut_graph_load_options *opts,
                                                       knut_graph_load_stats *stats,
                                                       knut_error *err);

/* Into the embedded store, one transaction per set (MERGE semantics). */
KNUT_EXTERN knut_status knut_graph_load_graphar_store(knut_graph_store *store,
                                                      const struct knut_graphar_graph_info *gi,
                                                      const knut_graph_load_options *opts,
                                                      knut_graph_load_stats *stats,
                                                      knut_error *err);

#ifdef __cplusplus
}
#endif

#endif /* KNUT_GRAPH_H */
