/*
 * FlatBuffers encoding for Arrow IPC metadata. The builder writes back to
 * front, like the reference implementation, so that every uoffset points
 * to a higher address; positions are counted from the end of the buffer
 * until finish. The reader trusts nothing: each table, vtable, field,
 * string and vector is checked to lie inside the buffer before use.
 */
#include "ipc_fb.h"

#include <stdlib.h>
#include <string.h>

#define FB_DEFAULT_MAX ((size_t)64 << 20)

/* ---- builder ----------------------------------------------------------- */

void knut_arrow__fb_builder_init(knut_fb_builder *b, size_t max_size)
{
    memset(b, 0, sizeof *b);
    b->max_size = max_size ? max_size : FB_DEFAULT_MAX;
    b->minalign = 1;
}

void knut_arrow__fb_builder_reset(knut_fb_builder *b)
{
    if (!b)
        return;
    free(b->buf);
    size_t max = b->max_size;
    knut_arrow__fb_builder_init(b, max);
}

void knut_arrow__fb_builder_clear(knut_fb_builder *b)
{
    b->size = 0;
    b->minalign = 1;
    b->error = KNUT_OK;
    b->in_table = 0;
    b->nfields = 0;
    b->nvtables = 0;
}

/* Makes room for n more bytes in front of the current data. */
static int fb_grow(knut_fb_builder *b, size_t n)
{
    if (b->error)
        return 0;
    if (n > b->max_size - b->size) {
        b->error = KNUT_ETOOBIG;
        return 0;
    }
    if (b->size + n <= b->cap)
        return 1;
    size_t ncap = b->cap ? b->cap : 1024;
    while (ncap < b->size + n)
        ncap *= 2;
    uint8_t *nb = malloc(ncap);
    if (!nb) {
        b->error = KNUT_ENOMEM;
        return 0;
    }
    if (b->size)
        memcpy(nb + ncap - b->size, b->buf + b->cap - b->size, b->size);
    free(b->buf);
    b->buf = nb;
    b->cap = ncap;
    return 1;
}

static uint8_t *fb_at(knut_fb_builder *b, size_t ref)
{
    return b->buf + b->cap - ref;
}

/* Pads so that after `additional` more bytes the data is aligned to align. */
static int fb_prep(knut_fb_builder *b, size_t align, size_t additional)
{
    if (align > b->minalign)
        b->minalign = align;
    size_t pad = (~(b->size + additional) + 1) & (align - 1);
    if (!fb_grow(b, pad + additional))
        return 0;
    if (pad)
        memset(fb_at(b, b->size + pad), 0, pad);
    b->size += pad;
    return 1;
}

static void fb_push(knut_fb_builder *b, const void *p, size_t n)
{
    /* callers prep first, so the room is there */
    b->size += n;
    memcpy(fb_at(b, b->size), p, n);
}

static void fb_push_uoffset(knut_fb_builder *b, knut_fb_ref ref)
{
    uint32_t v = (uint32_t)(b->size + 4 - ref);
    fb_push(b, &v, 4);
}

knut_fb_ref knut_arrow__fb_string_create(knut_fb_builder *b, const char *s, size_t len)
{
    if (len > UINT32_MAX - 8) {
        b->error = b->error ? b->error : KNUT_ETOOBIG;
        return 0;
    }
    if (!fb_prep(b, 4, len + 1))
        return 0;
    uint8_t nul = 0;
    fb_push(b, &nul, 1);
    if (len)
        fb_push(b, s, len);
    if (!fb_prep(b, 4, 4))
        return 0;
    uint32_t n = (uint32_t)len;
    fb_push(b, &n, 4);
    return (knut_fb_ref)b->size;
}

knut_fb_ref knut_arrow__fb_vector_structs_create(knut_fb_builder *b, const void *elems,
                                                 size_t elem_size, size_t count, size_t align)
{
    if (count > UINT32_MAX / (elem_size ? elem_size : 1)) {
        b->error = b->error ? b->error : KNUT_ETOOBIG;
        return 0;
    }
    size_t bytes = elem_size * count;
    if (!fb_prep(b, 4, bytes) || !fb_prep(b, align, bytes))
        return 0;
    if (bytes)
        fb_push(b, elems, bytes);
    if (!fb_prep(b, 4, 4))
        return 0;
    uint32_t n = (uint32_t)count;
    fb_push(b, &n, 4);
    return (knut_fb_ref)b->size;
}

