/*
 * Quoting names and constants into SQL text: the one copy every part uses
 * (see duck.h for when a literal is allowed at all). Runs of plain bytes
 * are appended whole, so a long name costs one copy, not one call a byte.
 */
#include "knut/duck.h"

#include <string.h>

/* Appends s[0..len) between q quotes, each q inside doubled. */
static knut_status put_quoted(knut_buf *b, const char *s, size_t len, char q)
{
    knut_buf_putc(b, q);
    size_t run = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] != q)
            continue;
        /* The quote goes out with the run before it, then once more. */
        knut_buf_append(b, s + run, i + 1 - run);
        knut_buf_putc(b, q);
        run = i + 1;
    }
    knut_buf_append(b, s + run, len - run);
    return knut_buf_putc(b, q);
}

/* Sets b's sticky error (as a failed append would) and returns it. */
static knut_status refuse(knut_buf *b)
{
    if (b->error == KNUT_OK)
        b->error = KNUT_EINVAL;
    return b->error;
}

knut_status knut_duck_ident(knut_buf *b, const char *name)
{
    if (!b)
        return KNUT_EINVAL;
    if (!name)
        return refuse(b);
    return put_quoted(b, name, strlen(name), '"');
}

knut_status knut_duck_literal(knut_buf *b, const char *s, size_t len)
{
    if (!b)
        return KNUT_EINVAL;
    if ((!s && len) || (len && memchr(s, '\0', len)))
        return refuse(b);
    return put_quoted(b, s ? s : "", len, '\'');
}
