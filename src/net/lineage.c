/*
 * OpenLineage run events (docs/lineage.md): the event is built as
 * OpenLineage 2-0-2 RunEvent JSON on the caller's thread and handed to the
 * shared background sender (outbox.c), which posts it to the consumer or
 * appends it to a JSON-lines file. Facets used, each with its spec's
 * schema URL: processing_engine and errorMessage (run), parent (run: a
 * pipeline flow's pipeline run), jobType (job), inputStatistics and
 * outputStatistics (datasets). All records go to the log target "lineage".
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "knut/net.h"
#include "outbox_int.h"

#define LINEAGE_LOG "lineage"
#define LINEAGE_PRODUCER "urn:knut:" KNUT_VERSION
#define SPEC "https://openlineage.io/spec/"
#define LINEAGE_MAX_EVENT ((size_t)1 << 20) /* one event's JSON: far above any run's */

struct knut_net_lineage {
    outbox *out;
    knut_net_http_client *http; /* NULL: the file transport */
    char *endpoint;             /* request path under the URL */
    char *file;
    char *ns;
};

static int cancel_cb(void *ctx)
{
    struct knut_net_lineage *l = ctx;
    return l->out && knut_net__outbox_give_up(l->out);
}

static outbox_result send_http(struct knut_net_lineage *l, const outbox_msg *m, knut_error *err)
{
    knut_net_http_response resp = KNUT_NET_HTTP_RESPONSE_INIT;
    knut_status st = knut_net_http_client_request(l->http, "POST", l->endpoint, NULL, m->body,
                                                  strlen(m->body), &resp, err);
    long code = resp.status;
    knut_net_http_response_reset(&resp);
    if (st != KNUT_OK)
        return OUTBOX_RETRY; /* down, reset, timeout: err names the peer */
    if (code >= 200 && code < 300)
        return OUTBOX_SENT;
    knut_error_set(err, KNUT_EPEER, "%s/%s answered HTTP %ld", knut_net_http_client_peer(l->http),
                   l->endpoint, code);
    /* a body the consumer refuses as malformed will be refused again */
    return code == 400 || code == 413 || code == 422 ? OUTBOX_DROP : OUTBOX_RETRY;
}

