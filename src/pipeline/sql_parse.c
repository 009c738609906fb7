/*
 * The statement parser of pipeline SQL files: splits a file into
 * statements and parses each header (CREATE MATERIALIZED VIEW / STREAMING
 * TABLE / TEMPORARY VIEW with CONSTRAINT ... EXPECT lists, CREATE FLOW ...
 * AS INSERT INTO / AUTO CDC INTO, APPLY CHANGES INTO) into the IR. What
 * follows AS is a query for DuckDB; it is only scanned here, to take
 * STREAM(x) and LIVE. out (blanked in place, so DuckDB's offsets still
 * point into the file) and to find the file sources of streaming flows.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pipeline_int.h"

typedef struct parser {
    knut_pipeline *p;
    knut_pipeline__lex lx;
    knut_pipeline__tok t; /* the current token */
    const char *file;     /* owned by p */
    knut_error *err;
} parser;

static knut_status next(parser *ps)
{
    return knut_pipeline__lex_next(&ps->lx, &ps->t, ps->err);
}

static int is(parser *ps, const char *w)
{
    return knut_pipeline__tok_is(&ps->lx, &ps->t, w);
}

static int punct(parser *ps, char c)
{
    return knut_pipeline__tok_punct(&ps->lx, &ps->t, c);
}

static int at_end(parser *ps)
{
    return ps->t.kind == KNUT_PIPELINE__TOK_END || punct(ps, ';');
}

static knut_pipeline_pos here(parser *ps)
{
    return (knut_pipeline_pos){ps->file, ps->t.line, ps->t.col};
}

static knut_status fail(parser *ps, const char *what)
{
    knut_pipeline_pos pos = here(ps);
    if (ps->t.kind == KNUT_PIPELINE__TOK_END)
        return knut_pipeline__error_at(ps->err, KNUT_EPARSE, pos, "expected %s, found the end",
                                       what);
    int n = ps->t.len > 40 ? 40 : (int)ps->t.len;
    return knut_pipeline__error_at(ps->err, KNUT_EPARSE, pos, "expected %s, found '%.*s'", what, n,
                                   ps->lx.text + ps->t.at);
}

static knut_status nomem(parser *ps)
{
    return knut_error_set(ps->err, KNUT_ENOMEM, "%s: out of memory", ps->file);
}

/* Consumes the word w or fails naming it. */
static knut_status want(parser *ps, const char *w)
{
    if (!is(ps, w))
        return fail(ps, w);
    return next(ps);
}

/* Takes an identifier (a word or "quoted") into *out, unquoted. */
static knut_status ident(parser *ps, const char **out, const char *what)
{
    const char *s = ps->lx.text + ps->t.at;
    if (ps->t.kind == KNUT_PIPELINE__TOK_WORD) {
        *out = knut_pipeline__strndup(ps->p, s, ps->t.len);
    } else if (ps->t.kind == KNUT_PIPELINE__TOK_QIDENT) {
        char *d = knut_pipeline__alloc(ps->p, ps->t.len);
        if (d) {
            size_t k = 0;
            for (size_t i = 1; i + 1 < ps->t.len; i++) {
                d[k++] = s[i];
                if (s[i] == '"')
                    i++; /* "" is one quote */
            }
        }
        *out = d;
    } else {
        return fail(ps, what);
    }
    if (!*out)
        return nomem(ps);
    return next(ps);
}

/* A dataset name: an identifier, optionally behind LIVE. (the legacy
 * prefix); other qualifiers are refused, the spec sets the schema. */
static knut_status dataset_name(parser *ps, const char **out)
{
    knut_pipeline_pos pos = here(ps);
    knut_status st = ident(ps, out, "a dataset name");
    if (st == KNUT_OK && punct(ps, '.')) {
        if (strcasecmp(*out, "live") != 0)
            return knut_pipeline__error_at(ps->err, KNUT_EPARSE, pos,
                                           "dataset names are not qualified (the spec's "
                                           "schema: says where datasets live)");
        if ((st = next(ps)) != KNUT_OK)
            return st;
        st = ident(ps, out, "a dataset name");
    }
    return st;
}

/* Skips a balanced (...) starting at the current paren; *from and *to get the
 * bytes inside. */
