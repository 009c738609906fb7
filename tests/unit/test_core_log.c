/*
 * Unit tests for logging (src/core/log.c): level filtering, records seen
 * by a capturing callback, message truncation, and both ready-made sinks
 * (the JSON sink's lines are parsed back with jansson).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "knut/core.h"

/* What the capturing sink saw last (copied: the record dies after the call). */
typedef struct captured {
    int count;
    knut_log_level level;
    char target[64];
    char *msg;
    size_t nfields;
    int64_t ts_us;
} captured;

static void capture(const knut_log_record *rec, void *ctx)
{
    captured *c = ctx;
    c->count++;
    c->level = rec->level;
    snprintf(c->target, sizeof c->target, "%s", rec->target);
    free(c->msg);
    c->msg = strdup(rec->msg);
    c->nfields = rec->nfields;
    c->ts_us = rec->ts_us;
}

static int teardown(void **state)
{
    (void)state;
    knut_log_set(KNUT_LOG_OFF, NULL, NULL);
    return 0;
}

static void test_core_log__levels_filter(void **state)
{
    (void)state;
    captured c = {0};
    assert_false(knut_log_enabled(KNUT_LOG_ERROR)); /* no sink: nothing enabled */
    knut_log_set(KNUT_LOG_INFO, capture, &c);
    assert_int_equal(knut_log_level_get(), KNUT_LOG_INFO);
    assert_false(knut_log_enabled(KNUT_LOG_DEBUG));
    assert_true(knut_log_enabled(KNUT_LOG_INFO));
    assert_true(knut_log_enabled(KNUT_LOG_ERROR));
    assert_false(knut_log_enabled(KNUT_LOG_OFF));
    KNUT_LOG(KNUT_LOG_DEBUG, "duck", "hidden %d", 1);
    assert_int_equal(c.count, 0);
    KNUT_LOG(KNUT_LOG_WARN, "duck", "shown %d", 2);
    assert_int_equal(c.count, 1);
    assert_int_equal(c.level, KNUT_LOG_WARN);
    assert_string_equal(c.target, "duck");
    assert_string_equal(c.msg, "shown 2");
    int64_t now = knut_clock_wall_us();
    assert_true(c.ts_us <= now && c.ts_us > now - 60 * 1000000LL);
    /* Setting a NULL sink turns logging off whatever the level. */
    knut_log_set(KNUT_LOG_TRACE, NULL, NULL);
    assert_int_equal(knut_log_level_get(), KNUT_LOG_OFF);
    free(c.msg);
}

static int evaluated;
static int count_eval(void)
{
    return ++evaluated;
}

static void test_core_log__disabled_macro_skips_arguments(void **state)
{
    (void)state;
    captured c = {0};
    knut_log_set(KNUT_LOG_ERROR, capture, &c);
    evaluated = 0;
    KNUT_LOG(KNUT_LOG_INFO, "sync", "n=%d", count_eval());
    assert_int_equal(evaluated, 0);
    KNUT_LOG(KNUT_LOG_ERROR, "sync", "n=%d", count_eval());
    assert_int_equal(evaluated, 1);
    assert_string_equal(c.msg, "n=1");
    free(c.msg);
}

static void test_core_log__level_names_parse(void **state)
{
    (void)state;
    knut_log_level lv;
    const char *names[] = {"trace", "debug", "info", "warn", "error", "off"};
    for (int i = 0; i < 6; i++) {
        assert_int_equal(knut_log_level_parse(names[i], &lv), KNUT_OK);
        assert_int_equal(lv, i);
        assert_string_equal(knut_log_level_name((knut_log_level)i), names[i]);
    }
    assert_int_equal(knut_log_level_parse("WARNING", &lv), KNUT_OK);
    assert_int_equal(lv, KNUT_LOG_WARN);
    assert_int_equal(knut_log_level_parse("loud", &lv), KNUT_EINVAL);
    assert_int_equal(knut_log_level_parse(NULL, &lv), KNUT_EINVAL);
    assert_string_equal(knut_log_level_name((knut_log_level)42), "unknown");
}

static void test_core_log__long_messages(void **state)
{
    (void)state;
    captured c = {0};
    knut_log_set(KNUT_LOG_TRACE, capture, &c);
    /* Longer than the stack buffer: kept whole. */
    char *mid = malloc(5000);
    memset(mid, 'm', 4999);
    mid[4999] = '\0';
    knut_log_emit(KNUT_LOG_INFO, "t", NULL, 0, "%s", mid);
    assert_string_equal(c.msg, mid);
    free(mid);
    /* Far longer than the record limit: cut and marked. */
    size_t n = 200000;
    char *huge = malloc(n + 1);
    memset(huge, 'h', n);
    huge[n] = '\0';
    knut_log_emit(KNUT_LOG_INFO, NULL, NULL, 0, "%s", huge);
    assert_string_equal(c.target, "knut"); /* NULL target gets a name */
    size_t got = strlen(c.msg);
    assert_true(got < n);
    assert_true(got >= 60000);
    assert_string_equal(c.msg + got - 3, "...");
    free(huge);
    free(c.msg);
}

/* Runs one record through a sink into a memory stream; returns the text. */
static char *render(knut_log_fn sink, const knut_log_record *rec)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    sink(rec, f);
    fclose(f);
    return text;
}

