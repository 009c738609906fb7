/*
 * Reading a query text from stdin (`knut query -`, `knut graph query -`),
 * into a buffer whose cap the caller sets.
 */
#include "cli.h"

#include <string.h>

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

knut_status knut_cli_query_text(const char *arg, knut_buf *input, size_t max, const char *what,
                                const char **out, knut_error *err)
{
    *out = arg;
    if (strcmp(arg, "-") != 0)
        return KNUT_OK;
    knut_buf_init(input, max);
    knut_status st = knut_cli_read_stdin(input, what, err);
    if (st == KNUT_OK)
        *out = input->data;
    return st;
}
