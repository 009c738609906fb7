/*
 * Which flow runs when, and on which worker (docs/pipelines.md "Parallel
 * flows"). A flow may start once every flow writing a dataset it reads
 * has ended, and every earlier flow (in run order) writing one of its
 * tables, or reading one or writing one it reads, has ended: flows into
 * one target, a target and another's `<target>__quarantine` (or a reader
 * of it), and graph sinks sharing a store file or a FalkorDB graph never
 * overlap. So the updates running at one time write different tables and
 * commit on their own, each reads what it would read in a serial run, and
 * the flows into one table keep their run order (a full refresh is done
 * by the first of them).
 * Workers take the first flow in run order that may start: with one
 * worker that is the run order itself.
 *
 * A flow whose upstream failed or was skipped is SKIPPED when its turn
 * comes; independent branches run on. A FAIL UPDATE expectation fails its
 * flow like any other error (its update is rolled back); flows running
 * beside it are not stopped and commit. A failure of the storage or the
 * event log (not of a flow) stops the taking of flows: the running ones
 * end, and that failure is returned.
 *
 * With more than one worker each worker thread has its own DuckDB
 * connection, opened and set up before any thread starts. A temporary
 * view lives on one connection, so the one a flow made is made again on
 * each other worker's connection before that worker's next flow (which is
 * after the view's flow ended, so every reader of it sees it).
 */
#include <stdlib.h>
#include <string.h>

#include "pipeline_int.h"

enum { WAITING, RUNNING, ENDED };

static const char *const state_names[] = {"COMPLETED", "FAILED", "SKIPPED", "IDLE"};

typedef struct sched {
    knut_pipeline__run *run;
    pthread_mutex_t lock; /* everything below */
    pthread_cond_t cond;  /* a flow ended, or a failure stops the run */
    size_t n;
    unsigned char *state, *broken; /* per flow: WAITING...; failed or skipped */
    /* per flow i: the flows it waits for are wait[wait_at[i] .. wait_at[i + 1]),
     * data[k] 1 where it reads their target (their failure skips it) */
    size_t *wait_at, *wait;
    unsigned char *data;
    size_t left; /* flows not ended */
    knut_pipeline_run_result res;
    knut_error first;  /* the first failed flow's error */
    knut_status fatal; /* a failure of the run itself */
    knut_error fatal_err;
    char **views; /* the CREATE TEMP VIEW of each temporary view made so far */
    size_t nviews;
} sched;

typedef struct worker {
    sched *s;
    knut_pipeline__run r; /* the run with this worker's connection */
    size_t views;         /* s->views made on r.conn so far */
    pthread_t thread;
} worker;

/* 1 if flow b reads the target of flow a. */
static int reads(const knut_pipeline_flow *a, const knut_pipeline_flow *b)
{
    for (size_t i = 0; i < b->nreads; i++)
        if (b->reads[i].internal && strcmp(b->reads[i].name, a->target) == 0)
            return 1;
    return 0;
}

/* 1 if flow f writes the table t: its target or the target's quarantine
 * table. */
static int writes(const knut_pipeline_flow *f, const char *t)
{
    size_t n = strlen(f->target);
    return strncmp(t, f->target, n) == 0 && (!t[n] || strcmp(t + n, "__quarantine") == 0);
}

/* 1 if flow a reads a table flow b writes (a quarantine table, read by
 * its schema-qualified name, is no dataset and so no data dependency). */
static int reads_written(const knut_pipeline_flow *a, const knut_pipeline_flow *b)
{
    for (size_t i = 0; i < a->nreads; i++)
        if (writes(b, a->reads[i].name))
            return 1;
    return 0;
}

/* 1 if flows a and b may write one table or one graph, or one reads what
 * the other writes: then they keep their run order, as in a serial run. */
static int exclusive(const knut_pipeline *p, const knut_pipeline_flow *a,
                     const knut_pipeline_flow *b)
{
    if (writes(a, b->target) || writes(b, a->target) || reads_written(a, b) ||
        reads_written(b, a))
        return 1;
    const knut_pipeline_dataset *da = knut_pipeline_dataset_find(p, a->target);
    const knut_pipeline_dataset *db = knut_pipeline_dataset_find(p, b->target);
    const knut_pipeline_graph_sink *ga = da ? da->graph_sink : NULL;
    const knut_pipeline_graph_sink *gb = db ? db->graph_sink : NULL;
    if (!ga || !gb)
        return 0;
    if (ga->store && gb->store)
        return strcmp(ga->store, gb->store) == 0;
    return ga->falkordb && gb->falkordb && strcmp(ga->falkordb, gb->falkordb) == 0 &&
           strcmp(ga->graph ? ga->graph : "", gb->graph ? gb->graph : "") == 0;
}

