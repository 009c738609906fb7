/*
 * Unit tests for config loading (src/core/conf*.c): YAML and JSON trees
 * with positions, typed getters and their file:line:col errors, syntax
 * errors, and the limits that make untrusted configs safe (size, depth,
 * alias expansion).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "knut/core.h"

static knut_conf *yaml_ok(const char *text)
{
    knut_conf *c = NULL;
    knut_error err = KNUT_ERROR_INIT;
    knut_status st = knut_conf_load_yaml(&c, text, strlen(text), "config.yml", &err);
    if (st != KNUT_OK)
        fail_msg("unexpected error: %s", err.message);
    assert_non_null(c);
    return c;
}

/* Loads text that must fail; returns the status, message in *err. */
static knut_status yaml_bad(const char *text, knut_error *err)
{
    knut_conf *c = (knut_conf *)(uintptr_t)1;
    knut_status st = knut_conf_load_yaml(&c, text, strlen(text), "config.yml", err);
    assert_true(st != KNUT_OK);
    assert_int_equal(err->code, st);
    assert_null(c);
    return st;
}

static knut_status json_bad(const char *text, knut_error *err)
{
    knut_conf *c = (knut_conf *)(uintptr_t)1;
    knut_status st = knut_conf_load_json(&c, text, strlen(text), "config.json", err);
    assert_true(st != KNUT_OK);
    assert_null(c);
    return st;
}

static const char sample_yaml[] =
    "# knut config\n"
    "server:\n"
    "  host: 127.0.0.1\n"
    "  port: 6379\n"
    "  tls: yes\n"
    "  ratio: 0.25\n"
    "  name: \"null\"\n"
    "  empty:\n"
    "tables:\n"
    "  - orders\n"
    "  - {name: items, rows: -0x10}\n";

static void test_core_conf__yaml_tree_and_positions(void **state)
{
    (void)state;
    knut_conf *c = yaml_ok(sample_yaml);
    assert_int_equal(knut_conf_kind_of(c), KNUT_CONF_MAP);
    assert_int_equal(knut_conf_len(c), 2);
    assert_string_equal(knut_conf_key_at(c, 0), "server");
    assert_string_equal(knut_conf_key_at(c, 1), "tables");
    const knut_conf *srv = knut_conf_get(c, "server");
    assert_int_equal(knut_conf_kind_of(srv), KNUT_CONF_MAP);
    const knut_conf *port = knut_conf_get(srv, "port");
    assert_string_equal(knut_conf_str(port), "6379");
    assert_string_equal(knut_conf_file(port), "config.yml");
    assert_int_equal(knut_conf_line(port), 4);
    assert_int_equal(knut_conf_col(port), 9);
    /* Plain null/empty are null; a quoted "null" is a string. */
    assert_int_equal(knut_conf_kind_of(knut_conf_get(srv, "empty")), KNUT_CONF_NULL);
    assert_null(knut_conf_str(knut_conf_get(srv, "empty")));
    assert_string_equal(knut_conf_str(knut_conf_get(srv, "name")), "null");

    const knut_conf *tables = knut_conf_get(c, "tables");
    assert_int_equal(knut_conf_kind_of(tables), KNUT_CONF_SEQ);
    assert_int_equal(knut_conf_len(tables), 2);
    assert_string_equal(knut_conf_str(knut_conf_at(tables, 0)), "orders");
    assert_int_equal(knut_conf_line(knut_conf_at(tables, 0)), 10);
    assert_int_equal(knut_conf_col(knut_conf_at(tables, 0)), 5);
    const knut_conf *items = knut_conf_at(tables, 1);
    assert_int_equal(knut_conf_line(items), 11);
    assert_int_equal(knut_conf_col(items), 5);
    assert_null(knut_conf_at(tables, 2));
    assert_null(knut_conf_key_at(tables, 0)); /* not a map */
    assert_null(knut_conf_get(tables, "x"));

    const char *host = NULL;
    int64_t i = 0;
    int b = 0;
    double d = 0;
    assert_int_equal(knut_conf_get_str(srv, "host", &host, NULL), KNUT_OK);
    assert_string_equal(host, "127.0.0.1");
    assert_int_equal(knut_conf_get_i64(srv, "port", &i, NULL), KNUT_OK);
    assert_int_equal(i, 6379);
    assert_int_equal(knut_conf_get_bool(srv, "tls", &b, NULL), KNUT_OK);
    assert_int_equal(b, 1);
    assert_int_equal(knut_conf_get_f64(srv, "ratio", &d, NULL), KNUT_OK);
    assert_true(d == 0.25);
    assert_int_equal(knut_conf_get_i64(items, "rows", &i, NULL), KNUT_OK);
    assert_int_equal(i, -16);
    knut_conf_free(c);
    knut_conf_free(NULL);
}

