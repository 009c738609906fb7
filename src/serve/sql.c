/*
 * Queries: the schema a command's rows will have (GetFlightInfo,
 * GetSchema), the ticket that fetches them, and the rows themselves
 * (DoGet). A statement's schema comes from preparing it, so the query runs
 * once, in DoGet. Its ticket is self-describing, TicketStatementQuery with
 * the SQL itself as the handle, so nothing is kept between the two calls
 * and any server of the same database can redeem it. Each call has its
 * own DuckDB connection.
 */
#include <stdlib.h>
#include <string.h>

#include "serve_int.h"

/* A statement handle: this byte, then the SQL text. */
#define HANDLE_SQL 'Q'

/* The SQL of a command as a NUL-terminated copy; caller frees. */
static knut_status sql_copy(const char *p, size_t n, char **out, knut_error *err)
{
    *out = NULL;
    if (n == 0)
        return knut_error_set(err, KNUT_EINVAL, "empty query");
    if (n > KNUT_SERVE__MAX_SQL)
        return knut_error_set(err, KNUT_ETOOBIG, "query of %zu bytes over the %zu-byte cap", n,
                              KNUT_SERVE__MAX_SQL);
    if (memchr(p, 0, n))
        return knut_error_set(err, KNUT_EINVAL, "query text holds a NUL byte");
    if (!(*out = malloc(n + 1)))
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    memcpy(*out, p, n);
    (*out)[n] = 0;
    return KNUT_OK;
}

/* The SQL text of a statement command or ticket. */
static knut_status cmd_sql(const knut_serve__cmd *cmd, char **out, knut_error *err)
{
    if (cmd->kind == KNUT_SERVE__CMD_STATEMENT_QUERY) {
        const KnutServe__Flightsql__CommandStatementQuery *q = (const void *)cmd->msg;
        return sql_copy(q->query, strlen(q->query), out, err);
    }
    const KnutServe__Flightsql__TicketStatementQuery *t = (const void *)cmd->msg;
    if (t->statement_handle.len < 1 || t->statement_handle.data[0] != HANDLE_SQL)
        return knut_error_set(err, KNUT_EINVAL, "statement handle not made by this server");
    return sql_copy((const char *)t->statement_handle.data + 1, t->statement_handle.len - 1, out,
                    err);
}

/* A prepared statement for a query command, on conn, that who may run. */
static knut_status cmd_stmt(knut_serve *s, knut_serve__who *who, const knut_serve__cmd *cmd,
                            knut_duck_conn *conn, knut_duck_stmt **out, knut_error *err)
{
    *out = NULL;
    if (cmd->kind == KNUT_SERVE__CMD_PREPARED_QUERY) {
        const KnutServe__Flightsql__CommandPreparedStatementQuery *p =
            (const void *)cmd->msg;
        return knut_serve__prepared_stmt(s, who, p->prepared_statement_handle.data,
                                         p->prepared_statement_handle.len, conn, out, err);
    }
    char *sql = NULL;
    knut_status st = cmd_sql(cmd, &sql, err);
    if (st == KNUT_OK && (st = knut_duck_stmt_prepare(out, conn, sql, err)) != KNUT_OK)
        knut_duck_error_trim(err); /* DuckDB's reason without its echo of the SQL */
    if (st == KNUT_OK)
        st = knut_serve__authz_sql(s, who, conn, sql, *out, err);
    if (st != KNUT_OK) {
        knut_duck_stmt_free(*out);
        *out = NULL;
    }
    free(sql);
    return st;
}

/* The named Cypher queries stmt reads, run and put in place (serve.yml). */
static knut_status cypher_fill(knut_serve *s, knut_serve__who *who, const knut_serve__cmd *cmd,
                               knut_duck_conn *conn, knut_duck_stmt *stmt, knut_error *err)
{
    if (!s->conf.n_queries)
        return KNUT_OK;
    char *sql = NULL;
    const uint8_t *h = NULL;
    size_t hlen = 0;
    knut_status st = KNUT_OK;
    if (cmd->kind == KNUT_SERVE__CMD_PREPARED_QUERY) {
        const KnutServe__Flightsql__CommandPreparedStatementQuery *p = (const void *)cmd->msg;
        h = p->prepared_statement_handle.data;
        hlen = p->prepared_statement_handle.len;
        if (!(sql = knut_serve__prepared_sql(s, who, h, hlen)))
            st = knut_error_set(err, KNUT_ENOTFOUND, "no such prepared statement");
    } else {
        st = cmd_sql(cmd, &sql, err);
    }
    if (st == KNUT_OK)
        st = knut_serve__cypher_fill(s, who, conn, sql, h, hlen,
                                     knut_duck_stmt_param_count(stmt), err);
    free(sql);
    return st;
}

