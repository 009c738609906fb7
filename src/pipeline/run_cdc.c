/*
 * One update of an AUTO CDC / APPLY CHANGES flow, inside the flow's
 * transaction (so a refused or failed apply leaves the target, its change
 * log and the offsets as they were):
 *
 *   1. the source's new rows are staged as changes: keys, the target's
 *      other columns, the sequence value and the kind (0 upsert, 1
 *      delete, 2 truncate) — the delete/truncate conditions and the
 *      sequence are evaluated before COLUMNS drops anything;
 *   2. a NULL key (but on a truncate) or a NULL sequence value (or a NULL
 *      field of a STRUCT one) refuses the update, naming the row;
 *   3. the changes not already in the target's change log
 *      (_knut."<target>__cdc_log") are added to it: an identical repeat is
 *      one change, so re-reading a source is harmless;
 *   4. two different upserts of one key at one sequence value refuse the
 *      update, naming the key and the value;
 *   5. the target rows of every key the new changes touch (every key,
 *      after a truncate or on the first apply) are replaced by the rows
 *      computed from all their changes (cdc_sql.c).
 *
 * The first apply into a target with no change log yet (its first
 * update, or a full refresh) does 3-5 in one window pass over the
 * changes in key order instead (first_apply).
 *
 * The change log is the tombstone store: a delete stays in it, so an
 * upsert that arrives later with an older sequence value stays deleted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pipeline_int.h"

knut_status knut_pipeline__collect_names(void *ctx, const knut_arrow_view *v, int64_t row,
                                        knut_error *err)
{
    int64_t len;
    const char *s = knut_pipeline__col_str(v, 0, row, &len);
    if (s && knut_pipeline__strvec_push(ctx, s, (size_t)len) != 0)
        return knut_error_set(err, KNUT_ENOMEM, "pipeline: out of memory");
    return KNUT_OK;
}

typedef knut_pipeline__refusal refusal;

void knut_pipeline__cdc_source_sql(knut_buf *b, const knut_pipeline *p,
                                   const knut_pipeline_cdc *cdc)
{
    const knut_pipeline_dataset *src = knut_pipeline_dataset_find(p, cdc->source);
    /* A table's rowid names a row in messages; a temporary view has none. */
    if (src && src->kind == KNUT_PIPELINE_TEMPORARY_VIEW) {
        knut_buf_puts(b, "SELECT (row_number() OVER ()) - 1 AS __knut_rowid, * FROM ");
        knut_duck_ident(b, cdc->source);
    } else {
        knut_buf_puts(b, "SELECT rowid AS __knut_rowid, * FROM ");
        knut_duck_ident(b, p->catalog);
        knut_buf_putc(b, '.');
        knut_pipeline__qualified(b, p->schema, cdc->source, NULL);
    }
}

static knut_status read_refusal(void *ctx, const knut_arrow_view *v, int64_t row, knut_error *err)
{
    (void)err;
    refusal *x = ctx;
    int64_t len;
    const char *s = knut_pipeline__col_str(v, 1, row, &len);
    x->found = 1;
    x->row = knut_pipeline__col_i64(v, 0, row);
    knut_buf_clear(&x->key);
    if (s)
        knut_buf_append(&x->key, s, (size_t)(len > 200 ? 200 : len));
    knut_buf_putc(&x->key, '\0');
    return KNUT_OK;
}

void knut_pipeline__cdc_key_text(knut_buf *b, const knut_pipeline__cdc_cols *c, const char *pfx)
{
    knut_buf_putc(b, '{');
    for (size_t i = 0; i < c->keys.n; i++) {
        knut_buf_puts(b, i ? ", " : "");
        knut_duck_literal(b, c->keys.v[i], strlen(c->keys.v[i]));
        knut_buf_printf(b, ": %s", pfx);
        knut_duck_ident(b, c->keys.v[i]);
    }
    knut_buf_puts(b, "}::VARCHAR");
}

