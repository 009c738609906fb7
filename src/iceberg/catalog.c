/*
 * Catalogs without a server: finding a table's current metadata file in a
 * table folder (the filesystem/Hadoop layout, and pyiceberg's numbered
 * names) or in a SQLite SQL catalog (pyiceberg's SqlCatalog, Java's
 * JdbcCatalog: the iceberg_tables table), and turning the locations
 * metadata holds (file: URIs, bare paths, relative paths) into local paths.
 */
#include "iceberg_int.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

static knut_status oom(knut_error *err)
{
    return knut_error_set(err, KNUT_ENOMEM, "iceberg: out of memory");
}

/* ---- locations ---------------------------------------------------------- */

static int hexval(int ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    ch = tolower(ch);
    return ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
}

/* The length of uri's scheme (RFC 3986: a letter, then letters, digits,
 * "+-."; then ':'), or 0 when it has none. */
static size_t scheme_len(const char *uri)
{
    if (!isalpha((unsigned char)uri[0]))
        return 0;
    size_t i = 1;
    while (isalnum((unsigned char)uri[i]) || uri[i] == '+' || uri[i] == '-' || uri[i] == '.')
        i++;
    return uri[i] == ':' ? i : 0;
}

/* A file: URI's path, percent-decoded, into *out. */
static knut_status file_uri_path(const char *uri, char **out, knut_error *err)
{
    const char *p = uri + 5; /* past "file:" */
    if (p[0] == '/' && p[1] == '/') {
        /* file://host/path: only an empty host or localhost is this machine. */
        const char *host = p + 2, *slash = strchr(host, '/');
        size_t hl = slash ? (size_t)(slash - host) : strlen(host);
        if (hl != 0 && !(hl == 9 && strncasecmp(host, "localhost", 9) == 0))
            return knut_error_set(err, KNUT_EUNSUPPORTED,
                                  "%s: a file URI on another host is not a local file", uri);
        p = slash ? slash : host + hl; /* "file://" alone: no path, refused below */
    }
    if (*p != '/')
        return knut_error_set(err, KNUT_EINVAL, "%s: a file URI needs an absolute path", uri);
    char *s = malloc(strlen(p) + 1), *w = s;
    if (!s)
        return oom(err);
    for (; *p; p++) {
        int hi, lo;
        /* A '%' without two hex digits is kept: some writers put raw paths
         * with a literal '%' in a file: URI. */
        if (*p == '%' && (hi = hexval((unsigned char)p[1])) >= 0 &&
            (lo = hexval((unsigned char)p[2])) >= 0) {
            if (hi == 0 && lo == 0) {
                free(s);
                return knut_error_set(err, KNUT_EINVAL, "%s: %%00 in a file URI", uri);
            }
            *w++ = (char)(hi * 16 + lo);
            p += 2;
        } else {
            *w++ = *p;
        }
    }
    *w = '\0';
    *out = s;
    return KNUT_OK;
}

knut_status knut_iceberg_path_local(const char *uri, const char *base, char **out,
                                    knut_error *err)
{
    KNUT_ASSERT_ARG(err, uri != NULL && out != NULL);
    *out = NULL;
    if (!*uri)
        return knut_error_set(err, KNUT_EINVAL, "iceberg: an empty location");
    size_t sl = scheme_len(uri);
    if (sl == 4 && strncasecmp(uri, "file", 4) == 0)
        return file_uri_path(uri, out, err);
    if (sl)
        return knut_error_set(err, KNUT_EUNSUPPORTED,
                              "%s: scheme '%.*s' is not supported (only local files: file: URIs "
                              "and paths)",
                              uri, (int)sl, uri);
    if (uri[0] == '/' || !base || !*base)
        return (*out = strdup(uri)) ? KNUT_OK : oom(err);
    /* Relative: under the table location, itself possibly a file: URI. */
    char *b = NULL;
    knut_status st = knut_iceberg_path_local(base, NULL, &b, err);
    if (st != KNUT_OK) {
        knut_error_prefix(err, "%s: relative to the table location: ", uri);
        return st;
    }
    size_t bl = strlen(b);
    while (bl > 1 && b[bl - 1] == '/')
        bl--;
    while (uri[0] == '.' && uri[1] == '/')
        uri += 2;
    size_t n = bl + 1 + strlen(uri) + 1;
    if ((*out = malloc(n)))
        snprintf(*out, n, "%.*s/%s", (int)bl, b, uri);
    free(b);
    return *out ? KNUT_OK : oom(err);
}

/* ---- table folders ------------------------------------------------------ */