static void test_core_conf__getter_errors_name_position_and_key(void **state)
{
    (void)state;
    knut_conf *c = yaml_ok(sample_yaml);
    const knut_conf *srv = knut_conf_get(c, "server");
    knut_error err = KNUT_ERROR_INIT;
    int64_t i;
    const char *s;
    int b;
    double d;
    assert_int_equal(knut_conf_get_i64(srv, "host", &i, &err), KNUT_EINVAL);
    assert_string_equal(err.message,
                        "config.yml:3:9: key 'host': expected an integer, got '127.0.0.1'");
    /* The position is data too: nobody parses it back out of the text. */
    assert_int_equal(err.line, 3);
    assert_int_equal(err.col, 9);
    assert_string_equal(err.message + err.text_at,
                        "key 'host': expected an integer, got '127.0.0.1'");
    assert_int_equal(knut_conf_get_bool(srv, "port", &b, &err), KNUT_EINVAL);
    assert_string_equal(err.message,
                        "config.yml:4:9: key 'port': expected a boolean (true/false), got '6379'");
    assert_int_equal(knut_conf_get_str(c, "tables", &s, &err), KNUT_EINVAL);
    assert_string_equal(err.message, "config.yml:10:3: key 'tables': expected a string, got a list");
    assert_int_equal(knut_conf_get_str(srv, "empty", &s, &err), KNUT_EINVAL);
    assert_string_equal(err.message, "config.yml:8:9: key 'empty': expected a string, got null");
    assert_int_equal(knut_conf_get_f64(srv, "host", &d, &err), KNUT_EINVAL);
    assert_string_equal(err.message, "config.yml:3:9: key 'host': expected a number, got '127.0.0.1'");
    /* Missing keys name the map they were looked up in. */
    assert_int_equal(knut_conf_get_str(srv, "user", &s, &err), KNUT_ENOTFOUND);
    assert_string_equal(err.message, "config.yml:3:3: missing key 'user'");
    assert_int_equal(err.line, 3);
    assert_int_equal(err.col, 3);
    assert_int_equal(knut_conf_get_str(knut_conf_get(c, "nope"), "user", &s, &err),
                     KNUT_ENOTFOUND);
    assert_non_null(strstr(err.message, "'user'"));
    assert_int_equal(knut_conf_get_i64(knut_conf_get(c, "tables"), "rows", &i, &err), KNUT_EINVAL);
    assert_string_equal(err.message, "config.yml:10:3: expected a map holding key 'rows', got a list");
    knut_conf_free(c);
}

