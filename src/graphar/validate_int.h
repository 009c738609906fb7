/*
 * Internals of the GraphAr validator (validate*.c): the rule table, the
 * validation context shared by the info-level and data-level passes, and
 * the small SQL / filesystem helpers the data passes use. Not public.
 *
 * Every rule has a stable id and a fixed severity; the table here is the
 * one source for the issue list, `knut gar validate --list-rules` and the
 * docs, so they cannot drift apart.
 */
#ifndef KNUT_GRAPHAR_VALIDATE_INT_H
#define KNUT_GRAPHAR_VALIDATE_INT_H

#include "graphar_int.h"
#include "knut/duck.h"

/* X(enum suffix, id, severity E/W, meaning) */
#define GV_RULES(X)                                                                              \
    X(INFO_UNREADABLE, "info.unreadable", E, "an info YAML file cannot be read (missing, "       \
                                             "unreadable or over the size limit)")               \
    X(YAML_PARSE, "yaml.parse", E, "an info file is not valid YAML, or its root is not a map")   \
    X(INFO_LOAD, "info.load", E, "the loader refused an info file for a reason no more "         \
                                 "specific rule names (a value of the wrong kind, ...)")         \
    X(FIELD_MISSING, "field.missing", E, "a required field is missing or empty (type, "          \
                                         "src_type, name, data_type, file_type, ordered, ...)")  \
    X(CHUNK_SIZE_INVALID, "chunk_size.invalid", E, "chunk_size, src_chunk_size or "              \
                                                   "dst_chunk_size is not an integer > 0")       \
    X(VERSION_BAD, "version.bad", E, "`version` is not gar/v1 (optionally with a type list)")    \
    X(VERSION_MISSING, "version.missing", W, "an info file has no `version`")                    \
    X(GRAPH_NAME_EMPTY, "graph.name_empty", E, "the graph `name` is empty")                      \
    X(GRAPH_EMPTY, "graph.empty", W, "the graph lists no vertex or edge infos (is PATH a graph "   \
                                     "YAML?)")                                                   \
    X(PREFIX_EMPTY, "prefix.empty", E, "the graph `prefix` is given as an empty string")         \
    X(PREFIX_NO_SLASH, "prefix.no_slash", W, "a given prefix does not end in '/'")               \
    X(PREFIX_NOT_FOUND, "prefix.not_found", W, "the graph prefix directory does not exist; "     \
                                               "data is looked for beside the graph YAML")       \
    X(FILE_EXTENSION, "file.extension", W, "a listed info file does not end in .yml/.yaml")      \
    X(VERTEX_DUPLICATE, "vertex.duplicate", E, "two vertex infos have the same type")            \
    X(EDGE_DUPLICATE, "edge.duplicate", E, "two edge infos have the same "                       \
                                           "(src_type, edge_type, dst_type)")                    \
    X(INFO_LEGACY_KEYS, "info.legacy_keys", E, "pre-v0.13 keys label/src_label/edge_label/"      \
                                               "dst_label: the reference reads an empty type")   \
    X(LABEL_DUPLICATE, "label.duplicate", W, "a vertex label is listed twice")                   \
    X(GROUP_EMPTY, "group.empty", E, "a property group has no properties")                       \
    X(FILE_TYPE_UNKNOWN, "file_type.unknown", E, "`file_type` is not csv, parquet, orc or json") \
    X(FILE_TYPE_JSON, "file_type.json", E, "`file_type: json`: readable, but invalid for the "    \
                                           "reference (csv, parquet, orc only)")                 \
    X(CSV_LIST, "csv.list", E, "a list type or non-single cardinality in a CSV group")           \
    X(TYPE_UNKNOWN, "type.unknown", E, "`data_type` is not a GraphAr type")                      \
    X(CARDINALITY_UNKNOWN, "cardinality.unknown", E, "`cardinality` is not single, list or set") \
    X(CARDINALITY_EDGE, "cardinality.edge", E, "non-single cardinality on an edge property")     \
    X(PROPERTY_DUPLICATE, "property.duplicate", E, "a property name appears twice in one "       \
                                                   "vertex or edge (any groups)")                \
    X(PROPERTY_RESERVED, "property.reserved", E, "a property uses a reserved column name "       \
                                                 "(_graphArVertexIndex, _graphArSrcIndex, ...)") \
    X(PROPERTY_PRIMARY_MULTIPLE, "property.primary_multiple", W, "a vertex type has several "    \
                                                                 "primary keys")                 \
    X(PROPERTY_PRIMARY_MISSING, "property.primary_missing", W, "a vertex type with properties "  \
                                                               "has no primary key")             \
    X(PROPERTY_PRIMARY_NULLABLE, "property.primary_nullable", W, "a primary key declares "       \
                                                                 "is_nullable: true (read as "   \
                                                                 "false)")                       \
    X(EDGE_VERTEX_TYPE_MISSING, "edge.vertex_type_missing", E, "an edge's src_type or dst_type " \
                                                               "has no vertex info")             \
    X(EDGE_CHUNK_SIZE_MISMATCH, "edge.chunk_size_mismatch", E, "src_chunk_size/dst_chunk_size "  \
                                                               "differs from that vertex "       \
                                                               "type's chunk_size")              \
    X(EDGE_DIRECTED_MISSING, "edge.directed_missing", W, "an edge info has no `directed` "       \
                                                         "(read as false)")                      \
    X(ADJ_LIST_NONE, "adj_list.none", E, "an edge info has no adj_lists")                        \
    X(ADJ_LIST_DUPLICATE, "adj_list.duplicate", E, "two adj lists of one edge have the same "    \
                                                   "type")                                       \
    X(ADJ_LIST_ALIGNED_BY, "adj_list.aligned_by", W, "`aligned_by` is neither src nor dst "      \
                                                     "(read as dst)")                            \
    X(ADJ_LIST_LEGACY_GROUPS, "adj_list.legacy_groups", W, "legacy adj_lists[].property_groups " \
                                                           "(ignored by the reference)")         \
    X(DATA_ABSENT, "data.absent", W, "a vertex or edge type has no data files at all "           \
                                     "(metadata-only graph)")                                    \
    X(DATA_MISSING, "data.missing", E, "as data.absent, with --require-data")                    \
    X(CONTENTS_UNCHECKED, "contents.unchecked", W, "ORC/JSON chunks: existence checked, "        \
                                                   "contents not read")                          \
    X(COUNT_MISSING, "count.missing", E, "a vertex_count or edge_count<i> file is missing")       \
    X(COUNT_SIZE, "count.size", E, "a count file is not exactly 8 bytes")                        \
    X(COUNT_NEGATIVE, "count.negative", E, "a count file holds a negative number")               \
    X(COUNT_MISMATCH, "count.mismatch", E, "two counts disagree (adj-list vertex_count vs the "  \
                                           "vertex type's; edge totals across adj lists)")       \
    X(COUNT_EXTRA, "count.extra", W, "an edge_count<i> file beyond the number of parts")         \
    X(CHUNK_MISSING, "chunk.missing", E, "expected chunk files (or their directory) are missing "\
                                         "at the end of the numbering")                          \
    X(CHUNK_GAP, "chunk.gap", E, "chunk numbering has a gap: a chunk is missing while a later "  \
                                 "one exists")                                                   \
    X(CHUNK_EXTRA, "chunk.extra", W, "a chunk beyond the expected number of chunks")             \
    X(CHUNK_UNREADABLE, "chunk.unreadable", E, "a chunk file cannot be read as its file_type")   \
    X(CHUNK_ROWS, "chunk.rows", E, "a chunk has the wrong number of rows for its count")         \
    X(PART_EXTRA, "part.extra", W, "a part<i> directory beyond the number of parts")             \
    X(PART_EMPTY, "part.empty", W, "a part<i> directory without chunks (a part with 0 edges)")   \
    X(COLUMN_MISSING, "column.missing", E, "a property (or reserved) column is missing from a "  \
                                           "chunk")                                              \
    X(COLUMN_EXTRA, "column.extra", W, "a chunk has a column its group does not declare")        \
    X(COLUMN_ORDER, "column.order", W, "a chunk's columns are not in YAML order")                \
    X(COLUMN_TYPE_MISMATCH, "column.type_mismatch", E, "a column's type does not match its "     \
                                                       "data_type (CSV: a value does not parse)")\
    X(COLUMN_NULL, "column.null", E, "a primary or non-nullable column holds nulls")             \
    X(COLUMN_INDEX_MISSING, "column.index_missing", W, "vertex chunks lack _graphArVertexIndex " \
                                                       "(legacy data)")                          \
    X(COLUMN_INDEX_VALUE, "column.index_value", E, "_graphArVertexIndex differs from "           \
                                                   "chunk * chunk_size + row")                   \
    X(COLUMN_SET_DUPLICATE, "column.set_duplicate", E, "a `set` cardinality value repeats an "   \
                                                       "element")                                \
    X(LABELS_MISSING, "labels.missing", W, "labels are declared but there are no label chunks")  \
    X(ADJ_LIST_DATA_MISSING, "adj_list.data_missing", E, "an adj list has no data while "        \
                                                         "another adj list of the edge has")     \
    X(ADJ_NULL, "adj.null", E, "an adjacency chunk has a null source or destination index")      \
    X(ADJ_SRC_RANGE, "adj.src_range", E, "a source index is outside [0, source vertex count)")    \
    X(ADJ_DST_RANGE, "adj.dst_range", E, "a destination index is outside [0, destination "       \
                                         "vertex count)")                                        \
    X(ADJ_PARTITION, "adj.partition", E, "an edge is in the wrong part for its aligned vertex")  \
    X(ADJ_UNSORTED, "adj.unsorted", E, "an ordered adj list is not sorted by its aligned index") \
    X(OFFSET_MISSING, "offset.missing", E, "offset/chunk<i> is missing for an ordered adj list") \
    X(OFFSET_INT32, "offset.int32", W, "offsets stored as int32 (Spark) instead of int64")       \
    X(OFFSET_LENGTH, "offset.length", E, "an offset chunk has neither vertices_in_chunk+1 nor "  \
                                         "chunk_size+1 rows")                                    \
    X(OFFSET_FIRST, "offset.first", E, "an offset chunk does not start at 0")                    \
    X(OFFSET_NON_MONOTONIC, "offset.non_monotonic", E, "offsets decrease")                       \
    X(OFFSET_LAST, "offset.last", E, "the offset after the last vertex (and any padding) is not "\
                                     "edge_count<i>")                                            \
    X(OFFSET_DEGREE, "offset.degree", E, "an offset difference is not the number of edges of "   \
                                         "that vertex")                                          \
    X(OFFSET_UNEXPECTED, "offset.unexpected", W, "an unordered adj list has an offset "          \
                                                 "directory")

