/*
 * Unit tests for the FalkorDB client's connection logic against a scripted
 * fake server on loopback (a thread speaking RESP2): behaviour a real
 * FalkorDB will not show on demand. Reply caps, command timeouts, a server
 * closing mid-call (resend of read-only queries only), name-cache refresh
 * on unknown ids, RESULTSET_SIZE truncation, pipelined batches, AUTH
 * failures that must not leak the password, and URL errors.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "graph/falkor_int.h"
#include "knut/graph.h"

#define OK(expr)                                                          \
    do {                                                                  \
        knut_error e_ = KNUT_ERROR_INIT;                                  \
        knut_status s_ = (expr);                                          \
        if (s_ != KNUT_OK)                                                \
            fail_msg("%s -> %d: %s", #expr, (int)s_, e_.message);         \
    } while (0)

/* ---- the fake server --------------------------------------------------- */

enum { REPLY, CLOSE, HANG };

typedef struct step {
    const char *expect; /* must occur in the command */
    int action;
    const char *reply;
} step;

typedef struct fake {
    int lfd, port;
    pthread_t th;
    const step *steps;
    size_t n, done;
    char problem[256]; /* what went wrong on the server side */
} fake;

#define CONFIG {"GRAPH.CONFIG", REPLY, "*2\r\n$14\r\nRESULTSET_SIZE\r\n:-1\r\n"}
#define STATS "*2\r\n$19\r\nCached execution: 0\r\n$52\r\nQuery internal execution time: " \
              "0.100000 milliseconds\r\n"
#define ONE_INT "*3\r\n*1\r\n*2\r\n:1\r\n$1\r\nx\r\n*1\r\n*1\r\n*2\r\n:3\r\n:7\r\n" STATS

/* Bytes read on the current connection; commands may arrive together. */
static char inbuf[1 << 16];
static size_t inlen;

/* Moves the next whole command into out (NUL-terminated); 0 at EOF or on
 * a 5 s timeout. */
static size_t read_command(int fd, char *out, size_t cap)
{
    falkor_frame f;
    knut_error e;
    size_t end = 0;
    knut_graph__falkor_frame_init(&f, 8, (int64_t)sizeof inbuf);
    for (;;) {
        if (inlen > 0 && knut_graph__falkor_frame_scan(&f, inbuf, inlen, &end, "fake", &e) ==
                             KNUT_OK && end < cap) {
            memcpy(out, inbuf, end);
            out[end] = '\0';
            memmove(inbuf, inbuf + end, inlen - end);
            inlen -= end;
            return end;
        }
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 5000) <= 0)
            return 0;
        ssize_t n = read(fd, inbuf + inlen, sizeof inbuf - inlen);
        if (n <= 0)
            return 0;
        inlen += (size_t)n;
    }
}

static void *serve(void *arg)
{
    fake *f = arg;
    static char buf[1 << 16];
    while (f->done < f->n) {
        struct pollfd p = {f->lfd, POLLIN, 0};
        if (poll(&p, 1, 5000) <= 0) {
            snprintf(f->problem, sizeof f->problem, "no connection for step %zu", f->done);
            return NULL;
        }
        int fd = accept(f->lfd, NULL, NULL);
        inlen = 0;
        while (fd >= 0 && f->done < f->n) {
            size_t len = read_command(fd, buf, sizeof buf);
            if (len == 0)
                break; /* the client closed: the next step is on a new connection */
            const step *s = &f->steps[f->done++];
            if (strstr(buf, s->expect) == NULL) {
                snprintf(f->problem, sizeof f->problem, "step %zu: wanted '%s' in '%.120s'",
                         f->done - 1, s->expect, buf);
                close(fd);
                return NULL;
            }
            if (s->action == CLOSE)
                break;
            if (s->action == HANG) {
                while (read(fd, buf, sizeof buf) > 0)
                    ;
                break;
            }
            if (write(fd, s->reply, strlen(s->reply)) < 0)
                break;
        }
        if (fd >= 0)
            close(fd);
    }
    return NULL;
}

