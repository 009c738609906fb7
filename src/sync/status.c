/*
 * `knut sync status`: opening the ledger read-only, and the report.
 *
 * Where the ledger is read (docs/sync.md "Inspecting a running sync"):
 *  - a shared ledger (Valkey, or the FalkorDB server): from the server;
 *  - a FalkorDB sync's ledger file (--falkordb, or a config without a
 *    store): the file itself, which the sync only ever replaces whole by
 *    a rename, so it reads the same while the sync runs; no FalkorDB
 *    connection is needed;
 *  - the embedded store: when another process holds DuckDB's write lock
 *    on it (a running `knut sync`; fcntl F_GETLK names its pid), the
 *    status snapshot that process writes beside the store each round
 *    (status_file.c); else the store itself, opened read-only.
 * Nothing is opened for writing, so status never blocks or changes a sync.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sync_int.h"

/* The pid of the process holding a write lock on path; 0 when none. */
static int64_t write_lock_holder(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
    int64_t pid = 0;
    /* F_WRLCK conflicts with every lock: the answer names any holder, and
     * only a writer's (not a reader's, e.g. knut serve) keeps us out */
    if (fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type == F_WRLCK)
        pid = fl.l_pid > 0 ? fl.l_pid : -1;
    close(fd);
    return pid;
}

static knut_status set_path(knut_sync *s, const char *kind, const char *path, knut_error *err)
{
    s->status_kind = kind;
    free(s->status_path);
    if (!(s->status_path = strdup(path ? path : "")))
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    return KNUT_OK;
}

/* The store's snapshot, written by the sync (pid) that holds the store. */
static knut_status open_snapshot(knut_sync *s, const char *store, int64_t holder,
                                 knut_error *err)
{
    knut_buf f = KNUT_BUF_INIT;
    knut_buf_printf(&f, "%s%s", store, SYNC_STATUS_SUFFIX);
    knut_status st = knut_buf_check(&f, err);
    int64_t pid = 0;
    if (st == KNUT_OK)
        st = knut_sync__status_file_read(s, f.data, &s->ledger, &pid, err);
    /* an older run's snapshot is not what the holder has done; a holder
     * in another pid namespace (a container sharing the volume: F_GETLK
     * gives no pid, holder -1) cannot be told apart, so its snapshot is
     * taken as the holder's */
    if (st == KNUT_OK && holder > 0 && pid != holder)
        st = KNUT_ENOTFOUND;
    if (st == KNUT_ENOTFOUND)
        st = knut_error_set(err, KNUT_EAGAIN,
                            "graph store %s is held by process %lld, which has written no "
                            "status snapshot (%s) yet; a knut sync writes it when it starts: "
                            "try again in a moment",
                            store, (long long)holder, f.data);
    if (st == KNUT_OK) {
        s->status_pid = pid;
        st = set_path(s, "store snapshot", f.data, err);
    }
    knut_buf_reset(&f);
    return st;
}

/* Whether the store has the ledger table (a store no sync wrote has none)
 * and its config column (ledgers from before it lack it). */
static knut_status ledger_columns(knut_duck_conn *c, int *table, int *config, knut_error *err)
{
    int64_t n = 0;
    knut_status st = knut_sync__q_int(c,
                                      "SELECT count(*) FROM duckdb_columns() WHERE table_name = "
                                      "'_knut_sync_ledger' AND schema_name = 'main'",
                                      NULL, &n, err);
    *table = n > 0;
    if (st == KNUT_OK && n > 0)
        st = knut_sync__q_int(c,
                              "SELECT count(*) FROM duckdb_columns() WHERE table_name = "
                              "'_knut_sync_ledger' AND schema_name = 'main' AND column_name = $1",
                              "config", &n, err);
    *config = n > 0;
    return st;
}

/* The store opened read-only, its ledger read into memory, closed again
 * (so a sync that starts now waits for us no longer than the read). */
