/*
 * Internals of the shared ledger (ledger_valkey.c, ledger_valkey_lease.c,
 * ledger_valkey_conn.c):
 * the Valkey/Redis connection (URL, timeouts, AUTH, one command at a time
 * without SIGPIPE), the entry encoding, and the lease state shared between
 * the round (main thread) and the renewal thread. Only these files and
 * the unit test include it.
 */
#ifndef KNUT_SYNC_LEDGER_VALKEY_INT_H
#define KNUT_SYNC_LEDGER_VALKEY_INT_H

#include <pthread.h>
#include <stdint.h>

#include "sync_int.h"

struct redisContext;
struct redisReply;

#define VK_CONNECT_MS 2000
#define VK_COMMAND_MS 5000
/* Fields per HSCAN call, so one reply stays small. */
#define VK_SCAN_COUNT "500"
/* Bytes one reply may take on the wire: room for an HSCAN page of 500
 * entries at the codec's SYNC_ENTRY_MAX each plus their fields, twice
 * over (COUNT is a hint). hiredis 0.14 has no reply cap of its own, so
 * knut_sync__vk_cmd counts what it reads (docs/sync.md, "caps"). */
#define VK_REPLY_MAX ((size_t)64 << 20)

/* Where the server is; the password is wiped on free and never printed. */
typedef struct vk_addr {
    char *host;
    int port;
    char *user, *pass;
    char peer[300]; /* "valkey host:port", for every message */
} vk_addr;

/* One connection; NULL rc: (re)connect on the next command. */
typedef struct vk_conn {
    const vk_addr *addr;
    struct redisContext *rc;
} vk_conn;

/* Parses redis://[[user]:password@]host[:port][/]. Errors never quote the
 * URL (it may hold the password). */
knut_status knut_sync__vk_addr_parse(vk_addr *a, const char *url, knut_error *err);
void knut_sync__vk_addr_reset(vk_addr *a);

/* One command (binary-safe argv) with a reply; *out is freed with
 * freeReplyObject. A connection or protocol failure closes the connection
 * (the next command reconnects) and is KNUT_EIO naming host:port; an error
 * reply is KNUT_EPEER. */
knut_status knut_sync__vk_cmd(vk_conn *c, int argc, const char **argv, const size_t *lens,
                              struct redisReply **out, knut_error *err);
void knut_sync__vk_close(vk_conn *c);

/* Field of an entry in the ledger hash: table NUL path (no name holds a NUL). */
knut_status knut_sync__vk_field(knut_buf *out, const char *table, const char *path);
/* Values of the hash are entries in the ledger codec's JSON
 * (knut_sync__entry_encode / _decode, ledger_entry.c). */
/* The hash field (unless field is NULL) and value of entry e, its path as
 * stored (relative to the config's folder when under it). */
knut_status knut_sync__vk_entry_kv(const struct sync_valkey *v, const sync_entry *e,
                                   knut_buf *field, knut_buf *value, knut_error *err);
/* A copy of the lease key held now (NULL: none, or out of memory) and
 * the table it is for ("?" when none); the caller frees the key. */
char *knut_sync__vk_lease_key_copy(struct sync_valkey *v, const char **table);
/* The structured "lease lost" warning (table, instance, reason). */
void knut_sync__vk_lease_lost_warn(struct sync_valkey *v, const char *table, const char *why);

/* The ledger version of a table (its commits counted by the server) that
 * memory holds: a lease taken on an unchanged version skips the re-read. */
typedef struct vk_seen {
    char *table;
    int64_t ver; /* -1: never read */
} vk_seen;

struct sync_valkey {
    vk_addr addr;
    vk_conn conn;          /* the round's connection */
    char *instance;        /* lease owner id */
    char *prefix;          /* "knut:sync:<name>:" */
    char *hash_key;        /* prefix + "ledger" */
    char *base;            /* the config's folder: stored paths are relative to
                            * it, so instances started from other folders or
                            * mounts agree on the keys */
    int64_t lease_ms;
    /* The lease held now (one table at a time), shared with the renewer. */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t renewer;
    int renewer_started;
    int stop;
    char *lease_key;       /* NULL: none held */
    const char *lease_table;
    uint64_t lease_gen;    /* bumped at each take: a late renewal of an
                            * earlier lease must not judge this one */
    vk_seen *seen;         /* per table, grown as tables are met */
    size_t n_seen;
    vk_seen *cur;          /* the leased table's; round thread only */
    int lost;              /* renewal found the lease gone, or could not renew */
    int64_t renewed_ns;    /* monotonic time of the last take/renewal */
    char lost_why[256];
};

#endif
