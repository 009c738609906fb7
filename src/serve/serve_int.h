/*
 * Internal to the serve part (the files of src/serve): the server's state, the
 * Flight SQL commands as parsed from the wire, the encapsulated schemas,
 * the FlightData stream a DoGet writes, and the handlers of each RPC
 * family.
 */
#ifndef KNUT_SERVE_INT_H
#define KNUT_SERVE_INT_H

#include <pthread.h>
#include <stdint.h>

#include "flight.pb-c.h"
#include "flight_sql.pb-c.h"
#include "knut/arrow.h"
#include "knut/duck.h"
#include "knut/serve.h"

#define SERVE_LOG "serve"
#define SERVE_PKG "/arrow.flight.protocol.FlightService/"
/* SQL text in a command or a handle: a query, not a data file. */
#define KNUT_SERVE__MAX_SQL ((size_t)1 << 20)
/* A prepared statement handle's nonce; the bound parameters a handle may
 * carry (more stay on the server only); a whole handle, at most. */
#define KNUT_SERVE__NONCE_LEN 16
#define KNUT_SERVE__MAX_HANDLE_PARAMS ((size_t)256 << 10)
#define KNUT_SERVE__MAX_HANDLE (KNUT_SERVE__MAX_SQL + KNUT_SERVE__MAX_HANDLE_PARAMS + 1024)

/* ---- commands (wire.c) ---- */

typedef enum knut_serve__cmd_kind {
    KNUT_SERVE__CMD_STATEMENT_QUERY = 1,
    KNUT_SERVE__CMD_STATEMENT_UPDATE,
    KNUT_SERVE__CMD_TICKET_STATEMENT,
    KNUT_SERVE__CMD_PREPARED_QUERY,
    KNUT_SERVE__CMD_PREPARED_UPDATE,
    KNUT_SERVE__CMD_GET_CATALOGS,
    KNUT_SERVE__CMD_GET_DB_SCHEMAS,
    KNUT_SERVE__CMD_GET_TABLES,
    KNUT_SERVE__CMD_GET_TABLE_TYPES,
    KNUT_SERVE__CMD_GET_SQL_INFO,
    KNUT_SERVE__CMD_GET_XDBC_TYPE_INFO,
    KNUT_SERVE__CMD_GET_PRIMARY_KEYS,
    KNUT_SERVE__CMD_GET_EXPORTED_KEYS,
    KNUT_SERVE__CMD_GET_IMPORTED_KEYS,
    KNUT_SERVE__CMD_GET_CROSS_REFERENCE,
} knut_serve__cmd_kind;

/* A command unpacked from its Any: kind, the message's short name (for
 * errors) and the unpacked message (owned). */
typedef struct knut_serve__cmd {
    knut_serve__cmd_kind kind;
    const char *name;
    ProtobufCMessage *msg;
} knut_serve__cmd;
#define KNUT_SERVE__CMD_INIT {0, NULL, NULL}

/* Unpacks a serialized Any holding a Flight SQL command. Errors:
 * KNUT_EPARSE (not an Any, or its value not the message its type names:
 * INVALID_ARGUMENT), KNUT_EUNSUPPORTED (a type this server does not know:
 * UNIMPLEMENTED, naming it). */
knut_status knut_serve__cmd_parse(const uint8_t *data, size_t len, knut_serve__cmd *out,
                                  knut_error *err);
/* A FlightDescriptor's bytes to its command: it must be of type CMD. */
knut_status knut_serve__descriptor_parse(const uint8_t *data, size_t len,
                                         KnutServe__FlightDescriptor **desc,
                                         knut_serve__cmd *out, knut_error *err);
void knut_serve__cmd_reset(knut_serve__cmd *c);
/* Unpacks an Any that must hold arrow.flight.protocol.sql.<name> (an
 * action's body): KNUT_EINVAL for another type, KNUT_EPARSE for bytes that
 * do not decode. The caller frees *out (protobuf_c_message_free_unpacked). */
