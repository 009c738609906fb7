/*
 * Rounds of `spark:` tables with `changes: changelog` (docs/sync.md "Spark
 * tables"): an Iceberg table in a Spark catalog, followed by its
 * snapshots through Spark. The ledger entry's hash is the last applied
 * snapshot id (16 hex digits, as for `iceberg:` tables). A round asks for
 * the current snapshot of the table's main branch; when it is another one,
 * Iceberg's own changelog view between the two (the procedure
 * `<catalog>.system.create_changelog_view`, in this round's session) is
 * read into DuckDB and written, in changelog order with each commit's
 * DELETEs first, into one file that goes down the cdc path (step.c). With
 * nothing recorded, `mode: full`, or a recorded snapshot that is no longer
 * an ancestor of the current one (expired, rolled back), the whole current
 * snapshot is applied with full.c's deletes of what it lacks. Snapshot ids
 * and names go to Spark as parameters, never as text.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "knut/spark.h"
#include "sync_int.h"

/* The one int64 of the first row of q's result (*found 0: no row). */
static knut_status one_int(knut_spark_session *ss, const knut_sync_table *t, const knut_buf *q,
                           const knut_spark_param *p, size_t n, int64_t *out, int *found,
                           knut_error *err)
{
    struct ArrowArrayStream rows = {0};
    struct ArrowSchema schema = {0};
    struct ArrowArray b = {0};
    knut_arrow_view v = {0};
    *found = 0;
    knut_status st = knut_sync__spark_run(ss, t, q, p, n, &rows, err);
    int rc = st == KNUT_OK ? rows.get_schema(&rows, &schema) : 0;
    while (rc == 0 && st == KNUT_OK && (rc = rows.get_next(&rows, &b)) == 0 && b.release &&
           b.length == 0) {
        b.release(&b); /* an empty batch before the row */
    }
    if (rc != 0)
        st = knut_arrow_stream_error(&rows, rc, "the table's snapshot", err);
    if (st == KNUT_OK && b.release && b.length > 0) {
        st = knut_arrow_view_init(&v, &schema, &b, err);
        if (st == KNUT_OK && v.n_children == 1 && !knut_arrow_view_is_null(&v.children[0], 0)) {
            *out = knut_arrow_view_get_int64(&v.children[0], 0);
            *found = 1;
        }
    }
    if (b.release)
        b.release(&b);
    if (st == KNUT_OK)
        st = knut_sync__spark_drain(&rows, err);
    knut_arrow_view_reset(&v);
    knut_arrow_schema_release(&schema);
    knut_arrow_stream_release(&rows);
    return st;
}

/* q := "SELECT ... FROM <table>.<meta>" (a metadata table of Iceberg's). */
static void meta_query(knut_buf *q, const knut_sync_table *t, const char *select,
                       const char *meta, const char *where)
{
    knut_buf_clear(q);
    knut_buf_printf(q, "SELECT %s FROM ", select);
    knut_sync__spark_ident(q, t->spark->table, 1);
    knut_buf_printf(q, ".`%s` WHERE %s", meta, where);
}

/* The table's rows into DuckDB (temp table _knut_spark_rows on c): the
 * changelog view's from `from` to snap, or with from < 0 the whole table's. */
static knut_status rows_in(knut_spark_session *ss, const knut_sync_table *t, knut_duck_conn *c,
                           int64_t from, int64_t snap, knut_error *err)
{
    knut_buf q = KNUT_BUF_INIT;
    struct ArrowArrayStream rows = {0};
    char a[24], b[24];
    snprintf(a, sizeof a, "%" PRId64, from);
    snprintf(b, sizeof b, "%" PRId64, snap);
    const char *dot = strchr(t->spark->table, '.');
    int three = dot && strchr(dot + 1, '.');
    knut_status st = KNUT_OK;
    if (from < 0) {
        /* The table as it is now (VERSION AS OF takes no parameter): it may
         * be a snapshot after snap, whose changes the next round applies
         * again from snap, and a key's last event makes that converge to
         * the same rows. */
        knut_buf_puts(&q, "SELECT * FROM ");
        knut_sync__spark_ident(&q, t->spark->table, 1);
        st = knut_sync__spark_run(ss, t, &q, NULL, 0, &rows, err);
    } else {
        /* the procedure is the table's catalog's (spark_catalog for db.name) */
        knut_buf_puts(&q, "CALL ");
        if (three) { /* the first part, quoted (the config refuses backticks) */
            knut_buf_putc(&q, '`');
            knut_buf_append(&q, t->spark->table, (size_t)(dot - t->spark->table));
            knut_buf_putc(&q, '`');
        } else {
            knut_buf_puts(&q, "spark_catalog");
        }
        knut_buf_puts(&q, ".system.create_changelog_view(table => :t, changelog_view => "
                          "'knut_changes', options => map('start-snapshot-id', :a, "
                          "'end-snapshot-id', :b))");
        knut_spark_param p[3] = {
            {.name = "t", .kind = KNUT_SPARK_PARAM_STRING, .s = three ? dot + 1 : t->spark->table},
            {.name = "a", .kind = KNUT_SPARK_PARAM_STRING, .s = a},
            {.name = "b", .kind = KNUT_SPARK_PARAM_STRING, .s = b},
        };
        st = knut_sync__spark_run(ss, t, &q, p, 3, &rows, err);
        if (st == KNUT_OK)
            st = knut_sync__spark_drain(&rows, err);
        knut_arrow_stream_release(&rows);
        knut_buf_clear(&q);
        knut_buf_puts(&q, "SELECT * FROM knut_changes");
        if (st == KNUT_OK)
            st = knut_sync__spark_run(ss, t, &q, NULL, 0, &rows, err);
    }
    /* DuckDB holds them (spilling past its memory_limit) */
    if (st == KNUT_OK)
        st = knut_duck_register_stream(c, "_knut_spark_rows", &rows, err);
    knut_arrow_stream_release(&rows);
    knut_buf_reset(&q);
    return st;
}

