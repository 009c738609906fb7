/*
 * knut arrow, IPC: reading and writing the Arrow IPC stream format.
 * Part of knut/arrow.h.
 */
#ifndef KNUT_ARROW_IPC_H
#define KNUT_ARROW_IPC_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "knut/arrow_types.h"
#include "knut/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Arrow IPC stream format (src/arrow/ipc_*.c) ---- */

/*
 * The Arrow IPC *streaming* format: a Schema message, RecordBatch messages,
 * then an end-of-stream marker. Each message is framed as 0xFFFFFFFF, an
 * int32 metadata length, a FlatBuffers Message (metadata version V5) padded
 * so the body starts 8-byte aligned, then the body buffers (8-byte aligned
 * and padded). No compression, no dictionaries.
 *
 * Types: null, bool, int8..int64, uint8..uint64, half/float/double, utf8,
 * large_utf8, binary, large_binary, fixed_size_binary, decimal128, date32,
 * date64, time32/64, timestamp (unit + timezone), duration, intervals,
 * list, large_list, struct, map; dense_union is written, not read. Field
 * names, nullability and the schema's
 * and fields' custom metadata are kept. Written and read on little-endian
 * hosts only.
 */

/* Where a writer puts bytes: write() stores all len bytes or fails (and
 * fills err). */
typedef struct knut_arrow_ipc_sink {
    knut_status (*write)(void *ctx, const void *data, size_t len, knut_error *err);
    void *ctx;
} knut_arrow_ipc_sink;

/* Sinks over a FILE* (fwrite; not closed), a file descriptor (write(2)
 * with EINTR/short-write handling; not closed) and a knut_buf (appends;
 * the buffer's cap applies: KNUT_ETOOBIG). Each must outlive the writer. */
KNUT_EXTERN knut_arrow_ipc_sink knut_arrow_ipc_sink_file(FILE *f);
KNUT_EXTERN knut_arrow_ipc_sink knut_arrow_ipc_sink_fd(int fd);
KNUT_EXTERN knut_arrow_ipc_sink knut_arrow_ipc_sink_buf(knut_buf *b);

typedef struct knut_arrow_ipc_writer knut_arrow_ipc_writer;

/*
 * Makes a writer and writes the Schema message. schema must be a struct
 * ("+s") whose children are the columns; it is copied. Dictionary-encoded
 * or unsupported column types: KNUT_EUNSUPPORTED naming the column; a
 * failing sink passes its own error on (KNUT_EIO, KNUT_ETOOBIG). The caller
 * frees *out with knut_arrow_ipc_writer_free; *out is NULL on failure.
 */
KNUT_EXTERN knut_status knut_arrow_ipc_writer_new(knut_arrow_ipc_writer **out,
                                                  knut_arrow_ipc_sink sink,
                                                  const struct ArrowSchema *schema,
                                                  knut_error *err);

/*
 * Writes one RecordBatch message. batch is a struct array matching the
 * schema; it is read, not consumed (the caller still releases it). Sliced
 * arrays (offset != 0, at any level) are written re-based; null counts of
 * -1 are computed. The batch is checked at KNUT_ARROW_VALIDATE_DEFAULT
 * first, so a malformed in-process array is an error, not a wild read
 * (KNUT_EINVAL naming the column); sink errors as above.
 */
KNUT_EXTERN knut_status knut_arrow_ipc_writer_write(knut_arrow_ipc_writer *w,
                                                    const struct ArrowArray *batch,
                                                    knut_error *err);

/* Writes the end-of-stream marker (0xFFFFFFFF, int32 0). Further writes
 * fail. Idempotent. */
KNUT_EXTERN knut_status knut_arrow_ipc_writer_finish(knut_arrow_ipc_writer *w, knut_error *err);

/* Frees w (NULL-safe); does not write the end-of-stream marker. */
KNUT_EXTERN void knut_arrow_ipc_writer_free(knut_arrow_ipc_writer *w);

/* Bytes handed to the sink so far (framing, metadata, bodies). */
KNUT_EXTERN int64_t knut_arrow_ipc_writer_bytes(const knut_arrow_ipc_writer *w);

/* Writes a whole stream (schema, every batch, end-of-stream marker). The
 * stream is read to its end but not released (the caller's). Errors as
 * the writer's, and the stream's own from get_next. */
KNUT_EXTERN knut_status knut_arrow_ipc_write_stream(knut_arrow_ipc_sink sink,
                                                    struct ArrowArrayStream *stream,
                                                    knut_error *err);

