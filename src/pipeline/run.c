/*
 * A pipeline run: the storage folder (the DuckDB database
 * <catalog>.duckdb, whose _knut schema holds the checkpoints and the
 * event log, and the run log events.jsonl), then the flows (run_sched.c:
 * in dependency order, on one or more workers). Every event goes to the
 * caller, the run log and the event-log table.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include "knut/net.h"
#include "pipeline_int.h"

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
    knut_pipeline__events *ev = r->ev;
    char ts[40];
    /* One lock around it all: seq and ts grow together, lines and rows are
     * whole, and the caller's callback never runs twice at once. */
    pthread_mutex_lock(&ev->lock);
    int64_t us = knut_clock_wall_us();
    time_t secs = (time_t)(us / 1000000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    size_t n = strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(ts + n, sizeof ts - n, ".%06lldZ", (long long)(us % 1000000));
    int64_t seq = ++ev->seq;
    knut_buf b = KNUT_BUF_INIT;
    knut_buf_init(&b, (size_t)1 << 20);
    knut_buf_printf(&b, "{\"run_id\":%lld,\"seq\":%lld", (long long)r->run_id, (long long)seq);
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
    knut_pipeline__lineage_event(r, type, f, status, message, details); /* lineage.c */
    if (r->dry)
        goto done;
    if (ev->log && (fprintf(ev->log, "%s\n", b.data) < 0 || fflush(ev->log) != 0)) {
        st = knut_error_set(err, KNUT_EIO, "%s/events.jsonl: cannot write: %s", r->dir,
                            strerror(errno));
        goto done;
    }
    char run[32], seqs[32];
    snprintf(run, sizeof run, "%lld", (long long)r->run_id);
    snprintf(seqs, sizeof seqs, "%lld", (long long)seq);
    const char *binds[] = {run, seqs, ts, type, level, f ? f->name : NULL, f ? f->target : NULL,
                           status, message, details && *details ? details : "{}"};
    st = knut_pipeline__exec(ev->conn,
                             "INSERT INTO _knut.event_log VALUES ($1::BIGINT, $2::BIGINT, "
                             "strptime($3, '%Y-%m-%dT%H:%M:%S.%fZ'), $4, $5, $6, $7, $8, $9, $10)",
                             binds, 10, NULL, err);
done:
    pthread_mutex_unlock(&ev->lock);
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

/* The pipeline schema as conn's default, when it exists (a dry run may
 * find none). */
static knut_status default_schema(knut_pipeline__run *r, knut_duck_conn *conn, knut_error *err)
{
    const char *binds[] = {r->p->schema};
    int64_t n = 0;
    knut_status st = knut_pipeline__scalar_i64(conn,
                                               "SELECT count(*) FROM duckdb_schemas() WHERE "
                                               "database_name = current_database() AND "
                                               "schema_name = $1",
                                               binds, 1, &n, err);
    if (st != KNUT_OK || !n)
        return st;
    knut_buf b = KNUT_BUF_INIT;
    knut_buf_puts(&b, "SET schema = ");
    knut_duck_literal(&b, r->p->schema, strlen(r->p->schema));
    if ((st = knut_buf_check(&b, err)) == KNUT_OK)
        st = knut_duck_exec(conn, b.data, err);
    knut_buf_reset(&b);
    return st;
}

knut_status knut_pipeline__conn_setup(knut_pipeline__run *r, knut_duck_conn *conn,
                                      knut_error *err)
{
    int64_t files_per_update; /* the run's own connection read it already */
    knut_status st = knut_pipeline__settings_apply(r->p, conn, &files_per_update, err);
    return st == KNUT_OK ? default_schema(r, conn, err) : st;
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
    if (st == KNUT_OK)
        st = default_schema(r, r->conn, err);
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
    if (!(r->ev->log = fopen(b.data, "a")))
        st = knut_error_set(err, KNUT_EIO, "%s: cannot open: %s", b.data, strerror(errno));
done:
    knut_buf_reset(&b);
    return st;
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
    knut_pipeline__events ev = {.lock = PTHREAD_MUTEX_INITIALIZER};
    knut_pipeline__run r = {.p = p, .opts = opts, .dry = opts && opts->dry_run, .ev = &ev};
    knut_error first = KNUT_ERROR_INIT;
    knut_status st = KNUT_OK;
    knut_net_airflow *assets = NULL;
    r.reset = calloc(p->ndatasets ? p->ndatasets : 1, 1);
    if (!r.reset) {
        st = knut_error_set(err, KNUT_ENOMEM, "pipeline: out of memory");
        goto cleanup;
    }
    if (!p->resolved && (st = knut_pipeline_resolve(p, err)) != KNUT_OK)
        goto cleanup;
    /* the Airflow sender first: a missing password stops the run before
     * the storage records one */
    if ((st = mark_refresh(&r, err)) != KNUT_OK ||
        (!r.dry && (st = knut_pipeline__assets_open(p, &assets, err)) != KNUT_OK) || /* assets.c */
        (!r.dry && (st = knut_pipeline__lineage_open(p, &r.lineage, err)) != KNUT_OK) ||
        (st = open_storage(&r, err)) != KNUT_OK)
        goto cleanup;
    ev.conn = r.conn;
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
    if ((st = knut_pipeline__schedule(&r, opts && opts->parallel > 1 ? opts->parallel : 1, &res,
                                      &first, err)) != KNUT_OK)
        goto cleanup;
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
    knut_pipeline__assets_run(&r, assets);
    if (res.failed) {
        if (err)
            *err = first;
        st = KNUT_ERROR;
    }
cleanup:
    knut_net_airflow_close(assets); /* the drain: unsent events get their time */
    knut_pipeline__lineage_close(r.lineage);
    res.run_id = r.run_id;
    if (result)
        *result = res;
    if (ev.log)
        fclose(ev.log);
    knut_duck_conn_close(r.conn);
    knut_duck_db_close(r.db);
    free(r.dir);
    free(r.reset);
    return st;
}
