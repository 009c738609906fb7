/*
 * Internal to the self-test (selftest.c: a small Flight SQL client on the
 * net part's gRPC channel; selftest_checks.c: the checklist of
 * docs/serve.md "Self-test" and its table). Every call's status is kept,
 * so a check can say what the server answered instead of failing blind.
 */
#ifndef KNUT_SERVE_SELFTEST_INT_H
#define KNUT_SERVE_SELFTEST_INT_H

#include <stdio.h>

#include "serve_int.h"

/* Cap on what one check reads back (a metadata listing, a small query). */
#define ST_MAX_RESULT ((size_t)64 << 20)

typedef struct st_client {
    knut_net_grpc_channel *ch;
    knut_net_grpc_metadata md; /* authorization, when a token is given */
    int64_t timeout_ms;
} st_client;

/* The end of one call: the gRPC code and message (code 0 on OK). */
typedef struct st_status {
    int code;
    char message[512];
} st_status;

/* What a DoGet returned: the stream's schema and its batches, read. */
typedef struct st_result {
    knut_buf ipc;                 /* the IPC stream the FlightData made */
    knut_arrow_ipc_reader *reader;
    struct ArrowArray *batches;   /* n of them, each released by knut_serve__st_result_reset */
    size_t n;
    int64_t rows;
} st_result;

/* The FlightInfo of a command (Any-packed message m of Flight SQL type
 * name); *info NULL when the call failed (then st says why). A transport
 * or decoding failure of our own is the return value. */
knut_status knut_serve__st_flight_info(st_client *c, const char *method, const char *name,
                           const ProtobufCMessage *m, KnutServe__FlightInfo **info,
                           st_status *st, knut_error *err);
/* GetSchema of the same: the schema bytes into out. */
knut_status knut_serve__st_get_schema(st_client *c, const char *name, const ProtobufCMessage *m,
                          knut_buf *out, st_status *st, knut_error *err);
/* DoGet of a ticket into r (reset first). */
knut_status knut_serve__st_do_get(st_client *c, const ProtobufCBinaryData *ticket, st_result *r,
                      st_status *st, knut_error *err);
void knut_serve__st_result_reset(st_result *r);
/* An encapsulated IPC Schema (FlightInfo.schema, ...) decoded into out. */
knut_status knut_serve__st_schema_decode(const uint8_t *data, size_t len, struct ArrowSchema *out,
                             knut_error *err);
/* DoAction type with body; the result bodies concatenated, each as a
 * length-prefixed (uint32) record, into out. */
knut_status knut_serve__st_do_action(st_client *c, const char *type, const knut_buf *body,
                                     knut_buf *out,
                         st_status *st, knut_error *err);
/* A unary or server-streaming call of raw bytes: the messages read,
 * counted into *n, each as a uint32 length and its bytes into all (may be
 * NULL). */
knut_status knut_serve__st_raw_call(st_client *c, const char *method, const void *req, size_t len,
                        knut_buf *all, size_t *n, st_status *st, knut_error *err);
/* DoPut of descriptor (an Any-packed command) with the batch of schema
 * (NULL: a descriptor-only message); the first PutResult's app_metadata
 * into out. */
knut_status knut_serve__st_do_put(st_client *c, const char *name, const ProtobufCMessage *m,
                      const struct ArrowSchema *schema, const struct ArrowArray *batch,
                      knut_buf *out, st_status *st, knut_error *err);

/* "" when schema has exactly the fields of spec ("name:format:N|NN;..."
 * top level; nested types by format only), else what differs, into why. */
int knut_serve__st_schema_is(const struct ArrowSchema *schema, const char *spec, char *why,
                             size_t cap);
/* 1 when a and b have the same fields (names, formats, nullability, and
 * the same of their children), metadata aside; else why. */
int knut_serve__st_schema_same(const struct ArrowSchema *a, const struct ArrowSchema *b, char *why,
                   size_t cap);

/* One run of the checklist: the client, the table's stream, the counts. */
#define DETAIL 400
typedef struct st_run {
    st_client c;
    FILE *out;
    int pass, fail;
} st_run;
/* Prints one table row (detail cut to DETAIL characters) and counts it. */
void knut_serve__st_row(st_run *r, const char *name, int ok, const char *fmt, ...) KNUT_PRINTF(4,
                        5);
/* The checks of selftest_checks.c; KNUT_OK unless our own side failed. */
knut_status knut_serve__st_checks_metadata(st_run *r, knut_error *err);
knut_status knut_serve__st_checks_statements(st_run *r, knut_error *err);

#endif
