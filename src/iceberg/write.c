/*
 * The append writer: the rows of a DuckDB query become one Parquet data
 * file (DuckDB's COPY, with the Iceberg field id of every column), one
 * manifest listing it, and a new snapshot committed atomically through
 * the catalog (commit.c), on an existing v2 table or on a table created
 * for them.
 *
 * Retries: when another writer commits first, the base is reloaded and
 * only the manifest list and the metadata file are written again on top
 * of it; the data file and the manifest are reused (their entries inherit
 * the snapshot id and sequence numbers from the manifest list row).
 * Files of a failed append are removed; a process killed mid-append
 * leaves unreferenced files (orphans) but never a half commit.
 */
#include "write_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEFAULT_ATTEMPTS 10

static knut_status oom(knut_error *err)
{
    return knut_error_set(err, KNUT_ENOMEM, "iceberg: out of memory");
}

void knut_iceberg_append_result_reset(knut_iceberg_append_result *r)
{
    if (!r)
        return;
    free(r->metadata_path);
    memset(r, 0, sizeof *r);
    r->snapshot_id = -1;
}

static void cols_free(knut_iceberg__col *c, size_t n)
{
    for (size_t i = 0; c && i < n; i++)
        free(c[i].name);
    free(c);
}

/* ---- columns -------------------------------------------------------------- */

/* The Iceberg type for a new table's column of Arrow format fmt (as
 * DuckDB reports its result), or NULL with *why: a type Iceberg v2 has no
 * lossless match for. */
static int type_from_arrow(knut_iceberg__col *c, const char *fmt, const char **why)
{
    static const char *const map[][3] = {
        {"b", "boolean", "BOOLEAN"}, {"c", "int", "INTEGER"},   {"C", "int", "INTEGER"},
        {"s", "int", "INTEGER"},     {"S", "int", "INTEGER"},   {"i", "int", "INTEGER"},
        {"I", "long", "BIGINT"},     {"l", "long", "BIGINT"},   {"f", "float", "FLOAT"},
        {"g", "double", "DOUBLE"},   {"u", "string", "VARCHAR"}, {"U", "string", "VARCHAR"},
        {"vu", "string", "VARCHAR"}, {"z", "binary", "BLOB"},   {"Z", "binary", "BLOB"},
        {"vz", "binary", "BLOB"},    {"tdD", "date", "DATE"},   {"ttu", "time", "TIME"},
        {"tsu:", "timestamp", "TIMESTAMP"},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(fmt, map[i][0]) == 0) {
            c->type = map[i][1];
            c->duck = map[i][2];
            return 0;
        }
    if (strncmp(fmt, "tsu:", 4) == 0) { /* with a time zone: an instant */
        c->type = "timestamptz";
        c->duck = "TIMESTAMPTZ";
        return 0;
    }
    unsigned p, s;
    char end;
    if (sscanf(fmt, "d:%u,%u%c", &p, &s, &end) >= 2 && p >= 1 && p <= 38 && s <= p) {
        snprintf(c->decimal, sizeof c->decimal, "decimal(%u, %u)", p, s);
        snprintf(c->duck_decimal, sizeof c->duck_decimal, "DECIMAL(%u,%u)", p, s);
        c->type = c->decimal;
        c->duck = c->duck_decimal;
        return 0;
    }
    if (strcmp(fmt, "L") == 0)
        *why = "an unsigned 64-bit integer (UBIGINT): Iceberg has none; CAST it to BIGINT or "
               "DECIMAL(20,0)";
    else if (fmt[0] == '+')
        *why = "a nested type (list, struct, map): knut writes primitive columns only";
    else if (strncmp(fmt, "ts", 2) == 0 || strncmp(fmt, "tt", 2) == 0)
        *why = "a time or timestamp not in microseconds: Iceberg v2 has microseconds only; CAST "
               "it to TIMESTAMP or TIME";
    else if (strncmp(fmt, "ti", 2) == 0)
        *why = "an INTERVAL: Iceberg has no interval type";
    else
        *why = "a type Iceberg has no match for; CAST it in the query";
    return -1;
}

