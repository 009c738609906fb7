/*
 * OpenLineage run events of a native pipeline run (docs/lineage.md): the
 * spec's `lineage:` key (or OpenLineage's own OPENLINEAGE_* variables),
 * and the events, derived from the run's own events as they happen: the
 * update is the run of job "pipeline.<name>" (START when it is RUNNING,
 * COMPLETE or FAIL at its end), each flow update a child run of job
 * "pipeline.<name>.<flow>" with the parent facet, its inputs the datasets
 * and files it reads, its output its target with the rows written. The
 * net part's background sender (src/net/lineage.c) sends them: a consumer
 * being slow or down never fails a run; problems are log records, target
 * "lineage".
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "knut/net.h"
#include "pipeline_int.h"

struct pipeline_lineage {
    knut_net_lineage *sender;
    char run_id[KNUT_UUID_LEN]; /* the pipeline run's */
    int started;
    char (*flow_run)[KNUT_UUID_LEN]; /* per flow: its update's run id */
    unsigned char *flow_started;
    size_t nflows;
    char *job;    /* "pipeline.<name>" */
    char *db_ns;  /* "duckdb://<database file>" */
};

static knut_pipeline_pos pos_of(const knut_pipeline *p, const knut_conf *n)
{
    return (knut_pipeline_pos){p->spec_path, knut_conf_line(n), knut_conf_col(n)};
}

/* path against the spec's folder, copied into p. */
static const char *rooted(knut_pipeline *p, const char *path)
{
    if (path[0] == '/')
        return path;
    size_t la = strlen(p->root), lb = strlen(path);
    char *s = knut_pipeline__alloc(p, la + lb + 2);
    if (s)
        snprintf(s, la + lb + 2, "%s/%s", p->root, path);
    return s;
}

knut_status knut_pipeline__lineage_parse(knut_pipeline *p, const knut_conf *n, knut_error *err)
{
    static const char *const keys[] = {"url", "file", "endpoint", "api_key_env", "api_key_file",
                                       "namespace", "drain", NULL};
    if (knut_conf_kind_of(n) != KNUT_CONF_MAP)
        return knut_pipeline__error_at(err, KNUT_EPARSE, pos_of(p, n),
                                       "lineage: must be a map (url: or file:, endpoint:, "
                                       "api_key_env: or api_key_file:, namespace:, drain:)");
    for (size_t i = 0; i < knut_conf_len(n); i++) {
        size_t k = 0;
        while (keys[k] && strcmp(keys[k], knut_conf_key_at(n, i)) != 0)
            k++;
        if (!keys[k])
            return knut_pipeline__error_at(err, KNUT_EPARSE, pos_of(p, knut_conf_at(n, i)),
                                           "lineage: unexpected field '%s' (it takes url, file, "
                                           "endpoint, api_key_env, api_key_file, namespace, "
                                           "drain)",
                                           knut_conf_key_at(n, i));
    }
    knut_pipeline_lineage *l = knut_pipeline__alloc(p, sizeof *l);
    if (!l)
        return knut_error_set(err, KNUT_ENOMEM, "pipeline: out of memory");
    const char *drain = NULL;
    knut_status st;
    if ((st = knut_pipeline__spec_str(p, n, "lineage", "url", &l->url, err)) != KNUT_OK ||
        (st = knut_pipeline__spec_str(p, n, "lineage", "file", &l->file, err)) != KNUT_OK ||
        (st = knut_pipeline__spec_str(p, n, "lineage", "endpoint", &l->endpoint, err)) !=
            KNUT_OK ||
        (st = knut_pipeline__spec_str(p, n, "lineage", "api_key_env", &l->api_key_env, err)) !=
            KNUT_OK ||
        (st = knut_pipeline__spec_str(p, n, "lineage", "api_key_file", &l->api_key_file, err)) !=
            KNUT_OK ||
        (st = knut_pipeline__spec_str(p, n, "lineage", "namespace", &l->ns, err)) != KNUT_OK ||
        (st = knut_pipeline__spec_str(p, n, "lineage", "drain", &drain, err)) != KNUT_OK)
        return st;
    if (!l->url == !l->file)
        return knut_pipeline__error_at(err, KNUT_EINVAL, pos_of(p, n),
                                       "lineage: needs one of 'url:' and 'file:'");
    if (l->url && strncmp(l->url, "http://", 7) != 0 && strncmp(l->url, "https://", 8) != 0)
        return knut_pipeline__error_at(err, KNUT_EINVAL, pos_of(p, knut_conf_get(n, "url")),
                                       "lineage: url: must be an http:// or https:// URL");
    if ((l->endpoint || l->api_key_env || l->api_key_file) && !l->url)
        return knut_pipeline__error_at(err, KNUT_EINVAL, pos_of(p, n),
                                       "lineage: endpoint, api_key_env and api_key_file need "
                                       "'url:'");
    if (l->api_key_env && l->api_key_file)
        return knut_pipeline__error_at(err, KNUT_EINVAL,
                                       pos_of(p, knut_conf_get(n, "api_key_file")),
                                       "lineage: give api_key_env: or api_key_file:, not both");
    if ((l->file && !(l->file = rooted(p, l->file))) ||
        (l->api_key_file && !(l->api_key_file = rooted(p, l->api_key_file))))
        return knut_error_set(err, KNUT_ENOMEM, "pipeline: out of memory");
    if (drain) {
        char *end = NULL;
        double s = strtod(drain, &end);
        if (!end || *end || !(s > 0) || s > 3600)
            return knut_pipeline__error_at(err, KNUT_EINVAL, pos_of(p, knut_conf_get(n, "drain")),
                                           "lineage: drain: must be seconds, more than 0 and at "
                                           "most 3600, not '%s'", drain);
        l->drain_ms = (int64_t)(s * 1000);
    }
    p->lineage = l;
    return KNUT_OK;
}

