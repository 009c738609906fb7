/*
 * The inputs of a flow's update: the new files of its file sources (the
 * glob minus the checkpoint), the query with the source literals replaced
 * by those files, and the new rows of the streaming tables it reads with
 * STREAM() (rowid offsets, shown to the query through temporary views).
 * Plus the small SQL helpers the update shares.
 */
#include <stdlib.h>
#include <string.h>

#include "pipeline_int.h"


int knut_pipeline__strvec_push(knut_pipeline__strvec *s, const char *x, size_t len)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16;
        char **nv = realloc(s->v, cap * sizeof *nv);
        if (!nv)
            return -1;
        s->v = nv;
        s->cap = cap;
    }
    if (!(s->v[s->n] = strndup(x, len)))
        return -1;
    s->n++;
    return 0;
}

void knut_pipeline__strvec_free(knut_pipeline__strvec *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
}

/* A source path as DuckDB should see it: relative paths are the spec
 * folder's. */
static void rooted(knut_buf *b, const knut_pipeline *p, const char *path)
{
    if (path[0] != '/' && strcmp(p->root, ".") != 0 && !strstr(path, "://")) {
        knut_buf_puts(b, p->root);
        knut_buf_putc(b, '/');
    }
    knut_buf_puts(b, path);
}

typedef struct collect_ctx {
    knut_pipeline__strvec *files, *rel;
} collect_ctx;

static knut_status collect_file(void *ctx, const knut_arrow_view *v, int64_t row, knut_error *err)
{
    collect_ctx *c = ctx;
    int64_t len, rlen;
    const char *s = knut_pipeline__col_str(v, 0, row, &len);
    const char *rel = knut_pipeline__col_str(v, 1, row, &rlen);
    if (s && rel &&
        (knut_pipeline__strvec_push(c->files, s, (size_t)len) != 0 ||
         knut_pipeline__strvec_push(c->rel, rel, (size_t)rlen) != 0))
        return knut_error_set(err, KNUT_ENOMEM, "pipeline: out of memory");
    return KNUT_OK;
}

/* The files of a source's pattern not in the flow's checkpoint (all of
 * them when ignore_checkpoint), sorted by name: *files as DuckDB reads
 * them, *rel as the checkpoint keeps them, relative to the spec folder
 * (so a run from another working folder sees the same files). */
knut_status knut_pipeline__new_files(knut_pipeline__run *r, const knut_pipeline_flow *f,
                                     const knut_pipeline_source *s, int ignore_checkpoint,
                                     knut_pipeline__strvec *files, knut_pipeline__strvec *rel,
                                     knut_error *err)
{
    knut_buf pat = KNUT_BUF_INIT, root = KNUT_BUF_INIT;
    rooted(&pat, r->p, s->pattern);
    if (strcmp(r->p->root, ".") != 0)
        knut_buf_printf(&root, "%s/", r->p->root);
    else
        knut_buf_puts(&root, "");
    knut_status st = knut_buf_check(&pat, err);
    if (st == KNUT_OK)
        st = knut_buf_check(&root, err);
    collect_ctx c = {files, rel};
    if (st == KNUT_OK) {
        char limit[32];
        snprintf(limit, sizeof limit, "%lld", (long long)r->files_per_update);
        const char *binds[] = {pat.data, f->name, root.data, limit};
        size_t before = files->n;
        st = knut_pipeline__query_each(
            r->conn,
            ignore_checkpoint
                ? "SELECT file, CASE WHEN starts_with(file, $3) THEN substr(file, length($3) + 1) "
                  "ELSE file END AS rel FROM glob($1) WHERE $2 IS NOT NULL ORDER BY file "
                  "LIMIT $4::BIGINT"
                : "SELECT * FROM (SELECT file, CASE WHEN starts_with(file, $3) THEN "
                  "substr(file, length($3) + 1) ELSE file END AS rel FROM glob($1)) WHERE rel "
                  "NOT IN (SELECT file FROM _knut.files WHERE flow = $2) ORDER BY file "
                  "LIMIT $4::BIGINT",
            binds, 4, collect_file, &c, err);
        if (st == KNUT_OK && (int64_t)(files->n - before) >= r->files_per_update)
            r->more = 1;
    }
    knut_buf_reset(&pat);
    knut_buf_reset(&root);
    return st;
}