/* Copies the query's column names into *out; duplicates refused. */
static knut_status cols_alloc(const struct ArrowSchema *rs, knut_iceberg__col **out,
                              knut_error *err)
{
    size_t n = (size_t)rs->n_children;
    if (n == 0)
        return knut_error_set(err, KNUT_EINVAL, "the query returns no columns");
    knut_iceberg__col *c = calloc(n, sizeof *c);
    if (!c)
        return oom(err);
    for (size_t i = 0; i < n; i++) {
        const char *name = rs->children[i]->name ? rs->children[i]->name : "";
        for (size_t k = 0; k < i; k++)
            if (strcmp(c[k].name, name) == 0) {
                cols_free(c, i);
                return knut_error_set(err, KNUT_EINVAL,
                                      "the query returns column '%s' twice: name each once",
                                      name);
            }
        if (!(c[i].name = strdup(name))) {
            cols_free(c, i);
            return oom(err);
        }
    }
    *out = c;
    return KNUT_OK;
}

/* A new table: ids 1..n in query order, types from the result's. */
static knut_status cols_new(const struct ArrowSchema *rs, knut_iceberg__col **out,
                            knut_error *err)
{
    knut_status st = cols_alloc(rs, out, err);
    for (size_t i = 0; st == KNUT_OK && i < (size_t)rs->n_children; i++) {
        const char *why = NULL;
        (*out)[i].id = (int32_t)i + 1;
        if (type_from_arrow(&(*out)[i], rs->children[i]->format, &why) != 0)
            st = knut_error_set(err, KNUT_EUNSUPPORTED, "column '%s' is %s", (*out)[i].name, why);
    }
    if (st != KNUT_OK && *out) {
        cols_free(*out, (size_t)rs->n_children);
        *out = NULL;
    }
    return st;
}

/* What an append needs of the table: format v2 (a v1 table's manifests
 * have no sequence numbers to inherit: refused, not upgraded behind the
 * user's back), an unpartitioned default spec (knut does not compute
 * partition values yet), and every query column a top-level primitive
 * column of the current schema, not required (DuckDB writes optional
 * Parquet columns). */
static knut_status table_check(const knut_iceberg_table *t, knut_error *err)
{
    if (t->format_version != 2)
        return knut_error_set(err, KNUT_EUNSUPPORTED,
                              "%s: format version %d: knut appends to v2 tables only (upgrade "
                              "it first, e.g. pyiceberg's upgrade_table_version)",
                              t->metadata_path, t->format_version);
    const knut_iceberg_spec *spec = knut_iceberg_table_spec(t, t->default_spec_id);
    if (!spec || spec->n_fields)
        return knut_error_set(err, KNUT_EUNSUPPORTED,
                              "%s: the table is partitioned: knut appends to unpartitioned "
                              "tables only",
                              t->metadata_path);
    if (!knut_iceberg_table_schema(t, t->current_schema_id))
        return knut_error_set(err, KNUT_EPARSE, "%s: no current schema", t->metadata_path);
    return KNUT_OK;
}

/* Maps every query column (cols: names only, or the columns of an earlier
 * attempt) to the table's current schema by name, setting id and type; an
 * earlier attempt's ids and types must still hold (the data file has them). */
