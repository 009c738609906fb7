/*
 * Spark Declarative Pipelines over Spark Connect: each dataflow-graph
 * command is one ExecutePlan whose plan is Command.pipeline_command, read
 * to its end (plain execution: a run may last long, and a StartRun that
 * is cut and reattached would be a second run). Results come back as
 * pipeline_command_result, events as pipeline_event_result; everything
 * else in the stream is skipped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spark_int.h"

typedef struct sdp_call {
    knut_spark_sdp_event_fn on_event;
    void *ctx;
    char graph_id[64]; /* CreateDataflowGraph's result */
} sdp_call;

/* Sends pc and reads the stream to its end. */
static knut_status command(knut_spark_session *s, const char *what,
                           KnutSpark__PipelineCommand *pc, sdp_call *c,
                           knut_spark_error_info *info, knut_error *err)
{
    KnutSpark__UserContext uc;
    knut_spark__user_ctx(s, &uc);
    KnutSpark__Command cmd = KNUT_SPARK__COMMAND__INIT;
    cmd.command_type_case = KNUT_SPARK__COMMAND__COMMAND_TYPE_PIPELINE_COMMAND;
    cmd.pipeline_command = pc;
    KnutSpark__Plan plan = KNUT_SPARK__PLAN__INIT;
    plan.op_type_case = KNUT_SPARK__PLAN__OP_TYPE_COMMAND;
    plan.command = &cmd;
    char op[37];
    knut_status st = knut_spark__uuid(op, err);
    if (st != KNUT_OK)
        return st;
    KnutSpark__ExecutePlanRequest req = KNUT_SPARK__EXECUTE_PLAN_REQUEST__INIT;
    req.session_id = s->session_id;
    req.user_context = &uc;
    req.plan = &plan;
    req._client_type_case = KNUT_SPARK__EXECUTE_PLAN_REQUEST___CLIENT_TYPE_CLIENT_TYPE;
    req.client_type = s->user_agent;
    req._operation_id_case = KNUT_SPARK__EXECUTE_PLAN_REQUEST___OPERATION_ID_OPERATION_ID;
    req.operation_id = op;
    knut_net_grpc_client_call *call = NULL;
    knut_buf msg;
    knut_buf_init(&msg, s->url.max_message ? s->url.max_message : KNUT_SPARK_DEFAULT_MAX_MESSAGE);
    if ((st = knut_spark__call_open(s, "ExecutePlan", &req.base, &call, err)) != KNUT_OK)
        goto cleanup;
    for (;;) {
        knut_error rerr = KNUT_ERROR_INIT;
        st = knut_net_grpc_client_call_read(call, &msg, &rerr);
        if (st == KNUT_EOF)
            break;
        if (st != KNUT_OK) {
            st = knut_error_set(err, st, "%s: %s: %s", s->peer, what, rerr.message);
            goto cleanup;
        }
        KnutSpark__ExecutePlanResponse *r =
            knut_spark__execute_plan_response__unpack(NULL, msg.len, (uint8_t *)msg.data);
        if (!r) {
            st = knut_error_set(err, KNUT_EPARSE, "%s: %s: a malformed ExecutePlanResponse "
                                "(%zu bytes)", s->peer, what, msg.len);
            goto cleanup;
        }
        if (r->response_type_case ==
                KNUT_SPARK__EXECUTE_PLAN_RESPONSE__RESPONSE_TYPE_PIPELINE_EVENT_RESULT &&
            c->on_event && r->pipeline_event_result->event) {
            KnutSpark__PipelineEvent *e = r->pipeline_event_result->event;
            int64_t us = e->timestamp ? e->timestamp->seconds * 1000000 +
                                            e->timestamp->nanos / 1000
                                      : 0;
            c->on_event(c->ctx, us, e->_message_case ? e->message : "");
        } else if (r->response_type_case ==
                   KNUT_SPARK__EXECUTE_PLAN_RESPONSE__RESPONSE_TYPE_PIPELINE_COMMAND_RESULT) {
            KnutSpark__PipelineCommandResult *pr = r->pipeline_command_result;
            if (pr->result_type_case ==
                    KNUT_SPARK__PIPELINE_COMMAND_RESULT__RESULT_TYPE_CREATE_DATAFLOW_GRAPH_RESULT &&
                pr->create_dataflow_graph_result->_dataflow_graph_id_case)
                snprintf(c->graph_id, sizeof c->graph_id, "%s",
                         pr->create_dataflow_graph_result->dataflow_graph_id);
        }
        knut_spark__execute_plan_response__free_unpacked(r, NULL);
    }
    knut_net_grpc_status gst = KNUT_NET_GRPC_STATUS_INIT;
    knut_error ferr = KNUT_ERROR_INIT;
    st = knut_net_grpc_client_call_finish(call, &gst, &ferr);
    if (st != KNUT_OK) {
        st = knut_spark__call_error(s, "ExecutePlan", &gst, st, info, err);
        knut_error_prefix(err, "%s: ", what);
    }
    knut_net_grpc_status_reset(&gst);
cleanup:
    knut_net_grpc_client_call_free(call);
    knut_buf_reset(&msg);
    return st;
}

