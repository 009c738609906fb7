/*
 * Rounds of tables with `iceberg:` (docs/sync.md "Iceberg tables"). The
 * ledger holds one entry per such table: its path the pseudo path
 * "iceberg:<table or folder>", its hash the last applied snapshot id (16
 * hex digits), its mtime that snapshot's commit time. A round loads the
 * table's current metadata; when the current snapshot is another one, the
 * row-level changelog since the recorded snapshot (src/iceberg/changes.c;
 * every row as INSERT when none is recorded) is written by DuckDB's COPY
 * into one Parquet file and that file goes down the path of a dropped cdc
 * file: staged, mapped (each key's last event), applied with the new
 * entry as the ledger commit — in the store's transaction for the
 * embedded store, so a kill -9 leaves the old snapshot recorded and the
 * restart computes the same changelog again. `mode: full` tables, and cdc
 * tables whose recorded snapshot is no longer an ancestor of the current
 * one (expired, rolled back, a table recreated), apply the whole current
 * snapshot with full.c's deletes of what it lacks.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "knut/iceberg.h"
#include "sync_int.h"

/* The changelog's SQL text can be long (one read_parquet per commit). */
#define ICE_SQL_MAX ((size_t)512 << 20)
/* Appends per changelog applied (ice_next), and the longest lineage walked. */
#define ICE_COMMITS_PER_APPLY 8
#define ICE_LINEAGE_MAX 100000

static knut_status ice_load(const knut_sync_table *t, knut_iceberg_table **out, knut_error *err)
{
    const knut_sync_iceberg *ib = t->iceberg;
    knut_iceberg_ref ref = {ib->catalog ? KNUT_ICEBERG_CATALOG_SQLITE : KNUT_ICEBERG_CATALOG_PATH,
                            ib->catalog ? ib->catalog : ib->path, ib->catalog_name,
                            ib->identifier};
    char *meta = NULL;
    knut_status st = knut_iceberg_catalog_locate(&ref, &meta, err);
    if (st == KNUT_OK)
        st = knut_iceberg_table_load(out, meta, err);
    free(meta);
    return st != KNUT_OK ? knut_error_prefix(err, "table '%s': iceberg: ", t->name) : st;
}

/* The snapshot the ledger records as applied; 0 when none is. */
static int ice_applied(knut_sync *s, const knut_sync_table *t, int64_t *id)
{
    const sync_entry *e = knut_sync__ledger_find(&s->ledger, t->name, t->iceberg->key);
    if (!e || strcmp(e->status, "done") != 0 || !e->hash || strlen(e->hash) != 16)
        return 0;
    *id = (int64_t)strtoull(e->hash, NULL, 16);
    return 1;
}

/*
 * The SELECT whose rows go into the file: the changelog without its
 * ordinal and snapshot columns (they would become properties), in its
 * order (commit, then a commit's DELETEs first): within one file the
 * last event of a key wins. A full apply keeps no _change_type either.
 */
static knut_status ice_sql(knut_buf *q, const knut_iceberg_table *it, int64_t from, int64_t to,
                           int keep_tag, knut_error *err)
{
    knut_buf ch;
    knut_buf_init(&ch, ICE_SQL_MAX);
    knut_status st = knut_iceberg_changes_sql(&ch, it, from, to, err);
    if (st == KNUT_OK) {
        /* No second ORDER BY: the changelog is sorted already, and a
         * projection keeps its order (preserve_insertion_order, DuckDB's
         * default, which the COPY into the file relies on too). */
        knut_buf_printf(q, "SELECT * EXCLUDE (_change_ordinal, _commit_snapshot_id%s) FROM (%s)",
                        keep_tag ? "" : ", " KNUT_SYNC_CHANGE_COLUMN, ch.data);
        st = knut_buf_check(q, err);
    }
    knut_buf_reset(&ch);
    return st;
}

