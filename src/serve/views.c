/*
 * The views of serve.yml, made once per database right after it is
 * opened (knut_serve__views_setup; it must run before the lock-down,
 * which it widens by the views' own paths only). A views schema is an
 * in-memory DuckDB database attached under its name, the views in its
 * `main` schema, so `lake.orders` binds as DuckDB binds a
 * catalog-qualified name and the served file stays read-only. A GraphAr
 * source's tables are views too, their SELECT made by the graphar part
 * (knut_graphar_reader_vertices_sql / _edges_sql) over the chunk files
 * the count files name now. Paths are
 * SQL literals made by knut_duck_literal; they come from the operator's
 * file, not from clients.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "knut/graphar.h"
#include "serve_int.h"

knut_status knut_serve__cypher_setup(knut_serve *s, knut_duck_conn *conn, knut_error *err);

static knut_status at(const knut_serve__view *v, knut_error *err)
{
    const knut_conf *n = v->node;
    char where[512];
    snprintf(where, sizeof where, "%s:%d:%d: view %s.%s: ", knut_conf_file(n),
             knut_conf_line(n), knut_conf_col(n), v->catalog, v->name);
    knut_duck_error_trim(err);
    knut_error_prefix(err, "%s", where);
    return err->code;
}

/* The folder a path or glob lies in, with its trailing '/'. */
static void folder_of(const char *path, knut_buf *out)
{
    size_t glob = strcspn(path, "*?[{");
    size_t cut = 0;
    for (size_t i = 0; i < glob; i++)
        if (path[i] == '/')
            cut = i + 1;
    knut_buf_append(out, path, cut);
}

static knut_status attach(knut_duck_conn *conn, const char *catalog, knut_error *err)
{
    knut_buf sql = KNUT_BUF_INIT;
    knut_buf_puts(&sql, "ATTACH ':memory:' AS ");
    knut_duck_ident(&sql, catalog);
    knut_buf_puts(&sql, " (READ_WRITE)");
    knut_status st = knut_buf_check(&sql, err);
    if (st == KNUT_OK)
        st = knut_duck_exec(conn, sql.data, err);
    knut_buf_reset(&sql);
    return st;
}

/* A views schema may not be a schema of the served database too: `x.t`
 * would bind to that schema first. */
static knut_status check_catalog(knut_serve *s, knut_duck_conn *conn, const knut_serve__view *v,
                                 knut_error *err)
{
    knut_duck_stmt *stmt = NULL;
    struct ArrowArrayStream rows = {0};
    const char *binds[1] = {v->catalog};
    int64_t n = 0;
    knut_status st = knut_duck_stmt_prepare_text(
        &stmt, conn,
        "SELECT 1 FROM duckdb_schemas() WHERE (database_name = current_database() AND "
        "lower(schema_name) = lower($1)) OR lower(database_name) = lower($1)",
        binds, 1, err);
    if (st == KNUT_OK)
        st = knut_duck_stmt_query(stmt, &rows, err);
    if (st == KNUT_OK)
        st = knut_arrow_stream_count_rows(&rows, &n, err);
    knut_arrow_stream_release(&rows);
    knut_duck_stmt_free(stmt);
    if (st == KNUT_OK && n > 0)
        st = knut_error_set(err, KNUT_EINVAL, "'%s' is already a schema or catalog of the "
                                              "served database (%s)", v->catalog, s->catalog);
    return st;
}

/* The SELECT of a GraphAr table, made by the graphar part from the
 * graph's infos and count files (probing the Parquet schemas on conn). */
static knut_status graphar_select(knut_duck_conn *conn, const knut_serve__view *v,
                                  knut_buf *sql, knut_error *err)
{
    knut_graphar_reader *r = NULL;
    knut_status st = knut_graphar_reader_new(&r, conn, v->path, NULL, err);
    if (st == KNUT_OK && v->gar_vertex)
        st = knut_graphar_reader_vertices_sql(r, v->gar_vertex, sql, err);
    else if (st == KNUT_OK)
        st = knut_graphar_reader_edges_sql(r, v->gar_edge, (knut_graphar_adj_list_type)v->gar_adj,
                                           sql, err);
    knut_graphar_reader_free(r);
    return st;
}

