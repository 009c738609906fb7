/*
 * A vertex type or an edge type's adj list as one DuckDB SELECT, for a
 * view DuckDB runs itself (knut serve's GraphAr sources). The plan and
 * the column expressions are the streams' (read_plan.c, read_source.c),
 * so the types are the same; what differs is that every chunk is in one
 * query instead of one query per chunk:
 *
 *  - each source (a property group, the labels, the adj list) becomes a
 *    relation of its rows with two keys: _knut_f, the chunk (plus the
 *    part * 2^32 for edges), and _knut_r, the row within the chunk.
 *    Parquet is one read_parquet over a glob of the source's chunk files,
 *    keyed by the numbers in each file's name and DuckDB's
 *    file_row_number; CSV and JSON, which DuckDB numbers no rows of, are
 *    one branch per chunk that POSITIONAL JOINs the file (read as text)
 *    with range(rows) (rows from the count files), the branches UNION
 *    ALLed as a balanced tree (a chain deeper than max_expression_depth
 *    fails to parse);
 *  - the sources are joined on both keys, as the streams join a chunk's
 *    files row by row; a vertex's index is _knut_f * chunk_size +
 *    _knut_r.
 *
 * The text holds no list or struct constant: knut serve asks DuckDB's
 * duckdb_get_table_names about every query over such a view, which binds
 * the view with its constants as NULL and fails on those.
 *
 * The CSV chunk list is taken now, from the count files, and so is the
 * check that every chunk file exists; a Parquet glob reads what is there
 * when the view is read. CSV headers must all be the first chunk's, and
 * Parquet files are assumed to share the first one's schema (DuckDB
 * refuses a mismatch when the view is read).
 */
#include "read_int.h"

#include <stdlib.h>
#include <string.h>

/* Chunks per view: a bound on the SQL text and DuckDB's bind time. */
#define MAX_CHUNKS 16384

#define KEY_F "_knut_f"
#define KEY_R "_knut_r"

typedef struct chunks {
    char **paths;   /* n * n_srcs: step i, source k at i * n_srcs + k */
    int64_t *rows;  /* rows of step i, from the counts (-1 unknown) */
    int64_t *key;   /* its (part, chunk) as one number: see KEY_OF */
    size_t n;
} chunks;

/* A chunk's key: chunk + part * 2^32 (vertex walks: part 0), what the
 * Parquet sources compute from the file names too. */
#define PART_SHIFT "4294967296"
#define KEY_OF(part, chunk) ((int64_t)(chunk) + ((int64_t)(part) << 32))

static void chunks_reset(chunks *c, size_t n_srcs)
{
    for (size_t i = 0; c->paths && i < c->n * n_srcs; i++)
        free(c->paths[i]);
    free(c->paths);
    free(c->rows);
    free(c->key);
    memset(c, 0, sizeof *c);
}

static knut_status collect(const knut_graphar_reader *r, const knut_graphar__plan *p,
                           chunks *c, knut_error *err)
{
    knut_graphar__cursor cur = {.pos = p->first};
    knut_graphar__step step = {0};
    size_t ns = p->n_srcs, cap = 0;
    knut_status st = KNUT_OK;
    if (!(step.paths = calloc(ns ? ns : 1, sizeof *step.paths)))
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    while ((st = knut_graphar__plan_next(r, p, &cur, &step, err)) == KNUT_OK) {
        if (c->n == MAX_CHUNKS) {
            st = knut_error_set(err, KNUT_ETOOBIG, "%s: over %d chunks for one view", p->what,
                                MAX_CHUNKS);
            break;
        }
        if (c->n == cap) {
            size_t ncap = cap ? 2 * cap : 64;
            char **np = realloc(c->paths, ncap * (ns ? ns : 1) * sizeof *np);
            if (np)
                c->paths = np;
            int64_t *nr = np ? realloc(c->rows, ncap * sizeof *nr) : NULL;
            if (nr)
                c->rows = nr;
            int64_t *nk = nr ? realloc(c->key, ncap * sizeof *nk) : NULL;
            if (!nk) {
                st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
                break;
            }
            c->key = nk;
            cap = ncap;
        }
        for (size_t k = 0; k < ns; k++)
            c->paths[c->n * ns + k] = NULL;
        c->key[c->n] = KEY_OF(p->walk == KNUT_GRAPHAR__WALK_EDGE ? step.part : 0, step.index);
        c->rows[c->n++] = step.rows;
        for (size_t k = 0; st == KNUT_OK && k < ns; k++)
            if (!(c->paths[(c->n - 1) * ns + k] = strdup(step.paths[k].data)))
                st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
        if (st != KNUT_OK)
            break;
    }
    for (size_t k = 0; k < ns; k++)
        knut_buf_reset(&step.paths[k]);
    free(step.paths);
    return st == KNUT_EOF ? KNUT_OK : st;
}

