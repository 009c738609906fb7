/*
 * `knut web [SPEC] [--run] [--addr IP:PORT]`: a live page of a pipeline's
 * DAG over the project's HTTP server (net). The page (src/viewer/page.html,
 * embedded at build time) draws /graph.json, laid out by the viewer part,
 * and applies the frames of /events (Server-Sent Events).
 *
 * The state (web.h) holds every node's stage. A producer (the demo replay
 * thread, the native or Spark run's event callback, or a Spark job's
 * progress in cmd_web_spark.c) changes it under a mutex and bumps seq;
 * each SSE connection sends only the latest frame when seq moved, so a
 * slow client is never waited for and skips the frames it missed
 * (coalescing). Event ids are "EPOCH-SEQ": a reconnecting client with the
 * same epoch and a seq at the newest gets nothing until the next change;
 * any other id (a restarted server) gets the latest frame at once.
 */
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "knut/pipeline.h"
#include "web.h"

extern const unsigned char knut_cli_web_page[];
extern const size_t knut_cli_web_page_len;

typedef struct web_args {
    const char *spec;
    const char *addr;
    int run;
    int64_t step_ms;
    knut_cli_spark_args spark; /* --connect: the run on Spark (cmd_pipeline_spark.c) */
    const char *sql;           /* --connect --sql: a Spark job (cmd_web_spark.c) */
    double interval;           /* -1: not given */
    int interval_set;
} web_args;

static const knut_cli_arg web_pos[] = {
    KNUT_CLI_ARG_OPT("SPEC", web_args, spec),
    KNUT_CLI_ARG_END,
};

static const knut_cli_opt web_opts[] = {
    KNUT_CLI_OPT_FLAG("run", 0, web_args, run,
                      "run the pipeline natively (as `knut pipeline run`) and show its real "
                      "events; without it a demo replays a synthetic run (nothing is written)"),
    KNUT_CLI_OPT_STR("addr", 0, web_args, addr, "IP:PORT",
                     "where to listen (default 127.0.0.1:8765; port 0: any free port)"),
    KNUT_CLI_OPT_INT("step-ms", 0, web_args, step_ms, "MS", 1, 60000,
                     "demo: how long each flow of the replay runs (default 400)"),
    KNUT_CLI_SPARK_CONN_OPTS(web_args, spark.conn),
    KNUT_CLI_OPT_STR("sql", 0, web_args, sql, "SQL",
                     "with --connect, no SPEC: run SQL on Spark and show the job's stages "
                     "('-': stdin)"),
    KNUT_CLI_OPT_SECS("report-interval", web_args, interval, 60,
                      "--sql: ask Spark for progress every SEC seconds (default 0.5)"),
    KNUT_CLI_OPT_END,
};

const knut_cli_spec knut_cmd_web_spec = {
    .name = "web",
    .synopsis = "usage: knut web [SPEC] [--run] [--addr IP:PORT] [--step-ms MS]\n"
                "                [-c|--connect URL [--token-file FILE] [--allow-insecure-token]\n"
                "                 [--ca-file FILE]]\n"
                "       knut web --connect URL --sql SQL [--report-interval SEC] [--addr IP:PORT]\n",
    .about = "Serves one page drawing the pipeline's DAG with live node states (idle,\n"
             "queued, running, completed, failed, skipped), rows, throughput, lag,\n"
             "expectation counts and the error of a failed flow. The demo replay starts\n"
             "when the first client opens /events. Endpoints: / (the page),\n"
             "/graph.json (the laid-out DAG), /pipeline.json (one all-idle frame),\n"
             "/events (Server-Sent Events: one frame per change, the latest only, ending\n"
             "with {\"done\":true}). SPEC is a spec file or a folder with pipeline.yml;\n"
             "without SPEC the demo shows a built-in example pipeline. The server stays\n"
             "up after the run ends, until interrupted (Ctrl-C). With --run --connect URL\n"
             "the pipeline runs on Spark (as `knut pipeline run --backend spark`) and the\n"
             "page shows the Spark run's events. With --connect URL --sql SQL (no SPEC)\n"
             "the query runs on Spark and the page shows its job's stages as Spark\n"
             "reports them (tasks done/total, bytes read; a node per stage, in stage id\n"
             "order, as Spark Connect does not say which stage feeds which) and the\n"
             "result's rows; Ctrl-C while it runs stops it on the server.\n",
    .opts = web_opts,
    .args = web_pos,
    .epilog = "Examples:\n  knut web demo                   # the demo replay, http://127.0.0.1:8765/\n"
              "  knut web demo --run --addr 127.0.0.1:0\n"
              "  knut web demo --run --connect sc://localhost:15002/\n"
              "  knut web --connect sc://localhost:15002/ --sql \"SELECT k, count(*) FROM t GROUP BY k\"\n"
              "Exit status: 0 stopped (the run or query, if any, completed), 1 a flow or the\n"
              "query failed or the server could not start, 2 usage error or an unreadable\n"
              "or invalid spec, 130 the Spark query was interrupted.\n",
};

