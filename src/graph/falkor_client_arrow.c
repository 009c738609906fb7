/*
 * The second pass over a compact reply: builds one Arrow builder tree from
 * the column types found by the first pass and appends every row, cutting
 * a batch every batch_rows rows. Values of a mixed (TEXT) slot, and the
 * properties of nodes and edges, become JSON text (falkor_client_json.c).
 * Ids are resolved through the names the caller fetched after pass 1.
 */
#include "falkor_int.h"

#include <stdlib.h>
#include <string.h>

#include "knut/arrow.h"

/* ---- builders ---------------------------------------------------------- */

static knut_status new_builder(const falkor_ty *ty, int64_t kind, const char *name,
                               knut_arrow_builder **out, knut_error *err);

/* Makes a child builder of type t (or kind) under parent. */
static knut_status add(knut_arrow_builder *parent, knut_arrow_type t, int64_t kind,
                       const char *name, int nullable, knut_error *err)
{
    knut_arrow_builder *c = NULL;
    knut_status st = kind ? new_builder(NULL, kind, name, &c, err)
                          : knut_arrow_builder_new_simple(&c, t, name, err);
    if (st == KNUT_OK) {
        knut_arrow_builder_set_nullable(c, nullable);
        st = knut_arrow_builder_add_child(parent, c, err);
    }
    return st;
}

/* ty gives the kind, or kind is given directly (for fixed shapes). */
static knut_status new_builder(const falkor_ty *ty, int64_t kind, const char *name,
                               knut_arrow_builder **out, knut_error *err)
{
    knut_arrow_type_info t;
    knut_arrow_builder *b = NULL, *c = NULL;
    knut_status st = KNUT_OK;
    if (ty != NULL)
        kind = ty->kind;
    *out = NULL;
    switch (kind) {
    case 0: /* only nulls */
        return knut_arrow_builder_new_simple(out, KNUT_ARROW_NA, name, err);
    case FK_STRING:
    case FK_TEXT:
        return knut_arrow_builder_new_simple(out, KNUT_ARROW_UTF8, name, err);
    case FK_INT:
        return knut_arrow_builder_new_simple(out, KNUT_ARROW_INT64, name, err);
    case FK_BOOL:
        return knut_arrow_builder_new_simple(out, KNUT_ARROW_BOOL, name, err);
    case FK_DOUBLE:
        return knut_arrow_builder_new_simple(out, KNUT_ARROW_DOUBLE, name, err);
    case FK_DATE:
        return knut_arrow_builder_new_simple(out, KNUT_ARROW_DATE32, name, err);
    case FK_DATETIME:
    case FK_TIME:
    case FK_DURATION:
        knut_arrow_type_info_init(&t, kind == FK_DATETIME ? KNUT_ARROW_TIMESTAMP
                                      : kind == FK_TIME   ? KNUT_ARROW_TIME32
                                                          : KNUT_ARROW_DURATION);
        t.unit = KNUT_ARROW_SECOND;
        return knut_arrow_builder_new(out, &t, name, err);
    default:
        break;
    }
    knut_arrow_type outer = kind == FK_LIST || kind == FK_VECTOR ? KNUT_ARROW_LIST
                            : kind == FK_MAP                     ? KNUT_ARROW_MAP
                                                                 : KNUT_ARROW_STRUCT;
    st = knut_arrow_builder_new_simple(&b, outer, name, err);
    if (st != KNUT_OK)
        return st;
    switch (kind) {
    case FK_LIST:
        st = new_builder(ty ? ty->child : NULL, 0, "item", &c, err);
        if (st == KNUT_OK)
            st = knut_arrow_builder_add_child(b, c, err);
        break;
    case FK_VECTOR:
        st = add(b, KNUT_ARROW_FLOAT, 0, "item", 1, err);
        break;
    case FK_MAP:
        st = knut_arrow_builder_new_simple(&c, KNUT_ARROW_STRUCT, "entries", err);
        if (st == KNUT_OK) {
            knut_arrow_builder_set_nullable(c, 0);
            st = knut_arrow_builder_add_child(b, c, err);
        }
        if (st == KNUT_OK)
            st = add(c, KNUT_ARROW_UTF8, 0, "key", 0, err);
        if (st == KNUT_OK)
            st = new_builder(ty ? ty->child : NULL, 0, "value", &c, err);
        if (st == KNUT_OK)
            st = knut_arrow_builder_add_child(b->children[0], c, err);
        break;
    case FK_POINT:
        st = add(b, KNUT_ARROW_DOUBLE, 0, "latitude", 0, err);
        if (st == KNUT_OK)
            st = add(b, KNUT_ARROW_DOUBLE, 0, "longitude", 0, err);
        break;
    case FK_NODE:
    case FK_EDGE:
        st = add(b, KNUT_ARROW_INT64, 0, "id", 0, err);
        if (st == KNUT_OK && kind == FK_NODE) {
            st = knut_arrow_builder_new_simple(&c, KNUT_ARROW_LIST, "labels", err);
            if (st == KNUT_OK) {
                knut_arrow_builder_set_nullable(c, 0);
                st = knut_arrow_builder_add_child(b, c, err);
            }
            if (st == KNUT_OK)
                st = add(c, KNUT_ARROW_UTF8, 0, "item", 0, err);
        } else if (st == KNUT_OK) {
            st = add(b, KNUT_ARROW_UTF8, 0, "type", 0, err);
            if (st == KNUT_OK)
                st = add(b, KNUT_ARROW_INT64, 0, "src", 0, err);
            if (st == KNUT_OK)
                st = add(b, KNUT_ARROW_INT64, 0, "dst", 0, err);
        }
        if (st == KNUT_OK)
            st = add(b, KNUT_ARROW_UTF8, 0, "properties", 0, err);
        break;
    case FK_PATH:
        for (int half = 0; st == KNUT_OK && half < 2; half++) {
            st = knut_arrow_builder_new_simple(&c, KNUT_ARROW_LIST, half ? "edges" : "nodes",
                                               err);
            if (st == KNUT_OK) {
                knut_arrow_builder_set_nullable(c, 0);
                st = knut_arrow_builder_add_child(b, c, err);
            }
            if (st == KNUT_OK)
                st = add(c, 0, half ? FK_EDGE : FK_NODE, "item", 0, err);
        }
        break;
    default:
        st = knut_error_set(err, KNUT_EUNSUPPORTED, "value type %lld", (long long)kind);
    }
    if (st == KNUT_OK)
        *out = b;
    else
        knut_arrow_builder_free(b);
    return st;
}

