/*
 * The Arrow IPC stream writer. A batch is first planned: one walk over the
 * columns in pre-order yields the field nodes, the buffer table and, for
 * each buffer, the bytes to send (pointers into the caller's arrays; only
 * sliced bitmaps and offsets that do not start at 0 are rewritten into
 * scratch memory). Then the framing, the FlatBuffers Message and the body
 * are handed to the sink, small pieces gathered into one staging buffer,
 * large buffers passed through without a copy.
 */
#include "arrow_int.h"
#include "ipc_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Pieces smaller than this are copied into the staging buffer so that a
 * message with many small buffers becomes one write; larger ones go to the
 * sink directly. */
#define STAGE_CAP ((size_t)256 << 10)
#define STAGE_DIRECT ((size_t)32 << 10)

/* Enough zero bytes for any padding and for the offsets of empty arrays. */
static const uint64_t zeros[8];

typedef struct seg {
    const void *p;
    int64_t len;
} seg;

struct knut_arrow_ipc_writer {
    knut_arrow_ipc_sink sink;
    struct ArrowSchema schema;
    knut_ipc_fields fields;
    knut_fb_builder fb;
    int64_t *nodes;   /* 2 per field: length, null_count */
    int64_t *bufs;    /* 2 per buffer: offset, length */
    seg *segs;        /* 1 per buffer */
    void **scratch;   /* memory owned by the batch being written */
    size_t n_scratch, scratch_cap;
    uint8_t *stage;
    size_t stage_len;
    int64_t bytes;
    int finished;
    knut_status broken; /* a failed sink write leaves a torn stream */
};

/* ---- sinks ------------------------------------------------------------- */

static knut_status sink_file_write(void *ctx, const void *data, size_t len, knut_error *err)
{
    if (len && fwrite(data, 1, len, (FILE *)ctx) != len)
        return knut_error_set(err, KNUT_EIO, "IPC write: %s", strerror(errno));
    return KNUT_OK;
}

static knut_status sink_fd_write(void *ctx, const void *data, size_t len, knut_error *err)
{
    int fd = (int)(intptr_t)ctx;
    const uint8_t *p = data;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return knut_error_set(err, KNUT_EIO, "IPC write to fd %d: %s", fd, strerror(errno));
        }
        p += n;
        len -= (size_t)n;
    }
    return KNUT_OK;
}

static knut_status sink_buf_write(void *ctx, const void *data, size_t len, knut_error *err)
{
    knut_buf *b = ctx;
    knut_status st = knut_buf_append(b, data, len);
    if (st == KNUT_ETOOBIG)
        return knut_error_set(err, st, "IPC write: output buffer cap of %zu bytes exceeded",
                              b->max ? b->max : KNUT_BUF_DEFAULT_MAX);
    if (st)
        return knut_error_set(err, st, "IPC write: %s", knut_strerror(st));
    return KNUT_OK;
}

knut_arrow_ipc_sink knut_arrow_ipc_sink_file(FILE *f)
{
    return (knut_arrow_ipc_sink){sink_file_write, f};
}

knut_arrow_ipc_sink knut_arrow_ipc_sink_fd(int fd)
{
    return (knut_arrow_ipc_sink){sink_fd_write, (void *)(intptr_t)fd};
}

knut_arrow_ipc_sink knut_arrow_ipc_sink_buf(knut_buf *b)
{
    return (knut_arrow_ipc_sink){sink_buf_write, b};
}

/* ---- output ------------------------------------------------------------ */

static knut_status out_flush(knut_arrow_ipc_writer *w, knut_error *err)
{
    if (!w->stage_len)
        return KNUT_OK;
    knut_status st = w->sink.write(w->sink.ctx, w->stage, w->stage_len, err);
    w->stage_len = 0;
    return st;
}

static knut_status out_write(knut_arrow_ipc_writer *w, const void *p, size_t n, knut_error *err)
{
    knut_status st = KNUT_OK;
    w->bytes += (int64_t)n;
    if (n >= STAGE_DIRECT) {
        st = out_flush(w, err);
        return st ? st : w->sink.write(w->sink.ctx, p, n, err);
    }
    if (w->stage_len + n > STAGE_CAP)
        st = out_flush(w, err);
    if (!st && n) {
        memcpy(w->stage + w->stage_len, p, n);
        w->stage_len += n;
    }
    return st;
}

