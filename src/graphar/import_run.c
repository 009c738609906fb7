/*
 * Running a loaded import config: each table becomes a SQL relation
 * (read_parquet / read_csv with file names as quoted literals, or the
 * user's query), property types missing from the config are inferred from
 * the relation's Arrow schema, the vertex and edge infos are built, and a
 * projection (renames, list splits, label flags) is handed to the writer,
 * which does the work in DuckDB. Config-related errors name file:line:col.
 */
#include "import_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define FAIL knut_graphar__fail

static knut_status oom(knut_error *err)
{
    return knut_error_set(err, KNUT_ENOMEM, "import: out of memory");
}

/* ---- building infos and projections ------------------------------------ */

typedef struct build {
    knut_graphar_import *imp;
    knut_duck_conn *conn;
    knut_buf rel;      /* the source relation */
    knut_buf sel;      /* projected items, each after ", " */
    knut_buf query;    /* SELECT <sel> FROM <rel>: what the writer reads */
    scol *cols;
    size_t n_cols;
    char name[512];
    imp_group all;     /* every column, when the config names none */
} build;

static void build_reset(build *b)
{
    knut_buf_clear(&b->rel);
    knut_buf_clear(&b->sel);
    knut_buf_clear(&b->query);
    knut_graphar__import_scols_free(b->cols, b->n_cols);
    b->cols = NULL;
    b->n_cols = 0;
    free(b->all.props);
    memset(&b->all, 0, sizeof b->all);
}

static knut_status open_source(build *b, const imp_source *s, knut_error *err)
{
    build_reset(b);
    knut_graphar__import_source_sql(s, &b->rel);
    knut_graphar__import_source_name(s, b->name, sizeof b->name);
    knut_status st = knut_buf_check(&b->rel, err);
    if (!st && (st = knut_graphar__import_describe(b->conn, b->rel.data, b->name, &b->cols,
                                                   &b->n_cols, err)))
        knut_error_prefix(err, "%s:%d:%d: ", knut_conf_file(s->node), knut_conf_line(s->node),
                          knut_conf_col(s->node));
    return st;
}

static knut_status no_column(build *b, const knut_conf *n, const char *field, const char *col,
                             knut_error *err)
{
    knut_buf list = KNUT_BUF_INIT;
    for (size_t i = 0; i < b->n_cols && i < 32; i++)
        knut_buf_printf(&list, "%s%s", i ? ", " : "", b->cols[i].name);
    knut_status st = FAIL(err, KNUT_EINVAL, n, field, "no column '%s' in %s; it has: %s", col,
                          b->name, list.data ? list.data : "(none)");
    knut_buf_reset(&list);
    return st;
}

/* Adds groups to vi or ei (exactly one non-NULL) and their projections to
 * b->sel; primary_cols (may be NULL) are the columns whose property becomes
 * the primary key by default. */
static knut_status add_groups(build *b, knut_graphar_vertex_info *vi, knut_graphar_edge_info *ei,
                              const imp_group *gs, size_t ng, const char *const *primary_cols,
                              size_t n_primary, const char *what, knut_error *err)
{
    char field[600], type[128];
    knut_status st = KNUT_OK;
    for (size_t g = 0; !st && g < ng; g++) {
        knut_graphar_property_group *pg = NULL;
        st = vi ? knut_graphar_vertex_info_add_group(vi, gs[g].ft, gs[g].prefix, &pg, err)
                : knut_graphar_edge_info_add_group(ei, gs[g].ft, gs[g].prefix, &pg, err);
        for (size_t k = 0; !st && k < gs[g].n_props; k++) {
            const imp_prop *p = &gs[g].props[k];
            snprintf(field, sizeof field, "%s property '%s'", what, p->name);
            const scol *c = knut_graphar__import_find_col(b->cols, b->n_cols, p->column);
            if (!c)
                return no_column(b, p->node, field, p->column, err);
            if ((st = knut_graphar__import_prop_type(p, c, field, type, sizeof type, err)))
                return st;
            int primary = p->primary_given ? p->primary
                                           : vi && n_primary == 1 &&
                                                 strcmp(primary_cols[0], p->column) == 0;
            int nullable = p->nullable_given ? p->nullable : !primary;
            knut_error sub = KNUT_ERROR_INIT;
            if (knut_graphar_group_add_property(pg, p->name, type, primary, nullable, p->card,
                                                &sub))
                return FAIL(err, sub.code, p->node, field, "%s", sub.message);
            knut_buf_puts(&b->sel, ", ");
            if (p->delimiter) {
                knut_buf_puts(&b->sel, "string_split(s.");
                knut_duck_ident(&b->sel, p->column);
                knut_buf_puts(&b->sel, ", ");
                /* b->query goes to the writer as SQL text: no parameters. */
                knut_duck_literal(&b->sel, p->delimiter, strlen(p->delimiter));
                knut_buf_puts(&b->sel, ")");
            } else {
                knut_buf_puts(&b->sel, "s.");
                knut_duck_ident(&b->sel, p->column);
            }
            knut_buf_puts(&b->sel, " AS ");
            knut_duck_ident(&b->sel, p->name);
        }
    }
    return st;
}