knut_status knut_serve__any_unpack(const uint8_t *data, size_t len, const char *name,
                                   const ProtobufCMessageDescriptor *desc, ProtobufCMessage **out,
                                   knut_error *err);
/* Packs m into an Any of type arrow.flight.protocol.sql.<name>, serialized
 * into out (cleared first). */
knut_status knut_serve__any_pack(const char *name, const ProtobufCMessage *m, knut_buf *out,
                                 knut_error *err);
/* Serializes m into out (cleared first). */
knut_status knut_serve__pack(const ProtobufCMessage *m, knut_buf *out, knut_error *err);

/* ---- Arrow pieces (flightdata.c) ---- */

/* The encapsulated IPC form of schema (marker, length, Schema message,
 * padding), as FlightInfo.schema and the prepared statement schemas carry
 * it; into out (cleared first). */
knut_status knut_serve__schema_bytes(const struct ArrowSchema *schema, knut_buf *out,
                                     knut_error *err);

/* Streams an Arrow C stream as FlightData messages on call: the schema
 * first, then record batches, each message at most max_message bytes
 * (a larger batch is cut in row halves until it fits). fix (may be NULL)
 * adjusts the stream's schema first (nullability of metadata columns). The
 * stream is read, not released. *rows gets the rows sent. */
knut_status knut_serve__stream_send(knut_net_grpc_call *call, struct ArrowArrayStream *stream,
                                    void (*fix)(struct ArrowSchema *), size_t max_message,
                                    int64_t *rows, knut_error *err);

/* Message.bodyLength (field 3) of a flatbuffer Message, bounds-checked;
 * -1 if the bytes are not a Message the IPC writer could have made. */
int64_t knut_serve__fb_body_length(const uint8_t *b, size_t n);

/* Reads one FlightData's IPC message into an IPC stream in out (appends
 * marker, length, header padded to 8, body). */
knut_status knut_serve__flightdata_to_ipc(const KnutServe__FlightData *fd,
                                          knut_buf *out, knut_error *err);

/* ---- authentication and authorization (auth.c, auth_file.c, authz.c) ---- */

#define KNUT_SERVE__MAX_IDENT 256
#define KNUT_SERVE__DIGEST 32 /* SHA-256 */
#define KNUT_SERVE__MAX_SESSIONS 4096

/* A bearer token: its digest and the identity it stands for. */
typedef struct knut_serve__secret {
    uint8_t digest[KNUT_SERVE__DIGEST];
    char *name;
} knut_serve__secret;

/* A user of Basic: the SHA-256 of a plain password (iterations 0), or a
 * PBKDF2-HMAC-SHA256 hash with its salt and iterations. */
typedef struct knut_serve__user {
    char *name;
    long iterations;
    char *salt;
    uint8_t hash[KNUT_SERVE__DIGEST];
} knut_serve__user;

typedef struct knut_serve__session {
    uint8_t digest[KNUT_SERVE__DIGEST];
    char name[KNUT_SERVE__MAX_IDENT];
    int64_t expires_ns; /* monotonic clock */
} knut_serve__session;

/* allow IDENTITY PATTERN... */
typedef struct knut_serve__rule {
    char *ident;
    char **patterns;
    size_t n;
} knut_serve__rule;

typedef struct knut_serve__auth {
    int on; /* credentials are required */
    knut_serve__secret *tokens;
    size_t n_tokens;
    knut_serve__user *users;
    size_t n_users;
    knut_serve__user dummy; /* checked for an unknown user: the same cost */
    knut_serve__rule *rules; /* none: everyone reads everything */
    size_t n_rules;
    int64_t ttl_ns;
    pthread_mutex_t lock; /* the sessions */
    knut_serve__session *sessions;
    size_t n_sessions;
} knut_serve__auth;

/* Who a call is, from knut_serve__auth_call; the checks set a flag when
 * they refuse, which the call's status tells (UNAUTHENTICATED,
 * PERMISSION_DENIED). */
typedef struct knut_serve__who {
    const knut_serve__auth *auth;
    char name[KNUT_SERVE__MAX_IDENT]; /* "" when authentication is off */
    int unauthenticated;
    int denied;
    /* what the call did, for its metrics and request log line */
    const char *what; /* a static name: the command's message or the action */
    int64_t rows;
} knut_serve__who;

