/*
 * Unit tests for the RFC 9562 UUIDs (src/core/uuid.c): the text form, the
 * version and variant bits, v7's timestamp, and no repeats.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "knut/core.h"

static void check_form(const char *u, char version)
{
    assert_int_equal(strlen(u), 36);
    for (int i = 0; i < 36; i++) {
        if (i == 8 || i == 13 || i == 18 || i == 23)
            assert_int_equal(u[i], '-');
        else
            assert_true(isxdigit((unsigned char)u[i]) && !isupper((unsigned char)u[i]));
    }
    assert_int_equal(u[14], version);
    assert_non_null(strchr("89ab", u[19])); /* the RFC variant */
}

static void test_core_uuid__v4_form(void **state)
{
    (void)state;
    char a[KNUT_UUID_LEN], b[KNUT_UUID_LEN];
    knut_uuid_v4(a);
    knut_uuid_v4(b);
    check_form(a, '4');
    check_form(b, '4');
    assert_string_not_equal(a, b);
}

static void test_core_uuid__v7_carries_the_time_and_sorts(void **state)
{
    (void)state;
    char a[KNUT_UUID_LEN], b[KNUT_UUID_LEN];
    int64_t before = knut_clock_wall_us() / 1000;
    knut_uuid_v7(a);
    knut_clock_sleep_ns(2000000); /* a later millisecond */
    knut_uuid_v7(b);
    int64_t after = knut_clock_wall_us() / 1000;
    check_form(a, '7');
    check_form(b, '7');
    char hex[13] = {0};
    memcpy(hex, a, 8);
    memcpy(hex + 8, a + 9, 4);
    int64_t ms = (int64_t)strtoll(hex, NULL, 16);
    assert_true(ms >= before && ms <= after);
    assert_true(strcmp(a, b) < 0); /* later ids sort after */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_core_uuid__v4_form),
        cmocka_unit_test(test_core_uuid__v7_carries_the_time_and_sorts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
