/*
 * Internals of the append writer, shared by write.c (the append itself),
 * metadata_write.c (the metadata JSON of a new table and of a new
 * snapshot) and commit.c (loading the base a commit builds on and swapping
 * the catalog's pointer from it to the new metadata file).
 */
#ifndef KNUT_ICEBERG_WRITE_INT_H
#define KNUT_ICEBERG_WRITE_INT_H

#include <jansson.h>

#include "iceberg_int.h"

/* One column written: its Iceberg field id and type, and the DuckDB type
 * the query's column is cast to so the Parquet type is Iceberg's. */
typedef struct knut_iceberg__col {
    char *name;
    int32_t id;
    const char *type; /* Iceberg: "long", "string", or the decimal below */
    const char *duck; /* DuckDB: "BIGINT", ... */
    char decimal[32]; /* "decimal(P, S)" / "DECIMAL(P,S)" storage */
    char duck_decimal[32];
} knut_iceberg__col;

/* What a commit builds on: the table as the catalog has it now. */
typedef struct knut_iceberg__base {
    int exists;
    char *pointer;    /* SQL: metadata_location exactly as stored; path: the file */
    char *meta_path;  /* the current metadata file, a local path */
    long long number; /* its number: N of v<N> (path), NNNNN of NNNNN-... (SQL); -1 */
    json_t *root;     /* its JSON, changed in place by knut_iceberg__meta_append */
    knut_iceberg_table *t;
} knut_iceberg__base;

/*
 * Loads the base of ref (commit.c). A table that does not exist yet is
 * KNUT_OK with exists 0; a missing SQLite file, a database without
 * iceberg_tables, a table folder whose metadata is not named v<N>
 * .metadata.json (it belongs to a catalog), one metadata file given
 * instead of a folder: errors saying so.
 */
knut_status knut_iceberg__base_load(knut_iceberg__base *b, const knut_iceberg_ref *ref,
                                    knut_error *err);
void knut_iceberg__base_clear(knut_iceberg__base *b);

/*
 * Writes json[0..len) as the next metadata file in mdir (a local folder)
 * and makes it current, atomically, only if b is still current: SQL, the
 * file NNNNN-<uuid>.metadata.json then a compare-and-swap UPDATE of
 * iceberg_tables (an INSERT when b does not exist); path, v<N+1>.metadata
 * .json created with link() so that of two writers exactly one gets it,
 * then version-hint.text replaced by rename. uri_base is how the file is
 * named in the catalog (mdir as a URI). KNUT_EAGAIN when another commit
 * came first (the file written is removed again); *written (malloc'd) is
 * the new file's local path on success.
 */
knut_status knut_iceberg__commit(const knut_iceberg_ref *ref, const knut_iceberg__base *b,
                                 const char *mdir, const char *uri_base, const char *json,
                                 size_t len, char **written, knut_error *err);

/* The new snapshot of an append. */
typedef struct knut_iceberg__snap {
    int64_t id, parent_id, seq, timestamp_ms;
    int32_t schema_id;
    const char *manifest_list; /* URI */
    int64_t files, rows, bytes; /* added */
} knut_iceberg__snap;

/* The metadata of a new, empty v2 table (metadata_write.c): cols as its
 * schema 0 (all optional), unpartitioned, unsorted. */
knut_status knut_iceberg__meta_create(json_t **out, const char *location,
                                      const knut_iceberg__col *cols, size_t n, knut_error *err);
/* Adds s to root as the new current snapshot: snapshots, last-sequence-
 * number, current-snapshot-id, refs.main, snapshot-log, and metadata-log
 * (prev_uri, the metadata file root came from; NULL for a new table), the
 * summary's totals carried on from the parent's. */
knut_status knut_iceberg__meta_append(json_t *root, const char *prev_uri,
                                      const knut_iceberg__snap *s, knut_error *err);
/* The current schema object of root as JSON (malloc'd), for manifests. */
char *knut_iceberg__meta_schema_json(json_t *root, int32_t schema_id);

/* A random positive snapshot id no snapshot of t (may be NULL) has. */
int64_t knut_iceberg__snapshot_id_new(const knut_iceberg_table *t);

#endif
