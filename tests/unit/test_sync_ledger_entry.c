/*
 * The ledger-entry codec shared by the file and Valkey ledgers: entries
 * round-trip (NULL hash/reason, quotes, non-ASCII, 64-bit numbers), the
 * exact text of today's ledgers still loads, every bad key is refused with
 * a message naming the ledger and the key (type, range, missing, unknown,
 * duplicate), the size cap holds both ways, the encoder refuses what the
 * decoder would refuse, and a file ledger loads a document written before
 * the codec (jansson's indented layout) and refuses a bad one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "sync/sync_int.h"

#define WHERE "ledger /x/l.json, entry 7"

static void roundtrip(const sync_entry *in)
{
    knut_buf b = KNUT_BUF_INIT;
    knut_error err = KNUT_ERROR_INIT;
    sync_entry out;
    assert_int_equal(knut_sync__entry_encode(&b, in, WHERE, &err), KNUT_OK);
    assert_int_equal(knut_sync__entry_decode(b.data, b.len, WHERE, &out, &err), KNUT_OK);
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
    knut_sync__entry_reset(&out);
    knut_buf_reset(&b);
}

static void test_roundtrip(void **state)
{
    (void)state;
    sync_entry done = {"people", "/drops/people/part-0001.parquet",
                       "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", "done",
                       NULL, 1234, INT64_C(1796064630050896231), 7, 10, NULL};
    roundtrip(&done);
    sync_entry failed = {"t\"x", "/d/\xc3\xa9t\xc3\xa9 \"q\"\\n.csv", NULL, "failed",
                         "row 3, column 'id': \"x\" is not an integer", 0, -5, INT64_MAX, 0, NULL};
    roundtrip(&failed);
    sync_entry removed = {"t", "p", "", SYNC_STATUS_REMOVED, NULL, INT64_MAX, INT64_MIN, 0,
                          INT64_MAX, NULL};
    roundtrip(&removed);
    /* a tombstone as full snapshots write it: no hash, size and mtime -1 */
    sync_entry tomb = {"t", "p", NULL, SYNC_STATUS_REMOVED, NULL, -1, -1, 5, 0, NULL};
    roundtrip(&tomb);
}

/* Text as the ledgers wrote it before the codec: it must keep loading. */
static void test_existing_format(void **state)
{
    (void)state;
    static const char *const old[] = {
        "{\"table\":\"people\",\"path\":\"a/b.csv\",\"size\":10,\"mtime\":20,\"hash\":\"00ff\","
        "\"status\":\"done\",\"reason\":null,\"round\":3,\"rows\":4}",
        "{\"table\": \"t\", \"path\": \"/p\", \"size\": 0, \"mtime\": 0, \"hash\": null, "
        "\"status\": \"failed\", \"reason\": \"bad\", \"round\": 1, \"rows\": 0}",
        "{\"table\": \"t\", \"path\": \"/p\", \"size\": 1, \"mtime\": 2, "
        "\"hash\": \"0123456789abcdef\", \"status\": \"removed\", \"reason\": null, "
        "\"round\": 9, \"rows\": 1}", /* a pre-SHA-256 hash */
    };
    for (size_t i = 0; i < sizeof old / sizeof old[0]; i++) {
        sync_entry e;
        knut_error err = KNUT_ERROR_INIT;
        if (knut_sync__entry_decode(old[i], strlen(old[i]), WHERE, &e, &err) != KNUT_OK)
            fail_msg("%zu: %s", i, err.message);
        knut_sync__entry_reset(&e);
    }
    /* what the encoder writes is that same format, key for key */
    sync_entry e = {"people", "a/b.csv", "00ff", "done", NULL, 10, 20, 3, 4, NULL};
    knut_buf b = KNUT_BUF_INIT;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_sync__entry_encode(&b, &e, WHERE, &err), KNUT_OK);
    assert_string_equal(b.data, old[0]);
    knut_buf_reset(&b);
}

#define GOOD_HEAD "\"table\": \"t\", \"path\": \"p\", \"status\": \"done\""
#define GOOD_NUMS "\"size\": 1, \"mtime\": 2, \"round\": 3, \"rows\": 4"
#define GOOD_NULLS "\"hash\": null, \"reason\": null"