/* ---- appending --------------------------------------------------------- */

static knut_status append_value(falkor_build *b, knut_arrow_builder *ab, const falkor_ty *ty,
                                int64_t code, const falkor_item *v);

static knut_status append_cell(falkor_build *b, knut_arrow_builder *ab, const falkor_ty *ty)
{
    int64_t code;
    falkor_item v;
    if (knut_graph__falkor_cell_open(&b->c, &code, &v) != KNUT_OK)
        return knut_graph__falkor_malformed(b);
    return append_value(b, ab, ty, code, &v);
}

static knut_status append_double(falkor_build *b, knut_arrow_builder *ab)
{
    falkor_item x;
    double d;
    knut_status st = knut_graph__falkor_next(b, &x, 0);
    if (st == KNUT_OK && !knut_graph__falkor_parse_double(&x, &d))
        st = knut_graph__falkor_malformed(b);
    return st == KNUT_OK ? knut_arrow_builder_append_double(ab, d, b->err) : st;
}

/* A node or edge struct: id, labels or type/src/dst, properties (JSON). */
static knut_status append_entity(falkor_build *b, knut_arrow_builder *ab, int64_t code)
{
    falkor_item it;
    const char *name;
    knut_status st = knut_graph__falkor_next(b, &it, ':');
    if (st == KNUT_OK)
        st = knut_arrow_builder_append_int(ab->children[0], it.n, b->err);
    if (st == KNUT_OK && code == FK_NODE) {
        knut_arrow_builder *labels = ab->children[1];
        st = knut_graph__falkor_next(b, &it, '*');
        for (int64_t i = 0, n = it.n; st == KNUT_OK && i < n; i++) {
            st = knut_graph__falkor_next(b, &it, ':');
            if (st == KNUT_OK)
                st = knut_graph__falkor_label(b, it.n, &name);
            if (st == KNUT_OK)
                st = knut_arrow_builder_append_str(labels->children[0], name, b->err);
        }
        if (st == KNUT_OK)
            st = knut_arrow_builder_finish_element(labels, b->err);
    } else if (st == KNUT_OK) {
        st = knut_graph__falkor_next(b, &it, ':');
        if (st == KNUT_OK)
            st = knut_graph__falkor_type(b, it.n, &name);
        if (st == KNUT_OK)
            st = knut_arrow_builder_append_str(ab->children[1], name, b->err);
        for (int k = 2; st == KNUT_OK && k < 4; k++) {
            st = knut_graph__falkor_next(b, &it, ':');
            if (st == KNUT_OK)
                st = knut_arrow_builder_append_int(ab->children[k], it.n, b->err);
        }
    }
    if (st == KNUT_OK) {
        knut_buf_clear(&b->text);
        st = knut_graph__falkor_render_props(b, &b->text);
    }
    if (st == KNUT_OK)
        st = knut_buf_check(&b->text, b->err);
    if (st == KNUT_OK)
        st = knut_arrow_builder_append_bytes(ab->children[ab->n_children - 1], b->text.data,
                                             b->text.len, b->err);
    return st == KNUT_OK ? knut_arrow_builder_finish_element(ab, b->err) : st;
}

