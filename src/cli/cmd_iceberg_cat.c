/*
 * `knut iceberg cat`: prints the rows of one snapshot of an Iceberg table
 * (the current one by default) as a table, CSV, JSON lines or an Arrow IPC
 * stream; `knut iceberg changes`: the row-level changelog between two
 * snapshots, the same way. Both run on an in-memory DuckDB: data files
 * read by field id, position and equality deletes applied
 * (src/iceberg/scan.c, changes.c), rows streamed batch by batch through the
 * renderer.
 */
#include "cli.h"

#include <stdlib.h>
#include <unistd.h>

#include "knut/knut.h"
#include "render.h"

typedef struct cat_args {
    const char *table;
    const char *catalog;
    const char *catalog_name;
    int64_t snapshot;
    int64_t from, to;
    int format;
    int64_t limit;
    int64_t max_width;
} cat_args;

#define ROW_OPTS                                                                              \
    KNUT_CLI_OPT_CHOICE("format", 'f', cat_args, format, "FMT", knut_cli_format_names,        \
                        KNUT_CLI_FORMAT_HELP),                                                \
    KNUT_CLI_OPT_INT("limit", 'n', cat_args, limit, "N", 1, INT64_MAX,                        \
                     "print at most N rows (default: all; a table shows 1000 unless --limit " \
                     "is given)"),                                                            \
    KNUT_CLI_OPT_INT("max-width", 0, cat_args, max_width, "N", 1, 100000,                     \
                     "table only: cut cells longer than N characters"),                       \
    KNUT_CLI_ICEBERG_TABLE_OPTS(cat_args)

static const knut_cli_opt cat_opts[] = {
    KNUT_CLI_OPT_INT("snapshot", 's', cat_args, snapshot, "ID", 1, INT64_MAX,
                     "read snapshot ID (see 'knut iceberg snapshots'; default: the current one)"),
    ROW_OPTS,
    KNUT_CLI_OPT_END,
};

static const knut_cli_opt changes_opts[] = {
    KNUT_CLI_OPT_INT("from", 0, cat_args, from, "ID", 1, INT64_MAX,
                     "changes after snapshot ID (default: from the start, every row an INSERT)"),
    KNUT_CLI_OPT_INT("to", 0, cat_args, to, "ID", 1, INT64_MAX,
                     "up to and including snapshot ID (default: the current one)"),
    ROW_OPTS,
    KNUT_CLI_OPT_END,
};

static const knut_cli_arg cat_pos[] = {
    KNUT_CLI_ARG("TABLE", cat_args, table),
    KNUT_CLI_ARG_END,
};

const knut_cli_spec knut_cmd_iceberg_cat_spec = {
    .name = "iceberg cat",
    .synopsis = "usage: knut iceberg cat [-s|--snapshot ID] [-f|--format table|csv|json|arrow]\n"
                "                        [-n|--limit N] [--max-width N] [-c|--catalog FILE]\n"
                "                        [--catalog-name NAME] TABLE\n",
    .about =
        "Prints the rows of an Iceberg table as of one snapshot, with its position and\n"
        "equality deletes applied. Columns are those of the schema the snapshot was\n"
        "written under, matched to each data file by field id (renamed, added,\n"
        "dropped and reordered columns read correctly). Parquet data files only;\n"
        "nested columns and format v3 tables are refused with a clear error.\n"
        "TABLE is a table folder (metadata/ with version-hint.text or\n"
        "v<N>.metadata.json, or pyiceberg's NNNNN-<uuid>.metadata.json), one\n"
        "*.metadata.json file, or with --catalog an identifier NAMESPACE.NAME.\n",
    .opts = cat_opts,
    .args = cat_pos,
    .epilog = "Examples:\n"
              "  knut iceberg cat warehouse/db/events\n"
              "  knut iceberg cat -c catalog.db db.events -f csv > events.csv\n"
              "  knut iceberg cat -s 3051729675574597004 -f json -n 10 warehouse/db/events\n"
              "\n"
              "Exit status: 0 ok, 1 the table or a file could not be read (the message\n"
              "names the file), 2 usage error.\n",
};

