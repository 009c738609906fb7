/*
 * The CDC clauses of AUTO CDC INTO / APPLY CHANGES INTO (FROM, KEYS,
 * IGNORE NULL UPDATES, APPLY AS DELETE/TRUNCATE WHEN, SEQUENCE BY,
 * COLUMNS, STORED AS SCD TYPE, TRACK HISTORY ON; FROM SNAPSHOT with
 * IGNORE DELETES and INITIAL START AT) and the column lists they share
 * with EXPECT UNIQUE.
 */
#include <string.h>

#include "sql_int.h"

/* name, name, ... or (name, name, ...). */
knut_status knut_pipeline__ps_name_list(knut_pipeline__parser *ps, const char ***names, size_t *n)
{
    int paren = punct(ps, '(');
    knut_status st;
    if (paren && (st = next(ps)) != KNUT_OK)
        return st;
    for (;;) {
        const char **slot = knut_pipeline__push(ps->p, (void **)names, n, sizeof *slot);
        if (!slot)
            return knut_pipeline__ps_nomem(ps);
        if ((st = knut_pipeline__ps_ident(ps, slot, "a column name")) != KNUT_OK)
            return st;
        if (!punct(ps, ','))
            break;
        if ((st = next(ps)) != KNUT_OK)
            return st;
    }
    if (paren) {
        if (!punct(ps, ')'))
            return knut_pipeline__ps_fail(ps, "',' or ')'");
        return next(ps);
    }
    return KNUT_OK;
}

/* {list | * EXCEPT (list)} */
knut_status knut_pipeline__ps_col_spec(knut_pipeline__parser *ps, knut_pipeline_cols *c)
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
    return knut_pipeline__ps_name_list(ps, &c->names, &c->n);
}

/* An expression up to the next CDC clause keyword (or the end). */
static knut_status cdc_expr(knut_pipeline__parser *ps, const char **out)
{
    static const char *const stop[] = {"apply", "sequence", "columns", "stored", "track",
                                       "ignore", "keys", "initial", NULL};
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
        return knut_pipeline__ps_fail(ps, "an expression");
    *out = knut_pipeline__strndup(ps->p, ps->lx.text + from, to - from);
    return *out ? KNUT_OK : knut_pipeline__ps_nomem(ps);
}

/* INTO target FROM src KEYS (...) ... — after AUTO CDC / APPLY CHANGES. */
/* A dataset name, bare or in parentheses: `src` or `(src)`. */
static knut_status paren_name(knut_pipeline__parser *ps, const char **out)
{
    knut_status st;
    int paren = punct(ps, '(');
    if (paren && (st = next(ps)) != KNUT_OK)
        return st;
    if ((st = knut_pipeline__ps_dataset_name(ps, out)) != KNUT_OK)
        return st;
    if (!paren)
        return KNUT_OK;
    if (!punct(ps, ')'))
        return knut_pipeline__ps_fail(ps, "')'");
    return next(ps);
}

