/*
 * ArrowArrayStream helpers: a stream over arrays already in memory (the
 * usual way a part hands a result to another), collecting a stream into
 * arrays with a cap on their number, counting rows, and turning the
 * errno-style stream results into knut statuses.
 */
#include "knut/arrow.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct list_stream {
    struct ArrowSchema schema;
    struct ArrowArray *arrays;
    int64_t n;
    int64_t next;
    knut_error error;
} list_stream;

static int list_get_schema(struct ArrowArrayStream *s, struct ArrowSchema *out)
{
    list_stream *p = s->private_data;
    knut_status st = knut_arrow_schema_deep_copy(out, &p->schema, &p->error);
    if (st == KNUT_OK)
        return 0;
    return st == KNUT_ENOMEM ? ENOMEM : EINVAL;
}

static int list_get_next(struct ArrowArrayStream *s, struct ArrowArray *out)
{
    list_stream *p = s->private_data;
    if (p->next >= p->n) {
        memset(out, 0, sizeof(*out));
        out->release = NULL; /* end of stream */
        return 0;
    }
    knut_arrow_array_move(out, &p->arrays[p->next++]);
    return 0;
}

static const char *list_last_error(struct ArrowArrayStream *s)
{
    list_stream *p = s->private_data;
    return p->error.message[0] != '\0' ? p->error.message : NULL;
}

static void list_release(struct ArrowArrayStream *s)
{
    list_stream *p = s->private_data;
    if (p != NULL) {
        for (int64_t i = p->next; i < p->n; i++)
            knut_arrow_array_release(&p->arrays[i]);
        free(p->arrays);
        knut_arrow_schema_release(&p->schema);
        free(p);
    }
    s->private_data = NULL;
    s->release = NULL;
}

knut_status knut_arrow_stream_from_arrays(struct ArrowArrayStream *out,
                                          struct ArrowSchema *schema,
                                          struct ArrowArray *arrays, int64_t n,
                                          knut_error *err)
{
    knut_status st = KNUT_OK;
    list_stream *p = NULL;
    if (out != NULL)
        out->release = NULL;
    if (out == NULL || schema == NULL || schema->release == NULL || n < 0 ||
        (n > 0 && arrays == NULL)) {
        st = knut_error_set(err, KNUT_EINVAL, "stream_from_arrays: invalid argument");
        goto cleanup;
    }
    p = calloc(1, sizeof(*p));
    if (p == NULL || (n > 0 && (p->arrays = calloc((size_t)n, sizeof(*p->arrays))) == NULL)) {
        st = knut_error_set(err, KNUT_ENOMEM, "out of memory allocating a stream of %lld arrays",
                            (long long)n);
        goto cleanup;
    }
    knut_arrow_schema_move(&p->schema, schema);
    for (int64_t i = 0; i < n; i++)
        knut_arrow_array_move(&p->arrays[i], &arrays[i]);
    p->n = n;
    out->get_schema = list_get_schema;
    out->get_next = list_get_next;
    out->get_last_error = list_last_error;
    out->release = list_release;
    out->private_data = p;
    return KNUT_OK;

cleanup:
    /* Ownership was taken: release what we were given. */
    if (p != NULL)
        free(p->arrays);
    free(p);
    knut_arrow_schema_release(schema);
    for (int64_t i = 0; arrays != NULL && i < n; i++)
        knut_arrow_array_release(&arrays[i]);
    return st;
}

knut_status knut_arrow_stream_error(struct ArrowArrayStream *stream, int code, const char *what,
                                    knut_error *err)
{
    knut_status st;
    switch (code) {
    case 0:
        return KNUT_OK;
    case ENOMEM: st = KNUT_ENOMEM; break;
    case EINVAL: st = KNUT_EINVAL; break;
    case EIO: st = KNUT_EIO; break;
    case ENOSYS:
    case ENOTSUP: st = KNUT_EUNSUPPORTED; break;
    case EOVERFLOW:
    case E2BIG: st = KNUT_ETOOBIG; break;
    case ECANCELED: st = KNUT_ECANCELLED; break;
    case EAGAIN: st = KNUT_EAGAIN; break;
    default: st = KNUT_ERROR; break;
    }
    const char *msg = NULL;
    if (stream != NULL && stream->release != NULL && stream->get_last_error != NULL)
        msg = stream->get_last_error(stream);
    return knut_error_set(err, st, "%s: %s", what != NULL ? what : "stream",
                          msg != NULL ? msg : strerror(code));
}

void knut_arrow_arrays_free(struct ArrowArray *arrays, int64_t n)
{
    if (arrays == NULL)
        return;
    for (int64_t i = 0; i < n; i++)
        knut_arrow_array_release(&arrays[i]);
    free(arrays);
}

