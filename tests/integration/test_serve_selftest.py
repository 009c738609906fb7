"""`knut serve --self-test [URL]`: the Flight SQL checklist as a table (docs/serve.md).

Run against knut serve itself (in-process, and a separate server by URL,
with and without bearer tokens), against a real pyarrow.flight server that
is Flight but not Flight SQL (the table shows its failures, nothing
crashes), and against a URL where nothing listens (a clear error, no table).
"""
from __future__ import annotations

import os
import re
import subprocess
import threading
from pathlib import Path

import pyarrow as pa
import pyarrow.flight as fl
import pytest

from peers import free_port
from test_serve import SETUP_SQL, Server

ROW = re.compile(r"^(\S.{29}) (pass|FAIL) (.*)$")


def selftest(knut, *args, env=None):
    e = {k: v for k, v in os.environ.items() if not k.startswith("KNUT_")}
    e.update(env or {})
    return subprocess.run([str(knut), "serve", *args], capture_output=True, text=True,
                          timeout=180, env=e)


def table(out: str) -> dict[str, tuple[str, str]]:
    rows = {}
    for line in out.splitlines():
        m = ROW.match(line)
        if m:
            rows[m.group(1).strip()] = (m.group(2), m.group(3))
    return rows


CHECKS = {"Handshake", "ListActions", "GetSqlInfo", "GetSqlInfo(filter)", "GetCatalogs",
          "GetDbSchemas", "GetTables", "GetTables(include_schema)", "GetTables(filter)",
          "GetSchema(GetTables)", "GetTableTypes", "GetXdbcTypeInfo", "GetPrimaryKeys",
          "GetExportedKeys", "GetImportedKeys", "GetCrossReference", "StatementQuery",
          "GetSchema(StatementQuery)", "PollFlightInfo", "CreatePreparedStatement",
          "DoPut(bind parameters)", "PreparedStatementQuery", "ClosePreparedStatement",
          "error: bad SQL", "error: unknown table", "error: unknown action",
          "error: unknown method", "error: unknown command"}


def test_in_process_all_pass(knut):
    p = selftest(knut, "--memory", "--self-test")
    assert p.returncode == 0, p.stdout + p.stderr
    rows = table(p.stdout)
    assert set(rows) == CHECKS
    assert all(r[0] == "pass" for r in rows.values()), rows
    assert "GetTables(include_schema)" in rows and "bound 41, got 42" in p.stdout
    assert re.search(r"^28 checks: 28 passed, 0 failed \(grpc://127\.0\.0\.1:\d+\)$", p.stdout,
                     re.M)


def test_url_against_a_running_server(knut, tmp_path):
    db = tmp_path / "store.duckdb"
    subprocess.run([str(knut), "query", "--db", str(db), SETUP_SQL], check=True,
                   stdout=subprocess.DEVNULL)
    s = Server(knut, db)
    try:
        p = selftest(knut, "--self-test", s.uri)
        assert p.returncode == 0, p.stdout + p.stderr
        rows = table(p.stdout)
        assert all(r[0] == "pass" for r in rows.values()), rows
        # the served tables are listed, each table_schema an IPC schema
        n = int(re.match(r"(\d+) rows", rows["GetTables(include_schema)"][1]).group(1))
        assert n >= 3
        # and the server keeps serving afterwards
        names = {a.type for a in s.client().list_actions()}
        assert "CreatePreparedStatement" in names and s.proc.poll() is None
    finally:
        assert s.stop() == 0