/* err (NULL-safe) gets what `from` says. */
static knut_status err_take(knut_error *err, const knut_error *from)
{
    if (err)
        *err = *from;
    return from->code;
}

/*
 * The snapshot that ends the next apply after `from` on the way to cur
 * (by parent links). A changelog query reads the whole table twice for
 * each commit that is not an append (changes.c), and DuckDB holds buffers
 * per file read at once, so a long window (a sync that was down, or
 * killed before it committed) is taken in steps, each applied and
 * recorded on its own: at most one such commit per step, and at most
 * ICE_COMMITS_PER_APPLY commits. Memory stays that of one commit, and
 * every step that commits is progress. KNUT_ENOTFOUND when `from` is not
 * an ancestor of cur.
 */
static knut_status ice_next(const knut_iceberg_table *it, int64_t from, int64_t cur,
                            int64_t *to, knut_error *err)
{
    const knut_iceberg_snapshot **win = NULL, *sn = knut_iceberg_table_snapshot(it, cur);
    size_t n = 0, cap = 0;
    knut_status st = KNUT_OK;
    while (sn && sn->snapshot_id != from) {
        if (n == ICE_LINEAGE_MAX) {
            st = knut_error_set(err, KNUT_ETOOBIG, "%s: more than %d commits after snapshot "
                                "%" PRId64, it->metadata_path, ICE_LINEAGE_MAX, from);
            goto cleanup;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            const knut_iceberg_snapshot **w = realloc(win, cap * sizeof *w);
            if (!w) {
                st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
                goto cleanup;
            }
            win = w;
        }
        win[n++] = sn; /* newest first */
        sn = sn->parent_id >= 0 ? knut_iceberg_table_snapshot(it, sn->parent_id) : NULL;
    }
    if (!sn) {
        st = knut_error_set(err, KNUT_ENOTFOUND,
                            "%s: snapshot %" PRId64 " is not an ancestor of %" PRId64
                            " (expired, rolled back, or the table was created again): a full "
                            "resync is needed", it->metadata_path, from, cur);
        goto cleanup;
    }
    /* The appends after a heavy commit stay in its step: an overwrite is
     * a delete and an append (pyiceberg commits both), and only in one
     * changelog does a key's last event make the pair an upsert; apart,
     * the delete would take the vertex's edges with it. */
    *to = cur;
    for (size_t i = n, k = 0, heavy = 0; i-- > 0; k++) { /* oldest first */
        heavy += strcmp(win[i]->operation, "append") != 0 &&
                 strcmp(win[i]->operation, "replace") != 0;
        if (heavy > 1) {
            *to = win[i + 1]->snapshot_id; /* it starts the next step */
            break;
        }
        if (k + 1 == ICE_COMMITS_PER_APPLY) {
            *to = win[i]->snapshot_id;
            break;
        }
    }
cleanup:
    free(win);
    return st;
}

/* Writes the changes after from up to to (from -1: all of to) into a file,
 * applies it with the entry recording to (step.c); *done = 0 when it did
 * not commit without that being an error (a data error, a wait). */
static knut_status ice_step(knut_sync *s, const knut_sync_table *t, const knut_iceberg_table *it,
                            int64_t from, int64_t to, int full, const char *note,
                            sync_table_stats *ts, int *done, knut_error *err)
{
    knut_buf q;
    char *file = NULL, hash[17];
    const knut_iceberg_snapshot *snap = knut_iceberg_table_snapshot(it, to);
    *done = 0;
    knut_buf_init(&q, ICE_SQL_MAX);
    /* a full apply is staged as the table's mode stages: cdc keeps the tag */
    knut_status st = ice_sql(&q, it, from, to, t->mode == KNUT_SYNC_MODE_CDC, err);
    if (st == KNUT_OK)
        st = knut_sync__step_write(s->stage, q.data, &file, err);
    knut_buf_reset(&q);
    if (st != KNUT_OK)
        return st;
    snprintf(hash, sizeof hash, "%016" PRIx64, (uint64_t)to);
    return knut_sync__step_apply(s, t, file, snap ? snap->timestamp_ms * 1000000 : 0, full,
                                 t->iceberg->key, hash, note, ts, done, err);
}

