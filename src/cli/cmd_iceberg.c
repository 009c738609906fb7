/*
 * `knut iceberg`: inspect Apache Iceberg tables. `info` and `snapshots`
 * print the table metadata; `cat` and `changes` (cmd_iceberg_cat.c) print
 * the rows of a snapshot and the changes between two. Every sub-command names its table the same way, through
 * knut_cli_iceberg_open: a table folder or metadata file, or an identifier
 * in a SQLite catalog (--catalog).
 */
#include "cli.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "knut/knut.h"

knut_status knut_cli_iceberg_open(const char *table, const char *catalog,
                                  const char *catalog_name, knut_iceberg_table **out,
                                  knut_error *err)
{
    knut_iceberg_ref ref = {KNUT_ICEBERG_CATALOG_PATH, table, NULL, NULL};
    if (catalog) {
        ref.kind = KNUT_ICEBERG_CATALOG_SQLITE;
        ref.path = catalog;
        ref.catalog = catalog_name;
        ref.identifier = table;
    }
    char *meta = NULL;
    knut_status st = knut_iceberg_catalog_locate(&ref, &meta, err);
    if (st == KNUT_OK)
        st = knut_iceberg_table_load(out, meta, err);
    free(meta);
    return st;
}

typedef struct meta_args {
    const char *table;
    const char *catalog;
    const char *catalog_name;
    int format; /* 0 text, 1 json */
} meta_args;

static const char *const meta_formats[] = {"text", "json", NULL};

static const knut_cli_opt meta_opts[] = {
    KNUT_CLI_OPT_CHOICE("format", 'f', meta_args, format, "FMT", meta_formats,
                        "text   aligned text (the default)\n"
                        "json   one JSON object (info) or one per line (snapshots)"),
    KNUT_CLI_ICEBERG_TABLE_OPTS(meta_args),
    KNUT_CLI_OPT_END,
};

static const knut_cli_arg meta_pos[] = {
    KNUT_CLI_ARG("TABLE", meta_args, table),
    KNUT_CLI_ARG_END,
};

#define TABLE_ABOUT                                                                      \
    "TABLE is a table folder (metadata/ with version-hint.text or v<N>.metadata.json,\n" \
    "or pyiceberg's NNNNN-<uuid>.metadata.json), one *.metadata.json file, or with\n"   \
    "--catalog an identifier NAMESPACE.NAME in a SQLite catalog.\n"

static const knut_cli_spec info_spec = {
    .name = "iceberg info",
    .synopsis = "usage: knut iceberg info [-f|--format text|json] [-c|--catalog FILE]\n"
                "                         [--catalog-name NAME] TABLE\n",
    .about = "Describes an Iceberg table: format version, location, current snapshot,\n"
             "the current schema (field ids, types), partition spec and properties.\n" TABLE_ABOUT,
    .opts = meta_opts,
    .args = meta_pos,
    .epilog = "Examples:\n"
              "  knut iceberg info warehouse/db/events\n"
              "  knut iceberg info -c catalog.db db.events -f json\n"
              "\n"
              "Exit status: 0 ok, 1 the table could not be read (the message names the\n"
              "file), 2 usage error.\n",
};

static const knut_cli_spec snapshots_spec = {
    .name = "iceberg snapshots",
    .synopsis = "usage: knut iceberg snapshots [-f|--format text|json] [-c|--catalog FILE]\n"
                "                              [--catalog-name NAME] TABLE\n",
    .about = "Lists the snapshots of an Iceberg table, oldest first (by sequence number):\n"
             "id, parent, sequence number, time, operation, records added and in total.\n"
             "The current one is marked with '*'.\n" TABLE_ABOUT,
    .opts = meta_opts,
    .args = meta_pos,
    .epilog = "Examples:\n"
              "  knut iceberg snapshots warehouse/db/events\n"
              "  knut iceberg snapshots -f json -c catalog.db db.events | jq .snapshot_id\n"
              "\n"
              "Exit status: 0 ok, 1 the table could not be read, 2 usage error.\n",
};

static const char *summary(const knut_iceberg_snapshot *s, const char *key)
{
    for (size_t i = 0; i < s->n_summary; i++)
        if (strcmp(s->summary_keys[i], key) == 0)
            return s->summary_values[i];
    return NULL;
}

static void iso_time(char *out, size_t cap, int64_t ms)
{
    time_t secs = (time_t)(ms / 1000);
    struct tm tm;
    if (!gmtime_r(&secs, &tm) || !strftime(out, cap, "%Y-%m-%dT%H:%M:%S", &tm))
        snprintf(out, cap, "%" PRId64, ms);
    else
        snprintf(out + strlen(out), cap - strlen(out), ".%03dZ", (int)(ms % 1000));
}

