/*
 * Dependency inference: each flow's query goes through DuckDB's own
 * parser (json_serialize_sql), and the tables it reads are the
 * BASE_TABLE nodes of that tree, minus the names of its CTEs. No regex
 * ever guesses at SQL. DuckDB's query_location offsets point into the
 * flow's SQL, which the statement parser kept byte for byte, so a bad
 * reference is named at its own file:line:col.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pipeline_int.h"

/* The position of byte off of the flow's SQL in its file. */
static knut_pipeline_pos sql_at(const knut_pipeline_flow *f, size_t off)
{
    knut_pipeline_pos pos = f->sql_pos;
    size_t len = strlen(f->sql);
    if (off > len)
        return pos;
    for (size_t i = 0; i < off; i++) {
        if (f->sql[i] == '\n') {
            pos.line++;
            pos.col = 1;
        } else {
            pos.col++;
        }
    }
    return pos;
}

typedef struct walk_ctx {
    knut_pipeline *p;
    knut_pipeline_flow *f;
    json_t *ctes;   /* array of CTE names */
    json_t *tables; /* array of BASE_TABLE objects */
} walk_ctx;

static void collect(walk_ctx *c, json_t *j, int depth)
{
    if (depth > 256)
        return; /* DuckDB's own nesting limit is far below */
    if (json_is_array(j)) {
        size_t i;
        json_t *v;
        json_array_foreach(j, i, v) collect(c, v, depth + 1);
        return;
    }
    if (!json_is_object(j))
        return;
    json_t *type = json_object_get(j, "type");
    if (json_is_string(type) && strcmp(json_string_value(type), "BASE_TABLE") == 0 &&
        json_is_string(json_object_get(j, "table_name")))
        json_array_append(c->tables, j);
    json_t *cte = json_object_get(j, "cte_map");
    json_t *map = json_object_get(cte, "map");
    if (json_is_array(map)) {
        size_t i;
        json_t *v;
        json_array_foreach(map, i, v)
        {
            json_t *key = json_object_get(v, "key");
            if (json_is_string(key))
                json_array_append(c->ctes, key);
        }
    }
    const char *k;
    json_t *v;
    json_object_foreach(j, k, v) collect(c, v, depth + 1);
}

static int in_list(json_t *arr, const char *name)
{
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v) if (strcasecmp(json_string_value(v), name) == 0) return 1;
    return 0;
}

static int streamed(const knut_pipeline_flow *f, const char *name)
{
    for (size_t i = 0; i < f->nstream_names; i++)
        if (strcmp(f->stream_names[i], name) == 0)
            return 1;
    return 0;
}

static const char *jstr(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : "";
}

static knut_status add_read(knut_pipeline *p, knut_pipeline_flow *f, const char *name,
                            int internal, int streaming, knut_pipeline_pos pos, knut_error *err)
{
    for (size_t i = 0; i < f->nreads; i++)
        if (strcmp(f->reads[i].name, name) == 0) {
            f->reads[i].streaming |= streaming;
            return KNUT_OK;
        }
    knut_pipeline_read *r = knut_pipeline__push(p, (void **)&f->reads, &f->nreads, sizeof *r);
    if (!r || !(r->name = knut_pipeline__strdup(p, name)))
        return knut_error_set(err, KNUT_ENOMEM, "pipeline: out of memory");
    r->internal = internal;
    r->streaming = streaming;
    r->pos = pos;
    return KNUT_OK;
}