/* The map entries of a proto map field from kv (arrays owned by the caller). */
typedef KnutSpark__PipelineCommand__CreateDataflowGraph__SqlConfEntry conf_entry;

static knut_status kv_entries(const knut_spark_sdp_kv *kv, size_t n, void ***out,
                              const ProtobufCMessageDescriptor *d, knut_error *err)
{
    *out = NULL;
    if (n == 0)
        return KNUT_OK;
    /* Every map entry message of these protos is {string key = 1; string
     * value = 2;}: one layout serves them all. */
    conf_entry *e = calloc(n, sizeof *e);
    void **v = calloc(n, sizeof *v);
    if (!e || !v) {
        free(e);
        free(v);
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        protobuf_c_message_init(d, &e[i]);
        e[i].key = (char *)kv[i].key;
        e[i].value = (char *)kv[i].value;
        v[i] = &e[i];
    }
    *out = v;
    return KNUT_OK;
}

static void kv_free(void **v)
{
    if (v)
        free(v[0]);
    free(v);
}

knut_status knut_spark_sdp_graph_new(knut_spark_session *s, const char *database,
                                     const knut_spark_sdp_kv *conf, size_t nconf,
                                     char graph_id[64], knut_spark_error_info *info,
                                     knut_error *err)
{
    KNUT_ASSERT_ARG(err, s && graph_id);
    graph_id[0] = '\0';
    KnutSpark__PipelineCommand__CreateDataflowGraph g =
        KNUT_SPARK__PIPELINE_COMMAND__CREATE_DATAFLOW_GRAPH__INIT;
    if (database) {
        g._default_database_case =
            KNUT_SPARK__PIPELINE_COMMAND__CREATE_DATAFLOW_GRAPH___DEFAULT_DATABASE_DEFAULT_DATABASE;
        g.default_database = (char *)database;
    }
    void **entries = NULL;
    knut_status st = kv_entries(
        conf, nconf, &entries,
        &knut_spark__pipeline_command__create_dataflow_graph__sql_conf_entry__descriptor, err);
    if (st != KNUT_OK)
        return st;
    g.n_sql_conf = nconf;
    g.sql_conf = (conf_entry **)entries;
    KnutSpark__PipelineCommand pc = KNUT_SPARK__PIPELINE_COMMAND__INIT;
    pc.command_type_case = KNUT_SPARK__PIPELINE_COMMAND__COMMAND_TYPE_CREATE_DATAFLOW_GRAPH;
    pc.create_dataflow_graph = &g;
    sdp_call c = {0};
    st = command(s, "CreateDataflowGraph", &pc, &c, info, err);
    kv_free(entries);
    if (st == KNUT_OK && !c.graph_id[0])
        st = knut_error_set(err, KNUT_EPARSE, "%s: CreateDataflowGraph: no graph id in the "
                            "reply", s->peer);
    if (st == KNUT_OK)
        memcpy(graph_id, c.graph_id, sizeof c.graph_id);
    return st;
}

