/*
 * The pipeline IR lowered to a Spark Declarative Pipelines dataflow
 * graph (docs/spark.md, "Running a pipeline on Spark"). Each dataset is a
 * DefineOutput, each flow a DefineFlow whose relation is the flow's query
 * as Spark SQL: STREAM(x) put back where the parser blanked it, LIVE.
 * dropped, and each DuckDB file-source call (read_parquet('p'), ...)
 * replaced by a temporary view knut adds, whose flow reads the files with
 * a Spark data source. AUTO CDC flows become AutoCDC flow details (4.2+).
 *
 * The capability check refuses, per flow and with the reason, what the
 * server's version cannot run: expectations (no OSS version has them),
 * INSERT INTO ONCE (servers refuse `once`), knut's event-time clauses,
 * graph sinks, AUTO CDC before 4.2, SCD type 2 before 4.3, the CDC
 * clauses Spark accepts but does not apply, and every flow downstream of
 * a refused one. Everything else that lowering drops or changes is a
 * report note of its flow (or of the pipeline).
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline_int.h"
#include "spark_int.h"

void *knut_pipeline__spark_keep(knut_pipeline_spark_plan *pl, void *p)
{
    if (!p)
        return NULL;
    if (pl->nmem == pl->capmem) {
        size_t cap = pl->capmem ? pl->capmem * 2 : 64;
        void **m = realloc(pl->mem, cap * sizeof *m);
        if (!m) {
            free(p);
            return NULL;
        }
        pl->mem = m;
        pl->capmem = cap;
    }
    pl->mem[pl->nmem++] = p;
    return p;
}

char *knut_pipeline__spark_fmt(knut_pipeline_spark_plan *pl, const char *fmt, ...)
{
    knut_buf b;
    knut_buf_init(&b, (size_t)1 << 20);
    va_list ap;
    va_start(ap, fmt);
    knut_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    if (b.len == 0)
        knut_buf_putc(&b, '\0'); /* detach gives "" */
    return knut_pipeline__spark_keep(pl, knut_buf_detach(&b, NULL));
}

/* A slot at the end of *v (element size sz), zeroed; NULL on ENOMEM. */
static void *grow(knut_pipeline_spark_plan *pl, void **v, size_t *n, size_t sz)
{
    void *nv = realloc(*v, (*n + 1) * sz);
    if (!nv)
        return NULL;
    if (*v == NULL && !knut_pipeline__spark_keep(pl, nv))
        return NULL;
    if (*v && nv != *v)
        for (size_t i = 0; i < pl->nmem; i++)
            if (pl->mem[i] == *v)
                pl->mem[i] = nv;
    *v = nv;
    memset((char *)nv + *n * sz, 0, sz);
    return (char *)nv + (*n)++ * sz;
}


static int note(knut_pipeline_spark_plan *pl, knut_pipeline__spark_notes *ns, const char *knob,
                const char *change, const char *detail)
{
    knut_pipeline__spark_note *n = grow(pl, (void **)&ns->v, &ns->n, sizeof *n);
    if (!n || !knob || !detail)
        return -1;
    *n = (knut_pipeline__spark_note){knob, change, detail};
    return 0;
}

static int refuse(knut_pipeline_spark_plan *pl, knut_pipeline__spark_strs *r, const char *why)
{
    const char **slot = grow(pl, (void **)&r->v, &r->n, sizeof *slot);
    if (!slot || !why)
        return -1;
    *slot = why;
    return 0;
}

#define POS(ps) (ps).file ? (ps).file : "", (ps).line, (ps).col

/* Spark SQL from the flow's query: the bytes as written where the parser
 * blanked STREAM (and its parentheses), blanks where it blanked LIVE. */
