"""`knut serve` prepared statement handles: signed, self-describing, so a
handle made by one server runs on another with the same handle key (a
second replica, or the same server after a restart). Real clients on
loopback: pyarrow.flight with the Flight SQL messages of flightsql_wire,
and the ADBC Flight SQL driver across a restart.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.flight as fl
import pytest

import flightsql_wire as w
from test_serve_auth import SETUP_SQL, Server

KEY = "5f0c" * 16  # 64 bytes of key text, as `openssl rand -hex 32` gives


@pytest.fixture
def dbfile(knut, tmp_path) -> Path:
    db = tmp_path / "store.duckdb"
    subprocess.run([str(knut), "query", "--db", str(db), SETUP_SQL], check=True,
                   stdout=subprocess.DEVNULL)
    return db


@pytest.fixture
def key_file(tmp_path) -> Path:
    p = tmp_path / "handle.key"
    p.write_text(KEY + "\n")
    p.chmod(0o600)
    return p


def prepare(c: fl.FlightClient, sql: str, options=None) -> bytes:
    res = list(c.do_action(fl.Action("CreatePreparedStatement", w.create_prepared(sql)),
                           options))
    _, body = w.any_unpack(res[0].body.to_pybytes())
    return w.decode(body)[1][0]


def bind(c: fl.FlightClient, handle: bytes, batch: pa.RecordBatch, options=None) -> bytes:
    desc = fl.FlightDescriptor.for_command(w.prepared_query(handle))
    writer, reader = c.do_put(desc, batch.schema, options)
    writer.write_batch(batch)
    writer.done_writing()
    put = reader.read()
    writer.close()
    return w.decode(put.to_pybytes())[1][0]


def run(c: fl.FlightClient, handle: bytes, options=None) -> pa.Table:
    info = c.get_flight_info(fl.FlightDescriptor.for_command(w.prepared_query(handle)), options)
    return c.do_get(info.endpoints[0].ticket, options).read_all()


PARAMS = pa.record_batch([pa.array([1], pa.int32()), pa.array(["ada"])], names=["1", "2"])
SQL = "SELECT id, name FROM people WHERE id >= $1 AND name <> $2 ORDER BY id"
ROWS = {"id": [2], "name": ["grace"]}


def test_a_handle_runs_on_a_second_replica(knut, dbfile, tmp_path, key_file):
    # replica b takes the key from the environment, a from the file
    a = Server(knut, dbfile, tmp_path, "--handle-key-file", str(key_file))
    b = Server(knut, dbfile, tmp_path, env={"KNUT_SERVE_HANDLE_KEY": KEY})
    try:
        ca, cb = fl.FlightClient(a.uri), fl.FlightClient(b.uri)
        h = prepare(ca, SQL)
        bound = bind(ca, h, PARAMS)
        assert run(cb, bound).to_pydict() == ROWS  # b never saw it
        # and the other way: prepared on b, bound on a, run on b
        h2 = prepare(cb, "SELECT count(*) AS n FROM people WHERE id > $1")
        bound2 = bind(ca, h2, pa.record_batch([pa.array([1], pa.int64())], names=["1"]))
        assert run(cb, bound2).column("n").to_pylist() == [1]
        # a statement without parameters needs no DoPut anywhere
        assert run(cb, prepare(ca, "SELECT 7 AS seven")).column("seven").to_pylist() == [7]
        # closing on one replica is fine on the other
        assert list(cb.do_action(fl.Action("ClosePreparedStatement",
                                           w.close_prepared(bound)))) == []
    finally:
        assert a.stop() == 0 and b.stop() == 0
    assert KEY not in a.stderr() + b.stderr()


def test_a_handle_of_another_key_or_altered_is_refused(knut, dbfile, tmp_path, key_file):
    a = Server(knut, dbfile, tmp_path, "--handle-key-file", str(key_file))
    other = Server(knut, dbfile, tmp_path)  # a random key of its own
    try:
        ca, co = fl.FlightClient(a.uri), fl.FlightClient(other.uri)
        bound = bind(ca, prepare(ca, SQL), PARAMS)
        with pytest.raises(pa.ArrowInvalid, match="does not verify"):
            run(co, bound)
        # every byte position altered, a truncation, junk: refused, never a crash
        for i in range(0, len(bound), max(1, len(bound) // 40)):
            bad = bytearray(bound)
            bad[i] ^= 0x40
            with pytest.raises(pa.ArrowInvalid, match="does not verify"):
                run(ca, bytes(bad))
        for bad in (bound[:-1], bound[:10], b"", b"\x00" * 100, bound + b"x"):
            with pytest.raises(pa.ArrowInvalid):
                run(ca, bad)
        with pytest.raises(pa.ArrowInvalid, match="does not verify"):
            bind(ca, bound[:-1] + bytes([bound[-1] ^ 1]), PARAMS)
        assert run(ca, bound).to_pydict() == ROWS  # still serving
    finally:
        assert a.stop() == 0 and other.stop() == 0


def test_the_owner_is_signed_into_the_handle(knut, dbfile, tmp_path, key_file):
    env = {"KNUT_SERVE_TOKEN": "alice:tok-a bob:tok-b"}
    a = Server(knut, dbfile, tmp_path, "--handle-key-file", str(key_file), env=env)
    b = Server(knut, dbfile, tmp_path, "--handle-key-file", str(key_file), env=env)
    try:
        alice = fl.FlightCallOptions(headers=[(b"authorization", b"Bearer tok-a")])
        bob = fl.FlightCallOptions(headers=[(b"authorization", b"Bearer tok-b")])
        ca, cb = fl.FlightClient(a.uri), fl.FlightClient(b.uri)
        bound = bind(ca, prepare(ca, SQL, alice), PARAMS, alice)
        assert run(cb, bound, alice).to_pydict() == ROWS
        with pytest.raises(pa.ArrowKeyError, match="another identity"):
            run(cb, bound, bob)
        with pytest.raises(pa.ArrowKeyError, match="another identity"):
            bind(cb, bound, PARAMS, bob)
        with pytest.raises(fl.FlightUnauthenticatedError):
            run(cb, bound)
    finally:
        assert a.stop() == 0 and b.stop() == 0
    for text in (a.stderr(), b.stderr()):
        assert "tok-a" not in text and "tok-b" not in text and KEY not in text


def test_adbc_handle_survives_a_restart(knut, dbfile, tmp_path, key_file):
    import adbc_driver_flightsql.dbapi as flightsql

    a = Server(knut, dbfile, tmp_path, "--handle-key-file", str(key_file))
    b = None
    try:
        with flightsql.connect(a.uri) as conn, conn.cursor() as cur:
            cur.adbc_prepare(SQL)  # CreatePreparedStatement on the first process
            assert a.stop() == 0
            # a new process on the same port with the same key
            b = Server(knut, dbfile, tmp_path, "--handle-key-file", str(key_file),
                       "--addr", f"127.0.0.1:{a.port}")
            for attempt in range(20):  # the driver reconnects on its own
                try:
                    cur.execute(SQL, parameters=(1, "ada"))
                    break
                except flightsql.OperationalError:
                    time.sleep(0.25)
            assert cur.fetch_arrow_table().to_pydict() == ROWS
            cur.execute(SQL, parameters=(2, "x"))  # bound again: a new handle each time
            assert cur.fetch_arrow_table().to_pydict() == ROWS
    finally:
        assert a.stop() == 0
        assert b is None or b.stop() == 0


def test_kept_parameters_are_bounded_and_expire(knut, dbfile, tmp_path):
    s = Server(knut, dbfile, tmp_path, "--max-prepared", "1", "--prepared-ttl", "1")
    try:
        c = fl.FlightClient(s.uri)
        h1, h2 = prepare(c, SQL), prepare(c, SQL)
        bound1 = bind(c, h1, PARAMS)
        with pytest.raises(pa.ArrowInvalid, match="resource exhausted.*hold bound parameters"):
            bind(c, h2, PARAMS)  # the table is full: RESOURCE_EXHAUSTED
        assert run(c, h1).to_pydict() == ROWS  # the old handle finds what was kept
        time.sleep(1.5)  # idle past the TTL
        with pytest.raises(pa.ArrowInvalid, match="none were bound"):
            run(c, h1)
        assert run(c, bound1).to_pydict() == ROWS  # the handle that holds them needs nothing
        assert bind(c, h2, PARAMS)  # room again
    finally:
        assert s.stop() == 0


@pytest.mark.parametrize("case", ["mode", "short", "missing"])
def test_bad_handle_keys(knut, dbfile, tmp_path, case):
    p = tmp_path / "k"
    if case != "missing":
        p.write_text(KEY if case == "mode" else "tooshort")
        p.chmod(0o644 if case == "mode" else 0o600)
    r = subprocess.run([str(knut), "serve", "--db", str(dbfile), "--addr", "127.0.0.1:0",
                        "--handle-key-file", str(p)], capture_output=True, text=True,
                       timeout=30, env={**os.environ, "KNUT_LOG": "warn"})
    want = {"mode": (2, "readable by others"), "short": (2, "a handle key of 8 bytes"),
            "missing": (1, "No such file")}[case]
    assert r.returncode == want[0] and want[1] in r.stderr, r.stderr
    assert KEY not in r.stderr
    r = subprocess.run([str(knut), "serve", "--db", str(dbfile), "--addr", "127.0.0.1:0"],
                       capture_output=True, text=True, timeout=30,
                       env={**os.environ, "KNUT_SERVE_HANDLE_KEY": "short"})
    assert r.returncode == 2 and "KNUT_SERVE_HANDLE_KEY" in r.stderr
