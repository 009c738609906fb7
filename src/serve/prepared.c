/*
 * Prepared statements: CreatePreparedStatement checks the SQL (by
 * preparing it) and answers a signed handle that holds it (handle.c), with
 * the dataset and parameter schemas; DoPut with
 * CommandPreparedStatementQuery binds a parameter row and answers a new
 * handle that holds the parameters too (DoPutPreparedStatementResult, which
 * the ADBC and JDBC drivers take); GetFlightInfo/DoGet prepare the handle's
 * SQL again on their own connection with those parameters. So a handle
 * needs no state here and works on any server with the same handle key.
 *
 * A client that keeps using the handle it had before DoPut still finds its
 * parameters: they are also kept here under the handle's nonce, in a table
 * bounded by --max-prepared and dropped after --prepared-ttl idle or on
 * ClosePreparedStatement. Parameters over KNUT_SERVE__MAX_HANDLE_PARAMS are
 * kept here only (such a handle does not outlive the process).
 */
#include <openssl/rand.h>
#include <stdlib.h>
#include <string.h>

#include "serve_int.h"

/* What a parameter batch may be, whole (one row of values). */
#define MAX_PARAMS_BYTES ((size_t)16 << 20)

/* Drops the entries idle past the TTL; the lock is held. */
static void expire(knut_serve *s, int64_t now)
{
    for (size_t i = 0; i < s->n_prepared;) {
        if (now - s->prepared[i].used_ns > s->prepared_ttl_ns) {
            knut_buf_reset(&s->prepared[i].params);
            s->prepared[i] = s->prepared[--s->n_prepared];
        } else {
            i++;
        }
    }
}

/* The entry of handle h; the lock is held. h's owner was checked against
 * the caller, and the entry must be that owner's too. */
static knut_serve__prepared *find(knut_serve *s, const knut_serve__handle *h)
{
    expire(s, knut_clock_mono_ns());
    for (size_t i = 0; i < s->n_prepared; i++)
        if (memcmp(s->prepared[i].nonce, h->nonce, KNUT_SERVE__NONCE_LEN) == 0 &&
            strcmp(s->prepared[i].owner, h->owner) == 0)
            return &s->prepared[i];
    return NULL;
}

/* Verifies a handle and that who made it. Another identity's handle is as
 * unknown as one never made. */
static knut_status handle_open(knut_serve *s, const knut_serve__who *who, const uint8_t *data,
                               size_t n, knut_serve__handle *h, knut_error *err)
{
    knut_status st = knut_serve__handle_decode(&s->hkey, data, n, h, err);
    if (st == KNUT_OK && strcmp(h->owner, who->name) != 0) {
        memset(h, 0, sizeof *h);
        st = knut_error_set(err, KNUT_ENOTFOUND, "unknown prepared statement handle (made for "
                                                 "another identity)");
    }
    return st;
}

