/*
 * Rounds of `mode: full` tables: the table's current files together are
 * its complete snapshot. A round does nothing until a file is new,
 * changed (by content) or removed since the ledger recorded the set; then
 * it stages every current file, upserts what they map to, deletes what the
 * graph holds of the table's labels and edge types beyond the snapshot
 * (full_keys.c) and, in the same apply, records every file done and every
 * removed file as a tombstone. A snapshot that is not whole (a file still
 * being written, a file failed) applies nothing: deleting against half a
 * snapshot would delete live data.
 */
#include <stdlib.h>
#include <string.h>

#include "sync_int.h"

/* Files of one snapshot: each is staged into its own table first. */
#define SYNC_FULL_MAX_FILES 1024

static sync_entry entry_of(const knut_sync_table *t, const sync_file *f, const char *status,
                           const char *reason, int64_t round, int64_t rows)
{
    sync_entry e = {(char *)t->name, f->path, (char *)f->hash, (char *)status, (char *)reason,
                    f->size, f->mtime_ns, round, rows, NULL};
    return e;
}

static int live(const sync_entry *e)
{
    return strcmp(e->status, SYNC_STATUS_REMOVED) != 0;
}

static int path_cmp(const void *key, const void *item)
{
    return strcmp(key, ((const sync_file *)item)->path);
}

/* What changed since the ledger: *changed, *pending, the first failed
 * unchanged file (*blocked), and the live entries whose file is gone
 * (tombstones to write, in *gone). */
static knut_status survey(knut_sync *s, const knut_sync_table *t, sync_file_list *files,
                          int *changed, int64_t *pending, const sync_entry **blocked,
                          sync_entry **gone, size_t *n_gone, knut_error *err)
{
    *changed = 0;
    *pending = 0;
    *blocked = NULL;
    *gone = NULL;
    *n_gone = 0;
    for (size_t i = 0; i < files->n; i++) {
        sync_file *f = &files->items[i];
        sync_entry *e = knut_sync__ledger_find(&s->ledger, t->name, f->path);
        if (e && live(e) && e->size == f->size && e->mtime_ns == f->mtime_ns) {
            if (!*blocked && strcmp(e->status, "failed") == 0)
                *blocked = e;
            continue;
        }
        int stable = 0;
        knut_error herr = KNUT_ERROR_INIT;
        if (knut_sync__file_hash(f, &stable, &herr) != KNUT_OK || !stable) {
            (*pending)++;
            continue;
        }
        if (e && live(e) && e->hash && strcmp(e->hash, f->hash) == 0) {
            sync_entry ne = *e; /* touched, same bytes: remember the new mtime */
            ne.size = f->size;
            ne.mtime_ns = f->mtime_ns;
            knut_status st = knut_sync__ledger_record(&s->ledger, &ne, 1, err);
            if (st != KNUT_OK)
                return st;
            if (!*blocked && strcmp(e->status, "failed") == 0)
                *blocked = knut_sync__ledger_find(&s->ledger, t->name, f->path);
            continue;
        }
        *changed = 1;
    }
    for (size_t i = 0; i < s->ledger.n; i++) {
        const sync_entry *e = &s->ledger.items[i];
        if (strcmp(e->table, t->name) != 0 || !live(e) ||
            (files->n > 0 && /* bsearch wants an array, even of none */
             bsearch(e->path, files->items, files->n, sizeof *files->items, path_cmp)))
            continue;
        sync_entry *g = realloc(*gone, (*n_gone + 1) * sizeof *g);
        if (!g)
            return knut_error_set(err, KNUT_ENOMEM, "out of memory");
        *gone = g;
        g[(*n_gone)++] = (sync_entry){e->table, e->path, NULL, SYNC_STATUS_REMOVED, NULL,
                                      -1, -1, s->round, 0, NULL};
        *changed = 1;
    }
    return KNUT_OK;
}

/* Drops the staged files, the snapshot and the sink's old keys. */
void knut_sync__full_drop_staged(knut_sync *s, const knut_sync_table *t, size_t n)
{
    knut_duck_conn *c = NULL;
    char sql[64];
    if (knut_sync__stage_conn(&c, s->stage, NULL) != KNUT_OK)
        return;
    for (size_t i = 0; i < n; i++) {
        snprintf(sql, sizeof sql, "DROP TABLE IF EXISTS _knut_m%zu", i);
        knut_duck_exec(c, sql, NULL);
    }
    for (size_t i = 0; i < t->n_vertices; i++) {
        snprintf(sql, sizeof sql, "DROP TABLE IF EXISTS _knut_old_v%zu", i);
        knut_duck_exec(c, sql, NULL);
    }
    for (size_t i = 0; i < t->n_edges + t->n_fk_edges; i++) {
        snprintf(sql, sizeof sql, "DROP TABLE IF EXISTS _knut_old_e%zu", i);
        knut_duck_exec(c, sql, NULL);
    }
    knut_duck_conn_close(c);
    knut_sync__stage_batch_drop(s->stage);
}

/* Stages every file; bad ones are recorded failed (*bad counts them),
 * files that moved since the survey are *pending. */