static void fake_start(fake *f, const step *steps, size_t n)
{
    struct sockaddr_in a = {0};
    socklen_t alen = sizeof a;
    memset(f, 0, sizeof *f);
    f->steps = steps;
    f->n = n;
    f->lfd = socket(AF_INET, SOCK_STREAM, 0);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(f->lfd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(f->lfd, 4), 0);
    assert_int_equal(getsockname(f->lfd, (struct sockaddr *)&a, &alen), 0);
    f->port = ntohs(a.sin_port);
    assert_int_equal(pthread_create(&f->th, NULL, serve, f), 0);
}

/* Joins the server and checks it saw every step it expected. */
static void fake_stop(fake *f)
{
    shutdown(f->lfd, SHUT_RDWR);
    pthread_join(f->th, NULL);
    close(f->lfd);
    if (f->problem[0])
        fail_msg("fake server: %s", f->problem);
    assert_int_equal(f->done, f->n);
}

static knut_graph_falkor *connect_to(fake *f, knut_graph_falkor_options *o)
{
    knut_graph_falkor *g = NULL;
    knut_error e = KNUT_ERROR_INIT;
    if (knut_graph_falkor_connect(&g, "127.0.0.1", f->port, o, &e) != KNUT_OK)
        fail_msg("connect: %s", e.message);
    return g;
}

static void expect_error(knut_status got, const knut_error *e, knut_status want,
                         const char *fragment)
{
    if (got != want || strstr(e->message, fragment) == NULL)
        fail_msg("status %d (want %d): '%s' (want '%s')", (int)got, (int)want, e->message,
                 fragment);
}

/* ---- tests ------------------------------------------------------------- */

static void test_graph_falkor_client__reply_cap_and_timeout(void **state)
{
    (void)state;
    static const step steps[] = {
        CONFIG,
        {"GRAPH.RO_QUERY", REPLY, "$300\r\n"},
        CONFIG,
        {"slow", HANG, NULL},
        CONFIG,
        {"RETURN 7", REPLY, ONE_INT},
    };
    fake f;
    fake_start(&f, steps, 6);
    knut_graph_falkor_options o = KNUT_GRAPH_FALKOR_OPTIONS_INIT;
    o.max_reply_bytes = 200;
    o.command_timeout_ms = 300;
    knut_graph_falkor *g = connect_to(&f, &o);
    knut_graph_falkor_result r;
    knut_error e = KNUT_ERROR_INIT;
    char peer[64];
    snprintf(peer, sizeof peer, "falkordb 127.0.0.1:%d: ", f.port);
    knut_status st = knut_graph_falkor_query(g, "g", "RETURN 1", KNUT_GRAPH_FALKOR_READ_ONLY, &r, &e);
    expect_error(st, &e, KNUT_ETOOBIG, "larger than the 200-byte cap");
    assert_non_null(strstr(e.message, peer));
    /* the capped connection was closed; this call reconnects, then times out */
    st = knut_graph_falkor_query(g, "g", "RETURN slow", 0, &r, &e);
    expect_error(st, &e, KNUT_EIO, "no reply within 300 ms");
    assert_non_null(strstr(e.message, peer));
    OK(knut_graph_falkor_query(g, "g", "RETURN 7", 0, &r, &e_));
    assert_int_equal(r.n_rows, 1);
    knut_graph_falkor_result_reset(&r);
    knut_graph_falkor_close(g);
    fake_stop(&f);
}

static void test_graph_falkor_client__lost_connection(void **state)
{
    (void)state;
    static const step steps[] = {
        CONFIG,
        {"GRAPH.QUERY", CLOSE, NULL},     /* a write: never resent */
        CONFIG,
        {"GRAPH.RO_QUERY", CLOSE, NULL},  /* a read: resent once */
        CONFIG,
        {"GRAPH.RO_QUERY", REPLY, ONE_INT},
        {"GRAPH.RO_QUERY", CLOSE, NULL},  /* lost twice: one resend only */
        CONFIG,
        {"GRAPH.RO_QUERY", CLOSE, NULL},
    };
    fake f;
    fake_start(&f, steps, 9);
    knut_graph_falkor *g = connect_to(&f, NULL);
    knut_graph_falkor_result r;
    knut_error e = KNUT_ERROR_INIT;
    knut_status st = knut_graph_falkor_query(g, "g", "CREATE ()", 0, &r, &e);
    expect_error(st, &e, KNUT_EIO, "connection lost");
    assert_non_null(strstr(e.message, "may have been applied"));
    OK(knut_graph_falkor_query(g, "g", "RETURN 7", KNUT_GRAPH_FALKOR_READ_ONLY, &r, &e_));
    assert_int_equal(r.n_rows, 1);
    knut_graph_falkor_result_reset(&r);
    st = knut_graph_falkor_query(g, "g", "RETURN 7", KNUT_GRAPH_FALKOR_READ_ONLY, &r, &e);
    expect_error(st, &e, KNUT_EIO, "connection lost");
    knut_graph_falkor_close(g);
    fake_stop(&f);
}

