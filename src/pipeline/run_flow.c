/*
 * One flow's update, as one DuckDB transaction: the rows are staged with
 * their expectation results, counted, checked (FAIL UPDATE rolls the
 * whole update back), then written into the target (recomputed for a
 * materialized view, appended for a streaming table), the quarantine
 * table and the checkpoints, and committed together. Whatever fails
 * rolls back, so a target is always as the last good update left it.
 */
#include <stdlib.h>
#include <string.h>

#include "pipeline_int.h"

typedef struct strvec {
    char **v;
    size_t n, cap;
} strvec;

static int strvec_push(strvec *s, const char *x, size_t len)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16;
        char **nv = realloc(s->v, cap * sizeof *nv);
        if (!nv)
            return -1;
        s->v = nv;
        s->cap = cap;
    }
    if (!(s->v[s->n] = strndup(x, len)))
        return -1;
    s->n++;
    return 0;
}

static void strvec_free(strvec *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
}

/* A source path as DuckDB should see it: relative paths are the spec
 * folder's. */
static void rooted(knut_buf *b, const knut_pipeline *p, const char *path)
{
    if (path[0] != '/' && strcmp(p->root, ".") != 0 && !strstr(path, "://")) {
        knut_buf_puts(b, p->root);
        knut_buf_putc(b, '/');
    }
    knut_buf_puts(b, path);
}

typedef struct collect_ctx {
    strvec *files, *rel;
} collect_ctx;

static knut_status collect_file(void *ctx, const knut_arrow_view *v, int64_t row, knut_error *err)
{
    collect_ctx *c = ctx;
    int64_t len, rlen;
    const char *s = knut_pipeline__col_str(v, 0, row, &len);
    const char *rel = knut_pipeline__col_str(v, 1, row, &rlen);
    if (s && rel &&
        (strvec_push(c->files, s, (size_t)len) != 0 || strvec_push(c->rel, rel, (size_t)rlen) != 0))
        return knut_error_set(err, KNUT_ENOMEM, "pipeline: out of memory");
    return KNUT_OK;
}

/* The files of a source's pattern not in the flow's checkpoint (all of
 * them when ignore_checkpoint), sorted by name: *files as DuckDB reads
 * them, *rel as the checkpoint keeps them, relative to the spec folder
 * (so a run from another working folder sees the same files). */
static knut_status new_files(knut_pipeline__run *r, const knut_pipeline_flow *f,
                             const knut_pipeline_source *s, int ignore_checkpoint, strvec *files,
                             strvec *rel, knut_error *err)
{
    knut_buf pat = KNUT_BUF_INIT, root = KNUT_BUF_INIT;
    rooted(&pat, r->p, s->pattern);
    if (strcmp(r->p->root, ".") != 0)
        knut_buf_printf(&root, "%s/", r->p->root);
    else
        knut_buf_puts(&root, "");
    knut_status st = knut_buf_check(&pat, err);
    if (st == KNUT_OK)
        st = knut_buf_check(&root, err);
    collect_ctx c = {files, rel};
    if (st == KNUT_OK) {
        const char *binds[] = {pat.data, f->name, root.data};
        st = knut_pipeline__query_each(
            r->conn,
            ignore_checkpoint
                ? "SELECT file, CASE WHEN starts_with(file, $3) THEN substr(file, length($3) + 1) "
                  "ELSE file END AS rel FROM glob($1) WHERE $2 IS NOT NULL ORDER BY file"
                : "SELECT * FROM (SELECT file, CASE WHEN starts_with(file, $3) THEN "
                  "substr(file, length($3) + 1) ELSE file END AS rel FROM glob($1)) WHERE rel "
                  "NOT IN (SELECT file FROM _knut.files WHERE flow = $2) ORDER BY file",
            binds, 3, collect_file, &c, err);
    }
    knut_buf_reset(&pat);
    knut_buf_reset(&root);
    return st;
}

/* sql with each source literal replaced: by the rooted pattern, or (for
 * a streaming flow) by the list of its new files. */
