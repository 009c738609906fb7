/*
 * What the config of a table of versions shares, whichever its source
 * (`iceberg:` in iceberg_config.c, `spark:` in spark_config.c): the error
 * at a node, the optional string keys of the source's map, the file keys
 * refused next to it, the mode (cdc unless it says full), and the ledger
 * keys that name a source, not a file.
 */
#include <stdio.h>
#include <string.h>

#include "sync_int.h"

knut_status knut_sync__source_err(knut_error *err, const knut_conf *n, const char *table,
                                  const char *msg)
{
    return knut_error_set_at(err, KNUT_EINVAL, knut_conf_file(n), knut_conf_line(n),
                             knut_conf_col(n), "table '%s': %s", table, msg);
}

knut_status knut_sync__source_str(const knut_conf *map, const char *key, const char *table,
                                  const char *source, const char **out, knut_error *err)
{
    const knut_conf *v = knut_conf_get(map, key);
    *out = NULL;
    if (!v)
        return KNUT_OK;
    const char *s = knut_conf_str(v);
    if (!s || !*s) {
        char msg[128];
        snprintf(msg, sizeof msg, "%s: '%s' must be a non-empty string", source, key);
        return knut_sync__source_err(err, v, table, msg);
    }
    *out = s;
    return KNUT_OK;
}

knut_status knut_sync__source_no_file_keys(const knut_conf *n, const char *table,
                                           const char *prefix, const char *source,
                                           const char *rows, knut_error *err)
{
    static const char *const file_keys[] = {"path", "format", "columns", "sequence_by"};
    for (size_t i = 0; i < sizeof file_keys / sizeof file_keys[0]; i++) {
        const knut_conf *k = knut_conf_get(n, file_keys[i]);
        if (k) {
            char msg[256];
            snprintf(msg, sizeof msg, "%s'%s' describes dropped files; a table with '%s:' has "
                     "none (%s)", prefix, file_keys[i], source, rows);
            return knut_sync__source_err(err, k, table, msg);
        }
    }
    return KNUT_OK;
}

knut_status knut_sync__source_mode(const knut_conf *n, const char *table, const char *key,
                                   knut_sync_table *t, knut_error *err)
{
    const knut_conf *m = knut_conf_get(n, "mode");
    if (!m) {
        t->mode = KNUT_SYNC_MODE_CDC; /* its rows are changes */
        return KNUT_OK;
    }
    if (t->mode == KNUT_SYNC_MODE_INCREMENTAL) {
        char msg[192];
        snprintf(msg, sizeof msg, "a table with '%s:' is mode cdc (the default: its versions' "
                 "changes, deletes too) or full, not incremental", key);
        return knut_sync__source_err(err, m, table, msg);
    }
    return KNUT_OK;
}

int knut_sync__entry_is_source_key(const char *path)
{
    return strncmp(path, SYNC_ICEBERG_KEY_PREFIX, strlen(SYNC_ICEBERG_KEY_PREFIX)) == 0 ||
           strncmp(path, SYNC_SPARK_KEY_PREFIX, strlen(SYNC_SPARK_KEY_PREFIX)) == 0;
}
