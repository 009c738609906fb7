/*
 * Interop tests with the other producer/consumer in-process, DuckDB: arrays
 * DuckDB exports (ints, strings with nulls, lists, structs, maps, dates,
 * timestamps, decimals, ENUMs as dictionaries) pass FULL validation and
 * read back through views; arrays our builders make are accepted by
 * DuckDB's Arrow import and read back as the same values.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <duckdb.h>

#include "knut/arrow.h"

#define OK(expr)                                                          \
    do {                                                                  \
        knut_error e_ = KNUT_ERROR_INIT;                                  \
        knut_status s_ = (expr);                                          \
        if (s_ != KNUT_OK)                                                \
            fail_msg("%s -> %d: %s", #expr, (int)s_, e_.message);         \
    } while (0)

#define DUCK_OK(expr)                                                     \
    do {                                                                  \
        duckdb_error_data d_ = (expr);                                    \
        if (d_ != NULL && duckdb_error_data_has_error(d_))                \
            fail_msg("%s: %s", #expr, duckdb_error_data_message(d_));     \
        duckdb_destroy_error_data(&d_);                                   \
    } while (0)

typedef struct duck {
    duckdb_database db;
    duckdb_connection con;
} duck;

static int duck_setup(void **state)
{
    static duck d;
    if (duckdb_open(NULL, &d.db) != DuckDBSuccess || duckdb_connect(d.db, &d.con) != DuckDBSuccess)
        return -1;
    *state = &d;
    return 0;
}

static int duck_teardown(void **state)
{
    duck *d = *state;
    duckdb_disconnect(&d->con);
    duckdb_close(&d->db);
    return 0;
}

static const char *child_name(const knut_arrow_view *v, int64_t k)
{
    return v->schema->children[k]->name;
}

static const knut_arrow_view *column(const knut_arrow_view *batch, const char *name)
{
    for (int64_t k = 0; k < batch->n_children; k++) {
        if (strcmp(child_name(batch, k), name) == 0)
            return &batch->children[k];
    }
    fail_msg("no column %s", name);
    return NULL;
}

static void check_duck_batch(const knut_arrow_view *b, int64_t first_row)
{
    const knut_arrow_view *i = column(b, "i"), *i8 = column(b, "i8"), *s = column(b, "s");
    const knut_arrow_view *l = column(b, "l"), *st = column(b, "st"), *d = column(b, "d");
    const knut_arrow_view *dt = column(b, "dt"), *ts = column(b, "ts"), *f = column(b, "flag");
    const knut_arrow_view *m = column(b, "mood"), *dec = column(b, "dec"), *mp = column(b, "mp");
    assert_int_equal(KNUT_ARROW_INT64, i->type.type);
    assert_int_equal(KNUT_ARROW_INT8, i8->type.type);
    assert_true(s->type.type == KNUT_ARROW_UTF8 || s->type.type == KNUT_ARROW_LARGE_UTF8);
    assert_int_equal(KNUT_ARROW_LIST, l->type.type);
    assert_int_equal(KNUT_ARROW_STRUCT, st->type.type);
    assert_int_equal(KNUT_ARROW_DOUBLE, d->type.type);
    assert_int_equal(KNUT_ARROW_DATE32, dt->type.type);
    assert_int_equal(KNUT_ARROW_TIMESTAMP, ts->type.type);
    assert_int_equal(KNUT_ARROW_MICRO, ts->type.unit);
    assert_int_equal(KNUT_ARROW_BOOL, f->type.type);
    assert_non_null(m->dictionary);
    assert_int_equal(KNUT_ARROW_DECIMAL128, dec->type.type);
    assert_int_equal(2, dec->type.scale);
    assert_int_equal(KNUT_ARROW_MAP, mp->type.type);

    for (int64_t r = 0; r < b->length; r++) {
        int64_t row = first_row + r, len, start, end;
        char buf[32];
        assert_false(knut_arrow_view_is_null(b, r));
        int64_t cr = knut_arrow_view_child_row(b, r);
        assert_int_equal(row, knut_arrow_view_get_int64(i, cr));
        assert_int_equal(row % 100, knut_arrow_view_get_int64(i8, cr));
        assert_int_equal(row % 3 == 0, knut_arrow_view_is_null(s, cr));
        if (row % 3 != 0) {
            snprintf(buf, sizeof(buf), "v%lld", (long long)row);
            const char *p = knut_arrow_view_get_str(s, cr, &len);
            assert_int_equal((int64_t)strlen(buf), len);
            assert_memory_equal(buf, p, (size_t)len);
        }
        knut_arrow_view_list_range(l, cr, &start, &end);
        assert_int_equal(2, end - start);
        assert_int_equal(row, knut_arrow_view_get_int64(&l->children[0], start));
        assert_int_equal(row + 1, knut_arrow_view_get_int64(&l->children[0], start + 1));
        int64_t sr = knut_arrow_view_child_row(st, cr);
        assert_int_equal(row * 2, knut_arrow_view_get_int64(&st->children[0], sr));
        snprintf(buf, sizeof(buf), "x%lld", (long long)row);
        assert_memory_equal(buf, knut_arrow_view_get_str(&st->children[1], sr, &len), strlen(buf));
        assert_true(knut_arrow_view_get_double(d, cr) == (double)row / 2);
        assert_int_equal(19723 + row, knut_arrow_view_get_int64(dt, cr)); /* 2024-01-01 */
        assert_int_equal(1704067200000000LL + row * 1000000LL, knut_arrow_view_get_int64(ts, cr));
        assert_int_equal(row % 2 == 0, knut_arrow_view_get_bool(f, cr));
        int64_t k = knut_arrow_view_get_int64(m, cr);
        const char *mood = knut_arrow_view_get_str(m->dictionary, k, &len);
        assert_memory_equal(row % 2 ? "sad" : "ok", mood, (size_t)len);
        const uint8_t *dv = (const uint8_t *)knut_arrow_view_get_bytes(dec, cr, &len);
        int64_t lo;
        memcpy(&lo, dv, 8); /* small values: the low 8 bytes hold them */
        assert_int_equal(16, len);
        assert_int_equal(row * 100 + 25, lo);
        knut_arrow_view_list_range(mp, cr, &start, &end);
        assert_int_equal(1, end - start);
        const knut_arrow_view *entries = &mp->children[0];
        assert_memory_equal("k", knut_arrow_view_get_str(&entries->children[0], start, &len), 1);
        assert_int_equal(row, knut_arrow_view_get_int64(&entries->children[1], start));
    }
}

