/*
 * `knut export`: the rows of a SQL query (DuckDB: a database file or files
 * queried by path) or of a Cypher query (FalkorDB) written as one Parquet
 * file or as GraphAr chunk files. DuckDB does the writing in both cases
 * (its Parquet writer through COPY, the GraphAr writer's chunk COPYs), so
 * rows stream from the query to the file in DuckDB's vectors and memory is
 * bounded by its memory_limit, not by the result. The output appears
 * under its name only when complete: a temp name beside it, then rename.
 */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "knut/knut.h"

#define EXPORT_STDIN_MAX ((size_t)16 << 20)
#define EXPORT_DEFAULT_CHUNK ((int64_t)1 << 18)

typedef struct export_args {
    const char *db, *sql, *cypher, *out;
    const char *url;
    int url_from_env;
    const char *password_file, *graph;
    int format;    /* index in formats */
    int file_type; /* index in file_types */
    const char *label, *key, *edge, *src_col, *dst_col, *name;
    const char *compression, *memory_limit;
    int64_t chunk_rows, threads;
    int overwrite;
    const char *iceberg, *catalog, *catalog_name, *location;
} export_args;

static const char *const formats[] = {"parquet", "graphar", NULL};
static const char *const file_types[] = {"parquet", "csv", NULL};

static const knut_cli_opt export_opts[] = {
    KNUT_CLI_OPT_CHOICE("format", 'f', export_args, format, "FMT", formats,
                        "parquet (one file) or graphar (a GraphAr directory); for Iceberg "
                        "see --iceberg"),
    KNUT_CLI_OPT_STR("iceberg", 0, export_args, iceberg, "TABLE",
                     "append the rows to this Iceberg table (created when missing): a table "
                     "folder (the filesystem catalog), or with --catalog NAMESPACE.NAME"),
    KNUT_CLI_ICEBERG_TABLE_OPTS(export_args),
    KNUT_CLI_OPT_STR("location", 0, export_args, location, "DIR",
                     "--iceberg: where a new table's files go (default: the table folder, or "
                     "<the catalog file's folder>/<namespace>.db/<name>)"),
    KNUT_CLI_OPT_STR("out", 'o', export_args, out, "PATH",
                     "the Parquet file, or the GraphAr directory; written under a temp name "
                     "beside it and renamed when complete"),
    KNUT_CLI_OPT_FLAG("overwrite", 0, export_args, overwrite,
                      "replace an existing output (else it is refused)"),
    KNUT_CLI_OPT_STR("db", 0, export_args, db, "FILE",
                     "SQL: the DuckDB database file, opened read-only (default: an in-memory "
                     "database, for files queried by path)"),
    KNUT_CLI_OPT_STR("cypher", 0, export_args, cypher, "CYPHER",
                     "export the rows of this Cypher query (GRAPH.RO_QUERY) instead of SQL; "
                     "'-' reads it from stdin"),
    KNUT_CLI_OPT_STR("falkordb", 0, export_args, url, "URL",
                     "with --cypher: redis://[[user]:password@]host[:port]; else "
                     "$KNUT_FALKORDB_URL. Prefer --falkordb-password-file to a password in "
                     "the URL"),
    KNUT_CLI_OPT_STR("falkordb-password-file", 0, export_args, password_file, "FILE",
                     "file holding FalkorDB's password (one line); else $KNUT_FALKORDB_PASSWORD"),
    KNUT_CLI_OPT_STR("graph", 0, export_args, graph, "NAME",
                     "with --cypher: the FalkorDB graph; also $KNUT_GRAPH"),
    KNUT_CLI_OPT_STR("compression", 0, export_args, compression, "CODEC",
                     "Parquet codec: snappy (default), zstd, gzip, lz4, uncompressed"),
    KNUT_CLI_OPT_STR("label", 0, export_args, label, "TYPE",
                     "graphar: write the rows as vertex type TYPE, every column a property"),
    KNUT_CLI_OPT_STR("key", 0, export_args, key, "COL",
                     "graphar --label: the primary-key column (default: the first); non-null "
                     "and unique"),
    KNUT_CLI_OPT_STR("edge", 0, export_args, edge, "SRC,TYPE,DST",
                     "graphar: write the rows as edge type TYPE from vertex type SRC to DST; "
                     "columns --src-column and --dst-column are the endpoint keys, the others "
                     "edge properties; SRC and DST are written too (property id: the distinct "
                     "keys)"),
    KNUT_CLI_OPT_STR("src-column", 0, export_args, src_col, "COL",
                     "graphar --edge: the source key column (default src)"),
    KNUT_CLI_OPT_STR("dst-column", 0, export_args, dst_col, "COL",
                     "graphar --edge: the destination key column (default dst)"),
    KNUT_CLI_OPT_INT("chunk-rows", 0, export_args, chunk_rows, "N", 1, INT64_MAX,
                     "graphar: rows per chunk file (default 262144)"),
    KNUT_CLI_OPT_CHOICE("file-type", 0, export_args, file_type, "T", file_types,
                        "graphar: chunk files as parquet (default) or csv"),
    KNUT_CLI_OPT_STR("name", 0, export_args, name, "G", "graphar: the graph name (default graph)"),
    KNUT_CLI_OPT_STR("memory-limit", 0, export_args, memory_limit, "SIZE",
                     "DuckDB's memory_limit (\"2GB\"); past it DuckDB spills to disk"),
    KNUT_CLI_OPT_INT("threads", 0, export_args, threads, "N", 1, 1024,
                     "DuckDB threads (default: all cores)"),
    KNUT_CLI_OPT_END,
};

