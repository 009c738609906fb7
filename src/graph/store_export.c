/*
 * GraphAr export of the embedded store (S6). The store only decides the
 * mapping (label table -> vertex type, (src label, type, dst label) ->
 * edge type, DuckDB column types -> GraphAr types); the GraphAr writer
 * does the writing. Rows flow as Arrow streams from a query on the
 * store's connection into a table on the writer's own DuckDB, one type at
 * a time, so neither side holds more than DuckDB decides to.
 */
#include "store_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "knut/graphar.h"

#define SRC_TABLE "_knut_export_src"

/* GraphAr type for a DuckDB column type; NULL: written as a string. */
static const char *gar_type(const char *t, int csv)
{
    static const struct {
        const char *duck, *gar;
    } map[] = {
        {"BOOLEAN", "bool"},       {"TINYINT", "int32"},     {"SMALLINT", "int32"},
        {"INTEGER", "int32"},      {"UTINYINT", "int32"},    {"USMALLINT", "int32"},
        {"BIGINT", "int64"},       {"UINTEGER", "int64"},    {"FLOAT", "float"},
        {"DOUBLE", "double"},      {"VARCHAR", "string"},    {"DATE", "date"},
        {"TIMESTAMP", "timestamp"}, {"TIMESTAMP_S", "timestamp"},
        {"TIMESTAMP_MS", "timestamp"}, {"TIMESTAMP_NS", "timestamp"},
        {"TIMESTAMP WITH TIME ZONE", "timestamp"},
        {"INTEGER[]", "list<int32>"}, {"BIGINT[]", "list<int64>"}, {"FLOAT[]", "list<float>"},
        {"DOUBLE[]", "list<double>"}, {"VARCHAR[]", "list<string>"},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(map[i].duck, t) == 0)
            return csv && strncmp(map[i].gar, "list", 4) == 0 ? NULL : map[i].gar;
    return NULL;
}

/* The user columns of a table: name, DuckDB type. */
static knut_status user_columns(knut_graph_store *s, const char *table, knut_gs_rows *out,
                                knut_error *err)
{
    return knut_graph__store_rows(
        s->conn,
        "SELECT column_name, data_type FROM duckdb_columns() WHERE database_name "
        "= current_database() AND schema_name = 'main' AND table_name = $1 AND "
        "NOT starts_with(column_name, '" KNUT_GS_RESERVED "') ORDER BY column_index",
        &table, 1, out, err);
}

/* Adds one group with every column as a property (keys primary); appends
 * "s.col" (cast to VARCHAR when GraphAr has no such type) to sel. */
static knut_status add_props(knut_graphar_property_group *g, const knut_gs_rows *cols,
                             const char *keys_json, int csv, knut_buf *sel, knut_error *err)
{
    knut_status st = KNUT_OK;
    for (size_t c = 0; c < cols->n_rows && st == KNUT_OK; c++) {
        const char *name = knut_gs__cell(cols, c, 0);
        const char *t = gar_type(knut_gs__cell(cols, c, 1), csv);
        int primary = 0;
        if (keys_json) {
            knut_buf q = KNUT_BUF_INIT;
            knut_buf_put_json_str(&q, name, strlen(name));
            primary = q.data && strstr(keys_json, q.data) != NULL;
            knut_buf_reset(&q);
        }
        st = knut_graphar_group_add_property(g, name, t ? t : "string", primary, !primary,
                                             KNUT_GRAPHAR_CARD_SINGLE, err);
        knut_buf_puts(sel, t ? ", s." : ", CAST(s.");
        knut_duck_ident(sel, name);
        if (!t)
            knut_buf_puts(sel, " AS VARCHAR)");
        knut_buf_puts(sel, " AS ");
        knut_duck_ident(sel, name);
    }
    return st;
}

/* Runs sql (binds) on the store and loads its rows into the writer. */
static knut_status feed(knut_graph_store *s, knut_graphar_writer *w, const char *sql,
                        const char *const *binds, size_t n, knut_error *err)
{
    struct ArrowArrayStream stream = {0};
    knut_status st = knut_graph__store_query(s->conn, sql, binds, n, &stream, err);
    if (st == KNUT_OK)
        st = knut_duck_register_stream(knut_graphar_writer_conn(w), SRC_TABLE, &stream, err);
    return st;
}