/* Fills the wait lists (two passes: count, then fill). */
static knut_status waits_build(sched *s, knut_error *err)
{
    const knut_pipeline *p = s->run->p;
    size_t n = s->n, *rank = calloc(n ? n : 1, sizeof *rank), total = 0;
    knut_status st = KNUT_OK;
    s->wait_at = calloc(n + 1, sizeof *s->wait_at);
    if (!rank || !s->wait_at) {
        st = knut_error_set(err, KNUT_ENOMEM, "pipeline: out of memory");
        goto done;
    }
    for (size_t k = 0; k < n; k++)
        rank[p->order[k]] = k;
    for (int fill = 0; fill < 2; fill++) {
        total = 0;
        for (size_t i = 0; i < n; i++) {
            s->wait_at[i] = total;
            for (size_t j = 0; j < n; j++) {
                if (j == i)
                    continue;
                int data = reads(&p->flows[j], &p->flows[i]);
                if (!data && !(rank[j] < rank[i] && exclusive(p, &p->flows[j], &p->flows[i])))
                    continue;
                if (fill) {
                    s->wait[total] = j;
                    s->data[total] = (unsigned char)data;
                }
                total++;
            }
        }
        s->wait_at[n] = total;
        if (!fill) {
            s->wait = malloc((total ? total : 1) * sizeof *s->wait);
            s->data = malloc(total ? total : 1);
            if (!s->wait || !s->data) {
                st = knut_error_set(err, KNUT_ENOMEM, "pipeline: out of memory");
                goto done;
            }
        }
    }
done:
    free(rank);
    return st;
}

/* The first waiting flow in run order that may start, or s->n; *skip 1
 * when a flow it reads from failed or was skipped. Under s->lock. */
static size_t pick(const sched *s, int *skip)
{
    const knut_pipeline *p = s->run->p;
    for (size_t k = 0; k < s->n; k++) {
        size_t fi = p->order[k];
        if (s->state[fi] != WAITING)
            continue;
        int ready = 1, broken = 0;
        for (size_t e = s->wait_at[fi]; e < s->wait_at[fi + 1] && ready; e++) {
            ready = s->state[s->wait[e]] == ENDED;
            broken |= s->data[e] && s->broken[s->wait[e]];
        }
        if (ready) {
            *skip = broken;
            return fi;
        }
    }
    return s->n;
}

/* Takes flows until none is left (or the run failed). */
static void work(worker *w)
{
    sched *s = w->s;
    knut_pipeline *p = s->run->p;
    pthread_mutex_lock(&s->lock);
    while (s->left && s->fatal == KNUT_OK) {
        int skip = 0;
        size_t fi = pick(s, &skip);
        if (fi == s->n) {
            pthread_cond_wait(&s->cond, &s->lock);
            continue;
        }
        s->state[fi] = RUNNING;
        size_t nviews = s->nviews;
        pthread_mutex_unlock(&s->lock);

        knut_pipeline__state state = KNUT_PIPELINE__COMPLETED;
        knut_error ferr = KNUT_ERROR_INIT, err = KNUT_ERROR_INIT;
        knut_status st = KNUT_OK;
        for (; w->views < nviews && st == KNUT_OK; w->views++)
            if ((st = knut_duck_exec(w->r.conn, s->views[w->views], &err)) != KNUT_OK)
                knut_error_prefix(&err, "a temporary view on a worker's connection: ");
        if (st == KNUT_OK)
            st = knut_pipeline__flow_updates(&w->r, &p->flows[fi], skip, &state, &ferr, &err);
        char *view = w->r.view_sql;
        w->r.view_sql = NULL;

        pthread_mutex_lock(&s->lock);
        s->state[fi] = ENDED;
        s->left--;
        if (st != KNUT_OK) {
            if (s->fatal == KNUT_OK) {
                s->fatal = st;
                s->fatal_err = err;
            }
        } else {
            s->broken[fi] = state == KNUT_PIPELINE__FAILED || state == KNUT_PIPELINE__SKIPPED;
            s->res.completed += state == KNUT_PIPELINE__COMPLETED;
            s->res.failed += state == KNUT_PIPELINE__FAILED;
            s->res.skipped += state == KNUT_PIPELINE__SKIPPED;
            s->res.idle += state == KNUT_PIPELINE__IDLE;
            if (state == KNUT_PIPELINE__FAILED && s->first.code == KNUT_OK)
                s->first = ferr;
            if (view && state == KNUT_PIPELINE__COMPLETED && s->nviews < s->n) {
                s->views[s->nviews++] = view; /* its readers start after this */
                view = NULL;
            }
        }
        pthread_cond_broadcast(&s->cond);
        free(view);
    }
    pthread_mutex_unlock(&s->lock);
}

