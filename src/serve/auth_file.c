/*
 * The auth file and the tokens of the environment, read once at start.
 * The file holds secrets, so it must be readable by its owner only (mode
 * 0600 or stricter); its lines are
 *
 *   token NAME SECRET                 a bearer token for identity NAME
 *   user  NAME PASSWORD               Basic on Handshake, a plain password,
 *   user  NAME pbkdf2-sha256$ITER$SALT$HEX   or its PBKDF2-HMAC-SHA256 hash
 *   allow IDENTITY PATTERN...         what IDENTITY may read ("*": anyone)
 *
 * with '#' comments and fields split by blanks ("double quotes" for a
 * field with blanks, such as a certificate subject). Errors name the file
 * and the line, never what the line holds.
 */
#include <errno.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "serve_int.h"

#define AUTH_FILE_MAX ((size_t)1 << 20)
#define MAX_FIELDS 64
/* Every Basic attempt, even for an unknown user, costs the dearest user's
 * iterations (auth.c): the cap bounds what one unauthenticated request can
 * make the server compute (2M: about a second on one core). */
#define MAX_ITERATIONS 2000000L
#define DEFAULT_TTL_MS ((int64_t)3600 * 1000)

static void sha256(const void *p, size_t n, uint8_t *out)
{
    unsigned int len = 0;
    EVP_Digest(p, n, out, &len, EVP_sha256(), NULL);
}

/* A name: printable ASCII, 1 to KNUT_SERVE__MAX_IDENT - 1 bytes. */
static int name_ok(const char *s)
{
    size_t n = strlen(s);
    for (const char *p = s; *p; p++)
        if (*p < 0x20 || *p > 0x7e)
            return 0;
    return n > 0 && n < KNUT_SERVE__MAX_IDENT;
}

static knut_status add_token(knut_serve__auth *a, const char *name, const char *tok,
                             knut_error *err)
{
    knut_serve__secret *t = realloc(a->tokens, (a->n_tokens + 1) * sizeof *t);
    if (!t)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    a->tokens = t;
    if (!(t[a->n_tokens].name = strdup(name)))
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    sha256(tok, strlen(tok), t[a->n_tokens].digest);
    a->n_tokens++;
    return KNUT_OK;
}

static int hex_decode(const char *s, uint8_t *out, size_t n)
{
    if (strlen(s) != 2 * n)
        return -1;
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        if (sscanf(s + 2 * i, "%2x", &v) != 1)
            return -1;
        out[i] = (uint8_t)v;
    }
    return 0;
}

/* pbkdf2-sha256$ITER$SALT$HEX, or a plain password. */
static knut_status add_user(knut_serve__auth *a, const char *name, const char *pw,
                            const char *where, knut_error *err)
{
    knut_serve__user u = {0};
    static const char prefix[] = "pbkdf2-sha256$";
    if (strncmp(pw, prefix, sizeof prefix - 1) == 0) {
        const char *p = pw + sizeof prefix - 1;
        char *end;
        errno = 0;
        long it = strtol(p, &end, 10);
        const char *salt = *end == '$' ? end + 1 : NULL;
        const char *hex = salt ? strchr(salt, '$') : NULL;
        if (errno || it < 1 || it > MAX_ITERATIONS || !hex || hex == salt ||
            hex_decode(hex + 1, u.hash, KNUT_SERVE__DIGEST) != 0)
            return knut_error_set(err, KNUT_EINVAL, "%s: a pbkdf2-sha256 hash is "
                                                    "pbkdf2-sha256$ITERATIONS$SALT$HEX (32 "
                                                    "bytes of hex)", where);
        u.iterations = it;
        u.salt = strndup(salt, (size_t)(hex - salt));
    } else {
        sha256(pw, strlen(pw), u.hash);
    }
    u.name = strdup(name);
    knut_serve__user *v = realloc(a->users, (a->n_users + 1) * sizeof *v);
    if (!u.name || (u.iterations && !u.salt) || !v) {
        free(u.name);
        free(u.salt);
        if (v)
            a->users = v;
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    }
    a->users = v;
    v[a->n_users++] = u;
    return KNUT_OK;
}

