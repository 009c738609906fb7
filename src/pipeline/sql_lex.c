/*
 * The SQL lexer of the pipeline statement parser. It only has to find
 * where statements, clauses and names begin and end, so it knows the
 * things that hide a ';' or a keyword: strings ('' and E'\''), quoted
 * identifiers, dollar-quoted strings ($$...$$, $tag$...$tag$), line and
 * nested block comments. The query bodies themselves go to DuckDB.
 */
#include <ctype.h>
#include <string.h>

#include "pipeline_int.h"

void knut_pipeline__lex_init(knut_pipeline__lex *lx, const char *text, size_t len,
                             const char *file)
{
    lx->text = text;
    lx->len = len;
    lx->at = 0;
    lx->line = 1;
    lx->col = 1;
    lx->file = file;
}

static void adv(knut_pipeline__lex *lx)
{
    if (lx->text[lx->at] == '\n') {
        lx->line++;
        lx->col = 1;
    } else {
        lx->col++;
    }
    lx->at++;
}

static int peek(const knut_pipeline__lex *lx, size_t k)
{
    return lx->at + k < lx->len ? (unsigned char)lx->text[lx->at + k] : -1;
}

static int word_char(int c)
{
    return c == '_' || (c >= 0 && (isalnum(c) || c >= 0x80));
}

/* $tag$ at the cursor: the tag length including both '$', or 0. */
static size_t dollar_tag(const knut_pipeline__lex *lx)
{
    if (peek(lx, 0) != '$')
        return 0;
    size_t k = 1;
    if (peek(lx, 1) >= '0' && peek(lx, 1) <= '9')
        return 0; /* $1 is a parameter */
    while (word_char(peek(lx, k)))
        k++;
    return peek(lx, k) == '$' ? k + 1 : 0;
}

knut_status knut_pipeline__lex_next(knut_pipeline__lex *lx, knut_pipeline__tok *t,
                                    knut_error *err)
{
    for (;;) {
        int c = peek(lx, 0);
        if (c == -1)
            break;
        if (c == 0)
            return knut_error_set_at(err, KNUT_EPARSE, lx->file, lx->line, lx->col,
                                     "a NUL byte in SQL text");
        if (isspace(c)) {
            adv(lx);
        } else if (c == '-' && peek(lx, 1) == '-') {
            /* SQL text is handed on as a C string: a NUL anywhere, even in a
             * comment, would cut it short. */
            while (peek(lx, 0) != -1 && peek(lx, 0) != '\n') {
                if (peek(lx, 0) == 0)
                    return knut_error_set_at(err, KNUT_EPARSE, lx->file, lx->line, lx->col,
                                             "a NUL byte in SQL text");
                adv(lx);
            }
        } else if (c == '/' && peek(lx, 1) == '*') {
            int line = lx->line, col = lx->col, depth = 0;
            do {
                if (peek(lx, 0) == -1)
                    return knut_error_set_at(err, KNUT_EPARSE, lx->file, line, col,
                                             "unterminated /* comment");
                if (peek(lx, 0) == 0)
                    return knut_error_set_at(err, KNUT_EPARSE, lx->file, lx->line, lx->col,
                                             "a NUL byte in SQL text");
                if (peek(lx, 0) == '/' && peek(lx, 1) == '*') {
                    depth++;
                    adv(lx);
                } else if (peek(lx, 0) == '*' && peek(lx, 1) == '/') {
                    depth--;
                    adv(lx);
                }
                adv(lx);
            } while (depth > 0);
        } else {
            break;
        }
    }
    t->at = lx->at;
    t->line = lx->line;
    t->col = lx->col;
    int c = peek(lx, 0);
    if (c == -1) {
        t->kind = KNUT_PIPELINE__TOK_END;
        t->len = 0;
        return KNUT_OK;
    }
    if ((c == '\'') || ((c == 'E' || c == 'e') && peek(lx, 1) == '\'')) {
        int escapes = c != '\'';
        if (escapes)
            adv(lx);
        adv(lx);
        for (;;) {
            int d = peek(lx, 0);
            if (d == -1)
                return knut_error_set_at(err, KNUT_EPARSE, lx->file, t->line, t->col,
                                         "unterminated string");
            if (d == 0)
                return knut_error_set_at(err, KNUT_EPARSE, lx->file, lx->line, lx->col,
                                         "a NUL byte in SQL text");
            if (escapes && d == '\\' && peek(lx, 1) == 0) /* the escaped byte too */
                return knut_error_set_at(err, KNUT_EPARSE, lx->file, lx->line, lx->col,
                                         "a NUL byte in SQL text");
            if (escapes && d == '\\' && peek(lx, 1) != -1) {
                adv(lx);
                adv(lx);
                continue;
            }
            adv(lx);
            if (d == '\'') {
                if (peek(lx, 0) == '\'') {
                    adv(lx);
                    continue;
                }
                break;
            }
        }
        t->kind = KNUT_PIPELINE__TOK_STRING;
    } else if (c == '"') {
        adv(lx);
        for (;;) {
            int d = peek(lx, 0);
            if (d == -1)
                return knut_error_set_at(err, KNUT_EPARSE, lx->file, t->line, t->col,
                                         "unterminated quoted identifier");
            if (d == 0)
                return knut_error_set_at(err, KNUT_EPARSE, lx->file, lx->line, lx->col,
                                         "a NUL byte in SQL text");
            adv(lx);
            if (d == '"') {
                if (peek(lx, 0) == '"') {
                    adv(lx);
                    continue;
                }
                break;
            }
        }
        t->kind = KNUT_PIPELINE__TOK_QIDENT;
    } else if (dollar_tag(lx)) {
        size_t tag = dollar_tag(lx);
        const char *open = lx->text + lx->at;
        for (size_t k = 0; k < tag; k++)
            adv(lx);
        for (;;) {
            if (peek(lx, 0) == -1)
                return knut_error_set_at(err, KNUT_EPARSE, lx->file, t->line, t->col,
                                         "unterminated dollar-quoted string");
            if (peek(lx, 0) == 0)
                return knut_error_set_at(err, KNUT_EPARSE, lx->file, lx->line, lx->col,
                                         "a NUL byte in SQL text");
            if (lx->len - lx->at >= tag && memcmp(lx->text + lx->at, open, tag) == 0) {
                for (size_t k = 0; k < tag; k++)
                    adv(lx);
                break;
            }
            adv(lx);
        }
        t->kind = KNUT_PIPELINE__TOK_STRING;
    } else if (isdigit(c)) {
        while (word_char(peek(lx, 0)) || peek(lx, 0) == '.')
            adv(lx);
        t->kind = KNUT_PIPELINE__TOK_NUMBER;
    } else if (word_char(c)) {
        while (word_char(peek(lx, 0)))
            adv(lx);
        t->kind = KNUT_PIPELINE__TOK_WORD;
    } else {
        adv(lx);
        t->kind = KNUT_PIPELINE__TOK_PUNCT;
    }
    t->len = lx->at - t->at;
    return KNUT_OK;
}

int knut_pipeline__tok_is(const knut_pipeline__lex *lx, const knut_pipeline__tok *t,
                          const char *w)
{
    size_t n = strlen(w);
    if (t->kind != KNUT_PIPELINE__TOK_WORD || t->len != n)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (tolower((unsigned char)lx->text[t->at + i]) != tolower((unsigned char)w[i]))
            return 0;
    return 1;
}

int knut_pipeline__tok_punct(const knut_pipeline__lex *lx, const knut_pipeline__tok *t, char c)
{
    return t->kind == KNUT_PIPELINE__TOK_PUNCT && lx->text[t->at] == c;
}
