/*
 * Offset chunks of ordered adj lists (graphar.md §3.3): offset/chunk<i>
 * holds, for every vertex of part i, where its edges start in the part's
 * concatenated adjacency chunks. Checked here: the column, its length
 * (vertices_in_part + 1, or chunk_size + 1 when padded as C++ and Spark
 * write it), a first value of 0, no decrease, the value after the last
 * vertex (and every padding value) equal to edge_count<i>, and each
 * difference equal to the vertex's degree counted from the adjacency
 * chunks (the _gv_deg table filled by validate_edge.c).
 */
#include "validate_int.h"

#include <string.h>

#define OFFSET_COL "_graphArOffset"

static void offset_relation(knut_buf *q, knut_graphar_file_type ft)
{
    knut_buf_puts(q, "(SELECT ");
    knut_graphar__validate_sql_int_col(q, OFFSET_COL);
    knut_buf_puts(q, " AS _gv_v, _gv_rn FROM ");
    knut_graphar__validate_sql_source(q, ft);
    knut_buf_puts(q, ")");
}

enum { O_ROWS, O_FIRST, O_DESC, O_DESC_ROW, O_NULLS, O_AT_K, O_TAIL_BAD, O_N };

void knut_graphar__validate_offset(gv_adj_run *r, int64_t part, const char *path, int64_t edges,
                                   int degrees_ok)
{
    gv_ctx *c = r->c;
    gv_columns cols;
    if (knut_graphar__validate_sql_describe(c, path, r->al->file_type, &cols) != 0)
        return;
    ptrdiff_t at = knut_graphar__validate_columns_find(&cols, OFFSET_COL);
    int usable = at >= 0;
    if (at < 0) {
        knut_graphar__validate_issue(c, GV_COLUMN_MISSING, path, NULL, OFFSET_COL,
                                     "no " OFFSET_COL " column");
    } else if (r->al->file_type == KNUT_GRAPHAR_FILE_PARQUET &&
               strcmp(cols.type[at], "BIGINT") != 0) {
        if (strcmp(cols.type[at], "INTEGER") == 0) {
            if (!r->offset_int32_said)
                knut_graphar__validate_issue(
                    c, GV_OFFSET_INT32, path, NULL, OFFSET_COL,
                    "offsets stored as int32 (as Spark writes them); int64 expected "
                    "(reported once per adj list)");
            r->offset_int32_said = 1;
        } else {
            knut_graphar__validate_issue(c, GV_COLUMN_TYPE_MISMATCH, path, NULL, OFFSET_COL,
                                         "stored as %s; expected BIGINT (int64)", cols.type[at]);
            usable = 0;
        }
    }
    for (size_t i = 0; i < cols.n; i++)
        if (strcmp(cols.name[i], OFFSET_COL) != 0)
            knut_graphar__validate_issue(c, GV_COLUMN_EXTRA, path, NULL, cols.name[i],
                                         "column '%s' in an offset chunk", cols.name[i]);
    knut_graphar__validate_columns_reset(&cols);
    if (!usable)
        return;
    /* Vertices in this part: all but the last part are full. */
    int64_t k = r->m - part * r->vcs < r->vcs ? r->m - part * r->vcs : r->vcs;
    knut_buf *q = &r->sql;
    knut_buf_clear(q);
    knut_buf_printf(q,
                    "SELECT count(*), max(_gv_v) FILTER (WHERE _gv_rn = 0), count(*) FILTER "
                    "(WHERE _gv_v < _gv_prev), min(_gv_rn) FILTER (WHERE _gv_v < _gv_prev), "
                    "count(*) FILTER (WHERE _gv_v IS NULL), max(_gv_v) FILTER (WHERE _gv_rn = "
                    "%lld), count(*) FILTER (WHERE _gv_rn > %lld AND _gv_v IS DISTINCT FROM %lld)"
                    " FROM (SELECT *, lag(_gv_v) OVER (ORDER BY _gv_rn) AS _gv_prev FROM ",
                    (long long)k, (long long)k, (long long)(edges < 0 ? 0 : edges));
    offset_relation(q, r->al->file_type);
    knut_buf_puts(q, ")");
    int64_t v[O_N];
    int isnull[O_N];
    if (gv_buf_oom(c, q) || knut_graphar__validate_sql_ints(c, q->data, path, v, isnull, O_N) != 0)
        return;
    int bad = 0;
    if (v[O_ROWS] != k + 1 && v[O_ROWS] != r->vcs + 1) {
        bad = 1;
        knut_graphar__validate_issue(
            c, GV_OFFSET_LENGTH, path, NULL, OFFSET_COL,
            "%lld rows; expected %lld (vertices in part%lld + 1) or %lld (chunk size + 1)",
            (long long)v[O_ROWS], (long long)(k + 1), (long long)part, (long long)(r->vcs + 1));
    }
    if (v[O_NULLS] > 0) {
        bad = 1;
        knut_graphar__validate_issue(c, GV_COLUMN_NULL, path, NULL, OFFSET_COL,
                                     "%lld null (or non-integer) offsets", (long long)v[O_NULLS]);
    }
    if (v[O_ROWS] > 0 && (isnull[O_FIRST] || v[O_FIRST] != 0)) {
        bad = 1;
        knut_graphar__validate_issue(c, GV_OFFSET_FIRST, path, NULL, OFFSET_COL,
                                     "first offset is %lld, not 0", (long long)v[O_FIRST]);
    }
    if (v[O_DESC] > 0) {
        bad = 1;
        knut_graphar__validate_issue(c, GV_OFFSET_NON_MONOTONIC, path, NULL, OFFSET_COL,
                                     "offsets decrease %lld times (first at row %lld)",
                                     (long long)v[O_DESC], (long long)v[O_DESC_ROW]);
    }
    if (edges < 0)
        return;
    if (v[O_ROWS] > k && (isnull[O_AT_K] || v[O_AT_K] != edges)) {
        bad = 1;
        knut_graphar__validate_issue(
            c, GV_OFFSET_LAST, path, NULL, OFFSET_COL,
            "offset at row %lld (after the part's last vertex) is %lld; edge_count%lld is "
            "%lld",
            (long long)k, (long long)v[O_AT_K], (long long)part, (long long)edges);
    }
    if (v[O_TAIL_BAD] > 0) {
        bad = 1;
        knut_graphar__validate_issue(
            c, GV_OFFSET_LAST, path, NULL, OFFSET_COL,
            "%lld padding rows after row %lld differ from edge_count%lld (%lld)",
            (long long)v[O_TAIL_BAD], (long long)k, (long long)part, (long long)edges);
    }
    if (bad || !degrees_ok || gv_done(c))
        return;
    knut_buf_clear(q);
    knut_buf_puts(q, "SELECT count(*), min(k) FROM (SELECT _gv_rn AS k, lead(_gv_v) OVER (ORDER "
                     "BY _gv_rn) - _gv_v AS deg FROM ");
    offset_relation(q, r->al->file_type);
    knut_buf_printf(q,
                    ") o FULL OUTER JOIN (SELECT k, sum(n) AS n FROM _gv_deg GROUP BY k) d "
                    "USING (k) WHERE k < %lld AND coalesce(o.deg, -1) <> coalesce(d.n, 0)",
                    (long long)k);
    int64_t dv[2];
    int dn[2];
    if (gv_buf_oom(c, q) || knut_graphar__validate_sql_ints(c, q->data, path, dv, dn, 2) != 0)
        return;
    if (dv[0] > 0)
        knut_graphar__validate_issue(
            c, GV_OFFSET_DEGREE, path, NULL, OFFSET_COL,
            "%lld vertices whose offset difference is not their number of edges (first: "
            "vertex %lld)",
            (long long)dv[0], (long long)(part * r->vcs + dv[1]));
}
