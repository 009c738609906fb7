/*
 * Logging: a process-wide level plus one sink callback, and two ready-made
 * sinks (JSON lines for machines, a compact line for terminals). The
 * library never prints by itself; the CLI installs a sink. The level is an
 * atomic so the disabled path costs one load; each sink writes a record
 * with one fwrite so lines from several threads never interleave.
 */
#include "knut/core.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* Longest message or string field value kept in a record; longer text is
 * cut and marked with "...", so one runaway value cannot flood the log. */
#define LOG_TEXT_MAX ((size_t)64 << 10)
/* Hard cap on one rendered record (up to a few hundred capped fields). */
#define LOG_RECORD_MAX ((size_t)16 << 20)
#define LOG_STACK_MSG 512

static atomic_int log_level = KNUT_LOG_OFF;
/* fn and ctx change together, so they are read and written under a lock. */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static knut_log_fn log_fn;
static void *log_ctx;

static const char *const level_names[] = {"trace", "debug", "info", "warn", "error", "off"};
static const char *const level_labels[] = {"TRACE", "DEBUG", "INFO ", "WARN ", "ERROR", "OFF  "};

void knut_log_set(knut_log_level level, knut_log_fn fn, void *ctx)
{
    if (level < KNUT_LOG_TRACE || level > KNUT_LOG_OFF)
        level = KNUT_LOG_OFF;
    pthread_mutex_lock(&log_lock);
    log_fn = fn;
    log_ctx = ctx;
    /* Without a sink nothing is enabled, so KNUT_LOG never formats in vain. */
    atomic_store(&log_level, fn ? (int)level : (int)KNUT_LOG_OFF);
    pthread_mutex_unlock(&log_lock);
}

knut_log_level knut_log_level_get(void)
{
    return (knut_log_level)atomic_load_explicit(&log_level, memory_order_relaxed);
}

int knut_log_enabled(knut_log_level level)
{
    return level < KNUT_LOG_OFF &&
           (int)level >= atomic_load_explicit(&log_level, memory_order_relaxed);
}

const char *knut_log_level_name(knut_log_level level)
{
    if (level < KNUT_LOG_TRACE || level > KNUT_LOG_OFF)
        return "unknown";
    return level_names[level];
}

knut_status knut_log_level_parse(const char *s, knut_log_level *out)
{
    if (!s || !out)
        return KNUT_EINVAL;
    for (int i = KNUT_LOG_TRACE; i <= KNUT_LOG_OFF; i++) {
        if (strcasecmp(s, level_names[i]) == 0) {
            *out = (knut_log_level)i;
            return KNUT_OK;
        }
    }
    if (strcasecmp(s, "warning") == 0) {
        *out = KNUT_LOG_WARN;
        return KNUT_OK;
    }
    return KNUT_EINVAL;
}

/* Marks a cut at the end of a NUL-terminated buffer of size n (n >= 4). */
static void mark_truncated(char *s, size_t n)
{
    memcpy(s + n - 4, "...", 4);
}

void knut_log_emit(knut_log_level level, const char *target, const knut_log_field *fields,
                   size_t nfields, const char *fmt, ...)
{
    if (!knut_log_enabled(level))
        return;
    pthread_mutex_lock(&log_lock);
    knut_log_fn fn = log_fn;
    void *ctx = log_ctx;
    pthread_mutex_unlock(&log_lock);
    if (!fn)
        return;

    char stack[LOG_STACK_MSG];
    char *msg = stack;
    char *heap = NULL;
    va_list ap;
    va_start(ap, fmt);
    int n = fmt ? vsnprintf(stack, sizeof stack, fmt, ap) : 0;
    va_end(ap);
    if (n < 0) {
        snprintf(stack, sizeof stack, "(unformattable log message: %s)", fmt);
    } else if ((size_t)n >= sizeof stack) {
        size_t want = (size_t)n + 1 < LOG_TEXT_MAX ? (size_t)n + 1 : LOG_TEXT_MAX;
        heap = malloc(want);
        if (heap) {
            va_start(ap, fmt);
            vsnprintf(heap, want, fmt, ap);
            va_end(ap);
            msg = heap;
            if (want < (size_t)n + 1)
                mark_truncated(heap, want);
        } else {
            mark_truncated(stack, sizeof stack);
        }
    } else if (!fmt) {
        stack[0] = '\0';
    }

    knut_log_record rec = {
        .ts_us = knut_clock_wall_us(),
        .level = level,
        .target = target ? target : "knut",
        .msg = msg,
        .fields = nfields ? fields : NULL,
        .nfields = fields ? nfields : 0,
    };
    fn(&rec, ctx);
    free(heap);
}

