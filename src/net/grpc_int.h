/*
 * Internal to the gRPC files of the net part (src/net/grpc_*.c): library
 * start/stop, deadlines, slices and metadata between knut and gRPC types,
 * byte buffers into knut_buf, and the credentials from PEM files.
 */
#ifndef KNUT_NET_GRPC_INT_H
#define KNUT_NET_GRPC_INT_H

#include <grpc/byte_buffer.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>

#include "knut/net.h"

#define GRPC_LOG "net"
#define GRPC_DEFAULT_TIMEOUT_MS 30000

/* grpc_init / grpc_shutdown around each server and channel (reference
 * counted by gRPC itself). */
void knut_net__grpc_ref(void);
void knut_net__grpc_unref(void);

/* ms from now on the monotonic clock; ms < 0 means none (infinite). */
gpr_timespec knut_net__grpc_deadline(int64_t ms);
/* Milliseconds from now until t (0 when past); INT64_MAX if t is infinite. */
int64_t knut_net__grpc_remaining_ms(gpr_timespec t);

/* The bytes of bb into out (cleared first); KNUT_ETOOBIG over out's cap. */
knut_status knut_net__grpc_bb_read(grpc_byte_buffer *bb, knut_buf *out, knut_error *err);
/* A copy of data as a byte buffer; NULL when out of memory. */
grpc_byte_buffer *knut_net__grpc_bb_new(const void *data, size_t len);

/* md as a gRPC array pointing into md (valid while md is); *out NULL when
 * md is empty. Caller frees *out with free(). */
knut_status knut_net__grpc_md_out(const knut_net_grpc_metadata *md, grpc_metadata **out,
                                  knut_error *err);
/* Copies a received array into md (reset first). */
knut_status knut_net__grpc_md_in(const grpc_metadata_array *in, knut_net_grpc_metadata *md,
                                 knut_error *err);

/* A slice's text into dst (cut to fit, NUL-terminated). */
void knut_net__grpc_slice_str(grpc_slice s, char *dst, size_t n);

/* Server / channel credentials from tls (NULL: insecure). */
knut_status knut_net__grpc_server_creds(const knut_net_grpc_tls *tls,
                                        grpc_server_credentials **out, knut_error *err);
knut_status knut_net__grpc_channel_creds(const knut_net_grpc_tls *tls,
                                         grpc_channel_credentials **out, knut_error *err);

/* The server's side of one call (grpc_server.c owns the loop, grpc_call.c
 * the operations). */
struct knut_net_grpc_call {
    knut_net_grpc_server *srv;
    grpc_call *call;
    grpc_completion_queue *cq; /* the worker's queue: one call at a time on it */
    char method[256];
    knut_net_grpc_metadata md;
    gpr_timespec deadline;
    size_t max_send;
    knut_net_grpc_metadata headers; /* sent with the initial metadata */
    int sent_initial;
    int finished;
    int closed;    /* RECV_CLOSE_ON_SERVER completed */
    int cancelled; /* ... and said cancelled */
    uint64_t bytes_sent; /* response message bytes handed to gRPC */
    /* tags: addresses of these, so stray completions are told apart */
    char tag_close, tag_op;
};

/* Starts the close watch of a new call. */
knut_status knut_net__grpc_call_begin(knut_net_grpc_call *c, knut_error *err);
/* Finishes an unfinished call with st/err, waits for the close, unrefs. */
void knut_net__grpc_call_end(knut_net_grpc_call *c, knut_status st, const knut_error *err);
/* Non-zero once the server's shutdown began (grpc_server.c). */
int knut_net__grpc_server_stopping(const knut_net_grpc_server *s);

#endif /* KNUT_NET_GRPC_INT_H */
