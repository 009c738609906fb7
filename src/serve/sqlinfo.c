/*
 * CommandGetSqlInfo: what the server is and what its SQL knows, as the
 * protocol's (info_name uint32, value dense_union) rows. The union's six
 * children carry the value kinds (string, bool, bigint, int32 bitmask,
 * string list, int32 -> int32 list map) and its type ids equal the child
 * indexes, as the ADBC driver requires. Keywords, function lists and the
 * NULL ordering come from DuckDB itself; integer ids that ODBC reads as
 * int64 go in the bigint arm. An empty request lists every id; ids this
 * server does not know are left out.
 */
#include <stdlib.h>
#include <string.h>

#include "serve_int.h"

enum { ARM_STRING, ARM_BOOL, ARM_BIGINT, ARM_INT32, ARM_LIST, ARM_MAP, N_ARMS };

/* One info row: its id, arm and value (a query for string lists). */
typedef struct info {
    uint32_t id;
    int arm;
    const char *text; /* ARM_STRING; ARM_LIST: the query of one VARCHAR column */
    int64_t num;      /* ARM_BOOL, ARM_BIGINT, ARM_INT32 */
} info;

#define FUNCS(cat)                                                                             \
    "SELECT DISTINCT function_name FROM duckdb_functions() WHERE list_contains(categories, " cat \
    ") AND regexp_matches(function_name, '^[a-z][a-z0-9_]*$') ORDER BY 1"

/* DuckDB's categories hardly tell date functions: the scalar functions
 * that take or give a date, time, timestamp or interval. */
#define DATETIME_TYPES "['DATE', 'TIME', 'TIMESTAMP', 'TIMESTAMP WITH TIME ZONE', 'INTERVAL']"
#define DATETIME_FUNCS                                                                          \
    "SELECT DISTINCT function_name FROM duckdb_functions() WHERE function_type = 'scalar'"     \
    " AND (list_contains(" DATETIME_TYPES ", return_type) OR list_has_any(" DATETIME_TYPES     \
    ", parameter_types)) AND regexp_matches(function_name, '^[a-z][a-z0-9_]*$') ORDER BY 1"
/* System functions (what JDBC means: about the session and server) as
 * DuckDB names them: current_* and version. */
#define SYSTEM_FUNCS                                                                            \
    "SELECT DISTINCT function_name FROM duckdb_functions() WHERE function_type = 'scalar'"     \
    " AND (regexp_matches(function_name, '^current_[a-z_]*$') OR function_name = 'version')"   \
    " ORDER BY 1"

