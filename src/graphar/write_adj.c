/*
 * One adj list of an edge type. DuckDB sorts the mapped edges into the
 * list's order in a fresh table (ordered_by_source: src, dst; ordered_by_
 * dest: dst, src; unordered_*: the aligned vertex chunk only, source order
 * inside it), whose rowid is then the write position: part i is a run of
 * edge_count<i> rows, cut into edge chunks by rowid range with the same
 * prepared COPY for the adj_list files and for each property group, so
 * property rows line up with their edges. Offsets for ordered lists come
 * from a degree table and a window sum, padded to aligned chunk size + 1
 * entries per part as the reference C++ writes them.
 */
#include "write_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ajob {
    knut_graphar_writer *w;
    const knut_graphar_edge_info *ei;
    const knut_graphar_adj_list *al;
    const char *what;
    char where[640];       /* what + adj list name, for messages */
    const char *key;       /* aligned column: __knut_src or __knut_dst */
    int64_t vcs;           /* aligned vertex chunk size */
    int64_t n_parts;
    int64_t *counts;       /* edges per part */
    char *sorted;          /* temp table in write order */
    char *offsets;         /* temp table of offsets, (vcs + 1) rows per part */
    int64_t files;
} ajob;

static void drop(ajob *a, char **table)
{
    if (!*table)
        return;
    knut_buf sql = KNUT_BUF_INIT;
    knut_buf_puts(&sql, "DROP TABLE IF EXISTS ");
    knut_duck_ident(&sql, *table);
    if (sql.data)
        (void)knut_duck_exec(a->w->conn, sql.data, NULL);
    knut_buf_reset(&sql);
    free(*table);
    *table = NULL;
}

static knut_status sort_edges(ajob *a, const char *map, knut_error *err)
{
    int ordered = knut_graphar_adj_list_type_is_ordered(a->al->type);
    const char *other = strcmp(a->key, "__knut_src") == 0 ? "__knut_dst" : "__knut_src";
    knut_buf sql = KNUT_BUF_INIT;
    knut_buf_puts(&sql, "CREATE TEMP TABLE ");
    knut_duck_ident(&sql, a->sorted);
    knut_buf_printf(&sql, " AS SELECT *, %s // %lld AS __knut_part FROM ", a->key,
                    (long long)a->vcs);
    knut_duck_ident(&sql, map);
    /* Sorting by the aligned index orders by part too; __knut_row breaks
     * the last ties so the output is the same on every run. */
    if (ordered)
        knut_buf_printf(&sql, " ORDER BY %s, %s, __knut_row", a->key, other);
    else
        knut_buf_puts(&sql, " ORDER BY __knut_part, __knut_row");
    knut_status st = knut_buf_check(&sql, err);
    if (!st)
        st = knut_duck_exec(a->w->conn, sql.data, err);
    knut_buf_reset(&sql);
    if (st)
        return knut_error_prefix(err, "%s: sorting edges: ", a->where);
    int64_t n = 0;
    if ((st = knut_graphar__write_table_count(a->w, a->sorted, &n, err)))
        return knut_error_prefix(err, "%s: ", a->where);
    /* Edges per part; parts are few (vertex count / chunk size). */
    knut_buf_puts(&sql, "SELECT __knut_part, count(*) FROM ");
    knut_duck_ident(&sql, a->sorted);
    knut_buf_puts(&sql, " GROUP BY 1 ORDER BY 1");
    gar_rows r;
    memset(&r, 0, sizeof r);
    if (!(st = knut_buf_check(&sql, err)))
        st = knut_graphar__write_rows_open(&r, a->w->conn, sql.data, err);
    int64_t total = 0;
    while (!st && (st = knut_graphar__write_rows_next(&r, err)) == KNUT_OK) {
        int64_t at = knut_graphar_w__rows_at(&r);
        int64_t part = knut_arrow_view_get_int64(knut_graphar_w__rows_col(&r, 0), at);
        int64_t cnt = knut_arrow_view_get_int64(knut_graphar_w__rows_col(&r, 1), at);
        if (part < 0 || part >= a->n_parts) {
            st = knut_error_set(err, KNUT_ERROR, "%s: internal: edge in part %lld of %lld",
                                a->where, (long long)part, (long long)a->n_parts);
            break;
        }
        a->counts[part] = cnt;
        total += cnt;
    }
    if (st == KNUT_EOF)
        st = total == n ? KNUT_OK
                        : knut_error_set(err, KNUT_ERROR,
                                         "%s: internal: %lld of %lld edges in parts", a->where,
                                         (long long)total, (long long)n);
    knut_graphar__write_rows_close(&r);
    knut_buf_reset(&sql);
    return st;
}

