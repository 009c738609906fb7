/*
 * Rounds of tables with `spark:` (docs/sync.md "Spark tables"): a table
 * behind a Spark Connect server, its changes found by comparing it with
 * the state last synced, kept as a Parquet file in the table's state
 * folder. The ledger holds one entry per such table: its path
 * "spark:<table>", its hash the table's fingerprint when it was read
 * (count, xor and sum of a 64-bit hash of every row, Spark's xxhash64 over
 * every column and whether it is null, computed by Spark: an unchanged
 * table costs one aggregate query a round, nothing crosses the wire).
 *
 * A round asks for the fingerprint; when it is not the recorded one, the
 * table is read whole (the Arrow stream into DuckDB, then COPY into
 * <state>/<key>-<fingerprint>.parquet) and the fingerprint asked again: a
 * table that changed while it was read is read again next round. What
 * changed is two EXCEPT ALLs against the last state: the rows it lost as
 * DELETE, the rows it gained as INSERT (an updated row is both: its key's
 * last event, the INSERT, wins), written into one file that goes down the
 * cdc path (step.c) with the new fingerprint as the ledger entry. The
 * state files are named by fingerprint, so the entry always names the
 * state the graph holds; a kill -9 before the commit leaves the old entry
 * and its file, after it the new ones (older files are removed after each
 * commit). With no state file for the recorded fingerprint (the folder
 * deleted), a schema change, or `mode: full`, the whole table is applied
 * with full.c's deletes of what it lacks.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "knut/net.h"
#include "knut/spark.h"
#include "sync_int.h"

#define SPARK_SQL_MAX ((size_t)16 << 20)
#define SPARK_TOKEN_ENV "SPARK_CONNECT_AUTHENTICATE_TOKEN"
#define SPARK_FP_LEN 48 /* three 64-bit values in hex */

knut_status knut_sync__spark_open(const knut_sync_table *t, knut_spark_session **out,
                                  knut_error *err)
{
    const knut_sync_spark *sp = t->spark;
    const char *url = sp->connect ? sp->connect : getenv("SPARK_REMOTE");
    char *token = NULL;
    *out = NULL;
    if (!url || !*url)
        return knut_error_set(err, KNUT_EINVAL, "table '%s': spark: no server: set 'connect:' "
                              "or $SPARK_REMOTE", t->name);
    knut_status st = KNUT_OK;
    if (sp->token_file)
        st = knut_net_secret_file_read(sp->token_file, &token, err);
    else if (getenv(SPARK_TOKEN_ENV) && *getenv(SPARK_TOKEN_ENV) &&
             !(token = strdup(getenv(SPARK_TOKEN_ENV))))
        st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
    if (st == KNUT_OK) {
        knut_spark_options o = KNUT_SPARK_OPTIONS_INIT;
        o.allow_insecure_token = sp->allow_insecure_token;
        o.ca_file = sp->ca_file;
        o.token = token;
        st = knut_spark_session_new(out, url, &o, err);
    }
    knut_net_secret_free(token);
    return st != KNUT_OK ? knut_error_prefix(err, "table '%s': spark: ", t->name) : st;
}

/* name as Spark SQL: each dot-separated part in backticks (the config
 * refuses backticks in it; a column's are doubled). */
void knut_sync__spark_ident(knut_buf *q, const char *name, int dotted)
{
    knut_buf_putc(q, '`');
    for (const char *p = name; *p; p++) {
        if (*p == '`')
            knut_buf_puts(q, "``");
        else if (*p == '.' && dotted)
            knut_buf_puts(q, "`.`");
        else
            knut_buf_putc(q, *p);
    }
    knut_buf_putc(q, '`');
}

knut_status knut_sync__spark_run(knut_spark_session *s, const knut_sync_table *t,
                                 const knut_buf *q, const knut_spark_param *params, size_t n,
                                 struct ArrowArrayStream *out, knut_error *err)
{
    knut_status st = knut_buf_check(q, err);
    if (st == KNUT_OK)
        st = knut_spark_sql_params(s, q->data, params, n, NULL, out, err);
    return st != KNUT_OK ? knut_error_prefix(err, "table '%s': spark: %s: ", t->name,
                                             t->spark->table)
                         : st;
}

/* Reads rows to its end (the operation then ends on the server as done,
 * not as a client that went away). */
knut_status knut_sync__spark_drain(struct ArrowArrayStream *rows, knut_error *err)
{
    int64_t n = 0;
    return knut_arrow_stream_count_rows(rows, &n, err);
}