knut_status knut_pipeline__cdc_find_refusal(knut_pipeline__run *r, knut_buf *sql, refusal *x,
                                           knut_error *err)
{
    knut_status st = knut_buf_check(sql, err);
    x->found = 0;
    if (st == KNUT_OK)
        st = knut_pipeline__query_each(r->conn, sql->data, NULL, 0, read_refusal, x, err);
    knut_buf_clear(sql);
    return st;
}

/* Steps 1-2: the staged changes in temp view __knut_cdc_batch (a view:
 * the checks and the apply each scan the source, cheaper than copying
 * every change into a temp table first). */
static knut_status stage(knut_pipeline__run *r, const knut_pipeline_flow *f,
                         const knut_pipeline__stream *sr, size_t nsr, knut_pipeline__cdc_cols *c,
                         knut_buf *sql, knut_pipeline__state *state, knut_error *ferr)
{
    const knut_pipeline_cdc *cdc = f->cdc;
    const knut_pipeline_dataset *src = knut_pipeline_dataset_find(r->p, cdc->source);
    knut_pipeline__strvec cols = {0};
    refusal x = {0, 0, KNUT_BUF_INIT};
    knut_status st = KNUT_OK;
    knut_buf from = KNUT_BUF_INIT;
    knut_pipeline__cdc_source_sql(&from, r->p, cdc);
    if (src->kind != KNUT_PIPELINE_TEMPORARY_VIEW) {
        if (nsr) {
            /* The bounds travel in a temp table, not in the text. */
            char lo[32], hi[32];
            snprintf(lo, sizeof lo, "%lld", (long long)sr[0].lo);
            snprintf(hi, sizeof hi, "%lld", (long long)sr[0].hi);
            const char *binds[] = {lo, hi};
            st = knut_pipeline__exec(r->conn,
                                     "CREATE OR REPLACE TEMP TABLE __knut_cdc_bounds AS SELECT "
                                     "$1::BIGINT AS lo, $2::BIGINT AS hi", binds, 2, NULL, ferr);
            if (st != KNUT_OK)
                goto done;
            knut_buf_puts(&from, " WHERE rowid > (SELECT lo FROM __knut_cdc_bounds) AND rowid "
                                 "<= (SELECT hi FROM __knut_cdc_bounds)");
        }
    }
    knut_buf_printf(sql, "SELECT column_name FROM (DESCRIBE %s) WHERE column_name <> "
                         "'__knut_rowid'", from.data ? from.data : "");
    if ((st = knut_buf_check(&from, ferr)) != KNUT_OK ||
        (st = knut_buf_check(sql, ferr)) != KNUT_OK ||
        (st = knut_pipeline__query_each(r->conn, sql->data, NULL, 0, knut_pipeline__collect_names, &cols,
                                        ferr)) != KNUT_OK)
        goto done;
    knut_buf_clear(sql);
    if (knut_pipeline__cdc_plan_columns(f, &cols, c, ferr) != KNUT_OK) {
        *state = KNUT_PIPELINE__FAILED; /* ferr names the flow and the column */
        goto done;
    }
    knut_buf_printf(sql, "CREATE OR REPLACE TEMP VIEW __knut_cdc_batch AS SELECT __knut_rowid, "
                         "(%s) AS __knut_seq, (CASE WHEN false THEN 0 ", cdc->sequence_by);
    /* A condition that is NULL is no delete (nor truncate): an upsert. */
    if (cdc->truncate_when)
        knut_buf_printf(sql, "WHEN (%s) THEN 2 ", cdc->truncate_when);
    if (cdc->delete_when)
        knut_buf_printf(sql, "WHEN (%s) THEN 1 ", cdc->delete_when);
    knut_buf_puts(sql, "ELSE 0 END)::TINYINT AS __knut_kind");
    knut_pipeline__cdc_names(sql, &c->keys, "", 1);
    knut_pipeline__cdc_names(sql, &c->payload, "", 1);
    knut_buf_printf(sql, " FROM (%s)", from.data);
    if ((st = knut_pipeline__step(r, sql, NULL, 0, ferr)) != KNUT_OK)
        goto done;
    /* A NULL key, but on a truncate (which has none). */
    knut_buf_puts(sql, "SELECT __knut_rowid, ");
    knut_pipeline__cdc_key_text(sql, c, "");
    knut_buf_puts(sql, " FROM __knut_cdc_batch WHERE __knut_kind < 2 AND (false");
    for (size_t i = 0; i < c->keys.n; i++) {
        knut_buf_puts(sql, " OR ");
        knut_duck_ident(sql, c->keys.v[i]);
        knut_buf_puts(sql, " IS NULL");
    }
    knut_buf_puts(sql, ") ORDER BY __knut_rowid LIMIT 1");
    if ((st = knut_pipeline__cdc_find_refusal(r, sql, &x, ferr)) != KNUT_OK)
        goto done;
    if (x.found) {
        *state = KNUT_PIPELINE__FAILED;
        knut_pipeline__error_at(ferr, KNUT_EINVAL, f->pos,
                                "flow '%s': row %lld of '%s' has a NULL key %s; every change "
                                "needs a key (NULL_KEY), so nothing of this update is applied",
                                f->name, (long long)x.row + 1, cdc->source, x.key.data);
        goto done;
    }
    /* A NULL sequence value, or a NULL field of a STRUCT one (its order
     * would be a guess). */
    int64_t fields = 0;
    knut_buf_puts(sql, "SELECT CASE WHEN typeof(__knut_seq) LIKE 'STRUCT(%' THEN "
                       "len(json_keys(to_json(__knut_seq))) ELSE 0 END FROM __knut_cdc_batch "
                       "WHERE __knut_seq IS NOT NULL LIMIT 1");
    if ((st = knut_buf_check(sql, ferr)) != KNUT_OK ||
        (st = knut_pipeline__scalar_i64(r->conn, sql->data, NULL, 0, &fields, ferr)) != KNUT_OK)
        goto done;
    knut_buf_clear(sql);
    knut_buf_puts(sql, "SELECT __knut_rowid, ");
    knut_pipeline__cdc_key_text(sql, c, "");
    knut_buf_puts(sql, " FROM __knut_cdc_batch WHERE __knut_seq IS NULL");
    for (int64_t i = 1; i <= fields; i++)
        knut_buf_printf(sql, " OR struct_extract_at(__knut_seq, %lld) IS NULL", (long long)i);
    knut_buf_puts(sql, " ORDER BY __knut_rowid LIMIT 1");
    if ((st = knut_pipeline__cdc_find_refusal(r, sql, &x, ferr)) != KNUT_OK)
        goto done;
    if (x.found) {
        *state = KNUT_PIPELINE__FAILED;
        knut_pipeline__error_at(ferr, KNUT_EINVAL, f->pos,
                                "flow '%s': row %lld of '%s' (key %s) has a NULL sequence value "
                                "(SEQUENCE BY %s); every change needs one (NULL_SEQUENCE), so "
                                "nothing of this update is applied", f->name,
                                (long long)x.row + 1, cdc->source, x.key.data, cdc->sequence_by);
    }
done:
    knut_buf_reset(&x.key);
    knut_buf_reset(&from);
    knut_pipeline__strvec_free(&cols);
    return st;
}

