/*
 * The config tree: nodes that remember the file:line:column they came from,
 * lookups, typed getters whose errors point at the offending text, and
 * loading a file by extension (.json through jansson, else YAML). Parsing
 * itself lives in conf_yaml.c and conf_json.c.
 */
#include "conf_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* Longest value quoted back in a getter's error message. */
#define CONF_PREVIEW_MAX 40

knut_conf *knut_core__conf_node_new(knut_conf_kind kind, const char *file, int line, int col)
{
    knut_conf *n = calloc(1, sizeof *n);
    if (!n)
        return NULL;
    n->kind = kind;
    n->file = file;
    n->line = line;
    n->col = col;
    return n;
}

knut_status knut_core__conf_append(knut_conf *parent, knut_conf *child)
{
    if (parent->n == parent->cap) {
        size_t ncap = parent->cap ? parent->cap * 2 : 4;
        knut_conf **ni = realloc(parent->items, ncap * sizeof *ni);
        if (!ni)
            return KNUT_ENOMEM;
        parent->items = ni;
        parent->cap = ncap;
    }
    parent->items[parent->n++] = child;
    return KNUT_OK;
}

void knut_core__conf_node_free(knut_conf *n)
{
    if (!n)
        return;
    /* Recursion is bounded: the parsers refuse nesting deeper than
     * KNUT_CONF_MAX_DEPTH. */
    for (size_t i = 0; i < n->n; i++)
        knut_core__conf_node_free(n->items[i]);
    free(n->items);
    free(n->text);
    free(n->key);
    free(n->file_owned);
    free(n);
}

void knut_conf_free(knut_conf *root)
{
    knut_core__conf_node_free(root);
}

/* ---- navigation -------------------------------------------------------- */

knut_conf_kind knut_conf_kind_of(const knut_conf *n)
{
    return n ? n->kind : KNUT_CONF_NULL;
}

const knut_conf *knut_conf_get(const knut_conf *n, const char *key)
{
    if (!n || !key || n->kind != KNUT_CONF_MAP)
        return NULL;
    for (size_t i = 0; i < n->n; i++)
        if (strcmp(n->items[i]->key, key) == 0)
            return n->items[i];
    return NULL;
}

size_t knut_conf_len(const knut_conf *n)
{
    if (!n || (n->kind != KNUT_CONF_SEQ && n->kind != KNUT_CONF_MAP))
        return 0;
    return n->n;
}

const knut_conf *knut_conf_at(const knut_conf *n, size_t i)
{
    if (!n || (n->kind != KNUT_CONF_SEQ && n->kind != KNUT_CONF_MAP) || i >= n->n)
        return NULL;
    return n->items[i];
}

const char *knut_conf_key_at(const knut_conf *n, size_t i)
{
    if (!n || n->kind != KNUT_CONF_MAP || i >= n->n)
        return NULL;
    return n->items[i]->key;
}

const char *knut_conf_str(const knut_conf *n)
{
    return n && n->kind == KNUT_CONF_SCALAR ? n->text : NULL;
}

const char *knut_conf_file(const knut_conf *n)
{
    return n && n->file ? n->file : "?";
}

int knut_conf_line(const knut_conf *n)
{
    return n ? n->line : 0;
}

int knut_conf_col(const knut_conf *n)
{
    return n ? n->col : 0;
}

int knut_conf_key_line(const knut_conf *n)
{
    return n && n->key ? n->key_line : 0;
}

int knut_conf_key_col(const knut_conf *n)
{
    return n && n->key ? n->key_col : 0;
}

/* ---- typed getters ----------------------------------------------------- */

const char *knut_conf_kind_name(knut_conf_kind k)
{
    switch (k) {
    case KNUT_CONF_NULL:
        return "null";
    case KNUT_CONF_SCALAR:
        return "a scalar";
    case KNUT_CONF_SEQ:
        return "a list";
    case KNUT_CONF_MAP:
        return "a map";
    }
    return "?";
}

