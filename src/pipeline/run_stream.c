/*
 * One micro-batch of an event-time streaming flow (a WATERMARK clause,
 * maybe a WINDOW), inside the flow's transaction:
 *
 *   1. the new input rows (the FROM item over the new files / stream
 *      rows) get their event time in microseconds; rows at or behind the
 *      watermark the batch started with are late (for a window: when
 *      every window of the row has ended at or before it) and dropped,
 *      and counted;
 *   2. windowed flows keep the rows of open windows in the state table
 *      _knut."<flow>__stream_state" (with their window bounds), and the
 *      rows to aggregate this batch go to the temp table __knut_wrows:
 *      append: the windows that ended at or before the watermark (then
 *      evicted); update: the windows this batch touched (their old target
 *      rows deleted); complete: everything;
 *   3. the flow's query runs with its FROM item replaced by __knut_wrows
 *      (knut_pipeline__append_update: expectations, files, offsets);
 *   4. the new watermark (max event time - delay, never backwards) is
 *      saved in _knut.stream_state, used from the next batch on.
 *
 * All in one transaction with the output and the source checkpoint, so
 * a crash at any moment resumes at the last committed batch.
 */
#include <stdlib.h>
#include <string.h>

#include "pipeline_int.h"

typedef struct batch_counts {
    int64_t v[5]; /* rows, late, NULL event time, max event time, has max */
} batch_counts;

static knut_status read_batch(void *ctx, const knut_arrow_view *v, int64_t row, knut_error *err)
{
    (void)err;
    batch_counts *c = ctx;
    for (int i = 0; i < 5; i++)
        c->v[i] = knut_pipeline__col_i64(v, i, row);
    return KNUT_OK;
}

static void i64s(char *b, size_t n, int64_t v)
{
    snprintf(b, n, "%lld", (long long)v);
}

/* f's sql from byte from to byte to, with the file source literals in
 * that range replaced by the lists of their new files (as
 * knut_pipeline__rewrite does). */
static void range(knut_buf *b, const knut_pipeline_flow *f, knut_pipeline__strvec *per,
                  size_t from, size_t to)
{
    size_t pos = from;
    for (size_t i = 0; i < f->nsources; i++) {
        const knut_pipeline_source *src = &f->sources[i];
        if (src->at < from || src->at >= to)
            continue;
        knut_buf_append(b, f->sql + pos, src->at - pos);
        knut_buf_putc(b, '[');
        for (size_t k = 0; per && k < per[i].n; k++) {
            if (k)
                knut_buf_putc(b, ',');
            knut_duck_literal(b, per[i].v[k], strlen(per[i].v[k]));
        }
        knut_buf_putc(b, ']');
        pos = src->at + src->len;
    }
    knut_buf_append(b, f->sql + pos, to - pos);
}

/* The FROM item the WATERMARK follows (repl NULL), or the whole query
 * with that item replaced by repl. */
static void splice(knut_buf *b, const knut_pipeline_flow *f, knut_pipeline__strvec *per,
                   const char *repl)
{
    size_t at = f->stream->item_at, end = at + f->stream->item_len;
    if (!repl) {
        range(b, f, per, at, end);
        knut_buf_putc(b, '\n'); /* a trailing -- comment ends here */
        return;
    }
    range(b, f, per, 0, at);
    knut_buf_puts(b, repl);
    range(b, f, per, end, strlen(f->sql));
}

static void state_table(knut_buf *b, const knut_pipeline_flow *f)
{
    knut_pipeline__qualified(b, "_knut", f->name, "__stream_state");
}

/* ", keys" of a session window, quoted. */
static void keys(knut_buf *b, const knut_pipeline_streaming *s)
{
    for (size_t i = 0; i < s->nsession_keys; i++) {
        knut_buf_puts(b, i ? ", " : "");
        knut_duck_ident(b, s->session_keys[i]);
    }
}

knut_status knut_pipeline__stream_pending(knut_pipeline__run *r, const knut_pipeline_flow *f,
                                          int *pending, knut_error *err)
{
    *pending = 0;
    const knut_pipeline_streaming *s = f->stream;
    if (!s || !s->window || s->mode != KNUT_PIPELINE_OUTPUT_APPEND || r->dry)
        return KNUT_OK;
    int64_t n = 0;
    const char *binds[] = {f->name};
    knut_status st = knut_pipeline__scalar_i64(r->conn,
                                               "SELECT count(*) FROM _knut.stream_state WHERE "
                                               "flow = $1 AND watermark_us > coalesce(evicted_us, "
                                               "-9223372036854775807)",
                                               binds, 1, &n, err);
    *pending = n > 0;
    return st;
}

