/*
 * GraphAr per-vertex labels (gar/v1 multi-label: one boolean column per
 * label in V/labels/chunk<c>) for the whole-graph loader. A vertex set has
 * one label list for all its rows, so after a vertex type is loaded each of
 * its labels gets one more set: the merge keys of the vertices whose label
 * column is true, with labels [type, label] and no properties. MERGE finds
 * the vertex just loaded and adds the label (FalkorDB: SET n:`label`; the
 * embedded store: a membership row), so a load stays idempotent and a
 * vertex without the label is never touched. The filter streams one reader
 * batch at a time, so memory stays bounded whatever the type's size.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load_int.h"

/* The reader's vertex index column (renamed _gar_id everywhere else). */
#define GAR_INDEX_COLUMN "_graphArVertexIndex"

typedef struct lfilter {
    struct ArrowArrayStream inner;
    struct ArrowSchema inner_schema;
    knut_arrow_builder *b; /* struct{key} */
    int64_t key_idx, label_idx;
    char error[KNUT_ERROR_MSG_MAX];
} lfilter;

static int lf_fail(lfilter *p, const knut_error *e)
{
    snprintf(p->error, sizeof p->error, "%s", e->message);
    return 5; /* EIO: the message is in get_last_error */
}

static int lf_get_schema(struct ArrowArrayStream *s, struct ArrowSchema *out)
{
    lfilter *p = s->private_data;
    knut_error e = KNUT_ERROR_INIT;
    return knut_arrow_builder_schema(p->b, out, &e) == KNUT_OK ? 0 : lf_fail(p, &e);
}

/* Appends key row `row` of v to the builder's only child. */
static knut_status append_key(knut_arrow_builder *b, const knut_arrow_view *v, int64_t row,
                              knut_error *err)
{
    if (knut_arrow_view_is_null(v, row))
        return knut_arrow_builder_append_null(b, err);
    switch (v->type.type) {
    case KNUT_ARROW_BOOL:
        return knut_arrow_builder_append_bool(b, knut_arrow_view_get_bool(v, row), err);
    case KNUT_ARROW_UINT64:
        return knut_arrow_builder_append_uint(b, knut_arrow_view_get_uint64(v, row), err);
    case KNUT_ARROW_FLOAT:
    case KNUT_ARROW_DOUBLE:
        return knut_arrow_builder_append_double(b, knut_arrow_view_get_double(v, row), err);
    case KNUT_ARROW_UTF8:
    case KNUT_ARROW_LARGE_UTF8:
    case KNUT_ARROW_BINARY:
    case KNUT_ARROW_LARGE_BINARY: {
        int64_t len = 0;
        const char *s = knut_arrow_view_get_bytes(v, row, &len);
        return knut_arrow_builder_append_bytes(b, s, (size_t)len, err);
    }
    case KNUT_ARROW_INT8:
    case KNUT_ARROW_UINT8:
    case KNUT_ARROW_INT16:
    case KNUT_ARROW_UINT16:
    case KNUT_ARROW_INT32:
    case KNUT_ARROW_UINT32:
    case KNUT_ARROW_INT64:
    case KNUT_ARROW_DATE32:
    case KNUT_ARROW_DATE64:
    case KNUT_ARROW_TIMESTAMP:
    case KNUT_ARROW_TIME32:
    case KNUT_ARROW_TIME64:
        return knut_arrow_builder_append_int(b, knut_arrow_view_get_int64(v, row), err);
    default:
        return knut_error_set(err, KNUT_EUNSUPPORTED, "key type %d cannot carry labels",
                              (int)v->type.type);
    }
}

static int lf_get_next(struct ArrowArrayStream *s, struct ArrowArray *out)
{
    lfilter *p = s->private_data;
    knut_error e = KNUT_ERROR_INIT;
    memset(out, 0, sizeof *out);
    for (;;) {
        struct ArrowArray batch = {0};
        knut_arrow_view v;
        int rc = p->inner.get_next(&p->inner, &batch);
        if (rc != 0) {
            const char *m = p->inner.get_last_error ? p->inner.get_last_error(&p->inner) : NULL;
            snprintf(p->error, sizeof p->error, "%s", m ? m : "reading vertices failed");
            return rc;
        }
        if (!batch.release)
            return 0; /* end of stream: out stays released */
        knut_status st = knut_arrow_view_init(&v, &p->inner_schema, &batch, &e);
        if (st != KNUT_OK) {
            knut_arrow_array_release(&batch);
            return lf_fail(p, &e);
        }
        const knut_arrow_view *key = &v.children[p->key_idx];
        const knut_arrow_view *flag = &v.children[p->label_idx];
        knut_arrow_builder *child = knut_arrow_builder_child(p->b, 0);
        for (int64_t i = 0; i < v.length && st == KNUT_OK; i++) {
            int64_t row = knut_arrow_view_child_row(&v, i);
            if (knut_arrow_view_is_null(flag, row) || !knut_arrow_view_get_bool(flag, row))
                continue;
            st = append_key(child, key, row, &e);
            if (st == KNUT_OK)
                st = knut_arrow_builder_finish_element(p->b, &e);
        }
        knut_arrow_view_reset(&v);
        knut_arrow_array_release(&batch);
        if (st == KNUT_OK && p->b->length > 0)
            st = knut_arrow_builder_finish(p->b, out, NULL, &e);
        if (st != KNUT_OK) {
            knut_arrow_builder_reset(p->b);
            return lf_fail(p, &e);
        }
        if (out->release)
            return 0;
    }
}

