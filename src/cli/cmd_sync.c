/*
 * `knut sync` (the main job), `knut sync status` and `knut sync retry`:
 * loads the mapping config, opens the sink + ledger through the sync part,
 * installs the SIGINT/SIGTERM handlers and runs the round loop (or one
 * round), or prints the ledger's view of every table, or re-queues (skips)
 * failed files in the ledger.
 */
#include "cli.h"
#include "cmd_sync_check.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "knut/net.h"
#include "knut/sync.h"

typedef struct sync_args {
    const char *config, *store, *falkordb, *graph, *ledger;
    const char *airflow_url, *airflow_user, *airflow_password_file;
    const char *lineage_url, *lineage_file, *lineage_endpoint, *lineage_api_key_file;
    const char *lineage_namespace;
    const char *falkordb_password_file, *ledger_password_file;
    int once, json, status, no_bulk;
    int dry_run;                        /* knut sync check's checks, nothing run */
    int retry, skip;                    /* knut sync retry */
    const char *retry_table, *retry_file;
    double interval, max_backoff;
    const char *ledger_url, *instance; /* shared ledger */
    const char *metrics_addr, *metrics_file;
    const char *memory_limit;
    int64_t txn_rows;
    double lease;
    double airflow_drain, lineage_drain;
    double falkordb_timeout;
    int falkordb_env, ledger_env; /* the URL came from $KNUT_..._URL */
} sync_args;

/* The peers' passwords when not in their URLs; each NULL if none. */
typedef struct sync_secrets {
    char *falkordb, *ledger, *airflow, *lineage;
} sync_secrets;

/* The longest wait any SEC option takes: a year. */
#define SYNC_SECS_MAX (86400 * 365)

