/*
 * The chunk stream behind every reader: walks a plan one output chunk at a
 * time. For each chunk it probes the chunk's files, builds one SELECT that
 * casts every column to its GraphAr type (files of several groups joined
 * with POSITIONAL JOIN, which is the vertex-index join for dense chunks;
 * the files' own index columns come along as hidden columns and are
 * checked against the computed index), runs it with the paths bound as
 * parameters, and hands DuckDB's batches on re-typed. Only one chunk's
 * result is open at a time, so memory stays at a chunk's batches, and a
 * limit stops the walk before further chunks are opened.
 */
#include "read_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct rstream {
    knut_graphar_reader *r;
    knut_graphar__plan plan;
    struct ArrowSchema schema;  /* the output schema, copied on get_schema */
    knut_graphar__cursor cur;
    knut_graphar__step step;
    int in_chunk;
    int done;
    int failed;                 /* errno-style code of a failure, sticky */
    struct ArrowArrayStream duck;
    struct ArrowSchema duck_schema;
    knut_graphar__conv *conv;   /* n_cols */
    int *map;                   /* n_cols: DuckDB column, -1 = vertex index */
    int *check_col;             /* hidden index columns: DuckDB column ... */
    size_t *check_src;          /* ... and the source file it came from */
    size_t n_checks;
    int *id_col;                /* reserved columns checked for nulls */
    size_t n_ids;
    knut_graphar__probe *probes; /* n_srcs: what each file of the chunk holds */
    int *probed;                /* n_srcs: probes[k] is valid (Parquet: kept
                                   from chunk to chunk, see open_chunk) */
    int64_t chunk_rows;         /* rows read from the current chunk */
    int64_t emitted;
    knut_error err;
} rstream;

static int errno_of(knut_status st)
{
    switch (st) {
    case KNUT_ENOTFOUND: return ENOENT;
    case KNUT_ENOMEM: return ENOMEM;
    case KNUT_EINVAL:
    case KNUT_EPARSE: return EINVAL;
    case KNUT_EUNSUPPORTED: return ENOTSUP;
    case KNUT_ETOOBIG: return EOVERFLOW;
    case KNUT_EAGAIN: return EAGAIN;
    case KNUT_ECANCELLED: return ECANCELED;
    default: return EIO;
    }
}

/* "path" for one file, "path0 + path1 (+N more)" for joined chunks. */
static const char *chunk_name(const rstream *s, char *buf, size_t cap)
{
    if (s->plan.n_srcs == 0) {
        snprintf(buf, cap, "%s chunk %lld", s->plan.what, (long long)s->step.index);
    } else if (s->plan.n_srcs == 1) {
        snprintf(buf, cap, "%s", s->step.paths[0].data);
    } else {
        snprintf(buf, cap, "%s + %s%s", s->step.paths[0].data, s->step.paths[1].data,
                 s->plan.n_srcs > 2 ? " + ..." : "");
    }
    return buf;
}

static void close_chunk(rstream *s)
{
    knut_arrow_schema_release(&s->duck_schema);
    knut_arrow_stream_release(&s->duck);
    s->n_checks = 0;
    s->n_ids = 0;
    s->in_chunk = 0;
}

/* Names wanted from source k (for the CSV delimiter guess). */
static size_t wanted_names(const knut_graphar__plan *p, size_t k, const char **want)
{
    size_t n = 0;
    want[n++] = KNUT_GRAPHAR__VINDEX;
    for (size_t i = 0; i < p->n_cols; i++)
        if (p->cols[i].kind != KNUT_GRAPHAR__COL_VINDEX && p->cols[i].src == k)
            want[n++] = p->cols[i].name;
    return n;
}

static knut_status list_columns(knut_buf *b, const knut_graphar__probe *pr)
{
    for (size_t i = 0; i < pr->n_names; i++)
        knut_buf_printf(b, "%s%s", i ? ", " : "", pr->names[i]);
    return b->error;
}

