/*
 * Unit tests for clocks, the interruptible sleep and the stop-flag signal
 * handlers (src/core/clock.c, src/core/signal.c). Timing checks only bound
 * how late a wake-up may be, with wide margins, never how fast code runs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "knut/core.h"

#define NS_PER_S 1000000000LL

static int reset_flags(void **state)
{
    (void)state;
    knut_signal_reset();
    return 0;
}

static void test_core_clock__clocks_move_forward(void **state)
{
    (void)state;
    int64_t a = knut_clock_mono_ns();
    int64_t b = knut_clock_mono_ns();
    assert_true(b >= a);
    int64_t wall = knut_clock_wall_us();
    int64_t t = (int64_t)time(NULL) * 1000000LL;
    assert_true(wall > t - 5000000LL && wall < t + 5000000LL);
}

static void test_core_clock__sleep_sleeps(void **state)
{
    (void)state;
    int64_t t0 = knut_clock_mono_ns();
    assert_int_equal(knut_clock_sleep_ns(25000000LL), KNUT_OK); /* 25 ms */
    assert_true(knut_clock_mono_ns() - t0 >= 25000000LL);
    assert_int_equal(knut_clock_sleep_ns(0), KNUT_OK);
    assert_int_equal(knut_clock_sleep_ns(-5), KNUT_OK);
}

static void test_core_signal__sigterm_sets_flag(void **state)
{
    (void)state;
    assert_int_equal(knut_signal_install(NULL), KNUT_OK);
    assert_false(knut_signal_stop_requested());
    assert_int_equal(knut_signal_last(), 0);
    assert_int_equal(raise(SIGTERM), 0);
    assert_true(knut_signal_stop_requested());
    assert_int_equal(knut_signal_last(), SIGTERM);
    /* A stop already requested cancels a sleep at once. */
    assert_int_equal(knut_clock_sleep_ns(60 * NS_PER_S), KNUT_ECANCELLED);
    knut_signal_reset();
    assert_false(knut_signal_stop_requested());
    assert_int_equal(knut_signal_last(), 0);
    /* reset re-arms the handler, so a second SIGINT is caught too. */
    assert_int_equal(raise(SIGINT), 0);
    assert_int_equal(knut_signal_last(), SIGINT);
}

static void *stop_later(void *arg)
{
    (void)arg;
    struct timespec ts = {0, 50000000L}; /* 50 ms */
    nanosleep(&ts, NULL);
    knut_signal_request_stop();
    return NULL;
}

static void test_core_signal__stop_wakes_a_long_sleep(void **state)
{
    (void)state;
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, stop_later, NULL), 0);
    int64_t t0 = knut_clock_mono_ns();
    knut_status st = knut_clock_sleep_ns(120 * NS_PER_S);
    int64_t slept = knut_clock_mono_ns() - t0;
    pthread_join(th, NULL);
    assert_int_equal(st, KNUT_ECANCELLED);
    assert_true(slept < 60 * NS_PER_S); /* woke long before the 120 s */
    assert_true(knut_signal_stop_requested());
    assert_int_equal(knut_signal_last(), 0); /* no signal was involved */
}

static void test_core_signal__second_signal_terminates(void **state)
{
    (void)state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (knut_signal_install(NULL) != KNUT_OK)
            _exit(3);
        raise(SIGINT);
        if (!knut_signal_stop_requested())
            _exit(4);
        raise(SIGINT); /* the handler was one-shot: this one kills */
        _exit(5);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGINT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_core_clock__clocks_move_forward),
        cmocka_unit_test_setup_teardown(test_core_clock__sleep_sleeps, reset_flags, reset_flags),
        cmocka_unit_test_setup_teardown(test_core_signal__sigterm_sets_flag, reset_flags,
                                        reset_flags),
        cmocka_unit_test_setup_teardown(test_core_signal__stop_wakes_a_long_sleep, reset_flags,
                                        reset_flags),
        cmocka_unit_test(test_core_signal__second_signal_terminates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
