/*
 * Edge data checks, per adj list: the aligned vertex_count, edge_count<i>
 * for every part, the sparse part<i> directories and their chunk sets, and
 * in each adjacency chunk the column layout, row count, index ranges, the
 * part a key belongs to and (ordered lists) the sort order, also across
 * chunk boundaries. Ordered lists then get their offset chunk checked:
 * length (padded or trimmed, graphar.md §3.3), start, monotonicity, the
 * part total, and every difference against the degrees counted from the
 * chunks (kept in a temp table of at most one row per vertex and chunk).
 * Edge property chunks must mirror the adjacency chunks row for row.
 */
#include "validate_int.h"

#include <stdlib.h>
#include <string.h>

#define SRC_COL "_graphArSrcIndex"
#define DST_COL "_graphArDstIndex"

static int64_t vertex_count_of(const gv_ctx *c, const char *type)
{
    for (size_t i = 0; i < c->n_vertices; i++)
        if (c->vertices[i] && type && c->vertices[i]->type &&
            strcmp(c->vertices[i]->type, type) == 0)
            return c->vcount ? c->vcount[i] : -1;
    return -1;
}

/* ---- one adjacency chunk ----------------------------------------------- */

/* Column layout; 0 if both index columns are there. */
static int adj_columns(gv_adj_run *r, const char *path)
{
    gv_ctx *c = r->c;
    gv_columns cols;
    if (knut_graphar__validate_sql_describe(c, path, r->al->file_type, &cols) != 0)
        return -1;
    ptrdiff_t s = knut_graphar__validate_columns_find(&cols, SRC_COL),
              d = knut_graphar__validate_columns_find(&cols, DST_COL);
    int parquet = r->al->file_type == KNUT_GRAPHAR_FILE_PARQUET;
    if (s < 0)
        knut_graphar__validate_issue(c, GV_COLUMN_MISSING, path, NULL, SRC_COL,
                                     "no " SRC_COL " column");
    if (d < 0)
        knut_graphar__validate_issue(c, GV_COLUMN_MISSING, path, NULL, DST_COL,
                                     "no " DST_COL " column");
    if (s >= 0 && parquet && strcmp(cols.type[s], "BIGINT") != 0)
        knut_graphar__validate_issue(c, GV_COLUMN_TYPE_MISMATCH, path, NULL, SRC_COL,
                                     "stored as %s; expected BIGINT (int64)", cols.type[s]);
    if (d >= 0 && parquet && strcmp(cols.type[d], "BIGINT") != 0)
        knut_graphar__validate_issue(c, GV_COLUMN_TYPE_MISMATCH, path, NULL, DST_COL,
                                     "stored as %s; expected BIGINT (int64)", cols.type[d]);
    for (size_t i = 0; i < cols.n; i++)
        if (strcmp(cols.name[i], SRC_COL) != 0 && strcmp(cols.name[i], DST_COL) != 0)
            knut_graphar__validate_issue(c, GV_COLUMN_EXTRA, path, NULL, cols.name[i],
                                         "column '%s' in an adjacency chunk", cols.name[i]);
    if (s >= 0 && d >= 0 && (s != 0 || d != 1))
        knut_graphar__validate_issue(c, GV_COLUMN_ORDER, path, NULL, NULL,
                                     SRC_COL " and " DST_COL
                                             " must be the first two columns, in that order");
    knut_graphar__validate_columns_reset(&cols);
    return s >= 0 && d >= 0 ? 0 : -1;
}

/* The adjacency chunk as (_gv_s, _gv_d, _gv_rn) in file order. */
static void adj_relation(knut_buf *q, knut_graphar_file_type ft)
{
    knut_buf_puts(q, "(SELECT ");
    knut_graphar__validate_sql_int_col(q, SRC_COL);
    knut_buf_puts(q, " AS _gv_s, ");
    knut_graphar__validate_sql_int_col(q, DST_COL);
    knut_buf_puts(q, " AS _gv_d, _gv_rn FROM ");
    knut_graphar__validate_sql_source(q, ft);
    knut_buf_puts(q, ")");
}

