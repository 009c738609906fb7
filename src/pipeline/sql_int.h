/*
 * Internals of the pipeline SQL parser, shared by sql_parse.c (statements,
 * constraints), sql_query.c (query bodies) and sql_cdc.c (CDC clauses).
 */
#ifndef KNUT_PIPELINE_SQL_INT_H
#define KNUT_PIPELINE_SQL_INT_H

#include "pipeline_int.h"

typedef struct knut_pipeline__parser {
    knut_pipeline *p;
    knut_pipeline__lex lx;
    knut_pipeline__tok t; /* the current token */
    const char *file;     /* owned by p */
    knut_error *err;
} knut_pipeline__parser;

static inline knut_status next(knut_pipeline__parser *ps)
{
    return knut_pipeline__lex_next(&ps->lx, &ps->t, ps->err);
}

static inline int is(knut_pipeline__parser *ps, const char *w)
{
    return knut_pipeline__tok_is(&ps->lx, &ps->t, w);
}

static inline int punct(knut_pipeline__parser *ps, char c)
{
    return knut_pipeline__tok_punct(&ps->lx, &ps->t, c);
}

static inline int at_end(knut_pipeline__parser *ps)
{
    return ps->t.kind == KNUT_PIPELINE__TOK_END || punct(ps, ';');
}

static inline knut_pipeline_pos here(knut_pipeline__parser *ps)
{
    return (knut_pipeline_pos){ps->file, ps->t.line, ps->t.col};
}

/* An error at the current token: "expected WHAT, found '...'". */
knut_status knut_pipeline__ps_fail(knut_pipeline__parser *ps, const char *what);
knut_status knut_pipeline__ps_nomem(knut_pipeline__parser *ps);
/* Consumes the word w or fails naming it. */
knut_status knut_pipeline__ps_want(knut_pipeline__parser *ps, const char *w);
/* An identifier (a word or "quoted"), unquoted, into *out. */
knut_status knut_pipeline__ps_ident(knut_pipeline__parser *ps, const char **out, const char *what);
/* A dataset name, optionally behind LIVE. */
knut_status knut_pipeline__ps_dataset_name(knut_pipeline__parser *ps, const char **out);
/* Skips a balanced parenthesis group; *from and *to get the bytes inside. */
knut_status knut_pipeline__ps_balanced(knut_pipeline__parser *ps, size_t *from, size_t *to);
/* name, name, ... or the same in parentheses (sql_cdc.c). */
knut_status knut_pipeline__ps_name_list(knut_pipeline__parser *ps, const char ***names, size_t *n);
/* {list | * EXCEPT (list)} (sql_cdc.c). */
knut_status knut_pipeline__ps_col_spec(knut_pipeline__parser *ps, knut_pipeline_cols *c);
/* INTO target FROM source KEYS ... after AUTO CDC / APPLY CHANGES (sql_cdc.c). */
knut_status knut_pipeline__ps_cdc(knut_pipeline__parser *ps, knut_pipeline_flow *f);
/* WINDOW / OUTPUT MODE / TRIGGER clauses of a streaming flow's header
 * into *slot (allocated on the first one; sql_stream.c). */
knut_status knut_pipeline__ps_stream_clauses(knut_pipeline__parser *ps,
                                             knut_pipeline_streaming **slot);
/* WATERMARK col DELAY OF INTERVAL ... at the current token, after the
 * FROM item at item_at (item_len bytes of f's sql; sql_stream.c). */
knut_status knut_pipeline__ps_watermark(knut_pipeline__parser *ps, knut_pipeline_flow *f,
                                        size_t item_at, size_t item_len);
/* The query from the current token to the end of the statement (sql_query.c). */
knut_status knut_pipeline__ps_query(knut_pipeline__parser *ps, knut_pipeline_flow *f);

#endif