/* Step 2 for windowed flows: the pairs into the state, the rows to
 * aggregate into __knut_wrows. *touched_target: update/complete delete
 * from the target first. */
static knut_status windows(knut_pipeline__run *r, const knut_pipeline_flow *f, int fresh,
                           const char *wm, const char *new_wm, int target_exists,
                           knut_error *ferr)
{
    const knut_pipeline_streaming *s = f->stream;
    knut_buf sql = KNUT_BUF_INIT;
    knut_status st = KNUT_OK;
    int session = s->window == KNUT_PIPELINE_WINDOW_SESSION;
    knut_pipeline_output_mode mode = s->mode;
    char size[32], slide[32], off[32], gap[32];
    i64s(size, sizeof size, s->size_us);
    i64s(slide, sizeof slide, s->slide_us);
    i64s(off, sizeof off, s->start_us);
    i64s(gap, sizeof gap, s->gap_us);
    if (fresh) {
        /* Every (row, window) pair whose window has not ended at the
         * watermark; a session row is kept when it is after it. */
        knut_buf_puts(&sql, "CREATE OR REPLACE TEMP TABLE __knut_pairs AS ");
        if (session) {
            knut_buf_puts(&sql, "SELECT * FROM __knut_in WHERE __knut_et IS NOT NULL AND "
                                "(__knut_et > $1::BIGINT OR $1::BIGINT IS NULL)");
        } else {
            knut_buf_puts(&sql,
                          "SELECT __knut_ws, __knut_ws + $2::BIGINT AS __knut_we, * EXCLUDE "
                          "(__knut_ws, __knut_base, __knut_k) FROM (SELECT *, __knut_base - "
                          "__knut_k * $3::BIGINT AS __knut_ws FROM (SELECT *, __knut_et - "
                          "(((__knut_et - $4::BIGINT) % $3::BIGINT) + $3::BIGINT) % $3::BIGINT "
                          "AS __knut_base, unnest(range(0, ($2::BIGINT + $3::BIGINT - 1) // "
                          "$3::BIGINT)) AS __knut_k FROM __knut_in WHERE __knut_et IS NOT NULL)) "
                          "WHERE __knut_ws + $2::BIGINT > __knut_et AND (__knut_ws + $2::BIGINT "
                          "> $1::BIGINT OR $1::BIGINT IS NULL)");
        }
        const char *binds[] = {wm, size, slide, off};
        if ((st = knut_pipeline__step(r, &sql, binds, session ? 1 : 4, ferr)) != KNUT_OK)
            goto done;
        knut_buf_puts(&sql, "CREATE TABLE IF NOT EXISTS ");
        state_table(&sql, f);
        knut_buf_puts(&sql, " AS SELECT * FROM __knut_pairs LIMIT 0");
        if ((st = knut_pipeline__step(r, &sql, NULL, 0, ferr)) != KNUT_OK)
            goto done;
        knut_buf_puts(&sql, "INSERT INTO ");
        state_table(&sql, f);
        knut_buf_puts(&sql, " BY NAME SELECT * FROM __knut_pairs");
        if ((st = knut_pipeline__step(r, &sql, NULL, 0, ferr)) != KNUT_OK)
            goto done;
    } else {
        /* A no-data batch: the state table exists (the watermark moved). */
        knut_buf_puts(&sql, "CREATE OR REPLACE TEMP TABLE __knut_pairs AS SELECT * FROM ");
        state_table(&sql, f);
        knut_buf_puts(&sql, " LIMIT 0");
        if ((st = knut_pipeline__step(r, &sql, NULL, 0, ferr)) != KNUT_OK)
            goto done;
    }
    const char *exclude = session ? "__knut_rid, __knut_et, __knut_new, __knut_sid, __knut_ws, "
                                    "__knut_we"
                                  : "__knut_ws, __knut_we, __knut_et";
    knut_buf_puts(&sql, "CREATE OR REPLACE TEMP TABLE __knut_win AS ");
    if (session) {
        /* Sessions from the open rows: a row starts a new one when it is
         * after the previous row's end (event + gap); merging is
         * inclusive, so a row exactly at the end extends the session. */
        knut_buf_puts(&sql, "SELECT *, min(__knut_et) OVER k AS __knut_ws, max(__knut_et) OVER k "
                            "+ $1::BIGINT AS __knut_we FROM (SELECT *, sum(__knut_new) OVER (");
        knut_buf_puts(&sql, "PARTITION BY ");
        keys(&sql, s);
        knut_buf_puts(&sql, " ORDER BY __knut_et, __knut_rid ROWS UNBOUNDED PRECEDING) AS "
                            "__knut_sid FROM (SELECT *, CASE WHEN __knut_et <= lag(__knut_et) "
                            "OVER (PARTITION BY ");
        keys(&sql, s);
        knut_buf_puts(&sql, " ORDER BY __knut_et, __knut_rid) + $1::BIGINT THEN 0 ELSE 1 END AS "
                            "__knut_new FROM (SELECT rowid AS __knut_rid, * FROM ");
        state_table(&sql, f);
        knut_buf_puts(&sql, "))) WINDOW k AS (PARTITION BY ");
        keys(&sql, s);
        knut_buf_puts(&sql, ", __knut_sid)");
    } else {
        /* Only the windows this batch aggregates, not the whole state. */
        knut_buf_puts(&sql, "SELECT rowid AS __knut_rid, * FROM ");
        state_table(&sql, f);
        if (mode == KNUT_PIPELINE_OUTPUT_APPEND)
            knut_buf_puts(&sql, " WHERE __knut_we <= $1::BIGINT");
        else if (mode == KNUT_PIPELINE_OUTPUT_UPDATE)
            knut_buf_puts(&sql, " w WHERE EXISTS (SELECT 1 FROM __knut_pairs p WHERE "
                                "p.__knut_ws = w.__knut_ws AND p.__knut_we = w.__knut_we)");
    }
    const char *b1[] = {session ? gap : wm};
    size_t nb1 = session || mode == KNUT_PIPELINE_OUTPUT_APPEND ? 1 : 0;
    if ((st = knut_pipeline__step(r, &sql, b1, nb1, ferr)) != KNUT_OK)
        goto done;
    knut_buf_printf(&sql, "CREATE OR REPLACE TEMP TABLE __knut_wrows AS SELECT "
                          "make_timestamp(__knut_ws) AS window_start, make_timestamp(__knut_we) "
                          "AS window_end, * EXCLUDE (%s%s) FROM __knut_win w WHERE ",
                    exclude, session ? "" : ", __knut_rid");
    if (mode == KNUT_PIPELINE_OUTPUT_APPEND)
        knut_buf_puts(&sql, "__knut_we <= $1::BIGINT");
    else if (mode == KNUT_PIPELINE_OUTPUT_UPDATE)
        knut_buf_puts(&sql, "EXISTS (SELECT 1 FROM __knut_pairs p WHERE p.__knut_ws = "
                            "w.__knut_ws AND p.__knut_we = w.__knut_we) AND $1::BIGINT IS NOT "
                            "DISTINCT FROM $1::BIGINT");
    else
        knut_buf_puts(&sql, "$1::BIGINT IS NOT DISTINCT FROM $1::BIGINT");
    const char *b2[] = {wm};
    if ((st = knut_pipeline__step(r, &sql, b2, 1, ferr)) != KNUT_OK)
        goto done;
    if (target_exists && mode != KNUT_PIPELINE_OUTPUT_APPEND) {
        /* update: the touched windows' old rows go; complete: all. */
        knut_buf_puts(&sql, "DELETE FROM ");
        knut_pipeline__qualified(&sql, r->p->schema, f->target, NULL);
        if (mode == KNUT_PIPELINE_OUTPUT_UPDATE)
            knut_buf_puts(&sql, " t WHERE EXISTS (SELECT 1 FROM __knut_pairs p WHERE "
                                "make_timestamp(p.__knut_ws) = t.window_start AND "
                                "make_timestamp(p.__knut_we) = t.window_end)");
        if ((st = knut_pipeline__step(r, &sql, NULL, 0, ferr)) != KNUT_OK)
            goto done;
    }
    /* Eviction: append drops what it emits; update the windows the next
     * batch can no longer change; complete keeps everything. */
    if (mode != KNUT_PIPELINE_OUTPUT_COMPLETE) {
        knut_buf_puts(&sql, "DELETE FROM ");
        state_table(&sql, f);
        knut_buf_puts(&sql, session ? " WHERE rowid IN (SELECT __knut_rid FROM __knut_win WHERE "
                                      "__knut_we <= $1::BIGINT)"
                                    : " WHERE __knut_we <= $1::BIGINT");
        const char *b3[] = {mode == KNUT_PIPELINE_OUTPUT_APPEND ? wm : new_wm};
        st = knut_pipeline__step(r, &sql, b3, 1, ferr);
    }
done:
    knut_buf_reset(&sql);
    return st;
}