static const knut_cli_arg export_pos[] = {KNUT_CLI_ARG_OPT("SQL", export_args, sql),
                                          KNUT_CLI_ARG_END};

const knut_cli_spec knut_cmd_export_spec = {
    .name = "export",
    .synopsis =
        "usage: knut export --format parquet --out FILE [--compression CODEC]\n"
        "                   [--overwrite] [--db FILE] [--memory-limit SIZE]\n"
        "                   [--threads N] SQL\n"
        "       knut export --format graphar --out DIR (--label TYPE [--key COL] |\n"
        "                   --edge SRC,TYPE,DST [--src-column COL] [--dst-column COL])\n"
        "                   [--chunk-rows N] [--file-type parquet|csv] [--name G] SQL\n"
        "       knut export --iceberg TABLE [-c|--catalog FILE [--catalog-name NAME]]\n"
        "                   [--location DIR] [--compression CODEC] SQL\n"
        "       knut export ... --falkordb URL [--falkordb-password-file FILE]\n"
        "                   --graph NAME --cypher CYPHER   (Cypher rows instead of SQL)\n"
        "       knut export [OPTIONS] -        (read the SQL from stdin)\n",
    .about = "Writes the rows of a query to a file: SQL on the embedded engine (DuckDB:\n"
             "a --db file opened read-only, or Parquet/CSV files queried by path), or\n"
             "Cypher on FalkorDB. Rows stream through DuckDB's writers in bounded\n"
             "memory; the output is written under a temp name beside PATH and renamed\n"
             "when complete, so a failed export leaves nothing behind.\n"
             "\n"
             "--iceberg appends the rows to an Iceberg table (format v2, unpartitioned)\n"
             "as one new snapshot, creating the table from the query's column types when\n"
             "it does not exist; columns match the table's by name. The commit is atomic\n"
             "(a compare-and-swap of the SQL catalog's row, or a v<N+1>.metadata.json only\n"
             "one writer can create) and is retried on top of a concurrent commit.\n",
    .opts = export_opts,
    .args = export_pos,
    .epilog =
        "Examples:\n"
        "  knut export -f parquet -o big.parquet --db g.duckdb \"SELECT * FROM person\"\n"
        "  knut export -f graphar -o out/ --label person --chunk-rows 100000 \\\n"
        "      \"SELECT * FROM 'people.parquet'\"\n"
        "  knut export -f graphar -o out/ --edge person,knows,person \\\n"
        "      \"SELECT a AS src, b AS dst, since FROM 'knows.csv'\"\n"
        "  knut export -f parquet -o friends.parquet --falkordb redis://localhost:6379 \\\n"
        "      --graph social --cypher \"MATCH (p:Person) RETURN p.name AS name\"\n"
        "  knut export --iceberg db.events -c catalog.db \"SELECT * FROM 'new.parquet'\"\n"
        "  knut export --iceberg warehouse/events \"SELECT * FROM 'new.parquet'\"\n"
        "\n"
        "Exit status: 0 ok, 1 the query or the write failed, 2 usage error.\n",
    .more_hint = "quote the SQL",
    .col = 26,
};

