/*
 * Test helper for the Cypher renderer: reads an Arrow IPC stream from
 * stdin, binds it as one vertex, edge or delete set described by the
 * command line, and prints every GRAPH.QUERY text the renderer makes, each
 * framed as "<byte length>\n<bytes>\n" (texts may hold raw newlines inside
 * backticked names). The integration tests send them to a real FalkorDB.
 *
 *   knut_cypher_tool vertex --label L [--label L2] --key K [--prop P | --all-props]
 *   knut_cypher_tool edge --type T --src-label S --src-key K [--src-col C]
 *                         --dst-label D --dst-key K [--dst-col C] [--key K]
 *                         [--prop P | --all-props]
 *   knut_cypher_tool delete --label L --key K
 * Common: --name N, --budget BYTES (split batches), --query-only.
 * Errors: the message on stderr, exit status 1 (2 for usage).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "knut/graph.h"

#define MAX_NAMES 64

typedef struct names {
    const char *v[MAX_NAMES];
    size_t n;
} names;

typedef struct args {
    const char *kind;
    const char *name;
    const char *type;
    const char *src_label;
    const char *dst_label;
    names labels, keys, props, src_keys, src_cols, dst_keys, dst_cols;
    int all_props;
    int query_only;
    size_t budget;
} args;

static int usage(void)
{
    fprintf(stderr, "usage: knut_cypher_tool vertex|edge|delete [options] < stream.arrows\n");
    return 2;
}

static int push(names *n, const char *v)
{
    if (n->n == MAX_NAMES)
        return -1;
    n->v[n->n++] = v;
    return 0;
}

static int parse_args(int argc, char **argv, args *a)
{
    memset(a, 0, sizeof(*a));
    if (argc < 2)
        return -1;
    a->kind = argv[1];
    for (int i = 2; i < argc; i++) {
        const char *o = argv[i];
        if (strcmp(o, "--all-props") == 0) {
            a->all_props = 1;
            continue;
        }
        if (strcmp(o, "--query-only") == 0) {
            a->query_only = 1;
            continue;
        }
        if (i + 1 >= argc)
            return -1;
        const char *v = argv[++i];
        int rc = 0;
        if (strcmp(o, "--name") == 0)
            a->name = v;
        else if (strcmp(o, "--type") == 0)
            a->type = v;
        else if (strcmp(o, "--src-label") == 0)
            a->src_label = v;
        else if (strcmp(o, "--dst-label") == 0)
            a->dst_label = v;
        else if (strcmp(o, "--budget") == 0)
            a->budget = (size_t)strtoull(v, NULL, 10);
        else if (strcmp(o, "--label") == 0)
            rc = push(&a->labels, v);
        else if (strcmp(o, "--key") == 0)
            rc = push(&a->keys, v);
        else if (strcmp(o, "--prop") == 0)
            rc = push(&a->props, v);
        else if (strcmp(o, "--src-key") == 0)
            rc = push(&a->src_keys, v);
        else if (strcmp(o, "--src-col") == 0)
            rc = push(&a->src_cols, v);
        else if (strcmp(o, "--dst-key") == 0)
            rc = push(&a->dst_keys, v);
        else if (strcmp(o, "--dst-col") == 0)
            rc = push(&a->dst_cols, v);
        else
            return -1;
        if (rc != 0)
            return -1;
    }
    return 0;
}

static void emit(const char *data, size_t len)
{
    printf("%zu\n", len);
    fwrite(data, 1, len, stdout);
    putchar('\n');
}

static knut_status add_set(knut_graph_mutation *m, const args *a,
                           struct ArrowArrayStream *stream, knut_graph_set_kind *kind,
                           knut_error *err)
{
    if (strcmp(a->kind, "vertex") == 0) {
        knut_graph_vertex_set vs = KNUT_GRAPH_VERTEX_SET_INIT;
        vs.name = a->name;
        vs.labels = a->labels.v;
        vs.n_labels = a->labels.n;
        vs.keys = a->keys.v;
        vs.n_keys = a->keys.n;
        vs.props = a->props.v;
        vs.n_props = a->props.n;
        vs.all_props = a->all_props;
        knut_arrow_stream_move(&vs.stream, stream);
        *kind = KNUT_GRAPH_SET_VERTEX;
        return knut_graph_mutation_add_vertex_set(m, &vs, err);
    }
    if (strcmp(a->kind, "edge") == 0) {
        knut_graph_edge_set es = KNUT_GRAPH_EDGE_SET_INIT;
        es.name = a->name;
        es.type = a->type;
        es.src.label = a->src_label;
        es.src.keys = a->src_keys.v;
        es.src.columns = a->src_cols.n ? a->src_cols.v : NULL;
        es.src.n_keys = a->src_keys.n;
        es.dst.label = a->dst_label;
        es.dst.keys = a->dst_keys.v;
        es.dst.columns = a->dst_cols.n ? a->dst_cols.v : NULL;
        es.dst.n_keys = a->dst_keys.n;
        es.keys = a->keys.v;
        es.n_keys = a->keys.n;
        es.props = a->props.v;
        es.n_props = a->props.n;
        es.all_props = a->all_props;
        knut_arrow_stream_move(&es.stream, stream);
        *kind = KNUT_GRAPH_SET_EDGE;
        return knut_graph_mutation_add_edge_set(m, &es, err);
    }
    knut_graph_delete_set ds = KNUT_GRAPH_DELETE_SET_INIT;
    ds.name = a->name;
    ds.label = a->labels.n ? a->labels.v[0] : NULL;
    ds.keys = a->keys.v;
    ds.n_keys = a->keys.n;
    knut_arrow_stream_move(&ds.stream, stream);
    *kind = KNUT_GRAPH_SET_DELETE;
    return knut_graph_mutation_add_delete_set(m, &ds, err);
}

/* Renders every batch of the set, split by the budget, and prints them. */
static knut_status render_all(knut_graph_set *set, size_t budget, knut_error *err)
{
    knut_buf out = KNUT_BUF_INIT;
    struct ArrowArray batch = {0};
    knut_arrow_view view;
    int have_view = 0;
    knut_status st;
    for (;;) {
        if ((st = knut_graph_set_next(set, &batch, err)) != KNUT_OK || batch.release == NULL)
            goto cleanup;
        if ((st = knut_arrow_view_init(&view, &set->schema, &batch, err)) != KNUT_OK)
            goto cleanup;
        have_view = 1;
        int64_t base = set->rows_read - batch.length;
        for (int64_t from = 0; from < batch.length;) {
            int64_t n;
            knut_buf_clear(&out);
            st = knut_graph_cypher_render(&out, set, &view, from, batch.length, base, budget, &n,
                                          err);
            if (st != KNUT_OK)
                goto cleanup;
            emit(out.data, out.len);
            from += n;
        }
        knut_arrow_view_reset(&view);
        have_view = 0;
        knut_arrow_array_release(&batch);
    }
cleanup:
    if (have_view)
        knut_arrow_view_reset(&view);
    knut_arrow_array_release(&batch);
    knut_buf_reset(&out);
    return st;
}

