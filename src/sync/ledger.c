/*
 * The ledger of sync: which file of which table is done or failed, with
 * its size, mtime and content hash, so a restart never reprocesses a done
 * file nor skips a new one. Kept in memory (one entry per table + path)
 * and written through to one of two backends:
 *  - embedded: the table _knut_sync_ledger in the store's DuckDB file,
 *    written on the connection the store hands to the commit callback, so
 *    the ledger rows commit in the mutation's transaction (exactly once);
 *  - file: one JSON document, rewritten with write + fsync + rename, so a
 *    crash leaves either the old or the new ledger, never a torn one;
 *  - valkey: a hash shared by several instances (ledger_valkey.c).
 * Memory changes only after the backend accepted the write.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sync_int.h"

static const char ledger_ddl[] =
    "CREATE TABLE IF NOT EXISTS _knut_sync_ledger (\"table\" VARCHAR NOT NULL, "
    "path VARCHAR NOT NULL, size BIGINT, mtime BIGINT, hash VARCHAR, status VARCHAR NOT NULL, "
    "reason VARCHAR, round BIGINT, rows BIGINT, PRIMARY KEY (\"table\", path)); "
    /* the table's config hash (table_hash.c); ledgers from before it lack it */
    "ALTER TABLE _knut_sync_ledger ADD COLUMN IF NOT EXISTS config VARCHAR";

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

/* The index: FNV-1a over table NUL path, open addressing, linear probing.
 * A find is one probe sequence, so a round over many files of a long
 * ledger stays linear in the files listed, not quadratic. */
static size_t key_hash(const char *table, const char *path)
{
    uint64_t h = 1469598103934665603ULL;
    for (const unsigned char *p = (const unsigned char *)table; *p; p++)
        h = (h ^ *p) * 1099511628211ULL;
    h = (h ^ 0xff) * 1099511628211ULL; /* a separator no name holds */
    for (const unsigned char *p = (const unsigned char *)path; *p; p++)
        h = (h ^ *p) * 1099511628211ULL;
    return (size_t)h;
}

static void index_insert(sync_ledger *l, size_t idx)
{
    size_t mask = l->n_slots - 1;
    size_t i = key_hash(l->items[idx].table, l->items[idx].path) & mask;
    while (l->slots[i])
        i = (i + 1) & mask;
    l->slots[i] = idx + 1;
}

/* Rebuilds the index for n_slots (a power of two > 2 l->n). */
static knut_status index_rebuild(sync_ledger *l, size_t n_slots, knut_error *err)
{
    size_t *slots = calloc(n_slots, sizeof *slots);
    if (!slots)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    free(l->slots);
    l->slots = slots;
    l->n_slots = n_slots;
    for (size_t i = 0; i < l->n; i++)
        index_insert(l, i);
    return KNUT_OK;
}

/* Replaces or adds a copy of e in memory. */
static knut_status mem_put(sync_ledger *l, const sync_entry *e, knut_error *err)
{
    sync_entry c = {dup_or_null(e->table), dup_or_null(e->path), dup_or_null(e->hash),
                    dup_or_null(e->status), dup_or_null(e->reason), e->size, e->mtime_ns,
                    e->round, e->rows, dup_or_null(e->config)};
    if (!c.table || !c.path || !c.status || (e->hash && !c.hash) || (e->reason && !c.reason) ||
        (e->config && !c.config)) {
        knut_sync__entry_reset(&c);
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    }
    sync_entry *old = knut_sync__ledger_find(l, e->table, e->path);
    if (old) {
        knut_sync__entry_reset(old);
        *old = c;
        l->gen++;
        return KNUT_OK;
    }
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        sync_entry *p = realloc(l->items, cap * sizeof *p);
        if (!p) {
            knut_sync__entry_reset(&c);
            return knut_error_set(err, KNUT_ENOMEM, "out of memory");
        }
        l->items = p;
        l->cap = cap;
    }
    if (2 * (l->n + 1) >= l->n_slots) {
        knut_status st = index_rebuild(l, l->n_slots ? l->n_slots * 2 : 256, err);
        if (st != KNUT_OK) {
            knut_sync__entry_reset(&c);
            return st;
        }
    }
    l->items[l->n++] = c;
    index_insert(l, l->n - 1);
    l->gen++;
    return KNUT_OK;
}

sync_entry *knut_sync__ledger_find(sync_ledger *l, const char *table, const char *path)
{
    if (!l->n_slots)
        return NULL;
    size_t mask = l->n_slots - 1;
    for (size_t i = key_hash(table, path) & mask; l->slots[i]; i = (i + 1) & mask) {
        sync_entry *e = &l->items[l->slots[i] - 1];
        if (strcmp(e->table, table) == 0 && strcmp(e->path, path) == 0)
            return e;
    }
    return NULL;
}

