/*
 * `knut pipeline show`: the resolved DAG as text (one line per flow in
 * run order), as one JSON object, or as a Graphviz digraph (datasets are
 * nodes, each flow's reads are edges into its target).
 */
#include <string.h>

#include "pipeline_int.h"

static void json_pos(knut_buf *b, knut_pipeline_pos pos)
{
    knut_buf_put_json_member(b, "file", pos.file);
    knut_buf_printf(b, ",\"line\":%d,\"col\":%d", pos.line, pos.col);
}

static void show_json(const knut_pipeline *p, knut_buf *b)
{
    knut_buf_putc(b, '{');
    knut_buf_put_json_member(b, "name", p->name);
    knut_buf_putc(b, ',');
    knut_buf_put_json_member(b, "storage", p->storage);
    knut_buf_putc(b, ',');
    knut_buf_put_json_member(b, "catalog", p->catalog);
    knut_buf_putc(b, ',');
    knut_buf_put_json_member(b, "schema", p->schema);
    knut_buf_puts(b, ",\"datasets\":[");
    for (size_t i = 0; i < p->ndatasets; i++) {
        const knut_pipeline_dataset *d = &p->datasets[i];
        knut_buf_puts(b, i ? ",{" : "{");
        knut_buf_put_json_member(b, "name", d->name);
        knut_buf_putc(b, ',');
        knut_buf_put_json_member(b, "kind", knut_pipeline_dataset_kind_name(d->kind));
        knut_buf_putc(b, ',');
        json_pos(b, d->pos);
        knut_buf_puts(b, ",\"expectations\":[");
        for (size_t k = 0; k < d->nexpectations; k++) {
            const knut_pipeline_expectation *e = &d->expectations[k];
            knut_buf_puts(b, k ? ",{" : "{");
            knut_buf_put_json_member(b, "name", e->name);
            knut_buf_putc(b, ',');
            knut_buf_put_json_member(b, "action", knut_pipeline_action_name(e->action));
            knut_buf_putc(b, ',');
            if (e->constraint) {
                knut_buf_put_json_member(b, "constraint", e->constraint);
            } else {
                knut_buf_puts(b, "\"unique\":[");
                for (size_t u = 0; u < e->nunique; u++) {
                    if (u)
                        knut_buf_putc(b, ',');
                    knut_buf_put_json_str(b, e->unique_cols[u], strlen(e->unique_cols[u]));
                }
                knut_buf_putc(b, ']');
            }
            knut_buf_putc(b, '}');
        }
        knut_buf_puts(b, "]}");
    }
    knut_buf_puts(b, "],\"flows\":[");
    for (size_t i = 0; i < p->nflows; i++) {
        const knut_pipeline_flow *f = &p->flows[p->order[i]];
        knut_buf_puts(b, i ? ",{" : "{");
        knut_buf_put_json_member(b, "name", f->name);
        knut_buf_putc(b, ',');
        knut_buf_put_json_member(b, "target", f->target);
        knut_buf_putc(b, ',');
        knut_buf_put_json_member(b, "kind", knut_pipeline_flow_kind_name(f->kind));
        knut_buf_putc(b, ',');
        json_pos(b, f->pos);
        knut_buf_puts(b, ",\"reads\":[");
        for (size_t k = 0; k < f->nreads; k++) {
            knut_buf_puts(b, k ? ",{" : "{");
            knut_buf_put_json_member(b, "name", f->reads[k].name);
            knut_buf_printf(b, ",\"internal\":%s,\"streaming\":%s}",
                            f->reads[k].internal ? "true" : "false",
                            f->reads[k].streaming ? "true" : "false");
        }
        knut_buf_puts(b, "],\"sources\":[");
        for (size_t k = 0; k < f->nsources; k++) {
            knut_buf_puts(b, k ? ",{" : "{");
            knut_buf_put_json_member(b, "function", f->sources[k].function);
            knut_buf_putc(b, ',');
            knut_buf_put_json_member(b, "pattern", f->sources[k].pattern);
            knut_buf_putc(b, '}');
        }
        knut_buf_puts(b, "]}");
    }
    knut_buf_puts(b, "]}\n");
}

