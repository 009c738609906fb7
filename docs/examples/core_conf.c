/*
 * core_conf: loading a YAML config into a knut_conf tree and reading it with
 * the typed getters. Every node remembers file:line:column, so a wrong or
 * missing value is reported where it is in the file. The text here is in
 * memory (knut_conf_load_yaml / _json with a display name); a file on disk
 * goes through knut_conf_load_file, which picks JSON for a ".json" name and
 * YAML otherwise. The second half shows the error messages of the getters
 * and of the YAML and JSON parsers.
 */
#include <stdio.h>
#include <string.h>

#include <knut/core.h>

static const char yaml[] =
    "defaults: &defaults\n"
    "  port: 6379\n"
    "  tls: off\n"
    "sinks:\n"
    "  - name: graph\n"
    "    <<: *defaults\n"
    "    port: 0x1F90\n"
    "    weight: .inf\n"
    "  - name: cache\n"
    "    <<: *defaults\n"
    "    timeout: 2.5s\n"
    "    note: ~\n";

static void show_error(knut_status st, const knut_error *err)
{
    printf("  %s: %s\n", knut_strerror(st), err->message);
}

int main(void)
{
    knut_error err = KNUT_ERROR_INIT;
    knut_conf *root = NULL;
    knut_status st = knut_conf_load_yaml(&root, yaml, strlen(yaml), "knut.yml", &err);
    if (st != KNUT_OK) {
        show_error(st, &err);
        return 1;
    }
    const knut_conf *sinks = knut_conf_get(root, "sinks");
    for (size_t i = 0; i < knut_conf_len(sinks); i++) {
        const knut_conf *s = knut_conf_at(sinks, i);
        const char *name = NULL;
        int64_t port = 0;
        int tls = -1;
        if (knut_conf_get_str(s, "name", &name, &err) != KNUT_OK ||
            knut_conf_get_i64(s, "port", &port, &err) != KNUT_OK ||
            knut_conf_get_bool(s, "tls", &tls, &err) != KNUT_OK) {
            show_error(err.code, &err);
            continue;
        }
        printf("sink %s at %s:%d:%d: port %lld, tls %d, %zu keys\n", name, knut_conf_file(s),
               knut_conf_line(s), knut_conf_col(s), (long long)port, tls, knut_conf_len(s));
    }
    const knut_conf *graph = knut_conf_at(sinks, 0), *cache = knut_conf_at(sinks, 1);
    double weight = 0, timeout = 0;
    if (knut_conf_get_f64(graph, "weight", &weight, &err) == KNUT_OK)
        printf("graph weight: %g\n", weight);
    printf("cache note is null: %d\n",
           knut_conf_kind_of(knut_conf_get(cache, "note")) == KNUT_CONF_NULL);

    printf("getter errors:\n");
    show_error(knut_conf_get_f64(cache, "timeout", &timeout, &err), &err);
    show_error(knut_conf_get_i64(cache, "retries", &(int64_t){0}, &err), &err);
    show_error(knut_conf_get_str(root, "sinks", &(const char *){NULL}, &err), &err);
    knut_conf_free(root);

    printf("parse errors:\n");
    const char *bad_yaml = "a: 1\nb: [1, 2\nc: 3\n";
    show_error(knut_conf_load_yaml(&root, bad_yaml, strlen(bad_yaml), "bad.yml", &err), &err);
    const char *dup = "a: 1\nb: 2\na: 3\n";
    show_error(knut_conf_load_yaml(&root, dup, strlen(dup), "dup.yml", &err), &err);
    const char *bad_json = "{\"a\": 1,\n \"b\": }\n";
    show_error(knut_conf_load_json(&root, bad_json, strlen(bad_json), "bad.json", &err), &err);
    show_error(knut_conf_load_file(&root, "/nonexistent/knut.yml", &err), &err);
    return 0;
}
