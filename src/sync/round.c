/*
 * Rounds and the round loop. A round visits every table, in the order of
 * order.c (edge tables after the tables of their endpoints; one held back
 * when a table it needs did not run), and per table finds files
 * that are new or changed since the ledger recorded them (size/mtime,
 * then the content hash), skips files still being written, stages each
 * file (a bad one is recorded failed with its reason, outside any
 * mutation, and the others go on), maps the good ones into one mutation
 * and applies it with the ledger commit. The loop around rounds is in
 * loop.c.
 */
#include <stdlib.h>
#include <string.h>

#include "sync_int.h"

static knut_status entry_fill(sync_entry *e, const knut_sync *s, const knut_sync_table *t,
                              const sync_file *f, const char *status, const char *reason,
                              int64_t round, int64_t rows)
{
    memset(e, 0, sizeof *e);
    e->table = (char *)t->name;
    e->config = (char *)knut_sync__config_hash(s, t); /* a config fix retries failures */
    e->path = f->path;
    e->hash = (char *)f->hash;
    e->status = (char *)status;
    e->reason = (char *)reason;
    e->size = f->size;
    e->mtime_ns = f->mtime_ns;
    e->round = round;
    e->rows = rows;
    return KNUT_OK;
}

typedef sync_table_stats table_stats;

static void log_table(const knut_sync *s, const knut_sync_table *t, const table_stats *ts,
                      int64_t dur_us, const char *error)
{
    knut_log_field f[] = {
        KNUT_LF_INT("round", s->round),
        KNUT_LF_STR("table", t->name),
        KNUT_LF_INT("files", ts->files),
        KNUT_LF_INT("failed_files", ts->failed),
        KNUT_LF_INT("pending_files", ts->pending),
        KNUT_LF_INT("rows", ts->rows),
        KNUT_LF_INT("vertices", ts->sink.vertices_written),
        KNUT_LF_INT("edges", ts->sink.edges_written),
        KNUT_LF_INT("deletes", ts->sink.vertices_deleted),
        KNUT_LF_INT("edges_deleted", ts->sink.edges_deleted),
        KNUT_LF_DBL("duration_ms", (double)dur_us / 1000.0),
        KNUT_LF_STR("path", ts->path ? ts->path : "merge"),
        KNUT_LF_INT("errors", ts->failed + ts->apply_failed),
        KNUT_LF_STR("error", error ? error : ""),
    };
    /* in the loop a table with nothing to do says so only at debug: an
     * idle round is one line (knut_sync_round), not one per table; a
     * single round (--once) reports every table */
    int idle = s->idle_log_ns > 0 && !error && ts->files == 0 && ts->failed == 0 &&
               ts->pending == 0;
    knut_log_level lvl = error ? KNUT_LOG_ERROR : idle ? KNUT_LOG_DEBUG : KNUT_LOG_INFO;
    if (knut_log_enabled(lvl))
        knut_log_emit(lvl, SYNC_LOG, f, sizeof f / sizeof f[0] - (error ? 0 : 1), "table %s",
                      error ? "failed" : "synced");
}

/* 1 when an unchanged entry must be read again: a failure recorded under
 * another config of the table (a fixed mapping or SQL step). */
static int config_retry(const knut_sync *s, const knut_sync_table *t, const sync_entry *e)
{
    return strcmp(e->status, "failed") == 0 && e->config &&
           strcmp(e->config, knut_sync__config_hash(s, t)) != 0;
}

/*
 * Finds the table's files to stage this round (fills cand, ts->pending).
 * A cdc table's files are a changelog (cdc_order.c): the first file that
 * is not done (still being written, failed, past the per-round cap) holds
 * back every later one, and a done file that changed behind a later done
 * one is refused rather than replayed on top of newer state.
 */
