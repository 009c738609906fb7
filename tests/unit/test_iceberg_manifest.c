/*
 * Unit tests for the manifest reader: files written by avro-c's own writer
 * with the real Iceberg v2 manifest entry schema, in the null, deflate and
 * snappy codecs and several blocks, read back field by field; the
 * inheritance rules (snapshot id and sequence numbers from the manifest
 * list row; only ADDED entries inherit); v1 manifests; a missing required
 * field. The manifest list has test_iceberg_manifest_list.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iceberg_avro_fixture.h"
#include "knut/iceberg.h"

/* ---- manifests ------------------------------------------------------------- */

static void fill_part(avro_value_t *df, int i)
{
    avro_value_t part = ice_f(df, "partition");
    if (i == 0) {
        ice_int(&part, "day", 19000);
        ice_str(&part, "cat", "a\"b\\c\n");
        ice_long(&part, "id_bucket", -5);
        avro_value_t fl = ice_slot(&part, "flag", 1);
        ICE_CHECK(avro_value_set_boolean(&fl, 1));
        avro_value_t raw = ice_slot(&part, "raw", 1);
        ICE_CHECK(avro_value_set_bytes(&raw, "\x00\xff\x10", 3));
        avro_value_t u = ice_slot(&part, "u", 1);
        ICE_CHECK(avro_value_set_fixed(&u, "\xde\xad\xbe\xef", 4));
        avro_value_t sc = ice_slot(&part, "score", 1);
        ICE_CHECK(avro_value_set_double(&sc, 0.1));
    } else {
        static const char *const f[] = {"day", "cat", "id_bucket", "flag", "raw", "u", "score"};
        for (size_t k = 0; k < 7; k++)
            ice_null(&part, f[k]);
    }
}

/* Entry 0: ADDED, everything inherited. 1: EXISTING, explicit. 2: DELETED,
 * explicit, an equality delete. 3: ADDED with explicit sequence numbers and
 * a position delete naming its data file. */
static void fill_entry_v2(avro_value_t *rec, int i)
{
    ice_int(rec, "status", i == 0 || i == 3 ? 1 : i == 1 ? 0 : 2);
    if (i == 0) {
        ice_null(rec, "snapshot_id");
        ice_null(rec, "sequence_number");
        ice_null(rec, "file_sequence_number");
    } else {
        ice_long(rec, "snapshot_id", 500 + i);
        ice_long(rec, "sequence_number", 20 + i);
        ice_long(rec, "file_sequence_number", 30 + i);
    }
    avro_value_t df = ice_f(rec, "data_file");
    ice_int(&df, "content", i == 2 ? 2 : i == 3 ? 1 : 0);
    char path[64];
    snprintf(path, sizeof path, "file:/wh/t/data/f%d.parquet", i);
    ice_str(&df, "file_path", path);
    ice_str(&df, "file_format", i == 1 ? "PARQUET" : "parquet");
    fill_part(&df, i);
    ice_long(&df, "record_count", 10 * (i + 1));
    ice_long(&df, "file_size_in_bytes", 4096 + i);
    if (i == 1) {
        avro_value_t cs = ice_slot(&df, "column_sizes", 1), kv;
        ICE_CHECK(avro_value_append(&cs, &kv, NULL));
        avro_value_t k = ice_f(&kv, "key"), v = ice_f(&kv, "value");
        ICE_CHECK(avro_value_set_int(&k, 1));
        ICE_CHECK(avro_value_set_long(&v, 77));
    } else {
        ice_null(&df, "column_sizes");
    }
    static const char *const maps[] = {"value_counts", "null_value_counts", "nan_value_counts",
                                       "lower_bounds", "upper_bounds", "key_metadata",
                                       "split_offsets", "sort_order_id"};
    for (size_t k = 0; k < 8; k++)
        ice_null(&df, maps[k]);
    if (i == 2) {
        avro_value_t ids = ice_slot(&df, "equality_ids", 1), e;
        ICE_CHECK(avro_value_append(&ids, &e, NULL));
        ICE_CHECK(avro_value_set_int(&e, 1));
        ICE_CHECK(avro_value_append(&ids, &e, NULL));
        ICE_CHECK(avro_value_set_int(&e, 3));
    } else {
        ice_null(&df, "equality_ids");
    }
    if (i == 3)
        ice_str(&df, "referenced_data_file", "file:/wh/t/data/f0.parquet");
    else
        ice_null(&df, "referenced_data_file");
}