static knut_status cols_match(const knut_iceberg_table *t, knut_iceberg__col *cols, size_t n,
                              int recheck, knut_error *err)
{
    knut_status st = table_check(t, err);
    if (st != KNUT_OK)
        return st;
    const knut_iceberg_schema *s = knut_iceberg_table_schema(t, t->current_schema_id);
    for (size_t i = 0; i < s->n_fields; i++) {
        const knut_iceberg_field *f = &s->fields[i];
        size_t k = 0;
        while (k < n && strcmp(cols[k].name, f->name) != 0)
            k++;
        if (f->required && k == n)
            return knut_error_set(err, KNUT_EINVAL,
                                  "%s: required column '%s' is not in the query",
                                  t->metadata_path, f->name);
    }
    for (size_t k = 0; k < n; k++) {
        const knut_iceberg_field *f = NULL;
        for (size_t i = 0; i < s->n_fields && !f; i++)
            if (strcmp(s->fields[i].name, cols[k].name) == 0)
                f = &s->fields[i];
        if (!f)
            return knut_error_set(err, KNUT_EINVAL,
                                  "%s: the table has no column '%s' (columns are matched by "
                                  "name)",
                                  t->metadata_path, cols[k].name);
        if (recheck) {
            if (f->id != cols[k].id || strcmp(f->type, cols[k].type) != 0)
                return knut_error_set(err, KNUT_EINVAL,
                                      "%s: column '%s' changed while appending (a concurrent "
                                      "schema change): run the export again",
                                      t->metadata_path, cols[k].name);
            continue;
        }
        char tmp[32];
        const char *duck = f->children ? NULL : knut_iceberg__duck_type(f->type, tmp, sizeof tmp);
        if (!duck || strncmp(f->type, "fixed", 5) == 0)
            return knut_error_set(err, KNUT_EUNSUPPORTED,
                                  "%s: column '%s' is of type %s, which knut does not write",
                                  t->metadata_path, f->name, f->type);
        if (f->required)
            return knut_error_set(err, KNUT_EUNSUPPORTED,
                                  "%s: column '%s' is required; knut writes optional columns "
                                  "only",
                                  t->metadata_path, f->name);
        cols[k].id = f->id;
        snprintf(cols[k].decimal, sizeof cols[k].decimal, "%s", f->type);
        snprintf(cols[k].duck_decimal, sizeof cols[k].duck_decimal, "%s", duck);
        cols[k].type = cols[k].decimal;
        cols[k].duck = cols[k].duck_decimal;
    }
    return KNUT_OK;
}

/* ---- the data file -------------------------------------------------------- */

static knut_status mkdirs(const char *path, knut_error *err)
{
    char *p = strdup(path);
    if (!p)
        return oom(err);
    knut_status st = KNUT_OK;
    for (char *s = p + 1;; s++) {
        if (*s != '/' && *s)
            continue;
        char c = *s;
        *s = '\0';
        if (mkdir(p, 0755) != 0 && errno != EEXIST) {
            st = knut_error_set(err, KNUT_EIO, "%s: cannot create the folder: %s", p,
                                strerror(errno));
            break;
        }
        if (!(*s = c))
            break;
    }
    free(p);
    return st;
}

/* COPY (SELECT CAST(q."c" AS T) AS "c", ... FROM (query) q) TO 'path'
 * (FORMAT parquet, FIELD_IDS {'c': id, ...}): the Parquet schema carries
 * the Iceberg ids and types, never DuckDB's auto ids (which start at 0). */
static knut_status copy_rows(knut_duck_conn *conn, const char *query,
                             const knut_iceberg__col *cols, size_t n, const char *path,
                             const char *compression, int64_t *rows, knut_error *err)
{
    knut_buf b = KNUT_BUF_INIT;
    knut_buf_puts(&b, "COPY (SELECT ");
    for (size_t i = 0; i < n; i++) {
        knut_buf_puts(&b, i ? ", CAST(q." : "CAST(q.");
        knut_duck_ident(&b, cols[i].name);
        knut_buf_printf(&b, " AS %s) AS ", cols[i].duck);
        knut_duck_ident(&b, cols[i].name);
    }
    knut_buf_printf(&b, " FROM (%s) AS q) TO ", query);
    knut_duck_literal(&b, path, strlen(path));
    knut_buf_puts(&b, " (FORMAT parquet, COMPRESSION ");
    knut_duck_literal(&b, compression, strlen(compression));
    /* zstd at level 1, as pyarrow (so pyiceberg) writes it: DuckDB's
     * default level 3 costs time for a few percent of size. */
    if (strcmp(compression, "zstd") == 0)
        knut_buf_puts(&b, ", COMPRESSION_LEVEL 1");
    knut_buf_puts(&b, ", FIELD_IDS {");
    for (size_t i = 0; i < n; i++) {
        if (i)
            knut_buf_puts(&b, ", ");
        knut_duck_literal(&b, cols[i].name, strlen(cols[i].name));
        knut_buf_printf(&b, ": %" PRId32, cols[i].id);
    }
    knut_buf_puts(&b, "})");
    knut_duck_stmt *stmt = NULL;
    uint64_t changes = 0;
    knut_status st = knut_buf_check(&b, err);
    if (st == KNUT_OK && (st = knut_duck_stmt_prepare(&stmt, conn, b.data, err)) == KNUT_OK)
        st = knut_duck_stmt_exec(stmt, &changes, err);
    *rows = (int64_t)changes;
    knut_duck_stmt_free(stmt);
    knut_buf_reset(&b);
    return st;
}

