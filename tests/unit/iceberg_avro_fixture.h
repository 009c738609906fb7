/*
 * Shared helpers for the iceberg Avro tests: the real Iceberg v2 manifest
 * list and manifest entry schemas (with their field ids, which avro-c's
 * writer drops from the header but which do not change the encoding),
 * avro-c generic-value setters, writing a container with avro-c's own
 * writer, and building a container's framing by hand for what avro-c
 * would never write.
 */
#ifndef KNUT_TEST_ICEBERG_AVRO_FIXTURE_H
#define KNUT_TEST_ICEBERG_AVRO_FIXTURE_H

#include <avro.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "knut/core.h"

/* ---- schemas ------------------------------------------------------------ */

#define ICE_R508                                                                     \
    "{\"type\":\"record\",\"name\":\"r508\",\"fields\":["                            \
    "{\"name\":\"contains_null\",\"type\":\"boolean\",\"field-id\":509},"            \
    "{\"name\":\"contains_nan\",\"type\":[\"null\",\"boolean\"],\"default\":null,"   \
    "\"field-id\":518},"                                                             \
    "{\"name\":\"lower_bound\",\"type\":[\"null\",\"bytes\"],\"default\":null,"      \
    "\"field-id\":510},"                                                             \
    "{\"name\":\"upper_bound\",\"type\":[\"null\",\"bytes\"],\"default\":null,"      \
    "\"field-id\":511}]}"

/* SEQ is the type of 515/516: "\"long\"" (Java) or a nullable union. */
#define ICE_LIST_V2(SEQ)                                                             \
    "{\"type\":\"record\",\"name\":\"manifest_file\",\"fields\":["                   \
    "{\"name\":\"manifest_path\",\"type\":\"string\",\"field-id\":500},"             \
    "{\"name\":\"manifest_length\",\"type\":\"long\",\"field-id\":501},"             \
    "{\"name\":\"partition_spec_id\",\"type\":\"int\",\"field-id\":502},"            \
    "{\"name\":\"content\",\"type\":\"int\",\"field-id\":517},"                      \
    "{\"name\":\"sequence_number\",\"type\":" SEQ ",\"field-id\":515},"              \
    "{\"name\":\"min_sequence_number\",\"type\":" SEQ ",\"field-id\":516},"          \
    "{\"name\":\"added_snapshot_id\",\"type\":\"long\",\"field-id\":503},"           \
    "{\"name\":\"added_files_count\",\"type\":\"int\",\"field-id\":504},"            \
    "{\"name\":\"existing_files_count\",\"type\":\"int\",\"field-id\":505},"         \
    "{\"name\":\"deleted_files_count\",\"type\":\"int\",\"field-id\":506},"          \
    "{\"name\":\"added_rows_count\",\"type\":\"long\",\"field-id\":512},"            \
    "{\"name\":\"existing_rows_count\",\"type\":\"long\",\"field-id\":513},"         \
    "{\"name\":\"deleted_rows_count\",\"type\":\"long\",\"field-id\":514},"          \
    "{\"name\":\"partitions\",\"type\":[\"null\",{\"type\":\"array\",\"items\":"     \
    ICE_R508 ",\"element-id\":508}],\"default\":null,\"field-id\":507},"             \
    "{\"name\":\"key_metadata\",\"type\":[\"null\",\"bytes\"],\"default\":null,"     \
    "\"field-id\":519}]}"

/* Java's v1 list: no content or sequence numbers, the old count names,
 * optional counts. */
#define ICE_LIST_V1                                                                  \
    "{\"type\":\"record\",\"name\":\"manifest_file\",\"fields\":["                   \
    "{\"name\":\"manifest_path\",\"type\":\"string\",\"field-id\":500},"             \
    "{\"name\":\"manifest_length\",\"type\":\"long\",\"field-id\":501},"             \
    "{\"name\":\"partition_spec_id\",\"type\":\"int\",\"field-id\":502},"            \
    "{\"name\":\"added_snapshot_id\",\"type\":[\"null\",\"long\"],\"field-id\":503}," \
    "{\"name\":\"added_data_files_count\",\"type\":[\"null\",\"int\"],\"field-id\":504}," \
    "{\"name\":\"existing_data_files_count\",\"type\":[\"null\",\"int\"],\"field-id\":505}," \
    "{\"name\":\"deleted_data_files_count\",\"type\":[\"null\",\"int\"],\"field-id\":506}," \
    "{\"name\":\"partitions\",\"type\":[\"null\",{\"type\":\"array\",\"items\":"     \
    ICE_R508 ",\"element-id\":508}],\"default\":null,\"field-id\":507},"             \
    "{\"name\":\"added_rows_count\",\"type\":[\"null\",\"long\"],\"field-id\":512}," \
    "{\"name\":\"existing_rows_count\",\"type\":[\"null\",\"long\"],\"field-id\":513}," \
    "{\"name\":\"deleted_rows_count\",\"type\":[\"null\",\"long\"],\"field-id\":514}]}"