static knut_status append_value(falkor_build *b, knut_arrow_builder *ab, const falkor_ty *ty,
                                int64_t code, const falkor_item *v)
{
    knut_status st = KNUT_OK;
    int64_t c2;
    falkor_item x;
    if (code == FALKOR_CODE_NULL)
        return knut_arrow_builder_append_null(ab, b->err);
    if (ty == NULL)
        return knut_graph__falkor_malformed(b);
    if (ty->kind == FK_TEXT) {
        knut_buf_clear(&b->text);
        st = knut_graph__falkor_render(b, &b->text, code, v);
        if (st == KNUT_OK)
            st = knut_buf_check(&b->text, b->err);
        return st == KNUT_OK ? knut_arrow_builder_append_bytes(ab, b->text.data, b->text.len,
                                                                b->err)
                             : st;
    }
    if (code != (int64_t)ty->kind)
        return knut_graph__falkor_malformed(b);
    switch (ty->kind) {
    case FK_STRING:
        return knut_arrow_builder_append_bytes(ab, v->s, (size_t)v->n, b->err);
    case FK_INT:
    case FK_DATETIME:
    case FK_DURATION:
        return knut_arrow_builder_append_int(ab, v->n, b->err);
    case FK_DATE: /* epoch seconds at midnight → days, rounding down */
        return knut_arrow_builder_append_int(ab, v->n / 86400 - (v->n % 86400 < 0), b->err);
    case FK_TIME: /* seconds of 1900-01-01 hh:mm:ss → seconds of the day */
        return knut_arrow_builder_append_int(ab, (v->n % 86400 + 86400) % 86400, b->err);
    case FK_BOOL:
        return knut_arrow_builder_append_bool(ab, v->n == 4, b->err);
    case FK_DOUBLE: {
        double d;
        if (!knut_graph__falkor_parse_double(v, &d))
            return knut_graph__falkor_malformed(b);
        return knut_arrow_builder_append_double(ab, d, b->err);
    }
    case FK_LIST:
        for (int64_t i = 0; st == KNUT_OK && i < v->n; i++)
            st = append_cell(b, ab->children[0], ty->child);
        break;
    case FK_VECTOR:
        for (int64_t i = 0; st == KNUT_OK && i < v->n; i++)
            st = append_double(b, ab->children[0]);
        break;
    case FK_MAP: {
        knut_arrow_builder *entries = ab->children[0];
        for (int64_t i = 0; st == KNUT_OK && i < v->n; i += 2) {
            st = knut_graph__falkor_next(b, &x, 0);
            if (st == KNUT_OK)
                st = knut_arrow_builder_append_bytes(entries->children[0], x.s, (size_t)x.n,
                                                     b->err);
            if (st == KNUT_OK)
                st = append_cell(b, entries->children[1], ty->child);
            if (st == KNUT_OK)
                st = knut_arrow_builder_finish_element(entries, b->err);
        }
        break;
    }
    case FK_POINT:
        st = append_double(b, ab->children[0]);
        if (st == KNUT_OK)
            st = append_double(b, ab->children[1]);
        break;
    case FK_NODE:
    case FK_EDGE:
        return append_entity(b, ab, ty->kind);
    case FK_PATH:
        for (int half = 0; st == KNUT_OK && half < 2; half++) {
            knut_arrow_builder *list = ab->children[half];
            if (knut_graph__falkor_cell_open(&b->c, &c2, &x) != KNUT_OK || x.type != '*')
                return knut_graph__falkor_malformed(b);
            for (int64_t i = 0, n = x.n; st == KNUT_OK && i < n; i++) {
                falkor_item e;
                if (knut_graph__falkor_cell_open(&b->c, &c2, &e) != KNUT_OK ||
                    c2 != (half ? FK_EDGE : FK_NODE))
                    return knut_graph__falkor_malformed(b);
                st = append_entity(b, list->children[0], c2);
            }
            if (st == KNUT_OK)
                st = knut_arrow_builder_finish_element(list, b->err);
        }
        break;
    default:
        return knut_graph__falkor_malformed(b);
    }
    return st == KNUT_OK ? knut_arrow_builder_finish_element(ab, b->err) : st;
}

/* ---- the result -------------------------------------------------------- */

/* Marks the fields holding JSON text of mixed values (knut.falkordb.kind
 * = "mixed"): columns, list items and map values. */