static const knut_cli_opt sync_opts[] = {
    KNUT_CLI_OPT_STR("config", 0, sync_args, config, "FILE", "the mapping config (sync.yml)"),
    KNUT_CLI_OPT_STR("store", 0, sync_args, store, "FILE",
                     "embedded graph store (DuckDB file); default: 'store:' of the config"),
    KNUT_CLI_OPT_STR("falkordb", 0, sync_args, falkordb, "URL",
                     "sink to FalkorDB at redis://[user@]host[:port] (default: "
                     "$KNUT_FALKORDB_URL); a password here is visible to every local user "
                     "(a warning says so): use --falkordb-password-file"),
    KNUT_CLI_OPT_STR("falkordb-password-file", 0, sync_args, falkordb_password_file, "FILE",
                     "file holding FalkorDB's password (one line); else "
                     "$KNUT_FALKORDB_PASSWORD"),
    KNUT_CLI_OPT_STR("graph", 0, sync_args, graph, "NAME", "FalkorDB graph name (default: knut)"),
    KNUT_CLI_OPT_SECS("falkordb-timeout", sync_args, falkordb_timeout, SYNC_SECS_MAX,
                      "longest wait for one FalkorDB read or write (default 300): a hung "
                      "server fails the round (and backoff retries) instead of holding it"),
    KNUT_CLI_OPT_STR("ledger", 0, sync_args, ledger, "FILE",
                     "FalkorDB ledger file (default: 'ledger:' of the config, else "
                     "CONFIG.ledger.json); 'falkordb': the ledger lives in the FalkorDB "
                     "server and commits with the graph in one transaction, exactly once "
                     "(docs/sync.md \"Exactly once into FalkorDB\")"),
    KNUT_CLI_OPT_STR("ledger-url", 0, sync_args, ledger_url, "URL",
                     "shared ledger in Valkey/Redis at redis://[user@]host[:port] (default: "
                     "$KNUT_LEDGER_URL), so several instances (each with --falkordb) share the "
                     "tables: a table is worked on only under its lease (keys "
                     "knut:sync:<name>:..., so the config needs 'name:'); a table another "
                     "instance holds is skipped this round (docs/operations.md); naming the "
                     "FalkorDB server itself is the same as '--ledger falkordb'. Not with the "
                     "embedded store (single-process)"),
    KNUT_CLI_OPT_STR("ledger-password-file", 0, sync_args, ledger_password_file, "FILE",
                     "file holding the ledger Valkey's password (one line); else "
                     "$KNUT_LEDGER_PASSWORD"),
    KNUT_CLI_OPT_STR("instance", 0, sync_args, instance, "ID",
                     "this instance's lease owner id, unique per instance (default "
                     "hostname:pid)"),
    KNUT_CLI_OPT_SECS("lease", sync_args, lease, SYNC_SECS_MAX,
                      "lease time to live, renewed every third of it while a table is worked "
                      "on (default 30, at least 0.1); a crashed instance's tables pass to "
                      "another after at most this long"),
    KNUT_CLI_OPT_FLAG("no-bulk", 0, sync_args, no_bulk,
                      "FalkorDB: never build a new graph with GRAPH.BULK; the first round "
                      "upserts with batched MERGE like every other (docs/sync.md "
                      "\"First round at bulk speed\")"),
    KNUT_CLI_OPT_FLAG("dry-run", 0, sync_args, dry_run,
                      "run no round: check the config against its files and the sink, "
                      "write nothing (as knut sync check; exit 0 clean, 1 problems)"),
    KNUT_CLI_OPT_FLAG("once", 0, sync_args, once,
                      "run one round and exit: 0 if it had no errors, 1 if a file or table "
                      "failed"),
    KNUT_CLI_OPT_SECS("interval", sync_args, interval, SYNC_SECS_MAX,
                      "wait between rounds (default 10; inotify wakes it early)"),
    KNUT_CLI_OPT_SECS("max-backoff", sync_args, max_backoff, SYNC_SECS_MAX,
                      "longest wait after rounds without progress (default 10x interval)"),
    KNUT_CLI_OPT_STR("memory-limit", 0, sync_args, memory_limit, "SIZE",
                     "embedded store: its DuckDB memory limit while syncing (default 256MB; "
                     "past it a large file's apply spills to STORE.tmp); it bounds reading "
                     "the files too (one engine)"),
    KNUT_CLI_OPT_INT("txn-rows", 0, sync_args, txn_rows, "N", 1, INT64_MAX,
                     "embedded store: a table's rows in one round above N are upserted in "
                     "several transactions of about N rows (default 1000000), the ledger in "
                     "the last: memory stays bounded (docs/sync.md, \"Memory\")"),
    KNUT_CLI_OPT_STR("airflow-url", 0, sync_args, airflow_url, "URL",
                     "after each round, one Airflow asset event per table that synced files "
                     "(Airflow 3 API server, e.g. http://host:8080; Airflow 2.9+ works too). "
                     "Sent in the background: Airflow being down never fails or slows a round "
                     "(docs/operations.md)"),
    KNUT_CLI_OPT_STR("airflow-user", 0, sync_args, airflow_user, "USER",
                     "Airflow user (role op or admin)"),
    KNUT_CLI_OPT_STR("airflow-password-file", 0, sync_args, airflow_password_file, "FILE",
                     "file holding the password (one line); else the environment variable "
                     "KNUT_AIRFLOW_PASSWORD. Never on the command line: other users can read "
                     "it there"),
    KNUT_CLI_OPT_REFUSE("airflow-password", "no password on the command line: set "
                                            "KNUT_AIRFLOW_PASSWORD or use "
                                            "--airflow-password-file"),
    KNUT_CLI_OPT_SECS("airflow-drain", sync_args, airflow_drain, SYNC_SECS_MAX,
                      "at exit, time unsent asset events get before they are logged as "
                      "dropped (default 5)"),
    KNUT_CLI_OPT_STR("lineage-url", 0, sync_args, lineage_url, "URL",
                     "send OpenLineage run events (START, COMPLETE, FAIL) of each table turn "
                     "that read files to the consumer at URL (POST URL/api/v1/lineage; default: "
                     "$OPENLINEAGE_URL). In the background: a consumer being down never fails "
                     "or slows a round (docs/lineage.md)"),
    KNUT_CLI_OPT_STR("lineage-file", 0, sync_args, lineage_file, "FILE",
                     "append the OpenLineage events to FILE as JSON lines instead"),
    KNUT_CLI_OPT_STR("lineage-endpoint", 0, sync_args, lineage_endpoint, "PATH",
                     "the path under --lineage-url (default: $OPENLINEAGE_ENDPOINT, else "
                     "api/v1/lineage)"),
    KNUT_CLI_OPT_STR("lineage-api-key-file", 0, sync_args, lineage_api_key_file, "FILE",
                     "file holding the consumer's API key (one line, sent as a bearer token); "
                     "else $OPENLINEAGE_API_KEY"),
    KNUT_CLI_OPT_STR("lineage-namespace", 0, sync_args, lineage_namespace, "NS",
                     "the jobs' namespace (default: $OPENLINEAGE_NAMESPACE, else knut)"),
    KNUT_CLI_OPT_SECS("lineage-drain", sync_args, lineage_drain, SYNC_SECS_MAX,
                      "at exit, time unsent lineage events get before they are logged as "
                      "dropped (default 5)"),
    KNUT_CLI_OPT_STR("metrics-addr", 0, sync_args, metrics_addr, "IP:PORT",
                     "serve Prometheus metrics at http://IP:PORT/metrics while running (e.g. "
                     "127.0.0.1:9464; port 0: any free port, logged in the 'metrics server "
                     "listening' record). Bound exactly as given: 0.0.0.0 exposes it to the "
                     "network (docs/operations.md)"),
    KNUT_CLI_OPT_STR("metrics-file", 0, sync_args, metrics_file, "FILE",
                     "write the same metrics to FILE on exit (also after --once), atomically "
                     "(temp file, fsync, rename), e.g. for node_exporter's textfile "
                     "collector"),
    KNUT_CLI_OPT_FLAG("json", 0, sync_args, json,
                      "status: one JSON document (source, tables, files, failed); --dry-run: "
                      "one object per problem"),
    KNUT_CLI_OPT_STR("table", 0, sync_args, retry_table, "T",
                     "retry: only the failed files of table T"),
    KNUT_CLI_OPT_STR("file", 0, sync_args, retry_file, "F",
                     "retry: only the failed file F (its path as status prints it)"),
    KNUT_CLI_OPT_FLAG("skip", 0, sync_args, skip,
                      "retry: mark the files done without reading them (a cdc changelog then "
                      "goes on past them) instead of re-queuing them"),
    KNUT_CLI_OPT_END,
};

