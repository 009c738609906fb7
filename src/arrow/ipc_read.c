/*
 * The Arrow IPC stream reader: input sources, message framing (current and
 * legacy), the Message table, and the C stream wrapper. Every size the
 * stream declares is checked against a limit, and against the bytes left
 * when the source knows that, before memory is allocated for it; a body of
 * unknown remaining size is read in growing steps so a lying length costs
 * at most what was really sent. Errors name the message index and the
 * byte offset where that message starts.
 */
#include "ipc_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* First allocation for a body whose source cannot say how much is left. */
#define BODY_STEP ((int64_t)16 << 20)

struct knut_arrow_ipc_reader {
    knut_arrow_ipc_source src;
    int64_t max_metadata, max_body, max_fields;
    struct ArrowSchema schema;
    knut_ipc_fields fields;
    knut_ipc_pool *pool; /* storage of released bodies, for the next ones */
    uint8_t *meta;
    size_t meta_cap;
    int64_t pos;   /* stream bytes consumed */
    int64_t index; /* index of the next message (0 = schema) */
    int done;
    knut_status broken; /* framing is lost after an error: stay failed */
    char broken_msg[KNUT_ERROR_MSG_MAX];
};

/* ---- sources ----------------------------------------------------------- */

/* Bytes left in a regular file from the current position, else -1. */
static int64_t fd_remaining(int fd)
{
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode))
        return -1;
    off_t cur = lseek(fd, 0, SEEK_CUR);
    if (cur < 0 || cur > sb.st_size)
        return -1;
    return (int64_t)(sb.st_size - cur);
}

static knut_status src_file_read(void *ctx, void *buf, size_t len, size_t *nread,
                                 knut_error *err)
{
    FILE *f = ctx;
    *nread = fread(buf, 1, len, f);
    if (*nread < len && ferror(f))
        return knut_error_set(err, KNUT_EIO, "IPC read: %s", strerror(errno));
    return KNUT_OK;
}

static int64_t src_file_remaining(void *ctx)
{
    FILE *f = ctx;
    struct stat sb;
    int fd = fileno(f);
    if (fd < 0 || fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode))
        return -1;
    off_t cur = ftello(f);
    if (cur < 0 || cur > sb.st_size)
        return -1;
    return (int64_t)(sb.st_size - cur);
}

static knut_status src_fd_read(void *ctx, void *buf, size_t len, size_t *nread,
                               knut_error *err)
{
    int fd = (int)(intptr_t)ctx;
    size_t got = 0;
    while (got < len) {
        ssize_t n = read(fd, (uint8_t *)buf + got, len - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            *nread = got;
            return knut_error_set(err, KNUT_EIO, "IPC read from fd %d: %s", fd,
                                  strerror(errno));
        }
        if (n == 0)
            break;
        got += (size_t)n;
    }
    *nread = got;
    return KNUT_OK;
}

static int64_t src_fd_remaining(void *ctx)
{
    return fd_remaining((int)(intptr_t)ctx);
}

knut_arrow_ipc_source knut_arrow_ipc_source_file(FILE *f)
{
    return (knut_arrow_ipc_source){src_file_read, src_file_remaining, NULL, f};
}

knut_arrow_ipc_source knut_arrow_ipc_source_fd(int fd)
{
    return (knut_arrow_ipc_source){src_fd_read, src_fd_remaining, NULL, (void *)(intptr_t)fd};
}

typedef struct mem_src {
    const uint8_t *data;
    size_t len, pos;
} mem_src;

static knut_status src_mem_read(void *ctx, void *buf, size_t len, size_t *nread,
                                knut_error *err)
{
    mem_src *m = ctx;
    size_t n = m->len - m->pos < len ? m->len - m->pos : len;
    if (n)
        memcpy(buf, m->data + m->pos, n);
    m->pos += n;
    *nread = n;
    return KNUT_OK;
}

static int64_t src_mem_remaining(void *ctx)
{
    mem_src *m = ctx;
    return (int64_t)(m->len - m->pos);
}