static void rewrite(knut_buf *b, const knut_pipeline *p, const knut_pipeline_flow *f,
                    strvec *per_source)
{
    size_t at = 0;
    for (size_t i = 0; i < f->nsources; i++) {
        const knut_pipeline_source *s = &f->sources[i];
        knut_buf_append(b, f->sql + at, s->at - at);
        if (per_source) {
            knut_buf_putc(b, '[');
            for (size_t k = 0; k < per_source[i].n; k++) {
                if (k)
                    knut_buf_putc(b, ',');
                knut_duck_literal(b, per_source[i].v[k], strlen(per_source[i].v[k]));
            }
            knut_buf_putc(b, ']');
        } else {
            knut_buf tmp = KNUT_BUF_INIT;
            rooted(&tmp, p, s->pattern);
            if (tmp.error)
                b->error = tmp.error;
            else
                knut_duck_literal(b, tmp.data ? tmp.data : "", tmp.len);
            knut_buf_reset(&tmp);
        }
        at = s->at + s->len;
    }
    knut_buf_puts(b, f->sql + at);
}

static void qualified(knut_buf *b, const char *schema, const char *name, const char *suffix)
{
    knut_duck_ident(b, schema);
    knut_buf_putc(b, '.');
    if (!suffix) {
        knut_duck_ident(b, name);
        return;
    }
    knut_buf tmp = KNUT_BUF_INIT;
    knut_buf_printf(&tmp, "%s%s", name, suffix);
    knut_duck_ident(b, tmp.data ? tmp.data : "");
    knut_buf_reset(&tmp);
}

static knut_status table_exists(knut_pipeline__run *r, const char *name, int *out,
                                knut_error *err)
{
    int64_t n = 0;
    const char *binds[] = {r->p->schema, name};
    knut_status st = knut_pipeline__scalar_i64(
        r->conn,
        "SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database() AND "
        "schema_name = $1 AND table_name = $2",
        binds, 2, &n, err);
    *out = n > 0;
    return st;
}

typedef struct counts {
    size_t n;
    int64_t v[3 + 256]; /* total, dropped, quarantined, failed per expectation */
} counts;

static knut_status read_counts(void *ctx, const knut_arrow_view *v, int64_t row, knut_error *err)
{
    counts *c = ctx;
    for (size_t i = 0; i < c->n; i++)
        c->v[i] = knut_pipeline__col_i64(v, (int)i, row);
    return KNUT_OK;
}

/* The part of the row filter made by the expectations of one action set. */
static void any_failed(knut_buf *b, const knut_pipeline_flow *f, int drop, int quarantine)
{
    int any = 0;
    knut_buf_putc(b, '(');
    for (size_t i = 0; i < f->nexpectations; i++) {
        knut_pipeline_action a = f->expectations[i].action;
        if ((drop && a == KNUT_PIPELINE_DROP) || (quarantine && a == KNUT_PIPELINE_QUARANTINE)) {
            knut_buf_printf(b, "%s__knut_e%zu IS FALSE", any ? " OR " : "", i);
            any = 1;
        }
    }
    knut_buf_puts(b, any ? ")" : "false)");
}

static void columns(knut_buf *b, const knut_pipeline_flow *f)
{
    knut_buf_puts(b, "SELECT *");
    for (size_t i = 0; i < f->nexpectations; i++)
        knut_buf_printf(b, "%s__knut_e%zu", i ? ", " : " EXCLUDE (", i);
    if (f->nexpectations)
        knut_buf_putc(b, ')');
}

static void quality_json(knut_buf *d, const knut_pipeline_flow *f, const counts *c)
{
    knut_buf_printf(d, ",\"data_quality\":{\"dropped_records\":%lld", (long long)c->v[1]);
    knut_buf_printf(d, ",\"quarantined_records\":%lld,\"expectations\":[", (long long)c->v[2]);
    for (size_t i = 0; i < f->nexpectations; i++) {
        const knut_pipeline_expectation *e = &f->expectations[i];
        knut_buf_puts(d, i ? ",{\"name\":" : "{\"name\":");
        knut_buf_put_json_str(d, e->name, strlen(e->name));
        knut_buf_puts(d, ",\"dataset\":");
        knut_buf_put_json_str(d, f->target, strlen(f->target));
        knut_buf_printf(d, ",\"action\":\"%s\",\"passed_records\":%lld,\"failed_records\":%lld}",
                        knut_pipeline_action_name(e->action), (long long)(c->v[0] - c->v[3 + i]),
                        (long long)c->v[3 + i]);
    }
    knut_buf_puts(d, "]}");
}