/* The options of `sync status` and `sync retry` (the rest are the loop's). */
#define SYNC_LEDGER_OPTS                                                                  \
    "config store falkordb falkordb-password-file falkordb-timeout graph ledger ledger-url " \
    "ledger-password-file"

static const knut_cli_spec sync_status_spec = {
    .name = "sync status",
    .summary = "print per table the done, failed and pending files (also while a sync runs)",
    .synopsis =
        "usage: knut sync status --config FILE\n"
        "                        [--store FILE | --falkordb URL [--graph NAME]\n"
        "                         [--falkordb-password-file FILE]\n"
        "                         [--falkordb-timeout SEC]]\n"
        "                        [--ledger FILE|falkordb]\n"
        "                        [--ledger-url URL [--ledger-password-file FILE]]\n"
        "                        [--json]\n",
    .about = "Says what it read, prints a line per table (done / failed / pending\n"
             "files, rows, last success, edges skipped), then each file once in its\n"
             "latest state: done (rows, round), failed (the reason) or pending (new or\n"
             "changed since recorded). It opens nothing for writing and works while a\n"
             "sync runs: with the embedded store it then reads the snapshot the sync\n"
             "writes beside it (STORE.status.json); a FalkorDB sync's ledger file is\n"
             "found from the config, without --falkordb.\n",
    .opts = sync_opts,
    .only = SYNC_LEDGER_OPTS " json",
    .epilog = "Exit codes: 0 ok, 1 a file has failed (or status could not be read), 2\n"
              "usage or config error (docs/cli.md).\n"
              "\n"
              "Example:\n"
              "  knut sync status --config examples/lakehouse/sync.yml --store demo/graph.duckdb\n",
};

