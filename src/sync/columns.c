/*
 * Declared schemas: a table's `columns: {id: BIGINT, born: DATE}` fixes
 * the types its files are read as, so the first file no longer decides
 * them by inference. The types are DuckDB's own names, checked by DuckDB
 * when the config loads (and against what the sink can store when sync
 * opens: columns_config.c); each file is read with them: Parquet columns are cast, CSV files
 * are read with the header's columns (all text) under a fixed dialect
 * (comma, double quote, strict: a ragged row or an unterminated quote is
 * an error, not data), then cast. A value that does not cast fails its
 * file naming the 1-based data row, the column and the value.
 *
 * Type names reach SQL text only as DuckDB printed them back (typeof of a
 * cast NULL); column names as quoted identifiers or literals; the file's
 * path as a parameter.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "sync_int.h"

#define CONF(n) ((const knut_conf *)(n))

/* The most names a header (or a query of names) gives. */
#define COLUMNS_MAX SYNC_COLUMNS_MAX
/* A CSV header line longer than this fails the file (read whole, once). */
#define CSV_HEADER_MAX ((size_t)1 << 20)
/* How much of an offending value a reason quotes. */
#define VALUE_SHOWN_MAX 64
/* The staging error of a lossy cast (explain names the row instead). */
#define SYNC_LOSSY_MSG "a value does not convert without loss"

knut_status knut_sync__q_names(knut_duck_conn *c, const char *sql, const char *param,
                               sync_names *out, knut_error *err)
{
    knut_duck_stmt *stmt = NULL;
    struct ArrowArrayStream s = {0};
    memset(out, 0, sizeof *out);
    knut_status st = param ? knut_duck_stmt_prepare_text(&stmt, c, sql, &param, 1, err)
                           : knut_duck_stmt_prepare(&stmt, c, sql, err);
    if (st == KNUT_OK)
        st = knut_duck_stmt_query(stmt, &s, err);
    if (st == KNUT_OK)
        st = knut_arrow_stream_texts(&s, COLUMNS_MAX, &out->names, &out->n, err);
    knut_arrow_stream_release(&s);
    knut_duck_stmt_free(stmt);
    if (st != KNUT_OK)
        knut_sync__names_reset(out);
    return st;
}

knut_status knut_sync__csv_header(const char *line, size_t len, sync_names *out, knut_error *err)
{
    knut_buf f = KNUT_BUF_INIT;
    knut_status st = KNUT_OK;
    memset(out, 0, sizeof *out);
    if (len >= 3 && memcmp(line, "\xEF\xBB\xBF", 3) == 0) { /* a UTF-8 byte order mark */
        line += 3;
        len -= 3;
    }
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
        len--;
    size_t i = 0;
    for (;;) {
        knut_buf_clear(&f);
        if (i < len && line[i] == '"') { /* "a ""quoted"" name" */
            for (i++;; i++) {
                if (i >= len) {
                    st = knut_error_set(err, KNUT_EINVAL,
                                        "the header line has an unterminated quote");
                    goto cleanup;
                }
                if (line[i] == '"' && i + 1 < len && line[i + 1] == '"')
                    knut_buf_putc(&f, line[i++]);
                else if (line[i] == '"')
                    break;
                else
                    knut_buf_putc(&f, line[i]);
            }
            i++;
            if (i < len && line[i] != ',') {
                st = knut_error_set(err, KNUT_EINVAL,
                                    "the header line has text after a closing quote");
                goto cleanup;
            }
        } else {
            while (i < len && line[i] != ',') {
                if (line[i] == '"') {
                    st = knut_error_set(err, KNUT_EINVAL,
                                        "the header line has a quote inside a name");
                    goto cleanup;
                }
                knut_buf_putc(&f, line[i++]);
            }
        }
        if ((st = knut_buf_check(&f, err)) != KNUT_OK)
            goto cleanup;
        char **names = out->n < COLUMNS_MAX ? realloc(out->names, (out->n + 1) * sizeof *names)
                                            : NULL;
        if (!names) {
            st = out->n < COLUMNS_MAX ? knut_error_set(err, KNUT_ENOMEM, "out of memory")
                                      : knut_error_set(err, KNUT_ETOOBIG,
                                                       "the header has more than %d columns",
                                                       COLUMNS_MAX);
            goto cleanup;
        }
        out->names = names;
        if (!(names[out->n] = strdup(f.data ? f.data : ""))) {
            st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
            goto cleanup;
        }
        out->n++;
        if (i >= len)
            break;
        i++; /* the comma */
    }
cleanup:
    knut_buf_reset(&f);
    if (st != KNUT_OK)
        knut_sync__names_reset(out);
    return st;
}