/* The built-in example of the demo without SPEC (only parsed, never run). */
static const char demo_sql[] =
    "CREATE STREAMING TABLE raw_orders AS SELECT * FROM read_csv('orders/*.csv');\n"
    "CREATE STREAMING TABLE raw_customers AS SELECT * FROM read_json('customers/*.json');\n"
    "CREATE STREAMING TABLE customers;\n"
    "CREATE FLOW customers_cdc AS AUTO CDC INTO customers FROM STREAM(raw_customers)\n"
    "  KEYS (id) SEQUENCE BY ts STORED AS SCD TYPE 1;\n"
    "CREATE MATERIALIZED VIEW orders (CONSTRAINT positive EXPECT (amount > 0) ON VIOLATION "
    "DROP ROW)\n  AS SELECT * FROM raw_orders;\n"
    "CREATE MATERIALIZED VIEW orders_by_customer AS SELECT c.id, count(*) AS n\n"
    "  FROM orders o JOIN customers c ON o.customer = c.id GROUP BY c.id;\n"
    "CREATE MATERIALIZED VIEW daily_revenue AS SELECT day, sum(amount) AS revenue\n"
    "  FROM orders GROUP BY day;\n";

static void frame_json(knut_cli_web *w, knut_buf *b, int idle)
{
    const knut_viewer_graph *g = w->g;
    knut_buf_puts(b, "{\"title\":");
    knut_buf_put_json_str(b, g->title ? g->title : "", strlen(g->title ? g->title : ""));
    knut_buf_printf(b, ",\"seq\":%llu,\"graph\":%llu,\"stages\":[",
                    idle ? 0ULL : (unsigned long long)w->seq,
                    (unsigned long long)w->graph_version);
    for (size_t i = 0; i < g->nnodes; i++) {
        const knut_viewer_node *n = &g->nodes[i];
        const knut_cli_web_stage *s = &w->st[i];
        knut_buf_puts(b, i ? ",{\"id\":" : "{\"id\":");
        knut_buf_put_json_str(b, n->name, strlen(n->name));
        knut_buf_puts(b, ",\"name\":");
        knut_buf_put_json_str(b, n->name, strlen(n->name));
        knut_buf_printf(b, ",\"status\":\"%s\",\"kind\":", idle ? "idle" : s->status);
        const char *kind = n->flow_kind ? n->flow_kind : "";
        knut_buf_put_json_str(b, kind, strlen(kind));
        knut_buf_puts(b, ",\"error\":");
        if (!idle && s->error)
            knut_buf_put_json_str(b, s->error, strlen(s->error));
        else
            knut_buf_puts(b, "null");
        if (idle || s->rows < 0)
            knut_buf_puts(b, ",\"metrics\":{\"rows\":null,\"throughput_rows_s\":null,\"lag_s\":null}");
        else
            knut_buf_printf(b, ",\"metrics\":{\"rows\":%lld,\"throughput_rows_s\":%.1f,\"lag_s\":%.3f}",
                            (long long)s->rows, s->throughput, s->lag_s);
        knut_buf_printf(b, ",\"expectations\":{\"count\":%zu,\"passed\":%lld,\"failed\":%lld}",
                        n->nexpectations, idle ? 0LL : (long long)s->passed,
                        idle ? 0LL : (long long)s->failed);
        if (s->tasks_total >= 0) /* a Spark stage */
            knut_buf_printf(b, ",\"tasks\":{\"done\":%lld,\"total\":%lld,\"bytes_read\":%lld}",
                            idle ? 0LL : (long long)s->tasks_done, (long long)s->tasks_total,
                            idle ? 0LL : (long long)s->bytes_read);
        knut_buf_putc(b, '}');
    }
    knut_buf_puts(b, "],\"edges\":[");
    for (size_t i = 0; i < g->nedges; i++) {
        const knut_viewer_edge *e = &g->edges[i];
        knut_buf_puts(b, i ? ",{\"from\":" : "{\"from\":");
        knut_buf_put_json_str(b, g->nodes[e->from].name, strlen(g->nodes[e->from].name));
        knut_buf_puts(b, ",\"to\":");
        knut_buf_put_json_str(b, g->nodes[e->to].name, strlen(g->nodes[e->to].name));
        knut_buf_puts(b, ",\"label\":");
        knut_buf_put_json_str(b, e->label, strlen(e->label));
        knut_buf_putc(b, '}');
    }
    knut_buf_puts(b, "]}");
}

