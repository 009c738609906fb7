/*
 * Authentication: who a call is. The credentials come from the auth file
 * (bearer tokens and users, read once, from a file only its owner can
 * read) and from tokens in the environment; never from the command line.
 * A call proves an identity with `authorization: Bearer <token>` (a token
 * of the file or the environment, or a session token that a Handshake
 * with `authorization: Basic` issued), or, without that header, with a
 * client certificate the TLS handshake verified (mutual TLS: the
 * certificate's subject is the identity).
 *
 * Secrets are kept only as SHA-256 digests (session tokens too) or as
 * PBKDF2 hashes, compared with CRYPTO_memcmp against every entry without
 * stopping at a match, and never written to a log or an error.
 */
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>

#include "serve_int.h"

#define SESSION_BYTES 32
/* A Basic header's user:password, decoded. */
#define MAX_BASIC 1024

static void digest(const void *p, size_t n, uint8_t out[KNUT_SERVE__DIGEST])
{
    unsigned int len = 0;
    EVP_Digest(p, n, out, &len, EVP_sha256(), NULL);
}

static void wipe(void *p, size_t n)
{
    OPENSSL_cleanse(p, n);
}

/* The index of the entry of a whose digest is d, or -1: every entry is
 * compared, match or not, so the time says nothing about which. */
static ptrdiff_t digest_find(const knut_serve__secret *a, size_t n, const uint8_t *d)
{
    ptrdiff_t found = -1;
    for (size_t i = 0; i < n; i++) {
        int eq = CRYPTO_memcmp(a[i].digest, d, KNUT_SERVE__DIGEST) == 0;
        found = eq && found < 0 ? (ptrdiff_t)i : found;
    }
    return found;
}

/* ---- Basic: user:password ---------------------------------------------- */

static int b64_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
}

int knut_serve__b64_decode(const char *in, size_t len, uint8_t *out, size_t cap, size_t *n)
{
    while (len > 0 && in[len - 1] == '=')
        len--;
    if (len % 4 == 1)
        return -1;
    uint32_t acc = 0;
    int bits = 0;
    *n = 0;
    for (size_t i = 0; i < len; i++) {
        int v = b64_value((unsigned char)in[i]);
        if (v < 0)
            return -1;
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (*n == cap)
                return -1;
            out[(*n)++] = (uint8_t)(acc >> bits);
        }
    }
    return 0;
}

static int user_verify(const knut_serve__user *u, const char *pw, size_t n)
{
    uint8_t d[KNUT_SERVE__DIGEST];
    if (!u->iterations) {
        digest(pw, n, d);
        return CRYPTO_memcmp(d, u->hash, KNUT_SERVE__DIGEST) == 0;
    }
    int ok = PKCS5_PBKDF2_HMAC(pw, (int)n, (const unsigned char *)u->salt, (int)strlen(u->salt),
                               (int)u->iterations, EVP_sha256(), KNUT_SERVE__DIGEST, d) == 1 &&
             CRYPTO_memcmp(d, u->hash, KNUT_SERVE__DIGEST) == 0;
    wipe(d, sizeof d);
    return ok;
}

/* ---- sessions ---------------------------------------------------------- */

static knut_status session_new(knut_serve__auth *a, const char *name, char *token, size_t cap,
                               knut_error *err)
{
    uint8_t raw[SESSION_BYTES];
    if (cap < 2 * SESSION_BYTES + 1 || getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw)
        return knut_error_set(err, KNUT_ERROR, "no random bytes for a session token");
    for (size_t i = 0; i < sizeof raw; i++)
        snprintf(token + 2 * i, 3, "%02x", raw[i]);
    wipe(raw, sizeof raw);
    knut_serve__session e = {0};
    digest(token, 2 * SESSION_BYTES, e.digest);
    snprintf(e.name, sizeof e.name, "%s", name);
    int64_t now = knut_clock_mono_ns();
    e.expires_ns = now + a->ttl_ns;
    pthread_mutex_lock(&a->lock);
    if (a->n_sessions == KNUT_SERVE__MAX_SESSIONS) {
        /* full: expired ones go first (kept until then, so that a client
         * with one hears "expired", not "not valid") */
        size_t k = 0;
        for (size_t i = 0; i < a->n_sessions; i++)
            if (a->sessions[i].expires_ns > now)
                a->sessions[k++] = a->sessions[i];
        a->n_sessions = k;
    }
    if (a->n_sessions == KNUT_SERVE__MAX_SESSIONS) { /* still full: the one that ends soonest */
        size_t old = 0;
        for (size_t i = 1; i < a->n_sessions; i++)
            if (a->sessions[i].expires_ns < a->sessions[old].expires_ns)
                old = i;
        a->sessions[old] = a->sessions[--a->n_sessions];
    }
    a->sessions[a->n_sessions++] = e;
    pthread_mutex_unlock(&a->lock);
    return KNUT_OK;
}

/* 1: a live session (its identity into who), 0: none, -1: one that expired. */
static int session_find(knut_serve__auth *a, const uint8_t *d, knut_serve__who *who)
{
    int64_t now = knut_clock_mono_ns();
    int got = 0;
    pthread_mutex_lock(&a->lock);
    for (size_t i = 0; i < a->n_sessions; i++) {
        int eq = CRYPTO_memcmp(a->sessions[i].digest, d, KNUT_SERVE__DIGEST) == 0;
        if (eq && !got) {
            got = a->sessions[i].expires_ns > now ? 1 : -1;
            snprintf(who->name, sizeof who->name, "%s", a->sessions[i].name);
        }
    }
    pthread_mutex_unlock(&a->lock);
    return got;
}

