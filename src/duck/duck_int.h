/*
 * Internals of the duck part shared by its files: the handle structs, the
 * connection reference count and statement epoch, and the helpers that
 * turn DuckDB's three error channels into one knut_error.
 */
#ifndef KNUT_DUCK_INT_H
#define KNUT_DUCK_INT_H

#include <duckdb.h>
#include <stdatomic.h>

#include "knut/duck.h"

struct knut_duck_db {
    duckdb_database db;
};

/*
 * Shared by the caller, its statements and its result streams; the last
 * one to let go disconnects. `epoch` counts statements run on the
 * connection: a stream remembers the epoch it was created in and refuses
 * to read once another statement has run (DuckDB has closed it by then).
 */
struct knut_duck_conn {
    duckdb_connection conn;
    atomic_int refs;
    atomic_uint_fast64_t epoch;
    /* 1 while an explicit transaction is open. Kept here because DuckDB's
     * C API cannot be asked, and trying BEGIN to find out aborts an open
     * transaction. Connections are single-threaded, so no atomic. */
    int in_txn;
};

struct knut_duck_stmt {
    knut_duck_conn *conn; /* a reference */
    duckdb_prepared_statement prep;
    size_t nparams;
    char *sql; /* the text prepared (knut_duck_stmt_sql) */
};

/*
 * DuckDB calls the Arrow streams knut hands it (knut_duck_register_stream)
 * on its own worker threads and hands their work back to the calling
 * thread through atomics inside libduckdb.so, which is not built with TSan.
 * These tell TSan about that hand-over: a worker releases the adapter after
 * each callback, the caller acquires it once the query has returned. No-ops
 * outside a TSan build.
 */
#if defined(__SANITIZE_THREAD__)
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define knut_duck__tsan_acquire(p) __tsan_acquire(p)
#define knut_duck__tsan_release(p) __tsan_release(p)
#else
#define knut_duck__tsan_acquire(p) ((void)(p))
#define knut_duck__tsan_release(p) ((void)(p))
#endif

/* Takes / drops a reference; the last drop disconnects and frees. */
knut_duck_conn *knut_duck__conn_ref(knut_duck_conn *conn);
void knut_duck__conn_unref(knut_duck_conn *conn);

/* Marks the start of a new statement on conn; returns its epoch. */
static inline uint64_t knut_duck__conn_begin(knut_duck_conn *conn)
{
    return (uint64_t)atomic_fetch_add(&conn->epoch, 1) + 1;
}

/*
 * Updates conn->in_txn after prep ran (ok: whether it succeeded). Only
 * statements of DuckDB's TRANSACTION type count: one that succeeds always
 * flips the state (BEGIN fails inside a transaction, COMMIT and ROLLBACK
 * fail outside one). A failed one inside a transaction is either a nested
 * BEGIN (the transaction stays open, aborted) or a failed COMMIT (DuckDB
 * has ended it); a trivial probe query tells the two apart.
 */
void knut_duck__conn_txn_note(knut_duck_conn *conn, duckdb_prepared_statement prep, int ok);

/* "what: <DuckDB message>" from a result (also a failed one); code is
 * mapped from duckdb_result_error_type. */
knut_status knut_duck__result_error(duckdb_result *res, const char *what, knut_error *err);
/* Same from a duckdb_error_data, which is destroyed. */
knut_status knut_duck__error_data(duckdb_error_data *ed, const char *what, knut_error *err);
/* Same from bare message text (prepare and pending errors carry no type:
 * the code is inferred from DuckDB's "Parser Error:" style prefix). */
knut_status knut_duck__text_error(const char *msg, const char *what, knut_error *err);

/*
 * Wraps an executed prepared statement's streaming result as an Arrow
 * stream. Takes ownership of *prep if own_prep (set to NULL) so the
 * statement lives as long as the stream.
 */
knut_status knut_duck__stream_from_prepared(knut_duck_conn *conn,
                                            duckdb_prepared_statement *prep, int own_prep,
                                            struct ArrowArrayStream *out, knut_error *err);

#endif
