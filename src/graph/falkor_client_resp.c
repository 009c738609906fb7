/*
 * RESP2 for the FalkorDB client: a resumable scanner that finds where one
 * reply ends as bytes arrive (depth and size capped, nothing allocated),
 * a cursor that reads the elements of a complete reply in place, and the
 * command encoder. hiredis's own reader is not used for replies because
 * version 0.14 refuses arrays nested deeper than 7, which a compact path or
 * a node with a list property exceeds.
 */
#include "falkor_int.h"

#include <string.h>

/* Longest header line of ':' '$' '*': a sign and 19 digits. */
#define NUM_LINE_MAX 20

enum { RD_MORE = 0, RD_OK = 1, RD_BAD = -1 };

/* Strict decimal int64: optional '-', 1..19 digits, no overflow. */
static int parse_i64(const char *p, const char *e, int64_t *out)
{
    int neg = 0;
    uint64_t v = 0;
    if (p < e && *p == '-') {
        neg = 1;
        p++;
    }
    if (p == e || e - p > 19)
        return 0;
    for (; p < e; p++) {
        if (*p < '0' || *p > '9')
            return 0;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    if (v > (uint64_t)INT64_MAX + (uint64_t)neg)
        return 0;
    if (neg)
        *out = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
    else
        *out = (int64_t)v;
    return 1;
}

/*
 * Reads the element at p: its header line and, for a bulk string, the
 * payload. *searched remembers how much of an unfinished line was already
 * searched for its CR, so a long line arriving in pieces is scanned once.
 * On RD_MORE for a bulk string, it->type and it->n are already set so the
 * caller can refuse a declared length over its cap before waiting for it.
 */
static int read_elem(const char *p, const char *end, size_t *searched, falkor_item *it,
                     const char **next)
{
    if (p >= end)
        return RD_MORE;
    char t = *p;
    if (t != '+' && t != '-' && t != ':' && t != '$' && t != '*')
        return RD_BAD;
    int numeric = t == ':' || t == '$' || t == '*';
    const char *line = p + 1;
    const char *from = line + *searched;
    if (from > end)
        from = end;
    const char *cr = memchr(from, '\r', (size_t)(end - from));
    if (cr == NULL || cr + 1 == end) {
        const char *upto = cr ? cr : end;
        if (numeric && upto - line > NUM_LINE_MAX)
            return RD_BAD;
        *searched = (size_t)(upto - line);
        return RD_MORE;
    }
    if (cr[1] != '\n' || (numeric && cr - line > NUM_LINE_MAX))
        return RD_BAD;
    const char *after = cr + 2;
    int64_t n = 0;
    it->type = t;
    it->s = NULL;
    switch (t) {
    case '+':
    case '-':
        it->s = line;
        it->n = cr - line;
        break;
    case ':':
        if (!parse_i64(line, cr, &it->n))
            return RD_BAD;
        break;
    case '$':
        if (!parse_i64(line, cr, &n) || n < -1)
            return RD_BAD;
        it->n = n;
        if (n == -1) {
            it->type = '_';
            break;
        }
        if ((uint64_t)(end - after) < (uint64_t)n + 2) {
            *searched = (size_t)(cr - line);
            return RD_MORE;
        }
        if (after[n] != '\r' || after[n + 1] != '\n')
            return RD_BAD;
        it->s = after;
        after += n + 2;
        break;
    default: /* '*' */
        if (!parse_i64(line, cr, &n) || n < -1)
            return RD_BAD;
        it->n = n;
        if (n == -1)
            it->type = '_';
        break;
    }
    *searched = 0;
    *next = after;
    return RD_OK;
}

void knut_graph__falkor_frame_init(falkor_frame *f, int max_depth, int64_t max_bytes)
{
    f->pos = 0;
    f->searched = 0;
    f->depth = 0;
    if (max_depth <= 0)
        max_depth = FALKOR_DEPTH_DEFAULT;
    f->max_depth = max_depth > FALKOR_DEPTH_MAX ? FALKOR_DEPTH_MAX : max_depth;
    f->max_bytes = max_bytes > 0 ? max_bytes : KNUT_GRAPH_FALKOR_MAX_REPLY_DEFAULT;
}

static knut_status too_big(falkor_frame *f, const char *peer, knut_error *err)
{
    return knut_error_set(err, KNUT_ETOOBIG, "%s: reply larger than the %lld-byte cap", peer,
                          (long long)f->max_bytes);
}

knut_status knut_graph__falkor_frame_scan(falkor_frame *f, const char *buf, size_t len,
                                          size_t *end, const char *peer, knut_error *err)
{
    for (;;) {
        falkor_item it = {0, 0, NULL};
        const char *next = NULL;
        int rc = read_elem(buf + f->pos, buf + len, &f->searched, &it, &next);
        if (rc == RD_MORE) {
            if (it.type == '$' && it.n > f->max_bytes - (int64_t)f->pos)
                return too_big(f, peer, err);
            if ((int64_t)len > f->max_bytes)
                return too_big(f, peer, err);
            return KNUT_EAGAIN;
        }
        if (rc == RD_BAD)
            return knut_error_set(err, KNUT_EPARSE,
                                  "%s: malformed reply (not RESP2) at byte %zu", peer, f->pos);
        f->pos = (size_t)(next - buf);
        if ((int64_t)f->pos > f->max_bytes)
            return too_big(f, peer, err);
        if (it.type == '*' && it.n > 0) {
            if (f->depth >= f->max_depth)
                return knut_error_set(err, KNUT_ETOOBIG,
                                      "%s: reply nested deeper than %d arrays", peer,
                                      f->max_depth);
            /* Every item takes at least 3 bytes ("+\r\n"). */
            if (it.n > (f->max_bytes - (int64_t)f->pos) / 3)
                return too_big(f, peer, err);
            f->left[f->depth++] = it.n;
            continue;
        }
        while (f->depth > 0 && --f->left[f->depth - 1] == 0)
            f->depth--;
        if (f->depth == 0) {
            *end = f->pos;
            f->pos = 0;
            f->searched = 0;
            return KNUT_OK;
        }
    }
}

knut_status knut_graph__falkor_cur_next(falkor_cur *c, falkor_item *out)
{
    size_t searched = 0;
    const char *next = NULL;
    out->type = 0;
    if (read_elem(c->p, c->end, &searched, out, &next) != RD_OK)
        return KNUT_EPARSE;
    c->p = next;
    return KNUT_OK;
}

knut_status knut_graph__falkor_cur_skip(falkor_cur *c, const falkor_item *it)
{
    if (it->type != '*')
        return KNUT_OK;
    int64_t left = it->n;
    while (left > 0) {
        falkor_item x;
        if (knut_graph__falkor_cur_next(c, &x) != KNUT_OK)
            return KNUT_EPARSE;
        left--;
        if (x.type == '*') {
            /* An item takes at least 3 bytes: bounds left by what remains. */
            if (x.n > (c->end - c->p) / 3)
                return KNUT_EPARSE;
            left += x.n;
        }
    }
    return KNUT_OK;
}

knut_status knut_graph__falkor_cmd_append(knut_buf *b, int argc, const char *const *argv,
                                          knut_error *err)
{
    return knut_graph__falkor_cmd_append_lens(b, argc, argv, NULL, err);
}

knut_status knut_graph__falkor_cmd_append_lens(knut_buf *b, int argc, const char *const *argv,
                                               const size_t *lens, knut_error *err)
{
    knut_buf_printf(b, "*%d\r\n", argc);
    for (int i = 0; i < argc; i++) {
        size_t n = lens ? lens[i] : strlen(argv[i]);
        knut_buf_printf(b, "$%zu\r\n", n);
        knut_buf_append(b, argv[i], n);
        knut_buf_append(b, "\r\n", 2);
    }
    return knut_buf_check(b, err);
}

/* ---- server errors ----------------------------------------------------- */

/* FalkorDB's error texts knut acts on, the one place they are matched. */
static const struct {
    const char *text;
    int anywhere; /* 0: the message starts with it (after "ERR ") */
    knut_graph_falkor_error_kind kind;
} server_errors[] = {
    {"already indexed", 1, KNUT_GRAPH_FALKOR_ERR_INDEX_EXISTS},  /* Attribute 'k' is ... */
    {"empty key", 1, KNUT_GRAPH_FALKOR_ERR_EMPTY_KEY},           /* Invalid graph operation on */
    {"errMsg: ", 0, KNUT_GRAPH_FALKOR_ERR_SYNTAX},               /* the parser's report */
    {"Query timed out", 0, KNUT_GRAPH_FALKOR_ERR_TIMEOUT},
    {"Query's mem consumption exceeded capacity", 0, KNUT_GRAPH_FALKOR_ERR_OOM},
    {"OOM ", 0, KNUT_GRAPH_FALKOR_ERR_OOM},                      /* the server's maxmemory */
    {"unknown command", 0, KNUT_GRAPH_FALKOR_ERR_UNKNOWN_COMMAND}, /* no graph module */
    /* the rows' values, refused: the same request with other rows runs */
    {"constraint violation", 1, KNUT_GRAPH_FALKOR_ERR_VALUE},  /* unique constraint ... */
    {"Property values can only be", 0, KNUT_GRAPH_FALKOR_ERR_VALUE},
    {"Cannot merge ", 0, KNUT_GRAPH_FALKOR_ERR_VALUE},          /* ... using null property value */
    {"Type mismatch", 0, KNUT_GRAPH_FALKOR_ERR_VALUE},
    {"Float overflow", 0, KNUT_GRAPH_FALKOR_ERR_VALUE},
    {"Failed to parse query parameter", 0, KNUT_GRAPH_FALKOR_ERR_VALUE},
};

int knut_graph__falkor_error_kind(const char *msg, size_t len)
{
    if (len >= 4 && memcmp(msg, "ERR ", 4) == 0) {
        msg += 4;
        len -= 4;
    }
    for (size_t i = 0; i < sizeof server_errors / sizeof server_errors[0]; i++) {
        size_t n = strlen(server_errors[i].text);
        for (size_t at = 0; at + n <= len; at++) {
            if (memcmp(msg + at, server_errors[i].text, n) == 0)
                return server_errors[i].kind;
            if (!server_errors[i].anywhere)
                break;
        }
    }
    return KNUT_GRAPH_FALKOR_ERR_OTHER;
}

knut_status knut_graph__falkor_server_error(knut_error *err, const char *peer, const char *what,
                                            const char *msg, size_t len)
{
    knut_status st = knut_error_set(err, KNUT_EPEER, "%s: %s%s%.*s", peer, what ? what : "",
                                    what ? ": " : "", (int)len, msg);
    if (err)
        err->detail = knut_graph__falkor_error_kind(msg, len);
    return st;
}
