/*
 * The GraphAr validator's entry points: the rule table, the issue list, a
 * load that survives broken files (each vertex/edge YAML is loaded on its
 * own, so one bad file becomes an issue instead of hiding the rest), the
 * choice of the data root, and the order of the passes (info rules first,
 * then vertex data, then edge data, which needs the vertex counts).
 */
#include "validate_int.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- rules ------------------------------------------------------------- */

#define GV_SEV_E KNUT_GRAPHAR_SEV_ERROR
#define GV_SEV_W KNUT_GRAPHAR_SEV_WARNING

static const knut_graphar_rule rules[GV_N_RULES] = {
#define GV_X_TABLE(name, id, sev, meaning) {id, GV_SEV_##sev, meaning},
    GV_RULES(GV_X_TABLE)
#undef GV_X_TABLE
};

const knut_graphar_rule *knut_graphar_validate_rules(size_t *n)
{
    if (n)
        *n = GV_N_RULES;
    return rules;
}

const char *knut_graphar_severity_name(knut_graphar_severity s)
{
    return s == KNUT_GRAPHAR_SEV_ERROR ? "error" : "warning";
}

/* ---- issues ------------------------------------------------------------ */

static void issue_reset(knut_graphar_issue *it)
{
    free(it->file);
    free(it->field);
    free(it->message);
}

void knut_graphar_issues_free(knut_graphar_issues *issues)
{
    if (!issues)
        return;
    for (size_t i = 0; i < issues->n; i++)
        issue_reset(&issues->items[i]);
    free(issues->items);
    free(issues);
}

void knut_graphar__validate_fail(gv_ctx *c, knut_status st, const knut_error *sub)
{
    if (c->fatal != KNUT_OK)
        return;
    c->fatal = st != KNUT_OK ? st : KNUT_ERROR;
    if (sub && sub->message[0])
        knut_error_set(c->err, c->fatal, "%s", sub->message);
    else
        knut_error_set(c->err, c->fatal, "graphar validate: %s", knut_strerror(c->fatal));
}

/* Messages are one line: DuckDB's and the loader's may hold newlines. */
static void one_line(char *s)
{
    for (; *s; s++)
        if (*s == '\n' || *s == '\r' || *s == '\t')
            *s = ' ';
}

void knut_graphar__validate_issue(gv_ctx *c, gv_rule rule, const char *file,
                                  const knut_graphar_pos *pos, const char *field, const char *fmt,
                                  ...)
{
    if (gv_done(c))
        return;
    knut_graphar_issues *is = c->issues;
    if (is->n >= c->cap) { /* not kept, but counted: valid means no error at all */
        is->truncated = 1;
        if (rules[rule].severity == KNUT_GRAPHAR_SEV_ERROR)
            is->n_errors++;
        else
            is->n_warnings++;
        return;
    }
    knut_graphar_issue *items = realloc(is->items, (is->n + 1) * sizeof *items);
    if (!items) {
        knut_graphar__validate_fail(c, KNUT_ENOMEM, NULL);
        return;
    }
    is->items = items;
    knut_graphar_issue *it = &items[is->n];
    memset(it, 0, sizeof *it);
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    one_line(msg);
    it->severity = rules[rule].severity;
    it->rule = rules[rule].id;
    it->file = strdup(file ? file : "");
    it->field = strdup(field ? field : "");
    it->message = strdup(msg);
    if (pos && pos->line > 0) {
        it->line = pos->line;
        it->col = pos->col;
    }
    if (!it->file || !it->field || !it->message) {
        issue_reset(it);
        knut_graphar__validate_fail(c, KNUT_ENOMEM, NULL);
        return;
    }
    is->n++;
    if (it->severity == KNUT_GRAPHAR_SEV_ERROR)
        is->n_errors++;
    else
        is->n_warnings++;
}

/* ---- resilient loading ------------------------------------------------- */

/* A loader's error as an issue: the position goes into the issue's own
 * fields and the text is the message after its "file[:line:col]: " prefix. */
static void loader_issue(gv_ctx *c, gv_rule rule, const char *file, const knut_error *e)
{
    /* The loaders (knut_conf_load_file, knut_graphar_*_load of this one
     * file) set both as data (knut_error_set_at). */
    (void)file;
    knut_graphar_pos pos = {e->line, e->col};
    const char *msg = e->message;
    if (e->text_at > 0 && (size_t)e->text_at <= strlen(e->message))
        msg += e->text_at;
    knut_graphar__validate_issue(c, rule, file, &pos, NULL, "%s", msg);
}

