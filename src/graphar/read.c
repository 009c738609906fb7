/*
 * The reader handle and the count files. A reader pairs a data directory
 * with a DuckDB connection: the caller's, or a private in-memory database
 * opened when the first stream needs it (counts alone never start
 * DuckDB, so `knut gar info` stays cheap). Counts are the 8-byte files of
 * the layout, read as the reference's GetVertexNum / GetEdgeNum do.
 */
#include "read_int.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

knut_status knut_graphar_reader_new(knut_graphar_reader **out, knut_duck_conn *conn,
                                    const char *base, const knut_graphar_read_options *opts,
                                    knut_error *err)
{
    KNUT_ASSERT_ARG(err, out != NULL);
    *out = NULL;
    KNUT_CHECK_VERSION(opts, KNUT_GRAPHAR_READ_OPTIONS_VERSION, err);
    knut_graphar_reader *r = calloc(1, sizeof *r);
    knut_buf b = KNUT_BUF_INIT;
    if (base && *base) {
        knut_buf_puts(&b, base);
        if (base[strlen(base) - 1] != '/')
            knut_buf_putc(&b, '/');
    } else {
        knut_buf_puts(&b, "");
    }
    if (!r || !(r->base = knut_buf_detach(&b, NULL))) {
        knut_buf_reset(&b);
        free(r);
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    }
    atomic_init(&r->refs, 1);
    atomic_init(&r->busy, 0);
    r->conn = conn;
    r->opts = opts ? *opts : (knut_graphar_read_options)KNUT_GRAPHAR_READ_OPTIONS_INIT;
    *out = r;
    return KNUT_OK;
}

void knut_graphar__reader_unref(knut_graphar_reader *r)
{
    if (!r || atomic_fetch_sub(&r->refs, 1) > 1)
        return;
    if (r->own_conn)
        knut_duck_conn_close(r->conn);
    knut_duck_db_close(r->own_db);
    free(r->base);
    free(r);
}

void knut_graphar_reader_free(knut_graphar_reader *r)
{
    knut_graphar__reader_unref(r);
}

/* Chunk rows are concatenated in scan order, which DuckDB keeps only with
 * preserve_insertion_order (its default). */
static knut_status check_order(knut_duck_conn *conn, knut_error *err)
{
    struct ArrowArrayStream rows = {0};
    struct ArrowSchema schema = {0};
    struct ArrowArray batch = {0};
    knut_arrow_view v = {0};
    int keeps = 0;
    knut_status st = knut_duck_query(
        conn, "SELECT current_setting('preserve_insertion_order')::BOOLEAN", &rows, err);
    if (st == KNUT_OK) {
        int rc = rows.get_schema(&rows, &schema);
        if (rc == 0)
            rc = rows.get_next(&rows, &batch);
        if (rc != 0)
            st = knut_arrow_stream_error(&rows, rc, "reading a setting", err);
    }
    if (st == KNUT_OK && batch.release && batch.length == 1 &&
        (st = knut_arrow_view_init(&v, &schema, &batch, err)) == KNUT_OK) {
        const knut_arrow_view *c = knut_arrow_view_child(&v, 0);
        keeps = c && !knut_arrow_view_is_null(c, 0) && knut_arrow_view_get_bool(c, 0);
        knut_arrow_view_reset(&v);
    }
    knut_arrow_array_release(&batch);
    knut_arrow_schema_release(&schema);
    knut_arrow_stream_release(&rows);
    if (st == KNUT_OK && !keeps)
        st = knut_error_set(err, KNUT_EINVAL,
                            "the DuckDB connection has preserve_insertion_order off: chunk "
                            "rows would come out of order (SET preserve_insertion_order = "
                            "true)");
    return st;
}

knut_status knut_graphar__reader_conn(knut_graphar_reader *r, knut_duck_conn **out,
                                      knut_error *err)
{
    knut_status st = KNUT_OK;
    if (!r->conn) {
        /* Every chunk file is read once: DuckDB's cache of file contents
         * would only grow (by the size of the graph, up to memory_limit)
         * and slow the walk down. */
        static const knut_duck_option opts[] = {{"enable_external_file_cache", "false"}};
        st = knut_duck_db_open(&r->own_db, NULL, opts, 1, err);
        if (st == KNUT_OK)
            st = knut_duck_conn_open(&r->conn, r->own_db, err);
        if (st != KNUT_OK) {
            knut_duck_db_close(r->own_db);
            r->own_db = NULL;
            r->conn = NULL;
            return st;
        }
        r->own_conn = 1;
    }
    if (!r->order_checked) {
        if ((st = check_order(r->conn, err)) != KNUT_OK)
            return st;
        r->order_checked = 1;
    }
    *out = r->conn;
    return KNUT_OK;
}