/* 1 when row r of the int64 child c of a batch is not null; *v its value. */
static int int64_at(const struct ArrowArray *c, int64_t r, int64_t *v)
{
    int64_t i = c->offset + r;
    const uint8_t *valid = c->buffers[0];
    if (c->null_count != 0 && valid && !(valid[i / 8] >> (i % 8) & 1))
        return 0;
    *v = ((const int64_t *)c->buffers[1])[i];
    return 1;
}

/* The data file's column metrics from its Parquet footer (DuckDB's
 * parquet_metadata): counts with nulls, null counts (where the writer
 * kept them) and compressed bytes per column, summed over row groups. The
 * columns are top-level primitives, so leaf column i is cols[i]. */
static knut_status file_metrics(knut_duck_conn *conn, const char *path,
                                const knut_iceberg__col *cols, size_t n,
                                knut_iceberg__metrics *out, knut_error *err)
{
    if (!(out->cols = calloc(n, sizeof *out->cols)))
        return oom(err);
    out->n = n;
    for (size_t i = 0; i < n; i++) {
        out->cols[i].id = cols[i].id;
        out->cols[i].values = out->cols[i].nulls = out->cols[i].bytes = -1;
    }
    knut_buf b = KNUT_BUF_INIT;
    knut_buf_puts(&b, "SELECT column_id::BIGINT, sum(num_values)::BIGINT, "
                      "sum(stats_null_count)::BIGINT, sum(total_compressed_size)::BIGINT "
                      "FROM parquet_metadata(");
    knut_duck_literal(&b, path, strlen(path));
    knut_buf_puts(&b, ") GROUP BY column_id");
    struct ArrowArrayStream rows = {0};
    knut_status st = knut_buf_check(&b, err);
    if (st == KNUT_OK)
        st = knut_duck_query(conn, b.data, &rows, err);
    while (st == KNUT_OK) {
        struct ArrowArray batch = {0};
        if (rows.get_next(&rows, &batch) != 0) {
            st = knut_error_set(err, KNUT_EIO, "%s: reading its metrics: %s", path,
                                rows.get_last_error(&rows));
            break;
        }
        if (!batch.release)
            break;
        for (int64_t r = 0; batch.n_children == 4 && r < batch.length; r++) {
            int64_t k, v;
            if (!int64_at(batch.children[0], r, &k) || k < 0 || (uint64_t)k >= n)
                continue;
            if (int64_at(batch.children[1], r, &v))
                out->cols[k].values = v;
            if (int64_at(batch.children[2], r, &v))
                out->cols[k].nulls = v;
            if (int64_at(batch.children[3], r, &v))
                out->cols[k].bytes = v;
        }
        batch.release(&batch);
    }
    if (rows.release)
        rows.release(&rows);
    knut_buf_reset(&b);
    return st;
}

/* ---- the append ------------------------------------------------------------- */

typedef struct append {
    const knut_iceberg_ref *ref;
    knut_iceberg__base base;
    knut_iceberg__col *cols;
    size_t n_cols;
    char *location, *local; /* the table location as in metadata, and locally */
    char *mdir, *mdir_uri;  /* <location>/metadata */
    char uuid[37];
    knut_iceberg_data_file file; /* the data file written */
    knut_iceberg__metrics metrics; /* its column metrics */
    knut_iceberg_manifest_file mf; /* its manifest, seq filled per attempt */
    char *data_local, *manifest_local, *list_local;
    char *made; /* a new table: the first folder down to local made for it, or NULL */
} append;

