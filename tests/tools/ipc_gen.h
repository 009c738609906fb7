/*
 * Test data for the Arrow IPC tests: a struct builder with one column of
 * every type the IPC code handles (nested list<struct<...>> and map too),
 * filled with a deterministic pattern of values, nulls (every third row of
 * nullable fields), empty strings and empty lists. Shared by the unit
 * tests and knut_ipc_tool's `gen` mode, so pyarrow checks the same data.
 * Header-only, test code only.
 */
#ifndef KNUT_TESTS_IPC_GEN_H
#define KNUT_TESTS_IPC_GEN_H

#include <stdio.h>
#include <string.h>

#include "knut/arrow.h"

static inline knut_status ipcgen_add(knut_arrow_builder *parent, knut_arrow_builder **out,
                              knut_arrow_type type, const char *name, knut_error *err)
{
    knut_arrow_builder *b;
    knut_status st = knut_arrow_builder_new_simple(&b, type, name, err);
    if (st)
        return st;
    if (out)
        *out = b;
    return knut_arrow_builder_add_child(parent, b, err);
}

static inline knut_status ipcgen_add_info(knut_arrow_builder *parent, knut_arrow_builder **out,
                                   const knut_arrow_type_info *t, const char *name,
                                   knut_error *err)
{
    knut_arrow_builder *b;
    knut_status st = knut_arrow_builder_new(&b, t, name, err);
    if (st)
        return st;
    if (out)
        *out = b;
    return knut_arrow_builder_add_child(parent, b, err);
}

