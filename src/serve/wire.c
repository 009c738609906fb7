/*
 * Flight SQL commands on the wire: a FlightDescriptor (or a ticket) holds
 * a serialized Any whose type_url names the command message. The type is
 * found by the part of the URL after its last '/' (as Any's unpackers do)
 * in a fixed table, then the value is unpacked as that message. Anything
 * else is refused with a status that says which part was wrong; nothing
 * of the request is trusted before protobuf-c has checked it.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "serve_int.h"

#define SQL_PKG "arrow.flight.protocol.sql."

typedef struct cmd_type {
    const char *name; /* after SQL_PKG */
    knut_serve__cmd_kind kind;
    const ProtobufCMessageDescriptor *desc;
} cmd_type;

static const cmd_type cmd_types[] = {
    {"CommandStatementQuery", KNUT_SERVE__CMD_STATEMENT_QUERY,
     &knut_serve__flightsql__command_statement_query__descriptor},
    {"CommandStatementUpdate", KNUT_SERVE__CMD_STATEMENT_UPDATE,
     &knut_serve__flightsql__command_statement_update__descriptor},
    {"TicketStatementQuery", KNUT_SERVE__CMD_TICKET_STATEMENT,
     &knut_serve__flightsql__ticket_statement_query__descriptor},
    {"CommandPreparedStatementQuery", KNUT_SERVE__CMD_PREPARED_QUERY,
     &knut_serve__flightsql__command_prepared_statement_query__descriptor},
    {"CommandPreparedStatementUpdate", KNUT_SERVE__CMD_PREPARED_UPDATE,
     &knut_serve__flightsql__command_prepared_statement_update__descriptor},
    {"CommandGetCatalogs", KNUT_SERVE__CMD_GET_CATALOGS,
     &knut_serve__flightsql__command_get_catalogs__descriptor},
    {"CommandGetDbSchemas", KNUT_SERVE__CMD_GET_DB_SCHEMAS,
     &knut_serve__flightsql__command_get_db_schemas__descriptor},
    {"CommandGetTables", KNUT_SERVE__CMD_GET_TABLES,
     &knut_serve__flightsql__command_get_tables__descriptor},
    {"CommandGetTableTypes", KNUT_SERVE__CMD_GET_TABLE_TYPES,
     &knut_serve__flightsql__command_get_table_types__descriptor},
    {"CommandGetSqlInfo", KNUT_SERVE__CMD_GET_SQL_INFO,
     &knut_serve__flightsql__command_get_sql_info__descriptor},
    {"CommandGetXdbcTypeInfo", KNUT_SERVE__CMD_GET_XDBC_TYPE_INFO,
     &knut_serve__flightsql__command_get_xdbc_type_info__descriptor},
    {"CommandGetPrimaryKeys", KNUT_SERVE__CMD_GET_PRIMARY_KEYS,
     &knut_serve__flightsql__command_get_primary_keys__descriptor},
    {"CommandGetExportedKeys", KNUT_SERVE__CMD_GET_EXPORTED_KEYS,
     &knut_serve__flightsql__command_get_exported_keys__descriptor},
    {"CommandGetImportedKeys", KNUT_SERVE__CMD_GET_IMPORTED_KEYS,
     &knut_serve__flightsql__command_get_imported_keys__descriptor},
    {"CommandGetCrossReference", KNUT_SERVE__CMD_GET_CROSS_REFERENCE,
     &knut_serve__flightsql__command_get_cross_reference__descriptor},
};

/* A type name from the request, fit for a message: printable, cut. */
static void quote_name(char *dst, size_t n, const char *s, size_t len)
{
    size_t k = 0;
    for (size_t i = 0; i < len && k + 1 < n; i++)
        dst[k++] = isprint((unsigned char)s[i]) ? s[i] : '?';
    dst[k] = 0;
}

void knut_serve__cmd_reset(knut_serve__cmd *c)
{
    if (c && c->msg)
        protobuf_c_message_free_unpacked(c->msg, NULL);
    if (c)
        *c = (knut_serve__cmd)KNUT_SERVE__CMD_INIT;
}

knut_status knut_serve__cmd_parse(const uint8_t *data, size_t len, knut_serve__cmd *out,
                                  knut_error *err)
{
    KNUT_ASSERT_ARG(err, out && (data || len == 0));
    *out = (knut_serve__cmd)KNUT_SERVE__CMD_INIT;
    if (len == 0)
        return knut_error_set(err, KNUT_EPARSE, "empty command: expected a Flight SQL command "
                                                "packed in a google.protobuf.Any");
    KnutServe__Flightsql__Any *any =
        knut_serve__flightsql__any__unpack(NULL, len, data);
    if (!any)
        return knut_error_set(err, KNUT_EPARSE, "command of %zu bytes is not a serialized "
                                                "google.protobuf.Any", len);
    knut_status st = KNUT_OK;
    const char *url = any->type_url ? any->type_url : "";
    const char *slash = strrchr(url, '/');
    const char *full = slash ? slash + 1 : url;
    const cmd_type *t = NULL;
    if (strncmp(full, SQL_PKG, strlen(SQL_PKG)) == 0)
        for (size_t i = 0; i < sizeof cmd_types / sizeof cmd_types[0]; i++)
            if (strcmp(full + strlen(SQL_PKG), cmd_types[i].name) == 0)
                t = &cmd_types[i];
    if (!t) {
        char shown[160];
        quote_name(shown, sizeof shown, url, strlen(url));
        st = knut_error_set(err, KNUT_EUNSUPPORTED, "command not recognized: '%s'", shown);
        goto cleanup;
    }
    out->msg = protobuf_c_message_unpack(t->desc, NULL, any->value.len, any->value.data);
    if (!out->msg) {
        st = knut_error_set(err, KNUT_EPARSE, "malformed %s: its bytes do not decode as that "
                                              "message", t->name);
        goto cleanup;
    }
    out->kind = t->kind;
    out->name = t->name;

cleanup:
    knut_serve__flightsql__any__free_unpacked(any, NULL);
    return st;
}

