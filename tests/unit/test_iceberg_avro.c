/*
 * Unit tests for what the Avro container reader refuses, each an error
 * naming the file and never a crash or an unbounded allocation: bad magic,
 * every truncation of small valid files, a sync marker mismatch, codecs it
 * does not read, block counts and sizes past the input or the caps,
 * string lengths and array counts inside a record that avro-c alone would
 * allocate, bytes left over in a block, a recursive schema, corrupt
 * deflate and snappy blocks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <snappy-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "iceberg/iceberg_int.h"
#include "iceberg_avro_fixture.h"


#define REC_S                                                                        \
    "{\"type\":\"record\",\"name\":\"r\",\"fields\":[{\"name\":\"s\",\"type\":\"string\"}]}"

static const knut_iceberg_manifest_file MF = {.path = "m.avro", .sequence_number = 1,
                                              .added_snapshot_id = 1};

/* Opens b as a container and reads every record; returns the first error
 * (or KNUT_OK at the end) and the records read. */
static knut_status read_all(const knut_buf *b, const char *name, int64_t *n, knut_error *err)
{
    knut_iceberg__avro *r = NULL;
    *n = 0;
    knut_status st = knut_iceberg__avro_open(&r, name, b->data, b->len, err);
    if (st != KNUT_OK) {
        assert_null(r);
        return st;
    }
    avro_value_t *rec;
    while ((st = knut_iceberg__avro_next(r, &rec, err)) == KNUT_OK)
        (*n)++;
    knut_iceberg__avro_close(r);
    return st == KNUT_EOF ? KNUT_OK : st;
}

static knut_status refused(const knut_buf *b, knut_error *err)
{
    int64_t n;
    knut_status st = read_all(b, "x.avro", &n, err);
    assert_int_not_equal(st, KNUT_OK);
    assert_int_equal(err->code, st);
    assert_memory_equal(err->message, "x.avro: ", 8);
    return st;
}

static void test_iceberg_avro__reads_meta_and_records(void **state)
{
    (void)state;
    knut_buf b = KNUT_BUF_INIT;
    ice_header(&b, REC_S, "null");
    knut_buf rec = KNUT_BUF_INIT;
    ice_put_bytes(&rec, "hi", 2);
    ice_put_bytes(&rec, "yo", 2);
    ice_block(&b, 2, rec.data, rec.len);
    ice_block(&b, 0, "", 0); /* an empty block is allowed */
    knut_iceberg__avro *r = NULL;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_iceberg__avro_open(&r, "t.avro", b.data, b.len, &err), KNUT_OK);
    size_t len = 0;
    assert_string_equal(knut_iceberg__avro_meta(r, "avro.codec", &len), "null");
    assert_int_equal(len, 4);
    assert_null(knut_iceberg__avro_meta(r, "format-version", NULL));
    avro_value_t *v;
    const char *s;
    size_t size;
    assert_int_equal(knut_iceberg__avro_next(r, &v, &err), KNUT_OK);
    avro_value_t f = ice_f(v, "s");
    avro_value_get_string(&f, &s, &size);
    assert_string_equal(s, "hi");
    assert_int_equal(knut_iceberg__avro_next(r, &v, &err), KNUT_OK);
    f = ice_f(v, "s");
    avro_value_get_string(&f, &s, &size);
    assert_string_equal(s, "yo");
    assert_int_equal(knut_iceberg__avro_record_no(r), 2);
    assert_int_equal(knut_iceberg__avro_next(r, &v, &err), KNUT_EOF);
    assert_int_equal(knut_iceberg__avro_next(r, &v, &err), KNUT_EOF);
    knut_iceberg__avro_close(r);
    knut_buf_reset(&rec);
    knut_buf_reset(&b);
}

