/*
 * The rows of a set of Iceberg files as one DuckDB SELECT (plan_sql, and
 * rows_sql for the changelog).
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
 * RSS for 10M rows.) A plan without delete files is a plain projection
 * of the read_parquet.
 */
#include "iceberg_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* DuckDB's type for an Iceberg primitive; NULL if there is none. */
const char *knut_iceberg__duck_type(const char *ice, char *tmp, size_t cap)
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
        const char *dt =
            f->children || !f->type ? NULL : knut_iceberg__duck_type(f->type, tmp, sizeof tmp);
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

knut_status knut_iceberg__put_paths(knut_buf *b, const knut_iceberg_table *t,
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

/* An empty result with the schema's columns and types, parenthesised. */
static knut_status put_empty(knut_buf *b, const knut_iceberg_schema *s, knut_error *err)
{
    knut_buf_puts(b, "(SELECT ");
    for (size_t i = 0; i < s->n_fields; i++) {
        const knut_iceberg_field *f = &s->fields[i];
        char tmp[32];
        const char *dt =
            f->children || !f->type ? NULL : knut_iceberg__duck_type(f->type, tmp, sizeof tmp);
        if (!dt)
            return knut_error_set(err, KNUT_EUNSUPPORTED,
                                  "column '%s' (field id %" PRId32 ") has type '%s', which the "
                                  "scan cannot read yet", f->name, f->id, f->type ? f->type : "?");
        knut_buf_printf(b, "%sCAST(NULL AS %s) AS ", i ? ", " : "", dt);
        knut_duck_ident(b, f->name);
    }
    knut_buf_puts(b, s->n_fields ? " WHERE false)" : "NULL AS _knut_empty WHERE false)");
    return KNUT_OK;
}

/*
 * A set of delete files as CTEs named with tag (e.g. "a" for the deletes
 * a scan applies): knut_<tag>pos(file_path, pos, seq) for the position
 * deletes, and knut_<tag>eq<k>(key columns, seq, spec, part, global) per
 * distinct equality-id set k.
 */
#define MAX_EQ_SETS 64

typedef struct del_set {
    const char *tag;
    const knut_iceberg_data_file *files;
    size_t n;
    int has_pos;
    size_t sets[MAX_EQ_SETS]; /* a file of each equality-id set */
    size_t n_sets;
} del_set;

static knut_status put_pos_ctes(knut_buf *b, const knut_iceberg_table *t, del_set *d,
                                knut_error *err)
{
    knut_status st;
    for (size_t i = 0; i < d->n && !d->has_pos; i++)
        d->has_pos = d->files[i].content == KNUT_ICEBERG_POSITION_DELETES;
    if (!d->has_pos)
        return KNUT_OK;
    knut_buf_printf(b, ", knut_%sposf(f, uri, seq, spec, part, global) AS (VALUES ", d->tag);
    if ((st = put_file_rows(b, t, d->files, d->n, KNUT_ICEBERG_POSITION_DELETES, NULL, 0,
                            err)) != KNUT_OK)
        return st;
    knut_buf_printf(b, "), knut_%spos AS (SELECT e.file_path, e.pos, x.seq FROM read_parquet(",
                    d->tag);
    if ((st = knut_iceberg__put_paths(b, t, d->files, d->n, KNUT_ICEBERG_POSITION_DELETES, NULL, 0, err)) !=
        KNUT_OK)
        return st;
    /* The reserved field ids of a position delete file's columns. */
    knut_buf_printf(b, ", schema = MAP {2147483546: {name: 'file_path', type: 'VARCHAR', "
                       "default_value: NULL}, 2147483545: {name: 'pos', type: 'BIGINT', "
                       "default_value: NULL}}, filename = '_knut_file') e JOIN knut_%sposf x "
                       "ON e._knut_file = x.f)", d->tag);
    return KNUT_OK;
}

static knut_status put_eq_ctes(knut_buf *b, const knut_iceberg_table *t,
                               const knut_iceberg_schema *s, del_set *d, knut_error *err)
{
    knut_status st = KNUT_OK;
    for (size_t i = 0; i < d->n && st == KNUT_OK; i++) {
        const knut_iceberg_data_file *f = &d->files[i];
        if (f->content != KNUT_ICEBERG_EQUALITY_DELETES)
            continue;
        if (f->n_equality_ids == 0)
            return knut_error_set(err, KNUT_EPARSE, "%s: equality delete file without "
                                  "equality_ids", f->path);
        size_t k = 0;
        while (k < d->n_sets &&
               !same_ids(&d->files[d->sets[k]], f->equality_ids, f->n_equality_ids))
            k++;
        if (k < d->n_sets)
            continue;
        if (d->n_sets == MAX_EQ_SETS)
            return knut_error_set(err, KNUT_ETOOBIG, "more than %d distinct equality-delete "
                                  "key sets in one snapshot", MAX_EQ_SETS);
        d->sets[d->n_sets++] = i;
        knut_buf_printf(b, ", knut_%seqf%zu(f, uri, seq, spec, part, global) AS (VALUES ",
                        d->tag, k);
        st = put_file_rows(b, t, d->files, d->n, KNUT_ICEBERG_EQUALITY_DELETES, f->equality_ids,
                           f->n_equality_ids, err);
        if (st != KNUT_OK)
            break;
        knut_buf_printf(b, "), knut_%seq%zu AS (SELECT e.*, x.seq, x.spec, x.part, x.global "
                        "FROM read_parquet(", d->tag, k);
        if ((st = knut_iceberg__put_paths(b, t, d->files, d->n, KNUT_ICEBERG_EQUALITY_DELETES,
                            f->equality_ids, f->n_equality_ids, err)) != KNUT_OK)
            break;
        knut_buf_puts(b, ", schema = ");
        if ((st = put_schema_map(b, s, f->equality_ids, f->n_equality_ids, err)) != KNUT_OK)
            break;
        knut_buf_printf(b, ", filename = '_knut_file') e JOIN knut_%seqf%zu x ON e._knut_file "
                        "= x.f)", d->tag, k);
    }
    return st;
}

/* Member k of a delete set: 0 its position deletes (when it has any), then
 * its equality-id sets. */
static size_t del_members(const del_set *d)
{
    return (size_t)d->has_pos + d->n_sets;
}

/* `kind JOIN` (ANTI or SEMI) of a data row with member k of d. */
static void put_del_join(knut_buf *b, const char *kind, const del_set *d, size_t k)
{
    if (d->has_pos && k == 0) {
        knut_buf_printf(b, " %s JOIN knut_%spos %sp ON %sp.file_path = m.uri AND %sp.pos = "
                        "d.file_row_number AND %sp.seq >= m.seq", kind, d->tag, d->tag, d->tag,
                        d->tag, d->tag);
        return;
    }
    size_t e = k - (size_t)d->has_pos;
    const knut_iceberg_data_file *f = &d->files[d->sets[e]];
    char x[24];
    snprintf(x, sizeof x, "%se%zu", d->tag, e);
    knut_buf_printf(b, " %s JOIN knut_%seq%zu %s ON %s.seq > m.seq AND (%s.global OR "
                    "(%s.spec = m.spec AND %s.part = m.part))", kind, d->tag, e, x, x, x, x, x);
    for (size_t j = 0; j < f->n_equality_ids; j++)
        knut_buf_printf(b, " AND %s._knut_c%" PRId32 " IS NOT DISTINCT FROM d._knut_c%" PRId32,
                        x, f->equality_ids[j], f->equality_ids[j]);
}

/* SELECT <columns> FROM the data rows with every member of anti applied. */
static void put_select(knut_buf *b, const knut_iceberg_schema *s, const del_set *anti,
                       int joined)
{
    knut_buf_puts(b, "SELECT ");
    put_projection(b, s, "d");
    knut_buf_puts(b, " FROM knut_data d");
    if (joined)
        knut_buf_puts(b, " JOIN knut_files m ON d._knut_file = m.f");
    for (size_t k = 0; k < del_members(anti); k++)
        put_del_join(b, "ANTI", anti, k);
}

knut_status knut_iceberg__rows_sql(knut_buf *b, const knut_iceberg_table *t, int32_t schema_id,
                                   const knut_iceberg_data_file *data, size_t n_data,
                                   const knut_iceberg_data_file *dels, size_t n_dels,
                                   const knut_iceberg_data_file *semi, size_t n_semi,
                                   knut_error *err)
{
    const knut_iceberg_schema *s = knut_iceberg_table_schema(t, schema_id);
    if (!s)
        return knut_error_set(err, KNUT_ENOTFOUND, "%s: no schema %" PRId32, t->metadata_path,
                              schema_id);
    if (n_data == 0 || (semi && n_semi == 0))
        return put_empty(b, s, err);
    del_set anti = {.tag = "a", .files = dels, .n = n_dels};
    del_set want = {.tag = "s", .files = semi, .n = n_semi};
    knut_status st;

    knut_buf_puts(b, "(WITH knut_files(f, uri, seq, spec, part, global) AS (VALUES ");
    if ((st = put_file_rows(b, t, data, n_data, KNUT_ICEBERG_DATA, NULL, 0, err)) != KNUT_OK)
        return st;
    knut_buf_puts(b, "), knut_data AS (SELECT * FROM read_parquet(");
    if ((st = knut_iceberg__put_paths(b, t, data, n_data, KNUT_ICEBERG_DATA, NULL, 0, err)) != KNUT_OK)
        return st;
    knut_buf_puts(b, ", schema = ");
    if ((st = put_schema_map(b, s, NULL, 0, err)) != KNUT_OK)
        return st;
    knut_buf_puts(b, ", filename = '_knut_file', file_row_number = true))");
    if ((st = put_pos_ctes(b, t, &anti, err)) != KNUT_OK ||
        (st = put_eq_ctes(b, t, s, &anti, err)) != KNUT_OK ||
        (st = put_pos_ctes(b, t, &want, err)) != KNUT_OK ||
        (st = put_eq_ctes(b, t, s, &want, err)) != KNUT_OK)
        return st;
    knut_buf_puts(b, " ");
    int joined = del_members(&anti) || del_members(&want);
    if (!semi) {
        put_select(b, s, &anti, joined);
    } else {
        /* Rows that member k of semi deletes and no member before it does:
         * each row once, however many of the deletes match it. */
        for (size_t k = 0; k < del_members(&want); k++) {
            knut_buf_puts(b, k ? " UNION ALL " : "");
            put_select(b, s, &anti, joined);
            put_del_join(b, "SEMI", &want, k);
            for (size_t j = 0; j < k; j++)
                put_del_join(b, "ANTI", &want, j);
        }
    }
    knut_buf_puts(b, ")");
    return knut_buf_check(b, err);
}

knut_status knut_iceberg_plan_sql(knut_buf *b, const knut_iceberg_table *t,
                                  const knut_iceberg_plan *p, knut_error *err)
{
    KNUT_ASSERT_ARG(err, b && t && p);
    return knut_iceberg__rows_sql(b, t, p->schema_id, p->data, p->n_data, p->deletes,
                                  p->n_deletes, NULL, 0, err);
}