static void test_core_conf__value_forms(void **state)
{
    (void)state;
    knut_conf *c = yaml_ok("max: 9223372036854775807\n"
                           "min: -9223372036854775808\n"
                           "over: 9223372036854775808\n"
                           "oct: 0o17\n"
                           "hexbad: 0xfg\n"
                           "sign: +\n"
                           "exp: 1.5e3\n"
                           "inf: -.inf\n"
                           "nan: .NaN\n"
                           "hexfloat: 0x1p3\n"
                           "word: infinity\n"
                           "f: False\n"
                           "off: off\n"
                           "maybe: maybe\n"
                           "long: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n");
    int64_t i;
    double d;
    int b;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_conf_get_i64(c, "max", &i, NULL), KNUT_OK);
    assert_true(i == INT64_MAX);
    assert_int_equal(knut_conf_get_i64(c, "min", &i, NULL), KNUT_OK);
    assert_true(i == INT64_MIN);
    assert_int_equal(knut_conf_get_i64(c, "over", &i, &err), KNUT_EINVAL);
    assert_non_null(strstr(err.message, "64-bit range"));
    assert_int_equal(knut_conf_get_i64(c, "oct", &i, NULL), KNUT_OK);
    assert_int_equal(i, 15);
    assert_int_equal(knut_conf_get_i64(c, "hexbad", &i, NULL), KNUT_EINVAL);
    assert_int_equal(knut_conf_get_i64(c, "sign", &i, NULL), KNUT_EINVAL);
    assert_int_equal(knut_conf_get_i64(c, "exp", &i, NULL), KNUT_EINVAL);
    assert_int_equal(knut_conf_get_f64(c, "exp", &d, NULL), KNUT_OK);
    assert_true(d == 1500.0);
    assert_int_equal(knut_conf_get_f64(c, "max", &d, NULL), KNUT_OK);
    assert_int_equal(knut_conf_get_f64(c, "inf", &d, NULL), KNUT_OK);
    assert_true(isinf(d) && d < 0);
    assert_int_equal(knut_conf_get_f64(c, "nan", &d, NULL), KNUT_OK);
    assert_true(isnan(d));
    assert_int_equal(knut_conf_get_f64(c, "hexfloat", &d, NULL), KNUT_EINVAL);
    assert_int_equal(knut_conf_get_f64(c, "word", &d, NULL), KNUT_EINVAL);
    assert_int_equal(knut_conf_get_f64(c, "sign", &d, NULL), KNUT_EINVAL);
    assert_int_equal(knut_conf_get_bool(c, "f", &b, NULL), KNUT_OK);
    assert_int_equal(b, 0);
    assert_int_equal(knut_conf_get_bool(c, "off", &b, NULL), KNUT_OK);
    assert_int_equal(b, 0);
    assert_int_equal(knut_conf_get_bool(c, "maybe", &b, NULL), KNUT_EINVAL);
    /* Long values are quoted back only in part. */
    assert_int_equal(knut_conf_get_bool(c, "long", &b, &err), KNUT_EINVAL);
    assert_non_null(strstr(err.message, "got 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...'"));
    assert_int_equal(knut_conf_get_i64(c, "max", NULL, &err), KNUT_EINVAL);
    knut_conf_free(c);
}

static void test_core_conf__yaml_syntax_errors_have_positions(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(yaml_bad("a: 1\nb: [1, 2\nc: 3\n", &err), KNUT_EPARSE);
    assert_string_equal(err.message, "config.yml:3:2: did not find expected ',' or ']' "
                                     "(while parsing a flow sequence at 2:4)");
    assert_int_equal(err.line, 3);
    assert_int_equal(err.col, 2);
    assert_string_equal(err.message + err.text_at, "did not find expected ',' or ']' "
                                                   "(while parsing a flow sequence at 2:4)");
    yaml_bad("a: 1\n  b: 2\n", &err);
    assert_int_equal(strncmp(err.message, "config.yml:2:4: mapping values are not allowed", 46), 0);
    /* Invalid UTF-8 is reported where it is. */
    yaml_bad("a: 1\nb: \"x\xff\"\n", &err);
    assert_int_equal(err.code, KNUT_EPARSE);
    assert_int_equal(strncmp(err.message, "config.yml:2:6: invalid leading UTF-8 octet (byte 0xff)",
                             56), 0);
}

static void test_core_conf__yaml_structure_errors(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    yaml_bad("a: 1\nb: 2\na: 3\n", &err);
    assert_string_equal(err.message, "config.yml:3:1: duplicate key 'a' (first at 1:1)");
    /* With several duplicates, the one met first in the document is named. */
    yaml_bad("b: 1\na: 1\nb: 2\na: 2\nb: 3\n", &err);
    assert_string_equal(err.message, "config.yml:3:1: duplicate key 'b' (first at 1:1)");
    yaml_bad("m: {x: 1, y: 2, \"x\": 3}\n", &err);
    assert_string_equal(err.message, "config.yml:1:17: duplicate key 'x' (first at 1:5)");
    assert_int_equal(yaml_bad("a: 1\n---\nb: 2\n", &err), KNUT_EUNSUPPORTED);
    assert_string_equal(err.message,
                        "config.yml:2:1: a config file holds one YAML document, found a second");
    assert_int_equal(yaml_bad("? [a, b]\n: 1\n", &err), KNUT_EUNSUPPORTED);
    assert_string_equal(err.message, "config.yml:1:3: map keys must be scalars");
    yaml_bad("a: *nope\n", &err);
    assert_string_equal(err.message, "config.yml:1:4: alias '*nope' names no anchor defined before it");
    yaml_bad("a: \"x\\0y\"\n", &err);
    assert_string_equal(err.message, "config.yml:1:4: NUL character in a scalar");
    yaml_bad("a: &x [1, *x]\n", &err); /* a node cannot contain itself */
    assert_non_null(strstr(err.message, "alias '*x'"));
    yaml_bad("base: 1\nm:\n  <<: *x\n", &err);
    assert_non_null(strstr(err.message, "names no anchor"));
    yaml_bad("s: &s scalar\nm:\n  <<: *s\n", &err);
    assert_string_equal(err.message,
                        "config.yml:1:4: merge key '<<' expects a map or a list of maps");
}

