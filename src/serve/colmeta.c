/*
 * The Flight SQL column metadata on the columns of a query's result
 * (ARROW:FLIGHT:SQL:TYPE_NAME and, for decimals, PRECISION and SCALE, and
 * IS_READ_ONLY): Power BI's connectors and the ODBC driver type a column
 * by these. The type name is DuckDB's name of the type the column came
 * from, read back from the Arrow type DuckDB exports it as (the mapping
 * is fixed), so it matches a type_name of GetXdbcTypeInfo. Catalog, schema
 * and table names are not set: DuckDB's API does not tell a result
 * column's origin. Metadata already on a column (an extension type's) is
 * kept.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve_int.h"

#define KEY "ARROW:FLIGHT:SQL:"
#define MAX_PAIRS 16

static const char *duck_name(const knut_arrow_type_info *t)
{
    switch (t->type) {
    case KNUT_ARROW_NA: return "NULL";
    case KNUT_ARROW_BOOL: return "BOOLEAN";
    case KNUT_ARROW_INT8: return "TINYINT";
    case KNUT_ARROW_UINT8: return "UTINYINT";
    case KNUT_ARROW_INT16: return "SMALLINT";
    case KNUT_ARROW_UINT16: return "USMALLINT";
    case KNUT_ARROW_INT32: return "INTEGER";
    case KNUT_ARROW_UINT32: return "UINTEGER";
    case KNUT_ARROW_INT64: return "BIGINT";
    case KNUT_ARROW_UINT64: return "UBIGINT";
    case KNUT_ARROW_FLOAT: return "FLOAT";
    case KNUT_ARROW_DOUBLE: return "DOUBLE";
    case KNUT_ARROW_UTF8: case KNUT_ARROW_LARGE_UTF8: return "VARCHAR";
    case KNUT_ARROW_BINARY: case KNUT_ARROW_LARGE_BINARY: return "BLOB";
    case KNUT_ARROW_DECIMAL128: return "DECIMAL";
    case KNUT_ARROW_DATE32: case KNUT_ARROW_DATE64: return "DATE";
    case KNUT_ARROW_TIME32: case KNUT_ARROW_TIME64: return "TIME";
    case KNUT_ARROW_TIMESTAMP: return t->timezone[0] ? "TIMESTAMP WITH TIME ZONE" : "TIMESTAMP";
    case KNUT_ARROW_INTERVAL_MONTHS: case KNUT_ARROW_INTERVAL_DAY_TIME:
    case KNUT_ARROW_INTERVAL_MDN: return "INTERVAL";
    case KNUT_ARROW_LIST: case KNUT_ARROW_LARGE_LIST: return "LIST";
    case KNUT_ARROW_STRUCT: return "STRUCT";
    case KNUT_ARROW_MAP: return "MAP";
    default: return NULL;
    }
}

/* One column's metadata: its old pairs but ours, then ours. */
static knut_status column(struct ArrowSchema *col, knut_error *err)
{
    knut_arrow_type_info t;
    knut_error terr = KNUT_ERROR_INIT;
    if (knut_arrow_schema_parse_type(col, &t, &terr) != KNUT_OK)
        return KNUT_OK; /* a type we do not name: no metadata, not an error */
    const char *name = duck_name(&t);
    if (!name)
        return KNUT_OK;
    const char *keys[MAX_PAIRS], *vals[MAX_PAIRS];
    char *own[MAX_PAIRS * 2] = {0};
    char prec[16], scale[16];
    int32_t n = 0, n_own = 0;
    knut_status st = KNUT_OK;
    knut_arrow_metadata_reader r;
    const char *k, *v;
    int32_t kl, vl;
    knut_arrow_metadata_reader_init(&r, col->metadata);
    while (st == KNUT_OK && n < MAX_PAIRS - 4 && knut_arrow_metadata_next(&r, &k, &kl, &v, &vl)) {
        if (kl >= (int32_t)strlen(KEY) && memcmp(k, KEY, strlen(KEY)) == 0)
            continue;
        own[n_own] = strndup(k, (size_t)kl);
        own[n_own + 1] = strndup(v, (size_t)vl);
        if (!own[n_own] || !own[n_own + 1])
            st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
        keys[n] = own[n_own], vals[n] = own[n_own + 1];
        n_own += 2, n++;
    }
    keys[n] = KEY "TYPE_NAME", vals[n++] = name;
    keys[n] = KEY "IS_READ_ONLY", vals[n++] = "1";
    if (t.type == KNUT_ARROW_DECIMAL128) {
        snprintf(prec, sizeof prec, "%d", (int)t.precision);
        snprintf(scale, sizeof scale, "%d", (int)t.scale);
        keys[n] = KEY "PRECISION", vals[n++] = prec;
        keys[n] = KEY "SCALE", vals[n++] = scale;
    }
    char *blob = NULL;
    if (st == KNUT_OK)
        st = knut_arrow_metadata_build(&blob, keys, vals, n, err);
    if (st == KNUT_OK)
        st = knut_arrow_schema_set_metadata(col, blob, err);
    free(blob);
    for (int32_t i = 0; i < n_own; i++)
        free(own[i]);
    return st;
}

void knut_serve__column_metadata(struct ArrowSchema *s)
{
    if (knut_serve__schema_own(s) != 0)
        return; /* out of memory: the columns go without their metadata */
    for (int64_t i = 0; i < s->n_children; i++)
        if (column(s->children[i], NULL) != KNUT_OK)
            return;
}