#define ICE_MAP(NAME, ID, K, V, VT)                                                  \
    "{\"name\":\"" NAME "\",\"type\":[\"null\",{\"type\":\"array\",\"items\":"       \
    "{\"type\":\"record\",\"name\":\"k" #K "_v" #V "\",\"fields\":["                 \
    "{\"name\":\"key\",\"type\":\"int\",\"field-id\":" #K "},"                       \
    "{\"name\":\"value\",\"type\":\"" VT "\",\"field-id\":" #V "}]},"                \
    "\"logicalType\":\"map\"}],\"default\":null,\"field-id\":" #ID "}"

/* A partition of every primitive kind a transform can give. */
#define ICE_PART_FIELDS                                                              \
    "{\"name\":\"day\",\"type\":[\"null\",\"int\"],\"default\":null,\"field-id\":1000}," \
    "{\"name\":\"cat\",\"type\":[\"null\",\"string\"],\"default\":null,\"field-id\":1001}," \
    "{\"name\":\"id_bucket\",\"type\":[\"null\",\"long\"],\"default\":null,\"field-id\":1002}," \
    "{\"name\":\"flag\",\"type\":[\"null\",\"boolean\"],\"default\":null,\"field-id\":1003}," \
    "{\"name\":\"raw\",\"type\":[\"null\",\"bytes\"],\"default\":null,\"field-id\":1004}," \
    "{\"name\":\"u\",\"type\":[\"null\",{\"type\":\"fixed\",\"name\":\"uuid_fixed\","  \
    "\"size\":4}],\"default\":null,\"field-id\":1005},"                              \
    "{\"name\":\"score\",\"type\":[\"null\",\"double\"],\"default\":null,\"field-id\":1006}"

#define ICE_ENTRY_V2(PART)                                                           \
    "{\"type\":\"record\",\"name\":\"manifest_entry\",\"fields\":["                  \
    "{\"name\":\"status\",\"type\":\"int\",\"field-id\":0},"                         \
    "{\"name\":\"snapshot_id\",\"type\":[\"null\",\"long\"],\"default\":null,\"field-id\":1}," \
    "{\"name\":\"sequence_number\",\"type\":[\"null\",\"long\"],\"default\":null,\"field-id\":3}," \
    "{\"name\":\"file_sequence_number\",\"type\":[\"null\",\"long\"],\"default\":null,"  \
    "\"field-id\":4},"                                                               \
    "{\"name\":\"data_file\",\"type\":{\"type\":\"record\",\"name\":\"r2\",\"fields\":[" \
    "{\"name\":\"content\",\"type\":\"int\",\"field-id\":134},"                      \
    "{\"name\":\"file_path\",\"type\":\"string\",\"field-id\":100},"                 \
    "{\"name\":\"file_format\",\"type\":\"string\",\"field-id\":101},"               \
    "{\"name\":\"partition\",\"type\":{\"type\":\"record\",\"name\":\"r102\","       \
    "\"fields\":[" PART "]},\"field-id\":102},"                                      \
    "{\"name\":\"record_count\",\"type\":\"long\",\"field-id\":103},"                \
    "{\"name\":\"file_size_in_bytes\",\"type\":\"long\",\"field-id\":104},"          \
    ICE_MAP("column_sizes", 108, 117, 118, "long") ","                               \
    ICE_MAP("value_counts", 109, 119, 120, "long") ","                               \
    ICE_MAP("null_value_counts", 110, 121, 122, "long") ","                          \
    ICE_MAP("nan_value_counts", 137, 138, 139, "long") ","                           \
    ICE_MAP("lower_bounds", 125, 126, 127, "bytes") ","                              \
    ICE_MAP("upper_bounds", 128, 129, 130, "bytes") ","                              \
    "{\"name\":\"key_metadata\",\"type\":[\"null\",\"bytes\"],\"default\":null,\"field-id\":131}," \
    "{\"name\":\"split_offsets\",\"type\":[\"null\",{\"type\":\"array\",\"items\":\"long\","  \
    "\"element-id\":133}],\"default\":null,\"field-id\":132},"                       \
    "{\"name\":\"equality_ids\",\"type\":[\"null\",{\"type\":\"array\",\"items\":\"int\","    \
    "\"element-id\":136}],\"default\":null,\"field-id\":135},"                       \
    "{\"name\":\"sort_order_id\",\"type\":[\"null\",\"int\"],\"default\":null,\"field-id\":140}," \
    "{\"name\":\"referenced_data_file\",\"type\":[\"null\",\"string\"],\"default\":null," \
    "\"field-id\":143}]},\"field-id\":2}]}"