static knut_status export_vertex(knut_graph_store *s, knut_graphar_graph_info *gi,
                                 knut_graphar_writer *w, const char *label, const char *table,
                                 const char *keys_json, const knut_graph_store_export_options *o,
                                 knut_graphar_file_type ft, knut_error *err)
{
    knut_gs_rows cols = {0}, labels = {0};
    knut_graphar_vertex_info *vi = NULL;
    knut_graphar_property_group *g = NULL;
    knut_buf sql = KNUT_BUF_INIT, names = KNUT_BUF_INIT;
    char **label_cols = NULL;
    const char **binds = NULL;
    knut_buf lsql = KNUT_BUF_INIT;
    knut_status st = user_columns(s, table, &cols, err);
    if (st != KNUT_OK)
        goto cleanup;
    /* The other labels its vertices carry become GraphAr labels. */
    knut_buf_puts(&lsql, "SELECT DISTINCT l.label FROM \"" KNUT_GS_MEMBERS "\" AS l SEMI JOIN ");
    knut_duck_ident(&lsql, table);
    knut_buf_puts(&lsql, " AS v ON v.\"" KNUT_GS_VID "\" = l.vid WHERE l.label <> $1 ORDER BY 1");
    if ((st = knut_buf_check(&lsql, err)) != KNUT_OK ||
        (st = knut_graph__store_rows(s->conn, lsql.data, &label, 1, &labels, err)) != KNUT_OK)
        goto cleanup;
    if ((st = knut_graphar_vertex_info_new(&vi, label, o->vertex_chunk_size, NULL, err)) != KNUT_OK)
        goto cleanup;
    for (size_t l = 0; l < labels.n_rows && st == KNUT_OK; l++)
        st = knut_graphar_vertex_info_add_label(vi, knut_gs__cell(&labels, l, 0), err);
    if (st == KNUT_OK && cols.n_rows > 0)
        st = knut_graphar_vertex_info_add_group(vi, ft, NULL, &g, err);
    knut_buf_puts(&sql, "SELECT s.\"" KNUT_GS_VID "\"");
    if (st == KNUT_OK && g)
        st = add_props(g, &cols, keys_json, ft == KNUT_GRAPHAR_FILE_CSV, &sql, err);
    if (st != KNUT_OK)
        goto cleanup;
    label_cols = calloc(labels.n_rows + 1, sizeof *label_cols);
    binds = calloc(labels.n_rows + 1, sizeof *binds);
    if (!label_cols || !binds) {
        st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
        goto cleanup;
    }
    for (size_t l = 0; l < labels.n_rows; l++) {
        binds[l] = knut_gs__cell(&labels, l, 0);
        knut_buf_clear(&names);
        knut_buf_printf(&names, "_knut_label_%zu", l);
        if (!(label_cols[l] = knut_buf_detach(&names, NULL))) {
            st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
            goto cleanup;
        }
        knut_buf_printf(&sql, ", coalesce(list_contains(m.labels, $%zu), false) AS \"%s\"", l + 1,
                        label_cols[l]);
    }
    knut_buf_puts(&sql, " FROM ");
    knut_duck_ident(&sql, table);
    knut_buf_puts(&sql, " AS s LEFT JOIN (SELECT vid, list(label) AS labels FROM \"" KNUT_GS_MEMBERS
                        "\" GROUP BY vid) AS m ON m.vid = s.\"" KNUT_GS_VID "\" ORDER BY s.\""
                        KNUT_GS_VID "\"");
    if ((st = knut_buf_check(&sql, err)) != KNUT_OK)
        goto cleanup;
    if ((st = knut_graphar_graph_info_add_vertex(gi, vi, NULL, err)) != KNUT_OK)
        goto cleanup;
    vi = NULL; /* the graph owns it now */
    if ((st = feed(s, w, sql.data, binds, labels.n_rows, err)) != KNUT_OK)
        goto cleanup;
    const char *key = KNUT_GS_VID;
    knut_graphar_vertex_source src = {NULL, SRC_TABLE, label, &key, 1,
                                      (const char *const *)label_cols, 0};
    st = knut_graphar_writer_write_vertices(w, label, &src, NULL, err);
cleanup:
    if (st != KNUT_OK)
        knut_error_prefix(err, "exporting vertex label '%s': ", label);
    for (size_t l = 0; label_cols && l < labels.n_rows; l++)
        free(label_cols[l]);
    free(label_cols);
    free(binds);
    knut_graphar_vertex_info_free(vi);
    knut_graph__store_rows_reset(&cols);
    knut_graph__store_rows_reset(&labels);
    knut_buf_reset(&sql);
    knut_buf_reset(&names);
    knut_buf_reset(&lsql);
    return st;
}

