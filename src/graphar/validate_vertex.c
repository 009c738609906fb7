/*
 * Vertex data checks: vertex_count, the dense chunk set of every property
 * group (chunk0 .. chunk(ceil(N/chunk_size)-1), nothing missing, nothing
 * extra), and each readable chunk's columns, types, row count, index column
 * and nulls. Every chunk is summarised by one aggregate query, so no chunk
 * is ever held in memory. Label chunks get the same treatment.
 */
#include "validate_int.h"

#include <stdlib.h>
#include <string.h>

#define VERTEX_INDEX "_graphArVertexIndex"

/* One aggregate column of the per-chunk query and what it means. */
typedef enum probe_kind { P_ROWS, P_INDEX_BAD, P_INDEX_ROW, P_NULLS, P_BAD_TEXT, P_SET_DUP } probe_kind;
typedef struct probe {
    probe_kind kind;
    const knut_graphar_property *p;
} probe;

static void add_probe(knut_buf *sql, probe *pr, size_t *np, probe_kind kind,
                      const knut_graphar_property *p, const char *expr)
{
    knut_buf_puts(sql, *np ? ", " : "SELECT ");
    knut_buf_puts(sql, expr);
    pr[(*np)++] = (probe){kind, p};
}

/* "count(*) FILTER (WHERE <pre>"name"<post>)" */
static void filter_expr(knut_buf *e, const char *pre, const char *name, const char *mid,
                        const char *name2, const char *post)
{
    knut_buf_clear(e);
    knut_buf_printf(e, "count(*) FILTER (WHERE %s", pre);
    knut_duck_ident(e, name);
    knut_buf_puts(e, mid);
    if (name2)
        knut_duck_ident(e, name2);
    knut_buf_printf(e, "%s)", post);
}

static void check_columns(gv_ctx *c, const char *path, const knut_graphar_property_group *g,
                          const gv_columns *cols, int is_vertex, gv_group_flags *fl)
{
    /* Edge property chunks have no index column: one there is extra. */
    ptrdiff_t idx = is_vertex ? knut_graphar__validate_columns_find(cols, VERTEX_INDEX) : -1;
    int parquet = g->file_type == KNUT_GRAPHAR_FILE_PARQUET;
    if (is_vertex && idx < 0 && !fl->index_missing) {
        fl->index_missing = 1;
        knut_graphar__validate_issue(c, GV_COLUMN_INDEX_MISSING, path, NULL, VERTEX_INDEX,
                                     "no " VERTEX_INDEX
                                     " column (ids are taken from chunk and row; reported once "
                                     "per group)");
    } else if (idx >= 0 && parquet && strcmp(cols->type[idx], "BIGINT") != 0) {
        knut_graphar__validate_issue(c, GV_COLUMN_TYPE_MISMATCH, path, NULL, VERTEX_INDEX,
                                     "stored as %s; expected BIGINT (int64)", cols->type[idx]);
    }
    /* The index column comes first; properties follow in YAML order. */
    int ordered = idx <= 0;
    ptrdiff_t last = idx;
    for (size_t k = 0; k < g->n_props; k++) {
        const knut_graphar_property *p = &g->props[k];
        if (!p->name)
            continue; /* field.missing, from the info pass */
        ptrdiff_t at = knut_graphar__validate_columns_find(cols, p->name);
        const char *want = NULL;
        if (at < 0) {
            knut_graphar__validate_issue(c, GV_COLUMN_MISSING, path, NULL, p->name,
                                         "column '%s' of the property group is missing", p->name);
            continue;
        }
        if (at < last)
            ordered = 0;
        last = at;
        if (parquet && !knut_graphar__validate_type_matches(p, cols->type[at], &want))
            knut_graphar__validate_issue(
                c, GV_COLUMN_TYPE_MISMATCH, path, NULL, p->name,
                "stored as %s; data_type %s%s%s expects %s", cols->type[at],
                p->type_text ? p->type_text : knut_graphar_type_name(p->type),
                p->cardinality != KNUT_GRAPHAR_CARD_SINGLE ? ", cardinality " : "",
                p->cardinality != KNUT_GRAPHAR_CARD_SINGLE
                    ? knut_graphar_cardinality_name(p->cardinality)
                    : "",
                want);
    }
    for (size_t i = 0; i < cols->n; i++) {
        const char *n = cols->name[i];
        int known = is_vertex && strcmp(n, VERTEX_INDEX) == 0;
        for (size_t k = 0; k < g->n_props && !known; k++)
            known = g->props[k].name && strcmp(g->props[k].name, n) == 0;
        if (!known)
            knut_graphar__validate_issue(c, GV_COLUMN_EXTRA, path, NULL, n,
                                         "column '%s' is not in the property group", n);
    }
    if (!ordered && !fl->order) {
        fl->order = 1;
        knut_graphar__validate_issue(
            c, GV_COLUMN_ORDER, path, NULL, NULL,
            "columns are not in YAML order (index column first, then the properties; "
            "reported once per group)");
    }
}

