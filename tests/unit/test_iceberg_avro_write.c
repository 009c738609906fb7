/*
 * Unit tests for the Avro container writer (avro_write.c) and the manifest
 * and manifest list files of an append (manifest_write.c): everything
 * written reads back through knut's own container reader and manifest
 * parsers, values at the edges of the zigzag varint encoding, both codecs,
 * several blocks; the header keeps the schema JSON verbatim (every field
 * with its field id) and the Iceberg keys.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iceberg/iceberg_int.h"

#define REC                                                                               \
    "{\"type\":\"record\",\"name\":\"r\",\"fields\":["                                   \
    "{\"name\":\"n\",\"type\":\"long\",\"field-id\":1},"                                 \
    "{\"name\":\"s\",\"type\":\"string\",\"field-id\":2},"                               \
    "{\"name\":\"o\",\"type\":[\"null\",\"long\"],\"default\":null,\"field-id\":3}]}"

static const int64_t EDGES[] = {0, 1, -1, 63, 64, -64, -65, 127, 128, INT32_MAX, INT32_MIN,
                                INT64_MAX, INT64_MIN, 1234567890123LL};
#define N_EDGES (sizeof EDGES / sizeof EDGES[0])

/* Writes rounds * N_EDGES records (n, "s<i>", o null for odd i). */
static void write_file(knut_iceberg__avro_out *w, int deflate, size_t rounds)
{
    knut_error err = KNUT_ERROR_INIT;
    const char *const meta[] = {"format-version", "2", "content", "data"};
    assert_int_equal(knut_iceberg__avro_out_begin(w, REC, meta, 2, deflate, &err), KNUT_OK);
    char s[32];
    for (size_t i = 0; i < rounds * N_EDGES; i++) {
        knut_iceberg__avro_put_long(&w->block, EDGES[i % N_EDGES]);
        snprintf(s, sizeof s, "s%zu", i);
        knut_iceberg__avro_put_str(&w->block, s);
        knut_iceberg__avro_put_long(&w->block, (int64_t)(i % 2 ? 0 : 1));
        if (i % 2 == 0)
            knut_iceberg__avro_put_long(&w->block, -(int64_t)i);
        assert_int_equal(knut_iceberg__avro_out_record(w, &err), KNUT_OK);
    }
    assert_int_equal(knut_iceberg__avro_out_finish(w, &err), KNUT_OK);
}

static void read_back(const knut_buf *file, size_t rounds, int deflate)
{
    knut_error err = KNUT_ERROR_INIT;
    knut_iceberg__avro *r = NULL;
    assert_int_equal(knut_iceberg__avro_open(&r, "w.avro", file->data, file->len, &err),
                     KNUT_OK);
    assert_string_equal(knut_iceberg__avro_meta(r, "avro.schema", NULL), REC);
    assert_string_equal(knut_iceberg__avro_meta(r, "avro.codec", NULL),
                        deflate ? "deflate" : "null");
    assert_string_equal(knut_iceberg__avro_meta(r, "format-version", NULL), "2");
    assert_string_equal(knut_iceberg__avro_meta(r, "content", NULL), "data");
    avro_value_t *v, f, b;
    char want[32];
    for (size_t i = 0; i < rounds * N_EDGES; i++) {
        assert_int_equal(knut_iceberg__avro_next(r, &v, &err), KNUT_OK);
        int64_t n;
        const char *s;
        size_t len;
        int branch;
        assert_int_equal(avro_value_get_by_name(v, "n", &f, NULL), 0);
        avro_value_get_long(&f, &n);
        assert_true(n == EDGES[i % N_EDGES]);
        assert_int_equal(avro_value_get_by_name(v, "s", &f, NULL), 0);
        avro_value_get_string(&f, &s, &len);
        snprintf(want, sizeof want, "s%zu", i);
        assert_string_equal(s, want);
        assert_int_equal(avro_value_get_by_name(v, "o", &f, NULL), 0);
        avro_value_get_discriminant(&f, &branch);
        assert_int_equal(branch, i % 2 ? 0 : 1);
        if (branch) {
            avro_value_get_current_branch(&f, &b);
            avro_value_get_long(&b, &n);
            assert_true(n == -(int64_t)i);
        }
    }
    assert_int_equal(knut_iceberg__avro_next(r, &v, &err), KNUT_EOF);
    knut_iceberg__avro_close(r);
}

static void test_iceberg_avro_write__round_trip(void **state)
{
    (void)state;
    for (int deflate = 0; deflate < 2; deflate++) {
        knut_iceberg__avro_out w;
        write_file(&w, deflate, 3);
        read_back(&w.file, 3, deflate);
        knut_iceberg__avro_out_reset(&w);
    }
}

