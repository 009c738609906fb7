/*
 * ArrowSchema ownership: NULL-safe release/move helpers for all three C
 * interface structs, malloc-owned schema nodes (init, set child, set
 * name/metadata, deep copy) and the encoded key/value metadata blob.
 * A node's private_data owns its strings and its children's storage, so one
 * release call frees the whole tree.
 */
#include "knut/arrow.h"

#include <stdlib.h>
#include <string.h>

void knut_arrow_schema_release(struct ArrowSchema *s)
{
    if (s != NULL && s->release != NULL)
        s->release(s);
}

void knut_arrow_array_release(struct ArrowArray *a)
{
    if (a != NULL && a->release != NULL)
        a->release(a);
}

void knut_arrow_stream_release(struct ArrowArrayStream *s)
{
    if (s != NULL && s->release != NULL)
        s->release(s);
}

void knut_arrow_schema_move(struct ArrowSchema *dst, struct ArrowSchema *src)
{
    *dst = *src;
    src->release = NULL;
}

void knut_arrow_array_move(struct ArrowArray *dst, struct ArrowArray *src)
{
    *dst = *src;
    src->release = NULL;
}

void knut_arrow_stream_move(struct ArrowArrayStream *dst, struct ArrowArrayStream *src)
{
    *dst = *src;
    src->release = NULL;
}

/* ---- malloc-owned schema nodes ----------------------------------------- */

typedef struct schema_priv {
    char *format;
    char *name;
    char *metadata;
    struct ArrowSchema *child_store; /* n_children structs; children[i] = &child_store[i] */
    struct ArrowSchema **child_ptrs;
    struct ArrowSchema *dictionary;  /* malloc'ed struct, or NULL */
} schema_priv;

static void schema_release(struct ArrowSchema *s)
{
    schema_priv *p = s->private_data;
    if (p != NULL) {
        for (int64_t i = 0; i < s->n_children; i++)
            knut_arrow_schema_release(&p->child_store[i]);
        if (p->dictionary != NULL) {
            knut_arrow_schema_release(p->dictionary);
            free(p->dictionary);
        }
        free(p->child_store);
        free(p->child_ptrs);
        free(p->format);
        free(p->name);
        free(p->metadata);
        free(p);
    }
    s->private_data = NULL;
    s->release = NULL;
}

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d != NULL)
        memcpy(d, s, n);
    return d;
}

static knut_status oom(knut_error *err, const char *what)
{
    return knut_error_set(err, KNUT_ENOMEM, "out of memory allocating %s", what);
}

knut_status knut_arrow_schema_init(struct ArrowSchema *out, const char *format,
                                   const char *name, int64_t flags, int64_t n_children,
                                   knut_error *err)
{
    KNUT_ASSERT_ARG(err, out != NULL);
    out->release = NULL;
    KNUT_ASSERT_ARG(err, format != NULL);
    KNUT_ASSERT_ARG(err, n_children >= 0 && n_children <= INT32_MAX);

    schema_priv *p = calloc(1, sizeof(*p));
    if (p == NULL)
        return oom(err, "schema");
    memset(out, 0, sizeof(*out));
    out->private_data = p;
    out->release = schema_release;
    out->flags = flags;
    p->format = dup_str(format);
    p->name = dup_str(name != NULL ? name : "");
    if (p->format == NULL || p->name == NULL)
        goto nomem;
    if (n_children > 0) {
        p->child_store = calloc((size_t)n_children, sizeof(*p->child_store));
        p->child_ptrs = calloc((size_t)n_children, sizeof(*p->child_ptrs));
        if (p->child_store == NULL || p->child_ptrs == NULL)
            goto nomem;
        for (int64_t i = 0; i < n_children; i++)
            p->child_ptrs[i] = &p->child_store[i];
    }
    out->format = p->format;
    out->name = p->name;
    out->n_children = n_children;
    out->children = p->child_ptrs;
    return KNUT_OK;

nomem:
    schema_release(out);
    return oom(err, "schema");
}