/* What the catalog commands may list to a restricted identity: keys
 * "cat\x1fschema\x1ftable\x1e..." (and shorter for schemas, catalogs),
 * bound as text and split by DuckDB. on == 0: everything. */
enum { KNUT_SERVE__VIS_TABLES, KNUT_SERVE__VIS_SCHEMAS, KNUT_SERVE__VIS_CATALOGS };
typedef struct knut_serve__visible {
    int on;
    knut_buf list[3];
} knut_serve__visible;

struct knut_serve;
/* Reads the auth file and tokens of o (nothing: authentication off).
 * Errors name the file and line, never a secret. Free with _auth_free
 * (also after an error). */
knut_status knut_serve__auth_load(knut_serve__auth *a, const knut_serve_options *o,
                                  knut_error *err);
void knut_serve__auth_free(knut_serve__auth *a);
/* Who the call is (handshake: Basic credentials are taken, and answered
 * with a session token in the response headers). KNUT_EPEER with
 * who->unauthenticated when the credentials do not hold. */
knut_status knut_serve__auth_call(struct knut_serve *s, knut_net_grpc_call *call, int handshake,
                                  knut_serve__who *who, knut_error *err);
/* Standard base64 (a Basic header's), padded (C++ Flight, pyarrow) or not
 * (Go, so ADBC), into out[0..*n) of at most cap bytes; -1 for anything
 * else (other characters, too long, a lone trailing character). */
int knut_serve__b64_decode(const char *in, size_t len, uint8_t *out, size_t cap, size_t *n);
/* One table name as DuckDB writes it (x, "a b"."c""d", c.s.t, maybe then
 * " AS alias") into its 1 to 3 unquoted parts; the count, or -1 when it is
 * not that shape (such a name is refused, never guessed at). */
int knut_serve__name_parse(const char *s, char parts[3][KNUT_SERVE__MAX_IDENT]);
/* 0 when pattern is TABLE, SCHEMA.TABLE or CATALOG.SCHEMA.TABLE. */
int knut_serve__pattern_check(const char *pattern);
/* Whether who reads everything; whether who may read cat.sch.tbl. */
int knut_serve__authz_full(const knut_serve__who *who);
int knut_serve__authz_table(const knut_serve__who *who, const char *cat, const char *sch,
                            const char *tbl);
/* Sets who->denied and err (KNUT_EPERM-like: KNUT_EPEER); logs it. */
knut_status knut_serve__denied(knut_serve__who *who, knut_error *err, const char *fmt, ...)
    KNUT_PRINTF(3, 4);
/* Checks that who may run sql (prepared as stmt on conn). */
knut_status knut_serve__authz_sql(struct knut_serve *s, knut_serve__who *who,
                                  knut_duck_conn *conn, const char *sql,
                                  const knut_duck_stmt *stmt, knut_error *err);
/* The lists of what who may see (v->on 0 when everything). */
knut_status knut_serve__authz_visible(knut_serve__who *who, knut_duck_conn *conn,
                                      knut_serve__visible *v, knut_error *err);
void knut_serve__visible_reset(knut_serve__visible *v);
/* Every cell of a stream of text columns, row by row, NUL after each,
 * into out (cleared first); *n cells (a NULL is ""). */
knut_status knut_serve__stream_strings(struct ArrowArrayStream *rows, knut_buf *out, size_t *n,
                                       knut_error *err);

/* ---- prepared statement handles (handle.c) ---- */

/* The key handles are signed with (HMAC-SHA256). */
typedef struct knut_serve__hkey {
    uint8_t key[256];
    size_t len;
    int ephemeral; /* random for this process: handles end with it */
} knut_serve__hkey;

/* A handle's fields; decoded, the pointers are into the handle's bytes. */
typedef struct knut_serve__handle {
    uint8_t nonce[KNUT_SERVE__NONCE_LEN];
    char owner[KNUT_SERVE__MAX_IDENT];
    const char *sql; /* sql_len bytes, no NUL */
    size_t sql_len;
    const uint8_t *params; /* an IPC stream of one parameter row; NULL: none inside */
    size_t params_len;
} knut_serve__handle;

