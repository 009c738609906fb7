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

/*
 * The one table of DuckDB's error kinds: its error type, the knut status
 * and detail it becomes, and, where knut must read the kind from text (a
 * failed prepare, parse or open gives no type), the message prefix DuckDB
 * writes for it. Every prefix here has a unit test that provokes the real
 * error (tests/unit/test_duck_errors.c); a kind without one is known from
 * its type only.
 */
static const struct {
    duckdb_error_type type;
    const char *prefix;
    knut_status code;
    knut_duck_error_kind kind;
} duck_kinds[] = {
    {DUCKDB_ERROR_PARSER, "Parser Error: ", KNUT_EPARSE, KNUT_DUCK_ERR_PARSER},
    {DUCKDB_ERROR_SYNTAX, NULL, KNUT_EPARSE, KNUT_DUCK_ERR_PARSER},
    {DUCKDB_ERROR_CATALOG, "Catalog Error: ", KNUT_ENOTFOUND, KNUT_DUCK_ERR_CATALOG},
    {DUCKDB_ERROR_BINDER, "Binder Error: ", KNUT_EINVAL, KNUT_DUCK_ERR_BINDER},
    {DUCKDB_ERROR_CONVERSION, "Conversion Error: ", KNUT_EINVAL, KNUT_DUCK_ERR_CONVERSION},
    {DUCKDB_ERROR_MISMATCH_TYPE, NULL, KNUT_EINVAL, KNUT_DUCK_ERR_CONVERSION},
    {DUCKDB_ERROR_OUT_OF_RANGE, NULL, KNUT_EINVAL, KNUT_DUCK_ERR_CONVERSION},
    {DUCKDB_ERROR_DECIMAL, NULL, KNUT_EINVAL, KNUT_DUCK_ERR_CONVERSION},
    {DUCKDB_ERROR_INVALID_TYPE, NULL, KNUT_EINVAL, KNUT_DUCK_ERR_CONVERSION},
    {DUCKDB_ERROR_DIVIDE_BY_ZERO, NULL, KNUT_EINVAL, KNUT_DUCK_ERR_CONVERSION},
    {DUCKDB_ERROR_INVALID_INPUT, "Invalid Input Error: ", KNUT_EINVAL,
     KNUT_DUCK_ERR_INVALID_INPUT},
    {DUCKDB_ERROR_PARAMETER_NOT_RESOLVED, NULL, KNUT_EINVAL, KNUT_DUCK_ERR_INVALID_INPUT},
    {DUCKDB_ERROR_PARAMETER_NOT_ALLOWED, NULL, KNUT_EINVAL, KNUT_DUCK_ERR_INVALID_INPUT},
    {DUCKDB_ERROR_CONSTRAINT, NULL, KNUT_EINVAL, KNUT_DUCK_ERR_CONSTRAINT},
    {DUCKDB_ERROR_IO, "IO Error: ", KNUT_EIO, KNUT_DUCK_ERR_IO},
    {DUCKDB_ERROR_HTTP, NULL, KNUT_EIO, KNUT_DUCK_ERR_IO},
    {DUCKDB_ERROR_NETWORK, NULL, KNUT_EIO, KNUT_DUCK_ERR_IO},
    {DUCKDB_ERROR_OUT_OF_MEMORY, "Out of Memory Error: ", KNUT_ENOMEM,
     KNUT_DUCK_ERR_OUT_OF_MEMORY},
    {DUCKDB_ERROR_INTERRUPT, NULL, KNUT_ECANCELLED, KNUT_DUCK_ERR_INTERRUPT},
    {DUCKDB_ERROR_NOT_IMPLEMENTED, NULL, KNUT_EUNSUPPORTED, KNUT_DUCK_ERR_NOT_IMPLEMENTED},
    {DUCKDB_ERROR_TRANSACTION, NULL, KNUT_ERROR, KNUT_DUCK_ERR_TRANSACTION},
    {DUCKDB_ERROR_FATAL, NULL, KNUT_ERROR, KNUT_DUCK_ERR_FATAL},
    {DUCKDB_ERROR_INTERNAL, NULL, KNUT_ERROR, KNUT_DUCK_ERR_INTERNAL},
};

#define N_DUCK_KINDS (sizeof duck_kinds / sizeof duck_kinds[0])

/* The row of type t, or N_DUCK_KINDS: KNUT_ERROR, KNUT_DUCK_ERR_OTHER. */
static size_t duck_kind_of_type(duckdb_error_type t)
{
    size_t i = 0;
    while (i < N_DUCK_KINDS && duck_kinds[i].type != t)
        i++;
    return i;
}

