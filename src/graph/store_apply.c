/*
 * The embedded store's sink apply: one DuckDB transaction per mutation.
 * Each batch a set hands out is loaded as the temp table _knut_stage (an
 * Arrow stream into DuckDB, never SQL text), and set-at-a-time SQL does
 * the rest: INSERT ... ON CONFLICT DO UPDATE for upserts, joins against
 * the vertex tables for edge endpoints, DELETE ... IN for deletes and
 * their incident edges, DELETE ... USING for edge deletes
 * (store_edge_delete.c). Memory stays bounded by one batch plus what
 * DuckDB itself keeps. Schema evolution (tables, columns) happens in the
 * same transaction, so a failed apply leaves no trace at all.
 */
#include "store_apply_int.h"
#include "cypher_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *kind_word(const knut_graph_set *set)
{
    return set->kind == KNUT_GRAPH_SET_VERTEX        ? "vertex"
           : set->kind == KNUT_GRAPH_SET_EDGE        ? "edge"
           : set->kind == KNUT_GRAPH_SET_EDGE_DELETE ? "edge delete"
                                                     : "delete";
}


static void job_reset(set_job *j)
{
    for (size_t i = 0; i < j->n_types; i++)
        free(j->types[i]);
    free(j->types);
    free(j->table);
    free(j->src_table);
    free(j->dst_table);
    knut_buf_reset(&j->upsert);
    knut_buf_reset(&j->members);
    knut_buf_reset(&j->skipped);
    knut_buf_reset(&j->written);
    knut_buf_reset(&j->remove);
    knut_graph__store_rows_reset(&j->edge_tables);
}

static knut_status set_error(const set_job *j, knut_status code, knut_error *err, const char *what,
                             const char *column)
{
    return knut_error_set(err, code, "%s set '%s': column '%s': %s", kind_word(j->set),
                          j->set->name, column, what);
}

static knut_status check_null_keys(const set_job *j, const struct ArrowArray *batch,
                                   int64_t row_base, knut_error *err);

/* The set's rows as seen by DuckDB: knut_graph_set_next, with null keys
 * refused per batch. The set keeps owning its stream. */
static int feed_schema(struct ArrowArrayStream *st, struct ArrowSchema *out)
{
    set_job *j = st->private_data;
    return knut_arrow_schema_deep_copy(out, &j->set->schema, &j->stage_err) == KNUT_OK ? 0 : ENOMEM;
}

static int feed_next(struct ArrowArrayStream *st, struct ArrowArray *out)
{
    set_job *j = st->private_data;
    out->release = NULL;
    if (knut_graph_set_next(j->set, out, &j->stage_err) != KNUT_OK)
        return EINVAL;
    if (!out->release)
        return 0;
    int64_t n = out->length;
    if (check_null_keys(j, out, j->set->rows_read - n, &j->stage_err) != KNUT_OK) {
        knut_arrow_array_release(out);
        return EINVAL;
    }
    j->staged += n;
    j->stats->rows += n;
    return 0;
}

static const char *feed_error(struct ArrowArrayStream *st)
{
    set_job *j = st->private_data;
    return j->stage_err.code != KNUT_OK ? j->stage_err.message : NULL;
}

static void feed_release(struct ArrowArrayStream *st)
{
    st->release = NULL;
}

/* Loads every row of the set into its temp table, before the transaction
 * opens (loading an Arrow stream needs a transaction of its own), then
 * reads back the DuckDB type of every column. */
static knut_status stage_set(set_job *j, size_t n, knut_error *err)
{
    knut_gs_rows rows;
    snprintf(j->stage_name, sizeof j->stage_name, KNUT_GS_STAGE "_%zu", n);
    j->feed.get_schema = feed_schema;
    j->feed.get_next = feed_next;
    j->feed.get_last_error = feed_error;
    j->feed.release = feed_release;
    j->feed.private_data = j;
    knut_status st = knut_duck_register_stream(j->s->conn, j->stage_name, &j->feed, err);
    if (st != KNUT_OK) {
        if (j->stage_err.code != KNUT_OK)
            return knut_error_set(err, j->stage_err.code, "%s", j->stage_err.message);
        return knut_error_prefix(err, "%s set '%s': staging rows: ", kind_word(j->set),
                                 j->set->name);
    }
    const char *name = j->stage_name;
    st = knut_graph__store_rows(
        j->s->conn,
        "SELECT column_name, data_type FROM duckdb_columns() WHERE database_name = "
        "'temp' AND table_name = $1 ORDER BY column_index",
        &name, 1, &rows, err);
    if (st != KNUT_OK)
        return st;
    if (rows.n_rows != (size_t)j->set->schema.n_children) {
        knut_graph__store_rows_reset(&rows);
        return knut_error_set(err, KNUT_ERROR, "%s set '%s': staged %zu columns, the stream has %"
                              PRId64, kind_word(j->set), j->set->name, rows.n_rows,
                              j->set->schema.n_children);
    }
    j->types = calloc(rows.n_rows, sizeof *j->types);
    if (!j->types) {
        knut_graph__store_rows_reset(&rows);
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    }
    j->n_types = rows.n_rows;
    for (size_t i = 0; i < rows.n_rows; i++) {
        j->types[i] = rows.cells[i * 2 + 1];
        rows.cells[i * 2 + 1] = NULL;
    }
    knut_graph__store_rows_reset(&rows);
    return KNUT_OK;
}

