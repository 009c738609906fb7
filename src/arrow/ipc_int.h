/*
 * Shared internals of the Arrow IPC reader and writer: the numbers from
 * the Arrow format's Message.fbs / Schema.fbs that both sides use, the
 * schema <-> FlatBuffers conversion, and the pre-order field list that
 * fixes how many field nodes and buffers a record batch carries.
 */
#ifndef KNUT_ARROW_IPC_INT_H
#define KNUT_ARROW_IPC_INT_H

#include "ipc_fb.h"
#include "knut/arrow.h"

/* Every message since format 0.15 starts with this marker so that a reader
 * can tell a message from the legacy int32 length prefix (which was never
 * negative); 0xFFFFFFFF followed by a zero length ends the stream. */
#define KNUT_IPC_CONTINUATION 0xFFFFFFFFu

/* MetadataVersion: V4 = 3 (format 0.8+) and V5 = 4 (1.0+, what we write).
 * They differ only for unions, which knut does not support. */
#define KNUT_IPC_METADATA_V4 3
#define KNUT_IPC_METADATA_V5 4

/* IPC bodies: every buffer starts at a multiple of 8 (the spec's minimum). */
#define KNUT_IPC_ALIGN 8

/* MessageHeader union members. */
enum {
    KNUT_IPC_HDR_SCHEMA = 1,
    KNUT_IPC_HDR_DICTIONARY_BATCH = 2,
    KNUT_IPC_HDR_RECORD_BATCH = 3,
    KNUT_IPC_HDR_TENSOR = 4,
    KNUT_IPC_HDR_SPARSE_TENSOR = 5
};

/* Field ids (declaration order in the .fbs; a union takes two ids: its
 * type byte, then its value). */
enum { KNUT_IPC_MESSAGE_VERSION = 0, KNUT_IPC_MESSAGE_HEADER_TYPE = 1,
       KNUT_IPC_MESSAGE_HEADER = 2, KNUT_IPC_MESSAGE_BODY_LENGTH = 3 };
enum { KNUT_IPC_SCHEMA_ENDIANNESS = 0, KNUT_IPC_SCHEMA_FIELDS = 1,
       KNUT_IPC_SCHEMA_METADATA = 2 };
enum { KNUT_IPC_FIELD_NAME = 0, KNUT_IPC_FIELD_NULLABLE = 1, KNUT_IPC_FIELD_TYPE_TYPE = 2,
       KNUT_IPC_FIELD_TYPE = 3, KNUT_IPC_FIELD_DICTIONARY = 4, KNUT_IPC_FIELD_CHILDREN = 5,
       KNUT_IPC_FIELD_METADATA = 6 };
enum { KNUT_IPC_KV_KEY = 0, KNUT_IPC_KV_VALUE = 1 };
enum { KNUT_IPC_BATCH_LENGTH = 0, KNUT_IPC_BATCH_NODES = 1, KNUT_IPC_BATCH_BUFFERS = 2,
       KNUT_IPC_BATCH_COMPRESSION = 3 };

/* FieldNode {length, null_count} and Buffer {offset, length}: two int64. */
#define KNUT_IPC_STRUCT_SIZE 16

/* One field of the schema (columns and nested fields, in pre-order, which
 * is the order of field nodes in a record batch). */
typedef struct knut_ipc_field {
    const struct ArrowSchema *schema;
    knut_arrow_type_info type;
    int n_buffers; /* IPC buffers of this field (no buffers for null) */
} knut_ipc_field;

typedef struct knut_ipc_fields {
    knut_ipc_field *items;
    int64_t n;
    int64_t n_buffers; /* sum over items */
} knut_ipc_fields;

/* Flattens the columns of a struct schema; unsupported types and
 * dictionaries: KNUT_EUNSUPPORTED naming the column. */
knut_status knut_arrow__ipc_fields_init(knut_ipc_fields *out, const struct ArrowSchema *schema,
                                        knut_error *err);
void knut_arrow__ipc_fields_reset(knut_ipc_fields *f);

/* The Type table of t (ipc_type.c); *type_id gets its union member, 0 when
 * IPC has none for t. flags: the field's (a map's sorted keys). */
knut_fb_ref knut_arrow__ipc_type_encode(knut_fb_builder *b, const knut_arrow_type_info *t,
                                        int64_t flags, uint8_t *type_id);
/* Reads the Type of Field table f into *t (a map's sorted keys into *flags);
 * errors say "field '<path>': ...". */
knut_status knut_arrow__ipc_type_decode(const knut_fb_table *f, const char *path,
                                        knut_arrow_type_info *t, int64_t *flags, knut_error *err);

/* Encodes the columns of a struct schema as a Schema table. */
knut_status knut_arrow__ipc_schema_encode(knut_fb_builder *b, const struct ArrowSchema *schema,
                                          knut_fb_ref *out, knut_error *err);

/* Decodes a Schema table into a malloc-owned struct schema ("+s"). */
knut_status knut_arrow__ipc_schema_decode(const knut_fb_table *schema, int64_t max_fields,
                                          struct ArrowSchema *out, knut_error *err);

/* A message body shared by every array of one batch; freed, or kept for
 * reuse by the reader's pool, when the last holder lets go (arrays may be
 * released on any thread, before or after the reader is freed). */
typedef struct knut_ipc_body knut_ipc_body;

/* Recycles the storage of a reader's released bodies for its next
 * messages, so reading a stream does not fault in and zero fresh pages
 * for every batch. Holds at most a few bodies and 256 MiB. */
typedef struct knut_ipc_pool knut_ipc_pool;

knut_ipc_pool *knut_arrow__ipc_pool_new(void);
/* The reader lets go (NULL-safe): what the pool holds is freed now, and
 * bodies released later free their storage instead of pooling it. */
void knut_arrow__ipc_pool_close(knut_ipc_pool *p);

/* A pooled body that can hold len bytes (old data, one ref), or NULL when
 * none fits; its storage already exists, so it costs no new memory. */
knut_ipc_body *knut_arrow__ipc_body_reuse(knut_ipc_pool *p, int64_t len);
/* A fresh body of len bytes (uninitialised data, at least 8-byte aligned),
 * one ref; its storage goes back to p (NULL: nowhere) when released. */
knut_ipc_body *knut_arrow__ipc_body_new(knut_ipc_pool *p, int64_t len);
uint8_t *knut_arrow__ipc_body_data(knut_ipc_body *b);
/* Resizes the data to new_len, keeping its bytes (only before any array
 * refers to it). KNUT_ENOMEM on failure (b unchanged). */
knut_status knut_arrow__ipc_body_resize(knut_ipc_body *b, int64_t new_len);
void knut_arrow__ipc_body_unref(knut_ipc_body *b);

/*
 * Builds the struct array of one RecordBatch table over body (adding its
 * own references), checking node and buffer counts against fields, every
 * buffer against the body, sizes against lengths, then FULL validation.
 */
knut_status knut_arrow__ipc_batch_decode(const knut_fb_table *rb, const struct ArrowSchema *schema,
                                         const knut_ipc_fields *fields, knut_ipc_body *body,
                                         int64_t body_len, struct ArrowArray *out, knut_error *err);

#endif /* KNUT_ARROW_IPC_INT_H */
