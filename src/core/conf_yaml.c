/*
 * Builds the config tree from libyaml's event stream, recording where each
 * node starts (1-based line and column). Nesting depth, anchor count and
 * document count are checked here; node limits, alias copies, duplicate and
 * merge keys live in conf_build.c. JSON goes through the same builder with
 * merge keys off.
 */
#include "conf_build.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

static int mark_line(yaml_mark_t m)
{
    return m.line < (size_t)INT_MAX ? (int)m.line + 1 : INT_MAX;
}

static int mark_col(yaml_mark_t m)
{
    return m.column < (size_t)INT_MAX ? (int)m.column + 1 : INT_MAX;
}

/* libyaml's reader reports a byte offset only; turn it into line:col. */
static void offset_to_pos(const conf_builder *b, size_t off, int *line, int *col)
{
    int l = 1, c = 1;
    for (size_t i = 0; i < off && i < b->len; i++) {
        unsigned char ch = (unsigned char)b->text[i];
        if (ch == '\n') {
            l++;
            c = 1;
        } else if ((ch & 0xC0) != 0x80) { /* count characters, not bytes */
            c++;
        }
    }
    *line = l;
    *col = c;
}

static knut_status parser_error(conf_builder *b, const yaml_parser_t *p)
{
    int line, col;
    switch (p->error) {
    case YAML_MEMORY_ERROR:
        return knut_core__conf_oom(b);
    case YAML_READER_ERROR:
        offset_to_pos(b, p->problem_offset, &line, &col);
        if (p->problem_value != -1)
            return knut_core__conf_fail_at(b, KNUT_EPARSE, line, col, "%s (byte 0x%02x)",
                                           p->problem ? p->problem : "cannot read input",
                                           (unsigned)p->problem_value & 0xFFu);
        return knut_core__conf_fail_at(b, KNUT_EPARSE, line, col, "%s",
                                       p->problem ? p->problem : "cannot read input");
    default:
        line = mark_line(p->problem_mark);
        col = mark_col(p->problem_mark);
        if (p->context)
            return knut_core__conf_fail_at(b, KNUT_EPARSE, line, col, "%s (%s at %d:%d)",
                                           p->problem ? p->problem : "syntax error", p->context,
                                           mark_line(p->context_mark), mark_col(p->context_mark));
        return knut_core__conf_fail_at(b, KNUT_EPARSE, line, col, "%s",
                                       p->problem ? p->problem : "syntax error");
    }
}

static knut_status anchor_add(conf_builder *b, const char *name, const knut_conf *n, int line,
                              int col)
{
    if (b->nanchors == KNUT_CONF_MAX_ANCHORS)
        return knut_core__conf_fail_at(b, KNUT_ETOOBIG, line, col, "more than %d anchors",
                                       KNUT_CONF_MAX_ANCHORS);
    char *copy = strdup(name);
    if (!copy)
        return knut_core__conf_oom(b);
    b->anchors[b->nanchors].name = copy;
    b->anchors[b->nanchors].node = n;
    b->nanchors++;
    return KNUT_OK;
}

static const knut_conf *anchor_find(const conf_builder *b, const char *name)
{
    /* Latest definition wins: YAML lets a document redefine an anchor. */
    for (int i = b->nanchors - 1; i >= 0; i--)
        if (strcmp(b->anchors[i].name, name) == 0)
            return b->anchors[i].node;
    return NULL;
}

/* ---- events ------------------------------------------------------------ */

/* Hands a finished node to the open collection (or makes it the root). */
static knut_status attach(conf_builder *b, knut_conf *n, int anchored)
{
    if (b->depth == 0) {
        b->root = n;
        return KNUT_OK;
    }
    conf_frame *f = &b->frames[b->depth - 1];
    if (f->node->kind == KNUT_CONF_SEQ) {
        if (knut_core__conf_append(f->node, n) != KNUT_OK) {
            knut_core__conf_node_free(n);
            return knut_core__conf_oom(b);
        }
        return KNUT_OK;
    }
    if (!f->have_key) {
        if (n->kind == KNUT_CONF_SEQ || n->kind == KNUT_CONF_MAP) {
            knut_status st = knut_core__conf_fail_at(b, KNUT_EUNSUPPORTED, n->line, n->col,
                                                     "map keys must be scalars");
            knut_core__conf_node_free(n);
            return st;
        }
        /* The key's text moves to the frame; the node itself is dropped
         * (or kept for its anchor). */
        f->key = n->text;
        n->text = NULL;
        if (!f->key && !(f->key = strdup(""))) {
            knut_core__conf_node_free(n);
            return knut_core__conf_oom(b);
        }
        f->key_line = n->line;
        f->key_col = n->col;
        f->key_plain = n->plain;
        f->have_key = 1;
        if (anchored) {
            /* An anchored key is aliased as its text: give the text back. */
            n->text = strdup(f->key);
            if (!n->text) {
                knut_core__conf_node_free(n);
                return knut_core__conf_oom(b);
            }
            return knut_core__conf_bury(b, n);
        }
        knut_core__conf_node_free(n);
        return KNUT_OK;
    }
    free(n->key);
    n->key = f->key;
    n->key_line = f->key_line;
    n->key_col = f->key_col;
    n->key_plain = f->key_plain;
    f->key = NULL;
    f->have_key = 0;
    if (knut_core__conf_append(f->node, n) != KNUT_OK) {
        knut_core__conf_node_free(n);
        return knut_core__conf_oom(b);
    }
    return KNUT_OK;
}

