/*
 * Fuzz target for redis:// URLs (command-line flags and config values): any
 * input parses or fails cleanly, and what parses has a host and a port in
 * range. (That errors never quote the URL is checked in test_net_url.c.)
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "knut/net.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1024)
        return 0;
    char url[1025];
    memcpy(url, data, size);
    url[size] = '\0';
    knut_net_redis_url u;
    knut_error err = KNUT_ERROR_INIT;
    if (knut_net_redis_url_parse(&u, url, &err) != KNUT_OK)
        return 0;
    if (!u.host || !*u.host || u.port < 1 || u.port > 65535)
        abort();
    knut_net_redis_url_reset(&u);
    return 0;
}