/* DuckDB's parse of sql as JSON, or its parser error at base/off. */
static knut_status serialize(knut_duck_conn *conn, const char *sql, json_t **out,
                             const knut_pipeline_flow *f, const char *what,
                             knut_pipeline_pos base, knut_error *err)
{
    knut_buf text = KNUT_BUF_INIT;
    int found = 0;
    const char *binds[] = {sql};
    *out = NULL;
    knut_status st = knut_pipeline__scalar_str(conn,
                                               "SELECT json_serialize_sql($1::VARCHAR)::VARCHAR",
                                               binds, 1,
                                               &text, &found, err);
    if (st != KNUT_OK)
        goto done;
    json_error_t jerr;
    json_t *j = found ? json_loadb(text.data, text.len, JSON_DECODE_INT_AS_REAL, &jerr) : NULL;
    if (!j) {
        st = knut_pipeline__error_at(err, KNUT_ERROR, base,
                                     "flow '%s'%s: DuckDB's parse tree is not JSON", f->name,
                                     what);
        goto done;
    }
    if (json_is_true(json_object_get(j, "error"))) {
        const char *msg = jstr(j, "error_message");
        long off = strtol(jstr(j, "position"), NULL, 10);
        knut_pipeline_pos pos = base;
        if (f->sql == sql && off > 0)
            pos = sql_at(f, (size_t)off);
        st = knut_pipeline__error_at(err, KNUT_EPARSE, pos, "flow '%s'%s: DuckDB cannot parse "
                                     "it: %s", f->name, what, msg);
        json_decref(j);
        goto done;
    }
    *out = j;
done:
    knut_buf_reset(&text);
    return st;
}

knut_status knut_pipeline__deps_infer(knut_pipeline *p, knut_pipeline_flow *f,
                                      knut_duck_conn *conn, knut_error *err)
{
    knut_status st = KNUT_OK;
    json_t *tree = NULL;
    walk_ctx c = {p, f, json_array(), json_array()};
    if (!c.ctes || !c.tables) {
        st = knut_error_set(err, KNUT_ENOMEM, "pipeline: out of memory");
        goto done;
    }
    /* The expectations of the target are SQL too: parse them first. */
    const knut_pipeline_dataset *ds = knut_pipeline_dataset_find(p, f->target);
    for (size_t i = 0; ds && i < ds->nexpectations; i++) {
        const knut_pipeline_expectation *e = &ds->expectations[i];
        if (!e->constraint)
            continue;
        knut_buf q = KNUT_BUF_INIT, what = KNUT_BUF_INIT;
        knut_buf_printf(&q, "SELECT (%s)", e->constraint);
        knut_buf_printf(&what, ", expectation '%s'", e->name);
        if ((st = knut_buf_check(&q, err)) == KNUT_OK &&
            (st = knut_buf_check(&what, err)) == KNUT_OK) {
            json_t *j = NULL;
            st = serialize(conn, q.data, &j, f, what.data, e->pos, err);
            json_decref(j);
        }
        knut_buf_reset(&q);
        knut_buf_reset(&what);
        if (st != KNUT_OK)
            goto done;
    }
    if (f->kind == KNUT_PIPELINE_FLOW_CDC) {
        const char *src = f->cdc->source;
        st = add_read(p, f, src, knut_pipeline_dataset_find(p, src) != NULL, f->cdc->source_stream,
                      f->pos, err);
        goto done;
    }
    if ((st = serialize(conn, f->sql, &tree, f, "", f->sql_pos, err)) != KNUT_OK)
        goto done;
    collect(&c, tree, 0);
    size_t i;
    json_t *t;
    json_array_foreach(c.tables, i, t)
    {
        const char *catalog = jstr(t, "catalog_name"), *schema = jstr(t, "schema_name");
        const char *name = jstr(t, "table_name");
        /* Offsets come as reals (DuckDB writes 2^64-1 for "none", which
         * no JSON integer holds). */
        double loc = json_number_value(json_object_get(t, "query_location"));
        knut_pipeline_pos pos = loc >= 0 && loc < (double)strlen(f->sql) ? sql_at(f, (size_t)loc)
                                                                          : f->sql_pos;
        int unqualified = !*catalog && !*schema;
        if (unqualified && in_list(c.ctes, name))
            continue;
        int ours = (!*catalog || strcmp(catalog, p->catalog) == 0) &&
                   (!*schema || strcmp(schema, p->schema) == 0);
        int internal = ours && knut_pipeline_dataset_find(p, name) != NULL;
        if (unqualified && !internal) {
            st = knut_pipeline__error_at(err, KNUT_ENOTFOUND, pos,
                                         "flow '%s' reads '%s', which is no dataset of this "
                                         "pipeline (an external table is named with its schema)",
                                         f->name, name);
            goto done;
        }
        if ((st = add_read(p, f, name, internal, streamed(f, name), pos, err)) != KNUT_OK)
            goto done;
    }
done:
    json_decref(tree);
    json_decref(c.ctes);
    json_decref(c.tables);
    return st;
}
