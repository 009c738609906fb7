/*
 * Databases, connections and plain statement execution on DuckDB, plus the
 * one place where DuckDB's error text and error types become knut_error.
 */
#include "duck_int.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *knut_duck_library_version(void)
{
    const char *v = duckdb_library_version();
    return v ? v : "unknown";
}

/* ---- errors ------------------------------------------------------------ */

static knut_status duck_status_of(duckdb_error_type t)
{
    switch (t) {
    case DUCKDB_ERROR_PARSER:
    case DUCKDB_ERROR_SYNTAX:
        return KNUT_EPARSE;
    case DUCKDB_ERROR_CATALOG:
        return KNUT_ENOTFOUND;
    case DUCKDB_ERROR_IO:
    case DUCKDB_ERROR_HTTP:
    case DUCKDB_ERROR_NETWORK:
        return KNUT_EIO;
    case DUCKDB_ERROR_INTERRUPT:
        return KNUT_ECANCELLED;
    case DUCKDB_ERROR_OUT_OF_MEMORY:
        return KNUT_ENOMEM;
    case DUCKDB_ERROR_NOT_IMPLEMENTED:
        return KNUT_EUNSUPPORTED;
    case DUCKDB_ERROR_BINDER:
    case DUCKDB_ERROR_CONVERSION:
    case DUCKDB_ERROR_MISMATCH_TYPE:
    case DUCKDB_ERROR_OUT_OF_RANGE:
    case DUCKDB_ERROR_INVALID_INPUT:
    case DUCKDB_ERROR_INVALID_TYPE:
    case DUCKDB_ERROR_CONSTRAINT:
    case DUCKDB_ERROR_PARAMETER_NOT_RESOLVED:
    case DUCKDB_ERROR_PARAMETER_NOT_ALLOWED:
    case DUCKDB_ERROR_DIVIDE_BY_ZERO:
    case DUCKDB_ERROR_DECIMAL:
        return KNUT_EINVAL;
    default:
        return KNUT_ERROR;
    }
}

/*
 * DuckDB messages span lines ("Parser Error: ...\n\nLINE 1: ...\n    ^").
 * knut errors are one line, so the lines are joined with "; " and the
 * caret line, meaningless without its alignment, is dropped.
 */
static void duck_msg_oneline(const char *in, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = '\0';
    if (!in)
        return;
    while (*in && n + 1 < cap) {
        const char *eol = strchr(in, '\n');
        size_t len = eol ? (size_t)(eol - in) : strlen(in);
        size_t k = 0;
        while (k < len && (in[k] == ' ' || in[k] == '\t' || in[k] == '^' || in[k] == '\r'))
            k++;
        if (k < len) {
            while (len > 0 && (in[len - 1] == ' ' || in[len - 1] == '\r'))
                len--;
            if (n > 0 && n + 2 < cap) {
                memcpy(out + n, "; ", 2);
                n += 2;
            }
            size_t take = len < cap - 1 - n ? len : cap - 1 - n;
            memcpy(out + n, in, take);
            n += take;
            out[n] = '\0';
        }
        in += len;
        while (*in == '\n' || *in == '\r' || *in == ' ' || *in == '\t' || *in == '^')
            in++;
    }
}

static knut_status duck_error_text(knut_error *err, knut_status code, const char *what,
                                   const char *msg)
{
    char line[KNUT_ERROR_MSG_MAX];
    duck_msg_oneline(msg ? msg : "unknown DuckDB error", line, sizeof line);
    return knut_error_set(err, code, "%s: %s", what, line);
}

knut_status knut_duck__result_error(duckdb_result *res, const char *what, knut_error *err)
{
    knut_status code = duck_status_of(duckdb_result_error_type(res));
    return duck_error_text(err, code, what, duckdb_result_error(res));
}

knut_status knut_duck__error_data(duckdb_error_data *ed, const char *what, knut_error *err)
{
    knut_status code = duck_status_of(duckdb_error_data_error_type(*ed));
    duck_error_text(err, code, what, duckdb_error_data_message(*ed));
    duckdb_destroy_error_data(ed);
    return code;
}

knut_status knut_duck__text_error(const char *msg, const char *what, knut_error *err)
{
    static const struct {
        const char *prefix;
        knut_status code;
    } kinds[] = {
        {"Parser Error", KNUT_EPARSE},      {"Syntax Error", KNUT_EPARSE},
        {"Catalog Error", KNUT_ENOTFOUND},  {"IO Error", KNUT_EIO},
        {"HTTP Error", KNUT_EIO},           {"Binder Error", KNUT_EINVAL},
        {"Conversion Error", KNUT_EINVAL},  {"Invalid Input Error", KNUT_EINVAL},
        {"Out of Memory Error", KNUT_ENOMEM}, {"INTERRUPT Error", KNUT_ECANCELLED},
        {"Not implemented Error", KNUT_EUNSUPPORTED},
    };
    knut_status code = KNUT_ERROR;
    for (size_t i = 0; msg && i < sizeof kinds / sizeof kinds[0]; i++)
        if (strncmp(msg, kinds[i].prefix, strlen(kinds[i].prefix)) == 0)
            code = kinds[i].code;
    return duck_error_text(err, code, what, msg);
}

