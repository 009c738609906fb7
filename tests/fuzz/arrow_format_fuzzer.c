/*
 * Fuzz target for Arrow format strings, which arrive from foreign schemas
 * (pyarrow, DuckDB, IPC files). Any input must parse or fail cleanly, and
 * whatever parses must print back to a string that parses to the same type.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "knut/arrow.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 256)
        return 0;
    char fmt[257];
    memcpy(fmt, data, size);
    fmt[size] = '\0';

    knut_arrow_type_info t, again;
    char printed[KNUT_ARROW_TZ_MAX + 64];
    if (knut_arrow_format_parse(fmt, &t, NULL) != KNUT_OK)
        return 0;
    if (knut_arrow_format_print(&t, printed, sizeof(printed), NULL) != KNUT_OK)
        abort();
    if (knut_arrow_format_parse(printed, &again, NULL) != KNUT_OK)
        abort();
    if (t.type != again.type || t.unit != again.unit || t.byte_width != again.byte_width ||
        t.precision != again.precision || t.scale != again.scale ||
        strcmp(t.timezone, again.timezone) != 0)
        abort();
    return 0;
}