/*
 * Finds map[key] or explains, at the map's position, why it cannot. On
 * success *out is the node (any kind).
 */
static knut_status lookup(const knut_conf *map, const char *key, const knut_conf **out,
                          knut_error *err)
{
    *out = NULL;
    if (!key)
        return knut_error_set(err, KNUT_EINVAL, "config: NULL key");
    if (!map)
        return knut_error_set(err, KNUT_ENOTFOUND, "config: missing key '%s' (no such section)",
                              key);
    if (map->kind != KNUT_CONF_MAP)
        return knut_error_set_at(err, KNUT_EINVAL, knut_conf_file(map), map->line, map->col,
                                 "expected a map holding key '%s', got %s", key,
                                 knut_conf_kind_name(map->kind));
    const knut_conf *n = knut_conf_get(map, key);
    if (!n)
        return knut_error_set_at(err, KNUT_ENOTFOUND, knut_conf_file(map), map->line, map->col,
                                 "missing key '%s'", key);
    *out = n;
    return KNUT_OK;
}

/* Error for a value of the wrong kind or form, quoting (a prefix of) it. */
static knut_status wrong_value(const knut_conf *n, const char *key, const char *expected,
                               knut_error *err)
{
    if (n->kind != KNUT_CONF_SCALAR)
        return knut_error_set_at(err, KNUT_EINVAL, knut_conf_file(n), n->line, n->col,
                                 "key '%s': expected %s, got %s", key, expected,
                                 knut_conf_kind_name(n->kind));
    int cut = n->text_len > CONF_PREVIEW_MAX;
    return knut_error_set_at(err, KNUT_EINVAL, knut_conf_file(n), n->line, n->col,
                             "key '%s': expected %s, got '%.*s%s'", key, expected,
                             cut ? CONF_PREVIEW_MAX : (int)n->text_len, n->text,
                             cut ? "..." : "");
}

knut_status knut_conf_get_str(const knut_conf *map, const char *key, const char **out,
                              knut_error *err)
{
    KNUT_ASSERT_ARG(err, out);
    const knut_conf *n;
    knut_status st = lookup(map, key, &n, err);
    if (st != KNUT_OK)
        return st;
    if (n->kind != KNUT_CONF_SCALAR)
        return wrong_value(n, key, "a string", err);
    *out = n->text;
    return KNUT_OK;
}

/* YAML 1.2 core integers: decimal with sign, 0x hex, 0o octal. */
static int parse_i64(const char *s, int64_t *out)
{
    const char *p = s;
    int neg = 0;
    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    int base = 10;
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
        base = 16;
        p += 2;
    } else if (p[0] == '0' && (p[1] == 'o' || p[1] == 'O')) {
        base = 8;
        p += 2;
    }
    if (!*p)
        return 0;
    uint64_t limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    uint64_t v = 0;
    for (; *p; p++) {
        int d;
        if (*p >= '0' && *p <= '9')
            d = *p - '0';
        else if (*p >= 'a' && *p <= 'f')
            d = *p - 'a' + 10;
        else if (*p >= 'A' && *p <= 'F')
            d = *p - 'A' + 10;
        else
            return 0;
        if (d >= base)
            return 0;
        if (v > (limit - (uint64_t)d) / (uint64_t)base)
            return -1;
        v = v * (uint64_t)base + (uint64_t)d;
    }
    /* Negating in unsigned arithmetic keeps INT64_MIN exact. */
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return 1;
}

knut_status knut_conf_get_i64(const knut_conf *map, const char *key, int64_t *out,
                              knut_error *err)
{
    KNUT_ASSERT_ARG(err, out);
    const knut_conf *n;
    knut_status st = lookup(map, key, &n, err);
    if (st != KNUT_OK)
        return st;
    if (n->kind != KNUT_CONF_SCALAR)
        return wrong_value(n, key, "an integer", err);
    int64_t v = 0;
    int r = parse_i64(n->text, &v);
    if (r < 0)
        return wrong_value(n, key, "an integer in the 64-bit range", err);
    if (r == 0)
        return wrong_value(n, key, "an integer", err);
    *out = v;
    return KNUT_OK;
}