static const info infos[] = {
    {0, ARM_STRING, "knut", 0},                        /* FLIGHT_SQL_SERVER_NAME */
    {1, ARM_STRING, NULL, 0},                          /* ..._VERSION: filled in */
    {2, ARM_STRING, "Arrow columnar format 1.0, IPC metadata V5", 0}, /* ..._ARROW_VERSION */
    {3, ARM_BOOL, NULL, 1},                            /* ..._READ_ONLY */
    {4, ARM_BOOL, NULL, 1},                            /* ..._SQL */
    {5, ARM_BOOL, NULL, 0},                            /* ..._SUBSTRAIT */
    {8, ARM_INT32, NULL, 0},                           /* ..._TRANSACTION: NONE */
    {9, ARM_BOOL, NULL, 0},                            /* ..._CANCEL */
    {10, ARM_BOOL, NULL, 0},                           /* ..._BULK_INGESTION */
    {11, ARM_BOOL, NULL, 0},                           /* ..._INGEST_TRANSACTIONS_SUPPORTED */
    {100, ARM_INT32, NULL, 0},                         /* ..._STATEMENT_TIMEOUT: none */
    {101, ARM_INT32, NULL, 0},                         /* ..._TRANSACTION_TIMEOUT: none */
    {500, ARM_BOOL, NULL, 0},                          /* SQL_DDL_CATALOG (read-only) */
    {501, ARM_BOOL, NULL, 0},                          /* SQL_DDL_SCHEMA */
    {502, ARM_BOOL, NULL, 0},                          /* SQL_DDL_TABLE */
    {503, ARM_BIGINT, NULL, 1},                        /* SQL_IDENTIFIER_CASE: insensitive */
    {504, ARM_STRING, "\"", 0},                        /* SQL_IDENTIFIER_QUOTE_CHAR */
    {505, ARM_BIGINT, NULL, 1},                        /* SQL_QUOTED_IDENTIFIER_CASE */
    {506, ARM_BOOL, NULL, 1},                          /* SQL_ALL_TABLES_ARE_SELECTABLE */
    {507, ARM_BIGINT, NULL, -1},                       /* SQL_NULL_ORDERING: from DuckDB */
    {508, ARM_LIST, "SELECT keyword_name FROM duckdb_keywords() ORDER BY 1", 0},
    {509, ARM_LIST, FUNCS("'numeric'"), 0},            /* SQL_NUMERIC_FUNCTIONS */
    {510, ARM_LIST, FUNCS("'string'"), 0},             /* SQL_STRING_FUNCTIONS */
    {511, ARM_LIST, SYSTEM_FUNCS, 0},                  /* SQL_SYSTEM_FUNCTIONS */
    {512, ARM_LIST, DATETIME_FUNCS, 0},                /* SQL_DATETIME_FUNCTIONS */
    /* the name filters of the catalog commands are LIKE without ESCAPE */
    {513, ARM_STRING, "", 0},                          /* SQL_SEARCH_STRING_ESCAPE */
    {514, ARM_STRING, "", 0},                          /* SQL_EXTRA_NAME_CHARACTERS */
    {515, ARM_BOOL, NULL, 1},                          /* SQL_SUPPORTS_COLUMN_ALIASING */
    {516, ARM_BOOL, NULL, 1},                          /* SQL_NULL_PLUS_NULL_IS_NULL */
    /* DuckDB has no CONVERT function: an empty map */
    {517, ARM_MAP, NULL, 0},                           /* SQL_SUPPORTS_CONVERT */
    {518, ARM_BOOL, NULL, 1},                          /* ..._TABLE_CORRELATION_NAMES */
    {519, ARM_BOOL, NULL, 0},                          /* ..._DIFFERENT_CORRELATION_NAMES */
    {520, ARM_BOOL, NULL, 1},                          /* ..._EXPRESSIONS_IN_ORDER_BY */
    {521, ARM_BOOL, NULL, 1},                          /* ..._ORDER_BY_UNRELATED */
    {522, ARM_INT32, NULL, 3},                         /* SQL_SUPPORTED_GROUP_BY: both */
    {523, ARM_BOOL, NULL, 1},                          /* SQL_SUPPORTS_LIKE_ESCAPE_CLAUSE */
    {524, ARM_BOOL, NULL, 1},                          /* SQL_SUPPORTS_NON_NULLABLE_COLUMNS */
    {525, ARM_INT32, NULL, 3},                         /* SQL_SUPPORTED_GRAMMAR: minimum, core */
    {526, ARM_INT32, NULL, 3},                         /* ANSI92 level: entry, intermediate */
    {527, ARM_BOOL, NULL, 0},                          /* ..._INTEGRITY_ENHANCEMENT_FACILITY */
    {528, ARM_INT32, NULL, 2},                         /* SQL_OUTER_JOINS_SUPPORT_LEVEL: full */
    {529, ARM_STRING, "schema", 0},                    /* SQL_SCHEMA_TERM */
    {530, ARM_STRING, "procedure", 0},                 /* SQL_PROCEDURE_TERM */
    {531, ARM_STRING, "database", 0},                  /* SQL_CATALOG_TERM: DuckDB's word */
    {532, ARM_BOOL, NULL, 1},                          /* SQL_CATALOG_AT_START */
    {533, ARM_INT32, NULL, 0},                         /* SQL_SCHEMAS_SUPPORTED_ACTIONS */
    {534, ARM_INT32, NULL, 0},                         /* SQL_CATALOGS_SUPPORTED_ACTIONS */
    {535, ARM_INT32, NULL, 0},                         /* SQL_SUPPORTED_POSITIONED_COMMANDS */
    {536, ARM_BOOL, NULL, 0},                          /* SQL_SELECT_FOR_UPDATE_SUPPORTED */
    {537, ARM_BOOL, NULL, 0},                          /* SQL_STORED_PROCEDURES_SUPPORTED */
    {538, ARM_INT32, NULL, 15},                        /* SQL_SUPPORTED_SUBQUERIES: all four */
    {539, ARM_BOOL, NULL, 1},                          /* SQL_CORRELATED_SUBQUERIES_SUPPORTED */
    {540, ARM_INT32, NULL, 3},                         /* SQL_SUPPORTED_UNIONS: UNION, UNION ALL */
    /* SQL_MAX_* (541-555, 557-561): DuckDB has none of these limits, 0 */
    {541, ARM_BIGINT, NULL, 0}, {542, ARM_BIGINT, NULL, 0}, {543, ARM_BIGINT, NULL, 0},
    {544, ARM_BIGINT, NULL, 0}, {545, ARM_BIGINT, NULL, 0}, {546, ARM_BIGINT, NULL, 0},
    {547, ARM_BIGINT, NULL, 0}, {548, ARM_BIGINT, NULL, 0}, {549, ARM_BIGINT, NULL, 0},
    {550, ARM_BIGINT, NULL, 0}, {551, ARM_BIGINT, NULL, 0}, {552, ARM_BIGINT, NULL, 0},
    {553, ARM_BIGINT, NULL, 0}, {554, ARM_BIGINT, NULL, 0}, {555, ARM_BIGINT, NULL, 0},
    {556, ARM_BOOL, NULL, 1},                          /* SQL_MAX_ROW_SIZE_INCLUDES_BLOBS */
    {557, ARM_BIGINT, NULL, 0}, {558, ARM_BIGINT, NULL, 0}, {559, ARM_BIGINT, NULL, 0},
    {560, ARM_BIGINT, NULL, 0}, {561, ARM_BIGINT, NULL, 0},
    /* no transactions through the server (id 8): isolation NONE */
    {562, ARM_BIGINT, NULL, 0},                        /* SQL_DEFAULT_TRANSACTION_ISOLATION */
    {563, ARM_BOOL, NULL, 0},                          /* SQL_TRANSACTIONS_SUPPORTED */
    {564, ARM_INT32, NULL, 0},                         /* ..._TRANSACTIONS_ISOLATION_LEVELS */
    {565, ARM_BOOL, NULL, 0},                          /* ..._DDL_CAUSES_COMMIT */
    {566, ARM_BOOL, NULL, 0},                          /* ..._DDL_IN_TRANSACTIONS_IGNORED */
    /* results: forward only (bit 1), read only (bit 1) */
    {567, ARM_INT32, NULL, 2},                         /* SQL_SUPPORTED_RESULT_SET_TYPES */
    {568, ARM_INT32, NULL, 0},                         /* concurrencies, unspecified */
    {569, ARM_INT32, NULL, 2},                         /* ..._FORWARD_ONLY */
    {570, ARM_INT32, NULL, 0},                         /* ..._SCROLL_SENSITIVE */
    {571, ARM_INT32, NULL, 0},                         /* ..._SCROLL_INSENSITIVE */
    {572, ARM_BOOL, NULL, 0},                          /* SQL_BATCH_UPDATES_SUPPORTED */
    {573, ARM_BOOL, NULL, 0},                          /* SQL_SAVEPOINTS_SUPPORTED */
    {574, ARM_BOOL, NULL, 0},                          /* SQL_NAMED_PARAMETERS_SUPPORTED */
    {575, ARM_BOOL, NULL, 0},                          /* SQL_LOCATORS_UPDATE_COPY */
    {576, ARM_BOOL, NULL, 0},                          /* ..._FUNCTIONS_USING_CALL */
};
#define N_INFOS (sizeof infos / sizeof infos[0])