static const char *col_type(const set_job *j, const knut_graph_column *c)
{
    return j->types[c->index];
}

/* True when the staged set holds only nulls in column c: that fits any
 * stored type (a CSV column empty in a whole file, or every column of a
 * header-only CSV, is read as VARCHAR; keys are never null in a row, so
 * an all-null key means no rows). */
static int staged_all_null(const set_job *j, const knut_graph_column *c)
{
    knut_buf q = KNUT_BUF_INIT;
    int64_t values = 1;
    knut_buf_puts(&q, "SELECT count(");
    knut_duck_ident(&q, c->column);
    knut_buf_puts(&q, ") FROM ");
    knut_duck_ident(&q, j->stage_name);
    if (knut_buf_check(&q, NULL) != KNUT_OK ||
        knut_graph__store_scalar_i64(j->s->conn, q.data, NULL, 0, &values, NULL) != KNUT_OK)
        values = 1;
    knut_buf_reset(&q);
    return values == 0;
}

/* Adds the column if missing; refuses an incoming type that does not fit. */
static knut_status ensure_column(set_job *j, const knut_graph_column *c, int is_key,
                                 knut_error *err)
{
    char *have = NULL;
    knut_buf sql = KNUT_BUF_INIT;
    const char *want = col_type(j, c);
    knut_status st = knut_graph__store_column_type(j->s->conn, j->table, c->prop, &have, err);
    if (st != KNUT_OK)
        return st;
    if (have) {
        const char *to = NULL;
        /* a property column widens where that is lossless (store.c); a
         * key's type is the table's for good (its primary key) */
        if (!knut_graph__store_type_fits(have, want) && !staged_all_null(j, c) &&
            (is_key || (st = knut_graph__store_column_widen(j->s->conn, j->table, c->prop, have,
                                                            want, c->text_ok, &to, err)) !=
                           KNUT_OK ||
             !to) && st == KNUT_OK) {
            st = knut_error_set(err, KNUT_EINVAL,
                                "%s set '%s': %scolumn '%s': stored as %s, the set has %s (%s)",
                                kind_word(j->set), j->set->name, is_key ? "key " : "", c->prop,
                                have, want,
                                is_key ? "a key's type does not change" : "no safe conversion");
            if (err)
                err->detail = KNUT_GRAPH_ERR_TYPE_CHANGE;
        }
    } else if (is_key) {
        st = set_error(j, KNUT_EINVAL, err, "key column missing from the stored table", c->prop);
    } else {
        knut_buf_puts(&sql, "ALTER TABLE ");
        knut_duck_ident(&sql, j->table);
        knut_buf_puts(&sql, " ADD COLUMN ");
        knut_duck_ident(&sql, c->prop);
        knut_buf_printf(&sql, " %s", knut_graph__store_type_for_column(want));
        st = knut_buf_check(&sql, err);
        if (st == KNUT_OK)
            st = knut_duck_exec(j->s->conn, sql.data, err);
        if (st != KNUT_OK)
            knut_error_prefix(err, "%s set '%s': adding column '%s': ", kind_word(j->set),
                              j->set->name, c->prop);
    }
    free(have);
    knut_buf_reset(&sql);
    return st;
}

static knut_status keys_json(knut_buf *b, const knut_graph_column *keys, size_t n, knut_error *err)
{
    knut_buf_putc(b, '[');
    for (size_t i = 0; i < n; i++) {
        if (i)
            knut_buf_putc(b, ',');
        knut_buf_put_json_str(b, keys[i].prop, strlen(keys[i].prop));
    }
    knut_buf_putc(b, ']');
    return knut_buf_check(b, err);
}

