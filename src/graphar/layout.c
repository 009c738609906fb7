/*
 * The GraphAr directory layout: the path of every data file (property
 * chunks, labels, adjacency lists, offsets, counts), the chunk arithmetic
 * that says how many of them there are, and the 8-byte count files. Paths
 * are built exactly as the reference's path getters do (BuildPath adds a
 * '/' after any part lacking one), so readers, the writer and the validator
 * agree with C++ and Spark on where each file lives.
 */
#include "graphar_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- paths ------------------------------------------------------------- */

/* base verbatim, plus '/' if it is non-empty and lacks one. */
static void put_base(knut_buf *out, const char *base)
{
    if (!base || !*base)
        return;
    knut_buf_puts(out, base);
    if (base[strlen(base) - 1] != '/')
        knut_buf_putc(out, '/');
}

/* One BuildPath part: the text plus '/' unless it ends in one. Empty parts
 * (only an invalid, property-less group has one) add nothing. */
static void put_part(knut_buf *out, const char *part)
{
    if (!part || !*part)
        return;
    knut_buf_puts(out, part);
    if (part[strlen(part) - 1] != '/')
        knut_buf_putc(out, '/');
}

static knut_status done(knut_buf *out)
{
    return out->error;
}

knut_status knut_graphar_path_vertex_group(knut_buf *out, const char *base,
                                           const knut_graphar_vertex_info *vi,
                                           const knut_graphar_property_group *g)
{
    if (!out || !vi || !g)
        return KNUT_EINVAL;
    put_base(out, base);
    put_part(out, vi->prefix);
    put_part(out, g->prefix);
    return done(out);
}

knut_status knut_graphar_path_vertex_chunk(knut_buf *out, const char *base,
                                           const knut_graphar_vertex_info *vi,
                                           const knut_graphar_property_group *g, int64_t chunk)
{
    if (!out || !vi || !g || chunk < 0)
        return KNUT_EINVAL;
    put_base(out, base);
    put_part(out, vi->prefix);
    put_part(out, g->prefix);
    knut_buf_printf(out, "chunk%lld", (long long)chunk);
    return done(out);
}

knut_status knut_graphar_path_vertex_count(knut_buf *out, const char *base,
                                           const knut_graphar_vertex_info *vi)
{
    if (!out || !vi)
        return KNUT_EINVAL;
    put_base(out, base);
    put_part(out, vi->prefix);
    knut_buf_puts(out, "vertex_count");
    return done(out);
}

knut_status knut_graphar_path_label_chunk(knut_buf *out, const char *base,
                                          const knut_graphar_vertex_info *vi, int64_t chunk)
{
    if (!out || !vi || chunk < 0)
        return KNUT_EINVAL;
    put_base(out, base);
    /* The reference's label reader and writer concatenate the vertex prefix
     * as written, without BuildPath. */
    knut_buf_puts(out, vi->prefix ? vi->prefix : "");
    knut_buf_printf(out, "labels/chunk%lld", (long long)chunk);
    return done(out);
}

static void put_adj(knut_buf *out, const char *base, const knut_graphar_edge_info *ei,
                    const knut_graphar_adj_list *al)
{
    put_base(out, base);
    put_part(out, ei->prefix);
    put_part(out, al->prefix);
}

knut_status knut_graphar_path_adj_list_dir(knut_buf *out, const char *base,
                                           const knut_graphar_edge_info *ei,
                                           const knut_graphar_adj_list *al)
{
    if (!out || !ei || !al)
        return KNUT_EINVAL;
    put_adj(out, base, ei, al);
    return done(out);
}

knut_status knut_graphar_path_adj_chunk(knut_buf *out, const char *base,
                                        const knut_graphar_edge_info *ei,
                                        const knut_graphar_adj_list *al, int64_t part,
                                        int64_t chunk)
{
    if (!out || !ei || !al || part < 0 || chunk < 0)
        return KNUT_EINVAL;
    put_adj(out, base, ei, al);
    knut_buf_printf(out, "adj_list/part%lld/chunk%lld", (long long)part, (long long)chunk);
    return done(out);
}

knut_status knut_graphar_path_offset_chunk(knut_buf *out, const char *base,
                                           const knut_graphar_edge_info *ei,
                                           const knut_graphar_adj_list *al, int64_t part)
{
    /* Only ordered adj lists have offsets (the writer refuses others). */
    if (!out || !ei || !al || part < 0 || !knut_graphar_adj_list_type_is_ordered(al->type))
        return KNUT_EINVAL;
    put_adj(out, base, ei, al);
    knut_buf_printf(out, "offset/chunk%lld", (long long)part);
    return done(out);
}

knut_status knut_graphar_path_edge_chunk(knut_buf *out, const char *base,
                                         const knut_graphar_edge_info *ei,
                                         const knut_graphar_adj_list *al,
                                         const knut_graphar_property_group *g, int64_t part,
                                         int64_t chunk)
{
    if (!out || !ei || !al || !g || part < 0 || chunk < 0)
        return KNUT_EINVAL;
    put_adj(out, base, ei, al);
    put_part(out, g->prefix);
    knut_buf_printf(out, "part%lld/chunk%lld", (long long)part, (long long)chunk);
    return done(out);
}

knut_status knut_graphar_path_edge_count(knut_buf *out, const char *base,
                                         const knut_graphar_edge_info *ei,
                                         const knut_graphar_adj_list *al, int64_t part)
{
    if (!out || !ei || !al || part < 0)
        return KNUT_EINVAL;
    put_adj(out, base, ei, al);
    knut_buf_printf(out, "edge_count%lld", (long long)part);
    return done(out);
}

