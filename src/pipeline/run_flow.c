/*
 * One flow's update, as one DuckDB transaction: the rows are staged with
 * their expectation results, counted, checked (FAIL UPDATE rolls the
 * whole update back), then written into the target (recomputed for a
 * materialized view, appended for a streaming table), the quarantine
 * table and the checkpoints, and committed together. Whatever fails
 * rolls back, so a target is always as the last good update left it.
 */
#include <stdlib.h>
#include <string.h>

#include "pipeline_int.h"

typedef struct counts {
    size_t n;
    int64_t v[3 + KNUT_PIPELINE_MAX_EXPECTATIONS]; /* total, dropped, quarantined, failed per
                                                  * expectation */
} counts;

static knut_status read_counts(void *ctx, const knut_arrow_view *v, int64_t row, knut_error *err)
{
    counts *c = ctx;
    for (size_t i = 0; i < c->n; i++)
        c->v[i] = knut_pipeline__col_i64(v, (int)i, row);
    return KNUT_OK;
}

/* The part of the row filter made by the expectations of one action set. */
static void any_failed(knut_buf *b, const knut_pipeline_flow *f, int drop, int quarantine)
{
    int any = 0;
    knut_buf_putc(b, '(');
    for (size_t i = 0; i < f->nexpectations; i++) {
        knut_pipeline_action a = f->expectations[i].action;
        if ((drop && a == KNUT_PIPELINE_DROP) || (quarantine && a == KNUT_PIPELINE_QUARANTINE)) {
            knut_buf_printf(b, "%s__knut_e%zu IS FALSE", any ? " OR " : "", i);
            any = 1;
        }
    }
    knut_buf_puts(b, any ? ")" : "false)");
}

static void columns(knut_buf *b, const knut_pipeline_flow *f)
{
    knut_buf_puts(b, "SELECT *");
    for (size_t i = 0; i < f->nexpectations; i++)
        knut_buf_printf(b, "%s__knut_e%zu", i ? ", " : " EXCLUDE (", i);
    if (f->nexpectations)
        knut_buf_putc(b, ')');
}

static void quality_json(knut_buf *d, const knut_pipeline_flow *f, const counts *c)
{
    knut_buf_printf(d, ",\"data_quality\":{\"dropped_records\":%lld", (long long)c->v[1]);
    knut_buf_printf(d, ",\"quarantined_records\":%lld,\"expectations\":[", (long long)c->v[2]);
    for (size_t i = 0; i < f->nexpectations; i++) {
        const knut_pipeline_expectation *e = &f->expectations[i];
        knut_buf_puts(d, i ? ",{\"name\":" : "{\"name\":");
        knut_buf_put_json_str(d, e->name, strlen(e->name));
        knut_buf_puts(d, ",\"dataset\":");
        knut_buf_put_json_str(d, f->target, strlen(f->target));
        knut_buf_printf(d, ",\"action\":\"%s\",\"passed_records\":%lld,\"failed_records\":%lld}",
                        knut_pipeline_action_name(e->action), (long long)(c->v[0] - c->v[3 + i]),
                        (long long)c->v[3 + i]);
    }
    knut_buf_puts(d, "]}");
}

