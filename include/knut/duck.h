/*
 * knut duck: the embedded SQL engine. Wraps DuckDB's C API so the rest of
 * knut sees databases, connections and prepared statements, gets results as
 * Arrow C streams in bounded batches, and hands Arrow streams to SQL as
 * tables. DuckDB's own error text always reaches knut_error, prefixed with
 * what was being done.
 *
 * Lifetimes:
 *  - A connection may outlive its knut_duck_db handle (DuckDB keeps the
 *    database open until its last connection is gone), but close
 *    connections first where you can.
 *  - A result stream (knut_duck_query, knut_duck_stmt_query) holds a
 *    reference to its connection, so releasing the stream after
 *    knut_duck_conn_close is safe. The stream reads rows lazily from the
 *    connection: it stays readable until the next statement is prepared or
 *    run on the same connection (any knut_duck_* call that takes SQL or
 *    executes a statement; DuckDB closes the result then). After that its
 *    get_next fails with EINVAL ("result stream was superseded ...") rather
 *    than ending early, so a truncated read is never silent. To read two
 *    results at once, use two connections.
 *  - A prepared statement holds a reference to its connection too.
 *  - Objects are not thread-safe: use one connection per thread (streams
 *    may be released on any thread).
 */
#ifndef KNUT_DUCK_H
#define KNUT_DUCK_H

#include <stddef.h>
#include <stdint.h>

#include "knut/arrow.h"
#include "knut/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct knut_duck_db knut_duck_db;
typedef struct knut_duck_conn knut_duck_conn;
typedef struct knut_duck_stmt knut_duck_stmt;

/* One DuckDB setting, by DuckDB's own name: "threads", "memory_limit",
 * "access_mode" (READ_ONLY / READ_WRITE), "temp_directory", ... */
typedef struct knut_duck_option {
    const char *name;
    const char *value;
} knut_duck_option;

/* Version string of the linked DuckDB library ("v1.4.4"); never NULL. */
KNUT_EXTERN const char *knut_duck_library_version(void);

/* ---- errors ------------------------------------------------------------ */

/*
 * knut_error.detail of an error DuckDB reported: its kind, from DuckDB's
 * error type, or where the C API gives only text (a failed prepare, parse
 * or open) from the message's "Binder Error: " style prefix. Callers test
 * the kind, never the message. 0: the error did not come from DuckDB.
 *
 * Every function below that runs SQL returns, for an error DuckDB raised,
 * the status of its kind: PARSER KNUT_EPARSE, CATALOG KNUT_ENOTFOUND,
 * BINDER / CONVERSION / INVALID_INPUT / CONSTRAINT KNUT_EINVAL, IO
 * KNUT_EIO, OUT_OF_MEMORY KNUT_ENOMEM, INTERRUPT KNUT_ECANCELLED,
 * NOT_IMPLEMENTED KNUT_EUNSUPPORTED, TRANSACTION, FATAL, INTERNAL and
 * OTHER KNUT_ERROR,
 * with DuckDB's message (one line) in err.
 */
typedef enum knut_duck_error_kind {
    KNUT_DUCK_ERR_OTHER = 0x200,  /* any other DuckDB error */
    KNUT_DUCK_ERR_PARSER,         /* the SQL text does not parse */
    KNUT_DUCK_ERR_CATALOG,        /* no such table, view, function, ... */
    KNUT_DUCK_ERR_BINDER,         /* a column or expression that does not bind */
    KNUT_DUCK_ERR_CONVERSION,     /* a value that does not convert or is out of range */
    KNUT_DUCK_ERR_INVALID_INPUT,  /* bad input: a malformed file, error(), a parameter */
    KNUT_DUCK_ERR_CONSTRAINT,     /* a key or NOT NULL constraint */
    KNUT_DUCK_ERR_IO,             /* a file (or URL) that cannot be read or written */
    KNUT_DUCK_ERR_OUT_OF_MEMORY,  /* memory_limit reached */
    KNUT_DUCK_ERR_INTERRUPT,      /* knut_duck_conn_interrupt */
    KNUT_DUCK_ERR_NOT_IMPLEMENTED,
    KNUT_DUCK_ERR_TRANSACTION,    /* a conflict or an aborted transaction */
    /* The database is invalidated (FATAL), or may be (INTERNAL: an assertion
     * in DuckDB): every later statement on it fails until it is reopened. */
    KNUT_DUCK_ERR_FATAL,
    KNUT_DUCK_ERR_INTERNAL
} knut_duck_error_kind;

/* Cuts what DuckDB adds after what broke off err's message (NULL-safe):
 * its advice ("Possible Solution: ...", "Possible fixes: ...") and the echo
 * of the statement ("LINE 1: ..."), for reasons about a file, not the SQL. */