/* The names a probe of source k looks for (as the streams' wanted_names). */
static const char **wanted(const knut_graphar__plan *p, size_t k, size_t *n)
{
    const char **want = malloc((p->n_cols + 1) * sizeof *want);
    *n = 0;
    if (!want)
        return NULL;
    want[(*n)++] = KNUT_GRAPHAR__VINDEX;
    for (size_t i = 0; i < p->n_cols; i++)
        if (p->cols[i].kind != KNUT_GRAPHAR__COL_VINDEX && p->cols[i].src == k)
            want[(*n)++] = p->cols[i].name;
    return want;
}

static int same_header(const knut_graphar__probe *a, const knut_graphar__probe *b)
{
    if (a->n_names != b->n_names || a->delim != b->delim)
        return 0;
    for (size_t i = 0; i < a->n_names; i++)
        if (strcmp(a->names[i], b->names[i]) != 0)
            return 0;
    return 1;
}

/* Probes source k's first file (every file's header for CSV) into pr and
 * checks the plan's columns are there. */
static knut_status probe_source(knut_duck_conn *conn, const knut_graphar__plan *p,
                                const chunks *c, size_t k, knut_graphar__probe *pr,
                                knut_error *err)
{
    size_t nw = 0, ns = p->n_srcs;
    const char **want = wanted(p, k, &nw);
    if (!want)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    knut_graphar_file_type ft = p->srcs[k].ft;
    knut_status st = knut_graphar__probe_file(conn, c->paths[k], ft, want, nw, pr, err);
    for (size_t i = 1; st == KNUT_OK && ft == KNUT_GRAPHAR_FILE_CSV && i < c->n; i++) {
        knut_graphar__probe other = {0};
        const char *path = c->paths[i * ns + k];
        st = knut_graphar__probe_file(conn, path, ft, want, nw, &other, err);
        if (st == KNUT_OK && !same_header(pr, &other))
            st = knut_error_set(err, KNUT_EINVAL, "%s: its header differs from %s's (%s)",
                                path, c->paths[k], p->what);
        knut_graphar__probe_reset(&other);
    }
    free(want);
    for (size_t i = 0; st == KNUT_OK && i < p->n_cols; i++) {
        const knut_graphar__col *col = &p->cols[i];
        if (col->kind != KNUT_GRAPHAR__COL_VINDEX && col->src == k &&
            ft != KNUT_GRAPHAR_FILE_JSON && knut_graphar__probe_find(pr, col->name) < 0)
            st = knut_error_set(err, KNUT_EINVAL, "%s: no column '%s' (%s)", c->paths[k],
                                col->name, p->what);
    }
    return st;
}

/* A CSV / JSON chunk, read as text and cast by the SELECT. No list or
 * struct argument (`columns = {...}`): DuckDB's duckdb_get_table_names,
 * which knut serve runs on every query that may read a view (authz, the
 * Cypher tables), binds the view with its constants as NULL and fails on
 * those. */
static void text_source(knut_buf *sql, knut_graphar_file_type ft, const char *lit,
                        const knut_graphar__probe *pr)
{
    if (ft == KNUT_GRAPHAR_FILE_JSON) {
        knut_buf_printf(sql, "read_json(%s, format = 'newline_delimited')", lit);
        return;
    }
    char d[2] = {pr->delim ? pr->delim : ',', 0};
    knut_buf_printf(sql, "read_csv(%s, header = true, delim = ", lit);
    knut_duck_literal(sql, d, 1);
    knut_buf_puts(sql, ", quote = '\"', escape = '\"', allow_quoted_nulls = false, "
                       "all_varchar = true)");
}

