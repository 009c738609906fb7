/*
 * The reading context of table metadata: JSON getters that keep the path
 * of the value being read, so every error names the file and the field
 * ("t.json: snapshots[2].summary.operation: missing"), and refuse the
 * wrong JSON type or an out-of-range integer the same way everywhere.
 */
#include "metadata_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the reading context ------------------------------------------------ */

static size_t jpush(knut_iceberg__jctx *c, const char *fmt, ...) KNUT_PRINTF(2, 3);

static size_t jpush(knut_iceberg__jctx *c, const char *fmt, ...)
{
    size_t mark = c->len;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(c->path + c->len, sizeof c->path - c->len, fmt, ap);
    va_end(ap);
    /* A path too long for the buffer is cut; the message then shows its
     * start, which is still the useful part. */
    if (n > 0)
        c->len += (size_t)n < sizeof c->path - c->len ? (size_t)n : sizeof c->path - 1 - c->len;
    return mark;
}

size_t knut_iceberg__jpush_key(knut_iceberg__jctx *c, const char *key)
{
    return jpush(c, "%s%s", c->len ? "." : "", key);
}

size_t knut_iceberg__jpush_index(knut_iceberg__jctx *c, size_t i)
{
    return jpush(c, "[%zu]", i);
}

void knut_iceberg__jpop(knut_iceberg__jctx *c, size_t mark)
{
    c->len = mark;
    c->path[mark] = '\0';
}

knut_status knut_iceberg__jfail(knut_iceberg__jctx *c, knut_status code, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const char *name = c->name ? c->name : "(input)";
    if (c->len == 0)
        return knut_error_set_at(c->err, code, name, 0, 0, "%s", msg);
    return knut_error_set_at(c->err, code, name, 0, 0, "%s: %s", c->path, msg);
}

knut_status knut_iceberg__joom(knut_iceberg__jctx *c)
{
    return knut_error_set(c->err, KNUT_ENOMEM, "%s: out of memory", c->name ? c->name : "(input)");
}

const char *knut_iceberg__jtype_name(const json_t *j)
{
    switch (json_typeof(j)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "a list";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a number with a fraction";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    case JSON_NULL: return "null";
    }
    return "?";
}

/* obj[key] with the path pointing at it; NULL (path popped) when absent. */
static json_t *member(knut_iceberg__jctx *c, json_t *obj, const char *key, size_t *mark)
{
    *mark = knut_iceberg__jpush_key(c, key);
    json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v)) {
        knut_iceberg__jpop(c, *mark);
        return NULL;
    }
    return v;
}

static knut_status missing(knut_iceberg__jctx *c, const char *key)
{
    size_t mark = knut_iceberg__jpush_key(c, key);
    knut_status st = knut_iceberg__jfail(c, KNUT_EPARSE, "missing");
    knut_iceberg__jpop(c, mark);
    return st;
}

static knut_status wrong_type(knut_iceberg__jctx *c, size_t mark, const char *want,
                              const json_t *v)
{
    knut_status st = knut_iceberg__jfail(c, KNUT_EPARSE, "expected %s, got %s", want,
                                         knut_iceberg__jtype_name(v));
    knut_iceberg__jpop(c, mark);
    return st;
}

knut_status knut_iceberg__jint(knut_iceberg__jctx *c, json_t *obj, const char *key, int required,
                               int64_t min, int64_t max, int64_t *out)
{
    size_t mark;
    json_t *v = member(c, obj, key, &mark);
    if (!v)
        return required ? missing(c, key) : KNUT_OK;
    if (!json_is_integer(v))
        return wrong_type(c, mark, "an integer", v);
    json_int_t x = json_integer_value(v);
    if (x < min || x > max) {
        knut_status st = knut_iceberg__jfail(c, KNUT_EPARSE, "%lld is out of range", (long long)x);
        knut_iceberg__jpop(c, mark);
        return st;
    }
    *out = (int64_t)x;
    knut_iceberg__jpop(c, mark);
    return KNUT_OK;
}

knut_status knut_iceberg__jstr(knut_iceberg__jctx *c, json_t *obj, const char *key, int required,
                               char **out)
{
    size_t mark;
    json_t *v = member(c, obj, key, &mark);
    if (!v)
        return required ? missing(c, key) : KNUT_OK;
    if (!json_is_string(v))
        return wrong_type(c, mark, "a string", v);
    knut_iceberg__jpop(c, mark);
    char *s = strdup(json_string_value(v));
    if (!s)
        return knut_iceberg__joom(c);
    free(*out);
    *out = s;
    return KNUT_OK;
}

knut_status knut_iceberg__jbool(knut_iceberg__jctx *c, json_t *obj, const char *key,
                                int required, int *out)
{
    size_t mark;
    json_t *v = member(c, obj, key, &mark);
    if (!v)
        return required ? missing(c, key) : KNUT_OK;
    if (!json_is_boolean(v))
        return wrong_type(c, mark, "true or false", v);
    *out = json_is_true(v);
    knut_iceberg__jpop(c, mark);
    return KNUT_OK;
}

knut_status knut_iceberg__jget(knut_iceberg__jctx *c, json_t *obj, const char *key, int required,
                               json_type want, json_t **out)
{
    *out = NULL;
    size_t mark;
    json_t *v = member(c, obj, key, &mark);
    if (!v)
        return required ? missing(c, key) : KNUT_OK;
    if (json_typeof(v) != want)
        return wrong_type(c, mark, want == JSON_ARRAY ? "a list" : "an object", v);
    size_t n = want == JSON_ARRAY ? json_array_size(v) : json_object_size(v);
    if (n > KNUT_ICEBERG__ITEMS_MAX) {
        knut_status st = knut_iceberg__jfail(c, KNUT_ETOOBIG, "%zu items, more than the %d read",
                                             n, KNUT_ICEBERG__ITEMS_MAX);
        knut_iceberg__jpop(c, mark);
        return st;
    }
    knut_iceberg__jpop(c, mark);
    *out = v;
    return KNUT_OK;
}
