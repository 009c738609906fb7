/*
 * The Flight SQL column metadata on the columns of a query's result
 * (ARROW:FLIGHT:SQL:TYPE_NAME and, for decimals, PRECISION and SCALE, and
 * IS_READ_ONLY): Power BI's connectors and the ODBC driver type a column
 * by these. The type name is DuckDB's name of the type the column came
 * from, read back from the Arrow type DuckDB exports it as (the mapping
 * is fixed), so it matches a type_name of GetXdbcTypeInfo. Catalog, schema
 * and table names are colorigin.c's. Metadata already on a column (an
 * extension type's) is kept.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve_int.h"

#define KEY "ARROW:FLIGHT:SQL:"

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

/* One column's metadata: ours replace any of the same keys. */
static knut_status column(struct ArrowSchema *col, knut_error *err)
{
    knut_arrow_type_info t;
    knut_error terr = KNUT_ERROR_INIT;
    if (knut_arrow_schema_parse_type(col, &t, &terr) != KNUT_OK)
        return KNUT_OK; /* a type we do not name: no metadata, not an error */
    const char *name = duck_name(&t);
    if (!name)
        return KNUT_OK;
    const char *keys[4] = {KEY "TYPE_NAME", KEY "IS_READ_ONLY", KEY "PRECISION", KEY "SCALE"};
    const char *vals[4] = {name, "1", NULL, NULL};
    char prec[16], scale[16];
    int32_t n = 2;
    if (t.type == KNUT_ARROW_DECIMAL128) {
        snprintf(prec, sizeof prec, "%d", (int)t.precision);
        snprintf(scale, sizeof scale, "%d", (int)t.scale);
        vals[2] = prec, vals[3] = scale, n = 4;
    }
    return knut_arrow_schema_put_metadata(col, keys, vals, n, err);
}

void knut_serve__column_metadata(struct ArrowSchema *s)
{
    if (knut_serve__schema_own(s) != 0)
        return; /* out of memory: the columns go without their metadata */
    for (int64_t i = 0; i < s->n_children; i++)
        if (column(s->children[i], NULL) != KNUT_OK)
            return;
}
