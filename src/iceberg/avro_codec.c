/*
 * The Avro block codecs avro.c reads: deflate (raw RFC 1951, zlib with
 * -15 window bits, as avro-c and Java write it) and snappy (the compressed
 * bytes, then a big-endian CRC-32 of the uncompressed data). Both stop at
 * KNUT_ICEBERG__AVRO_MAX_INFLATED with KNUT_ETOOBIG, and snappy's claimed
 * length is checked before anything is allocated for it.
 */
#include "iceberg_int.h"

#include <snappy-c.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

static knut_status block_fail(knut_error *err, knut_status code, const char *name,
                              int64_t blk_no, const char *fmt, ...) KNUT_PRINTF(5, 6);

static knut_status block_fail(knut_error *err, knut_status code, const char *name,
                              int64_t blk_no, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return knut_error_set_at(err, code, name, 0, 0, "block %lld: %s", (long long)blk_no, msg);
}

knut_status knut_iceberg__avro_inflate(knut_buf *out, const uint8_t *src, size_t n,
                                       const char *name, int64_t blk_no, knut_error *err)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (inflateInit2(&zs, -15) != Z_OK)
        return block_fail(err, KNUT_ENOMEM, name, blk_no, "cannot start inflate");
    knut_status st = KNUT_OK;
    zs.next_in = (Bytef *)(uintptr_t)src;
    zs.avail_in = (uInt)n; /* fits: blocks lie within a <= 256 MiB file */
    for (;;) {
        /* Doubling output room, never past the cap. */
        size_t want = out->len < 65536 ? 65536 : out->len;
        if (want > KNUT_ICEBERG__AVRO_MAX_INFLATED - out->len)
            want = KNUT_ICEBERG__AVRO_MAX_INFLATED - out->len;
        if (want == 0) {
            st = block_fail(err, KNUT_ETOOBIG, name, blk_no, "inflates to over %zu bytes",
                            KNUT_ICEBERG__AVRO_MAX_INFLATED);
            goto done;
        }
        if (knut_buf_reserve(out, want) != KNUT_OK) {
            st = block_fail(err, KNUT_ENOMEM, name, blk_no, "out of memory inflating");
            goto done;
        }
        zs.next_out = (Bytef *)out->data + out->len;
        zs.avail_out = (uInt)want;
        int zr = inflate(&zs, Z_NO_FLUSH);
        out->len += want - zs.avail_out;
        if (zr == Z_STREAM_END)
            break;
        if (zr != Z_OK && !(zr == Z_BUF_ERROR && zs.avail_out == 0)) {
            st = block_fail(err, KNUT_EPARSE, name, blk_no, "corrupt deflate data%s%s",
                            zs.msg ? ": " : "", zs.msg ? zs.msg : "");
            goto done;
        }
        if (zs.avail_in == 0 && zs.avail_out != 0) {
            st = block_fail(err, KNUT_EPARSE, name, blk_no, "truncated deflate data");
            goto done;
        }
    }
done:
    inflateEnd(&zs);
    return st;
}

knut_status knut_iceberg__avro_unsnappy(knut_buf *out, const uint8_t *src, size_t n,
                                        const char *name, int64_t blk_no, knut_error *err)
{
    if (n < 4)
        return block_fail(err, KNUT_EPARSE, name, blk_no, "a snappy block under 4 bytes");
    n -= 4;
    size_t out_len = 0;
    if (snappy_uncompressed_length((const char *)src, n, &out_len) != SNAPPY_OK)
        return block_fail(err, KNUT_EPARSE, name, blk_no, "corrupt snappy data");
    if (out_len > KNUT_ICEBERG__AVRO_MAX_INFLATED)
        return block_fail(err, KNUT_ETOOBIG, name, blk_no, "uncompresses to over %zu bytes",
                          KNUT_ICEBERG__AVRO_MAX_INFLATED);
    /* A snappy copy yields at most 64 bytes for 3 of input: a length
     * beyond that is a lie, refused before it is allocated. */
    if (out_len / 22 > n)
        return block_fail(err, KNUT_EPARSE, name, blk_no,
                          "corrupt snappy data (claims %zu bytes)", out_len);
    if (knut_buf_reserve(out, out_len) != KNUT_OK)
        return block_fail(err, KNUT_ENOMEM, name, blk_no, "out of memory");
    size_t got = out_len;
    if (snappy_uncompress((const char *)src, n, out->data, &got) != SNAPPY_OK || got != out_len)
        return block_fail(err, KNUT_EPARSE, name, blk_no, "corrupt snappy data");
    out->len = got;
    const uint8_t *c = src + n;
    uint32_t want = (uint32_t)c[0] << 24 | (uint32_t)c[1] << 16 | (uint32_t)c[2] << 8 | c[3];
    uint32_t have = (uint32_t)crc32(0L, (const Bytef *)out->data, (uInt)got);
    if (want != have)
        return block_fail(err, KNUT_EPARSE, name, blk_no, "snappy CRC-32 mismatch");
    return KNUT_OK;
}
