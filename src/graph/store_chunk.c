/*
 * A large upsert-only mutation in several transactions. DuckDB keeps the
 * transaction-local part of a table's primary-key index (ART) in memory
 * until COMMIT, so one transaction of 10M new vertices needs far more
 * than its memory_limit can spill. Here each set's staged rows are split
 * by a hash of their keys into ceil(rows / txn_rows) chunks, each upserted
 * in its own transaction; the commit callback (the sync ledger) runs in
 * the last one only. Sets go in order (every vertex set's chunks before
 * any edge set's), so an edge finds the vertices of its own mutation as
 * in one transaction. docs/sync.md, "Memory".
 *
 * Why a crash or failure between chunks is harmless: every row of a key
 * lands in the same chunk (the hash is of the key), so a chunk's
 * last-row-wins is the whole set's; upserts are idempotent, so applying
 * the mutation again (nothing is recorded done until the last commit)
 * gives the same graph, vertex ids kept (ON CONFLICT updates in place)
 * and label memberships not doubled (an anti-join). That holds only for
 * upserts: a mutation with delete rows, or with an edge set whose missing
 * endpoint fails the apply, stays one transaction (knut_graph__store_chunks),
 * as a failed or half-applied delete could turn a re-apply's edge into a
 * skipped one.
 */
#include "store_apply_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Far more than any memory needs: each chunk scans the stage once. */
#define CHUNKS_MAX 4096

static int64_t txn_rows(const knut_graph_store *s)
{
    return s->txn_rows > 0 ? s->txn_rows : KNUT_GS_TXN_ROWS;
}

static size_t set_chunks(const knut_graph_store *s, const set_job *j)
{
    int64_t per = txn_rows(s);
    int64_t c = (j->staged + per - 1) / per;
    return c < 1 ? 1 : c > CHUNKS_MAX ? CHUNKS_MAX : (size_t)c;
}

size_t knut_graph__store_chunks(const knut_graph_store *s, const set_job *jobs, size_t n)
{
    size_t most = 1;
    for (size_t i = 0; i < n; i++) {
        const knut_graph_set *set = jobs[i].set;
        if ((set->kind == KNUT_GRAPH_SET_DELETE || set->kind == KNUT_GRAPH_SET_EDGE_DELETE) &&
            jobs[i].staged > 0)
            return 1;
        if (set->kind == KNUT_GRAPH_SET_EDGE &&
            set->missing_endpoints == KNUT_GRAPH_MISSING_FAIL && jobs[i].staged > 0)
            return 1;
        size_t c = set_chunks(s, &jobs[i]);
        if (c > most)
            most = c;
    }
    return most;
}

/* The key columns the set's last-row-wins partitions by. */
static void key_hash(knut_buf *q, const knut_graph_set *set)
{
    const knut_graph_column *groups[] = {set->src_keys, set->dst_keys, set->keys};
    const size_t ns[] = {set->kind == KNUT_GRAPH_SET_EDGE ? set->n_src_keys : 0,
                         set->kind == KNUT_GRAPH_SET_EDGE ? set->n_dst_keys : 0, set->n_keys};
    int first = 1;
    knut_buf_puts(q, "hash(");
    for (size_t g = 0; g < 3; g++)
        for (size_t k = 0; k < ns[g]; k++) {
            if (!first)
                knut_buf_puts(q, ", ");
            first = 0;
            knut_duck_ident(q, groups[g][k].column);
        }
    knut_buf_putc(q, ')');
}

/* Points the set's statements (built over j->src_name) at chunk c of
 * n: a temporary view over its stage (made in the open transaction). */