const char *knut_graphar_graph_data_dir(const knut_graphar_graph_info *gi)
{
    if (!gi)
        return "";
    struct stat sb;
    const char *prefix = gi->prefix ? gi->prefix : "";
    const char *dir = gi->base_dir ? gi->base_dir : "";
    if (!*prefix || strcmp(prefix, dir) == 0)
        return *prefix ? prefix : dir;
    if (stat(prefix, &sb) == 0 && S_ISDIR(sb.st_mode))
        return prefix;
    KNUT_LOG(KNUT_LOG_WARN, KNUT_GRAPHAR_LOG,
             "%s: prefix %s is not a directory; reading the data beside the YAML in %s",
             gi->source ? gi->source : gi->name, prefix, *dir ? dir : "./");
    return dir;
}

/* ---- counts ------------------------------------------------------------ */

knut_status knut_graphar_reader_vertex_count(knut_graphar_reader *r,
                                             const knut_graphar_vertex_info *vi, int64_t *out,
                                             knut_error *err)
{
    KNUT_ASSERT_ARG(err, r && vi && out);
    knut_buf path = KNUT_BUF_INIT;
    knut_status st = knut_graphar_path_vertex_count(&path, r->base, vi);
    if (st == KNUT_OK)
        st = knut_graphar_count_read(path.data, out, err);
    else
        knut_error_set(err, st, "vertex %s: cannot build the vertex_count path", vi->type);
    knut_buf_reset(&path);
    return st;
}

static const knut_graphar_adj_list *find_adj(const knut_graphar_edge_info *ei,
                                             knut_graphar_adj_list_type type, knut_error *err)
{
    const knut_graphar_adj_list *al = knut_graphar_edge_info_adj_list(ei, type);
    if (!al)
        knut_error_set(err, KNUT_ENOTFOUND, "edge %s_%s_%s has no %s adj list", ei->src_type,
                       ei->edge_type, ei->dst_type, knut_graphar_adj_list_type_name(type));
    return al;
}

knut_status knut_graphar__aligned_count(const knut_graphar_reader *r,
                                        const knut_graphar_edge_info *ei,
                                        const knut_graphar_adj_list *al, int64_t *out,
                                        knut_error *err)
{
    knut_buf path = KNUT_BUF_INIT;
    knut_status st = knut_graphar_path_aligned_vertex_count(&path, r->base, ei, al);
    if (st == KNUT_OK)
        st = knut_graphar_count_read(path.data, out, err);
    else
        knut_error_set(err, st, "cannot build the vertex_count path");
    knut_buf_reset(&path);
    return st;
}

knut_status knut_graphar__part_count(const knut_graphar_reader *r,
                                     const knut_graphar_edge_info *ei,
                                     const knut_graphar_adj_list *al, int64_t part,
                                     int64_t *out, knut_error *err)
{
    knut_buf path = KNUT_BUF_INIT;
    knut_status st = knut_graphar_path_edge_count(&path, r->base, ei, al, part);
    if (st == KNUT_OK)
        st = knut_graphar_count_read(path.data, out, err);
    else
        knut_error_set(err, st, "cannot build the edge_count path");
    knut_buf_reset(&path);
    return st;
}

knut_status knut_graphar_reader_aligned_count(knut_graphar_reader *r,
                                              const knut_graphar_edge_info *ei,
                                              knut_graphar_adj_list_type type, int64_t *out,
                                              knut_error *err)
{
    KNUT_ASSERT_ARG(err, r && ei && out);
    const knut_graphar_adj_list *al = find_adj(ei, type, err);
    return al ? knut_graphar__aligned_count(r, ei, al, out, err) : KNUT_ENOTFOUND;
}

knut_status knut_graphar_reader_edge_count(knut_graphar_reader *r,
                                           const knut_graphar_edge_info *ei,
                                           knut_graphar_adj_list_type type, int64_t part,
                                           int64_t *out, knut_error *err)
{
    KNUT_ASSERT_ARG(err, r && ei && out && (part >= 0 || part == KNUT_GRAPHAR_ALL));
    const knut_graphar_adj_list *al = find_adj(ei, type, err);
    if (!al)
        return KNUT_ENOTFOUND;
    if (part >= 0)
        return knut_graphar__part_count(r, ei, al, part, out, err);
    int64_t aligned = 0, total = 0;
    knut_status st = knut_graphar__aligned_count(r, ei, al, &aligned, err);
    int64_t parts = knut_graphar_chunk_count(aligned, knut_graphar_aligned_chunk_size(ei, type));
    for (int64_t i = 0; st == KNUT_OK && i < parts; i++) {
        int64_t n = 0;
        st = knut_graphar__part_count(r, ei, al, i, &n, err);
        if (st == KNUT_OK && n > INT64_MAX - total)
            st = knut_error_set(err, KNUT_ETOOBIG, "edge counts overflow int64");
        total += n;
    }
    if (st == KNUT_OK)
        *out = total;
    return st;
}
