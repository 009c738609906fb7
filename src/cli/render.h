/*
 * Rendering Arrow streams for people and pipes: an aligned text table,
 * CSV (RFC 4180 quoting), JSON lines, or the Arrow IPC stream format.
 * Shared by every subcommand that prints rows. Everything streams batch by
 * batch, so memory stays bounded whatever the row count.
 */
#ifndef KNUT_CLI_RENDER_H
#define KNUT_CLI_RENDER_H

#include <stdint.h>
#include <stdio.h>

#include "knut/arrow.h"
#include "knut/core.h"

typedef enum knut_cli_format {
    KNUT_CLI_FORMAT_TABLE = 0,
    KNUT_CLI_FORMAT_CSV,
    KNUT_CLI_FORMAT_JSON,
    KNUT_CLI_FORMAT_ARROW
} knut_cli_format;

/* "table", "csv", "json", "arrow" (in enum order), NULL: the choices of
 * every --format option that prints rows. */
extern const char *const knut_cli_format_names[];
/* The help of such a --format option (knut_cli_opt.help). */
#define KNUT_CLI_FORMAT_HELP                                   \
    "table   aligned text table (the default)\n"               \
    "csv     RFC 4180, header row, NULL as an empty field\n"   \
    "json    one JSON object per line; NULL as null,\n"        \
    "        dates and timestamps as ISO 8601 strings\n"       \
    "arrow   Arrow IPC stream (binary; not to a terminal)"

/* Table rows shown by default before the rest is cut off. */
#define KNUT_CLI_TABLE_DEFAULT_MAX_ROWS 1000
/* Widest table cell, in characters, before it is cut with "…". */
#define KNUT_CLI_TABLE_DEFAULT_WIDTH 48

typedef struct knut_cli_render_opts {
    knut_cli_format format;
    int64_t max_rows;  /* table only: rows shown; <= 0 = all */
    int max_width;     /* table only: characters per cell; <= 0 = default */
} knut_cli_render_opts;

/*
 * Reads stream (to the end, or until the table's max_rows) and writes it to
 * out. The stream is not released. *rows (may be NULL) gets the rows
 * written. Errors name the stream failure or the write failure.
 */
knut_status knut_cli_render_stream(FILE *out, struct ArrowArrayStream *stream,
                                   const knut_cli_render_opts *opts, int64_t *rows,
                                   knut_error *err);

/* ---- single values (render_value.c) ----------------------------------- */

typedef enum knut_cli_value_style {
    /* Plain text: strings raw, nested values as JSON, NULL as "NULL". */
    KNUT_CLI_VALUE_TEXT = 0,
    /* JSON: strings quoted and escaped, numbers bare, dates and
     * timestamps as ISO 8601 strings, NULL as null. */
    KNUT_CLI_VALUE_JSON
} knut_cli_value_style;

/* Appends row i of v (a logical index) to b. */
void knut_cli_render_value(knut_buf *b, const knut_arrow_view *v, int64_t i,
                           knut_cli_value_style style);

/* True if v holds numbers (right-aligned in tables). */
int knut_cli_render_is_numeric(const knut_arrow_view *v);

#endif