static char *spark_text(knut_pipeline_spark_plan *pl, const knut_pipeline_flow *f)
{
    size_t n = strlen(f->sql);
    char *t = knut_pipeline__spark_keep(pl, strdup(f->sql));
    if (!t || !f->source_sql || strlen(f->source_sql) != n)
        return t;
    for (size_t i = 0; i < n;) {
        if (f->sql[i] == f->source_sql[i]) {
            i++;
            continue;
        }
        size_t j = i;
        while (j < n && f->sql[j] != f->source_sql[j])
            j++;
        memcpy(t + i, f->source_sql + i, j - i);
        for (size_t k = i; k + 4 < j + 1 && k + 4 <= n; k++) {
            if (strncasecmp(t + k, "live", 4) != 0)
                continue;
            size_t d = k + 4;
            while (d < j && isspace((unsigned char)t[d]))
                d++;
            if (d < j && t[d] == '.')
                memset(t + k, ' ', d + 1 - k);
        }
        i = j;
    }
    return t;
}

/* The extent [*from, *to) of the call around source s in text, and its
 * other arguments (trimmed) in [*xa, *xb). 0: not a call. */
static int call_extent(const char *t, const knut_pipeline_source *s, size_t *from, size_t *to,
                       size_t *xa, size_t *xb)
{
    size_t k = s->at;
    while (k > 0 && isspace((unsigned char)t[k - 1]))
        k--;
    if (k == 0 || t[k - 1] != '(')
        return 0;
    k--;
    while (k > 0 && isspace((unsigned char)t[k - 1]))
        k--;
    while (k > 0 && (isalnum((unsigned char)t[k - 1]) || t[k - 1] == '_'))
        k--;
    *from = k;
    size_t i = s->at + s->len;
    int depth = 1;
    char q = 0;
    for (; t[i]; i++) {
        if (q) {
            if (t[i] == q)
                q = 0;
            continue;
        }
        if (t[i] == '\'' || t[i] == '"')
            q = t[i];
        else if (t[i] == '(')
            depth++;
        else if (t[i] == ')' && --depth == 0)
            break;
    }
    if (!t[i])
        return 0;
    *to = i + 1;
    size_t a = s->at + s->len, b = i;
    while (a < b && (isspace((unsigned char)t[a]) || t[a] == ','))
        a++;
    while (b > a && isspace((unsigned char)t[b - 1]))
        b--;
    *xa = a;
    *xb = b;
    return 1;
}

