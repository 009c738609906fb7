/*
 * `knut gar info`: what a GraphAr graph holds, from its YAML files and its
 * count files: vertex and edge types, chunk sizes, labels, property groups
 * with their file types and properties, and the vertex and edge counts.
 * Only the 8-byte count files are read (no chunk, no DuckDB), so it is
 * instant on any graph size. A count that cannot be read is shown as
 * unknown with the reason: metadata-only graphs are legitimate.
 */
#include "cli.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "knut/graphar.h"

typedef struct info_args {
    const char *path;
    const char *data_dir;
    int format; /* index in text_json */
} info_args;

static const char *const text_json[] = {"text", "json", NULL};

static const knut_cli_opt info_opts[] = {
    KNUT_CLI_OPT_CHOICE("format", 'f', info_args, format, "FMT", text_json,
                        "text   for people (the default)\n"
                        "json   one JSON document (counts are null when\n"
                        "       unknown, with a *_error field saying why)"),
    KNUT_CLI_OPT_STR("data-dir", 0, info_args, data_dir, "DIR",
                     "read the count files under DIR instead of the graph's prefix"),
    KNUT_CLI_OPT_END,
};

static const knut_cli_arg info_pos[] = {KNUT_CLI_ARG("PATH", info_args, path), KNUT_CLI_ARG_END};

const knut_cli_spec knut_cmd_gar_info_spec = {
    .name = "gar info",
    .synopsis = "usage: knut gar info [-f|--format text|json] [--data-dir DIR] PATH\n",
    .about =
        "Describes a GraphAr (gar/v1) graph: its name, version and prefix; each\n"
        "vertex type (chunk size, vertex count, labels, property groups with their\n"
        "file types and properties); each edge type (source, edge and destination\n"
        "types, directed or not, chunk sizes, adjacency lists with their file\n"
        "types and edge counts, property groups). Counts come from the\n"
        "vertex_count and edge_count<i> files; a count that cannot be read is\n"
        "shown as unknown, with the reason. PATH is a *.graph.yml, or a directory\n"
        "holding exactly one.\n",
    .opts = info_opts,
    .args = info_pos,
    .epilog =
        "Examples:\n"
        "  knut gar info ../shared/data/graphar-testing/modern_graph\n"
        "  knut gar info ../shared/data/graphar-testing/ldbc_sample/parquet/ldbc_sample.graph.yml\n"
        "  knut gar info -f json ../shared/data/graphar-testing/neo4j | jq '.vertices[].count'\n"
        "\n"
        "Exit status: 0 ok, 1 the graph could not be loaded, 2 usage error.\n",
};

/* A count, or -1 with the reason in why. */
typedef struct count {
    int64_t n;
    knut_error why;
} count;

static void vertex_count(knut_graphar_reader *r, const knut_graphar_vertex_info *vi, count *c)
{
    knut_error_clear(&c->why);
    if (knut_graphar_reader_vertex_count(r, vi, &c->n, &c->why) != KNUT_OK)
        c->n = -1;
}

/* Edges of one adj list (summed edge_count<i>) and its number of parts. */
static void edge_count(knut_graphar_reader *r, const knut_graphar_edge_info *ei,
                       knut_graphar_adj_list_type t, count *edges, int64_t *parts)
{
    int64_t aligned = 0;
    knut_error_clear(&edges->why);
    *parts = -1;
    if (knut_graphar_reader_edge_count(r, ei, t, KNUT_GRAPHAR_ALL, &edges->n, &edges->why) !=
        KNUT_OK) {
        edges->n = -1;
        return;
    }
    knut_error e = KNUT_ERROR_INIT;
    if (knut_graphar_reader_aligned_count(r, ei, t, &aligned, &e) == KNUT_OK)
        *parts = knut_graphar_chunk_count(aligned, knut_graphar_aligned_chunk_size(ei, t));
}

static const char *or_empty(const char *s)
{
    return s ? s : "";
}

/* ---- text ---------------------------------------------------------------- */