/* The API key: from the spec's file or variable, else $OPENLINEAGE_API_KEY
 * (NULL, no error: none). A secret: the caller frees it with
 * knut_net_secret_free. */
static knut_status api_key(const knut_pipeline_lineage *l, char **out, knut_error *err)
{
    *out = NULL;
    if (l->api_key_file) {
        knut_status st = knut_net_secret_file_read(l->api_key_file, out, err);
        return st == KNUT_OK ? st : knut_error_prefix(err, "lineage: api_key_file: ");
    }
    const char *var = l->api_key_env ? l->api_key_env : "OPENLINEAGE_API_KEY";
    const char *v = getenv(var);
    if (l->api_key_env && (!v || !*v))
        return knut_error_set(err, KNUT_EINVAL,
                              "lineage: the environment variable %s (the API key) is not set",
                              var);
    if (v && *v && !(*out = strdup(v)))
        return knut_error_set(err, KNUT_ENOMEM, "pipeline: out of memory");
    return KNUT_OK;
}

void knut_pipeline__lineage_close(struct pipeline_lineage *l)
{
    if (!l)
        return;
    knut_net_lineage_close(l->sender);
    free(l->flow_run);
    free(l->flow_started);
    free(l->job);
    free(l->db_ns);
    free(l);
}

static int env_disabled(void)
{
    const char *e = getenv("OPENLINEAGE_DISABLED");
    return e && (strcasecmp(e, "true") == 0 || strcmp(e, "1") == 0);
}