/* The temporary view (output and flow) reading source s of flow f. */
static knut_status add_source_view(knut_pipeline_spark_plan *pl, const knut_pipeline_flow *f,
                                   const knut_pipeline_source *s, const char *view,
                                   int streaming, knut_pipeline__spark_flow *owner,
                                   knut_error *err)
{
    const char *fmt = strstr(s->function, "parquet") ? "parquet"
                      : strstr(s->function, "csv")   ? "csv"
                                                     : "json";
    knut_pipeline__spark_output *o = grow(pl, (void **)&pl->outputs, &pl->noutputs, sizeof *o);
    knut_pipeline__spark_flow *vf = grow(pl, (void **)&pl->flows, &pl->nflows, sizeof *vf);
    const char **paths = knut_pipeline__spark_keep(pl, calloc(1, sizeof *paths));
    if (!o || !vf || !paths)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    o->o = (knut_spark_sdp_output){.name = view, .type = KNUT_SPARK_SDP_TEMPORARY_VIEW,
                                   .file = f->pos.file, .line = f->pos.line};
    paths[0] = s->pattern[0] == '/' ? s->pattern
                                    : knut_pipeline__spark_fmt(pl, "%s/%s", pl->root, s->pattern);
    vf->kind = "file_read";
    vf->sf = (knut_spark_sdp_flow){.name = view, .target = view, .read_format = fmt,
                                   .read_paths = paths, .nread_paths = 1,
                                   .read_streaming = streaming, .file = f->pos.file,
                                   .line = f->pos.line};
    if (strcmp(fmt, "csv") == 0) {
        knut_spark_sdp_kv *kv = knut_pipeline__spark_keep(pl, calloc(2, sizeof *kv));
        if (!kv)
            return knut_error_set(err, KNUT_ENOMEM, "out of memory");
        kv[0] = (knut_spark_sdp_kv){"header", "true"};
        kv[1] = (knut_spark_sdp_kv){"inferSchema", "true"};
        vf->sf.read_options = kv;
        vf->sf.nread_options = 2;
    }
    char *knob = knut_pipeline__spark_fmt(pl, "%s('%s')", s->function, s->pattern);
    int bad = !paths[0] || !knob;
    bad |= note(pl, &owner->notes, knob, "changed",
                knut_pipeline__spark_fmt(pl, "read by the temporary view %s: Spark's %s data "
                                         "source on %s (the server's file system)%s",
                                         view, fmt, paths[0] ? paths[0] : "",
                                         streaming ? ", as a stream" : ""));
    if (strcmp(fmt, "csv") == 0)
        bad |= note(pl, &owner->notes, knob, "changed",
                    "header=true, inferSchema=true: Spark infers the column types itself "
                    "(DuckDB's sniffer may choose others, e.g. BIGINT where Spark says INT)");
    if (strcmp(fmt, "json") == 0)
        bad |= note(pl, &owner->notes, knob, "changed",
                    "Spark reads JSON lines (one object a line); DuckDB also read arrays");
    if (strstr(s->pattern, "**"))
        bad |= note(pl, &owner->notes, knob, "changed",
                    "'**' in a Hadoop glob matches one folder level, not any depth");
    if (streaming)
        bad |= note(pl, &owner->notes, knob, "changed",
                    "Spark's file stream keeps its own checkpoint under the storage; "
                    "knut's file checkpoint (_knut.files) is not used");
    return bad ? knut_error_set(err, KNUT_ENOMEM, "out of memory") : KNUT_OK;
}

/* The SQL relation of f with its file sources replaced by views. */
static knut_status lower_query(knut_pipeline_spark_plan *pl, const knut_pipeline_flow *f,
                               size_t fi, knut_error *err)
{
    const char *t = spark_text(pl, f);
    if (!t)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    int streaming = f->kind == KNUT_PIPELINE_FLOW_STREAMING;
    knut_buf b;
    knut_buf_init(&b, KNUT_PIPELINE_SQL_MAX_BYTES * 2);
    size_t at = 0;
    knut_status st = KNUT_OK;
    for (size_t i = 0; i < f->nsources; i++) {
        const knut_pipeline_source *s = &f->sources[i];
        size_t from, to, xa, xb;
        if (!call_extent(t, s, &from, &to, &xa, &xb) || from < at) {
            char *why = knut_pipeline__spark_fmt(
                pl, "%s:%d:%d: file source %s('%s'): the call around it was not found, so it "
                "cannot be replaced by a Spark data source", POS(f->sql_pos), s->function,
                s->pattern);
            if (refuse(pl, &pl->flows[fi].refused, why) != 0)
                st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
            goto cleanup;
        }
        char *view = knut_pipeline__spark_fmt(pl, "__knut_src_%s_%zu", f->name, i + 1);
        if (!view) {
            st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
            goto cleanup;
        }
        if (xb > xa) {
            char *knob = knut_pipeline__spark_fmt(pl, "%s('%s')", s->function, s->pattern);
            char *d = knut_pipeline__spark_fmt(pl, "DuckDB arguments '%.*s' are not passed to "
                                               "Spark", (int)(xb - xa), t + xa);
            if (note(pl, &pl->flows[fi].notes, knob, "dropped", d) != 0) {
                st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
                goto cleanup;
            }
        }
        knut_buf_append(&b, t + at, from - at);
        knut_buf_printf(&b, streaming ? "STREAM(%s)" : "%s", view);
        at = to;
        /* the view's flow goes before f's (fi moves up by one) */
        knut_pipeline__spark_flow keep = pl->flows[fi];
        pl->nflows--;
        if ((st = add_source_view(pl, f, s, view, streaming, &keep, err)) != KNUT_OK)
            goto cleanup;
        knut_pipeline__spark_flow *slot = grow(pl, (void **)&pl->flows, &pl->nflows,
                                               sizeof *slot);
        if (!slot) {
            st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
            goto cleanup;
        }
        *slot = keep;
        fi = pl->nflows - 1;
    }
    knut_buf_puts(&b, t + at);
    if ((st = knut_buf_check(&b, err)) != KNUT_OK)
        goto cleanup;
    pl->flows[fi].sf.sql = knut_pipeline__spark_keep(pl, strndup(b.data, b.len));
    if (!pl->flows[fi].sf.sql)
        st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
cleanup:
    knut_buf_reset(&b);
    return st;
}