void knut_graphar__validate_group_chunk(gv_ctx *c, const knut_graphar_property_group *g,
                                        const char *path, int64_t want_rows, int64_t index_base,
                                        const char *what, gv_group_flags *fl)
{
    gv_columns cols;
    int is_vertex = index_base >= 0;
    if (knut_graphar__validate_sql_describe(c, path, g->file_type, &cols) != 0)
        return;
    check_columns(c, path, g, &cols, is_vertex, fl);
    int csv = g->file_type == KNUT_GRAPHAR_FILE_CSV;
    size_t cap = 3 + 3 * g->n_props;
    probe *pr = calloc(cap, sizeof *pr);
    int64_t *vals = calloc(cap, sizeof *vals);
    int *nulls = calloc(cap, sizeof *nulls);
    knut_buf sql = KNUT_BUF_INIT, e = KNUT_BUF_INIT;
    size_t np = 0;
    if (!pr || !vals || !nulls) {
        knut_graphar__validate_fail(c, KNUT_ENOMEM, NULL);
        goto cleanup;
    }
    int64_t base = index_base;
    add_probe(&sql, pr, &np, P_ROWS, NULL, "count(*)");
    if (is_vertex && knut_graphar__validate_columns_find(&cols, VERTEX_INDEX) >= 0) {
        knut_buf_clear(&e);
        knut_buf_puts(&e, "count(*) FILTER (WHERE ");
        knut_graphar__validate_sql_int_col(&e, VERTEX_INDEX);
        knut_buf_printf(&e, " IS DISTINCT FROM %lld + _gv_rn)", (long long)base);
        add_probe(&sql, pr, &np, P_INDEX_BAD, NULL, e.data);
        knut_buf_clear(&e);
        knut_buf_puts(&e, "min(_gv_rn) FILTER (WHERE ");
        knut_graphar__validate_sql_int_col(&e, VERTEX_INDEX);
        knut_buf_printf(&e, " IS DISTINCT FROM %lld + _gv_rn)", (long long)base);
        add_probe(&sql, pr, &np, P_INDEX_ROW, NULL, e.data);
    }
    for (size_t k = 0; k < g->n_props; k++) {
        const knut_graphar_property *p = &g->props[k];
        ptrdiff_t at = p->name ? knut_graphar__validate_columns_find(&cols, p->name) : -1;
        const char *want = NULL;
        if (at < 0)
            continue;
        if (!p->is_nullable) {
            filter_expr(&e, "", p->name, " IS NULL", NULL, "");
            add_probe(&sql, pr, &np, P_NULLS, p, e.data);
        }
        const char *cast = csv ? knut_graphar__validate_csv_cast_type(p) : NULL;
        if (cast) {
            char tail[64];
            snprintf(tail, sizeof tail, " AS %s) IS NULL", cast);
            filter_expr(&e, "", p->name, " IS NOT NULL AND TRY_CAST(", p->name, tail);
            add_probe(&sql, pr, &np, P_BAD_TEXT, p, e.data);
        }
        if (!csv && p->cardinality == KNUT_GRAPHAR_CARD_SET &&
            knut_graphar__validate_type_matches(p, cols.type[at], &want)) {
            filter_expr(&e, "list_unique(", p->name, ") < list_aggregate(", p->name, ", 'count')");
            add_probe(&sql, pr, &np, P_SET_DUP, p, e.data);
        }
    }
    knut_buf_puts(&sql, " FROM ");
    knut_graphar__validate_sql_source(&sql, g->file_type);
    if (sql.error || e.error) {
        knut_graphar__validate_fail(c, KNUT_ENOMEM, NULL);
        goto cleanup;
    }
    if (knut_graphar__validate_sql_ints(c, sql.data, path, vals, nulls, np) != 0)
        goto cleanup;
    for (size_t k = 0; k < np; k++) {
        int64_t v = vals[k];
        const knut_graphar_property *p = pr[k].p;
        switch (pr[k].kind) {
        case P_ROWS:
            if (v != want_rows)
                knut_graphar__validate_issue(c, GV_CHUNK_ROWS, path, NULL, NULL,
                                             "%lld rows; expected %lld (%s)", (long long)v,
                                             (long long)want_rows, what);
            break;
        case P_INDEX_BAD:
            if (v > 0)
                knut_graphar__validate_issue(c, GV_COLUMN_INDEX_VALUE, path, NULL, VERTEX_INDEX,
                                             "%lld rows where " VERTEX_INDEX
                                             " != %lld + row (first at row %lld)",
                                             (long long)v, (long long)base, (long long)vals[k + 1]);
            break;
        case P_NULLS:
            if (v > 0)
                knut_graphar__validate_issue(
                    c, GV_COLUMN_NULL, path, NULL, p->name, "%lld nulls in %s column '%s'",
                    (long long)v, p->is_primary ? "primary key" : "non-nullable", p->name);
            break;
        case P_BAD_TEXT:
            if (v > 0)
                knut_graphar__validate_issue(
                    c, GV_COLUMN_TYPE_MISMATCH, path, NULL, p->name,
                    "%lld values of '%s' do not parse as %s", (long long)v, p->name,
                    p->type_text ? p->type_text : knut_graphar_type_name(p->type));
            break;
        case P_SET_DUP:
            if (v > 0)
                knut_graphar__validate_issue(c, GV_COLUMN_SET_DUPLICATE, path, NULL, p->name,
                                             "%lld rows of set property '%s' repeat an element",
                                             (long long)v, p->name);
            break;
        case P_INDEX_ROW:
            break;
        }
    }
cleanup:
    knut_graphar__validate_columns_reset(&cols);
    knut_buf_reset(&sql);
    knut_buf_reset(&e);
    free(pr);
    free(vals);
    free(nulls);
}

