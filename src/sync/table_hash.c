/*
 * The hash of a table's config: what decides how its files are read and
 * mapped. Each ledger entry records it, so a file that failed under one
 * config is retried once the table's config changes (a fixed `sql:` step or
 * mapping), and only then. FNV-1a 64 over every field, each ended by a
 * separator no YAML scalar holds, so ("ab","c") and ("a","bc") differ.
 */
#include <stdio.h>
#include <string.h>

#include "sync_int.h"

typedef struct fnv {
    uint64_t h;
} fnv;

static void put(fnv *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)(s ? s : "\x01"); *p; p++)
        f->h = (f->h ^ *p) * 1099511628211ULL;
    f->h = (f->h ^ 0xff) * 1099511628211ULL;
}

static void put_int(fnv *f, long long v)
{
    char b[32];
    snprintf(b, sizeof b, "%lld", v);
    put(f, b);
}

static void put_props(fnv *f, const knut_sync_prop *p, size_t n)
{
    put_int(f, (long long)n);
    for (size_t i = 0; i < n; i++) {
        put(f, p[i].prop);
        put(f, p[i].column);
    }
}

/* The rename map reaches the hash through the names it produced (props
 * carry the renamed names); with all_props the map itself decides them. */
static void put_rename(fnv *f, const void *rename)
{
    const knut_conf *m = rename;
    for (size_t i = 0; m && i < knut_conf_len(m); i++) {
        put(f, knut_conf_key_at(m, i));
        put(f, knut_conf_str(knut_conf_at(m, i)));
    }
}

void knut_sync__table_hash(const knut_sync_table *t, char out[17])
{
    fnv f = {1469598103934665603ULL};
    put(&f, t->path);
    if (t->iceberg) /* the table and catalog named (a table without keeps its old hash) */
        put(&f, t->iceberg->key), put(&f, t->iceberg->catalog_name);
    if (t->spark) /* the server and the table named */
        put(&f, t->spark->key), put(&f, t->spark->connect);
    put_int(&f, t->format);
    put_int(&f, t->mode);
    put(&f, t->sql);
    put(&f, t->sequence_by);
    if (t->n_columns) { /* declared types (a table without keeps its old hash) */
        put(&f, "c");
        for (size_t i = 0; i < t->n_columns; i++) {
            put(&f, t->columns[i].name);
            put(&f, t->columns[i].type);
        }
    }
    for (size_t i = 0; i < t->n_vertices; i++) {
        const knut_sync_vertex_step *v = &t->vertices[i];
        put(&f, "v");
        for (size_t k = 0; k < v->n_labels; k++)
            put(&f, v->labels[k]);
        put_props(&f, v->keys, v->n_keys);
        put_props(&f, v->props, v->n_props);
        put_int(&f, v->all_props);
        put_rename(&f, v->rename);
    }
    for (size_t i = 0; i < t->n_edges; i++) {
        const knut_sync_edge_step *e = &t->edges[i];
        put(&f, "e");
        put(&f, e->type);
        put(&f, e->from.label);
        put_props(&f, e->from.keys, e->from.n_keys);
        put(&f, e->to.label);
        put_props(&f, e->to.keys, e->to.n_keys);
        put_props(&f, e->props, e->n_props);
        put_int(&f, e->all_props);
        put_rename(&f, e->rename);
    }
    for (size_t i = 0; i < t->n_fk_edges; i++) {
        const knut_sync_fk_step *k = &t->fk_edges[i];
        put(&f, "f");
        put(&f, k->type);
        put(&f, k->column);
        put(&f, k->to_label);
        put(&f, k->to_key);
    }
    snprintf(out, 17, "%016llx", (unsigned long long)f.h);
}

const char *knut_sync__config_hash(const struct knut_sync *s, const knut_sync_table *t)
{
    size_t i = (size_t)(t - s->cfg->tables);
    return s->order.hash && i < s->order.n ? s->order.hash[i] : NULL;
}
