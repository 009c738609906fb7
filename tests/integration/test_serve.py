"""`knut serve` against real Flight SQL clients on loopback: pyarrow.flight
(Flight with the Flight SQL commands packed by flightsql_wire), the ADBC
Flight SQL driver (the Power BI path), and grpcio for raw bytes (message
sizes, malformed requests). Each test starts its own server on a free port
over a DuckDB file made with `knut query`.
"""

from __future__ import annotations

import signal
import struct
import subprocess
import threading
import time
from pathlib import Path

import grpc
import pyarrow as pa
import pyarrow.flight as fl
import pytest

import flightsql_wire as w

SVC = "/arrow.flight.protocol.FlightService/"

SETUP_SQL = """
CREATE TABLE people (id INTEGER NOT NULL, name VARCHAR, score DOUBLE, born DATE,
                     seen TIMESTAMP, paid DECIMAL(10, 2), ok BOOLEAN);
INSERT INTO people VALUES
  (1, 'ada', 9.5, DATE '1815-12-10', TIMESTAMP '2026-01-02 03:04:05', 12.34, true),
  (2, NULL, NULL, NULL, NULL, NULL, NULL),
  (3, 'grace', 7.25, DATE '1906-12-09', TIMESTAMP '2026-06-07 08:09:10', -5.00, false);
CREATE SCHEMA graph;
CREATE TABLE graph.knows (src INTEGER, dst INTEGER);
CREATE VIEW adults AS SELECT id, name FROM people WHERE id > 1;
"""


class Server:
    def __init__(self, knut: Path, db: Path | None, *extra: str):
        args = [str(knut), "serve", "--addr", "127.0.0.1:0", *extra]
        args += ["--db", str(db)] if db else ["--memory"]
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("listening on "):
            self.proc.kill()
            raise RuntimeError(f"knut serve did not start: {line!r} {self.proc.stderr.read()}")
        self.port = int(line.strip().rsplit(":", 1)[1])
        self.uri = f"grpc://127.0.0.1:{self.port}"

    def client(self) -> fl.FlightClient:
        return fl.FlightClient(self.uri)

    def stop(self, sig=signal.SIGTERM, timeout=20) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise


@pytest.fixture
def dbfile(knut, tmp_path) -> Path:
    db = tmp_path / "store.duckdb"
    subprocess.run([str(knut), "query", "--db", str(db), SETUP_SQL], check=True,
                   stdout=subprocess.DEVNULL)
    return db


@pytest.fixture
def server(knut, dbfile):
    s = Server(knut, dbfile)
    yield s
    assert s.stop() == 0


def info_of(c: fl.FlightClient, cmd: bytes) -> fl.FlightInfo:
    return c.get_flight_info(fl.FlightDescriptor.for_command(cmd))


def fetch(c: fl.FlightClient, cmd: bytes) -> tuple[fl.FlightInfo, pa.Table]:
    info = info_of(c, cmd)
    assert len(info.endpoints) == 1
    return info, c.do_get(info.endpoints[0].ticket).read_all()


def still_serves(c: fl.FlightClient) -> None:
    _, t = fetch(c, w.statement_query("SELECT 1 AS one"))
    assert t.column("one").to_pylist() == [1]


# ---- statements through pyarrow.flight ----

def test_query_schema_and_rows(server):
    c = server.client()
    info, t = fetch(c, w.statement_query("SELECT * FROM people ORDER BY id"))
    assert info.schema == t.schema  # the DoGet stream has the FlightInfo's schema
    assert info.total_records == -1 and info.total_bytes == -1
    assert t.schema.field("id").type == pa.int32()
    assert t.schema.field("name").type == pa.string()
    assert t.schema.field("born").type == pa.date32()
    assert t.schema.field("seen").type == pa.timestamp("us")
    assert t.schema.field("paid").type == pa.decimal128(10, 2)
    assert t.column("id").to_pylist() == [1, 2, 3]
    assert t.column("name").to_pylist() == ["ada", None, "grace"]
    assert t.column("paid").to_pylist()[2] == pa.scalar(-5, pa.decimal128(10, 2)).as_py()
    assert t.column("ok").to_pylist() == [True, None, False]
    # GetSchema answers the same schema without a ticket
    sr = c.get_schema(fl.FlightDescriptor.for_command(w.statement_query("SELECT * FROM people")))
    assert sr.schema == info.schema


def test_empty_result_still_has_its_schema(server):
    c = server.client()
    info, t = fetch(c, w.statement_query("SELECT id, name FROM people WHERE false"))
    assert t.num_rows == 0
    assert t.schema.names == ["id", "name"] and info.schema == t.schema


def raw_doget_sizes(port: int, ticket: bytes) -> list[int]:
    """The byte size of every FlightData message of a DoGet, via grpcio."""
    with grpc.insecure_channel(f"127.0.0.1:{port}",
                               options=[("grpc.max_receive_message_length", -1)]) as ch:
        call = ch.unary_stream(SVC + "DoGet")
        return [len(m) for m in call(w.field_bytes(1, ticket), timeout=60)]


