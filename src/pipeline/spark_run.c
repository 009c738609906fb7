/*
 * A lowered pipeline run on a Spark Connect server: the session settings
 * the lowering asked for, CreateDataflowGraph, a DefineOutput per output
 * and a DefineFlow per flow, then StartRun, whose events (free text:
 * "Flow spark_catalog.default.x is RUNNING.") become knut's run events in
 * the native JSON format, and DropDataflowGraph. Spark streams no FAILED
 * run event: a failed run is StartRun's error.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "knut/arrow.h"
#include "knut/net.h"
#include "pipeline_int.h"
#include "spark_int.h"

typedef struct srun {
    knut_pipeline_spark_plan *pl;
    const knut_pipeline_run_options *opts;
    int64_t seq;
    int run_done;
    knut_pipeline_run_result res;
    unsigned char *outcome; /* per flow of the pipeline: COMPLETED 1, FAILED/SKIPPED 2 */
} srun;

enum { FLOW_COMPLETED = 1, FLOW_BAD = 2 };

/* The run's asset events (docs/pipelines.md "Airflow asset events"): one
 * per dataset a flow COMPLETED and none FAILED or was SKIPPED. Spark's
 * events do not count rows: `rows` is null. */
static void assets_send(const srun *r, knut_net_airflow *sender)
{
    const knut_pipeline *p = r->pl->p;
    for (size_t i = 0; sender && i < p->nflows; i++) {
        const char *t = p->flows[i].target;
        int first = 1, ok = 0, bad = 0;
        for (size_t k = 0; k < p->nflows; k++) {
            if (strcmp(p->flows[k].target, t) != 0)
                continue;
            first &= k >= i;
            ok |= r->outcome[k] & FLOW_COMPLETED;
            bad |= r->outcome[k] & FLOW_BAD;
        }
        if (first && ok && !bad)
            knut_pipeline__asset_emit(p, sender, t, -1, 1, "spark-sdp");
    }
}