knut_status knut_arrow_schema_init_type(struct ArrowSchema *out, const knut_arrow_type_info *t,
                                        const char *name, int64_t flags, int64_t n_children,
                                        knut_error *err)
{
    char fmt[KNUT_ARROW_TZ_MAX + 64];
    KNUT_ASSERT_ARG(err, out != NULL);
    out->release = NULL;
    knut_status st = knut_arrow_format_print(t, fmt, sizeof(fmt), err);
    if (st != KNUT_OK)
        return st;
    return knut_arrow_schema_init(out, fmt, name, flags, n_children, err);
}

knut_status knut_arrow_schema_set_child(struct ArrowSchema *schema, int64_t i,
                                        struct ArrowSchema *child, knut_error *err)
{
    KNUT_ASSERT_ARG(err, schema != NULL && schema->release == schema_release);
    KNUT_ASSERT_ARG(err, child != NULL && child->release != NULL);
    if (i < 0 || i >= schema->n_children) {
        knut_arrow_schema_release(child);
        return knut_error_set(err, KNUT_EINVAL, "schema '%s': no child slot %lld",
                              schema->name, (long long)i);
    }
    schema_priv *p = schema->private_data;
    knut_arrow_schema_release(&p->child_store[i]);
    knut_arrow_schema_move(&p->child_store[i], child);
    return KNUT_OK;
}

knut_status knut_arrow_schema_set_metadata(struct ArrowSchema *schema, const char *metadata,
                                           knut_error *err)
{
    KNUT_ASSERT_ARG(err, schema != NULL && schema->release == schema_release);
    schema_priv *p = schema->private_data;
    char *copy = NULL;
    if (metadata != NULL) {
        size_t n = knut_arrow_metadata_size(metadata);
        copy = malloc(n);
        if (copy == NULL)
            return oom(err, "schema metadata");
        memcpy(copy, metadata, n);
    }
    free(p->metadata);
    p->metadata = copy;
    schema->metadata = copy;
    return KNUT_OK;
}

static int key_among(const char *k, int32_t kl, const char *const *keys, int32_t n)
{
    for (int32_t i = 0; i < n; i++)
        if (strlen(keys[i]) == (size_t)kl && memcmp(keys[i], k, (size_t)kl) == 0)
            return 1;
    return 0;
}

static char *put_i32(char *p, int32_t v)
{
    memcpy(p, &v, sizeof v);
    return p + sizeof v;
}

knut_status knut_arrow_schema_put_metadata(struct ArrowSchema *schema, const char *const *keys,
                                           const char *const *values, int32_t n,
                                           knut_error *err)
{
    KNUT_ASSERT_ARG(err, schema != NULL && schema->release == schema_release);
    KNUT_ASSERT_ARG(err, n >= 0 && (n == 0 || (keys != NULL && values != NULL)));
    knut_arrow_metadata_reader r;
    const char *k, *v;
    int32_t kl, vl;
    size_t total = sizeof(int32_t), count = (size_t)n;
    /* the blob is written directly: old pairs are copied as they are
     * (not NUL-terminated), so two passes over the same reader */
    knut_arrow_metadata_reader_init(&r, schema->metadata);
    while (knut_arrow_metadata_next(&r, &k, &kl, &v, &vl))
        if (!key_among(k, kl, keys, n))
            total += 2 * sizeof(int32_t) + (size_t)kl + (size_t)vl, count++;
    for (int32_t i = 0; i < n; i++) {
        size_t l = strlen(keys[i]) + strlen(values[i]);
        if (l > (size_t)INT32_MAX)
            return knut_error_set(err, KNUT_ETOOBIG, "metadata pair %d too large", (int)i);
        total += 2 * sizeof(int32_t) + l;
    }
    if (total > (size_t)INT32_MAX || count > (size_t)INT32_MAX)
        return knut_error_set(err, KNUT_ETOOBIG, "metadata too large (%zu bytes)", total);
    char *blob = malloc(total), *p = blob;
    if (blob == NULL)
        return oom(err, "schema metadata");
    p = put_i32(p, (int32_t)count);
    knut_arrow_metadata_reader_init(&r, schema->metadata);
    while (knut_arrow_metadata_next(&r, &k, &kl, &v, &vl)) {
        if (key_among(k, kl, keys, n))
            continue;
        p = put_i32(p, kl);
        memcpy(p, k, (size_t)kl), p += kl;
        p = put_i32(p, vl);
        memcpy(p, v, (size_t)vl), p += vl;
    }
    for (int32_t i = 0; i < n; i++) {
        const char *pair[2] = {keys[i], values[i]};
        for (int j = 0; j < 2; j++) {
            size_t l = strlen(pair[j]);
            p = put_i32(p, (int32_t)l);
            memcpy(p, pair[j], l), p += l;
        }
    }
    schema_priv *sp = schema->private_data;
    free(sp->metadata);
    sp->metadata = blob;
    schema->metadata = blob;
    return KNUT_OK;
}

