/*
 * The guards in front of avro-c. avro-c decodes a record trusting its
 * bytes: a string length is malloc'd as read, an array block count is
 * appended item by item (a count of 2^62 zero-byte nulls costs no input
 * and unbounded memory), and a record type that contains itself is
 * instantiated forever. So every record is first walked here, against
 * the writer schema, without allocating; avro-c only ever sees bytes this
 * walk accepted, sliced to exactly the record's length.
 */
#include "iceberg_int.h"

#include <jansson.h>
#include <string.h>

/* Schema nodes walked by schema_check: a schema of named types used many
 * times over can be exponentially larger walked than written. */
#define SCHEMA_MAX_NODES 100000

int knut_iceberg__avro_varint(const uint8_t *p, size_t len, size_t *pos, int64_t *out)
{
    uint64_t u = 0;
    for (int i = 0; i < 10; i++) {
        if (*pos >= len)
            return -1;
        uint8_t b = p[(*pos)++];
        /* The 10th byte holds bit 63 only. */
        if (i == 9 && b > 1)
            return -1;
        u |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *out = (int64_t)((u >> 1) ^ (0 - (u & 1)));
            return 0;
        }
    }
    return -1;
}

/* ---- schema JSON ---------------------------------------------------------- */

/* Named types defined in a schema, walked in the JSON before avro-c sees
 * it: avro-c's parser leaks the second definition of a name (it returns
 * without freeing it). Names are compared without their namespace, which
 * refuses more than Avro does but nothing Iceberg writes (its record
 * names r2, r102, k117_v118 ... are unique, and a type used twice is
 * written once and then referred to by name). */
static int json_names(json_t *node, json_t *seen, int depth, const char **why)
{
    if (depth > 2 * KNUT_ICEBERG__AVRO_MAX_DEPTH) {
        *why = "the Avro schema is nested too deep";
        return -1;
    }
    if (json_is_array(node)) { /* a union */
        size_t i;
        json_t *v;
        json_array_foreach(node, i, v)
            if (json_names(v, seen, depth + 1, why) != 0)
                return -1;
        return 0;
    }
    if (!json_is_object(node))
        return 0;
    json_t *type = json_object_get(node, "type");
    if (!json_is_string(type))
        return type ? json_names(type, seen, depth + 1, why) : 0;
    const char *t = json_string_value(type);
    int named = strcmp(t, "record") == 0 || strcmp(t, "error") == 0 ||
                strcmp(t, "enum") == 0 || strcmp(t, "fixed") == 0;
    const char *name = json_string_value(json_object_get(node, "name"));
    if (named && name) {
        const char *dot = strrchr(name, '.');
        const char *bare = dot ? dot + 1 : name;
        if (json_object_get(seen, bare)) {
            *why = "the Avro schema defines a named type twice";
            return -1;
        }
        if (json_object_set_new(seen, bare, json_true()) != 0) {
            *why = "out of memory";
            return -1;
        }
    }
    if (strcmp(t, "record") == 0 || strcmp(t, "error") == 0) {
        size_t i;
        json_t *f;
        json_array_foreach(json_object_get(node, "fields"), i, f)
            if (json_is_object(f) &&
                json_names(json_object_get(f, "type"), seen, depth + 1, why) != 0)
                return -1;
        return 0;
    }
    if (strcmp(t, "array") == 0)
        return json_names(json_object_get(node, "items"), seen, depth + 1, why);
    if (strcmp(t, "map") == 0)
        return json_names(json_object_get(node, "values"), seen, depth + 1, why);
    return 0;
}

knut_status knut_iceberg__avro_schema_json_check(const char *json, size_t len, const char **why)
{
    json_error_t jerr;
    json_t *root = json_loadb(json, len, JSON_DECODE_ANY, &jerr);
    *why = NULL;
    if (!root) {
        *why = "not JSON";
        return KNUT_EPARSE;
    }
    json_t *seen = json_object();
    knut_status st = KNUT_OK;
    if (!seen) {
        *why = "out of memory";
        st = KNUT_ENOMEM;
    } else if (json_names(root, seen, 0, why) != 0) {
        st = strcmp(*why, "out of memory") == 0 ? KNUT_ENOMEM : KNUT_EPARSE;
    }
    json_decref(seen);
    json_decref(root);
    return st;
}