/* Finds or creates the set's table (vertex: first label, edge: type). */
static knut_status ensure_table(set_job *j, knut_error *err)
{
    knut_graph_set *set = j->set;
    int vertex = set->kind == KNUT_GRAPH_SET_VERTEX;
    const char *name = vertex ? set->labels[0] : set->type;
    knut_buf kj = KNUT_BUF_INIT, sql = KNUT_BUF_INIT;
    char *stored_keys = NULL;
    knut_status st = keys_json(&kj, set->keys, set->n_keys, err);
    if (st == KNUT_OK)
        st = knut_graph__store_catalog_get(j->s, vertex ? 'v' : 'e', name, &j->table, &stored_keys,
                                           err);
    if (st != KNUT_OK)
        goto cleanup;
    if (j->table) {
        if (strcmp(stored_keys, kj.data) != 0)
            st = knut_error_set(err, KNUT_EINVAL, "%s set '%s': %s '%s' is stored with keys %s, "
                                "the set has %s", kind_word(set), set->name,
                                vertex ? "label" : "type", name, stored_keys, kj.data);
        goto cleanup;
    }
    st = knut_graph__store_catalog_add(j->s, vertex ? 'v' : 'e', name, kj.data, &j->table, err);
    if (st != KNUT_OK)
        goto cleanup;
    knut_buf_puts(&sql, "CREATE TABLE ");
    knut_duck_ident(&sql, j->table);
    /* No DEFAULT nextval(...): DuckDB 1.4.4 cannot replay a WAL holding
     * ALTER TABLE ADD COLUMN on such a table after a crash. Inserts pass
     * nextval() explicitly instead. No UNIQUE on the vertex id either: the
     * sequence already makes it unique, and a second index made large
     * upserts ~4x slower and twice as memory-hungry (bench/sync_bench.py). */
    if (vertex)
        knut_buf_puts(&sql, " (\"" KNUT_GS_VID "\" BIGINT NOT NULL");
    else
        knut_buf_puts(&sql, " (\"" KNUT_GS_SRC "\" BIGINT NOT NULL, \"" KNUT_GS_DST
                            "\" BIGINT NOT NULL, \"" KNUT_GS_SRC_LABEL "\" VARCHAR NOT NULL, \""
                            KNUT_GS_DST_LABEL "\" VARCHAR NOT NULL");
    for (size_t k = 0; k < set->n_keys; k++) {
        knut_buf_puts(&sql, ", ");
        knut_duck_ident(&sql, set->keys[k].prop);
        knut_buf_printf(&sql, " %s NOT NULL",
                        knut_graph__store_type_for_column(col_type(j, &set->keys[k])));
    }
    knut_buf_puts(&sql, ", PRIMARY KEY (");
    if (!vertex)
        knut_buf_puts(&sql, "\"" KNUT_GS_SRC "\", \"" KNUT_GS_DST "\"");
    for (size_t k = 0; k < set->n_keys; k++) {
        if (k || !vertex)
            knut_buf_puts(&sql, ", ");
        knut_duck_ident(&sql, set->keys[k].prop);
    }
    knut_buf_puts(&sql, "))");
    if ((st = knut_buf_check(&sql, err)) == KNUT_OK)
        st = knut_duck_exec(j->s->conn, sql.data, err);
    if (st != KNUT_OK)
        knut_error_prefix(err, "%s set '%s': creating table for '%s': ", kind_word(set), set->name,
                          name);
cleanup:
    free(stored_keys);
    knut_buf_reset(&kj);
    knut_buf_reset(&sql);
    return st;
}

/* Property names that would collide with the store's own columns. */
static knut_status check_names(const set_job *j, knut_error *err)
{
    const knut_graph_set *set = j->set;
    size_t n = strlen(KNUT_GS_RESERVED);
    for (size_t i = 0; i < set->n_keys + set->n_props; i++) {
        const char *p = i < set->n_keys ? set->keys[i].prop : set->props[i - set->n_keys].prop;
        if (strncasecmp(p, KNUT_GS_RESERVED, n) == 0)
            return set_error(j, KNUT_EINVAL, err, "names starting with '" KNUT_GS_RESERVED
                             "' are reserved by the graph store", p);
    }
    return KNUT_OK;
}

/* "SELECT * FROM _knut_stage" keeping the last row of each key tuple, as
 * the sequential MERGEs of FalkorDB would leave it. */
static void dedup_source(knut_buf *b, const char *stage, const knut_graph_column *const *cols,
                         const size_t *ns, size_t ngroups)
{
    knut_buf_puts(b, "(SELECT * FROM (SELECT *, row_number() OVER () AS \"_knut_row\" FROM ");
    knut_duck_ident(b, stage);
    knut_buf_puts(b, ") QUALIFY row_number() OVER (PARTITION BY ");
    int first = 1;
    for (size_t g = 0; g < ngroups; g++)
        for (size_t k = 0; k < ns[g]; k++) {
            if (!first)
                knut_buf_puts(b, ", ");
            first = 0;
            knut_duck_ident(b, cols[g][k].column);
        }
    knut_buf_puts(b, " ORDER BY \"_knut_row\" DESC) = 1) AS s");
}