static const char *lf_get_last_error(struct ArrowArrayStream *s)
{
    lfilter *p = s->private_data;
    return p->error[0] ? p->error : NULL;
}

static void lf_release(struct ArrowArrayStream *s)
{
    lfilter *p = s->private_data;
    if (p) {
        knut_arrow_stream_release(&p->inner);
        if (p->inner_schema.release)
            p->inner_schema.release(&p->inner_schema);
        knut_arrow_builder_free(p->b);
        free(p);
    }
    s->release = NULL;
}

static int64_t child_index(const struct ArrowSchema *s, const char *name, int from_end)
{
    for (int64_t k = 0; k < s->n_children; k++) {
        int64_t i = from_end ? s->n_children - 1 - k : k;
        if (s->children[i]->name && strcmp(s->children[i]->name, name) == 0)
            return i;
    }
    return -1;
}

/* The key builder: struct{<out_name>: the key column's type}. */
static knut_status make_builder(lfilter *p, const char *out_name, knut_error *err)
{
    struct ArrowSchema key = {0};
    knut_arrow_builder *child = NULL;
    knut_status st = knut_arrow_builder_new_simple(&p->b, KNUT_ARROW_STRUCT, NULL, err);
    if (st == KNUT_OK)
        st = knut_arrow_schema_deep_copy(&key, p->inner_schema.children[p->key_idx], err);
    if (st == KNUT_OK)
        st = knut_arrow_schema_set_name(&key, out_name, err);
    if (st == KNUT_OK)
        st = knut_arrow_builder_new_from_schema(&child, &key, err);
    if (st == KNUT_OK)
        st = knut_arrow_builder_add_child(p->b, child, err);
    if (key.release)
        key.release(&key);
    return st;
}

/* The keys (column `key_out`) of the vertices of it that carry `label`. */
static knut_status label_stream(load_ctx *c, const load_item *it, const char *label,
                                const char *key_out, struct ArrowArrayStream *out,
                                knut_error *err)
{
    memset(out, 0, sizeof *out);
    lfilter *p = calloc(1, sizeof *p);
    if (!p)
        return knut_error_set(err, KNUT_ENOMEM, "load: out of memory");
    knut_status st = knut_graphar_reader_vertices(c->reader, it->vi, &p->inner, err);
    if (st == KNUT_OK && p->inner.get_schema(&p->inner, &p->inner_schema) != 0)
        st = knut_arrow_stream_error(&p->inner, 5, "reading the vertex schema", err);
    if (st == KNUT_OK) {
        const char *key_in = it->key ? it->key : GAR_INDEX_COLUMN;
        p->key_idx = child_index(&p->inner_schema, key_in, 0);
        /* Label columns come last: a property of the same name comes first. */
        p->label_idx = child_index(&p->inner_schema, label, 1);
        if (p->key_idx < 0 || p->label_idx < 0 || p->label_idx == p->key_idx)
            st = knut_error_set(err, KNUT_EINVAL,
                                "load vertex type %s: the reader gave no column '%s' or no "
                                "label column '%s'",
                                it->name, key_in, label);
        else if (strcmp(p->inner_schema.children[p->label_idx]->format, "b") != 0)
            st = knut_error_set(err, KNUT_EINVAL,
                                "load vertex type %s: label column '%s' is not boolean",
                                it->name, label);
    }
    if (st == KNUT_OK)
        st = make_builder(p, key_out, err);
    out->private_data = p;
    out->get_schema = lf_get_schema;
    out->get_next = lf_get_next;
    out->get_last_error = lf_get_last_error;
    out->release = lf_release;
    if (st != KNUT_OK)
        knut_arrow_stream_release(out);
    return st;
}

knut_status knut_graph__load_labels(load_ctx *c, const load_item *it, knut_graph_sink *sink,
                                    knut_error *err)
{
    knut_status st = KNUT_OK;
    if (it->kind != KNUT_GRAPH_LOAD_VERTICES)
        return KNUT_OK;
    const char *key = it->key ? it->key : KNUT_LOAD_GAR_ID;
    /* One mutation per label: the reader allows one open stream at a time. */
    for (size_t l = 0; l < it->vi->n_labels && st == KNUT_OK; l++) {
        const char *label = it->vi->labels[l];
        if (strcmp(label, it->vi->type) == 0)
            continue; /* every vertex of the type has it already */
        knut_graph_mutation *m = NULL;
        knut_graph_sink_stats ss = {0};
        const char *labels[] = {it->vi->type, label};
        char name[600];
        snprintf(name, sizeof name, "%s:%s", it->vi->type, label);
        knut_graph_vertex_set vs = KNUT_GRAPH_VERTEX_SET_INIT;
        vs.name = name;
        vs.labels = labels;
        vs.n_labels = 2;
        vs.keys = &key;
        vs.n_keys = 1;
        st = knut_graph_mutation_new(&m, err);
        if (st == KNUT_OK)
            st = label_stream(c, it, label, key, &vs.stream, err);
        if (st == KNUT_OK)
            st = knut_graph_mutation_add_vertex_set(m, &vs, err);
        if (st == KNUT_OK)
            st = knut_graph_sink_apply(sink, m, NULL, &ss, err);
        if (st != KNUT_OK)
            knut_error_prefix(err, "label '%s': ", label);
        knut_arrow_stream_release(&vs.stream);
        knut_graph_mutation_free(m);
    }
    return st;
}