def test_bearer_token(knut):
    env = {"KNUT_SERVE_TOKEN": "bi:tok-3141-secret"}
    s_env = {**os.environ, **env}
    s = subprocess.Popen([str(knut), "serve", "--memory", "--addr", "127.0.0.1:0"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=s_env)
    try:
        port = int(s.stdout.readline().strip().rsplit(":", 1)[1])
        url = f"grpc://127.0.0.1:{port}"
        p = selftest(knut, "--self-test", url, env={"KNUT_SELF_TEST_TOKEN": "tok-3141-secret"})
        assert p.returncode == 0, p.stdout + p.stderr
        assert "tok-3141-secret" not in p.stdout + p.stderr
        p = selftest(knut, "--self-test", url)
        assert p.returncode == 1
        rows = table(p.stdout)
        assert rows["Handshake"][0] == "FAIL" and "UNAUTHENTICATED" in rows["Handshake"][1]
        assert rows["GetCatalogs"][0] == "FAIL"
    finally:
        s.terminate()
        s.wait(timeout=20)
    # in-process: the server's options apply, the token comes from the env too
    p = selftest(knut, "--memory", "--self-test",
                 env={**env, "KNUT_SELF_TEST_TOKEN": "tok-3141-secret"})
    assert p.returncode == 0, p.stdout + p.stderr


class PlainFlight(fl.FlightServerBase):
    """A real Flight server (pyarrow) that knows no Flight SQL: one table by path."""

    def __init__(self, location):
        super().__init__(location)
        self.table = pa.table({"x": [1, 2, 3]})

    def get_flight_info(self, context, descriptor):
        if descriptor.descriptor_type == fl.DescriptorType.PATH:
            return fl.FlightInfo(self.table.schema, descriptor,
                                 [fl.FlightEndpoint(b"t", [])], 3, -1)
        raise fl.FlightServerError("not a Flight SQL server: no commands")

    def do_get(self, context, ticket):
        return fl.RecordBatchStream(self.table)

    def list_actions(self, context):
        return [("ping", "answers pong")]

    def do_action(self, context, action):
        if action.type == "ping":
            return [b"pong"]
        raise NotImplementedError(action.type)


def test_against_a_plain_flight_server(knut):
    port = free_port()
    srv = PlainFlight(f"grpc://127.0.0.1:{port}")
    t = threading.Thread(target=srv.serve, daemon=True)
    t.start()
    try:
        p = selftest(knut, "--self-test", f"grpc://127.0.0.1:{port}")
        assert p.returncode == 1, p.stdout + p.stderr  # failures, not a crash (< 0)
        rows = table(p.stdout)
        assert set(rows) == CHECKS
        fails = {k for k, v in rows.items() if v[0] == "FAIL"}
        assert {"GetSqlInfo", "GetCatalogs", "GetTables", "StatementQuery",
                "CreatePreparedStatement", "ListActions"} <= fails
        assert "GetFlightInfo(CommandGetCatalogs)" in rows["GetCatalogs"][1]
        assert "CreatePreparedStatement" in rows["ListActions"][1]
        m = re.search(r"^28 checks: (\d+) passed, (\d+) failed", p.stdout, re.M)
        assert m and int(m.group(2)) == len(fails)
        # the server is still up: the self-test left it working
        c = fl.FlightClient(f"grpc://127.0.0.1:{port}")
        assert c.do_get(fl.Ticket(b"t")).read_all().num_rows == 3
    finally:
        srv.shutdown()


def test_unreachable_url(knut):
    port = free_port()  # nothing listens there
    p = selftest(knut, "--self-test", f"grpc://127.0.0.1:{port}")
    assert p.returncode == 1
    assert p.stdout == ""
    assert f"grpc://127.0.0.1:{port}: no Flight server answers: UNAVAILABLE" in p.stderr


@pytest.mark.parametrize("args,msg", [
    (["--self-test", "http://127.0.0.1:1"], "expected grpc://HOST:PORT"),
    (["--self-test", "grpc://127.0.0.1"], "expected grpc://HOST:PORT"),
    (["--self-test", "grpc://127.0.0.1:1", "--memory"], "takes no server options"),
    (["grpc://127.0.0.1:1"], "a URL is for --self-test"),
])
def test_usage(knut, args, msg):
    p = selftest(knut, *args)
    assert p.returncode == 2 and msg in p.stderr, p.stderr


def test_tls(knut, tmp_path):
    """In-process over grpc+tls (the client trusts the served, self-signed
    certificate); by URL the system roots do not know it: no table."""
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                    "s.key", "-out", "s.pem", "-days", "2", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
                   cwd=tmp_path, check=True, capture_output=True)
    tls = ["--tls-cert", str(tmp_path / "s.pem"), "--tls-key", str(tmp_path / "s.key")]
    p = selftest(knut, "--memory", *tls, "--self-test")
    assert p.returncode == 0, p.stdout + p.stderr
    assert re.search(r"^28 checks: 28 passed, 0 failed \(grpc\+tls://127\.0\.0\.1:\d+\)$",
                     p.stdout, re.M)
    s = Server(knut, None, *tls)
    try:
        url = f"grpc+tls://127.0.0.1:{s.port}"
        p = selftest(knut, "--self-test", url)
        assert p.returncode == 1 and p.stdout == ""
        assert f"{url}: no Flight server answers: UNAVAILABLE" in p.stderr
    finally:
        assert s.stop() == 0
    p = selftest(knut, "--memory", *tls, "--tls-ca", str(tmp_path / "s.pem"), "--self-test")
    assert p.returncode == 2 and "client certificate" in p.stderr