/* The first line of a CSV file, parsed (a header over one line). */
static knut_status csv_header_read(const char *path, sync_names *out, knut_error *err)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return knut_error_set(err, errno == ENOENT ? KNUT_ENOTFOUND : KNUT_EIO, "%s: %s", path,
                              strerror(errno));
    knut_buf line = KNUT_BUF_INIT;
    int ch, over = 0;
    while ((ch = fgetc(fp)) != EOF && ch != '\n') {
        if (line.len == CSV_HEADER_MAX) { /* one byte past the cap, not at it */
            over = 1;
            break;
        }
        knut_buf_putc(&line, (char)ch);
    }
    fclose(fp);
    knut_status st = knut_buf_check(&line, err);
    if (st == KNUT_OK && over)
        st = knut_error_set(err, KNUT_ETOOBIG, "the header line is longer than %zu bytes",
                            CSV_HEADER_MAX);
    if (st == KNUT_OK)
        st = knut_sync__csv_header(line.data ? line.data : "", line.len, out, err);
    knut_buf_reset(&line);
    return st;
}

/* The raw reader of f: Parquet as written, CSV with the header's columns
 * as text under the fixed dialect. */
static knut_status raw_reader(const sync_file *f, const sync_names *cols, knut_buf *q,
                              knut_error *err)
{
    if (f->format == KNUT_SYNC_FORMAT_PARQUET) {
        knut_buf_puts(q, "read_parquet($1::VARCHAR)");
        return knut_buf_check(q, err);
    }
    knut_buf_puts(q, "read_csv($1::VARCHAR, header = true, auto_detect = false, "
                     "strict_mode = true, null_padding = false, delim = ',', quote = '\"', "
                     "escape = '\"', columns = {");
    for (size_t i = 0; i < cols->n; i++) {
        if (i)
            knut_buf_puts(q, ", ");
        knut_duck_literal(q, cols->names[i], strlen(cols->names[i]));
        knut_buf_puts(q, ": 'VARCHAR'");
    }
    knut_buf_puts(q, "})");
    return knut_buf_check(q, err);
}

/* The file's column names: the CSV header, or the Parquet schema. */
/* The file's column names (the CSV header, or the Parquet schema) and,
 * for Parquet, their types in the same order (types->n 0 for CSV: text). */
static knut_status file_columns(knut_duck_conn *c, const sync_file *f, sync_names *out,
                                sync_names *types, knut_error *err)
{
    memset(types, 0, sizeof *types);
    if (f->format == KNUT_SYNC_FORMAT_CSV)
        return csv_header_read(f->path, out, err);
    knut_status st = knut_sync__q_names(c, "SELECT column_name FROM "
                                           "(DESCRIBE SELECT * FROM read_parquet($1::VARCHAR))",
                                        f->path, out, err);
    if (st == KNUT_OK)
        st = knut_sync__q_names(c, "SELECT column_type FROM "
                                   "(DESCRIBE SELECT * FROM read_parquet($1::VARCHAR))",
                                f->path, types, err);
    if (st == KNUT_OK && types->n != out->n)
        st = knut_error_set(err, KNUT_EIO, "the file's schema changed while being read");
    if (st != KNUT_OK) {
        knut_sync__names_reset(out);
        knut_sync__names_reset(types);
    }
    return st;
}

/* The type a column of the file holds (NULL: text, or a type not to be
 * put in SQL text), for the round-trip check of a lossless cast. */
