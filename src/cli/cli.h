/*
 * The knut command line: one binary, git-style subcommands from a table.
 * Each subcommand lives in cmd_<name>.c and returns an exit code from the
 * one table in docs/cli.md: 0 ok, 1 a data or runtime failure, 2 a usage
 * or config error.
 */
#ifndef KNUT_CLI_H
#define KNUT_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "knut/core.h"

#define KNUT_EXIT_OK 0
#define KNUT_EXIT_FAIL 1  /* data or runtime: bad input file, SQL, peer, write */
#define KNUT_EXIT_USAGE 2 /* usage or config: options, arguments, the config file */

typedef int (*knut_cli_fn)(int argc, char **argv);

/* ---- options and arguments (args.c) -------------------------------------
 *
 * Each command describes its options in one table, which both parses argv
 * and writes the Options part of its help, so the two cannot drift apart.
 * Destinations are offsets into the command's own argument struct (made
 * with the KNUT_CLI_OPT_* macros, which check the member's type), so the
 * tables are static and `knut help NAME` needs no instance. Accepted:
 * --name VALUE, --name=VALUE, -n VALUE (a short alias), flags, "--" ending
 * the options, "-" as an argument (stdin), -h/--help anywhere before "--".
 * Abbreviations are not accepted (a new option would break scripts); an
 * unknown option gets a "did you mean" instead.
 */

typedef enum knut_cli_kind {
    KNUT_CLI_FLAG,   /* int: set to 1; takes no value */
    KNUT_CLI_STR,    /* const char *: the value; the last one given wins */
    KNUT_CLI_STRS,   /* knut_cli_strs: every value, in the order given */
    KNUT_CLI_INT,    /* int64_t: a whole number from min to max */
    KNUT_CLI_SECS,   /* double: seconds, more than 0 and at most max */
    KNUT_CLI_CHOICE, /* int: the index of the value in choices */
    KNUT_CLI_REFUSE  /* never accepted, help says why; not listed */
} knut_cli_kind;

/* Most values a repeatable option collects (argv strings, not copies). */
#define KNUT_CLI_STRS_MAX 256

typedef struct knut_cli_strs {
    char *v[KNUT_CLI_STRS_MAX]; /* writable: they are argv's strings */
    size_t n;
} knut_cli_strs;

typedef struct knut_cli_opt {
    const char *name;   /* long name without "--"; NULL ends a table */
    char alias;         /* short name ('f' for -f), or 0 */
    knut_cli_kind kind;
    size_t at;          /* offset of the destination in the argument struct */
    const char *metavar;  /* the value in the help ("FILE"); NULL for flags */
    const char *help;   /* wrapped to the terminal width; '\n' starts a line */
    int64_t min, max;   /* INT: the range; SECS: max seconds; STRS: most values */
    const char *const *choices; /* CHOICE: NULL-terminated */
} knut_cli_opt;

/* A positional argument, stored as const char * (NULL when absent). */
typedef struct knut_cli_arg {
    const char *name; /* "SQL", "PATH"; NULL ends the list */
    size_t at;
    int optional;     /* required ones come first */
    const char *const *choices; /* the values it may take (NULL-terminated); NULL: any */
} knut_cli_arg;

/* offsetof(T, m); a member of another type than `type` is a compile-time
 * diagnostic (comparison of distinct pointer types; an error with -Werror). */
#define KNUT_CLI_AT(T, m, type) (offsetof(T, m) + 0 * sizeof((type *)0 == &((T *)0)->m))

#define KNUT_CLI_OPT_FLAG(name, alias, T, m, help) \
    {name, alias, KNUT_CLI_FLAG, KNUT_CLI_AT(T, m, int), NULL, help, 0, 0, NULL}
#define KNUT_CLI_OPT_STR(name, alias, T, m, metavar, help) \
    {name, alias, KNUT_CLI_STR, KNUT_CLI_AT(T, m, const char *), metavar, help, 0, 0, NULL}
/* most: how many values at most (<= KNUT_CLI_STRS_MAX). */
#define KNUT_CLI_OPT_STRS(name, alias, T, m, metavar, most, help) \
    {name, alias, KNUT_CLI_STRS, KNUT_CLI_AT(T, m, knut_cli_strs), metavar, help, 0, most, NULL}