/* The table's columns (its schema as Spark sends it) into *schema. */
static knut_status sp_schema(knut_spark_session *s, const knut_sync_table *t,
                             struct ArrowSchema *schema, knut_error *err)
{
    knut_buf q = KNUT_BUF_INIT;
    struct ArrowArrayStream rows = {0};
    knut_buf_puts(&q, "SELECT * FROM ");
    knut_sync__spark_ident(&q, t->spark->table, 1);
    knut_buf_puts(&q, " LIMIT 0");
    knut_status st = knut_sync__spark_run(s, t, &q, NULL, 0, &rows, err);
    int rc = st == KNUT_OK ? rows.get_schema(&rows, schema) : 0;
    if (rc != 0)
        st = knut_arrow_stream_error(&rows, rc, "the table's schema", err);
    if (st == KNUT_OK)
        st = knut_sync__spark_drain(&rows, err);
    if (st == KNUT_OK && schema->n_children == 0)
        st = knut_error_set(err, KNUT_EINVAL, "table '%s': spark: %s has no columns", t->name,
                            t->spark->table);
    knut_arrow_stream_release(&rows);
    knut_buf_reset(&q);
    return st;
}

/* The fingerprint of the table now into fp (SPARK_FP_LEN hex digits). */
static knut_status sp_fingerprint(knut_spark_session *s, const knut_sync_table *t,
                                  const struct ArrowSchema *cols, char *fp, knut_error *err)
{
    knut_buf q = KNUT_BUF_INIT;
    struct ArrowArrayStream rows = {0};
    struct ArrowSchema schema = {0};
    struct ArrowArray b = {0};
    knut_arrow_view v = {0};
    /* isnull() beside each value: xxhash64 skips nulls, so without it
     * (NULL, 1) and (1, NULL) would hash alike */
    knut_buf_puts(&q, "SELECT count(*), bit_xor(h), sum(h & 4294967295) FROM (SELECT xxhash64(");
    for (int64_t i = 0; i < cols->n_children; i++) {
        const char *name = cols->children[i]->name ? cols->children[i]->name : "";
        if (i)
            knut_buf_puts(&q, ", ");
        knut_sync__spark_ident(&q, name, 0);
        knut_buf_puts(&q, ", isnull(");
        knut_sync__spark_ident(&q, name, 0);
        knut_buf_putc(&q, ')');
    }
    knut_buf_puts(&q, ") AS h FROM ");
    knut_sync__spark_ident(&q, t->spark->table, 1);
    knut_buf_putc(&q, ')');
    knut_status st = knut_sync__spark_run(s, t, &q, NULL, 0, &rows, err);
    int rc = st == KNUT_OK ? rows.get_schema(&rows, &schema) : 0;
    if (rc == 0 && st == KNUT_OK)
        rc = rows.get_next(&rows, &b);
    if (rc != 0)
        st = knut_arrow_stream_error(&rows, rc, "the table's fingerprint", err);
    if (st == KNUT_OK && (!b.release || b.length != 1))
        st = knut_error_set(err, KNUT_EPARSE, "table '%s': spark: the fingerprint query gave "
                            "no row", t->name);
    if (st == KNUT_OK)
        st = knut_arrow_view_init(&v, &schema, &b, err);
    if (st == KNUT_OK && v.n_children != 3)
        st = knut_error_set(err, KNUT_EPARSE, "table '%s': spark: the fingerprint query gave "
                            "%" PRId64 " columns", t->name, v.n_children);
    if (st == KNUT_OK)
        st = knut_sync__spark_drain(&rows, err);
    if (st == KNUT_OK) {
        uint64_t x[3];
        for (int i = 0; i < 3; i++) /* an empty table: null xor and sum */
            x[i] = knut_arrow_view_is_null(&v.children[i], 0)
                       ? 0
                       : (uint64_t)knut_arrow_view_get_int64(&v.children[i], 0);
        snprintf(fp, SPARK_FP_LEN + 1, "%016" PRIx64 "%016" PRIx64 "%016" PRIx64, x[0], x[1],
                 x[2]);
    }
    knut_arrow_view_reset(&v);
    if (b.release)
        b.release(&b);
    knut_arrow_schema_release(&schema);
    knut_arrow_stream_release(&rows);
    knut_buf_reset(&q);
    return st;
}

/* <state>/<16 hex of the key>-<fp>.parquet (fp NULL: the prefix only). */
static knut_status sp_state_path(const knut_sync_table *t, const char *fp, knut_buf *out,
                                 knut_error *err)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a of the key: a file name for any table */
    for (const char *p = t->spark->key; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ULL;
    knut_buf_clear(out);
    knut_buf_printf(out, "%s/%016" PRIx64 "-", t->spark->state, h);
    if (fp)
        knut_buf_printf(out, "%s.parquet", fp);
    return knut_buf_check(out, err);
}