knut_status knut_serve__prepared_create(knut_serve *s, knut_serve__who *who, const uint8_t *body,
                                        size_t len, knut_buf *result, knut_error *err)
{
    ProtobufCMessage *m = NULL;
    knut_duck_conn *conn = NULL;
    knut_duck_stmt *stmt = NULL;
    struct ArrowSchema ds = {0}, ps = {0};
    knut_buf dsb = KNUT_BUF_INIT, psb = KNUT_BUF_INIT;
    char *sql = NULL;
    knut_buf hb = KNUT_BUF_INIT;
    knut_serve__handle h = {0}; /* before any goto: make_handle uses it */
    knut_status st = knut_serve__any_unpack(
        body, len, "ActionCreatePreparedStatementRequest",
        &knut_serve__flightsql__action_create_prepared_statement_request__descriptor, &m,
        err);
    if (st != KNUT_OK)
        goto cleanup;
    const KnutServe__Flightsql__ActionCreatePreparedStatementRequest *req = (void *)m;
    size_t n = strlen(req->query);
    if (n == 0 || n > KNUT_SERVE__MAX_SQL) {
        st = knut_error_set(err, n ? KNUT_ETOOBIG : KNUT_EINVAL, "query of %zu bytes (1 to %zu)",
                            n, KNUT_SERVE__MAX_SQL);
        goto cleanup;
    }
    if (!(sql = strdup(req->query))) {
        st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
        goto cleanup;
    }
    if (knut_serve__cypher_adhoc(sql)) {
        /* ad-hoc Cypher: nothing to prepare; its schemas are the stream's */
        if (!knut_serve__authz_full(who))
            st = knut_serve__denied(who, err, "ad-hoc Cypher reads the whole graph: only an "
                                              "identity that may read everything runs it");
        if (st != KNUT_OK)
            goto cleanup;
        goto make_handle;
    }
    if ((st = knut_serve__conn_open(s, &conn, err)) != KNUT_OK ||
        (st = knut_serve__cypher_conn(s, conn, err)) != KNUT_OK)
        goto cleanup;
    if ((st = knut_duck_stmt_prepare(&stmt, conn, sql, err)) != KNUT_OK) {
        knut_duck_error_trim(err);
        goto cleanup;
    }
    if ((st = knut_serve__authz_sql(s, who, conn, sql, stmt, err)) != KNUT_OK)
        goto cleanup;
    /* a schema known only at execution (SELECT $1 + 1) is sent empty, as
     * the protocol allows: the client then takes the stream's */
    st = knut_duck_stmt_schema(stmt, &ds, err);
    if (st == KNUT_OK) {
        knut_serve__origins *o = knut_serve__origins_find(conn, sql, &ds);
        knut_serve__column_metadata(&ds);
        knut_serve__origins_apply(o, &ds);
        knut_serve__origins_free(o);
    }
    if (st == KNUT_OK)
        st = knut_serve__schema_bytes(&ds, &dsb, err);
    else if (st == KNUT_EAGAIN)
        st = KNUT_OK;
    /* the parameters' schema whatever the result's: those queries need it most */
    if (st == KNUT_OK && knut_duck_stmt_param_count(stmt) > 0) {
        st = knut_duck_stmt_param_schema(stmt, &ps, err);
        if (st == KNUT_OK)
            knut_serve__params_schema_ms(&ps);
        if (st == KNUT_OK)
            st = knut_serve__schema_bytes(&ps, &psb, err);
        else if (st == KNUT_EAGAIN)
            st = KNUT_OK;
    }
    if (st != KNUT_OK)
        goto cleanup;
make_handle:
    if (RAND_bytes(h.nonce, sizeof h.nonce) != 1) {
        st = knut_error_set(err, KNUT_ERROR, "no random bytes for a handle");
        goto cleanup;
    }
    snprintf(h.owner, sizeof h.owner, "%s", who->name);
    h.sql = sql;
    h.sql_len = n;
    if ((st = knut_serve__handle_encode(&s->hkey, &h, &hb, err)) != KNUT_OK)
        goto cleanup;

    KnutServe__Flightsql__ActionCreatePreparedStatementResult r =
        KNUT_SERVE__FLIGHTSQL__ACTION_CREATE_PREPARED_STATEMENT_RESULT__INIT;
    r.prepared_statement_handle.data = (uint8_t *)hb.data;
    r.prepared_statement_handle.len = hb.len;
    r.dataset_schema.data = (uint8_t *)dsb.data;
    r.dataset_schema.len = dsb.len;
    r.parameter_schema.data = (uint8_t *)psb.data;
    r.parameter_schema.len = psb.len;
    st = knut_serve__any_pack("ActionCreatePreparedStatementResult", &r.base, result, err);

cleanup:
    free(sql);
    knut_arrow_schema_release(&ds);
    knut_arrow_schema_release(&ps);
    knut_buf_reset(&dsb);
    knut_buf_reset(&psb);
    knut_buf_reset(&hb);
    knut_duck_stmt_free(stmt);
    knut_duck_conn_close(conn);
    if (m)
        protobuf_c_message_free_unpacked(m, NULL);
    return st;
}

