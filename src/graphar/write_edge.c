/*
 * Writing one edge type. The source is materialised once (endpoint keys,
 * properties cast to their types; rowid = source row), its keys are mapped
 * to vertex indices by joining the vertex tables the vertex pass left
 * behind, and unknown endpoints are refused or set aside. Then, per adj
 * list, DuckDB sorts the mapped edges into that list's order (spilling if
 * it must), and prepared COPYs cut the sorted table into parts (aligned
 * vertex chunks) and edge chunks by rowid range; offsets come from a
 * degree table with one window sum. Nothing is held in C but per-part
 * counts.
 */
#include "write_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ESRC "__knut_s%zu"
#define EDST "__knut_d%zu"

typedef struct ejob {
    knut_graphar_writer *w;
    const knut_graphar_edge_info *ei;
    const knut_graphar_edge_source *src;
    const char *name;
    char what[512];
    gar_wvertex *sv, *dv;
    knut_buf rel;
    char *raw;  /* endpoint keys + cast properties, in source order */
    char *map;  /* __knut_row, __knut_src, __knut_dst + properties */
    int64_t rows, skipped, files;
} ejob;

static void drop_table(knut_graphar_writer *w, char **table)
{
    if (!*table)
        return;
    knut_buf sql = KNUT_BUF_INIT;
    knut_buf_puts(&sql, "DROP TABLE IF EXISTS ");
    knut_duck_ident(&sql, *table);
    if (sql.data)
        (void)knut_duck_exec(w->conn, sql.data, NULL);
    knut_buf_reset(&sql);
    free(*table);
    *table = NULL;
}

static int has_column(char *const *cols, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(cols[i], name) == 0)
            return 1;
    return 0;
}

static knut_status check_spec(ejob *j, knut_error *err)
{
    const knut_graphar_edge_info *ei = j->ei;
    const knut_graphar_edge_source *s = j->src;
    knut_status st;
    if (!(j->sv = knut_graphar__written_vertex(j->w, ei->src_type)) ||
        !(j->dv = knut_graphar__written_vertex(j->w, ei->dst_type)))
        return knut_error_set(err, KNUT_EINVAL, "%s: write the vertex type '%s' first", j->what,
                              j->sv ? ei->dst_type : ei->src_type);
    if (s->n_src_keys != j->sv->n_keys || s->n_dst_keys != j->dv->n_keys || !s->src_keys ||
        !s->dst_keys)
        return knut_error_set(err, KNUT_EINVAL,
                              "%s: %zu src and %zu dst key columns given; the vertex types "
                              "were written with %zu and %zu",
                              j->what, s->n_src_keys, s->n_dst_keys, j->sv->n_keys,
                              j->dv->n_keys);
    /* Parts are aligned vertex chunks: the sizes must agree or every part
     * boundary (and offset) would be wrong. */
    if (ei->src_chunk_size != j->sv->chunk_size || ei->dst_chunk_size != j->dv->chunk_size)
        return knut_error_set(err, KNUT_EINVAL,
                              "%s: src_chunk_size %lld / dst_chunk_size %lld differ from the "
                              "vertex chunk sizes %lld / %lld",
                              j->what, (long long)ei->src_chunk_size,
                              (long long)ei->dst_chunk_size, (long long)j->sv->chunk_size,
                              (long long)j->dv->chunk_size);
    int ok = knut_graphar__write_prefix_safe(ei->prefix);
    for (size_t g = 0; ok && g < ei->n_groups; g++)
        ok = knut_graphar__write_prefix_safe(ei->groups[g].prefix);
    for (size_t a = 0; ok && a < ei->n_adj_lists; a++)
        ok = knut_graphar__write_prefix_safe(ei->adj_lists[a].prefix);
    if (!ok)
        return knut_error_set(err, KNUT_EINVAL,
                              "%s: prefixes must be relative paths without '..'", j->what);
    if (ei->n_adj_lists == 0)
        return knut_error_set(err, KNUT_EINVAL, "%s: no adj lists to write", j->what);
    for (size_t a = 0; a < ei->n_adj_lists; a++) {
        for (size_t b = 0; b < a; b++)
            if (ei->adj_lists[a].type == ei->adj_lists[b].type)
                return knut_error_set(err, KNUT_EINVAL, "%s: adj list %s given twice", j->what,
                                      knut_graphar_adj_list_type_name(ei->adj_lists[a].type));
        if ((st = knut_graphar__write_check_file_type(ei->adj_lists[a].file_type, j->what, err)))
            return st;
    }
    for (size_t g = 0; g < ei->n_groups; g++) {
        if ((st = knut_graphar__write_check_group(&ei->groups[g], j->what, err)))
            return st;
        for (size_t k = 0; k < ei->groups[g].n_props; k++) {
            const knut_graphar_property *p = &ei->groups[g].props[k];
            if (knut_graphar_edge_info_property(ei, p->name, NULL) != p)
                return knut_error_set(err, KNUT_EINVAL, "%s: property '%s' is defined twice",
                                      j->what, p->name);
        }
    }
    return KNUT_OK;
}

