/*
 * Chunk files as DuckDB table expressions. Before a chunk is read, each of
 * its files is probed: Parquet through DuckDB (the schema of a LIMIT 0
 * scan), CSV and JSON Lines by reading their first line here. The probe
 * says which columns the file really has (the vertex index column may be
 * absent) and, for CSV, the column order and delimiter, because DuckDB's
 * read_csv must be given every column's type up front: types come from
 * the info, never from DuckDB's sniffer. Paths are always bound as
 * prepared-statement parameters (string literals in the view SQL of
 * read_sql.c, which DuckDB keeps as text); names become quoted identifiers or
 * string literals with their quotes doubled.
 */
#include "read_int.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The longest first line read from a CSV or JSON chunk: a header of a few
 * thousand columns, far below anything a real chunk has. */
#define PROBE_LINE_MAX ((size_t)1 << 20)

void knut_graphar__probe_reset(knut_graphar__probe *pr)
{
    if (!pr)
        return;
    knut_graphar__strv_free(pr->names, pr->n_names);
    free(pr->types);
    memset(pr, 0, sizeof *pr);
}

int64_t knut_graphar__probe_find(const knut_graphar__probe *pr, const char *name)
{
    for (size_t i = 0; i < pr->n_names; i++)
        if (strcmp(pr->names[i], name) == 0)
            return (int64_t)i;
    return -1;
}

static knut_status probe_add(knut_graphar__probe *pr, const char *name, size_t len,
                             knut_error *err)
{
    char **slot = knut_graphar__push((void **)&pr->names, &pr->n_names, sizeof *slot);
    if (slot)
        *slot = strndup(name, len);
    if (!slot || !*slot)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory reading a header");
    pr->n_names++;
    return KNUT_OK;
}

/* Reads the first line of path (without the newline and a UTF-8 BOM) into
 * line (a fresh buffer), capped at PROBE_LINE_MAX. */
static knut_status first_line(const char *path, knut_buf *line, knut_error *err)
{
    knut_buf_init(line, PROBE_LINE_MAX);
    FILE *f = fopen(path, "rb");
    if (!f)
        return knut_error_set(err, errno == ENOENT ? KNUT_ENOTFOUND : KNUT_EIO, "%s: %s", path,
                              strerror(errno));
    knut_status st = KNUT_OK;
    int c;
    while ((c = fgetc(f)) != EOF && c != '\n') {
        if (line->len >= PROBE_LINE_MAX) {
            st = knut_error_set(err, KNUT_ETOOBIG, "%s: first line longer than %zu bytes",
                                path, PROBE_LINE_MAX);
            break;
        }
        knut_buf_putc(line, (char)c);
    }
    if (st == KNUT_OK && ferror(f))
        st = knut_error_set(err, KNUT_EIO, "%s: read error", path);
    fclose(f);
    if (st == KNUT_OK && (st = knut_buf_check(line, err)) == KNUT_OK) {
        if (line->len > 0 && line->data[line->len - 1] == '\r')
            line->data[--line->len] = '\0';
        if (line->len >= 3 && memcmp(line->data, "\xEF\xBB\xBF", 3) == 0) {
            memmove(line->data, line->data + 3, line->len - 2);
            line->len -= 3;
        }
    }
    return st;
}

/* Splits a CSV header on delim with '"' quoting ("" inside quotes is a
 * quote). Fills pr->names when pr is non-NULL; returns how many fields
 * match a wanted name. */
static knut_status split_header(const char *line, char delim, const char *const *want,
                                size_t n_want, knut_graphar__probe *pr, int *matches,
                                knut_error *err)
{
    knut_buf field = KNUT_BUF_INIT;
    knut_status st = KNUT_OK;
    const char *s = line;
    *matches = 0;
    for (;;) {
        knut_buf_clear(&field);
        knut_buf_puts(&field, "");
        if (*s == '"') {
            for (s++; *s; s++) {
                if (*s == '"' && s[1] == '"')
                    knut_buf_putc(&field, *s++);
                else if (*s == '"')
                    break;
                else
                    knut_buf_putc(&field, *s);
            }
            if (*s == '"')
                s++;
            while (*s && *s != delim)
                s++;
        } else {
            while (*s && *s != delim)
                knut_buf_putc(&field, *s++);
        }
        if ((st = knut_buf_check(&field, err)) != KNUT_OK)
            break;
        for (size_t i = 0; i < n_want; i++)
            if (strcmp(want[i], field.data) == 0) {
                (*matches)++;
                break;
            }
        if (pr && (st = probe_add(pr, field.data, field.len, err)) != KNUT_OK)
            break;
        if (*s != delim)
            break;
        s++;
    }
    knut_buf_reset(&field);
    return st;
}

