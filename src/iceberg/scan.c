/*
 * Scans: the live files of a snapshot (plan_build), the snapshot's rows as
 * one DuckDB SELECT (plan_sql), and running it (scan).
 *
 * The SELECT reads every data file in one read_parquet whose `schema`
 * argument maps Iceberg field ids to columns, so DuckDB matches columns by
 * id: a file written before a rename, an added or dropped column, or a
 * reorder reads into the current names, and an id a file lacks reads as
 * NULL. The columns are named _knut_c<id> inside the query and renamed
 * only in the outermost SELECT, so a table column can never collide with
 * the helper columns (_knut_file, file_row_number).
 *
 * Deletes follow the spec's scoping rules:
 *  - a position delete (file_path, pos) removes row pos of the data file
 *    whose path, as written in the manifest, is file_path, when the delete
 *    file's data sequence number is >= the data file's;
 *  - an equality delete removes the rows whose equality columns are all
 *    equal (NULL equal to NULL) to one of its rows, when its sequence
 *    number is strictly greater, and it is in the same spec and partition
 *    as the data file or its spec is unpartitioned (a global delete).
 * Both are ANTI JOINs, hash joins whose build side is the (small) delete
 * rows, so the data streams through. (A correlated NOT EXISTS made DuckDB
 * deduplicate the correlated columns of every data row first: 3.4 GB of
 * RSS for 10M rows.) A plan
 * without delete files is a plain projection of the read_parquet.
 */
#include "iceberg_int.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* SQL text cap: about 4 KiB per file stays well under it for 100k files. */
#define SQL_MAX ((size_t)512 << 20)

/* ---- plan --------------------------------------------------------------- */

static knut_status push_file(knut_iceberg_data_file **arr, size_t *n, size_t *cap,
                             knut_iceberg_data_file *f, knut_error *err)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 64;
        knut_iceberg_data_file *g = realloc(*arr, nc * sizeof *g);
        if (!g)
            return knut_error_set(err, KNUT_ENOMEM, "iceberg: out of memory planning a scan");
        *arr = g;
        *cap = nc;
    }
    (*arr)[(*n)++] = *f;
    memset(f, 0, sizeof *f); /* moved */
    return KNUT_OK;
}

static knut_status check_format(const knut_iceberg_data_file *f, knut_error *err)
{
    if (f->format && strcmp(f->format, "parquet") == 0)
        return KNUT_OK;
    return knut_error_set(err, KNUT_EUNSUPPORTED,
                          "%s: data file format '%s' is not supported (Parquet only: DuckDB has "
                          "no ORC reader, Avro data files are not read yet)",
                          f->path, f->format ? f->format : "");
}

/* Moves the live entries of one manifest into the plan. */
static knut_status plan_manifest(knut_iceberg_plan *p, size_t *cap_d, size_t *cap_x,
                                 const knut_iceberg_table *t, const knut_iceberg_manifest_file *mf,
                                 knut_error *err)
{
    char *local = NULL;
    knut_iceberg_data_file *ents = NULL;
    size_t n = 0;
    knut_status st = knut_iceberg_path_local(mf->path, t->location, &local, err);
    if (st != KNUT_OK)
        goto done;
    if ((st = knut_iceberg_manifest_read(local, mf, &ents, &n, err)) != KNUT_OK)
        goto done;
    for (size_t i = 0; i < n && st == KNUT_OK; i++) {
        knut_iceberg_data_file *f = &ents[i];
        if (f->status == KNUT_ICEBERG_DELETED)
            continue;
        if ((st = check_format(f, err)) != KNUT_OK)
            break;
        if (f->content == KNUT_ICEBERG_DATA)
            st = push_file(&p->data, &p->n_data, cap_d, f, err);
        else
            st = push_file(&p->deletes, &p->n_deletes, cap_x, f, err);
    }
done:
    knut_iceberg_data_files_free(ents, n);
    free(local);
    return st;
}

