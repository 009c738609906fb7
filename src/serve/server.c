/*
 * The server: the database, the gRPC server with the Flight methods, and
 * the prepared statement table. The database is opened once, read-only
 * when it is a file (again after a fatal error: dbgen.c); each call opens
 * its own connection to it (DuckDB
 * connections are cheap and single-threaded), so calls run in parallel
 * up to the number of call threads.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve_int.h"

#define DEFAULT_THREADS 8
#define FREE_GRACE_MS 5000

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
    pthread_mutex_init(&s->db_lock, NULL);
    s->max_message = o->max_message ? o->max_message : KNUT_SERVE_DEFAULT_MAX_MESSAGE;
    s->max_receive = o->max_receive ? o->max_receive : KNUT_SERVE_DEFAULT_MAX_RECEIVE;
    knut_status st = knut_serve__auth_load(&s->auth, o, err);
    if (st != KNUT_OK) {
        knut_error_prefix(err, "serve: ");
        goto cleanup;
    }
    s->max_prepared = o->max_prepared ? o->max_prepared : KNUT_SERVE_MAX_PREPARED;
    s->prepared_ttl_ns = (o->prepared_ttl_ms ? o->prepared_ttl_ms : 3600 * 1000) * 1000000;
    if ((st = knut_serve__hkey_load(&s->hkey, o->handle_key_file, o->handle_key, err)) !=
        KNUT_OK) {
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
    if ((o->db_path && !(s->db_path = strdup(o->db_path))) ||
        (o->init_sql && !(s->init_sql = strdup(o->init_sql)))) {
        st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
        goto cleanup;
    }
    if ((st = knut_serve__db_open(s, &s->db, err)) != KNUT_OK)
        goto cleanup;
    if ((st = knut_serve__metrics_new(s, err)) != KNUT_OK)
        goto cleanup;
    if (o->metrics_addr && !(s->metrics_addr = strdup(o->metrics_addr))) {
        st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
        goto cleanup;
    }
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
    knut_status st = s->metrics_addr ? knut_serve__metrics_serve(s, s->metrics_addr, err)
                                     : KNUT_OK;
    if (st == KNUT_OK)
        st = knut_net_grpc_server_start(s->srv, err);
    if (st == KNUT_OK)
        KNUT_LOG(KNUT_LOG_INFO, SERVE_LOG, "Flight SQL server on port %d",
                 knut_net_grpc_server_port(s->srv));
    if (st == KNUT_OK && s->hkey.ephemeral)
        KNUT_LOG(KNUT_LOG_INFO, SERVE_LOG, "prepared statement handles are signed with a key of "
                                           "this process only: they end with it (give "
                                           "--handle-key-file to keep them across restarts "
                                           "and replicas)");
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
    knut_serve__metrics_free(s);
    free(s->metrics_addr);
    knut_serve__auth_free(&s->auth);
    knut_serve__hkey_wipe(&s->hkey);
    knut_duck_db_close(s->db);
    free(s->db_path);
    free(s->init_sql);
    pthread_mutex_destroy(&s->db_lock);
    knut_serve__config_free(&s->conf);
    pthread_mutex_destroy(&s->lock);
    free(s);
}