static knut_status probe_csv(const char *path, const char *const *want, size_t n_want,
                             knut_graphar__probe *out, knut_error *err)
{
    knut_buf line = KNUT_BUF_INIT;
    knut_status st = first_line(path, &line, err);
    if (st != KNUT_OK)
        goto cleanup;
    if (line.len == 0) {
        st = knut_error_set(err, KNUT_EPARSE, "%s: empty CSV chunk (no header row)", path);
        goto cleanup;
    }
    /* GraphAr CSV is ','-separated; other delimiters are taken when the
     * header only makes sense split on them. */
    static const char delims[] = {',', '|', ';', '\t'};
    int best = -1;
    char delim = ',';
    for (size_t i = 0; i < sizeof delims; i++) {
        int m = 0;
        if ((st = split_header(line.data, delims[i], want, n_want, NULL, &m, err)) != KNUT_OK)
            goto cleanup;
        if (m > best) {
            best = m;
            delim = delims[i];
        }
    }
    out->delim = delim;
    int m = 0;
    st = split_header(line.data, delim, want, n_want, out, &m, err);
cleanup:
    knut_buf_reset(&line);
    return st;
}

static knut_status probe_json(const char *path, knut_graphar__probe *out, knut_error *err)
{
    knut_buf line = KNUT_BUF_INIT;
    knut_status st = first_line(path, &line, err);
    if (st != KNUT_OK || line.len == 0)
        goto cleanup; /* an empty file has no rows and no columns */
    json_error_t jerr;
    json_t *obj = json_loadb(line.data, line.len, 0, &jerr);
    if (!obj || !json_is_object(obj)) {
        st = knut_error_set(err, KNUT_EPARSE, "%s:1: not a JSON Lines object%s%s", path,
                            obj ? "" : ": ", obj ? "" : jerr.text);
        json_decref(obj);
        goto cleanup;
    }
    const char *key;
    json_t *val;
    json_object_foreach(obj, key, val) {
        if ((st = probe_add(out, key, strlen(key), err)) != KNUT_OK)
            break;
    }
    json_decref(obj);
cleanup:
    knut_buf_reset(&line);
    return st;
}

static knut_status probe_parquet(knut_duck_conn *conn, const char *path,
                                 knut_graphar__probe *out, knut_error *err)
{
    knut_duck_stmt *stmt = NULL;
    struct ArrowArrayStream rows = {0};
    struct ArrowSchema schema = {0};
    knut_status st = knut_duck_stmt_prepare(&stmt, conn,
                                            "SELECT * FROM read_parquet($1) LIMIT 0", err);
    if (st == KNUT_OK)
        st = knut_duck_stmt_bind_text(stmt, 1, path, strlen(path), err);
    if (st == KNUT_OK)
        st = knut_duck_stmt_query(stmt, &rows, err);
    if (st == KNUT_OK) {
        int rc = rows.get_schema(&rows, &schema);
        if (rc != 0)
            st = knut_arrow_stream_error(&rows, rc, "reading the schema", err);
    }
    if (st != KNUT_OK) {
        knut_error_prefix(err, "%s: ", path);
        goto cleanup;
    }
    if (schema.n_children > 0 &&
        !(out->types = calloc((size_t)schema.n_children, sizeof *out->types))) {
        st = knut_error_set(err, KNUT_ENOMEM, "out of memory probing %s", path);
        goto cleanup;
    }
    for (int64_t i = 0; st == KNUT_OK && i < schema.n_children; i++) {
        const struct ArrowSchema *c = schema.children[i];
        st = probe_add(out, c->name ? c->name : "", c->name ? strlen(c->name) : 0, err);
        /* A type this Arrow module cannot name is simply "not a timestamp". */
        if (st == KNUT_OK && knut_arrow_format_parse(c->format, &out->types[i], NULL) != KNUT_OK)
            knut_arrow_type_info_init(&out->types[i], KNUT_ARROW_NA);
    }
cleanup:
    knut_arrow_schema_release(&schema);
    knut_arrow_stream_release(&rows);
    knut_duck_stmt_free(stmt);
    return st;
}

knut_status knut_graphar__probe_file(knut_duck_conn *conn, const char *path,
                                     knut_graphar_file_type ft, const char *const *want,
                                     size_t n_want, knut_graphar__probe *out, knut_error *err)
{
    memset(out, 0, sizeof *out);
    knut_status st;
    switch (ft) {
    case KNUT_GRAPHAR_FILE_PARQUET: st = probe_parquet(conn, path, out, err); break;
    case KNUT_GRAPHAR_FILE_CSV: st = probe_csv(path, want, n_want, out, err); break;
    case KNUT_GRAPHAR_FILE_JSON: st = probe_json(path, out, err); break;
    default:
        st = knut_error_set(err, KNUT_EUNSUPPORTED,
                            "%s: ORC chunks are not supported (DuckDB has no ORC reader)", path);
        break;
    }
    if (st != KNUT_OK)
        knut_graphar__probe_reset(out);
    return st;
}

