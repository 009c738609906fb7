"""`knut serve` authentication and authorization against real clients on
loopback: grpcio for the raw matrix (every Flight RPC x no / bad / stale /
good credentials), pyarrow.flight (authenticate_basic_token, bearer
headers), the ADBC Flight SQL driver (username/password, an authorization
header), and client certificates (mutual TLS). Each test starts its own
server over a DuckDB file made with `knut query`; the server's stderr is
kept in a file and searched for every secret at the end.
"""

from __future__ import annotations

import base64
import hashlib
import os
import signal
import subprocess
import time
import warnings
from pathlib import Path

import grpc
import pyarrow as pa
import pyarrow.flight as fl
import pytest

import flightsql_wire as w

SVC = "/arrow.flight.protocol.FlightService/"

SETUP_SQL = """
CREATE TABLE people (id INTEGER PRIMARY KEY, name VARCHAR);
INSERT INTO people VALUES (1, 'ada'), (2, 'grace');
CREATE TABLE secret (id INTEGER PRIMARY KEY, pin VARCHAR);
INSERT INTO secret VALUES (1, '4711');
CREATE SCHEMA graph;
CREATE TABLE graph.knows (src INTEGER, dst INTEGER);
CREATE SCHEMA vault;
CREATE TABLE vault.keys (k VARCHAR);
CREATE VIEW adults AS SELECT id, name FROM people WHERE id > 1;
"""

DAVE_SALT = "s4lt"
DAVE_ITER = 1000
SECRETS = ["tok-alice-1", "tok-alice-2", "tok-bob", "pw-carol", "pw-dave", "tok-env-erin"]


def dave_hash() -> str:
    h = hashlib.pbkdf2_hmac("sha256", b"pw-dave", DAVE_SALT.encode(), DAVE_ITER).hex()
    return f"pbkdf2-sha256${DAVE_ITER}${DAVE_SALT}${h}"


AUTH_FILE = f"""# knut serve credentials (mode 0600)
token alice tok-alice-1
token alice tok-alice-2     # rotation: both are valid
token bob   tok-bob
user  carol pw-carol
user  dave  {dave_hash()}

allow alice *
allow bob   main.people graph.*
allow carol people adults
allow "CN=knut test client" people
"""


class Server:
    def __init__(self, knut: Path, db: Path, tmp: Path, *extra: str, env: dict | None = None):
        self.log = tmp / f"serve-{time.monotonic_ns()}.log"
        args = [str(knut), "serve", "--addr", "127.0.0.1:0", "--db", str(db), *extra]
        e = dict(os.environ)
        e.pop("KNUT_SERVE_TOKEN", None)
        e.update(env or {})
        e["KNUT_LOG"] = "debug"  # everything the server would ever log, searched for secrets
        self.err = open(self.log, "w")
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=self.err, text=True,
                                     env=e)
        line = self.proc.stdout.readline()
        if not line.startswith("listening on "):
            self.proc.kill()
            self.proc.wait()
            raise RuntimeError(f"knut serve did not start: {line!r} {self.log.read_text()}")
        self.port = int(line.strip().rsplit(":", 1)[1])
        self.uri = f"grpc://127.0.0.1:{self.port}"

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        rc = self.proc.wait(timeout=30)
        self.err.close()
        return rc

    def stderr(self) -> str:
        return self.log.read_text()


def no_secrets(text: str, extra: list[str] = ()) -> None:
    for s in SECRETS + list(extra):
        assert s not in text, f"a secret in the server's log: {s}"
    for s in extra:
        assert s not in text


@pytest.fixture
def dbfile(knut, tmp_path) -> Path:
    db = tmp_path / "store.duckdb"
    subprocess.run([str(knut), "query", "--db", str(db), SETUP_SQL], check=True,
                   stdout=subprocess.DEVNULL)
    return db


@pytest.fixture
def auth_file(tmp_path) -> Path:
    p = tmp_path / "serve.auth"
    p.write_text(AUTH_FILE)
    p.chmod(0o600)
    return p