static knut_status check_columns(ejob *j, knut_error *err)
{
    char **cols = NULL;
    size_t n = 0;
    knut_status st = knut_graphar__write_columns(j->w->conn, j->rel.data, &cols, &n, err);
    if (st) {
        knut_duck_error_reading(err); /* as sync says it of the same file */
        return knut_error_prefix(err, "%s: reading %s: ", j->what, j->name);
    }
    const char *missing = NULL, *role = NULL;
    for (size_t k = 0; !missing && k < j->src->n_src_keys; k++)
        if (!has_column(cols, n, j->src->src_keys[k]))
            missing = j->src->src_keys[k], role = "a src key column";
    for (size_t k = 0; !missing && k < j->src->n_dst_keys; k++)
        if (!has_column(cols, n, j->src->dst_keys[k]))
            missing = j->src->dst_keys[k], role = "a dst key column";
    for (size_t g = 0; !missing && g < j->ei->n_groups; g++)
        for (size_t k = 0; !missing && k < j->ei->groups[g].n_props; k++)
            if (!has_column(cols, n, j->ei->groups[g].props[k].name))
                missing = j->ei->groups[g].props[k].name, role = "a property";
    if (missing) {
        knut_buf list = KNUT_BUF_INIT;
        for (size_t i = 0; i < n && i < 32; i++)
            knut_buf_printf(&list, "%s%s", i ? ", " : "", cols[i]);
        st = knut_error_set(err, KNUT_EINVAL, "%s: %s: no column '%s' (%s); it has: %s", j->what,
                            j->name, missing, role, list.data ? list.data : "(none)");
        knut_buf_reset(&list);
    }
    knut_graphar__strv_free(cols, n);
    return st;
}

static size_t n_props(const knut_graphar_edge_info *ei)
{
    size_t n = 0;
    for (size_t g = 0; g < ei->n_groups; g++)
        n += ei->groups[g].n_props;
    return n;
}

/* raw: the source with keys renamed and properties cast, in source order. */
static knut_status materialise(ejob *j, knut_error *err)
{
    const knut_graphar_edge_info *ei = j->ei;
    knut_buf sql = KNUT_BUF_INIT;
    knut_buf_puts(&sql, "CREATE TEMP TABLE ");
    knut_duck_ident(&sql, j->raw);
    knut_buf_puts(&sql, " AS SELECT ");
    for (size_t k = 0; k < j->src->n_src_keys; k++) {
        knut_buf_puts(&sql, k ? ", s." : "s.");
        knut_duck_ident(&sql, j->src->src_keys[k]);
        knut_buf_printf(&sql, " AS " ESRC, k);
    }
    for (size_t k = 0; k < j->src->n_dst_keys; k++) {
        knut_buf_puts(&sql, ", s.");
        knut_duck_ident(&sql, j->src->dst_keys[k]);
        knut_buf_printf(&sql, " AS " EDST, k);
    }
    for (size_t g = 0, i = 0; g < ei->n_groups; g++)
        for (size_t k = 0; k < ei->groups[g].n_props; k++, i++) {
            knut_buf_puts(&sql, ", ");
            knut_graphar__write_sql_cast(&sql, ei->groups[g].props[k].name,
                                         &ei->groups[g].props[k]);
            knut_buf_printf(&sql, " AS " KNUT_GRAPHAR_W_PCOL, i);
        }
    knut_buf_printf(&sql, " FROM %s AS s", j->rel.data);
    knut_status st = knut_buf_check(&sql, err);
    if (!st)
        st = knut_duck_exec(j->w->conn, sql.data, err);
    knut_buf_reset(&sql);
    if (!st)
        return KNUT_OK;
    size_t n = n_props(ei);
    const char **cols = calloc(n + 1, sizeof *cols);
    char **types = calloc(n + 1, sizeof *types);
    int complete = cols && types;
    size_t i = 0;
    for (size_t g = 0; complete && g < ei->n_groups; g++)
        for (size_t k = 0; k < ei->groups[g].n_props; k++, i++) {
            knut_buf t = KNUT_BUF_INIT;
            knut_graphar__write_sql_parse_type(&t, &ei->groups[g].props[k]);
            cols[i] = ei->groups[g].props[k].name;
            if (!(types[i] = knut_buf_detach(&t, NULL)))
                complete = 0;
        }
    return knut_graphar__write_report_cast_failure(j->w, j->rel.data, j->name, j->what, cols, types,
                                                   n, st, err);
}