knut_status knut_iceberg_plan_build(knut_iceberg_plan *out, const knut_iceberg_table *t,
                                    int64_t snapshot_id, knut_error *err)
{
    KNUT_ASSERT_ARG(err, out && t);
    memset(out, 0, sizeof *out);
    out->snapshot_id = snapshot_id < 0 ? t->current_snapshot_id : snapshot_id;
    out->schema_id = t->current_schema_id;
    if (out->snapshot_id < 0)
        return KNUT_OK; /* no snapshot yet: no rows */
    const knut_iceberg_snapshot *s = knut_iceberg_table_snapshot(t, out->snapshot_id);
    if (!s)
        return knut_error_set(err, KNUT_ENOTFOUND, "%s: no snapshot %" PRId64,
                              t->metadata_path, out->snapshot_id);
    /* Time travel reads with the schema the snapshot was written under. */
    if (s->schema_id >= 0 && knut_iceberg_table_schema(t, s->schema_id))
        out->schema_id = s->schema_id;

    char *local = NULL;
    knut_iceberg_manifest_file *mfs = NULL;
    size_t n_mf = 0, cap_d = 0, cap_x = 0;
    knut_status st = knut_iceberg_path_local(s->manifest_list, t->location, &local, err);
    if (st == KNUT_OK)
        st = knut_iceberg_manifest_list_read(local, &mfs, &n_mf, err);
    for (size_t i = 0; st == KNUT_OK && i < n_mf; i++)
        st = plan_manifest(out, &cap_d, &cap_x, t, &mfs[i], err);
    knut_iceberg_manifest_list_free(mfs, n_mf);
    free(local);
    if (st != KNUT_OK)
        knut_iceberg_plan_free(out);
    return st;
}

void knut_iceberg_plan_free(knut_iceberg_plan *p)
{
    if (!p)
        return;
    knut_iceberg_data_files_free(p->data, p->n_data);
    knut_iceberg_data_files_free(p->deletes, p->n_deletes);
    memset(p, 0, sizeof *p);
}

/* ---- SQL ---------------------------------------------------------------- */

/* DuckDB's type for an Iceberg primitive; NULL if there is none. */
static const char *duck_type(const char *ice, char *tmp, size_t cap)
{
    static const char *const map[][2] = {
        {"boolean", "BOOLEAN"}, {"int", "INTEGER"},   {"long", "BIGINT"},
        {"float", "FLOAT"},     {"double", "DOUBLE"}, {"date", "DATE"},
        {"time", "TIME"},       {"timestamp", "TIMESTAMP"},
        {"timestamptz", "TIMESTAMPTZ"}, {"string", "VARCHAR"},
        {"uuid", "UUID"},       {"binary", "BLOB"},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(ice, map[i][0]) == 0)
            return map[i][1];
    unsigned prec, scale, len;
    char end;
    if (sscanf(ice, "decimal ( %u , %u %c", &prec, &scale, &end) == 3 && end == ')' &&
        prec >= 1 && prec <= 38 && scale <= prec) {
        snprintf(tmp, cap, "DECIMAL(%u,%u)", prec, scale);
        return tmp;
    }
    if (sscanf(ice, "fixed [ %u %c", &len, &end) == 2 && end == ']')
        return "BLOB";
    return NULL;
}

/* A schema MAP {id: {name: '_knut_c<id>', type: ..., default_value: NULL}}
 * for the given fields of schema s (all fields when ids is NULL). */
