/*
 * Read views over arrays from any producer (our builders, pyarrow, DuckDB,
 * the IPC reader). Init resolves the type once and caches the buffer
 * pointers so the inline accessors in arrow.h are a switch and a load.
 * Structure is checked by the MINIMAL validator first, so a view never
 * indexes a buffer the array does not declare.
 */
#include "arrow_int.h"

#include <stdlib.h>
#include <string.h>

/* Stands in for NULL data buffers (all values empty) so get_bytes never
 * does arithmetic on a NULL pointer. */
static const uint8_t empty_bytes[8];

static knut_status view_fill(knut_arrow_view *v, const struct ArrowSchema *schema,
                             const struct ArrowArray *array, knut_error *err)
{
    knut_status st;
    memset(v, 0, sizeof(*v));
    v->schema = schema;
    v->array = array;
    st = knut_arrow_schema_parse_type(schema, &v->type, err);
    if (st != KNUT_OK)
        return st;
    v->length = array->length;
    v->offset = array->offset;
    v->null_count = array->null_count;
    int nb = knut_arrow_type_n_buffers(v->type.type);
    /* null_count == 0 promises no nulls: skip the bitmap on every access. */
    if (nb >= 1 && array->null_count != 0)
        v->validity = array->buffers[0];
    if (nb >= 2)
        v->values = array->buffers[1];
    if (nb >= 3)
        v->data = array->buffers[2] != NULL ? array->buffers[2] : empty_bytes;
    if (v->values == NULL && nb >= 2)
        v->values = empty_bytes; /* only possible at length 0 (validated) */

    if (array->n_children > 0) {
        v->children = calloc((size_t)array->n_children, sizeof(*v->children));
        if (v->children == NULL)
            return knut_error_set(err, KNUT_ENOMEM, "out of memory allocating child views");
        v->n_children = array->n_children;
        for (int64_t i = 0; i < array->n_children; i++) {
            st = view_fill(&v->children[i], schema->children[i], array->children[i], err);
            if (st != KNUT_OK)
                return st;
        }
    }
    if (schema->dictionary != NULL) {
        v->dictionary = calloc(1, sizeof(*v->dictionary));
        if (v->dictionary == NULL)
            return knut_error_set(err, KNUT_ENOMEM, "out of memory allocating dictionary view");
        st = view_fill(v->dictionary, schema->dictionary, array->dictionary, err);
        if (st != KNUT_OK)
            return st;
    }
    return KNUT_OK;
}

knut_status knut_arrow_view_init(knut_arrow_view *v, const struct ArrowSchema *schema,
                                 const struct ArrowArray *array, knut_error *err)
{
    KNUT_ASSERT_ARG(err, v != NULL);
    memset(v, 0, sizeof(*v));
    knut_status st = knut_arrow_array_validate(schema, array, KNUT_ARROW_VALIDATE_MINIMAL, err);
    if (st == KNUT_OK)
        st = view_fill(v, schema, array, err);
    if (st != KNUT_OK)
        knut_arrow_view_reset(v);
    return st;
}

void knut_arrow_view_reset(knut_arrow_view *v)
{
    if (v == NULL)
        return;
    for (int64_t i = 0; i < v->n_children; i++)
        knut_arrow_view_reset(&v->children[i]);
    free(v->children);
    if (v->dictionary != NULL) {
        knut_arrow_view_reset(v->dictionary);
        free(v->dictionary);
    }
    memset(v, 0, sizeof(*v));
}

int64_t knut_arrow_view_count_nulls(const knut_arrow_view *v)
{
    if (v->type.type == KNUT_ARROW_NA)
        return v->length;
    if (v->validity == NULL)
        return 0;
    int64_t valid = 0, i = v->offset, end = v->offset + v->length;
    for (; i < end && (i & 7); i++)
        valid += knut_arrow_bit_get(v->validity, i);
    for (; i + 8 <= end; i += 8)
        valid += __builtin_popcount(v->validity[i >> 3]);
    for (; i < end; i++)
        valid += knut_arrow_bit_get(v->validity, i);
    return v->length - valid;
}