/* Probes the chunk's files (those not probed yet) and builds its SELECT. */
static knut_status chunk_sql(rstream *s, knut_duck_conn *conn, knut_buf *sql, knut_error *err)
{
    const knut_graphar__plan *p = &s->plan;
    knut_graphar__probe *probes = s->probes;
    knut_status st = KNUT_OK;
    const char **want = malloc((p->n_cols + 1) * sizeof *want);
    if (!want)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    for (size_t k = 0; st == KNUT_OK && k < p->n_srcs; k++) {
        if (s->probed[k])
            continue;
        size_t nw = wanted_names(p, k, want);
        st = knut_graphar__probe_file(conn, s->step.paths[k].data, p->srcs[k].ft, want, nw,
                                      &probes[k], err);
        /* A Parquet footer read costs a query: the chunks of one group come
         * from one writer, so its schema is reused (and re-read if the
         * chunk's query then fails to bind). CSV headers are cheap and
         * re-read for every chunk. */
        s->probed[k] = st == KNUT_OK && p->srcs[k].ft == KNUT_GRAPHAR_FILE_PARQUET;
    }
    free(want);
    if (st != KNUT_OK)
        return st;
    /* Every column must be in its file (JSON Lines rows may omit null keys). */
    for (size_t i = 0; i < p->n_cols; i++) {
        const knut_graphar__col *c = &p->cols[i];
        if (c->kind == KNUT_GRAPHAR__COL_VINDEX || p->srcs[c->src].ft == KNUT_GRAPHAR_FILE_JSON ||
            knut_graphar__probe_find(&probes[c->src], c->name) >= 0)
            continue;
        knut_buf cols = KNUT_BUF_INIT;
        list_columns(&cols, &probes[c->src]);
        st = knut_error_set(err, KNUT_EINVAL, "%s: no column '%s' (the file has: %s)",
                            s->step.paths[c->src].data, c->name, cols.data ? cols.data : "");
        knut_buf_reset(&cols);
        return st;
    }
    knut_buf_puts(sql, "SELECT ");
    int n = 0;
    for (size_t i = 0; st == KNUT_OK && i < p->n_cols; i++) {
        const knut_graphar__col *c = &p->cols[i];
        if (c->kind == KNUT_GRAPHAR__COL_VINDEX) {
            s->map[i] = -1;
            continue;
        }
        if (n > 0)
            knut_buf_puts(sql, ", ");
        st = knut_graphar__sql_column(sql, c, p->srcs[c->src].ft, &probes[c->src], err);
        knut_buf_printf(sql, " AS c%zu", i);
        if (c->kind == KNUT_GRAPHAR__COL_ID)
            s->id_col[s->n_ids++] = n;
        s->map[i] = n++;
    }
    for (size_t k = 0; st == KNUT_OK && k < p->n_srcs; k++) {
        if (p->srcs[k].kind != KNUT_GRAPHAR__SRC_VGROUP ||
            knut_graphar__probe_find(&probes[k], KNUT_GRAPHAR__VINDEX) < 0)
            continue;
        knut_buf_printf(sql, "%sCAST(s%zu.", n > 0 ? ", " : "", k);
        knut_duck_ident(sql, KNUT_GRAPHAR__VINDEX);
        knut_buf_printf(sql, " AS BIGINT) AS h%zu", k);
        s->check_col[s->n_checks] = n++;
        s->check_src[s->n_checks++] = k;
    }
    if (n == 0) /* cannot happen for a valid plan; keeps the SQL valid */
        knut_buf_puts(sql, "1 AS unused");
    for (size_t k = 0; st == KNUT_OK && k < p->n_srcs; k++) {
        knut_buf_puts(sql, k == 0 ? " FROM " : " POSITIONAL JOIN ");
        char param[24];
        snprintf(param, sizeof param, "$%zu", k + 1);
        st = knut_graphar__sql_source(sql, p, k, &probes[k], param, err);
        knut_buf_printf(sql, " AS s%zu", k);
    }
    return st == KNUT_OK ? knut_buf_check(sql, err) : st;
}

