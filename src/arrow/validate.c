/*
 * Validation of arrays from outside (pyarrow, DuckDB, bytes from disk or the
 * network through the IPC reader). The C Data Interface carries no buffer
 * sizes, so checks relate lengths to each other: offsets to the data they
 * index, lists to their child, structs to their children. Every message
 * names the column path, "column 'a.b': offsets not monotonic at row 17".
 */
#include "arrow_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define VALIDATE_MAX_DEPTH 64
#define PATH_MAX_LEN 256

typedef struct vctx {
    unsigned level;
    int utf8;
    knut_error *err;
    char path[PATH_MAX_LEN];
    size_t path_len;
} vctx;

static knut_status fail_code(vctx *c, knut_status code, const char *fmt, ...)
    KNUT_PRINTF(3, 4);

static knut_status fail_code(vctx *c, knut_status code, const char *fmt, ...)
{
    char msg[KNUT_ERROR_MSG_MAX / 2];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (c->path_len == 0)
        return knut_error_set(c->err, code, "array: %s", msg);
    return knut_error_set(c->err, code, "column '%s': %s", c->path, msg);
}

#define fail(c, ...) fail_code((c), KNUT_EINVAL, __VA_ARGS__)

/* Appends ".name" to the path; returns the old length to restore. */
static size_t path_push(vctx *c, const char *name, int64_t index)
{
    size_t old = c->path_len;
    char part[96];
    if (name != NULL && name[0] != '\0')
        snprintf(part, sizeof(part), "%s", name);
    else
        snprintf(part, sizeof(part), "[%lld]", (long long)index);
    int n = snprintf(c->path + old, sizeof(c->path) - old, "%s%s", old > 0 ? "." : "", part);
    if (n > 0)
        c->path_len = old + (size_t)n < sizeof(c->path) ? old + (size_t)n : sizeof(c->path) - 1;
    return old;
}

static void path_pop(vctx *c, size_t old)
{
    c->path_len = old;
    c->path[old] = '\0';
}

/*
 * Set bits in [start, start + n) of an LSB-first bitmap. FULL validation
 * counts every bitmap of every batch the IPC reader produces, so this goes
 * a 64-bit word at a time; the partial first byte (start % 8) and the
 * bytes after the last whole word are masked so that no bit outside the
 * range is counted and no byte past the last one holding a bit in the
 * range is read (a bitmap may end exactly there).
 */
static int64_t count_valid(const uint8_t *bits, int64_t start, int64_t n)
{
    if (n <= 0)
        return 0;
    const uint8_t *p = bits + start / 8;
    int64_t valid = 0;
    int head = (int)(start % 8);
    if (head != 0) {
        int64_t take = 8 - head < n ? 8 - head : n;
        valid += __builtin_popcount((unsigned)(*p >> head) & ((1u << take) - 1u));
        p++;
        n -= take;
    }
    for (; n >= 64; p += 8, n -= 64) {
        uint64_t w;
        memcpy(&w, p, sizeof w); /* unaligned: the offset may start anywhere */
        valid += __builtin_popcountll(w);
    }
    for (; n >= 8; p++, n -= 8)
        valid += __builtin_popcount(*p);
    if (n > 0)
        valid += __builtin_popcount((unsigned)*p & ((1u << n) - 1u));
    return valid;
}