static void test_refused(void **state)
{
    (void)state;
    static const struct {
        const char *text, *key; /* key: what the message must name */
    } bad[] = {
        {"not json", "not JSON"},
        {"[1, 2]", "not a JSON object"},
        {"{" GOOD_HEAD ", " GOOD_NUMS "}", "\"hash\" is missing"},
        {"{\"table\": \"t\", \"path\": \"p\", " GOOD_NUMS ", " GOOD_NULLS "}", "\"status\" is missing"},
        {"{\"table\": \"t\", \"status\": \"done\", " GOOD_NUMS ", " GOOD_NULLS "}", "\"path\" is missing"},
        {"{" GOOD_HEAD ", \"size\": 1, \"mtime\": 2, \"round\": 3, " GOOD_NULLS "}", "\"rows\" is missing"},
        {"{" GOOD_HEAD ", " GOOD_NUMS ", " GOOD_NULLS ", \"extra\": 1}", "\"extra\" is not an entry key"},
        {"{\"table\": 3, \"path\": \"p\", \"status\": \"done\", " GOOD_NUMS ", " GOOD_NULLS "}", "\"table\" must be a string"},
        {"{\"table\": \"\", \"path\": \"p\", \"status\": \"done\", " GOOD_NUMS ", " GOOD_NULLS "}", "\"table\" must be a non-empty"},
        {"{\"table\": \"t\", \"path\": null, \"status\": \"done\", " GOOD_NUMS ", " GOOD_NULLS "}", "\"path\" must be a string"},
        {"{\"table\": \"t\", \"path\": \"a\\u0000b\", \"status\": \"done\", " GOOD_NUMS ", " GOOD_NULLS "}", "not JSON"}, /* jansson refuses \u0000 */
        {"{\"table\": \"t\", \"path\": \"p\", \"status\": \"finished\", " GOOD_NUMS ", " GOOD_NULLS "}", "\"status\" must be"},
        {"{" GOOD_HEAD ", " GOOD_NUMS ", \"hash\": 12, \"reason\": null}", "\"hash\" must be a string or null"},
        {"{" GOOD_HEAD ", " GOOD_NUMS ", \"hash\": \"ABCD\", \"reason\": null}", "\"hash\" must be null or"},
        {"{" GOOD_HEAD ", " GOOD_NUMS ", \"hash\": \"" "0123456789abcdef0123456789abcdef"
         "0123456789abcdef0123456789abcdef0" "\", \"reason\": null}", "\"hash\" must be null or"},
        {"{" GOOD_HEAD ", " GOOD_NUMS ", \"hash\": null, \"reason\": []}", "\"reason\" must be a string or null"},
        {"{" GOOD_HEAD ", \"size\": \"1\", \"mtime\": 2, \"round\": 3, \"rows\": 4, " GOOD_NULLS "}", "\"size\" must be an integer"},
        {"{" GOOD_HEAD ", \"size\": -1, \"mtime\": 2, \"round\": 3, \"rows\": 4, " GOOD_NULLS "}", "\"size\" must be >= 0"},
        {"{\"table\": \"t\", \"path\": \"p\", \"status\": \"removed\", \"size\": -2, \"mtime\": 2, \"round\": 3, \"rows\": 4, " GOOD_NULLS "}", "\"size\" must be >= 0"},
        {"{" GOOD_HEAD ", \"size\": 1, \"mtime\": 2.5, \"round\": 3, \"rows\": 4, " GOOD_NULLS "}", "\"mtime\" must be an integer"},
        {"{" GOOD_HEAD ", \"size\": 1, \"mtime\": 2, \"round\": -3, \"rows\": 4, " GOOD_NULLS "}", "\"round\" must be >= 0"},
        {"{" GOOD_HEAD ", \"size\": 1, \"mtime\": 2, \"round\": 3, \"rows\": true, " GOOD_NULLS "}", "\"rows\" must be an integer"},
        {"{" GOOD_HEAD ", \"size\": 1, \"mtime\": 2, \"round\": 3, \"rows\": -4, " GOOD_NULLS "}", "\"rows\" must be >= 0"},
        {"{\"table\": \"t\", \"table\": \"u\", \"path\": \"p\", \"status\": \"done\", " GOOD_NUMS ", " GOOD_NULLS "}", "duplicate"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sync_entry e;
        knut_error err = KNUT_ERROR_INIT;
        knut_status st = knut_sync__entry_decode(bad[i].text, strlen(bad[i].text), WHERE, &e, &err);
        if (st != KNUT_EPARSE)
            fail_msg("%zu: status %d for %s", i, st, bad[i].text);
        if (!strstr(err.message, WHERE) || !strstr(err.message, bad[i].key))
            fail_msg("%zu: message '%s' lacks '%s'", i, err.message, bad[i].key);
        assert_null(e.table);
        assert_null(e.path);
    }
    /* the good key set, for contrast */
    const char *ok = "{" GOOD_HEAD ", " GOOD_NUMS ", " GOOD_NULLS "}";
    sync_entry e;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_sync__entry_decode(ok, strlen(ok), WHERE, &e, &err), KNUT_OK);
    knut_sync__entry_reset(&e);
}

static void test_oversize(void **state)
{
    (void)state;
    size_t n = SYNC_ENTRY_MAX + 1;
    char *big = malloc(n + 1);
    assert_non_null(big);
    memset(big, ' ', n);
    big[n] = '\0';
    sync_entry e;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_sync__entry_decode(big, n, WHERE, &e, &err), KNUT_ETOOBIG);
    assert_non_null(strstr(err.message, WHERE));

    /* a reason past the cap is refused before anything is written */
    memset(big, 'r', n);
    sync_entry r = {"t", "p", NULL, "failed", big, 0, 0, 1, 0, NULL};
    knut_buf b = KNUT_BUF_INIT;
    assert_int_equal(knut_sync__entry_encode(&b, &r, WHERE, &err), KNUT_ETOOBIG);
    assert_int_equal(b.len, 0);
    /* just under the text cap, but quotes to escape push the JSON past it */
    memset(big, '"', SYNC_ENTRY_MAX - 20);
    big[SYNC_ENTRY_MAX - 20] = '\0';
    assert_int_equal(knut_sync__entry_encode(&b, &r, WHERE, &err), KNUT_ETOOBIG);
    knut_buf_reset(&b);
    free(big);
}