#define USAGE(...) knut_cli_args_error(&knut_cmd_export_spec, __VA_ARGS__)

static int parse_args(int argc, char **argv, export_args *a)
{
    a->format = -1;
    a->file_type = -1;
    a->graph = getenv("KNUT_GRAPH");
    int rc = knut_cli_args_parse(&knut_cmd_export_spec, argc, argv, a);
    if (rc != KNUT_CLI_RUN)
        return rc;
    if (a->iceberg) {
        if (a->format >= 0 || a->out || a->overwrite)
            return USAGE("%s", "--iceberg takes no --format, --out or --overwrite (it appends)");
    } else if (a->catalog || a->catalog_name || a->location) {
        return USAGE("%s", "--catalog, --catalog-name and --location are for --iceberg");
    }
    if (a->catalog_name && !a->catalog)
        return USAGE("%s", "--catalog-name needs --catalog");
    if (a->format < 0 && !a->iceberg)
        return knut_cli_args_missing(&knut_cmd_export_spec,
                                     "--format parquet|graphar (or --iceberg TABLE)");
    if (!a->out && !a->iceberg)
        return knut_cli_args_missing(&knut_cmd_export_spec, "--out PATH");
    if (!a->sql == !a->cypher)
        return USAGE("%s", a->cypher ? "give SQL or --cypher, not both"
                                     : "missing the SQL (or --cypher CYPHER)");
    if (a->cypher) {
        if (a->db)
            return USAGE("%s", "--db is for SQL, not --cypher");
        if (!a->url) {
            const char *e = getenv("KNUT_FALKORDB_URL");
            a->url = e && *e ? e : NULL;
            a->url_from_env = a->url != NULL;
        }
        if (!a->url)
            return knut_cli_args_missing(&knut_cmd_export_spec,
                                         "--falkordb URL (or KNUT_FALKORDB_URL)");
        if (!a->graph || !*a->graph)
            return knut_cli_args_missing(&knut_cmd_export_spec, "--graph NAME (or KNUT_GRAPH)");
    } else if (a->url || a->password_file) {
        return USAGE("%s", "--falkordb is for --cypher");
    }
    int gar = a->format == 1;
    if (gar && !a->label == !a->edge)
        return USAGE("%s", "graphar needs --label TYPE or --edge SRC,TYPE,DST (one of them)");
    if (!gar && (a->label || a->edge || a->key || a->src_col || a->dst_col || a->chunk_rows ||
                 a->file_type >= 0 || a->name))
        return USAGE("%s", "--label, --edge, --key, --src-column, --dst-column, --chunk-rows, "
                           "--file-type and --name are for -f graphar");
    if (gar && a->compression)
        return USAGE("%s", "--compression is for -f parquet");
    if (a->label && (a->src_col || a->dst_col))
        return USAGE("%s", "--src-column and --dst-column are for --edge");
    if (a->edge && a->key)
        return USAGE("%s", "--key is for --label");
    return KNUT_CLI_RUN;
}

/* "SRC,TYPE,DST" split in place (argv strings are writable). */
static int split_edge(char *edge, char *part[3])
{
    part[0] = edge;
    for (int i = 1; i < 3; i++) {
        char *c = strchr(part[i - 1], ',');
        if (!c)
            return -1;
        *c = '\0';
        part[i] = c + 1;
    }
    for (int i = 0; i < 3; i++)
        if (!*part[i] || strchr(part[i], ',') || strchr(part[i], '/'))
            return -1;
    return 0;
}

/* The query without trailing blanks and ';' (it goes inside COPY (...)). */
static char *trim_query(const char *q)
{
    size_t n = strlen(q);
    while (n > 0 && (q[n - 1] == ';' || q[n - 1] == ' ' || q[n - 1] == '\n' ||
                     q[n - 1] == '\t' || q[n - 1] == '\r'))
        n--;
    return strndup(q, n);
}

