/*
 * Airflow asset events after a native run (docs/pipelines.md "Airflow
 * asset events"): the spec's `airflow:` key, and one event per dataset
 * whose flows all COMPLETED in the run (none for a failed, skipped or idle
 * one), handed to the net part's background sender (src/net/airflow.c),
 * the one knut sync uses. Airflow being slow, down or misconfigured never
 * fails the run: every problem is a log record, target "assets".
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "knut/net.h"
#include "pipeline_int.h"

#define AIRFLOW_PASSWORD_MAX 4096

static knut_pipeline_pos pos_of(const knut_pipeline *p, const knut_conf *n)
{
    return (knut_pipeline_pos){p->spec_path, knut_conf_line(n), knut_conf_col(n)};
}

knut_status knut_pipeline__spec_str(knut_pipeline *p, const knut_conf *n, const char *section,
                                    const char *key, const char **out, knut_error *err)
{
    const knut_conf *v = knut_conf_get(n, key);
    if (!v)
        return KNUT_OK;
    const char *s = knut_conf_str(v);
    if (!s || !*s)
        return knut_pipeline__error_at(err, KNUT_EINVAL, pos_of(p, v),
                                       "%s: '%s' must be a non-empty string", section, key);
    *out = knut_pipeline__strdup(p, s);
    return *out ? KNUT_OK : knut_error_set(err, KNUT_ENOMEM, "pipeline: out of memory");
}

static knut_status opt_str(knut_pipeline *p, const knut_conf *n, const char *key,
                           const char **out, knut_error *err)
{
    return knut_pipeline__spec_str(p, n, "airflow", key, out, err);
}

knut_status knut_pipeline__airflow_parse(knut_pipeline *p, const knut_conf *n, knut_error *err)
{
    static const char *const keys[] = {"url", "user", "password_env", "password_file",
                                       "asset_prefix", "drain", NULL};
    if (knut_conf_kind_of(n) != KNUT_CONF_MAP)
        return knut_pipeline__error_at(err, KNUT_EPARSE, pos_of(p, n),
                                       "airflow: must be a map (url:, user:, password_env: or "
                                       "password_file:, asset_prefix:)");
    for (size_t i = 0; i < knut_conf_len(n); i++) {
        size_t k = 0;
        while (keys[k] && strcmp(keys[k], knut_conf_key_at(n, i)) != 0)
            k++;
        if (!keys[k])
            return knut_pipeline__error_at(err, KNUT_EPARSE, pos_of(p, knut_conf_at(n, i)),
                                           "airflow: unexpected field '%s' (it takes url, user, "
                                           "password_env, password_file, asset_prefix, drain)",
                                           knut_conf_key_at(n, i));
    }
    knut_pipeline_airflow *a = knut_pipeline__alloc(p, sizeof *a);
    if (!a)
        return knut_error_set(err, KNUT_ENOMEM, "pipeline: out of memory");
    const char *drain = NULL;
    knut_status st;
    if ((st = opt_str(p, n, "url", &a->url, err)) != KNUT_OK ||
        (st = opt_str(p, n, "user", &a->user, err)) != KNUT_OK ||
        (st = opt_str(p, n, "password_env", &a->password_env, err)) != KNUT_OK ||
        (st = opt_str(p, n, "password_file", &a->password_file, err)) != KNUT_OK ||
        (st = opt_str(p, n, "asset_prefix", &a->asset_prefix, err)) != KNUT_OK ||
        (st = opt_str(p, n, "drain", &drain, err)) != KNUT_OK)
        return st;
    if (!a->url || !a->user)
        return knut_pipeline__error_at(err, KNUT_EINVAL, pos_of(p, n),
                                       "airflow: needs 'url:' and 'user:'");
    if (strncmp(a->url, "http://", 7) != 0 && strncmp(a->url, "https://", 8) != 0)
        return knut_pipeline__error_at(err, KNUT_EINVAL, pos_of(p, knut_conf_get(n, "url")),
                                       "airflow: url: must be an http:// or https:// URL");
    if (a->password_env && a->password_file)
        return knut_pipeline__error_at(err, KNUT_EINVAL,
                                       pos_of(p, knut_conf_get(n, "password_file")),
                                       "airflow: give password_env: or password_file:, not both");
    if (a->password_file && a->password_file[0] != '/') { /* spec-folder relative */
        size_t la = strlen(p->root), lb = strlen(a->password_file);
        char *s = knut_pipeline__alloc(p, la + lb + 2);
        if (!s)
            return knut_error_set(err, KNUT_ENOMEM, "pipeline: out of memory");
        snprintf(s, la + lb + 2, "%s/%s", p->root, a->password_file);
        a->password_file = s;
    }
    if (!a->password_file && !a->password_env)
        a->password_env = "KNUT_AIRFLOW_PASSWORD";
    if (drain) {
        char *end = NULL;
        double s = strtod(drain, &end);
        if (!end || *end || !(s > 0) || s > 3600)
            return knut_pipeline__error_at(err, KNUT_EINVAL, pos_of(p, knut_conf_get(n, "drain")),
                                           "airflow: drain: must be seconds, more than 0 and at "
                                           "most 3600, not '%s'", drain);
        a->drain_ms = (int64_t)(s * 1000);
    }
    if (!a->asset_prefix) {
        char *esc = knut_net_http_escape(p->name);
        size_t len = esc ? strlen(esc) + 9 : 0;
        char *s = esc ? knut_pipeline__alloc(p, len) : NULL;
        if (s)
            snprintf(s, len, "knut://%s/", esc);
        free(esc);
        if (!s)
            return knut_error_set(err, KNUT_ENOMEM, "pipeline: out of memory");
        a->asset_prefix = s;
    }
    /* every dataset's URI is prefix + name: check the prefix's part once */
    char uri[1600], why[256];
    snprintf(uri, sizeof uri, "%sx", a->asset_prefix);
    if (knut_net_airflow_uri_check(uri, why, sizeof why) != 0)
        return knut_pipeline__error_at(err, KNUT_EINVAL,
                                       pos_of(p, knut_conf_get(n, "asset_prefix")
                                                     ? knut_conf_get(n, "asset_prefix")
                                                     : n),
                                       "airflow: asset_prefix: %s", why);
    p->airflow = a;
    return KNUT_OK;
}