typedef struct tally {
    int64_t v[4]; /* new changes: all, upserts, deletes, truncates */
} tally;

static knut_status read_tally(void *ctx, const knut_arrow_view *v, int64_t row, knut_error *err)
{
    (void)err;
    tally *t = ctx;
    for (int i = 0; i < 4; i++)
        t->v[i] = knut_pipeline__col_i64(v, i, row);
    return KNUT_OK;
}

/* Two different upserts of one key at one sequence value. SCD2 keeps
 * every change, so every such pair is refused. SCD1 keeps only the change
 * that decides the row (see compact_sql), so only a pair at that place —
 * the key's latest value, with no delete there — is: a superseded pair
 * decides nothing, and refusing it would depend on the split into runs. */
static void conflicts_sql(knut_buf *sql, const knut_pipeline_cdc *cdc,
                          const knut_pipeline__cdc_cols *c, const char *log, const char *keys)
{
    knut_buf_puts(sql, "SELECT 0, ");
    knut_pipeline__cdc_key_text(sql, c, "");
    knut_buf_puts(sql, " || ' ' || __knut_seq::VARCHAR FROM (SELECT ");
    knut_pipeline__cdc_names(sql, &c->keys, "", 0);
    knut_buf_puts(sql, ", __knut_seq, __knut_kind, max(__knut_seq) OVER (PARTITION BY ");
    knut_pipeline__cdc_names(sql, &c->keys, "", 0);
    knut_buf_printf(sql, ") AS __knut_m FROM %s", log);
    if (keys) {
        knut_buf_printf(sql, " SEMI JOIN %s USING (", keys);
        knut_pipeline__cdc_names(sql, &c->keys, "", 0);
        knut_buf_putc(sql, ')');
    }
    knut_buf_puts(sql, " WHERE __knut_kind < 2)");
    if (cdc->scd_type == 1)
        knut_buf_puts(sql, " WHERE __knut_seq = __knut_m");
    knut_buf_puts(sql, " GROUP BY ");
    knut_pipeline__cdc_names(sql, &c->keys, "", 0);
    knut_buf_puts(sql, ", __knut_seq HAVING count(*) FILTER (WHERE __knut_kind = 0) > 1");
    if (cdc->scd_type == 1)
        knut_buf_puts(sql, " AND count(*) FILTER (WHERE __knut_kind = 1) = 0");
    knut_buf_puts(sql, " ORDER BY ");
    knut_pipeline__cdc_names(sql, &c->keys, "", 0);
    knut_buf_puts(sql, ", __knut_seq LIMIT 1");
}

