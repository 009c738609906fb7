/*
 * Airflow asset events, the parts that need no Airflow: the asset URI
 * rules of the `asset:` key (as Airflow sanitises URIs), the config key,
 * and the core HTTP client's argument checks, escaping and error messages
 * (never the credentials). The real exchanges are in
 * tests/integration/test_sync_airflow.py.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "knut/core.h"
#include "knut/net.h"
#include "knut/sync.h"
#include "sync/sync_int.h"

static int uri_ok(const char *uri)
{
    char why[256];
    return knut_sync__asset_uri_check(uri, why, sizeof why) == 0;
}

static void test_uri_rules(void **state)
{
    (void)state;
    assert_true(uri_ok("knut://graph/people"));
    assert_true(uri_ok("s3://bucket/key/part"));
    assert_true(uri_ok("x-lake://hr/employment?b=2&a=1#frag/")); /* x-*: verbatim */
    assert_true(uri_ok("urn:knut:people"));
    assert_true(uri_ok("knut://graph/"));
    assert_false(uri_ok(""));
    assert_false(uri_ok("people"));              /* no scheme */
    assert_false(uri_ok("Knut://graph/people")); /* Airflow lower-cases it */
    assert_false(uri_ok("airflow://graph/people"));
    assert_false(uri_ok("knut://graph/people/"));
    assert_false(uri_ok("knut://graph"));        /* stored as knut://graph/ */
    assert_false(uri_ok("knut://user:pw@graph/people"));
    assert_false(uri_ok("knut://graph/people?b=1&a=2"));
    assert_false(uri_ok("knut://graph/people#x"));
    assert_false(uri_ok("knut://graph/peo ple"));
    assert_false(uri_ok("knut://graph/p\xc3\xa9ople"));
    char long_uri[1600];
    memset(long_uri, 'a', sizeof long_uri - 1);
    memcpy(long_uri, "knut://g/", 9);
    long_uri[sizeof long_uri - 1] = 0;
    assert_false(uri_ok(long_uri));
    char why[256];
    assert_int_equal(knut_sync__asset_uri_check("airflow://x/y", why, sizeof why), -1);
    assert_non_null(strstr(why, "reserved"));
}

static const char cfg_text[] = "store: g.duckdb\n"
                               "tables:\n"
                               "  people:\n"
                               "    path: people.csv\n"
                               "    asset: %s\n"
                               "    vertices:\n"
                               "      - labels: [Person]\n"
                               "        keys: [id]\n";

static knut_status parse(const char *asset, knut_sync_config **cfg, knut_error *err)
{
    char text[512];
    snprintf(text, sizeof text, cfg_text, asset);
    return knut_sync_config_parse(cfg, text, strlen(text), "sync.yml", "/tmp", err);
}

static void test_config_asset_key(void **state)
{
    (void)state;
    knut_sync_config *cfg = NULL;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(parse("x-lake://hr/people", &cfg, &err), KNUT_OK);
    assert_string_equal(cfg->tables[0].asset, "x-lake://hr/people");
    knut_sync_config_free(cfg);
    assert_int_equal(parse("airflow://hr/people", &cfg, &err), KNUT_EINVAL);
    assert_null(cfg);
    assert_non_null(strstr(err.message, "sync.yml:5:"));
    assert_non_null(strstr(err.message, "table 'people'"));
    assert_non_null(strstr(err.message, "'asset'"));
    /* no asset: key: NULL, the default URI is made at open */
    const char *plain = "tables:\n  t:\n    path: x.csv\n    vertices: [{labels: [A], keys: [id]}]\n";
    assert_int_equal(knut_sync_config_parse(&cfg, plain, strlen(plain), "p.yml", "/tmp", &err),
                     KNUT_OK);
    assert_null(cfg->tables[0].asset);
    knut_sync_config_free(cfg);
}

static void test_http_escape(void **state)
{
    (void)state;
    char *e = knut_net_http_escape("knut://graph/peo ple_%~");
    assert_string_equal(e, "knut%3A%2F%2Fgraph%2Fpeo%20ple_%25~");
    free(e);
}

static void test_http_client_errors_hide_credentials(void **state)
{
    (void)state;
    knut_net_http_client *c = NULL;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_net_http_client_new(&c, "ftp://h/x", NULL, &err), KNUT_EINVAL);
    assert_null(c);
    assert_int_equal(knut_net_http_client_new(&c, "not a url", NULL, &err), KNUT_EINVAL);
    /* port 1 on loopback: nothing listens, the connect fails at once */
    knut_net_http_options o = KNUT_NET_HTTP_OPTIONS_INIT;
    o.connect_timeout_ms = 2000;
    o.timeout_ms = 3000;
    assert_int_equal(knut_net_http_client_new(&c, "http://usr:s3cr3t@127.0.0.1:1/base/", &o, &err),
                     KNUT_OK);
    assert_string_equal(knut_net_http_client_peer(c), "http://127.0.0.1:1");
    assert_int_equal(knut_net_http_client_set_bearer(c, "tok\r\nX: y", &err), KNUT_EINVAL);
    assert_int_equal(knut_net_http_client_set_bearer(c, "t0ken-secret", &err), KNUT_OK);
    knut_net_http_response r = KNUT_NET_HTTP_RESPONSE_INIT;
    assert_int_equal(knut_net_http_client_request(c, "GET", "/api/v2/version?q=s3cr3t", NULL, NULL, 0,
                                              &r, &err),
                     KNUT_EPEER);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(err.message, "http://127.0.0.1:1: GET /api/v2/version"));
    assert_null(strstr(err.message, "s3cr3t"));
    assert_null(strstr(err.message, "t0ken-secret"));
    knut_net_http_response_reset(&r);
    knut_net_http_client_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_uri_rules),
        cmocka_unit_test(test_config_asset_key),
        cmocka_unit_test(test_http_escape),
        cmocka_unit_test(test_http_client_errors_hide_credentials),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
