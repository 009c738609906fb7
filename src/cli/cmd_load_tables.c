/*
 * `knut load --mapping`: a one-shot load of tables (Parquet/CSV files)
 * through a `knut sync` config. It reuses sync's rounds (mapping, modes,
 * ledgers) rather than a second mapping engine, and runs them until no
 * file is left. FalkorDB gets a throwaway ledger file: a load is not
 * resumed, it is simply run again (MERGE makes that converge); the
 * embedded store keeps its ledger table, as a record of what was loaded.
 * Progress is the same as for --graphar: a bar on a terminal (files done of
 * those pending at the start, rows, rows/s, ETA), else one JSON log line
 * per round and a "done" line. Its unit is the file, because a table's row
 * count is only known once its files are read.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "knut/knut.h"

/* A sync round handles at most a bounded number of files per table, so a
 * large drop takes several rounds; this cap only guards against a loop. */
#define LOAD_MAX_ROUNDS 100000

typedef struct tprogress {
    int tty, quiet;
    int64_t files_total; /* pending when the load started */
    int64_t started;     /* knut_clock_mono_ns */
    knut_cli_progress bar;
} tprogress;

static void count_pending(const knut_sync_file_status *st, void *ctx)
{
    if (strcmp(st->state, "pending") == 0)
        ++*(int64_t *)ctx;
}

static void progress_bar(tprogress *p, const knut_sync_round_stats *t)
{
    knut_cli_progress_line l = {NULL,  t->files_done, p->files_total, "files", t->rows,
                                (double)(knut_clock_mono_ns() - p->started) / 1e9, NULL};
    knut_cli_progress_draw(&p->bar, &l, 1);
}

/* After each round: t holds the totals so far, r the round itself. */
static void progress_round(tprogress *p, const knut_sync_round_stats *t,
                           const knut_sync_round_stats *r)
{
    if (p->quiet || (r->files_done == 0 && r->files_failed == 0))
        return;
    if (p->tty) {
        progress_bar(p, t);
        return;
    }
    double secs = (double)(knut_clock_mono_ns() - p->started) / 1e9;
    knut_log_field f[] = {
        KNUT_LF_INT("round", r->round),
        KNUT_LF_INT("round_files", r->files_done),
        KNUT_LF_INT("round_rows", r->rows),
        KNUT_LF_INT("files", t->files_done),
        KNUT_LF_INT("files_total", p->files_total),
        KNUT_LF_INT("rows", t->rows),
        KNUT_LF_INT("vertices", t->vertices),
        KNUT_LF_INT("edges", t->edges),
        KNUT_LF_INT("deletes", t->deletes),
        KNUT_LF_DBL("seconds", secs),
        KNUT_LF_DBL("rows_per_s", secs > 0 ? (double)t->rows / secs : 0),
    };
    knut_log_record rec = {knut_clock_wall_us(), KNUT_LOG_INFO, "load", "round loaded", f,
                           sizeof f / sizeof f[0]};
    knut_log_sink_json(&rec, stderr);
}

int knut_cli_load_mapping(const char *mapping, const char *url, const char *password,
                          const char *graph, const char *db, int no_bulk, int quiet)
{
    knut_error err = KNUT_ERROR_INIT;
    knut_sync_config *cfg = NULL;
    knut_sync *s = NULL;
    char dir[] = "/tmp/knut_load_XXXXXX";
    char ledger[sizeof dir + 16] = "";
    int rc = KNUT_EXIT_FAIL;
    knut_sync_round_stats total = {0};
    int64_t started = knut_clock_mono_ns();
    tprogress prog = {isatty(STDERR_FILENO), quiet, 0, started, {0}};

    knut_status cst;
    if ((rc = knut_cli_config_check("load", mapping)) != 0)
        return rc;
    rc = KNUT_EXIT_FAIL;
    if ((cst = knut_sync_config_load(&cfg, mapping, &err)) != KNUT_OK) {
        rc = knut_cli_config_exit(cst);
        goto done;
    }
    knut_sync_options so = KNUT_SYNC_OPTIONS_INIT;
    so.store = db;
    so.falkordb_url = url;
    so.falkordb_password = password;
    so.graph = graph;
    so.no_bulk = no_bulk; /* FalkorDB: MERGE even into a new graph */
    so.no_status_file = 1; /* a one-shot load: no STORE.status.json left behind */
    if (url) {
        if (!mkdtemp(dir)) {
            knut_error_set(&err, KNUT_EIO, "cannot create a temporary ledger folder");
            goto done;
        }
        snprintf(ledger, sizeof ledger, "%s/ledger.json", dir);
        so.ledger = ledger;
    }
    if (knut_sync_open(&s, cfg, &so, &err) != KNUT_OK)
        goto done;
    /* The files the rounds will take (the ledger's done files are not). */
    if (!quiet && knut_sync_status(s, count_pending, &prog.files_total, &err) != KNUT_OK)
        goto done;
    for (int64_t r = 0; r < LOAD_MAX_ROUNDS; r++) {
        knut_sync_round_stats st = {0};
        if (knut_sync_round(s, &st, &err) != KNUT_OK)
            goto done;
        total.files_done += st.files_done;
        total.rows += st.rows;
        total.vertices += st.vertices;
        total.edges += st.edges;
        total.deletes += st.deletes;
        progress_round(&prog, &total, &st);
        if (st.files_failed || st.tables_failed) {
            knut_error_set(&err, KNUT_ERROR,
                           "%lld file(s) and %lld table(s) failed in round %lld; "
                           "see the log (KNUT_LOG=info) or `knut sync status`",
                           (long long)st.files_failed, (long long)st.tables_failed,
                           (long long)st.round);
            goto done;
        }
        if (st.files_done == 0 && st.files_pending == 0)
            break;
        if (st.files_done == 0) /* only files still being written: wait for them */
            knut_clock_sleep_ns(200 * 1000 * 1000);
    }
    rc = KNUT_EXIT_OK;
done:
    if (prog.tty && !quiet && total.files_done > 0)
        knut_cli_progress_end(&prog.bar, 1);
    knut_sync_close(s);
    knut_sync_config_free(cfg);
    if (ledger[0]) {
        unlink(ledger);
        rmdir(dir);
    }
    if (rc != KNUT_EXIT_OK) {
        fprintf(stderr, "knut load: %s\n", err.message);
        return rc;
    }
    double secs = (double)(knut_clock_mono_ns() - started) / 1e9;
    if (!quiet && !prog.tty) {
        knut_log_field f[] = {KNUT_LF_INT("files", total.files_done),
                              KNUT_LF_INT("rows", total.rows),
                              KNUT_LF_INT("vertices", total.vertices),
                              KNUT_LF_INT("edges", total.edges),
                              KNUT_LF_INT("deletes", total.deletes),
                              KNUT_LF_DBL("seconds", secs),
                              KNUT_LF_STR("method", url ? "falkordb" : "embedded")};
        knut_log_record rec = {knut_clock_wall_us(), KNUT_LOG_INFO, "load", "done", f,
                               sizeof f / sizeof f[0]};
        knut_log_sink_json(&rec, stderr);
    }
    /* the summary line is the result, printed even when quiet */
    printf("done: %lld files, %lld rows, %lld vertices, %lld edges, %lld deletes in %.2f s "
           "(%s)\n",
           (long long)total.files_done, (long long)total.rows, (long long)total.vertices,
           (long long)total.edges, (long long)total.deletes, secs, url ? "falkordb" : "embedded");
    return rc;
}
