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

#include "sql_int.h"

knut_status knut_pipeline__ps_fail(knut_pipeline__parser *ps, const char *what)
{
    knut_pipeline_pos pos = here(ps);
    if (ps->t.kind == KNUT_PIPELINE__TOK_END)
        return knut_pipeline__error_at(ps->err, KNUT_EPARSE, pos, "expected %s, found the end",
                                       what);
    int n = ps->t.len > 40 ? 40 : (int)ps->t.len;
    return knut_pipeline__error_at(ps->err, KNUT_EPARSE, pos, "expected %s, found '%.*s'", what, n,
                                   ps->lx.text + ps->t.at);
}

knut_status knut_pipeline__ps_nomem(knut_pipeline__parser *ps)
{
    return knut_error_set(ps->err, KNUT_ENOMEM, "%s: out of memory", ps->file);
}

/* Consumes the word w or fails naming it. */
knut_status knut_pipeline__ps_want(knut_pipeline__parser *ps, const char *w)
{
    if (!is(ps, w))
        return knut_pipeline__ps_fail(ps, w);
    return next(ps);
}

/* Takes an identifier (a word or "quoted") into *out, unquoted. */
knut_status knut_pipeline__ps_ident(knut_pipeline__parser *ps, const char **out, const char *what)
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
        return knut_pipeline__ps_fail(ps, what);
    }
    if (!*out)
        return knut_pipeline__ps_nomem(ps);
    return next(ps);
}

/* A dataset name: an identifier, optionally behind LIVE. (the legacy
 * prefix); other qualifiers are refused, the spec sets the schema. */
knut_status knut_pipeline__ps_dataset_name(knut_pipeline__parser *ps, const char **out)
{
    knut_pipeline_pos pos = here(ps);
    knut_status st = knut_pipeline__ps_ident(ps, out, "a dataset name");
    if (st == KNUT_OK && punct(ps, '.')) {
        if (strcasecmp(*out, "live") != 0)
            return knut_pipeline__error_at(ps->err, KNUT_EPARSE, pos,
                                           "dataset names are not qualified (the spec's "
                                           "schema: says where datasets live)");
        if ((st = next(ps)) != KNUT_OK)
            return st;
        st = knut_pipeline__ps_ident(ps, out, "a dataset name");
    }
    return st;
}

/* Skips a balanced (...) starting at the current paren; *from and *to get the
 * bytes inside. */
