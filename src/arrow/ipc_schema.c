/*
 * Arrow schemas <-> IPC Schema tables. Each field's type goes through the
 * Type table of ipc_type.c; decoding takes bytes from anywhere, so it
 * checks child counts, limits nesting and the total number of fields, and
 * names the field (as a dotted path) in every error.
 */
#include "ipc_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- flattening -------------------------------------------------------- */

static knut_status flatten(knut_ipc_fields *f, const struct ArrowSchema *s, int depth,
                           size_t *cap, knut_error *err)
{
    const char *name = s->name ? s->name : "";
    if (depth > KNUT_FB_MAX_DEPTH)
        return knut_error_set(err, KNUT_EUNSUPPORTED, "column '%s': nested deeper than %d",
                              name, KNUT_FB_MAX_DEPTH);
    if (s->dictionary)
        return knut_error_set(err, KNUT_EUNSUPPORTED,
                              "column '%s': dictionary-encoded columns are not supported in "
                              "IPC",
                              name);
    if ((size_t)f->n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 16;
        knut_ipc_field *ni = realloc(f->items, ncap * sizeof *ni);
        if (!ni)
            return knut_error_set(err, KNUT_ENOMEM, "out of memory flattening the schema");
        f->items = ni;
        *cap = ncap;
    }
    knut_ipc_field *it = &f->items[f->n];
    knut_status st = knut_arrow_schema_parse_type(s, &it->type, err);
    if (st)
        return knut_error_prefix(err, "column '%s': ", name);
    it->schema = s;
    it->n_buffers = knut_arrow_type_n_buffers(it->type.type);
    f->n_buffers += it->n_buffers;
    f->n++;
    for (int64_t i = 0; i < s->n_children; i++) {
        st = flatten(f, s->children[i], depth + 1, cap, err);
        if (st)
            return st;
    }
    return KNUT_OK;
}

knut_status knut_arrow__ipc_fields_init(knut_ipc_fields *out, const struct ArrowSchema *schema,
                                        knut_error *err)
{
    memset(out, 0, sizeof *out);
    KNUT_ASSERT_ARG(err, schema && schema->release && schema->format);
    if (strcmp(schema->format, "+s") != 0)
        return knut_error_set(err, KNUT_EINVAL,
                              "IPC schema must be a struct (\"+s\") of columns, got \"%s\"",
                              schema->format);
    size_t cap = 0;
    knut_status st = KNUT_OK;
    for (int64_t i = 0; i < schema->n_children && !st; i++)
        st = flatten(out, schema->children[i], 1, &cap, err);
    if (st)
        knut_arrow__ipc_fields_reset(out);
    return st;
}

void knut_arrow__ipc_fields_reset(knut_ipc_fields *f)
{
    if (!f)
        return;
    free(f->items);
    memset(f, 0, sizeof *f);
}

/* ---- encoding ---------------------------------------------------------- */

static knut_fb_ref metadata_encode(knut_fb_builder *b, const char *metadata)
{
    if (!metadata)
        return 0;
    knut_arrow_metadata_reader r;
    knut_arrow_metadata_reader_init(&r, metadata);
    int32_t n = r.remaining > 0 ? r.remaining : 0;
    if (n == 0)
        return 0;
    knut_fb_ref *kv = malloc((size_t)n * sizeof *kv);
    if (!kv) {
        b->error = b->error ? b->error : KNUT_ENOMEM;
        return 0;
    }
    const char *k, *v;
    int32_t kl, vl, i = 0;
    while (i < n && knut_arrow_metadata_next(&r, &k, &kl, &v, &vl)) {
        knut_fb_ref ks = knut_arrow__fb_string_create(b, k, (size_t)kl);
        knut_fb_ref vs = knut_arrow__fb_string_create(b, v, (size_t)vl);
        knut_arrow__fb_table_start(b);
        knut_arrow__fb_table_add_ref(b, KNUT_IPC_KV_KEY, ks);
        knut_arrow__fb_table_add_ref(b, KNUT_IPC_KV_VALUE, vs);
        kv[i++] = knut_arrow__fb_table_end(b);
    }
    knut_fb_ref vec = knut_arrow__fb_vector_refs_create(b, kv, (size_t)i);
    free(kv);
    return vec;
}

