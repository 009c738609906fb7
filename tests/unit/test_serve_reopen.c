/*
 * Recovery of the served database from a fatal DuckDB error, with a real
 * one: DuckDB's own debug_checkpoint_abort setting makes a checkpoint of an
 * attached file database fail, which invalidates the whole database (every
 * later statement: "database has been invalidated"). The server, an
 * in-memory database whose init SQL attaches that file, must notice it on
 * the failing call, reopen (generation + 1, init SQL run again), answer the
 * call UNAVAILABLE, serve the next calls from the new database, and let a
 * connection of the old generation fail cleanly and be freed (ASan).
 * Through the real gRPC path (DoGet) and the internal calls.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "serve/serve_int.h"

typedef struct fixture {
    char dir[64], file[128], sql[512];
    knut_serve *s;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/knut-reopen-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->file, sizeof f->file, "%s/w.duckdb", f->dir);
    /* repeatable: it runs again on every reopen */
    snprintf(f->sql, sizeof f->sql,
             "ATTACH '%s' AS w; SET debug_checkpoint_abort = 'before_header'; "
             "CREATE OR REPLACE TABLE w.t AS SELECT range AS i FROM range(1000)",
             f->file);
    knut_serve_options o = KNUT_SERVE_OPTIONS_INIT;
    o.init_sql = f->sql;
    knut_error err = KNUT_ERROR_INIT;
    if (knut_serve_new(&f->s, &o, &err) != KNUT_OK || knut_serve_start(f->s, &err) != KNUT_OK)
        fail_msg("%s", err.message);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    knut_serve_free(f->s);
    char p[200];
    snprintf(p, sizeof p, "%s.wal", f->file);
    unlink(p);
    unlink(f->file);
    rmdir(f->dir);
    free(f);
    return 0;
}

/* Runs sql on a new connection of the current generation. */
static knut_status run(knut_serve *s, const char *sql, knut_error *err)
{
    knut_duck_conn *c = NULL;
    knut_status st = knut_serve__conn_open(s, &c, err);
    if (st == KNUT_OK)
        st = knut_duck_exec(c, sql, err);
    knut_duck_conn_close(c);
    return st;
}

static void test_reopen_after_a_fatal_error(void **state)
{
    fixture *f = *state;
    knut_serve *s = f->s;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_serve__db_generation(s), 0);
    /* a call in flight across the reopen */
    knut_duck_conn *old = NULL;
    assert_int_equal(knut_serve__conn_open(s, &old, &err), KNUT_OK);
    assert_int_equal(knut_duck_exec(old, "SELECT 1", &err), KNUT_OK);

    knut_status st = run(s, "CHECKPOINT w", &err);
    assert_int_equal(st, KNUT_ERROR);
    assert_int_equal(err.detail, KNUT_DUCK_ERR_FATAL);
    /* invalidated: so is every statement until it is reopened */
    knut_error e2 = KNUT_ERROR_INIT;
    assert_int_equal(run(s, "SELECT 1", &e2), KNUT_ERROR);
    assert_non_null(strstr(e2.message, "database has been invalidated"));

    st = knut_serve__db_recover(s, st, &err);
    assert_int_equal(st, KNUT_EAGAIN);
    assert_non_null(strstr(err.message, "has been reopened: retry"));
    assert_int_equal(knut_serve__db_generation(s), 1);
    /* the new generation serves, the init SQL ran again */
    knut_error e3 = KNUT_ERROR_INIT;
    assert_int_equal(run(s, "SELECT count(*) FROM w.t", &e3), KNUT_OK);

    /* the old connection fails cleanly; its failure does not reopen again */
    knut_error e4 = KNUT_ERROR_INIT;
    st = knut_duck_exec(old, "SELECT 1", &e4);
    assert_int_equal(st, KNUT_ERROR);
    assert_int_equal(knut_serve__db_recover(s, st, &e4), KNUT_EAGAIN);
    assert_int_equal(knut_serve__db_generation(s), 1);
    knut_duck_conn_close(old); /* the old instance goes with it */

    /* an ordinary error is left alone */
    knut_error e5 = KNUT_ERROR_INIT;
    st = run(s, "SELECT * FROM no_such_table", &e5);
    assert_int_equal(knut_serve__db_recover(s, st, &e5), KNUT_ENOTFOUND);
    assert_int_equal(knut_serve__db_generation(s), 1);
    assert_int_equal(knut_serve__db_recover(s, KNUT_OK, &e5), KNUT_OK);
}

/* DoGet of a TicketStatementQuery for sql on the server: the gRPC code. */
static int doget(knut_serve *s, const char *sql, knut_net_grpc_status *gs)
{
    knut_error err = KNUT_ERROR_INIT;
    knut_buf handle = KNUT_BUF_INIT, any = KNUT_BUF_INIT, ticket = KNUT_BUF_INIT, msg;
    knut_buf_putc(&handle, 'Q');
    knut_buf_puts(&handle, sql);
    KnutServe__Flightsql__TicketStatementQuery t =
        KNUT_SERVE__FLIGHTSQL__TICKET_STATEMENT_QUERY__INIT;
    t.statement_handle.data = (uint8_t *)handle.data;
    t.statement_handle.len = handle.len;
    assert_int_equal(knut_serve__any_pack("TicketStatementQuery", &t.base, &any, &err), KNUT_OK);
    KnutServe__Ticket tk = KNUT_SERVE__TICKET__INIT;
    tk.ticket.data = (uint8_t *)any.data;
    tk.ticket.len = any.len;
    assert_int_equal(knut_serve__pack(&tk.base, &ticket, &err), KNUT_OK);
    char target[64];
    snprintf(target, sizeof target, "127.0.0.1:%d", knut_serve_port(s));
    knut_net_grpc_channel *ch = NULL;
    knut_net_grpc_client_call *call = NULL;
    assert_int_equal(knut_net_grpc_channel_new(&ch, target, NULL, &err), KNUT_OK);
    assert_int_equal(knut_net_grpc_channel_call(ch, SERVE_PKG "DoGet", NULL, 10000, ticket.data,
                                                ticket.len, &call, &err),
                     KNUT_OK);
    knut_buf_init(&msg, (size_t)64 << 20);
    while (knut_net_grpc_client_call_read(call, &msg, &err) == KNUT_OK)
        ;
    knut_net_grpc_client_call_finish(call, gs, &err);
    knut_net_grpc_client_call_free(call);
    knut_net_grpc_channel_free(ch);
    knut_buf_reset(&msg);
    knut_buf_reset(&handle);
    knut_buf_reset(&any);
    knut_buf_reset(&ticket);
    return gs->code;
}

static void test_reopen_through_doget(void **state)
{
    fixture *f = *state;
    knut_net_grpc_status gs = KNUT_NET_GRPC_STATUS_INIT;
    assert_int_equal(doget(f->s, "SELECT count(*) FROM w.t", &gs), KNUT_NET_GRPC_OK);
    knut_net_grpc_status_reset(&gs);
    /* the call that meets the fatal error: UNAVAILABLE, retry */
    assert_int_equal(doget(f->s, "CHECKPOINT w", &gs), KNUT_NET_GRPC_UNAVAILABLE);
    assert_non_null(strstr(gs.message, "reopened"));
    knut_net_grpc_status_reset(&gs);
    assert_int_equal(knut_serve__db_generation(f->s), 1);
    /* and the next call is served */
    assert_int_equal(doget(f->s, "SELECT count(*) FROM w.t", &gs), KNUT_NET_GRPC_OK);
    knut_net_grpc_status_reset(&gs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_reopen_after_a_fatal_error, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reopen_through_doget, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
