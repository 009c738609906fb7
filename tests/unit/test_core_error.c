/*
 * Unit tests for status codes and the caller-owned error detail
 * (src/core/error.c): texts, formatting, truncation, one-line messages,
 * prefixes and the NULL-err convention.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "knut/core.h"

static void test_core_error__strerror_covers_every_code(void **state)
{
    (void)state;
#define KNUT_X_CHECK(name, val, text) assert_string_equal(knut_strerror(name), text);
    KNUT_STATUS_MAP(KNUT_X_CHECK)
#undef KNUT_X_CHECK
    assert_string_equal(knut_strerror((knut_status)-999), "unknown status");
    assert_int_equal(KNUT_OK, 0);
    assert_true(KNUT_EOF < 0);
}

static void test_core_error__set_formats_and_returns_code(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    knut_status st = knut_error_set(&err, KNUT_ENOTFOUND, "%s:%d: no table '%s'", "a.yml", 3, "t");
    assert_int_equal(st, KNUT_ENOTFOUND);
    assert_int_equal(err.code, KNUT_ENOTFOUND);
    assert_string_equal(err.message, "a.yml:3: no table 't'");
    knut_error_clear(&err);
    assert_int_equal(err.code, KNUT_OK);
    assert_string_equal(err.message, "");
}

static void test_core_error__null_err_is_allowed(void **state)
{
    (void)state;
    assert_int_equal(knut_error_set(NULL, KNUT_EIO, "x %d", 1), KNUT_EIO);
    knut_error_clear(NULL);
    assert_int_equal(knut_error_prefix(NULL, "p: "), KNUT_ERROR);
}

static void test_core_error__long_message_is_truncated(void **state)
{
    (void)state;
    char big[3 * KNUT_ERROR_MSG_MAX];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    knut_error err = KNUT_ERROR_INIT;
    knut_error_set(&err, KNUT_ETOOBIG, "%s", big);
    assert_int_equal(strlen(err.message), KNUT_ERROR_MSG_MAX - 1);
}

static void test_core_error__message_stays_on_one_line(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    knut_error_set(&err, KNUT_EPEER, "peer said:\nERR bad\r\nthing");
    assert_null(strchr(err.message, '\n'));
    assert_null(strchr(err.message, '\r'));
    assert_string_equal(err.message, "peer said: ERR bad  thing");
}

static void test_core_error__prefix_adds_context(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    knut_error_set(&err, KNUT_EPARSE, "3:7: bad value");
    assert_int_equal(knut_error_prefix(&err, "%s:", "conf.yml"), KNUT_EPARSE);
    assert_string_equal(err.message, "conf.yml:3:7: bad value");

    /* A prefix on a full message keeps the prefix and cuts the tail. */
    char big[KNUT_ERROR_MSG_MAX + 10];
    memset(big, 'y', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    knut_error_set(&err, KNUT_EIO, "%s", big);
    knut_error_prefix(&err, "file: ");
    assert_int_equal(strlen(err.message), KNUT_ERROR_MSG_MAX - 1);
    assert_memory_equal(err.message, "file: yyy", 9);
}

static knut_status checked(const char *p, knut_error *err)
{
    KNUT_ASSERT_ARG(err, p != NULL);
    return KNUT_OK;
}

static void test_core_error__assert_arg_sets_einval(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(checked("x", &err), KNUT_OK);
    assert_int_equal(checked(NULL, &err), KNUT_EINVAL);
    assert_int_equal(err.code, KNUT_EINVAL);
    assert_non_null(strstr(err.message, "checked"));
    assert_non_null(strstr(err.message, "p != NULL"));
}

static void test_core_error__set_at_records_position_as_data(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_error_set_at(&err, KNUT_EPARSE, "a.yml", 3, 7, "bad %s", "key"),
                     KNUT_EPARSE);
    assert_string_equal(err.message, "a.yml:3:7: bad key");
    assert_int_equal(err.line, 3);
    assert_int_equal(err.col, 7);
    assert_string_equal(err.message + err.text_at, "bad key");

    /* A prefix keeps the innermost position and moves the text start. */
    knut_error_prefix(&err, "g.yml:1:2: vertices[0]: ");
    assert_int_equal(err.line, 3);
    assert_string_equal(err.message + err.text_at, "bad key");

    /* No position: the file prefix only, line and col 0. */
    knut_error_set_at(&err, KNUT_EIO, "b.yml", 0, 5, "cannot read");
    assert_string_equal(err.message, "b.yml: cannot read");
    assert_int_equal(err.line, 0);
    assert_int_equal(err.col, 0);
    assert_string_equal(err.message + err.text_at, "cannot read");

    /* A plain set resets them; so does clear. */
    knut_error_set_at(&err, KNUT_EPARSE, "a.yml", 3, 7, "x");
    knut_error_set(&err, KNUT_EIO, "other");
    assert_int_equal(err.line + err.col + err.text_at, 0);
    knut_error_set_at(&err, KNUT_EPARSE, "a.yml", 3, 7, "x");
    knut_error_clear(&err);
    assert_int_equal(err.line + err.col + err.text_at, 0);

    /* A file name filling the message leaves text_at at its end. */
    char big[KNUT_ERROR_MSG_MAX + 10];
    memset(big, 'f', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    knut_error_set_at(&err, KNUT_EPARSE, big, 1, 1, "text");
    assert_int_equal((size_t)err.text_at, strlen(err.message));
    assert_int_equal(knut_error_set_at(NULL, KNUT_EIO, "f", 1, 1, "x"), KNUT_EIO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_core_error__strerror_covers_every_code),
        cmocka_unit_test(test_core_error__set_formats_and_returns_code),
        cmocka_unit_test(test_core_error__null_err_is_allowed),
        cmocka_unit_test(test_core_error__long_message_is_truncated),
        cmocka_unit_test(test_core_error__message_stays_on_one_line),
        cmocka_unit_test(test_core_error__prefix_adds_context),
        cmocka_unit_test(test_core_error__assert_arg_sets_einval),
        cmocka_unit_test(test_core_error__set_at_records_position_as_data),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