/* SCD1 without IGNORE NULL UPDATES: a key's row depends only on its
 * latest change (and the latest truncate), so the log keeps just those —
 * the tombstones and the winners — and stays as small as the table.
 * Without keys: the log is made anew from all changes in table from. */
static void compact_sql(knut_buf *sql, const knut_pipeline__cdc_cols *c, const char *from,
                        const char *log, const char *keys)
{
    if (!keys) {
        /* All of it: a rewrite is much cheaper than deleting most rows. */
        knut_buf_printf(sql, "CREATE OR REPLACE TABLE %s AS SELECT * FROM %s QUALIFY "
                             "row_number() OVER (PARTITION BY ", log, from);
        knut_pipeline__cdc_names(sql, &c->keys, "", 0);
        knut_buf_puts(sql, ", __knut_kind = 2 ORDER BY __knut_seq DESC, __knut_kind DESC) = 1");
        return;
    }
    knut_buf_printf(sql, "DELETE FROM %s WHERE rowid IN (SELECT __knut_r FROM (SELECT "
                         "__knut_l.rowid AS __knut_r, row_number() OVER (PARTITION BY ", log);
    knut_pipeline__cdc_names(sql, &c->keys, "", 0);
    knut_buf_puts(sql, ", __knut_kind = 2 ORDER BY __knut_seq DESC, __knut_kind DESC) AS "
                       "__knut_rn FROM ");
    knut_buf_printf(sql, "%s AS __knut_l SEMI JOIN %s USING (", log, keys);
    knut_pipeline__cdc_names(sql, &c->keys, "", 0);
    knut_buf_puts(sql, ")) WHERE __knut_rn > 1)");
}

static knut_status count_rows(knut_pipeline__run *r, knut_buf *sql, const char *table,
                              int64_t *out, knut_error *ferr)
{
    knut_buf_printf(sql, "SELECT count(*) FROM %s", table);
    knut_status st = knut_buf_check(sql, ferr);
    if (st == KNUT_OK)
        st = knut_pipeline__scalar_i64(r->conn, sql->data, NULL, 0, out, ferr);
    knut_buf_clear(sql);
    return st;
}

static knut_status refuse_conflict(knut_pipeline__run *r, const knut_pipeline_flow *f,
                                   const knut_pipeline__cdc_cols *c, knut_buf *sql,
                                   knut_pipeline__state *state, refusal *x, knut_error *ferr);

