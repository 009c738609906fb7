/*
 * knut_falkor_tool: drives the FalkorDB client for the integration tests.
 *   query GRAPH TEXT   one query: rows as JSON lines on stdout (or an Arrow
 *                      IPC stream with --arrow), then "stats: {...}" on
 *                      stderr
 *   repl GRAPH         one query per stdin line on one connection (so a
 *                      test can restart the server between lines); "RO "
 *                      makes it read-only, "! a b c" sends a plain command;
 *                      one JSON result line each
 *   batch GRAPH        every stdin line as one pipelined batch; one JSON
 *                      line per query, then a summary line
 * Connection: --host/--port or --url; --user, --password-env VAR (the
 * password stays out of argv), --connect-timeout/--timeout/--query-timeout
 * MS. Flags: --ro, --allow-truncated, --batch-rows N, --log LEVEL (JSON
 * log records on stderr). Errors: "knut_falkor_tool: error: <code>: <msg>"
 * on stderr, exit 1 (2 for usage).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "knut/arrow.h"
#include "knut/graph.h"

static int fail(const knut_error *e)
{
    fprintf(stderr, "knut_falkor_tool: error: %s: %s\n", knut_strerror(e->code), e->message);
    return 1;
}

/* ---- Arrow values as JSON ---------------------------------------------- */

