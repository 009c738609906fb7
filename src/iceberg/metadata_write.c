/*
 * Table metadata JSON for the append writer: the metadata of a new table,
 * and the change an append makes to the current metadata. The current
 * file's JSON is changed in place rather than rebuilt from the parsed
 * model, so every field knut does not know (statistics, sort orders,
 * other refs, properties, fields of later writers) is kept as it was.
 */
#include "write_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

static knut_status oom(knut_error *err)
{
    return knut_error_set(err, KNUT_ENOMEM, "iceberg: out of memory");
}

int64_t knut_iceberg__snapshot_id_new(const knut_iceberg_table *t)
{
    for (;;) {
        uint64_t r = 0;
        if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r)
            r = (uint64_t)knut_clock_wall_us() * 6364136223846793005ULL;
        int64_t id = (int64_t)(r & INT64_MAX);
        if (id != 0 && (!t || !knut_iceberg_table_snapshot(t, id)))
            return id;
    }
}

static int set_new(json_t *obj, const char *key, json_t *v)
{
    return v ? json_object_set_new(obj, key, v) : -1;
}

knut_status knut_iceberg__meta_create(json_t **out, const char *location,
                                      const knut_iceberg__col *cols, size_t n, knut_error *err)
{
    char uuid[37];
    knut_uuid_v4(uuid);
    json_t *root = json_object(), *fields = json_array();
    int bad = !root || !fields;
    for (size_t i = 0; i < n && !bad; i++) {
        json_t *f = json_pack("{s:I,s:s,s:b,s:s}", "id", (json_int_t)cols[i].id, "name",
                              cols[i].name, "required", 0, "type", cols[i].type);
        bad = !f || json_array_append_new(fields, f) != 0;
    }
    json_t *schema = bad ? NULL
                         : json_pack("{s:s,s:i,s:[],s:O}", "type", "struct", "schema-id", 0,
                                     "identifier-field-ids", "fields", fields);
    bad = bad || !schema;
    /* Field order as pyiceberg and Java write it; an empty table has
     * current-snapshot-id -1, which Java writes and every reader takes. */
    bad = bad || set_new(root, "format-version", json_integer(2)) ||
          set_new(root, "table-uuid", json_string(uuid)) ||
          set_new(root, "location", json_string(location)) ||
          set_new(root, "last-sequence-number", json_integer(0)) ||
          set_new(root, "last-updated-ms", json_integer(knut_clock_wall_us() / 1000)) ||
          set_new(root, "last-column-id", json_integer(n ? cols[n - 1].id : 0)) ||
          set_new(root, "current-schema-id", json_integer(0)) ||
          set_new(root, "schemas", json_pack("[O]", schema)) ||
          set_new(root, "default-spec-id", json_integer(0)) ||
          set_new(root, "partition-specs", json_pack("[{s:i,s:[]}]", "spec-id", 0, "fields")) ||
          /* partition field ids start at 1000: none assigned yet */
          set_new(root, "last-partition-id", json_integer(999)) ||
          set_new(root, "default-sort-order-id", json_integer(0)) ||
          set_new(root, "sort-orders", json_pack("[{s:i,s:[]}]", "order-id", 0, "fields")) ||
          set_new(root, "properties", json_object()) ||
          set_new(root, "current-snapshot-id", json_integer(-1)) ||
          set_new(root, "refs", json_object()) || set_new(root, "snapshots", json_array()) ||
          set_new(root, "snapshot-log", json_array()) ||
          set_new(root, "metadata-log", json_array()) ||
          set_new(root, "statistics", json_array()) ||
          set_new(root, "partition-statistics", json_array());
    json_decref(schema);
    json_decref(fields);
    if (bad) {
        json_decref(root);
        return oom(err);
    }
    *out = root;
    return KNUT_OK;
}

/* The array root[key], created when absent; NULL when it is not one. */
static json_t *array_member(json_t *root, const char *key)
{
    json_t *a = json_object_get(root, key);
    if (!a || json_is_null(a)) {
        a = json_array();
        if (!a || json_object_set_new(root, key, a) != 0)
            return NULL;
    }
    return json_is_array(a) ? a : NULL;
}

/* The parent summary's value of key as a number; 0 when absent. */
static long long parent_total(json_t *parent, const char *key, int *missing)
{
    json_t *v = json_object_get(json_object_get(parent, "summary"), key);
    const char *s = json_string_value(v);
    char *end = NULL;
    long long n = s ? strtoll(s, &end, 10) : 0;
    if (!s || end == s || *end) {
        *missing = 1;
        return 0;
    }
    return n;
}

static json_t *find_snapshot(json_t *snaps, int64_t id)
{
    size_t i;
    json_t *s;
    json_array_foreach(snaps, i, s)
    {
        json_t *v = json_object_get(s, "snapshot-id");
        if (json_is_integer(v) && json_integer_value(v) == id)
            return s;
    }
    return NULL;
}

