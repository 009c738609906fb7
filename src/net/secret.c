/*
 * Secrets kept in files (a password, a bearer token): the file is read
 * whole under a small cap and must hold one line, the secret (its newline
 * trimmed, so "echo pw > file" works); the copy read is wiped before it
 * is freed, and errors name the file, never its contents.
 */
#include <stdlib.h>
#include <string.h>

#include "knut/net.h"

/* A secret file is one short line: anything larger is not one. */
#define NET_SECRET_FILE_MAX 4096

/* Overwrites all of b (not only up to a NUL) and frees it. */
static void buf_wipe(knut_buf *b)
{
    for (volatile char *p = b->data; p && p < b->data + b->cap; p++)
        *p = 0;
    knut_buf_reset(b);
}

knut_status knut_net_secret_file_read(const char *path, char **out, knut_error *err)
{
    knut_buf b = KNUT_BUF_INIT;
    *out = NULL;
    knut_status st = knut_file_read(path, NET_SECRET_FILE_MAX, &b, err);
    if (st == KNUT_OK) {
        size_t n = strcspn(b.data, "\r\n"); /* the line, its newline trimmed */
        /* more lines, or a NUL, would be a secret cut short */
        if (n == 0 || n + strspn(b.data + n, "\r\n") != b.len)
            st = knut_error_set(err, KNUT_EINVAL, "%s: %s", path,
                                n == 0 ? "empty first line" : "must hold one line, the secret");
        else if (!(*out = strndup(b.data, n)))
            st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
    }
    buf_wipe(&b);
    return st;
}
