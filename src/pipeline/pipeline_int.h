/*
 * Internals of the pipeline part: the arena that owns every string and
 * array of the IR, the SQL lexer shared by the statement parser, and the
 * pieces of a run.
 */
#ifndef KNUT_PIPELINE_INT_H
#define KNUT_PIPELINE_INT_H

#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>

#include "knut/core.h"
#include "knut/arrow.h"
#include "knut/duck.h"
#include "knut/pipeline.h"

/* ---- ownership (ir.c) ---------------------------------------------------- */

typedef struct knut_pipeline__chunk knut_pipeline__chunk;

/* The public struct first, so a knut_pipeline * is one of these. */
typedef struct knut_pipeline__impl {
    knut_pipeline pub;
    knut_pipeline__chunk *chunks; /* every allocation of the IR */
    knut_conf *conf;              /* the spec's YAML tree: graph sink maps point into it */
    struct knut_graph_map **maps; /* graph sink maps (their steps are malloc'd) */
    size_t nmaps;
} knut_pipeline__impl;

/* Zeroed memory owned by p (freed with it); NULL on ENOMEM. */
void *knut_pipeline__alloc(knut_pipeline *p, size_t n);
/* A copy of s[0..len) (NUL-terminated) owned by p; NULL on ENOMEM. */
char *knut_pipeline__strndup(knut_pipeline *p, const char *s, size_t len);
char *knut_pipeline__strdup(knut_pipeline *p, const char *s);
/* Grows the array *arr of *n elements of size sz by one zeroed element,
 * returned (NULL on ENOMEM; *arr then unchanged). The array is owned by p. */
void *knut_pipeline__push(knut_pipeline *p, void **arr, size_t *n, size_t sz);
/* The flow named name, or NULL. */
knut_pipeline_flow *knut_pipeline__flow_find(knut_pipeline *p, const char *name);
/* The dataset named name (mutable), or NULL. */
knut_pipeline_dataset *knut_pipeline__dataset_get(knut_pipeline *p, const char *name);

/* ---- the SQL lexer (sql_lex.c) ------------------------------------------ */

typedef enum knut_pipeline__tok_kind {
    KNUT_PIPELINE__TOK_END,
    KNUT_PIPELINE__TOK_WORD,   /* identifier or keyword */
    KNUT_PIPELINE__TOK_QIDENT, /* "quoted identifier" */
    KNUT_PIPELINE__TOK_STRING, /* 'string', E'string', $tag$string$tag$ */
    KNUT_PIPELINE__TOK_NUMBER,
    KNUT_PIPELINE__TOK_PUNCT   /* one character: ( ) , ; . * ... */
} knut_pipeline__tok_kind;

typedef struct knut_pipeline__tok {
    knut_pipeline__tok_kind kind;
    size_t at, len; /* bytes in the text */
    int line, col;
} knut_pipeline__tok;

typedef struct knut_pipeline__lex {
    const char *text;
    size_t len, at;
    int line, col;
    const char *file;
} knut_pipeline__lex;

void knut_pipeline__lex_init(knut_pipeline__lex *lx, const char *text, size_t len,
                             const char *file);
/* Reads the next token, skipping white space and comments (-- and nested
 * block comments). KNUT_EPARSE at file:line:col of an unterminated
 * string, identifier or comment, or a NUL byte. */
knut_status knut_pipeline__lex_next(knut_pipeline__lex *lx, knut_pipeline__tok *t,
                                    knut_error *err);
/* 1 if t is the word w (ASCII case-insensitive). */
int knut_pipeline__tok_is(const knut_pipeline__lex *lx, const knut_pipeline__tok *t,
                          const char *w);
/* 1 if t is the one character c. */
int knut_pipeline__tok_punct(const knut_pipeline__lex *lx, const knut_pipeline__tok *t, char c);

/* ---- resolving (deps.c, dag.c) ------------------------------------------ */

/* Fills flow->reads from DuckDB's parse of flow->sql on conn. */
knut_status knut_pipeline__deps_infer(knut_pipeline *p, knut_pipeline_flow *f,
                                      knut_duck_conn *conn, knut_error *err);
