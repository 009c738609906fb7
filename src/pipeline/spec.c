/*
 * The pipeline spec file: YAML in the spirit of spark-pipeline.yml (name,
 * storage, catalog, schema/database, configuration, libraries globbing
 * SQL files), plus knut's `reads:` (declared reads per flow, checked
 * against the inferred ones). Every error names file:line:col.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pipeline_int.h"

static const char *const spec_keys[] = {"name", "storage", "catalog", "database", "schema",
                                        "configuration", "libraries", "reads", "sinks", "airflow",
                                        "lineage", NULL};

static knut_pipeline_pos pos_of(const knut_conf *n)
{
    return (knut_pipeline_pos){knut_conf_file(n), knut_conf_line(n), knut_conf_col(n)};
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

static char *join(knut_pipeline *p, const char *dir, const char *rel)
{
    if (rel[0] == '/' || strcmp(dir, ".") == 0)
        return knut_pipeline__strdup(p, rel);
    size_t a = strlen(dir), b = strlen(rel);
    char *s = knut_pipeline__alloc(p, a + b + 2);
    if (s) {
        memcpy(s, dir, a);
        s[a] = '/';
        memcpy(s + a + 1, rel, b);
    }
    return s;
}

/* A file the libraries matched: .sql taken, anything else refused. */
static knut_status add_file(knut_pipeline *p, const char *path, knut_pipeline_pos pos,
                            knut_error *err)
{
    if (!ends_with(path, ".sql"))
        return knut_pipeline__error_at(err, KNUT_EPARSE, pos,
                                       "library file '%s' is not a .sql file (pipelines are "
                                       "defined in SQL files)", path);
    for (size_t i = 0; i < p->nfiles; i++)
        if (strcmp(p->files[i], path) == 0)
            return KNUT_OK; /* two globs may match one file */
    if (p->nfiles >= KNUT_PIPELINE_MAX_FILES)
        return knut_pipeline__error_at(err, KNUT_ETOOBIG, pos, "more than %d library files",
                                       KNUT_PIPELINE_MAX_FILES);
    const char **slot = knut_pipeline__push(p, (void **)&p->files, &p->nfiles, sizeof *slot);
    if (!slot || !(*slot = knut_pipeline__strdup(p, path)))
        return knut_error_set(err, KNUT_ENOMEM, "pipeline: out of memory");
    return KNUT_OK;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Every file under dir, depth first, names sorted so runs are repeatable;
 * dot files and __pycache__ are skipped. */
static knut_status walk(knut_pipeline *p, const char *dir, knut_pipeline_pos pos, int depth,
                        knut_error *err)
{
    if (depth > 32)
        return knut_pipeline__error_at(err, KNUT_ETOOBIG, pos, "'%s': folders nested too deep",
                                       dir);
    DIR *d = opendir(dir);
    if (!d)
        return knut_pipeline__error_at(err, errno == ENOENT ? KNUT_ENOTFOUND : KNUT_EIO, pos,
                                       "cannot read folder '%s': %s", dir, strerror(errno));
    char **names = NULL;
    size_t n = 0, cap = 0;
    knut_status st = KNUT_OK;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || strcmp(e->d_name, "__pycache__") == 0)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            char **nn = realloc(names, cap * sizeof *nn);
            if (!nn) {
                st = knut_error_set(err, KNUT_ENOMEM, "pipeline: out of memory");
                goto done;
            }
            names = nn;
        }
        if (!(names[n] = strdup(e->d_name))) {
            st = knut_error_set(err, KNUT_ENOMEM, "pipeline: out of memory");
            goto done;
        }
        n++;
        if (n > KNUT_PIPELINE_MAX_FILES) {
            st = knut_pipeline__error_at(err, KNUT_ETOOBIG, pos, "'%s': more than %d entries",
                                         dir, KNUT_PIPELINE_MAX_FILES);
            goto done;
        }
    }
    qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n && st == KNUT_OK; i++) {
        char *path = join(p, dir, names[i]);
        struct stat sb;
        if (!path) {
            st = knut_error_set(err, KNUT_ENOMEM, "pipeline: out of memory");
        } else if (stat(path, &sb) != 0) {
            st = knut_pipeline__error_at(err, KNUT_EIO, pos, "cannot stat '%s': %s", path,
                                         strerror(errno));
        } else if (S_ISDIR(sb.st_mode)) {
            st = walk(p, path, pos, depth + 1, err);
        } else {
            st = add_file(p, path, pos, err);
        }
    }
