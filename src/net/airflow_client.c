/*
 * The Airflow side of asset events (docs/operations.md): one attempt at
 * recording one event, through the HTTP client of the net part.
 *
 * Airflow 3 (GET /api/v2/version answers 200): a JWT from POST
 * /auth/token, refreshed before its exp claim or after a 401; the asset id
 * found with GET /api/v2/assets?uri_pattern= and then an exact comparison
 * of `uri` (the pattern is an ILIKE substring match, and servers ignore
 * filters they do not know), cached; then POST /api/v2/assets/events with
 * {asset_id, extra}, which answers 200. Airflow 2.9+ (version 404): POST
 * /api/v1/datasets/events with {dataset_uri, extra} and HTTP Basic.
 * Airflow has no idempotency key: a retried event whose first answer was
 * lost is recorded twice; the caller's extra (a round, a run id) tells duplicates apart.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "airflow_int.h"

/* Assets read per page while looking for a URI, and pages at most. */
#define AIRFLOW_PAGE 100
#define AIRFLOW_MAX_PAGES 20
/* Refresh the token this long before it expires (clock skew, slow sends). */
#define AIRFLOW_TOKEN_MARGIN_S 60

knut_status knut_net__airflow_open(airflow_client *c, const char *url, const char *user,
                                    const char *password, const char *instance,
                                    const knut_net_http_options *http, knut_error *err)
{
    memset(c, 0, sizeof *c);
    knut_status st = knut_net_http_client_new(&c->http, url, http, err);
    if (st != KNUT_OK)
        return st; /* the caller names its option */
    c->user = strdup(user ? user : "");
    c->password = strdup(password ? password : "");
    c->instance = strdup(instance ? instance : "");
    if (!c->user || !c->password || !c->instance) {
        knut_net__airflow_close(c);
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    }
    return KNUT_OK;
}

void knut_net__airflow_close(airflow_client *c)
{
    knut_net_http_client_free(c->http);
    free(c->user);
    knut_net_secret_free(c->password);
    free(c->instance);
    knut_net_secret_free(c->token);
    for (size_t i = 0; i < c->n_ids; i++)
        free(c->ids[i].uri);
    free(c->ids);
    memset(c, 0, sizeof *c);
}

static void forget_token(airflow_client *c)
{
    knut_net_secret_free(c->token);
    c->token = NULL;
    c->token_exp_s = 0;
    knut_net_http_client_set_bearer(c->http, NULL, NULL);
}

/* The exp claim of a JWT (its middle part is base64url JSON); 0 if unreadable. */
static int64_t jwt_exp(const char *jwt)
{
    const char *p = strchr(jwt, '.'), *q = p ? strchr(p + 1, '.') : NULL;
    if (!q || q - p > 8192)
        return 0;
    unsigned char out[6144];
    size_t n = 0;
    unsigned acc = 0;
    int bits = 0;
    for (const char *s = p + 1; s < q; s++) {
        int v = *s >= 'A' && *s <= 'Z' ? *s - 'A' : *s >= 'a' && *s <= 'z' ? *s - 'a' + 26
              : *s >= '0' && *s <= '9' ? *s - '0' + 52 : *s == '-' ? 62 : *s == '_' ? 63 : -1;
        if (v < 0)
            return 0;
        acc = (acc << 6 | (unsigned)v) & 0xffffff;
        if ((bits += 6) >= 8) {
            bits -= 8;
            out[n++] = (unsigned char)(acc >> bits);
        }
    }
    json_t *claims = json_loadb((const char *)out, n, 0, NULL);
    json_t *exp = json_object_get(claims, "exp");
    int64_t v = json_is_integer(exp) ? (int64_t)json_integer_value(exp) : 0;
    json_decref(claims);
    return v;
}

/* A path for messages: up to its query (query values may be anything). */
static int path_len(const char *path)
{
    size_t n = strcspn(path, "?");
    return (int)(n > 200 ? 200 : n);
}

/*
 * A JSON request through the net part's text helper: jansson encodes the
 * body and parses a 2xx reply (*out, may be NULL: not wanted). A 2xx reply
 * that is not JSON is KNUT_EPARSE. The encoded body is wiped: a token
 * request carries the password.
 */