knut_status knut_sync__round_pick(knut_sync *s, const knut_sync_table *t, sync_file_list *files,
                                  size_t *cand, size_t *n_cand, table_stats *ts, knut_error *err)
{
    int cdc = t->mode == KNUT_SYNC_MODE_CDC, held = 0;
    size_t done_end = cdc ? knut_sync__cdc_done_end(&s->ledger, t, files) : 0;
    *n_cand = 0;
    for (size_t i = 0; i < files->n; i++) {
        sync_file *f = &files->items[i];
        sync_entry *e = knut_sync__ledger_find(&s->ledger, t->name, f->path);
        int retry = e && config_retry(s, t, e);
        if (e && e->size == f->size && e->mtime_ns == f->mtime_ns && !retry) {
            held |= cdc && strcmp(e->status, "done") != 0; /* failed: the rest wait */
            continue; /* done or failed, unchanged */
        }
        if (held) {
            ts->pending++; /* cdc: an earlier file of the changelog is not done */
            continue;
        }
        int stable = 0;
        knut_error herr = KNUT_ERROR_INIT;
        if (knut_sync__file_hash(f, &stable, &herr) != KNUT_OK || !stable) {
            ts->pending++; /* vanished or still growing: look again next round */
            held = cdc;
            continue;
        }
        if (e && !retry && e->hash && strcmp(e->hash, f->hash) == 0) {
            /* touched, same bytes: remember the new mtime, nothing to redo */
            sync_entry ne = *e;
            ne.size = f->size;
            ne.mtime_ns = f->mtime_ns;
            knut_status st = knut_sync__ledger_record(&s->ledger, &ne, 1, err);
            if (st != KNUT_OK)
                return st;
            continue;
        }
        if (cdc && e && strcmp(e->status, "done") == 0 && i + 1 < done_end) {
            /* an applied file rewritten behind a later applied one */
            sync_entry fe;
            entry_fill(&fe, s, t, f, "failed", NULL, s->round, 0);
            knut_status st = knut_sync__cdc_refuse(&s->ledger, &fe, files, done_end, err);
            if (st != KNUT_OK)
                return st;
            ts->failed++;
            held = 1;
            continue;
        }
        if (*n_cand == SYNC_MAX_FILES_PER_ROUND) {
            ts->pending++;
            continue;
        }
        cand[(*n_cand)++] = i;
    }
    return KNUT_OK;
}

void knut_sync__round_drop_batch(knut_sync *s)
{
    knut_sync__stage_batch_drop(s->stage);
}

/*
 * Stages files[cand[0..n)], records the bad ones failed, and applies the
 * good ones as one mutation with their ledger entries. A data error at
 * map or apply time (KNUT_EINVAL: a key type the sink refuses, a property
 * type the store cannot widen) is pinned on its file: a batch of several
 * is retried file by file, a single file is recorded failed. Other errors
 * (the sink is down) record nothing and fail the table.
 */
knut_status knut_sync__round_stage(knut_sync *s, const knut_sync_table *t, sync_file_list *files,
                                   const size_t *cand, size_t n, table_stats *ts,
                                   sync_staged *out, knut_error *err)
{
    size_t n_good = 0, *good_pos = out->good_pos;
    int *good_idx = out->good_idx;
    sync_entry *done = out->done;
    int64_t rows_total = 0;
    knut_status st = KNUT_OK;
    int cdc = t->mode == KNUT_SYNC_MODE_CDC, held = 0;
    for (size_t i = 0; st == KNUT_OK && i < n; i++) {
        sync_file *f = &files->items[cand[i]];
        int64_t rows = 0;
        knut_error ferr = KNUT_ERROR_INIT;
        if (held) {
            ts->pending++; /* cdc: an earlier file of the changelog failed or vanished */
            continue;
        }
        knut_status fst = knut_sync__stage_file(s->stage, t, f, (int)i, &rows, &ferr);
        held = cdc && fst != KNUT_OK;
        if (fst == KNUT_ENOTFOUND) {
            ts->pending++; /* vanished after the listing: gone, or back next round */
            continue;
        }
        if (fst != KNUT_OK) {
            sync_entry e;
            entry_fill(&e, s, t, f, "failed", ferr.message, s->round, 0);
            knut_log_emit(KNUT_LOG_WARN, SYNC_LOG,
                          (knut_log_field[]){KNUT_LF_INT("round", s->round),
                                             KNUT_LF_STR("table", t->name),
                                             KNUT_LF_STR("file", f->path),
                                             KNUT_LF_STR("reason", ferr.message)},
                          4, "file failed");
            st = knut_sync__ledger_record(&s->ledger, &e, 1, err);
            ts->failed++;
            continue;
        }
        entry_fill(&done[n_good], s, t, f, "done", NULL, s->round, rows);
        good_pos[n_good] = cand[i];
        good_idx[n_good++] = (int)i;
        rows_total += rows;
        s->prog.files++;
        s->prog.rows += rows;
        knut_sync__progress(s, t->name, 0);
    }
    out->n_good = n_good;
    out->rows_total = rows_total;
    return st;
}

