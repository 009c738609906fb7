/*
 * `knut gar import` never leaves a half-written graph where a good one
 * was: the import writes into a fresh directory beside the output
 * (".<name>.knut-import-XXXXXX", same parent, so the same file system)
 * and, once every step succeeded, swaps it with the output in one
 * renameat2(RENAME_EXCHANGE); the old graph then sits in the staging path
 * and is removed. A crash before the swap leaves the old graph untouched
 * (and a staging directory to delete); after it, the new graph whole.
 */
#define _GNU_SOURCE /* renameat2 */
#include "write_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* out without trailing slashes, split at its last '/' (parent "." if none). */
static knut_status split(const char *out, char **parent, char **base, knut_error *err)
{
    size_t n = strlen(out);
    while (n > 1 && out[n - 1] == '/')
        n--;
    const char *slash = NULL;
    for (size_t i = 0; i < n; i++)
        if (out[i] == '/')
            slash = out + i;
    *parent = slash ? strndup(out, slash == out ? 1 : (size_t)(slash - out)) : strdup(".");
    *base = slash ? strndup(slash + 1, n - (size_t)(slash + 1 - out)) : strndup(out, n);
    if (!*parent || !*base)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    if (!**base || strcmp(*base, ".") == 0 || strcmp(*base, "..") == 0)
        return knut_error_set(err, KNUT_EINVAL, "%s: the output must name a directory", out);
    return KNUT_OK;
}

knut_status knut_graphar__stage_begin(const char *out, int overwrite, char **staging,
                                      knut_error *err)
{
    char *parent = NULL, *base = NULL;
    *staging = NULL;
    knut_status st = split(out, &parent, &base, err);
    struct stat sb;
    if (st)
        goto cleanup;
    if (lstat(out, &sb) == 0 && !S_ISDIR(sb.st_mode)) {
        st = knut_error_set(err, KNUT_EINVAL, "%s exists and is not a directory", out);
        goto cleanup;
    }
    int has = knut_graphar__dir_has_entries(out);
    if (has < 0) {
        st = knut_error_set(err, KNUT_EIO, "%s: cannot read directory: %s", out,
                            strerror(errno));
        goto cleanup;
    }
    if (has && !overwrite) {
        st = knut_error_set(err, KNUT_EINVAL, "%s exists and is not empty (an earlier "
                            "graph?): remove it or pass --overwrite", out);
        goto cleanup;
    }
    if ((st = knut_graphar__write_mkdirs(parent, 1, err)))
        goto cleanup;
    size_t len = strlen(parent) + strlen(base) + sizeof "/..knut-import-XXXXXX";
    if (!(*staging = malloc(len))) {
        st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
        goto cleanup;
    }
    snprintf(*staging, len, "%s/.%s.knut-import-XXXXXX", parent, base);
    if (!mkdtemp(*staging)) {
        st = knut_error_set(err, KNUT_EIO, "%s: cannot create a staging directory: %s", parent,
                            strerror(errno));
        free(*staging);
        *staging = NULL;
    }
cleanup:
    free(parent);
    free(base);
    return st;
}

knut_status knut_graphar__stage_commit(char *staging, const char *out, knut_error *err)
{
    knut_status st = KNUT_OK;
    /* an empty or missing out: a plain rename (over an empty directory) */
    if (knut_graphar__dir_has_entries(out) <= 0 && rename(staging, out) == 0)
        goto synced;
    if (renameat2(AT_FDCWD, staging, AT_FDCWD, out, RENAME_EXCHANGE) != 0) {
        st = knut_error_set(err, KNUT_EIO, "%s: cannot swap the new graph in: %s (the old "
                            "graph is unchanged)", out, strerror(errno));
        knut_graphar__stage_abort(staging);
        return st;
    }
    /* staging now holds the old graph */
    knut_error rerr = KNUT_ERROR_INIT;
    if (knut_graphar__remove_tree(staging, &rerr) != KNUT_OK)
        KNUT_LOG(KNUT_LOG_WARN, "graphar", "the previous graph, now at %s, was not removed: %s",
                 staging, rerr.message);
synced:;
    /* make the rename durable: fsync the parent directory */
    char *slash = strrchr(staging, '/');
    if (slash) {
        *slash = '\0';
        int fd = open(staging, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd >= 0) {
            (void)fsync(fd);
            close(fd);
        }
    }
    free(staging);
    return st;
}

void knut_graphar__stage_abort(char *staging)
{
    if (!staging)
        return;
    knut_error err = KNUT_ERROR_INIT;
    if (knut_graphar__remove_tree(staging, &err) != KNUT_OK)
        KNUT_LOG(KNUT_LOG_WARN, "graphar", "the staging directory %s was not removed: %s",
                 staging, err.message);
    free(staging);
}
