/*
 * Sources of `knut gar import`: the SQL relation a table or query becomes
 * (file names as quoted literals, read_csv options checked to be plain
 * names when the config was loaded), its columns as DuckDB hands them to
 * Arrow, GraphAr types inferred from those, and the names key columns
 * travel under to the writer.
 */
#include "import_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define FAIL knut_graphar__fail

static knut_status oom(knut_error *err)
{
    return knut_error_set(err, KNUT_ENOMEM, "import: out of memory");
}

/* A read_csv option value: booleans and integers bare, the rest quoted.
 * The source becomes SQL text the writer embeds in its own statements, so
 * option values and file names cannot be parameters here: literals. */
static void csv_value(knut_buf *b, const char *v)
{
    static const char *const words[] = {"true", "false", "yes", "no", "on", "off"};
    for (size_t i = 0; i < 6; i++)
        if (strcasecmp(v, words[i]) == 0) {
            knut_buf_puts(b, i % 2 == 0 ? "true" : "false");
            return;
        }
    int digits = *v != '\0';
    for (const char *c = v; *c; c++)
        digits &= *c >= '0' && *c <= '9';
    if (digits && strlen(v) < 18)
        knut_buf_puts(b, v);
    else
        knut_duck_literal(b, v, strlen(v));
}

void knut_graphar__import_source_sql(const imp_source *s, knut_buf *b)
{
    if (s->query) {
        knut_graphar__write_sql_source(b, s->query, NULL);
        return;
    }
    knut_buf_puts(b, s->csv ? "read_csv([" : "read_parquet([");
    for (size_t i = 0; i < s->n_paths; i++) {
        if (i)
            knut_buf_puts(b, ", ");
        knut_duck_literal(b, s->paths[i], strlen(s->paths[i]));
    }
    knut_buf_puts(b, "]");
    for (size_t i = 0; s->csv_opts && i < knut_conf_len(s->csv_opts); i++) {
        /* Names were checked to be plain identifiers when loading. */
        knut_buf_printf(b, ", %s = ", knut_conf_key_at(s->csv_opts, i));
        csv_value(b, knut_conf_str(knut_conf_at(s->csv_opts, i)));
    }
    knut_buf_puts(b, ")");
}

void knut_graphar__import_source_name(const imp_source *s, char *out, size_t cap)
{
    if (s->query)
        snprintf(out, cap, "query at %s:%d", knut_conf_file(s->node), knut_conf_line(s->node));
    else if (s->n_paths > 1)
        snprintf(out, cap, "%s (and %zu more)", s->paths[0], s->n_paths - 1);
    else
        snprintf(out, cap, "%s", s->paths[0]);
}

void knut_graphar__import_scols_free(scol *c, size_t n)
{
    for (size_t i = 0; c && i < n; i++)
        free(c[i].name);
    free(c);
}

knut_status knut_graphar__import_describe(knut_duck_conn *conn, const char *rel, const char *name,
                                          scol **out, size_t *n_out, knut_error *err)
{
    *out = NULL;
    *n_out = 0;
    knut_buf sql = KNUT_BUF_INIT;
    knut_buf_printf(&sql, "SELECT * FROM %s AS s LIMIT 0", rel);
    gar_rows r;
    memset(&r, 0, sizeof r);
    knut_status st = knut_buf_check(&sql, err);
    if (!st)
        st = knut_graphar__write_rows_open(&r, conn, sql.data, err);
    knut_buf_reset(&sql);
    if (st) {
        knut_duck_error_reading(err); /* as sync says it of the same file */
        knut_error_prefix(err, "reading %s: ", name);
        return st;
    }
    int64_t n = r.schema.n_children;
    scol *c = calloc((size_t)n + 1, sizeof *c);
    if (!c)
        st = oom(err);
    for (int64_t i = 0; !st && i < n; i++, (*n_out)++) {
        const struct ArrowSchema *ch = r.schema.children[i];
        if (!(c[i].name = strdup(ch->name ? ch->name : ""))) {
            st = oom(err);
            break;
        }
        snprintf(c[i].fmt, sizeof c[i].fmt, "%s", ch->format);
        if ((strcmp(ch->format, "+l") == 0 || strcmp(ch->format, "+L") == 0) &&
            ch->n_children == 1)
            snprintf(c[i].elem, sizeof c[i].elem, "%s", ch->children[0]->format);
    }
    knut_graphar__write_rows_close(&r);
    if (st)
        knut_graphar__import_scols_free(c, *n_out);
    else
        *out = c;
    return st;
}