static knut_status add_rule(knut_serve__auth *a, char **f, size_t n, const char *where,
                            knut_error *err)
{
    knut_serve__rule r = {0};
    knut_status st = KNUT_OK;
    if (!(r.ident = strdup(f[1])) || !(r.patterns = calloc(n - 2, sizeof *r.patterns)))
        st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
    for (size_t i = 2; st == KNUT_OK && i < n; i++) {
        if (knut_serve__pattern_check(f[i]) != 0)
            st = knut_error_set(err, KNUT_EINVAL, "%s: table pattern '%.200s': TABLE, "
                                                  "SCHEMA.TABLE or CATALOG.SCHEMA.TABLE, each "
                                                  "part a name or '*' globs", where, f[i]);
        else if (!(r.patterns[r.n++] = strdup(f[i])))
            st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
    }
    knut_serve__rule *v = st == KNUT_OK ? realloc(a->rules, (a->n_rules + 1) * sizeof *v) : NULL;
    if (st == KNUT_OK && !v)
        st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
    if (st != KNUT_OK) {
        for (size_t i = 0; i < r.n; i++)
            free(r.patterns[i]);
        free(r.patterns);
        free(r.ident);
        return st;
    }
    a->rules = v;
    v[a->n_rules++] = r;
    return KNUT_OK;
}

/* Splits line (modified) into fields; -1 for an unclosed quote or too many. */
static int split(char *line, char **f, size_t *n)
{
    *n = 0;
    char *p = line;
    for (;;) {
        p += strspn(p, " \t");
        if (!*p || *p == '#')
            return 0;
        if (*n == MAX_FIELDS)
            return -1;
        if (*p == '"') {
            char *q = strchr(p + 1, '"');
            if (!q)
                return -1;
            *q = 0;
            f[(*n)++] = p + 1;
            p = q + 1;
            if (*p && *p != ' ' && *p != '\t')
                return -1;
            continue;
        }
        f[(*n)++] = p;
        p += strcspn(p, " \t");
        if (*p)
            *p++ = 0;
    }
}

static knut_status parse_line(knut_serve__auth *a, char *line, const char *where,
                              knut_error *err)
{
    char *f[MAX_FIELDS];
    size_t n;
    if (split(line, f, &n) != 0)
        return knut_error_set(err, KNUT_EINVAL, "%s: an unclosed quote or over %d fields",
                              where, MAX_FIELDS);
    if (n == 0)
        return KNUT_OK;
    int tok = strcmp(f[0], "token") == 0, user = strcmp(f[0], "user") == 0;
    if (tok || user) {
        if (n != 3 || !name_ok(f[1]))
            return knut_error_set(err, KNUT_EINVAL, "%s: expected '%s NAME SECRET' (a name of "
                                                    "printable characters, a secret without "
                                                    "blanks)", where, f[0]);
        return tok ? add_token(a, f[1], f[2], err) : add_user(a, f[1], f[2], where, err);
    }
    if (strcmp(f[0], "allow") == 0) {
        if (n < 3 || !name_ok(f[1]))
            return knut_error_set(err, KNUT_EINVAL, "%s: expected 'allow IDENTITY "
                                                    "PATTERN...'", where);
        return add_rule(a, f, n, where, err);
    }
    /* the word is not shown: a line of a bare secret would be quoted */
    return knut_error_set(err, KNUT_EINVAL, "%s: unknown directive (expected token, user or "
                                            "allow)", where);
}

static knut_status read_file(knut_serve__auth *a, const char *path, knut_error *err)
{
    struct stat sb;
    if (stat(path, &sb) != 0)
        return knut_error_set(err, errno == ENOENT ? KNUT_ENOTFOUND : KNUT_EIO,
                              "auth file '%s': %s", path, strerror(errno));
    if (sb.st_mode & (S_IRWXG | S_IRWXO))
        return knut_error_set(err, KNUT_EINVAL, "auth file '%s' holds secrets and is readable "
                                                "by others (mode %03o): chmod 600 it", path,
                              (unsigned)(sb.st_mode & 0777));
    knut_buf b = KNUT_BUF_INIT;
    knut_status st = knut_file_read(path, AUTH_FILE_MAX, &b, err);
    if (st == KNUT_OK && memchr(b.data, 0, b.len))
        st = knut_error_set(err, KNUT_EINVAL, "auth file '%s': holds a NUL byte", path);
    char *p = b.data;
    for (size_t line = 1; st == KNUT_OK && p && *p; line++) {
        char *nl = p + strcspn(p, "\r\n");
        char *next = *nl ? nl + 1 + (nl[0] == '\r' && nl[1] == '\n') : nl;
        *nl = 0;
        char where[300];
        snprintf(where, sizeof where, "auth file '%.200s' line %zu", path, line);
        st = parse_line(a, p, where, err);
        p = next;
    }
    OPENSSL_cleanse(b.data, b.cap);
    knut_buf_reset(&b);
    return st;
}

