/*
 * The Spark Connect commands' shared pieces (spark_cli.h): a session from
 * the connection options and Ctrl-C interrupting the server's operation.
 */
#include "spark_cli.h"

#include <signal.h>
#include <stdio.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "knut/knut.h"

int knut_cli_spark_open(const knut_cli_spec *spec, const knut_cli_spark_conn *c,
                        const char *positional, knut_spark_session **out)
{
    *out = NULL;
    const char *url = c->connect ? c->connect : positional ? positional : getenv("SPARK_REMOTE");
    if (!url || !url[0])
        return knut_cli_args_missing(spec, "--connect URL (or $SPARK_REMOTE)");
    char *token = NULL;
    if (knut_cli_secret_read(spec->name, "--token-file", c->token_file, KNUT_CLI_SPARK_TOKEN_ENV,
                             &token) != 0)
        return KNUT_EXIT_FAIL;
    knut_spark_options o = KNUT_SPARK_OPTIONS_INIT;
    o.allow_insecure_token = c->allow_insecure;
    o.ca_file = c->ca_file;
    o.token = token;
    knut_error err = KNUT_ERROR_INIT;
    int rc = KNUT_EXIT_OK;
    if (knut_spark_session_new(out, url, &o, &err) != KNUT_OK) {
        fprintf(stderr, "knut %s: %s\n", spec->name, err.message);
        rc = KNUT_EXIT_FAIL;
    }
    knut_net_secret_free(token);
    return rc;
}

knut_status knut_cli_spark_report_interval(knut_spark_session *s, double secs, knut_error *err)
{
    char sql[96];
    snprintf(sql, sizeof sql, "SET spark.connect.progress.reportInterval=%lldms",
             (long long)(secs * 1000 + 0.5));
    struct ArrowArrayStream st = {0};
    knut_status rc = knut_spark_sql(s, sql, NULL, &st, err);
    int64_t n = 0;
    if (rc == KNUT_OK)
        rc = knut_arrow_stream_count_rows(&st, &n, err);
    knut_arrow_stream_release(&st);
    return rc;
}

size_t knut_cli_spark_stages_merge(knut_cli_spark_stages *t, const knut_spark_event *ev,
                                   int64_t now)
{
    size_t added = 0;
    for (size_t j = 0; j < t->n; j++)
        t->at[j].changed = 0;
    for (size_t i = 0; i < ev->nstages; i++) {
        const knut_spark_stage *in = &ev->stages[i];
        knut_cli_spark_stage_seen *s = NULL;
        for (size_t j = 0; j < t->n && !s; j++)
            if (t->at[j].s.stage_id == in->stage_id)
                s = &t->at[j];
        if (!s) {
            if (t->n == KNUT_CLI_SPARK_MAX_STAGES)
                continue;
            size_t at = t->n;
            while (at > 0 && t->at[at - 1].s.stage_id > in->stage_id)
                at--;
            memmove(&t->at[at + 1], &t->at[at], (t->n - at) * sizeof *s);
            t->n++;
            added++;
            s = &t->at[at];
            *s = (knut_cli_spark_stage_seen){.s = *in, .first_ns = now, .changed = 1};
        } else if (s->s.num_tasks == in->num_tasks &&
                   s->s.num_completed_tasks == in->num_completed_tasks &&
                   s->s.input_bytes_read == in->input_bytes_read && s->s.done == in->done) {
            continue;
        }
        s->s = *in;
        s->changed = 1;
        if (in->done && !s->end_ns)
            s->end_ns = now;
    }
    return added;
}

void knut_cli_spark_stages_end(knut_cli_spark_stages *t, int64_t now)
{
    for (size_t i = 0; i < t->n; i++) {
        knut_cli_spark_stage_seen *s = &t->at[i];
        s->changed = !s->s.done;
        if (s->s.done)
            continue;
        s->ended = 1;
        s->end_ns = now;
    }
}

