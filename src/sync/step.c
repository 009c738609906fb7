/*
 * Tables whose rows are not dropped files but a source's versions: an
 * Iceberg table's snapshots (iceberg.c), a Spark table compared with its
 * last synced state (spark.c). Each step writes what changed (or, for a
 * full apply, the whole current version) into one temporary Parquet file
 * and sends it down the path of a dropped cdc file: staged, mapped (each
 * key's last event), applied with one ledger entry that names the version
 * (in the store's transaction for the embedded store). Nothing is
 * recorded unless the apply committed.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sync_int.h"

#define STEP_SQL_MAX ((size_t)512 << 20)

knut_status knut_sync__step_write_on(knut_duck_conn *c, const char *sql, char **out,
                                    knut_error *err)
{
    const char *tmp = getenv("TMPDIR");
    knut_buf path = KNUT_BUF_INIT, q;
    knut_buf_init(&q, STEP_SQL_MAX);
    knut_buf_printf(&path, "%s/knut-step-XXXXXX.parquet", tmp && *tmp ? tmp : "/tmp");
    knut_status st = knut_buf_check(&path, err);
    int fd = st == KNUT_OK ? mkstemps(path.data, 8) : -1;
    if (st == KNUT_OK && fd < 0)
        st = knut_error_set(err, KNUT_EIO, "%s: cannot create a temporary file", path.data);
    if (fd >= 0)
        close(fd);
    if (st == KNUT_OK) {
        knut_buf_printf(&q, "COPY (%s) TO ", sql);
        st = knut_duck_literal(&q, path.data, path.len);
    }
    if (st == KNUT_OK) {
        knut_buf_puts(&q, " (FORMAT parquet)");
        st = knut_buf_check(&q, err);
    }
    if (st == KNUT_OK)
        st = knut_duck_exec(c, q.data, err);
    knut_buf_reset(&q);
    if (st != KNUT_OK) {
        if (fd >= 0)
            unlink(path.data);
        knut_buf_reset(&path);
        knut_duck_error_trim(err);
        return st;
    }
    *out = path.data; /* the buffer's text is the caller's now */
    return KNUT_OK;
}

knut_status knut_sync__step_write(knut_duck_db *db, const char *sql, char **out, knut_error *err)
{
    knut_duck_conn *c = NULL;
    knut_status st = knut_sync__stage_conn(&c, db, err);
    if (st == KNUT_OK)
        st = knut_sync__step_write_on(c, sql, out, err);
    knut_duck_conn_close(c);
    return st;
}

knut_status knut_sync__step_owns(knut_sync *s, const knut_sync_table *t, knut_error *err)
{
    knut_sync_config c = *s->cfg;
    knut_sync_table *tabs = malloc(c.n_tables * sizeof *tabs);
    if (!tabs)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    memcpy(tabs, c.tables, c.n_tables * sizeof *tabs);
    tabs[t - s->cfg->tables].mode = KNUT_SYNC_MODE_FULL;
    c.tables = tabs;
    knut_status st = knut_sync__full_check(&c, err);
    free(tabs);
    return st;
}

void knut_sync__step_log(knut_log_level lvl, const knut_sync *s, const knut_sync_table *t,
                         const char *version, const char *reason, const char *what)
{
    knut_log_emit(lvl, SYNC_LOG,
                  (knut_log_field[]){KNUT_LF_INT("round", s->round), KNUT_LF_STR("table", t->name),
                                     KNUT_LF_STR("version", version),
                                     KNUT_LF_STR("reason", reason)},
                  4, "%s", what);
}

