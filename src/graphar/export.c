/*
 * `knut export --format graphar`: the rows of one query as a GraphAr vertex
 * type, or as an edge type with its two endpoint types, through the writer
 * (which chunks with COPY inside DuckDB, so memory is bounded by DuckDB's
 * memory_limit however large the result). Property types are inferred from
 * the query's Arrow schema as `knut gar import` infers them.
 */
#include "import_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "knut/graphar_write.h"

static knut_status oom(knut_error *err)
{
    return knut_error_set(err, KNUT_ENOMEM, "export: out of memory");
}

/* The inferred GraphAr type of column c; the import's error carries a
 * config position, which an export has not: its message is re-said. */
static knut_status col_type(const scol *c, char *buf, size_t cap, knut_error *err)
{
    imp_prop p = {0};
    p.name = p.column = c->name;
    knut_error sub = KNUT_ERROR_INIT;
    if (knut_graphar__import_prop_type(&p, c, c->name, buf, cap, &sub) == KNUT_OK)
        return KNUT_OK;
    return knut_error_set(err, KNUT_EINVAL,
                          "column '%s' (Arrow format '%s%s%s') has no GraphAr type; cast it in "
                          "the query (to VARCHAR, say)",
                          c->name, c->fmt, c->elem[0] ? "' of '" : "", c->elem);
}

/* Adds one group to vi or ei holding every column of cols except skip[]
 * (the edge endpoint columns); key (may be NULL) becomes the primary key. */
static knut_status add_columns(knut_graphar_vertex_info *vi, knut_graphar_edge_info *ei,
                               knut_graphar_file_type ft, const scol *cols, size_t n,
                               const char *key, const char *const *skip, size_t n_skip,
                               knut_error *err)
{
    knut_graphar_property_group *pg = NULL;
    char type[128];
    size_t added = 0;
    for (size_t i = 0; i < n; i++) {
        int skipped = 0;
        for (size_t k = 0; k < n_skip; k++)
            skipped |= strcmp(cols[i].name, skip[k]) == 0;
        if (skipped)
            continue;
        knut_status st = col_type(&cols[i], type, sizeof type, err);
        if (!st && !pg)
            st = vi ? knut_graphar_vertex_info_add_group(vi, ft, NULL, &pg, err)
                    : knut_graphar_edge_info_add_group(ei, ft, NULL, &pg, err);
        int primary = key && strcmp(cols[i].name, key) == 0;
        if (!st)
            st = knut_graphar_group_add_property(pg, cols[i].name, type, primary, !primary,
                                                 KNUT_GRAPHAR_CARD_SINGLE, err);
        if (st)
            return st;
        added++;
    }
    return added || ei ? KNUT_OK
                       : knut_error_set(err, KNUT_EINVAL, "export: the query returns no column");
}

static char *type_prefix(const char *kind, const char *type)
{
    char *p = malloc(strlen(kind) + strlen(type) + 3);
    if (p)
        sprintf(p, "%s/%s/", kind, type);
    return p;
}

/* Writes vertex type `type` from SQL relation rel (every column a
 * property, key the primary key). */
static knut_status write_vertex(knut_graphar_writer *w, knut_graphar_graph_info *gi,
                                const char *type, const char *rel, const char *name,
                                const char *key, const knut_graphar_export_options *o,
                                knut_graphar_file_type ft, knut_graphar_write_stats *ws,
                                knut_error *err)
{
    knut_duck_conn *conn = knut_graphar_writer_conn(w);
    scol *cols = NULL;
    size_t n = 0;
    knut_graphar_vertex_info *vi = NULL;
    char *prefix = type_prefix("vertex", type);
    knut_buf q = KNUT_BUF_INIT;
    knut_status st = prefix ? KNUT_OK : oom(err);
    if (!st)
        st = knut_graphar__import_describe(conn, rel, name, &cols, &n, err);
    const char *k = key ? key : n ? cols[0].name : NULL;
    if (!st && k && !knut_graphar__import_find_col(cols, n, k))
        st = knut_error_set(err, KNUT_EINVAL, "export: no column '%s' (--key) in %s", k, name);
    if (!st)
        st = knut_graphar_vertex_info_new(&vi, type, o->chunk_rows, prefix, err);
    if (!st)
        st = add_columns(vi, NULL, ft, cols, n, k, NULL, 0, err);
    if (!st && !(st = knut_graphar_graph_info_add_vertex(gi, vi, NULL, err)))
        vi = NULL; /* the graph owns it now */
    if (!st) {
        knut_buf_printf(&q, "SELECT * FROM %s AS s", rel);
        st = knut_buf_check(&q, err);
    }
    if (!st) {
        knut_graphar_vertex_source vs = {0};
        vs.query = q.data;
        vs.name = name;
        vs.keys = &k;
        vs.n_keys = 1;
        vs.order_by_key = o->order_by_key;
        st = knut_graphar_writer_write_vertices(w, type, &vs, ws, err);
    }
    knut_graphar_vertex_info_free(vi);
    knut_graphar__import_scols_free(cols, n);
    knut_buf_reset(&q);
    free(prefix);
    return st;
}