/* ", s."col"" for every column, or "p = excluded.p" updates. */
static void list_cols(knut_buf *b, const knut_graph_column *cols, size_t n, const char *prefix,
                      int use_prop)
{
    for (size_t i = 0; i < n; i++) {
        knut_buf_puts(b, ", ");
        knut_buf_puts(b, prefix);
        knut_duck_ident(b, use_prop ? cols[i].prop : cols[i].column);
    }
}

static void conflict_update(knut_buf *b, const knut_graph_column *props, size_t n)
{
    if (n == 0) {
        knut_buf_puts(b, " DO NOTHING");
        return;
    }
    knut_buf_puts(b, " DO UPDATE SET ");
    for (size_t i = 0; i < n; i++) {
        if (i)
            knut_buf_puts(b, ", ");
        knut_duck_ident(b, props[i].prop);
        knut_buf_puts(b, " = excluded.");
        knut_duck_ident(b, props[i].prop);
    }
}

/* " AND a."k" = s."c"" for an endpoint or key match. */
static void match_keys(knut_buf *b, const char *alias, const knut_graph_column *cols, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        knut_buf_printf(b, "%s%s.", k ? " AND " : "", alias);
        knut_duck_ident(b, cols[k].prop);
        knut_buf_puts(b, " = s.");
        knut_duck_ident(b, cols[k].column);
    }
}

static knut_status prepare_vertex(set_job *j, knut_error *err)
{
    knut_graph_set *set = j->set;
    knut_status st = ensure_table(j, err);
    for (size_t k = 0; k < set->n_keys && st == KNUT_OK; k++)
        st = ensure_column(j, &set->keys[k], 1, err);
    for (size_t p = 0; p < set->n_props && st == KNUT_OK; p++)
        st = ensure_column(j, &set->props[p], 0, err);
    if (st != KNUT_OK)
        return st;
    const knut_graph_column *groups[] = {set->keys};
    size_t ns[] = {set->n_keys};
    knut_buf *b = &j->upsert;
    knut_buf_puts(b, "INSERT INTO ");
    knut_duck_ident(b, j->table);
    knut_buf_puts(b, " (\"" KNUT_GS_VID "\"");
    list_cols(b, set->keys, set->n_keys, "", 1);
    list_cols(b, set->props, set->n_props, "", 1);
    knut_buf_puts(b, ") SELECT nextval('" KNUT_GS_SEQ "')");
    list_cols(b, set->keys, set->n_keys, "s.", 0);
    list_cols(b, set->props, set->n_props, "s.", 0);
    knut_buf_puts(b, " FROM ");
    dedup_source(b, j->src_name, groups, ns, 1);
    knut_buf_puts(b, " ON CONFLICT (");
    for (size_t k = 0; k < set->n_keys; k++) {
        if (k)
            knut_buf_puts(b, ", ");
        knut_duck_ident(b, set->keys[k].prop);
    }
    knut_buf_putc(b, ')');
    conflict_update(b, set->props, set->n_props);
    if (set->n_props == 0) {
        knut_buf_puts(&j->written, "SELECT count(*) FROM ");
        dedup_source(&j->written, j->src_name, groups, ns, 1);
    }

    b = &j->members;
    knut_buf_puts(b, "INSERT INTO \"" KNUT_GS_MEMBERS "\" SELECT v.\"" KNUT_GS_VID "\", $1 FROM ");
    knut_duck_ident(b, j->table);
    knut_buf_puts(b, " AS v SEMI JOIN ");
    knut_duck_ident(b, j->src_name);
    knut_buf_puts(b, " AS s ON ");
    match_keys(b, "v", set->keys, set->n_keys);
    /* An anti-join, not ON CONFLICT: the members table has no index (one
     * more index over every vertex made a large apply need twice the
     * memory, and its transaction-local part cannot spill). */
    knut_buf_puts(b, " ANTI JOIN (SELECT vid FROM \"" KNUT_GS_MEMBERS "\" WHERE label = $1) AS o"
                     " ON o.vid = v.\"" KNUT_GS_VID "\"");
    if ((st = knut_buf_check(&j->upsert, err)) == KNUT_OK)
        st = knut_buf_check(&j->members, err);
    if (st == KNUT_OK && set->n_props == 0)
        st = knut_buf_check(&j->written, err);
    return st;
}

/* An endpoint's vertex table, if its label is known and has every key
 * column the edge set matches on (else no vertex can match). */
