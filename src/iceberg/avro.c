/*
 * Avro object container files over a memory buffer. The framing (magic,
 * metadata map, sync marker, blocks) and the codecs are read here, not by
 * avro-c's file reader, so that every length is checked against what is
 * left of the input before anything is allocated, a header's metadata is
 * readable (avro-c has no API for it), and an unknown codec is a clear
 * error. avro-c only decodes records, each first checked by avro_check.c.
 */
#include "iceberg_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SYNC_LEN 16

typedef enum codec { CODEC_NULL, CODEC_DEFLATE, CODEC_SNAPPY } codec;

struct knut_iceberg__avro {
    char *name;
    const uint8_t *data;
    size_t len, pos;
    char **keys, **vals; /* header metadata, NUL-terminated copies */
    size_t *val_lens;
    size_t n_meta;
    uint8_t sync[SYNC_LEN];
    codec codec;
    avro_schema_t schema;
    avro_value_iface_t *iface;
    avro_value_t value;
    int have_value;
    avro_reader_t mem;
    knut_buf inflated;    /* the current block, decompressed */
    const uint8_t *blk;   /* the current block's records */
    size_t blk_len, blk_pos;
    int64_t blk_count;    /* records in the current block */
    int64_t blk_left;     /* of those, not yet returned */
    int64_t blk_no;       /* 1-based, of the current block */
    int64_t rec_no;       /* 1-based, in the file, of the last record returned */
    size_t values_left;   /* the file's value budget (see ..._VALUES_PER_BYTE) */
    int failed;
};

static knut_status fail(knut_iceberg__avro *r, knut_error *err, knut_status code,
                        const char *fmt, ...) KNUT_PRINTF(4, 5);

static knut_status fail(knut_iceberg__avro *r, knut_error *err, knut_status code,
                        const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    r->failed = 1;
    return knut_error_set_at(err, code, r->name, 0, 0, "%s", msg);
}

static int take_long(knut_iceberg__avro *r, int64_t *v)
{
    return knut_iceberg__avro_varint(r->data, r->len, &r->pos, v);
}

/* ---- header ------------------------------------------------------------- */

/* One length-prefixed key or value of the metadata map, copied with a NUL. */
static knut_status take_meta_str(knut_iceberg__avro *r, size_t max, const char *what, char **out,
                                 size_t *out_len, knut_error *err)
{
    int64_t n;
    if (take_long(r, &n) != 0 || n < 0)
        return fail(r, err, KNUT_EPARSE, "Avro header: a bad metadata %s length", what);
    if ((uint64_t)n > r->len - r->pos)
        return fail(r, err, KNUT_EPARSE,
                    "Avro header: a metadata %s of %lld bytes past the end of the file", what,
                    (long long)n);
    if ((uint64_t)n > max)
        return fail(r, err, KNUT_ETOOBIG, "Avro header: a metadata %s over %zu bytes", what, max);
    if (!(*out = malloc((size_t)n + 1)))
        return fail(r, err, KNUT_ENOMEM, "out of memory");
    memcpy(*out, r->data + r->pos, (size_t)n);
    (*out)[n] = '\0';
    r->pos += (size_t)n;
    if (out_len)
        *out_len = (size_t)n;
    return KNUT_OK;
}