const scol *knut_graphar__import_find_col(const scol *c, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(c[i].name, name) == 0)
            return &c[i];
    return NULL;
}

static int clash_with_keys(char *const *taken, size_t n, const char *col)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(taken[i], col) == 0)
            return 1;
    return 0;
}

/* The property called name in gs, or NULL. */
static const imp_prop *prop_named(const imp_group *gs, size_t ng, const char *name)
{
    for (size_t g = 0; g < ng; g++)
        for (size_t k = 0; k < gs[g].n_props; k++)
            if (strcmp(gs[g].props[k].name, name) == 0)
                return &gs[g].props[k];
    return NULL;
}

/*
 * Projects key column col for the writer and returns the name it travels
 * under (malloc'ed): the column's own name, so the writer's messages name
 * it, unless a property or an earlier key already has that name; a
 * property that is this very column is shared.
 */
char *knut_graphar__import_key_alias(knut_buf *sel, const imp_group *gs, size_t ng,
                                     char *const *taken, size_t n_taken, const char *col,
                                     const char *fallback, size_t k)
{
    const imp_prop *p = prop_named(gs, ng, col);
    int key_taken = clash_with_keys(taken, n_taken, col);
    char *alias = malloc(strlen(col) + strlen(fallback) + 24);
    if (!alias)
        return NULL;
    if (p && strcmp(p->column, col) == 0 && !p->delimiter && !key_taken)
        return strcpy(alias, col); /* the property's column is the key */
    if (p || key_taken)
        sprintf(alias, "%s%zu", fallback, k);
    else
        strcpy(alias, col);
    knut_buf_puts(sel, ", s.");
    knut_duck_ident(sel, col);
    knut_buf_puts(sel, " AS ");
    knut_duck_ident(sel, alias);
    return alias;
}

/* GraphAr scalar type of an Arrow format, or NULL. */
static const char *scalar_of(const char *f)
{
    if (strcmp(f, "b") == 0)
        return "bool";
    if (strchr("csiCS", f[0]) && f[1] == '\0')
        return "int32";
    if ((f[0] == 'l' || f[0] == 'I' || f[0] == 'L') && f[1] == '\0')
        return "int64"; /* uint64 above 2^63 fails the cast, naming the row */
    if ((f[0] == 'e' || f[0] == 'f') && f[1] == '\0')
        return "float";
    if ((f[0] == 'g' && f[1] == '\0') || strncmp(f, "d:", 2) == 0)
        return "double";
    if (strcmp(f, "u") == 0 || strcmp(f, "U") == 0 || strcmp(f, "vu") == 0)
        return "string";
    if (strcmp(f, "tdD") == 0 || strcmp(f, "tdm") == 0)
        return "date";
    if (strncmp(f, "ts", 2) == 0)
        return "timestamp";
    return NULL;
}

static int elem_ok(const char *t)
{
    return t && (strcmp(t, "int32") == 0 || strcmp(t, "int64") == 0 || strcmp(t, "float") == 0 ||
                 strcmp(t, "double") == 0 || strcmp(t, "string") == 0);
}

/* The data_type text for property p over source column c, into buf. */
knut_status knut_graphar__import_prop_type(const imp_prop *p, const scol *c, const char *field,
                                           char *buf, size_t cap, knut_error *err)
{
    if (p->type) {
        snprintf(buf, cap, "%s", p->type);
        return KNUT_OK;
    }
    if (p->delimiter) {
        snprintf(buf, cap, "%s", p->card == KNUT_GRAPHAR_CARD_SINGLE ? "list<string>" : "string");
        return KNUT_OK;
    }
    const char *t = c->elem[0] ? scalar_of(c->elem) : scalar_of(c->fmt);
    if (c->elem[0] && elem_ok(t)) {
        if (p->card != KNUT_GRAPHAR_CARD_SINGLE)
            snprintf(buf, cap, "%s", t);
        else
            snprintf(buf, cap, "list<%s>", t);
        return KNUT_OK;
    }
    if (!c->elem[0] && t && p->card == KNUT_GRAPHAR_CARD_SINGLE) {
        snprintf(buf, cap, "%s", t);
        return KNUT_OK;
    }
    return FAIL(err, KNUT_EINVAL, p->node, field,
                "cannot infer a GraphAr type for column '%s' (Arrow format '%s%s%s'); give "
                "'type'",
                c->name, c->fmt, c->elem[0] ? "' of '" : "", c->elem);
}