/*
 * Where a reader gets bytes. read() fills buf with up to len bytes and sets
 * *nread; fewer than len only at the end of the input (0 = end). remaining
 * (may be NULL) says how many bytes are left, or -1 if unknown; with it,
 * sizes declared by the stream are checked before anything is allocated.
 * release (may be NULL) is called once when the reader is done with ctx.
 */
typedef struct knut_arrow_ipc_source {
    knut_status (*read)(void *ctx, void *buf, size_t len, size_t *nread, knut_error *err);
    int64_t (*remaining)(void *ctx);
    void (*release)(void *ctx);
    void *ctx;
} knut_arrow_ipc_source;

/* Sources over a FILE* and a file descriptor (not closed; must outlive the
 * reader), and over memory (the bytes are not copied and must outlive the
 * reader; the small cursor it allocates is freed by the reader). */
KNUT_EXTERN knut_arrow_ipc_source knut_arrow_ipc_source_file(FILE *f);
KNUT_EXTERN knut_arrow_ipc_source knut_arrow_ipc_source_fd(int fd);
/* (source_mem fails only with KNUT_ENOMEM.) */
KNUT_EXTERN knut_status knut_arrow_ipc_source_mem(knut_arrow_ipc_source *out, const void *data,
                                                  size_t len, knut_error *err);

/* Limits on what a stream may declare; 0 means the default. */
#define KNUT_ARROW_IPC_MAX_METADATA_DEFAULT ((int64_t)64 << 20)
#define KNUT_ARROW_IPC_MAX_BODY_DEFAULT ((int64_t)2 << 30)
#define KNUT_ARROW_IPC_MAX_FIELDS_DEFAULT ((int64_t)1 << 16)

typedef struct knut_arrow_ipc_read_options {
    int version;          /* KNUT_ARROW_IPC_READ_OPTIONS_VERSION */
    int64_t max_metadata; /* bytes of FlatBuffers metadata per message */
    int64_t max_body;     /* bytes of body per message */
    int64_t max_fields;   /* fields in the schema, nested ones included */
} knut_arrow_ipc_read_options;

#define KNUT_ARROW_IPC_READ_OPTIONS_VERSION 1
#define KNUT_ARROW_IPC_READ_OPTIONS_INIT {.version = KNUT_ARROW_IPC_READ_OPTIONS_VERSION}

typedef struct knut_arrow_ipc_reader knut_arrow_ipc_reader;

/*
 * Makes a reader over src (taking it over: its release is called by the
 * reader, also on failure) and reads the Schema message. opts may be NULL.
 * Accepts the current framing and the pre-1.0 one without the 0xFFFFFFFF
 * marker. Limits exceeded: KNUT_ETOOBIG; malformed bytes: KNUT_EPARSE;
 * dictionaries, compression, unknown types: KNUT_EUNSUPPORTED. Messages
 * name the message index (0 = schema) and its byte offset in the stream.
 */
KNUT_EXTERN knut_status knut_arrow_ipc_reader_new(knut_arrow_ipc_reader **out,
                                                  knut_arrow_ipc_source src,
                                                  const knut_arrow_ipc_read_options *opts,
                                                  knut_error *err);

/* The stream's schema (owned by the reader). */
KNUT_EXTERN const struct ArrowSchema *knut_arrow_ipc_reader_schema(const knut_arrow_ipc_reader *r);

/*
 * Reads the next RecordBatch into *out (a struct array, caller releases).
 * At the end of the stream returns KNUT_OK with out->release == NULL. The
 * arrays point into the message body, shared and freed with the last
 * release; every buffer is checked against the body and the batch is
 * validated at KNUT_ARROW_VALIDATE_FULL before it is returned. Errors as
 * knut_arrow_ipc_reader_new, plus KNUT_EINVAL for a batch that fails
 * validation and the source's own (KNUT_EIO).
 */
KNUT_EXTERN knut_status knut_arrow_ipc_reader_next(knut_arrow_ipc_reader *r, struct ArrowArray *out,
                                                   knut_error *err);

/* Frees r (NULL-safe); arrays already returned stay valid. */
KNUT_EXTERN void knut_arrow_ipc_reader_free(knut_arrow_ipc_reader *r);

/*
 * The reader as a C stream: reads the schema now (errors are returned
 * here), batches on get_next (released array at the end). Takes src over
 * (also on failure); opts (may be NULL) caps as for the reader. The caller
 * releases *out.
 */
KNUT_EXTERN knut_status knut_arrow_ipc_stream_open(struct ArrowArrayStream *out,
                                                   knut_arrow_ipc_source src,
                                                   const knut_arrow_ipc_read_options *opts,
                                                   knut_error *err);

#ifdef __cplusplus
}
#endif

#endif /* KNUT_ARROW_IPC_H */
