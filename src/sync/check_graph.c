/*
 * `knut sync check`, the tables together and the write targets. Labels:
 * an edge's endpoint label no vertex step writes can never be found (its
 * rows would wait, then fail); a label merged on other keys by another
 * step means two idents for one vertex (the embedded store refuses it at
 * the apply, FalkorDB silently makes second vertices); an edge that
 * finds a label by keys it is not merged on finds nothing. Targets: the
 * store or the ledger file must be writable before anything is applied
 * (else FalkorDB is written and the ledger not, and every round
 * re-applies); checked with access(2) only, nothing is created.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_int.h"
#include "knut/graph_falkor.h"

#define CONF(n) ((const knut_conf *)(n))

/* 1 when some vertex step of some table gives vertices this label. */
static int label_written(const knut_sync_config *cfg, const char *label)
{
    for (size_t i = 0; i < cfg->n_tables; i++)
        for (size_t v = 0; v < cfg->tables[i].n_vertices; v++)
            for (size_t l = 0; l < cfg->tables[i].vertices[v].n_labels; l++)
                if (strcmp(cfg->tables[i].vertices[v].labels[l], label) == 0)
                    return 1;
    return 0;
}

/* The first vertex step (table *tab) merging on label, or NULL. */
static const knut_sync_vertex_step *merger(const knut_sync_config *cfg, const char *label,
                                           const knut_sync_table **tab)
{
    for (size_t i = 0; i < cfg->n_tables; i++)
        for (size_t v = 0; v < cfg->tables[i].n_vertices; v++)
            if (strcmp(cfg->tables[i].vertices[v].labels[0], label) == 0) {
                *tab = &cfg->tables[i];
                return &cfg->tables[i].vertices[v];
            }
    return NULL;
}

/* 1 when the key property sets are equal (order aside). */
static int same_keys(const knut_sync_prop *a, size_t na, const knut_sync_prop *b, size_t nb)
{
    if (na != nb)
        return 0;
    for (size_t i = 0; i < na; i++) {
        size_t j = 0;
        while (j < nb && strcmp(a[i].prop, b[j].prop) != 0)
            j++;
        if (j == nb)
            return 0;
    }
    return 1;
}

static void keys_text(char *out, size_t cap, const knut_sync_prop *k, size_t n)
{
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; i < n && len < cap; i++) {
        int w = snprintf(out + len, cap - len, "%s%s", i ? ", " : "", k[i].prop);
        if (w < 0)
            break;
        len += (size_t)w;
    }
}

/* An edge endpoint (label, keys): written, and on the keys it is merged on. */
static void check_endpoint(sync_check *c, const knut_sync_table *t, const char *type,
                           const char *role, const char *label, const knut_sync_prop *keys,
                           size_t n_keys, const void *node)
{
    const knut_conf *n = CONF(node);
    if (!label_written(c->cfg, label)) {
        knut_sync__check_report(c, "label", t, NULL, NULL,
                                "table '%s': edge '%s' (%s:%d:%d): its %s label '%s' is written "
                                "by no table (its rows wait for vertices that never come)",
                                t->name, type, knut_conf_file(n), knut_conf_line(n),
                                knut_conf_col(n), role, label);
        return;
    }
    const knut_sync_table *wt = NULL;
    const knut_sync_vertex_step *w = merger(c->cfg, label, &wt);
    if (!w || !keys || same_keys(keys, n_keys, w->keys, w->n_keys))
        return;
    char have[256], want[256];
    keys_text(have, sizeof have, keys, n_keys);
    keys_text(want, sizeof want, w->keys, w->n_keys);
    knut_sync__check_report(c, "keys", t, NULL, NULL,
                            "table '%s': edge '%s' (%s:%d:%d) finds its %s '%s' by {%s}, but "
                            "table '%s' merges '%s' on {%s}",
                            t->name, type, knut_conf_file(n), knut_conf_line(n),
                            knut_conf_col(n), role, label, have, wt->name, label, want);
}

/* One foreign-key edge: its to-label found by one key property (its
 * from is the table's own first vertex step). */
static void check_fk(sync_check *c, const knut_sync_table *t, const knut_sync_fk_step *f)
{
    knut_sync_prop key = {.prop = f->to_key, .column = f->column, .node = f->node};
    check_endpoint(c, t, f->type, "to", f->to_label, &key, 1, f->node);
}

/* Every pair of vertex steps merging one label on other keys (each pair
 * once, by the later step). */
