/*
 * `knut watch sc://... --sql SQL`: a Spark query watched live. On a
 * terminal, one bar per stage (tasks done/total, bytes read, elapsed)
 * under a header with the rows so far, redrawn in place at most every
 * 100 ms from the progress the server pushes; elsewhere (or --json) the
 * same as JSON events, one object per line. At the end the first N rows
 * are printed (a table, or "row" events). Ctrl-C interrupts the operation
 * on the server and exits 130. The connection options, the session and
 * the interrupt are `knut spark sql`'s (spark_cli.c).
 */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "knut/knut.h"
#include "render.h"
#include "spark_cli.h"

#define WATCH_SQL_MAX ((size_t)16 << 20)
#define WATCH_STAGE_LINES 12  /* stage bars on the terminal; earlier ones summed */
#define WATCH_REDRAW_NS 100000000
#define WATCH_ROWS_MAX 100000

typedef struct watch_args {
    knut_cli_spark_conn conn;
    const char *url;
    const char *sql;
    int64_t rows;
    int64_t max_width;
    int json;
    double interval;
} watch_args;

static const knut_cli_opt watch_opts[] = {
    KNUT_CLI_SPARK_CONN_OPTS(watch_args, conn),
    KNUT_CLI_OPT_STR("sql", 0, watch_args, sql, "SQL", "the query to run and watch ('-': stdin)"),
    KNUT_CLI_OPT_INT("rows", 'n', watch_args, rows, "N", 0, WATCH_ROWS_MAX,
                     "print the first N rows of the result at the end (default 20; 0: none)"),
    KNUT_CLI_OPT_INT("max-width", 0, watch_args, max_width, "N", 1, 100000,
                     "cut table cells longer than N characters (default 48)"),
    KNUT_CLI_OPT_FLAG("json", 0, watch_args, json,
                      "JSON events, one object per line (the default when stdout is not "
                      "a terminal)"),
    KNUT_CLI_OPT_SECS("report-interval", watch_args, interval, 60,
                      "ask the server for progress every SEC seconds (default 0.5; "
                      "spark.connect.progress.reportInterval of the session)"),
    KNUT_CLI_OPT_END,
};
static const knut_cli_arg watch_pos[] = {KNUT_CLI_ARG_OPT("URL", watch_args, url),
                                         KNUT_CLI_ARG_END};

const knut_cli_spec knut_cmd_watch_spec = {
    .name = "watch",
    .synopsis = "usage: knut watch [URL] --sql SQL [-n|--rows N] [--json] [--max-width N]\n"
                "                  [--report-interval SEC] [-c|--connect URL]\n"
                "                  [--token-file FILE] [--allow-insecure-token] [--ca-file FILE]\n",
    .about = "Runs SQL on a Spark Connect server (URL: sc://host:port/..., or --connect,\n"
             "or $SPARK_REMOTE) and shows its progress live: on a terminal a bar per\n"
             "stage (tasks done/total, bytes read, elapsed) and the rows so far,\n"
             "redrawn in place; when stdout is not a terminal, or with --json, JSON\n"
             "events, one object per line (start, stage, rows, reattach, row, end).\n"
             "The first N rows of the result are printed at the end. Ctrl-C interrupts\n"
             "the operation on the server.\n",
    .opts = watch_opts,
    .args = watch_pos,
    .epilog = "Examples:\n"
              "  knut watch sc://localhost:15002/ --sql \"SELECT k, count(*) FROM t GROUP BY k\"\n"
              "  knut watch sc://spark:15002/;use_ssl=true --token-file tok --json \\\n"
              "      --sql \"SELECT * FROM sales\" > events.jsonl\n"
              "\n"
              "Exit status: 0 ok, 1 the query or the server failed, 2 usage error,\n"
              "130 interrupted (the operation was stopped on the server).\n",
};

typedef struct watch {
    const char *peer;
    int json;
    char *op; /* the operation id (knut_cli_spark_stop's) */
    int started;
    int64_t t0, last_draw;
    knut_cli_spark_stages stages;
    int64_t inflight, rows, reattaches;
    int drawn; /* lines on the terminal from the last draw */
    knut_buf line;
} watch;

static int64_t ms_since(const watch *w, int64_t now)
{
    return (now - w->t0) / 1000000;
}

static void emit(watch *w)
{
    knut_buf_putc(&w->line, '\n');
    fwrite(w->line.data, 1, w->line.len, stdout);
    fflush(stdout);
    w->line.len = 0;
}

static void json_start(watch *w)
{
    if (w->started)
        return;
    w->started = 1;
    if (!w->json)
        return;
    knut_buf_puts(&w->line, "{\"event\":\"start\",\"server\":");
    knut_buf_put_json_str(&w->line, w->peer, strlen(w->peer));
    knut_buf_printf(&w->line, ",\"operation_id\":\"%s\"}", w->op);
    emit(w);
}