/* No properties in the config: every source column, in one group. */
static knut_status all_columns(build *b, const imp_group **gs, size_t *ng, knut_error *err)
{
    if (*ng)
        return KNUT_OK;
    if (!(b->all.props = calloc(b->n_cols + 1, sizeof *b->all.props)))
        return oom(err);
    for (size_t i = 0; i < b->n_cols; i++) {
        b->all.props[i].node = b->imp->root;
        b->all.props[i].name = b->all.props[i].column = b->cols[i].name;
        b->all.props[i].nullable = 1;
    }
    b->all.n_props = b->n_cols;
    b->all.ft = b->imp->ft;
    *gs = &b->all;
    *ng = 1;
    return KNUT_OK;
}

/* SELECT <items> FROM <relation> AS s, into b->query. */
static knut_status finish_query(build *b, knut_error *err)
{
    knut_status st = knut_buf_check(&b->sel, err);
    if (st || b->sel.len < 2)
        return st ? st : knut_error_set(err, KNUT_EINVAL, "import: nothing to select");
    knut_buf_printf(&b->query, "SELECT %s FROM %s AS s", b->sel.data + 2, b->rel.data);
    return knut_buf_check(&b->query, err);
}

static void report(const knut_graphar_import_options *o, const char *what,
                   const knut_graphar_write_stats *st)
{
    if (o && o->progress)
        o->progress(o->progress_ctx, what, st);
}