knut_status knut_pipeline__stream_update(knut_pipeline__run *r, knut_pipeline_flow *f,
                                         const knut_pipeline_dataset *ds, size_t dsi, int fresh,
                                         knut_pipeline__strvec *per, knut_pipeline__strvec *files,
                                         const knut_pipeline__stream *sr, size_t nsr,
                                         knut_pipeline__state *state, knut_buf *details,
                                         knut_error *ferr)
{
    const knut_pipeline_streaming *s = f->stream;
    knut_buf sql = KNUT_BUF_INIT, query = KNUT_BUF_INIT, inner = KNUT_BUF_INIT;
    batch_counts c = {{0}};
    int64_t wm = 0, batches = 0, found = 0, emitted = 0, state_rows = 0;
    int exists = 0, had_reset = r->reset[dsi];
    char wm_s[32], new_s[32], run[32];
    const char *fb[] = {f->name};
    knut_status st = KNUT_OK;
    if (had_reset && (st = knut_pipeline__reset_target(r, ds, &sql, ferr)) != KNUT_OK)
        goto done;
    st = knut_pipeline__scalar_i64(r->conn, "SELECT count(*) FROM _knut.stream_state WHERE "
                                            "flow = $1 AND watermark_us IS NOT NULL",
                                   fb, 1, &found, ferr);
    if (st == KNUT_OK && found)
        st = knut_pipeline__scalar_i64(r->conn, "SELECT watermark_us FROM _knut.stream_state "
                                                "WHERE flow = $1", fb, 1, &wm, ferr);
    if (st == KNUT_OK)
        st = knut_pipeline__scalar_i64(r->conn, "SELECT coalesce(max(batches), 0) FROM "
                                                "_knut.stream_state WHERE flow = $1",
                                       fb, 1, &batches, ferr);
    if (st == KNUT_OK)
        st = knut_pipeline__table_exists(r, f->target, &exists, ferr);
    if (st != KNUT_OK)
        goto done;
    /* Complete mode never drops a row: the watermark only grows. */
    int use_wm = found && s->mode != KNUT_PIPELINE_OUTPUT_COMPLETE;
    i64s(wm_s, sizeof wm_s, wm);
    if (fresh) {
        knut_buf_puts(&sql, "CREATE OR REPLACE TEMP TABLE __knut_in AS SELECT *, epoch_us(");
        knut_duck_ident(&sql, s->watermark_col);
        knut_buf_puts(&sql, ") AS __knut_et FROM ");
        splice(&sql, f, per, NULL);
        if ((st = knut_pipeline__step(r, &sql, NULL, 0, ferr)) != KNUT_OK)
            goto done;
        /* Late: the row's last window (or the row itself) is not after
         * the watermark. */
        knut_buf_puts(&sql, "SELECT count(*), count(*) FILTER (WHERE __knut_et IS NOT NULL AND "
                            "$1::BIGINT IS NOT NULL AND ");
        if (s->window == KNUT_PIPELINE_WINDOW_TUMBLING || s->window == KNUT_PIPELINE_WINDOW_HOPPING)
            knut_buf_puts(&sql, "__knut_et - (((__knut_et - $3::BIGINT) % $2::BIGINT) + "
                                "$2::BIGINT) % $2::BIGINT + $4::BIGINT <= $1::BIGINT");
        else
            knut_buf_puts(&sql, "__knut_et <= $1::BIGINT AND $2 IS NOT NULL AND $3 IS NOT NULL "
                                "AND $4 IS NOT NULL");
        knut_buf_puts(&sql, "), count(*) FILTER (WHERE __knut_et IS NULL), max(__knut_et), "
                            "count(__knut_et) FROM __knut_in");
        char slide[32], off[32], size[32];
        i64s(slide, sizeof slide, s->slide_us);
        i64s(off, sizeof off, s->start_us);
        i64s(size, sizeof size, s->size_us);
        const char *binds[] = {use_wm ? wm_s : NULL, slide, off, size};
        if ((st = knut_buf_check(&sql, ferr)) != KNUT_OK ||
            (st = knut_pipeline__query_each(r->conn, sql.data, binds, 4, read_batch, &c, ferr)) !=
                KNUT_OK)
            goto done;
        knut_buf_clear(&sql);
    }
    int64_t new_wm = wm;
    int has_new = found;
    if (c.v[4] && (!found || c.v[3] - s->delay_us > wm)) {
        new_wm = c.v[3] - s->delay_us; /* never backwards */
        has_new = 1;
    }
    i64s(new_s, sizeof new_s, new_wm);
    if (s->window) {
        st = windows(r, f, fresh, use_wm ? wm_s : NULL, has_new ? new_s : NULL, exists, ferr);
    } else {
        knut_buf_puts(&sql, "CREATE OR REPLACE TEMP TABLE __knut_wrows AS SELECT * EXCLUDE "
                            "(__knut_et) FROM __knut_in WHERE __knut_et IS NOT NULL AND "
                            "(__knut_et > $1::BIGINT OR $1::BIGINT IS NULL)");
        const char *binds[] = {use_wm ? wm_s : NULL};
        st = knut_pipeline__step(r, &sql, binds, 1, ferr);
    }
    if (st != KNUT_OK)
        goto done;
    if ((st = knut_pipeline__scalar_i64(r->conn, "SELECT count(*) FROM __knut_wrows", NULL, 0,
                                        &emitted, ferr)) != KNUT_OK)
        goto done;
    splice(&query, f, per, " __knut_wrows ");
    if ((st = knut_buf_check(&query, ferr)) != KNUT_OK)
        goto done;
    r->reset[dsi] = 0; /* done above, inside this transaction */
    st = knut_pipeline__append_update(r, f, ds, dsi, query.data, files, sr, nsr, state, &inner,
                                      ferr);
    r->reset[dsi] = (unsigned char)had_reset;
    if (st != KNUT_OK || *state != KNUT_PIPELINE__COMPLETED)
        goto done;
    if (s->window) {
        knut_buf_puts(&sql, "SELECT count(*) FROM ");
        state_table(&sql, f);
        if ((st = knut_buf_check(&sql, ferr)) != KNUT_OK ||
            (st = knut_pipeline__scalar_i64(r->conn, sql.data, NULL, 0, &state_rows, ferr)) !=
                KNUT_OK)
            goto done;
        knut_buf_clear(&sql);
    }
    i64s(run, sizeof run, batches + 1);
    {
        /* evicted_us: the watermark this batch emitted up to. */
        const char *binds[] = {f->name, has_new ? new_s : NULL, found ? wm_s : NULL, run};
        st = knut_pipeline__exec(r->conn,
                                 "INSERT OR REPLACE INTO _knut.stream_state VALUES ($1, "
                                 "$2::BIGINT, $3::BIGINT, $4::BIGINT)",
                                 binds, 4, NULL, ferr);
    }
    if (st == KNUT_OK)
        st = knut_duck_exec(r->conn, "DROP TABLE IF EXISTS __knut_in; DROP TABLE IF EXISTS "
                                     "__knut_pairs; DROP TABLE IF EXISTS __knut_win; DROP TABLE "
                                     "IF EXISTS __knut_wrows", ferr);
    if (st != KNUT_OK)
        goto done;
    /* The update's details, with the batch's event-time figures. */
    if (inner.len && inner.data[inner.len - 1] == '}')
        inner.len--;
    knut_buf_append(details, inner.data, inner.len);
    knut_buf_printf(details, ",\"batch\":%lld,\"batch_kind\":\"%s\",\"late_rows\":%lld,"
                             "\"null_event_time_rows\":%lld,\"window_rows\":%lld,\"input_rows\":%lld",
                    (long long)(batches + 1), fresh ? "data" : "no-data", (long long)c.v[1],
                    (long long)c.v[2], (long long)emitted, (long long)c.v[0]);
    if (s->window)
        knut_buf_printf(details, ",\"state_rows\":%lld", (long long)state_rows);
    if (has_new)
        knut_buf_printf(details, ",\"watermark_us\":%lld", (long long)new_wm);
    else
        knut_buf_puts(details, ",\"watermark_us\":null");
    knut_buf_putc(details, '}');
    /* Append mode: a moved watermark may close windows; another batch
     * (a no-data one when the input is read) emits them. ONCE: next run. */
    if (s->window && s->mode == KNUT_PIPELINE_OUTPUT_APPEND && has_new && (!found || new_wm > wm))
        r->more = 1;
    if (s->trigger == KNUT_PIPELINE_TRIGGER_ONCE)
        r->more = 0;
done:
    knut_buf_reset(&sql);
    knut_buf_reset(&query);
    knut_buf_reset(&inner);
    return st;
}