/* Java's v1 entry: snapshot_id required, no sequence numbers, no content,
 * block_size_in_bytes. */
#define ICE_ENTRY_V1                                                                 \
    "{\"type\":\"record\",\"name\":\"manifest_entry\",\"fields\":["                  \
    "{\"name\":\"status\",\"type\":\"int\",\"field-id\":0},"                         \
    "{\"name\":\"snapshot_id\",\"type\":\"long\",\"field-id\":1},"                   \
    "{\"name\":\"data_file\",\"type\":{\"type\":\"record\",\"name\":\"r2\",\"fields\":[" \
    "{\"name\":\"file_path\",\"type\":\"string\",\"field-id\":100},"                 \
    "{\"name\":\"file_format\",\"type\":\"string\",\"field-id\":101},"               \
    "{\"name\":\"partition\",\"type\":{\"type\":\"record\",\"name\":\"r102\","       \
    "\"fields\":[]},\"field-id\":102},"                                              \
    "{\"name\":\"record_count\",\"type\":\"long\",\"field-id\":103},"                \
    "{\"name\":\"file_size_in_bytes\",\"type\":\"long\",\"field-id\":104},"          \
    "{\"name\":\"block_size_in_bytes\",\"type\":\"long\",\"field-id\":105}]},"       \
    "\"field-id\":2}]}"

/* ---- generic value setters (abort the test on failure) ------------------- */

static inline avro_value_t ice_f(avro_value_t *rec, const char *name)
{
    avro_value_t f;
    if (avro_value_get_by_name(rec, name, &f, NULL) != 0) {
        fprintf(stderr, "no field %s: %s\n", name, avro_strerror());
        abort();
    }
    return f;
}

#define ICE_CHECK(x)                                                         \
    do {                                                                     \
        if ((x) != 0) {                                                      \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x,        \
                    avro_strerror());                                        \
            abort();                                                         \
        }                                                                    \
    } while (0)

/* For a union field, the branch; else the field itself. */
static inline avro_value_t ice_slot(avro_value_t *rec, const char *name, int branch)
{
    avro_value_t f = ice_f(rec, name), b;
    if (avro_value_get_type(&f) != AVRO_UNION)
        return f;
    ICE_CHECK(avro_value_set_branch(&f, branch, &b));
    return b;
}

static inline void ice_null(avro_value_t *rec, const char *name)
{
    avro_value_t b = ice_slot(rec, name, 0);
    ICE_CHECK(avro_value_set_null(&b));
}
static inline void ice_int(avro_value_t *rec, const char *name, int32_t v)
{
    avro_value_t b = ice_slot(rec, name, 1);
    ICE_CHECK(avro_value_set_int(&b, v));
}
static inline void ice_long(avro_value_t *rec, const char *name, int64_t v)
{
    avro_value_t b = ice_slot(rec, name, 1);
    ICE_CHECK(avro_value_set_long(&b, v));
}
static inline void ice_str(avro_value_t *rec, const char *name, const char *v)
{
    avro_value_t b = ice_slot(rec, name, 1);
    ICE_CHECK(avro_value_set_string(&b, v));
}

/* ---- files ---------------------------------------------------------------- */

typedef void (*ice_fill_fn)(avro_value_t *rec, int i);

/* Writes n records (fill sets record i) with avro-c's writer, in
 * blocks of about block_size bytes, and reads the file back into out. */
