/*
 * core_signal: the stop flag and the interruptible sleep. After
 * knut_signal_install, SIGINT and SIGTERM only set a flag; a long-running
 * loop polls knut_signal_stop_requested (or sleeps with knut_clock_sleep_ns,
 * which returns KNUT_ECANCELLED early) and finishes its round cleanly. The
 * handler is one-shot: a second SIGINT would terminate the process, until
 * knut_signal_reset re-arms it. Intervals are measured on the monotonic clock.
 */
#include <signal.h>
#include <stdio.h>

#include <knut/core.h>

int main(void)
{
    knut_error err = KNUT_ERROR_INIT;
    if (knut_signal_install(&err) != KNUT_OK) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    int64_t t0 = knut_clock_mono_ns();
    knut_status st = knut_clock_sleep_ns(20 * 1000000LL); /* 20 ms, nobody stops us */
    int64_t ms = (knut_clock_mono_ns() - t0) / 1000000;
    printf("sleep 20 ms: %s, took >= 20 ms: %d\n", knut_strerror(st), ms >= 20);

    raise(SIGINT); /* as if Ctrl-C were pressed: only the flag is set */
    printf("stop requested: %d, signal %d (SIGINT is %d)\n", knut_signal_stop_requested(),
           knut_signal_last(), SIGINT);
    t0 = knut_clock_mono_ns();
    st = knut_clock_sleep_ns(60 * 1000000000LL); /* 60 s, but a stop is pending */
    ms = (knut_clock_mono_ns() - t0) / 1000000;
    printf("sleep 60 s: %s, returned within 1 s: %d\n", knut_strerror(st), ms < 1000);

    knut_signal_reset(); /* clears the flags and re-arms the one-shot handlers */
    printf("after reset: stop requested %d, last signal %d\n", knut_signal_stop_requested(),
           knut_signal_last());
    printf("wall clock is after 2020: %d\n", knut_clock_wall_us() > 1577836800LL * 1000000);
    return 0;
}