typedef enum gv_rule {
#define GV_X_ENUM(name, id, sev, meaning) GV_##name,
    GV_RULES(GV_X_ENUM)
#undef GV_X_ENUM
    GV_N_RULES
} gv_rule;

/* The validation state one run shares across its files. */
typedef struct gv_ctx {
    knut_graphar_validate_options opts;
    knut_graphar_issues *issues;
    size_t cap;           /* most issues kept */
    knut_status fatal;    /* OOM or an engine failure: the run fails */
    knut_error *err;

    const knut_graphar_graph_info *gi;
    /* The infos to check; an entry is NULL where its file failed to load
     * (that failure is already an issue). files[i] names where it came from. */
    knut_graphar_vertex_info **vertices;
    size_t n_vertices;
    knut_graphar_edge_info **edges;
    size_t n_edges;
    const char *graph_file;  /* the graph YAML path, or NULL */
    char **failed_types;     /* vertex types whose file failed to load */
    size_t n_failed_types;
    char *root;              /* data root (prefix or fallback), '/'-terminated or "" */
    int64_t *vcount;         /* per vertex info: vertex_count, -1 unknown */

    knut_duck_db *db;        /* opened lazily by the data passes */
    knut_duck_conn *conn;
} gv_ctx;

/* ---- issues (validate.c) ------------------------------------------------ */

