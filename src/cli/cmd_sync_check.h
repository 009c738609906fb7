/*
 * `knut sync check` and `knut sync --dry-run` (cmd_sync_check.c), shared
 * with cmd_sync.c.
 */
#ifndef KNUT_CLI_CMD_SYNC_CHECK_H
#define KNUT_CLI_CMD_SYNC_CHECK_H

#include "cli.h"

/* What the check needs of the command line; the secrets already read. */
typedef struct knut_cli_sync_check {
    const char *config, *store, *falkordb, *graph, *ledger, *ledger_url;
    const char *falkordb_password; /* a secret: never printed */
    int json;
} knut_cli_sync_check;

/* Loads the config and checks it (knut_sync_check), printing one line
 * per problem on stdout. Returns the exit code: 0 clean, 1 problems, 2 a
 * config that does not load. */
int knut_cli_sync_check_run(const knut_cli_sync_check *a);

/* `knut sync check ...` (argv[0] is "check"). */
int knut_cmd_sync_check(int argc, char **argv);

/* Its help, for `knut help sync check` (cmd_sync.c lists it among the forms). */
extern const knut_cli_spec knut_cmd_sync_check_spec;

#endif
