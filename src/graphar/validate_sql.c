/*
 * Helpers the validator's data passes share: directory scans that turn
 * `chunk<N>` / `part<N>` / `edge_count<N>` entries into sorted index sets
 * (so a hostile count cannot make us probe billions of paths), count files,
 * and the DuckDB side: one in-memory engine per run, single-threaded so
 * rows come back in file order, queries that bind the chunk path as $1 and
 * return one row of aggregates, and the map from GraphAr types to the
 * DuckDB types a Parquet chunk must have.
 */
#include "validate_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- filesystem -------------------------------------------------------- */

int knut_graphar__validate_is_dir(const char *path)
{
    struct stat sb;
    return path && stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

int knut_graphar__validate_is_file(const char *path)
{
    struct stat sb;
    return path && stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

void knut_graphar__validate_dirname(knut_buf *out, const char *path)
{
    knut_buf_clear(out);
    const char *slash = strrchr(path, '/');
    if (slash)
        knut_buf_append(out, path, (size_t)(slash - path) + 1);
    else
        knut_buf_puts(out, "");
}

void knut_graphar__validate_index_reset(gv_index_set *s)
{
    free(s->v);
    memset(s, 0, sizeof *s);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* "123" -> 123; rejects signs, leading zeros and overflow. */
static int parse_index(const char *s, int64_t *out)
{
    if (!*s || (s[0] == '0' && s[1]))
        return 0;
    int64_t v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > (INT64_MAX - (*s - '0')) / 10)
            return 0;
        v = v * 10 + (*s - '0');
    }
    *out = v;
    return 1;
}

knut_status knut_graphar__validate_index_scan(gv_index_set *out, const char *dir, const char *stem,
                                              knut_error *err)
{
    memset(out, 0, sizeof *out);
    DIR *d = opendir(dir);
    if (!d)
        return KNUT_OK;
    out->exists = 1;
    size_t cap = 0, ls = strlen(stem);
    struct dirent *ent;
    knut_status st = KNUT_OK;
    while ((ent = readdir(d)) != NULL) {
        const char *name = ent->d_name;
        if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
            continue;
        int64_t idx;
        if (strncmp(name, stem, ls) != 0 || !parse_index(name + ls, &idx)) {
            out->others++;
            continue;
        }
        if (out->n == cap) {
            size_t ncap = cap ? cap * 2 : 16;
            int64_t *v = realloc(out->v, ncap * sizeof *v);
            if (!v) {
                st = knut_error_set(err, KNUT_ENOMEM, "graphar validate: out of memory");
                break;
            }
            out->v = v;
            cap = ncap;
        }
        out->v[out->n++] = idx;
    }
    closedir(d);
    if (st != KNUT_OK) {
        knut_graphar__validate_index_reset(out);
        return st;
    }
    if (out->n > 1)
        qsort(out->v, out->n, sizeof *out->v, cmp_i64);
    return KNUT_OK;
}

int knut_graphar__validate_index_has(const gv_index_set *s, int64_t i)
{
    return s->n && bsearch(&i, s->v, s->n, sizeof *s->v, cmp_i64) != NULL;
}

static void report_run(gv_ctx *c, gv_rule rule, const char *dir, const char *stem, int64_t a,
                       int64_t b, const char *verb, const char *what)
{
    char file[4096];
    snprintf(file, sizeof file, "%s%s%lld", dir, stem, (long long)a);
    if (a == b)
        knut_graphar__validate_issue(c, rule, file, NULL, NULL, "%s%lld %s (%s)", stem,
                                     (long long)a, verb, what);
    else
        knut_graphar__validate_issue(c, rule, file, NULL, NULL, "%s%lld..%s%lld %s (%s)", stem,
                                     (long long)a, stem, (long long)b, verb, what);
}

void knut_graphar__validate_index_report(gv_ctx *c, const gv_index_set *s, int64_t expected,
                                         const char *dir, const char *stem, gv_rule miss_rule,
                                         gv_rule gap_rule, gv_rule extra_rule, const char *what)
{
    int64_t next = 0; /* first index not yet accounted for */
    size_t i = 0;
    for (; i < s->n && s->v[i] < expected && !gv_done(c); i++) {
        if (s->v[i] > next)
            report_run(c, gap_rule, dir, stem, next, s->v[i] - 1, "missing", what);
        next = s->v[i] + 1;
    }
    if (next < expected)
        report_run(c, miss_rule, dir, stem, next, expected - 1, "missing", what);
    while (i < s->n && !gv_done(c)) {
        size_t j = i;
        while (j + 1 < s->n && s->v[j] < INT64_MAX && s->v[j + 1] == s->v[j] + 1)
            j++;
        report_run(c, extra_rule, dir, stem, s->v[i], s->v[j], "beyond the expected ones", what);
        i = j + 1;
    }
}

int knut_graphar__validate_count_read(gv_ctx *c, const char *path, int64_t *out)
{
    knut_error e = KNUT_ERROR_INIT;
    int64_t v = 0, size = 0;
    knut_status st = knut_graphar__count_load(path, &v, &size, &e);
    if (st == KNUT_ENOTFOUND)
        return 0;
    if (st == KNUT_EPARSE) {
        knut_graphar__validate_issue(
            c, GV_COUNT_SIZE, path, NULL, NULL,
            "count file has %lld bytes; it must be exactly 8 (a little-endian int64)",
            (long long)size);
        return -1;
    }
    if (st != KNUT_OK) {
        knut_graphar__validate_issue(c, GV_COUNT_MISSING, path, NULL, NULL, "%s", e.message);
        return -1;
    }
    if (v < 0) {
        knut_graphar__validate_issue(c, GV_COUNT_NEGATIVE, path, NULL, NULL, "negative count %lld",
                                     (long long)v);
        return -1;
    }
    *out = v;
    return 1;
}

/* ---- engine ------------------------------------------------------------ */

int knut_graphar__validate_sql_open(gv_ctx *c)
{
    if (c->conn)
        return 0;
    if (c->fatal != KNUT_OK)
        return -1;
    /* One thread: scans then return rows in file order, which the
     * row-number and lag() based checks rely on for CSV chunks. */
    static const knut_duck_option opts[] = {{"threads", "1"}};
    knut_error e = KNUT_ERROR_INIT;
    knut_status st = knut_duck_db_open(&c->db, NULL, opts, 1, &e);
    if (st == KNUT_OK)
        st = knut_duck_conn_open(&c->conn, c->db, &e);
    if (st == KNUT_OK)
        st = knut_duck_exec(c->conn, "CREATE TEMP TABLE _gv_deg(k BIGINT, n BIGINT)", &e);
    if (st != KNUT_OK) {
        knut_graphar__validate_fail(c, st, &e);
        return -1;
    }
    return 0;
}

void knut_graphar__validate_sql_int_col(knut_buf *sql, const char *name)
{
    knut_buf_puts(sql, "TRY_CAST(");
    knut_duck_ident(sql, name);
    knut_buf_puts(sql, " AS BIGINT)");
}

/* CSV per the GraphAr writers: a header row, ',' and '"' quoting. Values
 * stay text; checks cast them. */
#define GV_CSV_READ "read_csv($1, header=true, all_varchar=true, delim=',', quote='\"', escape='\"')"

void knut_graphar__validate_sql_source(knut_buf *sql, knut_graphar_file_type ft)
{
    if (ft == KNUT_GRAPHAR_FILE_CSV)
        knut_buf_puts(sql, "(SELECT *, (row_number() OVER ()) - 1 AS _gv_rn FROM " GV_CSV_READ
                           ") AS _gv_src");
    else
        knut_buf_puts(sql, "(SELECT *, file_row_number AS _gv_rn FROM "
                           "read_parquet($1, file_row_number=true)) AS _gv_src");
}

/* Runs a prepared query with $1 = path (when given). */
static knut_status run(gv_ctx *c, const char *sql, const char *path,
                       struct ArrowArrayStream *st, knut_error *e)
{
    knut_duck_stmt *stmt = NULL;
    knut_status s = knut_duck_stmt_prepare(&stmt, c->conn, sql, e);
    if (s == KNUT_OK && path && knut_duck_stmt_param_count(stmt) > 0)
        s = knut_duck_stmt_bind_text(stmt, 1, path, strlen(path), e);
    if (s == KNUT_OK)
        s = knut_duck_stmt_query(stmt, st, e);
    knut_duck_stmt_free(stmt);
    return s;
}

/* Engine-level failures end the run; everything else is the file's fault. */
static void query_failed(gv_ctx *c, knut_status s, const char *path, const knut_error *e)
{
    if (s == KNUT_ENOMEM || s == KNUT_ECANCELLED)
        knut_graphar__validate_fail(c, s, e);
    else
        knut_graphar__validate_issue(c, GV_CHUNK_UNREADABLE, path ? path : "", NULL, NULL, "%s",
                                     e->message);
}

int knut_graphar__validate_sql_ints(gv_ctx *c, const char *sql, const char *path, int64_t *vals,
                                    int *isnull, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        vals[k] = 0;
        isnull[k] = 1;
    }
    if (knut_graphar__validate_sql_open(c) != 0)
        return -1;
    struct ArrowArrayStream st = {0};
    struct ArrowSchema schema = {0};
    struct ArrowArray arr = {0};
    knut_arrow_view view;
    int have_view = 0, rc = -1;
    knut_error e = KNUT_ERROR_INIT;
    knut_status s = run(c, sql, path, &st, &e);
    if (s != KNUT_OK)
        goto cleanup;
    if (st.get_schema(&st, &schema) != 0 || st.get_next(&st, &arr) != 0) {
        const char *m = st.get_last_error ? st.get_last_error(&st) : NULL;
        knut_error_set(&e, KNUT_ERROR, "%s", m ? m : "reading the result failed");
        s = KNUT_ERROR;
        goto cleanup;
    }
    rc = 0;
    if (!arr.release || arr.length == 0)
        goto cleanup;
    if ((s = knut_arrow_view_init(&view, &schema, &arr, &e)) != KNUT_OK) {
        rc = -1;
        goto cleanup;
    }
    have_view = 1;
    for (size_t k = 0; k < n && (int64_t)k < view.n_children; k++) {
        const knut_arrow_view *col = knut_arrow_view_child(&view, (int64_t)k);
        int64_t row = knut_arrow_view_child_row(&view, 0);
        if (knut_arrow_view_is_null(col, row))
            continue;
        isnull[k] = 0;
        vals[k] = knut_arrow_view_get_int64(col, row);
    }
cleanup:
    if (have_view)
        knut_arrow_view_reset(&view);
    if (arr.release)
        arr.release(&arr);
    if (schema.release)
        schema.release(&schema);
    if (st.release)
        st.release(&st);
    if (rc != 0)
        query_failed(c, s, path, &e);
    return rc;
}