@pytest.fixture
def server(knut, dbfile, tmp_path, auth_file):
    s = Server(knut, dbfile, tmp_path, "--auth-file", str(auth_file),
               env={"KNUT_SERVE_TOKEN": "erin:tok-env-erin"})
    yield s
    assert s.stop() == 0
    no_secrets(s.stderr())


def bearer(tok: str) -> fl.FlightCallOptions:
    return fl.FlightCallOptions(headers=[(b"authorization", f"Bearer {tok}".encode())])


def fetch(c: fl.FlightClient, cmd: bytes, opts: fl.FlightCallOptions) -> pa.Table:
    info = c.get_flight_info(fl.FlightDescriptor.for_command(cmd), opts)
    return c.do_get(info.endpoints[0].ticket, opts).read_all()


def rows(c, sql, opts):
    return fetch(c, w.statement_query(sql), opts).to_pylist()


def basic_b64(user: str, pw: str, padded: bool) -> str:
    b = base64.b64encode(f"{user}:{pw}".encode()).decode()
    return b if padded else b.rstrip("=")


def handshake(port: int, authorization: str | None) -> tuple[grpc.StatusCode, dict]:
    """A raw Handshake with no request messages, as the Go client sends it;
    the code and the response headers."""
    md = [("authorization", authorization)] if authorization else []
    with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
        call = ch.stream_stream(SVC + "Handshake")(iter(()), metadata=md, timeout=10)
        try:
            list(call)
            return grpc.StatusCode.OK, dict(call.initial_metadata())
        except grpc.RpcError as e:
            return e.code(), dict(e.initial_metadata() or ())


def session_token(port: int, user: str, pw: str, padded: bool = True) -> str:
    code, headers = handshake(port, "Basic " + basic_b64(user, pw, padded))
    assert code == grpc.StatusCode.OK
    value = headers["authorization"]
    assert value.startswith("Bearer ")
    return value[len("Bearer "):]


# ---- the matrix: every RPC x credentials ----

def rpc_calls():
    desc = w.field_varint(1, 2) + w.field_bytes(2, w.statement_query("SELECT 1 AS one"))
    ticket = w.field_bytes(1, w.any_pack("TicketStatementQuery", w.field_bytes(1, b"QSELECT 1")))
    update = w.field_bytes(1, w.field_varint(1, 2) + w.field_bytes(
        2, w.any_pack("CommandStatementUpdate", w.field_bytes(1, "SELECT 1"))))
    action = w.field_bytes(1, "CreatePreparedStatement") + w.field_bytes(
        2, w.create_prepared("SELECT 1"))
    # (method, kind, request, code with good credentials)
    return [
        ("Handshake", "stream_stream", None, grpc.StatusCode.OK),
        ("ListFlights", "unary_stream", b"", grpc.StatusCode.OK),
        ("GetFlightInfo", "unary_unary", desc, grpc.StatusCode.OK),
        ("PollFlightInfo", "unary_unary", desc, grpc.StatusCode.OK),
        ("GetSchema", "unary_unary", desc, grpc.StatusCode.OK),
        ("DoGet", "unary_stream", ticket, grpc.StatusCode.OK),
        ("DoPut", "stream_stream", update, grpc.StatusCode.UNIMPLEMENTED),  # read-only
        ("DoAction", "unary_stream", action, grpc.StatusCode.OK),
        ("ListActions", "unary_stream", b"", grpc.StatusCode.OK),
    ]


def call_rpc(ch, method, kind, req, md) -> tuple[grpc.StatusCode, str]:
    try:
        fn = getattr(ch, kind)(SVC + method)
        if kind == "unary_unary":
            fn(req, metadata=md, timeout=10)
        elif kind == "unary_stream":
            list(fn(req, metadata=md, timeout=10))
        else:
            list(fn(iter([req] if req is not None else []), metadata=md, timeout=10))
        return grpc.StatusCode.OK, ""
    except grpc.RpcError as e:
        return e.code(), e.details() or ""