static void test_iceberg_avro__bad_magic(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    knut_buf b = KNUT_BUF_INIT;
    knut_buf_puts(&b, "PAR1 not avro at all");
    assert_int_equal(refused(&b, &err), KNUT_EPARSE);
    assert_non_null(strstr(err.message, "bad magic"));
    knut_buf_clear(&b);
    assert_int_equal(refused(&b, &err), KNUT_EPARSE); /* empty */
    knut_iceberg_manifest_file *m = NULL;
    size_t n = 0;
    assert_int_equal(knut_iceberg_manifest_list_parse("Obj\x02", 4, "l.avro", &m, &n, &err),
                     KNUT_EPARSE);
    assert_string_equal(err.message, "l.avro: not an Avro object container file (bad magic)");
    knut_buf_reset(&b);
}

static void fill_list(avro_value_t *rec, int i)
{
    ice_str(rec, "manifest_path", "file:/m.avro");
    ice_long(rec, "manifest_length", 10);
    ice_int(rec, "partition_spec_id", 0);
    ice_int(rec, "content", 0);
    ice_long(rec, "sequence_number", 1);
    ice_long(rec, "min_sequence_number", 1);
    ice_long(rec, "added_snapshot_id", 5);
    ice_int(rec, "added_files_count", 1);
    ice_int(rec, "existing_files_count", 0);
    ice_int(rec, "deleted_files_count", 0);
    ice_long(rec, "added_rows_count", 1);
    ice_long(rec, "existing_rows_count", 0);
    ice_long(rec, "deleted_rows_count", 0);
    ice_null(rec, "partitions");
    ice_null(rec, "key_metadata");
}

/* Every prefix of a one-block file is an error, except the header alone
 * (a valid file of no records). */
static void test_iceberg_avro__every_truncation(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s", ice_tmp_path("t.avro"));
    for (size_t c = 0; c < 3; c++) {
        knut_buf b = KNUT_BUF_INIT;
        ice_write(path, ICE_LIST_V2("\"long\""), ice_codecs[c], 16384, 3, fill_list, &b);
        int ok = 0;
        for (size_t len = 0; len < b.len; len++) {
            knut_iceberg_manifest_file *m = NULL;
            size_t n = 0;
            knut_error err = KNUT_ERROR_INIT;
            knut_status st = knut_iceberg_manifest_list_parse(b.data, len, "t.avro", &m, &n, &err);
            if (st == KNUT_OK) {
                assert_int_equal(n, 0);
                ok++;
            } else {
                assert_int_equal(err.code, st);
                assert_memory_equal(err.message, "t.avro: ", 8);
                assert_null(m);
            }
            knut_iceberg_manifest_list_free(m, n);
            knut_iceberg_data_file *f = NULL;
            st = knut_iceberg_manifest_parse(b.data, len, "t.avro", &MF, &f, &n, &err);
            assert_true(st != KNUT_OK || n == 0);
            knut_iceberg_data_files_free(f, n);
        }
        assert_int_equal(ok, 1);
        knut_buf_reset(&b);
    }
}

static void test_iceberg_avro__sync_mismatch(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s", ice_tmp_path("s.avro"));
    knut_buf b = KNUT_BUF_INIT;
    ice_write(path, ICE_LIST_V2("\"long\""), "deflate", 16384, 2, fill_list, &b);
    b.data[b.len - 1] ^= 0x55;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(refused(&b, &err), KNUT_EPARSE);
    assert_string_equal(err.message, "x.avro: block 1: sync marker mismatch");
    knut_buf_reset(&b);
}

static void test_iceberg_avro__unknown_codecs(void **state)
{
    (void)state;
    static const char *const codecs[] = {"zstandard", "bzip2", "xz", "lzma", "\x01weird"};
    for (size_t c = 0; c < 5; c++) {
        knut_buf b = KNUT_BUF_INIT;
        ice_header(&b, REC_S, codecs[c]);
        ice_block(&b, 1, "\x04hi", 3);
        knut_iceberg_manifest_file *m = NULL;
        size_t n = 0;
        knut_error err = KNUT_ERROR_INIT;
        assert_int_equal(knut_iceberg_manifest_list_parse(b.data, b.len, "snap-9.avro", &m, &n,
                                                          &err),
                         KNUT_EUNSUPPORTED);
        assert_memory_equal(err.message, "snap-9.avro: Avro codec '", 25);
        if (c < 4)
            assert_non_null(strstr(err.message, codecs[c]));
        knut_buf_reset(&b);
    }
}

