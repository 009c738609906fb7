/*
 * The shared ledger's pure parts (its entries' JSON is the ledger codec's,
 * tested in test_sync_ledger_entry.c): the hash field is table NUL path,
 * and the redis:// URL parser takes user/password/IPv6/port and refuses the rest
 * without ever quoting the URL (it may hold a password).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_field),
        cmocka_unit_test(test_url),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
