/*
 * The SQL of a CDC apply (AUTO CDC INTO / APPLY CHANGES INTO): the rows
 * of the target for a set of keys, computed from every change of those
 * keys in the target's change log. The result is a function of the set of
 * changes only — not of their arrival order nor of how they were split
 * into updates — so re-applying or re-splitting a changelog gives the
 * same table. Everything is set-based DuckDB SQL; the only text spliced
 * in is column names (quoted by knut_duck_ident) and the spec's own
 * expressions.
 *
 * Order of the changes of one key: by sequence value, and at an equal
 * value an upsert (kind 0) before a delete (1) before a truncate (2), so
 * a delete or a truncate wins a tie with an upsert. After dedup and the
 * conflict check (run_cdc.c) no two changes of a key share both, so the
 * order is total.
 */
#include <string.h>

#include "pipeline_int.h"

/* ", a, b" (lead) or "a, b", each name quoted and prefixed by pfx. */
void knut_pipeline__cdc_names(knut_buf *b, const knut_pipeline__strvec *v, const char *pfx,
                              int lead)
{
    for (size_t i = 0; i < v->n; i++) {
        if (lead || i)
            knut_buf_puts(b, ", ");
        knut_buf_puts(b, pfx);
        knut_duck_ident(b, v->v[i]);
    }
}

static void partition(knut_buf *b, const knut_pipeline__cdc_cols *c, int life)
{
    knut_buf_puts(b, "PARTITION BY ");
    knut_pipeline__cdc_names(b, &c->keys, "", 0);
    if (life)
        knut_buf_puts(b, ", __knut_life");
    knut_buf_puts(b, " ORDER BY __knut_seq, __knut_kind");
}

/* The changes of the affected keys, numbered into lives (a delete or a
 * truncate ends one; the changes after it are the next life) and, with
 * IGNORE NULL UPDATES, each NULL filled from the latest non-NULL value
 * of the same life (a key that was deleted starts afresh). */
static void changes_cte(knut_buf *b, const knut_pipeline_cdc *cdc, const knut_pipeline__cdc_cols *c,
                        const char *log, const char *keys, int truncates)
{
    knut_buf_puts(b, "WITH __knut_ev AS (SELECT ");
    knut_pipeline__cdc_names(b, &c->keys, "", 0);
    knut_pipeline__cdc_names(b, &c->payload, "", 1);
    knut_buf_printf(b, ", __knut_seq, __knut_kind FROM %s", log);
    if (keys) {
        knut_buf_printf(b, " SEMI JOIN %s USING (", keys);
        knut_pipeline__cdc_names(b, &c->keys, "", 0);
        knut_buf_putc(b, ')');
    }
    knut_buf_puts(b, " WHERE __knut_kind < 2");
    if (truncates) {
        /* A truncate is a delete of every key at its sequence value. */
        knut_buf_puts(b, " UNION ALL SELECT ");
        knut_pipeline__cdc_names(b, &c->keys, "__knut_k.", 0);
        for (size_t i = 0; i < c->payload.n; i++)
            knut_buf_puts(b, ", NULL");
        knut_buf_puts(b, ", __knut_t.__knut_seq, 2::TINYINT FROM (SELECT DISTINCT ");
        knut_pipeline__cdc_names(b, &c->keys, "", 0);
        knut_buf_printf(b, " FROM %s WHERE __knut_kind < 2) AS __knut_k CROSS JOIN (SELECT "
                           "DISTINCT __knut_seq FROM %s WHERE __knut_kind = 2) AS __knut_t",
                        keys ? keys : log, log);
    }
    if (!cdc->ignore_null_updates) {
        knut_buf_puts(b, "), __knut_filled AS (SELECT * FROM __knut_ev)");
        return;
    }
    knut_buf_puts(b, "), __knut_lives AS (SELECT *, sum((__knut_kind > 0)::INTEGER) OVER (");
    partition(b, c, 0);
    knut_buf_puts(b, " ROWS UNBOUNDED PRECEDING) AS __knut_life FROM __knut_ev), __knut_filled AS "
                     "(SELECT ");
    knut_pipeline__cdc_names(b, &c->keys, "", 0);
    for (size_t i = 0; i < c->payload.n; i++) {
        knut_buf_puts(b, ", last_value(");
        knut_duck_ident(b, c->payload.v[i]);
        knut_buf_puts(b, " IGNORE NULLS) OVER (");
        partition(b, c, 1);
        knut_buf_puts(b, " ROWS UNBOUNDED PRECEDING) AS ");
        knut_duck_ident(b, c->payload.v[i]);
    }
    knut_buf_puts(b, ", __knut_seq, __knut_kind FROM __knut_lives)");
}

