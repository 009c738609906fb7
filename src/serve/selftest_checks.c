/*
 * `knut serve --self-test`: the conformance checklist of the Flight SQL
 * reference (docs/serve.md "Self-test" lists it) run against a server, one
 * table row per check. Each check says what it sent and what came back
 * that was wrong: the exact metadata schemas clients compare (GetTables
 * with 4 columns, or 5 with include_schema), DoGet schemas equal to the
 * FlightInfo's, the SqlInfo ids drivers read, prepared statements bound by
 * DoPut, and the status codes of errors. A server that answers nothing
 * sensible fails checks; only our own failures (out of memory) stop the run.
 */
#include <stdlib.h>
#include <string.h>

#include "selftest_int.h"

#define row knut_serve__st_row
#define code_name knut_net_grpc_code_name

/* ---- metadata commands: FlightInfo, DoGet, schemas ---------------------- */

#define S_CATALOGS "catalog_name|u|NN"
#define S_SCHEMAS "catalog_name|u|N;db_schema_name|u|NN"
#define S_TABLES "catalog_name|u|N;db_schema_name|u|N;table_name|u|NN;table_type|u|NN"
#define S_TYPES "table_type|u|NN"
#define S_SQLINFO "info_name|I|NN;value|+ud:0,1,2,3,4,5|NN"
#define S_XDBC                                                                                 \
    "type_name|u|NN;data_type|i|NN;column_size|i|N;literal_prefix|u|N;literal_suffix|u|N;"     \
    "create_params|+l|N;nullable|i|NN;case_sensitive|b|NN;searchable|i|NN;"                   \
    "unsigned_attribute|b|N;fixed_prec_scale|b|NN;auto_increment|b|N;local_type_name|u|N;"    \
    "minimum_scale|i|N;maximum_scale|i|N;sql_data_type|i|NN;datetime_subcode|i|N;"            \
    "num_prec_radix|i|N;interval_precision|i|N"
#define S_PKEYS                                                                                \
    "catalog_name|u|N;db_schema_name|u|N;table_name|u|NN;column_name|u|NN;key_sequence|i|NN;"  \
    "key_name|u|N"
#define S_KEYS                                                                                 \
    "pk_catalog_name|u|N;pk_db_schema_name|u|N;pk_table_name|u|NN;pk_column_name|u|NN;"        \
    "fk_catalog_name|u|N;fk_db_schema_name|u|N;fk_table_name|u|NN;fk_column_name|u|NN;"        \
    "key_sequence|i|NN;fk_key_name|u|N;pk_key_name|u|N;update_rule|C|NN;delete_rule|C|NN"

/*
 * GetFlightInfo(Any(m)), the schema against spec (NULL: any), DoGet of
 * endpoint 0 and its schema against the FlightInfo's. 1 when all held
 * (res then holds the rows; else the row was written).
 */
static int fetch(st_run *r, const char *check, const char *name, const ProtobufCMessage *m,
                 const char *spec, st_result *res, knut_status *rc, knut_error *err)
{
    KnutServe__FlightInfo *info = NULL;
    st_status st = {0};
    struct ArrowSchema want = {0};
    char why[DETAIL];
    int ok = 0;
    *rc = knut_serve__st_flight_info(&r->c, SERVE_PKG "GetFlightInfo", name, m, &info, &st, err);
    if (*rc != KNUT_OK)
        return 0;
    if (!info) {
        row(r, check, 0, "GetFlightInfo(%s): %s %s", name, code_name(st.code), st.message);
        return 0;
    }
    knut_error derr = KNUT_ERROR_INIT;
    if (knut_serve__st_schema_decode(info->schema.data, info->schema.len, &want,
        &derr) != KNUT_OK) {
        row(r, check, 0, "FlightInfo.schema does not decode: %s", derr.message);
        goto done;
    }
    if (spec && !knut_serve__st_schema_is(&want, spec, why, sizeof why)) {
        row(r, check, 0, "FlightInfo schema: %s", why);
        goto done;
    }
    if (info->n_endpoint < 1 || !info->endpoint[0]->ticket) {
        row(r, check, 0, "FlightInfo has no endpoint with a ticket");
        goto done;
    }
    *rc = knut_serve__st_do_get(&r->c, &info->endpoint[0]->ticket->ticket, res, &st, err);
    if (*rc != KNUT_OK)
        goto done;
    if (st.code != 0) {
        row(r, check, 0, "DoGet: %s %s", code_name(st.code), st.message);
        goto done;
    }
    const struct ArrowSchema *got = knut_arrow_ipc_reader_schema(res->reader);
    if (!knut_serve__st_schema_same(&want, got, why, sizeof why)) {
        row(r, check, 0, "DoGet schema differs from FlightInfo's: %s", why);
        goto done;
    }
    ok = 1;
done:
    knut_arrow_schema_release(&want);
    knut_serve__flight_info__free_unpacked(info, NULL);
    return ok;
}

