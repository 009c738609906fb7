/*
 * `knut serve`: an Arrow Flight SQL server over a DuckDB database file
 * (the embedded graph store knut sync writes, or any DuckDB file), opened
 * read-only. Serves until SIGINT/SIGTERM, then stops accepting, gives
 * streams in progress --grace seconds, and exits 0.
 */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "knut/knut.h"

typedef struct serve_args {
    const char *db;
    const char *addr;
    const char *tls_cert, *tls_key, *tls_ca;
    int64_t max_receive_mib;
    int64_t max_message_mib;
    int64_t threads;
    double grace;
    double session_ttl;
    const char *auth_file;
    int memory;
    int self_test;
    const char *self_test_url;
    const char *handle_key_file;
    int64_t max_prepared;
    double prepared_ttl;
    const char *metrics_addr;
    const char *config;
} serve_args;

static const knut_cli_opt serve_opts[] = {
    KNUT_CLI_OPT_STR("db", 0, serve_args, db, "FILE",
                     "DuckDB database file to serve, opened read-only (e.g. the store of "
                     "knut sync)"),
    KNUT_CLI_OPT_FLAG("memory", 0, serve_args, memory,
                      "serve an empty in-memory database instead (demos, client checks)"),
    KNUT_CLI_OPT_STR("config", 0, serve_args, config, "FILE",
                     "serve.yml: views over Parquet/CSV files, GraphAr graphs (each vertex "
                     "and edge type a table), a FalkorDB connection and named Cypher "
                     "queries served as tables (docs/serve.md)"),
    KNUT_CLI_OPT_STR("addr", 0, serve_args, addr, "IP:PORT",
                     "address to listen on (default 127.0.0.1:32010; port 0: any free port)"),
    KNUT_CLI_OPT_STR("tls-cert", 0, serve_args, tls_cert, "PEM",
                     "server certificate chain: serve grpc+tls:// (with --tls-key)"),
    KNUT_CLI_OPT_STR("tls-key", 0, serve_args, tls_key, "PEM", "the certificate's private key"),
    KNUT_CLI_OPT_STR("tls-ca", 0, serve_args, tls_ca, "PEM",
                     "require client certificates signed by this CA (mutual TLS)"),
    KNUT_CLI_OPT_STR("auth-file", 0, serve_args, auth_file, "FILE",
                     "require credentials: bearer tokens, users for Basic on Handshake, and "
                     "the allow-list, one per line (mode 0600; see below)"),
    KNUT_CLI_OPT_SECS("session-ttl", serve_args, session_ttl, 30 * 86400,
                      "how long a session token from a Basic Handshake lasts (default 3600)"),
    KNUT_CLI_OPT_INT("max-receive", 0, serve_args, max_receive_mib, "MIB", 1, 1024,
                     "largest request message in MiB (default 16)"),
    KNUT_CLI_OPT_INT("max-message", 0, serve_args, max_message_mib, "MIB", 1, 1024,
                     "largest result message in MiB (default 8; ADBC refuses over 16)"),
    KNUT_CLI_OPT_INT("threads", 0, serve_args, threads, "N", 1, 64,
                     "calls served at once (default 8)"),
    KNUT_CLI_OPT_SECS("grace", serve_args, grace, 3600,
                      "on SIGINT/SIGTERM, seconds streams get to finish (default 5)"),
    KNUT_CLI_OPT_FLAG("self-test", 0, serve_args, self_test,
                      "run the Flight SQL conformance checklist and print a pass/fail table "
                      "(exit 0: all pass): against URL, or against the server these options "
                      "start, on a free loopback port; $KNUT_SELF_TEST_TOKEN is sent as a "
                      "bearer token"),
    KNUT_CLI_OPT_STR("handle-key-file", 0, serve_args, handle_key_file, "FILE",
                     "sign prepared statement handles with this key (mode 0600; else "
                     "$KNUT_SERVE_HANDLE_KEY, else a random key: handles end with the process)"),
    KNUT_CLI_OPT_INT("max-prepared", 0, serve_args, max_prepared, "N", 1, 1000000,
                     "prepared statements whose parameters are kept here (default 1024)"),
    KNUT_CLI_OPT_SECS("prepared-ttl", serve_args, prepared_ttl, 30 * 86400,
                      "kept parameters idle this long are dropped (default 3600)"),
    KNUT_CLI_OPT_STR("metrics-addr", 0, serve_args, metrics_addr, "[IP:]PORT",
                     "serve Prometheus metrics on http://IP:PORT/metrics (a bare PORT: "
                     "127.0.0.1; port 0: any free port, logged)"),
    KNUT_CLI_OPT_END,
};

static const knut_cli_arg serve_pos[] = {KNUT_CLI_ARG_OPT("URL", serve_args, self_test_url),
                                         KNUT_CLI_ARG_END};

