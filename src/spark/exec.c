/*
 * ExecutePlan for SQL as an ArrowArrayStream. The stream reads one server
 * message at a time (so memory is one message plus the batch handed out):
 * Arrow batches are decoded with arrow's IPC reader, progress messages
 * become events, and in reattachable mode a stream that ends without
 * ResultComplete (the server cuts streams after a while, or the
 * connection dropped) is continued with ReattachExecute from the last
 * response id; ResultComplete is followed by ReleaseExecute.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "knut/arrow.h"
#include "spark_int.h"

#define MAX_REATTACH_IN_ROW 5

typedef struct exec {
    knut_spark_session *s;
    knut_spark_exec_options o;
    knut_net_grpc_client_call *call;
    knut_buf msg;
    char op_id[37];
    char last_response[64];
    int reattachable, complete, done, reattaches, in_row;
    knut_buf schema_ipc; /* the schema as an IPC message: get_schema copies */
    struct ArrowArray first; /* read at open; handed out by the first get_next */
    int64_t rows;
    knut_spark_error_info info;
    char error[1024];
} exec;

static knut_status pack_call(exec *x, const char *rpc, const ProtobufCMessage *req,
                             knut_error *err)
{
    return knut_spark__call_open(x->s, rpc, req, &x->call, err);
}

static knut_status start(exec *x, const char *sql, const knut_spark_param *params,
                         size_t nparams, knut_error *err)
{
    knut_spark_session *s = x->s;
    KnutSpark__UserContext uc;
    knut_spark__user_ctx(s, &uc);
    KnutSpark__SQL q = KNUT_SPARK__SQL__INIT;
    q.query = (char *)sql;
    knut_spark__args *args = NULL;
    knut_status st = knut_spark__args_set(&q, params, nparams, &args, err);
    if (st != KNUT_OK)
        return st;
    KnutSpark__Relation rel = KNUT_SPARK__RELATION__INIT;
    rel.rel_type_case = KNUT_SPARK__RELATION__REL_TYPE_SQL;
    rel.sql = &q;
    KnutSpark__Plan plan = KNUT_SPARK__PLAN__INIT;
    plan.op_type_case = KNUT_SPARK__PLAN__OP_TYPE_ROOT;
    plan.root = &rel;
    KnutSpark__ExecutePlanRequest req = KNUT_SPARK__EXECUTE_PLAN_REQUEST__INIT;
    req.session_id = s->session_id;
    req.user_context = &uc;
    req.plan = &plan;
    req._client_type_case = KNUT_SPARK__EXECUTE_PLAN_REQUEST___CLIENT_TYPE_CLIENT_TYPE;
    req.client_type = s->user_agent;
    req._operation_id_case = KNUT_SPARK__EXECUTE_PLAN_REQUEST___OPERATION_ID_OPERATION_ID;
    req.operation_id = x->op_id;
    KnutSpark__ReattachOptions ro = KNUT_SPARK__REATTACH_OPTIONS__INIT;
    KnutSpark__ExecutePlanRequest__RequestOption opt =
        KNUT_SPARK__EXECUTE_PLAN_REQUEST__REQUEST_OPTION__INIT;
    KnutSpark__ExecutePlanRequest__RequestOption *opts[1] = {&opt};
    if (x->reattachable) {
        ro.reattachable = 1;
        opt.request_option_case =
            KNUT_SPARK__EXECUTE_PLAN_REQUEST__REQUEST_OPTION__REQUEST_OPTION_REATTACH_OPTIONS;
        opt.reattach_options = &ro;
        req.n_request_options = 1;
        req.request_options = opts;
    }
    char *tags[1] = {(char *)x->o.tag};
    if (x->o.tag) {
        req.n_tags = 1;
        req.tags = tags;
    }
    st = pack_call(x, "ExecutePlan", &req.base, err);
    knut_spark__args_free(args);
    return st;
}

static knut_status reattach(exec *x, knut_error *err)
{
    knut_net_grpc_client_call_free(x->call);
    x->call = NULL;
    KnutSpark__UserContext uc;
    knut_spark__user_ctx(x->s, &uc);
    KnutSpark__ReattachExecuteRequest req = KNUT_SPARK__REATTACH_EXECUTE_REQUEST__INIT;
    req.session_id = x->s->session_id;
    req.user_context = &uc;
    req.operation_id = x->op_id;
    req._client_type_case = KNUT_SPARK__REATTACH_EXECUTE_REQUEST___CLIENT_TYPE_CLIENT_TYPE;
    req.client_type = x->s->user_agent;
    if (x->last_response[0]) {
        req._last_response_id_case =
            KNUT_SPARK__REATTACH_EXECUTE_REQUEST___LAST_RESPONSE_ID_LAST_RESPONSE_ID;
        req.last_response_id = x->last_response;
    }
    x->reattaches++;
    x->in_row++;
    KNUT_LOG(KNUT_LOG_INFO, SPARK_LOG, "%s: operation %s: stream ended early, reattaching (%d)",
             x->s->peer, x->op_id, x->reattaches);
    if (x->o.on_event) {
        knut_spark_event ev = {.kind = KNUT_SPARK_EVENT_REATTACH, .operation_id = x->op_id,
                               .reattaches = x->reattaches};
        x->o.on_event(x->o.event_ctx, &ev);
    }
    return pack_call(x, "ReattachExecute", &req.base, err);
}