/* The key from file (mode 0600 required), else text ($KNUT_SERVE_HANDLE_KEY),
 * else random. Errors name the file, never the key. */
knut_status knut_serve__hkey_load(knut_serve__hkey *k, const char *file, const char *text,
                                  knut_error *err);
void knut_serve__hkey_wipe(knut_serve__hkey *k);
/* Signs h into out (cleared first). */
knut_status knut_serve__handle_encode(const knut_serve__hkey *k, const knut_serve__handle *h,
                                      knut_buf *out, knut_error *err);
/* Verifies and reads data[0..n): KNUT_EINVAL for anything not signed with
 * k or not well-formed (h is zeroed then); never reads past n. */
knut_status knut_serve__handle_decode(const knut_serve__hkey *k, const uint8_t *data, size_t n,
                                      knut_serve__handle *h, knut_error *err);

/* ---- serve.yml (config.c), its views and Cypher tables (views.c, cypher*.c) ---- */

/* The catalog the named Cypher queries are tables of. */
#define KNUT_SERVE__CYPHER_CATALOG "cypher"

/* A view of serve.yml: catalog.main.name over files. */
typedef struct knut_serve__view {
    const char *catalog, *name; /* the tree's or the graph's strings, or own */
    char *path;                 /* absolute: a file, a glob or a folder; for
                                 * GraphAr the graph's data folder ('/'-ended) */
    int csv;                    /* else Parquet */
    const void *node;           /* where it was written (a knut_conf) */
    /* A GraphAr source's table: a vertex type, or an edge type read from
     * one adj list (owned by the config's graphs); both NULL: a file view */
    const struct knut_graphar_vertex_info *gar_vertex;
    const struct knut_graphar_edge_info *gar_edge;
    int gar_adj;                /* knut_graphar_adj_list_type */
    char *own;                  /* a name made here (src_edge_dst) */
} knut_serve__view;

/* A named Cypher query: a table cypher.main.name whose columns are the
 * result's (declared, or inferred once at start: the schema cache) and
 * then its parameters. DuckDB type names. */
typedef struct knut_serve__query {
    const char *name, *cypher;
    const char **cols, **col_types;
    size_t n_cols;
    const char **params, **param_types;
    size_t n_params;
    const void *node;
    char *inferred; /* the inferred columns' names and types, NUL after each */
} knut_serve__query;

typedef struct knut_serve__config {
    int loaded;
    void *tree; /* the knut_conf tree, which owns the strings */
    knut_serve__view *views;
    size_t n_views;
    struct knut_graphar_graph_info **graphs; /* of the graphar: sources */
    size_t n_graphs;
    char *falkor_url; /* NULL: no FalkorDB */
    char *falkor_graph;
    char *falkor_password; /* from a file or the environment; wiped when freed */
    int falkor_timeout_ms;
    knut_serve__query *queries;
    size_t n_queries;
    pthread_mutex_t lock; /* the one FalkorDB client */
    struct knut_graph_falkor *falkor;
    char *conn_sql; /* the per-connection temp tables of the queries */
} knut_serve__config;

/* Loads serve.yml into c (zeroed first); errors name file:line:col.
 * Free with _config_free (also after an error). */
knut_status knut_serve__config_load(knut_serve__config *c, const char *path, knut_error *err);
void knut_serve__config_free(knut_serve__config *c);
/* Per database, right after it is opened and before it is locked down:
 * the catalogs and views of serve.yml and the Cypher tables. */
knut_status knut_serve__views_setup(struct knut_serve *s, knut_duck_conn *conn, knut_error *err);
/* Per call connection: the temp tables the Cypher views read (nothing
 * without queries). */
knut_status knut_serve__cypher_conn(struct knut_serve *s, knut_duck_conn *conn, knut_error *err);
/* Before a query on conn runs: every named query its SQL reads is run on
 * FalkorDB with the parameters of its WHERE (values bound from the
 * statement, or from the prepared handle's row) and its result put in
 * place. handle NULL for a plain statement. */
