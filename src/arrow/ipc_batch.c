/*
 * RecordBatch metadata + body -> ArrowArray, without copying the body: all
 * arrays of a batch point into one refcounted body block. Because the C
 * Data Interface cannot carry buffer sizes, this is the one place where
 * they are known, so every size the consumer will rely on is checked here
 * (buffer inside the body, bitmap and value buffers long enough for the
 * length, first and last offsets inside the data or child); FULL
 * validation then checks what lies between (monotonic offsets, null
 * counts against bitmaps).
 */
#include "arrow_int.h"
#include "ipc_int.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Stands in for zero-length buffers, so consumers may read offsets[0] of
 * an empty array and never see a NULL values pointer. */
static const int64_t empty_block[2];

/* ---- body storage ------------------------------------------------------ */

/*
 * Bodies this large are mapped directly, 2 MiB aligned, with transparent
 * huge pages requested where the kernel offers them on request. Filling
 * fresh memory is dominated by page faults, and a 2 MiB page takes one
 * fault instead of 512: read() into 450 MB of fresh 6 MB bodies took
 * 0.04 s instead of 0.18 s with 4 KiB pages on the benchmark machine.
 * posix_memalign'd blocks only got huge pages for their aligned middle,
 * and their 4 KiB-paged tails still took most of the faults.
 */
#if defined(MADV_HUGEPAGE) && defined(MAP_ANONYMOUS)
#define BODY_MAP 1
#else
#define BODY_MAP 0
#endif
/*
 * Recycled storage would hide a read of a released body or past a body's
 * end from AddressSanitizer (the bytes stay allocated), so sanitizer builds
 * poison what lies in the pool and the room past each body's length.
 */
#if defined(__SANITIZE_ADDRESS__)
#define BODY_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BODY_ASAN 1
#endif
#endif
#ifdef BODY_ASAN
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (size_t)(n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (size_t)(n))
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#define HUGE_BODY ((int64_t)4 << 20)
#define HUGE_PAGE ((int64_t)2 << 20)

static int64_t round_up(int64_t n, int64_t to)
{
    return (n + to - 1) / to * to;
}

/*
 * Capacity for len bytes. Rounding up to a size class lets a recycled body
 * take the next batch even when that one is a little larger (batches of a
 * stream differ by their variable-length data); the extra room is address
 * space that stays untouched, so it costs no memory until used.
 */
static int64_t storage_cap(int64_t len)
{
    if (BODY_MAP && len >= HUGE_BODY)
        return round_up(len, HUGE_PAGE);
    if (len < 4096)
        return len > 0 ? len : 1;
    int64_t step = 512; /* an eighth of the power of two at or below len */
    while (step * 16 <= len)
        step *= 2;
    return round_up(len, step);
}

/* Storage of storage_cap(len) bytes (uninitialised); *mapped says how to
 * free it. */
static uint8_t *storage_alloc(int64_t len, int64_t *cap, int *mapped)
{
    *cap = storage_cap(len);
    *mapped = 0;
#if BODY_MAP
    if (len >= HUGE_BODY) {
        /* over-map by one huge page, then trim to a 2 MiB-aligned window */
        size_t span = (size_t)(*cap + HUGE_PAGE);
        uint8_t *raw = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                            -1, 0);
        if (raw == MAP_FAILED)
            return NULL;
        uintptr_t hp = (uintptr_t)HUGE_PAGE;
        uint8_t *p = (uint8_t *)(((uintptr_t)raw + hp - 1) & ~(hp - 1));
        size_t head = (size_t)(p - raw), tail = span - head - (size_t)*cap;
        if (head)
            munmap(raw, head);
        if (tail)
            munmap(p + *cap, tail);
        /* A hint only. The last huge page is asked for only when len fills
         * at least half of it: a huge page is committed whole on first
         * touch, so this caps the memory wasted per body at 1 MiB. */
        int64_t hinted = len % HUGE_PAGE >= HUGE_PAGE / 2 ? *cap : len / HUGE_PAGE * HUGE_PAGE;
        madvise(p, (size_t)hinted, MADV_HUGEPAGE);
        *mapped = 1;
        POISON(p + len, *cap - len);
        return p;
    }