/* Runs text on the flow's transaction; a failure becomes the flow's. */
static knut_status step(knut_pipeline__run *r, knut_buf *sql, const char *const *binds, size_t n,
                        knut_error *err)
{
    knut_status st = knut_buf_check(sql, err);
    if (st == KNUT_OK)
        st = knut_pipeline__exec(r->conn, sql->data, binds, n, NULL, err);
    knut_buf_clear(sql);
    return st;
}

static knut_status reset_target(knut_pipeline__run *r, const knut_pipeline_dataset *ds,
                                knut_buf *sql, knut_error *err)
{
    knut_status st = KNUT_OK;
    int exists = 0;
    for (int q = 0; q < 2 && st == KNUT_OK; q++) {
        knut_buf name = KNUT_BUF_INIT;
        knut_buf_printf(&name, "%s%s", ds->name, q ? "__quarantine" : "");
        if ((st = knut_buf_check(&name, err)) == KNUT_OK &&
            (st = table_exists(r, name.data, &exists, err)) == KNUT_OK && exists) {
            /* A new empty table rather than DELETE: its rowids start again
             * with no holes, so readers' rowid offsets stay meaningful. */
            knut_buf_puts(sql, "CREATE OR REPLACE TABLE ");
            qualified(sql, r->p->schema, ds->name, q ? "__quarantine" : NULL);
            knut_buf_puts(sql, " AS SELECT * FROM ");
            qualified(sql, r->p->schema, ds->name, q ? "__quarantine" : NULL);
            knut_buf_puts(sql, " LIMIT 0");
            st = step(r, sql, NULL, 0, err);
        }
        knut_buf_reset(&name);
    }
    for (size_t i = 0; i < r->p->nflows && st == KNUT_OK; i++) {
        const knut_pipeline_flow *g = &r->p->flows[i];
        if (strcmp(g->target, ds->name) != 0)
            continue;
        const char *binds[] = {g->name};
        st = knut_pipeline__exec(r->conn, "DELETE FROM _knut.files WHERE flow = $1", binds, 1,
                                 NULL, err);
        if (st == KNUT_OK)
            st = knut_pipeline__exec(r->conn, "DELETE FROM _knut.flows WHERE flow = $1", binds,
                                     1, NULL, err);
        if (st == KNUT_OK)
            st = knut_pipeline__exec(r->conn, "DELETE FROM _knut.offsets WHERE flow = $1",
                                     binds, 1, NULL, err);
    }
    /* Streaming readers of this table start again at its first row. */
    const char *binds[] = {ds->name};
    if (st == KNUT_OK)
        st = knut_pipeline__exec(r->conn, "DELETE FROM _knut.offsets WHERE source = $1", binds, 1,
                                 NULL, err);
    return st;
}

/* A STREAM(table) read of a streaming flow: the rows after the flow's
 * offset (the last rowid it read) up to the table's last row now. Rows of
 * a streaming table are only appended (a full refresh makes a new table),
 * so rowids are stable and dense. */
typedef struct stream_read {
    const char *name;
    int64_t lo, hi;
} stream_read;

static knut_status stream_bounds(knut_pipeline__run *r, const knut_pipeline_flow *f,
                                 int ignore_offset, stream_read *sr, knut_error *err)
{
    const char *binds[] = {f->name, sr->name};
    knut_status st = KNUT_OK;
    int64_t n = 0;
    sr->lo = -1;
    if (!ignore_offset) {
        st = knut_pipeline__scalar_i64(r->conn,
                                       "SELECT count(*) FROM _knut.offsets WHERE flow = $1 AND "
                                       "source = $2", binds, 2, &n, err);
        if (st == KNUT_OK && n)
            st = knut_pipeline__scalar_i64(r->conn,
                                           "SELECT last_rowid FROM _knut.offsets WHERE flow = $1 "
                                           "AND source = $2", binds, 2, &sr->lo, err);
    }
    int exists = 0;
    if (st == KNUT_OK)
        st = table_exists(r, sr->name, &exists, err);
    sr->hi = -1;
    if (st == KNUT_OK && exists) {
        knut_buf q = KNUT_BUF_INIT;
        knut_buf_puts(&q, "SELECT coalesce(max(rowid), -1) FROM ");
        qualified(&q, r->p->schema, sr->name, NULL);
        if ((st = knut_buf_check(&q, err)) == KNUT_OK)
            st = knut_pipeline__scalar_i64(r->conn, q.data, NULL, 0, &sr->hi, err);
        knut_buf_reset(&q);
    }
    if (sr->hi < sr->lo)
        sr->lo = -1; /* the table was made anew behind the offset: read it all */
    return st;
}