/* The endpoint types of an edge export: the distinct keys of the src
 * (and dst) column, one property `id`, indices in key order. */
static knut_status write_endpoints(knut_graphar_writer *w, knut_graphar_graph_info *gi,
                                   const knut_graphar_export_options *o,
                                   knut_graphar_file_type ft, knut_error *err)
{
    knut_buf rel = KNUT_BUF_INIT;
    knut_graphar_export_options vo = *o;
    vo.order_by_key = 1;
    knut_status st = KNUT_OK;
    for (int end = 0; !st && end < 2; end++) {
        const char *type = end ? o->dst_type : o->src_type;
        if (end && strcmp(o->src_type, o->dst_type) == 0)
            break;
        knut_buf_clear(&rel);
        knut_buf_puts(&rel, "(SELECT DISTINCT ");
        knut_duck_ident(&rel, end ? o->dst_column : o->src_column);
        knut_buf_puts(&rel, " AS id FROM __knut_export_edges");
        if (strcmp(o->src_type, o->dst_type) == 0) {
            knut_buf_puts(&rel, " UNION SELECT ");
            knut_duck_ident(&rel, o->dst_column);
            knut_buf_puts(&rel, " FROM __knut_export_edges");
        }
        knut_buf_puts(&rel, ")");
        if (!(st = knut_buf_check(&rel, err)))
            st = write_vertex(w, gi, type, rel.data, type, "id", &vo, ft, NULL, err);
    }
    knut_buf_reset(&rel);
    return st;
}

static knut_status write_edge(knut_graphar_writer *w, knut_graphar_graph_info *gi,
                              const knut_graphar_export_options *o, knut_graphar_file_type ft,
                              knut_graphar_write_stats *ws, knut_error *err)
{
    knut_duck_conn *conn = knut_graphar_writer_conn(w);
    scol *cols = NULL;
    size_t n = 0;
    knut_graphar_edge_info *ei = NULL;
    char *key = knut_graphar__edge_key(o->src_type, o->edge_type, o->dst_type, "/");
    char *prefix = key ? malloc(strlen(key) + sizeof "edge/") : NULL; /* key ends in '/' */
    if (prefix)
        sprintf(prefix, "edge/%s", key);
    const char *ends[2] = {o->src_column, o->dst_column};
    knut_status st = prefix ? KNUT_OK : oom(err);
    if (!st)
        st = knut_graphar__import_describe(conn, "__knut_export_edges", "the query", &cols, &n,
                                           err);
    for (int e = 0; !st && e < 2; e++)
        if (!knut_graphar__import_find_col(cols, n, ends[e]))
            st = knut_error_set(err, KNUT_EINVAL,
                                "export: the query has no column '%s' (the %s vertex key)",
                                ends[e], e ? "destination" : "source");
    if (!st)
        st = write_endpoints(w, gi, o, ft, err);
    const knut_graphar_vertex_info *sv = knut_graphar_graph_info_vertex(gi, o->src_type);
    const knut_graphar_vertex_info *dv = knut_graphar_graph_info_vertex(gi, o->dst_type);
    if (!st)
        st = knut_graphar_edge_info_new(&ei, o->src_type, o->edge_type, o->dst_type,
                                        o->chunk_rows, sv->chunk_size, dv->chunk_size, 1, prefix,
                                        err);
    knut_graphar_adj_list_type adj[2] = {KNUT_GRAPHAR_ORDERED_BY_SOURCE,
                                         KNUT_GRAPHAR_ORDERED_BY_DEST};
    for (int a = 0; !st && a < 2; a++)
        st = knut_graphar_edge_info_add_adj_list(ei, adj[a], ft, NULL, err);
    if (!st)
        st = add_columns(NULL, ei, ft, cols, n, NULL, ends, 2, err);
    if (!st && !(st = knut_graphar_graph_info_add_edge(gi, ei, NULL, err)))
        ei = NULL;
    if (!st) {
        knut_graphar_edge_source es = {0};
        es.table = "__knut_export_edges";
        es.name = "the query";
        es.src_keys = &ends[0];
        es.n_src_keys = 1;
        es.dst_keys = &ends[1];
        es.n_dst_keys = 1;
        st = knut_graphar_writer_write_edges(w, o->src_type, o->edge_type, o->dst_type, &es, ws,
                                             err);
    }
    knut_graphar_edge_info_free(ei);
    knut_graphar__import_scols_free(cols, n);
    free(prefix);
    free(key);
    return st;
}

