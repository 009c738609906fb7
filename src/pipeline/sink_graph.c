/*
 * A flow into a graph sink (docs/pipelines.md "Graph sinks"). The rows
 * the flow's query yields this update (only the new rows of its STREAM()
 * reads, only its new files) are staged in a table of the storage, mapped
 * onto the graph by the mapping code sync uses (knut_graph_map_mutation)
 * and applied through the same knut_graph_sink; then the flow's
 * checkpoints (stream offsets, files, ONCE mark) are committed in the
 * storage.
 *
 * Exactly once, embedded store: the stream offsets are also written into
 * the store, by the sink's commit callback inside the store's own
 * transaction, and an update starts from the store's offsets when they
 * are ahead of the storage's (a crash between the two commits): each row
 * is applied once. FalkorDB: the checkpoints are committed after the
 * server acknowledged every batch; a crash before that re-applies the
 * update's rows, which is harmless (every write is a MERGE of the same
 * values): at least once, with an idempotent result.
 */
#include <stdlib.h>
#include <string.h>

#include "knut/graph.h"
#include "pipeline_int.h"

#define STORE_OFFSETS "_knut_pipeline_offsets"

typedef struct ledger {
    const knut_pipeline__run *r;
    const knut_pipeline_flow *f;
    const knut_pipeline__stream *sr;
    size_t nsr;
} ledger;

/* The sink's commit callback: the store's transaction is open on conn. */
static knut_status store_offsets_save(void *ctx, knut_duck_conn *conn, knut_error *err)
{
    const ledger *l = ctx;
    if (!conn || l->nsr == 0)
        return KNUT_OK;
    knut_status st = knut_duck_exec(conn,
                                    "CREATE TABLE IF NOT EXISTS " STORE_OFFSETS
                                    " (pipeline VARCHAR, flow VARCHAR, source VARCHAR, "
                                    "hi BIGINT, PRIMARY KEY (pipeline, flow, source))",
                                    err);
    for (size_t i = 0; st == KNUT_OK && i < l->nsr; i++) {
        char hi[32];
        snprintf(hi, sizeof hi, "%lld", (long long)l->sr[i].hi);
        const char *binds[] = {l->r->p->name, l->f->name, l->sr[i].name, hi};
        st = knut_pipeline__exec(conn,
                                 "INSERT OR REPLACE INTO " STORE_OFFSETS
                                 " VALUES ($1, $2, $3, $4::BIGINT)",
                                 binds, 4, NULL, err);
    }
    return st;
}

/* Moves each stream's lower bound up to the store's offset where that is
 * ahead (the store committed, the storage did not). *moved: any was. */
static knut_status store_offsets_catch_up(knut_graph_store *store, knut_pipeline__run *r,
                                          const knut_pipeline_flow *f, knut_pipeline__stream *sr,
                                          size_t nsr, int *moved, knut_error *err)
{
    knut_duck_conn *c = knut_graph_store_conn(store);
    int64_t exists = 0;
    *moved = 0;
    const char *tb[] = {STORE_OFFSETS};
    knut_status st = knut_pipeline__scalar_i64(
        c, "SELECT count(*) FROM duckdb_tables() WHERE table_name = $1", tb, 1, &exists, err);
    for (size_t i = 0; st == KNUT_OK && exists && i < nsr; i++) {
        int64_t hi = 0;
        const char *binds[] = {r->p->name, f->name, sr[i].name};
        st = knut_pipeline__scalar_i64(c,
                                       "SELECT hi FROM " STORE_OFFSETS
                                       " WHERE pipeline = $1 AND flow = $2 AND source = $3",
                                       binds, 3, &hi, err);
        if (st == KNUT_OK && hi > sr[i].lo) {
            sr[i].lo = hi < sr[i].hi ? hi : sr[i].hi;
            *moved = 1;
        }
    }
    return st;
}

/* Opens the sink ds names; *store is set for the embedded store. */
static knut_status sink_open(const knut_pipeline_graph_sink *gs, knut_graph_sink **sink,
                             knut_graph_store **store, knut_graph_falkor **falkor,
                             knut_error *err)
{
    if (gs->store) {
        knut_status st = knut_graph_store_open(store, gs->store, err);
        if (st == KNUT_OK)
            *sink = knut_graph_store_sink(*store);
        return st == KNUT_OK ? KNUT_OK : knut_error_prefix(err, "store '%s': ", gs->store);
    }
    knut_graph_falkor_options fo = KNUT_GRAPH_FALKOR_OPTIONS_INIT;
    fo.password = gs->password_env ? getenv(gs->password_env) : NULL; /* never logged */
    fo.command_timeout_ms = 300000; /* a hung server fails the flow, not the run forever */
    knut_status st = knut_graph_falkor_connect_url(falkor, gs->falkordb, &fo, err);
    if (st == KNUT_OK)
        st = knut_graph_falkor_sink_new(sink, *falkor, gs->graph, NULL, err);
    return st;
}