static const knut_iceberg_manifest_file MF = {
    .path = "m.avro", .spec_id = 3, .sequence_number = 12, .min_sequence_number = 1,
    .added_snapshot_id = 4444};

static void check_entries_v2(const knut_iceberg_data_file *f, size_t n)
{
    assert_int_equal(n, 4);
    for (size_t i = 0; i < 4; i++) {
        char path[64];
        snprintf(path, sizeof path, "file:/wh/t/data/f%zu.parquet", i);
        assert_string_equal(f[i].path, path);
        assert_string_equal(f[i].format, "parquet");
        assert_int_equal(f[i].record_count, 10 * (i + 1));
        assert_int_equal(f[i].file_size, 4096 + i);
        assert_int_equal(f[i].spec_id, 3);
    }
    /* inherited from MF */
    assert_int_equal(f[0].status, KNUT_ICEBERG_ADDED);
    assert_int_equal(f[0].snapshot_id, 4444);
    assert_int_equal(f[0].sequence_number, 12);
    assert_int_equal(f[0].file_sequence_number, 12);
    assert_int_equal(f[0].content, KNUT_ICEBERG_DATA);
    assert_string_equal(f[0].partition, "[19000,\"a\\\"b\\\\c\\n\",-5,true,\"00ff10\","
                                        "\"deadbeef\",0.10000000000000001]");
    assert_null(f[0].equality_ids);
    assert_null(f[0].referenced_data_file);
    /* explicit */
    assert_int_equal(f[1].status, KNUT_ICEBERG_EXISTING);
    assert_int_equal(f[1].snapshot_id, 501);
    assert_int_equal(f[1].sequence_number, 21);
    assert_int_equal(f[1].file_sequence_number, 31);
    assert_string_equal(f[1].partition, "[null,null,null,null,null,null,null]");
    assert_int_equal(f[2].status, KNUT_ICEBERG_DELETED);
    assert_int_equal(f[2].content, KNUT_ICEBERG_EQUALITY_DELETES);
    assert_int_equal(f[2].n_equality_ids, 2);
    assert_int_equal(f[2].equality_ids[0], 1);
    assert_int_equal(f[2].equality_ids[1], 3);
    assert_int_equal(f[3].status, KNUT_ICEBERG_ADDED);
    assert_int_equal(f[3].sequence_number, 23); /* written wins over inherited */
    assert_int_equal(f[3].content, KNUT_ICEBERG_POSITION_DELETES);
    assert_string_equal(f[3].referenced_data_file, "file:/wh/t/data/f0.parquet");
}

static void test_iceberg_manifest__entries_v2_codecs(void **state)
{
    (void)state;
    for (size_t c = 0; c < 3; c++) {
        knut_buf b = KNUT_BUF_INIT;
        for (int small = 0; small < 2; small++) {
            ice_write(ice_tmp_path("m.avro"), ICE_ENTRY_V2(ICE_PART_FIELDS), ice_codecs[c],
                      small ? 16384 : 200, 4, fill_entry_v2, &b);
            knut_iceberg_data_file *f = NULL;
            size_t n = 0;
            knut_error err = KNUT_ERROR_INIT;
            if (knut_iceberg_manifest_parse(b.data, b.len, "m.avro", &MF, &f, &n, &err))
                fail_msg("%s: %s", ice_codecs[c], err.message);
            check_entries_v2(f, n);
            knut_iceberg_data_files_free(f, n);
            assert_true(small ? ice_blocks(&b) == 1 : ice_blocks(&b) > 1);
            assert_int_equal(knut_iceberg_manifest_read(ice_tmp_path("m.avro"), &MF, &f, &n, &err),
                             KNUT_OK);
            check_entries_v2(f, n);
            knut_iceberg_data_files_free(f, n);
            if (small) {
                char name[64];
                snprintf(name, sizeof name, "manifest-v2-%s.avro", ice_codecs[c]);
                ice_seed(name, &b);
            }
        }
        knut_buf_reset(&b);
    }
}

static void fill_existing_null_seq(avro_value_t *rec, int i)
{
    fill_entry_v2(rec, i);
    if (i == 1)
        ice_null(rec, "sequence_number");
}