knut_status knut_pipeline__ps_cdc(knut_pipeline__parser *ps, knut_pipeline_flow *f)
{
    knut_status st;
    knut_pipeline_cdc *c = knut_pipeline__alloc(ps->p, sizeof *c);
    if (!c)
        return knut_pipeline__ps_nomem(ps);
    f->cdc = c;
    f->kind = KNUT_PIPELINE_FLOW_CDC;
    c->scd_type = 1;
    if ((st = knut_pipeline__ps_want(ps, "into")) != KNUT_OK ||
        (st = knut_pipeline__ps_dataset_name(ps, &f->target)) != KNUT_OK)
        return st;
    if ((st = knut_pipeline__ps_want(ps, "from")) != KNUT_OK)
        return st;
    if (is(ps, "snapshot")) {
        /* FROM SNAPSHOT src, unless "snapshot" is the source's own name. */
        knut_pipeline__lex save_lx = ps->lx;
        knut_pipeline__tok save_t = ps->t;
        if ((st = next(ps)) != KNUT_OK)
            return st;
        c->snapshot = !at_end(ps) && !is(ps, "keys");
        if (!c->snapshot) {
            ps->lx = save_lx;
            ps->t = save_t;
        }
    }
    if (c->snapshot) {
        if ((st = paren_name(ps, &c->source)) != KNUT_OK)
            return st;
    } else if (is(ps, "stream")) {
        c->source_stream = 1;
        if ((st = next(ps)) != KNUT_OK || (st = paren_name(ps, &c->source)) != KNUT_OK)
            return st;
    } else if ((st = knut_pipeline__ps_dataset_name(ps, &c->source)) != KNUT_OK) {
        return st;
    }
    while (!at_end(ps)) {
        if (is(ps, "keys")) {
            if ((st = next(ps)) != KNUT_OK ||
                (st = knut_pipeline__ps_name_list(ps, &c->keys, &c->nkeys)) != KNUT_OK)
                return st;
        } else if (is(ps, "ignore") && c->snapshot) {
            if ((st = next(ps)) != KNUT_OK ||
                (st = knut_pipeline__ps_want(ps, "deletes")) != KNUT_OK)
                return st;
            c->ignore_deletes = 1;
        } else if (is(ps, "initial") && c->snapshot) {
            if ((st = next(ps)) != KNUT_OK ||
                (st = knut_pipeline__ps_want(ps, "start")) != KNUT_OK ||
                (st = knut_pipeline__ps_want(ps, "at")) != KNUT_OK ||
                (st = cdc_expr(ps, &c->initial_start)) != KNUT_OK)
                return st;
        } else if (is(ps, "apply") && c->snapshot) {
            return knut_pipeline__ps_fail(ps, "a FROM SNAPSHOT clause (a key missing from a "
                                              "snapshot is its delete; APPLY AS is for change "
                                              "feeds)");
        } else if (is(ps, "ignore")) {
            if ((st = next(ps)) != KNUT_OK ||
                (st = knut_pipeline__ps_want(ps, "null")) != KNUT_OK ||
                (st = knut_pipeline__ps_want(ps, "updates")) != KNUT_OK)
                return st;
            c->ignore_null_updates = 1;
        } else if (is(ps, "apply")) {
            if ((st = next(ps)) != KNUT_OK || (st = knut_pipeline__ps_want(ps, "as")) != KNUT_OK)
                return st;
            int del = is(ps, "delete");
            if (!del && !is(ps, "truncate"))
                return knut_pipeline__ps_fail(ps, "DELETE or TRUNCATE");
            if ((st = next(ps)) != KNUT_OK || (st = knut_pipeline__ps_want(ps, "when")) != KNUT_OK)
                return st;
            if ((st = cdc_expr(ps, del ? &c->delete_when : &c->truncate_when)) != KNUT_OK)
                return st;
        } else if (is(ps, "sequence")) {
            if ((st = next(ps)) != KNUT_OK || (st = knut_pipeline__ps_want(ps, "by")) != KNUT_OK ||
                (st = cdc_expr(ps, &c->sequence_by)) != KNUT_OK)
                return st;
        } else if (is(ps, "columns")) {
            if ((st = next(ps)) != KNUT_OK ||
                (st = knut_pipeline__ps_col_spec(ps, &c->columns)) != KNUT_OK)
                return st;
        } else if (is(ps, "stored")) {
            if ((st = next(ps)) != KNUT_OK || (st = knut_pipeline__ps_want(ps, "as")) != KNUT_OK ||
                (st = knut_pipeline__ps_want(ps, "scd")) != KNUT_OK ||
                (st = knut_pipeline__ps_want(ps, "type")) != KNUT_OK)
                return st;
            if (ps->t.kind != KNUT_PIPELINE__TOK_NUMBER || ps->t.len != 1 ||
                (ps->lx.text[ps->t.at] != '1' && ps->lx.text[ps->t.at] != '2'))
                return knut_pipeline__ps_fail(ps, "SCD TYPE 1 or 2");
            c->scd_type = ps->lx.text[ps->t.at] - '0';
            if ((st = next(ps)) != KNUT_OK)
                return st;
        } else if (is(ps, "track")) {
            knut_pipeline_pos pos = here(ps);
            if ((st = next(ps)) != KNUT_OK ||
                (st = knut_pipeline__ps_want(ps, "history")) != KNUT_OK ||
                (st = knut_pipeline__ps_want(ps, "on")) != KNUT_OK ||
                (st = knut_pipeline__ps_col_spec(ps, &c->track_history)) != KNUT_OK)
                return st;
            if (c->scd_type != 2)
                return knut_pipeline__error_at(ps->err, KNUT_EPARSE, pos,
                                               "TRACK HISTORY ON needs STORED AS SCD TYPE 2 "
                                               "before it");
        } else {
            return knut_pipeline__ps_fail(ps, "a CDC clause (KEYS, IGNORE NULL UPDATES, APPLY "
                                              "AS, SEQUENCE BY, "
                            "COLUMNS, STORED AS, TRACK HISTORY ON)");
        }
    }
    if (c->nkeys == 0)
        return knut_pipeline__error_at(ps->err, KNUT_EPARSE, f->pos, "flow '%s': CDC needs KEYS",
                                       f->name);
    if (!c->sequence_by && !c->snapshot)
        return knut_pipeline__error_at(ps->err, KNUT_EPARSE, f->pos,
                                       "flow '%s': CDC needs SEQUENCE BY", f->name);
    if (c->snapshot && c->scd_type != 2 && (c->sequence_by || c->initial_start))
        return knut_pipeline__error_at(ps->err, KNUT_EPARSE, f->pos,
                                       "flow '%s': SEQUENCE BY and INITIAL START AT of FROM "
                                       "SNAPSHOT are for SCD TYPE 2 (they give __START_AT)",
                                       f->name);
    return KNUT_OK;
}
