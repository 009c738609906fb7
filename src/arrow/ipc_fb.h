/*
 * The small slice of FlatBuffers that Arrow IPC metadata needs, written in
 * the project: a back-to-front table builder (vtables, scalars, strings,
 * vectors of structs and of tables, unions as type + offset fields) and a
 * reader that checks every offset, vtable and vector against the buffer
 * length and limits nesting depth, so hostile metadata yields an error.
 * Internal to the arrow part.
 */
#ifndef KNUT_ARROW_IPC_FB_H
#define KNUT_ARROW_IPC_FB_H

#include <stddef.h>
#include <stdint.h>

#include "knut/core.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
/* FlatBuffers and the IPC bodies knut writes are little-endian; the code
 * copies scalars with memcpy, which is only right on a little-endian host. */
#error "knut's Arrow IPC code assumes a little-endian host"
#endif

/* ---- builder ----------------------------------------------------------- */

/* An object's place in the buffer being built, counted in bytes from the
 * end of the buffer (FlatBuffers are built back to front so that every
 * offset points forward). 0 means "no object". */
typedef uint32_t knut_fb_ref;

/* Arrow's widest table (Field) has 7 fields; leave room. */
#define KNUT_FB_MAX_FIELDS 16

typedef struct knut_fb_builder {
    uint8_t *buf;     /* data occupies the last `size` bytes of [buf, buf+cap) */
    size_t cap;
    size_t size;
    size_t max_size;  /* hard cap; exceeding it sets KNUT_ETOOBIG */
    size_t minalign;  /* largest alignment requested so far */
    knut_status error; /* sticky: once set, every call is a no-op */
    int in_table;
    int nfields;      /* 1 + highest field id set in the open table */
    size_t table_start;
    knut_fb_ref field_ref[KNUT_FB_MAX_FIELDS];
    knut_fb_ref vtables[64]; /* written vtables, for sharing identical ones */
    int nvtables;
} knut_fb_builder;

/* max_size 0 means 64 MiB. */
void knut_arrow__fb_builder_init(knut_fb_builder *b, size_t max_size);
/* Frees the memory; b may be initialised again. NULL-safe. */
void knut_arrow__fb_builder_reset(knut_fb_builder *b);
/* Empties b for the next message, keeping its memory. */
void knut_arrow__fb_builder_clear(knut_fb_builder *b);

knut_fb_ref knut_arrow__fb_string_create(knut_fb_builder *b, const char *s, size_t len);
/* A vector of inline structs: count elements of elem_size bytes, copied as
 * they are (little-endian), aligned to align. */
knut_fb_ref knut_arrow__fb_vector_structs_create(knut_fb_builder *b, const void *elems,
                                                 size_t elem_size, size_t count, size_t align);
/* A vector of tables (or strings): one forward offset per element. */
knut_fb_ref knut_arrow__fb_vector_refs_create(knut_fb_builder *b, const knut_fb_ref *refs,
                                              size_t count);

/* Tables: start, add fields by id (children must already be built), end.
 * Scalars equal to their schema default are left out, as FlatBuffers does. */
void knut_arrow__fb_table_start(knut_fb_builder *b);
void knut_arrow__fb_table_add_i64(knut_fb_builder *b, int id, int64_t v, int64_t dflt);
void knut_arrow__fb_table_add_i32(knut_fb_builder *b, int id, int32_t v, int32_t dflt);
void knut_arrow__fb_table_add_i16(knut_fb_builder *b, int id, int16_t v, int16_t dflt);
void knut_arrow__fb_table_add_u8(knut_fb_builder *b, int id, uint8_t v, uint8_t dflt);
void knut_arrow__fb_table_add_ref(knut_fb_builder *b, int id, knut_fb_ref ref);
knut_fb_ref knut_arrow__fb_table_end(knut_fb_builder *b);

/* Writes the root offset; on success *out and *len_out point into b (valid
 * until the next builder call). len_out is a multiple of 8. */
knut_status knut_arrow__fb_builder_finish(knut_fb_builder *b, knut_fb_ref root, const uint8_t **out,
                                          size_t *len_out, knut_error *err);

/* ---- reader ------------------------------------------------------------ */

/* Nested tables deeper than this are rejected (a Field tree nests one
 * level per child type; hostile input must not recurse without bound). */
#define KNUT_FB_MAX_DEPTH 64

typedef struct knut_fb_table {
    const uint8_t *buf;
    size_t len;
    size_t pos;     /* table start */
    size_t vt;      /* its vtable */
    uint16_t vt_len;
    uint16_t tbl_len;
    int depth;
} knut_fb_table;

typedef struct knut_fb_vector {
    const uint8_t *buf;
    size_t len;
    size_t pos;     /* first element */
    uint32_t count;
    int depth;      /* depth of the table holding the vector */
} knut_fb_vector;

/* The root table of buf. */
knut_status knut_arrow__fb_root(knut_fb_table *out, const uint8_t *buf, size_t len,
                                knut_error *err);

/* Scalars: the default when the field is absent. */
knut_status knut_arrow__fb_read_i64(const knut_fb_table *t, int id, int64_t dflt, int64_t *out,
                                    knut_error *err);
knut_status knut_arrow__fb_read_i32(const knut_fb_table *t, int id, int32_t dflt, int32_t *out,
                                    knut_error *err);
knut_status knut_arrow__fb_read_i16(const knut_fb_table *t, int id, int16_t dflt, int16_t *out,
                                    knut_error *err);
knut_status knut_arrow__fb_read_u8(const knut_fb_table *t, int id, uint8_t dflt, uint8_t *out,
                                   knut_error *err);
/* Offset fields: *present is 0 (and out untouched) when absent. */
knut_status knut_arrow__fb_read_table(const knut_fb_table *t, int id, knut_fb_table *out,
                                      int *present, knut_error *err);
knut_status knut_arrow__fb_read_string(const knut_fb_table *t, int id, const char **out,
                                       size_t *len_out, int *present, knut_error *err);
knut_status knut_arrow__fb_read_vector(const knut_fb_table *t, int id, size_t elem_size,
                                       knut_fb_vector *out, int *present, knut_error *err);
/* Element i of a vector of tables (i < v->count). */
knut_status knut_arrow__fb_vector_table(const knut_fb_vector *v, uint32_t i, knut_fb_table *out,
                                        knut_error *err);
/* Little-endian int64 at byte `off` of element i of a struct vector
 * (checked by knut_arrow__fb_read_vector). */
int64_t knut_arrow__fb_vector_struct_i64(const knut_fb_vector *v, uint32_t i, size_t elem_size,
                                         size_t off);

#endif /* KNUT_ARROW_IPC_FB_H */
