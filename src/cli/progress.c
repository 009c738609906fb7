/*
 * The one progress line of the CLI (`knut load`, `knut sync`): on a
 * terminal, a line on stderr redrawn in place ("\r", clear to end of
 * line) at most every 100 ms: a bar when the total is known, the counts,
 * rows/s and an ETA. Log records on the same terminal go through
 * knut_cli_progress_log, which clears the line first, so a record never
 * lands in the middle of the bar; the bar comes back with the next update.
 * A mutex keeps the two apart: the signal watcher logs from its thread.
 */
#include "cli.h"

#include <pthread.h>
#include <string.h>

#define PROGRESS_EVERY_NS 100000000

static pthread_mutex_t progress_lock = PTHREAD_MUTEX_INITIALIZER;
static int line_shown; /* a progress line is on stderr (under the lock) */

void knut_cli_progress_draw(knut_cli_progress *p, const knut_cli_progress_line *l, int force)
{
    int64_t now = knut_clock_mono_ns();
    if (!force && p->last_ns && now - p->last_ns < PROGRESS_EVERY_NS)
        return;
    p->last_ns = now;
    double secs = l->secs;
    int64_t rows = l->rows >= 0 ? l->rows : l->done;
    double rate = secs > 0 ? (double)rows / secs : 0;
    char head[64] = "";
    char eta[32] = "";
    if (l->total > 0) {
        /* more may arrive while working: never past 100 % */
        int64_t total = l->total > l->done ? l->total : l->done;
        double frac = (double)l->done / (double)total;
        char bar[31];
        int fill = (int)(frac * 30);
        for (int i = 0; i < 30; i++)
            bar[i] = i < fill ? '#' : '.';
        bar[30] = 0;
        snprintf(head, sizeof head, "[%s] %3.0f%% ", bar, frac * 100);
        double per = secs > 0 ? (double)l->done / secs : 0;
        snprintf(eta, sizeof eta, " ETA %.0fs", per > 0 ? (double)(total - l->done) / per : 0);
    }
    char count[48];
    if (l->total > 0)
        snprintf(count, sizeof count, "%lld/%lld", (long long)l->done, (long long)l->total);
    else
        snprintf(count, sizeof count, "%lld", (long long)l->done);
    pthread_mutex_lock(&progress_lock);
    fprintf(stderr, "\r\033[K%s%s%s %s", l->prefix ? l->prefix : "", head, count, l->unit);
    if (l->rows >= 0)
        fprintf(stderr, " %lld rows", (long long)l->rows);
    fprintf(stderr, " %.0f rows/s%s%s%s", rate, eta, l->what ? " " : "", l->what ? l->what : "");
    fflush(stderr);
    line_shown = 1;
    pthread_mutex_unlock(&progress_lock);
}

void knut_cli_progress_end(knut_cli_progress *p, int keep)
{
    pthread_mutex_lock(&progress_lock);
    if (line_shown)
        fputs(keep ? "\n" : "\r\033[K", stderr);
    fflush(stderr);
    line_shown = 0;
    pthread_mutex_unlock(&progress_lock);
    p->last_ns = 0;
}

void knut_cli_progress_log(const knut_log_record *rec, void *ctx)
{
    (void)ctx;
    pthread_mutex_lock(&progress_lock);
    if (line_shown) {
        fputs("\r\033[K", stderr);
        line_shown = 0;
    }
    knut_log_sink_human(rec, stderr);
    pthread_mutex_unlock(&progress_lock);
}