#define KNUT_CLI_OPT_INT(name, alias, T, m, metavar, lo, hi, help) \
    {name, alias, KNUT_CLI_INT, KNUT_CLI_AT(T, m, int64_t), metavar, help, lo, hi, NULL}
#define KNUT_CLI_OPT_SECS(name, T, m, hi, help) \
    {name, 0, KNUT_CLI_SECS, KNUT_CLI_AT(T, m, double), "SEC", help, 0, hi, NULL}
#define KNUT_CLI_OPT_CHOICE(name, alias, T, m, metavar, choices, help) \
    {name, alias, KNUT_CLI_CHOICE, KNUT_CLI_AT(T, m, int), metavar, help, 0, 0, choices}
#define KNUT_CLI_OPT_REFUSE(name, why) {name, 0, KNUT_CLI_REFUSE, 0, NULL, why, 0, 0, NULL}
#define KNUT_CLI_OPT_END {NULL, 0, KNUT_CLI_FLAG, 0, NULL, NULL, 0, 0, NULL}
#define KNUT_CLI_ARG(name, T, m) {name, KNUT_CLI_AT(T, m, const char *), 0, NULL}
#define KNUT_CLI_ARG_OPT(name, T, m) {name, KNUT_CLI_AT(T, m, const char *), 1, NULL}
#define KNUT_CLI_ARG_CHOICE(name, T, m, choices) \
    {name, KNUT_CLI_AT(T, m, const char *), 0, choices}
#define KNUT_CLI_ARG_END {NULL, 0, 0, NULL}

/* A command's arguments and help. The help is synopsis, about, "Options:"
 * (from opts, then -h/--help), epilog; each text ends in a newline. */
typedef struct knut_cli_spec {
    const char *name;      /* "query", "gar cat": errors read "knut NAME: ..." */
    const char *synopsis;  /* the "usage: ..." lines, naming every option */
    const char *about;     /* what the command does (may be NULL) */
    const knut_cli_opt *opts;  /* ends with KNUT_CLI_OPT_END; NULL: none */
    const knut_cli_arg *args;  /* ends with KNUT_CLI_ARG_END; NULL: none */
    const char *epilog;    /* examples, exit status (may be NULL) */
    const char *more_hint; /* added to the error for one argument too many */
    int col;               /* column of the option help texts; 0: 21 */
    /* A form of a command that shares its table (`sync status` takes some
     * of `sync`'s options): the space-separated names of the options it
     * takes (NULL: all), and of those it does not (NULL: none). Another
     * option of the table is refused naming the command. */
    const char *only, *omit;
    /* The forms a command parses itself (`knut sync status`), for
     * `knut help sync status`; NULL-terminated, NULL: none. Their names
     * are "NAME SUB". */
    const struct knut_cli_spec *const *subs;
    /* A form's one line (its NAME in `knut man`, its entry in the parent's
     * COMMANDS); a command's or a sub-command's is in its table entry. */
    const char *summary;
} knut_cli_spec;

/* knut_cli_args_parse: go on and run the command (else it is the exit code). */
#define KNUT_CLI_RUN (-1)

/*
 * Parses argv[1..] (argv[0] is the command's name) into args, whose
 * defaults the caller set. Returns KNUT_CLI_RUN, or the exit code after
 * printing: KNUT_EXIT_OK after the help (to out), KNUT_EXIT_USAGE after a
 * usage error naming the option (to err).
 */
int knut_cli_args_parse_to(const knut_cli_spec *spec, int argc, char **argv, void *args,
                           FILE *out, FILE *err);
/* The same, to stdout and stderr. */
int knut_cli_args_parse(const knut_cli_spec *spec, int argc, char **argv, void *args);
/* Writes the command's full help to f. */
void knut_cli_args_usage(FILE *f, const knut_cli_spec *spec);
/* 1 if spec's help lists o (o is in its table, taken by this form and not
 * a refusal): what `knut completion` and `knut man` show for it too. */
int knut_cli_args_listed(const knut_cli_spec *spec, const knut_cli_opt *o);
/* A usage error found after parsing (options that need each other, ...):
 * one line "knut NAME: message; see 'knut NAME --help'" on stderr;
 * returns KNUT_EXIT_USAGE. Every usage error reads this way. */