const knut_cli_spec knut_cmd_serve_spec = {
    .name = "serve",
    .synopsis = "usage: knut serve (--db FILE | --memory) [--config FILE] [--addr IP:PORT]\n"
                "                  [--tls-cert PEM --tls-key PEM [--tls-ca PEM]]\n"
                "                  [--max-receive MIB] [--max-message MIB] [--threads N]\n"
                "                  [--grace SEC] [--auth-file FILE] [--session-ttl SEC]\n"
                "                  [--handle-key-file FILE] [--max-prepared N] [--prepared-ttl SEC]\n"
                "                  [--metrics-addr [IP:]PORT]\n"
                "       knut serve (--db FILE | --memory) [OPTIONS] --self-test\n"
                "       knut serve --self-test URL      (grpc://HOST:PORT, grpc+tls://...)\n",
    .about = "Serves a DuckDB database over Arrow Flight SQL (gRPC): BI tools and\n"
             "Arrow clients (the ADBC Flight SQL driver, pyarrow.flight) send SQL and\n"
             "get Arrow record batches back. The file is opened read-only; while it\n"
             "is served no other process can write it (DuckDB's file lock; see\n"
             "docs/serve.md). Prints 'listening on IP:PORT' when ready.\n",
    .opts = serve_opts,
    .args = serve_pos,
    .epilog =
        "Examples:\n"
        "  knut serve --db graph.duckdb\n"
        "  knut serve --db graph.duckdb --addr 0.0.0.0:32010 --tls-cert s.pem --tls-key s.key\n"
        "  knut serve --db graph.duckdb --auth-file serve.auth   # chmod 600 serve.auth\n"
        "  knut serve --db graph.duckdb --config serve.yml       # views, Cypher tables\n"
        "  knut serve --memory --self-test\n"
        "  knut serve --self-test grpc://127.0.0.1:32010\n"
        "  python -c \"import adbc_driver_flightsql.dbapi as f; c = f.connect('grpc://127.0.0.1:32010');\n"
        "    cur = c.cursor(); cur.execute('SELECT 42'); print(cur.fetch_arrow_table())\"\n"
        "\n"
        "Authentication (off unless --auth-file or $KNUT_SERVE_TOKEN is given; then\n"
        "every call needs credentials, else UNAUTHENTICATED):\n"
        "  token NAME SECRET      'authorization: Bearer SECRET' is identity NAME\n"
        "  user NAME PASSWORD     Basic NAME:PASSWORD on Handshake answers a session\n"
        "                         token; PASSWORD plain or pbkdf2-sha256$ITER$SALT$HEX\n"
        "  allow IDENTITY PAT...  IDENTITY ('*': anyone) reads tables TABLE, SCHEMA.TABLE\n"
        "                         or CATALOG.SCHEMA.TABLE ('*' globs); no allow line:\n"
        "                         everyone reads everything; else PERMISSION_DENIED\n"
        "  $KNUT_SERVE_TOKEN      more bearer tokens, '[NAME:]TOKEN ...' (NAME: token)\n"
        "  with --tls-ca          a call without a token is the identity of its client\n"
        "                         certificate's subject (CN=...,O=...)\n"
        "Secrets never go on the command line (every local user sees it).\n"
        "\n"
        "Prepared statement handles hold their SQL and bound parameters, signed\n"
        "(HMAC-SHA256) with the handle key: every server with the same key runs\n"
        "them, after a restart too. Key: --handle-key-file (e.g. `openssl rand\n"
        "-hex 32 > k; chmod 600 k`) or $KNUT_SERVE_HANDLE_KEY (32 to 256 bytes).\n"
        "\n"
        "Each call logs one JSON line at info level (identity, rpc, command, rows,\n"
        "bytes, status, duration_ms; never SQL text or a secret): KNUT_LOG=warn\n"
        "turns them off.\n"
        "\n"
        "Exit status: 0 stopped by a signal, 1 the server failed, 2 usage error;\n"
        "--self-test: 0 every check passed, 1 a check failed or nothing answered.\n",
};