static const knut_cli_spec sync_retry_spec = {
    .name = "sync retry",
    .summary = "re-queue failed files, or mark them done unread (--skip)",
    .synopsis =
        "usage: knut sync retry --config FILE\n"
        "                       [--store FILE | --falkordb URL [--graph NAME]\n"
        "                        [--falkordb-password-file FILE]\n"
        "                        [--falkordb-timeout SEC]]\n"
        "                       [--ledger FILE|falkordb]\n"
        "                       [--ledger-url URL [--ledger-password-file FILE]\n"
        "                        [--instance ID] [--lease SEC]]\n"
        "                       [--table T] [--file F] [--skip]\n",
    .about = "Re-queues failed files (the next round reads them again), or with --skip\n"
             "marks them done unread; it reads and writes the ledger only (a shared\n"
             "ledger's table under its lease).\n",
    .opts = sync_opts,
    .only = SYNC_LEDGER_OPTS " instance lease table file skip",
    .epilog = "Exit codes: 0 ok, 1 failure, 2 usage or config error (docs/cli.md).\n"
              "\n"
              "Example:\n"
              "  knut sync retry --config sync.yml --table people --file people/bad.csv\n",
};

static const knut_cli_spec *const sync_subs[] = {&knut_cmd_sync_check_spec, &sync_status_spec,
                                                  &sync_retry_spec, NULL};

const knut_cli_spec knut_cmd_sync_spec = {
    .name = "sync",
    .synopsis =
        "usage: knut sync --config FILE [--store FILE [--memory-limit SIZE] [--txn-rows N]\n"
        "                 | --falkordb URL [--graph NAME] [--falkordb-password-file FILE]\n"
        "                   [--falkordb-timeout SEC] [--no-bulk]]\n"
        "                 [--dry-run [--json]]\n"
        "                 [--once] [--interval SEC] [--max-backoff SEC]\n"
        "                 [--ledger FILE|falkordb]\n"
        "                 [--ledger-url URL [--ledger-password-file FILE]\n"
        "                  [--instance ID] [--lease SEC]]\n"
        "                 [--airflow-url URL --airflow-user USER\n"
        "                  [--airflow-password-file FILE] [--airflow-drain SEC]]\n"
        "                 [--lineage-url URL [--lineage-endpoint PATH]\n"
        "                  [--lineage-api-key-file FILE] | --lineage-file FILE]\n"
        "                 [--lineage-namespace NS] [--lineage-drain SEC]\n"
        "                 [--metrics-addr IP:PORT] [--metrics-file FILE]\n"
        "       knut sync check --config FILE [...]    (knut sync check --help)\n"
        "       knut sync status --config FILE [...]   (knut sync status --help)\n"
        "       knut sync retry --config FILE [...]    (knut sync retry --help)\n",
    .about =
        "Keeps a property graph in step with tables of Parquet/CSV drops, as mapped\n"
        "by the YAML config (docs/sync.md). Each round picks up each table's new or\n"
        "changed files (files still being written wait), maps them to vertices and\n"
        "edges and applies them together with the ledger of done files: inside the\n"
        "embedded store's transaction (default), or to FalkorDB with a local ledger\n"
        "file written after the server acknowledged. Bad files are recorded failed\n"
        "with the reason; the other files go on. Logs: one JSON record per table and\n"
        "per round on stderr (KNUT_LOG_FORMAT=json; level info unless KNUT_LOG).\n"
        "SIGINT/SIGTERM finish the current round (logged at once) and exit 0; a second\n"
        "one stops at once. SIGHUP reads the config again before the next round (a bad\n"
        "one is logged and the old one kept). On a terminal a long round shows a\n"
        "progress line (files, rows, rows/s).\n",
    .opts = sync_opts,
    .omit = "table file skip", /* retry's (--json: status and --dry-run) */
    .subs = sync_subs,
    .epilog =
        "check (or --dry-run) checks the config against its files and the sink and\n"
        "writes nothing; status lists, per table, the done files, the failed ones and\n"
        "the pending ones, also while a sync runs; retry re-queues failed files or skips them: see their own --help.\n"
        "\n"
        "Exit codes: 0 ok (also after SIGINT/SIGTERM), 1 failure (a file or table failed\n"
        "with --once), 2 usage or config error (docs/cli.md).\n"
        "\n"
        "Example:\n"
        "  knut sync --once --config examples/lakehouse/sync.yml --store demo/graph.duckdb\n"
        "  knut sync status --config examples/lakehouse/sync.yml --store demo/graph.duckdb\n",
};