int knut_cli_args_error(const knut_cli_spec *spec, const char *fmt, ...) KNUT_PRINTF(2, 3);
/* A required option or argument not given: "missing WHAT" ("--config
 * FILE"), as knut_cli_args_error. */
int knut_cli_args_missing(const knut_cli_spec *spec, const char *what);

/* A sub-command of a command group (`knut gar info`, `knut graph query`). */
typedef struct knut_cli_sub {
    const char *name;
    knut_cli_fn run;
    const char *summary;
    const knut_cli_spec *spec; /* the table its run parses with (completion, man) */
} knut_cli_sub;

/* A command group: its sub-commands, terminated by a NULL name. */
typedef struct knut_cli_group {
    const char *name;  /* "gar" */
    const char *about; /* one line describing it */
    const knut_cli_sub *subs;
} knut_cli_group;

typedef struct knut_cli_cmd {
    const char *name;
    knut_cli_fn run;
    const char *summary;        /* one line for `knut help` */
    const knut_cli_spec *spec;  /* its help; NULL for a group, whose
                                 * `NAME --help` lists its sub-commands */
    const knut_cli_group *group; /* a group's sub-commands; NULL for a command */
} knut_cli_cmd;

/*
 * Runs argv[1] from g's sub-commands with argv shifted by one, after
 * handling `help [NAME]`, -h/--help and unknown names (each sub-command
 * parses its own --help).
 */
int knut_cli_dispatch(const knut_cli_group *g, int argc, char **argv);

/* A config file (src/cli/config.c): 0 if path can be opened for reading
 * and is not a directory, else prints "knut CMD: PATH: cannot read the
 * config: why" and returns KNUT_EXIT_USAGE. */
int knut_cli_config_check(const char *cmd, const char *path);
/* The exit code after a config file's loader refused it with st:
 * KNUT_EXIT_USAGE (a config error), KNUT_EXIT_FAIL for out of memory. */
int knut_cli_config_exit(knut_status st);

/* Reads all of stdin into b (capped by b->max); what names the text in
 * errors ("SQL", "Cypher"). Empty input is an error. */
knut_status knut_cli_read_stdin(knut_buf *b, const char *what, knut_error *err);

/* `knut load --mapping`: every file of every table of a sync config, in
 * rounds until none is left (src/cli/cmd_load_tables.c). Returns an exit code. */
int knut_cli_load_mapping(const char *mapping, const char *url, const char *password,
                          const char *graph, const char *db, int no_bulk, int quiet);

/* The query text of a command: arg itself, or all of stdin (capped at max,
 * read into input, which the caller resets) when arg is "-". */
knut_status knut_cli_query_text(const char *arg, knut_buf *input, size_t max, const char *what,
                                const char **out, knut_error *err);

/* A peer's password (src/cli/secret.c): the one line of file (read
 * under a 4 KiB cap, its newline trimmed, the copy read wiped), else
 * $env (env NULL: none), else *out NULL. *out is freed with
 * knut_net_secret_free. Returns 0, or -1 after printing "knut CMD: OPT
 * FILE: why" (never the content). */
int knut_cli_secret_read(const char *cmd, const char *opt, const char *file, const char *env,
                         char **out);
/* 1 if the redis:// url holds a password (0 for a malformed one). */
int knut_cli_url_password(const char *url);
/* A peer's password for command cmd: from file (option fopt), else $env;
 * a password also in the URL (option opt) is refused, and a URL given on
 * the command line (not url_from_env) with a password in it is warned
 * about (it shows in `ps`). Returns 0 (*out NULL: none but the URL's) or
 * -1 after printing why. */
int knut_cli_peer_password(const char *cmd, const char *opt, const char *fopt, const char *url,
                           int url_from_env, const char *file, const char *env, char **out);