knut_status knut_serve__prepared_close(knut_serve *s, knut_serve__who *who, const uint8_t *body,
                                       size_t len, knut_error *err)
{
    ProtobufCMessage *m = NULL;
    knut_serve__handle h;
    knut_status st = knut_serve__any_unpack(
        body, len, "ActionClosePreparedStatementRequest",
        &knut_serve__flightsql__action_close_prepared_statement_request__descriptor, &m,
        err);
    if (st != KNUT_OK)
        return st;
    const KnutServe__Flightsql__ActionClosePreparedStatementRequest *req = (void *)m;
    st = handle_open(s, who, req->prepared_statement_handle.data,
                     req->prepared_statement_handle.len, &h, err);
    /* a handle of ours holds everything: closing it only drops what is
     * kept here (nothing, for a statement without parameters) */
    if (st == KNUT_OK) {
        pthread_mutex_lock(&s->lock);
        knut_serve__prepared *p = find(s, &h);
        if (p) {
            knut_buf_reset(&p->params);
            *p = s->prepared[--s->n_prepared];
        }
        pthread_mutex_unlock(&s->lock);
    }
    protobuf_c_message_free_unpacked(m, NULL);
    return st;
}

/* Reads the IPC stream in bytes and checks it is one row of parameters. */
static knut_status params_check(const knut_buf *bytes, knut_error *err)
{
    knut_arrow_ipc_source src;
    knut_arrow_ipc_reader *r = NULL;
    struct ArrowArray batch = {0};
    int64_t rows = 0;
    knut_status st = knut_arrow_ipc_source_mem(&src, bytes->data, bytes->len, err);
    if (st == KNUT_OK)
        st = knut_arrow_ipc_reader_new(&r, src, NULL, err);
    while (st == KNUT_OK) {
        st = knut_arrow_ipc_reader_next(r, &batch, err);
        if (st != KNUT_OK || !batch.release)
            break;
        rows += batch.length;
        knut_arrow_array_release(&batch);
    }
    knut_arrow_ipc_reader_free(r);
    if (st != KNUT_OK)
        return knut_error_prefix(err, "parameter batch: ");
    if (rows != 1)
        return knut_error_set(err, KNUT_EUNSUPPORTED, "parameter batch of %lld rows: one row "
                                                      "per execution is served today",
                              (long long)rows);
    return KNUT_OK;
}

/* Keeps params under h's nonce (replacing what was bound before); the
 * table takes params over. */
static knut_status keep(knut_serve *s, const knut_serve__handle *h, knut_buf *params,
                        knut_error *err)
{
    knut_status st = KNUT_OK;
    pthread_mutex_lock(&s->lock);
    knut_serve__prepared *p = find(s, h);
    if (!p && s->n_prepared >= s->max_prepared) {
        st = knut_error_set(err, KNUT_ETOOBIG, "%zu prepared statements hold bound parameters: "
                                               "close some (or raise --max-prepared)",
                            s->n_prepared);
    } else if (!p && s->n_prepared == s->cap_prepared) {
        size_t cap = s->cap_prepared ? s->cap_prepared * 2 : 16;
        knut_serve__prepared *t = realloc(s->prepared, cap * sizeof *t);
        if (!t)
            st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
        else {
            s->prepared = t;
            s->cap_prepared = cap;
        }
    }
    if (st == KNUT_OK && !p) {
        p = &s->prepared[s->n_prepared++];
        memset(p, 0, sizeof *p);
        memcpy(p->nonce, h->nonce, KNUT_SERVE__NONCE_LEN);
        snprintf(p->owner, sizeof p->owner, "%s", h->owner);
    }
    if (st == KNUT_OK) {
        knut_buf_reset(&p->params);
        p->params = *params;
        p->used_ns = knut_clock_mono_ns();
        knut_buf_init(params, 0);
    }
    pthread_mutex_unlock(&s->lock);
    return st;
}

