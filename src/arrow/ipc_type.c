/*
 * The IPC Type union <-> knut_arrow_type_info, as data: what each union
 * member's Type table holds (fb_members) and which of its values mean
 * which knut type (ipc_types). Encoding writes a type's row; decoding
 * reads bytes from anywhere, finds the row its values fit, and names the
 * field in every error about what fits none.
 */
#include "ipc_int.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Members of Schema.fbs's `union Type`. */
enum {
    T_NULL = 1, T_INT = 2, T_FLOAT = 3, T_BINARY = 4, T_UTF8 = 5, T_BOOL = 6,
    T_DECIMAL = 7, T_DATE = 8, T_TIME = 9, T_TIMESTAMP = 10, T_INTERVAL = 11,
    T_LIST = 12, T_STRUCT = 13, T_UNION = 14, T_FIXED_BINARY = 15,
    T_FIXED_LIST = 16, T_MAP = 17, T_DURATION = 18, T_LARGE_BINARY = 19,
    T_LARGE_UTF8 = 20, T_LARGE_LIST = 21, T_RUN_END = 22, T_BINARY_VIEW = 23,
    T_UTF8_VIEW = 24, T_LIST_VIEW = 25, T_LARGE_LIST_VIEW = 26
};

/*
 * The Type table of each union member as knut reads and writes it: up to
 * three scalar fields (slots 0..2: width and FlatBuffers default), what
 * the ones that do not choose the knut type carry (`param`), and what a
 * table that no row of ipc_types accepts is told. A member without rows
 * there is not supported. Enum values are the format's: DateUnit DAY = 0,
 * MILLISECOND = 1; TimeUnit SECOND..NANOSECOND = 0..3 (as
 * knut_arrow_time_unit); IntervalUnit YEAR_MONTH, DAY_TIME, MONTH_DAY_NANO
 * = 0..2; Precision HALF, SINGLE, DOUBLE = 0..2.
 */
enum { W_NONE, W_U8, W_I16, W_I32 };
enum {
    P_NONE,
    P_UNIT,    /* slot 0 is the time unit (TIMESTAMP also has the timezone, slot 1) */
    P_WIDTH,   /* slot 0 is byte_width */
    P_DECIMAL, /* slots 0 and 1 are precision and scale */
    P_SORTED   /* slot 0 is the map's keysSorted */
};

