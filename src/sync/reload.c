/*
 * knut_sync_reload: a new mapping config between rounds (SIGHUP, loop.c).
 * Everything derived from the config is built for the new one first (the
 * sink type check, the table order with its config hashes, the status
 * notes, the Airflow sender's asset URIs); only when all of it succeeded
 * is it swapped in, so a config that fails leaves the old one running.
 * What names the sink and the ledger (`store:`, `ledger:`, `name:`) cannot
 * change under a running sync: that is another sync, started anew.
 */
#include <stdlib.h>
#include <string.h>

#include "sync_int.h"

static int same(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* KNUT_EINVAL when cfg names another sink or ledger than the running one. */
static knut_status same_sink(const knut_sync *s, const knut_sync_config *cfg,
                             const knut_sync_options *o, knut_error *err)
{
    const char *what = NULL;
    if (!o->store && !o->falkordb_url && !same(s->cfg->store, cfg->store))
        what = "store:";
    else if (!o->ledger && !same(s->cfg->ledger, cfg->ledger))
        what = "ledger:";
    else if (!same(s->cfg->name, cfg->name))
        what = "name:";
    if (what)
        return knut_error_set(err, KNUT_EINVAL,
                              "%s: '%s' changed; a running sync keeps its store and ledger "
                              "(restart it to use the new one)",
                              cfg->file, what);
    return KNUT_OK;
}

knut_status knut_sync_reload(knut_sync *s, const knut_sync_config *cfg,
                             const knut_sync_options *opts, knut_error *err)
{
    KNUT_ASSERT_ARG(err, s && cfg && s->sink);
    knut_sync_options def = KNUT_SYNC_OPTIONS_INIT;
    if (!opts)
        opts = &def;
    sync_order order = {0};
    sync_table_note *notes = NULL;
    struct sync_assets *assets = NULL;
    size_t n = cfg->n_tables;
    knut_status st = same_sink(s, cfg, opts, err);
    if (st == KNUT_OK) /* columns.c: declared types this sink cannot store */
        st = knut_sync__columns_sink_check(cfg, s->falkor != NULL, err);
    if (st == KNUT_OK)
        st = knut_sync__order_build(&order, cfg, err);
    if (st == KNUT_OK && !(notes = calloc(n ? n : 1, sizeof *notes)))
        st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
    for (size_t i = 0; st == KNUT_OK && i < n; i++) {
        const sync_table_note *old = knut_sync__note(s, cfg->tables[i].name);
        if (old)
            notes[i] = *old; /* a table kept keeps its last success */
        if (!(notes[i].table = strdup(cfg->tables[i].name)))
            st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
    }
    if (st == KNUT_OK && s->assets) /* the sender's URIs are per table */
        st = knut_sync__assets_open(&assets, cfg, opts, s->metrics, err);
    if (st != KNUT_OK) {
        knut_sync__order_reset(&order);
        knut_sync__notes_free(notes, n);
        return st;
    }
    if (s->assets) {
        knut_sync__assets_close(s->assets); /* sends (or drops, logged) what it holds */
        s->assets = assets;
    }
    knut_sync__order_reset(&s->order);
    s->order = order;
    knut_sync__notes_free(s->notes, s->n_notes);
    s->notes = notes;
    s->n_notes = n;
    s->cfg = cfg;
    free(s->no_files); /* check.c: per table of the old config; warned anew */
    s->no_files = NULL;
    s->status_dirty = 1;
    return KNUT_OK;
}