/* Where an output or flow was written (file NULL: no location). */
static KnutSpark__SourceCodeLocation location(const char *file, int32_t line)
{
    KnutSpark__SourceCodeLocation loc = KNUT_SPARK__SOURCE_CODE_LOCATION__INIT;
    if (file) {
        loc._file_name_case = KNUT_SPARK__SOURCE_CODE_LOCATION___FILE_NAME_FILE_NAME;
        loc.file_name = (char *)file;
        loc._line_number_case = KNUT_SPARK__SOURCE_CODE_LOCATION___LINE_NUMBER_LINE_NUMBER;
        loc.line_number = line;
    }
    return loc;
}

knut_status knut_spark_sdp_output_define(knut_spark_session *s, const char *graph_id,
                                         const knut_spark_sdp_output *o,
                                         knut_spark_error_info *info, knut_error *err)
{
    KNUT_ASSERT_ARG(err, s && graph_id && o && o->name);
    KnutSpark__PipelineCommand__DefineOutput d = KNUT_SPARK__PIPELINE_COMMAND__DEFINE_OUTPUT__INIT;
    d._dataflow_graph_id_case =
        KNUT_SPARK__PIPELINE_COMMAND__DEFINE_OUTPUT___DATAFLOW_GRAPH_ID_DATAFLOW_GRAPH_ID;
    d.dataflow_graph_id = (char *)graph_id;
    d._output_name_case = KNUT_SPARK__PIPELINE_COMMAND__DEFINE_OUTPUT___OUTPUT_NAME_OUTPUT_NAME;
    d.output_name = (char *)o->name;
    d._output_type_case = KNUT_SPARK__PIPELINE_COMMAND__DEFINE_OUTPUT___OUTPUT_TYPE_OUTPUT_TYPE;
    d.output_type = (KnutSpark__OutputType)o->type;
    if (o->comment) {
        d._comment_case = KNUT_SPARK__PIPELINE_COMMAND__DEFINE_OUTPUT___COMMENT_COMMENT;
        d.comment = (char *)o->comment;
    }
    KnutSpark__SourceCodeLocation loc = location(o->file, o->line);
    if (o->file) {
        d._source_code_location_case =
            KNUT_SPARK__PIPELINE_COMMAND__DEFINE_OUTPUT___SOURCE_CODE_LOCATION_SOURCE_CODE_LOCATION;
        d.source_code_location = &loc;
    }
    KnutSpark__PipelineCommand__DefineOutput__TableDetails td =
        KNUT_SPARK__PIPELINE_COMMAND__DEFINE_OUTPUT__TABLE_DETAILS__INIT;
    void **props = NULL;
    knut_status st = KNUT_OK;
    if (o->type != KNUT_SPARK_SDP_TEMPORARY_VIEW) {
        st = kv_entries(o->properties, o->nproperties, &props,
                        &knut_spark__pipeline_command__define_output__table_details__table_properties_entry__descriptor,
                        err);
        if (st != KNUT_OK)
            return st;
        td.n_table_properties = o->nproperties;
        td.table_properties =
            (KnutSpark__PipelineCommand__DefineOutput__TableDetails__TablePropertiesEntry **)props;
        d.details_case = KNUT_SPARK__PIPELINE_COMMAND__DEFINE_OUTPUT__DETAILS_TABLE_DETAILS;
        d.table_details = &td;
    }
    KnutSpark__PipelineCommand pc = KNUT_SPARK__PIPELINE_COMMAND__INIT;
    pc.command_type_case = KNUT_SPARK__PIPELINE_COMMAND__COMMAND_TYPE_DEFINE_OUTPUT;
    pc.define_output = &d;
    char what[300];
    snprintf(what, sizeof what, "DefineOutput '%.200s'", o->name);
    sdp_call c = {0};
    st = command(s, what, &pc, &c, info, err);
    kv_free(props);
    return st;
}

/* Column names as unresolved-attribute expressions (arrays freed by the caller). */
static knut_status col_exprs(const char *const *names, size_t n, KnutSpark__Expression ***out,
                             knut_error *err)
{
    *out = NULL;
    if (n == 0)
        return KNUT_OK;
    KnutSpark__Expression *e = calloc(n, sizeof *e);
    KnutSpark__Expression__UnresolvedAttribute *a = calloc(n, sizeof *a);
    KnutSpark__Expression **v = calloc(n + 1, sizeof *v);
    if (!e || !a || !v) {
        free(e);
        free(a);
        free(v);
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        knut_spark__expression__init(&e[i]);
        knut_spark__expression__unresolved_attribute__init(&a[i]);
        a[i].unparsed_identifier = (char *)names[i];
        e[i].expr_type_case = KNUT_SPARK__EXPRESSION__EXPR_TYPE_UNRESOLVED_ATTRIBUTE;
        e[i].unresolved_attribute = &a[i];
        v[i] = &e[i];
    }
    v[n] = (KnutSpark__Expression *)a; /* kept for col_free */
    *out = v;
    return KNUT_OK;
}

