/*
 * sc:// connection strings (Spark Connect's client-connection-string
 * form): sc://host[:port]/[;name=value]... Parameters are case sensitive
 * and percent-decoded; an unknown or repeated one is an error, so a typo
 * (tokne=...) does not silently connect without a token. No error quotes a
 * value: the token is a secret.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "knut/net.h"
#include "spark_int.h"

#define URL_MAX 8192

/* %XX in [s, e) decoded into a new string; NULL on a bad escape, %00 or
 * out of memory (*bad says which). */
static char *decode(const char *s, const char *e, int *bad)
{
    char *out = calloc((size_t)(e - s) + 1, 1), *o = out;
    *bad = 0;
    if (!out)
        return NULL;
    for (; s < e; s++) {
        if (*s != '%') {
            *o++ = *s;
            continue;
        }
        if (e - s < 3 || !isxdigit((unsigned char)s[1]) || !isxdigit((unsigned char)s[2]))
            goto bad;
        char hex[3] = {s[1], s[2], 0};
        long v = strtol(hex, NULL, 16);
        if (v == 0)
            goto bad;
        *o++ = (char)v;
        s += 2;
    }
    return out;
bad:
    knut_net_secret_free(out);
    *bad = 1;
    return NULL;
}

int knut_spark__is_uuid(const char *s)
{
    if (!s || strlen(s) != 36)
        return 0;
    for (int i = 0; i < 36; i++) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (s[i] != '-')
                return 0;
        } else if (!isxdigit((unsigned char)s[i])) {
            return 0;
        }
    }
    return 1;
}

static knut_status parse_host(knut_spark_url *u, const char *s, const char *e, knut_error *err)
{
    const char *hend, *port = NULL;
    if (s < e && *s == '[') {
        hend = memchr(s, ']', (size_t)(e - s));
        if (!hend || hend == s + 1)
            return knut_error_set(err, KNUT_EINVAL, "an IPv6 host needs [address]");
        u->host = strndup(s + 1, (size_t)(hend - s - 1));
        hend++;
        if (hend < e && *hend != ':')
            return knut_error_set(err, KNUT_EINVAL, "text after the IPv6 host's ']'");
        if (hend < e)
            port = hend + 1;
    } else {
        const char *colon = memchr(s, ':', (size_t)(e - s));
        hend = colon ? colon : e;
        if (hend == s)
            return knut_error_set(err, KNUT_EINVAL, "no host (sc://host:port/)");
        for (const char *p = s; p < hend; p++)
            if (!isalnum((unsigned char)*p) && *p != '.' && *p != '-' && *p != '_')
                return knut_error_set(err, KNUT_EINVAL, "the host holds a character not "
                                                        "allowed in a host name");
        u->host = strndup(s, (size_t)(hend - s));
        if (colon)
            port = colon + 1;
    }
    if (!u->host)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    u->port = KNUT_SPARK_DEFAULT_PORT;
    if (port) {
        long v = 0;
        if (port == e || e - port > 5)
            return knut_error_set(err, KNUT_EINVAL, "the port must be a number 1-65535");
        for (const char *p = port; p < e; p++) {
            if (!isdigit((unsigned char)*p))
                return knut_error_set(err, KNUT_EINVAL, "the port must be a number 1-65535");
            v = v * 10 + (*p - '0');
        }
        if (v < 1 || v > 65535)
            return knut_error_set(err, KNUT_EINVAL, "the port must be a number 1-65535");
        u->port = (int)v;
    }
    return KNUT_OK;
}

static knut_status set_bool(int *dst, const char *name, const char *v, knut_error *err)
{
    if (strcmp(v, "true") == 0 || strcmp(v, "1") == 0)
        *dst = 1;
    else if (strcmp(v, "false") == 0 || strcmp(v, "0") == 0)
        *dst = 0;
    else
        return knut_error_set(err, KNUT_EINVAL, "parameter '%s' must be true or false", name);
    return KNUT_OK;
}

