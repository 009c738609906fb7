/*
 * The file source of sync: lists a table's drops (a directory or a glob),
 * skips names that are still being written by convention (dot-files,
 * `_*`, `*.tmp`, `*.part`, `*~`), and hashes contents with a streamed
 * SHA-256 (OpenSSL), so a rewritten file is told from a done one even when
 * its size and mtime were restored.
 * Also the small path and file helpers of the part.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "sync_int.h"

char *knut_sync__path_join(const char *dir, const char *path)
{
    if (path[0] == '/' || !dir || !*dir || strcmp(dir, ".") == 0)
        return strdup(path);
    size_t a = strlen(dir), b = strlen(path);
    char *s = malloc(a + b + 2);
    if (s)
        snprintf(s, a + b + 2, "%s/%s", dir, path);
    return s;
}

char *knut_sync__dirname(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

void knut_sync__files_reset(sync_file_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->items[i].path);
    free(l->items);
    memset(l, 0, sizeof *l);
}

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

int knut_sync__name_skipped(const char *base)
{
    return base[0] == '.' || base[0] == '_' || ends_with(base, ".tmp") ||
           ends_with(base, ".part") || ends_with(base, "~");
}

/* The format of a file name, or AUTO to skip it (also temporary names). */
static knut_sync_format name_format(const char *path, knut_sync_format want)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (knut_sync__name_skipped(base))
        return KNUT_SYNC_FORMAT_AUTO;
    knut_sync_format f = KNUT_SYNC_FORMAT_AUTO;
    if (ends_with(base, ".parquet") || ends_with(base, ".pq"))
        f = KNUT_SYNC_FORMAT_PARQUET;
    else if (ends_with(base, ".csv"))
        f = KNUT_SYNC_FORMAT_CSV;
    if (want != KNUT_SYNC_FORMAT_AUTO)
        return f == KNUT_SYNC_FORMAT_AUTO || f == want ? want : KNUT_SYNC_FORMAT_AUTO;
    return f;
}

static knut_status list_add(sync_file_list *l, const char *path, knut_sync_format want,
                            knut_error *err)
{
    struct stat sb;
    knut_sync_format f = name_format(path, want);
    if (f == KNUT_SYNC_FORMAT_AUTO || stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
        return KNUT_OK; /* vanished, temporary or not a data file: not ours */
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        sync_file *p = realloc(l->items, cap * sizeof *p);
        if (!p)
            return knut_error_set(err, KNUT_ENOMEM, "out of memory");
        l->items = p;
        l->cap = cap;
    }
    sync_file *it = &l->items[l->n];
    memset(it, 0, sizeof *it);
    if (!(it->path = strdup(path)))
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    it->size = (int64_t)sb.st_size;
    it->mtime_ns = (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
    it->format = f;
    l->n++;
    return KNUT_OK;
}

static int cmp_file(const void *a, const void *b)
{
    return strcmp(((const sync_file *)a)->path, ((const sync_file *)b)->path);
}

knut_status knut_sync__files_list(const knut_sync_table *t, sync_file_list *out, knut_error *err)
{
    knut_status st = KNUT_OK;
    struct stat sb;
    memset(out, 0, sizeof *out);
    if (t->iceberg || t->spark)
        return KNUT_OK; /* versions, not files (iceberg.c, spark.c); the entry is not a file */
    if (stat(t->path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        DIR *d = opendir(t->path);
        if (!d)
            return knut_error_set(err, KNUT_EIO, "table '%s': %s: %s", t->name, t->path,
                                  strerror(errno));
        struct dirent *de;
        knut_buf p = KNUT_BUF_INIT;
        while (st == KNUT_OK && (de = readdir(d)) != NULL) {
            knut_buf_clear(&p);
            size_t dl = strlen(t->path);
            while (dl > 1 && t->path[dl - 1] == '/')
                dl--;
            knut_buf_printf(&p, "%.*s/%s", (int)dl, t->path, de->d_name);
            st = knut_buf_check(&p, err);
            if (st == KNUT_OK)
                st = list_add(out, p.data, t->format, err);
        }
        closedir(d);
        knut_buf_reset(&p);
    } else {
        glob_t g;
        int rc = glob(t->path, GLOB_NOSORT, NULL, &g);
        if (rc != 0 && rc != GLOB_NOMATCH) {
            globfree(&g);
            return knut_error_set(err, KNUT_EIO, "table '%s': cannot list %s", t->name, t->path);
        }
        for (size_t i = 0; rc == 0 && st == KNUT_OK && i < g.gl_pathc; i++)
            st = list_add(out, g.gl_pathv[i], t->format, err);
        globfree(&g);
    }
    if (st != KNUT_OK) {
        knut_sync__files_reset(out);
        return st;
    }
    if (out->n > 1)
        qsort(out->items, out->n, sizeof *out->items, cmp_file);
    return KNUT_OK;
}

knut_status knut_sync__file_hash(sync_file *f, int *stable, knut_error *err)
{
    *stable = 0;
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int md_len = 0;
    EVP_MD_CTX *ctx = NULL;
    struct stat sb;
    knut_status st = KNUT_OK;
    int fd = open(f->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return knut_error_set(err, KNUT_EIO, "%s: %s", f->path, strerror(errno));
    ctx = EVP_MD_CTX_new();
    if (!ctx || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
        st = knut_error_set(err, KNUT_ENOMEM, "%s: cannot start SHA-256", f->path);
        goto cleanup;
    }
    unsigned char buf[65536];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            st = knut_error_set(err, KNUT_EIO, "%s: %s", f->path, strerror(errno));
            goto cleanup;
        }
        if (n == 0)
            break;
        if (EVP_DigestUpdate(ctx, buf, (size_t)n) != 1) {
            st = knut_error_set(err, KNUT_EIO, "%s: SHA-256 failed", f->path);
            goto cleanup;
        }
    }
    if (EVP_DigestFinal_ex(ctx, md, &md_len) != 1 || md_len * 2 + 1 > sizeof f->hash) {
        st = knut_error_set(err, KNUT_EIO, "%s: SHA-256 failed", f->path);
        goto cleanup;
    }
    if (fstat(fd, &sb) != 0) {
        st = knut_error_set(err, KNUT_EIO, "%s: %s", f->path, strerror(errno));
        goto cleanup;
    }
    for (unsigned int i = 0; i < md_len; i++)
        snprintf(f->hash + 2 * i, 3, "%02x", md[i]);
    int64_t mt = (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
    *stable = (int64_t)sb.st_size == f->size && mt == f->mtime_ns;
cleanup:
    EVP_MD_CTX_free(ctx);
    close(fd);
    return st;
}