/* ---- the schema ---- */

static knut_status child(struct ArrowSchema *parent, int64_t i, const char *format,
                         const char *name, int nullable, int64_t n, knut_error *err)
{
    return knut_arrow_schema_init(parent->children[i], format, name,
                                  nullable ? ARROW_FLAG_NULLABLE : 0, n, err);
}

knut_status knut_serve__sqlinfo_schema(struct ArrowSchema *out, knut_error *err)
{
    knut_status st = knut_arrow_schema_init(out, "+s", NULL, 0, 2, err);
    if (st == KNUT_OK)
        st = child(out, 0, "I", "info_name", 0, 0, err);
    if (st == KNUT_OK)
        st = child(out, 1, "+ud:0,1,2,3,4,5", "value", 0, N_ARMS, err);
    struct ArrowSchema *u = st == KNUT_OK ? out->children[1] : NULL;
    if (st == KNUT_OK)
        st = child(u, ARM_STRING, "u", "string_value", 0, 0, err);
    if (st == KNUT_OK)
        st = child(u, ARM_BOOL, "b", "bool_value", 0, 0, err);
    if (st == KNUT_OK)
        st = child(u, ARM_BIGINT, "l", "bigint_value", 0, 0, err);
    if (st == KNUT_OK)
        st = child(u, ARM_INT32, "i", "int32_bitmask", 0, 0, err);
    if (st == KNUT_OK)
        st = child(u, ARM_LIST, "+l", "string_list", 0, 1, err);
    if (st == KNUT_OK)
        st = child(u->children[ARM_LIST], 0, "u", "item", 1, 0, err);
    if (st == KNUT_OK)
        st = child(u, ARM_MAP, "+m", "int32_to_int32_list_map", 0, 1, err);
    struct ArrowSchema *entries = st == KNUT_OK ? u->children[ARM_MAP] : NULL;
    if (st == KNUT_OK)
        st = child(entries, 0, "+s", "entries", 0, 2, err);
    if (st == KNUT_OK)
        st = child(entries->children[0], 0, "i", "key", 0, 0, err);
    if (st == KNUT_OK)
        st = child(entries->children[0], 1, "+l", "value", 1, 1, err);
    if (st == KNUT_OK)
        st = child(entries->children[0]->children[1], 0, "i", "item", 1, 0, err);
    if (st != KNUT_OK)
        knut_arrow_schema_release(out);
    return st;
}

