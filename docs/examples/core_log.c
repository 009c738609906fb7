/*
 * core_log: logging through the process-wide sink. The library never
 * prints; it hands knut_log_record values to whatever sink was installed
 * with knut_log_set, and records below the level are dropped before any
 * formatting. This installs a small custom sink, logs with structured
 * fields, then feeds one record with a fixed timestamp to the ready-made
 * JSON-lines and human sinks so their exact output can be shown.
 */
#include <stdio.h>

#include <knut/core.h>

/* A custom sink: ctx is whatever was passed to knut_log_set. */
static void print_sink(const knut_log_record *rec, void *ctx)
{
    const char *prefix = ctx;
    printf("%s[%s] %s: %s", prefix, knut_log_level_name(rec->level), rec->target, rec->msg);
    for (size_t i = 0; i < rec->nfields; i++)
        if (rec->fields[i].kind == KNUT_LOG_FIELD_INT)
            printf(" %s=%lld", rec->fields[i].key, (long long)rec->fields[i].v.i);
    printf("\n");
}

int main(void)
{
    knut_log_level level;
    if (knut_log_level_parse("info", &level) != KNUT_OK)
        return 1;
    knut_log_set(level, print_sink, "example ");

    KNUT_LOG(KNUT_LOG_DEBUG, "demo", "not shown: below the level");
    KNUT_LOG(KNUT_LOG_INFO, "demo", "loaded %d tables", 3);
    knut_log_field fields[] = {KNUT_LF_INT("rows", 1000), KNUT_LF_STR("table", "people")};
    knut_log_emit(KNUT_LOG_WARN, "sync", fields, 2, "slow round");
    printf("debug enabled: %d, warn enabled: %d\n", knut_log_enabled(KNUT_LOG_DEBUG),
           knut_log_enabled(KNUT_LOG_WARN));

    /* The ready-made sinks, fed directly with a fixed timestamp. */
    knut_log_field more[] = {
        KNUT_LF_STR("table", "people"), KNUT_LF_INT("rows", 1000),
        KNUT_LF_DBL("secs", 0.25),      KNUT_LF_BOOL("full", 1),
        KNUT_LF_STR("msg", "a field named like a record key"),
    };
    knut_log_record rec = {
        .ts_us = 1767225600123456, /* 2026-01-01T00:00:00.123456Z */
        .level = KNUT_LOG_INFO,
        .target = "sync",
        .msg = "round done",
        .fields = more,
        .nfields = 5,
    };
    fflush(stdout);
    knut_log_sink_json(&rec, stdout);
    knut_log_sink_human(&rec, stdout);

    knut_log_set(KNUT_LOG_OFF, NULL, NULL); /* logging off again */
    return 0;
}