static knut_status mark_mixed(const falkor_ty *ty, struct ArrowSchema *s, knut_error *err)
{
    static const char *const keys[] = {"knut.falkordb.kind"};
    static const char *const values[] = {"mixed"};
    if (ty == NULL)
        return KNUT_OK;
    if (ty->kind == FK_LIST)
        return mark_mixed(ty->child, s->children[0], err);
    if (ty->kind == FK_MAP)
        return mark_mixed(ty->child, s->children[0]->children[1], err);
    if (ty->kind != FK_TEXT)
        return KNUT_OK;
    char *md = NULL;
    knut_status st = knut_arrow_metadata_build(&md, keys, values, 1, err);
    if (st == KNUT_OK)
        st = knut_arrow_schema_set_metadata(s, md, err);
    free(md);
    return st;
}

knut_status knut_graph__falkor_reply_build(const falkor_reply *r,
                                           const knut_graph_falkor_names *names,
                                           int64_t batch_rows, knut_graph_falkor_result *out,
                                           knut_error *err)
{
    static const knut_graph_falkor_names none = {NULL, 0, NULL, 0, NULL, 0};
    falkor_build b = {r, names ? names : &none, {r->rows_at, r->buf + r->len}, KNUT_BUF_INIT, err};
    knut_arrow_builder *top = NULL, *col = NULL;
    struct ArrowSchema schema = {0};
    struct ArrowArray *arrays = NULL;
    int64_t n_arrays = 0, row = 0, c = 0;
    char name[256];
    knut_status st;
    memset(out, 0, sizeof *out);
    if (batch_rows <= 0)
        batch_rows = FALKOR_BATCH_ROWS_DEFAULT;
    st = knut_arrow_builder_new_simple(&top, KNUT_ARROW_STRUCT, "", err);
    for (c = 0; st == KNUT_OK && c < r->n_cols; c++) {
        size_t n = r->cols[c].name_len < sizeof name ? r->cols[c].name_len : sizeof name - 1;
        memcpy(name, r->cols[c].name, n);
        name[n] = '\0';
        st = new_builder(r->cols[c].ty, 0, name, &col, err);
        if (st == KNUT_OK)
            st = knut_arrow_builder_add_child(top, col, err);
    }
    if (st == KNUT_OK && r->n_rows > 0) {
        arrays = calloc((size_t)((r->n_rows - 1) / batch_rows + 1), sizeof *arrays);
        if (arrays == NULL)
            st = knut_error_set(err, KNUT_ENOMEM, "%s: out of memory for batches", r->peer);
    }
    for (row = 0; st == KNUT_OK && r->has_columns && row < r->n_rows; row++) {
        falkor_item it;
        c = -1;
        st = knut_graph__falkor_next(&b, &it, '*');
        if (st == KNUT_OK && it.n != r->n_cols)
            st = knut_graph__falkor_malformed(&b);
        for (c = 0; st == KNUT_OK && c < r->n_cols; c++) {
            st = append_cell(&b, top->children[c], r->cols[c].ty);
            if (st != KNUT_OK)
                break;
        }
        if (st != KNUT_OK)
            break;
        c = -1;
        st = knut_arrow_builder_finish_element(top, err);
        if (st == KNUT_OK && (top->length == batch_rows || row + 1 == r->n_rows))
            st = knut_arrow_builder_finish(top, &arrays[n_arrays++], NULL, err);
        if (st != KNUT_OK)
            break;
    }
    if (st != KNUT_OK && c >= 0 && c < r->n_cols) {
        const falkor_col *fc = &r->cols[c];
        knut_error_prefix(err, "%s: row %lld, column '%.*s': ", r->peer, (long long)row,
                          (int)(fc->name_len > 200 ? 200 : fc->name_len), fc->name);
        goto cleanup;
    }
    if (st != KNUT_OK && row < r->n_rows) {
        knut_error_prefix(err, "%s: row %lld: ", r->peer, (long long)row);
        goto cleanup;
    }
    if (st == KNUT_OK)
        st = knut_arrow_builder_schema(top, &schema, err);
    for (c = 0; st == KNUT_OK && c < r->n_cols; c++)
        st = mark_mixed(r->cols[c].ty, schema.children[c], err);
    if (st == KNUT_OK) {
        st = knut_arrow_stream_from_arrays(&out->stream, &schema, arrays, n_arrays, err);
        n_arrays = 0; /* taken over, also on failure */
    }
    if (st == KNUT_OK) {
        out->n_rows = r->has_columns ? r->n_rows : 0;
        out->n_columns = r->n_cols;
        out->stats = r->stats;
    }
cleanup:
    for (int64_t i = 0; i < n_arrays; i++)
        knut_arrow_array_release(&arrays[i]);
    free(arrays);
    knut_arrow_schema_release(&schema);
    knut_arrow_builder_free(top);
    knut_buf_reset(&b.text);
    if (st != KNUT_OK)
        memset(out, 0, sizeof *out);
    return st;
}