knut_status knut_pipeline__reset_target(knut_pipeline__run *r, const knut_pipeline_dataset *ds,
                                        knut_buf *sql, knut_error *err)
{
    knut_status st = KNUT_OK;
    int exists = 0;
    /* A CDC target is made from its change log: both go. */
    knut_buf_puts(sql, "DROP TABLE IF EXISTS ");
    knut_pipeline__qualified(sql, "_knut", ds->name, "__cdc_log");
    st = knut_pipeline__step(r, sql, NULL, 0, err);
    for (int q = 0; q < 2 && st == KNUT_OK; q++) {
        knut_buf name = KNUT_BUF_INIT;
        knut_buf_printf(&name, "%s%s", ds->name, q ? "__quarantine" : "");
        if ((st = knut_buf_check(&name, err)) == KNUT_OK &&
            (st = knut_pipeline__table_exists(r, name.data, &exists, err)) == KNUT_OK && exists) {
            /* A new empty table rather than DELETE: its rowids start again
             * with no holes, so readers' rowid offsets stay meaningful. */
            knut_buf_puts(sql, "CREATE OR REPLACE TABLE ");
            knut_pipeline__qualified(sql, r->p->schema, ds->name, q ? "__quarantine" : NULL);
            knut_buf_puts(sql, " AS SELECT * FROM ");
            knut_pipeline__qualified(sql, r->p->schema, ds->name, q ? "__quarantine" : NULL);
            knut_buf_puts(sql, " LIMIT 0");
            st = knut_pipeline__step(r, sql, NULL, 0, err);
        }
        knut_buf_reset(&name);
    }
    for (size_t i = 0; i < r->p->nflows && st == KNUT_OK; i++) {
        const knut_pipeline_flow *g = &r->p->flows[i];
        if (strcmp(g->target, ds->name) != 0)
            continue;
        const char *binds[] = {g->name};
        st = knut_pipeline__exec(r->conn, "DELETE FROM _knut.files WHERE flow = $1", binds, 1,
                                 NULL, err);
        if (st == KNUT_OK) /* event-time state: the watermark and open windows */
            st = knut_pipeline__exec(r->conn, "DELETE FROM _knut.stream_state WHERE flow = $1",
                                     binds, 1, NULL, err);
        if (st == KNUT_OK) {
            knut_buf_puts(sql, "DROP TABLE IF EXISTS ");
            knut_pipeline__qualified(sql, "_knut", g->name, "__stream_state");
            st = knut_pipeline__step(r, sql, NULL, 0, err);
        }
        if (st == KNUT_OK)
            st = knut_pipeline__exec(r->conn, "DELETE FROM _knut.flows WHERE flow = $1", binds,
                                     1, NULL, err);
        if (st == KNUT_OK)
            st = knut_pipeline__exec(r->conn, "DELETE FROM _knut.offsets WHERE flow = $1",
                                     binds, 1, NULL, err);
    }
    /* Streaming readers of this table start again at its first row. */
    const char *binds[] = {ds->name};
    if (st == KNUT_OK)
        st = knut_pipeline__exec(r->conn, "DELETE FROM _knut.offsets WHERE source = $1", binds, 1,
                                 NULL, err);
    return st;
}


knut_status knut_pipeline__offsets_save(knut_pipeline__run *r, const knut_pipeline_flow *f,
                                        const knut_pipeline__stream *sr, size_t nsr,
                                        knut_error *err)
{
    knut_status st = KNUT_OK;
    for (size_t i = 0; i < nsr && st == KNUT_OK; i++) {
        char hi[32];
        snprintf(hi, sizeof hi, "%lld", (long long)sr[i].hi);
        const char *binds[] = {f->name, sr[i].name, hi};
        st = knut_pipeline__exec(r->conn,
                                 "INSERT OR REPLACE INTO _knut.offsets VALUES ($1, $2, $3::BIGINT)",
                                 binds, 3, NULL, err);
    }
    return st;
}

void knut_pipeline__streams_json(knut_buf *d, const char *key, const knut_pipeline__stream *sr,
                                 size_t nsr)
{
    for (size_t i = 0; i < nsr; i++) {
        if (i == 0)
            knut_buf_printf(d, ",\"%s\":{", key);
        else
            knut_buf_putc(d, ',');
        knut_buf_put_json_str(d, sr[i].name, strlen(sr[i].name));
        knut_buf_printf(d, ":%lld", (long long)(sr[i].hi - sr[i].lo));
        if (i + 1 == nsr)
            knut_buf_putc(d, '}');
    }
}

/* The update inside the transaction; *state FAILED on a failed FAIL
 * expectation (with ferr set), else COMPLETED. */