/* Loads one YAML tree for classification; reports why it cannot be. */
static knut_conf *load_conf(gv_ctx *c, const char *file)
{
    knut_conf *root = NULL;
    knut_error e = KNUT_ERROR_INIT;
    knut_status st = knut_conf_load_file(&root, file, &e);
    if (st == KNUT_ENOMEM)
        knut_graphar__validate_fail(c, st, &e);
    else if (st == KNUT_EPARSE)
        loader_issue(c, GV_YAML_PARSE, file, &e);
    else if (st != KNUT_OK)
        loader_issue(c, GV_INFO_UNREADABLE, file, &e);
    return root;
}

/* A file the loader refused: name the specific rules if the YAML tree
 * shows them, else pass the loader's own message on. */
static void classify_failure(gv_ctx *c, const char *file, int kind, const knut_error *e)
{
    if (e->code == KNUT_ENOMEM) {
        knut_graphar__validate_fail(c, e->code, e);
        return;
    }
    knut_conf *root = load_conf(c, file);
    if (!root)
        return;
    if (knut_graphar__validate_prescan(c, root, file, kind) == 0)
        loader_issue(c, GV_INFO_LOAD, file, e);
    /* Remember the type it declares, so edges naming it are not also
     * reported for a missing vertex type. */
    const knut_conf *t = kind == 'v' ? knut_conf_get(root, "type") : NULL;
    if (kind == 'v' && !knut_conf_str(t))
        t = knut_conf_get(root, "label");
    const char *type = knut_conf_str(t);
    if (type && *type) {
        char **v = realloc(c->failed_types, (c->n_failed_types + 1) * sizeof *v);
        if (v)
            c->failed_types = v;
        if (!v || !(v[c->n_failed_types] = strdup(type)))
            knut_graphar__validate_fail(c, KNUT_ENOMEM, NULL);
        else
            c->n_failed_types++;
    }
    knut_conf_free(root);
}

static char *join(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    char *s = malloc(la + lb + 1);
    if (s) {
        memcpy(s, a, la);
        memcpy(s + la, b, lb + 1);
    }
    return s;
}

/*
 * The graph YAML alone (parse-only), then each listed file on its own. The
 * infos that load go into c->vertices / c->edges (owned by the caller via
 * those arrays); failures leave NULL entries and issues.
 */
static knut_graphar_graph_info *load_resilient(gv_ctx *c, const char *path)
{
    knut_graphar_graph_info *gi = NULL;
    knut_error e = KNUT_ERROR_INIT;
    knut_conf *root = load_conf(c, path);
    if (!root)
        return NULL;
    size_t reported = knut_graphar__validate_prescan(c, root, path, 'g');
    knut_conf_free(root);
    knut_buf text = KNUT_BUF_INIT;
    if (knut_file_read(path, KNUT_CONF_MAX_BYTES, &text, &e) != KNUT_OK) {
        loader_issue(c, GV_INFO_UNREADABLE, path, &e);
        return NULL;
    }
    knut_status st = knut_graphar_graph_load_yaml(&gi, text.data, text.len, path, NULL, &e);
    knut_buf_reset(&text);
    if (st != KNUT_OK) {
        if (st == KNUT_ENOMEM)
            knut_graphar__validate_fail(c, st, &e);
        else if (reported == 0)
            loader_issue(c, GV_INFO_LOAD, path, &e);
        return NULL;
    }
    /* What the full loader would have set: files resolve beside the YAML,
     * which is also the default prefix. */
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, (size_t)(slash - path) + 1) : strdup("");
    char *prefix = gi->prefix_given ? NULL : strdup(dir && *dir ? dir : "./");
    if (!dir || (!gi->prefix_given && !prefix)) {
        free(dir);
        free(prefix);
        knut_graphar_graph_info_free(gi);
        knut_graphar__validate_fail(c, KNUT_ENOMEM, NULL);
        return NULL;
    }
    free(gi->base_dir);
    gi->base_dir = dir;
    if (prefix) {
        free(gi->prefix);
        gi->prefix = prefix;
    }
    c->vertices = calloc(gi->n_vertex_files + 1, sizeof *c->vertices);
    c->edges = calloc(gi->n_edge_files + 1, sizeof *c->edges);
    if (!c->vertices || !c->edges) {
        knut_graphar__validate_fail(c, KNUT_ENOMEM, NULL);
        return gi;
    }
    c->n_vertices = gi->n_vertex_files;
    c->n_edges = gi->n_edge_files;
    for (size_t i = 0; i < gi->n_vertex_files && !gv_done(c); i++) {
        char *file = join(gi->base_dir, gi->vertex_files[i]);
        if (!file) {
            knut_graphar__validate_fail(c, KNUT_ENOMEM, NULL);
            break;
        }
        knut_error_clear(&e);
        if (knut_graphar_vertex_load(&c->vertices[i], file, &e) != KNUT_OK)
            classify_failure(c, file, 'v', &e);
        free(file);
    }
    for (size_t i = 0; i < gi->n_edge_files && !gv_done(c); i++) {
        char *file = join(gi->base_dir, gi->edge_files[i]);
        if (!file) {
            knut_graphar__validate_fail(c, KNUT_ENOMEM, NULL);
            break;
        }
        knut_error_clear(&e);
        if (knut_graphar_edge_load(&c->edges[i], file, &e) != KNUT_OK)
            classify_failure(c, file, 'e', &e);
        free(file);
    }
    return gi;
}