static char *read_password(const knut_pipeline_airflow *a, knut_error *err)
{
    if (a->password_env) {
        const char *v = getenv(a->password_env);
        if (!v || !*v) {
            knut_error_set(err, KNUT_EINVAL, "airflow: the environment variable %s (the Airflow "
                           "password) is not set", a->password_env);
            return NULL;
        }
        char *s = strdup(v);
        if (!s)
            knut_error_set(err, KNUT_ENOMEM, "pipeline: out of memory");
        return s;
    }
    knut_buf b = KNUT_BUF_INIT;
    if (knut_file_read(a->password_file, AIRFLOW_PASSWORD_MAX, &b, err) != KNUT_OK) {
        knut_buf_reset(&b);
        knut_error_prefix(err, "airflow: password_file: ");
        return NULL;
    }
    while (b.len && (b.data[b.len - 1] == '\n' || b.data[b.len - 1] == '\r'))
        b.data[--b.len] = 0;
    char *s = b.len ? knut_buf_detach(&b, NULL) : NULL;
    if (!s)
        knut_error_set(err, KNUT_EINVAL, "airflow: password_file: %s is empty", a->password_file);
    knut_buf_reset(&b);
    return s;
}

knut_status knut_pipeline__assets_open(const knut_pipeline *p, knut_net_airflow **out,
                                       knut_error *err)
{
    *out = NULL;
    if (!p->airflow)
        return KNUT_OK;
    char *pw = read_password(p->airflow, err);
    if (!pw)
        return err ? err->code : KNUT_EINVAL;
    knut_net_airflow_options o = {0};
    o.url = p->airflow->url;
    o.user = p->airflow->user;
    o.password = pw;
    o.drain_ms = p->airflow->drain_ms;
    o.label_field = "dataset";
    o.seq_field = "run_id";
    knut_status st = knut_net_airflow_open(out, &o, err);
    knut_net_secret_free(pw);
    return st == KNUT_OK ? st : knut_error_prefix(err, "airflow: ");
}