def matrix(port: int, creds: dict, extra_secrets=()) -> None:
    with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
        for method, kind, req, good_code in rpc_calls():
            for label, (md, ok, why) in creds.items():
                code, details = call_rpc(ch, method, kind, req, md)
                if ok is None:  # Basic: valid on Handshake only
                    ok = method == "Handshake"
                want = good_code if ok else grpc.StatusCode.UNAUTHENTICATED
                assert code == want, (method, label, code, details)
                assert why in details, (method, label, details)
                for s in SECRETS + list(extra_secrets):
                    assert s not in details


def test_every_rpc_needs_good_credentials(server):
    fresh = session_token(server.port, "dave", "pw-dave")
    basic = "Basic " + basic_b64("carol", "pw-carol", True)
    matrix(server.port, {
        "none": ([], False, "authentication required"),
        "bad": ([("authorization", "Bearer not-a-token")], False, "not valid"),
        "unknown scheme": ([("authorization", "Digest abc")], False, "neither Bearer"),
        "basic off Handshake": ([("authorization", basic)], None, ""),
        "good token": ([("authorization", "Bearer tok-alice-1")], True, ""),
        "good env token": ([("authorization", "Bearer tok-env-erin")], True, ""),
        "good session": ([("authorization", f"Bearer {fresh}")], True, ""),
    }, [fresh])
    no_secrets(server.stderr(), [fresh])


def test_every_table_rpc_checks_the_identity(server):
    """RPC x identity x table: what an identity may not read is
    PERMISSION_DENIED wherever a query enters; what it may, OK."""
    dave = session_token(server.port, "dave", "pw-dave")
    who = {"alice": "tok-alice-1", "bob": "tok-bob", "dave": dave}
    may = {("alice", "people"), ("alice", "secret"), ("bob", "people")}

    def requests(sql):
        desc = w.field_varint(1, 2) + w.field_bytes(2, w.statement_query(sql))
        ticket = w.field_bytes(1, w.any_pack("TicketStatementQuery",
                                             w.field_bytes(1, b"Q" + sql.encode())))
        action = w.field_bytes(1, "CreatePreparedStatement") + w.field_bytes(
            2, w.create_prepared(sql))
        return [("GetFlightInfo", "unary_unary", desc), ("PollFlightInfo", "unary_unary", desc),
                ("GetSchema", "unary_unary", desc), ("DoGet", "unary_stream", ticket),
                ("DoAction", "unary_stream", action)]

    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as ch:
        for name, tok in who.items():
            md = [("authorization", f"Bearer {tok}")]
            for table in ("people", "secret"):
                for method, kind, req in requests(f"SELECT * FROM {table}"):
                    code, details = call_rpc(ch, method, kind, req, md)
                    want = (grpc.StatusCode.OK if (name, table) in may
                            else grpc.StatusCode.PERMISSION_DENIED)
                    assert code == want, (name, table, method, details)
                    if want != grpc.StatusCode.OK:
                        assert f"'{name}' may not read store.main.{table}" in details
    no_secrets(server.stderr(), [dave])


def test_every_rpc_refuses_a_stale_session(knut, dbfile, tmp_path, auth_file):
    s = Server(knut, dbfile, tmp_path, "--auth-file", str(auth_file), "--session-ttl", "1")
    try:
        stale = session_token(s.port, "carol", "pw-carol")
        time.sleep(1.5)  # past --session-ttl 1 (the check is only that it has expired)
        matrix(s.port, {"stale session": ([("authorization", f"Bearer {stale}")], False,
                                          "expired")}, [stale])
        # a new Handshake gives a new token
        fresh = session_token(s.port, "carol", "pw-carol")
        assert fresh != stale
    finally:
        assert s.stop() == 0
    no_secrets(s.stderr(), [stale, fresh])


