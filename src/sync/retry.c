/*
 * `knut sync retry`: re-queues failed files on purpose (a file failed by a
 * sink that refused a value, say, once the sink is fixed), or, with skip,
 * marks them done without reading them, so a cdc table's changelog goes
 * on past a file the operator gave up on. A re-queued entry keeps its
 * place in the ledger but no longer matches any file (mtime -1, no hash),
 * so the next round reads the file as changed; every backend stores that
 * as it stores any entry (the shared ledger under the table's lease).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "sync_int.h"

#define RETRY_SKIPPED "skipped on purpose (knut sync retry --skip)"

/* 1 if the ledger's path names the file the operator gave (as written, or
 * the same file through another relative path). */
static int same_file(const char *entry_path, const char *given)
{
    if (strcmp(entry_path, given) == 0)
        return 1;
    char a[PATH_MAX], b[PATH_MAX];
    return realpath(entry_path, a) && realpath(given, b) && strcmp(a, b) == 0;
}

/* The matching failed entries of table t, rewritten (re-queued or done). */
static knut_status retry_table(knut_sync *s, const knut_sync_table *t,
                               const knut_sync_retry_options *o, int64_t *n, knut_error *err)
{
    knut_status st = KNUT_OK;
    for (size_t i = 0; i < s->ledger.n && st == KNUT_OK; i++) {
        const sync_entry *e = &s->ledger.items[i];
        if (strcmp(e->table, t->name) != 0 || strcmp(e->status, "failed") != 0 ||
            (o->file && !same_file(e->path, o->file)))
            continue;
        sync_entry ne = *e;
        if (o->skip) { /* done as it is: the same size, mtime and hash */
            ne.status = "done";
            ne.reason = RETRY_SKIPPED;
            ne.rows = 0;
        } else { /* matches no file any more: read again next round */
            ne.mtime_ns = -1;
            ne.hash = NULL;
        }
        st = knut_sync__ledger_record(&s->ledger, &ne, 1, err);
        if (st == KNUT_OK)
            (*n)++;
    }
    return st;
}

knut_status knut_sync_retry(knut_sync *s, const knut_sync_retry_options *o, int64_t *n,
                            knut_error *err)
{
    KNUT_ASSERT_ARG(err, s && o && n);
    KNUT_CHECK_VERSION(o, KNUT_SYNC_RETRY_OPTIONS_VERSION, err);
    *n = 0;
    int found = 0;
    knut_status st = KNUT_OK;
    for (size_t i = 0; i < s->cfg->n_tables && st == KNUT_OK; i++) {
        const knut_sync_table *t = &s->cfg->tables[i];
        if (o->table && strcmp(o->table, t->name) != 0)
            continue;
        found = 1;
        int skip = 0; /* shared ledger: entries change only under the lease */
        if (s->valkey)
            st = knut_sync__valkey_table_begin(s->valkey, &s->ledger, t->name, &skip, err);
        if (st == KNUT_OK && skip)
            st = knut_error_set(err, KNUT_EAGAIN,
                                "table '%s': another instance holds its lease; try again",
                                t->name);
        else if (st == KNUT_OK) {
            st = retry_table(s, t, o, n, err);
            if (s->valkey)
                knut_sync__valkey_table_end(s->valkey);
        }
    }
    if (st == KNUT_OK && !found)
        st = knut_error_set(err, KNUT_ENOTFOUND, "%s: no table '%s'", s->cfg->file, o->table);
    return st;
}