/* A metadata command whose rows need no inspection. */
static knut_status simple(st_run *r, const char *check, const char *name,
                          const ProtobufCMessage *m, const char *spec, knut_error *err)
{
    st_result res = {0};
    knut_status rc = KNUT_OK;
    if (fetch(r, check, name, m, spec, &res, &rc, err))
        row(r, check, 1, "%lld rows, schema as the reference", (long long)res.rows);
    knut_serve__st_result_reset(&res);
    return rc;
}

/* GetSqlInfo: all ids, then a filter with an unknown id. */
static knut_status sql_info(st_run *r, knut_error *err)
{
    KnutServe__Flightsql__CommandGetSqlInfo m = KNUT_SERVE__FLIGHTSQL__COMMAND_GET_SQL_INFO__INIT;
    st_result res = {0};
    knut_status rc = KNUT_OK;
    if (fetch(r, "GetSqlInfo", "CommandGetSqlInfo", &m.base, S_SQLINFO, &res, &rc, err)) {
        /* ids 0, 1, 2 (server name, version, Arrow version) in the string arm 0 */
        int seen[3] = {0}, arm_ok = 1;
        for (size_t b = 0; b < res.n; b++) {
            const struct ArrowArray *a = &res.batches[b];
            const uint32_t *ids = (const uint32_t *)a->children[0]->buffers[1];
            const int8_t *types = (const int8_t *)a->children[1]->buffers[0];
            for (int64_t i = 0; i < a->length; i++) {
                uint32_t id = ids[a->children[0]->offset + i];
                if (id < 3) {
                    seen[id] = 1;
                    arm_ok &= types[a->children[1]->offset + i] == 0;
                }
            }
        }
        int ok = seen[0] && seen[1] && seen[2] && arm_ok;
        row(r, "GetSqlInfo", ok, ok ? "%lld ids, 0-2 as strings" :
            "%lld ids; ids 0, 1, 2 missing or not in the string arm", (long long)res.rows);
    }
    knut_serve__st_result_reset(&res);
    if (rc != KNUT_OK)
        return rc;
    uint32_t ids[2] = {0, 0x7FFFFF00u}; /* the second one is no SqlInfo id */
    m.info = ids;
    m.n_info = 2;
    if (fetch(r, "GetSqlInfo(filter)", "CommandGetSqlInfo", &m.base, S_SQLINFO, &res, &rc, err))
        row(r, "GetSqlInfo(filter)", res.rows == 1,
            "asked for id 0 and an unknown id: %lld rows (want 1)", (long long)res.rows);
    knut_serve__st_result_reset(&res);
    return rc;
}

