/*
 * AUTO CDC INTO target FROM SNAPSHOT source (Lakeflow's
 * create_auto_cdc_from_snapshot_flow, periodic form): each update reads
 * the whole source as one snapshot of the table, taken at version V — the
 * run's execution time — and diffs it with the target, inside the flow's
 * transaction:
 *
 *   - a key absent from the target (SCD2: with no open version) is
 *     inserted;
 *   - a key whose values changed is updated (SCD1), or (SCD2) its open
 *     version is closed and a new one opened — when only columns outside
 *     TRACK HISTORY ON changed, the open version is updated in place;
 *   - a key of the target missing from the snapshot is deleted (SCD1) or
 *     its open version closed at V (SCD2), unless IGNORE DELETES;
 *   - nothing else is written, so a snapshot equal to the last one writes
 *     nothing.
 *
 * SCD2 versions start and end at V, or with SEQUENCE BY at the row's own
 * value (dbt's timestamp strategy, SQLMesh's SCD_TYPE_2_BY_TIME): a
 * change opens its version at that value when it is newer than the open
 * version's start (an older one is stale and ignored), a key that comes
 * back starts at the later of that value and the end of its last version,
 * and a delete still closes at V. INITIAL START AT gives the start of the
 * versions the first snapshot opens (SQLMesh: 1970-01-01).
 *
 * The state is the target itself plus _knut."<target>__cdc_log", the
 * versions applied so far: a snapshot not newer than the last one (a rerun
 * at one --execution-time) is skipped. A NULL key, a key twice in one
 * snapshot or a NULL sequence value refuses the update, naming the row.
 */
#include <stdio.h>
#include <string.h>

#include "pipeline_int.h"

/* a."k" = b."k" AND ... */
static void keys_eq(knut_buf *b, const knut_pipeline__cdc_cols *c, const char *a, const char *o)
{
    for (size_t i = 0; i < c->keys.n; i++) {
        knut_buf_printf(b, "%s%s.", i ? " AND " : "", a);
        knut_duck_ident(b, c->keys.v[i]);
        knut_buf_printf(b, " = %s.", o);
        knut_duck_ident(b, c->keys.v[i]);
    }
}

/* {'x': pfx"x", ...} of names v (nothing when v is empty). */
static void row_struct(knut_buf *b, const knut_pipeline__strvec *v, const char *pfx)
{
    knut_buf_putc(b, '{');
    for (size_t i = 0; i < v->n; i++) {
        knut_buf_puts(b, i ? ", " : "");
        knut_duck_literal(b, v->v[i], strlen(v->v[i]));
        knut_buf_printf(b, ": %s", pfx);
        knut_duck_ident(b, v->v[i]);
    }
    knut_buf_putc(b, '}');
}

/* Runs sql (then clears it) with V as $1, adding the rows it changed. */
static knut_status step_v(knut_pipeline__run *r, knut_buf *sql, const char *v, int64_t *changed,
                          knut_error *ferr)
{
    uint64_t n = 0;
    const char *binds[] = {v};
    knut_status st = knut_buf_check(sql, ferr);
    /* Only a statement that uses V takes it (DuckDB refuses extra binds). */
    if (st == KNUT_OK)
        st = knut_pipeline__exec(r->conn, sql->data, binds, strstr(sql->data, "$1") ? 1 : 0, &n,
                                 ferr);
    knut_buf_clear(sql);
    if (changed)
        *changed += (int64_t)n;
    return st;
}

/* The snapshot in temp table __knut_snap (keys, payload, __knut_seq,
 * __knut_rowid), refused rows reported in ferr with *state FAILED. */
