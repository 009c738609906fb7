/*
 * Fuzz target for sc:// Spark Connect URLs (--connect, $SPARK_REMOTE): any
 * input parses or fails cleanly; what parses has a host, a port in range,
 * a UUID session id if any, and no error text quotes the token.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "knut/spark.h"
#include "spark/spark_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* 1 if token appears in url outside the values of its token= parameters:
 * then the message may quote that other part (a key, the host), which is
 * no leak. */
static int token_elsewhere(const char *url, const char *token)
{
    char rest[4097];
    size_t n = 0;
    for (const char *p = url; *p && n < sizeof rest - 1;) {
        if (strncmp(p, ";token=", 7) == 0) {
            p += 7;
            while (*p && *p != ';')
                p++; /* the value itself is left out */
            rest[n++] = ';';
            continue;
        }
        rest[n++] = *p++;
    }
    rest[n] = 0;
    return strstr(rest, token) != NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char url[4097];
    memcpy(url, data, size);
    url[size] = '\0';
    knut_spark_url u;
    knut_error err = KNUT_ERROR_INIT;
    if (knut_spark_url_parse(&u, url, &err) != KNUT_OK) {
        /* short tokens ("a") match ordinary words of the message */
        if (u.token && strlen(u.token) >= 8 && strstr(err.message, u.token) &&
            !token_elsewhere(url, u.token))
            abort();
        knut_spark_url_reset(&u);
        return 0;
    }
    if (!u.host || !*u.host || u.port < 1 || u.port > 65535)
        abort();
    if (u.session_id && !knut_spark__is_uuid(u.session_id))
        abort();
    knut_spark_url_reset(&u);
    return 0;
}