/* SELECT * FROM the Spark table into the state file `path` (through a
 * temporary name, so a file under its name is whole). */
static knut_status sp_read(knut_sync *s, knut_spark_session *ss, const knut_sync_table *t,
                           const char *path, knut_error *err)
{
    knut_buf q = KNUT_BUF_INIT, tmp = KNUT_BUF_INIT;
    knut_duck_conn *c = NULL;
    struct ArrowArrayStream rows = {0};
    knut_buf_puts(&q, "SELECT * FROM ");
    knut_sync__spark_ident(&q, t->spark->table, 1);
    knut_buf_printf(&tmp, "%s.tmp", path);
    knut_status st = knut_buf_check(&tmp, err);
    if (st == KNUT_OK && mkdir(t->spark->state, 0700) != 0 && errno != EEXIST)
        st = knut_error_set(err, KNUT_EIO, "table '%s': spark: cannot create the state folder "
                            "%s: %s", t->name, t->spark->state, strerror(errno));
    if (st == KNUT_OK)
        st = knut_sync__spark_run(ss, t, &q, NULL, 0, &rows, err);
    if (st == KNUT_OK)
        st = knut_sync__stage_conn(&c, s->stage, err);
    /* DuckDB holds the rows (spilling past its memory_limit), then writes */
    if (st == KNUT_OK)
        st = knut_duck_register_stream(c, "_knut_spark_read", &rows, err);
    if (st == KNUT_OK) {
        knut_buf_clear(&q);
        knut_buf_puts(&q, "COPY _knut_spark_read TO ");
        st = knut_duck_literal(&q, tmp.data, tmp.len);
        knut_buf_puts(&q, " (FORMAT parquet)");
        if (st == KNUT_OK)
            st = knut_buf_check(&q, err);
        if (st == KNUT_OK)
            st = knut_duck_exec(c, q.data, err);
        if (st == KNUT_OK && rename(tmp.data, path) != 0)
            st = knut_error_set(err, KNUT_EIO, "table '%s': spark: %s: %s", t->name, path,
                                strerror(errno));
        knut_error ignore = KNUT_ERROR_INIT;
        knut_duck_exec(c, "DROP TABLE IF EXISTS _knut_spark_read", &ignore);
    }
    if (st != KNUT_OK && tmp.data)
        unlink(tmp.data);
    knut_arrow_stream_release(&rows);
    knut_duck_conn_close(c);
    knut_buf_reset(&q);
    knut_buf_reset(&tmp);
    return st;
}

/* 1 when the two Arrow schemas have the same columns (names and types,
 * nested ones too). */
static int schema_same(const struct ArrowSchema *a, const struct ArrowSchema *b)
{
    if (strcmp(a->format, b->format) != 0 || a->n_children != b->n_children ||
        strcmp(a->name ? a->name : "", b->name ? b->name : "") != 0)
        return 0;
    for (int64_t i = 0; i < a->n_children; i++)
        if (!schema_same(a->children[i], b->children[i]))
            return 0;
    return 1;
}

/* 1 when the Parquet files at a and b read as the same columns. */
static knut_status files_same_columns(knut_duck_db *db, const char *a, const char *b, int *same,
                                      knut_error *err)
{
    struct ArrowSchema s[2] = {{0}, {0}};
    knut_duck_conn *c = NULL;
    knut_status st = knut_sync__stage_conn(&c, db, err);
    for (int i = 0; i < 2 && st == KNUT_OK; i++) {
        knut_buf q = KNUT_BUF_INIT;
        knut_duck_stmt *stmt = NULL;
        const char *p = i ? b : a;
        knut_buf_puts(&q, "SELECT * FROM read_parquet(");
        st = knut_duck_literal(&q, p, strlen(p));
        knut_buf_putc(&q, ')');
        if (st == KNUT_OK)
            st = knut_buf_check(&q, err);
        if (st == KNUT_OK)
            st = knut_duck_stmt_prepare(&stmt, c, q.data, err);
        if (st == KNUT_OK)
            st = knut_duck_stmt_schema(stmt, &s[i], err);
        knut_duck_stmt_free(stmt);
        knut_buf_reset(&q);
    }
    *same = st == KNUT_OK && schema_same(&s[0], &s[1]);
    knut_arrow_schema_release(&s[0]);
    knut_arrow_schema_release(&s[1]);
    knut_duck_conn_close(c);
    return st;
}