#endif
    /* malloc's alignment (16 on 64-bit glibc) covers the 8 the format needs */
    uint8_t *p = malloc((size_t)*cap);
    if (p)
        POISON(p + len, *cap - len);
    return p;
}

static void storage_free(uint8_t *data, int64_t cap, int mapped)
{
    UNPOISON(data, cap); /* the shadow would outlive the mapping */
#if BODY_MAP
    if (mapped) {
        munmap(data, (size_t)cap);
        return;
    }
#endif
    (void)cap;
    (void)mapped;
    free(data);
}

/* ---- bodies and their pool --------------------------------------------- */

struct knut_ipc_body {
    atomic_llong refs;
    knut_ipc_pool *pool; /* where the storage goes back to, or NULL */
    uint8_t *data;
    int64_t len; /* bytes in use */
    int64_t cap; /* bytes allocated */
    int mapped;
};

/*
 * Storage of released bodies, kept for the next messages of one reader: a
 * recycled body is written by read() without page faults or the kernel's
 * zeroing, which is most of the cost of reading an IPC stream from the
 * page cache. Bounded: a few bodies and a byte budget, recently released
 * first. Bodies outlive the reader when arrays do and may be released on
 * any thread, so the pool is refcounted (the reader, plus every body made
 * through it that is not sitting in the pool) and locked; once the reader
 * closes it, bodies released later are freed.
 */
#define POOL_MAX_BODIES 4
#define POOL_MAX_BYTES ((int64_t)256 << 20)
/* Smaller bodies are left to malloc, whose free lists recycle them anyway;
 * they would only crowd out the large ones that pay for page faults. */
#define POOL_MIN_BYTES ((int64_t)64 << 10)

struct knut_ipc_pool {
    atomic_llong refs;
    pthread_mutex_t lock;
    int open;
    int n;
    int64_t bytes;
    knut_ipc_body *items[POOL_MAX_BODIES]; /* oldest first */
};

knut_ipc_pool *knut_arrow__ipc_pool_new(void)
{
    knut_ipc_pool *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    if (pthread_mutex_init(&p->lock, NULL) != 0) {
        free(p);
        return NULL;
    }
    atomic_init(&p->refs, 1);
    p->open = 1;
    return p;
}

static void pool_unref(knut_ipc_pool *p)
{
    if (atomic_fetch_sub_explicit(&p->refs, 1, memory_order_acq_rel) == 1) {
        pthread_mutex_destroy(&p->lock);
        free(p);
    }
}

static void body_destroy(knut_ipc_body *b)
{
    storage_free(b->data, b->cap, b->mapped);
    free(b);
}

void knut_arrow__ipc_pool_close(knut_ipc_pool *p)
{
    if (!p)
        return;
    knut_ipc_body *items[POOL_MAX_BODIES];
    pthread_mutex_lock(&p->lock);
    int n = p->n;
    memcpy(items, p->items, (size_t)n * sizeof *items);
    p->n = 0;
    p->bytes = 0;
    p->open = 0;
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < n; i++)
        body_destroy(items[i]);
    pool_unref(p);
}

/* The last reference to b is gone: keep its storage or free it. */
static void pool_put(knut_ipc_pool *p, knut_ipc_body *b)
{
    knut_ipc_body *evicted[POOL_MAX_BODIES];
    int n_evicted = 0, kept = 0;
    if (b->cap >= POOL_MIN_BYTES && b->cap <= POOL_MAX_BYTES) {
        pthread_mutex_lock(&p->lock);
        if (p->open) {
            /* make room by dropping the oldest */
            while (p->n == POOL_MAX_BODIES || p->bytes + b->cap > POOL_MAX_BYTES) {
                evicted[n_evicted++] = p->items[0];
                p->bytes -= p->items[0]->cap;
                memmove(p->items, p->items + 1, (size_t)--p->n * sizeof *p->items);
            }
            p->items[p->n++] = b;
            p->bytes += b->cap;
            POISON(b->data, b->cap);
            kept = 1;
        }
        pthread_mutex_unlock(&p->lock);
    }
    for (int i = 0; i < n_evicted; i++)
        body_destroy(evicted[i]);
    if (!kept)
        body_destroy(b);
    pool_unref(p); /* b no longer holds the pool */
}