/* Prepares the COPY of one property group (or the adj list when g NULL). */
static knut_status prepare(ajob *a, const knut_graphar_property_group *g, gar_copy *cp,
                           knut_error *err)
{
    static const char *const adj_cols[] = {"_graphArSrcIndex", "_graphArDstIndex"};
    knut_buf sel = KNUT_BUF_INIT;
    const char **strs = NULL, **cols = NULL;
    size_t n_strs = 0, n_cols = 2;
    knut_graphar_file_type ft = a->al->file_type;
    if (!g) {
        knut_buf_puts(&sel, "SELECT __knut_src AS \"_graphArSrcIndex\", "
                            "__knut_dst AS \"_graphArDstIndex\"");
    } else {
        ft = g->file_type;
        n_cols = g->n_props;
        strs = calloc(g->n_props + 1, sizeof *strs);
        cols = calloc(g->n_props + 1, sizeof *cols);
        if (!strs || !cols) {
            free(strs);
            free(cols);
            return knut_error_set(err, KNUT_ENOMEM, "out of memory");
        }
        size_t base = knut_graphar__write_prop_base(a->ei->groups, g);
        knut_buf_puts(&sel, "SELECT ");
        for (size_t k = 0; k < g->n_props; k++) {
            knut_buf_printf(&sel, "%s" KNUT_GRAPHAR_W_PCOL " AS ", k ? ", " : "", base + k);
            knut_duck_ident(&sel, g->props[k].name);
            cols[k] = g->props[k].name;
            if (g->props[k].type == KNUT_GRAPHAR_TYPE_STRING &&
                !knut_graphar__prop_is_list(&g->props[k]))
                strs[n_strs++] = g->props[k].name;
        }
    }
    knut_buf_puts(&sel, " FROM ");
    knut_duck_ident(&sel, a->sorted);
    knut_buf_puts(&sel, " AS w WHERE w.rowid BETWEEN $2 AND $3 ORDER BY w.rowid");
    knut_status st = knut_buf_check(&sel, err);
    if (!st)
        st = knut_graphar__write_copy_prepare(a->w, cp, sel.data, ft, cols ? cols : adj_cols,
                                              n_cols, strs, n_strs, 0, err);
    if (st)
        knut_error_prefix(err, "%s: ", a->where);
    free(strs);
    free(cols);
    knut_buf_reset(&sel);
    return st;
}

static knut_status write_parts(ajob *a, knut_error *err)
{
    const knut_graphar_edge_info *ei = a->ei;
    size_t ng = ei->n_groups;
    gar_copy *cps = calloc(ng + 1, sizeof *cps);
    if (!cps)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    knut_status st = prepare(a, NULL, &cps[ng], err);
    for (size_t g = 0; !st && g < ng; g++)
        st = prepare(a, &ei->groups[g], &cps[g], err);
    knut_buf path = KNUT_BUF_INIT;
    int64_t start = 0, ecs = ei->chunk_size;
    for (int64_t i = 0; !st && i < a->n_parts; i++) {
        int64_t cnt = a->counts[i], nc = knut_graphar_chunk_count(cnt, ecs);
        for (int64_t c = 0; !st && c < nc; c++) {
            int64_t lo = start + c * ecs;
            int64_t hi = lo + knut_graphar_chunk_rows(cnt, ecs, c) - 1;
            /* The adj list (cps[ng]) and then each group, same rows. */
            for (size_t g = 0; !st && g <= ng; g++) {
                knut_buf_clear(&path);
                st = g == ng ? knut_graphar_path_adj_chunk(&path, a->w->dir, ei, a->al, i, c)
                             : knut_graphar_path_edge_chunk(&path, a->w->dir, ei, a->al,
                                                            &ei->groups[g], i, c);
                if (st)
                    st = knut_error_set(err, st, "%s: building a chunk path", a->where);
                else if (!(st = knut_graphar__write_copy_run(&cps[g], path.data, lo, hi, err)))
                    a->files++;
            }
        }
        start += cnt;
        /* edge_count<i> exists for every part, 0 included: C++ readers
         * open it before any chunk. */
        knut_buf_clear(&path);
        if (st)
            break;
        if ((st = knut_graphar_path_edge_count(&path, a->w->dir, ei, a->al, i)))
            st = knut_error_set(err, st, "%s: building a count path", a->where);
        else if (!(st = knut_graphar__write_count(path.data, cnt, err)))
            a->files++;
    }
    for (size_t g = 0; g <= ng; g++)
        knut_graphar__write_copy_free(&cps[g]);
    free(cps);
    knut_buf_reset(&path);
    return st;
}

