/*
 * Fuzz target for config loading: the same bytes go through the YAML and
 * the JSON loader, and every tree that loads is walked with all getters, so
 * the limits (depth, aliases, node count) and the error paths are exercised
 * together with the accessors.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "knut/core.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void walk(const knut_conf *n, int depth)
{
    knut_error err;
    const char *s;
    int64_t i;
    int b;
    double d;
    (void)knut_conf_file(n);
    (void)knut_conf_line(n);
    (void)knut_conf_col(n);
    (void)knut_conf_str(n);
    size_t len = knut_conf_len(n);
    for (size_t k = 0; k < len; k++) {
        const knut_conf *child = knut_conf_at(n, k);
        const char *key = knut_conf_key_at(n, k);
        if (key) {
            /* Lookup by key must find a node (the first with that key). */
            if (!knut_conf_get(n, key))
                __builtin_trap();
            knut_conf_get_str(n, key, &s, &err);
            knut_conf_get_i64(n, key, &i, &err);
            knut_conf_get_bool(n, key, &b, &err);
            knut_conf_get_f64(n, key, &d, &err);
        }
        walk(child, depth + 1);
    }
    knut_conf_get_str(n, "missing", &s, &err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    knut_conf *c = NULL;
    knut_error err = KNUT_ERROR_INIT;
    if (knut_conf_load_yaml(&c, (const char *)data, size, "fuzz.yml", &err) == KNUT_OK) {
        walk(c, 0);
        knut_conf_free(c);
    } else if (c != NULL || err.message[0] == '\0') {
        __builtin_trap(); /* a failure leaves no tree and always says why */
    }
    c = NULL;
    knut_error_clear(&err);
    if (knut_conf_load_json(&c, (const char *)data, size, "fuzz.json", &err) == KNUT_OK) {
        walk(c, 0);
        knut_conf_free(c);
    } else if (c != NULL || err.message[0] == '\0') {
        __builtin_trap();
    }
    return 0;
}