enum {
    A_ROWS, A_NULLS, A_SRC_BAD, A_SRC_ROW, A_DST_BAD, A_DST_ROW, A_PART_BAD, A_PART_ROW,
    A_DESC, A_DESC_ROW, A_FIRST, A_LAST, A_N
};

/* Summarises one chunk. Returns 0 if it was read; *first / *last get its
 * first and last key (for the sort order across chunks). */
static int check_adj_chunk(gv_adj_run *r, int64_t part, int64_t chunk, const char *path,
                           int64_t edges, int64_t *first, int64_t *last)
{
    gv_ctx *c = r->c;
    if (adj_columns(r, path) != 0)
        return -1;
    /* Saturating: a hostile count and chunk size must not overflow. */
    int64_t lo = part * r->vcs, hi = lo > INT64_MAX - r->vcs ? INT64_MAX : lo + r->vcs;
    const char *key = r->by_src ? "_gv_s" : "_gv_d";
    const int64_t nv[2] = {r->n_src, r->n_dst};
    const char *col[2] = {"_gv_s", "_gv_d"};
    knut_buf *q = &r->sql;
    knut_buf_clear(q);
    knut_buf_puts(q, "SELECT count(*), count(*) FILTER (WHERE _gv_s IS NULL OR _gv_d IS NULL)");
    for (int k = 0; k < 2; k++) {
        if (nv[k] < 0) {
            knut_buf_puts(q, ", 0, NULL");
            continue;
        }
        knut_buf_printf(q, ", count(*) FILTER (WHERE %s < 0 OR %s >= %lld)", col[k], col[k],
                        (long long)nv[k]);
        knut_buf_printf(q, ", min(_gv_rn) FILTER (WHERE %s < 0 OR %s >= %lld)", col[k], col[k],
                        (long long)nv[k]);
    }
    knut_buf_printf(q, ", count(*) FILTER (WHERE %s < %lld OR %s >= %lld)", key, (long long)lo,
                    key, (long long)hi);
    knut_buf_printf(q, ", min(_gv_rn) FILTER (WHERE %s < %lld OR %s >= %lld)", key,
                    (long long)lo, key, (long long)hi);
    knut_buf_printf(q, ", count(*) FILTER (WHERE %s < _gv_prev)", key);
    knut_buf_printf(q, ", min(_gv_rn) FILTER (WHERE %s < _gv_prev)", key);
    knut_buf_printf(q, ", arg_min(%s, _gv_rn), arg_max(%s, _gv_rn)", key, key);
    /* Unordered lists have no order to check: skip the window. */
    if (r->ordered)
        knut_buf_printf(q, " FROM (SELECT *, lag(%s) OVER (ORDER BY _gv_rn) AS _gv_prev FROM ",
                        key);
    else
        knut_buf_puts(q, " FROM (SELECT *, NULL::BIGINT AS _gv_prev FROM ");
    adj_relation(q, r->al->file_type);
    knut_buf_puts(q, ")");
    if (gv_buf_oom(c, q))
        return -1;
    int64_t v[A_N];
    int isnull[A_N];
    if (knut_graphar__validate_sql_ints(c, q->data, path, v, isnull, A_N) != 0)
        return -1;
    int64_t want = knut_graphar_chunk_rows(edges, r->ecs, chunk);
    if (v[A_ROWS] != want)
        knut_graphar__validate_issue(
            c, GV_CHUNK_ROWS, path, NULL, NULL,
            "%lld rows; expected %lld (edge_count%lld %lld, chunk_size %lld)", (long long)v[A_ROWS],
            (long long)want, (long long)part, (long long)edges, (long long)r->ecs);
    if (v[A_NULLS] > 0)
        knut_graphar__validate_issue(c, GV_ADJ_NULL, path, NULL, NULL,
                                     "%lld rows with a null (or non-integer) index",
                                     (long long)v[A_NULLS]);
    if (v[A_SRC_BAD] > 0)
        knut_graphar__validate_issue(
            c, GV_ADJ_SRC_RANGE, path, NULL, SRC_COL,
            "%lld source indices outside [0, %lld) (vertex_count of '%s'; first at row "
            "%lld)",
            (long long)v[A_SRC_BAD], (long long)r->n_src, r->ei->src_type, (long long)v[A_SRC_ROW]);
    if (v[A_DST_BAD] > 0)
        knut_graphar__validate_issue(
            c, GV_ADJ_DST_RANGE, path, NULL, DST_COL,
            "%lld destination indices outside [0, %lld) (vertex_count of '%s'; first at "
            "row %lld)",
            (long long)v[A_DST_BAD], (long long)r->n_dst, r->ei->dst_type, (long long)v[A_DST_ROW]);
    if (v[A_PART_BAD] > 0)
        knut_graphar__validate_issue(
            c, GV_ADJ_PARTITION, path, NULL, r->by_src ? SRC_COL : DST_COL,
            "%lld rows whose %s index is outside this part's [%lld, %lld) (first at row "
            "%lld)",
            (long long)v[A_PART_BAD], r->by_src ? "source" : "destination", (long long)lo,
            (long long)hi, (long long)v[A_PART_ROW]);
    if (v[A_DESC] > 0)
        knut_graphar__validate_issue(
            c, GV_ADJ_UNSORTED, path, NULL, r->by_src ? SRC_COL : DST_COL,
            "%lld rows where the %s index decreases (first at row %lld); %s lists must be "
            "sorted by it",
            (long long)v[A_DESC], r->by_src ? "source" : "destination", (long long)v[A_DESC_ROW],
            knut_graphar_adj_list_type_name(r->al->type));
    *first = isnull[A_FIRST] ? -1 : v[A_FIRST];
    *last = isnull[A_LAST] ? -1 : v[A_LAST];
    if (r->ordered) {
        /* Degrees per key, for the offset check of this part. */
        knut_buf_clear(q);
        knut_buf_printf(q, "INSERT INTO _gv_deg SELECT %s - %lld, count(*) FROM ", key,
                        (long long)lo);
        adj_relation(q, r->al->file_type);
        knut_buf_printf(q, " WHERE %s >= %lld AND %s < %lld GROUP BY 1", key, (long long)lo, key,
                        (long long)hi);
        if (gv_buf_oom(c, q) || knut_graphar__validate_sql_exec(c, q->data, path) != 0)
            return -1;
    }
    return 0;
}