static void test_iceberg_avro__block_framing(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    knut_buf b = KNUT_BUF_INIT;
    /* a count past the cap */
    ice_header(&b, REC_S, NULL);
    ice_put_long(&b, (int64_t)1 << 40);
    ice_put_bytes(&b, "\x04hi", 3);
    knut_buf_append(&b, ICE_SYNC, 16);
    assert_int_equal(refused(&b, &err), KNUT_ETOOBIG);
    assert_non_null(strstr(err.message, "block 1: 1099511627776 records"));
    /* a byte size past the input */
    knut_buf_clear(&b);
    ice_header(&b, REC_S, NULL);
    ice_put_long(&b, 1);
    ice_put_long(&b, (int64_t)1 << 50);
    knut_buf_append(&b, "\x04hi", 3);
    assert_int_equal(refused(&b, &err), KNUT_EPARSE);
    assert_non_null(strstr(err.message, "past the end of the file"));
    /* negative count, overlong varint */
    knut_buf_clear(&b);
    ice_header(&b, REC_S, NULL);
    ice_block(&b, -1, "\x04hi", 3);
    assert_int_equal(refused(&b, &err), KNUT_EPARSE);
    knut_buf_clear(&b);
    ice_header(&b, REC_S, NULL);
    knut_buf_append(&b, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11);
    assert_int_equal(refused(&b, &err), KNUT_EPARSE);
    /* bytes left over after the block's records */
    knut_buf_clear(&b);
    ice_header(&b, REC_S, NULL);
    ice_block(&b, 1, "\x04hiZ", 4);
    assert_int_equal(refused(&b, &err), KNUT_EPARSE);
    assert_string_equal(err.message, "x.avro: block 1: 1 bytes left over after its 1 records");
    /* fewer bytes than records */
    knut_buf_clear(&b);
    ice_header(&b, REC_S, NULL);
    ice_block(&b, 2, "\x04hi", 3);
    assert_int_equal(refused(&b, &err), KNUT_EPARSE);
    assert_non_null(strstr(err.message, "x.avro: block 1, record 2: cannot decode"));
    knut_buf_reset(&b);
}

static void test_iceberg_avro__header_caps(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    knut_buf b = KNUT_BUF_INIT;
    knut_buf_append(&b, "Obj\x01", 4);
    ice_put_long(&b, 2000);
    assert_int_equal(refused(&b, &err), KNUT_ETOOBIG);
    knut_buf_clear(&b);
    knut_buf_append(&b, "Obj\x01", 4);
    ice_put_long(&b, 1);
    ice_put_long(&b, (int64_t)1 << 40); /* key length past the input */
    assert_int_equal(refused(&b, &err), KNUT_EPARSE);
    knut_buf_clear(&b);
    knut_buf_append(&b, "Obj\x01", 4);
    ice_put_long(&b, -1); /* a block with its byte size */
    ice_put_long(&b, 20);
    ice_put_bytes(&b, "avro.schema", 11);
    ice_put_bytes(&b, "\"int\"", 5);
    ice_put_long(&b, 0);
    knut_buf_append(&b, ICE_SYNC, 16);
    assert_int_equal(refused(&b, &err), KNUT_EPARSE);
    assert_non_null(strstr(err.message, "not a record"));
    knut_buf_clear(&b); /* no schema */
    knut_buf_append(&b, "Obj\x01", 4);
    ice_put_long(&b, 0);
    knut_buf_append(&b, ICE_SYNC, 16);
    assert_int_equal(refused(&b, &err), KNUT_EPARSE);
    assert_non_null(strstr(err.message, "no avro.schema"));
    knut_buf_clear(&b);
    ice_header(&b, "{\"type\":\"record\",\"name\":\"n\",\"fields\":[{\"name\":\"next\","
                   "\"type\":[\"null\",\"n\"]}]}", NULL);
    assert_int_equal(refused(&b, &err), KNUT_EUNSUPPORTED);
    assert_non_null(strstr(err.message, "recursive"));
    /* a name defined twice: avro-c would leak the second definition */
    knut_buf_clear(&b);
    ice_header(&b, "{\"type\":\"record\",\"name\":\"r2\",\"fields\":[{\"name\":\"a\","
                   "\"type\":{\"type\":\"record\",\"name\":\"x.r2\",\"fields\":[]}}]}", NULL);
    assert_int_equal(refused(&b, &err), KNUT_EPARSE);
    assert_non_null(strstr(err.message, "defines a named type twice"));
    knut_buf_clear(&b);
    ice_header(&b, "{\"type\":\"record\",\"name\":\"r\",\"fields\":[", NULL);
    assert_int_equal(refused(&b, &err), KNUT_EPARSE);
    knut_buf_reset(&b);
}

