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
        if (u.token && strlen(u.token) >= 8 && strstr(err.message, u.token))
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
