/*
 * Flight SQL commands from bytes: Any unpacking by type name, descriptors,
 * and the refusals (empty, not an Any, unknown type, bytes that are not
 * the named message, path descriptors), each with its status.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "serve/serve_int.h"

static void pack_query(knut_buf *out, const char *sql)
{
    knut_error err = KNUT_ERROR_INIT;
    KnutServe__Flightsql__CommandStatementQuery q =
        KNUT_SERVE__FLIGHTSQL__COMMAND_STATEMENT_QUERY__INIT;
    q.query = (char *)sql;
    assert_int_equal(knut_serve__any_pack("CommandStatementQuery", &q.base, out, &err), KNUT_OK);
}

static void test_roundtrip(void **state)
{
    (void)state;
    knut_buf b = KNUT_BUF_INIT;
    knut_error err = KNUT_ERROR_INIT;
    knut_serve__cmd cmd = KNUT_SERVE__CMD_INIT;
    pack_query(&b, "SELECT 1");
    assert_int_equal(knut_serve__cmd_parse((const uint8_t *)b.data, b.len, &cmd, &err), KNUT_OK);
    assert_int_equal(cmd.kind, KNUT_SERVE__CMD_STATEMENT_QUERY);
    assert_string_equal(cmd.name, "CommandStatementQuery");
    assert_string_equal(((KnutServe__Flightsql__CommandStatementQuery *)cmd.msg)->query,
                        "SELECT 1");
    knut_serve__cmd_reset(&cmd);
    assert_null(cmd.msg);
    knut_buf_reset(&b);
}

static void test_refusals(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    knut_serve__cmd cmd = KNUT_SERVE__CMD_INIT;
    assert_int_equal(knut_serve__cmd_parse((const uint8_t *)"", 0, &cmd, &err), KNUT_EPARSE);
    assert_non_null(strstr(err.message, "empty command"));
    const uint8_t junk[] = {0xff, 0xff, 0xff};
    assert_int_equal(knut_serve__cmd_parse(junk, sizeof junk, &cmd, &err), KNUT_EPARSE);
    assert_null(cmd.msg);

    /* an Any of a type this server does not know: named (printable) */
    KnutServe__Flightsql__Any any = KNUT_SERVE__FLIGHTSQL__ANY__INIT;
    any.type_url = "type.googleapis.com/arrow.flight.protocol.sql.CommandGetXdbc\x01TypeInfo";
    knut_buf b = KNUT_BUF_INIT;
    assert_int_equal(knut_serve__pack(&any.base, &b, &err), KNUT_OK);
    assert_int_equal(knut_serve__cmd_parse((const uint8_t *)b.data, b.len, &cmd, &err),
                     KNUT_EUNSUPPORTED);
    assert_non_null(strstr(err.message, "CommandGetXdbc?TypeInfo"));
    /* the right name, a value that is not the message */
    any.type_url = "type.googleapis.com/arrow.flight.protocol.sql.CommandGetTables";
    any.value.data = (uint8_t *)"\x0a\x7f";
    any.value.len = 2;
    assert_int_equal(knut_serve__pack(&any.base, &b, &err), KNUT_OK);
    assert_int_equal(knut_serve__cmd_parse((const uint8_t *)b.data, b.len, &cmd, &err),
                     KNUT_EPARSE);
    assert_non_null(strstr(err.message, "malformed CommandGetTables"));
    /* the package matters, the URL's host does not */
    any.type_url = "example.org/arrow.flight.protocol.sql.CommandGetCatalogs";
    any.value.len = 0;
    assert_int_equal(knut_serve__pack(&any.base, &b, &err), KNUT_OK);
    assert_int_equal(knut_serve__cmd_parse((const uint8_t *)b.data, b.len, &cmd, &err), KNUT_OK);
    assert_int_equal(cmd.kind, KNUT_SERVE__CMD_GET_CATALOGS);
    knut_serve__cmd_reset(&cmd);
    any.type_url = "type.googleapis.com/other.CommandGetCatalogs";
    assert_int_equal(knut_serve__pack(&any.base, &b, &err), KNUT_OK);
    assert_int_equal(knut_serve__cmd_parse((const uint8_t *)b.data, b.len, &cmd, &err),
                     KNUT_EUNSUPPORTED);
    knut_buf_reset(&b);
}

