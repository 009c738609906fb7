/*
 * Internals of the FalkorDB client shared by its files: the RESP2 framing
 * scanner and cursor (falkor_client_resp.c), the compact-reply decoder
 * (falkor_client_reply.c for structure, types and statistics,
 * falkor_client_arrow.c for the Arrow builders, falkor_client_json.c for
 * JSON text), and the connection handle (falkor_client_conn.c,
 * falkor_client.c).
 */
#ifndef KNUT_GRAPH_FALKOR_INT_H
#define KNUT_GRAPH_FALKOR_INT_H

#include <stddef.h>
#include <stdint.h>

#include "knut/graph.h"

#define FALKOR_DEPTH_DEFAULT 64
#define FALKOR_DEPTH_MAX 1024
#define FALKOR_BATCH_ROWS_DEFAULT 65536
#define FALKOR_CONNECT_TIMEOUT_DEFAULT 5000

/* Prefix of every message: "falkordb host:port" (or "falkordb reply"). */
#define FALKOR_PEER_MAX 300

/* ---- RESP2 framing and cursor (falkor_client_resp.c) ------------------- */

/*
 * Finds where one reply ends in bytes that arrive in pieces, without
 * building anything: a stack of "items left" per open array. Resumable:
 * call again with the same (grown) buffer after KNUT_EAGAIN.
 */
typedef struct falkor_frame {
    size_t pos;          /* next element to scan, from the reply's start */
    size_t searched;     /* bytes after pos already searched for CRLF */
    int depth;
    int max_depth;
    int64_t max_bytes;
    int64_t left[FALKOR_DEPTH_MAX];
} falkor_frame;

void knut_graph__falkor_frame_init(falkor_frame *f, int max_depth, int64_t max_bytes);

/*
 * Scans buf[0..len) (the reply starts at 0). KNUT_OK with *end = the
 * reply's length once complete; KNUT_EAGAIN when more bytes are needed;
 * KNUT_EPARSE on bytes that are not RESP2; KNUT_ETOOBIG past max_depth or
 * max_bytes. Messages start with `peer`.
 */
knut_status knut_graph__falkor_frame_scan(falkor_frame *f, const char *buf, size_t len,
                                          size_t *end, const char *peer, knut_error *err);

/* One element header read by the cursor. */
typedef struct falkor_item {
    char type;       /* '+', '-', ':', '$', '*', or '_' for a nil bulk/array */
    int64_t n;       /* integer value, string length or array length */
    const char *s;   /* string bytes for '+', '-', '$' (not NUL-terminated) */
} falkor_item;

/* Reads over one framed reply; checks everything again (it is cheap), so it
 * never reads past `end` even on bytes the scanner did not see. */
typedef struct falkor_cur {
    const char *p;
    const char *end;
} falkor_cur;

/* Reads the next element header (an array's items follow it). KNUT_EPARSE
 * without a message: callers know what they expected. */
knut_status knut_graph__falkor_cur_next(falkor_cur *c, falkor_item *out);
/* Skips the items of `it` if it is an array (it was just read). */
knut_status knut_graph__falkor_cur_skip(falkor_cur *c, const falkor_item *it);

/* Appends GRAPH.QUERY (GRAPH.RO_QUERY with KNUT_GRAPH_FALKOR_READ_ONLY)
 * graph query --compact [TIMEOUT ms] to cmd (falkor_client.c). */
struct knut_graph_falkor;
knut_status knut_graph__falkor_query_cmd(const struct knut_graph_falkor *g, knut_buf *cmd,
                                         const char *graph, const char *query, unsigned flags,
                                         knut_error *err);
/* Appends one command (argv strings) in RESP2 to b. */
knut_status knut_graph__falkor_cmd_append(knut_buf *b, int argc, const char *const *argv,
                                          knut_error *err);
/* The same with argument lengths (NULL: strlen), for binary-safe arguments. */
knut_status knut_graph__falkor_cmd_append_lens(knut_buf *b, int argc, const char *const *argv,
                                               const size_t *lens, knut_error *err);

/* The knut_graph_falkor_error_kind of a server error's text (a RESP '-'
 * element): the one place FalkorDB's messages are matched. */
int knut_graph__falkor_error_kind(const char *msg, size_t len);
/* KNUT_EPEER "peer: [what: ]<msg>" with err->detail set to its kind. */
knut_status knut_graph__falkor_server_error(knut_error *err, const char *peer, const char *what,
                                            const char *msg, size_t len);

/* ---- compact reply decoding (falkor_client_reply.c, _arrow.c) ---------- */

