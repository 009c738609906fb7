/*
 * The event-time clauses of pipeline SQL: WINDOW / OUTPUT MODE / TRIGGER
 * in a streaming flow's header, and WATERMARK col DELAY OF INTERVAL ...
 * after a FROM item of its query (the Databricks form). Durations are
 * parsed here, not by DuckDB, so a bad one is an error at its
 * file:line:col when the file is read.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sql_int.h"

#define US_PER_S INT64_C(1000000)
#define MAX_DURATION_US (INT64_C(3650) * 86400 * US_PER_S) /* ten years */

static int64_t unit_us(const char *u, size_t n)
{
    static const struct {
        const char *name;
        int64_t us;
    } units[] = {{"microsecond", 1},           {"millisecond", 1000},
                 {"second", US_PER_S},         {"minute", 60 * US_PER_S},
                 {"hour", 3600 * US_PER_S},    {"day", 86400 * US_PER_S},
                 {"week", 7 * 86400 * US_PER_S}, {NULL, 0}};
    if (n > 1 && (u[n - 1] == 's' || u[n - 1] == 'S'))
        n--; /* MINUTES */
    for (size_t i = 0; units[i].name; i++)
        if (strlen(units[i].name) == n && strncasecmp(units[i].name, u, n) == 0)
            return units[i].us;
    return 0;
}

/* INTERVAL {N | 'N'} UNIT or INTERVAL 'N UNIT': a positive whole number
 * of a fixed-length unit (no months: their length varies). */
static knut_status duration(knut_pipeline__parser *ps, int64_t *out, int zero_ok)
{
    knut_pipeline_pos pos = here(ps);
    knut_status st = knut_pipeline__ps_want(ps, "interval");
    if (st != KNUT_OK)
        return st;
    const char *s = ps->lx.text + ps->t.at;
    size_t n = ps->t.len;
    int quoted = ps->t.kind == KNUT_PIPELINE__TOK_STRING && s[0] == '\'';
    if (!quoted && ps->t.kind != KNUT_PIPELINE__TOK_NUMBER)
        return knut_pipeline__ps_fail(ps, "a number after INTERVAL");
    if (quoted) {
        s++;
        n -= 2;
    }
    size_t i = 0;
    while (i < n && s[i] == ' ')
        i++;
    int64_t v = 0;
    size_t digits = 0;
    for (; i < n && s[i] >= '0' && s[i] <= '9'; i++, digits++) {
        if (v > INT64_MAX / 10 - 10)
            return knut_pipeline__error_at(ps->err, KNUT_EPARSE, pos, "the interval is too long");
        v = v * 10 + (s[i] - '0');
    }
    while (i < n && s[i] == ' ')
        i++;
    const char *u = s + i;
    size_t un = n - i;
    if (digits == 0 || (!quoted && un != 0))
        return knut_pipeline__error_at(ps->err, KNUT_EPARSE, pos,
                                       "expected INTERVAL N UNIT with a whole number N");
    if ((st = next(ps)) != KNUT_OK)
        return st;
    if (un == 0) { /* the unit is the next word */
        if (ps->t.kind != KNUT_PIPELINE__TOK_WORD)
            return knut_pipeline__ps_fail(ps, "a unit (SECONDS, MINUTES, HOURS, DAYS, ...)");
        u = ps->lx.text + ps->t.at;
        un = ps->t.len;
    }
    int64_t us = unit_us(u, un);
    if (us == 0)
        return knut_pipeline__error_at(ps->err, KNUT_EPARSE, pos,
                                       "unknown interval unit '%.*s' (MICROSECONDS to WEEKS; "
                                       "months and years vary in length)",
                                       (int)(un > 20 ? 20 : un), u);
    if (ps->lx.text + ps->t.at == u && (st = next(ps)) != KNUT_OK)
        return st;
    if (v > MAX_DURATION_US / us)
        return knut_pipeline__error_at(ps->err, KNUT_EPARSE, pos, "the interval is too long");
    if (v == 0 && !zero_ok)
        return knut_pipeline__error_at(ps->err, KNUT_EPARSE, pos, "the interval must be positive");
    *out = v * us;
    return KNUT_OK;
}