/* Steps 3-5 when the target has no change log yet (its first apply, or
 * after a full refresh): the log, the dedup and the conflict check come
 * from one window pass over the changes in key order, and the target
 * from the log (cdc_sql.c, knut_pipeline__cdc_first_sql) — the same
 * tables as the general path, without its DISTINCT and GROUP BY. */
static knut_status first_apply(knut_pipeline__run *r, const knut_pipeline_flow *f,
                               const knut_pipeline__cdc_cols *c, const char *log,
                               const char *target, knut_buf *sql, knut_pipeline__state *state,
                               int64_t *rows_out, tally *t, knut_error *ferr)
{
    const knut_pipeline_cdc *cdc = f->cdc;
    int compact = cdc->scd_type == 1 && !cdc->ignore_null_updates;
    int heads = knut_pipeline__cdc_first_heads(cdc, c);
    const char *flagged = compact ? "__knut_cdc_w" : log;
    refusal x = {0, 0, KNUT_BUF_INIT};
    knut_status st;
    knut_pipeline__cdc_first_sql(sql, cdc, c, flagged);
    if ((st = knut_pipeline__step(r, sql, NULL, 0, ferr)) != KNUT_OK)
        goto done;
    knut_buf_printf(sql, "SELECT count(*), count(*) FILTER (WHERE __knut_kind = 0), count(*) "
                         "FILTER (WHERE __knut_kind = 1), count(*) FILTER (WHERE __knut_kind = "
                         "2) FROM %s%s", flagged, compact ? " WHERE NOT __knut_dup" : "");
    if ((st = knut_buf_check(sql, ferr)) != KNUT_OK ||
        (st = knut_pipeline__query_each(r->conn, sql->data, NULL, 0, read_tally, t, ferr)) !=
            KNUT_OK)
        goto done;
    knut_buf_clear(sql);
    knut_buf_puts(sql, "SELECT 0, ");
    knut_pipeline__cdc_key_text(sql, c, "");
    knut_buf_printf(sql, " || ' ' || __knut_seq::VARCHAR FROM %s WHERE __knut_conflict ORDER BY ",
                    flagged);
    knut_pipeline__cdc_names(sql, &c->keys, "", 0);
    knut_buf_puts(sql, ", __knut_seq LIMIT 1");
    if ((st = refuse_conflict(r, f, c, sql, state, &x, ferr)) != KNUT_OK ||
        *state != KNUT_PIPELINE__COMPLETED)
        goto done;
    if (compact) {
        knut_buf_printf(sql, "CREATE TABLE %s AS SELECT ", log);
        knut_pipeline__cdc_names(sql, &c->keys, "", 0);
        knut_pipeline__cdc_names(sql, &c->payload, "", 1);
        knut_buf_puts(sql, ", __knut_seq, __knut_kind FROM __knut_cdc_w WHERE __knut_last");
        if ((st = knut_pipeline__step(r, sql, NULL, 0, ferr)) != KNUT_OK)
            goto done;
    }
    knut_buf_printf(sql, "CREATE OR REPLACE TABLE %s AS ", target);
    if (compact && t->v[3] == 0) {
        /* One entry per key: its row, or its tombstone. */
        knut_buf_puts(sql, "SELECT ");
        knut_pipeline__cdc_names(sql, &c->keys, "", 0);
        knut_pipeline__cdc_names(sql, &c->payload, "", 1);
        knut_buf_printf(sql, " FROM %s WHERE __knut_kind = 0", log);
    } else if (heads) {
        knut_pipeline__cdc_first_target_sql(sql, c, log);
    } else {
        knut_pipeline__cdc_apply_sql(sql, cdc, c, log, NULL, t->v[3] > 0);
    }
    if ((st = knut_pipeline__step(r, sql, NULL, 0, ferr)) != KNUT_OK ||
        (st = count_rows(r, sql, target, rows_out, ferr)) != KNUT_OK)
        goto done;
    if (!compact) {
        knut_buf_printf(sql, "ALTER TABLE %s DROP COLUMN __knut_conflict", log);
        if ((st = knut_pipeline__step(r, sql, NULL, 0, ferr)) != KNUT_OK)
            goto done;
        if (heads) {
            knut_buf_printf(sql, "ALTER TABLE %s DROP COLUMN __knut_head", log);
            st = knut_pipeline__step(r, sql, NULL, 0, ferr);
        }
    }
done:
    knut_buf_reset(&x.key);
    return st;
}

