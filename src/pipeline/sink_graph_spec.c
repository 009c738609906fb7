/*
 * The spec's `sinks:` (docs/pipelines.md "Graph sinks"): each entry is a
 * KNUT_PIPELINE_SINK dataset naming where its graph is (an embedded store
 * file or a FalkorDB server and graph) and how rows map onto it, in the
 * syntax of a sync.yml table (`vertices:`, `edges:`, `fk_edges:`), parsed
 * by the same code (src/graph/map_conf.c).
 */
#include <stdlib.h>
#include <string.h>

#include "knut/graph_map.h"
#include "knut/graph_model.h"
#include "pipeline_int.h"

static knut_pipeline_pos pos_of(const knut_conf *n)
{
    return (knut_pipeline_pos){knut_conf_file(n), knut_conf_line(n), knut_conf_col(n)};
}

/* An optional non-empty string key. */
static knut_status opt_str(knut_pipeline *p, const knut_conf *n, const char *sink,
                           const char *key, const char **out, knut_error *err)
{
    const knut_conf *v = knut_conf_get(n, key);
    *out = NULL;
    if (!v)
        return KNUT_OK;
    const char *s = knut_conf_str(v);
    if (!s || !*s)
        return knut_pipeline__error_at(err, KNUT_EINVAL, pos_of(v),
                                       "sink '%s': '%s' must be a non-empty string", sink, key);
    *out = knut_pipeline__strdup(p, s);
    return *out ? KNUT_OK : knut_error_set(err, KNUT_ENOMEM, "pipeline: out of memory");
}

static knut_status one_sink(knut_pipeline *p, const char *name, const knut_conf *n,
                            knut_error *err)
{
    static const char *const allowed[] = {"comment", "store", "falkordb", "graph",
                                          "password_env", "missing_endpoints", "vertices",
                                          "edges", "fk_edges", NULL};
    knut_pipeline__impl *impl = (knut_pipeline__impl *)p;
    if (knut_conf_kind_of(n) != KNUT_CONF_MAP)
        return knut_pipeline__error_at(err, KNUT_EPARSE, pos_of(n),
                                       "sink '%s' must be a map (store: or falkordb:, vertices:, "
                                       "edges:)", name);
    if (knut_pipeline__dataset_get(p, name))
        return knut_pipeline__error_at(err, KNUT_EINVAL, pos_of(n),
                                       "sink '%s': a dataset of that name is already defined",
                                       name);
    knut_status st = knut_graph_map_check_keys(n, "sink", name, "the sink", allowed, err);
    if (st != KNUT_OK)
        return st;
    knut_pipeline_graph_sink *gs = knut_pipeline__alloc(p, sizeof *gs);
    knut_graph_map *m = calloc(1, sizeof *m);
    knut_graph_map **slot = m ? knut_pipeline__push(p, (void **)&impl->maps, &impl->nmaps,
                                                    sizeof *slot)
                              : NULL;
    if (!gs || !slot) {
        free(m);
        return knut_error_set(err, KNUT_ENOMEM, "pipeline: out of memory");
    }
    *slot = m; /* freed with p, also when the parse below fails */
    const char *store = NULL, *comment = NULL, *missing = NULL;
    if ((st = opt_str(p, n, name, "store", &store, err)) != KNUT_OK ||
        (st = opt_str(p, n, name, "falkordb", &gs->falkordb, err)) != KNUT_OK ||
        (st = opt_str(p, n, name, "graph", &gs->graph, err)) != KNUT_OK ||
        (st = opt_str(p, n, name, "password_env", &gs->password_env, err)) != KNUT_OK ||
        (st = opt_str(p, n, name, "missing_endpoints", &missing, err)) != KNUT_OK ||
        (st = opt_str(p, n, name, "comment", &comment, err)) != KNUT_OK)
        return st;
    if ((store != NULL) == (gs->falkordb != NULL))
        return knut_pipeline__error_at(err, KNUT_EINVAL, pos_of(n),
                                       "sink '%s' needs exactly one of 'store:' (an embedded "
                                       "store file) and 'falkordb:' (redis://host:port)", name);
    if (gs->falkordb && strncmp(gs->falkordb, "redis://", 8) != 0 &&
        strncmp(gs->falkordb, "rediss://", 9) != 0)
        return knut_pipeline__error_at(err, KNUT_EINVAL, pos_of(knut_conf_get(n, "falkordb")),
                                       "sink '%s': falkordb: must be a redis:// URL", name);
    if ((gs->graph || gs->password_env) && !gs->falkordb)
        return knut_pipeline__error_at(err, KNUT_EINVAL,
                                       pos_of(knut_conf_get(n, gs->graph ? "graph"
                                                                         : "password_env")),
                                       "sink '%s': graph: and password_env: are FalkorDB's "
                                       "(with falkordb:)", name);
    if (gs->falkordb && !gs->graph && !(gs->graph = knut_pipeline__strdup(p, "knut")))
        return knut_error_set(err, KNUT_ENOMEM, "pipeline: out of memory");
    if (missing && strcmp(missing, "skip") != 0 && strcmp(missing, "fail") != 0)
        return knut_pipeline__error_at(err, KNUT_EINVAL,
                                       pos_of(knut_conf_get(n, "missing_endpoints")),
                                       "sink '%s': missing_endpoints: must be skip or fail, not "
                                       "'%s'", name, missing);
    gs->missing_endpoints = missing && strcmp(missing, "fail") == 0 ? KNUT_GRAPH_MISSING_FAIL
                                                                    : KNUT_GRAPH_MISSING_SKIP;
    if (store) {
        /* relative to the spec's folder, as every path of the spec */
        size_t a = strlen(p->root), b = strlen(store);
        char *s = store[0] == '/' ? (char *)store : knut_pipeline__alloc(p, a + b + 2);
        if (!s)
            return knut_error_set(err, KNUT_ENOMEM, "pipeline: out of memory");
        if (s != store) {
            memcpy(s, p->root, a);
            s[a] = '/';
            memcpy(s + a + 1, store, b);
        }
        gs->store = s;
    }
    if ((st = knut_graph_map_parse(n, "sink", name, NULL, m, err)) != KNUT_OK)
        return st;
    gs->map = m;
    knut_pipeline_dataset *ds = knut_pipeline__push(p, (void **)&p->datasets, &p->ndatasets,
                                                    sizeof *ds);
    if (!ds || !(ds->name = knut_pipeline__strdup(p, name)))
        return knut_error_set(err, KNUT_ENOMEM, "pipeline: out of memory");
    ds->kind = KNUT_PIPELINE_SINK;
    ds->comment = comment;
    ds->pos = pos_of(n);
    ds->graph_sink = gs;
    return KNUT_OK;
}

knut_status knut_pipeline__sinks_parse(knut_pipeline *p, const knut_conf *sinks, knut_error *err)
{
    if (knut_conf_kind_of(sinks) != KNUT_CONF_MAP)
        return knut_pipeline__error_at(err, KNUT_EPARSE, pos_of(sinks),
                                       "sinks: must map sink names to their graph and mapping");
    for (size_t i = 0; i < knut_conf_len(sinks); i++) {
        knut_status st = one_sink(p, knut_conf_key_at(sinks, i), knut_conf_at(sinks, i), err);
        if (st != KNUT_OK)
            return st;
    }
    return KNUT_OK;
}