static const char *source_type(const sync_names *cols, const sync_names *types,
                               const char *name, const char *declared)
{
    for (size_t i = 0; i < types->n && i < cols->n; i++)
        if (strcmp(cols->names[i], name) == 0)
            return strcmp(types->names[i], "VARCHAR") == 0 ||
                           strcmp(types->names[i], declared) == 0 ||
                           !knut_sync__type_text_ok(types->names[i])
                       ? NULL
                       : types->names[i];
    return NULL;
}

/* "value v of the column converts to type without loss": a cast that
 * succeeds and, from a non-text source type, casts back to the value
 * (1.5 as BIGINT would round, a TIMESTAMP as DATE drop its time). */
static void lossless(knut_buf *q, const char *v, const char *type, const char *src)
{
    if (!src) {
        knut_buf_printf(q, "TRY_CAST(%s AS %s) IS NOT NULL", v, type);
        return;
    }
    knut_buf_printf(q, "coalesce(TRY_CAST(TRY_CAST(%s AS %s) AS %s) = %s, false)", v, type, src,
                    v);
}

static const char *names_find(const sync_names *n, const char *name)
{
    for (size_t i = 0; i < n->n; i++)
        if (strcasecmp(n->names[i], name) == 0)
            return n->names[i];
    return NULL;
}

knut_status knut_sync__columns_reader(knut_duck_conn *c, const knut_sync_table *t,
                                      const sync_file *f, knut_buf *q, knut_error *err)
{
    sync_names cols = {0}, types = {0};
    knut_buf v = KNUT_BUF_INIT;
    knut_status st = file_columns(c, f, &cols, &types, err);
    for (size_t i = 0; st == KNUT_OK && i < t->n_columns; i++)
        if (!names_find(&cols, t->columns[i].name)) {
            const knut_conf *n = CONF(t->columns[i].node);
            st = knut_error_set(err, KNUT_EINVAL,
                                "declared column '%s' (%s:%d:%d) is missing from the file",
                                t->columns[i].name, knut_conf_file(n), knut_conf_line(n),
                                knut_conf_col(n));
        }
    if (st != KNUT_OK)
        goto cleanup;
    knut_buf_puts(q, "SELECT * REPLACE (");
    for (size_t i = 0; i < t->n_columns; i++) {
        const char *name = names_find(&cols, t->columns[i].name), *type = t->columns[i].type;
        const char *src = source_type(&cols, &types, name, type);
        knut_buf_clear(&v);
        knut_duck_ident(&v, name);
        if ((st = knut_buf_check(&v, err)) != KNUT_OK)
            goto cleanup;
        knut_buf_puts(q, i ? ", " : "");
        if (src) { /* refuse a lossy cast; explain finds the row */
            knut_buf_printf(q, "CASE WHEN %s IS NULL OR ", v.data);
            lossless(q, v.data, type, src);
            knut_buf_printf(q, " THEN CAST(%s AS %s) ELSE error(", v.data, type);
            knut_duck_literal(q, SYNC_LOSSY_MSG, strlen(SYNC_LOSSY_MSG));
            knut_buf_puts(q, ") END AS ");
        } else {
            knut_buf_printf(q, "CAST(%s AS %s) AS ", v.data, type);
        }
        knut_duck_ident(q, name);
    }
    knut_buf_puts(q, ") FROM ");
    st = raw_reader(f, &cols, q, err);
cleanup:
    knut_buf_reset(&v);
    knut_sync__names_reset(&cols);
    knut_sync__names_reset(&types);
    return st;
}

/* Row (1-based, file order) and text of the first value of column col
 * that does not convert to its declared type without loss; *row 0 if none. */
