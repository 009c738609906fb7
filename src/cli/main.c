/*
 * Entry point of the knut binary: dispatches to subcommands from one table,
 * prints help and versions. Only the CLI writes to stdout/stderr; the
 * library reports through knut_error and the log callback.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "knut/knut.h"

static int cmd_help(int argc, char **argv);
static int cmd_version(int argc, char **argv);

typedef struct help_args {
    const char *command;
    const char *sub;
} help_args;

static const knut_cli_arg help_pos[] = {
    KNUT_CLI_ARG_OPT("COMMAND", help_args, command),
    KNUT_CLI_ARG_OPT("SUBCOMMAND", help_args, sub),
    KNUT_CLI_ARG_END,
};

static const knut_cli_spec help_spec = {
    .name = "help",
    .synopsis = "usage: knut help [COMMAND [SUBCOMMAND]]\n",
    .about = "Lists the commands, or shows the full help of one command\n"
             "(the same text as 'knut COMMAND --help').\n",
    .args = help_pos,
};

static const knut_cli_spec version_spec = {
    .name = "version",
    .synopsis = "usage: knut version\n",
    .about = "Prints the versions of knut and of the embedded DuckDB engine.\n",
};

static const knut_cli_cmd commands[] = {
    {"sync", knut_cmd_sync, "Keep a property graph in step with Parquet/CSV tables (the main job)", &knut_cmd_sync_spec, NULL},
    {"serve", knut_cmd_serve, "Serve a DuckDB database over Arrow Flight SQL (BI tools, ADBC)", &knut_cmd_serve_spec, NULL},
    {"query", knut_cmd_query, "Run SQL on the embedded engine (DuckDB)", &knut_cmd_query_spec, NULL},
    {"export", knut_cmd_export, "Write the rows of a SQL or Cypher query as Parquet, GraphAr or Iceberg", &knut_cmd_export_spec, NULL},
    {"gar", knut_cmd_gar, "GraphAr (gar/v1): info, cat, validate, import", NULL, &knut_cmd_gar_group},
    {"iceberg", knut_cmd_iceberg, "Apache Iceberg tables: info, snapshots, cat, changes", NULL, &knut_cmd_iceberg_group},
    {"graph", knut_cmd_graph, "Property graphs: Cypher on FalkorDB, export the embedded store", NULL, &knut_cmd_graph_group},
    {"load", knut_cmd_load, "Load a whole GraphAr graph into FalkorDB or the embedded store", &knut_cmd_load_spec, NULL},
    {"pipeline", knut_cmd_pipeline, "Declarative pipelines on DuckDB: init, validate, show, run", NULL, &knut_cmd_pipeline_group},
    {"web", knut_cmd_web, "Serve a live page of a pipeline's DAG or a Spark job's stages", &knut_cmd_web_spec, NULL},
    {"spark", knut_cmd_spark, "Spark through Spark Connect: run SQL, ask the version", NULL, &knut_cmd_spark_group},
    {"watch", knut_cmd_watch, "Watch a Spark query live: progress per stage, then its rows", &knut_cmd_watch_spec, NULL},
    {"help", cmd_help, "Show help for knut or one command", &help_spec, NULL},
    {"version", cmd_version, "Show the knut and DuckDB versions", &version_spec, NULL},
    {"completion", knut_cmd_completion, "Print the bash or zsh completion script", &knut_cmd_completion_spec, NULL},
    {"man", knut_cmd_man, "Print a man page (roff), or write them all", &knut_cmd_man_spec, NULL},
};

static const char main_usage_head[] =
    "usage: knut [--version] [--help] COMMAND [ARGS]\n"
    "\n"
    "knut keeps a property graph in step with lakehouse tables.\n"
    "\n"
    "Commands:\n";

static const char main_usage_tail[] =
    "\n"
    "Run 'knut help COMMAND' or 'knut COMMAND --help' for one command.\n"
    "Exit codes: 0 ok, 1 data or runtime failure, 2 usage or config error.\n"
    "Environment: KNUT_LOG=trace|debug|info|warn|error|off (default warn),\n"
    "             KNUT_LOG_FORMAT=json|human (default: human on a terminal).\n";

const knut_cli_cmd *knut_cli_find(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

const knut_cli_cmd *knut_cli_commands(size_t *n)
{
    *n = sizeof commands / sizeof commands[0];
    return commands;
}

static void main_usage(FILE *f)
{
    fputs(main_usage_head, f);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fputs(main_usage_tail, f);
}

static int cmd_help(int argc, char **argv)
{
    help_args a = {0};
    int rc = knut_cli_args_parse(&help_spec, argc, argv, &a);
    if (rc != KNUT_CLI_RUN)
        return rc;
    if (!a.command) {
        main_usage(stdout);
        return KNUT_EXIT_OK;
    }
    const knut_cli_cmd *cmd = knut_cli_find(a.command);
    if (!cmd) {
        fprintf(stderr, "knut help: unknown command '%s'; see 'knut help'\n", a.command);
        return KNUT_EXIT_USAGE;
    }
    if (cmd->spec && !a.sub) {
        knut_cli_args_usage(stdout, cmd->spec);
        return KNUT_EXIT_OK;
    }
    if (cmd->spec) { /* a form the command parses itself: `knut help sync status` */
        size_t n = strlen(a.command);
        for (const knut_cli_spec *const *sub = cmd->spec->subs; sub && *sub; sub++) {
            const char *name = (*sub)->name;
            if (strncmp(name, a.command, n) == 0 && name[n] == ' ' &&
                strcmp(name + n + 1, a.sub) == 0) {
                knut_cli_args_usage(stdout, *sub);
                return KNUT_EXIT_OK;
            }
        }
        if (!cmd->spec->subs)
            return knut_cli_args_error(&help_spec, "%s has no sub-commands", a.command);
        return knut_cli_args_error(&help_spec, "%s has no sub-command '%s'", a.command, a.sub);
    }
    /* A group prints its own list, or its sub-command's help. */
    char help[] = "help", *sub = (char *)a.sub;
    char *group_argv[] = {(char *)a.command, help, sub, NULL};
    return cmd->run(sub ? 3 : 2, group_argv);
}

