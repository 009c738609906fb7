/*
 * Manifest lists and manifests: Avro containers (avro.c) whose records
 * become knut_iceberg_manifest_file and knut_iceberg_data_file, with the
 * spec's inheritance applied to manifest entries. Header keys are never
 * required (DuckDB writes none; Java and pyiceberg omit some): the format
 * version comes from `format-version` when present, else from the fields
 * the writer's schema has.
 */
#include "manifest_int.h"

#include <stdlib.h>
#include <string.h>

/* Grows *arr (of elem-byte items) to hold one more than n. */
static int grow(void **arr, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap)
        return 0;
    size_t ncap = *cap ? *cap * 2 : 16;
    void *p = realloc(*arr, ncap * elem);
    if (!p)
        return -1;
    memset((char *)p + *cap * elem, 0, (ncap - *cap) * elem);
    *arr = p;
    *cap = ncap;
    return 0;
}

/* 1 or 2 (3 and later read as 2: their added fields are not read), from
 * the header, else 2 when the record has the v2-only field. */
static int format_version(const knut_iceberg__avro *r, avro_value_t *rec, const char *v2_field)
{
    const char *v = knut_iceberg__avro_meta(r, "format-version", NULL);
    if (v && strcmp(v, "1") == 0)
        return 1;
    if (v && v[0] >= '2' && v[0] <= '9')
        return 2;
    return knut_iceberg__mf_has(rec, v2_field) ? 2 : 1;
}

static knut_status too_many(const char *name, knut_error *err)
{
    return knut_error_set_at(err, KNUT_ETOOBIG, name, 0, 0, "more than %zu entries",
                             KNUT_ICEBERG__MAX_ENTRIES);
}

/* ---- manifest lists ------------------------------------------------------ */

/* Tries the v2 count name, then v1's (added_data_files_count, ...). */
static knut_status get_count(const knut_iceberg__mf_ctx *c, avro_value_t *rec, const char *v2,
                             const char *v1, int required, int32_t *out)
{
    if (!knut_iceberg__mf_has(rec, v2) && knut_iceberg__mf_has(rec, v1))
        return knut_iceberg__mf_int(c, rec, v1, v1, required, out);
    return knut_iceberg__mf_int(c, rec, v2, v2, required, out);
}

static knut_status list_row(const knut_iceberg__mf_ctx *c, avro_value_t *rec, int version,
                            knut_iceberg_manifest_file *m)
{
    int v2 = version >= 2;
    int32_t content = 0;
    knut_status st;
    if ((st = knut_iceberg__mf_str(c, rec, "manifest_path", "manifest_path", 1, &m->path)) ||
        (st = knut_iceberg__mf_long(c, rec, "manifest_length", "manifest_length", 1, &m->length,
                                    NULL)) ||
        (st = knut_iceberg__mf_int(c, rec, "partition_spec_id", "partition_spec_id", 1,
                                   &m->spec_id)) ||
        (st = knut_iceberg__mf_int(c, rec, "content", "content", 0, &content)))
        return st;
    /* 515/516 are required in v2 but some writers declare them nullable:
     * present is required, a null reads as 0. */
    if (v2 && !knut_iceberg__mf_has(rec, "sequence_number"))
        return knut_iceberg__mf_fail(c, KNUT_EPARSE, "sequence_number", "missing required field");
    if (v2 && !knut_iceberg__mf_has(rec, "min_sequence_number"))
        return knut_iceberg__mf_fail(c, KNUT_EPARSE, "min_sequence_number",
                                     "missing required field");
    if ((st = knut_iceberg__mf_long(c, rec, "sequence_number", "sequence_number", 0,
                                    &m->sequence_number, NULL)) ||
        (st = knut_iceberg__mf_long(c, rec, "min_sequence_number", "min_sequence_number", 0,
                                    &m->min_sequence_number, NULL)) ||
        (st = knut_iceberg__mf_long(c, rec, "added_snapshot_id", "added_snapshot_id", v2,
                                    &m->added_snapshot_id, NULL)) ||
        (st = get_count(c, rec, "added_files_count", "added_data_files_count", v2,
                        &m->added_files)) ||
        (st = get_count(c, rec, "existing_files_count", "existing_data_files_count", v2,
                        &m->existing_files)) ||
        (st = get_count(c, rec, "deleted_files_count", "deleted_data_files_count", v2,
                        &m->deleted_files)) ||
        (st = knut_iceberg__mf_long(c, rec, "added_rows_count", "added_rows_count", v2,
                                    &m->added_rows, NULL)) ||
        (st = knut_iceberg__mf_long(c, rec, "existing_rows_count", "existing_rows_count", v2,
                                    &m->existing_rows, NULL)) ||
        (st = knut_iceberg__mf_long(c, rec, "deleted_rows_count", "deleted_rows_count", v2,
                                    &m->deleted_rows, NULL)))
        return st;
    if (content != 0 && content != 1)
        return knut_iceberg__mf_fail(c, KNUT_EPARSE, "content", "%d is not 0 (data) or 1 (deletes)",
                                     (int)content);
    m->content = content;
    return KNUT_OK;
}

