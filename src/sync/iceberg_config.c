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
    const knut_conf *ice = knut_conf_get(n, "iceberg");
    knut_status st = knut_sync__source_no_file_keys(
        n, table, "", "iceberg", "its rows are the Iceberg table's changes, in commit order", err);
    if (st != KNUT_OK)
        return st;
    if (knut_conf_kind_of(ice) != KNUT_CONF_MAP)
        return knut_sync__source_err(err, ice, table,
                    "'iceberg' must be a map: {table: ns.name, catalog: FILE} or {path: FOLDER}");
    st = knut_graph_map_check_keys(ice, "table", table, "iceberg", allowed, err);
    const char *id = NULL, *cat = NULL, *cname = NULL, *path = NULL;
    if (st == KNUT_OK)
        st = knut_sync__source_str(ice, "table", table, "iceberg", &id, err);
    if (st == KNUT_OK)
        st = knut_sync__source_str(ice, "catalog", table, "iceberg", &cat, err);
    if (st == KNUT_OK)
        st = knut_sync__source_str(ice, "catalog_name", table, "iceberg", &cname, err);
    if (st == KNUT_OK)
        st = knut_sync__source_str(ice, "path", table, "iceberg", &path, err);
    if (st != KNUT_OK)
        return st;
    if (path && (id || cat || cname))
        return knut_sync__source_err(err, knut_conf_get(ice, "path"), table,
                    "iceberg: 'path' names the table by its folder; it goes with none of "
                    "'table', 'catalog', 'catalog_name'");
    if (!path && (!id || !cat))
        return knut_sync__source_err(err, ice, table,
                    "iceberg: needs 'table' (namespace.name) and 'catalog' (the SQLite catalog "
                    "file), or 'path' (a table folder or metadata file)");
    if (id && (!strchr(id, '.') || id[0] == '.' || ends_with(id, ".")))
        return knut_sync__source_err(err, knut_conf_get(ice, "table"), table,
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