/* Shadows each streamed table with a temporary view of its new rows (the
 * temp schema comes first in name resolution); the bounds are in a temp
 * table, so no value is in the view's text. */
static knut_status stream_views(knut_pipeline__run *r, const stream_read *sr, size_t n,
                                knut_error *err)
{
    knut_status st = knut_duck_exec(r->conn,
                                    "CREATE OR REPLACE TEMP TABLE __knut_bounds (name VARCHAR, "
                                    "lo BIGINT, hi BIGINT)", err);
    knut_buf sql = KNUT_BUF_INIT;
    for (size_t i = 0; i < n && st == KNUT_OK; i++) {
        char lo[32], hi[32];
        snprintf(lo, sizeof lo, "%lld", (long long)sr[i].lo);
        snprintf(hi, sizeof hi, "%lld", (long long)sr[i].hi);
        const char *binds[] = {sr[i].name, lo, hi};
        st = knut_pipeline__exec(r->conn, "INSERT INTO __knut_bounds VALUES ($1, $2::BIGINT, "
                                          "$3::BIGINT)", binds, 3, NULL, err);
        if (st != KNUT_OK)
            break;
        knut_buf_puts(&sql, "CREATE OR REPLACE TEMP VIEW ");
        knut_duck_ident(&sql, sr[i].name);
        knut_buf_puts(&sql, " AS SELECT * FROM ");
        knut_duck_ident(&sql, r->p->catalog);
        knut_buf_putc(&sql, '.');
        qualified(&sql, r->p->schema, sr[i].name, NULL);
        knut_buf_puts(&sql, " WHERE rowid > (SELECT lo FROM __knut_bounds WHERE name = ");
        knut_duck_literal(&sql, sr[i].name, strlen(sr[i].name));
        knut_buf_puts(&sql, ") AND rowid <= (SELECT hi FROM __knut_bounds WHERE name = ");
        knut_duck_literal(&sql, sr[i].name, strlen(sr[i].name));
        knut_buf_putc(&sql, ')');
        st = step(r, &sql, NULL, 0, err);
    }
    knut_buf_reset(&sql);
    return st;
}

static void stream_views_drop(knut_pipeline__run *r, const stream_read *sr, size_t n)
{
    knut_buf sql = KNUT_BUF_INIT;
    knut_error ignored = KNUT_ERROR_INIT;
    for (size_t i = 0; i < n; i++) {
        knut_buf_puts(&sql, "DROP VIEW IF EXISTS temp.main.");
        knut_duck_ident(&sql, sr[i].name);
        knut_buf_putc(&sql, ';');
    }
    knut_buf_puts(&sql, "DROP TABLE IF EXISTS temp.main.__knut_bounds");
    if (!sql.error)
        knut_duck_exec(r->conn, sql.data, &ignored);
    knut_buf_reset(&sql);
}

/* The update inside the transaction; *state FAILED on a failed FAIL
 * expectation (with ferr set), else COMPLETED. */