knut_status knut_arrow_ipc_source_mem(knut_arrow_ipc_source *out, const void *data, size_t len,
                                      knut_error *err)
{
    KNUT_ASSERT_ARG(err, out && (data || len == 0));
    mem_src *m = malloc(sizeof *m);
    if (!m)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory creating an IPC source");
    *m = (mem_src){data, len, 0};
    *out = (knut_arrow_ipc_source){src_mem_read, src_mem_remaining, free, m};
    return KNUT_OK;
}

/* ---- framing ----------------------------------------------------------- */

/* Reads exactly n bytes; *got < n means the input ended. */
static knut_status read_full(knut_arrow_ipc_reader *r, void *buf, size_t n, size_t *got,
                             knut_error *err)
{
    *got = 0;
    while (*got < n) {
        size_t k = 0;
        knut_status st = r->src.read(r->src.ctx, (uint8_t *)buf + *got, n - *got, &k, err);
        if (st)
            return st;
        if (k == 0)
            break;
        *got += k;
    }
    r->pos += (int64_t)*got;
    return KNUT_OK;
}

static int64_t remaining(knut_arrow_ipc_reader *r)
{
    return r->src.remaining ? r->src.remaining(r->src.ctx) : -1;
}

static knut_status truncated(knut_error *err, const char *what, int64_t need, int64_t have)
{
    return knut_error_set(err, KNUT_EPARSE, "stream truncated in %s: %lld bytes needed, %lld left",
                          what, (long long)need, (long long)have);
}

/* Reads a body of len bytes into a refcounted block, recycled from the
 * pool when one fits. */
static knut_status body_read(knut_arrow_ipc_reader *r, int64_t len, knut_ipc_body **out,
                             knut_error *err)
{
    int64_t left = remaining(r);
    size_t got;
    knut_status st;
    if (left >= 0 && len > left)
        return truncated(err, "the message body", len, left);
    /* a recycled block is memory already held, so a lying length costs
     * nothing extra: no need to grow into it step by step */
    knut_ipc_body *b = knut_arrow__ipc_body_reuse(r->pool, len);
    int64_t have = 0, cap = (b || left >= 0 || len <= BODY_STEP) ? len : BODY_STEP;
    if (!b)
        b = knut_arrow__ipc_body_new(r->pool, cap);
    if (!b)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory for a %lld-byte body",
                              (long long)cap);
    for (;;) {
        st = read_full(r, knut_arrow__ipc_body_data(b) + have, (size_t)(cap - have), &got, err);
        if (st)
            goto fail;
        have += (int64_t)got;
        if (have < cap) {
            st = truncated(err, "the message body", len, have);
            goto fail;
        }
        if (cap == len)
            break;
        /* the bytes so far were real: allow twice as many */
        cap = cap > len / 2 ? len : cap * 2;
        if (knut_arrow__ipc_body_resize(b, cap)) {
            st = knut_error_set(err, KNUT_ENOMEM, "out of memory for a %lld-byte body",
                                (long long)cap);
            goto fail;
        }
    }
    *out = b;
    return KNUT_OK;

fail:
    knut_arrow__ipc_body_unref(b);
    return st;
}

/*
 * Reads one message. *eos is set at the end-of-stream marker or a clean end
 * of input between messages. Otherwise *msg is the Message table (in
 * r->meta, valid until the next call) and *body its body (caller unrefs).
 */