static int cols_of(knut_pipeline_spark_plan *pl, const knut_pipeline_cols *c,
                   knut_spark_sdp_cols *out)
{
    (void)pl;
    *out = (knut_spark_sdp_cols){c->names, c->n, c->except};
    return 0;
}

/* The capability check and the AutoCDC details of a CDC flow. */
static int lower_cdc(knut_pipeline_spark_plan *pl, knut_pipeline__spark_flow *lf)
{
    const knut_pipeline_flow *f = lf->f;
    const knut_pipeline_cdc *c = f->cdc;
    int bad = 0;
    int v = pl->major * 100 + pl->minor;
    if (v < 402)
        bad |= refuse(pl, &lf->refused, knut_pipeline__spark_fmt(
            pl, "%s:%d:%d: AUTO CDC needs Spark 4.2 or newer (the server is %s, whose "
            "pipelines.proto has no AutoCDC flow)", POS(f->pos), pl->version));
    else if (c->scd_type == 2 && v < 403)
        bad |= refuse(pl, &lf->refused, knut_pipeline__spark_fmt(
            pl, "%s:%d:%d: STORED AS SCD TYPE 2 needs Spark 4.3 or newer (Spark %s has SCD "
            "type 1 only)", POS(f->pos), pl->version));
    if (c->truncate_when)
        bad |= refuse(pl, &lf->refused, knut_pipeline__spark_fmt(
            pl, "%s:%d:%d: APPLY AS TRUNCATE WHEN: Spark accepts apply_as_truncates but does "
            "not apply it (SPARK-57092)", POS(f->pos)));
    if (c->ignore_null_updates)
        bad |= refuse(pl, &lf->refused, knut_pipeline__spark_fmt(
            pl, "%s:%d:%d: IGNORE NULL UPDATES: Spark accepts the ignore-null-updates column "
            "lists but does not apply them (SPARK-57093)", POS(f->pos)));
    const knut_pipeline_dataset *src = knut_pipeline_dataset_find(pl->p, c->source);
    if (src && src->kind != KNUT_PIPELINE_STREAMING_TABLE)
        bad |= refuse(pl, &lf->refused, knut_pipeline__spark_fmt(
            pl, "%s:%d:%d: AUTO CDC FROM %s: Spark reads an AutoCDC source as a stream, and "
            "a %s cannot be one (knut reads it whole each run)", POS(f->pos), c->source,
            knut_pipeline_dataset_kind_name(src->kind)));
    lf->kind = "auto_cdc";
    lf->cdc = (knut_spark_sdp_cdc){.source = c->source, .keys = c->keys, .nkeys = c->nkeys,
                                   .sequence_by = c->sequence_by, .delete_when = c->delete_when,
                                   .scd_type = c->scd_type};
    cols_of(pl, &c->columns, &lf->cdc.columns);
    cols_of(pl, &c->track_history, &lf->cdc.track_history);
    bad |= note(pl, &lf->notes, "AUTO CDC target", "changed",
                "Spark writes the target in the session's default table format; AutoCDC needs "
                "one that supports MERGE (Iceberg, Delta), else the run fails with "
                "AUTOCDC_TARGET_DOES_NOT_SUPPORT_MERGE");
    bad |= note(pl, &lf->notes, "change log", "dropped",
                knut_pipeline__spark_fmt(pl, "knut's %s__cdc_log table is not kept; Spark "
                                         "keeps its state in the storage and a "
                                         "__spark_autocdc_metadata column", f->target));
    return bad;
}