/* What avro-c would allocate or loop over unguarded. */
static void test_iceberg_avro__record_lengths(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    knut_buf b = KNUT_BUF_INIT, rec = KNUT_BUF_INIT;
    ice_header(&b, REC_S, NULL);
    ice_put_long(&rec, (int64_t)1 << 60); /* a string of 2^60 bytes */
    ice_block(&b, 1, rec.data, rec.len);
    assert_int_equal(refused(&b, &err), KNUT_EPARSE);
    assert_non_null(strstr(err.message, "block 1, record 1: cannot decode: a string"));
    knut_buf_clear(&b);
    knut_buf_clear(&rec);
    ice_header(&b, REC_S, NULL);
    ice_put_long(&rec, -3);
    ice_block(&b, 1, rec.data, rec.len);
    assert_int_equal(refused(&b, &err), KNUT_EPARSE);
    /* 2^62 nulls cost one varint of input */
    knut_buf_clear(&b);
    knut_buf_clear(&rec);
    ice_header(&b, "{\"type\":\"record\",\"name\":\"r\",\"fields\":[{\"name\":\"a\","
                   "\"type\":{\"type\":\"array\",\"items\":\"null\"}}]}", NULL);
    ice_put_long(&rec, (int64_t)1 << 62);
    ice_put_long(&rec, 0);
    ice_block(&b, 1, rec.data, rec.len);
    assert_int_equal(refused(&b, &err), KNUT_ETOOBIG);
    /* each record within the per-record cap, but not the file's budget:
     * zero-byte values cannot make a small file slow */
    knut_buf_clear(&b);
    knut_buf_clear(&rec);
    ice_header(&b, "{\"type\":\"record\",\"name\":\"r\",\"fields\":[{\"name\":\"a\","
                   "\"type\":{\"type\":\"array\",\"items\":\"null\"}}]}", NULL);
    for (int i = 0; i < 100; i++) {
        ice_put_long(&rec, (int64_t)KNUT_ICEBERG__AVRO_MAX_VALUES - 10);
        ice_put_long(&rec, 0);
    }
    ice_block(&b, 100, rec.data, rec.len);
    assert_int_equal(refused(&b, &err), KNUT_ETOOBIG);
    assert_non_null(strstr(err.message, "block 1, record 2:"));
    /* a union branch and an enum index out of range */
    knut_buf_clear(&b);
    ice_header(&b, "{\"type\":\"record\",\"name\":\"r\",\"fields\":[{\"name\":\"a\","
                   "\"type\":[\"null\",\"int\"]}]}", NULL);
    ice_block(&b, 1, "\x04", 1);
    assert_int_equal(refused(&b, &err), KNUT_EPARSE);
    knut_buf_clear(&b);
    ice_header(&b, "{\"type\":\"record\",\"name\":\"r\",\"fields\":[{\"name\":\"a\","
                   "\"type\":{\"type\":\"enum\",\"name\":\"e\",\"symbols\":[\"x\"]}}]}", NULL);
    ice_block(&b, 1, "\x02", 1);
    assert_int_equal(refused(&b, &err), KNUT_EPARSE);
    knut_buf_reset(&rec);
    knut_buf_reset(&b);
}