/* Options that only mean something together; returns KNUT_CLI_RUN or 2. */
static int check_args(const knut_cli_spec *sp, const sync_args *a)
{
    if (!a->config)
        return knut_cli_args_missing(sp, "--config FILE");
    if ((a->airflow_user || a->airflow_password_file || a->airflow_drain > 0) && !a->airflow_url)
        return knut_cli_args_error(sp, "%s", "--airflow-user/--airflow-password-file/"
                                             "--airflow-drain need --airflow-url");
    if (a->lineage_url && a->lineage_file)
        return knut_cli_args_error(sp, "%s", "--lineage-url and --lineage-file exclude each other");
    if ((a->lineage_endpoint || a->lineage_api_key_file) && !a->lineage_url)
        return knut_cli_args_error(sp, "%s", "--lineage-endpoint/--lineage-api-key-file need "
                                             "--lineage-url (or OPENLINEAGE_URL)");
    if ((a->lineage_namespace || a->lineage_drain > 0) && !a->lineage_url && !a->lineage_file)
        return knut_cli_args_error(sp, "%s", "--lineage-namespace/--lineage-drain need "
                                             "--lineage-url or --lineage-file");
    if (a->airflow_url && !a->airflow_user)
        return knut_cli_args_error(sp, "%s", "--airflow-url needs --airflow-user");
    /* with --falkordb, `ledger: falkordb` shares too (checked by knut_sync_open) */
    if ((a->instance || a->lease > 0) && !a->ledger_url && !a->falkordb)
        return knut_cli_args_error(sp, "%s", "--instance/--lease need --ledger-url (or "
                                             "--falkordb with the ledger 'falkordb')");
    if (a->ledger_password_file && !a->ledger_url)
        return knut_cli_args_error(sp, "%s", "--ledger-password-file needs --ledger-url (or "
                                             "KNUT_LEDGER_URL)");
    if (a->falkordb_password_file && !a->falkordb)
        return knut_cli_args_error(sp, "%s", "--falkordb-password-file needs --falkordb (or "
                                             "KNUT_FALKORDB_URL)");
    if (a->store && a->falkordb)
        return knut_cli_args_error(sp, "%s", "--store and --falkordb exclude each other");
    return KNUT_CLI_RUN;
}

/* OPENLINEAGE_DISABLED=true turns the environment's OPENLINEAGE_URL off. */
static int lineage_disabled(void)
{
    const char *e = getenv("OPENLINEAGE_DISABLED");
    return e && (strcasecmp(e, "true") == 0 || strcmp(e, "1") == 0);
}

static int parse_args(int argc, char **argv, sync_args *a)
{
    const knut_cli_spec *sp = &knut_cmd_sync_spec;
    if (argc > 1 && (strcmp(argv[1], "status") == 0 || strcmp(argv[1], "retry") == 0)) {
        a->status = 1; /* both open the ledger only */
        a->retry = strcmp(argv[1], "retry") == 0;
        sp = a->retry ? &sync_retry_spec : &sync_status_spec;
        argc--; /* "status" becomes argv[0], the name the parser skips */
        argv++;
    }
    int rc = knut_cli_args_parse(sp, argc, argv, a);
    if (rc != KNUT_CLI_RUN)
        return rc;
    /* URLs from the environment, which other users cannot read (ps can) */
    const char *e;
    if (!a->falkordb && !a->store && (e = getenv("KNUT_FALKORDB_URL")) && *e) {
        a->falkordb = e;
        a->falkordb_env = 1;
    }
    if (!a->ledger_url && (e = getenv("KNUT_LEDGER_URL")) && *e) {
        a->ledger_url = e;
        a->ledger_env = 1;
    }
    /* OpenLineage's own variables, as its clients read them */
    if (!a->lineage_url && !a->lineage_file && (e = getenv("OPENLINEAGE_URL")) && *e &&
        !lineage_disabled())
        a->lineage_url = e;
    if (a->lineage_url && !a->lineage_endpoint && (e = getenv("OPENLINEAGE_ENDPOINT")) && *e)
        a->lineage_endpoint = e;
    if ((a->lineage_url || a->lineage_file) && !a->lineage_namespace &&
        (e = getenv("OPENLINEAGE_NAMESPACE")) && *e)
        a->lineage_namespace = e;
    return check_args(sp, a);
}