/* ReleaseExecute(release_all): the server may drop its buffers. Best effort. */
static void release_exec(exec *x)
{
    KnutSpark__UserContext uc;
    knut_spark__user_ctx(x->s, &uc);
    KnutSpark__ReleaseExecuteRequest req = KNUT_SPARK__RELEASE_EXECUTE_REQUEST__INIT;
    KnutSpark__ReleaseExecuteRequest__ReleaseAll all =
        KNUT_SPARK__RELEASE_EXECUTE_REQUEST__RELEASE_ALL__INIT;
    req.session_id = x->s->session_id;
    req.user_context = &uc;
    req.operation_id = x->op_id;
    req._client_type_case = KNUT_SPARK__RELEASE_EXECUTE_REQUEST___CLIENT_TYPE_CLIENT_TYPE;
    req.client_type = x->s->user_agent;
    req.release_case = KNUT_SPARK__RELEASE_EXECUTE_REQUEST__RELEASE_RELEASE_ALL;
    req.release_all = &all;
    knut_buf resp;
    knut_buf_init(&resp, (size_t)1 << 20);
    knut_error e = KNUT_ERROR_INIT;
    if (knut_spark__unary(x->s, "ReleaseExecute", &req.base, &resp, NULL, &e) != KNUT_OK)
        KNUT_LOG(KNUT_LOG_DEBUG, SPARK_LOG, "ReleaseExecute: %s", e.message);
    knut_buf_reset(&resp);
}

/* The next ExecutePlanResponse into *out (caller frees); *out NULL at the
 * end of the result. */
static knut_status next_response(exec *x, KnutSpark__ExecutePlanResponse **out,
                                 knut_error *err)
{
    *out = NULL;
    for (;;) {
        if (x->done)
            return KNUT_OK;
        knut_error rerr = KNUT_ERROR_INIT;
        knut_status st = knut_net_grpc_client_call_read(x->call, &x->msg, &rerr);
        if (st == KNUT_OK) {
            x->in_row = 0;
            *out = knut_spark__execute_plan_response__unpack(NULL, x->msg.len,
                                                                 (uint8_t *)x->msg.data);
            if (!*out)
                return knut_error_set(err, KNUT_EPARSE, "%s: operation %s: a malformed "
                                      "ExecutePlanResponse (%zu bytes)", x->s->peer, x->op_id,
                                      x->msg.len);
            if ((*out)->response_id && (*out)->response_id[0])
                snprintf(x->last_response, sizeof x->last_response, "%s", (*out)->response_id);
            return KNUT_OK;
        }
        if (st != KNUT_EOF)
            return knut_error_set(err, st, "%s: %s", x->s->peer, rerr.message);
        knut_net_grpc_status gst = KNUT_NET_GRPC_STATUS_INIT;
        knut_error ferr = KNUT_ERROR_INIT;
        st = knut_net_grpc_client_call_finish(x->call, &gst, &ferr);
        /* A reattachable stream may end, OK or dropped, before the result
         * is complete: continue it where it stopped. */
        /* A drop before any response is no operation to go back to (the
         * server is down): that is the error itself. */
        int dropped = (gst.code == KNUT_NET_GRPC_UNAVAILABLE || gst.code == KNUT_NET_GRPC_UNKNOWN) &&
                      x->last_response[0];
        int again = x->reattachable && !x->complete && x->in_row < MAX_REATTACH_IN_ROW &&
                    (gst.code == KNUT_NET_GRPC_OK || dropped);
        if (st != KNUT_OK && !again) {
            st = knut_spark__call_error(x->s, "ExecutePlan", &gst, st, &x->info, err);
            knut_net_grpc_status_reset(&gst);
            return st;
        }
        knut_net_grpc_status_reset(&gst);
        if (!again) {
            x->done = 1;
            return KNUT_OK;
        }
        if ((st = reattach(x, err)) != KNUT_OK)
            return st;
    }
}

/* One Arrow IPC stream (schema + batch) into *batch; the first one's
 * schema is kept as IPC bytes. */