static knut_status run_vertex(build *b, knut_graphar_writer *w, knut_graphar_graph_info *gi,
                              const imp_vertex *v, const knut_graphar_import_options *o,
                              knut_error *err)
{
    char what[300], field[320];
    snprintf(what, sizeof what, "vertex %s", v->type);
    knut_status st = open_source(b, &v->src, err);
    if (st)
        return st;
    const imp_group *gs = v->groups;
    size_t ng = v->n_groups;
    if ((st = all_columns(b, &gs, &ng, err)))
        return st;
    /* Key columns: as given, or the one property marked primary. */
    const char *const *keys = v->keys;
    size_t nk = v->n_keys, n_primary = 0;
    for (size_t g = 0; !v->n_keys && g < ng; g++)
        for (size_t k = 0; k < gs[g].n_props; k++)
            if (gs[g].props[k].primary) {
                keys = &gs[g].props[k].column;
                nk = 1;
                n_primary++;
            }
    if (n_primary > 1)
        return FAIL(err, KNUT_EINVAL, v->node, what,
                    "several primary properties: name the key columns in 'key'");
    if (!nk)
        return FAIL(err, KNUT_EINVAL, v->node, what,
                    "no 'key': name the column(s) identifying a vertex, or mark a property "
                    "primary");
    for (size_t k = 0; k < nk; k++)
        if (!knut_graphar__import_find_col(b->cols, b->n_cols, keys[k]))
            return no_column(b, v->key_node ? v->key_node : v->node, what, keys[k], err);
    char **kcols = NULL, **lcols = NULL;
    size_t n_kcols = 0, n_lcols = 0;
    char *prefix = NULL;
    if (!v->prefix && (prefix = malloc(strlen(v->type) + sizeof "vertex//")))
        sprintf(prefix, "vertex/%s/", v->type);
    knut_graphar_vertex_info *vi = NULL;
    st = knut_graphar_vertex_info_new(&vi, v->type, v->chunk_size,
                                      v->prefix ? v->prefix : prefix, err);
    free(prefix);
    if (st)
        return knut_error_prefix(err, "%s:%d:%d: ", knut_conf_file(v->node),
                                 knut_conf_line(v->node), knut_conf_col(v->node));
    if (nk > 64) {
        st = FAIL(err, KNUT_EUNSUPPORTED, v->node, what, "at most 64 key columns");
        goto fail;
    }
    if (!(kcols = calloc(nk + 1, sizeof *kcols))) {
        st = oom(err);
        goto fail;
    }
    for (size_t k = 0; k < nk; k++, n_kcols++)
        if (!(kcols[k] = knut_graphar__import_key_alias(&b->sel, gs, ng, kcols, k, keys[k],
                                                        "__knut_key", k))) {
            st = oom(err);
            goto fail;
        }
    if ((st = add_groups(b, vi, NULL, gs, ng, keys, nk, what, err)))
        goto fail;
    for (size_t l = 0; l < v->n_labels; l++) {
        const char *col = v->labels[l].column ? v->labels[l].column : v->label_column;
        snprintf(field, sizeof field, "%s label '%s'", what, v->labels[l].name);
        if (!knut_graphar__import_find_col(b->cols, b->n_cols, col)) {
            st = no_column(b, v->node, field, col, err);
            goto fail;
        }
        if ((st = knut_graphar_vertex_info_add_label(vi, v->labels[l].name, err)))
            goto fail;
        knut_buf_puts(&b->sel, ", ");
        if (v->labels[l].column) {
            knut_buf_puts(&b->sel, "s.");
            knut_duck_ident(&b->sel, col);
        } else {
            /* The reference's `:LABEL` convention: names joined by ';'. */
            knut_buf_puts(&b->sel, "coalesce(list_contains(string_split(s.");
            knut_duck_ident(&b->sel, col);
            knut_buf_puts(&b->sel, ", ");
            /* b->query goes to the writer as SQL text: no parameters. */
            knut_duck_literal(&b->sel, v->label_delimiter, strlen(v->label_delimiter));
            knut_buf_puts(&b->sel, "), ");
            knut_duck_literal(&b->sel, v->labels[l].name, strlen(v->labels[l].name));
            knut_buf_puts(&b->sel, "), false)");
        }
        knut_buf_printf(&b->sel, " AS __knut_label%zu", l);
    }
    if ((st = finish_query(b, err)) || (st = knut_graphar_graph_info_add_vertex(gi, vi, NULL, err)))
        goto fail;
    vi = NULL; /* the graph owns it now */
    if (!(lcols = calloc(v->n_labels + 1, sizeof *lcols)))
        st = oom(err);
    for (size_t l = 0; !st && l < v->n_labels; l++, n_lcols++)
        if ((lcols[l] = malloc(48)))
            snprintf(lcols[l], 48, "__knut_label%zu", l);
        else
            st = oom(err);
    knut_graphar_vertex_source vs = {0};
    vs.query = b->query.data;
    vs.name = b->name;
    vs.keys = (const char *const *)kcols;
    vs.n_keys = nk;
    vs.label_columns = (const char *const *)lcols;
    vs.order_by_key = v->order_by_key;
    knut_graphar_write_stats ws = {0};
    if (!st)
        st = knut_graphar_writer_write_vertices(w, v->type, &vs, &ws, err);
    if (!st)
        report(o, what, &ws);
fail:
    knut_graphar__strv_free(lcols, n_lcols);
    knut_graphar__strv_free(kcols, n_kcols);
    knut_graphar_vertex_info_free(vi);
    return st;
}