/* Stages the file, maps it (plus full deletes) and applies it with e. */
static knut_status step_apply(knut_sync *s, const knut_sync_table *t, const sync_file *f, int full,
                              sync_entry *e, sync_table_stats *ts, int *data_error,
                              knut_error *err)
{
    knut_graph_mutation *m = NULL;
    knut_graph_sink_stats sst = {0};
    int64_t rows = 0;
    int idx = 0;
    knut_status st = knut_sync__stage_file(s->stage, t, f, 0, &rows, err);
    *data_error = st != KNUT_OK && st != KNUT_ENOMEM;
    if (st == KNUT_OK)
        st = knut_sync__stage_batch(s->stage, &idx, 1, full ? 0 : 1, err);
    if (st == KNUT_OK) /* an empty snapshot upserts nothing (full.c, the same) */
        st = rows > 0 || !full ? knut_sync__map_build(s->stage, t, &m, err)
                               : knut_graph_mutation_new(&m, err);
    if (st == KNUT_OK && full)
        st = knut_sync__full_deletes(s, t, rows, m, err);
    if (st == KNUT_OK && s->valkey) /* shared ledger: no apply without the lease */
        st = knut_sync__valkey_lease_check(s->valkey, err);
    if (st == KNUT_OK) {
        e->rows = rows;
        st = knut_sync__ledger_apply(s, m, e, 1, &sst, err);
    }
    /* at map or apply time, as for files (round.c): KNUT_EINVAL is the
     * data's (a key type the sink refuses, a type the store cannot widen) */
    *data_error = *data_error || st == KNUT_EINVAL;
    if (st == KNUT_OK)
        knut_sync__missing_report(s, t, m); /* missing.c: log + metrics */
    knut_graph_mutation_free(m);
    knut_sync__full_drop_staged(s, t, 1);
    if (st == KNUT_OK) {
        /* committed: now memory may know it */
        st = knut_sync__ledger_remember(&s->ledger, e, 1, err);
        ts->files++;
        ts->rows += rows;
        ts->sink.rows += sst.rows;
        ts->sink.vertices_written += sst.vertices_written;
        ts->sink.edges_written += sst.edges_written;
        ts->sink.vertices_deleted += sst.vertices_deleted;
        ts->sink.edges_deleted += sst.edges_deleted;
        s->prog.files++;
        s->prog.rows += rows;
    }
    return st;
}

knut_status knut_sync__step_apply(knut_sync *s, const knut_sync_table *t, char *file,
                                  int64_t mtime_ns, int full, const char *key, const char *hash,
                                  const char *note, sync_table_stats *ts, int *done,
                                  knut_error *err)
{
    sync_entry e = {(char *)t->name, (char *)key, (char *)hash, "done", (char *)note,
                    0, mtime_ns, s->round, 0, (char *)knut_sync__config_hash(s, t)};
    struct stat sb;
    int data_error = 0;
    knut_error aerr = KNUT_ERROR_INIT;
    *done = 0;
    /* the size as written (staging refuses a 0-byte file); the clock of
     * missing_endpoints: wait is the version's time */
    sync_file f = {(char *)file, stat(file, &sb) == 0 ? (int64_t)sb.st_size : 0, mtime_ns, "",
                   KNUT_SYNC_FORMAT_PARQUET};
    knut_status st = step_apply(s, t, &f, full, &e, ts, &data_error, &aerr);
    if (st == KNUT_OK) {
        *done = 1;
        knut_sync__progress(s, t->name, 0);
    } else if (knut_sync__missing_wait(t, &f, st, &aerr)) {
        /* missing_endpoints: wait: nothing recorded, tried again next round */
        knut_sync__step_log(KNUT_LOG_INFO, s, t, e.hash, aerr.message, "version waiting");
        ts->pending++;
        st = KNUT_OK;
    } else if (data_error) {
        /* nothing recorded: the next round tries the same changes again
         * (a fixed config, or a newer version, may let them through) */
        knut_sync__step_log(KNUT_LOG_WARN, s, t, e.hash, aerr.message, "version failed");
        ts->failed++;
        st = KNUT_OK;
    } else {
        if (err)
            *err = aerr;
        st = aerr.code;
    }
    unlink(file);
    free(file);
    return st;
}
