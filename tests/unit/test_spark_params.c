/*
 * SQL parameters as plan literals (src/spark/params.c): named and
 * positional arguments packed and read back with their kinds and values,
 * and the refusals (mixed kinds, empty or repeated names, text that is
 * not UTF-8, a date out of range).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "knut/spark.h"
#include "spark/spark_int.h"

/* q packed and unpacked again, as the server would read it. */
static KnutSpark__SQL *roundtrip(const KnutSpark__SQL *q)
{
    size_t n = knut_spark__sql__get_packed_size(q);
    uint8_t *buf = malloc(n ? n : 1);
    assert_non_null(buf);
    knut_spark__sql__pack(q, buf);
    KnutSpark__SQL *r = knut_spark__sql__unpack(NULL, n, buf);
    free(buf);
    assert_non_null(r);
    return r;
}

static void test_named(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    knut_spark_param p[] = {
        {.name = "s", .kind = KNUT_SPARK_PARAM_STRING, .s = "x' OR '1'='1"},
        {.name = "i", .kind = KNUT_SPARK_PARAM_INT64, .i = -5},
        {.name = "d", .kind = KNUT_SPARK_PARAM_DOUBLE, .d = 2.5},
        {.name = "b", .kind = KNUT_SPARK_PARAM_BOOL, .i = 7},
        {.name = "bin", .kind = KNUT_SPARK_PARAM_BINARY, .s = "\0\1", .len = 2},
        {.name = "dt", .kind = KNUT_SPARK_PARAM_DATE, .i = 19782},
        {.name = "ts", .kind = KNUT_SPARK_PARAM_TIMESTAMP, .i = 1700000000000000},
    };
    KnutSpark__SQL q = KNUT_SPARK__SQL__INIT;
    q.query = "SELECT :s";
    knut_spark__args *a = NULL;
    assert_int_equal(knut_spark__args_set(&q, p, 7, &a, &err), KNUT_OK);
    KnutSpark__SQL *r = roundtrip(&q);
    knut_spark__args_free(a);
    assert_string_equal(r->query, "SELECT :s"); /* the text is untouched */
    assert_int_equal(r->n_pos_arguments, 0);
    assert_int_equal(r->n_named_arguments, 7);
    int seen = 0;
    for (size_t i = 0; i < r->n_named_arguments; i++) {
        const char *k = r->named_arguments[i]->key;
        const KnutSpark__Expression *e = r->named_arguments[i]->value;
        assert_int_equal(e->expr_type_case, KNUT_SPARK__EXPRESSION__EXPR_TYPE_LITERAL);
        const KnutSpark__Expression__Literal *l = e->literal;
        if (strcmp(k, "s") == 0) {
            assert_string_equal(l->string, "x' OR '1'='1");
        } else if (strcmp(k, "i") == 0) {
            assert_int_equal(l->literal_type_case,
                             KNUT_SPARK__EXPRESSION__LITERAL__LITERAL_TYPE_LONG_VALUE);
            assert_int_equal(l->long_value, -5);
        } else if (strcmp(k, "d") == 0) {
            assert_true(l->double_value == 2.5);
        } else if (strcmp(k, "b") == 0) {
            assert_int_equal(l->literal_type_case,
                             KNUT_SPARK__EXPRESSION__LITERAL__LITERAL_TYPE_BOOLEAN);
            assert_int_equal(l->boolean, 1);
        } else if (strcmp(k, "bin") == 0) {
            assert_int_equal(l->binary.len, 2);
            assert_int_equal(l->binary.data[1], 1);
        } else if (strcmp(k, "dt") == 0) {
            assert_int_equal(l->date, 19782);
        } else {
            assert_string_equal(k, "ts");
            assert_int_equal(l->timestamp, 1700000000000000);
        }
        seen++;
    }
    assert_int_equal(seen, 7);
    knut_spark__sql__free_unpacked(r, NULL);
}

static void test_positional(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    knut_spark_param p[] = {
        {.kind = KNUT_SPARK_PARAM_INT64, .i = 41},
        {.kind = KNUT_SPARK_PARAM_STRING, .s = "a'b"},
    };
    KnutSpark__SQL q = KNUT_SPARK__SQL__INIT;
    q.query = "SELECT ? + 1, ?";
    knut_spark__args *a = NULL;
    assert_int_equal(knut_spark__args_set(&q, p, 2, &a, &err), KNUT_OK);
    KnutSpark__SQL *r = roundtrip(&q);
    knut_spark__args_free(a);
    assert_int_equal(r->n_named_arguments, 0);
    assert_int_equal(r->n_pos_arguments, 2);
    assert_int_equal(r->pos_arguments[0]->literal->long_value, 41);
    assert_string_equal(r->pos_arguments[1]->literal->string, "a'b");
    knut_spark__sql__free_unpacked(r, NULL);

    /* none: nothing set, nothing to free */
    KnutSpark__SQL q0 = KNUT_SPARK__SQL__INIT;
    assert_int_equal(knut_spark__args_set(&q0, NULL, 0, &a, &err), KNUT_OK);
    assert_null(a);
    assert_int_equal(q0.n_named_arguments + q0.n_pos_arguments, 0);
}

static void refused(const knut_spark_param *p, size_t n, const char *words)
{
    knut_error err = KNUT_ERROR_INIT;
    KnutSpark__SQL q = KNUT_SPARK__SQL__INIT;
    knut_spark__args *a = NULL;
    assert_int_equal(knut_spark__args_set(&q, p, n, &a, &err), KNUT_EINVAL);
    assert_null(a);
    assert_non_null(strstr(err.message, words));
}

static void test_refused(void **state)
{
    (void)state;
    knut_spark_param mixed[] = {{.name = "a", .kind = KNUT_SPARK_PARAM_INT64},
                                {.kind = KNUT_SPARK_PARAM_INT64}};
    refused(mixed, 2, "cannot be mixed");
    knut_spark_param empty[] = {{.name = "", .kind = KNUT_SPARK_PARAM_INT64}};
    refused(empty, 1, "an empty name");
    knut_spark_param twice[] = {{.name = "a", .kind = KNUT_SPARK_PARAM_INT64},
                                {.name = "a", .kind = KNUT_SPARK_PARAM_BOOL}};
    refused(twice, 2, ":a given twice");
    knut_spark_param bad_utf8[] = {{.kind = KNUT_SPARK_PARAM_STRING, .s = "\xff\xfe"}};
    refused(bad_utf8, 1, "not UTF-8");
    knut_spark_param no_text[] = {{.kind = KNUT_SPARK_PARAM_STRING}};
    refused(no_text, 1, "no string");
    knut_spark_param far[] = {{.kind = KNUT_SPARK_PARAM_DATE, .i = (int64_t)1 << 40}};
    refused(far, 1, "out of range");
    knut_spark_param kind[] = {{.kind = (knut_spark_param_kind)99}};
    refused(kind, 1, "unknown kind");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_named),
        cmocka_unit_test(test_positional),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