/* Learns DuckDB's column types for the chunk and checks them. */
static knut_status chunk_types(rstream *s, knut_error *err)
{
    int rc = s->duck.get_schema(&s->duck, &s->duck_schema);
    if (rc != 0)
        return knut_arrow_stream_error(&s->duck, rc, "reading the result schema", err);
    const struct ArrowSchema *ds = &s->duck_schema;
    for (size_t i = 0; i < s->plan.n_cols; i++) {
        knut_graphar__conv *cv = &s->conv[i];
        if (s->map[i] < 0)
            continue;
        if (s->map[i] >= ds->n_children)
            return knut_error_set(err, KNUT_EINVAL, "DuckDB returned %lld columns",
                                  (long long)ds->n_children);
        const struct ArrowSchema *c = ds->children[s->map[i]];
        knut_status st = knut_arrow_schema_parse_type(c, &cv->in, err);
        if (st == KNUT_OK && (cv->in.type == KNUT_ARROW_LIST ||
                              cv->in.type == KNUT_ARROW_LARGE_LIST))
            st = knut_arrow_schema_parse_type(c->children[0], &cv->in_elem, err);
        if (st == KNUT_OK)
            st = knut_graphar__conv_check(cv, cv->name, err);
        if (st != KNUT_OK)
            return st;
    }
    return KNUT_OK;
}

/* Forgets what the files of the chunk hold (all of them, or the ones
 * kept from an earlier chunk); returns how many kept probes were dropped. */
static int forget_probes(rstream *s, int kept_only)
{
    int n = 0;
    for (size_t k = 0; s->probes && s->probed && k < s->plan.n_srcs; k++) {
        if (kept_only && !s->probed[k])
            continue;
        n += s->probed[k];
        s->probed[k] = 0;
        knut_graphar__probe_reset(&s->probes[k]);
    }
    return n;
}

/* Runs the chunk's SELECT (the paths bound as parameters) into s->duck.
 * A Parquet schema reused from an earlier chunk that no longer binds
 * (DuckDB binds table functions with parameters when executing) is read
 * again from this chunk's files, once. */
static knut_status run_chunk(rstream *s, knut_duck_conn *conn, knut_error *err)
{
    knut_buf sql = KNUT_BUF_INIT;
    knut_status st = KNUT_OK;
    for (int attempt = 0; attempt < 2; attempt++) {
        knut_duck_stmt *stmt = NULL;
        knut_buf_clear(&sql);
        s->n_checks = s->n_ids = 0;
        int reused = 0;
        for (size_t k = 0; k < s->plan.n_srcs; k++)
            reused += s->probed[k];
        st = chunk_sql(s, conn, &sql, err);
        if (st == KNUT_OK) {
            KNUT_LOG(KNUT_LOG_TRACE, KNUT_GRAPHAR_LOG, "chunk query: %s", sql.data);
            st = knut_duck_stmt_prepare(&stmt, conn, sql.data, err);
        }
        for (size_t k = 0; st == KNUT_OK && k < s->plan.n_srcs; k++)
            st = knut_duck_stmt_bind_text(stmt, k + 1, s->step.paths[k].data,
                                          s->step.paths[k].len, err);
        if (st == KNUT_OK)
            st = knut_duck_stmt_query(stmt, &s->duck, err);
        knut_duck_stmt_free(stmt);
        if (st == KNUT_OK)
            st = chunk_types(s, err);
        if (st == KNUT_OK || !reused || attempt > 0)
            break;
        knut_arrow_schema_release(&s->duck_schema);
        knut_arrow_stream_release(&s->duck);
        forget_probes(s, 1);
        knut_error_clear(err);
    }
    for (size_t k = 0; k < s->plan.n_srcs; k++)
        if (!s->probed[k])
            knut_graphar__probe_reset(&s->probes[k]);
    knut_buf_reset(&sql);
    return st;
}

static knut_status open_chunk(rstream *s, knut_error *err)
{
    knut_duck_conn *conn = NULL;
    knut_status st = knut_graphar__plan_next(s->r, &s->plan, &s->cur, &s->step, err);
    if (st != KNUT_OK)
        return st; /* KNUT_EOF: the walk is over */
    s->chunk_rows = 0;
    s->in_chunk = 1;
    if (s->plan.n_srcs == 0) {
        for (size_t i = 0; i < s->plan.n_cols; i++)
            s->map[i] = -1;
        return KNUT_OK;
    }
    if ((st = knut_graphar__reader_conn(s->r, &conn, err)) != KNUT_OK)
        goto cleanup;
    st = run_chunk(s, conn, err);
    if (st != KNUT_OK) {
        char name[1024];
        knut_error_prefix(err, "%s: ", chunk_name(s, name, sizeof name));
    }
cleanup:
    if (st != KNUT_OK)
        close_chunk(s);
    return st;
}