/* One CSV / JSON chunk as a branch; then a balanced tree of them. */
static knut_status text_branch(knut_buf *sql, const knut_graphar__plan *p, const chunks *c,
                               size_t k, const knut_graphar__probe *pr, size_t i,
                               knut_error *err)
{
    const char *path = c->paths[i * p->n_srcs + k];
    if (c->rows[i] < 0)
        return knut_error_set(err, KNUT_ENOTFOUND, "%s: its row count is unknown (no count "
                                                   "file)", path);
    knut_buf lit = KNUT_BUF_INIT;
    knut_duck_literal(&lit, path, strlen(path));
    knut_status st = knut_buf_check(&lit, err);
    knut_buf_printf(sql, "SELECT %lld AS " KEY_F ", k.range AS " KEY_R ", s.* FROM range(%lld) "
                         "AS k POSITIONAL JOIN ",
                    (long long)c->key[i], (long long)c->rows[i]);
    if (st == KNUT_OK)
        text_source(sql, p->srcs[k].ft, lit.data, pr);
    knut_buf_puts(sql, " AS s");
    knut_buf_reset(&lit);
    return st;
}

static knut_status text_tree(knut_buf *sql, const knut_graphar__plan *p, const chunks *c,
                             size_t k, const knut_graphar__probe *pr, size_t lo, size_t hi,
                             knut_error *err)
{
    if (hi - lo == 1)
        return text_branch(sql, p, c, k, pr, lo, err);
    size_t mid = lo + (hi - lo) / 2;
    knut_buf_putc(sql, '(');
    knut_status st = text_tree(sql, p, c, k, pr, lo, mid, err);
    knut_buf_puts(sql, ") UNION ALL (");
    if (st == KNUT_OK)
        st = text_tree(sql, p, c, k, pr, mid, hi, err);
    knut_buf_putc(sql, ')');
    return st;
}

/* The glob of a Parquet source's chunk files: the first path with its
 * "chunk<c>" (and, for edges, "part<p>") made '*'. Its files are then
 * keyed by their names, as KEY_OF keys the walk. A list of the paths
 * would be exact, but DuckDB binds a list argument as NULL in
 * duckdb_get_table_names (see text_source). */
static knut_status parquet_glob(const knut_graphar__plan *p, const char *first, knut_buf *out,
                                knut_error *err)
{
    const char *slash = strrchr(first, '/');
    size_t cut = slash ? (size_t)(slash - first) + 1 : 0;
    int edge = p->walk == KNUT_GRAPHAR__WALK_EDGE;
    if (edge) {
        size_t j = cut > 1 ? cut - 1 : 0;
        while (j > 0 && first[j - 1] != '/')
            j--;
        cut = j;
    }
    if (strncmp(first + cut, edge ? "part" : "chunk", edge ? 4 : 5) != 0)
        return knut_error_set(err, KNUT_EINVAL, "%s: not a chunk path (%s)", first, p->what);
    for (size_t i = 0; i < cut; i++)
        if (strchr("*?[{", first[i]))
            return knut_error_set(err, KNUT_EINVAL, "%s: a folder with glob characters "
                                                    "(*?[{) cannot be served (%s)",
                                  first, p->what);
    knut_buf_append(out, first, cut);
    knut_buf_puts(out, edge ? "part*/chunk*" : "chunk*");
    return knut_buf_check(out, err);
}