def test_basic_handshake_padded_and_unpadded(server):
    for padded in (True, False):
        tok = session_token(server.port, "carol", "pw-carol", padded)
        c = fl.FlightClient(server.uri)
        assert rows(c, "SELECT count(*) AS n FROM people", bearer(tok)) == [{"n": 2}]
    assert basic_b64("carol", "pw-carol", True).endswith("=")  # the padding was there to drop
    for bad in ("Basic " + basic_b64("carol", "nope", True), "Basic " +
                basic_b64("mallory", "pw-carol", False), "Basic !!!", "Basic " +
                base64.b64encode(b"no-colon").decode()):
        code, headers = handshake(server.port, bad)
        assert code == grpc.StatusCode.UNAUTHENTICATED and "authorization" not in headers
    # a bearer token on Handshake is fine too (what the ODBC driver's token mode sends)
    assert handshake(server.port, "Bearer tok-bob")[0] == grpc.StatusCode.OK


def test_pyarrow_authenticate_basic_token(server):
    c = fl.FlightClient(server.uri)
    key, value = c.authenticate_basic_token("dave", "pw-dave")  # the PBKDF2 hash
    assert key == b"authorization" and value.startswith(b"Bearer ")
    opts = fl.FlightCallOptions(headers=[(key, value)])
    assert rows(c, "SELECT 41 + 1 AS x", opts) == [{"x": 42}]
    with pytest.raises(fl.FlightUnauthenticatedError):
        c.authenticate_basic_token("dave", "wrong")
    with pytest.raises(fl.FlightUnauthenticatedError):
        rows(c, "SELECT 1", fl.FlightCallOptions())