#define NODE_REPLY(label, key)                                                          \
    "*3\r\n*1\r\n*2\r\n:1\r\n$1\r\nn\r\n*1\r\n*1\r\n*2\r\n:8\r\n*3\r\n:4\r\n*1\r\n:" label \
    "\r\n*1\r\n*3\r\n:" key "\r\n:3\r\n:9\r\n" STATS
#define NAMES2(a, b) "*3\r\n*1\r\n*2\r\n:1\r\n$5\r\nlabel\r\n*2\r\n*1\r\n*2\r\n:2\r\n$1\r\n" a \
                     "\r\n*1\r\n*2\r\n:2\r\n$1\r\n" b "\r\n" STATS
#define NAMES3(a, b, c) "*3\r\n*1\r\n*2\r\n:1\r\n$5\r\nlabel\r\n*3\r\n*1\r\n*2\r\n:2\r\n$1\r\n" a \
                        "\r\n*1\r\n*2\r\n:2\r\n$1\r\n" b "\r\n*1\r\n*2\r\n:2\r\n$1\r\n" c "\r\n" STATS

static void test_graph_falkor_client__names_refresh(void **state)
{
    (void)state;
    static const step steps[] = {
        CONFIG,
        {"MATCH", REPLY, NODE_REPLY("1", "0")},
        {"db.labels()", REPLY, NAMES2("A", "B")},
        {"db.propertyKeys()", REPLY, NAMES2("k", "q")},
        {"MATCH", REPLY, NODE_REPLY("0", "1")}, /* known ids: no refresh */
        {"MATCH", REPLY, NODE_REPLY("2", "1")}, /* a new label */
        {"db.labels()", REPLY, NAMES3("A", "B", "C")},
        {"MATCH", REPLY, NODE_REPLY("5", "1")}, /* never heard of */
        {"db.labels()", REPLY, NAMES3("A", "B", "C")},
    };
    fake f;
    fake_start(&f, steps, 9);
    knut_graph_falkor *g = connect_to(&f, NULL);
    const char *want[] = {"B", "A", "C"};
    const char *props[] = {"{\"k\":9}", "{\"q\":9}", "{\"q\":9}"};
    for (int q = 0; q < 3; q++) {
        knut_graph_falkor_result r;
        struct ArrowSchema s;
        struct ArrowArray *a;
        int64_t n, len;
        knut_arrow_view v;
        OK(knut_graph_falkor_query(g, "g", "MATCH (n) RETURN n", 0, &r, &e_));
        OK(knut_arrow_stream_collect(&r.stream, &s, &a, &n, 0, &e_));
        OK(knut_arrow_view_init(&v, &s, &a[0], &e_));
        const char *p = knut_arrow_view_get_str(&v.children[0].children[1].children[0], 0, &len);
        assert_int_equal(len, 1);
        assert_memory_equal(p, want[q], 1);
        p = knut_arrow_view_get_str(&v.children[0].children[2], 0, &len);
        assert_int_equal(len, (int64_t)strlen(props[q]));
        assert_memory_equal(p, props[q], (size_t)len);
        knut_arrow_view_reset(&v);
        knut_arrow_arrays_free(a, n);
        knut_arrow_schema_release(&s);
        knut_graph_falkor_result_reset(&r);
    }
    knut_graph_falkor_result r;
    knut_error e = KNUT_ERROR_INIT;
    knut_status st = knut_graph_falkor_query(g, "g", "MATCH (n) RETURN n", 0, &r, &e);
    expect_error(st, &e, KNUT_EPEER, "label id 5 is unknown to the server's list of 3");
    knut_graph_falkor_close(g);
    fake_stop(&f);
}

