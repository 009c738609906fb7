/*
 * Whole files read at once, under a cap the caller states (configs, info
 * YAML, the sync file ledger). One copy, so every such read has the same
 * errors and the same cap on what is really read.
 */
#include "knut/core.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Bytes asked of read() at a time when the size is unknown or growing. */
#define FILE_READ_STEP ((size_t)64 << 10)

knut_status knut_file_read(const char *path, size_t max, knut_buf *out, knut_error *err)
{
    KNUT_ASSERT_ARG(err, path && out);
    knut_buf_reset(out);
    knut_buf_init(out, max);
    if (max == 0)
        return knut_error_set_at(err, KNUT_EINVAL, path, 0, 0, "read with a 0-byte limit");
    knut_status st = KNUT_OK;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return knut_error_set_at(err, errno == ENOENT ? KNUT_ENOTFOUND : KNUT_EIO, path, 0, 0,
                                 "cannot open: %s", strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        st = knut_error_set_at(err, KNUT_EINVAL, path, 0, 0, "is a directory, not a file");
        goto cleanup;
    }
    /* A regular file's size sizes the buffer once; the loop still reads to
     * the end, one byte past the cap at most, so a file that grows or lies
     * about its size is caught too. */
    if (S_ISREG(sb.st_mode) && sb.st_size > 0 && (uint64_t)sb.st_size < max &&
        knut_buf_reserve(out, (size_t)sb.st_size + 1) != KNUT_OK) {
        st = knut_error_set_at(err, KNUT_ENOMEM, path, 0, 0, "out of memory reading %lld bytes",
                               (long long)sb.st_size);
        goto cleanup;
    }
    for (;;) {
        size_t room = out->cap > out->len + 1 ? out->cap - out->len - 1 : 0;
        if (room == 0) {
            if (out->len >= max) /* full, and the file goes on */
                break;
            size_t want = max - out->len < FILE_READ_STEP ? max - out->len : FILE_READ_STEP;
            if (knut_buf_reserve(out, want) != KNUT_OK) {
                st = knut_error_set_at(err, KNUT_ENOMEM, path, 0, 0,
                                       "out of memory after %zu bytes", out->len);
                goto cleanup;
            }
            room = out->cap - out->len - 1;
        }
        ssize_t r = read(fd, out->data + out->len, room);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            st = knut_error_set_at(err, KNUT_EIO, path, 0, 0, "cannot read: %s", strerror(errno));
            goto cleanup;
        }
        if (r == 0)
            break;
        out->len += (size_t)r;
    }
    out->data[out->len] = '\0'; /* room always left one byte for it */
    if (out->len >= max) { /* at the cap: one more byte tells a longer file */
        char probe;
        ssize_t r;
        while ((r = read(fd, &probe, 1)) < 0 && errno == EINTR)
            ;
        if (r != 0) {
            st = r > 0 ? knut_error_set_at(err, KNUT_ETOOBIG, path, 0, 0,
                                           "over the %zu-byte limit", max)
                       : knut_error_set_at(err, KNUT_EIO, path, 0, 0, "cannot read: %s",
                                           strerror(errno));
            goto cleanup;
        }
    }
cleanup:
    close(fd);
    if (st != KNUT_OK) {
        knut_buf_reset(out);
        out->max = max;
    }
    return st;
}