knut_status knut_serve__prepared_bind(knut_serve *s, knut_serve__who *who, const uint8_t *handle,
                                      size_t hlen,
                                      knut_net_grpc_call *call,
                                      const KnutServe__FlightData *first,
                                      knut_error *err)
{
    knut_buf ipc, msg;
    knut_buf_init(&ipc, MAX_PARAMS_BYTES);
    knut_buf_init(&msg, s->max_receive);
    knut_buf out = KNUT_BUF_INIT, nh = KNUT_BUF_INIT;
    knut_serve__handle h;
    /* the handle first: nothing is read for a handle that is not ours */
    knut_status st = handle_open(s, who, handle, hlen, &h, err);
    if (st == KNUT_OK)
        st = knut_serve__flightdata_to_ipc(first, &ipc, err);
    while (st == KNUT_OK) {
        st = knut_net_grpc_call_read(call, &msg, err);
        if (st == KNUT_EOF) {
            st = KNUT_OK;
            break;
        }
        KnutServe__FlightData *fd =
            st == KNUT_OK ? knut_serve__flight_data__unpack(
                                NULL, msg.len, (const uint8_t *)msg.data)
                          : NULL;
        if (st == KNUT_OK && !fd)
            st = knut_error_set(err, KNUT_EPARSE, "DoPut: a message that is not FlightData");
        if (fd) {
            st = knut_serve__flightdata_to_ipc(fd, &ipc, err);
            knut_serve__flight_data__free_unpacked(fd, NULL);
        }
    }
    if (st == KNUT_OK && ipc.len == 0)
        st = knut_error_set(err, KNUT_EINVAL, "DoPut: no parameter batch was sent");
    if (st == KNUT_OK)
        st = params_check(&ipc, err);
    /* the new handle carries the parameters when they fit */
    if (st == KNUT_OK && ipc.len <= KNUT_SERVE__MAX_HANDLE_PARAMS) {
        knut_serve__handle bound = h;
        bound.params = (const uint8_t *)ipc.data;
        bound.params_len = ipc.len;
        st = knut_serve__handle_encode(&s->hkey, &bound, &nh, err);
    }
    if (st == KNUT_OK)
        st = keep(s, &h, &ipc, err);
    if (st == KNUT_OK) {
        KnutServe__Flightsql__DoPutPreparedStatementResult r =
            KNUT_SERVE__FLIGHTSQL__DO_PUT_PREPARED_STATEMENT_RESULT__INIT;
        r._prepared_statement_handle_case =
            KNUT_SERVE__FLIGHTSQL__DO_PUT_PREPARED_STATEMENT_RESULT___PREPARED_STATEMENT_HANDLE_PREPARED_STATEMENT_HANDLE;
        r.prepared_statement_handle.data = nh.len ? (uint8_t *)nh.data : (uint8_t *)handle;
        r.prepared_statement_handle.len = nh.len ? nh.len : hlen;
        knut_buf meta = KNUT_BUF_INIT;
        st = knut_serve__pack(&r.base, &meta, err);
        KnutServe__PutResult pr = KNUT_SERVE__PUT_RESULT__INIT;
        pr.app_metadata.data = (uint8_t *)meta.data;
        pr.app_metadata.len = meta.len;
        if (st == KNUT_OK)
            st = knut_serve__pack(&pr.base, &out, err);
        if (st == KNUT_OK)
            st = knut_net_grpc_call_write(call, out.data, out.len, err);
        knut_buf_reset(&meta);
    }
    knut_buf_reset(&ipc);
    knut_buf_reset(&msg);
    knut_buf_reset(&out);
    knut_buf_reset(&nh);
    return st;
}

/* A handle's SQL (owned, NUL-terminated) and its parameters: the handle's
 * own, else those DoPut kept for it (params left empty: none). */
static knut_status handle_parts(knut_serve *s, knut_serve__who *who, const uint8_t *handle,
                                size_t hlen, char **sql, knut_buf *params, knut_error *err)
{
    *sql = NULL;
    knut_serve__handle h;
    knut_status st = handle_open(s, who, handle, hlen, &h, err);
    if (st == KNUT_OK && !(*sql = malloc(h.sql_len + 1)))
        st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
    if (st == KNUT_OK) {
        memcpy(*sql, h.sql, h.sql_len);
        (*sql)[h.sql_len] = 0;
    }
    if (st == KNUT_OK && h.params) {
        knut_buf_append(params, h.params, h.params_len);
        st = knut_buf_check(params, err);
    } else if (st == KNUT_OK) {
        pthread_mutex_lock(&s->lock);
        knut_serve__prepared *p = find(s, &h);
        if (p) {
            p->used_ns = knut_clock_mono_ns();
            knut_buf_append(params, p->params.data, p->params.len);
            st = knut_buf_check(params, err);
        }
        pthread_mutex_unlock(&s->lock);
    }
    if (st != KNUT_OK) {
        free(*sql);
        *sql = NULL;
    }
    return st;
}

