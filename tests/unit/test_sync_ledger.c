/*
 * The sync ledger's in-memory index: many entries found, replaced in
 * place, forgotten (the last entry moves into the hole and stays
 * findable), the JSON file backend round-trips a SHA-256 hash, the
 * embedded store's ledger table reads long names, paths and reasons back
 * whole, and a file-ledger write that fails (ENOSPC: its temp file links
 * to /dev/full) is an error naming the ledger, leaves the old ledger and
 * memory as they were, removes the temp file and closes its descriptor.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "sync/sync_int.h"

#define N_ENTRIES 5000

static void put(sync_ledger *l, const char *table, int i, const char *status)
{
    char path[64];
    snprintf(path, sizeof path, "/drops/%s/part-%05d.parquet", table, i);
    sync_entry e = {(char *)table, path, "ab12", (char *)status, NULL, i, i, 1, i, NULL};
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_sync__ledger_remember(l, &e, 1, &err), KNUT_OK);
}

static sync_entry *get(sync_ledger *l, const char *table, int i)
{
    char path[64];
    snprintf(path, sizeof path, "/drops/%s/part-%05d.parquet", table, i);
    return knut_sync__ledger_find(l, table, path);
}

static void test_index(void **state)
{
    (void)state;
    sync_ledger l = {0};
    for (int i = 0; i < N_ENTRIES; i++) {
        put(&l, "people", i, "done");
        put(&l, "companies", i, "done");
    }
    assert_int_equal(l.n, 2 * N_ENTRIES);
    for (int i = 0; i < N_ENTRIES; i++) {
        sync_entry *e = get(&l, "people", i);
        assert_non_null(e);
        assert_int_equal(e->size, i);
        assert_string_equal(e->table, "people");
    }
    assert_null(get(&l, "people", N_ENTRIES));
    assert_null(knut_sync__ledger_find(&l, "nobody", "/drops/people/part-00001.parquet"));

    put(&l, "people", 7, "failed"); /* replaced, not added */
    assert_int_equal(l.n, 2 * N_ENTRIES);
    assert_string_equal(get(&l, "people", 7)->status, "failed");

    for (int i = 0; i < N_ENTRIES; i += 2)
        knut_sync__ledger_forget(&l, "companies", get(&l, "companies", i)->path);
    assert_int_equal(l.n, 2 * N_ENTRIES - N_ENTRIES / 2);
    for (int i = 0; i < N_ENTRIES; i++) {
        assert_true((get(&l, "companies", i) == NULL) == (i % 2 == 0));
        assert_non_null(get(&l, "people", i));
    }
    knut_sync__ledger_forget(&l, "companies", "/not/there"); /* harmless */
    knut_sync__ledger_reset(&l);
}

static void test_file_roundtrip(void **state)
{
    (void)state;
    char dir[] = "/tmp/knut-ledger-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char file[128];
    snprintf(file, sizeof file, "%s/ledger.json", dir);
    const char *sha = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
    knut_error err = KNUT_ERROR_INIT;
    sync_ledger l = {0};
    assert_int_equal(knut_sync__ledger_open_file(&l, file, &err), KNUT_OK);
    sync_entry e = {"people", "/d/a.csv", (char *)sha, "done", NULL, 10, 20, 3, 4, NULL};
    assert_int_equal(knut_sync__ledger_write(&l, NULL, &e, 1, &err), KNUT_OK);
    assert_int_equal(knut_sync__ledger_remember(&l, &e, 1, &err), KNUT_OK);
    knut_sync__ledger_reset(&l);

    assert_int_equal(knut_sync__ledger_open_file(&l, file, &err), KNUT_OK);
    sync_entry *got = knut_sync__ledger_find(&l, "people", "/d/a.csv");
    assert_non_null(got);
    assert_string_equal(got->hash, sha);
    assert_int_equal(got->rows, 4);
    assert_int_equal(knut_sync__ledger_max_round(&l), 3);
    knut_sync__ledger_reset(&l);
    unlink(file);
    rmdir(dir);
}