/* ---- the rows ---- */

typedef struct rows {
    knut_arrow_builder *names;
    knut_arrow_builder *arms[N_ARMS];
    int8_t *ids;
    int32_t *offsets;
    int64_t n;
} rows;

/* The union array: owns its buffers and children. */
typedef struct union_data {
    const void *buffers[2];
    struct ArrowArray kids[N_ARMS];
    struct ArrowArray *kid_ptrs[N_ARMS];
} union_data;

static void union_release(struct ArrowArray *a)
{
    union_data *u = a->private_data;
    for (int i = 0; i < N_ARMS; i++)
        knut_arrow_array_release(&u->kids[i]);
    free((void *)u->buffers[0]);
    free((void *)u->buffers[1]);
    free(u);
    a->release = NULL;
}

/* The top struct {info_name, value}: owns both. */
typedef struct top_data {
    struct ArrowArray cols[2];
    struct ArrowArray *col_ptrs[2];
    const void *validity[1];
} top_data;

static void top_release(struct ArrowArray *a)
{
    top_data *t = a->private_data;
    knut_arrow_array_release(&t->cols[0]);
    knut_arrow_array_release(&t->cols[1]);
    free(t);
    a->release = NULL;
}

/* Appends the rows of a one-column VARCHAR query as one list element. */
static knut_status append_list(knut_duck_conn *conn, const char *sql, knut_arrow_builder *list,
                               knut_error *err)
{
    struct ArrowArrayStream s = {0};
    struct ArrowArray b = {0};
    knut_arrow_builder *item = knut_arrow_builder_child(list, 0);
    knut_status st = knut_duck_query(conn, sql, &s, err);
    while (st == KNUT_OK) {
        int rc = s.get_next(&s, &b);
        if (rc) {
            st = knut_arrow_stream_error(&s, rc, "SqlInfo", err);
            break;
        }
        if (!b.release)
            break;
        const struct ArrowArray *c = b.children[0];
        const int32_t *off = c->buffers[1];
        const char *data = c->buffers[2];
        for (int64_t i = 0; st == KNUT_OK && i < b.length; i++) {
            int64_t j = c->offset + i;
            st = knut_arrow_builder_append_bytes(item, data + off[j],
                                                 (size_t)(off[j + 1] - off[j]), err);
        }
        knut_arrow_array_release(&b);
    }
    knut_arrow_stream_release(&s);
    return st == KNUT_OK ? knut_arrow_builder_finish_element(list, err) : st;
}