/* ---- the stream -------------------------------------------------------- */

typedef struct client {
    knut_cli_web *w;
    uint64_t sent; /* seq of the last frame taken */
    int hello;     /* retry: sent */
    knut_buf pending; /* the event being sent: a frame can be larger than
                       * what one call may write, so it goes out in parts */
    size_t at;
} client;

static void client_free(void *ctx)
{
    client *c = ctx;
    knut_buf_reset(&c->pending);
    free(c);
}

/* Writes what fits of the pending event; 1 while some is left. */
static int flush_pending(client *c, knut_buf *out)
{
    size_t left = c->pending.len - c->at;
    size_t room = KNUT_NET_HTTP_STREAM_MAX_BUFFER - out->len;
    size_t n = left < room ? left : room;
    knut_buf_append(out, c->pending.data + c->at, n);
    c->at += n;
    return c->at < c->pending.len;
}

static knut_status stream_fn(void *ctx, knut_net_http_stream *s, knut_buf *out)
{
    client *c = ctx;
    knut_cli_web *w = c->w;
    if (!c->hello) {
        knut_buf_puts(out, "retry: 1000\n\n");
        c->hello = 1;
    }
    if (c->at < c->pending.len) {
        flush_pending(c, out);
        return KNUT_OK;
    }
    pthread_mutex_lock(&w->mu);
    uint64_t seq = w->seq;
    int done = w->done;
    if (seq > c->sent) {
        /* the latest frame only: the ones in between are skipped */
        knut_buf_clear(&c->pending);
        c->at = 0;
        knut_buf_printf(&c->pending, "id: %llu-%llu\ndata: ", w->epoch, (unsigned long long)seq);
        frame_json(w, &c->pending, 0); /* compact JSON: one line */
        knut_buf_puts(&c->pending, "\n\n");
        pthread_mutex_unlock(&w->mu);
        if (c->pending.error != KNUT_OK)
            return c->pending.error;
        c->sent = seq;
        flush_pending(c, out);
        return KNUT_OK; /* the done event (if any) on a later call */
    }
    pthread_mutex_unlock(&w->mu);
    if (done) {
        knut_buf_puts(out, "data: {\"done\":true}\n\n");
        return KNUT_EOF;
    }
    if (knut_net_http_stream_stopping(s))
        return KNUT_EOF;
    return out->len ? KNUT_OK : KNUT_EAGAIN;
}