/* A directory names its one *.graph.yml / *.graph.yaml. */
static char *resolve_graph_path(gv_ctx *c, const char *path)
{
    if (!knut_graphar__validate_is_dir(path))
        return strdup(path);
    DIR *d = opendir(path);
    if (!d) {
        knut_graphar__validate_issue(c, GV_INFO_UNREADABLE, path, NULL, NULL,
                                     "cannot open directory: %s", strerror(errno));
        return NULL;
    }
    char *found = NULL;
    int n = 0;
    struct dirent *ent;
    while ((ent = readdir(d)) != NULL) {
        size_t l = strlen(ent->d_name);
        int yml = l > 10 && strcmp(ent->d_name + l - 10, ".graph.yml") == 0;
        int yaml = l > 11 && strcmp(ent->d_name + l - 11, ".graph.yaml") == 0;
        if (!yml && !yaml)
            continue;
        if (++n == 1) {
            size_t pl = strlen(path);
            int slash = pl > 0 && path[pl - 1] == '/';
            found = malloc(pl + 1 + l + 1);
            if (found)
                snprintf(found, pl + 1 + l + 1, "%s%s%s", path, slash ? "" : "/", ent->d_name);
        }
    }
    closedir(d);
    if (n == 1) {
        if (!found)
            knut_graphar__validate_fail(c, KNUT_ENOMEM, NULL);
        return found;
    }
    free(found);
    knut_graphar__validate_issue(c, GV_INFO_UNREADABLE, path, NULL, NULL,
                                 n == 0 ? "no *.graph.yml in this directory"
                                        : "%d graph YAMLs in this directory: name one",
                                 n);
    return NULL;
}

/* ---- data root ----------------------------------------------------------- */

static char *with_slash(const char *s)
{
    size_t l = strlen(s);
    int add = l > 0 && s[l - 1] != '/';
    char *r = malloc(l + 2);
    if (r)
        snprintf(r, l + 2, "%s%s", s, add ? "/" : "");
    return r;
}

/*
 * Where data is read: opts->data_dir, else the prefix as the reference
 * reads it (a relative one against the working directory, then against
 * the YAML's directory), else the YAML's directory with a warning.
 */
static void choose_root(gv_ctx *c)
{
    const knut_graphar_graph_info *gi = c->gi;
    const char *base = gi->base_dir && *gi->base_dir ? gi->base_dir : "./";
    char *pick = NULL;
    if (c->opts.data_dir) {
        pick = with_slash(c->opts.data_dir);
    } else if (gi->prefix && *gi->prefix && knut_graphar__validate_is_dir(gi->prefix)) {
        pick = with_slash(gi->prefix);
    } else if (gi->prefix && *gi->prefix && gi->prefix[0] != '/' && gi->base_dir && *gi->base_dir) {
        char *p = join(gi->base_dir, gi->prefix);
        if (p && knut_graphar__validate_is_dir(p))
            pick = with_slash(p);
        free(p);
    }
    if (!pick && !c->opts.data_dir) {
        if (gi->prefix && *gi->prefix)
            knut_graphar__validate_issue(
                c, GV_PREFIX_NOT_FOUND, c->graph_file, NULL, "prefix",
                "directory '%s' does not exist; reading data beside the graph YAML in "
                "'%s'",
                gi->prefix, base);
        pick = strdup(base);
    }
    if (!pick)
        knut_graphar__validate_fail(c, KNUT_ENOMEM, NULL);
    c->root = pick;
}

/* ---- runs ------------------------------------------------------------- */