KNUT_EXTERN void knut_duck_error_trim(knut_error *err);

/* Rewrites a DuckDB error raised while reading a data file into the reason
 * a user reads (NULL-safe):
 * trimmed as knut_duck_error_trim, and also of the reader's settings dump
 * ("file = ...; delimiter = ..."), without knut's "executing statement: "
 * and DuckDB's "Invalid Input Error: " prefixes, and a CSV error as
 * "line N: what is wrong" (without the line's text: it may be any data).
 * Every part that reads a file (sync, gar import) reports it this way, so
 * the same bad file reads the same everywhere; the caller adds the file's
 * name where its output does not already show it. An error not from
 * DuckDB (detail not a knut_duck_error_kind) is only trimmed. */
KNUT_EXTERN void knut_duck_error_reading(knut_error *err);

/* ---- database and connections ----------------------------------------- */

/*
 * Opens (or creates) the database file at path; NULL, "" or ":memory:"
 * opens a private in-memory database. opts (nopts entries, may be NULL)
 * are applied before opening; an unknown name or bad value is KNUT_EINVAL.
 * A file that cannot be opened (locked, not a database) is DuckDB's error
 * (see the table above). The caller closes *out with knut_duck_db_close.
 */
KNUT_EXTERN knut_status knut_duck_db_open(knut_duck_db **out, const char *path,
                                          const knut_duck_option *opts, size_t nopts,
                                          knut_error *err);
/* Closes the database handle (NULL-safe). See the lifetime rules above. */
KNUT_EXTERN void knut_duck_db_close(knut_duck_db *db);

/* Opens a connection to db (which it keeps a reference to); the caller
 * closes *out with knut_duck_conn_close. KNUT_ENOMEM, or DuckDB's error. */
KNUT_EXTERN knut_status knut_duck_conn_open(knut_duck_conn **out, knut_duck_db *db,
                                            knut_error *err);
/* Drops the caller's reference (NULL-safe); the DuckDB connection closes
 * when open streams and statements on it are gone too. */
KNUT_EXTERN void knut_duck_conn_close(knut_duck_conn *conn);
/* Asks the query running on conn to stop (callable from another thread or
 * a signal-driven loop); the interrupted call fails with DuckDB's message. */
KNUT_EXTERN void knut_duck_conn_interrupt(knut_duck_conn *conn);

/*
 * Transactions. A connection remembers whether it has an explicit
 * transaction open: these three keep that state, and so do BEGIN, COMMIT
 * and ROLLBACK (or START TRANSACTION, END, ABORT) run through
 * knut_duck_exec, knut_duck_query or a prepared statement. Other knut_duck_*
 * calls that would need their own transaction (register/append stream)
 * work inside the open one instead, leaving commit or rollback to you.
 */
/* Opens a transaction; EINVAL, with the open one untouched, if one is
 * already open (DuckDB itself would abort the open one). */
KNUT_EXTERN knut_status knut_duck_conn_begin(knut_duck_conn *conn, knut_error *err);
/* Commits the open transaction; EINVAL if none is open. If an earlier
 * error aborted it, it is rolled back and the commit fails (DuckDB would
 * report success and discard the work silently). */
KNUT_EXTERN knut_status knut_duck_conn_commit(knut_duck_conn *conn, knut_error *err);
/* Rolls the open transaction back; does nothing (KNUT_OK) if none is open,
 * so cleanup paths can call it unconditionally. */
KNUT_EXTERN knut_status knut_duck_conn_rollback(knut_duck_conn *conn, knut_error *err);
/* 1 while a transaction is open on conn (NULL-safe: 0). */
KNUT_EXTERN int knut_duck_conn_in_transaction(const knut_duck_conn *conn);

/* ---- running SQL -------------------------------------------------------- */

/* Runs one or more statements, discarding any rows (DDL, INSERT, COPY,
 * SET); sql is borrowed. Errors: DuckDB's, as in the table above. */
KNUT_EXTERN knut_status knut_duck_exec(knut_duck_conn *conn, const char *sql, knut_error *err);

/*
 * Runs sql and hands its rows out as *out, an Arrow C stream of struct
 * arrays (one column per child). If sql holds several statements, all but
 * the last run first and only the last one's rows are returned.
 *
 * Rows are produced lazily: each get_next converts one DuckDB chunk (at
 * most 2048 rows), so memory stays bounded however large the result. The
 * batch size is DuckDB's vector size on purpose: larger batches would mean
 * copying every value a second time to concatenate chunks. Release *out
 * whether or not it was read to the end (see the lifetime rules above).
 * Errors: DuckDB's, here or from get_next.
 */
