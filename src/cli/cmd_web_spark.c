/*
 * `knut web --connect URL --sql SQL`: a Spark job's stages on the page.
 *
 * The query runs as `knut watch` runs it (the session, the progress
 * interval, Ctrl-C interrupting it on the server: spark_cli.c); each
 * progress report Spark pushes is merged into the stage table, and a new
 * stage makes a new graph: one node per stage in stage id order and a
 * "result" node (the rows received) that every stage feeds. Spark
 * Connect's progress says neither which stage feeds which nor which job a
 * stage is of, so no edge between stages is drawn rather than a guessed
 * one. The graph's version goes up, the page loads it again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "knut/knut.h"
#include "web.h"

#define WEB_SPARK_SQL_MAX ((size_t)16 << 20)

typedef struct job {
    knut_cli_web *w;
    knut_cli_spark_stages stages;
    const char *peer;
    int64_t t0, rows;
    const char *status; /* the result node's */
    const char *error;
} job;

/* The graph for j's stages so far (w->mu held). */
static knut_status job_graph(job *j, knut_error *err)
{
    char title[300];
    snprintf(title, sizeof title, "Spark job%s%s", j->peer ? " on " : "",
             j->peer ? j->peer : "");
    knut_viewer_graph *g = NULL;
    size_t result = 0;
    knut_status rc = knut_viewer_graph_new(&g, title, err);
    for (size_t i = 0; rc == KNUT_OK && i < j->stages.n; i++) {
        char name[40];
        snprintf(name, sizeof name, "stage %lld", (long long)j->stages.at[i].s.stage_id);
        rc = knut_viewer_graph_add_node(g, name, "spark_stage", "stage", NULL, NULL, err);
    }
    if (rc == KNUT_OK)
        rc = knut_viewer_graph_add_node(g, "result", "result", "sql", NULL, &result, err);
    for (size_t i = 0; rc == KNUT_OK && i < j->stages.n; i++)
        rc = knut_viewer_graph_add_edge(g, i, result, "stage", err);
    if (rc != KNUT_OK) {
        knut_viewer_graph_free(g);
        return rc;
    }
    return knut_cli_web_set_graph(j->w, g, err);
}

/* Every node's stage from j (w->mu held); the graph is j's. */
static void job_fill(job *j, int64_t now)
{
    knut_cli_web *w = j->w;
    if (w->g->nnodes != j->stages.n + 1)
        return; /* the graph could not follow (out of memory): the last frame stays */
    for (size_t i = 0; i < j->stages.n; i++) {
        const knut_cli_spark_stage_seen *in = &j->stages.at[i];
        knut_cli_web_stage *s = &w->st[i];
        const char *status = in->s.done ? "completed" : "running";
        if (in->ended) /* not reported done: what the operation's end says */
            status = strcmp(j->status, "completed") != 0 ? "failed"
                     : in->s.num_completed_tasks == 0  ? "skipped" /* Spark reused a shuffle */
                                                       : "completed";
        knut_cli_web_set_status(w, i, status);
        s->tasks_done = in->s.num_completed_tasks;
        s->tasks_total = in->s.num_tasks;
        s->bytes_read = in->s.input_bytes_read;
    }
    size_t r = j->stages.n;
    knut_cli_web_stage *s = &w->st[r];
    knut_cli_web_set_status(w, r, j->status);
    s->rows = j->rows;
    double secs = (double)(now - j->t0) / 1e9;
    s->throughput = secs > 0 ? (double)j->rows / secs : 0;
    if (j->error && !s->error)
        s->error = strdup(j->error);
}

static void on_event(void *ctx, const knut_spark_event *ev)
{
    job *j = ctx;
    knut_cli_web *w = j->w;
    int64_t now = knut_clock_mono_ns();
    pthread_mutex_lock(&w->mu);
    if (ev->kind == KNUT_SPARK_EVENT_PROGRESS) {
        knut_error err = KNUT_ERROR_INIT;
        /* a graph that cannot be made keeps the old one; tried again on
         * the next report */
        if ((knut_cli_spark_stages_merge(&j->stages, ev, now) ||
             w->g->nnodes != j->stages.n + 1) && job_graph(j, &err) != KNUT_OK)
            fprintf(stderr, "knut web: the graph of the stages: %s\n", err.message);
    } else if (ev->kind == KNUT_SPARK_EVENT_BATCH) {
        j->rows = ev->total_rows;
    }
    job_fill(j, now);
    knut_cli_web_changed(w);
    pthread_mutex_unlock(&w->mu);
}

