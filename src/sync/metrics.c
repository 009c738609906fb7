/*
 * Prometheus metrics of knut sync: counters per round and per table, a
 * round duration histogram and each table's last success, rendered in the
 * text exposition format 0.0.4. The table label takes only the config's
 * table names (fixed at create), so its cardinality is bounded. One mutex
 * guards everything: the round adds, the Airflow asset thread adds, the
 * HTTP server thread renders. Served live on --metrics-addr and written
 * to --metrics-file on close (docs/operations.md).
 */
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "knut/net.h"
#include "sync_int.h"

/* Round durations in seconds: sub-second idle rounds up to long backfills. */
static const double BUCKETS[] = {0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600};
#define N_BUCKETS (sizeof BUCKETS / sizeof BUCKETS[0])

typedef struct table_metrics {
    char *name;
    int64_t synced, rows, vertices, edges, deletes;
    int64_t last_success_us; /* wall clock; 0: never */
    /* edges skipped per edge type of the table's steps (fixed at create) */
    char **types;
    int64_t *skipped;
    size_t n_types;
} table_metrics;

struct sync_metrics {
    pthread_mutex_t mu;
    table_metrics *tables;
    size_t n_tables;
    int64_t rounds, rounds_failed, assets;
    int64_t bucket[N_BUCKETS]; /* non-cumulative; summed when rendered */
    int64_t dur_count;
    double dur_sum;
    knut_net_http_server *srv;
    knut_net_prom_endpoint endpoint; /* what srv answers */
};

/* The table's edge types, each once: the type label's values. */
static int add_types(table_metrics *tm, const knut_sync_table *t)
{
    size_t n = t->n_edges + t->n_fk_edges;
    if (n == 0)
        return 0;
    if (!(tm->types = calloc(n, sizeof *tm->types)) ||
        !(tm->skipped = calloc(n, sizeof *tm->skipped)))
        return -1;
    for (size_t i = 0; i < n; i++) {
        const char *type = i < t->n_edges ? t->edges[i].type : t->fk_edges[i - t->n_edges].type;
        int seen = 0;
        for (size_t k = 0; k < tm->n_types && !seen; k++)
            seen = strcmp(tm->types[k], type) == 0;
        if (!seen && !(tm->types[tm->n_types++] = strdup(type)))
            return -1;
    }
    return 0;
}

knut_status knut_sync__metrics_create(struct sync_metrics **out, const knut_sync_config *cfg,
                                      knut_error *err)
{
    KNUT_ASSERT_ARG(err, out && cfg);
    struct sync_metrics *m = calloc(1, sizeof *m);
    *out = NULL;
    if (!m)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    pthread_mutex_init(&m->mu, NULL);
    if (cfg->n_tables && !(m->tables = calloc(cfg->n_tables, sizeof *m->tables)))
        goto nomem;
    m->n_tables = cfg->n_tables;
    for (size_t i = 0; i < cfg->n_tables; i++)
        if (!(m->tables[i].name = strdup(cfg->tables[i].name)) ||
            add_types(&m->tables[i], &cfg->tables[i]) != 0)
            goto nomem;
    *out = m;
    return KNUT_OK;
nomem:
    knut_sync__metrics_free(m);
    return knut_error_set(err, KNUT_ENOMEM, "out of memory");
}

void knut_sync__metrics_free(struct sync_metrics *m)
{
    if (!m)
        return;
    knut_net_http_server_stop(m->srv); /* no reader left after this */
    for (size_t i = 0; m->tables && i < m->n_tables; i++) {
        free(m->tables[i].name);
        for (size_t k = 0; k < m->tables[i].n_types; k++)
            free(m->tables[i].types[k]);
        free(m->tables[i].types);
        free(m->tables[i].skipped);
    }
    pthread_mutex_destroy(&m->mu);
    free(m->tables);
    free(m);
}

