/*
 * redis:// URLs for every Valkey/Redis/FalkorDB client in knut (the graph
 * sink, the shared ledger), and the wiping free used for their secrets.
 * One parser, so the accepted forms and the error words are the same
 * everywhere, and no error ever quotes the URL: it may hold a password.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "knut/net.h"

void knut_net_secret_free(char *s)
{
    if (!s)
        return;
    for (volatile char *p = s; *p; p++) /* volatile: the wipe must stay */
        *p = '\0';
    free(s);
}

/* %XX in [s, e) decoded into a new string; NULL on a bad escape (or %00)
 * or out of memory. */
static char *pct_decode(const char *s, const char *e)
{
    char *out = calloc((size_t)(e - s) + 1, 1), *o = out; /* zeroed: the wipe stops */
    if (!out)
        return NULL;
    for (; s < e; s++) {
        if (*s != '%') {
            *o++ = *s;
            continue;
        }
        char hex[3] = {0}, *end;
        if (e - s < 3)
            break;
        memcpy(hex, s + 1, 2);
        long v = strtol(hex, &end, 16);
        if (end != hex + 2 || v == 0)
            break;
        *o++ = (char)v;
        s += 2;
    }
    if (s < e) {
        knut_net_secret_free(out);
        return NULL;
    }
    return out;
}

void knut_net_redis_url_reset(knut_net_redis_url *u)
{
    free(u->host);
    knut_net_secret_free(u->user);
    knut_net_secret_free(u->password);
    memset(u, 0, sizeof *u);
}

knut_status knut_net_redis_url_parse(knut_net_redis_url *u, const char *url, knut_error *err)
{
    const char *why = NULL;
    long port = 6379;
    memset(u, 0, sizeof *u);
    KNUT_ASSERT_ARG(err, url != NULL);
    if (strncasecmp(url, "redis://", 8) != 0)
        return knut_error_set(err, KNUT_EINVAL, "expected redis://[[user]:password@]host[:port]");
    const char *s = url + 8, *end = s + strcspn(s, "/?#"), *at = NULL;
    for (const char *p = s; p < end; p++)
        if (*p == '@')
            at = p; /* the last '@': a password may hold one unencoded */
    if (*end && strcmp(end, "/") != 0) {
        why = "a path, database or query is not supported";
        goto cleanup;
    }
    if (at) {
        const char *colon = memchr(s, ':', (size_t)(at - s));
        u->user = colon == s ? NULL : pct_decode(s, colon ? colon : at);
        u->password = colon ? pct_decode(colon + 1, at) : NULL;
        if ((colon != s && !u->user) || (colon && !u->password)) {
            why = "bad percent-encoding in the user info";
            goto cleanup;
        }
        if (u->user && !*u->user) {
            knut_net_secret_free(u->user);
            u->user = NULL;
        }
        s = at + 1;
    }
    const char *h = s, *he, *pp;
    if (*s == '[') {
        h = s + 1;
        if (!(he = memchr(h, ']', (size_t)(end - h)))) {
            why = "unclosed '[' in the host";
            goto cleanup;
        }
        pp = he + 1;
    } else {
        he = memchr(s, ':', (size_t)(end - s));
        pp = he = he ? he : end;
    }
    if (pp < end) {
        char *pe = NULL;
        if (*pp != ':' || pp + 1 == end)
            why = "malformed port";
        else if ((port = strtol(pp + 1, &pe, 10)) <= 0 || port > 65535 || pe != end)
            why = "port out of 1..65535";
        if (why)
            goto cleanup;
    }
    if (he == h) {
        why = "no host";
        goto cleanup;
    }
    if (!(u->host = strndup(h, (size_t)(he - h)))) {
        why = "out of memory";
        goto cleanup;
    }
    u->port = (int)port;
    return KNUT_OK;
cleanup:
    knut_net_redis_url_reset(u);
    return knut_error_set(err, KNUT_EINVAL, "%s", why);
}