static knut_status chunk_view(set_job *j, size_t c, size_t n, knut_error *err)
{
    knut_buf q = KNUT_BUF_INIT;
    knut_buf_puts(&q, "CREATE OR REPLACE TEMP VIEW ");
    knut_duck_ident(&q, j->src_name);
    knut_buf_puts(&q, " AS SELECT * FROM ");
    knut_duck_ident(&q, j->stage_name);
    knut_buf_puts(&q, " WHERE ");
    key_hash(&q, j->set);
    knut_buf_printf(&q, " %% %zu = %zu", n, c);
    knut_status st = knut_buf_check(&q, err);
    if (st == KNUT_OK)
        st = knut_duck_exec(j->s->conn, q.data, err);
    knut_buf_reset(&q);
    return st;
}

static int64_t chunk_rows(set_job *j)
{
    knut_buf q = KNUT_BUF_INIT;
    int64_t rows = 0;
    knut_buf_puts(&q, "SELECT count(*) FROM ");
    knut_duck_ident(&q, j->src_name);
    if (knut_buf_check(&q, NULL) != KNUT_OK ||
        knut_graph__store_scalar_i64(j->s->conn, q.data, NULL, 0, &rows, NULL) != KNUT_OK)
        rows = 0;
    knut_buf_reset(&q);
    return rows;
}

knut_status knut_graph__store_apply_chunked(knut_graph_store *s, set_job *jobs, size_t n,
                                            size_t chunks, const knut_graph_sink_commit *commit,
                                            knut_error *err)
{
    knut_status st = KNUT_OK;
    int in_txn = 0, committed = 0;
    knut_error ignored = KNUT_ERROR_INIT;
    for (size_t i = 0; i < n && st == KNUT_OK; i++) {
        set_job *j = &jobs[i];
        size_t nc = set_chunks(s, j);
        if (nc > 1)
            snprintf(j->src_name, sizeof j->src_name, "_knut_chunk_%zu", i);
        for (size_t c = 0; c < nc && st == KNUT_OK; c++) {
            int last = i == n - 1 && c == nc - 1;
            if (!in_txn && (st = knut_duck_exec(s->conn, "BEGIN TRANSACTION", err)) == KNUT_OK)
                in_txn = 1;
            if (st == KNUT_OK && nc > 1)
                st = chunk_view(j, c, nc, err);
            if (st == KNUT_OK && c == 0)
                st = knut_graph__store_set_prepare(j, err);
            int64_t rows = nc > 1 ? chunk_rows(j) : j->staged;
            if (st == KNUT_OK && rows > 0)
                st = knut_graph__store_set_apply(j, rows, j->stats, err);
            if (st == KNUT_OK && last) {
                st = knut_graph__store_commit(s, commit, err);
                in_txn = st != KNUT_OK;
            } else if (st == KNUT_OK && (nc > 1 || c == nc - 1)) {
                /* a chunk, or a small set before the next set's chunks */
                if ((st = knut_duck_exec(s->conn, "COMMIT", err)) == KNUT_OK) {
                    in_txn = 0;
                    committed = 1;
                    KNUT_LOG(KNUT_LOG_DEBUG, "graph", "graph store: set '%s': chunk %zu/%zu "
                             "committed (%" PRId64 " rows)", j->set->name, c + 1, nc, rows);
                }
            }
        }
    }
    if (in_txn)
        knut_duck_exec(s->conn, "ROLLBACK", &ignored);
    for (size_t i = 0; i < n; i++)
        if (strncmp(jobs[i].src_name, "_knut_chunk_", 12) == 0) {
            char q[96];
            snprintf(q, sizeof q, "DROP VIEW IF EXISTS temp.\"%s\"", jobs[i].src_name);
            knut_duck_exec(s->conn, q, &ignored);
        }
    if (st != KNUT_OK && committed && err) {
        /* part of it is in, nothing recorded: not the data's fault (the
         * data checks ran in the first transaction), so it is applied
         * again, not failed for good */
        knut_error_prefix(err, "applied in part (%zu transactions), nothing recorded: ", chunks);
        if (st == KNUT_EINVAL) {
            st = KNUT_EIO;
            err->code = KNUT_EIO;
        }
    }
    return st;
}