static void *worker_main(void *arg)
{
    work(arg);
    return NULL;
}

/* "duration_ms" (and the error of a failed flow) into the details object. */
static void details_finish(knut_buf *d, const knut_pipeline_flow *f, knut_pipeline__state state,
                           const knut_error *ferr, int conflict, int64_t t0)
{
    long long ms = (long long)((knut_clock_mono_ns() - t0) / 1000000);
    if (d->len && d->data[d->len - 1] == '}') {
        d->len--;
        knut_buf_printf(d, "%s\"duration_ms\":%lld}", d->len > 1 ? "," : "", ms);
    } else {
        knut_buf_printf(d, "{\"duration_ms\":%lld}", ms);
    }
    if (state != KNUT_PIPELINE__FAILED || d->error)
        return;
    d->len--;
    knut_buf_puts(d, ",\"error\":");
    knut_buf_put_json_str(d, ferr->message, strlen(ferr->message));
    knut_buf_printf(d, ",\"file\":");
    knut_buf_put_json_str(d, f->pos.file, strlen(f->pos.file));
    knut_buf_printf(d, ",\"line\":%d,\"col\":%d%s}", ferr->line, ferr->col,
                    conflict ? ",\"conflict\":true" : "");
}

knut_status knut_pipeline__flow_updates(knut_pipeline__run *r, knut_pipeline_flow *f, int skip,
                                        knut_pipeline__state *state, knut_error *failed,
                                        knut_error *err)
{
    char msg[KNUT_ERROR_MSG_MAX + 64];
    knut_buf details = KNUT_BUF_INIT;
    knut_status st = KNUT_OK;
    /* More files than one update reads: the same flow again, as the next
     * update (each one its own transaction and event). */
    do {
        knut_error ferr = KNUT_ERROR_INIT;
        r->more = 0;
        r->conflict = 0;
        knut_buf_clear(&details);
        int64_t t0 = knut_clock_mono_ns();
        if (skip) {
            *state = KNUT_PIPELINE__SKIPPED;
            snprintf(msg, sizeof msg, "Flow '%s' SKIPPED due to upstream failure(s).", f->name);
        } else {
            /* PLANNING: its inputs are looked up; flow_run says RUNNING
             * once it starts the update. */
            snprintf(msg, sizeof msg, "Flow '%s' is PLANNING.", f->name);
            if (!r->dry && (st = knut_pipeline__event(r, "flow_progress", "INFO", f, "PLANNING",
                                                      msg, NULL, err)) != KNUT_OK)
                goto done;
            if ((st = knut_pipeline__flow_run(r, f, state, &details, &ferr, err)) != KNUT_OK)
                goto done;
            if (*state == KNUT_PIPELINE__FAILED)
                snprintf(msg, sizeof msg, "%s", ferr.message);
            else if (r->dry)
                snprintf(msg, sizeof msg, "Flow '%s' is PLANNED.", f->name);
            else if (*state == KNUT_PIPELINE__IDLE)
                snprintf(msg, sizeof msg, "Flow '%s' is IDLE, no new data.", f->name);
            else
                snprintf(msg, sizeof msg, "Flow '%s' has COMPLETED.", f->name);
        }
        if (*state == KNUT_PIPELINE__FAILED)
            *failed = ferr;
        details_finish(&details, f, *state, &ferr, r->conflict, t0);
        if ((st = knut_buf_check(&details, err)) != KNUT_OK)
            goto done;
        const char *status = r->dry && *state == KNUT_PIPELINE__COMPLETED ? "PLANNED"
                                                                          : state_names[*state];
        const char *level = *state == KNUT_PIPELINE__FAILED    ? "ERROR"
                            : *state == KNUT_PIPELINE__SKIPPED ? "WARN"
                                                               : "INFO";
        if ((st = knut_pipeline__event(r, "flow_progress", level, f, status, msg, details.data,
                                       err)) != KNUT_OK)
            goto done;
    } while (r->more && *state == KNUT_PIPELINE__COMPLETED && !r->dry);
done:
    knut_buf_reset(&details);
    return st;
}