knut_status knut_pipeline__ps_balanced(knut_pipeline__parser *ps, size_t *from, size_t *to)
{
    knut_pipeline_pos open = here(ps);
    if (!punct(ps, '('))
        return knut_pipeline__ps_fail(ps, "'('");
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

/* CONSTRAINT name EXPECT {(expr) | UNIQUE (cols)} [ON VIOLATION ...] */
static knut_status constraint(knut_pipeline__parser *ps, knut_pipeline_dataset *ds)
{
    knut_pipeline_pos pos = here(ps);
    knut_status st = knut_pipeline__ps_want(ps, "constraint");
    if (st != KNUT_OK) {
        if (ps->t.kind == KNUT_PIPELINE__TOK_WORD || ps->t.kind == KNUT_PIPELINE__TOK_QIDENT)
            return knut_pipeline__error_at(ps->err, KNUT_EPARSE, pos,
                                           "column definitions are not supported yet; the list "
                                           "holds CONSTRAINT name EXPECT ... items");
        return st;
    }
    if (ds->nexpectations >= KNUT_PIPELINE_MAX_EXPECTATIONS)
        return knut_pipeline__error_at(ps->err, KNUT_ETOOBIG, pos,
                                       "dataset '%s' has more than %d expectations", ds->name,
                                       KNUT_PIPELINE_MAX_EXPECTATIONS);
    knut_pipeline_expectation *e =
        knut_pipeline__push(ps->p, (void **)&ds->expectations, &ds->nexpectations, sizeof *e);
    if (!e)
        return knut_pipeline__ps_nomem(ps);
    e->pos = pos;
    if ((st = knut_pipeline__ps_ident(ps, &e->name, "a constraint name")) != KNUT_OK)
        return st;
    for (size_t i = 0; i + 1 < ds->nexpectations; i++)
        if (strcmp(ds->expectations[i].name, e->name) == 0)
            return knut_pipeline__error_at(ps->err, KNUT_EINVAL, pos,
                                           "dataset '%s' has two expectations named '%s'",
                                           ds->name, e->name);
    if ((st = knut_pipeline__ps_want(ps, "expect")) != KNUT_OK)
        return st;
    if (is(ps, "unique")) {
        if ((st = next(ps)) != KNUT_OK)
            return st;
        if (!punct(ps, '('))
            return knut_pipeline__ps_fail(ps, "'(' and the unique columns");
        if ((st = knut_pipeline__ps_name_list(ps, &e->unique_cols, &e->nunique)) != KNUT_OK)
            return st;
    } else {
        size_t from = 0, to = 0;
        if ((st = knut_pipeline__ps_balanced(ps, &from, &to)) != KNUT_OK)
            return st;
        e->constraint = knut_pipeline__strndup(ps->p, ps->lx.text + from, to - from);
        if (!e->constraint)
            return knut_pipeline__ps_nomem(ps);
    }
    e->action = KNUT_PIPELINE_WARN;
    if (!is(ps, "on"))
        return KNUT_OK;
    if ((st = next(ps)) != KNUT_OK || (st = knut_pipeline__ps_want(ps, "violation")) != KNUT_OK)
        return st;
    if (is(ps, "drop")) {
        e->action = KNUT_PIPELINE_DROP;
        if ((st = next(ps)) != KNUT_OK)
            return st;
        return knut_pipeline__ps_want(ps, "row");
    }
    if (is(ps, "fail")) {
        e->action = KNUT_PIPELINE_FAIL;
        if ((st = next(ps)) != KNUT_OK)
            return st;
        return knut_pipeline__ps_want(ps, "update");
    }
    if (is(ps, "quarantine")) {
        e->action = KNUT_PIPELINE_QUARANTINE;
        return next(ps);
    }
    return knut_pipeline__ps_fail(ps, "DROP ROW, FAIL UPDATE or QUARANTINE");
}

static knut_status add_flow(knut_pipeline__parser *ps, const char *name, knut_pipeline_pos pos,
                            knut_pipeline_flow **out)
{
    if (knut_pipeline__flow_find(ps->p, name))
        return knut_pipeline__error_at(ps->err, KNUT_EINVAL, pos,
                                       "a second flow named '%s' (flow names are unique)", name);
    knut_pipeline_flow *f =
        knut_pipeline__push(ps->p, (void **)&ps->p->flows, &ps->p->nflows, sizeof *f);
    if (!f)
        return knut_pipeline__ps_nomem(ps);
    f->name = name;
    f->pos = pos;
    *out = f;
    return KNUT_OK;
}

/* The text of the current string token ('...' with '' as one quote;
 * other forms kept as written), or of a word or number. */
static knut_status text_of(knut_pipeline__parser *ps, const char **out)
{
    const char *q = ps->lx.text + ps->t.at;
    size_t len = ps->t.len;
    if (ps->t.kind == KNUT_PIPELINE__TOK_STRING && q[0] == '\'') {
        char *d = knut_pipeline__alloc(ps->p, len);
        if (!d)
            return knut_pipeline__ps_nomem(ps);
        size_t k = 0;
        for (size_t i = 1; i + 1 < len; i++) {
            d[k++] = q[i];
            if (q[i] == '\'')
                i++;
        }
        *out = d;
        return KNUT_OK;
    }
    *out = knut_pipeline__strndup(ps->p, q, len);
    return *out ? KNUT_OK : knut_pipeline__ps_nomem(ps);
}

/* TBLPROPERTIES (key = value, ...): keys and values are strings, words
 * or numbers; a dotted word key (pipelines.reset.allowed) is one key. */
static knut_status properties(knut_pipeline__parser *ps, knut_pipeline_dataset *ds)
{
    knut_status st;
    if (!punct(ps, '('))
        return knut_pipeline__ps_fail(ps, "'(' and the table properties");
    do {
        if ((st = next(ps)) != KNUT_OK)
            return st;
        knut_pipeline_setting *prop = knut_pipeline__push(ps->p, (void **)&ds->properties,
                                                          &ds->nproperties, sizeof *prop);
        if (!prop)
            return knut_pipeline__ps_nomem(ps);
        prop->pos = here(ps);
        size_t from = ps->t.at;
        if (ps->t.kind == KNUT_PIPELINE__TOK_STRING) {
            if ((st = text_of(ps, &prop->name)) != KNUT_OK || (st = next(ps)) != KNUT_OK)
                return st;
        } else {
            if (ps->t.kind != KNUT_PIPELINE__TOK_WORD)
                return knut_pipeline__ps_fail(ps, "a property name");
            size_t to = from;
            while (ps->t.kind == KNUT_PIPELINE__TOK_WORD || punct(ps, '.')) {
                to = ps->t.at + ps->t.len;
                if ((st = next(ps)) != KNUT_OK)
                    return st;
            }
            prop->name = knut_pipeline__strndup(ps->p, ps->lx.text + from, to - from);
            if (!prop->name)
                return knut_pipeline__ps_nomem(ps);
        }
        if (!punct(ps, '='))
            return knut_pipeline__ps_fail(ps, "'=' and the property value");
        if ((st = next(ps)) != KNUT_OK)
            return st;
        if (ps->t.kind != KNUT_PIPELINE__TOK_STRING && ps->t.kind != KNUT_PIPELINE__TOK_WORD &&
            ps->t.kind != KNUT_PIPELINE__TOK_NUMBER)
            return knut_pipeline__ps_fail(ps, "a property value");
        if ((st = text_of(ps, &prop->value)) != KNUT_OK || (st = next(ps)) != KNUT_OK)
            return st;
    } while (punct(ps, ','));
    if (!punct(ps, ')'))
        return knut_pipeline__ps_fail(ps, "',' or ')'");
    return next(ps);
}

/* CREATE ... {MATERIALIZED VIEW | STREAMING TABLE | TEMPORARY VIEW} */
static knut_status dataset(knut_pipeline__parser *ps, knut_pipeline_dataset_kind kind,
                           knut_pipeline_pos pos)
{
    const char *name;
    knut_pipeline_pos name_pos = here(ps);
    knut_status st = knut_pipeline__ps_dataset_name(ps, &name);
    if (st != KNUT_OK)
        return st;
    if (knut_pipeline__dataset_get(ps->p, name))
        return knut_pipeline__error_at(ps->err, KNUT_EINVAL, name_pos,
                                       "dataset '%s' is defined twice", name);
    knut_pipeline_dataset *ds =
        knut_pipeline__push(ps->p, (void **)&ps->p->datasets, &ps->p->ndatasets, sizeof *ds);
    if (!ds)
        return knut_pipeline__ps_nomem(ps);
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
            return knut_pipeline__ps_fail(ps, "',' or ')'");
        if ((st = next(ps)) != KNUT_OK)
            return st;
    }
    while (is(ps, "comment") || is(ps, "tblproperties")) {
        int comment = is(ps, "comment");
        if ((st = next(ps)) != KNUT_OK)
            return st;
        if (!comment) {
            if ((st = properties(ps, ds)) != KNUT_OK)
                return st;
            continue;
        }
        if (ps->t.kind != KNUT_PIPELINE__TOK_STRING)
            return knut_pipeline__ps_fail(ps, "a comment string");
        if ((st = text_of(ps, &ds->comment)) != KNUT_OK || (st = next(ps)) != KNUT_OK)
            return st;
    }
    knut_pipeline_streaming *stream = NULL;
    if ((st = knut_pipeline__ps_stream_clauses(ps, &stream)) != KNUT_OK)
        return st;
    if (at_end(ps)) {
        if (stream)
            return knut_pipeline__ps_fail(ps, "AS and the query of the windowed flow");
        if (kind != KNUT_PIPELINE_STREAMING_TABLE)
            return knut_pipeline__ps_fail(ps, "AS and a query");
        return KNUT_OK; /* a streaming table that flows write into */
    }
    if ((st = knut_pipeline__ps_want(ps, "as")) != KNUT_OK)
        return st;
    knut_pipeline_flow *f;
    if ((st = add_flow(ps, name, pos, &f)) != KNUT_OK)
        return st;
    f->target = name;
    f->kind = kind == KNUT_PIPELINE_STREAMING_TABLE ? KNUT_PIPELINE_FLOW_STREAMING
                                                    : KNUT_PIPELINE_FLOW_BATCH;
    f->stream = stream;
    return knut_pipeline__ps_query(ps, f);
}

