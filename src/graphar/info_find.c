/*
 * Finding the graph YAML a path names: the file itself, or a directory
 * holding exactly one *.graph.yml (or .yaml). The corpus keeps one graph
 * per directory in most places and several (the ldbc_sample/parquet
 * variants) in some, where guessing would be wrong. Used by `knut gar`,
 * `knut load` and the GraphAr sources of `knut serve`.
 */
#include "graphar_int.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int is_graph_yaml(const char *name)
{
    size_t n = strlen(name);
    return (n > 10 && strcmp(name + n - 10, ".graph.yml") == 0) ||
           (n > 11 && strcmp(name + n - 11, ".graph.yaml") == 0);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sets *out to the one graph YAML in dir (malloc'ed path). */
static knut_status find_in_dir(const char *dir, char **out, knut_error *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return knut_error_set(err, KNUT_EIO, "%s: %s", dir, strerror(errno));
    char *names[16];
    size_t n = 0, total = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!is_graph_yaml(e->d_name))
            continue;
        if (n < sizeof names / sizeof names[0] && (names[n] = strdup(e->d_name)))
            n++;
        total++;
    }
    closedir(d);
    knut_status st = KNUT_OK;
    qsort(names, n, sizeof names[0], cmp_str);
    if (total == 0) {
        st = knut_error_set(err, KNUT_ENOTFOUND, "%s: no *.graph.yml in this directory", dir);
    } else if (total > 1) {
        knut_buf list = KNUT_BUF_INIT;
        for (size_t i = 0; i < n; i++)
            knut_buf_printf(&list, "%s%s", i ? ", " : "", names[i]);
        st = knut_error_set(err, KNUT_EINVAL, "%s: %zu graph files (%s%s); name one", dir,
                            total, list.data ? list.data : "", total > n ? ", ..." : "");
        knut_buf_reset(&list);
    } else {
        knut_buf path = KNUT_BUF_INIT;
        knut_buf_printf(&path, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", names[0]);
        if ((st = knut_buf_check(&path, err)) == KNUT_OK)
            *out = knut_buf_detach(&path, NULL);
        knut_buf_reset(&path);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    return st;
}

knut_status knut_graphar_graph_load_path(knut_graphar_graph_info **out, const char *path,
                                         knut_error *err)
{
    KNUT_ASSERT_ARG(err, out && path);
    struct stat sb;
    *out = NULL;
    if (stat(path, &sb) != 0)
        return knut_error_set(err, errno == ENOENT ? KNUT_ENOTFOUND : KNUT_EIO, "%s: %s", path,
                              strerror(errno));
    if (!S_ISDIR(sb.st_mode))
        return knut_graphar_graph_load(out, path, err);
    char *file = NULL;
    knut_status st = find_in_dir(path, &file, err);
    if (st == KNUT_OK)
        st = knut_graphar_graph_load(out, file, err);
    free(file);
    return st;
}