static knut_status message_read(knut_arrow_ipc_reader *r, knut_fb_table *msg, uint8_t *type,
                                knut_ipc_body **body, int64_t *body_len, int *eos,
                                knut_error *err)
{
    uint32_t word;
    size_t got;
    int32_t meta_len;
    *eos = 0;
    *body = NULL;
    knut_status st = read_full(r, &word, 4, &got, err);
    if (st)
        return st;
    if (got == 0) { /* writers may end without the marker */
        *eos = 1;
        return KNUT_OK;
    }
    if (got < 4)
        return truncated(err, "a message length", 4, (int64_t)got);
    if (word == KNUT_IPC_CONTINUATION) {
        st = read_full(r, &word, 4, &got, err);
        if (st)
            return st;
        if (got < 4)
            return truncated(err, "a message length", 4, (int64_t)got);
    }
    /* else: pre-1.0 framing, the word was the length itself */
    memcpy(&meta_len, &word, 4);
    if (meta_len == 0) {
        *eos = 1;
        return KNUT_OK;
    }
    if (meta_len < 0)
        return knut_error_set(err, KNUT_EPARSE, "negative metadata length %d", meta_len);
    if (meta_len > r->max_metadata)
        return knut_error_set(err, KNUT_ETOOBIG,
                              "metadata length %d exceeds the limit of %lld bytes", meta_len,
                              (long long)r->max_metadata);
    int64_t left = remaining(r);
    if (left >= 0 && meta_len > left)
        return truncated(err, "the metadata", meta_len, left);
    if ((size_t)meta_len > r->meta_cap) {
        uint8_t *nm = realloc(r->meta, (size_t)meta_len);
        if (!nm)
            return knut_error_set(err, KNUT_ENOMEM, "out of memory for %d bytes of metadata",
                                  meta_len);
        r->meta = nm;
        r->meta_cap = (size_t)meta_len;
    }
    st = read_full(r, r->meta, (size_t)meta_len, &got, err);
    if (st)
        return st;
    if (got < (size_t)meta_len)
        return truncated(err, "the metadata", meta_len, (int64_t)got);

    int16_t version;
    int present;
    knut_fb_table root;
    st = knut_arrow__fb_root(&root, r->meta, (size_t)meta_len, err);
    if (!st)
        st = knut_arrow__fb_read_i16(&root, KNUT_IPC_MESSAGE_VERSION, 0, &version, err);
    if (!st)
        st = knut_arrow__fb_read_u8(&root, KNUT_IPC_MESSAGE_HEADER_TYPE, 0, type, err);
    if (!st)
        st = knut_arrow__fb_read_table(&root, KNUT_IPC_MESSAGE_HEADER, msg, &present, err);
    if (!st)
        st = knut_arrow__fb_read_i64(&root, KNUT_IPC_MESSAGE_BODY_LENGTH, 0, body_len, err);
    if (st)
        return st;
    if (version < KNUT_IPC_METADATA_V4 || version > KNUT_IPC_METADATA_V5)
        return knut_error_set(err, KNUT_EUNSUPPORTED,
                              "metadata version V%d is not supported (V4 and V5 are)",
                              version + 1);
    if (!present)
        return knut_error_set(err, KNUT_EPARSE, "message has no header");
    if (*body_len < 0)
        return knut_error_set(err, KNUT_EPARSE, "negative body length %lld",
                              (long long)*body_len);
    if (*body_len > r->max_body)
        return knut_error_set(err, KNUT_ETOOBIG,
                              "body length %lld exceeds the limit of %lld bytes",
                              (long long)*body_len, (long long)r->max_body);
    return body_read(r, *body_len, body, err);
}

static const char *header_name(uint8_t t)
{
    switch (t) {
    case KNUT_IPC_HDR_SCHEMA: return "Schema";
    case KNUT_IPC_HDR_DICTIONARY_BATCH: return "DictionaryBatch";
    case KNUT_IPC_HDR_RECORD_BATCH: return "RecordBatch";
    case KNUT_IPC_HDR_TENSOR: return "Tensor";
    case KNUT_IPC_HDR_SPARSE_TENSOR: return "SparseTensor";
    default: return "unknown";
    }
}

/* ---- reader ------------------------------------------------------------ */

/* Remembers a failure: after a torn message the framing is lost. */
static knut_status reader_fail(knut_arrow_ipc_reader *r, int64_t index, int64_t start,
                               knut_status st, knut_error *err)
{
    knut_error_prefix(err, "message %lld at byte %lld: ", (long long)index, (long long)start);
    r->broken = st;
    snprintf(r->broken_msg, sizeof r->broken_msg, "%s", err ? err->message : knut_strerror(st));
    return st;
}