/* Label chunks: one BOOLEAN column per label, no index column. */
static void check_label_chunk(gv_ctx *c, const knut_graphar_vertex_info *vi, int64_t chunk,
                              const char *path, int64_t count)
{
    gv_columns cols;
    if (knut_graphar__validate_sql_describe(c, path, KNUT_GRAPHAR_FILE_PARQUET, &cols) != 0)
        return;
    for (size_t k = 0; k < vi->n_labels; k++) {
        ptrdiff_t at = knut_graphar__validate_columns_find(&cols, vi->labels[k]);
        if (at < 0)
            knut_graphar__validate_issue(c, GV_COLUMN_MISSING, path, NULL, vi->labels[k],
                                         "label column '%s' is missing", vi->labels[k]);
        else if (strcmp(cols.type[at], "BOOLEAN") != 0)
            knut_graphar__validate_issue(c, GV_COLUMN_TYPE_MISMATCH, path, NULL, vi->labels[k],
                                         "label column stored as %s; expected BOOLEAN",
                                         cols.type[at]);
    }
    for (size_t i = 0; i < cols.n; i++) {
        int known = 0;
        for (size_t k = 0; k < vi->n_labels && !known; k++)
            known = strcmp(vi->labels[k], cols.name[i]) == 0;
        if (!known)
            knut_graphar__validate_issue(c, GV_COLUMN_EXTRA, path, NULL, cols.name[i],
                                         "column '%s' is not a declared label", cols.name[i]);
    }
    knut_graphar__validate_columns_reset(&cols);
    int64_t rows = 0;
    int isnull = 0;
    if (knut_graphar__validate_sql_ints(c, "SELECT count(*) FROM read_parquet($1)", path, &rows,
                                        &isnull, 1) != 0)
        return;
    int64_t want = knut_graphar_chunk_rows(count, vi->chunk_size, chunk);
    if (rows != want)
        knut_graphar__validate_issue(
            c, GV_CHUNK_ROWS, path, NULL, NULL,
            "%lld rows; expected %lld (vertex_count %lld, chunk_size %lld)", (long long)rows,
            (long long)want, (long long)count, (long long)vi->chunk_size);
}

