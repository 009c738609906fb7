/*
 * Writers for the output formats of row-printing subcommands. Each reads
 * the stream one batch at a time and writes it out before asking for the
 * next, so memory is bounded by a batch.
 *
 * The table takes its column widths from the header and the first 2048
 * rows (read ahead, then printed), capped at max_width characters; a longer
 * value, then or later, is cut and ends in "…". Exact output for machines
 * is csv, json or arrow.
 */
#include "render.h"

#include <stdlib.h>
#include <string.h>

const char *const knut_cli_format_names[] = {"table", "csv", "json", "arrow", NULL};

/* One batch, viewed. */
typedef struct rbatch {
    struct ArrowArray array;
    knut_arrow_view view;
} rbatch;

/* Reads the next batch; 1 = got one, 0 = end, error otherwise. */
static knut_status next_batch(struct ArrowArrayStream *s, const struct ArrowSchema *schema,
                              rbatch *b, int *got, knut_error *err)
{
    *got = 0;
    for (;;) {
        int rc = s->get_next(s, &b->array);
        if (rc != 0) {
            b->array.release = NULL;
            return knut_arrow_stream_error(s, rc, "reading rows", err);
        }
        if (!b->array.release)
            return KNUT_OK;
        if (b->array.length > 0)
            break;
        b->array.release(&b->array);
    }
    knut_status st = knut_arrow_view_init(&b->view, schema, &b->array, err);
    if (st != KNUT_OK) {
        knut_arrow_array_release(&b->array);
        return knut_error_prefix(err, "reading rows: ");
    }
    *got = 1;
    return KNUT_OK;
}

static void batch_done(rbatch *b)
{
    knut_arrow_view_reset(&b->view);
    knut_arrow_array_release(&b->array);
}

static knut_status write_buf(FILE *out, knut_buf *b, knut_error *err)
{
    knut_status st = knut_buf_check(b, err);
    if (st != KNUT_OK)
        return st;
    if (b->len && fwrite(b->data, 1, b->len, out) != b->len)
        return knut_error_set(err, KNUT_EIO, "writing output failed");
    knut_buf_clear(b);
    return KNUT_OK;
}

/* Flush a batch's text once it is this big, so a batch of wide rows does
 * not pile up. */
#define RENDER_FLUSH_BYTES (256 * 1024)

/* ---- csv --------------------------------------------------------------- */

static void csv_field(knut_buf *b, const char *s, size_t len, int force_quotes)
{
    int quote = force_quotes;
    for (size_t k = 0; k < len && !quote; k++)
        quote = s[k] == ',' || s[k] == '"' || s[k] == '\n' || s[k] == '\r';
    if (!quote) {
        knut_buf_append(b, s, len);
        return;
    }
    knut_buf_putc(b, '"');
    for (size_t k = 0; k < len; k++) {
        if (s[k] == '"')
            knut_buf_putc(b, '"');
        knut_buf_putc(b, s[k]);
    }
    knut_buf_putc(b, '"');
}

static knut_status render_csv(FILE *out, struct ArrowArrayStream *s,
                              const struct ArrowSchema *schema, int64_t *rows, knut_error *err)
{
    knut_buf line = KNUT_BUF_INIT, cell = KNUT_BUF_INIT;
    knut_status st = KNUT_OK;
    rbatch b;
    int got = 0;
    for (int64_t k = 0; k < schema->n_children; k++) {
        const char *name = schema->children[k]->name ? schema->children[k]->name : "";
        if (k)
            knut_buf_putc(&line, ',');
        csv_field(&line, name, strlen(name), 0);
    }
    knut_buf_putc(&line, '\n');
    while ((st = next_batch(s, schema, &b, &got, err)) == KNUT_OK && got) {
        for (int64_t i = 0; i < b.array.length && st == KNUT_OK; i++) {
            for (int64_t k = 0; k < b.view.n_children; k++) {
                const knut_arrow_view *c = &b.view.children[k];
                int64_t row = knut_arrow_view_child_row(&b.view, i);
                if (k)
                    knut_buf_putc(&line, ',');
                /* NULL is an empty field; an empty string is "" so the two
                 * stay apart. */
                if (knut_arrow_view_is_null(c, row))
                    continue;
                knut_buf_clear(&cell);
                knut_cli_render_value(&cell, c, row, KNUT_CLI_VALUE_TEXT);
                csv_field(&line, cell.data ? cell.data : "", cell.len, cell.len == 0);
            }
            knut_buf_putc(&line, '\n');
            (*rows)++;
            if (line.len >= RENDER_FLUSH_BYTES)
                st = write_buf(out, &line, err);
        }
        batch_done(&b);
        if (st == KNUT_OK)
            st = write_buf(out, &line, err);
        if (st != KNUT_OK)
            break;
    }
    if (st == KNUT_OK)
        st = write_buf(out, &line, err);
    knut_buf_reset(&line);
    knut_buf_reset(&cell);
    return st;
}

