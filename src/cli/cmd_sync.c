/*
 * `knut sync` (the main job) and `knut sync status`: loads the mapping
 * config, opens the sink + ledger through the sync part, installs the
 * SIGINT/SIGTERM handlers and runs the round loop (or one round), or
 * prints the ledger's view of every table.
 */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "knut/sync.h"

const char knut_cmd_sync_usage[] =
    "usage: knut sync --config FILE [--store FILE | --falkordb URL [--graph NAME]\n"
    "                 [--falkordb-timeout SEC]]\n"
    "                 [--once] [--interval SEC] [--max-backoff SEC] [--ledger FILE]\n"
    "                 [--ledger-url URL [--instance ID] [--lease SEC]]\n"
    "                 [--airflow-url URL --airflow-user USER [--airflow-password-file FILE]\n"
    "                  [--airflow-drain SEC]]\n"
    "                 [--metrics-addr IP:PORT] [--metrics-file FILE]\n"
    "       knut sync status --config FILE [--store FILE | --falkordb URL] [--ledger-url URL]\n"
    "                        [--json]\n"
    "\n"
    "Keeps a property graph in step with tables of Parquet/CSV drops, as mapped\n"
    "by the YAML config (docs/sync.md). Each round picks up each table's new or\n"
    "changed files (files still being written wait), maps them to vertices and\n"
    "edges and applies them together with the ledger of done files: inside the\n"
    "embedded store's transaction (default), or to FalkorDB with a local ledger\n"
    "file written after the server acknowledged. Bad files are recorded failed\n"
    "with the reason; the other files go on. Logs: one JSON record per table and\n"
    "per round on stderr (KNUT_LOG_FORMAT=json; level info unless KNUT_LOG).\n"
    "SIGINT/SIGTERM finish the current round and exit 0; a second one stops at once.\n"
    "\n"
    "Options:\n"
    "  --config FILE      the mapping config (sync.yml)\n"
    "  --store FILE       embedded graph store (DuckDB file); default: 'store:' of the config\n"
    "  --falkordb URL     sink to FalkorDB at redis://[[user]:password@]host[:port]\n"
    "  --graph NAME       FalkorDB graph name (default: knut)\n"
    "  --falkordb-timeout SEC  longest wait for one FalkorDB read or write (default 300):\n"
    "                     a hung server fails the round (and backoff retries) instead\n"
    "                     of holding it\n"
    "  --ledger FILE      FalkorDB ledger file (default: 'ledger:' of the config,\n"
    "                     else CONFIG.ledger.json)\n"
    "  --ledger-url URL   shared ledger in Valkey/Redis at\n"
    "                     redis://[[user]:password@]host[:port], so several instances\n"
    "                     (each with --falkordb) share the tables: a table is worked on\n"
    "                     only under its lease (keys knut:sync:<config name>:...); a\n"
    "                     table another instance holds is skipped this round\n"
    "                     (docs/operations.md). Not with the embedded store\n"
    "                     (single-process)\n"
    "  --instance ID      this instance's lease owner id, unique per instance\n"
    "                     (default hostname:pid)\n"
    "  --lease SEC        lease time to live, renewed every third of it while a table\n"
    "                     is worked on (default 30, at least 0.1); a crashed instance's\n"
    "                     tables pass to another after at most this long\n"
    "  --once             run one round and exit: 0 if it had no errors, 1 if a file\n"
    "                     or table failed\n"
    "  --interval SEC     wait between rounds (default 10; inotify wakes it early)\n"
    "  --max-backoff SEC  longest wait after rounds without progress (default 10x interval)\n"
    "  --memory-limit SIZE  embedded store: its DuckDB memory limit while syncing\n"
    "                     (default 384MB; past it a large file's apply spills to\n"
    "                     STORE.tmp); the file-reading engine has its own 128MB cap\n"
    "  --airflow-url URL  after each round, one Airflow asset event per table that\n"
    "                     synced files (Airflow 3 API server, e.g. http://host:8080;\n"
    "                     Airflow 2.9+ works too). Sent in the background: Airflow\n"
    "                     being down never fails or slows a round (docs/operations.md)\n"
    "  --airflow-user USER  Airflow user (role op or admin)\n"
    "  --airflow-password-file FILE  file holding the password (first line); else the\n"
    "                     environment variable KNUT_AIRFLOW_PASSWORD. Never on the\n"
    "                     command line: other users can read it there\n"
    "  --airflow-drain SEC  at exit, time unsent asset events get before they are\n"
    "                     logged as dropped (default 5)\n"
    "  --metrics-addr IP:PORT  serve Prometheus metrics at http://IP:PORT/metrics while\n"
    "                     running (e.g. 127.0.0.1:9464; port 0: any free port, logged in\n"
    "                     the 'metrics server listening' record). Bound exactly as given:\n"
    "                     0.0.0.0 exposes it to the network (docs/operations.md)\n"
    "  --metrics-file FILE  write the same metrics to FILE on exit (also after --once),\n"
    "                     atomically (temp file, fsync, rename), e.g. for node_exporter's\n"
    "                     textfile collector\n"
    "  --json             status: one JSON object per file\n"
    "  -h, --help         show this help\n"
    "\n"
    "status lists, per table, the done files (rows, round), the failed files with\n"
    "their reason, and the pending ones (new or changed since recorded).\n"
    "\n"
    "Exit codes: 0 ok (also after SIGINT/SIGTERM), 1 failure, 2 usage or config error.\n"
    "\n"
    "Example:\n"
    "  knut sync --once --config examples/lakehouse/sync.yml --store demo/graph.duckdb\n"
    "  knut sync status --config examples/lakehouse/sync.yml --store demo/graph.duckdb\n";