knut_ipc_body *knut_arrow__ipc_body_reuse(knut_ipc_pool *p, int64_t len)
{
    if (!p || len < POOL_MIN_BYTES / 2)
        return NULL;
    /* Take the smallest that holds len, and not one so much larger that
     * a short last batch would pin a big block for as long as its arrays
     * live; among equals the most recently released (warmest in cache). */
    int64_t most = storage_cap(len) + storage_cap(len) / 2;
    knut_ipc_body *b = NULL;
    pthread_mutex_lock(&p->lock);
    int best = -1;
    for (int i = p->n - 1; i >= 0; i--) {
        int64_t c = p->items[i]->cap;
        if (c >= len && c <= most && (best < 0 || c < p->items[best]->cap))
            best = i;
    }
    if (best >= 0) {
        b = p->items[best];
        p->bytes -= b->cap;
        memmove(p->items + best, p->items + best + 1,
                (size_t)(--p->n - best) * sizeof *p->items);
        atomic_fetch_add_explicit(&p->refs, 1, memory_order_relaxed);
    }
    pthread_mutex_unlock(&p->lock);
    if (b) {
        atomic_store_explicit(&b->refs, 1, memory_order_relaxed);
        b->len = len;
        UNPOISON(b->data, len);
    }
    return b;
}

knut_ipc_body *knut_arrow__ipc_body_new(knut_ipc_pool *p, int64_t len)
{
    knut_ipc_body *b = malloc(sizeof *b);
    if (!b)
        return NULL;
    b->data = storage_alloc(len, &b->cap, &b->mapped);
    if (!b->data) {
        free(b);
        return NULL;
    }
    atomic_init(&b->refs, 1);
    b->len = len;
    b->pool = p;
    if (p)
        atomic_fetch_add_explicit(&p->refs, 1, memory_order_relaxed);
    return b;
}

uint8_t *knut_arrow__ipc_body_data(knut_ipc_body *b)
{
    return b->data;
}

knut_status knut_arrow__ipc_body_resize(knut_ipc_body *b, int64_t new_len)
{
    if (new_len <= b->cap) {
        UNPOISON(b->data, new_len);
        POISON(b->data + new_len, b->cap - new_len);
        b->len = new_len;
        return KNUT_OK;
    }
    /* new storage rather than realloc: mapped and malloc'd storage mix */
    int64_t cap;
    int mapped;
    uint8_t *nd = storage_alloc(new_len, &cap, &mapped);
    if (!nd)
        return KNUT_ENOMEM;
    memcpy(nd, b->data, (size_t)(b->len < new_len ? b->len : new_len));
    storage_free(b->data, b->cap, b->mapped);
    b->data = nd;
    b->cap = cap;
    b->mapped = mapped;
    b->len = new_len;
    return KNUT_OK;
}

static void body_ref(knut_ipc_body *b)
{
    atomic_fetch_add_explicit(&b->refs, 1, memory_order_relaxed);
}

void knut_arrow__ipc_body_unref(knut_ipc_body *b)
{
    if (b && atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) == 1) {
        if (b->pool)
            pool_put(b->pool, b);
        else
            body_destroy(b);
    }
}

/* ---- array nodes ------------------------------------------------------- */

/* private_data of every array we hand out; the child ArrowArray structs
 * live in the same allocation, after it. */
typedef struct ipc_node {
    knut_ipc_body *body;
    const void *buffers[3];
    void *owned[3]; /* copies of buffers that were misaligned in the body */
    struct ArrowArray **children;
} ipc_node;

static void node_release(struct ArrowArray *a)
{
    if (!a || !a->release)
        return;
    ipc_node *n = a->private_data;
    for (int64_t i = 0; i < a->n_children; i++)
        if (n->children[i]->release)
            n->children[i]->release(n->children[i]);
    for (int i = 0; i < 3; i++)
        free(n->owned[i]);
    knut_arrow__ipc_body_unref(n->body);
    free(n);
    a->release = NULL;
}

