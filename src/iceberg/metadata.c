/*
 * Table metadata: the top-level fields, snapshots and properties of a
 * metadata JSON file (format v1 and v2), the checks that the current ids
 * resolve, and the lookups. Parsing is strict where a wrong value would
 * make a scan read the wrong files (ids, the manifest list) and lenient
 * where v1 writers left fields out (the spec's v1 defaults).
 */
#include "metadata_int.h"

#include <stdlib.h>
#include <string.h>

/* ---- snapshots and string maps ------------------------------------------ */

static knut_status strmap_parse(knut_iceberg__jctx *c, json_t *obj, const char *skip,
                                char ***keys, char ***values, size_t *n)
{
    size_t cap = json_object_size(obj);
    if (cap && (!(*keys = calloc(cap, sizeof **keys)) || !(*values = calloc(cap, sizeof **values))))
        return knut_iceberg__joom(c);
    const char *k;
    json_t *v;
    json_object_foreach(obj, k, v) {
        if (skip && strcmp(k, skip) == 0)
            continue;
        if (!json_is_string(v)) {
            size_t mark = knut_iceberg__jpush_key(c, k);
            knut_status st = knut_iceberg__jfail(c, KNUT_EPARSE, "expected a string");
            knut_iceberg__jpop(c, mark);
            return st;
        }
        if (!((*keys)[*n] = strdup(k)) || !((*values)[*n] = strdup(json_string_value(v)))) {
            (*n)++; /* so the one that was copied is freed */
            return knut_iceberg__joom(c);
        }
        (*n)++;
    }
    return KNUT_OK;
}

static void snapshot_clear(knut_iceberg_snapshot *s)
{
    free(s->manifest_list);
    free(s->operation);
    for (size_t i = 0; i < s->n_summary; i++) {
        free(s->summary_keys[i]);
        free(s->summary_values[i]);
    }
    free(s->summary_keys);
    free(s->summary_values);
}

static knut_status snapshot_parse(knut_iceberg__jctx *c, json_t *sj, knut_iceberg_snapshot *s)
{
    int v2 = c->version >= 2;
    s->parent_id = -1;
    s->schema_id = -1;
    if (!json_is_object(sj))
        return knut_iceberg__jfail(c, KNUT_EPARSE, "expected an object");
    knut_status st = knut_iceberg__jint(c, sj, "snapshot-id", 1, INT64_MIN, INT64_MAX,
                                        &s->snapshot_id);
    if (st == KNUT_OK)
        st = knut_iceberg__jint(c, sj, "parent-snapshot-id", 0, INT64_MIN, INT64_MAX,
                                &s->parent_id);
    /* v1 has no sequence numbers: everything reads as 0. */
    if (st == KNUT_OK && v2)
        st = knut_iceberg__jint(c, sj, "sequence-number", 1, 0, INT64_MAX, &s->sequence_number);
    if (st == KNUT_OK)
        st = knut_iceberg__jint(c, sj, "timestamp-ms", 1, INT64_MIN, INT64_MAX, &s->timestamp_ms);
    int64_t sid = -1;
    if (st == KNUT_OK)
        st = knut_iceberg__jint(c, sj, "schema-id", 0, INT32_MIN, INT32_MAX, &sid);
    s->schema_id = (int32_t)sid;
    if (st != KNUT_OK)
        return st;
    /* v1 snapshots may list their manifests inline instead of a manifest
     * list file; no reader here goes that way, so say so plainly. */
    json_t *ml = json_object_get(sj, "manifest-list");
    if (!v2 && (!ml || json_is_null(ml)) && json_object_get(sj, "manifests"))
        return knut_iceberg__jfail(c, KNUT_EUNSUPPORTED,
                                   "snapshot %lld lists its manifests inline (v1 \"manifests\"), "
                                   "not in a manifest list: not supported",
                                   (long long)s->snapshot_id);
    if ((st = knut_iceberg__jstr(c, sj, "manifest-list", 1, &s->manifest_list)))
        return st;
    json_t *sum;
    if ((st = knut_iceberg__jget(c, sj, "summary", v2, JSON_OBJECT, &sum)))
        return st;
    if (!sum) { /* v1 summaries are optional: no operation recorded */
        if (!(s->operation = strdup("")))
            return knut_iceberg__joom(c);
        return KNUT_OK;
    }
    size_t mark = knut_iceberg__jpush_key(c, "summary");
    if ((st = knut_iceberg__jstr(c, sum, "operation", 1, &s->operation)) == KNUT_OK &&
        (st = strmap_parse(c, sum, "operation", &s->summary_keys, &s->summary_values,
                           &s->n_summary)) == KNUT_OK)
        knut_iceberg__jpop(c, mark);
    return st;
}