static knut_status balanced(parser *ps, size_t *from, size_t *to)
{
    knut_pipeline_pos open = here(ps);
    if (!punct(ps, '('))
        return fail(ps, "'('");
    int depth = 0;
    knut_status st;
    *from = ps->t.at + 1;
    do {
        if (punct(ps, '('))
            depth++;
        else if (punct(ps, ')'))
            depth--;
        if (depth == 0)
            break;
        if ((st = next(ps)) != KNUT_OK)
            return st;
        if (ps->t.kind == KNUT_PIPELINE__TOK_END)
            return knut_pipeline__error_at(ps->err, KNUT_EPARSE, open, "unclosed '('");
    } while (1);
    *to = ps->t.at;
    return next(ps);
}

/* name, name, ... or (name, name, ...). */
static knut_status name_list(parser *ps, const char ***names, size_t *n)
{
    int paren = punct(ps, '(');
    knut_status st;
    if (paren && (st = next(ps)) != KNUT_OK)
        return st;
    for (;;) {
        const char **slot = knut_pipeline__push(ps->p, (void **)names, n, sizeof *slot);
        if (!slot)
            return nomem(ps);
        if ((st = ident(ps, slot, "a column name")) != KNUT_OK)
            return st;
        if (!punct(ps, ','))
            break;
        if ((st = next(ps)) != KNUT_OK)
            return st;
    }
    if (paren) {
        if (!punct(ps, ')'))
            return fail(ps, "',' or ')'");
        return next(ps);
    }
    return KNUT_OK;
}

/* {list | * EXCEPT (list)} */
static knut_status col_spec(parser *ps, knut_pipeline_cols *c)
{
    knut_status st;
    if (punct(ps, '*')) {
        if ((st = next(ps)) != KNUT_OK)
            return st;
        c->except = 1;
        if (!is(ps, "except"))
            return KNUT_OK; /* "*" alone: every column */
        if ((st = next(ps)) != KNUT_OK)
            return st;
    }
    return name_list(ps, &c->names, &c->n);
}

/* CONSTRAINT name EXPECT {(expr) | UNIQUE (cols)} [ON VIOLATION ...] */
static knut_status constraint(parser *ps, knut_pipeline_dataset *ds)
{
    knut_pipeline_pos pos = here(ps);
    knut_status st = want(ps, "constraint");
    if (st != KNUT_OK) {
        if (ps->t.kind == KNUT_PIPELINE__TOK_WORD || ps->t.kind == KNUT_PIPELINE__TOK_QIDENT)
            return knut_pipeline__error_at(ps->err, KNUT_EPARSE, pos,
                                           "column definitions are not supported yet; the list "
                                           "holds CONSTRAINT name EXPECT ... items");
        return st;
    }
    knut_pipeline_expectation *e =
        knut_pipeline__push(ps->p, (void **)&ds->expectations, &ds->nexpectations, sizeof *e);
    if (!e)
        return nomem(ps);
    e->pos = pos;
    if ((st = ident(ps, &e->name, "a constraint name")) != KNUT_OK)
        return st;
    for (size_t i = 0; i + 1 < ds->nexpectations; i++)
        if (strcmp(ds->expectations[i].name, e->name) == 0)
            return knut_pipeline__error_at(ps->err, KNUT_EINVAL, pos,
                                           "dataset '%s' has two expectations named '%s'",
                                           ds->name, e->name);
    if ((st = want(ps, "expect")) != KNUT_OK)
        return st;
    if (is(ps, "unique")) {
        if ((st = next(ps)) != KNUT_OK)
            return st;
        if (!punct(ps, '('))
            return fail(ps, "'(' and the unique columns");
        if ((st = name_list(ps, &e->unique_cols, &e->nunique)) != KNUT_OK)
            return st;
    } else {
        size_t from = 0, to = 0;
        if ((st = balanced(ps, &from, &to)) != KNUT_OK)
            return st;
        e->constraint = knut_pipeline__strndup(ps->p, ps->lx.text + from, to - from);
        if (!e->constraint)
            return nomem(ps);
    }
    e->action = KNUT_PIPELINE_WARN;
    if (!is(ps, "on"))
        return KNUT_OK;
    if ((st = next(ps)) != KNUT_OK || (st = want(ps, "violation")) != KNUT_OK)
        return st;
    if (is(ps, "drop")) {
        e->action = KNUT_PIPELINE_DROP;
        if ((st = next(ps)) != KNUT_OK)
            return st;
        return want(ps, "row");
    }
    if (is(ps, "fail")) {
        e->action = KNUT_PIPELINE_FAIL;
        if ((st = next(ps)) != KNUT_OK)
            return st;
        return want(ps, "update");
    }
    if (is(ps, "quarantine")) {
        e->action = KNUT_PIPELINE_QUARANTINE;
        return next(ps);
    }
    return fail(ps, "DROP ROW, FAIL UPDATE or QUARANTINE");
}

