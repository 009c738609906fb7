/*
 * Builder lifecycle: creating builders (from a type or a whole schema),
 * adding children, and finishing into an ArrowArray whose release callback
 * frees the moved buffers and children. After finish the builder is empty
 * again, so one builder tree produces a sequence of batches.
 */
#include "arrow_int.h"

#include <stdlib.h>
#include <string.h>

#include "builder_int.h"

static knut_status oom(knut_error *err, const char *what)
{
    return knut_error_set(err, KNUT_ENOMEM, "out of memory allocating %s", what);
}

knut_status knut_arrow_builder_new(knut_arrow_builder **out, const knut_arrow_type_info *t,
                                   const char *name, knut_error *err)
{
    char fmt[KNUT_ARROW_TZ_MAX + 64];
    KNUT_ASSERT_ARG(err, out != NULL);
    *out = NULL;
    KNUT_ASSERT_ARG(err, t != NULL);
    if (t->type == KNUT_ARROW_DENSE_UNION)
        return knut_error_set(err, KNUT_EUNSUPPORTED, "unions are not built by the builder: "
                                                      "assemble them from built children");
    /* Printing the format checks the type is complete and consistent. */
    knut_status st = knut_arrow_format_print(t, fmt, sizeof(fmt), err);
    if (st != KNUT_OK)
        return st;
    knut_arrow_builder *b = calloc(1, sizeof(*b));
    if (b == NULL)
        return oom(err, "builder");
    b->type = *t;
    if (t->type != KNUT_ARROW_FIXED_BINARY) {
        /* byte_width drives the inline append; never trust a caller's copy. */
        knut_arrow_type_info def;
        knut_arrow_type_info_init(&def, t->type);
        b->type.byte_width = def.byte_width;
    }
    b->flags = ARROW_FLAG_NULLABLE;
    b->max_bytes = KNUT_ARROW_BUILDER_DEFAULT_MAX;
    size_t n = strlen(name != NULL ? name : "") + 1;
    b->name = malloc(n);
    if (b->name == NULL) {
        free(b);
        return oom(err, "builder name");
    }
    memcpy(b->name, name != NULL ? name : "", n);
    *out = b;
    return KNUT_OK;
}

knut_status knut_arrow_builder_new_simple(knut_arrow_builder **out, knut_arrow_type type,
                                          const char *name, knut_error *err)
{
    knut_arrow_type_info t;
    KNUT_ASSERT_ARG(err, out != NULL);
    *out = NULL;
    KNUT_ASSERT_ARG(err, (int)type >= 0 && type < KNUT_ARROW_TYPE_COUNT);
    if (type == KNUT_ARROW_FIXED_BINARY)
        return knut_error_set(err, KNUT_EINVAL, "fixed_size_binary needs a byte width");
    knut_arrow_type_info_init(&t, type);
    return knut_arrow_builder_new(out, &t, name, err);
}

static void bytes_free(knut_arrow_bytes *buf)
{
    free(buf->data);
    buf->data = NULL;
    buf->len = buf->cap = 0;
}

void knut_arrow_builder_free(knut_arrow_builder *b)
{
    if (b == NULL)
        return;
    for (int64_t i = 0; i < b->n_children; i++)
        knut_arrow_builder_free(b->children[i]);
    free(b->children);
    bytes_free(&b->validity);
    bytes_free(&b->values);
    bytes_free(&b->data);
    free(b->name);
    free(b);
}

knut_status knut_arrow_builder_add_child(knut_arrow_builder *b, knut_arrow_builder *child,
                                         knut_error *err)
{
    knut_status st = KNUT_OK;
    if (b == NULL || child == NULL) {
        st = knut_error_set(err, KNUT_EINVAL, "add_child: builder or child is NULL");
        goto cleanup;
    }
    knut_arrow_type t = b->type.type;
    int want = knut_arrow_type_n_children(t);
    if (want == 0 || (want > 0 && b->n_children >= want)) {
        st = knut_error_set(err, KNUT_EINVAL, "column '%s': a %s column cannot take child '%s'",
                            b->name, knut_arrow_type_name(t), child->name);
        goto cleanup;
    }
    if (t == KNUT_ARROW_MAP && child->type.type != KNUT_ARROW_STRUCT) {
        st = knut_error_set(err, KNUT_EINVAL, "column '%s': map entries must be a struct",
                            b->name);
        goto cleanup;
    }
    if (b->length > 0 || child->length > 0) {
        st = knut_error_set(err, KNUT_EINVAL, "column '%s': children are added before rows",
                            b->name);
        goto cleanup;
    }
    knut_arrow_builder **c = realloc(b->children, (size_t)(b->n_children + 1) * sizeof(*c));
    if (c == NULL) {
        st = oom(err, "builder children");
        goto cleanup;
    }
    b->children = c;
    c[b->n_children++] = child;
    child->max_bytes = b->max_bytes;
    child = NULL;
cleanup:
    knut_arrow_builder_free(child);
    return st;
}

