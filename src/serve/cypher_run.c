/*
 * Running the Cypher behind a query (cypher.c has the model): the named
 * queries a SQL statement reads, their parameters from its WHERE, and
 * ad-hoc Cypher statements.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "knut/arrow_view.h"
#include "knut/graph.h"
#include "serve_int.h"

#define R_PREFIX "__knut_cypher_r_"
#define P_PREFIX "__knut_cypher_p_"
#define MAX_PARAM_BLOCK ((size_t)1 << 20)

knut_status knut_serve__cypher_falkor(knut_serve__config *c, const char *text,
                                      knut_graph_falkor_result *out, knut_error *err);

static void table_name_of(knut_buf *b, const char *prefix, const char *name)
{
    knut_buf tmp = KNUT_BUF_INIT;
    knut_buf_printf(&tmp, "%s%s", prefix, name);
    knut_buf_puts(b, "temp.main.");
    knut_duck_ident(b, tmp.data ? tmp.data : "");
    knut_buf_reset(&tmp);
}

/* `param = value` conjuncts of the WHERE of the SELECT that reads the
 * query directly: (lower(param), the value's syntax tree) pairs. */
static const char *const WHERE_SQL =
    "WITH j AS (SELECT json_extract(json_serialize_sql($1::VARCHAR), "
    "'$.statements[0].node') AS n), "
    "w AS (SELECT CASE json_extract_string(n, '$.where_clause.type') "
    "WHEN 'CONJUNCTION_AND' THEN json_extract(n, '$.where_clause.children') "
    "ELSE json_array(json_extract(n, '$.where_clause')) END AS cs FROM j "
    "WHERE json_extract_string(n, '$.type') = 'SELECT_NODE' "
    "AND json_extract_string(n, '$.from_table.type') = 'BASE_TABLE' "
    "AND lower(json_extract_string(n, '$.from_table.table_name')) = lower($2) "
    "AND 'cypher' IN (lower(json_extract_string(n, '$.from_table.schema_name')), "
    "lower(json_extract_string(n, '$.from_table.catalog_name')))), "
    "c AS (SELECT unnest(cs::JSON[]) AS e FROM w) "
    "SELECT lower(json_extract_string(e, '$.left.column_names[-1]')), "
    "json_extract(e, '$.right')::VARCHAR FROM c "
    "WHERE json_extract_string(e, '$.type') = 'COMPARE_EQUAL' "
    "AND json_extract_string(e, '$.left.class') = 'COLUMN_REF' "
    "AND json_extract_string(e, '$.right.class') IN ('CONSTANT', 'PARAMETER')";

/* The values' syntax trees as the select list of SELECT 1, back to SQL
 * by DuckDB: "SELECT $1, 'x'" (DuckDB quotes what it prints). */
static const char *const EVAL_SQL =
    "SELECT json_deserialize_sql(json_merge_patch(t, json_object('statements', "
    "json_array(json_merge_patch(json_extract(t, '$.statements[0]'), json_object('node', "
    "json_merge_patch(json_extract(t, '$.statements[0].node'), "
    "json_object('select_list', $1::JSON)))))))) "
    "FROM (SELECT json_serialize_sql('SELECT 1') AS t)";

static knut_status query_strings(knut_duck_conn *conn, const char *sql, const char **binds,
                                 size_t n_binds, knut_buf *cells, size_t *n, knut_error *err)
{
    knut_duck_stmt *stmt = NULL;
    struct ArrowArrayStream rows = {0};
    knut_status st = knut_duck_stmt_prepare_text(&stmt, conn, sql, binds, n_binds, err);
    if (st == KNUT_OK)
        st = knut_duck_stmt_query(stmt, &rows, err);
    if (st == KNUT_OK)
        st = knut_serve__stream_strings(&rows, cells, n, err);
    knut_arrow_stream_release(&rows);
    knut_duck_stmt_free(stmt);
    return st;
}

typedef struct block_ctx {
    const knut_serve__query *q;
    knut_buf *out;
    int64_t rows;
} block_ctx;

static knut_status block_batch(void *ctx, const knut_arrow_view *v, knut_error *err)
{
    block_ctx *b = ctx;
    for (int64_t r = 0; r < v->length; r++, b->rows++)
        for (size_t i = 0; i < b->q->n_params && (int64_t)i < v->n_children; i++) {
            knut_graph_cypher_loc loc = {b->q->name, b->q->params[i], 1};
            knut_buf_printf(b->out, "%s=", b->q->params[i]);
            knut_status st = knut_graph_cypher_value(b->out, &v->children[i], r, &loc, err);
            if (st != KNUT_OK)
                return st;
            knut_buf_putc(b->out, ' ');
        }
    return knut_buf_check(b->out, err);
}

