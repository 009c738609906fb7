/*
 * knut iceberg: Apache Iceberg tables, format v1 and v2 (v3 refused with a
 * clear error). This header holds the catalogs that find a table's current
 * metadata file, the table metadata model, the manifest list and manifest
 * readers, the scan that reads a snapshot's rows through DuckDB, the
 * changelog between two snapshots, and the append writer.
 *
 * Ownership: every string and array inside a struct below belongs to it and
 * is freed by its _free function.
 *
 * Columns are always matched by field id, never by name: a scan hands DuckDB
 * a map from field id to (current name, type), so renamed, added, dropped
 * and reordered columns read correctly in files written under older
 * schemas.
 *
 * Every file read here (metadata JSON, Avro) has a size cap; a file over it,
 * truncated, corrupt, or of an unknown format version is an error naming
 * the file, never a crash.
 */
#ifndef KNUT_ICEBERG_H
#define KNUT_ICEBERG_H

#include <stddef.h>
#include <stdint.h>

#include "knut/arrow.h"
#include "knut/core.h"
#include "knut/duck.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest metadata JSON file read, and largest Avro (manifest) file. */
#define KNUT_ICEBERG_METADATA_MAX ((size_t)64 << 20)
#define KNUT_ICEBERG_AVRO_MAX ((size_t)256 << 20)

/* ---- catalogs (catalog.c) ---------------------------------------------- */

typedef enum knut_iceberg_catalog_kind {
    /* A table folder (the filesystem/Hadoop layout: metadata/v<N>.metadata.json
     * and metadata/version-hint.text), or one *.metadata.json file. */
    KNUT_ICEBERG_CATALOG_PATH = 0,
    /* pyiceberg's / Java's SQL catalog in a SQLite file (table iceberg_tables). */
    KNUT_ICEBERG_CATALOG_SQLITE
} knut_iceberg_catalog_kind;

typedef struct knut_iceberg_ref {
    knut_iceberg_catalog_kind kind;
    const char *path;       /* PATH: the folder or file; SQLITE: the database file */
    const char *catalog;    /* SQLITE: catalog_name; NULL = "default" */
    const char *identifier; /* SQLITE: "namespace.table"; the last dot splits */
} knut_iceberg_ref;

/*
 * Finds the current metadata file of ref; *out (malloc'd) is a local path.
 * PATH folders: version-hint.text when present and pointing at an existing
 * file, else the highest v<N>.metadata.json (and then the highest
 * NNNNN-*.metadata.json). Errors: KNUT_ENOTFOUND naming what was looked
 * for; KNUT_EUNSUPPORTED for a metadata location that is not a local file.
 */
KNUT_EXTERN knut_status knut_iceberg_catalog_locate(const knut_iceberg_ref *ref, char **out,
                                                    knut_error *err);

/*
 * A location written in metadata (file:/x, file:///x, file://localhost/x or
 * a bare /x) as a local path in *out (malloc'd). A relative location is
 * taken under base (the table location; may be NULL). Any other scheme
 * (s3://, hdfs://, ...) is KNUT_EUNSUPPORTED naming it.
 */
KNUT_EXTERN knut_status knut_iceberg_path_local(const char *uri, const char *base, char **out,
                                                knut_error *err);

/* ---- table metadata (metadata.c) ---------------------------------------- */

typedef struct knut_iceberg_field {
    int32_t id;
    char *name;
    /* The type as written for a primitive ("long", "decimal(9, 2)",
     * "fixed[16]"), or "struct", "list", "map" for nested types. */
    char *type;
    int required;
    /* struct: its fields; list: one child named "element"; map: "key" then
     * "value" (each with its own id). */
    struct knut_iceberg_field *children;
    size_t n_children;
} knut_iceberg_field;

typedef struct knut_iceberg_schema {
    int32_t schema_id;
    knut_iceberg_field *fields;
    size_t n_fields;
} knut_iceberg_schema;

typedef struct knut_iceberg_partition_field {
    int32_t source_id;
    int32_t field_id;
    char *name;
    char *transform; /* "identity", "bucket[16]", "day", ... as written */
} knut_iceberg_partition_field;

typedef struct knut_iceberg_spec {
    int32_t spec_id;
    knut_iceberg_partition_field *fields;
    size_t n_fields;
} knut_iceberg_spec;