/* An ad-hoc Cypher statement (CYPHER ...): its text in *out, else NULL. */
static knut_status adhoc_text(knut_serve *s, knut_serve__who *who, const knut_serve__cmd *cmd,
                              char **out, knut_error *err)
{
    *out = NULL;
    knut_status st = KNUT_OK;
    if (cmd->kind == KNUT_SERVE__CMD_PREPARED_QUERY) {
        const KnutServe__Flightsql__CommandPreparedStatementQuery *p = (const void *)cmd->msg;
        *out = knut_serve__prepared_sql(s, who, p->prepared_statement_handle.data,
                                        p->prepared_statement_handle.len);
    } else if (cmd->kind == KNUT_SERVE__CMD_STATEMENT_QUERY ||
               cmd->kind == KNUT_SERVE__CMD_TICKET_STATEMENT) {
        st = cmd_sql(cmd, out, err);
    }
    if (!*out)
        return st;
    if (st == KNUT_OK && !knut_serve__cypher_adhoc(*out)) {
        free(*out);
        *out = NULL;
    }
    return st;
}

/* The catalog rows of cmd that who may see. */
static knut_status meta_rows(knut_serve__who *who, knut_duck_conn *conn,
                             const knut_serve__cmd *cmd, struct ArrowArrayStream *rows,
                             void (**fix)(struct ArrowSchema *), knut_error *err)
{
    knut_serve__visible vis;
    knut_status st = knut_serve__authz_visible(who, conn, &vis, err);
    if (st == KNUT_OK)
        st = knut_serve__meta_query(conn, cmd, &vis, rows, fix, err);
    knut_serve__visible_reset(&vis);
    return st;
}

static int is_meta(knut_serve__cmd_kind k)
{
    return k == KNUT_SERVE__CMD_GET_CATALOGS || k == KNUT_SERVE__CMD_GET_DB_SCHEMAS ||
           k == KNUT_SERVE__CMD_GET_TABLES || k == KNUT_SERVE__CMD_GET_TABLE_TYPES ||
           k == KNUT_SERVE__CMD_GET_SQL_INFO || k == KNUT_SERVE__CMD_GET_XDBC_TYPE_INFO ||
           k == KNUT_SERVE__CMD_GET_PRIMARY_KEYS || k == KNUT_SERVE__CMD_GET_EXPORTED_KEYS ||
           k == KNUT_SERVE__CMD_GET_IMPORTED_KEYS || k == KNUT_SERVE__CMD_GET_CROSS_REFERENCE;
}

knut_status knut_serve__sql_schema(knut_serve *s, knut_serve__who *who,
                                   const knut_serve__cmd *cmd, struct ArrowSchema *out,
                                   knut_error *err)
{
    out->release = NULL;
    knut_duck_conn *conn = NULL;
    knut_duck_stmt *stmt = NULL;
    struct ArrowArrayStream rows = {0};
    knut_status st;
    if (cmd->kind != KNUT_SERVE__CMD_STATEMENT_QUERY &&
        cmd->kind != KNUT_SERVE__CMD_PREPARED_QUERY && !is_meta(cmd->kind))
        return knut_error_set(err, cmd->kind == KNUT_SERVE__CMD_TICKET_STATEMENT ? KNUT_EINVAL
                                                                                : KNUT_EUNSUPPORTED,
                              "%s is not served by GetFlightInfo/GetSchema", cmd->name);
    char *adhoc = NULL;
    if ((st = adhoc_text(s, who, cmd, &adhoc, err)) != KNUT_OK || adhoc) {
        /* ad-hoc Cypher: its schema is known once it runs (DoGet) */
        free(adhoc);
        if (st == KNUT_OK && !knut_serve__authz_full(who))
            return knut_serve__denied(who, err, "ad-hoc Cypher reads the whole graph: only an "
                                                "identity that may read everything runs it");
        /* known once it runs: no schema for a prepared statement (what
         * ADBC takes: then the stream's), a schema of no columns for a
         * statement (pyarrow cannot read an empty one) */
        if (st != KNUT_OK || cmd->kind == KNUT_SERVE__CMD_PREPARED_QUERY)
            return st == KNUT_OK ? knut_error_set(err, KNUT_EAGAIN, "ad-hoc Cypher") : st;
        return knut_arrow_schema_init(out, "+s", "", 0, 0, err);
    }
    if ((st = knut_serve__conn_open(s, &conn, err)) != KNUT_OK)
        return st;
    if ((st = knut_serve__cypher_conn(s, conn, err)) != KNUT_OK) {
        knut_duck_conn_close(conn);
        return st;
    }
    if (is_meta(cmd->kind)) {
        /* catalog queries are small: run one for its schema */
        void (*fix)(struct ArrowSchema *) = NULL;
        st = meta_rows(who, conn, cmd, &rows, &fix, err);
        int rc = st == KNUT_OK ? rows.get_schema(&rows, out) : 0;
        if (rc)
            st = knut_arrow_stream_error(&rows, rc, "catalog schema", err);
        if (st == KNUT_OK && fix)
            fix(out);
    } else {
        st = cmd_stmt(s, who, cmd, conn, &stmt, err);
        if (st == KNUT_OK)
            st = knut_duck_stmt_schema(stmt, out, err);
        if (st == KNUT_OK) {
            knut_serve__origins *o = knut_serve__origins_find(conn, knut_duck_stmt_sql(stmt), out);
            knut_serve__column_metadata(out);
            knut_serve__origins_apply(o, out);
            knut_serve__origins_free(o);
        }
    }
    knut_arrow_stream_release(&rows);
    knut_duck_stmt_free(stmt);
    knut_duck_conn_close(conn);
    return st;
}