static void col_free(KnutSpark__Expression **v, size_t n)
{
    if (!v)
        return;
    free(v[n]);
    free(v[0]);
    free(v);
}

static void expr_string(KnutSpark__Expression *e, KnutSpark__Expression__ExpressionString *es,
                        const char *text)
{
    knut_spark__expression__init(e);
    knut_spark__expression__expression_string__init(es);
    es->expression = (char *)text;
    e->expr_type_case = KNUT_SPARK__EXPRESSION__EXPR_TYPE_EXPRESSION_STRING;
    e->expression_string = es;
}

typedef KnutSpark__PipelineCommand__DefineFlow__AutoCdcFlowDetails cdc_details;

/* The AutoCDC details of c into *d; the expression arrays into x[0..4). */
static knut_status cdc_fill(const knut_spark_sdp_cdc *c, cdc_details *d,
                            KnutSpark__Expression *seq, KnutSpark__Expression__ExpressionString *seqs,
                            KnutSpark__Expression *del, KnutSpark__Expression__ExpressionString *dels,
                            KnutSpark__Expression **x[4], knut_error *err)
{
    knut_spark__pipeline_command__define_flow__auto_cdc_flow_details__init(d);
    d->_source_case = KNUT_SPARK__PIPELINE_COMMAND__DEFINE_FLOW__AUTO_CDC_FLOW_DETAILS___SOURCE_SOURCE;
    d->source = (char *)c->source;
    expr_string(seq, seqs, c->sequence_by);
    d->_sequence_by_case =
        KNUT_SPARK__PIPELINE_COMMAND__DEFINE_FLOW__AUTO_CDC_FLOW_DETAILS___SEQUENCE_BY_SEQUENCE_BY;
    d->sequence_by = seq;
    if (c->delete_when) {
        expr_string(del, dels, c->delete_when);
        d->_apply_as_deletes_case =
            KNUT_SPARK__PIPELINE_COMMAND__DEFINE_FLOW__AUTO_CDC_FLOW_DETAILS___APPLY_AS_DELETES_APPLY_AS_DELETES;
        d->apply_as_deletes = del;
    }
    d->_stored_as_scd_type_case =
        KNUT_SPARK__PIPELINE_COMMAND__DEFINE_FLOW__AUTO_CDC_FLOW_DETAILS___STORED_AS_SCD_TYPE_STORED_AS_SCD_TYPE;
    d->stored_as_scd_type = c->scd_type == 2
                                ? KNUT_SPARK__PIPELINE_COMMAND__DEFINE_FLOW__SCDTYPE__SCD_TYPE_2
                                : KNUT_SPARK__PIPELINE_COMMAND__DEFINE_FLOW__SCDTYPE__SCD_TYPE_1;
    knut_status st;
    if ((st = col_exprs(c->keys, c->nkeys, &x[0], err)) != KNUT_OK ||
        (st = col_exprs(c->columns.names, c->columns.n, &x[1], err)) != KNUT_OK ||
        (st = col_exprs(c->track_history.names, c->track_history.n, &x[2], err)) != KNUT_OK)
        return st;
    d->n_keys = c->nkeys;
    d->keys = x[0];
    if (c->columns.except) {
        d->n_except_column_list = c->columns.n;
        d->except_column_list = x[1];
    } else {
        d->n_column_list = c->columns.n;
        d->column_list = x[1];
    }
    if (c->track_history.except) {
        d->n_track_history_except_column_list = c->track_history.n;
        d->track_history_except_column_list = x[2];
    } else {
        d->n_track_history_column_list = c->track_history.n;
        d->track_history_column_list = x[2];
    }
    return KNUT_OK;
}

