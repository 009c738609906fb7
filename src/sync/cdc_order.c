/*
 * A cdc table's files are one changelog, taken strictly in name order:
 * round.c's pick stops at the first file that is not done (still being
 * written, failed, past the per-round cap), so no later event overtakes an
 * earlier one. An applied file that changes behind a later applied one
 * cannot be put in its place any more: replaying it would
 * lay old events over newer state. It is refused here, recorded failed
 * with a reason naming the file it sorts before, and holds the rest back
 * like any failed file until it is removed, renamed to sort after the
 * applied end, or skipped on purpose (`knut sync retry --skip`).
 */
#include <stdio.h>
#include <string.h>

#include "sync_int.h"

size_t knut_sync__cdc_done_end(sync_ledger *l, const knut_sync_table *t,
                               const sync_file_list *files)
{
    size_t end = 0;
    for (size_t i = 0; i < files->n; i++) {
        const sync_entry *e = knut_sync__ledger_find(l, t->name, files->items[i].path);
        if (e && strcmp(e->status, "done") == 0)
            end = i + 1;
    }
    return end;
}

knut_status knut_sync__cdc_refuse(sync_ledger *l, sync_entry *e, const sync_file_list *files,
                                  size_t done_end, knut_error *err)
{
    char reason[1024];
    snprintf(reason, sizeof reason,
             "changelog out of order: this file changed after the later file %s was applied; "
             "replaying it would put older events over newer state (put it back, rename it to "
             "sort after %s, or skip it: knut sync retry --skip)",
             files->items[done_end - 1].path, files->items[done_end - 1].path);
    e->reason = reason;
    knut_log_emit(KNUT_LOG_WARN, SYNC_LOG,
                  (knut_log_field[]){KNUT_LF_INT("round", e->round), KNUT_LF_STR("table", e->table),
                                     KNUT_LF_STR("file", e->path), KNUT_LF_STR("reason", reason)},
                  4, "file failed");
    knut_status st = knut_sync__ledger_record(l, e, 1, err);
    e->reason = NULL;
    return st;
}
