/*
 * Arrow IPC to and from Flight's FlightData. The IPC writer produces the
 * stream format (marker, metadata length, Message flatbuffer, body); a
 * sink here cuts it at message boundaries and turns each message into one
 * FlightData, data_header = the flatbuffer and data_body = the body,
 * written straight into the protobuf bytes of the message (the body is
 * copied once, from the Arrow buffers into the message, and gRPC takes
 * the message over without another copy). data_body is field 1000, put
 * last, as Flight's own writers do.
 *
 * A message over max_message is not sent: the sink notes it and drops its
 * bytes, and the caller writes the batch again as two halves of rows.
 */
#include <stdlib.h>
#include <string.h>

#include "serve_int.h"

#define IPC_CONTINUATION 0xFFFFFFFFu
#define TAG_HEADER 0x12 /* field 2, length-delimited */

typedef struct fd_sink {
    knut_net_grpc_call *call;
    size_t max_message;
    uint8_t prefix[8];
    size_t prefix_len;
    uint8_t *meta; /* the metadata of the message being cut */
    size_t meta_len, meta_got, meta_cap;
    uint8_t *msg;  /* the FlightData being filled (NULL: dropping) */
    size_t msg_len, msg_cap;
    int64_t body_left;
    int in_body;
    int oversized; /* the last message was over max_message */
    knut_status failed; /* the IPC writer keeps a sink error to itself: noted here */
    int64_t messages;
} fd_sink;

static size_t varint_put(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    do {
        p[n++] = (uint8_t)((v & 0x7F) | (v > 0x7F ? 0x80 : 0));
        v >>= 7;
    } while (v);
    return n;
}

static size_t varint_len(uint64_t v)
{
    size_t n = 1;
    while (v > 0x7F) {
        v >>= 7;
        n++;
    }
    return n;
}

int64_t knut_serve__fb_body_length(const uint8_t *b, size_t n)
{
    uint32_t root;
    int32_t vt_off;
    uint16_t vt_len, field;
    int64_t v;
    if (n < 8)
        return -1;
    memcpy(&root, b, 4);
    if ((size_t)root + 4 > n)
        return -1;
    memcpy(&vt_off, b + root, 4);
    int64_t vt = (int64_t)root - vt_off;
    if (vt < 0 || (size_t)vt + 4 > n)
        return -1;
    memcpy(&vt_len, b + vt, 2);
    if ((size_t)vt + vt_len > n)
        return -1;
    if (vt_len < 12)
        return 0; /* field absent: 0 */
    memcpy(&field, b + vt + 10, 2);
    if (!field)
        return 0;
    if ((size_t)root + field + 8 > n)
        return -1;
    memcpy(&v, b + root + field, 8);
    return v;
}

static knut_status msg_send(fd_sink *k, knut_error *err)
{
    uint8_t *m = k->msg;
    k->msg = NULL;
    k->messages++;
    return knut_net_grpc_call_write_owned(k->call, m, k->msg_len, free, err);
}

/* The metadata is complete: size the FlightData, or note it is too big. */
static knut_status msg_begin(fd_sink *k, knut_error *err)
{
    int64_t body = knut_serve__fb_body_length(k->meta, k->meta_len);
    if (body < 0)
        return knut_error_set(err, KNUT_EINVAL, "IPC message without a readable body length");
    size_t need = 1 + varint_len(k->meta_len) + k->meta_len;
    if (body > 0)
        need += 2 + varint_len((uint64_t)body) + (size_t)body;
    k->body_left = body;
    k->in_body = 1;
    k->msg_len = 0;
    if (need > k->max_message) {
        k->oversized = 1;
        k->msg = NULL; /* drop this message's bytes */
    } else {
        if (!(k->msg = malloc(need)))
            return knut_error_set(err, KNUT_ENOMEM, "out of memory");
        k->msg_cap = need;
        uint8_t *p = k->msg;
        *p++ = TAG_HEADER;
        p += varint_put(p, k->meta_len);
        memcpy(p, k->meta, k->meta_len);
        p += k->meta_len;
        if (body > 0) {
            *p++ = 0xC2; /* field 1000, length-delimited: varint 8002 */
            *p++ = 0x3E;
            p += varint_put(p, (uint64_t)body);
        }
        k->msg_len = (size_t)(p - k->msg);
    }
    if (body == 0) {
        k->in_body = 0;
        if (k->msg)
            return msg_send(k, err);
    }
    return KNUT_OK;
}