static int is_null_text(const char *s, size_t len)
{
    return len == 0 || strcmp(s, "~") == 0 || strcmp(s, "null") == 0 ||
           strcmp(s, "Null") == 0 || strcmp(s, "NULL") == 0;
}

static knut_status on_scalar(conf_builder *b, const yaml_event_t *ev)
{
    int line = mark_line(ev->start_mark), col = mark_col(ev->start_mark);
    knut_status st = knut_core__conf_count_node(b, 0, line, col);
    if (st != KNUT_OK)
        return st;
    const char *val = (const char *)ev->data.scalar.value;
    size_t len = ev->data.scalar.length;
    /* Text is handed out as C strings: an embedded NUL would silently cut it. */
    if (memchr(val, '\0', len))
        return knut_core__conf_fail_at(b, KNUT_EINVAL, line, col, "NUL character in a scalar");
    const char *tag = (const char *)ev->data.scalar.tag;
    int plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && !tag;
    knut_conf_kind kind = KNUT_CONF_SCALAR;
    if ((plain && is_null_text(val, len)) || (tag && strcmp(tag, YAML_NULL_TAG) == 0))
        kind = KNUT_CONF_NULL;
    knut_conf *n = knut_core__conf_node_new(kind, b->file, line, col);
    if (!n)
        return knut_core__conf_oom(b);
    n->plain = plain;
    n->text = malloc(len + 1);
    if (!n->text) {
        knut_core__conf_node_free(n);
        return knut_core__conf_oom(b);
    }
    memcpy(n->text, val, len);
    n->text[len] = '\0';
    n->text_len = len;
    const char *anchor = (const char *)ev->data.scalar.anchor;
    if (anchor && (st = anchor_add(b, anchor, n, line, col)) != KNUT_OK) {
        knut_core__conf_node_free(n);
        return st;
    }
    return attach(b, n, anchor != NULL);
}

static knut_status on_start(conf_builder *b, const yaml_event_t *ev, knut_conf_kind kind)
{
    int line = mark_line(ev->start_mark), col = mark_col(ev->start_mark);
    knut_status st = knut_core__conf_count_node(b, 0, line, col);
    if (st != KNUT_OK)
        return st;
    if (b->depth > 0) {
        const conf_frame *top = &b->frames[b->depth - 1];
        if (top->node->kind == KNUT_CONF_MAP && !top->have_key)
            return knut_core__conf_fail_at(b, KNUT_EUNSUPPORTED, line, col,
                                           "map keys must be scalars");
    }
    if (b->depth == KNUT_CONF_MAX_DEPTH)
        return knut_core__conf_fail_at(b, KNUT_ETOOBIG, line, col, "nesting deeper than %d levels",
                                       KNUT_CONF_MAX_DEPTH);
    const yaml_char_t *anchor = kind == KNUT_CONF_MAP ? ev->data.mapping_start.anchor
                                                      : ev->data.sequence_start.anchor;
    conf_frame *f = &b->frames[b->depth];
    memset(f, 0, sizeof *f);
    f->node = knut_core__conf_node_new(kind, b->file, line, col);
    if (!f->node)
        return knut_core__conf_oom(b);
    if (anchor && !(f->anchor = strdup((const char *)anchor))) {
        knut_core__conf_node_free(f->node);
        f->node = NULL;
        return knut_core__conf_oom(b);
    }
    b->depth++;
    return KNUT_OK;
}