/* No properties named for an edge: every column but the endpoint keys. */
static knut_status edge_columns(build *b, const imp_edge *e, const imp_group **gs, size_t *ng,
                                knut_error *err)
{
    if (*ng)
        return KNUT_OK;
    knut_status st = all_columns(b, gs, ng, err);
    size_t keep = 0;
    for (size_t i = 0; !st && i < b->all.n_props; i++) {
        int key = 0;
        for (size_t k = 0; k < e->n_src_keys; k++)
            key |= strcmp(b->all.props[i].column, e->src_keys[k]) == 0;
        for (size_t k = 0; k < e->n_dst_keys; k++)
            key |= strcmp(b->all.props[i].column, e->dst_keys[k]) == 0;
        if (!key)
            b->all.props[keep++] = b->all.props[i];
    }
    b->all.n_props = keep;
    if (!keep)
        *ng = 0;
    return st;
}

static knut_status run_edge(build *b, knut_graphar_writer *w, knut_graphar_graph_info *gi,
                            const imp_edge *e, const knut_graphar_import_options *o,
                            knut_error *err)
{
    char what[400];
    snprintf(what, sizeof what, "edge %s_%s_%s", e->src_type, e->edge_type, e->dst_type);
    knut_status st = open_source(b, &e->src, err);
    if (st)
        return st;
    const imp_group *gs = e->groups;
    size_t ng = e->n_groups, nk = e->n_src_keys + e->n_dst_keys, n_keys = 0;
    const knut_graphar_vertex_info *sv = knut_graphar_graph_info_vertex(gi, e->src_type);
    const knut_graphar_vertex_info *dv = knut_graphar_graph_info_vertex(gi, e->dst_type);
    if (!sv || !dv)
        return FAIL(err, KNUT_EINVAL, e->node, what, "endpoint vertex types missing");
    if ((st = edge_columns(b, e, &gs, &ng, err)))
        return st;
    char **keys = calloc(nk + 1, sizeof *keys);
    knut_graphar_edge_info *ei = NULL;
    char *prefix = NULL;
    if (!keys) {
        st = oom(err);
        goto cleanup;
    }
    for (size_t k = 0; k < nk; k++, n_keys++) {
        int src = k < e->n_src_keys;
        const char *col = src ? e->src_keys[k] : e->dst_keys[k - e->n_src_keys];
        if (!knut_graphar__import_find_col(b->cols, b->n_cols, col)) {
            st = no_column(b, e->node, what, col, err);
            goto cleanup;
        }
        /* A property sharing the key's name gets the key a private name. */
        if (!(keys[k] = knut_graphar__import_key_alias(&b->sel, gs, ng, keys, k, col,
                                                       src ? "__knut_src" : "__knut_dst",
                                                       src ? k : k - e->n_src_keys))) {
            st = oom(err);
            goto cleanup;
        }
    }
    if (!e->prefix && (prefix = knut_graphar__edge_key(e->src_type, e->edge_type, e->dst_type,
                                                       "/"))) {
        char *p = malloc(strlen(prefix) + sizeof "edge/");
        if (p)
            sprintf(p, "edge/%s", prefix);
        free(prefix);
        prefix = p;
    }
    st = knut_graphar_edge_info_new(&ei, e->src_type, e->edge_type, e->dst_type, e->chunk_size,
                                    sv->chunk_size, dv->chunk_size, e->directed,
                                    e->prefix ? e->prefix : prefix, err);
    for (size_t a = 0; !st && a < e->n_adj; a++)
        st = knut_graphar_edge_info_add_adj_list(ei, e->adj[a].type, e->adj[a].ft,
                                                 e->adj[a].prefix, err);
    if (st) {
        knut_error_prefix(err, "%s:%d:%d: ", knut_conf_file(e->node), knut_conf_line(e->node),
                          knut_conf_col(e->node));
        goto cleanup;
    }
    if ((st = add_groups(b, NULL, ei, gs, ng, NULL, 0, what, err)) ||
        (st = finish_query(b, err)) || (st = knut_graphar_graph_info_add_edge(gi, ei, NULL, err)))
        goto cleanup;
    ei = NULL; /* the graph owns it now */
    knut_graphar_edge_source es = {0};
    es.query = b->query.data;
    es.name = b->name;
    es.src_keys = (const char *const *)keys;
    es.n_src_keys = e->n_src_keys;
    es.dst_keys = (const char *const *)keys + e->n_src_keys;
    es.n_dst_keys = e->n_dst_keys;
    es.on_unknown = e->on_unknown;
    es.rejects_path = e->rejects;
    knut_graphar_write_stats ws = {0};
    st = knut_graphar_writer_write_edges(w, e->src_type, e->edge_type, e->dst_type, &es, &ws,
                                         err);
    if (!st)
        report(o, what, &ws);
cleanup:
    free(prefix);
    knut_graphar_edge_info_free(ei);
    knut_graphar__strv_free(keys, n_keys);
    return st;
}