static int64_t pad8(int64_t n)
{
    return (n + (KNUT_IPC_ALIGN - 1)) & ~(int64_t)(KNUT_IPC_ALIGN - 1);
}

/* Frames and sends one message: marker, metadata length, metadata (padded
 * to 8 by the builder, so the body starts aligned), then the body. */
static knut_status message_write(knut_arrow_ipc_writer *w, uint8_t header_type,
                                 knut_fb_ref header, int64_t body_len, int64_t n_segs,
                                 knut_error *err)
{
    knut_fb_builder *b = &w->fb;
    const uint8_t *meta;
    size_t meta_len;
    knut_arrow__fb_table_start(b);
    knut_arrow__fb_table_add_i16(b, KNUT_IPC_MESSAGE_VERSION, KNUT_IPC_METADATA_V5, 0);
    knut_arrow__fb_table_add_u8(b, KNUT_IPC_MESSAGE_HEADER_TYPE, header_type, 0);
    knut_arrow__fb_table_add_ref(b, KNUT_IPC_MESSAGE_HEADER, header);
    knut_arrow__fb_table_add_i64(b, KNUT_IPC_MESSAGE_BODY_LENGTH, body_len, 0);
    knut_fb_ref msg = knut_arrow__fb_table_end(b);
    knut_status st = knut_arrow__fb_builder_finish(b, msg, &meta, &meta_len, err);
    if (st)
        return st;
    if (meta_len > INT32_MAX)
        return knut_error_set(err, KNUT_ETOOBIG, "IPC metadata of %zu bytes exceeds int32",
                              meta_len);
    uint32_t prefix[2] = {KNUT_IPC_CONTINUATION, (uint32_t)meta_len};
    st = out_write(w, prefix, sizeof prefix, err);
    if (!st)
        st = out_write(w, meta, meta_len, err);
    for (int64_t i = 0; !st && i < n_segs; i++) {
        const seg *s = &w->segs[i];
        if (s->len)
            st = out_write(w, s->p, (size_t)s->len, err);
        if (!st && pad8(s->len) != s->len)
            st = out_write(w, zeros, (size_t)(pad8(s->len) - s->len), err);
    }
    if (!st)
        st = out_flush(w, err);
    if (st)
        w->broken = st;
    return st;
}

/* ---- planning a batch -------------------------------------------------- */

typedef struct plan {
    knut_arrow_ipc_writer *w;
    int64_t field;  /* next field index (pre-order) */
    int64_t buffer; /* next buffer index */
    int64_t body;   /* body bytes so far */
    knut_error *err;
} plan;

static void *scratch_alloc(plan *p, size_t n)
{
    knut_arrow_ipc_writer *w = p->w;
    if (w->n_scratch == w->scratch_cap) {
        size_t ncap = w->scratch_cap ? w->scratch_cap * 2 : 16;
        void **ns = realloc(w->scratch, ncap * sizeof *ns);
        if (!ns)
            return NULL;
        w->scratch = ns;
        w->scratch_cap = ncap;
    }
    void *m = malloc(n ? n : 1);
    if (m)
        w->scratch[w->n_scratch++] = m;
    return m;
}

static void scratch_free(knut_arrow_ipc_writer *w)
{
    for (size_t i = 0; i < w->n_scratch; i++)
        free(w->scratch[i]);
    w->n_scratch = 0;
}

static void buf_add(plan *p, const void *data, int64_t len)
{
    knut_arrow_ipc_writer *w = p->w;
    int64_t i = p->buffer++;
    w->bufs[2 * i] = p->body;
    w->bufs[2 * i + 1] = len;
    w->segs[i] = (seg){data, len};
    p->body += pad8(len);
}

/* Set bits of bits[start .. start+len). */
static int64_t bits_count(const uint8_t *bits, int64_t start, int64_t len)
{
    int64_t n = 0, i = start, end = start + len;
    for (; i < end && (i & 7); i++)
        n += (bits[i >> 3] >> (i & 7)) & 1;
    const uint8_t *p = bits + (i >> 3);
    for (; end - i >= 64; i += 64, p += 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        n += __builtin_popcountll(word);
    }
    for (; end - i >= 8; i += 8, p++)
        n += __builtin_popcount(*p);
    for (; i < end; i++)
        n += (bits[i >> 3] >> (i & 7)) & 1;
    return n;
}