/* Checks the graph and computes p->order. */
knut_status knut_pipeline__dag_check(knut_pipeline *p, knut_error *err);
/* The flow writing into the dataset named name (first one), or NULL. */
const knut_pipeline_flow *knut_pipeline__writer(const knut_pipeline *p, const char *name);

/* An error at a position of the spec ("file:line:col: ..."). */
knut_status knut_pipeline__error_at(knut_error *err, knut_status code, knut_pipeline_pos pos,
                                    const char *fmt, ...) KNUT_PRINTF(4, 5);

/* ---- the spec's configuration (settings.c) -------------------------------- */

/* Applies p's `configuration:` on conn: knut.* settings into
 * *files_per_update, the rest with SET. A bad setting is KNUT_EINVAL
 * naming its file:line:col. */
knut_status knut_pipeline__settings_apply(const knut_pipeline *p, knut_duck_conn *conn,
                                          int64_t *files_per_update, knut_error *err);

/* ---- SQL with bound text parameters (sqlutil.c) --------------------------- */

/* Runs sql with binds[0..n) as $1.. (NULL: SQL NULL); *changes may be NULL. */
knut_status knut_pipeline__exec(knut_duck_conn *conn, const char *sql, const char *const *binds,
                                size_t n, uint64_t *changes, knut_error *err);
/* Calls fn for each row: the batch view (a struct of columns) and the row. */
typedef knut_status (*knut_pipeline__row_fn)(void *ctx, const knut_arrow_view *v, int64_t row,
                                             knut_error *err);
knut_status knut_pipeline__query_each(knut_duck_conn *conn, const char *sql,
                                      const char *const *binds, size_t n,
                                      knut_pipeline__row_fn fn, void *ctx, knut_error *err);
/* The first column of the first row as int64 (NULL or no row: 0). */
knut_status knut_pipeline__scalar_i64(knut_duck_conn *conn, const char *sql,
                                      const char *const *binds, size_t n, int64_t *out,
                                      knut_error *err);
/* The first column of the first row as text appended to out (NULL or no
 * row: nothing; *found 0). */
knut_status knut_pipeline__scalar_str(knut_duck_conn *conn, const char *sql,
                                      const char *const *binds, size_t n, knut_buf *out,
                                      int *found, knut_error *err);
/* Text of column c of row r (NULL: NULL), len in *len. */
const char *knut_pipeline__col_str(const knut_arrow_view *v, int c, int64_t r, int64_t *len);
/* Column c of row r as int64 (NULL: 0). */
int64_t knut_pipeline__col_i64(const knut_arrow_view *v, int c, int64_t r);

/* ---- running (run.c, expect.c, events.c) --------------------------------- */

/* Appends to b the SELECT that stages a flow's rows with one BOOLEAN
 * column __knut_e<i> per expectation (TRUE or NULL: passed). query is the
 * flow's (rewritten) query; target_exists tells whether UNIQUE looks at
 * the existing rows of the target too. */
knut_status knut_pipeline__expect_stage_sql(knut_buf *b, const knut_pipeline_flow *f,
                                            const char *query, const char *schema,
                                            int target_exists);

/* The event sinks of a run, shared by its workers: the lock orders every
 * event (its seq and ts, the callback, the run log line and the
 * event-log row), so each is whole and they appear in one order. */
typedef struct knut_pipeline__events {
    pthread_mutex_t lock;
    knut_duck_conn *conn; /* the run's own connection: only the event-log rows */
    FILE *log;            /* <storage>/events.jsonl (NULL in a dry run) */
    int64_t seq;          /* events so far */
} knut_pipeline__events;

/* One run as a worker sees it: the storage, the worker's own connection
 * and the shared event sinks. With --parallel 1 the run's thread is the
 * only worker and uses the run's connection; else each worker thread has
 * a copy with its own connection (run_sched.c). */
struct pipeline_lineage; /* lineage.c */

