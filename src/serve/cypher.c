/*
 * Cypher on FalkorDB as tables. A named query of serve.yml is the view
 * cypher.main.<name>: its result columns cast to their types (declared,
 * or inferred once at start: the schema cache, so GetFlightInfo never
 * runs Cypher), then its parameters as columns. The view reads two temp
 * tables that each call's connection has (knut_serve__cypher_conn): the
 * result, empty until a DoGet fills it, and the parameter row. Before a
 * query runs (knut_serve__cypher_fill), each named query it reads is run
 * on FalkorDB with the values its WHERE gives the parameters
 * (`WHERE name = 'x'`, `= ?`): DuckDB evaluates them (constants and bound
 * parameters alike) into the typed parameter row, whose values are then
 * rendered into the CYPHER parameter block by knut_graph_cypher_value,
 * never into the query text. DuckDB then applies the whole SQL (WHERE,
 * joins, ORDER BY, ...) to the result. Ad-hoc Cypher (a statement
 * starting with CYPHER) runs as it is, its schema the result's.
 *
 * One FalkorDB client, behind a lock: queries to FalkorDB run one at a
 * time. It connects on first use and reconnects after a failure.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "knut/arrow_view.h"
#include "knut/graph.h"
#include "serve_int.h"

#define R_PREFIX "__knut_cypher_r_"
#define P_PREFIX "__knut_cypher_p_"

knut_status knut_serve__cypher_setup(knut_serve *s, knut_duck_conn *conn, knut_error *err);
knut_status knut_serve__cypher_falkor(knut_serve__config *c, const char *text,
                                      knut_graph_falkor_result *out, knut_error *err);

int knut_serve__cypher_adhoc(const char *sql)
{
    while (isspace((unsigned char)*sql))
        sql++;
    return strncasecmp(sql, "CYPHER", 6) == 0 && isspace((unsigned char)sql[6]);
}

int knut_serve__cypher_internal(const char *cat, const char *sch, const char *tbl)
{
    return strcasecmp(cat, "temp") == 0 && strcasecmp(sch, "main") == 0 &&
           (strncmp(tbl, R_PREFIX, strlen(R_PREFIX)) == 0 ||
            strncmp(tbl, P_PREFIX, strlen(P_PREFIX)) == 0);
}

/* Runs text on FalkorDB (read-only) into *out. */
knut_status knut_serve__cypher_falkor(knut_serve__config *c, const char *text,
                                      knut_graph_falkor_result *out, knut_error *err)
{
    knut_status st = KNUT_OK;
    pthread_mutex_lock(&c->lock);
    if (!c->falkor) {
        knut_graph_falkor_options o = KNUT_GRAPH_FALKOR_OPTIONS_INIT;
        o.password = c->falkor_password;
        o.command_timeout_ms = c->falkor_timeout_ms;
        o.connect_timeout_ms = c->falkor_timeout_ms < 5000 ? c->falkor_timeout_ms : 5000;
        st = knut_graph_falkor_connect_url(&c->falkor, c->falkor_url, &o, err);
    }
    int queried = st == KNUT_OK; /* else connecting failed: refused AUTH, no peer */
    if (st == KNUT_OK)
        st = knut_graph_falkor_query(c->falkor, c->falkor_graph, text,
                                     KNUT_GRAPH_FALKOR_READ_ONLY, out, err);
    if (st == KNUT_EIO) {
        /* the connection is gone: the next query connects afresh */
        knut_graph_falkor_close(c->falkor);
        c->falkor = NULL;
    }
    pthread_mutex_unlock(&c->lock);
    if (st == KNUT_EIO) {
        st = KNUT_EPEER; /* a peer behind the server: UNAVAILABLE */
        err->code = st;
    } else if (st == KNUT_EPEER && queried && err->detail != KNUT_GRAPH_FALKOR_ERR_TIMEOUT &&
               err->detail != KNUT_GRAPH_FALKOR_ERR_OOM && err->detail != 0) {
        /* FalkorDB refused the query itself: the client's to fix */
        st = KNUT_EINVAL;
        err->code = st;
    }
    return st;
}

/* DuckDB's Arrow scan makes a view in the connection's default catalog,
 * which a served file has read-only: it is made in the cypher catalog,
 * and the default set back. */