static knut_status request_json(airflow_client *c, const char *method, const char *path,
                                const json_t *body, long *status, json_t **out, knut_error *err)
{
    char *text = NULL;
    knut_buf reply = KNUT_BUF_INIT;
    knut_status st = KNUT_OK;
    *status = 0;
    if (out)
        *out = NULL;
    if (body && !(text = json_dumps(body, JSON_COMPACT))) {
        st = knut_error_set(err, KNUT_ENOMEM, "%s: %s %.*s: cannot encode the JSON body",
                            knut_net_http_client_peer(c->http), method, path_len(path), path);
        goto cleanup;
    }
    st = knut_net_http_client_request_json(c->http, method, path, text, status,
                                           out ? &reply : NULL, err);
    if (st != KNUT_OK || !out || reply.len == 0)
        goto cleanup;
    json_error_t je;
    if (!(*out = json_loadb(reply.data, reply.len, 0, &je)))
        st = knut_error_set(err, KNUT_EPARSE, "%s: %s %.*s: reply is not JSON (%s at byte %d)",
                            knut_net_http_client_peer(c->http), method, path_len(path), path,
                            je.text, je.position);
cleanup:
    knut_net_secret_free(text);
    knut_buf_reset(&reply);
    return st;
}

/* Airflow 3 or 2: GET /api/v2/version (not behind auth). */
static outbox_result detect(airflow_client *c, knut_error *err)
{
    long status = 0;
    knut_status st =
        request_json(c, "GET", "/api/v2/version", NULL, &status, NULL, err);
    if (st != KNUT_OK)
        return OUTBOX_RETRY;
    if (status == 200)
        c->api = 3;
    else if (status == 404)
        c->api = 2; /* Airflow 3 has no /api/v1, Airflow 2 no /api/v2 */
    else {
        knut_error_set(err, KNUT_EPEER, "%s: GET /api/v2/version: HTTP %ld",
                       knut_net_http_client_peer(c->http), status);
        return OUTBOX_RETRY;
    }
    if (c->api == 2)
        knut_net_http_client_set_basic(c->http, c->user, c->password, NULL);
    return OUTBOX_SENT;
}

static outbox_result login(airflow_client *c, knut_error *err)
{
    if (c->token && (c->token_exp_s == 0 ||
                     (int64_t)time(NULL) < c->token_exp_s - AIRFLOW_TOKEN_MARGIN_S))
        return OUTBOX_SENT;
    forget_token(c);
    json_t *body = json_pack("{s:s, s:s}", "username", c->user, "password", c->password);
    json_t *reply = NULL;
    long status = 0;
    outbox_result r = OUTBOX_RETRY;
    knut_status st =
        request_json(c, "POST", "/auth/token", body, &status, &reply, err);
    if (st != KNUT_OK)
        goto cleanup;
    const char *tok = json_string_value(json_object_get(reply, "access_token"));
    if (status < 200 || status > 299 || !tok || !*tok) {
        /* the reply's detail may echo what was sent: only the status goes out */
        knut_error_set(err, KNUT_EPEER, "%s: POST /auth/token: HTTP %ld%s",
                       knut_net_http_client_peer(c->http), status,
                       status == 401 || status == 400 ? " (user or password refused)"
                       : status >= 200 && status < 300 ? " without an access_token" : "");
        goto cleanup;
    }
    if (!(c->token = strdup(tok)) ||
        knut_net_http_client_set_bearer(c->http, c->token, err) != KNUT_OK) {
        forget_token(c);
        knut_error_set(err, KNUT_ENOMEM, "out of memory");
        goto cleanup;
    }
    c->token_exp_s = jwt_exp(c->token);
    r = OUTBOX_SENT;
cleanup:
    if (body) {
        /* the body holds the password: overwrite it before jansson frees it */
        json_t *pw = json_object_get(body, "password");
        if (pw)
            memset((char *)json_string_value(pw), 0, json_string_length(pw));
    }
    json_decref(body);
    json_decref(reply);
    return r;
}

static const airflow_asset_id *cached_id(const airflow_client *c, const char *uri)
{
    for (size_t i = 0; i < c->n_ids; i++)
        if (strcmp(c->ids[i].uri, uri) == 0)
            return &c->ids[i];
    return NULL;
}

static void forget_id(airflow_client *c, const char *uri)
{
    for (size_t i = 0; i < c->n_ids; i++)
        if (strcmp(c->ids[i].uri, uri) == 0) {
            free(c->ids[i].uri);
            c->ids[i] = c->ids[--c->n_ids];
            return;
        }
}