knut_status knut_sync__spark_changelog_table(knut_sync *s, const knut_sync_table *t,
                                             sync_table_stats *ts, knut_error *err)
{
    knut_spark_session *ss = NULL;
    knut_duck_conn *c = NULL;
    knut_buf q = KNUT_BUF_INIT;
    char *file = NULL, hash[17], note[KNUT_ERROR_MSG_MAX] = "";
    int64_t cur = 0, from = -1, n = 0;
    int found = 0, done = 0, full = t->mode == KNUT_SYNC_MODE_FULL;
    knut_status st = knut_sync__spark_open(t, &ss, err);
    if (st == KNUT_OK) {
        meta_query(&q, t, "snapshot_id", "refs", "name = 'main'");
        st = one_int(ss, t, &q, NULL, 0, &cur, &found, err);
    }
    if (st != KNUT_OK || !found)
        goto cleanup; /* no snapshot yet: nothing to sync */
    const sync_entry *e0 = knut_sync__ledger_find(&s->ledger, t->name, t->spark->key);
    int other = 0; /* an entry of `changes: compare` (a fingerprint) */
    if (e0 && strcmp(e0->status, "done") == 0 && e0->hash && strlen(e0->hash) == 16)
        from = (int64_t)strtoull(e0->hash, NULL, 16);
    else if (e0 && strcmp(e0->status, "done") == 0 && e0->hash)
        other = 1;
    if (from == cur)
        goto cleanup; /* idle */
    if (other && !full)
        snprintf(note, sizeof note, "full resync at snapshot %" PRId64 ": the recorded version "
                 "is not a snapshot (the table was synced with changes: compare)", cur);
    if (from >= 0 && !full) {
        meta_query(&q, t, "count(*)", "history", "snapshot_id = :s AND is_current_ancestor");
        knut_spark_param p = {.name = "s", .kind = KNUT_SPARK_PARAM_INT64, .i = from};
        if ((st = one_int(ss, t, &q, &p, 1, &n, &found, err)) != KNUT_OK)
            goto cleanup;
        if (n == 0)
            snprintf(note, sizeof note, "full resync at snapshot %" PRId64 ": snapshot %" PRId64
                     " is not an ancestor of it (expired, rolled back, or the table was created "
                     "again)", cur, from);
    }
    if (note[0]) {
        knut_sync__step_log(KNUT_LOG_WARN, s, t, "", note,
                            "spark table resynced whole (what it lacks is deleted)");
        if ((st = knut_sync__step_owns(s, t, err)) != KNUT_OK) {
            knut_error_prefix(err, "table '%s': spark: a %s, but: ", t->name, note);
            goto cleanup;
        }
        full = 1;
    }
    int whole = full || from < 0;
    if ((st = knut_sync__stage_conn(&c, s->stage, err)) != KNUT_OK)
        goto cleanup;
    if ((st = rows_in(ss, t, c, whole ? -1 : from, cur, err)) != KNUT_OK) {
        if (!whole) /* most often: a merge-on-read commit in the window */
            knut_error_prefix(err, "Iceberg's changelog view failed (it cannot read the delete "
                              "files of merge-on-read commits; changes: compare, or iceberg: "
                              "{path} read directly, can): ");
        goto cleanup;
    }
    knut_buf_clear(&q);
    if (whole) /* every row an INSERT (a cdc table's staging wants the tag) */
        knut_buf_printf(&q, "SELECT *%s FROM _knut_spark_rows",
                        t->mode == KNUT_SYNC_MODE_CDC ? ", 'INSERT' AS " KNUT_SYNC_CHANGE_COLUMN
                                                      : "");
    else /* commit order, each commit's DELETEs (and UPDATE_BEFOREs) first */
        knut_buf_puts(&q, "SELECT * EXCLUDE (_change_ordinal, _commit_snapshot_id) FROM ("
                          "SELECT * FROM _knut_spark_rows ORDER BY _change_ordinal, "
                          "CASE WHEN " KNUT_SYNC_CHANGE_COLUMN " IN ('DELETE', 'UPDATE_BEFORE') "
                          "THEN 0 ELSE 1 END)");
    if ((st = knut_buf_check(&q, err)) == KNUT_OK)
        st = knut_sync__step_write_on(c, q.data, &file, err);
    knut_error ignore = KNUT_ERROR_INIT;
    knut_duck_exec(c, "DROP TABLE IF EXISTS _knut_spark_rows", &ignore);
    if (st != KNUT_OK)
        goto cleanup;
    snprintf(hash, sizeof hash, "%016" PRIx64, (uint64_t)cur);
    st = knut_sync__step_apply(s, t, file, (int64_t)time(NULL) * 1000000000, full, t->spark->key,
                               hash, note[0] ? note : NULL, ts, &done, err);
cleanup:
    knut_duck_conn_close(c);
    knut_spark_session_free(ss);
    knut_buf_reset(&q);
    return st;
}