/* The rows of the step's file: with base, base's rows that cur lacks as
 * DELETEs, then cur's that base lacks as INSERTs; without, all of cur
 * (tagged INSERT when the table is cdc). */
static knut_status sp_changes_sql(knut_buf *q, const knut_sync_table *t, const char *base,
                                  const char *cur, knut_error *err)
{
    knut_buf b = KNUT_BUF_INIT, c = KNUT_BUF_INIT;
    knut_buf_puts(&c, "read_parquet(");
    knut_status st = knut_duck_literal(&c, cur, strlen(cur));
    knut_buf_putc(&c, ')');
    if (base) {
        knut_buf_puts(&b, "read_parquet(");
        if (st == KNUT_OK)
            st = knut_duck_literal(&b, base, strlen(base));
        knut_buf_putc(&b, ')');
    }
    if (st == KNUT_OK && (st = knut_buf_check(&b, err)) == KNUT_OK &&
        (st = knut_buf_check(&c, err)) == KNUT_OK) {
        if (!base)
            knut_buf_printf(q, "SELECT *%s FROM %s",
                            t->mode == KNUT_SYNC_MODE_CDC
                                ? ", 'INSERT' AS " KNUT_SYNC_CHANGE_COLUMN
                                : "",
                            c.data);
        else /* DELETEs first: a key both lost and gained ends as its INSERT */
            knut_buf_printf(q, "SELECT * EXCLUDE (_knut_o) FROM ("
                            "SELECT *, 'DELETE' AS " KNUT_SYNC_CHANGE_COLUMN ", 0 AS _knut_o "
                            "FROM (SELECT * FROM %s EXCEPT ALL SELECT * FROM %s) UNION ALL "
                            "SELECT *, 'INSERT', 1 FROM (SELECT * FROM %s EXCEPT ALL SELECT * "
                            "FROM %s)) ORDER BY _knut_o",
                            b.data, c.data, c.data, b.data);
        st = knut_buf_check(q, err);
    }
    knut_buf_reset(&b);
    knut_buf_reset(&c);
    return st;
}

/* After a commit: the table's state files other than keep are removed. */
static void sp_prune(const knut_sync_table *t, const char *keep)
{
    knut_buf prefix = KNUT_BUF_INIT, p = KNUT_BUF_INIT;
    knut_error ignore = KNUT_ERROR_INIT;
    DIR *d = sp_state_path(t, NULL, &prefix, &ignore) == KNUT_OK ? opendir(t->spark->state)
                                                                  : NULL;
    const char *base = prefix.data ? strrchr(prefix.data, '/') + 1 : NULL;
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL) {
        if (strncmp(de->d_name, base, strlen(base)) != 0)
            continue;
        knut_buf_clear(&p);
        knut_buf_printf(&p, "%s/%s", t->spark->state, de->d_name);
        if (p.error == KNUT_OK && strcmp(p.data, keep) != 0)
            unlink(p.data);
    }
    if (d)
        closedir(d);
    knut_buf_reset(&prefix);
    knut_buf_reset(&p);
}

/* The fingerprint the ledger records as applied; 0 when none is. */
static int sp_applied(knut_sync *s, const knut_sync_table *t, char *fp)
{
    const sync_entry *e = knut_sync__ledger_find(&s->ledger, t->name, t->spark->key);
    if (!e || strcmp(e->status, "done") != 0 || !e->hash || strlen(e->hash) != SPARK_FP_LEN)
        return 0;
    memcpy(fp, e->hash, SPARK_FP_LEN + 1);
    return 1;
}

