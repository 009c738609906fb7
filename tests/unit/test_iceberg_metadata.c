/*
 * Unit tests for Iceberg table metadata: a v2 file as pyiceberg writes
 * it, a v1 file (singular schema and partition-spec), nested types, the
 * refusals (each with the file and JSON path in the message), truncated
 * and deeply nested input, and gzip-compressed files.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "knut/iceberg.h"

/* pyiceberg 0.12's shape (§1.1): two snapshots, a renamed column. */
static const char V2[] =
    "{\"location\":\"file:///tmp/wh/db.db/t\","
    "\"table-uuid\":\"9c12d441-03fe-4693-9a96-a0705ddf69c1\","
    "\"last-updated-ms\":1700000002000,\"last-column-id\":3,"
    "\"schemas\":[{\"type\":\"struct\",\"fields\":[{\"id\":1,\"name\":\"id\",\"type\":\"long\","
    "\"required\":true},{\"id\":2,\"name\":\"name\",\"type\":\"string\",\"required\":false}],"
    "\"schema-id\":0,\"identifier-field-ids\":[]},"
    "{\"type\":\"struct\",\"fields\":[{\"id\":1,\"name\":\"id\",\"type\":\"long\","
    "\"required\":true},{\"id\":2,\"name\":\"label\",\"type\":\"string\",\"required\":false},"
    "{\"id\":3,\"name\":\"price\",\"type\":\"decimal(9, 2)\",\"required\":false}],"
    "\"schema-id\":1,\"identifier-field-ids\":[]}],"
    "\"current-schema-id\":1,"
    "\"partition-specs\":[{\"spec-id\":0,\"fields\":[]}],\"default-spec-id\":0,"
    "\"last-partition-id\":999,"
    "\"properties\":{\"write.parquet.compression-codec\":\"zstd\",\"owner\":\"me\"},"
    "\"current-snapshot-id\":222,"
    "\"snapshots\":[{\"snapshot-id\":111,\"sequence-number\":1,"
    "\"timestamp-ms\":1700000000000,"
    "\"manifest-list\":\"file:///tmp/wh/db.db/t/metadata/snap-111-0-a.avro\","
    "\"summary\":{\"operation\":\"append\",\"added-records\":\"3\",\"total-records\":\"3\"},"
    "\"schema-id\":0},"
    "{\"snapshot-id\":222,\"parent-snapshot-id\":111,\"sequence-number\":2,"
    "\"timestamp-ms\":1700000001000,"
    "\"manifest-list\":\"file:///tmp/wh/db.db/t/metadata/snap-222-0-b.avro\","
    "\"summary\":{\"added-records\":\"2\",\"operation\":\"append\"},\"schema-id\":1}],"
    "\"snapshot-log\":[{\"snapshot-id\":111,\"timestamp-ms\":1700000000000}],"
    "\"metadata-log\":[],\"sort-orders\":[{\"order-id\":0,\"fields\":[]}],"
    "\"default-sort-order-id\":0,"
    "\"refs\":{\"main\":{\"snapshot-id\":222,\"type\":\"branch\"}},"
    "\"statistics\":[],\"partition-statistics\":[],"
    "\"format-version\":2,\"last-sequence-number\":2}";

static knut_iceberg_table *parse_ok(const char *text)
{
    knut_iceberg_table *t = NULL;
    knut_error err = KNUT_ERROR_INIT;
    if (knut_iceberg_table_parse(&t, text, strlen(text), "t.json", &err) != KNUT_OK)
        fail_msg("unexpected error: %s", err.message);
    return t;
}

static knut_status parse_bad(const char *text, size_t len, knut_error *err)
{
    knut_iceberg_table *t = (knut_iceberg_table *)(uintptr_t)1;
    knut_status st = knut_iceberg_table_parse(&t, text, len, "t.json", err);
    assert_true(st != KNUT_OK);
    assert_int_equal(err->code, st);
    assert_null(t);
    return st;
}

/* V2 with the first occurrence of from replaced by to. */
static char *v2_with(const char *from, const char *to)
{
    const char *at = strstr(V2, from);
    if (!at)
        fail_msg("the test's V2 has no '%s'", from);
    size_t n = strlen(V2) - strlen(from) + strlen(to) + 1;
    char *s = malloc(n);
    assert_non_null(s);
    snprintf(s, n, "%.*s%s%s", (int)(at - V2), V2, to, at + strlen(from));
    return s;
}

