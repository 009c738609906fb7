/*
 * Writing one vertex type. The source is materialised once into a DuckDB
 * temp table (keys, properties cast to their GraphAr types, labels) whose
 * rowid is the vertex index: input order, or key order when asked. That
 * table is then checked (null or duplicate keys, nulls in non-nullable
 * properties, duplicates in sets), cut into chunks with one prepared COPY
 * per property group, and kept as the key -> index mapping for edges.
 */
#include "write_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Column names of the vertex table that cannot clash with properties. */
#define VKEY "__knut_k%zu"
#define VLABEL "__knut_l%zu"

typedef struct vjob {
    knut_graphar_writer *w;
    const knut_graphar_vertex_info *vi;
    const knut_graphar_vertex_source *src;
    const char *name;          /* source name for messages */
    char what[256];            /* "vertex type 'x'" */
    const char *const *keys;   /* source key columns */
    size_t n_keys;
    const char *primary;       /* when keys defaulted to it */
    knut_buf rel;              /* the source relation */
    char *table;
    int64_t count;
    int64_t files;
} vjob;

static int has_column(char *const *cols, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(cols[i], name) == 0)
            return 1;
    return 0;
}

static knut_status missing_column(vjob *j, char *const *cols, size_t n, const char *col,
                                  const char *role, knut_error *err)
{
    knut_buf list = KNUT_BUF_INIT;
    for (size_t i = 0; i < n && i < 32; i++)
        knut_buf_printf(&list, "%s%s", i ? ", " : "", cols[i]);
    knut_status st = knut_error_set(err, KNUT_EINVAL, "%s: %s: no column '%s' (%s); it has: %s",
                                    j->what, j->name, col, role,
                                    list.data ? list.data : "(none)");
    knut_buf_reset(&list);
    return st;
}

/* Keys, labels and property checks that need no data. */
static knut_status check_spec(vjob *j, knut_error *err)
{
    const knut_graphar_vertex_info *vi = j->vi;
    knut_status st;
    int ok = knut_graphar__write_prefix_safe(vi->prefix);
    for (size_t g = 0; ok && g < vi->n_groups; g++)
        ok = knut_graphar__write_prefix_safe(vi->groups[g].prefix);
    if (!ok)
        return knut_error_set(err, KNUT_EINVAL,
                              "%s: prefixes must be relative paths without '..'", j->what);
    for (size_t g = 0; g < vi->n_groups; g++)
        if ((st = knut_graphar__write_check_group(&vi->groups[g], j->what, err)))
            return st;
    for (size_t g = 0; g < vi->n_groups; g++)
        for (size_t k = 0; k < vi->groups[g].n_props; k++) {
            const knut_graphar_property *p = &vi->groups[g].props[k];
            const knut_graphar_property_group *og = NULL;
            if (knut_graphar_vertex_info_property(vi, p->name, &og) != p)
                return knut_error_set(err, KNUT_EINVAL, "%s: property '%s' is defined twice",
                                      j->what, p->name);
        }
    if (j->src->n_keys) {
        j->keys = j->src->keys;
        j->n_keys = j->src->n_keys;
        return KNUT_OK;
    }
    /* No keys given: the single primary key is the key. */
    for (size_t g = 0; g < vi->n_groups; g++)
        for (size_t k = 0; k < vi->groups[g].n_props; k++)
            if (vi->groups[g].props[k].is_primary) {
                if (j->primary)
                    return knut_error_set(err, KNUT_EINVAL,
                                          "%s: several primary keys; name the key columns",
                                          j->what);
                j->primary = vi->groups[g].props[k].name;
            }
    if (!j->primary)
        return knut_error_set(err, KNUT_EINVAL,
                              "%s: no key columns given and no primary-key property", j->what);
    j->keys = &j->primary;
    j->n_keys = 1;
    return KNUT_OK;
}

static const char *label_col(const vjob *j, size_t i)
{
    return j->src->label_columns ? j->src->label_columns[i] : j->vi->labels[i];
}