/* Finds the asset id of uri; *id = -1 when no asset has exactly that URI. */
static outbox_result lookup(airflow_client *c, const char *uri, int64_t *id, long *status,
                             knut_error *err)
{
    *id = -1;
    char *esc = knut_net_http_escape(uri);
    outbox_result r = OUTBOX_RETRY;
    if (!esc) {
        knut_error_set(err, KNUT_ENOMEM, "out of memory");
        return r;
    }
    for (int page = 0; page < AIRFLOW_MAX_PAGES && *id < 0; page++) {
        char path[8192];
        snprintf(path, sizeof path, "/api/v2/assets?uri_pattern=%s&limit=%d&offset=%d", esc,
                 AIRFLOW_PAGE, page * AIRFLOW_PAGE);
        json_t *reply = NULL;
        if (request_json(c, "GET", path, NULL, status, &reply, err) !=
            KNUT_OK)
            goto cleanup;
        if (*status != 200) {
            knut_error_set(err, KNUT_EPEER, "%s: GET /api/v2/assets: HTTP %ld",
                           knut_net_http_client_peer(c->http), *status);
            goto cleanup;
        }
        json_t *assets = json_object_get(reply, "assets"), *a;
        size_t i;
        json_array_foreach(assets, i, a) {
            const char *u = json_string_value(json_object_get(a, "uri"));
            json_t *jid = json_object_get(a, "id");
            if (u && json_is_integer(jid) && strcmp(u, uri) == 0) {
                *id = (int64_t)json_integer_value(jid);
                break;
            }
        }
        size_t got = json_array_size(assets);
        json_decref(reply);
        if (got < AIRFLOW_PAGE)
            break;
    }
    r = OUTBOX_SENT;
cleanup:
    free(esc);
    return r;
}

/* The caller's extra object, plus knut_instance; NULL when out of memory. */
static json_t *extra_of(const airflow_client *c, const outbox_msg *e)
{
    json_t *x = e->body ? json_loads(e->body, 0, NULL) : json_object();
    if (x && !json_is_object(x)) { /* the callers build objects: never a peer's text */
        json_decref(x);
        x = json_object();
    }
    if (x && json_object_set_new(x, "knut_instance", json_string(c->instance)) != 0) {
        json_decref(x);
        return NULL;
    }
    return x;
}

/* How a refused POST is classified (both API generations). */
static outbox_result refused(airflow_client *c, const char *what, long status, const char *uri,
                              knut_error *err)
{
    /* Airflow 2.x (FAB basic auth) answers a wrong password with 403, not 401 */
    const char *why = status == 401 ? " (not authenticated)"
                      : status == 403 && c->api == 2
                          ? " (user or password refused, or the user's role cannot create "
                            "dataset events: needs Op or Admin)"
                      : status == 403 ? " (the user's role cannot create asset events: needs op or admin)"
                      : status == 404 ? " (the asset is unknown: declare it in a DAG)"
                      : status == 400 || status == 422 ? " (the event was refused as malformed)"
                                                       : "";
    knut_error_set(err, KNUT_EPEER, "%s: %s for asset '%s': HTTP %ld%s",
                   knut_net_http_client_peer(c->http), what, uri, status, why);
    return status == 400 || status == 422 ? OUTBOX_DROP : OUTBOX_RETRY;
}

static outbox_result send_v2(airflow_client *c, const outbox_msg *e, knut_error *err)
{
    json_t *body = json_pack("{s:s, s:o}", "dataset_uri", e->key, "extra", extra_of(c, e));
    long status = 0;
    outbox_result r = OUTBOX_RETRY;
    if (!body)
        knut_error_set(err, KNUT_ENOMEM, "out of memory");
    else if (request_json(c, "POST", "/api/v1/datasets/events", body,
                                           &status, NULL, err) == KNUT_OK)
        r = status == 200 ? OUTBOX_SENT
                          : refused(c, "POST /api/v1/datasets/events", status, e->key, err);
    json_decref(body);
    return r;
}