static void expect_bad(const char *from, const char *to, knut_status code, const char *msg)
{
    char *s = v2_with(from, to);
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(parse_bad(s, strlen(s), &err), code);
    if (!strstr(err.message, msg))
        fail_msg("message '%s' lacks '%s'", err.message, msg);
    free(s);
}

static void test_iceberg_metadata__v2_pyiceberg(void **state)
{
    (void)state;
    knut_iceberg_table *t = parse_ok(V2);
    assert_string_equal(t->metadata_path, "t.json");
    assert_int_equal(t->format_version, 2);
    assert_string_equal(t->uuid, "9c12d441-03fe-4693-9a96-a0705ddf69c1");
    assert_string_equal(t->location, "file:///tmp/wh/db.db/t");
    assert_int_equal(t->last_sequence_number, 2);
    assert_int_equal(t->last_updated_ms, 1700000002000LL);
    assert_int_equal(t->last_column_id, 3);
    assert_int_equal(t->current_snapshot_id, 222);
    assert_int_equal(t->current_schema_id, 1);
    assert_int_equal(t->n_schemas, 2);
    const knut_iceberg_schema *s = knut_iceberg_table_schema(t, 1);
    assert_non_null(s);
    assert_int_equal(s->n_fields, 3);
    assert_string_equal(s->fields[1].name, "label");
    assert_int_equal(s->fields[1].id, 2);
    assert_false(s->fields[1].required);
    assert_true(s->fields[0].required);
    assert_string_equal(s->fields[2].type, "decimal(9, 2)"); /* as written */
    assert_null(knut_iceberg_table_schema(t, 7));
    assert_int_equal(t->n_specs, 1);
    assert_int_equal(knut_iceberg_table_spec(t, 0)->n_fields, 0);
    assert_null(knut_iceberg_table_spec(t, 1));
    assert_int_equal(t->n_snapshots, 2);
    const knut_iceberg_snapshot *a = knut_iceberg_table_snapshot(t, 111);
    const knut_iceberg_snapshot *b = knut_iceberg_table_snapshot(t, 222);
    assert_int_equal(a->parent_id, -1);
    assert_int_equal(b->parent_id, 111);
    assert_int_equal(b->sequence_number, 2);
    assert_int_equal(b->schema_id, 1);
    assert_string_equal(b->operation, "append");
    assert_string_equal(a->manifest_list, "file:///tmp/wh/db.db/t/metadata/snap-111-0-a.avro");
    /* operation is taken out of the summary; the rest stays in file order */
    assert_int_equal(a->n_summary, 2);
    assert_string_equal(a->summary_keys[0], "added-records");
    assert_string_equal(a->summary_values[1], "3");
    assert_int_equal(b->n_summary, 1);
    assert_null(knut_iceberg_table_snapshot(t, 333));
    assert_string_equal(knut_iceberg_table_property(t, "owner"), "me");
    assert_null(knut_iceberg_table_property(t, "nope"));
    knut_iceberg_table_free(t);
}

static void test_iceberg_metadata__v1(void **state)
{
    (void)state;
    static const char v1[] =
        "{\"format-version\":1,\"location\":\"/tmp/v1\",\"last-updated-ms\":5,"
        "\"last-column-id\":2,"
        "\"schema\":{\"type\":\"struct\",\"fields\":[{\"id\":1,\"name\":\"a\",\"required\":true,"
        "\"type\":\"int\"},{\"id\":2,\"name\":\"d\",\"required\":false,\"type\":\"date\"}]},"
        "\"partition-spec\":[{\"name\":\"d_day\",\"transform\":\"day\",\"source-id\":2}],"
        "\"current-snapshot-id\":-1,"
        "\"snapshots\":[{\"snapshot-id\":9,\"timestamp-ms\":4,\"manifest-list\":\"/tmp/v1/m.avro\","
        "\"sequence-number\":7}]}";
    knut_iceberg_table *t = parse_ok(v1);
    assert_int_equal(t->format_version, 1);
    assert_null(t->uuid);
    assert_int_equal(t->current_snapshot_id, -1);
    assert_int_equal(t->n_schemas, 1);
    assert_int_equal(t->schemas[0].schema_id, 0);
    assert_int_equal(t->current_schema_id, 0);
    assert_int_equal(t->n_specs, 1);
    assert_int_equal(t->default_spec_id, 0);
    assert_int_equal(t->specs[0].fields[0].field_id, 1000);
    assert_int_equal(t->specs[0].fields[0].source_id, 2);
    assert_string_equal(t->specs[0].fields[0].transform, "day");
    assert_int_equal(t->snapshots[0].sequence_number, 0); /* v1: always 0 */
    assert_string_equal(t->snapshots[0].operation, "");
    knut_iceberg_table_free(t);

    /* v1 inline manifests are refused naming the snapshot */
    static const char inl[] =
        "{\"format-version\":1,\"location\":\"/tmp/v1\",\"last-updated-ms\":5,"
        "\"last-column-id\":0,\"schema\":{\"type\":\"struct\",\"fields\":[]},"
        "\"partition-spec\":[],\"snapshots\":[{\"snapshot-id\":9,\"timestamp-ms\":4,"
        "\"manifests\":[\"/tmp/v1/m1.avro\"]}]}";
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(parse_bad(inl, strlen(inl), &err), KNUT_EUNSUPPORTED);
    assert_non_null(strstr(err.message, "t.json: snapshots[0]: snapshot 9 lists its manifests"));
}

