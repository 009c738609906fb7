/*
 * `knut gar validate`: checks a GraphAr graph (its YAML files and its data)
 * and prints one line per issue, or one JSON document. Exit 0 when there
 * is no error (warnings allowed), 1 on any error or unreadable input, so
 * it can gate a pipeline step.
 */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "knut/graphar.h"

typedef struct validate_args {
    const char *path;
    int format; /* index in text_json */
    int list_rules;
    int64_t max_issues;
    knut_graphar_validate_options opts;
} validate_args;

static const char *const text_json[] = {"text", "json", NULL};

static const knut_cli_opt validate_opts[] = {
    KNUT_CLI_OPT_FLAG("info-only", 0, validate_args, opts.info_only,
                      "check the YAML files only"),
    KNUT_CLI_OPT_FLAG("require-data", 0, validate_args, opts.require_data,
                      "a vertex or edge type without any data is an error (default: a "
                      "warning, as for metadata-only graphs)"),
    KNUT_CLI_OPT_CHOICE("format", 0, validate_args, format, "FMT", text_json,
                        "text   one line per issue (the default):\n"
                        "       SEVERITY file[:line:col]: field: message [rule]\n"
                        "json   one JSON document with every issue"),
    KNUT_CLI_OPT_INT("max-issues", 0, validate_args, max_issues, "N", 1, INT64_MAX,
                     "list at most N issues (default 1000); every issue is still counted, so "
                     "an error past N still fails the check"),
    KNUT_CLI_OPT_STR("data-dir", 0, validate_args, opts.data_dir, "DIR",
                     "read the data from DIR instead of the graph prefix"),
    KNUT_CLI_OPT_FLAG("list-rules", 0, validate_args, list_rules,
                      "print every rule id, its severity and meaning"),
    KNUT_CLI_OPT_END,
};

static const knut_cli_arg validate_pos[] = {
    KNUT_CLI_ARG_OPT("PATH", validate_args, path), /* not with --list-rules */
    KNUT_CLI_ARG_END,
};

const knut_cli_spec knut_cmd_gar_validate_spec = {
    .name = "gar validate",
    .synopsis = "usage: knut gar validate [--info-only] [--require-data] [--format text|json]\n"
                "                         [--max-issues N] [--data-dir DIR] PATH\n"
                "       knut gar validate --list-rules\n",
    .about =
        "Checks a GraphAr (gar/v1) graph: the info YAML files against the rules\n"
        "the reference library enforces, then the data against them: count\n"
        "files, the chunks each count implies, rows per chunk, column names and\n"
        "types, vertex indices, adjacency ranges and order, offsets. Parquet and\n"
        "CSV chunks are read (through DuckDB, in bounded memory); ORC and JSON\n"
        "chunks are only checked for existence. PATH is a *.graph.yml (or a\n"
        "directory holding exactly one).\n",
    .opts = validate_opts,
    .args = validate_pos,
    .epilog =
        "Examples:\n"
        "  knut gar validate data/ldbc_sample.graph.yml\n"
        "  knut gar validate --format json --info-only graphs/movies/\n"
        "\n"
        "Exit status: 0 no errors (warnings allowed), 1 errors found or the input\n"
        "could not be read, 2 usage error.\n",
};

static int parse_args(int argc, char **argv, validate_args *a)
{
    knut_graphar_validate_options def = KNUT_GRAPHAR_VALIDATE_OPTIONS_INIT;
    a->opts = def;
    int rc = knut_cli_args_parse(&knut_cmd_gar_validate_spec, argc, argv, a);
    if (rc != KNUT_CLI_RUN)
        return rc;
    if (!a->path && !a->list_rules)
        return knut_cli_args_missing(&knut_cmd_gar_validate_spec, "PATH");
    a->opts.max_issues = (size_t)a->max_issues;
    return KNUT_CLI_RUN;
}