static outbox_result send_v3(airflow_client *c, const outbox_msg *e, int relogin,
                              knut_error *err)
{
    outbox_result r = login(c, err);
    if (r != OUTBOX_SENT)
        return r;
    const airflow_asset_id *known = cached_id(c, e->key);
    int64_t id = known ? known->id : -1;
    long status = 0;
    if (!known) {
        if ((r = lookup(c, e->key, &id, &status, err)) != OUTBOX_SENT) {
            if (status == 401 && relogin) {
                forget_token(c);
                return send_v3(c, e, 0, err);
            }
            return r;
        }
        if (id < 0) {
            knut_error_set(err, KNUT_ENOTFOUND,
                           "%s: no asset with URI '%s' (declare it in a DAG, e.g. "
                           "schedule=[Asset(\"%s\")])",
                           knut_net_http_client_peer(c->http), e->key, e->key);
            return OUTBOX_RETRY;
        }
        airflow_asset_id *grown = realloc(c->ids, (c->n_ids + 1) * sizeof *grown);
        char *u = strdup(e->key);
        if (grown)
            c->ids = grown;
        if (grown && u)
            c->ids[c->n_ids++] = (airflow_asset_id){u, id};
        else
            free(u); /* not cached: found again next time */
    }
    json_t *body = json_pack("{s:I, s:o}", "asset_id", (json_int_t)id, "extra", extra_of(c, e));
    r = OUTBOX_RETRY;
    if (!body)
        knut_error_set(err, KNUT_ENOMEM, "out of memory");
    else if (request_json(c, "POST", "/api/v2/assets/events", body,
                                           &status, NULL, err) == KNUT_OK)
        r = status == 200 ? OUTBOX_SENT
                          : refused(c, "POST /api/v2/assets/events", status, e->key, err);
    json_decref(body);
    if (r == OUTBOX_SENT)
        return r;
    if (status == 404)
        forget_id(c, e->key); /* the asset was removed or the database reset */
    if (status == 401) {
        forget_token(c);
        if (relogin)
            return send_v3(c, e, 0, err); /* expired or rotated secret: once more at once */
    }
    return r;
}

outbox_result knut_net__airflow_send(airflow_client *c, const outbox_msg *e, knut_error *err)
{
    if (c->api == 0) {
        outbox_result r = detect(c, err);
        if (r != OUTBOX_SENT)
            return r;
    }
    return c->api == 3 ? send_v3(c, e, 1, err) : send_v2(c, e, err);
}

/*
 * Airflow stores an asset URI sanitised (airflow/sdk/definitions/asset):
 * scheme lower-cased, user:password@ dropped, query sorted, fragment
 * dropped, trailing slashes stripped (an empty path becomes "/"); x-*
 * schemes are kept as written. knut matches the stored URI exactly, so it
 * refuses a URI that sanitising would change and says how to write it.
 */
int knut_net_airflow_uri_check(const char *uri, char *why, size_t n)
{
    size_t len = strlen(uri), i = 0;
#define BAD(...) return snprintf(why, n, __VA_ARGS__), -1
    if (len == 0 || len > 1500)
        BAD("an asset URI has 1 to 1500 characters");
    for (const unsigned char *p = (const unsigned char *)uri; *p; p++)
        if (*p <= 0x20 || *p >= 0x7f)
            BAD("an asset URI is printable ASCII without spaces (percent-encode the rest)");
    /* uri[i] != 0 first: strchr finds the terminator in any set */
    while (uri[i] && ((uri[i] >= 'a' && uri[i] <= 'z') ||
                      (i > 0 && ((uri[i] >= '0' && uri[i] <= '9') || strchr("+.-", uri[i])))))
        i++;
    if (i == 0 || uri[i] != ':')
        BAD("an asset URI starts with a lower-case scheme, e.g. knut://graph/table");
    if (i == 7 && strncmp(uri, "airflow", 7) == 0)
        BAD("the scheme 'airflow' is reserved by Airflow");
    if (strncmp(uri, "x-", 2) == 0)
        return 0; /* kept verbatim */
    const char *rest = uri + i + 1, *path = rest;
    if (strncmp(rest, "//", 2) == 0) {
        const char *auth_end = rest + 2 + strcspn(rest + 2, "/?#");
        if (memchr(rest + 2, '@', (size_t)(auth_end - rest - 2)))
            BAD("no user or password in an asset URI (Airflow drops them; they would be "
                "stored in clear)");
        if (auth_end == rest + 2)
            BAD("an asset URI with '//' needs a host, e.g. knut://graph/table");
        if (*auth_end != '/')
            BAD("write the path too: %.*s/... (Airflow adds '/' to an empty path)",
                (int)(auth_end - uri), uri);
        path = auth_end;
    }
    if (strchr(uri, '#'))
        BAD("no fragment ('#...') in an asset URI: Airflow drops it");
    if (strchr(uri, '?'))
        BAD("no query ('?...') in an asset URI: Airflow reorders it (use an x- scheme to keep "
            "it verbatim)");
    if (uri[len - 1] == '/' && strlen(path) > 1)
        BAD("no trailing '/' in an asset URI: Airflow strips it");
#undef BAD
    return 0;
}