/* ---- one part ---------------------------------------------------------- */

static void check_group_part(gv_adj_run *r, size_t gi, int64_t part, int64_t edges,
                             int64_t n_chunks)
{
    gv_ctx *c = r->c;
    const knut_graphar_property_group *g = &r->ei->groups[gi];
    knut_buf dir = KNUT_BUF_INIT;
    gv_index_set s = {0};
    knut_buf_clear(&r->path);
    knut_graphar_path_edge_chunk(&r->path, c->root, r->ei, r->al, g, part, 0);
    knut_graphar__validate_dirname(&dir, r->path.data ? r->path.data : "");
    if (gv_buf_oom(c, &r->path) || gv_buf_oom(c, &dir) ||
        knut_graphar__validate_index_scan(&s, dir.data, "chunk", NULL) != KNUT_OK) {
        knut_graphar__validate_fail(c, KNUT_ENOMEM, NULL);
        goto cleanup;
    }
    char what[160];
    snprintf(what, sizeof what, "edge_count%lld %lld, chunk_size %lld: %lld chunks, as the "
             "adj list", (long long)part, (long long)edges, (long long)r->ecs,
             (long long)n_chunks);
    if (!s.exists) {
        if (n_chunks == 0)
            goto cleanup;
        /* A whole group absent is one issue, not one per part. */
        knut_buf gdir = KNUT_BUF_INIT;
        knut_graphar_path_adj_list_dir(&gdir, c->root, r->ei, r->al);
        knut_buf_puts(&gdir, g->prefix);
        if (gv_buf_oom(c, &gdir)) {
            knut_buf_reset(&gdir);
            goto cleanup;
        }
        if (!knut_graphar__validate_is_dir(gdir.data)) {
            if (!r->gdir_said[gi])
                knut_graphar__validate_issue(c, GV_CHUNK_MISSING, gdir.data, NULL, NULL,
                                             "edge property group directory is missing");
            r->gdir_said[gi] = 1;
        } else {
            knut_graphar__validate_issue(c, GV_CHUNK_MISSING, dir.data, NULL, NULL,
                                         "part directory is missing (%s)", what);
        }
        knut_buf_reset(&gdir);
        goto cleanup;
    }
    if (n_chunks == 0 && s.n == 0)
        knut_graphar__validate_issue(c, GV_PART_EMPTY, dir.data, NULL, NULL,
                                     "empty part directory (0 edges)");
    knut_graphar__validate_index_report(c, &s, n_chunks, dir.data, "chunk", GV_CHUNK_MISSING,
                                        GV_CHUNK_GAP, GV_CHUNK_EXTRA, what);
    if (!gv_readable(g->file_type))
        goto cleanup;
    for (size_t i = 0; i < s.n && s.v[i] < n_chunks && !gv_done(c); i++) {
        knut_buf_clear(&r->path);
        knut_graphar_path_edge_chunk(&r->path, c->root, r->ei, r->al, g, part, s.v[i]);
        if (gv_buf_oom(c, &r->path))
            break;
        knut_graphar__validate_group_chunk(c, g, r->path.data,
                                           knut_graphar_chunk_rows(edges, r->ecs, s.v[i]), -1, what,
                                           &r->gflags[gi]);
    }
cleanup:
    knut_graphar__validate_index_reset(&s);
    knut_buf_reset(&dir);
}