static int is_source_fn(parser *ps)
{
    static const char *const fns[] = {"read_parquet", "parquet_scan", "read_csv", "read_csv_auto",
                                      "read_json", "read_json_auto", "read_ndjson", NULL};
    for (size_t i = 0; fns[i]; i++)
        if (is(ps, fns[i]))
            return 1;
    return 0;
}

/* The query from the current token to the end of the statement: blanks
 * STREAM / LIVE. in a copy, records streamed names and file sources. */
static knut_status query(parser *ps, knut_pipeline_flow *f)
{
    size_t from = ps->t.at, last = ps->t.at;
    f->sql_pos = here(ps);
    if (at_end(ps))
        return fail(ps, "a query");
    /* Find the end first: the copy is made once. */
    knut_pipeline__lex save_lx = ps->lx;
    knut_pipeline__tok save_t = ps->t;
    knut_status st;
    while (!at_end(ps)) {
        last = ps->t.at + ps->t.len;
        if ((st = next(ps)) != KNUT_OK)
            return st;
    }
    char *sql = knut_pipeline__strndup(ps->p, ps->lx.text + from, last - from);
    if (!sql)
        return nomem(ps);
    knut_pipeline__lex end_lx = ps->lx;
    knut_pipeline__tok end_t = ps->t;
    ps->lx = save_lx;
    ps->t = save_t;
    knut_pipeline__tok prev = {KNUT_PIPELINE__TOK_END, 0, 0, 0, 0};
    while (ps->t.at < last) {
        knut_pipeline__tok cur = ps->t;
        size_t rel = cur.at - from;
        int after_from = knut_pipeline__tok_is(&ps->lx, &prev, "from") ||
                         knut_pipeline__tok_is(&ps->lx, &prev, "join");
        if (is(ps, "stream") || is(ps, "live") || is_source_fn(ps)) {
            int stream = is(ps, "stream"), live = is(ps, "live"), src = is_source_fn(ps);
            const char *fn = src ? knut_pipeline__strndup(ps->p, ps->lx.text + cur.at, cur.len)
                                 : NULL;
            if ((st = next(ps)) != KNUT_OK)
                return st;
            if (live && punct(ps, '.')) {
                memset(sql + rel, ' ', ps->t.at + 1 - cur.at);
                prev = ps->t;
                if ((st = next(ps)) != KNUT_OK)
                    return st;
                continue;
            }
            if (src && punct(ps, '(')) {
                if ((st = next(ps)) != KNUT_OK)
                    return st;
                if (ps->t.kind == KNUT_PIPELINE__TOK_STRING && ps->lx.text[ps->t.at] == '\'') {
                    knut_pipeline_source *s = knut_pipeline__push(
                        ps->p, (void **)&f->sources, &f->nsources, sizeof *s);
                    char *pat = knut_pipeline__alloc(ps->p, ps->t.len);
                    if (!s || !pat || !fn)
                        return nomem(ps);
                    size_t k = 0;
                    const char *q = ps->lx.text + ps->t.at;
                    for (size_t i = 1; i + 1 < ps->t.len; i++) {
                        pat[k++] = q[i];
                        if (q[i] == '\'')
                            i++;
                    }
                    s->function = fn;
                    s->pattern = pat;
                    s->at = ps->t.at - from;
                    s->len = ps->t.len;
                }
                continue;
            }
            if (stream && (punct(ps, '(') || (after_from && (ps->t.kind == KNUT_PIPELINE__TOK_WORD ||
                                                             ps->t.kind == KNUT_PIPELINE__TOK_QIDENT)))) {
                int paren = punct(ps, '(');
                memset(sql + rel, ' ', cur.len);
                if (paren) {
                    sql[ps->t.at - from] = ' ';
                    if ((st = next(ps)) != KNUT_OK)
                        return st;
                }
                if (is(ps, "live")) {
                    size_t l = ps->t.at;
                    if ((st = next(ps)) != KNUT_OK)
                        return st;
                    if (!punct(ps, '.'))
                        return fail(ps, "'.' after LIVE");
                    memset(sql + (l - from), ' ', ps->t.at + 1 - l);
                    if ((st = next(ps)) != KNUT_OK)
                        return st;
                }
                const char **slot = knut_pipeline__push(ps->p, (void **)&f->stream_names,
                                                        &f->nstream_names, sizeof *slot);
                if (!slot)
                    return nomem(ps);
                if ((st = ident(ps, slot, "a dataset name after STREAM")) != KNUT_OK)
                    return st;
                if (paren) {
                    if (!punct(ps, ')'))
                        return fail(ps, "')' after STREAM(name");
                    sql[ps->t.at - from] = ' ';
                    if ((st = next(ps)) != KNUT_OK)
                        return st;
                }
            }
            prev = cur;
            continue;
        }
        prev = cur;
        if ((st = next(ps)) != KNUT_OK)
            return st;
    }
    ps->lx = end_lx;
    ps->t = end_t;
    f->sql = sql;
    return KNUT_OK;
}

