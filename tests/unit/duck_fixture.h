/*
 * Shared by the duck unit tests: an in-memory database per test and small
 * helpers that run a query and view its first batch.
 */
#ifndef KNUT_TEST_DUCK_FIXTURE_H
#define KNUT_TEST_DUCK_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "knut/duck.h"

typedef struct fixture {
    knut_duck_db *db;
    knut_duck_conn *conn;
} fixture;

static inline int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    knut_error err = KNUT_ERROR_INIT;
    assert_non_null(f);
    assert_int_equal(knut_duck_db_open(&f->db, NULL, NULL, 0, &err), KNUT_OK);
    assert_int_equal(knut_duck_conn_open(&f->conn, f->db, &err), KNUT_OK);
    *state = f;
    return 0;
}

static inline int teardown(void **state)
{
    fixture *f = *state;
    knut_duck_conn_close(f->conn);
    knut_duck_db_close(f->db);
    free(f);
    return 0;
}

/* One batch of a query stream, viewed column by column. */
typedef struct batch {
    struct ArrowSchema schema;
    struct ArrowArray array;
    knut_arrow_view view;
} batch;

/* Runs sql and reads its first batch (asserting there is one). */
static inline void query_first(knut_duck_conn *conn, const char *sql, struct ArrowArrayStream *st,
                        batch *b)
{
    knut_error err = KNUT_ERROR_INIT;
    if (knut_duck_query(conn, sql, st, &err) != KNUT_OK)
        fail_msg("query failed: %s", err.message);
    assert_int_equal(st->get_schema(st, &b->schema), 0);
    assert_int_equal(st->get_next(st, &b->array), 0);
    assert_non_null(b->array.release);
    if (knut_arrow_view_init(&b->view, &b->schema, &b->array, &err) != KNUT_OK)
        fail_msg("view: %s", err.message);
}

static inline void batch_reset(batch *b)
{
    knut_arrow_view_reset(&b->view);
    knut_arrow_array_release(&b->array);
    knut_arrow_schema_release(&b->schema);
}

static inline const knut_arrow_view *col(const batch *b, int64_t k)
{
    const knut_arrow_view *c = knut_arrow_view_child(&b->view, k);
    assert_non_null(c);
    return c;
}

static inline void assert_str_at(const knut_arrow_view *v, int64_t i, const char *want)
{
    int64_t len = 0;
    const char *s = knut_arrow_view_get_str(v, i, &len);
    assert_int_equal(len, (int64_t)strlen(want));
    assert_memory_equal(s, want, (size_t)len);
}

/* Reads the stream to its end; returns the total rows and the batch count. */

#endif
