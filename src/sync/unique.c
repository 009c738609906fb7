/*
 * Whether a set's keys occur once in the batch (knut_sync__batch_keys_unique).
 * When they do, "the last row of a key wins" keeps every row and the set is
 * a plain scan of the batch instead of a window over it: the window sorts
 * the whole batch, and over a view batch (several files, not copied) it ran
 * out of the staging engine's memory. The answer must be exact, and the
 * check must stay inside that memory too, so:
 *
 * - one integer key whose values span at most UNIQUE_BITMAP_SPAN: one bit a
 *   value, set while the key column streams by (a repeat is a bit already
 *   set); memory span / 8 bytes, whatever the row count;
 * - otherwise, a batch of at most UNIQUE_GROUP_ROWS rows: a GROUP BY ...
 *   HAVING count(*) > 1 (DuckDB's grouping hash table does not spill: at
 *   2M groups it ran out of the 128 MB);
 * - otherwise, or when either check fails: "not unique", and the caller
 *   takes the window, as it always did.
 */
#include <stdlib.h>
#include <string.h>

#include "sync_int.h"

#define BATCH "_knut_batch"
#define UNIQUE_BITMAP_SPAN ((int64_t)1 << 27) /* 16 MiB of bits */
#define UNIQUE_GROUP_ROWS 1000000

static int integer_format(const char *f)
{
    return f && f[1] == 0 && strchr("cCsSiIl", f[0]) != NULL; /* not uint64 */
}

/* Streams the key column and marks each value: *unique = no value twice. */
static knut_status bitmap_check(knut_duck_conn *c, const char *key, int64_t lo, int64_t span,
                                int *unique, knut_error *err)
{
    uint8_t *bits = calloc((size_t)(span / 8 + 1), 1);
    knut_buf q = KNUT_BUF_INIT;
    struct ArrowArrayStream s = {0};
    struct ArrowSchema sc = {0};
    struct ArrowArray a = {0};
    knut_status st = bits ? KNUT_OK : knut_error_set(err, KNUT_ENOMEM, "out of memory");
    int dup = 0;
    knut_buf_puts(&q, "SELECT ");
    knut_duck_ident(&q, key);
    knut_buf_puts(&q, " FROM " BATCH);
    if (st == KNUT_OK && (st = knut_buf_check(&q, err)) == KNUT_OK)
        st = knut_duck_query(c, q.data, &s, err);
    if (st == KNUT_OK && s.get_schema(&s, &sc) != 0)
        st = knut_error_set(err, KNUT_EIO, "%s", s.get_last_error(&s));
    while (st == KNUT_OK && !dup) {
        knut_arrow_view v = {0};
        if (s.get_next(&s, &a) != 0) {
            st = knut_error_set(err, KNUT_EIO, "%s", s.get_last_error(&s));
            break;
        }
        if (!a.release)
            break;
        st = knut_arrow_view_init(&v, &sc, &a, err);
        for (int64_t i = 0; st == KNUT_OK && !dup && i < v.length && v.n_children == 1; i++) {
            int64_t r = knut_arrow_view_child_row(&v, i);
            if (knut_arrow_view_is_null(&v.children[0], r)) {
                dup = 1; /* staging refuses null keys; if one is here, be safe */
                break;
            }
            int64_t x = knut_arrow_view_get_int64(&v.children[0], r) - lo;
            if (x < 0 || x >= span) {
                dup = 1; /* changed under us: be safe */
                break;
            }
            uint8_t m = (uint8_t)(1u << (x & 7));
            dup = (bits[x >> 3] & m) != 0;
            bits[x >> 3] |= m;
        }
        knut_arrow_view_reset(&v);
        knut_arrow_array_release(&a);
    }
    *unique = st == KNUT_OK && !dup;
    knut_arrow_array_release(&a);
    knut_arrow_schema_release(&sc);
    knut_arrow_stream_release(&s);
    knut_buf_reset(&q);
    free(bits);
    return st;
}