static knut_status node_init(struct ArrowArray *out, int64_t n_children, int n_buffers,
                             knut_ipc_body *body, knut_error *err)
{
    size_t nc = (size_t)n_children;
    ipc_node *n = calloc(1, sizeof *n + nc * (sizeof(struct ArrowArray *) +
                                               sizeof(struct ArrowArray)));
    if (!n)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory building a record batch");
    n->children = (struct ArrowArray **)(void *)(n + 1);
    struct ArrowArray *kids = (struct ArrowArray *)(void *)(n->children + nc);
    for (size_t i = 0; i < nc; i++)
        n->children[i] = &kids[i]; /* calloc: each starts released */
    n->body = body;
    body_ref(body);
    memset(out, 0, sizeof *out);
    out->n_buffers = n_buffers;
    out->buffers = n->buffers;
    out->n_children = n_children;
    out->children = n->children;
    out->release = node_release;
    out->private_data = n;
    return KNUT_OK;
}

/* ---- decoding ---------------------------------------------------------- */

typedef struct dec {
    const knut_ipc_fields *fields;
    knut_fb_vector nodes, bufs;
    int64_t field, buffer;
    knut_ipc_body *body;
    int64_t body_len;
    knut_error *err;
} dec;

static int64_t bitmap_bytes(int64_t len)
{
    return len / 8 + (len % 8 != 0);
}

/* Next buffer of the batch, checked to lie in the body. `align` > 1 asks
 * for a copy when the stream placed it misaligned (typed loads need it). */
static knut_status buffer_next(dec *d, ipc_node *n, int slot, int align, const uint8_t **ptr,
                               int64_t *len, const char *field)
{
    int64_t i = d->buffer++;
    int64_t off = knut_arrow__fb_vector_struct_i64(&d->bufs, (uint32_t)i, KNUT_IPC_STRUCT_SIZE, 0);
    int64_t blen = knut_arrow__fb_vector_struct_i64(&d->bufs, (uint32_t)i, KNUT_IPC_STRUCT_SIZE, 8);
    if (off < 0 || blen < 0 || off > d->body_len || blen > d->body_len - off)
        return knut_error_set(d->err, KNUT_EPARSE,
                              "field '%s': buffer %lld (offset %lld, length %lld) lies outside "
                              "the body (%lld bytes)",
                              field, (long long)i, (long long)off, (long long)blen,
                              (long long)d->body_len);
    *len = blen;
    if (blen == 0) {
        *ptr = (const uint8_t *)empty_block;
        return KNUT_OK;
    }
    *ptr = knut_arrow__ipc_body_data(d->body) + off;
    if (align > 1 && ((uintptr_t)*ptr % (uintptr_t)align) != 0) {
        void *copy = malloc((size_t)blen);
        if (!copy)
            return knut_error_set(d->err, KNUT_ENOMEM, "out of memory aligning a buffer");
        memcpy(copy, *ptr, (size_t)blen);
        n->owned[slot] = copy;
        *ptr = copy;
    }
    return KNUT_OK;
}

/* a * b for the size named in a message, saturating instead of wrapping */
static int64_t mul_sat(int64_t a, int64_t b)
{
    return (b > 0 && a > INT64_MAX / b) ? INT64_MAX : a * b;
}

static knut_status too_short(dec *d, const char *field, const char *what, int64_t have,
                             int64_t need)
{
    return knut_error_set(d->err, KNUT_EPARSE,
                          "field '%s': %s buffer has %lld bytes, needs %lld", field, what,
                          (long long)have, (long long)need);
}