/* CREATE TEMP TABLE t AS SELECT keys, CAST(props), labels FROM source. */
static knut_status materialise(vjob *j, knut_error *err)
{
    const knut_graphar_vertex_info *vi = j->vi;
    knut_buf sql = KNUT_BUF_INIT;
    knut_buf_puts(&sql, "CREATE TEMP TABLE ");
    knut_duck_ident(&sql, j->table);
    knut_buf_puts(&sql, " AS SELECT ");
    for (size_t k = 0; k < j->n_keys; k++) {
        knut_buf_puts(&sql, k ? ", s." : "s.");
        knut_duck_ident(&sql, j->keys[k]);
        knut_buf_printf(&sql, " AS " VKEY, k);
    }
    size_t i = 0;
    for (size_t g = 0; g < vi->n_groups; g++)
        for (size_t k = 0; k < vi->groups[g].n_props; k++, i++) {
            const knut_graphar_property *p = &vi->groups[g].props[k];
            knut_buf_puts(&sql, ", ");
            knut_graphar__write_sql_cast(&sql, p->name, p);
            knut_buf_printf(&sql, " AS " KNUT_GRAPHAR_W_PCOL, i);
        }
    for (size_t l = 0; l < vi->n_labels; l++) {
        knut_buf_puts(&sql, ", coalesce(CAST(s.");
        knut_duck_ident(&sql, label_col(j, l));
        knut_buf_printf(&sql, " AS BOOLEAN), false) AS " VLABEL, l);
    }
    knut_buf_printf(&sql, " FROM %s AS s", j->rel.data);
    if (j->src->order_by_key) {
        knut_buf_puts(&sql, " ORDER BY ");
        for (size_t k = 0; k < j->n_keys; k++)
            knut_buf_printf(&sql, "%s" VKEY, k ? ", " : "", k);
    }
    knut_status st = knut_buf_check(&sql, err);
    if (!st)
        st = knut_duck_exec(j->w->conn, sql.data, err);
    knut_buf_reset(&sql);
    if (!st)
        return KNUT_OK;
    /* Name the row and column DuckDB's conversion error leaves out. */
    size_t n = 0;
    for (size_t g = 0; g < vi->n_groups; g++)
        n += vi->groups[g].n_props;
    n += vi->n_labels;
    const char **cols = calloc(n + 1, sizeof *cols);
    char **types = calloc(n + 1, sizeof *types);
    i = 0;
    for (size_t g = 0; cols && types && g < vi->n_groups; g++)
        for (size_t k = 0; k < vi->groups[g].n_props; k++, i++) {
            knut_buf t = KNUT_BUF_INIT;
            knut_graphar__write_sql_parse_type(&t, &vi->groups[g].props[k]);
            cols[i] = vi->groups[g].props[k].name;
            types[i] = knut_buf_detach(&t, NULL);
        }
    for (size_t l = 0; cols && types && l < vi->n_labels; l++, i++) {
        cols[i] = label_col(j, l);
        types[i] = strdup("BOOLEAN");
    }
    return knut_graphar__write_report_cast_failure(j->w, j->rel.data, j->name, j->what, cols, types,
                                                   n, st, err);
}

/* A problem found in the table, named by its source row (and the value
 * of the SQL expression value_src there, if given). */
static knut_status report_row(vjob *j, const char *cond_src, const char *value_src,
                              const char *msg, knut_error *err)
{
    int64_t row = -1;
    char val[256] = "";
    knut_status st = knut_graphar__write_first_row(j->w, j->rel.data, cond_src, value_src, &row,
                                                   val, sizeof val, err);
    if (st)
        return st;
    char at[64] = "";
    if (row >= 0)
        snprintf(at, sizeof at, "row %lld: ", (long long)row);
    return knut_error_set(err, KNUT_EINVAL, "%s: %s: %s%s%s%s", j->what, j->name, at, msg,
                          value_src ? ": " : "", value_src ? val : "");
}

/* One aggregate over the table finds any problem; only then is the source
 * re-read in order to name the first bad row. */
