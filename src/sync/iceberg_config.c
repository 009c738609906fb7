/*
 * The `iceberg:` key of a sync table (docs/sync.md "Iceberg tables"): the
 * table follows an Iceberg table's snapshots instead of dropped files.
 * Either {table: ns.name, catalog: FILE, catalog_name: NAME} (the SQLite
 * SQL catalog pyiceberg and Java's JdbcCatalog keep) or {path: FOLDER or
 * METADATA FILE}; paths relative to the config's folder. The rows of such
 * a table are its changelog, so it is a cdc table unless it says
 * `mode: full`; the keys that describe files (format, columns,
 * sequence_by) have no meaning for it and are refused.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sync_int.h"

static knut_status ierr(knut_error *err, const knut_conf *n, const char *table, const char *msg)
{
    return knut_error_set_at(err, KNUT_EINVAL, knut_conf_file(n), knut_conf_line(n),
                             knut_conf_col(n), "table '%s': %s", table, msg);
}

/* The optional non-empty string at map[key] (NULL when absent). */
static knut_status opt_str(const knut_conf *map, const char *key, const char *table,
                           const char **out, knut_error *err)
{
    const knut_conf *v = knut_conf_get(map, key);
    *out = NULL;
    if (!v)
        return KNUT_OK;
    const char *s = knut_conf_str(v);
    if (!s || !*s) {
        char msg[128];
        snprintf(msg, sizeof msg, "iceberg: '%s' must be a non-empty string", key);
        return ierr(err, v, table, msg);
    }
    *out = s;
    return KNUT_OK;
}

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

static char *concat(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 1;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%s%s", a, b);
    return s;
}

knut_status knut_sync__iceberg_parse(const knut_conf *n, const char *table, const char *dir,
                                     knut_sync_table *t, knut_error *err)
{
    static const char *const allowed[] = {"table", "catalog", "catalog_name", "path", NULL};
    static const char *const file_keys[] = {"path", "format", "columns", "sequence_by"};
    const knut_conf *ice = knut_conf_get(n, "iceberg");
    for (size_t i = 0; i < sizeof file_keys / sizeof file_keys[0]; i++) {
        const knut_conf *k = knut_conf_get(n, file_keys[i]);
        if (k) {
            char msg[256];
            snprintf(msg, sizeof msg,
                     "'%s' describes dropped files; a table with 'iceberg:' has none (its rows "
                     "are the Iceberg table's changes, in commit order)", file_keys[i]);
            return ierr(err, k, table, msg);
        }
    }
    if (knut_conf_kind_of(ice) != KNUT_CONF_MAP)
        return ierr(err, ice, table,
                    "'iceberg' must be a map: {table: ns.name, catalog: FILE} or {path: FOLDER}");
    knut_status st = knut_graph_map_check_keys(ice, "table", table, "iceberg", allowed, err);
    const char *id = NULL, *cat = NULL, *cname = NULL, *path = NULL;
    if (st == KNUT_OK)
        st = opt_str(ice, "table", table, &id, err);
    if (st == KNUT_OK)
        st = opt_str(ice, "catalog", table, &cat, err);
    if (st == KNUT_OK)
        st = opt_str(ice, "catalog_name", table, &cname, err);
    if (st == KNUT_OK)
        st = opt_str(ice, "path", table, &path, err);
    if (st != KNUT_OK)
        return st;
    if (path && (id || cat || cname))
        return ierr(err, knut_conf_get(ice, "path"), table,
                    "iceberg: 'path' names the table by its folder; it goes with none of "
                    "'table', 'catalog', 'catalog_name'");
    if (!path && (!id || !cat))
        return ierr(err, ice, table,
                    "iceberg: needs 'table' (namespace.name) and 'catalog' (the SQLite catalog "
                    "file), or 'path' (a table folder or metadata file)");
    if (id && (!strchr(id, '.') || id[0] == '.' || ends_with(id, ".")))
        return ierr(err, knut_conf_get(ice, "table"), table,
                    "iceberg: 'table' must be namespace.name");
    knut_sync_iceberg *ib = calloc(1, sizeof *ib);
    if (!ib)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    t->iceberg = ib;
    ib->node = ice;
    ib->identifier = id;
    ib->catalog_name = cname;
    if (cat) {
        ib->catalog = knut_sync__path_join(dir, cat);
        ib->key = concat(SYNC_ICEBERG_KEY_PREFIX, id);
        /* commits rewrite the catalog file: its folder is watched */
        t->path = ib->catalog ? strdup(ib->catalog) : NULL;
    } else {
        ib->path = knut_sync__path_join(dir, path);
        ib->key = ib->path ? concat(SYNC_ICEBERG_KEY_PREFIX, ib->path) : NULL;
        /* a table folder's commits land in its metadata/ folder */
        int file = ends_with(path, ".json") || ends_with(path, ".json.gz");
        t->path = ib->path ? (file ? strdup(ib->path) : concat(ib->path, "/metadata")) : NULL;
    }
    if (!ib->key || !t->path || (cat && !ib->catalog))
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
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
        return ierr(err, m, table, msg);
    }
    return KNUT_OK;
}

int knut_sync__entry_is_source_key(const char *path)
{
    return strncmp(path, SYNC_ICEBERG_KEY_PREFIX, strlen(SYNC_ICEBERG_KEY_PREFIX)) == 0 ||
           strncmp(path, SYNC_SPARK_KEY_PREFIX, strlen(SYNC_SPARK_KEY_PREFIX)) == 0;
}

void knut_sync__iceberg_free(knut_sync_table *t)
{
    if (!t->iceberg)
        return;
    free(t->iceberg->catalog);
    free(t->iceberg->path);
    free(t->iceberg->key);
    free(t->iceberg);
    t->iceberg = NULL;
}
