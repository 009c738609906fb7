/*
 * Table metadata: schemas with their nested types, and partition specs.
 * Nested types become fields with children: a struct's fields, a list's
 * one "element", a map's "key" and "value", each carrying the id the JSON
 * gives it, so a scan can match every column, nested or not, by id. v1's
 * single "schema" and "partition-spec" become schemas[0] and spec 0.
 */
#include "metadata_int.h"

#include <stdlib.h>
#include <string.h>

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
            st = knut_iceberg__jfail(c, KNUT_EPARSE, "expected an object, got %s", knut_iceberg__jtype_name(fj));
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
                                   knut_iceberg__jtype_name(t));
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
        return knut_iceberg__jfail(c, KNUT_EPARSE, "expected an object, got %s", knut_iceberg__jtype_name(j));
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

/* ---- the table's schemas ------------------------------------------------ */

knut_status knut_iceberg__schemas_parse(knut_iceberg__jctx *c, json_t *root, knut_iceberg_table *t)
{
    json_t *arr;
    knut_status st = knut_iceberg__jget(c, root, "schemas", c->version >= 2, JSON_ARRAY, &arr);
    if (st != KNUT_OK)
        return st;
    if (!arr) { /* v1: the single "schema" is schemas[0] */
        json_t *one = json_object_get(root, "schema");
        if (!one || json_is_null(one))
            return knut_iceberg__jfail(c, KNUT_EPARSE, "missing both schemas and schema");
        if (!(t->schemas = calloc(1, sizeof *t->schemas)))
            return knut_iceberg__joom(c);
        t->n_schemas = 1;
        size_t mark = knut_iceberg__jpush_key(c, "schema");
        st = knut_iceberg__schema_parse(c, one, 0, &t->schemas[0]);
        if (st == KNUT_OK)
            knut_iceberg__jpop(c, mark);
        t->current_schema_id = t->schemas[0].schema_id;
        return st;
    }
    int64_t cur = 0;
    if ((st = knut_iceberg__jint(c, root, "current-schema-id", 1, INT32_MIN, INT32_MAX, &cur)))
        return st;
    t->current_schema_id = (int32_t)cur;
    size_t n = json_array_size(arr);
    if (n && !(t->schemas = calloc(n, sizeof *t->schemas)))
        return knut_iceberg__joom(c);
    t->n_schemas = n;
    size_t m0 = knut_iceberg__jpush_key(c, "schemas");
    for (size_t i = 0; i < n && st == KNUT_OK; i++) {
        size_t m1 = knut_iceberg__jpush_index(c, i);
        st = knut_iceberg__schema_parse(c, json_array_get(arr, i), 0, &t->schemas[i]);
        if (st == KNUT_OK)
            knut_iceberg__jpop(c, m1);
    }
    if (st == KNUT_OK)
        knut_iceberg__jpop(c, m0);
    return st;
}

/* A JSON object of strings into keys/values, in file order; skip names a
 * key left out (a snapshot's "operation"). The path is at the object. */

/* ---- partition specs ---------------------------------------------------- */

void knut_iceberg__spec_clear(knut_iceberg_spec *s)
{
    for (size_t i = 0; i < s->n_fields; i++) {
        free(s->fields[i].name);
        free(s->fields[i].transform);
    }
    free(s->fields);
}

/* The fields list of a spec (the path is at the list). */
static knut_status spec_fields(knut_iceberg__jctx *c, json_t *arr, knut_iceberg_spec *s)
{
    size_t n = json_array_size(arr);
    if (n && !(s->fields = calloc(n, sizeof *s->fields)))
        return knut_iceberg__joom(c);
    s->n_fields = n;
    knut_status st = KNUT_OK;
    for (size_t i = 0; i < n && st == KNUT_OK; i++) {
        size_t mark = knut_iceberg__jpush_index(c, i);
        json_t *fj = json_array_get(arr, i);
        knut_iceberg_partition_field *f = &s->fields[i];
        /* v1 specs may lack field ids: Java numbers them 1000, 1001, ... */
        int64_t source = 0, field = 1000 + (int64_t)i;
        if (!json_is_object(fj))
            st = knut_iceberg__jfail(c, KNUT_EPARSE, "expected an object");
        if (st == KNUT_OK)
            st = knut_iceberg__jint(c, fj, "source-id", 1, INT32_MIN, INT32_MAX, &source);
        if (st == KNUT_OK)
            st = knut_iceberg__jint(c, fj, "field-id", c->version >= 2, INT32_MIN, INT32_MAX,
                                    &field);
        f->source_id = (int32_t)source;
        f->field_id = (int32_t)field;
        if (st == KNUT_OK)
            st = knut_iceberg__jstr(c, fj, "name", 1, &f->name);
        if (st == KNUT_OK)
            st = knut_iceberg__jstr(c, fj, "transform", 1, &f->transform);
        if (st == KNUT_OK)
            knut_iceberg__jpop(c, mark);
    }
    return st;
}

knut_status knut_iceberg__specs_parse(knut_iceberg__jctx *c, json_t *root, knut_iceberg_table *t)
{
    json_t *arr, *v1 = NULL;
    knut_status st = knut_iceberg__jget(c, root, "partition-specs", c->version >= 2, JSON_ARRAY,
                                        &arr);
    if (st == KNUT_OK && !arr) /* v1 without the list: the one spec's fields */
        st = knut_iceberg__jget(c, root, "partition-spec", 1, JSON_ARRAY, &v1);
    if (st != KNUT_OK)
        return st;
    if (v1) {
        if (!(t->specs = calloc(1, sizeof *t->specs)))
            return knut_iceberg__joom(c);
        t->n_specs = 1;
        size_t mark = knut_iceberg__jpush_key(c, "partition-spec");
        st = spec_fields(c, v1, &t->specs[0]);
        if (st == KNUT_OK)
            knut_iceberg__jpop(c, mark);
        t->default_spec_id = 0;
        return st;
    }
    int64_t def = 0;
    if ((st = knut_iceberg__jint(c, root, "default-spec-id", 1, INT32_MIN, INT32_MAX, &def)))
        return st;
    t->default_spec_id = (int32_t)def;
    size_t n = json_array_size(arr);
    if (n && !(t->specs = calloc(n, sizeof *t->specs)))
        return knut_iceberg__joom(c);
    t->n_specs = n;
    size_t m0 = knut_iceberg__jpush_key(c, "partition-specs");
    for (size_t i = 0; i < n && st == KNUT_OK; i++) {
        size_t m1 = knut_iceberg__jpush_index(c, i);
        json_t *sj = json_array_get(arr, i), *fields;
        int64_t id = 0;
        if (!json_is_object(sj))
            st = knut_iceberg__jfail(c, KNUT_EPARSE, "expected an object");
        if (st == KNUT_OK)
            st = knut_iceberg__jint(c, sj, "spec-id", 1, INT32_MIN, INT32_MAX, &id);
        t->specs[i].spec_id = (int32_t)id;
        if (st == KNUT_OK)
            st = knut_iceberg__jget(c, sj, "fields", 1, JSON_ARRAY, &fields);
        if (st == KNUT_OK) {
            size_t m2 = knut_iceberg__jpush_key(c, "fields");
            st = spec_fields(c, fields, &t->specs[i]);
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