/* Does the vertex directory hold any chunk of any group (or labels)? */
static int has_any_data(const knut_graphar_vertex_info *vi, const char *root, knut_buf *b)
{
    for (size_t g = 0; g < vi->n_groups; g++) {
        knut_buf_clear(b);
        knut_graphar_path_vertex_chunk(b, root, vi, &vi->groups[g], 0);
        gv_index_set s;
        knut_buf d = KNUT_BUF_INIT;
        knut_graphar__validate_dirname(&d, b->data ? b->data : "");
        int any =
            knut_graphar__validate_index_scan(&s, d.data ? d.data : "", "chunk", NULL) == KNUT_OK &&
            s.n > 0;
        knut_graphar__validate_index_reset(&s);
        knut_buf_reset(&d);
        if (any)
            return 1;
    }
    return 0;
}

static void check_group(gv_ctx *c, const knut_graphar_vertex_info *vi, size_t gi_index,
                        int64_t count, const char *what, knut_buf *b)
{
    const knut_graphar_property_group *g = &vi->groups[gi_index];
    int64_t n_chunks = knut_graphar_chunk_count(count, vi->chunk_size);
    knut_buf dir = KNUT_BUF_INIT;
    gv_index_set s = {0};
    knut_error e = KNUT_ERROR_INIT;
    knut_buf_clear(b);
    knut_graphar_path_vertex_group(&dir, c->root, vi, g);
    if (dir.error || knut_graphar__validate_index_scan(&s, dir.data, "chunk", &e) != KNUT_OK) {
        knut_graphar__validate_fail(c, KNUT_ENOMEM, NULL);
        goto cleanup;
    }
    if (!s.exists) {
        if (n_chunks > 0)
            knut_graphar__validate_issue(c, GV_CHUNK_MISSING, dir.data, NULL, NULL,
                                         "property group directory is missing (%s)", what);
        goto cleanup;
    }
    knut_graphar__validate_index_report(c, &s, n_chunks, dir.data, "chunk", GV_CHUNK_MISSING,
                                        GV_CHUNK_GAP, GV_CHUNK_EXTRA, what);
    if (!gv_readable(g->file_type)) {
        knut_graphar__validate_issue(c, GV_CONTENTS_UNCHECKED, dir.data, NULL, NULL,
                                     "contents not checked: %s unsupported",
                                     g->file_type == KNUT_GRAPHAR_FILE_ORC ? "ORC" : "JSON");
        goto cleanup;
    }
    gv_group_flags fl = {0, 0};
    for (size_t i = 0; i < s.n && s.v[i] < n_chunks && !gv_done(c); i++) {
        knut_buf_clear(b);
        knut_graphar_path_vertex_chunk(b, c->root, vi, g, s.v[i]);
        if (b->error) {
            knut_graphar__validate_fail(c, KNUT_ENOMEM, NULL);
            break;
        }
        knut_graphar__validate_group_chunk(c, g, b->data,
                                           knut_graphar_chunk_rows(count, vi->chunk_size, s.v[i]),
                                           s.v[i] * vi->chunk_size, what, &fl);
    }
cleanup:
    knut_graphar__validate_index_reset(&s);
    knut_buf_reset(&dir);
}

