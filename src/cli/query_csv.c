/*
 * `knut query` on CSV files: DuckDB's sniffer guesses a CSV's dialect and
 * header, and some guesses lose or rename data without a word: a first
 * line it skips (a title line, or a row with other field counts), no
 * header found (every column named column0, column1, ...: a header of
 * numbers, or all-text data), an empty header name (columnN), a repeated
 * one (id_1), or every line read as one column. Before the query runs,
 * the CSV files it reads (found in DuckDB's own parse tree: paths as
 * tables, read_csv/read_csv_auto calls) are sniffed with sniff_csv, and
 * each such guess is one warning naming the file; a guess the query's own
 * read_csv options settle (header, skip, names, columns, auto_detect) is
 * not one. No regex ever reads the SQL.
 */
#include "query_csv.h"

#include <glob.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "knut/knut.h"

/* The most CSV files of one query looked at, and the most columns read
 * back from one sniff. */
#define CSV_FILES_MAX 64
#define CSV_COLUMNS_MAX 4096

/* read_csv options that settle a guess (bits). */
#define OPT_HEADER 1u /* header, names, column_names, columns */
#define OPT_SKIP 2u   /* skip */
#define OPT_ALL 4u    /* auto_detect = false: nothing is guessed */

typedef struct csv_ref {
    char *path;
    unsigned opts;
} csv_ref;

typedef struct csv_refs {
    csv_ref items[CSV_FILES_MAX];
    size_t n;
} csv_refs;

static int ends_with_ci(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcasecmp(s + a - b, suf) == 0;
}

static int csv_name(const char *s)
{
    return ends_with_ci(s, ".csv") || ends_with_ci(s, ".tsv") || ends_with_ci(s, ".csv.gz") ||
           ends_with_ci(s, ".tsv.gz");
}

static void add_ref(csv_refs *r, const char *path, unsigned opts)
{
    if (strstr(path, "://") || r->n == CSV_FILES_MAX)
        return; /* remote files are not sniffed twice over the network */
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->items[i].path, path) == 0 && r->items[i].opts == opts)
            return;
    if ((r->items[r->n].path = strdup(path)) != NULL)
        r->items[r->n++].opts = opts;
}