/* Text far past any buffer a row might once have been read into. */
static char *long_text(char fill, size_t n)
{
    char *s = malloc(n + 1);
    assert_non_null(s);
    memset(s, fill, n);
    s[0] = '/';
    s[n] = '\0';
    return s;
}

static void test_store_reads_long_rows_whole(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    knut_duck_db *db = NULL;
    knut_duck_conn *conn = NULL;
    assert_int_equal(knut_duck_db_open(&db, NULL, NULL, 0, &err), KNUT_OK);
    assert_int_equal(knut_duck_conn_open(&conn, db, &err), KNUT_OK);
    char *table = long_text('t', 3000), *path = long_text('p', 20000);
    char *reason = long_text('r', 9000);
    sync_ledger l = {0};
    assert_int_equal(knut_sync__ledger_open_store(&l, conn, &err), KNUT_OK);
    sync_entry e = {.table = table, .path = path, .status = "failed", .reason = reason,
                    .size = 1, .mtime_ns = 2, .round = 3};
    assert_int_equal(knut_sync__ledger_record(&l, &e, 1, &err), KNUT_OK);
    knut_sync__ledger_reset(&l);

    assert_int_equal(knut_sync__ledger_open_store(&l, conn, &err), KNUT_OK);
    assert_int_equal(l.n, 1);
    sync_entry *got = knut_sync__ledger_find(&l, table, path);
    assert_non_null(got);
    assert_string_equal(got->table, table);
    assert_string_equal(got->path, path);
    assert_string_equal(got->reason, reason);
    assert_null(got->hash);
    assert_int_equal(got->round, 3);
    knut_sync__ledger_reset(&l);
    free(table);
    free(path);
    free(reason);
    knut_duck_conn_close(conn);
    knut_duck_db_close(db);
}

static void test_file_write_fails(void **state)
{
    (void)state;
    char dir[] = "/tmp/knut-ledger-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char file[128], tmp[140];
    snprintf(file, sizeof file, "%s/ledger.json", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", file);
    knut_error err = KNUT_ERROR_INIT;
    sync_ledger l = {0};
    knut_buf before = KNUT_BUF_INIT, after = KNUT_BUF_INIT;
    assert_int_equal(knut_sync__ledger_open_file(&l, file, &err), KNUT_OK);
    sync_entry a = {"people", "/d/a.csv", NULL, "done", NULL, 10, 20, 1, 4, NULL};
    assert_int_equal(knut_sync__ledger_record(&l, &a, 1, &err), KNUT_OK);
    assert_int_equal(knut_file_read(file, 1 << 20, &before, &err), KNUT_OK);

    assert_int_equal(symlink("/dev/full", tmp), 0);
    sync_entry b = {"people", "/d/b.csv", NULL, "done", NULL, 11, 21, 2, 5, NULL};
    assert_int_equal(knut_sync__ledger_record(&l, &b, 1, &err), KNUT_EIO);
    assert_non_null(strstr(err.message, "ledger "));
    assert_non_null(strstr(err.message, "ledger.json.tmp: write: No space left on device"));
    assert_int_equal(access(tmp, F_OK), -1);
    assert_null(knut_sync__ledger_find(&l, "people", "/d/b.csv")); /* memory unchanged */
    assert_int_equal(knut_file_read(file, 1 << 20, &after, &err), KNUT_OK);
    assert_int_equal(after.len, before.len);
    assert_memory_equal(after.data, before.data, before.len);

    /* the next write, with the device fine again, records both */
    assert_int_equal(knut_sync__ledger_record(&l, &b, 1, &err), KNUT_OK);
    knut_sync__ledger_reset(&l);
    assert_int_equal(knut_sync__ledger_open_file(&l, file, &err), KNUT_OK);
    assert_non_null(knut_sync__ledger_find(&l, "people", "/d/a.csv"));
    assert_non_null(knut_sync__ledger_find(&l, "people", "/d/b.csv"));
    knut_sync__ledger_reset(&l);
    knut_buf_reset(&before);
    knut_buf_reset(&after);
    unlink(file);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_index),
        cmocka_unit_test(test_file_roundtrip),
        cmocka_unit_test(test_store_reads_long_rows_whole),
        cmocka_unit_test(test_file_write_fails),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
