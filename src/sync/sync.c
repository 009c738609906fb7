/*
 * A sync session: opens the sink (the embedded graph store by default,
 * FalkorDB with a URL), the ledger that matches it (the store's own table,
 * or a local JSON file for FalkorDB, or a Valkey hash shared by several
 * instances: ledger_valkey.c) and the in-memory staging engine
 * (`knut sync status` opens read-only: status.c).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sync_int.h"

/* The store's DuckDB memory cap while syncing: past it a large apply
 * spills (to <store>.tmp, DuckDB's default) instead of taking the
 * machine's memory. One apply is one transaction, and the transaction-local
 * part of the key index does not always spill: a file far larger than 10M
 * new vertices may need a larger limit (docs/sync.md). */
static knut_status store_memory_limit(knut_graph_store *store, const knut_sync_options *opts,
                                      knut_error *err)
{
    const char *lim = opts->memory_limit ? opts->memory_limit : SYNC_STORE_MEMORY_LIMIT;
    knut_duck_stmt *stmt = NULL;
    knut_status st = knut_duck_stmt_prepare(&stmt, knut_graph_store_conn(store),
                                            "SET memory_limit = $1", err);
    if (st == KNUT_OK)
        st = knut_duck_stmt_bind_text(stmt, 1, lim, strlen(lim), err);
    if (st == KNUT_OK)
        st = knut_duck_stmt_exec(stmt, NULL, err);
    knut_duck_stmt_free(stmt);
    if (st != KNUT_OK && err) { /* a bad value is a usage error (exit 2) */
        char why[KNUT_ERROR_MSG_MAX];
        snprintf(why, sizeof why, "%s", err->message);
        st = knut_error_set(err, KNUT_EINVAL, "memory limit '%s': %s", lim, why);
    }
    return st;
}