static knut_status apply_files(knut_sync *s, const knut_sync_table *t, sync_file_list *files,
                               const size_t *cand, size_t n, table_stats *ts, knut_error *err)
{
    sync_staged sg;
    knut_graph_mutation *m = NULL;
    knut_graph_sink_stats sst = {0};
    int cdc = t->mode == KNUT_SYNC_MODE_CDC;
    int64_t t0 = knut_clock_mono_ns(), t1, t2;
    knut_status st = knut_sync__round_stage(s, t, files, cand, n, ts, &sg, err);
    size_t n_good = sg.n_good, *good_pos = sg.good_pos;
    int *good_idx = sg.good_idx;
    sync_entry *done = sg.done;
    int64_t rows_total = sg.rows_total;
    if (st != KNUT_OK || n_good == 0)
        goto cleanup;
    t1 = knut_clock_mono_ns();
    st = knut_sync__stage_batch(s->stage, good_idx, n_good, 1, err);
    t2 = knut_clock_mono_ns();
    if (st == KNUT_OK)
        st = knut_sync__map_build(s->stage, t, &m, err);
    if (st == KNUT_OK && s->valkey) /* shared ledger: no apply without the lease */
        st = knut_sync__valkey_lease_check(s->valkey, err);
    if (st == KNUT_OK) {
        /* with the ledger: in the sink's commit, or in its last MULTI/EXEC */
        st = knut_sync__ledger_apply(s, m, done, n_good, &sst, err);
    }
    if (st == KNUT_OK)
        knut_sync__missing_report(s, t, m); /* missing.c: log + metrics */
    KNUT_LOG(KNUT_LOG_DEBUG, SYNC_LOG, "table %s: %zu files staged in %.1f ms, batched in %.1f ms, "
             "mapped and applied in %.1f ms", t->name, n_good, (double)(t1 - t0) / 1e6,
             (double)(t2 - t1) / 1e6, (double)(knut_clock_mono_ns() - t2) / 1e6);
    knut_graph_mutation_free(m);
    m = NULL;
    knut_sync__round_drop_batch(s);
    if (st == KNUT_OK) {
        /* committed: now memory may know it */
        st = knut_sync__ledger_remember(&s->ledger, done, n_good, err);
        ts->files += (int64_t)n_good;
        ts->rows += rows_total;
        ts->sink.rows += sst.rows;
        ts->sink.vertices_written += sst.vertices_written;
        ts->sink.edges_written += sst.edges_written;
        ts->sink.vertices_deleted += sst.vertices_deleted;
        ts->sink.edges_deleted += sst.edges_deleted;
    } else if (st == KNUT_EINVAL && n_good > 1) {
        KNUT_LOG(KNUT_LOG_WARN, SYNC_LOG, "table %s: %s; retrying its %zu files one by one",
                 t->name, err ? err->message : "data error", n_good);
        st = KNUT_OK;
        for (size_t i = 0; i < n_good && st == KNUT_OK; i++) {
            int64_t bad = ts->failed + ts->pending;
            st = apply_files(s, t, files, &good_pos[i], 1, ts, err);
            if (cdc && ts->failed + ts->pending > bad) { /* a changelog stops at it */
                ts->pending += (int64_t)(n_good - i - 1);
                break;
            }
        }
    } else if (knut_sync__missing_wait(t, &files->items[good_pos[0]], st, err)) {
        /* missing_endpoints: wait: nothing recorded, tried again next round */
        knut_log_emit(KNUT_LOG_INFO, SYNC_LOG,
                      (knut_log_field[]){KNUT_LF_INT("round", s->round),
                                         KNUT_LF_STR("table", t->name),
                                         KNUT_LF_STR("file", done[0].path),
                                         KNUT_LF_STR("reason", err->message)},
                      4, "file waiting");
        ts->pending++;
        st = KNUT_OK;
    } else if (st == KNUT_EINVAL) {
        char reason[KNUT_ERROR_MSG_MAX];
        /* a type the sink cannot take: say how to make the files agree */
        const char *hint = err && err->detail == KNUT_GRAPH_ERR_TYPE_CHANGE
                               ? "; declare the column's type in the table's columns: to read "
                                 "every file as one type (a stored type changes only where "
                                 "lossless)"
                               : "";
        snprintf(reason, sizeof reason, "%.*s%s", (int)(sizeof reason - 1 - strlen(hint)),
                 err ? err->message : "data error", hint);
        knut_log_emit(KNUT_LOG_WARN, SYNC_LOG,
                      (knut_log_field[]){KNUT_LF_INT("round", s->round),
                                         KNUT_LF_STR("table", t->name),
                                         KNUT_LF_STR("file", done[0].path),
                                         KNUT_LF_STR("reason", reason)},
                      4, "file failed");
        done[0].status = "failed";
        done[0].reason = reason;
        done[0].rows = 0;
        st = knut_sync__ledger_record(&s->ledger, &done[0], 1, err);
        ts->failed++;
    }
cleanup:
    knut_graph_mutation_free(m);
    return st;
}

