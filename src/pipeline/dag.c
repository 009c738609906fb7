/*
 * Resolving a pipeline: targets and flow kinds checked, reads inferred
 * (deps.c) and checked against the declared ones, and the run order: a
 * topological sort of the flows that keeps definition order among
 * independent ones, so a run is repeatable. A cycle is reported with its
 * path, at the first flow on it.
 */
#include <stdlib.h>
#include <string.h>

#include "pipeline_int.h"

const knut_pipeline_flow *knut_pipeline__writer(const knut_pipeline *p, const char *name)
{
    for (size_t i = 0; i < p->nflows; i++)
        if (strcmp(p->flows[i].target, name) == 0)
            return &p->flows[i];
    return NULL;
}

static knut_status check_targets(knut_pipeline *p, knut_error *err)
{
    for (size_t i = 0; i < p->nflows; i++) {
        knut_pipeline_flow *f = &p->flows[i];
        knut_pipeline_dataset *ds = knut_pipeline__dataset_get(p, f->target);
        if (!ds)
            return knut_pipeline__error_at(err, KNUT_ENOTFOUND, f->pos,
                                           "flow '%s' writes into '%s', which is not defined "
                                           "(CREATE STREAMING TABLE %s first)",
                                           f->name, f->target, f->target);
        int own = strcmp(f->name, ds->name) == 0;
        if (!own && ds->kind != KNUT_PIPELINE_STREAMING_TABLE && ds->kind != KNUT_PIPELINE_SINK)
            return knut_pipeline__error_at(
                err, KNUT_EINVAL, f->pos,
                "flow '%s' writes into %s '%s'; only a streaming table takes more flows%s",
                f->name, knut_pipeline_dataset_kind_name(ds->kind), ds->name,
                ds->kind == KNUT_PIPELINE_MATERIALIZED_VIEW
                    ? " (a materialized view has exactly one query)"
                    : "");
        if (ds->nexpectations && ds->kind == KNUT_PIPELINE_TEMPORARY_VIEW)
            return knut_pipeline__error_at(err, KNUT_EUNSUPPORTED, ds->expectations[0].pos,
                                           "expectations on temporary view '%s' are not "
                                           "supported yet", ds->name);
        if (ds->kind == KNUT_PIPELINE_SINK && f->kind == KNUT_PIPELINE_FLOW_CDC)
            return knut_pipeline__error_at(err, KNUT_EINVAL, f->pos,
                                           "flow '%s': AUTO CDC cannot write into sink '%s' "
                                           "(apply the changes to a streaming table, then "
                                           "INSERT INTO the sink from it)", f->name, ds->name);
        f->expectations = ds->expectations;
        f->nexpectations = ds->nexpectations;
    }
    for (size_t i = 0; i < p->ndatasets; i++)
        if (!knut_pipeline__writer(p, p->datasets[i].name))
            return knut_pipeline__error_at(err, KNUT_EINVAL, p->datasets[i].pos,
                                           "%s '%s' has no flow writing into it",
                                           p->datasets[i].kind == KNUT_PIPELINE_SINK
                                               ? "sink"
                                               : "streaming table",
                                           p->datasets[i].name);
    return KNUT_OK;
}

static int listed(const char *const *names, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return 1;
    return 0;
}

static knut_status check_reads(knut_pipeline *p, knut_pipeline_flow *f, knut_error *err)
{
    for (size_t i = 0; i < f->nreads; i++) {
        const knut_pipeline_read *r = &f->reads[i];
        if (!r->internal)
            continue;
        const knut_pipeline_dataset *ds = knut_pipeline_dataset_find(p, r->name);
        if (ds->kind == KNUT_PIPELINE_SINK)
            return knut_pipeline__error_at(err, KNUT_EINVAL, r->pos,
                                           "flow '%s' reads sink '%s'; a sink is written, never "
                                           "read", f->name, r->name);
        if (r->streaming && ds->kind != KNUT_PIPELINE_STREAMING_TABLE)
            return knut_pipeline__error_at(err, KNUT_EINVAL, r->pos,
                                           "flow '%s' reads %s '%s' as a stream; only a "
                                           "streaming table can be read with STREAM()",
                                           f->name, knut_pipeline_dataset_kind_name(ds->kind),
                                           r->name);
        if (f->has_declared && !listed(f->declared_reads, f->ndeclared, r->name))
            return knut_pipeline__error_at(err, KNUT_EINVAL, r->pos,
                                           "flow '%s' reads '%s', which its declared reads do not "
                                           "list", f->name, r->name);
    }
    int streams = 0;
    for (size_t i = 0; i < f->nreads; i++)
        streams |= f->reads[i].streaming && f->reads[i].internal;
    const knut_pipeline_dataset *tds = knut_pipeline_dataset_find(p, f->target);
    int to_sink = tds && tds->kind == KNUT_PIPELINE_SINK; /* a batch-fed sink: every row, each run */
    if (f->kind == KNUT_PIPELINE_FLOW_STREAMING && f->nsources == 0 && !streams && !to_sink)
        return knut_pipeline__error_at(err, KNUT_EINVAL, f->pos,
                                       "flow '%s' is a streaming flow but reads no file source "
                                       "(read_parquet/read_csv/read_json of a path) and no "
                                       "STREAM(streaming table); a batch query belongs in a "
                                       "materialized view or an INSERT INTO ONCE flow", f->name);
    for (size_t i = 0; f->has_declared && i < f->ndeclared; i++) {
        int found = 0;
        for (size_t k = 0; k < f->nreads; k++)
            found |= strcmp(f->reads[k].name, f->declared_reads[i]) == 0;
        if (!found)
            return knut_pipeline__error_at(err, KNUT_EINVAL, f->pos,
                                           "flow '%s' declares that it reads '%s', but its query "
                                           "does not read it", f->name, f->declared_reads[i]);
    }
    return KNUT_OK;
}

