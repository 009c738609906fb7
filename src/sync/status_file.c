/*
 * The status snapshot of a running sync (docs/sync.md "Inspecting a
 * running sync"). DuckDB locks the embedded store for the one process that
 * writes it, so `knut sync status` cannot read the ledger table while the
 * loop runs. Instead the sync rewrites a small JSON file beside the store
 * after every round that changed something (and once when it opens):
 *
 *   {"version": 1, "pid": 4711, "round": 12, "updated_us": ...,
 *    "tables": [{"table": "people", "last_success_us": ..., "edges_skipped": 0}],
 *    "entries": [<ledger entries, as in a ledger file>]}
 *
 * written atomically (temp, fsync, rename), so a reader sees the old or
 * the new file, never a torn one. A FalkorDB sync's ledger file can be
 * read at any time already: its snapshot (beside the ledger file) carries
 * no entries, only the per-table notes the ledger has no room for (the
 * time of the last success, the edges skipped). The notes of a previous
 * snapshot are taken over at open, so they survive a restart.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sync_int.h"

/* A snapshot holds a ledger's entries at most, and the notes. */
#define STATUS_FILE_MAX (SYNC_LEDGER_FILE_MAX + ((size_t)1 << 20))

sync_table_note *knut_sync__note(knut_sync *s, const char *table)
{
    for (size_t i = 0; i < s->n_notes; i++)
        if (strcmp(s->notes[i].table, table) == 0)
            return &s->notes[i];
    return NULL;
}

void knut_sync__notes_free(sync_table_note *n, size_t count)
{
    for (size_t i = 0; n && i < count; i++)
        free(n[i].table);
    free(n);
}

/* Reads root's notes into s->notes (tables the config no longer has are
 * dropped). */
static void notes_take(knut_sync *s, json_t *root)
{
    json_t *tables = json_object_get(root, "tables"), *it;
    size_t i;
    json_array_foreach(tables, i, it)
    {
        const char *name = json_string_value(json_object_get(it, "table"));
        sync_table_note *n = name ? knut_sync__note(s, name) : NULL;
        json_t *ls = json_object_get(it, "last_success_us");
        json_t *es = json_object_get(it, "edges_skipped");
        if (!n)
            continue;
        if (json_is_integer(ls) && json_integer_value(ls) > 0)
            n->last_success_us = json_integer_value(ls);
        if (json_is_integer(es) && json_integer_value(es) > 0)
            n->edges_skipped = json_integer_value(es);
    }
}

knut_status knut_sync__status_file_read(knut_sync *s, const char *file, sync_ledger *l,
                                        int64_t *pid, knut_error *err)
{
    knut_buf text = KNUT_BUF_INIT;
    json_t *root = NULL;
    *pid = 0;
    knut_status st = knut_file_read(file, STATUS_FILE_MAX, &text, err);
    if (st != KNUT_OK)
        goto cleanup;
    json_error_t je;
    if (!(root = json_loadb(text.data, text.len, JSON_REJECT_DUPLICATES, &je)) ||
        !json_is_object(root) || !json_is_integer(json_object_get(root, "version")) ||
        json_integer_value(json_object_get(root, "version")) != 1) {
        st = knut_error_set(err, KNUT_EPARSE, "status snapshot %s: not a knut sync snapshot",
                            file);
        goto cleanup;
    }
    json_t *p = json_object_get(root, "pid"), *u = json_object_get(root, "updated_us");
    *pid = json_is_integer(p) ? json_integer_value(p) : 0;
    s->status_updated_us = json_is_integer(u) ? json_integer_value(u) : 0;
    notes_take(s, root);
    if (!l)
        goto cleanup;
    json_t *entries = json_object_get(root, "entries");
    if (!json_is_array(entries)) {
        st = knut_error_set(err, KNUT_EPARSE, "status snapshot %s: no ledger entries", file);
        goto cleanup;
    }
    char what[4200];
    snprintf(what, sizeof what, "status snapshot %s", file);
    st = knut_sync__ledger_remember_json(l, entries, what, err);
cleanup:
    json_decref(root);
    knut_buf_reset(&text);
    return st;
}