/* ---- shared rendering helpers ------------------------------------------ */

/* RFC 3339 UTC with `digits` (3 or 6) fractional digits. */
static void format_ts(char *out, size_t n, int64_t ts_us, int digits)
{
    int64_t secs = ts_us / 1000000;
    int64_t frac = ts_us % 1000000;
    if (frac < 0) { /* floor division for instants before 1970 */
        frac += 1000000;
        secs -= 1;
    }
    time_t t = (time_t)secs;
    struct tm tm;
    if (!gmtime_r(&t, &tm)) {
        snprintf(out, n, "1970-01-01T00:00:00Z");
        return;
    }
    char date[40];
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm);
    if (digits == 3)
        snprintf(out, n, "%s.%03dZ", date, (int)(frac / 1000));
    else
        snprintf(out, n, "%s.%06dZ", date, (int)frac);
}

static size_t capped_len(const char *s)
{
    if (!s)
        return 0;
    const char *end = memchr(s, '\0', LOG_TEXT_MAX + 1);
    return end ? (size_t)(end - s) : LOG_TEXT_MAX + 1;
}

/* A string value, JSON-escaped and cut (marked with "...") if too long. */
static void put_json_text(knut_buf *b, const char *s)
{
    size_t len = capped_len(s);
    if (len <= LOG_TEXT_MAX) {
        knut_buf_put_json_str(b, s, len);
        return;
    }
    knut_buf_put_json_str(b, s, LOG_TEXT_MAX);
    /* Re-open the closing quote to append the marker inside the string. */
    b->len -= b->error == KNUT_OK ? 1 : 0;
    knut_buf_puts(b, "...\"");
}

/* Shortest decimal text that reads back as the same double. */
static void format_double(char *out, size_t n, double d)
{
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(out, n, "%.*g", prec, d);
        if (strtod(out, NULL) == d)
            return;
    }
}

static int is_reserved_key(const char *k)
{
    return strcmp(k, "ts") == 0 || strcmp(k, "level") == 0 || strcmp(k, "target") == 0 ||
           strcmp(k, "msg") == 0;
}

/* Writes the whole record at once: one fwrite, so lines stay whole. */
static void write_record(FILE *f, const knut_buf *b, const char *fallback)
{
    if (b->error == KNUT_OK)
        fwrite(b->data, 1, b->len, f);
    else
        fputs(fallback, f);
    fflush(f);
}

/* ---- JSON lines -------------------------------------------------------- */

void knut_log_sink_json(const knut_log_record *rec, void *ctx)
{
    FILE *f = ctx ? (FILE *)ctx : stderr;
    if (!rec)
        return;
    char ts[64];
    format_ts(ts, sizeof ts, rec->ts_us, 6);
    knut_buf b;
    knut_buf_init(&b, LOG_RECORD_MAX);
    knut_buf_printf(&b, "{\"ts\":\"%s\",\"level\":\"%s\",\"target\":", ts,
                    knut_log_level_name(rec->level));
    put_json_text(&b, rec->target ? rec->target : "");
    knut_buf_puts(&b, ",\"msg\":");
    put_json_text(&b, rec->msg ? rec->msg : "");
    for (size_t i = 0; i < rec->nfields && rec->fields; i++) {
        const knut_log_field *fl = &rec->fields[i];
        const char *key = fl->key ? fl->key : "";
        knut_buf_putc(&b, ',');
        if (is_reserved_key(key)) {
            /* A field must never shadow the record's own keys. */
            char alt[16];
            snprintf(alt, sizeof alt, "field.%s", key);
            put_json_text(&b, alt);
        } else {
            put_json_text(&b, key);
        }
        knut_buf_putc(&b, ':');
        switch (fl->kind) {
        case KNUT_LOG_FIELD_STR:
            if (fl->v.s)
                put_json_text(&b, fl->v.s);
            else
                knut_buf_puts(&b, "null");
            break;
        case KNUT_LOG_FIELD_INT:
            knut_buf_printf(&b, "%lld", (long long)fl->v.i);
            break;
        case KNUT_LOG_FIELD_DOUBLE:
            if (isfinite(fl->v.d)) {
                char num[40];
                format_double(num, sizeof num, fl->v.d);
                knut_buf_puts(&b, num);
            } else {
                /* JSON has no NaN/Infinity; a string keeps the information. */
                const char *word = isnan(fl->v.d) ? "\"NaN\""
                                   : fl->v.d > 0  ? "\"Infinity\""
                                                  : "\"-Infinity\"";
                knut_buf_puts(&b, word);
            }
            break;
        case KNUT_LOG_FIELD_BOOL:
            knut_buf_puts(&b, fl->v.b ? "true" : "false");
            break;
        default:
            knut_buf_puts(&b, "null");
            break;
        }
    }
    knut_buf_puts(&b, "}\n");
    char fallback[160];
    snprintf(fallback, sizeof fallback,
             "{\"ts\":\"%s\",\"level\":\"error\",\"target\":\"log\","
             "\"msg\":\"log record dropped: %s\"}\n",
             ts, knut_strerror(b.error));
    write_record(f, &b, fallback);
    knut_buf_reset(&b);
}