/* The refusals of flow f that do not depend on its kind. */
static int check_flow(knut_pipeline_spark_plan *pl, knut_pipeline__spark_flow *lf,
                      const knut_pipeline_dataset *ds, const unsigned char *refused_ds)
{
    const knut_pipeline_flow *f = lf->f;
    int bad = 0;
    for (size_t i = 0; i < f->nexpectations; i++) {
        const knut_pipeline_expectation *e = &f->expectations[i];
        bad |= refuse(pl, &lf->refused, knut_pipeline__spark_fmt(
            pl, "%s:%d:%d: expectation '%s' (%s): Apache Spark Declarative Pipelines has no "
            "expectations (no pipelines.proto field through 4.3)", POS(e->pos), e->name,
            knut_pipeline_action_name(e->action)));
    }
    if (ds && ds->kind == KNUT_PIPELINE_SINK)
        bad |= refuse(pl, &lf->refused, knut_pipeline__spark_fmt(
            pl, "%s:%d:%d: graph sink '%s': Spark has no sink that writes FalkorDB or knut's "
            "graph store", POS(ds->pos), ds->name));
    if (f->kind == KNUT_PIPELINE_FLOW_APPEND_ONCE)
        bad |= refuse(pl, &lf->refused, knut_pipeline__spark_fmt(
            pl, "%s:%d:%d: INSERT INTO ONCE: Spark refuses once flows "
            "(DEFINE_FLOW_ONCE_OPTION_NOT_SUPPORTED)", POS(f->pos)));
    const knut_pipeline_streaming *s = f->stream;
    if (s && s->watermark_col)
        bad |= refuse(pl, &lf->refused, knut_pipeline__spark_fmt(
            pl, "%s:%d:%d: WATERMARK %s: knut's event-time clauses are not lowered (Spark SQL "
            "has no WATERMARK clause for a pipeline flow)", POS(s->watermark_pos),
            s->watermark_col));
    if (s && s->window == KNUT_PIPELINE_WINDOW_SESSION)
        bad |= refuse(pl, &lf->refused, knut_pipeline__spark_fmt(
            pl, "%s:%d:%d: WINDOW SESSION: session windows are not lowered (Spark would need "
            "session_window() in the query and a watermark)", POS(s->window_pos)));
    else if (s && s->window != KNUT_PIPELINE_WINDOW_NONE)
        bad |= refuse(pl, &lf->refused, knut_pipeline__spark_fmt(
            pl, "%s:%d:%d: WINDOW %s: windows are not lowered (Spark would need window() in "
            "the query and a watermark)", POS(s->window_pos),
            s->window == KNUT_PIPELINE_WINDOW_TUMBLING ? "TUMBLING" : "HOPPING"));
    if (s && s->mode_given)
        bad |= refuse(pl, &lf->refused, knut_pipeline__spark_fmt(
            pl, "%s:%d:%d: OUTPUT MODE: a pipeline flow cannot choose Spark's output mode",
            POS(s->mode_pos)));
    if (s && s->trigger != KNUT_PIPELINE_TRIGGER_AVAILABLE_NOW)
        bad |= refuse(pl, &lf->refused, knut_pipeline__spark_fmt(
            pl, "%s:%d:%d: TRIGGER: a pipeline run chooses its own trigger", POS(s->trigger_pos)));
    for (size_t i = 0; i < f->nreads; i++) {
        const knut_pipeline_read *r = &f->reads[i];
        const knut_pipeline_dataset *up = r->internal ? knut_pipeline_dataset_find(pl->p, r->name)
                                                      : NULL;
        if (up && refused_ds[up - pl->p->datasets])
            bad |= refuse(pl, &lf->refused, knut_pipeline__spark_fmt(
                pl, "%s:%d:%d: reads '%s', which cannot run on Spark", POS(r->pos), r->name));
    }
    if (f->cdc) {
        const knut_pipeline_dataset *up = knut_pipeline_dataset_find(pl->p, f->cdc->source);
        if (up && refused_ds[up - pl->p->datasets])
            bad |= refuse(pl, &lf->refused, knut_pipeline__spark_fmt(
                pl, "%s:%d:%d: reads '%s', which cannot run on Spark", POS(f->pos),
                f->cdc->source));
    }
    return bad;
}