knut_status knut_serve__cypher_fill(struct knut_serve *s, knut_serve__who *who,
                                    knut_duck_conn *conn, const char *sql,
                                    const uint8_t *handle, size_t hlen, size_t n_params,
                                    knut_error *err);
/* Reads stream into temp table name on conn (knut_duck_register_stream
 * run with the cypher catalog as the default). */
knut_status knut_serve__cypher_register(struct knut_serve *s, knut_duck_conn *conn,
                                        const char *name, struct ArrowArrayStream *stream,
                                        knut_error *err);
/* Ad-hoc Cypher: SQL text that starts with "CYPHER " (any case). */
int knut_serve__cypher_adhoc(const char *sql);
/* Runs ad-hoc Cypher and streams its result on call. */
knut_status knut_serve__cypher_adhoc_doget(struct knut_serve *s, knut_serve__who *who,
                                           knut_net_grpc_call *call, const char *cypher,
                                           int64_t *rows, knut_error *err);
/* Whether a table of the binder's is one of the Cypher views' own temp
 * tables (authorized through the view's name instead). */
int knut_serve__cypher_internal(const char *cat, const char *sch, const char *tbl);

/* ---- server state ---- */

/* Parameters bound by DoPut, kept for clients that go on using the handle
 * they had (not the one DoPut answers), keyed by the handle's nonce. */
typedef struct knut_serve__prepared {
    uint8_t nonce[KNUT_SERVE__NONCE_LEN];
    char owner[KNUT_SERVE__MAX_IDENT]; /* only its maker uses a handle */
    knut_buf params; /* an IPC stream of the bound parameters */
    int64_t used_ns; /* monotonic: idle past the TTL, it is dropped */
} knut_serve__prepared;

/* A Flight method's context on the gRPC server: the server, and which. */
#define KNUT_SERVE__N_METHODS 9
typedef struct knut_serve__method {
    struct knut_serve *s;
    int index;
} knut_serve__method;

struct knut_serve {
    /* the current generation: take connections with knut_serve__conn_open */
    knut_duck_db *db;
    pthread_mutex_t db_lock; /* db and db_gen */
    uint64_t db_gen;
    char *db_path, *init_sql; /* what each open needs (copies) */
    struct knut_serve__metrics *metrics;
    char *metrics_addr;
    knut_net_grpc_server *srv;
    size_t max_message;
    size_t max_receive;
    pthread_mutex_t lock; /* the prepared statements */
    knut_serve__prepared *prepared;
    size_t n_prepared, cap_prepared;
    size_t max_prepared;
    int64_t prepared_ttl_ns;
    knut_serve__hkey hkey;
    knut_serve__auth auth;
    knut_serve__method methods[KNUT_SERVE__N_METHODS];
    char catalog[KNUT_SERVE__MAX_IDENT]; /* the default catalog, for unqualified names */
    knut_serve__config conf; /* serve.yml; zeroed without one */
};

/* ---- RPC families ---- */

/* sql.c: the schema a query command would return, and its rows. */
knut_status knut_serve__sql_schema(knut_serve *s, knut_serve__who *who,
                                   const knut_serve__cmd *cmd, struct ArrowSchema *out,
                                   knut_error *err);
knut_status knut_serve__sql_doget(knut_serve *s, knut_serve__who *who, knut_net_grpc_call *call,
                                  const knut_serve__cmd *cmd, knut_error *err);
/* The ticket DoGet will get for cmd (the handle or the command itself). */
knut_status knut_serve__sql_ticket(const knut_serve__cmd *cmd, const uint8_t *cmd_bytes,
                                   size_t cmd_len, knut_buf *out, knut_error *err);

/* meta.c: Flight SQL metadata commands as queries on DuckDB's catalog. */
knut_status knut_serve__meta_query(knut_duck_conn *conn, const knut_serve__cmd *cmd,
                                   const knut_serve__visible *vis, struct ArrowArrayStream *out,
                                   void (**fix)(struct ArrowSchema *), knut_error *err);