/* A new table's location: the option, else the table folder itself
 * (path catalog), else <the catalog file's folder>/<namespace>.db/<name>
 * (pyiceberg's layout under a warehouse beside the catalog). Absolute. */
static knut_status location_new(append *a, const char *given, knut_error *err)
{
    knut_status st = KNUT_OK;
    char *want = NULL;
    if (given) {
        want = strdup(given);
    } else if (a->ref->kind == KNUT_ICEBERG_CATALOG_PATH) {
        want = strdup(a->ref->path);
    } else {
        const char *id = a->ref->identifier, *dot = strrchr(id, '.');
        const char *slash = strrchr(a->ref->path, '/');
        int dl = slash ? (int)(slash - a->ref->path) : 1;
        size_t n = strlen(a->ref->path) + strlen(id) + 8;
        if ((want = malloc(n)))
            snprintf(want, n, "%.*s/%.*s.db/%s", dl, slash ? a->ref->path : ".", (int)(dot - id),
                     id, dot + 1);
    }
    if (!want)
        return oom(err);
    if ((st = knut_iceberg_path_local(want, NULL, &a->local, err)) != KNUT_OK)
        goto cleanup;
    /* The first folder on the way down that does not exist yet: what a
     * failed create removes again. */
    struct stat sb;
    size_t made_len = 0;
    for (size_t n = strlen(a->local); n > 0; n--) {
        if (a->local[n] != '/' && a->local[n] != '\0')
            continue;
        char c = a->local[n];
        a->local[n] = '\0';
        int exists = stat(a->local, &sb) == 0;
        a->local[n] = c;
        if (exists)
            break;
        made_len = n;
    }
    if ((st = mkdirs(a->local, err)) != KNUT_OK)
        goto cleanup;
    if (made_len) {
        char *first = strndup(a->local, made_len);
        a->made = first ? realpath(first, NULL) : NULL;
        free(first);
    }
    char *real = realpath(a->local, NULL);
    if (!real) {
        st = knut_error_set(err, KNUT_EIO, "%s: %s", a->local, strerror(errno));
        goto cleanup;
    }
    free(a->local);
    a->local = real;
    size_t n = strlen(real) + 8;
    if ((a->location = malloc(n)))
        snprintf(a->location, n, "file://%s", real);
    else
        st = oom(err);
cleanup:
    free(want);
    return st;
}

/* After a failed create: the folders made for the table, if they are
 * still empty (rmdir removes nothing else, so files a concurrent writer
 * put there stay). */
static void remove_empty_dirs(const append *a)
{
    static const char *const sub[] = {"data", "metadata"};
    for (size_t i = 0; i < 2; i++) {
        char *d = knut_iceberg__join(a->local, sub[i]);
        if (d)
            (void)rmdir(d);
        free(d);
    }
    /* Then the table folder and the parents made for it, bottom up. */
    char *p = a->made ? strdup(a->local) : NULL;
    size_t stop = a->made ? strlen(a->made) : 0;
    for (size_t n = p ? strlen(p) : 0; p && n >= stop && n > 0; n--)
        if (p[n] == '/' || p[n] == '\0') {
            p[n] = '\0';
            if (rmdir(p) != 0)
                break;
        }
    free(p);
}

static knut_status paths_set(append *a, knut_error *err)
{
    char name[80];
    snprintf(name, sizeof name, "data/00000-0-%s.parquet", a->uuid);
    a->file.path = knut_iceberg__join(a->location, name);
    a->data_local = knut_iceberg__join(a->local, name);
    snprintf(name, sizeof name, "metadata/%s-m0.avro", a->uuid);
    a->mf.path = knut_iceberg__join(a->location, name);
    a->manifest_local = knut_iceberg__join(a->local, name);
    a->mdir = knut_iceberg__join(a->local, "metadata");
    a->mdir_uri = knut_iceberg__join(a->location, "metadata");
    char *data_dir = knut_iceberg__join(a->local, "data");
    knut_status st = a->file.path && a->data_local && a->mf.path && a->manifest_local &&
                             a->mdir && a->mdir_uri && data_dir
                         ? KNUT_OK
                         : oom(err);
    if (st == KNUT_OK && (st = mkdirs(data_dir, err)) == KNUT_OK)
        st = mkdirs(a->mdir, err);
    free(data_dir);
    return st;
}