/* GetTables with include_schema: 5 columns, every table_schema decodes. */
static knut_status tables_with_schema(st_run *r, knut_error *err)
{
    KnutServe__Flightsql__CommandGetTables m = KNUT_SERVE__FLIGHTSQL__COMMAND_GET_TABLES__INIT;
    m.include_schema = 1;
    st_result res = {0};
    knut_status rc = KNUT_OK;
    const char *check = "GetTables(include_schema)";
    if (fetch(r, check, "CommandGetTables", &m.base, S_TABLES ";table_schema|z|NN", &res, &rc,
              err)) {
        int64_t bad = -1, n = 0;
        for (size_t b = 0; b < res.n && bad < 0; b++) {
            const struct ArrowArray *c = res.batches[b].children[4];
            const int32_t *off = (const int32_t *)c->buffers[1];
            const uint8_t *data = c->buffers[2];
            for (int64_t i = 0; i < c->length && bad < 0; i++, n++) {
                struct ArrowSchema s = {0};
                int32_t lo = off[c->offset + i], hi = off[c->offset + i + 1];
                if (hi <= lo || !data ||
                    knut_serve__st_schema_decode(data + lo, (size_t)(hi - lo), &s, NULL) != KNUT_OK)
                    bad = n;
                knut_arrow_schema_release(&s);
            }
        }
        if (bad >= 0)
            row(r, check, 0, "table_schema of row %lld is no IPC schema", (long long)bad + 1);
        else
            row(r, check, 1, "%lld rows, every table_schema an IPC schema", (long long)n);
    }
    knut_serve__st_result_reset(&res);
    return rc;
}

/* GetSchema of a command equals its FlightInfo's schema. */
static knut_status get_schema(st_run *r, const char *check, const char *name,
                              const ProtobufCMessage *m, knut_error *err)
{
    KnutServe__FlightInfo *info = NULL;
    st_status st = {0};
    knut_buf bytes = KNUT_BUF_INIT;
    struct ArrowSchema a = {0}, b = {0};
    char why[DETAIL];
    knut_status rc = knut_serve__st_flight_info(&r->c, SERVE_PKG "GetFlightInfo", name, m, &info,
                                                &st, err);
    if (rc == KNUT_OK && info)
        rc = knut_serve__st_get_schema(&r->c, name, m, &bytes, &st, err);
    if (rc != KNUT_OK)
        goto done;
    if (!info || st.code != 0) {
        row(r, check, 0, "%s: %s %s", info ? "GetSchema" : "GetFlightInfo", code_name(st.code),
            st.message);
    } else if (knut_serve__st_schema_decode(info->schema.data, info->schema.len, &a,
               NULL) != KNUT_OK ||
               knut_serve__st_schema_decode((const uint8_t *)bytes.data, bytes.len, &b,
                                            NULL) != KNUT_OK) {
        row(r, check, 0, "a schema does not decode");
    } else if (!knut_serve__st_schema_same(&a, &b, why, sizeof why)) {
        row(r, check, 0, "GetSchema differs from FlightInfo.schema: %s", why);
    } else {
        row(r, check, 1, "the FlightInfo's schema (%lld columns)", (long long)a.n_children);
    }
done:
    knut_arrow_schema_release(&a);
    knut_arrow_schema_release(&b);
    knut_buf_reset(&bytes);
    knut_serve__flight_info__free_unpacked(info, NULL);
    return rc;
}

/* Column col (int64) of the first row of the result; 0 if there is none. */
static int first_i64(const st_result *res, int64_t col, int64_t *v)
{
    for (size_t b = 0; b < res->n; b++) {
        const struct ArrowArray *a = &res->batches[b];
        if (a->length > 0 && col < a->n_children) {
            const struct ArrowArray *c = a->children[col];
            if (c->null_count != 0 || !c->buffers[1])
                return 0;
            *v = ((const int64_t *)c->buffers[1])[c->offset];
            return 1;
        }
    }
    return 0;
}

/* ---- statements ----------------------------------------------------------- */

