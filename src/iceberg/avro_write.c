/*
 * Avro object container files written by knut itself (the manifests and
 * manifest lists of an append). avro-c's file writer cannot be used: it
 * re-serialises the schema without the `field-id` attributes every Iceberg
 * reader needs and has no way to put Iceberg's keys (`format-version`,
 * `partition-spec`, ...) into the header. The binary encoding is small
 * enough to write directly: zigzag varints for int and long, length-
 * prefixed bytes and strings, a union as its branch index, and blocks of
 * records framed by a count, a byte size and the 16-byte sync marker.
 */
#include "iceberg_int.h"

#include <string.h>
#include <sys/random.h>
#include <zlib.h>

/* A block is flushed past this many encoded bytes: manifests are small,
 * and a bounded block keeps deflate's buffer bounded too. */
#define BLOCK_FLUSH ((size_t)1 << 20)

void knut_iceberg__avro_put_long(knut_buf *b, int64_t v)
{
    uint64_t z = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
    char out[10];
    size_t n = 0;
    do {
        uint8_t byte = z & 0x7f;
        z >>= 7;
        out[n++] = (char)(z ? byte | 0x80 : byte);
    } while (z);
    knut_buf_append(b, out, n);
}

void knut_iceberg__avro_put_bytes(knut_buf *b, const void *p, size_t n)
{
    knut_iceberg__avro_put_long(b, (int64_t)n);
    knut_buf_append(b, p, n);
}

void knut_iceberg__avro_put_str(knut_buf *b, const char *s)
{
    knut_iceberg__avro_put_bytes(b, s, strlen(s));
}

/* The header: magic, the metadata map (values are Avro bytes), sync. */
knut_status knut_iceberg__avro_out_begin(knut_iceberg__avro_out *w, const char *schema_json,
                                         const char *const *meta, size_t n_meta, int deflate,
                                         knut_error *err)
{
    memset(w, 0, sizeof *w);
    knut_buf_init(&w->file, KNUT_ICEBERG_AVRO_MAX);
    knut_buf_init(&w->block, KNUT_ICEBERG_AVRO_MAX);
    w->deflate = deflate;
    /* A fixed marker would be legal; a random one makes a block of one
     * file never look like it belongs to another. */
    if (getrandom(w->sync, sizeof w->sync, 0) != (ssize_t)sizeof w->sync)
        for (size_t i = 0; i < sizeof w->sync; i++)
            w->sync[i] = (uint8_t)(i * 37 + 11);
    knut_buf_append(&w->file, "Obj\x01", 4);
    knut_iceberg__avro_put_long(&w->file, (int64_t)(2 + n_meta));
    knut_iceberg__avro_put_str(&w->file, "avro.schema");
    knut_iceberg__avro_put_str(&w->file, schema_json);
    knut_iceberg__avro_put_str(&w->file, "avro.codec");
    knut_iceberg__avro_put_str(&w->file, deflate ? "deflate" : "null");
    for (size_t i = 0; i < n_meta; i++) {
        knut_iceberg__avro_put_str(&w->file, meta[2 * i]);
        knut_iceberg__avro_put_str(&w->file, meta[2 * i + 1]);
    }
    knut_iceberg__avro_put_long(&w->file, 0);
    knut_buf_append(&w->file, w->sync, sizeof w->sync);
    return knut_buf_check(&w->file, err);
}

/* Raw RFC 1951 (window bits -15), as avro-c, Java and pyiceberg write it. */
static knut_status deflate_into(knut_buf *out, const knut_buf *in, knut_error *err)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return knut_error_set(err, KNUT_ENOMEM, "iceberg: cannot start deflate");
    knut_status st = knut_buf_reserve(out, deflateBound(&z, (uLong)in->len));
    if (st == KNUT_OK) {
        z.next_in = (Bytef *)in->data;
        z.avail_in = (uInt)in->len;
        z.next_out = (Bytef *)out->data + out->len;
        z.avail_out = (uInt)(out->cap - out->len);
        if (deflate(&z, Z_FINISH) != Z_STREAM_END)
            st = knut_error_set(err, KNUT_ERROR, "iceberg: deflate failed");
        else
            out->len += z.total_out;
    } else {
        st = knut_error_set(err, st, "iceberg: a manifest block over the Avro size limit");
    }
    deflateEnd(&z);
    return st;
}

static knut_status flush_block(knut_iceberg__avro_out *w, knut_error *err)
{
    if (w->n_block == 0)
        return KNUT_OK;
    knut_status st = knut_buf_check(&w->block, err);
    knut_buf packed = KNUT_BUF_INIT;
    const knut_buf *body = &w->block;
    if (st == KNUT_OK && w->deflate) {
        knut_buf_init(&packed, KNUT_ICEBERG_AVRO_MAX);
        st = deflate_into(&packed, &w->block, err);
        body = &packed;
    }
    if (st == KNUT_OK) {
        knut_iceberg__avro_put_long(&w->file, w->n_block);
        knut_iceberg__avro_put_long(&w->file, (int64_t)body->len);
        knut_buf_append(&w->file, body->data, body->len);
        knut_buf_append(&w->file, w->sync, sizeof w->sync);
        st = knut_buf_check(&w->file, err);
    }
    knut_buf_reset(&packed);
    knut_buf_clear(&w->block);
    w->n_block = 0;
    return st;
}

knut_status knut_iceberg__avro_out_record(knut_iceberg__avro_out *w, knut_error *err)
{
    w->n_block++;
    return w->block.len >= BLOCK_FLUSH ? flush_block(w, err) : knut_buf_check(&w->block, err);
}

knut_status knut_iceberg__avro_out_finish(knut_iceberg__avro_out *w, knut_error *err)
{
    return flush_block(w, err);
}

void knut_iceberg__avro_out_reset(knut_iceberg__avro_out *w)
{
    knut_buf_reset(&w->file);
    knut_buf_reset(&w->block);
}