static void check_part(gv_adj_run *r, int64_t part, int64_t edges, int has_offset)
{
    gv_ctx *c = r->c;
    knut_buf dir = KNUT_BUF_INIT;
    gv_index_set s = {0};
    knut_buf_clear(&r->path);
    knut_graphar_path_adj_chunk(&r->path, c->root, r->ei, r->al, part, 0);
    knut_graphar__validate_dirname(&dir, r->path.data ? r->path.data : "");
    if (gv_buf_oom(c, &r->path) || gv_buf_oom(c, &dir) ||
        knut_graphar__validate_index_scan(&s, dir.data, "chunk", NULL) != KNUT_OK) {
        knut_graphar__validate_fail(c, KNUT_ENOMEM, NULL);
        goto cleanup;
    }
    if (edges < 0)
        goto cleanup; /* edge_count<i> missing or bad: already reported */
    int64_t n = knut_graphar_chunk_count(edges, r->ecs);
    char what[128];
    snprintf(what, sizeof what, "edge_count%lld %lld, chunk_size %lld: %lld chunks",
             (long long)part, (long long)edges, (long long)r->ecs, (long long)n);
    if (!s.exists) {
        if (n > 0)
            knut_graphar__validate_issue(c, GV_CHUNK_MISSING, dir.data, NULL, NULL,
                                         "part directory is missing (%s)", what);
    } else {
        if (n == 0 && s.n == 0)
            knut_graphar__validate_issue(c, GV_PART_EMPTY, dir.data, NULL, NULL,
                                         "empty part directory (0 edges)");
        knut_graphar__validate_index_report(c, &s, n, dir.data, "chunk", GV_CHUNK_MISSING,
                                            GV_CHUNK_GAP, GV_CHUNK_EXTRA, what);
    }
    int readable = gv_readable(r->al->file_type);
    int complete = readable;
    if (readable && r->ordered &&
        knut_graphar__validate_sql_exec(c, "DELETE FROM _gv_deg", NULL) != 0)
        goto cleanup;
    int64_t prev_chunk = -2, prev_last = -1;
    for (int64_t j = 0, i = 0; j < n && readable && !gv_done(c); j++) {
        while ((size_t)i < s.n && s.v[i] < j)
            i++;
        if ((size_t)i >= s.n || s.v[i] != j) {
            complete = 0;
            j = (size_t)i < s.n ? s.v[i] - 1 : n; /* skip the missing run */
            continue;
        }
        knut_buf_clear(&r->path);
        knut_graphar_path_adj_chunk(&r->path, c->root, r->ei, r->al, part, j);
        if (gv_buf_oom(c, &r->path))
            goto cleanup;
        int64_t first = -1, last = -1;
        if (check_adj_chunk(r, part, j, r->path.data, edges, &first, &last) != 0) {
            complete = 0;
            continue;
        }
        if (r->ordered && prev_chunk == j - 1 && first >= 0 && prev_last > first)
            knut_graphar__validate_issue(
                c, GV_ADJ_UNSORTED, r->path.data, NULL, NULL,
                "first %s index %lld is below the last one (%lld) of chunk%lld",
                r->by_src ? "source" : "destination", (long long)first, (long long)prev_last,
                (long long)(j - 1));
        prev_chunk = j;
        prev_last = last;
    }
    if (r->ordered && has_offset && readable && !gv_done(c)) {
        knut_buf_clear(&r->path);
        knut_graphar_path_offset_chunk(&r->path, c->root, r->ei, r->al, part);
        if (!gv_buf_oom(c, &r->path))
            knut_graphar__validate_offset(r, part, r->path.data, edges, complete);
    }
    for (size_t g = 0; g < r->ei->n_groups && !gv_done(c); g++)
        check_group_part(r, g, part, edges, n);
cleanup:
    knut_graphar__validate_index_reset(&s);
    knut_buf_reset(&dir);
}