static knut_status snapshots_parse(knut_iceberg__jctx *c, json_t *root, knut_iceberg_table *t)
{
    json_t *arr;
    knut_status st = knut_iceberg__jget(c, root, "snapshots", 0, JSON_ARRAY, &arr);
    if (st != KNUT_OK || !arr)
        return st;
    size_t n = json_array_size(arr);
    if (n && !(t->snapshots = calloc(n, sizeof *t->snapshots)))
        return knut_iceberg__joom(c);
    t->n_snapshots = n;
    size_t m0 = knut_iceberg__jpush_key(c, "snapshots");
    for (size_t i = 0; i < n && st == KNUT_OK; i++) {
        size_t m1 = knut_iceberg__jpush_index(c, i);
        st = snapshot_parse(c, json_array_get(arr, i), &t->snapshots[i]);
        if (st == KNUT_OK)
            knut_iceberg__jpop(c, m1);
    }
    if (st == KNUT_OK)
        knut_iceberg__jpop(c, m0);
    return st;
}

/* ---- the table ---------------------------------------------------------- */

static knut_status version_parse(knut_iceberg__jctx *c, json_t *root, int *out)
{
    int64_t v = 0;
    knut_status st = knut_iceberg__jint(c, root, "format-version", 1, INT64_MIN, INT64_MAX, &v);
    if (st != KNUT_OK)
        return st;
    size_t mark = knut_iceberg__jpush_key(c, "format-version");
    if (v >= 3)
        st = knut_iceberg__jfail(c, KNUT_EUNSUPPORTED, "format version %lld is not supported yet",
                                 (long long)v);
    else if (v < 1)
        st = knut_iceberg__jfail(c, KNUT_EPARSE, "%lld is not a format version (1 or 2)",
                                 (long long)v);
    knut_iceberg__jpop(c, mark);
    *out = (int)v;
    return st;
}

