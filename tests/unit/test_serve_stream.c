/*
 * A result streamed as FlightData over a real in-process gRPC call: the
 * schema message first, every message within the cap (batches over it cut
 * in row halves), the bytes reassembled into an IPC stream read back with
 * every row in order; a single row over the cap is RESOURCE_EXHAUSTED.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "serve/serve_int.h"

#define CAP ((size_t)64 << 10)

typedef struct job {
    const char *sql;
} job;

static knut_status send_query(void *ctx, knut_net_grpc_call *call, knut_error *err)
{
    job *j = ctx;
    knut_buf req = KNUT_BUF_INIT;
    knut_duck_db *db = NULL;
    knut_duck_conn *conn = NULL;
    struct ArrowArrayStream rows = {0};
    int64_t n = 0;
    knut_status st = knut_net_grpc_call_read(call, &req, err);
    if (st == KNUT_OK)
        st = knut_duck_db_open(&db, NULL, NULL, 0, err);
    if (st == KNUT_OK)
        st = knut_duck_conn_open(&conn, db, err);
    if (st == KNUT_OK)
        st = knut_duck_query(conn, j->sql, &rows, err);
    if (st == KNUT_OK)
        st = knut_serve__stream_send(call, &rows, NULL, CAP, &n, err);
    knut_arrow_stream_release(&rows);
    knut_duck_conn_close(conn);
    knut_duck_db_close(db);
    knut_buf_reset(&req);
    return st;
}

/* Runs sql on a server and reads the FlightData back: the rows, the
 * number of messages and the largest one; returns the call's status. */
static knut_status fetch(const char *sql, int64_t *rows, int64_t *msgs, size_t *largest,
                         int64_t *sum)
{
    knut_error err = KNUT_ERROR_INIT;
    knut_net_grpc_server *s = NULL;
    knut_net_grpc_server_options o = KNUT_NET_GRPC_SERVER_OPTIONS_INIT;
    o.max_send = CAP + 4096;
    job j = {sql};
    assert_int_equal(knut_net_grpc_server_new(&s, &o, &err), KNUT_OK);
    assert_int_equal(knut_net_grpc_server_add_method(s, "/t.F/DoGet", send_query, &j, &err),
                     KNUT_OK);
    assert_int_equal(knut_net_grpc_server_start(s, &err), KNUT_OK);
    char target[64];
    snprintf(target, sizeof target, "127.0.0.1:%d", knut_net_grpc_server_port(s));
    knut_net_grpc_channel *ch = NULL;
    knut_net_grpc_channel_options co = KNUT_NET_GRPC_CHANNEL_OPTIONS_INIT;
    co.max_receive = 1 << 20;
    assert_int_equal(knut_net_grpc_channel_new(&ch, target, &co, &err), KNUT_OK);
    knut_net_grpc_client_call *cc = NULL;
    assert_int_equal(knut_net_grpc_channel_call(ch, "/t.F/DoGet", NULL, 30000, "x", 1, &cc, &err),
                     KNUT_OK);
    knut_buf msg = KNUT_BUF_INIT, ipc = KNUT_BUF_INIT;
    *msgs = 0;
    *largest = 0;
    while (knut_net_grpc_client_call_read(cc, &msg, &err) == KNUT_OK) {
        (*msgs)++;
        if (msg.len > *largest)
            *largest = msg.len;
        KnutServe__FlightData *fd =
            knut_serve__flight_data__unpack(NULL, msg.len, (uint8_t *)msg.data);
        assert_non_null(fd);
        assert_true(fd->data_header.len > 0); /* never an empty header */
        assert_int_equal(knut_serve__flightdata_to_ipc(fd, &ipc, &err), KNUT_OK);
        knut_serve__flight_data__free_unpacked(fd, NULL);
    }
    knut_net_grpc_status gs = KNUT_NET_GRPC_STATUS_INIT;
    knut_status st = knut_net_grpc_client_call_finish(cc, &gs, &err);
    *rows = *sum = 0;
    if (st == KNUT_OK) {
        knut_arrow_ipc_source src;
        knut_arrow_ipc_reader *r = NULL;
        assert_int_equal(knut_arrow_ipc_source_mem(&src, ipc.data, ipc.len, &err), KNUT_OK);
        assert_int_equal(knut_arrow_ipc_reader_new(&r, src, NULL, &err), KNUT_OK);
        struct ArrowArray b;
        while (knut_arrow_ipc_reader_next(r, &b, &err) == KNUT_OK && b.release) {
            const int64_t *v = b.children[0]->buffers[1];
            for (int64_t i = 0; i < b.length; i++) {
                assert_int_equal(v[b.children[0]->offset + i], *rows + i); /* in order */
                *sum += v[b.children[0]->offset + i];
            }
            *rows += b.length;
            b.release(&b);
        }
        knut_arrow_ipc_reader_free(r);
    } else {
        assert_int_equal(gs.code, KNUT_NET_GRPC_RESOURCE_EXHAUSTED);
        assert_non_null(strstr(gs.message, "one row is over"));
    }
    knut_net_grpc_status_reset(&gs);
    knut_net_grpc_client_call_free(cc);
    knut_buf_reset(&msg);
    knut_buf_reset(&ipc);
    knut_net_grpc_channel_free(ch);
    knut_net_grpc_server_free(s);
    return st;
}

static void test_cut_to_the_cap(void **state)
{
    (void)state;
    int64_t rows, msgs, sum;
    size_t largest;
    /* ~1 KiB rows: each 2048-row DuckDB chunk is ~2 MiB, 32x the cap */
    assert_int_equal(fetch("SELECT i, repeat('x', 1000) AS pad FROM range(6000) t(i)", &rows,
                           &msgs, &largest, &sum),
                     KNUT_OK);
    assert_int_equal(rows, 6000);
    assert_int_equal(sum, 6000LL * 5999 / 2);
    assert_true(largest <= CAP);
    assert_true(msgs > 1 + 6000 * 1000 / (int64_t)CAP);
}

static void test_small_batches_pass_whole(void **state)
{
    (void)state;
    int64_t rows, msgs, sum;
    size_t largest;
    assert_int_equal(fetch("SELECT i FROM range(5000) t(i)", &rows, &msgs, &largest, &sum),
                     KNUT_OK);
    assert_int_equal(rows, 5000);
    assert_int_equal(msgs, 1 + 3); /* the schema, then DuckDB's 2048-row chunks */
    /* no rows: the schema alone */
    assert_int_equal(fetch("SELECT i FROM range(5000) t(i) WHERE i < 0", &rows, &msgs, &largest,
                           &sum),
                     KNUT_OK);
    assert_int_equal(rows, 0);
    assert_int_equal(msgs, 1);
}

static void test_one_row_over_the_cap(void **state)
{
    (void)state;
    int64_t rows, msgs, sum;
    size_t largest;
    assert_int_equal(fetch("SELECT i, repeat('x', 100000) AS pad FROM range(3) t(i)", &rows,
                           &msgs, &largest, &sum),
                     KNUT_ETOOBIG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cut_to_the_cap),
        cmocka_unit_test(test_small_batches_pass_whole),
        cmocka_unit_test(test_one_row_over_the_cap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