knut_status knut_graphar_import_run(knut_graphar_import *imp,
                                    const knut_graphar_import_options *opts, char **graph_yml,
                                    knut_error *err)
{
    KNUT_ASSERT_ARG(err, imp);
    if (graph_yml)
        *graph_yml = NULL;
    KNUT_CHECK_VERSION(opts, KNUT_GRAPHAR_IMPORT_OPTIONS_VERSION, err);
    const char *out = opts && opts->output ? opts->output : imp->output;
    if (!out)
        return knut_error_set(err, KNUT_EINVAL,
                              "%s: no output directory: set 'output' or pass one",
                              knut_conf_file(imp->root));
    knut_graphar_graph_info *gi = NULL;
    knut_graphar_writer *w = NULL;
    char *staging = NULL; /* the new graph, swapped in when whole */
    build b;
    memset(&b, 0, sizeof b);
    b.imp = imp;
    knut_graphar_writer_options wo = KNUT_GRAPHAR_WRITER_OPTIONS_INIT;
    wo.memory_limit = opts && opts->memory_limit ? opts->memory_limit : imp->memory_limit;
    wo.temp_directory = opts && opts->temp_directory ? opts->temp_directory
                                                     : imp->temp_directory;
    wo.threads = opts && opts->threads ? opts->threads : (int)imp->threads;
    wo.parquet_compression = imp->compression;
    knut_status st = knut_graphar__stage_begin(out, opts ? opts->overwrite : 0, &staging, err);
    if (!st)
        st = knut_graphar_graph_info_new(&gi, imp->graph, NULL, err);
    if (!st)
        st = knut_graphar_writer_new(&w, gi, staging, &wo, err);
    if (st)
        goto cleanup;
    b.conn = knut_graphar_writer_conn(w);
    if (*imp->dir) {
        /* Relative paths inside queries resolve where the config is, as
         * `table:` paths do. */
        knut_buf set = KNUT_BUF_INIT;
        knut_buf_puts(&set, "SET file_search_path = "); /* SET takes no parameter */
        knut_duck_literal(&set, imp->dir, strlen(imp->dir));
        if (!(st = knut_buf_check(&set, err)))
            st = knut_duck_exec(b.conn, set.data, err);
        knut_buf_reset(&set);
        if (st)
            goto cleanup;
    }
    for (size_t i = 0; !st && i < imp->nv; i++)
        st = run_vertex(&b, w, gi, &imp->v[i], opts, err);
    for (size_t i = 0; !st && i < imp->ne; i++)
        st = run_edge(&b, w, gi, &imp->e[i], opts, err);
    if (!st)
        st = knut_graphar_writer_finish(w, err);
    knut_graphar_writer_free(w); /* closes DuckDB and its spill files first */
    w = NULL;
    if (!st) {
        st = knut_graphar__stage_commit(staging, out, err);
        staging = NULL;
    }
    if (!st && graph_yml) {
        size_t ol = strlen(out);
        if ((*graph_yml = malloc(ol + strlen(imp->graph) + sizeof "/.graph.yml")))
            sprintf(*graph_yml, "%s%s%s.graph.yml", out, ol && out[ol - 1] == '/' ? "" : "/",
                    imp->graph);
        else
            st = oom(err);
    }
cleanup:
    knut_graphar__stage_abort(staging); /* a failed import: the old graph stays */
    build_reset(&b);
    knut_buf_reset(&b.rel);
    knut_buf_reset(&b.sel);
    knut_buf_reset(&b.query);
    knut_graphar_writer_free(w);
    knut_graphar_graph_info_free(gi);
    return st;
}