static knut_status write_manifest(append *a, knut_error *err)
{
    const knut_iceberg_table *t = a->base.t;
    int32_t sid = t ? t->current_schema_id : 0;
    char *schema = knut_iceberg__meta_schema_json(a->base.root, sid);
    knut_buf m = KNUT_BUF_INIT;
    knut_status st = schema ? knut_iceberg__manifest_write(&m, schema, sid, &a->file,
                                                           &a->metrics, 1, err)
                            : knut_error_set(err, KNUT_EPARSE, "iceberg: no schema %" PRId32, sid);
    if (st == KNUT_OK)
        st = knut_file_write_atomic(a->manifest_local, m.data, m.len, err);
    a->mf.length = (int64_t)m.len;
    a->mf.content = 0;
    a->mf.spec_id = 0;
    a->mf.added_files = 1;
    a->mf.added_rows = a->file.record_count;
    free(schema);
    knut_buf_reset(&m);
    return st;
}

/* One commit attempt on a->base: the manifest list (the new manifest, then
 * the parent's manifests unchanged), the metadata, the swap. */
static knut_status attempt(append *a, int no, knut_iceberg_append_result *res, knut_error *err)
{
    const knut_iceberg_table *t = a->base.t;
    int64_t parent = t ? t->current_snapshot_id : -1;
    const knut_iceberg_snapshot *ps = parent >= 0 ? knut_iceberg_table_snapshot(t, parent) : NULL;
    knut_iceberg_manifest_file *old = NULL, *all = NULL;
    size_t n_old = 0;
    char *list_path = NULL, *json = NULL, *written = NULL;
    knut_buf list = KNUT_BUF_INIT;
    knut_status st = KNUT_OK;
    if (ps) {
        if ((st = knut_iceberg_path_local(ps->manifest_list, t->location, &list_path, err)) ||
            (st = knut_iceberg_manifest_list_read(list_path, &old, &n_old, err)))
            goto cleanup;
        free(list_path);
        list_path = NULL;
    }
    knut_iceberg__snap s = {.id = knut_iceberg__snapshot_id_new(t),
                            .parent_id = parent,
                            .seq = (t ? t->last_sequence_number : 0) + 1,
                            .timestamp_ms = knut_clock_wall_us() / 1000,
                            .schema_id = t ? t->current_schema_id : 0,
                            .files = 1,
                            .rows = a->file.record_count,
                            .bytes = a->file.file_size};
    a->mf.sequence_number = a->mf.min_sequence_number = s.seq;
    a->mf.added_snapshot_id = s.id;
    if (!(all = calloc(n_old + 1, sizeof *all))) {
        st = oom(err);
        goto cleanup;
    }
    all[0] = a->mf;
    if (n_old)
        memcpy(all + 1, old, n_old * sizeof *old);
    char name[128];
    snprintf(name, sizeof name, "metadata/snap-%" PRId64 "-%d-%s.avro", s.id, no, a->uuid);
    char *list_uri = knut_iceberg__join(a->location, name);
    a->list_local = knut_iceberg__join(a->local, name);
    s.manifest_list = list_uri;
    if (!list_uri || !a->list_local)
        st = oom(err);
    if (st == KNUT_OK)
        st = knut_iceberg__manifest_list_write(&list, s.id, parent, s.seq, all, n_old + 1, err);
    if (st == KNUT_OK)
        st = knut_file_write_atomic(a->list_local, list.data, list.len, err);
    /* The metadata-log names the previous file as the catalog does (SQL),
     * or as a URI under the table location (a path table's pointer is a
     * local path; the spec wants locations fully qualified). */
    char *prev = NULL;
    if (st == KNUT_OK && a->base.exists) {
        const char *base = strrchr(a->base.meta_path, '/');
        prev = a->ref->kind == KNUT_ICEBERG_CATALOG_SQLITE
                   ? strdup(a->base.pointer)
                   : knut_iceberg__join(a->mdir_uri, base ? base + 1 : a->base.meta_path);
        if (!prev)
            st = oom(err);
    }
    if (st == KNUT_OK)
        st = knut_iceberg__meta_append(a->base.root, prev, &s, err);
    free(prev);
    free(list_uri);
    if (st == KNUT_OK &&
        !(json = json_dumps(a->base.root, JSON_COMPACT | JSON_REAL_PRECISION(17))))
        st = oom(err);
    if (st == KNUT_OK)
        st = knut_iceberg__commit(a->ref, &a->base, a->mdir, a->mdir_uri, json, strlen(json),
                                  &written, err);
    if (st == KNUT_OK) {
        res->snapshot_id = s.id;
        res->sequence_number = s.seq;
        res->metadata_path = written;
    } else if (a->list_local) {
        (void)unlink(a->list_local);
    }
cleanup:
    free(a->list_local);
    a->list_local = NULL;
    free(list_path);
    free(all);
    free(json);
    knut_iceberg_manifest_list_free(old, n_old);
    knut_buf_reset(&list);
    return st;
}

