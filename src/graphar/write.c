/*
 * The GraphAr writer's frame: creating it (its own DuckDB with bounded
 * memory and a spill directory), output directories (created on demand,
 * refused or emptied when they hold an earlier graph), count files, the
 * checks on what can be written, and saving the info YAMLs at the end.
 * The vertex and edge passes live in write_vertex.c and write_edge.c.
 */
#include "write_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Deeper trees than this are not GraphAr output: refuse to empty them. */
#define WRITE_MAX_DEPTH 32

static knut_status oom(knut_error *err)
{
    return knut_error_set(err, KNUT_ENOMEM, "graphar writer: out of memory");
}

/* ---- directories ------------------------------------------------------- */

knut_status knut_graphar__write_mkdirs(const char *path, int is_dir, knut_error *err)
{
    size_t len = strlen(path);
    char *p = malloc(len + 1);
    if (!p)
        return oom(err);
    memcpy(p, path, len + 1);
    if (!is_dir) {
        char *slash = strrchr(p, '/');
        if (!slash) {
            free(p);
            return KNUT_OK;
        }
        *slash = '\0';
    }
    knut_status st = KNUT_OK;
    for (char *s = p + 1;; s++) {
        int end = *s == '\0';
        if (*s != '/' && !end)
            continue;
        *s = '\0';
        if (*p && mkdir(p, 0755) != 0 && errno != EEXIST) {
            st = knut_error_set(err, KNUT_EIO, "%s: cannot create directory: %s", p,
                                strerror(errno));
            break;
        }
        if (end)
            break;
        *s = '/';
    }
    free(p);
    return st;
}

/* Removes everything inside the directory fd (not following symlinks). */
static knut_status clear_dir_fd(int fd, const char *path, int depth, knut_error *err)
{
    if (depth > WRITE_MAX_DEPTH)
        return knut_error_set(err, KNUT_EINVAL, "%s: directory tree too deep to empty", path);
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return knut_error_set(err, KNUT_EIO, "%s: cannot read directory: %s", path,
                              strerror(errno));
    }
    knut_status st = KNUT_OK;
    struct dirent *e;
    while (!st && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        struct stat sb;
        if (fstatat(dirfd(d), e->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0) {
            st = knut_error_set(err, KNUT_EIO, "%s/%s: %s", path, e->d_name, strerror(errno));
            break;
        }
        if (S_ISDIR(sb.st_mode)) {
            int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub < 0) {
                st = knut_error_set(err, KNUT_EIO, "%s/%s: %s", path, e->d_name,
                                    strerror(errno));
                break;
            }
            st = clear_dir_fd(sub, path, depth + 1, err);
            if (!st && unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR) != 0)
                st = knut_error_set(err, KNUT_EIO, "%s/%s: cannot remove: %s", path, e->d_name,
                                    strerror(errno));
        } else if (unlinkat(dirfd(d), e->d_name, 0) != 0) {
            st = knut_error_set(err, KNUT_EIO, "%s/%s: cannot remove: %s", path, e->d_name,
                                strerror(errno));
        }
    }
    closedir(d);
    return st;
}

knut_status knut_graphar__remove_tree(const char *dir, knut_error *err)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? KNUT_OK
                               : knut_error_set(err, KNUT_EIO, "%s: cannot open directory: %s",
                                                dir, strerror(errno));
    knut_status st = clear_dir_fd(fd, dir, 0, err);
    if (!st && rmdir(dir) != 0)
        st = knut_error_set(err, KNUT_EIO, "%s: cannot remove: %s", dir, strerror(errno));
    return st;
}

int knut_graphar__dir_has_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return errno == ENOENT ? 0 : -1;
    int any = 0;
    struct dirent *e;
    while (!any && (e = readdir(d)) != NULL)
        any = strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return any;
}