static const struct fb_member {
    const char *name;
    uint8_t width[3];
    int32_t dflt[3];
    uint8_t param;
    knut_status bad_code;
    const char *bad;
    int bad_says_slot0; /* the message ends with slot 0's value */
} fb_members[] = {
    [0] = {.name = "NONE"},
    [T_NULL] = {.name = "Null"},
    [T_INT] = {.name = "Int", .width = {W_I32, W_U8}, .bad_code = KNUT_EUNSUPPORTED,
               .bad = "unsupported integer bit width", .bad_says_slot0 = 1},
    [T_FLOAT] = {.name = "FloatingPoint", .width = {W_I16}, .bad_code = KNUT_EPARSE,
                 .bad = "bad floating point precision"},
    [T_BINARY] = {.name = "Binary"},
    [T_UTF8] = {.name = "Utf8"},
    [T_BOOL] = {.name = "Bool"},
    [T_DECIMAL] = {.name = "Decimal", .width = {W_I32, W_I32, W_I32}, .dflt = {0, 0, 128},
                   .param = P_DECIMAL, .bad_code = KNUT_EUNSUPPORTED,
                   .bad = "only 128-bit decimals are supported"},
    [T_DATE] = {.name = "Date", .width = {W_I16}, .dflt = {1}, .bad_code = KNUT_EPARSE,
                .bad = "bad date unit"},
    [T_TIME] = {.name = "Time", .width = {W_I16, W_I32}, .dflt = {1, 32}, .param = P_UNIT,
                .bad_code = KNUT_EPARSE, .bad = "time unit and bit width do not match"},
    [T_TIMESTAMP] = {.name = "Timestamp", .width = {W_I16}, .param = P_UNIT,
                     .bad_code = KNUT_EPARSE, .bad = "bad timestamp unit"},
    [T_INTERVAL] = {.name = "Interval", .width = {W_I16}, .bad_code = KNUT_EPARSE,
                    .bad = "bad interval unit"},
    [T_LIST] = {.name = "List"},
    [T_STRUCT] = {.name = "Struct"},
    [T_UNION] = {.name = "Union"},
    [T_FIXED_BINARY] = {.name = "FixedSizeBinary", .width = {W_I32}, .param = P_WIDTH,
                        .bad_code = KNUT_EPARSE,
                        .bad = "fixed-size binary width must be positive"},
    [T_FIXED_LIST] = {.name = "FixedSizeList"},
    [T_MAP] = {.name = "Map", .width = {W_U8}, .param = P_SORTED},
    [T_DURATION] = {.name = "Duration", .width = {W_I16}, .dflt = {1}, .param = P_UNIT,
                    .bad_code = KNUT_EPARSE, .bad = "bad duration unit"},
    [T_LARGE_BINARY] = {.name = "LargeBinary"},
    [T_LARGE_UTF8] = {.name = "LargeUtf8"},
    [T_LARGE_LIST] = {.name = "LargeList"},
    [T_RUN_END] = {.name = "RunEndEncoded"},
    [T_BINARY_VIEW] = {.name = "BinaryView"},
    [T_UTF8_VIEW] = {.name = "Utf8View"},
    [T_LIST_VIEW] = {.name = "ListView"},
    [T_LARGE_LIST_VIEW] = {.name = "LargeListView"},
};

#define N_MEMBERS (sizeof fb_members / sizeof fb_members[0])

/* Each knut type IPC carries: its member and the slot values that mean it
 * (a range where the slot is a parameter; U8 slots read as 0 or 1). */
#define IS(v) {(v), (v)}
#define ANY {INT32_MIN, INT32_MAX}
static const struct ipc_type {
    knut_arrow_type type;
    uint8_t id;
    struct {
        int32_t lo, hi;
    } sel[3];
} ipc_types[] = {
    {.type = KNUT_ARROW_NA, .id = T_NULL},
    {.type = KNUT_ARROW_BOOL, .id = T_BOOL},
    {.type = KNUT_ARROW_INT8, .id = T_INT, .sel = {IS(8), IS(1)}},
    {.type = KNUT_ARROW_UINT8, .id = T_INT, .sel = {IS(8), IS(0)}},
    {.type = KNUT_ARROW_INT16, .id = T_INT, .sel = {IS(16), IS(1)}},
    {.type = KNUT_ARROW_UINT16, .id = T_INT, .sel = {IS(16), IS(0)}},
    {.type = KNUT_ARROW_INT32, .id = T_INT, .sel = {IS(32), IS(1)}},
    {.type = KNUT_ARROW_UINT32, .id = T_INT, .sel = {IS(32), IS(0)}},
    {.type = KNUT_ARROW_INT64, .id = T_INT, .sel = {IS(64), IS(1)}},
    {.type = KNUT_ARROW_UINT64, .id = T_INT, .sel = {IS(64), IS(0)}},
    {.type = KNUT_ARROW_HALF_FLOAT, .id = T_FLOAT, .sel = {IS(0)}},
    {.type = KNUT_ARROW_FLOAT, .id = T_FLOAT, .sel = {IS(1)}},
    {.type = KNUT_ARROW_DOUBLE, .id = T_FLOAT, .sel = {IS(2)}},
    {.type = KNUT_ARROW_UTF8, .id = T_UTF8},
    {.type = KNUT_ARROW_LARGE_UTF8, .id = T_LARGE_UTF8},
    {.type = KNUT_ARROW_BINARY, .id = T_BINARY},
    {.type = KNUT_ARROW_LARGE_BINARY, .id = T_LARGE_BINARY},
    {.type = KNUT_ARROW_FIXED_BINARY, .id = T_FIXED_BINARY, .sel = {{1, INT32_MAX}}},
    {.type = KNUT_ARROW_DECIMAL128, .id = T_DECIMAL, .sel = {ANY, ANY, IS(128)}},
    {.type = KNUT_ARROW_DATE32, .id = T_DATE, .sel = {IS(0)}},
    {.type = KNUT_ARROW_DATE64, .id = T_DATE, .sel = {IS(1)}},
    {.type = KNUT_ARROW_TIME32, .id = T_TIME, .sel = {{0, 1}, IS(32)}},
    {.type = KNUT_ARROW_TIME64, .id = T_TIME, .sel = {{2, 3}, IS(64)}},
    {.type = KNUT_ARROW_TIMESTAMP, .id = T_TIMESTAMP, .sel = {{0, 3}}},
    {.type = KNUT_ARROW_DURATION, .id = T_DURATION, .sel = {{0, 3}}},
    {.type = KNUT_ARROW_INTERVAL_MONTHS, .id = T_INTERVAL, .sel = {IS(0)}},
    {.type = KNUT_ARROW_INTERVAL_DAY_TIME, .id = T_INTERVAL, .sel = {IS(1)}},
    {.type = KNUT_ARROW_INTERVAL_MDN, .id = T_INTERVAL, .sel = {IS(2)}},
    {.type = KNUT_ARROW_LIST, .id = T_LIST},
    {.type = KNUT_ARROW_LARGE_LIST, .id = T_LARGE_LIST},
    {.type = KNUT_ARROW_STRUCT, .id = T_STRUCT},
    {.type = KNUT_ARROW_MAP, .id = T_MAP, .sel = {ANY}},
};
#undef IS
#undef ANY

