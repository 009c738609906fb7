/*
 * Versioned option structs: every entry point that takes one refuses an
 * unknown version with KNUT_EINVAL before it does anything (the entry
 * points whose own tests do not cover it: graph loading, store export,
 * sync open, run and retry). The sync part sits on top of the others, so its
 * test can reach them all.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "knut/knut.h"

#define EXPECT_VERSION_REFUSED(call, err)                                  \
    do {                                                                   \
        knut_error_clear(&(err));                                          \
        assert_int_equal(KNUT_EINVAL, (call));                             \
        assert_non_null(strstr((err).message, "options version 99"));     \
    } while (0)

static void test_graph_load_and_export_refuse_unknown_versions(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    knut_graph_store *store = NULL;
    knut_graphar_graph_info *gi = NULL;
    assert_int_equal(KNUT_OK, knut_graph_store_open(&store, NULL, &err));
    assert_int_equal(KNUT_OK, knut_graphar_graph_info_new(&gi, "g", NULL, &err));

    knut_graph_load_options lo = KNUT_GRAPH_LOAD_OPTIONS_INIT;
    lo.version = 99;
    EXPECT_VERSION_REFUSED(knut_graph_load_graphar_store(store, gi, &lo, NULL, &err), err);
    /* the defaults (NULL) and the initialiser pass */
    assert_int_equal(KNUT_OK, knut_graph_load_graphar_store(store, gi, NULL, NULL, &err));
    lo.version = KNUT_GRAPH_LOAD_OPTIONS_VERSION;
    assert_int_equal(KNUT_OK, knut_graph_load_graphar_store(store, gi, &lo, NULL, &err));

    knut_graph_store_export_options eo = KNUT_GRAPH_STORE_EXPORT_OPTIONS_INIT;
    eo.version = 99;
    EXPECT_VERSION_REFUSED(knut_graph_store_export_graphar(store, "/nonexistent", &eo, &err),
                           err);

    knut_graphar_graph_info_free(gi);
    knut_graph_store_close(store);
}

static void test_sync_open_and_run_refuse_unknown_versions(void **state)
{
    (void)state;
    static const char text[] = "tables:\n  t:\n    path: x\n"
                               "    vertices: [{labels: [A], keys: [k]}]\n";
    knut_error err = KNUT_ERROR_INIT;
    knut_sync_config *cfg = NULL;
    knut_sync *s = NULL;
    assert_int_equal(KNUT_OK,
                     knut_sync_config_parse(&cfg, text, sizeof text - 1, "t.yml", NULL, &err));

    knut_sync_options so = KNUT_SYNC_OPTIONS_INIT;
    so.store = ":memory:";
    so.version = 99;
    s = (knut_sync *)1;
    EXPECT_VERSION_REFUSED(knut_sync_open(&s, cfg, &so, &err), err);
    assert_null(s);
    so.version = KNUT_SYNC_OPTIONS_VERSION;
    assert_int_equal(KNUT_OK, knut_sync_open(&s, cfg, &so, &err));

    knut_sync_run_options ro = KNUT_SYNC_RUN_OPTIONS_INIT;
    ro.once = 1;
    ro.version = 99;
    EXPECT_VERSION_REFUSED(knut_sync_run(s, &ro, NULL, &err), err);

    knut_sync_retry_options rto = KNUT_SYNC_RETRY_OPTIONS_INIT;
    int64_t n = 0;
    rto.version = 99;
    EXPECT_VERSION_REFUSED(knut_sync_retry(s, &rto, &n, &err), err);
    rto.version = KNUT_SYNC_RETRY_OPTIONS_VERSION;
    assert_int_equal(KNUT_OK, knut_sync_retry(s, &rto, &n, &err));
    assert_int_equal(n, 0); /* nothing failed yet */
    rto.table = "nope";
    assert_int_equal(KNUT_ENOTFOUND, knut_sync_retry(s, &rto, &n, &err));

    knut_sync_close(s);
    knut_sync_config_free(cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_graph_load_and_export_refuse_unknown_versions),
        cmocka_unit_test(test_sync_open_and_run_refuse_unknown_versions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