knut_status knut_serve__sql_ticket(const knut_serve__cmd *cmd, const uint8_t *cmd_bytes,
                                   size_t cmd_len, knut_buf *out, knut_error *err)
{
    knut_buf_clear(out);
    if (cmd->kind != KNUT_SERVE__CMD_STATEMENT_QUERY) {
        /* prepared statements and catalog commands: the command is the ticket */
        knut_buf_append(out, cmd_bytes, cmd_len);
        return knut_buf_check(out, err);
    }
    const KnutServe__Flightsql__CommandStatementQuery *q = (const void *)cmd->msg;
    size_t n = strlen(q->query);
    knut_buf handle = KNUT_BUF_INIT;
    knut_buf_putc(&handle, HANDLE_SQL);
    knut_buf_append(&handle, q->query, n);
    knut_status st = knut_buf_check(&handle, err);
    if (st == KNUT_OK) {
        KnutServe__Flightsql__TicketStatementQuery t =
            KNUT_SERVE__FLIGHTSQL__TICKET_STATEMENT_QUERY__INIT;
        t.statement_handle.data = (uint8_t *)handle.data;
        t.statement_handle.len = handle.len;
        st = knut_serve__any_pack("TicketStatementQuery", &t.base, out, err);
    }
    knut_buf_reset(&handle);
    return st;
}

/* The result columns' origins of a prepared statement, by the names of
 * its result schema (none when that is known only at execution). */
static knut_serve__origins *stmt_origins(knut_duck_conn *conn, knut_duck_stmt *stmt)
{
    struct ArrowSchema sc = {0};
    knut_error e = KNUT_ERROR_INIT;
    knut_serve__origins *o = NULL;
    if (knut_duck_stmt_schema(stmt, &sc, &e) == KNUT_OK)
        o = knut_serve__origins_find(conn, knut_duck_stmt_sql(stmt), &sc);
    if (sc.release)
        sc.release(&sc);
    knut_error_clear(&e);
    return o;
}

knut_status knut_serve__sql_doget(knut_serve *s, knut_serve__who *who, knut_net_grpc_call *call,
                                  const knut_serve__cmd *cmd, knut_error *err)
{
    knut_duck_conn *conn = NULL;
    knut_duck_stmt *stmt = NULL;
    struct ArrowArrayStream rows = {0};
    void (*fix)(struct ArrowSchema *) = NULL;
    int64_t nrows = 0;
    knut_status st;
    if (cmd->kind != KNUT_SERVE__CMD_TICKET_STATEMENT &&
        cmd->kind != KNUT_SERVE__CMD_PREPARED_QUERY && !is_meta(cmd->kind))
        return knut_error_set(err, cmd->kind == KNUT_SERVE__CMD_STATEMENT_QUERY ? KNUT_EINVAL
                                                                               : KNUT_EUNSUPPORTED,
                              "%s is not a ticket of this server (get one from GetFlightInfo)",
                              cmd->name);
    int64_t t0 = knut_clock_mono_ns();
    char *adhoc = NULL;
    if ((st = adhoc_text(s, who, cmd, &adhoc, err)) != KNUT_OK || adhoc) {
        if (st == KNUT_OK)
            st = knut_serve__cypher_adhoc_doget(s, who, call, adhoc, &nrows, err);
        who->rows = nrows;
        free(adhoc);
        return st;
    }
    if ((st = knut_serve__conn_open(s, &conn, err)) != KNUT_OK)
        return st;
    if ((st = knut_serve__cypher_conn(s, conn, err)) != KNUT_OK) {
        /* nothing more */
    } else if (is_meta(cmd->kind)) {
        st = meta_rows(who, conn, cmd, &rows, &fix, err);
    } else {
        st = cmd_stmt(s, who, cmd, conn, &stmt, err);
        /* the origins before the query: finding them runs queries on conn */
        knut_serve__origins *o = st == KNUT_OK ? stmt_origins(conn, stmt) : NULL;
        if (st == KNUT_OK)
            st = cypher_fill(s, who, cmd, conn, stmt, err);
        if (st == KNUT_OK)
            st = knut_duck_stmt_query(stmt, &rows, err);
        if (st == KNUT_OK && o && knut_serve__origins_wrap(&rows, o) == 0)
            o = NULL; /* the stream's get_schema sets the column metadata */
        else
            fix = knut_serve__column_metadata;
        knut_serve__origins_free(o);
    }
    if (st == KNUT_OK)
        st = knut_serve__stream_send(call, &rows, fix, s->max_message, &nrows, err);
    who->rows = nrows;
    KNUT_LOG(KNUT_LOG_DEBUG, SERVE_LOG, "DoGet %s: %lld rows in %lld ms (%s)", cmd->name,
             (long long)nrows, (long long)((knut_clock_mono_ns() - t0) / 1000000),
             knut_strerror(st));
    knut_arrow_stream_release(&rows);
    knut_duck_stmt_free(stmt);
    knut_duck_conn_close(conn);
    return st;
}