/* Adds an issue (file/field may be NULL). pos, when line > 0, is appended
 * to file as ":line:col"; past the cap it is only counted. Sets c->fatal on OOM. */
void knut_graphar__validate_issue(gv_ctx *c, gv_rule rule, const char *file,
                                  const knut_graphar_pos *pos, const char *field, const char *fmt,
                                  ...) KNUT_PRINTF(6, 7);
/* Records an engine/OOM failure that ends the run (keeps the first). */
void knut_graphar__validate_fail(gv_ctx *c, knut_status st, const knut_error *sub);
static inline int gv_done(const gv_ctx *c)
{
    return c->fatal != KNUT_OK;
}

/* ---- info passes (validate_info.c) ---------------------------------------- */

/* Checks the loaded infos and the graph's own fields. */
void knut_graphar__validate_infos(gv_ctx *c);
/* Classifies why an info file failed to load by walking its YAML tree for
 * the faults the loader refuses (unknown types, bad versions, ...). kind is
 * 'g', 'v' or 'e'. Reports them; returns how many were reported, so the
 * caller falls back to a generic info.load issue when it is 0. */
size_t knut_graphar__validate_prescan(gv_ctx *c, const knut_conf *root, const char *file, int kind);

/* ---- data passes (validate_vertex.c, validate_edge.c) --------------------- */