/* "4.3.0" (or "4.1.0-preview2", "4.2.1-SNAPSHOT") into major.minor. */
static knut_status parse_version(knut_pipeline_spark_plan *pl, const char *v, knut_error *err)
{
    snprintf(pl->version, sizeof pl->version, "%s", v);
    if (sscanf(v, "%d.%d", &pl->major, &pl->minor) != 2 || pl->major < 0 || pl->minor < 0)
        return knut_error_set(err, KNUT_EINVAL, "Spark version '%.60s' is no version "
                              "(major.minor[.patch])", v);
    int n = pl->major * 100 + pl->minor;
    snprintf(pl->layout, sizeof pl->layout, "%s", n >= 403 ? "4.3" : n >= 402 ? "4.2" : "4.1");
    const char *why = NULL;
    if (n < 401)
        why = knut_pipeline__spark_fmt(pl, "Spark %s has no Declarative Pipelines "
                                       "(pipelines.proto arrived with 4.1.0)", v);
    else if (n == 401 && (strstr(v, "preview1") || strstr(v, "preview2")))
        why = knut_pipeline__spark_fmt(pl, "Spark %s numbers DefineFlow in the pre-release "
                                       "layout (DefineDataset); knut speaks 4.1.0's", v);
    if (why && refuse(pl, &pl->refused, why) != 0)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    if (n > 403 && note(pl, &pl->notes, "Spark version", "changed",
                        knut_pipeline__spark_fmt(pl, "%s is newer than 4.3: lowered with the "
                                                 "4.3 messages (later layouts only add)", v)))
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    return KNUT_OK;
}

/* The pipeline's own knobs: configuration, catalog, schema, storage. */
static int lower_pipeline(knut_pipeline_spark_plan *pl, const knut_pipeline_spark_options *o)
{
    const knut_pipeline *p = pl->p;
    int bad = 0;
    for (size_t i = 0; i < p->nconfiguration; i++) {
        const knut_pipeline_setting *s = &p->configuration[i];
        char *knob = knut_pipeline__spark_fmt(pl, "configuration %s", s->name);
        if (strncmp(s->name, "spark.", 6) == 0) {
            knut_spark_sdp_kv *kv = grow(pl, (void **)&pl->conf, &pl->nconf, sizeof *kv);
            if (!kv)
                return 1;
            *kv = (knut_spark_sdp_kv){s->name, s->value};
        } else if (strcmp(s->name, "knut.max_files_per_update") == 0) {
            bad |= note(pl, &pl->notes, knob, "dropped",
                        "a Spark file stream reads every new file in one micro-batch");
        } else {
            bad |= note(pl, &pl->notes, knob, "dropped",
                        "a DuckDB setting; only spark.* entries go to Spark (as the graph's "
                        "SQL conf)");
        }
    }
    if (p->catalog)
        bad |= note(pl, &pl->notes, "catalog", "dropped",
                    knut_pipeline__spark_fmt(pl, "'%s' names knut's DuckDB file; Spark uses "
                                             "the session's catalog", p->catalog));
    if (p->schema && strcmp(p->schema, "main") != 0) {
        pl->database = p->schema;
        bad |= note(pl, &pl->notes, "schema", "changed",
                    knut_pipeline__spark_fmt(pl, "'%s' is the graph's default database (it "
                                             "must exist on the server)", p->schema));
    } else {
        bad |= note(pl, &pl->notes, "schema", "changed",
                    "DuckDB's 'main': the datasets go to the session's current database");
    }
    if (o && o->storage) {
        pl->storage = o->storage;
    } else {
        const char *st = p->storage ? p->storage : "storage";
        pl->storage = st[0] == '/' ? knut_pipeline__spark_fmt(pl, "file://%s/spark", st)
                                   : knut_pipeline__spark_fmt(pl, "file://%s/%s/spark",
                                                              pl->root, st);
    }
    bad |= note(pl, &pl->notes, "storage", "changed",
                knut_pipeline__spark_fmt(pl, "Spark's checkpoints and metadata go to %s (a "
                                         "path of the server's file system); knut's DuckDB "
                                         "file is not used", pl->storage ? pl->storage : ""));
    bad |= note(pl, &pl->notes, "events", "changed",
                "the server's events are turned into knut's events on stdout only; "
                "events.jsonl and _knut.event_log are not written");
    return bad || !pl->storage;
}