/* ---- SQL ---------------------------------------------------------------- */

/* The plan column of source src named name, or NULL. */
static const knut_graphar__col *find_col(const knut_graphar__plan *p, size_t src,
                                         const char *name)
{
    for (size_t i = 0; i < p->n_cols; i++)
        if (p->cols[i].kind != KNUT_GRAPHAR__COL_VINDEX && p->cols[i].src == src &&
            strcmp(p->cols[i].name, name) == 0)
            return &p->cols[i];
    return NULL;
}

/* The type CSV / JSON text of column c is read as before the SELECT casts
 * it: text wherever DuckDB's parser would be less exact than our cast. */
static const char *text_decl(const knut_graphar__col *c, knut_graphar_file_type ft,
                             char *buf, size_t cap)
{
    if (!c)
        return "VARCHAR";
    if (c->kind == KNUT_GRAPHAR__COL_ID || c->kind == KNUT_GRAPHAR__COL_VINDEX)
        return "BIGINT";
    if (c->kind == KNUT_GRAPHAR__COL_LABEL)
        return "BOOLEAN";
    const knut_graphar_property *p = c->prop;
    knut_graphar_type t = knut_graphar__prop_scalar(p);
    if (knut_graphar__prop_is_list(p)) {
        if (ft == KNUT_GRAPHAR_FILE_CSV) /* "[1, 2]" text, cast later */
            return "VARCHAR";
        snprintf(buf, cap, "%s[]", t == KNUT_GRAPHAR_TYPE_TIMESTAMP ? "VARCHAR" : knut_graphar__sql_scalar(t));
        return buf;
    }
    return t == KNUT_GRAPHAR_TYPE_TIMESTAMP ? "VARCHAR" : knut_graphar__sql_scalar(t);
}

/* The reader's named arguments (columns, delim, force_not_null) must be
 * constants when DuckDB binds the table function, so names and types go in
 * as literals; the file path itself stays a parameter. */
static void put_decl(knut_buf *sql, int *first, const char *name, const char *type)
{
    knut_buf_puts(sql, *first ? "" : ", ");
    knut_duck_literal(sql, name, strlen(name));
    knut_buf_puts(sql, ": ");
    knut_duck_literal(sql, type, strlen(type));
    *first = 0;
}

knut_status knut_graphar__sql_source(knut_buf *sql, const knut_graphar__plan *p, size_t src,
                                     const knut_graphar__probe *pr, const char *files,
                                     knut_error *err)
{
    knut_graphar_file_type ft = p->srcs[src].ft;
    char tbuf[32];
    int first = 1;
    if (ft == KNUT_GRAPHAR_FILE_PARQUET) {
        knut_buf_printf(sql, "read_parquet(%s)", files);
    } else if (ft == KNUT_GRAPHAR_FILE_CSV) {
        /* Every header column, in file order, with its declared type. */
        knut_buf_printf(sql, "read_csv(%s, header = true, auto_detect = false, delim = ",
                        files);
        char d[2] = {pr->delim ? pr->delim : ',', 0};
        knut_duck_literal(sql, d, strlen(d));
        knut_buf_puts(sql, ", quote = '\"', escape = '\"', allow_quoted_nulls = false, "
                           "columns = {");
        for (size_t i = 0; i < pr->n_names; i++) {
            const knut_graphar__col *c = find_col(p, src, pr->names[i]);
            if (!c && strcmp(pr->names[i], KNUT_GRAPHAR__VINDEX) == 0)
                put_decl(sql, &first, pr->names[i], "BIGINT");
            else
                put_decl(sql, &first, pr->names[i], text_decl(c, ft, tbuf, sizeof tbuf));
        }
        /* Strings are never null in the reference's CSV reader: "" stays "". */
        knut_buf_puts(sql, "}");
        first = 1;
        for (size_t i = 0; i < pr->n_names; i++) {
            const knut_graphar__col *c = find_col(p, src, pr->names[i]);
            if (!c || c->kind != KNUT_GRAPHAR__COL_PROP || knut_graphar__prop_is_list(c->prop) ||
                c->prop->type != KNUT_GRAPHAR_TYPE_STRING)
                continue;
            knut_buf_puts(sql, first ? ", force_not_null = [" : ", ");
            knut_duck_literal(sql, pr->names[i], strlen(pr->names[i]));
            first = 0;
        }
        knut_buf_puts(sql, first ? ")" : "])");
    } else if (ft == KNUT_GRAPHAR_FILE_JSON) {
        /* Keys are matched by name; a key missing from a row is null. */
        knut_buf_printf(sql, "read_json(%s, format = 'newline_delimited', columns = {", files);
        for (size_t i = 0; i < p->n_cols; i++)
            if (p->cols[i].kind != KNUT_GRAPHAR__COL_VINDEX && p->cols[i].src == src)
                put_decl(sql, &first, p->cols[i].name,
                         text_decl(&p->cols[i], ft, tbuf, sizeof tbuf));
        if (p->srcs[src].kind == KNUT_GRAPHAR__SRC_VGROUP &&
            knut_graphar__probe_find(pr, KNUT_GRAPHAR__VINDEX) >= 0)
            put_decl(sql, &first, KNUT_GRAPHAR__VINDEX, "BIGINT");
        knut_buf_puts(sql, "})");
    } else {
        return knut_error_set(err, KNUT_EUNSUPPORTED, "%s chunks are not supported",
                              knut_graphar_file_type_name(ft));
    }
    return knut_buf_check(sql, err);
}