static knut_status add_flow(parser *ps, const char *name, knut_pipeline_pos pos,
                            knut_pipeline_flow **out)
{
    if (knut_pipeline__flow_find(ps->p, name))
        return knut_pipeline__error_at(ps->err, KNUT_EINVAL, pos,
                                       "a second flow named '%s' (flow names are unique)", name);
    knut_pipeline_flow *f =
        knut_pipeline__push(ps->p, (void **)&ps->p->flows, &ps->p->nflows, sizeof *f);
    if (!f)
        return nomem(ps);
    f->name = name;
    f->pos = pos;
    *out = f;
    return KNUT_OK;
}

/* CREATE ... {MATERIALIZED VIEW | STREAMING TABLE | TEMPORARY VIEW} */
static knut_status dataset(parser *ps, knut_pipeline_dataset_kind kind, knut_pipeline_pos pos)
{
    const char *name;
    knut_pipeline_pos name_pos = here(ps);
    knut_status st = dataset_name(ps, &name);
    if (st != KNUT_OK)
        return st;
    if (knut_pipeline__dataset_get(ps->p, name))
        return knut_pipeline__error_at(ps->err, KNUT_EINVAL, name_pos,
                                       "dataset '%s' is defined twice", name);
    knut_pipeline_dataset *ds =
        knut_pipeline__push(ps->p, (void **)&ps->p->datasets, &ps->p->ndatasets, sizeof *ds);
    if (!ds)
        return nomem(ps);
    ds->name = name;
    ds->kind = kind;
    ds->pos = pos;
    if (punct(ps, '(')) {
        if ((st = next(ps)) != KNUT_OK)
            return st;
        for (;;) {
            if ((st = constraint(ps, ds)) != KNUT_OK)
                return st;
            if (!punct(ps, ','))
                break;
            if ((st = next(ps)) != KNUT_OK)
                return st;
        }
        if (!punct(ps, ')'))
            return fail(ps, "',' or ')'");
        if ((st = next(ps)) != KNUT_OK)
            return st;
    }
    if (is(ps, "comment")) {
        if ((st = next(ps)) != KNUT_OK)
            return st;
        if (ps->t.kind != KNUT_PIPELINE__TOK_STRING)
            return fail(ps, "a comment string");
        ds->comment = knut_pipeline__strndup(ps->p, ps->lx.text + ps->t.at + 1, ps->t.len - 2);
        if (!ds->comment)
            return nomem(ps);
        if ((st = next(ps)) != KNUT_OK)
            return st;
    }
    if (at_end(ps)) {
        if (kind != KNUT_PIPELINE_STREAMING_TABLE)
            return fail(ps, "AS and a query");
        return KNUT_OK; /* a streaming table that flows write into */
    }
    if ((st = want(ps, "as")) != KNUT_OK)
        return st;
    knut_pipeline_flow *f;
    if ((st = add_flow(ps, name, pos, &f)) != KNUT_OK)
        return st;
    f->target = name;
    f->kind = kind == KNUT_PIPELINE_STREAMING_TABLE ? KNUT_PIPELINE_FLOW_STREAMING
                                                    : KNUT_PIPELINE_FLOW_BATCH;
    return query(ps, f);
}

