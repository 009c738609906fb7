/*
 * Internals of the Airflow asset events: the Airflow protocol
 * (airflow_client.c) that the shared sender thread (outbox.c) drives for
 * airflow.c. An event is an outbox_msg: key the asset URI, body the extra.
 * Only src/net/airflow*.c include it.
 */
#ifndef KNUT_NET_AIRFLOW_INT_H
#define KNUT_NET_AIRFLOW_INT_H

#include <stdint.h>

#include "knut/net.h"
#include "knut/core.h"
#include "outbox_int.h"

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
outbox_result knut_net__airflow_send(airflow_client *c, const outbox_msg *e, knut_error *err);

#endif