static void test_descriptors(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    knut_serve__cmd cmd = KNUT_SERVE__CMD_INIT;
    KnutServe__FlightDescriptor *d = NULL;
    knut_buf q = KNUT_BUF_INIT, b = KNUT_BUF_INIT;
    pack_query(&q, "SELECT 2");
    KnutServe__FlightDescriptor fd = KNUT_SERVE__FLIGHT_DESCRIPTOR__INIT;
    fd.type = KNUT_SERVE__FLIGHT_DESCRIPTOR__DESCRIPTOR_TYPE__CMD;
    fd.cmd.data = (uint8_t *)q.data;
    fd.cmd.len = q.len;
    assert_int_equal(knut_serve__pack(&fd.base, &b, &err), KNUT_OK);
    assert_int_equal(knut_serve__descriptor_parse((const uint8_t *)b.data, b.len, &d, &cmd, &err),
                     KNUT_OK);
    assert_non_null(d);
    assert_int_equal(cmd.kind, KNUT_SERVE__CMD_STATEMENT_QUERY);
    knut_serve__flight_descriptor__free_unpacked(d, NULL);
    knut_serve__cmd_reset(&cmd);

    char *path[] = {"people"};
    fd.type = KNUT_SERVE__FLIGHT_DESCRIPTOR__DESCRIPTOR_TYPE__PATH;
    fd.n_path = 1;
    fd.path = path;
    assert_int_equal(knut_serve__pack(&fd.base, &b, &err), KNUT_OK);
    assert_int_equal(knut_serve__descriptor_parse((const uint8_t *)b.data, b.len, &d, &cmd, &err),
                     KNUT_EUNSUPPORTED);
    assert_null(d);
    fd.type = KNUT_SERVE__FLIGHT_DESCRIPTOR__DESCRIPTOR_TYPE__UNKNOWN;
    assert_int_equal(knut_serve__pack(&fd.base, &b, &err), KNUT_OK);
    assert_int_equal(knut_serve__descriptor_parse((const uint8_t *)b.data, b.len, &d, &cmd, &err),
                     KNUT_EPARSE);
    /* truncated */
    assert_int_equal(knut_serve__descriptor_parse((const uint8_t *)"\x12\x09" "ab", 4, &d, &cmd,
                                                  &err),
                     KNUT_EPARSE);
    assert_null(d);
    assert_null(cmd.msg);
    knut_buf_reset(&q);
    knut_buf_reset(&b);
}

static void test_flightdata_to_ipc(void **state)
{
    (void)state;
    knut_error err = KNUT_ERROR_INIT;
    knut_buf ipc = KNUT_BUF_INIT;
    KnutServe__FlightData fd = KNUT_SERVE__FLIGHT_DATA__INIT;
    /* descriptor-only: nothing */
    assert_int_equal(knut_serve__flightdata_to_ipc(&fd, &ipc, &err), KNUT_OK);
    assert_int_equal(ipc.len, 0);
    fd.data_header.data = (uint8_t *)"abcde";
    fd.data_header.len = 5;
    fd.data_body.data = (uint8_t *)"12345678";
    fd.data_body.len = 8;
    assert_int_equal(knut_serve__flightdata_to_ipc(&fd, &ipc, &err), KNUT_OK);
    /* marker, length padded to 8, header + 3 zeros, body */
    assert_int_equal(ipc.len, 8 + 8 + 8);
    uint32_t w[2];
    memcpy(w, ipc.data, 8);
    assert_int_equal(w[0], 0xFFFFFFFFu);
    assert_int_equal(w[1], 8);
    assert_memory_equal(ipc.data + 8, "abcde\0\0\0", 8);
    assert_memory_equal(ipc.data + 16, "12345678", 8);
    knut_buf_reset(&ipc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_descriptors),
        cmocka_unit_test(test_flightdata_to_ipc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
