/*
 * Unit tests for the sync metrics (src/sync/metrics.c) and the HTTP
 * server wrapper (src/core/http_server.c): the exact exposition text for
 * a small case (label escaping, histogram buckets, last success), NULL
 * metrics are accepted everywhere, the metrics file is written whole, and
 * a real server on 127.0.0.1:0 answers /metrics, 404 and 405.
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
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "knut/net.h"
#include "sync/sync_int.h"

/* Two tables; the second name needs escaping in a label value. */
static knut_sync_table tables[2];
static knut_sync_config cfg = {.tables = tables, .n_tables = 2};

static void setup_tables(void)
{
    memset(tables, 0, sizeof tables);
    static knut_sync_edge_step edge = {.type = "WORKS_AT"};
    static knut_sync_fk_step fks[2] = {{.type = "REPORTS_TO"}, {.type = "WORKS_AT"}};
    tables[0].name = "people";
    tables[0].edges = &edge; /* WORKS_AT twice: one series */
    tables[0].n_edges = 1;
    tables[0].fk_edges = fks;
    tables[0].n_fk_edges = 2;
    tables[1].name = "odd\"name\\x\ny";
}

static const char EXPECTED[] =
    "# HELP knut_sync_rounds_total Sync rounds run.\n"
    "# TYPE knut_sync_rounds_total counter\n"
    "knut_sync_rounds_total 2\n"
    "# HELP knut_sync_rounds_failed_total Sync rounds with a failed file or table.\n"
    "# TYPE knut_sync_rounds_failed_total counter\n"
    "knut_sync_rounds_failed_total 1\n"
    "# HELP knut_sync_tables_synced_total Rounds in which the table committed new files.\n"
    "# TYPE knut_sync_tables_synced_total counter\n"
    "knut_sync_tables_synced_total{table=\"people\"} 1\n"
    "knut_sync_tables_synced_total{table=\"odd\\\"name\\\\x\\ny\"} 0\n"
    "# HELP knut_sync_rows_ingested_total Rows read from committed files.\n"
    "# TYPE knut_sync_rows_ingested_total counter\n"
    "knut_sync_rows_ingested_total{table=\"people\"} 10\n"
    "knut_sync_rows_ingested_total{table=\"odd\\\"name\\\\x\\ny\"} 0\n"
    "# HELP knut_sync_vertices_written_total Vertices upserted into the graph.\n"
    "# TYPE knut_sync_vertices_written_total counter\n"
    "knut_sync_vertices_written_total{table=\"people\"} 10\n"
    "knut_sync_vertices_written_total{table=\"odd\\\"name\\\\x\\ny\"} 0\n"
    "# HELP knut_sync_edges_written_total Edges upserted into the graph.\n"
    "# TYPE knut_sync_edges_written_total counter\n"
    "knut_sync_edges_written_total{table=\"people\"} 9\n"
    "knut_sync_edges_written_total{table=\"odd\\\"name\\\\x\\ny\"} 0\n"
    "# HELP knut_sync_deletes_total Vertices deleted from the graph.\n"
    "# TYPE knut_sync_deletes_total counter\n"
    "knut_sync_deletes_total{table=\"people\"} 2\n"
    "knut_sync_deletes_total{table=\"odd\\\"name\\\\x\\ny\"} 0\n"
    "# HELP knut_sync_edges_skipped_total Edge rows left out because an endpoint vertex does "
    "not exist (missing_endpoints: skip).\n"
    "# TYPE knut_sync_edges_skipped_total counter\n"
    "knut_sync_edges_skipped_total{table=\"people\",type=\"WORKS_AT\"} 3\n"
    "knut_sync_edges_skipped_total{table=\"people\",type=\"REPORTS_TO\"} 0\n"
    "# HELP knut_sync_last_success_timestamp_seconds Unix time of the table's last round "
    "without failure (0: none yet).\n"
    "# TYPE knut_sync_last_success_timestamp_seconds gauge\n"
    "knut_sync_last_success_timestamp_seconds{table=\"people\"} 1764529200.250\n"
    "knut_sync_last_success_timestamp_seconds{table=\"odd\\\"name\\\\x\\ny\"} 0.000\n"
    "# HELP knut_sync_assets_emitted_total Airflow asset events accepted by Airflow.\n"
    "# TYPE knut_sync_assets_emitted_total counter\n"
    "knut_sync_assets_emitted_total 3\n"
    "# HELP knut_sync_round_duration_seconds Duration of sync rounds.\n"
    "# TYPE knut_sync_round_duration_seconds histogram\n"
    "knut_sync_round_duration_seconds_bucket{le=\"0.1\"} 0\n"
    "knut_sync_round_duration_seconds_bucket{le=\"0.5\"} 1\n"
    "knut_sync_round_duration_seconds_bucket{le=\"1\"} 1\n"
    "knut_sync_round_duration_seconds_bucket{le=\"2.5\"} 1\n"
    "knut_sync_round_duration_seconds_bucket{le=\"5\"} 1\n"
    "knut_sync_round_duration_seconds_bucket{le=\"10\"} 1\n"
    "knut_sync_round_duration_seconds_bucket{le=\"30\"} 1\n"
    "knut_sync_round_duration_seconds_bucket{le=\"60\"} 1\n"
    "knut_sync_round_duration_seconds_bucket{le=\"120\"} 2\n"
    "knut_sync_round_duration_seconds_bucket{le=\"300\"} 2\n"
    "knut_sync_round_duration_seconds_bucket{le=\"600\"} 2\n"
    "knut_sync_round_duration_seconds_bucket{le=\"+Inf\"} 2\n"
    "knut_sync_round_duration_seconds_sum 90.250000\n"
    "knut_sync_round_duration_seconds_count 2\n";

