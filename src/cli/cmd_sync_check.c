/*
 * `knut sync check` (and `knut sync --dry-run`, the same): loads the
 * mapping config and runs knut_sync_check for the chosen sink, printing
 * one line per problem. Nothing is written: not the store, not the
 * ledger, not the graph.
 */
#include "cmd_sync_check.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "knut/net.h"
#include "knut/sync.h"

typedef struct check_args {
    const char *config, *store, *falkordb, *graph, *ledger, *ledger_url;
    const char *falkordb_password_file;
    int json;
    int falkordb_env;
} check_args;

static const knut_cli_opt check_opts[] = {
    KNUT_CLI_OPT_STR("config", 0, check_args, config, "FILE", "the mapping config (sync.yml)"),
    KNUT_CLI_OPT_STR("store", 0, check_args, store, "FILE",
                     "check for the embedded store FILE (default: 'store:' of the config)"),
    KNUT_CLI_OPT_STR("falkordb", 0, check_args, falkordb, "URL",
                     "check for FalkorDB at redis://[user@]host[:port] (default: "
                     "$KNUT_FALKORDB_URL): its type rules, the server answering, the ledger "
                     "file"),
    KNUT_CLI_OPT_STR("falkordb-password-file", 0, check_args, falkordb_password_file, "FILE",
                     "file holding FalkorDB's password (one line); else "
                     "$KNUT_FALKORDB_PASSWORD"),
    KNUT_CLI_OPT_STR("graph", 0, check_args, graph, "NAME", "FalkorDB graph name (default: knut)"),
    KNUT_CLI_OPT_STR("ledger", 0, check_args, ledger, "FILE",
                     "FalkorDB ledger file to check (default: 'ledger:' of the config, else "
                     "CONFIG.ledger.json)"),
    KNUT_CLI_OPT_STR("ledger-url", 0, check_args, ledger_url, "URL",
                     "a shared ledger in Valkey/Redis (then no ledger file is checked)"),
    KNUT_CLI_OPT_FLAG("json", 0, check_args, json,
                      "one JSON object per problem: kind, table, file, column, message"),
    KNUT_CLI_OPT_END,
};

const knut_cli_spec knut_cmd_sync_check_spec = {
    .name = "sync check",
    .summary = "check a sync config against its files and the sink, writing nothing",
    .synopsis = "usage: knut sync check --config FILE [--store FILE | --falkordb URL\n"
                "                       [--falkordb-password-file FILE] [--graph NAME]\n"
                "                       [--ledger FILE] [--ledger-url URL]] [--json]\n"
                "       knut sync --dry-run --config FILE [the sync's options]\n",
    .about =
        "Checks a sync config against its files and the chosen sink, and writes\n"
        "nothing (docs/sync.md \"Checking a config\"): every table's path matches\n"
        "files of its format; the first file of each table is read (declared types,\n"
        "the sql step), every mapped column present with a type the sink can store;\n"
        "labels that edges use are written by some table, and merged on the same\n"
        "keys everywhere; the store or the ledger file can be written; the FalkorDB\n"
        "server answers. An unknown config key is reported with its position and the\n"
        "nearest known key.\n",
    .opts = check_opts,
    .epilog = "Prints one line per problem: KIND: table, file, column and what is wrong.\n"
              "\n"
              "Exit codes: 0 no problem, 1 problems found, 2 usage or a config that does\n"
              "not load.\n"
              "\n"
              "Example:\n"
              "  knut sync check --config examples/lakehouse/sync.yml --store demo/graph.duckdb\n",
};

static void json_str(knut_buf *b, const char *key, const char *v)
{
    knut_buf_printf(b, ",\"%s\":", key);
    if (v)
        knut_buf_put_json_str(b, v, strlen(v));
    else
        knut_buf_puts(b, "null");
}