static void append_clear(append *a)
{
    knut_iceberg__base_clear(&a->base);
    cols_free(a->cols, a->n_cols);
    free(a->location);
    free(a->local);
    free(a->mdir);
    free(a->mdir_uri);
    free(a->file.path);
    free(a->mf.path);
    free(a->data_local);
    free(a->manifest_local);
    free(a->metrics.cols);
    free(a->made);
}

/* The result's column names and types, without running the query. */
static knut_status query_schema(knut_duck_conn *conn, const char *query, struct ArrowSchema *out,
                                knut_error *err)
{
    knut_buf b = KNUT_BUF_INIT;
    knut_buf_printf(&b, "SELECT * FROM (%s) AS q", query);
    knut_duck_stmt *stmt = NULL;
    knut_status st = knut_buf_check(&b, err);
    if (st == KNUT_OK && (st = knut_duck_stmt_prepare(&stmt, conn, b.data, err)) == KNUT_OK)
        st = knut_duck_stmt_schema(stmt, out, err);
    knut_duck_stmt_free(stmt);
    knut_buf_reset(&b);
    return st;
}

/* Sleeps 5-20 ms times 2^(no-1), at most about 1 s: two writers that
 * collided do not collide again in lockstep. */
static void backoff(int no)
{
    int64_t jitter = knut_iceberg__snapshot_id_new(NULL) % 16; /* random */
    int64_t ms = (5 + jitter) << (no < 7 ? no - 1 : 6);
    (void)knut_clock_sleep_ns(ms * 1000000);
}

/* Commits a's snapshot (or, with no rows, a's new empty table), and on a
 * conflict reloads the base and commits again on top of it, up to
 * o->max_attempts times. */
static knut_status commit_retrying(append *a, const knut_iceberg_append_options *o,
                                   knut_iceberg_append_result *res, knut_error *err)
{
    const knut_iceberg_ref *ref = a->ref;
    knut_status st;
    int max = o->max_attempts > 0 ? o->max_attempts : DEFAULT_ATTEMPTS;
    for (int no = 1;; no++) {
        res->attempts = no;
        if (res->rows == 0) {
            char *json = json_dumps(a->base.root, JSON_COMPACT);
            st = json ? knut_iceberg__commit(ref, &a->base, a->mdir, a->mdir_uri, json,
                                             strlen(json), &res->metadata_path, err)
                      : oom(err);
            free(json);
        } else {
            st = attempt(a, no, res, err);
        }
        if (st == KNUT_EAGAIN && res->rows == 0) {
            /* An empty table was created concurrently: that is the table
             * this export would have created. */
            knut_error_clear(err);
            st = KNUT_OK;
            res->created = 0;
        }
        if (st != KNUT_EAGAIN)
            break;
        if (no >= max) {
            knut_error_prefix(err, "gave up after %d commit attempts: ", no);
            break;
        }
        KNUT_LOG(KNUT_LOG_INFO, "iceberg", "commit conflict (attempt %d): %s; retrying", no,
                 err->message);
        backoff(no);
        /* Rebuild on the table as it is now. */
        knut_iceberg__base_clear(&a->base);
        if ((st = knut_iceberg__base_load(&a->base, ref, err)) != KNUT_OK)
            break;
        if (!a->base.exists) {
            st = knut_error_set(err, KNUT_ENOTFOUND,
                                "the table disappeared while appending (dropped concurrently)");
            break;
        }
        res->created = 0;
        if ((st = cols_match(a->base.t, a->cols, a->n_cols, 1, err)) != KNUT_OK)
            break;
    }
    return st;
}