/* Binds the one parameter row of params (an IPC stream) to stmt. */
static knut_status params_bind_ipc(knut_duck_stmt *stmt, const knut_buf *params,
                                   knut_error *err)
{
    knut_arrow_ipc_reader *r = NULL;
    struct ArrowArray batch = {0};
    knut_arrow_ipc_source src;
    knut_status st = knut_arrow_ipc_source_mem(&src, params->data, params->len, err);
    if (st == KNUT_OK)
        st = knut_arrow_ipc_reader_new(&r, src, NULL, err);
    while (st == KNUT_OK && !batch.release) {
        st = knut_arrow_ipc_reader_next(r, &batch, err);
        if (st == KNUT_OK && !batch.release)
            st = knut_error_set(err, KNUT_EINVAL, "parameter batch without rows");
        else if (st == KNUT_OK && batch.length == 0)
            knut_arrow_array_release(&batch);
    }
    if (st == KNUT_OK)
        st = knut_serve__params_bind(stmt, knut_arrow_ipc_reader_schema(r), &batch, 0, err);
    knut_arrow_array_release(&batch);
    knut_arrow_ipc_reader_free(r);
    return st;
}

knut_status knut_serve__prepared_stmt(knut_serve *s, knut_serve__who *who, const uint8_t *handle,
                                      size_t hlen,
                                      knut_duck_conn *conn, knut_duck_stmt **out,
                                      knut_error *err)
{
    *out = NULL;
    char *sql = NULL;
    knut_buf params = KNUT_BUF_INIT;
    knut_status st = handle_parts(s, who, handle, hlen, &sql, &params, err);
    if (st == KNUT_OK)
        st = knut_duck_stmt_prepare(out, conn, sql, err);
    /* checked again at each use, not only when it was made */
    if (st == KNUT_OK)
        st = knut_serve__authz_sql(s, who, conn, sql, *out, err);
    if (st == KNUT_OK && params.len)
        st = params_bind_ipc(*out, &params, err);
    else if (st == KNUT_OK && knut_duck_stmt_param_count(*out) > 0)
        st = knut_error_set(err, KNUT_EINVAL, "the statement takes %zu parameters and none were "
                                              "bound (DoPut them first)",
                            knut_duck_stmt_param_count(*out));
    if (st != KNUT_OK) {
        knut_duck_stmt_free(*out);
        *out = NULL;
    }
    free(sql);
    knut_buf_reset(&params);
    return st;
}

knut_status knut_serve__prepared_bind_to(knut_serve *s, knut_serve__who *who,
                                         const uint8_t *handle, size_t hlen,
                                         knut_duck_stmt *stmt, knut_error *err)
{
    char *sql = NULL;
    knut_buf params = KNUT_BUF_INIT;
    knut_status st = handle_parts(s, who, handle, hlen, &sql, &params, err);
    if (st == KNUT_OK && params.len)
        st = params_bind_ipc(stmt, &params, err);
    free(sql);
    knut_buf_reset(&params);
    return st;
}

char *knut_serve__prepared_sql(knut_serve *s, knut_serve__who *who, const uint8_t *handle,
                               size_t hlen)
{
    char *sql = NULL;
    knut_buf params = KNUT_BUF_INIT;
    knut_error err = KNUT_ERROR_INIT;
    if (handle_parts(s, who, handle, hlen, &sql, &params, &err) != KNUT_OK)
        sql = NULL;
    knut_buf_reset(&params);
    return sql;
}

void knut_serve__prepared_free_all(knut_serve *s)
{
    for (size_t i = 0; i < s->n_prepared; i++)
        knut_buf_reset(&s->prepared[i].params);
    free(s->prepared);
    s->prepared = NULL;
    s->n_prepared = s->cap_prepared = 0;
}
