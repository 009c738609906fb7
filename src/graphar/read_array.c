/*
 * Output types and batches of the chunk readers. DuckDB exports VARCHAR as
 * utf8 (int32 offsets) while the reference reads GraphAr strings as
 * large_utf8, and timestamps arrive as int64 milliseconds from epoch_ms().
 * Rather than copying values, an output batch borrows DuckDB's buffers:
 * only utf8 offsets are widened to int64 (and large list offsets narrowed,
 * should a connection export those), and the vertex index column is
 * generated. Every output array holds a reference on DuckDB's batch, so
 * consumers may move children out and release them in any order, as the C
 * Data Interface allows.
 */
#include "read_int.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* ---- output types ------------------------------------------------------ */

static void scalar_type(knut_graphar_type t, knut_arrow_type_info *out)
{
    switch (t) {
    case KNUT_GRAPHAR_TYPE_BOOL: knut_arrow_type_info_init(out, KNUT_ARROW_BOOL); break;
    case KNUT_GRAPHAR_TYPE_INT32: knut_arrow_type_info_init(out, KNUT_ARROW_INT32); break;
    case KNUT_GRAPHAR_TYPE_FLOAT: knut_arrow_type_info_init(out, KNUT_ARROW_FLOAT); break;
    case KNUT_GRAPHAR_TYPE_DOUBLE: knut_arrow_type_info_init(out, KNUT_ARROW_DOUBLE); break;
    case KNUT_GRAPHAR_TYPE_STRING: knut_arrow_type_info_init(out, KNUT_ARROW_LARGE_UTF8); break;
    case KNUT_GRAPHAR_TYPE_DATE: knut_arrow_type_info_init(out, KNUT_ARROW_DATE32); break;
    case KNUT_GRAPHAR_TYPE_TIMESTAMP:
        knut_arrow_type_info_init(out, KNUT_ARROW_TIMESTAMP);
        out->unit = KNUT_ARROW_MILLI; /* the reference's timestamp(MILLI) */
        break;
    default: knut_arrow_type_info_init(out, KNUT_ARROW_INT64); break;
    }
}

knut_status knut_graphar__col_otype(const knut_graphar__col *c, knut_graphar__otype *out,
                                    knut_error *err)
{
    memset(out, 0, sizeof *out);
    switch (c->kind) {
    case KNUT_GRAPHAR__COL_VINDEX:
    case KNUT_GRAPHAR__COL_ID:
        knut_arrow_type_info_init(&out->type, KNUT_ARROW_INT64);
        return KNUT_OK;
    case KNUT_GRAPHAR__COL_LABEL:
        knut_arrow_type_info_init(&out->type, KNUT_ARROW_BOOL);
        return KNUT_OK;
    case KNUT_GRAPHAR__COL_PROP:
        break;
    }
    const knut_graphar_property *p = c->prop;
    int card_list = p->cardinality != KNUT_GRAPHAR_CARD_SINGLE;
    if (p->type == KNUT_GRAPHAR_TYPE_LIST && card_list)
        return knut_error_set(err, KNUT_EUNSUPPORTED,
                              "property '%s': %s with cardinality %s would be a list of "
                              "lists, which GraphAr does not define",
                              p->name, p->type_text ? p->type_text : "list",
                              knut_graphar_cardinality_name(p->cardinality));
    if (p->type == KNUT_GRAPHAR_TYPE_LIST || card_list) {
        out->is_list = 1;
        knut_arrow_type_info_init(&out->type, KNUT_ARROW_LIST);
        scalar_type(p->type == KNUT_GRAPHAR_TYPE_LIST ? p->elem_type : p->type, &out->elem);
    } else {
        scalar_type(p->type, &out->type);
    }
    return KNUT_OK;
}

static knut_status col_schema(struct ArrowSchema *out, const knut_graphar__col *c,
                              knut_error *err)
{
    knut_graphar__otype ot;
    knut_status st = knut_graphar__col_otype(c, &ot, err);
    if (st != KNUT_OK)
        return st;
    /* Reserved columns are checked for nulls, so they can say "not null". */
    int64_t flags = (c->kind == KNUT_GRAPHAR__COL_PROP || c->kind == KNUT_GRAPHAR__COL_LABEL)
                        ? ARROW_FLAG_NULLABLE
                        : 0;
    st = knut_arrow_schema_init_type(out, &ot.type, c->name, flags, ot.is_list ? 1 : 0, err);
    if (st == KNUT_OK && ot.is_list) {
        struct ArrowSchema item = {0};
        st = knut_arrow_schema_init_type(&item, &ot.elem, "item", ARROW_FLAG_NULLABLE, 0, err);
        if (st == KNUT_OK)
            st = knut_arrow_schema_set_child(out, 0, &item, err);
        if (st != KNUT_OK)
            knut_arrow_schema_release(out);
    }
    return st;
}

