/*
 * knut arrow: the columnar exchange type between parts. It declares the Arrow
 * C Data Interface and C Stream Interface structs (unchanged from the Arrow
 * specification), parses and prints Arrow format strings, builds arrays
 * (knut_arrow_builder), reads arrays produced by anyone (knut_arrow_view),
 * validates foreign arrays, wraps arrays in streams, and reads and writes
 * the Arrow IPC stream format. This umbrella includes the parts:
 * arrow_types.h, arrow_builder.h, arrow_view.h, arrow_stream.h, arrow_ipc.h.
 *
 * Ownership follows the Arrow release contract: whoever fills an ArrowSchema,
 * ArrowArray or ArrowArrayStream out-param owns calling its `release`, which
 * sets `release` to NULL. On failure, functions leave out-params released
 * (release == NULL) so there is nothing to clean up.
 */
#ifndef KNUT_ARROW_H
#define KNUT_ARROW_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "knut/core.h"

#include "knut/arrow_types.h"
#include "knut/arrow_builder.h"
#include "knut/arrow_view.h"
#include "knut/arrow_stream.h"
#include "knut/arrow_ipc.h"

#endif /* KNUT_ARROW_H */