/* The table's slot by name (the config's tables: few, a scan is fine). */
static table_metrics *find_table(struct sync_metrics *m, const knut_sync_table *t)
{
    for (size_t i = 0; t && i < m->n_tables; i++)
        if (strcmp(m->tables[i].name, t->name) == 0)
            return &m->tables[i];
    return NULL;
}

void knut_sync__metrics_table_at(struct sync_metrics *m, const sync_table_result *r,
                                 int64_t wall_us)
{
    if (!m || !r)
        return;
    pthread_mutex_lock(&m->mu);
    table_metrics *t = find_table(m, r->table);
    if (t) {
        if (r->ok && r->files > 0)
            t->synced++;
        t->rows += r->rows;
        t->vertices += r->vertices;
        t->edges += r->edges;
        t->deletes += r->deletes;
        if (r->ok) /* nothing new is a success too: the graph was up to date */
            t->last_success_us = wall_us;
    }
    pthread_mutex_unlock(&m->mu);
}

void knut_sync__metrics_table(struct sync_metrics *m, const sync_table_result *r)
{
    knut_sync__metrics_table_at(m, r, knut_clock_wall_us());
}

void knut_sync__metrics_round(struct sync_metrics *m, const knut_sync_round_stats *st, int ok)
{
    if (!m || !st)
        return;
    double secs = (double)st->duration_us / 1e6;
    pthread_mutex_lock(&m->mu);
    m->rounds++;
    if (!ok)
        m->rounds_failed++;
    for (size_t i = 0; i < N_BUCKETS; i++)
        if (secs <= BUCKETS[i]) {
            m->bucket[i]++;
            break;
        }
    m->dur_count++;
    m->dur_sum += secs;
    pthread_mutex_unlock(&m->mu);
}

void knut_sync__metrics_edges_skipped(struct sync_metrics *m, const knut_sync_table *t,
                                      const char *type, int64_t n)
{
    if (!m || !type)
        return;
    pthread_mutex_lock(&m->mu);
    table_metrics *tm = find_table(m, t);
    for (size_t k = 0; tm && k < tm->n_types; k++)
        if (strcmp(tm->types[k], type) == 0)
            tm->skipped[k] += n;
    pthread_mutex_unlock(&m->mu);
}

void knut_sync__metrics_assets_add(struct sync_metrics *m, int64_t n)
{
    if (!m)
        return;
    pthread_mutex_lock(&m->mu);
    m->assets += n;
    pthread_mutex_unlock(&m->mu);
}

static void scalar(knut_buf *b, const char *name, const char *type, const char *help,
                   int64_t v)
{
    knut_net_prom_head(b, name, type, help);
    knut_buf_printf(b, "%s %lld\n", name, (long long)v);
}

/* One series per table; field is the offset of the counter in table_metrics. */
static void per_table(knut_buf *b, const struct sync_metrics *m, const char *name,
                      const char *type, const char *help, size_t field)
{
    knut_net_prom_head(b, name, type, help);
    for (size_t i = 0; i < m->n_tables; i++) {
        const table_metrics *t = &m->tables[i];
        knut_buf_printf(b, "%s{table=\"", name);
        knut_net_prom_label(b, t->name);
        if (field == offsetof(table_metrics, last_success_us))
            knut_buf_printf(b, "\"} %.3f\n", (double)t->last_success_us / 1e6);
        else
            knut_buf_printf(b, "\"} %lld\n", (long long)*(const int64_t *)((const char *)t + field));
    }
}