/* Round 1: people commits 10 rows; round 2: people idle, the other table fails. */
static struct sync_metrics *filled(void)
{
    struct sync_metrics *m = NULL;
    knut_error err = KNUT_ERROR_INIT;
    setup_tables();
    assert_int_equal(knut_sync__metrics_create(&m, &cfg, &err), KNUT_OK);
    sync_table_result r1 = {&tables[0], 1, 1, 0, 0, 10, 10, 9, 2, 1000, 1, NULL};
    knut_sync__metrics_table_at(m, &r1, 1764529100000000);
    knut_sync__metrics_edges_skipped(m, &tables[0], "WORKS_AT", 3);
    knut_sync__metrics_edges_skipped(m, &tables[0], "NOT_A_TYPE_OF_IT", 5); /* ignored */
    knut_sync_round_stats s1 = {.round = 1, .files_done = 1, .duration_us = 250000};
    knut_sync__metrics_round(m, &s1, 1);
    sync_table_result r2 = {&tables[0], 2, 0, 0, 0, 0, 0, 0, 0, 10, 1, NULL};
    knut_sync__metrics_table_at(m, &r2, 1764529200250000);
    sync_table_result r3 = {&tables[1], 2, 0, 0, 0, 0, 0, 0, 0, 10, 0, "peer down"};
    knut_sync__metrics_table_at(m, &r3, 1764529200250000);
    knut_sync_round_stats s2 = {.round = 2, .tables_failed = 1, .duration_us = 90000000};
    knut_sync__metrics_round(m, &s2, 0);
    knut_sync__metrics_assets_add(m, 2);
    knut_sync__metrics_assets_add(m, 1);
    return m;
}

static void test_render_exact(void **state)
{
    struct sync_metrics *m = filled();
    knut_buf b = KNUT_BUF_INIT;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_sync__metrics_render(m, &b, &err), KNUT_OK);
    assert_string_equal(b.data, EXPECTED);
    knut_buf_reset(&b);
    knut_sync__metrics_free(m);
}

static void test_null_metrics(void **state)
{
    sync_table_result r = {0};
    knut_sync_round_stats s = {0};
    knut_sync__metrics_table(NULL, &r);
    knut_sync__metrics_round(NULL, &s, 1);
    knut_sync__metrics_assets_add(NULL, 1);
    knut_sync__metrics_free(NULL);
}

static void test_write_file(void **state)
{
    char dir[] = "/tmp/knut_metrics_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[128], tmp[160];
    snprintf(path, sizeof path, "%s/sync.prom", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    struct sync_metrics *m = filled();
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_sync__metrics_write_file(m, path, &err), KNUT_OK);
    knut_buf got = KNUT_BUF_INIT;
    assert_int_equal(knut_file_read(path, 1 << 20, &got, &err), KNUT_OK);
    assert_int_equal(got.len, strlen(EXPECTED));
    assert_memory_equal(got.data, EXPECTED, got.len);
    assert_int_not_equal(access(tmp, F_OK), 0); /* renamed away */
    /* a folder that does not exist: an error naming the file, no crash */
    assert_int_equal(knut_sync__metrics_write_file(m, "/nonexistent/dir/x.prom", &err), KNUT_EIO);
    assert_non_null(strstr(err.message, "/nonexistent/dir/x.prom"));
    knut_buf_reset(&got);
    knut_sync__metrics_free(m);
    unlink(path);
    rmdir(dir);
}