/* ---- the progress line on a terminal (progress.c) ---- */
typedef struct knut_cli_progress {
    int64_t last_ns; /* the last draw (knut_clock_mono_ns); 0: none yet */
} knut_cli_progress;
typedef struct knut_cli_progress_line {
    const char *prefix; /* before the bar ("round 3: "), or NULL */
    int64_t done;       /* in unit */
    int64_t total;      /* in unit; 0: unknown (no bar, no ETA) */
    const char *unit;   /* "rows", "files" */
    int64_t rows;       /* rows so far (the rate); -1 when unit is rows */
    double secs;        /* since the work began */
    const char *what;   /* after the numbers (a set, a table), or NULL */
} knut_cli_progress_line;
/* Redraws the line on stderr, at most every 100 ms unless force. */
void knut_cli_progress_draw(knut_cli_progress *p, const knut_cli_progress_line *l, int force);
/* Ends the line shown, if any: kept (a newline) or cleared. */
void knut_cli_progress_end(knut_cli_progress *p, int keep);
/* A log sink (human format, ctx unused) that clears the line first. */
void knut_cli_progress_log(const knut_log_record *rec, void *ctx);

/* ---- knut sync status and the live loop (sync_status.c, sync_live.c) ---- */
struct knut_sync;
/* Prints the status of s (text, or --json: one document); returns the
 * exit code: 1 when a file has failed, else 0. */
int knut_cli_sync_status_print(struct knut_sync *s, int json);
struct knut_sync_config;
struct knut_sync_options;
struct knut_sync_progress;
/* The sync's logging (info unless KNUT_LOG); 1 when the progress line can
 * be drawn (stderr a terminal, human format). */
int knut_cli_sync_log_setup(void);
typedef struct knut_cli_sync_live {
    const char *config;             /* the config file, read again on SIGHUP */
    struct knut_sync_config *cfg;   /* the config in use (owned: free it at the end) */
    const struct knut_sync_options *so; /* the open's options (reload needs them) */
    knut_cli_progress bar;
    int64_t after_ns;               /* a round shows progress once it ran this long */
} knut_cli_sync_live;
void knut_cli_sync_live_init(knut_cli_sync_live *l, const char *config,
                             struct knut_sync_config *cfg, const struct knut_sync_options *so);
/* knut_sync_progress_fn, knut_signal_watch_fn and the run loop's reload
 * callback; ctx is the knut_cli_sync_live (unused by on_signal). */
void knut_cli_sync_progress(const struct knut_sync_progress *p, void *ctx);
void knut_cli_sync_on_signal(int sig, void *ctx);
void knut_cli_sync_reload(struct knut_sync *s, void *ctx);

/* Finds a subcommand by name; NULL if unknown. */
const knut_cli_cmd *knut_cli_find(const char *name);
/* The table of subcommands `knut help` lists, n of them (main.c). */
const knut_cli_cmd *knut_cli_commands(size_t *n);

/* ---- the command tree, for completion and man pages (tree.c) ---- */
/* One command as a user types it: a command, a group, a group's
 * sub-command or a form a command parses itself (`sync status`). */
typedef struct knut_cli_node {
    const char *path;           /* "sync", "gar", "gar info", "sync status" */
    const char *summary;        /* one line */
    const knut_cli_spec *spec;  /* NULL for a group */
    const knut_cli_group *group; /* a group's sub-commands, else NULL */
} knut_cli_node;
typedef void (*knut_cli_node_fn)(const knut_cli_node *node, void *ctx);
/* Calls fn for every node, each before the ones under it, in help order. */
void knut_cli_tree_walk(knut_cli_node_fn fn, void *ctx);
/* The words that may follow node's path (sub-commands or forms), one by
 * one into fn(word, summary, ctx). */
void knut_cli_tree_children(const knut_cli_node *node,
                            void (*fn)(const char *word, const char *summary, void *ctx),
                            void *ctx);
/* What a value named metavar is, for completion: 'f' a file, 'd' a
 * folder, 0 anything else (a URL, a number, SQL). */
char knut_cli_tree_value_kind(const char *metavar);
/* Sets up logging from KNUT_LOG / KNUT_LOG_FORMAT (json|human) for the CLI. */
void knut_cli_log_setup(void);

/* Subcommands. */
int knut_cmd_sync(int argc, char **argv);
extern const knut_cli_spec knut_cmd_sync_spec;
int knut_cmd_serve(int argc, char **argv);
/* `knut serve --self-test` against url (cmd_serve_selftest.c); tls for
 * grpc+tls:// (NULL: the system roots). Returns the exit code. */
