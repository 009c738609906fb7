/*
 * Fuzz target for the serve part's auth parsing: the bytes as the base64
 * of a Basic authorization header (what any client may send before it is
 * authenticated), as a table name the way DuckDB's binder writes it, and
 * split at the first newline into an allow pattern and a table it is
 * matched against. Each parses or is refused; nothing reads past its
 * input, and what decodes re-encodes to the same bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "serve/serve_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    /* as a Basic header's base64: what decodes encodes back to the input
     * (without its padding) */
    uint8_t out[1024];
    size_t n = 0;
    if (knut_serve__b64_decode((const char *)data, size, out, sizeof out, &n) == 0) {
        size_t len = size;
        while (len > 0 && data[len - 1] == '=')
            len--;
        if (n > sizeof out || (len * 6) / 8 != n)
            abort();
        for (size_t i = 0; i < n * 8 / 6; i++) {
            size_t bit = i * 6;
            unsigned v = (unsigned)(out[bit / 8] << 8 | (bit / 8 + 1 < n ? out[bit / 8 + 1] : 0));
            if (b64[(v >> (10 - bit % 8)) & 63] != (char)data[i])
                abort();
        }
    }
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = 0;
    /* as a table name from DuckDB's binder */
    char parts[3][KNUT_SERVE__MAX_IDENT];
    int k = knut_serve__name_parse(s, parts);
    if (k > 3)
        abort();
    for (int i = 0; i < k; i++)
        if (!parts[i][0] || strlen(parts[i]) >= KNUT_SERVE__MAX_IDENT)
            abort();
    /* as "pattern\ntable": the allow-list's match */
    char *nl = strchr(s, '\n');
    if (nl) {
        *nl = 0;
        if (knut_serve__pattern_check(s) == 0) {
            char *pattern = s;
            knut_serve__rule rule = {"fuzz", &pattern, 1};
            knut_serve__auth a = {0};
            a.on = 1;
            a.rules = &rule;
            a.n_rules = 1;
            knut_serve__who who = {&a, "fuzz", 0, 0};
            int yes = knut_serve__authz_table(&who, "store", "main", nl + 1);
            /* a pattern of one '*' part matches every table */
            if (strcmp(pattern, "*") == 0 && !yes)
                abort();
        }
    }
    free(s);
    return 0;
}