/* The chunk ended: its row count must match the counts files. */
static knut_status end_chunk(rstream *s, knut_error *err)
{
    char name[1024];
    knut_status st = KNUT_OK;
    if (s->step.rows >= 0 && s->chunk_rows != s->step.rows)
        st = knut_error_set(err, KNUT_EINVAL,
                            "%s: %lld rows, expected %lld (chunk %lld of %s, from its count "
                            "file and chunk size)",
                            chunk_name(s, name, sizeof name), (long long)s->chunk_rows,
                            (long long)s->step.rows, (long long)s->step.index, s->plan.what);
    else if (s->step.max_rows >= 0 && s->chunk_rows > s->step.max_rows)
        st = knut_error_set(err, KNUT_EINVAL, "%s: %lld rows, more than the %lld allowed",
                            chunk_name(s, name, sizeof name), (long long)s->chunk_rows,
                            (long long)s->step.max_rows);
    close_chunk(s);
    return st;
}

/* Checks a batch: hidden index columns equal the computed index, and
 * reserved columns hold no nulls. */
static knut_status check_batch(rstream *s, const struct ArrowArray *batch, knut_error *err)
{
    if (s->n_checks == 0 && s->n_ids == 0)
        return KNUT_OK;
    knut_arrow_view v;
    knut_status st = knut_arrow_view_init(&v, &s->duck_schema, batch, err);
    if (st != KNUT_OK)
        return st;
    int64_t first = s->step.base_id + s->chunk_rows;
    for (size_t k = 0; st == KNUT_OK && k < s->n_checks; k++) {
        const knut_arrow_view *c = knut_arrow_view_child(&v, s->check_col[k]);
        for (int64_t i = 0; c && i < c->length; i++) {
            int null = knut_arrow_view_is_null(c, i);
            int64_t got = null ? 0 : knut_arrow_view_get_int64(c, i);
            if (null || got != first + i) {
                char gotbuf[32];
                snprintf(gotbuf, sizeof gotbuf, "%lld", (long long)got);
                st = knut_error_set(err, KNUT_EINVAL,
                                    "%s: %s is %s at row %lld, expected %lld (the row's "
                                    "vertex id)",
                                    s->step.paths[s->check_src[k]].data, KNUT_GRAPHAR__VINDEX,
                                    null ? "null" : gotbuf, (long long)(s->chunk_rows + i),
                                    (long long)(first + i));
                break;
            }
        }
    }
    for (size_t k = 0; st == KNUT_OK && k < s->n_ids; k++) {
        const knut_arrow_view *c = knut_arrow_view_child(&v, s->id_col[k]);
        for (int64_t i = 0; c && c->validity && i < c->length; i++)
            if (knut_arrow_view_is_null(c, i)) {
                const knut_graphar__col *col = NULL;
                for (size_t j = 0; j < s->plan.n_cols; j++)
                    if (s->map[j] == s->id_col[k])
                        col = &s->plan.cols[j];
                st = knut_error_set(err, KNUT_EINVAL, "%s: null %s at row %lld",
                                    col ? s->step.paths[col->src].data : "?",
                                    col ? col->name : "column", (long long)(s->chunk_rows + i));
                break;
            }
    }
    knut_arrow_view_reset(&v);
    return st;
}

/* Rows of the vertex index only (a vertex type without property files). */
static knut_status synthetic_batch(rstream *s, struct ArrowArray *out, knut_error *err)
{
    int64_t left = (s->step.rows >= 0 ? s->step.rows : 0) - s->chunk_rows;
    if (left <= 0)
        return end_chunk(s, err);
    int64_t n = left < 2048 ? left : 2048;
    if (s->r->opts.limit > 0 && n > s->r->opts.limit - s->emitted)
        n = s->r->opts.limit - s->emitted;
    struct ArrowArray none = {0};
    knut_status st = knut_graphar__batch_build(out, &none, s->conv, s->map, s->plan.n_cols,
                                               s->step.base_id + s->chunk_rows, n, err);
    if (st == KNUT_OK)
        s->chunk_rows += n;
    return st;
}

static int fail(rstream *s, knut_status st)
{
    s->failed = errno_of(st);
    s->done = 1;
    close_chunk(s);
    return s->failed;
}