static void handler(void *ctx, const char *method, const char *path, knut_net_http_reply *r)
{
    knut_cli_web *w = ctx;
    (void)method;
    if (strcmp(path, "/") == 0 || strcmp(path, "/index.html") == 0) {
        r->content_type = "text/html; charset=utf-8";
        knut_buf_append(&r->body, knut_cli_web_page, knut_cli_web_page_len);
    } else if (strcmp(path, "/graph.json") == 0) {
        r->content_type = "application/json";
        pthread_mutex_lock(&w->mu); /* a Spark job's graph grows */
        knut_buf_append(&r->body, w->graph_json.data, w->graph_json.len);
        pthread_mutex_unlock(&w->mu);
    } else if (strcmp(path, "/pipeline.json") == 0) {
        r->content_type = "application/json";
        pthread_mutex_lock(&w->mu);
        frame_json(w, &r->body, 1);
        pthread_mutex_unlock(&w->mu);
    } else if (strcmp(path, "/events") == 0) {
        client *c = calloc(1, sizeof *c);
        if (!c) {
            r->status = 503;
            knut_buf_puts(&r->body, "out of memory\n");
            return;
        }
        c->w = w;
        knut_buf_init(&c->pending, (size_t)64 << 20);
        pthread_mutex_lock(&w->mu);
        w->watched = 1;
        pthread_mutex_unlock(&w->mu);
        unsigned long long ep = 0, sq = 0;
        /* the same server's id resumes; another's (a restart) starts over */
        if (r->last_event_id && sscanf(r->last_event_id, "%llu-%llu", &ep, &sq) == 2 &&
            ep == w->epoch)
            c->sent = sq;
        r->stream = stream_fn;
        r->stream_ctx = c;
        r->stream_free = client_free;
        r->content_type = "text/event-stream";
    } else {
        r->status = 404;
        knut_buf_puts(&r->body, "not found\n");
    }
}

/* ---- producers ---------------------------------------------------------- */

void knut_cli_web_stage_init(knut_cli_web_stage *s)
{
    *s = (knut_cli_web_stage){.status = "idle", .rows = -1, .tasks_total = -1};
}

void knut_cli_web_set_status(knut_cli_web *w, size_t i, const char *status)
{
    snprintf(w->st[i].status, sizeof w->st[i].status, "%s", status);
}

void knut_cli_web_changed(knut_cli_web *w)
{
    w->seq++;
    if (w->srv)
        knut_net_http_server_wake(w->srv);
}

static void stages_free(knut_cli_web_stage *st, size_t n)
{
    for (size_t i = 0; st && i < n; i++)
        free(st[i].error);
    free(st);
}

knut_status knut_cli_web_set_graph(knut_cli_web *w, knut_viewer_graph *g, knut_error *err)
{
    knut_buf json = KNUT_BUF_INIT;
    knut_buf_init(&json, KNUT_BUF_DEFAULT_MAX);
    knut_cli_web_stage *st = calloc(g->nnodes + 1, sizeof *st);
    knut_status rc = st ? KNUT_OK : knut_error_set(err, KNUT_ENOMEM, "out of memory");
    if (rc == KNUT_OK)
        rc = knut_viewer_layout(g, err);
    if (rc == KNUT_OK)
        rc = knut_viewer_graph_json(g, &json, err);
    if (rc == KNUT_OK && json.len && json.data[json.len - 1] == '}') {
        json.len--; /* the object gets the graph's version (the frames') */
        knut_buf_printf(&json, ",\"version\":%llu}", (unsigned long long)w->graph_version + 1);
        if (json.error != KNUT_OK)
            rc = knut_error_set(err, json.error, "the graph's JSON: out of room");
    }
    if (rc != KNUT_OK) {
        free(st);
        knut_buf_reset(&json);
        knut_viewer_graph_free(g);
        return rc;
    }
    for (size_t i = 0; i < g->nnodes; i++)
        knut_cli_web_stage_init(&st[i]);
    if (w->g)
        stages_free(w->st, w->g->nnodes);
    knut_viewer_graph_free(w->g);
    knut_buf_reset(&w->graph_json);
    w->graph_json = json;
    w->g = g;
    w->st = st;
    w->graph_version++;
    return KNUT_OK;
}