static int read_secrets(const sync_args *a, sync_secrets *p)
{
    if (a->falkordb &&
        knut_cli_peer_password("sync", "--falkordb", "--falkordb-password-file", a->falkordb,
                               a->falkordb_env, a->falkordb_password_file,
                               "KNUT_FALKORDB_PASSWORD", &p->falkordb) != 0)
        return -1;
    if (a->ledger_url &&
        knut_cli_peer_password("sync", "--ledger-url", "--ledger-password-file", a->ledger_url,
                               a->ledger_env, a->ledger_password_file, "KNUT_LEDGER_PASSWORD",
                               &p->ledger) != 0)
        return -1;
    if (a->lineage_url && !a->status &&
        knut_cli_secret_read("sync", "--lineage-api-key-file", a->lineage_api_key_file,
                             "OPENLINEAGE_API_KEY", &p->lineage) != 0)
        return -1;
    if (!a->airflow_url || a->status)
        return 0;
    if (knut_cli_secret_read("sync", "--airflow-password-file", a->airflow_password_file,
                             "KNUT_AIRFLOW_PASSWORD", &p->airflow) != 0)
        return -1;
    if (!p->airflow) {
        fprintf(stderr, "knut sync: --airflow-url needs a password: set KNUT_AIRFLOW_PASSWORD "
                        "or use --airflow-password-file\n");
        return -1;
    }
    return 0;
}