static knut_status endpoint_table(set_job *j, const char *label, const knut_graph_column *keys,
                                  size_t n, char **out, knut_error *err)
{
    knut_status st = knut_graph__store_catalog_get(j->s, 'v', label, out, NULL, err);
    for (size_t k = 0; k < n && st == KNUT_OK && *out; k++) {
        char *type = NULL;
        st = knut_graph__store_column_type(j->s->conn, *out, keys[k].prop, &type, err);
        if (st == KNUT_OK && !type) {
            free(*out);
            *out = NULL;
        }
        free(type);
    }
    return st;
}

/* " JOIN src AS a ON a.k = s.c ... JOIN dst AS b ON ...": the endpoints
 * of the staged rows (s), joined (the upsert) or semi-joined (its count). */
static void endpoint_joins(knut_buf *b, const set_job *j, const char *join)
{
    const knut_graph_set *set = j->set;
    knut_buf_printf(b, " %s ", join);
    knut_duck_ident(b, j->src_table);
    knut_buf_puts(b, " AS a ON ");
    match_keys(b, "a", set->src_keys, set->n_src_keys);
    knut_buf_printf(b, " %s ", join);
    knut_duck_ident(b, j->dst_table);
    knut_buf_puts(b, " AS b ON ");
    match_keys(b, "b", set->dst_keys, set->n_dst_keys);
}

static knut_status prepare_edge(set_job *j, knut_error *err)
{
    knut_graph_set *set = j->set;
    knut_status st = ensure_table(j, err);
    for (size_t k = 0; k < set->n_keys && st == KNUT_OK; k++)
        st = ensure_column(j, &set->keys[k], 1, err);
    for (size_t p = 0; p < set->n_props && st == KNUT_OK; p++)
        st = ensure_column(j, &set->props[p], 0, err);
    if (st == KNUT_OK)
        st = endpoint_table(j, set->src_label, set->src_keys, set->n_src_keys, &j->src_table, err);
    if (st == KNUT_OK)
        st = endpoint_table(j, set->dst_label, set->dst_keys, set->n_dst_keys, &j->dst_table, err);
    if (st != KNUT_OK)
        return st;
    j->endpoints_ok = j->src_table && j->dst_table;
    if (!j->endpoints_ok)
        return KNUT_OK; /* every row is skipped */
    knut_buf *b = &j->skipped;
    knut_buf_puts(b, "SELECT count(*) FROM ");
    knut_duck_ident(b, j->src_name);
    knut_buf_puts(b, " AS s WHERE NOT EXISTS (SELECT 1 FROM ");
    knut_duck_ident(b, j->src_table);
    knut_buf_puts(b, " AS a WHERE ");
    match_keys(b, "a", set->src_keys, set->n_src_keys);
    knut_buf_puts(b, ") OR NOT EXISTS (SELECT 1 FROM ");
    knut_duck_ident(b, j->dst_table);
    knut_buf_puts(b, " AS b WHERE ");
    match_keys(b, "b", set->dst_keys, set->n_dst_keys);
    knut_buf_putc(b, ')');

    const knut_graph_column *groups[] = {set->src_keys, set->dst_keys, set->keys};
    size_t ns[] = {set->n_src_keys, set->n_dst_keys, set->n_keys};
    b = &j->upsert;
    knut_buf_puts(b, "INSERT INTO ");
    knut_duck_ident(b, j->table);
    knut_buf_puts(b, " (\"" KNUT_GS_SRC "\", \"" KNUT_GS_DST "\", \"" KNUT_GS_SRC_LABEL "\", \""
                     KNUT_GS_DST_LABEL "\"");
    list_cols(b, set->keys, set->n_keys, "", 1);
    list_cols(b, set->props, set->n_props, "", 1);
    knut_buf_puts(b, ") SELECT a.\"" KNUT_GS_VID "\", b.\"" KNUT_GS_VID "\", $1, $2");
    list_cols(b, set->keys, set->n_keys, "s.", 0);
    list_cols(b, set->props, set->n_props, "s.", 0);
    knut_buf_puts(b, " FROM ");
    dedup_source(b, j->src_name, groups, ns, 3);
    endpoint_joins(b, j, "JOIN");
    knut_buf_puts(b, " ON CONFLICT (\"" KNUT_GS_SRC "\", \"" KNUT_GS_DST "\"");
    for (size_t k = 0; k < set->n_keys; k++) {
        knut_buf_puts(b, ", ");
        knut_duck_ident(b, set->keys[k].prop);
    }
    knut_buf_putc(b, ')');
    conflict_update(b, set->props, set->n_props);
    if (set->n_props == 0) {
        b = &j->written;
        knut_buf_puts(b, "SELECT count(*) FROM ");
        dedup_source(b, j->src_name, groups, ns, 3);
        endpoint_joins(b, j, "SEMI JOIN");
    }
    if ((st = knut_buf_check(&j->upsert, err)) == KNUT_OK)
        st = knut_buf_check(&j->skipped, err);
    if (st == KNUT_OK && set->n_props == 0)
        st = knut_buf_check(&j->written, err);
    return st;
}