/* The refusal of two different changes of a key at one value, if sql
 * finds one (*state FAILED, ferr naming the key and the value). */
static knut_status refuse_conflict(knut_pipeline__run *r, const knut_pipeline_flow *f,
                                   const knut_pipeline__cdc_cols *c, knut_buf *sql,
                                   knut_pipeline__state *state, refusal *x, knut_error *ferr)
{
    (void)c;
    knut_status st = knut_pipeline__cdc_find_refusal(r, sql, x, ferr);
    if (st == KNUT_OK && x->found) {
        *state = KNUT_PIPELINE__FAILED;
        knut_pipeline__error_at(ferr, KNUT_EINVAL, f->pos,
                                "flow '%s': two different changes of key and sequence value %s; "
                                "the changes of one key need distinct sequence values (an "
                                "identical repeat counts once, a delete wins over an upsert), so "
                                "nothing of this update is applied", f->name, x->key.data);
    }
    return st;
}

/* Steps 3-5, after stage(). */
static knut_status apply(knut_pipeline__run *r, const knut_pipeline_flow *f,
                         const knut_pipeline_dataset *ds, const knut_pipeline__cdc_cols *c,
                         knut_buf *sql, knut_pipeline__state *state, int64_t *rows_out,
                         tally *t, knut_error *ferr)
{
    knut_buf log = KNUT_BUF_INIT, target = KNUT_BUF_INIT;
    refusal x = {0, 0, KNUT_BUF_INIT};
    uint64_t changed = 0;
    int log_exists = 0, target_exists = 0;
    knut_pipeline__qualified(&log, "_knut", ds->name, "__cdc_log");
    knut_pipeline__qualified(&target, r->p->schema, ds->name, NULL);
    knut_status st = knut_buf_check(&log, ferr);
    if (st == KNUT_OK)
        st = knut_buf_check(&target, ferr);
    if (st == KNUT_OK)
        st = knut_pipeline__table_exists(r, ds->name, &target_exists, ferr);
    if (st == KNUT_OK) {
        int64_t n = 0;
        const char *binds[] = {ds->name};
        st = knut_pipeline__scalar_i64(r->conn,
                                       "SELECT count(*) FROM duckdb_tables() WHERE database_name "
                                       "= current_database() AND schema_name = '_knut' AND "
                                       "table_name = $1 || '__cdc_log'", binds, 1, &n, ferr);
        log_exists = n > 0;
    }
    if (st != KNUT_OK)
        goto done;
    if (!log_exists) {
        st = first_apply(r, f, c, log.data, target.data, sql, state, rows_out, t, ferr);
        goto done;
    }
    /* Step 3: the changes the log does not hold yet; a delete's and a
     * truncate's values do not matter, so they are not kept. */
    int compact = f->cdc->scd_type == 1 && !f->cdc->ignore_null_updates;
    const char *fresh = "__knut_cdc_new", *all_changes = log.data;
    knut_buf_puts(sql, "CREATE OR REPLACE TEMP TABLE __knut_cdc_new AS SELECT DISTINCT ");
    for (size_t i = 0; i < c->keys.n; i++) {
        knut_buf_puts(sql, "CASE WHEN __knut_kind < 2 THEN ");
        knut_duck_ident(sql, c->keys.v[i]);
        knut_buf_puts(sql, " END AS ");
        knut_duck_ident(sql, c->keys.v[i]);
        knut_buf_puts(sql, ", ");
    }
    for (size_t i = 0; i < c->payload.n; i++) {
        knut_buf_puts(sql, "CASE WHEN __knut_kind = 0 THEN ");
        knut_duck_ident(sql, c->payload.v[i]);
        knut_buf_puts(sql, " END AS ");
        knut_duck_ident(sql, c->payload.v[i]);
        knut_buf_puts(sql, ", ");
    }
    knut_buf_puts(sql, "__knut_seq, __knut_kind FROM __knut_cdc_batch EXCEPT SELECT ");
    knut_pipeline__cdc_names(sql, &c->keys, "", 0);
    knut_pipeline__cdc_names(sql, &c->payload, "", 1);
    knut_buf_printf(sql, ", __knut_seq, __knut_kind FROM %s", log.data);
    if ((st = knut_pipeline__step(r, sql, NULL, 0, ferr)) != KNUT_OK)
        goto done;
    knut_buf_printf(sql, "SELECT count(*), count(*) FILTER (WHERE __knut_kind = 0), count(*) "
                         "FILTER (WHERE __knut_kind = 1), count(*) FILTER (WHERE __knut_kind = "
                         "2) FROM %s", fresh);
    if ((st = knut_buf_check(sql, ferr)) != KNUT_OK ||
        (st = knut_pipeline__query_each(r->conn, sql->data, NULL, 0, read_tally, t, ferr)) !=
            KNUT_OK)
        goto done;
    knut_buf_clear(sql);
    if (t->v[0] == 0 && target_exists)
        goto done; /* nothing new: the target stays as it is */
    knut_buf_printf(sql, "INSERT INTO %s SELECT * FROM __knut_cdc_new", log.data);
    if ((st = knut_pipeline__step(r, sql, NULL, 0, ferr)) != KNUT_OK)
        goto done;
    /* The keys to recompute: those of the new changes, or all after a
     * truncate or when the target is made anew. */
    int all = t->v[3] > 0 || !target_exists;
    if (!all) {
        knut_buf_puts(sql, "CREATE OR REPLACE TEMP TABLE __knut_cdc_keys AS SELECT DISTINCT ");
        knut_pipeline__cdc_names(sql, &c->keys, "", 0);
        knut_buf_puts(sql, " FROM __knut_cdc_new WHERE __knut_kind < 2");
        if ((st = knut_pipeline__step(r, sql, NULL, 0, ferr)) != KNUT_OK)
            goto done;
    }
    /* Step 4: after dedup, two upserts of a key at one value differ. */
    conflicts_sql(sql, f->cdc, c, all_changes, all ? NULL : "__knut_cdc_keys");
    if ((st = refuse_conflict(r, f, c, sql, state, &x, ferr)) != KNUT_OK ||
        *state != KNUT_PIPELINE__COMPLETED)
        goto done;
    /* Step 5. */
    int64_t truncates = t->v[3];
    if (!truncates) {
        knut_buf_printf(sql, "SELECT count(*) FROM %s WHERE __knut_kind = 2", log.data);
        if ((st = knut_buf_check(sql, ferr)) != KNUT_OK ||
            (st = knut_pipeline__scalar_i64(r->conn, sql->data, NULL, 0, &truncates, ferr)) !=
                KNUT_OK)
            goto done;
        knut_buf_clear(sql);
    }
    if (compact) {
        /* First, so the rows are computed from the (smaller) result. */
        compact_sql(sql, c, all_changes, log.data, all ? NULL : "__knut_cdc_keys");
        if ((st = knut_pipeline__step(r, sql, NULL, 0, ferr)) != KNUT_OK)
            goto done;
        all_changes = log.data;
    }
    if (all) {
        knut_buf_printf(sql, "CREATE OR REPLACE TABLE %s AS ", target.data);
    } else {
        knut_buf_printf(sql, "DELETE FROM %s USING __knut_cdc_keys WHERE true", target.data);
        for (size_t i = 0; i < c->keys.n; i++) {
            knut_buf_printf(sql, " AND %s.", target.data);
            knut_duck_ident(sql, c->keys.v[i]);
            knut_buf_puts(sql, " = __knut_cdc_keys.");
            knut_duck_ident(sql, c->keys.v[i]);
        }
        if ((st = knut_pipeline__step(r, sql, NULL, 0, ferr)) != KNUT_OK)
            goto done;
        knut_buf_printf(sql, "INSERT INTO %s BY NAME ", target.data);
    }
    knut_pipeline__cdc_apply_sql(sql, f->cdc, c, all_changes, all ? NULL : "__knut_cdc_keys",
                                 truncates > 0);
    if ((st = knut_buf_check(sql, ferr)) == KNUT_OK)
        st = knut_pipeline__exec(r->conn, sql->data, NULL, 0, &changed, ferr);
    knut_buf_clear(sql);
    if (st == KNUT_OK && all) {
        knut_buf_printf(sql, "SELECT count(*) FROM %s", target.data);
        if ((st = knut_buf_check(sql, ferr)) == KNUT_OK)
            st = knut_pipeline__scalar_i64(r->conn, sql->data, NULL, 0, rows_out, ferr);
        knut_buf_clear(sql);
    } else if (st == KNUT_OK) {
        *rows_out = (int64_t)changed;
    }
done:
    knut_buf_reset(&x.key);
    knut_buf_reset(&log);
    knut_buf_reset(&target);
    return st;
}