int knut_cmd_sync(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "check") == 0)
        return knut_cmd_sync_check(argc - 1, argv + 1); /* cmd_sync_check.c */
    sync_args a = {0};
    int rc = parse_args(argc, argv, &a);
    if (rc != KNUT_CLI_RUN)
        return rc;
    int bar = knut_cli_sync_log_setup(); /* sync_live.c */
    knut_error err = KNUT_ERROR_INIT;
    knut_sync_config *cfg = NULL;
    knut_sync *s = NULL;
    rc = KNUT_EXIT_FAIL;
    sync_secrets pw = {0};
    if (read_secrets(&a, &pw) != 0) {
        rc = KNUT_EXIT_USAGE;
        goto cleanup;
    }
    if (a.dry_run) {
        knut_cli_sync_check c = {.config = a.config, .store = a.store, .falkordb = a.falkordb,
                                 .graph = a.graph, .ledger = a.ledger,
                                 .ledger_url = a.ledger_url, .falkordb_password = pw.falkordb,
                                 .json = a.json};
        rc = knut_cli_sync_check_run(&c);
        goto cleanup;
    }
    /* Handlers first: a SIGTERM while the store or FalkorDB is being opened
     * then means "run no round, exit 0" instead of the default kill. */
    if ((rc = knut_cli_config_check("sync", a.config)) != 0)
        goto cleanup;
    rc = KNUT_EXIT_FAIL;
    knut_status st = a.status ? KNUT_OK : knut_signal_install(&err);
    if (st == KNUT_OK && !a.status && !a.once) /* SIGHUP: the config again (sync_live.c) */
        st = knut_signal_install_reload(&err);
    if (st != KNUT_OK) {
        fprintf(stderr, "knut sync: %s\n", err.message);
        goto cleanup;
    }
    if ((st = knut_sync_config_load(&cfg, a.config, &err)) != KNUT_OK) {
        fprintf(stderr, "knut sync: %s\n", err.message);
        rc = knut_cli_config_exit(st);
        goto cleanup;
    }
    knut_sync_options so = KNUT_SYNC_OPTIONS_INIT;
    so.store = a.store;
    so.falkordb_url = a.falkordb;
    so.graph = a.graph;
    so.ledger = a.ledger;
    so.status_only = a.status;
    so.read_only = a.status && !a.retry; /* status opens nothing for writing */
    knut_cli_sync_live live;
    knut_cli_sync_live_init(&live, a.config, cfg, &so);
    if (bar && !a.status) {
        so.progress = knut_cli_sync_progress;
        so.progress_ctx = &live;
    }
    so.no_bulk = a.no_bulk;
    so.ledger_url = a.ledger_url;
    so.instance = a.instance;
    so.lease_ms = (int64_t)(a.lease * 1000);
    so.metrics_addr = a.metrics_addr;
    so.metrics_file = a.metrics_file;
    so.airflow_url = a.airflow_url;
    so.airflow_user = a.airflow_user;
    so.airflow_password = pw.airflow;
    so.falkordb_password = pw.falkordb;
    so.ledger_password = pw.ledger;
    so.airflow_drain_ms = (int64_t)(a.airflow_drain * 1000);
    so.lineage_url = a.lineage_url;
    so.lineage_file = a.lineage_file;
    so.lineage_endpoint = a.lineage_endpoint;
    so.lineage_api_key = pw.lineage;
    so.lineage_namespace = a.lineage_namespace;
    so.lineage_drain_ms = (int64_t)(a.lineage_drain * 1000);
    so.memory_limit = a.memory_limit;
    so.txn_rows = a.txn_rows;
    so.falkordb_timeout_ms = (int64_t)(a.falkordb_timeout * 1000);
    if ((st = knut_sync_open(&s, cfg, &so, &err)) != KNUT_OK) {
        fprintf(stderr, "knut sync: %s\n", err.message);
        rc = st == KNUT_EUNSUPPORTED || st == KNUT_EINVAL ? KNUT_EXIT_USAGE : KNUT_EXIT_FAIL;
        goto cleanup;
    }
    if (a.retry) {
        knut_sync_retry_options ro = KNUT_SYNC_RETRY_OPTIONS_INIT;
        ro.table = a.retry_table;
        ro.file = a.retry_file;
        ro.skip = a.skip;
        int64_t n = 0;
        if ((st = knut_sync_retry(s, &ro, &n, &err)) == KNUT_OK)
            printf("%s %lld failed file%s\n", a.skip ? "skipped" : "re-queued", (long long)n,
                   n == 1 ? "" : "s");
    } else if (a.status) {
        rc = knut_cli_sync_status_print(s, a.json); /* sync_status.c: 1 if a file failed */
        goto cleanup;
    } else {
        knut_sync_run_options ro = KNUT_SYNC_RUN_OPTIONS_INIT;
        ro.once = a.once;
        ro.interval_ns = (int64_t)(a.interval * 1e9);
        ro.max_backoff_ns = (int64_t)(a.max_backoff * 1e9);
        ro.reload = a.once ? NULL : knut_cli_sync_reload;
        ro.reload_ctx = &live;
        int64_t bad = 0;
        knut_error werr = KNUT_ERROR_INIT; /* no watcher: the signals still work, unlogged */
        int watching = knut_signal_watch(knut_cli_sync_on_signal, NULL, &werr) == KNUT_OK;
        st = knut_sync_run(s, &ro, &bad, &err);
        if (watching)
            knut_signal_unwatch();
        cfg = live.cfg; /* after a reload, the one in use */
        if (st == KNUT_OK && a.once && bad > 0) {
            rc = KNUT_EXIT_FAIL; /* the round recorded failures (see the log / status) */
            goto cleanup;
        }
    }
    if (st != KNUT_OK)
        fprintf(stderr, "knut sync: %s\n", err.message);
    else
        rc = KNUT_EXIT_OK;
cleanup:
    knut_sync_close(s);
    knut_sync_config_free(cfg);
    knut_net_secret_free(pw.falkordb); /* the secrets do not outlive their use */
    knut_net_secret_free(pw.ledger);
    knut_net_secret_free(pw.airflow);
    knut_net_secret_free(pw.lineage);
    return rc;
}