static knut_status on_end(conf_builder *b)
{
    conf_frame *f = &b->frames[b->depth - 1];
    knut_status st = KNUT_OK;
    if (f->node->kind == KNUT_CONF_MAP)
        st = knut_core__conf_map_finish(b, f->node);
    /* Pop the frame first: from here on this function alone owns the node. */
    knut_conf *n = f->node;
    char *anchor = f->anchor;
    int anchored = anchor != NULL;
    free(f->key);
    memset(f, 0, sizeof *f);
    b->depth--;
    if (st == KNUT_OK && anchor)
        st = anchor_add(b, anchor, n, n->line, n->col);
    free(anchor);
    if (st != KNUT_OK) {
        knut_core__conf_node_free(n);
        return st;
    }
    return attach(b, n, anchored);
}

static knut_status on_alias(conf_builder *b, const yaml_event_t *ev)
{
    int line = mark_line(ev->start_mark), col = mark_col(ev->start_mark);
    const char *name = (const char *)ev->data.alias.anchor;
    const knut_conf *target = anchor_find(b, name);
    if (!target)
        return knut_core__conf_fail_at(b, KNUT_EINVAL, line, col,
                                       "alias '*%s' names no anchor defined before it", name);
    knut_conf *copy;
    knut_status st = knut_core__conf_copy_node(b, target, KNUT_CONF_MAX_DEPTH - b->depth, &copy);
    if (st != KNUT_OK)
        return st;
    return attach(b, copy, 0);
}

static knut_status handle_event(conf_builder *b, const yaml_event_t *ev, int *docs, int *done)
{
    switch (ev->type) {
    case YAML_DOCUMENT_START_EVENT:
        if (++*docs > 1)
            return knut_core__conf_fail_at(b, KNUT_EUNSUPPORTED, mark_line(ev->start_mark),
                                           mark_col(ev->start_mark),
                                           "a config file holds one YAML document, found a second");
        return KNUT_OK;
    case YAML_SCALAR_EVENT:
        return on_scalar(b, ev);
    case YAML_SEQUENCE_START_EVENT:
        return on_start(b, ev, KNUT_CONF_SEQ);
    case YAML_MAPPING_START_EVENT:
        return on_start(b, ev, KNUT_CONF_MAP);
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        return on_end(b);
    case YAML_ALIAS_EVENT:
        return on_alias(b, ev);
    case YAML_STREAM_END_EVENT:
        *done = 1;
        return KNUT_OK;
    default:
        return KNUT_OK;
    }
}

knut_status knut_core__conf_parse_yaml(knut_conf **out, const char *text, size_t len,
                                       const char *name, int json, knut_error *err)
{
    knut_status st = KNUT_OK;
    yaml_parser_t parser;
    int parser_ready = 0;
    conf_builder *b = calloc(1, sizeof *b);
    if (!b)
        return knut_error_set_at(err, KNUT_ENOMEM, name, 0, 0,
                                 "out of memory while loading config");
    b->text = text;
    b->len = len;
    b->json = json;
    b->err = err;
    b->file = strdup(name);
    b->graveyard = knut_core__conf_node_new(KNUT_CONF_SEQ, NULL, 0, 0);
    if (!b->file || !b->graveyard) {
        st = knut_error_set_at(err, KNUT_ENOMEM, name, 0, 0, "out of memory while loading config");
        goto cleanup;
    }
    if (!yaml_parser_initialize(&parser)) {
        st = knut_core__conf_oom(b);
        goto cleanup;
    }
    parser_ready = 1;
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);

    int docs = 0, done = 0;
    while (!done) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&parser, &ev)) {
            st = parser_error(b, &parser);
            goto cleanup;
        }
        st = handle_event(b, &ev, &docs, &done);
        yaml_event_delete(&ev);
        if (st != KNUT_OK)
            goto cleanup;
    }
    if (!b->root) {
        /* An empty file is an empty config: a null root at 1:1. */
        b->root = knut_core__conf_node_new(KNUT_CONF_NULL, b->file, 1, 1);
        if (!b->root) {
            st = knut_core__conf_oom(b);
            goto cleanup;
        }
    }
    b->root->file_owned = b->file;
    b->file = NULL;
    *out = b->root;
    b->root = NULL;
cleanup:
    if (parser_ready)
        yaml_parser_delete(&parser);
    for (int i = 0; i < b->depth; i++) {
        knut_core__conf_node_free(b->frames[i].node);
        free(b->frames[i].anchor);
        free(b->frames[i].key);
    }
    for (int i = 0; i < b->nanchors; i++)
        free(b->anchors[i].name);
    knut_core__conf_node_free(b->graveyard);
    knut_core__conf_node_free(b->root);
    free(b->file);
    free(b);
    return st;
}