int knut_graphar__validate_sql_exec(gv_ctx *c, const char *sql, const char *path)
{
    if (knut_graphar__validate_sql_open(c) != 0)
        return -1;
    knut_duck_stmt *stmt = NULL;
    knut_error e = KNUT_ERROR_INIT;
    knut_status s = knut_duck_stmt_prepare(&stmt, c->conn, sql, &e);
    if (s == KNUT_OK && path && knut_duck_stmt_param_count(stmt) > 0)
        s = knut_duck_stmt_bind_text(stmt, 1, path, strlen(path), &e);
    if (s == KNUT_OK)
        s = knut_duck_stmt_exec(stmt, NULL, &e);
    knut_duck_stmt_free(stmt);
    if (s != KNUT_OK) {
        query_failed(c, s, path, &e);
        return -1;
    }
    return 0;
}

/* ---- columns ----------------------------------------------------------- */

void knut_graphar__validate_columns_reset(gv_columns *cols)
{
    for (size_t i = 0; i < cols->n; i++) {
        free(cols->name[i]);
        free(cols->type[i]);
    }
    free(cols->name);
    free(cols->type);
    memset(cols, 0, sizeof *cols);
}

ptrdiff_t knut_graphar__validate_columns_find(const gv_columns *cols, const char *name)
{
    for (size_t i = 0; i < cols->n; i++)
        if (strcmp(cols->name[i], name) == 0)
            return (ptrdiff_t)i;
    return -1;
}

