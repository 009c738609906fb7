/*
 * Test helper for the embedded graph store: fills a store file from Arrow
 * IPC stream files, through the same sink interface sync uses, so the
 * integration tests can build a store with pyarrow-made data and then
 * inspect it with `knut query` and `knut graph export`.
 *
 *   knut_gstore_tool DB apply SPEC.json
 *
 * SPEC.json is a list of sets applied as one mutation (the format of
 * knut_sink_tool, so one spec drives either sink):
 *   {"kind": "vertex", "file": "v.arrows", "labels": ["Person"],
 *    "keys": ["id"], "props": ["name"]}        (no "props": all columns)
 *   {"kind": "edge", "file": "e.arrows", "type": "WORKS_AT",
 *    "src": {"label": "Person", "keys": ["id"], "columns": ["pid"]},
 *    "dst": {"label": "Company", "keys": ["id"], "columns": ["cid"]},
 *    "keys": [], "props": ["since"]}
 *   {"kind": "delete", "file": "d.arrows", "label": "Person", "keys": ["id"]}
 * Prints the sink's stats plus the skipped-edge count as one JSON object on
 * stdout. Errors: the message on stderr, exit 1 (2: usage).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "knut/graph.h"

#define MAX_SETS 32
#define MAX_NAMES 32

/* Names of one spec list; the strings belong to the JSON document. */
typedef struct name_list {
    const char *v[MAX_NAMES];
    size_t n;
    int present;
} name_list;

static int usage(void)
{
    fprintf(stderr, "usage: knut_gstore_tool DB apply SPEC.json\n");
    return 2;
}

static knut_status spec_names_read(json_t *obj, const char *key, name_list *out, knut_error *err)
{
    json_t *a = json_object_get(obj, key);
    out->n = 0;
    out->present = a != NULL;
    if (!a)
        return KNUT_OK;
    if (!json_is_array(a) || json_array_size(a) > MAX_NAMES)
        return knut_error_set(err, KNUT_EINVAL, "spec: '%s' must be a list of at most %d strings",
                              key, MAX_NAMES);
    for (size_t i = 0; i < json_array_size(a); i++) {
        out->v[i] = json_string_value(json_array_get(a, i));
        if (!out->v[i])
            return knut_error_set(err, KNUT_EINVAL, "spec: '%s' must be a list of strings", key);
        out->n = i + 1;
    }
    return KNUT_OK;
}

static knut_status spec_endpoint_read(json_t *set, const char *key, knut_graph_endpoint *ep,
                                      name_list *keys, name_list *cols, knut_error *err)
{
    json_t *o = json_object_get(set, key);
    knut_status st;
    if (!json_is_object(o))
        return knut_error_set(err, KNUT_EINVAL, "spec: an edge set needs an object '%s'", key);
    if ((st = spec_names_read(o, "keys", keys, err)) != KNUT_OK ||
        (st = spec_names_read(o, "columns", cols, err)) != KNUT_OK)
        return st;
    ep->label = json_string_value(json_object_get(o, "label"));
    ep->keys = keys->v;
    ep->n_keys = keys->n;
    /* Absent columns mean "named like the keys" to the mutation. */
    ep->columns = cols->present ? cols->v : NULL;
    return KNUT_OK;
}

/*
 * Adds one set of the spec to m. *file gets the opened IPC file (the
 * caller closes it after the apply: the stream reads it lazily).
 */