/* The top-level struct builder: one child per column. */
static inline knut_status ipcgen_builder_new(knut_arrow_builder **out, knut_error *err)
{
    static const struct {
        knut_arrow_type type;
        const char *name;
    } simple[] = {
        {KNUT_ARROW_NA, "null"},          {KNUT_ARROW_BOOL, "bool"},
        {KNUT_ARROW_INT8, "int8"},        {KNUT_ARROW_UINT8, "uint8"},
        {KNUT_ARROW_INT16, "int16"},      {KNUT_ARROW_UINT16, "uint16"},
        {KNUT_ARROW_INT32, "int32"},      {KNUT_ARROW_UINT32, "uint32"},
        {KNUT_ARROW_INT64, "int64"},      {KNUT_ARROW_UINT64, "uint64"},
        {KNUT_ARROW_HALF_FLOAT, "half"},  {KNUT_ARROW_FLOAT, "float"},
        {KNUT_ARROW_DOUBLE, "double"},    {KNUT_ARROW_UTF8, "utf8"},
        {KNUT_ARROW_LARGE_UTF8, "large_utf8"}, {KNUT_ARROW_BINARY, "binary"},
        {KNUT_ARROW_LARGE_BINARY, "large_binary"}, {KNUT_ARROW_DATE32, "date32"},
        {KNUT_ARROW_DATE64, "date64"},    {KNUT_ARROW_DURATION, "duration_us"},
        {KNUT_ARROW_INTERVAL_MONTHS, "interval_months"},
        {KNUT_ARROW_INTERVAL_DAY_TIME, "interval_dt"},
        {KNUT_ARROW_INTERVAL_MDN, "interval_mdn"},
    };
    knut_arrow_builder *top = NULL, *b, *c, *d;
    knut_arrow_type_info t;
    knut_status st = knut_arrow_builder_new_simple(&top, KNUT_ARROW_STRUCT, "", err);
    for (size_t i = 0; !st && i < sizeof simple / sizeof simple[0]; i++)
        st = ipcgen_add(top, &b, simple[i].type, simple[i].name, err);
    if (!st) {
        knut_arrow_type_info_init(&t, KNUT_ARROW_FIXED_BINARY);
        t.byte_width = 3;
        st = ipcgen_add_info(top, NULL, &t, "fixed3", err);
    }
    if (!st) {
        knut_arrow_type_info_init(&t, KNUT_ARROW_DECIMAL128);
        t.precision = 20;
        t.scale = 4;
        st = ipcgen_add_info(top, NULL, &t, "decimal", err);
    }
    if (!st) {
        knut_arrow_type_info_init(&t, KNUT_ARROW_TIME32);
        t.unit = KNUT_ARROW_SECOND;
        st = ipcgen_add_info(top, NULL, &t, "time32_s", err);
    }
    if (!st) {
        knut_arrow_type_info_init(&t, KNUT_ARROW_TIME64);
        t.unit = KNUT_ARROW_NANO;
        st = ipcgen_add_info(top, NULL, &t, "time64_ns", err);
    }
    if (!st) {
        knut_arrow_type_info_init(&t, KNUT_ARROW_TIMESTAMP);
        t.unit = KNUT_ARROW_MICRO;
        st = ipcgen_add_info(top, NULL, &t, "ts_us", err);
    }
    if (!st) {
        knut_arrow_type_info_init(&t, KNUT_ARROW_TIMESTAMP);
        t.unit = KNUT_ARROW_NANO;
        snprintf(t.timezone, sizeof t.timezone, "Europe/Paris");
        st = ipcgen_add_info(top, NULL, &t, "ts_ns_tz", err);
    }
    /* not nullable, to check the flag survives */
    if (!st && !(st = ipcgen_add(top, &b, KNUT_ARROW_INT64, "id", err)))
        knut_arrow_builder_set_nullable(b, 0);
    /* list<int32> */
    if (!st && !(st = ipcgen_add(top, &b, KNUT_ARROW_LIST, "list_i32", err)))
        st = ipcgen_add(b, NULL, KNUT_ARROW_INT32, "item", err);
    /* large_list<utf8> */
    if (!st && !(st = ipcgen_add(top, &b, KNUT_ARROW_LARGE_LIST, "large_list_str", err)))
        st = ipcgen_add(b, NULL, KNUT_ARROW_UTF8, "item", err);
    /* struct<a: int64, b: utf8> */
    if (!st && !(st = ipcgen_add(top, &b, KNUT_ARROW_STRUCT, "struct", err))) {
        st = ipcgen_add(b, NULL, KNUT_ARROW_INT64, "a", err);
        if (!st)
            st = ipcgen_add(b, NULL, KNUT_ARROW_UTF8, "b", err);
    }
    /* map<utf8, int32> */
    if (!st && !(st = ipcgen_add(top, &b, KNUT_ARROW_MAP, "map", err))) {
        st = ipcgen_add(b, &c, KNUT_ARROW_STRUCT, "entries", err);
        if (!st) {
            knut_arrow_builder_set_nullable(c, 0);
            st = ipcgen_add(c, &d, KNUT_ARROW_UTF8, "key", err);
        }
        if (!st) {
            knut_arrow_builder_set_nullable(d, 0);
            st = ipcgen_add(c, NULL, KNUT_ARROW_INT32, "value", err);
        }
    }
    /* list<struct<x: int32, y: list<int64>, s: utf8>> */
    if (!st && !(st = ipcgen_add(top, &b, KNUT_ARROW_LIST, "list_struct", err))) {
        st = ipcgen_add(b, &c, KNUT_ARROW_STRUCT, "item", err);
        if (!st)
            st = ipcgen_add(c, NULL, KNUT_ARROW_INT32, "x", err);
        if (!st && !(st = ipcgen_add(c, &d, KNUT_ARROW_LIST, "y", err)))
            st = ipcgen_add(d, NULL, KNUT_ARROW_INT64, "item", err);
        if (!st)
            st = ipcgen_add(c, NULL, KNUT_ARROW_UTF8, "s", err);
    }
    if (st) {
        knut_arrow_builder_free(top);
        return st;
    }
    *out = top;
    return KNUT_OK;
}