/* The parameter row of q from the statement's WHERE, into its temp
 * table on conn, and as a CYPHER parameter block into block. */
static knut_status params_of(knut_serve *s, knut_serve__who *who, knut_duck_conn *conn,
                             const knut_serve__query *q, const char *sql, const uint8_t *handle,
                             size_t hlen, size_t n_params, knut_buf *block, knut_error *err)
{
    knut_buf pairs = KNUT_BUF_INIT, list = KNUT_BUF_INIT, eval = KNUT_BUF_INIT,
             ins = KNUT_BUF_INIT, pname = KNUT_BUF_INIT;
    knut_duck_stmt *stmt = NULL;
    struct ArrowArrayStream rows = {0};
    size_t n = 0, m = 0;
    const char *binds[2] = {sql, q->name};
    knut_status st = query_strings(conn, WHERE_SQL, binds, 2, &pairs, &n, err);
    knut_buf_putc(&list, '[');
    for (size_t i = 0; st == KNUT_OK && i < q->n_params; i++) {
        const char *found = NULL, *p = pairs.data;
        for (size_t k = 0; k + 1 < n && !found; k += 2) {
            const char *rhs = p + strlen(p) + 1;
            if (strcasecmp(p, q->params[i]) == 0)
                found = rhs;
            p = rhs + strlen(rhs) + 1;
        }
        if (!found)
            st = knut_error_set(err, KNUT_EINVAL, "cypher.%s takes the parameter '%s': give it "
                                                  "as WHERE %s = <value or ?> in the SELECT "
                                                  "that reads cypher.%s",
                                q->name, q->params[i], q->params[i], q->name);
        else
            knut_buf_printf(&list, "%s%s", i ? "," : "", found);
    }
    knut_buf_putc(&list, ']');
    if (st == KNUT_OK)
        st = knut_buf_check(&list, err);
    binds[0] = list.data;
    if (st == KNUT_OK)
        st = query_strings(conn, EVAL_SQL, binds, 1, &eval, &m, err);
    if (st == KNUT_OK && m != 1)
        st = knut_error_set(err, KNUT_EINVAL, "cypher.%s: the parameters' values cannot be "
                                              "evaluated", q->name);
    /* INSERT INTO p SELECT CAST(e.c0 AS T0), ... FROM (SELECT <values>) e(c0, ...), and
     * every statement parameter once more so the same row binds */
    knut_buf_puts(&ins, "DELETE FROM ");
    table_name_of(&ins, P_PREFIX, q->name);
    knut_buf_puts(&ins, "; ");
    size_t del_len = ins.len;
    knut_buf_puts(&ins, "INSERT INTO ");
    table_name_of(&ins, P_PREFIX, q->name);
    knut_buf_puts(&ins, " SELECT ");
    for (size_t i = 0; i < q->n_params; i++)
        knut_buf_printf(&ins, "%sCAST(e.c%zu AS %s)", i ? ", " : "", i, q->param_types[i]);
    knut_buf_printf(&ins, " FROM (%s) e(", st == KNUT_OK ? eval.data : "");
    for (size_t i = 0; i < q->n_params; i++)
        knut_buf_printf(&ins, "%sc%zu", i ? ", " : "", i);
    knut_buf_puts(&ins, ")");
    for (size_t i = 0; i < n_params; i++)
        knut_buf_printf(&ins, "%s$%zu", i ? ", " : ", (SELECT ", i + 1);
    if (n_params)
        knut_buf_puts(&ins, ") u");
    if (st == KNUT_OK)
        st = knut_buf_check(&ins, err);
    if (st == KNUT_OK) {
        ins.data[del_len - 2] = 0; /* the DELETE alone first */
        st = knut_duck_exec(conn, ins.data, err);
    }
    if (st == KNUT_OK)
        st = knut_duck_stmt_prepare(&stmt, conn, ins.data + del_len, err);
    if (st == KNUT_OK && handle)
        st = knut_serve__prepared_bind_to(s, who, handle, hlen, stmt, err);
    if (st == KNUT_OK)
        st = knut_duck_stmt_exec(stmt, NULL, err);
    knut_duck_stmt_free(stmt);
    stmt = NULL;
    knut_buf_puts(&pname, "SELECT * FROM ");
    table_name_of(&pname, P_PREFIX, q->name);
    if (st == KNUT_OK)
        st = knut_buf_check(&pname, err);
    if (st == KNUT_OK)
        st = knut_duck_query(conn, pname.data, &rows, err);
    block_ctx bc = {q, block, 0};
    if (st == KNUT_OK)
        st = knut_arrow_stream_each(&rows, block_batch, &bc, err);
    if (st == KNUT_OK && bc.rows != 1)
        st = knut_error_set(err, KNUT_EINVAL, "cypher.%s: the parameters gave %lld rows",
                            q->name, (long long)bc.rows);
    knut_arrow_stream_release(&rows);
    knut_buf_reset(&pairs);
    knut_buf_reset(&list);
    knut_buf_reset(&eval);
    knut_buf_reset(&ins);
    knut_buf_reset(&pname);
    return st;
}