static int cmd_version(int argc, char **argv)
{
    int rc = knut_cli_args_parse(&version_spec, argc, argv, NULL);
    if (rc != KNUT_CLI_RUN)
        return rc;
    printf("knut %s (DuckDB %s)\n", KNUT_VERSION, knut_duck_library_version());
    return KNUT_EXIT_OK;
}

void knut_cli_log_setup(void)
{
    knut_log_level level = KNUT_LOG_WARN;
    const char *env = getenv("KNUT_LOG");
    if (env && knut_log_level_parse(env, &level) != KNUT_OK)
        fprintf(stderr, "knut: ignoring KNUT_LOG=%s (want trace|debug|info|warn|error|off)\n", env);
    const char *fmt = getenv("KNUT_LOG_FORMAT");
    int json = fmt ? strcmp(fmt, "json") == 0 : !isatty(STDERR_FILENO);
    knut_log_set(level, json ? knut_log_sink_json : knut_log_sink_human, stderr);
}

int main(int argc, char **argv)
{
    knut_cli_log_setup();
    if (argc < 2) { /* one line, as every usage error, naming the choices */
        fputs("knut: missing COMMAND (", stderr);
        for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
            fprintf(stderr, "%s%s", i ? ", " : "", commands[i].name);
        fputs("); see 'knut help'\n", stderr);
        return KNUT_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "--version") == 0 || strcmp(name, "-V") == 0)
        return cmd_version(argc - 1, argv + 1);
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0)
        return cmd_help(1, argv + 1);
    const knut_cli_cmd *cmd = knut_cli_find(name);
    if (!cmd) {
        fprintf(stderr, "knut: unknown command '%s'; see 'knut help'\n", name);
        return KNUT_EXIT_USAGE;
    }
    return cmd->run(argc - 1, argv + 1);
}