static void test_iceberg_manifest__existing_must_carry_seq(void **state)
{
    (void)state;
    knut_buf b = KNUT_BUF_INIT;
    ice_write(ice_tmp_path("mx.avro"), ICE_ENTRY_V2(ICE_PART_FIELDS), "null", 16384, 2,
              fill_existing_null_seq, &b);
    knut_iceberg_data_file *f = (knut_iceberg_data_file *)(uintptr_t)1;
    size_t n = 9;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_iceberg_manifest_parse(b.data, b.len, "mx.avro", &MF, &f, &n, &err),
                     KNUT_EPARSE);
    assert_null(f);
    assert_int_equal(n, 0);
    assert_non_null(strstr(err.message, "mx.avro: record 2: sequence_number:"));
    assert_non_null(strstr(err.message, "EXISTING"));
    knut_buf_reset(&b);
}

static void fill_entry_v1(avro_value_t *rec, int i)
{
    ice_int(rec, "status", i);
    ice_long(rec, "snapshot_id", 77);
    avro_value_t df = ice_f(rec, "data_file");
    ice_str(&df, "file_path", "/wh/t/data/a.orc");
    ice_str(&df, "file_format", "ORC");
    ice_long(&df, "record_count", 3);
    ice_long(&df, "file_size_in_bytes", 300);
    ice_long(&df, "block_size_in_bytes", 67108864);
}

static void test_iceberg_manifest__entries_v1(void **state)
{
    (void)state;
    knut_buf b = KNUT_BUF_INIT;
    ice_write(ice_tmp_path("m1.avro"), ICE_ENTRY_V1, "null", 16384, 3, fill_entry_v1, &b);
    ice_seed("manifest-v1-null.avro", &b);
    knut_iceberg_manifest_file mf = MF;
    mf.sequence_number = 0; /* a v1 table's list */
    knut_iceberg_data_file *f = NULL;
    size_t n = 0;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_iceberg_manifest_parse(b.data, b.len, "m1", &mf, &f, &n, &err), KNUT_OK);
    assert_int_equal(n, 3);
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(f[i].status, (int)i);
        assert_int_equal(f[i].snapshot_id, 77);
        assert_int_equal(f[i].sequence_number, 0);
        assert_int_equal(f[i].file_sequence_number, 0);
        assert_int_equal(f[i].content, KNUT_ICEBERG_DATA);
        assert_string_equal(f[i].format, "orc");
        assert_string_equal(f[i].partition, "[]");
    }
    knut_iceberg_data_files_free(f, n);
    knut_buf_reset(&b);
}

static void fill_no_path(avro_value_t *rec, int i)
{
    ice_int(rec, "status", 1);
    ice_long(rec, "snapshot_id", 1);
    avro_value_t df = ice_f(rec, "data_file");
    ice_str(&df, "file_format", "parquet");
    ice_long(&df, "record_count", 1);
    ice_long(&df, "file_size_in_bytes", 1);
}

static void test_iceberg_manifest__entry_missing_field(void **state)
{
    (void)state;
    static const char schema[] =
        "{\"type\":\"record\",\"name\":\"manifest_entry\",\"fields\":["
        "{\"name\":\"status\",\"type\":\"int\"},{\"name\":\"snapshot_id\",\"type\":\"long\"},"
        "{\"name\":\"data_file\",\"type\":{\"type\":\"record\",\"name\":\"r2\",\"fields\":["
        "{\"name\":\"file_format\",\"type\":\"string\"},"
        "{\"name\":\"record_count\",\"type\":\"long\"},"
        "{\"name\":\"file_size_in_bytes\",\"type\":\"long\"}]}}]}";
    knut_buf b = KNUT_BUF_INIT;
    ice_write(ice_tmp_path("mp.avro"), schema, "deflate", 16384, 1, fill_no_path, &b);
    knut_iceberg_data_file *f = NULL;
    size_t n = 0;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_iceberg_manifest_parse(b.data, b.len, "mp.avro", &MF, &f, &n, &err),
                     KNUT_EPARSE);
    assert_string_equal(err.message,
                        "mp.avro: record 1: data_file.file_path: missing required field");
    knut_buf_reset(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_iceberg_manifest__entries_v2_codecs),
        cmocka_unit_test(test_iceberg_manifest__existing_must_carry_seq),
        cmocka_unit_test(test_iceberg_manifest__entries_v1),
        cmocka_unit_test(test_iceberg_manifest__entry_missing_field),
    };
    return cmocka_run_group_tests(tests, ice_tmp_setup, ice_tmp_teardown);
}