static knut_status put_schema_map(knut_buf *b, const knut_iceberg_schema *s, const int32_t *ids,
                                  size_t n_ids, knut_error *err)
{
    size_t n = ids ? n_ids : s->n_fields;
    knut_buf_puts(b, "MAP {");
    for (size_t i = 0; i < n; i++) {
        const knut_iceberg_field *f = NULL;
        for (size_t k = 0; k < s->n_fields && !f; k++)
            if (!ids || s->fields[k].id == ids[i])
                f = ids ? &s->fields[k] : &s->fields[i];
        if (!f)
            return knut_error_set(err, KNUT_EPARSE,
                                  "equality delete key field id %" PRId32
                                  " is not a top-level column of schema %" PRId32,
                                  ids[i], s->schema_id);
        char tmp[32];
        const char *dt = f->children || !f->type ? NULL : duck_type(f->type, tmp, sizeof tmp);
        if (!dt)
            return knut_error_set(err, KNUT_EUNSUPPORTED,
                                  "column '%s' (field id %" PRId32 ") has type '%s', which the "
                                  "scan cannot read yet (nested and v3 types are not supported)",
                                  f->name, f->id, f->type ? f->type : "?");
        knut_buf_printf(b, "%s%" PRId32 ": {name: '_knut_c%" PRId32 "', type: '%s', "
                        "default_value: NULL}", i ? ", " : "", f->id, f->id, dt);
    }
    knut_buf_puts(b, "}");
    return KNUT_OK;
}

static int same_ids(const knut_iceberg_data_file *f, const int32_t *ids, size_t n)
{
    return f->n_equality_ids == n && memcmp(f->equality_ids, ids, n * sizeof *ids) == 0;
}

/* A list ['a', 'b'] of the local paths of files[0..n) with the given
 * content (and equality ids, when eq is not NULL). */
static knut_status put_paths(knut_buf *b, const knut_iceberg_table *t,
                             const knut_iceberg_data_file *files, size_t n, int content,
                             const int32_t *eq, size_t n_eq, knut_error *err)
{
    int first = 1;
    knut_buf_puts(b, "[");
    for (size_t i = 0; i < n; i++) {
        if ((int)files[i].content != content || (eq && !same_ids(&files[i], eq, n_eq)))
            continue;
        char *local = NULL;
        knut_status st = knut_iceberg_path_local(files[i].path, t->location, &local, err);
        if (st != KNUT_OK)
            return st;
        knut_buf_puts(b, first ? "" : ", ");
        knut_duck_literal(b, local, strlen(local));
        free(local);
        first = 0;
    }
    knut_buf_puts(b, "]");
    return KNUT_OK;
}

/* VALUES rows (local path, path as written, data seq, spec, partition). */
static knut_status put_file_rows(knut_buf *b, const knut_iceberg_table *t,
                                 const knut_iceberg_data_file *files, size_t n, int content,
                                 const int32_t *eq, size_t n_eq, knut_error *err)
{
    int first = 1;
    for (size_t i = 0; i < n; i++) {
        const knut_iceberg_data_file *f = &files[i];
        if ((int)f->content != content || (eq && !same_ids(f, eq, n_eq)))
            continue;
        char *local = NULL;
        knut_status st = knut_iceberg_path_local(f->path, t->location, &local, err);
        if (st != KNUT_OK)
            return st;
        const knut_iceberg_spec *spec = knut_iceberg_table_spec(t, f->spec_id);
        int global = !spec || spec->n_fields == 0;
        const char *part = f->partition ? f->partition : "[]";
        knut_buf_puts(b, first ? "(" : ", (");
        knut_duck_literal(b, local, strlen(local));
        knut_buf_puts(b, ", ");
        knut_duck_literal(b, f->path, strlen(f->path));
        knut_buf_printf(b, ", %" PRId64 ", %" PRId32 ", ", f->sequence_number, f->spec_id);
        knut_duck_literal(b, part, strlen(part));
        knut_buf_printf(b, ", %s)", global ? "true" : "false");
        free(local);
        first = 0;
    }
    return KNUT_OK;
}

/* The columns of s, renamed from _knut_c<id> to their names. */
static void put_projection(knut_buf *b, const knut_iceberg_schema *s, const char *alias)
{
    for (size_t i = 0; i < s->n_fields; i++) {
        knut_buf_printf(b, "%s%s._knut_c%" PRId32 " AS ", i ? ", " : "", alias, s->fields[i].id);
        knut_duck_ident(b, s->fields[i].name);
    }
}