static int put_num(json_t *summary, const char *key, long long v)
{
    char text[32];
    snprintf(text, sizeof text, "%lld", v);
    return set_new(summary, key, json_string(text));
}

/* operation append and the added-* / total-* counts, the totals the
 * parent's plus what was added (as pyiceberg and Java carry them); a
 * parent without totals leaves them out rather than guess. */
static json_t *summary_new(json_t *parent, const knut_iceberg__snap *s)
{
    json_t *sum = json_pack("{s:s}", "operation", "append");
    if (!sum)
        return NULL;
    int bad = put_num(sum, "added-data-files", s->files) ||
              put_num(sum, "added-records", s->rows) ||
              put_num(sum, "added-files-size", s->bytes) ||
              put_num(sum, "changed-partition-count", 1);
    static const char *const totals[] = {"total-records",          "total-files-size",
                                         "total-data-files",       "total-delete-files",
                                         "total-position-deletes", "total-equality-deletes"};
    const long long added[] = {s->rows, s->bytes, s->files, 0, 0, 0};
    for (size_t i = 0; i < sizeof totals / sizeof totals[0] && !bad; i++) {
        int missing = 0;
        long long prev = parent ? parent_total(parent, totals[i], &missing) : 0;
        if (!missing)
            bad = put_num(sum, totals[i], prev + added[i]);
    }
    if (bad) {
        json_decref(sum);
        return NULL;
    }
    return sum;
}

knut_status knut_iceberg__meta_append(json_t *root, const char *prev_uri,
                                      const knut_iceberg__snap *s, knut_error *err)
{
    json_t *snaps = array_member(root, "snapshots"), *slog = array_member(root, "snapshot-log"),
           *mlog = array_member(root, "metadata-log"), *refs = json_object_get(root, "refs");
    if (!snaps || !slog || !mlog || (refs && !json_is_object(refs) && !json_is_null(refs)))
        return knut_error_set(err, KNUT_EPARSE,
                              "iceberg: the current metadata's snapshots, snapshot-log, "
                              "metadata-log or refs is not of its JSON type");
    if (!refs || json_is_null(refs)) {
        if (!(refs = json_object()) || json_object_set_new(root, "refs", refs) != 0)
            return oom(err);
    }
    json_t *prev_updated = json_object_get(root, "last-updated-ms");
    int64_t prev_ms = json_is_integer(prev_updated) ? json_integer_value(prev_updated) : 0;
    /* Java refuses a file whose last-updated-ms is older than a log entry:
     * never go back in time, even when this clock is behind the last
     * writer's. */
    int64_t now = s->timestamp_ms > prev_ms ? s->timestamp_ms : prev_ms + 1;
    json_t *parent = s->parent_id >= 0 ? find_snapshot(snaps, s->parent_id) : NULL;
    json_t *sum = summary_new(parent, s);
    json_t *snap = sum ? json_pack("{s:I,s:I,s:I,s:s,s:o,s:i}", "snapshot-id", (json_int_t)s->id,
                                   "sequence-number", (json_int_t)s->seq, "timestamp-ms",
                                   (json_int_t)now, "manifest-list", s->manifest_list, "summary",
                                   sum, "schema-id", (int)s->schema_id)
                       : NULL;
    int bad = !snap;
    if (!bad && s->parent_id >= 0)
        bad = set_new(snap, "parent-snapshot-id", json_integer(s->parent_id));
    bad = bad || json_array_append_new(snaps, snap) != 0;
    snap = bad ? snap : NULL; /* owned by snaps now */
    bad = bad ||
          json_array_append_new(slog, json_pack("{s:I,s:I}", "timestamp-ms", (json_int_t)now,
                                                "snapshot-id", (json_int_t)s->id)) != 0 ||
          (prev_uri && json_array_append_new(
                           mlog, json_pack("{s:I,s:s}", "timestamp-ms", (json_int_t)prev_ms,
                                           "metadata-file", prev_uri)) != 0) ||
          set_new(refs, "main",
                  json_pack("{s:I,s:s}", "snapshot-id", (json_int_t)s->id, "type", "branch")) ||
          set_new(root, "current-snapshot-id", json_integer(s->id)) ||
          set_new(root, "last-sequence-number", json_integer(s->seq)) ||
          set_new(root, "last-updated-ms", json_integer(now));
    json_decref(snap);
    return bad ? oom(err) : KNUT_OK;
}

char *knut_iceberg__meta_schema_json(json_t *root, int32_t schema_id)
{
    size_t i;
    json_t *s;
    json_array_foreach(json_object_get(root, "schemas"), i, s)
    {
        json_t *id = json_object_get(s, "schema-id");
        if (json_is_integer(id) && json_integer_value(id) == schema_id)
            return json_dumps(s, JSON_COMPACT);
    }
    return NULL;
}