knut_status knut_sync_open(knut_sync **out, const knut_sync_config *cfg,
                           const knut_sync_options *opts, knut_error *err)
{
    KNUT_ASSERT_ARG(err, out && cfg);
    *out = NULL;
    KNUT_CHECK_VERSION(opts, KNUT_SYNC_OPTIONS_VERSION, err);
    knut_sync_options def = KNUT_SYNC_OPTIONS_INIT;
    knut_buf lf = KNUT_BUF_INIT;
    if (!opts)
        opts = &def;
    knut_sync *s = calloc(1, sizeof *s);
    if (!s)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    s->cfg = cfg;
    s->progress = opts->progress;
    s->progress_ctx = opts->progress_ctx;
    knut_status st = KNUT_OK;
    if (opts->status_only && opts->read_only) {
        st = knut_sync__status_open(s, opts, err); /* status.c */
        goto cleanup;
    }
    if (!opts->status_only) {
        /* columns.c: declared types the sink cannot store are a config error */
        st = knut_sync__columns_sink_check(cfg, opts->falkordb_url != NULL, err);
        /* FalkorDB: a standalone staging engine; the embedded store stages
         * inside its own instance (below) */
        if (st == KNUT_OK && opts->falkordb_url)
            st = knut_sync__stage_open(&s->stage, &s->stage_spill, err);
        if (st != KNUT_OK)
            goto cleanup;
    }
    /* the shared ledger's URL: --ledger-url, or the FalkorDB server's
     * with `ledger: falkordb` (ledger_falkor.c) */
    const char *ledger_url = NULL;
    int in_falkor = 0;
    st = knut_sync__ledger_url(opts, opts->ledger ? opts->ledger : cfg->ledger, &ledger_url,
                               &in_falkor, err);
    if (st != KNUT_OK)
        goto cleanup;
    s->falkor_ledger = in_falkor;
    if ((opts->instance || opts->lease_ms > 0) && !ledger_url && !opts->status_only) {
        st = knut_error_set(err, KNUT_EINVAL, "%s: --instance/--lease need a shared ledger "
                            "(--ledger-url, or 'ledger: falkordb')", cfg->file);
        goto cleanup;
    }
    if (opts->ledger_url && !opts->falkordb_url && !opts->status_only) {
        st = knut_error_set(err, KNUT_EINVAL,
                            "%s: a shared ledger (--ledger-url) needs the FalkorDB sink "
                            "(--falkordb URL): the embedded store is single-process",
                            cfg->file);
        goto cleanup;
    }
    if (ledger_url) { /* shared ledger (ledger_valkey.c); status needs no sink */
        /* in the FalkorDB server: its password unless the ledger has one */
        const char *pw = in_falkor && !opts->ledger_password ? opts->falkordb_password
                                                             : opts->ledger_password;
        st = knut_sync__valkey_open(&s->valkey, ledger_url, pw, cfg, opts->instance,
                                    opts->lease_ms, err);
        if (st == KNUT_OK)
            st = knut_sync__ledger_open_valkey(&s->ledger, s->valkey, err);
        if (st != KNUT_OK || opts->status_only)
            goto cleanup;
    }
    if (opts->falkordb_url) {
        const char *ledger = opts->ledger ? opts->ledger : cfg->ledger;
        if (!ledger && !ledger_url) {
            knut_buf_printf(&lf, "%s.ledger.json", cfg->file);
            if ((st = knut_buf_check(&lf, err)) != KNUT_OK)
                goto cleanup;
            ledger = lf.data;
        }
        if (!ledger_url)
            st = knut_sync__ledger_open_file(&s->ledger, ledger, err);
        if (st != KNUT_OK || opts->status_only)
            goto cleanup;
        knut_graph_falkor_options fo = KNUT_GRAPH_FALKOR_OPTIONS_INIT;
        fo.password = opts->falkordb_password;
        fo.command_timeout_ms = opts->falkordb_timeout_ms < 0   ? 0
                                : opts->falkordb_timeout_ms == 0 ? SYNC_FALKORDB_TIMEOUT_MS
                                : opts->falkordb_timeout_ms > INT32_MAX
                                    ? INT32_MAX
                                    : (int)opts->falkordb_timeout_ms;
        st = knut_graph_falkor_connect_url(&s->falkor, opts->falkordb_url, &fo, err);
        s->graph = strdup(opts->graph ? opts->graph : "knut");
        s->no_bulk = opts->no_bulk;
        if (st == KNUT_OK && !s->graph)
            st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
        if (st == KNUT_OK)
            st = knut_graph_falkor_sink_new(&s->sink, s->falkor, opts->graph ? opts->graph : "knut",
                                            NULL, err);
    } else {
        const char *path = opts->store ? opts->store : cfg->store;
        if (!path) {
            st = knut_error_set(err, KNUT_EINVAL,
                                "%s: no graph store: set 'store:' in the config or pass --store",
                                cfg->file);
            goto cleanup;
        }
        if (opts->status_only && access(path, F_OK) != 0)
            goto cleanup; /* no store yet: nothing done, everything pending */
        st = knut_graph_store_open(&s->store, path, err);
        if (st != KNUT_OK)
            goto cleanup;
        s->sink = knut_graph_store_sink(s->store);
        st = store_memory_limit(s->store, opts, err);
        knut_graph_store_set_txn_rows(s->store, opts->txn_rows);
        /* staged files in the store's instance: one buffer pool and one
         * memory_limit for staging and applying, not two side by side */
        if (st == KNUT_OK && !opts->status_only &&
            (st = knut_sync__stage_attach(knut_graph_store_db(s->store), err)) == KNUT_OK) {
            s->stage = knut_graph_store_db(s->store);
            s->stage_shared = 1;
        }
        if (st == KNUT_OK)
            st = knut_sync__ledger_open_store(&s->ledger, knut_graph_store_conn(s->store), err);
    }
cleanup:
    knut_buf_reset(&lf);
    if (st != KNUT_OK) {
        knut_sync_close(s);
        return st;
    }
    s->round = knut_sync__ledger_max_round(&s->ledger);
    if (!opts->status_only && (opts->metrics_file || opts->metrics_addr)) {
        st = knut_sync__metrics_create(&s->metrics, cfg, err);
        if (st == KNUT_OK && opts->metrics_file && !(s->metrics_file = strdup(opts->metrics_file)))
            st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
    }
    if (st == KNUT_OK && !opts->status_only) /* order.c: endpoints' tables first */
        st = knut_sync__order_build(&s->order, cfg, err);
    if (st == KNUT_OK && !opts->status_only)
        st = knut_sync__assets_open(&s->assets, cfg, opts, s->metrics, err);
    if (st == KNUT_OK && !opts->status_only)
        st = knut_sync__lineage_open(&s->lineage, cfg, opts, err);
    if (st == KNUT_OK && opts->metrics_addr && !opts->status_only)
        st = knut_sync__metrics_serve(s->metrics, opts->metrics_addr, err);
    if (st == KNUT_OK && !opts->status_only) {
        /* status_file.c: beside the store or the ledger file; a shared
         * ledger is read from its server */
        const char *beside = s->ledger.valkey || opts->no_status_file ? NULL
                             : s->ledger.file ? s->ledger.file
                                              : (opts->store ? opts->store : cfg->store);
        st = knut_sync__status_file_init(s, beside, err);
        if (st == KNUT_OK)
            knut_sync__status_file_write(s); /* status can read it from the start */
    }
    if (st != KNUT_OK) {
        free(s->metrics_file); /* nothing ran: no metrics file */
        s->metrics_file = NULL;
        knut_sync_close(s);
        return st;
    }
    *out = s;
    return KNUT_OK;
}

void knut_sync_close(knut_sync *s)
{
    if (!s)
        return;
    knut_sync__assets_close(s->assets); /* drains first: it may still count in metrics */
    knut_sync__lineage_close(s->lineage);
    if (s->metrics_file) { /* after the drain, so the file has the last asset counts */
        knut_error merr = KNUT_ERROR_INIT;
        if (knut_sync__metrics_write_file(s->metrics, s->metrics_file, &merr) != KNUT_OK)
            KNUT_LOG(KNUT_LOG_ERROR, SYNC_LOG, "%s", merr.message);
        free(s->metrics_file);
    }
    knut_sync__metrics_free(s->metrics); /* stops the HTTP server */
    if (s->sink)
        knut_graph_sink_close(s->sink); /* the store's sink closes the store */
    else
        knut_graph_store_close(s->store);
    knut_graph_falkor_close(s->falkor);
    free(s->graph);
    if (!s->stage_shared) /* else it was the store's, closed with it */
        knut_sync__stage_close(s->stage, s->stage_spill);
    knut_sync__ledger_reset(&s->ledger);
    knut_sync__valkey_close(s->valkey); /* releases a lease still held */
    knut_sync__order_reset(&s->order);
    free(s->no_files);
    knut_sync__notes_free(s->notes, s->n_notes);
    free(s->status_file);
    free(s->status_path);
    free(s);
}