/* KNUT_SERVE_TOKEN style: "[NAME:]TOKEN ..." (NAME defaults to "token"). */
static knut_status read_tokens(knut_serve__auth *a, const char *list, knut_error *err)
{
    char *copy = strdup(list);
    if (!copy)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    knut_status st = KNUT_OK;
    char *save = NULL;
    for (char *t = strtok_r(copy, " \t\r\n,", &save); st == KNUT_OK && t;
         t = strtok_r(NULL, " \t\r\n,", &save)) {
        char *colon = strchr(t, ':');
        const char *name = "token", *tok = t;
        if (colon) {
            *colon = 0;
            name = t;
            tok = colon + 1;
        }
        if (!*tok || !name_ok(name))
            st = knut_error_set(err, KNUT_EINVAL, "tokens of the environment: expected "
                                                  "[NAME:]TOKEN, separated by blanks");
        else
            st = add_token(a, name, tok, err);
    }
    OPENSSL_cleanse(copy, strlen(list));
    free(copy);
    return st;
}

knut_status knut_serve__auth_load(knut_serve__auth *a, const knut_serve_options *o,
                                  knut_error *err)
{
    memset(a, 0, sizeof *a);
    pthread_mutex_init(&a->lock, NULL);
    a->ttl_ns = (o->session_ttl_ms > 0 ? o->session_ttl_ms : DEFAULT_TTL_MS) * 1000000;
    /* what an unknown user is checked against: the same cost, no match */
    sha256("", 0, a->dummy.hash);
    a->dummy.hash[0] ^= 1;
    if (!o->auth_file && !(o->auth_tokens && *o->auth_tokens))
        return KNUT_OK;
    a->on = 1;
    knut_status st = o->auth_file ? read_file(a, o->auth_file, err) : KNUT_OK;
    if (st == KNUT_OK && o->auth_tokens)
        st = read_tokens(a, o->auth_tokens, err);
    if (st != KNUT_OK)
        return st;
    /* the unknown user costs what the dearest known one does */
    for (size_t i = 0; i < a->n_users; i++)
        if (a->users[i].iterations > a->dummy.iterations)
            a->dummy.iterations = a->users[i].iterations;
    if (a->dummy.iterations && !(a->dummy.salt = strdup("no such user")))
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    if (!(a->sessions = calloc(KNUT_SERVE__MAX_SESSIONS, sizeof *a->sessions)))
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    int mtls = o->tls && o->tls->ca_file;
    if (a->n_tokens == 0 && a->n_users == 0 && !mtls)
        return knut_error_set(err, KNUT_EINVAL, "auth: no token, no user and no client "
                                                "certificates (--tls-ca): nobody could connect");
    KNUT_LOG(KNUT_LOG_INFO, SERVE_LOG, "authentication on: %zu tokens, %zu users%s; %s",
             a->n_tokens, a->n_users, mtls ? ", client certificates" : "",
             a->n_rules ? "allow-list" : "every identity reads everything");
    return KNUT_OK;
}

void knut_serve__auth_free(knut_serve__auth *a)
{
    for (size_t i = 0; i < a->n_tokens; i++)
        free(a->tokens[i].name);
    for (size_t i = 0; i < a->n_users; i++) {
        free(a->users[i].name);
        free(a->users[i].salt);
    }
    free(a->dummy.salt);
    for (size_t i = 0; i < a->n_rules; i++) {
        for (size_t j = 0; j < a->rules[i].n; j++)
            free(a->rules[i].patterns[j]);
        free(a->rules[i].patterns);
        free(a->rules[i].ident);
    }
    if (a->tokens)
        OPENSSL_cleanse(a->tokens, a->n_tokens * sizeof *a->tokens);
    if (a->users)
        OPENSSL_cleanse(a->users, a->n_users * sizeof *a->users);
    if (a->sessions)
        OPENSSL_cleanse(a->sessions, KNUT_SERVE__MAX_SESSIONS * sizeof *a->sessions);
    free(a->tokens);
    free(a->users);
    free(a->rules);
    free(a->sessions);
    pthread_mutex_destroy(&a->lock);
    memset(a, 0, sizeof *a);
}