static void show_text(const knut_pipeline *p, knut_buf *b)
{
    knut_buf_printf(b, "pipeline %s: %zu datasets, %zu flows (storage %s, catalog %s, schema %s)\n",
                    p->name, p->ndatasets, p->nflows, p->storage, p->catalog, p->schema);
    for (size_t i = 0; i < p->nflows; i++) {
        const knut_pipeline_flow *f = &p->flows[p->order[i]];
        const knut_pipeline_dataset *d = knut_pipeline_dataset_find(p, f->target);
        knut_buf_printf(b, "%zu. %s (%s) -> %s %s", i + 1, f->name,
                        knut_pipeline_flow_kind_name(f->kind),
                        knut_pipeline_dataset_kind_name(d->kind), d->name);
        for (size_t k = 0; k < f->nreads; k++)
            knut_buf_printf(b, "%s%s%s%s", k ? ", " : "  reads ",
                            f->reads[k].streaming ? "STREAM " : "", f->reads[k].name,
                            f->reads[k].internal ? "" : " (external)");
        for (size_t k = 0; k < f->nsources; k++)
            knut_buf_printf(b, "%s%s('%s')", k || f->nreads ? ", " : "  reads ",
                            f->sources[k].function, f->sources[k].pattern);
        for (size_t k = 0; k < f->nexpectations; k++)
            knut_buf_printf(b, "%s%s:%s", k ? ", " : "  expects ", f->expectations[k].name,
                            knut_pipeline_action_name(f->expectations[k].action));
        knut_buf_putc(b, '\n');
    }
}

/* A DOT identifier: always quoted, '"' and '\' escaped. */
static void dot_id(knut_buf *b, const char *s)
{
    knut_buf_putc(b, '"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            knut_buf_putc(b, '\\');
        knut_buf_putc(b, *s == '\n' ? ' ' : *s);
    }
    knut_buf_putc(b, '"');
}

static void show_dot(const knut_pipeline *p, knut_buf *b)
{
    knut_buf_puts(b, "digraph ");
    dot_id(b, p->name);
    knut_buf_puts(b, " {\n  rankdir=LR;\n");
    for (size_t i = 0; i < p->ndatasets; i++) {
        const knut_pipeline_dataset *d = &p->datasets[i];
        knut_buf_puts(b, "  ");
        dot_id(b, d->name);
        knut_buf_printf(b, " [shape=%s, label=",
                        d->kind == KNUT_PIPELINE_STREAMING_TABLE    ? "box"
                        : d->kind == KNUT_PIPELINE_MATERIALIZED_VIEW ? "box3d"
                                                                      : "ellipse");
        dot_id(b, d->name);
        knut_buf_printf(b, ", xlabel=\"%s\"];\n", knut_pipeline_dataset_kind_name(d->kind));
    }
    for (size_t i = 0; i < p->nflows; i++) {
        const knut_pipeline_flow *f = &p->flows[p->order[i]];
        for (size_t k = 0; k < f->nreads; k++) {
            knut_buf_puts(b, "  ");
            dot_id(b, f->reads[k].name);
            knut_buf_puts(b, " -> ");
            dot_id(b, f->target);
            knut_buf_puts(b, " [label=");
            dot_id(b, f->name);
            knut_buf_puts(b, f->reads[k].streaming ? ", style=dashed];\n" : "];\n");
        }
        for (size_t k = 0; k < f->nsources; k++) {
            knut_buf_puts(b, "  ");
            dot_id(b, f->sources[k].pattern);
            knut_buf_puts(b, " [shape=folder];\n  ");
            dot_id(b, f->sources[k].pattern);
            knut_buf_puts(b, " -> ");
            dot_id(b, f->target);
            knut_buf_puts(b, " [label=");
            dot_id(b, f->name);
            knut_buf_puts(b, ", style=dashed];\n");
        }
    }
    knut_buf_puts(b, "}\n");
}

knut_status knut_pipeline_show(const knut_pipeline *p, knut_pipeline_format fmt, knut_buf *b,
                               knut_error *err)
{
    KNUT_ASSERT_ARG(err, p != NULL && b != NULL);
    if (!p->resolved)
        return knut_error_set(err, KNUT_EINVAL, "pipeline %s: not resolved", p->name);
    if (fmt == KNUT_PIPELINE_FORMAT_JSON)
        show_json(p, b);
    else if (fmt == KNUT_PIPELINE_FORMAT_DOT)
        show_dot(p, b);
    else
        show_text(p, b);
    return knut_buf_check(b, err);
}