typedef struct emit_ctx {
    const knut_pipeline__run *r;
    knut_net_airflow *sender;
} emit_ctx;

void knut_pipeline__asset_emit(const knut_pipeline *p, struct knut_net_airflow *sender,
                               const char *ds, int64_t rows, int64_t run_id, const char *source)
{
    const knut_pipeline_dataset *d = knut_pipeline_dataset_find(p, ds);
    if (!sender || !d || d->kind == KNUT_PIPELINE_TEMPORARY_VIEW)
        return; /* a temporary view is gone after the run: nothing to consume */
    knut_buf uri = KNUT_BUF_INIT;
    knut_buf_printf(&uri, "%s%s", p->airflow->asset_prefix, ds);
    json_t *x = json_pack("{s:s, s:s, s:o, s:s, s:I, s:s}", "pipeline", p->name, "dataset", ds,
                          "rows", rows >= 0 ? json_integer((json_int_t)rows) : json_null(),
                          "output_type", knut_pipeline_dataset_kind_name(d->kind), "run_id",
                          (json_int_t)run_id, "source", source);
    char *text = x ? json_dumps(x, JSON_COMPACT) : NULL;
    if (text && knut_buf_check(&uri, NULL) == KNUT_OK)
        knut_net_airflow_emit(sender, uri.data, ds, run_id, text);
    else
        KNUT_LOG(KNUT_LOG_ERROR, "assets", "asset event for %s dropped: out of memory", ds);
    free(text);
    json_decref(x);
    knut_buf_reset(&uri);
}

static knut_status emit_row(void *ctx, const knut_arrow_view *v, int64_t row, knut_error *err)
{
    (void)err;
    emit_ctx *c = ctx;
    int64_t len = 0;
    const char *name = knut_pipeline__col_str(v, 0, row, &len);
    char ds[512];
    if (!name || len <= 0 || (size_t)len >= sizeof ds)
        return KNUT_OK;
    memcpy(ds, name, (size_t)len);
    ds[len] = 0;
    knut_pipeline__asset_emit(c->r->p, c->sender, ds, knut_pipeline__col_i64(v, 1, row),
                              c->r->run_id, "knut-native");
    return KNUT_OK;
}

void knut_pipeline__assets_run(const knut_pipeline__run *r, knut_net_airflow *sender)
{
    if (!sender || r->dry)
        return;
    /* One row per dataset (at most one event each): a dataset counts when
     * a flow into it COMPLETED and none FAILED or was SKIPPED this run. */
    static const char sql[] =
        "SELECT dataset, sum(coalesce(TRY_CAST(json_extract_string(details, '$.rows_out') AS "
        "BIGINT), 0))::BIGINT FROM _knut.event_log WHERE run_id = $1::BIGINT AND event_type = "
        "'flow_progress' AND dataset IS NOT NULL GROUP BY dataset HAVING bool_or(status = "
        "'COMPLETED') AND NOT bool_or(status IN ('FAILED', 'SKIPPED')) ORDER BY dataset";
    char run[32];
    snprintf(run, sizeof run, "%lld", (long long)r->run_id);
    const char *binds[] = {run};
    emit_ctx c = {r, sender};
    knut_error err = KNUT_ERROR_INIT;
    if (knut_pipeline__query_each(r->conn, sql, binds, 1, emit_row, &c, &err) != KNUT_OK)
        KNUT_LOG(KNUT_LOG_ERROR, "assets", "no asset events for run %lld: %s",
                 (long long)r->run_id, err.message);
}