void knut_sync__ledger_forget(sync_ledger *l, const char *table, const char *path)
{
    sync_entry *e = knut_sync__ledger_find(l, table, path);
    if (!e)
        return;
    knut_sync__entry_reset(e);
    *e = l->items[--l->n]; /* the last entry fills the hole */
    l->gen++;
    /* Reinsert everything into the same slots: no allocation, cannot fail. */
    memset(l->slots, 0, l->n_slots * sizeof *l->slots);
    for (size_t i = 0; i < l->n; i++)
        index_insert(l, i);
}

int64_t knut_sync__ledger_max_round(const sync_ledger *l)
{
    int64_t m = 0;
    for (size_t i = 0; i < l->n; i++)
        if (l->items[i].round > m)
            m = l->items[i].round;
    return m;
}

void knut_sync__ledger_reset(sync_ledger *l)
{
    for (size_t i = 0; i < l->n; i++)
        knut_sync__entry_reset(&l->items[i]);
    free(l->items);
    free(l->slots);
    free(l->file);
    memset(l, 0, sizeof *l);
}

/* Row i of a text column as a heap copy, whole (NULL for SQL NULL): a
 * long table name, path or reason reads back as it was written, never cut
 * to a fixed buffer. A NUL inside would cut it as a C string, so it is
 * refused, naming the column and row. */
static knut_status col_dup(const knut_arrow_view *v, int64_t i, const char *col, char **out,
                           knut_error *err)
{
    *out = NULL;
    if (knut_arrow_view_is_null(v, i))
        return KNUT_OK;
    int64_t len = 0;
    const char *s = knut_arrow_view_get_str(v, i, &len);
    if (len < 0 || (len > 0 && memchr(s, '\0', (size_t)len)))
        return knut_error_set(err, KNUT_EPARSE, "ledger: row %lld: %s holds a NUL byte",
                              (long long)i, col);
    if (!(*out = malloc((size_t)len + 1)))
        return knut_error_set(err, KNUT_ENOMEM, "ledger: out of memory reading %s", col);
    if (len > 0)
        memcpy(*out, s, (size_t)len);
    (*out)[len] = '\0';
    return KNUT_OK;
}

knut_status knut_sync__ledger_open_store(sync_ledger *l, knut_duck_conn *conn, knut_error *err)
{
    memset(l, 0, sizeof *l);
    l->conn = conn;
    knut_status st = knut_duck_exec(conn, ledger_ddl, err);
    return st == KNUT_OK ? knut_sync__ledger_load_store(l, conn, 1, err) : st;
}

knut_status knut_sync__ledger_load_store(sync_ledger *l, knut_duck_conn *conn, int has_config,
                                         knut_error *err)
{
    struct ArrowArrayStream s = {0};
    struct ArrowSchema schema = {0};
    struct ArrowArray a = {0};
    knut_arrow_view v = {0};
    knut_status st = knut_duck_query(conn,
                                     has_config
                                         ? "SELECT \"table\", path, hash, status, reason, size, "
                                           "mtime, round, rows, config FROM _knut_sync_ledger "
                                           "ORDER BY \"table\", path"
                                         : "SELECT \"table\", path, hash, status, reason, size, "
                                           "mtime, round, rows, NULL::VARCHAR AS config FROM "
                                           "_knut_sync_ledger ORDER BY \"table\", path",
                                     &s, err);
    if (st != KNUT_OK)
        goto cleanup;
    if (s.get_schema(&s, &schema) != 0) {
        st = knut_error_set(err, KNUT_EIO, "ledger: %s", s.get_last_error(&s));
        goto cleanup;
    }
    for (;;) {
        if (s.get_next(&s, &a) != 0) {
            st = knut_error_set(err, KNUT_EIO, "ledger: %s", s.get_last_error(&s));
            goto cleanup;
        }
        if (!a.release)
            break;
        if ((st = knut_arrow_view_init(&v, &schema, &a, err)) != KNUT_OK)
            goto cleanup;
        for (int64_t i = 0; i < v.length && st == KNUT_OK; i++) {
            static const char *const col[] = {"table", "path", "hash", "status", "reason"};
            sync_entry e = {0};
            char **txt[] = {&e.table, &e.path, &e.hash, &e.status, &e.reason};
            for (size_t k = 0; k < 5 && st == KNUT_OK; k++)
                st = col_dup(&v.children[k], i, col[k], txt[k], err);
            e.size = knut_arrow_view_get_int64(&v.children[5], i);
            e.mtime_ns = knut_arrow_view_get_int64(&v.children[6], i);
            e.round = knut_arrow_view_get_int64(&v.children[7], i);
            e.rows = knut_arrow_view_get_int64(&v.children[8], i);
            if (st == KNUT_OK)
                st = col_dup(&v.children[9], i, "config", &e.config, err);
            if (st == KNUT_OK)
                st = mem_put(l, &e, err);
            knut_sync__entry_reset(&e);
        }
        knut_arrow_view_reset(&v);
        memset(&v, 0, sizeof v);
        knut_arrow_array_release(&a);
        if (st != KNUT_OK)
            goto cleanup;
    }
cleanup:
    knut_arrow_view_reset(&v);
    knut_arrow_array_release(&a);
    knut_arrow_schema_release(&schema);
    knut_arrow_stream_release(&s);
    return st;
}