static void test_graph_falkor_client__truncation(void **state)
{
    (void)state;
    static const char two_rows[] =
        "*3\r\n*1\r\n*2\r\n:1\r\n$1\r\nx\r\n*2\r\n*1\r\n*2\r\n:3\r\n:1\r\n*1\r\n*2\r\n:3\r\n:2\r\n"
        STATS;
    static const step steps[] = {
        {"GRAPH.CONFIG", REPLY, "*2\r\n$14\r\nRESULTSET_SIZE\r\n:2\r\n"},
        {"UNWIND", REPLY, two_rows},
        {"UNWIND", REPLY, two_rows},
        {"RETURN 7", REPLY, ONE_INT},
        {"QA1", REPLY, "*3\r\n:1\r\n:2\r\n-ERR oops\r\n"},
        {"QB2", REPLY, two_rows},
    };
    fake f;
    fake_start(&f, steps, 6);
    knut_graph_falkor *g = connect_to(&f, NULL);
    assert_int_equal(knut_graph_falkor_resultset_limit(g), 2);
    knut_graph_falkor_result r;
    knut_error e = KNUT_ERROR_INIT;
    knut_status st = knut_graph_falkor_query(g, "g", "UNWIND", 0, &r, &e);
    expect_error(st, &e, KNUT_ETOOBIG, "exactly the server's RESULTSET_SIZE");
    OK(knut_graph_falkor_query(g, "g", "UNWIND", KNUT_GRAPH_FALKOR_ALLOW_TRUNCATED, &r, &e_));
    assert_int_equal(r.truncated, 1);
    knut_graph_falkor_result_reset(&r);
    OK(knut_graph_falkor_query(g, "g", "RETURN 7", 0, &r, &e_));
    assert_int_equal(r.truncated, 0);
    knut_graph_falkor_result_reset(&r);
    /* a batch: a server error inside a reply, then a truncated result */
    knut_graph_falkor_batch_item two[2] = {{.query = "QA1"}, {.query = "QB2"}};
    st = knut_graph_falkor_batch(g, "g", two, 2, 0, &e);
    expect_error(st, &e, KNUT_EPEER, "2 of 2 batched queries failed; first (#0)");
    expect_error(two[0].status, &two[0].error, KNUT_EPEER, "ERR oops");
    expect_error(two[1].status, &two[1].error, KNUT_ETOOBIG, "RESULTSET_SIZE");
    knut_graph_falkor_close(g);
    fake_stop(&f);
}

static void test_graph_falkor_client__batch(void **state)
{
    (void)state;
    static const step steps[] = {
        CONFIG,
        {"CREATE (:A)", REPLY, "*1\r\n*3\r\n$16\r\nNodes created: 1\r\n$19\r\nCached execution: "
                               "0\r\n$52\r\nQuery internal execution time: 0.100000 "
                               "milliseconds\r\n"},
        {"oops", REPLY, "-Invalid input 'o'\r\n"},
        {"RETURN 7", REPLY, ONE_INT},
        {"CREATE (:B)", CLOSE, NULL},
    };
    fake f;
    fake_start(&f, steps, 5);
    knut_graph_falkor *g = connect_to(&f, NULL);
    knut_graph_falkor_batch_item items[3] = {{.query = "CREATE (:A)"}, {.query = "oops"},
                                             {.query = "RETURN 7"}};
    knut_error e = KNUT_ERROR_INIT;
    knut_status st = knut_graph_falkor_batch(g, "g", items, 3, 0, &e);
    expect_error(st, &e, KNUT_EPEER, "1 of 3 batched queries failed; first (#1): ");
    assert_non_null(strstr(e.message, "Invalid input 'o'"));
    /* the first failure's kind is the batch's */
    assert_int_equal(items[1].error.detail, KNUT_GRAPH_FALKOR_ERR_OTHER);
    assert_int_equal(e.detail, KNUT_GRAPH_FALKOR_ERR_OTHER);
    assert_int_equal(items[0].status, KNUT_OK);
    assert_int_equal(items[0].stats.nodes_created, 1);
    assert_int_equal(items[2].status, KNUT_OK);
    assert_int_equal(items[2].n_rows, 1);
    /* the server goes away after reading: the item says it may have run */
    knut_graph_falkor_batch_item one = {.query = "CREATE (:B)"};
    st = knut_graph_falkor_batch(g, "g", &one, 1, 0, &e);
    expect_error(one.status, &one.error, KNUT_EIO, "may have been applied");
    assert_int_equal(st, KNUT_EIO);
    assert_int_equal(e.detail, 0); /* not a server error */
    knut_graph_falkor_close(g);
    fake_stop(&f);
}

