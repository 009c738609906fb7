/*
 * Prepared statements: CreatePreparedStatement checks the SQL (by
 * preparing it) and keeps it under a random handle, with its dataset and
 * parameter schemas in the answer; DoPut with CommandPreparedStatementQuery
 * binds a parameter row to the handle; GetFlightInfo/DoGet prepare it
 * again on their own connection with those parameters; ClosePreparedStatement
 * forgets it. The table is shared by every call (one lock) and bounded
 * (KNUT_SERVE_MAX_PREPARED). Handles live as long as the server: after a
 * restart a client must prepare again.
 */
#include <openssl/rand.h>
#include <stdlib.h>
#include <string.h>

#include "serve_int.h"

/* What a parameter batch may be, whole (one row of values). */
#define MAX_PARAMS_BYTES ((size_t)16 << 20)


static int handle_eq(const knut_serve__prepared *p, const uint8_t *h, size_t n)
{
    return n == KNUT_SERVE__HANDLE_LEN && memcmp(p->handle, h, n) == 0;
}

/* The entry of handle h made by who; the lock is held. Another
 * identity's handle is as unknown as one never made. */
static knut_serve__prepared *find(knut_serve *s, const knut_serve__who *who, const uint8_t *h,
                                  size_t n)
{
    for (size_t i = 0; i < s->n_prepared; i++)
        if (handle_eq(&s->prepared[i], h, n) && strcmp(s->prepared[i].owner, who->name) == 0)
            return &s->prepared[i];
    return NULL;
}

static knut_status not_found(knut_error *err)
{
    return knut_error_set(err, KNUT_ENOTFOUND, "unknown prepared statement handle (closed, or "
                                               "made before the server restarted)");
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
    knut_serve__prepared e = {0};
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
    if ((st = knut_duck_conn_open(&conn, s->db, err)) != KNUT_OK)
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
    if (RAND_bytes(e.handle, sizeof e.handle) != 1) {
        st = knut_error_set(err, KNUT_ERROR, "no random bytes for a handle");
        goto cleanup;
    }
    e.sql = sql;
    snprintf(e.owner, sizeof e.owner, "%s", who->name);
    pthread_mutex_lock(&s->lock);
    if (s->n_prepared == KNUT_SERVE_MAX_PREPARED) {
        st = knut_error_set(err, KNUT_ETOOBIG, "%d prepared statements are open: close some",
                            KNUT_SERVE_MAX_PREPARED);
    } else if (s->n_prepared == s->cap_prepared) {
        size_t cap = s->cap_prepared ? s->cap_prepared * 2 : 16;
        knut_serve__prepared *p = realloc(s->prepared, cap * sizeof *p);
        if (!p)
            st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
        else {
            s->prepared = p;
            s->cap_prepared = cap;
        }
    }
    if (st == KNUT_OK) {
        s->prepared[s->n_prepared++] = e;
        sql = NULL; /* the table's now */
    }
    pthread_mutex_unlock(&s->lock);
    if (st != KNUT_OK)
        goto cleanup;

    KnutServe__Flightsql__ActionCreatePreparedStatementResult r =
        KNUT_SERVE__FLIGHTSQL__ACTION_CREATE_PREPARED_STATEMENT_RESULT__INIT;
    r.prepared_statement_handle.data = e.handle;
    r.prepared_statement_handle.len = sizeof e.handle;
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
    knut_duck_stmt_free(stmt);
    knut_duck_conn_close(conn);
    if (m)
        protobuf_c_message_free_unpacked(m, NULL);
    return st;
}

static void entry_free(knut_serve__prepared *p)
{
    free(p->sql);
    knut_buf_reset(&p->params);
}

