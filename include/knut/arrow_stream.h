/*
 * knut arrow, streams: arrays as C streams and streams read to their end.
 * Part of knut/arrow.h.
 */
#ifndef KNUT_ARROW_STREAM_H
#define KNUT_ARROW_STREAM_H

#include <stdint.h>

#include "knut/arrow_types.h"
#include "knut/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- streams ----------------------------------------------------------- */

/* Max batches knut_arrow_stream_collect keeps unless told otherwise. */
#define KNUT_ARROW_COLLECT_DEFAULT_MAX ((int64_t)1 << 20)

/*
 * Makes a stream yielding the n arrays in order, then end of stream.
 * Takes ownership of schema and of every array (also on failure: they are
 * released); `arrays` itself is the caller's. The caller releases *out.
 * KNUT_EINVAL (a released schema, n < 0), KNUT_ENOMEM.
 */
KNUT_EXTERN knut_status knut_arrow_stream_from_arrays(struct ArrowArrayStream *out,
                                                      struct ArrowSchema *schema,
                                                      struct ArrowArray *arrays, int64_t n,
                                                      knut_error *err);

/*
 * Reads the stream to its end: *out_schema gets the schema, *out_arrays a
 * malloc'ed vector of *out_n arrays (free with knut_arrow_arrays_free).
 * KNUT_ETOOBIG past max_arrays batches (<= 0 = default). Does not release
 * the stream. On failure everything collected so far is released.
 */
KNUT_EXTERN knut_status knut_arrow_stream_collect(struct ArrowArrayStream *stream,
                                                  struct ArrowSchema *out_schema,
                                                  struct ArrowArray **out_arrays, int64_t *out_n,
                                                  int64_t max_arrays, knut_error *err);

/* Releases every array and frees the vector (NULL-safe). */
KNUT_EXTERN void knut_arrow_arrays_free(struct ArrowArray *arrays, int64_t n);

/* Reads the stream to its end and sums the array lengths into *out (the
 * schema is fetched and released). Does not release the stream. Errors:
 * the stream's, as knut_arrow_stream_error maps them. */
KNUT_EXTERN knut_status knut_arrow_stream_count_rows(struct ArrowArrayStream *stream, int64_t *out,
                                                     knut_error *err);

/* Reads the stream to its end, calling fn(ctx, view, err) with each batch
 * as a view (released after the call); a status other than KNUT_OK from
 * fn stops there and is returned. Does not release the stream. */
struct knut_arrow_view; /* knut/arrow_view.h */
typedef knut_status (*knut_arrow_view_fn)(void *ctx, const struct knut_arrow_view *v,
                                          knut_error *err);
KNUT_EXTERN knut_status knut_arrow_stream_each(struct ArrowArrayStream *stream,
                                               knut_arrow_view_fn fn, void *ctx, knut_error *err);

/* Reads the stream to its end and copies the first column of every row
 * as text into (*out)[0..*n) (owned; NULL values become ""; a first
 * column that is not UTF-8 text is KNUT_EINVAL), appending to what *out already holds. More than
 * max rows in all is KNUT_ETOOBIG ("more than MAX rows"); on any error
 * the strings taken so far stay in *out for the caller to free. Does not
 * release the stream. */
KNUT_EXTERN knut_status knut_arrow_stream_texts(struct ArrowArrayStream *stream, size_t max,
                                                char ***out, size_t *n, knut_error *err);

/* Maps a stream callback's errno-style result to a knut status, with
 * get_last_error's text (if any) in err, prefixed by `what`. */
KNUT_EXTERN knut_status knut_arrow_stream_error(struct ArrowArrayStream *stream, int code,
                                                const char *what, knut_error *err);

#ifdef __cplusplus
}
#endif

#endif /* KNUT_ARROW_STREAM_H */
