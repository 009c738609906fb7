/*
 * The small vocabularies of GraphAr info files: data types, file types,
 * cardinalities, adjacency-list types, and the `gar/v1` version string.
 * Spellings are matched exactly (case-sensitive) because the reference C++
 * library does so; anything it would throw on is refused here with the
 * offending text quoted.
 */
#include "graphar_int.h"

#include <stdlib.h>
#include <string.h>

static const char *const type_names[] = {
    [KNUT_GRAPHAR_TYPE_BOOL] = "bool",     [KNUT_GRAPHAR_TYPE_INT32] = "int32",
    [KNUT_GRAPHAR_TYPE_INT64] = "int64",   [KNUT_GRAPHAR_TYPE_FLOAT] = "float",
    [KNUT_GRAPHAR_TYPE_DOUBLE] = "double", [KNUT_GRAPHAR_TYPE_STRING] = "string",
    [KNUT_GRAPHAR_TYPE_DATE] = "date",     [KNUT_GRAPHAR_TYPE_TIMESTAMP] = "timestamp",
    [KNUT_GRAPHAR_TYPE_LIST] = "list",
};

static const char *const file_type_names[] = {
    [KNUT_GRAPHAR_FILE_CSV] = "csv",
    [KNUT_GRAPHAR_FILE_PARQUET] = "parquet",
    [KNUT_GRAPHAR_FILE_ORC] = "orc",
    [KNUT_GRAPHAR_FILE_JSON] = "json",
};

static const char *const card_names[] = {
    [KNUT_GRAPHAR_CARD_SINGLE] = "single",
    [KNUT_GRAPHAR_CARD_LIST] = "list",
    [KNUT_GRAPHAR_CARD_SET] = "set",
};

static const char *const adj_names[] = {
    [KNUT_GRAPHAR_UNORDERED_BY_SOURCE] = "unordered_by_source",
    [KNUT_GRAPHAR_UNORDERED_BY_DEST] = "unordered_by_dest",
    [KNUT_GRAPHAR_ORDERED_BY_SOURCE] = "ordered_by_source",
    [KNUT_GRAPHAR_ORDERED_BY_DEST] = "ordered_by_dest",
};

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

const char *knut_graphar_type_name(knut_graphar_type t)
{
    return (unsigned)t < N_OF(type_names) ? type_names[t] : "?";
}

const char *knut_graphar_file_type_name(knut_graphar_file_type ft)
{
    return (unsigned)ft < N_OF(file_type_names) ? file_type_names[ft] : "?";
}

const char *knut_graphar_cardinality_name(knut_graphar_cardinality c)
{
    return (unsigned)c < N_OF(card_names) ? card_names[c] : "?";
}

const char *knut_graphar_adj_list_type_name(knut_graphar_adj_list_type t)
{
    return (unsigned)t < N_OF(adj_names) ? adj_names[t] : "?";
}

/* Finds text in a name table; -1 if absent. */
static int lookup(const char *const *names, size_t n, const char *text)
{
    for (size_t i = 0; i < n; i++)
        if (names[i] && strcmp(names[i], text) == 0)
            return (int)i;
    return -1;
}