typedef struct knut_pipeline__run {
    knut_pipeline *p;
    const knut_pipeline_run_options *opts;
    knut_duck_db *db;
    knut_duck_conn *conn;
    char *dir;          /* the storage folder */
    knut_pipeline__events *ev;
    int64_t run_id;
    int dry;
    /* per dataset: a full refresh still to do; only the flows into that
     * dataset touch its byte, and they never run at the same time */
    unsigned char *reset;
    int64_t files_per_update; /* KNUT_PIPELINE_FILES_PER_UPDATE or the spec's */
    int more;             /* the last update left files for another one */
    /* a temporary view's flow: the CREATE TEMP VIEW it ran (malloc'd; the
     * scheduler takes it to create the view on the other workers' connections) */
    char *view_sql;
    int conflict; /* the last flow failed on a DuckDB transaction conflict */
    struct pipeline_lineage *lineage; /* OpenLineage (lineage.c); NULL: none */
} knut_pipeline__run;

/* ---- Airflow asset events (assets.c) --------------------------------------- */

/* The optional string key of the spec's map n (section names it in the
 * error: a present key must be a non-empty string), copied into p. */
knut_status knut_pipeline__spec_str(knut_pipeline *p, const knut_conf *n, const char *section,
                                    const char *key, const char **out, knut_error *err);

struct knut_net_airflow;
/* The spec's `airflow:` map into p->airflow. */
knut_status knut_pipeline__airflow_parse(knut_pipeline *p, const knut_conf *n, knut_error *err);
/* The sender for p's `airflow:` (*out NULL without one); fails only on
 * configuration (no password), before any flow runs. */
knut_status knut_pipeline__assets_open(const knut_pipeline *p, struct knut_net_airflow **out,
                                       knut_error *err);
/* Queues one event per dataset that completed in run r; never fails. */
void knut_pipeline__assets_run(const knut_pipeline__run *r, struct knut_net_airflow *sender);

/* ---- OpenLineage run events (lineage.c; docs/lineage.md) -------------------- */

/* The spec's `lineage:` map into p->lineage. */
knut_status knut_pipeline__lineage_parse(knut_pipeline *p, const knut_conf *n, knut_error *err);
/* The run's lineage state from p->lineage, else OPENLINEAGE_URL (*out
 * NULL without either); fails only on configuration (no API key). */
knut_status knut_pipeline__lineage_open(const knut_pipeline *p, struct pipeline_lineage **out,
                                        knut_error *err);
/* One run event of r (knut_pipeline__event, under its lock): the update's
 * RUNNING and end are the pipeline run's START and COMPLETE/FAIL, each
 * flow update's RUNNING and end a child run's. Never fails. */
void knut_pipeline__lineage_event(knut_pipeline__run *r, const char *type,
                                  const knut_pipeline_flow *f, const char *status,
                                  const char *message, const char *details);
/* Drains (bounded), frees. l may be NULL. */
void knut_pipeline__lineage_close(struct pipeline_lineage *l);
/* Queues the asset event of dataset ds of p (none for a temporary view,
 * an unknown name or a NULL sender); rows < 0: unknown (null in `extra`);
 * source "knut-native" or "spark-sdp". Never fails. */
void knut_pipeline__asset_emit(const knut_pipeline *p, struct knut_net_airflow *sender,
                               const char *ds, int64_t rows, int64_t run_id, const char *source);

/* Status of a flow in events and in knut_pipeline__flow_run's result. */
typedef enum knut_pipeline__state {
    KNUT_PIPELINE__COMPLETED,
    KNUT_PIPELINE__FAILED,
    KNUT_PIPELINE__SKIPPED,
    KNUT_PIPELINE__IDLE
} knut_pipeline__state;

/* ---- a flow's inputs (run_input.c) ------------------------------------- */

typedef struct knut_pipeline__strvec {
    char **v;
    size_t n, cap;
} knut_pipeline__strvec;

/* Appends a copy of x[0..len); -1 on ENOMEM. */
int knut_pipeline__strvec_push(knut_pipeline__strvec *s, const char *x, size_t len);
void knut_pipeline__strvec_free(knut_pipeline__strvec *s);

/* The files of source s not in flow f's checkpoint (every file when
 * ignore_checkpoint), sorted, at most r->files_per_update of them (r->more
 * set when there may be more): *files as DuckDB reads them, *rel relative
 * to the spec folder (as the checkpoint keeps them). */
