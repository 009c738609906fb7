/*
 * `knut pipeline`: declarative pipelines on DuckDB (þund). validate, show
 * and run take a spec (a YAML file, or a folder holding pipeline.yml);
 * init (cmd_pipeline_init.c) writes a runnable example project.
 */
#include "cli.h"
#include "spark_cli.h"

#include <jansson.h>
#include <string.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "knut/pipeline.h"
#include "knut/viewer.h"

/* The live view on a terminal: one line per flow, redrawn in place. */
#define LIVE_MAX_FLOWS 4096

typedef struct live_line {
    char *flow;
    char text[512];
} live_line;

typedef struct pipe_args {
    const char *spec;
    int json;
    int format; /* show: index in formats, -1: text */
    int full_refresh;
    int dry_run;
    int64_t parallel; /* run: flows at a time (0: the default, 1) */
    const char *execution_time;
    int tty;          /* stdout is a terminal: the live view */
    live_line *lines; /* the live view's lines, in run order */
    size_t nlines;
    char *failures;   /* messages of failed and skipped flows, shown at the end */
    int backend;      /* index in backends */
    knut_cli_spark_args spark; /* --backend spark (cmd_pipeline_spark.c) */
} pipe_args;

static const char *const formats[] = {"text", "json", "dot", "svg", NULL};
static const char *const backends[] = {"duckdb", "spark", NULL};

static const knut_cli_arg spec_pos[] = {
    KNUT_CLI_ARG("SPEC", pipe_args, spec),
    KNUT_CLI_ARG_END,
};

/* run takes SPEC after the --full-refresh names too (checked by hand). */
static const knut_cli_arg run_pos[] = {
    KNUT_CLI_ARG_OPT("SPEC", pipe_args, spec),
    KNUT_CLI_ARG_END,
};

static const knut_cli_opt validate_opts[] = {
    KNUT_CLI_OPT_FLAG("json", 0, pipe_args, json, "print the result (or the error) as JSON"),
    KNUT_CLI_OPT_END,
};

static const knut_cli_opt show_opts[] = {
    KNUT_CLI_OPT_CHOICE("format", 'f', pipe_args, format, "F", formats,
                        "text (default), json, dot (Graphviz) or svg (laid out by knut)"),
    KNUT_CLI_OPT_FLAG("json", 0, pipe_args, json, "the same as --format json"),
    KNUT_CLI_OPT_END,
};

static const knut_cli_opt run_opts[] = {
    KNUT_CLI_OPT_FLAG("full-refresh", 0, pipe_args, full_refresh,
                      "recompute from scratch: every dataset, or only the DATASET names that "
                      "follow it (streaming tables are emptied and their checkpoints cleared)"),
    KNUT_CLI_OPT_FLAG("dry-run", 'n', pipe_args, dry_run,
                      "resolve and plan only: print what each flow would do, write nothing"),
    KNUT_CLI_OPT_FLAG("json", 0, pipe_args, json, "print every run event as one JSON line"),
    KNUT_CLI_OPT_INT("parallel", 'j', pipe_args, parallel, "N", 1, 256,
                     "run up to N independent flows at the same time, each on its own DuckDB "
                     "connection (default: 1, one flow at a time in run order)"),
    KNUT_CLI_OPT_STR("execution-time", 0, pipe_args, execution_time, "TS",
                     "the run's execution time, 'YYYY-MM-DD HH:MM:SS' (default: when the run "
                     "started): the version AUTO CDC FROM SNAPSHOT gives the snapshot it reads"),
    KNUT_CLI_OPT_CHOICE("backend", 0, pipe_args, backend, "B", backends,
                        "duckdb (default: run here) or spark (lower to Spark Declarative "
                        "Pipelines; with --dry-run: print the lowering and its report)"),
    KNUT_CLI_SPARK_CONN_OPTS(pipe_args, spark.conn),
    KNUT_CLI_OPT_STR("spark-version", 0, pipe_args, spark.version, "V",
                     "spark --dry-run: lower for this Spark version (default 4.3.0; a run asks "
                     "the server)"),
    KNUT_CLI_OPT_STR("spark-storage", 0, pipe_args, spark.storage, "URI",
                     "spark: the run's storage URI (default file://<storage>/spark)"),
    KNUT_CLI_OPT_END,
};