knut_status knut_pipeline__lineage_open(const knut_pipeline *p, struct pipeline_lineage **out,
                                        knut_error *err)
{
    *out = NULL;
    knut_pipeline_lineage envcfg = {0};
    const knut_pipeline_lineage *c = p->lineage;
    if (!c) { /* OpenLineage's own variables, as its clients read them */
        envcfg.url = getenv("OPENLINEAGE_URL");
        if (!envcfg.url || !*envcfg.url || env_disabled())
            return KNUT_OK;
        envcfg.endpoint = getenv("OPENLINEAGE_ENDPOINT");
        envcfg.ns = getenv("OPENLINEAGE_NAMESPACE");
        c = &envcfg;
    }
    struct pipeline_lineage *l = calloc(1, sizeof *l);
    char *key = NULL;
    knut_buf b = KNUT_BUF_INIT;
    knut_status st = KNUT_ENOMEM;
    size_t nf = p->nflows ? p->nflows : 1;
    if (!l || !(l->flow_run = calloc(nf, sizeof *l->flow_run)) ||
        !(l->flow_started = calloc(nf, 1))) {
        knut_error_set(err, st, "pipeline: out of memory");
        goto cleanup;
    }
    l->nflows = p->nflows;
    if (knut_buf_printf(&b, "pipeline.%s", p->name) != KNUT_OK ||
        !(l->job = knut_buf_detach(&b, NULL))) {
        knut_error_set(err, st, "pipeline: out of memory");
        goto cleanup;
    }
    if (c->url && (st = api_key(c, &key, err)) != KNUT_OK)
        goto cleanup;
    knut_net_lineage_options o = {c->url, c->file, c->endpoint && *c->endpoint ? c->endpoint : NULL,
                                  key, c->ns && *c->ns ? c->ns : NULL, c->drain_ms};
    if ((st = knut_net_lineage_open(&l->sender, &o, err)) != KNUT_OK)
        knut_error_prefix(err, "lineage: ");
cleanup:
    knut_net_secret_free(key);
    knut_buf_reset(&b);
    if (st != KNUT_OK) {
        knut_pipeline__lineage_close(l);
        return st;
    }
    *out = l;
    return KNUT_OK;
}

/* ---- the events ------------------------------------------------------------ */

/* "<catalog>.<schema>.<name>" of a dataset in the run's database. */
static char *table_name(const knut_pipeline *p, const char *name)
{
    knut_buf b = KNUT_BUF_INIT;
    knut_buf_printf(&b, "%s.%s.%s", p->catalog, p->schema, name);
    return knut_buf_check(&b, NULL) == KNUT_OK ? knut_buf_detach(&b, NULL) : NULL;
}

static char *source_path(const knut_pipeline *p, const char *pattern)
{
    knut_buf b = KNUT_BUF_INIT;
    if (pattern[0] == '/' || strstr(pattern, "://"))
        knut_buf_puts(&b, pattern);
    else
        knut_buf_printf(&b, "%s/%s", p->root, pattern);
    return knut_buf_check(&b, NULL) == KNUT_OK ? knut_buf_detach(&b, NULL) : NULL;
}

static int64_t rows_out(const char *details)
{
    json_t *d = details ? json_loads(details, 0, NULL) : NULL;
    json_t *v = json_object_get(d, "rows_out");
    int64_t n = json_is_integer(v) ? (int64_t)json_integer_value(v) : -1;
    json_decref(d);
    return n;
}