/* Past the 1 MiB flush: several blocks, each framed and synced. */
static void test_iceberg_avro_write__many_blocks(void **state)
{
    (void)state;
    for (int deflate = 0; deflate < 2; deflate++) {
        knut_iceberg__avro_out w;
        size_t rounds = 12000; /* ~170k records, ~2.5 MiB encoded */
        write_file(&w, deflate, rounds);
        read_back(&w.file, rounds, deflate);
        knut_iceberg__avro_out_reset(&w);
    }
}

static void test_iceberg_avro_write__empty(void **state)
{
    (void)state;
    knut_iceberg__avro_out w;
    write_file(&w, 1, 0);
    read_back(&w.file, 0, 1);
    knut_iceberg__avro_out_reset(&w);
}

/* Every record field, array and map element of the schema has its id. */
static void assert_ids(json_t *t)
{
    if (json_is_array(t)) {
        size_t i;
        json_t *x;
        json_array_foreach(t, i, x) assert_ids(x);
        return;
    }
    if (!json_is_object(t))
        return;
    json_t *fields = json_object_get(t, "fields");
    if (fields) {
        size_t i;
        json_t *f;
        json_array_foreach(fields, i, f)
        {
            assert_true(json_is_integer(json_object_get(f, "field-id")));
            assert_ids(json_object_get(f, "type"));
        }
    }
    if (json_object_get(t, "items"))
        assert_ids(json_object_get(t, "items"));
}

static json_t *header_schema(const knut_buf *file, knut_iceberg__avro **r)
{
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_iceberg__avro_open(r, "m.avro", file->data, file->len, &err),
                     KNUT_OK);
    json_t *j = json_loads(knut_iceberg__avro_meta(*r, "avro.schema", NULL), 0, NULL);
    assert_non_null(j);
    assert_ids(j);
    return j;
}

static void test_iceberg_avro_write__manifest(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    const char *schema = "{\"type\":\"struct\",\"schema-id\":3,\"fields\":[{\"id\":1,\"name\":"
                         "\"id\",\"required\":false,\"type\":\"long\"}]}";
    knut_iceberg_data_file files[2] = {
        {.path = "file:///t/data/a.parquet", .record_count = 10, .file_size = 1234},
        {.path = "file:///t/data/b.parquet", .record_count = INT64_MAX, .file_size = 1}};
    /* metrics for the first file (a null count not known), none for the second */
    knut_iceberg__metric cols[2] = {{1, 10, 2, 300}, {2, 10, -1, 40}};
    knut_iceberg__metrics metrics[2] = {{cols, 2}, {NULL, 0}};
    knut_buf m = KNUT_BUF_INIT;
    assert_int_equal(knut_iceberg__manifest_write(&m, schema, 3, files, metrics, 2, &err),
                     KNUT_OK);
    knut_iceberg__avro *r = NULL;
    json_t *j = header_schema(&m, &r);
    /* the metric maps as Iceberg's int-keyed map arrays */
    static const struct {
        const char *map;
        size_t n[2];
        int64_t first;
    } want[] = {{"column_sizes", {2, 0}, 300},   {"value_counts", {2, 0}, 10},
                {"null_value_counts", {1, 0}, 2}, {"nan_value_counts", {0, 0}, 0},
                {"lower_bounds", {0, 0}, 0},     {"upper_bounds", {0, 0}, 0}};
    for (size_t i = 0; i < 2; i++) {
        avro_value_t *e, df, opt, arr, item, kv;
        assert_int_equal(knut_iceberg__avro_next(r, &e, &err), KNUT_OK);
        assert_int_equal(avro_value_get_by_name(e, "data_file", &df, NULL), 0);
        for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
            assert_int_equal(avro_value_get_by_name(&df, want[k].map, &opt, NULL), 0);
            assert_int_equal(avro_value_get_current_branch(&opt, &arr), 0);
            size_t size = 0;
            avro_value_get_size(&arr, &size);
            assert_int_equal(size, want[k].n[i]);
            if (!size || strstr(want[k].map, "bounds"))
                continue;
            int32_t key;
            int64_t v;
            avro_value_get_by_index(&arr, 0, &item, NULL);
            avro_value_get_by_name(&item, "key", &kv, NULL);
            avro_value_get_int(&kv, &key);
            avro_value_get_by_name(&item, "value", &kv, NULL);
            avro_value_get_long(&kv, &v);
            assert_int_equal(key, 1);
            assert_true(v == want[k].first);
        }
    }
    assert_string_equal(knut_iceberg__avro_meta(r, "schema", NULL), schema);
    assert_string_equal(knut_iceberg__avro_meta(r, "schema-id", NULL), "3");
    assert_string_equal(knut_iceberg__avro_meta(r, "partition-spec", NULL), "[]");
    assert_string_equal(knut_iceberg__avro_meta(r, "partition-spec-id", NULL), "0");
    assert_string_equal(knut_iceberg__avro_meta(r, "format-version", NULL), "2");
    assert_string_equal(knut_iceberg__avro_meta(r, "content", NULL), "data");
    knut_iceberg__avro_close(r);
    json_decref(j);
    /* Entries inherit snapshot id and sequence numbers from the list row. */
    knut_iceberg_manifest_file mf = {.path = "m.avro", .sequence_number = 7,
                                     .min_sequence_number = 7, .added_snapshot_id = 99};
    knut_iceberg_data_file *got = NULL;
    size_t n = 0;
    assert_int_equal(knut_iceberg_manifest_parse(m.data, m.len, "m.avro", &mf, &got, &n, &err),
                     KNUT_OK);
    assert_int_equal(n, 2);
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(got[i].status, KNUT_ICEBERG_ADDED);
        assert_int_equal(got[i].content, KNUT_ICEBERG_DATA);
        assert_true(got[i].snapshot_id == 99);
        assert_true(got[i].sequence_number == 7 && got[i].file_sequence_number == 7);
        assert_string_equal(got[i].path, files[i].path);
        assert_string_equal(got[i].format, "parquet");
        assert_string_equal(got[i].partition, "[]");
        assert_true(got[i].record_count == files[i].record_count);
        assert_true(got[i].file_size == files[i].file_size);
    }
    knut_iceberg_data_files_free(got, n);
    knut_buf_reset(&m);
}