static knut_status check_rows(vjob *j, knut_error *err)
{
    const knut_graphar_vertex_info *vi = j->vi;
    knut_buf sql = KNUT_BUF_INIT, a = KNUT_BUF_INIT, b = KNUT_BUF_INIT;
    knut_buf_puts(&sql, "SELECT count(*) FILTER (WHERE false");
    for (size_t k = 0; k < j->n_keys; k++)
        knut_buf_printf(&sql, " OR " VKEY " IS NULL", k);
    knut_buf_puts(&sql, ")");
    size_t i = 0;
    for (size_t g = 0; g < vi->n_groups; g++)
        for (size_t k = 0; k < vi->groups[g].n_props; k++, i++) {
            const knut_graphar_property *p = &vi->groups[g].props[k];
            knut_buf_printf(&sql, ", count(*) FILTER (WHERE " KNUT_GRAPHAR_W_PCOL " IS NULL)", i);
            /* list_distinct drops NULLs; count counts non-NULLs. */
            if (p->cardinality == KNUT_GRAPHAR_CARD_SET)
                knut_buf_printf(&sql,
                                ", count(*) FILTER (WHERE len(list_distinct(" KNUT_GRAPHAR_W_PCOL
                                ")) < list_aggregate(" KNUT_GRAPHAR_W_PCOL ", 'count'))",
                                i, i);
        }
    knut_buf_puts(&sql, " FROM ");
    knut_duck_ident(&sql, j->table);
    knut_status st = knut_buf_check(&sql, err);
    gar_rows r;
    memset(&r, 0, sizeof r);
    if (!st)
        st = knut_graphar__write_rows_open(&r, j->w->conn, sql.data, err);
    if (!st && (st = knut_graphar__write_rows_next(&r, err)) == KNUT_EOF)
        st = knut_error_set(err, KNUT_ERROR, "%s: checking rows: no result", j->what);
    int64_t c = 0;
#define NEXT_COUNT()                                                                     \
    knut_arrow_view_get_int64(knut_graphar_w__rows_col(&r, c++), knut_graphar_w__rows_at(&r))
    if (!st && NEXT_COUNT() > 0) {
        for (size_t k = 0; k < j->n_keys; k++) {
            knut_buf_printf(&a, "%ss.", k ? " OR " : "");
            knut_duck_ident(&a, j->keys[k]);
            knut_buf_puts(&a, " IS NULL");
        }
        st = knut_buf_check(&a, err);
        if (!st)
            st = report_row(j, a.data, NULL, "a key column is null", err);
    }
    for (size_t g = 0; !st && g < vi->n_groups; g++)
        for (size_t k = 0; !st && k < vi->groups[g].n_props; k++) {
            const knut_graphar_property *p = &vi->groups[g].props[k];
            int64_t nulls = NEXT_COUNT();
            int64_t dups = p->cardinality == KNUT_GRAPHAR_CARD_SET ? NEXT_COUNT() : 0;
            knut_buf_clear(&a);
            knut_buf_clear(&b);
            char fmt[300];
            if (nulls > 0 && !p->is_nullable) {
                knut_buf_puts(&a, "s.");
                knut_duck_ident(&a, p->name);
                knut_buf_puts(&a, " IS NULL");
                snprintf(fmt, sizeof fmt, "column '%.200s' is null but the property is %s",
                         p->name, p->is_primary ? "a primary key" : "not nullable");
                st = knut_buf_check(&a, err);
                if (!st)
                    st = report_row(j, a.data, NULL, fmt, err);
            } else if (dups > 0) {
                knut_graphar__write_sql_cast(&b, p->name, p);
                knut_buf_printf(&a, "len(list_distinct(%s)) < list_aggregate(%s, 'count')",
                                b.data, b.data);
                snprintf(fmt, sizeof fmt,
                         "column '%.200s' holds duplicate values but the property is a set",
                         p->name);
                st = knut_buf_check(&a, err);
                if (!st)
                    st = report_row(j, a.data, b.data, fmt, err);
            }
        }
#undef NEXT_COUNT
    knut_graphar__write_rows_close(&r);
    knut_buf_reset(&sql);
    knut_buf_reset(&a);
    knut_buf_reset(&b);
    return st;
}