typedef struct sync_args {
    const char *config, *store, *falkordb, *graph, *ledger;
    const char *airflow_url, *airflow_user, *airflow_password_file;
    int once, json, status;
    double interval, max_backoff;
    const char *ledger_url, *instance; /* shared ledger */
    const char *metrics_addr, *metrics_file;
    const char *memory_limit;
    double lease;
    double airflow_drain;
    double falkordb_timeout;
} sync_args;

static int parse_secs(const char *v, const char *name, double *out)
{
    char *end = NULL;
    errno = 0;
    double d = strtod(v, &end);
    if (errno || !end || *end || end == v || !(d > 0) || d > 86400.0 * 365) {
        fprintf(stderr, "knut sync: %s needs seconds > 0, not '%s'\n", name, v);
        return -1;
    }
    *out = d;
    return 0;
}

static int parse_args(int argc, char **argv, sync_args *a)
{
    int i = 1;
    if (argc > 1 && strcmp(argv[1], "status") == 0) {
        a->status = 1;
        i = 2;
    }
    for (; i < argc; i++) {
        const char *o = argv[i], *eq = strchr(o, '=');
        char name[32];
        snprintf(name, sizeof name, "%.*s", (int)(eq ? (size_t)(eq - o) : strlen(o)), o);
        if (strcmp(o, "--once") == 0) {
            a->once = 1;
            continue;
        }
        if (strcmp(o, "--json") == 0) {
            a->json = 1;
            continue;
        }
        const char **slot = strcmp(name, "--config") == 0     ? &a->config
                            : strcmp(name, "--store") == 0    ? &a->store
                            : strcmp(name, "--falkordb") == 0 ? &a->falkordb
                            : strcmp(name, "--graph") == 0    ? &a->graph
                            : strcmp(name, "--ledger") == 0   ? &a->ledger
                            : strcmp(name, "--ledger-url") == 0 ? &a->ledger_url
                            : strcmp(name, "--instance") == 0   ? &a->instance
                            : strcmp(name, "--metrics-addr") == 0 ? &a->metrics_addr
                            : strcmp(name, "--metrics-file") == 0 ? &a->metrics_file
                            : strcmp(name, "--memory-limit") == 0 ? &a->memory_limit
                            : strcmp(name, "--airflow-url") == 0  ? &a->airflow_url
                            : strcmp(name, "--airflow-user") == 0 ? &a->airflow_user
                            : strcmp(name, "--airflow-password-file") == 0
                                ? &a->airflow_password_file
                                : NULL;
        if (strcmp(name, "--airflow-password") == 0) {
            fprintf(stderr, "knut sync: no password on the command line: set "
                            "KNUT_AIRFLOW_PASSWORD or use --airflow-password-file\n");
            return -1;
        }
        int secs = strcmp(name, "--interval") == 0 || strcmp(name, "--max-backoff") == 0 ||
                   strcmp(name, "--lease") == 0 || strcmp(name, "--airflow-drain") == 0 ||
                   strcmp(name, "--falkordb-timeout") == 0;
        if (!slot && !secs) {
            fprintf(stderr, "knut sync: unknown argument '%s' (see --help)\n", o);
            return -1;
        }
        const char *v = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
        if (!v) {
            fprintf(stderr, "knut sync: %s needs a value\n", name);
            return -1;
        }
        if (slot)
            *slot = v;
        else if (parse_secs(v, name, strcmp(name, "--interval") == 0 ? &a->interval
                                     : strcmp(name, "--lease") == 0  ? &a->lease
                                     : strcmp(name, "--airflow-drain") == 0 ? &a->airflow_drain
                                     : strcmp(name, "--falkordb-timeout") == 0
                                         ? &a->falkordb_timeout
                                                                     : &a->max_backoff) != 0)
            return -1;
    }
    if (!a->config) {
        fprintf(stderr, "knut sync: --config FILE is required (see --help)\n");
        return -1;
    }
    if ((a->airflow_user || a->airflow_password_file || a->airflow_drain > 0) && !a->airflow_url) {
        fprintf(stderr, "knut sync: --airflow-user/--airflow-password-file/--airflow-drain "
                        "need --airflow-url\n");
        return -1;
    }
    if (a->airflow_url && !a->airflow_user) {
        fprintf(stderr, "knut sync: --airflow-url needs --airflow-user\n");
        return -1;
    }
    if ((a->instance || a->lease > 0) && !a->ledger_url) {
        fprintf(stderr, "knut sync: --instance/--lease need --ledger-url\n");
        return -1;
    }
    if (a->status && (a->metrics_addr || a->metrics_file)) {
        fprintf(stderr, "knut sync: status takes no --metrics-addr/--metrics-file\n");
        return -1;
    }
    if (a->store && a->falkordb) {
        fprintf(stderr, "knut sync: --store and --falkordb exclude each other\n");
        return -1;
    }
    return 0;
}