static char logged[8192];

static void capture(const knut_log_record *rec, void *ctx)
{
    (void)ctx;
    size_t n = strlen(logged);
    snprintf(logged + n, sizeof logged - n, "%s\n", rec->msg);
}

static void test_graph_falkor_client__password_never_leaks(void **state)
{
    (void)state;
    static const step steps[] = {
        {"hunter2", REPLY, "-WRONGPASS hunter2 is not the password\r\n"},
        {"AUTH", REPLY, "+OK\r\n"},
        CONFIG,
    };
    fake f;
    fake_start(&f, steps, 3);
    knut_log_set(KNUT_LOG_TRACE, capture, NULL);
    knut_graph_falkor_options o = KNUT_GRAPH_FALKOR_OPTIONS_INIT;
    o.password = "hunter2";
    knut_graph_falkor *g = NULL;
    knut_error e = KNUT_ERROR_INIT;
    knut_status st = knut_graph_falkor_connect(&g, "127.0.0.1", f.port, &o, &e);
    expect_error(st, &e, KNUT_EPEER, "authentication failed: WRONGPASS *** is not");
    assert_null(g);
    char url[128];
    snprintf(url, sizeof url, "redis://:hunter%%32@127.0.0.1:%d", f.port);
    OK(knut_graph_falkor_connect_url(&g, url, NULL, &e_));
    knut_graph_falkor_close(g);
    knut_log_set(KNUT_LOG_OFF, NULL, NULL);
    assert_null(strstr(logged, "hunter2"));
    fake_stop(&f);
}

static void test_graph_falkor_client__urls_and_refused(void **state)
{
    (void)state;
    static const struct {
        const char *url;
        const char *msg;
    } bad[] = {
        {"http://h:1", "expected redis://"},
        {"redis://", "no host"},
        {"redis://:s3cret@h:0", "port out of 1..65535"},
        {"redis://:s3cret@h:99999", "port out of 1..65535"},
        {"redis://:s3cret@h:1x", "port out of 1..65535"},
        {"redis://u:%zz@h", "percent-encoding"},
        {"redis://:s3cret@h/2", "not supported"},
        {"redis://:s3cret@[::1", "unclosed"},
    };
    knut_graph_falkor *g = NULL;
    knut_error e = KNUT_ERROR_INIT;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        knut_status st = knut_graph_falkor_connect_url(&g, bad[i].url, NULL, &e);
        expect_error(st, &e, KNUT_EINVAL, bad[i].msg);
        assert_null(strstr(e.message, "s3cret"));
        assert_null(g);
    }
    /* a port nobody listens on: refused, naming host:port, not the password */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {0};
    socklen_t alen = sizeof a;
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &alen), 0);
    close(fd);
    char url[128], want[64];
    snprintf(url, sizeof url, "redis://user:s3cret@127.0.0.1:%d/", ntohs(a.sin_port));
    snprintf(want, sizeof want, "falkordb 127.0.0.1:%d: connect: ", ntohs(a.sin_port));
    knut_status st = knut_graph_falkor_connect_url(&g, url, NULL, &e);
    expect_error(st, &e, KNUT_EIO, want);
    assert_null(strstr(e.message, "s3cret"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_graph_falkor_client__reply_cap_and_timeout),
        cmocka_unit_test(test_graph_falkor_client__lost_connection),
        cmocka_unit_test(test_graph_falkor_client__names_refresh),
        cmocka_unit_test(test_graph_falkor_client__truncation),
        cmocka_unit_test(test_graph_falkor_client__batch),
        cmocka_unit_test(test_graph_falkor_client__password_never_leaks),
        cmocka_unit_test(test_graph_falkor_client__urls_and_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