knut_status knut_graphar_type_parse(const char *text, knut_graphar_type *type,
                                    knut_graphar_type *elem, knut_error *err)
{
    KNUT_ASSERT_ARG(err, text && type);
    int i = lookup(type_names, N_OF(type_names), text);
    if (i >= 0 && i != KNUT_GRAPHAR_TYPE_LIST) {
        *type = (knut_graphar_type)i;
        if (elem)
            *elem = (knut_graphar_type)i;
        return KNUT_OK;
    }
    /* list<T>: only the element types the reference's TypeNameToDataType
     * accepts (no bool, date, timestamp or nested lists). */
    size_t len = strlen(text);
    if (len > 6 && strncmp(text, "list<", 5) == 0 && text[len - 1] == '>') {
        static const knut_graphar_type elems[] = {
            KNUT_GRAPHAR_TYPE_INT32, KNUT_GRAPHAR_TYPE_INT64, KNUT_GRAPHAR_TYPE_FLOAT,
            KNUT_GRAPHAR_TYPE_DOUBLE, KNUT_GRAPHAR_TYPE_STRING};
        for (size_t k = 0; k < N_OF(elems); k++) {
            const char *en = type_names[elems[k]];
            if (strlen(en) == len - 6 && strncmp(text + 5, en, len - 6) == 0) {
                *type = KNUT_GRAPHAR_TYPE_LIST;
                if (elem)
                    *elem = elems[k];
                return KNUT_OK;
            }
        }
    }
    return knut_error_set(err, KNUT_EINVAL,
                          "unsupported data type '%.64s' (expected bool, int32, int64, float, "
                          "double, string, date, timestamp or list<int32|int64|float|double|"
                          "string>)",
                          text);
}

knut_status knut_graphar_file_type_parse(const char *text, knut_graphar_file_type *out,
                                         knut_error *err)
{
    KNUT_ASSERT_ARG(err, text && out);
    int i = lookup(file_type_names, N_OF(file_type_names), text);
    if (i < 0)
        return knut_error_set(err, KNUT_EINVAL,
                              "unsupported file type '%.64s' (expected csv, parquet, orc or json)",
                              text);
    *out = (knut_graphar_file_type)i;
    return KNUT_OK;
}

knut_status knut_graphar_cardinality_parse(const char *text, knut_graphar_cardinality *out,
                                           knut_error *err)
{
    KNUT_ASSERT_ARG(err, text && out);
    int i = lookup(card_names, N_OF(card_names), text);
    if (i < 0)
        return knut_error_set(err, KNUT_EINVAL,
                              "unsupported cardinality '%.64s' (expected single, list or set)",
                              text);
    *out = (knut_graphar_cardinality)i;
    return KNUT_OK;
}

knut_status knut_graphar_adj_list_type_parse(const char *text, knut_graphar_adj_list_type *out,
                                             knut_error *err)
{
    KNUT_ASSERT_ARG(err, text && out);
    int i = lookup(adj_names, N_OF(adj_names), text);
    if (i < 0)
        return knut_error_set(err, KNUT_EINVAL,
                              "unknown adj list type '%.64s' (expected ordered_by_source, "
                              "ordered_by_dest, unordered_by_source or unordered_by_dest)",
                              text);
    *out = (knut_graphar_adj_list_type)i;
    return KNUT_OK;
}

knut_graphar_adj_list_type knut_graphar_adj_list_type_of(int ordered, int aligned_by_src)
{
    if (ordered)
        return aligned_by_src ? KNUT_GRAPHAR_ORDERED_BY_SOURCE : KNUT_GRAPHAR_ORDERED_BY_DEST;
    return aligned_by_src ? KNUT_GRAPHAR_UNORDERED_BY_SOURCE : KNUT_GRAPHAR_UNORDERED_BY_DEST;
}

int knut_graphar_adj_list_type_is_ordered(knut_graphar_adj_list_type t)
{
    return t == KNUT_GRAPHAR_ORDERED_BY_SOURCE || t == KNUT_GRAPHAR_ORDERED_BY_DEST;
}

int knut_graphar_adj_list_type_by_source(knut_graphar_adj_list_type t)
{
    return t == KNUT_GRAPHAR_ORDERED_BY_SOURCE || t == KNUT_GRAPHAR_UNORDERED_BY_SOURCE;
}

/* ---- version ----------------------------------------------------------- */

void knut_graphar_version_reset(knut_graphar_version *v)
{
    if (!v)
        return;
    knut_graphar__strv_free(v->user_types, v->n_user_types);
    memset(v, 0, sizeof *v);
}

static int is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/*
 * The reference matches the whole string against `gar/v(\d+).*` (std::regex,
 * where '.' does not match line breaks), and only major version 1 exists.
 * The optional user-type list is `gar/v<N> *(...)`, greedy to the last ')'.
 */
