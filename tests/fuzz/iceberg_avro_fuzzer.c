/*
 * Fuzz target for the Iceberg Avro readers: the same bytes go through the
 * manifest list parser and the manifest parser (with a fixed manifest list
 * row to inherit from), so the container framing, the codecs, the guard
 * in front of avro-c, avro-c's schema parser and decoder, and the field
 * readers are exercised together. A failure must leave no output and say
 * why; a success must hold what the header promises (strings set, enums
 * in range, the partition a JSON array).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "knut/iceberg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_failure(knut_status st, const void *out, size_t n, const knut_error *err)
{
    if (st != KNUT_OK && (out != NULL || n != 0 || err->message[0] == '\0' || err->code != st))
        __builtin_trap();
}

static void fuzz_list(const uint8_t *data, size_t size)
{
    knut_iceberg_manifest_file *m = NULL;
    size_t n = 0;
    knut_error err = KNUT_ERROR_INIT;
    knut_status st = knut_iceberg_manifest_list_parse(data, size, "fuzz-list.avro", &m, &n, &err);
    check_failure(st, m, n, &err);
    for (size_t i = 0; st == KNUT_OK && i < n; i++)
        if (!m[i].path || (m[i].content != 0 && m[i].content != 1))
            __builtin_trap();
    knut_iceberg_manifest_list_free(m, n);
}

static void fuzz_manifest(const uint8_t *data, size_t size)
{
    static const knut_iceberg_manifest_file mf = {
        .path = "fuzz.avro", .length = 1, .spec_id = 0, .content = 0, .sequence_number = 3,
        .min_sequence_number = 1, .added_snapshot_id = 42};
    knut_iceberg_data_file *f = NULL;
    size_t n = 0;
    knut_error err = KNUT_ERROR_INIT;
    knut_status st = knut_iceberg_manifest_parse(data, size, "fuzz.avro", &mf, &f, &n, &err);
    check_failure(st, f, n, &err);
    for (size_t i = 0; st == KNUT_OK && i < n; i++) {
        const knut_iceberg_data_file *d = &f[i];
        size_t plen = d->partition ? strlen(d->partition) : 0;
        if (!d->path || !d->format || plen < 2 || d->partition[0] != '[' ||
            d->partition[plen - 1] != ']' || (unsigned)d->status > 2 || (unsigned)d->content > 2 ||
            (d->n_equality_ids != 0) != (d->equality_ids != NULL))
            __builtin_trap();
    }
    knut_iceberg_data_files_free(f, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_list(data, size);
    fuzz_manifest(data, size);
    return 0;
}