knut_status knut_arrow_schema_set_name(struct ArrowSchema *schema, const char *name,
                                       knut_error *err)
{
    KNUT_ASSERT_ARG(err, schema != NULL && schema->release == schema_release);
    schema_priv *p = schema->private_data;
    char *copy = dup_str(name != NULL ? name : "");
    if (copy == NULL)
        return oom(err, "schema name");
    free(p->name);
    p->name = copy;
    schema->name = copy;
    return KNUT_OK;
}

/* Depth guard: foreign schemas are not trusted to be shallow. */
#define SCHEMA_MAX_DEPTH 64

static knut_status deep_copy(struct ArrowSchema *out, const struct ArrowSchema *src, int depth,
                             knut_error *err)
{
    knut_status st;
    out->release = NULL;
    if (depth > SCHEMA_MAX_DEPTH)
        return knut_error_set(err, KNUT_ETOOBIG, "schema nested deeper than %d",
                              SCHEMA_MAX_DEPTH);
    if (src->release == NULL || src->format == NULL)
        return knut_error_set(err, KNUT_EINVAL, "schema copy: source is released or has no format");
    if (src->n_children < 0 || (src->n_children > 0 && src->children == NULL))
        return knut_error_set(err, KNUT_EINVAL, "schema copy: bad children of '%.64s'",
                              src->name ? src->name : "");
    st = knut_arrow_schema_init(out, src->format, src->name, src->flags, src->n_children, err);
    if (st != KNUT_OK)
        return st;
    st = knut_arrow_schema_set_metadata(out, src->metadata, err);
    if (st != KNUT_OK)
        goto cleanup;
    schema_priv *p = out->private_data;
    for (int64_t i = 0; i < src->n_children; i++) {
        if (src->children[i] == NULL) {
            st = knut_error_set(err, KNUT_EINVAL, "schema copy: child %lld is NULL",
                                (long long)i);
            goto cleanup;
        }
        st = deep_copy(&p->child_store[i], src->children[i], depth + 1, err);
        if (st != KNUT_OK)
            goto cleanup;
    }
    if (src->dictionary != NULL) {
        p->dictionary = calloc(1, sizeof(*p->dictionary));
        if (p->dictionary == NULL) {
            st = oom(err, "schema dictionary");
            goto cleanup;
        }
        out->dictionary = p->dictionary;
        st = deep_copy(p->dictionary, src->dictionary, depth + 1, err);
        if (st != KNUT_OK)
            goto cleanup;
    }
cleanup:
    if (st != KNUT_OK)
        knut_arrow_schema_release(out);
    return st;
}

knut_status knut_arrow_schema_deep_copy(struct ArrowSchema *out, const struct ArrowSchema *src,
                                        knut_error *err)
{
    KNUT_ASSERT_ARG(err, out != NULL);
    out->release = NULL;
    KNUT_ASSERT_ARG(err, src != NULL);
    return deep_copy(out, src, 0, err);
}