static knut_status prepare_delete(set_job *j, knut_error *err)
{
    knut_status st =
        knut_graph__store_catalog_get(j->s, 'v', j->set->labels[0], &j->table, NULL, err);
    for (size_t k = 0; k < j->set->n_keys && st == KNUT_OK && j->table; k++) {
        char *type = NULL;
        st = knut_graph__store_column_type(j->s->conn, j->table, j->set->keys[k].prop, &type, err);
        if (st == KNUT_OK && !type) {
            free(j->table); /* no such key column: nothing can match */
            j->table = NULL;
        }
        free(type);
    }
    if (st == KNUT_OK && j->table)
        st = knut_graph__store_rows(j->s->conn, "SELECT table_name FROM \"" KNUT_GS_ETYPES "\"",
                                    NULL, 0, &j->edge_tables, err);
    return st;
}

/* Null keys cannot be matched (FalkorDB refuses them too). */
static knut_status check_null_keys(const set_job *j, const struct ArrowArray *batch,
                                   int64_t row_base, knut_error *err)
{
    const knut_graph_set *set = j->set;
    const knut_graph_column *groups[] = {set->keys, set->src_keys, set->dst_keys};
    const size_t ns[] = {set->n_keys, set->n_src_keys, set->n_dst_keys};
    static const char *const roles[] = {"key", "source key", "destination key"};
    knut_arrow_view v;
    knut_status st = knut_arrow_view_init(&v, &set->schema, batch, err);
    if (st != KNUT_OK)
        return st;
    for (int64_t i = 0; i < v.length && st == KNUT_OK; i++)
        for (size_t g = 0; g < 3 && st == KNUT_OK; g++)
            for (size_t k = 0; k < ns[g] && st == KNUT_OK; k++) {
                const knut_arrow_view *c = &v.children[groups[g][k].index];
                if (knut_arrow_view_is_null(c, knut_arrow_view_child_row(&v, i)))
                    st = knut_error_set(err, KNUT_EINVAL,
                                        "%s set '%s': row %" PRId64 ", column '%s': %s is null",
                                        kind_word(set), set->name, row_base + i,
                                        groups[g][k].column, roles[g]);
            }
    knut_arrow_view_reset(&v);
    return st;
}

static knut_status delete_batch(set_job *j, knut_graph_sink_stats *stats, knut_error *err)
{
    knut_buf sql = KNUT_BUF_INIT;
    uint64_t n = 0;
    knut_status st;
    knut_buf_puts(&sql, "CREATE OR REPLACE TEMP TABLE \"_knut_del\" AS SELECT v.\"" KNUT_GS_VID
                        "\" AS vid FROM ");
    knut_duck_ident(&sql, j->table);
    knut_buf_puts(&sql, " AS v SEMI JOIN ");
    knut_duck_ident(&sql, j->stage_name);
    knut_buf_puts(&sql, " AS s ON ");
    match_keys(&sql, "v", j->set->keys, j->set->n_keys);
    if ((st = knut_buf_check(&sql, err)) != KNUT_OK ||
        (st = knut_duck_exec(j->s->conn, sql.data, err)) != KNUT_OK)
        goto cleanup;
    for (size_t e = 0; e < j->edge_tables.n_rows; e++) {
        knut_buf_clear(&sql);
        knut_buf_puts(&sql, "DELETE FROM ");
        knut_duck_ident(&sql, knut_gs__cell(&j->edge_tables, e, 0));
        knut_buf_puts(&sql, " WHERE \"" KNUT_GS_SRC "\" IN (SELECT vid FROM \"_knut_del\") OR \""
                            KNUT_GS_DST "\" IN (SELECT vid FROM \"_knut_del\")");
        if ((st = knut_buf_check(&sql, err)) != KNUT_OK ||
            (st = knut_graph__store_exec(j->s->conn, sql.data, NULL, 0, &n, err)) != KNUT_OK)
            goto cleanup;
        stats->edges_deleted += (int64_t)n;
    }
    st = knut_duck_exec(j->s->conn, "DELETE FROM \"" KNUT_GS_MEMBERS "\" WHERE vid IN (SELECT vid "
                        "FROM \"_knut_del\")", err);
    if (st != KNUT_OK)
        goto cleanup;
    knut_buf_clear(&sql);
    knut_buf_puts(&sql, "DELETE FROM ");
    knut_duck_ident(&sql, j->table);
    knut_buf_puts(&sql, " WHERE \"" KNUT_GS_VID "\" IN (SELECT vid FROM \"_knut_del\")");
    if ((st = knut_buf_check(&sql, err)) == KNUT_OK &&
        (st = knut_graph__store_exec(j->s->conn, sql.data, NULL, 0, &n, err)) == KNUT_OK)
        stats->vertices_deleted += (int64_t)n;
    if (st == KNUT_OK)
        st = knut_duck_exec(j->s->conn, "DROP TABLE \"_knut_del\"", err);
cleanup:
    knut_buf_reset(&sql);
    return st;
}