/* Far above any real group, low enough to bound a hostile file. */
#define GV_MAX_COLUMNS 100000

static int columns_push(gv_columns *cols, const char *name, int64_t nl, const char *type,
                        int64_t tl)
{
    if (cols->n >= GV_MAX_COLUMNS)
        return 0;
    char **nn = realloc(cols->name, (cols->n + 1) * sizeof *nn);
    if (!nn)
        return -1;
    cols->name = nn;
    char **tt = realloc(cols->type, (cols->n + 1) * sizeof *tt);
    if (!tt)
        return -1;
    cols->type = tt;
    cols->name[cols->n] = strndup(name ? name : "", name ? (size_t)nl : 0);
    cols->type[cols->n] = strndup(type ? type : "", type ? (size_t)tl : 0);
    cols->n++;
    return cols->name[cols->n - 1] && cols->type[cols->n - 1] ? 0 : -1;
}

int knut_graphar__validate_sql_describe(gv_ctx *c, const char *path, knut_graphar_file_type ft,
                                        gv_columns *out)
{
    memset(out, 0, sizeof *out);
    if (knut_graphar__validate_sql_open(c) != 0)
        return -1;
    const char *sql = ft == KNUT_GRAPHAR_FILE_CSV
                          ? "DESCRIBE SELECT * FROM " GV_CSV_READ
                          : "DESCRIBE SELECT * FROM read_parquet($1)";
    struct ArrowArrayStream st = {0};
    knut_error e = KNUT_ERROR_INIT;
    knut_status s = run(c, sql, path, &st, &e);
    int rc = s == KNUT_OK ? 0 : -1;
    while (rc == 0) {
        struct ArrowSchema schema = {0};
        struct ArrowArray arr = {0};
        if (st.get_schema(&st, &schema) != 0 || st.get_next(&st, &arr) != 0) {
            const char *m = st.get_last_error ? st.get_last_error(&st) : NULL;
            knut_error_set(&e, KNUT_ERROR, "%s", m ? m : "reading the result failed");
            s = KNUT_ERROR;
            rc = -1;
        } else if (!arr.release) {
            if (schema.release)
                schema.release(&schema);
            break;
        } else {
            knut_arrow_view view;
            if ((s = knut_arrow_view_init(&view, &schema, &arr, &e)) != KNUT_OK) {
                rc = -1;
            } else {
                const knut_arrow_view *nv = knut_arrow_view_child(&view, 0);
                const knut_arrow_view *tv = knut_arrow_view_child(&view, 1);
                for (int64_t r = 0; nv && tv && r < view.length && rc == 0; r++) {
                    int64_t nl = 0, tl = 0, row = knut_arrow_view_child_row(&view, r);
                    const char *n = knut_arrow_view_get_str(nv, row, &nl);
                    const char *t = knut_arrow_view_get_str(tv, row, &tl);
                    if (columns_push(out, n, nl, t, tl) != 0) {
                        s = KNUT_ENOMEM;
                        knut_error_set(&e, s, "graphar validate: out of memory");
                        rc = -1;
                    }
                }
                knut_arrow_view_reset(&view);
            }
        }
        if (arr.release)
            arr.release(&arr);
        if (schema.release)
            schema.release(&schema);
    }
    if (st.release)
        st.release(&st);
    if (rc != 0) {
        knut_graphar__validate_columns_reset(out);
        query_failed(c, s, path, &e);
    }
    return rc;
}