/* Source k as "(SELECT keys, * ...) AS s<k>". */
static knut_status source(knut_buf *sql, const knut_graphar__plan *p, const chunks *c,
                          size_t k, const knut_graphar__probe *pr, knut_error *err)
{
    knut_status st = KNUT_OK;
    knut_buf_puts(sql, "(");
    if (p->srcs[k].ft == KNUT_GRAPHAR_FILE_PARQUET) {
        knut_buf glob = KNUT_BUF_INIT, lit = KNUT_BUF_INIT;
        st = parquet_glob(p, c->paths[k], &glob, err);
        if (st == KNUT_OK) {
            knut_duck_literal(&lit, glob.data, glob.len);
            st = knut_buf_check(&lit, err);
        }
        /* the part and chunk numbers from each file's name; other files
         * the glob matches get no key and are dropped */
        knut_buf_puts(sql, "SELECT * FROM (SELECT TRY_CAST(regexp_extract(filename, "
                           "'chunk([0-9]+)$', 1) AS BIGINT) + coalesce(TRY_CAST("
                           "regexp_extract(filename, 'part([0-9]+)/chunk[0-9]+$', 1) AS BIGINT), "
                           "0) * " PART_SHIFT " AS " KEY_F ", file_row_number AS " KEY_R ", * "
                           "EXCLUDE (filename) FROM ");
        if (st == KNUT_OK)
            st = knut_graphar__sql_source(sql, p, k, pr, lit.data, err);
        if (st == KNUT_OK) { /* read_parquet(...) gets its filename column */
            sql->len--;
            knut_buf_puts(sql, ", filename = true)) WHERE " KEY_F " IS NOT NULL");
            if (p->walk == KNUT_GRAPHAR__WALK_VERTEX) /* chunks past vertex_count */
                knut_buf_printf(sql, " AND " KEY_F " < %zu", c->n);
        }
        knut_buf_reset(&glob);
        knut_buf_reset(&lit);
    } else {
        st = text_tree(sql, p, c, k, pr, 0, c->n, err);
    }
    knut_buf_printf(sql, ") AS s%zu", k);
    return st;
}

/* The DuckDB type of a column, as the view gives it. */
static void col_type(knut_buf *sql, const knut_graphar__col *c)
{
    if (c->kind == KNUT_GRAPHAR__COL_LABEL) {
        knut_buf_puts(sql, "BOOLEAN");
        return;
    }
    if (c->kind != KNUT_GRAPHAR__COL_PROP) {
        knut_buf_puts(sql, "BIGINT");
        return;
    }
    knut_graphar_type t = knut_graphar__prop_scalar(c->prop);
    knut_buf_puts(sql, t == KNUT_GRAPHAR_TYPE_TIMESTAMP ? "TIMESTAMP" : knut_graphar__sql_scalar(t));
    if (knut_graphar__prop_is_list(c->prop))
        knut_buf_puts(sql, "[]");
}

static int is_timestamp(const knut_graphar__col *c)
{
    return c->kind == KNUT_GRAPHAR__COL_PROP && !knut_graphar__prop_is_list(c->prop) &&
           knut_graphar__prop_scalar(c->prop) == KNUT_GRAPHAR_TYPE_TIMESTAMP;
}

/* No chunk at all: the columns, typed, and no row. */
static knut_status empty_select(knut_buf *sql, const knut_graphar__plan *p, knut_error *err)
{
    knut_buf_puts(sql, "SELECT ");
    for (size_t i = 0; i < p->n_cols; i++) {
        knut_buf_puts(sql, i ? ", CAST(NULL AS " : "CAST(NULL AS ");
        col_type(sql, &p->cols[i]);
        knut_buf_puts(sql, ") AS ");
        knut_duck_ident(sql, p->cols[i].name);
    }
    knut_buf_puts(sql, " WHERE false");
    return knut_buf_check(sql, err);
}