/* sql with each source literal replaced: by the rooted pattern, or (for
 * a streaming flow) by the list of its new files. */
void knut_pipeline__rewrite(knut_buf *b, const knut_pipeline *p, const knut_pipeline_flow *f,
                    knut_pipeline__strvec *per_source)
{
    size_t at = 0;
    for (size_t i = 0; i < f->nsources; i++) {
        const knut_pipeline_source *s = &f->sources[i];
        knut_buf_append(b, f->sql + at, s->at - at);
        if (per_source) {
            knut_buf_putc(b, '[');
            for (size_t k = 0; k < per_source[i].n; k++) {
                if (k)
                    knut_buf_putc(b, ',');
                knut_duck_literal(b, per_source[i].v[k], strlen(per_source[i].v[k]));
            }
            knut_buf_putc(b, ']');
        } else {
            knut_buf tmp = KNUT_BUF_INIT;
            rooted(&tmp, p, s->pattern);
            if (tmp.error)
                b->error = tmp.error;
            else
                knut_duck_literal(b, tmp.data ? tmp.data : "", tmp.len);
            knut_buf_reset(&tmp);
        }
        at = s->at + s->len;
    }
    knut_buf_puts(b, f->sql + at);
}

void knut_pipeline__qualified(knut_buf *b, const char *schema, const char *name, const char *suffix)
{
    knut_duck_ident(b, schema);
    knut_buf_putc(b, '.');
    if (!suffix) {
        knut_duck_ident(b, name);
        return;
    }
    knut_buf tmp = KNUT_BUF_INIT;
    knut_buf_printf(&tmp, "%s%s", name, suffix);
    knut_duck_ident(b, tmp.data ? tmp.data : "");
    knut_buf_reset(&tmp);
}

knut_status knut_pipeline__table_exists(knut_pipeline__run *r, const char *name, int *out,
                                knut_error *err)
{
    int64_t n = 0;
    const char *binds[] = {r->p->schema, name};
    knut_status st = knut_pipeline__scalar_i64(
        r->conn,
        "SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database() AND "
        "schema_name = $1 AND table_name = $2",
        binds, 2, &n, err);
    *out = n > 0;
    return st;
}

/* Runs text on the flow's transaction; a failure becomes the flow's. */
knut_status knut_pipeline__step(knut_pipeline__run *r, knut_buf *sql, const char *const *binds,
                                size_t n, knut_error *err)
{
    knut_status st = knut_buf_check(sql, err);
    if (st == KNUT_OK)
        st = knut_pipeline__exec(r->conn, sql->data, binds, n, NULL, err);
    knut_buf_clear(sql);
    return st;
}

/* A STREAM(table) read of a streaming flow: the rows after the flow's
 * offset (the last rowid it read) up to the table's last row now. Rows of
 * a streaming table are only appended (a full refresh makes a new table),
 * so rowids are stable and dense. */