/* Offsets buffer in slot 1 for `len` rows; *last gets offsets[len]. */
static knut_status offsets_next(dec *d, ipc_node *n, int width, int64_t len, int64_t *last,
                                const char *field)
{
    /* set on success only; initialised because GCC -O3 cannot tell */
    const uint8_t *p = NULL;
    int64_t blen = 0;
    knut_status st = buffer_next(d, n, 1, width, &p, &blen, field);
    if (st)
        return st;
    if (len == 0 && blen < width) {
        /* an empty array may come without offsets; give it one 0 */
        n->buffers[1] = empty_block;
        *last = 0;
        return KNUT_OK;
    }
    if ((blen / width) - 1 < len)
        return too_short(d, field, "offsets", blen,
                         mul_sat(len < INT64_MAX ? len + 1 : len, width));
    int64_t first = knut_arrow__offset_at(p, width, 0);
    *last = knut_arrow__offset_at(p, width, len);
    if (first < 0 || *last < first)
        return knut_error_set(d->err, KNUT_EPARSE,
                              "field '%s': offsets run from %lld to %lld", field,
                              (long long)first, (long long)*last);
    n->buffers[1] = p;
    return KNUT_OK;
}

static knut_status array_decode(dec *d, struct ArrowArray *out)
{
    const knut_ipc_field *f = &d->fields->items[d->field];
    const char *name = f->schema->name ? f->schema->name : "";
    int64_t ni = d->field++;
    int64_t len =
        knut_arrow__fb_vector_struct_i64(&d->nodes, (uint32_t)ni, KNUT_IPC_STRUCT_SIZE, 0);
    int64_t nulls =
        knut_arrow__fb_vector_struct_i64(&d->nodes, (uint32_t)ni, KNUT_IPC_STRUCT_SIZE, 8);
    knut_arrow_type type = f->type.type;
    const uint8_t *p;
    int64_t blen, last;

    if (len < 0 || nulls < 0 || nulls > len)
        return knut_error_set(d->err, KNUT_EPARSE,
                              "field '%s': field node %lld has length %lld, null count %lld",
                              name, (long long)ni, (long long)len, (long long)nulls);
    knut_status st = node_init(out, f->schema->n_children, f->n_buffers, d->body, d->err);
    if (st)
        return st;
    ipc_node *n = out->private_data;
    out->length = len;
    out->null_count = type == KNUT_ARROW_NA ? len : nulls;
    if (type == KNUT_ARROW_NA)
        return KNUT_OK;
    if (type == KNUT_ARROW_DENSE_UNION) {
        /* V5: no validity; type ids (int8) and offsets (int32) per row,
         * then each child whole; validation checks ids and offsets */
        if (nulls)
            return knut_error_set(d->err, KNUT_EPARSE,
                                  "field '%s': a union has no nulls of its own", name);
        st = buffer_next(d, n, 0, 1, &p, &blen, name);
        if (!st && blen < len)
            st = too_short(d, name, "type ids", blen, len);
        n->buffers[0] = p;
        if (!st)
            st = buffer_next(d, n, 1, 4, &p, &blen, name);
        if (!st && blen / 4 < len)
            st = too_short(d, name, "offsets", blen, mul_sat(len, 4));
        n->buffers[1] = p;
        for (int64_t i = 0; i < out->n_children && !st; i++)
            st = array_decode(d, n->children[i]);
        return st;
    }

    /* validity: only looked at when there are nulls */
    st = buffer_next(d, n, 0, 1, &p, &blen, name);
    if (st)
        return st;
    if (nulls > 0) {
        if (blen < bitmap_bytes(len))
            return too_short(d, name, "validity", blen, bitmap_bytes(len));
        n->buffers[0] = p;
    }

    if (type == KNUT_ARROW_BOOL) {
        st = buffer_next(d, n, 1, 1, &p, &blen, name);
        if (!st && blen < bitmap_bytes(len))
            st = too_short(d, name, "values", blen, bitmap_bytes(len));
        n->buffers[1] = p;
    } else if (knut_arrow__is_varlen(type)) {
        st = offsets_next(d, n, knut_arrow__offset_width(type), len, &last, name);
        if (!st)
            st = buffer_next(d, n, 2, 1, &p, &blen, name);
        if (!st && blen < last)
            st = too_short(d, name, "data", blen, last);
        n->buffers[2] = p;
    } else if (knut_arrow__is_list(type)) {
        st = offsets_next(d, n, knut_arrow__offset_width(type), len, &last, name);
        if (!st)
            st = array_decode(d, n->children[0]);
        if (!st && n->children[0]->length < last)
            st = knut_error_set(d->err, KNUT_EPARSE,
                                "field '%s': offsets reach row %lld of a child of %lld rows",
                                name, (long long)last, (long long)n->children[0]->length);
    } else if (type == KNUT_ARROW_STRUCT) {
        for (int64_t i = 0; i < out->n_children && !st; i++) {
            st = array_decode(d, n->children[i]);
            if (!st && n->children[i]->length < len)
                st = knut_error_set(d->err, KNUT_EPARSE,
                                    "field '%s': child %lld has %lld rows, struct has %lld",
                                    name, (long long)i, (long long)n->children[i]->length,
                                    (long long)len);
        }
    } else {
        int64_t bw = f->type.byte_width;
        /* 8 is enough alignment for every fixed-width type, 16-byte ones too */
        st = buffer_next(d, n, 1, bw >= 8 ? 8 : (int)bw, &p, &blen, name);
        if (!st && (bw <= 0 || blen / bw < len))
            st = too_short(d, name, "values", blen, mul_sat(len, bw));
        n->buffers[1] = p;
    }
    return st;
}