knut_fb_ref knut_arrow__fb_vector_refs_create(knut_fb_builder *b, const knut_fb_ref *refs,
                                              size_t count)
{
    if (count > UINT32_MAX / 4) {
        b->error = b->error ? b->error : KNUT_ETOOBIG;
        return 0;
    }
    if (!fb_prep(b, 4, 4 * count + 4))
        return 0;
    for (size_t i = count; i-- > 0;)
        fb_push_uoffset(b, refs[i]);
    uint32_t n = (uint32_t)count;
    fb_push(b, &n, 4);
    return (knut_fb_ref)b->size;
}

void knut_arrow__fb_table_start(knut_fb_builder *b)
{
    if (b->in_table && !b->error)
        b->error = KNUT_EINVAL; /* nested tables are a programming error */
    b->in_table = 1;
    b->nfields = 0;
    memset(b->field_ref, 0, sizeof b->field_ref);
    b->table_start = b->size;
}

static void fb_add_scalar(knut_fb_builder *b, int id, const void *p, size_t n)
{
    if (id < 0 || id >= KNUT_FB_MAX_FIELDS || !b->in_table) {
        b->error = b->error ? b->error : KNUT_EINVAL;
        return;
    }
    if (!fb_prep(b, n, n))
        return;
    fb_push(b, p, n);
    b->field_ref[id] = (knut_fb_ref)b->size;
    if (id + 1 > b->nfields)
        b->nfields = id + 1;
}

void knut_arrow__fb_table_add_i64(knut_fb_builder *b, int id, int64_t v, int64_t dflt)
{
    if (v != dflt)
        fb_add_scalar(b, id, &v, 8);
}

void knut_arrow__fb_table_add_i32(knut_fb_builder *b, int id, int32_t v, int32_t dflt)
{
    if (v != dflt)
        fb_add_scalar(b, id, &v, 4);
}

void knut_arrow__fb_table_add_i16(knut_fb_builder *b, int id, int16_t v, int16_t dflt)
{
    if (v != dflt)
        fb_add_scalar(b, id, &v, 2);
}

void knut_arrow__fb_table_add_u8(knut_fb_builder *b, int id, uint8_t v, uint8_t dflt)
{
    if (v != dflt)
        fb_add_scalar(b, id, &v, 1);
}

void knut_arrow__fb_table_add_ref(knut_fb_builder *b, int id, knut_fb_ref ref)
{
    if (!ref)
        return;
    if (id < 0 || id >= KNUT_FB_MAX_FIELDS || !b->in_table) {
        b->error = b->error ? b->error : KNUT_EINVAL;
        return;
    }
    if (!fb_prep(b, 4, 4))
        return;
    fb_push_uoffset(b, ref);
    b->field_ref[id] = (knut_fb_ref)b->size;
    if (id + 1 > b->nfields)
        b->nfields = id + 1;
}

knut_fb_ref knut_arrow__fb_table_end(knut_fb_builder *b)
{
    if (!b->in_table) {
        b->error = b->error ? b->error : KNUT_EINVAL;
        return 0;
    }
    b->in_table = 0;
    if (!fb_prep(b, 4, 4))
        return 0;
    int32_t placeholder = 0;
    fb_push(b, &placeholder, 4);
    knut_fb_ref table = (knut_fb_ref)b->size;
    if (table - b->table_start > UINT16_MAX) { /* vtable entries are 16-bit */
        b->error = KNUT_ETOOBIG;
        return 0;
    }

    uint16_t vt[2 + KNUT_FB_MAX_FIELDS];
    size_t vt_bytes = 4 + 2 * (size_t)b->nfields;
    vt[0] = (uint16_t)vt_bytes;
    vt[1] = (uint16_t)(table - b->table_start);
    for (int i = 0; i < b->nfields; i++)
        vt[2 + i] = b->field_ref[i] ? (uint16_t)(table - b->field_ref[i]) : 0;

    /* Field tables of a wide schema all share one shape: reuse its vtable. */
    knut_fb_ref vt_ref = 0;
    for (int i = 0; i < b->nvtables; i++) {
        const uint8_t *old = fb_at(b, b->vtables[i]);
        uint16_t old_len;
        memcpy(&old_len, old, 2);
        if (old_len == vt_bytes && memcmp(old, vt, vt_bytes) == 0) {
            vt_ref = b->vtables[i];
            break;
        }
    }
    if (!vt_ref) {
        if (!fb_prep(b, 2, vt_bytes))
            return 0;
        fb_push(b, vt, vt_bytes);
        vt_ref = (knut_fb_ref)b->size;
        if (b->nvtables < (int)(sizeof b->vtables / sizeof b->vtables[0]))
            b->vtables[b->nvtables++] = vt_ref;
    }
    /* soffset: table address minus vtable address */
    int32_t so = (int32_t)((int64_t)vt_ref - (int64_t)table);
    memcpy(fb_at(b, table), &so, 4);
    return table;
}