static knut_status stage(knut_pipeline__run *r, const knut_pipeline_flow *f, const char *v,
                         knut_pipeline__cdc_cols *c, knut_buf *sql, knut_pipeline__state *state,
                         knut_error *ferr)
{
    const knut_pipeline_cdc *cdc = f->cdc;
    knut_pipeline__strvec cols = {0};
    knut_pipeline__refusal x = {0, 0, KNUT_BUF_INIT};
    knut_buf from = KNUT_BUF_INIT;
    knut_status st;
    knut_pipeline__cdc_source_sql(&from, r->p, cdc);
    knut_buf_printf(sql, "SELECT column_name FROM (DESCRIBE %s) WHERE column_name <> "
                         "'__knut_rowid'", from.data ? from.data : "");
    if ((st = knut_buf_check(&from, ferr)) != KNUT_OK ||
        (st = knut_buf_check(sql, ferr)) != KNUT_OK ||
        (st = knut_pipeline__query_each(r->conn, sql->data, NULL, 0,
                                        knut_pipeline__collect_names, &cols, ferr)) != KNUT_OK)
        goto done;
    knut_buf_clear(sql);
    if (knut_pipeline__cdc_plan_columns(f, &cols, c, ferr) != KNUT_OK) {
        *state = KNUT_PIPELINE__FAILED; /* ferr names the flow and the column */
        goto done;
    }
    knut_buf_puts(sql, "CREATE OR REPLACE TEMP TABLE __knut_snap AS SELECT __knut_rowid, ");
    if (cdc->sequence_by)
        knut_buf_printf(sql, "(%s)", cdc->sequence_by);
    else
        knut_buf_puts(sql, "$1::TIMESTAMP");
    knut_buf_puts(sql, " AS __knut_seq");
    knut_pipeline__cdc_names(sql, &c->keys, "", 1);
    knut_pipeline__cdc_names(sql, &c->payload, "", 1);
    knut_buf_printf(sql, " FROM (%s)", from.data);
    if ((st = step_v(r, sql, v, NULL, ferr)) != KNUT_OK)
        goto done;
    /* A NULL key. */
    knut_buf_puts(sql, "SELECT __knut_rowid, ");
    knut_pipeline__cdc_key_text(sql, c, "");
    knut_buf_puts(sql, " FROM __knut_snap WHERE false");
    for (size_t i = 0; i < c->keys.n; i++) {
        knut_buf_puts(sql, " OR ");
        knut_duck_ident(sql, c->keys.v[i]);
        knut_buf_puts(sql, " IS NULL");
    }
    knut_buf_puts(sql, " ORDER BY __knut_rowid LIMIT 1");
    if ((st = knut_pipeline__cdc_find_refusal(r, sql, &x, ferr)) != KNUT_OK)
        goto done;
    if (x.found) {
        *state = KNUT_PIPELINE__FAILED;
        knut_pipeline__error_at(ferr, KNUT_EINVAL, f->pos,
                                "flow '%s': row %lld of snapshot '%s' has a NULL key %s; every "
                                "row of a snapshot needs a key (NULL_KEY), so nothing of this "
                                "update is applied", f->name, (long long)x.row + 1, cdc->source,
                                x.key.data);
        goto done;
    }
    /* One row per key: a snapshot is a table state. */
    knut_buf_puts(sql, "SELECT min(__knut_rowid), ");
    knut_pipeline__cdc_key_text(sql, c, "");
    knut_buf_puts(sql, " || ' (' || count(*)::VARCHAR || ' rows)' FROM __knut_snap GROUP BY ");
    knut_pipeline__cdc_names(sql, &c->keys, "", 0);
    knut_buf_puts(sql, " HAVING count(*) > 1 ORDER BY 1 LIMIT 1");
    if ((st = knut_pipeline__cdc_find_refusal(r, sql, &x, ferr)) != KNUT_OK)
        goto done;
    if (x.found) {
        *state = KNUT_PIPELINE__FAILED;
        knut_pipeline__error_at(ferr, KNUT_EINVAL, f->pos,
                                "flow '%s': snapshot '%s' holds key %s from row %lld on; a "
                                "snapshot has one row per key, so nothing of this update is "
                                "applied", f->name, cdc->source, x.key.data, (long long)x.row + 1);
        goto done;
    }
    if (!cdc->sequence_by)
        goto done;
    knut_buf_puts(sql, "SELECT __knut_rowid, ");
    knut_pipeline__cdc_key_text(sql, c, "");
    knut_buf_puts(sql, " FROM __knut_snap WHERE __knut_seq IS NULL ORDER BY __knut_rowid LIMIT 1");
    if ((st = knut_pipeline__cdc_find_refusal(r, sql, &x, ferr)) != KNUT_OK)
        goto done;
    if (x.found) {
        *state = KNUT_PIPELINE__FAILED;
        knut_pipeline__error_at(ferr, KNUT_EINVAL, f->pos,
                                "flow '%s': row %lld of snapshot '%s' (key %s) has a NULL "
                                "sequence value (SEQUENCE BY %s) (NULL_SEQUENCE), so nothing of "
                                "this update is applied", f->name, (long long)x.row + 1,
                                cdc->source, x.key.data, cdc->sequence_by);
    }
done:
    knut_buf_reset(&x.key);
    knut_buf_reset(&from);
    knut_pipeline__strvec_free(&cols);
    return st;
}

