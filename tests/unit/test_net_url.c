/*
 * redis:// URL parsing (src/net/url.c): the accepted forms, the defaults,
 * percent-decoding of the user info, and errors that never quote the URL.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "knut/net.h"

static void test_forms(void **state)
{
    (void)state;
    knut_net_redis_url u;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_net_redis_url_parse(&u, "redis://localhost", &err), KNUT_OK);
    assert_string_equal(u.host, "localhost");
    assert_int_equal(u.port, 6379);
    assert_null(u.user);
    assert_null(u.password);
    knut_net_redis_url_reset(&u);

    assert_int_equal(knut_net_redis_url_parse(&u, "REDIS://al%40ice:p%3Ass@w@[::1]:6380/", &err),
                     KNUT_OK);
    assert_string_equal(u.host, "::1");
    assert_int_equal(u.port, 6380);
    assert_string_equal(u.user, "al@ice");
    assert_string_equal(u.password, "p:ss@w");
    knut_net_redis_url_reset(&u);

    assert_int_equal(knut_net_redis_url_parse(&u, "redis://:only-pass@10.0.0.1:1", &err), KNUT_OK);
    assert_null(u.user);
    assert_string_equal(u.password, "only-pass");
    knut_net_redis_url_reset(&u);
}

static void test_errors_hide_secret(void **state)
{
    (void)state;
    static const char *bad[] = {
        "http://h:1",        "redis://:hunter2-secret@",     "redis://:hunter2-secret@h:0",
        "redis://:hunter2-secret@h:99999", "redis://:hunter2-secret@h/0", "redis://:hunter2-secret@[::1",
        "redis://:hunter2%zzsecret@h",   "redis://:hunter2%00secret@h", "redis://:hunter2-secret@h:x",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        knut_net_redis_url u;
        knut_error err = KNUT_ERROR_INIT;
        assert_int_equal(knut_net_redis_url_parse(&u, bad[i], &err), KNUT_EINVAL);
        assert_true(err.message[0] != '\0');
        assert_null(strstr(err.message, "hunter2"));
        assert_null(u.host); /* nothing left to free */
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forms),
        cmocka_unit_test(test_errors_hide_secret),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
