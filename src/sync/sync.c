/*
 * A sync session: opens the sink (the embedded graph store by default,
 * FalkorDB with a URL), the ledger that matches it (the store's own table,
 * or a local JSON file for FalkorDB) and the in-memory staging engine;
 * and answers `knut sync status` from the ledger and the source folders.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sync_int.h"

knut_status knut_sync_open(knut_sync **out, const knut_sync_config *cfg,
                           const knut_sync_options *opts, knut_error *err)
{
    KNUT_ASSERT_ARG(err, out && cfg);
    knut_sync_options def = KNUT_SYNC_OPTIONS_INIT;
    knut_buf lf = KNUT_BUF_INIT;
    if (!opts)
        opts = &def;
    *out = NULL;
    for (size_t i = 0; i < cfg->n_tables; i++)
        if (cfg->tables[i].mode == KNUT_SYNC_MODE_FULL) {
            const knut_conf *n = knut_conf_get(cfg->tables[i].node, "mode");
            return knut_error_set(err, KNUT_EUNSUPPORTED,
                                  "%s:%d:%d: table '%s': mode full is not implemented yet "
                                  "(use incremental or cdc)",
                                  knut_conf_file(n), knut_conf_line(n), knut_conf_col(n),
                                  cfg->tables[i].name);
        }
    knut_sync *s = calloc(1, sizeof *s);
    if (!s)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    s->cfg = cfg;
    knut_status st = KNUT_OK;
    if (!opts->status_only) {
        static const knut_duck_option stage_opts[] = {{"threads", "2"}};
        st = knut_duck_db_open(&s->stage, NULL, stage_opts, 1, err);
        if (st != KNUT_OK)
            goto cleanup;
    }
    if (opts->falkordb_url) {
        const char *ledger = opts->ledger ? opts->ledger : cfg->ledger;
        if (!ledger) {
            knut_buf_printf(&lf, "%s.ledger.json", cfg->file);
            if ((st = knut_buf_check(&lf, err)) != KNUT_OK)
                goto cleanup;
            ledger = lf.data;
        }
        st = knut_sync__ledger_open_file(&s->ledger, ledger, err);
        if (st != KNUT_OK || opts->status_only)
            goto cleanup;
        st = knut_graph_falkor_connect_url(&s->falkor, opts->falkordb_url, NULL, err);
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
        st = knut_sync__ledger_open_store(&s->ledger, knut_graph_store_conn(s->store), err);
    }
cleanup:
    knut_buf_reset(&lf);
    if (st != KNUT_OK) {
        knut_sync_close(s);
        return st;
    }
    s->round = knut_sync__ledger_max_round(&s->ledger);
    *out = s;
    return KNUT_OK;
}

void knut_sync_close(knut_sync *s)
{
    if (!s)
        return;
    if (s->sink)
        knut_graph_sink_close(s->sink); /* the store's sink closes the store */
    else
        knut_graph_store_close(s->store);
    knut_graph_falkor_close(s->falkor);
    knut_duck_db_close(s->stage);
    knut_sync__ledger_reset(&s->ledger);
    free(s);
}

knut_status knut_sync_status(knut_sync *s, knut_sync_status_fn fn, void *ctx, knut_error *err)
{
    KNUT_ASSERT_ARG(err, s && fn);
    for (size_t t = 0; t < s->cfg->n_tables; t++) {
        const knut_sync_table *tb = &s->cfg->tables[t];
        for (size_t i = 0; i < s->ledger.n; i++) {
            const sync_entry *e = &s->ledger.items[i];
            if (strcmp(e->table, tb->name) != 0)
                continue;
            knut_sync_file_status fs = {tb->name, e->path, e->status,
                                        strcmp(e->status, "failed") == 0 ? e->reason : NULL,
                                        e->rows, e->round};
            fn(&fs, ctx);
        }
        sync_file_list files;
        knut_status st = knut_sync__files_list(tb, &files, err);
        if (st != KNUT_OK)
            return st;
        for (size_t i = 0; i < files.n; i++) {
            const sync_entry *e = knut_sync__ledger_find(&s->ledger, tb->name, files.items[i].path);
            if (e && e->size == files.items[i].size && e->mtime_ns == files.items[i].mtime_ns)
                continue;
            knut_sync_file_status fs = {tb->name, files.items[i].path, "pending", NULL, 0, 0};
            fn(&fs, ctx);
        }
        knut_sync__files_reset(&files);
    }
    return KNUT_OK;
}
