/*
 * Fuzz target for the prepared statement handle decoder (what any client
 * may send in a CommandPreparedStatementQuery or a ClosePreparedStatement):
 * the bytes as a handle (refused unless signed), and the bytes signed with
 * the key, so the field parsing behind the MAC is reached too. What
 * decodes stays inside its input and encodes back to the same bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "serve/serve_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const knut_serve__hkey *k, const uint8_t *h, size_t n)
{
    knut_serve__handle d;
    knut_error err = KNUT_ERROR_INIT;
    if (knut_serve__handle_decode(k, h, n, &d, &err) != KNUT_OK)
        return;
    const uint8_t *end = h + n;
    if ((const uint8_t *)d.sql < h || (const uint8_t *)d.sql + d.sql_len > end ||
        (d.params && (d.params < h || d.params + d.params_len > end)))
        abort();
    knut_buf again = KNUT_BUF_INIT;
    if (knut_serve__handle_encode(k, &d, &again, &err) != KNUT_OK || again.len != n ||
        memcmp(again.data, h, n) != 0)
        abort();
    knut_buf_reset(&again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > ((size_t)64 << 10))
        return 0;
    knut_serve__hkey k = {{0}, 32, 0};
    memset(k.key, 'k', k.len);
    check(&k, data, size);
    /* signed: the fields are parsed */
    knut_buf b = KNUT_BUF_INIT;
    knut_buf_append(&b, data, size);
    uint8_t mac[32];
    unsigned len = 0;
    if (knut_buf_check(&b, NULL) == KNUT_OK &&
        HMAC(EVP_sha256(), k.key, (int)k.len, data, size, mac, &len)) {
        knut_buf_append(&b, mac, len);
        if (knut_buf_check(&b, NULL) == KNUT_OK)
            check(&k, (const uint8_t *)b.data, b.len);
    }
    knut_buf_reset(&b);
    return 0;
}