static void print_groups(FILE *f, const knut_graphar_property_group *g, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "  group %s (%s)\n", or_empty(g[i].prefix),
                knut_graphar_file_type_name(g[i].file_type));
        for (size_t k = 0; k < g[i].n_props; k++) {
            const knut_graphar_property *p = &g[i].props[k];
            const char *type = p->type_text ? p->type_text : knut_graphar_type_name(p->type);
            const char *flag = p->is_primary ? "primary" : !p->is_nullable ? "not-null" : "";
            int card = p->cardinality != KNUT_GRAPHAR_CARD_SINGLE;
            if (!*flag && !card) {
                fprintf(f, "    %-20s %s\n", or_empty(p->name), type);
                continue;
            }
            fprintf(f, "    %-20s %-12s %s%s%s%s\n", or_empty(p->name), type, flag,
                    *flag && card ? " " : "", card ? "cardinality=" : "",
                    card ? knut_graphar_cardinality_name(p->cardinality) : "");
        }
    }
}

static void print_labels(FILE *f, const char *indent, char **labels, size_t n)
{
    if (n == 0)
        return;
    fprintf(f, "%slabels      ", indent);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s%s", i ? ", " : "", labels[i]);
    fputc('\n', f);
}

static void print_text(FILE *f, const knut_graphar_graph_info *gi, knut_graphar_reader *r,
                       const char *data_dir)
{
    knut_buf ver = KNUT_BUF_INIT;
    if (gi->version.present)
        knut_graphar_version_format(&gi->version, &ver);
    fprintf(f, "graph %s\n", or_empty(gi->name));
    fprintf(f, "  file        %s\n", or_empty(gi->source));
    fprintf(f, "  version     %s\n", ver.data ? ver.data : "(none)");
    fprintf(f, "  prefix      %s\n", or_empty(gi->prefix));
    if (strcmp(data_dir, or_empty(gi->prefix)) != 0)
        fprintf(f, "  data        %s\n", data_dir);
    print_labels(f, "  ", gi->labels, gi->n_labels);
    for (size_t i = 0; i < gi->n_extra; i++)
        fprintf(f, "  extra       %s = %s\n", or_empty(gi->extra[i].key),
                or_empty(gi->extra[i].value));
    fprintf(f, "  %zu vertex type%s, %zu edge type%s\n", gi->n_vertices,
            gi->n_vertices == 1 ? "" : "s", gi->n_edges, gi->n_edges == 1 ? "" : "s");
    knut_buf_reset(&ver);

    for (size_t v = 0; v < gi->n_vertices; v++) {
        const knut_graphar_vertex_info *vi = gi->vertices[v];
        count c;
        vertex_count(r, vi, &c);
        fprintf(f, "\nvertex %s\n", or_empty(vi->type));
        if (c.n >= 0)
        {
            int64_t chunks = knut_graphar_chunk_count(c.n, vi->chunk_size);
            fprintf(f, "  count       %lld (%lld chunk%s of %lld)\n", (long long)c.n,
                    (long long)chunks, chunks == 1 ? "" : "s", (long long)vi->chunk_size);
        }
        else
            fprintf(f, "  count       unknown: %s\n  chunk size  %lld\n", c.why.message,
                    (long long)vi->chunk_size);
        fprintf(f, "  prefix      %s\n", or_empty(vi->prefix));
        print_labels(f, "  ", vi->labels, vi->n_labels);
        print_groups(f, vi->groups, vi->n_groups);
    }
    for (size_t e = 0; e < gi->n_edges; e++) {
        const knut_graphar_edge_info *ei = gi->edges[e];
        fprintf(f, "\nedge %s_%s_%s: %s -[%s]-%s %s (%s)\n", or_empty(ei->src_type),
                or_empty(ei->edge_type), or_empty(ei->dst_type), or_empty(ei->src_type),
                or_empty(ei->edge_type), ei->directed ? ">" : "", or_empty(ei->dst_type),
                ei->directed ? "directed" : "undirected");
        fprintf(f, "  chunk size  %lld (src chunk size %lld, dst chunk size %lld)\n",
                (long long)ei->chunk_size, (long long)ei->src_chunk_size,
                (long long)ei->dst_chunk_size);
        fprintf(f, "  prefix      %s\n", or_empty(ei->prefix));
        for (size_t a = 0; a < ei->n_adj_lists; a++) {
            const knut_graphar_adj_list *al = &ei->adj_lists[a];
            count c;
            int64_t parts;
            edge_count(r, ei, al->type, &c, &parts);
            fprintf(f, "  adj list %s (%s): ", knut_graphar_adj_list_type_name(al->type),
                    knut_graphar_file_type_name(al->file_type));
            if (c.n >= 0)
                fprintf(f, "%lld edges in %lld part%s\n", (long long)c.n, (long long)parts,
                        parts == 1 ? "" : "s");
            else
                fprintf(f, "edges unknown: %s\n", c.why.message);
        }
        print_groups(f, ei->groups, ei->n_groups);
    }
}