static knut_status update(knut_pipeline__run *r, knut_pipeline_flow *f,
                          const knut_pipeline_dataset *ds, size_t dsi, const char *query,
                          strvec *files, const stream_read *sr, size_t nsr,
                          knut_pipeline__state *state, knut_buf *details, knut_error *ferr)
{
    knut_buf sql = KNUT_BUF_INIT;
    counts c = {3 + f->nexpectations, {0}};
    int streaming = ds->kind == KNUT_PIPELINE_STREAMING_TABLE, exists = 0, qexists = 0, quar = 0;
    knut_status st = KNUT_OK;
    if (streaming && r->reset[dsi])
        st = reset_target(r, ds, &sql, ferr);
    if (st == KNUT_OK && streaming)
        st = table_exists(r, ds->name, &exists, ferr);
    if (st != KNUT_OK)
        goto done;
    for (size_t i = 0; i < f->nexpectations; i++)
        quar |= f->expectations[i].action == KNUT_PIPELINE_QUARANTINE;
    knut_buf_puts(&sql, "CREATE OR REPLACE TEMP TABLE __knut_stage AS ");
    knut_pipeline__expect_stage_sql(&sql, f, query, r->p->schema, exists);
    if ((st = step(r, &sql, NULL, 0, ferr)) != KNUT_OK)
        goto done;
    knut_buf_puts(&sql, "SELECT count(*), count(*) FILTER (WHERE ");
    any_failed(&sql, f, 1, 1);
    knut_buf_puts(&sql, "), count(*) FILTER (WHERE ");
    any_failed(&sql, f, 0, 1);
    knut_buf_putc(&sql, ')');
    for (size_t i = 0; i < f->nexpectations; i++)
        knut_buf_printf(&sql, ", count(*) FILTER (WHERE __knut_e%zu IS FALSE)", i);
    knut_buf_puts(&sql, " FROM __knut_stage");
    if ((st = knut_buf_check(&sql, ferr)) != KNUT_OK ||
        (st = knut_pipeline__query_each(r->conn, sql.data, NULL, 0, read_counts, &c, ferr)) !=
            KNUT_OK)
        goto done;
    knut_buf_clear(&sql);
    for (size_t i = 0; i < f->nexpectations; i++) {
        const knut_pipeline_expectation *e = &f->expectations[i];
        if (e->action == KNUT_PIPELINE_FAIL && c.v[3 + i] > 0) {
            *state = KNUT_PIPELINE__FAILED;
            knut_pipeline__error_at(ferr, KNUT_EINVAL, e->pos,
                                    "flow '%s': expectation '%s' (ON VIOLATION FAIL UPDATE) "
                                    "failed for %lld of %lld rows; the update is rolled back",
                                    f->name, e->name, (long long)c.v[3 + i], (long long)c.v[0]);
            goto done;
        }
    }
    if (streaming && exists) {
        knut_buf_puts(&sql, "INSERT INTO ");
        qualified(&sql, r->p->schema, ds->name, NULL);
        knut_buf_puts(&sql, " BY NAME ");
    } else {
        knut_buf_puts(&sql, "CREATE OR REPLACE TABLE ");
        qualified(&sql, r->p->schema, ds->name, NULL);
        knut_buf_puts(&sql, " AS ");
    }
    columns(&sql, f);
    knut_buf_puts(&sql, " FROM __knut_stage WHERE NOT ");
    any_failed(&sql, f, 1, 1);
    if ((st = step(r, &sql, NULL, 0, ferr)) != KNUT_OK)
        goto done;
    if (quar) {
        knut_buf qname = KNUT_BUF_INIT;
        knut_buf_printf(&qname, "%s__quarantine", ds->name);
        st = knut_buf_check(&qname, ferr);
        if (st == KNUT_OK && streaming)
            st = table_exists(r, qname.data, &qexists, ferr);
        knut_buf_reset(&qname);
        if (st != KNUT_OK)
            goto done;
        if (qexists) {
            knut_buf_puts(&sql, "INSERT INTO ");
            qualified(&sql, r->p->schema, ds->name, "__quarantine");
            knut_buf_puts(&sql, " BY NAME ");
        } else {
            knut_buf_puts(&sql, "CREATE OR REPLACE TABLE ");
            qualified(&sql, r->p->schema, ds->name, "__quarantine");
            knut_buf_puts(&sql, " AS ");
        }
        columns(&sql, f);
        knut_buf_puts(&sql, ", list_filter([");
        for (size_t i = 0; i < f->nexpectations; i++) {
            knut_buf_printf(&sql, "%sCASE WHEN __knut_e%zu IS FALSE THEN ", i ? ", " : "", i);
            knut_duck_literal(&sql, f->expectations[i].name, strlen(f->expectations[i].name));
            knut_buf_puts(&sql, " END");
        }
        knut_buf_puts(&sql, "]::VARCHAR[], x -> x IS NOT NULL) AS _failed_expectations "
                            "FROM __knut_stage WHERE ");
        any_failed(&sql, f, 0, 1);
        if ((st = step(r, &sql, NULL, 0, ferr)) != KNUT_OK)
            goto done;
    }
    for (size_t i = 0; files && i < files->n && st == KNUT_OK; i++) {
        char run[32];
        snprintf(run, sizeof run, "%lld", (long long)r->run_id);
        const char *binds[] = {f->name, files->v[i], run};
        st = knut_pipeline__exec(r->conn, "INSERT INTO _knut.files VALUES ($1, $2, $3::BIGINT)",
                                 binds, 3, NULL, ferr);
    }
    for (size_t i = 0; i < nsr && st == KNUT_OK; i++) {
        char hi[32];
        snprintf(hi, sizeof hi, "%lld", (long long)sr[i].hi);
        const char *binds[] = {f->name, sr[i].name, hi};
        st = knut_pipeline__exec(r->conn,
                                 "INSERT OR REPLACE INTO _knut.offsets VALUES ($1, $2, $3::BIGINT)",
                                 binds, 3, NULL, ferr);
    }
    if (st == KNUT_OK && f->kind == KNUT_PIPELINE_FLOW_APPEND_ONCE) {
        const char *binds[] = {f->name};
        st = knut_pipeline__exec(r->conn, "INSERT OR REPLACE INTO _knut.flows VALUES ($1, true)",
                                 binds, 1, NULL, ferr);
    }
    if (st == KNUT_OK)
        st = knut_duck_exec(r->conn, "DROP TABLE __knut_stage", ferr);
    if (st != KNUT_OK)
        goto done;
    knut_buf_printf(details, "{\"rows_out\":%lld", (long long)(c.v[0] - c.v[1]));
    if (files)
        knut_buf_printf(details, ",\"files_read\":%zu", files->n);
    for (size_t i = 0; i < nsr; i++) {
        knut_buf_puts(details, i ? "," : ",\"streams_read\":{");
        knut_buf_put_json_str(details, sr[i].name, strlen(sr[i].name));
        knut_buf_printf(details, ":%lld", (long long)(sr[i].hi - sr[i].lo));
        if (i + 1 == nsr)
            knut_buf_putc(details, '}');
    }
    if (f->nexpectations)
        quality_json(details, f, &c);
    knut_buf_putc(details, '}');
done:
    knut_buf_reset(&sql);
    return st;
}

