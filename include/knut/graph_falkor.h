/*
 * knut graph, FalkorDB: the client (connection, GRAPH.QUERY, reply
 * decoding into Arrow) and the sink that applies mutations through it.
 * Part of knut/graph.h.
 */
#ifndef KNUT_GRAPH_FALKOR_H
#define KNUT_GRAPH_FALKOR_H

#include <stddef.h>
#include <stdint.h>

#include "knut/arrow.h"
#include "knut/core.h"
#include "knut/graph_model.h"
#include "knut/graph_sink.h"

#ifdef __cplusplus
extern "C" {
#endif

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
 * thread-safe: use one per thread. Every reply is capped: one over
 * max_reply_bytes (512 MiB by default), by its declared lengths, or nested
 * deeper than max_depth is KNUT_ETOOBIG before it is read whole;
 * connection failures and timeouts are KNUT_EIO.
 *
 * FalkorDB sends its errors as text only. The client classifies a server
 * error once, where the reply is read, into err->detail (and a batch
 * item's error.detail); callers test the detail, never the message.
 */
typedef struct knut_graph_falkor knut_graph_falkor;

/* knut_error.detail of a FalkorDB server error (KNUT_EPEER); 0: not one. */
typedef enum knut_graph_falkor_error_kind {
    KNUT_GRAPH_FALKOR_ERR_OTHER = 0x100,     /* any other server error */
    KNUT_GRAPH_FALKOR_ERR_INDEX_EXISTS,      /* "Attribute 'k' is already indexed" */
    KNUT_GRAPH_FALKOR_ERR_EMPTY_KEY,         /* the graph's key does not exist (RO_QUERY) */
    KNUT_GRAPH_FALKOR_ERR_SYNTAX,            /* the query text does not parse */
    KNUT_GRAPH_FALKOR_ERR_TIMEOUT,           /* the query ran past its TIMEOUT */
    KNUT_GRAPH_FALKOR_ERR_OOM,               /* the query's memory cap, or maxmemory */
    KNUT_GRAPH_FALKOR_ERR_UNKNOWN_COMMAND,   /* no graph module: a plain Redis/Valkey */
    KNUT_GRAPH_FALKOR_ERR_VALUE              /* the data was refused, not the request: a
                                              * unique constraint violated, a value that
                                              * cannot be stored or merged on */
} knut_graph_falkor_error_kind;

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
 * opts may be NULL (copied). The caller closes *out with
 * knut_graph_falkor_close; it is NULL on failure. Errors: KNUT_EIO (cannot
 * connect), KNUT_EPEER (AUTH refused, no graph module), KNUT_EINVAL
 * (options), KNUT_ENOMEM.
 */
KNUT_EXTERN knut_status knut_graph_falkor_connect(knut_graph_falkor **out, const char *host,
                                                  int port, const knut_graph_falkor_options *opts,
                                                  knut_error *err);

/* Same from "redis://[[user]:password@]host[:port]" (port 6379 by default;
 * user and password may be percent-encoded; IPv6 hosts in brackets); a
 * malformed URL is KNUT_EINVAL, never quoting it. */
KNUT_EXTERN knut_status knut_graph_falkor_connect_url(knut_graph_falkor **out, const char *url,
                                                      const knut_graph_falkor_options *opts,
                                                      knut_error *err);

/* Closes the connection and frees g (NULL-safe); the password is wiped. */
KNUT_EXTERN void knut_graph_falkor_close(knut_graph_falkor *g);

/* "host:port" of the server, as used in messages; owned by g. */
KNUT_EXTERN const char *knut_graph_falkor_peer(const knut_graph_falkor *g);

#define KNUT_GRAPH_FALKOR_LIMIT_UNLIMITED (-1)

/* The server's RESULTSET_SIZE as read at the last (re)connect, or
 * KNUT_GRAPH_FALKOR_LIMIT_UNLIMITED. */
KNUT_EXTERN int64_t knut_graph_falkor_resultset_limit(const knut_graph_falkor *g);

/* Reads RESULTSET_SIZE again (after a GRAPH.CONFIG SET by anyone); errors
 * as for a query. */
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
 * have been applied. A command timeout closes the connection. query and
 * graph are borrowed; the caller frees *out with
 * knut_graph_falkor_result_reset. Server errors are KNUT_EPEER with
 * err->detail set; a reply it cannot decode KNUT_EPARSE.
 */
KNUT_EXTERN knut_status knut_graph_falkor_query(knut_graph_falkor *g, const char *graph,
                                                const char *query, unsigned flags,
                                                knut_graph_falkor_result *out, knut_error *err);

/* Sends one command (argv strings, for example GRAPH.DELETE g) and checks
 * its reply is not an error (KNUT_EPEER with err->detail); the reply is
 * discarded (and capped as any). Never resent. */
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
 * the items without a reply say they may have been applied. items and
 * their queries are the caller's.
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
 * bytes are borrowed; the caller frees *out with
 * knut_graph_falkor_result_reset. KNUT_EPARSE for malformed bytes,
 * KNUT_ETOOBIG past the caps, KNUT_EUNSUPPORTED for an unknown value type.
 */
KNUT_EXTERN knut_status knut_graph_falkor_reply_decode(knut_graph_falkor_result *out,
                                                       const void *resp, size_t len,
                                                       const knut_graph_falkor_names *names,
                                                       const knut_graph_falkor_options *opts,
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
 * may be NULL. graph is copied. The caller frees *out with
 * knut_graph_sink_close; it is NULL on failure (KNUT_EINVAL for options,
 * KNUT_ENOMEM).
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

/* ---- FalkorDB sink: transactions with a fence (src/graph/falkor_sink_tx.c) ---- */

/*
 * Makes the next apply of a FalkorDB sink run as MULTI/EXEC transactions,
 * each guarded by WATCH on fence_key: before every transaction the sink
 * WATCHes fence_key and GETs it; unless it holds fence_value nothing is
 * sent and the apply fails with KNUT_ECANCELLED. A change of the key
 * between the check and EXEC aborts the EXEC (nothing applied); while the
 * key still holds fence_value (the holder renewed it) the transaction is
 * retried, a few times. So a holder that lost the key writes nothing.
 *
 * Queries are grouped into transactions of at most unit_queries queries
 * and unit_bytes bytes (0: 16 and 16 MiB): the server runs a transaction
 * without serving other clients, so a bounded one keeps it responsive.
 * The last transaction of the apply (sent even with no query) runs the
 * commands cmd_argv after its queries (n_cmds commands; command i has
 * cmd_argc[i] arguments, taken in order from cmd_argv / cmd_lens): a
 * mutation that fits one transaction commits together with them, all or
 * nothing; earlier transactions of a larger mutation commit on their own.
 * The vertex-id probe is not used (MERGE only). Redis does not roll a
 * transaction back: a query that fails inside EXEC is undone by FalkorDB,
 * but the other commands of that EXEC stay applied. The apply then fails
 * with KNUT_EPEER (KNUT_EINVAL when the server refused the rows' values,
 * KNUT_GRAPH_FALKOR_ERR_VALUE) and cmds_applied = 1, so the caller can undo what its
 * commands did; a fence that does not hold fails it with KNUT_ECANCELLED
 * and fenced = 1. The commit callback of apply is not called.
 *
 * When the mutation has edge sets, the last transaction carries only the
 * commands, sent after every query was acknowledged, so the edge rows
 * skipped for a missing endpoint are known first: an edge set with
 * missing_endpoints KNUT_GRAPH_MISSING_FAIL that skipped rows fails the
 * apply with KNUT_EINVAL (detail KNUT_GRAPH_ERR_MISSING_ENDPOINT) and the
 * commands are not sent; the queries acknowledged before stay applied.
 * Then prepare (if set) is called once, just before the last transaction
 * is assembled, and may fill or replace n_cmds / cmd_argc / cmd_argv /
 * cmd_lens (the skipped counts are final by then only with edge sets);
 * a status other than KNUT_OK from it stops the apply, nothing of the
 * last transaction sent.
 *
 * The settings hold for one apply; the pointers are borrowed until it
 * returns. last_integer gets the integer reply of the last command (-1
 * if it was not an integer).
 */
#define KNUT_GRAPH_FALKOR_TX_VERSION 2

typedef struct knut_graph_falkor_tx {
    int version;             /* KNUT_GRAPH_FALKOR_TX_VERSION */
    const char *fence_key;
    const char *fence_value;
    size_t n_cmds;
    const int *cmd_argc;
    const char *const *cmd_argv;
    const size_t *cmd_lens;
    int64_t unit_queries;    /* 0: 16 */
    size_t unit_bytes;       /* 0: 16 MiB */
    knut_status (*prepare)(void *ctx, struct knut_graph_falkor_tx *tx, knut_error *err);
    void *prepare_ctx;
    /* filled by the apply */
    int64_t last_integer;
    int64_t transactions;    /* EXECs that ran */
    int cmds_applied;        /* the last EXEC ran (its commands applied) */
    int fenced;              /* failed because the fence did not hold the value */
} knut_graph_falkor_tx;

#define KNUT_GRAPH_FALKOR_TX_INIT \
    {KNUT_GRAPH_FALKOR_TX_VERSION, NULL, NULL, 0, NULL, NULL, NULL, 0, 0, NULL, NULL, -1, 0, 0, 0}

/* Sets tx for the next apply of sink (one made by knut_graph_falkor_sink_new). */
KNUT_EXTERN knut_status knut_graph_falkor_sink_set_tx(knut_graph_sink *sink,
                                                      knut_graph_falkor_tx *tx, knut_error *err);

/* ---- FalkorDB: building a new graph with GRAPH.BULK (src/graph/falkor_bulk.c) ---- */

/*
 * A bulk writer builds a graph key that does not exist yet: the first call
 * is GRAPH.BULK BEGIN (FalkorDB refuses it on an existing key), nodes get
 * ids 0..N-1 in the order they are sent, and edges name their endpoints
 * by those ids. Streams are taken over (released, also on error). Nothing
 * reaches the server before the first blob is full or a set ends; the
 * graph key exists from the first call on. After any failure the writer
 * is unusable: free it (the caller deletes the key). One writer at a time
 * per client; the client must not be used for anything else meanwhile.
 */
typedef struct knut_graph_falkor_bulk knut_graph_falkor_bulk;

KNUT_EXTERN knut_status knut_graph_falkor_bulk_new(knut_graph_falkor_bulk **out,
                                                   knut_graph_falkor *g, const char *graph,
                                                   knut_error *err);
/* 1 when every column of schema has a bulk code FalkorDB stores as the
 * batched UNWIND path would (bool, integers up to uint32, float, double,
 * utf8): the caller's test before choosing the bulk path. */
KNUT_EXTERN int knut_graph_falkor_bulk_types_ok(const struct ArrowSchema *schema,
                                                int64_t first);
/* Sends every row of rows as a node labelled `label`: column 0 is the
 * row's position in the set (int64: 0, 1, 2, ... in stream order; checked,
 * not sent: the caller's numbering, such as a fresh table's rowid, so
 * node id = *first_id + position), every other column a property (a
 * null one is left out); *first_id gets the id of its first row, *n the
 * rows sent. Every row needs one non-null property. */
KNUT_EXTERN knut_status knut_graph_falkor_bulk_nodes(knut_graph_falkor_bulk *b,
                                                     const char *label,
                                                     struct ArrowArrayStream *rows,
                                                     int64_t *first_id, int64_t *n,
                                                     knut_error *err);
/* Sends every row as an edge of `type`: columns 0 and 1 are the source
 * and destination node ids (int64, ids already sent), the rest
 * properties. *n gets the rows sent. */
KNUT_EXTERN knut_status knut_graph_falkor_bulk_edges(knut_graph_falkor_bulk *b,
                                                     const char *type,
                                                     struct ArrowArrayStream *rows, int64_t *n,
                                                     knut_error *err);
/* Reads the last reply and checks the graph holds exactly the nodes and
 * edges sent (KNUT_EIO otherwise). *begun: 0 when nothing was sent (no
 * key made). */
KNUT_EXTERN knut_status knut_graph_falkor_bulk_finish(knut_graph_falkor_bulk *b, int *begun,
                                                      knut_error *err);
/* Frees the writer (NULL-safe); an unread reply closes the connection. */
KNUT_EXTERN void knut_graph_falkor_bulk_free(knut_graph_falkor_bulk *b);

#ifdef __cplusplus
}
#endif

#endif /* KNUT_GRAPH_FALKOR_H */