/* ---- json lines -------------------------------------------------------- */

static knut_status render_json(FILE *out, struct ArrowArrayStream *s,
                               const struct ArrowSchema *schema, int64_t *rows, knut_error *err)
{
    knut_buf line = KNUT_BUF_INIT;
    knut_status st = KNUT_OK;
    rbatch b;
    int got = 0;
    while ((st = next_batch(s, schema, &b, &got, err)) == KNUT_OK && got) {
        for (int64_t i = 0; i < b.array.length && st == KNUT_OK; i++) {
            knut_buf_putc(&line, '{');
            for (int64_t k = 0; k < b.view.n_children; k++) {
                const knut_arrow_view *c = &b.view.children[k];
                const char *name = c->schema->name ? c->schema->name : "";
                if (k)
                    knut_buf_putc(&line, ',');
                knut_buf_put_json_str(&line, name, strlen(name));
                knut_buf_putc(&line, ':');
                knut_cli_render_value(&line, c, knut_arrow_view_child_row(&b.view, i),
                                      KNUT_CLI_VALUE_JSON);
            }
            knut_buf_puts(&line, "}\n");
            (*rows)++;
            if (line.len >= RENDER_FLUSH_BYTES)
                st = write_buf(out, &line, err);
        }
        batch_done(&b);
        if (st == KNUT_OK)
            st = write_buf(out, &line, err);
        if (st != KNUT_OK)
            break;
    }
    knut_buf_reset(&line);
    return st;
}

/* ---- arrow ipc --------------------------------------------------------- */

static knut_status render_arrow(FILE *out, struct ArrowArrayStream *s,
                                const struct ArrowSchema *schema, int64_t *rows, knut_error *err)
{
    knut_arrow_ipc_writer *w = NULL;
    knut_status st = knut_arrow_ipc_writer_new(&w, knut_arrow_ipc_sink_file(out), schema, err);
    while (st == KNUT_OK) {
        struct ArrowArray a;
        int rc = s->get_next(s, &a);
        if (rc != 0) {
            st = knut_arrow_stream_error(s, rc, "reading rows", err);
            break;
        }
        if (!a.release)
            break;
        st = knut_arrow_ipc_writer_write(w, &a, err);
        if (st == KNUT_OK)
            *rows += a.length;
        a.release(&a);
    }
    /* Without the end marker a reader sees a cut stream, which is what
     * happened when reading failed. */
    if (st == KNUT_OK)
        st = knut_arrow_ipc_writer_finish(w, err);
    knut_arrow_ipc_writer_free(w);
    return st;
}

/* ---- table ------------------------------------------------------------- */

/* Characters (UTF-8 code points) in s. */
static int text_width(const char *s, size_t len)
{
    int w = 0;
    for (size_t k = 0; k < len; k++)
        w += ((unsigned char)s[k] & 0xC0) != 0x80;
    return w;
}

/* Cell text: control characters made visible so a value never breaks the
 * table's lines, then cut to width characters. */
static void table_cell(knut_buf *cell, knut_buf *tmp, const knut_arrow_view *c, int64_t row,
                       int width)
{
    knut_buf_clear(cell);
    knut_buf_clear(tmp);
    knut_cli_render_value(tmp, c, row, KNUT_CLI_VALUE_TEXT);
    for (size_t k = 0; k < tmp->len; k++) {
        unsigned char ch = (unsigned char)tmp->data[k];
        if (ch < 0x20 || ch == 0x7f)
            knut_buf_puts(cell, ch == '\n' ? "\\n" : ch == '\t' ? "\\t" : ch == '\r' ? "\\r" : "?");
        else
            knut_buf_putc(cell, (char)ch);
    }
    if (!cell->data || text_width(cell->data, cell->len) <= width)
        return;
    /* Keep width - 1 characters and end with the marker. */
    size_t k = 0;
    for (int w = 0; k < cell->len; k++) {
        if (((unsigned char)cell->data[k] & 0xC0) != 0x80) {
            if (w == width - 1)
                break;
            w++;
        }
    }
    cell->len = k;
    cell->data[k] = '\0';
    knut_buf_puts(cell, "\xe2\x80\xa6"); /* "…" */
}

