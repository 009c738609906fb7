/*
 * The background sender that event emitters share (outbox.c): Airflow
 * asset events (airflow.c) and OpenLineage run events (lineage.c). The
 * caller queues a message and returns at once; one thread hands the
 * messages to the emitter's send function, retrying with backoff, so a
 * slow, down or misconfigured peer never blocks or fails the caller's
 * work. Messages of one key go out in queue order (an asset's events in
 * round order, a run's START before its COMPLETE); a key that cannot be
 * sent does not hold up the others. The queue is bounded (a full queue
 * drops the new message with a log record); on close the thread gets the
 * drain time to send what is left, then every unsent message is logged as
 * dropped. Only src/net/ includes it.
 */
#ifndef KNUT_NET_OUTBOX_INT_H
#define KNUT_NET_OUTBOX_INT_H

#include <stdint.h>

#include "knut/core.h"

/* One message waiting to be sent (strings owned by the outbox). */
typedef struct outbox_msg {
    char *key;        /* ordering key: an asset URI, a run id */
    char *label;      /* what it is about, for the log (a table, a dataset, a job) */
    char *body;       /* what the send function sends (JSON text) */
    int64_t seq;      /* the round or run number, for the log */
    int attempts;     /* sends tried so far */
    int64_t next_ns;  /* monotonic: not before */
} outbox_msg;

/* What one send attempt says about the message. */
typedef enum outbox_result {
    OUTBOX_SENT,  /* the peer recorded it */
    OUTBOX_RETRY, /* transient or fixable (down, 5xx, 401/403, not declared yet) */
    OUTBOX_DROP   /* can never succeed as it is (the body refused) */
} outbox_result;

typedef struct outbox_options {
    const char *log_target;   /* log records go here */
    const char *what;         /* names a message in log text: "asset event" */
    const char *key_field, *label_field, *seq_field; /* log field names */
    int64_t drain_ms;         /* time unsent messages get at close; 0: 5000 */
    /* Called on the sender thread only, one message at a time; err says
     * why when not SENT (no secrets in it). */
    outbox_result (*send)(void *ctx, const outbox_msg *m, knut_error *err);
    void *send_ctx;
    void (*on_sent)(void *ctx); /* after each message sent (sender thread) */
    void *on_sent_ctx;
} outbox_options;

typedef struct outbox outbox;

/* Copies the options' strings and starts the thread. */
knut_status knut_net__outbox_open(outbox **out, const outbox_options *o, knut_error *err);
/* Queues one message (strings copied). Never blocks on the peer. */
void knut_net__outbox_push(outbox *ob, const char *key, const char *label, int64_t seq,
                           const char *body);
/* 1 once closing and the drain time is over: a transfer in progress should
 * give up (an HTTP client's cancel callback). */
int knut_net__outbox_give_up(outbox *ob);
/* Drains (up to the drain time), stops the thread, frees. ob may be NULL. */
void knut_net__outbox_close(outbox *ob);

#endif
