/*
 * The deletes of a full table's snapshot: per vertex step, the keys the
 * sink holds under the step's merge label (knut_graph_sink_vertex_keys)
 * are loaded into the staging engine ("_knut_old_v<i>") and anti-joined
 * with the snapshot ("_knut_batch"); what is left becomes a delete set.
 * Edge steps and foreign-key steps do the same with the (source keys,
 * target keys) of their edge type. The sets go into the mutation that
 * upserts the snapshot, so the embedded store commits snapshot, deletes
 * and ledger in one transaction.
 */
#include <stdlib.h>
#include <string.h>

#include "sync_int.h"

#define BATCH "_knut_batch"

typedef struct keys_ctx {
    knut_duck_conn *conn;
    const char *table;
    int64_t calls;
} keys_ctx;

/* The first stream makes the table (its column types are the sink's),
 * later ones are appended (cast as by INSERT). */
static knut_status keys_fn(void *ctx, struct ArrowArrayStream *rows, knut_error *err)
{
    keys_ctx *k = ctx;
    knut_buf q = KNUT_BUF_INIT;
    knut_status st;
    if (k->calls++ > 0)
        return knut_duck_append_stream(k->conn, k->table, rows, NULL, err);
    st = knut_duck_register_stream(k->conn, "_knut_old_tmp", rows, err);
    knut_buf_puts(&q, "CREATE OR REPLACE TABLE ");
    knut_duck_ident(&q, k->table);
    knut_buf_puts(&q, " AS SELECT * FROM _knut_old_tmp; DROP TABLE _knut_old_tmp");
    if (st == KNUT_OK && (st = knut_buf_check(&q, err)) == KNUT_OK)
        st = knut_duck_exec(k->conn, q.data, err);
    knut_buf_reset(&q);
    return st;
}

/* What the snapshot must hold for an old row: pairs (batch column, old
 * column) compared with `=`. */
typedef struct key_match {
    const char *batch[32];
    const char *old[32];
    size_t n;
} key_match;

/* DuckDB's type name of table.column in the staging engine ("" if none). */
static knut_status col_type(knut_duck_db *db, const char *table, const char *column, char *out,
                            size_t cap, knut_error *err)
{
    knut_duck_conn *c = NULL;
    knut_duck_stmt *stmt = NULL;
    struct ArrowArrayStream rs = {0};
    struct ArrowSchema schema = {0};
    struct ArrowArray a = {0};
    knut_arrow_view v = {0};
    out[0] = '\0';
    knut_status st = knut_sync__stage_conn(&c, db, err);
    if (st == KNUT_OK)
        st = knut_duck_stmt_prepare(&stmt, c,
                                    "SELECT data_type FROM duckdb_columns() WHERE "
                                    "table_name = $1 AND column_name = $2 AND database_name = "
                                    "current_database()",
                                    err);
    if (st == KNUT_OK)
        st = knut_duck_stmt_bind_text(stmt, 1, table, strlen(table), err);
    if (st == KNUT_OK)
        st = knut_duck_stmt_bind_text(stmt, 2, column, strlen(column), err);
    if (st == KNUT_OK)
        st = knut_duck_stmt_query(stmt, &rs, err);
    if (st == KNUT_OK && (rs.get_schema(&rs, &schema) != 0 || rs.get_next(&rs, &a) != 0))
        st = knut_error_set(err, KNUT_EIO, "%s", rs.get_last_error(&rs));
    if (st == KNUT_OK && a.release)
        st = knut_arrow_view_init(&v, &schema, &a, err);
    if (st == KNUT_OK && a.release && v.length > 0 && !knut_arrow_view_is_null(&v.children[0], 0)) {
        int64_t len = 0;
        const char *t = knut_arrow_view_get_str(&v.children[0], 0, &len);
        snprintf(out, cap, "%.*s", (int)len, t);
    }
    knut_arrow_view_reset(&v);
    knut_arrow_array_release(&a);
    knut_arrow_schema_release(&schema);
    knut_arrow_stream_release(&rs);
    knut_duck_stmt_free(stmt);
    knut_duck_conn_close(c);
    return st;
}

/* A type name as DuckDB prints scalar types (BIGINT, DECIMAL(18,3),
 * TIMESTAMP WITH TIME ZONE): safe to put after AS. */
static int plain_type(const char *t)
{
    if (!*t)
        return 0;
    for (; *t; t++)
        if (!((*t >= 'A' && *t <= 'Z') || (*t >= '0' && *t <= '9') || strchr(" (),_", *t)))
            return 0;
    return 1;
}

/* b.<batch col> compared with o.<old col>. Different types (an all-empty
 * CSV column reads as text; FalkorDB hands back what it holds) compare
 * after TRY_CAST of the snapshot value to the stored type: a snapshot
 * value that does not convert (NULL) matches no stored key. */