static knut_status table_round(knut_sync *s, const knut_sync_table *t, table_stats *ts,
                               knut_error *err)
{
    sync_file_list files = {0};
    size_t cand[SYNC_MAX_FILES_PER_ROUND], n_cand = 0;
    if (t->iceberg || t->spark) { /* a new version's changes, as one cdc file */
        knut_status ist = t->iceberg            ? knut_sync__iceberg_table(s, t, ts, err)
                          : t->spark->changelog ? knut_sync__spark_changelog_table(s, t, ts, err)
                                                : knut_sync__spark_table(s, t, ts, err);
        if (ist != KNUT_OK)
            ts->apply_failed = 1;
        return ist;
    }
    knut_status st = knut_sync__files_list(t, &files, err);
    if (st == KNUT_OK)
        knut_sync__no_files_note(s, t, files.n); /* check.c */
    if (st == KNUT_OK && t->mode == KNUT_SYNC_MODE_FULL) {
        sync_full_result fr = {0}; /* full.c: the whole snapshot or nothing */
        st = knut_sync__full_table(s, t, &files, &fr, err);
        ts->files += fr.files;
        ts->failed += fr.failed;
        ts->pending += fr.pending;
        ts->rows += fr.rows;
        ts->sink = fr.sink;
        n_cand = 0;
    } else if (st == KNUT_OK)
        st = knut_sync__round_pick(s, t, &files, cand, &n_cand, ts, err);
    if (st == KNUT_OK && n_cand > 0)
        st = apply_files(s, t, &files, cand, n_cand, ts, err);
    if (st != KNUT_OK)
        ts->apply_failed = 1;
    knut_sync__files_reset(&files);
    return st;
}

/* 1 (and a log record naming the table waited for) when a table table i
 * depends on failed, was skipped or was held back in this round: its edges
 * could meet missing endpoints, be skipped, and its files be recorded done. */