static knut_status decode_batch(exec *x, const ProtobufCBinaryData *data,
                                struct ArrowArray *batch, knut_error *err)
{
    knut_arrow_ipc_source src;
    knut_status st = knut_arrow_ipc_source_mem(&src, data->data, data->len, err);
    if (st != KNUT_OK)
        return st;
    knut_arrow_ipc_reader *r = NULL;
    if ((st = knut_arrow_ipc_reader_new(&r, src, NULL, err)) != KNUT_OK)
        goto cleanup;
    if (x->schema_ipc.len == 0) {
        knut_arrow_ipc_writer *w = NULL;
        st = knut_arrow_ipc_writer_new(&w, knut_arrow_ipc_sink_buf(&x->schema_ipc),
                                       knut_arrow_ipc_reader_schema(r), err);
        knut_arrow_ipc_writer_free(w);
        if (st != KNUT_OK)
            goto cleanup;
    }
    if ((st = knut_arrow_ipc_reader_next(r, batch, err)) != KNUT_OK)
        goto cleanup;
    if (!batch->release)
        st = knut_error_set(err, KNUT_EPARSE, "an Arrow batch message without a record batch");
cleanup:
    knut_arrow_ipc_reader_free(r);
    if (st != KNUT_OK)
        knut_error_prefix(err, "%s: operation %s: Arrow batch %lld: ", x->s->peer, x->op_id,
                          (long long)x->rows);
    return st;
}

static void progress(exec *x, const KnutSpark__ExecutePlanResponse__ExecutionProgress *p)
{
    if (!x->o.on_event)
        return;
    knut_spark_stage st[64];
    size_t n = p->n_stages < 64 ? p->n_stages : 64;
    for (size_t i = 0; i < n; i++) {
        const KnutSpark__ExecutePlanResponse__ExecutionProgress__StageInfo *s = p->stages[i];
        st[i] = (knut_spark_stage){s->stage_id, s->num_tasks, s->num_completed_tasks,
                                   s->input_bytes_read, s->done};
    }
    knut_spark_event ev = {.kind = KNUT_SPARK_EVENT_PROGRESS, .operation_id = x->op_id,
                           .stages = st, .nstages = n, .inflight_tasks = p->num_inflight_tasks};
    x->o.on_event(x->o.event_ctx, &ev);
}

/* The next non-empty batch into *out (released at the end). */
static knut_status next_batch(exec *x, struct ArrowArray *out, int want_any, knut_error *err)
{
    out->release = NULL;
    for (;;) {
        KnutSpark__ExecutePlanResponse *r = NULL;
        knut_status st = next_response(x, &r, err);
        if (st != KNUT_OK || !r)
            return st;
        switch (r->response_type_case) {
        case KNUT_SPARK__EXECUTE_PLAN_RESPONSE__RESPONSE_TYPE_ARROW_BATCH: {
            KnutSpark__ExecutePlanResponse__ArrowBatch *b = r->arrow_batch;
            if (b->_num_chunks_in_batch_case && b->num_chunks_in_batch > 1) {
                st = knut_error_set(err, KNUT_EUNSUPPORTED, "%s: a chunked Arrow batch "
                                    "(not asked for)", x->s->peer);
                break;
            }
            st = decode_batch(x, &b->data, out, err);
            if (st == KNUT_OK && out->length == 0 && !want_any)
                out->release(out); /* empty-result marker: nothing to hand out */
            break;
        }
        case KNUT_SPARK__EXECUTE_PLAN_RESPONSE__RESPONSE_TYPE_EXECUTION_PROGRESS:
            progress(x, r->execution_progress);
            break;
        case KNUT_SPARK__EXECUTE_PLAN_RESPONSE__RESPONSE_TYPE_RESULT_COMPLETE:
            x->complete = 1;
            break;
        default: /* schema, metrics, newer kinds: not needed for rows */
            break;
        }
        knut_spark__execute_plan_response__free_unpacked(r, NULL);
        if (st != KNUT_OK)
            return st;
        if (out->release) {
            x->rows += out->length;
            if (x->o.on_event) {
                knut_spark_event ev = {.kind = KNUT_SPARK_EVENT_BATCH, .operation_id = x->op_id,
                                       .rows = out->length, .total_rows = x->rows};
                x->o.on_event(x->o.event_ctx, &ev);
            }
            return KNUT_OK;
        }
    }
}

static int fail(exec *x, const knut_error *e)
{
    snprintf(x->error, sizeof x->error, "%s", e->message);
    switch (e->code) {
    case KNUT_ENOMEM: return ENOMEM;
    case KNUT_EINVAL: return EINVAL;
    case KNUT_ECANCELLED: return ECANCELED;
    default: return EIO;
    }
}