knut_status knut_graphar__plan_schema(const knut_graphar__plan *p, struct ArrowSchema *out,
                                      knut_error *err)
{
    knut_status st = knut_arrow_schema_init(out, "+s", NULL, 0, (int64_t)p->n_cols, err);
    for (size_t i = 0; st == KNUT_OK && i < p->n_cols; i++) {
        struct ArrowSchema child = {0};
        st = col_schema(&child, &p->cols[i], err);
        if (st == KNUT_OK)
            st = knut_arrow_schema_set_child(out, (int64_t)i, &child, err);
    }
    if (st != KNUT_OK)
        knut_arrow_schema_release(out);
    return st;
}

/* ---- conversions ------------------------------------------------------- */

static int is_string(knut_arrow_type t)
{
    return t == KNUT_ARROW_UTF8 || t == KNUT_ARROW_LARGE_UTF8;
}

/* Values of in can be read as out without copying them. */
static int scalar_ok(const knut_arrow_type_info *in, const knut_arrow_type_info *out)
{
    if (out->type == KNUT_ARROW_LARGE_UTF8)
        return is_string(in->type);
    if (out->type == KNUT_ARROW_TIMESTAMP)
        /* int64 ms from epoch_ms(), or a DuckDB TIMESTAMP_MS list item */
        return in->type == KNUT_ARROW_INT64 ||
               (in->type == KNUT_ARROW_TIMESTAMP && in->unit == KNUT_ARROW_MILLI);
    return in->type == out->type;
}

knut_status knut_graphar__conv_check(const knut_graphar__conv *cv, const char *column,
                                     knut_error *err)
{
    int ok;
    if (cv->out.is_list)
        ok = (cv->in.type == KNUT_ARROW_LIST || cv->in.type == KNUT_ARROW_LARGE_LIST) &&
             scalar_ok(&cv->in_elem, &cv->out.elem);
    else
        ok = scalar_ok(&cv->in, &cv->out.type);
    if (!ok)
        return knut_error_set(err, KNUT_EUNSUPPORTED,
                              "column '%s': DuckDB produced Arrow %s%s%s, which cannot be "
                              "read as %s (check the connection's arrow_* settings)",
                              column, knut_arrow_type_name(cv->in.type),
                              cv->out.is_list ? " of " : "",
                              cv->out.is_list ? knut_arrow_type_name(cv->in_elem.type) : "",
                              knut_arrow_type_name(cv->out.type.type));
    return KNUT_OK;
}

/* ---- borrowed arrays --------------------------------------------------- */

/* DuckDB's batch, alive while any output array points into it. */
typedef struct shared_batch {
    atomic_long refs;
    struct ArrowArray duck;
} shared_batch;

/* One output array: its own buffer pointers and children, maybe one
 * buffer it allocated, and a reference on the DuckDB batch. */
typedef struct node {
    shared_batch *batch;
    void *owned;
    const void *buffers[3];
    struct ArrowArray **children;
    int64_t n_children;
} node;

static void batch_unref(shared_batch *b)
{
    if (b && atomic_fetch_sub(&b->refs, 1) == 1) {
        knut_arrow_array_release(&b->duck);
        free(b);
    }
}

static void node_release(struct ArrowArray *a)
{
    if (!a || !a->release)
        return;
    node *n = a->private_data;
    for (int64_t i = 0; i < n->n_children; i++) {
        /* A child the consumer moved out is released by them. */
        knut_arrow_array_release(n->children[i]);
        free(n->children[i]);
    }
    free(n->children);
    free(n->owned);
    batch_unref(n->batch);
    free(n);
    a->release = NULL;
}

/* Starts *out as a node with n_children empty child slots. */
static knut_status node_init(struct ArrowArray *out, shared_batch *b, int64_t n_children,
                             knut_error *err)
{
    memset(out, 0, sizeof *out);
    node *n = calloc(1, sizeof *n);
    if (!n)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory building a batch");
    if (n_children > 0) {
        n->children = calloc((size_t)n_children, sizeof *n->children);
        for (int64_t i = 0; n->children && i < n_children; i++)
            if (!(n->children[i] = calloc(1, sizeof(struct ArrowArray)))) {
                for (int64_t k = 0; k < i; k++)
                    free(n->children[k]);
                free(n->children);
                n->children = NULL;
            }
        if (!n->children) {
            free(n);
            return knut_error_set(err, KNUT_ENOMEM, "out of memory building a batch");
        }
    }
    n->n_children = n_children;
    if (b) {
        atomic_fetch_add(&b->refs, 1);
        n->batch = b;
    }
    out->buffers = n->buffers;
    out->children = n->children;
    out->n_children = n_children;
    out->private_data = n;
    out->release = node_release;
    return KNUT_OK;
}

/* Copies the int32 or int64 offsets of in (entries 0 .. offset+length) to a
 * new buffer of width out_w (4 or 8) owned by the node. */
