/*
 * Internal to the spark part: the session's shared state, the request
 * metadata and user context every RPC carries, and the decoding of a
 * failed call into Spark's error class and SQLSTATE.
 */
#ifndef KNUT_SPARK_INT_H
#define KNUT_SPARK_INT_H

#include "knut/net.h"
#include "knut/spark.h"

#include "spark/base.pb-c.h"

#define SPARK_LOG "spark"
#define SPARK_SERVICE "/spark.connect.SparkConnectService/"
#define SPARK_CLIENT_TYPE "knut"

struct knut_spark_session {
    knut_spark_url url;
    knut_net_grpc_channel *ch;
    knut_net_grpc_metadata md; /* authorization (wiped on free), user agent */
    char peer[300];            /* sc://host:port */
    char session_id[37];
    char user_agent[256];
    int64_t timeout_ms;
};

/* Non-zero when s is a UUID string (8-4-4-4-12 hex). */
int knut_spark__is_uuid(const char *s);
/* A random (version 4) UUID into out[37]. */
knut_status knut_spark__uuid(char out[37], knut_error *err);

/* The UserContext every request carries (points into s). */
void knut_spark__user_ctx(const knut_spark_session *s, KnutSpark__UserContext *uc);

/* SQL parameters into q's named or positional arguments (pointing into
 * params and *out; free *out with knut_spark__args_free after packing). */
typedef struct knut_spark__args knut_spark__args;
knut_status knut_spark__args_set(KnutSpark__SQL *q, const knut_spark_param *params, size_t n,
                                 knut_spark__args **out, knut_error *err);
void knut_spark__args_free(knut_spark__args *a);

/* A unary RPC ("Interrupt") with req packed; the response into resp. On
 * failure err reads as knut_spark__call_error. */
knut_status knut_spark__unary(knut_spark_session *s, const char *rpc,
                              const ProtobufCMessage *req, knut_buf *resp,
                              knut_spark_error_info *info, knut_error *err);

/* Starts a server-streaming RPC ("ExecutePlan") with req packed and no
 * deadline; the caller reads, finishes and frees *call. */
knut_status knut_spark__call_open(knut_spark_session *s, const char *rpc,
                                  const ProtobufCMessage *req, knut_net_grpc_client_call **call,
                                  knut_error *err);

/* Turns a finished call's status into err: the server named, Spark's
 * error class / SQLSTATE from the grpc-status-details-bin ErrorInfo, and
 * the full message from FetchErrorDetails when the server kept one.
 * Returns the status to give the caller (KNUT_EPEER for transport
 * failures). info (may be NULL) gets the parts. */
knut_status knut_spark__call_error(knut_spark_session *s, const char *rpc,
                                   const knut_net_grpc_status *st, knut_status rc,
                                   knut_spark_error_info *info, knut_error *err);

#endif /* KNUT_SPARK_INT_H */
