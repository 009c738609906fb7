/*
 * `knut graph query`: runs one Cypher query on a FalkorDB graph and prints
 * its result through the shared renderers (table, CSV, JSON lines, Arrow
 * IPC). The client decodes FalkorDB's compact reply into Arrow, so every
 * format sees typed columns. The server's password, given in the URL,
 * never appears in anything this command prints.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "knut/knut.h"
#include "render.h"

#define GQUERY_STDIN_MAX ((size_t)16 << 20)

typedef struct gquery_args {
    const char *url;
    int url_from_env;
    const char *password_file;
    const char *graph;
    const char *cypher;
    int read_only;
    int stats;
    int format;
    int64_t timeout_ms;
    int64_t max_width;
    knut_cli_strs param;
    knut_buf params; /* "CYPHER a=1 b='x' " from --param, or empty */
    knut_cli_render_opts render;
} gquery_args;

static const knut_cli_opt gquery_opts[] = {
    KNUT_CLI_OPT_STR("falkordb", 0, gquery_args, url, "URL",
                     "redis://[[user]:password@]host[:port] (default port 6379); else "
                     "$KNUT_FALKORDB_URL (or $KNUT_FALKORDB). The password is never printed; "
                     "on the command line every local user sees it: use "
                     "--falkordb-password-file"),
    KNUT_CLI_OPT_STR("falkordb-password-file", 0, gquery_args, password_file, "FILE",
                     "file holding FalkorDB's password (one line); else "
                     "$KNUT_FALKORDB_PASSWORD"),
    KNUT_CLI_OPT_STR("graph", 0, gquery_args, graph, "NAME", "the graph (a Redis key); also "
                                                             "$KNUT_GRAPH"),
    KNUT_CLI_OPT_FLAG("read-only", 0, gquery_args, read_only,
                      "send GRAPH.RO_QUERY: the server refuses writes, and a missing graph is "
                      "an error instead of being created"),
    KNUT_CLI_OPT_CHOICE("format", 'f', gquery_args, format, "FMT", knut_cli_format_names,
                        "table (default), csv, json (one object per line) or arrow (Arrow IPC "
                        "stream; not to a terminal)"),
    KNUT_CLI_OPT_INT("max-rows", 0, gquery_args, render.max_rows, "N", 0, INT64_MAX,
                     "table only: show at most N rows (default 1000, 0 = all)"),
    KNUT_CLI_OPT_INT("max-width", 0, gquery_args, max_width, "N", 1, 100000,
                     "table only: cut cells longer than N characters"),
    KNUT_CLI_OPT_INT("timeout", 0, gquery_args, timeout_ms, "MS", 1, INT32_MAX,
                     "server-side query timeout (TIMEOUT MS)"),
    KNUT_CLI_OPT_STRS("param", 'p', gquery_args, param, "NAME=VALUE", KNUT_CLI_STRS_MAX,
                      "a query parameter, used as $NAME (repeatable). VALUE is typed: 42, "
                      "-1.5, 1e3, true, false, null, 'text' or \"text\" (escapes \\\\ \\' \\\" "
                      "\\n \\t \\r), lists [1, 'a'] and maps {k: 1}; bare words are refused "
                      "(quote strings). Values go in the CYPHER parameter block, never into "
                      "the query text"),
    KNUT_CLI_OPT_FLAG("stats", 0, gquery_args, stats,
                      "print FalkorDB's statistics (nodes created, properties set, ..., "
                      "execution time) to stderr"),
    KNUT_CLI_OPT_END,
};

static const knut_cli_arg gquery_pos[] = {
    KNUT_CLI_ARG("CYPHER", gquery_args, cypher),
    KNUT_CLI_ARG_END,
};