static inline void ice_write(const char *path, const char *schema_json, const char *codec,
                             size_t block_size, int n, ice_fill_fn fill, knut_buf *out)
{
    avro_schema_t schema;
    avro_file_writer_t w;
    avro_value_iface_t *iface;
    avro_value_t rec;
    unlink(path);
    ICE_CHECK(avro_schema_from_json_length(schema_json, strlen(schema_json), &schema));
    ICE_CHECK(avro_file_writer_create_with_codec(path, schema, &w, codec, block_size));
    iface = avro_generic_class_from_schema(schema);
    ICE_CHECK(iface == NULL);
    ICE_CHECK(avro_generic_value_new(iface, &rec));
    for (int i = 0; i < n; i++) {
        ICE_CHECK(avro_value_reset(&rec));
        fill(&rec, i);
        ICE_CHECK(avro_file_writer_append_value(w, &rec));
    }
    ICE_CHECK(avro_file_writer_close(w));
    avro_value_decref(&rec);
    avro_value_iface_decref(iface);
    avro_schema_decref(schema);
    knut_error err = KNUT_ERROR_INIT;
    if (knut_file_read(path, (size_t)1 << 24, out, &err) != KNUT_OK) {
        fprintf(stderr, "%s\n", err.message);
        abort();
    }
}

/* Blocks in a container written by avro-c: its sync marker ends the
 * header and every block. */
static inline int ice_blocks(const knut_buf *b)
{
    int n = -1;
    const char *sync = b->data + b->len - 16;
    for (size_t i = 0; i + 16 <= b->len; i++)
        n += memcmp(b->data + i, sync, 16) == 0;
    return n;
}

/* With KNUT_ICEBERG_SEED_DIR set, a small file is copied there as a fuzz
 * seed (how tests/fuzz/corpora/iceberg_avro_fuzzer was made). */
static inline void ice_seed(const char *name, const knut_buf *b)
{
    const char *dir = getenv("KNUT_ICEBERG_SEED_DIR");
    if (!dir || b->len > 4096)
        return;
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(b->data, 1, b->len, f);
        fclose(f);
    }
}

/* Hand-built framing: zigzag varints and length-prefixed bytes. */
static inline void ice_put_long(knut_buf *b, int64_t v)
{
    uint64_t u = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
    while (u >= 0x80) {
        knut_buf_putc(b, (char)(u | 0x80));
        u >>= 7;
    }
    knut_buf_putc(b, (char)u);
}

static inline void ice_put_bytes(knut_buf *b, const void *p, size_t n)
{
    ice_put_long(b, (int64_t)n);
    knut_buf_append(b, p, n);
}

#define ICE_SYNC "0123456789abcdef"

/* A header: magic, {avro.schema, avro.codec (unless NULL)}, ICE_SYNC. */
static inline void ice_header(knut_buf *b, const char *schema_json, const char *codec)
{
    knut_buf_append(b, "Obj\x01", 4);
    ice_put_long(b, codec ? 2 : 1);
    ice_put_bytes(b, "avro.schema", 11);
    ice_put_bytes(b, schema_json, strlen(schema_json));
    if (codec) {
        ice_put_bytes(b, "avro.codec", 10);
        ice_put_bytes(b, codec, strlen(codec));
    }
    ice_put_long(b, 0);
    knut_buf_append(b, ICE_SYNC, 16);
}

/* A block of count records whose encoding is data[0..n). */
static inline void ice_block(knut_buf *b, int64_t count, const void *data, size_t n)
{
    ice_put_long(b, count);
    ice_put_bytes(b, data, n);
    knut_buf_append(b, ICE_SYNC, 16);
}

/* ---- a scratch folder per test program ----------------------------------- */

/* The codecs every reader test writes files in. */
__attribute__((unused)) static const char *const ice_codecs[] = {"null", "deflate", "snappy"};

__attribute__((unused)) static char ice_tmpdir[] = "/tmp/knut-iceberg-test-XXXXXX";

/* name under the scratch folder (one static buffer: use it before the
 * next call). */
static inline const char *ice_tmp_path(const char *name)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", ice_tmpdir, name);
    return path;
}

/* cmocka group setup and teardown: make and remove the scratch folder. */
static inline int ice_tmp_setup(void **state)
{
    (void)state;
    return mkdtemp(ice_tmpdir) ? 0 : -1;
}

static inline int ice_tmp_teardown(void **state)
{
    (void)state;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", ice_tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

#endif
