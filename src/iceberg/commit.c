/*
 * The two halves of an atomic append commit that talk to a catalog:
 * loading the base (the current metadata, and the pointer to it exactly as
 * the catalog stores it) and swapping the pointer from that base to a new
 * metadata file only if nobody swapped it first.
 *
 * SQL catalog (pyiceberg's SqlCatalog, Java's JdbcCatalog on SQLite): the
 * swap is UPDATE ... WHERE metadata_location = <base> in a BEGIN IMMEDIATE
 * transaction, and exactly one changed row means it landed. Filesystem
 * catalog: v<N+1>.metadata.json is created with link(), which fails with
 * EEXIST when a concurrent writer created it first (rename would silently
 * replace it); version-hint.text is only a hint (readers probe past it).
 */
#include "write_int.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static knut_status oom(knut_error *err)
{
    return knut_error_set(err, KNUT_ENOMEM, "iceberg: out of memory");
}

void knut_iceberg__base_clear(knut_iceberg__base *b)
{
    free(b->pointer);
    free(b->meta_path);
    json_decref(b->root);
    knut_iceberg_table_free(b->t);
    memset(b, 0, sizeof *b);
    b->number = -1;
}

/* The leading number of the file name of path ("v12.metadata.json" with
 * prefix "v": 12; "00003-...": 3), or -1. */
static long long file_number(const char *path, const char *prefix, const char *after)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t pl = strlen(prefix);
    if (strncmp(base, prefix, pl) != 0)
        return -1;
    const char *p = base + pl;
    long long n = 0;
    size_t digits = 0;
    while (isdigit((unsigned char)*p) && digits < 18)
        n = n * 10 + (*p++ - '0'), digits++;
    return digits && strncmp(p, after, strlen(after)) == 0 ? n : -1;
}

/* Reads the metadata file into b->root (JSON, to be changed) and b->t. */
static knut_status load_file(knut_iceberg__base *b, knut_error *err)
{
    knut_status st = knut_iceberg_table_load(&b->t, b->meta_path, err);
    if (st != KNUT_OK)
        return st;
    knut_buf text = KNUT_BUF_INIT;
    if ((st = knut_file_read(b->meta_path, KNUT_ICEBERG_METADATA_MAX, &text, err)) != KNUT_OK)
        return st;
    json_error_t je;
    if (!(b->root = json_loadb(text.data, text.len, JSON_REJECT_DUPLICATES, &je)))
        st = knut_error_set(err, KNUT_EPARSE,
                            "%s: not JSON (a gzip-compressed metadata file is read, not appended "
                            "to): %s",
                            b->meta_path, je.text);
    knut_buf_reset(&text);
    return st;
}

/* ---- SQL catalogs ----------------------------------------------------- */

typedef struct sql_id {
    const char *catalog;
    const char *ns;
    int ns_len;
    const char *name;
} sql_id;

static knut_status split_id(const knut_iceberg_ref *ref, sql_id *id, knut_error *err)
{
    const char *s = ref->identifier, *dot = s ? strrchr(s, '.') : NULL;
    if (!dot || dot == s || !dot[1])
        return knut_error_set(err, KNUT_EINVAL, "identifier '%s': expected namespace.table",
                              s ? s : "");
    id->catalog = ref->catalog ? ref->catalog : "default";
    id->ns = s;
    id->ns_len = (int)(dot - s);
    id->name = dot + 1;
    return KNUT_OK;
}