static void test_core_conf__anchors_and_merge_keys(void **state)
{
    (void)state;
    knut_conf *c = yaml_ok("defaults: &d\n"
                           "  retries: 3\n"
                           "  timeout: 10\n"
                           "extra: &e {timeout: 99, tls: true, retries: 7}\n"
                           "falkor:\n"
                           "  <<: [*d, *e]\n"
                           "  timeout: 5\n"
                           "copy: *d\n"
                           "names: [&n x, *n]\n");
    const knut_conf *f = knut_conf_get(c, "falkor");
    int64_t i;
    int b;
    assert_int_equal(knut_conf_len(f), 3); /* timeout, retries, tls: "<<" itself is gone */
    assert_null(knut_conf_get(f, "<<"));
    assert_int_equal(knut_conf_get_i64(f, "timeout", &i, NULL), KNUT_OK);
    assert_int_equal(i, 5); /* explicit key wins */
    assert_int_equal(knut_conf_get_i64(f, "retries", &i, NULL), KNUT_OK);
    assert_int_equal(i, 3); /* the first merged map wins over the second */
    assert_int_equal(knut_conf_get_bool(f, "tls", &b, NULL), KNUT_OK);
    assert_int_equal(b, 1);
    /* Merged values keep the position of the text they came from. */
    assert_int_equal(knut_conf_line(knut_conf_get(f, "retries")), 2);
    const knut_conf *copy = knut_conf_get(c, "copy");
    assert_int_equal(knut_conf_len(copy), 2);
    assert_int_equal(knut_conf_get_i64(copy, "timeout", &i, NULL), KNUT_OK);
    assert_int_equal(i, 10); /* the anchor itself is unchanged by the merge */
    const knut_conf *names = knut_conf_get(c, "names");
    assert_string_equal(knut_conf_str(knut_conf_at(names, 1)), "x");
    knut_conf_free(c);
}

static void test_core_conf__alias_bomb_is_refused(void **state)
{
    (void)state;
    const char *bomb = "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n"
                       "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
                       "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
                       "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
                       "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
                       "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
                       "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"
                       "h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\n"
                       "i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]\n";
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(yaml_bad(bomb, &err), KNUT_ETOOBIG);
    assert_non_null(strstr(err.message, "aliases expand to more than"));
    assert_int_equal(strncmp(err.message, "config.yml:", 11), 0);
}

static char *nested(int depth, const char *open, const char *close)
{
    size_t lo = strlen(open), lc = strlen(close);
    char *s = malloc((size_t)depth * (lo + lc) + 1);
    char *p = s;
    for (int i = 0; i < depth; i++, p += lo)
        memcpy(p, open, lo);
    for (int i = 0; i < depth; i++, p += lc)
        memcpy(p, close, lc);
    *p = '\0';
    return s;
}

static void test_core_conf__depth_cap(void **state)
{
    (void)state;
    char *ok = nested(64, "[", "]");
    knut_conf *c = yaml_ok(ok);
    knut_conf_free(c);
    free(ok);
    char *deep = nested(65, "[", "]");
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(yaml_bad(deep, &err), KNUT_ETOOBIG);
    assert_string_equal(err.message, "config.yml:1:65: nesting deeper than 64 levels");
    assert_int_equal(json_bad(deep, &err), KNUT_ETOOBIG);
    assert_string_equal(err.message, "config.json:1:65: nesting deeper than 64 levels");
    free(deep);
    /* Aliases cannot smuggle depth past the cap either. */
    char *half = nested(40, "[", "]");
    size_t n = strlen(half) * 2 + 64;
    char *doc = malloc(n);
    snprintf(doc, n, "a: &a %s\nb: [[[[[[[[[[[[[[[[[[[[[[[[[*a]]]]]]]]]]]]]]]]]]]]]]]]]\n", half);
    assert_int_equal(yaml_bad(doc, &err), KNUT_ETOOBIG);
    assert_non_null(strstr(err.message, "deeper than 64"));
    free(doc);
    free(half);
}