static int is_dir(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static int is_file(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISREG(sb.st_mode);
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int is_metadata_name(const char *s)
{
    return ends_with(s, ".metadata.json") || ends_with(s, ".metadata.json.gz");
}

char *knut_iceberg__join(const char *dir, const char *name)
{
    size_t dl = strlen(dir), n = dl + 1 + strlen(name) + 1;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%s%s%s", dir, dl && dir[dl - 1] == '/' ? "" : "/", name);
    return s;
}

/* Leading decimal digits of s as a number (at most 18 of them, so no
 * overflow), and where they end; -1 when s does not start with one. */
static long long leading_number(const char *s, const char **end)
{
    size_t i = 0;
    long long v = 0;
    while (isdigit((unsigned char)s[i]) && i < 18)
        v = v * 10 + (s[i++] - '0');
    *end = s + i;
    return i == 0 || isdigit((unsigned char)s[i]) ? -1 : v;
}

/* metadata/v<n>.metadata.json, or its gzip forms, if one exists. */
static char *version_file(const char *mdir, long long n)
{
    static const char *const forms[] = {".metadata.json", ".gz.metadata.json",
                                        ".metadata.json.gz"};
    for (size_t i = 0; i < 3; i++) {
        char name[64];
        snprintf(name, sizeof name, "v%lld%s", n, forms[i]);
        char *p = knut_iceberg__join(mdir, name);
        if (!p || is_file(p))
            return p;
        free(p);
    }
    return NULL;
}

/* The file version-hint.text points at: a number N (v<N>, then the files
 * after it, as Java probes: the hint is rewritten after the commit and may
 * lag), or a file name as some writers put there. NULL if none exists. */
static char *from_hint(const char *mdir)
{
    char *hint = knut_iceberg__join(mdir, "version-hint.text"), *found = NULL;
    knut_buf text = KNUT_BUF_INIT;
    if (!hint || knut_file_read(hint, 4096, &text, NULL) != KNUT_OK)
        goto cleanup;
    char *s = text.data, *e = text.data + text.len;
    while (s < e && isspace((unsigned char)*s))
        s++;
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    const char *end;
    long long n = leading_number(s, &end);
    if (n >= 0 && *end == '\0') {
        found = version_file(mdir, n);
        for (char *next; found && (next = version_file(mdir, n + 1)); n++) {
            free(found);
            found = next;
        }
    } else if (*s && !strchr(s, '/') && strcmp(s, ".") && strcmp(s, "..")) {
        found = knut_iceberg__join(mdir, s);
        if (found && !is_file(found)) {
            free(found);
            found = NULL;
        }
    }
cleanup:
    knut_buf_reset(&text);
    free(hint);
    return found;
}

/* The highest v<N>.metadata.json in mdir, else the highest NNNNN-*.metadata
 * .json (pyiceberg and Java metastore tables). Two numbered files with the
 * same number (a lost commit race) go to the larger name: only a catalog
 * knows the winner, this is just deterministic. */
static knut_status scan_dir(const char *mdir, char **out, knut_error *err)
{
    DIR *d = opendir(mdir);
    if (!d)
        return knut_error_set(err, KNUT_ENOTFOUND, "%s: cannot list: %s", mdir, strerror(errno));
    long long best_v = -1, best_n = -1;
    char *name_v = NULL, *name_n = NULL;
    knut_status st = KNUT_OK;
    struct dirent *de;
    while ((de = readdir(d)) && st == KNUT_OK) {
        const char *nm = de->d_name, *end;
        if (!is_metadata_name(nm))
            continue;
        long long v = nm[0] == 'v' ? leading_number(nm + 1, &end) : -1;
        if (v >= 0 && *end == '.') {
            if (v > best_v) {
                free(name_v);
                best_v = v;
                if (!(name_v = strdup(nm)))
                    st = oom(err);
            }
            continue;
        }
        long long n = leading_number(nm, &end);
        if (n >= 0 && *end == '-' &&
            (n > best_n || (n == best_n && name_n && strcmp(nm, name_n) > 0))) {
            free(name_n);
            best_n = n;
            if (!(name_n = strdup(nm)))
                st = oom(err);
        }
    }
    closedir(d);
    if (st == KNUT_OK && !name_v && !name_n)
        st = knut_error_set(err, KNUT_ENOTFOUND,
                            "%s: no version-hint.text, v<N>.metadata.json or "
                            "NNNNN-<uuid>.metadata.json",
                            mdir);
    if (st == KNUT_OK && !(*out = knut_iceberg__join(mdir, name_v ? name_v : name_n)))
        st = oom(err);
    free(name_v);
    free(name_n);
    return st;
}

static knut_status locate_path(const char *where, char **out, knut_error *err)
{
    char *p = NULL, *mdir = NULL;
    knut_status st = knut_iceberg_path_local(where, NULL, &p, err);
    if (st != KNUT_OK)
        return st;
    struct stat sb;
    if (stat(p, &sb) != 0) {
        st = knut_error_set(err, KNUT_ENOTFOUND, "%s: no such table folder or metadata file", p);
        goto cleanup;
    }
    if (!S_ISDIR(sb.st_mode)) {
        if (is_metadata_name(p)) {
            *out = p;
            p = NULL;
        } else {
            st = knut_error_set(err, KNUT_EINVAL,
                                "%s: not a table folder or a *.metadata.json file", p);
        }
        goto cleanup;
    }
    /* The table folder; a path to its metadata/ folder is taken too. */
    if (!(mdir = knut_iceberg__join(p, "metadata"))) {
        st = oom(err);
        goto cleanup;
    }
    if (!is_dir(mdir)) {
        if (!ends_with(p, "/metadata") && !ends_with(p, "/metadata/") &&
            strcmp(p, "metadata") != 0) {
            st = knut_error_set(err, KNUT_ENOTFOUND, "%s: no metadata folder in the table folder",
                                p);
            goto cleanup;
        }
        free(mdir);
        mdir = p;
        p = NULL;
    }
    if (!(*out = from_hint(mdir)))
        st = scan_dir(mdir, out, err);
cleanup:
    free(mdir);
    free(p);
    return st;
}

/* ---- SQLite catalogs ---------------------------------------------------- */

knut_status knut_iceberg__sql_location(struct sqlite3 *db, const char *path,
                                       const char *catalog, const char *id, char **out,
                                       knut_error *err)
{
    *out = NULL;
    const char *dot = strrchr(id, '.');
    sqlite3_stmt *q = NULL;
    knut_status st = KNUT_OK;
    static const char sql[] = "SELECT metadata_location FROM iceberg_tables WHERE catalog_name = "
                              "?1 AND table_namespace = ?2 AND table_name = ?3";
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK)
        return knut_error_set(err, KNUT_EINVAL, "%s: not an Iceberg SQL catalog: %s", path,
                              sqlite3_errmsg(db));
    sqlite3_bind_text(q, 1, catalog, -1, SQLITE_STATIC);
    sqlite3_bind_text(q, 2, id, (int)(dot - id), SQLITE_STATIC);
    sqlite3_bind_text(q, 3, dot + 1, -1, SQLITE_STATIC);
    int rc = sqlite3_step(q);
    if (rc == SQLITE_DONE)
        ; /* no such table: *out stays NULL */
    else if (rc != SQLITE_ROW)
        st = knut_error_set(err, rc == SQLITE_BUSY ? KNUT_EAGAIN : KNUT_EIO,
                            "%s: reading iceberg_tables: %s", path, sqlite3_errmsg(db));
    else if (sqlite3_column_type(q, 0) != SQLITE_TEXT)
        st = knut_error_set(err, KNUT_ENOTFOUND,
                            "%s: catalog '%s', table '%s': no metadata_location", path, catalog,
                            id);
    else if (!(*out = strdup((const char *)sqlite3_column_text(q, 0))))
        st = oom(err);
    sqlite3_finalize(q);
    return st;
}

static knut_status locate_sqlite(const knut_iceberg_ref *ref, char **out, knut_error *err)
{
    const char *catalog = ref->catalog ? ref->catalog : "default";
    const char *id = ref->identifier, *dot = id ? strrchr(id, '.') : NULL;
    /* The last dot splits: namespaces are stored dot-joined ("a.b"). */
    if (!dot || dot == id || !dot[1])
        return knut_error_set(err, KNUT_EINVAL, "identifier '%s': expected namespace.table",
                              id ? id : "");
    if (!is_file(ref->path))
        return knut_error_set(err, KNUT_ENOTFOUND, "%s: no such SQLite catalog file", ref->path);
    sqlite3 *db = NULL;
    char *loc = NULL;
    knut_status st = KNUT_OK;
    /* Read-only, and no URI names: the file is the one given, nothing else. */
    if (sqlite3_open_v2(ref->path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        st = knut_error_set(err, KNUT_EIO, "%s: cannot open the SQLite catalog: %s", ref->path,
                            db ? sqlite3_errmsg(db) : "out of memory");
        goto cleanup;
    }
    /* A writer's commit holds the lock briefly; wait rather than fail. */
    sqlite3_busy_timeout(db, 5000);
    if ((st = knut_iceberg__sql_location(db, ref->path, catalog, id, &loc, err)) != KNUT_OK)
        goto cleanup;
    if (!loc) {
        st = knut_error_set(err, KNUT_ENOTFOUND, "%s: catalog '%s' has no table '%s'", ref->path,
                            catalog, id);
    } else if ((st = knut_iceberg_path_local(loc, NULL, out, err)) != KNUT_OK) {
        knut_error_prefix(err, "%s: catalog '%s', table '%s': ", ref->path, catalog, id);
    }
cleanup:
    free(loc);
    sqlite3_close(db);
    return st;
}

knut_status knut_iceberg_catalog_locate(const knut_iceberg_ref *ref, char **out, knut_error *err)
{
    KNUT_ASSERT_ARG(err, ref != NULL && ref->path != NULL && out != NULL);
    *out = NULL;
    switch (ref->kind) {
    case KNUT_ICEBERG_CATALOG_PATH: return locate_path(ref->path, out, err);
    case KNUT_ICEBERG_CATALOG_SQLITE: return locate_sqlite(ref, out, err);
    }
    return knut_error_set(err, KNUT_EINVAL, "iceberg: unknown catalog kind %d", (int)ref->kind);
}