knut_status knut_graph__store_set_apply(set_job *j, int64_t n_rows, knut_graph_sink_stats *stats,
                                       knut_error *err)
{
    knut_graph_set *set = j->set;
    uint64_t n = 0;
    knut_status st = KNUT_OK;
    if (set->kind == KNUT_GRAPH_SET_VERTEX) {
        int64_t covered = 0;
        if (j->written.len > 0 && (st = knut_graph__store_scalar_i64(
                                       j->s->conn, j->written.data, NULL, 0, &covered, err)) !=
                                      KNUT_OK)
            return st;
        if ((st = knut_graph__store_exec(j->s->conn, j->upsert.data, NULL, 0, &n, err)) != KNUT_OK)
            return st;
        stats->vertices_written += j->written.len > 0 ? covered : (int64_t)n;
        for (size_t l = 0; l < set->n_labels && st == KNUT_OK; l++) {
            const char *label = set->labels[l];
            st = knut_graph__store_exec(j->s->conn, j->members.data, &label, 1, NULL, err);
        }
    } else if (set->kind == KNUT_GRAPH_SET_EDGE) {
        int64_t skipped = n_rows;
        if (j->endpoints_ok) {
            if ((st = knut_graph__store_scalar_i64(j->s->conn, j->skipped.data, NULL, 0, &skipped,
                                                   err)) != KNUT_OK)
                return st;
            int64_t covered = 0;
            if (j->written.len > 0 &&
                (st = knut_graph__store_scalar_i64(j->s->conn, j->written.data, NULL, 0,
                                                   &covered, err)) != KNUT_OK)
                return st;
            const char *labels[] = {set->src_label, set->dst_label};
            if ((st = knut_graph__store_exec(j->s->conn, j->upsert.data, labels, 2, &n, err)) !=
                KNUT_OK)
                return st;
            stats->edges_written += j->written.len > 0 ? covered : (int64_t)n;
        }
        j->s->edges_skipped += skipped;
        stats->edges_skipped += skipped;
        set->skipped += skipped;
        if (skipped > 0 && (st = knut_graph__store_edge_missing(j->s->conn, set, j->src_name,
                                                                j->src_table, j->dst_table,
                                                                err)) != KNUT_OK)
            return st;
        if (skipped > 0 && set->missing_endpoints == KNUT_GRAPH_MISSING_FAIL)
            return knut_graph__missing_fail(set, err);
    } else if (set->kind == KNUT_GRAPH_SET_EDGE_DELETE) {
        const char *labels[] = {set->src_label, set->dst_label};
        if (j->remove.len > 0 && (st = knut_graph__store_exec(j->s->conn, j->remove.data, labels, 2,
                                                              &n, err)) == KNUT_OK)
            stats->edges_deleted += (int64_t)n;
    } else if (j->table) {
        st = delete_batch(j, stats, err);
    }
    return st;
}

static size_t n_sets(knut_graph_mutation *m)
{
    return knut_graph_mutation_count(m, KNUT_GRAPH_SET_VERTEX) +
           knut_graph_mutation_count(m, KNUT_GRAPH_SET_EDGE) +
           knut_graph_mutation_count(m, KNUT_GRAPH_SET_EDGE_DELETE) +
           knut_graph_mutation_count(m, KNUT_GRAPH_SET_DELETE);
}

/* Upserts before deletes: vertex sets, edge sets, edge delete sets (an
 * edge upserted and deleted in one mutation ends deleted), delete sets. */
static knut_graph_set *nth_set(knut_graph_mutation *m, size_t i)
{
    static const knut_graph_set_kind order[] = {KNUT_GRAPH_SET_VERTEX, KNUT_GRAPH_SET_EDGE,
                                                KNUT_GRAPH_SET_EDGE_DELETE,
                                                KNUT_GRAPH_SET_DELETE};
    for (size_t o = 0; o < sizeof order / sizeof order[0]; o++) {
        size_t n = knut_graph_mutation_count(m, order[o]);
        if (i < n)
            return knut_graph_mutation_get(m, order[o], i);
        i -= n;
    }
    return NULL;
}