static knut_status make_view(knut_duck_conn *conn, const knut_serve__view *v, knut_buf *allow,
                             knut_error *err)
{
    struct stat sb;
    int gar = v->gar_vertex || v->gar_edge;
    int dir = gar || (stat(v->path, &sb) == 0 && S_ISDIR(sb.st_mode));
    knut_buf src = KNUT_BUF_INIT, sql = KNUT_BUF_INIT;
    knut_buf_puts(&src, v->path);
    if (dir && !gar)
        knut_buf_puts(&src, v->csv ? "/**/*.csv" : "/**/*.parquet");
    knut_status st = knut_buf_check(&src, err);
    knut_buf_puts(&sql, "CREATE VIEW ");
    knut_duck_ident(&sql, v->catalog);
    knut_buf_puts(&sql, ".main.");
    knut_duck_ident(&sql, v->name);
    if (gar) {
        knut_buf_puts(&sql, " AS ");
        if (st == KNUT_OK)
            st = graphar_select(conn, v, &sql, err);
    } else {
        knut_buf_puts(&sql, v->csv ? " AS SELECT * FROM read_csv("
                                   : " AS SELECT * FROM read_parquet(");
        knut_duck_literal(&sql, src.data, src.len);
        knut_buf_puts(&sql, ")");
    }
    if (st == KNUT_OK)
        st = knut_buf_check(&sql, err);
    if (st == KNUT_OK)
        st = knut_duck_exec(conn, sql.data, err);
    if (st == KNUT_OK) {
        knut_buf folder = KNUT_BUF_INIT;
        if (gar) {
            knut_buf_puts(&folder, v->path); /* the data folder, '/'-ended */
        } else if (dir) {
            knut_buf_puts(&folder, v->path);
            knut_buf_putc(&folder, '/');
        } else {
            folder_of(v->path, &folder);
        }
        if (allow->len)
            knut_buf_putc(allow, ',');
        knut_duck_literal(allow, folder.data, folder.len);
        knut_buf_reset(&folder);
        st = knut_buf_check(allow, err);
    }
    knut_buf_reset(&src);
    knut_buf_reset(&sql);
    return st;
}

knut_status knut_serve__views_setup(knut_serve *s, knut_duck_conn *conn, knut_error *err)
{
    knut_serve__config *c = &s->conf;
    knut_status st = KNUT_OK;
    knut_buf allow = KNUT_BUF_INIT;
    if (!c->loaded)
        return KNUT_OK;
    for (size_t i = 0; st == KNUT_OK && i < c->n_views; i++) {
        const knut_serve__view *v = &c->views[i];
        int first = 1;
        for (size_t j = 0; j < i; j++)
            first &= strcmp(c->views[j].catalog, v->catalog) != 0;
        if (first && (st = check_catalog(s, conn, v, err)) == KNUT_OK)
            st = attach(conn, v->catalog, err);
        if (st == KNUT_OK)
            st = make_view(conn, v, &allow, err);
        if (st != KNUT_OK)
            at(v, err);
    }
    /* the views read their files after the lock-down too: DuckDB allows
     * these folders, and nothing else, once external access is off */
    if (st == KNUT_OK && allow.len) {
        knut_buf sql = KNUT_BUF_INIT;
        knut_buf_printf(&sql, "SET allowed_directories = [%s]", allow.data);
        st = knut_buf_check(&sql, err);
        if (st == KNUT_OK)
            st = knut_duck_exec(conn, sql.data, err);
        knut_buf_reset(&sql);
    }
    if (st == KNUT_OK && c->n_queries)
        st = knut_serve__cypher_setup(s, conn, err);
    knut_buf_reset(&allow);
    return st;
}
