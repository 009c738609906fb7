/*
 * Table metadata, part one: the path-keeping JSON getters every metadata
 * field is read through, and schemas with their nested types. Nested types
 * become fields with children: a struct's fields, a list's one "element",
 * a map's "key" and "value", each carrying the id the JSON gives it, so a
 * scan can match every column, nested or not, by id.
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

static const char *jtype_name(const json_t *j)
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
                                         jtype_name(v));
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

/* ---- schemas ------------------------------------------------------------ */

static void field_clear(knut_iceberg_field *f)
{
    for (size_t i = 0; i < f->n_children; i++)
        field_clear(&f->children[i]);
    free(f->children);
    free(f->name);
    free(f->type);
    memset(f, 0, sizeof *f);
}

void knut_iceberg__schema_clear(knut_iceberg_schema *s)
{
    for (size_t i = 0; i < s->n_fields; i++)
        field_clear(&s->fields[i]);
    free(s->fields);
    memset(s, 0, sizeof *s);
}

static knut_status type_parse(knut_iceberg__jctx *c, json_t *t, knut_iceberg_field *f, int depth);

/* The list of struct fields in j["fields"] into *out / *n. */
static knut_status struct_fields(knut_iceberg__jctx *c, json_t *j, int depth,
                                 knut_iceberg_field **out, size_t *n)
{
    json_t *arr;
    knut_status st = knut_iceberg__jget(c, j, "fields", 1, JSON_ARRAY, &arr);
    if (st != KNUT_OK)
        return st;
    size_t count = json_array_size(arr);
    if (count && !(*out = calloc(count, sizeof **out)))
        return knut_iceberg__joom(c);
    *n = count; /* zeroed slots free cleanly if a later one fails */
    size_t m0 = knut_iceberg__jpush_key(c, "fields");
    for (size_t i = 0; i < count && st == KNUT_OK; i++) {
        size_t m1 = knut_iceberg__jpush_index(c, i);
        json_t *fj = json_array_get(arr, i);
        knut_iceberg_field *f = &(*out)[i];
        int64_t id = 0;
        if (!json_is_object(fj))
            st = knut_iceberg__jfail(c, KNUT_EPARSE, "expected an object, got %s", jtype_name(fj));
        if (st == KNUT_OK)
            st = knut_iceberg__jint(c, fj, "id", 1, INT32_MIN, INT32_MAX, &id);
        f->id = (int32_t)id;
        if (st == KNUT_OK)
            st = knut_iceberg__jstr(c, fj, "name", 1, &f->name);
        if (st == KNUT_OK)
            st = knut_iceberg__jbool(c, fj, "required", 1, &f->required);
        if (st == KNUT_OK) {
            size_t m2 = knut_iceberg__jpush_key(c, "type");
            json_t *t = json_object_get(fj, "type");
            st = t ? type_parse(c, t, f, depth + 1) : knut_iceberg__jfail(c, KNUT_EPARSE, "missing");
            if (st == KNUT_OK)
                knut_iceberg__jpop(c, m2);
        }
        if (st == KNUT_OK)
            knut_iceberg__jpop(c, m1);
    }
    if (st == KNUT_OK)
        knut_iceberg__jpop(c, m0);
    return st;
}

/* The child of a list or map: name, id from id_key, its type in type_key. */
static knut_status child_parse(knut_iceberg__jctx *c, json_t *t, knut_iceberg_field *ch,
                               const char *name, const char *id_key, const char *type_key,
                               const char *required_key, int depth)
{
    int64_t id = 0;
    knut_status st = knut_iceberg__jint(c, t, id_key, 1, INT32_MIN, INT32_MAX, &id);
    if (st != KNUT_OK)
        return st;
    ch->id = (int32_t)id;
    if (!(ch->name = strdup(name)))
        return knut_iceberg__joom(c);
    ch->required = 1; /* map keys always are */
    if (required_key && (st = knut_iceberg__jbool(c, t, required_key, 1, &ch->required)) != KNUT_OK)
        return st;
    size_t mark = knut_iceberg__jpush_key(c, type_key);
    json_t *ct = json_object_get(t, type_key);
    st = ct ? type_parse(c, ct, ch, depth + 1) : knut_iceberg__jfail(c, KNUT_EPARSE, "missing");
    if (st == KNUT_OK)
        knut_iceberg__jpop(c, mark);
    return st;
}