static const char *stage_state(const knut_cli_spark_stage_seen *s)
{
    return s->s.done ? "done" : s->ended ? "ended" : "running";
}

static void json_stage(watch *w, const knut_cli_spark_stage_seen *s, int64_t now)
{
    int64_t end = s->end_ns ? s->end_ns : now;
    knut_buf_printf(&w->line, "{\"event\":\"stage\",\"operation_id\":\"%s\",\"stage_id\":%lld,"
                    "\"tasks_done\":%lld,\"tasks_total\":%lld,\"bytes_read\":%lld,"
                    "\"done\":%s,\"state\":\"%s\",\"elapsed_ms\":%lld,\"stage_elapsed_ms\":%lld}",
                    w->op, (long long)s->s.stage_id, (long long)s->s.num_completed_tasks,
                    (long long)s->s.num_tasks, (long long)s->s.input_bytes_read,
                    s->s.done ? "true" : "false", stage_state(s), (long long)ms_since(w, now),
                    (long long)((end - s->first_ns) / 1000000));
    emit(w);
}

static void human_bytes(char *out, size_t n, int64_t b)
{
    static const char *const units[] = {"B", "KB", "MB", "GB", "TB", "PB"};
    double v = (double)b;
    size_t u = 0;
    while (v >= 1000 && u + 1 < sizeof units / sizeof units[0]) {
        v /= 1000;
        u++;
    }
    snprintf(out, n, u ? "%.1f %s" : "%.0f %s", v, units[u]);
}

