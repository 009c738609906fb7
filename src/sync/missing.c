/*
 * Edge rows whose endpoint vertex does not exist, per table
 * (`missing_endpoints:`): never skipped silently. skip leaves the edge out
 * and counts it (round log, metrics, and a note on the files' done
 * entries, so `knut sync status` shows it); fail records the file failed
 * naming the first missing vertex; wait (the default) keeps the file
 * pending, so it is tried again each round until the vertex arrives, and
 * fails it, naming the vertex, once the file is older (by its mtime) than
 * `missing_endpoints_timeout`. The file's mtime is the clock, so the wait
 * survives restarts and `--once` runs alike. A `mode: full` table skips
 * by default (its snapshot may keep edges to vertices it deleted) and
 * cannot wait (the snapshot applies whole, or fails).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sync_int.h"

knut_status knut_sync__missing_parse(const knut_conf *n, const char *table, knut_sync_table *t,
                                     knut_error *err)
{
    const knut_conf *m = knut_conf_get(n, "missing_endpoints");
    const knut_conf *to = knut_conf_get(n, "missing_endpoints_timeout");
    /* A full snapshot applies whole, and its edges to vertices it no
     * longer has are expected: skip (counted) there, wait elsewhere. */
    t->missing_endpoints =
        t->mode == KNUT_SYNC_MODE_FULL ? KNUT_SYNC_MISSING_SKIP : KNUT_SYNC_MISSING_WAIT;
    t->missing_timeout_ms = (int64_t)KNUT_SYNC_MISSING_TIMEOUT_DEFAULT_S * 1000;
    if (m) {
        const char *s = knut_conf_str(m);
        if (s && strcmp(s, "wait") == 0)
            t->missing_endpoints = KNUT_SYNC_MISSING_WAIT;
        else if (s && strcmp(s, "skip") == 0)
            t->missing_endpoints = KNUT_SYNC_MISSING_SKIP;
        else if (s && strcmp(s, "fail") == 0)
            t->missing_endpoints = KNUT_SYNC_MISSING_FAIL;
        else
            return knut_error_set(err, KNUT_EINVAL,
                                  "%s:%d:%d: table '%s': missing_endpoints must be wait, skip "
                                  "or fail, not '%s'",
                                  knut_conf_file(m), knut_conf_line(m), knut_conf_col(m), table,
                                  s ? s : "");
    }
    if (m && t->mode == KNUT_SYNC_MODE_FULL && t->missing_endpoints == KNUT_SYNC_MISSING_WAIT)
        return knut_error_set(err, KNUT_EINVAL,
                              "%s:%d:%d: table '%s': missing_endpoints: wait is not for mode: "
                              "full (a snapshot applies whole): use skip or fail",
                              knut_conf_file(m), knut_conf_line(m), knut_conf_col(m), table);
    if (to) {
        double sec = 0;
        knut_status st = knut_conf_get_f64(n, "missing_endpoints_timeout", &sec, err);
        if (st != KNUT_OK)
            return st;
        if (!(sec >= 0 && sec <= 365.0 * 86400))
            return knut_error_set(err, KNUT_EINVAL,
                                  "%s:%d:%d: table '%s': missing_endpoints_timeout must be "
                                  "seconds in 0..31536000",
                                  knut_conf_file(to), knut_conf_line(to), knut_conf_col(to),
                                  table);
        if (t->missing_endpoints != KNUT_SYNC_MISSING_WAIT)
            return knut_error_set(err, KNUT_EINVAL,
                                  "%s:%d:%d: table '%s': missing_endpoints_timeout needs "
                                  "missing_endpoints: wait",
                                  knut_conf_file(to), knut_conf_line(to), knut_conf_col(to),
                                  table);
        t->missing_timeout_ms = (int64_t)(sec * 1000);
    }
    return KNUT_OK;
}

int knut_sync__missing_sink_policy(const knut_sync_table *t)
{
    /* wait is fail at the sink: the apply stops, nothing is recorded, and
     * the round decides (knut_sync__missing_wait) */
    return t->missing_endpoints == KNUT_SYNC_MISSING_SKIP ? KNUT_GRAPH_MISSING_SKIP
                                                          : KNUT_GRAPH_MISSING_FAIL;
}