static void emit(srun *r, int64_t ts_us, const char *type, const char *level, const char *flow,
                 const char *dataset, const char *status, const char *message,
                 const char *details)
{
    if (!r->opts || !r->opts->on_event)
        return;
    char ts[40];
    int64_t us = ts_us > 0 ? ts_us : knut_clock_wall_us();
    time_t secs = (time_t)(us / 1000000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    size_t n = strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(ts + n, sizeof ts - n, ".%06lldZ", (long long)(us % 1000000));
    knut_buf b;
    knut_buf_init(&b, (size_t)1 << 20);
    knut_buf_printf(&b, "{\"run_id\":1,\"seq\":%lld", (long long)++r->seq);
    const char *keys[] = {"ts", "event_type", "level", "pipeline", "flow", "dataset", "status",
                          "message"};
    const char *vals[] = {ts, type, level, r->pl->p->name, flow, dataset, status, message};
    for (size_t i = 0; i < 8; i++) {
        knut_buf_printf(&b, ",\"%s\":", keys[i]);
        if (vals[i])
            knut_buf_put_json_str(&b, vals[i], strlen(vals[i]));
        else
            knut_buf_puts(&b, "null");
    }
    knut_buf_printf(&b, ",\"details\":%s}", details ? details : "{}");
    if (b.error == KNUT_OK)
        r->opts->on_event(b.data, b.len, r->opts->ctx);
    knut_buf_reset(&b);
}

/* The knut flow a Spark flow name ("spark_catalog.default.x", "'x'", "`x`")
 * stands for: its last part. *added 1 for a view knut added. */
static const knut_pipeline_flow *flow_of(srun *r, const char *name, size_t len, int *added)
{
    while (len && (name[len - 1] == '\'' || name[len - 1] == '`'))
        len--;
    size_t from = len;
    while (from > 0 && name[from - 1] != '.' && name[from - 1] != '\'' && name[from - 1] != '`')
        from--;
    name += from;
    len -= from;
    *added = len > 11 && strncmp(name, "__knut_src_", 11) == 0;
    const knut_pipeline *p = r->pl->p;
    for (size_t i = 0; i < p->nflows; i++)
        if (strlen(p->flows[i].name) == len && strncmp(p->flows[i].name, name, len) == 0)
            return &p->flows[i];
    return NULL;
}

/* "Flow <name> is|has <STATUS>." / "Flow '<name>' SKIPPED ..." / "Run is <STATUS>." */
static void on_event(void *ctx, int64_t ts_us, const char *msg)
{
    srun *r = ctx;
    knut_buf d;
    knut_buf_init(&d, (size_t)1 << 20); /* a failure's text carries Spark's plan */
    knut_buf_puts(&d, "{\"backend\":\"spark\",\"spark_message\":");
    knut_buf_put_json_str(&d, msg, strlen(msg));
    knut_buf_puts(&d, "}");
    const char *det = d.error == KNUT_OK ? d.data : NULL;
    if (strncmp(msg, "Run is ", 7) == 0) {
        char status[32] = "";
        sscanf(msg + 7, "%31[A-Z_]", status);
        r->run_done = 1;
        emit(r, ts_us, "update_progress", strcmp(status, "COMPLETED") ? "ERROR" : "INFO", NULL,
             NULL, status, msg, det);
        goto done;
    }
    /* "Failed to resolve flow[ due to upstream failure]: 'x'." */
    const char *res = "Failed to resolve flow";
    if (strncmp(msg, res, strlen(res)) == 0 && strchr(msg, '\'')) {
        const char *q = strchr(msg, '\'') + 1, *qe = strchr(q, '\'');
        int upstream = strstr(msg, "upstream failure") && strstr(msg, "upstream failure") < q;
        int added = 0;
        const knut_pipeline_flow *f = qe ? flow_of(r, q, (size_t)(qe - q), &added) : NULL;
        if (f) {
            r->res.failed += !upstream;
            r->res.skipped += upstream;
            emit(r, ts_us, "flow_progress", upstream ? "WARN" : "ERROR", f->name, f->target,
                 upstream ? "SKIPPED" : "FAILED", msg, det);
            goto done;
        }
    }
    if (strncmp(msg, "Flow ", 5) != 0) {
        emit(r, ts_us, "spark_log", "INFO", NULL, NULL, NULL, msg, det);
        goto done;
    }
    const char *name = msg + 5, *end = name;
    /* the name ends at " is ", " has " or " SKIPPED" (names may be quoted) */
    const char *verbs[] = {" is ", " has ", " SKIPPED", " Failed"};
    const char *best = NULL;
    for (size_t i = 0; i < 4; i++) {
        const char *v = strstr(name, verbs[i]);
        if (v && (!best || v < best))
            best = v;
    }
    end = best ? best : name + strlen(name);
    char status[32] = "";
    if (best && strncmp(best, " SKIPPED", 8) == 0)
        snprintf(status, sizeof status, "SKIPPED");
    else if (best)
        sscanf(strchr(best + 1, ' ') + 1, "%31[A-Z_]", status);
    int added = 0;
    const knut_pipeline_flow *f = flow_of(r, name, (size_t)(end - name), &added);
    if (added)
        goto done; /* a file source's view: part of the flow that reads it */
    if (!status[0]) {
        emit(r, ts_us, "spark_log", "INFO", f ? f->name : NULL, f ? f->target : NULL, NULL, msg,
             det);
        goto done;
    }
    /* Spark's STARTING is knut's RUNNING (the update began); the other
     * statuses are the same words (Spark adds STOPPED and EXCLUDED). */
    if (strcmp(status, "STARTING") == 0)
        snprintf(status, sizeof status, "RUNNING");
    const char *level = strcmp(status, "FAILED") == 0    ? "ERROR"
                        : strcmp(status, "SKIPPED") == 0 ? "WARN"
                                                         : "INFO";
    r->res.completed += strcmp(status, "COMPLETED") == 0;
    r->res.failed += strcmp(status, "FAILED") == 0;
    r->res.skipped += strcmp(status, "SKIPPED") == 0;
    r->res.idle += strcmp(status, "IDLE") == 0;
    if (f && r->outcome) {
        size_t i = (size_t)(f - r->pl->p->flows);
        r->outcome[i] |= strcmp(status, "COMPLETED") == 0 ? FLOW_COMPLETED : 0;
        r->outcome[i] |= strcmp(status, "FAILED") == 0 || strcmp(status, "SKIPPED") == 0
                             ? FLOW_BAD
                             : 0;
    }
    char fallback[256];
    if (!f)
        snprintf(fallback, sizeof fallback, "%.*s", (int)(end - name), name);
    emit(r, ts_us, "flow_progress", level, f ? f->name : fallback, f ? f->target : NULL, status,
         msg, det);
done:
    knut_buf_reset(&d);
}

/* SET k=v on the session (read to the end). */
static knut_status session_set(knut_spark_session *s, const knut_spark_sdp_kv *kv,
                               knut_error *err)
{
    char sql[512];
    snprintf(sql, sizeof sql, "SET %s=%s", kv->key, kv->value);
    knut_spark_exec_options eo = KNUT_SPARK_EXEC_OPTIONS_INIT;
    eo.not_reattachable = 1;
    struct ArrowArrayStream rows;
    knut_status st = knut_spark_sql(s, sql, &eo, &rows, err);
    if (st != KNUT_OK)
        return st;
    struct ArrowArray a;
    while (rows.get_next(&rows, &a) == 0 && a.release)
        a.release(&a);
    rows.release(&rows);
    return KNUT_OK;
}

/* A definition the server refused: the flow's failure. */
static knut_status define_failed(srun *r, const knut_pipeline__spark_flow *lf, knut_error *err)
{
    const knut_pipeline_flow *f = lf ? lf->f : NULL;
    if (f) {
        knut_error_prefix(err, "%s:%d:%d: flow '%s' failed: ", f->pos.file ? f->pos.file : "",
                          f->pos.line, f->pos.col, f->name);
        emit(r, 0, "flow_progress", "ERROR", f->name, f->target, "FAILED", err->message, NULL);
        r->res.failed++;
    }
    emit(r, 0, "update_progress", "ERROR", NULL, NULL, "FAILED", err->message, NULL);
    return KNUT_ERROR;
}

knut_status knut_pipeline_spark_run(knut_pipeline_spark_plan *pl, knut_spark_session *s,
                                    const knut_pipeline_run_options *opts,
                                    knut_pipeline_run_result *result, knut_error *err)
{
    KNUT_ASSERT_ARG(err, pl && s);
    KNUT_CHECK_VERSION(opts, KNUT_PIPELINE_RUN_OPTIONS_VERSION, err);
    srun r = {.pl = pl, .opts = opts};
    if (result)
        memset(result, 0, sizeof *result);
    if (pl->refused.n)
        return knut_error_set(err, KNUT_EINVAL, "%s", pl->refused.v[0]);
    for (size_t i = 0; i < pl->nflows; i++)
        if (pl->flows[i].refused.n)
            return knut_error_set(err, KNUT_EINVAL, "flow '%s' cannot run on Spark %s: %s",
                                  pl->flows[i].sf.name, pl->version, pl->flows[i].refused.v[0]);
    knut_net_airflow *assets = NULL;
    int dry = opts && opts->dry_run;
    /* a bad `airflow:` (no password) stops the run before anything is sent */
    knut_status st = dry ? KNUT_OK : knut_pipeline__assets_open(pl->p, &assets, err);
    if (st != KNUT_OK)
        return st;
    if (!(r.outcome = calloc(pl->p->nflows + 1, 1))) {
        knut_net_airflow_close(assets);
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < pl->nsession_conf && st == KNUT_OK; i++)
        st = session_set(s, &pl->session_conf[i], err);
    char graph[64] = "";
    if (st == KNUT_OK)
        st = knut_spark_sdp_graph_new(s, pl->database, pl->conf, pl->nconf, graph, NULL, err);
    if (st != KNUT_OK)
        goto cleanup;
    for (size_t i = 0; i < pl->noutputs; i++)
        if ((st = knut_spark_sdp_output_define(s, graph, &pl->outputs[i].o, NULL, err)) !=
            KNUT_OK) {
            st = st == KNUT_EPEER ? st : define_failed(&r, NULL, err);
            goto cleanup;
        }
    for (size_t i = 0; i < pl->nflows; i++) {
        if ((st = knut_spark_sdp_flow_define(s, graph, &pl->flows[i].sf, NULL, err)) != KNUT_OK) {
            const knut_pipeline__spark_flow *lf = &pl->flows[i];
            /* a view knut added fails as the flow that reads it */
            for (size_t k = i; !lf->f && k < pl->nflows; k++)
                lf = &pl->flows[k];
            st = st == KNUT_EPEER ? st : define_failed(&r, lf, err);
            goto cleanup;
        }
    }
    emit(&r, 0, "update_progress", "INFO", NULL, NULL, "RUNNING",
         opts && opts->dry_run ? "Dry run on Spark: resolve and validate only."
                               : "Update is RUNNING.",
         "{\"backend\":\"spark\"}");
    knut_spark_sdp_run_options ro = {.storage = pl->storage,
                                     .dry = opts && opts->dry_run,
                                     .full_refresh_all = opts && opts->full_refresh_all,
                                     .full_refresh = opts ? opts->full_refresh : NULL,
                                     .nfull_refresh = opts ? opts->nfull_refresh : 0,
                                     .on_event = on_event,
                                     .ctx = &r};
    st = knut_spark_sdp_run(s, graph, &ro, NULL, err);
    if (st != KNUT_OK) {
        /* the run started: whatever ended it, it failed */
        emit(&r, 0, "update_progress", "ERROR", NULL, NULL, "FAILED", err->message, NULL);
        st = KNUT_ERROR;
    } else if (st == KNUT_OK && r.res.failed) {
        st = knut_error_set(err, KNUT_ERROR, "%zu flow(s) failed on Spark", r.res.failed);
    } else if (st == KNUT_OK && !r.run_done) {
        emit(&r, 0, "update_progress", "INFO", NULL, NULL, "COMPLETED", "Run is COMPLETED.",
             NULL);
    }
cleanup:;
    knut_error derr = KNUT_ERROR_INIT;
    if (graph[0])
        knut_spark_sdp_graph_drop(s, graph, &derr); /* best effort: the run is over */
    assets_send(&r, assets);
    knut_net_airflow_close(assets); /* the drain: unsent events get their time */
    free(r.outcome);
    if (result)
        *result = r.res;
    return st;
}
