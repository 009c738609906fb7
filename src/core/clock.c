/*
 * Clocks and the interruptible sleep. The monotonic clock measures
 * intervals (timeouts, backoff, round durations); the wall clock only
 * stamps records. Sleeping checks the stop flag often, so a long backoff
 * never delays a clean shutdown by more than one slice.
 */
#include "knut/core.h"

#include <errno.h>
#include <time.h>

/* Longest uninterrupted nap: bounds how late a stop request from another
 * thread is noticed (a signal to this thread ends nanosleep at once). */
#define CLOCK_SLICE_NS 10000000LL

int64_t knut_clock_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int64_t knut_clock_wall_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

knut_status knut_clock_sleep_ns(int64_t ns)
{
    if (knut_signal_stop_requested())
        return KNUT_ECANCELLED;
    if (ns <= 0)
        return KNUT_OK;
    int64_t now = knut_clock_mono_ns();
    /* Saturate rather than overflow for "sleep forever" style callers. */
    int64_t deadline = ns > INT64_MAX - now ? INT64_MAX : now + ns;
    while (now < deadline) {
        int64_t left = deadline - now;
        int64_t nap = left < CLOCK_SLICE_NS ? left : CLOCK_SLICE_NS;
        struct timespec ts = {(time_t)(nap / 1000000000LL), (long)(nap % 1000000000LL)};
        /* EINTR is expected (that is how a signal wakes us): loop and check. */
        (void)nanosleep(&ts, NULL);
        if (knut_signal_stop_requested())
            return KNUT_ECANCELLED;
        now = knut_clock_mono_ns();
    }
    return KNUT_OK;
}
