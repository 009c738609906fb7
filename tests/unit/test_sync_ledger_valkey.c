/*
 * The shared ledger's pure parts (its entries' JSON is the ledger codec's,
 * tested in test_sync_ledger_entry.c): the hash field is table NUL path,
 * and the redis:// URL parser takes user/password/IPv6/port and refuses the rest
 * without ever quoting the URL (it may hold a password), and a reply is
 * capped while it is read: a peer that sends a bulk string past
 * VK_REPLY_MAX is refused, not buffered whole.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "sync/ledger_valkey_int.h"

static void test_field(void **state)
{
    (void)state;
    knut_buf b = KNUT_BUF_INIT;
    assert_int_equal(knut_sync__vk_field(&b, "t1", "/a/b.csv"), KNUT_OK);
    assert_int_equal(b.len, 2 + 1 + 8);
    assert_memory_equal(b.data, "t1\0/a/b.csv", b.len);
    knut_buf_reset(&b);
}

static void test_url(void **state)
{
    (void)state;
    vk_addr a;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_sync__vk_addr_parse(&a, "redis://127.0.0.1:6380", &err), KNUT_OK);
    assert_string_equal(a.host, "127.0.0.1");
    assert_int_equal(a.port, 6380);
    assert_null(a.pass);
    assert_string_equal(a.peer, "valkey 127.0.0.1:6380");
    knut_sync__vk_addr_reset(&a);

    assert_int_equal(knut_sync__vk_addr_parse(&a, "redis://bob:p%40ss@[::1]/", &err), KNUT_OK);
    assert_string_equal(a.user, "bob");
    assert_string_equal(a.pass, "p@ss");
    assert_string_equal(a.host, "::1");
    assert_int_equal(a.port, 6379);
    assert_string_equal(a.peer, "valkey [::1]:6379");
    knut_sync__vk_addr_reset(&a);

    assert_int_equal(knut_sync__vk_addr_parse(&a, "redis://:only-pw@h", &err), KNUT_OK);
    assert_null(a.user);
    assert_string_equal(a.pass, "only-pw");
    knut_sync__vk_addr_reset(&a);

    static const char *const bad[] = {
        "http://h:1",       "redis://:topsecret@h:0",    "redis://:topsecret@h:70000",
        "redis://:topsecret@/", "redis://:topsecret@h/2", "redis://:top%zzsecret@h",
        "redis://:topsecret@[::1",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(knut_sync__vk_addr_parse(&a, bad[i], &err), KNUT_EINVAL);
        assert_null(strstr(err.message, "topsecret"));
        assert_null(strstr(err.message, "secret"));
        assert_null(a.host);
    }
}

/* A peer that answers its first command with `first`, then (if given) an
 * endless bulk string of the declared length; it stops when the client
 * hangs up. */
typedef struct peer {
    int lfd;
    const char *first;
    int flood;
} peer;

static void *peer_run(void *arg)
{
    peer *p = arg;
    int fd = accept(p->lfd, NULL, NULL);
    if (fd < 0)
        return NULL;
    char req[4096];
    for (int k = 0; k < (p->flood ? 1 : 2); k++) {
        if (recv(fd, req, sizeof req, 0) <= 0)
            break;
        if (k == 0 && send(fd, p->first, strlen(p->first), MSG_NOSIGNAL) < 0)
            break;
        if (p->flood) {
            static char chunk[1 << 16];
            memset(chunk, 'x', sizeof chunk);
            while (send(fd, chunk, sizeof chunk, MSG_NOSIGNAL) > 0)
                ;
        }
    }
    close(fd);
    return NULL;
}

static int peer_listen(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof sa;
    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(listen(fd, 1), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
    *port = ntohs(sa.sin_port);
    return fd;
}

static knut_status one_command(const char *first, int flood, knut_error *err)
{
    int port;
    peer p = {peer_listen(&port), first, flood};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, peer_run, &p), 0);
    char url[64];
    snprintf(url, sizeof url, "redis://127.0.0.1:%d", port);
    vk_addr a;
    assert_int_equal(knut_sync__vk_addr_parse(&a, url, err), KNUT_OK);
    vk_conn c = {&a, NULL};
    const char *argv[] = {"GET", "k"};
    redisReply *r = NULL;
    knut_status st = knut_sync__vk_cmd(&c, 2, argv, NULL, &r, err);
    if (r) {
        assert_int_equal(r->type, REDIS_REPLY_STRING);
        assert_string_equal(r->str, "hello");
        freeReplyObject(r);
    }
    knut_sync__vk_close(&c);
    pthread_join(t, NULL);
    close(p.lfd);
    knut_sync__vk_addr_reset(&a);
    return st;
}

static void test_reply_cap(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(one_command("$5\r\nhello\r\n", 0, &err), KNUT_OK);
    char head[64];
    snprintf(head, sizeof head, "$%zu\r\n", VK_REPLY_MAX * 4);
    assert_int_equal(one_command(head, 1, &err), KNUT_ETOOBIG);
    assert_non_null(strstr(err.message, "byte cap"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_field),
        cmocka_unit_test(test_url),
        cmocka_unit_test(test_reply_cap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