/* Keys must be unique: they name vertices for the edges. */
static knut_status check_unique(vjob *j, knut_error *err)
{
    knut_buf sql = KNUT_BUF_INIT;
    knut_buf_puts(&sql, "SELECT concat_ws(', '");
    for (size_t k = 0; k < j->n_keys; k++)
        knut_buf_printf(&sql, ", CAST(" VKEY " AS VARCHAR)", k);
    knut_buf_puts(&sql, "), count(*), min(rowid) + 1, max(rowid) + 1 FROM ");
    knut_duck_ident(&sql, j->table);
    /* the earliest duplicate: the same report on every run, whatever
     * order the threads aggregate in */
    knut_buf_puts(&sql, " GROUP BY ALL HAVING count(*) > 1 ORDER BY 3 LIMIT 1");
    knut_status st = knut_buf_check(&sql, err);
    gar_rows r;
    memset(&r, 0, sizeof r);
    if (!st)
        st = knut_graphar__write_rows_open(&r, j->w->conn, sql.data, err);
    if (!st && (st = knut_graphar__write_rows_next(&r, err)) == KNUT_OK) {
        char key[256];
        knut_graphar__write_rows_text(&r, 0, key, sizeof key);
        int64_t at = knut_graphar_w__rows_at(&r);
        long long n = (long long)knut_arrow_view_get_int64(knut_graphar_w__rows_col(&r, 1), at);
        knut_buf keys = KNUT_BUF_INIT;
        for (size_t k = 0; k < j->n_keys; k++)
            knut_buf_printf(&keys, "%s%s", k ? ", " : "", j->keys[k]);
        if (j->src->order_by_key)
            st = knut_error_set(err, KNUT_EINVAL, "%s: %s: key (%s) = (%s) appears %lld times",
                                j->what, j->name, keys.data, key, n);
        else
            st = knut_error_set(
                err, KNUT_EINVAL, "%s: %s: key (%s) = (%s) appears %lld times (rows %lld and %lld)",
                j->what, j->name, keys.data, key, n,
                (long long)knut_arrow_view_get_int64(knut_graphar_w__rows_col(&r, 2), at),
                (long long)knut_arrow_view_get_int64(knut_graphar_w__rows_col(&r, 3), at));
        knut_buf_reset(&keys);
    } else if (st == KNUT_EOF) {
        st = KNUT_OK;
    } else if (st) {
        knut_error_prefix(err, "%s: checking keys: ", j->what);
    }
    knut_graphar__write_rows_close(&r);
    knut_buf_reset(&sql);
    return st;
}

/* The DuckDB types of the key columns, as DESCRIBE spells them. */
static knut_status key_types(vjob *j, char ***out, knut_error *err)
{
    char **v = calloc(j->n_keys + 1, sizeof *v);
    if (!v)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    knut_buf sql = KNUT_BUF_INIT;
    knut_buf_puts(&sql, "SELECT column_name, column_type FROM (DESCRIBE ");
    knut_duck_ident(&sql, j->table);
    knut_buf_puts(&sql, ")");
    gar_rows r;
    memset(&r, 0, sizeof r);
    knut_status st = knut_buf_check(&sql, err);
    if (!st)
        st = knut_graphar__write_rows_open(&r, j->w->conn, sql.data, err);
    size_t n = 0;
    while (!st && (st = knut_graphar__write_rows_next(&r, err)) == KNUT_OK) {
        char name[64], t[256];
        unsigned k = 0;
        int used = 0;
        knut_graphar__write_rows_text(&r, 0, name, sizeof name);
        if (sscanf(name, "__knut_k%u%n", &k, &used) != 1 || name[used] || k >= j->n_keys ||
            v[k])
            continue;
        knut_graphar__write_rows_text(&r, 1, t, sizeof t);
        if (!(v[k] = strdup(t)))
            st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
        n++;
    }
    if (st == KNUT_EOF)
        st = n == j->n_keys ? KNUT_OK
                            : knut_error_set(err, KNUT_ERROR, "%s: key columns not found",
                                             j->what);
    knut_graphar__write_rows_close(&r);
    knut_buf_reset(&sql);
    if (st)
        knut_graphar__strv_free(v, j->n_keys);
    else
        *out = v;
    return st;
}

/* Runs one prepared COPY per chunk. */
static knut_status write_chunks(vjob *j, const char *select, knut_graphar_file_type ft,
                                const char *const *cols, size_t n_cols, const char *const *strs,
                                size_t n_strs, int zstd, const knut_graphar_property_group *g,
                                knut_error *err)
{
    gar_copy cp;
    knut_status st = knut_graphar__write_copy_prepare(j->w, &cp, select, ft, cols, n_cols, strs,
                                                      n_strs, zstd, err);
    if (st)
        return knut_error_prefix(err, "%s: ", j->what);
    int64_t cs = j->vi->chunk_size, n = knut_graphar_chunk_count(j->count, cs);
    knut_buf path = KNUT_BUF_INIT;
    for (int64_t c = 0; !st && c < n; c++) {
        knut_buf_clear(&path);
        st = g ? knut_graphar_path_vertex_chunk(&path, j->w->dir, j->vi, g, c)
               : knut_graphar_path_label_chunk(&path, j->w->dir, j->vi, c);
        if (st)
            st = knut_error_set(err, st, "%s: building a chunk path", j->what);
        else
            st = knut_graphar__write_copy_run(&cp, path.data, c * cs, c * cs + cs - 1, err);
        if (!st)
            j->files++;
    }
    knut_buf_reset(&path);
    knut_graphar__write_copy_free(&cp);
    return st;
}