int knut_arrow_utf8_valid(const uint8_t *s, int64_t len)
{
    int64_t i = 0;
    while (i < len) {
        uint8_t b = s[i];
        if (b < 0x80) {
            i++;
            continue;
        }
        int n;
        uint32_t cp, min;
        if ((b & 0xe0) == 0xc0) {
            n = 1, cp = b & 0x1f, min = 0x80;
        } else if ((b & 0xf0) == 0xe0) {
            n = 2, cp = b & 0x0f, min = 0x800;
        } else if ((b & 0xf8) == 0xf0) {
            n = 3, cp = b & 0x07, min = 0x10000;
        } else {
            return 0;
        }
        if (len - i <= n)
            return 0;
        for (int k = 1; k <= n; k++) {
            if ((s[i + k] & 0xc0) != 0x80)
                return 0;
            cp = (cp << 6) | (s[i + k] & 0x3f);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return 0;
        i += n + 1;
    }
    return 1;
}

/*
 * First row i in [0, n) with offsets[start + i + 1] < offsets[start + i],
 * or -1. FULL validation runs this over every offsets buffer of every IPC
 * batch, so blocks are scanned without a branch per row (which the
 * compiler can vectorise) and only a block that has a decrease is walked
 * again to name the row.
 */
static int64_t first_decrease(const uint8_t *off, int width, int64_t start, int64_t n)
{
    enum { BLOCK = 1024 };
    for (int64_t b = 0; b < n; b += BLOCK) {
        int64_t m = n - b < BLOCK ? n - b : BLOCK;
        int bad = 0;
        if (width == 8) {
            const int64_t *o = (const int64_t *)(const void *)off + start + b;
            for (int64_t i = 0; i < m; i++)
                bad |= o[i + 1] < o[i];
        } else {
            const int32_t *o = (const int32_t *)(const void *)off + start + b;
            for (int64_t i = 0; i < m; i++)
                bad |= o[i + 1] < o[i];
        }
        if (!bad)
            continue;
        for (int64_t i = 0; i < m; i++)
            if (knut_arrow__offset_at(off, width, start + b + i + 1) <
                knut_arrow__offset_at(off, width, start + b + i))
                return b + i;
    }
    return -1;
}

/* Offsets (var-length and list types) from DEFAULT up. */
static knut_status check_offsets(vctx *c, const knut_arrow_type_info *t,
                                 const struct ArrowArray *a)
{
    int ow = knut_arrow__offset_width(t->type);
    const uint8_t *off = a->buffers[1];
    const uint8_t *valid = a->null_count != 0 ? a->buffers[0] : NULL;
    if (a->length == 0)
        return KNUT_OK;
    int64_t first = knut_arrow__offset_at(off, ow, a->offset);
    int64_t last = knut_arrow__offset_at(off, ow, a->offset + a->length);
    if (first < 0)
        return fail(c, "first offset %lld is negative", (long long)first);
    if (last < first)
        return fail(c, "last offset %lld is before first offset %lld", (long long)last,
                    (long long)first);
    if (knut_arrow__is_list(t->type)) {
        if (last > a->children[0]->length)
            return fail(c, "offsets end at %lld past child length %lld", (long long)last,
                        (long long)a->children[0]->length);
    } else if (last > first && a->buffers[2] == NULL) {
        return fail(c, "offsets span %lld bytes but the data buffer is NULL",
                    (long long)(last - first));
    }
    if (c->level < KNUT_ARROW_VALIDATE_FULL)
        return KNUT_OK;

    int check_utf8 = c->utf8 && (t->type == KNUT_ARROW_UTF8 || t->type == KNUT_ARROW_LARGE_UTF8);
    if (!check_utf8) {
        int64_t row = first_decrease(off, ow, a->offset, a->length);
        if (row >= 0)
            return fail(c, "offsets not monotonic at row %lld", (long long)row);
        return KNUT_OK;
    }
    int64_t prev = first;
    for (int64_t i = 0; i < a->length; i++) {
        int64_t next = knut_arrow__offset_at(off, ow, a->offset + i + 1);
        if (next < prev)
            return fail(c, "offsets not monotonic at row %lld", (long long)i);
        if (check_utf8 && next > prev && (valid == NULL || knut_arrow_bit_get(valid, a->offset + i)) &&
            !knut_arrow_utf8_valid((const uint8_t *)a->buffers[2] + prev, next - prev))
            return fail(c, "invalid UTF-8 at row %lld", (long long)i);
        prev = next;
    }
    return KNUT_OK;
}

/* A dense union's type ids name its children, and each offset is a row of
 * the child it names (DEFAULT: the IPC writer copies these buffers). */
static knut_status check_union(vctx *c, const knut_arrow_type_info *t,
                               const struct ArrowArray *a)
{
    int child_of[KNUT_ARROW_UNION_MAX];
    for (int i = 0; i < KNUT_ARROW_UNION_MAX; i++)
        child_of[i] = -1;
    for (int32_t i = 0; i < t->n_type_ids; i++)
        child_of[(uint8_t)t->type_ids[i]] = (int)i;
    if (a->length > 0 && a->buffers[0] == NULL)
        return fail(c, "type ids buffer is NULL at length %lld", (long long)a->length);
    const int8_t *ids = a->buffers[0];
    const int32_t *off = a->buffers[1];
    for (int64_t i = 0; i < a->length; i++) {
        int8_t id = ids[a->offset + i];
        int k = id >= 0 ? child_of[id] : -1;
        if (k < 0)
            return fail(c, "type id %d at row %lld is not one of the union's", (int)id,
                        (long long)i);
        int32_t o = off[a->offset + i];
        if (o < 0 || o >= a->children[k]->length)
            return fail(c, "offset %d at row %lld is outside child %d (%lld rows)", (int)o,
                        (long long)i, k, (long long)a->children[k]->length);
    }
    return KNUT_OK;
}

/* Dictionary indices in range (FULL). */
static knut_status check_indices(vctx *c, const knut_arrow_type_info *t,
                                 const struct ArrowArray *a)
{
    knut_arrow_view v;
    memset(&v, 0, sizeof(v));
    v.type = *t;
    v.offset = a->offset;
    v.values = a->buffers[1];
    const uint8_t *valid = a->null_count != 0 ? a->buffers[0] : NULL;
    int64_t dict_len = a->dictionary->length;
    for (int64_t i = 0; i < a->length; i++) {
        if (valid != NULL && !knut_arrow_bit_get(valid, a->offset + i))
            continue;
        uint64_t u = knut_arrow_view_get_uint64(&v, i);
        int64_t s = knut_arrow_view_get_int64(&v, i);
        if ((t->type == KNUT_ARROW_UINT64 && u >= (uint64_t)dict_len) ||
            (t->type != KNUT_ARROW_UINT64 && (s < 0 || s >= dict_len)))
            return fail(c, "dictionary index %lld out of range [0, %lld) at row %lld",
                        (long long)s, (long long)dict_len, (long long)i);
    }
    return KNUT_OK;
}

static knut_status validate_rec(vctx *c, const struct ArrowSchema *s, const struct ArrowArray *a,
                                int depth)
{
    knut_arrow_type_info t;
    knut_error perr = KNUT_ERROR_INIT;
    knut_status st;
    if (depth > VALIDATE_MAX_DEPTH)
        return fail(c, "nested deeper than %d", VALIDATE_MAX_DEPTH);
    if (s == NULL || a == NULL)
        return fail(c, "schema or array is NULL");
    if (a->release == NULL)
        return fail(c, "array is released");
    if (knut_arrow_schema_parse_type(s, &t, &perr) != KNUT_OK)
        return fail_code(c, perr.code, "%s", perr.message);

    /* ---- MINIMAL: structure ---- */
    if (a->length < 0 || a->offset < 0 || a->offset > INT64_MAX - a->length - 1)
        return fail(c, "bad length %lld / offset %lld", (long long)a->length,
                    (long long)a->offset);
    if (a->null_count < -1 || a->null_count > a->length)
        return fail(c, "null_count %lld outside [-1, %lld]", (long long)a->null_count,
                    (long long)a->length);
    int nb = knut_arrow_type_n_buffers(t.type);
    if (a->n_buffers != nb)
        return fail(c, "%s array has %lld buffers, expected %d", knut_arrow_type_name(t.type),
                    (long long)a->n_buffers, nb);
    if (nb > 0 && a->buffers == NULL)
        return fail(c, "buffers pointer is NULL");
    if (a->n_children != s->n_children)
        return fail(c, "array has %lld children, schema has %lld", (long long)a->n_children,
                    (long long)s->n_children);
    if (a->n_children > 0 && a->children == NULL)
        return fail(c, "children pointer is NULL");
    if (t.type == KNUT_ARROW_DENSE_UNION && a->null_count != 0)
        return fail(c, "a union has no nulls of its own (null_count %lld)",
                    (long long)a->null_count);
    if (t.type != KNUT_ARROW_DENSE_UNION && nb >= 1 && a->null_count > 0 &&
        a->buffers[0] == NULL)
        return fail(c, "null_count %lld but no validity buffer", (long long)a->null_count);
    if (nb >= 2 && a->length > 0 && a->buffers[1] == NULL)
        return fail(c, "%s buffer is NULL at length %lld",
                    knut_arrow__offset_width(t.type) ? "offsets" : "values",
                    (long long)a->length);
    if ((s->dictionary == NULL) != (a->dictionary == NULL))
        return fail(c, "dictionary present in only one of schema and array");
    for (int64_t i = 0; i < a->n_children; i++) {
        if (a->children[i] == NULL)
            return fail(c, "child %lld is NULL", (long long)i);
        if (t.type == KNUT_ARROW_STRUCT && a->children[i]->length < a->offset + a->length)
            return fail(c, "child '%s' has %lld rows, struct needs %lld",
                        s->children[i]->name ? s->children[i]->name : "",
                        (long long)a->children[i]->length,
                        (long long)(a->offset + a->length));
    }

    /* ---- DEFAULT / FULL: contents ---- */
    if (c->level >= KNUT_ARROW_VALIDATE_DEFAULT && t.type == KNUT_ARROW_DENSE_UNION) {
        st = check_union(c, &t, a);
        if (st != KNUT_OK)
            return st;
    }
    if (c->level >= KNUT_ARROW_VALIDATE_DEFAULT && knut_arrow__offset_width(t.type) > 0) {
        st = check_offsets(c, &t, a);
        if (st != KNUT_OK)
            return st;
    }
    if (c->level >= KNUT_ARROW_VALIDATE_FULL && nb >= 1 && a->buffers[0] != NULL &&
        a->null_count > 0) {
        int64_t nulls = a->length - count_valid(a->buffers[0], a->offset, a->length);
        if (nulls != a->null_count)
            return fail(c, "null_count %lld but the bitmap has %lld nulls",
                        (long long)a->null_count, (long long)nulls);
    }

    for (int64_t i = 0; i < a->n_children; i++) {
        size_t old = path_push(c, s->children[i]->name, i);
        st = validate_rec(c, s->children[i], a->children[i], depth + 1);
        path_pop(c, old);
        if (st != KNUT_OK)
            return st;
    }
    if (a->dictionary != NULL) {
        size_t old = path_push(c, "<dictionary>", 0);
        st = validate_rec(c, s->dictionary, a->dictionary, depth + 1);
        path_pop(c, old);
        if (st != KNUT_OK)
            return st;
        if (c->level >= KNUT_ARROW_VALIDATE_FULL)
            return check_indices(c, &t, a);
    }
    return KNUT_OK;
}

knut_status knut_arrow_array_validate(const struct ArrowSchema *schema,
                                      const struct ArrowArray *array, unsigned level,
                                      knut_error *err)
{
    vctx c;
    memset(&c, 0, sizeof(c));
    c.level = level & 0xffu;
    c.utf8 = (level & KNUT_ARROW_VALIDATE_UTF8) != 0;
    c.err = err;
    if (c.level > KNUT_ARROW_VALIDATE_FULL)
        return knut_error_set(err, KNUT_EINVAL, "validate: unknown level %u", c.level);
    if (schema != NULL && schema->name != NULL && schema->name[0] != '\0')
        path_push(&c, schema->name, 0);
    return validate_rec(&c, schema, array, 0);
}