knut_status knut_pipeline__cdc_update(knut_pipeline__run *r, knut_pipeline_flow *f,
                                      const knut_pipeline_dataset *ds, size_t dsi,
                                      const knut_pipeline__stream *sr, size_t nsr,
                                      knut_pipeline__state *state, knut_buf *details,
                                      knut_error *ferr)
{
    knut_buf sql = KNUT_BUF_INIT;
    knut_pipeline__cdc_cols c = {{0}, {0}, {0}};
    tally t = {{0}};
    int64_t rows_in = 0, rows_out = 0;
    knut_status st = KNUT_OK;
    if (f->cdc->snapshot) /* cdc_snapshot.c */
        return knut_pipeline__cdc_snapshot_update(r, f, ds, dsi, state, details, ferr);
    if (r->reset[dsi]) {
        /* Made anew from the source: the target goes with its log. */
        st = knut_pipeline__reset_target(r, ds, &sql, ferr);
        if (st == KNUT_OK) {
            knut_buf_puts(&sql, "DROP TABLE IF EXISTS ");
            knut_pipeline__qualified(&sql, r->p->schema, ds->name, NULL);
            st = knut_pipeline__step(r, &sql, NULL, 0, ferr);
        }
    }
    if (st == KNUT_OK)
        st = stage(r, f, sr, nsr, &c, &sql, state, ferr);
    if (st != KNUT_OK || *state != KNUT_PIPELINE__COMPLETED)
        goto done;
    if ((st = knut_pipeline__scalar_i64(r->conn, "SELECT count(*) FROM __knut_cdc_batch", NULL, 0,
                                        &rows_in, ferr)) != KNUT_OK ||
        (st = apply(r, f, ds, &c, &sql, state, &rows_out, &t, ferr)) != KNUT_OK ||
        *state != KNUT_PIPELINE__COMPLETED)
        goto done;
    if ((st = knut_pipeline__offsets_save(r, f, sr, nsr, ferr)) != KNUT_OK ||
        (st = knut_duck_exec(r->conn,
                             "DROP VIEW IF EXISTS __knut_cdc_batch; DROP TABLE IF EXISTS "
                             "__knut_cdc_new; DROP TABLE IF EXISTS __knut_cdc_keys; DROP TABLE IF "
                             "EXISTS __knut_cdc_bounds; DROP TABLE IF EXISTS __knut_cdc_w",
                             ferr)) != KNUT_OK)
        goto done;
    knut_buf_printf(details, "{\"rows_in\":%lld,\"rows_out\":%lld", (long long)rows_in,
                    (long long)rows_out);
    knut_buf_printf(details, ",\"num_new_changes\":%lld,\"num_upserted_rows\":%lld",
                    (long long)t.v[0], (long long)t.v[1]);
    knut_buf_printf(details, ",\"num_deleted_rows\":%lld,\"num_truncates\":%lld",
                    (long long)t.v[2], (long long)t.v[3]);
    knut_pipeline__streams_json(details, "streams_read", sr, nsr);
    knut_buf_putc(details, '}');
done:
    knut_buf_reset(&sql);
    knut_pipeline__strvec_free(&c.keys);
    knut_pipeline__strvec_free(&c.payload);
    knut_pipeline__strvec_free(&c.tracked);
    return st;
}