/* A bitmap range as its own buffer: bit `start` must land on bit 0, so a
 * start that is not a multiple of 8 means shifting into scratch memory. */
static knut_status bitmap_add(plan *p, const uint8_t *bits, int64_t start, int64_t len)
{
    int64_t nbytes = (len + 7) / 8;
    if (len == 0) {
        buf_add(p, NULL, 0);
        return KNUT_OK;
    }
    if ((start & 7) == 0) {
        buf_add(p, bits + start / 8, nbytes);
        return KNUT_OK;
    }
    uint8_t *dst = scratch_alloc(p, (size_t)nbytes);
    if (!dst)
        return knut_error_set(p->err, KNUT_ENOMEM, "out of memory re-aligning a bitmap");
    const uint8_t *src = bits + start / 8;
    int shift = (int)(start & 7);
    int64_t src_bytes = (start + len + 7) / 8 - start / 8; /* bytes of src in range */
    for (int64_t i = 0; i < nbytes; i++) {
        unsigned v = src[i] >> shift;
        if (i + 1 < src_bytes)
            v |= (unsigned)src[i + 1] << (8 - shift);
        dst[i] = (uint8_t)v;
    }
    if (len & 7) /* clear the bits past the end */
        dst[nbytes - 1] &= (uint8_t)((1u << (len & 7)) - 1);
    buf_add(p, dst, nbytes);
    return KNUT_OK;
}

/* Offsets [start, start+len] re-based to begin at 0; *first and *last get
 * the original bounds (the range of data bytes or child rows used). */
static knut_status offsets_add(plan *p, const uint8_t *offsets, int width, int64_t start,
                               int64_t len, int64_t *first, int64_t *last)
{
    if (len == 0) {
        *first = *last = 0;
        buf_add(p, zeros, width); /* one offset, 0: some readers want it */
        return KNUT_OK;
    }
    *first = knut_arrow__offset_at(offsets, width, start);
    *last = knut_arrow__offset_at(offsets, width, start + len);
    const uint8_t *src = offsets + start * width;
    if (*first == 0) {
        buf_add(p, src, (len + 1) * width);
        return KNUT_OK;
    }
    void *dst = scratch_alloc(p, (size_t)((len + 1) * width));
    if (!dst)
        return knut_error_set(p->err, KNUT_ENOMEM, "out of memory re-basing offsets");
    if (width == 4) {
        const int32_t *s = (const int32_t *)(const void *)src;
        int32_t *d = dst, base = (int32_t)*first;
        for (int64_t i = 0; i <= len; i++)
            d[i] = s[i] - base;
    } else {
        const int64_t *s = (const int64_t *)(const void *)src;
        int64_t *d = dst, base = *first;
        for (int64_t i = 0; i <= len; i++)
            d[i] = s[i] - base;
    }
    buf_add(p, dst, (len + 1) * width);
    return KNUT_OK;
}

/* Plans rows [start, start+len) of array a (start is logical: a->offset is
 * added here), then its children. */
