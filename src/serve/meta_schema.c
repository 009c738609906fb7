/*
 * GetTables with include_schema: each table's columns as an encapsulated
 * IPC Schema in a fifth, binary column. The table rows are read to their
 * end first (a catalog listing, not data), then each table's schema comes
 * from preparing SELECT * FROM it, names quoted as identifiers, on the
 * same connection (nothing runs). The batches get the new column through a
 * wrapper that owns DuckDB's batch and the built column.
 */
#include <stdlib.h>
#include <string.h>

#include "serve_int.h"

#define TABLE_COLS 4

typedef struct wide {
    struct ArrowArray base;  /* DuckDB's 4-column batch */
    struct ArrowArray extra; /* table_schema */
    struct ArrowArray *kids[TABLE_COLS + 1];
} wide;

static void wide_release(struct ArrowArray *a)
{
    wide *w = a->private_data;
    knut_arrow_array_release(&w->base);
    knut_arrow_array_release(&w->extra);
    free(w);
    a->release = NULL;
}

/* Row i of a utf8 column as (pointer, length); NULL when null. */
static const char *str_at(const struct ArrowArray *a, int64_t i, size_t *len)
{
    int64_t j = a->offset + i;
    const uint8_t *valid = a->buffers[0];
    if (valid && !(valid[j / 8] & (1u << (j % 8))))
        return NULL;
    const int32_t *off = a->buffers[1];
    *len = (size_t)(off[j + 1] - off[j]);
    return (const char *)a->buffers[2] + off[j];
}

static knut_status ident(knut_buf *sql, const struct ArrowArray *col, int64_t i)
{
    size_t n = 0;
    const char *s = str_at(col, i, &n);
    char *z = s ? strndup(s, n) : NULL;
    if (s && !z)
        return KNUT_ENOMEM;
    knut_status st = knut_duck_ident(sql, z ? z : "");
    free(z);
    return st;
}

/* The IPC schema of one table into the builder. A table whose schema
 * cannot be had (a view over a file that is gone) gets an empty one, and
 * a log record: one bad view must not hide every table from a client's
 * browser, which asks for all of them at once. */
static knut_status table_schema(knut_duck_conn *conn, const struct ArrowArray *batch, int64_t i,
                                knut_arrow_builder *b, knut_buf *bytes, knut_error *err)
{
    knut_buf sql = KNUT_BUF_INIT;
    knut_duck_stmt *stmt = NULL;
    struct ArrowSchema s = {0};
    knut_error terr = KNUT_ERROR_INIT;
    knut_status st = KNUT_OK;
    knut_buf_puts(&sql, "SELECT * FROM ");
    for (int k = 0; k < 3 && st == KNUT_OK; k++) {
        if (k)
            knut_buf_putc(&sql, '.');
        if ((st = ident(&sql, batch->children[k], i)) != KNUT_OK)
            knut_error_set(err, st, "out of memory");
    }
    if (st == KNUT_OK)
        st = knut_buf_check(&sql, err);
    if (st == KNUT_OK && (knut_duck_stmt_prepare(&stmt, conn, sql.data, &terr) != KNUT_OK ||
                          knut_duck_stmt_schema(stmt, &s, &terr) != KNUT_OK)) {
        KNUT_LOG(KNUT_LOG_WARN, "serve", "GetTables: %s: no schema (%s); sent an empty one",
                 sql.data + strlen("SELECT * FROM "), terr.message);
        knut_arrow_schema_release(&s);
        st = knut_arrow_schema_init(&s, "+s", NULL, 0, 0, err);
    }
    if (st == KNUT_OK)
        st = knut_serve__schema_bytes(&s, bytes, err);
    if (st == KNUT_OK)
        st = knut_arrow_builder_append_bytes(b, bytes->data, bytes->len, err);
    if (st != KNUT_OK)
        knut_error_prefix(err, "table schema: ");
    knut_arrow_schema_release(&s);
    knut_duck_stmt_free(stmt);
    knut_buf_reset(&sql);
    return st;
}

static knut_status widen(knut_duck_conn *conn, struct ArrowArray *batch, knut_arrow_builder *b,
                         knut_buf *bytes, struct ArrowArray *out, knut_error *err)
{
    knut_status st = KNUT_OK;
    if (batch->n_children != TABLE_COLS)
        return knut_error_set(err, KNUT_ERROR, "GetTables: %lld columns",
                              (long long)batch->n_children);
    for (int64_t i = 0; st == KNUT_OK && i < batch->length; i++)
        st = table_schema(conn, batch, i, b, bytes, err);
    wide *w = st == KNUT_OK ? calloc(1, sizeof *w) : NULL;
    if (st == KNUT_OK && !w)
        st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
    if (st == KNUT_OK)
        st = knut_arrow_builder_finish(b, &w->extra, NULL, err);
    if (st != KNUT_OK) {
        free(w);
        return st;
    }
    knut_arrow_array_move(&w->base, batch);
    for (int k = 0; k < TABLE_COLS; k++)
        w->kids[k] = w->base.children[k];
    w->kids[TABLE_COLS] = &w->extra;
    *out = w->base;
    out->n_children = TABLE_COLS + 1;
    out->children = w->kids;
    out->private_data = w;
    out->release = wide_release;
    out->dictionary = NULL;
    return KNUT_OK;
}

static knut_status wide_schema(const struct ArrowSchema *narrow, struct ArrowSchema *out,
                               knut_error *err)
{
    knut_status st = knut_arrow_schema_init(out, "+s", NULL, 0, TABLE_COLS + 1, err);
    for (int k = 0; st == KNUT_OK && k < TABLE_COLS; k++) {
        struct ArrowSchema c;
        st = knut_arrow_schema_deep_copy(&c, narrow->children[k], err);
        if (st == KNUT_OK)
            st = knut_arrow_schema_set_child(out, k, &c, err);
    }
    if (st == KNUT_OK)
        st = knut_arrow_schema_init(out->children[TABLE_COLS], "z", "table_schema", 0, 0, err);
    return st;
}

knut_status knut_serve__meta_tables_with_schema(knut_duck_conn *conn,
                                                struct ArrowArrayStream *rows,
                                                struct ArrowArrayStream *out, knut_error *err)
{
    struct ArrowSchema narrow = {0}, schema = {0};
    struct ArrowArray *batches = NULL;
    int64_t n = 0;
    knut_arrow_builder *b = NULL;
    knut_buf bytes = KNUT_BUF_INIT;
    knut_status st = knut_arrow_stream_collect(rows, &narrow, &batches, &n, 0, err);
    if (st == KNUT_OK)
        st = wide_schema(&narrow, &schema, err);
    if (st == KNUT_OK)
        st = knut_arrow_builder_new_simple(&b, KNUT_ARROW_BINARY, "table_schema", err);
    for (int64_t i = 0; st == KNUT_OK && i < n; i++) {
        struct ArrowArray wider;
        st = widen(conn, &batches[i], b, &bytes, &wider, err);
        if (st == KNUT_OK)
            batches[i] = wider; /* the wrapper now owns DuckDB's batch */
    }
    if (st == KNUT_OK) {
        st = knut_arrow_stream_from_arrays(out, &schema, batches, n, err);
        n = 0; /* taken over, also on failure */
    }
    knut_arrow_schema_release(&schema);
    knut_arrow_schema_release(&narrow);
    knut_arrow_arrays_free(batches, n); /* the vector itself is ours either way */
    knut_arrow_builder_free(b);
    knut_buf_reset(&bytes);
    return st;
}