/* "(a, b) = (1, 2)"-style text of one side's key columns on raw row. */
static void key_sql(knut_buf *b, size_t n, const char *col)
{
    knut_buf_puts(b, "concat_ws(', '");
    for (size_t k = 0; k < n; k++) {
        knut_buf_puts(b, ", CAST(r.");
        knut_buf_printf(b, "%s%zu", col, k);
        knut_buf_puts(b, " AS VARCHAR)");
    }
    knut_buf_puts(b, ")");
}

/* map: raw joined to both vertex tables (rowid there = vertex index). */
static knut_status map_keys(ejob *j, knut_error *err)
{
    knut_buf sql = KNUT_BUF_INIT;
    knut_buf_puts(&sql, "CREATE TEMP TABLE ");
    knut_duck_ident(&sql, j->map);
    knut_buf_puts(&sql, " AS SELECT r.rowid AS __knut_row, vs.rowid AS __knut_src, "
                        "vd.rowid AS __knut_dst");
    for (size_t i = 0; i < n_props(j->ei); i++)
        knut_buf_printf(&sql, ", r." KNUT_GRAPHAR_W_PCOL, i);
    knut_buf_puts(&sql, " FROM ");
    knut_duck_ident(&sql, j->raw);
    knut_buf_puts(&sql, " AS r LEFT JOIN ");
    knut_duck_ident(&sql, j->sv->table);
    knut_buf_puts(&sql, " AS vs ON ");
    /* Keys cast to the vertex key types: a key that does not convert is
     * unknown (and reported with its row), not a failed statement. */
    for (size_t k = 0; k < j->sv->n_keys; k++)
        knut_buf_printf(&sql, "%svs.__knut_k%zu = TRY_CAST(r." ESRC " AS %s)", k ? " AND " : "",
                        k, k, j->sv->key_types[k]);
    knut_buf_puts(&sql, " LEFT JOIN ");
    knut_duck_ident(&sql, j->dv->table);
    knut_buf_puts(&sql, " AS vd ON ");
    for (size_t k = 0; k < j->dv->n_keys; k++)
        knut_buf_printf(&sql, "%svd.__knut_k%zu = TRY_CAST(r." EDST " AS %s)", k ? " AND " : "",
                        k, k, j->dv->key_types[k]);
    knut_status st = knut_buf_check(&sql, err);
    if (!st)
        st = knut_graphar__write_exec(j->w, sql.data, "mapping endpoint keys to vertex indices",
                                      err);
    knut_buf_reset(&sql);
    if (st)
        knut_error_prefix(err, "%s: %s: ", j->what, j->name);
    return st;
}

