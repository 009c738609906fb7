/*
 * The shared ledger's pure parts: an entry encoded as JSON decodes back
 * to the same entry (NULL hash/reason, quotes, non-ASCII, 64-bit numbers),
 * bad values are refused with a reason (not JSON, wrong types, missing
 * keys, over the size cap), the hash field is table NUL path, and the
 * redis:// URL parser takes user/password/IPv6/port and refuses the rest
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

static void roundtrip(const sync_entry *in)
{
    knut_buf b = KNUT_BUF_INIT;
    knut_error err = KNUT_ERROR_INIT;
    sync_entry out;
    assert_int_equal(knut_sync__vk_entry_encode(&b, in), KNUT_OK);
    assert_int_equal(knut_sync__vk_entry_decode(b.data, b.len, &out, &err), KNUT_OK);
    assert_string_equal(out.table, in->table);
    assert_string_equal(out.path, in->path);
    assert_string_equal(out.status, in->status);
    if (in->hash)
        assert_string_equal(out.hash, in->hash);
    else
        assert_null(out.hash);
    if (in->reason)
        assert_string_equal(out.reason, in->reason);
    else
        assert_null(out.reason);
    assert_true(out.size == in->size && out.mtime_ns == in->mtime_ns);
    assert_true(out.round == in->round && out.rows == in->rows);
    knut_sync__vk_entry_reset(&out);
    knut_buf_reset(&b);
}

static void test_entry_roundtrip(void **state)
{
    (void)state;
    sync_entry done = {"people", "/drops/people/part-0001.parquet", "ab12cd", "done", NULL,
                       1234, INT64_C(1796064630050896231), 7, 10};
    roundtrip(&done);
    sync_entry failed = {"t\"x", "/d/\xc3\xa9t\xc3\xa9 \"q\"\\n.csv", NULL, "failed",
                         "row 3, column 'id': \"x\" is not an integer", -1, 0, INT64_MAX, 0};
    roundtrip(&failed);
}

static void test_entry_refused(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "not json",
        "[1, 2]",
        "{\"table\": \"t\", \"path\": \"p\"}",                          /* no status */
        "{\"table\": \"t\", \"path\": 3, \"status\": \"done\"}",        /* path not a string */
        "{\"table\": \"t\", \"path\": \"p\", \"status\": \"done\", \"rows\": \"9\"}",
        "{\"table\": \"t\", \"table\": \"u\", \"path\": \"p\", \"status\": \"done\"}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sync_entry e;
        knut_error err = KNUT_ERROR_INIT;
        assert_int_equal(knut_sync__vk_entry_decode(bad[i], strlen(bad[i]), &e, &err),
                         KNUT_EPARSE);
        assert_true(err.message[0] != '\0');
        assert_null(e.table);
    }
    size_t n = VK_MAX_ENTRY + 1;
    char *big = malloc(n);
    assert_non_null(big);
    memset(big, ' ', n);
    sync_entry e;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_sync__vk_entry_decode(big, n, &e, &err), KNUT_ETOOBIG);
    free(big);
}

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
        cmocka_unit_test(test_entry_roundtrip),
        cmocka_unit_test(test_entry_refused),
        cmocka_unit_test(test_field),
        cmocka_unit_test(test_url),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