/* A type (the path is at it): a primitive string kept as written, or a
 * struct/list/map object. */
static knut_status type_parse(knut_iceberg__jctx *c, json_t *t, knut_iceberg_field *f, int depth)
{
    if (depth > KNUT_ICEBERG__DEPTH_MAX)
        return knut_iceberg__jfail(c, KNUT_ETOOBIG, "types nested deeper than %d levels",
                                   KNUT_ICEBERG__DEPTH_MAX);
    if (json_is_string(t)) {
        const char *name = json_string_value(t);
        if (json_string_length(t) == 0)
            return knut_iceberg__jfail(c, KNUT_EPARSE, "empty type name");
        /* Nested types are objects; the bare word would read as a nested
         * type with no children. */
        if (strcmp(name, "struct") == 0 || strcmp(name, "list") == 0 || strcmp(name, "map") == 0)
            return knut_iceberg__jfail(c, KNUT_EPARSE, "'%s' is a nested type: expected an object",
                                       name);
        if (!(f->type = strdup(name)))
            return knut_iceberg__joom(c);
        return KNUT_OK;
    }
    if (!json_is_object(t))
        return knut_iceberg__jfail(c, KNUT_EPARSE, "expected a type name or object, got %s",
                                   jtype_name(t));
    char *kind = NULL;
    knut_status st = knut_iceberg__jstr(c, t, "type", 1, &kind);
    if (st != KNUT_OK)
        return st;
    f->type = kind;
    if (strcmp(kind, "struct") == 0)
        return struct_fields(c, t, depth, &f->children, &f->n_children);
    int is_list = strcmp(kind, "list") == 0;
    if (!is_list && strcmp(kind, "map") != 0) {
        size_t mark = knut_iceberg__jpush_key(c, "type");
        st = knut_iceberg__jfail(c, KNUT_EPARSE, "unknown nested type '%.64s'", kind);
        knut_iceberg__jpop(c, mark);
        return st;
    }
    if (!(f->children = calloc(is_list ? 1 : 2, sizeof *f->children)))
        return knut_iceberg__joom(c);
    f->n_children = is_list ? 1 : 2;
    if (is_list)
        return child_parse(c, t, &f->children[0], "element", "element-id", "element",
                           "element-required", depth);
    st = child_parse(c, t, &f->children[0], "key", "key-id", "key", NULL, depth);
    if (st == KNUT_OK)
        st = child_parse(c, t, &f->children[1], "value", "value-id", "value", "value-required",
                         depth);
    return st;
}

knut_status knut_iceberg__schema_parse(knut_iceberg__jctx *c, json_t *j, int32_t default_id,
                                       knut_iceberg_schema *out)
{
    memset(out, 0, sizeof *out);
    if (!json_is_object(j))
        return knut_iceberg__jfail(c, KNUT_EPARSE, "expected an object, got %s", jtype_name(j));
    /* The struct marker is optional in practice (old Java wrote it, every
     * writer does now); if given it must be "struct". */
    json_t *kind = json_object_get(j, "type");
    if (kind && !(json_is_string(kind) && strcmp(json_string_value(kind), "struct") == 0)) {
        size_t mark = knut_iceberg__jpush_key(c, "type");
        knut_status st = knut_iceberg__jfail(c, KNUT_EPARSE, "a schema must be a struct");
        knut_iceberg__jpop(c, mark);
        return st;
    }
    int64_t id = default_id;
    knut_status st = knut_iceberg__jint(c, j, "schema-id", c->version >= 2, INT32_MIN, INT32_MAX,
                                        &id);
    out->schema_id = (int32_t)id;
    if (st == KNUT_OK)
        st = struct_fields(c, j, 0, &out->fields, &out->n_fields);
    return st;
}
