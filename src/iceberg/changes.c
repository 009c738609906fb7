/*
 * The changelog between two snapshots, row by row, as one DuckDB SELECT:
 * the table's columns (by field id, under the newer snapshot's schema)
 * plus _change_type ('INSERT' or 'DELETE', what knut sync's CDC mode
 * reads), _change_ordinal (the commit's position in the window, from 0)
 * and _commit_snapshot_id — the columns Spark's changelog views use.
 *
 * The window is the lineage from `to` back to `from` (parent links): each
 * snapshot after `from`, oldest first, contributes
 *  - append: an INSERT for every row of the data files it added (a file
 *    added by a snapshot is touched by no delete of it or before it: the
 *    sequence-number rules);
 *  - replace (compaction, a format change): nothing, the rows are the
 *    same;
 *  - delete, overwrite, or anything else: what it took away and what it
 *    added, from the files it changed (put_diff below), each side less
 *    the other (EXCEPT ALL, duplicates kept) — rows that vanished are
 *    DELETEs, new ones INSERTs. That covers every kind of delete
 *    (copy-on-write rewrites, position and equality deletes) and drops
 *    carry-overs, reading only the files the commit touched.
 * Within a commit DELETEs come before INSERTs, so an updated row reads as
 * its old value deleted and its new value inserted.
 *
 * `from` not on the lineage of `to` (expired, or rolled back by a
 * snapshot-log jump) is KNUT_ENOTFOUND with a message saying a full
 * resync is needed: guessing a diff across a break would lose changes.
 * `from` = -1 is the start: every row of `to` as an INSERT.
 */
#include "iceberg_int.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define SQL_MAX ((size_t)512 << 20)
/* Commits in one window: a bound on the SQL text. */
#define MAX_WINDOW 10000

/* The rows of snapshot s read under schema_id, as a parenthesised
 * SELECT; added_only keeps only the data files s itself added, and no
 * deletes. */
static knut_status put_rows(knut_buf *b, const knut_iceberg_table *t, int64_t s,
                            int32_t schema_id, int added_only, knut_error *err)
{
    knut_iceberg_plan p;
    knut_status st = knut_iceberg_plan_build(&p, t, s, err);
    if (st != KNUT_OK)
        return st;
    p.schema_id = schema_id;
    size_t n_all = p.n_data, n_del = p.n_deletes;
    if (added_only) {
        /* Kept entries swapped to the front: every entry is still in the
         * array once, for plan_free. */
        size_t k = 0;
        for (size_t i = 0; i < p.n_data; i++)
            if (p.data[i].status == KNUT_ICEBERG_ADDED && p.data[i].snapshot_id == s) {
                knut_iceberg_data_file tmp = p.data[k];
                p.data[k++] = p.data[i];
                p.data[i] = tmp;
            }
        p.n_data = k;
        p.n_deletes = 0;
    }
    knut_buf_puts(b, "(");
    st = knut_iceberg_plan_sql(b, t, &p, err);
    knut_buf_puts(b, ")");
    p.n_data = n_all;
    p.n_deletes = n_del;
    knut_iceberg_plan_free(&p);
    return st;
}

static void put_tag(knut_buf *b, const char *kind, size_t ordinal, int64_t s)
{
    knut_buf_printf(b, "SELECT *, '%s' AS _change_type, %zu AS _change_ordinal, %" PRId64
                       "::BIGINT AS _commit_snapshot_id FROM ", kind, ordinal, s);
}

/* ---- a commit's difference, from the files it changed ------------------ */