static long get(const char *base, const char *method, const char *path, knut_buf *body)
{
    knut_net_http_client *c = NULL;
    knut_net_http_response r = KNUT_NET_HTTP_RESPONSE_INIT;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_net_http_client_new(&c, base, NULL, &err), KNUT_OK);
    if (knut_net_http_client_request(c, method, path, NULL, NULL, 0, &r, &err) != KNUT_OK)
        fail_msg("%s %s: %s", method, path, err.message);
    long status = r.status;
    if (body)
        knut_buf_append(body, r.body.data ? r.body.data : "", r.body.len);
    knut_net_http_response_reset(&r);
    knut_net_http_client_free(c);
    return status;
}

static void test_serve(void **state)
{
    struct sync_metrics *m = filled();
    knut_error err = KNUT_ERROR_INIT;
    char base[64];
    knut_buf body = KNUT_BUF_INIT;
    assert_int_equal(knut_sync__metrics_serve(m, "127.0.0.1:0", &err), KNUT_OK);
    int port = knut_sync__metrics_port(m);
    assert_true(port > 0);
    snprintf(base, sizeof base, "http://127.0.0.1:%d", port);
    assert_int_equal(get(base, "GET", "/metrics", &body), 200);
    knut_buf_putc(&body, 0);
    assert_string_equal(body.data, EXPECTED);
    assert_int_equal(get(base, "GET", "/metrics?x=1", NULL), 200);
    assert_int_equal(get(base, "GET", "/", NULL), 404);
    assert_int_equal(get(base, "GET", "/metricsx", NULL), 404);
    assert_int_equal(get(base, "POST", "/metrics", NULL), 405);
    assert_int_equal(get(base, "DELETE", "/metrics", NULL), 405);
    /* the port is taken: a second server says so, naming the address */
    char addr[32];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", port);
    struct sync_metrics *m2 = filled();
    assert_int_equal(knut_sync__metrics_serve(m2, addr, &err), KNUT_EIO);
    assert_non_null(strstr(err.message, addr));
    knut_sync__metrics_free(m2);
    knut_buf_reset(&body);
    knut_sync__metrics_free(m); /* stops the server */
}

/* Sends req raw and returns the status of the reply's first line (0: none). */
static int raw_status(int port, const char *req, size_t len)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_true(fd >= 0);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    for (size_t off = 0; off < len;) {
        ssize_t w = send(fd, req + off, len - off, MSG_NOSIGNAL);
        if (w <= 0)
            break; /* the server may close early: the reply is still there */
        off += (size_t)w;
    }
    char buf[256] = "";
    ssize_t n = recv(fd, buf, sizeof buf - 1, 0);
    close(fd);
    int status = 0;
    if (n > 0)
        sscanf(buf, "HTTP/1.%*d %d", &status);
    return status;
}

/* Hostile requests: huge headers, a body, garbage; the server keeps serving. */
static void test_serve_hostile(void **state)
{
    struct sync_metrics *m = filled();
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_sync__metrics_serve(m, "127.0.0.1:0", &err), KNUT_OK);
    int port = knut_sync__metrics_port(m);
    size_t big = 64 << 10;
    char *req = malloc(big + 64);
    assert_non_null(req);
    int n = snprintf(req, 64, "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: ");
    memset(req + n, 'a', big);
    memcpy(req + n + big, "\r\n\r\n", 4);
    int st = raw_status(port, req, (size_t)n + big + 4);
    assert_true(st == 431 || st == 413 || st == 0); /* refused, never served */
    free(req);
    static const char body[] = "GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello";
    assert_int_equal(raw_status(port, body, sizeof body - 1), 413);
    static const char junk[] = "\x01\x02 not http at all\r\n\r\n";
    raw_status(port, junk, sizeof junk - 1); /* whatever it answers, it must survive */
    static const char ok[] = "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    assert_int_equal(raw_status(port, ok, sizeof ok - 1), 200);
    knut_sync__metrics_free(m);
}

/* Bad addresses are refused with the address named; nothing is bound. */
static void test_bad_addr(void **state)
{
    struct sync_metrics *m = filled();
    knut_error err = KNUT_ERROR_INIT;
    const char *bad[] = {"localhost:9464", "127.0.0.1", "127.0.0.1:x", "127.0.0.1:70000",
                         "::1:9464", ":9464", "[::1]9464"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(knut_sync__metrics_serve(m, bad[i], &err), KNUT_EINVAL);
        assert_non_null(strstr(err.message, bad[i]));
    }
    /* IPv6 loopback in brackets works */
    assert_int_equal(knut_sync__metrics_serve(m, "[::1]:0", &err), KNUT_OK);
    assert_true(knut_sync__metrics_port(m) > 0);
    knut_sync__metrics_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_render_exact),
        cmocka_unit_test(test_null_metrics),
        cmocka_unit_test(test_write_file),
        cmocka_unit_test(test_serve),
        cmocka_unit_test(test_serve_hostile),
        cmocka_unit_test(test_bad_addr),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
