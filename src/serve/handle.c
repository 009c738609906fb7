/*
 * Prepared statement handles that describe themselves: the owner's
 * identity, a nonce, the SQL text and (once bound) the parameter batch,
 * all under an HMAC-SHA256 with the server's handle key. Any server that
 * holds the same key — this one after a restart, a second replica behind
 * a load balancer — can run a handle it never saw, and nobody without the
 * key can make or alter one (the owner is inside the signed part, so one
 * identity cannot use another's handle).
 *
 * Layout (integers big-endian):
 *   'K' 1 flags nonce[16] u16 owner_len owner u32 sql_len sql
 *   [u32 params_len params]   when flags & 1
 *   mac[32]                   HMAC-SHA256(key, everything before)
 *
 * The key comes from a file (mode 0600, like the auth file) or the
 * environment; without one it is random for the process, and handles
 * then end with it.
 */
#include <errno.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "serve_int.h"

#define MAGIC 'K'
#define VERSION 1
#define FLAG_PARAMS 1
#define HEAD (3 + KNUT_SERVE__NONCE_LEN)
#define MAC_LEN 32
#define KEY_MIN 32 /* bytes of key text: `openssl rand -hex 32` gives 64 */
#define KEY_FILE_MAX ((size_t)4096)

static void put_u16(knut_buf *b, size_t v)
{
    knut_buf_putc(b, (char)((v >> 8) & 0xff));
    knut_buf_putc(b, (char)(v & 0xff));
}

static void put_u32(knut_buf *b, size_t v)
{
    for (int sh = 24; sh >= 0; sh -= 8)
        knut_buf_putc(b, (char)((v >> sh) & 0xff));
}

static int mac(const knut_serve__hkey *k, const void *data, size_t n, uint8_t out[MAC_LEN])
{
    unsigned len = 0;
    return HMAC(EVP_sha256(), k->key, (int)k->len, data, n, out, &len) && len == MAC_LEN ? 0
                                                                                         : -1;
}

knut_status knut_serve__handle_encode(const knut_serve__hkey *k, const knut_serve__handle *h,
                                      knut_buf *out, knut_error *err)
{
    size_t on = strlen(h->owner);
    knut_buf_clear(out);
    if (on >= KNUT_SERVE__MAX_IDENT || h->sql_len > KNUT_SERVE__MAX_SQL ||
        h->params_len > KNUT_SERVE__MAX_HANDLE_PARAMS)
        return knut_error_set(err, KNUT_ETOOBIG, "prepared statement handle: a field over "
                                                 "its cap");
    knut_buf_putc(out, MAGIC);
    knut_buf_putc(out, VERSION);
    knut_buf_putc(out, h->params ? FLAG_PARAMS : 0);
    knut_buf_append(out, h->nonce, KNUT_SERVE__NONCE_LEN);
    put_u16(out, on);
    knut_buf_append(out, h->owner, on);
    put_u32(out, h->sql_len);
    knut_buf_append(out, h->sql, h->sql_len);
    if (h->params) {
        put_u32(out, h->params_len);
        knut_buf_append(out, h->params, h->params_len);
    }
    knut_status st = knut_buf_check(out, err);
    uint8_t m[MAC_LEN];
    if (st == KNUT_OK && mac(k, out->data, out->len, m) != 0)
        st = knut_error_set(err, KNUT_ERROR, "prepared statement handle: HMAC failed");
    if (st == KNUT_OK) {
        knut_buf_append(out, m, MAC_LEN);
        st = knut_buf_check(out, err);
    }
    return st;
}

static size_t get_be(const uint8_t *p, int n)
{
    size_t v = 0;
    for (int i = 0; i < n; i++)
        v = v << 8 | p[i];
    return v;
}