static void check_labels(gv_ctx *c, const knut_graphar_vertex_info *vi, int64_t count,
                         const char *what, knut_buf *b)
{
    knut_buf dir = KNUT_BUF_INIT;
    gv_index_set s = {0};
    knut_buf_clear(b);
    knut_graphar_path_label_chunk(b, c->root, vi, 0);
    knut_graphar__validate_dirname(&dir, b->data ? b->data : "");
    if (b->error || dir.error ||
        knut_graphar__validate_index_scan(&s, dir.data, "chunk", NULL) != KNUT_OK) {
        knut_graphar__validate_fail(c, KNUT_ENOMEM, NULL);
        goto cleanup;
    }
    int64_t n_chunks = knut_graphar_chunk_count(count, vi->chunk_size);
    if (!s.exists) {
        if (n_chunks > 0)
            knut_graphar__validate_issue(c, GV_LABELS_MISSING, dir.data, NULL, "labels",
                                         "%zu labels declared but no label chunks", vi->n_labels);
        goto cleanup;
    }
    knut_graphar__validate_index_report(c, &s, n_chunks, dir.data, "chunk", GV_CHUNK_MISSING,
                                        GV_CHUNK_GAP, GV_CHUNK_EXTRA, what);
    for (size_t i = 0; i < s.n && s.v[i] < n_chunks && !gv_done(c); i++) {
        knut_buf_clear(b);
        knut_graphar_path_label_chunk(b, c->root, vi, s.v[i]);
        if (b->error) {
            knut_graphar__validate_fail(c, KNUT_ENOMEM, NULL);
            break;
        }
        check_label_chunk(c, vi, s.v[i], b->data, count);
    }
cleanup:
    knut_graphar__validate_index_reset(&s);
    knut_buf_reset(&dir);
}

void knut_graphar__validate_vertex_data(gv_ctx *c, size_t vi_index)
{
    const knut_graphar_vertex_info *vi = c->vertices[vi_index];
    /* Infos the info pass found unusable (reported there) are skipped. */
    if (!vi || !vi->type || vi->chunk_size <= 0 || !vi->prefix)
        return;
    knut_buf b = KNUT_BUF_INIT, vdir = KNUT_BUF_INIT;
    knut_graphar_path_vertex_count(&b, c->root, vi);
    knut_graphar__validate_dirname(&vdir, b.data ? b.data : "");
    if (b.error || vdir.error) {
        knut_graphar__validate_fail(c, KNUT_ENOMEM, NULL);
        goto cleanup;
    }
    int64_t count = 0;
    int r = knut_graphar__validate_count_read(c, b.data, &count);
    if (r == 0) {
        if (!has_any_data(vi, c->root, &b))
            knut_graphar__validate_issue(
                c, c->opts.require_data ? GV_DATA_MISSING : GV_DATA_ABSENT, vdir.data, NULL, NULL,
                "vertex type '%s' has no data (no vertex_count, no chunks)", vi->type);
        else
            knut_graphar__validate_issue(c, GV_COUNT_MISSING, b.data, NULL, NULL,
                                         "vertex_count is missing but chunks exist");
        goto cleanup;
    }
    if (r < 0)
        goto cleanup;
    c->vcount[vi_index] = count;
    char what[160];
    snprintf(what, sizeof what, "vertex_count %lld, chunk_size %lld: %lld chunks",
             (long long)count, (long long)vi->chunk_size,
             (long long)knut_graphar_chunk_count(count, vi->chunk_size));
    for (size_t g = 0; g < vi->n_groups && !gv_done(c); g++)
        check_group(c, vi, g, count, what, &b);
    if (vi->n_labels > 0 && !gv_done(c))
        check_labels(c, vi, count, what, &b);
cleanup:
    knut_buf_reset(&b);
    knut_buf_reset(&vdir);
}