void knut_arrow_builder_set_max_bytes(knut_arrow_builder *b, int64_t max_bytes)
{
    if (b == NULL)
        return;
    b->max_bytes = max_bytes > 0 ? max_bytes : KNUT_ARROW_BUILDER_DEFAULT_MAX;
    for (int64_t i = 0; i < b->n_children; i++)
        knut_arrow_builder_set_max_bytes(b->children[i], max_bytes);
}

void knut_arrow_builder_set_nullable(knut_arrow_builder *b, int nullable)
{
    if (b == NULL)
        return;
    if (nullable)
        b->flags |= ARROW_FLAG_NULLABLE;
    else
        b->flags &= ~(int64_t)ARROW_FLAG_NULLABLE;
}

#define BUILDER_MAX_DEPTH 64

static knut_status from_schema(knut_arrow_builder **out, const struct ArrowSchema *s, int depth,
                               knut_error *err)
{
    knut_arrow_type_info t;
    knut_arrow_builder *b = NULL;
    knut_status st;
    *out = NULL;
    if (depth > BUILDER_MAX_DEPTH)
        return knut_error_set(err, KNUT_ETOOBIG, "schema nested deeper than %d",
                              BUILDER_MAX_DEPTH);
    st = knut_arrow_schema_parse_type(s, &t, err);
    if (st != KNUT_OK)
        return st;
    if (s->dictionary != NULL)
        return knut_error_set(err, KNUT_EUNSUPPORTED,
                              "column '%s': no builder for dictionary-encoded columns",
                              s->name ? s->name : "");
    st = knut_arrow_builder_new(&b, &t, s->name, err);
    if (st != KNUT_OK)
        return st;
    b->flags = s->flags;
    for (int64_t i = 0; i < s->n_children; i++) {
        knut_arrow_builder *c;
        st = from_schema(&c, s->children[i], depth + 1, err);
        if (st == KNUT_OK)
            st = knut_arrow_builder_add_child(b, c, err);
        if (st != KNUT_OK)
            goto cleanup;
    }
    *out = b;
    b = NULL;
cleanup:
    knut_arrow_builder_free(b);
    return st;
}

knut_status knut_arrow_builder_new_from_schema(knut_arrow_builder **out,
                                               const struct ArrowSchema *schema,
                                               knut_error *err)
{
    KNUT_ASSERT_ARG(err, out != NULL);
    *out = NULL;
    KNUT_ASSERT_ARG(err, schema != NULL);
    return from_schema(out, schema, 0, err);
}

knut_status knut_arrow_builder_schema(const knut_arrow_builder *b, struct ArrowSchema *out,
                                      knut_error *err)
{
    KNUT_ASSERT_ARG(err, out != NULL);
    out->release = NULL;
    KNUT_ASSERT_ARG(err, b != NULL);
    knut_status st = knut_arrow_schema_init_type(out, &b->type, b->name, b->flags,
                                                 b->n_children, err);
    for (int64_t i = 0; i < b->n_children && st == KNUT_OK; i++) {
        struct ArrowSchema child;
        st = knut_arrow_builder_schema(b->children[i], &child, err);
        if (st == KNUT_OK)
            st = knut_arrow_schema_set_child(out, i, &child, err);
    }
    if (st != KNUT_OK)
        knut_arrow_schema_release(out);
    return st;
}

/* ---- finishing ---------------------------------------------------------- */

typedef struct array_priv {
    void *bufs[3];
    const void *buffer_ptrs[3];
    struct ArrowArray *child_store;
    struct ArrowArray **child_ptrs;
} array_priv;

static void array_release(struct ArrowArray *a)
{
    array_priv *p = a->private_data;
    if (p != NULL) {
        for (int64_t i = 0; i < a->n_children; i++)
            knut_arrow_array_release(&p->child_store[i]);
        for (int i = 0; i < 3; i++)
            free(p->bufs[i]);
        free(p->child_store);
        free(p->child_ptrs);
        free(p);
    }
    a->private_data = NULL;
    a->release = NULL;
}

void knut_arrow_builder_reset(knut_arrow_builder *b)
{
    if (b == NULL)
        return;
    for (int64_t i = 0; i < b->n_children; i++)
        knut_arrow_builder_reset(b->children[i]);
    bytes_free(&b->validity);
    bytes_free(&b->values);
    bytes_free(&b->data);
    b->length = b->null_count = 0;
}

