/*
 * Private builder helpers shared by builder.c (appends) and
 * builder_finish.c (lifecycle and finishing). Not installed.
 */
#ifndef KNUT_ARROW_BUILDER_INT_H
#define KNUT_ARROW_BUILDER_INT_H

#include "knut/arrow.h"

/* Grows buf so `extra` more bytes fit, within b->max_bytes (zero-filled). */
knut_status knut_arrow__bytes_reserve(knut_arrow_builder *b, knut_arrow_bytes *buf,
                                      int64_t extra, knut_error *err);
/* Writes offset[0] = 0 for offset types whose offsets buffer is empty. */
knut_status knut_arrow__offsets_start(knut_arrow_builder *b, knut_error *err);
/* The last offset written (0 if none). */
int64_t knut_arrow__last_offset(const knut_arrow_builder *b);

#endif
