/*
 * A pipeline run: the storage folder (the DuckDB database
 * <catalog>.duckdb, whose _knut schema holds the checkpoints and the
 * event log, and the run log events.jsonl), then the flows in run order.
 * A flow whose upstream failed or was skipped is skipped; independent
 * flows run on. Every event goes to the caller, the run log and the
 * event-log table.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include "pipeline_int.h"

static const char *const state_names[] = {"COMPLETED", "FAILED", "SKIPPED", "IDLE"};

static const char setup_sql[] =
    "CREATE SCHEMA IF NOT EXISTS _knut;"
    "CREATE TABLE IF NOT EXISTS _knut.runs (run_id BIGINT PRIMARY KEY, started_at TIMESTAMP,"
    " state VARCHAR);"
    "CREATE TABLE IF NOT EXISTS _knut.files (flow VARCHAR, file VARCHAR, run_id BIGINT);"
    "CREATE TABLE IF NOT EXISTS _knut.flows (flow VARCHAR PRIMARY KEY, once_done BOOLEAN);"
    "CREATE TABLE IF NOT EXISTS _knut.offsets (flow VARCHAR, source VARCHAR, last_rowid BIGINT,"
    " PRIMARY KEY (flow, source));"
    /* Event-time flows: the watermark (microseconds), the watermark the
     * last batch emitted up to, and the batch count (run_stream.c). */
    "CREATE TABLE IF NOT EXISTS _knut.stream_state (flow VARCHAR PRIMARY KEY, watermark_us BIGINT,"
    " evicted_us BIGINT, batches BIGINT);"
    "CREATE TABLE IF NOT EXISTS _knut.event_log (run_id BIGINT, seq BIGINT, ts TIMESTAMP,"
    " event_type VARCHAR, level VARCHAR, flow VARCHAR, dataset VARCHAR, status VARCHAR,"
    " message VARCHAR, details VARCHAR);"
    /* The per-expectation counts of every completed flow, one row each. */
    "CREATE OR REPLACE VIEW _knut.expectation_log AS SELECT run_id, seq, ts, flow, dataset,"
    " e->>'name' AS expectation, e->>'action' AS action,"
    " (e->>'passed_records')::BIGINT AS passed_records,"
    " (e->>'failed_records')::BIGINT AS failed_records"
    " FROM (SELECT *, unnest(from_json(details::JSON->'data_quality'->'expectations',"
    " '[\"JSON\"]')) AS e FROM _knut.event_log"
    " WHERE event_type = 'flow_progress' AND status = 'COMPLETED');";

static void json_field(knut_buf *b, const char *key, const char *v)
{
    knut_buf_printf(b, ",\"%s\":", key);
    if (v)
        knut_buf_put_json_str(b, v, strlen(v));
    else
        knut_buf_puts(b, "null");
}

