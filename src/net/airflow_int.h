/*
 * Internals of the Airflow asset events: the queued event, and the Airflow
 * protocol (airflow_client.c) that the sender thread (airflow.c) drives.
 * Only src/net/airflow*.c include it.
 */
#ifndef KNUT_NET_AIRFLOW_INT_H
#define KNUT_NET_AIRFLOW_INT_H

#include <stdint.h>

#include "knut/net.h"
#include "knut/core.h"

/* One asset event waiting to be sent (strings owned). */
typedef struct asset_event {
    char *uri;
    char *label;         /* what it is about, for the log (a table, a dataset) */
    char *extra;         /* JSON object text: Airflow's extra, less knut_instance */
    int64_t seq;         /* the round or run number, for the log */
    int attempts;        /* sends tried so far */
    int64_t next_ns;     /* monotonic: not before */
} asset_event;

/* What one send attempt says about the event. */
typedef enum airflow_result {
    AIRFLOW_SENT,  /* recorded by Airflow */
    AIRFLOW_RETRY, /* transient or fixable (down, asset not declared yet, 401/403, 5xx) */
    AIRFLOW_DROP   /* can never succeed as it is (the body refused: 400/422) */
} airflow_result;

/* The session with one Airflow API server: API generation, token, the
 * asset ids found so far. Used by the sender thread only. */
typedef struct airflow_asset_id {
    char *uri;
    int64_t id;
} airflow_asset_id;

typedef struct airflow_client {
    knut_net_http_client *http;
    char *user, *password; /* password wiped on free */
    char *instance;        /* knut_instance in extra */
    int api;               /* 0 unknown, 3: /api/v2 + JWT, 2: /api/v1 + Basic */
    char *token;           /* JWT (wiped on free), or NULL */
    int64_t token_exp_s;   /* the token's exp claim (epoch s); 0 unknown */
    airflow_asset_id *ids;
    size_t n_ids;
} airflow_client;

/* Does not talk to the server yet (the first send does). */
knut_status knut_net__airflow_open(airflow_client *c, const char *url, const char *user,
                                    const char *password, const char *instance,
                                    const knut_net_http_options *http, knut_error *err);
void knut_net__airflow_close(airflow_client *c);
/* One attempt at recording e; err says why when not SENT. */
airflow_result knut_net__airflow_send(airflow_client *c, const asset_event *e, knut_error *err);

#endif