static void put_field_json(knut_buf *b, const knut_iceberg_field *f)
{
    knut_buf_printf(b, "{\"id\":%" PRId32 ",\"name\":", f->id);
    knut_buf_put_json_str(b, f->name, strlen(f->name));
    knut_buf_puts(b, ",\"type\":");
    knut_buf_put_json_str(b, f->type, strlen(f->type));
    knut_buf_printf(b, ",\"required\":%s", f->required ? "true" : "false");
    if (f->n_children) {
        knut_buf_puts(b, ",\"fields\":[");
        for (size_t i = 0; i < f->n_children; i++) {
            knut_buf_puts(b, i ? "," : "");
            put_field_json(b, &f->children[i]);
        }
        knut_buf_puts(b, "]");
    }
    knut_buf_puts(b, "}");
}

static void print_field_text(const knut_iceberg_field *f, int depth)
{
    printf("  %*s%-4" PRId32 " %-24s %s%s\n", depth * 2, "", f->id, f->name, f->type,
           f->required ? " (required)" : "");
    for (size_t i = 0; i < f->n_children; i++)
        print_field_text(&f->children[i], depth + 1);
}

static void print_info_json(const knut_iceberg_table *t, const knut_iceberg_schema *s,
                            const knut_iceberg_spec *spec)
{
    knut_buf b = KNUT_BUF_INIT;
    knut_buf_printf(&b, "{\"format_version\":%d", t->format_version);
    knut_buf_puts(&b, ",\"uuid\":"); /* optional in v1 */
    if (t->uuid)
        knut_buf_put_json_str(&b, t->uuid, strlen(t->uuid));
    else
        knut_buf_puts(&b, "null");
    knut_buf_puts(&b, ",\"location\":");
    knut_buf_put_json_str(&b, t->location, strlen(t->location));
    knut_buf_puts(&b, ",\"metadata\":");
    knut_buf_put_json_str(&b, t->metadata_path, strlen(t->metadata_path));
    if (t->current_snapshot_id >= 0)
        knut_buf_printf(&b, ",\"current_snapshot_id\":%" PRId64, t->current_snapshot_id);
    else
        knut_buf_puts(&b, ",\"current_snapshot_id\":null");
    knut_buf_printf(&b, ",\"snapshots\":%zu,\"last_sequence_number\":%" PRId64
                        ",\"schema_id\":%" PRId32 ",\"fields\":[",
                    t->n_snapshots, t->last_sequence_number, s ? s->schema_id : -1);
    for (size_t i = 0; s && i < s->n_fields; i++) {
        knut_buf_puts(&b, i ? "," : "");
        put_field_json(&b, &s->fields[i]);
    }
    knut_buf_printf(&b, "],\"spec_id\":%" PRId32 ",\"partition\":[", t->default_spec_id);
    for (size_t i = 0; spec && i < spec->n_fields; i++) {
        const knut_iceberg_partition_field *p = &spec->fields[i];
        knut_buf_printf(&b, "%s{\"name\":", i ? "," : "");
        knut_buf_put_json_str(&b, p->name, strlen(p->name));
        knut_buf_printf(&b, ",\"source_id\":%" PRId32 ",\"field_id\":%" PRId32 ",\"transform\":",
                        p->source_id, p->field_id);
        knut_buf_put_json_str(&b, p->transform, strlen(p->transform));
        knut_buf_puts(&b, "}");
    }
    knut_buf_puts(&b, "],\"properties\":{");
    for (size_t i = 0; i < t->n_props; i++) {
        knut_buf_puts(&b, i ? "," : "");
        knut_buf_put_json_member(&b, t->prop_keys[i], t->prop_values[i]);
    }
    knut_buf_puts(&b, "}}\n");
    fwrite(b.data, 1, b.len, stdout);
    knut_buf_reset(&b);
}

static void print_info_text(const knut_iceberg_table *t, const knut_iceberg_schema *s,
                            const knut_iceberg_spec *spec)
{
    printf("table      %s\n", t->location);
    printf("metadata   %s\n", t->metadata_path);
    printf("format     v%d, uuid %s\n", t->format_version, t->uuid ? t->uuid : "none");
    if (t->current_snapshot_id >= 0)
        printf("snapshot   %" PRId64 " (of %zu; last sequence number %" PRId64 ")\n",
               t->current_snapshot_id, t->n_snapshots, t->last_sequence_number);
    else
        printf("snapshot   none (an empty table)\n");
    printf("schema     %" PRId32 ":\n", s ? s->schema_id : -1);
    for (size_t i = 0; s && i < s->n_fields; i++)
        print_field_text(&s->fields[i], 0);
    if (!spec || spec->n_fields == 0)
        printf("partition  none\n");
    else
        printf("partition  spec %" PRId32 ":\n", spec->spec_id);
    for (size_t i = 0; spec && i < spec->n_fields; i++)
        printf("  %-24s %s(field %" PRId32 ")\n", spec->fields[i].name,
               spec->fields[i].transform, spec->fields[i].source_id);
    if (t->n_props)
        printf("properties\n");
    for (size_t i = 0; i < t->n_props; i++)
        printf("  %s = %s\n", t->prop_keys[i], t->prop_values[i]);
}

static int cmp_seq(const void *a, const void *b)
{
    const knut_iceberg_snapshot *x = *(const knut_iceberg_snapshot *const *)a;
    const knut_iceberg_snapshot *y = *(const knut_iceberg_snapshot *const *)b;
    if (x->sequence_number != y->sequence_number)
        return x->sequence_number < y->sequence_number ? -1 : 1;
    return x->timestamp_ms < y->timestamp_ms ? -1 : x->timestamp_ms > y->timestamp_ms;
}

