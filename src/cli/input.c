/*
 * Reading a query text from stdin (`knut query -`, `knut graph query -`),
 * into a buffer whose cap the caller sets.
 */
#include "cli.h"

knut_status knut_cli_read_stdin(knut_buf *b, const char *what, knut_error *err)
{
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, stdin)) > 0)
        if (knut_buf_append(b, chunk, n) != KNUT_OK)
            break;
    if (ferror(stdin))
        return knut_error_set(err, KNUT_EIO, "reading %s from stdin failed", what);
    if (b->error == KNUT_ETOOBIG)
        return knut_error_set(err, KNUT_ETOOBIG, "%s on stdin is larger than %zu MiB", what,
                              b->max >> 20);
    if (knut_buf_check(b, err) != KNUT_OK)
        return err->code;
    if (!b->data || b->len == 0)
        return knut_error_set(err, KNUT_EINVAL, "no %s on stdin", what);
    return KNUT_OK;
}