/* The first snapshot: the target made from it. */
static void first_sql(knut_buf *sql, const knut_pipeline_cdc *cdc,
                      const knut_pipeline__cdc_cols *c, const char *target)
{
    knut_buf_printf(sql, "CREATE TABLE %s AS SELECT ", target);
    knut_pipeline__cdc_names(sql, &c->keys, "", 0);
    knut_pipeline__cdc_names(sql, &c->payload, "", 1);
    if (cdc->scd_type == 2) {
        /* CASE keeps both typed like the sequence (the common type). */
        if (cdc->initial_start)
            knut_buf_printf(sql, ", CASE WHEN true THEN (%s) ELSE __knut_seq END",
                            cdc->initial_start);
        else
            knut_buf_puts(sql, ", __knut_seq");
        knut_buf_puts(sql, " AS \"__START_AT\", CASE WHEN false THEN __knut_seq END AS "
                           "\"__END_AT\"");
    }
    knut_buf_puts(sql, " FROM __knut_snap ORDER BY __knut_rowid");
}

/* The diff in temp table __knut_snap_d: each snapshot row with its
 * action (0 nothing, 1 a changed row: SCD2 a new version, 2 SCD2 an
 * in-place update, 3 a new key) and, SCD2, the end of the key's last
 * version (for a key that comes back). */
static void diff_sql(knut_buf *sql, const knut_pipeline_cdc *cdc, const knut_pipeline__cdc_cols *c,
                     const char *target)
{
    int scd2 = cdc->scd_type == 2;
    knut_buf_puts(sql, "CREATE OR REPLACE TEMP TABLE __knut_snap_d AS SELECT s.*, CASE WHEN o.");
    knut_duck_ident(sql, c->keys.v[0]);
    knut_buf_puts(sql, " IS NULL THEN 3");
    const knut_pipeline__strvec *changed = scd2 ? &c->tracked : &c->payload;
    if (changed->n) {
        knut_buf_puts(sql, " WHEN ");
        row_struct(sql, changed, "s.");
        knut_buf_puts(sql, " IS DISTINCT FROM ");
        row_struct(sql, changed, "o.");
        knut_buf_puts(sql, scd2 ? " THEN CASE WHEN s.__knut_seq > o.\"__START_AT\" THEN 1 ELSE 0 "
                                  "END"
                                : " THEN 1");
    }
    if (scd2 && c->payload.n > c->tracked.n) {
        knut_buf_puts(sql, " WHEN ");
        row_struct(sql, &c->payload, "s.");
        knut_buf_puts(sql, " IS DISTINCT FROM ");
        row_struct(sql, &c->payload, "o.");
        knut_buf_puts(sql, " THEN 2");
    }
    knut_buf_puts(sql, " ELSE 0 END AS __knut_act");
    if (scd2)
        knut_buf_puts(sql, ", l.__knut_last");
    knut_buf_puts(sql, " FROM __knut_snap AS s LEFT JOIN ");
    if (scd2)
        knut_buf_printf(sql, "(SELECT * FROM %s WHERE \"__END_AT\" IS NULL)", target);
    else
        knut_buf_puts(sql, target);
    knut_buf_puts(sql, " AS o ON ");
    keys_eq(sql, c, "s", "o");
    if (scd2) {
        knut_buf_puts(sql, " LEFT JOIN (SELECT ");
        knut_pipeline__cdc_names(sql, &c->keys, "", 0);
        knut_buf_printf(sql, ", max(\"__END_AT\") AS __knut_last FROM %s GROUP BY ", target);
        knut_pipeline__cdc_names(sql, &c->keys, "", 0);
        knut_buf_puts(sql, ") AS l ON ");
        keys_eq(sql, c, "s", "l");
    }
}