knut_status knut_pipeline__stream_bounds(knut_pipeline__run *r, const knut_pipeline_flow *f,
                                 int ignore_offset, knut_pipeline__stream *sr, knut_error *err)
{
    const char *binds[] = {f->name, sr->name};
    knut_status st = KNUT_OK;
    int64_t n = 0;
    sr->lo = -1;
    if (!ignore_offset) {
        st = knut_pipeline__scalar_i64(r->conn,
                                       "SELECT count(*) FROM _knut.offsets WHERE flow = $1 AND "
                                       "source = $2", binds, 2, &n, err);
        if (st == KNUT_OK && n)
            st = knut_pipeline__scalar_i64(r->conn,
                                           "SELECT last_rowid FROM _knut.offsets WHERE flow = $1 "
                                           "AND source = $2", binds, 2, &sr->lo, err);
    }
    int exists = 0;
    if (st == KNUT_OK)
        st = knut_pipeline__table_exists(r, sr->name, &exists, err);
    sr->hi = -1;
    if (st == KNUT_OK && exists) {
        knut_buf q = KNUT_BUF_INIT;
        knut_buf_puts(&q, "SELECT coalesce(max(rowid), -1) FROM ");
        knut_pipeline__qualified(&q, r->p->schema, sr->name, NULL);
        if ((st = knut_buf_check(&q, err)) == KNUT_OK)
            st = knut_pipeline__scalar_i64(r->conn, q.data, NULL, 0, &sr->hi, err);
        knut_buf_reset(&q);
    }
    if (sr->hi < sr->lo)
        sr->lo = -1; /* the table was made anew behind the offset: read it all */
    return st;
}

/* Shadows each streamed table with a temporary view of its new rows (the
 * temp schema comes first in name resolution); the bounds are in a temp
 * table, so no value is in the view's text. */
knut_status knut_pipeline__stream_views(knut_pipeline__run *r, const knut_pipeline__stream *sr,
                                        size_t n, knut_error *err)
{
    knut_status st = knut_duck_exec(r->conn,
                                    "CREATE OR REPLACE TEMP TABLE __knut_bounds (name VARCHAR, "
                                    "lo BIGINT, hi BIGINT)", err);
    knut_buf sql = KNUT_BUF_INIT;
    for (size_t i = 0; i < n && st == KNUT_OK; i++) {
        char lo[32], hi[32];
        snprintf(lo, sizeof lo, "%lld", (long long)sr[i].lo);
        snprintf(hi, sizeof hi, "%lld", (long long)sr[i].hi);
        const char *binds[] = {sr[i].name, lo, hi};
        st = knut_pipeline__exec(r->conn, "INSERT INTO __knut_bounds VALUES ($1, $2::BIGINT, "
                                          "$3::BIGINT)", binds, 3, NULL, err);
        if (st != KNUT_OK)
            break;
        knut_buf_puts(&sql, "CREATE OR REPLACE TEMP VIEW ");
        knut_duck_ident(&sql, sr[i].name);
        knut_buf_puts(&sql, " AS SELECT * FROM ");
        knut_duck_ident(&sql, r->p->catalog);
        knut_buf_putc(&sql, '.');
        knut_pipeline__qualified(&sql, r->p->schema, sr[i].name, NULL);
        knut_buf_puts(&sql, " WHERE rowid > (SELECT lo FROM __knut_bounds WHERE name = ");
        knut_duck_literal(&sql, sr[i].name, strlen(sr[i].name));
        knut_buf_puts(&sql, ") AND rowid <= (SELECT hi FROM __knut_bounds WHERE name = ");
        knut_duck_literal(&sql, sr[i].name, strlen(sr[i].name));
        knut_buf_putc(&sql, ')');
        st = knut_pipeline__step(r, &sql, NULL, 0, err);
    }
    knut_buf_reset(&sql);
    return st;
}

void knut_pipeline__stream_views_drop(knut_pipeline__run *r, const knut_pipeline__stream *sr,
                                      size_t n)
{
    knut_buf sql = KNUT_BUF_INIT;
    knut_error ignored = KNUT_ERROR_INIT;
    for (size_t i = 0; i < n; i++) {
        knut_buf_puts(&sql, "DROP VIEW IF EXISTS temp.main.");
        knut_duck_ident(&sql, sr[i].name);
        knut_buf_putc(&sql, ';');
    }
    knut_buf_puts(&sql, "DROP TABLE IF EXISTS temp.main.__knut_bounds");
    if (!sql.error)
        knut_duck_exec(r->conn, sql.data, &ignored);
    knut_buf_reset(&sql);
}