/* Splits ref's identifier into *id and opens its SQLite catalog. */
static knut_status sql_open(const knut_iceberg_ref *ref, sql_id *id, sqlite3 **db,
                            knut_error *err)
{
    knut_status st = split_id(ref, id, err);
    if (st != KNUT_OK)
        return st;
    const char *path = ref->path;
    struct stat sb;
    if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
        return knut_error_set(err, KNUT_ENOTFOUND,
                              "%s: no such SQLite catalog file (knut does not create catalogs: "
                              "create it with pyiceberg's SqlCatalog)",
                              path);
    /* No SQLITE_OPEN_CREATE: the file must be the catalog given. */
    if (sqlite3_open_v2(path, db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
        st = knut_error_set(err, KNUT_EIO, "%s: cannot open the SQLite catalog: %s", path,
                            *db ? sqlite3_errmsg(*db) : "out of memory");
        sqlite3_close(*db);
        *db = NULL;
        return st;
    }
    /* Another writer's commit holds the lock for milliseconds: wait. */
    sqlite3_busy_timeout(*db, 10000);
    return KNUT_OK;
}

static void bind_id(sqlite3_stmt *q, int first, const sql_id *id)
{
    sqlite3_bind_text(q, first, id->catalog, -1, SQLITE_STATIC);
    sqlite3_bind_text(q, first + 1, id->ns, id->ns_len, SQLITE_STATIC);
    sqlite3_bind_text(q, first + 2, id->name, -1, SQLITE_STATIC);
}

static knut_status sql_fail(sqlite3 *db, const char *path, const char *what, knut_error *err)
{
    int rc = sqlite3_errcode(db);
    return knut_error_set(err, rc == SQLITE_BUSY || rc == SQLITE_LOCKED ? KNUT_EAGAIN : KNUT_EIO,
                          "%s: %s: %s", path, what, sqlite3_errmsg(db));
}

static knut_status sql_base(knut_iceberg__base *b, const knut_iceberg_ref *ref,
                            knut_error *err)
{
    sql_id id;
    sqlite3 *db = NULL;
    knut_status st = sql_open(ref, &id, &db, err);
    if (st != KNUT_OK)
        goto cleanup;
    if ((st = knut_iceberg__sql_location(db, ref->path, id.catalog, ref->identifier,
                                         &b->pointer, err)) != KNUT_OK ||
        !b->pointer)
        goto cleanup; /* an error, or no such table yet: exists stays 0 */
    b->exists = 1;
    if ((st = knut_iceberg_path_local(b->pointer, NULL, &b->meta_path, err)) == KNUT_OK)
        b->number = file_number(b->meta_path, "", "-");
cleanup:
    sqlite3_close(db);
    return st;
}

/* One statement with the identifier bound from ?first; SQLITE_DONE or the
 * error code. */
static int sql_run(sqlite3 *db, const char *sql, const sql_id *id, int first, const char *a,
                   const char *b2)
{
    sqlite3_stmt *q = NULL;
    int rc = sqlite3_prepare_v2(db, sql, -1, &q, NULL);
    if (rc != SQLITE_OK)
        return rc;
    if (a)
        sqlite3_bind_text(q, 1, a, -1, SQLITE_STATIC);
    if (b2)
        sqlite3_bind_text(q, 2, b2, -1, SQLITE_STATIC);
    bind_id(q, first, id);
    rc = sqlite3_step(q);
    sqlite3_finalize(q);
    return rc;
}

/* The compare-and-swap (or, for a new table, the INSERT that fails if a
 * concurrent writer created it first) of the catalog row. */
static knut_status sql_swap(const knut_iceberg_ref *ref, const knut_iceberg__base *b,
                            const char *new_uri, knut_error *err)
{
    sql_id id;
    sqlite3 *db = NULL;
    knut_status st = sql_open(ref, &id, &db, err);
    if (st != KNUT_OK)
        return st;
    if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
        st = sql_fail(db, ref->path, "BEGIN IMMEDIATE", err);
        goto cleanup;
    }
    int rc;
    if (b->exists) {
        rc = sql_run(db,
                     "UPDATE iceberg_tables SET metadata_location = ?1, "
                     "previous_metadata_location = ?2 WHERE catalog_name = ?3 AND "
                     "table_namespace = ?4 AND table_name = ?5 AND metadata_location = ?2",
                     &id, 3, new_uri, b->pointer);
        if (rc == SQLITE_DONE && sqlite3_changes(db) != 1)
            st = knut_error_set(err, KNUT_EAGAIN, "%s: table '%s' changed since it was read",
                                ref->path, ref->identifier);
    } else {
        /* pyiceberg checks a namespace exists before it loads a table from
         * it; record it as its create_namespace does (a no-op if it is). */
        (void)sql_run(db,
                      "INSERT OR IGNORE INTO iceberg_namespace_properties (catalog_name, "
                      "namespace, property_key, property_value) VALUES (?1, ?2, 'exists', "
                      "'true')",
                      &id, 1, NULL, NULL);
        rc = sql_run(db,
                     "INSERT INTO iceberg_tables (metadata_location, catalog_name, "
                     "table_namespace, table_name) VALUES (?1, ?3, ?4, ?5)",
                     &id, 3, new_uri, NULL);
        if ((rc & 0xff) == SQLITE_CONSTRAINT)
            st = knut_error_set(err, KNUT_EAGAIN, "%s: table '%s' was created concurrently",
                                ref->path, ref->identifier);
    }
    if (st == KNUT_OK && rc != SQLITE_DONE)
        st = sql_fail(db, ref->path, "updating iceberg_tables", err);
    if (st == KNUT_OK && sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        st = sql_fail(db, ref->path, "COMMIT", err);
    if (st != KNUT_OK)
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
cleanup:
    sqlite3_close(db);
    return st;
}

/* ---- filesystem tables ------------------------------------------------ */

/* 1 when dir holds a *.metadata.json file. */
static int has_metadata_file(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int found = 0;
    struct dirent *de;
    while (!found && (de = readdir(d))) {
        size_t n = strlen(de->d_name);
        found = n > 14 && strcmp(de->d_name + n - 14, ".metadata.json") == 0;
    }
    closedir(d);
    return found;
}

static knut_status path_base(knut_iceberg__base *b, const knut_iceberg_ref *ref,
                             knut_error *err)
{
    char *dir = NULL, *mdir = NULL;
    knut_status st = knut_iceberg_path_local(ref->path, NULL, &dir, err);
    if (st != KNUT_OK)
        return st;
    struct stat sb;
    size_t dl = strlen(dir);
    int meta_name = (dl > 14 && strcmp(dir + dl - 14, ".metadata.json") == 0) ||
                    (dl > 17 && strcmp(dir + dl - 17, ".metadata.json.gz") == 0);
    if (meta_name || (stat(dir, &sb) == 0 && !S_ISDIR(sb.st_mode))) {
        st = knut_error_set(err, KNUT_EINVAL,
                            "%s: not a table folder (to append, name the folder, not one "
                            "metadata file)",
                            dir);
        goto cleanup;
    }
    if (!(mdir = knut_iceberg__join(dir, "metadata"))) {
        st = oom(err);
        goto cleanup;
    }
    if (stat(mdir, &sb) != 0) {
        /* A new table, unless this is a table's metadata/ folder itself
         * (which reading accepts): a table created inside it would hide. */
        if (has_metadata_file(dir))
            st = knut_error_set(err, KNUT_EINVAL,
                                "%s: holds metadata files: name the table folder above it",
                                dir);
        goto cleanup;
    }
    st = knut_iceberg_catalog_locate(ref, &b->meta_path, err);
    if (st == KNUT_ENOTFOUND) {
        /* metadata/ without metadata files: a table nobody committed. */
        knut_error_clear(err);
        st = KNUT_OK;
        goto cleanup;
    }
    if (st != KNUT_OK)
        goto cleanup;
    b->exists = 1;
    b->number = file_number(b->meta_path, "v", ".metadata.json");
    if (b->number < 0)
        st = knut_error_set(err, KNUT_EUNSUPPORTED,
                            "%s: the table's current metadata is not a v<N>.metadata.json of the "
                            "filesystem catalog (a catalog such as pyiceberg's names it): "
                            "append through that catalog (-c FILE NAMESPACE.NAME)",
                            b->meta_path);
    else if (!(b->pointer = strdup(b->meta_path)))
        st = oom(err);
cleanup:
    free(dir);
    free(mdir);
    return st;
}

knut_status knut_iceberg__base_load(knut_iceberg__base *b, const knut_iceberg_ref *ref,
                                    knut_error *err)
{
    memset(b, 0, sizeof *b);
    b->number = -1;
    knut_status st = ref->kind == KNUT_ICEBERG_CATALOG_SQLITE ? sql_base(b, ref, err)
                                                              : path_base(b, ref, err);
    if (st == KNUT_OK && b->exists)
        st = load_file(b, err);
    if (st != KNUT_OK)
        knut_iceberg__base_clear(b);
    return st;
}

/* Writes data to path, failing if it exists (O_EXCL), fsync'd. */
static knut_status write_new(const char *path, const char *data, size_t len, knut_error *err)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0)
        return knut_error_set(err, errno == EEXIST ? KNUT_EAGAIN : KNUT_EIO,
                              "%s: cannot create: %s", path, strerror(errno));
    size_t done = 0;
    while (done < len) {
        ssize_t w = write(fd, data + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        done += (size_t)w;
    }
    int ok = done == len && fsync(fd) == 0;
    if (close(fd) != 0)
        ok = 0;
    if (!ok) {
        (void)unlink(path);
        return knut_error_set(err, KNUT_EIO, "%s: cannot write: %s", path, strerror(errno));
    }
    return KNUT_OK;
}

