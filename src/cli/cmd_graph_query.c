/*
 * `knut graph query`: runs one Cypher query on a FalkorDB graph and prints
 * its result through the shared renderers (table, CSV, JSON lines, Arrow
 * IPC). The client decodes FalkorDB's compact reply into Arrow, so every
 * format sees typed columns. The server's password, given in the URL,
 * never appears in anything this command prints.
 */
#include "cli.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "knut/knut.h"
#include "render.h"

const char knut_cmd_graph_query_usage[] =
    "usage: knut graph query --falkordb URL --graph NAME [OPTIONS] CYPHER\n"
    "       knut graph query --falkordb URL --graph NAME [OPTIONS] -   (Cypher from stdin)\n"
    "\n"
    "Runs one Cypher query on a FalkorDB graph (GRAPH.QUERY, or GRAPH.RO_QUERY\n"
    "with --read-only) and prints the rows it returns. Nodes and edges print as\n"
    "structs whose properties are one JSON object; dates, times and datetimes\n"
    "keep their types (see docs/graph.md, \"FalkorDB client\").\n"
    "\n"
    "Options:\n"
    "  --falkordb URL     redis://[[user]:password@]host[:port] (default port\n"
    "                     6379); also read from $KNUT_FALKORDB. The password is\n"
    "                     never printed\n"
    "  --graph NAME       the graph (a Redis key); also $KNUT_GRAPH\n"
    "  --read-only        send GRAPH.RO_QUERY: the server refuses writes, and a\n"
    "                     missing graph is an error instead of being created\n"
    "  -f, --format FMT   table (default), csv, json (one object per line) or\n"
    "                     arrow (Arrow IPC stream; not to a terminal)\n"
    "  --max-rows N       table only: show at most N rows (default 1000, 0 = all)\n"
    "  --max-width N      table only: cut cells longer than N characters\n"
    "  --timeout MS       server-side query timeout (TIMEOUT MS)\n"
    "  -p, --param NAME=VALUE\n"
    "                     a query parameter, used as $NAME (repeatable). VALUE\n"
    "                     is typed: 42, -1.5, 1e3, true, false, null, 'text' or\n"
    "                     \"text\" (escapes \\\\ \\' \\\" \\n \\t \\r), lists [1, 'a'] and\n"
    "                     maps {k: 1}; bare words are refused (quote strings).\n"
    "                     Values go in the CYPHER parameter block, never into\n"
    "                     the query text\n"
    "  --stats            print FalkorDB's statistics (nodes created, properties\n"
    "                     set, ..., execution time) to stderr\n"
    "  -h, --help         show this help\n"
    "\n"
    "Examples:\n"
    "  knut graph query --falkordb redis://localhost:6379 --graph social \\\n"
    "      \"MATCH (p:Person) RETURN p.name, p.born ORDER BY p.name LIMIT 10\"\n"
    "  knut graph query --falkordb redis://:secret@db:6379 --graph social --read-only \\\n"
    "      -f csv \"MATCH (a)-[k:KNOWS]->(b) RETURN a.id, b.id, k.since\" > knows.csv\n"
    "  echo \"MATCH (n) RETURN count(n)\" | knut graph query --graph social -\n"
    "  knut graph query --graph social -p \"name='Ada'\" -p 'ids=[1, 2]' \\\n"
    "      'MATCH (p:Person) WHERE p.name = $name OR p.id IN $ids RETURN p.id'\n"
    "  knut graph query --graph social --stats \"MATCH (n:Tmp) DETACH DELETE n\"\n"
    "  knut graph query --graph social -f arrow \"MATCH (p:Person) RETURN p\" > p.arrows\n"
    "\n"
    "Exit status: 0 ok, 1 the query failed (FalkorDB's message is printed),\n"
    "2 usage error.\n";

#define GQUERY_STDIN_MAX ((size_t)16 << 20)

typedef struct gquery_args {
    const char *url;
    const char *graph;
    const char *cypher;
    int read_only;
    int stats;
    int timeout_ms;
    knut_buf params; /* "CYPHER a=1 b='x' " from --param, or empty */
    knut_cli_render_opts render;
} gquery_args;

static int usage_error(const char *fmt, ...) KNUT_PRINTF(1, 2);

static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("knut graph query: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\nusage: knut graph query --falkordb URL --graph NAME [OPTIONS] CYPHER\n"
          "Run 'knut graph query --help' for the options and examples.\n",
          stderr);
    return KNUT_EXIT_USAGE;
}