static void test_arrow_interop__duckdb_export_validates_and_reads(void **state)
{
    duck *d = *state;
    duckdb_result res;
    const char *sql =
        "SELECT i, (i % 100)::TINYINT AS i8,"
        " CASE WHEN i % 3 = 0 THEN NULL ELSE 'v' || i END AS s,"
        " [i, i + 1] AS l, {'a': i * 2, 'b': 'x' || i} AS st, i / 2 AS d,"
        " DATE '2024-01-01' + i::INTEGER AS dt,"
        " TIMESTAMP '2024-01-01 00:00:00' + to_seconds(i) AS ts,"
        " i % 2 = 0 AS flag,"
        " (CASE WHEN i % 2 = 1 THEN 'sad' ELSE 'ok' END)::ENUM('ok', 'sad') AS mood,"
        " (i + 0.25)::DECIMAL(10, 2) AS dec, MAP {'k': i} AS mp"
        " FROM range(3000) t(i) ORDER BY i";
    if (duckdb_query(d->con, sql, &res) != DuckDBSuccess)
        fail_msg("query: %s", duckdb_result_error(&res));

    idx_t ncol = duckdb_column_count(&res);
    duckdb_logical_type types[16];
    const char *names[16];
    assert_true(ncol <= 16);
    for (idx_t c = 0; c < ncol; c++) {
        types[c] = duckdb_column_logical_type(&res, c);
        names[c] = duckdb_column_name(&res, c);
    }
    duckdb_arrow_options opts = duckdb_result_get_arrow_options(&res);
    struct ArrowSchema schema;
    DUCK_OK(duckdb_to_arrow_schema(opts, types, names, ncol, &schema));
    for (idx_t c = 0; c < ncol; c++)
        duckdb_destroy_logical_type(&types[c]);

    int64_t rows = 0, batches = 0;
    duckdb_data_chunk chunk;
    while ((chunk = duckdb_fetch_chunk(res)) != NULL) {
        struct ArrowArray arr;
        DUCK_OK(duckdb_data_chunk_to_arrow(opts, chunk, &arr));
        OK(knut_arrow_array_validate(&schema, &arr,
                                     KNUT_ARROW_VALIDATE_FULL | KNUT_ARROW_VALIDATE_UTF8, &e_));
        knut_arrow_view v;
        OK(knut_arrow_view_init(&v, &schema, &arr, &e_));
        check_duck_batch(&v, rows);
        rows += v.length;
        batches++;
        knut_arrow_view_reset(&v);
        knut_arrow_array_release(&arr);
        duckdb_destroy_data_chunk(&chunk);
    }
    assert_int_equal(3000, rows);
    assert_true(batches >= 2);

    /* a deep copy of DuckDB's schema outlives the original */
    struct ArrowSchema copy;
    OK(knut_arrow_schema_deep_copy(&copy, &schema, &e_));
    knut_arrow_schema_release(&schema);
    assert_string_equal("mood", copy.children[9]->name);
    assert_non_null(copy.children[9]->dictionary);
    knut_arrow_schema_release(&copy);
    duckdb_destroy_arrow_options(&opts);
    duckdb_destroy_result(&res);
}

