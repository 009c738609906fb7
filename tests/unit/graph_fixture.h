/*
 * Shared helpers for the graph unit tests: column builders, struct batches
 * turned into streams and views, and rendering into strings. Header-only
 * (static functions) so each test executable stays one file plus this.
 */
#ifndef KNUT_TEST_GRAPH_FIXTURE_H
#define KNUT_TEST_GRAPH_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "knut/graph.h"

#define OK(expr)                                                          \
    do {                                                                  \
        knut_error e_ = KNUT_ERROR_INIT;                                  \
        knut_status s_ = (expr);                                          \
        if (s_ != KNUT_OK)                                                \
            fail_msg("%s -> %d: %s", #expr, (int)s_, e_.message);         \
    } while (0)

#define FX_UNUSED __attribute__((unused))

/* A builder for a simple type (or a typed one: timestamp units, zones). */
static FX_UNUSED knut_arrow_builder *fx_col(knut_arrow_type type, const char *name)
{
    knut_arrow_builder *b = NULL;
    OK(knut_arrow_builder_new_simple(&b, type, name, &e_));
    return b;
}

static FX_UNUSED knut_arrow_builder *fx_col_unit(knut_arrow_type type, knut_arrow_time_unit unit,
                                                 const char *tz, const char *name)
{
    knut_arrow_type_info t;
    knut_arrow_builder *b = NULL;
    knut_arrow_type_info_init(&t, type);
    t.unit = unit;
    if (tz != NULL)
        strcpy(t.timezone, tz);
    OK(knut_arrow_builder_new(&b, &t, name, &e_));
    return b;
}

/* A LIST (or STRUCT/MAP) builder with the given children. */
static FX_UNUSED knut_arrow_builder *fx_nested(knut_arrow_type type, const char *name, int n, ...)
{
    knut_arrow_builder *b = fx_col(type, name);
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++)
        OK(knut_arrow_builder_add_child(b, va_arg(ap, knut_arrow_builder *), &e_));
    va_end(ap);
    return b;
}

/* A finished array/schema pair, with a view over it. */
typedef struct fx_arr {
    struct ArrowArray array;
    struct ArrowSchema schema;
    knut_arrow_view view;
} fx_arr;

static FX_UNUSED void fx_finish(fx_arr *a, knut_arrow_builder *b)
{
    OK(knut_arrow_builder_finish(b, &a->array, &a->schema, &e_));
    knut_arrow_builder_free(b);
    OK(knut_arrow_view_init(&a->view, &a->schema, &a->array, &e_));
}

static FX_UNUSED void fx_arr_free(fx_arr *a)
{
    knut_arrow_view_reset(&a->view);
    knut_arrow_array_release(&a->array);
    knut_arrow_schema_release(&a->schema);
}

/* Wraps the finished struct batch into a one-batch stream (takes a over;
 * the view is dropped). */
static FX_UNUSED void fx_stream(struct ArrowArrayStream *out, fx_arr *a)
{
    knut_arrow_view_reset(&a->view);
    OK(knut_arrow_stream_from_arrays(out, &a->schema, &a->array, 1, &e_));
}

/* Renders row i of v; returns a malloc'ed string or NULL with *st set. */
static FX_UNUSED char *fx_value(const knut_arrow_view *v, int64_t i, const char *column,
                                knut_status *st, knut_error *err)
{
    knut_buf b = KNUT_BUF_INIT;
    knut_graph_cypher_loc loc = {"S", column, i};
    *st = knut_graph_cypher_value(&b, v, i, &loc, err);
    if (*st != KNUT_OK) {
        assert_int_equal(0, b.len); /* nothing left behind on error */
        knut_buf_reset(&b);
        return NULL;
    }
    return knut_buf_detach(&b, NULL);
}

static FX_UNUSED void fx_expect_value(const knut_arrow_view *v, int64_t i, const char *want)
{
    knut_status st;
    knut_error err = KNUT_ERROR_INIT;
    char *got = fx_value(v, i, "c", &st, &err);
    if (got == NULL)
        fail_msg("row %lld: %s", (long long)i, err.message);
    assert_string_equal(want, got);
    free(got);
}

/* Expects an error whose message contains every given fragment. */
static FX_UNUSED void fx_expect_msg(const knut_error *err, const char *a, const char *b)
{
    if (a != NULL && strstr(err->message, a) == NULL)
        fail_msg("'%s' not in '%s'", a, err->message);
    if (b != NULL && strstr(err->message, b) == NULL)
        fail_msg("'%s' not in '%s'", b, err->message);
}

static FX_UNUSED void fx_expect_value_error(const knut_arrow_view *v, int64_t i,
                                            knut_status want, const char *frag)
{
    knut_status st;
    knut_error err = KNUT_ERROR_INIT;
    char row[48];
    char *got = fx_value(v, i, "c", &st, &err);
    if (got != NULL)
        fail_msg("row %lld rendered as %s, expected an error", (long long)i, got);
    assert_int_equal(want, st);
    snprintf(row, sizeof(row), "row %lld, column 'c'", (long long)i);
    fx_expect_msg(&err, row, frag);
    fx_expect_msg(&err, "set 'S'", NULL);
}

#endif /* KNUT_TEST_GRAPH_FIXTURE_H */