static const knut_cli_spec validate_spec = {
    .name = "pipeline validate",
    .synopsis = "usage: knut pipeline validate SPEC [--json]\n",
    .about = "Loads the spec and its SQL files, infers every flow's reads with DuckDB's\n"
             "parser and checks the graph (unknown datasets, cycles, two flows into one\n"
             "materialized view, streaming reads of batch datasets). Errors name\n"
             "file:line:col. SPEC is a spec file, or a folder holding pipeline.yml.\n",
    .opts = validate_opts,
    .args = spec_pos,
    .epilog = "Exit status: 0 valid, 1 invalid, 2 usage error or the spec cannot be read.\n",
};

static const knut_cli_spec show_spec = {
    .name = "pipeline show",
    .synopsis = "usage: knut pipeline show SPEC [-f|--format text|json|dot|svg] [--json]\n",
    .about = "Prints the resolved DAG: the flows in run order with their reads and\n"
             "expectations (text), one JSON object, a Graphviz digraph, or a standalone\n"
             "SVG of the layered layout `knut web` draws (one box per flow).\n",
    .opts = show_opts,
    .args = spec_pos,
    .epilog = "Example:\n  knut pipeline show demo --format svg > demo.svg\n"
              "  knut pipeline show demo --format dot | dot -Tsvg > demo-graphviz.svg\n",
};

static const knut_cli_spec run_spec = {
    .name = "pipeline run",
    .synopsis = "usage: knut pipeline run SPEC [--full-refresh [DATASET...]] [-n|--dry-run]\n"
                "                         [--json] [-j|--parallel N] [--execution-time TS]\n"
                "                         [--backend duckdb|spark]\n"
                "                         [-c|--connect URL] [--token-file FILE]\n"
                "                         [--allow-insecure-token] [--ca-file FILE]\n"
                "                         [--spark-version V] [--spark-storage URI]\n",
    .about = "Runs the flows in dependency order on DuckDB, in the storage folder of the\n"
             "spec: materialized views are recomputed, streaming tables read only the\n"
             "files new since the last run. Each flow's update is one transaction: a\n"
             "failed flow leaves its target as it was, and flows downstream of it are\n"
             "skipped. With --parallel N, flows whose inputs are complete run at the same\n"
             "time (flows writing one table never do); a failed flow, a FAIL UPDATE\n"
             "expectation included, does not stop the flows running beside it. Events\n"
             "go to stdout (--json: JSON lines), <storage>/events.jsonl and the table\n"
             "_knut.event_log.\n"
             "\n"
             "--backend spark lowers the pipeline to Spark Declarative Pipelines on a\n"
             "Spark Connect server (4.1 or newer; the version is asked for) and streams\n"
             "the run's events in the same format; what the server cannot run is\n"
             "refused per flow, with the reason, before anything is sent. --dry-run\n"
             "prints the lowering and the report of every knob it drops or changes,\n"
             "without a server (docs/spark.md).\n",
    .opts = run_opts,
    .args = run_pos,
    .epilog = "Examples:\n"
              "  knut pipeline run demo\n"
              "  knut pipeline run demo --full-refresh raw_orders --json\n"
              "  knut pipeline run demo --parallel 4\n"
              "  knut pipeline run demo --backend spark --dry-run --spark-version 4.1.1\n"
              "  knut pipeline run demo --backend spark -c sc://localhost:15002/\n"
              "Exit status: 0 every flow completed or was idle, 1 a flow failed (spark: or\n"
              "the server refuses the pipeline; --dry-run: it would), 2 usage error or the\n"
              "spec is missing or invalid.\n",
};