knut_status knut_serve__descriptor_parse(const uint8_t *data, size_t len,
                                         KnutServe__FlightDescriptor **desc,
                                         knut_serve__cmd *out, knut_error *err)
{
    KNUT_ASSERT_ARG(err, desc && out);
    *desc = NULL;
    *out = (knut_serve__cmd)KNUT_SERVE__CMD_INIT;
    KnutServe__FlightDescriptor *d =
        knut_serve__flight_descriptor__unpack(NULL, len, data);
    if (!d)
        return knut_error_set(err, KNUT_EPARSE, "FlightDescriptor of %zu bytes does not decode",
                              len);
    knut_status st = KNUT_OK;
    if (d->type == KNUT_SERVE__FLIGHT_DESCRIPTOR__DESCRIPTOR_TYPE__PATH)
        st = knut_error_set(err, KNUT_EUNSUPPORTED, "path descriptors are not served: send a "
                                                    "Flight SQL command (type CMD)");
    else if (d->type != KNUT_SERVE__FLIGHT_DESCRIPTOR__DESCRIPTOR_TYPE__CMD)
        st = knut_error_set(err, KNUT_EPARSE, "FlightDescriptor of type %d: expected CMD (2)",
                            (int)d->type);
    else
        st = knut_serve__cmd_parse(d->cmd.data, d->cmd.len, out, err);
    if (st != KNUT_OK) {
        knut_serve__flight_descriptor__free_unpacked(d, NULL);
        return st;
    }
    *desc = d;
    return KNUT_OK;
}

knut_status knut_serve__pack(const ProtobufCMessage *m, knut_buf *out, knut_error *err)
{
    knut_buf_clear(out);
    size_t n = protobuf_c_message_get_packed_size(m);
    if (knut_buf_reserve(out, n) != KNUT_OK)
        return knut_buf_check(out, err);
    out->len = protobuf_c_message_pack(m, (uint8_t *)out->data);
    return KNUT_OK;
}

knut_status knut_serve__any_pack(const char *name, const ProtobufCMessage *m, knut_buf *out,
                                 knut_error *err)
{
    knut_buf value = KNUT_BUF_INIT;
    char url[160];
    snprintf(url, sizeof url, "type.googleapis.com/" SQL_PKG "%s", name);
    knut_status st = knut_serve__pack(m, &value, err);
    if (st == KNUT_OK) {
        KnutServe__Flightsql__Any any = KNUT_SERVE__FLIGHTSQL__ANY__INIT;
        any.type_url = url;
        any.value.data = (uint8_t *)value.data;
        any.value.len = value.len;
        st = knut_serve__pack(&any.base, out, err);
    }
    knut_buf_reset(&value);
    return st;
}

knut_status knut_serve__any_unpack(const uint8_t *data, size_t len, const char *name,
                                   const ProtobufCMessageDescriptor *desc, ProtobufCMessage **out,
                                   knut_error *err)
{
    *out = NULL;
    KnutServe__Flightsql__Any *any =
        knut_serve__flightsql__any__unpack(NULL, len, data);
    if (!any)
        return knut_error_set(err, KNUT_EPARSE, "%s: the body of %zu bytes is not a serialized "
                                                "google.protobuf.Any", name, len);
    knut_status st = KNUT_OK;
    const char *url = any->type_url ? any->type_url : "";
    const char *slash = strrchr(url, '/');
    const char *full = slash ? slash + 1 : url;
    if (strncmp(full, SQL_PKG, strlen(SQL_PKG)) != 0 || strcmp(full + strlen(SQL_PKG), name)) {
        char shown[160];
        quote_name(shown, sizeof shown, url, strlen(url));
        st = knut_error_set(err, KNUT_EINVAL, "expected an Any of %s%s, got '%s'", SQL_PKG, name,
                            shown);
    } else if (!(*out = protobuf_c_message_unpack(desc, NULL, any->value.len, any->value.data))) {
        st = knut_error_set(err, KNUT_EPARSE, "malformed %s: its bytes do not decode as that "
                                              "message", name);
    }
    knut_serve__flightsql__any__free_unpacked(any, NULL);
    return st;
}
