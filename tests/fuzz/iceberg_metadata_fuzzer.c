/*
 * Fuzz target for Iceberg table metadata: the bytes are parsed as a
 * metadata JSON file (gunzipped first when they start with the gzip
 * magic, as knut_iceberg_table_load does). A table that parses must keep
 * the model's promises (its current ids resolve, every snapshot has an
 * operation, list and map children are shaped as documented), and every
 * location in it goes through knut_iceberg_path_local (pure string work:
 * nothing is opened).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "iceberg/metadata_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_field(const knut_iceberg_field *f, int depth)
{
    if (!f->name || !f->type || depth > KNUT_ICEBERG__DEPTH_MAX + 1)
        __builtin_trap();
    if (strcmp(f->type, "list") == 0 &&
        (f->n_children != 1 || strcmp(f->children[0].name, "element") != 0))
        __builtin_trap();
    if (strcmp(f->type, "map") == 0 &&
        (f->n_children != 2 || strcmp(f->children[0].name, "key") != 0 || !f->children[0].required))
        __builtin_trap();
    for (size_t i = 0; i < f->n_children; i++)
        check_field(&f->children[i], depth + 1);
}

static void local(const char *uri, const char *base)
{
    char *out = NULL;
    knut_error err = KNUT_ERROR_INIT;
    knut_status st = knut_iceberg_path_local(uri, base, &out, &err);
    if ((st == KNUT_OK) != (out != NULL) || (st != KNUT_OK && !err.message[0]))
        __builtin_trap();
    free(out);
}

static void check_table(const knut_iceberg_table *t)
{
    if ((t->format_version != 1 && t->format_version != 2) || !t->location ||
        !knut_iceberg_table_schema(t, t->current_schema_id) ||
        !knut_iceberg_table_spec(t, t->default_spec_id) ||
        (t->current_snapshot_id != -1 && !knut_iceberg_table_snapshot(t, t->current_snapshot_id)) ||
        (t->format_version == 2 && !t->uuid))
        __builtin_trap();
    for (size_t i = 0; i < t->n_schemas; i++)
        for (size_t j = 0; j < t->schemas[i].n_fields; j++)
            check_field(&t->schemas[i].fields[j], 1);
    local(t->location, NULL);
    for (size_t i = 0; i < t->n_snapshots; i++) {
        const knut_iceberg_snapshot *s = &t->snapshots[i];
        if (!s->operation || !s->manifest_list || (t->format_version == 1 && s->sequence_number))
            __builtin_trap();
        for (size_t k = 0; k < s->n_summary; k++)
            if (!s->summary_keys[k] || !s->summary_values[k] ||
                strcmp(s->summary_keys[k], "operation") == 0)
                __builtin_trap();
        local(s->manifest_list, t->location);
    }
    for (size_t k = 0; k < t->n_props; k++)
        if (knut_iceberg_table_property(t, t->prop_keys[k]) == NULL)
            __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    knut_buf plain = KNUT_BUF_INIT;
    knut_error err = KNUT_ERROR_INIT;
    const char *text = (const char *)data;
    if (size >= 2 && data[0] == 0x1f && data[1] == 0x8b) {
        knut_status st = knut_iceberg__gunzip(data, size, "fuzz.gz.metadata.json", &plain, &err);
        if (st != KNUT_OK) {
            if (!err.message[0] || plain.data)
                __builtin_trap();
            return 0;
        }
        text = plain.data;
        size = plain.len;
    }
    knut_iceberg_table *t = NULL;
    knut_error_clear(&err);
    knut_status st = knut_iceberg_table_parse(&t, text, size, "fuzz.metadata.json", &err);
    /* A failure leaves no table and always says why, naming the file. */
    if (st != KNUT_OK && (t != NULL || !strstr(err.message, "fuzz.metadata.json")))
        __builtin_trap();
    if (st == KNUT_OK) {
        if (!t)
            __builtin_trap();
        check_table(t);
    }
    knut_iceberg_table_free(t);
    knut_buf_reset(&plain);
    return 0;
}
