/*
 * The Spark lowering printed: what would be defined (outputs, flows with
 * their relations), what the server's version refuses, and the report of
 * every knob dropped or changed, as text or one JSON object (the schema
 * is in docs/spark.md, "The lowering report").
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "spark_int.h"

static const char *type_name(knut_spark_sdp_output_type t)
{
    switch (t) {
    case KNUT_SPARK_SDP_MATERIALIZED_VIEW: return "MATERIALIZED_VIEW";
    case KNUT_SPARK_SDP_TABLE: return "TABLE";
    case KNUT_SPARK_SDP_TEMPORARY_VIEW: return "TEMPORARY_VIEW";
    }
    return "UNSPECIFIED";
}

static json_t *kv_json(const knut_spark_sdp_kv *kv, size_t n)
{
    json_t *o = json_object();
    for (size_t i = 0; i < n; i++)
        json_object_set_new(o, kv[i].key, json_string(kv[i].value));
    return o;
}

static json_t *strs_json(const char *const *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, json_string(v[i]));
    return a;
}

static json_t *notes_json(const knut_pipeline__spark_notes *ns)
{
    json_t *a = json_array();
    for (size_t i = 0; i < ns->n; i++)
        json_array_append_new(a, json_pack("{s:s,s:s,s:s}", "knob", ns->v[i].knob, "change",
                                           ns->v[i].change, "detail", ns->v[i].detail));
    return a;
}

static json_t *cols_json(const knut_spark_sdp_cols *c)
{
    if (!c->n)
        return json_null();
    return json_pack("{s:o,s:b}", "names", strs_json(c->names, c->n), "except", c->except);
}

static json_t *flow_json(const knut_pipeline__spark_flow *lf)
{
    const knut_spark_sdp_flow *sf = &lf->sf;
    json_t *o = json_pack("{s:s,s:s,s:s}", "name", sf->name, "target", sf->target, "kind",
                          lf->kind);
    if (lf->f)
        json_object_set_new(o, "defined_at",
                            json_pack("{s:s?,s:i,s:i}", "file", lf->f->pos.file, "line",
                                      lf->f->pos.line, "col", lf->f->pos.col));
    if (sf->cdc) {
        const knut_spark_sdp_cdc *c = sf->cdc;
        json_object_set_new(o, "auto_cdc",
                            json_pack("{s:s,s:o,s:s,s:s?,s:o,s:i,s:o}", "source", c->source,
                                      "keys", strs_json(c->keys, c->nkeys), "sequence_by",
                                      c->sequence_by, "apply_as_deletes", c->delete_when,
                                      "columns", cols_json(&c->columns), "stored_as_scd_type",
                                      c->scd_type, "track_history",
                                      cols_json(&c->track_history)));
    } else if (sf->read_format) {
        json_object_set_new(o, "read",
                            json_pack("{s:s,s:o,s:o,s:b}", "format", sf->read_format, "paths",
                                      strs_json(sf->read_paths, sf->nread_paths), "options",
                                      kv_json(sf->read_options, sf->nread_options),
                                      "is_streaming", sf->read_streaming));
    } else {
        json_object_set_new(o, "sql", json_string(sf->sql ? sf->sql : ""));
    }
    json_object_set_new(o, "refused", strs_json(lf->refused.v, lf->refused.n));
    json_object_set_new(o, "report", notes_json(&lf->notes));
    return o;
}

static json_t *plan_json(const knut_pipeline_spark_plan *pl)
{
    json_t *outs = json_array(), *flows = json_array();
    for (size_t i = 0; i < pl->noutputs; i++) {
        const knut_spark_sdp_output *o = &pl->outputs[i].o;
        json_array_append_new(outs, json_pack("{s:s,s:s,s:s?,s:o,s:b}", "name", o->name,
                                              "output_type", type_name(o->type), "comment",
                                              o->comment, "table_properties",
                                              kv_json(o->properties, o->nproperties),
                                              "added_by_knut", pl->outputs[i].ds == NULL));
    }
    for (size_t i = 0; i < pl->nflows; i++)
        json_array_append_new(flows, flow_json(&pl->flows[i]));
    return json_pack("{s:s,s:s,s:s,s:s,s:b,s:o,s:i,s:{s:s?,s:o,s:s},s:o,s:o,s:o,s:o}",
                     "pipeline", pl->p->name, "backend", "spark", "spark_version", pl->version,
                     "layout", pl->layout, "runnable", knut_pipeline_spark_refused(pl) == 0,
                     "refused", strs_json(pl->refused.v, pl->refused.n), "refused_flows",
                     (int)pl->nrefused_flows, "graph", "default_database", pl->database,
                     "sql_conf", kv_json(pl->conf, pl->nconf), "storage", pl->storage,
                     "session_conf", kv_json(pl->session_conf, pl->nsession_conf), "report",
                     notes_json(&pl->notes), "outputs", outs, "flows", flows);
}

static void notes_text(knut_buf *b, const knut_pipeline__spark_notes *ns, const char *indent)
{
    for (size_t i = 0; i < ns->n; i++)
        knut_buf_printf(b, "%s%s %s: %s\n", indent, ns->v[i].change, ns->v[i].knob,
                        ns->v[i].detail);
}

static void plan_text(const knut_pipeline_spark_plan *pl, knut_buf *b)
{
    size_t nref = knut_pipeline_spark_refused(pl);
    knut_buf_printf(b, "pipeline %s on Spark %s (the %s messages): %s", pl->p->name,
                    pl->version, pl->layout, nref ? "REFUSED" : "can run");
    if (pl->nrefused_flows)
        knut_buf_printf(b, " (%zu flow%s cannot run)", pl->nrefused_flows,
                        pl->nrefused_flows == 1 ? "" : "s");
    knut_buf_puts(b, "\n");
    for (size_t i = 0; i < pl->refused.n; i++)
        knut_buf_printf(b, "  REFUSED: %s\n", pl->refused.v[i]);
    knut_buf_printf(b, "graph: database %s, storage %s\n",
                    pl->database ? pl->database : "(the session's)", pl->storage);
    for (size_t i = 0; i < pl->nconf; i++)
        knut_buf_printf(b, "  sql_conf %s=%s\n", pl->conf[i].key, pl->conf[i].value);
    for (size_t i = 0; i < pl->nsession_conf; i++)
        knut_buf_printf(b, "  session SET %s=%s\n", pl->session_conf[i].key,
                        pl->session_conf[i].value);
    knut_buf_puts(b, "report (pipeline):\n");
    notes_text(b, &pl->notes, "  ");
    knut_buf_puts(b, "outputs:\n");
    for (size_t i = 0; i < pl->noutputs; i++) {
        const knut_spark_sdp_output *o = &pl->outputs[i].o;
        knut_buf_printf(b, "  %-17s %s%s", type_name(o->type), o->name,
                        pl->outputs[i].ds ? "" : " (added: a file source)");
        for (size_t k = 0; k < o->nproperties; k++)
            knut_buf_printf(b, " %s=%s", o->properties[k].key, o->properties[k].value);
        knut_buf_puts(b, "\n");
    }
    knut_buf_puts(b, "flows:\n");
    for (size_t i = 0; i < pl->nflows; i++) {
        const knut_pipeline__spark_flow *lf = &pl->flows[i];
        const knut_spark_sdp_flow *sf = &lf->sf;
        knut_buf_printf(b, "  %s -> %s (%s)", sf->name, sf->target, lf->kind);
        if (lf->f)
            knut_buf_printf(b, " %s:%d:%d", lf->f->pos.file ? lf->f->pos.file : "",
                            lf->f->pos.line, lf->f->pos.col);
        knut_buf_puts(b, "\n");
        if (sf->cdc) {
            knut_buf_printf(b, "    auto_cdc: source %s, %zu key(s), sequence_by %s, SCD type "
                            "%d%s%s\n", sf->cdc->source, sf->cdc->nkeys, sf->cdc->sequence_by,
                            sf->cdc->scd_type, sf->cdc->delete_when ? ", apply_as_deletes " : "",
                            sf->cdc->delete_when ? sf->cdc->delete_when : "");
        } else if (sf->read_format) {
            knut_buf_printf(b, "    read: %s %s%s", sf->read_format, sf->read_paths[0],
                            sf->read_streaming ? " (stream)" : "");
            for (size_t k = 0; k < sf->nread_options; k++)
                knut_buf_printf(b, " %s=%s", sf->read_options[k].key,
                                sf->read_options[k].value);
            knut_buf_puts(b, "\n");
        } else {
            /* the query on one line */
            knut_buf_puts(b, "    sql: ");
            const char *q = sf->sql ? sf->sql : "";
            int space = 1;
            for (; *q; q++) {
                int ws = *q == ' ' || *q == '\n' || *q == '\t' || *q == '\r';
                if (ws && space)
                    continue;
                knut_buf_append(b, ws ? " " : q, 1);
                space = ws;
            }
            knut_buf_puts(b, "\n");
        }
        for (size_t k = 0; k < lf->refused.n; k++)
            knut_buf_printf(b, "    REFUSED: %s\n", lf->refused.v[k]);
        notes_text(b, &lf->notes, "    ");
    }
}

knut_status knut_pipeline_spark_show(const knut_pipeline_spark_plan *pl, int json, knut_buf *b,
                                     knut_error *err)
{
    KNUT_ASSERT_ARG(err, pl && b);
    if (!json) {
        plan_text(pl, b);
        return knut_buf_check(b, err);
    }
    json_t *o = plan_json(pl);
    char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    if (!s)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    knut_buf_puts(b, s);
    knut_buf_puts(b, "\n");
    free(s);
    return knut_buf_check(b, err);
}