knut_status knut_sync__status_file_init(knut_sync *s, const char *beside, knut_error *err)
{
    size_t n = s->cfg->n_tables;
    if (!(s->notes = calloc(n ? n : 1, sizeof *s->notes)))
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    s->n_notes = n;
    for (size_t i = 0; i < n; i++)
        if (!(s->notes[i].table = strdup(s->cfg->tables[i].name)))
            return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    s->status_gen = s->ledger.gen + 1; /* never written: the first write happens */
    if (!beside)
        return KNUT_OK; /* a shared ledger: status reads it directly */
    if (strcmp(beside, ":memory:") == 0)
        return KNUT_OK; /* an in-memory store has no folder, nor a status to read later */
    knut_buf b = KNUT_BUF_INIT;
    knut_buf_printf(&b, "%s%s", beside, SYNC_STATUS_SUFFIX);
    knut_status st = knut_buf_check(&b, err);
    if (st != KNUT_OK)
        return st;
    s->status_file = knut_buf_detach(&b, NULL);
    knut_error rerr = KNUT_ERROR_INIT;
    int64_t pid = 0;
    if (knut_sync__status_file_read(s, s->status_file, NULL, &pid, &rerr) != KNUT_OK &&
        rerr.code != KNUT_ENOTFOUND) /* a bad old snapshot is replaced, not fatal */
        KNUT_LOG(KNUT_LOG_DEBUG, SYNC_LOG, "%s", rerr.message);
    s->status_updated_us = 0;
    return KNUT_OK;
}

static knut_status render(knut_sync *s, knut_buf *doc, knut_error *err)
{
    knut_buf line = KNUT_BUF_INIT;
    knut_status st = KNUT_OK;
    knut_buf_printf(doc, "{\"version\": 1, \"pid\": %lld, \"round\": %lld, \"updated_us\": %lld,\n"
                         "\"tables\": [",
                    (long long)getpid(), (long long)s->round, (long long)knut_clock_wall_us());
    for (size_t i = 0; i < s->n_notes; i++) {
        const sync_table_note *n = &s->notes[i];
        knut_buf_puts(doc, i ? ",\n{\"table\": " : "\n{\"table\": ");
        knut_buf_put_json_str(doc, n->table, strlen(n->table));
        knut_buf_printf(doc, ", \"last_success_us\": %lld, \"edges_skipped\": %lld}",
                        (long long)n->last_success_us, (long long)n->edges_skipped);
    }
    knut_buf_puts(doc, "]");
    if (!s->ledger.file && !s->ledger.valkey) { /* the embedded store's ledger */
        knut_buf_puts(doc, ",\n\"entries\": [");
        for (size_t i = 0; i < s->ledger.n && st == KNUT_OK; i++) {
            char where[64];
            snprintf(where, sizeof where, "status snapshot, entry %zu", i);
            if ((st = knut_sync__entry_encode(&line, &s->ledger.items[i], where, err)) == KNUT_OK) {
                knut_buf_puts(doc, i ? ",\n" : "\n");
                knut_buf_append(doc, line.data, line.len);
            }
        }
        knut_buf_puts(doc, "\n]");
    }
    knut_buf_puts(doc, "}\n");
    knut_buf_reset(&line);
    if (st == KNUT_OK && doc->error == KNUT_ETOOBIG)
        st = knut_error_set(err, KNUT_ETOOBIG, "over the %zu-byte limit of a snapshot",
                            (size_t)STATUS_FILE_MAX);
    return st == KNUT_OK ? knut_buf_check(doc, err) : st;
}

void knut_sync__status_file_write(knut_sync *s)
{
    if (!s->status_file || (s->status_gen == s->ledger.gen && !s->status_dirty))
        return;
    knut_buf doc;
    knut_buf_init(&doc, STATUS_FILE_MAX);
    knut_error err = KNUT_ERROR_INIT;
    knut_status st = render(s, &doc, &err);
    if (st == KNUT_OK)
        st = knut_file_write_atomic(s->status_file, doc.data, doc.len, &err);
    knut_buf_reset(&doc);
    if (st == KNUT_OK) {
        s->status_gen = s->ledger.gen;
        s->status_dirty = 0;
        s->status_warned = 0;
    } else if (!s->status_warned) { /* the sync goes on; status then reads an old one */
        KNUT_LOG(KNUT_LOG_WARN, SYNC_LOG,
                 "status snapshot %s not written (knut sync status shows the last one): %s",
                 s->status_file, err.message);
        s->status_warned = 1;
    }
}