knut_status knut_spark_sdp_flow_define(knut_spark_session *s, const char *graph_id,
                                       const knut_spark_sdp_flow *f,
                                       knut_spark_error_info *info, knut_error *err)
{
    KNUT_ASSERT_ARG(err, s && graph_id && f && f->name && f->target);
    KnutSpark__PipelineCommand__DefineFlow d = KNUT_SPARK__PIPELINE_COMMAND__DEFINE_FLOW__INIT;
    d._dataflow_graph_id_case =
        KNUT_SPARK__PIPELINE_COMMAND__DEFINE_FLOW___DATAFLOW_GRAPH_ID_DATAFLOW_GRAPH_ID;
    d.dataflow_graph_id = (char *)graph_id;
    d._flow_name_case = KNUT_SPARK__PIPELINE_COMMAND__DEFINE_FLOW___FLOW_NAME_FLOW_NAME;
    d.flow_name = (char *)f->name;
    d._target_dataset_name_case =
        KNUT_SPARK__PIPELINE_COMMAND__DEFINE_FLOW___TARGET_DATASET_NAME_TARGET_DATASET_NAME;
    d.target_dataset_name = (char *)f->target;
    KnutSpark__SourceCodeLocation loc = location(f->file, f->line);
    if (f->file) {
        d._source_code_location_case =
            KNUT_SPARK__PIPELINE_COMMAND__DEFINE_FLOW___SOURCE_CODE_LOCATION_SOURCE_CODE_LOCATION;
        d.source_code_location = &loc;
    }
    void **conf = NULL, **opts = NULL;
    KnutSpark__Expression **x[4] = {NULL, NULL, NULL, NULL};
    knut_status st = kv_entries(
        f->conf, f->nconf, &conf,
        &knut_spark__pipeline_command__define_flow__sql_conf_entry__descriptor, err);
    if (st != KNUT_OK)
        return st;
    d.n_sql_conf = f->nconf;
    d.sql_conf = (KnutSpark__PipelineCommand__DefineFlow__SqlConfEntry **)conf;
    KnutSpark__Relation rel = KNUT_SPARK__RELATION__INIT;
    KnutSpark__SQL q = KNUT_SPARK__SQL__INIT;
    KnutSpark__Read rd = KNUT_SPARK__READ__INIT;
    KnutSpark__Read__DataSource ds = KNUT_SPARK__READ__DATA_SOURCE__INIT;
    KnutSpark__PipelineCommand__DefineFlow__WriteRelationFlowDetails wr =
        KNUT_SPARK__PIPELINE_COMMAND__DEFINE_FLOW__WRITE_RELATION_FLOW_DETAILS__INIT;
    cdc_details cd;
    KnutSpark__Expression seq, del;
    KnutSpark__Expression__ExpressionString seqs, dels;
    if (f->cdc) {
        if ((st = cdc_fill(f->cdc, &cd, &seq, &seqs, &del, &dels, x, err)) != KNUT_OK)
            goto cleanup;
        d.details_case = KNUT_SPARK__PIPELINE_COMMAND__DEFINE_FLOW__DETAILS_AUTO_CDC_FLOW_DETAILS;
        d.auto_cdc_flow_details = &cd;
    } else {
        if (f->read_format) {
            st = kv_entries(f->read_options, f->nread_options, &opts,
                            &knut_spark__read__data_source__options_entry__descriptor, err);
            if (st != KNUT_OK)
                goto cleanup;
            ds._format_case = KNUT_SPARK__READ__DATA_SOURCE___FORMAT_FORMAT;
            ds.format = (char *)f->read_format;
            ds.n_options = f->nread_options;
            ds.options = (KnutSpark__Read__DataSource__OptionsEntry **)opts;
            ds.n_paths = f->nread_paths;
            ds.paths = (char **)f->read_paths;
            rd.read_type_case = KNUT_SPARK__READ__READ_TYPE_DATA_SOURCE;
            rd.data_source = &ds;
            rd.is_streaming = f->read_streaming;
            rel.rel_type_case = KNUT_SPARK__RELATION__REL_TYPE_READ;
            rel.read = &rd;
        } else {
            q.query = (char *)(f->sql ? f->sql : "");
            rel.rel_type_case = KNUT_SPARK__RELATION__REL_TYPE_SQL;
            rel.sql = &q;
        }
        wr._relation_case =
            KNUT_SPARK__PIPELINE_COMMAND__DEFINE_FLOW__WRITE_RELATION_FLOW_DETAILS___RELATION_RELATION;
        wr.relation = &rel;
        d.details_case = KNUT_SPARK__PIPELINE_COMMAND__DEFINE_FLOW__DETAILS_RELATION_FLOW_DETAILS;
        d.relation_flow_details = &wr;
    }
    KnutSpark__PipelineCommand pc = KNUT_SPARK__PIPELINE_COMMAND__INIT;
    pc.command_type_case = KNUT_SPARK__PIPELINE_COMMAND__COMMAND_TYPE_DEFINE_FLOW;
    pc.define_flow = &d;
    char what[300];
    snprintf(what, sizeof what, "DefineFlow '%.200s'", f->name);
    sdp_call c = {0};
    st = command(s, what, &pc, &c, info, err);
cleanup:
    kv_free(conf);
    kv_free(opts);
    if (f->cdc) {
        col_free(x[0], f->cdc->nkeys);
        col_free(x[1], f->cdc->columns.n);
        col_free(x[2], f->cdc->track_history.n);
    }
    return st;
}