knut_status knut_pipeline__event(knut_pipeline__run *r, const char *type, const char *level,
                                 const knut_pipeline_flow *f, const char *status,
                                 const char *message, const char *details, knut_error *err)
{
    char ts[40];
    int64_t us = knut_clock_wall_us();
    time_t secs = (time_t)(us / 1000000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    size_t n = strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(ts + n, sizeof ts - n, ".%06lldZ", (long long)(us % 1000000));
    r->seq++;
    knut_buf b = KNUT_BUF_INIT;
    knut_buf_init(&b, (size_t)1 << 20);
    knut_buf_printf(&b, "{\"run_id\":%lld,\"seq\":%lld", (long long)r->run_id, (long long)r->seq);
    json_field(&b, "ts", ts);
    json_field(&b, "event_type", type);
    json_field(&b, "level", level);
    json_field(&b, "pipeline", r->p->name);
    json_field(&b, "flow", f ? f->name : NULL);
    json_field(&b, "dataset", f ? f->target : NULL);
    json_field(&b, "status", status);
    json_field(&b, "message", message);
    knut_buf_printf(&b, ",\"details\":%s}", details && *details ? details : "{}");
    knut_status st = knut_buf_check(&b, err);
    if (st != KNUT_OK)
        goto done;
    if (r->opts && r->opts->on_event)
        r->opts->on_event(b.data, b.len, r->opts->ctx);
    if (r->dry)
        goto done;
    if (r->log && (fprintf(r->log, "%s\n", b.data) < 0 || fflush(r->log) != 0)) {
        st = knut_error_set(err, KNUT_EIO, "%s/events.jsonl: cannot write: %s", r->dir,
                            strerror(errno));
        goto done;
    }
    char run[32], seq[32];
    snprintf(run, sizeof run, "%lld", (long long)r->run_id);
    snprintf(seq, sizeof seq, "%lld", (long long)r->seq);
    const char *binds[] = {run, seq, ts, type, level, f ? f->name : NULL, f ? f->target : NULL,
                           status, message, details && *details ? details : "{}"};
    st = knut_pipeline__exec(r->conn,
                             "INSERT INTO _knut.event_log VALUES ($1::BIGINT, $2::BIGINT, "
                             "strptime($3, '%Y-%m-%dT%H:%M:%S.%fZ'), $4, $5, $6, $7, $8, $9, $10)",
                             binds, 10, NULL, err);
done:
    knut_buf_reset(&b);
    return st;
}

static int mkdirs(char *path)
{
    for (char *s = path + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        int rc = mkdir(path, 0755);
        *s = '/';
        if (rc != 0 && errno != EEXIST)
            return -1;
    }
    return mkdir(path, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

static knut_status open_storage(knut_pipeline__run *r, knut_error *err)
{
    knut_pipeline *p = r->p;
    knut_buf b = KNUT_BUF_INIT;
    if (p->storage[0] != '/' && strcmp(p->root, ".") != 0)
        knut_buf_printf(&b, "%s/", p->root);
    knut_buf_puts(&b, p->storage);
    knut_status st = knut_buf_check(&b, err);
    if (st != KNUT_OK)
        goto done;
    r->dir = knut_buf_detach(&b, NULL);
    knut_buf_printf(&b, "%s/%s.duckdb", r->dir, p->catalog);
    if ((st = knut_buf_check(&b, err)) != KNUT_OK)
        goto done;
    struct stat sb;
    int exists = stat(b.data, &sb) == 0;
    if (r->dry) {
        knut_duck_option ro = {"access_mode", "READ_ONLY"};
        st = knut_duck_db_open(&r->db, exists ? b.data : NULL, exists ? &ro : NULL, exists, err);
    } else {
        if (mkdirs(r->dir) != 0) {
            st = knut_error_set(err, KNUT_EIO, "storage %s: cannot create the folder: %s", r->dir,
                                strerror(errno));
            goto done;
        }
        st = knut_duck_db_open(&r->db, b.data, NULL, 0, err);
    }
    if (st == KNUT_OK)
        st = knut_duck_conn_open(&r->conn, r->db, err);
    if (st != KNUT_OK) {
        knut_error_prefix(err, "storage %s: ", r->dir);
        goto done;
    }
    st = knut_pipeline__settings_apply(p, r->conn, &r->files_per_update, err); /* settings.c */
    if (st != KNUT_OK || (r->dry && exists))
        goto schema;
    if ((st = knut_duck_exec(r->conn, setup_sql, err)) != KNUT_OK)
        goto done;
    knut_buf_clear(&b);
    knut_buf_puts(&b, "CREATE SCHEMA IF NOT EXISTS ");
    knut_duck_ident(&b, p->schema);
    if ((st = knut_buf_check(&b, err)) != KNUT_OK || (st = knut_duck_exec(r->conn, b.data, err)))
        goto done;
schema:
    if (st != KNUT_OK)
        goto done;
    {
        const char *binds[] = {p->schema};
        int64_t n = 0;
        st = knut_pipeline__scalar_i64(r->conn,
                                       "SELECT count(*) FROM duckdb_schemas() WHERE "
                                       "database_name = current_database() AND schema_name = $1",
                                       binds, 1, &n, err);
        if (st == KNUT_OK && n) {
            knut_buf_clear(&b);
            knut_buf_puts(&b, "SET schema = ");
            knut_duck_literal(&b, p->schema, strlen(p->schema));
            if ((st = knut_buf_check(&b, err)) == KNUT_OK)
                st = knut_duck_exec(r->conn, b.data, err);
        }
    }
    if (st != KNUT_OK || r->dry)
        goto done;
    if ((st = knut_pipeline__scalar_i64(r->conn,
                                        "SELECT coalesce(max(run_id), 0) + 1 FROM _knut.runs",
                                        NULL, 0, &r->run_id, err)) != KNUT_OK)
        goto done;
    {
        char run[32];
        snprintf(run, sizeof run, "%lld", (long long)r->run_id);
        const char *binds[] = {run};
        st = knut_pipeline__exec(r->conn,
                                 "INSERT INTO _knut.runs VALUES ($1::BIGINT, now()::TIMESTAMP, "
                                 "'RUNNING')",
                                 binds, 1, NULL, err);
    }
    if (st != KNUT_OK)
        goto done;
    knut_buf_clear(&b);
    knut_buf_printf(&b, "%s/events.jsonl", r->dir);
    if ((st = knut_buf_check(&b, err)) != KNUT_OK)
        goto done;
    if (!(r->log = fopen(b.data, "a")))
        st = knut_error_set(err, KNUT_EIO, "%s: cannot open: %s", b.data, strerror(errno));
done:
    knut_buf_reset(&b);
    return st;
}

/* 1 if an upstream flow of f did not complete (failed or skipped). */
static int upstream_broken(const knut_pipeline *p, const knut_pipeline_flow *f,
                           const unsigned char *broken)
{
    for (size_t i = 0; i < f->nreads; i++) {
        if (!f->reads[i].internal)
            continue;
        for (size_t k = 0; k < p->nflows; k++)
            if (broken[k] && strcmp(p->flows[k].target, f->reads[i].name) == 0)
                return 1;
    }
    return 0;
}

static knut_status mark_refresh(knut_pipeline__run *r, knut_error *err)
{
    const knut_pipeline_run_options *o = r->opts;
    for (size_t i = 0; i < r->p->ndatasets; i++)
        r->reset[i] = o && o->full_refresh_all;
    for (size_t i = 0; o && i < o->nfull_refresh; i++) {
        const knut_pipeline_dataset *ds = knut_pipeline_dataset_find(r->p, o->full_refresh[i]);
        if (!ds)
            return knut_error_set(err, KNUT_EINVAL, "--full-refresh: no dataset named '%s' in "
                                  "pipeline %s", o->full_refresh[i], r->p->name);
        r->reset[ds - r->p->datasets] = 1;
    }
    /* pipelines.reset.allowed = false: a full refresh is a normal update. */
    for (size_t i = 0; i < r->p->ndatasets; i++)
        for (size_t k = 0; k < r->p->datasets[i].nproperties; k++) {
            const knut_pipeline_setting *s = &r->p->datasets[i].properties[k];
            if (strcmp(s->name, "pipelines.reset.allowed") == 0 &&
                strcasecmp(s->value, "false") == 0)
                r->reset[i] = 0;
        }
    return KNUT_OK;
}

knut_status knut_pipeline_run(knut_pipeline *p, const knut_pipeline_run_options *opts,
                              knut_pipeline_run_result *result, knut_error *err)
{
    KNUT_ASSERT_ARG(err, p != NULL);
    KNUT_CHECK_VERSION(opts, KNUT_PIPELINE_RUN_OPTIONS_VERSION, err);
    knut_pipeline_run_result res = {0};
    knut_pipeline__run r = {.p = p, .opts = opts, .dry = opts && opts->dry_run};
    unsigned char *broken = calloc(p->nflows ? p->nflows : 1, 1);
    knut_buf details = KNUT_BUF_INIT;
    knut_error first = KNUT_ERROR_INIT;
    knut_status st = KNUT_OK;
    r.reset = calloc(p->ndatasets ? p->ndatasets : 1, 1);
    if (!broken || !r.reset) {
        st = knut_error_set(err, KNUT_ENOMEM, "pipeline: out of memory");
        goto cleanup;
    }
    if (!p->resolved && (st = knut_pipeline_resolve(p, err)) != KNUT_OK)
        goto cleanup;
    if ((st = mark_refresh(&r, err)) != KNUT_OK || (st = open_storage(&r, err)) != KNUT_OK)
        goto cleanup;
    if ((st = knut_pipeline__event(&r, "update_progress", "INFO", NULL, "RUNNING",
                                   r.dry ? "Dry run: planning only." : "Update is RUNNING.", NULL,
                                   err)) != KNUT_OK)
        goto cleanup;
    char msg[KNUT_ERROR_MSG_MAX + 64];
    for (size_t i = 0; i < p->nflows && !r.dry; i++) {
        const knut_pipeline_flow *f = &p->flows[p->order[i]];
        snprintf(msg, sizeof msg, "Flow '%s' is QUEUED.", f->name);
        if ((st = knut_pipeline__event(&r, "flow_progress", "INFO", f, "QUEUED", msg, NULL,
                                       err)) != KNUT_OK)
            goto cleanup;
    }
    for (size_t i = 0; i < p->nflows; i++) {
        size_t fi = p->order[i];
        r.more = 0;
        knut_pipeline_flow *f = &p->flows[fi];
        knut_pipeline__state state;
        knut_error ferr = KNUT_ERROR_INIT;
        knut_buf_clear(&details);
        int64_t t0 = knut_clock_mono_ns();
        if (upstream_broken(p, f, broken)) {
            state = KNUT_PIPELINE__SKIPPED;
            snprintf(msg, sizeof msg, "Flow '%s' SKIPPED due to upstream failure(s).", f->name);
        } else {
            /* PLANNING: its inputs are looked up; flow_run says RUNNING
             * once it starts the update. */
            snprintf(msg, sizeof msg, "Flow '%s' is PLANNING.", f->name);
            if (!r.dry && (st = knut_pipeline__event(&r, "flow_progress", "INFO", f, "PLANNING",
                                                     msg, NULL, err)) != KNUT_OK)
                goto cleanup;
            if ((st = knut_pipeline__flow_run(&r, f, &state, &details, &ferr, err)) != KNUT_OK)
                goto cleanup;
            if (state == KNUT_PIPELINE__FAILED)
                snprintf(msg, sizeof msg, "%s", ferr.message);
            else if (r.dry)
                snprintf(msg, sizeof msg, "Flow '%s' is PLANNED.", f->name);
            else if (state == KNUT_PIPELINE__IDLE)
                snprintf(msg, sizeof msg, "Flow '%s' is IDLE, no new data.", f->name);
            else
                snprintf(msg, sizeof msg, "Flow '%s' has COMPLETED.", f->name);
        }
        if (state == KNUT_PIPELINE__FAILED || state == KNUT_PIPELINE__SKIPPED)
            broken[fi] = 1;
        if (state == KNUT_PIPELINE__FAILED && first.code == KNUT_OK)
            first = ferr;
        res.completed += state == KNUT_PIPELINE__COMPLETED;
        res.failed += state == KNUT_PIPELINE__FAILED;
        res.skipped += state == KNUT_PIPELINE__SKIPPED;
        res.idle += state == KNUT_PIPELINE__IDLE;
        /* duration_ms goes into the details object. */
        if (details.len && details.data[details.len - 1] == '}') {
            details.len--;
            knut_buf_printf(&details, "%s\"duration_ms\":%lld}", details.len > 1 ? "," : "",
                            (long long)((knut_clock_mono_ns() - t0) / 1000000));
        } else {
            knut_buf_printf(&details, "{\"duration_ms\":%lld}",
                            (long long)((knut_clock_mono_ns() - t0) / 1000000));
        }
        if (state == KNUT_PIPELINE__FAILED) {
            details.len--;
            knut_buf_puts(&details, ",\"error\":");
            knut_buf_put_json_str(&details, ferr.message, strlen(ferr.message));
            knut_buf_printf(&details, ",\"file\":");
            knut_buf_put_json_str(&details, f->pos.file, strlen(f->pos.file));
            knut_buf_printf(&details, ",\"line\":%d,\"col\":%d}", ferr.line, ferr.col);
        }
        if ((st = knut_buf_check(&details, err)) != KNUT_OK)
            goto cleanup;
        const char *status = r.dry && state == KNUT_PIPELINE__COMPLETED ? "PLANNED"
                                                                        : state_names[state];
        const char *level = state == KNUT_PIPELINE__FAILED    ? "ERROR"
                            : state == KNUT_PIPELINE__SKIPPED ? "WARN"
                                                              : "INFO";
        if ((st = knut_pipeline__event(&r, "flow_progress", level, f, status, msg, details.data,
                                       err)) != KNUT_OK)
            goto cleanup;
        /* More files than one update reads: the same flow again, as the
         * next update (each one its own transaction and event). */
        if (r.more && state == KNUT_PIPELINE__COMPLETED && !r.dry) {
            res.completed--;
            i--;
        }
    }
    const char *final = res.failed || res.skipped ? "FAILED" : "COMPLETED";
    if (r.dry)
        snprintf(msg, sizeof msg, "Dry run: %zu planned, %zu idle; nothing was written.",
                 res.completed, res.idle);
    else
        snprintf(msg, sizeof msg, "Update is %s: %zu completed, %zu idle, %zu failed, %zu skipped.",
                 final, res.completed, res.idle, res.failed, res.skipped);
    if ((st = knut_pipeline__event(&r, "update_progress", res.failed ? "ERROR" : "INFO", NULL,
                                   final, msg, NULL, err)) != KNUT_OK)
        goto cleanup;
    if (!r.dry) {
        char run[32];
        snprintf(run, sizeof run, "%lld", (long long)r.run_id);
        const char *binds[] = {final, run};
        st = knut_pipeline__exec(r.conn, "UPDATE _knut.runs SET state = $1 WHERE run_id = "
                                         "$2::BIGINT", binds, 2, NULL, err);
        if (st != KNUT_OK)
            goto cleanup;
    }
    if (res.failed) {
        if (err)
            *err = first;
        st = KNUT_ERROR;
    }
cleanup:
    res.run_id = r.run_id;
    if (result)
        *result = res;
    if (r.log)
        fclose(r.log);
    knut_duck_conn_close(r.conn);
    knut_duck_db_close(r.db);
    free(r.dir);
    free(r.reset);
    free(broken);
    knut_buf_reset(&details);
    return st;
}