/* Runs the Cypher query; its decoded rows go to *r. *printed: the error
 * was printed already (the password's, a usage error). */
static knut_status cypher_rows(const export_args *a, const char *cypher,
                               knut_graph_falkor_result *r, int *printed, knut_error *err)
{
    char *password = NULL;
    knut_graph_falkor *g = NULL;
    knut_graph_falkor_options o = KNUT_GRAPH_FALKOR_OPTIONS_INIT;
    if (knut_cli_peer_password("export", "--falkordb", "--falkordb-password-file", a->url,
                               a->url_from_env, a->password_file, "KNUT_FALKORDB_PASSWORD",
                               &password) != 0) {
        *printed = 1;
        return KNUT_EINVAL;
    }
    o.password = password;
    knut_status st = knut_graph_falkor_connect_url(&g, a->url, &o, err);
    if (!st)
        st = knut_graph_falkor_query(g, a->graph, cypher, KNUT_GRAPH_FALKOR_READ_ONLY, r, err);
    if (st && g)
        knut_error_prefix(err, "FalkorDB %s, graph '%s': ", knut_graph_falkor_peer(g), a->graph);
    if (!st && r->n_columns == 0)
        st = knut_error_set(err, KNUT_EINVAL, "the Cypher query returns no columns (no RETURN)");
    knut_net_secret_free(password);
    knut_graph_falkor_close(g);
    return st;
}

/* SIGINT/SIGTERM during the COPY: DuckDB is interrupted, the COPY fails
 * and the temp file is removed like after any failure. */
static void on_signal(int sig, void *ctx)
{
    (void)sig;
    knut_duck_conn_interrupt(ctx);
}

/* The DuckDB database the query runs on (the --db file read-only, or in
 * memory) with the Cypher rows, if any, registered as a table: *sql is
 * then the SELECT of them. */
static knut_status engine_open(const export_args *a, const char **sql,
                               struct ArrowArrayStream *rows, knut_duck_db **db,
                               knut_duck_conn **conn, knut_error *err)
{
    knut_duck_option set[4];
    size_t nset = 0;
    if (a->iceberg) {
        /* An Iceberg table has no row order: DuckDB may then write the data
         * file from all threads at once, in a fraction of the memory
         * (an ORDER BY in the query is still kept). */
        set[nset].name = "preserve_insertion_order";
        set[nset++].value = "false";
    }
    if (a->db) {
        set[nset].name = "access_mode";
        set[nset++].value = "READ_ONLY";
    }
    if (a->memory_limit) {
        set[nset].name = "memory_limit";
        set[nset++].value = a->memory_limit;
    }
    char threads[32];
    if (a->threads) {
        snprintf(threads, sizeof threads, "%lld", (long long)a->threads);
        set[nset].name = "threads";
        set[nset++].value = threads;
    }
    knut_status st = knut_duck_db_open(db, a->db, set, nset, err);
    if (st && a->db)
        knut_error_prefix(err, "%s: ", a->db);
    if (!st)
        st = knut_duck_conn_open(conn, *db, err);
    if (!st && rows) {
        st = knut_duck_register_stream(*conn, "__knut_export_rows", rows, err);
        *sql = "SELECT * FROM __knut_export_rows";
    } else if (rows) {
        knut_arrow_stream_release(rows);
    }
    return st;
}