/* Checks lists have no unclosed items and structs have even children. */
static knut_status check_complete(const knut_arrow_builder *b, knut_error *err)
{
    knut_arrow_type t = b->type.type;
    if (knut_arrow__is_list(t)) {
        if (b->n_children != 1)
            return knut_error_set(err, KNUT_EINVAL, "column '%s': list has no child builder",
                                  b->name);
        if (b->children[0]->length != knut_arrow__last_offset(b))
            return knut_error_set(err, KNUT_EINVAL,
                                  "column '%s': child has items not closed by finish_element",
                                  b->name);
    }
    for (int64_t i = 0; i < b->n_children; i++) {
        if (t == KNUT_ARROW_STRUCT && b->children[i]->length != b->length)
            return knut_error_set(err, KNUT_EINVAL,
                                  "column '%s': child '%s' has %lld rows, struct has %lld",
                                  b->name, b->children[i]->name,
                                  (long long)b->children[i]->length, (long long)b->length);
        knut_status st = check_complete(b->children[i], err);
        if (st != KNUT_OK)
            return st;
    }
    return KNUT_OK;
}

/* Zeroes the bytes after len up to the next 64-byte boundary, so copies of
 * padded buffers (IPC bodies) never carry stale heap bytes. */
static void zero_padding(knut_arrow_bytes *buf)
{
    int64_t end = (buf->len + 63) & ~(int64_t)63;
    if (end > buf->cap)
        end = buf->cap;
    if (buf->data != NULL && end > buf->len)
        memset(buf->data + buf->len, 0, (size_t)(end - buf->len));
}

static knut_status finish_rec(knut_arrow_builder *b, struct ArrowArray *out, knut_error *err)
{
    knut_status st = KNUT_OK;
    knut_arrow_type t = b->type.type;
    int n_buffers = knut_arrow_type_n_buffers(t);
    memset(out, 0, sizeof(*out));
    array_priv *p = calloc(1, sizeof(*p));
    if (p == NULL)
        return oom(err, "array");
    if (b->n_children > 0) {
        p->child_store = calloc((size_t)b->n_children, sizeof(*p->child_store));
        p->child_ptrs = calloc((size_t)b->n_children, sizeof(*p->child_ptrs));
        if (p->child_store == NULL || p->child_ptrs == NULL) {
            st = oom(err, "array children");
            goto cleanup;
        }
    }
    /* Consumers may dereference value buffers even at length 0, so they
     * always exist (offset buffers hold at least offset[0]). */
    st = knut_arrow__offsets_start(b, err);
    if (st == KNUT_OK && n_buffers >= 2 && b->values.data == NULL)
        st = knut_arrow__bytes_reserve(b, &b->values, 1, err);
    if (st == KNUT_OK && n_buffers >= 3 && b->data.data == NULL)
        st = knut_arrow__bytes_reserve(b, &b->data, 1, err);
    if (st != KNUT_OK)
        goto cleanup;
    zero_padding(&b->values);
    zero_padding(&b->data);
    for (int64_t i = 0; i < b->n_children; i++) {
        p->child_ptrs[i] = &p->child_store[i];
        st = finish_rec(b->children[i], &p->child_store[i], err);
        if (st != KNUT_OK)
            goto cleanup;
    }

    out->length = b->length;
    out->null_count = b->null_count;
    out->offset = 0;
    out->n_buffers = n_buffers;
    out->n_children = b->n_children;
    out->buffers = p->buffer_ptrs;
    out->children = p->child_ptrs;
    out->dictionary = NULL;
    out->private_data = p;
    out->release = array_release;
    if (n_buffers >= 1 && b->null_count > 0) {
        p->bufs[0] = b->validity.data;
        b->validity.data = NULL;
    }
    if (n_buffers >= 2) {
        p->bufs[1] = b->values.data;
        b->values.data = NULL;
    }
    if (n_buffers >= 3) {
        p->bufs[2] = b->data.data;
        b->data.data = NULL;
    }
    for (int i = 0; i < 3; i++)
        p->buffer_ptrs[i] = p->bufs[i];
    p = NULL;
    bytes_free(&b->validity);
    bytes_free(&b->values);
    bytes_free(&b->data);
    b->length = b->null_count = 0;

cleanup:
    if (p != NULL) {
        for (int64_t i = 0; i < b->n_children; i++) {
            if (p->child_store != NULL)
                knut_arrow_array_release(&p->child_store[i]);
        }
        free(p->child_store);
        free(p->child_ptrs);
        free(p);
    }
    return st;
}

knut_status knut_arrow_builder_finish(knut_arrow_builder *b, struct ArrowArray *out_array,
                                      struct ArrowSchema *out_schema, knut_error *err)
{
    KNUT_ASSERT_ARG(err, out_array != NULL);
    out_array->release = NULL;
    if (out_schema != NULL)
        out_schema->release = NULL;
    KNUT_ASSERT_ARG(err, b != NULL);
    knut_status st = check_complete(b, err);
    if (st != KNUT_OK)
        return st;
    if (out_schema != NULL) {
        st = knut_arrow_builder_schema(b, out_schema, err);
        if (st != KNUT_OK)
            return st;
    }
    st = finish_rec(b, out_array, err);
    if (st != KNUT_OK) {
        knut_arrow_builder_reset(b);
        knut_arrow_schema_release(out_schema);
    }
    return st;
}