static knut_status read_meta(knut_iceberg__avro *r, knut_error *err)
{
    for (;;) {
        int64_t count, size;
        if (take_long(r, &count) != 0)
            return fail(r, err, KNUT_EPARSE, "Avro header: truncated metadata");
        if (count == 0)
            return KNUT_OK;
        if (count < 0) {
            if (count == INT64_MIN || take_long(r, &size) != 0 || size < 0)
                return fail(r, err, KNUT_EPARSE, "Avro header: a bad metadata block");
            count = -count;
        }
        if (count > KNUT_ICEBERG__AVRO_MAX_META - (int64_t)r->n_meta)
            return fail(r, err, KNUT_ETOOBIG, "Avro header: more than %d metadata entries",
                        KNUT_ICEBERG__AVRO_MAX_META);
        if (!r->keys) {
            /* Allocated once, at the cap: 1024 entries is little. */
            r->keys = calloc(KNUT_ICEBERG__AVRO_MAX_META, sizeof *r->keys);
            r->vals = calloc(KNUT_ICEBERG__AVRO_MAX_META, sizeof *r->vals);
            r->val_lens = calloc(KNUT_ICEBERG__AVRO_MAX_META, sizeof *r->val_lens);
            if (!r->keys || !r->vals || !r->val_lens)
                return fail(r, err, KNUT_ENOMEM, "out of memory");
        }
        for (int64_t i = 0; i < count; i++) {
            size_t k = r->n_meta;
            knut_status st = take_meta_str(r, KNUT_ICEBERG__AVRO_MAX_KEY, "key", &r->keys[k],
                                           NULL, err);
            if (st == KNUT_OK)
                st = take_meta_str(r, KNUT_ICEBERG__AVRO_MAX_VALUE, "value", &r->vals[k],
                                   &r->val_lens[k], err);
            r->n_meta++; /* so close frees a half-read entry too */
            if (st != KNUT_OK)
                return st;
        }
    }
}

const char *knut_iceberg__avro_meta(const knut_iceberg__avro *r, const char *key, size_t *len)
{
    for (size_t i = 0; i < r->n_meta; i++)
        if (r->keys[i] && r->vals[i] && strcmp(r->keys[i], key) == 0) {
            if (len)
                *len = r->val_lens[i];
            return r->vals[i];
        }
    return NULL;
}

/* A metadata value for a message: printable ASCII, at most 40 bytes. */
static void printable(char *out, size_t cap, const char *s, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len && n + 4 < cap && i < 40; i++)
        out[n++] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
    if (len > 40)
        out[n++] = '.', out[n++] = '.', out[n++] = '.';
    out[n] = '\0';
}

static knut_status pick_codec(knut_iceberg__avro *r, knut_error *err)
{
    size_t len = 0;
    const char *c = knut_iceberg__avro_meta(r, "avro.codec", &len);
    if (!c || (len == 4 && memcmp(c, "null", 4) == 0))
        r->codec = CODEC_NULL;
    else if (len == 7 && memcmp(c, "deflate", 7) == 0)
        r->codec = CODEC_DEFLATE;
    else if (len == 6 && memcmp(c, "snappy", 6) == 0)
        r->codec = CODEC_SNAPPY;
    else {
        char shown[48];
        printable(shown, sizeof shown, c, len);
        return fail(r, err, KNUT_EUNSUPPORTED,
                    "Avro codec '%s' is not supported (null, deflate and snappy are)", shown);
    }
    return KNUT_OK;
}

static knut_status load_schema(knut_iceberg__avro *r, knut_error *err)
{
    size_t len = 0;
    const char *json = knut_iceberg__avro_meta(r, "avro.schema", &len);
    if (!json)
        return fail(r, err, KNUT_EPARSE, "Avro header: no avro.schema");
    const char *why = NULL;
    knut_status st = knut_iceberg__avro_schema_json_check(json, len, &why);
    if (st != KNUT_OK)
        return fail(r, err, st, "Avro header: avro.schema: %s", why);
    if (avro_schema_from_json_length(json, len, &r->schema) != 0) {
        r->schema = NULL;
        return fail(r, err, KNUT_EPARSE, "Avro header: avro.schema: %s", avro_strerror());
    }
    if (!is_avro_record(r->schema))
        return fail(r, err, KNUT_EPARSE, "Avro header: avro.schema is not a record");
    st = knut_iceberg__avro_schema_check(r->schema, &why);
    if (st != KNUT_OK)
        return fail(r, err, st, "Avro header: avro.schema: %s", why);
    if (!(r->iface = avro_generic_class_from_schema(r->schema)))
        return fail(r, err, KNUT_EPARSE, "Avro header: avro.schema: %s", avro_strerror());
    if (avro_generic_value_new(r->iface, &r->value) != 0)
        return fail(r, err, KNUT_ENOMEM, "cannot create an Avro value: %s", avro_strerror());
    r->have_value = 1;
    if (!(r->mem = avro_reader_memory("", 0)))
        return fail(r, err, KNUT_ENOMEM, "out of memory");
    return KNUT_OK;
}