static knut_status field_encode(knut_fb_builder *b, const struct ArrowSchema *s, int depth,
                                knut_fb_ref *out, knut_error *err)
{
    const char *name = s->name ? s->name : "";
    knut_arrow_type_info t;
    knut_fb_ref *kids = NULL;
    knut_status st = KNUT_OK;
    if (depth > KNUT_FB_MAX_DEPTH)
        return knut_error_set(err, KNUT_EUNSUPPORTED, "column '%s': nested deeper than %d",
                              name, KNUT_FB_MAX_DEPTH);
    if (s->dictionary)
        return knut_error_set(err, KNUT_EUNSUPPORTED,
                              "column '%s': dictionary-encoded columns are not supported in "
                              "IPC",
                              name);
    st = knut_arrow_schema_parse_type(s, &t, err);
    if (st)
        return knut_error_prefix(err, "column '%s': ", name);
    if (s->n_children > 0) {
        kids = malloc((size_t)s->n_children * sizeof *kids);
        if (!kids)
            return knut_error_set(err, KNUT_ENOMEM, "out of memory encoding the schema");
    }
    for (int64_t i = 0; i < s->n_children; i++) {
        st = field_encode(b, s->children[i], depth + 1, &kids[i], err);
        if (st)
            goto cleanup;
    }
    /* Arrow C++ rejects a Field without a children vector, even a leaf. */
    knut_fb_ref children = knut_arrow__fb_vector_refs_create(b, kids, (size_t)s->n_children);
    knut_fb_ref name_ref = knut_arrow__fb_string_create(b, name, strlen(name));
    knut_fb_ref meta = metadata_encode(b, s->metadata);
    uint8_t type_id = 0;
    knut_fb_ref type = knut_arrow__ipc_type_encode(b, &t, s->flags, &type_id);
    if (!type_id) {
        st = knut_error_set(err, KNUT_EUNSUPPORTED, "column '%s': type %s not supported in IPC",
                            name, knut_arrow_type_name(t.type));
        goto cleanup;
    }
    knut_arrow__fb_table_start(b);
    knut_arrow__fb_table_add_ref(b, KNUT_IPC_FIELD_NAME, name_ref);
    knut_arrow__fb_table_add_u8(b, KNUT_IPC_FIELD_NULLABLE,
                                (s->flags & ARROW_FLAG_NULLABLE) ? 1 : 0, 0);
    knut_arrow__fb_table_add_u8(b, KNUT_IPC_FIELD_TYPE_TYPE, type_id, 0);
    knut_arrow__fb_table_add_ref(b, KNUT_IPC_FIELD_TYPE, type);
    knut_arrow__fb_table_add_ref(b, KNUT_IPC_FIELD_CHILDREN, children);
    knut_arrow__fb_table_add_ref(b, KNUT_IPC_FIELD_METADATA, meta);
    *out = knut_arrow__fb_table_end(b);

cleanup:
    free(kids);
    return st;
}

knut_status knut_arrow__ipc_schema_encode(knut_fb_builder *b, const struct ArrowSchema *schema,
                                          knut_fb_ref *out, knut_error *err)
{
    knut_fb_ref *cols = NULL;
    knut_status st = KNUT_OK;
    int64_t n = schema->n_children;
    if (n > 0) {
        cols = malloc((size_t)n * sizeof *cols);
        if (!cols)
            return knut_error_set(err, KNUT_ENOMEM, "out of memory encoding the schema");
    }
    for (int64_t i = 0; i < n && !st; i++)
        st = field_encode(b, schema->children[i], 1, &cols[i], err);
    if (!st) {
        knut_fb_ref fields = knut_arrow__fb_vector_refs_create(b, cols, (size_t)n);
        knut_fb_ref meta = metadata_encode(b, schema->metadata);
        knut_arrow__fb_table_start(b);
        /* endianness Little is the default, so it is left out */
        knut_arrow__fb_table_add_ref(b, KNUT_IPC_SCHEMA_FIELDS, fields);
        knut_arrow__fb_table_add_ref(b, KNUT_IPC_SCHEMA_METADATA, meta);
        *out = knut_arrow__fb_table_end(b);
    }
    free(cols);
    return st;
}