/* The Parquet file: COPY (rows) TO tmp, then rename over out. */
static knut_status write_parquet(const export_args *a, const char *sql,
                                 struct ArrowArrayStream *rows, int64_t *n, knut_error *err)
{
    knut_duck_db *db = NULL;
    knut_duck_conn *conn = NULL;
    knut_duck_stmt *stmt = NULL;
    knut_buf copy = KNUT_BUF_INIT, tmp = KNUT_BUF_INIT;
    char *q = NULL;
    int made = 0;
    knut_buf_printf(&tmp, "%s.knut-tmp-%ld", a->out, (long)getpid());
    knut_status st = knut_buf_check(&tmp, err);
    if (!st)
        st = engine_open(a, &sql, rows, &db, &conn, err);
    else
        knut_arrow_stream_release(rows);
    rows = NULL;
    if (!st && !(q = trim_query(sql)))
        st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
    if (!st) {
        knut_buf_printf(&copy, "COPY (%s) TO ", q);
        knut_duck_literal(&copy, tmp.data, tmp.len);
        knut_buf_puts(&copy, " (FORMAT parquet, COMPRESSION ");
        knut_duck_literal(&copy, a->compression ? a->compression : "snappy",
                          strlen(a->compression ? a->compression : "snappy"));
        knut_buf_puts(&copy, ")");
        st = knut_buf_check(&copy, err);
    }
    uint64_t changes = 0;
    int watching = 0;
    if (!st && (st = knut_duck_stmt_prepare(&stmt, conn, copy.data, err)) == KNUT_OK) {
        made = 1; /* from here a failure may leave a partial temp file */
        watching = knut_signal_install(NULL) == KNUT_OK &&
                   knut_signal_watch(on_signal, conn, NULL) == KNUT_OK;
        st = knut_duck_stmt_exec(stmt, &changes, err);
    }
    if (watching)
        knut_signal_unwatch();
    if (st && knut_signal_stop_requested())
        st = knut_error_set(err, KNUT_ECANCELLED, "interrupted (signal %d): nothing written",
                            knut_signal_last());
    if (st && !rows && st != KNUT_ECANCELLED)
        knut_error_prefix(err, "the query: ");
    if (!st && rename(tmp.data, a->out) != 0)
        st = knut_error_set(err, KNUT_EIO, "%s: cannot rename the finished file into place: %s",
                            a->out, strerror(errno));
    if (st && made)
        (void)unlink(tmp.data);
    *n = (int64_t)changes;
    knut_duck_stmt_free(stmt);
    knut_duck_conn_close(conn);
    knut_duck_db_close(db);
    knut_buf_reset(&copy);
    knut_buf_reset(&tmp);
    free(q);
    knut_arrow_stream_release(rows);
    return st;
}

/* Appends the rows to the Iceberg table (knut_iceberg_append). */
static knut_status write_iceberg(const export_args *a, const char *sql,
                                 struct ArrowArrayStream *rows, int64_t *n, knut_error *err)
{
    knut_duck_db *db = NULL;
    knut_duck_conn *conn = NULL;
    knut_iceberg_ref ref = {KNUT_ICEBERG_CATALOG_PATH, a->iceberg, NULL, NULL};
    if (a->catalog) {
        ref.kind = KNUT_ICEBERG_CATALOG_SQLITE;
        ref.path = a->catalog;
        ref.catalog = a->catalog_name;
        ref.identifier = a->iceberg;
    }
    knut_iceberg_append_options o = KNUT_ICEBERG_APPEND_OPTIONS_INIT;
    o.location = a->location;
    o.compression = a->compression;
    knut_iceberg_append_result res = {0};
    char *q = NULL;
    knut_status st = engine_open(a, &sql, rows, &db, &conn, err);
    if (!st && !(q = trim_query(sql)))
        st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
    int watching = 0;
    if (!st) {
        watching = knut_signal_install(NULL) == KNUT_OK &&
                   knut_signal_watch(on_signal, conn, NULL) == KNUT_OK;
        st = knut_iceberg_append(conn, &ref, q, &o, &res, err);
    }
    if (watching)
        knut_signal_unwatch();
    if (st && knut_signal_stop_requested())
        st = knut_error_set(err, KNUT_ECANCELLED, "interrupted (signal %d): nothing committed",
                            knut_signal_last());
    /* One line on stdout: the snapshot id is what a script wants next. */
    if (st == KNUT_OK && res.snapshot_id >= 0)
        printf("%s %s: %lld rows, snapshot %lld, sequence number %lld (%d commit attempt%s)\n",
               res.created ? "created" : "appended to", a->iceberg, (long long)res.rows,
               (long long)res.snapshot_id, (long long)res.sequence_number, res.attempts,
               res.attempts == 1 ? "" : "s");
    else if (st == KNUT_OK)
        printf("%s %s: no rows, nothing committed\n", res.created ? "created" : "left",
               a->iceberg);
    *n = res.rows;
    knut_iceberg_append_result_reset(&res);
    knut_duck_conn_close(conn);
    knut_duck_db_close(db);
    free(q);
    return st;
}