static void draw_stage(knut_buf *b, const knut_cli_spark_stage_seen *s, int64_t now)
{
    int64_t total = s->s.num_tasks > 0 ? s->s.num_tasks : 0;
    int64_t done = s->s.num_completed_tasks;
    double frac = total ? (double)(done < total ? done : total) / (double)total : 0;
    if (s->s.done)
        frac = 1;
    char bar[31];
    int fill = (int)(frac * 30);
    for (int i = 0; i < 30; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[30] = 0;
    char bytes[32];
    human_bytes(bytes, sizeof bytes, s->s.input_bytes_read);
    int64_t end = s->end_ns ? s->end_ns : now;
    knut_buf_printf(b, "\r\033[K  stage %-4lld [%s] %lld/%lld tasks  %10s  %6.1fs%s\n",
                    (long long)s->s.stage_id, bar, (long long)done, (long long)total, bytes,
                    (double)(end - s->first_ns) / 1e9, s->s.done ? "  done" : s->ended ? "  ended" : "");
}

/* The header and the stage bars, over the previous draw (cursor up). */
static void draw(watch *w, int force)
{
    int64_t now = knut_clock_mono_ns();
    if (w->json || (!force && w->last_draw && now - w->last_draw < WATCH_REDRAW_NS))
        return;
    w->last_draw = now;
    knut_buf *b = &w->line;
    if (w->drawn)
        knut_buf_printf(b, "\033[%dA", w->drawn);
    int lines = 0;
    knut_buf_printf(b, "\r\033[K%s  operation %.8s  %.1fs  %lld rows  %lld tasks running",
                    w->peer, w->op, (double)(now - w->t0) / 1e9, (long long)w->rows,
                    (long long)w->inflight);
    if (w->reattaches)
        knut_buf_printf(b, "  %lld reattaches", (long long)w->reattaches);
    knut_buf_putc(b, '\n');
    lines++;
    size_t from = w->stages.n > WATCH_STAGE_LINES ? w->stages.n - WATCH_STAGE_LINES + 1 : 0;
    if (from) {
        size_t done = 0;
        for (size_t i = 0; i < from; i++)
            done += w->stages.at[i].s.done != 0;
        knut_buf_printf(b, "\r\033[K  %zu earlier stages (%zu done)\n", from, done);
        lines++;
    }
    for (size_t i = from; i < w->stages.n; i++, lines++)
        draw_stage(b, &w->stages.at[i], now);
    knut_buf_puts(b, "\033[J");
    fwrite(b->data, 1, b->len, stdout);
    fflush(stdout);
    b->len = 0;
    w->drawn = lines;
}

static void on_progress(watch *w, const knut_spark_event *ev, int64_t now)
{
    w->inflight = ev->inflight_tasks;
    knut_cli_spark_stages_merge(&w->stages, ev, now);
    for (size_t i = 0; w->json && i < w->stages.n; i++)
        if (w->stages.at[i].changed)
            json_stage(w, &w->stages.at[i], now);
}

static void on_event(void *ctx, const knut_spark_event *ev)
{
    watch *w = ctx;
    int64_t now = knut_clock_mono_ns();
    json_start(w);
    if (ev->kind == KNUT_SPARK_EVENT_PROGRESS) {
        on_progress(w, ev, now);
    } else if (ev->kind == KNUT_SPARK_EVENT_REATTACH) {
        w->reattaches = ev->reattaches;
        if (w->json) {
            knut_buf_printf(&w->line, "{\"event\":\"reattach\",\"operation_id\":\"%s\","
                            "\"reattaches\":%d}", w->op, ev->reattaches);
            emit(w);
        }
    } else {
        w->rows = ev->total_rows;
        if (w->json) {
            knut_buf_printf(&w->line, "{\"event\":\"rows\",\"operation_id\":\"%s\",\"rows\":%lld,"
                            "\"elapsed_ms\":%lld}", w->op, (long long)w->rows,
                            (long long)ms_since(w, now));
            emit(w);
        }
    }
    draw(w, 0);
}

/* The kept rows as "row" events (the JSON of `--format json`'s values). */
static knut_status json_rows(watch *w, const struct ArrowSchema *schema,
                             const struct ArrowArray *arrays, int64_t n, int64_t max,
                             knut_error *err)
{
    int64_t shown = 0;
    for (int64_t a = 0; a < n && shown < max; a++) {
        knut_arrow_view v;
        knut_status st = knut_arrow_view_init(&v, schema, &arrays[a], err);
        if (st != KNUT_OK) {
            knut_arrow_view_reset(&v);
            return st;
        }
        for (int64_t i = 0; i < v.length && shown < max; i++, shown++) {
            knut_buf_printf(&w->line, "{\"event\":\"row\",\"operation_id\":\"%s\",\"row\":{",
                            w->op);
            for (int64_t k = 0; k < v.n_children; k++) {
                const knut_arrow_view *c = &v.children[k];
                const char *name = c->schema->name ? c->schema->name : "";
                if (k)
                    knut_buf_putc(&w->line, ',');
                knut_buf_put_json_str(&w->line, name, strlen(name));
                knut_buf_putc(&w->line, ':');
                knut_cli_render_value(&w->line, c, knut_arrow_view_child_row(&v, i),
                                      KNUT_CLI_VALUE_JSON);
            }
            knut_buf_puts(&w->line, "}}");
            emit(w);
        }
        knut_arrow_view_reset(&v);
    }
    return KNUT_OK;
}

/* Reads the result to its end, keeping the batches of its first max rows. */
static knut_status drain(struct ArrowArrayStream *rows, int64_t max, struct ArrowSchema *schema,
                         struct ArrowArray **kept, int64_t *nkept, knut_error *err)
{
    int rc = rows->get_schema(rows, schema);
    if (rc != 0)
        return knut_arrow_stream_error(rows, rc, "the result's schema", err);
    int64_t have = 0, cap = 0;
    for (;;) {
        struct ArrowArray b = {0};
        if ((rc = rows->get_next(rows, &b)) != 0)
            return knut_arrow_stream_error(rows, rc, "the result", err);
        if (!b.release)
            return KNUT_OK;
        if (have >= max) {
            b.release(&b);
            continue;
        }
        if (*nkept == cap) {
            int64_t ncap = cap ? cap * 2 : 8;
            struct ArrowArray *p = realloc(*kept, (size_t)ncap * sizeof *p);
            if (!p) {
                b.release(&b);
                return knut_error_set(err, KNUT_ENOMEM, "out of memory");
            }
            *kept = p;
            cap = ncap;
        }
        have += b.length;
        knut_arrow_array_move(&(*kept)[(*nkept)++], &b);
    }
}

static void json_end(watch *w, const char *status, const knut_spark_error_info *info,
                     const char *message)
{
    json_start(w);
    knut_buf_printf(&w->line, "{\"event\":\"end\",\"operation_id\":\"%s\",\"status\":\"%s\","
                    "\"rows\":%lld,\"stages\":%zu,\"elapsed_ms\":%lld", w->op, status,
                    (long long)w->rows, w->stages.n,
                    (long long)ms_since(w, knut_clock_mono_ns()));
    if (info && info->error_class[0]) {
        knut_buf_puts(&w->line, ",\"error_class\":");
        knut_buf_put_json_str(&w->line, info->error_class, strlen(info->error_class));
    }
    if (info && info->sql_state[0]) {
        knut_buf_puts(&w->line, ",\"sql_state\":");
        knut_buf_put_json_str(&w->line, info->sql_state, strlen(info->sql_state));
    }
    if (message) {
        knut_buf_puts(&w->line, ",\"message\":");
        knut_buf_put_json_str(&w->line, message, strlen(message));
    }
    knut_buf_putc(&w->line, '}');
    emit(w);
}

int knut_cmd_watch(int argc, char **argv)
{
    const knut_cli_spec *spec = &knut_cmd_watch_spec;
    watch_args a = {.rows = 20, .interval = 0.5};
    int rc = knut_cli_args_parse(spec, argc, argv, &a);
    if (rc != KNUT_CLI_RUN)
        return rc;
    if (a.url && a.conn.connect)
        return knut_cli_args_error(spec, "%s", "give the server once: URL or --connect");
    if (!a.sql)
        return knut_cli_args_missing(spec, "--sql SQL");
    knut_error err = KNUT_ERROR_INIT;
    knut_buf input = KNUT_BUF_INIT;
    struct ArrowArrayStream rows = {0};
    struct ArrowSchema schema = {0};
    struct ArrowArray *kept = NULL;
    int64_t nkept = 0;
    knut_spark_error_info info = {0};
    knut_cli_spark_stop stop = {.cmd = "watch"};
    int watching = 0;
    const char *sql = NULL;
    watch *w = calloc(1, sizeof *w);
    if (!w) {
        fprintf(stderr, "knut watch: out of memory\n");
        return KNUT_EXIT_FAIL;
    }
    knut_spark_session *s = NULL;
    if ((rc = knut_cli_spark_open(spec, &a.conn, a.url, &s)) != KNUT_EXIT_OK) {
        free(w);
        return rc;
    }
    w->peer = knut_spark_session_peer(s);
    w->json = a.json || !isatty(STDOUT_FILENO);
    w->op = stop.op;
    w->t0 = knut_clock_mono_ns();
    knut_buf_init(&w->line, (size_t)64 << 20);
    rc = KNUT_EXIT_FAIL;
    if (knut_cli_query_text(a.sql, &input, WATCH_SQL_MAX, "SQL", &sql, &err) != KNUT_OK)
        goto cleanup;
    w->t0 = knut_clock_mono_ns();
    if (knut_cli_spark_watched_sql(s, &stop, a.interval, sql, on_event, w, &info, &rows,
                                   &watching, &err) != KNUT_OK)
        goto cleanup;
    json_start(w);
    if (drain(&rows, a.rows, &schema, &kept, &nkept, &err) != KNUT_OK)
        goto cleanup;
    atomic_store(&stop.armed, 0);
    int64_t end = knut_clock_mono_ns();
    knut_cli_spark_stages_end(&w->stages, end);
    for (size_t i = 0; w->json && i < w->stages.n; i++)
        if (w->stages.at[i].changed)
            json_stage(w, &w->stages.at[i], end);
    draw(w, 1);
    if (w->json) {
        if (json_rows(w, &schema, kept, nkept, a.rows, &err) != KNUT_OK)
            goto cleanup;
        json_end(w, "ok", NULL, NULL);
    } else if (a.rows > 0) {
        struct ArrowArrayStream table = {0};
        knut_cli_render_opts ro = {KNUT_CLI_FORMAT_TABLE, a.rows, (int)a.max_width};
        fputc('\n', stdout);
        knut_status st = knut_arrow_stream_from_arrays(&table, &schema, kept, nkept, &err);
        free(kept); /* the arrays are the stream's now */
        kept = NULL;
        nkept = 0;
        if (st == KNUT_OK)
            st = knut_cli_render_stream(stdout, &table, &ro, NULL, &err);
        knut_arrow_stream_release(&table);
        if (st != KNUT_OK)
            goto cleanup;
    }
    if (!w->json)
        printf("%lld rows in %.1fs\n", (long long)w->rows,
               (double)(knut_clock_mono_ns() - w->t0) / 1e9);
    rc = KNUT_EXIT_OK;
cleanup:
    atomic_store(&stop.armed, 0);
    if (watching)
        knut_signal_unwatch();
    if (rc != KNUT_EXIT_OK) {
        if (w->started)
            draw(w, 1);
        int stopped = knut_signal_stop_requested();
        const char *msg = err.message[0] ? err.message : knut_strerror(err.code);
        if (w->json)
            json_end(w, stopped ? "interrupted" : "error", stopped ? NULL : &info,
                     stopped ? NULL : msg);
        fflush(stdout);
        if (stopped) {
            fprintf(stderr, "knut watch: interrupted (operation %s stopped on %s)\n", stop.op,
                    w->peer);
            rc = 130;
        } else {
            fprintf(stderr, "knut watch: %s\n", msg);
        }
    }
    knut_arrow_stream_release(&rows);
    knut_arrow_arrays_free(kept, nkept);
    knut_arrow_schema_release(&schema);
    knut_buf_reset(&w->line);
    free(w);
    knut_spark_session_free(s);
    knut_buf_reset(&input);
    return rc;
}