static int hold_back(const knut_sync *s, size_t i)
{
    size_t u = knut_sync__order_waits_for(&s->order, i);
    if (u == s->order.n)
        return 0;
    static const char *const why[] = {
        [SYNC_TABLE_FAILED] = "failed",
        [SYNC_TABLE_SKIPPED] = "was skipped (another instance holds its lease)",
        [SYNC_TABLE_HELD] = "was held back"};
    char reason[512];
    snprintf(reason, sizeof reason,
             "its edges need the vertices of table '%s', which %s this round; its files wait "
             "for the next round",
             s->cfg->tables[u].name, why[s->order.state[u]]);
    knut_log_emit(KNUT_LOG_INFO, SYNC_LOG,
                  (knut_log_field[]){KNUT_LF_INT("round", s->round),
                                     KNUT_LF_STR("table", s->cfg->tables[i].name),
                                     KNUT_LF_STR("waits_for", s->cfg->tables[u].name),
                                     KNUT_LF_STR("reason", reason)},
                  4, "table held back");
    return 1;
}

void knut_sync__round_table_done(knut_sync *s, size_t i, table_stats *ts, int64_t dur_us,
                                 knut_status st, const char *error, knut_sync_round_stats *out)
{
    const knut_sync_table *t = &s->cfg->tables[i];
    log_table(s, t, ts, dur_us, st != KNUT_OK ? error : NULL);
    if (st != KNUT_OK) {
        ts->apply_failed = 1;
        s->order.state[i] = SYNC_TABLE_FAILED;
    }
    sync_table_result res = {t, s->round, ts->files, ts->failed, ts->pending, ts->rows,
                             ts->sink.vertices_written, ts->sink.edges_written,
                             ts->sink.vertices_deleted, dur_us, !ts->apply_failed,
                             st != KNUT_OK ? error : NULL};
    knut_sync__assets_round(s->assets, &res, 1); /* queued; sent in the background */
    knut_sync__lineage_table(s->lineage, &res);
    knut_sync__metrics_table(s->metrics, &res);
    sync_table_note *note = knut_sync__note(s, t->name);
    if (note && st == KNUT_OK && ts->files > 0) { /* status: its last success */
        note->last_success_us = knut_clock_wall_us();
        s->status_dirty = 1;
    }
    s->prog.files_done += ts->files;
    if (ts->files || ts->failed)
        knut_sync__progress(s, t->name, 0);
    out->files_done += ts->files;
    out->files_failed += ts->failed;
    out->files_pending += ts->pending;
    out->tables_failed += ts->apply_failed;
    out->rows += ts->rows;
    out->vertices += ts->sink.vertices_written;
    out->edges += ts->sink.edges_written;
    out->deletes += ts->sink.vertices_deleted;
    out->edges_deleted += ts->sink.edges_deleted;
}

/* An idle round is logged at info once per s->idle_log_ns at most (the
 * loop's interval; inotify can wake rounds more often), else at debug. */
static knut_log_level idle_level(knut_sync *s)
{
    int64_t now = knut_clock_mono_ns();
    if (s->idle_log_ns > 0 && s->last_idle_log_ns && now - s->last_idle_log_ns < s->idle_log_ns)
        return KNUT_LOG_DEBUG;
    s->last_idle_log_ns = now;
    return KNUT_LOG_INFO;
}