/* The Airflow password: first line of the file, else $KNUT_AIRFLOW_PASSWORD. */
static int airflow_password(const sync_args *a, char *out, size_t n)
{
    const char *env = getenv("KNUT_AIRFLOW_PASSWORD");
    out[0] = 0;
    if (!a->airflow_password_file) {
        if (!env || !*env) {
            fprintf(stderr, "knut sync: --airflow-url needs a password: set KNUT_AIRFLOW_PASSWORD "
                            "or use --airflow-password-file\n");
            return -1;
        }
        snprintf(out, n, "%s", env);
        return 0;
    }
    FILE *f = fopen(a->airflow_password_file, "r");
    if (!f) {
        fprintf(stderr, "knut sync: --airflow-password-file %s: %s\n", a->airflow_password_file,
                strerror(errno));
        return -1;
    }
    int ok = fgets(out, (int)n, f) != NULL;
    fclose(f);
    out[strcspn(out, "\r\n")] = 0;
    if (!ok || !out[0]) {
        fprintf(stderr, "knut sync: --airflow-password-file %s: empty first line\n",
                a->airflow_password_file);
        return -1;
    }
    return 0;
}

static void print_status(const knut_sync_file_status *st, void *ctx)
{
    const sync_args *a = ctx;
    if (a->json) {
        knut_buf b = KNUT_BUF_INIT;
        knut_buf_puts(&b, "{\"table\":");
        knut_buf_put_json_str(&b, st->table, strlen(st->table));
        knut_buf_puts(&b, ",\"path\":");
        knut_buf_put_json_str(&b, st->path, strlen(st->path));
        knut_buf_printf(&b, ",\"state\":\"%s\",\"rows\":%lld,\"round\":%lld,\"reason\":",
                        st->state, (long long)st->rows, (long long)st->round);
        if (st->reason)
            knut_buf_put_json_str(&b, st->reason, strlen(st->reason));
        else
            knut_buf_puts(&b, "null");
        knut_buf_puts(&b, "}\n");
        if (b.data)
            fputs(b.data, stdout);
        knut_buf_reset(&b);
        return;
    }
    if (strcmp(st->state, "done") == 0)
        printf("%-16s done     %s (%lld rows, round %lld)\n", st->table, st->path,
               (long long)st->rows, (long long)st->round);
    else if (strcmp(st->state, "failed") == 0)
        printf("%-16s failed   %s: %s\n", st->table, st->path, st->reason ? st->reason : "");
    else
        printf("%-16s pending  %s\n", st->table, st->path);
}