static knut_status run_one(knut_serve *s, knut_serve__who *who, knut_duck_conn *conn,
                           const knut_serve__query *q, const char *sql, const uint8_t *handle,
                           size_t hlen, size_t n_params, knut_error *err)
{
    knut_buf text, rname = KNUT_BUF_INIT;
    knut_graph_falkor_result res = {0};
    knut_buf_init(&text, MAX_PARAM_BLOCK + KNUT_SERVE__MAX_SQL);
    knut_buf_puts(&text, "CYPHER ");
    knut_status st = q->n_params ? params_of(s, who, conn, q, sql, handle, hlen, n_params, &text,
                                             err)
                                 : KNUT_OK;
    knut_buf_puts(&text, q->cypher);
    knut_buf_printf(&rname, R_PREFIX "%s", q->name);
    if (st == KNUT_OK)
        st = knut_buf_check(&text, err);
    if (st == KNUT_OK)
        st = knut_buf_check(&rname, err);
    if (st == KNUT_OK && (st = knut_serve__cypher_falkor(&s->conf, text.data, &res, err)) !=
                             KNUT_OK)
        knut_error_prefix(err, "cypher.%s: ", q->name);
    if (st == KNUT_OK)
        st = knut_serve__cypher_register(s, conn, rname.data, &res.stream, err);
    knut_graph_falkor_result_reset(&res);
    knut_buf_reset(&text);
    knut_buf_reset(&rname);
    return st;
}

knut_status knut_serve__cypher_fill(knut_serve *s, knut_serve__who *who, knut_duck_conn *conn,
                                    const char *sql, const uint8_t *handle, size_t hlen,
                                    size_t n_params, knut_error *err)
{
    if (!s->conf.n_queries)
        return KNUT_OK;
    knut_buf names = KNUT_BUF_INIT;
    size_t n = 0;
    knut_status st = knut_duck_table_names(conn, sql, &names, &n, err);
    const char *name = names.data;
    for (; st == KNUT_OK && n > 0; n--, name += strlen(name) + 1) {
        char parts[3][KNUT_SERVE__MAX_IDENT];
        int k = knut_serve__name_parse(name, parts);
        if (k != 3 || !knut_serve__cypher_internal(parts[0], parts[1], parts[2]) ||
            strncmp(parts[2], R_PREFIX, strlen(R_PREFIX)) != 0)
            continue;
        for (size_t i = 0; i < s->conf.n_queries; i++)
            if (strcmp(s->conf.queries[i].name, parts[2] + strlen(R_PREFIX)) == 0) {
                st = run_one(s, who, conn, &s->conf.queries[i], sql, handle, hlen, n_params,
                             err);
                break;
            }
    }
    knut_buf_reset(&names);
    return st;
}

knut_status knut_serve__cypher_adhoc_doget(knut_serve *s, knut_serve__who *who,
                                           knut_net_grpc_call *call, const char *cypher,
                                           int64_t *rows, knut_error *err)
{
    if (!s->conf.falkor_url)
        return knut_error_set(err, KNUT_EINVAL, "ad-hoc Cypher needs a falkordb: connection "
                                                "in serve.yml");
    if (!knut_serve__authz_full(who))
        return knut_serve__denied(who, err, "ad-hoc Cypher reads the whole graph: only an "
                                            "identity that may read everything runs it (use "
                                            "a named query of serve.yml)");
    knut_graph_falkor_result res = {0};
    knut_status st = knut_serve__cypher_falkor(&s->conf, cypher, &res, err);
    if (st == KNUT_OK)
        st = knut_serve__stream_send(call, &res.stream, knut_serve__column_metadata,
                                     s->max_message, rows, err);
    knut_graph_falkor_result_reset(&res);
    return st;
}
