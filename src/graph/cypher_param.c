/*
 * Typed query parameters written by a person (`knut graph query --param
 * name=value`) turned into entries of FalkorDB's `CYPHER name=value` block.
 * The text is parsed here, never passed on: every value is re-rendered
 * (strings through knut_graph_cypher_string, numbers range-checked and
 * reprinted), so nothing the user writes can end the parameter block and
 * reach the query text. Accepted: null, true, false, integers, doubles
 * (finite only), 'single' or "double" quoted strings with backslash
 * escapes, lists [..] and maps {key: ..} nested up to PARAM_DEPTH_MAX.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cypher_int.h"

/* Deep enough for any hand-written value, shallow enough for the stack. */
#define PARAM_DEPTH_MAX 32
/* One value's text; argv is bounded anyway, this also bounds the output. */
#define PARAM_TEXT_MAX ((size_t)1 << 20)

typedef struct pcur {
    const char *s;
    size_t len, pos;
    const char *name; /* the parameter, for messages */
    knut_buf tmp;     /* an unescaped string */
} pcur;

static knut_status perr(pcur *c, knut_error *err, const char *what)
{
    return knut_error_set(err, KNUT_EINVAL, "parameter '%s': %s at character %zu", c->name,
                          what, c->pos + 1);
}

static void skip_ws(pcur *c)
{
    while (c->pos < c->len && strchr(" \t\r\n", c->s[c->pos]) != NULL)
        c->pos++;
}

static int is_ident_start(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_';
}

static int is_ident_char(char ch)
{
    return is_ident_start(ch) || (ch >= '0' && ch <= '9');
}

/* A quoted string, unescaped into c->tmp. */
static knut_status read_string(pcur *c, knut_error *err)
{
    char q = c->s[c->pos++];
    knut_buf_clear(&c->tmp);
    while (c->pos < c->len && c->s[c->pos] != q) {
        char ch = c->s[c->pos++];
        if (ch == '\\') {
            if (c->pos >= c->len)
                break;
            ch = c->s[c->pos++];
            switch (ch) {
            case 'n': ch = '\n'; break;
            case 't': ch = '\t'; break;
            case 'r': ch = '\r'; break;
            case '\\': case '\'': case '"': break;
            default:
                c->pos--;
                return perr(c, err, "unknown escape in a string (use \\\\ \\' \\\" \\n \\t \\r)");
            }
        }
        knut_buf_putc(&c->tmp, ch);
    }
    if (c->pos >= c->len)
        return perr(c, err, "unterminated string");
    c->pos++;
    return knut_buf_check(&c->tmp, err);
}

static knut_status put_number(knut_buf *out, pcur *c, knut_error *err)
{
    size_t start = c->pos;
    int is_float = 0;
    if (c->s[c->pos] == '-' || c->s[c->pos] == '+')
        c->pos++;
    while (c->pos < c->len && strchr("0123456789.eE+-", c->s[c->pos]) != NULL) {
        if (strchr(".eE", c->s[c->pos]) != NULL)
            is_float = 1;
        c->pos++;
    }
    char num[64];
    size_t n = c->pos - start;
    if (n == 0 || n >= sizeof num) {
        c->pos = start;
        return perr(c, err, "not a value (strings need quotes: 'text')");
    }
    memcpy(num, c->s + start, n);
    num[n] = '\0';
    char *end = NULL;
    errno = 0;
    if (!is_float) {
        long long v = strtoll(num, &end, 10);
        if (*end != '\0' || end == num) {
            c->pos = start;
            return perr(c, err, "not a number");
        }
        if (errno == ERANGE) {
            c->pos = start;
            return perr(c, err, "integer out of the 64-bit range");
        }
        return knut_buf_printf(out, "%lld", v);
    }
    double d = strtod(num, &end);
    if (*end != '\0' || end == num || !isfinite(d)) {
        c->pos = start;
        return perr(c, err, "not a finite number");
    }
    /* The shortest exact form with a '.' or exponent: the server would read
     * "3" as an integer. */
    char buf[40];
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, d);
        for (char *p = buf; *p; p++)
            if (*p == ',')
                *p = '.';
        if (strtod(buf, NULL) == d)
            break;
    }
    knut_buf_puts(out, buf);
    if (strpbrk(buf, ".e") == NULL)
        knut_buf_puts(out, ".0");
    return KNUT_OK;
}

static knut_status put_value(knut_buf *out, pcur *c, int depth, knut_error *err);

/* A map key: an identifier or a quoted string, re-rendered backticked. */
static knut_status put_map_key(knut_buf *out, pcur *c, knut_error *err)
{
    knut_status st;
    if (c->pos < c->len && (c->s[c->pos] == '\'' || c->s[c->pos] == '"')) {
        if ((st = read_string(c, err)) != KNUT_OK)
            return st;
        st = knut_graph_cypher_ident(out, c->tmp.data ? c->tmp.data : "", c->tmp.len,
                                     "map key", err);
    } else {
        size_t start = c->pos;
        while (c->pos < c->len && is_ident_char(c->s[c->pos]))
            c->pos++;
        if (c->pos == start || !is_ident_start(c->s[start]))
            return perr(c, err, "expected a map key");
        st = knut_graph_cypher_ident(out, c->s + start, c->pos - start, "map key", err);
    }
    if (st != KNUT_OK)
        return knut_error_prefix(err, "parameter '%s': ", c->name);
    skip_ws(c);
    if (c->pos >= c->len || c->s[c->pos] != ':')
        return perr(c, err, "expected ':' after a map key");
    c->pos++;
    return knut_buf_putc(out, ':');
}