knut_status knut_iceberg_manifest_list_parse(const void *data, size_t len, const char *name,
                                             knut_iceberg_manifest_file **out, size_t *n,
                                             knut_error *err)
{
    KNUT_ASSERT_ARG(err, out && n);
    *out = NULL;
    *n = 0;
    knut_iceberg__avro *r = NULL;
    knut_iceberg_manifest_file *m = NULL;
    size_t nm = 0, cap = 0;
    knut_iceberg__mf_ctx c = {name ? name : "(manifest list)", 0, err};
    knut_status st = knut_iceberg__avro_open(&r, c.name, data, len, err);
    if (st != KNUT_OK)
        return st;
    avro_value_t *rec;
    while ((st = knut_iceberg__avro_next(r, &rec, err)) == KNUT_OK) {
        if (nm >= KNUT_ICEBERG__MAX_ENTRIES) {
            st = too_many(c.name, err);
            goto fail;
        }
        if (grow((void **)&m, &cap, nm, sizeof *m) != 0) {
            st = knut_error_set(err, KNUT_ENOMEM, "%s: out of memory", c.name);
            goto fail;
        }
        c.rec_no = knut_iceberg__avro_record_no(r);
        nm++; /* counted first, so a half-read row is freed too */
        if ((st = list_row(&c, rec, format_version(r, rec, "sequence_number"), &m[nm - 1])))
            goto fail;
    }
    if (st != KNUT_EOF)
        goto fail;
    knut_iceberg__avro_close(r);
    *out = m;
    *n = nm;
    return KNUT_OK;
fail:
    knut_iceberg__avro_close(r);
    knut_iceberg_manifest_list_free(m, nm);
    return st;
}

knut_status knut_iceberg_manifest_list_read(const char *path, knut_iceberg_manifest_file **out,
                                            size_t *n, knut_error *err)
{
    KNUT_ASSERT_ARG(err, path && out && n);
    *out = NULL;
    *n = 0;
    knut_buf b = KNUT_BUF_INIT;
    knut_status st = knut_iceberg__avro_file_read(path, &b, err);
    if (st == KNUT_OK)
        st = knut_iceberg_manifest_list_parse(b.data, b.len, path, out, n, err);
    knut_buf_reset(&b);
    return st;
}

void knut_iceberg_manifest_list_free(knut_iceberg_manifest_file *m, size_t n)
{
    for (size_t i = 0; m && i < n; i++)
        free(m[i].path);
    free(m);
}

/* ---- manifests ------------------------------------------------------------ */

/* A sequence number of an entry: written, or inherited from the manifest
 * by an ADDED entry; an EXISTING or DELETED entry must carry it (v1
 * manifests have none: 0). */
static knut_status entry_seq(const knut_iceberg__mf_ctx *c, avro_value_t *rec, const char *name,
                             int version, const knut_iceberg_manifest_file *mf,
                             knut_iceberg_data_file *f, int64_t *out)
{
    int present = 0;
    knut_status st = knut_iceberg__mf_long(c, rec, name, name, 0, out, &present);
    if (st != KNUT_OK || present)
        return st;
    if (f->status == KNUT_ICEBERG_ADDED)
        *out = mf->sequence_number;
    else if (version == 1)
        *out = 0;
    else
        return knut_iceberg__mf_fail(c, KNUT_EPARSE, name,
                                     "null in an %s entry (only ADDED entries inherit it)",
                                     f->status == KNUT_ICEBERG_EXISTING ? "EXISTING" : "DELETED");
    return KNUT_OK;
}

static knut_status data_file(const knut_iceberg__mf_ctx *c, avro_value_t *df,
                             knut_iceberg_data_file *f)
{
    int32_t content = 0;
    knut_status st;
    if ((st = knut_iceberg__mf_int(c, df, "content", "data_file.content", 0, &content)) ||
        (st = knut_iceberg__mf_str(c, df, "file_path", "data_file.file_path", 1, &f->path)) ||
        (st = knut_iceberg__mf_str(c, df, "file_format", "data_file.file_format", 1,
                                   &f->format)) ||
        (st = knut_iceberg__mf_partition(c, df, &f->partition)) ||
        (st = knut_iceberg__mf_long(c, df, "record_count", "data_file.record_count", 1,
                                    &f->record_count, NULL)) ||
        (st = knut_iceberg__mf_long(c, df, "file_size_in_bytes", "data_file.file_size_in_bytes",
                                    1, &f->file_size, NULL)) ||
        (st = knut_iceberg__mf_int_list(c, df, "equality_ids", "data_file.equality_ids",
                                        &f->equality_ids, &f->n_equality_ids)) ||
        (st = knut_iceberg__mf_str(c, df, "referenced_data_file",
                                   "data_file.referenced_data_file", 0,
                                   &f->referenced_data_file)))
        return st;
    if (content < 0 || content > 2)
        return knut_iceberg__mf_fail(c, KNUT_EPARSE, "data_file.content",
                                     "%d is not 0, 1 or 2", (int)content);
    f->content = (knut_iceberg_content)content;
    knut_iceberg__mf_lower(f->format);
    return KNUT_OK;
}