/* An expression up to the next CDC clause keyword (or the end). */
static knut_status cdc_expr(parser *ps, const char **out)
{
    static const char *const stop[] = {"apply", "sequence", "columns", "stored", "track",
                                       "ignore", "keys", NULL};
    size_t from = ps->t.at, to = from;
    int depth = 0;
    knut_status st;
    while (!at_end(ps)) {
        if (depth == 0)
            for (size_t i = 0; stop[i]; i++)
                if (is(ps, stop[i]))
                    goto done;
        if (punct(ps, '('))
            depth++;
        else if (punct(ps, ')'))
            depth--;
        to = ps->t.at + ps->t.len;
        if ((st = next(ps)) != KNUT_OK)
            return st;
    }
done:
    if (to == from)
        return fail(ps, "an expression");
    *out = knut_pipeline__strndup(ps->p, ps->lx.text + from, to - from);
    return *out ? KNUT_OK : nomem(ps);
}

/* INTO target FROM src KEYS (...) ... — after AUTO CDC / APPLY CHANGES. */
static knut_status cdc(parser *ps, knut_pipeline_flow *f)
{
    knut_status st;
    knut_pipeline_cdc *c = knut_pipeline__alloc(ps->p, sizeof *c);
    if (!c)
        return nomem(ps);
    f->cdc = c;
    f->kind = KNUT_PIPELINE_FLOW_CDC;
    c->scd_type = 1;
    if ((st = want(ps, "into")) != KNUT_OK || (st = dataset_name(ps, &f->target)) != KNUT_OK)
        return st;
    if ((st = want(ps, "from")) != KNUT_OK)
        return st;
    if (is(ps, "stream")) {
        c->source_stream = 1;
        if ((st = next(ps)) != KNUT_OK)
            return st;
        int paren = punct(ps, '(');
        if (paren && (st = next(ps)) != KNUT_OK)
            return st;
        if ((st = dataset_name(ps, &c->source)) != KNUT_OK)
            return st;
        if (paren) {
            if (!punct(ps, ')'))
                return fail(ps, "')'");
            if ((st = next(ps)) != KNUT_OK)
                return st;
        }
    } else if ((st = dataset_name(ps, &c->source)) != KNUT_OK) {
        return st;
    }
    while (!at_end(ps)) {
        if (is(ps, "keys")) {
            if ((st = next(ps)) != KNUT_OK || (st = name_list(ps, &c->keys, &c->nkeys)) != KNUT_OK)
                return st;
        } else if (is(ps, "ignore")) {
            if ((st = next(ps)) != KNUT_OK || (st = want(ps, "null")) != KNUT_OK ||
                (st = want(ps, "updates")) != KNUT_OK)
                return st;
            c->ignore_null_updates = 1;
        } else if (is(ps, "apply")) {
            if ((st = next(ps)) != KNUT_OK || (st = want(ps, "as")) != KNUT_OK)
                return st;
            int del = is(ps, "delete");
            if (!del && !is(ps, "truncate"))
                return fail(ps, "DELETE or TRUNCATE");
            if ((st = next(ps)) != KNUT_OK || (st = want(ps, "when")) != KNUT_OK)
                return st;
            if ((st = cdc_expr(ps, del ? &c->delete_when : &c->truncate_when)) != KNUT_OK)
                return st;
        } else if (is(ps, "sequence")) {
            if ((st = next(ps)) != KNUT_OK || (st = want(ps, "by")) != KNUT_OK ||
                (st = cdc_expr(ps, &c->sequence_by)) != KNUT_OK)
                return st;
        } else if (is(ps, "columns")) {
            if ((st = next(ps)) != KNUT_OK || (st = col_spec(ps, &c->columns)) != KNUT_OK)
                return st;
        } else if (is(ps, "stored")) {
            if ((st = next(ps)) != KNUT_OK || (st = want(ps, "as")) != KNUT_OK ||
                (st = want(ps, "scd")) != KNUT_OK || (st = want(ps, "type")) != KNUT_OK)
                return st;
            if (ps->t.kind != KNUT_PIPELINE__TOK_NUMBER || ps->t.len != 1 ||
                (ps->lx.text[ps->t.at] != '1' && ps->lx.text[ps->t.at] != '2'))
                return fail(ps, "SCD TYPE 1 or 2");
            c->scd_type = ps->lx.text[ps->t.at] - '0';
            if ((st = next(ps)) != KNUT_OK)
                return st;
        } else if (is(ps, "track")) {
            knut_pipeline_pos pos = here(ps);
            if ((st = next(ps)) != KNUT_OK || (st = want(ps, "history")) != KNUT_OK ||
                (st = want(ps, "on")) != KNUT_OK || (st = col_spec(ps, &c->track_history)) != KNUT_OK)
                return st;
            if (c->scd_type != 2)
                return knut_pipeline__error_at(ps->err, KNUT_EPARSE, pos,
                                               "TRACK HISTORY ON needs STORED AS SCD TYPE 2 "
                                               "before it");
        } else {
            return fail(ps, "a CDC clause (KEYS, IGNORE NULL UPDATES, APPLY AS, SEQUENCE BY, "
                            "COLUMNS, STORED AS, TRACK HISTORY ON)");
        }
    }
    if (c->nkeys == 0)
        return knut_pipeline__error_at(ps->err, KNUT_EPARSE, f->pos, "flow '%s': CDC needs KEYS",
                                       f->name);
    if (!c->sequence_by)
        return knut_pipeline__error_at(ps->err, KNUT_EPARSE, f->pos,
                                       "flow '%s': CDC needs SEQUENCE BY", f->name);
    return KNUT_OK;
}