KNUT_EXTERN knut_status knut_duck_query(knut_duck_conn *conn, const char *sql,
                                        struct ArrowArrayStream *out, knut_error *err);

/* ---- prepared statements ---------------------------------------------- */

/* Prepares one statement ($1, $2, ... or ? placeholders); the caller frees
 * *out with knut_duck_stmt_free. DuckDB's error (from its text prefix:
 * the C API gives no type for a failed prepare), KNUT_ENOMEM. */
KNUT_EXTERN knut_status knut_duck_stmt_prepare(knut_duck_stmt **out, knut_duck_conn *conn,
                                               const char *sql, knut_error *err);
/* Prepares sql and binds binds[0..n) as text parameters $1..$n (a NULL
 * entry binds SQL NULL): the usual way to run SQL whose values come from
 * outside. On failure *out is NULL. */
KNUT_EXTERN knut_status knut_duck_stmt_prepare_text(knut_duck_stmt **out, knut_duck_conn *conn,
                                                    const char *sql, const char *const *binds,
                                                    size_t n, knut_error *err);
/* Frees the statement (NULL-safe). Streams it produced stay readable. */
KNUT_EXTERN void knut_duck_stmt_free(knut_duck_stmt *stmt);
/* Number of parameters. */
KNUT_EXTERN size_t knut_duck_stmt_param_count(const knut_duck_stmt *stmt);
/* The SQL text the statement was prepared from (owned by stmt). */
KNUT_EXTERN const char *knut_duck_stmt_sql(const knut_duck_stmt *stmt);

/*
 * Binding: idx is 1-based, as $1 in the SQL. Values are copied; bindings
 * persist across executions until rebound or cleared. KNUT_EINVAL for an
 * idx out of range or a value DuckDB refuses.
 */
KNUT_EXTERN knut_status knut_duck_stmt_bind_null(knut_duck_stmt *stmt, size_t idx, knut_error *err);
KNUT_EXTERN knut_status knut_duck_stmt_bind_bool(knut_duck_stmt *stmt, size_t idx, int v,
                                                 knut_error *err);
KNUT_EXTERN knut_status knut_duck_stmt_bind_int64(knut_duck_stmt *stmt, size_t idx, int64_t v,
                                                  knut_error *err);
KNUT_EXTERN knut_status knut_duck_stmt_bind_double(knut_duck_stmt *stmt, size_t idx, double v,
                                                   knut_error *err);
/* UTF-8 text of len bytes (need not be NUL-terminated). */
KNUT_EXTERN knut_status knut_duck_stmt_bind_text(knut_duck_stmt *stmt, size_t idx, const char *s,
                                                 size_t len, knut_error *err);
KNUT_EXTERN knut_status knut_duck_stmt_bind_blob(knut_duck_stmt *stmt, size_t idx, const void *p,
                                                 size_t len, knut_error *err);
/* Days since 1970-01-01 (as Arrow date32). */
KNUT_EXTERN knut_status knut_duck_stmt_bind_date(knut_duck_stmt *stmt, size_t idx, int32_t days,
                                                 knut_error *err);
/* Microseconds since 1970-01-01 00:00:00, no time zone (as Arrow "tsu:"). */
KNUT_EXTERN knut_status knut_duck_stmt_bind_timestamp(knut_duck_stmt *stmt, size_t idx,
                                                      int64_t micros, knut_error *err);
/* A DECIMAL(precision, scale) whose unscaled value is the 128-bit two's
 * complement integer hi * 2^64 + (uint64)lo_bits (Arrow decimal128's
 * layout); precision 1..38. */
KNUT_EXTERN knut_status knut_duck_stmt_bind_decimal(knut_duck_stmt *stmt, size_t idx,
                                                    int64_t lo_bits, int64_t hi, int precision,
                                                    int scale, knut_error *err);
/* Microseconds since 1970-01-01 00:00:00 UTC, an instant (TIMESTAMPTZ). */
KNUT_EXTERN knut_status knut_duck_stmt_bind_timestamp_tz(knut_duck_stmt *stmt, size_t idx,
                                                         int64_t micros, knut_error *err);
/* Non-zero when the statement is a query (DuckDB's SELECT type: also
 * VALUES, DESCRIBE, SUMMARIZE, SHOW, which DuckDB runs as one), zero for
 * anything that writes, configures (SET, PRAGMA, CALL) or explains. */
KNUT_EXTERN int knut_duck_stmt_is_select(const knut_duck_stmt *stmt);
/* The tables the one statement in sql reads, as DuckDB's binder finds
 * them (views expanded to their tables, CTEs resolved, subqueries and
 * query_table() included; DuckDB's own catalog views and table functions
 * are not tables): each name as DuckDB writes it, qualified as the query
 * wrote it, quoted where needed, possibly followed by " AS alias"; NUL
 * after each, into out (cleared first), *n of them. KNUT_EINVAL when
 * DuckDB cannot tell (the SQL does not parse or bind, several
 * statements). */