static knut_status plan_sql(knut_graphar_reader *r, const knut_graphar__plan *p, knut_buf *sql,
                            knut_error *err)
{
    chunks c = {0};
    knut_duck_conn *conn = NULL;
    size_t ns = p->n_srcs;
    knut_graphar__probe *probes = calloc(ns ? ns : 1, sizeof *probes);
    knut_status st = probes ? knut_graphar__plan_check_files(r, p, err)
                            : knut_error_set(err, KNUT_ENOMEM, "out of memory");
    if (st == KNUT_OK)
        st = collect(r, p, &c, err);
    if (st != KNUT_OK)
        goto cleanup;
    if (c.n == 0) {
        st = empty_select(sql, p, err);
        goto cleanup;
    }
    if (ns && (st = knut_graphar__reader_conn(r, &conn, err)) != KNUT_OK)
        goto cleanup;
    for (size_t k = 0; st == KNUT_OK && k < ns; k++)
        st = probe_source(conn, p, &c, k, &probes[k], err);
    knut_buf_puts(sql, "SELECT ");
    for (size_t i = 0; st == KNUT_OK && i < p->n_cols; i++) {
        const knut_graphar__col *col = &p->cols[i];
        if (i)
            knut_buf_puts(sql, ", ");
        if (col->kind == KNUT_GRAPHAR__COL_VINDEX && ns == 0)
            knut_buf_puts(sql, "range");
        else if (col->kind == KNUT_GRAPHAR__COL_VINDEX)
            knut_buf_printf(sql, "s0." KEY_F " * %lld + s0." KEY_R,
                            (long long)p->vi->chunk_size);
        else if (is_timestamp(col)) { /* ms since the epoch as a TIMESTAMP */
            knut_buf_puts(sql, "epoch_ms(");
            st = knut_graphar__sql_column(sql, col, p->srcs[col->src].ft, &probes[col->src],
                                          err);
            knut_buf_puts(sql, ")");
        } else if (col->kind == KNUT_GRAPHAR__COL_PROP &&
                   p->srcs[col->src].ft == KNUT_GRAPHAR_FILE_CSV &&
                   !knut_graphar__prop_is_list(col->prop) &&
                   col->prop->type == KNUT_GRAPHAR_TYPE_STRING) {
            /* CSV strings are never null, as in the reference's reader */
            knut_buf_puts(sql, "coalesce(");
            st = knut_graphar__sql_column(sql, col, p->srcs[col->src].ft, &probes[col->src],
                                          err);
            knut_buf_puts(sql, ", '')");
        } else
            st = knut_graphar__sql_column(sql, col, p->srcs[col->src].ft, &probes[col->src],
                                          err);
        knut_buf_puts(sql, " AS ");
        knut_duck_ident(sql, col->name);
    }
    if (st == KNUT_OK && ns == 0) /* a vertex type without groups: its indices only */
        knut_buf_printf(sql, " FROM range(%lld)", (long long)(p->count > 0 ? p->count : 0));
    for (size_t k = 0; st == KNUT_OK && k < ns; k++) {
        knut_buf_puts(sql, k == 0 ? " FROM " : " JOIN ");
        st = source(sql, p, &c, k, &probes[k], err);
        if (k > 0)
            knut_buf_printf(sql, " ON s%zu." KEY_F " = s0." KEY_F " AND s%zu." KEY_R
                                 " = s0." KEY_R,
                            k, k);
    }
    if (st == KNUT_OK)
        st = knut_buf_check(sql, err);
cleanup:
    for (size_t k = 0; probes && k < ns; k++)
        knut_graphar__probe_reset(&probes[k]);
    free(probes);
    chunks_reset(&c, ns);
    return st;
}

knut_status knut_graphar_reader_vertices_sql(knut_graphar_reader *r,
                                             const knut_graphar_vertex_info *vi, knut_buf *out,
                                             knut_error *err)
{
    KNUT_ASSERT_ARG(err, r && vi && out);
    knut_graphar__plan p;
    knut_status st = knut_graphar__plan_vertices(r, &p, vi, err);
    if (st == KNUT_OK)
        st = plan_sql(r, &p, out, err);
    knut_graphar__plan_reset(&p);
    return st;
}

knut_status knut_graphar_reader_edges_sql(knut_graphar_reader *r,
                                          const knut_graphar_edge_info *ei,
                                          knut_graphar_adj_list_type type, knut_buf *out,
                                          knut_error *err)
{
    KNUT_ASSERT_ARG(err, r && ei && out);
    knut_graphar__plan p;
    knut_status st = knut_graphar__plan_edges(r, &p, ei, type, err);
    if (st == KNUT_OK)
        st = plan_sql(r, &p, out, err);
    knut_graphar__plan_reset(&p);
    return st;
}