static void test_core_conf__oversize_is_refused(void **state)
{
    (void)state;
    size_t n = KNUT_CONF_MAX_BYTES + 1;
    char *big = malloc(n);
    memset(big, '#', n);
    knut_conf *c = NULL;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_conf_load_yaml(&c, big, n, "big.yml", &err), KNUT_ETOOBIG);
    assert_int_equal(strncmp(err.message, "big.yml: config is 16777217 bytes", 33), 0);
    assert_int_equal(knut_conf_load_json(&c, big, n, "big.json", &err), KNUT_ETOOBIG);
    assert_null(c);
    free(big);
}

static void test_core_conf__json_tree_and_errors(void **state)
{
    (void)state;
    const char *text = "{\n"
                       "  \"port\": 8080,\n"
                       "  \"name\": \"a\\/b \\u00e9\",\n"
                       "\t\"list\": [true, null, 1.5],\n"
                       "  \"<<\": {\"x\": 1}\n"
                       "}\n";
    knut_conf *c = NULL;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_conf_load_json(&c, text, strlen(text), "config.json", &err), KNUT_OK);
    int64_t i;
    assert_int_equal(knut_conf_get_i64(c, "port", &i, NULL), KNUT_OK);
    assert_int_equal(i, 8080);
    assert_int_equal(knut_conf_line(knut_conf_get(c, "port")), 2);
    assert_int_equal(knut_conf_col(knut_conf_get(c, "port")), 11);
    assert_string_equal(knut_conf_str(knut_conf_get(c, "name")), "a/b \xc3\xa9");
    const knut_conf *list = knut_conf_get(c, "list");
    assert_int_equal(knut_conf_len(list), 3);
    assert_int_equal(knut_conf_kind_of(knut_conf_at(list, 1)), KNUT_CONF_NULL);
    /* In JSON "<<" is an ordinary key. */
    assert_int_equal(knut_conf_kind_of(knut_conf_get(c, "<<")), KNUT_CONF_MAP);
    const char *s;
    assert_int_equal(knut_conf_get_str(c, "list", &s, &err), KNUT_EINVAL);
    assert_string_equal(err.message, "config.json:4:10: key 'list': expected a string, got a list");
    knut_conf_free(c);

    assert_int_equal(json_bad("{\n  \"a\": 1,\n  \"b\": tru\n}", &err), KNUT_EPARSE);
    assert_string_equal(err.message, "config.json:3:10: invalid token near 'tru'");
    assert_int_equal(err.line, 3);
    assert_int_equal(err.col, 10);
    assert_string_equal(err.message + err.text_at, "invalid token near 'tru'");
    json_bad("{\"a\": 1, \"a\": 2}", &err);
    assert_non_null(strstr(err.message, "duplicate object key"));
    json_bad("{\"a\": 1,}", &err);
    assert_int_equal(strncmp(err.message, "config.json:1:9:", 16), 0);
    json_bad("a: 1\n", &err); /* YAML is not JSON */
    assert_int_equal(err.code, KNUT_EPARSE);
    json_bad("{\"a\": \"x\\u0000y\"}", &err);
    assert_int_equal(err.code, KNUT_EPARSE);
}

static void test_core_conf__json_fallback_without_positions(void **state)
{
    (void)state;
    /* libyaml refuses escaped surrogate pairs; jansson's values are used. */
    const char *text = "{\"emoji\": \"\\ud83d\\ude00\", \"n\": [1, 2.5, false, null],"
                       " \"big\": 12345678901234}";
    knut_conf *c = NULL;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_conf_load_json(&c, text, strlen(text), "f.json", &err), KNUT_OK);
    assert_string_equal(knut_conf_str(knut_conf_get(c, "emoji")), "\xf0\x9f\x98\x80");
    assert_int_equal(knut_conf_line(knut_conf_get(c, "emoji")), 0);
    assert_string_equal(knut_conf_file(knut_conf_get(c, "emoji")), "f.json");
    const knut_conf *n = knut_conf_get(c, "n");
    assert_string_equal(knut_conf_str(knut_conf_at(n, 1)), "2.5");
    assert_string_equal(knut_conf_str(knut_conf_at(n, 2)), "false");
    assert_int_equal(knut_conf_kind_of(knut_conf_at(n, 3)), KNUT_CONF_NULL);
    int64_t i;
    assert_int_equal(knut_conf_get_i64(c, "big", &i, NULL), KNUT_OK);
    assert_true(i == 12345678901234LL);
    assert_int_equal(knut_conf_get_i64(c, "emoji", &i, &err), KNUT_EINVAL);
    assert_int_equal(strncmp(err.message, "f.json: key 'emoji': expected an integer", 40), 0);
    knut_conf_free(c);
}

