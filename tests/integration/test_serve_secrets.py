"""serve.yml's `password_file` and `password_env` (the FalkorDB password of
the Cypher tables) against a real FalkorDB behind --requirepass, on a
server that also asks its own clients for Basic credentials on Handshake
(the auth file): the Cypher tables answer with the password from a file
and from the environment; a wrong client password is UNAUTHENTICATED; a
wrong FalkorDB password fails the query with a message and no password;
an unset variable or a missing file stops the start naming it. No
password ever appears in the server's log (KNUT_LOG=debug) or errors.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import adbc_driver_flightsql.dbapi as flightsql
import pyarrow.flight as fl
import pytest

import flightsql_wire as w
from test_serve_auth import Server
from test_sync_secrets import FK_PW, SecretFalkorDB

GRAPH = "served"
CAROL_PW = "pw-carol-Zk4"
WRONG_FK_PW = "fk-wrong-Vb2"
ENV = "KNUT_TEST_FALKOR_PW"


@pytest.fixture
def falkor(start_peer):
    p = start_peer(SecretFalkorDB)
    p.query(GRAPH, "CREATE (:Person {name: 'ada', age: 36}), (:Person {name: 'grace', age: 85})")
    return p


@pytest.fixture
def dbfile(knut, tmp_path) -> Path:
    db = tmp_path / "store.duckdb"
    subprocess.run([str(knut), "query", "--db", str(db), "CREATE TABLE t AS SELECT 1 AS x"],
                   check=True, stdout=subprocess.DEVNULL)
    return db


@pytest.fixture
def auth_file(tmp_path) -> Path:
    p = tmp_path / "serve.auth"
    p.write_text(f"user carol {CAROL_PW}\n")
    p.chmod(0o600)
    return p


def serve_yml(tmp_path: Path, falkor, secret: str) -> Path:
    p = tmp_path / "serve.yml"
    p.write_text(f"""
falkordb:
  url: redis://{falkor.host}:{falkor.port}
  graph: {GRAPH}
  {secret}
queries:
  people:
    cypher: MATCH (p:Person) RETURN p.name AS name, p.age AS age ORDER BY name
    columns: {{name: VARCHAR, age: BIGINT}}
""")
    return p


def no_password(text: str) -> None:
    for pw in (FK_PW, WRONG_FK_PW, CAROL_PW):
        assert pw not in text, f"a password in the server's output: {pw}"


def check_basic_and_cypher(s: Server) -> None:
    c = fl.FlightClient(s.uri)
    cmd = fl.FlightDescriptor.for_command(w.statement_query("SELECT * FROM cypher.people"))
    for user, pw in (("carol", "nope"), ("carol", FK_PW), ("mallory", CAROL_PW)):
        with pytest.raises(fl.FlightUnauthenticatedError):
            c.authenticate_basic_token(user, pw)
    with pytest.raises(fl.FlightUnauthenticatedError):
        c.get_flight_info(cmd)  # no credentials at all
    opts = fl.FlightCallOptions(headers=[c.authenticate_basic_token("carol", CAROL_PW)])
    info = c.get_flight_info(cmd, opts)
    t = c.do_get(info.endpoints[0].ticket, opts).read_all()
    assert t.to_pylist() == [{"name": "ada", "age": 36}, {"name": "grace", "age": 85}]
    with flightsql.connect(s.uri, db_kwargs={"username": "carol", "password": CAROL_PW}) as conn:
        cur = conn.cursor()
        cur.execute("SELECT name FROM cypher.people WHERE age > ?", parameters=(40,))
        assert cur.fetch_arrow_table().column("name").to_pylist() == ["grace"]
        cur.close()
    with pytest.raises(Exception, match="(?i)unauthenticated|wrong user name or password"):
        with flightsql.connect(s.uri, db_kwargs={"username": "carol", "password": "nope"}) as conn:
            cur = conn.cursor()
            cur.execute("SELECT 1")


def test_password_file(knut, tmp_path, falkor, dbfile, auth_file):
    pw = tmp_path / "falkor.pw"
    pw.write_text(FK_PW + "\n")  # one line; the newline is not part of it
    pw.chmod(0o600)
    cfg = serve_yml(tmp_path, falkor, "password_file: falkor.pw")  # relative to serve.yml
    s = Server(knut, dbfile, tmp_path, "--config", str(cfg), "--auth-file", str(auth_file))
    try:
        check_basic_and_cypher(s)
    finally:
        assert s.stop() == 0
    assert "Handshake" in s.stderr() or "handshake" in s.stderr()
    no_password(s.stderr())


def test_password_env(knut, tmp_path, falkor, dbfile, auth_file):
    cfg = serve_yml(tmp_path, falkor, f"password_env: {ENV}")
    s = Server(knut, dbfile, tmp_path, "--config", str(cfg), "--auth-file", str(auth_file),
               env={ENV: FK_PW})
    try:
        check_basic_and_cypher(s)
    finally:
        assert s.stop() == 0
    no_password(s.stderr())


def test_wrong_falkordb_password_fails_the_query_not_the_server(knut, tmp_path, falkor, dbfile,
                                                                auth_file):
    cfg = serve_yml(tmp_path, falkor, f"password_env: {ENV}")
    s = Server(knut, dbfile, tmp_path, "--config", str(cfg), "--auth-file", str(auth_file),
               env={ENV: WRONG_FK_PW})
    try:
        c = fl.FlightClient(s.uri)
        opts = fl.FlightCallOptions(headers=[c.authenticate_basic_token("carol", CAROL_PW)])
        cmd = fl.FlightDescriptor.for_command(w.statement_query("SELECT * FROM cypher.people"))
        # FalkorDB refused the server, not the client: UNAVAILABLE, naming the peer
        with pytest.raises(fl.FlightUnavailableError) as e:
            info = c.get_flight_info(cmd, opts)
            c.do_get(info.endpoints[0].ticket, opts).read_all()
        msg = str(e.value)
        assert f"falkordb {falkor.host}:{falkor.port}: authentication failed" in msg, msg
        no_password(msg)
        # the server keeps serving what needs no FalkorDB
        info = c.get_flight_info(fl.FlightDescriptor.for_command(
            w.statement_query("SELECT x FROM t")), opts)
        assert c.do_get(info.endpoints[0].ticket, opts).read_all().to_pylist() == [{"x": 1}]
    finally:
        assert s.stop() == 0
    no_password(s.stderr())


@pytest.mark.parametrize("secret, what", [
    (f"password_env: {ENV}", f"the environment variable {ENV} is not set"),
    ("password_file: nope.pw", "falkordb password_file: "),
    (f"password_file: x.pw\n  password_env: {ENV}", "password_file or password_env, not both"),
])
def test_secret_sources_refused_at_start(knut, tmp_path, falkor, secret, what):
    cfg = serve_yml(tmp_path, falkor, secret)
    env = {k: v for k, v in os.environ.items() if k != ENV}
    r = subprocess.run([str(knut), "serve", "--memory", "--addr", "127.0.0.1:0", "--config",
                        str(cfg)], capture_output=True, text=True, timeout=60, env=env)
    assert r.returncode > 0, r.stderr
    assert what in r.stderr and str(cfg) in r.stderr, r.stderr
    if "nope.pw" in secret:
        assert str(tmp_path / "nope.pw") in r.stderr, r.stderr
    assert "assertion failed" not in r.stderr
    no_password(r.stderr)