static knut_status plan_array(plan *p, const struct ArrowArray *a, int64_t start, int64_t len)
{
    knut_arrow_ipc_writer *w = p->w;
    const knut_ipc_field *f = &w->fields.items[p->field];
    int64_t node = p->field++;
    knut_arrow_type type = f->type.type;
    int64_t ps = a->offset + start; /* physical row */
    const uint8_t *validity = a->n_buffers > 0 ? a->buffers[0] : NULL;
    int64_t nulls;
    knut_status st = KNUT_OK;

    if (type == KNUT_ARROW_DENSE_UNION) {
        /* V5: no validity; the type ids and offsets of the rows, then every
         * child whole (the offsets point into the children, not rebased) */
        w->nodes[2 * node] = len;
        w->nodes[2 * node + 1] = 0;
        buf_add(p, len ? (const uint8_t *)a->buffers[0] + ps : NULL, len);
        buf_add(p, len ? (const uint8_t *)a->buffers[1] + ps * 4 : NULL, len * 4);
        for (int64_t i = 0; i < a->n_children && !st; i++)
            st = plan_array(p, a->children[i], 0, a->children[i]->length);
        return st;
    }

    if (type == KNUT_ARROW_NA)
        nulls = len;
    else if (!validity)
        nulls = 0;
    else if (start == 0 && len == a->length && a->null_count >= 0)
        nulls = a->null_count;
    else
        nulls = len - bits_count(validity, ps, len);
    w->nodes[2 * node] = len;
    w->nodes[2 * node + 1] = nulls;
    if (type == KNUT_ARROW_NA)
        return KNUT_OK;

    /* Validity: empty when there are no nulls (allowed by the format). */
    if (nulls == 0)
        buf_add(p, NULL, 0);
    else if ((st = bitmap_add(p, validity, ps, len)))
        return st;

    const uint8_t *values = a->n_buffers > 1 ? a->buffers[1] : NULL;
    int ow = knut_arrow__offset_width(type);
    int64_t first, last;
    if (type == KNUT_ARROW_BOOL) {
        st = bitmap_add(p, values, ps, len);
    } else if (knut_arrow__is_varlen(type)) {
        st = offsets_add(p, values, ow, ps, len, &first, &last);
        if (!st && last > first)
            buf_add(p, (const uint8_t *)a->buffers[2] + first, last - first);
        else if (!st)
            buf_add(p, NULL, 0);
    } else if (knut_arrow__is_list(type)) {
        st = offsets_add(p, values, ow, ps, len, &first, &last);
        if (!st)
            st = plan_array(p, a->children[0], first, last - first);
    } else if (type == KNUT_ARROW_STRUCT) {
        for (int64_t i = 0; i < a->n_children && !st; i++)
            st = plan_array(p, a->children[i], ps, len);
    } else {
        int64_t bw = f->type.byte_width;
        buf_add(p, len ? values + ps * bw : NULL, len * bw);
    }
    return st;
}

/* ---- writer ------------------------------------------------------------ */

knut_status knut_arrow_ipc_writer_new(knut_arrow_ipc_writer **out, knut_arrow_ipc_sink sink,
                                      const struct ArrowSchema *schema, knut_error *err)
{
    KNUT_ASSERT_ARG(err, out);
    *out = NULL;
    KNUT_ASSERT_ARG(err, sink.write && schema && schema->release);
    knut_status st;
    knut_fb_ref header;
    knut_arrow_ipc_writer *w = calloc(1, sizeof *w);
    if (!w)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory creating an IPC writer");
    w->sink = sink;
    knut_arrow__fb_builder_init(&w->fb, 0);
    st = knut_arrow_schema_deep_copy(&w->schema, schema, err);
    if (st)
        goto cleanup;
    st = knut_arrow__ipc_fields_init(&w->fields, &w->schema, err);
    if (st)
        goto cleanup;
    size_t nf = (size_t)w->fields.n, nb = (size_t)w->fields.n_buffers;
    w->nodes = malloc((nf ? nf : 1) * 2 * sizeof *w->nodes);
    w->bufs = malloc((nb ? nb : 1) * 2 * sizeof *w->bufs);
    w->segs = malloc((nb ? nb : 1) * sizeof *w->segs);
    w->stage = malloc(STAGE_CAP);
    if (!w->nodes || !w->bufs || !w->segs || !w->stage) {
        st = knut_error_set(err, KNUT_ENOMEM, "out of memory creating an IPC writer");
        goto cleanup;
    }
    st = knut_arrow__ipc_schema_encode(&w->fb, &w->schema, &header, err);
    if (!st)
        st = message_write(w, KNUT_IPC_HDR_SCHEMA, header, 0, 0, err);

cleanup:
    if (st) {
        knut_arrow_ipc_writer_free(w);
        return st;
    }
    *out = w;
    return KNUT_OK;
}