/* what: 'd' date, 't' time of day, else date and time (UTC seconds). */
static void put_time(knut_buf *o, char what, int64_t secs)
{
    struct tm tm;
    time_t t = (time_t)secs;
    if (gmtime_r(&t, &tm) == NULL)
        knut_buf_printf(o, "%" PRId64, secs);
    else if (what == 'd')
        knut_buf_printf(o, "\"%04d-%02d-%02d\"", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
    else if (what == 't')
        knut_buf_printf(o, "\"%02d:%02d:%02d\"", tm.tm_hour, tm.tm_min, tm.tm_sec);
    else
        knut_buf_printf(o, "\"%04d-%02d-%02dT%02d:%02d:%02d\"", tm.tm_year + 1900, tm.tm_mon + 1,
                        tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

static void put_value(knut_buf *o, const knut_arrow_view *v, int64_t i)
{
    int64_t len, s, e;
    const char *p;
    double d;
    if (knut_arrow_view_is_null(v, i)) {
        knut_buf_puts(o, "null");
        return;
    }
    switch (v->type.type) {
    case KNUT_ARROW_BOOL:
        knut_buf_puts(o, knut_arrow_view_get_bool(v, i) ? "true" : "false");
        break;
    case KNUT_ARROW_FLOAT:
    case KNUT_ARROW_DOUBLE:
        d = knut_arrow_view_get_double(v, i);
        if (isnan(d))
            knut_buf_puts(o, "NaN");
        else if (isinf(d))
            knut_buf_puts(o, d > 0 ? "Infinity" : "-Infinity");
        else
            knut_buf_printf(o, "%.*g", v->type.type == KNUT_ARROW_FLOAT ? 9 : 17, d);
        break;
    case KNUT_ARROW_UTF8:
        p = knut_arrow_view_get_str(v, i, &len);
        knut_buf_put_json_str(o, p, (size_t)len);
        break;
    case KNUT_ARROW_DATE32:
        put_time(o, 'd', knut_arrow_view_get_int64(v, i) * 86400);
        break;
    case KNUT_ARROW_TIMESTAMP:
        put_time(o, 's', knut_arrow_view_get_int64(v, i));
        break;
    case KNUT_ARROW_TIME32:
        put_time(o, 't', knut_arrow_view_get_int64(v, i));
        break;
    case KNUT_ARROW_LIST:
    case KNUT_ARROW_MAP:
        knut_arrow_view_list_range(v, i, &s, &e);
        knut_buf_putc(o, v->type.type == KNUT_ARROW_MAP ? '{' : '[');
        for (int64_t k = s; k < e; k++) {
            knut_buf_puts(o, k > s ? "," : "");
            if (v->type.type == KNUT_ARROW_MAP) {
                const knut_arrow_view *ent = &v->children[0];
                put_value(o, &ent->children[0], knut_arrow_view_child_row(ent, k));
                knut_buf_putc(o, ':');
                put_value(o, &ent->children[1], knut_arrow_view_child_row(ent, k));
            } else {
                put_value(o, &v->children[0], k);
            }
        }
        knut_buf_putc(o, v->type.type == KNUT_ARROW_MAP ? '}' : ']');
        break;
    case KNUT_ARROW_STRUCT:
        knut_buf_putc(o, '{');
        for (int64_t k = 0; k < v->n_children; k++) {
            const char *name = v->schema->children[k]->name;
            knut_buf_puts(o, k > 0 ? "," : "");
            knut_buf_put_json_str(o, name, strlen(name));
            knut_buf_putc(o, ':');
            put_value(o, &v->children[k], knut_arrow_view_child_row(v, i));
        }
        knut_buf_putc(o, '}');
        break;
    default: /* integers and durations (seconds) */
        knut_buf_printf(o, "%" PRId64, knut_arrow_view_get_int64(v, i));
        break;
    }
}

/* Every row of the stream as a JSON object; rows joined by `sep`. */
static knut_status put_rows(knut_buf *o, struct ArrowArrayStream *stream, const char *sep,
                            knut_error *e)
{
    struct ArrowSchema schema = {0};
    struct ArrowArray batch = {0};
    knut_arrow_view view;
    int64_t n = 0;
    int rc = stream->get_schema(stream, &schema);
    if (rc != 0)
        return knut_arrow_stream_error(stream, rc, "schema", e);
    knut_status st = KNUT_OK;
    while (st == KNUT_OK && (rc = stream->get_next(stream, &batch)) == 0 && batch.release) {
        st = knut_arrow_view_init(&view, &schema, &batch, e);
        for (int64_t i = 0; st == KNUT_OK && i < view.length; i++, n++) {
            knut_buf_puts(o, n > 0 ? sep : "");
            put_value(o, &view, i);
        }
        if (st == KNUT_OK)
            knut_arrow_view_reset(&view);
        knut_arrow_array_release(&batch);
    }
    if (st == KNUT_OK && rc != 0)
        st = knut_arrow_stream_error(stream, rc, "batch", e);
    knut_arrow_schema_release(&schema);
    return st;
}

static void put_stats(knut_buf *o, const knut_graph_falkor_stats *s)
{
    knut_buf_printf(o,
                    "{\"labels_added\":%" PRId64 ",\"labels_removed\":%" PRId64
                    ",\"nodes_created\":%" PRId64 ",\"nodes_deleted\":%" PRId64
                    ",\"properties_set\":%" PRId64 ",\"properties_removed\":%" PRId64
                    ",\"relationships_created\":%" PRId64 ",\"relationships_deleted\":%" PRId64
                    ",\"indices_created\":%" PRId64 ",\"indices_deleted\":%" PRId64
                    ",\"constraints_created\":%" PRId64 ",\"constraints_deleted\":%" PRId64
                    ",\"cached_execution\":%d,\"execution_ms\":%.6f}",
                    s->labels_added, s->labels_removed, s->nodes_created, s->nodes_deleted,
                    s->properties_set, s->properties_removed, s->relationships_created,
                    s->relationships_deleted, s->indices_created, s->indices_deleted,
                    s->constraints_created, s->constraints_deleted, s->cached_execution,
                    s->execution_ms);
}

static void put_error(knut_buf *o, const knut_error *e)
{
    knut_buf_printf(o, "{\"ok\":false,\"status\":\"%s\",\"error\":", knut_strerror(e->code));
    knut_buf_put_json_str(o, e->message, strlen(e->message));
    knut_buf_putc(o, '}');
}

static void emit(knut_buf *o)
{
    fwrite(o->data ? o->data : "", 1, o->len, stdout);
    fputc('\n', stdout);
    fflush(stdout);
    knut_buf_clear(o);
}

/* ---- modes ------------------------------------------------------------- */

typedef struct tool_opts {
    const char *host, *url;
    int port;
    unsigned flags;
    int arrow;
    knut_graph_falkor_options o;
} tool_opts;

static int run_query(knut_graph_falkor *g, const tool_opts *t, const char *graph,
                     const char *text)
{
    knut_error e = KNUT_ERROR_INIT;
    knut_graph_falkor_result r;
    knut_buf o = KNUT_BUF_INIT;
    knut_status st = knut_graph_falkor_query(g, graph, text, t->flags, &r, &e);
    if (st == KNUT_OK && t->arrow)
        st = knut_arrow_ipc_write_stream(knut_arrow_ipc_sink_fd(STDOUT_FILENO), &r.stream, &e);
    else if (st == KNUT_OK)
        st = put_rows(&o, &r.stream, "\n", &e);
    if (st == KNUT_OK && !t->arrow && o.len > 0)
        emit(&o);
    if (st == KNUT_OK) {
        knut_buf_clear(&o);
        put_stats(&o, &r.stats);
        fprintf(stderr, "stats: {\"rows\":%" PRId64 ",\"columns\":%" PRId64
                        ",\"truncated\":%s,\"stats\":%s}\n",
                r.n_rows, r.n_columns, r.truncated ? "true" : "false", o.data);
    }
    knut_graph_falkor_result_reset(&r);
    knut_buf_reset(&o);
    return st == KNUT_OK ? 0 : fail(&e);
}

/* Splits s at spaces in place (for "! a b c" commands). */
static int split(char *s, const char **argv, int max)
{
    int n = 0;
    for (char *tok = strtok(s, " "); tok && n < max; tok = strtok(NULL, " "))
        argv[n++] = tok;
    return n;
}

static int run_repl(knut_graph_falkor *g, const tool_opts *t, const char *graph)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    knut_buf o = KNUT_BUF_INIT;
    while ((n = getline(&line, &cap, stdin)) > 0) {
        knut_error e = KNUT_ERROR_INIT;
        knut_graph_falkor_result r;
        knut_status st;
        unsigned flags = t->flags;
        char *q = line;
        if (line[n - 1] == '\n')
            line[--n] = '\0';
        if (line[0] == '!') {
            const char *argv[16];
            int argc = split(line + 1, argv, 16);
            st = knut_graph_falkor_command(g, argc, argv, &e);
            if (st == KNUT_OK)
                knut_buf_puts(&o, "{\"ok\":true}");
            else
                put_error(&o, &e);
            emit(&o);
            continue;
        }
        if (strncmp(q, "RO ", 3) == 0) {
            flags |= KNUT_GRAPH_FALKOR_READ_ONLY;
            q += 3;
        }
        st = knut_graph_falkor_query(g, graph, q, flags, &r, &e);
        if (st == KNUT_OK) {
            knut_buf_puts(&o, "{\"ok\":true,\"rows\":[");
            st = put_rows(&o, &r.stream, ",", &e);
        }
        if (st == KNUT_OK) {
            knut_buf_printf(&o, "],\"truncated\":%s,\"stats\":", r.truncated ? "true" : "false");
            put_stats(&o, &r.stats);
            knut_buf_putc(&o, '}');
        } else {
            knut_buf_clear(&o);
            put_error(&o, &e);
        }
        emit(&o);
        knut_graph_falkor_result_reset(&r);
    }
    free(line);
    knut_buf_reset(&o);
    return 0;
}

static int run_batch(knut_graph_falkor *g, const tool_opts *t, const char *graph)
{
    char *line = NULL;
    size_t cap = 0, n = 0;
    ssize_t len;
    knut_graph_falkor_batch_item *items = NULL;
    knut_error e = KNUT_ERROR_INIT;
    knut_buf o = KNUT_BUF_INIT;
    while ((len = getline(&line, &cap, stdin)) > 0) {
        if (line[len - 1] == '\n')
            line[len - 1] = '\0';
        knut_graph_falkor_batch_item *ni = realloc(items, (n + 1) * sizeof *items);
        if (ni == NULL)
            return fprintf(stderr, "knut_falkor_tool: out of memory\n"), 1;
        items = ni;
        memset(&items[n], 0, sizeof items[n]);
        items[n++].query = strdup(line);
    }
    free(line);
    knut_status st = knut_graph_falkor_batch(g, graph, items, n, t->flags, &e);
    for (size_t i = 0; i < n; i++) {
        if (items[i].status == KNUT_OK) {
            knut_buf_printf(&o, "{\"ok\":true,\"rows\":%" PRId64 ",\"stats\":", items[i].n_rows);
            put_stats(&o, &items[i].stats);
            knut_buf_putc(&o, '}');
        } else {
            put_error(&o, &items[i].error);
        }
        emit(&o);
        free((char *)items[i].query);
    }
    if (st == KNUT_OK)
        knut_buf_puts(&o, "{\"ok\":true}");
    else
        put_error(&o, &e);
    emit(&o);
    free(items);
    knut_buf_reset(&o);
    return st == KNUT_OK ? 0 : 1;
}

static int usage(void)
{
    fprintf(stderr, "usage: knut_falkor_tool query|repl|batch [--host H --port P | --url URL] "
                    "[--user U] [--password-env VAR] [--connect-timeout MS] [--timeout MS] "
                    "[--query-timeout MS] [--ro] [--allow-truncated] [--arrow] "
                    "[--batch-rows N] [--log LEVEL] GRAPH [QUERY]\n");
    return 2;
}

int main(int argc, char **argv)
{
    tool_opts t = {"127.0.0.1", NULL, 6379, 0, 0, KNUT_GRAPH_FALKOR_OPTIONS_INIT};
    const char *pos[2] = {NULL, NULL};
    int npos = 0;
    knut_log_level level;
    if (argc < 2)
        return usage();
    const char *mode = argv[1];
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--ro") == 0)
            t.flags |= KNUT_GRAPH_FALKOR_READ_ONLY;
        else if (strcmp(a, "--allow-truncated") == 0)
            t.flags |= KNUT_GRAPH_FALKOR_ALLOW_TRUNCATED;
        else if (strcmp(a, "--arrow") == 0)
            t.arrow = 1;
        else if (a[0] == '-' && a[1] == '-' && v == NULL)
            return usage();
        else if (strcmp(a, "--host") == 0 && ++i)
            t.host = v;
        else if (strcmp(a, "--port") == 0 && ++i)
            t.port = atoi(v);
        else if (strcmp(a, "--url") == 0 && ++i)
            t.url = v;
        else if (strcmp(a, "--user") == 0 && ++i)
            t.o.username = v;
        else if (strcmp(a, "--password-env") == 0 && ++i)
            t.o.password = getenv(v);
        else if (strcmp(a, "--connect-timeout") == 0 && ++i)
            t.o.connect_timeout_ms = atoi(v);
        else if (strcmp(a, "--timeout") == 0 && ++i)
            t.o.command_timeout_ms = atoi(v);
        else if (strcmp(a, "--query-timeout") == 0 && ++i)
            t.o.query_timeout_ms = atoi(v);
        else if (strcmp(a, "--batch-rows") == 0 && ++i)
            t.o.batch_rows = atoll(v);
        else if (strcmp(a, "--log") == 0 && ++i) {
            if (knut_log_level_parse(v, &level) != KNUT_OK)
                return usage();
            knut_log_set(level, knut_log_sink_json, stderr);
        } else if (a[0] == '-' && a[1] == '-')
            return usage();
        else if (npos < 2)
            pos[npos++] = a;
        else
            return usage();
    }
    int is_query = strcmp(mode, "query") == 0;
    if (!pos[0] || (is_query != (pos[1] != NULL)) ||
        (!is_query && strcmp(mode, "repl") != 0 && strcmp(mode, "batch") != 0))
        return usage();
    knut_graph_falkor *g = NULL;
    knut_error e = KNUT_ERROR_INIT;
    knut_status st = t.url ? knut_graph_falkor_connect_url(&g, t.url, &t.o, &e)
                           : knut_graph_falkor_connect(&g, t.host, t.port, &t.o, &e);
    if (st != KNUT_OK)
        return fail(&e);
    int rc = is_query                  ? run_query(g, &t, pos[0], pos[1])
             : strcmp(mode, "repl") == 0 ? run_repl(g, &t, pos[0])
                                         : run_batch(g, &t, pos[0]);
    knut_graph_falkor_close(g);
    return rc;
}