static void print_snapshots(const knut_iceberg_table *t, int json)
{
    /* Snapshot ids are random: order by sequence number, then time. */
    const knut_iceberg_snapshot **v = calloc(t->n_snapshots ? t->n_snapshots : 1, sizeof *v);
    if (!v)
        return;
    for (size_t i = 0; i < t->n_snapshots; i++)
        v[i] = &t->snapshots[i];
    qsort(v, t->n_snapshots, sizeof *v, cmp_seq);
    if (!json)
        printf("  %-20s %-20s %5s %-24s %-10s %12s %12s\n", "snapshot_id", "parent", "seq",
               "committed", "operation", "added", "total");
    for (size_t i = 0; i < t->n_snapshots; i++) {
        const knut_iceberg_snapshot *s = v[i];
        const char *added = summary(s, "added-records"), *total = summary(s, "total-records");
        char when[40], parent[24];
        iso_time(when, sizeof when, s->timestamp_ms);
        snprintf(parent, sizeof parent, "%" PRId64, s->parent_id);
        if (json) {
            knut_buf b = KNUT_BUF_INIT;
            knut_buf_printf(&b, "{\"snapshot_id\":%" PRId64 ",\"parent_id\":%s,"
                                "\"sequence_number\":%" PRId64 ",\"timestamp_ms\":%" PRId64
                                ",\"committed\":\"%s\",\"current\":%s,",
                            s->snapshot_id, s->parent_id >= 0 ? parent : "null",
                            s->sequence_number, s->timestamp_ms, when,
                            s->snapshot_id == t->current_snapshot_id ? "true" : "false");
            knut_buf_put_json_member(&b, "operation", s->operation);
            knut_buf_puts(&b, ",");
            knut_buf_put_json_member(&b, "manifest_list", s->manifest_list);
            knut_buf_puts(&b, ",\"summary\":{");
            for (size_t k = 0; k < s->n_summary; k++) {
                knut_buf_puts(&b, k ? "," : "");
                knut_buf_put_json_member(&b, s->summary_keys[k], s->summary_values[k]);
            }
            knut_buf_puts(&b, "}}\n");
            fwrite(b.data, 1, b.len, stdout);
            knut_buf_reset(&b);
        } else {
            printf("%s %-20" PRId64 " %-20s %5" PRId64 " %-24s %-10s %12s %12s\n",
                   s->snapshot_id == t->current_snapshot_id ? "*" : " ", s->snapshot_id,
                   s->parent_id >= 0 ? parent : "-", s->sequence_number, when, s->operation,
                   added ? added : "-", total ? total : "-");
        }
    }
    free(v);
}

static int run_meta(const knut_cli_spec *spec, int snapshots, int argc, char **argv)
{
    meta_args a = {0};
    knut_error err = KNUT_ERROR_INIT;
    knut_iceberg_table *t = NULL;
    int rc = knut_cli_args_parse(spec, argc, argv, &a);
    if (rc != KNUT_CLI_RUN)
        return rc;
    if (knut_cli_iceberg_open(a.table, a.catalog, a.catalog_name, &t, &err) != KNUT_OK) {
        fprintf(stderr, "knut %s: %s\n", spec->name, err.message);
        return KNUT_EXIT_FAIL;
    }
    if (snapshots) {
        print_snapshots(t, a.format == 1);
    } else {
        const knut_iceberg_schema *s = knut_iceberg_table_schema(t, t->current_schema_id);
        const knut_iceberg_spec *p = knut_iceberg_table_spec(t, t->default_spec_id);
        if (a.format == 1)
            print_info_json(t, s, p);
        else
            print_info_text(t, s, p);
    }
    knut_iceberg_table_free(t);
    return fflush(stdout) == 0 ? KNUT_EXIT_OK : KNUT_EXIT_FAIL;
}

static int cmd_info(int argc, char **argv)
{
    return run_meta(&info_spec, 0, argc, argv);
}

static int cmd_snapshots(int argc, char **argv)
{
    return run_meta(&snapshots_spec, 1, argc, argv);
}

static const knut_cli_sub subs[] = {
    {"info", cmd_info, "describe a table: schema, partitioning, current snapshot", &info_spec},
    {"snapshots", cmd_snapshots, "list a table's snapshots", &snapshots_spec},
    {"cat", knut_cmd_iceberg_cat, "print the rows of a snapshot (deletes applied)",
     &knut_cmd_iceberg_cat_spec},
    {"changes", knut_cmd_iceberg_changes, "print the row-level changes between two snapshots",
     &knut_cmd_iceberg_changes_spec},
    {NULL, NULL, NULL, NULL},
};

const knut_cli_group knut_cmd_iceberg_group = {
    "iceberg", "Inspect Apache Iceberg tables (format v1 and v2).", subs};

int knut_cmd_iceberg(int argc, char **argv)
{
    return knut_cli_dispatch(&knut_cmd_iceberg_group, argc, argv);
}