typedef struct knut_iceberg_snapshot {
    int64_t snapshot_id;
    int64_t parent_id;       /* -1: no parent */
    int64_t sequence_number; /* 0 in v1 tables */
    int64_t timestamp_ms;
    int32_t schema_id;       /* -1: not recorded */
    char *manifest_list;     /* as written (a URI); see knut_iceberg_path_local */
    char *operation;         /* summary "operation" ("append", ...); never NULL */
    char **summary_keys;     /* the rest of the summary, in file order */
    char **summary_values;
    size_t n_summary;
} knut_iceberg_snapshot;

typedef struct knut_iceberg_table {
    char *metadata_path; /* the local file it was read from */
    int format_version;  /* 1 or 2 */
    char *uuid;
    char *location;
    int64_t last_sequence_number;
    int64_t last_updated_ms;
    int32_t last_column_id;
    int64_t current_snapshot_id; /* -1: none (missing, null or -1 in the file) */
    int32_t current_schema_id;
    int32_t default_spec_id;
    knut_iceberg_schema *schemas; /* v1's single "schema" becomes schemas[0] */
    size_t n_schemas;
    knut_iceberg_spec *specs;     /* v1's "partition-spec" becomes spec 0 */
    size_t n_specs;
    knut_iceberg_snapshot *snapshots; /* in file order */
    size_t n_snapshots;
    char **prop_keys;
    char **prop_values;
    size_t n_props;
} knut_iceberg_table;

/*
 * Reads and parses a metadata file (at most KNUT_ICEBERG_METADATA_MAX bytes;
 * *.gz.metadata.json and *.metadata.json.gz are gunzipped). Refused, with
 * an error naming the file and the field: a format-version other than 1 or
 * 2, a missing required field, a field of the wrong JSON type, a current
 * schema/spec/snapshot id that no entry has.
 */
KNUT_EXTERN knut_status knut_iceberg_table_load(knut_iceberg_table **out, const char *path,
                                                knut_error *err);
/* The same from text; name is used in errors (and kept as metadata_path). */
KNUT_EXTERN knut_status knut_iceberg_table_parse(knut_iceberg_table **out, const char *json,
                                                 size_t len, const char *name, knut_error *err);
KNUT_EXTERN void knut_iceberg_table_free(knut_iceberg_table *t);

/* Lookups; NULL when absent. */
KNUT_EXTERN const knut_iceberg_snapshot *knut_iceberg_table_snapshot(const knut_iceberg_table *t,
                                                                     int64_t snapshot_id);
KNUT_EXTERN const knut_iceberg_schema *knut_iceberg_table_schema(const knut_iceberg_table *t,
                                                                 int32_t schema_id);
KNUT_EXTERN const knut_iceberg_spec *knut_iceberg_table_spec(const knut_iceberg_table *t,
                                                             int32_t spec_id);
KNUT_EXTERN const char *knut_iceberg_table_property(const knut_iceberg_table *t, const char *key);

/* ---- manifest lists and manifests (manifest.c, over avro.c) ------------- */

typedef struct knut_iceberg_manifest_file {
    char *path;                  /* as written (a URI) */
    int64_t length;
    int32_t spec_id;
    int content;                 /* 0 data, 1 deletes (v1: 0) */
    int64_t sequence_number;     /* v1: 0 */
    int64_t min_sequence_number; /* v1: 0 */
    int64_t added_snapshot_id;
    int32_t added_files, existing_files, deleted_files;
    int64_t added_rows, existing_rows, deleted_rows;
} knut_iceberg_manifest_file;

typedef enum knut_iceberg_entry_status {
    KNUT_ICEBERG_EXISTING = 0,
    KNUT_ICEBERG_ADDED = 1,
    KNUT_ICEBERG_DELETED = 2
} knut_iceberg_entry_status;

typedef enum knut_iceberg_content {
    KNUT_ICEBERG_DATA = 0,
    KNUT_ICEBERG_POSITION_DELETES = 1,
    KNUT_ICEBERG_EQUALITY_DELETES = 2
} knut_iceberg_content;

/* One manifest entry with its data_file, sequence numbers and snapshot id
 * already inherited from the manifest (the spec's inheritance rules). */