/* The keys of the target (SCD2: with an open version) not in the snapshot. */
static void missing_sql(knut_buf *sql, const knut_pipeline_cdc *cdc,
                        const knut_pipeline__cdc_cols *c, const char *target)
{
    knut_buf_puts(sql, "(SELECT ");
    knut_pipeline__cdc_names(sql, &c->keys, "", 0);
    knut_buf_printf(sql, " FROM %s%s EXCEPT SELECT ", target,
                    cdc->scd_type == 2 ? " WHERE \"__END_AT\" IS NULL" : "");
    knut_pipeline__cdc_names(sql, &c->keys, "", 0);
    knut_buf_puts(sql, " FROM __knut_snap) AS m");
}

typedef struct counts {
    int64_t upserted, deleted, written;
} counts;

/* A later snapshot: the diff applied to the target. */
static knut_status apply_diff(knut_pipeline__run *r, const knut_pipeline_cdc *cdc,
                              const knut_pipeline__cdc_cols *c, const char *target, const char *v,
                              knut_buf *sql, counts *n, knut_error *ferr)
{
    int scd2 = cdc->scd_type == 2;
    knut_status st;
    diff_sql(sql, cdc, c, target);
    if ((st = step_v(r, sql, v, NULL, ferr)) != KNUT_OK)
        return st;
    if (!cdc->ignore_deletes) {
        if (scd2)
            knut_buf_printf(sql, "UPDATE %s SET \"__END_AT\" = $1::TIMESTAMP FROM ", target);
        else
            knut_buf_printf(sql, "DELETE FROM %s USING ", target);
        missing_sql(sql, cdc, c, target);
        knut_buf_puts(sql, " WHERE ");
        keys_eq(sql, c, target, "m");
        if (scd2)
            knut_buf_printf(sql, " AND %s.\"__END_AT\" IS NULL", target);
        if ((st = step_v(r, sql, v, &n->deleted, ferr)) != KNUT_OK && cdc->sequence_by) {
            char msg[KNUT_ERROR_MSG_MAX];
            knut_duck_error_trim(ferr);
            snprintf(msg, sizeof msg, "%s", ferr->message);
            return knut_error_set(ferr, st, "a key missing from the snapshot closes its version "
                                  "at the execution time, a TIMESTAMP, which __END_AT (typed "
                                  "like SEQUENCE BY %s) cannot hold: use a timestamp sequence "
                                  "or IGNORE DELETES (%s)", cdc->sequence_by, msg);
        }
        if (st != KNUT_OK)
            return st;
    }
    /* Changed rows: SCD1 replaced, SCD2 their open version closed. */
    if (scd2)
        knut_buf_printf(sql, "UPDATE %s SET \"__END_AT\" = d.__knut_seq FROM ", target);
    else
        knut_buf_printf(sql, "DELETE FROM %s USING ", target);
    knut_buf_puts(sql, "__knut_snap_d AS d WHERE d.__knut_act = 1 AND ");
    keys_eq(sql, c, target, "d");
    if (scd2)
        knut_buf_printf(sql, " AND %s.\"__END_AT\" IS NULL", target);
    if ((st = step_v(r, sql, v, NULL, ferr)) != KNUT_OK)
        return st;
    if (scd2 && c->payload.n > c->tracked.n) {
        knut_buf_printf(sql, "UPDATE %s SET ", target);
        for (size_t i = 0; i < c->payload.n; i++) {
            knut_buf_puts(sql, i ? ", " : "");
            knut_duck_ident(sql, c->payload.v[i]);
            knut_buf_puts(sql, " = d.");
            knut_duck_ident(sql, c->payload.v[i]);
        }
        knut_buf_puts(sql, " FROM __knut_snap_d AS d WHERE d.__knut_act = 2 AND ");
        keys_eq(sql, c, target, "d");
        knut_buf_printf(sql, " AND %s.\"__END_AT\" IS NULL", target);
        if ((st = step_v(r, sql, v, &n->upserted, ferr)) != KNUT_OK)
            return st;
    }
    knut_buf_printf(sql, "INSERT INTO %s BY NAME SELECT ", target);
    knut_pipeline__cdc_names(sql, &c->keys, "", 0);
    knut_pipeline__cdc_names(sql, &c->payload, "", 1);
    /* A key that comes back starts no earlier than its last version ended. */
    if (scd2)
        knut_buf_puts(sql, ", CASE WHEN __knut_act = 3 AND __knut_last > __knut_seq THEN "
                           "__knut_last ELSE __knut_seq END AS \"__START_AT\"");
    knut_buf_puts(sql, " FROM __knut_snap_d WHERE __knut_act IN (1, 3) ORDER BY __knut_rowid");
    return step_v(r, sql, v, &n->upserted, ferr);
}