static outbox_result send_file(struct knut_net_lineage *l, const outbox_msg *m, knut_error *err)
{
    size_t n = strlen(m->body);
    char *line = malloc(n + 1);
    if (!line) {
        knut_error_set(err, KNUT_ENOMEM, "out of memory");
        return OUTBOX_RETRY;
    }
    memcpy(line, m->body, n);
    line[n] = '\n';
    /* one write with O_APPEND: the line lands whole, after any other writer's */
    int fd = open(l->file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    ssize_t w = fd >= 0 ? write(fd, line, n + 1) : -1;
    int e = errno;
    if (fd >= 0 && close(fd) != 0 && w >= 0) {
        w = -1;
        e = errno;
    }
    free(line);
    if (w == (ssize_t)(n + 1))
        return OUTBOX_SENT;
    knut_error_set(err, KNUT_EIO, "%s: %s", l->file, w < 0 ? strerror(e) : "short write");
    return OUTBOX_RETRY;
}

static outbox_result send_cb(void *ctx, const outbox_msg *m, knut_error *err)
{
    struct knut_net_lineage *l = ctx;
    return l->http ? send_http(l, m, err) : send_file(l, m, err);
}

void knut_net_lineage_close(knut_net_lineage *l)
{
    if (!l)
        return;
    knut_net__outbox_close(l->out); /* drains first: the client is still needed */
    knut_net_http_client_free(l->http);
    free(l->endpoint);
    free(l->file);
    free(l->ns);
    free(l);
}

knut_status knut_net_lineage_open(knut_net_lineage **out, const knut_net_lineage_options *o,
                                  knut_error *err)
{
    *out = NULL;
    if (!o->url == !o->file)
        return knut_error_set(err, KNUT_EINVAL,
                              "OpenLineage events need one transport: a URL or a file");
    struct knut_net_lineage *l = calloc(1, sizeof *l);
    const char *ep = o->endpoint ? o->endpoint : "api/v1/lineage";
    while (*ep == '/')
        ep++;
    knut_status st = KNUT_ENOMEM;
    if (!l || !(l->endpoint = strdup(ep)) ||
        !(l->ns = strdup(o->job_namespace && *o->job_namespace ? o->job_namespace : "knut")) ||
        (o->file && !(l->file = strdup(o->file)))) {
        knut_error_set(err, st, "out of memory");
        goto cleanup;
    }
    if (o->url) {
        knut_net_http_options ho = KNUT_NET_HTTP_OPTIONS_INIT;
        ho.connect_timeout_ms = 3000;
        ho.timeout_ms = 10000;
        ho.max_response = (size_t)64 << 10; /* the reply is not read */
        ho.cancel = cancel_cb;
        ho.cancel_ctx = l;
        if ((st = knut_net_http_client_new(&l->http, o->url, &ho, err)) != KNUT_OK)
            goto cleanup;
        if (o->api_key && (st = knut_net_http_client_set_bearer(l->http, o->api_key, err)) !=
                              KNUT_OK)
            goto cleanup;
    }
    outbox_options ob = {LINEAGE_LOG, "lineage event", "run_id", "job", "seq",
                         o->drain_ms, send_cb,     l,        NULL,  NULL};
    if ((st = knut_net__outbox_open(&l->out, &ob, err)) != KNUT_OK)
        goto cleanup;
    if (l->http)
        KNUT_LOG(KNUT_LOG_INFO, LINEAGE_LOG, "OpenLineage events to %s/%s, namespace %s",
                 knut_net_http_client_peer(l->http), l->endpoint, l->ns);
    else
        KNUT_LOG(KNUT_LOG_INFO, LINEAGE_LOG, "OpenLineage events appended to %s, namespace %s",
                 l->file, l->ns);
cleanup:
    if (st != KNUT_OK) {
        knut_net_lineage_close(l);
        return st;
    }
    *out = l;
    return KNUT_OK;
}

/* {_producer, _schemaURL} of a facet, the rest added by the caller. */
static json_t *facet(const char *schema)
{
    return json_pack("{s:s, s:s}", "_producer", LINEAGE_PRODUCER, "_schemaURL", schema);
}

static json_t *statistics(const knut_net_lineage_dataset *d, const char *schema)
{
    if (d->rows < 0 && d->files < 0 && d->bytes < 0)
        return NULL;
    json_t *f = facet(schema);
    if (f && d->rows >= 0)
        json_object_set_new(f, "rowCount", json_integer(d->rows));
    if (f && d->files >= 0)
        json_object_set_new(f, "fileCount", json_integer(d->files));
    if (f && d->bytes >= 0)
        json_object_set_new(f, "size", json_integer(d->bytes));
    return f;
}

static json_t *datasets(const knut_net_lineage_dataset *d, size_t n, int input)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++) {
        json_t *x = json_pack("{s:s, s:s, s:{}}", "namespace", d[i].ns ? d[i].ns : "",
                              "name", d[i].name ? d[i].name : "", "facets");
        json_t *st = statistics(&d[i], input ? SPEC "facets/1-0-0/InputStatisticsInputDatasetFacet"
                                                    ".json#/$defs/InputStatisticsInputDatasetFacet"
                                              : SPEC "facets/1-0-2/OutputStatisticsOutputDataset"
                                                    "Facet.json#/$defs/OutputStatisticsOutput"
                                                    "DatasetFacet");
        if (x && st)
            json_object_set_new(x, input ? "inputFacets" : "outputFacets",
                                json_pack("{s:o}", input ? "inputStatistics" : "outputStatistics",
                                          st));
        else
            json_decref(st);
        if (!x || json_array_append_new(a, x) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

static void event_time(int64_t us, char out[40])
{
    time_t secs = (time_t)(us / 1000000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    size_t n = strftime(out, 40, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out + n, 40 - n, ".%06ldZ", (long)(us % 1000000));
}

/* The RunEvent as JSON text (malloc'd), or NULL when out of memory. */
static char *event_json(const struct knut_net_lineage *l, const knut_net_lineage_event *e)
{
    char when[40];
    event_time(e->time_us > 0 ? e->time_us : knut_clock_wall_us(), when);
    json_t *run_facets = json_object(), *job_facets = json_object();
    json_t *pe = facet(SPEC "facets/1-1-1/ProcessingEngineRunFacet.json#/$defs/"
                            "ProcessingEngineRunFacet");
    json_object_set_new(pe, "version", json_string(KNUT_VERSION));
    json_object_set_new(pe, "name", json_string("knut"));
    json_object_set_new(run_facets, "processing_engine", pe);
    if (e->error) {
        json_t *em = facet(SPEC "facets/1-0-1/ErrorMessageRunFacet.json#/$defs/"
                                "ErrorMessageRunFacet");
        json_object_set_new(em, "message", json_string(e->error));
        json_object_set_new(em, "programmingLanguage", json_string("C"));
        json_object_set_new(run_facets, "errorMessage", em);
    }
    if (e->parent_run_id && e->parent_job) {
        json_t *p = facet(SPEC "facets/1-2-0/ParentRunFacet.json#/$defs/ParentRunFacet");
        json_object_set_new(p, "run", json_pack("{s:s}", "runId", e->parent_run_id));
        json_object_set_new(p, "job", json_pack("{s:s, s:s}", "namespace", l->ns, "name",
                                                e->parent_job));
        json_object_set_new(run_facets, "parent", p);
    }
    json_t *jt = facet(SPEC "facets/2-0-4/JobTypeJobFacet.json#/$defs/JobTypeJobFacet");
    json_object_set_new(jt, "processingType", json_string(e->streaming ? "STREAMING" : "BATCH"));
    json_object_set_new(jt, "integration", json_string("KNUT"));
    if (e->job_type)
        json_object_set_new(jt, "jobType", json_string(e->job_type));
    json_object_set_new(job_facets, "jobType", jt);
    json_t *ev = json_pack("{s:s, s:s, s:s, s:s, s:{s:s, s:o}, s:{s:s, s:s, s:o}, s:o, s:o}",
                           "eventType", e->type, "eventTime", when, "producer", LINEAGE_PRODUCER,
                           "schemaURL", SPEC "2-0-2/OpenLineage.json#/$defs/RunEvent", "run",
                           "runId", e->run_id, "facets", run_facets, "job", "namespace", l->ns,
                           "name", e->job, "facets", job_facets, "inputs",
                           datasets(e->inputs, e->n_inputs, 1), "outputs",
                           datasets(e->outputs, e->n_outputs, 0));
    /* json_pack's "o" takes each reference even when it fails */
    char *text = ev ? json_dumps(ev, JSON_COMPACT) : NULL;
    json_decref(ev);
    return text;
}

void knut_net_lineage_emit(knut_net_lineage *l, const knut_net_lineage_event *e)
{
    if (!l)
        return;
    char *text = e->type && e->run_id && e->job ? event_json(l, e) : NULL;
    if (text && strlen(text) > LINEAGE_MAX_EVENT) {
        KNUT_LOG(KNUT_LOG_ERROR, LINEAGE_LOG, "lineage event for job %s dropped: %zu bytes",
                 e->job, strlen(text));
    } else if (text) {
        knut_net__outbox_push(l->out, e->run_id, e->job, e->seq, text);
    } else {
        KNUT_LOG(KNUT_LOG_ERROR, LINEAGE_LOG, "lineage event for job %s dropped: out of memory",
                 e->job ? e->job : "?");
    }
    free(text);
}
