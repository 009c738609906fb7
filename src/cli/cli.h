/*
 * The knut command line: one binary, git-style subcommands from a table.
 * Each subcommand lives in cmd_<name>.c and returns an exit code:
 * 0 ok, 1 failure, 2 usage.
 */
#ifndef KNUT_CLI_H
#define KNUT_CLI_H

#include <stdio.h>

#include "knut/core.h"

#define KNUT_EXIT_OK 0
#define KNUT_EXIT_FAIL 1
#define KNUT_EXIT_USAGE 2

typedef int (*knut_cli_fn)(int argc, char **argv);

typedef struct knut_cli_cmd {
    const char *name;
    knut_cli_fn run;
    const char *summary; /* one line for `knut help` */
    const char *usage;   /* full text for `knut help NAME` and NAME --help */
    int own_help;        /* has sub-commands with their own --help */
} knut_cli_cmd;

/* A sub-command of a command group (`knut gar info`, `knut graph query`). */
typedef struct knut_cli_sub {
    const char *name;
    knut_cli_fn run;
    const char *summary;
    const char *usage;
} knut_cli_sub;

/*
 * Runs argv[1] from subs (terminated by a NULL name) with argv shifted by
 * one, after handling `help`, -h/--help and unknown names. group is the
 * command's name ("gar"), about one line describing it.
 */
int knut_cli_dispatch(const char *group, const char *about, const knut_cli_sub *subs, int argc,
                      char **argv);

/* Reads all of stdin into b (capped by b->max); what names the text in
 * errors ("SQL", "Cypher"). Empty input is an error. */
knut_status knut_cli_read_stdin(knut_buf *b, const char *what, knut_error *err);

/* `knut load --mapping`: every file of every table of a sync config, in
 * rounds until none is left (src/cli/cmd_load_tables.c). Returns an exit code. */
int knut_cli_load_mapping(const char *mapping, const char *url, const char *graph,
                          const char *db, int quiet);

/* The query text of a command: arg itself, or all of stdin (capped at max,
 * read into input, which the caller resets) when arg is "-". */
knut_status knut_cli_query_text(const char *arg, knut_buf *input, size_t max, const char *what,
                                const char **out, knut_error *err);

/* Finds a subcommand by name; NULL if unknown. */
const knut_cli_cmd *knut_cli_find(const char *name);
/* Prints a command's usage text to f. */
void knut_cli_usage(FILE *f, const knut_cli_cmd *cmd);
/* True if argv has -h or --help before a "--". */
int knut_cli_wants_help(int argc, char **argv);
/* Sets up logging from KNUT_LOG / KNUT_LOG_FORMAT (json|human) for the CLI. */
void knut_cli_log_setup(void);

/* Subcommands. */
int knut_cmd_sync(int argc, char **argv);
extern const char knut_cmd_sync_usage[];
int knut_cmd_query(int argc, char **argv);
extern const char knut_cmd_query_usage[];
int knut_cmd_gar(int argc, char **argv);
extern const char knut_cmd_gar_usage[];
/* knut gar sub-commands (argv[0] is the sub-command name). */
int knut_cmd_gar_info(int argc, char **argv);
extern const char knut_cmd_gar_info_usage[];
int knut_cmd_gar_cat(int argc, char **argv);
extern const char knut_cmd_gar_cat_usage[];
int knut_cmd_gar_validate(int argc, char **argv);
extern const char knut_cmd_gar_validate_usage[];
int knut_cmd_gar_import(int argc, char **argv);
extern const char knut_cmd_gar_import_usage[];
int knut_cmd_graph(int argc, char **argv);
extern const char knut_cmd_graph_usage[];
/* knut graph sub-commands (argv[0] is the sub-command name). */
int knut_cmd_graph_query(int argc, char **argv);
extern const char knut_cmd_graph_query_usage[];
int knut_cmd_graph_export(int argc, char **argv);
extern const char knut_cmd_graph_export_usage[];
int knut_cmd_load(int argc, char **argv);
extern const char knut_cmd_load_usage[];

#endif
