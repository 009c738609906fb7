/*
 * `knut load --mapping`: a one-shot load of tables (Parquet/CSV files)
 * through a `knut sync` config. It reuses sync's rounds (mapping, modes,
 * ledgers) rather than a second mapping engine, and runs them until no
 * file is left. FalkorDB gets a throwaway ledger file: a load is not
 * resumed, it is simply run again (MERGE makes that converge); the
 * embedded store keeps its ledger table, as a record of what was loaded.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "knut/knut.h"

/* A sync round handles at most a bounded number of files per table, so a
 * large drop takes several rounds; this cap only guards against a loop. */
#define LOAD_MAX_ROUNDS 100000

int knut_cli_load_mapping(const char *mapping, const char *url, const char *graph,
                          const char *db, int quiet)
{
    knut_error err = KNUT_ERROR_INIT;
    knut_sync_config *cfg = NULL;
    knut_sync *s = NULL;
    char dir[] = "/tmp/knut_load_XXXXXX";
    char ledger[sizeof dir + 16] = "";
    int rc = KNUT_EXIT_FAIL;
    knut_sync_round_stats total = {0};
    int64_t started = knut_clock_mono_ns();

    if (knut_sync_config_load(&cfg, mapping, &err) != KNUT_OK)
        goto done;
    knut_sync_options so = KNUT_SYNC_OPTIONS_INIT;
    so.store = db;
    so.falkordb_url = url;
    so.graph = graph;
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
    for (int64_t r = 0; r < LOAD_MAX_ROUNDS; r++) {
        knut_sync_round_stats st = {0};
        if (knut_sync_round(s, &st, &err) != KNUT_OK)
            goto done;
        total.files_done += st.files_done;
        total.rows += st.rows;
        total.vertices += st.vertices;
        total.edges += st.edges;
        total.deletes += st.deletes;
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
    (void)quiet; /* the summary line is the result, printed even when quiet */
    printf("done: %lld files, %lld rows, %lld vertices, %lld edges, %lld deletes in %.2f s "
           "(%s)\n",
           (long long)total.files_done, (long long)total.rows, (long long)total.vertices,
           (long long)total.edges, (long long)total.deletes, secs, url ? "falkordb" : "embedded");
    return rc;
}