/* DuckDB's default NULL order as SqlNullOrdering (0 high, 1 low, 2 start, 3 end). */
static knut_status null_ordering(knut_duck_conn *conn, int64_t *out, knut_error *err)
{
    struct ArrowArrayStream s = {0};
    struct ArrowArray b = {0};
    *out = 3;
    knut_status st = knut_duck_query(conn, "SELECT lower(current_setting('default_null_order'))",
                                     &s, err);
    int rc = st == KNUT_OK ? s.get_next(&s, &b) : 0;
    if (rc)
        st = knut_arrow_stream_error(&s, rc, "SqlInfo", err);
    if (st == KNUT_OK && b.release && b.length == 1) {
        const struct ArrowArray *c = b.children[0];
        const int32_t *off = c->buffers[1];
        size_t n = (size_t)(off[c->offset + 1] - off[c->offset]);
        const char *v = (const char *)c->buffers[2] + off[c->offset];
        if (n == 11 && memcmp(v, "nulls_first", 11) == 0)
            *out = 2;
        else if (n == 10 && memcmp(v, "nulls_last", 10) == 0)
            *out = 3;
        else if (n > 17 && memcmp(v, "nulls_first_on_asc", 18) == 0)
            *out = 1;
        else if (n > 16 && memcmp(v, "nulls_last_on_asc", 17) == 0)
            *out = 0;
    }
    knut_arrow_array_release(&b);
    knut_arrow_stream_release(&s);
    return st;
}

static int wanted(const KnutServe__Flightsql__CommandGetSqlInfo *c, uint32_t id)
{
    if (!c || c->n_info == 0)
        return 1;
    for (size_t i = 0; i < c->n_info; i++)
        if (c->info[i] == id)
            return 1;
    return 0;
}

static knut_status add_row(knut_duck_conn *conn, rows *r, const info *in, knut_error *err)
{
    knut_arrow_builder *arm = r->arms[in->arm];
    r->ids[r->n] = (int8_t)in->arm;
    r->offsets[r->n] = (int32_t)arm->length;
    r->n++;
    knut_status st = knut_arrow_builder_append_uint(r->names, in->id, err);
    char version[96];
    int64_t num = in->num;
    if (st != KNUT_OK)
        return st;
    switch (in->arm) {
    case ARM_STRING:
        if (in->id == 1) {
            snprintf(version, sizeof version, "%d.%d.%d (DuckDB %s)", KNUT_VERSION_MAJOR,
                     KNUT_VERSION_MINOR, KNUT_VERSION_PATCH, knut_duck_library_version());
            return knut_arrow_builder_append_str(arm, version, err);
        }
        return knut_arrow_builder_append_str(arm, in->text, err);
    case ARM_BOOL:
        return knut_arrow_builder_append_bool(arm, (int)num, err);
    case ARM_LIST:
        return append_list(conn, in->text, arm, err);
    case ARM_MAP:
        return knut_arrow_builder_finish_element(arm, err);
    default:
        if (in->id == 507 && (st = null_ordering(conn, &num, err)) != KNUT_OK)
            return st;
        return knut_arrow_builder_append_int(arm, num, err);
    }
}

