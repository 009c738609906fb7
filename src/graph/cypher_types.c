/*
 * Which Arrow column types can become FalkorDB keys and stored properties,
 * and which query-text conversion each needs. FalkorDB stores scalars
 * (bool, int64, double, string, temporal) and arrays of them, never maps or
 * nulls inside arrays, so sets are judged once against their schema rather
 * than failing a whole batch on the server.
 */
#include <string.h>

#include "cypher_int.h"

int knut_graph__decimal_is_int(const knut_arrow_type_info *t)
{
    return t->type == KNUT_ARROW_DECIMAL128 && t->scale == 0 && t->precision >= 1 &&
           t->precision <= 18;
}

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
    if (t.type == KNUT_ARROW_DECIMAL128) {
        /* Lossless or refused: a whole number of at most 18 digits is an
         * int64 exactly; anything else would round in a double. */
        if (knut_graph__decimal_is_int(&t))
            return KNUT_OK;
        return knut_error_set(err, KNUT_EUNSUPPORTED,
                              "decimal(%d,%d) values cannot be stored in FalkorDB without loss "
                              "(it keeps DECIMAL only with scale 0 and precision <= 18, as an "
                              "integer); cast the column in the sql step (to DOUBLE if "
                              "rounding is acceptable, or VARCHAR)",
                              (int)t.precision, (int)t.scale);
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

knut_status knut_graph__falkor_set_check(const knut_graph_set *set, knut_error *err)
{
    char col[KNUT_GRAPH__MSG_NAME_MAX];
    static const char *const kind[] = {"vertex set", "edge set", "delete set",
                                       "edge delete set"};
    for (size_t i = 0; i < set->n_props; i++) {
        const knut_graph_column *c = &set->props[i];
        knut_graph_conv conv;
        knut_status st = knut_graph__prop_type(set->schema.children[c->index], &conv, err);
        if (st != KNUT_OK)
            return knut_error_prefix(err, "%s '%s': property column '%s': ", kind[set->kind],
                                     set->name,
                                     knut_graph__msg_name(col, sizeof col, c->column,
                                                          strlen(c->column)));
    }
    return KNUT_OK;
}

knut_status knut_graph_column_type_check(const struct ArrowSchema *schema, int is_key,
                                         int falkordb, knut_error *err)
{
    knut_arrow_type_info t;
    knut_graph_conv conv;
    KNUT_ASSERT_ARG(err, schema != NULL);
    knut_status st = knut_graph__value_type(schema, &t, err);
    if (st != KNUT_OK)
        return st;
    if (is_key && !knut_graph__scalar_ok(t.type))
        return knut_error_set(err, KNUT_EUNSUPPORTED,
                              "a key of type %s: keys must be bool, integer, float, string, "
                              "date, time or timestamp",
                              knut_arrow_type_name(t.type));
    return is_key || !falkordb ? KNUT_OK : knut_graph__prop_type(schema, &conv, err);
}