static knut_status statement(st_run *r, knut_error *err)
{
    KnutServe__Flightsql__CommandStatementQuery q =
        KNUT_SERVE__FLIGHTSQL__COMMAND_STATEMENT_QUERY__INIT;
    q.query = "SELECT CAST(42 AS BIGINT) AS answer, 'knut' AS word";
    st_result res = {0};
    knut_status rc = KNUT_OK;
    if (fetch(r, "StatementQuery", "CommandStatementQuery", &q.base, NULL, &res, &rc, err)) {
        const struct ArrowSchema *s = knut_arrow_ipc_reader_schema(res.reader);
        int64_t v = 0;
        int ok = res.rows == 1 && s->n_children == 2 && strcmp(s->children[0]->format, "l") == 0 &&
                 first_i64(&res, 0, &v) && v == 42;
        row(r, "StatementQuery", ok, ok ? "%s: 1 row, DoGet schema == FlightInfo schema"
                                        : "%s: want 1 row (42, 'knut')", q.query);
    }
    knut_serve__st_result_reset(&res);
    if (rc == KNUT_OK)
        rc = get_schema(r, "GetSchema(StatementQuery)", "CommandStatementQuery", &q.base, err);
    if (rc != KNUT_OK)
        return rc;
    KnutServe__FlightInfo *info = NULL;
    st_status st = {0};
    rc = knut_serve__st_flight_info(&r->c, SERVE_PKG "PollFlightInfo", "CommandStatementQuery",
                                    &q.base,
                        &info, &st, err);
    if (rc == KNUT_OK)
        row(r, "PollFlightInfo", info != NULL, info ? "answered with a finished FlightInfo"
                                                    : "%s %s", code_name(st.code), st.message);
    knut_serve__flight_info__free_unpacked(info, NULL);
    return rc;
}

/* A statement that must fail with one of two codes. */
static knut_status statement_error(st_run *r, const char *check, const char *sql, int code1,
                                   int code2, knut_error *err)
{
    KnutServe__Flightsql__CommandStatementQuery q =
        KNUT_SERVE__FLIGHTSQL__COMMAND_STATEMENT_QUERY__INIT;
    q.query = (char *)sql;
    KnutServe__FlightInfo *info = NULL;
    st_status st = {0};
    knut_status rc = knut_serve__st_flight_info(&r->c, SERVE_PKG "GetFlightInfo",
                                                "CommandStatementQuery",
                                    &q.base, &info, &st, err);
    if (rc == KNUT_OK && info) {
        /* a server may fail at DoGet instead */
        st_result res = {0};
        if (info->n_endpoint > 0 && info->endpoint[0]->ticket)
            rc = knut_serve__st_do_get(&r->c, &info->endpoint[0]->ticket->ticket, &res, &st, err);
        knut_serve__st_result_reset(&res);
    }
    if (rc == KNUT_OK) {
        int ok = st.code == code1 || st.code == code2;
        row(r, check, ok, "%s -> %s%s%.200s", sql, st.code ? code_name(st.code) : "OK",
            st.message[0] ? ": " : "", st.message);
    }
    knut_serve__flight_info__free_unpacked(info, NULL);
    return rc;
}

/* The parameter batch: one row, 41 in the first parameter. */
static knut_status param_batch(const struct ArrowSchema *ps, struct ArrowArray *out,
                               char *why, size_t cap, knut_error *err)
{
    knut_arrow_builder *b = NULL;
    knut_status st = knut_arrow_builder_new_from_schema(&b, ps, err);
    if (st == KNUT_OK && b->n_children < 1) {
        snprintf(why, cap, "the parameter schema has no field");
        st = KNUT_EINVAL;
    }
    for (int64_t i = 0; st == KNUT_OK && i < b->n_children; i++) {
        knut_arrow_builder *c = knut_arrow_builder_child(b, i);
        const char *f = ps->children[i]->format;
        if (i > 0)
            st = knut_arrow_builder_append_null(c, err);
        else if (strchr("cCsSiIlL", f[0]) && !f[1])
            st = knut_arrow_builder_append_int(c, 41, err);
        else if (!strcmp(f, "u") || !strcmp(f, "U"))
            st = knut_arrow_builder_append_str(c, "41", err);
        else if (!strcmp(f, "n") || !strncmp(f, "+ud", 3))
            st = knut_arrow_builder_append_null(c, err), snprintf(why, cap, "untyped");
        else
            snprintf(why, cap, "parameter type '%s'", f), st = KNUT_EUNSUPPORTED;
    }
    if (st == KNUT_OK)
        st = knut_arrow_builder_finish_element(b, err);
    if (st == KNUT_OK)
        st = knut_arrow_builder_finish(b, out, NULL, err);
    knut_arrow_builder_free(b);
    return st;
}