/* "--name VALUE" or "--name=VALUE": the value, or NULL if missing. */
static const char *opt_value(int argc, char **argv, int *i, const char *name, const char *alias)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, name, n) == 0 && a[n] == '=')
        return a + n + 1;
    if (strcmp(a, name) == 0 || (alias && strcmp(a, alias) == 0))
        return *i + 1 < argc ? argv[++*i] : NULL;
    return NULL;
}

static int is_opt(const char *a, const char *name, const char *alias)
{
    size_t n = strlen(name);
    return strcmp(a, name) == 0 || (strncmp(a, name, n) == 0 && a[n] == '=') ||
           (alias && strcmp(a, alias) == 0);
}

static int parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    char *end = NULL;
    long long v = s ? strtoll(s, &end, 10) : 0;
    if (!s || !*s || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* NAME=VALUE from --param, rendered (typed and escaped) into a->params. */
static int add_param(gquery_args *a, const char *v)
{
    knut_error err = KNUT_ERROR_INIT;
    const char *eq = v ? strchr(v, '=') : NULL;
    if (!eq || eq == v)
        return usage_error("%s", "--param needs NAME=VALUE (e.g. -p \"name='Ada'\")");
    if (a->params.len == 0)
        knut_buf_puts(&a->params, "CYPHER ");
    if (knut_graph_cypher_param(&a->params, v, (size_t)(eq - v), eq + 1, strlen(eq + 1),
                                &err) != KNUT_OK)
        return usage_error("%s", err.message);
    return 0;
}

static int parse_args(int argc, char **argv, gquery_args *a)
{
    int64_t n;
    a->render.format = KNUT_CLI_FORMAT_TABLE;
    a->render.max_rows = KNUT_CLI_TABLE_DEFAULT_MAX_ROWS;
    a->url = getenv("KNUT_FALKORDB");
    a->graph = getenv("KNUT_GRAPH");
    int opts_done = 0;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *v;
        if (!opts_done && strcmp(arg, "--") == 0) {
            opts_done = 1;
        } else if (opts_done || arg[0] != '-' || strcmp(arg, "-") == 0) {
            if (a->cypher)
                return usage_error("more than one query argument ('%.40s'); quote the Cypher",
                                   arg);
            a->cypher = arg;
        } else if (is_opt(arg, "--falkordb", NULL)) {
            if (!(a->url = opt_value(argc, argv, &i, "--falkordb", NULL)))
                return usage_error("%s", "--falkordb needs a redis:// URL");
        } else if (is_opt(arg, "--graph", NULL)) {
            if (!(a->graph = opt_value(argc, argv, &i, "--graph", NULL)) || !*a->graph)
                return usage_error("%s", "--graph needs a graph name");
        } else if (strcmp(arg, "--read-only") == 0) {
            a->read_only = 1;
        } else if (strcmp(arg, "--stats") == 0) {
            a->stats = 1;
        } else if (is_opt(arg, "--format", "-f")) {
            if (!(v = opt_value(argc, argv, &i, "--format", "-f")) ||
                knut_cli_format_parse(v, &a->render.format) != 0)
                return usage_error("%s needs table, csv, json or arrow", arg);
        } else if (is_opt(arg, "--max-rows", NULL)) {
            if (parse_int(opt_value(argc, argv, &i, "--max-rows", NULL), 0, INT64_MAX, &n))
                return usage_error("%s needs a count (0 = all)", arg);
            a->render.max_rows = n;
        } else if (is_opt(arg, "--max-width", NULL)) {
            if (parse_int(opt_value(argc, argv, &i, "--max-width", NULL), 1, 100000, &n))
                return usage_error("%s needs a width of 1 or more characters", arg);
            a->render.max_width = (int)n;
        } else if (is_opt(arg, "--param", "-p")) {
            if (add_param(a, opt_value(argc, argv, &i, "--param", "-p")) != 0)
                return KNUT_EXIT_USAGE;
        } else if (is_opt(arg, "--timeout", NULL)) {
            if (parse_int(opt_value(argc, argv, &i, "--timeout", NULL), 1, INT32_MAX, &n))
                return usage_error("%s needs milliseconds (1 or more)", arg);
            a->timeout_ms = (int)n;
        } else {
            return usage_error("unknown option '%s'", arg);
        }
    }
    if (!a->url)
        return usage_error("%s", "no server: give --falkordb URL (or set KNUT_FALKORDB)");
    if (!a->graph || !*a->graph)
        return usage_error("%s", "no graph: give --graph NAME (or set KNUT_GRAPH)");
    if (!a->cypher)
        return usage_error("%s", "no Cypher query given");
    return KNUT_EXIT_OK;
}