knut_status knut_serve__prepared_close(knut_serve *s, knut_serve__who *who, const uint8_t *body,
                                       size_t len, knut_error *err)
{
    ProtobufCMessage *m = NULL;
    knut_status st = knut_serve__any_unpack(
        body, len, "ActionClosePreparedStatementRequest",
        &knut_serve__flightsql__action_close_prepared_statement_request__descriptor, &m,
        err);
    if (st != KNUT_OK)
        return st;
    const KnutServe__Flightsql__ActionClosePreparedStatementRequest *req = (void *)m;
    pthread_mutex_lock(&s->lock);
    knut_serve__prepared *p = find(s, who, req->prepared_statement_handle.data,
                                   req->prepared_statement_handle.len);
    if (!p)
        st = not_found(err);
    else {
        entry_free(p);
        *p = s->prepared[--s->n_prepared];
    }
    pthread_mutex_unlock(&s->lock);
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

knut_status knut_serve__prepared_bind(knut_serve *s, knut_serve__who *who, const uint8_t *handle,
                                      size_t hlen,
                                      knut_net_grpc_call *call,
                                      const KnutServe__FlightData *first,
                                      knut_error *err)
{
    knut_buf ipc, msg;
    knut_buf_init(&ipc, MAX_PARAMS_BYTES);
    knut_buf_init(&msg, s->max_receive);
    knut_buf out = KNUT_BUF_INIT;
    knut_status st = knut_serve__flightdata_to_ipc(first, &ipc, err);
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
    if (st == KNUT_OK) {
        pthread_mutex_lock(&s->lock);
        knut_serve__prepared *p = find(s, who, handle, hlen);
        if (!p)
            st = not_found(err);
        else {
            knut_buf_reset(&p->params);
            p->params = ipc;
            knut_buf_init(&ipc, 0);
        }
        pthread_mutex_unlock(&s->lock);
    }
    if (st == KNUT_OK) {
        /* the handle stays the same: say so, as the protocol allows */
        KnutServe__Flightsql__DoPutPreparedStatementResult r =
            KNUT_SERVE__FLIGHTSQL__DO_PUT_PREPARED_STATEMENT_RESULT__INIT;
        r._prepared_statement_handle_case =
            KNUT_SERVE__FLIGHTSQL__DO_PUT_PREPARED_STATEMENT_RESULT___PREPARED_STATEMENT_HANDLE_PREPARED_STATEMENT_HANDLE;
        r.prepared_statement_handle.data = (uint8_t *)handle;
        r.prepared_statement_handle.len = hlen;
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
    knut_status st = KNUT_OK;
    pthread_mutex_lock(&s->lock);
    knut_serve__prepared *p = find(s, who, handle, hlen);
    if (!p)
        st = not_found(err);
    else if (!(sql = strdup(p->sql)))
        st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
    else {
        knut_buf_append(&params, p->params.data, p->params.len);
        st = knut_buf_check(&params, err);
    }
    pthread_mutex_unlock(&s->lock);
    knut_arrow_ipc_reader *r = NULL;
    struct ArrowArray batch = {0};
    if (st == KNUT_OK)
        st = knut_duck_stmt_prepare(out, conn, sql, err);
    /* checked again at each use, not only when it was made */
    if (st == KNUT_OK)
        st = knut_serve__authz_sql(s, who, conn, sql, *out, err);
    if (st == KNUT_OK && params.len) {
        knut_arrow_ipc_source src;
        st = knut_arrow_ipc_source_mem(&src, params.data, params.len, err);
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
            st = knut_serve__params_bind(*out, knut_arrow_ipc_reader_schema(r), &batch, 0, err);
    } else if (st == KNUT_OK && knut_duck_stmt_param_count(*out) > 0) {
        st = knut_error_set(err, KNUT_EINVAL, "the statement takes %zu parameters and none were "
                                              "bound (DoPut them first)",
                            knut_duck_stmt_param_count(*out));
    }
    knut_arrow_array_release(&batch);
    knut_arrow_ipc_reader_free(r);
    if (st != KNUT_OK) {
        knut_duck_stmt_free(*out);
        *out = NULL;
    }
    free(sql);
    knut_buf_reset(&params);
    return st;
}

void knut_serve__prepared_free_all(knut_serve *s)
{
    for (size_t i = 0; i < s->n_prepared; i++)
        entry_free(&s->prepared[i]);
    free(s->prepared);
    s->prepared = NULL;
    s->n_prepared = s->cap_prepared = 0;
}
