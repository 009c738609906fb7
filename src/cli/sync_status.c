/*
 * What `knut sync status` prints: where it read (the store, a running
 * sync's snapshot, a ledger file, a shared ledger), a summary line per
 * table (done / failed / pending files, rows, last success, edges
 * skipped), then one line per file in its latest state. --json prints the
 * same as one JSON document for scripts (docs/sync.md "Inspecting a
 * running sync"). The exit code is 1 when a file is recorded failed.
 */
#include "cli.h"

#include <string.h>
#include <time.h>

#include "knut/sync.h"

typedef struct status_out {
    int json;
    knut_buf files;  /* json: the files' objects; text: their lines */
    knut_buf tables; /* the same for the tables */
    int64_t n_files, n_tables, failed;
} status_out;

/* ISO 8601 UTC of a wall-clock time in µs ("" for 0: unknown). */
static void iso_time(int64_t us, char *out, size_t cap)
{
    out[0] = 0;
    if (us <= 0)
        return;
    time_t t = (time_t)(us / 1000000);
    struct tm tm;
    if (gmtime_r(&t, &tm))
        strftime(out, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void json_str_or_null(knut_buf *b, const char *s)
{
    if (s && *s)
        knut_buf_put_json_str(b, s, strlen(s));
    else
        knut_buf_puts(b, "null");
}

static void on_file(const knut_sync_file_status *st, void *ctx)
{
    status_out *o = ctx;
    knut_buf *b = &o->files;
    o->failed += strcmp(st->state, "failed") == 0;
    if (o->json) {
        knut_buf_puts(b, o->n_files++ ? ",\n  {\"table\": " : "\n  {\"table\": ");
        knut_buf_put_json_str(b, st->table, strlen(st->table));
        knut_buf_puts(b, ", \"path\": ");
        knut_buf_put_json_str(b, st->path, strlen(st->path));
        knut_buf_printf(b, ", \"state\": \"%s\", \"rows\": %lld, \"round\": %lld, \"reason\": ",
                        st->state, (long long)st->rows, (long long)st->round);
        json_str_or_null(b, st->reason);
        knut_buf_puts(b, "}");
        return;
    }
    o->n_files++;
    if (strcmp(st->state, "done") == 0)
        knut_buf_printf(b, "%-16s done     %s (%lld rows, round %lld%s%s)\n", st->table, st->path,
                        (long long)st->rows, (long long)st->round, st->reason ? "; " : "",
                        st->reason ? st->reason : "");
    else if (strcmp(st->state, "failed") == 0)
        knut_buf_printf(b, "%-16s failed   %s: %s\n", st->table, st->path,
                        st->reason ? st->reason : "");
    else
        knut_buf_printf(b, "%-16s pending  %s\n", st->table, st->path);
}

static void on_table(const knut_sync_table_status *t, void *ctx)
{
    status_out *o = ctx;
    knut_buf *b = &o->tables;
    char when[32];
    iso_time(t->last_success_us, when, sizeof when);
    if (o->json) {
        knut_buf_puts(b, o->n_tables++ ? ",\n  {\"table\": " : "\n  {\"table\": ");
        knut_buf_put_json_str(b, t->table, strlen(t->table));
        knut_buf_printf(b, ", \"done\": %lld, \"failed\": %lld, \"pending\": %lld, "
                           "\"rows\": %lld, \"last_success\": ",
                        (long long)t->done, (long long)t->failed, (long long)t->pending,
                        (long long)t->rows);
        json_str_or_null(b, when);
        if (t->edges_skipped >= 0)
            knut_buf_printf(b, ", \"edges_skipped\": %lld}", (long long)t->edges_skipped);
        else
            knut_buf_puts(b, ", \"edges_skipped\": null}");
        return;
    }
    o->n_tables++;
    char skipped[24] = "-";
    if (t->edges_skipped >= 0)
        snprintf(skipped, sizeof skipped, "%lld", (long long)t->edges_skipped);
    knut_buf_printf(b, "%-16s %7lld %7lld %8lld %12lld  %-20s  %s\n", t->table,
                    (long long)t->done, (long long)t->failed, (long long)t->pending,
                    (long long)t->rows, *when ? when : "-", skipped);
}

/* "source: ..." naming what was read. */
static void source_text(const knut_sync_status_source *src, knut_buf *b)
{
    char when[32];
    iso_time(src->updated_us, when, sizeof when);
    if (strcmp(src->kind, "store snapshot") == 0)
        knut_buf_printf(b, "source: store snapshot %s (written by the running knut sync, pid "
                           "%lld, at %s)\n",
                        src->path, (long long)src->pid, *when ? when : "?");
    else if (strcmp(src->kind, "store") == 0)
        knut_buf_printf(b, "source: store %s (read-only; no sync holds it)\n", src->path);
    else if (strcmp(src->kind, "none") == 0)
        knut_buf_printf(b, "source: store %s (does not exist yet: nothing synced)\n", src->path);
    else if (strcmp(src->kind, "shared ledger") == 0)
        knut_buf_printf(b, "source: shared ledger of '%s'\n", src->path);
    else
        knut_buf_printf(b, "source: %s %s\n", src->kind, src->path);
    knut_buf_printf(b, "last recorded round: %lld\n\n", (long long)src->round);
}

static void source_json(const knut_sync_status_source *src, knut_buf *b)
{
    char when[32];
    iso_time(src->updated_us, when, sizeof when);
    knut_buf_puts(b, "{\"source\": {\"kind\": ");
    knut_buf_put_json_str(b, src->kind, strlen(src->kind));
    knut_buf_puts(b, ", \"path\": ");
    json_str_or_null(b, src->path);
    if (src->pid)
        knut_buf_printf(b, ", \"pid\": %lld", (long long)src->pid);
    else
        knut_buf_puts(b, ", \"pid\": null");
    knut_buf_printf(b, ", \"round\": %lld, \"updated\": ", (long long)src->round);
    json_str_or_null(b, when);
    knut_buf_puts(b, "},\n \"tables\": [");
}

int knut_cli_sync_status_print(struct knut_sync *s, int json)
{
    status_out o = {json, KNUT_BUF_INIT, KNUT_BUF_INIT, 0, 0, 0};
    knut_buf out = KNUT_BUF_INIT;
    knut_error err = KNUT_ERROR_INIT;
    knut_sync_status_source src;
    int rc = KNUT_EXIT_FAIL;
    knut_sync_status_source_get(s, &src);
    if (knut_sync_status_tables(s, on_file, on_table, &o, &err) != KNUT_OK ||
        knut_buf_check(&o.tables, &err) != KNUT_OK || knut_buf_check(&o.files, &err) != KNUT_OK) {
        /* a part that failed to grow would cut the output (and the JSON) short */
        fprintf(stderr, "knut sync status: %s\n", err.message);
        goto cleanup;
    }
    if (json) {
        source_json(&src, &out);
        if (o.tables.data)
            knut_buf_append(&out, o.tables.data, o.tables.len);
        knut_buf_puts(&out, "\n ],\n \"files\": [");
        if (o.files.data)
            knut_buf_append(&out, o.files.data, o.files.len);
        knut_buf_printf(&out, "\n ],\n \"failed\": %lld}\n", (long long)o.failed);
    } else {
        source_text(&src, &out);
        knut_buf_printf(&out, "%-16s %7s %7s %8s %12s  %-20s  %s\n", "table", "done", "failed",
                        "pending", "rows", "last success", "edges skipped");
        if (o.tables.data)
            knut_buf_append(&out, o.tables.data, o.tables.len);
        if (o.files.data) {
            knut_buf_puts(&out, "\n");
            knut_buf_append(&out, o.files.data, o.files.len);
        }
    }
    if (knut_buf_check(&out, &err) != KNUT_OK) {
        fprintf(stderr, "knut sync status: %s\n", err.message);
        goto cleanup;
    }
    fwrite(out.data, 1, out.len, stdout);
    rc = o.failed > 0 ? KNUT_EXIT_FAIL : KNUT_EXIT_OK;
cleanup:
    knut_buf_reset(&out);
    knut_buf_reset(&o.files);
    knut_buf_reset(&o.tables);
    return rc;
}