/* CREATE FLOW name [COMMENT '...'] AS {INSERT INTO [ONCE] t [BY NAME] q | AUTO CDC ...} */
static knut_status flow(knut_pipeline__parser *ps, knut_pipeline_pos pos)
{
    const char *name;
    knut_status st = knut_pipeline__ps_ident(ps, &name, "a flow name");
    knut_pipeline_flow *f;
    if (st != KNUT_OK || (st = add_flow(ps, name, pos, &f)) != KNUT_OK)
        return st;
    if (is(ps, "comment")) {
        if ((st = next(ps)) != KNUT_OK)
            return st;
        if (ps->t.kind != KNUT_PIPELINE__TOK_STRING)
            return knut_pipeline__ps_fail(ps, "a comment string");
        if ((st = next(ps)) != KNUT_OK)
            return st;
    }
    if ((st = knut_pipeline__ps_stream_clauses(ps, &f->stream)) != KNUT_OK ||
        (st = knut_pipeline__ps_want(ps, "as")) != KNUT_OK)
        return st;
    if (is(ps, "auto")) {
        if ((st = next(ps)) != KNUT_OK || (st = knut_pipeline__ps_want(ps, "cdc")) != KNUT_OK)
            return st;
        return knut_pipeline__ps_cdc(ps, f);
    }
    if ((st = knut_pipeline__ps_want(ps, "insert")) != KNUT_OK)
        return st;
    f->kind = KNUT_PIPELINE_FLOW_STREAMING;
    if (is(ps, "once")) {
        f->kind = KNUT_PIPELINE_FLOW_APPEND_ONCE;
        if ((st = next(ps)) != KNUT_OK)
            return st;
    }
    if ((st = knut_pipeline__ps_want(ps, "into")) != KNUT_OK)
        return st;
    if (is(ps, "once")) {
        f->kind = KNUT_PIPELINE_FLOW_APPEND_ONCE;
        if ((st = next(ps)) != KNUT_OK)
            return st;
    }
    if ((st = knut_pipeline__ps_dataset_name(ps, &f->target)) != KNUT_OK)
        return st;
    if (is(ps, "by")) {
        if ((st = next(ps)) != KNUT_OK || (st = knut_pipeline__ps_want(ps, "name")) != KNUT_OK)
            return st;
    }
    return knut_pipeline__ps_query(ps, f);
}