/* ---- human-readable ---------------------------------------------------- */

/* Text for a terminal: control characters are shown escaped, never sent. */
static void put_human_text(knut_buf *b, const char *s)
{
    size_t len = capped_len(s);
    size_t keep = len > LOG_TEXT_MAX ? LOG_TEXT_MAX : len;
    size_t run = 0;
    for (size_t i = 0; i < keep; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != 0x7F) {
            run++;
            continue;
        }
        knut_buf_append(b, s + i - run, run);
        run = 0;
        if (c == '\n')
            knut_buf_puts(b, "\\n");
        else if (c == '\r')
            knut_buf_puts(b, "\\r");
        else if (c == '\t')
            knut_buf_puts(b, "\\t");
        else
            knut_buf_printf(b, "\\x%02x", c);
    }
    knut_buf_append(b, s + keep - run, run);
    if (len > keep)
        knut_buf_puts(b, "...");
}

/* Plain words stay bare; anything that would confuse key=value is quoted. */
static int needs_quotes(const char *s)
{
    if (!*s)
        return 1;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p <= ' ' || *p == '"' || *p == '=' || *p == '\\' || *p == 0x7F)
            return 1;
    return 0;
}

void knut_log_sink_human(const knut_log_record *rec, void *ctx)
{
    FILE *f = ctx ? (FILE *)ctx : stderr;
    if (!rec)
        return;
    char ts[64];
    format_ts(ts, sizeof ts, rec->ts_us, 3);
    int lv = rec->level >= KNUT_LOG_TRACE && rec->level <= KNUT_LOG_OFF ? (int)rec->level
                                                                        : (int)KNUT_LOG_ERROR;
    knut_buf b;
    knut_buf_init(&b, LOG_RECORD_MAX);
    knut_buf_printf(&b, "%s %s ", ts, level_labels[lv]);
    put_human_text(&b, rec->target ? rec->target : "");
    knut_buf_puts(&b, ": ");
    put_human_text(&b, rec->msg ? rec->msg : "");
    for (size_t i = 0; i < rec->nfields && rec->fields; i++) {
        const knut_log_field *fl = &rec->fields[i];
        knut_buf_putc(&b, ' ');
        put_human_text(&b, fl->key ? fl->key : "");
        knut_buf_putc(&b, '=');
        switch (fl->kind) {
        case KNUT_LOG_FIELD_STR:
            if (!fl->v.s)
                knut_buf_puts(&b, "null");
            else if (needs_quotes(fl->v.s))
                put_json_text(&b, fl->v.s);
            else
                put_human_text(&b, fl->v.s);
            break;
        case KNUT_LOG_FIELD_INT:
            knut_buf_printf(&b, "%lld", (long long)fl->v.i);
            break;
        case KNUT_LOG_FIELD_DOUBLE: {
            char num[40];
            format_double(num, sizeof num, fl->v.d);
            knut_buf_puts(&b, num);
            break;
        }
        case KNUT_LOG_FIELD_BOOL:
            knut_buf_puts(&b, fl->v.b ? "true" : "false");
            break;
        default:
            knut_buf_puts(&b, "?");
            break;
        }
    }
    knut_buf_putc(&b, '\n');
    char fallback[128];
    snprintf(fallback, sizeof fallback, "%s ERROR log: record dropped: %s\n", ts,
             knut_strerror(b.error));
    write_record(f, &b, fallback);
    knut_buf_reset(&b);
}