static const char *jstr(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* A VARCHAR constant's text, or NULL. */
static const char *constant_text(json_t *e)
{
    const char *cls = jstr(e, "class");
    json_t *v = json_object_get(e, "value");
    if (!cls || strcmp(cls, "CONSTANT") != 0 || json_is_true(json_object_get(v, "is_null")))
        return NULL;
    return jstr(v, "value");
}

/* The options of a read_csv call that settle a guess. */
static unsigned call_opts(json_t *children)
{
    unsigned o = 0;
    size_t i;
    json_t *c;
    json_array_foreach(children, i, c)
    {
        json_t *left = json_object_get(c, "left");
        json_t *names = json_object_get(left, "column_names");
        const char *name = json_is_array(names) ? json_string_value(json_array_get(names, 0))
                                                : NULL;
        if (!name || !jstr(c, "type") || strcmp(jstr(c, "type"), "COMPARE_EQUAL") != 0)
            continue;
        if (!strcasecmp(name, "header") || !strcasecmp(name, "names") ||
            !strcasecmp(name, "column_names") || !strcasecmp(name, "columns") ||
            !strcasecmp(name, "column_types") || !strcasecmp(name, "types"))
            o |= OPT_HEADER;
        else if (!strcasecmp(name, "skip"))
            o |= OPT_SKIP;
        else if (!strcasecmp(name, "auto_detect"))
            o |= OPT_ALL; /* either way the user chose: trust them */
    }
    return o;
}

static void collect(csv_refs *r, json_t *j, int depth)
{
    if (depth > 256)
        return;
    if (json_is_array(j)) {
        size_t i;
        json_t *v;
        json_array_foreach(j, i, v) collect(r, v, depth + 1);
        return;
    }
    if (!json_is_object(j))
        return;
    const char *type = jstr(j, "type"), *cls = jstr(j, "class");
    if (type && strcmp(type, "BASE_TABLE") == 0 && jstr(j, "table_name") &&
        csv_name(jstr(j, "table_name")) && !(jstr(j, "schema_name") && *jstr(j, "schema_name")))
        add_ref(r, jstr(j, "table_name"), 0);
    const char *fn = jstr(j, "function_name");
    if (cls && strcmp(cls, "FUNCTION") == 0 && fn &&
        (!strcasecmp(fn, "read_csv") || !strcasecmp(fn, "read_csv_auto"))) {
        json_t *children = json_object_get(j, "children");
        const char *path = constant_text(json_array_get(children, 0));
        unsigned o = call_opts(children);
        if (path && !(o & OPT_ALL))
            add_ref(r, path, o);
    }
    const char *k;
    json_t *v;
    json_object_foreach(j, k, v) collect(r, v, depth + 1);
}

/* The first column of every row of sql (one text parameter) as text. */
static knut_status rows_text(knut_duck_conn *c, const char *sql, const char *param,
                             char ***out, size_t *n, knut_error *err)
{
    knut_duck_stmt *stmt = NULL;
    struct ArrowArrayStream s = {0};
    *out = NULL;
    *n = 0;
    knut_status st = knut_duck_stmt_prepare_text(&stmt, c, sql, &param, 1, err);
    if (st == KNUT_OK)
        st = knut_duck_stmt_query(stmt, &s, err);
    if (st == KNUT_OK)
        st = knut_arrow_stream_texts(&s, CSV_COLUMNS_MAX, out, n, err);
    knut_arrow_stream_release(&s);
    knut_duck_stmt_free(stmt);
    return st;
}

static void strs_free(char **s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(s[i]);
    free(s);
}

/* 1 when name is "column" and digits: a name DuckDB made up. */
static int made_up(const char *name)
{
    if (strncmp(name, "column", 6) != 0 || !name[6])
        return 0;
    for (const char *p = name + 6; *p; p++)
        if (*p < '0' || *p > '9')
            return 0;
    return 1;
}

/* The renamed repeat of another column: "id_1" next to "id". */
static const char *repeat_of(char **names, size_t n, const char *name)
{
    const char *us = strrchr(name, '_');
    if (!us || !us[1] || strspn(us + 1, "0123456789") != strlen(us + 1))
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (strlen(names[i]) == (size_t)(us - name) && strncmp(names[i], name, us - name) == 0)
            return names[i];
    return NULL;
}

/* The sniffer's guesses about one file that lose or rename data. */
static knut_status sniff_one(knut_duck_conn *c, const char *file, unsigned opts,
                             knut_cli_csv_warn_fn warn, void *ctx, int *found, knut_error *err)
{
    char **info = NULL, **names = NULL;
    size_t ni = 0, nn = 0;
    char msg[640];
    knut_status st = rows_text(c, "SELECT unnest([HasHeader::VARCHAR, SkipRows::VARCHAR]) "
                                  "FROM sniff_csv($1::VARCHAR)",
                               file, &info, &ni, err);
    if (st == KNUT_OK)
        st = rows_text(c, "SELECT unnest(list_transform(Columns, c -> c.name)) "
                          "FROM sniff_csv($1::VARCHAR)",
                       file, &names, &nn, err);
    if (st == KNUT_ENOMEM)
        goto cleanup;
    if (st != KNUT_OK || ni != 2) {
        /* a file DuckDB cannot sniff: the query itself says why */
        knut_error_clear(err);
        st = KNUT_OK;
        goto cleanup;
    }
    long long skip = strtoll(info[1], NULL, 10);
    int header = strcmp(info[0], "true") == 0;
    if (skip > 0 && !(opts & OPT_SKIP)) {
        snprintf(msg, sizeof msg, "DuckDB's sniffer skips its first %lld line%s (never read; "
                 "if that is meant, say read_csv(..., skip = %lld))", skip, skip == 1 ? "" : "s",
                 skip);
        warn(file, msg, ctx);
        (*found)++;
    }
    if (nn == 1 && strchr(names[0], ',')) {
        snprintf(msg, sizeof msg, "read as one column '%.200s': its lines do not all have the "
                 "same number of fields", names[0]);
        warn(file, msg, ctx);
        (*found)++;
    } else if (!header && !(opts & OPT_HEADER)) {
        snprintf(msg, sizeof msg, "no header found: the columns are named column0..column%zu "
                 "and the first line is read as data (pass read_csv(..., header = true) if it "
                 "is a header)", nn ? nn - 1 : 0);
        warn(file, msg, ctx);
        (*found)++;
    } else if (header && !(opts & OPT_HEADER)) {
        for (size_t i = 0; i < nn; i++) {
            const char *rep = repeat_of(names, nn, names[i]);
            if (made_up(names[i]))
                snprintf(msg, sizeof msg, "header name %zu is empty: the column is named '%s'",
                         i + 1, names[i]);
            else if (rep)
                snprintf(msg, sizeof msg, "header name '%.200s' repeats: the column %zu is named "
                         "'%.200s'", rep, i + 1, names[i]);
            else
                continue;
            warn(file, msg, ctx);
            (*found)++;
        }
    }
cleanup:
    strs_free(info, ni);
    strs_free(names, nn);
    return st;
}

knut_status knut_cli_query_csv_check(knut_duck_conn *c, const char *sql, knut_cli_csv_warn_fn warn,
                                     void *ctx, int *found, knut_error *err)
{
    char **tree = NULL;
    size_t nt = 0;
    csv_refs refs = {.n = 0};
    *found = 0;
    knut_status st = rows_text(c, "SELECT json_serialize_sql($1::VARCHAR)::VARCHAR", sql, &tree,
                               &nt, err);
    if (st != KNUT_OK || nt != 1) { /* not for the check to judge the SQL */
        knut_error_clear(err);
        strs_free(tree, nt);
        return KNUT_OK;
    }
    json_t *j = json_loads(tree[0], JSON_DECODE_INT_AS_REAL, NULL);
    if (j && !json_is_true(json_object_get(j, "error")))
        collect(&refs, j, 0);
    json_decref(j);
    strs_free(tree, nt);
    for (size_t i = 0; st == KNUT_OK && i < refs.n; i++) {
        glob_t g;
        /* DuckDB sniffs a glob's first file (in name order) */
        if (glob(refs.items[i].path, 0, NULL, &g) == 0 && g.gl_pathc > 0)
            st = sniff_one(c, g.gl_pathv[0], refs.items[i].opts, warn, ctx, found, err);
        globfree(&g);
    }
    for (size_t i = 0; i < refs.n; i++)
        free(refs.items[i].path);
    return st;
}