/* Appends the value of `row` to b (recursively for nested types). */
static inline knut_status ipcgen_value(knut_arrow_builder *b, int64_t row, knut_error *err)
{
    knut_arrow_type t = b->type.type;
    knut_status st = KNUT_OK;
    char s[48];
    uint8_t bytes[16];
    if (t == KNUT_ARROW_NA || ((b->flags & ARROW_FLAG_NULLABLE) && row % 3 == 1))
        return knut_arrow_builder_append_null(b, err);
    switch (t) {
    case KNUT_ARROW_BOOL:
        return knut_arrow_builder_append_bool(b, row % 2 == 0 || row % 7 == 3, err);
    case KNUT_ARROW_INT8: case KNUT_ARROW_INT16: case KNUT_ARROW_INT32:
        return knut_arrow_builder_append_int(b, (row * 37) % 251 - 125, err);
    case KNUT_ARROW_INT64:
        return knut_arrow_builder_append_int(b, row * 1000003LL - 500000000000LL, err);
    case KNUT_ARROW_UINT8: case KNUT_ARROW_UINT16: case KNUT_ARROW_UINT32:
        return knut_arrow_builder_append_uint(b, (uint64_t)(row * 13) % 250, err);
    case KNUT_ARROW_UINT64:
        return knut_arrow_builder_append_uint(b, UINT64_C(18000000000000000000) + (uint64_t)row,
                                              err);
    case KNUT_ARROW_HALF_FLOAT: { /* 1.0 + row/1024 in IEEE half bits */
        uint16_t h = (uint16_t)(0x3C00u + (unsigned)(row % 1024));
        return knut_arrow_builder_append_fixed(b, &h, err);
    }
    case KNUT_ARROW_FLOAT: case KNUT_ARROW_DOUBLE:
        return knut_arrow_builder_append_double(b, (double)row * 0.25 - 3.5, err);
    case KNUT_ARROW_UTF8: case KNUT_ARROW_LARGE_UTF8: case KNUT_ARROW_BINARY:
    case KNUT_ARROW_LARGE_BINARY: {
        if (row % 5 == 0)
            return knut_arrow_builder_append_bytes(b, "", 0, err);
        int n = snprintf(s, sizeof s, "v%lld-%.*s", (long long)row, (int)(row % 11),
                         "\xc3\xa9tait-abcdefgh");
        if (t == KNUT_ARROW_UTF8 || t == KNUT_ARROW_LARGE_UTF8) {
            /* do not cut the two-byte 'é' in half */
            if (row % 11 == 1)
                n--;
        }
        return knut_arrow_builder_append_bytes(b, s, (size_t)n, err);
    }
    case KNUT_ARROW_FIXED_BINARY: case KNUT_ARROW_DECIMAL128: case KNUT_ARROW_INTERVAL_DAY_TIME:
    case KNUT_ARROW_INTERVAL_MDN:
        memset(bytes, 0, sizeof bytes);
        for (int i = 0; i < b->type.byte_width && i < 8; i++)
            bytes[i] = (uint8_t)(row * (i + 3));
        return knut_arrow_builder_append_bytes(b, bytes, (size_t)b->type.byte_width, err);
    case KNUT_ARROW_DATE32: case KNUT_ARROW_TIME32: case KNUT_ARROW_INTERVAL_MONTHS:
        return knut_arrow_builder_append_int(b, 18000 + row, err);
    case KNUT_ARROW_DATE64:
        return knut_arrow_builder_append_int(b, (18000 + row) * 86400000LL, err);
    case KNUT_ARROW_TIME64: /* inside one day, or pyarrow's validation objects */
        return knut_arrow_builder_append_int(b, 3600000000000LL + row * 1000001LL, err);
    case KNUT_ARROW_TIMESTAMP: case KNUT_ARROW_DURATION:
        return knut_arrow_builder_append_int(b, 1700000000000000LL + row * 1000001LL, err);
    case KNUT_ARROW_LIST: case KNUT_ARROW_LARGE_LIST: case KNUT_ARROW_MAP:
        for (int64_t k = 0; k < row % 4 && !st; k++)
            st = ipcgen_value(b->children[0], row * 4 + k, err);
        return st ? st : knut_arrow_builder_finish_element(b, err);
    case KNUT_ARROW_STRUCT:
        for (int64_t k = 0; k < b->n_children && !st; k++)
            st = ipcgen_value(b->children[k], row + k, err);
        return st ? st : knut_arrow_builder_finish_element(b, err);
    default:
        return knut_error_set(err, KNUT_EINVAL, "ipcgen: no values for type %s",
                              knut_arrow_type_name(t));
    }
}

/* Appends rows [first, first+n) to every column of the top builder. */
static inline knut_status ipcgen_rows(knut_arrow_builder *top, int64_t first, int64_t n,
                               knut_error *err)
{
    knut_status st = KNUT_OK;
    for (int64_t r = first; r < first + n && !st; r++) {
        for (int64_t k = 0; k < top->n_children && !st; k++)
            st = ipcgen_value(top->children[k], r, err);
        if (!st)
            st = knut_arrow_builder_finish_element(top, err);
    }
    return st;
}

/* A shallow view of src: same buffers, given offset and length. Its
 * release only marks it released (src keeps the memory). */
static inline void ipcgen_view_release(struct ArrowArray *a)
{
    a->release = NULL;
}

static inline void ipcgen_slice(struct ArrowArray *out, const struct ArrowArray *src, int64_t offset,
                         int64_t length)
{
    *out = *src;
    out->offset = offset;
    out->length = length;
    out->null_count = -1; /* make the writer count */
    out->release = ipcgen_view_release;
    out->private_data = NULL;
}

#endif /* KNUT_TESTS_IPC_GEN_H */