static knut_status stage_all(knut_sync *s, const knut_sync_table *t, sync_file_list *files,
                             sync_entry *done, int *idx, int64_t *rows, int64_t *bad,
                             int64_t *pending, knut_error *err)
{
    knut_status st = KNUT_OK;
    *rows = 0;
    *bad = 0;
    for (size_t i = 0; i < files->n && st == KNUT_OK; i++) {
        sync_file *f = &files->items[i];
        int64_t n = 0;
        knut_error ferr = KNUT_ERROR_INIT;
        idx[i] = (int)i;
        if (!f->hash[0]) {
            /* unchanged since recorded (size, mtime): the survey did not
             * hash it, and the recorded hash still holds */
            const sync_entry *e = knut_sync__ledger_find(&s->ledger, t->name, f->path);
            int stable = 0;
            if (e && e->hash && strlen(e->hash) < sizeof f->hash)
                snprintf(f->hash, sizeof f->hash, "%s", e->hash);
            else if (knut_sync__file_hash(f, &stable, &ferr) != KNUT_OK || !stable) {
                (*pending)++;
                continue;
            }
        }
        if (knut_sync__stage_file(s->stage, t, f, (int)i, &n, &ferr) != KNUT_OK) {
            sync_entry e = entry_of(t, f, "failed", ferr.message, s->round, 0);
            knut_log_emit(KNUT_LOG_WARN, SYNC_LOG,
                          (knut_log_field[]){KNUT_LF_INT("round", s->round),
                                             KNUT_LF_STR("table", t->name),
                                             KNUT_LF_STR("file", f->path),
                                             KNUT_LF_STR("reason", ferr.message)},
                          4, "file failed");
            st = knut_sync__ledger_record(&s->ledger, &e, 1, err);
            (*bad)++;
            continue;
        }
        done[i] = entry_of(t, f, "done", NULL, s->round, n);
        *rows += n;
    }
    return st;
}

knut_status knut_sync__full_table(knut_sync *s, const knut_sync_table *t, sync_file_list *files,
                                  sync_full_result *r, knut_error *err)
{
    sync_entry *gone = NULL, *done = NULL;
    size_t n_gone = 0;
    int *idx = NULL, changed = 0;
    const sync_entry *blocked = NULL;
    knut_graph_mutation *m = NULL;
    int64_t rows = 0, bad = 0;
    knut_status st = survey(s, t, files, &changed, &r->pending, &blocked, &gone, &n_gone, err);
    if (st != KNUT_OK || !changed || r->pending > 0)
        goto cleanup; /* idle, or wait for the whole snapshot */
    if (blocked) {
        st = knut_error_set(err, KNUT_EINVAL,
                            "full table '%s': snapshot incomplete: file %s failed (%s); fix or "
                            "remove it", t->name, blocked->path,
                            blocked->reason ? blocked->reason : "");
        goto cleanup;
    }
    if (files->n == 0) {
        st = knut_error_set(err, KNUT_EINVAL,
                            "full table '%s': every file is gone from %s: refusing to delete the "
                            "table's whole graph (leave a file with no rows to empty it)",
                            t->name, t->path);
        goto cleanup;
    }
    if (files->n > SYNC_FULL_MAX_FILES) {
        st = knut_error_set(err, KNUT_ETOOBIG,
                            "full table '%s': %zu files, a snapshot may have at most %d", t->name,
                            files->n, SYNC_FULL_MAX_FILES);
        goto cleanup;
    }
    done = calloc(files->n + n_gone, sizeof *done);
    idx = calloc(files->n, sizeof *idx);
    if (!done || !idx) {
        st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
        goto cleanup;
    }
    st = stage_all(s, t, files, done, idx, &rows, &bad, &r->pending, err);
    r->failed += bad;
    if (st != KNUT_OK || bad > 0 || r->pending > 0)
        goto cleanup; /* not a whole snapshot: apply nothing */
    st = knut_sync__stage_batch(s->stage, idx, files->n, 0, err);
    /* An empty snapshot upserts nothing; its column types (a header-only
     * CSV reads as text) must not meet the stored ones. */
    if (st == KNUT_OK)
        st = rows > 0 ? knut_sync__map_build(s->stage, t, &m, err)
                      : knut_graph_mutation_new(&m, err);
    if (st == KNUT_OK)
        st = knut_sync__full_deletes(s, t, rows, m, err);
    if (st == KNUT_OK && s->valkey) /* shared ledger: no apply without the lease */
        st = knut_sync__valkey_lease_check(s->valkey, err);
    if (st == KNUT_OK) {
        if (n_gone)
            memcpy(done + files->n, gone, n_gone * sizeof *gone);
        st = knut_sync__ledger_apply(s, m, done, files->n + n_gone, &r->sink, err);
        if (st == KNUT_OK)
            knut_sync__missing_report(s, t, m); /* missing.c: log + metrics */
    }
    if (st == KNUT_OK) {
        /* committed: now memory may know it */
        st = knut_sync__ledger_remember(&s->ledger, done, files->n + n_gone, err);
        r->files += (int64_t)files->n;
        r->rows += rows;
    }
cleanup:
    knut_graph_mutation_free(m);
    if (done)
        knut_sync__full_drop_staged(s, t, files->n);
    free(done);
    free(idx);
    free(gone);
    return st;
}
