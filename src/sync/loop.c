/*
 * The round loop (knut_sync_run): rounds until a stop is asked for,
 * waiting between them, doubling the wait after a round without progress
 * (up to max_backoff), woken early through inotify when a table folder
 * changes, and reading the config again after a SIGHUP (between rounds,
 * never inside one: the caller's reload callback, knut_sync_reload).
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sync_int.h"

int64_t knut_sync_backoff_next(int64_t wait, int64_t interval, int64_t max_backoff, int progress)
{
    if (progress || wait < interval)
        return interval;
    if (max_backoff < interval)
        max_backoff = interval;
    return wait > max_backoff / 2 ? max_backoff : wait * 2;
}

/* inotify on every table folder (a glob's folder); -1 when unavailable. */
static int watch_open(const knut_sync_config *cfg)
{
    int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    int n = 0;
    for (size_t i = 0; fd >= 0 && i < cfg->n_tables; i++) {
        struct stat sb;
        const char *p = cfg->tables[i].path;
        if (cfg->tables[i].spark)
            continue; /* a Spark table has no folder: polled each interval */
        char *dir = stat(p, &sb) == 0 && S_ISDIR(sb.st_mode) ? strdup(p) : knut_sync__dirname(p);
        /* a full table's snapshot also changes when a file goes away */
        uint32_t mask = IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE;
        if (cfg->tables[i].mode == KNUT_SYNC_MODE_FULL)
            mask |= IN_DELETE | IN_MOVED_FROM;
        if (dir && !strpbrk(dir, "*?[") && inotify_add_watch(fd, dir, mask) >= 0)
            n++;
        free(dir);
    }
    if (fd >= 0 && n == 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* 1 when base is the base name of path (NULL: none). */
static int is_base(const char *path, const char *base)
{
    if (!path)
        return 0;
    const char *b = strrchr(path, '/');
    return strcmp(b ? b + 1 : path, base) == 0;
}

/* Reads every queued inotify event; 1 if one names a file a round could
 * take (a temporary name being written, `.x.tmp`, wakes nobody, nor do the
 * files the sync itself writes: its ledger file and status snapshot, which
 * may sit in a table's folder). */
static int drain_events(int fd, const knut_sync *s)
{
    char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    int relevant = 0;
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) {
        for (char *p = buf; p < buf + n;) {
            const struct inotify_event *ev = (const struct inotify_event *)p;
            int own = ev->len > 0 &&
                      (is_base(s->status_file, ev->name) || is_base(s->ledger.file, ev->name));
            if (ev->len == 0 || (!knut_sync__name_skipped(ev->name) && !own) ||
                (ev->mask & IN_Q_OVERFLOW))
                relevant = 1;
            p += sizeof *ev + ev->len;
        }
    }
    return relevant;
}

/*
 * Waits up to ns; returns early on a stop request or when a file lands.
 * A renamed-in or closed file is complete, so the round starts at once,
 * except that the folder must first be quiet for SYNC_SETTLE_NS (capped at
 * SYNC_SETTLE_MAX_NS): a burst of files then lands in one round, not one
 * round each, at the cost of a few ms of latency for a lone file.
 */
#define SYNC_SETTLE_NS ((int64_t)5 * 1000000)
#define SYNC_SETTLE_MAX_NS ((int64_t)50 * 1000000)

/* 1 when the wait should end early: a stop, or (reload: the loop has a
 * reload callback) a reload to do. */
static int wake(int reload)
{
    return knut_signal_stop_requested() || (reload && knut_signal_reload_requested());
}

static void wait_round(const knut_sync *s, int fd, int64_t ns, int reload)
{
    int64_t end = knut_clock_mono_ns() + ns;
    if (fd < 0) {
        while (!wake(reload) && knut_clock_mono_ns() < end) {
            int64_t left = end - knut_clock_mono_ns();
            knut_clock_sleep_ns(left > 200000000 ? 200000000 : left);
        }
        return;
    }
    while (!wake(reload)) {
        int64_t left = end - knut_clock_mono_ns();
        if (left <= 0)
            return;
        struct pollfd p = {fd, POLLIN, 0};
        int ms = left > 200000000 ? 200 : (int)(left / 1000000) + 1;
        if (poll(&p, 1, ms) > 0 && drain_events(fd, s))
            break;
    }
    int64_t settle_end = knut_clock_mono_ns() + SYNC_SETTLE_MAX_NS;
    while (!wake(reload) && knut_clock_mono_ns() < settle_end) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, (int)(SYNC_SETTLE_NS / 1000000)) <= 0)
            return; /* quiet */
        drain_events(fd, s);
    }
}

knut_status knut_sync_run(knut_sync *s, const knut_sync_run_options *o, int64_t *errors,
                          knut_error *err)
{
    KNUT_ASSERT_ARG(err, s);
    KNUT_CHECK_VERSION(o, KNUT_SYNC_RUN_OPTIONS_VERSION, err);
    knut_sync_run_options def = KNUT_SYNC_RUN_OPTIONS_INIT;
    if (!o)
        o = &def;
    int64_t interval = o->interval_ns > 0 ? o->interval_ns : (int64_t)10 * 1000000000;
    int64_t max_backoff = o->max_backoff_ns > 0 ? o->max_backoff_ns : interval * 10;
    int64_t wait = interval, bad = 0;
    int fd = o->once ? -1 : watch_open(s->cfg);
    knut_status st = KNUT_OK;
    s->idle_log_ns = o->once ? 0 : interval; /* round.c: idle rounds log once per interval */
    while (!knut_signal_stop_requested()) {
        if (!o->once && o->reload && knut_signal_reload_take()) {
            const knut_sync_config *was = s->cfg;
            o->reload(s, o->reload_ctx);
            if (s->cfg != was) { /* the tables' folders may have changed */
                if (fd >= 0)
                    close(fd);
                fd = watch_open(s->cfg);
            }
            if (knut_signal_stop_requested())
                break;
        }
        knut_sync_round_stats rs;
        st = knut_sync_round(s, &rs, err);
        if (st != KNUT_OK)
            break;
        if (rs.files_failed || rs.tables_failed)
            bad++;
        if (o->once || knut_signal_stop_requested())
            break;
        wait = knut_sync_backoff_next(wait, interval, max_backoff, rs.files_done > 0);
        KNUT_LOG(KNUT_LOG_DEBUG, SYNC_LOG, "next round in %.3f s", (double)wait / 1e9);
        wait_round(s, fd, wait, o->reload != NULL);
    }
    if (fd >= 0)
        close(fd);
    if (errors)
        *errors = bad;
    return st;
}