KNUT_EXTERN knut_status knut_duck_table_names(knut_duck_conn *conn, const char *sql,
                                              knut_buf *out, size_t *n, knut_error *err);
/* Unbinds every parameter. */
KNUT_EXTERN knut_status knut_duck_stmt_clear(knut_duck_stmt *stmt, knut_error *err);

/*
 * The statement's result columns (*out, a struct schema; the caller
 * releases it) and its parameters (one child per placeholder, named "1",
 * "2", ...), as Arrow types from DuckDB's own bridge: the types its result
 * stream will have. Nothing runs. A parameter whose type DuckDB cannot
 * infer, or a column whose type depends on one (SELECT $1 + 1), is
 * KNUT_EAGAIN: the schema is known only once the statement runs. Errors:
 * DuckDB's, KNUT_ENOMEM.
 */
KNUT_EXTERN knut_status knut_duck_stmt_schema(knut_duck_stmt *stmt, struct ArrowSchema *out,
                                              knut_error *err);
KNUT_EXTERN knut_status knut_duck_stmt_param_schema(knut_duck_stmt *stmt,
                                                    struct ArrowSchema *out, knut_error *err);
/* Executes with the current bindings; rows as in knut_duck_query. */
KNUT_EXTERN knut_status knut_duck_stmt_query(knut_duck_stmt *stmt, struct ArrowArrayStream *out,
                                             knut_error *err);
/* Executes a statement without result rows; *changes (may be NULL) gets the
 * number of rows inserted, updated or deleted. */
KNUT_EXTERN knut_status knut_duck_stmt_exec(knut_duck_stmt *stmt, uint64_t *changes,
                                            knut_error *err);

/* ---- SQL text: identifiers and literals ------------------------------ */

/*
 * The one quoting of names and constants into SQL text. Values belong in
 * parameters (knut_duck_stmt_bind_*); a literal is only for the few places
 * DuckDB's grammar wants a constant and cannot take a parameter: COPY and
 * SET options, named arguments of table functions (read_csv(columns =
 * {...})), and file lists inside SQL text that is stored or handed on as
 * text (a CREATE VIEW, a query given to the GraphAr writer).
 *
 * Both append to b, which keeps ownership with the caller, and report
 * through b's sticky error: append freely, then knut_buf_check once. The
 * return value is that sticky status (KNUT_OK, or KNUT_ETOOBIG past b's
 * cap, KNUT_ENOMEM, KNUT_EINVAL as below).
 */
/* Appends name (NUL-terminated) as a double-quoted identifier, embedded
 * '"' doubled, so any name, a keyword or "" too, is exactly one
 * identifier. A NULL name sets KNUT_EINVAL. */
KNUT_EXTERN knut_status knut_duck_ident(knut_buf *b, const char *name);
/* Appends s[0..len) as a single-quoted string literal, embedded '\''
 * doubled; other bytes (UTF-8 or not) are copied as they are. DuckDB reads
 * SQL text as a C string, so a NUL byte cannot be in a literal: one in
 * s[0..len) appends nothing and sets KNUT_EINVAL. s may be NULL only with
 * len 0 (the empty literal ''). */
KNUT_EXTERN knut_status knut_duck_literal(knut_buf *b, const char *s, size_t len);

/* ---- Arrow streams as tables ------------------------------------------ */

/*
 * Reads stream to its end into a temporary table `name` on conn
 * (CREATE OR REPLACE TEMP TABLE), visible to this connection only, readable
 * any number of times; drop it with "DROP TABLE name". Batches flow through
 * DuckDB's Arrow scan as they are read, so only the table itself grows
 * (DuckDB spills it to temp_directory past memory_limit).
 *
 * Takes ownership of stream: it is released (and left released) before the
 * call returns, also on failure. The stream must not be a result stream of
 * the same connection (running the load would supersede it).
 */
KNUT_EXTERN knut_status knut_duck_register_stream(knut_duck_conn *conn, const char *name,
                                                  struct ArrowArrayStream *stream, knut_error *err);

/*
 * Appends the stream's rows to the existing table `table` (columns matched
 * by position, cast as by INSERT). *rows (may be NULL) gets the row count.
 * Ownership of stream as in knut_duck_register_stream.
 */
KNUT_EXTERN knut_status knut_duck_append_stream(knut_duck_conn *conn, const char *table,
                                                struct ArrowArrayStream *stream, uint64_t *rows,
                                                knut_error *err);

#ifdef __cplusplus
}
#endif

#endif /* KNUT_DUCK_H */
