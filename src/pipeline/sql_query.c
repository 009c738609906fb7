/*
 * Query bodies of pipeline statements: everything after AS up to the
 * statement's end is DuckDB's. It is only scanned here, to take STREAM(x),
 * STREAM x and LIVE. out (blanked in place, so DuckDB's offsets still
 * point into the file) and to find the file sources of streaming flows.
 */
#include <string.h>

#include "sql_int.h"

static int is_source_fn(knut_pipeline__parser *ps)
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
knut_status knut_pipeline__ps_query(knut_pipeline__parser *ps, knut_pipeline_flow *f)
{
    size_t from = ps->t.at, last = ps->t.at;
    f->sql_pos = here(ps);
    if (at_end(ps))
        return knut_pipeline__ps_fail(ps, "a query");
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
    /* the Spark lowering puts STREAM back (src/pipeline/spark_lower.c) */
    f->source_sql = knut_pipeline__strndup(ps->p, ps->lx.text + from, last - from);
    if (!sql || !f->source_sql)
        return knut_pipeline__ps_nomem(ps);
    knut_pipeline__lex end_lx = ps->lx;
    knut_pipeline__tok end_t = ps->t;
    ps->lx = save_lx;
    ps->t = save_t;
    knut_pipeline__tok prev = {KNUT_PIPELINE__TOK_END, 0, 0, 0, 0};
    /* The FROM item a WATERMARK clause follows: from the token after
     * FROM / JOIN (or a ',' at that depth) up to the clause. */
    size_t item_from = 0;
    int depth = 0, from_depth = -1, have_item = 0;
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
                depth++;
                if ((st = next(ps)) != KNUT_OK)
                    return st;
                if (ps->t.kind == KNUT_PIPELINE__TOK_STRING && ps->lx.text[ps->t.at] == '\'') {
                    knut_pipeline_source *s = knut_pipeline__push(
                        ps->p, (void **)&f->sources, &f->nsources, sizeof *s);
                    char *pat = knut_pipeline__alloc(ps->p, ps->t.len);
                    if (!s || !pat || !fn)
                        return knut_pipeline__ps_nomem(ps);
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
            int name_next = ps->t.kind == KNUT_PIPELINE__TOK_WORD ||
                            ps->t.kind == KNUT_PIPELINE__TOK_QIDENT;
            if (stream && (punct(ps, '(') || (after_from && name_next))) {
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
                        return knut_pipeline__ps_fail(ps, "'.' after LIVE");
                    memset(sql + (l - from), ' ', ps->t.at + 1 - l);
                    if ((st = next(ps)) != KNUT_OK)
                        return st;
                }
                const char **slot = knut_pipeline__push(ps->p, (void **)&f->stream_names,
                                                        &f->nstream_names, sizeof *slot);
                if (!slot)
                    return knut_pipeline__ps_nomem(ps);
                st = knut_pipeline__ps_ident(ps, slot, "a dataset name after STREAM");
                if (st != KNUT_OK)
                    return st;
                if (paren) {
                    if (!punct(ps, ')'))
                        return knut_pipeline__ps_fail(ps, "')' after STREAM(name");
                    sql[ps->t.at - from] = ' ';
                    if ((st = next(ps)) != KNUT_OK)
                        return st;
                }
            }
            prev = cur;
            continue;
        }
        if (is(ps, "watermark") && have_item && cur.at > item_from) {
            size_t to = cur.at;
            while (to > item_from && (ps->lx.text[to - 1] == ' ' || ps->lx.text[to - 1] == '\t' ||
                                      ps->lx.text[to - 1] == '\n' || ps->lx.text[to - 1] == '\r'))
                to--;
            if ((st = knut_pipeline__ps_watermark(ps, f, item_from - from, to - item_from)) !=
                KNUT_OK)
                return st;
            size_t end = ps->t.at < last ? ps->t.at : last;
            memset(sql + rel, ' ', end - cur.at);
            prev = cur;
            continue;
        }
        int opens_item = is(ps, "from") || is(ps, "join") || (punct(ps, ',') && depth == from_depth);
        if (is(ps, "from") || is(ps, "join"))
            from_depth = depth;
        depth += punct(ps, '(') - punct(ps, ')');
        if (depth < from_depth)
            from_depth = -1;
        prev = cur;
        if ((st = next(ps)) != KNUT_OK)
            return st;
        if (opens_item) {
            item_from = ps->t.at;
            have_item = 1;
        }
    }
    ps->lx = end_lx;
    ps->t = end_t;
    f->sql = sql;
    return KNUT_OK;
}