knut_status knut_iceberg__avro_open(knut_iceberg__avro **out, const char *name, const void *data,
                                    size_t len, knut_error *err)
{
    KNUT_ASSERT_ARG(err, out && (data || len == 0));
    *out = NULL;
    knut_iceberg__avro *r = calloc(1, sizeof *r);
    if (!r || !(r->name = strdup(name ? name : "(avro)"))) {
        free(r);
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    }
    r->data = data;
    r->len = len;
    r->values_left = KNUT_ICEBERG__AVRO_MAX_VALUES;
    knut_buf_init(&r->inflated, KNUT_ICEBERG__AVRO_MAX_INFLATED);
    knut_status st;
    if (len > KNUT_ICEBERG_AVRO_MAX) {
        st = fail(r, err, KNUT_ETOOBIG, "over the %zu-byte limit for Avro files",
                  KNUT_ICEBERG_AVRO_MAX);
        goto fail;
    }
    if (len < 4 || memcmp(data, "Obj\x01", 4) != 0) {
        st = fail(r, err, KNUT_EPARSE, "not an Avro object container file (bad magic)");
        goto fail;
    }
    r->pos = 4;
    if ((st = read_meta(r, err)) != KNUT_OK)
        goto fail;
    if (r->len - r->pos < SYNC_LEN) {
        st = fail(r, err, KNUT_EPARSE, "Avro header: truncated before the sync marker");
        goto fail;
    }
    memcpy(r->sync, r->data + r->pos, SYNC_LEN);
    r->pos += SYNC_LEN;
    if ((st = pick_codec(r, err)) != KNUT_OK || (st = load_schema(r, err)) != KNUT_OK)
        goto fail;
    r->failed = 0;
    *out = r;
    return KNUT_OK;
fail:
    knut_iceberg__avro_close(r);
    return st;
}

avro_schema_t knut_iceberg__avro_schema(const knut_iceberg__avro *r)
{
    return r->schema;
}

int64_t knut_iceberg__avro_record_no(const knut_iceberg__avro *r)
{
    return r->rec_no;
}

/* ---- blocks ------------------------------------------------------------- */

/* Reads the next block's framing and decompresses it; KNUT_EOF at the end. */
static knut_status next_block(knut_iceberg__avro *r, knut_error *err)
{
    if (r->pos == r->len)
        return KNUT_EOF;
    int64_t count, size;
    r->blk_no++;
    if (take_long(r, &count) != 0 || take_long(r, &size) != 0)
        return fail(r, err, KNUT_EPARSE, "block %lld: truncated block header",
                    (long long)r->blk_no);
    if (count < 0 || size < 0)
        return fail(r, err, KNUT_EPARSE, "block %lld: a negative record count or size",
                    (long long)r->blk_no);
    if (count > KNUT_ICEBERG__AVRO_MAX_BLOCK_RECORDS)
        return fail(r, err, KNUT_ETOOBIG, "block %lld: %lld records, over the limit of %lld",
                    (long long)r->blk_no, (long long)count,
                    (long long)KNUT_ICEBERG__AVRO_MAX_BLOCK_RECORDS);
    if ((uint64_t)size > r->len - r->pos || r->len - r->pos - (size_t)size < SYNC_LEN)
        return fail(r, err, KNUT_EPARSE,
                    "block %lld: %lld bytes and a sync marker past the end of the file",
                    (long long)r->blk_no, (long long)size);
    const uint8_t *src = r->data + r->pos;
    r->pos += (size_t)size;
    if (memcmp(r->data + r->pos, r->sync, SYNC_LEN) != 0)
        return fail(r, err, KNUT_EPARSE, "block %lld: sync marker mismatch", (long long)r->blk_no);
    r->pos += SYNC_LEN;
    knut_buf_clear(&r->inflated);
    knut_status st = KNUT_OK;
    if (r->codec == CODEC_NULL) {
        r->blk = src;
        r->blk_len = (size_t)size;
    } else {
        st = r->codec == CODEC_DEFLATE
                 ? knut_iceberg__avro_inflate(&r->inflated, src, (size_t)size, r->name, r->blk_no,
                                              err)
                 : knut_iceberg__avro_unsnappy(&r->inflated, src, (size_t)size, r->name,
                                               r->blk_no, err);
        r->failed = st != KNUT_OK;
        r->blk = (const uint8_t *)r->inflated.data;
        r->blk_len = r->inflated.len;
    }
    r->blk_pos = 0;
    r->blk_count = r->blk_left = count;
    /* <= 256 MiB blocks: the product cannot overflow a 64-bit size_t. */
    r->values_left += r->blk_len * KNUT_ICEBERG__AVRO_VALUES_PER_BYTE;
    return st;
}