knut_status knut_sync_round(knut_sync *s, knut_sync_round_stats *out, knut_error *err)
{
    KNUT_ASSERT_ARG(err, s && out && s->sink);
    memset(out, 0, sizeof *out);
    int64_t t0 = knut_clock_mono_ns();
    out->round = ++s->round;
    memset(&s->prog, 0, sizeof s->prog);
    s->prog.t0 = t0;
    knut_sync__order_round_begin(&s->order);
    size_t from = 0; /* bulk.c: the tables before it went in with GRAPH.BULK */
    int64_t *bulk_failed = calloc(s->cfg->n_tables ? s->cfg->n_tables : 1, sizeof *bulk_failed);
    if (!bulk_failed)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    knut_status bst = knut_sync__bulk_round(s, out, &from, bulk_failed, err);
    if (bst != KNUT_OK) {
        free(bulk_failed);
        return bst;
    }
    for (size_t k = from; k < s->cfg->n_tables; k++) {
        size_t i = s->order.idx[k]; /* order.c: endpoint tables before edge tables */
        const knut_sync_table *t = &s->cfg->tables[i];
        table_stats ts = {0};
        ts.failed = bulk_failed[i]; /* recorded by the bulk attempt (bulk.c) */
        knut_error terr = KNUT_ERROR_INIT;
        int64_t t1 = knut_clock_mono_ns();
        if (hold_back(s, i)) {
            s->order.state[i] = SYNC_TABLE_HELD; /* its files stay pending */
            out->files_failed += ts.failed;
            continue;
        }
        int skip = 0; /* shared ledger: the table's lease, or skip it */
        knut_status st = s->valkey ? knut_sync__valkey_table_begin(s->valkey, &s->ledger,
                                                                   t->name, &skip, &terr)
                                   : KNUT_OK;
        if (st == KNUT_OK && skip) {
            s->order.state[i] = SYNC_TABLE_SKIPPED; /* its dependents wait (logged) */
            continue;
        }
        s->order.state[i] = st == KNUT_OK ? SYNC_TABLE_RAN : SYNC_TABLE_FAILED;
        if (st == KNUT_OK) {
            /* a commit whose outcome was not seen is undone first (ledger_falkor.c) */
            st = knut_sync__ledger_recover(s, t->name, &terr);
            if (st == KNUT_OK)
                st = table_round(s, t, &ts, &terr);
            if (s->valkey)
                knut_sync__valkey_table_end(s->valkey);
        }
        int64_t dur_us = (knut_clock_mono_ns() - t1) / 1000;
        knut_sync__round_table_done(s, i, &ts, dur_us, st, terr.message, out);
        /* A failed apply (the sink is down or hung, a lease was lost, a
         * stop cancelled the wait) ends the round: the tables after it
         * wait for the next round. Tables run in config order and a later
         * one may hold edges to this one's vertices; applied now, against
         * a sink that came back meanwhile, those edges would find no
         * endpoint, be skipped, and their files still be recorded done. */
        if (st != KNUT_OK)
            break;
    }
    free(bulk_failed);
    out->duration_us = (knut_clock_mono_ns() - t0) / 1000;
    knut_sync__metrics_round(s->metrics, out, !(out->files_failed || out->tables_failed));
    knut_log_field f[] = {
        KNUT_LF_INT("round", out->round),         KNUT_LF_INT("files", out->files_done),
        KNUT_LF_INT("failed_files", out->files_failed),
        KNUT_LF_INT("pending_files", out->files_pending),
        KNUT_LF_INT("failed_tables", out->tables_failed), KNUT_LF_INT("rows", out->rows),
        KNUT_LF_INT("vertices", out->vertices),   KNUT_LF_INT("edges", out->edges),
        KNUT_LF_INT("deletes", out->deletes),
        KNUT_LF_INT("edges_deleted", out->edges_deleted),
        KNUT_LF_DBL("duration_ms", (double)out->duration_us / 1000.0),
    };
    knut_sync__progress(s, NULL, 1);
    knut_sync__status_file_write(s); /* status_file.c: when anything changed */
    int idle = !(out->files_failed || out->tables_failed || out->files_done);
    knut_log_level lvl = idle ? idle_level(s) : KNUT_LOG_INFO;
    if (knut_log_enabled(lvl))
        knut_log_emit(lvl, SYNC_LOG, f, sizeof f / sizeof f[0], "round %s",
                      out->files_failed || out->tables_failed ? "failed"
                      : out->files_done                      ? "done"
                                                             : "idle");
    return KNUT_OK;
}

void knut_sync__progress(knut_sync *s, const char *table, int done)
{
    if (!s->progress)
        return;
    knut_sync_progress p = {s->round,         table, s->prog.files, s->prog.rows,
                            s->prog.files_done, knut_clock_mono_ns() - s->prog.t0, done};
    s->progress(&p, s->progress_ctx);
}