knut_status knut_serve__cypher_register(knut_serve *s, knut_duck_conn *conn, const char *name,
                                        struct ArrowArrayStream *stream, knut_error *err)
{
    knut_buf back = KNUT_BUF_INIT;
    knut_buf_puts(&back, "USE ");
    knut_duck_ident(&back, s->catalog);
    knut_status st = knut_buf_check(&back, err);
    if (st == KNUT_OK)
        st = knut_duck_exec(conn, "USE " KNUT_SERVE__CYPHER_CATALOG, err);
    if (st == KNUT_OK) {
        st = knut_duck_register_stream(conn, name, stream, err);
        knut_error e2 = KNUT_ERROR_INIT;
        knut_status st2 = knut_duck_exec(conn, back.data, &e2);
        if (st == KNUT_OK && st2 != KNUT_OK) {
            *err = e2;
            st = st2;
        }
    } else {
        knut_arrow_stream_release(stream);
    }
    knut_buf_reset(&back);
    return st;
}

static void table_name(knut_buf *b, const char *prefix, const char *name)
{
    knut_buf_puts(b, "temp.main.");
    knut_buf tmp = KNUT_BUF_INIT;
    knut_buf_printf(&tmp, "%s%s", prefix, name);
    knut_duck_ident(b, tmp.data ? tmp.data : "");
    knut_buf_reset(&tmp);
}

/* The columns of an inferred query: run once with NULL parameters; a
 * column FalkorDB gave no type (no rows) is VARCHAR. */
static knut_status infer(knut_serve *s, knut_duck_conn *conn, knut_serve__query *q,
                         knut_error *err)
{
    knut_buf text = KNUT_BUF_INIT, rname = KNUT_BUF_INIT, cells = KNUT_BUF_INIT;
    knut_graph_falkor_result res = {0};
    knut_duck_stmt *stmt = NULL;
    struct ArrowArrayStream rows = {0};
    size_t n = 0;
    knut_buf_puts(&text, "CYPHER ");
    for (size_t i = 0; i < q->n_params; i++)
        knut_buf_printf(&text, "%s=null ", q->params[i]);
    knut_buf_puts(&text, q->cypher);
    knut_buf_printf(&rname, R_PREFIX "%s", q->name);
    knut_status st = knut_buf_check(&text, err);
    if (st == KNUT_OK)
        st = knut_buf_check(&rname, err);
    if (st == KNUT_OK)
        st = knut_serve__cypher_falkor(&s->conf, text.data, &res, err);
    /* a column FalkorDB sent no value of (no rows, or all null) has
     * Arrow's null type: no type to cache, so VARCHAR */
    unsigned char untyped[256] = {0};
    struct ArrowSchema sc = {0};
    if (st == KNUT_OK && res.stream.get_schema(&res.stream, &sc) == 0) {
        for (int64_t i = 0; i < sc.n_children && i < 256; i++)
            untyped[i] = strcmp(sc.children[i]->format, "n") == 0;
        knut_arrow_schema_release(&sc);
    }
    if (st == KNUT_OK)
        st = knut_serve__cypher_register(s, conn, rname.data, &res.stream, err);
    const char *binds[1] = {rname.data};
    if (st == KNUT_OK)
        st = knut_duck_stmt_prepare_text(
            &stmt, conn,
            "SELECT column_name, CASE WHEN data_type = 'NULL' THEN 'VARCHAR' ELSE data_type END "
            "FROM duckdb_columns() WHERE database_name = 'temp' AND table_name = $1 "
            "ORDER BY column_index",
            binds, 1, err);
    if (st == KNUT_OK)
        st = knut_duck_stmt_query(stmt, &rows, err);
    if (st == KNUT_OK)
        st = knut_serve__stream_strings(&rows, &cells, &n, err);
    if (st == KNUT_OK && n == 0)
        st = knut_error_set(err, KNUT_EINVAL, "the query returns no columns (RETURN ...)");
    if (st == KNUT_OK) {
        q->n_cols = n / 2;
        q->cols = calloc(q->n_cols, sizeof *q->cols);
        q->col_types = calloc(q->n_cols, sizeof *q->col_types);
        q->inferred = malloc(cells.len);
        if (!q->cols || !q->col_types || !q->inferred)
            st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
    }
    if (st == KNUT_OK) {
        memcpy(q->inferred, cells.data, cells.len);
        const char *p = q->inferred;
        for (size_t i = 0; i < q->n_cols; i++) {
            q->cols[i] = p;
            p += strlen(p) + 1;
            q->col_types[i] = i < 256 && untyped[i] ? "VARCHAR" : p;
            p += strlen(p) + 1;
        }
    }
    knut_graph_falkor_result_reset(&res);
    knut_arrow_stream_release(&rows);
    knut_duck_stmt_free(stmt);
    knut_buf_reset(&text);
    knut_buf_reset(&rname);
    knut_buf_reset(&cells);
    return st;
}