const knut_cli_spec knut_cmd_iceberg_changes_spec = {
    .name = "iceberg changes",
    .synopsis = "usage: knut iceberg changes [--from ID] [--to ID]\n"
                "                            [-f|--format table|csv|json|arrow] [-n|--limit N]\n"
                "                            [--max-width N] [-c|--catalog FILE]\n"
                "                            [--catalog-name NAME] TABLE\n",
    .about =
        "Prints the row-level changelog of an Iceberg table between two snapshots:\n"
        "the columns of the --to snapshot's schema plus _change_type (DELETE or\n"
        "INSERT), _change_ordinal (the commit, from 0) and _commit_snapshot_id,\n"
        "in commit order with each commit's DELETEs first. An append gives the rows\n"
        "it added; a replace (compaction) nothing; a delete or overwrite (copy-on-\n"
        "write, position or equality deletes alike) the rows that vanished and the\n"
        "rows that appeared. Without --from every row of --to is an INSERT. A --from\n"
        "that is not an ancestor of --to (expired or rolled back) is an error: a full\n"
        "resync is needed. TABLE as for 'knut iceberg cat'.\n",
    .opts = changes_opts,
    .args = cat_pos,
    .epilog = "Examples:\n"
              "  knut iceberg changes --from 5964071544870467071 warehouse/db/events\n"
              "  knut iceberg changes -c catalog.db db.events --from 1 -f json\n"
              "\n"
              "Exit status: 0 ok, 1 the table or a file could not be read, or --from is\n"
              "not an ancestor of --to, 2 usage error.\n",
};

static int run_rows(const knut_cli_spec *spec, int changes, int argc, char **argv)
{
    cat_args a = {0};
    knut_error err = KNUT_ERROR_INIT;
    knut_iceberg_table *t = NULL;
    knut_duck_db *db = NULL;
    knut_duck_conn *conn = NULL;
    struct ArrowArrayStream rows = {0};
    int rc = knut_cli_args_parse(spec, argc, argv, &a);
    if (rc != KNUT_CLI_RUN)
        return rc;
    knut_cli_render_opts render = {
        .format = (knut_cli_format)a.format,
        .max_rows = a.limit ? a.limit : KNUT_CLI_TABLE_DEFAULT_MAX_ROWS,
        .max_width = (int)a.max_width,
    };
    if (render.format == KNUT_CLI_FORMAT_ARROW && isatty(STDOUT_FILENO))
        return knut_cli_args_error(spec, "%s", "refusing to write Arrow IPC bytes to a "
                                                    "terminal: redirect stdout");
    rc = KNUT_EXIT_FAIL;
    if (knut_cli_iceberg_open(a.table, a.catalog, a.catalog_name, &t, &err) != KNUT_OK)
        goto cleanup;
    if (knut_duck_db_open(&db, NULL, NULL, 0, &err) != KNUT_OK ||
        knut_duck_conn_open(&conn, db, &err) != KNUT_OK)
        goto cleanup;
    knut_status st = changes ? knut_iceberg_changes(conn, t, a.from ? a.from : -1,
                                                    a.to ? a.to : -1, a.limit, &rows, &err)
                             : knut_iceberg_scan(conn, t, a.snapshot ? a.snapshot : -1, a.limit,
                                                 &rows, &err);
    if (st != KNUT_OK)
        goto cleanup;
    if (!isatty(STDOUT_FILENO))
        setvbuf(stdout, NULL, _IOFBF, (size_t)1 << 16);
    if (knut_cli_render_stream(stdout, &rows, &render, NULL, &err) != KNUT_OK)
        goto cleanup;
    rc = KNUT_EXIT_OK;
cleanup:
    if (rc != KNUT_EXIT_OK) {
        fflush(stdout);
        fprintf(stderr, "knut %s: %s\n", spec->name, err.message[0] ? err.message : "failed");
    }
    knut_arrow_stream_release(&rows);
    knut_duck_conn_close(conn);
    knut_duck_db_close(db);
    knut_iceberg_table_free(t);
    return rc;
}

int knut_cmd_iceberg_cat(int argc, char **argv)
{
    return run_rows(&knut_cmd_iceberg_cat_spec, 0, argc, argv);
}

int knut_cmd_iceberg_changes(int argc, char **argv)
{
    return run_rows(&knut_cmd_iceberg_changes_spec, 1, argc, argv);
}