done:
    closedir(d);
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return st;
}

/* libraries: a list of "- glob: {include: P}"; P is a file, or a folder
 * followed by a slash and two stars (every file below it). */
static knut_status libraries(knut_pipeline *p, const knut_conf *libs, knut_error *err)
{
    if (knut_conf_kind_of(libs) != KNUT_CONF_SEQ)
        return knut_pipeline__error_at(err, KNUT_EPARSE, pos_of(libs),
                                       "libraries: must be a list of '- glob: {include: ...}'");
    for (size_t i = 0; i < knut_conf_len(libs); i++) {
        const knut_conf *item = knut_conf_at(libs, i);
        const knut_conf *glob = knut_conf_get(item, "glob");
        const knut_conf *inc = knut_conf_get(glob, "include");
        if (knut_conf_kind_of(item) != KNUT_CONF_MAP || knut_conf_len(item) != 1 || !glob ||
            knut_conf_kind_of(glob) != KNUT_CONF_MAP || knut_conf_len(glob) != 1 ||
            !knut_conf_str(inc))
            return knut_pipeline__error_at(err, KNUT_EPARSE, pos_of(item),
                                           "a library is '- glob: {include: PATH}'");
        const char *pat = knut_conf_str(inc);
        knut_pipeline_pos pos = pos_of(inc);
        size_t len = strlen(pat);
        int folder = len >= 3 && strcmp(pat + len - 3, "/**") == 0;
        const char *wild = strpbrk(pat, "*?[");
        if ((folder && wild != pat + len - 2) || (!folder && wild))
            return knut_pipeline__error_at(err, KNUT_EPARSE, pos,
                                           "invalid glob '%s': an include is a file path or a "
                                           "folder ending in '/**'", pat);
        char *rel = knut_pipeline__strndup(p, pat, folder ? len - 3 : len);
        char *path = rel ? join(p, p->root, rel) : NULL;
        if (!path)
            return knut_error_set(err, KNUT_ENOMEM, "pipeline: out of memory");
        knut_status st;
        if (folder) {
            st = walk(p, path, pos, 0, err);
        } else {
            struct stat sb;
            if (stat(path, &sb) != 0)
                return knut_pipeline__error_at(err, KNUT_ENOTFOUND, pos,
                                               "library file '%s' does not exist", path);
            st = add_file(p, path, pos, err);
        }
        if (st != KNUT_OK)
            return st;
    }
    return KNUT_OK;
}

