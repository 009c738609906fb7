/*
 * Internals of the iceberg part shared by its files: the Avro object
 * container reader (avro.c) that manifest.c decodes records with.
 */
#ifndef KNUT_ICEBERG_INT_H
#define KNUT_ICEBERG_INT_H

#include <avro.h>

#include "knut/iceberg.h"

/* ---- Avro object container files (avro.c) -------------------------------- */

/* Caps on what one container may declare; all are checked against the
 * remaining input before anything is allocated. */
#define KNUT_ICEBERG__AVRO_MAX_META 1024                  /* header metadata entries */
#define KNUT_ICEBERG__AVRO_MAX_KEY ((size_t)4 << 10)      /* bytes of one metadata key */
#define KNUT_ICEBERG__AVRO_MAX_VALUE ((size_t)64 << 20)   /* bytes of one metadata value */
#define KNUT_ICEBERG__AVRO_MAX_BLOCK_RECORDS ((int64_t)1 << 24)
#define KNUT_ICEBERG__AVRO_MAX_INFLATED ((size_t)256 << 20) /* one decompressed block */
/* Values (every field, element, map entry) in one record, and nesting
 * depth: bound what avro-c allocates and how deep it recurses. A file may
 * decode this many values plus 4 per byte of its decompressed blocks, so
 * zero-byte values (nulls, empty records) cannot make a small file slow. */
#define KNUT_ICEBERG__AVRO_MAX_VALUES ((size_t)1 << 20)
#define KNUT_ICEBERG__AVRO_VALUES_PER_BYTE 4
#define KNUT_ICEBERG__AVRO_MAX_DEPTH 64

typedef struct knut_iceberg__avro knut_iceberg__avro;

/*
 * Opens a container over data[0..len) (borrowed: it must outlive the
 * reader); name is copied and used in every error. Reads the header
 * (magic, metadata, sync marker), picks the codec and builds the record
 * decoder from the `avro.schema` metadata. Errors: KNUT_EPARSE (not an
 * Avro container, corrupt header, a schema avro-c refuses, a root that is
 * not a record), KNUT_EUNSUPPORTED (a codec other than null, deflate,
 * snappy; a recursive schema), KNUT_ETOOBIG (a cap above), KNUT_ENOMEM.
 */
knut_status knut_iceberg__avro_open(knut_iceberg__avro **out, const char *name, const void *data,
                                    size_t len, knut_error *err);

/* A header metadata value (NUL-terminated, *len without the NUL; len may
 * be NULL), or NULL when the key is absent. Valid until close. */
const char *knut_iceberg__avro_meta(const knut_iceberg__avro *r, const char *key, size_t *len);

/* The root record schema (borrowed). */
avro_schema_t knut_iceberg__avro_schema(const knut_iceberg__avro *r);

/*
 * The next record in *rec (owned by the reader, valid until the next call
 * or close), or KNUT_EOF after the last. A record that does not decode,
 * bytes left over in a block after its records, a sync marker that does
 * not match: KNUT_EPARSE naming the file, the block and the record
 * ("block 2, record 5": both 1-based, the record counted within its
 * block). Once an error is returned the reader stays failed.
 */
knut_status knut_iceberg__avro_next(knut_iceberg__avro *r, avro_value_t **rec, knut_error *err);

/* 1-based number, in the whole file, of the record next returned last
 * (0 before the first). */
int64_t knut_iceberg__avro_record_no(const knut_iceberg__avro *r);

void knut_iceberg__avro_close(knut_iceberg__avro *r); /* NULL-safe */

/*
 * The guards avro.c puts in front of avro-c (avro_check.c), which itself
 * trusts its input: it allocates any string length it reads, appends any
 * count of array items, and recurses into a schema that contains itself.
 *
 * schema_check refuses (KNUT_EUNSUPPORTED, *why set) a schema that avro-c
 * would instantiate forever (a named type reached again inside itself),
 * one nested deeper than KNUT_ICEBERG__AVRO_MAX_DEPTH, or one too large to
 * walk.
 *
 * value_scan walks one value of schema over p[0..len) without allocating
 * and sets *used to its encoded size: every length, count, union branch,
 * enum index and varint is checked against the input and the caps, so
 * avro-c then reads exactly p[0..*used) of bytes known to be well formed.
 * Each value visited takes one from *budget. KNUT_EPARSE (or KNUT_ETOOBIG
 * when the budget runs out) with *why set otherwise.
 */
knut_status knut_iceberg__avro_schema_check(avro_schema_t schema, const char **why);
/* Before avro-c parses it: the schema JSON is JSON and defines no named
 * type twice (avro-c leaks on that error path). KNUT_EPARSE, *why set. */
knut_status knut_iceberg__avro_schema_json_check(const char *json, size_t len, const char **why);
knut_status knut_iceberg__avro_value_scan(avro_schema_t schema, const uint8_t *p, size_t len,
                                          size_t *budget, size_t *used, const char **why);

/*
 * Block codecs (avro_codec.c): decompress src[0..n) into out (cleared
 * first by the caller; its cap is KNUT_ICEBERG__AVRO_MAX_INFLATED).
 * Errors name the file and the 1-based block: KNUT_EPARSE (corrupt,
 * truncated, a snappy CRC mismatch), KNUT_ETOOBIG, KNUT_ENOMEM.
 */
knut_status knut_iceberg__avro_inflate(knut_buf *out, const uint8_t *src, size_t n,
                                       const char *name, int64_t blk_no, knut_error *err);