/* CREATE FLOW name [COMMENT '...'] AS {INSERT INTO [ONCE] t [BY NAME] q | AUTO CDC ...} */
static knut_status flow(parser *ps, knut_pipeline_pos pos)
{
    const char *name;
    knut_status st = ident(ps, &name, "a flow name");
    knut_pipeline_flow *f;
    if (st != KNUT_OK || (st = add_flow(ps, name, pos, &f)) != KNUT_OK)
        return st;
    if (is(ps, "comment")) {
        if ((st = next(ps)) != KNUT_OK)
            return st;
        if (ps->t.kind != KNUT_PIPELINE__TOK_STRING)
            return fail(ps, "a comment string");
        if ((st = next(ps)) != KNUT_OK)
            return st;
    }
    if ((st = want(ps, "as")) != KNUT_OK)
        return st;
    if (is(ps, "auto")) {
        if ((st = next(ps)) != KNUT_OK || (st = want(ps, "cdc")) != KNUT_OK)
            return st;
        return cdc(ps, f);
    }
    if ((st = want(ps, "insert")) != KNUT_OK)
        return st;
    f->kind = KNUT_PIPELINE_FLOW_STREAMING;
    if (is(ps, "once")) {
        f->kind = KNUT_PIPELINE_FLOW_APPEND_ONCE;
        if ((st = next(ps)) != KNUT_OK)
            return st;
    }
    if ((st = want(ps, "into")) != KNUT_OK)
        return st;
    if (is(ps, "once")) {
        f->kind = KNUT_PIPELINE_FLOW_APPEND_ONCE;
        if ((st = next(ps)) != KNUT_OK)
            return st;
    }
    if ((st = dataset_name(ps, &f->target)) != KNUT_OK)
        return st;
    if (is(ps, "by")) {
        if ((st = next(ps)) != KNUT_OK || (st = want(ps, "name")) != KNUT_OK)
            return st;
    }
    return query(ps, f);
}