/* The spec's reads: {flow: [dataset, ...]}, after the SQL is parsed. */
static knut_status declared_reads(knut_pipeline *p, const knut_conf *reads, knut_error *err)
{
    if (knut_conf_kind_of(reads) != KNUT_CONF_MAP)
        return knut_pipeline__error_at(err, KNUT_EPARSE, pos_of(reads),
                                       "reads: must map flow names to lists of datasets");
    for (size_t i = 0; i < knut_conf_len(reads); i++) {
        const char *name = knut_conf_key_at(reads, i);
        const knut_conf *list = knut_conf_at(reads, i);
        knut_pipeline_flow *f = knut_pipeline__flow_find(p, name);
        if (!f)
            return knut_pipeline__error_at(err, KNUT_EINVAL, pos_of(list),
                                           "reads: no flow named '%s'", name);
        if (knut_conf_kind_of(list) != KNUT_CONF_SEQ)
            return knut_pipeline__error_at(err, KNUT_EPARSE, pos_of(list),
                                           "reads: %s: must be a list of dataset names", name);
        f->has_declared = 1;
        for (size_t k = 0; k < knut_conf_len(list); k++) {
            const char *d = knut_conf_str(knut_conf_at(list, k));
            if (!d)
                return knut_pipeline__error_at(err, KNUT_EPARSE, pos_of(knut_conf_at(list, k)),
                                               "reads: %s: a dataset name", name);
            const char **slot = knut_pipeline__push(p, (void **)&f->declared_reads,
                                                    &f->ndeclared, sizeof *slot);
            if (!slot || !(*slot = knut_pipeline__strdup(p, d)))
                return knut_error_set(err, KNUT_ENOMEM, "pipeline: out of memory");
        }
    }
    return KNUT_OK;
}

static knut_status str_key(knut_pipeline *p, const knut_conf *root, const char *key, int required,
                           const char **out, knut_error *err)
{
    const knut_conf *n = knut_conf_get(root, key);
    if (!n) {
        if (required)
            return knut_error_set_at(err, KNUT_EINVAL, knut_conf_file(root), knut_conf_line(root),
                                     knut_conf_col(root), "the spec needs '%s:'", key);
        return KNUT_OK;
    }
    if (!knut_conf_str(n) || !knut_conf_str(n)[0])
        return knut_pipeline__error_at(err, KNUT_EPARSE, pos_of(n), "%s: must be a non-empty "
                                       "string", key);
    *out = knut_pipeline__strdup(p, knut_conf_str(n));
    return *out ? KNUT_OK : knut_error_set(err, KNUT_ENOMEM, "pipeline: out of memory");
}