knut_status knut_arrow__fb_builder_finish(knut_fb_builder *b, knut_fb_ref root, const uint8_t **out,
                                          size_t *len_out, knut_error *err)
{
    /* 8: the IPC body that follows the metadata must stay 8-byte aligned */
    size_t align = b->minalign > 8 ? b->minalign : 8;
    if (!b->error && (b->in_table || !root))
        b->error = KNUT_EINVAL;
    if (fb_prep(b, align, 4))
        fb_push_uoffset(b, root);
    if (b->error) {
        if (b->error == KNUT_ETOOBIG)
            return knut_error_set(err, KNUT_ETOOBIG,
                                  "flatbuffer metadata exceeds %zu bytes", b->max_size);
        if (b->error == KNUT_ENOMEM)
            return knut_error_set(err, KNUT_ENOMEM, "out of memory building flatbuffer");
        return knut_error_set(err, b->error, "flatbuffer builder misuse");
    }
    *out = fb_at(b, b->size);
    *len_out = b->size;
    return KNUT_OK;
}

/* ---- reader ------------------------------------------------------------ */

static uint32_t rd_u32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static uint16_t rd_u16(const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, 2);
    return v;
}

static knut_status fb_table_at(knut_fb_table *out, const uint8_t *buf, size_t len, size_t pos,
                               int depth, knut_error *err)
{
    if (depth > KNUT_FB_MAX_DEPTH)
        return knut_error_set(err, KNUT_EPARSE,
                              "flatbuffer: tables nested deeper than %d at byte %zu",
                              KNUT_FB_MAX_DEPTH, pos);
    if (pos > len || len - pos < 4)
        return knut_error_set(err, KNUT_EPARSE, "flatbuffer: table at byte %zu out of range",
                              pos);
    int32_t so;
    memcpy(&so, buf + pos, 4);
    int64_t vt = (int64_t)pos - (int64_t)so;
    if (vt < 0 || (uint64_t)vt > len || len - (size_t)vt < 4)
        return knut_error_set(err, KNUT_EPARSE,
                              "flatbuffer: vtable of table at byte %zu out of range", pos);
    uint16_t vt_len = rd_u16(buf + vt);
    uint16_t tbl_len = rd_u16(buf + vt + 2);
    if (vt_len < 4 || (vt_len & 1) || vt_len > len - (size_t)vt)
        return knut_error_set(err, KNUT_EPARSE,
                              "flatbuffer: bad vtable length %u at byte %lld", vt_len,
                              (long long)vt);
    if (tbl_len < 4 || tbl_len > len - pos)
        return knut_error_set(err, KNUT_EPARSE,
                              "flatbuffer: table at byte %zu runs past the buffer", pos);
    out->buf = buf;
    out->len = len;
    out->pos = pos;
    out->vt = (size_t)vt;
    out->vt_len = vt_len;
    out->tbl_len = tbl_len;
    out->depth = depth;
    return KNUT_OK;
}

knut_status knut_arrow__fb_root(knut_fb_table *out, const uint8_t *buf, size_t len, knut_error *err)
{
    if (!buf || len < 4)
        return knut_error_set(err, KNUT_EPARSE, "flatbuffer: %zu bytes is too short", len);
    return fb_table_at(out, buf, len, rd_u32(buf), 0, err);
}

/* Absolute position of field id, 0 when absent (a field never sits at
 * byte 0: the root offset is there). */
static knut_status fb_field(const knut_fb_table *t, int id, size_t width, size_t *pos,
                            knut_error *err)
{
    *pos = 0;
    size_t slot = 4 + 2 * (size_t)id;
    if (id < 0 || slot + 2 > t->vt_len)
        return KNUT_OK;
    uint16_t fo = rd_u16(t->buf + t->vt + slot);
    if (fo == 0)
        return KNUT_OK;
    if (fo < 4 || (size_t)fo + width > t->tbl_len)
        return knut_error_set(err, KNUT_EPARSE,
                              "flatbuffer: field %d of table at byte %zu lies outside it", id,
                              t->pos);
    *pos = t->pos + fo;
    return KNUT_OK;
}

