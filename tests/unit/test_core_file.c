/*
 * knut_file_read: a file read whole, at and just past its cap (the error
 * names the file and the cap), empty, missing, a directory, a 0 cap, a
 * /proc file that reports no size, and the old contents of out replaced;
 * knut_file_write_atomic: a replace, and its failure paths provoked
 * deterministically (ENOSPC through a temp file that is a symlink to
 * /dev/full, a rename onto a folder): the old file intact, the temp file
 * gone, no descriptor left open.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "knut/core.h"

static char dir[] = "/tmp/knut-file-XXXXXX";

static int setup(void **state)
{
    (void)state;
    return mkdtemp(dir) ? 0 : -1;
}

static void write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

static void test_read_whole(void **state)
{
    (void)state;
    char path[256];
    snprintf(path, sizeof path, "%s/a.txt", dir);
    write_file(path, "hello\0world", 11); /* bytes, NULs included */
    knut_buf b = KNUT_BUF_INIT;
    knut_buf_puts(&b, "old contents go");
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_file_read(path, 11, &b, &err), KNUT_OK);
    assert_int_equal(b.len, 11);
    assert_memory_equal(b.data, "hello\0world", 11);
    assert_int_equal(b.data[11], '\0');
    assert_int_equal(b.max, 11);

    /* one byte under the file: refused, naming the file and the cap */
    assert_int_equal(knut_file_read(path, 10, &b, &err), KNUT_ETOOBIG);
    assert_non_null(strstr(err.message, path));
    assert_non_null(strstr(err.message, "over the 10-byte limit"));
    assert_int_equal(b.len, 0);
    knut_buf_reset(&b);
    unlink(path);
}

static void test_large(void **state)
{
    (void)state;
    char path[256];
    snprintf(path, sizeof path, "%s/big.bin", dir);
    size_t n = (1 << 20) + 12345;
    char *data = malloc(n);
    assert_non_null(data);
    for (size_t i = 0; i < n; i++)
        data[i] = (char)(i * 131);
    write_file(path, data, n);
    knut_buf b = KNUT_BUF_INIT;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_file_read(path, n, &b, &err), KNUT_OK);
    assert_int_equal(b.len, n);
    assert_memory_equal(b.data, data, n);
    assert_int_equal(knut_file_read(path, n - 1, &b, &err), KNUT_ETOOBIG);
    assert_int_equal(knut_file_read(path, 4096, &b, &err), KNUT_ETOOBIG);
    knut_buf_reset(&b);
    free(data);
    unlink(path);
}

static void test_empty_and_errors(void **state)
{
    (void)state;
    char path[256];
    snprintf(path, sizeof path, "%s/empty", dir);
    write_file(path, "", 0);
    knut_buf b = KNUT_BUF_INIT;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_file_read(path, 1, &b, &err), KNUT_OK);
    assert_int_equal(b.len, 0);
    assert_non_null(b.data);
    assert_string_equal(b.data, "");
    unlink(path);

    assert_int_equal(knut_file_read(path, 100, &b, &err), KNUT_ENOTFOUND);
    assert_non_null(strstr(err.message, path));
    assert_non_null(strstr(err.message, "cannot open"));
    assert_int_equal(knut_file_read(dir, 100, &b, &err), KNUT_EINVAL);
    assert_non_null(strstr(err.message, "is a directory"));
    assert_int_equal(knut_file_read("/etc/hostname", 0, &b, &err), KNUT_EINVAL);
    knut_buf_reset(&b);
}

/* /proc files report size 0: the cap still holds on what is read. */
static void test_proc_file(void **state)
{
    (void)state;
    knut_buf b = KNUT_BUF_INIT;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_file_read("/proc/self/status", 1 << 20, &b, &err), KNUT_OK);
    assert_non_null(strstr(b.data, "Name:"));
    assert_int_equal(knut_file_read("/proc/self/status", 8, &b, &err), KNUT_ETOOBIG);
    knut_buf_reset(&b);
}

static int open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    assert_non_null(d);
    while (readdir(d))
        n++;
    closedir(d);
    return n;
}

static void test_write_atomic(void **state)
{
    (void)state;
    char path[256], tmp[300];
    snprintf(path, sizeof path, "%s/w.json", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    knut_buf b = KNUT_BUF_INIT;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_file_write_atomic(path, "old", 3, &err), KNUT_OK);
    assert_int_equal(knut_file_write_atomic(path, "new!", 4, &err), KNUT_OK);
    assert_int_equal(knut_file_read(path, 64, &b, &err), KNUT_OK);
    assert_string_equal(b.data, "new!");
    assert_int_equal(access(tmp, F_OK), -1);

    /* ENOSPC at the write: the temp file is a link to /dev/full (open
     * follows it), so the failure is the same every run, root or not */
    int fds = open_fds();
    assert_int_equal(symlink("/dev/full", tmp), 0);
    assert_int_equal(knut_file_write_atomic(path, "lost", 4, &err), KNUT_EIO);
    assert_non_null(strstr(err.message, "w.json.tmp: write: No space left on device"));
    assert_int_equal(open_fds(), fds);
    struct stat sb;
    assert_int_equal(lstat(tmp, &sb), -1); /* the temp (the link) removed */
    assert_int_equal(knut_file_read(path, 64, &b, &err), KNUT_OK);
    assert_string_equal(b.data, "new!");

    /* a rename that fails (the target is a non-empty folder) */
    char sub[280], inner[300];
    snprintf(sub, sizeof sub, "%s/d.json", dir);
    snprintf(inner, sizeof inner, "%s/x", sub);
    assert_int_equal(mkdir(sub, 0755), 0);
    assert_int_equal(knut_file_write_atomic(inner, "x", 1, &err), KNUT_OK);
    assert_int_equal(knut_file_write_atomic(sub, "y", 1, &err), KNUT_EIO);
    assert_non_null(strstr(err.message, "d.json: rename: "));
    assert_int_equal(open_fds(), fds);
    snprintf(tmp, sizeof tmp, "%s.tmp", sub);
    assert_int_equal(access(tmp, F_OK), -1);

    /* the temp cannot be created (its name is a folder): nothing removed */
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    assert_int_equal(mkdir(tmp, 0755), 0);
    assert_int_equal(knut_file_write_atomic(path, "z", 1, &err), KNUT_EIO);
    assert_non_null(strstr(err.message, "w.json.tmp: open: "));
    assert_int_equal(open_fds(), fds);
    assert_int_equal(knut_file_read(path, 64, &b, &err), KNUT_OK);
    assert_string_equal(b.data, "new!");
    assert_int_equal(rmdir(tmp), 0);
    assert_int_equal(unlink(inner), 0);
    assert_int_equal(rmdir(sub), 0);
    assert_int_equal(unlink(path), 0);
    knut_buf_reset(&b);
}

static int teardown(void **state)
{
    (void)state;
    return rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_whole),
        cmocka_unit_test(test_large),
        cmocka_unit_test(test_empty_and_errors),
        cmocka_unit_test(test_proc_file),
        cmocka_unit_test(test_write_atomic),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