typedef struct table {
    int64_t ncols;
    int *width;
    int *right;
    int max_width;
    knut_buf line, cell, tmp;
} table;

static void table_pad(knut_buf *b, int n)
{
    for (int k = 0; k < n; k++)
        knut_buf_putc(b, ' ');
}

static void table_rule(table *t)
{
    knut_buf_putc(&t->line, '+');
    for (int64_t k = 0; k < t->ncols; k++) {
        for (int j = 0; j < t->width[k] + 2; j++)
            knut_buf_putc(&t->line, '-');
        knut_buf_putc(&t->line, '+');
    }
    knut_buf_putc(&t->line, '\n');
}

static void table_put(table *t, int64_t k, const char *s, size_t len)
{
    int pad = t->width[k] - text_width(s, len);
    knut_buf_puts(&t->line, k ? " " : "| ");
    if (t->right[k])
        table_pad(&t->line, pad);
    knut_buf_append(&t->line, s, len);
    if (!t->right[k])
        table_pad(&t->line, pad);
    knut_buf_puts(&t->line, " |");
}

static void table_row(table *t, const knut_arrow_view *root, int64_t i)
{
    for (int64_t k = 0; k < t->ncols; k++) {
        /* Numbers (right-aligned) are never cut to the sampled width: a
         * wider later value breaks the alignment rather than lose digits. */
        table_cell(&t->cell, &t->tmp, &root->children[k], knut_arrow_view_child_row(root, i),
                   t->right[k] ? t->max_width : t->width[k]);
        table_put(t, k, t->cell.data ? t->cell.data : "", t->cell.len);
    }
    knut_buf_putc(&t->line, '\n');
}

static void table_header(table *t, const struct ArrowSchema *schema)
{
    table_rule(t);
    for (int64_t k = 0; k < t->ncols; k++) {
        const char *name = schema->children[k]->name ? schema->children[k]->name : "";
        table_put(t, k, name, strlen(name));
    }
    knut_buf_putc(&t->line, '\n');
    table_rule(t);
}

/* Rows read ahead to size the columns before the header is printed. */
#define TABLE_SAMPLE_ROWS 2048

/* Prints rows of b until *rows reaches max_rows; returns 1 if rows of b
 * were left out. */
static int table_batch(table *t, const rbatch *b, int64_t max_rows, int64_t *rows)
{
    int64_t i = 0;
    for (; i < b->array.length && *rows < max_rows; i++, (*rows)++)
        table_row(t, &b->view, i);
    return i < b->array.length;
}

