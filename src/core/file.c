/*
 * Whole files read at once, under a cap the caller states (configs, info
 * YAML, the sync file ledger), and written at once by an atomic replace
 * (the sync file ledger, the metrics file). One copy each, so every such
 * read has the same errors and the same cap on what is really read, and
 * every such write the same cleanup on every error path.
 */
#include "knut/core.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
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

/* fsync of the folder holding path, so a rename in it is durable. A
 * folder that cannot be synced by design (EINVAL: some FUSE and special
 * filesystems) is not an error. */
static knut_status sync_parent(const char *path, knut_error *err)
{
    const char *slash = strrchr(path, '/');
    char dir[4096];
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == path)
        snprintf(dir, sizeof dir, "/");
    else if ((size_t)(slash - path) < sizeof dir)
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    else
        return knut_error_set(err, KNUT_EIO, "%s: folder name too long to sync", path);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return knut_error_set(err, KNUT_EIO, "%s: cannot open its folder to sync it: %s", path,
                              strerror(errno));
    knut_status st = KNUT_OK;
    if (fsync(dfd) != 0 && errno != EINVAL)
        st = knut_error_set(err, KNUT_EIO, "%s: fsync of its folder: %s", path, strerror(errno));
    close(dfd);
    return st;
}

knut_status knut_file_write_atomic(const char *path, const void *data, size_t len,
                                   knut_error *err)
{
    KNUT_ASSERT_ARG(err, path && (data || len == 0));
    knut_buf tmp = KNUT_BUF_INIT;
    knut_buf_printf(&tmp, "%s.tmp", path);
    knut_status st = knut_buf_check(&tmp, err);
    if (st != KNUT_OK)
        return st;
    const char *step = "open", *named = tmp.data; /* the file the message names */
    int fd = open(tmp.data, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        goto fail;
    step = "write";
    for (size_t off = 0; off < len;) {
        ssize_t w = write(fd, (const char *)data + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = ENOSPC; /* no progress: a full device that does not say so */
            goto fail;
        }
        off += (size_t)w;
    }
    step = "fsync";
    if (fsync(fd) != 0)
        goto fail;
    step = "close";
    if (close(fd) != 0) {
        fd = -1; /* released even when close fails: never closed twice */
        goto fail;
    }
    fd = -1;
    step = "rename";
    named = path;
    if (rename(tmp.data, path) != 0)
        goto fail;
    knut_buf_reset(&tmp);
    return sync_parent(path, err);
fail:
    st = knut_error_set(err, KNUT_EIO, "%s: %s: %s", named, step, strerror(errno));
    if (fd >= 0)
        close(fd);
    unlink(tmp.data); /* the old file stays as it was */
    knut_buf_reset(&tmp);
    return st;
}