void knut_graphar__validate_vertex_data(gv_ctx *c, size_t vi_index);

/* What a group has already reported, so chunk-wide facts appear once. */
typedef struct gv_group_flags {
    int index_missing;
    int order;
} gv_group_flags;
/*
 * Checks one property-group chunk: columns (names, order, Parquet types),
 * row count == want_rows (what explains it in messages), nulls in
 * primary/non-nullable columns, CSV values that do not parse, set
 * duplicates. index_base >= 0: a vertex chunk whose _graphArVertexIndex
 * must be index_base + row; -1: an edge property chunk (no index column).
 */
void knut_graphar__validate_group_chunk(gv_ctx *c, const knut_graphar_property_group *g,
                                        const char *path, int64_t want_rows, int64_t index_base,
                                        const char *what, gv_group_flags *fl);
void knut_graphar__validate_edge_data(gv_ctx *c, size_t ei_index);

/* One adj list being checked (validate_edge.c, validate_offset.c). */
typedef struct gv_adj_run {
    gv_ctx *c;
    const knut_graphar_edge_info *ei;
    const knut_graphar_adj_list *al;
    int ordered, by_src;
    int64_t vcs, ecs;       /* aligned vertex chunk size, edge chunk size */
    int64_t m;              /* aligned vertex count */
    int64_t n_src, n_dst;   /* vertex counts, -1 unknown */
    int offset_int32_said;
    gv_group_flags *gflags; /* per edge property group */
    int *gdir_said;         /* "group directory missing" already reported */
    knut_buf path, sql;
} gv_adj_run;

/* Checks offset/chunk<part> at path against edge_count<part> = edges (-1
 * unknown). degrees_ok: every adjacency chunk of the part was read, so the
 * _gv_deg temp table holds the part's degrees. */
void knut_graphar__validate_offset(gv_adj_run *r, int64_t part, const char *path, int64_t edges,
                                   int degrees_ok);

/* ---- helpers (validate_sql.c) --------------------------------------------- */

/* Sorted, unique indices N of the entries `<stem>N` in dir (N decimal, no
 * sign, no leading zeros beyond "0"). Missing dir: *n = 0, *exists = 0. */
typedef struct gv_index_set {
    int64_t *v;
    size_t n;
    int exists;     /* the directory exists */
    size_t others;  /* entries that did not match */
} gv_index_set;
knut_status knut_graphar__validate_index_scan(gv_index_set *out, const char *dir, const char *stem,
                                              knut_error *err);