static knut_status convert_offsets(node *n, const struct ArrowArray *in, int in_w, int out_w,
                                   const char *column, knut_error *err)
{
    int64_t count = in->offset + in->length + 1;
    const void *src = in->buffers[1];
    void *dst = malloc((size_t)count * (size_t)out_w);
    if (!dst)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory converting offsets");
    for (int64_t i = 0; i < count; i++) {
        int64_t v = src == NULL ? 0
                    : in_w == 4 ? ((const int32_t *)src)[i]
                                : ((const int64_t *)src)[i];
        if (out_w == 8) {
            ((int64_t *)dst)[i] = v;
        } else if (v > INT32_MAX) {
            free(dst);
            return knut_error_set(err, KNUT_ETOOBIG,
                                  "column '%s': list offsets exceed the int32 range", column);
        } else {
            ((int32_t *)dst)[i] = (int32_t)v;
        }
    }
    n->owned = dst;
    n->buffers[1] = dst;
    return KNUT_OK;
}

/* Output array over DuckDB array in (of type t) as output type want. */
static knut_status convert(struct ArrowArray *out, shared_batch *b, const struct ArrowArray *in,
                           const knut_arrow_type_info *t, const knut_arrow_type_info *t_elem,
                           const knut_arrow_type_info *want, const knut_arrow_type_info *want_elem,
                           const char *column, knut_error *err)
{
    int is_list = want->type == KNUT_ARROW_LIST;
    if (in->dictionary != NULL || (is_list && in->n_children != 1) || in->n_buffers < 1)
        return knut_error_set(err, KNUT_EUNSUPPORTED,
                              "column '%s': unexpected Arrow layout from DuckDB", column);
    knut_status st = node_init(out, b, is_list ? 1 : 0, err);
    if (st != KNUT_OK)
        return st;
    node *n = out->private_data;
    out->length = in->length;
    out->null_count = in->null_count;
    out->offset = in->offset;
    out->n_buffers = in->n_buffers;
    for (int64_t i = 0; i < in->n_buffers && i < 3; i++)
        n->buffers[i] = in->buffers[i];
    if (want->type == KNUT_ARROW_LARGE_UTF8 && t->type == KNUT_ARROW_UTF8)
        st = convert_offsets(n, in, 4, 8, column, err);
    else if (is_list && t->type == KNUT_ARROW_LARGE_LIST)
        st = convert_offsets(n, in, 8, 4, column, err);
    if (st == KNUT_OK && is_list)
        st = convert(n->children[0], b, in->children[0], t_elem, NULL, want_elem, NULL, column,
                     err);
    if (st != KNUT_OK)
        node_release(out);
    return st;
}

/* The vertex index column: first_id + row, for rows rows. */
static knut_status index_column(struct ArrowArray *out, int64_t first_id, int64_t rows,
                                knut_error *err)
{
    knut_status st = node_init(out, NULL, 0, err);
    if (st != KNUT_OK)
        return st;
    node *n = out->private_data;
    int64_t *v = malloc((size_t)(rows > 0 ? rows : 1) * sizeof *v);
    if (!v) {
        node_release(out);
        return knut_error_set(err, KNUT_ENOMEM, "out of memory building the vertex index");
    }
    for (int64_t i = 0; i < rows; i++)
        v[i] = first_id + i;
    n->owned = v;
    n->buffers[0] = NULL;
    n->buffers[1] = v;
    out->n_buffers = 2;
    out->length = rows;
    return KNUT_OK;
}

knut_status knut_graphar__batch_build(struct ArrowArray *out, struct ArrowArray *duck,
                                      const knut_graphar__conv *conv, const int *map,
                                      size_t n_out, int64_t first_id, int64_t rows,
                                      knut_error *err)
{
    out->release = NULL;
    shared_batch *b = malloc(sizeof *b);
    if (!b) {
        knut_arrow_array_release(duck);
        return knut_error_set(err, KNUT_ENOMEM, "out of memory building a batch");
    }
    atomic_init(&b->refs, 1); /* this function's own reference */
    knut_arrow_array_move(&b->duck, duck);
    knut_status st = node_init(out, NULL, (int64_t)n_out, err);
    if (st == KNUT_OK) {
        node *n = out->private_data;
        out->length = rows;
        out->n_buffers = 1; /* struct: validity only, none = no nulls */
        for (size_t i = 0; st == KNUT_OK && i < n_out; i++) {
            struct ArrowArray *child = n->children[i];
            if (map[i] < 0) {
                st = index_column(child, first_id, rows, err);
                continue;
            }
            const knut_graphar__conv *cv = &conv[i];
            if (map[i] >= b->duck.n_children) {
                st = knut_error_set(err, KNUT_EINVAL, "column '%s': missing from DuckDB's batch",
                                    cv->name);
                break;
            }
            st = convert(child, b, b->duck.children[map[i]], &cv->in, &cv->in_elem,
                         &cv->out.type, &cv->out.elem, cv->name, err);
            if (st == KNUT_OK && rows < child->length) {
                /* A limit cut the batch: the null count is no longer known. */
                child->length = rows;
                if (child->null_count != 0)
                    child->null_count = -1;
            }
        }
        if (st != KNUT_OK)
            node_release(out);
    }
    batch_unref(b);
    return st;
}