knut_status knut_iceberg__avro_unsnappy(knut_buf *out, const uint8_t *src, size_t n,
                                        const char *name, int64_t blk_no, knut_error *err);

/* Zigzag varint long at p[*pos..len); 0 and *pos advanced, or -1 (short
 * input, more than 10 bytes, or a value past 64 bits). */
int knut_iceberg__avro_varint(const uint8_t *p, size_t len, size_t *pos, int64_t *out);

/* Reads a whole Avro file into out, at most KNUT_ICEBERG_AVRO_MAX bytes
 * (knut_file_read's errors). */
knut_status knut_iceberg__avro_file_read(const char *path, knut_buf *out, knut_error *err);

/*
 * The rows of data[0..n_data) with dels applied, under schema schema_id,
 * as one parenthesised DuckDB SELECT appended to b (scan.c). With semi
 * (n_semi may be 0), only the rows that semi's deletes delete, each once:
 * what a commit's new delete files take away.
 */
knut_status knut_iceberg__rows_sql(knut_buf *b, const knut_iceberg_table *t, int32_t schema_id,
                                   const knut_iceberg_data_file *data, size_t n_data,
                                   const knut_iceberg_data_file *dels, size_t n_dels,
                                   const knut_iceberg_data_file *semi, size_t n_semi,
                                   knut_error *err);

/* The metadata_location of table id ("namespace.name", already checked
 * to have a dot inside) of catalog in the open SQLite catalog db, exactly
 * as stored, in *out (malloc'd); *out NULL when there is no such row.
 * Errors name path (catalog.c). */
struct sqlite3;
knut_status knut_iceberg__sql_location(struct sqlite3 *db, const char *path,
                                       const char *catalog, const char *id, char **out,
                                       knut_error *err);

/* dir + "/" + name (no second slash when dir ends in one), malloc'd;
 * NULL when out of memory (catalog.c). */
char *knut_iceberg__join(const char *dir, const char *name);

/* DuckDB's type for an Iceberg primitive ("DECIMAL(9,2)" built in tmp);
 * NULL if there is none (scan_sql.c). */
const char *knut_iceberg__duck_type(const char *ice, char *tmp, size_t cap);

/* Appends the list ['a', 'b'] of the local paths of files[0..n) with the
 * given content (and equality ids, when eq is not NULL). */
knut_status knut_iceberg__put_paths(knut_buf *b, const knut_iceberg_table *t,
                                    const knut_iceberg_data_file *files, size_t n, int content,
                                    const int32_t *eq, size_t n_eq, knut_error *err);

/* ---- writing Avro object container files (avro_write.c) ------------------ */

/*
 * A container written in memory: begin writes the header (the schema JSON
 * verbatim, so its field ids stay; meta holds n_meta key/value pairs of
 * Iceberg header keys), the caller encodes each record into w->block with
 * the put functions and ends it with out_record, finish flushes the last
 * block; w->file is then the whole file. Codec null or deflate. Errors:
 * KNUT_ETOOBIG past KNUT_ICEBERG_AVRO_MAX, KNUT_ENOMEM.
 */
typedef struct knut_iceberg__avro_out {
    knut_buf file;   /* the container so far */
    knut_buf block;  /* the encoded records of the open block */
    int64_t n_block; /* records in it */
    int deflate;
    uint8_t sync[16];
} knut_iceberg__avro_out;

knut_status knut_iceberg__avro_out_begin(knut_iceberg__avro_out *w, const char *schema_json,
                                         const char *const *meta, size_t n_meta, int deflate,
                                         knut_error *err);
knut_status knut_iceberg__avro_out_record(knut_iceberg__avro_out *w, knut_error *err);
knut_status knut_iceberg__avro_out_finish(knut_iceberg__avro_out *w, knut_error *err);
void knut_iceberg__avro_out_reset(knut_iceberg__avro_out *w);
/* Avro binary encoding: int and long as zigzag varints (a union branch is
 * its index as a long), bytes and strings length-prefixed. Errors stick
 * in b (knut_buf_check). */
void knut_iceberg__avro_put_long(knut_buf *b, int64_t v);
void knut_iceberg__avro_put_bytes(knut_buf *b, const void *p, size_t n);
void knut_iceberg__avro_put_str(knut_buf *b, const char *s);

/* Column metrics of one data file: per field id its value count (nulls
 * included), null count and bytes on disk; -1 where not known. */
typedef struct knut_iceberg__metric {
    int32_t id;
    int64_t values, nulls, bytes;
} knut_iceberg__metric;

typedef struct knut_iceberg__metrics {
    knut_iceberg__metric *cols;
    size_t n;
} knut_iceberg__metrics;

/*
 * The files of an append (manifest_write.c), into out (replaced): a v2
 * data manifest of files[0..n) (ADDED, unpartitioned, their snapshot id
 * and sequence numbers left to inheritance; metrics[i] the metrics of
 * file i, or metrics NULL for none) with the table schema's JSON in its
 * header, and a manifest list of m[0..n) in order.
 */
knut_status knut_iceberg__manifest_write(knut_buf *out, const char *schema_json,
                                         int32_t schema_id, const knut_iceberg_data_file *files,
                                         const knut_iceberg__metrics *metrics, size_t n,
                                         knut_error *err);
knut_status knut_iceberg__manifest_list_write(knut_buf *out, int64_t snapshot_id,
                                              int64_t parent_id, int64_t seq,
                                              const knut_iceberg_manifest_file *m, size_t n,
                                              knut_error *err);

#endif