knut_status knut_iceberg__avro_next(knut_iceberg__avro *r, avro_value_t **rec, knut_error *err)
{
    KNUT_ASSERT_ARG(err, r && rec);
    *rec = NULL;
    if (r->failed)
        return knut_error_set_at(err, KNUT_EINVAL, r->name, 0, 0, "read after an error");
    while (r->blk_left == 0) {
        if (r->blk_no > 0 && r->blk_pos != r->blk_len)
            return fail(r, err, KNUT_EPARSE,
                        "block %lld: %zu bytes left over after its %lld records",
                        (long long)r->blk_no, r->blk_len - r->blk_pos, (long long)r->blk_count);
        knut_status st = next_block(r, err);
        if (st != KNUT_OK)
            return st;
    }
    int64_t in_blk = r->blk_count - r->blk_left + 1;
    size_t used = 0;
    const char *why = NULL;
    size_t budget = r->values_left < KNUT_ICEBERG__AVRO_MAX_VALUES ? r->values_left
                                                                  : KNUT_ICEBERG__AVRO_MAX_VALUES;
    size_t before = budget;
    knut_status st = knut_iceberg__avro_value_scan(r->schema, r->blk + r->blk_pos,
                                                   r->blk_len - r->blk_pos, &budget, &used, &why);
    r->values_left -= before - budget;
    if (st != KNUT_OK)
        return fail(r, err, st, "block %lld, record %lld: cannot decode: %s", (long long)r->blk_no,
                    (long long)in_blk, why);
    avro_reader_memory_set_source(r->mem, (const char *)r->blk + r->blk_pos, (int64_t)used);
    if (avro_value_read(r->mem, &r->value) != 0)
        return fail(r, err, KNUT_EPARSE, "block %lld, record %lld: cannot decode: %s",
                    (long long)r->blk_no, (long long)in_blk, avro_strerror());
    r->blk_pos += used;
    r->blk_left--;
    r->rec_no++;
    *rec = &r->value;
    return KNUT_OK;
}

void knut_iceberg__avro_close(knut_iceberg__avro *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n_meta; i++) {
        free(r->keys[i]);
        free(r->vals[i]);
    }
    free(r->keys);
    free(r->vals);
    free(r->val_lens);
    if (r->have_value)
        avro_value_decref(&r->value);
    if (r->iface)
        avro_value_iface_decref(r->iface);
    if (r->schema)
        avro_schema_decref(r->schema);
    if (r->mem)
        avro_reader_free(r->mem);
    knut_buf_reset(&r->inflated);
    free(r->name);
    free(r);
}

knut_status knut_iceberg__avro_file_read(const char *path, knut_buf *out, knut_error *err)
{
    return knut_file_read(path, KNUT_ICEBERG_AVRO_MAX, out, err);
}