/* "ledger FILE, entry i", for the codec's messages. */
static void entry_where(char *dst, size_t cap, const char *file, size_t i)
{
    snprintf(dst, cap, "ledger %s, entry %zu", file, i);
}

knut_status knut_sync__ledger_open_file(sync_ledger *l, const char *file, knut_error *err)
{
    memset(l, 0, sizeof *l);
    if (!(l->file = strdup(file)))
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    knut_buf text = KNUT_BUF_INIT;
    json_t *root = NULL;
    knut_status st = knut_file_read(file, SYNC_LEDGER_FILE_MAX, &text, err);
    if (st == KNUT_ENOTFOUND) {
        st = KNUT_OK; /* first run */
        goto cleanup;
    }
    if (st != KNUT_OK) {
        knut_error_prefix(err, "ledger: ");
        goto cleanup;
    }
    json_error_t je;
    if (!(root = json_loadb(text.data, text.len, JSON_REJECT_DUPLICATES, &je))) {
        st = knut_error_set(err, KNUT_EPARSE, "ledger %s:%d:%d: %s", file, je.line, je.column,
                            je.text);
        goto cleanup;
    }
    json_t *entries = json_object_get(root, "entries");
    json_t *version = json_object_get(root, "version");
    if (!json_is_object(root) || json_object_size(root) != 2 || !json_is_array(entries) ||
        !json_is_integer(version) || json_integer_value(version) != 1) {
        st = knut_error_set(err, KNUT_EPARSE,
                            "ledger %s: not a ledger: must be {\"version\": 1, \"entries\": [...]}",
                            file);
        goto cleanup;
    }
    char what[4200];
    snprintf(what, sizeof what, "ledger %s", file);
    st = knut_sync__ledger_remember_json(l, entries, what, err);
cleanup:
    json_decref(root);
    knut_buf_reset(&text);
    return st;
}

/* Appends one entry's line to the document. */
static knut_status doc_put(knut_buf *doc, knut_buf *line, const sync_entry *e, const char *file,
                           size_t i, knut_error *err)
{
    char where[4200];
    entry_where(where, sizeof where, file, i);
    knut_status st = knut_sync__entry_encode(line, e, where, err);
    if (st != KNUT_OK)
        return st;
    knut_buf_puts(doc, i ? ",\n" : "\n");
    return knut_buf_append(doc, line->data, line->len);
}

/* The whole ledger (memory + the new entries) replaced atomically
 * (knut_file_write_atomic): one entry a line, each through the codec. */
static knut_status file_write(sync_ledger *l, const sync_entry *add, size_t n, knut_error *err)
{
    knut_status st = KNUT_OK;
    /* The cap the loader holds to: a ledger that would not load again is
     * refused here, before it replaces the good one. */
    knut_buf doc, line = KNUT_BUF_INIT;
    knut_buf_init(&doc, SYNC_LEDGER_FILE_MAX);
    size_t k = 0;
    knut_buf_puts(&doc, "{\"version\": 1, \"entries\": [");
    for (size_t i = 0; i < l->n && st == KNUT_OK; i++) {
        int replaced = 0;
        for (size_t j = 0; j < n && !replaced; j++)
            replaced = strcmp(add[j].table, l->items[i].table) == 0 &&
                       strcmp(add[j].path, l->items[i].path) == 0;
        if (!replaced)
            st = doc_put(&doc, &line, &l->items[i], l->file, k++, err);
    }
    for (size_t j = 0; j < n && st == KNUT_OK; j++)
        st = doc_put(&doc, &line, &add[j], l->file, k++, err);
    if (st != KNUT_OK)
        goto cleanup;
    knut_buf_puts(&doc, "\n]}\n");
    if (doc.error == KNUT_ETOOBIG) {
        st = knut_error_set(err, KNUT_ETOOBIG,
                            "ledger %s: over the %zu-byte limit of a file ledger", l->file,
                            (size_t)SYNC_LEDGER_FILE_MAX);
        goto cleanup;
    }
    if ((st = knut_buf_check(&doc, err)) != KNUT_OK)
        goto cleanup;
    /* temp + fsync + rename + folder fsync; every failure closes the temp
     * file and removes it, and the old ledger stays as it was */
    if ((st = knut_file_write_atomic(l->file, doc.data, doc.len, err)) != KNUT_OK)
        knut_error_prefix(err, "ledger ");
cleanup:
    knut_buf_reset(&doc);
    knut_buf_reset(&line);
    return st;
}