const knut_cli_spec knut_cmd_graph_query_spec = {
    .name = "graph query",
    .synopsis =
        "usage: knut graph query --falkordb URL [--falkordb-password-file FILE]\n"
        "                        --graph NAME [--read-only]\n"
        "                        [-f|--format table|csv|json|arrow] [--max-rows N]\n"
        "                        [--max-width N] [--timeout MS]\n"
        "                        [-p|--param NAME=VALUE]... [--stats] CYPHER\n"
        "       knut graph query [OPTIONS] -   (read the Cypher from stdin)\n",
    .about =
        "Runs one Cypher query on a FalkorDB graph (GRAPH.QUERY, or GRAPH.RO_QUERY\n"
        "with --read-only) and prints the rows it returns. Nodes and edges print as\n"
        "structs whose properties are one JSON object; dates, times and datetimes\n"
        "keep their types (see docs/graph.md, \"FalkorDB client\").\n",
    .opts = gquery_opts,
    .args = gquery_pos,
    .epilog =
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
        "2 usage error.\n",
    .more_hint = "quote the Cypher",
};

/* NAME=VALUE from --param, rendered (typed and escaped) into a->params. */
static int add_param(gquery_args *a, const char *v)
{
    knut_error err = KNUT_ERROR_INIT;
    const char *eq = strchr(v, '=');
    if (!eq || eq == v)
        return knut_cli_args_error(&knut_cmd_graph_query_spec, "%s",
                                   "--param needs NAME=VALUE (e.g. -p \"name='Ada'\")");
    if (a->params.len == 0)
        knut_buf_puts(&a->params, "CYPHER ");
    if (knut_graph_cypher_param(&a->params, v, (size_t)(eq - v), eq + 1, strlen(eq + 1),
                                &err) != KNUT_OK)
        return knut_cli_args_error(&knut_cmd_graph_query_spec, "%s", err.message);
    return KNUT_CLI_RUN;
}

static int parse_args(int argc, char **argv, gquery_args *a)
{
    a->render.max_rows = KNUT_CLI_TABLE_DEFAULT_MAX_ROWS;
    a->graph = getenv("KNUT_GRAPH");
    int rc = knut_cli_args_parse(&knut_cmd_graph_query_spec, argc, argv, a);
    if (rc != KNUT_CLI_RUN)
        return rc;
    if (!a->url) { /* the environment, which other users cannot read (ps can) */
        const char *e = getenv("KNUT_FALKORDB_URL"), *old = getenv("KNUT_FALKORDB");
        a->url = e && *e ? e : old && *old ? old : NULL; /* set but empty: not set */
        a->url_from_env = a->url != NULL;
    }
    a->render.format = (knut_cli_format)a->format;
    a->render.max_width = (int)a->max_width;
    for (size_t i = 0; i < a->param.n; i++)
        if ((rc = add_param(a, a->param.v[i])) != KNUT_CLI_RUN)
            return rc;
    if (!a->url)
        return knut_cli_args_missing(&knut_cmd_graph_query_spec, "--falkordb URL (or KNUT_FALKORDB_URL)");
    if (!a->graph || !*a->graph)
        return knut_cli_args_missing(&knut_cmd_graph_query_spec, "--graph NAME (or KNUT_GRAPH)");
    return KNUT_CLI_RUN;
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
    char *password = NULL;
    knut_graph_falkor_result r = {0};
    knut_graph_falkor_options o = KNUT_GRAPH_FALKOR_OPTIONS_INIT;
    knut_buf text = KNUT_BUF_INIT;
    int rc = parse_args(argc, argv, &a);
    if (rc != KNUT_CLI_RUN) {
        knut_buf_reset(&a.params);
        return rc;
    }
    if (a.render.format == KNUT_CLI_FORMAT_ARROW && isatty(STDOUT_FILENO)) {
        knut_buf_reset(&a.params);
        return knut_cli_args_error(&knut_cmd_graph_query_spec, "%s", "refusing to write Arrow IPC bytes to a terminal: redirect "
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
    o.query_timeout_ms = (int)a.timeout_ms;
    if (knut_cli_peer_password("graph query", "--falkordb", "--falkordb-password-file", a.url,
                               a.url_from_env, a.password_file, "KNUT_FALKORDB_PASSWORD",
                               &password) != 0) {
        rc = KNUT_EXIT_USAGE;
        goto cleanup;
    }
    o.password = password;
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
    knut_net_secret_free(password); /* the client wiped its own copy */
    if (rc == KNUT_EXIT_FAIL) { /* a usage error was printed already */
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
