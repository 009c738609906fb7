/*
 * sc:// URL parsing (src/spark/url.c): the accepted forms with their
 * defaults and percent-decoding, and errors for every malformed part,
 * none of them quoting the token.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "knut/spark.h"
#include "spark/spark_int.h"

static void test_forms(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    knut_spark_url u;
    assert_int_equal(knut_spark_url_parse(&u, "sc://localhost", &err), KNUT_OK);
    assert_string_equal(u.host, "localhost");
    assert_int_equal(u.port, KNUT_SPARK_DEFAULT_PORT);
    assert_null(u.token);
    assert_int_equal(u.use_ssl, 0);
    knut_spark_url_reset(&u);

    assert_int_equal(knut_spark_url_parse(&u, "sc://10.0.0.1:15003/", &err), KNUT_OK);
    assert_string_equal(u.host, "10.0.0.1");
    assert_int_equal(u.port, 15003);
    knut_spark_url_reset(&u);

    assert_int_equal(knut_spark_url_parse(
                         &u,
                         "sc://[::1]:1/;token=a%2Fb;use_ssl=true;user_id=al%20ice;"
                         "user_agent=my_app;session_id=0b9c2a7e-1111-4a2b-8c3d-1234567890ab;"
                         "grpc_max_message_size=1048576;",
                         &err),
                     KNUT_OK);
    assert_string_equal(u.host, "::1");
    assert_int_equal(u.port, 1);
    assert_string_equal(u.token, "a/b");
    assert_int_equal(u.use_ssl, 1);
    assert_string_equal(u.user_id, "al ice");
    assert_string_equal(u.user_agent, "my_app");
    assert_string_equal(u.session_id, "0b9c2a7e-1111-4a2b-8c3d-1234567890ab");
    assert_int_equal(u.max_message, 1048576);
    knut_spark_url_reset(&u);
    knut_spark_url_reset(&u); /* idempotent */
}

static void test_errors(void **state)
{
    (void)state;
    static const struct {
        const char *url, *words;
    } bad[] = {
        {"http://h:1/", "expected sc://"},
        {"sc://", "no host"},
        {"sc://:1/", "no host"},
        {"sc://h:0/", "port"},
        {"sc://h:65536/", "port"},
        {"sc://h:12x/", "port"},
        {"sc://h:/", "port"},
        {"sc://h/path", "path must be empty"},
        {"sc://u:hunter2secret@h/", "credentials go in ;token"},
        {"sc://h;token=hunter2secret", "parameters start after the path"},
        {"sc://h/;tokn=hunter2secret", "unknown parameter 'tokn'"},
        {"sc://h/;token=hunter2secret;token=hunter2secret", "given twice"},
        {"sc://h/;token=", "'token' is empty"},
        {"sc://h/;token=hunter2%zzsecret", "bad %XX escape"},
        {"sc://h/;token=hunter2%00secret", "bad %XX escape"},
        {"sc://h/;hunter2secret", "name=value"},
        {"sc://h/;use_ssl=yes", "true or false"},
        {"sc://h/;session_id=123", "UUID"},
        {"sc://h/;grpc_max_message_size=12", "byte count"},
        {"sc://h/;user_agent=a%0Ab", "printable ASCII"},
        {"sc://[::1/", "IPv6"},
        {"sc://h%41/", "host"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        knut_spark_url u;
        knut_error err = KNUT_ERROR_INIT;
        assert_int_equal(knut_spark_url_parse(&u, bad[i].url, &err), KNUT_EINVAL);
        if (!strstr(err.message, bad[i].words))
            fail_msg("%s: '%s' lacks '%s'", bad[i].url, err.message, bad[i].words);
        assert_null(strstr(err.message, "hunter2"));
        knut_spark_url_reset(&u);
    }
}

static void test_uuid(void **state)
{
    (void)state;
    char a[37], b[37];
    assert_int_equal(knut_spark__uuid(a, NULL), KNUT_OK);
    assert_int_equal(knut_spark__uuid(b, NULL), KNUT_OK);
    assert_true(knut_spark__is_uuid(a));
    assert_string_not_equal(a, b);
    assert_int_equal(a[14], '4'); /* version 4 */
    assert_false(knut_spark__is_uuid("0b9c2a7e-1111-4a2b-8c3d-1234567890a"));
    assert_false(knut_spark__is_uuid("0b9c2a7e_1111-4a2b-8c3d-1234567890ab"));
}

static void test_session_refuses_plaintext_token(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    knut_spark_session *s = NULL;
    assert_int_equal(knut_spark_session_new(&s, "sc://h:1/;token=hunter2secret", NULL, &err),
                     KNUT_EINVAL);
    assert_null(s);
    assert_non_null(strstr(err.message, "use_ssl=true"));
    assert_null(strstr(err.message, "hunter2"));
    knut_spark_options o = KNUT_SPARK_OPTIONS_INIT;
    o.allow_insecure_token = 1;
    assert_int_equal(knut_spark_session_new(&s, "sc://h:1/;token=hunter2secret", &o, &err),
                     KNUT_OK);
    assert_string_equal(knut_spark_session_peer(s), "sc://h:1");
    assert_true(knut_spark__is_uuid(knut_spark_session_id(s)));
    knut_spark_session_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forms),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_uuid),
        cmocka_unit_test(test_session_refuses_plaintext_token),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