knut_status knut_conf_get_bool(const knut_conf *map, const char *key, int *out,
                               knut_error *err)
{
    static const char *const yes[] = {"true", "yes", "on"};
    static const char *const no[] = {"false", "no", "off"};
    KNUT_ASSERT_ARG(err, out);
    const knut_conf *n;
    knut_status st = lookup(map, key, &n, err);
    if (st != KNUT_OK)
        return st;
    if (n->kind == KNUT_CONF_SCALAR) {
        /* The YAML 1.2 words plus the YAML 1.1 ones people still write. */
        for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
            if (strcasecmp(n->text, yes[i]) == 0) {
                *out = 1;
                return KNUT_OK;
            }
            if (strcasecmp(n->text, no[i]) == 0) {
                *out = 0;
                return KNUT_OK;
            }
        }
    }
    return wrong_value(n, key, "a boolean (true/false)", err);
}

knut_status knut_conf_get_f64(const knut_conf *map, const char *key, double *out,
                              knut_error *err)
{
    KNUT_ASSERT_ARG(err, out);
    const knut_conf *n;
    knut_status st = lookup(map, key, &n, err);
    if (st != KNUT_OK)
        return st;
    if (n->kind != KNUT_CONF_SCALAR)
        return wrong_value(n, key, "a number", err);
    const char *s = n->text;
    const char *u = (*s == '+' || *s == '-') ? s + 1 : s;
    /* YAML spells the special values .inf and .nan. */
    if (strcasecmp(u, ".inf") == 0) {
        *out = *s == '-' ? -INFINITY : INFINITY;
        return KNUT_OK;
    }
    if (strcasecmp(s, ".nan") == 0) {
        *out = NAN;
        return KNUT_OK;
    }
    /* Only plain decimal forms: strtod alone would also take hex floats,
     * "inf" and "nan" words, and leading blanks. */
    int digits = 0;
    for (const char *p = u; *p; p++) {
        if (*p >= '0' && *p <= '9')
            digits++;
        else if (!strchr(".eE+-", *p))
            return wrong_value(n, key, "a number", err);
    }
    if (!digits || *u == '\0')
        return wrong_value(n, key, "a number", err);
    char *end = NULL;
    errno = 0;
    double d = strtod(s, &end);
    if (end == s || *end != '\0')
        return wrong_value(n, key, "a number", err);
    if (errno == ERANGE && isinf(d))
        return wrong_value(n, key, "a number in the double range", err);
    *out = d;
    return KNUT_OK;
}

/* ---- loading ----------------------------------------------------------- */

knut_status knut_conf_load_yaml(knut_conf **out, const char *text, size_t len,
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
    return knut_core__conf_parse_yaml(out, text ? text : "", len, name, 0, err);
}

static int has_json_ext(const char *path)
{
    size_t n = strlen(path);
    return n >= 5 && strcasecmp(path + n - 5, ".json") == 0;
}

knut_status knut_conf_load_file(knut_conf **out, const char *path, knut_error *err)
{
    KNUT_ASSERT_ARG(err, out);
    *out = NULL;
    KNUT_ASSERT_ARG(err, path);
    knut_buf text = KNUT_BUF_INIT;
    knut_status st = knut_file_read(path, KNUT_CONF_MAX_BYTES, &text, err);
    if (st != KNUT_OK)
        return st;
    if (has_json_ext(path))
        st = knut_conf_load_json(out, text.data, text.len, path, err);
    else
        st = knut_conf_load_yaml(out, text.data, text.len, path, err);
    knut_buf_reset(&text);
    return st;
}