static void flow_event(knut_pipeline__run *r, struct pipeline_lineage *l,
                       const knut_pipeline_flow *f, const char *type, const char *message,
                       const char *details)
{
    const knut_pipeline *p = r->p;
    size_t fi = (size_t)(f - p->flows);
    size_t nin = f->nreads + f->nsources;
    knut_net_lineage_dataset *in = calloc(nin ? nin : 1, sizeof *in);
    char **names = calloc(nin + 1, sizeof *names);
    char *job = NULL;
    knut_buf b = KNUT_BUF_INIT;
    if (!in || !names || knut_buf_printf(&b, "%s.%s", l->job, f->name) != KNUT_OK ||
        !(job = knut_buf_detach(&b, NULL)))
        goto oom;
    size_t k = 0;
    for (size_t i = 0; i < f->nreads; i++, k++) {
        if (!(names[k] = table_name(p, f->reads[i].name)))
            goto oom;
        in[k] = (knut_net_lineage_dataset){l->db_ns, names[k], -1, -1, -1};
    }
    for (size_t i = 0; i < f->nsources; i++, k++) {
        if (!(names[k] = source_path(p, f->sources[i].pattern)))
            goto oom;
        in[k] = (knut_net_lineage_dataset){"file", names[k], -1, -1, -1};
    }
    if (!(names[nin] = table_name(p, f->target)))
        goto oom;
    int start = strcmp(type, "START") == 0;
    knut_net_lineage_dataset out = {l->db_ns, names[nin], start ? -1 : rows_out(details), -1, -1};
    knut_net_lineage_event e = {0};
    e.type = type;
    e.run_id = l->flow_run[fi];
    e.job = job;
    e.job_type = "FLOW";
    e.inputs = in;
    e.n_inputs = nin;
    e.outputs = &out;
    e.n_outputs = 1;
    e.error = strcmp(type, "FAIL") == 0 ? message : NULL;
    e.parent_run_id = l->run_id;
    e.parent_job = l->job;
    e.seq = r->run_id;
    knut_net_lineage_emit(l->sender, &e);
    goto done;
oom:
    KNUT_LOG(KNUT_LOG_ERROR, "lineage", "lineage event of flow %s dropped: out of memory",
             f->name);
done:
    for (size_t i = 0; names && i <= nin; i++)
        free(names[i]);
    free(names);
    free(in);
    free(job);
    knut_buf_reset(&b);
}

static void run_event(knut_pipeline__run *r, struct pipeline_lineage *l, const char *type,
                      const char *message)
{
    knut_net_lineage_event e = {0};
    e.type = type;
    e.run_id = l->run_id;
    e.job = l->job;
    e.job_type = "PIPELINE";
    e.error = strcmp(type, "FAIL") == 0 ? message : NULL;
    e.seq = r->run_id;
    knut_net_lineage_emit(l->sender, &e);
}

void knut_pipeline__lineage_event(knut_pipeline__run *r, const char *type,
                                  const knut_pipeline_flow *f, const char *status,
                                  const char *message, const char *details)
{
    struct pipeline_lineage *l = r->lineage;
    if (!l || r->dry || !status)
        return;
    if (!l->db_ns) { /* the storage is open now: its database file is known */
        knut_buf b = KNUT_BUF_INIT;
        knut_buf_printf(&b, "duckdb://%s/%s.duckdb", r->dir, r->p->catalog);
        if (knut_buf_check(&b, NULL) != KNUT_OK) {
            knut_buf_reset(&b);
            return;
        }
        l->db_ns = knut_buf_detach(&b, NULL);
    }
    int running = strcmp(status, "RUNNING") == 0;
    int failed = strcmp(status, "FAILED") == 0;
    int ended = failed || strcmp(status, "COMPLETED") == 0 || strcmp(status, "IDLE") == 0;
    if (strcmp(type, "update_progress") == 0) {
        if (running && !l->started) {
            knut_uuid_v7(l->run_id);
            l->started = 1;
            run_event(r, l, "START", NULL);
        } else if (ended && l->started) {
            run_event(r, l, failed ? "FAIL" : "COMPLETE", message);
            l->started = 0;
        }
        return;
    }
    if (!f || strcmp(type, "flow_progress") != 0 || !l->started)
        return;
    size_t fi = (size_t)(f - r->p->flows);
    if (fi >= l->nflows)
        return;
    if (running || (failed && !l->flow_started[fi])) {
        /* a flow failing while it plans (an input missing) still shows as a run */
        knut_uuid_v7(l->flow_run[fi]);
        l->flow_started[fi] = 1;
        flow_event(r, l, f, "START", NULL, NULL);
    }
    if (ended && l->flow_started[fi]) {
        flow_event(r, l, f, failed ? "FAIL" : "COMPLETE", message, details);
        l->flow_started[fi] = 0;
    }
}