static size_t duck_kind_of_text(const char *msg)
{
    size_t i = 0;
    while (i < N_DUCK_KINDS &&
           !(msg && duck_kinds[i].prefix &&
             strncmp(msg, duck_kinds[i].prefix, strlen(duck_kinds[i].prefix)) == 0))
        i++;
    return i;
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

/* "what: <message>" with the code and detail of row k of duck_kinds. */
static knut_status duck_error_text(knut_error *err, size_t k, const char *what, const char *msg)
{
    char line[KNUT_ERROR_MSG_MAX];
    knut_status code = k < N_DUCK_KINDS ? duck_kinds[k].code : KNUT_ERROR;
    duck_msg_oneline(msg ? msg : "unknown DuckDB error", line, sizeof line);
    knut_error_set(err, code, "%s: %s", what, line);
    if (err)
        err->detail = k < N_DUCK_KINDS ? (int)duck_kinds[k].kind : KNUT_DUCK_ERR_OTHER;
    return code;
}

knut_status knut_duck__result_error(duckdb_result *res, const char *what, knut_error *err)
{
    size_t k = duck_kind_of_type(duckdb_result_error_type(res));
    return duck_error_text(err, k, what, duckdb_result_error(res));
}

knut_status knut_duck__error_data(duckdb_error_data *ed, const char *what, knut_error *err)
{
    size_t k = duck_kind_of_type(duckdb_error_data_error_type(*ed));
    knut_status code = duck_error_text(err, k, what, duckdb_error_data_message(*ed));
    duckdb_destroy_error_data(ed);
    return code;
}

knut_status knut_duck__text_error(const char *msg, const char *what, knut_error *err)
{
    return duck_error_text(err, duck_kind_of_text(msg), what, msg);
}

void knut_duck_error_trim(knut_error *err)
{
    /* The sections DuckDB adds after what broke, as duck_msg_oneline joins
     * them: advice for the user, and the echo of the statement. */
    static const char *const cut[] = {"; LINE 1:", "; Possible Solution:", "; Possible fixes:"};
    for (size_t i = 0; err && i < sizeof cut / sizeof cut[0]; i++) {
        char *p = strstr(err->message, cut[i]);
        if (p)
            *p = '\0';
    }
}

void knut_duck_error_reading(knut_error *err)
{
    knut_duck_error_trim(err);
    if (!err || err->detail < KNUT_DUCK_ERR_OTHER || err->detail > KNUT_DUCK_ERR_TRANSACTION)
        return;
    /* the CSV reader's advice (a cast's kind) and the dump of its settings */
    static const char *const tail[] = {"; Possible solutions:", "; file = "};
    for (size_t i = 0; i < sizeof tail / sizeof tail[0]; i++) {
        char *p = strstr(err->message, tail[i]);
        if (p)
            *p = '\0';
    }
    /* DuckDB's "<Kind> Error: " prefix, and knut's own "executing
     * statement: " before it; a caller's context ("sql step: ") stays */
    static const char *const internal[] = {"executing ", "preparing ", "running query",
                                           "parsing SQL", "reading results", "converting "};
    char *m = err->message, *kind = NULL;
    size_t klen = 0;
    for (size_t i = 0; i < N_DUCK_KINDS; i++) { /* the first one in the text */
        char *at = duck_kinds[i].prefix ? strstr(m, duck_kinds[i].prefix) : NULL;
        if (at && (!kind || at < kind)) {
            kind = at;
            klen = strlen(duck_kinds[i].prefix);
        }
    }
    if (!kind)
        return;
    char *cut = kind, *seg = kind; /* the start of what goes: the internal "what: " too */
    if (kind - m >= 2 && kind[-2] == ':' && kind[-1] == ' ') {
        seg = kind - 2;
        while (seg - m >= 2 && !(seg[-2] == ':' && seg[-1] == ' '))
            seg--;
        if (seg - m < 2)
            seg = m;
        for (size_t i = 0; i < sizeof internal / sizeof internal[0]; i++)
            if (strncmp(seg, internal[i], strlen(internal[i])) == 0)
                cut = seg;
    }
    const char *text = kind + klen;
    char out[KNUT_ERROR_MSG_MAX];
    size_t keep = (size_t)(cut - m); /* < sizeof out: both are message-sized */
    memcpy(out, m, keep);
    static const char csv[] = "CSV Error on Line: ";
    if (strncmp(text, csv, sizeof csv - 1) == 0) {
        /* "CSV Error on Line: N; Original Line: <the data>; why" (the
         * data is one line; it ends at its first "; ", short of a "; " in
         * the data itself) */
        long long line = strtoll(text + sizeof csv - 1, NULL, 10);
        const char *why = strstr(text, "; Original Line: ");
        why = why ? strstr(why + 2, "; ") : strstr(text, "; ");
        why = why ? why + 2 : text;
        snprintf(out + keep, sizeof out - keep, "line %lld: %s", line, why);
    } else {
        snprintf(out + keep, sizeof out - keep, "%s", text);
    }
    snprintf(err->message, sizeof err->message, "%s", out);
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