static knut_status sink_write(void *ctx, const void *data, size_t len, knut_error *err)
{
    fd_sink *k = ctx;
    const uint8_t *p = data;
    knut_status st = KNUT_OK;
    while (len && st == KNUT_OK) {
        if (k->in_body) {
            size_t n = len < (uint64_t)k->body_left ? len : (size_t)k->body_left;
            if (k->msg)
                memcpy(k->msg + k->msg_len, p, n);
            k->msg_len += n;
            k->body_left -= (int64_t)n;
            p += n;
            len -= n;
            if (k->body_left == 0) {
                k->in_body = 0;
                if (k->msg)
                    st = msg_send(k, err);
            }
        } else if (k->prefix_len < 8) {
            size_t n = 8 - k->prefix_len < len ? 8 - k->prefix_len : len;
            memcpy(k->prefix + k->prefix_len, p, n);
            k->prefix_len += n;
            p += n;
            len -= n;
            if (k->prefix_len == 8) {
                uint32_t mark, mlen;
                memcpy(&mark, k->prefix, 4);
                memcpy(&mlen, k->prefix + 4, 4);
                if (mark != IPC_CONTINUATION) {
                    st = knut_error_set(err, KNUT_EINVAL, "IPC stream without its marker");
                    break;
                }
                if (mlen == 0) { /* end of stream: Flight ends with the gRPC stream */
                    k->prefix_len = 0;
                    continue;
                }
                if (mlen > k->meta_cap) {
                    uint8_t *m = realloc(k->meta, mlen);
                    if (!m) {
                        st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
                        break;
                    }
                    k->meta = m;
                    k->meta_cap = mlen;
                }
                k->meta_len = mlen;
                k->meta_got = 0;
            }
        } else {
            size_t n = k->meta_len - k->meta_got < len ? k->meta_len - k->meta_got : len;
            memcpy(k->meta + k->meta_got, p, n);
            k->meta_got += n;
            p += n;
            len -= n;
            if (k->meta_got == k->meta_len) {
                k->prefix_len = 0;
                st = msg_begin(k, err);
            }
        }
    }
    if (st != KNUT_OK && !k->failed)
        k->failed = st;
    return st;
}

knut_status knut_serve__schema_bytes(const struct ArrowSchema *schema, knut_buf *out,
                                     knut_error *err)
{
    knut_buf_clear(out);
    knut_arrow_ipc_writer *w = NULL;
    /* the writer writes the Schema message when it is made: that is all */
    knut_status st = knut_arrow_ipc_writer_new(&w, knut_arrow_ipc_sink_buf(out), schema, err);
    knut_arrow_ipc_writer_free(w);
    return st;
}

/* A view of rows [off, off + n) of batch: the top-level struct's offset
 * moves, the buffers stay the caller's. */
static struct ArrowArray slice_of(const struct ArrowArray *batch, int64_t off, int64_t n)
{
    struct ArrowArray s = *batch;
    s.offset = batch->offset + off;
    s.length = n;
    s.null_count = batch->null_count == 0 ? 0 : -1;
    return s;
}

static knut_status write_bounded(knut_arrow_ipc_writer *w, fd_sink *k,
                                 const struct ArrowArray *batch, knut_error *err)
{
    k->oversized = 0;
    knut_status st = knut_arrow_ipc_writer_write(w, batch, err);
    if (st == KNUT_OK && k->failed)
        st = k->failed; /* err holds the sink's message */
    if (st != KNUT_OK || !k->oversized)
        return st;
    if (batch->length <= 1)
        return knut_error_set(err, KNUT_ETOOBIG, "one row is over the %zu-byte message cap",
                              k->max_message);
    int64_t half = batch->length / 2;
    struct ArrowArray a = slice_of(batch, 0, half), b = slice_of(batch, half,
                                                                 batch->length - half);
    st = write_bounded(w, k, &a, err);
    return st != KNUT_OK ? st : write_bounded(w, k, &b, err);
}

knut_status knut_serve__stream_send(knut_net_grpc_call *call, struct ArrowArrayStream *stream,
                                    void (*fix)(struct ArrowSchema *), size_t max_message,
                                    int64_t *rows, knut_error *err)
{
    fd_sink k = {.call = call, .max_message = max_message};
    knut_arrow_ipc_sink sink = {sink_write, &k};
    knut_arrow_ipc_writer *w = NULL;
    struct ArrowSchema schema = {0};
    struct ArrowArray batch = {0};
    *rows = 0;
    int rc = stream->get_schema(stream, &schema);
    knut_status st = rc ? knut_arrow_stream_error(stream, rc, "result schema", err) : KNUT_OK;
    if (st == KNUT_OK && fix)
        fix(&schema);
    if (st == KNUT_OK)
        st = knut_arrow_ipc_writer_new(&w, sink, &schema, err);
    if (st == KNUT_OK && k.failed)
        st = k.failed;
    if (st == KNUT_OK && k.oversized)
        st = knut_error_set(err, KNUT_ETOOBIG, "the schema is over the message cap");
    while (st == KNUT_OK) {
        if (knut_net_grpc_call_cancelled(call)) {
            st = knut_error_set(err, KNUT_ECANCELLED, "the client went away");
            break;
        }
        rc = stream->get_next(stream, &batch);
        if (rc) {
            st = knut_arrow_stream_error(stream, rc, "reading the result", err);
            break;
        }
        if (!batch.release)
            break;
        st = write_bounded(w, &k, &batch, err);
        *rows += batch.length;
        knut_arrow_array_release(&batch);
    }
    knut_arrow_ipc_writer_free(w);
    knut_arrow_schema_release(&schema);
    free(k.meta);
    free(k.msg);
    return st;
}

knut_status knut_serve__flightdata_to_ipc(const KnutServe__FlightData *fd,
                                          knut_buf *out, knut_error *err)
{
    static const uint8_t zeros[8];
    size_t h = fd->data_header.len, hpad = (8 - (h % 8)) % 8;
    if (h == 0)
        return KNUT_OK; /* a descriptor-only message carries no IPC message */
    if (h > INT32_MAX - 8)
        return knut_error_set(err, KNUT_ETOOBIG, "FlightData header of %zu bytes", h);
    uint32_t prefix[2] = {IPC_CONTINUATION, (uint32_t)(h + hpad)};
    knut_buf_append(out, prefix, sizeof prefix);
    knut_buf_append(out, fd->data_header.data, h);
    knut_buf_append(out, zeros, hpad);
    knut_buf_append(out, fd->data_body.data, fd->data_body.len);
    return knut_buf_check(out, err);
}