static void print_stats(const knut_graph_falkor_result *r)
{
    const knut_graph_falkor_stats *s = &r->stats;
    const struct {
        const char *name;
        int64_t v;
    } lines[] = {
        {"labels added", s->labels_added},
        {"labels removed", s->labels_removed},
        {"nodes created", s->nodes_created},
        {"nodes deleted", s->nodes_deleted},
        {"properties set", s->properties_set},
        {"properties removed", s->properties_removed},
        {"relationships created", s->relationships_created},
        {"relationships deleted", s->relationships_deleted},
        {"indices created", s->indices_created},
        {"indices deleted", s->indices_deleted},
        {"constraints created", s->constraints_created},
        {"constraints deleted", s->constraints_deleted},
    };
    fprintf(stderr, "rows: %lld\n", (long long)r->n_rows);
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
        if (lines[i].v != 0)
            fprintf(stderr, "%s: %lld\n", lines[i].name, (long long)lines[i].v);
    fprintf(stderr, "cached execution: %d\nexecution time: %.3f ms\n", s->cached_execution,
            s->execution_ms);
}

int knut_cmd_graph_query(int argc, char **argv)
{
    gquery_args a = {0};
    knut_error err = KNUT_ERROR_INIT;
    knut_buf input = KNUT_BUF_INIT;
    knut_graph_falkor *g = NULL;
    knut_graph_falkor_result r = {0};
    knut_graph_falkor_options o = KNUT_GRAPH_FALKOR_OPTIONS_INIT;
    knut_buf text = KNUT_BUF_INIT;
    int rc = parse_args(argc, argv, &a);
    if (rc != KNUT_EXIT_OK) {
        knut_buf_reset(&a.params);
        return rc;
    }
    if (a.render.format == KNUT_CLI_FORMAT_ARROW && isatty(STDOUT_FILENO)) {
        knut_buf_reset(&a.params);
        return usage_error("%s", "refusing to write Arrow IPC bytes to a terminal: redirect "
                                 "stdout to a file or a pipe");
    }
    rc = KNUT_EXIT_FAIL;
    const char *cypher = NULL;
    if (knut_cli_query_text(a.cypher, &input, GQUERY_STDIN_MAX, "Cypher", &cypher, &err) != KNUT_OK)
        goto cleanup;
    if (a.params.len > 0) {
        /* The block goes first; a query that starts with its own CYPHER
         * block still parses (the keyword may repeat). */
        knut_buf_append(&text, a.params.data, a.params.len);
        knut_buf_puts(&text, cypher);
        if (knut_buf_check(&text, &err) != KNUT_OK)
            goto cleanup;
        cypher = text.data;
    }
    o.query_timeout_ms = a.timeout_ms;
    if (knut_graph_falkor_connect_url(&g, a.url, &o, &err) != KNUT_OK)
        goto cleanup;
    if (knut_graph_falkor_query(g, a.graph, cypher, a.read_only ? KNUT_GRAPH_FALKOR_READ_ONLY : 0,
                                &r, &err) != KNUT_OK)
        goto cleanup;
    if (!isatty(STDOUT_FILENO))
        setvbuf(stdout, NULL, _IOFBF, (size_t)1 << 16);
    /* A query without RETURN has no columns: print nothing but the stats. */
    if (r.n_columns > 0 && knut_cli_render_stream(stdout, &r.stream, &a.render, NULL, &err) !=
                               KNUT_OK)
        goto cleanup;
    if (fflush(stdout) != 0) {
        knut_error_set(&err, KNUT_EIO, "writing the result failed");
        goto cleanup;
    }
    if (a.stats)
        print_stats(&r);
    rc = KNUT_EXIT_OK;

cleanup:
    if (rc != KNUT_EXIT_OK) {
        fflush(stdout);
        fprintf(stderr, "knut graph query: %s\n",
                err.message[0] ? err.message : knut_strerror(err.code));
    }
    knut_graph_falkor_result_reset(&r);
    knut_graph_falkor_close(g);
    knut_buf_reset(&input);
    knut_buf_reset(&text);
    knut_buf_reset(&a.params);
    return rc;
}