static int rs_get_next(struct ArrowArrayStream *self, struct ArrowArray *out)
{
    rstream *s = self->private_data;
    out->release = NULL;
    if (s->failed)
        return s->failed;
    knut_status st;
    while (!s->done) {
        if (s->r->opts.limit > 0 && s->emitted >= s->r->opts.limit) {
            s->done = 1;
            close_chunk(s);
            break;
        }
        if (!s->in_chunk) {
            st = open_chunk(s, &s->err);
            if (st == KNUT_EOF) {
                s->done = 1;
                break;
            }
            if (st != KNUT_OK)
                return fail(s, st);
        }
        if (s->plan.n_srcs == 0) {
            if ((st = synthetic_batch(s, out, &s->err)) != KNUT_OK)
                return fail(s, st);
            if (!out->release)
                continue; /* the chunk ended */
            s->emitted += out->length;
            return 0;
        }
        struct ArrowArray batch = {0};
        int rc = s->duck.get_next(&s->duck, &batch);
        if (rc != 0) {
            char name[1024];
            knut_arrow_stream_error(&s->duck, rc, "reading", &s->err);
            knut_error_prefix(&s->err, "%s: ", chunk_name(s, name, sizeof name));
            return fail(s, s->err.code);
        }
        if (!batch.release) {
            if ((st = end_chunk(s, &s->err)) != KNUT_OK)
                return fail(s, st);
            continue;
        }
        if (batch.length == 0) {
            knut_arrow_array_release(&batch);
            continue;
        }
        if ((st = check_batch(s, &batch, &s->err)) != KNUT_OK) {
            knut_arrow_array_release(&batch);
            return fail(s, st);
        }
        int64_t len = batch.length, rows = len;
        if (s->r->opts.limit > 0 && rows > s->r->opts.limit - s->emitted)
            rows = s->r->opts.limit - s->emitted;
        st = knut_graphar__batch_build(out, &batch, s->conv, s->map, s->plan.n_cols,
                                       s->step.base_id + s->chunk_rows, rows, &s->err);
        if (st != KNUT_OK)
            return fail(s, st);
        s->chunk_rows += len;
        s->emitted += rows;
        return 0;
    }
    return 0;
}

static int rs_get_schema(struct ArrowArrayStream *self, struct ArrowSchema *out)
{
    rstream *s = self->private_data;
    out->release = NULL;
    knut_status st = knut_arrow_schema_deep_copy(out, &s->schema, &s->err);
    return st == KNUT_OK ? 0 : errno_of(st);
}

static const char *rs_last_error(struct ArrowArrayStream *self)
{
    rstream *s = self->private_data;
    return s->err.message[0] ? s->err.message : NULL;
}

static void rstream_free(rstream *s)
{
    if (!s)
        return;
    close_chunk(s);
    knut_arrow_schema_release(&s->schema);
    for (size_t k = 0; s->step.paths && k < s->plan.n_srcs; k++)
        knut_buf_reset(&s->step.paths[k]);
    free(s->step.paths);
    forget_probes(s, 0);
    free(s->probes);
    free(s->probed);
    free(s->conv);
    free(s->map);
    free(s->check_col);
    free(s->check_src);
    free(s->id_col);
    knut_graphar__plan_reset(&s->plan);
    if (s->r) {
        atomic_store(&s->r->busy, 0);
        knut_graphar__reader_unref(s->r);
    }
    free(s);
}

static void rs_release(struct ArrowArrayStream *self)
{
    if (!self || !self->release)
        return;
    rstream_free(self->private_data);
    self->release = NULL;
}

knut_status knut_graphar_stream_status(struct ArrowArrayStream *stream, int code,
                                       knut_error *err)
{
    if (code == 0)
        return KNUT_OK;
    if (stream && stream->release == rs_release) {
        rstream *s = stream->private_data;
        if (s->err.code != KNUT_OK) {
            if (err)
                *err = s->err;
            return s->err.code;
        }
    }
    return knut_arrow_stream_error(stream, code, "reading", err);
}