typedef struct knut_iceberg_data_file {
    knut_iceberg_entry_status status;
    int64_t snapshot_id;
    int64_t sequence_number;      /* the data sequence number */
    int64_t file_sequence_number;
    knut_iceberg_content content;
    char *path;                   /* as written (a URI) */
    char *format;                 /* "parquet", "avro", "orc", ... lower case */
    int64_t record_count;
    int64_t file_size;
    int32_t spec_id;              /* the manifest's */
    /* The partition tuple as a JSON array of its values in spec order
     * (e.g. [3,"x"]; "[]" when unpartitioned): equal tuples have equal text. */
    char *partition;
    int32_t *equality_ids;        /* equality deletes: the key field ids */
    size_t n_equality_ids;
    char *referenced_data_file;   /* position deletes / DVs; NULL if absent */
} knut_iceberg_data_file;

/*
 * Reads a manifest list (at most KNUT_ICEBERG_AVRO_MAX bytes). Avro codecs
 * null, deflate and snappy; another codec (zstandard, ...) is
 * KNUT_EUNSUPPORTED naming the file and the codec. Header keys are not
 * required; v1 lists read content/sequence numbers as 0.
 */
KNUT_EXTERN knut_status knut_iceberg_manifest_list_read(const char *path,
                                                        knut_iceberg_manifest_file **out,
                                                        size_t *n, knut_error *err);
KNUT_EXTERN knut_status knut_iceberg_manifest_list_parse(const void *data, size_t len,
                                                         const char *name,
                                                         knut_iceberg_manifest_file **out,
                                                         size_t *n, knut_error *err);
KNUT_EXTERN void knut_iceberg_manifest_list_free(knut_iceberg_manifest_file *m, size_t n);

/*
 * Reads the entries of one manifest; mf (the manifest list's row for it)
 * gives what entries inherit. Every entry is returned, DELETED ones too.
 */
KNUT_EXTERN knut_status knut_iceberg_manifest_read(const char *path,
                                                   const knut_iceberg_manifest_file *mf,
                                                   knut_iceberg_data_file **out, size_t *n,
                                                   knut_error *err);
KNUT_EXTERN knut_status knut_iceberg_manifest_parse(const void *data, size_t len,
                                                    const char *name,
                                                    const knut_iceberg_manifest_file *mf,
                                                    knut_iceberg_data_file **out, size_t *n,
                                                    knut_error *err);
KNUT_EXTERN void knut_iceberg_data_files_free(knut_iceberg_data_file *f, size_t n);

/* ---- scans (scan.c) ------------------------------------------------------ */

/* The live files of one snapshot: data files, and the delete files that
 * apply to them. */
typedef struct knut_iceberg_plan {
    int64_t snapshot_id;
    int32_t schema_id;
    knut_iceberg_data_file *data;
    size_t n_data;
    knut_iceberg_data_file *deletes;
    size_t n_deletes;
} knut_iceberg_plan;

/*
 * Plans a scan of snapshot_id (-1: the current snapshot; a table without
 * one plans to no files). Reads the manifest list and every manifest; keeps
 * EXISTING and ADDED entries. Data files in a format other than Parquet
 * (DuckDB has no ORC reader; Avro data files are not read yet) are
 * KNUT_EUNSUPPORTED naming the file.
 */
KNUT_EXTERN knut_status knut_iceberg_plan_build(knut_iceberg_plan *out,
                                                const knut_iceberg_table *t,
                                                int64_t snapshot_id, knut_error *err);
KNUT_EXTERN void knut_iceberg_plan_free(knut_iceberg_plan *p);

/*
 * The rows of a plan as one parenthesised DuckDB SELECT appended to b:
 * the snapshot's schema's columns (top-level, by field id), position deletes applied where the
 * delete's data sequence number is >= the data file's, equality deletes
 * where it is >, both within the same partition (equality deletes of an
 * unpartitioned spec apply everywhere). Nested columns are
 * KNUT_EUNSUPPORTED naming the column.
 */
KNUT_EXTERN knut_status knut_iceberg_plan_sql(knut_buf *b, const knut_iceberg_table *t,
                                              const knut_iceberg_plan *p, knut_error *err);

/*
 * Plans and runs a scan of snapshot_id on conn, streaming its rows in
 * DuckDB's batches (memory bounded by the batch, not the table); limit > 0
 * stops after that many rows. A Parquet file without field ids is
 * KNUT_EUNSUPPORTED naming it (reading by the table's name mapping is not
 * built), rather than rows of NULLs.
 */