def test_adbc_username_password_and_header(server):
    import adbc_driver_flightsql.dbapi as flightsql
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        conn = flightsql.connect(server.uri, db_kwargs={"username": "carol",
                                                        "password": "pw-carol"})
    try:
        cur = conn.cursor()
        cur.execute("SELECT name FROM people WHERE id = ?", parameters=(2,))
        assert cur.fetchall() == [("grace",)]
        with pytest.raises(Exception, match="(?i)permission|denied"):
            cur.execute("SELECT * FROM secret")
        objs = conn.adbc_get_objects(depth="tables").read_all().to_pylist()
        tables = [(s["db_schema_name"], t["table_name"]) for o in objs
                  for s in o["catalog_db_schemas"] for t in s["db_schema_tables"]]
        assert tables == [("main", "adults"), ("main", "people")]
        cur.close()
    finally:
        conn.close()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        conn = flightsql.connect(server.uri, db_kwargs={
            "adbc.flight.sql.authorization_header": "Bearer tok-bob"})
    try:
        cur = conn.cursor()
        cur.execute("SELECT count(*) FROM graph.knows")
        assert cur.fetchone() == (0,)
        cur.close()
    finally:
        conn.close()
    with pytest.raises(Exception, match="(?i)unauthenticated|wrong user"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            bad = flightsql.connect(server.uri, db_kwargs={"username": "carol",
                                                           "password": "nope"})
            bad.cursor().execute("SELECT 1")


# ---- authorization ----

def test_allow_list_on_queries(server):
    c = fl.FlightClient(server.uri)
    alice, bob, dave = bearer("tok-alice-2"), bearer("tok-bob"), bearer(session_token(
        server.port, "dave", "pw-dave"))
    assert rows(c, "SELECT pin FROM secret", alice) == [{"pin": "4711"}]
    assert rows(c, "SELECT * FROM vault.keys", alice) == []
    assert rows(c, "SELECT id FROM people ORDER BY id", bob) == [{"id": 1}, {"id": 2}]
    assert rows(c, "SELECT count(*) AS n FROM graph.knows", bob) == [{"n": 0}]
    assert rows(c, "SELECT count(*) AS n FROM store.graph.knows", bob) == [{"n": 0}]
    # a view is read through the tables under it: adults reads people
    assert rows(c, "SELECT count(*) AS n FROM adults", bob) == [{"n": 1}]
    assert rows(c, "WITH secret AS (SELECT 7 AS x) SELECT x FROM secret", bob) == [{"x": 7}]
    assert rows(c, "SELECT * FROM range(2) t(i)", bob) == [{"i": 0}, {"i": 1}]
    denied = [
        "SELECT * FROM secret",
        "SELECT * FROM main.secret",
        "SELECT * FROM store.main.secret",
        "SELECT * FROM vault.keys",
        "SELECT * FROM people WHERE id IN (SELECT id FROM secret)",
        "SELECT (SELECT max(pin) FROM secret) AS p",
        "WITH people AS (SELECT * FROM secret) SELECT * FROM people",
        "SELECT * FROM people, secret",
        "SELECT * FROM query_table('secret')",
        "SELECT * FROM pragma_storage_info('secret')",
        "SELECT * FROM query('SELECT * FROM secret')",
        "INSERT INTO people VALUES (3, 'x')",
        "SET threads = 1",
        "PRAGMA version",
        "EXPLAIN SELECT * FROM secret",
        # DuckDB's catalog views name every table and column (and hold views' SQL)
        "SELECT * FROM duckdb_tables",
        "SELECT sql FROM duckdb_views",
        "SELECT * FROM information_schema.columns",
        "SELECT * FROM pg_catalog.pg_class",
        "SELECT * FROM system.main.duckdb_columns",
        "SELECT table_name FROM people, information_schema.tables",
    ]
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as ch:
        for sql in denied:
            with pytest.raises(fl.FlightUnauthorizedError):
                rows(c, sql, bob)
            # GetSchema as well (pyarrow raises a bare OSError there: ask grpcio)
            desc = w.field_varint(1, 2) + w.field_bytes(2, w.statement_query(sql))
            code, _ = call_rpc(ch, "GetSchema", "unary_unary", desc,
                               [("authorization", "Bearer tok-bob")])
            assert code == grpc.StatusCode.PERMISSION_DENIED, sql
    # a ticket made for alice is checked again when bob redeems it
    info = c.get_flight_info(fl.FlightDescriptor.for_command(
        w.statement_query("SELECT * FROM secret")), alice)
    with pytest.raises(fl.FlightUnauthorizedError, match="secret"):
        c.do_get(info.endpoints[0].ticket, bob).read_all()
    # dave has no allow line: no table at all, but queries without one
    assert rows(c, "SELECT 1 AS one", dave) == [{"one": 1}]
    with pytest.raises(fl.FlightUnauthorizedError, match="may not read store.main.people"):
        rows(c, "SELECT * FROM people", dave)


def test_allow_list_on_prepared_statements(server):
    c = fl.FlightClient(server.uri)
    alice, bob = bearer("tok-alice-1"), bearer("tok-bob")

    def prepare(sql, opts):
        res = list(c.do_action(fl.Action("CreatePreparedStatement", w.create_prepared(sql)),
                               opts))
        return w.decode(w.any_unpack(res[0].body.to_pybytes())[1])[1][0]

    with pytest.raises(fl.FlightUnauthorizedError):
        prepare("SELECT * FROM secret WHERE id = $1", bob)
    h = prepare("SELECT name FROM people WHERE id = $1", bob)
    desc = fl.FlightDescriptor.for_command(w.prepared_query(h))
    params = pa.record_batch([pa.array([2], pa.int32())], names=["1"])
    writer, reader = c.do_put(desc, params.schema, bob)
    writer.write_batch(params)
    writer.done_writing()
    reader.read()
    writer.close()
    assert fetch(c, w.prepared_query(h), bob).to_pylist() == [{"name": "grace"}]
    # another identity's handle is as unknown as one never made
    with pytest.raises(pa.ArrowKeyError, match="unknown prepared statement handle"):
        fetch(c, w.prepared_query(h), alice)
    with pytest.raises(pa.ArrowKeyError, match="unknown prepared statement handle"):
        list(c.do_action(fl.Action("ClosePreparedStatement", w.close_prepared(h)), alice))
    assert list(c.do_action(fl.Action("ClosePreparedStatement", w.close_prepared(h)),
                            bob)) == []


def test_catalog_lists_only_what_may_be_read(server):
    c = fl.FlightClient(server.uri)
    dave = bearer(session_token(server.port, "dave", "pw-dave"))

    def tables(opts, **kw):
        t = fetch(c, w.get_tables(**kw), opts)
        return list(zip(t.column("db_schema_name").to_pylist(),
                        t.column("table_name").to_pylist()))

    assert tables(bearer("tok-alice-1")) == [("graph", "knows"), ("main", "adults"),
                                             ("main", "people"), ("main", "secret"),
                                             ("vault", "keys")]
    assert tables(bearer("tok-bob")) == [("graph", "knows"), ("main", "people")]
    assert tables(bearer("tok-bob"), include_schema=True) == [("graph", "knows"),
                                                              ("main", "people")]
    assert tables(bearer("tok-bob"), table_pattern="s%") == []
    assert tables(dave) == []
    schemas = fetch(c, w.get_db_schemas(), bearer("tok-bob")).column("db_schema_name")
    assert schemas.to_pylist() == ["graph", "main"]
    assert fetch(c, w.get_db_schemas(), dave).num_rows == 0
    assert fetch(c, w.get_catalogs(), bearer("tok-bob")).column(0).to_pylist() == ["store"]
    assert fetch(c, w.get_catalogs(), dave).num_rows == 0
    # keys only of tables the identity may read
    def pk(opts, table):
        return fetch(c, w.get_keys("PrimaryKeys", table), opts).column("column_name").to_pylist()

    assert pk(bearer("tok-alice-1"), "secret") == ["id"]
    assert pk(bearer("tok-bob"), "people") == ["id"]
    assert pk(bearer("tok-bob"), "secret") == []
    assert pk(dave, "people") == []
    # the SqlInfo and the table types are for every identity
    assert fetch(c, w.get_table_types(), dave).num_rows == 3


# ---- rotation, the environment, mutual TLS, the file ----

def test_token_rotation(knut, dbfile, tmp_path, auth_file):
    s = Server(knut, dbfile, tmp_path, "--auth-file", str(auth_file))
    try:
        c = fl.FlightClient(s.uri)
        for tok in ("tok-alice-1", "tok-alice-2"):  # old and new, both valid
            assert rows(c, "SELECT 1 AS one", bearer(tok)) == [{"one": 1}]
    finally:
        assert s.stop() == 0
    # the old token is dropped from the file: stale after the restart
    auth_file.write_text(AUTH_FILE.replace("token alice tok-alice-1\n", ""))
    s = Server(knut, dbfile, tmp_path, "--auth-file", str(auth_file))
    try:
        c = fl.FlightClient(s.uri)
        with pytest.raises(fl.FlightUnauthenticatedError):
            rows(c, "SELECT 1", bearer("tok-alice-1"))
        assert rows(c, "SELECT 1 AS one", bearer("tok-alice-2")) == [{"one": 1}]
    finally:
        assert s.stop() == 0
    no_secrets(s.stderr())


def test_tokens_from_the_environment_only(knut, dbfile, tmp_path):
    s = Server(knut, dbfile, tmp_path, env={"KNUT_SERVE_TOKEN": "tok-env-erin ops:tok-bob"})
    try:
        c = fl.FlightClient(s.uri)
        assert rows(c, "SELECT count(*) AS n FROM secret", bearer("tok-env-erin")) == [{"n": 1}]
        assert rows(c, "SELECT 1 AS one", bearer("tok-bob")) == [{"one": 1}]
        with pytest.raises(fl.FlightUnauthenticatedError):
            rows(c, "SELECT 1", fl.FlightCallOptions())
    finally:
        assert s.stop() == 0
    no_secrets(s.stderr())


def client_cert(certs, name: str, cn: str) -> tuple[bytes, bytes]:
    """Another client certificate from the test CA."""
    d = certs["ca.pem"].parent
    subprocess.run(["openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout",
                    f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={cn}"], cwd=d,
                   check=True, capture_output=True)
    subprocess.run(["openssl", "x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey",
                    "ca.key", "-CAcreateserial", "-out", f"{name}.pem", "-days", "2",
                    "-extfile", "client.ext"], cwd=d, check=True, capture_output=True)
    return (d / f"{name}.pem").read_bytes(), (d / f"{name}.key").read_bytes()


def test_mutual_tls_identity_is_the_certificate_subject(knut, dbfile, tmp_path, auth_file,
                                                        certs):
    s = Server(knut, dbfile, tmp_path, "--auth-file", str(auth_file), "--tls-cert",
               str(certs["server.pem"]), "--tls-key", str(certs["server.key"]), "--tls-ca",
               str(certs["ca.pem"]))
    try:
        uri = f"grpc+tls://127.0.0.1:{s.port}"
        ca = certs["ca.pem"].read_bytes()
        c = fl.FlightClient(uri, tls_root_certs=ca, cert_chain=certs["client.pem"].read_bytes(),
                            private_key=certs["client.key"].read_bytes())
        none = fl.FlightCallOptions()
        # allow "CN=knut test client" people
        assert rows(c, "SELECT count(*) AS n FROM people", none) == [{"n": 2}]
        with pytest.raises(fl.FlightUnauthorizedError, match="'CN=knut test client' may not"):
            rows(c, "SELECT * FROM secret", none)
        # a token on the call wins over the certificate
        assert rows(c, "SELECT count(*) AS n FROM secret", bearer("tok-alice-1")) == [{"n": 1}]
        with pytest.raises(fl.FlightUnauthenticatedError):
            rows(c, "SELECT 1", bearer("not-a-token"))
        # another subject of the same CA: authenticated, allowed nothing
        chain, key = client_cert(certs, "other", "other client")
        o = fl.FlightClient(uri, tls_root_certs=ca, cert_chain=chain, private_key=key)
        with pytest.raises(fl.FlightUnauthorizedError, match="'CN=other client' may not"):
            rows(o, "SELECT * FROM people", none)
        # ADBC with a client certificate and nothing else
        import adbc_driver_flightsql.dbapi as flightsql
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            conn = flightsql.connect(uri, db_kwargs={
                "adbc.flight.sql.client_option.tls_root_certs": ca.decode(),
                "adbc.flight.sql.client_option.mtls_cert_chain":
                    certs["client.pem"].read_text(),
                "adbc.flight.sql.client_option.mtls_private_key":
                    certs["client.key"].read_text()})
        try:
            cur = conn.cursor()
            cur.execute("SELECT name FROM people ORDER BY id")
            assert cur.fetchall() == [("ada",), ("grace",)]
            cur.close()
        finally:
            conn.close()
    finally:
        assert s.stop() == 0
    no_secrets(s.stderr())


def test_tls_without_client_ca_has_no_certificate_identity(knut, dbfile, tmp_path, auth_file,
                                                           certs):
    """Plain TLS: a client certificate is not asked for, so a call without
    a token is unauthenticated whatever the client holds."""
    s = Server(knut, dbfile, tmp_path, "--auth-file", str(auth_file), "--tls-cert",
               str(certs["server.pem"]), "--tls-key", str(certs["server.key"]))
    try:
        c = fl.FlightClient(f"grpc+tls://127.0.0.1:{s.port}",
                            tls_root_certs=certs["ca.pem"].read_bytes(),
                            cert_chain=certs["client.pem"].read_bytes(),
                            private_key=certs["client.key"].read_bytes())
        with pytest.raises(fl.FlightUnauthenticatedError):
            rows(c, "SELECT 1", fl.FlightCallOptions())
        assert rows(c, "SELECT 1 AS one", bearer("tok-bob")) == [{"one": 1}]
    finally:
        assert s.stop() == 0


def test_auth_file_errors(knut, dbfile, tmp_path):
    def start(text: str, mode: int = 0o600):
        p = tmp_path / "bad.auth"
        p.write_text(text)
        p.chmod(mode)
        return subprocess.run([str(knut), "serve", "--db", str(dbfile), "--addr", "127.0.0.1:0",
                               "--auth-file", str(p)], capture_output=True, text=True,
                              timeout=30)

    r = start("token alice tok-alice-1\n", 0o644)
    assert r.returncode == 2 and "chmod 600" in r.stderr
    r = start("token alice tok-alice-1\ntoken bob tok-bob extra\n")
    assert r.returncode == 2 and "line 2" in r.stderr
    r = start("user dave pbkdf2-sha256$x$salt$00\n")
    assert r.returncode == 2 and "line 1" in r.stderr and "pbkdf2-sha256$ITERATIONS" in r.stderr
    r = start("secret tok-alice-1\n")
    assert r.returncode == 2 and "unknown directive" in r.stderr
    r = start("allow bob main..x\n")
    assert r.returncode == 2 and "table pattern" in r.stderr
    r = start("allow bob people\n")  # nobody could ever connect
    assert r.returncode == 2 and "nobody could connect" in r.stderr
    r = subprocess.run([str(knut), "serve", "--db", str(dbfile), "--addr", "127.0.0.1:0",
                        "--auth-file", str(tmp_path / "missing.auth")], capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 1 and "missing.auth" in r.stderr
    for line in (r.stderr,):
        no_secrets(line)
    assert "tok-alice-1" not in start("token alice tok-alice-1 x\n").stderr


# ---- the documented example ----

REPO = Path(__file__).resolve().parents[2]


def test_documented_auth_file(knut, dbfile, tmp_path):
    """docs/serve.md shows examples/serve/serve.auth verbatim, and it works
    as the page says; so does the page's recipe for a password hash."""
    example = (REPO / "examples" / "serve" / "serve.auth").read_text()
    page = (REPO / "docs" / "serve.md").read_text()
    assert "```\n" + example + "```\n" in page
    recipe = page[page.index("python3 -c 'import getpass"):]
    recipe = recipe[:recipe.index("```")]
    r = subprocess.run(["bash", "-c", recipe], input="s3cret\n", capture_output=True, text=True,
                       start_new_session=True)  # no tty: getpass reads stdin
    assert r.returncode == 0, r.stderr
    hashed = r.stdout.strip()
    assert hashed.startswith("pbkdf2-sha256$600000$")
    auth = tmp_path / "serve.auth"
    auth.write_text(example + f"user zoe {hashed}\nallow zoe people\n")
    auth.chmod(0o600)
    s = Server(knut, dbfile, tmp_path, "--auth-file", str(auth))
    try:
        c = fl.FlightClient(s.uri)
        for tok in ("demo-token-2026-06", "demo-token-2026-12"):
            assert rows(c, "SELECT count(*) AS n FROM graph.knows", bearer(tok)) == [{"n": 0}]
        with pytest.raises(fl.FlightUnauthorizedError):
            rows(c, "SELECT * FROM secret", bearer("demo-token-2026-12"))
        assert rows(c, "SELECT count(*) AS n FROM secret", bearer("demo-token-etl")) == [{"n": 1}]
        for user, pw in (("ada", "demo-password"), ("grace", "demo-grace"), ("zoe", "s3cret")):
            opts = fl.FlightCallOptions(headers=[c.authenticate_basic_token(user, pw)])
            if user == "grace":  # no allow line: no table
                with pytest.raises(fl.FlightUnauthorizedError):
                    rows(c, "SELECT * FROM people", opts)
            else:
                assert rows(c, "SELECT count(*) AS n FROM people", opts) == [{"n": 2}]
    finally:
        assert s.stop() == 0
    log = s.stderr()
    for secret in ("demo-token-2026-06", "demo-token-etl", "demo-password", "demo-grace",
                   "s3cret"):
        assert secret not in log
