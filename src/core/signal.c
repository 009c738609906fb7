/*
 * SIGINT/SIGTERM handling for long-running commands: the handler only
 * records that a stop was asked for, and loops (sync rounds, servers,
 * knut_clock_sleep_ns) poll the flag to finish their round and exit
 * cleanly. A second signal of the same kind takes the default action, so a
 * shutdown that hangs can still be interrupted from the terminal. SIGHUP
 * (knut_signal_install_reload) sets a reload flag instead and stays armed.
 * A watcher thread (knut_signal_watch) hears of each signal through a
 * self-pipe, the only way a handler can wake a thread safely, so it can
 * log that the signal was received while the round is still running.
 */
#include "knut/core.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

/*
 * The flags are written by the handler and by other threads (request_stop),
 * so they are lock-free atomics: C11 allows a handler to touch those, and
 * unlike a plain volatile sig_atomic_t they are also free of data races
 * between threads.
 */
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "signal flags need lock-free atomic int");
static volatile atomic_int stop_flag;
static volatile atomic_int last_signal;
static volatile atomic_int reload_flag;
static atomic_int installed;
/* The watcher's self-pipe write end; -1 when no watcher runs. */
static volatile atomic_int watch_fd = -1;

static const int handled_signals[] = {SIGINT, SIGTERM};

/* Tells the watcher (write(2) is async-signal-safe; the pipe is
 * non-blocking, so a full pipe drops the note, never the flag). */
static void notify(int sig)
{
    int fd = atomic_load(&watch_fd);
    unsigned char b = (unsigned char)sig;
    if (fd >= 0) {
        int saved = errno; /* the interrupted code may be reading errno */
        (void)!write(fd, &b, 1);
        errno = saved;
    }
}

static void on_signal(int sig)
{
    atomic_store(&last_signal, sig);
    atomic_store(&stop_flag, 1);
    notify(sig);
}

static void on_reload(int sig)
{
    atomic_store(&reload_flag, 1);
    notify(sig);
}

static int arm(int sig)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    /* No SA_RESTART: a blocking call should return EINTR so its caller can
     * notice the stop. SA_RESETHAND: the next signal terminates. */
    sa.sa_flags = SA_RESETHAND;
    return sigaction(sig, &sa, NULL);
}

knut_status knut_signal_install(knut_error *err)
{
    for (size_t i = 0; i < sizeof handled_signals / sizeof handled_signals[0]; i++) {
        if (arm(handled_signals[i]) != 0)
            return knut_error_set(err, KNUT_ERROR, "signal: cannot install handler for %s: %s",
                                  handled_signals[i] == SIGINT ? "SIGINT" : "SIGTERM",
                                  strerror(errno));
    }
    atomic_store(&installed, 1);
    return KNUT_OK;
}

int knut_signal_stop_requested(void)
{
    return atomic_load(&stop_flag) != 0;
}

int knut_signal_last(void)
{
    return atomic_load(&last_signal);
}

void knut_signal_request_stop(void)
{
    atomic_store(&stop_flag, 1);
}

void knut_signal_reset(void)
{
    atomic_store(&last_signal, 0);
    atomic_store(&stop_flag, 0);
    atomic_store(&reload_flag, 0);
    /* A handled signal reset its handler (SA_RESETHAND): arm it again. */
    if (atomic_load(&installed))
        for (size_t i = 0; i < sizeof handled_signals / sizeof handled_signals[0]; i++)
            (void)arm(handled_signals[i]);
}

knut_status knut_signal_install_reload(knut_error *err)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_reload;
    sigemptyset(&sa.sa_mask);
    /* stays armed: every SIGHUP asks for one more reload */
    if (sigaction(SIGHUP, &sa, NULL) != 0)
        return knut_error_set(err, KNUT_ERROR, "signal: cannot install handler for SIGHUP: %s",
                              strerror(errno));
    return KNUT_OK;
}

int knut_signal_reload_requested(void)
{
    return atomic_load(&reload_flag) != 0;
}

int knut_signal_reload_take(void)
{
    return atomic_exchange(&reload_flag, 0) != 0;
}

/* ---- the watcher thread ---- */

static struct {
    pthread_t thread;
    int rd; /* the pipe's read end */
    int running;
    knut_signal_watch_fn fn;
    void *ctx;
} watcher = {.rd = -1};

static void *watch_main(void *arg)
{
    (void)arg;
    unsigned char b;
    for (;;) {
        ssize_t n = read(watcher.rd, &b, 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0 || b == 0) /* closed, or the stop byte of unwatch */
            break;
        watcher.fn(b, watcher.ctx);
    }
    return NULL;
}

knut_status knut_signal_watch(knut_signal_watch_fn fn, void *ctx, knut_error *err)
{
    KNUT_ASSERT_ARG(err, fn);
    if (watcher.running)
        return knut_error_set(err, KNUT_EINVAL, "signal: a watcher already runs");
    int p[2];
    if (pipe(p) != 0)
        return knut_error_set(err, KNUT_ERROR, "signal: pipe: %s", strerror(errno));
    (void)fcntl(p[0], F_SETFD, FD_CLOEXEC);
    (void)fcntl(p[1], F_SETFD, FD_CLOEXEC);
    (void)fcntl(p[1], F_SETFL, O_NONBLOCK); /* the handler never blocks */
    watcher.rd = p[0];
    watcher.fn = fn;
    watcher.ctx = ctx;
    atomic_store(&watch_fd, p[1]);
    int rc = pthread_create(&watcher.thread, NULL, watch_main, NULL);
    if (rc != 0) {
        atomic_store(&watch_fd, -1);
        close(p[0]);
        close(p[1]);
        watcher.rd = -1;
        return knut_error_set(err, KNUT_ERROR, "signal: watcher thread: %s", strerror(rc));
    }
    watcher.running = 1;
    return KNUT_OK;
}

void knut_signal_unwatch(void)
{
    if (!watcher.running)
        return;
    int fd = atomic_exchange(&watch_fd, -1); /* no handler writes after this */
    unsigned char stop = 0;
    while (write(fd, &stop, 1) < 0 && errno == EINTR)
        ;
    pthread_join(watcher.thread, NULL);
    /* A handler on another thread may have loaded fd just before the
     * exchange and write to it any moment now: closing it would let that
     * byte land in whatever file reuses the number next (the metrics file
     * is written right after). Point it at /dev/null instead and keep it:
     * one descriptor for the life of the process. */
    int null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null_fd >= 0) {
        (void)dup2(null_fd, fd);
        close(null_fd);
    }
    close(watcher.rd);
    watcher.rd = -1;
    watcher.running = 0;
}
