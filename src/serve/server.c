/*
 * The server: the database, the gRPC server with the Flight methods, and
 * the prepared statement table. The database is opened once, read-only
 * when it is a file; each call opens its own connection to it (DuckDB
 * connections are cheap and single-threaded), so calls run in parallel
 * up to the number of call threads.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve_int.h"

#define DEFAULT_THREADS 8
#define FREE_GRACE_MS 5000

/* The catalog unqualified names are in, for the allow-list. */
static knut_status default_catalog(knut_serve *s, knut_duck_conn *conn, knut_error *err)
{
    struct ArrowArrayStream rows = {0};
    knut_buf cells = KNUT_BUF_INIT;
    size_t n = 0;
    knut_status st = knut_duck_query(conn, "SELECT current_database()", &rows, err);
    if (st == KNUT_OK)
        st = knut_serve__stream_strings(&rows, &cells, &n, err);
    if (st == KNUT_OK && n == 1)
        snprintf(s->catalog, sizeof s->catalog, "%s", cells.data);
    knut_buf_reset(&cells);
    knut_arrow_stream_release(&rows);
    return st;
}

knut_status knut_serve_new(knut_serve **out, const knut_serve_options *o, knut_error *err)
{
    KNUT_ASSERT_ARG(err, out);
    *out = NULL;
    KNUT_CHECK_VERSION(o, KNUT_SERVE_OPTIONS_VERSION, err);
    knut_serve_options def = KNUT_SERVE_OPTIONS_INIT;
    if (!o)
        o = &def;
    if (o->init_sql && o->db_path)
        return knut_error_set(err, KNUT_EINVAL, "serve: init_sql is for an in-memory database "
                                                "only (a file is served read-only)");
    knut_serve *s = calloc(1, sizeof *s);
    if (!s)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    pthread_mutex_init(&s->lock, NULL);
    s->max_message = o->max_message ? o->max_message : KNUT_SERVE_DEFAULT_MAX_MESSAGE;
    s->max_receive = o->max_receive ? o->max_receive : KNUT_SERVE_DEFAULT_MAX_RECEIVE;
    knut_duck_conn *conn = NULL;
    knut_status st = knut_serve__auth_load(&s->auth, o, err);
    if (st != KNUT_OK) {
        knut_error_prefix(err, "serve: ");
        goto cleanup;
    }
    if (s->max_message < 4096 || s->max_message > ((size_t)1 << 30)) {
        st = knut_error_set(err, KNUT_EINVAL, "serve: message cap of %zu bytes (4 KiB to 1 GiB)",
                            s->max_message);
        goto cleanup;
    }
    if (o->config_file && (st = knut_serve__config_load(&s->conf, o->config_file, err)) !=
                              KNUT_OK) {
        if (st == KNUT_EPARSE) /* a file that does not parse: a usage error, like a bad key */
            st = err->code = KNUT_EINVAL;
        knut_error_prefix(err, "serve: ");
        goto cleanup;
    }
    knut_duck_option ro[] = {{"access_mode", "READ_ONLY"}};
    st = knut_duck_db_open(&s->db, o->db_path, o->db_path ? ro : NULL, o->db_path ? 1 : 0, err);
    if (st != KNUT_OK) {
        knut_error_prefix(err, "serve: opening %s: ", o->db_path ? o->db_path : "memory");
        goto cleanup;
    }
    st = knut_duck_conn_open(&conn, s->db, err);
    if (st == KNUT_OK && o->init_sql && (st = knut_duck_exec(conn, o->init_sql, err)) != KNUT_OK)
        knut_error_prefix(err, "serve: init SQL: ");
    if (st == KNUT_OK)
        st = default_catalog(s, conn, err);
    if (st == KNUT_OK && (st = knut_serve__views_setup(s, conn, err)) != KNUT_OK)
        knut_error_prefix(err, "serve: ");
    /* Clients send any SQL: after the set-up, none of it may reach the
     * host (files, ATTACH, extensions, which would bring the network) or
     * change the settings every client shares. Not undoable by SQL. */
    if (st == KNUT_OK &&
        (st = knut_duck_exec(conn, "SET autoinstall_known_extensions = false; "
                                   "SET autoload_known_extensions = false; "
                                   "SET enable_external_access = false; "
                                   "SET lock_configuration = true",
                             err)) != KNUT_OK)
        knut_error_prefix(err, "serve: locking the database down: ");
    if (st != KNUT_OK)
        goto cleanup;
    knut_net_grpc_server_options so = KNUT_NET_GRPC_SERVER_OPTIONS_INIT;
    so.addr = o->addr;
    so.tls = o->tls;
    so.max_receive = s->max_receive;
    /* a little over the FlightData cap: the cap is ours to keep, not gRPC's */
    so.max_send = s->max_message + 4096;
    so.threads = o->threads ? o->threads : DEFAULT_THREADS;
    if ((st = knut_net_grpc_server_new(&s->srv, &so, err)) != KNUT_OK)
        goto cleanup;
    st = knut_serve__rpc_register(s, err);

cleanup:
    knut_duck_conn_close(conn);
    if (st != KNUT_OK) {
        knut_serve_free(s);
        return st;
    }
    *out = s;
    return KNUT_OK;
}

knut_status knut_serve_start(knut_serve *s, knut_error *err)
{
    KNUT_ASSERT_ARG(err, s);
    knut_status st = knut_net_grpc_server_start(s->srv, err);
    if (st == KNUT_OK)
        KNUT_LOG(KNUT_LOG_INFO, SERVE_LOG, "Flight SQL server on port %d",
                 knut_net_grpc_server_port(s->srv));
    return st;
}

int knut_serve_port(const knut_serve *s)
{
    return s ? knut_net_grpc_server_port(s->srv) : 0;
}

void knut_serve_shutdown(knut_serve *s, int64_t grace_ms)
{
    if (s)
        knut_net_grpc_server_shutdown(s->srv, grace_ms);
}

void knut_serve_free(knut_serve *s)
{
    if (!s)
        return;
    knut_net_grpc_server_free(s->srv); /* waits for the calls: nothing uses the rest after */
    knut_serve__prepared_free_all(s);
    knut_serve__auth_free(&s->auth);
    knut_duck_db_close(s->db);
    knut_serve__config_free(&s->conf);
    pthread_mutex_destroy(&s->lock);
    free(s);
}