static knut_status load(knut_pipeline *p, const knut_conf *root, knut_error *err)
{
    knut_status st;
    if (knut_conf_kind_of(root) != KNUT_CONF_MAP)
        return knut_error_set_at(err, KNUT_EPARSE, p->spec_path, 1, 1,
                                 "a pipeline spec is a map (name:, storage:, libraries:)");
    for (size_t i = 0; i < knut_conf_len(root); i++) {
        const char *key = knut_conf_key_at(root, i);
        size_t k = 0;
        while (spec_keys[k] && strcmp(spec_keys[k], key) != 0)
            k++;
        if (!spec_keys[k])
            return knut_pipeline__error_at(err, KNUT_EPARSE, pos_of(knut_conf_at(root, i)),
                                           "unexpected field '%s' (the spec takes name, storage, "
                                           "catalog, schema, database, configuration, libraries, "
                                           "reads, sinks, airflow, lineage)", key);
    }
    if ((st = str_key(p, root, "name", 1, &p->name, err)) != KNUT_OK ||
        (st = str_key(p, root, "storage", 1, &p->storage, err)) != KNUT_OK ||
        (st = str_key(p, root, "catalog", 0, &p->catalog, err)) != KNUT_OK ||
        (st = str_key(p, root, "database", 0, &p->schema, err)) != KNUT_OK ||
        (st = str_key(p, root, "schema", 0, &p->schema, err)) != KNUT_OK)
        return st;
    if (strncmp(p->storage, "file://", 7) == 0)
        p->storage += 7;
    const knut_conf *conf = knut_conf_get(root, "configuration");
    if (conf) {
        if (knut_conf_kind_of(conf) != KNUT_CONF_MAP)
            return knut_pipeline__error_at(err, KNUT_EPARSE, pos_of(conf),
                                           "configuration: must be a map of settings");
        for (size_t i = 0; i < knut_conf_len(conf); i++) {
            const knut_conf *v = knut_conf_at(conf, i);
            if (!knut_conf_str(v))
                return knut_pipeline__error_at(err, KNUT_EPARSE, pos_of(v),
                                               "configuration: %s: must be a string",
                                               knut_conf_key_at(conf, i));
            knut_pipeline_setting *s = knut_pipeline__push(
                p, (void **)&p->configuration, &p->nconfiguration, sizeof *s);
            if (!s)
                return knut_error_set(err, KNUT_ENOMEM, "pipeline: out of memory");
            s->name = knut_pipeline__strdup(p, knut_conf_key_at(conf, i));
            s->value = knut_pipeline__strdup(p, knut_conf_str(v));
            s->pos = pos_of(v);
            s->pos.file = p->spec_path; /* the tree's name goes with the tree */
            if (!s->name || !s->value)
                return knut_error_set(err, KNUT_ENOMEM, "pipeline: out of memory");
        }
    }
    const knut_conf *libs = knut_conf_get(root, "libraries");
    if (!libs)
        return knut_error_set_at(err, KNUT_EINVAL, p->spec_path, 1, 1,
                                 "the spec needs 'libraries:'");
    if ((st = libraries(p, libs, err)) != KNUT_OK)
        return st;
    knut_buf text = KNUT_BUF_INIT;
    for (size_t i = 0; i < p->nfiles && st == KNUT_OK; i++) {
        st = knut_file_read(p->files[i], KNUT_PIPELINE_SQL_MAX_BYTES, &text, err);
        if (st == KNUT_OK)
            st = knut_pipeline_parse_sql(p, text.data, text.len, p->files[i], err);
    }
    knut_buf_reset(&text);
    if (st != KNUT_OK)
        return st;
    const knut_conf *sinks = knut_conf_get(root, "sinks");
    if (sinks && (st = knut_pipeline__sinks_parse(p, sinks, err)) != KNUT_OK)
        return st;
    const knut_conf *af = knut_conf_get(root, "airflow");
    if (af && (st = knut_pipeline__airflow_parse(p, af, err)) != KNUT_OK) /* assets.c */
        return st;
    const knut_conf *ln = knut_conf_get(root, "lineage");
    if (ln && (st = knut_pipeline__lineage_parse(p, ln, err)) != KNUT_OK) /* lineage.c */
        return st;
    const knut_conf *reads = knut_conf_get(root, "reads");
    return reads ? declared_reads(p, reads, err) : KNUT_OK;
}

knut_status knut_pipeline_load(knut_pipeline **out, const char *spec_path, knut_error *err)
{
    KNUT_ASSERT_ARG(err, out != NULL && spec_path != NULL);
    *out = NULL;
    knut_conf *root = NULL;
    knut_pipeline *p = NULL;
    knut_status st = knut_conf_load_file(&root, spec_path, err);
    if (st != KNUT_OK)
        goto done;
    if ((st = knut_pipeline_new(&p, NULL, NULL, err)) != KNUT_OK)
        goto done;
    p->spec_path = knut_pipeline__strdup(p, spec_path);
    const char *slash = strrchr(spec_path, '/');
    if (slash)
        p->root = knut_pipeline__strndup(p, spec_path,
                                         slash == spec_path ? 1 : (size_t)(slash - spec_path));
    else
        p->root = knut_pipeline__strdup(p, ".");
    if (!p->spec_path || !p->root) {
        st = knut_error_set(err, KNUT_ENOMEM, "pipeline: out of memory");
        goto done;
    }
    p->catalog = NULL;
    if ((st = load(p, root, err)) != KNUT_OK)
        goto done;
    if (!p->catalog && !(p->catalog = knut_pipeline__strdup(p, "pipeline")))
        st = knut_error_set(err, KNUT_ENOMEM, "pipeline: out of memory");
done:
    if (p) { /* graph sink maps point into the tree: it lives as long as p */
        ((knut_pipeline__impl *)p)->conf = root;
        root = NULL;
    }
    knut_conf_free(root);
    if (st != KNUT_OK) {
        knut_pipeline_free(p);
        return st;
    }
    *out = p;
    return KNUT_OK;
}