/* ---- metadata blobs ---------------------------------------------------- */
/* Layout (native endian, unaligned): int32 n, then n x (int32 len, bytes)
 * for key then value. */

static int32_t read_i32(const char *p)
{
    int32_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

size_t knut_arrow_metadata_size(const char *metadata)
{
    if (metadata == NULL)
        return 0;
    knut_arrow_metadata_reader r;
    const char *k, *v;
    int32_t kl, vl;
    knut_arrow_metadata_reader_init(&r, metadata);
    while (knut_arrow_metadata_next(&r, &k, &kl, &v, &vl)) {
    }
    return (size_t)(r.pos - metadata);
}

void knut_arrow_metadata_reader_init(knut_arrow_metadata_reader *r, const char *metadata)
{
    if (metadata == NULL) {
        r->pos = NULL;
        r->remaining = 0;
        return;
    }
    r->remaining = read_i32(metadata);
    if (r->remaining < 0)
        r->remaining = 0;
    r->pos = metadata + sizeof(int32_t);
}

int knut_arrow_metadata_next(knut_arrow_metadata_reader *r, const char **key, int32_t *key_len,
                             const char **value, int32_t *value_len)
{
    if (r->remaining <= 0)
        return 0;
    int32_t kl = read_i32(r->pos);
    if (kl < 0) {
        r->remaining = 0;
        return 0;
    }
    const char *k = r->pos + sizeof(int32_t);
    int32_t vl = read_i32(k + kl);
    if (vl < 0) {
        r->remaining = 0;
        return 0;
    }
    const char *v = k + kl + sizeof(int32_t);
    *key = k;
    *key_len = kl;
    *value = v;
    *value_len = vl;
    r->pos = v + vl;
    r->remaining--;
    return 1;
}

int knut_arrow_metadata_get(const char *metadata, const char *key, const char **value,
                            int32_t *value_len)
{
    knut_arrow_metadata_reader r;
    const char *k, *v;
    int32_t kl, vl;
    size_t want = strlen(key);
    knut_arrow_metadata_reader_init(&r, metadata);
    while (knut_arrow_metadata_next(&r, &k, &kl, &v, &vl)) {
        if ((size_t)kl == want && memcmp(k, key, want) == 0) {
            *value = v;
            *value_len = vl;
            return 1;
        }
    }
    return 0;
}

knut_status knut_arrow_metadata_build(char **out, const char *const *keys,
                                      const char *const *values, int32_t n, knut_error *err)
{
    KNUT_ASSERT_ARG(err, out != NULL);
    *out = NULL;
    KNUT_ASSERT_ARG(err, n >= 0);
    KNUT_ASSERT_ARG(err, n == 0 || (keys != NULL && values != NULL));
    size_t total = sizeof(int32_t);
    for (int32_t i = 0; i < n; i++) {
        size_t kl = strlen(keys[i]), vl = strlen(values[i]);
        if (kl > INT32_MAX || vl > INT32_MAX || total > (size_t)INT32_MAX)
            return knut_error_set(err, KNUT_ETOOBIG, "metadata pair %d too large", (int)i);
        total += 2 * sizeof(int32_t) + kl + vl;
    }
    if (total > (size_t)INT32_MAX)
        return knut_error_set(err, KNUT_ETOOBIG, "metadata too large (%zu bytes)", total);
    char *buf = malloc(total), *p = buf;
    if (buf == NULL)
        return oom(err, "metadata");
    memcpy(p, &n, sizeof(n));
    p += sizeof(n);
    for (int32_t i = 0; i < n; i++) {
        const char *s[2] = {keys[i], values[i]};
        for (int j = 0; j < 2; j++) {
            int32_t l = (int32_t)strlen(s[j]);
            memcpy(p, &l, sizeof(l));
            p += sizeof(l);
            memcpy(p, s[j], (size_t)l);
            p += l;
        }
    }
    *out = buf;
    return KNUT_OK;
}