/* SCD type 1: the last change of each key, when it is an upsert. */
static void scd1(knut_buf *b, const knut_pipeline__cdc_cols *c)
{
    knut_buf_puts(b, " SELECT ");
    knut_pipeline__cdc_names(b, &c->keys, "", 0);
    knut_pipeline__cdc_names(b, &c->payload, "", 1);
    knut_buf_puts(b, " FROM (SELECT *, row_number() OVER (PARTITION BY ");
    knut_pipeline__cdc_names(b, &c->keys, "", 0);
    knut_buf_puts(b, " ORDER BY __knut_seq DESC, __knut_kind DESC) AS __knut_rn FROM "
                     "__knut_filled) WHERE __knut_rn = 1 AND __knut_kind = 0");
}

static void tracked_struct(knut_buf *b, const knut_pipeline__cdc_cols *c)
{
    knut_buf_putc(b, '{');
    for (size_t i = 0; i < c->tracked.n; i++) {
        knut_buf_puts(b, i ? ", " : "");
        knut_duck_literal(b, c->tracked.v[i], strlen(c->tracked.v[i]));
        knut_buf_puts(b, ": ");
        knut_duck_ident(b, c->tracked.v[i]);
    }
    knut_buf_putc(b, '}');
}

/* Where not every column is tracked: each change belongs to the segment
 * its head (or delete) starts, and a version shows the values of the last
 * change of its segment. */
static void segment_values(knut_buf *b, const knut_pipeline__cdc_cols *c)
{
    knut_buf_puts(b, ", __knut_segs AS (SELECT *, sum((__knut_head OR __knut_kind > 0)::INTEGER)"
                     " OVER (");
    partition(b, c, 0);
    knut_buf_puts(b, " ROWS UNBOUNDED PRECEDING) AS __knut_seg FROM __knut_heads), __knut_vals AS "
                     "(SELECT ");
    knut_pipeline__cdc_names(b, &c->keys, "", 0);
    for (size_t i = 0; i < c->payload.n; i++) {
        knut_buf_puts(b, ", last_value(");
        knut_duck_ident(b, c->payload.v[i]);
        knut_buf_puts(b, ") OVER (PARTITION BY ");
        knut_pipeline__cdc_names(b, &c->keys, "", 0);
        knut_buf_puts(b, ", __knut_seg ORDER BY __knut_seq, __knut_kind ROWS BETWEEN UNBOUNDED "
                         "PRECEDING AND UNBOUNDED FOLLOWING) AS ");
        knut_duck_ident(b, c->payload.v[i]);
    }
    knut_buf_puts(b, ", __knut_seq, __knut_kind, __knut_head FROM __knut_segs)");
}

/* SCD type 2: an upsert opens a version (is a head) when the key has no
 * open version before it (first change, or after a delete) or its
 * tracked values differ (IS DISTINCT FROM: NULL is a value, no COALESCE)
 * from the change before. A version runs from its head to the next head
 * or delete and shows the values of its last change (untracked changes
 * update it in place); a version closed at its own start (an upsert and
 * a delete at one sequence value) is no version. */