static void check_mergers(sync_check *c)
{
    const knut_sync_config *cfg = c->cfg;
    for (size_t i = 0; i < cfg->n_tables; i++) {
        const knut_sync_table *t = &cfg->tables[i];
        for (size_t v = 0; v < t->n_vertices; v++) {
            const knut_sync_vertex_step *s = &t->vertices[v];
            const knut_sync_table *wt = NULL;
            const knut_sync_vertex_step *w = merger(cfg, s->labels[0], &wt);
            if (w == s || !w || same_keys(s->keys, s->n_keys, w->keys, w->n_keys))
                continue;
            char have[256], want[256];
            keys_text(have, sizeof have, s->keys, s->n_keys);
            keys_text(want, sizeof want, w->keys, w->n_keys);
            const knut_conf *n = CONF(s->keys[0].node);
            knut_sync__check_report(c, "keys", t, NULL, NULL,
                                    "table '%s': label '%s' is merged on {%s} (%s:%d:%d), but "
                                    "table '%s' merges it on {%s}: one label needs the same "
                                    "keys everywhere",
                                    t->name, s->labels[0], have, knut_conf_file(n),
                                    knut_conf_line(n), knut_conf_col(n), wt->name, want);
        }
    }
}

void knut_sync__check_labels(sync_check *c)
{
    check_mergers(c);
    for (size_t i = 0; i < c->cfg->n_tables; i++) {
        const knut_sync_table *t = &c->cfg->tables[i];
        for (size_t k = 0; k < t->n_edges; k++) {
            const knut_sync_edge_step *e = &t->edges[k];
            const void *node = knut_conf_get(CONF(t->node), "edges");
            check_endpoint(c, t, e->type, "from", e->from.label, e->from.keys, e->from.n_keys,
                           e->from.keys ? e->from.keys[0].node : node);
            check_endpoint(c, t, e->type, "to", e->to.label, e->to.keys, e->to.n_keys,
                           e->to.keys ? e->to.keys[0].node : node);
        }
        for (size_t k = 0; k < t->n_fk_edges; k++)
            check_fk(c, t, &t->fk_edges[k]);
    }
}

/* A file the sync would write (what: "store", "ledger"): writable if it
 * exists, else its folder lets it be created; the folder also takes the
 * store's WAL or the ledger's temp file. */
static void check_writable(sync_check *c, const char *kind, const char *what, const char *path)
{
    struct stat sb;
    char *dir = knut_sync__dirname(path);
    if (!dir) {
        knut_sync__check_report(c, kind, NULL, path, NULL, "%s %s: out of memory", what, path);
        return;
    }
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode))
        knut_sync__check_report(c, kind, NULL, path, NULL, "%s %s is not a regular file", what,
                                path);
    else if (stat(path, &sb) == 0 && access(path, R_OK | W_OK) != 0)
        knut_sync__check_report(c, kind, NULL, path, NULL, "%s %s cannot be written: %s", what,
                                path, strerror(errno));
    else if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
        knut_sync__check_report(c, kind, NULL, path, NULL, "%s %s: its folder %s does not exist",
                                what, path, dir);
    else if (access(dir, W_OK | X_OK) != 0)
        knut_sync__check_report(c, kind, NULL, path, NULL,
                                "%s %s: its folder %s cannot be written (%s)%s", what, path, dir,
                                strerror(errno),
                                strcmp(kind, "store") == 0 ? ": DuckDB keeps its WAL there"
                                                           : ": the ledger is replaced there");
    free(dir);
}

/* The FalkorDB server answers (connect, AUTH, the graph module). */
static void check_falkordb(sync_check *c)
{
    knut_graph_falkor *g = NULL;
    knut_graph_falkor_options fo = KNUT_GRAPH_FALKOR_OPTIONS_INIT;
    knut_error e = KNUT_ERROR_INIT;
    fo.password = c->opts->falkordb_password;
    fo.command_timeout_ms = 10000;
    if (knut_graph_falkor_connect_url(&g, c->opts->falkordb_url, &fo, &e) != KNUT_OK)
        knut_sync__check_report(c, "peer", NULL, NULL, NULL, "FalkorDB: %s", e.message);
    knut_graph_falkor_close(g);
}

void knut_sync__check_targets(sync_check *c)
{
    const knut_sync_options *o = c->opts;
    const knut_sync_config *cfg = c->cfg;
    if (!c->falkordb) {
        const char *store = o->store ? o->store : cfg->store;
        if (!store)
            knut_sync__check_report(c, "store", NULL, cfg->file, NULL,
                                    "%s: no graph store: set 'store:' in the config or pass "
                                    "--store", cfg->file);
        else
            check_writable(c, "store", "store", store);
        return;
    }
    check_falkordb(c);
    const char *ledger = o->ledger ? o->ledger : cfg->ledger;
    if (o->ledger_url || (ledger && strcmp(ledger, SYNC_LEDGER_FALKORDB) == 0))
        return; /* in a server: written by the server */
    knut_buf lf = KNUT_BUF_INIT;
    if (!ledger) {
        knut_buf_printf(&lf, "%s.ledger.json", cfg->file);
        if (knut_buf_check(&lf, NULL) != KNUT_OK) {
            knut_buf_reset(&lf);
            return;
        }
        ledger = lf.data;
    }
    check_writable(c, "ledger", "ledger", ledger);
    knut_buf_reset(&lf);
}
