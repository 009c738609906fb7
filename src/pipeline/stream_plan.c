/*
 * Resolve-time checks of a flow's event-time clauses (WATERMARK, WINDOW,
 * OUTPUT MODE, TRIGGER): the combinations Structured Streaming refuses
 * are refused here too, at the clause's file:line:col, before a run
 * touches the storage.
 */
#include <string.h>
#include <strings.h>

#include "pipeline_int.h"

/* The FROM item text of the WATERMARK clause, trimmed of blanks (STREAM
 * and its parentheses are blanked in f->sql). */
static void item_word(const knut_pipeline_flow *f, const char **at, size_t *n)
{
    const char *s = f->sql + f->stream->item_at;
    size_t len = f->stream->item_len;
    while (len && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r'))
        s++, len--;
    while (len && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\n' ||
                   s[len - 1] == '\r'))
        len--;
    if (len >= 2 && s[0] == '"' && s[len - 1] == '"')
        s++, len -= 2;
    *at = s;
    *n = len;
}

knut_status knut_pipeline__stream_check(const knut_pipeline *p, const knut_pipeline_flow *f,
                                        knut_error *err)
{
    (void)p;
    const knut_pipeline_streaming *s = f->stream;
    if (!s)
        return KNUT_OK;
    knut_pipeline_pos pos = s->watermark_col ? s->watermark_pos
                            : s->window      ? s->window_pos
                            : s->mode_given  ? s->mode_pos
                                             : s->trigger_pos;
    if (f->kind != KNUT_PIPELINE_FLOW_STREAMING)
        return knut_pipeline__error_at(err, KNUT_EINVAL, pos,
                                       "flow '%s': WATERMARK, WINDOW, OUTPUT MODE and TRIGGER "
                                       "belong to streaming flows (a streaming table's query or "
                                       "CREATE FLOW ... INSERT INTO)", f->name);
    if (s->window && !s->watermark_col) {
        if (s->mode == KNUT_PIPELINE_OUTPUT_APPEND)
            return knut_pipeline__error_at(err, KNUT_EINVAL, s->window_pos,
                                           "flow '%s': an aggregation without a watermark cannot "
                                           "run in append mode (no window would ever be final); "
                                           "add WATERMARK col DELAY OF INTERVAL ... after its "
                                           "FROM item", f->name);
        return knut_pipeline__error_at(err, KNUT_EINVAL, s->window_pos,
                                       "flow '%s': WINDOW needs a WATERMARK clause on its input "
                                       "(the window's event-time column)", f->name);
    }
    if (s->window == KNUT_PIPELINE_WINDOW_SESSION && s->mode == KNUT_PIPELINE_OUTPUT_UPDATE)
        return knut_pipeline__error_at(err, KNUT_EINVAL, s->mode_pos,
                                       "flow '%s': session windows do not support OUTPUT MODE "
                                       "UPDATE (a session can merge into another)", f->name);
    if (!s->window && s->mode == KNUT_PIPELINE_OUTPUT_COMPLETE)
        return knut_pipeline__error_at(err, KNUT_EINVAL, s->mode_pos,
                                       "flow '%s': OUTPUT MODE COMPLETE needs a WINDOW "
                                       "(complete mode is for aggregations)", f->name);
    if (s->mode_given && !s->watermark_col)
        return knut_pipeline__error_at(err, KNUT_EINVAL, s->mode_pos,
                                       "flow '%s': OUTPUT MODE needs a WATERMARK clause", f->name);
    if (!s->watermark_col)
        return KNUT_OK;
    /* The watermarked item is the flow's one streaming input. */
    size_t in_item = 0, outside = 0;
    for (size_t i = 0; i < f->nsources; i++) {
        if (f->sources[i].at >= s->item_at && f->sources[i].at < s->item_at + s->item_len)
            in_item++;
        else
            outside++;
    }
    const char *w;
    size_t wn;
    item_word(f, &w, &wn);
    for (size_t i = 0; i < f->nstream_names; i++) {
        if (strlen(f->stream_names[i]) == wn && strncasecmp(f->stream_names[i], w, wn) == 0 &&
            in_item == 0)
            in_item++;
        else
            outside++;
    }
    if (in_item != 1)
        return knut_pipeline__error_at(err, KNUT_EINVAL, s->watermark_pos,
                                       "flow '%s': WATERMARK must follow its streaming input "
                                       "(STREAM(table) or one read_csv/read_parquet/read_json "
                                       "of a path), not '%.*s'",
                                       f->name, (int)(wn > 60 ? 60 : wn), w);
    if (outside)
        return knut_pipeline__error_at(err, KNUT_EINVAL, s->watermark_pos,
                                       "flow '%s': a flow with a WATERMARK reads one streaming "
                                       "input (stream-stream joins are not supported)", f->name);
    return KNUT_OK;
}
