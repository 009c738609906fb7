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
}

knut_status knut_error_setv(knut_error *err, knut_status code, const char *fmt, va_list ap)
{
    if (!err)
        return code;
    err->code = code;
    err->detail = 0; /* a new error: whoever classifies it sets the detail after */
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
    return err->code;
}