static knut_status finish(rows *r, struct ArrowArray *out, knut_error *err)
{
    top_data *t = calloc(1, sizeof *t);
    union_data *u = calloc(1, sizeof *u);
    knut_status st = t && u ? KNUT_OK : knut_error_set(err, KNUT_ENOMEM, "out of memory");
    if (st == KNUT_OK)
        st = knut_arrow_builder_finish(r->names, &t->cols[0], NULL, err);
    for (int i = 0; st == KNUT_OK && i < N_ARMS; i++)
        st = knut_arrow_builder_finish(r->arms[i], &u->kids[i], NULL, err);
    if (st != KNUT_OK) {
        if (t)
            knut_arrow_array_release(&t->cols[0]);
        for (int i = 0; u && i < N_ARMS; i++)
            knut_arrow_array_release(&u->kids[i]);
        free(t);
        free(u);
        return st;
    }
    for (int i = 0; i < N_ARMS; i++)
        u->kid_ptrs[i] = &u->kids[i];
    u->buffers[0] = r->ids;
    u->buffers[1] = r->offsets;
    r->ids = NULL;
    r->offsets = NULL;
    t->cols[1] = (struct ArrowArray){.length = r->n, .null_count = 0, .n_buffers = 2,
                                     .n_children = N_ARMS, .buffers = u->buffers,
                                     .children = u->kid_ptrs, .release = union_release,
                                     .private_data = u};
    t->col_ptrs[0] = &t->cols[0];
    t->col_ptrs[1] = &t->cols[1];
    *out = (struct ArrowArray){.length = r->n, .null_count = 0, .n_buffers = 1, .n_children = 2,
                               .buffers = t->validity, .children = t->col_ptrs,
                               .release = top_release, .private_data = t};
    return KNUT_OK;
}

knut_status knut_serve__sqlinfo_query(knut_duck_conn *conn, const knut_serve__cmd *cmd,
                                      struct ArrowArrayStream *out, knut_error *err)
{
    const KnutServe__Flightsql__CommandGetSqlInfo *c = (const void *)cmd->msg;
    struct ArrowSchema schema = {0};
    struct ArrowArray batch = {0};
    rows r = {0};
    knut_status st = knut_serve__sqlinfo_schema(&schema, err);
    if (st == KNUT_OK)
        st = knut_arrow_builder_new_from_schema(&r.names, schema.children[0], err);
    for (int i = 0; st == KNUT_OK && i < N_ARMS; i++)
        st = knut_arrow_builder_new_from_schema(&r.arms[i], schema.children[1]->children[i], err);
    r.ids = malloc(N_INFOS);
    r.offsets = malloc(N_INFOS * sizeof *r.offsets);
    if (st == KNUT_OK && (!r.ids || !r.offsets))
        st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
    for (size_t i = 0; st == KNUT_OK && i < N_INFOS; i++)
        if (wanted(c, infos[i].id))
            st = add_row(conn, &r, &infos[i], err);
    if (st == KNUT_OK)
        st = finish(&r, &batch, err);
    if (st == KNUT_OK)
        st = knut_arrow_stream_from_arrays(out, &schema, &batch, 1, err);
    if (st != KNUT_OK)
        knut_error_prefix(err, "GetSqlInfo: ");
    knut_arrow_schema_release(&schema);
    knut_arrow_builder_free(r.names);
    for (int i = 0; i < N_ARMS; i++)
        knut_arrow_builder_free(r.arms[i]);
    free(r.ids);
    free(r.offsets);
    return st;
}