/* The temp tables every call connection gets, and the views over them. */
static void conn_sql(const knut_serve__query *q, knut_buf *b)
{
    knut_buf_puts(b, "CREATE OR REPLACE TEMP TABLE ");
    table_name(b, R_PREFIX, q->name);
    knut_buf_puts(b, " (");
    for (size_t i = 0; i < q->n_cols; i++) {
        knut_buf_puts(b, i ? ", " : "");
        knut_duck_ident(b, q->cols[i]);
        knut_buf_printf(b, " %s", q->col_types[i]);
    }
    knut_buf_puts(b, "); ");
    if (!q->n_params)
        return;
    knut_buf_puts(b, "CREATE OR REPLACE TEMP TABLE ");
    table_name(b, P_PREFIX, q->name);
    knut_buf_puts(b, " (");
    for (size_t i = 0; i < q->n_params; i++) {
        knut_buf_puts(b, i ? ", " : "");
        knut_duck_ident(b, q->params[i]);
        knut_buf_printf(b, " %s", q->param_types[i]);
    }
    knut_buf_puts(b, "); ");
}

static void view_sql(const knut_serve__query *q, knut_buf *b)
{
    knut_buf_puts(b, "CREATE VIEW " KNUT_SERVE__CYPHER_CATALOG ".main.");
    knut_duck_ident(b, q->name);
    knut_buf_puts(b, " AS SELECT ");
    for (size_t i = 0; i < q->n_cols; i++) {
        knut_buf_puts(b, i ? ", CAST(r." : "CAST(r.");
        knut_duck_ident(b, q->cols[i]);
        knut_buf_printf(b, " AS %s) AS ", q->col_types[i]);
        knut_duck_ident(b, q->cols[i]);
    }
    for (size_t i = 0; i < q->n_params; i++) {
        knut_buf_puts(b, ", p.");
        knut_duck_ident(b, q->params[i]);
    }
    knut_buf_puts(b, " FROM ");
    table_name(b, R_PREFIX, q->name);
    knut_buf_puts(b, " r");
    if (q->n_params) {
        knut_buf_puts(b, ", ");
        table_name(b, P_PREFIX, q->name);
        knut_buf_puts(b, " p");
    }
}

static knut_status at(const knut_serve__query *q, knut_error *err)
{
    const knut_conf *n = q->node;
    char where[512];
    snprintf(where, sizeof where, "%s:%d:%d: query %s: ", knut_conf_file(n), knut_conf_line(n),
             knut_conf_col(n), q->name);
    knut_duck_error_trim(err);
    knut_error_prefix(err, "%s", where);
    return err->code;
}

knut_status knut_serve__cypher_setup(knut_serve *s, knut_duck_conn *conn, knut_error *err)
{
    knut_serve__config *c = &s->conf;
    knut_buf all = KNUT_BUF_INIT, one = KNUT_BUF_INIT;
    knut_status st = knut_duck_exec(conn, "ATTACH ':memory:' AS " KNUT_SERVE__CYPHER_CATALOG
                                          " (READ_WRITE)", err);
    if (st != KNUT_OK)
        knut_error_prefix(err, "serve.yml queries: ");
    for (size_t i = 0; st == KNUT_OK && i < c->n_queries; i++) {
        knut_serve__query *q = &c->queries[i];
        if (!q->n_cols && (st = infer(s, conn, q, err)) != KNUT_OK) {
            at(q, err);
            break;
        }
        knut_buf_clear(&one);
        conn_sql(q, &one);
        size_t mark = one.len;
        view_sql(q, &one);
        st = knut_buf_check(&one, err);
        if (st == KNUT_OK)
            st = knut_duck_exec(conn, one.data, err);
        if (st != KNUT_OK) {
            at(q, err);
            break;
        }
        knut_buf_append(&all, one.data, mark);
        st = knut_buf_check(&all, err);
    }
    /* a reopened database (dbgen.c) makes the same tables: the text of
     * the first opening stays, as calls may be reading it */
    if (st == KNUT_OK && all.len && !c->conn_sql) {
        c->conn_sql = all.data;
        all.data = NULL;
    }
    knut_buf_reset(&all);
    knut_buf_reset(&one);
    return st;
}

knut_status knut_serve__cypher_conn(knut_serve *s, knut_duck_conn *conn, knut_error *err)
{
    return s->conf.conn_sql ? knut_duck_exec(conn, s->conf.conn_sql, err) : KNUT_OK;
}
