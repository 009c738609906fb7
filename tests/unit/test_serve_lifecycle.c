/*
 * knut_serve_new and knut_serve_free without a knut_serve_start in
 * between, on every error path the CLI takes: made and freed, a start
 * that fails (a bad --metrics-addr, refused after the gRPC port is
 * bound), a bad TLS file and a bad serve.yml (refused before). gRPC used
 * to abort ("assertion failed: ShutdownCalled() || listeners_.empty()")
 * when a server holding a bound port was destroyed unstarted; the port
 * must be free again afterwards.
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

#include "knut/serve.h"

static void test_new_then_free(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    knut_serve *s = NULL;
    assert_int_equal(knut_serve_new(&s, NULL, &err), KNUT_OK);
    int port = knut_serve_port(s);
    assert_true(port > 0);
    knut_serve_free(s);
    /* the port was released: a new server binds it */
    char addr[32];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", port);
    knut_serve_options o = KNUT_SERVE_OPTIONS_INIT;
    o.addr = addr;
    assert_int_equal(knut_serve_new(&s, &o, &err), KNUT_OK);
    assert_int_equal(knut_serve_port(s), port);
    knut_serve_shutdown(s, 100); /* shut down unstarted, then freed */
    knut_serve_free(s);
}

static void test_failed_start_then_free(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    knut_serve *s = NULL;
    knut_serve_options o = KNUT_SERVE_OPTIONS_INIT;
    o.metrics_addr = "999.1.1.1:99";
    assert_int_equal(knut_serve_new(&s, &o, &err), KNUT_OK);
    assert_int_not_equal(knut_serve_start(s, &err), KNUT_OK);
    assert_non_null(strstr(err.message, "999.1.1.1:99"));
    knut_serve_free(s);
}

static void test_bad_files_refused_before_binding(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    knut_serve *s = NULL;
    knut_serve_options o = KNUT_SERVE_OPTIONS_INIT;
    knut_net_grpc_tls tls = {"/nonexistent/cert.pem", "/nonexistent/key.pem", NULL, NULL};
    o.tls = &tls;
    assert_int_not_equal(knut_serve_new(&s, &o, &err), KNUT_OK);
    assert_null(s);
    assert_non_null(strstr(err.message, "/nonexistent/cert.pem"));

    char cfg[] = "/tmp/knut-serve-lifecycle-XXXXXX";
    int fd = mkstemp(cfg);
    assert_true(fd >= 0);
    static const char text[] = "veiws: {}\n";
    assert_int_equal(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
    close(fd);
    o = (knut_serve_options)KNUT_SERVE_OPTIONS_INIT;
    o.config_file = cfg;
    assert_int_equal(knut_serve_new(&s, &o, &err), KNUT_EINVAL);
    assert_null(s);
    assert_non_null(strstr(err.message, cfg));
    assert_non_null(strstr(err.message, "unknown key 'veiws'"));
    unlink(cfg);

    o = (knut_serve_options)KNUT_SERVE_OPTIONS_INIT;
    o.addr = "192.0.2.1:0"; /* TEST-NET: no address of this machine */
    assert_int_equal(knut_serve_new(&s, &o, &err), KNUT_EIO);
    assert_null(s);
    assert_non_null(strstr(err.message, "192.0.2.1:0"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_new_then_free),
        cmocka_unit_test(test_failed_start_then_free),
        cmocka_unit_test(test_bad_files_refused_before_binding),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