static void scd2(knut_buf *b, const knut_pipeline__cdc_cols *c)
{
    knut_buf_puts(b, ", __knut_heads AS (SELECT *, __knut_kind = 0 AND (lag(__knut_kind) OVER "
                     "__knut_w IS DISTINCT FROM 0");
    if (c->tracked.n) {
        knut_buf_puts(b, " OR lag(");
        tracked_struct(b, c);
        knut_buf_puts(b, ") OVER __knut_w IS DISTINCT FROM ");
        tracked_struct(b, c);
    }
    knut_buf_puts(b, ") AS __knut_head FROM __knut_filled WINDOW __knut_w AS (");
    partition(b, c, 0);
    knut_buf_puts(b, "))");
    /* With every column tracked the changes of a version all have its
     * head's values: the heads are the versions (one window pass less). */
    int all_tracked = c->tracked.n == c->payload.n;
    if (!all_tracked)
        segment_values(b, c);
    knut_buf_puts(b, ", __knut_bounds AS (SELECT *, lead(__knut_seq) OVER (");
    partition(b, c, 0);
    knut_buf_printf(b, ") AS __knut_end FROM %s WHERE __knut_head OR __knut_kind > 0) SELECT ",
                    all_tracked ? "__knut_heads" : "__knut_vals");
    knut_pipeline__cdc_names(b, &c->keys, "", 0);
    knut_pipeline__cdc_names(b, &c->payload, "", 1);
    knut_buf_puts(b, ", __knut_seq AS \"__START_AT\", __knut_end AS \"__END_AT\" FROM "
                     "__knut_bounds WHERE __knut_head AND (__knut_end IS NULL OR __knut_end <> "
                     "__knut_seq)");
}

void knut_pipeline__cdc_apply_sql(knut_buf *b, const knut_pipeline_cdc *cdc,
                                  const knut_pipeline__cdc_cols *c, const char *log,
                                  const char *keys, int truncates)
{
    changes_cte(b, cdc, c, log, keys, truncates && cdc->scd_type == 1);
    if (cdc->scd_type == 2)
        scd2(b, c);
    else
        scd1(b, c);
}

/* ---- the first apply: one window pass over the staged changes ------------ */

/* {'p': "p", ...} of the payload, or a constant when there is none. */
static void payload_struct(knut_buf *b, const knut_pipeline__cdc_cols *c)
{
    if (!c->payload.n) {
        knut_buf_puts(b, "0");
        return;
    }
    knut_buf_putc(b, '{');
    for (size_t i = 0; i < c->payload.n; i++) {
        knut_buf_puts(b, i ? ", " : "");
        knut_duck_literal(b, c->payload.v[i], strlen(c->payload.v[i]));
        knut_buf_puts(b, ": ");
        knut_duck_ident(b, c->payload.v[i]);
    }
    knut_buf_putc(b, '}');
}

/* The change before, in key order, is at the same sequence value and of
 * the same kind, and (same 1) has the same values or (0) other ones. */
static void same_prev(knut_buf *b, const knut_pipeline__cdc_cols *c, int same)
{
    knut_buf_puts(b, "(lag(__knut_seq) OVER __knut_w = __knut_seq AND lag(__knut_kind) OVER "
                     "__knut_w = __knut_kind AND lag(");
    payload_struct(b, c);
    knut_buf_printf(b, ") OVER __knut_w IS %sDISTINCT FROM ", same ? "NOT " : "");
    payload_struct(b, c);
    knut_buf_putc(b, ')');
}

int knut_pipeline__cdc_first_heads(const knut_pipeline_cdc *cdc, const knut_pipeline__cdc_cols *c)
{
    return cdc->scd_type == 2 && !cdc->ignore_null_updates && c->tracked.n == c->payload.n;
}