knut_status knut_pipeline__append_update(knut_pipeline__run *r, knut_pipeline_flow *f,
                                         const knut_pipeline_dataset *ds, size_t dsi,
                                         const char *query, knut_pipeline__strvec *files,
                                         const knut_pipeline__stream *sr, size_t nsr,
                                         knut_pipeline__state *state, knut_buf *details,
                                         knut_error *ferr)
{
    knut_buf sql = KNUT_BUF_INIT;
    counts c = {3 + f->nexpectations, {0}};
    int streaming = ds->kind == KNUT_PIPELINE_STREAMING_TABLE, exists = 0, qexists = 0, quar = 0;
    knut_status st = KNUT_OK;
    if (streaming && r->reset[dsi])
        st = knut_pipeline__reset_target(r, ds, &sql, ferr);
    if (st == KNUT_OK && streaming)
        st = knut_pipeline__table_exists(r, ds->name, &exists, ferr);
    if (st != KNUT_OK)
        goto done;
    for (size_t i = 0; i < f->nexpectations; i++)
        quar |= f->expectations[i].action == KNUT_PIPELINE_QUARANTINE;
    knut_buf_puts(&sql, "CREATE OR REPLACE TEMP TABLE __knut_stage AS ");
    knut_pipeline__expect_stage_sql(&sql, f, query, r->p->schema, exists);
    if ((st = knut_pipeline__step(r, &sql, NULL, 0, ferr)) != KNUT_OK)
        goto done;
    knut_buf_puts(&sql, "SELECT count(*), count(*) FILTER (WHERE ");
    any_failed(&sql, f, 1, 1);
    knut_buf_puts(&sql, "), count(*) FILTER (WHERE ");
    any_failed(&sql, f, 0, 1);
    knut_buf_putc(&sql, ')');
    for (size_t i = 0; i < f->nexpectations; i++)
        knut_buf_printf(&sql, ", count(*) FILTER (WHERE __knut_e%zu IS FALSE)", i);
    knut_buf_puts(&sql, " FROM __knut_stage");
    if ((st = knut_buf_check(&sql, ferr)) != KNUT_OK ||
        (st = knut_pipeline__query_each(r->conn, sql.data, NULL, 0, read_counts, &c, ferr)) !=
            KNUT_OK)
        goto done;
    knut_buf_clear(&sql);
    for (size_t i = 0; i < f->nexpectations; i++) {
        const knut_pipeline_expectation *e = &f->expectations[i];
        if (e->action == KNUT_PIPELINE_FAIL && c.v[3 + i] > 0) {
            *state = KNUT_PIPELINE__FAILED;
            knut_pipeline__error_at(ferr, KNUT_EINVAL, e->pos,
                                    "flow '%s': expectation '%s' (ON VIOLATION FAIL UPDATE) "
                                    "failed for %lld of %lld rows; the update is rolled back",
                                    f->name, e->name, (long long)c.v[3 + i], (long long)c.v[0]);
            goto done;
        }
    }
    if (streaming && exists) {
        knut_buf_puts(&sql, "INSERT INTO ");
        knut_pipeline__qualified(&sql, r->p->schema, ds->name, NULL);
        knut_buf_puts(&sql, " BY NAME ");
    } else {
        knut_buf_puts(&sql, "CREATE OR REPLACE TABLE ");
        knut_pipeline__qualified(&sql, r->p->schema, ds->name, NULL);
        knut_buf_puts(&sql, " AS ");
    }
    columns(&sql, f);
    knut_buf_puts(&sql, " FROM __knut_stage WHERE NOT ");
    any_failed(&sql, f, 1, 1);
    if ((st = knut_pipeline__step(r, &sql, NULL, 0, ferr)) != KNUT_OK)
        goto done;
    if (quar) {
        knut_buf qname = KNUT_BUF_INIT;
        knut_buf_printf(&qname, "%s__quarantine", ds->name);
        st = knut_buf_check(&qname, ferr);
        if (st == KNUT_OK && streaming)
            st = knut_pipeline__table_exists(r, qname.data, &qexists, ferr);
        knut_buf_reset(&qname);
        if (st != KNUT_OK)
            goto done;
        if (qexists) {
            knut_buf_puts(&sql, "INSERT INTO ");
            knut_pipeline__qualified(&sql, r->p->schema, ds->name, "__quarantine");
            knut_buf_puts(&sql, " BY NAME ");
        } else {
            knut_buf_puts(&sql, "CREATE OR REPLACE TABLE ");
            knut_pipeline__qualified(&sql, r->p->schema, ds->name, "__quarantine");
            knut_buf_puts(&sql, " AS ");
        }
        columns(&sql, f);
        knut_buf_puts(&sql, ", list_filter([");
        for (size_t i = 0; i < f->nexpectations; i++) {
            knut_buf_printf(&sql, "%sCASE WHEN __knut_e%zu IS FALSE THEN ", i ? ", " : "", i);
            knut_duck_literal(&sql, f->expectations[i].name, strlen(f->expectations[i].name));
            knut_buf_puts(&sql, " END");
        }
        knut_buf_puts(&sql, "]::VARCHAR[], x -> x IS NOT NULL) AS _failed_expectations "
                            "FROM __knut_stage WHERE ");
        any_failed(&sql, f, 0, 1);
        if ((st = knut_pipeline__step(r, &sql, NULL, 0, ferr)) != KNUT_OK)
            goto done;
    }
    for (size_t i = 0; files && i < files->n && st == KNUT_OK; i++) {
        char run[32];
        snprintf(run, sizeof run, "%lld", (long long)r->run_id);
        const char *binds[] = {f->name, files->v[i], run};
        st = knut_pipeline__exec(r->conn, "INSERT INTO _knut.files VALUES ($1, $2, $3::BIGINT)",
                                 binds, 3, NULL, ferr);
    }
    if (st == KNUT_OK)
        st = knut_pipeline__offsets_save(r, f, sr, nsr, ferr);
    if (st == KNUT_OK && f->kind == KNUT_PIPELINE_FLOW_APPEND_ONCE) {
        const char *binds[] = {f->name};
        st = knut_pipeline__exec(r->conn, "INSERT OR REPLACE INTO _knut.flows VALUES ($1, true)",
                                 binds, 1, NULL, ferr);
    }
    if (st == KNUT_OK)
        st = knut_duck_exec(r->conn, "DROP TABLE __knut_stage", ferr);
    if (st != KNUT_OK)
        goto done;
    knut_buf_printf(details, "{\"rows_in\":%lld,\"rows_out\":%lld", (long long)c.v[0],
                    (long long)(c.v[0] - c.v[1]));
    if (files)
        knut_buf_printf(details, ",\"files_read\":%zu", files->n);
    knut_pipeline__streams_json(details, "streams_read", sr, nsr);
    if (f->nexpectations)
        quality_json(details, f, &c);
    knut_buf_putc(details, '}');
done:
    knut_buf_reset(&sql);
    return st;
}