static void print_text(const knut_graphar_issues *is, const char *path, knut_buf *out)
{
    for (size_t i = 0; i < is->n; i++) {
        const knut_graphar_issue *it = &is->items[i];
        knut_buf_printf(out, "%s %s", it->severity == KNUT_GRAPHAR_SEV_ERROR ? "ERROR" : "WARNING",
                        it->file);
        if (it->line > 0)
            knut_buf_printf(out, ":%d:%d", it->line, it->col);
        knut_buf_puts(out, ": ");
        if (it->field[0])
            knut_buf_printf(out, "%s: ", it->field);
        knut_buf_printf(out, "%s [%s]\n", it->message, it->rule);
    }
    knut_buf_printf(out, "%s: %zu error%s, %zu warning%s", path, is->n_errors,
                    is->n_errors == 1 ? "" : "s", is->n_warnings, is->n_warnings == 1 ? "" : "s");
    if (is->truncated)
        knut_buf_printf(out, " (%zu not shown: --max-issues)",
                        is->n_errors + is->n_warnings - is->n);
    knut_buf_puts(out, "\n");
}

static void json_str(knut_buf *out, const char *key, const char *s, int comma)
{
    knut_buf_printf(out, "%s\"%s\":", comma ? "," : "", key);
    knut_buf_put_json_str(out, s, strlen(s));
}

static void print_json(const knut_graphar_issues *is, const char *path, knut_buf *out)
{
    knut_buf_puts(out, "{");
    json_str(out, "path", path, 0);
    knut_buf_printf(out, ",\"valid\":%s,\"errors\":%zu,\"warnings\":%zu,\"truncated\":%s,"
                         "\"issues\":[",
                    is->n_errors ? "false" : "true", is->n_errors, is->n_warnings,
                    is->truncated ? "true" : "false");
    for (size_t i = 0; i < is->n; i++) {
        const knut_graphar_issue *it = &is->items[i];
        knut_buf_puts(out, i ? ",\n{" : "\n{");
        json_str(out, "severity", knut_graphar_severity_name(it->severity), 0);
        json_str(out, "rule", it->rule, 1);
        json_str(out, "file", it->file, 1);
        if (it->line > 0)
            knut_buf_printf(out, ",\"line\":%d,\"col\":%d", it->line, it->col);
        json_str(out, "field", it->field, 1);
        json_str(out, "message", it->message, 1);
        knut_buf_puts(out, "}");
    }
    knut_buf_puts(out, "]}\n");
}

static void print_rules(knut_buf *out)
{
    size_t n = 0;
    const knut_graphar_rule *r = knut_graphar_validate_rules(&n);
    for (size_t i = 0; i < n; i++)
        knut_buf_printf(out, "%-27s %-7s %s\n", r[i].id, knut_graphar_severity_name(r[i].severity),
                        r[i].meaning);
}

int knut_cmd_gar_validate(int argc, char **argv)
{
    validate_args a = {0};
    int rc = parse_args(argc, argv, &a);
    if (rc != KNUT_CLI_RUN)
        return rc;
    /* The loader logs what it tolerates (legacy keys, odd aligned_by);
     * here each of those is an issue already, so keep stderr for errors
     * unless KNUT_LOG asks for more. */
    if (!getenv("KNUT_LOG")) {
        const char *fmt = getenv("KNUT_LOG_FORMAT");
        int json = fmt ? strcmp(fmt, "json") == 0 : !isatty(STDERR_FILENO);
        knut_log_set(KNUT_LOG_ERROR, json ? knut_log_sink_json : knut_log_sink_human, stderr);
    }
    knut_buf out;
    knut_buf_init(&out, 0);
    knut_graphar_issues *issues = NULL;
    if (a.list_rules) {
        print_rules(&out);
        rc = KNUT_EXIT_OK;
    } else {
        knut_error err = KNUT_ERROR_INIT;
        if (knut_graphar_validate(a.path, &a.opts, &issues, &err) != KNUT_OK) {
            fprintf(stderr, "knut gar validate: %s\n", err.message);
            knut_buf_reset(&out);
            return KNUT_EXIT_FAIL;
        }
        if (a.format == 1) /* json */
            print_json(issues, a.path, &out);
        else
            print_text(issues, a.path, &out);
        rc = issues->n_errors ? KNUT_EXIT_FAIL : KNUT_EXIT_OK;
    }
    if (out.error) {
        fprintf(stderr, "knut gar validate: %s\n", knut_strerror(out.error));
        rc = KNUT_EXIT_FAIL;
    } else if (fwrite(out.data, 1, out.len, stdout) != out.len || fflush(stdout) != 0) {
        fprintf(stderr, "knut gar validate: writing the output failed: %s\n", strerror(errno));
        rc = KNUT_EXIT_FAIL;
    }
    knut_graphar_issues_free(issues);
    knut_buf_reset(&out);
    return rc;
}