/* An empty result with the schema's columns and types. */
static knut_status put_empty(knut_buf *b, const knut_iceberg_schema *s, knut_error *err)
{
    knut_buf_puts(b, "SELECT ");
    for (size_t i = 0; i < s->n_fields; i++) {
        const knut_iceberg_field *f = &s->fields[i];
        char tmp[32];
        const char *dt = f->children || !f->type ? NULL : duck_type(f->type, tmp, sizeof tmp);
        if (!dt)
            return knut_error_set(err, KNUT_EUNSUPPORTED,
                                  "column '%s' (field id %" PRId32 ") has type '%s', which the "
                                  "scan cannot read yet", f->name, f->id, f->type ? f->type : "?");
        knut_buf_printf(b, "%sCAST(NULL AS %s) AS ", i ? ", " : "", dt);
        knut_duck_ident(b, f->name);
    }
    knut_buf_puts(b, s->n_fields ? " WHERE false" : "NULL AS _knut_empty WHERE false");
    return KNUT_OK;
}

/* One CTE per distinct equality-id set: knut_eq<k>(key columns, seq, spec,
 * part, global). Returns the number of sets in *n_sets and their first
 * files' indexes in sets[]. */
#define MAX_EQ_SETS 64

static knut_status put_eq_ctes(knut_buf *b, const knut_iceberg_table *t,
                               const knut_iceberg_schema *s, const knut_iceberg_plan *p,
                               size_t *sets, size_t *n_sets, knut_error *err)
{
    knut_status st = KNUT_OK;
    *n_sets = 0;
    for (size_t i = 0; i < p->n_deletes && st == KNUT_OK; i++) {
        const knut_iceberg_data_file *f = &p->deletes[i];
        if (f->content != KNUT_ICEBERG_EQUALITY_DELETES)
            continue;
        if (f->n_equality_ids == 0)
            return knut_error_set(err, KNUT_EPARSE, "%s: equality delete file without "
                                  "equality_ids", f->path);
        size_t k = 0;
        while (k < *n_sets && !same_ids(&p->deletes[sets[k]], f->equality_ids,
                                        f->n_equality_ids))
            k++;
        if (k < *n_sets)
            continue;
        if (*n_sets == MAX_EQ_SETS)
            return knut_error_set(err, KNUT_ETOOBIG, "more than %d distinct equality-delete "
                                  "key sets in one snapshot", MAX_EQ_SETS);
        sets[(*n_sets)++] = i;
        knut_buf_printf(b, ", knut_eqf%zu(f, uri, seq, spec, part, global) AS (VALUES ", k);
        st = put_file_rows(b, t, p->deletes, p->n_deletes, KNUT_ICEBERG_EQUALITY_DELETES,
                           f->equality_ids, f->n_equality_ids, err);
        if (st != KNUT_OK)
            break;
        knut_buf_printf(b, "), knut_eq%zu AS (SELECT e.*, x.seq, x.spec, x.part, x.global "
                        "FROM read_parquet(", k);
        if ((st = put_paths(b, t, p->deletes, p->n_deletes, KNUT_ICEBERG_EQUALITY_DELETES,
                            f->equality_ids, f->n_equality_ids, err)) != KNUT_OK)
            break;
        knut_buf_puts(b, ", schema = ");
        if ((st = put_schema_map(b, s, f->equality_ids, f->n_equality_ids, err)) != KNUT_OK)
            break;
        knut_buf_printf(b, ", filename = '_knut_file') e JOIN knut_eqf%zu x ON e._knut_file "
                        "= x.f)", k);
    }
    return st;
}