knut_status knut_graph__store_set_prepare(set_job *j, knut_error *err)
{
    knut_graph_set *set = j->set;
    if (!j->src_name[0])
        memcpy(j->src_name, j->stage_name, sizeof j->src_name);
    return set->kind == KNUT_GRAPH_SET_VERTEX ? prepare_vertex(j, err)
           : set->kind == KNUT_GRAPH_SET_EDGE ? prepare_edge(j, err)
           : set->kind == KNUT_GRAPH_SET_DELETE
               ? prepare_delete(j, err)
               : knut_graph__store_edge_delete_sql(j->s, set, j->stage_name, &j->remove, err);
}

static knut_status run_set(set_job *j, knut_error *err)
{
    knut_status st = knut_graph__store_set_prepare(j, err);
    if (st == KNUT_OK && j->staged > 0)
        st = knut_graph__store_set_apply(j, j->staged, j->stats, err);
    return st;
}

knut_status knut_graph__store_commit(knut_graph_store *s, const knut_graph_sink_commit *commit,
                                     knut_error *err)
{
    knut_status st = KNUT_OK;
    if (commit && commit->fn && (st = commit->fn(commit->ctx, s->conn, err)) != KNUT_OK)
        return knut_error_prefix(err, "commit callback: ");
    if ((st = knut_duck_exec(s->conn, "COMMIT", err)) != KNUT_OK)
        knut_error_prefix(err, "graph store commit: ");
    return st;
}

knut_status knut_graph__store_apply(knut_graph_sink *sink, knut_graph_mutation *m,
                                    const knut_graph_sink_commit *commit,
                                    knut_graph_sink_stats *stats, knut_error *err)
{
    knut_graph_store *s = (knut_graph_store *)sink;
    size_t n = n_sets(m), i;
    knut_status st = KNUT_OK;
    int in_txn = 0;
    set_job *jobs = calloc(n ? n : 1, sizeof *jobs);
    if (!jobs)
        return knut_error_set(err, KNUT_ENOMEM, "graph store: out of memory");
    s->edges_skipped = 0;
    /* Phase 1, outside the transaction: every set's rows into temp tables
     * (connection-local, never in the database file). */
    for (i = 0; i < n && st == KNUT_OK; i++) {
        jobs[i].s = s;
        jobs[i].set = nth_set(m, i);
        jobs[i].stats = stats;
        st = check_names(&jobs[i], err);
        if (st == KNUT_OK)
            st = stage_set(&jobs[i], i, err);
    }
    /* Phase 2: schema changes, upserts, deletes and the ledger, atomically,
     * or, for a large upsert-only mutation, in chunks (store_chunk.c). */
    size_t chunks = st == KNUT_OK ? knut_graph__store_chunks(s, jobs, n) : 1;
    if (st == KNUT_OK && chunks > 1) {
        st = knut_graph__store_apply_chunked(s, jobs, n, chunks, commit, err);
    } else {
        if (st == KNUT_OK && (st = knut_duck_exec(s->conn, "BEGIN TRANSACTION", err)) == KNUT_OK)
            in_txn = 1;
        for (i = 0; i < n && st == KNUT_OK; i++)
            st = run_set(&jobs[i], err);
        if (st == KNUT_OK) {
            st = knut_graph__store_commit(s, commit, err);
            in_txn = st != KNUT_OK; /* a failed COMMIT is rolled back */
        }
        if (st != KNUT_OK && in_txn) {
            knut_error ignored = KNUT_ERROR_INIT;
            knut_duck_exec(s->conn, "ROLLBACK", &ignored);
        }
    }
    for (i = 0; i < n; i++) {
        if (jobs[i].stage_name[0]) {
            knut_buf drop = KNUT_BUF_INIT;
            knut_error ignored = KNUT_ERROR_INIT;
            knut_buf_puts(&drop, "DROP TABLE IF EXISTS temp.");
            knut_duck_ident(&drop, jobs[i].stage_name);
            if (knut_buf_check(&drop, NULL) == KNUT_OK)
                knut_duck_exec(s->conn, drop.data, &ignored);
            knut_buf_reset(&drop);
        }
        job_reset(&jobs[i]);
    }
    free(jobs);
    for (i = 0; st == KNUT_OK && i < knut_graph_mutation_count(m, KNUT_GRAPH_SET_EDGE); i++) {
        const knut_graph_set *es = knut_graph_mutation_get(m, KNUT_GRAPH_SET_EDGE, i);
        if (es->skipped > 0)
            KNUT_LOG(KNUT_LOG_DEBUG, "graph", "graph store: edge set '%s': %" PRId64
                     " rows skipped (endpoint vertex not found: %s)", es->name, es->skipped,
                     es->missing);
    }
    return st;
}