/* min and max of an integer key: *span = 0 when too wide (or no rows). */
static knut_status key_span(knut_duck_conn *c, const char *key, int64_t *lo, int64_t *span,
                            knut_error *err)
{
    knut_buf q = KNUT_BUF_INIT;
    int64_t hi = 0, wide = 1;
    *lo = 0;
    *span = 0;
    /* the span computed in SQL as HUGEINT: no overflow for any BIGINT pair */
    knut_buf_puts(&q, "SELECT min(");
    knut_duck_ident(&q, key);
    knut_buf_puts(&q, ") FROM " BATCH);
    knut_status st = knut_buf_check(&q, err);
    if (st == KNUT_OK)
        st = knut_sync__q_int(c, q.data, NULL, lo, err);
    knut_buf_clear(&q);
    knut_buf_puts(&q, "SELECT (max(");
    knut_duck_ident(&q, key);
    knut_buf_puts(&q, ")::HUGEINT - min(");
    knut_duck_ident(&q, key);
    knut_buf_printf(&q, ")::HUGEINT + 1 > %lld)::BIGINT FROM " BATCH,
                    (long long)UNIQUE_BITMAP_SPAN);
    if (st == KNUT_OK && (st = knut_buf_check(&q, err)) == KNUT_OK)
        st = knut_sync__q_int(c, q.data, NULL, &wide, err);
    knut_buf_clear(&q);
    knut_buf_puts(&q, "SELECT max(");
    knut_duck_ident(&q, key);
    knut_buf_puts(&q, ") FROM " BATCH);
    if (st == KNUT_OK && !wide && (st = knut_buf_check(&q, err)) == KNUT_OK)
        st = knut_sync__q_int(c, q.data, NULL, &hi, err);
    if (st == KNUT_OK && !wide)
        *span = hi - *lo + 1;
    knut_buf_reset(&q);
    return st;
}

static knut_status group_check(knut_duck_conn *c, const char *const *keys, size_t n,
                               int *unique, knut_error *err)
{
    knut_buf q = KNUT_BUF_INIT;
    int64_t dups = 1;
    knut_buf_puts(&q, "SELECT count(*) FROM (SELECT 1 FROM " BATCH " GROUP BY ");
    for (size_t i = 0; i < n; i++) {
        if (i)
            knut_buf_puts(&q, ", ");
        knut_duck_ident(&q, keys[i]);
    }
    knut_buf_puts(&q, " HAVING count(*) > 1 LIMIT 1)");
    knut_status st = knut_buf_check(&q, err);
    if (st == KNUT_OK)
        st = knut_sync__q_int(c, q.data, NULL, &dups, err);
    *unique = st == KNUT_OK && dups == 0;
    knut_buf_reset(&q);
    return st;
}

knut_status knut_sync__batch_keys_unique(knut_duck_db *db, const char *const *keys, size_t n,
                                         int *unique, knut_error *err)
{
    knut_duck_conn *c = NULL;
    knut_buf q = KNUT_BUF_INIT;
    struct ArrowArrayStream s = {0};
    struct ArrowSchema sc = {0};
    int64_t rows = 0, lo = 0, span = 0;
    knut_error e = KNUT_ERROR_INIT;
    *unique = 0;
    knut_status st = knut_sync__stage_conn(&c, db, err);
    if (st != KNUT_OK || n == 0)
        goto cleanup;
    st = knut_sync__q_int(c, "SELECT count(*) FROM " BATCH, NULL, &rows, err);
    if (st != KNUT_OK)
        goto cleanup;
    if (n == 1) {
        knut_buf_puts(&q, "SELECT ");
        knut_duck_ident(&q, keys[0]);
        knut_buf_puts(&q, " FROM " BATCH " LIMIT 0");
        if ((st = knut_buf_check(&q, err)) == KNUT_OK)
            st = knut_duck_query(c, q.data, &s, err);
        if (st == KNUT_OK && s.get_schema(&s, &sc) != 0)
            st = knut_error_set(err, KNUT_EIO, "%s", s.get_last_error(&s));
        knut_arrow_stream_release(&s);
        if (st != KNUT_OK)
            goto cleanup;
        if (sc.n_children == 1 && integer_format(sc.children[0]->format)) {
            /* the checks below fail into "not unique", never the round */
            if (key_span(c, keys[0], &lo, &span, &e) == KNUT_OK && span > 0 &&
                bitmap_check(c, keys[0], lo, span, unique, &e) == KNUT_OK)
                goto cleanup;
            knut_error_clear(&e);
        }
    }
    if (rows <= UNIQUE_GROUP_ROWS && group_check(c, keys, n, unique, &e) != KNUT_OK)
        *unique = 0; /* out of memory, say: the window path then */
cleanup:
    knut_arrow_schema_release(&sc);
    knut_buf_reset(&q);
    knut_duck_conn_close(c);
    return st;
}