/* The storage's checkpoints of the update, in one transaction. */
static knut_status checkpoints_save(knut_pipeline__run *r, const knut_pipeline_flow *f,
                                    const knut_pipeline__strvec *files,
                                    const knut_pipeline__stream *sr, size_t nsr,
                                    knut_error *err)
{
    knut_status st = knut_duck_conn_begin(r->conn, err);
    for (size_t i = 0; st == KNUT_OK && files && i < files->n; i++) {
        char run[32];
        snprintf(run, sizeof run, "%lld", (long long)r->run_id);
        const char *binds[] = {f->name, files->v[i], run};
        st = knut_pipeline__exec(r->conn, "INSERT INTO _knut.files VALUES ($1, $2, $3::BIGINT)",
                                 binds, 3, NULL, err);
    }
    if (st == KNUT_OK)
        st = knut_pipeline__offsets_save(r, f, sr, nsr, err);
    if (st == KNUT_OK && f->kind == KNUT_PIPELINE_FLOW_APPEND_ONCE) {
        const char *binds[] = {f->name};
        st = knut_pipeline__exec(r->conn, "INSERT OR REPLACE INTO _knut.flows VALUES ($1, true)",
                                 binds, 1, NULL, err);
    }
    if (st == KNUT_OK)
        return knut_duck_conn_commit(r->conn, err);
    knut_error ignored = KNUT_ERROR_INIT;
    knut_duck_conn_rollback(r->conn, &ignored);
    return st;
}

knut_status knut_pipeline__sink_update(knut_pipeline__run *r, knut_pipeline_flow *f,
                                       const knut_pipeline_dataset *ds, const char *query,
                                       const knut_pipeline__strvec *files,
                                       knut_pipeline__stream *sr, size_t nsr,
                                       knut_buf *details, knut_error *err)
{
    const knut_pipeline_graph_sink *gs = ds->graph_sink;
    size_t dsi = (size_t)(ds - r->p->datasets);
    knut_graph_sink *sink = NULL;
    knut_graph_store *store = NULL;
    knut_graph_falkor *falkor = NULL;
    knut_graph_mutation *m = NULL;
    knut_graph_sink_stats stats = {0};
    knut_buf sql = KNUT_BUF_INIT, rel = KNUT_BUF_INIT;
    int64_t rows = 0;
    int staged = 0;
    knut_status st = sink_open(gs, &sink, &store, &falkor, err);
    if (st == KNUT_OK && store && nsr && !r->reset[dsi]) {
        int moved = 0;
        st = store_offsets_catch_up(store, r, f, sr, nsr, &moved, err);
        if (st == KNUT_OK && moved) { /* the views show rows lo < rowid <= hi */
            knut_pipeline__stream_views_drop(r, sr, nsr);
            st = knut_pipeline__stream_views(r, sr, nsr, err);
        }
    }
    /* staged in a table of the storage, committed: the mapping reads it
     * on connections of its own */
    char *staging = malloc(strlen(f->name) + sizeof "__sink_rows");
    if (!staging && st == KNUT_OK)
        st = knut_error_set(err, KNUT_ENOMEM, "pipeline: out of memory");
    if (staging) {
        strcpy(staging, f->name);
        strcat(staging, "__sink_rows");
        knut_buf_puts(&rel, "_knut.");
        knut_duck_ident(&rel, staging);
        free(staging);
    }
    knut_buf_printf(&sql, "CREATE OR REPLACE TABLE %s AS %s", rel.data ? rel.data : "", query);
    if (st == KNUT_OK && (st = knut_buf_check(&rel, err)) == KNUT_OK)
        st = knut_pipeline__step(r, &sql, NULL, 0, err);
    staged = st == KNUT_OK;
    if (st == KNUT_OK) {
        knut_buf_printf(&sql, "SELECT count(*) FROM %s", rel.data);
        if ((st = knut_buf_check(&sql, err)) == KNUT_OK)
            st = knut_pipeline__scalar_i64(r->conn, sql.data, NULL, 0, &rows, err);
        knut_buf_reset(&sql);
    }
    if (st == KNUT_OK)
        st = knut_graph_map_mutation(r->db, rel.data, gs->map, gs->missing_endpoints, &m, err);
    if (st == KNUT_OK) {
        ledger l = {r, f, sr, nsr};
        knut_graph_sink_commit commit = {store_offsets_save, &l};
        st = knut_graph_sink_apply(sink, m, &commit, &stats, err);
        if (st != KNUT_OK)
            knut_error_prefix(err, "sink '%s': ", ds->name);
    }
    knut_graph_mutation_free(m); /* its streams hold connections reading the staged rows */
    m = NULL;
    if (st == KNUT_OK)
        st = checkpoints_save(r, f, files, sr, nsr, err);
    if (staged) {
        knut_error ignored = KNUT_ERROR_INIT;
        knut_buf_printf(&sql, "DROP TABLE IF EXISTS %s", rel.data);
        knut_pipeline__step(r, &sql, NULL, 0, &ignored);
    }
    if (st == KNUT_OK) {
        r->reset[dsi] = 0;
        knut_buf_printf(details,
                        "{\"rows_in\":%lld,\"rows_out\":%lld,\"vertices_written\":%lld,"
                        "\"edges_written\":%lld,\"edges_skipped\":%lld",
                        (long long)rows, (long long)rows, (long long)stats.vertices_written,
                        (long long)stats.edges_written, (long long)stats.edges_skipped);
        if (files)
            knut_buf_printf(details, ",\"files_read\":%zu", files->n);
        knut_pipeline__streams_json(details, "streams_read", sr, nsr);
        knut_buf_putc(details, '}');
    }
    knut_buf_reset(&sql);
    knut_buf_reset(&rel);
    if (store)
        knut_graph_store_close(store); /* closes its sink too */
    else
        knut_graph_sink_close(sink);
    knut_graph_falkor_close(falkor);
    return st;
}