static int cmp_path(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The paths of files[0..n) sorted, for lookups; NULL on no memory. */
static const char **paths_sorted(const knut_iceberg_data_file *files, size_t n)
{
    const char **v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return NULL;
    for (size_t i = 0; i < n; i++)
        v[i] = files[i].path;
    qsort(v, n, sizeof *v, cmp_path);
    return v;
}

static int has_path(const char **sorted, size_t n, const char *path)
{
    return bsearch(&path, sorted, n, sizeof *sorted, cmp_path) != NULL;
}

/* files[i] (shallow copies) whose path is (in = 1) or is not (in = 0) in
 * sorted: the strings stay owned by their plan. */
static knut_iceberg_data_file *pick(const knut_iceberg_data_file *files, size_t n,
                                    const char **sorted, size_t n_sorted, int in, size_t *n_out)
{
    knut_iceberg_data_file *v = malloc((n ? n : 1) * sizeof *v);
    *n_out = 0;
    for (size_t i = 0; v && i < n; i++)
        if (has_path(sorted, n_sorted, files[i].path) == in)
            v[(*n_out)++] = files[i];
    return v;
}

/* The old way, for a commit whose parent is not there or which dropped a
 * delete file: the two-way difference of the full reads. */
static knut_status put_full_diff(knut_buf *b, const knut_iceberg_table *t,
                                 const knut_iceberg_snapshot *s, size_t ordinal,
                                 int32_t schema_id, knut_error *err)
{
    knut_status st = KNUT_OK;
    for (int dir = 0; dir < 2 && st == KNUT_OK; dir++) {
        if (dir)
            knut_buf_puts(b, " UNION ALL ");
        put_tag(b, dir ? "INSERT" : "DELETE", ordinal, s->snapshot_id);
        knut_buf_puts(b, "(");
        int64_t a = dir ? s->snapshot_id : s->parent_id, z = dir ? s->parent_id : s->snapshot_id;
        if (a < 0) {
            knut_buf_puts(b, "SELECT * FROM ");
            st = put_rows(b, t, z, schema_id, 0, err);
            knut_buf_puts(b, " WHERE false");
        } else {
            knut_buf_puts(b, "SELECT * FROM ");
            st = put_rows(b, t, a, schema_id, 0, err);
            if (st == KNUT_OK && z >= 0) {
                knut_buf_puts(b, " EXCEPT ALL SELECT * FROM ");
                st = put_rows(b, t, z, schema_id, 0, err);
            }
        }
        knut_buf_puts(b, ")");
    }
    return st;
}

/*
 * A delete or overwrite, from the files it changed (P the parent's plan,
 * C the commit's): with R the data files it removed, A those it added, F
 * those it kept and N the delete files it added,
 *   gone = rows(R, P's deletes) + the rows of F that N deletes
 *   new  = rows(A, C's deletes)
 * and the commit's DELETEs are gone EXCEPT ALL new, its INSERTs new EXCEPT
 * ALL gone (a row rewritten unchanged, a copy-on-write carry-over, cancels
 * out). That equals the difference of the full reads whenever C keeps all
 * of P's delete files, and reads only what changed: the hash tables are as
 * large as the change, not the table.
 */
static knut_status put_diff(knut_buf *b, const knut_iceberg_table *t,
                            const knut_iceberg_snapshot *s, size_t ordinal, int32_t schema_id,
                            knut_error *err)
{
    if (s->parent_id < 0)
        return put_full_diff(b, t, s, ordinal, schema_id, err);
    knut_iceberg_plan P = {0}, C = {0};
    const char **pd = NULL, **cd = NULL, **px = NULL, **cx = NULL;
    knut_iceberg_data_file *R = NULL, *A = NULL, *F = NULL, *N = NULL;
    size_t nR = 0, nA = 0, nF = 0, nN = 0, kept = 0;
    knut_status st = knut_iceberg_plan_build(&P, t, s->parent_id, err);
    if (st != KNUT_OK || (st = knut_iceberg_plan_build(&C, t, s->snapshot_id, err)) != KNUT_OK)
        goto done;
    pd = paths_sorted(P.data, P.n_data);
    cd = paths_sorted(C.data, C.n_data);
    px = paths_sorted(P.deletes, P.n_deletes);
    cx = paths_sorted(C.deletes, C.n_deletes);
    if (pd && cd && px && cx) {
        R = pick(P.data, P.n_data, cd, C.n_data, 0, &nR);
        F = pick(P.data, P.n_data, cd, C.n_data, 1, &nF);
        A = pick(C.data, C.n_data, pd, P.n_data, 0, &nA);
        N = pick(C.deletes, C.n_deletes, px, P.n_deletes, 0, &nN);
        free(pick(P.deletes, P.n_deletes, cx, C.n_deletes, 1, &kept));
    }
    if (!R || !F || !A || !N) {
        st = knut_error_set(err, KNUT_ENOMEM, "iceberg: out of memory");
        goto done;
    }
    if (kept != P.n_deletes) { /* a delete file went: rows may come back */
        st = put_full_diff(b, t, s, ordinal, schema_id, err);
        goto done;
    }
    for (int dir = 0; dir < 2 && st == KNUT_OK; dir++) {
        if (dir)
            knut_buf_puts(b, " UNION ALL ");
        put_tag(b, dir ? "INSERT" : "DELETE", ordinal, s->snapshot_id);
        for (int side = 0; side < 2 && st == KNUT_OK; side++) {
            knut_buf_puts(b, side ? " EXCEPT ALL " : "(");
            if ((side == 0) == (dir == 0)) { /* gone */
                knut_buf_puts(b, "(SELECT * FROM ");
                st = knut_iceberg__rows_sql(b, t, schema_id, R, nR, P.deletes, P.n_deletes,
                                            NULL, 0, err);
                knut_buf_puts(b, " UNION ALL SELECT * FROM ");
                if (st == KNUT_OK)
                    st = knut_iceberg__rows_sql(b, t, schema_id, F, nF, P.deletes, P.n_deletes,
                                                N, nN, err);
                knut_buf_puts(b, ")");
            } else { /* new */
                knut_buf_puts(b, "SELECT * FROM ");
                st = knut_iceberg__rows_sql(b, t, schema_id, A, nA, C.deletes, C.n_deletes,
                                            NULL, 0, err);
            }
        }
        knut_buf_puts(b, ")");
    }
done:
    free(R);
    free(A);
    free(F);
    free(N);
    free(pd);
    free(cd);
    free(px);
    free(cx);
    knut_iceberg_plan_free(&P);
    knut_iceberg_plan_free(&C);
    return st;
}

/* One commit's changes, a UNION ALL branch (or nothing for a replace). */
static knut_status put_commit(knut_buf *b, const knut_iceberg_table *t,
                              const knut_iceberg_snapshot *s, size_t ordinal, int32_t schema_id,
                              int *first, knut_error *err)
{
    if (strcmp(s->operation, "replace") == 0)
        return KNUT_OK;
    if (!*first)
        knut_buf_puts(b, " UNION ALL ");
    *first = 0;
    if (strcmp(s->operation, "append") == 0) {
        put_tag(b, "INSERT", ordinal, s->snapshot_id);
        return put_rows(b, t, s->snapshot_id, schema_id, 1, err);
    }
    return put_diff(b, t, s, ordinal, schema_id, err);
}

knut_status knut_iceberg_changes_sql(knut_buf *b, const knut_iceberg_table *t, int64_t from_id,
                                     int64_t to_id, knut_error *err)
{
    KNUT_ASSERT_ARG(err, b && t);
    if (to_id < 0)
        to_id = t->current_snapshot_id;
    const knut_iceberg_snapshot *to = to_id >= 0 ? knut_iceberg_table_snapshot(t, to_id) : NULL;
    if (to_id >= 0 && !to)
        return knut_error_set(err, KNUT_ENOTFOUND, "%s: no snapshot %" PRId64, t->metadata_path,
                              to_id);
    if (from_id >= 0 && !knut_iceberg_table_snapshot(t, from_id))
        return knut_error_set(err, KNUT_ENOTFOUND,
                              "%s: snapshot %" PRId64 " is gone (expired): a full resync is "
                              "needed", t->metadata_path, from_id);
    /* The window, newest first, by parent links. */
    const knut_iceberg_snapshot **win = calloc(MAX_WINDOW, sizeof *win);
    if (!win)
        return knut_error_set(err, KNUT_ENOMEM, "iceberg: out of memory");
    size_t n = 0;
    knut_status st = KNUT_OK;
    for (const knut_iceberg_snapshot *s = to; s && s->snapshot_id != from_id;) {
        if (n == MAX_WINDOW) {
            st = knut_error_set(err, KNUT_ETOOBIG, "%s: more than %d commits between snapshots "
                                "%" PRId64 " and %" PRId64, t->metadata_path, MAX_WINDOW,
                                from_id, to_id);
            goto done;
        }
        win[n++] = s;
        if (from_id < 0)
            break; /* from the start: all of `to` at once, below */
        if (s->parent_id < 0) {
            s = NULL;
        } else if (!(s = knut_iceberg_table_snapshot(t, win[n - 1]->parent_id))) {
            st = knut_error_set(err, KNUT_ENOTFOUND,
                                "%s: snapshot %" PRId64 " is not an ancestor of %" PRId64
                                " (expired or rolled back): a full resync is needed",
                                t->metadata_path, from_id, to_id);
            goto done;
        }
    }
    if (from_id >= 0 && (n == 0 ? to_id != from_id : win[n - 1]->parent_id != from_id)) {
        st = knut_error_set(err, KNUT_ENOTFOUND,
                            "%s: snapshot %" PRId64 " is not an ancestor of %" PRId64
                            " (expired or rolled back): a full resync is needed",
                            t->metadata_path, from_id, to_id);
        goto done;
    }
    int32_t schema_id = t->current_schema_id;
    if (to && to->schema_id >= 0 && knut_iceberg_table_schema(t, to->schema_id))
        schema_id = to->schema_id;
    int first = 1;
    knut_buf_puts(b, "SELECT * FROM (");
    if (from_id < 0 && to) {
        /* From the start (an initial sync): every row of `to` is an
         * INSERT, whatever history led there (it may be expired). */
        put_tag(b, "INSERT", 0, to->snapshot_id);
        st = put_rows(b, t, to->snapshot_id, schema_id, 0, err);
        first = 0;
        n = 0;
    }
    for (size_t i = n; i-- > 0 && st == KNUT_OK;)
        st = put_commit(b, t, win[i], n - 1 - i, schema_id, &first, err);
    if (st != KNUT_OK)
        goto done;
    if (first) { /* nothing changed: an empty result with the columns */
        knut_iceberg_plan p = {.snapshot_id = -1, .schema_id = schema_id};
        put_tag(b, "INSERT", 0, 0);
        knut_buf_puts(b, "(");
        st = knut_iceberg_plan_sql(b, t, &p, err);
        knut_buf_puts(b, ")");
    }
    knut_buf_puts(b, ") ORDER BY _change_ordinal, _change_type");
    if (st == KNUT_OK)
        st = knut_buf_check(b, err);
done:
    free(win);
    return st;
}

knut_status knut_iceberg_changes(knut_duck_conn *conn, const knut_iceberg_table *t,
                                 int64_t from_id, int64_t to_id, int64_t limit,
                                 struct ArrowArrayStream *out, knut_error *err)
{
    KNUT_ASSERT_ARG(err, conn && t && out);
    knut_buf sql;
    knut_buf_init(&sql, SQL_MAX);
    knut_status st = knut_iceberg_changes_sql(&sql, t, from_id, to_id, err);
    if (st == KNUT_OK && limit > 0)
        st = knut_buf_printf(&sql, " LIMIT %" PRId64, limit);
    if (st == KNUT_OK && (st = knut_duck_query(conn, sql.data, out, err)) != KNUT_OK)
        knut_error_prefix(err, "%s: changes: ", t->metadata_path);
    knut_buf_reset(&sql);
    return st;
}