knut_status knut_iceberg_plan_sql(knut_buf *b, const knut_iceberg_table *t,
                                  const knut_iceberg_plan *p, knut_error *err)
{
    KNUT_ASSERT_ARG(err, b && t && p);
    const knut_iceberg_schema *s = knut_iceberg_table_schema(t, p->schema_id);
    if (!s)
        return knut_error_set(err, KNUT_ENOTFOUND, "%s: no schema %" PRId32, t->metadata_path,
                              p->schema_id);
    if (p->n_data == 0)
        return put_empty(b, s, err);
    size_t n_pos = 0;
    for (size_t i = 0; i < p->n_deletes; i++)
        n_pos += p->deletes[i].content == KNUT_ICEBERG_POSITION_DELETES;
    size_t sets[MAX_EQ_SETS], n_sets = 0;
    knut_status st;

    knut_buf_puts(b, "WITH knut_files(f, uri, seq, spec, part, global) AS (VALUES ");
    if ((st = put_file_rows(b, t, p->data, p->n_data, KNUT_ICEBERG_DATA, NULL, 0, err)) != KNUT_OK)
        return st;
    knut_buf_puts(b, "), knut_data AS (SELECT * FROM read_parquet(");
    if ((st = put_paths(b, t, p->data, p->n_data, KNUT_ICEBERG_DATA, NULL, 0, err)) != KNUT_OK)
        return st;
    knut_buf_puts(b, ", schema = ");
    if ((st = put_schema_map(b, s, NULL, 0, err)) != KNUT_OK)
        return st;
    knut_buf_puts(b, ", filename = '_knut_file', file_row_number = true))");
    if (n_pos) {
        knut_buf_puts(b, ", knut_posf(f, uri, seq, spec, part, global) AS (VALUES ");
        if ((st = put_file_rows(b, t, p->deletes, p->n_deletes, KNUT_ICEBERG_POSITION_DELETES,
                                NULL, 0, err)) != KNUT_OK)
            return st;
        knut_buf_puts(b, "), knut_pos AS (SELECT e.file_path, e.pos, x.seq FROM read_parquet(");
        if ((st = put_paths(b, t, p->deletes, p->n_deletes, KNUT_ICEBERG_POSITION_DELETES, NULL,
                            0, err)) != KNUT_OK)
            return st;
        /* The reserved field ids of a position delete file's columns. */
        knut_buf_puts(b, ", schema = MAP {2147483546: {name: 'file_path', type: 'VARCHAR', "
                         "default_value: NULL}, 2147483545: {name: 'pos', type: 'BIGINT', "
                         "default_value: NULL}}, filename = '_knut_file') e JOIN knut_posf x "
                         "ON e._knut_file = x.f)");
    }
    if ((st = put_eq_ctes(b, t, s, p, sets, &n_sets, err)) != KNUT_OK)
        return st;

    knut_buf_puts(b, " SELECT ");
    put_projection(b, s, "d");
    knut_buf_puts(b, " FROM knut_data d");
    if (n_pos || n_sets)
        knut_buf_puts(b, " JOIN knut_files m ON d._knut_file = m.f");
    if (n_pos)
        knut_buf_puts(b, " ANTI JOIN knut_pos x ON x.file_path = m.uri "
                         "AND x.pos = d.file_row_number AND x.seq >= m.seq");
    for (size_t k = 0; k < n_sets; k++) {
        const knut_iceberg_data_file *f = &p->deletes[sets[k]];
        knut_buf_printf(b, " ANTI JOIN knut_eq%zu x%zu ON x%zu.seq > m.seq AND (x%zu.global OR "
                        "(x%zu.spec = m.spec AND x%zu.part = m.part))", k, k, k, k, k, k);
        for (size_t j = 0; j < f->n_equality_ids; j++)
            knut_buf_printf(b, " AND x%zu._knut_c%" PRId32 " IS NOT DISTINCT FROM d._knut_c%" PRId32,
                            k, f->equality_ids[j], f->equality_ids[j]);
    }
    return knut_buf_check(b, err);
}

/* read_parquet with a field-id schema reads a file without field ids as
 * all NULLs: refuse such files (a name mapping is not applied yet) rather
 * than return rows that silently lost their values. */
static knut_status check_field_ids(knut_duck_conn *conn, const knut_iceberg_table *t,
                                   const knut_iceberg_plan *p, knut_error *err);

