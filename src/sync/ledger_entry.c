/*
 * One ledger entry as JSON: the one encoder and decoder of the file ledger
 * (an "entries" array in one document) and the Valkey ledger (one hash
 * value per entry). The format is what both have always written: an object
 * of exactly the keys table, path, size, mtime, hash, status, reason,
 * round, rows (hash and reason null when absent), plus config, the table's
 * config hash (written when known; optional on load, so entries written
 * before it load).
 *
 * Decoding is strict, since a ledger decides which files are never read
 * again: every key must be there with its type and range, unknown keys are
 * refused, and each message names the ledger entry and the key. Encoding
 * checks the same rules first, so nothing is written that would not load.
 */
#include "sync_int.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* The longest hash: SHA-256 in hex (older ledgers hold a 16-digit FNV-1a). */
#define ENTRY_HASH_MAX 64

static const char *const entry_keys[] = {"table", "path",   "size",  "mtime", "hash",
                                         "status", "reason", "round", "rows",  "config"};
#define N_ENTRY_KEYS (sizeof entry_keys / sizeof entry_keys[0])
/* The keys every entry holds; "config" (the table's config hash) came
 * later: an entry written before it loads with config NULL. */
#define N_ENTRY_KEYS_REQUIRED 9

void knut_sync__entry_reset(sync_entry *e)
{
    free(e->table);
    free(e->path);
    free(e->hash);
    free(e->status);
    free(e->reason);
    free(e->config);
    memset(e, 0, sizeof *e);
}

static knut_status bad(knut_error *err, const char *where, const char *key, const char *what)
{
    return knut_error_set(err, KNUT_EPARSE, "%s: \"%s\" %s", where, key, what);
}

/* The rules on an entry in memory, shared by both directions. */
static knut_status entry_check(const sync_entry *e, const char *where, knut_error *err)
{
    const char *names[] = {"table", "path", "status"};
    const char *req[] = {e->table, e->path, e->status};
    for (size_t i = 0; i < 3; i++)
        if (!req[i] || !*req[i])
            return bad(err, where, names[i], "must be a non-empty string");
    if (strcmp(e->status, "done") != 0 && strcmp(e->status, "failed") != 0 &&
        strcmp(e->status, SYNC_STATUS_REMOVED) != 0)
        return bad(err, where, "status", "must be \"done\", \"failed\" or \"removed\"");
    const char *hex[] = {e->hash, e->config}, *hex_key[] = {"hash", "config"};
    for (size_t i = 0; i < 2; i++) {
        size_t n = hex[i] ? strlen(hex[i]) : 0;
        if (hex[i] && (n > ENTRY_HASH_MAX || strspn(hex[i], "0123456789abcdef") != n))
            return bad(err, where, hex_key[i], "must be null or at most 64 lowercase hex digits");
    }
    /* A tombstone (full snapshots) records the gone file's size as -1. */
    if (e->size < (strcmp(e->status, SYNC_STATUS_REMOVED) == 0 ? -1 : 0))
        return bad(err, where, "size", "must be >= 0 (-1 only when \"removed\")");
    if (e->round < 0)
        return bad(err, where, "round", "must be >= 0");
    if (e->rows < 0)
        return bad(err, where, "rows", "must be >= 0");
    size_t bytes = strlen(e->table) + strlen(e->path) + strlen(e->status) +
                   (e->hash ? strlen(e->hash) : 0) + (e->reason ? strlen(e->reason) : 0);
    if (bytes > SYNC_ENTRY_MAX)
        return knut_error_set(err, KNUT_ETOOBIG, "%s: entry of %zu bytes of text (cap %d)", where,
                              bytes, SYNC_ENTRY_MAX);
    return KNUT_OK;
}