knut_status knut_sync__iceberg_table(knut_sync *s, const knut_sync_table *t, sync_table_stats *ts,
                                     knut_error *err)
{
    knut_iceberg_table *it = NULL;
    char note[KNUT_ERROR_MSG_MAX];
    int64_t from = -1, cur, to;
    int done = 1, full = t->mode == KNUT_SYNC_MODE_FULL;
    knut_error cerr = KNUT_ERROR_INIT;
    knut_status st = ice_load(t, &it, err);
    if (st != KNUT_OK || it->current_snapshot_id < 0)
        goto cleanup; /* no snapshot yet: nothing to sync */
    cur = it->current_snapshot_id;
    int have = ice_applied(s, t, &from);
    if (have && from == cur)
        goto cleanup; /* idle */
    if (full || !have) {
        /* the whole current snapshot (with no snapshot applied yet, the
         * cdc changelog "from the start" is the same rows, as INSERTs) */
        st = ice_step(s, t, it, -1, cur, full, NULL, ts, &done, err);
        goto cleanup;
    }
    st = ice_next(it, from, cur, &to, &cerr);
    if (st == KNUT_ENOTFOUND) {
        /* the lineage broke: only the whole snapshot is safe to apply */
        snprintf(note, sizeof note, "full resync at snapshot %" PRId64 ": %.900s", cur,
                 cerr.message);
        char cur_hex[17];
        snprintf(cur_hex, sizeof cur_hex, "%016" PRIx64, (uint64_t)cur);
        knut_sync__step_log(
            KNUT_LOG_WARN, s, t, cur_hex, cerr.message,
            "iceberg lineage broken: the recorded snapshot is not an ancestor of the "
                "current one; resyncing the whole current snapshot (what it lacks is deleted)");
        st = knut_sync__step_owns(s, t, err);
        if (st != KNUT_OK)
            knut_error_prefix(err, "table '%s': iceberg: a full resync is needed (%s), but: ",
                              t->name, cerr.message);
        else
            st = ice_step(s, t, it, -1, cur, 1, note, ts, &done, err);
        goto cleanup;
    }
    if (st != KNUT_OK) {
        err_take(err, &cerr);
        goto cleanup;
    }
    /* step by step up to the current snapshot; a step that did not
     * commit ends the table's round (the next round starts there again) */
    for (;;) {
        st = ice_step(s, t, it, from, to, 0, NULL, ts, &done, err);
        if (st != KNUT_OK || !done || to == cur)
            break;
        from = to;
        if ((st = ice_next(it, from, cur, &to, err)) != KNUT_OK)
            break;
    }
cleanup:
    knut_iceberg_table_free(it);
    return st;
}

knut_status knut_sync__iceberg_schema_file(knut_duck_db *db, const knut_sync_table *t, char **out,
                                           knut_error *err)
{
    knut_iceberg_table *it = NULL;
    knut_buf q;
    knut_buf_init(&q, ICE_SQL_MAX);
    knut_status st = ice_load(t, &it, err);
    *out = NULL;
    if (st == KNUT_OK) {
        /* from the start to the current snapshot: the current schema's
         * columns (a table without a snapshot too); no row is read */
        st = ice_sql(&q, it, -1, -1, t->mode == KNUT_SYNC_MODE_CDC, err);
        knut_buf_puts(&q, " LIMIT 0");
        if (st == KNUT_OK)
            st = knut_buf_check(&q, err);
    }
    if (st == KNUT_OK)
        st = knut_sync__step_write(db, q.data, out, err);
    knut_buf_reset(&q);
    knut_iceberg_table_free(it);
    return st;
}