static knut_status prepared(st_run *r, knut_error *err)
{
    KnutServe__Flightsql__ActionCreatePreparedStatementRequest q =
        KNUT_SERVE__FLIGHTSQL__ACTION_CREATE_PREPARED_STATEMENT_REQUEST__INIT;
    q.query = "SELECT CAST(? AS BIGINT) + 1 AS v";
    knut_buf body = KNUT_BUF_INIT, out = KNUT_BUF_INIT;
    knut_buf_init(&out, ST_MAX_RESULT);
    st_status st = {0};
    ProtobufCMessage *res = NULL;
    struct ArrowSchema ds = {0}, ps = {0};
    struct ArrowArray batch = {0};
    st_result rows = {0};
    char why[DETAIL] = "";
    knut_status rc = knut_serve__any_pack("ActionCreatePreparedStatementRequest",
                                          &q.base, &body, err);
    if (rc == KNUT_OK)
        rc = knut_serve__st_do_action(&r->c, "CreatePreparedStatement", &body, &out, &st, err);
    if (rc != KNUT_OK)
        goto done;
    uint32_t len = 0;
    if (out.len >= 4)
        memcpy(&len, out.data, 4);
    knut_error uerr = KNUT_ERROR_INIT;
    if (st.code != 0 || out.len < 4 + (size_t)len ||
        knut_serve__any_unpack((const uint8_t *)out.data + 4, len,
                               "ActionCreatePreparedStatementResult",
                               &knut_serve__flightsql__action_create_prepared_statement_result__descriptor,
                               &res, &uerr) != KNUT_OK) {
        row(r, "CreatePreparedStatement", 0, "%s -> %s %s%s", q.query,
            st.code ? code_name(st.code) : "no ActionCreatePreparedStatementResult",
            st.message, uerr.message);
        /* the rest of the flow has no statement to work on */
        row(r, "DoPut(bind parameters)", 0, "not run: no prepared statement");
        row(r, "PreparedStatementQuery", 0, "not run: no prepared statement");
        row(r, "ClosePreparedStatement", 0, "not run: no prepared statement");
        goto done;
    }
    KnutServe__Flightsql__ActionCreatePreparedStatementResult *pr = (void *)res;
    if (!pr->prepared_statement_handle.len ||
        knut_serve__st_schema_decode(pr->dataset_schema.data, pr->dataset_schema.len, &ds, NULL) ||
        knut_serve__st_schema_decode(pr->parameter_schema.data, pr->parameter_schema.len, &ps,
                                     NULL) ||
        ps.n_children != 1) {
        row(r, "CreatePreparedStatement", 0, "want a handle, a dataset schema and a parameter "
                                             "schema of 1 field");
        row(r, "DoPut(bind parameters)", 0, "not run: no parameter schema");
        row(r, "PreparedStatementQuery", 0, "not run: no parameter schema");
        goto close;
    }
    row(r, "CreatePreparedStatement", 1, "handle, dataset schema, parameter schema (%s)",
        ps.children[0]->format);
    /* bind 41 with DoPut, then execute */
    KnutServe__Flightsql__CommandPreparedStatementQuery cq =
        KNUT_SERVE__FLIGHTSQL__COMMAND_PREPARED_STATEMENT_QUERY__INIT;
    cq.prepared_statement_handle = pr->prepared_statement_handle;
    if ((rc = param_batch(&ps, &batch, why, sizeof why, err)) != KNUT_OK) {
        if (rc == KNUT_ENOMEM)
            goto done;
        row(r, "DoPut(bind parameters)", 0, "cannot build a batch for %s", why);
        row(r, "PreparedStatementQuery", 0, "not run: no parameters bound");
        rc = KNUT_OK;
        goto close;
    }
    knut_buf put = KNUT_BUF_INIT;
    knut_buf_init(&put, ST_MAX_RESULT);
    rc = knut_serve__st_do_put(&r->c, "CommandPreparedStatementQuery", &cq.base, &ps, &batch,
                               &put, &st, err);
    KnutServe__Flightsql__DoPutPreparedStatementResult *nh =
        put.len ? knut_serve__flightsql__do_put_prepared_statement_result__unpack(
                      NULL, put.len, (uint8_t *)put.data)
                : NULL;
    if (nh && nh->_prepared_statement_handle_case &&
        nh->prepared_statement_handle.len) /* the server's new handle replaces ours */
        cq.prepared_statement_handle = nh->prepared_statement_handle;
    if (rc == KNUT_OK)
        row(r, "DoPut(bind parameters)", st.code == 0, "%s%s%s",
            st.code ? code_name(st.code) : "one row bound", st.message[0] ? ": " : "",
            st.message);
    int ok = 0;
    if (rc == KNUT_OK && st.code != 0)
        row(r, "PreparedStatementQuery", 0, "not run: no parameters bound");
    if (rc == KNUT_OK && st.code == 0 &&
        fetch(r, "PreparedStatementQuery", "CommandPreparedStatementQuery", &cq.base, NULL, &rows,
              &rc, err)) {
        const struct ArrowSchema *s = knut_arrow_ipc_reader_schema(rows.reader);
        int64_t v = 0;
        ok = rows.rows == 1 && s->n_children == 1 && strcmp(s->children[0]->format, "l") == 0 &&
             first_i64(&rows, 0, &v) && v == 42;
        row(r, "PreparedStatementQuery", ok, ok ? "bound 41, got 42" : "bound 41: want one "
                                                                       "row v = 42");
    }
    if (nh)
        knut_serve__flightsql__do_put_prepared_statement_result__free_unpacked(nh, NULL);
    knut_buf_reset(&put);
    if (rc != KNUT_OK)
        goto done;
close:;
    KnutServe__Flightsql__ActionClosePreparedStatementRequest c =
        KNUT_SERVE__FLIGHTSQL__ACTION_CLOSE_PREPARED_STATEMENT_REQUEST__INIT;
    c.prepared_statement_handle = pr->prepared_statement_handle;
    if ((rc = knut_serve__any_pack("ActionClosePreparedStatementRequest", &c.base, &body, err)) ==
            KNUT_OK &&
        (rc = knut_serve__st_do_action(&r->c, "ClosePreparedStatement", &body, &out, &st,
         err)) == KNUT_OK)
        row(r, "ClosePreparedStatement", st.code == 0, "%s %s",
            st.code ? code_name(st.code) : "OK", st.message);
done:
    knut_serve__st_result_reset(&rows);
    knut_arrow_array_release(&batch);
    knut_arrow_schema_release(&ds);
    knut_arrow_schema_release(&ps);
    if (res)
        protobuf_c_message_free_unpacked(res, NULL);
    knut_buf_reset(&body);
    knut_buf_reset(&out);
    return rc;
}