int knut_cmd_serve(int argc, char **argv)
{
    serve_args a = {0};
    a.grace = 5;
    int rc = knut_cli_args_parse(&knut_cmd_serve_spec, argc, argv, &a);
    if (rc != KNUT_CLI_RUN)
        return rc;
    if (a.self_test_url && !a.self_test)
        return knut_cli_args_error(&knut_cmd_serve_spec, "%s", "a URL is for --self-test");
    if (a.self_test_url) {
        if (a.db || a.memory || a.tls_cert || a.tls_ca || a.auth_file)
            return knut_cli_args_error(&knut_cmd_serve_spec, "%s",
                                       "--self-test URL tests that server: it takes no server "
                                       "options");
        return knut_cli_serve_self_test(a.self_test_url, NULL);
    }
    if (a.self_test && a.tls_ca)
        return knut_cli_args_error(&knut_cmd_serve_spec, "%s",
                                   "--self-test does not present a client certificate: test a "
                                   "mutual-TLS server without --tls-ca");
    if (!a.db && !a.memory)
        return knut_cli_args_missing(&knut_cmd_serve_spec, "--db FILE or --memory");
    if (a.db && a.memory)
        return knut_cli_args_error(&knut_cmd_serve_spec, "%s",
                                   "--db and --memory exclude each other");
    if (!a.tls_cert != !a.tls_key)
        return knut_cli_args_error(&knut_cmd_serve_spec, "%s",
                                   "--tls-cert and --tls-key go together");
    if (a.tls_ca && !a.tls_cert)
        return knut_cli_args_error(&knut_cmd_serve_spec, "%s",
                                   "--tls-ca (mutual TLS) needs --tls-cert and --tls-key");
    if (!getenv("KNUT_LOG")) {
        const char *fmt = getenv("KNUT_LOG_FORMAT");
        int json = fmt ? strcmp(fmt, "json") == 0 : !isatty(STDERR_FILENO);
        knut_log_set(KNUT_LOG_INFO, json ? knut_log_sink_json : knut_log_sink_human, stderr);
    }
    char *tokens = NULL;
    if (knut_cli_secret_read("serve", "KNUT_SERVE_TOKEN", NULL, "KNUT_SERVE_TOKEN", &tokens) != 0)
        return KNUT_EXIT_FAIL;
    knut_error err = KNUT_ERROR_INIT;
    knut_serve *s = NULL;
    knut_net_grpc_tls tls = {a.tls_cert, a.tls_key, a.tls_ca, NULL};
    knut_serve_options so = KNUT_SERVE_OPTIONS_INIT;
    so.db_path = a.db;
    so.addr = a.addr ? a.addr : "127.0.0.1:32010";
    if (a.self_test) /* never the port a real server may hold */
        so.addr = "127.0.0.1:0";
    so.tls = a.tls_cert ? &tls : NULL;
    so.max_receive = (size_t)a.max_receive_mib << 20;
    so.max_message = (size_t)a.max_message_mib << 20;
    so.threads = (int)a.threads;
    so.auth_file = a.auth_file;
    so.auth_tokens = tokens;
    so.session_ttl_ms = (int64_t)(a.session_ttl * 1000);
    so.handle_key_file = a.handle_key_file;
    so.handle_key = a.handle_key_file ? NULL : getenv("KNUT_SERVE_HANDLE_KEY");
    so.max_prepared = (size_t)a.max_prepared;
    so.prepared_ttl_ms = (int64_t)(a.prepared_ttl * 1000);
    so.metrics_addr = a.metrics_addr;
    so.config_file = a.config;
    rc = KNUT_EXIT_FAIL;
    knut_status st = knut_signal_install(&err);
    if (st == KNUT_OK)
        st = knut_serve_new(&s, &so, &err);
    if (st == KNUT_OK)
        st = knut_serve_start(s, &err);
    if (st != KNUT_OK) {
        fprintf(stderr, "knut serve: %s\n", err.message);
        rc = st == KNUT_EINVAL ? KNUT_EXIT_USAGE : KNUT_EXIT_FAIL;
        goto cleanup;
    }
    if (a.self_test) {
        char url[96];
        snprintf(url, sizeof url, "grpc%s://127.0.0.1:%d", so.tls ? "+tls" : "",
                 knut_serve_port(s));
        /* the client trusts the served certificate (self-signed, or its chain) */
        knut_net_grpc_tls trust = {NULL, NULL, a.tls_cert, NULL};
        rc = knut_cli_serve_self_test(url, so.tls ? &trust : NULL);
        knut_serve_shutdown(s, 1000);
        goto cleanup;
    }
    /* the address with the real port, for scripts that asked for port 0 */
    char host[128];
    snprintf(host, sizeof host, "%s", so.addr);
    char *colon = strrchr(host, ':');
    if (colon)
        *colon = 0;
    printf("listening on %s:%d\n", host, knut_serve_port(s));
    fflush(stdout);
    while (!knut_signal_stop_requested())
        knut_clock_sleep_ns(100 * 1000000);
    KNUT_LOG(KNUT_LOG_INFO, "serve", "stopping (signal %d), %.1f s grace", knut_signal_last(),
             a.grace);
    knut_serve_shutdown(s, (int64_t)(a.grace * 1000));
    rc = KNUT_EXIT_OK;
cleanup:
    knut_serve_free(s);
    knut_net_secret_free(tokens);
    return rc;
}