knut_status knut_spark_sdp_run(knut_spark_session *s, const char *graph_id,
                               const knut_spark_sdp_run_options *o, knut_spark_error_info *info,
                               knut_error *err)
{
    KNUT_ASSERT_ARG(err, s && graph_id && o && o->storage);
    KnutSpark__PipelineCommand__StartRun r = KNUT_SPARK__PIPELINE_COMMAND__START_RUN__INIT;
    r._dataflow_graph_id_case =
        KNUT_SPARK__PIPELINE_COMMAND__START_RUN___DATAFLOW_GRAPH_ID_DATAFLOW_GRAPH_ID;
    r.dataflow_graph_id = (char *)graph_id;
    r._storage_case = KNUT_SPARK__PIPELINE_COMMAND__START_RUN___STORAGE_STORAGE;
    r.storage = (char *)o->storage;
    if (o->dry) {
        r._dry_case = KNUT_SPARK__PIPELINE_COMMAND__START_RUN___DRY_DRY;
        r.dry = 1;
    }
    if (o->full_refresh_all) {
        r._full_refresh_all_case =
            KNUT_SPARK__PIPELINE_COMMAND__START_RUN___FULL_REFRESH_ALL_FULL_REFRESH_ALL;
        r.full_refresh_all = 1;
    }
    r.n_full_refresh_selection = o->nfull_refresh;
    r.full_refresh_selection = (char **)o->full_refresh;
    KnutSpark__PipelineCommand pc = KNUT_SPARK__PIPELINE_COMMAND__INIT;
    pc.command_type_case = KNUT_SPARK__PIPELINE_COMMAND__COMMAND_TYPE_START_RUN;
    pc.start_run = &r;
    sdp_call c = {o->on_event, o->ctx, {0}};
    return command(s, "StartRun", &pc, &c, info, err);
}

knut_status knut_spark_sdp_graph_drop(knut_spark_session *s, const char *graph_id,
                                      knut_error *err)
{
    KNUT_ASSERT_ARG(err, s && graph_id);
    KnutSpark__PipelineCommand__DropDataflowGraph d =
        KNUT_SPARK__PIPELINE_COMMAND__DROP_DATAFLOW_GRAPH__INIT;
    d._dataflow_graph_id_case =
        KNUT_SPARK__PIPELINE_COMMAND__DROP_DATAFLOW_GRAPH___DATAFLOW_GRAPH_ID_DATAFLOW_GRAPH_ID;
    d.dataflow_graph_id = (char *)graph_id;
    KnutSpark__PipelineCommand pc = KNUT_SPARK__PIPELINE_COMMAND__INIT;
    pc.command_type_case = KNUT_SPARK__PIPELINE_COMMAND__COMMAND_TYPE_DROP_DATAFLOW_GRAPH;
    pc.drop_dataflow_graph = &d;
    sdp_call c = {0};
    return command(s, "DropDataflowGraph", &pc, &c, NULL, err);
}