knut_status knut_sync__entry_encode(knut_buf *out, const sync_entry *e, const char *where,
                                    knut_error *err)
{
    knut_buf_clear(out);
    knut_status st = entry_check(e, where, err);
    if (st != KNUT_OK)
        return st;
    /* json_pack refuses text that is not UTF-8 (the only way it fails but
     * for memory): a file name of other bytes cannot be in a JSON ledger. */
    json_t *o = json_pack("{s:s, s:s, s:I, s:I, s:s?, s:s, s:s?, s:I, s:I}", "table", e->table,
                          "path", e->path, "size", (json_int_t)e->size, "mtime",
                          (json_int_t)e->mtime_ns, "hash", e->hash, "status", e->status,
                          "reason", e->reason, "round", (json_int_t)e->round, "rows",
                          (json_int_t)e->rows);
    /* config only when known: an entry without it reads as it always did */
    if (o && e->config && json_object_set_new(o, "config", json_string(e->config)) != 0) {
        json_decref(o);
        o = NULL;
    }
    if (!o)
        return knut_error_set(err, KNUT_EINVAL,
                              "%s: cannot encode the entry of '%s' (not UTF-8?)", where, e->path);
    char *text = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    if (!text)
        return knut_error_set(err, KNUT_ENOMEM, "%s: out of memory", where);
    size_t len = strlen(text);
    if (len > SYNC_ENTRY_MAX)
        st = knut_error_set(err, KNUT_ETOOBIG, "%s: entry of %zu bytes (cap %d)", where, len,
                            SYNC_ENTRY_MAX);
    else if ((st = knut_buf_append(out, text, len)) != KNUT_OK)
        st = knut_buf_check(out, err);
    free(text);
    return st;
}

/* A string key: NULL for JSON null where nullable; a copy, else. */
static knut_status get_str(const json_t *o, const char *key, int nullable, const char *where,
                           char **out, knut_error *err)
{
    const json_t *v = json_object_get(o, key);
    if (nullable && json_is_null(v))
        return KNUT_OK;
    if (!json_is_string(v))
        return bad(err, where, key, nullable ? "must be a string or null" : "must be a string");
    /* Both ledgers parse without JSON_ALLOW_NUL: no string holds a NUL. */
    if (!(*out = strdup(json_string_value(v))))
        return knut_error_set(err, KNUT_ENOMEM, "%s: out of memory", where);
    return KNUT_OK;
}

static knut_status get_int(const json_t *o, const char *key, const char *where, int64_t *out,
                           knut_error *err)
{
    const json_t *v = json_object_get(o, key);
    if (!json_is_integer(v))
        return bad(err, where, key, "must be an integer");
    *out = (int64_t)json_integer_value(v);
    return KNUT_OK;
}

knut_status knut_sync__entry_from_json(const struct json_t *o, const char *where, sync_entry *e,
                                       knut_error *err)
{
    memset(e, 0, sizeof *e);
    if (!json_is_object(o))
        return knut_error_set(err, KNUT_EPARSE, "%s: not a JSON object", where);
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)o, key, val) {
        size_t i = 0;
        while (i < N_ENTRY_KEYS && strcmp(key, entry_keys[i]) != 0)
            i++;
        if (i == N_ENTRY_KEYS)
            return bad(err, where, key, "is not an entry key");
    }
    for (size_t i = 0; i < N_ENTRY_KEYS_REQUIRED; i++)
        if (!json_object_get(o, entry_keys[i]))
            return bad(err, where, entry_keys[i], "is missing");
    knut_status st = KNUT_OK;
    if ((st = get_str(o, "table", 0, where, &e->table, err)) ||
        (st = get_str(o, "path", 0, where, &e->path, err)) ||
        (st = get_str(o, "status", 0, where, &e->status, err)) ||
        (st = get_str(o, "hash", 1, where, &e->hash, err)) ||
        (st = get_str(o, "reason", 1, where, &e->reason, err)) ||
        (st = get_int(o, "size", where, &e->size, err)) ||
        (st = get_int(o, "mtime", where, &e->mtime_ns, err)) ||
        (st = get_int(o, "round", where, &e->round, err)) ||
        (st = get_int(o, "rows", where, &e->rows, err)) ||
        (json_object_get(o, "config") && (st = get_str(o, "config", 1, where, &e->config, err))) ||
        (st = entry_check(e, where, err)))
        knut_sync__entry_reset(e);
    return st;
}

knut_status knut_sync__entry_decode(const char *s, size_t len, const char *where, sync_entry *e,
                                    knut_error *err)
{
    memset(e, 0, sizeof *e);
    if (len > SYNC_ENTRY_MAX)
        return knut_error_set(err, KNUT_ETOOBIG, "%s: entry of %zu bytes (cap %d)", where, len,
                              SYNC_ENTRY_MAX);
    json_error_t je;
    json_t *o = json_loadb(s, len, JSON_REJECT_DUPLICATES, &je);
    if (!o)
        return knut_error_set(err, KNUT_EPARSE, "%s: not JSON: %s (column %d)", where, je.text,
                              je.column);
    knut_status st = knut_sync__entry_from_json(o, where, e, err);
    json_decref(o);
    return st;
}