static knut_pipeline_streaming *stream_of(knut_pipeline__parser *ps,
                                          knut_pipeline_streaming **slot)
{
    if (!*slot)
        *slot = knut_pipeline__alloc(ps->p, sizeof **slot);
    return *slot;
}

/* (size [, slide] [, START offset]) of WINDOW TUMBLING / HOPPING. */
static knut_status window_args(knut_pipeline__parser *ps, knut_pipeline_streaming *s)
{
    knut_status st;
    if (!punct(ps, '('))
        return knut_pipeline__ps_fail(ps, "'(' and the window size");
    if ((st = next(ps)) != KNUT_OK || (st = duration(ps, &s->size_us, 0)) != KNUT_OK)
        return st;
    s->slide_us = s->size_us;
    if (s->window != KNUT_PIPELINE_WINDOW_TUMBLING) {
        if (!punct(ps, ','))
            return knut_pipeline__ps_fail(ps, "',' and the slide");
        if ((st = next(ps)) != KNUT_OK || (st = duration(ps, &s->slide_us, 0)) != KNUT_OK)
            return st;
    }
    if (punct(ps, ',')) {
        if ((st = next(ps)) != KNUT_OK || (st = knut_pipeline__ps_want(ps, "start")) != KNUT_OK ||
            (st = duration(ps, &s->start_us, 1)) != KNUT_OK)
            return st;
    }
    if (!punct(ps, ')'))
        return knut_pipeline__ps_fail(ps, "')'");
    if (s->slide_us > s->size_us)
        return knut_pipeline__error_at(ps->err, KNUT_EPARSE, s->window_pos,
                                       "the slide of a hopping window must not exceed its size");
    if (s->start_us >= s->slide_us)
        return knut_pipeline__error_at(ps->err, KNUT_EPARSE, s->window_pos,
                                       "the window START offset must be less than the %s",
                                       s->window == KNUT_PIPELINE_WINDOW_TUMBLING ? "size"
                                                                                  : "slide");
    return next(ps);
}