/* The demo: once a page (or any client) opens /events, so the replay is
 * seen from its start, every flow is queued, then each in run order runs
 * for step_ms and completes with made-up counts (rows grow as it runs). */
static void *demo_thread(void *arg)
{
    knut_cli_web *w = arg;
    int64_t step = w->step_ms * 1000000;
    for (int watched = 0; !watched && !knut_signal_stop_requested();) {
        knut_clock_sleep_ns(20 * 1000000LL);
        pthread_mutex_lock(&w->mu);
        watched = w->watched;
        pthread_mutex_unlock(&w->mu);
    }
    pthread_mutex_lock(&w->mu);
    for (size_t i = 0; i < w->g->nnodes; i++)
        knut_cli_web_set_status(w, i, "queued"), w->st[i].queued_ns = knut_clock_mono_ns();
    knut_cli_web_changed(w);
    pthread_mutex_unlock(&w->mu);
    for (size_t i = 0; i < w->g->nnodes && !knut_signal_stop_requested(); i++) {
        int64_t t0 = knut_clock_mono_ns();
        int64_t total = 1000 * (int64_t)(i + 1) + 37 * (int64_t)(i * i % 101);
        for (int tick = 0; tick < 4 && !knut_signal_stop_requested(); tick++) {
            pthread_mutex_lock(&w->mu);
            knut_cli_web_stage *s = &w->st[i];
            knut_cli_web_set_status(w, i, "running");
            s->rows = total * tick / 4;
            s->lag_s = (double)(t0 - s->queued_ns) / 1e9;
            double secs = (double)(knut_clock_mono_ns() - t0) / 1e9;
            s->throughput = secs > 0 ? (double)s->rows / secs : 0;
            knut_cli_web_changed(w);
            pthread_mutex_unlock(&w->mu);
            knut_clock_sleep_ns(step / 4);
        }
        pthread_mutex_lock(&w->mu);
        knut_cli_web_stage *s = &w->st[i];
        knut_cli_web_set_status(w, i, "completed");
        s->rows = total;
        double secs = (double)(knut_clock_mono_ns() - t0) / 1e9;
        s->throughput = secs > 0 ? (double)total / secs : 0;
        if (w->g->nodes[i].nexpectations)
            s->passed = total - total / 50, s->failed = total / 50;
        knut_cli_web_changed(w);
        pthread_mutex_unlock(&w->mu);
    }
    /* interrupted: not "done" (a page reconnects to the next server) */
    if (knut_signal_stop_requested())
        return NULL;
    pthread_mutex_lock(&w->mu);
    w->done = 1;
    knut_cli_web_changed(w);
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

static int64_t json_i64(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_integer(v) ? (int64_t)json_integer_value(v) : -1;
}

/* The native run's events (docs/pipelines.md, "Events") into the state. */
static void on_event(const char *text, size_t len, void *ctx)
{
    knut_cli_web *w = ctx;
    json_t *ev = json_loadb(text, len, 0, NULL);
    const char *flow = json_string_value(json_object_get(ev, "flow"));
    const char *status = json_string_value(json_object_get(ev, "status"));
    size_t i = flow ? knut_viewer_graph_find(w->g, flow) : (size_t)-1;
    if (!ev || !status || i == (size_t)-1) {
        json_decref(ev);
        return;
    }
    static const char *const map[][2] = {
        {"QUEUED", "queued"},     {"PLANNING", "running"}, {"RUNNING", "running"},
        {"COMPLETED", "completed"}, {"FAILED", "failed"},  {"SKIPPED", "skipped"},
        {"IDLE", "idle"},         {"PLANNED", "completed"},
    };
    const char *to = NULL;
    for (size_t k = 0; k < sizeof map / sizeof map[0]; k++)
        if (strcmp(status, map[k][0]) == 0)
            to = map[k][1];
    if (!to) {
        json_decref(ev);
        return;
    }
    json_t *d = json_object_get(ev, "details");
    pthread_mutex_lock(&w->mu);
    knut_cli_web_stage *s = &w->st[i];
    int64_t now = knut_clock_mono_ns();
    if (strcmp(to, "queued") == 0)
        s->queued_ns = now;
    else if (strcmp(s->status, "queued") == 0 && s->queued_ns)
        s->lag_s = (double)(now - s->queued_ns) / 1e9; /* how long it waited */
    knut_cli_web_set_status(w, i, to);
    int64_t rows = json_i64(d, "rows_out"), ms = json_i64(d, "duration_ms");
    if (rows >= 0) {
        s->rows = rows;
        s->throughput = ms > 0 ? (double)rows * 1000.0 / (double)ms : (double)rows;
    }
    json_t *ex = json_object_get(json_object_get(d, "data_quality"), "expectations");
    if (json_is_array(ex)) {
        s->passed = s->failed = 0;
        size_t k;
        json_t *e;
        json_array_foreach(ex, k, e)
        {
            s->passed += json_i64(e, "passed_records") > 0 ? json_i64(e, "passed_records") : 0;
            s->failed += json_i64(e, "failed_records") > 0 ? json_i64(e, "failed_records") : 0;
        }
    }
    if (strcmp(to, "failed") == 0 || strcmp(to, "skipped") == 0) {
        const char *msg = json_string_value(json_object_get(d, "error"));
        if (!msg)
            msg = json_string_value(json_object_get(ev, "message"));
        free(s->error);
        s->error = msg ? strdup(msg) : NULL;
    }
    knut_cli_web_changed(w);
    pthread_mutex_unlock(&w->mu);
    json_decref(ev);
}

/* ---- the command ---------------------------------------------------------- */

static int demo_pipeline(knut_pipeline **out)
{
    knut_error err = KNUT_ERROR_INIT;
    knut_status st = knut_pipeline_new(out, "demo", "storage", &err);
    if (st == KNUT_OK)
        st = knut_pipeline_parse_sql(*out, demo_sql, strlen(demo_sql), "demo.sql", &err);
    if (st == KNUT_OK)
        st = knut_pipeline_resolve(*out, &err);
    if (st == KNUT_OK)
        return 0;
    fprintf(stderr, "knut web: the built-in demo: %s\n", err.message);
    knut_pipeline_free(*out);
    *out = NULL;
    return KNUT_EXIT_FAIL;
}

/* Which of the four things the options ask for; KNUT_CLI_RUN when they
 * fit together, else the exit code after printing why. */
static int web_mode(const web_args *a)
{
    const knut_cli_spec *spec = &knut_cmd_web_spec;
    const knut_cli_spark_conn *sc = &a->spark.conn;
    if (a->run && !a->spec)
        return knut_cli_args_error(spec, "%s", "--run needs SPEC (the demo runs nothing)");
    if (!sc->connect && (sc->token_file || sc->ca_file || sc->allow_insecure))
        return knut_cli_args_error(spec, "%s", "--token-file, --ca-file and "
                                   "--allow-insecure-token go with --connect");
    if ((a->sql || a->interval_set) && !sc->connect)
        return knut_cli_args_error(spec, "%s", "--sql and --report-interval go with --connect");
    if (a->sql && (a->run || a->spec))
        return knut_cli_args_error(spec, "%s", "--sql shows a Spark job's stages, not a "
                                   "pipeline: drop SPEC and --run");
    if (sc->connect && !a->run && !a->sql)
        return knut_cli_args_error(spec, "%s", "--connect needs --run and SPEC (the pipeline "
                                   "run on Spark) or --sql SQL (a Spark job's stages)");
    return KNUT_CLI_RUN;
}

int knut_cmd_web(int argc, char **argv)
{
    web_args a = {.step_ms = 400, .interval = -1};
    int rc = knut_cli_args_parse(&knut_cmd_web_spec, argc, argv, &a);
    if (rc != KNUT_CLI_RUN)
        return rc;
    a.interval_set = a.interval >= 0;
    if ((rc = web_mode(&a)) != KNUT_CLI_RUN)
        return rc;
    knut_cli_log_setup();
    int on_spark = a.spark.conn.connect != NULL;
    knut_pipeline *p = NULL;
    if (!a.sql) {
        rc = a.spec ? knut_cli_pipeline_load("web", a.spec, &p) : demo_pipeline(&p);
        if (rc != 0)
            return rc;
    }
    knut_error err = KNUT_ERROR_INIT;
    knut_cli_web w = {.step_ms = a.step_ms, .epoch = (unsigned long long)knut_clock_wall_us()};
    pthread_mutex_init(&w.mu, NULL);
    knut_buf_init(&w.graph_json, KNUT_BUF_DEFAULT_MAX);
    pthread_t demo;
    int demo_started = 0;
    knut_viewer_graph *g = NULL;
    rc = KNUT_EXIT_FAIL;
    if (a.sql) {
        if (knut_cli_web_spark_start(&w, &err) != KNUT_OK)
            goto fail;
    } else if (knut_viewer_graph_from_pipeline(&g, p, &err) != KNUT_OK ||
               knut_cli_web_set_graph(&w, g, &err) != KNUT_OK) {
        goto fail;
    }
    if (knut_signal_install(&err) != KNUT_OK)
        goto fail;
    const char *addr = a.addr ? a.addr : "127.0.0.1:8765";
    if (knut_net_http_server_start(&w.srv, addr, handler, &w, &err) != KNUT_OK)
        goto fail;
    /* the address first, on its own line: scripts and tests read it */
    printf("serving http://%s/ (%s)\n", knut_net_http_server_addr(w.srv),
           a.sql ? "a Spark job" : !a.run ? "demo replay" : on_spark ? "run on Spark"
                                                                      : "native run");
    fflush(stdout);
    rc = KNUT_EXIT_OK;
    if (a.sql) {
        rc = knut_cli_web_spark_job(&w, &a.spark.conn, a.sql, a.interval_set ? a.interval : 0.5);
        printf("Spark job: %s\n", rc == KNUT_EXIT_OK ? "ended" : rc == 130 ? "interrupted"
                                                                          : "failed");
    } else if (a.run) {
        knut_pipeline_run_options opts = KNUT_PIPELINE_RUN_OPTIONS_INIT;
        opts.on_event = on_event;
        opts.ctx = &w;
        knut_pipeline_run_result res = {0};
        if (on_spark) {
            /* the Spark run's events are in the native format (spark_run.c) */
            rc = knut_cli_pipeline_spark(&knut_cmd_web_spec, p, &opts, &a.spark, 0);
            printf("run on Spark: %s\n", rc == KNUT_EXIT_OK ? "ended" : "failed");
        } else {
            if (knut_pipeline_run(p, &opts, &res, &err) != KNUT_OK) {
                fprintf(stderr, "knut web: %s\n", err.message);
                rc = KNUT_EXIT_FAIL;
            }
            printf("run %lld: %zu completed, %zu failed, %zu skipped, %zu idle\n",
                   (long long)res.run_id, res.completed, res.failed, res.skipped, res.idle);
        }
    } else {
        if (pthread_create(&demo, NULL, demo_thread, &w) != 0) {
            knut_error_set(&err, KNUT_ERROR, "cannot start the demo thread");
            goto fail;
        }
        demo_started = 1;
    }
    if (a.sql || a.run) {
        fflush(stdout);
        pthread_mutex_lock(&w.mu);
        w.done = 1;
        knut_cli_web_changed(&w);
        pthread_mutex_unlock(&w.mu);
    }
    while (!knut_signal_stop_requested())
        knut_clock_sleep_ns(100 * 1000000LL);
    goto done;
fail:
    fprintf(stderr, "knut web: %s\n", err.message);
    rc = KNUT_EXIT_FAIL;
done:
    if (demo_started)
        pthread_join(demo, NULL);
    knut_net_http_server_stop(w.srv);
    if (w.g)
        stages_free(w.st, w.g->nnodes);
    knut_buf_reset(&w.graph_json);
    knut_viewer_graph_free(w.g);
    knut_pipeline_free(p);
    pthread_mutex_destroy(&w.mu);
    return rc;
}
