/*
 * Unit tests for knut_buf (src/core/buf.c): growth, the hard cap, the
 * sticky error, printf, detach, and JSON string escaping checked by
 * parsing the output back with jansson.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "knut/core.h"

static void test_core_buf__append_keeps_nul_and_length(void **state)
{
    (void)state;
    knut_buf b = KNUT_BUF_INIT;
    assert_int_equal(knut_buf_puts(&b, "abc"), KNUT_OK);
    assert_int_equal(knut_buf_putc(&b, '-'), KNUT_OK);
    assert_int_equal(knut_buf_append(&b, "xyz", 2), KNUT_OK);
    assert_int_equal(b.len, 6);
    assert_string_equal(b.data, "abc-xy");
    assert_true(b.cap > b.len);
    knut_buf_clear(&b);
    assert_int_equal(b.len, 0);
    assert_string_equal(b.data, "");
    knut_buf_reset(&b);
    assert_null(b.data);
    knut_buf_reset(&b); /* twice is fine */
    knut_buf_reset(NULL);
}

static void test_core_buf__printf_grows(void **state)
{
    (void)state;
    knut_buf b;
    knut_buf_init(&b, 0);
    for (int i = 0; i < 1000; i++)
        knut_buf_printf(&b, "%d,", i);
    assert_int_equal(knut_buf_check(&b, NULL), KNUT_OK);
    assert_memory_equal(b.data, "0,1,2,", 6);
    assert_int_equal(b.len, strlen(b.data));
    assert_non_null(strstr(b.data, ",998,999,"));
    /* One long printf larger than the current allocation. */
    char big[5000];
    memset(big, 'q', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    size_t before = b.len;
    assert_int_equal(knut_buf_printf(&b, "[%s]", big), KNUT_OK);
    assert_int_equal(b.len, before + sizeof big + 1);
    assert_int_equal(b.data[b.len - 1], ']');
    knut_buf_reset(&b);
}

static void test_core_buf__cap_is_exact_and_sticky(void **state)
{
    (void)state;
    knut_buf b;
    knut_buf_init(&b, 10);
    assert_int_equal(knut_buf_puts(&b, "0123456789"), KNUT_OK); /* exactly the cap */
    assert_int_equal(knut_buf_putc(&b, 'x'), KNUT_ETOOBIG);
    assert_int_equal(b.len, 10);
    assert_string_equal(b.data, "0123456789");
    /* Sticky: even a tiny append that would fit elsewhere is refused now. */
    assert_int_equal(knut_buf_append(&b, "", 0), KNUT_ETOOBIG);
    assert_int_equal(knut_buf_printf(&b, "%d", 1), KNUT_ETOOBIG);
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_buf_check(&b, &err), KNUT_ETOOBIG);
    assert_non_null(strstr(err.message, "10-byte limit"));
    /* detach refuses a buffer in error and resets it. */
    size_t len = 99;
    assert_null(knut_buf_detach(&b, &len));
    assert_int_equal(len, 0);
    assert_null(b.data);
    assert_int_equal(b.max, 10); /* the cap survives a reset */
    assert_int_equal(b.error, KNUT_OK);
    knut_buf_reset(&b);
}

static void test_core_buf__printf_over_cap_leaves_text_intact(void **state)
{
    (void)state;
    knut_buf b;
    knut_buf_init(&b, 8);
    knut_buf_puts(&b, "ab");
    assert_int_equal(knut_buf_printf(&b, "%s", "0123456789"), KNUT_ETOOBIG);
    assert_int_equal(b.len, 2);
    assert_string_equal(b.data, "ab");
    knut_buf_clear(&b); /* clear lifts the sticky error */
    assert_int_equal(knut_buf_puts(&b, "12345678"), KNUT_OK);
    knut_buf_reset(&b);
}

static void test_core_buf__detach_hands_over_memory(void **state)
{
    (void)state;
    knut_buf b = KNUT_BUF_INIT;
    size_t len = 0;
    char *empty = knut_buf_detach(&b, &len);
    assert_non_null(empty);
    assert_string_equal(empty, "");
    free(empty);
    knut_buf_puts(&b, "hello");
    char *s = knut_buf_detach(&b, &len);
    assert_string_equal(s, "hello");
    assert_int_equal(len, 5);
    assert_null(b.data);
    assert_int_equal(b.len, 0);
    free(s);
}

static void test_core_buf__reserve_checks_overflow(void **state)
{
    (void)state;
    knut_buf b = KNUT_BUF_INIT;
    knut_buf_puts(&b, "x");
    assert_int_equal(knut_buf_reserve(&b, SIZE_MAX), KNUT_ETOOBIG);
    knut_buf_reset(&b);
    assert_int_equal(knut_buf_reserve(NULL, 1), KNUT_EINVAL);
}

/* Escapes s with knut_buf_put_json_str and parses the result back. */
static json_t *roundtrip(const char *s, size_t len, knut_buf *b)
{
    knut_buf_clear(b);
    assert_int_equal(knut_buf_put_json_str(b, s, len), KNUT_OK);
    json_error_t jerr;
    json_t *v = json_loadb(b->data, b->len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
    if (!v)
        fail_msg("not JSON: %s (%s)", b->data, jerr.text);
    assert_true(json_is_string(v));
    return v;
}

static void test_core_buf__json_escapes_everything(void **state)
{
    (void)state;
    knut_buf b = KNUT_BUF_INIT;
    const char tricky[] = "q\"b\\s/\n\r\t\b\f\x01\x1f\x7f é ✓ 😀";
    json_t *v = roundtrip(tricky, sizeof tricky - 1, &b);
    assert_string_equal(json_string_value(v), tricky);
    json_decref(v);
    assert_non_null(strstr(b.data, "\\u0001"));
    assert_non_null(strstr(b.data, "\\u007f"));

    /* Embedded NUL survives as \u0000 when a length is given. */
    v = roundtrip("a\0b", 3, &b);
    assert_int_equal(json_string_length(v), 3);
    assert_memory_equal(json_string_value(v), "a\0b", 3);
    json_decref(v);

    /* NULL is the empty string. */
    v = roundtrip(NULL, 5, &b);
    assert_string_equal(json_string_value(v), "");
    json_decref(v);
    knut_buf_reset(&b);
}

static void test_core_buf__json_replaces_invalid_utf8(void **state)
{
    (void)state;
    knut_buf b = KNUT_BUF_INIT;
    /* A stray continuation byte, a truncated sequence, an overlong '/',
     * and an encoded surrogate: each becomes U+FFFD, valid text stays. */
    const char bad[] = "a\x80" "b\xE2\x82" "c\xC0\xAF" "d\xED\xA0\x80" "e\xF0\x9F\x98";
    json_t *v = roundtrip(bad, sizeof bad - 1, &b);
#define R "\xEF\xBF\xBD" /* U+FFFD, one per byte that is not valid UTF-8 */
    assert_string_equal(json_string_value(v),
                        "a" R "b" R R "c" R R "d" R R R "e" R R R);
#undef R
    json_decref(v);
    knut_buf_reset(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_core_buf__append_keeps_nul_and_length),
        cmocka_unit_test(test_core_buf__printf_grows),
        cmocka_unit_test(test_core_buf__cap_is_exact_and_sticky),
        cmocka_unit_test(test_core_buf__printf_over_cap_leaves_text_intact),
        cmocka_unit_test(test_core_buf__detach_hands_over_memory),
        cmocka_unit_test(test_core_buf__reserve_checks_overflow),
        cmocka_unit_test(test_core_buf__json_escapes_everything),
        cmocka_unit_test(test_core_buf__json_replaces_invalid_utf8),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