knut_status knut_pipeline__new_files(knut_pipeline__run *r, const knut_pipeline_flow *f,
                                     const knut_pipeline_source *s, int ignore_checkpoint,
                                     knut_pipeline__strvec *files, knut_pipeline__strvec *rel,
                                     knut_error *err);
/* Appends f's SQL with each source literal replaced: by the rooted
 * pattern, or (per_source given) by the list of that source's files. */
void knut_pipeline__rewrite(knut_buf *b, const knut_pipeline *p, const knut_pipeline_flow *f,
                            knut_pipeline__strvec *per_source);

/* A STREAM() read of a streaming table: rows with lo < rowid <= hi. */
typedef struct knut_pipeline__stream {
    const char *name;
    int64_t lo, hi;
} knut_pipeline__stream;

knut_status knut_pipeline__stream_bounds(knut_pipeline__run *r, const knut_pipeline_flow *f,
                                         int ignore_offset, knut_pipeline__stream *sr,
                                         knut_error *err);
/* Temporary views shadowing each streamed table with its new rows. */
knut_status knut_pipeline__stream_views(knut_pipeline__run *r, const knut_pipeline__stream *sr,
                                        size_t n, knut_error *err);
void knut_pipeline__stream_views_drop(knut_pipeline__run *r, const knut_pipeline__stream *sr,
                                      size_t n);

/* "schema"."name[suffix]" */
void knut_pipeline__qualified(knut_buf *b, const char *schema, const char *name,
                              const char *suffix);
/* *out 1 if the table name exists in the run's schema. */
knut_status knut_pipeline__table_exists(knut_pipeline__run *r, const char *name, int *out,
                                        knut_error *err);
/* Runs sql (then clears it) with text binds. */
knut_status knut_pipeline__step(knut_pipeline__run *r, knut_buf *sql, const char *const *binds,
                                size_t n, knut_error *err);

/* Sets up a connection to the run's database as the run's own: the spec's
 * configuration and, when it exists, the pipeline schema as the default. */
knut_status knut_pipeline__conn_setup(knut_pipeline__run *r, knut_duck_conn *conn,
                                      knut_error *err);
/* Runs the flows of r (storage open, QUEUED events sent) on up to
 * `parallel` workers: a flow starts once the flows it reads from ended and
 * the earlier flows writing its tables ended; one whose upstream failed or
 * was skipped is SKIPPED. res gets the counts, first the first failed
 * flow's error; a failure of the storage or the event log is returned. */
knut_status knut_pipeline__schedule(knut_pipeline__run *r, int parallel,
                                    knut_pipeline_run_result *res, knut_error *first,
                                    knut_error *err);
/* One flow's updates and their events (PLANNING, RUNNING, the outcome),
 * skipped: only the SKIPPED event. */
knut_status knut_pipeline__flow_updates(knut_pipeline__run *r, knut_pipeline_flow *f, int skip,
                                        knut_pipeline__state *state, knut_error *ferr,
                                        knut_error *err);

/* Emits one event: to the callback, the run log and _knut.event_log.
 * details is a JSON object text or NULL. Failures to log are returned. */
knut_status knut_pipeline__event(knut_pipeline__run *r, const char *type, const char *level,
                                 const knut_pipeline_flow *f, const char *status,
                                 const char *message, const char *details, knut_error *err);
/* Runs one flow's update (one transaction); *state gets the outcome and
 * details (a JSON object) what it did. A failure of the flow itself is
 * KNUT_OK with state FAILED and the reason in ferr; a failure of the
 * storage is returned. */
knut_status knut_pipeline__flow_run(knut_pipeline__run *r, knut_pipeline_flow *f,
                                    knut_pipeline__state *state, knut_buf *details,
                                    knut_error *ferr, knut_error *err);
/* A full refresh of a streaming table (its target, quarantine table, CDC
 * change log, and the checkpoints of the flows into it), inside the
 * update of its first flow. */
knut_status knut_pipeline__reset_target(knut_pipeline__run *r, const knut_pipeline_dataset *ds,
                                        knut_buf *sql, knut_error *err);
/* Records the stream offsets of f's update (in its transaction). */
knut_status knut_pipeline__offsets_save(knut_pipeline__run *r, const knut_pipeline_flow *f,
                                        const knut_pipeline__stream *sr, size_t nsr,
                                        knut_error *err);