knut_status knut_pipeline__flow_run(knut_pipeline__run *r, knut_pipeline_flow *f,
                                    knut_pipeline__state *state, knut_buf *details,
                                    knut_error *ferr, knut_error *err)
{
    knut_pipeline *p = r->p;
    const knut_pipeline_dataset *ds = knut_pipeline_dataset_find(p, f->target);
    size_t dsi = (size_t)(ds - p->datasets);
    knut_buf query = KNUT_BUF_INIT;
    strvec *per = NULL, all = {0}, rel = {0};
    stream_read *sr = NULL;
    size_t nsr = 0;
    int views = 0;
    knut_status st = KNUT_OK;
    *state = KNUT_PIPELINE__COMPLETED;
    if (f->kind == KNUT_PIPELINE_FLOW_CDC) {
        *state = KNUT_PIPELINE__FAILED;
        knut_pipeline__error_at(ferr, KNUT_EUNSUPPORTED, f->pos,
                                "flow '%s': AUTO CDC / APPLY CHANGES is parsed and validated, "
                                "but running it is not supported yet", f->name);
        goto done;
    }
    int streaming = f->kind == KNUT_PIPELINE_FLOW_STREAMING;
    if (streaming && f->nsources) {
        per = calloc(f->nsources, sizeof *per);
        if (!per) {
            st = knut_error_set(err, KNUT_ENOMEM, "pipeline: out of memory");
            goto done;
        }
        for (size_t i = 0; i < f->nsources; i++) {
            if ((st = new_files(r, f, &f->sources[i], r->reset[dsi], &per[i], &rel, ferr)) !=
                KNUT_OK)
                goto flow_failed;
            all.n += per[i].n;
        }
    }
    if (streaming) {
        sr = calloc(f->nreads ? f->nreads : 1, sizeof *sr);
        if (!sr) {
            st = knut_error_set(err, KNUT_ENOMEM, "pipeline: out of memory");
            goto done;
        }
        for (size_t i = 0; i < f->nreads; i++) {
            if (!f->reads[i].streaming || !f->reads[i].internal)
                continue;
            sr[nsr].name = f->reads[i].name;
            if ((st = stream_bounds(r, f, r->reset[dsi], &sr[nsr], ferr)) != KNUT_OK)
                goto flow_failed;
            nsr++;
        }
        int fresh = all.n > 0;
        for (size_t i = 0; i < nsr; i++)
            fresh |= sr[i].hi > sr[i].lo;
        if (!fresh && !r->reset[dsi]) {
            *state = KNUT_PIPELINE__IDLE;
            knut_buf_puts(details, f->nsources ? "{\"rows_out\":0,\"files_read\":0}"
                                               : "{\"rows_out\":0}");
            goto done;
        }
    }
    if (f->kind == KNUT_PIPELINE_FLOW_APPEND_ONCE && !r->reset[dsi] && !r->dry) {
        int64_t ran = 0;
        const char *binds[] = {f->name};
        if ((st = knut_pipeline__scalar_i64(r->conn,
                                            "SELECT count(*) FROM _knut.flows WHERE flow = $1",
                                            binds, 1, &ran, ferr)) != KNUT_OK)
            goto flow_failed;
        if (ran) {
            *state = KNUT_PIPELINE__IDLE;
            knut_buf_puts(details, "{\"rows_out\":0,\"once\":\"already ran\"}");
            goto done;
        }
    }
    rewrite(&query, p, f, per);
    if ((st = knut_buf_check(&query, err)) != KNUT_OK)
        goto done;
    if (r->dry) {
        knut_buf_printf(details, "{\"plan\":\"%s\"",
                        ds->kind == KNUT_PIPELINE_TEMPORARY_VIEW      ? "create view"
                        : ds->kind == KNUT_PIPELINE_MATERIALIZED_VIEW ? "recompute"
                        : r->reset[dsi]                               ? "full refresh"
                                                                      : "append");
        if (per)
            knut_buf_printf(details, ",\"files\":%zu", all.n);
        for (size_t i = 0; i < nsr; i++) {
            knut_buf_puts(details, i ? "," : ",\"stream_rows\":{");
            knut_buf_put_json_str(details, sr[i].name, strlen(sr[i].name));
            knut_buf_printf(details, ":%lld", (long long)(sr[i].hi - sr[i].lo));
            if (i + 1 == nsr)
                knut_buf_putc(details, '}');
        }
        knut_buf_putc(details, '}');
        goto done;
    }
    if (ds->kind == KNUT_PIPELINE_TEMPORARY_VIEW) {
        knut_buf sql = KNUT_BUF_INIT;
        knut_buf_puts(&sql, "CREATE OR REPLACE TEMP VIEW ");
        knut_duck_ident(&sql, ds->name);
        knut_buf_printf(&sql, " AS %s", query.data);
        st = step(r, &sql, NULL, 0, ferr);
        knut_buf_reset(&sql);
        if (st != KNUT_OK)
            goto flow_failed;
        knut_buf_puts(details, "{}");
        goto done;
    }
    if (nsr) {
        views = 1;
        if ((st = stream_views(r, sr, nsr, ferr)) != KNUT_OK)
            goto flow_failed;
    }
    if ((st = knut_duck_conn_begin(r->conn, ferr)) != KNUT_OK)
        goto flow_failed;
    st = update(r, f, ds, dsi, query.data, per ? &rel : NULL, sr, nsr, state, details, ferr);
    if (st == KNUT_OK && *state == KNUT_PIPELINE__COMPLETED)
        st = knut_duck_conn_commit(r->conn, ferr);
    if (st != KNUT_OK || *state != KNUT_PIPELINE__COMPLETED) {
        knut_error ignored = KNUT_ERROR_INIT;
        knut_duck_conn_rollback(r->conn, &ignored);
        if (st != KNUT_OK)
            goto flow_failed;
        goto done;
    }
    if (ds->kind == KNUT_PIPELINE_STREAMING_TABLE)
        r->reset[dsi] = 0; /* later flows into it append to the fresh table */
    goto done;
flow_failed:
    /* ferr holds DuckDB's message: name the flow and where it is defined. */
    *state = KNUT_PIPELINE__FAILED;
    {
        char msg[KNUT_ERROR_MSG_MAX];
        knut_duck_error_trim(ferr); /* the echo of our staging SQL helps no one */
        snprintf(msg, sizeof msg, "%s", ferr->message);
        knut_status code = ferr->code;
        knut_pipeline__error_at(ferr, code ? code : KNUT_ERROR, f->pos, "flow '%s' failed: %s",
                                f->name, msg);
    }
    st = KNUT_OK;
done:
    if (views)
        stream_views_drop(r, sr, nsr);
    free(sr);
    knut_buf_reset(&query);
    for (size_t i = 0; per && i < f->nsources; i++)
        strvec_free(&per[i]);
    free(per);
    strvec_free(&rel);
    return st;
}