knut_status knut_sync__metrics_render(struct sync_metrics *m, knut_buf *b, knut_error *err)
{
    KNUT_ASSERT_ARG(err, m && b);
    pthread_mutex_lock(&m->mu);
    scalar(b, "knut_sync_rounds_total", "counter", "Sync rounds run.", m->rounds);
    scalar(b, "knut_sync_rounds_failed_total", "counter",
           "Sync rounds with a failed file or table.", m->rounds_failed);
    per_table(b, m, "knut_sync_tables_synced_total", "counter",
              "Rounds in which the table committed new files.",
              offsetof(table_metrics, synced));
    per_table(b, m, "knut_sync_rows_ingested_total", "counter",
              "Rows read from committed files.", offsetof(table_metrics, rows));
    per_table(b, m, "knut_sync_vertices_written_total", "counter",
              "Vertices upserted into the graph.", offsetof(table_metrics, vertices));
    per_table(b, m, "knut_sync_edges_written_total", "counter", "Edges upserted into the graph.",
              offsetof(table_metrics, edges));
    per_table(b, m, "knut_sync_deletes_total", "counter", "Vertices deleted from the graph.",
              offsetof(table_metrics, deletes));
    knut_net_prom_head(b, "knut_sync_edges_skipped_total", "counter",
         "Edge rows left out because an endpoint vertex does not exist (missing_endpoints: "
         "skip).");
    for (size_t i = 0; i < m->n_tables; i++)
        for (size_t k = 0; k < m->tables[i].n_types; k++) {
            knut_buf_puts(b, "knut_sync_edges_skipped_total{table=\"");
            knut_net_prom_label(b, m->tables[i].name);
            knut_buf_puts(b, "\",type=\"");
            knut_net_prom_label(b, m->tables[i].types[k]);
            knut_buf_printf(b, "\"} %lld\n", (long long)m->tables[i].skipped[k]);
        }
    per_table(b, m, "knut_sync_last_success_timestamp_seconds", "gauge",
              "Unix time of the table's last round without failure (0: none yet).",
              offsetof(table_metrics, last_success_us));
    scalar(b, "knut_sync_assets_emitted_total", "counter",
           "Airflow asset events accepted by Airflow.", m->assets);
    knut_net_prom_head(b, "knut_sync_round_duration_seconds", "histogram", "Duration of sync rounds.");
    knut_net_prom_histogram(b, "knut_sync_round_duration_seconds", NULL, BUCKETS, m->bucket,
                            N_BUCKETS, m->dur_count, m->dur_sum);
    pthread_mutex_unlock(&m->mu);
    return knut_buf_check(b, err);
}

static knut_status render(void *ctx, knut_buf *b, knut_error *err)
{
    return knut_sync__metrics_render(ctx, b, err);
}

knut_status knut_sync__metrics_serve(struct sync_metrics *m, const char *addr, knut_error *err)
{
    KNUT_ASSERT_ARG(err, m && addr && !m->srv);
    m->endpoint.render = render;
    m->endpoint.ctx = m;
    knut_status st = knut_net_prom_serve(&m->srv, addr, &m->endpoint, err);
    if (st != KNUT_OK) {
        knut_error_prefix(err, "--metrics-addr ");
        return st;
    }
    /* tests and operators read the real port (asked 0) from this record */
    knut_log_emit(KNUT_LOG_INFO, SYNC_LOG,
                  (knut_log_field[]){KNUT_LF_STR("addr", knut_net_http_server_addr(m->srv)),
                                     KNUT_LF_INT("port", knut_net_http_server_port(m->srv))},
                  2, "metrics server listening");
    return KNUT_OK;
}

int knut_sync__metrics_port(struct sync_metrics *m)
{
    return m ? knut_net_http_server_port(m->srv) : 0;
}

knut_status knut_sync__metrics_write_file(struct sync_metrics *m, const char *file,
                                          knut_error *err)
{
    KNUT_ASSERT_ARG(err, m && file);
    knut_buf text = KNUT_BUF_INIT;
    knut_status st = knut_sync__metrics_render(m, &text, err);
    /* temp + fsync + rename: a scraper (node_exporter's textfile collector)
     * sees the old file or the new one, never half of one */
    if (st == KNUT_OK && (st = knut_file_write_atomic(file, text.data, text.len, err)) != KNUT_OK)
        knut_error_prefix(err, "--metrics-file ");
    knut_buf_reset(&text);
    return st;
}