static int cmp_id(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Ids must be unique in their list: a lookup by id takes the first, so a
 * second entry with the same id would be silently unreachable. ids is
 * sorted in place. */
static knut_status unique_ids(knut_iceberg__jctx *c, const char *list, int64_t *ids, size_t n)
{
    qsort(ids, n, sizeof *ids, cmp_id);
    for (size_t i = 1; i < n; i++)
        if (ids[i] == ids[i - 1])
            return knut_iceberg__jfail(c, KNUT_EPARSE, "%s: two entries have id %lld", list,
                                       (long long)ids[i]);
    return KNUT_OK;
}

/* The current ids must name entries, or every later lookup would fail. */
static knut_status refs_check(knut_iceberg__jctx *c, const knut_iceberg_table *t)
{
    size_t most = t->n_schemas > t->n_specs ? t->n_schemas : t->n_specs;
    most = most > t->n_snapshots ? most : t->n_snapshots;
    int64_t *ids = malloc((most ? most : 1) * sizeof *ids);
    if (!ids)
        return knut_iceberg__joom(c);
    for (size_t i = 0; i < t->n_schemas; i++)
        ids[i] = t->schemas[i].schema_id;
    knut_status st = unique_ids(c, t->format_version >= 2 ? "schemas" : "schema", ids,
                                t->n_schemas);
    for (size_t i = 0; st == KNUT_OK && i < t->n_specs; i++)
        ids[i] = t->specs[i].spec_id;
    if (st == KNUT_OK)
        st = unique_ids(c, "partition-specs", ids, t->n_specs);
    for (size_t i = 0; st == KNUT_OK && i < t->n_snapshots; i++)
        ids[i] = t->snapshots[i].snapshot_id;
    if (st == KNUT_OK)
        st = unique_ids(c, "snapshots", ids, t->n_snapshots);
    free(ids);
    if (st != KNUT_OK)
        return st;
    if (!knut_iceberg_table_schema(t, t->current_schema_id))
        return knut_iceberg__jfail(c, KNUT_EPARSE, "current-schema-id: no schema has id %d",
                                   (int)t->current_schema_id);
    if (!knut_iceberg_table_spec(t, t->default_spec_id))
        return knut_iceberg__jfail(c, KNUT_EPARSE, "default-spec-id: no partition spec has id %d",
                                   (int)t->default_spec_id);
    if (t->current_snapshot_id != -1 && !knut_iceberg_table_snapshot(t, t->current_snapshot_id))
        return knut_iceberg__jfail(c, KNUT_EPARSE, "current-snapshot-id: no snapshot has id %lld",
                                   (long long)t->current_snapshot_id);
    return KNUT_OK;
}

static knut_status table_fill(knut_iceberg__jctx *c, json_t *root, knut_iceberg_table *t)
{
    if (!json_is_object(root))
        return knut_iceberg__jfail(c, KNUT_EPARSE, "not table metadata: expected a JSON object");
    knut_status st = version_parse(c, root, &t->format_version);
    if (st != KNUT_OK)
        return st;
    int v2 = (c->version = t->format_version) >= 2;
    int64_t col = 0, dummy = 0;
    json_t *j;
    if ((st = knut_iceberg__jstr(c, root, "table-uuid", v2, &t->uuid)) ||
        (st = knut_iceberg__jstr(c, root, "location", 1, &t->location)) ||
        (v2 && (st = knut_iceberg__jint(c, root, "last-sequence-number", 1, 0, INT64_MAX,
                                        &t->last_sequence_number))) ||
        (st = knut_iceberg__jint(c, root, "last-updated-ms", 1, INT64_MIN, INT64_MAX,
                                 &t->last_updated_ms)) ||
        (st = knut_iceberg__jint(c, root, "last-column-id", 1, INT32_MIN, INT32_MAX, &col)))
        return st;
    t->last_column_id = (int32_t)col;
    /* Required in v2 though nothing here reads them: a file without them
     * is not v2 metadata, and Java refuses it too. */
    if (v2 && ((st = knut_iceberg__jint(c, root, "last-partition-id", 1, INT32_MIN, INT32_MAX,
                                        &dummy)) ||
               (st = knut_iceberg__jget(c, root, "sort-orders", 1, JSON_ARRAY, &j)) ||
               (st = knut_iceberg__jint(c, root, "default-sort-order-id", 1, INT32_MIN,
                                        INT32_MAX, &dummy))))
        return st;
    /* No current snapshot: absent, null, or -1 (what Java writes). */
    t->current_snapshot_id = -1;
    if ((st = knut_iceberg__jint(c, root, "current-snapshot-id", 0, INT64_MIN, INT64_MAX,
                                 &t->current_snapshot_id)) ||
        (st = knut_iceberg__schemas_parse(c, root, t)) ||
        (st = knut_iceberg__specs_parse(c, root, t)) ||
        (st = snapshots_parse(c, root, t)) ||
        (st = knut_iceberg__jget(c, root, "properties", 0, JSON_OBJECT, &j)))
        return st;
    if (j) {
        size_t mark = knut_iceberg__jpush_key(c, "properties");
        if ((st = strmap_parse(c, j, NULL, &t->prop_keys, &t->prop_values, &t->n_props)))
            return st;
        knut_iceberg__jpop(c, mark);
    }
    return refs_check(c, t);
}

knut_status knut_iceberg_table_parse(knut_iceberg_table **out, const char *json, size_t len,
                                     const char *name, knut_error *err)
{
    KNUT_ASSERT_ARG(err, out != NULL);
    *out = NULL;
    KNUT_ASSERT_ARG(err, json != NULL || len == 0);
    if (!name)
        name = "(input)";
    knut_iceberg__jctx c = {.name = name, .version = 2, .err = err};
    knut_iceberg_table *t = calloc(1, sizeof *t);
    json_t *root = NULL;
    knut_status st = KNUT_OK;
    if (!t || !(t->metadata_path = strdup(name))) {
        st = knut_iceberg__joom(&c);
        goto cleanup;
    }
    if (len > KNUT_ICEBERG_METADATA_MAX) {
        st = knut_error_set(err, KNUT_ETOOBIG, "%s: %zu bytes of metadata, over the %zu-byte limit",
                            name, len, KNUT_ICEBERG_METADATA_MAX);
        goto cleanup;
    }
    json_error_t je;
    /* Duplicate keys are refused: which of two "current-snapshot-id"s
     * counts is not something to guess. */
    if (!(root = json_loadb(json ? json : "", len, JSON_REJECT_DUPLICATES, &je))) {
        st = knut_error_set_at(err, KNUT_EPARSE, name, je.line, je.column, "not JSON: %s",
                               je.text);
        goto cleanup;
    }
    if ((st = table_fill(&c, root, t)) == KNUT_OK) {
        *out = t;
        t = NULL;
    }
cleanup:
    json_decref(root);
    knut_iceberg_table_free(t);
    return st;
}

void knut_iceberg_table_free(knut_iceberg_table *t)
{
    if (!t)
        return;
    free(t->metadata_path);
    free(t->uuid);
    free(t->location);
    for (size_t i = 0; i < t->n_schemas; i++)
        knut_iceberg__schema_clear(&t->schemas[i]);
    free(t->schemas);
    for (size_t i = 0; i < t->n_specs; i++)
        knut_iceberg__spec_clear(&t->specs[i]);
    free(t->specs);
    for (size_t i = 0; i < t->n_snapshots; i++)
        snapshot_clear(&t->snapshots[i]);
    free(t->snapshots);
    for (size_t i = 0; i < t->n_props; i++) {
        free(t->prop_keys[i]);
        free(t->prop_values[i]);
    }
    free(t->prop_keys);
    free(t->prop_values);
    free(t);
}

/* ---- lookups ------------------------------------------------------------ */

const knut_iceberg_snapshot *knut_iceberg_table_snapshot(const knut_iceberg_table *t,
                                                         int64_t snapshot_id)
{
    for (size_t i = 0; t && i < t->n_snapshots; i++)
        if (t->snapshots[i].snapshot_id == snapshot_id)
            return &t->snapshots[i];
    return NULL;
}

const knut_iceberg_schema *knut_iceberg_table_schema(const knut_iceberg_table *t,
                                                     int32_t schema_id)
{
    for (size_t i = 0; t && i < t->n_schemas; i++)
        if (t->schemas[i].schema_id == schema_id)
            return &t->schemas[i];
    return NULL;
}

const knut_iceberg_spec *knut_iceberg_table_spec(const knut_iceberg_table *t, int32_t spec_id)
{
    for (size_t i = 0; t && i < t->n_specs; i++)
        if (t->specs[i].spec_id == spec_id)
            return &t->specs[i];
    return NULL;
}

const char *knut_iceberg_table_property(const knut_iceberg_table *t, const char *key)
{
    for (size_t i = 0; t && key && i < t->n_props; i++)
        if (strcmp(t->prop_keys[i], key) == 0)
            return t->prop_values[i];
    return NULL;
}