/* ---- json ---------------------------------------------------------------- */

static json_t *jstr(const char *s)
{
    return s ? json_string(s) : json_null();
}

static json_t *jstrv(char **v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, jstr(v[i]));
    return a;
}

static void jcount(json_t *o, const char *key, const count *c)
{
    json_object_set_new(o, key, c->n >= 0 ? json_integer(c->n) : json_null());
    if (c->n < 0) {
        char k[64];
        snprintf(k, sizeof k, "%s_error", key);
        json_object_set_new(o, k, json_string(c->why.message));
    }
}

static json_t *jgroups(const knut_graphar_property_group *g, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *jg = json_object(), *props = json_array();
        json_object_set_new(jg, "prefix", jstr(g[i].prefix));
        json_object_set_new(jg, "file_type",
                            json_string(knut_graphar_file_type_name(g[i].file_type)));
        for (size_t k = 0; k < g[i].n_props; k++) {
            const knut_graphar_property *p = &g[i].props[k];
            json_t *jp = json_object();
            json_object_set_new(jp, "name", jstr(p->name));
            json_object_set_new(jp, "data_type",
                                jstr(p->type_text ? p->type_text : knut_graphar_type_name(p->type)));
            json_object_set_new(jp, "is_primary", json_boolean(p->is_primary));
            json_object_set_new(jp, "is_nullable", json_boolean(p->is_nullable));
            json_object_set_new(jp, "cardinality",
                                json_string(knut_graphar_cardinality_name(p->cardinality)));
            json_array_append_new(props, jp);
        }
        json_object_set_new(jg, "properties", props);
        json_array_append_new(a, jg);
    }
    return a;
}