/* Sets column i of s nullable when bit i of mask is set, not null otherwise. */
void knut_serve__meta_nullable(struct ArrowSchema *s, unsigned mask);
/* meta_types.c: the CommandGetXdbcTypeInfo rows, and the fix that gives
 * them the protocol's schema. */
knut_status knut_serve__meta_xdbc_types(knut_duck_conn *conn,
                                        const KnutServe__Flightsql__CommandGetXdbcTypeInfo *c,
                                        struct ArrowArrayStream *out, knut_error *err);
void knut_serve__meta_xdbc_fix(struct ArrowSchema *s);
/* meta_keys.c: primary and foreign keys from duckdb_constraints(). */
knut_status knut_serve__meta_keys(knut_duck_conn *conn, const knut_serve__cmd *cmd,
                                  const knut_serve__visible *vis, struct ArrowArrayStream *out,
                                  void (**fix)(struct ArrowSchema *), knut_error *err);
/* Replaces s by a deep copy that knut owns (so names and metadata can be
 * set); s is left as it was when the copy fails. 0 on success. */
int knut_serve__schema_own(struct ArrowSchema *s);

/* colmeta.c: sets the Flight SQL column metadata (type name, decimal
 * precision and scale) on each column of a query's schema (a fix for
 * knut_serve__stream_send). Best effort: out of memory leaves it off. */
void knut_serve__column_metadata(struct ArrowSchema *s);

/* params.c: a prepared statement's parameter schema with TIMESTAMP
 * parameters as timestamp[ms], not DuckDB's [us]: the Flight SQL JDBC
 * driver (18.x) writes milliseconds into whatever timestamp vector the
 * schema names, so [us] made its values 1000 times too small. Every unit
 * is bound as sent (params.c converts), so clients that send [us] still
 * keep their microseconds. Best effort. */
void knut_serve__params_schema_ms(struct ArrowSchema *ps);

/* colorigin.c: the table column each result column of sql is, where
 * DuckDB's parse and catalog say so unambiguously (NULL: none known; the
 * schema s is the statement's result schema, for its names). _apply sets
 * ARROW:FLIGHT:SQL:CATALOG_NAME, SCHEMA_NAME, DB_SCHEMA_NAME, TABLE_NAME
 * on those columns (after knut_serve__column_metadata, which drops them);
 * _wrap makes rows' get_schema set both (takes o; -1 out of memory, rows
 * left as they were). Best effort throughout. */
typedef struct knut_serve__origins knut_serve__origins;
knut_serve__origins *knut_serve__origins_find(knut_duck_conn *conn, const char *sql,
                                              const struct ArrowSchema *s);
void knut_serve__origins_apply(const knut_serve__origins *o, struct ArrowSchema *s);
void knut_serve__origins_free(knut_serve__origins *o);
int knut_serve__origins_wrap(struct ArrowArrayStream *rows, knut_serve__origins *o);

/* The 4-column GetTables rows; then (meta_schema.c) the same rows read to
 * their end with a fifth column, each table's schema in IPC form. */
knut_status knut_serve__meta_tables(knut_duck_conn *conn,
                                    const KnutServe__Flightsql__CommandGetTables *c,
                                    const knut_serve__visible *vis,
                                    struct ArrowArrayStream *out, knut_error *err);
knut_status knut_serve__meta_tables_with_schema(knut_duck_conn *conn,
                                                struct ArrowArrayStream *rows,
                                                struct ArrowArrayStream *out, knut_error *err);

/* sqlinfo.c: the CommandGetSqlInfo rows (one batch) and their schema. */
knut_status knut_serve__sqlinfo_query(knut_duck_conn *conn, const knut_serve__cmd *cmd,
                                      struct ArrowArrayStream *out, knut_error *err);
knut_status knut_serve__sqlinfo_schema(struct ArrowSchema *out, knut_error *err);

/* prepared.c: the handle table and the actions and DoPut around it. */
knut_status knut_serve__prepared_create(knut_serve *s, knut_serve__who *who, const uint8_t *body,
                                        size_t len, knut_buf *result, knut_error *err);