static void test_iceberg_avro_write__manifest_list(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    knut_iceberg_manifest_file in[2] = {
        {.path = "file:///t/metadata/new-m0.avro", .length = 4000, .spec_id = 0, .content = 0,
         .sequence_number = 5, .min_sequence_number = 5, .added_snapshot_id = INT64_MAX,
         .added_files = 1, .added_rows = 100},
        {.path = "file:///t/metadata/old-m0.avro", .length = 3000, .spec_id = 2, .content = 1,
         .sequence_number = 3, .min_sequence_number = 2, .added_snapshot_id = 1,
         .added_files = 4, .existing_files = 5, .deleted_files = 6, .added_rows = 7,
         .existing_rows = 8, .deleted_rows = 9}};
    for (int parent = 0; parent < 2; parent++) {
        knut_buf b = KNUT_BUF_INIT;
        assert_int_equal(knut_iceberg__manifest_list_write(&b, 42, parent ? 41 : -1, 5, in, 2,
                                                           &err),
                         KNUT_OK);
        knut_iceberg__avro *r = NULL;
        json_t *j = header_schema(&b, &r);
        assert_string_equal(knut_iceberg__avro_meta(r, "snapshot-id", NULL), "42");
        assert_string_equal(knut_iceberg__avro_meta(r, "parent-snapshot-id", NULL),
                            parent ? "41" : "null");
        assert_string_equal(knut_iceberg__avro_meta(r, "sequence-number", NULL), "5");
        assert_string_equal(knut_iceberg__avro_meta(r, "format-version", NULL), "2");
        knut_iceberg__avro_close(r);
        json_decref(j);
        knut_iceberg_manifest_file *got = NULL;
        size_t n = 0;
        assert_int_equal(knut_iceberg_manifest_list_parse(b.data, b.len, "l.avro", &got, &n,
                                                          &err),
                         KNUT_OK);
        assert_int_equal(n, 2);
        for (size_t i = 0; i < 2; i++) {
            assert_string_equal(got[i].path, in[i].path);
            assert_true(got[i].length == in[i].length && got[i].spec_id == in[i].spec_id);
            assert_int_equal(got[i].content, in[i].content);
            assert_true(got[i].sequence_number == in[i].sequence_number);
            assert_true(got[i].min_sequence_number == in[i].min_sequence_number);
            assert_true(got[i].added_snapshot_id == in[i].added_snapshot_id);
            assert_int_equal(got[i].added_files, in[i].added_files);
            assert_int_equal(got[i].existing_files, in[i].existing_files);
            assert_int_equal(got[i].deleted_files, in[i].deleted_files);
            assert_true(got[i].added_rows == in[i].added_rows);
            assert_true(got[i].existing_rows == in[i].existing_rows);
            assert_true(got[i].deleted_rows == in[i].deleted_rows);
        }
        knut_iceberg_manifest_list_free(got, n);
        knut_buf_reset(&b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_iceberg_avro_write__round_trip),
        cmocka_unit_test(test_iceberg_avro_write__many_blocks),
        cmocka_unit_test(test_iceberg_avro_write__empty),
        cmocka_unit_test(test_iceberg_avro_write__manifest),
        cmocka_unit_test(test_iceberg_avro_write__manifest_list),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