static void test_iceberg_metadata__nested(void **state)
{
    (void)state;
    char *s = v2_with(
        "{\"id\":3,\"name\":\"price\",\"type\":\"decimal(9, 2)\",\"required\":false}",
        "{\"id\":3,\"name\":\"tags\",\"required\":false,\"type\":{\"type\":\"list\","
        "\"element-id\":4,\"element-required\":true,\"element\":\"string\"}},"
        "{\"id\":5,\"name\":\"attrs\",\"required\":true,\"type\":{\"type\":\"map\",\"key-id\":6,"
        "\"key\":\"string\",\"value-id\":7,\"value-required\":false,\"value\":{\"type\":\"struct\","
        "\"fields\":[{\"id\":8,\"name\":\"x\",\"required\":false,\"type\":\"fixed[16]\"}]}}}");
    knut_iceberg_table *t = parse_ok(s);
    const knut_iceberg_schema *sc = knut_iceberg_table_schema(t, 1);
    assert_int_equal(sc->n_fields, 4);
    const knut_iceberg_field *tags = &sc->fields[2], *attrs = &sc->fields[3];
    assert_string_equal(tags->type, "list");
    assert_int_equal(tags->n_children, 1);
    assert_string_equal(tags->children[0].name, "element");
    assert_int_equal(tags->children[0].id, 4);
    assert_true(tags->children[0].required);
    assert_string_equal(tags->children[0].type, "string");
    assert_string_equal(attrs->type, "map");
    assert_int_equal(attrs->n_children, 2);
    assert_string_equal(attrs->children[0].name, "key");
    assert_int_equal(attrs->children[0].id, 6);
    assert_true(attrs->children[0].required);
    const knut_iceberg_field *val = &attrs->children[1];
    assert_string_equal(val->name, "value");
    assert_int_equal(val->id, 7);
    assert_false(val->required);
    assert_string_equal(val->type, "struct");
    assert_int_equal(val->n_children, 1);
    assert_string_equal(val->children[0].type, "fixed[16]");
    assert_int_equal(val->children[0].id, 8);
    knut_iceberg_table_free(t);
    free(s);

    /* a missing element-id names the nested path */
    expect_bad("\"type\":\"decimal(9, 2)\"",
               "\"type\":{\"type\":\"list\",\"element-required\":true,\"element\":\"int\"}",
               KNUT_EPARSE, "t.json: schemas[1].fields[2].type.element-id: missing");
    expect_bad("\"type\":\"decimal(9, 2)\"", "\"type\":\"list\"", KNUT_EPARSE,
               "schemas[1].fields[2].type: 'list' is a nested type: expected an object");
    expect_bad("\"type\":\"decimal(9, 2)\"", "\"type\":{\"type\":\"variant2\"}", KNUT_EPARSE,
               "schemas[1].fields[2].type.type: unknown nested type 'variant2'");
}