static void print_problem(const knut_sync_problem *p, void *ctx)
{
    const knut_cli_sync_check *a = ctx;
    if (!a->json) {
        printf("%s: %s\n", p->kind, p->message);
        return;
    }
    knut_buf b = KNUT_BUF_INIT;
    knut_buf_puts(&b, "{\"kind\":");
    knut_buf_put_json_str(&b, p->kind, strlen(p->kind));
    json_str(&b, "table", p->table);
    json_str(&b, "file", p->file);
    json_str(&b, "column", p->column);
    json_str(&b, "message", p->message);
    knut_buf_puts(&b, "}\n");
    if (b.data)
        fputs(b.data, stdout);
    knut_buf_reset(&b);
}

int knut_cli_sync_check_run(const knut_cli_sync_check *a)
{
    knut_error err = KNUT_ERROR_INIT;
    knut_sync_config *cfg = NULL;
    int rc = KNUT_EXIT_FAIL;
    if (!getenv("KNUT_LOG")) /* the problems are the output; the log only warns */
        knut_log_set(KNUT_LOG_WARN, knut_log_sink_human, stderr);
    knut_status st = knut_sync_config_load(&cfg, a->config, &err);
    if (st != KNUT_OK) {
        fprintf(stderr, "knut sync check: %s\n", err.message);
        /* a config that does not load is the user's to fix: a usage error */
        return st == KNUT_ENOMEM ? KNUT_EXIT_FAIL : KNUT_EXIT_USAGE;
    }
    knut_sync_options so = KNUT_SYNC_OPTIONS_INIT;
    so.store = a->store;
    so.falkordb_url = a->falkordb;
    so.graph = a->graph;
    so.ledger = a->ledger;
    so.ledger_url = a->ledger_url;
    so.falkordb_password = a->falkordb_password;
    int64_t n = 0;
    st = knut_sync_check(cfg, &so, print_problem, (void *)a, &n, &err);
    if (st != KNUT_OK) {
        fprintf(stderr, "knut sync check: %s\n", err.message);
    } else if (n > 0) {
        fprintf(stderr, "knut sync check: %s: %lld problem%s\n", a->config, (long long)n,
                n == 1 ? "" : "s");
    } else {
        fprintf(stderr, "knut sync check: %s: ok (%zu table%s)\n", a->config, cfg->n_tables,
                cfg->n_tables == 1 ? "" : "s");
        rc = KNUT_EXIT_OK;
    }
    knut_sync_config_free(cfg);
    return rc;
}

int knut_cmd_sync_check(int argc, char **argv)
{
    check_args a = {0};
    int rc = knut_cli_args_parse(&knut_cmd_sync_check_spec, argc, argv, &a);
    if (rc != KNUT_CLI_RUN)
        return rc;
    const char *e;
    if (!a.falkordb && !a.store && (e = getenv("KNUT_FALKORDB_URL")) && *e) {
        a.falkordb = e;
        a.falkordb_env = 1;
    }
    if (!a.config)
        return knut_cli_args_error(&knut_cmd_sync_check_spec, "%s", "--config FILE is required");
    if (a.store && a.falkordb)
        return knut_cli_args_error(&knut_cmd_sync_check_spec, "%s",
                                   "--store and --falkordb exclude each other");
    if ((a.graph || a.ledger || a.ledger_url || a.falkordb_password_file) && !a.falkordb)
        return knut_cli_args_error(&knut_cmd_sync_check_spec, "%s",
                                   "--graph/--ledger/--ledger-url/--falkordb-password-file "
                                   "need --falkordb");
    char *pw = NULL;
    if (a.falkordb &&
        knut_cli_peer_password("sync check", "--falkordb", "--falkordb-password-file",
                               a.falkordb, a.falkordb_env, a.falkordb_password_file,
                               "KNUT_FALKORDB_PASSWORD", &pw) != 0)
        return KNUT_EXIT_USAGE;
    knut_cli_sync_check c = {.config = a.config,
                             .store = a.store,
                             .falkordb = a.falkordb,
                             .graph = a.graph,
                             .ledger = a.ledger,
                             .ledger_url = a.ledger_url,
                             .falkordb_password = pw,
                             .json = a.json};
    rc = knut_cli_sync_check_run(&c);
    knut_net_secret_free(pw);
    return rc;
}