/* ---- one adj list ------------------------------------------------------- */

/* Appends dir + name + '/' to b (cleared first). */
static void sub_dir(knut_buf *b, const char *dir, const char *name)
{
    knut_buf_clear(b);
    knut_buf_puts(b, dir);
    knut_buf_puts(b, name);
    knut_buf_putc(b, '/');
}

/* Every part index in [0, parts) named by either set, ascending. */
static int64_t next_part(const gv_index_set *a, const gv_index_set *b, size_t *ia, size_t *ib,
                         int64_t parts)
{
    int64_t x = *ia < a->n && a->v[*ia] < parts ? a->v[*ia] : -1;
    int64_t y = *ib < b->n && b->v[*ib] < parts ? b->v[*ib] : -1;
    if (x < 0 && y < 0)
        return -1;
    int64_t p = x < 0 ? y : y < 0 ? x : (x < y ? x : y);
    if (x == p)
        (*ia)++;
    if (y == p)
        (*ib)++;
    return p;
}

/* Checks one adj list; *total gets the sum of its edge counts, or -1. */
static void check_adj_list(gv_adj_run *r, const char *adir, int64_t *total)
{
    gv_ctx *c = r->c;
    gv_index_set counts = {0}, parts = {0}, offsets = {0};
    knut_buf b = KNUT_BUF_INIT;
    *total = -1;
    const char *aligned = knut_graphar_aligned_type(r->ei, r->al->type);
    int64_t m_vertex = vertex_count_of(c, aligned), m_file = -1;
    knut_graphar_path_aligned_vertex_count(&b, c->root, r->ei, r->al);
    if (gv_buf_oom(c, &b))
        goto cleanup;
    int rc = knut_graphar__validate_count_read(c, b.data, &m_file);
    if (rc == 0)
        knut_graphar__validate_issue(
            c, GV_COUNT_MISSING, b.data, NULL, NULL,
            "the adj list's vertex_count is missing (the reference readers need it)");
    else if (rc > 0 && m_vertex >= 0 && m_file != m_vertex)
        knut_graphar__validate_issue(c, GV_COUNT_MISMATCH, b.data, NULL, NULL,
                                     "%lld, but vertex type '%s' has vertex_count %lld",
                                     (long long)m_file, aligned, (long long)m_vertex);
    r->m = m_vertex >= 0 ? m_vertex : m_file;
    if (r->m < 0)
        goto cleanup; /* no count to derive the parts from: reported already */
    int64_t n_parts = knut_graphar_chunk_count(r->m, r->vcs);
    char what[160];
    snprintf(what, sizeof what, "%s vertex_count %lld, chunk size %lld: %lld parts", aligned,
             (long long)r->m, (long long)r->vcs, (long long)n_parts);
    sub_dir(&b, adir, "adj_list");
    if (gv_buf_oom(c, &b) ||
        knut_graphar__validate_index_scan(&counts, adir, "edge_count", NULL) != KNUT_OK ||
        knut_graphar__validate_index_scan(&parts, b.data, "part", NULL) != KNUT_OK) {
        knut_graphar__validate_fail(c, KNUT_ENOMEM, NULL);
        goto cleanup;
    }
    knut_graphar__validate_index_report(c, &counts, n_parts, adir, "edge_count", GV_COUNT_MISSING,
                                        GV_COUNT_MISSING, GV_COUNT_EXTRA, what);
    for (size_t i = 0; i < parts.n && !gv_done(c); i++)
        if (parts.v[i] >= n_parts) {
            char p[4096];
            snprintf(p, sizeof p, "%spart%lld", b.data, (long long)parts.v[i]);
            knut_graphar__validate_issue(c, GV_PART_EXTRA, p, NULL, NULL,
                                         "part beyond the expected ones (%s)", what);
        }
    sub_dir(&b, adir, "offset");
    if (gv_buf_oom(c, &b))
        goto cleanup;
    if (r->ordered) {
        if (knut_graphar__validate_index_scan(&offsets, b.data, "chunk", NULL) != KNUT_OK) {
            knut_graphar__validate_fail(c, KNUT_ENOMEM, NULL);
            goto cleanup;
        }
        knut_graphar__validate_index_report(c, &offsets, n_parts, b.data, "chunk",
                                            GV_OFFSET_MISSING, GV_OFFSET_MISSING, GV_CHUNK_EXTRA,
                                            what);
    } else if (knut_graphar__validate_is_dir(b.data)) {
        knut_graphar__validate_issue(c, GV_OFFSET_UNEXPECTED, b.data, NULL, NULL,
                                     "%s lists have no offsets",
                                     knut_graphar_adj_list_type_name(r->al->type));
    }
    if (!gv_readable(r->al->file_type))
        knut_graphar__validate_issue(c, GV_CONTENTS_UNCHECKED, adir, NULL, NULL,
                                     "contents not checked: %s unsupported",
                                     r->al->file_type == KNUT_GRAPHAR_FILE_ORC ? "ORC" : "JSON");
    for (size_t g = 0; g < r->ei->n_groups; g++)
        if (!gv_readable(r->ei->groups[g].file_type)) {
            knut_buf_clear(&b);
            knut_buf_puts(&b, adir);
            knut_buf_puts(&b, r->ei->groups[g].prefix);
            knut_graphar__validate_issue(
                c, GV_CONTENTS_UNCHECKED, b.data, NULL, NULL,
                "contents not checked: %s unsupported",
                r->ei->groups[g].file_type == KNUT_GRAPHAR_FILE_ORC ? "ORC" : "JSON");
        }
    /* The total is known only if every part's count is. */
    int64_t sum = 0;
    int all_known = 1;
    size_t n_counted = 0;
    for (size_t i = 0; i < counts.n && counts.v[i] < n_parts; i++)
        n_counted++;
    if ((int64_t)n_counted != n_parts)
        all_known = 0;
    size_t ia = 0, ib = 0;
    for (int64_t p; !gv_done(c) && (p = next_part(&counts, &parts, &ia, &ib, n_parts)) >= 0;) {
        int64_t edges = -1;
        if (knut_graphar__validate_index_has(&counts, p)) {
            char cp[4096];
            snprintf(cp, sizeof cp, "%sedge_count%lld", adir, (long long)p);
            if (knut_graphar__validate_count_read(c, cp, &edges) <= 0)
                edges = -1;
        }
        if (edges < 0)
            all_known = 0;
        else if (sum <= INT64_MAX - edges)
            sum += edges;
        check_part(r, p, edges, knut_graphar__validate_index_has(&offsets, p));
    }
    if (all_known && !gv_done(c))
        *total = sum;
cleanup:
    knut_graphar__validate_index_reset(&counts);
    knut_graphar__validate_index_reset(&parts);
    knut_graphar__validate_index_reset(&offsets);
    knut_buf_reset(&b);
}