/* [v, ...] or {k: v, ...}. */
static knut_status put_collection(knut_buf *out, pcur *c, int depth, knut_error *err)
{
    char open = c->s[c->pos++], close = open == '[' ? ']' : '}';
    knut_buf_putc(out, open);
    skip_ws(c);
    if (c->pos < c->len && c->s[c->pos] == close) {
        c->pos++;
        return knut_buf_putc(out, close);
    }
    for (size_t k = 0;; k++) {
        knut_status st;
        skip_ws(c);
        if (k > 0)
            knut_buf_putc(out, ',');
        if (open == '{' && (st = put_map_key(out, c, err)) != KNUT_OK)
            return st;
        if ((st = put_value(out, c, depth + 1, err)) != KNUT_OK)
            return st;
        skip_ws(c);
        if (c->pos < c->len && c->s[c->pos] == ',') {
            c->pos++;
            continue;
        }
        if (c->pos < c->len && c->s[c->pos] == close) {
            c->pos++;
            return knut_buf_putc(out, close);
        }
        return perr(c, err, open == '[' ? "expected ',' or ']'" : "expected ',' or '}'");
    }
}

static int word_at(const pcur *c, const char *w)
{
    size_t n = strlen(w);
    return c->len - c->pos >= n && strncasecmp(c->s + c->pos, w, n) == 0 &&
           (c->len - c->pos == n || !is_ident_char(c->s[c->pos + n]));
}

static knut_status put_value(knut_buf *out, pcur *c, int depth, knut_error *err)
{
    static const char *const words[] = {"null", "true", "false"};
    skip_ws(c);
    if (depth > PARAM_DEPTH_MAX)
        return perr(c, err, "lists and maps nested too deeply");
    if (c->pos >= c->len)
        return perr(c, err, "missing value");
    char ch = c->s[c->pos];
    if (ch == '[' || ch == '{')
        return put_collection(out, c, depth, err);
    if (ch == '\'' || ch == '"') {
        knut_status st = read_string(c, err);
        if (st == KNUT_OK)
            st = knut_graph_cypher_string(out, c->tmp.data ? c->tmp.data : "", c->tmp.len,
                                          err);
        return st == KNUT_OK ? st : knut_error_prefix(err, "parameter '%s': ", c->name);
    }
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        if (word_at(c, words[i])) {
            c->pos += strlen(words[i]);
            return knut_buf_puts(out, words[i]);
        }
    }
    return put_number(out, c, err);
}

knut_status knut_graph_cypher_param(knut_buf *out, const char *name, size_t name_len,
                                    const char *text, size_t len, knut_error *err)
{
    KNUT_ASSERT_ARG(err, out != NULL && name != NULL && (text != NULL || len == 0));
    char shown[KNUT_GRAPH__MSG_NAME_MAX];
    knut_graph__msg_name(shown, sizeof shown, name, name_len);
    /* Plain names only: the grammar's backticked names have no escape. */
    int ok = name_len > 0 && is_ident_start(name[0]);
    for (size_t i = 1; ok && i < name_len; i++)
        ok = is_ident_char(name[i]);
    if (!ok)
        return knut_error_set(err, KNUT_EINVAL,
                              "parameter name '%s' must be letters, digits and '_', not "
                              "starting with a digit",
                              shown);
    if (len > PARAM_TEXT_MAX)
        return knut_error_set(err, KNUT_ETOOBIG, "parameter '%s': value over %zu bytes", shown,
                              PARAM_TEXT_MAX);
    if (memchr(text, '\0', len) != NULL)
        return knut_error_set(err, KNUT_EINVAL, "parameter '%s': the value holds a NUL byte",
                              shown);
    size_t mark = out->len;
    pcur c = {text, len, 0, shown, KNUT_BUF_INIT};
    knut_buf_init(&c.tmp, PARAM_TEXT_MAX);
    knut_buf_append(out, name, name_len);
    knut_buf_putc(out, '=');
    knut_status st = put_value(out, &c, 0, err);
    if (st == KNUT_OK) {
        skip_ws(&c);
        if (c.pos < c.len)
            st = perr(&c, err, "unexpected text after the value (quote strings: 'text')");
    }
    if (st == KNUT_OK) {
        knut_buf_putc(out, ' ');
        st = knut_buf_check(out, err);
    }
    if (st != KNUT_OK && out->error == KNUT_OK && out->data != NULL) {
        out->len = mark;
        out->data[mark] = '\0';
    }
    knut_buf_reset(&c.tmp);
    return st;
}