static knut_status write_graphar(export_args *a, const char *sql,
                                 struct ArrowArrayStream *rows, int64_t *n, knut_error *err)
{
    knut_graphar_export_options o = KNUT_GRAPHAR_EXPORT_OPTIONS_INIT;
    char *part[3] = {0};
    char *q = sql ? trim_query(sql) : NULL;
    if (sql && !q)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    if (a->edge) {
        if (split_edge((char *)a->edge, part) != 0) {
            free(q);
            knut_arrow_stream_release(rows);
            return knut_error_set(err, KNUT_EINVAL, "--edge wants SRC,TYPE,DST, not '%s'",
                                  a->edge);
        }
        o.src_type = part[0];
        o.edge_type = part[1];
        o.dst_type = part[2];
        o.src_column = a->src_col ? a->src_col : "src";
        o.dst_column = a->dst_col ? a->dst_col : "dst";
    }
    o.graph = a->name;
    o.query = q;
    o.stream = rows;
    o.attach = a->db;
    o.label = a->label;
    o.key = a->key;
    o.chunk_rows = a->chunk_rows ? a->chunk_rows : EXPORT_DEFAULT_CHUNK;
    o.file_type = a->file_type >= 0 ? file_types[a->file_type] : NULL;
    o.memory_limit = a->memory_limit;
    o.threads = (int)a->threads;
    o.overwrite = a->overwrite;
    knut_graphar_write_stats ws = {0};
    knut_status st = knut_graphar_export_query(a->out, &o, &ws, err);
    *n = ws.rows;
    free(q);
    knut_arrow_stream_release(rows); /* taken over: released already */
    return st;
}

int knut_cmd_export(int argc, char **argv)
{
    export_args a = {0};
    knut_error err = KNUT_ERROR_INIT;
    knut_buf input = KNUT_BUF_INIT;
    knut_graph_falkor_result r = {0};
    int rc = parse_args(argc, argv, &a);
    if (rc != KNUT_CLI_RUN)
        return rc;
    knut_cli_log_setup();
    struct stat sb;
    if (a.format == 0 && !a.overwrite && lstat(a.out, &sb) == 0) {
        fprintf(stderr, "knut export: %s exists: remove it or pass --overwrite\n", a.out);
        return KNUT_EXIT_FAIL;
    }
    if (a.db && access(a.db, R_OK) != 0) {
        fprintf(stderr, "knut export: %s: %s\n", a.db, strerror(errno));
        return KNUT_EXIT_FAIL;
    }
    rc = KNUT_EXIT_FAIL;
    const char *text = NULL;
    if (knut_cli_query_text(a.cypher ? a.cypher : a.sql, &input, EXPORT_STDIN_MAX,
                            a.cypher ? "Cypher" : "SQL", &text, &err) != KNUT_OK)
        goto cleanup;
    struct ArrowArrayStream *rows = NULL;
    if (a.cypher) {
        int printed = 0;
        if (cypher_rows(&a, text, &r, &printed, &err) != KNUT_OK) {
            if (printed)
                rc = KNUT_EXIT_USAGE;
            goto cleanup;
        }
        rows = &r.stream;
    }
    int64_t n = 0;
    const char *sql = a.cypher ? NULL : text;
    knut_status st = a.iceberg       ? write_iceberg(&a, sql, rows, &n, &err)
                     : a.format == 0 ? write_parquet(&a, sql, rows, &n, &err)
                                     : write_graphar(&a, sql, rows, &n, &err);
    if (st != KNUT_OK)
        goto cleanup;
    KNUT_LOG(KNUT_LOG_INFO, "export", "wrote %lld rows to %s", (long long)n,
             a.iceberg ? a.iceberg : a.out);
    rc = KNUT_EXIT_OK;

cleanup:
    if (rc == KNUT_EXIT_FAIL)
        fprintf(stderr, "knut export: %s\n", err.message[0] ? err.message : knut_strerror(err.code));
    knut_graph_falkor_result_reset(&r);
    knut_buf_reset(&input);
    return rc;
}