/* ---- decoding ---------------------------------------------------------- */

typedef struct decode_ctx {
    int64_t max_fields;
    int64_t n_fields;
    char path[256]; /* dotted field path for messages */
    knut_error *err;
} decode_ctx;

static knut_status metadata_decode(const knut_fb_table *t, int id, char **out, decode_ctx *c)
{
    knut_fb_vector v;
    int present;
    knut_status st = knut_arrow__fb_read_vector(t, id, 4, &v, &present, c->err);
    char **keys = NULL, **vals = NULL;
    *out = NULL;
    if (st || !present || v.count == 0)
        return st;
    /* count is bounded by the metadata size (4 bytes per entry) */
    keys = calloc(v.count, sizeof *keys);
    vals = calloc(v.count, sizeof *vals);
    if (!keys || !vals) {
        st = knut_error_set(c->err, KNUT_ENOMEM, "out of memory reading metadata");
        goto cleanup;
    }
    for (uint32_t i = 0; i < v.count; i++) {
        knut_fb_table kv;
        const char *k = "", *val = "";
        size_t kl = 0, vl = 0;
        int kp, vp;
        st = knut_arrow__fb_vector_table(&v, i, &kv, c->err);
        if (!st)
            st = knut_arrow__fb_read_string(&kv, KNUT_IPC_KV_KEY, &k, &kl, &kp, c->err);
        if (!st)
            st = knut_arrow__fb_read_string(&kv, KNUT_IPC_KV_VALUE, &val, &vl, &vp, c->err);
        if (st)
            goto cleanup;
        keys[i] = strndup(kp ? k : "", kp ? kl : 0);
        vals[i] = strndup(vp ? val : "", vp ? vl : 0);
        if (!keys[i] || !vals[i]) {
            st = knut_error_set(c->err, KNUT_ENOMEM, "out of memory reading metadata");
            goto cleanup;
        }
    }
    st = knut_arrow_metadata_build(out, (const char *const *)keys, (const char *const *)vals,
                                   (int32_t)v.count, c->err);

cleanup:
    for (uint32_t i = 0; keys && vals && i < v.count; i++) {
        free(keys[i]);
        free(vals[i]);
    }
    free(keys);
    free(vals);
    return st;
}

static knut_status bad_field(decode_ctx *c, knut_status code, const char *what)
{
    return knut_error_set(c->err, code, "field '%s': %s", c->path, what);
}