#define N_TYPES (sizeof ipc_types / sizeof ipc_types[0])

/* Slot k's value as a parameter of t (encoding). */
static int32_t param_get(const knut_arrow_type_info *t, int64_t flags, int param, int k)
{
    switch (param) {
    case P_UNIT: return (int32_t)t->unit;
    case P_WIDTH: return t->byte_width;
    case P_DECIMAL: return k == 0 ? t->precision : t->scale;
    case P_SORTED: return (flags & ARROW_FLAG_MAP_KEYS_SORTED) ? 1 : 0;
    default: return 0;
    }
}

/* Stores slot k's value v as a parameter of t (decoding). */
static void param_set(knut_arrow_type_info *t, int64_t *flags, int param, int k, int32_t v)
{
    switch (param) {
    case P_UNIT: t->unit = (knut_arrow_time_unit)v; break;
    case P_WIDTH: t->byte_width = v; break;
    case P_DECIMAL: *(k == 0 ? &t->precision : &t->scale) = v; break;
    case P_SORTED: if (v) *flags |= ARROW_FLAG_MAP_KEYS_SORTED; break;
    default: break;
    }
}

/* ---- encoding ---------------------------------------------------------- */

/* Builds the Type table of t; *type_id gets its union member (0: none). */
/* Union { mode: short (Sparse 0, Dense 1); typeIds: [int] }: dense unions
 * only, written and read (a sparse one is refused). */
static knut_fb_ref union_encode(knut_fb_builder *b, const knut_arrow_type_info *t,
                                uint8_t *type_id)
{
    int32_t ids[KNUT_ARROW_UNION_MAX];
    for (int32_t i = 0; i < t->n_type_ids; i++)
        ids[i] = t->type_ids[i];
    knut_fb_ref v = knut_arrow__fb_vector_structs_create(b, ids, sizeof ids[0],
                                                         (size_t)t->n_type_ids, 4);
    knut_arrow__fb_table_start(b);
    knut_arrow__fb_table_add_i16(b, 0, 1 /* Dense */, 0);
    knut_arrow__fb_table_add_ref(b, 1, v);
    *type_id = T_UNION;
    return knut_arrow__fb_table_end(b);
}