void knut_graphar__validate_index_reset(gv_index_set *s);
int knut_graphar__validate_index_has(const gv_index_set *s, int64_t i);

/* Reports missing runs of [0, expected) against s as chunk.missing /
 * chunk.gap (miss_rule/gap_rule), and entries >= expected as extra_rule,
 * naming dir + stem + index. One issue per run. */
void knut_graphar__validate_index_report(gv_ctx *c, const gv_index_set *s, int64_t expected,
                                         const char *dir, const char *stem, gv_rule miss_rule,
                                         gv_rule gap_rule, gv_rule extra_rule, const char *what);

/* 1 if path is an existing directory / regular file. */
int knut_graphar__validate_is_dir(const char *path);
int knut_graphar__validate_is_file(const char *path);

/* Reads a count file: 1 ok (*out set), 0 absent (no issue), -1 bad (issue
 * reported: count.size / count.negative / count.missing for unreadable). */
int knut_graphar__validate_count_read(gv_ctx *c, const char *path, int64_t *out);

/* Opens the engine if needed; 0 on success (else c->fatal is set). */
int knut_graphar__validate_sql_open(gv_ctx *c);

/* A chunk's columns: names and DuckDB type names ("BIGINT", "VARCHAR[]"). */
typedef struct gv_columns {
    char **name;
    char **type;
    size_t n;
} gv_columns;
void knut_graphar__validate_columns_reset(gv_columns *cols);
/* -1 if absent. */
ptrdiff_t knut_graphar__validate_columns_find(const gv_columns *cols, const char *name);

/* Describes the chunk at path (CSV: all VARCHAR). On failure reports
 * chunk.unreadable and returns -1 (0 on success). */
int knut_graphar__validate_sql_describe(gv_ctx *c, const char *path, knut_graphar_file_type ft,
                                        gv_columns *out);

/*
 * Appends the FROM source of one chunk: its columns plus _gv_rn, the row
 * number in the file (0-based). The path is bound as $1.
 */
void knut_graphar__validate_sql_source(knut_buf *sql, knut_graphar_file_type ft);
/* Appends TRY_CAST("name" AS BIGINT). */
void knut_graphar__validate_sql_int_col(knut_buf *sql, const char *name);

/* Runs sql (with $1 = path if path is non-NULL) and reads the first row's
 * n integer columns into vals (NULL: isnull[k] = 1, vals[k] = 0). No row:
 * all null. On failure reports chunk.unreadable naming path and returns -1. */
int knut_graphar__validate_sql_ints(gv_ctx *c, const char *sql, const char *path, int64_t *vals,
                                    int *isnull, size_t n);
/* Runs sql (no rows wanted), $1 = path if non-NULL; -1 + chunk.unreadable. */
int knut_graphar__validate_sql_exec(gv_ctx *c, const char *sql, const char *path);

/* Does a DuckDB column type fit the property's data type / cardinality?
 * Sets *expect to the wanted spelling for messages. */
int knut_graphar__validate_type_matches(const knut_graphar_property *p, const char *duck_type,
                                        const char **expect);
/* The DuckDB cast target used to check CSV values of p, or NULL when any
 * text fits (string) or no check applies (lists). */
const char *knut_graphar__validate_csv_cast_type(const knut_graphar_property *p);

/* The readable chunk formats (DuckDB reads Parquet and CSV). */
static inline int gv_readable(knut_graphar_file_type ft)
{
    return ft == KNUT_GRAPHAR_FILE_PARQUET || ft == KNUT_GRAPHAR_FILE_CSV;
}

/* Fails the run (OOM) if b is in error; returns 1 then. */
static inline int gv_buf_oom(gv_ctx *c, const knut_buf *b)
{
    if (b->error) {
        knut_graphar__validate_fail(c, KNUT_ENOMEM, NULL);
        return 1;
    }
    return 0;
}

/* Copies path up to and including its last '/' into out (cleared first). */
void knut_graphar__validate_dirname(knut_buf *out, const char *path);

#endif