static knut_status store_write(knut_duck_conn *conn, const sync_entry *e, size_t n,
                               knut_error *err)
{
    knut_duck_stmt *stmt = NULL;
    knut_status st = knut_duck_stmt_prepare(
        &stmt, conn,
        "INSERT OR REPLACE INTO _knut_sync_ledger (\"table\", path, size, mtime, hash, status, "
        "reason, round, rows, config) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
        err);
    for (size_t i = 0; i < n && st == KNUT_OK; i++) {
        const char *txt[] = {e[i].table, e[i].path};
        for (size_t k = 0; k < 2 && st == KNUT_OK; k++)
            st = knut_duck_stmt_bind_text(stmt, k + 1, txt[k], strlen(txt[k]), err);
        if (st == KNUT_OK)
            st = knut_duck_stmt_bind_int64(stmt, 3, e[i].size, err);
        if (st == KNUT_OK)
            st = knut_duck_stmt_bind_int64(stmt, 4, e[i].mtime_ns, err);
        if (st == KNUT_OK)
            st = e[i].hash ? knut_duck_stmt_bind_text(stmt, 5, e[i].hash, strlen(e[i].hash), err)
                           : knut_duck_stmt_bind_null(stmt, 5, err);
        if (st == KNUT_OK)
            st = knut_duck_stmt_bind_text(stmt, 6, e[i].status, strlen(e[i].status), err);
        if (st == KNUT_OK)
            st = e[i].reason
                     ? knut_duck_stmt_bind_text(stmt, 7, e[i].reason, strlen(e[i].reason), err)
                     : knut_duck_stmt_bind_null(stmt, 7, err);
        if (st == KNUT_OK)
            st = knut_duck_stmt_bind_int64(stmt, 8, e[i].round, err);
        if (st == KNUT_OK)
            st = knut_duck_stmt_bind_int64(stmt, 9, e[i].rows, err);
        if (st == KNUT_OK)
            st = e[i].config
                     ? knut_duck_stmt_bind_text(stmt, 10, e[i].config, strlen(e[i].config), err)
                     : knut_duck_stmt_bind_null(stmt, 10, err);
        if (st == KNUT_OK)
            st = knut_duck_stmt_exec(stmt, NULL, err);
    }
    knut_duck_stmt_free(stmt);
    if (st != KNUT_OK)
        knut_error_prefix(err, "ledger: ");
    return st;
}

knut_status knut_sync__ledger_write(sync_ledger *l, knut_duck_conn *conn, const sync_entry *e,
                                    size_t n, knut_error *err)
{
    if (l->valkey) /* shared ledger: a fenced HSET under the table's lease */
        return knut_sync__valkey_write(l->valkey, e, n, err);
    return l->file ? file_write(l, e, n, err) : store_write(conn ? conn : l->conn, e, n, err);
}

knut_status knut_sync__ledger_remember(sync_ledger *l, const sync_entry *e, size_t n,
                                       knut_error *err)
{
    knut_status st = KNUT_OK;
    for (size_t i = 0; i < n && st == KNUT_OK; i++)
        st = mem_put(l, &e[i], err);
    return st;
}

knut_status knut_sync__ledger_remember_json(sync_ledger *l, const json_t *entries, const char *what,
                                            knut_error *err)
{
    knut_status st = KNUT_OK;
    json_t *it;
    size_t i;
    json_array_foreach(entries, i, it)
    {
        char where[4300];
        snprintf(where, sizeof where, "%s, entry %zu", what, i);
        sync_entry e;
        if ((st = knut_sync__entry_from_json(it, where, &e, err)) != KNUT_OK)
            break;
        st = mem_put(l, &e, err);
        knut_sync__entry_reset(&e);
        if (st != KNUT_OK)
            break;
    }
    return st;
}

knut_status knut_sync__ledger_record(sync_ledger *l, const sync_entry *e, size_t n,
                                     knut_error *err)
{
    knut_status st = knut_sync__ledger_write(l, NULL, e, n, err);
    if (st == KNUT_OK)
        st = knut_sync__ledger_remember(l, e, n, err);
    return st;
}

knut_status knut_sync__ledger_commit_fn(void *ctx, struct knut_duck_conn *conn, knut_error *err)
{
    sync_ledger_commit *c = ctx;
    return knut_sync__ledger_write(c->ledger, conn, c->entries, c->n, err);
}