/* Appends ,"streams_read":{...} (nothing when nsr is 0). */
void knut_pipeline__streams_json(knut_buf *d, const char *key, const knut_pipeline__stream *sr,
                                 size_t nsr);

/* The append update of a streaming table or the recompute of a view,
 * inside the open transaction (run_flow.c): query's rows staged with the
 * expectations, written, the files and offsets recorded. */
knut_status knut_pipeline__append_update(knut_pipeline__run *r, knut_pipeline_flow *f,
                                         const knut_pipeline_dataset *ds, size_t dsi,
                                         const char *query, knut_pipeline__strvec *files,
                                         const knut_pipeline__stream *sr, size_t nsr,
                                         knut_pipeline__state *state, knut_buf *details,
                                         knut_error *ferr);

/* ---- event-time streaming (stream_plan.c, run_stream.c) ------------------ */

/* At resolve: f's WATERMARK / WINDOW / OUTPUT MODE / TRIGGER agree. */
knut_status knut_pipeline__stream_check(const knut_pipeline *p, const knut_pipeline_flow *f,
                                        knut_error *err);
/* *pending 1 when f's watermark moved past what it last emitted (append
 * mode with a window): a no-data batch is due. */
knut_status knut_pipeline__stream_pending(knut_pipeline__run *r, const knut_pipeline_flow *f,
                                          int *pending, knut_error *err);
/* One micro-batch of a flow with a WATERMARK inside the open transaction
 * (fresh 0: a no-data batch): late rows dropped, window state kept, the
 * windows the output mode emits written, the watermark saved. */
knut_status knut_pipeline__stream_update(knut_pipeline__run *r, knut_pipeline_flow *f,
                                         const knut_pipeline_dataset *ds, size_t dsi, int fresh,
                                         knut_pipeline__strvec *per, knut_pipeline__strvec *files,
                                         const knut_pipeline__stream *sr, size_t nsr,
                                         knut_pipeline__state *state, knut_buf *details,
                                         knut_error *ferr);

/* ---- CDC (cdc_sql.c, run_cdc.c) ------------------------------------------ */

/* The columns of a CDC target: keys, the other columns (payload, in
 * target order) and the payload columns whose changes open a new SCD2
 * version. */
typedef struct knut_pipeline__cdc_cols {
    knut_pipeline__strvec keys, payload, tracked;
} knut_pipeline__cdc_cols;

/* ", a, b" (lead) or "a, b": the names quoted, each after pfx. */
void knut_pipeline__cdc_names(knut_buf *b, const knut_pipeline__strvec *v, const char *pfx,
                              int lead);
/* Appends the query giving the target rows of the keys in table keys
 * (NULL: every key) from every change in the change log table log (both
 * already quoted); truncates: the log holds truncates (SCD1). */
void knut_pipeline__cdc_apply_sql(knut_buf *b, const knut_pipeline_cdc *cdc,
                                  const knut_pipeline__cdc_cols *c, const char *log,
                                  const char *keys, int truncates);
/* The first apply (no change log yet), one window pass over the staged
 * changes in __knut_cdc_batch, each change flagged __knut_conflict (two
 * different upserts of a key at one value, as step 4 refuses them):
 * SCD1 without IGNORE NULL UPDATES into temp table dest, every change
 * with __knut_dup (a repeat) and __knut_last (its key's latest, the one
 * the compacted log keeps); else into the log dest, each distinct change
 * once, with __knut_head (cdc_first_heads) for cdc_first_target_sql. */
void knut_pipeline__cdc_first_sql(knut_buf *b, const knut_pipeline_cdc *cdc,
                                  const knut_pipeline__cdc_cols *c, const char *dest);
/* 1 when the first apply's log carries __knut_head: SCD2 with every
 * column tracked and no IGNORE NULL UPDATES. */
int knut_pipeline__cdc_first_heads(const knut_pipeline_cdc *cdc, const knut_pipeline__cdc_cols *c);
/* The SCD2 target rows from such a log (as knut_pipeline__cdc_apply_sql). */
void knut_pipeline__cdc_first_target_sql(knut_buf *b, const knut_pipeline__cdc_cols *c,
                                         const char *log);