static knut_status write_offsets(ajob *a, knut_error *err)
{
    long long vcs = (long long)a->vcs, n = (long long)a->n_parts;
    knut_buf sql = KNUT_BUF_INIT;
    /* Row k of part p is the number of the part's edges whose aligned
     * vertex is below p*vcs + k; k runs to vcs, so the last entries of a
     * short last part repeat the part's total (padded, as C++). */
    knut_buf_puts(&sql, "CREATE TEMP TABLE ");
    knut_duck_ident(&sql, a->offsets);
    knut_buf_printf(&sql,
                    " AS WITH deg AS (SELECT %s AS v, count(*) AS n FROM ", a->key);
    knut_duck_ident(&sql, a->sorted);
    /* g.v is the vertex of row k (NULL for the extra row k = vcs), so the
     * join is a plain equi-join DuckDB hashes. */
    knut_buf_printf(&sql,
                    " GROUP BY 1), g AS (SELECT r // %lld AS p, r %% %lld AS k, CASE WHEN "
                    "r %% %lld < %lld THEN (r // %lld) * %lld + r %% %lld END AS v FROM "
                    "range(%lld) t(r)) SELECT coalesce(sum(coalesce(deg.n, 0)) OVER (PARTITION "
                    "BY g.p ORDER BY g.k ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), "
                    "0)::BIGINT AS \"_graphArOffset\" FROM g LEFT JOIN deg ON deg.v = g.v "
                    "ORDER BY g.p, g.k",
                    vcs + 1, vcs + 1, vcs + 1, vcs, vcs + 1, vcs, vcs + 1, n * (vcs + 1));
    knut_status st = knut_buf_check(&sql, err);
    if (!st)
        st = knut_duck_exec(a->w->conn, sql.data, err);
    knut_buf_clear(&sql);
    if (st)
        return knut_error_prefix(err, "%s: computing offsets: ", a->where);
    int64_t rows = 0;
    if ((st = knut_graphar__write_table_count(a->w, a->offsets, &rows, err)))
        return knut_error_prefix(err, "%s: ", a->where);
    knut_buf_puts(&sql, "SELECT \"_graphArOffset\" FROM ");
    knut_duck_ident(&sql, a->offsets);
    knut_buf_puts(&sql, " AS w WHERE w.rowid BETWEEN $2 AND $3 ORDER BY w.rowid");
    static const char *const off_cols[] = {"_graphArOffset"};
    gar_copy cp = {NULL};
    if (!(st = knut_buf_check(&sql, err)))
        st = knut_graphar__write_copy_prepare(a->w, &cp, sql.data, a->al->file_type, off_cols, 1,
                                              NULL, 0, 0, err);
    knut_buf path = KNUT_BUF_INIT;
    for (int64_t i = 0; !st && i < a->n_parts; i++) {
        knut_buf_clear(&path);
        if ((st = knut_graphar_path_offset_chunk(&path, a->w->dir, a->ei, a->al, i)))
            st = knut_error_set(err, st, "%s: building an offset path", a->where);
        else if (!(st = knut_graphar__write_copy_run(&cp, path.data, i * (a->vcs + 1),
                                                     i * (a->vcs + 1) + a->vcs, err)))
            a->files++;
    }
    knut_graphar__write_copy_free(&cp);
    knut_buf_reset(&path);
    knut_buf_reset(&sql);
    return st;
}

knut_status knut_graphar__write_adj(knut_graphar_writer *w, const knut_graphar_edge_info *ei,
                                    const knut_graphar_adj_list *al, const char *map,
                                    int64_t aligned_count, const char *what, int64_t *files,
                                    knut_error *err)
{
    ajob a;
    memset(&a, 0, sizeof a);
    a.w = w;
    a.ei = ei;
    a.al = al;
    a.what = what;
    snprintf(a.where, sizeof a.where, "%s, %s", what, knut_graphar_adj_list_type_name(al->type));
    int by_src = knut_graphar_adj_list_type_by_source(al->type);
    a.key = by_src ? "__knut_src" : "__knut_dst";
    a.vcs = knut_graphar_aligned_chunk_size(ei, al->type);
    a.n_parts = knut_graphar_chunk_count(aligned_count, a.vcs);
    knut_buf path = KNUT_BUF_INIT;
    knut_status st = KNUT_OK;
    a.counts = calloc((size_t)a.n_parts + 1, sizeof *a.counts);
    a.sorted = knut_graphar__write_temp_name(w, "ea");
    a.offsets = knut_graphar__write_temp_name(w, "eo");
    if (!a.counts || !a.sorted || !a.offsets) {
        st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
        goto cleanup;
    }
    double t0 = knut_graphar__write_now();
    if ((st = knut_graphar__write_check_stop(a.where, err)) || (st = sort_edges(&a, map, err)))
        goto cleanup;
    double t1 = knut_graphar__write_now();
    if ((st = write_parts(&a, err)))
        goto cleanup;
    double t2 = knut_graphar__write_now();
    if (knut_graphar_adj_list_type_is_ordered(al->type) && (st = write_offsets(&a, err)))
        goto cleanup;
    KNUT_LOG(KNUT_LOG_DEBUG, KNUT_GRAPHAR_LOG,
             "%s: sorted %.2f s, wrote chunks %.2f s, offsets %.2f s", a.where, t1 - t0, t2 - t1,
             knut_graphar__write_now() - t2);
    if ((st = knut_graphar_path_aligned_vertex_count(&path, w->dir, ei, al))) {
        st = knut_error_set(err, st, "%s: building a path", a.where);
        goto cleanup;
    }
    if ((st = knut_graphar__write_count(path.data, aligned_count, err)))
        goto cleanup;
    a.files++;
cleanup:
    *files += a.files;
    drop(&a, &a.sorted);
    drop(&a, &a.offsets);
    free(a.counts);
    knut_buf_reset(&path);
    return st;
}
