/*
 * Which Arrow column types can become FalkorDB keys and stored properties,
 * and which query-text conversion each needs. FalkorDB stores scalars
 * (bool, int64, double, string, temporal) and arrays of them, never maps or
 * nulls inside arrays, so sets are judged once against their schema rather
 * than failing a whole batch on the server.
 */
#include <string.h>

#include "cypher_int.h"

int knut_graph__scalar_ok(knut_arrow_type type)
{
    switch (type) {
    case KNUT_ARROW_BOOL:
    case KNUT_ARROW_INT8:
    case KNUT_ARROW_UINT8:
    case KNUT_ARROW_INT16:
    case KNUT_ARROW_UINT16:
    case KNUT_ARROW_INT32:
    case KNUT_ARROW_UINT32:
    case KNUT_ARROW_INT64:
    case KNUT_ARROW_UINT64:
    case KNUT_ARROW_HALF_FLOAT:
    case KNUT_ARROW_FLOAT:
    case KNUT_ARROW_DOUBLE:
    case KNUT_ARROW_UTF8:
    case KNUT_ARROW_LARGE_UTF8:
    case KNUT_ARROW_DATE32:
    case KNUT_ARROW_DATE64:
    case KNUT_ARROW_TIME32:
    case KNUT_ARROW_TIME64:
    case KNUT_ARROW_TIMESTAMP:
        return 1;
    default:
        return 0;
    }
}

knut_graph_conv knut_graph__scalar_conv(knut_arrow_type type)
{
    switch (type) {
    case KNUT_ARROW_DATE32:
    case KNUT_ARROW_DATE64:
        return KNUT_GRAPH_CONV_DATE;
    case KNUT_ARROW_TIMESTAMP:
        return KNUT_GRAPH_CONV_LOCALDATETIME;
    case KNUT_ARROW_TIME32:
    case KNUT_ARROW_TIME64:
        return KNUT_GRAPH_CONV_LOCALTIME;
    default:
        return KNUT_GRAPH_CONV_NONE;
    }
}

knut_status knut_graph__value_type(const struct ArrowSchema *schema, knut_arrow_type_info *out,
                                   knut_error *err)
{
    knut_status st = knut_arrow_schema_parse_type(schema, out, err);
    if (st == KNUT_OK && schema->dictionary != NULL)
        st = knut_arrow_schema_parse_type(schema->dictionary, out, err);
    return st;
}

/* Lists of lists are storable down to scalars; temporal elements only one
 * level deep, because the conversion is a single list comprehension. */
static knut_status list_elem_ok(const struct ArrowSchema *elem, int depth, knut_graph_conv *conv,
                                knut_error *err)
{
    knut_arrow_type_info t;
    knut_status st = knut_graph__value_type(elem, &t, err);
    if (st != KNUT_OK)
        return st;
    if (t.type == KNUT_ARROW_NA)
        return KNUT_OK; /* every element would be null: refused per row */
    if (knut_graph__scalar_ok(t.type)) {
        knut_graph_conv c = knut_graph__scalar_conv(t.type);
        if (c != KNUT_GRAPH_CONV_NONE && depth > 1)
            return knut_error_set(err, KNUT_EUNSUPPORTED,
                                  "nested lists of %s values are not supported (only one "
                                  "list level can be converted in the query)",
                                  knut_arrow_type_name(t.type));
        if (c == KNUT_GRAPH_CONV_DATE)
            *conv = KNUT_GRAPH_CONV_LIST_DATE;
        else if (c == KNUT_GRAPH_CONV_LOCALDATETIME)
            *conv = KNUT_GRAPH_CONV_LIST_LOCALDATETIME;
        else if (c == KNUT_GRAPH_CONV_LOCALTIME)
            *conv = KNUT_GRAPH_CONV_LIST_LOCALTIME;
        return KNUT_OK;
    }
    if ((t.type == KNUT_ARROW_LIST || t.type == KNUT_ARROW_LARGE_LIST) && elem->dictionary == NULL)
        return list_elem_ok(elem->children[0], depth + 1, conv, err);
    return knut_error_set(err, KNUT_EUNSUPPORTED,
                          "lists of %s cannot be stored: FalkorDB stores lists of scalars only",
                          knut_arrow_type_name(t.type));
}

knut_status knut_graph__prop_type(const struct ArrowSchema *schema, knut_graph_conv *conv,
                                  knut_error *err)
{
    knut_arrow_type_info t;
    knut_status st = knut_graph__value_type(schema, &t, err);
    *conv = KNUT_GRAPH_CONV_NONE;
    if (st != KNUT_OK)
        return st;
    if (t.type == KNUT_ARROW_NA)
        return KNUT_OK; /* all null: every row removes the property */
    if (knut_graph__scalar_ok(t.type)) {
        *conv = knut_graph__scalar_conv(t.type);
        return KNUT_OK;
    }
    if ((t.type == KNUT_ARROW_LIST || t.type == KNUT_ARROW_LARGE_LIST) &&
        schema->dictionary == NULL)
        return list_elem_ok(schema->children[0], 1, conv, err);
    if (t.type == KNUT_ARROW_STRUCT || t.type == KNUT_ARROW_MAP)
        return knut_error_set(err, KNUT_EUNSUPPORTED,
                              "%s values cannot be stored: FalkorDB properties cannot be maps",
                              knut_arrow_type_name(t.type));
    return knut_error_set(err, KNUT_EUNSUPPORTED,
                          "%s values cannot be stored in FalkorDB; cast the column first",
                          knut_arrow_type_name(t.type));
}
