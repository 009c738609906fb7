/*
 * Fuzz target for one sync ledger entry (the JSON object a file ledger or
 * a Valkey hash holds: both are read back from disk or the network, so
 * anything may be there). Any input decodes or fails cleanly; what decodes
 * encodes again, and that text decodes to the same entry.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sync/sync_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int same_str(const char *a, const char *b)
{
    return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sync_entry e, back;
    knut_error err = KNUT_ERROR_INIT;
    memset(&back, 0, sizeof back);
    if (knut_sync__entry_decode((const char *)data, size, "fuzz", &e, &err) != KNUT_OK)
        return 0;
    knut_buf text = KNUT_BUF_INIT;
    text.max = 2 * SYNC_ENTRY_MAX;
    if (knut_sync__entry_encode(&text, &e, "fuzz", &err) != KNUT_OK)
        abort(); /* the encoder refuses only what the decoder would refuse */
    if (knut_sync__entry_decode(text.data, text.len, "fuzz", &back, &err) != KNUT_OK)
        abort();
    if (!same_str(e.table, back.table) || !same_str(e.path, back.path) ||
        !same_str(e.hash, back.hash) || !same_str(e.status, back.status) ||
        !same_str(e.reason, back.reason) || !same_str(e.config, back.config) ||
        e.size != back.size || e.mtime_ns != back.mtime_ns || e.round != back.round ||
        e.rows != back.rows)
        abort();
    knut_sync__entry_reset(&back);
    knut_sync__entry_reset(&e);
    knut_buf_reset(&text);
    return 0;
}