void knut_graphar__validate_edge_data(gv_ctx *c, size_t ei_index)
{
    const knut_graphar_edge_info *ei = c->edges[ei_index];
    /* Infos the info pass found unusable (reported there) are skipped. */
    if (!ei || !ei->src_type || !ei->edge_type || !ei->dst_type || !ei->prefix ||
        ei->chunk_size <= 0 || ei->src_chunk_size <= 0 || ei->dst_chunk_size <= 0 ||
        ei->n_adj_lists == 0)
        return;
    size_t n = ei->n_adj_lists;
    char **dirs = calloc(n, sizeof *dirs);
    int64_t *totals = calloc(n, sizeof *totals);
    gv_adj_run r;
    memset(&r, 0, sizeof r);
    r.gflags = calloc(ei->n_groups + 1, sizeof *r.gflags);
    r.gdir_said = calloc(ei->n_groups + 1, sizeof *r.gdir_said);
    knut_buf b = KNUT_BUF_INIT;
    if (!dirs || !totals || !r.gflags || !r.gdir_said) {
        knut_graphar__validate_fail(c, KNUT_ENOMEM, NULL);
        goto cleanup;
    }
    size_t with_data = 0;
    for (size_t k = 0; k < n; k++) {
        knut_buf_clear(&b);
        knut_graphar_path_adj_list_dir(&b, c->root, ei, &ei->adj_lists[k]);
        if (gv_buf_oom(c, &b) || !(dirs[k] = strdup(b.data))) {
            knut_graphar__validate_fail(c, KNUT_ENOMEM, NULL);
            goto cleanup;
        }
        with_data += knut_graphar__validate_is_dir(dirs[k]);
    }
    if (with_data == 0) {
        knut_buf_clear(&b);
        knut_buf_puts(&b, c->root);
        knut_buf_puts(&b, ei->prefix);
        knut_graphar__validate_issue(c, c->opts.require_data ? GV_DATA_MISSING : GV_DATA_ABSENT,
                                     b.data, NULL, NULL,
                                     "edge (%s, %s, %s) has no data (no adj list directory)",
                                     ei->src_type, ei->edge_type, ei->dst_type);
        goto cleanup;
    }
    r.c = c;
    r.ei = ei;
    r.ecs = ei->chunk_size;
    r.n_src = vertex_count_of(c, ei->src_type);
    r.n_dst = vertex_count_of(c, ei->dst_type);
    for (size_t k = 0; k < n && !gv_done(c); k++) {
        const knut_graphar_adj_list *al = &ei->adj_lists[k];
        totals[k] = -1;
        if (!knut_graphar__validate_is_dir(dirs[k])) {
            knut_graphar__validate_issue(c, GV_ADJ_LIST_DATA_MISSING, dirs[k], NULL, NULL,
                                         "%s has no data while another adj list of the edge has",
                                         knut_graphar_adj_list_type_name(al->type));
            continue;
        }
        r.al = al;
        r.ordered = knut_graphar_adj_list_type_is_ordered(al->type);
        r.by_src = knut_graphar_adj_list_type_by_source(al->type);
        r.vcs = knut_graphar_aligned_chunk_size(ei, al->type);
        r.offset_int32_said = 0;
        memset(r.gflags, 0, (ei->n_groups + 1) * sizeof *r.gflags);
        memset(r.gdir_said, 0, (ei->n_groups + 1) * sizeof *r.gdir_said);
        check_adj_list(&r, dirs[k], &totals[k]);
    }
    /* Every adj list holds the same edges, in another order. The total
     * most lists agree on is taken as right; the others are reported. */
    size_t ref = n, best = 0;
    for (size_t k = 0; k < n; k++) {
        size_t agree = 0;
        for (size_t j = 0; j < n && totals[k] >= 0; j++)
            agree += totals[j] == totals[k];
        if (agree > best) {
            best = agree;
            ref = k;
        }
    }
    for (size_t k = 0; ref < n && k < n && !gv_done(c); k++)
        if (totals[k] >= 0 && totals[k] != totals[ref])
            knut_graphar__validate_issue(c, GV_COUNT_MISMATCH, dirs[k], NULL, NULL,
                                         "edge counts sum to %lld here but to %lld in %s",
                                         (long long)totals[k], (long long)totals[ref],
                                         knut_graphar_adj_list_type_name(ei->adj_lists[ref].type));
cleanup:
    for (size_t k = 0; dirs && k < n; k++)
        free(dirs[k]);
    free(dirs);
    free(totals);
    free(r.gflags);
    free(r.gdir_said);
    knut_buf_reset(&r.path);
    knut_buf_reset(&r.sql);
    knut_buf_reset(&b);
}