static void test_core_conf__empty_document(void **state)
{
    (void)state;
    knut_conf *c = yaml_ok("# nothing here\n");
    assert_int_equal(knut_conf_kind_of(c), KNUT_CONF_NULL);
    const char *s;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_conf_get_str(c, "x", &s, &err), KNUT_EINVAL);
    assert_string_equal(err.message, "config.yml:1:1: expected a map holding key 'x', got null");
    knut_conf_free(c);
    c = NULL;
    assert_int_equal(knut_conf_load_yaml(&c, NULL, 0, NULL, NULL), KNUT_OK);
    assert_string_equal(knut_conf_file(c), "<string>");
    knut_conf_free(c);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_core_conf__load_file_by_extension(void **state)
{
    (void)state;
    char dir[] = "/tmp/knut_conf_test_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char yml[256], json[256], missing[256], big[256];
    snprintf(yml, sizeof yml, "%s/a.yml", dir);
    snprintf(json, sizeof json, "%s/b.JSON", dir);
    snprintf(missing, sizeof missing, "%s/none.yml", dir);
    snprintf(big, sizeof big, "%s/big.yml", dir);
    write_file(yml, "port: 1\n");
    write_file(json, "{\"port\": 2}");
    knut_conf *c = NULL;
    knut_error err = KNUT_ERROR_INIT;
    int64_t i;
    assert_int_equal(knut_conf_load_file(&c, yml, &err), KNUT_OK);
    assert_int_equal(knut_conf_get_i64(c, "port", &i, NULL), KNUT_OK);
    assert_int_equal(i, 1);
    assert_string_equal(knut_conf_file(c), yml);
    knut_conf_free(c);
    assert_int_equal(knut_conf_load_file(&c, json, &err), KNUT_OK);
    assert_int_equal(knut_conf_get_i64(c, "port", &i, NULL), KNUT_OK);
    assert_int_equal(i, 2);
    knut_conf_free(c);
    /* A .json file is held to JSON's rules. */
    write_file(json, "port: 2\n");
    assert_int_equal(knut_conf_load_file(&c, json, &err), KNUT_EPARSE);
    assert_int_equal(strncmp(err.message, json, strlen(json)), 0);

    assert_int_equal(knut_conf_load_file(&c, missing, &err), KNUT_ENOTFOUND);
    char want[600];
    snprintf(want, sizeof want, "%s: cannot open: No such file or directory", missing);
    assert_string_equal(err.message, want);
    assert_int_equal(knut_conf_load_file(&c, dir, &err), KNUT_EINVAL);
    assert_non_null(strstr(err.message, "is a directory"));

    FILE *f = fopen(big, "wb");
    assert_non_null(f);
    assert_int_equal(ftruncate(fileno(f), (off_t)KNUT_CONF_MAX_BYTES + 100), 0);
    fclose(f);
    assert_int_equal(knut_conf_load_file(&c, big, &err), KNUT_ETOOBIG);
    assert_non_null(strstr(err.message, "over the 16777216-byte limit"));
    assert_null(c);
    unlink(yml);
    unlink(json);
    unlink(big);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_core_conf__yaml_tree_and_positions),
        cmocka_unit_test(test_core_conf__getter_errors_name_position_and_key),
        cmocka_unit_test(test_core_conf__value_forms),
        cmocka_unit_test(test_core_conf__yaml_syntax_errors_have_positions),
        cmocka_unit_test(test_core_conf__yaml_structure_errors),
        cmocka_unit_test(test_core_conf__anchors_and_merge_keys),
        cmocka_unit_test(test_core_conf__alias_bomb_is_refused),
        cmocka_unit_test(test_core_conf__depth_cap),
        cmocka_unit_test(test_core_conf__oversize_is_refused),
        cmocka_unit_test(test_core_conf__json_tree_and_errors),
        cmocka_unit_test(test_core_conf__json_fallback_without_positions),
        cmocka_unit_test(test_core_conf__empty_document),
        cmocka_unit_test(test_core_conf__load_file_by_extension),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