/* The encoder holds to the decoder's rules: what is written loads. */
static void test_encode_refused(void **state)
{
    (void)state;
    const sync_entry bad[] = {
        {"t", "p", NULL, "pending", NULL, 0, 0, 1, 0, NULL},
        {"t", "", NULL, "done", NULL, 0, 0, 1, 0, NULL},
        {NULL, "p", NULL, "done", NULL, 0, 0, 1, 0, NULL},
        {"t", "p", "xyz", "done", NULL, 0, 0, 1, 0, NULL},
        {"t", "p", NULL, "done", NULL, -1, 0, 1, 0, NULL},
        {"t", "/d/\xff\xfe.csv", NULL, "done", NULL, 0, 0, 1, 0, NULL}, /* not UTF-8 */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        knut_buf b = KNUT_BUF_INIT;
        knut_error err = KNUT_ERROR_INIT;
        knut_status st = knut_sync__entry_encode(&b, &bad[i], WHERE, &err);
        if (st == KNUT_OK)
            fail_msg("%zu: encoded", i);
        assert_non_null(strstr(err.message, WHERE));
        knut_buf_reset(&b);
    }
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* A file ledger as the old writer laid it out (jansson, JSON_INDENT(1)). */
static void test_file_ledger_compat(void **state)
{
    (void)state;
    char dir[] = "/tmp/knut-ledger-entry-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char file[128];
    snprintf(file, sizeof file, "%s/ledger.json", dir);
    write_file(file, "{\n \"version\": 1,\n \"entries\": [\n  {\n   \"table\": \"people\",\n"
                     "   \"path\": \"/d/a.csv\",\n   \"size\": 10,\n   \"mtime\": 20,\n"
                     "   \"hash\": \"ab12\",\n   \"status\": \"done\",\n   \"reason\": null,\n"
                     "   \"round\": 3,\n   \"rows\": 4\n  }\n ]\n}");
    knut_error err = KNUT_ERROR_INIT;
    sync_ledger l = {0};
    assert_int_equal(knut_sync__ledger_open_file(&l, file, &err), KNUT_OK);
    sync_entry *got = knut_sync__ledger_find(&l, "people", "/d/a.csv");
    assert_non_null(got);
    assert_string_equal(got->hash, "ab12");
    assert_int_equal(got->rows, 4);
    /* rewritten by the codec, it loads back the same */
    sync_entry add = {"people", "/d/b.csv", NULL, "failed", "row 1: bad", 5, 6, 4, 0, NULL};
    assert_int_equal(knut_sync__ledger_write(&l, NULL, &add, 1, &err), KNUT_OK);
    knut_sync__ledger_reset(&l);
    assert_int_equal(knut_sync__ledger_open_file(&l, file, &err), KNUT_OK);
    assert_int_equal(l.n, 2);
    assert_string_equal(knut_sync__ledger_find(&l, "people", "/d/b.csv")->reason, "row 1: bad");
    knut_sync__ledger_reset(&l);

    /* a bad entry names the ledger file, the entry and the key */
    write_file(file, "{\"version\": 1, \"entries\": [{\"table\": \"t\", \"path\": \"p\", "
                     "\"status\": \"done\", \"size\": 1, \"mtime\": 2, \"round\": 3, "
                     "\"rows\": \"4\", \"hash\": null, \"reason\": null}]}");
    assert_int_equal(knut_sync__ledger_open_file(&l, file, &err), KNUT_EPARSE);
    assert_non_null(strstr(err.message, file));
    assert_non_null(strstr(err.message, "entry 0"));
    assert_non_null(strstr(err.message, "\"rows\""));
    knut_sync__ledger_reset(&l);
    /* and the document itself is checked */
    static const char *const docs[] = {"{\"version\": 2, \"entries\": []}", "{\"entries\": []}",
                                       "{\"version\": 1, \"entries\": {}}",
                                       "{\"version\": 1, \"entries\": [], \"x\": 0}", "[]"};
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
        write_file(file, docs[i]);
        assert_int_equal(knut_sync__ledger_open_file(&l, file, &err), KNUT_EPARSE);
        assert_non_null(strstr(err.message, file));
        knut_sync__ledger_reset(&l);
    }
    /* no file yet: an empty ledger (the first run) */
    unlink(file);
    assert_int_equal(knut_sync__ledger_open_file(&l, file, &err), KNUT_OK);
    assert_int_equal(l.n, 0);
    knut_sync__ledger_reset(&l);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_existing_format),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_oversize),
        cmocka_unit_test(test_encode_refused),
        cmocka_unit_test(test_file_ledger_compat),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