knut_status knut_iceberg_scan(knut_duck_conn *conn, const knut_iceberg_table *t,
                              int64_t snapshot_id, int64_t limit, struct ArrowArrayStream *out,
                              knut_error *err)
{
    KNUT_ASSERT_ARG(err, conn && t && out);
    knut_iceberg_plan p;
    knut_buf sql;
    knut_buf_init(&sql, SQL_MAX);
    knut_status st = knut_iceberg_plan_build(&p, t, snapshot_id, err);
    if (st != KNUT_OK)
        goto done;
    if ((st = check_field_ids(conn, t, &p, err)) != KNUT_OK)
        goto done;
    if ((st = knut_iceberg_plan_sql(&sql, t, &p, err)) != KNUT_OK)
        goto done;
    if (limit > 0 && (st = knut_buf_printf(&sql, " LIMIT %" PRId64, limit)) != KNUT_OK)
        goto done;
    st = knut_duck_query(conn, sql.data, out, err);
    if (st != KNUT_OK)
        knut_error_prefix(err, "%s: snapshot %" PRId64 ": ", t->metadata_path, p.snapshot_id);
done:
    knut_iceberg_plan_free(&p);
    knut_buf_reset(&sql);
    return st;
}

static knut_status check_field_ids(knut_duck_conn *conn, const knut_iceberg_table *t,
                                   const knut_iceberg_plan *p, knut_error *err)
{
    if (p->n_data == 0 && p->n_deletes == 0)
        return KNUT_OK;
    knut_buf b;
    knut_buf_init(&b, SQL_MAX);
    struct ArrowArrayStream rows = {0};
    struct ArrowArray arr = {0};
    struct ArrowSchema sch = {0};
    knut_status st;
    knut_buf_puts(&b, "SELECT file_name FROM parquet_schema(");
    knut_buf_puts(&b, "list_concat(");
    if ((st = put_paths(&b, t, p->data, p->n_data, KNUT_ICEBERG_DATA, NULL, 0, err)) != KNUT_OK)
        goto done;
    knut_buf_puts(&b, ", ");
    if ((st = put_paths(&b, t, p->deletes, p->n_deletes, KNUT_ICEBERG_POSITION_DELETES, NULL, 0,
                        err)) != KNUT_OK)
        goto done;
    knut_buf_puts(&b, ", ");
    if ((st = put_paths(&b, t, p->deletes, p->n_deletes, KNUT_ICEBERG_EQUALITY_DELETES, NULL, 0,
                        err)) != KNUT_OK)
        goto done;
    /* A file's first row is its root; only its columns carry ids. */
    knut_buf_puts(&b, ")) GROUP BY file_name HAVING count(field_id) = 0 ORDER BY file_name "
                      "LIMIT 1");
    if ((st = knut_buf_check(&b, err)) != KNUT_OK)
        goto done;
    if ((st = knut_duck_query(conn, b.data, &rows, err)) != KNUT_OK)
        goto done;
    if (rows.get_next(&rows, &arr) != 0) {
        st = knut_error_set(err, KNUT_EIO, "reading Parquet schemas: %s",
                            rows.get_last_error(&rows));
        goto done;
    }
    if (arr.release && arr.length > 0) {
        knut_arrow_view v;
        if (rows.get_schema(&rows, &sch) == 0 &&
            knut_arrow_view_init(&v, sch.children[0], arr.children[0], err) == KNUT_OK) {
            int64_t len = 0;
            const char *name = knut_arrow_view_get_str(&v, 0, &len);
            st = knut_error_set(err, KNUT_EUNSUPPORTED,
                                "%.*s: the Parquet file has no field ids (reading it by the "
                                "table's name mapping is not supported yet)",
                                (int)len, name ? name : "");
            knut_arrow_view_reset(&v);
        } else {
            st = knut_error_set(err, KNUT_EUNSUPPORTED,
                                "a data file has no Parquet field ids");
        }
    }
done:
    if (arr.release)
        arr.release(&arr);
    if (sch.release)
        sch.release(&sch);
    if (rows.release)
        rows.release(&rows);
    knut_buf_reset(&b);
    return st;
}
