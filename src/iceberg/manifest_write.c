/*
 * The two Avro files an append commit writes (format v2, unpartitioned):
 * the manifest listing the new data files, and the snapshot's manifest
 * list (the new manifest first, then every manifest of the parent).
 * Schemas carry every `field-id` (pyiceberg refuses a field without one)
 * and leave out the optional fields knut does not fill (partition
 * summaries, key metadata, split offsets): readers take them as null.
 */
#include "iceberg_int.h"

#include <inttypes.h>
#include <stdio.h>

#define OPT_LONG "[\"null\",\"long\"],\"default\":null"

/* A column metric map (field id -> V) as Iceberg's Avro form of a map
 * with int keys: an optional array of key/value records. Counts and sizes
 * are written; NaN counts and bounds empty (no value pruning yet), but
 * present: pyiceberg's inspect tables need the maps to be there. */
#define METRIC(NAME, ID, KID, VID, V)                                                      \
    "{\"name\":\"" NAME "\",\"type\":[\"null\",{\"type\":\"array\",\"items\":{\"type\":"      \
    "\"record\",\"name\":\"k" #KID "_v" #VID "\",\"fields\":[{\"name\":\"key\",\"type\":"      \
    "\"int\",\"field-id\":" #KID "},{\"name\":\"value\",\"type\":\"" V "\",\"field-id\":" #VID \
    "}]},\"logicalType\":\"map\"}],\"default\":null,\"field-id\":" #ID "}"

static const char ENTRY_SCHEMA[] =
    "{\"type\":\"record\",\"name\":\"manifest_entry\",\"fields\":["
    "{\"name\":\"status\",\"type\":\"int\",\"field-id\":0},"
    "{\"name\":\"snapshot_id\",\"type\":" OPT_LONG ",\"field-id\":1},"
    "{\"name\":\"sequence_number\",\"type\":" OPT_LONG ",\"field-id\":3},"
    "{\"name\":\"file_sequence_number\",\"type\":" OPT_LONG ",\"field-id\":4},"
    "{\"name\":\"data_file\",\"type\":{\"type\":\"record\",\"name\":\"r2\",\"fields\":["
    "{\"name\":\"content\",\"type\":\"int\",\"field-id\":134},"
    "{\"name\":\"file_path\",\"type\":\"string\",\"field-id\":100},"
    "{\"name\":\"file_format\",\"type\":\"string\",\"field-id\":101},"
    "{\"name\":\"partition\",\"type\":{\"type\":\"record\",\"name\":\"r102\",\"fields\":[]},"
    "\"field-id\":102},"
    "{\"name\":\"record_count\",\"type\":\"long\",\"field-id\":103},"
    "{\"name\":\"file_size_in_bytes\",\"type\":\"long\",\"field-id\":104},"
    METRIC("column_sizes", 108, 117, 118, "long") "," METRIC("value_counts", 109, 119, 120, "long")
    "," METRIC("null_value_counts", 110, 121, 122, "long") ","
    METRIC("nan_value_counts", 137, 138, 139, "long") ","
    METRIC("lower_bounds", 125, 126, 127, "bytes") ","
    METRIC("upper_bounds", 128, 129, 130, "bytes")
    "]},\"field-id\":2}]}";

/* The number of METRIC fields, written as empty maps (no metrics). */
#define N_METRICS 6

static const char LIST_SCHEMA[] =
    "{\"type\":\"record\",\"name\":\"manifest_file\",\"fields\":["
    "{\"name\":\"manifest_path\",\"type\":\"string\",\"field-id\":500},"
    "{\"name\":\"manifest_length\",\"type\":\"long\",\"field-id\":501},"
    "{\"name\":\"partition_spec_id\",\"type\":\"int\",\"field-id\":502},"
    "{\"name\":\"content\",\"type\":\"int\",\"field-id\":517},"
    "{\"name\":\"sequence_number\",\"type\":\"long\",\"field-id\":515},"
    "{\"name\":\"min_sequence_number\",\"type\":\"long\",\"field-id\":516},"
    "{\"name\":\"added_snapshot_id\",\"type\":\"long\",\"field-id\":503},"
    "{\"name\":\"added_files_count\",\"type\":\"int\",\"field-id\":504},"
    "{\"name\":\"existing_files_count\",\"type\":\"int\",\"field-id\":505},"
    "{\"name\":\"deleted_files_count\",\"type\":\"int\",\"field-id\":506},"
    "{\"name\":\"added_rows_count\",\"type\":\"long\",\"field-id\":512},"
    "{\"name\":\"existing_rows_count\",\"type\":\"long\",\"field-id\":513},"
    "{\"name\":\"deleted_rows_count\",\"type\":\"long\",\"field-id\":514}]}";

/* Ends w (after st, the status of writing its records) and moves the
 * finished file into out. */
static knut_status finish(knut_iceberg__avro_out *w, knut_status st, knut_buf *out,
                          knut_error *err)
{
    if (st == KNUT_OK)
        st = knut_iceberg__avro_out_finish(w, err);
    if (st == KNUT_OK) {
        knut_buf_reset(out);
        *out = w->file;
        knut_buf_init(&w->file, 0);
    }
    knut_iceberg__avro_out_reset(w);
    return st;
}

typedef enum metric { COLUMN_SIZES, VALUE_COUNTS, NULL_VALUE_COUNTS } metric;

