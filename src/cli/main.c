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

static const char help_usage[] =
    "usage: knut help [COMMAND]\n"
    "\n"
    "Lists the commands, or shows the full help of one command.\n";

static const char version_usage[] =
    "usage: knut version\n"
    "\n"
    "Prints the versions of knut and of the embedded DuckDB engine.\n";

static const knut_cli_cmd commands[] = {
    {"sync", knut_cmd_sync, "Keep a property graph in step with Parquet/CSV tables (the main job)", knut_cmd_sync_usage, 0},
    {"query", knut_cmd_query, "Run SQL on the embedded engine (DuckDB)", knut_cmd_query_usage, 0},
    {"gar", knut_cmd_gar, "GraphAr (gar/v1): info, cat, validate, import", knut_cmd_gar_usage, 1},
    {"graph", knut_cmd_graph, "Property graphs: Cypher on FalkorDB, export the embedded store", knut_cmd_graph_usage, 1},
    {"load", knut_cmd_load, "Load a whole GraphAr graph into FalkorDB or the embedded store", knut_cmd_load_usage, 0},
    {"help", cmd_help, "Show help for knut or one command", help_usage, 0},
    {"version", cmd_version, "Show the knut and DuckDB versions", version_usage, 0},
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
    "Exit codes: 0 ok, 1 failure, 2 usage error.\n"
    "Environment: KNUT_LOG=trace|debug|info|warn|error|off (default warn),\n"
    "             KNUT_LOG_FORMAT=json|human (default: human on a terminal).\n";

const knut_cli_cmd *knut_cli_find(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

void knut_cli_usage(FILE *f, const knut_cli_cmd *cmd)
{
    fputs(cmd->usage, f);
}

int knut_cli_wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            return 0;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
            return 1;
    }
    return 0;
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
    if (argc < 2) {
        main_usage(stdout);
        return KNUT_EXIT_OK;
    }
    const knut_cli_cmd *cmd = knut_cli_find(argv[1]);
    if (!cmd) {
        fprintf(stderr, "knut: unknown command '%s'\n", argv[1]);
        return KNUT_EXIT_USAGE;
    }
    knut_cli_usage(stdout, cmd);
    return KNUT_EXIT_OK;
}

static int cmd_version(int argc, char **argv)
{
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
    if (argc < 2) {
        main_usage(stderr);
        return KNUT_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "--version") == 0 || strcmp(name, "-V") == 0)
        return cmd_version(argc - 1, argv + 1);
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0)
        return cmd_help(1, argv);
    const knut_cli_cmd *cmd = knut_cli_find(name);
    if (!cmd) {
        fprintf(stderr, "knut: unknown command '%s' (see 'knut help')\n", name);
        return KNUT_EXIT_USAGE;
    }
    if (!cmd->own_help && knut_cli_wants_help(argc - 1, argv + 1)) {
        knut_cli_usage(stdout, cmd);
        return KNUT_EXIT_OK;
    }
    return cmd->run(argc - 1, argv + 1);
}