def test_large_result_streams_in_bounded_messages(knut, dbfile):
    # 1 MiB cap, rows of ~1 KiB: DuckDB's 2048-row chunks must be cut
    s = Server(knut, dbfile, "--max-message", "1")
    try:
        c = s.client()
        sql = "SELECT i, repeat('x', 1000) AS pad FROM range(20000) t(i)"
        info, t = fetch(c, w.statement_query(sql))
        assert t.num_rows == 20000
        assert t.column("i").to_pylist() == list(range(20000))
        sizes = raw_doget_sizes(s.port, info.endpoints[0].ticket.ticket)
        assert len(sizes) > 20  # the schema, then many batches
        assert max(sizes) <= 1 << 20
    finally:
        assert s.stop() == 0


def test_many_rows_arrive_in_order(server):
    c = server.client()
    _, t = fetch(c, w.statement_query("SELECT i FROM range(300000) t(i)"))
    assert t.num_rows == 300000
    assert t.column("i")[299999].as_py() == 299999
    # DuckDB's chunks are the batches: none is larger than its vector size
    reader = c.do_get(info_of(c, w.statement_query("SELECT i FROM range(10000) t(i)"))
                      .endpoints[0].ticket)
    sizes = [chunk.data.num_rows for chunk in reader]
    assert sum(sizes) == 10000 and max(sizes) <= 2048


def test_bad_sql_is_invalid_argument(server):
    c = server.client()
    with pytest.raises(pa.ArrowInvalid, match="Parser Error: syntax error"):
        info_of(c, w.statement_query("SELEC 1"))
    with pytest.raises(pa.ArrowInvalid, match="Binder Error"):
        info_of(c, w.statement_query("SELECT nope FROM people"))
    still_serves(c)


def test_unknown_table_is_not_found(server):
    c = server.client()
    with pytest.raises(pa.ArrowKeyError, match="Table with name missing does not exist"):
        info_of(c, w.statement_query("SELECT * FROM missing"))
    still_serves(c)


def test_database_is_read_only(server):
    c = server.client()
    info = info_of(c, w.statement_query("INSERT INTO people VALUES (9, 'x', 1, NULL, NULL, 1, "
                                        "true)"))
    with pytest.raises(pa.ArrowInvalid, match="read-only"):
        c.do_get(info.endpoints[0].ticket).read_all()
    _, t = fetch(c, w.statement_query("SELECT count(*) AS n FROM people"))
    assert t.column("n").to_pylist() == [3]


def test_sql_cannot_reach_the_host(server, tmp_path):
    """A client's SQL reads no host file, writes none, attaches nothing and
    changes no shared setting (the database is locked down at start)."""
    secret = tmp_path / "host.csv"
    secret.write_text("a\n1\n")
    c = server.client()
    for sql in (f"SELECT * FROM read_csv('{secret}')", f"SELECT * FROM '{secret}'",
                f"COPY (SELECT 1) TO '{tmp_path / 'out.csv'}'",
                f"ATTACH '{tmp_path / 'x.duckdb'}' AS x", "SET threads = 1",
                "SET enable_external_access = true"):
        with pytest.raises(pa.ArrowException):
            info = info_of(c, w.statement_query(sql))
            c.do_get(info.endpoints[0].ticket).read_all()
    assert not (tmp_path / "out.csv").exists() and not (tmp_path / "x.duckdb").exists()
    still_serves(c)