knut_status knut_graphar__plan_check_files(const knut_graphar_reader *r,
                                          const knut_graphar__plan *p, knut_error *err)
{
    knut_graphar__cursor cur = {.pos = p->first};
    knut_graphar__step step = {0};
    knut_status st = KNUT_OK;
    int first = 1;
    if (!(step.paths = calloc(p->n_srcs ? p->n_srcs : 1, sizeof *step.paths)))
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    while (st == KNUT_OK && (st = knut_graphar__plan_next(r, p, &cur, &step, err)) == KNUT_OK) {
        for (size_t k = 0; st == KNUT_OK && k < p->n_srcs; k++) {
            const char *path = step.paths[k].data;
            struct stat sb;
            if (first && p->srcs[k].ft == KNUT_GRAPHAR_FILE_ORC)
                st = knut_error_set(err, KNUT_EUNSUPPORTED,
                                    "%s: ORC chunks are not supported (DuckDB has no ORC "
                                    "reader)",
                                    path);
            else if (stat(path, &sb) != 0)
                st = knut_error_set(err, errno == ENOENT ? KNUT_ENOTFOUND : KNUT_EIO,
                                    "%s: %s (%s)", path, strerror(errno), p->what);
            else if (!S_ISREG(sb.st_mode))
                st = knut_error_set(err, KNUT_EINVAL, "%s: not a regular file (%s)", path,
                                    p->what);
        }
        first = 0;
    }
    for (size_t k = 0; k < p->n_srcs; k++)
        knut_buf_reset(&step.paths[k]);
    free(step.paths);
    return st == KNUT_EOF ? KNUT_OK : st;
}

knut_status knut_graphar__stream_open(knut_graphar_reader *r, knut_graphar__plan *p,
                                      struct ArrowArrayStream *out, knut_error *err)
{
    out->release = NULL;
    int idle = 0;
    if (!atomic_compare_exchange_strong(&r->busy, &idle, 1)) {
        knut_graphar__plan_reset(p);
        return knut_error_set(err, KNUT_EAGAIN,
                              "%s: the reader already has an open stream (one at a time per "
                              "connection; release it first)",
                              p->what);
    }
    rstream *s = calloc(1, sizeof *s);
    if (!s) {
        knut_graphar__plan_reset(p);
        atomic_store(&r->busy, 0);
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    }
    s->plan = *p;
    memset(p, 0, sizeof *p);
    s->r = r;
    atomic_fetch_add(&r->refs, 1);
    s->cur.pos = s->plan.first;
    size_t nc = s->plan.n_cols, ns = s->plan.n_srcs;
    knut_status st = KNUT_OK;
    s->conv = calloc(nc ? nc : 1, sizeof *s->conv);
    s->map = calloc(nc ? nc : 1, sizeof *s->map);
    s->check_col = calloc(ns ? ns : 1, sizeof *s->check_col);
    s->check_src = calloc(ns ? ns : 1, sizeof *s->check_src);
    s->id_col = calloc(nc ? nc : 1, sizeof *s->id_col);
    s->step.paths = calloc(ns ? ns : 1, sizeof *s->step.paths);
    s->probes = calloc(ns ? ns : 1, sizeof *s->probes);
    s->probed = calloc(ns ? ns : 1, sizeof *s->probed);
    if (!s->conv || !s->map || !s->check_col || !s->check_src || !s->id_col || !s->step.paths ||
        !s->probes || !s->probed) {
        st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
        goto cleanup;
    }
    for (size_t k = 0; k < ns; k++)
        knut_buf_init(&s->step.paths[k], 0);
    for (size_t i = 0; st == KNUT_OK && i < nc; i++) {
        s->conv[i].name = s->plan.cols[i].name;
        st = knut_graphar__col_otype(&s->plan.cols[i], &s->conv[i].out, err);
    }
    if (st == KNUT_OK)
        st = knut_graphar__plan_schema(&s->plan, &s->schema, err);
    if (st == KNUT_OK)
        st = knut_graphar__plan_check_files(r, &s->plan, err);
    if (st == KNUT_OK) {
        st = open_chunk(s, err);
        if (st == KNUT_EOF) {
            s->done = 1;
            st = KNUT_OK;
        }
    }
cleanup:
    if (st != KNUT_OK) {
        rstream_free(s);
        return st;
    }
    out->get_schema = rs_get_schema;
    out->get_next = rs_get_next;
    out->get_last_error = rs_last_error;
    out->release = rs_release;
    out->private_data = s;
    return KNUT_OK;
}