KNUT_EXTERN knut_status knut_iceberg_scan(knut_duck_conn *conn, const knut_iceberg_table *t,
                                          int64_t snapshot_id, int64_t limit,
                                          struct ArrowArrayStream *out, knut_error *err);

/* ---- changelogs (changes.c) ---------------------------------------------- */

/*
 * The row-level changes after snapshot from_id up to and including to_id
 * (-1: the current snapshot) as one DuckDB SELECT in b: the columns of
 * to_id's schema (by field id) plus _change_type ('DELETE' or 'INSERT'),
 * _change_ordinal (the commit's place in the window, from 0) and
 * _commit_snapshot_id, ordered by commit with a commit's DELETEs first.
 * An append contributes the rows of the files it added; a replace
 * nothing; any other commit (delete, overwrite: copy-on-write, position or
 * equality deletes) the difference of what it took away and what it added,
 * read from the files it changed only.
 * from_id = -1 means from the start: every row of to_id as an INSERT.
 * A from_id that is not an ancestor of to_id (expired, rolled back) is
 * KNUT_ENOTFOUND saying a full resync is needed.
 */
KNUT_EXTERN knut_status knut_iceberg_changes_sql(knut_buf *b, const knut_iceberg_table *t,
                                                 int64_t from_id, int64_t to_id,
                                                 knut_error *err);
/* Runs it on conn, streaming the changes in DuckDB's batches; limit > 0
 * stops after that many rows. */
KNUT_EXTERN knut_status knut_iceberg_changes(knut_duck_conn *conn, const knut_iceberg_table *t,
                                             int64_t from_id, int64_t to_id, int64_t limit,
                                             struct ArrowArrayStream *out, knut_error *err);

/* ---- appends (write.c, manifest_write.c, metadata_write.c, commit.c) ---- */

typedef struct knut_iceberg_append_options {
    /* A new table's location (a folder or file: URI); NULL: a path table's
     * own folder, or <the SQLite file's folder>/<namespace>.db/<name>. */
    const char *location;
    const char *compression; /* Parquet codec; NULL: zstd (zstd at level 1) */
    int max_attempts;        /* commits tried before giving up; 0: 10 */
} knut_iceberg_append_options;

#define KNUT_ICEBERG_APPEND_OPTIONS_INIT {NULL, NULL, 0}

typedef struct knut_iceberg_append_result {
    int created;             /* 1: this append created the table */
    int64_t rows;            /* rows appended */
    int64_t snapshot_id;     /* the new snapshot; -1 when none (no rows) */
    int64_t sequence_number;
    int attempts;            /* commits tried: 1 unless another writer came first */
    char *metadata_path;     /* the new current metadata file; NULL if none */
} knut_iceberg_append_result;

KNUT_EXTERN void knut_iceberg_append_result_reset(knut_iceberg_append_result *r);

/*
 * Appends the rows of query (one DuckDB SELECT, run on conn) to the table
 * ref names, creating it (format v2, unpartitioned, schema from the
 * query's result types, field ids 1..n) when it does not exist. The rows
 * become one Parquet data file written by DuckDB with the table's field
 * ids, a manifest and a new snapshot (operation append, sequence number
 * last + 1, the parent's manifests carried over), committed atomically:
 * a compare-and-swap of the SQL catalog's row, or a v<N+1>.metadata.json
 * that only one writer can create. When another writer commits first the
 * snapshot is rebuilt on the new current metadata (the data file is
 * reused) and committed again, up to max_attempts times with backoff.
 * Query columns are matched to the table's by name and cast to its types.
 * Errors, with nothing committed and the files written removed: a column
 * type Iceberg lacks (UBIGINT, INTERVAL, nested types, nanosecond
 * timestamps: KNUT_EUNSUPPORTED naming the column), a column the table
 * does not have, a v1 or a partitioned table, a SQLite file that is not
 * there (catalogs are not created), the query's own errors, KNUT_EAGAIN
 * after max_attempts conflicts. No rows: nothing is committed (a new
 * table is still created, empty).
 */
KNUT_EXTERN knut_status knut_iceberg_append(knut_duck_conn *conn, const knut_iceberg_ref *ref,
                                            const char *query,
                                            const knut_iceberg_append_options *o,
                                            knut_iceberg_append_result *res, knut_error *err);

#ifdef __cplusplus
}
#endif

#endif /* KNUT_ICEBERG_H */
