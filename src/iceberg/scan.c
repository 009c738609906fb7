/*
 * Scans: the live files of a snapshot (plan_build) and running the
 * snapshot's rows (scan_sql.c) on DuckDB, with the check that every file
 * carries the Parquet field ids the SELECT matches columns by.
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
    knut_buf_puts(&sql, "SELECT * FROM ");
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
    if ((st = knut_iceberg__put_paths(&b, t, p->data, p->n_data, KNUT_ICEBERG_DATA, NULL, 0, err)) != KNUT_OK)
        goto done;
    knut_buf_puts(&b, ", ");
    if ((st = knut_iceberg__put_paths(&b, t, p->deletes, p->n_deletes, KNUT_ICEBERG_POSITION_DELETES, NULL, 0,
                        err)) != KNUT_OK)
        goto done;
    knut_buf_puts(&b, ", ");
    if ((st = knut_iceberg__put_paths(&b, t, p->deletes, p->n_deletes, KNUT_ICEBERG_EQUALITY_DELETES, NULL, 0,
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