/* ---- types ------------------------------------------------------------- */

static const char *duck_scalar(knut_graphar_type t)
{
    switch (t) {
    case KNUT_GRAPHAR_TYPE_BOOL:
        return "BOOLEAN";
    case KNUT_GRAPHAR_TYPE_INT32:
        return "INTEGER";
    case KNUT_GRAPHAR_TYPE_INT64:
        return "BIGINT";
    case KNUT_GRAPHAR_TYPE_FLOAT:
        return "FLOAT";
    case KNUT_GRAPHAR_TYPE_DOUBLE:
        return "DOUBLE";
    case KNUT_GRAPHAR_TYPE_STRING:
        return "VARCHAR";
    case KNUT_GRAPHAR_TYPE_DATE:
        return "DATE";
    case KNUT_GRAPHAR_TYPE_TIMESTAMP:
        return "TIMESTAMP";
    case KNUT_GRAPHAR_TYPE_LIST:
        break;
    }
    return "?";
}

static int scalar_fits(knut_graphar_type t, const char *duck, size_t len)
{
    const char *want = duck_scalar(t);
    /* Timestamps may be stored in any unit (§4.2): TIMESTAMP_MS, _NS, _S,
     * or adjusted to UTC (TIMESTAMP WITH TIME ZONE). */
    if (t == KNUT_GRAPHAR_TYPE_TIMESTAMP)
        return len >= 9 && strncmp(duck, "TIMESTAMP", 9) == 0;
    return strlen(want) == len && strncmp(duck, want, len) == 0;
}