static knut_status match_expr(knut_buf *q, knut_duck_db *db, const char *old,
                              const char *bcol, const char *ocol, knut_error *err)
{
    char bt[128], ot[128];
    knut_status st = col_type(db, BATCH, bcol, bt, sizeof bt, err);
    if (st == KNUT_OK)
        st = col_type(db, old, ocol, ot, sizeof ot, err);
    if (st != KNUT_OK)
        return st;
    int cast = strcmp(bt, ot) != 0 && plain_type(ot);
    knut_buf_puts(q, cast ? "TRY_CAST(b." : "b.");
    knut_duck_ident(q, bcol);
    if (cast)
        knut_buf_printf(q, " AS %s)", ot);
    knut_buf_puts(q, " = o.");
    knut_duck_ident(q, ocol);
    return KNUT_OK;
}

/*
 * SELECT o.<old cols> AS <names> FROM old o WHERE NOT EXISTS (SELECT 1
 * FROM _knut_batch b WHERE b.<batch col> = o.<old col> AND ...). An empty
 * snapshot (rows == 0) keeps nothing: its column types may be anything
 * (a header-only CSV reads as text), so it is not joined at all.
 */
static knut_status absent_query(knut_buf *q, knut_duck_db *db, const char *old,
                                const key_match *km, const char *const *names, int64_t rows,
                                knut_error *err)
{
    knut_status st = KNUT_OK;
    for (size_t k = 0; k < km->n; k++) {
        knut_buf_puts(q, k ? ", o." : "SELECT o.");
        knut_duck_ident(q, km->old[k]);
        knut_buf_puts(q, " AS ");
        knut_duck_ident(q, names[k]);
    }
    knut_buf_puts(q, " FROM ");
    knut_duck_ident(q, old);
    knut_buf_puts(q, " AS o");
    if (rows > 0) {
        knut_buf_puts(q, " WHERE NOT EXISTS (SELECT 1 FROM " BATCH " AS b WHERE ");
        for (size_t k = 0; k < km->n && st == KNUT_OK; k++) {
            knut_buf_puts(q, k ? " AND " : "");
            st = match_expr(q, db, old, km->batch[k], km->old[k], err);
        }
        knut_buf_puts(q, ")");
    }
    return st == KNUT_OK ? knut_buf_check(q, err) : st;
}

static knut_status run_query(knut_duck_db *db, const char *sql, struct ArrowArrayStream *out,
                             knut_error *err)
{
    knut_duck_conn *c = NULL;
    knut_status st = knut_sync__stage_conn(&c, db, err);
    if (st == KNUT_OK)
        st = knut_duck_query(c, sql, out, err);
    knut_duck_conn_close(c); /* the stream keeps its connection */
    return st;
}

static knut_status vertex_deletes(knut_sync *s, const knut_sync_vertex_step *v, size_t i,
                                  int64_t rows, knut_graph_mutation *m, knut_error *err)
{
    char old[32];
    const char *props[32];
    key_match km = {{0}, {0}, 0};
    knut_buf q = KNUT_BUF_INIT;
    keys_ctx kc = {NULL, old, 0};
    knut_graph_delete_set ds = KNUT_GRAPH_DELETE_SET_INIT;
    if (v->n_keys > 32)
        return knut_error_set(err, KNUT_EINVAL, "label '%s': at most 32 keys", v->labels[0]);
    snprintf(old, sizeof old, "_knut_old_v%zu", i);
    for (size_t k = 0; k < v->n_keys; k++) {
        props[k] = v->keys[k].prop;
        km.batch[k] = v->keys[k].column;
        km.old[k] = v->keys[k].prop;
    }
    km.n = v->n_keys;
    knut_status st = knut_sync__stage_conn(&kc.conn, s->stage, err);
    if (st == KNUT_OK)
        st = knut_graph_sink_vertex_keys(s->sink, v->labels[0], props, v->n_keys, keys_fn, &kc,
                                         err);
    knut_duck_conn_close(kc.conn);
    if (st != KNUT_OK || kc.calls == 0)
        goto cleanup; /* nothing stored under the label */
    st = absent_query(&q, s->stage, old, &km, props, rows, err);
    if (st == KNUT_OK)
        st = run_query(s->stage, q.data, &ds.stream, err);
    if (st == KNUT_OK) {
        ds.label = v->labels[0];
        ds.keys = props;
        ds.n_keys = v->n_keys;
        st = knut_graph_mutation_add_delete_set(m, &ds, err);
    }
cleanup:
    if (st != KNUT_OK)
        knut_error_prefix(err, "label '%s': ", v->labels[0]);
    knut_buf_reset(&q);
    return st;
}