knut_status knut_graphar__write_prepare_dir(knut_graphar_writer *w, const char *dir,
                                            knut_error *err)
{
    for (size_t i = 0; i < w->n_prepared; i++)
        if (strcmp(w->prepared[i], dir) == 0)
            return KNUT_OK;
    int has = knut_graphar__dir_has_entries(dir);
    if (has < 0)
        return knut_error_set(err, KNUT_EIO, "%s: cannot read directory: %s", dir,
                              strerror(errno));
    if (has && !w->overwrite)
        return knut_error_set(err, KNUT_EINVAL,
                              "%s exists and is not empty (an earlier graph?); remove it or "
                              "pass --overwrite",
                              dir);
    knut_status st = KNUT_OK;
    if (has) {
        int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
            return knut_error_set(err, KNUT_EIO, "%s: cannot open directory: %s", dir,
                                  strerror(errno));
        if ((st = clear_dir_fd(fd, dir, 0, err)))
            return st;
    }
    if ((st = knut_graphar__write_mkdirs(dir, 1, err)))
        return st;
    char **slot = knut_graphar__push((void **)&w->prepared, &w->n_prepared, sizeof *slot);
    if (!slot || !(*slot = strdup(dir)))
        return oom(err);
    w->n_prepared++;
    return KNUT_OK;
}

knut_status knut_graphar__write_count(const char *path, int64_t value, knut_error *err)
{
    knut_status st = knut_graphar__write_mkdirs(path, 0, err);
    return st ? st : knut_graphar_count_write(path, value, err);
}

/* ---- checks ------------------------------------------------------------ */

knut_status knut_graphar__write_check_file_type(knut_graphar_file_type ft, const char *what,
                                                knut_error *err)
{
    if (ft == KNUT_GRAPHAR_FILE_PARQUET || ft == KNUT_GRAPHAR_FILE_CSV)
        return KNUT_OK;
    return knut_error_set(err, KNUT_EUNSUPPORTED,
                          "%s: file_type %s cannot be written (parquet and csv can)", what,
                          knut_graphar_file_type_name(ft));
}

knut_status knut_graphar__write_check_group(const knut_graphar_property_group *g, const char *what,
                                            knut_error *err)
{
    knut_status st = knut_graphar__write_check_file_type(g->file_type, what, err);
    if (st)
        return st;
    if (g->n_props == 0)
        return knut_error_set(err, KNUT_EINVAL, "%s: property group '%s' has no properties",
                              what, g->prefix ? g->prefix : "");
    for (size_t i = 0; i < g->n_props; i++)
        if (g->file_type == KNUT_GRAPHAR_FILE_CSV && knut_graphar__prop_is_list(&g->props[i]))
            return knut_error_set(err, KNUT_EINVAL,
                                  "%s: property '%s' is a list, which CSV groups cannot hold",
                                  what, g->props[i].name);
    return KNUT_OK;
}

/* Info prefixes end up in paths we create and may empty: keep them inside
 * the output directory. */
int knut_graphar__write_prefix_safe(const char *p)
{
    if (!p || !*p || p[0] == '/')
        return 0;
    for (const char *s = p; *s;) {
        const char *e = strchr(s, '/');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        if (n == 2 && s[0] == '.' && s[1] == '.')
            return 0;
        s += n;
        if (*s == '/')
            s++;
    }
    return 1;
}

/* ---- the writer -------------------------------------------------------- */

gar_wvertex *knut_graphar__written_vertex(knut_graphar_writer *w, const char *type)
{
    for (size_t i = 0; i < w->n_verts; i++)
        if (strcmp(w->verts[i].type, type) == 0)
            return &w->verts[i];
    return NULL;
}

static char *make_tmp(void)
{
    const char *base = getenv("TMPDIR");
    if (!base || !*base)
        base = "/tmp";
    char *t = malloc(strlen(base) + sizeof "/knut-gar-XXXXXX");
    if (!t)
        return NULL;
    sprintf(t, "%s/knut-gar-XXXXXX", base);
    if (!mkdtemp(t)) {
        free(t);
        return NULL;
    }
    return t;
}