knut_status knut_serve__prepared_close(knut_serve *s, knut_serve__who *who, const uint8_t *body,
                                       size_t len, knut_error *err);
knut_status knut_serve__prepared_bind(knut_serve *s, knut_serve__who *who, const uint8_t *handle,
                                      size_t hlen,
                                      knut_net_grpc_call *call,
                                      const KnutServe__FlightData *first,
                                      knut_error *err);
/* A statement on conn for the handle, parameters bound, checked against
 * what who may read; caller frees. */
knut_status knut_serve__prepared_stmt(knut_serve *s, knut_serve__who *who, const uint8_t *handle,
                                      size_t hlen,
                                      knut_duck_conn *conn, knut_duck_stmt **out,
                                      knut_error *err);
void knut_serve__prepared_free_all(knut_serve *s);
/* Binds the parameter row of handle (who's) to stmt, another statement
 * over the same parameters; nothing when none were put. */
knut_status knut_serve__prepared_bind_to(knut_serve *s, knut_serve__who *who,
                                         const uint8_t *handle, size_t hlen,
                                         knut_duck_stmt *stmt, knut_error *err);
/* A copy of the handle's SQL (who's), or NULL; caller frees. */
char *knut_serve__prepared_sql(knut_serve *s, knut_serve__who *who, const uint8_t *handle,
                               size_t hlen);
/* params.c: binds row `row` of batch (one column per parameter, in order)
 * to stmt's $1, $2, ...; the batch is read, not kept. */
knut_status knut_serve__params_bind(knut_duck_stmt *stmt, const struct ArrowSchema *schema,
                                    const struct ArrowArray *batch, int64_t row,
                                    knut_error *err);

/* dbgen.c: the served database and its recovery from a fatal error. */
/* Opens the database as configured and runs the per-open setup: init SQL,
 * knut_serve__db_setup, then the lock-down; the one place a database of
 * the server is opened (at start and on every reopen). */
knut_status knut_serve__db_open(knut_serve *s, knut_duck_db **out, knut_error *err);
/* Per-open setup on conn, before the lock-down (files may still be read,
 * settings changed): the default catalog, and views/catalogs of a
 * configuration. Called for every generation, so it must be repeatable. */
knut_status knut_serve__db_setup(knut_serve *s, knut_duck_conn *conn, knut_error *err);
/* A connection to the current generation (opening one if a reopen failed). */
knut_status knut_serve__conn_open(knut_serve *s, knut_duck_conn **out, knut_error *err);
uint64_t knut_serve__db_generation(knut_serve *s);
/* After a call failed with st/err: when err is DuckDB's fatal error and the
 * current database is the invalidated one, reopens it; returns KNUT_EAGAIN
 * (UNAVAILABLE: retry) for such a failure, st unchanged otherwise. */
knut_status knut_serve__db_recover(knut_serve *s, knut_status st, knut_error *err);

/* rpc.c: registers every Flight method on the server. */
knut_status knut_serve__rpc_register(knut_serve *s, knut_error *err);
/* The full name of method index i ("/arrow.flight.protocol.FlightService/DoGet"). */
const char *knut_serve__method_name(int i);
#define KNUT_SERVE__METHOD_DOGET 5

/* metrics.c: counters of the calls, /metrics, the request log line. */
typedef struct knut_serve__metrics knut_serve__metrics;
knut_status knut_serve__metrics_new(knut_serve *s, knut_error *err);
void knut_serve__metrics_free(knut_serve *s);
knut_status knut_serve__metrics_serve(knut_serve *s, const char *addr, knut_error *err);
void knut_serve__metrics_begin(knut_serve *s, int method);
/* A call of method ended with gRPC code after ns, bytes sent: counted and
 * logged (info, one JSON line). */
void knut_serve__metrics_end(knut_serve *s, int method, const knut_serve__who *who, int code,
                             uint64_t bytes, int64_t ns);

#endif /* KNUT_SERVE_INT_H */