static knut_status lower_dataset(knut_pipeline_spark_plan *pl, const knut_pipeline_dataset *ds,
                                 knut_error *err)
{
    if (ds->kind == KNUT_PIPELINE_SINK)
        return KNUT_OK; /* refused with its flows */
    knut_pipeline__spark_output *o = grow(pl, (void **)&pl->outputs, &pl->noutputs, sizeof *o);
    if (!o)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    o->ds = ds;
    o->o = (knut_spark_sdp_output){
        .name = ds->name, .comment = ds->comment, .file = ds->pos.file, .line = ds->pos.line,
        .type = ds->kind == KNUT_PIPELINE_STREAMING_TABLE     ? KNUT_SPARK_SDP_TABLE
                : ds->kind == KNUT_PIPELINE_MATERIALIZED_VIEW ? KNUT_SPARK_SDP_MATERIALIZED_VIEW
                                                              : KNUT_SPARK_SDP_TEMPORARY_VIEW};
    if (ds->nproperties && ds->kind != KNUT_PIPELINE_TEMPORARY_VIEW) {
        knut_spark_sdp_kv *kv = knut_pipeline__spark_keep(pl, calloc(ds->nproperties,
                                                                     sizeof *kv));
        if (!kv)
            return knut_error_set(err, KNUT_ENOMEM, "out of memory");
        for (size_t i = 0; i < ds->nproperties; i++)
            kv[i] = (knut_spark_sdp_kv){ds->properties[i].name, ds->properties[i].value};
        o->o.properties = kv;
        o->o.nproperties = ds->nproperties;
    }
    return KNUT_OK;
}