void knut_pipeline__cdc_first_sql(knut_buf *b, const knut_pipeline_cdc *cdc,
                                  const knut_pipeline__cdc_cols *c, const char *dest)
{
    int compact = cdc->scd_type == 1 && !cdc->ignore_null_updates;
    if (compact)
        knut_buf_printf(b, "CREATE OR REPLACE TEMP TABLE %s AS SELECT *, ", dest);
    else
        knut_buf_printf(b, "CREATE TABLE %s AS SELECT *, ", dest);
    /* Two different upserts of a key at one value: adjacent in key order
     * (an identical repeat sorts next to its twin). SCD1 refuses only a
     * pair at the key's latest value with no delete there (cf.
     * conflicts_sql in run_cdc.c). */
    knut_buf_puts(b, "(__knut_kind = 0 AND ");
    same_prev(b, c, 0);
    if (cdc->scd_type == 1)
        knut_buf_puts(b, " AND __knut_seq = last_value(__knut_seq) OVER __knut_wf AND "
                         "last_value(__knut_kind) OVER __knut_wf = 0");
    knut_buf_puts(b, ") IS TRUE AS __knut_conflict");
    if (compact) {
        knut_buf_puts(b, ", ");
        same_prev(b, c, 1);
        knut_buf_puts(b, " IS TRUE AS __knut_dup, lead(__knut_seq) OVER __knut_w IS NULL AS "
                         "__knut_last");
    }
    if (knut_pipeline__cdc_first_heads(cdc, c)) {
        /* As scd2() below: an identical repeat is never a head, so the
         * heads of the changes with repeats are those without. */
        knut_buf_puts(b, ", __knut_kind = 0 AND (lag(__knut_kind) OVER __knut_w IS DISTINCT "
                         "FROM 0");
        if (c->tracked.n) {
            knut_buf_puts(b, " OR lag(");
            tracked_struct(b, c);
            knut_buf_puts(b, ") OVER __knut_w IS DISTINCT FROM ");
            tracked_struct(b, c);
        }
        knut_buf_puts(b, ") AS __knut_head");
    }
    /* The change log's columns: a delete's values are not kept, nor a
     * truncate's key. */
    knut_buf_puts(b, " FROM (SELECT ");
    for (size_t i = 0; i < c->keys.n; i++) {
        knut_buf_puts(b, "CASE WHEN __knut_kind < 2 THEN ");
        knut_duck_ident(b, c->keys.v[i]);
        knut_buf_puts(b, " END AS ");
        knut_duck_ident(b, c->keys.v[i]);
        knut_buf_puts(b, ", ");
    }
    for (size_t i = 0; i < c->payload.n; i++) {
        knut_buf_puts(b, "CASE WHEN __knut_kind = 0 THEN ");
        knut_duck_ident(b, c->payload.v[i]);
        knut_buf_puts(b, " END AS ");
        knut_duck_ident(b, c->payload.v[i]);
        knut_buf_puts(b, ", ");
    }
    knut_buf_puts(b, "__knut_seq, __knut_kind FROM __knut_cdc_batch) WINDOW __knut_w AS (");
    partition(b, c, 0);
    knut_buf_puts(b, "), __knut_wf AS (");
    partition(b, c, 0);
    knut_buf_puts(b, " ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)");
    if (!compact) {
        /* The log keeps each distinct change once. */
        knut_buf_puts(b, " QUALIFY ");
        same_prev(b, c, 1);
        knut_buf_puts(b, " IS NOT TRUE");
    }
}

void knut_pipeline__cdc_first_target_sql(knut_buf *b, const knut_pipeline__cdc_cols *c,
                                         const char *log)
{
    knut_buf_puts(b, "SELECT ");
    knut_pipeline__cdc_names(b, &c->keys, "", 0);
    knut_pipeline__cdc_names(b, &c->payload, "", 1);
    knut_buf_puts(b, ", __knut_seq AS \"__START_AT\", __knut_end AS \"__END_AT\" FROM (SELECT *, "
                     "lead(__knut_seq) OVER (");
    partition(b, c, 0);
    knut_buf_printf(b, ") AS __knut_end FROM %s WHERE __knut_head OR __knut_kind > 0) WHERE "
                       "__knut_head AND (__knut_end IS NULL OR __knut_end <> __knut_seq)", log);
}