/* Unknown endpoints: refuse naming the first row, or drop and record them. */
static knut_status unknown_keys(ejob *j, knut_error *err)
{
    knut_buf sql = KNUT_BUF_INIT;
    knut_buf_puts(&sql, "SELECT count(*), min(__knut_row) FROM ");
    knut_duck_ident(&sql, j->map);
    knut_buf_puts(&sql, " WHERE __knut_src IS NULL OR __knut_dst IS NULL");
    int64_t v[2] = {0, -1};
    knut_status st = knut_buf_check(&sql, err);
    if (!st)
        st = knut_graphar__write_query_i64(j->w->conn, sql.data, v, 2, "checking endpoint keys",
                                           err);
    knut_buf_clear(&sql);
    if (st || v[0] == 0)
        goto cleanup;
    if (j->src->on_unknown != KNUT_GRAPHAR_UNKNOWN_SKIP) {
        /* The row number is a computed integer, not input text. */
        knut_buf_puts(&sql, "SELECT (m.__knut_src IS NULL)::BIGINT, ");
        key_sql(&sql, j->sv->n_keys, "__knut_s");
        knut_buf_puts(&sql, ", ");
        key_sql(&sql, j->dv->n_keys, "__knut_d");
        knut_buf_puts(&sql, " FROM ");
        knut_duck_ident(&sql, j->map);
        knut_buf_puts(&sql, " AS m JOIN ");
        knut_duck_ident(&sql, j->raw);
        knut_buf_printf(&sql, " AS r ON r.rowid = m.__knut_row WHERE m.__knut_row = %lld",
                        (long long)v[1]);
        gar_rows r;
        memset(&r, 0, sizeof r);
        if (!(st = knut_buf_check(&sql, err)))
            st = knut_graphar__write_rows_open(&r, j->w->conn, sql.data, err);
        if (!st && (st = knut_graphar__write_rows_next(&r, err)) == KNUT_OK) {
            int src_bad = (int)knut_arrow_view_get_int64(knut_graphar_w__rows_col(&r, 0),
                                                         knut_graphar_w__rows_at(&r));
            char key[256];
            knut_graphar__write_rows_text(&r, src_bad ? 1 : 2, key, sizeof key);
            knut_buf cols = KNUT_BUF_INIT;
            size_t n = src_bad ? j->src->n_src_keys : j->src->n_dst_keys;
            for (size_t k = 0; k < n; k++)
                knut_buf_printf(&cols, "%s%s", k ? ", " : "",
                                src_bad ? j->src->src_keys[k] : j->src->dst_keys[k]);
            st = knut_error_set(err, KNUT_EINVAL,
                                "%s: %s: row %lld: %s key (%s) = (%s) matches no '%s' vertex "
                                "(%lld edge rows have unknown endpoints)",
                                j->what, j->name, (long long)v[1] + 1, src_bad ? "src" : "dst",
                                cols.data ? cols.data : "", key,
                                src_bad ? j->ei->src_type : j->ei->dst_type, (long long)v[0]);
            knut_buf_reset(&cols);
        } else if (st == KNUT_EOF) {
            st = knut_error_set(err, KNUT_ERROR, "%s: unknown endpoint row vanished", j->what);
        }
        knut_graphar__write_rows_close(&r);
        goto cleanup;
    }
    if (j->src->rejects_path) {
        knut_buf_puts(&sql, "SELECT r.rowid + 1 AS \"row\"");
        for (size_t k = 0; k < j->src->n_src_keys; k++) {
            knut_buf_printf(&sql, ", r." ESRC " AS ", k);
            knut_duck_ident(&sql, j->src->src_keys[k]);
        }
        for (size_t k = 0; k < j->src->n_dst_keys; k++) {
            knut_buf_printf(&sql, ", r." EDST " AS ", k);
            knut_duck_ident(&sql, j->src->dst_keys[k]);
        }
        for (size_t g = 0, i = 0; g < j->ei->n_groups; g++)
            for (size_t k = 0; k < j->ei->groups[g].n_props; k++, i++) {
                knut_buf_printf(&sql, ", r." KNUT_GRAPHAR_W_PCOL " AS ", i);
                knut_duck_ident(&sql, j->ei->groups[g].props[k].name);
            }
        knut_buf_puts(&sql, " FROM ");
        knut_duck_ident(&sql, j->map);
        knut_buf_puts(&sql, " AS m JOIN ");
        knut_duck_ident(&sql, j->raw);
        knut_buf_puts(&sql, " AS r ON r.rowid = m.__knut_row WHERE (m.__knut_src IS NULL OR "
                            "m.__knut_dst IS NULL) AND $2 <= $3 ORDER BY 1");
        gar_copy cp;
        if (!(st = knut_buf_check(&sql, err)) &&
            !(st = knut_graphar__write_copy_prepare(j->w, &cp, sql.data, KNUT_GRAPHAR_FILE_PARQUET,
                                                    NULL, 0, NULL, 0, 0, err))) {
            st = knut_graphar__write_copy_run(&cp, j->src->rejects_path, 0, 0, err);
            knut_graphar__write_copy_free(&cp);
        }
        if (st) {
            knut_error_prefix(err, "%s: recording rejected rows: ", j->what);
            goto cleanup;
        }
    }
    knut_buf_clear(&sql);
    knut_buf_puts(&sql, "DELETE FROM ");
    knut_duck_ident(&sql, j->map);
    knut_buf_puts(&sql, " WHERE __knut_src IS NULL OR __knut_dst IS NULL");
    if (!(st = knut_buf_check(&sql, err)))
        st = knut_graphar__write_exec(j->w, sql.data, "dropping edges with unknown endpoints", err);
    j->skipped = v[0];
    KNUT_LOG(KNUT_LOG_WARN, KNUT_GRAPHAR_LOG,
             "%s: %s: skipped %lld edge rows whose endpoint keys match no vertex (first: row "
             "%lld)%s%s",
             j->what, j->name, (long long)v[0], (long long)v[1] + 1,
             j->src->rejects_path ? "; recorded in " : "",
             j->src->rejects_path ? j->src->rejects_path : "");
cleanup:
    knut_buf_reset(&sql);
    return st;
}