/* 1 if flow a must run before flow b (b reads what a writes). */
static int before(const knut_pipeline_flow *a, const knut_pipeline_flow *b)
{
    for (size_t i = 0; i < b->nreads; i++)
        if (b->reads[i].internal && strcmp(b->reads[i].name, a->target) == 0)
            return 1;
    return 0;
}

/* Finds a cycle among the unsorted flows and reports it with its path. */
static knut_status cycle(knut_pipeline *p, const unsigned char *done, knut_error *err)
{
    size_t n = p->nflows, *path = calloc(n + 1, sizeof *path);
    unsigned char *on = calloc(n, 1);
    knut_status st = KNUT_ENOMEM;
    if (!path || !on) {
        st = knut_error_set(err, KNUT_ENOMEM, "pipeline: out of memory");
        goto cleanup;
    }
    /* Every unsorted flow has an unsorted predecessor: walk back until a
     * flow repeats; the loop between the repeats is a cycle. */
    size_t cur = 0;
    while (done[cur])
        cur++;
    size_t len = 0;
    while (!on[cur]) {
        on[cur] = 1;
        path[len++] = cur;
        size_t k = 0;
        while (k < n && (done[k] || !before(&p->flows[k], &p->flows[cur])))
            k++;
        cur = k;
    }
    size_t start = 0;
    while (path[start] != cur)
        start++;
    knut_buf b = KNUT_BUF_INIT;
    knut_buf_init(&b, 4096);
    /* path runs against the data flow: print it the way data moves. */
    for (size_t i = len; i > start; i--)
        knut_buf_printf(&b, "%s -> ", p->flows[path[i - 1]].name);
    knut_buf_puts(&b, p->flows[path[len - 1]].name);
    const knut_pipeline_flow *f = &p->flows[path[len - 1]];
    st = knut_pipeline__error_at(err, KNUT_EINVAL, f->pos,
                                 "flow '%s' is in a dependency cycle: %s", f->name,
                                 b.error ? "(too long to print)" : b.data);
    knut_buf_reset(&b);
cleanup:
    free(path);
    free(on);
    return st;
}

knut_status knut_pipeline__dag_check(knut_pipeline *p, knut_error *err)
{
    size_t n = p->nflows;
    unsigned char *done = calloc(n ? n : 1, 1);
    size_t *order = knut_pipeline__alloc(p, (n ? n : 1) * sizeof *order);
    if (!done || !order) {
        free(done);
        return knut_error_set(err, KNUT_ENOMEM, "pipeline: out of memory");
    }
    size_t k = 0;
    while (k < n) {
        size_t pick = n;
        for (size_t i = 0; i < n && pick == n; i++) {
            if (done[i])
                continue;
            int ready = 1;
            for (size_t j = 0; j < n && ready; j++)
                if (!done[j] && j != i && before(&p->flows[j], &p->flows[i]))
                    ready = 0;
            if (ready && !before(&p->flows[i], &p->flows[i]))
                pick = i;
        }
        if (pick == n) {
            knut_status st = cycle(p, done, err);
            free(done);
            return st;
        }
        done[pick] = 1;
        order[k++] = pick;
    }
    free(done);
    p->order = order;
    return KNUT_OK;
}

knut_status knut_pipeline_resolve(knut_pipeline *p, knut_error *err)
{
    KNUT_ASSERT_ARG(err, p != NULL);
    knut_duck_db *db = NULL;
    knut_duck_conn *conn = NULL;
    knut_status st = check_targets(p, err);
    if (st != KNUT_OK)
        return st;
    if ((st = knut_duck_db_open(&db, NULL, NULL, 0, err)) != KNUT_OK ||
        (st = knut_duck_conn_open(&conn, db, err)) != KNUT_OK)
        goto cleanup;
    int64_t files_per_update; /* settings.c: a bad setting is the spec's error */
    if ((st = knut_pipeline__settings_apply(p, conn, &files_per_update, err)) != KNUT_OK)
        goto cleanup;
    for (size_t i = 0; i < p->nflows; i++) {
        knut_pipeline_flow *f = &p->flows[i];
        f->nreads = 0;
        f->reads = NULL;
        if ((st = knut_pipeline__deps_infer(p, f, conn, err)) != KNUT_OK ||
            (st = check_reads(p, f, err)) != KNUT_OK)
            goto cleanup;
        if (f->kind == KNUT_PIPELINE_FLOW_CDC && !f->reads[0].internal)
            st = knut_pipeline__error_at(err, KNUT_ENOTFOUND, f->pos,
                                         "flow '%s' applies changes from '%s', which is no "
                                         "dataset of this pipeline", f->name, f->cdc->source);
        if (st != KNUT_OK)
            goto cleanup;
    }
    for (size_t i = 0; i < p->nflows; i++)
        if ((st = knut_pipeline__cdc_check(p, &p->flows[i], err)) != KNUT_OK ||
            (st = knut_pipeline__stream_check(p, &p->flows[i], err)) != KNUT_OK)
            goto cleanup;
    if ((st = knut_pipeline__dag_check(p, err)) == KNUT_OK)
        p->resolved = 1;
cleanup:
    knut_duck_conn_close(conn);
    knut_duck_db_close(db);
    return st;
}