/* What a column (or a list element, or map value) holds. */
typedef enum falkor_kind {
    FK_STRING = 2, /* the codes are FalkorDB's value types */
    FK_INT = 3,
    FK_BOOL = 4,
    FK_DOUBLE = 5,
    FK_LIST = 6,
    FK_EDGE = 7,
    FK_NODE = 8,
    FK_PATH = 9,
    FK_MAP = 10,
    FK_POINT = 11,
    FK_VECTOR = 12,
    FK_DATETIME = 13,
    FK_DATE = 14,
    FK_TIME = 15,
    FK_DURATION = 16,
    FK_TEXT = 100 /* mixed: utf8 JSON text */
} falkor_kind;

#define FALKOR_CODE_NULL 1
#define FALKOR_CODE_MAX 16

/* A type tree; NULL stands for "only nulls so far". */
typedef struct falkor_ty {
    falkor_kind kind;
    struct falkor_ty *child; /* LIST: element; MAP: value */
} falkor_ty;

typedef struct falkor_col {
    const char *name; /* into the reply bytes */
    size_t name_len;
    falkor_ty *ty;
} falkor_col;

/* One compact reply, scanned (pass 1) and then built (pass 2). */
typedef struct falkor_reply {
    const char *peer;
    const char *buf;
    size_t len;
    int has_columns;
    int64_t n_cols;
    falkor_col *cols;
    int64_t n_rows;
    const char *rows_at;   /* the first row, for pass 2 */
    /* Largest ids seen (-1: none); pass 2 needs names for all of them. */
    int64_t max_label, max_rel_type, max_prop_key;
    knut_graph_falkor_stats stats;
} falkor_reply;

/*
 * Pass 1 over a framed reply: structure, statistics, and (with infer) every
 * cell's type and the largest ids. A server error anywhere at the top
 * level is KNUT_EPEER with its message. r keeps pointers into buf.
 */
knut_status knut_graph__falkor_reply_scan(falkor_reply *r, const char *buf, size_t len,
                                          int infer, const char *peer, knut_error *err);
/* Frees the column types (r's bytes are the caller's). */
void knut_graph__falkor_reply_reset(falkor_reply *r);

/* Pass 2: Arrow batches of batch_rows rows into out (see the header). */
knut_status knut_graph__falkor_reply_build(const falkor_reply *r,
                                           const knut_graph_falkor_names *names,
                                           int64_t batch_rows, knut_graph_falkor_result *out,
                                           knut_error *err);

/* The strings of a one-column reply (CALL db.labels() and friends), as a
 * malloc'ed vector of malloc'ed strings. */
knut_status knut_graph__falkor_reply_strings(const char *buf, size_t len, const char *peer,
                                             char ***out, int64_t *n, knut_error *err);
void knut_graph__falkor_strings_free(char **v, int64_t n);

/* State of pass 2, shared by the Arrow and JSON halves. */
typedef struct falkor_build {
    const falkor_reply *r;
    const knut_graph_falkor_names *names;
    falkor_cur c;
    knut_buf text; /* scratch for JSON text */
    knut_error *err;
} falkor_build;

/* KNUT_EPARSE "malformed value" (callers add the row and column). */
knut_status knut_graph__falkor_malformed(falkor_build *b);
/* Reads the next element, which must be of type `want` (0: any). */
knut_status knut_graph__falkor_next(falkor_build *b, falkor_item *it, char want);
/* Label / relationship-type name of an id, or an error naming the list. */
knut_status knut_graph__falkor_label(falkor_build *b, int64_t id, const char **out);
knut_status knut_graph__falkor_type(falkor_build *b, int64_t id, const char **out);
/* Appends one value (type code, header just read) as JSON text. */
knut_status knut_graph__falkor_render(falkor_build *b, knut_buf *o, int64_t code,
                                      const falkor_item *v);
/* Appends a [[key_id, type, value]...] property list as a JSON object. */
knut_status knut_graph__falkor_render_props(falkor_build *b, knut_buf *o);

/* Shared by the passes: reads a [type, value] cell's header. */
knut_status knut_graph__falkor_cell_open(falkor_cur *c, int64_t *code, falkor_item *val);
/* Parses a double sent as text (%.15g, nan, -nan, inf, -inf). */
int knut_graph__falkor_parse_double(const falkor_item *it, double *out);
/* Name of an id, or NULL if the table does not have it. */
const char *knut_graph__falkor_name(const char *const *v, int64_t n, int64_t id);

/* ---- the handle (falkor_client_conn.c) -------------------------------- */

typedef struct redisContext redisContext;

/* Cached id → name tables of one graph. */
typedef struct falkor_names_cache {
    char *graph;
    char **v[3];   /* labels, relationship types, property keys */
    int64_t n[3];
    struct falkor_names_cache *next;
} falkor_names_cache;

