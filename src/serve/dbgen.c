/*
 * The served database and its recovery. DuckDB invalidates a database on
 * a fatal error (a failed checkpoint or WAL write, an internal assertion):
 * every later statement on it fails with "database has been invalidated"
 * until the process opens it again. A server that runs for weeks must not
 * need a restart for that, so a call that fails so makes the server check
 * the current database and, when it is the invalidated one, open it anew
 * (generation + 1).
 *
 * Calls take their connection from the current generation under a lock
 * (knut_serve__conn_open). A DuckDB connection keeps its database instance
 * alive, so closing the old generation's handle at the swap is safe: calls
 * in flight on it finish, or fail with DuckDB's error, and their
 * connections free it when they close. New calls get the new one.
 */
#include <stdlib.h>
#include <string.h>

#include "serve_int.h"

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

knut_status knut_serve__db_setup(knut_serve *s, knut_duck_conn *conn, knut_error *err)
{
    /* what every open of the database needs before clients see it: run
     * before the lock-down, so it may still read files and change settings */
    knut_status st = default_catalog(s, conn, err);
    /* the catalogs, views and Cypher tables of serve.yml (views.c) */
    if (st == KNUT_OK && (st = knut_serve__views_setup(s, conn, err)) != KNUT_OK)
        knut_error_prefix(err, "serve: ");
    return st;
}

knut_status knut_serve__db_open(knut_serve *s, knut_duck_db **out, knut_error *err)
{
    *out = NULL;
    knut_duck_db *db = NULL;
    knut_duck_conn *conn = NULL;
    knut_duck_option ro[] = {{"access_mode", "READ_ONLY"}};
    knut_status st = knut_duck_db_open(&db, s->db_path, s->db_path ? ro : NULL,
                                       s->db_path ? 1 : 0, err);
    if (st != KNUT_OK) {
        knut_error_prefix(err, "serve: opening %s: ", s->db_path ? s->db_path : "memory");
        goto cleanup;
    }
    st = knut_duck_conn_open(&conn, db, err);
    if (st == KNUT_OK && s->init_sql && (st = knut_duck_exec(conn, s->init_sql, err)) != KNUT_OK)
        knut_error_prefix(err, "serve: init SQL: ");
    if (st == KNUT_OK)
        st = knut_serve__db_setup(s, conn, err);
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

cleanup:
    knut_duck_conn_close(conn);
    if (st != KNUT_OK)
        knut_duck_db_close(db);
    else
        *out = db;
    return st;
}

knut_status knut_serve__conn_open(knut_serve *s, knut_duck_conn **out, knut_error *err)
{
    *out = NULL;
    knut_status st = KNUT_OK;
    pthread_mutex_lock(&s->db_lock);
    /* a reopen that failed left none: try again for this call */
    if (!s->db && (st = knut_serve__db_open(s, &s->db, err)) == KNUT_OK)
        s->db_gen++;
    if (st == KNUT_OK)
        st = knut_duck_conn_open(out, s->db, err);
    pthread_mutex_unlock(&s->db_lock);
    return st;
}

uint64_t knut_serve__db_generation(knut_serve *s)
{
    pthread_mutex_lock(&s->db_lock);
    uint64_t g = s->db_gen;
    pthread_mutex_unlock(&s->db_lock);
    return g;
}

static int looks_fatal(const knut_error *err)
{
    return err->detail == KNUT_DUCK_ERR_FATAL || err->detail == KNUT_DUCK_ERR_INTERNAL ||
           strstr(err->message, "database has been invalidated") ||
           strstr(err->message, "FATAL Error: ");
}

/* 1 when a statement on db fails as an invalidated database does. */
static int invalidated(knut_duck_db *db)
{
    knut_duck_conn *conn = NULL;
    knut_error e = KNUT_ERROR_INIT;
    knut_status st = knut_duck_conn_open(&conn, db, &e);
    if (st == KNUT_OK)
        st = knut_duck_exec(conn, "SELECT 1", &e);
    knut_duck_conn_close(conn);
    return st != KNUT_OK && looks_fatal(&e);
}

knut_status knut_serve__db_recover(knut_serve *s, knut_status st, knut_error *err)
{
    if (st == KNUT_OK || !err || !looks_fatal(err))
        return st;
    pthread_mutex_lock(&s->db_lock);
    /* many calls in flight see the same failure: only the first one that
     * finds the current database invalidated reopens it (a call of an
     * older generation finds the new one healthy) */
    char why[KNUT_ERROR_MSG_MAX];
    snprintf(why, sizeof why, "%s", err->message);
    if (s->db && !invalidated(s->db)) {
        pthread_mutex_unlock(&s->db_lock);
        return knut_error_set(err, KNUT_EAGAIN, "the database was invalidated by a fatal error "
                                                "and has been reopened: retry (%s)", why);
    }
    /* the old one first: a file it holds (an attached database) is free
     * for the new one once the last call on it ends */
    knut_duck_db_close(s->db);
    s->db = NULL;
    knut_error oerr = KNUT_ERROR_INIT;
    knut_status ost = knut_serve__db_open(s, &s->db, &oerr);
    if (ost == KNUT_OK)
        s->db_gen++;
    uint64_t gen = s->db_gen;
    pthread_mutex_unlock(&s->db_lock);
    knut_log_emit(ost == KNUT_OK ? KNUT_LOG_WARN : KNUT_LOG_ERROR, SERVE_LOG,
                  (knut_log_field[]){KNUT_LF_INT("generation", gen),
                                     KNUT_LF_STR("reopen", knut_strerror(ost))},
                  2, "the database was invalidated (%s): %s", why,
                  ost == KNUT_OK ? "reopened" : oerr.message);
    /* the call itself is not run again (part of a stream may be sent);
     * UNAVAILABLE tells the client that trying again is right */
    return knut_error_set(err, KNUT_EAGAIN, "the database was invalidated by a fatal error and "
                                            "%s: retry (%s)",
                          ost == KNUT_OK ? "has been reopened" : "could not be reopened yet",
                          why);
}