/* ---- a call ------------------------------------------------------------ */

static knut_status unauthenticated(knut_serve__who *who, knut_error *err, const char *why)
{
    who->unauthenticated = 1;
    return knut_error_set(err, KNUT_EPEER, "%s", why);
}

static knut_status bearer(knut_serve__auth *a, const char *tok, size_t n, knut_serve__who *who,
                          knut_error *err)
{
    uint8_t d[KNUT_SERVE__DIGEST];
    digest(tok, n, d);
    ptrdiff_t i = digest_find(a->tokens, a->n_tokens, d);
    if (i >= 0) {
        snprintf(who->name, sizeof who->name, "%s", a->tokens[i].name);
        return KNUT_OK;
    }
    int s = session_find(a, d, who);
    if (s > 0)
        return KNUT_OK;
    who->name[0] = 0;
    return unauthenticated(who, err, s < 0 ? "the session token has expired: authenticate "
                                             "again (Handshake with Basic credentials)"
                                           : "the bearer token is not valid here");
}

/* Handshake with Basic: checks user:password and answers a session token
 * in the `authorization` response header. */
static knut_status basic(knut_serve__auth *a, knut_net_grpc_call *call, const char *b64,
                         size_t n, knut_serve__who *who, knut_error *err)
{
    uint8_t raw[MAX_BASIC + 1];
    size_t len = 0;
    if (knut_serve__b64_decode(b64, n, raw, MAX_BASIC, &len) != 0) {
        wipe(raw, sizeof raw);
        return unauthenticated(who, err, "the Basic credentials are not base64");
    }
    raw[len] = 0;
    char *colon = memchr(raw, ':', len);
    knut_status st = KNUT_OK;
    if (!colon || memchr(raw, 0, len)) {
        st = unauthenticated(who, err, "the Basic credentials are not user:password");
        goto cleanup;
    }
    *colon = 0;
    const char *user = (const char *)raw, *pw = colon + 1;
    size_t pwn = len - (size_t)(colon + 1 - (char *)raw);
    const knut_serve__user *u = NULL;
    for (size_t i = 0; i < a->n_users; i++)
        if (strcmp(a->users[i].name, user) == 0)
            u = &a->users[i];
    /* an unknown user costs as much as a known one: the time does not say
     * which users exist; a known user cheaper than the dearest (a plain
     * password, fewer iterations) pays the difference on the dummy */
    int ok = user_verify(u ? u : &a->dummy, pw, pwn) && u;
    if (u && u->iterations < a->dummy.iterations) {
        knut_serve__user pad = a->dummy;
        pad.iterations = a->dummy.iterations - u->iterations;
        (void)user_verify(&pad, pw, pwn);
    }
    if (!ok) {
        st = unauthenticated(who, err, "wrong user name or password");
        goto cleanup;
    }
    snprintf(who->name, sizeof who->name, "%s", u->name);
    char token[2 * SESSION_BYTES + 1], header[sizeof token + 8];
    st = session_new(a, u->name, token, sizeof token, err);
    if (st == KNUT_OK) {
        int hn = snprintf(header, sizeof header, "Bearer %s", token);
        st = knut_net_grpc_call_add_header(call, "authorization", header, (size_t)hn, err);
    }
    wipe(token, sizeof token);
    wipe(header, sizeof header);
    if (st == KNUT_OK)
        KNUT_LOG(KNUT_LOG_INFO, SERVE_LOG, "Handshake: '%s' authenticated, session token issued "
                 "(valid %lld s)", who->name, (long long)(a->ttl_ns / 1000000000));
cleanup:
    wipe(raw, sizeof raw);
    return st;
}

knut_status knut_serve__auth_call(knut_serve *s, knut_net_grpc_call *call, int handshake,
                                  knut_serve__who *who, knut_error *err)
{
    knut_serve__auth *a = &s->auth;
    memset(who, 0, sizeof *who);
    who->auth = a;
    if (!a->on)
        return KNUT_OK;
    const knut_net_grpc_header *h =
        knut_net_grpc_metadata_find(knut_net_grpc_call_metadata(call), "authorization");
    knut_status st;
    if (h) {
        const char *v = h->value;
        if (h->len > 7 && strncasecmp(v, "Bearer ", 7) == 0)
            st = bearer(a, v + 7, h->len - 7, who, err);
        else if (h->len > 6 && strncasecmp(v, "Basic ", 6) == 0 && handshake)
            st = basic(a, call, v + 6, h->len - 6, who, err);
        else if (h->len > 6 && strncasecmp(v, "Basic ", 6) == 0)
            st = unauthenticated(who, err, "Basic credentials are taken by Handshake, which "
                                           "answers a bearer token for the other calls");
        else
            st = unauthenticated(who, err, "the authorization header is neither Bearer nor "
                                           "Basic");
    } else if (knut_net_grpc_call_peer_subject(call, who->name, sizeof who->name)) {
        st = KNUT_OK; /* mutual TLS: the CA vouched for the subject */
    } else {
        st = unauthenticated(who, err, "authentication required: send 'authorization: Bearer "
                                       "<token>', or Basic credentials on Handshake");
    }
    if (st != KNUT_OK)
        KNUT_LOG(KNUT_LOG_INFO, SERVE_LOG, "%s: unauthenticated: %s",
                 knut_net_grpc_call_method(call), err->message);
    return st;
}