def test_writer_is_refused_while_served(knut, server, dbfile):
    # DuckDB's file lock: one writing process, or any number of readers
    r = subprocess.run([str(knut), "query", "--db", str(dbfile), "INSERT INTO graph.knows "
                        "VALUES (1, 2)"], capture_output=True, text=True)
    assert r.returncode == 1 and "lock" in r.stderr
    r = subprocess.run([str(knut), "query", "--db", str(dbfile), "--read-only", "-f", "csv",
                        "SELECT count(*) FROM people"], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.splitlines()[-1] == "3"


def test_concurrent_clients(server):
    """Calls in parallel, each on its own DuckDB connection: every answer is its own."""
    errors: list[BaseException] = []

    def worker(k: int) -> None:
        try:
            c = server.client()
            for j in range(5):
                n = 1000 * k + j + 1
                _, t = fetch(c, w.statement_query(f"SELECT sum(i) AS s FROM range({n}) t(i)"))
                assert t.column("s").to_pylist() == [n * (n - 1) // 2]
                _, t = fetch(c, w.get_tables(table_pattern="people"))
                assert t.column("table_name").to_pylist() == ["people"]
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(12)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(120)
    assert not errors, errors[0]


# ---- bad input: a clear status, and the server keeps serving ----

def test_malformed_commands(server):
    c = server.client()
    with pytest.raises(pa.ArrowInvalid, match="not a serialized google.protobuf.Any"):
        info_of(c, b"\xff\xff\xff\xff")
    with pytest.raises(pa.ArrowInvalid, match="empty command"):
        info_of(c, b"")
    with pytest.raises(pa.ArrowNotImplementedError, match="command not recognized: "
                                                          "'type.googleapis.com/x.Y'"):
        info_of(c, w.field_bytes(1, "type.googleapis.com/x.Y") + w.field_bytes(2, b""))
    # the right type name, bytes that are not that message
    with pytest.raises(pa.ArrowInvalid, match="malformed CommandStatementQuery"):
        info_of(c, w.any_pack("CommandStatementQuery", b"\x0a\xff\x01"))
    # a command that is not a query command
    with pytest.raises(pa.ArrowInvalid, match="TicketStatementQuery is not served by "
                                              "GetFlightInfo"):
        info_of(c, w.any_pack("TicketStatementQuery", w.field_bytes(1, b"QSELECT 1")))
    with pytest.raises(pa.ArrowNotImplementedError, match="path descriptors"):
        c.get_flight_info(fl.FlightDescriptor.for_path("people"))
    with pytest.raises(pa.ArrowInvalid, match="not a ticket of this server"):
        c.do_get(fl.Ticket(w.statement_query("SELECT 1"))).read_all()
    with pytest.raises(pa.ArrowInvalid, match="statement handle not made by this server"):
        c.do_get(fl.Ticket(w.any_pack("TicketStatementQuery", w.field_bytes(1, b"zzz")))).read_all()
    with pytest.raises(pa.ArrowInvalid, match="NUL byte"):
        c.do_get(fl.Ticket(w.any_pack("TicketStatementQuery",
                                      w.field_bytes(1, b"QSELECT\x001")))).read_all()
    still_serves(c)


def test_raw_garbage_and_oversized_requests(knut, dbfile):
    s = Server(knut, dbfile, "--max-receive", "1")
    try:
        with grpc.insecure_channel(f"127.0.0.1:{s.port}") as ch:
            gfi = ch.unary_unary(SVC + "GetFlightInfo")
            with pytest.raises(grpc.RpcError) as e:
                gfi(b"\x0a\x05ab", timeout=10)  # a truncated FlightDescriptor
            assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert "FlightDescriptor" in e.value.details()
            with pytest.raises(grpc.RpcError) as e:  # over --max-receive 1 MiB
                gfi(w.field_varint(1, 2) + w.field_bytes(2, b"x" * (2 << 20)), timeout=10)
            assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            with pytest.raises(grpc.RpcError) as e:
                ch.unary_unary(SVC + "DoExchange")(b"", timeout=10)
            assert e.value.code() == grpc.StatusCode.UNIMPLEMENTED
            with pytest.raises(grpc.RpcError) as e:
                list(ch.unary_stream(SVC + "DoGet")(b"\x0a\x09short", timeout=10))
            assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        still_serves(s.client())
    finally:
        assert s.stop() == 0


def test_client_gone_mid_stream(server):
    c = server.client()
    info = info_of(c, w.statement_query("SELECT i, repeat('y', 200) FROM range(50000000) t(i)"))
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as ch:
        it = ch.unary_stream(SVC + "DoGet")(w.field_bytes(1, info.endpoints[0].ticket.ticket),
                                            timeout=60)
        next(it), next(it)
        it.cancel()
    still_serves(c)


# ---- the other Flight RPCs ----

def test_actions_flights_handshake_poll(server):
    c = server.client()
    names = [a.type for a in c.list_actions()]
    assert names == ["CreatePreparedStatement", "ClosePreparedStatement", "CancelFlightInfo"]
    with pytest.raises(pa.ArrowNotImplementedError, match="unknown action 'CloseSession'"):
        list(c.do_action(fl.Action("CloseSession", b"")))
    assert list(c.list_flights()) == []
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as ch:
        # Handshake with no request messages (what the Go client sends)
        assert list(ch.stream_stream(SVC + "Handshake")(iter(()), timeout=10)) == []
        desc = w.field_varint(1, 2) + w.field_bytes(2, w.statement_query("SELECT 5 AS five"))
        poll = w.decode(ch.unary_unary(SVC + "PollFlightInfo")(desc, timeout=10))
        assert 1 in poll and 2 not in poll  # an info, and nothing left to poll
        assert poll[3] == [struct.pack("<d", 1.0)]  # progress: done
        finfo = w.decode(poll[1][0])
        ticket = w.decode(w.decode(finfo[3][0])[1][0])[1][0]
    t = c.do_get(fl.Ticket(ticket)).read_all()
    assert t.column("five").to_pylist() == [5]


# ---- prepared statements through pyarrow.flight ----

def prepare(c: fl.FlightClient, sql: str) -> dict:
    res = list(c.do_action(fl.Action("CreatePreparedStatement", w.create_prepared(sql))))
    assert len(res) == 1
    name, body = w.any_unpack(res[0].body.to_pybytes())
    assert name == "arrow.flight.protocol.sql.ActionCreatePreparedStatementResult"
    f = w.decode(body)
    return {"handle": f[1][0], "dataset": f.get(2, [b""])[0], "params": f.get(3, [b""])[0]}


def test_prepared_statement_with_parameters(server):
    c = server.client()
    p = prepare(c, "SELECT id, name FROM people WHERE id >= $1 AND name <> $2 ORDER BY id")
    ds = pa.ipc.read_schema(pa.py_buffer(p["dataset"]))
    assert ds.names == ["id", "name"]
    ps = pa.ipc.read_schema(pa.py_buffer(p["params"]))
    assert [f.type for f in ps] == [pa.int32(), pa.string()]
    desc = fl.FlightDescriptor.for_command(w.prepared_query(p["handle"]))
    params = pa.record_batch([pa.array([1], pa.int32()), pa.array(["ada"])], names=["1", "2"])
    writer, reader = c.do_put(desc, params.schema)
    writer.write_batch(params)
    writer.done_writing()
    put = reader.read()
    bound = w.decode(put.to_pybytes())[1][0]
    assert bound != p["handle"] and len(bound) > len(p["handle"])  # it holds the parameters
    writer.close()
    # the handle from before DoPut finds its parameters kept here; the new
    # one holds them itself
    for h in (p["handle"], bound):
        info, t = fetch(c, w.prepared_query(h))
        assert t.to_pydict() == {"id": [3], "name": ["grace"]}
        assert info.schema == t.schema
    assert list(c.do_action(fl.Action("ClosePreparedStatement",
                                      w.close_prepared(p["handle"])))) == []
    # closed: what was kept is gone; the bound handle needs nothing kept
    with pytest.raises(pa.ArrowInvalid, match="takes 2 parameters and none were bound"):
        fetch(c, w.prepared_query(p["handle"]))
    assert fetch(c, w.prepared_query(bound))[1].to_pydict() == {"id": [3], "name": ["grace"]}
    # a handle is signed: one byte changed and it is refused
    bad = bytearray(bound)
    bad[len(bad) // 2] ^= 1
    with pytest.raises(pa.ArrowInvalid, match="does not verify"):
        info_of(c, w.prepared_query(bytes(bad)))
    with pytest.raises(pa.ArrowInvalid, match="does not verify"):
        list(c.do_action(fl.Action("ClosePreparedStatement", w.close_prepared(bytes(bad)))))


def test_prepared_statement_errors(server):
    c = server.client()
    with pytest.raises(pa.ArrowInvalid, match="Parser Error"):
        prepare(c, "SELEC 1")
    with pytest.raises(pa.ArrowInvalid, match="expected an Any of arrow.flight.protocol.sql."
                                              "ActionCreatePreparedStatementRequest"):
        list(c.do_action(fl.Action("CreatePreparedStatement", w.statement_query("SELECT 1"))))
    p = prepare(c, "SELECT $1::INTEGER + 1 AS n")
    with pytest.raises(pa.ArrowInvalid, match="takes 1 parameters and none were bound"):
        fetch(c, w.prepared_query(p["handle"]))
    # two rows of parameters: one per execution is served today
    desc = fl.FlightDescriptor.for_command(w.prepared_query(p["handle"]))
    two = pa.record_batch([pa.array([1, 2], pa.int32())], names=["1"])
    writer, reader = c.do_put(desc, two.schema)
    writer.write_batch(two)
    with pytest.raises(pa.ArrowNotImplementedError, match="one row per execution"):
        writer.done_writing()
        reader.read()
        writer.close()
    still_serves(c)


# ---- catalog commands: the exact schemas clients compare ----

def test_catalogs_and_schemas(server):
    c = server.client()
    info, t = fetch(c, w.get_catalogs())
    assert t.schema == pa.schema([pa.field("catalog_name", pa.string(), nullable=False)])
    assert info.schema == t.schema
    assert t.column(0).to_pylist() == ["store"]
    _, t = fetch(c, w.get_db_schemas())
    assert t.schema == pa.schema([pa.field("catalog_name", pa.string()),
                                  pa.field("db_schema_name", pa.string(), nullable=False)])
    assert t.to_pydict() == {"catalog_name": ["store", "store"],
                             "db_schema_name": ["graph", "main"]}
    _, t = fetch(c, w.get_db_schemas(catalog="store", pattern="gr%"))
    assert t.column("db_schema_name").to_pylist() == ["graph"]
    _, t = fetch(c, w.get_db_schemas(catalog="other"))
    assert t.num_rows == 0


def test_tables_four_and_five_columns(server):
    c = server.client()
    four = [pa.field("catalog_name", pa.string()), pa.field("db_schema_name", pa.string()),
            pa.field("table_name", pa.string(), nullable=False),
            pa.field("table_type", pa.string(), nullable=False)]
    info, t = fetch(c, w.get_tables())
    assert t.schema == pa.schema(four) and info.schema == t.schema
    assert list(zip(t.column("db_schema_name").to_pylist(), t.column("table_name").to_pylist(),
                    t.column("table_type").to_pylist())) == [
        ("graph", "knows", "BASE TABLE"), ("main", "adults", "VIEW"),
        ("main", "people", "BASE TABLE")]
    _, t = fetch(c, w.get_tables(table_types=["VIEW"]))
    assert t.column("table_name").to_pylist() == ["adults"]
    _, t = fetch(c, w.get_tables(schema_pattern="ma_n", table_pattern="p%"))
    assert t.column("table_name").to_pylist() == ["people"]
    info, t = fetch(c, w.get_tables(table_pattern="people", include_schema=True))
    assert t.schema == pa.schema(four + [pa.field("table_schema", pa.binary(), nullable=False)])
    assert info.schema == t.schema
    ts = pa.ipc.read_schema(pa.py_buffer(t.column("table_schema")[0].as_py()))
    assert ts.names == ["id", "name", "score", "born", "seen", "paid", "ok"]
    assert ts.field("paid").type == pa.decimal128(10, 2)


def test_table_types(server):
    c = server.client()
    _, t = fetch(c, w.get_table_types())
    assert t.schema == pa.schema([pa.field("table_type", pa.string(), nullable=False)])
    assert t.column(0).to_pylist() == ["BASE TABLE", "LOCAL TEMPORARY", "VIEW"]


SQL_INFO_SCHEMA = pa.schema([
    pa.field("info_name", pa.uint32(), nullable=False),
    pa.field("value", pa.dense_union([
        pa.field("string_value", pa.string(), nullable=False),
        pa.field("bool_value", pa.bool_(), nullable=False),
        pa.field("bigint_value", pa.int64(), nullable=False),
        pa.field("int32_bitmask", pa.int32(), nullable=False),
        pa.field("string_list", pa.list_(pa.string()), nullable=False),
        pa.field("int32_to_int32_list_map", pa.map_(pa.int32(), pa.list_(pa.int32())),
                 nullable=False)], [0, 1, 2, 3, 4, 5]), nullable=False)])


def sql_info(*ids: int) -> bytes:
    return w.any_pack("CommandGetSqlInfo", w.field_bytes(1, b"".join(w.varint(i) for i in ids))
                      if ids else b"")


def test_sql_info(server):
    c = server.client()
    info, t = fetch(c, sql_info())
    assert t.schema == SQL_INFO_SCHEMA and info.schema == t.schema
    got = {r["info_name"]: r["value"] for r in t.to_pylist()}
    assert got[0] == "knut" and got[1].startswith("0.1.0 (DuckDB v")
    assert got[3] is True and got[4] is True and got[5] is False
    assert got[504] == '"'
    assert got[507] == 3  # DuckDB's default: NULLS LAST, so sorted at the end
    # arms: 8 is int32 (what ADBC reads), 503/505/507 bigint (what ODBC reads)
    value = t.column("value").combine_chunks()
    arm = {t.column("info_name")[i].as_py(): value.type_codes[i].as_py()
           for i in range(t.num_rows)}
    assert arm[8] == 3 and arm[503] == 2 and arm[0] == 0 and arm[3] == 1 and arm[508] == 4
    # keywords and functions as DuckDB lists and categorizes them
    assert "select" in got[508] and "bit_length" in got[509] and "ascii" in got[510]
    # the ids the JDBC driver's DatabaseMetaData and the ODBC driver read,
    # each in the arm they read it from
    int32_ids = {8, 100, 101, 522, 525, 526, 528, 533, 534, 535, 538, 540, 564,
                 567, 568, 569, 570, 571}
    bigint_ids = {503, 505, 507, 562} | set(range(541, 556)) | set(range(557, 562))
    string_ids = {0, 1, 2, 504, 513, 514, 529, 530, 531}
    list_ids = set(range(508, 513))
    bool_ids = ({3, 4, 5, 9, 10, 11} | set(range(500, 503)) | {506, 515, 516}
                | set(range(518, 522)) | {523, 524, 527, 532, 536, 537, 539, 556}
                | {563, 565, 566} | set(range(572, 577)))
    want = {**{i: 3 for i in int32_ids}, **{i: 2 for i in bigint_ids},
            **{i: 0 for i in string_ids}, **{i: 4 for i in list_ids},
            **{i: 1 for i in bool_ids}, 517: 5}
    assert {i: arm[i] for i in want} == want
    assert got[517] == [] and got[531] == "database" and got[538] == 15
    assert "current_database" in got[511] and "version" in got[511]
    assert "date_part" in got[512] and "strftime" in got[512]
    # a chosen few, an unknown one left out
    _, t = fetch(c, sql_info(8, 0, 99999))
    assert t.to_pylist() == [{"info_name": 0, "value": "knut"}, {"info_name": 8, "value": 0}]



XDBC_SCHEMA = pa.schema([
    pa.field("type_name", pa.string(), nullable=False),
    pa.field("data_type", pa.int32(), nullable=False),
    pa.field("column_size", pa.int32()),
    pa.field("literal_prefix", pa.string()),
    pa.field("literal_suffix", pa.string()),
    pa.field("create_params", pa.list_(pa.field("item", pa.string(), nullable=False))),
    pa.field("nullable", pa.int32(), nullable=False),
    pa.field("case_sensitive", pa.bool_(), nullable=False),
    pa.field("searchable", pa.int32(), nullable=False),
    pa.field("unsigned_attribute", pa.bool_()),
    pa.field("fixed_prec_scale", pa.bool_(), nullable=False),
    pa.field("auto_increment", pa.bool_()),
    pa.field("local_type_name", pa.string()),
    pa.field("minimum_scale", pa.int32()),
    pa.field("maximum_scale", pa.int32()),
    pa.field("sql_data_type", pa.int32(), nullable=False),
    pa.field("datetime_subcode", pa.int32()),
    pa.field("num_prec_radix", pa.int32()),
    pa.field("interval_precision", pa.int32())])


def test_xdbc_type_info(server):
    c = server.client()
    info, t = fetch(c, w.get_xdbc_type_info())
    assert t.schema == XDBC_SCHEMA and info.schema == t.schema
    rows = {r["type_name"]: r for r in t.to_pylist()}
    # every type of the test table's columns is there, with its xDBC code
    codes = {"INTEGER": 4, "VARCHAR": 12, "DOUBLE": 8, "DATE": 91, "TIMESTAMP": 93,
             "DECIMAL": 3, "BOOLEAN": -7, "BIGINT": -5, "TIMESTAMP WITH TIME ZONE": 93}
    assert {k: rows[k]["data_type"] for k in codes} == codes
    assert rows["DECIMAL"]["create_params"] == ["precision", "scale"]
    assert rows["DECIMAL"]["maximum_scale"] == 38
    assert rows["DATE"]["sql_data_type"] == 9 and rows["DATE"]["datetime_subcode"] == 1
    assert rows["UBIGINT"]["unsigned_attribute"] is True
    codes_in_order = t.column("data_type").to_pylist()
    assert codes_in_order == sorted(codes_in_order)
    # the data_type filter, a negative code too, and one no type has
    _, t = fetch(c, w.get_xdbc_type_info(93))
    assert t.schema == XDBC_SCHEMA
    assert t.column("type_name").to_pylist() == ["TIMESTAMP", "TIMESTAMP WITH TIME ZONE"]
    _, t = fetch(c, w.get_xdbc_type_info(-5))
    assert t.column("type_name").to_pylist() == ["BIGINT", "UBIGINT"]
    info, t = fetch(c, w.get_xdbc_type_info(1234))
    assert t.num_rows == 0 and t.schema == XDBC_SCHEMA and info.schema == t.schema


PK_SCHEMA = pa.schema([
    pa.field("catalog_name", pa.string()), pa.field("db_schema_name", pa.string()),
    pa.field("table_name", pa.string(), nullable=False),
    pa.field("column_name", pa.string(), nullable=False),
    pa.field("key_sequence", pa.int32(), nullable=False), pa.field("key_name", pa.string())])
FK_SCHEMA = pa.schema(
    [pa.field(f"{side}_{n}", pa.string(), nullable=n.endswith(("catalog_name", "schema_name")))
     for side in ("pk", "fk")
     for n in ("catalog_name", "db_schema_name", "table_name", "column_name")]
    + [pa.field("key_sequence", pa.int32(), nullable=False), pa.field("fk_key_name", pa.string()),
       pa.field("pk_key_name", pa.string()), pa.field("update_rule", pa.uint8(), nullable=False),
       pa.field("delete_rule", pa.uint8(), nullable=False)])
KEYS_SQL = """
CREATE TABLE city (country VARCHAR, name VARCHAR, PRIMARY KEY (country, name));
CREATE TABLE person (id INTEGER PRIMARY KEY, country VARCHAR, city VARCHAR,
                     FOREIGN KEY (country, city) REFERENCES city (country, name));
CREATE TABLE note (body VARCHAR);
"""


def test_primary_and_foreign_keys(knut, tmp_path):
    db = tmp_path / "keys.duckdb"
    subprocess.run([str(knut), "query", "--db", str(db), KEYS_SQL], check=True,
                   stdout=subprocess.DEVNULL)
    s = Server(knut, db)
    try:
        c = s.client()
        info, t = fetch(c, w.get_keys("PrimaryKeys", "city"))
        assert t.schema == PK_SCHEMA and info.schema == t.schema
        assert [(r["catalog_name"], r["db_schema_name"], r["table_name"], r["column_name"],
                 r["key_sequence"]) for r in t.to_pylist()] == [
            ("keys", "main", "city", "country", 1), ("keys", "main", "city", "name", 2)]
        _, t = fetch(c, w.get_keys("PrimaryKeys", "person", catalog="keys", schema="main"))
        assert t.column("column_name").to_pylist() == ["id"]
        _, t = fetch(c, w.get_keys("PrimaryKeys", "note"))
        assert t.num_rows == 0 and t.schema == PK_SCHEMA
        _, t = fetch(c, w.get_keys("PrimaryKeys", "city", schema="other"))
        assert t.num_rows == 0
        pairs = [("city", "country", "person", "country", 1), ("city", "name", "person", "city", 2)]
        for cmd in (w.get_keys("ExportedKeys", "city"), w.get_keys("ImportedKeys", "person"),
                    w.get_cross_reference("city", "person")):
            info, t = fetch(c, cmd)
            assert t.schema == FK_SCHEMA and info.schema == t.schema
            rows = t.to_pylist()
            assert [(r["pk_table_name"], r["pk_column_name"], r["fk_table_name"],
                     r["fk_column_name"], r["key_sequence"]) for r in rows] == pairs
            assert {(r["pk_catalog_name"], r["fk_db_schema_name"], r["update_rule"],
                     r["delete_rule"]) for r in rows} == {("keys", "main", 3, 3)}
        for cmd in (w.get_keys("ExportedKeys", "person"), w.get_keys("ImportedKeys", "city"),
                    w.get_cross_reference("person", "city"), w.get_keys("ImportedKeys", "note")):
            info, t = fetch(c, cmd)
            assert t.num_rows == 0 and t.schema == FK_SCHEMA and info.schema == t.schema
    finally:
        assert s.stop() == 0



def test_column_metadata(server):
    c = server.client()
    info, t = fetch(c, w.statement_query("SELECT * FROM people ORDER BY id"))
    # the metadata is on the FlightInfo schema and the stream's alike
    assert info.schema.equals(t.schema, check_metadata=True)
    md = {f.name: {k.decode(): v.decode() for k, v in (f.metadata or {}).items()}
          for f in t.schema}
    names = {n: m["ARROW:FLIGHT:SQL:TYPE_NAME"] for n, m in md.items()}
    assert names == {"id": "INTEGER", "name": "VARCHAR", "score": "DOUBLE", "born": "DATE",
                     "seen": "TIMESTAMP", "paid": "DECIMAL", "ok": "BOOLEAN"}
    assert md["paid"]["ARROW:FLIGHT:SQL:PRECISION"] == "10"
    assert md["paid"]["ARROW:FLIGHT:SQL:SCALE"] == "2"
    assert "ARROW:FLIGHT:SQL:PRECISION" not in md["id"]
    assert t.schema.field("id").nullable is True  # DuckDB marks every result column nullable
    # every served type name is a type_name of GetXdbcTypeInfo
    _, types = fetch(c, w.get_xdbc_type_info())
    assert set(names.values()) <= set(types.column("type_name").to_pylist())
    _, t = fetch(c, w.statement_query("SELECT TIMESTAMPTZ '2026-01-01 00:00:00+00' AS t"))
    assert t.schema.field("t").metadata[b"ARROW:FLIGHT:SQL:TYPE_NAME"] == \
        b"TIMESTAMP WITH TIME ZONE"
    # a prepared statement's dataset schema carries it too
    r = prepare(c, "SELECT paid FROM people")
    ds = pa.ipc.read_schema(pa.py_buffer(r["dataset"]))
    assert ds.field("paid").metadata[b"ARROW:FLIGHT:SQL:SCALE"] == b"2"
    # catalog results carry none: ADBC compares those schemas with their metadata
    _, t = fetch(c, w.get_tables())
    assert all(not f.metadata for f in t.schema)


ORIGIN_KEYS = ("CATALOG_NAME", "SCHEMA_NAME", "DB_SCHEMA_NAME", "TABLE_NAME")


def origins(schema: pa.Schema) -> dict[str, tuple | None]:
    """Each column's (catalog, schema, db_schema, table) metadata, or None
    where it has none of them."""
    out = {}
    for f in schema:
        md = {k.decode(): v.decode() for k, v in (f.metadata or {}).items()}
        got = tuple(md.get("ARROW:FLIGHT:SQL:" + k) for k in ORIGIN_KEYS)
        out[f.name] = None if got == (None,) * 4 else got
    return out


def test_column_origin_metadata(server):
    """Where a result column comes from (colorigin.c), on the FlightInfo
    schema and the DoGet stream's alike, through pyarrow.flight and ADBC:
    set on plain column references of base tables, left off what is
    computed or read through a subquery."""
    c = server.client()
    people = ("store", "main", "main", "people")
    knows = ("store", "graph", "graph", "knows")
    cases = {
        "SELECT * FROM people": {n: people for n in
                                 ("id", "name", "score", "born", "seen", "paid", "ok")},
        "SELECT p.id AS pid, k.dst, name FROM people p JOIN graph.knows k ON p.id = k.src "
        "WHERE p.id > 0": {"pid": people, "dst": knows, "name": people},
        "SELECT id + 1 AS next, upper(name) AS up, paid FROM people":
            {"next": None, "up": None, "paid": people},
        "SELECT id FROM (SELECT id FROM people)": {"id": None},
        "SELECT 1 AS one": {"one": None},
    }
    for sql, want in cases.items():
        info, t = fetch(c, w.statement_query(sql))
        assert origins(info.schema) == want, sql
        assert origins(t.schema) == want, sql
        assert info.schema.equals(t.schema, check_metadata=True), sql
    # a prepared statement's dataset schema and its stream carry them too
    p = prepare(c, "SELECT name, src FROM people, graph.knows WHERE id = $1")
    ds = pa.ipc.read_schema(pa.py_buffer(p["dataset"]))
    assert origins(ds) == {"name": people, "src": knows}
    # and the ADBC driver passes them through to its result schema
    import adbc_driver_flightsql.dbapi as flightsql
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        conn = flightsql.connect(server.uri)
    try:
        cur = conn.cursor()
        cur.execute("SELECT k.src, people.name, 2 AS two FROM graph.knows k, people")
        t = cur.fetch_arrow_table()
        assert origins(t.schema) == {"src": knows, "name": people, "two": None}
        cur.close()
    finally:
        conn.close()


# ---- the ADBC Flight SQL driver ----

def test_adbc_driver(server):
    import adbc_driver_flightsql.dbapi as flightsql
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Cannot disable autocommit": no transactions here
        conn = flightsql.connect(server.uri)
    try:
        cur = conn.cursor()
        cur.execute("SELECT id, name FROM people ORDER BY id")
        t = cur.fetch_arrow_table()
        assert t.to_pydict() == {"id": [1, 2, 3], "name": ["ada", None, "grace"]}
        cur.execute("SELECT name FROM people WHERE id = ?", parameters=(3,))
        assert cur.fetchall() == [("grace",)]
        cur.execute("SELECT ? + 1 AS y", parameters=(41,))  # a type known only when run
        assert cur.fetchall() == [(42,)]
        with pytest.raises(Exception, match="Parser Error"):
            cur.execute("SELEC 1")
        with pytest.raises(Exception, match="does not exist"):
            cur.execute("SELECT * FROM missing")
        cur.execute("SELECT count(*) FROM range(100000)")
        assert cur.fetchone() == (100000,)
        cur.close()
        info = conn.adbc_get_info()  # read from GetSqlInfo
        assert info["vendor_name"] == "knut"
        assert info["vendor_version"].startswith("0.1.0 (DuckDB v")
        assert conn.adbc_get_table_types() == ["BASE TABLE", "LOCAL TEMPORARY", "VIEW"]
        objs = conn.adbc_get_objects(depth="all").read_all().to_pylist()
        assert [o["catalog_name"] for o in objs] == ["store"]
        schemas = {s["db_schema_name"]: s for s in objs[0]["catalog_db_schemas"]}
        assert sorted(schemas) == ["graph", "main"]
        tables = {t["table_name"]: t for t in schemas["main"]["db_schema_tables"]}
        assert sorted(tables) == ["adults", "people"]
        assert [col["column_name"] for col in tables["people"]["table_columns"]] == [
            "id", "name", "score", "born", "seen", "paid", "ok"]
        ts = conn.adbc_get_table_schema("knows", db_schema_filter="graph")
        assert ts.names == ["src", "dst"]
    finally:
        conn.close()


# ---- TLS ----

def test_tls_and_mutual_tls(knut, dbfile, certs):
    import adbc_driver_flightsql.dbapi as flightsql
    import warnings
    ca = certs["ca.pem"].read_text()
    s = Server(knut, dbfile, "--tls-cert", str(certs["server.pem"]), "--tls-key",
               str(certs["server.key"]))
    try:
        uri = f"grpc+tls://127.0.0.1:{s.port}"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            conn = flightsql.connect(uri, db_kwargs={
                "adbc.flight.sql.client_option.tls_root_certs": ca})
        cur = conn.cursor()
        cur.execute("SELECT count(*) FROM people")
        assert cur.fetchone() == (3,)
        cur.close()
        conn.close()
        c = fl.FlightClient(uri, tls_root_certs=ca.encode())
        still_serves(c)
        with pytest.raises(fl.FlightUnavailableError):  # plaintext to a TLS port
            fl.FlightClient(f"grpc://127.0.0.1:{s.port}").get_flight_info(
                fl.FlightDescriptor.for_command(w.statement_query("SELECT 1")),
                fl.FlightCallOptions(timeout=5))
    finally:
        assert s.stop() == 0
    s = Server(knut, dbfile, "--tls-cert", str(certs["server.pem"]), "--tls-key",
               str(certs["server.key"]), "--tls-ca", str(certs["ca.pem"]))
    try:
        uri = f"grpc+tls://127.0.0.1:{s.port}"
        c = fl.FlightClient(uri, tls_root_certs=ca.encode(),
                            cert_chain=certs["client.pem"].read_bytes(),
                            private_key=certs["client.key"].read_bytes())
        still_serves(c)
        with pytest.raises(fl.FlightUnavailableError):  # no client certificate
            fl.FlightClient(uri, tls_root_certs=ca.encode()).get_flight_info(
                fl.FlightDescriptor.for_command(w.statement_query("SELECT 1")),
                fl.FlightCallOptions(timeout=5))
    finally:
        assert s.stop() == 0


# ---- lifecycle ----

def test_sigterm_mid_stream_exits_zero(knut, dbfile):
    s = Server(knut, dbfile, "--grace", "1")
    c = s.client()
    info = info_of(c, w.statement_query("SELECT i FROM range(1000000000) t(i)"))
    reader = c.do_get(info.endpoints[0].ticket)
    reader.read_chunk()  # the stream is running
    got = {}

    def drain():
        try:
            for _ in reader:
                time.sleep(0.01)
        except Exception as e:  # the stream is cancelled when the grace is over
            got["error"] = e

    th = threading.Thread(target=drain)
    th.start()
    assert s.stop(signal.SIGTERM, timeout=30) == 0
    th.join(30)
    assert not th.is_alive()


def test_usage_errors(knut, tmp_path):
    r = subprocess.run([str(knut), "serve"], capture_output=True, text=True)
    assert r.returncode == 2 and "--db FILE or --memory" in r.stderr
    r = subprocess.run([str(knut), "serve", "--memory", "--tls-cert", "x.pem"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "--tls-key" in r.stderr
    r = subprocess.run([str(knut), "serve", "--db", str(tmp_path / "none.duckdb"), "--addr",
                        "127.0.0.1:0"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 1 and "none.duckdb" in r.stderr
    r = subprocess.run([str(knut), "serve", "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and "Arrow Flight SQL" in r.stdout


def test_memory_database(knut):
    s = Server(knut, None)
    try:
        _, t = fetch(s.client(), w.get_catalogs())
        assert t.column(0).to_pylist() == ["memory"]
    finally:
        assert s.stop(signal.SIGINT) == 0


def test_tables_with_schema_survive_a_broken_view(knut, tmp_path):
    """A view whose SELECT cannot bind (here: it reads a file, which the
    served database may not) gets an empty schema in GetTables; the other
    tables still come with theirs. Before: the whole call failed."""
    (tmp_path / "t.csv").write_text("a\n1\n")
    db = tmp_path / "views.duckdb"
    subprocess.run([str(knut), "query", "--db", str(db),
                    f"CREATE TABLE ok AS SELECT 1 AS x; "
                    f"CREATE VIEW filed AS SELECT * FROM read_csv('{tmp_path / 't.csv'}')"],
                   check=True, stdout=subprocess.DEVNULL)
    s = Server(knut, db)
    try:
        c = s.client()
        _, t = fetch(c, w.get_tables(include_schema=True))
        got = {n: pa.ipc.read_schema(pa.py_buffer(b.as_py())).names
               for n, b in zip(t.column("table_name").to_pylist(), t.column("table_schema"))}
        assert got == {"filed": [], "ok": ["x"]}, got
        still_serves(c)
    finally:
        assert s.stop() == 0