static knut_status open_store_ro(knut_sync *s, const char *path, knut_error *err)
{
    static const knut_duck_option ro[] = {{"access_mode", "READ_ONLY"}};
    knut_duck_db *db = NULL;
    knut_duck_conn *c = NULL;
    int table = 0, config = 0;
    knut_status st = knut_duck_db_open(&db, path, ro, 1, err);
    if (st != KNUT_OK) {
        knut_error_prefix(err, "graph store %s: ", path);
        return st;
    }
    if ((st = knut_duck_conn_open(&c, db, err)) == KNUT_OK)
        st = ledger_columns(c, &table, &config, err);
    if (st == KNUT_OK && table)
        st = knut_sync__ledger_load_store(&s->ledger, c, config, err);
    knut_duck_conn_close(c);
    knut_duck_db_close(db);
    return st == KNUT_OK ? set_path(s, "store", path, err) : st;
}

/* The notes (last success, edges skipped) of a snapshot beside `beside`. */
static void read_notes(knut_sync *s, const char *beside)
{
    knut_buf f = KNUT_BUF_INIT;
    knut_error e = KNUT_ERROR_INIT;
    int64_t pid = 0;
    knut_buf_printf(&f, "%s%s", beside, SYNC_STATUS_SUFFIX);
    if (f.data && knut_sync__status_file_read(s, f.data, NULL, &pid, &e) != KNUT_OK &&
        e.code != KNUT_ENOTFOUND)
        KNUT_LOG(KNUT_LOG_WARN, SYNC_LOG, "%s", e.message);
    s->status_updated_us = 0;
    knut_buf_reset(&f);
}

static knut_status open_embedded(knut_sync *s, const char *path, knut_error *err)
{
    if (access(path, F_OK) != 0)
        return set_path(s, "none", path, err); /* no store yet: all pending */
    int64_t holder = write_lock_holder(path);
    if (holder)
        return open_snapshot(s, path, holder, err);
    knut_status st = open_store_ro(s, path, err);
    if (st != KNUT_OK && (holder = write_lock_holder(path)) != 0) {
        knut_sync__ledger_reset(&s->ledger); /* a sync took it meanwhile */
        knut_error_clear(err);
        return open_snapshot(s, path, holder, err);
    }
    if (st == KNUT_OK)
        read_notes(s, path);
    return st;
}

knut_status knut_sync__status_open(knut_sync *s, const knut_sync_options *o, knut_error *err)
{
    const knut_sync_config *cfg = s->cfg;
    const char *ledger = o->ledger ? o->ledger : cfg->ledger;
    const char *url = NULL;
    int in_falkor = 0;
    knut_buf lf = KNUT_BUF_INIT;
    knut_status st = knut_sync__status_file_init(s, NULL, err); /* the notes, no file */
    if (st == KNUT_OK && ledger && strcmp(ledger, SYNC_LEDGER_FALKORDB) == 0 &&
        !o->falkordb_url && !o->ledger_url)
        st = knut_error_set(err, KNUT_EINVAL,
                            "%s: the ledger is in the FalkorDB server ('ledger: falkordb'): "
                            "pass --falkordb URL or set KNUT_FALKORDB_URL",
                            cfg->file);
    if (st == KNUT_OK)
        st = knut_sync__ledger_url(o, ledger, &url, &in_falkor, err);
    if (st != KNUT_OK)
        return st;
    if (url) { /* shared: the server's hash is the truth, readable any time */
        const char *pw = in_falkor && !o->ledger_password ? o->falkordb_password
                                                          : o->ledger_password;
        st = knut_sync__valkey_open(&s->valkey, url, pw, cfg, NULL, 0, err);
        if (st == KNUT_OK)
            st = knut_sync__ledger_open_valkey(&s->ledger, s->valkey, err);
        return st == KNUT_OK ? set_path(s, "shared ledger", cfg->name, err) : st;
    }
    const char *store = o->store ? o->store : cfg->store;
    if (!o->falkordb_url && store)
        return open_embedded(s, store, err);
    /* FalkorDB: its ledger file, named by the options or the config */
    if (!ledger) {
        knut_buf_printf(&lf, "%s.ledger.json", cfg->file);
        if ((st = knut_buf_check(&lf, err)) != KNUT_OK)
            goto cleanup;
        ledger = lf.data;
        if (!o->falkordb_url && access(ledger, F_OK) != 0) {
            st = knut_error_set(err, KNUT_EINVAL,
                                "%s: no graph store ('store:' or --store) and no FalkorDB "
                                "ledger file %s: nothing to report",
                                cfg->file, ledger);
            goto cleanup;
        }
    }
    if ((st = knut_sync__ledger_open_file(&s->ledger, ledger, err)) != KNUT_OK)
        goto cleanup;
    read_notes(s, ledger);
    st = set_path(s, "ledger file", ledger, err);
cleanup:
    knut_buf_reset(&lf);
    return st;
}