static knut_status entry(const knut_iceberg__mf_ctx *c, avro_value_t *rec, int version,
                         const knut_iceberg_manifest_file *mf, knut_iceberg_data_file *f)
{
    int32_t status = 0;
    int present = 0;
    knut_status st = knut_iceberg__mf_int(c, rec, "status", "status", 1, &status);
    if (st != KNUT_OK)
        return st;
    if (status < 0 || status > 2)
        return knut_iceberg__mf_fail(c, KNUT_EPARSE, "status",
                                     "%d is not 0 (EXISTING), 1 (ADDED) or 2 (DELETED)",
                                     (int)status);
    f->status = (knut_iceberg_entry_status)status;
    f->spec_id = mf->spec_id;
    if ((st = knut_iceberg__mf_long(c, rec, "snapshot_id", "snapshot_id", 0, &f->snapshot_id,
                                    &present)))
        return st;
    if (!present)
        f->snapshot_id = mf->added_snapshot_id;
    if ((st = entry_seq(c, rec, "sequence_number", version, mf, f, &f->sequence_number)) ||
        (st = entry_seq(c, rec, "file_sequence_number", version, mf, f,
                        &f->file_sequence_number)))
        return st;
    avro_value_t df;
    if (!knut_iceberg__mf_field(rec, "data_file", &df))
        return knut_iceberg__mf_fail(c, KNUT_EPARSE, "data_file", "missing required field");
    if (avro_value_get_type(&df) != AVRO_RECORD)
        return knut_iceberg__mf_fail(c, KNUT_EPARSE, "data_file", "expected a record");
    return data_file(c, &df, f);
}

knut_status knut_iceberg_manifest_parse(const void *data, size_t len, const char *name,
                                        const knut_iceberg_manifest_file *mf,
                                        knut_iceberg_data_file **out, size_t *n, knut_error *err)
{
    KNUT_ASSERT_ARG(err, mf && out && n);
    *out = NULL;
    *n = 0;
    knut_iceberg__avro *r = NULL;
    knut_iceberg_data_file *f = NULL;
    size_t nf = 0, cap = 0;
    knut_iceberg__mf_ctx c = {name ? name : "(manifest)", 0, err};
    knut_status st = knut_iceberg__avro_open(&r, c.name, data, len, err);
    if (st != KNUT_OK)
        return st;
    avro_value_t *rec;
    while ((st = knut_iceberg__avro_next(r, &rec, err)) == KNUT_OK) {
        if (nf >= KNUT_ICEBERG__MAX_ENTRIES) {
            st = too_many(c.name, err);
            goto fail;
        }
        if (grow((void **)&f, &cap, nf, sizeof *f) != 0) {
            st = knut_error_set(err, KNUT_ENOMEM, "%s: out of memory", c.name);
            goto fail;
        }
        c.rec_no = knut_iceberg__avro_record_no(r);
        nf++; /* counted first, so a half-read entry is freed too */
        if ((st = entry(&c, rec, format_version(r, rec, "sequence_number"), mf, &f[nf - 1])))
            goto fail;
    }
    if (st != KNUT_EOF)
        goto fail;
    knut_iceberg__avro_close(r);
    *out = f;
    *n = nf;
    return KNUT_OK;
fail:
    knut_iceberg__avro_close(r);
    knut_iceberg_data_files_free(f, nf);
    return st;
}

knut_status knut_iceberg_manifest_read(const char *path, const knut_iceberg_manifest_file *mf,
                                       knut_iceberg_data_file **out, size_t *n, knut_error *err)
{
    KNUT_ASSERT_ARG(err, path && mf && out && n);
    *out = NULL;
    *n = 0;
    knut_buf b = KNUT_BUF_INIT;
    knut_status st = knut_iceberg__avro_file_read(path, &b, err);
    if (st == KNUT_OK)
        st = knut_iceberg_manifest_parse(b.data, b.len, path, mf, out, n, err);
    knut_buf_reset(&b);
    return st;
}

void knut_iceberg_data_files_free(knut_iceberg_data_file *f, size_t n)
{
    for (size_t i = 0; f && i < n; i++) {
        free(f[i].path);
        free(f[i].format);
        free(f[i].partition);
        free(f[i].equality_ids);
        free(f[i].referenced_data_file);
    }
    free(f);
}
