/*
 * knut_buf: the growable, always NUL-terminated byte buffer every part uses
 * for text it builds. It has a hard cap (bytes from files and peers must not
 * grow memory without bound) and a sticky error, so callers append freely
 * and check once at the end.
 */
#include "knut/core.h"

#include <stdlib.h>
#include <string.h>

static size_t buf_max(const knut_buf *b)
{
    return b->max ? b->max : KNUT_BUF_DEFAULT_MAX;
}

static knut_status buf_fail(knut_buf *b, knut_status st)
{
    if (b->error == KNUT_OK)
        b->error = st;
    return b->error;
}

void knut_buf_init(knut_buf *b, size_t max)
{
    if (!b)
        return;
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->max = max;
    b->error = KNUT_OK;
}

void knut_buf_reset(knut_buf *b)
{
    if (!b)
        return;
    free(b->data);
    /* The cap is a policy the owner chose, not content: it survives reuse. */
    knut_buf_init(b, b->max);
}

void knut_buf_clear(knut_buf *b)
{
    if (!b)
        return;
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
    b->error = KNUT_OK;
}

knut_status knut_buf_reserve(knut_buf *b, size_t extra)
{
    if (!b)
        return KNUT_EINVAL;
    if (b->error != KNUT_OK)
        return b->error;
    size_t max = buf_max(b);
    if (b->len > max || extra > max - b->len)
        return buf_fail(b, KNUT_ETOOBIG);
    size_t need = b->len + extra + 1; /* +1: the terminating NUL */
    if (need <= b->cap)
        return KNUT_OK;
    size_t ncap = b->cap ? b->cap : 64;
    while (ncap < need)
        ncap = ncap > SIZE_MAX / 2 ? need : ncap * 2;
    /* Never hold much more than the cap allows, even when doubling. */
    if (ncap > max + 1)
        ncap = max + 1;
    char *nd = realloc(b->data, ncap);
    if (!nd)
        return buf_fail(b, KNUT_ENOMEM);
    b->data = nd;
    b->cap = ncap;
    return KNUT_OK;
}

knut_status knut_buf_append(knut_buf *b, const void *data, size_t len)
{
    knut_status st = knut_buf_reserve(b, len);
    if (st != KNUT_OK)
        return st;
    if (len)
        memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len] = '\0';
    return KNUT_OK;
}

knut_status knut_buf_puts(knut_buf *b, const char *s)
{
    return knut_buf_append(b, s, s ? strlen(s) : 0);
}

knut_status knut_buf_putc(knut_buf *b, char c)
{
    return knut_buf_append(b, &c, 1);
}

knut_status knut_buf_vprintf(knut_buf *b, const char *fmt, va_list ap)
{
    if (!b || !fmt)
        return b ? buf_fail(b, KNUT_EINVAL) : KNUT_EINVAL;
    if (b->error != KNUT_OK)
        return b->error;
    /* First try the room already there; most appends fit. */
    size_t room = b->cap > b->len ? b->cap - b->len : 0;
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(room ? b->data + b->len : NULL, room, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return buf_fail(b, KNUT_EINVAL);
    if ((size_t)n >= room) {
        knut_status st = knut_buf_reserve(b, (size_t)n);
        if (st != KNUT_OK) {
            if (b->data)
                b->data[b->len] = '\0'; /* undo a partial write */
            return st;
        }
        va_copy(ap2, ap);
        vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap2);
        va_end(ap2);
    }
    b->len += (size_t)n;
    return KNUT_OK;
}

knut_status knut_buf_printf(knut_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    knut_status st = knut_buf_vprintf(b, fmt, ap);
    va_end(ap);
    return st;
}

/*
 * Length of the valid UTF-8 sequence at s (1..4), or 0 if the bytes there
 * are not valid UTF-8 (overlong forms and surrogates included), so the JSON
 * we write is always valid UTF-8 whatever a peer or a file handed us.
 */
static size_t utf8_seq_len(const unsigned char *s, size_t avail)
{
    unsigned char c = s[0];
    size_t n;
    uint32_t cp;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
        cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    if (avail < n)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
        return 0;
    if (cp >= 0xD800 && cp <= 0xDFFF)
        return 0;
    return n;
}

knut_status knut_buf_put_json_str(knut_buf *b, const char *s, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    if (!s)
        len = 0;
    knut_buf_putc(b, '"');
    size_t run = 0; /* bytes that need no escaping, copied in one append */
    size_t i = 0;
    while (i < len) {
        unsigned char c = p[i];
        const char *esc = NULL;
        char ubuf[7];
        size_t step = 1;
        if (c == '"')
            esc = "\\\"";
        else if (c == '\\')
            esc = "\\\\";
        else if (c == '\n')
            esc = "\\n";
        else if (c == '\r')
            esc = "\\r";
        else if (c == '\t')
            esc = "\\t";
        else if (c == '\b')
            esc = "\\b";
        else if (c == '\f')
            esc = "\\f";
        else if (c < 0x20 || c == 0x7F) {
            memcpy(ubuf, "\\u00", 4);
            ubuf[4] = hex[c >> 4];
            ubuf[5] = hex[c & 0xF];
            ubuf[6] = '\0';
            esc = ubuf;
        } else if (c >= 0x80) {
            step = utf8_seq_len(p + i, len - i);
            if (step == 0) {
                esc = "\\ufffd"; /* replacement character for a bad byte */
                step = 1;
            }
        }
        if (esc) {
            knut_buf_append(b, p + i - run, run);
            run = 0;
            knut_buf_puts(b, esc);
        } else {
            run += step;
        }
        i += step;
    }
    knut_buf_append(b, p + len - run, run);
    return knut_buf_putc(b, '"');
}

char *knut_buf_detach(knut_buf *b, size_t *len_out)
{
    if (len_out)
        *len_out = 0;
    if (!b)
        return NULL;
    if (b->error != KNUT_OK) {
        knut_buf_reset(b);
        return NULL;
    }
    char *data = b->data;
    size_t len = b->len;
    if (!data) {
        /* An empty buffer still hands out a string the caller can free. */
        data = calloc(1, 1);
        if (!data)
            return NULL;
    }
    b->data = NULL;
    knut_buf_reset(b);
    if (len_out)
        *len_out = len;
    return data;
}

knut_status knut_buf_check(const knut_buf *b, knut_error *err)
{
    if (!b)
        return knut_error_set(err, KNUT_EINVAL, "buffer: NULL buffer");
    switch (b->error) {
    case KNUT_OK:
        return KNUT_OK;
    case KNUT_ETOOBIG:
        return knut_error_set(err, KNUT_ETOOBIG, "buffer: output exceeds the %zu-byte limit",
                              buf_max(b));
    case KNUT_ENOMEM:
        return knut_error_set(err, KNUT_ENOMEM, "buffer: out of memory after %zu bytes",
                              b->len);
    default:
        return knut_error_set(err, b->error, "buffer: %s", knut_strerror(b->error));
    }
}

knut_status knut_buf_put_json_member(knut_buf *b, const char *key, const char *v)
{
    knut_buf_put_json_str(b, key, strlen(key));
    knut_buf_putc(b, ':');
    if (v)
        return knut_buf_put_json_str(b, v, strlen(v));
    return knut_buf_puts(b, "null");
}