int knut_graphar__validate_type_matches(const knut_graphar_property *p, const char *duck_type,
                                        const char **expect)
{
    static const char *const lists[] = {"BOOLEAN[]", "INTEGER[]", "BIGINT[]", "FLOAT[]",
                                        "DOUBLE[]",  "VARCHAR[]", "DATE[]",   "TIMESTAMP[]"};
    size_t len = strlen(duck_type);
    int is_list = p->type == KNUT_GRAPHAR_TYPE_LIST || p->cardinality != KNUT_GRAPHAR_CARD_SINGLE;
    knut_graphar_type base = p->type == KNUT_GRAPHAR_TYPE_LIST ? p->elem_type : p->type;
    if (base == KNUT_GRAPHAR_TYPE_LIST) /* malformed in-memory info */
        base = KNUT_GRAPHAR_TYPE_STRING;
    if (!is_list) {
        *expect = duck_scalar(base);
        return scalar_fits(base, duck_type, len);
    }
    *expect = lists[base];
    return len > 2 && strcmp(duck_type + len - 2, "[]") == 0 && scalar_fits(base, duck_type, len - 2);
}

const char *knut_graphar__validate_csv_cast_type(const knut_graphar_property *p)
{
    if (p->type == KNUT_GRAPHAR_TYPE_LIST || p->cardinality != KNUT_GRAPHAR_CARD_SINGLE)
        return NULL;
    switch (p->type) {
    case KNUT_GRAPHAR_TYPE_BOOL:
    case KNUT_GRAPHAR_TYPE_INT32:
    case KNUT_GRAPHAR_TYPE_INT64:
    case KNUT_GRAPHAR_TYPE_FLOAT:
    case KNUT_GRAPHAR_TYPE_DOUBLE:
    case KNUT_GRAPHAR_TYPE_DATE:
        return duck_scalar(p->type);
    default:
        /* Text fits a string; CSV timestamps come in too many spellings
         * (with and without zone suffixes) to judge by a cast. */
        return NULL;
    }
}
