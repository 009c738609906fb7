/*
 * SQL with bound text parameters for the pipeline part: values always
 * travel as parameters; the few names in the text are quoted by
 * knut_duck_ident at the call.
 */
#include <string.h>

#include "pipeline_int.h"

knut_status knut_pipeline__exec(knut_duck_conn *conn, const char *sql, const char *const *binds,
                                size_t n, uint64_t *changes, knut_error *err)
{
    if (n == 0 && !changes)
        return knut_duck_exec(conn, sql, err);
    knut_duck_stmt *stmt = NULL;
    knut_status st = knut_duck_stmt_prepare_text(&stmt, conn, sql, binds, n, err);
    if (st == KNUT_OK)
        st = knut_duck_stmt_exec(stmt, changes, err);
    knut_duck_stmt_free(stmt);
    return st;
}

/* Each row of a batch, for knut_pipeline__query_each. */
typedef struct rows_ctx {
    knut_pipeline__row_fn fn;
    void *ctx;
} rows_ctx;

static knut_status each_row(void *ctx, const knut_arrow_view *v, knut_error *err)
{
    rows_ctx *c = ctx;
    knut_status st = KNUT_OK;
    for (int64_t r = 0; st == KNUT_OK && r < v->length; r++)
        st = c->fn(c->ctx, v, r, err);
    return st;
}

knut_status knut_pipeline__query_each(knut_duck_conn *conn, const char *sql,
                                      const char *const *binds, size_t n,
                                      knut_pipeline__row_fn fn, void *ctx, knut_error *err)
{
    knut_duck_stmt *stmt = NULL;
    struct ArrowArrayStream s = {0};
    rows_ctx rc = {fn, ctx};
    knut_status st = knut_duck_stmt_prepare_text(&stmt, conn, sql, binds, n, err);
    if (st == KNUT_OK)
        st = knut_duck_stmt_query(stmt, &s, err);
    if (st == KNUT_OK)
        st = knut_arrow_stream_each(&s, each_row, &rc, err);
    knut_arrow_stream_release(&s);
    knut_duck_stmt_free(stmt);
    return st;
}

const char *knut_pipeline__col_str(const knut_arrow_view *v, int c, int64_t r, int64_t *len)
{
    *len = 0;
    if (c >= v->n_children)
        return NULL;
    const knut_arrow_view *col = &v->children[c];
    int64_t i = knut_arrow_view_child_row(v, r);
    if (knut_arrow_view_is_null(col, i))
        return NULL;
    return knut_arrow_view_get_str(col, i, len);
}

int64_t knut_pipeline__col_i64(const knut_arrow_view *v, int c, int64_t r)
{
    if (c >= v->n_children)
        return 0;
    const knut_arrow_view *col = &v->children[c];
    int64_t i = knut_arrow_view_child_row(v, r);
    return knut_arrow_view_is_null(col, i) ? 0 : knut_arrow_view_get_int64(col, i);
}

typedef struct first_ctx {
    int seen;
    int64_t i;
    knut_buf *out;
    int *found;
} first_ctx;

static knut_status first_i64(void *ctx, const knut_arrow_view *v, int64_t r, knut_error *err)
{
    first_ctx *c = ctx;
    if (!c->seen)
        c->i = knut_pipeline__col_i64(v, 0, r);
    c->seen = 1;
    return KNUT_OK;
}

static knut_status first_str(void *ctx, const knut_arrow_view *v, int64_t r, knut_error *err)
{
    first_ctx *c = ctx;
    if (c->seen)
        return KNUT_OK;
    c->seen = 1;
    int64_t len;
    const char *s = knut_pipeline__col_str(v, 0, r, &len);
    if (!s)
        return KNUT_OK;
    *c->found = 1;
    knut_buf_append(c->out, s, (size_t)len);
    return knut_buf_check(c->out, err);
}

knut_status knut_pipeline__scalar_i64(knut_duck_conn *conn, const char *sql,
                                      const char *const *binds, size_t n, int64_t *out,
                                      knut_error *err)
{
    first_ctx c = {0, 0, NULL, NULL};
    knut_status st = knut_pipeline__query_each(conn, sql, binds, n, first_i64, &c, err);
    *out = c.i;
    return st;
}

knut_status knut_pipeline__scalar_str(knut_duck_conn *conn, const char *sql,
                                      const char *const *binds, size_t n, knut_buf *out,
                                      int *found, knut_error *err)
{
    *found = 0;
    first_ctx c = {0, 0, out, found};
    return knut_pipeline__query_each(conn, sql, binds, n, first_str, &c, err);
}