knut_status knut_graphar_writer_new(knut_graphar_writer **out, knut_graphar_graph_info *gi,
                                    const char *dir, const knut_graphar_writer_options *opts,
                                    knut_error *err)
{
    KNUT_ASSERT_ARG(err, out && gi && dir && *dir);
    *out = NULL;
    KNUT_CHECK_VERSION(opts, KNUT_GRAPHAR_WRITER_OPTIONS_VERSION, err);
    knut_graphar_writer_options defaults = KNUT_GRAPHAR_WRITER_OPTIONS_INIT;
    if (!opts)
        opts = &defaults;
    knut_graphar_writer *w = calloc(1, sizeof *w);
    if (!w)
        return oom(err);
    knut_status st = KNUT_OK;
    size_t dl = strlen(dir);
    w->gi = gi;
    w->overwrite = opts->overwrite;
    w->dir = malloc(dl + 2);
    w->compression = strdup(opts->parquet_compression ? opts->parquet_compression : "snappy");
    if (!w->dir || !w->compression) {
        st = oom(err);
        goto cleanup;
    }
    sprintf(w->dir, "%s%s", dir, dir[dl - 1] == '/' ? "" : "/");
    if (gi->prefix_given && strcmp(gi->prefix, w->dir) != 0 && strcmp(gi->prefix, dir) != 0) {
        st = knut_error_set(err, KNUT_EINVAL,
                            "graph '%s' has prefix '%s' but is written to '%s'", gi->name,
                            gi->prefix, dir);
        goto cleanup;
    }
    if ((st = knut_graphar__write_mkdirs(w->dir, 1, err)))
        goto cleanup;
    const char *tmp = opts->temp_directory;
    if (!tmp) {
        if (!(w->own_tmp = make_tmp())) {
            st = knut_error_set(err, KNUT_EIO, "cannot create a spill directory: %s",
                                strerror(errno));
            goto cleanup;
        }
        tmp = w->own_tmp;
    }
    char threads[32];
    snprintf(threads, sizeof threads, "%d", opts->threads);
    knut_duck_option o[4];
    size_t no = 0;
    o[no++] = (knut_duck_option){"temp_directory", tmp};
    /* rowid must follow insertion order: it is the write position. */
    o[no++] = (knut_duck_option){"preserve_insertion_order", "true"};
    if (opts->memory_limit)
        o[no++] = (knut_duck_option){"memory_limit", opts->memory_limit};
    if (opts->threads > 0)
        o[no++] = (knut_duck_option){"threads", threads};
    if ((st = knut_duck_db_open(&w->db, NULL, o, no, err)) ||
        (st = knut_duck_conn_open(&w->conn, w->db, err))) {
        knut_error_prefix(err, "graphar writer: ");
        goto cleanup;
    }
    /* Timestamps with a zone become UTC wall time (GraphAr timestamps are
     * not zone-adjusted), whatever the machine's zone. Without ICU there
     * are no zoned timestamps to convert, so a failure is harmless. */
    (void)knut_duck_exec(w->conn, "SET TimeZone = 'UTC'", NULL);
    *out = w;
    w = NULL;
cleanup:
    knut_graphar_writer_free(w);
    return st;
}

knut_duck_conn *knut_graphar_writer_conn(knut_graphar_writer *w)
{
    return w ? w->conn : NULL;
}

knut_status knut_graphar_writer_finish(knut_graphar_writer *w, knut_error *err)
{
    KNUT_ASSERT_ARG(err, w);
    return knut_graphar_graph_save_all(w->gi, w->dir, err);
}

void knut_graphar_writer_free(knut_graphar_writer *w)
{
    if (!w)
        return;
    knut_duck_conn_close(w->conn);
    knut_duck_db_close(w->db);
    if (w->own_tmp) {
        /* DuckDB removes its spill files on close; clear leftovers anyway. */
        int fd = open(w->own_tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0)
            (void)clear_dir_fd(fd, w->own_tmp, 0, NULL);
        rmdir(w->own_tmp);
        free(w->own_tmp);
    }
    for (size_t i = 0; i < w->n_verts; i++) {
        free(w->verts[i].type);
        free(w->verts[i].table);
        knut_graphar__strv_free(w->verts[i].key_types, w->verts[i].n_keys);
    }
    free(w->verts);
    knut_graphar__strv_free(w->prepared, w->n_prepared);
    free(w->dir);
    free(w->compression);
    free(w);
}