knut_status knut_pipeline_spark_lower(const knut_pipeline *p, const char *spark_version,
                                      const knut_pipeline_spark_options *o,
                                      knut_pipeline_spark_plan **out, knut_error *err)
{
    KNUT_ASSERT_ARG(err, p && spark_version && out);
    *out = NULL;
    KNUT_CHECK_VERSION(o, KNUT_PIPELINE_SPARK_OPTIONS_VERSION, err);
    if (!p->resolved)
        return knut_error_set(err, KNUT_EINVAL, "pipeline %s is not resolved", p->name);
    knut_pipeline_spark_plan *pl = calloc(1, sizeof *pl);
    if (!pl)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    pl->p = p;
    /* The server reads the files: paths are made absolute (a server on
     * another machine needs the same paths, or --spark-storage and
     * absolute sources). */
    pl->root = knut_pipeline__spark_keep(pl, realpath(p->root ? p->root : ".", NULL));
    if (!pl->root)
        pl->root = p->root ? p->root : ".";
    unsigned char *refused_ds = calloc(p->ndatasets + 1, 1);
    knut_status st = parse_version(pl, spark_version, err);
    if (st != KNUT_OK)
        goto cleanup;
    if (!refused_ds || lower_pipeline(pl, o) != 0) {
        st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
        goto cleanup;
    }
    for (size_t i = 0; i < p->ndatasets && st == KNUT_OK; i++)
        st = lower_dataset(pl, &p->datasets[i], err);
    int streams = 0;
    for (size_t i = 0; i < p->nflows && st == KNUT_OK; i++) {
        const knut_pipeline_flow *f = &p->flows[p->order[i]];
        const knut_pipeline_dataset *ds = knut_pipeline_dataset_find(p, f->target);
        knut_pipeline__spark_flow *lf = grow(pl, (void **)&pl->flows, &pl->nflows, sizeof *lf);
        if (!lf) {
            st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
            break;
        }
        lf->f = f;
        lf->kind = f->kind == KNUT_PIPELINE_FLOW_STREAMING ? "streaming" : "batch";
        lf->sf = (knut_spark_sdp_flow){.name = f->name, .target = f->target,
                                       .file = f->pos.file, .line = f->pos.line};
        int bad = check_flow(pl, lf, ds, refused_ds);
        if (f->kind == KNUT_PIPELINE_FLOW_CDC)
            bad |= lower_cdc(pl, lf);
        if (bad) {
            st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
            break;
        }
        size_t writers = 0;
        for (size_t k = 0; k < p->nflows; k++)
            writers += strcmp(p->flows[k].target, f->target) == 0;
        if (writers > 1 && f->kind != KNUT_PIPELINE_FLOW_CDC &&
            note(pl, &lf->notes, "flows into one table", "changed",
                 knut_pipeline__spark_fmt(pl, "%zu flows write '%s': with Spark's file "
                                          "formats (parquet, the default) their streams share "
                                          "one _spark_metadata log and race after the first "
                                          "run (STREAM_FAILED); a table format such as Delta "
                                          "or Iceberg does not", writers, f->target)) != 0) {
            st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
            break;
        }
        if (f->sql && (st = lower_query(pl, f, pl->nflows - 1, err)) != KNUT_OK)
            break;
        lf = &pl->flows[pl->nflows - 1]; /* views may have gone before it */
        streams |= f->kind == KNUT_PIPELINE_FLOW_STREAMING && f->nsources > 0;
        if (lf->refused.n && ds) {
            refused_ds[ds - p->datasets] = 1;
            pl->nrefused_flows++;
        }
    }
    if (st == KNUT_OK && streams) {
        /* Spark's file streams need a schema; DuckDB infers it, so Spark
         * is asked to as well (a session setting: the relation is
         * analysed when the flow is defined). */
        knut_spark_sdp_kv *kv = grow(pl, (void **)&pl->session_conf, &pl->nsession_conf,
                                     sizeof *kv);
        if (!kv || note(pl, &pl->notes, "streaming file sources", "changed",
                        "the session sets spark.sql.streaming.schemaInference=true: Spark "
                        "infers a file stream's schema from the files present") != 0)
            st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
        else
            *kv = (knut_spark_sdp_kv){"spark.sql.streaming.schemaInference", "true"};
    }
    /* the flows array moved as it grew: point at each flow's details now */
    for (size_t i = 0; i < pl->nflows; i++)
        if (pl->flows[i].f && pl->flows[i].f->kind == KNUT_PIPELINE_FLOW_CDC)
            pl->flows[i].sf.cdc = &pl->flows[i].cdc;
cleanup:
    free(refused_ds);
    if (st != KNUT_OK) {
        knut_pipeline_spark_plan_free(pl);
        return st;
    }
    *out = pl;
    return KNUT_OK;
}

size_t knut_pipeline_spark_refused(const knut_pipeline_spark_plan *pl)
{
    return pl ? pl->nrefused_flows + (pl->refused.n ? 1 : 0) : 0;
}

void knut_pipeline_spark_plan_free(knut_pipeline_spark_plan *pl)
{
    if (!pl)
        return;
    for (size_t i = 0; i < pl->nmem; i++)
        free(pl->mem[i]);
    free(pl->mem);
    free(pl);
}
