/*
 * Fuzz target for sc:// Spark Connect URLs (--connect, $SPARK_REMOTE): any
 * input parses or fails cleanly; what parses has a host, a port in range,
 * a UUID session id if any, and no error text quotes the token (checked
 * with a marker put in place of every token value).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "knut/spark.h"
#include "spark/spark_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MARK "QzKnutTokenQz"

/* url with every token= value replaced by MARK, into out (4 KiB + room). */
static void mark_tokens(const char *url, char *out, size_t cap)
{
    size_t n = 0;
    for (const char *p = url; *p && n + sizeof MARK + 8 < cap;) {
        if (strncmp(p, ";token=", 7) == 0) {
            memcpy(out + n, ";token=" MARK, 7 + sizeof MARK - 1);
            n += 7 + sizeof MARK - 1;
            for (p += 7; *p && *p != ';'; p++)
                ;
            continue;
        }
        out[n++] = *p++;
    }
    out[n] = 0;
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
        knut_spark_url_reset(&u);
        /* No error quotes the token: the same URL with a marker as every
         * token value must fail without the marker in its message (the
         * token itself could be any word the message also has). */
        char marked[4097 + 64 * sizeof MARK];
        if (!strstr(url, MARK)) {
            mark_tokens(url, marked, sizeof marked);
            knut_error err2 = KNUT_ERROR_INIT;
            if (knut_spark_url_parse(&u, marked, &err2) != KNUT_OK && strstr(err2.message, MARK))
                abort();
            knut_spark_url_reset(&u);
        }
        return 0;
    }
    if (!u.host || !*u.host || u.port < 1 || u.port > 65535)
        abort();
    if (u.session_id && !knut_spark__is_uuid(u.session_id))
        abort();
    knut_spark_url_reset(&u);
    return 0;
}