knut_status knut_pipeline__cdc_snapshot_update(knut_pipeline__run *r, knut_pipeline_flow *f,
                                               const knut_pipeline_dataset *ds, size_t dsi,
                                               knut_pipeline__state *state, knut_buf *details,
                                               knut_error *ferr)
{
    const knut_pipeline_cdc *cdc = f->cdc;
    knut_buf sql = KNUT_BUF_INIT, log = KNUT_BUF_INIT, target = KNUT_BUF_INIT, v = KNUT_BUF_INIT,
             last = KNUT_BUF_INIT;
    knut_pipeline__cdc_cols c = {{0}, {0}, {0}};
    counts n = {0, 0, 0};
    int found = 0, target_exists = 0;
    int64_t rows_in = 0;
    knut_status st = KNUT_OK;
    knut_pipeline__qualified(&log, "_knut", ds->name, "__cdc_log");
    knut_pipeline__qualified(&target, r->p->schema, ds->name, NULL);
    if ((st = knut_buf_check(&log, ferr)) != KNUT_OK ||
        (st = knut_buf_check(&target, ferr)) != KNUT_OK)
        goto done;
    if (r->reset[dsi]) {
        /* Made anew from the next snapshot: the target goes with its log. */
        if ((st = knut_pipeline__reset_target(r, ds, &sql, ferr)) != KNUT_OK)
            goto done;
        knut_buf_printf(&sql, "DROP TABLE IF EXISTS %s", target.data);
        if ((st = knut_pipeline__step(r, &sql, NULL, 0, ferr)) != KNUT_OK)
            goto done;
    }
    /* V: --execution-time, or when the run started. */
    {
        char run[32];
        snprintf(run, sizeof run, "%lld", (long long)r->run_id);
        const char *given = r->opts ? r->opts->execution_time : NULL;
        const char *binds[] = {given ? given : run};
        st = knut_pipeline__scalar_str(r->conn,
                                       given ? "SELECT TRY_CAST($1 AS TIMESTAMP)::VARCHAR"
                                             : "SELECT started_at::VARCHAR FROM _knut.runs "
                                               "WHERE run_id = $1::BIGINT",
                                       binds, 1, &v, &found, ferr);
        if (st != KNUT_OK)
            goto done;
        if (!found) {
            *state = KNUT_PIPELINE__FAILED;
            knut_pipeline__error_at(ferr, KNUT_EINVAL, f->pos,
                                    "flow '%s': the execution time '%.100s' is not a timestamp "
                                    "(YYYY-MM-DD HH:MM:SS)", f->name, given ? given : "");
            goto done;
        }
        knut_buf_putc(&v, '\0');
    }
    knut_buf_printf(&sql, "CREATE TABLE IF NOT EXISTS %s (version TIMESTAMP, snapshot_rows BIGINT)",
                    log.data);
    if ((st = knut_pipeline__step(r, &sql, NULL, 0, ferr)) != KNUT_OK ||
        (st = knut_pipeline__table_exists(r, ds->name, &target_exists, ferr)) != KNUT_OK)
        goto done;
    knut_buf_printf(&sql, "SELECT max(version)::VARCHAR FROM %s HAVING max(version) >= "
                          "$1::TIMESTAMP", log.data);
    {
        const char *binds[] = {v.data};
        if ((st = knut_buf_check(&sql, ferr)) != KNUT_OK ||
            (st = knut_pipeline__scalar_str(r->conn, sql.data, binds, 1, &last, &found, ferr)) !=
                KNUT_OK)
            goto done;
        knut_buf_clear(&sql);
    }
    if (found && target_exists) {
        /* Not newer than the last snapshot applied: already seen. */
        knut_buf_putc(&last, '\0');
        *state = KNUT_PIPELINE__IDLE;
        knut_buf_printf(details, "{\"rows_out\":0,\"snapshot_version\":\"%s\",\"skipped\":"
                                 "\"not newer than the last snapshot (%s)\"}", v.data, last.data);
        goto done;
    }
    if ((st = stage(r, f, v.data, &c, &sql, state, ferr)) != KNUT_OK ||
        *state != KNUT_PIPELINE__COMPLETED)
        goto done;
    if ((st = knut_pipeline__scalar_i64(r->conn, "SELECT count(*) FROM __knut_snap", NULL, 0,
                                        &rows_in, ferr)) != KNUT_OK)
        goto done;
    if (!target_exists) {
        first_sql(&sql, cdc, &c, target.data);
        if ((st = step_v(r, &sql, v.data, NULL, ferr)) != KNUT_OK)
            goto done;
        n.upserted = rows_in;
    } else if ((st = apply_diff(r, cdc, &c, target.data, v.data, &sql, &n, ferr)) != KNUT_OK) {
        goto done;
    }
    n.written = n.upserted + n.deleted;
    knut_buf_printf(&sql, "INSERT INTO %s VALUES ($1::TIMESTAMP, %lld)", log.data,
                    (long long)rows_in);
    if ((st = step_v(r, &sql, v.data, NULL, ferr)) != KNUT_OK ||
        (st = knut_duck_exec(r->conn, "DROP TABLE IF EXISTS __knut_snap; DROP TABLE IF EXISTS "
                                      "__knut_snap_d", ferr)) != KNUT_OK)
        goto done;
    knut_buf_printf(details, "{\"rows_in\":%lld,\"rows_out\":%lld,\"snapshot_version\":\"%s\"",
                    (long long)rows_in, (long long)n.written, v.data);
    knut_buf_printf(details, ",\"num_upserted_rows\":%lld,\"num_deleted_rows\":%lld}",
                    (long long)n.upserted, (long long)n.deleted);
done:
    knut_buf_reset(&sql);
    knut_buf_reset(&log);
    knut_buf_reset(&target);
    knut_buf_reset(&v);
    knut_buf_reset(&last);
    knut_pipeline__strvec_free(&c.keys);
    knut_pipeline__strvec_free(&c.payload);
    knut_pipeline__strvec_free(&c.tracked);
    return st;
}
