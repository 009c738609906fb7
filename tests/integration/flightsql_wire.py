"""Flight SQL commands as protobuf bytes, for tests that talk to `knut serve`
through pyarrow.flight (which has Flight but no Flight SQL client).

A minimal protobuf encoder/decoder (varints and length-delimited fields are
all Flight SQL's commands use) and the few messages the tests send, packed
in a google.protobuf.Any as every Flight SQL client does. Field numbers are
the protocol's (arrow.flight.protocol.sql).
"""

from __future__ import annotations

PKG = "type.googleapis.com/arrow.flight.protocol.sql."


def varint(v: int) -> bytes:
    out = bytearray()
    v &= (1 << 64) - 1
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field_bytes(num: int, data: bytes | str) -> bytes:
    if isinstance(data, str):
        data = data.encode()
    return varint(num << 3 | 2) + varint(len(data)) + data


def field_varint(num: int, v: int) -> bytes:
    return varint(num << 3) + varint(v)


def any_pack(name: str, value: bytes) -> bytes:
    return field_bytes(1, PKG + name) + field_bytes(2, value)


def decode(data: bytes) -> dict[int, list]:
    """Fields of a message: number -> values (ints or bytes)."""
    out: dict[int, list] = {}
    i = 0
    while i < len(data):
        key, i = _read_varint(data, i)
        num, wire = key >> 3, key & 7
        if wire == 0:
            v, i = _read_varint(data, i)
        elif wire == 2:
            n, i = _read_varint(data, i)
            v, i = data[i:i + n], i + n
        elif wire == 1:
            v, i = data[i:i + 8], i + 8
        elif wire == 5:
            v, i = data[i:i + 4], i + 4
        else:
            raise ValueError(f"wire type {wire}")
        out.setdefault(num, []).append(v)
    return out


def _read_varint(data: bytes, i: int) -> tuple[int, int]:
    shift = v = 0
    while True:
        b = data[i]
        i += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return v, i


def any_unpack(data: bytes) -> tuple[str, bytes]:
    f = decode(data)
    url = f[1][0].decode()
    return url.rsplit("/", 1)[-1], f.get(2, [b""])[0]


# ---- commands ----

def statement_query(sql: str) -> bytes:
    return any_pack("CommandStatementQuery", field_bytes(1, sql))


def get_catalogs() -> bytes:
    return any_pack("CommandGetCatalogs", b"")


def get_db_schemas(catalog: str | None = None, pattern: str | None = None) -> bytes:
    body = b""
    if catalog is not None:
        body += field_bytes(1, catalog)
    if pattern is not None:
        body += field_bytes(2, pattern)
    return any_pack("CommandGetDbSchemas", body)


def get_tables(catalog=None, schema_pattern=None, table_pattern=None, table_types=(),
               include_schema=False) -> bytes:
    body = b""
    if catalog is not None:
        body += field_bytes(1, catalog)
    if schema_pattern is not None:
        body += field_bytes(2, schema_pattern)
    if table_pattern is not None:
        body += field_bytes(3, table_pattern)
    for t in table_types:
        body += field_bytes(4, t)
    if include_schema:
        body += field_varint(5, 1)
    return any_pack("CommandGetTables", body)


def get_table_types() -> bytes:
    return any_pack("CommandGetTableTypes", b"")


def create_prepared(sql: str) -> bytes:
    return any_pack("ActionCreatePreparedStatementRequest", field_bytes(1, sql))


def close_prepared(handle: bytes) -> bytes:
    return any_pack("ActionClosePreparedStatementRequest", field_bytes(1, handle))


def prepared_query(handle: bytes) -> bytes:
    return any_pack("CommandPreparedStatementQuery", field_bytes(1, handle))


def get_xdbc_type_info(data_type: int | None = None) -> bytes:
    body = b""
    if data_type is not None:
        body += field_varint(1, data_type)  # a negative int32 is 10 bytes, as protobuf has it
    return any_pack("CommandGetXdbcTypeInfo", body)


def get_keys(kind: str, table: str, catalog: str | None = None,
             schema: str | None = None) -> bytes:
    body = b""
    if catalog is not None:
        body += field_bytes(1, catalog)
    if schema is not None:
        body += field_bytes(2, schema)
    body += field_bytes(3, table)
    return any_pack(f"CommandGet{kind}", body)


def get_cross_reference(pk_table: str, fk_table: str, pk_schema: str | None = None,
                        fk_schema: str | None = None) -> bytes:
    body = b""
    if pk_schema is not None:
        body += field_bytes(2, pk_schema)
    body += field_bytes(3, pk_table)
    if fk_schema is not None:
        body += field_bytes(5, fk_schema)
    body += field_bytes(6, fk_table)
    return any_pack("CommandGetCrossReference", body)