knut_status knut_graphar_version_parse(knut_graphar_version *v, const char *text,
                                       knut_error *err)
{
    KNUT_ASSERT_ARG(err, v && text);
    knut_graphar_version_reset(v);
    knut_status st = KNUT_OK;
    const char *p = text;
    if (strncmp(p, "gar/v", 5) != 0 || !(p[5] >= '0' && p[5] <= '9') ||
        strpbrk(text, "\r\n"))
        goto bad;
    p += 5;
    long major = 0;
    while (*p >= '0' && *p <= '9') {
        if (major < 1000000)
            major = major * 10 + (*p - '0');
        p++;
    }
    if (major != 1)
        goto bad;
    v->present = 1;
    v->major = 1;
    const char *q = p;
    while (*q == ' ')
        q++;
    const char *close = strrchr(q, ')');
    if (*q == '(' && close) {
        const char *item = q + 1;
        while (item <= close) {
            const char *end = memchr(item, ',', (size_t)(close - item));
            if (!end)
                end = close;
            const char *a = item, *b = end;
            while (a < b && is_ws(*a))
                a++;
            while (b > a && is_ws(b[-1]))
                b--;
            if (b > a) {
                if (v->n_user_types >= KNUT_GRAPHAR_MAX_ITEMS) {
                    st = knut_error_set(err, KNUT_ETOOBIG, "version string lists too many types");
                    goto fail;
                }
                char **slot = knut_graphar__push((void **)&v->user_types, &v->n_user_types,
                                                 sizeof *v->user_types);
                char *s = slot ? strndup(a, (size_t)(b - a)) : NULL;
                if (!s) {
                    st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
                    goto fail;
                }
                *slot = s;
                v->n_user_types++;
            }
            item = end + 1;
        }
    }
    return KNUT_OK;
bad:
    return knut_error_set(err, KNUT_EINVAL,
                          "invalid version string '%.64s' (expected gar/v1 or gar/v1 (types...))",
                          text);
fail:
    knut_graphar_version_reset(v);
    return st;
}

knut_status knut_graphar_version_format(const knut_graphar_version *v, knut_buf *out)
{
    if (!v || !out)
        return KNUT_EINVAL;
    knut_buf_printf(out, "gar/v%d", v->major > 0 ? v->major : 1);
    for (size_t i = 0; i < v->n_user_types; i++)
        knut_buf_printf(out, "%s%s", i == 0 ? " (" : ",", v->user_types[i]);
    if (v->n_user_types)
        knut_buf_putc(out, ')');
    return out->error;
}

const char *knut_graphar__sql_scalar(knut_graphar_type t)
{
    switch (t) {
    case KNUT_GRAPHAR_TYPE_BOOL: return "BOOLEAN";
    case KNUT_GRAPHAR_TYPE_INT32: return "INTEGER";
    case KNUT_GRAPHAR_TYPE_INT64: return "BIGINT";
    case KNUT_GRAPHAR_TYPE_FLOAT: return "FLOAT";
    case KNUT_GRAPHAR_TYPE_DOUBLE: return "DOUBLE";
    case KNUT_GRAPHAR_TYPE_STRING: return "VARCHAR";
    case KNUT_GRAPHAR_TYPE_DATE: return "DATE";
    case KNUT_GRAPHAR_TYPE_TIMESTAMP: return "TIMESTAMP_MS";
    case KNUT_GRAPHAR_TYPE_LIST: break;
    }
    return "VARCHAR";
}

int knut_graphar__prop_is_list(const knut_graphar_property *p)
{
    return p->type == KNUT_GRAPHAR_TYPE_LIST || p->cardinality != KNUT_GRAPHAR_CARD_SINGLE;
}

knut_graphar_type knut_graphar__prop_scalar(const knut_graphar_property *p)
{
    return p->type == KNUT_GRAPHAR_TYPE_LIST ? p->elem_type : p->type;
}