knut_status knut_cli_web_spark_start(knut_cli_web *w, knut_error *err)
{
    job j = {.w = w, .status = "queued"};
    knut_status rc = job_graph(&j, err);
    if (rc == KNUT_OK)
        knut_cli_web_set_status(w, 0, "queued");
    return rc;
}

/* The end of the query (w->mu not held): the result's status and error,
 * the stages not reported done settled by it. */
static void job_end(job *j, const char *status, const char *error)
{
    knut_cli_web *w = j->w;
    int64_t now = knut_clock_mono_ns();
    pthread_mutex_lock(&w->mu);
    j->status = status;
    j->error = error;
    knut_cli_spark_stages_end(&j->stages, now);
    job_fill(j, now);
    knut_cli_web_changed(w);
    pthread_mutex_unlock(&w->mu);
}

int knut_cli_web_spark_job(knut_cli_web *w, const knut_cli_spark_conn *conn, const char *sql_arg,
                           double report_interval)
{
    const knut_cli_spec *spec = &knut_cmd_web_spec;
    knut_error err = KNUT_ERROR_INIT;
    knut_buf input = KNUT_BUF_INIT;
    knut_cli_spark_stop stop = {.cmd = "web"};
    struct ArrowArrayStream rows = {0};
    const char *sql = NULL;
    int watching = 0, rc = KNUT_EXIT_FAIL;
    job *j = calloc(1, sizeof *j); /* the stage table is large for a stack */
    knut_spark_session *s = NULL;
    if (!j) {
        knut_error_set(&err, KNUT_ENOMEM, "out of memory");
        goto cleanup;
    }
    *j = (job){.w = w, .status = "queued", .t0 = knut_clock_mono_ns()};
    if (knut_cli_query_text(sql_arg, &input, WEB_SPARK_SQL_MAX, "SQL", &sql, &err) != KNUT_OK)
        goto cleanup;
    if ((rc = knut_cli_spark_open(spec, conn, NULL, &s)) != KNUT_EXIT_OK) {
        knut_error_set(&err, KNUT_EPEER, "cannot open a Spark session (why: knut web's stderr)");
        rc = KNUT_EXIT_FAIL;
        goto cleanup;
    }
    rc = KNUT_EXIT_FAIL;
    pthread_mutex_lock(&w->mu);
    j->peer = knut_spark_session_peer(s);
    j->status = "running";
    knut_status gs = job_graph(j, &err); /* titled with the server now */
    if (gs == KNUT_OK) {
        job_fill(j, knut_clock_mono_ns());
        knut_cli_web_changed(w);
    }
    pthread_mutex_unlock(&w->mu);
    j->t0 = knut_clock_mono_ns();
    int64_t n = 0;
    if (gs != KNUT_OK ||
        knut_cli_spark_watched_sql(s, &stop, report_interval, sql, on_event, j, NULL, &rows,
                                   &watching, &err) != KNUT_OK ||
        knut_arrow_stream_count_rows(&rows, &n, &err) != KNUT_OK)
        goto cleanup;
    atomic_store(&stop.armed, 0);
    j->rows = n;
    job_end(j, "completed", NULL);
    rc = KNUT_EXIT_OK;
cleanup:
    atomic_store(&stop.armed, 0);
    if (watching)
        knut_signal_unwatch();
    if (rc != KNUT_EXIT_OK) {
        char msg[sizeof err.message + 64];
        if (knut_signal_stop_requested()) {
            snprintf(msg, sizeof msg, "interrupted (operation %s stopped on the server)", stop.op);
            rc = 130;
        } else {
            snprintf(msg, sizeof msg, "%s", err.message[0] ? err.message : knut_strerror(err.code));
        }
        fprintf(stderr, "knut web: %s\n", msg);
        if (j)
            job_end(j, "failed", msg); /* job_fill copies msg */
    }
    knut_arrow_stream_release(&rows);
    knut_spark_session_free(s);
    knut_buf_reset(&input);
    free(j);
    return rc;
}