static knut_status first_bad(knut_duck_conn *c, const sync_file *f, const sync_names *cols,
                             const char *name, const char *type, const char *src, int64_t *row,
                             knut_buf *value, knut_error *err)
{
    knut_buf q = KNUT_BUF_INIT, from = KNUT_BUF_INIT;
    sync_names v = {0};
    knut_status st = raw_reader(f, cols, &from, err);
    knut_buf_puts(&q, "WITH r AS (SELECT row_number() OVER () AS n, ");
    knut_duck_ident(&q, name);
    knut_buf_printf(&q, " AS v FROM %s), b AS (SELECT min(n) AS n FROM r WHERE v IS NOT NULL "
                        "AND NOT ", from.data ? from.data : "");
    lossless(&q, "v", type, src);
    knut_buf_puts(&q, ") ");
    size_t base = q.len;
    knut_buf_puts(&q, "SELECT n FROM b");
    if (st == KNUT_OK && (st = knut_buf_check(&q, err)) == KNUT_OK)
        st = knut_sync__q_int(c, q.data, f->path, row, err);
    if (st == KNUT_OK && *row > 0) {
        q.len = base;
        knut_buf_puts(&q, "SELECT CAST(v AS VARCHAR) FROM r, b WHERE r.n = b.n");
        if ((st = knut_buf_check(&q, err)) == KNUT_OK)
            st = knut_sync__q_names(c, q.data, f->path, &v, err);
        for (size_t i = 0; st == KNUT_OK && v.n > 0 && v.names[0][i] && i < VALUE_SHOWN_MAX; i++)
            knut_buf_putc(value, (unsigned char)v.names[0][i] < 0x20 ? '?' : v.names[0][i]);
        if (st == KNUT_OK && v.n > 0 && strlen(v.names[0]) > VALUE_SHOWN_MAX)
            knut_buf_puts(value, "...");
    }
    knut_sync__names_reset(&v);
    knut_buf_reset(&from);
    knut_buf_reset(&q);
    return st;
}

knut_status knut_sync__columns_explain(knut_duck_conn *c, const knut_sync_table *t,
                                       const sync_file *f, knut_status st, knut_error *err)
{
    struct stat sb;
    sync_names cols = {0}, types = {0};
    knut_buf value = KNUT_BUF_INIT;
    if (stat(f->path, &sb) != 0 && errno == ENOENT)
        return knut_error_set(err, KNUT_ENOTFOUND, "vanished while being read");
    knut_duck_error_trim(err);
    const char *csv = err ? strstr(err->message, "CSV Error on Line: ") : NULL;
    if (csv && f->format == KNUT_SYNC_FORMAT_CSV) {
        /* the strict reader's: the line, and what is wrong with it (the
         * last part; the line's own text, quoted before it, is left out) */
        long long line = strtoll(csv + strlen("CSV Error on Line: "), NULL, 10);
        const char *why = strrchr(csv, ';');
        char reason[256];
        snprintf(reason, sizeof reason, "%.200s", why ? why + 1 + (why[1] == ' ') : csv);
        return knut_error_set(err, KNUT_EINVAL, "line %lld: %s (a table with columns: reads "
                              "its CSV files strictly)", line, reason);
    }
    /* a value that does not cast: which row, which column (on the failure
     * path only: one scan per declared column until one is found) */
    if (!err || (err->detail != KNUT_DUCK_ERR_CONVERSION &&
                 err->detail != KNUT_DUCK_ERR_INVALID_INPUT) ||
        file_columns(c, f, &cols, &types, NULL) != KNUT_OK)
        return st;
    for (size_t i = 0; i < t->n_columns; i++) {
        const char *name = names_find(&cols, t->columns[i].name), *type = t->columns[i].type;
        const char *src = name ? source_type(&cols, &types, name, type) : NULL;
        int64_t row = 0;
        knut_buf_clear(&value);
        if (!name || first_bad(c, f, &cols, name, type, src, &row, &value, NULL) != KNUT_OK ||
            row == 0 || knut_buf_check(&value, NULL) != KNUT_OK)
            continue;
        const knut_conf *n = CONF(t->columns[i].node);
        st = knut_error_set(err, KNUT_EINVAL,
                            "row %lld, column '%s': '%s' does not convert to %s%s (declared at "
                            "%s:%d:%d)",
                            (long long)row, t->columns[i].name, value.data ? value.data : "",
                            type, src ? " without loss" : "", knut_conf_file(n),
                            knut_conf_line(n), knut_conf_col(n));
        break;
    }
    knut_buf_reset(&value);
    knut_sync__names_reset(&cols);
    knut_sync__names_reset(&types);
    return st;
}