struct knut_graph_falkor {
    redisContext *rc;     /* NULL while disconnected */
    char *host;
    int port;
    char peer[FALKOR_PEER_MAX];   /* "falkordb host:port" */
    char *username;
    char *password;
    knut_graph_falkor_options opts; /* defaults applied; no string pointers */
    char *rbuf;           /* bytes received; rbuf[rpos..rlen) not yet consumed */
    size_t rpos, rlen, rcap;
    falkor_frame frame;   /* scan state of the reply at rbuf[rpos] */
    int lost;             /* the last I/O error was a lost connection */
    int64_t resultset_limit;
    falkor_names_cache *names;
};

/* Opens the connection if an earlier failure closed it, and reopens it if
 * it is found dead (the peer closed it, or bytes arrived that nobody asked
 * for). Reopening a dead one counts as the call's one reconnect: it sets
 * *reconnected, and is refused when *reconnected is already set. */
knut_status knut_graph__falkor_ensure(knut_graph_falkor *g, int *reconnected, knut_error *err);
/* Closes the socket; the handle can reconnect later. */
void knut_graph__falkor_drop(knut_graph_falkor *g);
/* Writes all of bytes. */
knut_status knut_graph__falkor_send(knut_graph_falkor *g, const char *bytes, size_t len,
                                    knut_error *err);
/* Waits for the next complete reply: rbuf[rpos..rpos + *len) until consumed.
 * Any failure closes the connection (the stream cannot be resynchronised). */
knut_status knut_graph__falkor_recv(knut_graph_falkor *g, size_t *len, knut_error *err);
/* Marks the first len unconsumed bytes as consumed. */
void knut_graph__falkor_consume(knut_graph_falkor *g, size_t len);
/* Moves the first len unconsumed bytes into a malloc'ed block of the
 * caller's (without copying when they are all there is). */
knut_status knut_graph__falkor_take(knut_graph_falkor *g, size_t len, char **out,
                                    knut_error *err);
/* KNUT_EPEER "peer: what: <server message>" (the password scrubbed). */
knut_status knut_graph__falkor_peer_error(const knut_graph_falkor *g, const char *what,
                                          const char *msg, size_t len, knut_error *err);


/* ---- GRAPH.BULK calls and encoding (falkor_bulk_enc.c) ---- */

/* Far below Redis's 512 MB argument cap and BL's 64 MB default; large
 * enough that per-call overhead is negligible. */
#define KNUT_FBULK_BLOB_MAX ((size_t)16 << 20)
#define KNUT_FBULK_NAME_MAX 512

/* One bulk load in progress on g: the blob being encoded and the calls'
 * state. blob is initialised with cap KNUT_FBULK_BLOB_MAX + 1 MiB (one
 * record's slack) by the user. */
typedef struct fbulk_io {
    knut_graph_falkor *g;
    const char *graph;
    knut_buf blob;     /* the blob being encoded */
    int64_t blob_rows; /* records in it */
    int begun;         /* BEGIN was sent */
    int pending;       /* a call was sent and its reply not read yet */
} fbulk_io;

/* 1 if s can name a label/type (colon_ok: a property) in a blob. */
int knut_graph__fbulk_name_ok(const char *s, int colon_ok);
/* Sends the blob as one GRAPH.BULK call (after reading the previous reply);
 * no-op when it is empty. Never reconnects after BEGIN (ids would be lost). */
knut_status knut_graph__fbulk_send(fbulk_io *s, int is_node, knut_error *err);
/* Reads the reply of the call sent last. */
knut_status knut_graph__fbulk_reply(fbulk_io *s, knut_error *err);
/* After a bulk: the graph holds exactly nodes nodes and edges edges (two
 * count queries), else KNUT_EIO naming both counts. */
knut_status knut_graph__fbulk_check_counts(knut_graph_falkor *g, const char *graph,
                                           int64_t nodes, int64_t edges, knut_error *err);
/* A blob's header: the label or type, then the n property names of
 * sc->children[first..first + n). */
void knut_graph__fbulk_header(knut_buf *b, const char *name, const struct ArrowSchema *sc,
                              int64_t first, int64_t n);
void knut_graph__fbulk_put_u64(knut_buf *b, uint64_t v);
/* Encodes row i of v (a null as BI_NULL; dates and timestamps as ISO
 * strings). KNUT_EINVAL for a NUL in a string or a null in a list,
 * KNUT_EUNSUPPORTED for a type without a bulk code (col names it). */
knut_status knut_graph__fbulk_value(knut_buf *b, const knut_arrow_view *v, int64_t i,
                                    int in_list, const char *col, knut_error *err);

#endif
