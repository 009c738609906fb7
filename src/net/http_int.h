/*
 * Internal to the HTTP server (src/net/http_server.c, http_stream.c): the
 * server struct, which the streamed replies share for their stop flag and
 * wake-up, and the two calls between the files.
 */
#ifndef KNUT_NET_HTTP_INT_H
#define KNUT_NET_HTTP_INT_H

#include <arpa/inet.h>
#include <microhttpd.h>
#include <pthread.h>

#include "knut/net.h"

struct knut_net_http_server {
    struct MHD_Daemon *daemon;
    knut_net_http_handler fn;
    void *ctx;
    int port;
    char addr[INET6_ADDRSTRLEN + 16];
    /* streams: guarded by mu; cv is signalled on wake, stop and stream end */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stopping;
    int streams;       /* streamed replies not yet freed */
    unsigned wake_gen; /* bumped by knut_net_http_server_wake */
};

/* Initialises the stream fields (mu, cv); KNUT_ERROR if pthread refuses. */
knut_status knut_net__http_streams_init(knut_net_http_server *s, knut_error *err);
/* Tells every open stream that the server stops and waits (bounded) for
 * them to end; before MHD_stop_daemon. */
void knut_net__http_streams_stop(knut_net_http_server *s);
/* The response for a reply whose handler set reply->stream; NULL when out
 * of memory (reply->stream_free has then been called). */
struct MHD_Response *knut_net__http_stream_response(knut_net_http_server *s,
                                                    knut_net_http_reply *reply);

#endif /* KNUT_NET_HTTP_INT_H */
