/*
 * JSON configs: jansson is the judge of what is valid JSON (strict, with
 * duplicate keys rejected) and supplies line:column for syntax errors;
 * the tree itself is then built by the YAML builder, since JSON is YAML
 * and libyaml reports where every node starts. For the few valid JSON
 * texts libyaml's YAML 1.1 scanner refuses (escaped surrogate pairs, keys
 * over 1024 characters), the tree is built from jansson's values instead;
 * its nodes then carry no line:column and errors name the file only.
 */
#include "conf_int.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

typedef struct json_builder {
    const char *file;
    size_t nodes;
    knut_error *err;
} json_builder;

static knut_status json_oom(const json_builder *jb)
{
    return knut_error_set_at(jb->err, KNUT_ENOMEM, jb->file, 0, 0,
                             "out of memory while loading config");
}

/* Shortest decimal text that reads back as the same double. */
static void real_text(char *out, size_t n, double d)
{
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(out, n, "%.*g", prec, d);
        if (strtod(out, NULL) == d)
            return;
    }
}

static knut_status from_json(json_builder *jb, json_t *v, int depth, knut_conf **out)
{
    *out = NULL;
    if (++jb->nodes > KNUT_CONF_MAX_NODES)
        return knut_error_set_at(jb->err, KNUT_ETOOBIG, jb->file, 0, 0,
                                 "more than %zu nodes in one document", KNUT_CONF_MAX_NODES);
    knut_conf_kind kind = json_is_object(v)  ? KNUT_CONF_MAP
                          : json_is_array(v) ? KNUT_CONF_SEQ
                          : json_is_null(v)  ? KNUT_CONF_NULL
                                             : KNUT_CONF_SCALAR;
    if ((kind == KNUT_CONF_MAP || kind == KNUT_CONF_SEQ) && depth >= KNUT_CONF_MAX_DEPTH)
        return knut_error_set_at(jb->err, KNUT_ETOOBIG, jb->file, 0, 0,
                                 "nesting deeper than %d levels", KNUT_CONF_MAX_DEPTH);
    knut_conf *n = knut_core__conf_node_new(kind, jb->file, 0, 0);
    if (!n)
        return json_oom(jb);
    knut_status st = KNUT_OK;
    char num[64];
    const char *text = NULL;
    size_t text_len = 0;
    switch (json_typeof(v)) {
    case JSON_STRING:
        text = json_string_value(v);
        text_len = json_string_length(v);
        break;
    case JSON_INTEGER:
        snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        text = num;
        break;
    case JSON_REAL:
        real_text(num, sizeof num, json_real_value(v));
        text = num;
        break;
    case JSON_TRUE:
        text = "true";
        break;
    case JSON_FALSE:
        text = "false";
        break;
    case JSON_NULL:
        text = "null";
        break;
    case JSON_OBJECT: {
        const char *key;
        json_t *child;
        json_object_foreach(v, key, child) {
            knut_conf *c;
            st = from_json(jb, child, depth + 1, &c);
            if (st != KNUT_OK)
                goto cleanup;
            c->key = strdup(key);
            if (!c->key || knut_core__conf_append(n, c) != KNUT_OK) {
                knut_core__conf_node_free(c);
                st = json_oom(jb);
                goto cleanup;
            }
        }
        break;
    }
    case JSON_ARRAY: {
        size_t i;
        json_t *child;
        json_array_foreach(v, i, child) {
            knut_conf *c;
            st = from_json(jb, child, depth + 1, &c);
            if (st != KNUT_OK)
                goto cleanup;
            if (knut_core__conf_append(n, c) != KNUT_OK) {
                knut_core__conf_node_free(c);
                st = json_oom(jb);
                goto cleanup;
            }
        }
        break;
    }
    }
    if (text) {
        if (!text_len)
            text_len = strlen(text);
        n->text = malloc(text_len + 1);
        if (!n->text) {
            st = json_oom(jb);
            goto cleanup;
        }
        memcpy(n->text, text, text_len);
        n->text[text_len] = '\0';
        n->text_len = text_len;
    }
cleanup:
    if (st != KNUT_OK) {
        knut_core__conf_node_free(n);
        return st;
    }
    *out = n;
    return KNUT_OK;
}

knut_status knut_conf_load_json(knut_conf **out, const char *text, size_t len,
                                const char *name, knut_error *err)
{
    KNUT_ASSERT_ARG(err, out);
    *out = NULL;
    KNUT_ASSERT_ARG(err, text || len == 0);
    if (!name)
        name = "<string>";
    if (len > KNUT_CONF_MAX_BYTES)
        return knut_error_set_at(err, KNUT_ETOOBIG, name, 0, 0,
                                 "config is %zu bytes, over the %zu-byte limit",
                                 len, KNUT_CONF_MAX_BYTES);
    knut_status st = KNUT_OK;
    knut_conf *root = NULL;
    char *fname = NULL;
    json_error_t jerr;
    /* jansson rejects NUL bytes inside strings by default, which the tree's
     * C strings need too. */
    size_t flags = JSON_DECODE_ANY | JSON_REJECT_DUPLICATES;
    json_t *doc = json_loadb(text ? text : "", len, flags, &jerr);
    if (!doc) {
        if (jerr.line > 0)
            st = knut_error_set_at(err, KNUT_EPARSE, name, jerr.line,
                                   jerr.column > 0 ? jerr.column : 1, "%s", jerr.text);
        else
            st = knut_error_set_at(err, KNUT_EPARSE, name, 0, 0, "%s", jerr.text);
        goto cleanup;
    }
    knut_error yerr = KNUT_ERROR_INIT;
    st = knut_core__conf_parse_yaml(out, text, len, name, 1, &yerr);
    if (st == KNUT_OK || st == KNUT_ENOMEM || st == KNUT_ETOOBIG) {
        /* Success, or a limit/memory error that names its own position. */
        if (st != KNUT_OK && err)
            *err = yerr;
        goto cleanup;
    }
    fname = strdup(name);
    if (!fname) {
        st = knut_error_set_at(err, KNUT_ENOMEM, name, 0, 0, "out of memory while loading config");
        goto cleanup;
    }
    json_builder jb = {fname, 0, err};
    st = from_json(&jb, doc, 0, &root);
    if (st != KNUT_OK)
        goto cleanup;
    root->file_owned = fname;
    fname = NULL;
    *out = root;
    root = NULL;
cleanup:
    knut_core__conf_node_free(root);
    free(fname);
    json_decref(doc);
    return st;
}