knut_status knut_arrow_ipc_reader_new(knut_arrow_ipc_reader **out, knut_arrow_ipc_source src,
                                      const knut_arrow_ipc_read_options *opts,
                                      knut_error *err)
{
    knut_arrow_ipc_reader *r = NULL;
    knut_ipc_body *body = NULL;
    knut_fb_table msg;
    uint8_t type = 0;
    int64_t body_len = 0;
    int eos = 0;
    knut_status st;

    if (out)
        *out = NULL;
    if (!out || !src.read) {
        st = knut_error_set(err, KNUT_EINVAL, "%s: invalid argument", __func__);
        goto fail_src;
    }
    /* src is taken over also when the options are refused */
    if (opts && opts->version != KNUT_ARROW_IPC_READ_OPTIONS_VERSION && src.release)
        src.release(src.ctx);
    KNUT_CHECK_VERSION(opts, KNUT_ARROW_IPC_READ_OPTIONS_VERSION, err);
    r = calloc(1, sizeof *r);
    if (!r) {
        st = knut_error_set(err, KNUT_ENOMEM, "out of memory creating an IPC reader");
        goto fail_src;
    }
    r->src = src;
    r->pool = knut_arrow__ipc_pool_new();
    if (!r->pool) {
        free(r);
        st = knut_error_set(err, KNUT_ENOMEM, "out of memory creating an IPC reader");
        goto fail_src;
    }
    r->max_metadata = opts && opts->max_metadata > 0 ? opts->max_metadata
                                                     : KNUT_ARROW_IPC_MAX_METADATA_DEFAULT;
    if (r->max_metadata > INT32_MAX)
        r->max_metadata = INT32_MAX;
    r->max_body = opts && opts->max_body > 0 ? opts->max_body : KNUT_ARROW_IPC_MAX_BODY_DEFAULT;
    r->max_fields = opts && opts->max_fields > 0 ? opts->max_fields
                                                 : KNUT_ARROW_IPC_MAX_FIELDS_DEFAULT;

    st = message_read(r, &msg, &type, &body, &body_len, &eos, err);
    if (!st && eos)
        st = knut_error_set(err, KNUT_EPARSE, "stream has no Schema message");
    if (!st && type != KNUT_IPC_HDR_SCHEMA)
        st = knut_error_set(err, KNUT_EPARSE, "expected a Schema message, got %s",
                            header_name(type));
    if (!st)
        st = knut_arrow__ipc_schema_decode(&msg, r->max_fields, &r->schema, err);
    if (!st)
        st = knut_arrow__ipc_fields_init(&r->fields, &r->schema, err);
    knut_arrow__ipc_body_unref(body);
    if (st) {
        knut_error_prefix(err, "message 0 at byte 0: ");
        knut_arrow_ipc_reader_free(r);
        return st;
    }
    r->index = 1;
    *out = r;
    return KNUT_OK;

fail_src:
    if (src.release)
        src.release(src.ctx);
    return st;
}

const struct ArrowSchema *knut_arrow_ipc_reader_schema(const knut_arrow_ipc_reader *r)
{
    return r ? &r->schema : NULL;
}