static void test_iceberg_metadata__refusals(void **state)
{
    (void)state;
    expect_bad("\"format-version\":2", "\"format-version\":3", KNUT_EUNSUPPORTED,
               "t.json: format-version: format version 3 is not supported yet");
    expect_bad("\"format-version\":2", "\"format-version\":4", KNUT_EUNSUPPORTED,
               "format version 4 is not supported yet");
    expect_bad("\"format-version\":2", "\"format-version\":0", KNUT_EPARSE,
               "format-version: 0 is not a format version");
    expect_bad("\"format-version\":2", "\"format-version\":\"2\"", KNUT_EPARSE,
               "format-version: expected an integer, got a string");
    expect_bad("\"current-schema-id\":1", "\"current-schema-id\":5", KNUT_EPARSE,
               "t.json: current-schema-id: no schema has id 5");
    expect_bad("\"default-spec-id\":0", "\"default-spec-id\":3", KNUT_EPARSE,
               "default-spec-id: no partition spec has id 3");
    expect_bad("\"current-snapshot-id\":222", "\"current-snapshot-id\":5", KNUT_EPARSE,
               "current-snapshot-id: no snapshot has id 5");
    expect_bad("\"added-records\":\"2\",\"operation\":\"append\"", "\"added-records\":\"2\"",
               KNUT_EPARSE, "t.json: snapshots[1].summary.operation: missing");
    expect_bad("\"added-records\":\"3\"", "\"added-records\":3", KNUT_EPARSE,
               "snapshots[0].summary.added-records: expected a string");
    expect_bad("\"required\":true}", "\"required\":\"yes\"}", KNUT_EPARSE,
               "schemas[0].fields[0].required: expected true or false, got a string");
    expect_bad("\"last-column-id\":3", "\"last-column-id\":3.5", KNUT_EPARSE,
               "last-column-id: expected an integer, got a number with a fraction");
    expect_bad("\"last-column-id\":3", "\"last-column-id\":4294967296", KNUT_EPARSE,
               "last-column-id: 4294967296 is out of range");
    expect_bad("\"snapshots\":[", "\"snapshots\":{\"a\":1},\"x\":[", KNUT_EPARSE,
               "snapshots: expected a list, got an object");
    expect_bad("\"owner\":\"me\"", "\"owner\":null", KNUT_EPARSE,
               "properties.owner: expected a string");
    expect_bad("\"location\"", "\"location\":1,\"location\"", KNUT_EPARSE, "duplicate");
    expect_bad("\"snapshot-id\":222,", "\"snapshot-id\":111,", KNUT_EPARSE,
               "t.json: snapshots: two entries have id 111");
    expect_bad("\"schema-id\":1,", "\"schema-id\":0,", KNUT_EPARSE,
               "t.json: schemas: two entries have id 0");

    /* every v2 required field, one at a time */
    static const char *const req[][2] = {
        {"\"table-uuid\":", "table-uuid"},
        {"\"location\":", "location"},
        {"\"last-sequence-number\":", "last-sequence-number"},
        {"\"last-updated-ms\":", "last-updated-ms"},
        {"\"last-column-id\":", "last-column-id"},
        {"\"schemas\":", "schemas"},
        {"\"current-schema-id\":", "current-schema-id"},
        {"\"partition-specs\":", "partition-specs"},
        {"\"default-spec-id\":", "default-spec-id"},
        {"\"last-partition-id\":", "last-partition-id"},
        {"\"sort-orders\":", "sort-orders"},
        {"\"default-sort-order-id\":", "default-sort-order-id"},
        {"\"snapshot-id\":111,", "snapshots[0].snapshot-id"},
        {"\"sequence-number\":1,", "snapshots[0].sequence-number"},
        {"\"timestamp-ms\":1700000000000,", "snapshots[0].timestamp-ms"},
        {"\"manifest-list\":", "snapshots[0].manifest-list"},
        {"\"summary\":", "snapshots[0].summary"},
        {"\"schema-id\":0,", "schemas[0].schema-id"},
        {"\"spec-id\":0,", "partition-specs[0].spec-id"},
        {"\"name\":\"id\",", "schemas[0].fields[0].name"},
    };
    for (size_t i = 0; i < sizeof req / sizeof req[0]; i++) {
        /* renaming the key to "x<key>" makes it absent */
        char to[64], msg[96];
        snprintf(to, sizeof to, "\"x%s", req[i][0] + 1);
        snprintf(msg, sizeof msg, "t.json: %s: missing", req[i][1]);
        expect_bad(req[i][0], to, KNUT_EPARSE, msg);
    }
}

static void test_iceberg_metadata__no_current_snapshot(void **state)
{
    (void)state;
    const char *forms[] = {"\"current-snapshot-id\":null", "\"current-snapshot-id\":-1",
                           "\"no-current-snapshot-id\":0"};
    for (size_t i = 0; i < 3; i++) {
        char *s = v2_with("\"current-snapshot-id\":222", forms[i]);
        knut_iceberg_table *t = parse_ok(s);
        assert_int_equal(t->current_snapshot_id, -1);
        knut_iceberg_table_free(t);
        free(s);
    }
}