/* One name=value: known names only, each once. v is taken over. */
static knut_status param(knut_spark_url *u, const char *name, char *v, unsigned *seen,
                         knut_error *err)
{
    static const char *const names[] = {"token",      "use_ssl",   "user_id",
                                        "user_agent", "session_id", "grpc_max_message_size"};
    size_t i;
    for (i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(name, names[i]) == 0)
            break;
    knut_status st = KNUT_OK;
    if (i == sizeof names / sizeof names[0]) {
        st = knut_error_set(err, KNUT_EINVAL, "unknown parameter '%.64s' (known: token, "
                                              "use_ssl, user_id, user_agent, session_id, "
                                              "grpc_max_message_size)", name);
    } else if (*seen & (1u << i)) {
        st = knut_error_set(err, KNUT_EINVAL, "parameter '%s' given twice", names[i]);
    }
    if (st != KNUT_OK) {
        knut_net_secret_free(v);
        return st;
    }
    *seen |= 1u << i;
    switch (i) {
    case 0:
        if (!v[0])
            st = knut_error_set(err, KNUT_EINVAL, "parameter 'token' is empty");
        u->token = v;
        return st;
    case 1:
        st = set_bool(&u->use_ssl, names[i], v, err);
        break;
    case 2:
        u->user_id = v;
        return KNUT_OK;
    case 3:
        if (strlen(v) > 2048)
            st = knut_error_set(err, KNUT_EINVAL, "parameter 'user_agent' is over 2048 "
                                                  "characters");
        for (const char *p = v; st == KNUT_OK && *p; p++)
            if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e)
                st = knut_error_set(err, KNUT_EINVAL, "parameter 'user_agent' must be "
                                                      "printable ASCII");
        u->user_agent = v;
        return st;
    case 4:
        if (!knut_spark__is_uuid(v))
            st = knut_error_set(err, KNUT_EINVAL, "parameter 'session_id' must be a UUID "
                                                  "(8-4-4-4-12 hex digits)");
        u->session_id = v;
        return st;
    default: {
        char *end;
        unsigned long long n = strtoull(v, &end, 10);
        if (!isdigit((unsigned char)v[0]) || *end || n < 1024 || n > INT32_MAX)
            st = knut_error_set(err, KNUT_EINVAL, "parameter 'grpc_max_message_size' must be "
                                                  "a byte count 1024-2147483647");
        else
            u->max_message = (size_t)n;
        break;
    }
    }
    free(v);
    return st;
}

knut_status knut_spark_url_parse(knut_spark_url *u, const char *url, knut_error *err)
{
    KNUT_ASSERT_ARG(err, u && url);
    memset(u, 0, sizeof *u);
    size_t n = strlen(url);
    if (n > URL_MAX)
        return knut_error_set(err, KNUT_EINVAL, "the URL is over %d bytes", URL_MAX);
    if (strncmp(url, "sc://", 5) != 0)
        return knut_error_set(err, KNUT_EINVAL, "expected sc://host:port/ (a Spark Connect URL)");
    const char *s = url + 5, *end = url + n;
    const char *slash = memchr(s, '/', (size_t)(end - s));
    const char *semi = memchr(s, ';', (size_t)(end - s));
    if (semi && (!slash || semi < slash))
        return knut_error_set(err, KNUT_EINVAL, "parameters start after the path: "
                                                "sc://host:port/;name=value");
    const char *hend = slash ? slash : end;
    if (memchr(s, '@', (size_t)(hend - s)))
        return knut_error_set(err, KNUT_EINVAL, "credentials go in ;token=..., not before "
                                                "the host");
    knut_status st = parse_host(u, s, hend, err);
    if (st != KNUT_OK || !slash)
        return st;
    const char *p = slash + 1;
    if (p < end && *p != ';')
        return knut_error_set(err, KNUT_EINVAL, "the path must be empty (sc://host:port/)");
    unsigned seen = 0;
    while (p < end) {
        p++; /* the ';' */
        const char *pe = memchr(p, ';', (size_t)(end - p));
        if (!pe)
            pe = end;
        if (pe == p) { /* ";;" or a trailing ';' */
            p = pe;
            continue;
        }
        const char *eq = memchr(p, '=', (size_t)(pe - p));
        if (!eq || eq == p)
            return knut_error_set(err, KNUT_EINVAL, "every parameter needs name=value");
        char name[64];
        if ((size_t)(eq - p) >= sizeof name)
            return knut_error_set(err, KNUT_EINVAL, "a parameter name is over 63 characters");
        memcpy(name, p, (size_t)(eq - p));
        name[eq - p] = '\0';
        int bad = 0;
        char *v = decode(eq + 1, pe, &bad);
        if (!v)
            return bad ? knut_error_set(err, KNUT_EINVAL, "parameter '%s': a bad %%XX escape",
                                        name)
                       : knut_error_set(err, KNUT_ENOMEM, "out of memory");
        if ((st = param(u, name, v, &seen, err)) != KNUT_OK)
            return st;
        p = pe;
    }
    return KNUT_OK;
}

void knut_spark_url_reset(knut_spark_url *u)
{
    if (!u)
        return;
    free(u->host);
    knut_net_secret_free(u->token);
    free(u->user_id);
    free(u->user_agent);
    free(u->session_id);
    memset(u, 0, sizeof *u);
}