static knut_status write_files(vjob *j, knut_error *err)
{
    const knut_graphar_vertex_info *vi = j->vi;
    knut_buf sel = KNUT_BUF_INIT, path = KNUT_BUF_INIT;
    knut_status st = KNUT_OK;
    const char **strs = NULL, **cols = NULL;
    for (size_t g = 0; !st && g < vi->n_groups; g++) {
        const knut_graphar_property_group *grp = &vi->groups[g];
        free(strs);
        free(cols);
        strs = calloc(grp->n_props + 1, sizeof *strs);
        cols = calloc(grp->n_props + 2, sizeof *cols);
        if (!strs || !cols) {
            st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
            break;
        }
        size_t n_strs = 0;
        cols[0] = "_graphArVertexIndex";
        size_t base = knut_graphar__write_prop_base(vi->groups, grp);
        knut_buf_clear(&sel);
        knut_buf_puts(&sel, "SELECT w.rowid AS \"_graphArVertexIndex\"");
        for (size_t k = 0; k < grp->n_props; k++) {
            knut_buf_printf(&sel, ", " KNUT_GRAPHAR_W_PCOL " AS ", base + k);
            knut_duck_ident(&sel, grp->props[k].name);
            cols[k + 1] = grp->props[k].name;
            if (grp->props[k].type == KNUT_GRAPHAR_TYPE_STRING &&
                !knut_graphar__prop_is_list(&grp->props[k]))
                strs[n_strs++] = grp->props[k].name;
        }
        knut_buf_puts(&sel, " FROM ");
        knut_duck_ident(&sel, j->table);
        knut_buf_puts(&sel, " AS w WHERE w.rowid BETWEEN $2 AND $3 ORDER BY w.rowid");
        if (!(st = knut_buf_check(&sel, err)))
            st = write_chunks(j, sel.data, grp->file_type, cols, grp->n_props + 1, strs, n_strs,
                              0, grp, err);
    }
    if (!st && vi->n_labels) {
        knut_buf_clear(&sel);
        knut_buf_puts(&sel, "SELECT ");
        for (size_t l = 0; l < vi->n_labels; l++) {
            knut_buf_printf(&sel, "%s" VLABEL " AS ", l ? ", " : "", l);
            knut_duck_ident(&sel, vi->labels[l]);
        }
        knut_buf_puts(&sel, " FROM ");
        knut_duck_ident(&sel, j->table);
        knut_buf_puts(&sel, " AS w WHERE w.rowid BETWEEN $2 AND $3 ORDER BY w.rowid");
        /* Labels are always Parquet, zstd-compressed, as the reference. */
        if (!(st = knut_buf_check(&sel, err)))
            st = write_chunks(j, sel.data, KNUT_GRAPHAR_FILE_PARQUET, NULL, 0, NULL, 0, 1, NULL,
                              err);
    }
    if (!st && (st = knut_graphar_path_vertex_count(&path, j->w->dir, vi)))
        st = knut_error_set(err, st, "%s: building the vertex_count path", j->what);
    else if (!st && !(st = knut_graphar__write_count(path.data, j->count, err)))
        j->files++;
    free(strs);
    free(cols);
    knut_buf_reset(&sel);
    knut_buf_reset(&path);
    return st;
}