/* SPEC or SPEC/pipeline.yml; the caller frees. */
static char *spec_file(const char *spec)
{
    struct stat sb;
    if (stat(spec, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        size_t n = strlen(spec) + sizeof "/pipeline.yml";
        char *s = malloc(n);
        if (s)
            snprintf(s, n, "%s%spipeline.yml", spec, spec[strlen(spec) - 1] == '/' ? "" : "/");
        return s;
    }
    return strdup(spec);
}

static void print_error_json(const knut_error *err)
{
    json_t *o = json_pack("{s:b,s:{s:s,s:i,s:i}}", "ok", 0, "error", "message", err->message,
                          "line", err->line, "col", err->col);
    char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
    if (s)
        printf("%s\n", s);
    free(s);
    json_decref(o);
}

/* Loads and resolves SPEC; prints the error itself (0 ok, else the exit
 * code). A spec that cannot be read is a config error (2) for every
 * command; one that is refused is too, except for validate, whose answer
 * it is (1, "invalid"). */
static int load(const char *cmd, const char *spec, int json, knut_pipeline **out)
{
    knut_error err = KNUT_ERROR_INIT;
    char *path = spec_file(spec);
    if (!path) {
        fprintf(stderr, "knut %s: out of memory\n", cmd);
        return KNUT_EXIT_FAIL;
    }
    int rc = knut_cli_config_check(cmd, path);
    if (rc != 0) {
        if (json) {
            knut_error_set(&err, KNUT_ENOTFOUND, "%s: cannot read the spec", path);
            print_error_json(&err);
        }
        free(path);
        return rc;
    }
    knut_status st = knut_pipeline_load(out, path, &err);
    if (st == KNUT_OK && (st = knut_pipeline_resolve(*out, &err)) != KNUT_OK) {
        knut_pipeline_free(*out);
        *out = NULL;
    }
    free(path);
    if (st == KNUT_OK)
        return 0;
    if (json)
        print_error_json(&err);
    fprintf(stderr, "knut %s: %s\n", cmd, err.message);
    if (strcmp(cmd, "pipeline validate") == 0)
        return KNUT_EXIT_FAIL; /* the answer: invalid */
    return knut_cli_config_exit(st);
}

static int cmd_validate(int argc, char **argv)
{
    pipe_args a = {.format = -1};
    int rc = knut_cli_args_parse(&validate_spec, argc, argv, &a);
    if (rc != KNUT_CLI_RUN)
        return rc;
    knut_cli_log_setup();
    knut_pipeline *p = NULL;
    if ((rc = load("pipeline validate", a.spec, a.json, &p)) != 0)
        return rc;
    if (a.json) {
        json_t *o = json_pack("{s:b,s:s,s:I,s:I}", "ok", 1, "pipeline", p->name, "datasets",
                              (json_int_t)p->ndatasets, "flows", (json_int_t)p->nflows);
        char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
        if (text)
            printf("%s\n", text);
        free(text);
        json_decref(o);
    } else
        printf("ok: pipeline %s: %zu datasets, %zu flows\n", p->name, p->ndatasets, p->nflows);
    knut_pipeline_free(p);
    return KNUT_EXIT_OK;
}

static int cmd_show(int argc, char **argv)
{
    pipe_args a = {.format = -1};
    int rc = knut_cli_args_parse(&show_spec, argc, argv, &a);
    if (rc != KNUT_CLI_RUN)
        return rc;
    knut_cli_log_setup();
    knut_pipeline *p = NULL;
    if ((rc = load("pipeline show", a.spec, 0, &p)) != 0)
        return rc;
    knut_pipeline_format fmt = a.json || a.format == 1 ? KNUT_PIPELINE_FORMAT_JSON
                               : a.format == 2         ? KNUT_PIPELINE_FORMAT_DOT
                                                       : KNUT_PIPELINE_FORMAT_TEXT;
    knut_buf b = KNUT_BUF_INIT;
    knut_error err = KNUT_ERROR_INIT;
    rc = KNUT_EXIT_OK;
    knut_status st;
    if (!a.json && a.format == 3) { /* svg: the viewer's layout */
        knut_viewer_graph *g = NULL;
        st = knut_viewer_graph_from_pipeline(&g, p, &err);
        if (st == KNUT_OK)
            st = knut_viewer_graph_svg(g, &b, &err);
        knut_viewer_graph_free(g);
    } else {
        st = knut_pipeline_show(p, fmt, &b, &err);
    }
    if (st != KNUT_OK) {
        fprintf(stderr, "knut pipeline show: %s\n", err.message);
        rc = KNUT_EXIT_FAIL;
    } else {
        fwrite(b.data, 1, b.len, stdout);
    }
    knut_buf_reset(&b);
    knut_pipeline_free(p);
    return rc;
}

/* One flow's line: name, state, counts. */
static void flow_line(knut_buf *b, const char *flow, const char *status, json_t *d)
{
    knut_buf_printf(b, "%-24s %-9s", flow ? flow : "", status);
    json_t *rows = json_object_get(d, "rows_out");
    if (json_is_integer(rows))
        knut_buf_printf(b, " rows_out=%lld", (long long)json_integer_value(rows));
    json_t *files = json_object_get(d, "files_read");
    if (json_is_integer(files))
        knut_buf_printf(b, " files_read=%lld", (long long)json_integer_value(files));
    const char *plan = json_string_value(json_object_get(d, "plan"));
    if (plan)
        knut_buf_printf(b, " plan=%s", plan);
    json_t *dq = json_object_get(d, "data_quality"), *x;
    size_t i;
    json_array_foreach(json_object_get(dq, "expectations"), i, x)
        knut_buf_printf(b, " %s(%s):passed=%lld,failed=%lld",
                        json_string_value(json_object_get(x, "name")),
                        json_string_value(json_object_get(x, "action")),
                        (long long)json_integer_value(json_object_get(x, "passed_records")),
                        (long long)json_integer_value(json_object_get(x, "failed_records")));
}

/* The live view: a line per flow (added when it is queued), redrawn in
 * place at each change of state; messages of failures follow the run. */
static void print_event_live(pipe_args *a, json_t *e)
{
    const char *type = json_string_value(json_object_get(e, "event_type"));
    const char *status = json_string_value(json_object_get(e, "status"));
    const char *flow = json_string_value(json_object_get(e, "flow"));
    const char *message = json_string_value(json_object_get(e, "message"));
    if (!type || !status)
        return;
    if (strcmp(type, "update_progress") == 0) {
        if (strcmp(status, "RUNNING") != 0) {
            if (a->failures)
                fputs(a->failures, stdout);
            printf("%s\n", message ? message : status);
        }
        return;
    }
    size_t k = 0;
    while (k < a->nlines && strcmp(a->lines[k].flow, flow ? flow : "") != 0)
        k++;
    if (k == a->nlines) {
        live_line *nl = a->nlines < LIVE_MAX_FLOWS
                            ? realloc(a->lines, (a->nlines + 1) * sizeof *nl)
                            : NULL;
        if (!nl)
            return;
        a->lines = nl;
        a->lines[k].flow = strdup(flow ? flow : "");
        a->lines[k].text[0] = '\0';
        a->nlines++;
        fputc('\n', stdout); /* a new last line to redraw */
    }
    knut_buf b = KNUT_BUF_INIT;
    knut_buf_init(&b, sizeof a->lines[k].text - 1);
    flow_line(&b, flow, strcmp(status, "RUNNING") == 0 ? "RUNNING.." : status,
              json_object_get(e, "details"));
    snprintf(a->lines[k].text, sizeof a->lines[k].text, "%s", b.data ? b.data : "");
    knut_buf_reset(&b);
    if ((strcmp(status, "FAILED") == 0 || strcmp(status, "SKIPPED") == 0) && message) {
        size_t old = a->failures ? strlen(a->failures) : 0, add = strlen(message) + 4;
        char *nf = realloc(a->failures, old + add);
        if (nf) {
            snprintf(nf + old, add, "  %s\n", message);
            a->failures = nf;
        }
    }
    /* Lines are cut to the terminal's width: a wrapped line would break
     * the count of lines to go up. */
    struct winsize ws;
    int width = ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1 ? ws.ws_col - 1 : 79;
    printf("\033[%zuA", a->nlines); /* up to the first line, redraw them all */
    for (size_t i = 0; i < a->nlines; i++)
        printf("\r\033[2K%.*s\n", width,
               a->lines[i].text[0] ? a->lines[i].text : a->lines[i].flow);
}

/* Human lines for a log: one per flow outcome. */
static void print_event_human(const char *text, size_t len)
{
    json_error_t jerr;
    json_t *e = json_loadb(text, len, 0, &jerr);
    const char *type = json_string_value(json_object_get(e, "event_type"));
    const char *status = json_string_value(json_object_get(e, "status"));
    const char *flow = json_string_value(json_object_get(e, "flow"));
    json_t *d = json_object_get(e, "details");
    if (!type || !status)
        goto done;
    if (strcmp(type, "update_progress") == 0) {
        if (strcmp(status, "RUNNING") != 0)
            printf("%s\n", json_string_value(json_object_get(e, "message")));
        goto done;
    }
    if (strcmp(status, "RUNNING") == 0 || strcmp(status, "QUEUED") == 0 ||
        strcmp(status, "PLANNING") == 0)
        goto done;
    knut_buf b = KNUT_BUF_INIT;
    flow_line(&b, flow, status, d);
    if (b.data)
        fputs(b.data, stdout);
    knut_buf_reset(&b);
    printf("\n");
    if (strcmp(status, "FAILED") == 0 || strcmp(status, "SKIPPED") == 0)
        printf("  %s\n", json_string_value(json_object_get(e, "message")));
done:
    fflush(stdout);
    json_decref(e);
}

static void on_event(const char *json, size_t len, void *ctx)
{
    pipe_args *a = ctx;
    if (a->tty && !a->json) {
        json_error_t jerr;
        json_t *e = json_loadb(json, len, 0, &jerr);
        print_event_live(a, e);
        fflush(stdout);
        json_decref(e);
    } else if (a->json) {
        fwrite(json, 1, len, stdout);
        fputc('\n', stdout);
        fflush(stdout);
    } else {
        print_event_human(json, len);
    }
}

/* Takes the DATASET names after --full-refresh out of argv (they are not
 * options and not SPEC): names[] gets them, argv keeps the flag. */
static int take_refresh_names(int *argc, char **argv, const char **names, size_t *n)
{
    int out = 0;
    *n = 0;
    for (int i = 0; i < *argc; i++) {
        argv[out++] = argv[i];
        if (strcmp(argv[i], "--") == 0) {
            for (i++; i < *argc; i++)
                argv[out++] = argv[i];
            break;
        }
        if (strcmp(argv[i], "--full-refresh") != 0)
            continue;
        while (i + 1 < *argc && argv[i + 1][0] != '-') {
            if (*n == KNUT_CLI_STRS_MAX)
                return -1;
            names[(*n)++] = argv[++i];
        }
    }
    *argc = out;
    argv[out] = NULL;
    return 0;
}

static int cmd_run(int argc, char **argv)
{
    pipe_args a = {.format = -1};
    const char *names[KNUT_CLI_STRS_MAX];
    size_t nnames = 0;
    if (take_refresh_names(&argc, argv, names, &nnames) != 0)
        return knut_cli_args_error(&run_spec, "too many --full-refresh datasets");
    int rc = knut_cli_args_parse(&run_spec, argc, argv, &a);
    if (rc != KNUT_CLI_RUN)
        return rc;
    if (!a.spec && nnames) {
        /* `run --full-refresh SPEC`: the last name was the spec. */
        a.spec = names[--nnames];
    }
    if (!a.spec)
        return knut_cli_args_missing(&run_spec, "SPEC");
    const knut_cli_spark_conn *sc = &a.spark.conn;
    if (a.backend != 1 && (sc->connect || sc->token_file || sc->ca_file || sc->allow_insecure ||
                           a.spark.version || a.spark.storage))
        return knut_cli_args_error(&run_spec, "%s", "--connect, --token-file, "
                                   "--allow-insecure-token, --ca-file, --spark-version and "
                                   "--spark-storage go with --backend spark");
    knut_cli_log_setup();
    knut_pipeline *p = NULL;
    if ((rc = load("pipeline run", a.spec, 0, &p)) != 0)
        return rc;
    for (size_t i = 0; i < nnames; i++)
        if (!knut_pipeline_dataset_find(p, names[i])) {
            rc = knut_cli_args_error(&run_spec, "--full-refresh: no dataset named '%s' in "
                                     "pipeline %s", names[i], p->name);
            knut_pipeline_free(p);
            return rc;
        }
    knut_pipeline_run_options o = KNUT_PIPELINE_RUN_OPTIONS_INIT;
    o.full_refresh_all = a.full_refresh && nnames == 0;
    o.full_refresh = names;
    o.nfull_refresh = nnames;
    o.dry_run = a.dry_run;
    o.parallel = (int)a.parallel;
    o.execution_time = a.execution_time;
    o.on_event = on_event;
    o.ctx = &a;
    a.tty = isatty(STDOUT_FILENO);
    knut_error err = KNUT_ERROR_INIT;
    knut_pipeline_run_result res;
    knut_status st = KNUT_OK;
    if (a.backend == 1)
        rc = knut_cli_pipeline_spark(&run_spec, p, &o, &a.spark, a.json);
    else
        st = knut_pipeline_run(p, &o, &res, &err);
    knut_pipeline_free(p);
    for (size_t i = 0; i < a.nlines; i++)
        free(a.lines[i].flow);
    free(a.lines);
    free(a.failures);
    if (a.backend == 1)
        return rc;
    if (st != KNUT_OK) {
        fprintf(stderr, "knut pipeline run: %s\n", err.message);
        return KNUT_EXIT_FAIL;
    }
    return KNUT_EXIT_OK;
}

int knut_cmd_pipeline_validate(int argc, char **argv)
{
    return cmd_validate(argc, argv);
}

int knut_cmd_pipeline_show(int argc, char **argv)
{
    return cmd_show(argc, argv);
}

int knut_cmd_pipeline_run(int argc, char **argv)
{
    return cmd_run(argc, argv);
}

static const knut_cli_sub subs[] = {
    {"init", knut_cmd_pipeline_init, "write a runnable example pipeline project into DIR",
     &knut_cmd_pipeline_init_spec},
    {"validate", knut_cmd_pipeline_validate, "check a spec, its SQL and its graph", &validate_spec},
    {"show", knut_cmd_pipeline_show, "print the DAG (text, JSON, Graphviz DOT)", &show_spec},
    {"run", knut_cmd_pipeline_run, "run the flows on DuckDB in the spec's storage", &run_spec},
    {NULL, NULL, NULL, NULL},
};

const knut_cli_group knut_cmd_pipeline_group = {
    "pipeline",
    "Declarative pipelines (materialized views, streaming tables over file drops, "
    "expectations) run on DuckDB.",
    subs};

int knut_cmd_pipeline(int argc, char **argv)
{
    return knut_cli_dispatch(&knut_cmd_pipeline_group, argc, argv);
}

/* For knut web: the same loading, errors and exit codes as show. */
int knut_cli_pipeline_load(const char *cmd, const char *spec, knut_pipeline **out)
{
    return load(cmd, spec, 0, out);
}
