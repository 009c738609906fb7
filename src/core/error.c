/*
 * Status codes and the caller-owned error detail. Nothing here allocates:
 * an error must be reportable even when memory has run out.
 */
#include "knut/core.h"

#include <stdio.h>
#include <string.h>

const char *knut_strerror(knut_status st)
{
    switch (st) {
#define KNUT_X_CASE(name, val, text) \
    case name:                       \
        return text;
        KNUT_STATUS_MAP(KNUT_X_CASE)
#undef KNUT_X_CASE
    }
    return "unknown status";
}

void knut_error_clear(knut_error *err)
{
    if (!err)
        return;
    err->code = KNUT_OK;
    err->detail = 0;
    err->message[0] = '\0';
    err->line = err->col = err->text_at = 0;
}

knut_status knut_error_setv(knut_error *err, knut_status code, const char *fmt, va_list ap)
{
    if (!err)
        return code;
    err->code = code;
    err->detail = 0; /* a new error: whoever classifies it sets the detail after */
    err->line = err->col = err->text_at = 0;
    int n = vsnprintf(err->message, sizeof err->message, fmt, ap);
    if (n < 0)
        snprintf(err->message, sizeof err->message, "%s", knut_strerror(code));
    /* One line, always: a newline from a peer's message must not split a log record. */
    for (char *p = err->message; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    return code;
}

knut_status knut_error_set(knut_error *err, knut_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    knut_status st = knut_error_setv(err, code, fmt, ap);
    va_end(ap);
    return st;
}

knut_status knut_error_set_at(knut_error *err, knut_status code, const char *file, int line,
                              int col, const char *fmt, ...)
{
    char text[KNUT_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (n < 0)
        snprintf(text, sizeof text, "%s", knut_strerror(code));
    if (!file)
        file = "(input)";
    if (!err)
        return code;
    char prefix[KNUT_ERROR_MSG_MAX];
    if (line <= 0) {
        line = col = 0;
        snprintf(prefix, sizeof prefix, "%s: ", file);
    } else {
        if (col <= 0)
            col = 1;
        snprintf(prefix, sizeof prefix, "%s:%d:%d: ", file, line, col);
    }
    knut_error_set(err, code, "%s%s", prefix, text);
    size_t pl = strlen(prefix), ml = strlen(err->message);
    err->line = line;
    err->col = col;
    /* A prefix cut by the message size leaves no text after it. */
    err->text_at = (int)(pl < ml ? pl : ml);
    return code;
}

knut_status knut_error_prefix(knut_error *err, const char *fmt, ...)
{
    if (!err)
        return KNUT_ERROR;
    char prefix[KNUT_ERROR_MSG_MAX];
    char old[KNUT_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, err->message, sizeof old);
    old[sizeof old - 1] = '\0';
    /* Concatenate by hand: cutting the tail is intended, and snprintf's
     * truncation warning would break -Werror builds. */
    size_t pl = strlen(prefix);
    size_t ol = strlen(old);
    if (ol > sizeof err->message - 1 - pl)
        ol = sizeof err->message - 1 - pl;
    memcpy(err->message, prefix, pl);
    memcpy(err->message + pl, old, ol);
    err->message[pl + ol] = '\0';
    if (err->text_at > 0) {
        size_t at = (size_t)err->text_at + pl;
        err->text_at = (int)(at < pl + ol ? at : pl + ol);
    }
    return err->code;
}