knut_fb_ref knut_arrow__ipc_type_encode(knut_fb_builder *b, const knut_arrow_type_info *t,
                                        int64_t flags, uint8_t *type_id)
{
    if (t->type == KNUT_ARROW_DENSE_UNION)
        return union_encode(b, t, type_id);
    size_t r = 0;
    while (r < N_TYPES && ipc_types[r].type != t->type)
        r++;
    knut_fb_ref tz = 0;
    if (t->type == KNUT_ARROW_TIMESTAMP && t->timezone[0])
        tz = knut_arrow__fb_string_create(b, t->timezone, strlen(t->timezone));
    knut_arrow__fb_table_start(b);
    *type_id = r < N_TYPES ? ipc_types[r].id : 0;
    const struct fb_member *m = &fb_members[*type_id];
    for (int k = 0; k < 3 && r < N_TYPES; k++) {
        int32_t lo = ipc_types[r].sel[k].lo, hi = ipc_types[r].sel[k].hi;
        int32_t v = lo == hi ? lo : param_get(t, flags, m->param, k);
        if (m->width[k] == W_U8)
            knut_arrow__fb_table_add_u8(b, k, (uint8_t)v, (uint8_t)m->dflt[k]);
        else if (m->width[k] == W_I16)
            knut_arrow__fb_table_add_i16(b, k, (int16_t)v, (int16_t)m->dflt[k]);
        else if (m->width[k] == W_I32)
            knut_arrow__fb_table_add_i32(b, k, v, m->dflt[k]);
    }
    if (tz)
        knut_arrow__fb_table_add_ref(b, 1, tz);
    return knut_arrow__fb_table_end(b);
}

/* ---- decoding ---------------------------------------------------------- */

static knut_status bad_field(knut_error *err, const char *path, knut_status code,
                             const char *what)
{
    return knut_error_set(err, code, "field '%s': %s", path, what);
}

/* Reads slot k of a Type table, of the member's width, into *v. */
static knut_status slot_read(const knut_fb_table *tbl, const struct fb_member *m, int k,
                             int32_t *v, knut_error *err)
{
    knut_status st = KNUT_OK;
    *v = 0;
    if (m->width[k] == W_U8) {
        uint8_t u8;
        st = knut_arrow__fb_read_u8(tbl, k, (uint8_t)m->dflt[k], &u8, err);
        *v = u8 != 0; /* a flag: any non-zero byte is true */
    } else if (m->width[k] == W_I16) {
        int16_t i16;
        st = knut_arrow__fb_read_i16(tbl, k, (int16_t)m->dflt[k], &i16, err);
        *v = i16;
    } else if (m->width[k] == W_I32) {
        st = knut_arrow__fb_read_i32(tbl, k, m->dflt[k], v, err);
    }
    return st;
}

/* A dense Union table into t: its type ids, each 0..127 and distinct (none
 * given: the schema decoder numbers the children 0..n-1). */
static knut_status union_decode(const knut_fb_table *tbl, const char *path,
                                knut_arrow_type_info *t, knut_error *err)
{
    int16_t mode;
    knut_fb_vector ids;
    int present;
    knut_status st = knut_arrow__fb_read_i16(tbl, 0, 0, &mode, err);
    if (!st)
        st = knut_arrow__fb_read_vector(tbl, 1, 4, &ids, &present, err);
    if (st)
        return st;
    if (mode != 1)
        return bad_field(err, path, KNUT_EUNSUPPORTED, "sparse unions are not supported");
    knut_arrow_type_info_init(t, KNUT_ARROW_DENSE_UNION);
    if (!present)
        return KNUT_OK;
    if (ids.count > KNUT_ARROW_UNION_MAX)
        return bad_field(err, path, KNUT_EPARSE, "more than 128 union type ids");
    uint8_t seen[KNUT_ARROW_UNION_MAX] = {0};
    for (uint32_t i = 0; i < ids.count; i++) {
        int32_t id;
        memcpy(&id, ids.buf + ids.pos + 4 * (size_t)i, 4);
        if (id < 0 || id >= KNUT_ARROW_UNION_MAX || seen[id])
            return bad_field(err, path, KNUT_EPARSE, "union type ids must be distinct, 0..127");
        seen[id] = 1;
        t->type_ids[i] = (int8_t)id;
    }
    t->n_type_ids = (int32_t)ids.count;
    return KNUT_OK;
}