int main(int argc, char **argv)
{
    args a;
    knut_error err = KNUT_ERROR_INIT;
    knut_graph_mutation *m = NULL;
    struct ArrowArrayStream stream = {0};
    knut_buf q = KNUT_BUF_INIT;
    knut_graph_set_kind kind;
    knut_status st;
    if (parse_args(argc, argv, &a) != 0)
        return usage();
    if ((st = knut_arrow_ipc_stream_open(&stream, knut_arrow_ipc_source_fd(0), NULL, &err)) !=
            KNUT_OK ||
        (st = knut_graph_mutation_new(&m, &err)) != KNUT_OK ||
        (st = add_set(m, &a, &stream, &kind, &err)) != KNUT_OK)
        goto cleanup;
    knut_graph_set *set = knut_graph_mutation_get(m, kind, 0);
    if (a.query_only) {
        if ((st = knut_graph_cypher_query(&q, set, &err)) == KNUT_OK)
            emit(q.data, q.len);
    } else {
        st = render_all(set, a.budget, &err);
    }
cleanup:
    knut_arrow_stream_release(&stream);
    knut_graph_mutation_free(m);
    knut_buf_reset(&q);
    fflush(stdout);
    if (st != KNUT_OK) {
        fprintf(stderr, "knut_cypher_tool: %s: %s\n", knut_strerror(st), err.message);
        return 1;
    }
    return 0;
}