knut_status knut_pipeline__flow_run(knut_pipeline__run *r, knut_pipeline_flow *f,
                                    knut_pipeline__state *state, knut_buf *details,
                                    knut_error *ferr, knut_error *err)
{
    knut_pipeline *p = r->p;
    const knut_pipeline_dataset *ds = knut_pipeline_dataset_find(p, f->target);
    size_t dsi = (size_t)(ds - p->datasets);
    knut_buf query = KNUT_BUF_INIT;
    knut_pipeline__strvec *per = NULL, all = {0}, rel = {0};
    knut_pipeline__stream *sr = NULL;
    size_t nsr = 0;
    int views = 0, fresh = 0, pending = 0;
    knut_status st = KNUT_OK;
    *state = KNUT_PIPELINE__COMPLETED;
    r->conflict = 0;
    int cdc = f->kind == KNUT_PIPELINE_FLOW_CDC;
    /* A CDC flow over STREAM(source) reads only its new rows, as a
     * streaming flow does; over a batch source it reads all of it each
     * run (changes it applied before are recognised and skipped). */
    int streaming = f->kind == KNUT_PIPELINE_FLOW_STREAMING || cdc;
    if (streaming && f->nsources) {
        per = calloc(f->nsources, sizeof *per);
        if (!per) {
            st = knut_error_set(err, KNUT_ENOMEM, "pipeline: out of memory");
            goto done;
        }
        for (size_t i = 0; i < f->nsources; i++) {
            st = knut_pipeline__new_files(r, f, &f->sources[i], r->reset[dsi], &per[i], &rel,
                                          ferr);
            if (st != KNUT_OK)
                goto flow_failed;
            all.n += per[i].n;
        }
    }
    if (streaming) {
        sr = calloc(f->nreads ? f->nreads : 1, sizeof *sr);
        if (!sr) {
            st = knut_error_set(err, KNUT_ENOMEM, "pipeline: out of memory");
            goto done;
        }
        for (size_t i = 0; i < f->nreads; i++) {
            if (!f->reads[i].streaming || !f->reads[i].internal)
                continue;
            sr[nsr].name = f->reads[i].name;
            if ((st = knut_pipeline__stream_bounds(r, f, r->reset[dsi], &sr[nsr], ferr)) != KNUT_OK)
                goto flow_failed;
            nsr++;
        }
        fresh = all.n > 0 || (cdc && nsr == 0);
        if (ds->kind == KNUT_PIPELINE_SINK) /* batch-fed: every row each run; a refresh re-sends */
            fresh |= (nsr == 0 && f->nsources == 0) || (r->reset[dsi] && f->nsources == 0);
        for (size_t i = 0; i < nsr; i++)
            fresh |= sr[i].hi > sr[i].lo;
        /* No new input, but a watermark past open windows: a no-data batch. */
        if (!fresh && !r->reset[dsi] &&
            (st = knut_pipeline__stream_pending(r, f, &pending, ferr)) != KNUT_OK)
            goto flow_failed;
        if (!fresh && !r->reset[dsi] && !pending) {
            *state = KNUT_PIPELINE__IDLE;
            knut_buf_puts(details, f->nsources ? "{\"rows_out\":0,\"files_read\":0}"
                                               : "{\"rows_out\":0}");
            goto done;
        }
        if (!fresh && !pending && !r->dry) {
            /* A full refresh with no input at all: the query cannot run on
             * an empty file list, and there is nothing to read; only the
             * reset is done (the table is left empty). */
            knut_buf sql = KNUT_BUF_INIT;
            if ((st = knut_duck_conn_begin(r->conn, ferr)) == KNUT_OK &&
                (st = knut_pipeline__reset_target(r, ds, &sql, ferr)) == KNUT_OK)
                st = knut_duck_conn_commit(r->conn, ferr);
            knut_buf_reset(&sql);
            if (st != KNUT_OK) {
                knut_error ignored = KNUT_ERROR_INIT;
                knut_duck_conn_rollback(r->conn, &ignored);
                goto flow_failed;
            }
            r->reset[dsi] = 0;
            knut_buf_puts(details, f->nsources ? "{\"rows_in\":0,\"rows_out\":0,\"files_read\":0}"
                                               : "{\"rows_in\":0,\"rows_out\":0}");
            goto done;
        }
    }
    if (f->kind == KNUT_PIPELINE_FLOW_APPEND_ONCE && !r->reset[dsi] && !r->dry) {
        int64_t ran = 0;
        const char *binds[] = {f->name};
        if ((st = knut_pipeline__scalar_i64(r->conn,
                                            "SELECT count(*) FROM _knut.flows WHERE flow = $1",
                                            binds, 1, &ran, ferr)) != KNUT_OK)
            goto flow_failed;
        if (ran) {
            *state = KNUT_PIPELINE__IDLE;
            knut_buf_puts(details, "{\"rows_out\":0,\"once\":\"already ran\"}");
            goto done;
        }
    }
    if (f->sql) {
        knut_pipeline__rewrite(&query, p, f, per);
        if ((st = knut_buf_check(&query, err)) != KNUT_OK)
            goto done;
    }
    if (!r->dry) {
        char msg[256];
        snprintf(msg, sizeof msg, "Flow '%.200s' is RUNNING.", f->name);
        if ((st = knut_pipeline__event(r, "flow_progress", "INFO", f, "RUNNING", msg, NULL,
                                       err)) != KNUT_OK)
            goto done;
    }
    if (r->dry) {
        knut_buf_printf(details, "{\"plan\":\"%s\"",
                        cdc && r->reset[dsi]                          ? "full refresh"
                        : cdc                                         ? "apply changes"
                        : ds->kind == KNUT_PIPELINE_TEMPORARY_VIEW    ? "create view"
                        : ds->kind == KNUT_PIPELINE_MATERIALIZED_VIEW ? "recompute"
                        : r->reset[dsi]                               ? "full refresh"
                                                                      : "append");
        if (per)
            knut_buf_printf(details, ",\"files\":%zu", all.n);
        knut_pipeline__streams_json(details, "stream_rows", sr, nsr);
        knut_buf_putc(details, '}');
        goto done;
    }
    if (ds->kind == KNUT_PIPELINE_TEMPORARY_VIEW) {
        knut_buf sql = KNUT_BUF_INIT;
        knut_buf_puts(&sql, "CREATE OR REPLACE TEMP VIEW ");
        knut_duck_ident(&sql, ds->name);
        knut_buf_printf(&sql, " AS %s", query.data);
        /* a connection's own: the scheduler makes it on the other workers' */
        free(r->view_sql);
        r->view_sql = knut_buf_check(&sql, NULL) == KNUT_OK ? strdup(sql.data) : NULL;
        st = knut_pipeline__step(r, &sql, NULL, 0, ferr);
        knut_buf_reset(&sql);
        if (st == KNUT_OK && !r->view_sql)
            st = knut_error_set(ferr, KNUT_ENOMEM, "pipeline: out of memory");
        if (st != KNUT_OK)
            goto flow_failed;
        knut_buf_puts(details, "{}");
        goto done;
    }
    if (nsr && !cdc) {
        views = 1;
        if ((st = knut_pipeline__stream_views(r, sr, nsr, ferr)) != KNUT_OK)
            goto flow_failed;
    }
    if (ds->kind == KNUT_PIPELINE_SINK) { /* sink_graph.c: its own commits */
        st = knut_pipeline__sink_update(r, f, ds, query.data, per ? &rel : NULL, sr, nsr,
                                        details, ferr);
        if (st != KNUT_OK)
            goto flow_failed;
        goto done;
    }
    if ((st = knut_duck_conn_begin(r->conn, ferr)) != KNUT_OK)
        goto flow_failed;
    if (cdc)
        st = knut_pipeline__cdc_update(r, f, ds, dsi, sr, nsr, state, details, ferr);
    else if (f->stream && f->stream->watermark_col)
        st = knut_pipeline__stream_update(r, f, ds, dsi, fresh, per, per ? &rel : NULL, sr, nsr,
                                          state, details, ferr);
    else
        st = knut_pipeline__append_update(r, f, ds, dsi, query.data, per ? &rel : NULL, sr, nsr,
                                          state, details, ferr);
    if (f->stream && f->stream->trigger == KNUT_PIPELINE_TRIGGER_ONCE)
        r->more = 0; /* one micro-batch per run */
    if (st == KNUT_OK && *state == KNUT_PIPELINE__COMPLETED)
        st = knut_duck_conn_commit(r->conn, ferr);
    if (st != KNUT_OK || *state != KNUT_PIPELINE__COMPLETED) {
        knut_error ignored = KNUT_ERROR_INIT;
        knut_duck_conn_rollback(r->conn, &ignored);
        if (st != KNUT_OK)
            goto flow_failed;
        goto done;
    }
    if (ds->kind == KNUT_PIPELINE_STREAMING_TABLE)
        r->reset[dsi] = 0; /* later flows into it append to the fresh table */
    goto done;
flow_failed:
    /* ferr holds DuckDB's message: name the flow and where it is defined. */
    *state = KNUT_PIPELINE__FAILED;
    {
        char msg[KNUT_ERROR_MSG_MAX];
        /* Flows running at the same time write different tables, so a
         * conflict is unexpected (something else wrote the same table):
         * said as such, with the way out. */
        r->conflict = ferr->detail == KNUT_DUCK_ERR_TRANSACTION &&
                      strstr(ferr->message, "onflict") != NULL;
        knut_duck_error_trim(ferr); /* the echo of our staging SQL helps no one */
        snprintf(msg, sizeof msg, "%s", ferr->message);
        knut_status code = ferr->code;
        knut_pipeline__error_at(ferr, code ? code : KNUT_ERROR, f->pos,
                                "flow '%s' failed: %s%s", f->name,
                                r->conflict ? "a DuckDB transaction conflict with another "
                                              "update (rolled back, the target is unchanged; "
                                              "run again, or with --parallel 1): "
                                            : "",
                                msg);
    }
    st = KNUT_OK;
done:
    if (views)
        knut_pipeline__stream_views_drop(r, sr, nsr);
    free(sr);
    knut_buf_reset(&query);
    for (size_t i = 0; per && i < f->nsources; i++)
        knut_pipeline__strvec_free(&per[i]);
    free(per);
    knut_pipeline__strvec_free(&rel);
    return st;
}