knut_status knut_arrow__ipc_type_decode(const knut_fb_table *f, const char *path,
                                        knut_arrow_type_info *t, int64_t *flags, knut_error *err)
{
    uint8_t tt;
    knut_fb_table tbl;
    int present;
    knut_status st = knut_arrow__fb_read_u8(f, KNUT_IPC_FIELD_TYPE_TYPE, 0, &tt, err);
    if (!st)
        st = knut_arrow__fb_read_table(f, KNUT_IPC_FIELD_TYPE, &tbl, &present, err);
    if (st)
        return st;
    if (tt == 0 || !present)
        return bad_field(err, path, KNUT_EPARSE, "no type");
    if (tt == T_UNION)
        return union_decode(&tbl, path, t, err);
    char buf[96];
    size_t r = 0;
    while (r < N_TYPES && ipc_types[r].id != tt)
        r++;
    if (r == N_TYPES) {
        snprintf(buf, sizeof buf, "type %s is not supported",
                 tt < N_MEMBERS ? fb_members[tt].name : "(unknown)");
        return bad_field(err, path, KNUT_EUNSUPPORTED, buf);
    }
    const struct fb_member *m = &fb_members[tt];
    int32_t v[3];
    const char *tz = NULL;
    size_t tzl = 0;
    int has_tz = 0;
    for (int k = 0; k < 3 && !st; k++)
        st = slot_read(&tbl, m, k, &v[k], err);
    if (!st && tt == T_TIMESTAMP)
        st = knut_arrow__fb_read_string(&tbl, 1, &tz, &tzl, &has_tz, err);
    if (st)
        return st;
    /* the first row of the member whose slot values all fit */
    for (; r < N_TYPES; r++) {
        const struct ipc_type *row = &ipc_types[r];
        if (row->id == tt && v[0] >= row->sel[0].lo && v[0] <= row->sel[0].hi &&
            v[1] >= row->sel[1].lo && v[1] <= row->sel[1].hi && v[2] >= row->sel[2].lo &&
            v[2] <= row->sel[2].hi)
            break;
    }
    if (r == N_TYPES) {
        if (m->bad_says_slot0) {
            snprintf(buf, sizeof buf, "%s %d", m->bad, (int)v[0]);
            return bad_field(err, path, m->bad_code, buf);
        }
        return bad_field(err, path, m->bad_code, m->bad);
    }
    knut_arrow_type_info_init(t, ipc_types[r].type);
    for (int k = 0; k < 3; k++)
        if (ipc_types[r].sel[k].lo != ipc_types[r].sel[k].hi)
            param_set(t, flags, m->param, k, v[k]);
    if (t->type == KNUT_ARROW_DECIMAL128 && (t->precision < 1 || t->precision > 38))
        return bad_field(err, path, KNUT_EPARSE, "decimal precision out of range 1..38");
    if (has_tz) {
        if (tzl >= sizeof t->timezone || memchr(tz, 0, tzl))
            return bad_field(err, path, KNUT_EUNSUPPORTED, "timezone name too long or not text");
        memcpy(t->timezone, tz, tzl);
        t->timezone[tzl] = '\0';
    }
    return KNUT_OK;
}