static knut_status statement(knut_pipeline__parser *ps)
{
    knut_pipeline_pos pos = here(ps);
    knut_status st;
    if (is(ps, "apply")) {
        if ((st = next(ps)) != KNUT_OK || (st = knut_pipeline__ps_want(ps, "changes")) != KNUT_OK)
            return st;
        /* The legacy form names no flow: it is named after its target. */
        knut_pipeline__lex save_lx = ps->lx;
        knut_pipeline__tok save_t = ps->t;
        const char *target;
        if ((st = knut_pipeline__ps_want(ps, "into")) != KNUT_OK ||
            (st = knut_pipeline__ps_dataset_name(ps, &target)) != KNUT_OK)
            return st;
        ps->lx = save_lx;
        ps->t = save_t;
        knut_pipeline_flow *f;
        if ((st = add_flow(ps, target, pos, &f)) != KNUT_OK)
            return st;
        return knut_pipeline__ps_cdc(ps, f);
    }
    if ((st = knut_pipeline__ps_want(ps, "create")) != KNUT_OK)
        return knut_pipeline__ps_fail(ps, "CREATE or APPLY CHANGES (a pipeline file holds only "
                                          "dataset and "
                        "flow definitions)");
    if (is(ps, "or")) {
        if ((st = next(ps)) != KNUT_OK)
            return st;
        if (!is(ps, "refresh") && !is(ps, "replace"))
            return knut_pipeline__ps_fail(ps, "REFRESH or REPLACE");
        if ((st = next(ps)) != KNUT_OK)
            return st;
    }
    if (is(ps, "materialized")) {
        if ((st = next(ps)) != KNUT_OK || (st = knut_pipeline__ps_want(ps, "view")) != KNUT_OK)
            return st;
        return dataset(ps, KNUT_PIPELINE_MATERIALIZED_VIEW, pos);
    }
    if (is(ps, "streaming") || is(ps, "incremental")) {
        if ((st = next(ps)) != KNUT_OK)
            return st;
        if (is(ps, "live") && (st = next(ps)) != KNUT_OK)
            return st;
        if ((st = knut_pipeline__ps_want(ps, "table")) != KNUT_OK)
            return st;
        return dataset(ps, KNUT_PIPELINE_STREAMING_TABLE, pos);
    }
    if (is(ps, "live")) { /* legacy CREATE LIVE TABLE: a materialized view */
        if ((st = next(ps)) != KNUT_OK || (st = knut_pipeline__ps_want(ps, "table")) != KNUT_OK)
            return st;
        return dataset(ps, KNUT_PIPELINE_MATERIALIZED_VIEW, pos);
    }
    if (is(ps, "temporary") || is(ps, "temp")) {
        if ((st = next(ps)) != KNUT_OK)
            return st;
        if (is(ps, "live") && (st = next(ps)) != KNUT_OK)
            return st;
        if ((st = knut_pipeline__ps_want(ps, "view")) != KNUT_OK)
            return st;
        return dataset(ps, KNUT_PIPELINE_TEMPORARY_VIEW, pos);
    }
    if (is(ps, "flow")) {
        if ((st = next(ps)) != KNUT_OK)
            return st;
        return flow(ps, pos);
    }
    return knut_pipeline__ps_fail(ps, "MATERIALIZED VIEW, STREAMING TABLE, TEMPORARY VIEW or FLOW");
}

knut_status knut_pipeline_parse_sql(knut_pipeline *p, const char *text, size_t len,
                                    const char *file, knut_error *err)
{
    KNUT_ASSERT_ARG(err, p != NULL && (text != NULL || len == 0));
    knut_pipeline__parser ps = {.p = p, .err = err};
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
            return knut_pipeline__ps_fail(&ps, "';' or the end of the statement");
    }
    return st;
}
