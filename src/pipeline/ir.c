/*
 * The pipeline IR's ownership: one arena per pipeline holds every string
 * and array, so knut_pipeline_free is one walk and a half-built pipeline
 * (a parse that failed half way) frees like a whole one.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "knut/graph_map.h"
#include "pipeline_int.h"

struct knut_pipeline__chunk {
    knut_pipeline__chunk *next;
    max_align_t data[];
};

void *knut_pipeline__alloc(knut_pipeline *p, size_t n)
{
    knut_pipeline__impl *impl = (knut_pipeline__impl *)p;
    knut_pipeline__chunk *c = calloc(1, sizeof *c + (n ? n : 1));
    if (!c)
        return NULL;
    c->next = impl->chunks;
    impl->chunks = c;
    return c->data;
}

char *knut_pipeline__strndup(knut_pipeline *p, const char *s, size_t len)
{
    char *d = knut_pipeline__alloc(p, len + 1);
    if (d && len)
        memcpy(d, s, len);
    return d;
}

char *knut_pipeline__strdup(knut_pipeline *p, const char *s)
{
    return s ? knut_pipeline__strndup(p, s, strlen(s)) : NULL;
}

/* Arrays grow by doubling inside the arena: the old block stays in the
 * arena until the free (the IR is small next to the data). */
void *knut_pipeline__push(knut_pipeline *p, void **arr, size_t *n, size_t sz)
{
    size_t cap = 4;
    while (cap < *n + 1)
        cap *= 2;
    /* A block of cap elements was allocated when *n reached the previous
     * power of two; grow only when *n is exactly at a capacity boundary. */
    if (*arr == NULL || (*n >= 4 && (*n & (*n - 1)) == 0)) {
        void *nv = knut_pipeline__alloc(p, cap * sz);
        if (!nv)
            return NULL;
        if (*arr)
            memcpy(nv, *arr, *n * sz);
        *arr = nv;
    }
    char *slot = (char *)*arr + *n * sz;
    memset(slot, 0, sz);
    (*n)++;
    return slot;
}

knut_status knut_pipeline_new(knut_pipeline **out, const char *name, const char *storage,
                              knut_error *err)
{
    *out = NULL;
    knut_pipeline__impl *impl = calloc(1, sizeof *impl);
    if (!impl)
        return knut_error_set(err, KNUT_ENOMEM, "pipeline: out of memory");
    knut_pipeline *p = &impl->pub;
    p->name = knut_pipeline__strdup(p, name ? name : "pipeline");
    p->storage = knut_pipeline__strdup(p, storage ? storage : "storage");
    p->root = knut_pipeline__strdup(p, ".");
    p->catalog = knut_pipeline__strdup(p, "pipeline");
    p->schema = knut_pipeline__strdup(p, "main");
    if (!p->name || !p->storage || !p->root || !p->catalog || !p->schema) {
        knut_pipeline_free(p);
        return knut_error_set(err, KNUT_ENOMEM, "pipeline: out of memory");
    }
    *out = p;
    return KNUT_OK;
}

void knut_pipeline_free(knut_pipeline *p)
{
    if (!p)
        return;
    knut_pipeline__impl *impl = (knut_pipeline__impl *)p;
    for (size_t i = 0; i < impl->nmaps; i++) {
        knut_graph_map_free(impl->maps[i]);
        free(impl->maps[i]);
    }
    knut_conf_free(impl->conf);
    knut_pipeline__chunk *c = impl->chunks;
    while (c) {
        knut_pipeline__chunk *next = c->next;
        free(c);
        c = next;
    }
    free(impl);
}

knut_pipeline_flow *knut_pipeline__flow_find(knut_pipeline *p, const char *name)
{
    for (size_t i = 0; i < p->nflows; i++)
        if (strcmp(p->flows[i].name, name) == 0)
            return &p->flows[i];
    return NULL;
}

knut_pipeline_dataset *knut_pipeline__dataset_get(knut_pipeline *p, const char *name)
{
    for (size_t i = 0; i < p->ndatasets; i++)
        if (strcmp(p->datasets[i].name, name) == 0)
            return &p->datasets[i];
    return NULL;
}

const knut_pipeline_dataset *knut_pipeline_dataset_find(const knut_pipeline *p, const char *name)
{
    return knut_pipeline__dataset_get((knut_pipeline *)p, name);
}

const char *knut_pipeline_dataset_kind_name(knut_pipeline_dataset_kind k)
{
    switch (k) {
    case KNUT_PIPELINE_STREAMING_TABLE: return "streaming_table";
    case KNUT_PIPELINE_MATERIALIZED_VIEW: return "materialized_view";
    case KNUT_PIPELINE_TEMPORARY_VIEW: return "temporary_view";
    case KNUT_PIPELINE_SINK: return "sink";
    }
    return "unknown";
}

const char *knut_pipeline_flow_kind_name(knut_pipeline_flow_kind k)
{
    switch (k) {
    case KNUT_PIPELINE_FLOW_BATCH: return "batch";
    case KNUT_PIPELINE_FLOW_APPEND_ONCE: return "append_once";
    case KNUT_PIPELINE_FLOW_STREAMING: return "streaming";
    case KNUT_PIPELINE_FLOW_CDC: return "cdc";
    }
    return "unknown";
}

const char *knut_pipeline_action_name(knut_pipeline_action a)
{
    switch (a) {
    case KNUT_PIPELINE_WARN: return "warn";
    case KNUT_PIPELINE_DROP: return "drop";
    case KNUT_PIPELINE_FAIL: return "fail";
    case KNUT_PIPELINE_QUARANTINE: return "quarantine";
    }
    return "unknown";
}

knut_status knut_pipeline__error_at(knut_error *err, knut_status code, knut_pipeline_pos pos,
                                    const char *fmt, ...)
{
    char text[KNUT_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    return knut_error_set_at(err, code, pos.file, pos.line, pos.col, "%s", text);
}