knut_status knut_arrow_ipc_writer_write(knut_arrow_ipc_writer *w, const struct ArrowArray *batch,
                                        knut_error *err)
{
    KNUT_ASSERT_ARG(err, w && batch && batch->release);
    if (w->finished)
        return knut_error_set(err, KNUT_EINVAL, "IPC writer: write after finish");
    if (w->broken)
        return knut_error_set(err, w->broken, "IPC writer: unusable after a failed write");
    if (batch->n_children != w->schema.n_children)
        return knut_error_set(err, KNUT_EINVAL, "IPC writer: batch has %lld columns, schema %lld",
                              (long long)batch->n_children, (long long)w->schema.n_children);
    knut_status st = knut_arrow_array_validate(&w->schema, batch, KNUT_ARROW_VALIDATE_DEFAULT,
                                               err);
    if (st)
        return knut_error_prefix(err, "IPC writer: ");

    /* a RecordBatch has no validity of its own: refuse rather than drop */
    const uint8_t *top_valid = batch->n_buffers > 0 ? batch->buffers[0] : NULL;
    if (top_valid && batch->null_count != 0 && batch->length > 0) {
        int64_t nulls = batch->length - bits_count(top_valid, batch->offset, batch->length);
        if (nulls > 0)
            return knut_error_set(err, KNUT_EINVAL,
                                  "IPC writer: the batch has %lld null rows at the top level, "
                                  "which a record batch cannot carry",
                                  (long long)nulls);
    }

    plan p = {.w = w, .err = err};
    for (int64_t i = 0; i < batch->n_children && !st; i++)
        st = plan_array(&p, batch->children[i], batch->offset, batch->length);
    if (!st) {
        knut_fb_builder *b = &w->fb;
        knut_arrow__fb_builder_clear(b);
        knut_fb_ref nodes = knut_arrow__fb_vector_structs_create(b, w->nodes, KNUT_IPC_STRUCT_SIZE,
                                                                 (size_t)p.field, 8);
        knut_fb_ref bufs = knut_arrow__fb_vector_structs_create(b, w->bufs, KNUT_IPC_STRUCT_SIZE,
                                                                (size_t)p.buffer, 8);
        knut_arrow__fb_table_start(b);
        knut_arrow__fb_table_add_i64(b, KNUT_IPC_BATCH_LENGTH, batch->length, 0);
        knut_arrow__fb_table_add_ref(b, KNUT_IPC_BATCH_NODES, nodes);
        knut_arrow__fb_table_add_ref(b, KNUT_IPC_BATCH_BUFFERS, bufs);
        knut_fb_ref rb = knut_arrow__fb_table_end(b);
        st = message_write(w, KNUT_IPC_HDR_RECORD_BATCH, rb, p.body, p.buffer, err);
    }
    scratch_free(w);
    return st;
}

knut_status knut_arrow_ipc_writer_finish(knut_arrow_ipc_writer *w, knut_error *err)
{
    KNUT_ASSERT_ARG(err, w);
    if (w->finished)
        return KNUT_OK;
    if (w->broken)
        return knut_error_set(err, w->broken, "IPC writer: unusable after a failed write");
    /* end of stream: the continuation marker followed by a zero length */
    uint32_t eos[2] = {KNUT_IPC_CONTINUATION, 0};
    knut_status st = out_write(w, eos, sizeof eos, err);
    if (!st)
        st = out_flush(w, err);
    if (st)
        w->broken = st;
    else
        w->finished = 1;
    return st;
}

void knut_arrow_ipc_writer_free(knut_arrow_ipc_writer *w)
{
    if (!w)
        return;
    scratch_free(w);
    free(w->scratch);
    knut_arrow_schema_release(&w->schema);
    knut_arrow__ipc_fields_reset(&w->fields);
    knut_arrow__fb_builder_reset(&w->fb);
    free(w->nodes);
    free(w->bufs);
    free(w->segs);
    free(w->stage);
    free(w);
}

int64_t knut_arrow_ipc_writer_bytes(const knut_arrow_ipc_writer *w)
{
    return w ? w->bytes : 0;
}

knut_status knut_arrow_ipc_write_stream(knut_arrow_ipc_sink sink,
                                        struct ArrowArrayStream *stream, knut_error *err)
{
    KNUT_ASSERT_ARG(err, stream && stream->release);
    struct ArrowSchema schema = {0};
    struct ArrowArray batch = {0};
    knut_arrow_ipc_writer *w = NULL;
    int rc = stream->get_schema(stream, &schema);
    knut_status st = rc ? knut_arrow_stream_error(stream, rc, "IPC write: get_schema", err)
                        : KNUT_OK;
    if (!st)
        st = knut_arrow_ipc_writer_new(&w, sink, &schema, err);
    while (!st) {
        rc = stream->get_next(stream, &batch);
        if (rc) {
            st = knut_arrow_stream_error(stream, rc, "IPC write: get_next", err);
            break;
        }
        if (!batch.release)
            break;
        st = knut_arrow_ipc_writer_write(w, &batch, err);
        knut_arrow_array_release(&batch);
    }
    if (!st)
        st = knut_arrow_ipc_writer_finish(w, err);
    knut_arrow_ipc_writer_free(w);
    knut_arrow_schema_release(&schema);
    return st;
}