knut_status knut_graphar_writer_write_edges(knut_graphar_writer *w, const char *src_type,
                                            const char *edge_type, const char *dst_type,
                                            const knut_graphar_edge_source *src,
                                            knut_graphar_write_stats *stats, knut_error *err)
{
    KNUT_ASSERT_ARG(err, w && src_type && edge_type && dst_type && src);
    double t0 = knut_graphar__write_now();
    ejob j;
    memset(&j, 0, sizeof j);
    j.w = w;
    j.src = src;
    knut_buf_init(&j.rel, 0);
    snprintf(j.what, sizeof j.what, "edge type %.150s_%.150s_%.150s", src_type, edge_type,
             dst_type);
    j.name = src->name ? src->name : src->table ? src->table : "query";
    knut_buf dir = KNUT_BUF_INIT;
    knut_status st = KNUT_OK;
    if (!(j.ei = knut_graphar_graph_info_edge(w->gi, src_type, edge_type, dst_type))) {
        st = knut_error_set(err, KNUT_ENOTFOUND, "%s: not in graph '%s'", j.what, w->gi->name);
        goto cleanup;
    }
    if (!src->query == !src->table) {
        st = knut_error_set(err, KNUT_EINVAL, "%s: give exactly one of query and table", j.what);
        goto cleanup;
    }
    if ((st = check_spec(&j, err)))
        goto cleanup;
    knut_graphar__write_sql_source(&j.rel, src->query, src->table);
    if ((st = knut_buf_check(&j.rel, err)) || (st = check_columns(&j, err)))
        goto cleanup;
    if (!(j.raw = knut_graphar__write_temp_name(w, "er")) ||
        !(j.map = knut_graphar__write_temp_name(w, "em"))) {
        st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
        goto cleanup;
    }
    double t1 = knut_graphar__write_now();
    if ((st = materialise(&j, err)))
        goto cleanup;
    double t2 = knut_graphar__write_now();
    if ((st = knut_graphar__write_check_stop(j.what, err)) || (st = map_keys(&j, err)) ||
        (st = unknown_keys(&j, err)) || (st = knut_graphar__write_check_stop(j.what, err)))
        goto cleanup;
    KNUT_LOG(KNUT_LOG_DEBUG, KNUT_GRAPHAR_LOG, "%s: read source %.2f s, mapped keys %.2f s", j.what,
             t2 - t1, knut_graphar__write_now() - t2);
    drop_table(w, &j.raw);
    knut_buf sql = KNUT_BUF_INIT;
    knut_buf_puts(&sql, "SELECT count(*) FROM ");
    knut_duck_ident(&sql, j.map);
    if (!(st = knut_buf_check(&sql, err)))
        st = knut_graphar__write_query_i64(w->conn, sql.data, &j.rows, 1, "counting edges", err);
    knut_buf_reset(&sql);
    if (st)
        goto cleanup;
    knut_buf_puts(&dir, w->dir);
    knut_buf_puts(&dir, j.ei->prefix);
    if ((st = knut_buf_check(&dir, err)) ||
        (st = knut_graphar__write_prepare_dir(w, dir.data, err)))
        goto cleanup;
    for (size_t a = 0; !st && a < j.ei->n_adj_lists; a++) {
        const knut_graphar_adj_list *al = &j.ei->adj_lists[a];
        int64_t aligned = knut_graphar_adj_list_type_by_source(al->type) ? j.sv->count
                                                                         : j.dv->count;
        st = knut_graphar__write_adj(w, j.ei, al, j.map, aligned, j.what, &j.files, err);
    }
    if (!st && stats) {
        stats->rows = j.rows;
        stats->skipped = j.skipped;
        stats->files = j.files;
        stats->seconds = knut_graphar__write_now() - t0;
    }
cleanup:
    drop_table(w, &j.raw);
    drop_table(w, &j.map);
    knut_buf_reset(&j.rel);
    knut_buf_reset(&dir);
    return st;
}