/* ---- the lists ------------------------------------------------------------ */

knut_status knut_serve__st_checks_metadata(st_run *r, knut_error *err)
{
    KnutServe__Flightsql__CommandGetCatalogs cat =
        KNUT_SERVE__FLIGHTSQL__COMMAND_GET_CATALOGS__INIT;
    KnutServe__Flightsql__CommandGetDbSchemas sch =
        KNUT_SERVE__FLIGHTSQL__COMMAND_GET_DB_SCHEMAS__INIT;
    KnutServe__Flightsql__CommandGetTables tab = KNUT_SERVE__FLIGHTSQL__COMMAND_GET_TABLES__INIT;
    KnutServe__Flightsql__CommandGetTableTypes tt =
        KNUT_SERVE__FLIGHTSQL__COMMAND_GET_TABLE_TYPES__INIT;
    KnutServe__Flightsql__CommandGetXdbcTypeInfo xt =
        KNUT_SERVE__FLIGHTSQL__COMMAND_GET_XDBC_TYPE_INFO__INIT;
    KnutServe__Flightsql__CommandGetPrimaryKeys pk =
        KNUT_SERVE__FLIGHTSQL__COMMAND_GET_PRIMARY_KEYS__INIT;
    KnutServe__Flightsql__CommandGetExportedKeys ek =
        KNUT_SERVE__FLIGHTSQL__COMMAND_GET_EXPORTED_KEYS__INIT;
    KnutServe__Flightsql__CommandGetImportedKeys ik =
        KNUT_SERVE__FLIGHTSQL__COMMAND_GET_IMPORTED_KEYS__INIT;
    KnutServe__Flightsql__CommandGetCrossReference cr =
        KNUT_SERVE__FLIGHTSQL__COMMAND_GET_CROSS_REFERENCE__INIT;
    /* a table that exists nowhere: the key commands answer no rows, in
     * their exact schemas */
    pk.table = ek.table = ik.table = cr.pk_table = cr.fk_table = "knut_self_test_no_table";
    knut_status rc = sql_info(r, err);
    if (!rc)
        rc = simple(r, "GetCatalogs", "CommandGetCatalogs", &cat.base, S_CATALOGS, err);
    if (!rc)
        rc = simple(r, "GetDbSchemas", "CommandGetDbSchemas", &sch.base, S_SCHEMAS, err);
    if (!rc)
        rc = simple(r, "GetTables", "CommandGetTables", &tab.base, S_TABLES, err);
    if (!rc)
        rc = tables_with_schema(r, err);
    if (!rc) {
        tab._table_name_filter_pattern_case =
            KNUT_SERVE__FLIGHTSQL__COMMAND_GET_TABLES___TABLE_NAME_FILTER_PATTERN_TABLE_NAME_FILTER_PATTERN;
        tab.table_name_filter_pattern = "knut_self_test_no_such_%";
        st_result res = {0};
        if (fetch(r, "GetTables(filter)", "CommandGetTables", &tab.base, S_TABLES, &res, &rc,
                  err))
            row(r, "GetTables(filter)", res.rows == 0,
                "a pattern matching no table: %lld rows (want 0)", (long long)res.rows);
        knut_serve__st_result_reset(&res);
    }
    if (!rc)
        rc = get_schema(r, "GetSchema(GetTables)", "CommandGetTables", &tab.base, err);
    if (!rc)
        rc = simple(r, "GetTableTypes", "CommandGetTableTypes", &tt.base, S_TYPES, err);
    if (!rc)
        rc = simple(r, "GetXdbcTypeInfo", "CommandGetXdbcTypeInfo", &xt.base, S_XDBC, err);
    if (!rc)
        rc = simple(r, "GetPrimaryKeys", "CommandGetPrimaryKeys", &pk.base, S_PKEYS, err);
    if (!rc)
        rc = simple(r, "GetExportedKeys", "CommandGetExportedKeys", &ek.base, S_KEYS, err);
    if (!rc)
        rc = simple(r, "GetImportedKeys", "CommandGetImportedKeys", &ik.base, S_KEYS, err);
    if (!rc)
        rc = simple(r, "GetCrossReference", "CommandGetCrossReference", &cr.base, S_KEYS, err);
    return rc;
}

knut_status knut_serve__st_checks_statements(st_run *r, knut_error *err)
{
    knut_status rc = statement(r, err);
    if (!rc)
        rc = prepared(r, err);
    if (!rc)
        rc = statement_error(r, "error: bad SQL", "SELEC 1 FROM", KNUT_NET_GRPC_INVALID_ARGUMENT,
                             KNUT_NET_GRPC_INVALID_ARGUMENT, err);
    if (!rc)
        rc = statement_error(r, "error: unknown table", "SELECT * FROM knut_self_test_no_table",
                             KNUT_NET_GRPC_NOT_FOUND, KNUT_NET_GRPC_INVALID_ARGUMENT, err);
    return rc;
}
