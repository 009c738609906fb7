/*
 * Unit tests for the manifest list reader: files written by avro-c's own
 * writer with the real Iceberg v2 schema (null, deflate, snappy; one and
 * many blocks) read back field by field; a v1 list without 515-517 and
 * with the old count names; 515/516 declared nullable; a missing required
 * field. With KNUT_ICEBERG_SEED_DIR set, small files are kept as fuzz
 * seeds.
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

/* ---- manifest lists ------------------------------------------------------ */

static void fill_list_v2(avro_value_t *rec, int i)
{
    char path[64];
    snprintf(path, sizeof path, "file:/wh/t/metadata/m%d.avro", i);
    ice_str(rec, "manifest_path", path);
    ice_long(rec, "manifest_length", 1000 + i);
    ice_int(rec, "partition_spec_id", i % 2);
    ice_int(rec, "content", i == 2 ? 1 : 0);
    ice_long(rec, "sequence_number", 10 + i);
    ice_long(rec, "min_sequence_number", 5 + i);
    ice_long(rec, "added_snapshot_id", 7000000000LL + i);
    ice_int(rec, "added_files_count", 1 + i);
    ice_int(rec, "existing_files_count", 2 + i);
    ice_int(rec, "deleted_files_count", 3 + i);
    ice_long(rec, "added_rows_count", 100 + i);
    ice_long(rec, "existing_rows_count", 200 + i);
    ice_long(rec, "deleted_rows_count", 300 + i);
    if (i == 1) {
        /* one field summary, to show a non-null nested array decodes */
        avro_value_t arr = ice_slot(rec, "partitions", 1), sum;
        ICE_CHECK(avro_value_append(&arr, &sum, NULL));
        avro_value_t cn = ice_f(&sum, "contains_null");
        ICE_CHECK(avro_value_set_boolean(&cn, 1));
        ice_null(&sum, "contains_nan");
        avro_value_t lb = ice_slot(&sum, "lower_bound", 1);
        ICE_CHECK(avro_value_set_bytes(&lb, "\x01\x00\x00\x00", 4));
        ice_null(&sum, "upper_bound");
    } else {
        ice_null(rec, "partitions");
    }
    ice_null(rec, "key_metadata");
}

static void check_list_v2(const knut_iceberg_manifest_file *m, size_t n, int rows)
{
    assert_int_equal(n, rows);
    for (int i = 0; i < rows; i++) {
        char path[64];
        snprintf(path, sizeof path, "file:/wh/t/metadata/m%d.avro", i);
        assert_string_equal(m[i].path, path);
        assert_int_equal(m[i].length, 1000 + i);
        assert_int_equal(m[i].spec_id, i % 2);
        assert_int_equal(m[i].content, i == 2 ? 1 : 0);
        assert_int_equal(m[i].sequence_number, 10 + i);
        assert_int_equal(m[i].min_sequence_number, 5 + i);
        assert_int_equal(m[i].added_snapshot_id, 7000000000LL + i);
        assert_int_equal(m[i].added_files, 1 + i);
        assert_int_equal(m[i].existing_files, 2 + i);
        assert_int_equal(m[i].deleted_files, 3 + i);
        assert_int_equal(m[i].added_rows, 100 + i);
        assert_int_equal(m[i].existing_rows, 200 + i);
        assert_int_equal(m[i].deleted_rows, 300 + i);
    }
}

static void test_iceberg_manifest_list__list_v2_codecs(void **state)
{
    (void)state;
    for (size_t c = 0; c < 3; c++) {
        knut_buf b = KNUT_BUF_INIT;
        /* 40 rows in blocks of ~256 bytes: many blocks per file. */
        for (int small = 0; small < 2; small++) {
            int rows = small ? 3 : 40;
            ice_write(ice_tmp_path("list.avro"), ICE_LIST_V2("\"long\""), ice_codecs[c],
                      small ? 16384 : 256, rows, fill_list_v2, &b);
            knut_iceberg_manifest_file *m = NULL;
            size_t n = 0;
            knut_error err = KNUT_ERROR_INIT;
            if (knut_iceberg_manifest_list_parse(b.data, b.len, "list.avro", &m, &n, &err))
                fail_msg("%s: %s", ice_codecs[c], err.message);
            check_list_v2(m, n, rows);
            knut_iceberg_manifest_list_free(m, n);
            assert_true(small ? ice_blocks(&b) == 1 : ice_blocks(&b) > 3);
            if (small) {
                char name[64];
                snprintf(name, sizeof name, "list-v2-%s.avro", ice_codecs[c]);
                ice_seed(name, &b);
            }
            /* the same through the file */
            assert_int_equal(knut_iceberg_manifest_list_read(ice_tmp_path("list.avro"), &m, &n, &err),
                             KNUT_OK);
            check_list_v2(m, n, rows);
            knut_iceberg_manifest_list_free(m, n);
        }
        knut_buf_reset(&b);
    }
}