int knut_cmd_sync(int argc, char **argv)
{
    sync_args a = {0};
    if (parse_args(argc, argv, &a) != 0)
        return KNUT_EXIT_USAGE;
    if (!getenv("KNUT_LOG")) { /* the per-table records are the job's output: info */
        const char *fmt = getenv("KNUT_LOG_FORMAT");
        int json = fmt ? strcmp(fmt, "json") == 0 : !isatty(STDERR_FILENO);
        knut_log_set(KNUT_LOG_INFO, json ? knut_log_sink_json : knut_log_sink_human, stderr);
    }
    knut_error err = KNUT_ERROR_INIT;
    knut_sync_config *cfg = NULL;
    knut_sync *s = NULL;
    int rc = KNUT_EXIT_FAIL;
    char password[1024] = "";
    if (a.airflow_url && !a.status && airflow_password(&a, password, sizeof password) != 0)
        return KNUT_EXIT_USAGE;
    /* Handlers first: a SIGTERM while the store or FalkorDB is being opened
     * then means "run no round, exit 0" instead of the default kill. */
    knut_status st = a.status ? KNUT_OK : knut_signal_install(&err);
    if (st == KNUT_OK)
        st = knut_sync_config_load(&cfg, a.config, &err);
    if (st != KNUT_OK) {
        fprintf(stderr, "knut sync: %s\n", err.message);
        rc = st == KNUT_EINVAL || st == KNUT_EPARSE ? KNUT_EXIT_USAGE : KNUT_EXIT_FAIL;
        goto cleanup;
    }
    knut_sync_options so = KNUT_SYNC_OPTIONS_INIT;
    so.store = a.store;
    so.falkordb_url = a.falkordb;
    so.graph = a.graph;
    so.ledger = a.ledger;
    so.status_only = a.status;
    so.ledger_url = a.ledger_url;
    so.instance = a.instance;
    so.lease_ms = (int64_t)(a.lease * 1000);
    so.metrics_addr = a.metrics_addr;
    so.metrics_file = a.metrics_file;
    so.airflow_url = a.airflow_url;
    so.airflow_user = a.airflow_user;
    so.airflow_password = a.airflow_url ? password : NULL;
    so.airflow_drain_ms = (int64_t)(a.airflow_drain * 1000);
    so.memory_limit = a.memory_limit;
    so.falkordb_timeout_ms = (int64_t)(a.falkordb_timeout * 1000);
    if ((st = knut_sync_open(&s, cfg, &so, &err)) != KNUT_OK) {
        fprintf(stderr, "knut sync: %s\n", err.message);
        rc = st == KNUT_EUNSUPPORTED || st == KNUT_EINVAL ? KNUT_EXIT_USAGE : KNUT_EXIT_FAIL;
        goto cleanup;
    }
    if (a.status) {
        st = knut_sync_status(s, print_status, &a, &err);
    } else {
        knut_sync_run_options ro = KNUT_SYNC_RUN_OPTIONS_INIT;
        ro.once = a.once;
        ro.interval_ns = (int64_t)(a.interval * 1e9);
        ro.max_backoff_ns = (int64_t)(a.max_backoff * 1e9);
        int64_t bad = 0;
        st = knut_sync_run(s, &ro, &bad, &err);
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
    for (volatile char *p = password; *p; p++) /* the secret does not outlive its use */
        *p = 0;
    return rc;
}