knut_status knut_iceberg__commit(const knut_iceberg_ref *ref, const knut_iceberg__base *b,
                                 const char *mdir, const char *uri_base, const char *json,
                                 size_t len, char **written, knut_error *err)
{
    char uuid[37], name[96];
    knut_uuid_v4(uuid);
    int sql = ref->kind == KNUT_ICEBERG_CATALOG_SQLITE;
    long long next = b->exists ? b->number + 1 : (sql ? 0 : 1);
    if (sql)
        snprintf(name, sizeof name, "%05lld-%s.metadata.json", next < 0 ? 0 : next, uuid);
    else
        snprintf(name, sizeof name, ".%s.metadata.json.tmp", uuid);
    char *path = knut_iceberg__join(mdir, name), *uri = knut_iceberg__join(uri_base, name);
    char *final = NULL;
    knut_status st = path && uri ? write_new(path, json, len, err) : oom(err);
    if (st != KNUT_OK)
        goto cleanup;
    if (sql) {
        if ((st = sql_swap(ref, b, uri, err)) != KNUT_OK) {
            (void)unlink(path);
            goto cleanup;
        }
        *written = path;
        path = NULL;
        goto cleanup;
    }
    char vname[64];
    snprintf(vname, sizeof vname, "v%lld.metadata.json", next);
    if (!(final = knut_iceberg__join(mdir, vname))) {
        st = oom(err);
        (void)unlink(path);
        goto cleanup;
    }
    /* link() is the compare-and-swap: it never replaces an existing file. */
    int rc = link(path, final);
    int e = errno;
    (void)unlink(path);
    if (rc != 0) {
        st = knut_error_set(err, e == EEXIST ? KNUT_EAGAIN : KNUT_EIO, "%s: %s", final,
                            e == EEXIST ? "another writer committed this version first"
                                        : strerror(e));
        goto cleanup;
    }
    /* Committed. The hint only saves readers a probe; a failure to write
     * it is not a failed commit (readers look past a stale hint). */
    char *hint = knut_iceberg__join(mdir, "version-hint.text");
    char num[32];
    int nl = snprintf(num, sizeof num, "%lld", next);
    /* The temp name is this commit's own: two writers never share one. */
    snprintf(name, sizeof name, ".%s.version-hint.tmp", uuid);
    char *tmp = knut_iceberg__join(mdir, name);
    if (hint && tmp && write_new(tmp, num, (size_t)nl, NULL) == KNUT_OK && rename(tmp, hint) != 0)
        (void)unlink(tmp);
    free(tmp);
    free(hint);
    *written = final;
    final = NULL;
cleanup:
    free(path);
    free(uri);
    free(final);
    return st;
}