/* One update of a CDC flow inside the open transaction: the new changes
 * (sr: the source's new rows; nsr 0: all of it) into the target's change
 * log, and the target rows of the keys they touch recomputed. A refused
 * change (a NULL key or sequence, two different changes of one key at one
 * sequence value) sets *state FAILED with ferr naming it. */
knut_status knut_pipeline__cdc_update(knut_pipeline__run *r, knut_pipeline_flow *f,
                                      const knut_pipeline_dataset *ds, size_t dsi,
                                      const knut_pipeline__stream *sr, size_t nsr,
                                      knut_pipeline__state *state, knut_buf *details,
                                      knut_error *ferr);
/* The target's columns of CDC flow f from its source's columns src
 * (KNUT_EINVAL naming the flow and the column: a reserved name, a name
 * not in the source, a key COLUMNS leaves out, a TRACK HISTORY name that
 * is no payload column). */
knut_status knut_pipeline__cdc_plan_columns(const knut_pipeline_flow *f,
                                            const knut_pipeline__strvec *src,
                                            knut_pipeline__cdc_cols *c, knut_error *err);
/* At resolve: the CDC flows into one target agree (keys, SCD type), no
 * other kind of flow writes it, it has no expectations, and TRUNCATE is
 * SCD1 only. */
knut_status knut_pipeline__cdc_check(const knut_pipeline *p, const knut_pipeline_flow *f,
                                     knut_error *err);

/* The first row a query finds, as a refusal: column 0 the source row,
 * column 1 a text naming it (the key). */
typedef struct knut_pipeline__refusal {
    int found;
    int64_t row;
    knut_buf key;
} knut_pipeline__refusal;

/* Runs sql (then clears it) into *x. */
knut_status knut_pipeline__cdc_find_refusal(knut_pipeline__run *r, knut_buf *sql,
                                           knut_pipeline__refusal *x, knut_error *err);
/* {'k': pfx"k", ...}::VARCHAR: a key as text for messages. */
void knut_pipeline__cdc_key_text(knut_buf *b, const knut_pipeline__cdc_cols *c, const char *pfx);
/* SELECT <row number> AS __knut_rowid, * FROM the CDC source (all of it). */
void knut_pipeline__cdc_source_sql(knut_buf *b, const knut_pipeline *p,
                                   const knut_pipeline_cdc *cdc);
/* A knut_pipeline__row_fn: column 0 of each row (text) pushed on the
 * knut_pipeline__strvec ctx. */
knut_status knut_pipeline__collect_names(void *ctx, const knut_arrow_view *v, int64_t row,
                                        knut_error *err);
/* One update of an AUTO CDC FROM SNAPSHOT flow inside the open
 * transaction (cdc_snapshot.c): the source read whole as the snapshot at
 * the run's execution time and diffed with the target. */
knut_status knut_pipeline__cdc_snapshot_update(knut_pipeline__run *r, knut_pipeline_flow *f,
                                               const knut_pipeline_dataset *ds, size_t dsi,
                                               knut_pipeline__state *state, knut_buf *details,
                                               knut_error *ferr);

/* ---- graph sinks (sink_graph_spec.c, sink_graph.c) ---------------------- */

/* The spec's `sinks:` map: a KNUT_PIPELINE_SINK dataset per entry. */
knut_status knut_pipeline__sinks_parse(knut_pipeline *p, const knut_conf *sinks,
                                       knut_error *err);
/* One update of flow f into graph sink ds: the rows of query (new stream
 * rows and files only) staged, mapped and applied to the graph, then the
 * checkpoints recorded (docs/pipelines.md "Graph sinks"). Failures of the
 * flow: KNUT_OK with ferr set and *state FAILED is the caller's; returns
 * the flow's error (the caller names the flow). */
knut_status knut_pipeline__sink_update(knut_pipeline__run *r, knut_pipeline_flow *f,
                                       const knut_pipeline_dataset *ds, const char *query,
                                       const knut_pipeline__strvec *files,
                                       knut_pipeline__stream *sr, size_t nsr,
                                       knut_buf *details, knut_error *err);

#endif