static void test_arrow_interop__duckdb_imports_builder_output(void **state)
{
    duck *d = *state;
    knut_arrow_builder *root, *id, *name, *tags, *tag;
    OK(knut_arrow_builder_new_simple(&root, KNUT_ARROW_STRUCT, "", &e_));
    OK(knut_arrow_builder_new_simple(&id, KNUT_ARROW_INT64, "id", &e_));
    OK(knut_arrow_builder_new_simple(&name, KNUT_ARROW_UTF8, "name", &e_));
    OK(knut_arrow_builder_new_simple(&tags, KNUT_ARROW_LIST, "tags", &e_));
    OK(knut_arrow_builder_new_simple(&tag, KNUT_ARROW_INT32, "item", &e_));
    OK(knut_arrow_builder_add_child(tags, tag, &e_));
    OK(knut_arrow_builder_add_child(root, id, &e_));
    OK(knut_arrow_builder_add_child(root, name, &e_));
    OK(knut_arrow_builder_add_child(root, tags, &e_));
    knut_arrow_builder_set_nullable(id, 0);
    for (int64_t r = 0; r < 1000; r++) {
        char buf[32];
        OK(knut_arrow_builder_append_fixed(id, &r, &e_));
        if (r % 10 == 0) {
            OK(knut_arrow_builder_append_null(name, &e_));
        } else {
            snprintf(buf, sizeof(buf), "node-%lld", (long long)r);
            OK(knut_arrow_builder_append_str(name, buf, &e_));
        }
        for (int k = 0; k < r % 3; k++)
            OK(knut_arrow_builder_append_int(tag, (int32_t)r + k, &e_));
        OK(knut_arrow_builder_finish_element(tags, &e_));
        OK(knut_arrow_builder_finish_element(root, &e_));
    }
    struct ArrowArray arr;
    struct ArrowSchema schema;
    OK(knut_arrow_builder_finish(root, &arr, &schema, &e_));
    knut_arrow_builder_free(root);

    duckdb_arrow_converted_schema conv = NULL;
    DUCK_OK(duckdb_schema_from_arrow(d->con, &schema, &conv));
    duckdb_data_chunk chunk = NULL;
    DUCK_OK(duckdb_data_chunk_from_arrow(d->con, &arr, conv, &chunk));
    knut_arrow_array_release(&arr); /* no-op if DuckDB took it */
    assert_int_equal(1000, duckdb_data_chunk_get_size(chunk));

    duckdb_vector vid = duckdb_data_chunk_get_vector(chunk, 0);
    duckdb_vector vname = duckdb_data_chunk_get_vector(chunk, 1);
    duckdb_vector vtags = duckdb_data_chunk_get_vector(chunk, 2);
    const int64_t *ids = duckdb_vector_get_data(vid);
    duckdb_string_t *names = duckdb_vector_get_data(vname);
    uint64_t *name_valid = duckdb_vector_get_validity(vname);
    duckdb_list_entry *lists = duckdb_vector_get_data(vtags);
    const int32_t *items = duckdb_vector_get_data(duckdb_list_vector_get_child(vtags));
    for (int64_t r = 0; r < 1000; r++) {
        assert_int_equal(r, ids[r]);
        assert_int_equal(r % 10 != 0, duckdb_validity_row_is_valid(name_valid, (idx_t)r));
        if (r % 10 != 0) {
            char buf[32];
            snprintf(buf, sizeof(buf), "node-%lld", (long long)r);
            assert_int_equal(strlen(buf), duckdb_string_t_length(names[r]));
            assert_memory_equal(buf, duckdb_string_t_data(&names[r]), strlen(buf));
        }
        assert_int_equal(r % 3, lists[r].length);
        for (uint64_t k = 0; k < lists[r].length; k++)
            assert_int_equal(r + (int64_t)k, items[lists[r].offset + k]);
    }
    duckdb_destroy_data_chunk(&chunk);
    duckdb_destroy_arrow_converted_schema(&conv);
    knut_arrow_schema_release(&schema);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arrow_interop__duckdb_export_validates_and_reads),
        cmocka_unit_test(test_arrow_interop__duckdb_imports_builder_output),
    };
    return cmocka_run_group_tests(tests, duck_setup, duck_teardown);
}