void knut_sync_status_source_get(const knut_sync *s, knut_sync_status_source *out)
{
    memset(out, 0, sizeof *out);
    if (!s)
        return;
    out->kind = s->status_kind ? s->status_kind : s->ledger.valkey ? "shared ledger"
                                              : s->ledger.file     ? "ledger file"
                                                                   : "store";
    out->path = s->status_path ? s->status_path : s->ledger.file ? s->ledger.file : "";
    out->pid = s->status_pid;
    out->round = knut_sync__ledger_max_round(&s->ledger);
    out->updated_us = s->status_updated_us;
}

static int find_path(const void *key, const void *item)
{
    return strcmp(key, ((const sync_file *)item)->path);
}

knut_status knut_sync_status_tables(knut_sync *s, knut_sync_status_fn file_fn,
                                    knut_sync_table_status_fn table_fn, void *ctx,
                                    knut_error *err)
{
    KNUT_ASSERT_ARG(err, s && (file_fn || table_fn));
    for (size_t t = 0; t < s->cfg->n_tables; t++) {
        const knut_sync_table *tb = &s->cfg->tables[t];
        const sync_table_note *note = knut_sync__note(s, tb->name);
        /* a shared ledger has no snapshot: its notes are unknown */
        int noted = note && !s->ledger.valkey;
        knut_sync_table_status ts = {tb->name, 0, 0, 0, 0, noted ? note->last_success_us : 0,
                                     noted ? note->edges_skipped : -1};
        sync_file_list files;
        knut_status st = knut_sync__files_list(tb, &files, err);
        if (st != KNUT_OK)
            return st;
        for (size_t i = 0; i < s->ledger.n; i++) {
            const sync_entry *e = &s->ledger.items[i];
            if (strcmp(e->table, tb->name) != 0 || strcmp(e->status, SYNC_STATUS_REMOVED) == 0)
                continue; /* a removed file of a full table is forgotten */
            const sync_file *f = bsearch(e->path, files.items, files.n, sizeof *files.items,
                                         find_path);
            if (f && (f->size != e->size || f->mtime_ns != e->mtime_ns))
                continue; /* changed since: its latest state is pending (below) */
            int done = strcmp(e->status, "done") == 0;
            ts.done += done;
            ts.failed += !done;
            ts.rows += done ? e->rows : 0;
            knut_sync_file_status fs = {tb->name, e->path, e->status,
                                        e->reason, /* failed: why; done: a note */
                                        e->rows, e->round};
            if (file_fn)
                file_fn(&fs, ctx);
        }
        for (size_t i = 0; i < files.n; i++) {
            const sync_entry *e = knut_sync__ledger_find(&s->ledger, tb->name, files.items[i].path);
            if (e && strcmp(e->status, SYNC_STATUS_REMOVED) != 0 &&
                e->size == files.items[i].size && e->mtime_ns == files.items[i].mtime_ns)
                continue;
            ts.pending++;
            knut_sync_file_status fs = {tb->name, files.items[i].path, "pending", NULL, 0, 0};
            if (file_fn)
                file_fn(&fs, ctx);
        }
        knut_sync__files_reset(&files);
        if (table_fn)
            table_fn(&ts, ctx);
    }
    return KNUT_OK;
}

knut_status knut_sync_status(knut_sync *s, knut_sync_status_fn fn, void *ctx, knut_error *err)
{
    KNUT_ASSERT_ARG(err, s && fn);
    return knut_sync_status_tables(s, fn, NULL, ctx, err);
}