knut_status knut_arrow_stream_collect(struct ArrowArrayStream *stream,
                                      struct ArrowSchema *out_schema,
                                      struct ArrowArray **out_arrays, int64_t *out_n,
                                      int64_t max_arrays, knut_error *err)
{
    KNUT_ASSERT_ARG(err, out_schema != NULL && out_arrays != NULL && out_n != NULL);
    out_schema->release = NULL;
    *out_arrays = NULL;
    *out_n = 0;
    KNUT_ASSERT_ARG(err, stream != NULL && stream->release != NULL);
    if (max_arrays <= 0)
        max_arrays = KNUT_ARROW_COLLECT_DEFAULT_MAX;

    struct ArrowArray *arrays = NULL, batch;
    int64_t n = 0, cap = 0;
    knut_status st = KNUT_OK;
    int rc = stream->get_schema(stream, out_schema);
    if (rc != 0) {
        out_schema->release = NULL;
        return knut_arrow_stream_error(stream, rc, "stream get_schema", err);
    }
    for (;;) {
        batch.release = NULL;
        rc = stream->get_next(stream, &batch);
        if (rc != 0) {
            st = knut_arrow_stream_error(stream, rc, "stream get_next", err);
            goto cleanup;
        }
        if (batch.release == NULL)
            break;
        if (n >= max_arrays) {
            knut_arrow_array_release(&batch);
            st = knut_error_set(err, KNUT_ETOOBIG, "stream has more than %lld batches",
                                (long long)max_arrays);
            goto cleanup;
        }
        if (n == cap) {
            int64_t ncap = cap ? cap * 2 : 8;
            struct ArrowArray *g = realloc(arrays, (size_t)ncap * sizeof(*g));
            if (g == NULL) {
                knut_arrow_array_release(&batch);
                st = knut_error_set(err, KNUT_ENOMEM, "out of memory collecting %lld batches",
                                    (long long)ncap);
                goto cleanup;
            }
            arrays = g;
            cap = ncap;
        }
        knut_arrow_array_move(&arrays[n++], &batch);
    }
    *out_arrays = arrays;
    *out_n = n;
    arrays = NULL;
cleanup:
    if (st != KNUT_OK) {
        knut_arrow_arrays_free(arrays, n);
        knut_arrow_schema_release(out_schema);
    }
    return st;
}

knut_status knut_arrow_stream_count_rows(struct ArrowArrayStream *stream, int64_t *out,
                                         knut_error *err)
{
    KNUT_ASSERT_ARG(err, out != NULL);
    *out = 0;
    KNUT_ASSERT_ARG(err, stream != NULL && stream->release != NULL);
    struct ArrowSchema schema;
    struct ArrowArray batch;
    int64_t rows = 0;
    schema.release = NULL;
    int rc = stream->get_schema(stream, &schema);
    if (rc != 0)
        return knut_arrow_stream_error(stream, rc, "stream get_schema", err);
    knut_arrow_schema_release(&schema);
    for (;;) {
        batch.release = NULL;
        rc = stream->get_next(stream, &batch);
        if (rc != 0)
            return knut_arrow_stream_error(stream, rc, "stream get_next", err);
        if (batch.release == NULL)
            break;
        rows += batch.length;
        knut_arrow_array_release(&batch);
    }
    *out = rows;
    return KNUT_OK;
}

knut_status knut_arrow_stream_each(struct ArrowArrayStream *stream, knut_arrow_view_fn fn,
                                   void *ctx, knut_error *err)
{
    KNUT_ASSERT_ARG(err, stream && stream->release && fn);
    struct ArrowSchema schema = {0};
    struct ArrowArray batch = {0};
    knut_arrow_view view;
    memset(&view, 0, sizeof view);
    knut_status st = KNUT_OK;
    int rc = stream->get_schema(stream, &schema);
    if (rc != 0)
        return knut_arrow_stream_error(stream, rc, "reading a result", err);
    for (;;) {
        if ((rc = stream->get_next(stream, &batch)) != 0) {
            st = knut_arrow_stream_error(stream, rc, "reading a result", err);
            break;
        }
        if (!batch.release)
            break;
        st = knut_arrow_view_init(&view, &schema, &batch, err);
        if (st == KNUT_OK)
            st = fn(ctx, &view, err);
        knut_arrow_view_reset(&view);
        memset(&view, 0, sizeof view);
        knut_arrow_array_release(&batch);
        if (st != KNUT_OK)
            break;
    }
    knut_arrow_schema_release(&schema);
    return st;
}

typedef struct texts_ctx {
    size_t max;
    char ***out;
    size_t *n;
} texts_ctx;

static knut_status texts_batch(void *ctx, const knut_arrow_view *v, knut_error *err)
{
    texts_ctx *c = ctx;
    if (v->n_children == 0)
        return KNUT_OK;
    const knut_arrow_view *col = &v->children[0];
    if (col->type.type != KNUT_ARROW_UTF8 && col->type.type != KNUT_ARROW_LARGE_UTF8)
        return knut_error_set(err, KNUT_EINVAL, "the first column of the result is not text");
    for (int64_t i = 0; i < v->length; i++) {
        int64_t row = knut_arrow_view_child_row(v, i), len = 0;
        const char *p = knut_arrow_view_is_null(col, row) ? NULL
                                                          : knut_arrow_view_get_str(col, row, &len);
        if (*c->n >= c->max)
            return knut_error_set(err, KNUT_ETOOBIG, "more than %zu rows", c->max);
        char **grown = realloc(*c->out, (*c->n + 1) * sizeof **c->out);
        if (!grown)
            return knut_error_set(err, KNUT_ENOMEM, "out of memory");
        *c->out = grown;
        if (!(grown[*c->n] = p ? strndup(p, (size_t)len) : strdup("")))
            return knut_error_set(err, KNUT_ENOMEM, "out of memory");
        ++*c->n;
    }
    return KNUT_OK;
}

knut_status knut_arrow_stream_texts(struct ArrowArrayStream *stream, size_t max, char ***out,
                                    size_t *n, knut_error *err)
{
    KNUT_ASSERT_ARG(err, out && n);
    texts_ctx c = {max, out, n};
    return knut_arrow_stream_each(stream, texts_batch, &c, err);
}
