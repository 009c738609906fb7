/*
 * `knut web`'s state, shared by the command (cmd_web.c: the server, the
 * demo and the native run) and the Spark job view (cmd_web_spark.c).
 *
 * One state holds every node's stage: status, rows, throughput, lag,
 * expectation counts, error, and for a Spark stage its tasks. A producer
 * changes it under mu and calls knut_cli_web_changed; the SSE connections
 * send the latest frame when seq moved. The graph itself may change (a
 * Spark job's stages appear as the job runs): graph_version counts the
 * graphs, every frame carries it, and a page that drew an older one loads
 * /graph.json again.
 */
#ifndef KNUT_CLI_WEB_H
#define KNUT_CLI_WEB_H

#include <pthread.h>
#include <stdint.h>

#include "cli.h"
#include "spark_cli.h"
#include "knut/net.h"
#include "knut/viewer.h"

typedef struct knut_cli_web_stage {
    char status[12];
    char *error;
    int64_t rows; /* -1: not known yet */
    double throughput, lag_s;
    int64_t passed, failed;
    int64_t queued_ns;
    /* a Spark stage's tasks (tasks_total -1: not a Spark stage) */
    int64_t tasks_done, tasks_total, bytes_read;
} knut_cli_web_stage;

typedef struct knut_cli_web {
    pthread_mutex_t mu;
    knut_viewer_graph *g;
    knut_cli_web_stage *st; /* one per node of g */
    uint64_t seq;
    uint64_t graph_version; /* 1 for the first graph */
    int done;
    int watched; /* a client opened /events: the demo replay starts */
    unsigned long long epoch;
    knut_buf graph_json;
    knut_net_http_server *srv;
    int64_t step_ms;
} knut_cli_web;

/* A fresh stage (idle, nothing known). */
void knut_cli_web_stage_init(knut_cli_web_stage *s);
void knut_cli_web_set_status(knut_cli_web *w, size_t i, const char *status);
/* A change is ready for the clients (w->mu held). */
void knut_cli_web_changed(knut_cli_web *w);

/* Makes g (laid out here) the graph shown, with a fresh stage per node
 * (the caller fills them); frees the old graph and its stages. With w->mu
 * held once the server runs. Errors: the layout's, KNUT_ENOMEM (w keeps
 * its old graph; g is freed). */
knut_status knut_cli_web_set_graph(knut_cli_web *w, knut_viewer_graph *g, knut_error *err);

/* The graph of a Spark job before its first stage: the result node. */
knut_status knut_cli_web_spark_start(knut_cli_web *w, knut_error *err);

/* `knut web --connect URL --sql SQL`: runs sql on the Spark Connect
 * server and shows the operation's stages as they appear, and the result
 * (rows received) as one more node. Returns the exit code: 0 the query
 * ended, 1 it failed, 130 interrupted (stopped on the server). */
int knut_cli_web_spark_job(knut_cli_web *w, const knut_cli_spark_conn *conn, const char *sql,
                           double report_interval);

#endif