knut_status knut_serve__handle_decode(const knut_serve__hkey *k, const uint8_t *data, size_t n,
                                      knut_serve__handle *h, knut_error *err)
{
    memset(h, 0, sizeof *h);
    /* the MAC first: nothing of an unsigned handle is believed, and its
     * fields are not looked at (a mismatch says nothing about them) */
    uint8_t m[MAC_LEN];
    if (!data || n < HEAD + 2 + 4 + MAC_LEN || n > KNUT_SERVE__MAX_HANDLE)
        return knut_error_set(err, KNUT_EINVAL, "prepared statement handle of %zu bytes: not "
                                                "one of this server's", n);
    size_t body = n - MAC_LEN;
    if (mac(k, data, body, m) != 0 || CRYPTO_memcmp(m, data + body, MAC_LEN) != 0)
        return knut_error_set(err, KNUT_EINVAL, "prepared statement handle does not verify "
                                                "(altered, or signed with another handle key)");
    /* signed by us, but read as carefully as any input: a key shared with
     * an older or newer knut may sign another layout */
    if (data[0] != MAGIC || data[1] != VERSION || (data[2] & ~FLAG_PARAMS))
        return knut_error_set(err, KNUT_EINVAL, "prepared statement handle of another version "
                                                "(%u)", (unsigned)data[1]);
    memcpy(h->nonce, data + 3, KNUT_SERVE__NONCE_LEN);
    size_t p = HEAD;
    size_t on = get_be(data + p, 2);
    p += 2;
    if (on >= KNUT_SERVE__MAX_IDENT || on > body - p || memchr(data + p, 0, on))
        goto bad;
    memcpy(h->owner, data + p, on);
    h->owner[on] = 0;
    p += on;
    if (body - p < 4)
        goto bad;
    h->sql_len = get_be(data + p, 4);
    p += 4;
    if (h->sql_len == 0 || h->sql_len > KNUT_SERVE__MAX_SQL || h->sql_len > body - p ||
        memchr(data + p, 0, h->sql_len))
        goto bad;
    h->sql = (const char *)data + p;
    p += h->sql_len;
    if (data[2] & FLAG_PARAMS) {
        if (body - p < 4)
            goto bad;
        h->params_len = get_be(data + p, 4);
        p += 4;
        if (h->params_len == 0 || h->params_len > KNUT_SERVE__MAX_HANDLE_PARAMS ||
            h->params_len > body - p)
            goto bad;
        h->params = data + p;
        p += h->params_len;
    }
    if (p != body)
        goto bad;
    return KNUT_OK;
bad:
    memset(h, 0, sizeof *h);
    return knut_error_set(err, KNUT_EINVAL, "prepared statement handle: malformed fields");
}

/* Key text: trailing blanks and newlines are not part of it. */
static knut_status key_set(knut_serve__hkey *k, const char *text, size_t n, const char *what,
                           knut_error *err)
{
    while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == '\r' || text[n - 1] == ' ' ||
                     text[n - 1] == '\t'))
        n--;
    if (n < KEY_MIN || n > sizeof k->key)
        return knut_error_set(err, KNUT_EINVAL, "%s: a handle key of %zu bytes (%d to %zu: "
                                                "`openssl rand -hex 32`)", what, n, KEY_MIN,
                              sizeof k->key);
    memcpy(k->key, text, n);
    k->len = n;
    return KNUT_OK;
}

knut_status knut_serve__hkey_load(knut_serve__hkey *k, const char *file, const char *text,
                                  knut_error *err)
{
    memset(k, 0, sizeof *k);
    if (file) {
        struct stat sb;
        if (stat(file, &sb) != 0)
            return knut_error_set(err, errno == ENOENT ? KNUT_ENOTFOUND : KNUT_EIO,
                                  "handle key file '%s': %s", file, strerror(errno));
        if (sb.st_mode & (S_IRWXG | S_IRWXO))
            return knut_error_set(err, KNUT_EINVAL, "handle key file '%s' is readable by "
                                                    "others (mode %03o): chmod 600 it", file,
                                  (unsigned)(sb.st_mode & 0777));
        knut_buf b = KNUT_BUF_INIT;
        char what[300];
        snprintf(what, sizeof what, "handle key file '%.200s'", file);
        knut_status st = knut_file_read(file, KEY_FILE_MAX, &b, err);
        if (st == KNUT_OK)
            st = key_set(k, b.data, b.len, what, err);
        OPENSSL_cleanse(b.data, b.cap);
        knut_buf_reset(&b);
        return st;
    }
    if (text)
        return key_set(k, text, strlen(text), "KNUT_SERVE_HANDLE_KEY", err);
    if (RAND_bytes(k->key, KEY_MIN) != 1)
        return knut_error_set(err, KNUT_ERROR, "no random bytes for the handle key");
    k->len = KEY_MIN;
    k->ephemeral = 1;
    return KNUT_OK;
}

void knut_serve__hkey_wipe(knut_serve__hkey *k)
{
    OPENSSL_cleanse(k, sizeof *k);
}
