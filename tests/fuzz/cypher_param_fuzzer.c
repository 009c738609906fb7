/*
 * Fuzz target for the Cypher escapers, the part of the renderer that stands
 * between user data and FalkorDB's parser. Any bytes must either be refused
 * (and then really hold a NUL, invalid UTF-8 or a backtick) or render to a
 * literal that a small re-implementation of FalkorDB's parameter string
 * rules reads back to exactly the input, with no quote left unescaped
 * before the closing one. Doubles (the input's first 8 bytes) must render
 * to text that reads back to the same value and keeps its double type.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "knut/graph.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* FalkorDB's string rules: \a \b \f \n \r \t \v \\ \' \" \? are escapes,
 * any other backslash pair stays as written; the opening quote ends it.
 * Returns the decoded length, or -1 if the literal is malformed or the
 * closing quote is not the last byte. */
static long unquote(const char *s, size_t len, char *out)
{
    size_t o = 0;
    if (len < 2 || s[0] != '\'')
        return -1;
    for (size_t i = 1; i < len; i++) {
        char c = s[i];
        if (c == '\'')
            return i == len - 1 ? (long)o : -1;
        if (c != '\\') {
            out[o++] = c;
            continue;
        }
        if (++i >= len)
            return -1;
        const char *from = "abfnrtv\\'\"?";
        const char *to = "\a\b\f\n\r\t\v\\'\"?";
        const char *hit = strchr(from, s[i]);
        if (hit != NULL && s[i] != '\0') {
            out[o++] = to[hit - from];
        } else {
            out[o++] = '\\';
            out[o++] = s[i];
        }
    }
    return -1; /* no closing quote */
}

static void check_string(const uint8_t *data, size_t size)
{
    knut_buf b = KNUT_BUF_INIT;
    knut_status st = knut_graph_cypher_string(&b, (const char *)data, size, NULL);
    int clean = memchr(data, 0, size) == NULL && knut_arrow_utf8_valid(data, (int64_t)size);
    if ((st == KNUT_OK) != clean)
        abort();
    if (st == KNUT_OK) {
        char *dec = malloc(b.len + 1);
        long n = unquote(b.data, b.len, dec);
        if (n != (long)size || memcmp(dec, data, size) != 0)
            abort();
        /* one line: raw line breaks would split logged commands */
        if (memchr(b.data, '\n', b.len) || memchr(b.data, '\r', b.len))
            abort();
        free(dec);
    } else if (b.len != 0) {
        abort(); /* a refusal leaves the buffer as it was */
    }
    knut_buf_reset(&b);
}

static void check_ident(const uint8_t *data, size_t size)
{
    knut_buf b = KNUT_BUF_INIT;
    knut_status st = knut_graph_cypher_ident(&b, (const char *)data, size, "label", NULL);
    int clean = size > 0 && memchr(data, 0, size) == NULL && memchr(data, '`', size) == NULL &&
                knut_arrow_utf8_valid(data, (int64_t)size);
    if ((st == KNUT_OK) != clean)
        abort();
    if (st == KNUT_OK && (b.len != size + 2 || b.data[0] != '`' || b.data[b.len - 1] != '`' ||
                          memcmp(b.data + 1, data, size) != 0))
        abort();
    knut_buf_reset(&b);
}

static void check_double(const uint8_t *data, size_t size)
{
    double d;
    knut_arrow_builder *bld = NULL;
    struct ArrowArray arr = {0};
    struct ArrowSchema sch = {0};
    knut_arrow_view v;
    knut_buf b = KNUT_BUF_INIT;
    if (size < sizeof(d))
        return;
    memcpy(&d, data, sizeof(d));
    if (knut_arrow_builder_new_simple(&bld, KNUT_ARROW_DOUBLE, "d", NULL) != KNUT_OK)
        return;
    if (knut_arrow_builder_append_double(bld, d, NULL) != KNUT_OK ||
        knut_arrow_builder_finish(bld, &arr, &sch, NULL) != KNUT_OK ||
        knut_arrow_view_init(&v, &sch, &arr, NULL) != KNUT_OK)
        abort();
    knut_status st = knut_graph_cypher_value(&b, &v, 0, NULL, NULL);
    if ((st == KNUT_OK) == (isnan(d) != 0))
        abort();
    if (st == KNUT_OK) {
        char *end;
        double back = strtod(b.data, &end);
        if (*end != '\0' || back != d || signbit(back) != signbit(d))
            abort();
        /* a '.' or an exponent, or FalkorDB reads an integer */
        if (strpbrk(b.data, ".e") == NULL)
            abort();
    }
    knut_arrow_view_reset(&v);
    knut_arrow_array_release(&arr);
    knut_arrow_schema_release(&sch);
    knut_arrow_builder_free(bld);
    knut_buf_reset(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 16)
        return 0;
    check_string(data, size);
    check_ident(data, size);
    check_double(data, size);
    return 0;
}
