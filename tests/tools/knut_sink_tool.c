/*
 * Test and benchmark helper for the FalkorDB sink: builds one mutation from
 * a JSON spec whose sets each read an Arrow IPC stream file, applies it
 * with knut_graph_falkor_sink, and prints the sink's stats plus FalkorDB's
 * summed statistics as one JSON object on stdout.
 *
 *   knut_sink_tool --falkordb redis://[:pw@]host:port --graph G
 *                  [--batch-rows N] [--batch-bytes B] [--pipeline P]
 *                  [--index-wait-ms MS] [--repeat N] SPEC.json
 *
 * SPEC.json is a list of sets, applied as one mutation:
 *   {"kind": "vertex", "file": "v.arrows", "labels": ["P", "Emp"],
 *    "keys": ["id"], "props": ["name"]}        (no "props": all columns)
 *   {"kind": "edge", "file": "e.arrows", "type": "KNOWS",
 *    "src": {"label": "P", "keys": ["id"], "columns": ["src"]},
 *    "dst": {"label": "P", "keys": ["id"], "columns": ["dst"]},
 *    "keys": [], "props": ["since"]}
 *   {"kind": "delete", "file": "d.arrows", "label": "P", "keys": ["id"]}
 *   {"kind": "edge_delete", "file": "x.arrows", "type": "KNOWS",
 *    "src": {...}, "dst": {...}, "keys": []}  (as an edge set, no props)
 * --repeat applies the same spec N times (new streams each time) and
 * reports the last apply. Errors: the message on stderr, exit 1 (2: usage).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "knut/graph.h"

#define MAX_SETS 32
#define MAX_NAMES 32

typedef struct strs {
    const char *v[MAX_NAMES];
    size_t n;
} strs;

static int usage(void)
{
    fprintf(stderr, "usage: knut_sink_tool --falkordb URL --graph G [--batch-rows N] "
                    "[--batch-bytes B] [--pipeline P] [--index-wait-ms MS] [--repeat N] "
                    "SPEC.json\n");
    return 2;
}

/* A JSON list of strings (absent: empty; *present says which). */
static knut_status names_of(json_t *obj, const char *key, strs *out, int *present,
                            knut_error *err)
{
    json_t *a = json_object_get(obj, key);
    out->n = 0;
    if (present)
        *present = a != NULL;
    if (!a)
        return KNUT_OK;
    if (!json_is_array(a) || json_array_size(a) > MAX_NAMES)
        return knut_error_set(err, KNUT_EINVAL, "spec: '%s' must be a list of strings", key);
    for (size_t i = 0; i < json_array_size(a); i++) {
        const char *s = json_string_value(json_array_get(a, i));
        if (!s)
            return knut_error_set(err, KNUT_EINVAL, "spec: '%s' must be a list of strings", key);
        out->v[out->n++] = s;
    }
    return KNUT_OK;
}