knut_status knut_arrow_ipc_reader_next(knut_arrow_ipc_reader *r, struct ArrowArray *out,
                                       knut_error *err)
{
    KNUT_ASSERT_ARG(err, r && out);
    out->release = NULL;
    if (r->broken)
        return knut_error_set(err, r->broken, "%s", r->broken_msg);
    if (r->done)
        return KNUT_OK;
    knut_fb_table msg;
    knut_ipc_body *body = NULL;
    uint8_t type;
    int64_t body_len, start = r->pos, index = r->index++;
    int eos;
    knut_status st = message_read(r, &msg, &type, &body, &body_len, &eos, err);
    if (!st && eos) {
        r->done = 1;
        return KNUT_OK;
    }
    if (!st) {
        if (type == KNUT_IPC_HDR_RECORD_BATCH)
            st = knut_arrow__ipc_batch_decode(&msg, &r->schema, &r->fields, body, body_len, out,
                                              err);
        else if (type == KNUT_IPC_HDR_DICTIONARY_BATCH)
            st = knut_error_set(err, KNUT_EUNSUPPORTED,
                                "dictionary batches are not supported");
        else if (type == KNUT_IPC_HDR_SCHEMA)
            st = knut_error_set(err, KNUT_EPARSE, "a second Schema message");
        else if (type == KNUT_IPC_HDR_TENSOR || type == KNUT_IPC_HDR_SPARSE_TENSOR)
            st = knut_error_set(err, KNUT_EUNSUPPORTED, "%s messages are not supported",
                                header_name(type));
        else
            st = knut_error_set(err, KNUT_EPARSE, "unknown message header type %u", type);
    }
    knut_arrow__ipc_body_unref(body);
    if (st)
        return reader_fail(r, index, start, st, err);
    return KNUT_OK;
}

void knut_arrow_ipc_reader_free(knut_arrow_ipc_reader *r)
{
    if (!r)
        return;
    if (r->src.release)
        r->src.release(r->src.ctx);
    knut_arrow_schema_release(&r->schema);
    knut_arrow__ipc_fields_reset(&r->fields);
    knut_arrow__ipc_pool_close(r->pool);
    free(r->meta);
    free(r);
}

/* ---- C stream ---------------------------------------------------------- */

typedef struct ipc_stream {
    knut_arrow_ipc_reader *reader;
    knut_error err;
} ipc_stream;

/* errno-style codes, as the C stream interface asks for */
static int status_errno(knut_status st)
{
    switch (st) {
    case KNUT_OK: return 0;
    case KNUT_ENOMEM: return ENOMEM;
    case KNUT_ETOOBIG: return EOVERFLOW;
    case KNUT_EUNSUPPORTED: return ENOTSUP;
    case KNUT_EPARSE:
    case KNUT_EINVAL: return EINVAL;
    default: return EIO;
    }
}

static int stream_get_schema(struct ArrowArrayStream *s, struct ArrowSchema *out)
{
    ipc_stream *p = s->private_data;
    knut_error_clear(&p->err);
    return status_errno(knut_arrow_schema_deep_copy(out, &p->reader->schema, &p->err));
}

static int stream_get_next(struct ArrowArrayStream *s, struct ArrowArray *out)
{
    ipc_stream *p = s->private_data;
    knut_error_clear(&p->err);
    return status_errno(knut_arrow_ipc_reader_next(p->reader, out, &p->err));
}

static const char *stream_last_error(struct ArrowArrayStream *s)
{
    ipc_stream *p = s->private_data;
    return p->err.code ? p->err.message : NULL;
}

static void stream_release(struct ArrowArrayStream *s)
{
    if (!s || !s->release)
        return;
    ipc_stream *p = s->private_data;
    knut_arrow_ipc_reader_free(p->reader);
    free(p);
    s->release = NULL;
}

knut_status knut_arrow_ipc_stream_open(struct ArrowArrayStream *out, knut_arrow_ipc_source src,
                                       const knut_arrow_ipc_read_options *opts,
                                       knut_error *err)
{
    if (!out) {
        if (src.release)
            src.release(src.ctx);
        return knut_error_set(err, KNUT_EINVAL, "%s: invalid argument: out", __func__);
    }
    out->release = NULL;
    ipc_stream *p = calloc(1, sizeof *p);
    if (!p) {
        if (src.release)
            src.release(src.ctx);
        return knut_error_set(err, KNUT_ENOMEM, "out of memory creating an IPC stream");
    }
    knut_status st = knut_arrow_ipc_reader_new(&p->reader, src, opts, err);
    if (st) {
        free(p);
        return st;
    }
    out->get_schema = stream_get_schema;
    out->get_next = stream_get_next;
    out->get_last_error = stream_last_error;
    out->release = stream_release;
    out->private_data = p;
    return KNUT_OK;
}