static knut_status run_checks(gv_ctx *c)
{
    knut_graphar__validate_infos(c);
    if (!c->opts.info_only && !gv_done(c)) {
        choose_root(c);
        c->vcount = malloc((c->n_vertices + 1) * sizeof *c->vcount);
        if (!c->vcount)
            knut_graphar__validate_fail(c, KNUT_ENOMEM, NULL);
        for (size_t i = 0; i < c->n_vertices && c->vcount; i++)
            c->vcount[i] = -1;
        for (size_t i = 0; i < c->n_vertices && !gv_done(c); i++)
            knut_graphar__validate_vertex_data(c, i);
        for (size_t i = 0; i < c->n_edges && !gv_done(c); i++)
            knut_graphar__validate_edge_data(c, i);
    }
    return c->fatal;
}

static knut_status ctx_init(gv_ctx *c, const knut_graphar_validate_options *opts,
                            knut_graphar_issues **out, knut_error *err)
{
    memset(c, 0, sizeof *c);
    *out = NULL;
    knut_graphar_validate_options def = KNUT_GRAPHAR_VALIDATE_OPTIONS_INIT;
    c->opts = opts ? *opts : def;
    c->cap = c->opts.max_issues ? c->opts.max_issues : KNUT_GRAPHAR_VALIDATE_DEFAULT_MAX_ISSUES;
    c->err = err;
    c->fatal = KNUT_OK;
    if (!(c->issues = calloc(1, sizeof *c->issues)))
        return knut_error_set(err, KNUT_ENOMEM, "graphar validate: out of memory");
    return KNUT_OK;
}

static knut_status ctx_finish(gv_ctx *c, knut_graphar_issues **out)
{
    knut_duck_conn_close(c->conn);
    knut_duck_db_close(c->db);
    free(c->root);
    free(c->vcount);
    knut_graphar__strv_free(c->failed_types, c->n_failed_types);
    if (c->fatal != KNUT_OK) {
        knut_graphar_issues_free(c->issues);
        return c->fatal;
    }
    *out = c->issues;
    return KNUT_OK;
}

knut_status knut_graphar_validate_graph(const knut_graphar_graph_info *gi,
                                        const knut_graphar_validate_options *opts,
                                        knut_graphar_issues **out, knut_error *err)
{
    KNUT_ASSERT_ARG(err, gi && out);
    *out = NULL;
    KNUT_CHECK_VERSION(opts, KNUT_GRAPHAR_VALIDATE_OPTIONS_VERSION, err);
    gv_ctx c;
    knut_status st = ctx_init(&c, opts, out, err);
    if (st != KNUT_OK)
        return st;
    c.gi = gi;
    c.graph_file = gi->source;
    c.vertices = gi->vertices;
    c.n_vertices = gi->n_vertices;
    c.edges = gi->edges;
    c.n_edges = gi->n_edges;
    run_checks(&c);
    return ctx_finish(&c, out);
}

knut_status knut_graphar_validate(const char *path, const knut_graphar_validate_options *opts,
                                  knut_graphar_issues **out, knut_error *err)
{
    KNUT_ASSERT_ARG(err, path && out);
    *out = NULL;
    KNUT_CHECK_VERSION(opts, KNUT_GRAPHAR_VALIDATE_OPTIONS_VERSION, err);
    gv_ctx c;
    knut_status st = ctx_init(&c, opts, out, err);
    if (st != KNUT_OK)
        return st;
    knut_graphar_graph_info *gi = NULL;
    int owned_lists = 0;
    char *file = resolve_graph_path(&c, path);
    if (!file)
        goto cleanup;
    c.graph_file = file;
    knut_error e = KNUT_ERROR_INIT;
    st = knut_graphar_graph_load(&gi, file, &e);
    if (st == KNUT_ENOMEM) {
        knut_graphar__validate_fail(&c, st, &e);
        goto cleanup;
    }
    if (st == KNUT_OK) {
        c.vertices = gi->vertices;
        c.n_vertices = gi->n_vertices;
        c.edges = gi->edges;
        c.n_edges = gi->n_edges;
    } else {
        owned_lists = 1;
        if (!(gi = load_resilient(&c, file)))
            goto cleanup;
    }
    c.gi = gi;
    run_checks(&c);
cleanup:
    if (owned_lists) {
        for (size_t i = 0; i < c.n_vertices; i++)
            knut_graphar_vertex_info_free(c.vertices[i]);
        for (size_t i = 0; i < c.n_edges; i++)
            knut_graphar_edge_info_free(c.edges[i]);
        free(c.vertices);
        free(c.edges);
    }
    knut_graphar_graph_info_free(gi);
    st = ctx_finish(&c, out);
    free(file);
    return st;
}
