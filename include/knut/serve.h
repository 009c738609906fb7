/*
 * knut serve: an Arrow Flight SQL server over the embedded SQL engine.
 * BI tools and Arrow clients (the ADBC Flight SQL driver, pyarrow.flight)
 * connect with gRPC, send SQL and get Arrow record batches back, streamed
 * from DuckDB in bounded batches.
 *
 * The database is one DuckDB file opened read-only (or a private
 * in-memory database, for tests and demos); each call runs on its own
 * connection to it. docs/serve.md says what is served today and what is
 * not yet.
 */
#ifndef KNUT_SERVE_H
#define KNUT_SERVE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "knut/core.h"
#include "knut/net.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct knut_serve knut_serve;

/* What one Flight message may carry, at most: ADBC's Go driver refuses
 * messages over 16 MiB, so results are cut well below it. */
#define KNUT_SERVE_DEFAULT_MAX_MESSAGE ((size_t)8 << 20)
/* Requests (DoPut parameter batches, commands) up to this by default. */
#define KNUT_SERVE_DEFAULT_MAX_RECEIVE ((size_t)16 << 20)
/* Prepared statements open at once, over all clients. */
#define KNUT_SERVE_MAX_PREPARED 1024

#define KNUT_SERVE_OPTIONS_VERSION 3 /* 2: the auth fields; 3: handles, metrics, config_file */
typedef struct knut_serve_options {
    int version;            /* KNUT_SERVE_OPTIONS_VERSION */
    const char *db_path;    /* DuckDB file, opened read-only; NULL: in-memory */
    const char *addr;       /* IP:PORT; NULL: 127.0.0.1:0 (loopback, a free port) */
    const knut_net_grpc_tls *tls; /* NULL: plaintext */
    size_t max_receive;     /* per request message; 0: KNUT_SERVE_DEFAULT_MAX_RECEIVE */
    size_t max_message;     /* per FlightData sent; 0: KNUT_SERVE_DEFAULT_MAX_MESSAGE */
    int threads;            /* calls served at once; 0: 8 */
    const char *init_sql;   /* in-memory database only: SQL run once at start */
    /* Authentication is on when either is set (docs/serve.md has the
     * model): the auth file (tokens, users, allow-list; mode 0600), and
     * bearer tokens "[NAME:]TOKEN ..." (what KNUT_SERVE_TOKEN holds). */
    const char *auth_file;
    const char *auth_tokens;
    int64_t session_ttl_ms; /* session tokens of a Basic Handshake; 0: 1 hour */
    /* Prepared statement handles are signed with this key (docs/serve.md):
     * a file (mode 0600) or the key itself (what KNUT_SERVE_HANDLE_KEY
     * holds); neither: a random key, so handles end with the process. */
    const char *handle_key_file;
    const char *handle_key;
    size_t max_prepared;     /* statements with parameters kept here; 0: KNUT_SERVE_MAX_PREPARED */
    int64_t prepared_ttl_ms; /* those parameters idle this long are dropped; 0: 1 hour */
    const char *metrics_addr; /* Prometheus /metrics on IP:PORT; NULL: none */
    /* serve.yml (docs/serve.md): views over Parquet/CSV files and GraphAr
     * graphs, a FalkorDB connection and named Cypher queries served as
     * tables; NULL: none. */
    const char *config_file;
} knut_serve_options;
#define KNUT_SERVE_OPTIONS_INIT \
    {KNUT_SERVE_OPTIONS_VERSION, NULL, NULL, NULL, 0, 0, 0, NULL, NULL, NULL, 0, NULL, NULL, 0, 0, NULL, NULL}

/* Opens the database and binds the server (the port is known from here
 * on); nothing is served before knut_serve_start. o is copied. Errors:
 * KNUT_EINVAL (options; init_sql with a file), DuckDB's own (a file that
 * is missing, locked by a writer, not a database), KNUT_EIO (cannot bind),
 * KNUT_ENOMEM. The caller frees *out with knut_serve_free. */
KNUT_EXTERN knut_status knut_serve_new(knut_serve **out, const knut_serve_options *o,
                                       knut_error *err);
/* Starts serving on the server's call threads. */
KNUT_EXTERN knut_status knut_serve_start(knut_serve *s, knut_error *err);
/* The bound port. */
KNUT_EXTERN int knut_serve_port(const knut_serve *s);
/* Graceful stop: no new calls, streams in progress get grace_ms to end
 * and are cancelled after it; returns once every call is over. */
KNUT_EXTERN void knut_serve_shutdown(knut_serve *s, int64_t grace_ms);
/* Shuts down (5 s grace) if needed and frees; NULL-safe. */
KNUT_EXTERN void knut_serve_free(knut_serve *s);

/* ---- the self-test (src/serve/selftest*.c) ---- */

/*
 * Runs the Flight SQL conformance checklist (docs/serve.md "Self-test")
 * against the server at url ("grpc://HOST:PORT", "grpc+tcp://..." or
 * "grpc+tls://..."; tls, may be NULL, gives the roots and client
 * certificate for TLS) and prints one row per check to out: name, pass or
 * FAIL, what was sent and what came back. token (may be NULL) is sent as
 * "authorization: Bearer TOKEN" on every call. *failed gets the number of
 * failed checks. Errors: KNUT_EINVAL (a URL of another shape), KNUT_EIO
 * (nothing answers at url: no table is printed), KNUT_ENOMEM; a server
 * that answers wrongly only fails checks.
 */
KNUT_EXTERN knut_status knut_serve_self_test(const char *url, const knut_net_grpc_tls *tls,
                                             const char *token, FILE *out, int *failed,
                                             knut_error *err);

#ifdef __cplusplus
}
#endif

#endif /* KNUT_SERVE_H */