knut_status knut_cli_spark_watched_sql(knut_spark_session *s, knut_cli_spark_stop *stop,
                                       double interval, const char *sql,
                                       knut_spark_event_fn fn, void *ctx,
                                       knut_spark_error_info *info,
                                       struct ArrowArrayStream *rows, int *watching,
                                       knut_error *err)
{
    knut_status rc = knut_cli_spark_report_interval(s, interval, err);
    stop->s = s;
    if (rc == KNUT_OK)
        rc = knut_cli_spark_stop_watch(stop, err);
    if (rc != KNUT_OK)
        return rc;
    *watching = 1;
    knut_spark_exec_options eo = KNUT_SPARK_EXEC_OPTIONS_INIT;
    eo.on_event = fn;
    eo.event_ctx = ctx;
    eo.operation_id_out = stop->op;
    eo.error_info = info;
    atomic_store(&stop->armed, 1); /* the id is chosen before the request is sent */
    return knut_spark_sql(s, sql, &eo, rows, err);
}

static void on_signal(int sig, void *arg)
{
    knut_cli_spark_stop *st = arg;
    if (sig == SIGHUP || !atomic_load(&st->armed))
        return;
    knut_error e = KNUT_ERROR_INIT;
    size_t n = 0;
    if (knut_spark_interrupt(st->s, st->op, &n, &e) != KNUT_OK)
        fprintf(stderr, "knut %s: interrupt: %s\n", st->cmd, e.message);
}

knut_status knut_cli_spark_stop_watch(knut_cli_spark_stop *st, knut_error *err)
{
    knut_status rc = knut_signal_install(err);
    return rc == KNUT_OK ? knut_signal_watch(on_signal, st, err) : rc;
}

/* [TYPE:]VALUE into *p; 0, or -1 after printing why. */
static int typed_value(const knut_cli_spec *spec, const char *opt, char *text,
                       knut_spark_param *p)
{
    static const char *const types[] = {"string:", "int:", "double:", "bool:"};
    int t = -1;
    for (int k = 0; k < 4 && t < 0; k++)
        if (strncmp(text, types[k], strlen(types[k])) == 0)
            t = k;
    const char *v = t < 0 ? text : text + strlen(types[t]);
    char *end = NULL;
    errno = 0;
    switch (t) {
    case -1:
    case 0:
        p->kind = KNUT_SPARK_PARAM_STRING;
        p->s = v;
        return 0;
    case 1:
        p->kind = KNUT_SPARK_PARAM_INT64;
        p->i = strtoll(v, &end, 10);
        if (*v && !*end && errno == 0)
            return 0;
        break;
    case 2:
        p->kind = KNUT_SPARK_PARAM_DOUBLE;
        p->d = strtod(v, &end);
        if (*v && !*end && errno == 0 && isfinite(p->d))
            return 0;
        break;
    default:
        p->kind = KNUT_SPARK_PARAM_BOOL;
        if (strcmp(v, "true") == 0 || strcmp(v, "false") == 0) {
            p->i = v[0] == 't';
            return 0;
        }
        break;
    }
    static const char *const want[] = {"", "an integer", "a finite number", "true or false"};
    knut_cli_args_error(spec, "%s value '%s': not %s", opt, text, want[t]);
    return -1;
}

int knut_cli_spark_params(const knut_cli_spec *spec, const knut_cli_strs *named,
                          const knut_cli_strs *pos, knut_spark_param *out, size_t *n)
{
    *n = 0;
    if (named->n && pos->n)
        return knut_cli_args_error(spec, "%s", "--param (:name) and --arg (?) cannot be mixed "
                                   "in one query");
    for (size_t i = 0; i < named->n; i++) {
        char *eq = strchr(named->v[i], '=');
        if (!eq || eq == named->v[i])
            return knut_cli_args_error(spec, "--param '%s': expected NAME=[TYPE:]VALUE",
                                       named->v[i]);
        *eq = 0; /* argv is writable: the name ends here */
        knut_spark_param *p = &out[(*n)++];
        *p = (knut_spark_param){.name = named->v[i]};
        if (typed_value(spec, "--param", eq + 1, p) != 0)
            return KNUT_EXIT_USAGE;
    }
    for (size_t i = 0; i < pos->n; i++) {
        knut_spark_param *p = &out[(*n)++];
        *p = (knut_spark_param){0};
        if (typed_value(spec, "--arg", pos->v[i], p) != 0)
            return KNUT_EXIT_USAGE;
    }
    return KNUT_EXIT_OK;
}