static knut_status export_edge(knut_graph_store *s, knut_graphar_graph_info *gi,
                               knut_graphar_writer *w, const char *type, const char *table,
                               const char *src_label, const char *dst_label,
                               const knut_graph_store_export_options *o,
                               knut_graphar_file_type ft, knut_error *err)
{
    knut_gs_rows cols = {0};
    knut_graphar_edge_info *ei = NULL;
    knut_graphar_property_group *g = NULL;
    knut_buf sql = KNUT_BUF_INIT;
    knut_status st = user_columns(s, table, &cols, err);
    if (st == KNUT_OK)
        st = knut_graphar_edge_info_new(&ei, src_label, type, dst_label, o->edge_chunk_size,
                                        o->vertex_chunk_size, o->vertex_chunk_size, 1, NULL, err);
    for (int t = 0; t < 4 && st == KNUT_OK; t++)
        if (o->adj_lists & (1u << t))
            st = knut_graphar_edge_info_add_adj_list(ei, (knut_graphar_adj_list_type)t, ft, NULL,
                                                     err);
    if (st == KNUT_OK && cols.n_rows > 0)
        st = knut_graphar_edge_info_add_group(ei, ft, NULL, &g, err);
    knut_buf_puts(&sql, "SELECT s.\"" KNUT_GS_SRC "\", s.\"" KNUT_GS_DST "\"");
    if (st == KNUT_OK && g)
        st = add_props(g, &cols, NULL, ft == KNUT_GRAPHAR_FILE_CSV, &sql, err);
    knut_buf_puts(&sql, " FROM ");
    knut_duck_ident(&sql, table);
    knut_buf_puts(&sql, " AS s WHERE \"" KNUT_GS_SRC_LABEL "\" = $1 AND \"" KNUT_GS_DST_LABEL
                        "\" = $2");
    if (st == KNUT_OK)
        st = knut_buf_check(&sql, err);
    if (st == KNUT_OK && (st = knut_graphar_graph_info_add_edge(gi, ei, NULL, err)) == KNUT_OK)
        ei = NULL;
    const char *binds[] = {src_label, dst_label};
    if (st == KNUT_OK)
        st = feed(s, w, sql.data, binds, 2, err);
    if (st == KNUT_OK) {
        const char *sk = KNUT_GS_SRC, *dk = KNUT_GS_DST;
        knut_graphar_edge_source src = {NULL, SRC_TABLE, type, &sk, 1, &dk, 1,
                                        KNUT_GRAPHAR_UNKNOWN_ERROR, NULL};
        st = knut_graphar_writer_write_edges(w, src_label, type, dst_label, &src, NULL, err);
    }
    if (st != KNUT_OK)
        knut_error_prefix(err, "exporting edges '%s' (%s -> %s): ", type, src_label, dst_label);
    knut_graphar_edge_info_free(ei);
    knut_graph__store_rows_reset(&cols);
    knut_buf_reset(&sql);
    return st;
}