static knut_status field_decode(const knut_fb_table *f, struct ArrowSchema *out, decode_ctx *c)
{
    const char *name = "";
    size_t name_len = 0, path_len = strlen(c->path);
    int present;
    char *name_z = NULL, *meta = NULL;
    knut_fb_table dict;
    knut_fb_vector kids = {0};
    knut_arrow_type_info t;
    int64_t flags = 0;
    uint8_t nullable = 0;
    knut_status st;

    if (++c->n_fields > c->max_fields)
        return knut_error_set(c->err, KNUT_ETOOBIG, "schema has more than %lld fields",
                              (long long)c->max_fields);
    st = knut_arrow__fb_read_string(f, KNUT_IPC_FIELD_NAME, &name, &name_len, &present, c->err);
    if (st)
        return st;
    name_z = strndup(present ? name : "", present ? name_len : 0);
    if (!name_z)
        return knut_error_set(c->err, KNUT_ENOMEM, "out of memory reading the schema");
    /* path for messages: parent.name, truncated if long */
    snprintf(c->path + path_len, sizeof c->path - path_len, "%s%s", path_len ? "." : "",
             name_z);

    st = knut_arrow__fb_read_u8(f, KNUT_IPC_FIELD_NULLABLE, 0, &nullable, c->err);
    if (!st)
        st = knut_arrow__fb_read_table(f, KNUT_IPC_FIELD_DICTIONARY, &dict, &present, c->err);
    if (st)
        goto cleanup;
    if (present) {
        st = bad_field(c, KNUT_EUNSUPPORTED, "dictionary-encoded fields are not supported");
        goto cleanup;
    }
    st = knut_arrow__ipc_type_decode(f, c->path, &t, &flags, c->err);
    if (!st)
        st = knut_arrow__fb_read_vector(f, KNUT_IPC_FIELD_CHILDREN, 4, &kids, &present, c->err);
    if (!st)
        st = metadata_decode(f, KNUT_IPC_FIELD_METADATA, &meta, c);
    if (st)
        goto cleanup;
    if (t.type == KNUT_ARROW_DENSE_UNION && t.n_type_ids == 0 && kids.count > 0 &&
        kids.count <= KNUT_ARROW_UNION_MAX) { /* no typeIds: the children in order */
        for (uint32_t i = 0; i < kids.count; i++)
            t.type_ids[i] = (int8_t)i;
        t.n_type_ids = (int32_t)kids.count;
    }
    if (t.type == KNUT_ARROW_DENSE_UNION && (uint32_t)t.n_type_ids != kids.count) {
        st = bad_field(c, KNUT_EPARSE, "a union needs one type id per child field");
        goto cleanup;
    }
    int need = knut_arrow_type_n_children(t.type);
    if ((need >= 0 && (int64_t)kids.count != need)) {
        char buf[96];
        snprintf(buf, sizeof buf, "type %s needs %d child field(s), has %u",
                 knut_arrow_type_name(t.type), need, kids.count);
        st = bad_field(c, KNUT_EPARSE, buf);
        goto cleanup;
    }
    if ((int64_t)kids.count > c->max_fields - c->n_fields) {
        st = knut_error_set(c->err, KNUT_ETOOBIG, "schema has more than %lld fields",
                            (long long)c->max_fields);
        goto cleanup;
    }
    if (nullable)
        flags |= ARROW_FLAG_NULLABLE;
    st = knut_arrow_schema_init_type(out, &t, name_z, flags, kids.count, c->err);
    if (!st && meta)
        st = knut_arrow_schema_set_metadata(out, meta, c->err);
    for (uint32_t i = 0; !st && i < kids.count; i++) {
        knut_fb_table kt;
        st = knut_arrow__fb_vector_table(&kids, i, &kt, c->err);
        if (!st)
            st = field_decode(&kt, out->children[i], c);
    }
    if (!st && t.type == KNUT_ARROW_MAP) {
        const struct ArrowSchema *e = out->children[0];
        if (strcmp(e->format, "+s") != 0 || e->n_children != 2)
            st = bad_field(c, KNUT_EPARSE, "map entries must be a struct of key and value");
    }

cleanup:
    if (st && out->release)
        out->release(out);
    c->path[path_len] = '\0';
    free(name_z);
    free(meta);
    return st;
}

knut_status knut_arrow__ipc_schema_decode(const knut_fb_table *schema, int64_t max_fields,
                                          struct ArrowSchema *out, knut_error *err)
{
    decode_ctx c = {.max_fields = max_fields, .err = err};
    knut_fb_vector fields = {0};
    int present;
    uint8_t big = 0;
    char *meta = NULL;
    knut_status st;

    out->release = NULL;
    st = knut_arrow__fb_read_u8(schema, KNUT_IPC_SCHEMA_ENDIANNESS, 0, &big, err);
    if (st)
        return st;
    if (big)
        return knut_error_set(err, KNUT_EUNSUPPORTED, "big-endian streams are not supported");
    st = knut_arrow__fb_read_vector(schema, KNUT_IPC_SCHEMA_FIELDS, 4, &fields, &present, err);
    if (!st && (int64_t)fields.count > max_fields)
        st = knut_error_set(err, KNUT_ETOOBIG, "schema has more than %lld fields",
                            (long long)max_fields);
    if (!st)
        st = metadata_decode(schema, KNUT_IPC_SCHEMA_METADATA, &meta, &c);
    if (!st)
        st = knut_arrow_schema_init(out, "+s", "", 0, fields.count, err);
    if (!st && meta)
        st = knut_arrow_schema_set_metadata(out, meta, err);
    for (uint32_t i = 0; !st && i < fields.count; i++) {
        knut_fb_table ft;
        st = knut_arrow__fb_vector_table(&fields, i, &ft, err);
        if (!st)
            st = field_decode(&ft, out->children[i], &c);
    }
    if (st && out->release)
        out->release(out);
    free(meta);
    return st;
}
