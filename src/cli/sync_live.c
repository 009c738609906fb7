/*
 * What a running `knut sync` shows and hears (docs/operations.md "Signals
 * and reload"): its logging (info by default; on a terminal in the human
 * format through the progress line's sink), the progress line of a long
 * round, a record as soon as a stop or reload signal arrives (from the
 * signal watcher thread, while the round is still running), and the
 * reload itself between rounds: the config file read again and handed to
 * knut_sync_reload, or, when it does not load or fit, logged and the old
 * one kept.
 */
#include "cli.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "knut/sync.h"

/* A round shows the progress line once it has run this long (ms), so a
 * short round does not flash one; KNUT_SYNC_PROGRESS_AFTER_MS overrides. */
#define SYNC_PROGRESS_AFTER_MS 2000

int knut_cli_sync_log_setup(void)
{
    knut_log_level level = KNUT_LOG_INFO; /* the per-table records are the job's output */
    const char *env = getenv("KNUT_LOG");
    if (env && knut_log_level_parse(env, &level) != KNUT_OK)
        level = KNUT_LOG_WARN; /* main.c said it ignores it */
    const char *fmt = getenv("KNUT_LOG_FORMAT");
    int tty = isatty(STDERR_FILENO);
    int json = fmt ? strcmp(fmt, "json") == 0 : !tty;
    knut_log_set(level, json ? knut_log_sink_json : tty ? knut_cli_progress_log
                                                        : knut_log_sink_human,
                 stderr);
    return tty && !json;
}

void knut_cli_sync_live_init(knut_cli_sync_live *l, const char *config, knut_sync_config *cfg,
                             const knut_sync_options *so)
{
    memset(l, 0, sizeof *l);
    l->config = config;
    l->cfg = cfg;
    l->so = so;
    l->after_ns = (int64_t)SYNC_PROGRESS_AFTER_MS * 1000000;
    const char *e = getenv("KNUT_SYNC_PROGRESS_AFTER_MS");
    char *end = NULL;
    long long ms = e && *e ? strtoll(e, &end, 10) : -1;
    if (e && *e && end && !*end && ms >= 0)
        l->after_ns = ms * 1000000;
}

void knut_cli_sync_progress(const knut_sync_progress *p, void *ctx)
{
    knut_cli_sync_live *l = ctx;
    if (p->done) {
        knut_cli_progress_end(&l->bar, 0); /* the round's log record says the rest */
        return;
    }
    if (p->elapsed_ns < l->after_ns)
        return;
    char prefix[48];
    snprintf(prefix, sizeof prefix, "round %lld: ", (long long)p->round);
    char what[160] = "";
    if (p->table)
        snprintf(what, sizeof what, "(%lld committed; table %s)", (long long)p->files_done,
                 p->table);
    knut_cli_progress_line line = {prefix, p->files, 0, "files read", p->rows,
                                   (double)p->elapsed_ns / 1e9, what};
    knut_cli_progress_draw(&l->bar, &line, 0);
}

void knut_cli_sync_on_signal(int sig, void *ctx)
{
    (void)ctx;
    if (sig == SIGHUP) {
        KNUT_LOG(KNUT_LOG_INFO, "sync",
                 "reload requested (SIGHUP): the config is read again before the next round");
        return;
    }
    const char *name = sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "signal";
    knut_log_emit(KNUT_LOG_WARN, "sync", (knut_log_field[]){KNUT_LF_STR("signal", name)}, 1,
                  "stop requested: finishing the round, %s stops now",
                  sig == SIGINT ? "second Ctrl-C" : "a second signal");
}

void knut_cli_sync_reload(knut_sync *s, void *ctx)
{
    knut_cli_sync_live *l = ctx;
    knut_error err = KNUT_ERROR_INIT;
    knut_sync_config *cfg = NULL;
    knut_status st = knut_sync_config_load(&cfg, l->config, &err);
    if (st == KNUT_OK)
        st = knut_sync_reload(s, cfg, l->so, &err);
    if (st != KNUT_OK) {
        knut_log_emit(KNUT_LOG_ERROR, "sync",
                      (knut_log_field[]){KNUT_LF_STR("config", l->config),
                                         KNUT_LF_STR("error", err.message)},
                      2, "config reload failed; the old config stays in use");
        knut_sync_config_free(cfg);
        return;
    }
    knut_sync_config_free(l->cfg); /* the sync no longer uses it */
    l->cfg = cfg;
    knut_log_emit(KNUT_LOG_INFO, "sync",
                  (knut_log_field[]){KNUT_LF_STR("config", l->config),
                                     KNUT_LF_INT("tables", (int64_t)cfg->n_tables)},
                  2, "config reloaded");
}
