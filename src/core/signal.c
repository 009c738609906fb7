/*
 * SIGINT/SIGTERM handling for long-running commands: the handler only
 * records that a stop was asked for, and loops (sync rounds, servers,
 * knut_clock_sleep_ns) poll the flag to finish their round and exit
 * cleanly. A second signal of the same kind takes the default action, so a
 * shutdown that hangs can still be interrupted from the terminal.
 */
#include "knut/core.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>

/*
 * The flags are written by the handler and by other threads (request_stop),
 * so they are lock-free atomics: C11 allows a handler to touch those, and
 * unlike a plain volatile sig_atomic_t they are also free of data races
 * between threads.
 */
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "signal flags need lock-free atomic int");
static volatile atomic_int stop_flag;
static volatile atomic_int last_signal;
static atomic_int installed;

static const int handled_signals[] = {SIGINT, SIGTERM};

static void on_signal(int sig)
{
    atomic_store(&last_signal, sig);
    atomic_store(&stop_flag, 1);
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
    /* A handled signal reset its handler (SA_RESETHAND): arm it again. */
    if (atomic_load(&installed))
        for (size_t i = 0; i < sizeof handled_signals / sizeof handled_signals[0]; i++)
            (void)arm(handled_signals[i]);
}