/* Text holding a timestamp: integers are ms since the epoch; a UTC offset
 * or Z makes it an instant (converted to UTC, as Arrow's parser does);
 * otherwise it is taken as written. */
static void timestamp_from_text(knut_buf *sql, const char *x)
{
    knut_buf_printf(sql,
                    "CASE WHEN regexp_full_match(%s, '\\s*-?[0-9]+\\s*') THEN CAST(%s AS BIGINT) "
                    "WHEN regexp_matches(%s, '(Z|[+-][0-9][0-9]:?[0-9][0-9])\\s*$') "
                    "THEN epoch_ms(CAST(%s AS TIMESTAMPTZ)) "
                    "ELSE epoch_ms(CAST(%s AS TIMESTAMP)) END",
                    x, x, x, x, x);
}

knut_status knut_graphar__sql_column(knut_buf *sql, const knut_graphar__col *c,
                                     const knut_graphar_file_type ft,
                                     const knut_graphar__probe *pr, knut_error *err)
{
    knut_buf x = KNUT_BUF_INIT;
    knut_buf_printf(&x, "s%zu.", c->src);
    knut_duck_ident(&x, c->name);
    knut_status st = knut_buf_check(&x, err);
    if (st != KNUT_OK)
        goto cleanup;
    switch (c->kind) {
    case KNUT_GRAPHAR__COL_VINDEX:
    case KNUT_GRAPHAR__COL_ID:
        knut_buf_printf(sql, "CAST(%s AS BIGINT)", x.data);
        break;
    case KNUT_GRAPHAR__COL_LABEL:
        knut_buf_printf(sql, "CAST(%s AS BOOLEAN)", x.data);
        break;
    case KNUT_GRAPHAR__COL_PROP: {
        knut_graphar_type t = knut_graphar__prop_scalar(c->prop);
        if (knut_graphar__prop_is_list(c->prop)) {
            knut_buf_printf(sql, "CAST(%s AS %s[])", x.data, knut_graphar__sql_scalar(t));
            break;
        }
        if (t != KNUT_GRAPHAR_TYPE_TIMESTAMP) {
            knut_buf_printf(sql, "CAST(%s AS %s)", x.data, knut_graphar__sql_scalar(t));
            break;
        }
        /* Timestamps leave DuckDB as int64 ms (epoch_ms truncates finer
         * units, where a cast to TIMESTAMP_MS would round) and are labelled
         * timestamp[ms] on the way out. */
        knut_arrow_type t_in = KNUT_ARROW_UTF8; /* CSV and JSON: declared as text */
        if (ft == KNUT_GRAPHAR_FILE_PARQUET && pr->types) {
            int64_t k = knut_graphar__probe_find(pr, c->name);
            t_in = k >= 0 ? pr->types[k].type : KNUT_ARROW_NA;
        }
        switch (t_in) {
        case KNUT_ARROW_TIMESTAMP:
        case KNUT_ARROW_DATE64:
            knut_buf_printf(sql, "epoch_ms(%s)", x.data);
            break;
        case KNUT_ARROW_DATE32:
            knut_buf_printf(sql, "epoch_ms(CAST(%s AS TIMESTAMP))", x.data);
            break;
        case KNUT_ARROW_UTF8:
        case KNUT_ARROW_LARGE_UTF8:
            timestamp_from_text(sql, x.data);
            break;
        default: /* integers are ms since the epoch */
            knut_buf_printf(sql, "CAST(%s AS BIGINT)", x.data);
            break;
        }
        break;
    }
    }
    st = knut_buf_check(sql, err);
cleanup:
    knut_buf_reset(&x);
    return st;
}
