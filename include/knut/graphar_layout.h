/*
 * knut graphar, the layout: where every chunk, offset and count file of a
 * graph lies, the chunk math, and the 8-byte count files. Part of
 * knut/graphar.h.
 */
#ifndef KNUT_GRAPHAR_LAYOUT_H
#define KNUT_GRAPHAR_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "knut/core.h"
#include "knut/graphar_info.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- layout: paths ----------------------------------------------------- */

/*
 * Every function appends one path to out. base goes first, plus a '/' if
 * it lacks one: pass NULL for the path relative to the graph prefix (what
 * the reference's getters return), gi->prefix for the path the reference
 * reads (it concatenates `prefix + path`), or gi->base_dir to find data
 * beside the YAML (the nebula corpus has an absolute prefix that does not
 * exist). Parts are joined with a '/' added after any part that does not
 * end in one (the reference's BuildPath), so an info prefix without a
 * trailing slash still works, except in the label path, which the
 * reference builds by plain concatenation.
 * They return KNUT_EINVAL on a NULL info or negative index, or out's
 * sticky error.
 */
/* V/P/  and  V/P/chunk<c> */
KNUT_EXTERN knut_status knut_graphar_path_vertex_group(knut_buf *out, const char *base,
                                                       const knut_graphar_vertex_info *vi,
                                                       const knut_graphar_property_group *g);
KNUT_EXTERN knut_status knut_graphar_path_vertex_chunk(knut_buf *out, const char *base,
                                                       const knut_graphar_vertex_info *vi,
                                                       const knut_graphar_property_group *g,
                                                       int64_t chunk);
/* V/vertex_count */
KNUT_EXTERN knut_status knut_graphar_path_vertex_count(knut_buf *out, const char *base,
                                                       const knut_graphar_vertex_info *vi);
/* <V as written>labels/chunk<c> (always Parquet) */
KNUT_EXTERN knut_status knut_graphar_path_label_chunk(knut_buf *out, const char *base,
                                                      const knut_graphar_vertex_info *vi,
                                                      int64_t chunk);
/* E/A/ : the adj list's directory */
KNUT_EXTERN knut_status knut_graphar_path_adj_list_dir(knut_buf *out, const char *base,
                                                       const knut_graphar_edge_info *ei,
                                                       const knut_graphar_adj_list *al);
/* E/A/adj_list/part<part>/chunk<chunk> */
KNUT_EXTERN knut_status knut_graphar_path_adj_chunk(knut_buf *out, const char *base,
                                                    const knut_graphar_edge_info *ei,
                                                    const knut_graphar_adj_list *al, int64_t part,
                                                    int64_t chunk);
/* E/A/offset/chunk<part> (ordered types only: EINVAL otherwise) */
KNUT_EXTERN knut_status knut_graphar_path_offset_chunk(knut_buf *out, const char *base,
                                                       const knut_graphar_edge_info *ei,
                                                       const knut_graphar_adj_list *al,
                                                       int64_t part);
/* E/A/P/part<part>/chunk<chunk> */
KNUT_EXTERN knut_status knut_graphar_path_edge_chunk(knut_buf *out, const char *base,
                                                     const knut_graphar_edge_info *ei,
                                                     const knut_graphar_adj_list *al,
                                                     const knut_graphar_property_group *g,
                                                     int64_t part, int64_t chunk);
/* E/A/edge_count<part> */
KNUT_EXTERN knut_status knut_graphar_path_edge_count(knut_buf *out, const char *base,
                                                     const knut_graphar_edge_info *ei,
                                                     const knut_graphar_adj_list *al, int64_t part);
/* E/A/vertex_count: the aligned vertex type's count */
KNUT_EXTERN knut_status knut_graphar_path_aligned_vertex_count(knut_buf *out, const char *base,
                                                               const knut_graphar_edge_info *ei,
                                                               const knut_graphar_adj_list *al);

/* ---- layout: chunk math ------------------------------------------------ */

/* ceil(count / chunk_size); 0 for count <= 0 or chunk_size <= 0. Used for
 * vertex chunks, parts (aligned vertex count / aligned chunk size) and edge
 * chunks of a part (edge_count<i> / chunk_size). */
KNUT_EXTERN int64_t knut_graphar_chunk_count(int64_t count, int64_t chunk_size);
/* Rows in chunk c of count rows cut into chunk_size pieces (0 past the end). */
KNUT_EXTERN int64_t knut_graphar_chunk_rows(int64_t count, int64_t chunk_size, int64_t c);
/* The aligned side's chunk size: src_chunk_size for *_by_source, else dst. */
KNUT_EXTERN int64_t knut_graphar_aligned_chunk_size(const knut_graphar_edge_info *ei,
                                                    knut_graphar_adj_list_type t);
/* The aligned side's vertex type name: src_type for *_by_source, else dst. */
KNUT_EXTERN const char *knut_graphar_aligned_type(const knut_graphar_edge_info *ei,
                                                  knut_graphar_adj_list_type t);

/* ---- count files ------------------------------------------------------- */

/*
 * vertex_count and edge_count<i> hold exactly 8 bytes: a little-endian
 * int64, no header. Reading checks the size (EPARSE naming the file and the
 * size found) and refuses negative values; ENOTFOUND if the file is absent,
 * EIO if it cannot be read. At most 9 bytes are read, whatever the file.
 */
KNUT_EXTERN knut_status knut_graphar_count_read(const char *path, int64_t *out, knut_error *err);
/* Decodes bytes already read (name is used in messages). */
KNUT_EXTERN knut_status knut_graphar_count_decode(const void *bytes, size_t len, const char *name,
                                                  int64_t *out, knut_error *err);
/* The 8 little-endian bytes of value. */
KNUT_EXTERN void knut_graphar_count_encode(int64_t value, unsigned char out[8]);
/* Writes the file (created or truncated), creating no directories; KNUT_EIO
 * naming the path. */
KNUT_EXTERN knut_status knut_graphar_count_write(const char *path, int64_t value, knut_error *err);

#ifdef __cplusplus
}
#endif

#endif /* KNUT_GRAPHAR_LAYOUT_H */