static const char *str_of(json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

static knut_status endpoint_of(json_t *set, const char *key, knut_graph_endpoint *ep,
                               strs *keys, strs *cols, knut_error *err)
{
    json_t *o = json_object_get(set, key);
    int have_cols = 0;
    knut_status st;
    if (!json_is_object(o))
        return knut_error_set(err, KNUT_EINVAL, "spec: edge set needs an object '%s'", key);
    if ((st = names_of(o, "keys", keys, NULL, err)) != KNUT_OK ||
        (st = names_of(o, "columns", cols, &have_cols, err)) != KNUT_OK)
        return st;
    ep->label = str_of(o, "label");
    ep->keys = keys->v;
    ep->n_keys = keys->n;
    ep->columns = have_cols ? cols->v : NULL;
    return KNUT_OK;
}

static knut_status add_set(knut_graph_mutation *m, json_t *set, FILE **file, knut_error *err)
{
    const char *kind = str_of(set, "kind"), *path = str_of(set, "file");
    strs labels, keys, props, sk, sc, dk, dc;
    int have_props = 0;
    struct ArrowArrayStream stream = {0};
    knut_status st;
    if (!kind || !path)
        return knut_error_set(err, KNUT_EINVAL, "spec: every set needs 'kind' and 'file'");
    if (!(*file = fopen(path, "rb")))
        return knut_error_set(err, KNUT_EIO, "cannot open %s", path);
    if ((st = knut_arrow_ipc_stream_open(&stream, knut_arrow_ipc_source_file(*file), NULL,
                                         err)) != KNUT_OK)
        return knut_error_prefix(err, "%s: ", path);
    if ((st = names_of(set, "labels", &labels, NULL, err)) != KNUT_OK ||
        (st = names_of(set, "keys", &keys, NULL, err)) != KNUT_OK ||
        (st = names_of(set, "props", &props, &have_props, err)) != KNUT_OK) {
        knut_arrow_stream_release(&stream);
        return st;
    }
    if (strcmp(kind, "vertex") == 0) {
        knut_graph_vertex_set vs = KNUT_GRAPH_VERTEX_SET_INIT;
        vs.name = str_of(set, "name");
        vs.labels = labels.v;
        vs.n_labels = labels.n;
        vs.keys = keys.v;
        vs.n_keys = keys.n;
        vs.props = props.v;
        vs.n_props = props.n;
        vs.all_props = !have_props;
        knut_arrow_stream_move(&vs.stream, &stream);
        return knut_graph_mutation_add_vertex_set(m, &vs, err);
    }
    if (strcmp(kind, "edge") == 0) {
        knut_graph_edge_set es = KNUT_GRAPH_EDGE_SET_INIT;
        if ((st = endpoint_of(set, "src", &es.src, &sk, &sc, err)) != KNUT_OK ||
            (st = endpoint_of(set, "dst", &es.dst, &dk, &dc, err)) != KNUT_OK) {
            knut_arrow_stream_release(&stream);
            return st;
        }
        es.name = str_of(set, "name");
        es.type = str_of(set, "type");
        es.keys = keys.v;
        es.n_keys = keys.n;
        es.props = props.v;
        es.n_props = props.n;
        es.all_props = !have_props;
        knut_arrow_stream_move(&es.stream, &stream);
        return knut_graph_mutation_add_edge_set(m, &es, err);
    }
    if (strcmp(kind, "delete") == 0) {
        knut_graph_delete_set ds = KNUT_GRAPH_DELETE_SET_INIT;
        ds.name = str_of(set, "name");
        ds.label = str_of(set, "label");
        ds.keys = keys.v;
        ds.n_keys = keys.n;
        knut_arrow_stream_move(&ds.stream, &stream);
        return knut_graph_mutation_add_delete_set(m, &ds, err);
    }
    if (strcmp(kind, "edge_delete") == 0) {
        knut_graph_edge_delete_set xs = KNUT_GRAPH_EDGE_DELETE_SET_INIT;
        if ((st = endpoint_of(set, "src", &xs.src, &sk, &sc, err)) != KNUT_OK ||
            (st = endpoint_of(set, "dst", &xs.dst, &dk, &dc, err)) != KNUT_OK) {
            knut_arrow_stream_release(&stream);
            return st;
        }
        xs.name = str_of(set, "name");
        xs.type = str_of(set, "type");
        xs.keys = keys.v;
        xs.n_keys = keys.n;
        knut_arrow_stream_move(&xs.stream, &stream);
        return knut_graph_mutation_add_edge_delete_set(m, &xs, err);
    }
    knut_arrow_stream_release(&stream);
    return knut_error_set(err, KNUT_EINVAL, "spec: unknown kind '%s'", kind);
}

static void print_stats(const knut_graph_sink_stats *s, const knut_graph_falkor_stats *f,
                        double seconds)
{
    printf("{\"rows\": %lld, \"vertices_written\": %lld, \"edges_written\": %lld, "
           "\"vertices_deleted\": %lld, \"edges_deleted\": %lld, \"seconds\": %.6f, "
           "\"server\": {\"nodes_created\": %lld, \"nodes_deleted\": %lld, "
           "\"properties_set\": %lld, \"properties_removed\": %lld, "
           "\"relationships_created\": %lld, \"relationships_deleted\": %lld, "
           "\"labels_added\": %lld, \"execution_ms\": %.3f}}\n",
           (long long)s->rows, (long long)s->vertices_written, (long long)s->edges_written,
           (long long)s->vertices_deleted, (long long)s->edges_deleted, seconds,
           (long long)f->nodes_created, (long long)f->nodes_deleted,
           (long long)f->properties_set, (long long)f->properties_removed,
           (long long)f->relationships_created, (long long)f->relationships_deleted,
           (long long)f->labels_added, f->execution_ms);
}

int main(int argc, char **argv)
{
    const char *url = NULL, *graph = NULL, *spec_path = NULL;
    knut_graph_falkor_sink_options so = KNUT_GRAPH_FALKOR_SINK_OPTIONS_INIT;
    knut_graph_falkor_options co = KNUT_GRAPH_FALKOR_OPTIONS_INIT;
    long repeat = 1;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        if (o[0] != '-') {
            spec_path = o;
            continue;
        }
        if (i + 1 >= argc)
            return usage();
        const char *v = argv[++i];
        if (strcmp(o, "--falkordb") == 0)
            url = v;
        else if (strcmp(o, "--graph") == 0)
            graph = v;
        else if (strcmp(o, "--batch-rows") == 0)
            so.batch_rows = strtoll(v, NULL, 10);
        else if (strcmp(o, "--batch-bytes") == 0)
            so.batch_bytes = (size_t)strtoull(v, NULL, 10);
        else if (strcmp(o, "--pipeline") == 0)
            so.pipeline = atoi(v);
        else if (strcmp(o, "--index-wait-ms") == 0)
            so.index_wait_ms = atoi(v);
        else if (strcmp(o, "--repeat") == 0)
            repeat = strtol(v, NULL, 10);
        else
            return usage();
    }
    if (!url || !graph || !spec_path || repeat < 1)
        return usage();

    knut_error err = KNUT_ERROR_INIT;
    knut_graph_falkor *g = NULL;
    knut_graph_sink *sink = NULL;
    knut_graph_mutation *m = NULL;
    FILE *files[MAX_SETS] = {0};
    size_t n_sets = 0;
    knut_graph_sink_stats stats = {0};
    knut_graph_falkor_stats server;
    json_error_t jerr;
    knut_status st = KNUT_OK;
    double seconds = 0;
    json_t *spec = json_load_file(spec_path, 0, &jerr);
    if (!spec || !json_is_array(spec) || json_array_size(spec) > MAX_SETS) {
        st = knut_error_set(&err, KNUT_EINVAL, "%s: not a list of at most %d sets (%s)",
                            spec_path, MAX_SETS, spec ? "wrong shape" : jerr.text);
        goto cleanup;
    }
    co.command_timeout_ms = 120000;
    if ((st = knut_graph_falkor_connect_url(&g, url, &co, &err)) != KNUT_OK ||
        (st = knut_graph_falkor_sink_new(&sink, g, graph, &so, &err)) != KNUT_OK)
        goto cleanup;
    for (long r = 0; r < repeat; r++) {
        knut_graph_mutation_free(m);
        m = NULL;
        for (size_t i = 0; i < n_sets; i++)
            fclose(files[i]);
        n_sets = 0;
        if ((st = knut_graph_mutation_new(&m, &err)) != KNUT_OK)
            goto cleanup;
        for (size_t i = 0; i < json_array_size(spec); i++) {
            st = add_set(m, json_array_get(spec, i), &files[n_sets], &err);
            if (files[n_sets])
                n_sets++;
            if (st != KNUT_OK)
                goto cleanup;
        }
        int64_t t0 = knut_clock_mono_ns();
        st = knut_graph_sink_apply(sink, m, NULL, &stats, &err);
        seconds = (double)(knut_clock_mono_ns() - t0) / 1e9;
        if (st != KNUT_OK)
            goto cleanup;
    }
cleanup:
    knut_graph_falkor_sink_server_stats(sink, &server);
    if (sink)
        print_stats(&stats, &server, seconds);
    knut_graph_sink_close(sink);
    knut_graph_mutation_free(m);
    for (size_t i = 0; i < n_sets; i++)
        fclose(files[i]);
    knut_graph_falkor_close(g);
    json_decref(spec);
    fflush(stdout);
    if (st != KNUT_OK) {
        fprintf(stderr, "knut_sink_tool: %s\n", err.message[0] ? err.message : knut_strerror(st));
        return 1;
    }
    return 0;
}