/* ---- database ---------------------------------------------------------- */

knut_status knut_duck_db_open(knut_duck_db **out, const char *path,
                              const knut_duck_option *opts, size_t nopts, knut_error *err)
{
    KNUT_ASSERT_ARG(err, out != NULL);
    KNUT_ASSERT_ARG(err, opts != NULL || nopts == 0);
    *out = NULL;
    knut_status st = KNUT_OK;
    duckdb_config cfg = NULL;
    char *open_err = NULL;
    knut_duck_db *db = calloc(1, sizeof *db);
    const char *where = (path && path[0]) ? path : ":memory:";

    if (!db) {
        st = knut_error_set(err, KNUT_ENOMEM, "opening database %s: out of memory", where);
        goto cleanup;
    }
    if (duckdb_create_config(&cfg) != DuckDBSuccess) {
        st = knut_error_set(err, KNUT_ENOMEM, "opening database %s: cannot create config", where);
        goto cleanup;
    }
    for (size_t i = 0; i < nopts; i++) {
        if (!opts[i].name || !opts[i].value) {
            st = knut_error_set(err, KNUT_EINVAL,
                                "opening database %s: option %zu has no name or value", where, i);
            goto cleanup;
        }
        if (duckdb_set_config(cfg, opts[i].name, opts[i].value) != DuckDBSuccess) {
            st = knut_error_set(err, KNUT_EINVAL,
                                "opening database %s: DuckDB rejected setting %s=%s "
                                "(unknown name or invalid value)",
                                where, opts[i].name, opts[i].value);
            goto cleanup;
        }
    }
    /* NULL selects DuckDB's private in-memory database; so does ":memory:". */
    if (duckdb_open_ext(path && path[0] ? path : NULL, &db->db, cfg, &open_err) != DuckDBSuccess) {
        char what[KNUT_ERROR_MSG_MAX / 2];
        snprintf(what, sizeof what, "opening database %s", where);
        st = knut_duck__text_error(open_err, what, err);
        /* An open that fails for a reason DuckDB does not classify is the
         * file's fault (missing directory, not a database, locked). */
        if (st == KNUT_ERROR) {
            st = KNUT_EIO;
            if (err)
                err->code = KNUT_EIO;
        }
        goto cleanup;
    }
    *out = db;
    db = NULL;

cleanup:
    if (open_err)
        duckdb_free(open_err);
    if (cfg)
        duckdb_destroy_config(&cfg);
    free(db);
    return st;
}

void knut_duck_db_close(knut_duck_db *db)
{
    if (!db)
        return;
    duckdb_close(&db->db);
    free(db);
}

/* ---- connections ------------------------------------------------------- */

knut_status knut_duck_conn_open(knut_duck_conn **out, knut_duck_db *db, knut_error *err)
{
    KNUT_ASSERT_ARG(err, out != NULL);
    KNUT_ASSERT_ARG(err, db != NULL);
    *out = NULL;
    knut_duck_conn *c = calloc(1, sizeof *c);
    if (!c)
        return knut_error_set(err, KNUT_ENOMEM, "connecting: out of memory");
    if (duckdb_connect(db->db, &c->conn) != DuckDBSuccess) {
        free(c);
        return knut_error_set(err, KNUT_ERROR, "connecting: DuckDB refused a new connection");
    }
    atomic_init(&c->refs, 1);
    atomic_init(&c->epoch, 0);
    *out = c;
    return KNUT_OK;
}

knut_duck_conn *knut_duck__conn_ref(knut_duck_conn *conn)
{
    atomic_fetch_add(&conn->refs, 1);
    return conn;
}

void knut_duck__conn_unref(knut_duck_conn *conn)
{
    if (!conn)
        return;
    if (atomic_fetch_sub(&conn->refs, 1) != 1)
        return;
    duckdb_disconnect(&conn->conn);
    free(conn);
}

void knut_duck_conn_close(knut_duck_conn *conn)
{
    knut_duck__conn_unref(conn);
}

void knut_duck_conn_interrupt(knut_duck_conn *conn)
{
    if (conn)
        duckdb_interrupt(conn->conn);
}

/* ---- transactions ------------------------------------------------------ */

/* Runs sql (no rows wanted); 1 when DuckDB accepted it. */
static int conn_probe(knut_duck_conn *conn, const char *sql)
{
    duckdb_result res;
    knut_duck__conn_begin(conn);
    int ok = duckdb_query(conn->conn, sql, &res) == DuckDBSuccess;
    duckdb_destroy_result(&res);
    return ok;
}

void knut_duck__conn_txn_note(knut_duck_conn *conn, duckdb_prepared_statement prep, int ok)
{
    if (duckdb_prepared_statement_type(prep) != DUCKDB_STATEMENT_TYPE_TRANSACTION)
        return;
    if (ok)
        conn->in_txn = !conn->in_txn;
    else if (conn->in_txn)
        conn->in_txn = !conn_probe(conn, "SELECT 1");
}