static void test_iceberg_metadata__truncated_and_deep(void **state)
{
    (void)state;
    size_t n = strlen(V2);
    /* every prefix is refused cleanly, never half-parsed */
    for (size_t len = 0; len < n; len += (len < 64 ? 1 : 37)) {
        knut_error err = KNUT_ERROR_INIT;
        assert_int_equal(parse_bad(V2, len, &err), KNUT_EPARSE);
        assert_non_null(strstr(err.message, "t.json"));
    }
    /* a list of lists nested past the cap */
    knut_buf b = KNUT_BUF_INIT;
    for (int i = 0; i < 40; i++)
        knut_buf_printf(&b, "{\"type\":\"list\",\"element-id\":%d,\"element-required\":true,"
                            "\"element\":", 10 + i);
    knut_buf_puts(&b, "\"int\"");
    for (int i = 0; i < 40; i++)
        knut_buf_putc(&b, '}');
    char *s = v2_with("\"decimal(9, 2)\"", b.data);
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(parse_bad(s, strlen(s), &err), KNUT_ETOOBIG);
    assert_non_null(strstr(err.message, "nested deeper than 32"));
    free(s);
    knut_buf_reset(&b);
    /* over the cap: refused before a byte is read */
    assert_int_equal(parse_bad(V2, KNUT_ICEBERG_METADATA_MAX + 1, &err), KNUT_ETOOBIG);
    assert_non_null(strstr(err.message, "over the 67108864-byte limit"));
    /* not an object at all */
    assert_int_equal(parse_bad("[1,2]", 5, &err), KNUT_EPARSE);
    assert_non_null(strstr(err.message, "t.json: not table metadata"));
}

static void write_gz(const char *path, const char *text, int members)
{
    gzFile g = gzopen(path, "wb");
    assert_non_null(g);
    size_t n = strlen(text), cut = members > 1 ? n / 2 : n;
    assert_int_equal(gzwrite(g, text, (unsigned)cut), (int)cut);
    assert_int_equal(gzclose(g), Z_OK);
    if (members > 1) { /* a second gzip member appended */
        g = gzopen(path, "ab");
        assert_int_equal(gzwrite(g, text + cut, (unsigned)(n - cut)), (int)(n - cut));
        assert_int_equal(gzclose(g), Z_OK);
    }
}

static void test_iceberg_metadata__files_and_gzip(void **state)
{
    (void)state;
    char dir[] = "/tmp/knut_ice_meta_XXXXXX", p[256];
    assert_non_null(mkdtemp(dir));
    const char *names[] = {"v1.gz.metadata.json", "v2.metadata.json.gz", "plain.metadata.json"};
    for (int i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        if (i < 2) {
            write_gz(p, V2, i + 1);
        } else {
            knut_error werr = KNUT_ERROR_INIT;
            assert_int_equal(knut_file_write_atomic(p, V2, strlen(V2), &werr), KNUT_OK);
        }
        knut_iceberg_table *t = NULL;
        knut_error err = KNUT_ERROR_INIT;
        if (knut_iceberg_table_load(&t, p, &err) != KNUT_OK)
            fail_msg("%s: %s", names[i], err.message);
        assert_string_equal(t->metadata_path, p);
        assert_int_equal(t->current_snapshot_id, 222);
        knut_iceberg_table_free(t);
        unlink(p);
    }
    /* corrupt and truncated gzip, and a missing file */
    snprintf(p, sizeof p, "%s/bad.gz.metadata.json", dir);
    write_gz(p, V2, 1);
    FILE *f = fopen(p, "r+b");
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    assert_int_equal(ftruncate(fileno(f), size / 2), 0);
    fclose(f);
    knut_iceberg_table *t = NULL;
    knut_error err = KNUT_ERROR_INIT;
    assert_int_equal(knut_iceberg_table_load(&t, p, &err), KNUT_EPARSE);
    assert_non_null(strstr(err.message, "bad.gz.metadata.json: gzip data is truncated"));
    knut_error_clear(&err);
    assert_int_equal(knut_file_write_atomic(p, "\x1f\x8bnot gzip", 10, &err), KNUT_OK);
    assert_int_equal(knut_iceberg_table_load(&t, p, &err), KNUT_EPARSE);
    assert_non_null(strstr(err.message, "not valid gzip"));
    unlink(p);
    assert_int_equal(knut_iceberg_table_load(&t, p, &err), KNUT_ENOTFOUND);
    assert_null(t);
    assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_iceberg_metadata__v2_pyiceberg),
        cmocka_unit_test(test_iceberg_metadata__v1),
        cmocka_unit_test(test_iceberg_metadata__nested),
        cmocka_unit_test(test_iceberg_metadata__refusals),
        cmocka_unit_test(test_iceberg_metadata__no_current_snapshot),
        cmocka_unit_test(test_iceberg_metadata__truncated_and_deep),
        cmocka_unit_test(test_iceberg_metadata__files_and_gzip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
