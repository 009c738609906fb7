/*
 * Shared by the chunk reader tests: load a corpus graph, read a reader
 * stream to its end into viewed batches, look values up by column name and
 * global row, and make scratch copies of corpus directories to damage.
 */
#ifndef KNUT_TEST_GRAPHAR_READ_FIXTURE_H
#define KNUT_TEST_GRAPHAR_READ_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graphar_fixture.h"
#include "knut/arrow.h"
#include "knut/duck.h"
#include "knut/graphar.h"

typedef struct table {
    struct ArrowSchema schema;
    struct ArrowArray *arrays;
    knut_arrow_view *views;
    int64_t n;
    int64_t rows;
} table;

static inline knut_graphar_graph_info *load_graph(const char *rel)
{
    char path[1024];
    knut_error err = KNUT_ERROR_INIT;
    knut_graphar_graph_info *gi = NULL;
    snprintf(path, sizeof path, "%s/%s", GAR_CORPUS, rel);
    if (knut_graphar_graph_load(&gi, path, &err) != KNUT_OK)
        fail_msg("loading %s: %s", path, err.message);
    return gi;
}

static inline knut_graphar_reader *reader_for(const knut_graphar_graph_info *gi, int64_t limit)
{
    knut_graphar_reader *r = NULL;
    knut_error err = KNUT_ERROR_INIT;
    knut_graphar_read_options o = KNUT_GRAPHAR_READ_OPTIONS_INIT;
    o.limit = limit;
    assert_int_equal(
        knut_graphar_reader_new(&r, NULL, knut_graphar_graph_data_dir(gi), &o, &err), KNUT_OK);
    return r;
}

/* Reads the stream to its end (failing the test on error) and releases it. */
static inline void table_read(struct ArrowArrayStream *st, table *t)
{
    knut_error err = KNUT_ERROR_INIT;
    memset(t, 0, sizeof *t);
    if (knut_arrow_stream_collect(st, &t->schema, &t->arrays, &t->n, 0, &err) != KNUT_OK) {
        int rc = st->get_next(st, &(struct ArrowArray){0});
        knut_graphar_stream_status(st, rc ? rc : 5, &err);
        fail_msg("reading: %s", err.message);
    }
    knut_arrow_stream_release(st);
    t->views = calloc((size_t)(t->n ? t->n : 1), sizeof *t->views);
    assert_non_null(t->views);
    for (int64_t i = 0; i < t->n; i++) {
        assert_int_equal(knut_arrow_array_validate(&t->schema, &t->arrays[i],
                                                   KNUT_ARROW_VALIDATE_FULL |
                                                       KNUT_ARROW_VALIDATE_UTF8,
                                                   &err),
                         KNUT_OK);
        assert_int_equal(knut_arrow_view_init(&t->views[i], &t->schema, &t->arrays[i], &err),
                         KNUT_OK);
        assert_true(t->arrays[i].length <= 2048);
        t->rows += t->arrays[i].length;
    }
}

static inline void table_free(table *t)
{
    for (int64_t i = 0; i < t->n; i++)
        knut_arrow_view_reset(&t->views[i]);
    free(t->views);
    knut_arrow_arrays_free(t->arrays, t->n);
    knut_arrow_schema_release(&t->schema);
}

static inline int table_col(const table *t, const char *name)
{
    for (int64_t i = 0; i < t->schema.n_children; i++)
        if (strcmp(t->schema.children[i]->name, name) == 0)
            return (int)i;
    fail_msg("no column %s", name);
    return -1;
}

static inline const char *table_format(const table *t, const char *name)
{
    return t->schema.children[table_col(t, name)]->format;
}

/* The view of column name holding global row *row (made batch-local). */
static inline const knut_arrow_view *table_at(const table *t, const char *name, int64_t *row)
{
    int c = table_col(t, name);
    for (int64_t i = 0; i < t->n; i++) {
        if (*row < t->arrays[i].length)
            return knut_arrow_view_child(&t->views[i], c);
        *row -= t->arrays[i].length;
    }
    fail_msg("row out of range");
    return NULL;
}

static inline int64_t t_int(const table *t, const char *name, int64_t row)
{
    const knut_arrow_view *v = table_at(t, name, &row);
    assert_false(knut_arrow_view_is_null(v, row));
    return knut_arrow_view_get_int64(v, row);
}

static inline int t_null(const table *t, const char *name, int64_t row)
{
    const knut_arrow_view *v = table_at(t, name, &row);
    return knut_arrow_view_is_null(v, row);
}

static inline double t_dbl(const table *t, const char *name, int64_t row)
{
    const knut_arrow_view *v = table_at(t, name, &row);
    return knut_arrow_view_get_double(v, row);
}

/* String value as a NUL-terminated copy in buf. */
static inline const char *t_str(const table *t, const char *name, int64_t row, char *buf,
                                size_t cap)
{
    const knut_arrow_view *v = table_at(t, name, &row);
    int64_t len = 0;
    const char *s = knut_arrow_view_get_str(v, row, &len);
    snprintf(buf, cap, "%.*s", (int)len, s ? s : "");
    return buf;
}

static inline void assert_str_at(const table *t, const char *name, int64_t row, const char *want)
{
    char buf[512];
    assert_string_equal(t_str(t, name, row, buf, sizeof buf), want);
}

/* A scratch copy of corpus directory rel; returns its path (free it with
 * scratch_free). */
static inline char *scratch_copy(const char *rel)
{
    char tmpl[] = "/tmp/knut_gread_XXXXXX";
    char cmd[2048];
    assert_non_null(mkdtemp(tmpl));
    snprintf(cmd, sizeof cmd, "cp -r '%s/%s/.' '%s/'", GAR_CORPUS, rel, tmpl);
    assert_int_equal(system(cmd), 0);
    return strdup(tmpl);
}

static inline void scratch_free(char *dir)
{
    char cmd[1024];
    if (!dir)
        return;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    free(dir);
}

static inline knut_graphar_graph_info *load_path(const char *dir, const char *file)
{
    char path[1024];
    knut_error err = KNUT_ERROR_INIT;
    knut_graphar_graph_info *gi = NULL;
    snprintf(path, sizeof path, "%s/%s", dir, file);
    if (knut_graphar_graph_load(&gi, path, &err) != KNUT_OK)
        fail_msg("loading %s: %s", path, err.message);
    return gi;
}

#endif
