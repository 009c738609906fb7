/*
 * OpenLineage run events of the sync (docs/lineage.md): one run per table
 * turn that read anything (files committed, failed or left pending), job
 * "sync.<graph>.<table>": a START stamped with the turn's start and a
 * COMPLETE, or a FAIL naming what failed, both queued when the turn ends
 * (the sync's own bookkeeping is the one place that knows what the turn
 * read). The input is the table's source (its folder, Iceberg table
 * folder or Spark table), the output the graph. Sent by the net part's
 * background sender (src/net/lineage.c): never blocks or fails a round.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "knut/net.h"
#include "sync_int.h"

struct sync_lineage {
    knut_net_lineage *sender;
    char *graph;               /* the job name's graph part */
    char *out_ns, *out_name;   /* the graph as a dataset */
};

/* scheme://host:port of url: no credentials, no path, no ;parameters. */
static char *authority_of(const char *url)
{
    const char *p = strstr(url, "://");
    const char *host = p ? p + 3 : url;
    size_t n = strcspn(host, "/?;#");
    const char *at = memchr(host, '@', n);
    if (at) {
        n -= (size_t)(at + 1 - host);
        host = at + 1;
    }
    size_t sn = p ? (size_t)(p + 3 - url) : 0;
    char *s = malloc(sn + n + 1);
    if (s) {
        memcpy(s, url, sn);
        memcpy(s + sn, host, n);
        s[sn + n] = 0;
    }
    return s;
}

/* The absolute form of path when it exists (a glob or a folder not made
 * yet stays as given). */
static char *abs_path(const char *path)
{
    char *r = realpath(path, NULL);
    return r ? r : strdup(path);
}

static void lineage_free(struct sync_lineage *l)
{
    if (!l)
        return;
    knut_net_lineage_close(l->sender);
    free(l->graph);
    free(l->out_ns);
    free(l->out_name);
    free(l);
}

knut_status knut_sync__lineage_open(struct sync_lineage **out, const knut_sync_config *cfg,
                                    const knut_sync_options *o, knut_error *err)
{
    *out = NULL;
    if (!o->lineage_url && !o->lineage_file)
        return KNUT_OK;
    struct sync_lineage *l = calloc(1, sizeof *l);
    knut_status st = KNUT_ENOMEM;
    if (!l)
        return knut_error_set(err, st, "out of memory");
    if (o->falkordb_url) {
        l->graph = strdup(o->graph ? o->graph : "knut");
        l->out_ns = authority_of(o->falkordb_url);
        l->out_name = l->graph ? strdup(l->graph) : NULL;
    } else {
        const char *store = o->store ? o->store : cfg->store ? cfg->store : "knut";
        const char *base = strrchr(store, '/');
        l->graph = strdup(base ? base + 1 : store);
        char *dot = l->graph ? strrchr(l->graph, '.') : NULL;
        if (dot && dot != l->graph)
            *dot = 0;
        l->out_ns = strdup("file");
        l->out_name = abs_path(store);
    }
    if (!l->graph || !l->out_ns || !l->out_name) {
        knut_error_set(err, st, "out of memory");
        goto cleanup;
    }
    knut_net_lineage_options lo = {o->lineage_url, o->lineage_file,      o->lineage_endpoint,
                                   o->lineage_api_key, o->lineage_namespace, o->lineage_drain_ms};
    if ((st = knut_net_lineage_open(&l->sender, &lo, err)) != KNUT_OK)
        knut_error_prefix(err, "lineage: ");
cleanup:
    if (st != KNUT_OK) {
        lineage_free(l);
        return st;
    }
    *out = l;
    return KNUT_OK;
}

/* The table's source as a dataset: ns and name malloc'd. */
static int source_of(const knut_sync_table *t, char **ns, char **name)
{
    if (t->spark) {
        const char *url = t->spark->connect ? t->spark->connect : getenv("SPARK_REMOTE");
        *ns = authority_of(url ? url : "sc://localhost");
        *name = strdup(t->spark->table ? t->spark->table : t->name);
    } else {
        *ns = strdup("file");
        *name = abs_path(t->path ? t->path : t->name);
    }
    return *ns && *name ? 0 : -1;
}

void knut_sync__lineage_table(struct sync_lineage *l, const sync_table_result *r)
{
    if (!l || !r->table || (r->files <= 0 && r->failed_files <= 0 && r->pending_files <= 0 &&
                            r->ok))
        return; /* nothing read, nothing failed: no run */
    char *ns = NULL, *name = NULL, *job = NULL;
    char msg[600];
    knut_buf b = KNUT_BUF_INIT;
    if (source_of(r->table, &ns, &name) != 0 ||
        knut_buf_printf(&b, "sync.%s.%s", l->graph, r->table->name) != KNUT_OK ||
        !(job = knut_buf_detach(&b, NULL))) {
        KNUT_LOG(KNUT_LOG_ERROR, "lineage", "lineage events of table %s dropped: out of memory",
                 r->table->name);
        goto cleanup;
    }
    char run_id[KNUT_UUID_LEN];
    knut_uuid_v7(run_id);
    /* START names the datasets only: the counts are known at the end */
    knut_net_lineage_dataset in = {ns, name, -1, -1, -1};
    knut_net_lineage_dataset outd = {l->out_ns, l->out_name, -1, -1, -1};
    int64_t end = knut_clock_wall_us();
    knut_net_lineage_event e = {0};
    e.type = "START";
    e.run_id = run_id;
    e.job = job;
    e.time_us = end - r->duration_us;
    e.job_type = "SYNC_TABLE";
    e.inputs = &in;
    e.n_inputs = 1;
    e.outputs = &outd;
    e.n_outputs = 1;
    e.seq = r->round;
    knut_net_lineage_emit(l->sender, &e);
    e.time_us = end;
    in.rows = r->rows;
    in.files = r->files;
    outd.rows = r->vertices + r->edges;
    if (r->ok && r->failed_files <= 0) {
        e.type = "COMPLETE";
    } else {
        e.type = "FAIL";
        if (!r->ok && r->error)
            snprintf(msg, sizeof msg, "%s", r->error);
        else
            snprintf(msg, sizeof msg, "%lld file(s) failed (knut sync status names them)",
                     (long long)r->failed_files);
        e.error = msg;
    }
    knut_net_lineage_emit(l->sender, &e);
cleanup:
    knut_buf_reset(&b);
    free(ns);
    free(name);
    free(job);
}

void knut_sync__lineage_close(struct sync_lineage *l)
{
    lineage_free(l);
}