struct knut_net_grpc_tls;
int knut_cli_serve_self_test(const char *url, const struct knut_net_grpc_tls *tls);
extern const knut_cli_spec knut_cmd_serve_spec;
int knut_cmd_query(int argc, char **argv);
extern const knut_cli_spec knut_cmd_query_spec;
int knut_cmd_export(int argc, char **argv);
extern const knut_cli_spec knut_cmd_export_spec;
int knut_cmd_gar(int argc, char **argv);
extern const knut_cli_group knut_cmd_gar_group;
/* knut gar sub-commands (argv[0] is the sub-command name). */
int knut_cmd_gar_info(int argc, char **argv);
int knut_cmd_gar_cat(int argc, char **argv);
int knut_cmd_gar_validate(int argc, char **argv);
int knut_cmd_gar_import(int argc, char **argv);
extern const knut_cli_spec knut_cmd_gar_info_spec, knut_cmd_gar_cat_spec,
    knut_cmd_gar_validate_spec, knut_cmd_gar_import_spec;
int knut_cmd_iceberg(int argc, char **argv);
extern const knut_cli_group knut_cmd_iceberg_group;
/* knut iceberg sub-commands (argv[0] is the sub-command name). */
int knut_cmd_iceberg_cat(int argc, char **argv);
int knut_cmd_iceberg_changes(int argc, char **argv);
extern const knut_cli_spec knut_cmd_iceberg_cat_spec, knut_cmd_iceberg_changes_spec;
/* Loads the table TABLE names: a folder or metadata file, or with catalog
 * (a SQLite file) an identifier in it (cmd_iceberg.c). */
/* The options naming a table's catalog, for a struct T with members
 * catalog and catalog_name (what knut_cli_iceberg_open takes). */
#define KNUT_CLI_ICEBERG_TABLE_OPTS(T)                                                    \
    KNUT_CLI_OPT_STR("catalog", 'c', T, catalog, "FILE",                                    \
                     "a SQLite catalog (pyiceberg's SqlCatalog, table iceberg_tables);\n"   \
                     "TABLE is then NAMESPACE.NAME"),                                       \
    KNUT_CLI_OPT_STR("catalog-name", 0, T, catalog_name, "NAME",                            \
                     "the catalog_name rows to look in (default: default)")
struct knut_iceberg_table;
knut_status knut_cli_iceberg_open(const char *table, const char *catalog,
                                  const char *catalog_name, struct knut_iceberg_table **out,
                                  knut_error *err);
int knut_cmd_graph(int argc, char **argv);
extern const knut_cli_group knut_cmd_graph_group;
/* knut graph sub-commands (argv[0] is the sub-command name). */
int knut_cmd_graph_query(int argc, char **argv);
int knut_cmd_graph_export(int argc, char **argv);
extern const knut_cli_spec knut_cmd_graph_query_spec, knut_cmd_graph_export_spec;
int knut_cmd_load(int argc, char **argv);
int knut_cmd_pipeline(int argc, char **argv);
extern const knut_cli_group knut_cmd_pipeline_group;
/* Loads and resolves the pipeline SPEC (a file or a folder with
 * pipeline.yml) as `knut pipeline show` does, printing any error as
 * "knut CMD: ..."; 0 or the exit code. */
struct knut_pipeline;
int knut_cli_pipeline_load(const char *cmd, const char *spec, struct knut_pipeline **out);
int knut_cmd_web(int argc, char **argv);
extern const struct knut_cli_spec knut_cmd_web_spec;
/* knut pipeline sub-commands (argv[0] is the sub-command name). */
int knut_cmd_pipeline_init(int argc, char **argv);
extern const knut_cli_spec knut_cmd_pipeline_init_spec;
int knut_cmd_pipeline_validate(int argc, char **argv);
int knut_cmd_pipeline_show(int argc, char **argv);
int knut_cmd_pipeline_run(int argc, char **argv);
int knut_cmd_spark(int argc, char **argv);
extern const knut_cli_group knut_cmd_spark_group;
int knut_cmd_watch(int argc, char **argv);
extern const knut_cli_spec knut_cmd_watch_spec;
extern const knut_cli_spec knut_cmd_load_spec;
/* `knut completion bash|zsh` and `knut man` (cmd_completion.c, cmd_man.c):
 * generated from the tables above, never from a copy of them. */
int knut_cmd_completion(int argc, char **argv);
extern const knut_cli_spec knut_cmd_completion_spec;
int knut_cmd_man(int argc, char **argv);
extern const knut_cli_spec knut_cmd_man_spec;

#endif