static knut_status render_table(FILE *out, struct ArrowArrayStream *s,
                                const struct ArrowSchema *schema, const knut_cli_render_opts *o,
                                int64_t *rows, knut_error *err)
{
    table t = {0};
    knut_status st = KNUT_OK;
    rbatch *held = NULL, b;
    int64_t nheld = 0, sampled = 0;
    int got = 1, more = 0;
    int64_t max_rows = o->max_rows > 0 ? o->max_rows : INT64_MAX;
    int64_t target = max_rows < TABLE_SAMPLE_ROWS ? max_rows : TABLE_SAMPLE_ROWS;
    t.ncols = schema->n_children;
    t.max_width = o->max_width > 0 ? o->max_width : KNUT_CLI_TABLE_DEFAULT_WIDTH;
    t.width = calloc((size_t)t.ncols + 1, sizeof *t.width);
    t.right = calloc((size_t)t.ncols + 1, sizeof *t.right);
    /* Every held batch has at least one row, so this bounds the count. */
    held = calloc((size_t)target, sizeof *held);
    if (!t.width || !t.right || !held) {
        st = knut_error_set(err, KNUT_ENOMEM, "rendering table: out of memory");
        goto cleanup;
    }
    for (int64_t k = 0; k < t.ncols; k++) {
        const char *name = schema->children[k]->name ? schema->children[k]->name : "";
        t.width[k] = text_width(name, strlen(name));
    }

    /* Column widths come from the header and the first rows (batches can
     * be tiny, e.g. one per UNION ALL branch, so several are read). */
    while (sampled < target) {
        st = next_batch(s, schema, &held[nheld], &got, err);
        if (st != KNUT_OK)
            goto cleanup;
        if (!got)
            break;
        sampled += held[nheld++].array.length;
    }
    int64_t left = target;
    for (int64_t j = 0; j < nheld && left > 0; j++) {
        const rbatch *h = &held[j];
        int64_t n = h->array.length < left ? h->array.length : left;
        left -= n;
        for (int64_t k = 0; k < t.ncols; k++) {
            const knut_arrow_view *c = &h->view.children[k];
            t.right[k] = knut_cli_render_is_numeric(c);
            for (int64_t i = 0; i < n; i++) {
                table_cell(&t.cell, &t.tmp, c, knut_arrow_view_child_row(&h->view, i), t.max_width);
                int w = text_width(t.cell.data ? t.cell.data : "", t.cell.len);
                if (w > t.width[k])
                    t.width[k] = w;
            }
        }
    }
    table_header(&t, schema);
    for (int64_t j = 0; j < nheld && st == KNUT_OK && !more; j++) {
        more = table_batch(&t, &held[j], max_rows, rows);
        st = write_buf(out, &t.line, err);
    }
    if (st != KNUT_OK)
        goto cleanup;
    /* got == 0: the sampling already reached the end of the stream. */
    while (got && !more) {
        st = next_batch(s, schema, &b, &got, err);
        if (st != KNUT_OK || !got)
            break;
        if (*rows >= max_rows) {
            /* Exactly at the limit: this batch only tells that rows remain. */
            more = 1;
        } else {
            more = table_batch(&t, &b, max_rows, rows);
            st = write_buf(out, &t.line, err);
        }
        batch_done(&b);
    }
    if (st != KNUT_OK)
        goto cleanup;
    table_rule(&t);
    if (more)
        knut_buf_printf(&t.line, "(%lld rows shown; more not shown)\n", (long long)*rows);
    else
        knut_buf_printf(&t.line, "(%lld row%s)\n", (long long)*rows, *rows == 1 ? "" : "s");
    st = write_buf(out, &t.line, err);

cleanup:
    for (int64_t j = 0; j < nheld; j++)
        batch_done(&held[j]);
    free(held);
    free(t.width);
    free(t.right);
    knut_buf_reset(&t.line);
    knut_buf_reset(&t.cell);
    knut_buf_reset(&t.tmp);
    return st;
}

/* ---- entry ------------------------------------------------------------- */

knut_status knut_cli_render_stream(FILE *out, struct ArrowArrayStream *stream,
                                   const knut_cli_render_opts *opts, int64_t *rows,
                                   knut_error *err)
{
    struct ArrowSchema schema;
    knut_arrow_type_info t;
    int64_t n = 0;
    knut_status st;
    if (rows)
        *rows = 0;
    int rc = stream->get_schema(stream, &schema);
    if (rc != 0) {
        schema.release = NULL;
        return knut_arrow_stream_error(stream, rc, "reading the result schema", err);
    }
    st = knut_arrow_schema_parse_type(&schema, &t, err);
    if (st == KNUT_OK && t.type != KNUT_ARROW_STRUCT)
        st = knut_error_set(err, KNUT_EINVAL, "result schema is not a struct of columns ('%s')",
                            schema.format);
    if (st != KNUT_OK)
        goto cleanup;
    switch (opts->format) {
    case KNUT_CLI_FORMAT_CSV:
        st = render_csv(out, stream, &schema, &n, err);
        break;
    case KNUT_CLI_FORMAT_JSON:
        st = render_json(out, stream, &schema, &n, err);
        break;
    case KNUT_CLI_FORMAT_ARROW:
        st = render_arrow(out, stream, &schema, &n, err);
        break;
    default:
        st = render_table(out, stream, &schema, opts, &n, err);
        break;
    }
    if (st == KNUT_OK && fflush(out) != 0)
        st = knut_error_set(err, KNUT_EIO, "writing output failed");

cleanup:
    if (rows)
        *rows = n;
    knut_arrow_schema_release(&schema);
    return st;
}