static void test_iceberg_avro__corrupt_codecs(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    knut_buf b = KNUT_BUF_INIT;
    ice_header(&b, REC_S, "deflate");
    ice_block(&b, 1, "\xff\xfe\xfd\xfc", 4);
    assert_int_equal(refused(&b, &err), KNUT_EPARSE);
    assert_non_null(strstr(err.message, "deflate"));
    /* a valid deflate stream cut short */
    unsigned char z[64];
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    assert_int_equal(deflateInit2(&zs, 9, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY), Z_OK);
    zs.next_in = (Bytef *)"\x04hi";
    zs.avail_in = 3;
    zs.next_out = z;
    zs.avail_out = sizeof z;
    assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
    size_t zn = sizeof z - zs.avail_out;
    deflateEnd(&zs);
    knut_buf_clear(&b);
    ice_header(&b, REC_S, "deflate");
    ice_block(&b, 1, z, zn - 1);
    assert_int_equal(refused(&b, &err), KNUT_EPARSE);
    knut_buf_clear(&b);
    ice_header(&b, REC_S, "deflate");
    ice_block(&b, 1, z, zn);
    int64_t n = 0;
    assert_int_equal(read_all(&b, "ok", &n, &err), KNUT_OK);
    assert_int_equal(n, 1);

    /* snappy: a CRC that does not match, a length that lies */
    char s[64];
    size_t sn = sizeof s;
    assert_int_equal(snappy_compress("\x04hi", 3, s, &sn), SNAPPY_OK);
    uint32_t crc = (uint32_t)crc32(0, (const Bytef *)"\x04hi", 3);
    unsigned char be[4] = {crc >> 24, crc >> 16, crc >> 8, crc};
    memcpy(s + sn, be, 4);
    knut_buf_clear(&b);
    ice_header(&b, REC_S, "snappy");
    ice_block(&b, 1, s, sn + 4);
    assert_int_equal(read_all(&b, "ok", &n, &err), KNUT_OK);
    s[sn + 3] ^= 1;
    knut_buf_clear(&b);
    ice_header(&b, REC_S, "snappy");
    ice_block(&b, 1, s, sn + 4);
    assert_int_equal(refused(&b, &err), KNUT_EPARSE);
    assert_non_null(strstr(err.message, "CRC-32"));
    knut_buf_clear(&b);
    ice_header(&b, REC_S, "snappy");
    ice_block(&b, 1, "\xff\xff\xff\x7f\x00\x00\x00\x00\x00", 9); /* claims 256 MiB */
    assert_int_not_equal(refused(&b, &err), KNUT_OK);
    knut_buf_clear(&b);
    ice_header(&b, REC_S, "snappy");
    ice_block(&b, 1, "\x01", 1);
    assert_int_equal(refused(&b, &err), KNUT_EPARSE);
    knut_buf_reset(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_iceberg_avro__reads_meta_and_records),
        cmocka_unit_test(test_iceberg_avro__bad_magic),
        cmocka_unit_test(test_iceberg_avro__every_truncation),
        cmocka_unit_test(test_iceberg_avro__sync_mismatch),
        cmocka_unit_test(test_iceberg_avro__unknown_codecs),
        cmocka_unit_test(test_iceberg_avro__block_framing),
        cmocka_unit_test(test_iceberg_avro__header_caps),
        cmocka_unit_test(test_iceberg_avro__record_lengths),
        cmocka_unit_test(test_iceberg_avro__corrupt_codecs),
    };
    return cmocka_run_group_tests(tests, ice_tmp_setup, ice_tmp_teardown);
}