/* ---- schema ------------------------------------------------------------- */

typedef struct schema_walk {
    avro_schema_t path[KNUT_ICEBERG__AVRO_MAX_DEPTH + 1]; /* records being walked */
    int depth;
    size_t nodes;
    const char *why;
} schema_walk;

static knut_status schema_node(schema_walk *w, avro_schema_t s)
{
    if (++w->nodes > SCHEMA_MAX_NODES) {
        w->why = "the Avro schema is too large to walk";
        return KNUT_EUNSUPPORTED;
    }
    if (w->depth >= KNUT_ICEBERG__AVRO_MAX_DEPTH) {
        w->why = "the Avro schema is nested too deep";
        return KNUT_EUNSUPPORTED;
    }
    knut_status st = KNUT_OK;
    switch (avro_typeof(s)) {
    case AVRO_LINK: {
        avro_schema_t t = avro_schema_link_target(s);
        /* A named type met again inside itself: avro-c's generic values
         * would build it without end (and leak the reference cycle). */
        for (int i = 0; i < w->depth; i++)
            if (w->path[i] == t) {
                w->why = "recursive Avro schemas are not supported";
                return KNUT_EUNSUPPORTED;
            }
        return schema_node(w, t);
    }
    case AVRO_RECORD:
        w->path[w->depth++] = s;
        for (size_t i = 0; i < avro_schema_record_size(s) && st == KNUT_OK; i++)
            st = schema_node(w, avro_schema_record_field_get_by_index(s, (int)i));
        w->depth--;
        return st;
    case AVRO_ARRAY:
    case AVRO_MAP:
    case AVRO_UNION:
        w->path[w->depth++] = s;
        if (avro_typeof(s) == AVRO_ARRAY)
            st = schema_node(w, avro_schema_array_items(s));
        else if (avro_typeof(s) == AVRO_MAP)
            st = schema_node(w, avro_schema_map_values(s));
        else
            for (size_t i = 0; i < avro_schema_union_size(s) && st == KNUT_OK; i++)
                st = schema_node(w, avro_schema_union_branch(s, (int)i));
        w->depth--;
        return st;
    case AVRO_FIXED:
        if (avro_schema_fixed_size(s) < 0) {
            w->why = "an Avro fixed type has a negative size";
            return KNUT_EPARSE;
        }
        return KNUT_OK;
    default:
        return KNUT_OK;
    }
}

knut_status knut_iceberg__avro_schema_check(avro_schema_t schema, const char **why)
{
    schema_walk w = {.depth = 0, .nodes = 0, .why = NULL};
    knut_status st = schema_node(&w, schema);
    *why = w.why;
    return st;
}

/* ---- values ------------------------------------------------------------- */

typedef struct value_walk {
    const uint8_t *p;
    size_t len, pos;
    size_t budget; /* values left to visit */
    int depth;
    const char *why;
} value_walk;

static knut_status bad(value_walk *w, const char *why)
{
    w->why = why;
    return KNUT_EPARSE;
}

static knut_status take_long(value_walk *w, int64_t *v)
{
    if (knut_iceberg__avro_varint(w->p, w->len, &w->pos, v) != 0)
        return bad(w, "a truncated or overlong varint");
    return KNUT_OK;
}

/* A length-prefixed string or bytes value. */
static knut_status take_bytes(value_walk *w)
{
    int64_t n;
    if (take_long(w, &n) != KNUT_OK)
        return KNUT_EPARSE;
    if (n < 0 || (uint64_t)n > w->len - w->pos)
        return bad(w, "a string or bytes length past the end of the block");
    w->pos += (size_t)n;
    return KNUT_OK;
}

static knut_status value(value_walk *w, avro_schema_t s);

/* Array and map items: blocks of (count, [byte size], items) up to a 0
 * count. The value budget, not the count, bounds the loop. */