static knut_status statement(parser *ps)
{
    knut_pipeline_pos pos = here(ps);
    knut_status st;
    if (is(ps, "apply")) {
        if ((st = next(ps)) != KNUT_OK || (st = want(ps, "changes")) != KNUT_OK)
            return st;
        /* The legacy form names no flow: it is named after its target. */
        knut_pipeline__lex save_lx = ps->lx;
        knut_pipeline__tok save_t = ps->t;
        const char *target;
        if ((st = want(ps, "into")) != KNUT_OK || (st = dataset_name(ps, &target)) != KNUT_OK)
            return st;
        ps->lx = save_lx;
        ps->t = save_t;
        knut_pipeline_flow *f;
        if ((st = add_flow(ps, target, pos, &f)) != KNUT_OK)
            return st;
        return cdc(ps, f);
    }
    if ((st = want(ps, "create")) != KNUT_OK)
        return fail(ps, "CREATE or APPLY CHANGES (a pipeline file holds only dataset and "
                        "flow definitions)");
    if (is(ps, "or")) {
        if ((st = next(ps)) != KNUT_OK)
            return st;
        if (!is(ps, "refresh") && !is(ps, "replace"))
            return fail(ps, "REFRESH or REPLACE");
        if ((st = next(ps)) != KNUT_OK)
            return st;
    }
    if (is(ps, "materialized")) {
        if ((st = next(ps)) != KNUT_OK || (st = want(ps, "view")) != KNUT_OK)
            return st;
        return dataset(ps, KNUT_PIPELINE_MATERIALIZED_VIEW, pos);
    }
    if (is(ps, "streaming") || is(ps, "incremental")) {
        if ((st = next(ps)) != KNUT_OK)
            return st;
        if (is(ps, "live") && (st = next(ps)) != KNUT_OK)
            return st;
        if ((st = want(ps, "table")) != KNUT_OK)
            return st;
        return dataset(ps, KNUT_PIPELINE_STREAMING_TABLE, pos);
    }
    if (is(ps, "live")) { /* legacy CREATE LIVE TABLE: a materialized view */
        if ((st = next(ps)) != KNUT_OK || (st = want(ps, "table")) != KNUT_OK)
            return st;
        return dataset(ps, KNUT_PIPELINE_MATERIALIZED_VIEW, pos);
    }
    if (is(ps, "temporary") || is(ps, "temp")) {
        if ((st = next(ps)) != KNUT_OK)
            return st;
        if (is(ps, "live") && (st = next(ps)) != KNUT_OK)
            return st;
        if ((st = want(ps, "view")) != KNUT_OK)
            return st;
        return dataset(ps, KNUT_PIPELINE_TEMPORARY_VIEW, pos);
    }
    if (is(ps, "flow")) {
        if ((st = next(ps)) != KNUT_OK)
            return st;
        return flow(ps, pos);
    }
    return fail(ps, "MATERIALIZED VIEW, STREAMING TABLE, TEMPORARY VIEW or FLOW");
}

knut_status knut_pipeline_parse_sql(knut_pipeline *p, const char *text, size_t len,
                                    const char *file, knut_error *err)
{
    KNUT_ASSERT_ARG(err, p != NULL && (text != NULL || len == 0));
    parser ps = {.p = p, .err = err};
    ps.file = knut_pipeline__strdup(p, file ? file : "(sql)");
    if (!ps.file)
        return knut_error_set(err, KNUT_ENOMEM, "pipeline: out of memory");
    if (len > KNUT_PIPELINE_SQL_MAX_BYTES)
        return knut_error_set_at(err, KNUT_ETOOBIG, ps.file, 0, 0,
                                 "over the %zu-byte limit of a pipeline SQL file",
                                 KNUT_PIPELINE_SQL_MAX_BYTES);
    knut_pipeline__lex_init(&ps.lx, text, len, ps.file);
    knut_status st = next(&ps);
    size_t count = 0;
    while (st == KNUT_OK && ps.t.kind != KNUT_PIPELINE__TOK_END) {
        if (punct(&ps, ';')) {
            st = next(&ps);
            continue;
        }
        if (++count > KNUT_PIPELINE_MAX_STATEMENTS)
            return knut_error_set_at(err, KNUT_ETOOBIG, ps.file, ps.t.line, ps.t.col,
                                     "more than %d statements", KNUT_PIPELINE_MAX_STATEMENTS);
        if ((st = statement(&ps)) != KNUT_OK)
            return st;
        if (!at_end(&ps))
            return fail(&ps, "';' or the end of the statement");
    }
    return st;
}
