/*
 * Fuzz target for the CSV header split of declared tables
 * (knut_sync__csv_header, fed by a drop file's first line): any input
 * splits or fails cleanly, and what splits round-trips: the names written
 * back as quoted CSV fields split into the same names.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sync/sync_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    sync_names a = {0}, b = {0};
    knut_buf again = KNUT_BUF_INIT;
    knut_error err = KNUT_ERROR_INIT;
    if (knut_sync__csv_header((const char *)data, size, &a, &err) != KNUT_OK)
        return 0;
    if (a.n == 0)
        abort();
    for (size_t i = 0; i < a.n; i++) {
        knut_buf_puts(&again, i ? ",\"" : "\"");
        for (const char *p = a.names[i]; *p; p++) {
            if (*p == '"')
                knut_buf_putc(&again, '"');
            knut_buf_putc(&again, *p);
        }
        knut_buf_putc(&again, '"');
    }
    if (knut_buf_check(&again, NULL) != KNUT_OK ||
        knut_sync__csv_header(again.data, again.len, &b, &err) != KNUT_OK || b.n != a.n)
        abort();
    for (size_t i = 0; i < a.n; i++)
        if (strcmp(a.names[i], b.names[i]) != 0)
            abort();
    knut_sync__names_reset(&a);
    knut_sync__names_reset(&b);
    knut_buf_reset(&again);
    return 0;
}
