/*
 * Reading a metadata file: capped at KNUT_ICEBERG_METADATA_MAX, gunzipped
 * when the name (*.gz.metadata.json, *.metadata.json.gz) or the gzip magic
 * says so, then parsed by knut_iceberg_table_parse.
 */
#include "metadata_int.h"

#include <stdint.h>
#include <string.h>
#include <zlib.h>

knut_status knut_iceberg__gunzip(const void *data, size_t len, const char *name, knut_buf *out,
                                 knut_error *err)
{
    knut_buf_init(out, KNUT_ICEBERG_METADATA_MAX);
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) /* 16: the gzip wrapper */
        return knut_error_set(err, KNUT_ENOMEM, "%s: cannot start gunzip", name);
    z.next_in = (Bytef *)(uintptr_t)data;
    knut_status st = KNUT_OK;
    size_t left = len;
    unsigned char chunk[65536];
    int zr = Z_OK;
    while (st == KNUT_OK) {
        /* avail_in is 32 bits: feed large inputs in pieces. */
        if (z.avail_in == 0 && left) {
            z.avail_in = left > (1u << 30) ? (1u << 30) : (uInt)left;
            left -= z.avail_in;
        }
        z.next_out = chunk;
        z.avail_out = sizeof chunk;
        zr = inflate(&z, Z_NO_FLUSH);
        if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR) {
            st = knut_error_set(err, KNUT_EPARSE, "%s: not valid gzip: %s", name,
                                z.msg ? z.msg : "corrupt data");
            break;
        }
        size_t got = sizeof chunk - z.avail_out;
        if (knut_buf_append(out, chunk, got) != KNUT_OK) {
            st = knut_buf_check(out, err);
            knut_error_prefix(err, "%s: gunzipped: ", name);
            break;
        }
        if (zr == Z_STREAM_END) {
            if (z.avail_in == 0 && left == 0)
                break;
            inflateReset(&z); /* gzip allows several members back to back */
        } else if (zr == Z_BUF_ERROR && got == 0) {
            st = knut_error_set(err, KNUT_EPARSE, "%s: gzip data is truncated", name);
        }
    }
    inflateEnd(&z);
    if (st != KNUT_OK)
        knut_buf_reset(out);
    return st;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

knut_status knut_iceberg_table_load(knut_iceberg_table **out, const char *path, knut_error *err)
{
    KNUT_ASSERT_ARG(err, out != NULL && path != NULL);
    *out = NULL;
    knut_buf raw = KNUT_BUF_INIT, text = KNUT_BUF_INIT;
    knut_status st = knut_file_read(path, KNUT_ICEBERG_METADATA_MAX, &raw, err);
    if (st != KNUT_OK)
        goto cleanup;
    /* By name as the spec says, and by the gzip magic (no JSON starts
     * with 0x1f) for a writer that compressed under a plain name. */
    int gz = ends_with(path, ".gz.metadata.json") || ends_with(path, ".metadata.json.gz") ||
             (raw.len >= 2 && (unsigned char)raw.data[0] == 0x1f &&
              (unsigned char)raw.data[1] == 0x8b);
    if (gz && (st = knut_iceberg__gunzip(raw.data, raw.len, path, &text, err)) != KNUT_OK)
        goto cleanup;
    const knut_buf *b = gz ? &text : &raw;
    st = knut_iceberg_table_parse(out, b->data, b->len, path, err);
cleanup:
    knut_buf_reset(&raw);
    knut_buf_reset(&text);
    return st;
}