static int64_t metric_of(const knut_iceberg__metric *c, metric which)
{
    return which == COLUMN_SIZES ? c->bytes : which == VALUE_COUNTS ? c->values : c->nulls;
}

/* One metric map: union branch 1, then one block of the key/value records
 * of the columns where it is known (an empty map when m is NULL). */
static void put_metric(knut_buf *b, const knut_iceberg__metrics *m, metric which)
{
    knut_iceberg__avro_put_long(b, 1);
    size_t known = 0;
    for (size_t i = 0; m && i < m->n; i++)
        known += metric_of(&m->cols[i], which) >= 0;
    if (known) {
        knut_iceberg__avro_put_long(b, (int64_t)known);
        for (size_t i = 0; i < m->n; i++)
            if (metric_of(&m->cols[i], which) >= 0) {
                knut_iceberg__avro_put_long(b, m->cols[i].id);
                knut_iceberg__avro_put_long(b, metric_of(&m->cols[i], which));
            }
    }
    knut_iceberg__avro_put_long(b, 0);
}

knut_status knut_iceberg__manifest_write(knut_buf *out, const char *schema_json,
                                         int32_t schema_id, const knut_iceberg_data_file *files,
                                         const knut_iceberg__metrics *metrics, size_t n,
                                         knut_error *err)
{
    char sid[16];
    snprintf(sid, sizeof sid, "%" PRId32, schema_id);
    /* The six keys the spec lists; Java and pyiceberg omit schema-id. */
    const char *const meta[] = {"schema",         schema_json, "schema-id",      sid,
                                "partition-spec", "[]",        "partition-spec-id", "0",
                                "format-version", "2",         "content",        "data"};
    knut_iceberg__avro_out w;
    knut_status st = knut_iceberg__avro_out_begin(&w, ENTRY_SCHEMA, meta, 6, 1, err);
    for (size_t i = 0; i < n && st == KNUT_OK; i++) {
        const knut_iceberg_data_file *f = &files[i];
        knut_buf *b = &w.block;
        knut_iceberg__avro_put_long(b, KNUT_ICEBERG_ADDED);
        /* snapshot id and both sequence numbers null: inherited from the
         * manifest list row, so a retried commit reuses this file under a
         * new sequence number (the spec's inheritance rules). */
        knut_iceberg__avro_put_long(b, 0);
        knut_iceberg__avro_put_long(b, 0);
        knut_iceberg__avro_put_long(b, 0);
        knut_iceberg__avro_put_long(b, KNUT_ICEBERG_DATA);
        knut_iceberg__avro_put_str(b, f->path);
        knut_iceberg__avro_put_str(b, "PARQUET");
        /* partition: the empty record encodes as nothing */
        knut_iceberg__avro_put_long(b, f->record_count);
        knut_iceberg__avro_put_long(b, f->file_size);
        const knut_iceberg__metrics *m = metrics ? &metrics[i] : NULL;
        put_metric(b, m, COLUMN_SIZES);
        put_metric(b, m, VALUE_COUNTS);
        put_metric(b, m, NULL_VALUE_COUNTS);
        for (int k = 0; k < N_METRICS - 3; k++) { /* NaN counts, bounds: none */
            knut_iceberg__avro_put_long(b, 1);
            knut_iceberg__avro_put_long(b, 0);
        }
        st = knut_iceberg__avro_out_record(&w, err);
    }
    return finish(&w, st, out, err);
}

knut_status knut_iceberg__manifest_list_write(knut_buf *out, int64_t snapshot_id,
                                              int64_t parent_id, int64_t seq,
                                              const knut_iceberg_manifest_file *m, size_t n,
                                              knut_error *err)
{
    char sid[24], pid[24], sq[24];
    snprintf(sid, sizeof sid, "%" PRId64, snapshot_id);
    if (parent_id < 0)
        snprintf(pid, sizeof pid, "null"); /* as Java writes "no parent" */
    else
        snprintf(pid, sizeof pid, "%" PRId64, parent_id);
    snprintf(sq, sizeof sq, "%" PRId64, seq);
    const char *const meta[] = {"snapshot-id",     sid, "parent-snapshot-id", pid,
                                "sequence-number", sq,  "format-version",     "2"};
    knut_iceberg__avro_out w;
    knut_status st = knut_iceberg__avro_out_begin(&w, LIST_SCHEMA, meta, 4, 1, err);
    for (size_t i = 0; i < n && st == KNUT_OK; i++) {
        knut_buf *b = &w.block;
        knut_iceberg__avro_put_str(b, m[i].path);
        knut_iceberg__avro_put_long(b, m[i].length);
        knut_iceberg__avro_put_long(b, m[i].spec_id);
        knut_iceberg__avro_put_long(b, m[i].content);
        knut_iceberg__avro_put_long(b, m[i].sequence_number);
        knut_iceberg__avro_put_long(b, m[i].min_sequence_number);
        knut_iceberg__avro_put_long(b, m[i].added_snapshot_id);
        knut_iceberg__avro_put_long(b, m[i].added_files);
        knut_iceberg__avro_put_long(b, m[i].existing_files);
        knut_iceberg__avro_put_long(b, m[i].deleted_files);
        knut_iceberg__avro_put_long(b, m[i].added_rows);
        knut_iceberg__avro_put_long(b, m[i].existing_rows);
        knut_iceberg__avro_put_long(b, m[i].deleted_rows);
        st = knut_iceberg__avro_out_record(&w, err);
    }
    return finish(&w, st, out, err);
}