/* "edges skipped: WORKS_AT: 3 (missing Person {id: 7}); MANAGES: 1 (...)"
 * over m's sets. The sinks count per edge set, not per file: files applied
 * together share one note, which says so. */
static void note(knut_graph_mutation *m, size_t n_files, char *out, size_t cap)
{
    size_t len = 0;
    char head[64] = "edges skipped: ";
    if (n_files > 1)
        snprintf(head, sizeof head, "edges skipped in this batch of %zu files: ", n_files);
    out[0] = '\0';
    for (size_t i = 0; i < knut_graph_mutation_count(m, KNUT_GRAPH_SET_EDGE); i++) {
        const knut_graph_set *es = knut_graph_mutation_get(m, KNUT_GRAPH_SET_EDGE, i);
        if (es->skipped <= 0 || len >= cap)
            continue;
        int w = snprintf(out + len, cap - len, "%s%s: %lld (missing %s)",
                         len ? "; " : head, es->type, (long long)es->skipped,
                         es->missing);
        len = w < 0 ? cap : len + (size_t)w;
    }
}

void knut_sync__missing_note(knut_graph_mutation *m, sync_entry *entries, size_t n, char *buf,
                             size_t cap)
{
    size_t n_done = 0;
    for (size_t i = 0; i < n; i++)
        n_done += strcmp(entries[i].status, "done") == 0;
    note(m, n_done, buf, cap);
    for (size_t i = 0; buf[0] && i < n; i++)
        if (strcmp(entries[i].status, "done") == 0) /* not a full table's tombstone */
            entries[i].reason = buf;
}

knut_status knut_sync__missing_commit_fn(void *ctx, struct knut_duck_conn *conn, knut_error *err)
{
    sync_missing_commit *c = ctx;
    knut_sync__missing_note(c->m, c->entries, c->n, c->note, c->note_cap);
    return knut_sync__ledger_commit_fn(c->inner, conn, err);
}

void knut_sync__missing_report(struct knut_sync *s, const knut_sync_table *t,
                               knut_graph_mutation *m)
{
    for (size_t i = 0; i < knut_graph_mutation_count(m, KNUT_GRAPH_SET_EDGE); i++) {
        const knut_graph_set *es = knut_graph_mutation_get(m, KNUT_GRAPH_SET_EDGE, i);
        if (es->skipped <= 0)
            continue;
        knut_log_emit(KNUT_LOG_WARN, SYNC_LOG,
                      (knut_log_field[]){KNUT_LF_INT("round", s->round),
                                         KNUT_LF_STR("table", t->name),
                                         KNUT_LF_STR("type", es->type),
                                         KNUT_LF_INT("edges_skipped", es->skipped),
                                         KNUT_LF_STR("missing", es->missing)},
                      5, "edges skipped");
        knut_sync__metrics_edges_skipped(s->metrics, t, es->type, es->skipped);
        sync_table_note *note = knut_sync__note(s, t->name); /* for knut sync status */
        if (note) {
            note->edges_skipped += es->skipped;
            s->status_dirty = 1;
        }
    }
}

int knut_sync__missing_wait(const knut_sync_table *t, const sync_file *f, knut_status st,
                            knut_error *err)
{
    if (st != KNUT_EINVAL || !err || err->detail != KNUT_GRAPH_ERR_MISSING_ENDPOINT ||
        t->missing_endpoints != KNUT_SYNC_MISSING_WAIT)
        return 0;
    int64_t age_ms = (knut_clock_wall_us() * 1000 - f->mtime_ns) / 1000000;
    if (age_ms < t->missing_timeout_ms)
        return 1;
    /* waited long enough: the file fails, saying how long it waited */
    char msg[KNUT_ERROR_MSG_MAX];
    snprintf(msg, sizeof msg, "%s", err->message);
    knut_error_set(err, KNUT_EINVAL, "%s (waited %.0f s: missing_endpoints_timeout)", msg,
                   (double)t->missing_timeout_ms / 1000.0);
    return 0;
}