static knut_status spec_set_add(knut_graph_mutation *m, json_t *set, FILE **file, knut_error *err)
{
    const char *kind = json_string_value(json_object_get(set, "kind"));
    const char *path = json_string_value(json_object_get(set, "file"));
    const char *name = json_string_value(json_object_get(set, "name"));
    name_list labels, keys, props, src_keys, src_cols, dst_keys, dst_cols;
    struct ArrowArrayStream stream = {0};
    knut_status st = KNUT_OK;

    if (!kind || !path) {
        st = knut_error_set(err, KNUT_EINVAL, "spec: every set needs 'kind' and 'file'");
        goto cleanup;
    }
    if ((st = spec_names_read(set, "labels", &labels, err)) != KNUT_OK ||
        (st = spec_names_read(set, "keys", &keys, err)) != KNUT_OK ||
        (st = spec_names_read(set, "props", &props, err)) != KNUT_OK)
        goto cleanup;
    if (!(*file = fopen(path, "rb"))) {
        st = knut_error_set(err, KNUT_EIO, "cannot open %s", path);
        goto cleanup;
    }
    st = knut_arrow_ipc_stream_open(&stream, knut_arrow_ipc_source_file(*file), NULL, err);
    if (st != KNUT_OK) {
        knut_error_prefix(err, "%s: ", path);
        goto cleanup;
    }
    if (strcmp(kind, "vertex") == 0) {
        knut_graph_vertex_set vs = KNUT_GRAPH_VERTEX_SET_INIT;
        vs.name = name;
        vs.labels = labels.v;
        vs.n_labels = labels.n;
        vs.keys = keys.v;
        vs.n_keys = keys.n;
        vs.props = props.v;
        vs.n_props = props.n;
        vs.all_props = !props.present;
        knut_arrow_stream_move(&vs.stream, &stream);
        st = knut_graph_mutation_add_vertex_set(m, &vs, err);
    } else if (strcmp(kind, "edge") == 0) {
        knut_graph_edge_set es = KNUT_GRAPH_EDGE_SET_INIT;
        if ((st = spec_endpoint_read(set, "src", &es.src, &src_keys, &src_cols, err)) !=
                KNUT_OK ||
            (st = spec_endpoint_read(set, "dst", &es.dst, &dst_keys, &dst_cols, err)) != KNUT_OK)
            goto cleanup;
        es.name = name;
        es.type = json_string_value(json_object_get(set, "type"));
        es.keys = keys.v;
        es.n_keys = keys.n;
        es.props = props.v;
        es.n_props = props.n;
        es.all_props = !props.present;
        knut_arrow_stream_move(&es.stream, &stream);
        st = knut_graph_mutation_add_edge_set(m, &es, err);
    } else if (strcmp(kind, "delete") == 0) {
        knut_graph_delete_set ds = KNUT_GRAPH_DELETE_SET_INIT;
        ds.name = name;
        ds.label = json_string_value(json_object_get(set, "label"));
        ds.keys = keys.v;
        ds.n_keys = keys.n;
        knut_arrow_stream_move(&ds.stream, &stream);
        st = knut_graph_mutation_add_delete_set(m, &ds, err);
    } else {
        st = knut_error_set(err, KNUT_EINVAL, "spec: unknown kind '%s'", kind);
    }

cleanup:
    /* Moved into the mutation on success; still ours otherwise. */
    knut_arrow_stream_release(&stream);
    return st;
}

int main(int argc, char **argv)
{
    if (argc != 4 || strcmp(argv[2], "apply") != 0)
        return usage();
    const char *db_path = argv[1], *spec_path = argv[3];
    knut_error err = KNUT_ERROR_INIT;
    knut_graph_store *store = NULL;
    knut_graph_mutation *m = NULL;
    FILE *files[MAX_SETS] = {0};
    size_t n_files = 0;
    knut_graph_sink_stats stats = {0};
    json_error_t jerr;
    knut_status st = KNUT_OK;
    json_t *spec = json_load_file(spec_path, 0, &jerr);

    if (!spec || !json_is_array(spec) || json_array_size(spec) > MAX_SETS) {
        st = knut_error_set(&err, KNUT_EINVAL, "%s: not a list of at most %d sets (%s)",
                            spec_path, MAX_SETS, spec ? "wrong shape" : jerr.text);
        goto cleanup;
    }
    if ((st = knut_graph_store_open(&store, db_path, &err)) != KNUT_OK ||
        (st = knut_graph_mutation_new(&m, &err)) != KNUT_OK)
        goto cleanup;
    for (size_t i = 0; i < json_array_size(spec); i++) {
        st = spec_set_add(m, json_array_get(spec, i), &files[n_files], &err);
        if (files[n_files])
            n_files++;
        if (st != KNUT_OK)
            goto cleanup;
    }
    st = knut_graph_sink_apply(knut_graph_store_sink(store), m, NULL, &stats, &err);
    if (st != KNUT_OK)
        goto cleanup;
    printf("{\"rows\": %lld, \"vertices_written\": %lld, \"edges_written\": %lld, "
           "\"vertices_deleted\": %lld, \"edges_deleted\": %lld, \"edges_skipped\": %lld}\n",
           (long long)stats.rows, (long long)stats.vertices_written,
           (long long)stats.edges_written, (long long)stats.vertices_deleted,
           (long long)stats.edges_deleted, (long long)knut_graph_store_edges_skipped(store));

cleanup:
    knut_graph_store_close(store);
    knut_graph_mutation_free(m);
    for (size_t i = 0; i < n_files; i++)
        fclose(files[i]);
    json_decref(spec);
    fflush(stdout);
    if (st != KNUT_OK) {
        fprintf(stderr, "knut_gstore_tool: %s\n",
                err.message[0] ? err.message : knut_strerror(st));
        return 1;
    }
    return 0;
}