knut_status knut_graphar_writer_write_vertices(knut_graphar_writer *w, const char *type,
                                               const knut_graphar_vertex_source *src,
                                               knut_graphar_write_stats *stats, knut_error *err)
{
    KNUT_ASSERT_ARG(err, w && type && src);
    double t0 = knut_graphar__write_now();
    vjob j;
    memset(&j, 0, sizeof j);
    j.w = w;
    j.src = src;
    knut_buf_init(&j.rel, 0);
    snprintf(j.what, sizeof j.what, "vertex type '%.200s'", type);
    j.name = src->name ? src->name : src->table ? src->table : "query";
    char **cols = NULL, **types = NULL;
    size_t ncols = 0;
    knut_status st = KNUT_OK;
    knut_buf dir = KNUT_BUF_INIT;
    if (!(j.vi = knut_graphar_graph_info_vertex(w->gi, type))) {
        st = knut_error_set(err, KNUT_ENOTFOUND, "%s: not in graph '%s'", j.what, w->gi->name);
        goto cleanup;
    }
    if (knut_graphar__written_vertex(w, type)) {
        st = knut_error_set(err, KNUT_EINVAL, "%s: already written", j.what);
        goto cleanup;
    }
    if (!src->query == !src->table) {
        st = knut_error_set(err, KNUT_EINVAL, "%s: give exactly one of query and table", j.what);
        goto cleanup;
    }
    if ((st = check_spec(&j, err)))
        goto cleanup;
    knut_graphar__write_sql_source(&j.rel, src->query, src->table);
    if ((st = knut_buf_check(&j.rel, err)))
        goto cleanup;
    if ((st = knut_graphar__write_columns(w->conn, j.rel.data, &cols, &ncols, err))) {
        knut_duck_error_reading(err); /* as sync says it of the same file */
        knut_error_prefix(err, "%s: reading %s: ", j.what, j.name);
        goto cleanup;
    }
    for (size_t k = 0; k < j.n_keys && !st; k++)
        if (!has_column(cols, ncols, j.keys[k]))
            st = missing_column(&j, cols, ncols, j.keys[k], "a key column", err);
    for (size_t g = 0; g < j.vi->n_groups && !st; g++)
        for (size_t k = 0; k < j.vi->groups[g].n_props && !st; k++)
            if (!has_column(cols, ncols, j.vi->groups[g].props[k].name))
                st = missing_column(&j, cols, ncols, j.vi->groups[g].props[k].name,
                                    "a property", err);
    for (size_t l = 0; l < j.vi->n_labels && !st; l++)
        if (!label_col(&j, l) || !has_column(cols, ncols, label_col(&j, l)))
            st = missing_column(&j, cols, ncols, label_col(&j, l) ? label_col(&j, l) : "(null)",
                                "a label", err);
    if (st)
        goto cleanup;
    if (!(j.table = knut_graphar__write_temp_name(w, "v"))) {
        st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
        goto cleanup;
    }
    if ((st = knut_graphar__write_check_stop(j.what, err)) || (st = materialise(&j, err)) ||
        (st = knut_graphar__write_check_stop(j.what, err)))
        goto cleanup;
    if ((st = knut_graphar__write_table_count(w, j.table, &j.count, err)) ||
        (st = check_rows(&j, err)) || (st = check_unique(&j, err)))
        goto cleanup;
    knut_buf_puts(&dir, w->dir);
    knut_buf_puts(&dir, j.vi->prefix);
    if ((st = knut_buf_check(&dir, err)) ||
        (st = knut_graphar__write_prepare_dir(w, dir.data, err)) || (st = write_files(&j, err)))
        goto cleanup;
    if ((st = key_types(&j, &types, err)))
        goto cleanup;
    gar_wvertex *slot = knut_graphar__push((void **)&w->verts, &w->n_verts, sizeof *slot);
    if (!slot || !(slot->type = strdup(type))) {
        st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
        goto cleanup;
    }
    slot->key_types = types;
    types = NULL;
    slot->table = j.table;
    j.table = NULL;
    slot->n_keys = j.n_keys;
    slot->count = j.count;
    slot->chunk_size = j.vi->chunk_size;
    w->n_verts++;
    if (stats) {
        stats->rows = j.count;
        stats->skipped = 0;
        stats->files = j.files;
        stats->seconds = knut_graphar__write_now() - t0;
    }
cleanup:
    if (j.table) {
        knut_buf drop = KNUT_BUF_INIT;
        knut_buf_puts(&drop, "DROP TABLE IF EXISTS ");
        knut_duck_ident(&drop, j.table);
        if (drop.data)
            (void)knut_duck_exec(w->conn, drop.data, NULL);
        knut_buf_reset(&drop);
        free(j.table);
    }
    knut_graphar__strv_free(cols, ncols);
    knut_graphar__strv_free(types, j.n_keys);
    knut_buf_reset(&j.rel);
    knut_buf_reset(&dir);
    return st;
}