knut_status knut_iceberg_append(knut_duck_conn *conn, const knut_iceberg_ref *ref,
                                const char *query, const knut_iceberg_append_options *o,
                                knut_iceberg_append_result *res, knut_error *err)
{
    KNUT_ASSERT_ARG(err, conn && ref && ref->path && query && res);
    static const knut_iceberg_append_options defaults = KNUT_ICEBERG_APPEND_OPTIONS_INIT;
    if (!o)
        o = &defaults;
    memset(res, 0, sizeof *res);
    res->snapshot_id = -1;
    append a = {.ref = ref};
    struct ArrowSchema rs = {0};
    int wrote = 0;
    knut_uuid_v4(a.uuid);
    knut_status st = knut_iceberg__base_load(&a.base, ref, err);
    if (st == KNUT_OK && (st = query_schema(conn, query, &rs, err)) != KNUT_OK) {
        knut_duck_error_trim(err); /* not the echo of SQL the user did not write */
        knut_error_prefix(err, "the query: ");
    }
    if (st != KNUT_OK)
        goto cleanup;
    a.n_cols = (size_t)rs.n_children;
    if (a.base.exists) {
        if ((st = cols_alloc(&rs, &a.cols, err)) == KNUT_OK &&
            (st = cols_match(a.base.t, a.cols, a.n_cols, 0, err)) == KNUT_OK &&
            (st = knut_iceberg_path_local(a.base.t->location, NULL, &a.local, err)) == KNUT_OK &&
            !(a.location = strdup(a.base.t->location)))
            st = oom(err);
    } else {
        res->created = 1;
        if ((st = cols_new(&rs, &a.cols, err)) == KNUT_OK &&
            (st = location_new(&a, o->location, err)) == KNUT_OK)
            st = knut_iceberg__meta_create(&a.base.root, a.location, a.cols, a.n_cols, err);
    }
    if (st == KNUT_OK)
        st = paths_set(&a, err);
    if (st != KNUT_OK)
        goto cleanup;
    wrote = 1;
    st = copy_rows(conn, query, a.cols, a.n_cols, a.data_local,
                   o->compression ? o->compression : "zstd", &res->rows, err);
    if (st != KNUT_OK) {
        knut_duck_error_trim(err);
        knut_error_prefix(err, "the query: ");
        goto cleanup;
    }
    struct stat sb;
    if (stat(a.data_local, &sb) != 0) {
        st = knut_error_set(err, KNUT_EIO, "%s: %s", a.data_local, strerror(errno));
        goto cleanup;
    }
    a.file.record_count = res->rows;
    a.file.file_size = (int64_t)sb.st_size;
    if (res->rows == 0) {
        /* Nothing to append: no snapshot (the spec forbids empty
         * manifests); a new table is still created, empty. */
        (void)unlink(a.data_local);
        if (a.base.exists)
            goto cleanup;
    } else if ((st = file_metrics(conn, a.data_local, a.cols, a.n_cols, &a.metrics, err)) !=
                   KNUT_OK ||
               (st = write_manifest(&a, err)) != KNUT_OK) {
        goto cleanup;
    }
    st = commit_retrying(&a, o, res, err);
cleanup:
    if (st != KNUT_OK && wrote) {
        /* Nothing landed: nothing written is kept. */
        if (a.data_local)
            (void)unlink(a.data_local);
        if (a.manifest_local)
            (void)unlink(a.manifest_local);
        res->snapshot_id = -1;
    }
    if (st != KNUT_OK && res->created && a.local)
        remove_empty_dirs(&a);
    if (rs.release)
        rs.release(&rs);
    append_clear(&a);
    return st;
}