knut_status knut_graphar_export_query(const char *dir, const knut_graphar_export_options *o,
                                      knut_graphar_write_stats *stats, knut_error *err)
{
    if (!o || o->version != KNUT_GRAPHAR_EXPORT_OPTIONS_VERSION || !dir || o->chunk_rows < 1 ||
        (!o->query == !o->stream) || (!o->label == !o->edge_type) ||
        (o->edge_type && (!o->src_type || !o->dst_type || !o->src_column || !o->dst_column)))
        return knut_error_set(err, KNUT_EINVAL, "export: bad options");
    knut_graphar_file_type ft = KNUT_GRAPHAR_FILE_PARQUET;
    knut_status st = knut_graphar_file_type_parse(o->file_type ? o->file_type : "parquet", &ft,
                                                  err);
    if (st)
        return st;
    knut_graphar_graph_info *gi = NULL;
    knut_graphar_writer *w = NULL;
    knut_buf sql = KNUT_BUF_INIT;
    char *staging = NULL; /* as `gar import`: a failed export leaves dir as it was */
    if ((st = knut_graphar__stage_begin(dir, o->overwrite, &staging, err)))
        return st;
    knut_graphar_writer_options wo = KNUT_GRAPHAR_WRITER_OPTIONS_INIT;
    wo.memory_limit = o->memory_limit;
    wo.threads = o->threads;
    if ((st = knut_graphar_graph_info_new(&gi, o->graph ? o->graph : "graph", NULL, err)) ||
        (st = knut_graphar_writer_new(&w, gi, staging, &wo, err)))
        goto cleanup;
    knut_duck_conn *conn = knut_graphar_writer_conn(w);
    if (o->attach) {
        /* The file is read-only to the export: a running `knut sync` may
         * hold it, and the writer's own tables stay in its memory catalog.
         * Unqualified names find the file's tables through search_path. */
        knut_buf_puts(&sql, "ATTACH ");
        knut_duck_literal(&sql, o->attach, strlen(o->attach));
        knut_buf_puts(&sql, " AS __knut_src (READ_ONLY); SET search_path = "
                            "'__knut_src.main,memory.main'");
        if ((st = knut_buf_check(&sql, err)) || (st = knut_duck_exec(conn, sql.data, err))) {
            knut_error_prefix(err, "%s: ", o->attach);
            goto cleanup;
        }
    }
    if (o->stream) {
        /* Cypher rows: FalkorDB's reply is decoded already; a temp table
         * (spilled past memory_limit) lets the writer read it twice. */
        struct ArrowArrayStream s = *o->stream;
        memset(o->stream, 0, sizeof *o->stream);
        st = knut_duck_register_stream(conn, "__knut_export_rows", &s, err);
    }
    const char *rows = o->stream ? "SELECT * FROM __knut_export_rows" : o->query;
    if (!st && o->edge_type) {
        /* The writer reads edges (and their distinct endpoints) more than
         * once: the query runs once into a table. */
        knut_buf_clear(&sql);
        knut_buf_printf(&sql, "CREATE TEMP TABLE __knut_export_edges AS %s", rows);
        if (!(st = knut_buf_check(&sql, err)))
            st = knut_duck_exec(conn, sql.data, err);
        if (!st)
            st = write_edge(w, gi, o, ft, stats, err);
    } else if (!st) {
        knut_buf_clear(&sql);
        knut_buf_printf(&sql, "(%s)", rows);
        if (!(st = knut_buf_check(&sql, err)))
            st = write_vertex(w, gi, o->label, sql.data, "the query", o->key, o, ft, stats, err);
    }
    if (!st)
        st = knut_graphar_writer_finish(w, err);
cleanup:
    knut_graphar_writer_free(w);
    w = NULL;
    if (!st) {
        st = knut_graphar__stage_commit(staging, dir, err); /* frees staging */
    } else {
        /* messages name the output, not the staging directory */
        knut_graphar__stage_abort(staging);
    }
    knut_graphar_graph_info_free(gi);
    knut_buf_reset(&sql);
    return st;
}