static void fill_list_v1(avro_value_t *rec, int i)
{
    ice_str(rec, "manifest_path", "/wh/t/metadata/v1.avro");
    ice_long(rec, "manifest_length", 4242);
    ice_int(rec, "partition_spec_id", 0);
    ice_long(rec, "added_snapshot_id", 99);
    if (i == 0) {
        ice_int(rec, "added_data_files_count", 4);
        ice_int(rec, "existing_data_files_count", 5);
        ice_int(rec, "deleted_data_files_count", 6);
        ice_long(rec, "added_rows_count", 40);
        ice_long(rec, "existing_rows_count", 50);
        ice_long(rec, "deleted_rows_count", 60);
    } else { /* v1 counts are optional */
        ice_null(rec, "added_data_files_count");
        ice_null(rec, "existing_data_files_count");
        ice_null(rec, "deleted_data_files_count");
        ice_null(rec, "added_rows_count");
        ice_null(rec, "existing_rows_count");
        ice_null(rec, "deleted_rows_count");
    }
    ice_null(rec, "partitions");
}

static void test_iceberg_manifest_list__list_v1(void **state)
{
    (void)state;
    knut_buf b = KNUT_BUF_INIT;
    ice_write(ice_tmp_path("list1.avro"), ICE_LIST_V1, "deflate", 16384, 2, fill_list_v1, &b);
    ice_seed("list-v1-deflate.avro", &b);
    knut_iceberg_manifest_file *m = NULL;
    size_t n = 0;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_iceberg_manifest_list_parse(b.data, b.len, "l1", &m, &n, &err), KNUT_OK);
    assert_int_equal(n, 2);
    assert_string_equal(m[0].path, "/wh/t/metadata/v1.avro");
    assert_int_equal(m[0].length, 4242);
    assert_int_equal(m[0].content, 0);
    assert_int_equal(m[0].sequence_number, 0);
    assert_int_equal(m[0].min_sequence_number, 0);
    assert_int_equal(m[0].added_snapshot_id, 99);
    assert_int_equal(m[0].added_files, 4);
    assert_int_equal(m[0].existing_files, 5);
    assert_int_equal(m[0].deleted_files, 6);
    assert_int_equal(m[0].added_rows, 40);
    assert_int_equal(m[0].existing_rows, 50);
    assert_int_equal(m[0].deleted_rows, 60);
    assert_int_equal(m[1].added_files, 0);
    assert_int_equal(m[1].deleted_rows, 0);
    knut_iceberg_manifest_list_free(m, n);
    knut_buf_reset(&b);
}

static void fill_list_nullable(avro_value_t *rec, int i)
{
    fill_list_v2(rec, i);
    if (i == 1) {
        ice_null(rec, "sequence_number");
        ice_null(rec, "min_sequence_number");
    }
}

static void test_iceberg_manifest_list__list_nullable_seq(void **state)
{
    (void)state;
    knut_buf b = KNUT_BUF_INIT;
    ice_write(ice_tmp_path("listn.avro"), ICE_LIST_V2("[\"null\",\"long\"]"), "snappy", 16384, 2,
              fill_list_nullable, &b);
    ice_seed("list-nullable-snappy.avro", &b);
    knut_iceberg_manifest_file *m = NULL;
    size_t n = 0;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_iceberg_manifest_list_parse(b.data, b.len, "ln", &m, &n, &err), KNUT_OK);
    assert_int_equal(n, 2);
    assert_int_equal(m[0].sequence_number, 10);
    assert_int_equal(m[0].min_sequence_number, 5);
    assert_int_equal(m[1].sequence_number, 0);
    assert_int_equal(m[1].min_sequence_number, 0);
    assert_int_equal(m[1].added_rows, 101);
    knut_iceberg_manifest_list_free(m, n);
    knut_buf_reset(&b);
}

/* The v2 list without manifest_length. */
#define LIST_NO_LENGTH                                                               \
    "{\"type\":\"record\",\"name\":\"manifest_file\",\"fields\":["                   \
    "{\"name\":\"manifest_path\",\"type\":\"string\"},"                              \
    "{\"name\":\"partition_spec_id\",\"type\":\"int\"},"                             \
    "{\"name\":\"sequence_number\",\"type\":\"long\"},"                              \
    "{\"name\":\"min_sequence_number\",\"type\":\"long\"},"                          \
    "{\"name\":\"added_snapshot_id\",\"type\":\"long\"}]}"

static void fill_no_length(avro_value_t *rec, int i)
{
    ice_str(rec, "manifest_path", "m.avro");
    ice_int(rec, "partition_spec_id", 0);
    ice_long(rec, "sequence_number", 1);
    ice_long(rec, "min_sequence_number", 1);
    ice_long(rec, "added_snapshot_id", 1);
}

static void test_iceberg_manifest_list__list_missing_field(void **state)
{
    (void)state;
    knut_buf b = KNUT_BUF_INIT;
    ice_write(ice_tmp_path("listm.avro"), LIST_NO_LENGTH, "null", 16384, 2, fill_no_length, &b);
    knut_iceberg_manifest_file *m = (knut_iceberg_manifest_file *)(uintptr_t)1;
    size_t n = 7;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_iceberg_manifest_list_parse(b.data, b.len, "snap-1.avro", &m, &n, &err),
                     KNUT_EPARSE);
    assert_null(m);
    assert_int_equal(n, 0);
    assert_string_equal(err.message, "snap-1.avro: record 1: manifest_length: missing required field");
    knut_buf_reset(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_iceberg_manifest_list__list_v2_codecs),
        cmocka_unit_test(test_iceberg_manifest_list__list_v1),
        cmocka_unit_test(test_iceberg_manifest_list__list_nullable_seq),
        cmocka_unit_test(test_iceberg_manifest_list__list_missing_field),
    };
    return cmocka_run_group_tests(tests, ice_tmp_setup, ice_tmp_teardown);
}
