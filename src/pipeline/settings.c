/*
 * The spec's `configuration:` map: knut's own settings (knut.*), Spark's
 * (spark.*: only for --backend spark, which passes them to the graph) and
 * DuckDB's (everything else, applied with SET). The same code checks them
 * when the spec is resolved (on a throwaway in-memory database, so a bad
 * setting is a spec error that `validate` and `show` find too, with its
 * file:line:col) and applies them when the pipeline runs.
 */
#include <stdlib.h>
#include <string.h>

#include "pipeline_int.h"

knut_status knut_pipeline__settings_apply(const knut_pipeline *p, knut_duck_conn *conn,
                                          int64_t *files_per_update, knut_error *err)
{
    knut_buf b = KNUT_BUF_INIT;
    knut_status st = KNUT_OK;
    *files_per_update = KNUT_PIPELINE_FILES_PER_UPDATE;
    for (size_t i = 0; i < p->nconfiguration && st == KNUT_OK; i++) {
        const char *name = p->configuration[i].name, *value = p->configuration[i].value;
        if (strncmp(name, "knut.", 5) == 0) {
            char *end = NULL;
            long long v = strtoll(value, &end, 10);
            if (strcmp(name, "knut.max_files_per_update") != 0 || !end || end == value ||
                *end || v < 1 || v > KNUT_PIPELINE_FILES_PER_UPDATE)
                st = knut_pipeline__error_at(err, KNUT_EINVAL, p->configuration[i].pos,
                                             "configuration %s: unknown, or not a number from 1 "
                                             "to %d (knut.max_files_per_update)",
                                             name, KNUT_PIPELINE_FILES_PER_UPDATE);
            else
                *files_per_update = v;
            continue;
        }
        if (strncmp(name, "spark.", 6) == 0)
            continue; /* the same spec runs on Spark: its settings are Spark's */
        knut_buf_clear(&b);
        knut_buf_puts(&b, "SET ");
        knut_duck_ident(&b, name);
        knut_buf_puts(&b, " = ");
        knut_duck_literal(&b, value, strlen(value));
        if ((st = knut_buf_check(&b, err)) == KNUT_OK &&
            (st = knut_duck_exec(conn, b.data, err)) != KNUT_OK)
            st = knut_pipeline__error_at(err, KNUT_EINVAL, p->configuration[i].pos,
                                         "configuration %s: %s", name, err->message);
    }
    knut_buf_reset(&b);
    return st;
}
