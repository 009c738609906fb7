/*
 * The plan of a CDC flow before it touches data: at resolve, the checks
 * that need only the spec (knut_pipeline__cdc_check); at run, the
 * target's columns from the source's and the CDC clauses (keys, COLUMNS,
 * TRACK HISTORY ON), with an error naming the flow and the column for
 * each name that does not fit.
 */
#include <string.h>
#include <strings.h>

#include "pipeline_int.h"

static int has(const knut_pipeline__strvec *v, const char *name)
{
    for (size_t i = 0; i < v->n; i++)
        if (strcasecmp(v->v[i], name) == 0)
            return 1;
    return 0;
}

static int in_names(const char *const *names, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcasecmp(names[i], name) == 0)
            return 1;
    return 0;
}

static knut_status push(knut_pipeline__strvec *v, const char *s, knut_error *err)
{
    if (knut_pipeline__strvec_push(v, s, strlen(s)) != 0)
        return knut_error_set(err, KNUT_ENOMEM, "pipeline: out of memory");
    return KNUT_OK;
}

knut_status knut_pipeline__cdc_plan_columns(const knut_pipeline_flow *f,
                                            const knut_pipeline__strvec *src,
                                            knut_pipeline__cdc_cols *c, knut_error *err)
{
    const knut_pipeline_cdc *cdc = f->cdc;
    const knut_pipeline_cols *cl = &cdc->columns, *th = &cdc->track_history;
    knut_status st = KNUT_OK;
    for (size_t i = 0; i < src->n; i++)
        if (strncasecmp(src->v[i], "__knut_", 7) == 0 ||
            (cdc->scd_type == 2 && (strcasecmp(src->v[i], "__START_AT") == 0 ||
                                    strcasecmp(src->v[i], "__END_AT") == 0)))
            return knut_pipeline__error_at(err, KNUT_EINVAL, f->pos,
                                           "flow '%s': source column '%s' has a name the CDC "
                                           "target reserves", f->name, src->v[i]);
    const char *missing = NULL;
    for (size_t i = 0; i < cdc->nkeys && !missing; i++)
        if (!has(src, cdc->keys[i]))
            missing = cdc->keys[i];
    for (size_t i = 0; i < cl->n && !missing; i++)
        if (!has(src, cl->names[i]))
            missing = cl->names[i];
    for (size_t i = 0; i < th->n && !missing; i++)
        if (!has(src, th->names[i]))
            missing = th->names[i];
    if (missing)
        return knut_pipeline__error_at(err, KNUT_EINVAL, f->pos,
                                       "flow '%s': column '%s' is not in the source '%s'",
                                       f->name, missing, cdc->source);
    for (size_t i = 0; i < cdc->nkeys && st == KNUT_OK; i++) {
        if ((cl->n || cl->except) && in_names(cl->names, cl->n, cdc->keys[i]) == cl->except)
            return knut_pipeline__error_at(err, KNUT_EINVAL, f->pos,
                                           "flow '%s': key '%s' must be a column of the target "
                                           "(COLUMNS leaves it out)", f->name, cdc->keys[i]);
        st = push(&c->keys, cdc->keys[i], err);
    }
    /* Target order: the source's, or the COLUMNS list's. */
    size_t n = cl->n && !cl->except ? cl->n : src->n;
    for (size_t i = 0; i < n && st == KNUT_OK; i++) {
        const char *name = cl->n && !cl->except ? cl->names[i] : src->v[i];
        if (in_names(cdc->keys, cdc->nkeys, name) || has(&c->payload, name))
            continue;
        if (cl->except && in_names(cl->names, cl->n, name))
            continue;
        st = push(&c->payload, name, err);
    }
    for (size_t i = 0; i < c->payload.n && st == KNUT_OK; i++) {
        int listed = in_names(th->names, th->n, c->payload.v[i]);
        if (th->n == 0 || listed != th->except)
            st = push(&c->tracked, c->payload.v[i], err);
    }
    for (size_t i = 0; i < th->n && st == KNUT_OK && !th->except; i++)
        if (!has(&c->payload, th->names[i]))
            return knut_pipeline__error_at(err, KNUT_EINVAL, f->pos,
                                           "flow '%s': TRACK HISTORY ON names '%s', which is a "
                                           "key or not a column of the target", f->name,
                                           th->names[i]);
    return st;
}

knut_status knut_pipeline__cdc_check(const knut_pipeline *p, const knut_pipeline_flow *f,
                                     knut_error *err)
{
    const knut_pipeline_dataset *ds = knut_pipeline_dataset_find(p, f->target);
    if (f->kind != KNUT_PIPELINE_FLOW_CDC)
        return KNUT_OK;
    if (f->cdc->truncate_when && f->cdc->scd_type != 1)
        return knut_pipeline__error_at(err, KNUT_EINVAL, f->pos,
                                       "flow '%s': APPLY AS TRUNCATE WHEN is for SCD TYPE 1 only",
                                       f->name);
    if (ds && ds->nexpectations)
        return knut_pipeline__error_at(err, KNUT_EUNSUPPORTED, f->pos,
                                       "flow '%s': expectations on an AUTO CDC target ('%s') are "
                                       "not supported; put them on the source", f->name,
                                       f->target);
    for (size_t i = 0; i < p->nflows; i++) {
        const knut_pipeline_flow *g = &p->flows[i];
        /* Its rows are replaced, not appended: no rowid offset holds. */
        for (size_t k = 0; k < g->nreads; k++)
            if (g->reads[k].internal && g->reads[k].streaming &&
                strcmp(g->reads[k].name, f->target) == 0)
                return knut_pipeline__error_at(err, KNUT_EINVAL, g->reads[k].pos,
                                               "flow '%s' reads STREAM(%s), the target of AUTO "
                                               "CDC flow '%s', whose rows change in place; read "
                                               "it as a batch (a materialized view)", g->name,
                                               f->target, f->name);
        if (g == f || strcmp(g->target, f->target) != 0)
            continue;
        /* A snapshot is the whole table: another writer's rows would be
         * keys missing from it, deleted by every update. */
        if (f->cdc->snapshot || (g->kind == KNUT_PIPELINE_FLOW_CDC && g->cdc->snapshot))
            return knut_pipeline__error_at(err, KNUT_EINVAL, f->pos,
                                           "flow '%s' applies changes into '%s', which flow '%s' "
                                           "also writes; the target of AUTO CDC FROM SNAPSHOT "
                                           "takes no other flow", f->name, f->target, g->name);
        int same = g->kind == KNUT_PIPELINE_FLOW_CDC && g->cdc->scd_type == f->cdc->scd_type &&
                   g->cdc->nkeys == f->cdc->nkeys;
        for (size_t k = 0; same && k < f->cdc->nkeys; k++)
            same = strcasecmp(g->cdc->keys[k], f->cdc->keys[k]) == 0;
        if (!same)
            return knut_pipeline__error_at(err, KNUT_EINVAL, f->pos,
                                           "flow '%s' applies changes into '%s', which flow '%s' "
                                           "also writes; more flows into a CDC target must all "
                                           "be CDC flows with the same KEYS and SCD TYPE",
                                           f->name, f->target, g->name);
    }
    return KNUT_OK;
}