#define FB_READ_SCALAR(name, type, width)                                                  \
    knut_status name(const knut_fb_table *t, int id, type dflt, type *out, knut_error *err) \
    {                                                                                      \
        size_t pos;                                                                        \
        knut_status st = fb_field(t, id, width, &pos, err);                                \
        if (st)                                                                            \
            return st;                                                                     \
        if (!pos)                                                                          \
            *out = dflt;                                                                   \
        else                                                                               \
            memcpy(out, t->buf + pos, width);                                              \
        return KNUT_OK;                                                                    \
    }

FB_READ_SCALAR(knut_arrow__fb_read_i64, int64_t, 8)
FB_READ_SCALAR(knut_arrow__fb_read_i32, int32_t, 4)
FB_READ_SCALAR(knut_arrow__fb_read_i16, int16_t, 2)
FB_READ_SCALAR(knut_arrow__fb_read_u8, uint8_t, 1)

/* Follows the uoffset stored at pos; the target must leave `need` bytes. */
static knut_status fb_follow(const uint8_t *buf, size_t len, size_t pos, size_t need,
                             size_t *target, knut_error *err)
{
    uint32_t u = rd_u32(buf + pos);
    if (u == 0 || u > len - pos || len - pos - u < need)
        return knut_error_set(err, KNUT_EPARSE,
                              "flatbuffer: offset %u at byte %zu points outside the buffer", u,
                              pos);
    *target = pos + u;
    return KNUT_OK;
}

knut_status knut_arrow__fb_read_table(const knut_fb_table *t, int id, knut_fb_table *out,
                                      int *present, knut_error *err)
{
    size_t pos, target = 0;
    knut_status st = fb_field(t, id, 4, &pos, err);
    *present = 0;
    if (st || !pos)
        return st;
    st = fb_follow(t->buf, t->len, pos, 4, &target, err);
    if (!st)
        st = fb_table_at(out, t->buf, t->len, target, t->depth + 1, err);
    if (!st)
        *present = 1;
    return st;
}

knut_status knut_arrow__fb_read_string(const knut_fb_table *t, int id, const char **out,
                                       size_t *len_out, int *present, knut_error *err)
{
    knut_fb_vector v;
    knut_status st = knut_arrow__fb_read_vector(t, id, 1, &v, present, err);
    if (st || !*present)
        return st;
    *out = (const char *)(v.buf + v.pos);
    *len_out = v.count;
    return KNUT_OK;
}

knut_status knut_arrow__fb_read_vector(const knut_fb_table *t, int id, size_t elem_size,
                                       knut_fb_vector *out, int *present, knut_error *err)
{
    size_t pos, target = 0;
    knut_status st = fb_field(t, id, 4, &pos, err);
    *present = 0;
    if (st || !pos)
        return st;
    st = fb_follow(t->buf, t->len, pos, 4, &target, err);
    if (st)
        return st;
    uint32_t count = rd_u32(t->buf + target);
    size_t avail = t->len - target - 4;
    if ((uint64_t)count * elem_size > avail)
        return knut_error_set(err, KNUT_EPARSE,
                              "flatbuffer: vector of %u elements at byte %zu runs past the "
                              "buffer",
                              count, target);
    out->buf = t->buf;
    out->len = t->len;
    out->pos = target + 4;
    out->count = count;
    out->depth = t->depth;
    *present = 1;
    return KNUT_OK;
}

knut_status knut_arrow__fb_vector_table(const knut_fb_vector *v, uint32_t i, knut_fb_table *out,
                                        knut_error *err)
{
    if (i >= v->count)
        return knut_error_set(err, KNUT_EINVAL, "flatbuffer: vector index %u out of range", i);
    size_t pos = v->pos + 4 * (size_t)i;
    size_t target = 0;
    knut_status st = fb_follow(v->buf, v->len, pos, 4, &target, err);
    if (st)
        return st;
    return fb_table_at(out, v->buf, v->len, target, v->depth + 1, err);
}

int64_t knut_arrow__fb_vector_struct_i64(const knut_fb_vector *v, uint32_t i, size_t elem_size,
                                         size_t off)
{
    int64_t x;
    memcpy(&x, v->buf + v->pos + (size_t)i * elem_size + off, 8);
    return x;
}