/* Opens and sets up the connections of workers w[0..n) (closed by the caller). */
static knut_status workers_open(worker *w, size_t n, sched *s, knut_error *err)
{
    for (size_t i = 0; i < n; i++) {
        w[i].s = s;
        w[i].r = *s->run;
        w[i].r.conn = NULL;
        knut_status st = knut_duck_conn_open(&w[i].r.conn, s->run->db, err);
        if (st == KNUT_OK)
            st = knut_pipeline__conn_setup(&w[i].r, w[i].r.conn, err);
        if (st != KNUT_OK)
            return knut_error_prefix(err, "storage %s: a connection for worker %zu: ",
                                     s->run->dir, i + 1);
    }
    return KNUT_OK;
}

knut_status knut_pipeline__schedule(knut_pipeline__run *r, int parallel,
                                    knut_pipeline_run_result *res, knut_error *first,
                                    knut_error *err)
{
    sched s = {.run = r, .n = r->p->nflows, .left = r->p->nflows, .first = KNUT_ERROR_INIT,
               .fatal_err = KNUT_ERROR_INIT};
    size_t nw = parallel > 1 ? (size_t)parallel : 1, started = 0;
    if (nw > s.n)
        nw = s.n ? s.n : 1;
    worker *w = NULL;
    knut_status st = KNUT_OK;
    int sync = pthread_mutex_init(&s.lock, NULL) == 0;
    if (sync && pthread_cond_init(&s.cond, NULL) != 0) {
        pthread_mutex_destroy(&s.lock);
        sync = 0;
    }
    s.state = calloc(s.n ? s.n : 1, 1);
    s.broken = calloc(s.n ? s.n : 1, 1);
    s.views = calloc(s.n ? s.n : 1, sizeof *s.views);
    w = calloc(nw, sizeof *w);
    if (!sync || !s.state || !s.broken || !s.views || !w) {
        st = knut_error_set(err, KNUT_ENOMEM, "pipeline: cannot set up the flows' scheduler");
        goto cleanup;
    }
    if ((st = waits_build(&s, err)) != KNUT_OK)
        goto cleanup;
    if (nw == 1) { /* the run's thread and connection */
        w[0].s = &s;
        w[0].r = *r;
        work(&w[0]);
        w[0].r.conn = NULL; /* the run's: closed by the run */
    } else {
        if ((st = workers_open(w, nw, &s, err)) != KNUT_OK)
            goto cleanup;
        for (; started < nw; started++)
            if (pthread_create(&w[started].thread, NULL, worker_main, &w[started]) != 0)
                break;
        if (started == 0) /* no thread at all: the run's thread works alone */
            work(&w[0]);
        for (size_t i = 0; i < started; i++)
            pthread_join(w[i].thread, NULL);
    }
    if (s.fatal != KNUT_OK) {
        st = s.fatal;
        if (err)
            *err = s.fatal_err;
    }
    *res = s.res;
    *first = s.first;
cleanup:
    for (size_t i = 0; w && i < nw; i++) {
        knut_duck_conn_close(w[i].r.conn);
        free(w[i].r.view_sql);
    }
    free(w);
    for (size_t i = 0; s.views && i < s.nviews; i++)
        free(s.views[i]);
    free(s.views);
    free(s.state);
    free(s.broken);
    free(s.wait_at);
    free(s.wait);
    free(s.data);
    if (sync) {
        pthread_cond_destroy(&s.cond);
        pthread_mutex_destroy(&s.lock);
    }
    return st;
}