static knut_status items(value_walk *w, avro_schema_t item, int is_map)
{
    for (;;) {
        int64_t count, size;
        if (take_long(w, &count) != KNUT_OK)
            return KNUT_EPARSE;
        if (count == 0)
            return KNUT_OK;
        if (count < 0) {
            if (count == INT64_MIN)
                return bad(w, "an array or map block count out of range");
            count = -count;
            if (take_long(w, &size) != KNUT_OK)
                return KNUT_EPARSE;
            if (size < 0 || (uint64_t)size > w->len - w->pos)
                return bad(w, "an array or map block size past the end of the block");
        }
        for (int64_t i = 0; i < count; i++) {
            if (is_map && take_bytes(w) != KNUT_OK)
                return KNUT_EPARSE;
            knut_status st = value(w, item);
            if (st != KNUT_OK)
                return st;
        }
    }
}

static knut_status value(value_walk *w, avro_schema_t s)
{
    if (w->budget == 0) {
        w->why = "more values than the limit (for one record, or for the file's size)";
        return KNUT_ETOOBIG;
    }
    w->budget--;
    if (w->depth >= KNUT_ICEBERG__AVRO_MAX_DEPTH)
        return bad(w, "values nested too deep");
    size_t left = w->len - w->pos;
    int64_t v;
    knut_status st = KNUT_OK;
    switch (avro_typeof(s)) {
    case AVRO_NULL:
        return KNUT_OK;
    case AVRO_BOOLEAN:
        if (left < 1 || w->p[w->pos] > 1)
            return bad(w, "a boolean that is not 0 or 1");
        w->pos++;
        return KNUT_OK;
    case AVRO_INT32:
        if (take_long(w, &v) != KNUT_OK)
            return KNUT_EPARSE;
        if (v < INT32_MIN || v > INT32_MAX)
            return bad(w, "an int out of range");
        return KNUT_OK;
    case AVRO_INT64:
        return take_long(w, &v);
    case AVRO_FLOAT:
    case AVRO_DOUBLE: {
        size_t n = avro_typeof(s) == AVRO_FLOAT ? 4 : 8;
        if (left < n)
            return bad(w, "a float or double past the end of the block");
        w->pos += n;
        return KNUT_OK;
    }
    case AVRO_STRING:
    case AVRO_BYTES:
        return take_bytes(w);
    case AVRO_FIXED: {
        int64_t n = avro_schema_fixed_size(s);
        if (n < 0 || (uint64_t)n > left)
            return bad(w, "a fixed value past the end of the block");
        w->pos += (size_t)n;
        return KNUT_OK;
    }
    case AVRO_ENUM:
        if (take_long(w, &v) != KNUT_OK)
            return KNUT_EPARSE;
        if (v < 0 || v >= avro_schema_enum_number_of_symbols(s))
            return bad(w, "an enum index out of range");
        return KNUT_OK;
    case AVRO_UNION:
        if (take_long(w, &v) != KNUT_OK)
            return KNUT_EPARSE;
        if (v < 0 || (uint64_t)v >= avro_schema_union_size(s))
            return bad(w, "a union branch out of range");
        w->depth++;
        st = value(w, avro_schema_union_branch(s, (int)v));
        w->depth--;
        return st;
    case AVRO_RECORD:
        w->depth++;
        for (size_t i = 0; i < avro_schema_record_size(s) && st == KNUT_OK; i++)
            st = value(w, avro_schema_record_field_get_by_index(s, (int)i));
        w->depth--;
        return st;
    case AVRO_ARRAY:
    case AVRO_MAP:
        w->depth++;
        st = avro_typeof(s) == AVRO_ARRAY ? items(w, avro_schema_array_items(s), 0)
                                          : items(w, avro_schema_map_values(s), 1);
        w->depth--;
        return st;
    case AVRO_LINK:
        w->depth++;
        st = value(w, avro_schema_link_target(s));
        w->depth--;
        return st;
    default:
        return bad(w, "an unknown Avro type");
    }
}

knut_status knut_iceberg__avro_value_scan(avro_schema_t schema, const uint8_t *p, size_t len,
                                          size_t *budget, size_t *used, const char **why)
{
    value_walk w = {p, len, 0, *budget, 0, NULL};
    knut_status st = value(&w, schema);
    *budget = w.budget;
    *used = w.pos;
    *why = w.why;
    return st;
}