knut_status knut_pipeline__ps_stream_clauses(knut_pipeline__parser *ps,
                                             knut_pipeline_streaming **slot)
{
    knut_status st = KNUT_OK;
    while (is(ps, "window") || is(ps, "output") || is(ps, "trigger")) {
        knut_pipeline_pos pos = here(ps);
        knut_pipeline_streaming *s = stream_of(ps, slot);
        if (!s)
            return knut_pipeline__ps_nomem(ps);
        if (is(ps, "window")) {
            if (s->window != KNUT_PIPELINE_WINDOW_NONE)
                return knut_pipeline__error_at(ps->err, KNUT_EPARSE, pos, "a second WINDOW");
            s->window_pos = pos;
            if ((st = next(ps)) != KNUT_OK)
                return st;
            if (is(ps, "tumbling") || is(ps, "hopping") || is(ps, "sliding")) {
                s->window = is(ps, "tumbling") ? KNUT_PIPELINE_WINDOW_TUMBLING
                                               : KNUT_PIPELINE_WINDOW_HOPPING;
                if ((st = next(ps)) != KNUT_OK || (st = window_args(ps, s)) != KNUT_OK)
                    return st;
                continue;
            }
            if (!is(ps, "session"))
                return knut_pipeline__ps_fail(ps, "TUMBLING, HOPPING or SESSION");
            s->window = KNUT_PIPELINE_WINDOW_SESSION;
            if ((st = next(ps)) != KNUT_OK)
                return st;
            if (!punct(ps, '('))
                return knut_pipeline__ps_fail(ps, "'(' and the session gap");
            if ((st = next(ps)) != KNUT_OK || (st = duration(ps, &s->gap_us, 0)) != KNUT_OK)
                return st;
            if (!punct(ps, ')'))
                return knut_pipeline__ps_fail(ps, "')'");
            if ((st = next(ps)) != KNUT_OK)
                return st;
            if (!is(ps, "keys"))
                return knut_pipeline__ps_fail(ps, "KEYS (cols) of the session window (a session "
                                                  "is per key)");
            if ((st = next(ps)) != KNUT_OK)
                return st;
            if (!punct(ps, '('))
                return knut_pipeline__ps_fail(ps, "'(' and the session keys");
            st = knut_pipeline__ps_name_list(ps, &s->session_keys, &s->nsession_keys);
            if (st != KNUT_OK)
                return st;
        } else if (is(ps, "output")) {
            if (s->mode_given)
                return knut_pipeline__error_at(ps->err, KNUT_EPARSE, pos, "a second OUTPUT MODE");
            s->mode_pos = pos;
            s->mode_given = 1;
            if ((st = next(ps)) != KNUT_OK || (st = knut_pipeline__ps_want(ps, "mode")) != KNUT_OK)
                return st;
            if (is(ps, "append"))
                s->mode = KNUT_PIPELINE_OUTPUT_APPEND;
            else if (is(ps, "update"))
                s->mode = KNUT_PIPELINE_OUTPUT_UPDATE;
            else if (is(ps, "complete"))
                s->mode = KNUT_PIPELINE_OUTPUT_COMPLETE;
            else
                return knut_pipeline__ps_fail(ps, "APPEND, UPDATE or COMPLETE");
            if ((st = next(ps)) != KNUT_OK)
                return st;
        } else {
            if (s->trigger_pos.line)
                return knut_pipeline__error_at(ps->err, KNUT_EPARSE, pos, "a second TRIGGER");
            s->trigger_pos = pos;
            if ((st = next(ps)) != KNUT_OK)
                return st;
            if (is(ps, "once")) {
                s->trigger = KNUT_PIPELINE_TRIGGER_ONCE;
                st = next(ps);
            } else if (is(ps, "available")) {
                s->trigger = KNUT_PIPELINE_TRIGGER_AVAILABLE_NOW;
                if ((st = next(ps)) == KNUT_OK)
                    st = knut_pipeline__ps_want(ps, "now");
            } else if (is(ps, "processing")) {
                s->trigger = KNUT_PIPELINE_TRIGGER_PROCESSING_TIME;
                if ((st = next(ps)) == KNUT_OK && (st = knut_pipeline__ps_want(ps, "time")) ==
                                                      KNUT_OK)
                    st = duration(ps, &s->interval_us, 0);
            } else {
                return knut_pipeline__ps_fail(ps, "ONCE, AVAILABLE NOW or PROCESSING TIME "
                                                  "INTERVAL ...");
            }
            if (st != KNUT_OK)
                return st;
        }
    }
    return st;
}

knut_status knut_pipeline__ps_watermark(knut_pipeline__parser *ps, knut_pipeline_flow *f,
                                        size_t item_at, size_t item_len)
{
    knut_pipeline_pos pos = here(ps);
    knut_pipeline_streaming *s = stream_of(ps, &f->stream);
    if (!s)
        return knut_pipeline__ps_nomem(ps);
    if (s->watermark_col)
        return knut_pipeline__error_at(ps->err, KNUT_EPARSE, pos,
                                       "a second WATERMARK in flow '%s' (one event-time input "
                                       "per flow)", f->name);
    if (item_len == 0)
        return knut_pipeline__error_at(ps->err, KNUT_EPARSE, pos,
                                       "WATERMARK follows a FROM item (FROM STREAM(t) WATERMARK "
                                       "col DELAY OF INTERVAL ...)");
    s->watermark_pos = pos;
    s->item_at = item_at;
    s->item_len = item_len;
    knut_status st = knut_pipeline__ps_want(ps, "watermark");
    if (st == KNUT_OK)
        st = knut_pipeline__ps_ident(ps, &s->watermark_col, "the event-time column");
    if (st == KNUT_OK)
        st = knut_pipeline__ps_want(ps, "delay");
    if (st == KNUT_OK)
        st = knut_pipeline__ps_want(ps, "of");
    if (st == KNUT_OK)
        st = duration(ps, &s->delay_us, 0);
    if (st == KNUT_OK && s->delay_us >= INT64_C(30) * 86400 * US_PER_S)
        st = knut_pipeline__error_at(ps->err, KNUT_EPARSE, pos,
                                     "the watermark delay must be less than 30 days");
    return st;
}
