/*
 * Where the ledger lives (ledger_falkor.c): `ledger: falkordb` puts the
 * shared ledger on the FalkorDB server, --ledger-url naming the same host
 * and port does too (commits then go in the graph's MULTI/EXEC), another
 * server is a plain shared ledger, and the mistakes are refused without
 * quoting a URL (it may hold a password). The commits themselves need a
 * server: tests/integration/test_sync_exactly_once.py.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "sync/sync_int.h"

static knut_status where(const char *falkor, const char *ledger_url, const char *ledger,
                         const char **url, int *in_falkor, knut_error *err)
{
    knut_sync_options o = KNUT_SYNC_OPTIONS_INIT;
    o.falkordb_url = falkor;
    o.ledger_url = ledger_url;
    return knut_sync__ledger_url(&o, ledger, url, in_falkor, err);
}

static void test_ledger_falkordb_option(void **state)
{
    (void)state;
    const char *url = NULL;
    int in = 0;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(where("redis://:pw@g:6379", NULL, "falkordb", &url, &in, &err), KNUT_OK);
    assert_string_equal(url, "redis://:pw@g:6379");
    assert_int_equal(in, 1);
    /* a ledger file is no shared ledger */
    assert_int_equal(where("redis://g:6379", NULL, "/x/ledger.json", &url, &in, &err), KNUT_OK);
    assert_null(url);
    assert_int_equal(in, 0);
    assert_int_equal(where(NULL, NULL, "falkordb", &url, &in, &err), KNUT_EINVAL);
    assert_non_null(strstr(err.message, "--falkordb"));
    assert_int_equal(where("redis://g", "redis://v", "falkordb", &url, &in, &err), KNUT_EINVAL);
}

static void test_ledger_url_same_server(void **state)
{
    (void)state;
    const char *url = NULL;
    int in = 0;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(where("redis://G:6379", "redis://:secret@g", NULL, &url, &in, &err), KNUT_OK);
    assert_string_equal(url, "redis://:secret@g");
    assert_int_equal(in, 1); /* host case-insensitive, 6379 by default */
    assert_int_equal(where("redis://g:6379", "redis://g:6380", NULL, &url, &in, &err), KNUT_OK);
    assert_int_equal(in, 0);
    assert_int_equal(where("redis://g:6379", "redis://h:6379", NULL, &url, &in, &err), KNUT_OK);
    assert_int_equal(in, 0);
    assert_int_equal(where(NULL, "redis://g", NULL, &url, &in, &err), KNUT_OK);
    assert_int_equal(in, 0);
    assert_int_equal(where("redis://g", "http://:hunter2@g", NULL, &url, &in, &err), KNUT_EINVAL);
    assert_null(strstr(err.message, "hunter2"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ledger_falkordb_option),
        cmocka_unit_test(test_ledger_url_same_server),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