static void test_core_log__json_sink_fields_and_escaping(void **state)
{
    (void)state;
    const char *msg = "say \"hi\"\n\ttab\\ \x01 é ✓";
    knut_log_field fields[] = {
        KNUT_LF_STR("table", "orders"),
        KNUT_LF_INT("rows", -42),
        KNUT_LF_DBL("ratio", 0.1),
        KNUT_LF_BOOL("ok", 5),
        KNUT_LF_STR("none", NULL),
        KNUT_LF_STR("msg", "shadow"), /* must not replace the record's msg */
        KNUT_LF_DBL("nan", NAN),
        KNUT_LF_INT("big", INT64_MIN),
    };
    knut_log_record rec = {
        .ts_us = 1796054400123456LL, /* 2026-11-30T16:00:00.123456Z */
        .level = KNUT_LOG_WARN,
        .target = "du\"ck",
        .msg = msg,
        .fields = fields,
        .nfields = sizeof fields / sizeof fields[0],
    };
    char *text = render(knut_log_sink_json, &rec);
    size_t len = strlen(text);
    assert_true(len > 0);
    assert_int_equal(text[len - 1], '\n');
    assert_null(memchr(text, '\n', len - 1)); /* exactly one line */
    json_error_t jerr;
    json_t *o = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
    if (!o)
        fail_msg("sink wrote invalid JSON: %s (%s)", text, jerr.text);
    assert_string_equal(json_string_value(json_object_get(o, "ts")),
                        "2026-11-30T16:00:00.123456Z");
    assert_string_equal(json_string_value(json_object_get(o, "level")), "warn");
    assert_string_equal(json_string_value(json_object_get(o, "target")), "du\"ck");
    assert_string_equal(json_string_value(json_object_get(o, "msg")), msg);
    assert_string_equal(json_string_value(json_object_get(o, "table")), "orders");
    assert_int_equal(json_integer_value(json_object_get(o, "rows")), -42);
    assert_true(json_real_value(json_object_get(o, "ratio")) == 0.1);
    assert_true(json_is_true(json_object_get(o, "ok")));
    assert_true(json_is_null(json_object_get(o, "none")));
    assert_string_equal(json_string_value(json_object_get(o, "field.msg")), "shadow");
    assert_string_equal(json_string_value(json_object_get(o, "nan")), "NaN");
    assert_int_equal(json_integer_value(json_object_get(o, "big")), INT64_MIN);
    /* The keys come in the documented order: ts, level, target, msg, fields. */
    assert_true(strncmp(text, "{\"ts\":", 6) == 0);
    assert_true(strstr(text, "\"msg\":") < strstr(text, "\"table\":"));
    assert_non_null(strstr(text, "\"ratio\":0.1,"));
    json_decref(o);
    free(text);
}

static void test_core_log__json_sink_before_epoch(void **state)
{
    (void)state;
    knut_log_record rec = {.ts_us = -1, .level = KNUT_LOG_ERROR, .target = "t", .msg = "m"};
    char *text = render(knut_log_sink_json, &rec);
    assert_non_null(strstr(text, "\"ts\":\"1969-12-31T23:59:59.999999Z\""));
    free(text);
}

static void test_core_log__human_sink_line(void **state)
{
    (void)state;
    knut_log_field fields[] = {
        KNUT_LF_STR("key", "value"),
        KNUT_LF_STR("path", "a b"),
        KNUT_LF_INT("n", 7),
        KNUT_LF_BOOL("dry", 0),
    };
    knut_log_record rec = {
        .ts_us = 1796054400123456LL,
        .level = KNUT_LOG_WARN,
        .target = "duck",
        .msg = "message\nsecond line",
        .fields = fields,
        .nfields = 4,
    };
    char *text = render(knut_log_sink_human, &rec);
    assert_string_equal(text, "2026-11-30T16:00:00.123Z WARN  duck: message\\nsecond line "
                              "key=value path=\"a b\" n=7 dry=false\n");
    free(text);
}

static void test_core_log__emit_reaches_json_sink(void **state)
{
    (void)state;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    knut_log_set(KNUT_LOG_DEBUG, knut_log_sink_json, f);
    knut_log_field fl[] = {KNUT_LF_INT("rows", 3)};
    knut_log_emit(KNUT_LOG_INFO, "sync", fl, 1, "round %d done", 9);
    knut_log_emit(KNUT_LOG_TRACE, "sync", NULL, 0, "too chatty");
    knut_log_set(KNUT_LOG_OFF, NULL, NULL);
    fclose(f);
    json_error_t jerr;
    json_t *o = json_loads(text, 0, &jerr); /* exactly one record was written */
    assert_non_null(o);
    assert_string_equal(json_string_value(json_object_get(o, "msg")), "round 9 done");
    assert_string_equal(json_string_value(json_object_get(o, "level")), "info");
    assert_int_equal(json_integer_value(json_object_get(o, "rows")), 3);
    json_decref(o);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_core_log__levels_filter, teardown),
        cmocka_unit_test_teardown(test_core_log__disabled_macro_skips_arguments, teardown),
        cmocka_unit_test(test_core_log__level_names_parse),
        cmocka_unit_test_teardown(test_core_log__long_messages, teardown),
        cmocka_unit_test(test_core_log__json_sink_fields_and_escaping),
        cmocka_unit_test(test_core_log__json_sink_before_epoch),
        cmocka_unit_test(test_core_log__human_sink_line),
        cmocka_unit_test_teardown(test_core_log__emit_reaches_json_sink, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
