/*
 * Airflow asset events after each round (docs/operations.md): one event
 * per table that committed files, handed to the net part's background
 * sender (src/net/airflow.c), so Airflow being slow, down or misconfigured
 * never blocks or fails a sync. This file only names the assets and fills
 * each event's extra. All records go to the log target "assets".
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "knut/net.h"
#include "sync_int.h"

struct sync_assets {
    knut_net_airflow *sender;
    struct sync_metrics *metrics; /* borrowed; outlives the sender */
    char **uris, **sources;       /* per config table: asset URI, absolute path */
    size_t n_tables;
    const knut_sync_config *cfg;
};

/* knut://<graph or store name>/<table>, each part percent-encoded. */
static char *default_uri(const knut_sync_config *cfg, const knut_sync_options *o,
                         const char *table)
{
    char name[256];
    if (o->falkordb_url) {
        snprintf(name, sizeof name, "%s", o->graph ? o->graph : "knut");
    } else {
        const char *store = o->store ? o->store : cfg->store ? cfg->store : "knut";
        const char *base = strrchr(store, '/');
        snprintf(name, sizeof name, "%s", base ? base + 1 : store);
        char *dot = strrchr(name, '.');
        if (dot && dot != name)
            *dot = 0;
    }
    char *n = knut_net_http_escape(name), *t = knut_net_http_escape(table), *uri = NULL;
    knut_buf b = KNUT_BUF_INIT;
    if (n && t) {
        knut_buf_printf(&b, "knut://%s/%s", n, t);
        uri = knut_buf_detach(&b, NULL);
    }
    free(n);
    free(t);
    return uri;
}

static void on_sent(void *ctx)
{
    knut_sync__metrics_assets_add(ctx, 1);
}

int knut_sync__asset_uri_check(const char *uri, char *why, size_t n)
{
    return knut_net_airflow_uri_check(uri, why, n);
}

knut_status knut_sync__assets_open(struct sync_assets **out, const knut_sync_config *cfg,
                                   const knut_sync_options *o, struct sync_metrics *metrics,
                                   knut_error *err)
{
    *out = NULL;
    if (!o->airflow_url)
        return KNUT_OK;
    if (!o->airflow_user || !*o->airflow_user || !o->airflow_password)
        return knut_error_set(err, KNUT_EINVAL,
                              "Airflow asset events need a user and a password "
                              "(--airflow-user, KNUT_AIRFLOW_PASSWORD or --airflow-password-file)");
    struct sync_assets *a = calloc(1, sizeof *a);
    knut_status st = KNUT_ENOMEM;
    size_t nt = cfg->n_tables ? cfg->n_tables : 1;
    if (!a || !(a->uris = calloc(nt, sizeof *a->uris)) ||
        !(a->sources = calloc(nt, sizeof *a->sources))) {
        knut_error_set(err, st, "out of memory");
        goto cleanup;
    }
    a->cfg = cfg;
    a->metrics = metrics;
    a->n_tables = cfg->n_tables;
    for (size_t i = 0; i < cfg->n_tables; i++) {
        const knut_sync_table *t = &cfg->tables[i];
        a->uris[i] = t->asset ? strdup(t->asset) : default_uri(cfg, o, t->name);
        /* consumers read extra.source: absolute, whatever the working folder */
        a->sources[i] = realpath(t->path, NULL);
        if (!a->sources[i])
            a->sources[i] = strdup(t->path); /* a glob, or not there yet */
        if (!a->uris[i] || !a->sources[i]) {
            knut_error_set(err, st, "out of memory");
            goto cleanup;
        }
    }
    knut_net_airflow_options ao = {0};
    ao.url = o->airflow_url;
    ao.user = o->airflow_user;
    ao.password = o->airflow_password;
    ao.instance = o->instance;
    ao.drain_ms = o->airflow_drain_ms;
    ao.on_sent = on_sent;
    ao.on_sent_ctx = metrics;
    if ((st = knut_net_airflow_open(&a->sender, &ao, err)) != KNUT_OK)
        knut_error_prefix(err, "--airflow-url: ");
cleanup:
    if (st != KNUT_OK) {
        knut_sync__assets_close(a);
        return st;
    }
    *out = a;
    return KNUT_OK;
}

void knut_sync__assets_round(struct sync_assets *a, const sync_table_result *r, size_t n)
{
    if (!a)
        return;
    for (size_t i = 0; i < n; i++) {
        if (!r[i].ok || r[i].files <= 0 || !r[i].table)
            continue;
        size_t ti = (size_t)(r[i].table - a->cfg->tables);
        if (ti >= a->n_tables)
            continue;
        char ts[40];
        time_t secs = (time_t)(knut_clock_wall_us() / 1000000);
        struct tm tm;
        gmtime_r(&secs, &tm);
        strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm);
        json_t *x = json_pack("{s:I, s:s, s:I, s:I, s:I, s:I, s:I, s:s, s:s}", "round",
                              (json_int_t)r[i].round, "table", r[i].table->name, "rows",
                              (json_int_t)r[i].rows, "files", (json_int_t)r[i].files,
                              "vertices", (json_int_t)r[i].vertices, "edges",
                              (json_int_t)r[i].edges, "deletes", (json_int_t)r[i].deletes,
                              "source", a->sources[ti], "synced_at", ts);
        char *text = x ? json_dumps(x, JSON_COMPACT) : NULL;
        if (text)
            knut_net_airflow_emit(a->sender, a->uris[ti], r[i].table->name, r[i].round, text);
        else
            KNUT_LOG(KNUT_LOG_ERROR, "assets", "asset event for %s dropped: out of memory",
                     r[i].table->name);
        free(text);
        json_decref(x);
    }
}

void knut_sync__assets_close(struct sync_assets *a)
{
    if (!a)
        return;
    knut_net_airflow_close(a->sender);
    for (size_t i = 0; i < a->n_tables; i++) {
        free(a->uris ? a->uris[i] : NULL);
        free(a->sources ? a->sources[i] : NULL);
    }
    free(a->uris);
    free(a->sources);
    free(a);
}