static int get_schema(struct ArrowArrayStream *st, struct ArrowSchema *out)
{
    exec *x = st->private_data;
    knut_error e = KNUT_ERROR_INIT;
    knut_arrow_ipc_source src;
    struct ArrowArrayStream tmp = {0};
    knut_status rc = knut_arrow_ipc_source_mem(&src, x->schema_ipc.data, x->schema_ipc.len, &e);
    if (rc == KNUT_OK)
        rc = knut_arrow_ipc_stream_open(&tmp, src, NULL, &e);
    if (rc != KNUT_OK)
        return fail(x, &e);
    int r = tmp.get_schema(&tmp, out);
    tmp.release(&tmp);
    return r;
}

static int get_next(struct ArrowArrayStream *st, struct ArrowArray *out)
{
    exec *x = st->private_data;
    if (x->first.release) {
        *out = x->first;
        x->first.release = NULL;
        return 0;
    }
    knut_error e = KNUT_ERROR_INIT;
    if (next_batch(x, out, 0, &e) != KNUT_OK)
        return fail(x, &e);
    if (!out->release && x->complete && x->reattachable) {
        release_exec(x);
        x->reattachable = 0; /* released once */
    }
    return 0;
}

static const char *get_last_error(struct ArrowArrayStream *st)
{
    exec *x = st->private_data;
    return x->error[0] ? x->error : NULL;
}

static void exec_free(exec *x)
{
    if (!x)
        return;
    if (x->first.release)
        x->first.release(&x->first);
    if (x->call && !x->done) {
        /* stopped early: the server may stop the work and drop its buffers */
        knut_net_grpc_client_call_cancel(x->call);
        if (x->reattachable)
            release_exec(x);
    }
    knut_net_grpc_client_call_free(x->call);
    knut_buf_reset(&x->msg);
    knut_buf_reset(&x->schema_ipc);
    free(x);
}

static void release(struct ArrowArrayStream *st)
{
    exec_free(st->private_data);
    st->release = NULL;
}

knut_status knut_spark_sql(knut_spark_session *s, const char *sql,
                           const knut_spark_exec_options *o, struct ArrowArrayStream *out,
                           knut_error *err)
{
    return knut_spark_sql_params(s, sql, NULL, 0, o, out, err);
}

knut_status knut_spark_sql_params(knut_spark_session *s, const char *sql,
                                  const knut_spark_param *params, size_t nparams,
                                  const knut_spark_exec_options *o, struct ArrowArrayStream *out,
                                  knut_error *err)
{
    KNUT_ASSERT_ARG(err, s && sql && out && (params || nparams == 0));
    memset(out, 0, sizeof *out);
    KNUT_CHECK_VERSION(o, KNUT_SPARK_EXEC_OPTIONS_VERSION, err);
    exec *x = calloc(1, sizeof *x);
    if (!x)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    knut_spark_exec_options def = KNUT_SPARK_EXEC_OPTIONS_INIT;
    x->o = o ? *o : def;
    x->s = s;
    x->reattachable = !x->o.not_reattachable;
    knut_buf_init(&x->msg, s->url.max_message ? s->url.max_message
                                              : KNUT_SPARK_DEFAULT_MAX_MESSAGE);
    knut_buf_init(&x->schema_ipc, (size_t)64 << 20);
    knut_status st = KNUT_OK;
    if (x->o.tag && (!x->o.tag[0] || strchr(x->o.tag, ','))) {
        st = knut_error_set(err, KNUT_EINVAL, "an operation tag must be non-empty, without ','");
        goto cleanup;
    }
    if ((st = knut_spark__uuid(x->op_id, err)) != KNUT_OK)
        goto cleanup;
    if (x->o.operation_id_out)
        memcpy(x->o.operation_id_out, x->op_id, sizeof x->op_id);
    if ((st = start(x, sql, params, nparams, err)) != KNUT_OK)
        goto cleanup;
    /* The first batch (Spark sends at least one, empty for no rows) gives
     * the schema, and a bad query fails here rather than mid-stream. */
    st = next_batch(x, &x->first, 1, err);
    if (st == KNUT_OK && x->schema_ipc.len == 0)
        st = knut_error_set(err, KNUT_EPARSE, "%s: operation %s: the result had no Arrow "
                            "batch", s->peer, x->op_id);
    if (st == KNUT_OK && x->first.length == 0)
        x->first.release(&x->first);
cleanup:
    if (st != KNUT_OK) {
        if (x->o.error_info)
            *x->o.error_info = x->info;
        x->done = 1; /* nothing to release on the server */
        exec_free(x);
        return st;
    }
    out->get_schema = get_schema;
    out->get_next = get_next;
    out->get_last_error = get_last_error;
    out->release = release;
    out->private_data = x;
    return KNUT_OK;
}