knut_status knut_arrow__ipc_batch_decode(const knut_fb_table *rb, const struct ArrowSchema *schema,
                                         const knut_ipc_fields *fields, knut_ipc_body *body,
                                         int64_t body_len, struct ArrowArray *out, knut_error *err)
{
    dec d = {.fields = fields, .body = body, .body_len = body_len, .err = err};
    int64_t length;
    int present_nodes, present_bufs, present;
    knut_fb_table comp;
    knut_status st;

    out->release = NULL;
    st = knut_arrow__fb_read_i64(rb, KNUT_IPC_BATCH_LENGTH, 0, &length, err);
    if (!st)
        st = knut_arrow__fb_read_table(rb, KNUT_IPC_BATCH_COMPRESSION, &comp, &present, err);
    if (!st && present)
        return knut_error_set(err, KNUT_EUNSUPPORTED,
                              "compressed record batches (LZ4/ZSTD) are not supported");
    if (!st)
        st = knut_arrow__fb_read_vector(rb, KNUT_IPC_BATCH_NODES, KNUT_IPC_STRUCT_SIZE, &d.nodes,
                                        &present_nodes, err);
    if (!st)
        st = knut_arrow__fb_read_vector(rb, KNUT_IPC_BATCH_BUFFERS, KNUT_IPC_STRUCT_SIZE, &d.bufs,
                                        &present_bufs, err);
    if (st)
        return st;
    if (length < 0)
        return knut_error_set(err, KNUT_EPARSE, "record batch length %lld is negative",
                              (long long)length);
    int64_t nn = present_nodes ? d.nodes.count : 0, nb = present_bufs ? d.bufs.count : 0;
    if (nn != fields->n)
        return knut_error_set(err, KNUT_EPARSE,
                              "record batch has %lld field nodes, the schema needs %lld",
                              (long long)nn, (long long)fields->n);
    if (nb != fields->n_buffers)
        return knut_error_set(err, KNUT_EPARSE,
                              "record batch has %lld buffers, the schema needs %lld",
                              (long long)nb, (long long)fields->n_buffers);

    st = node_init(out, schema->n_children, 1, body, err);
    if (st)
        return st;
    out->length = length;
    ipc_node *top = out->private_data;
    for (int64_t i = 0; i < schema->n_children && !st; i++) {
        st = array_decode(&d, top->children[i]);
        if (!st && top->children[i]->length != length)
            st = knut_error_set(err, KNUT_EPARSE,
                                "column '%s' has %lld rows, the record batch %lld",
                                schema->children[i]->name ? schema->children[i]->name : "",
                                (long long)top->children[i]->length, (long long)length);
    }
    if (!st) {
        st = knut_arrow_array_validate(schema, out, KNUT_ARROW_VALIDATE_FULL, err);
        if (st && err) {
            /* a broken stream, not a bad argument */
            char msg[KNUT_ERROR_MSG_MAX];
            snprintf(msg, sizeof msg, "%s", err->message);
            st = knut_error_set(err, KNUT_EPARSE, "%s", msg);
        } else if (st) {
            st = KNUT_EPARSE;
        }
    }
    if (st)
        node_release(out);
    return st;
}
