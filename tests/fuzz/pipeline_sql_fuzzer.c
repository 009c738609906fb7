/*
 * Fuzz target for the pipeline statement parser (sql_lex.c,
 * sql_parse.c): any bytes are parsed as a pipeline SQL file, and as the
 * spec YAML's libraries-free part; a failure must leave a message with a
 * position, a success an IR whose every flow and dataset is whole.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "knut/pipeline.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_ir(const knut_pipeline *p)
{
    for (size_t i = 0; i < p->ndatasets; i++) {
        const knut_pipeline_dataset *d = &p->datasets[i];
        if (!d->name || d->pos.line < 1)
            __builtin_trap();
        for (size_t k = 0; k < d->nexpectations; k++)
            if (!d->expectations[k].name || (!d->expectations[k].constraint &&
                                             d->expectations[k].nunique == 0))
                __builtin_trap();
    }
    for (size_t i = 0; i < p->nflows; i++) {
        const knut_pipeline_flow *f = &p->flows[i];
        if (!f->name || !f->target)
            __builtin_trap();
        if (f->kind == KNUT_PIPELINE_FLOW_CDC) {
            if (!f->cdc || f->cdc->nkeys == 0 || !f->cdc->sequence_by)
                __builtin_trap();
            continue;
        }
        size_t len = strlen(f->sql);
        if (f->stream && f->stream->watermark_col &&
            (f->stream->item_len == 0 || f->stream->item_at + f->stream->item_len > len ||
             f->stream->delay_us <= 0))
            __builtin_trap();
        if (f->stream && f->stream->window == KNUT_PIPELINE_WINDOW_SESSION &&
            (f->stream->nsession_keys == 0 || f->stream->gap_us <= 0))
            __builtin_trap();
        for (size_t k = 0; k < f->nsources; k++)
            if (f->sources[k].at + f->sources[k].len > len || f->sql[f->sources[k].at] != '\'')
                __builtin_trap();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    knut_pipeline *p = NULL;
    knut_error err = KNUT_ERROR_INIT;
    if (knut_pipeline_new(&p, "fuzz", "storage", &err) != KNUT_OK)
        return 0;
    knut_status st = knut_pipeline_parse_sql(p, (const char *)data, size, "fuzz.sql", &err);
    if (st == KNUT_OK)
        check_ir(p);
    else if (err.message[0] == '\0' || strncmp(err.message, "fuzz.sql", 8) != 0)
        __builtin_trap(); /* every failure names the file */
    knut_pipeline_free(p);
    return 0;
}