knut_status knut_graphar_path_aligned_vertex_count(knut_buf *out, const char *base,
                                                   const knut_graphar_edge_info *ei,
                                                   const knut_graphar_adj_list *al)
{
    if (!out || !ei || !al)
        return KNUT_EINVAL;
    put_adj(out, base, ei, al);
    knut_buf_puts(out, "vertex_count");
    return done(out);
}

/* ---- chunk math -------------------------------------------------------- */

int64_t knut_graphar_chunk_count(int64_t count, int64_t chunk_size)
{
    if (count <= 0 || chunk_size <= 0)
        return 0;
    /* No (count + chunk_size - 1) here: it overflows near INT64_MAX. */
    return count / chunk_size + (count % chunk_size != 0);
}

int64_t knut_graphar_chunk_rows(int64_t count, int64_t chunk_size, int64_t c)
{
    if (c < 0 || c >= knut_graphar_chunk_count(count, chunk_size))
        return 0;
    if (c < count / chunk_size)
        return chunk_size;
    return count % chunk_size;
}

int64_t knut_graphar_aligned_chunk_size(const knut_graphar_edge_info *ei,
                                        knut_graphar_adj_list_type t)
{
    if (!ei)
        return 0;
    return knut_graphar_adj_list_type_by_source(t) ? ei->src_chunk_size : ei->dst_chunk_size;
}

const char *knut_graphar_aligned_type(const knut_graphar_edge_info *ei,
                                      knut_graphar_adj_list_type t)
{
    if (!ei)
        return NULL;
    return knut_graphar_adj_list_type_by_source(t) ? ei->src_type : ei->dst_type;
}

/* ---- count files ------------------------------------------------------- */

void knut_graphar_count_encode(int64_t value, unsigned char out[8])
{
    uint64_t u = (uint64_t)value;
    for (int i = 0; i < 8; i++)
        out[i] = (unsigned char)(u >> (8 * i));
}

knut_status knut_graphar_count_decode(const void *bytes, size_t len, const char *name,
                                      int64_t *out, knut_error *err)
{
    KNUT_ASSERT_ARG(err, out && (bytes || len == 0));
    if (!name)
        name = "<count>";
    /* GraphAr count files are a bare little-endian int64 (the C++ writer's
     * WriteValueToFile<IdType>); anything else is not one. */
    if (len != 8)
        return knut_error_set(err, KNUT_EPARSE,
                              "%s: count file must be exactly 8 bytes (little-endian int64), "
                              "found %zu",
                              name, len);
    const unsigned char *b = bytes;
    uint64_t u = 0;
    for (int i = 7; i >= 0; i--)
        u = (u << 8) | b[i];
    int64_t v = (int64_t)u;
    if (v < 0)
        return knut_error_set(err, KNUT_EPARSE, "%s: negative count %lld", name, (long long)v);
    *out = v;
    return KNUT_OK;
}

knut_status knut_graphar__count_load(const char *path, int64_t *value, int64_t *size,
                                     knut_error *err)
{
    KNUT_ASSERT_ARG(err, path && value);
    knut_status st = KNUT_OK;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return knut_error_set(err,
                              errno == ENOENT || errno == ENOTDIR ? KNUT_ENOTFOUND : KNUT_EIO,
                              "%s: cannot open count file: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        st = knut_error_set(err, KNUT_EIO, "%s: count file is not a regular file", path);
        goto cleanup;
    }
    /* Read one byte more than needed so a longer file is caught even where
     * fstat sizes are unreliable (some network filesystems). */
    unsigned char buf[9];
    size_t got = 0;
    while (got < sizeof buf) {
        ssize_t r = read(fd, buf + got, sizeof buf - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            st = knut_error_set(err, KNUT_EIO, "%s: read failed: %s", path, strerror(errno));
            goto cleanup;
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    if (got != 8 || sb.st_size != 8) {
        long long found = got > 8 ? (long long)sb.st_size : (long long)got;
        if (size)
            *size = found;
        st = knut_error_set(err, KNUT_EPARSE,
                            "%s: count file must be exactly 8 bytes (little-endian int64), "
                            "found %lld",
                            path, found);
        goto cleanup;
    }
    uint64_t u = 0;
    for (int i = 7; i >= 0; i--)
        u = (u << 8) | buf[i];
    *value = (int64_t)u;
cleanup:
    close(fd);
    return st;
}

knut_status knut_graphar_count_read(const char *path, int64_t *out, knut_error *err)
{
    KNUT_ASSERT_ARG(err, path && out);
    int64_t v = 0;
    knut_status st = knut_graphar__count_load(path, &v, NULL, err);
    if (st == KNUT_OK && v < 0)
        return knut_error_set(err, KNUT_EPARSE, "%s: negative count %lld", path, (long long)v);
    if (st == KNUT_OK)
        *out = v;
    return st;
}

knut_status knut_graphar_count_write(const char *path, int64_t value, knut_error *err)
{
    KNUT_ASSERT_ARG(err, path);
    if (value < 0)
        return knut_error_set(err, KNUT_EINVAL, "%s: negative count %lld", path,
                              (long long)value);
    unsigned char b[8];
    knut_graphar_count_encode(value, b);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return knut_error_set(err, errno == ENOENT ? KNUT_ENOTFOUND : KNUT_EIO,
                              "%s: cannot create count file: %s", path, strerror(errno));
    size_t put = 0;
    knut_status st = KNUT_OK;
    while (put < sizeof b) {
        ssize_t w = write(fd, b + put, sizeof b - put);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            st = knut_error_set(err, KNUT_EIO, "%s: write failed: %s", path,
                                w < 0 ? strerror(errno) : "short write");
            break;
        }
        put += (size_t)w;
    }
    if (close(fd) != 0 && st == KNUT_OK)
        st = knut_error_set(err, KNUT_EIO, "%s: close failed: %s", path, strerror(errno));
    return st;
}