static json_t *build_json(const knut_graphar_graph_info *gi, knut_graphar_reader *r,
                          const char *data_dir)
{
    json_t *root = json_object(), *vs = json_array(), *es = json_array();
    knut_buf ver = KNUT_BUF_INIT;
    if (gi->version.present)
        knut_graphar_version_format(&gi->version, &ver);
    json_object_set_new(root, "name", jstr(gi->name));
    json_object_set_new(root, "file", jstr(gi->source));
    json_object_set_new(root, "version", jstr(ver.data));
    json_object_set_new(root, "prefix", jstr(gi->prefix));
    json_object_set_new(root, "data_dir", jstr(data_dir));
    json_object_set_new(root, "labels", jstrv(gi->labels, gi->n_labels));
    knut_buf_reset(&ver);
    for (size_t v = 0; v < gi->n_vertices; v++) {
        const knut_graphar_vertex_info *vi = gi->vertices[v];
        json_t *o = json_object();
        count c;
        vertex_count(r, vi, &c);
        json_object_set_new(o, "type", jstr(vi->type));
        json_object_set_new(o, "file", jstr(vi->source));
        json_object_set_new(o, "prefix", jstr(vi->prefix));
        json_object_set_new(o, "chunk_size", json_integer(vi->chunk_size));
        jcount(o, "count", &c);
        json_object_set_new(o, "chunks", c.n >= 0 ? json_integer(knut_graphar_chunk_count(
                                                        c.n, vi->chunk_size))
                                                  : json_null());
        json_object_set_new(o, "labels", jstrv(vi->labels, vi->n_labels));
        json_object_set_new(o, "property_groups", jgroups(vi->groups, vi->n_groups));
        json_array_append_new(vs, o);
    }
    for (size_t e = 0; e < gi->n_edges; e++) {
        const knut_graphar_edge_info *ei = gi->edges[e];
        json_t *o = json_object(), *adjs = json_array();
        json_object_set_new(o, "src_type", jstr(ei->src_type));
        json_object_set_new(o, "edge_type", jstr(ei->edge_type));
        json_object_set_new(o, "dst_type", jstr(ei->dst_type));
        json_object_set_new(o, "file", jstr(ei->source));
        json_object_set_new(o, "prefix", jstr(ei->prefix));
        json_object_set_new(o, "directed", json_boolean(ei->directed));
        json_object_set_new(o, "chunk_size", json_integer(ei->chunk_size));
        json_object_set_new(o, "src_chunk_size", json_integer(ei->src_chunk_size));
        json_object_set_new(o, "dst_chunk_size", json_integer(ei->dst_chunk_size));
        count first = {-1, KNUT_ERROR_INIT};
        knut_error_set(&first.why, KNUT_ENOTFOUND, "no adj list");
        for (size_t a = 0; a < ei->n_adj_lists; a++) {
            const knut_graphar_adj_list *al = &ei->adj_lists[a];
            json_t *ja = json_object();
            count c;
            int64_t parts;
            edge_count(r, ei, al->type, &c, &parts);
            json_object_set_new(ja, "type",
                                json_string(knut_graphar_adj_list_type_name(al->type)));
            json_object_set_new(ja, "file_type",
                                json_string(knut_graphar_file_type_name(al->file_type)));
            json_object_set_new(ja, "prefix", jstr(al->prefix));
            jcount(ja, "count", &c);
            json_object_set_new(ja, "parts", parts >= 0 ? json_integer(parts) : json_null());
            json_array_append_new(adjs, ja);
            if (a == 0 || (first.n < 0 && c.n >= 0))
                first = c;
        }
        /* The edge count: from the first adj list whose counts are readable. */
        jcount(o, "count", &first);
        json_object_set_new(o, "adj_lists", adjs);
        json_object_set_new(o, "property_groups", jgroups(ei->groups, ei->n_groups));
        json_array_append_new(es, o);
    }
    json_object_set_new(root, "vertices", vs);
    json_object_set_new(root, "edges", es);
    return root;
}

int knut_cmd_gar_info(int argc, char **argv)
{
    info_args a = {0};
    knut_error err = KNUT_ERROR_INIT;
    knut_graphar_graph_info *gi = NULL;
    knut_graphar_reader *r = NULL;
    int rc = knut_cli_args_parse(&knut_cmd_gar_info_spec, argc, argv, &a);
    if (rc != KNUT_CLI_RUN)
        return rc;
    rc = KNUT_EXIT_FAIL;
    if (knut_graphar_graph_load_path(&gi, a.path, &err) != KNUT_OK)
        goto cleanup;
    const char *data_dir = a.data_dir ? a.data_dir : knut_graphar_graph_data_dir(gi);
    if (knut_graphar_reader_new(&r, NULL, data_dir, NULL, &err) != KNUT_OK)
        goto cleanup;
    if (a.format == 1) { /* json */
        json_t *doc = build_json(gi, r, data_dir);
        int bad = !doc || json_dumpf(doc, stdout, JSON_INDENT(2)) != 0;
        json_decref(doc);
        if (bad) {
            knut_error_set(&err, KNUT_EIO, "writing the JSON document failed");
            goto cleanup;
        }
        fputc('\n', stdout);
    } else {
        print_text(stdout, gi, r, data_dir);
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        knut_error_set(&err, KNUT_EIO, "writing to stdout failed");
        goto cleanup;
    }
    rc = KNUT_EXIT_OK;
cleanup:
    if (rc != KNUT_EXIT_OK)
        fprintf(stderr, "knut gar info: %s\n", err.message[0] ? err.message : "failed");
    knut_graphar_reader_free(r);
    knut_graphar_graph_info_free(gi);
    return rc;
}