knut_status knut_graph_store_export_graphar(knut_graph_store *store, const char *out_dir,
                                            const knut_graph_store_export_options *opts,
                                            knut_error *err)
{
    KNUT_ASSERT_ARG(err, store != NULL && out_dir != NULL && *out_dir);
    KNUT_CHECK_VERSION(opts, KNUT_GRAPH_STORE_EXPORT_OPTIONS_VERSION, err);
    knut_graph_store_export_options o = KNUT_GRAPH_STORE_EXPORT_OPTIONS_INIT;
    if (opts)
        o = *opts;
    if (!o.name)
        o.name = "graph";
    if (o.vertex_chunk_size <= 0)
        o.vertex_chunk_size = 262144;
    if (o.edge_chunk_size <= 0)
        o.edge_chunk_size = 4194304;
    if ((o.adj_lists & 0xfu) == 0)
        o.adj_lists = (1u << KNUT_GRAPHAR_ORDERED_BY_SOURCE) | (1u << KNUT_GRAPHAR_ORDERED_BY_DEST);
    knut_graphar_file_type ft = KNUT_GRAPHAR_FILE_PARQUET;
    if (o.file_type && strcmp(o.file_type, "csv") == 0)
        ft = KNUT_GRAPHAR_FILE_CSV;
    else if (o.file_type && strcmp(o.file_type, "parquet") != 0)
        return knut_error_set(err, KNUT_EINVAL, "export: file type is parquet or csv, not '%s'",
                              o.file_type);

    knut_graphar_graph_info *gi = NULL;
    knut_graphar_writer *w = NULL;
    knut_gs_rows vt = {0}, et = {0}, pairs = {0};
    knut_buf sql = KNUT_BUF_INIT;
    knut_graphar_writer_options wo = KNUT_GRAPHAR_WRITER_OPTIONS_INIT;
    wo.overwrite = o.overwrite;
    knut_status st = knut_graphar_graph_info_new(&gi, o.name, NULL, err);
    if (st == KNUT_OK)
        st = knut_graphar_writer_new(&w, gi, out_dir, &wo, err);
    if (st == KNUT_OK)
        st = knut_graph__store_rows(store->conn,
                                    "SELECT label, table_name, keys FROM \"" KNUT_GS_VLABELS
                                    "\" ORDER BY label",
                                    NULL, 0, &vt, err);
    if (st == KNUT_OK)
        st = knut_graph__store_rows(
            store->conn, "SELECT type, table_name FROM \"" KNUT_GS_ETYPES "\" ORDER BY type", NULL,
            0, &et, err);
    for (size_t v = 0; v < vt.n_rows && st == KNUT_OK; v++)
        st = export_vertex(store, gi, w, knut_gs__cell(&vt, v, 0), knut_gs__cell(&vt, v, 1),
                           knut_gs__cell(&vt, v, 2), &o, ft, err);
    for (size_t e = 0; e < et.n_rows && st == KNUT_OK; e++) {
        knut_buf_clear(&sql);
        knut_buf_puts(&sql, "SELECT DISTINCT \"" KNUT_GS_SRC_LABEL "\", \"" KNUT_GS_DST_LABEL
                            "\" FROM ");
        knut_duck_ident(&sql, knut_gs__cell(&et, e, 1));
        knut_buf_puts(&sql, " ORDER BY 1, 2");
        if ((st = knut_buf_check(&sql, err)) != KNUT_OK ||
            (st = knut_graph__store_rows(store->conn, sql.data, NULL, 0, &pairs, err)) != KNUT_OK)
            break;
        for (size_t p = 0; p < pairs.n_rows && st == KNUT_OK; p++)
            st = export_edge(store, gi, w, knut_gs__cell(&et, e, 0), knut_gs__cell(&et, e, 1),
                             knut_gs__cell(&pairs, p, 0), knut_gs__cell(&pairs, p, 1), &o, ft,
                             err);
        knut_graph__store_rows_reset(&pairs);
    }
    if (st == KNUT_OK)
        st = knut_graphar_writer_finish(w, err);
    knut_graphar_writer_free(w);
    knut_graphar_graph_info_free(gi);
    knut_graph__store_rows_reset(&vt);
    knut_graph__store_rows_reset(&et);
    knut_graph__store_rows_reset(&pairs);
    knut_buf_reset(&sql);
    return st;
}