knut_status knut_sync__spark_table(knut_sync *s, const knut_sync_table *t, sync_table_stats *ts,
                                   knut_error *err)
{
    knut_spark_session *ss = NULL;
    struct ArrowSchema cols = {0};
    knut_buf cur = KNUT_BUF_INIT, base = KNUT_BUF_INIT, q;
    char fp[SPARK_FP_LEN + 1], again[SPARK_FP_LEN + 1], was[SPARK_FP_LEN + 1];
    char note[KNUT_ERROR_MSG_MAX] = "";
    char *file = NULL;
    int done = 0, full = t->mode == KNUT_SYNC_MODE_FULL, read = 0;
    struct stat sb;
    knut_buf_init(&q, SPARK_SQL_MAX);
    knut_status st = knut_sync__spark_open(t, &ss, err);
    if (st == KNUT_OK)
        st = sp_schema(ss, t, &cols, err);
    if (st == KNUT_OK)
        st = sp_fingerprint(ss, t, &cols, fp, err);
    if (st != KNUT_OK)
        goto cleanup;
    int have = sp_applied(s, t, was);
    if (have && strcmp(was, fp) == 0)
        goto cleanup; /* idle: the table is as last synced */
    const sync_entry *e0 = knut_sync__ledger_find(&s->ledger, t->name, t->spark->key);
    if (!have && e0 && strcmp(e0->status, "done") == 0 && e0->hash && !full)
        snprintf(note, sizeof note, "full resync: the recorded version is not a fingerprint "
                 "(the table was synced with changes: changelog)");
    if ((st = sp_state_path(t, fp, &cur, err)) != KNUT_OK ||
        (have && (st = sp_state_path(t, was, &base, err)) != KNUT_OK))
        goto cleanup;
    if ((st = sp_read(s, ss, t, cur.data, err)) != KNUT_OK)
        goto cleanup;
    read = 1;
    if ((st = sp_fingerprint(ss, t, &cols, again, err)) != KNUT_OK)
        goto cleanup;
    if (strcmp(again, fp) != 0) {
        /* what was read may be neither state: read again next round */
        knut_sync__step_log(KNUT_LOG_INFO, s, t, fp, "the table changed while it was read",
                            "version waiting");
        ts->pending++;
        goto cleanup;
    }
    int diff = have && !full && !note[0];
    if (diff && stat(base.data, &sb) != 0) {
        snprintf(note, sizeof note, "full resync: the state last synced (%s) is gone",
                 base.data);
        diff = 0;
    }
    int same = 1;
    if (diff && (st = files_same_columns(s->stage, base.data, cur.data, &same, err)) != KNUT_OK)
        goto cleanup;
    if (diff && !same) {
        snprintf(note, sizeof note, "full resync: the table's columns changed");
        diff = 0;
    }
    if (note[0]) {
        /* no changes to apply: only the whole table is safe */
        knut_sync__step_log(KNUT_LOG_WARN, s, t, fp, note,
                            "spark table resynced whole (what it lacks is deleted)");
        if ((st = knut_sync__step_owns(s, t, err)) != KNUT_OK) {
            knut_error_prefix(err, "table '%s': spark: a %s, but: ", t->name, note);
            goto cleanup;
        }
        full = 1;
    }
    st = sp_changes_sql(&q, t, diff ? base.data : NULL, cur.data, err);
    if (st == KNUT_OK)
        st = knut_sync__step_write(s->stage, q.data, &file, err);
    if (st != KNUT_OK)
        goto cleanup;
    st = knut_sync__step_apply(s, t, file, (int64_t)time(NULL) * 1000000000, full, t->spark->key,
                               fp, note[0] ? note : NULL, ts, &done, err);
cleanup:
    if (st == KNUT_OK && done)
        sp_prune(t, cur.data); /* the entry names cur now */
    else if (read)
        unlink(cur.data); /* the entry still names base */
    knut_arrow_schema_release(&cols);
    knut_spark_session_free(ss);
    knut_buf_reset(&cur);
    knut_buf_reset(&base);
    knut_buf_reset(&q);
    return st;
}

knut_status knut_sync__spark_schema_file(knut_duck_db *db, const knut_sync_table *t, char **out,
                                         knut_error *err)
{
    knut_spark_session *ss = NULL;
    knut_duck_conn *c = NULL;
    struct ArrowArrayStream rows = {0};
    knut_buf q = KNUT_BUF_INIT;
    *out = NULL;
    knut_status st = knut_sync__spark_open(t, &ss, err);
    knut_buf_puts(&q, "SELECT * FROM ");
    knut_sync__spark_ident(&q, t->spark->table, 1);
    knut_buf_puts(&q, " LIMIT 0");
    if (st == KNUT_OK)
        st = knut_sync__spark_run(ss, t, &q, NULL, 0, &rows, err);
    if (st == KNUT_OK)
        st = knut_sync__stage_conn(&c, db, err);
    if (st == KNUT_OK)
        st = knut_duck_register_stream(c, "_knut_spark_cols", &rows, err);
    knut_arrow_stream_release(&rows);
    knut_buf_clear(&q);
    knut_buf_printf(&q, "SELECT *%s FROM _knut_spark_cols",
                    t->mode == KNUT_SYNC_MODE_CDC ? ", 'INSERT' AS " KNUT_SYNC_CHANGE_COLUMN : "");
    if (st == KNUT_OK)
        st = knut_sync__step_write_on(c, q.data, out, err);
    knut_duck_conn_close(c);
    knut_spark_session_free(ss);
    knut_buf_reset(&q);
    return st;
}