int knut_duck_conn_in_transaction(const knut_duck_conn *conn)
{
    return conn ? conn->in_txn : 0;
}

knut_status knut_duck_conn_begin(knut_duck_conn *conn, knut_error *err)
{
    KNUT_ASSERT_ARG(err, conn != NULL);
    /* Refused here, not by DuckDB: its refusal would abort the open one. */
    if (conn->in_txn)
        return knut_error_set(err, KNUT_EINVAL,
                              "starting a transaction: one is already open on this connection");
    return knut_duck_exec(conn, "BEGIN TRANSACTION", err);
}

knut_status knut_duck_conn_commit(knut_duck_conn *conn, knut_error *err)
{
    KNUT_ASSERT_ARG(err, conn != NULL);
    if (!conn->in_txn)
        return knut_error_set(err, KNUT_EINVAL,
                              "committing: no transaction is open on this connection");
    /* DuckDB answers COMMIT of a transaction aborted by an earlier error
     * with success and quietly rolls back; a probe makes that loss an error. */
    if (!conn_probe(conn, "SELECT 1")) {
        knut_duck_exec(conn, "ROLLBACK", NULL);
        return knut_error_set(err, KNUT_ERROR,
                              "committing: the transaction was aborted by an earlier error and "
                              "has been rolled back");
    }
    knut_status st = knut_duck_exec(conn, "COMMIT", err);
    if (st != KNUT_OK)
        knut_error_prefix(err, "committing: ");
    return st;
}

knut_status knut_duck_conn_rollback(knut_duck_conn *conn, knut_error *err)
{
    KNUT_ASSERT_ARG(err, conn != NULL);
    if (!conn->in_txn)
        return KNUT_OK;
    return knut_duck_exec(conn, "ROLLBACK", err);
}

/* ---- exec -------------------------------------------------------------- */

/*
 * 1 when sql contains a word that can start a transaction statement
 * (BEGIN, START, COMMIT, END, ROLLBACK, ABORT). Over-inclusive on purpose
 * (CASE ... END, a column named "start"): a false hit only costs the
 * statement-by-statement path, a miss would lose track of a transaction.
 */
static int sql_may_control_txn(const char *sql)
{
    static const char *const words[] = {"begin", "start", "commit", "end", "rollback", "abort"};
    const char *p = sql;
    while (*p) {
        if (!isalpha((unsigned char)*p)) {
            p++;
            continue;
        }
        const char *w = p;
        while (isalnum((unsigned char)*p) || *p == '_')
            p++;
        size_t len = (size_t)(p - w);
        for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
            if (strlen(words[i]) == len && strncasecmp(w, words[i], len) == 0)
                return 1;
    }
    return 0;
}

/* Runs sql one statement at a time, so each transaction statement's
 * outcome is seen (duckdb_query reports only the first failure). */
static knut_status exec_each(knut_duck_conn *conn, const char *sql, knut_error *err)
{
    knut_status st = KNUT_OK;
    duckdb_extracted_statements ext = NULL;
    knut_duck__conn_begin(conn);
    idx_t n = duckdb_extract_statements(conn->conn, sql, &ext);
    if (n == 0) {
        const char *msg = duckdb_extract_statements_error(ext);
        st = msg ? knut_duck__text_error(msg, "executing SQL", err) : KNUT_OK;
        goto cleanup;
    }
    for (idx_t i = 0; i < n && st == KNUT_OK; i++) {
        duckdb_prepared_statement prep = NULL;
        duckdb_result res;
        if (duckdb_prepare_extracted_statement(conn->conn, ext, i, &prep) != DuckDBSuccess) {
            st = knut_duck__text_error(duckdb_prepare_error(prep), "executing SQL", err);
            duckdb_destroy_prepare(&prep);
            break;
        }
        knut_duck__conn_begin(conn);
        int ok = duckdb_execute_prepared(prep, &res) == DuckDBSuccess;
        if (!ok)
            st = knut_duck__result_error(&res, "executing SQL", err);
        duckdb_destroy_result(&res);
        knut_duck__conn_txn_note(conn, prep, ok);
        duckdb_destroy_prepare(&prep);
    }

cleanup:
    duckdb_destroy_extracted(&ext);
    return st;
}

knut_status knut_duck_exec(knut_duck_conn *conn, const char *sql, knut_error *err)
{
    KNUT_ASSERT_ARG(err, conn != NULL);
    KNUT_ASSERT_ARG(err, sql != NULL);
    if (sql_may_control_txn(sql))
        return exec_each(conn, sql, err);
    duckdb_result res;
    knut_status st = KNUT_OK;
    knut_duck__conn_begin(conn);
    /* duckdb_query runs every statement in sql; the result must be
     * destroyed even on failure, since it holds the error. */
    if (duckdb_query(conn->conn, sql, &res) != DuckDBSuccess)
        st = knut_duck__result_error(&res, "executing SQL", err);
    duckdb_destroy_result(&res);
    return st;
}