/* The (type, labels, keys) of edge-like step j (edges, then fk_edges)
 * and the snapshot columns holding its endpoint keys. */
typedef struct edge_desc {
    const char *type;
    const char *label[2];
    const char *keys[2][16];
    size_t n[2];
} edge_desc;

static knut_status edge_desc_of(const knut_sync_table *t, size_t j, edge_desc *d, key_match *km,
                                knut_error *err)
{
    if (j >= t->n_edges) {
        const knut_sync_fk_step *f = &t->fk_edges[j - t->n_edges];
        const knut_sync_vertex_step *v = &t->vertices[0];
        *d = (edge_desc){f->type, {v->labels[0], f->to_label}, {{v->keys[0].prop}, {f->to_key}},
                         {1, 1}};
        km->batch[0] = v->keys[0].column;
        km->batch[1] = f->column; /* null: no edge in the snapshot */
        km->n = 2;
        return KNUT_OK;
    }
    const knut_sync_edge_step *e = &t->edges[j];
    if (e->from.n_keys > 16 || e->to.n_keys > 16)
        return knut_error_set(err, KNUT_EINVAL, "at most 16 keys per endpoint");
    *d = (edge_desc){e->type, {e->from.label, e->to.label}, {{0}}, {e->from.n_keys, e->to.n_keys}};
    km->n = 0;
    for (size_t k = 0; k < e->from.n_keys; k++) {
        d->keys[0][k] = e->from.keys[k].prop;
        km->batch[km->n++] = e->from.keys[k].column;
    }
    for (size_t k = 0; k < e->to.n_keys; k++) {
        d->keys[1][k] = e->to.keys[k].prop;
        km->batch[km->n++] = e->to.keys[k].column;
    }
    return KNUT_OK;
}

static knut_status edge_deletes(knut_sync *s, const knut_sync_table *t, size_t j, int64_t rows,
                                knut_graph_mutation *m, knut_error *err)
{
    char old[32], names[32][16];
    edge_desc d = {0};
    key_match km = {{0}, {0}, 0};
    knut_buf q = KNUT_BUF_INIT;
    keys_ctx kc = {NULL, old, 0};
    snprintf(old, sizeof old, "_knut_old_e%zu", j);
    knut_status st = edge_desc_of(t, j, &d, &km, err);
    if (st != KNUT_OK)
        goto cleanup;
    /* old table and delete set columns: _knut_s<k>, _knut_d<k> */
    for (size_t k = 0; k < km.n; k++) {
        int src = k < d.n[0];
        snprintf(names[k], sizeof names[k], "_knut_%c%zu", src ? 's' : 'd', src ? k : k - d.n[0]);
        km.old[k] = names[k];
    }
    knut_graph_endpoint src = {d.label[0], d.keys[0], km.old, d.n[0]};
    knut_graph_endpoint dst = {d.label[1], d.keys[1], km.old + d.n[0], d.n[1]};
    if ((st = knut_sync__stage_conn(&kc.conn, s->stage, err)) == KNUT_OK)
        st = knut_graph_sink_edge_keys(s->sink, d.type, &src, &dst, keys_fn, &kc, err);
    knut_duck_conn_close(kc.conn);
    if (st != KNUT_OK || kc.calls == 0)
        goto cleanup; /* no such edges stored */
    knut_graph_edge_delete_set es = KNUT_GRAPH_EDGE_DELETE_SET_INIT;
    st = absent_query(&q, s->stage, old, &km, km.old, rows, err);
    if (st == KNUT_OK)
        st = run_query(s->stage, q.data, &es.stream, err);
    if (st == KNUT_OK) {
        es.type = d.type;
        es.src = src;
        es.dst = dst;
        st = knut_graph_mutation_add_edge_delete_set(m, &es, err);
    }
cleanup:
    if (st != KNUT_OK && d.type)
        knut_error_prefix(err, "edge type '%s': ", d.type);
    knut_buf_reset(&q);
    return st;
}

knut_status knut_sync__full_deletes(knut_sync *s, const knut_sync_table *t, int64_t rows,
                                    knut_graph_mutation *m, knut_error *err)
{
    knut_status st = KNUT_OK;
    for (size_t i = 0; i < t->n_vertices && st == KNUT_OK; i++)
        st = vertex_deletes(s, &t->vertices[i], i, rows, m, err);
    for (size_t j = 0; j < t->n_edges + t->n_fk_edges && st == KNUT_OK; j++)
        st = edge_deletes(s, t, j, rows, m, err);
    if (st != KNUT_OK)
        knut_error_prefix(err, "table '%s': mode full: ", t->name);
    return st;
}
