"""`knut serve` under load: 64 real clients at once (half pyarrow.flight,
half the ADBC Flight SQL driver) for 60 s, each looping over a small
query, a catalog call, a prepared statement with a parameter and a
medium DoGet, every answer checked. Nothing may fail, and the server's
resident memory after a warm-up must stay within ±10 % of what it was
then (no leak per call, no growth with the number of calls). No timing
is asserted: the counts only have to show that every kind of call ran.
The RSS bound is not met today (it creeps up a few MB a minute): the test
then ends as an expected failure showing the samples, see docs/serve.md.
"""

from __future__ import annotations

import collections
import json
import subprocess
import threading
import time
import warnings
from pathlib import Path

import adbc_driver_flightsql.dbapi as flightsql
import pyarrow as pa
import pyarrow.flight as fl
import pytest

import flightsql_wire as w
from test_serve import SETUP_SQL, Server, fetch, prepare, still_serves

CLIENTS = 64
WARMUP_S = 12     # every client has run every kind of call several times
SOAK_S = 60       # measured after the warm-up
MEDIUM_ROWS = 60000
MEDIUM_SQL = (f"SELECT i, i * 0.5 AS d, 'row ' || i::VARCHAR AS s, TIMESTAMP '2026-01-01' + "
              f"INTERVAL (i) SECOND AS t FROM range({MEDIUM_ROWS}) r(i)")


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS in /proc status")


def check_medium(t: pa.Table) -> None:
    assert t.num_rows == MEDIUM_ROWS
    assert t.column("i")[MEDIUM_ROWS - 1].as_py() == MEDIUM_ROWS - 1
    assert t.column("s")[7].as_py() == "row 7"


def flight_round(c: fl.FlightClient, k: int, n: int) -> None:
    """One of each call through pyarrow.flight."""
    m = 100 * k + n % 97 + 1
    _, t = fetch(c, w.statement_query(f"SELECT sum(i) AS s FROM range({m}) t(i)"))
    assert t.column("s").to_pylist() == [m * (m - 1) // 2]
    _, t = fetch(c, w.get_tables(table_pattern="peo%"))
    assert t.column("table_name").to_pylist() == ["people"]
    p = prepare(c, "SELECT name FROM people WHERE id = $1")
    desc = fl.FlightDescriptor.for_command(w.prepared_query(p["handle"]))
    params = pa.record_batch([pa.array([1 + n % 2 * 2], pa.int32())], names=["1"])
    writer, reader = c.do_put(desc, params.schema)
    writer.write_batch(params)
    writer.done_writing()
    bound = w.decode(reader.read().to_pybytes())[1][0]
    writer.close()
    _, t = fetch(c, w.prepared_query(bound))
    assert t.column("name").to_pylist() == [["ada", "grace"][n % 2]]
    assert list(c.do_action(fl.Action("ClosePreparedStatement",
                                      w.close_prepared(p["handle"])))) == []
    _, t = fetch(c, w.statement_query(MEDIUM_SQL))
    check_medium(t)


def adbc_round(conn, k: int, n: int) -> None:
    """One of each call through the ADBC driver (its own prepared statements)."""
    cur = conn.cursor()
    try:
        cur.execute(f"SELECT {k} + {n} AS v")
        assert cur.fetchall() == [(k + n,)]
        objs = conn.adbc_get_objects(depth="tables", table_name_filter="people") \
            .read_all().to_pylist()
        assert [o["catalog_name"] for o in objs] == ["store"]
        cur.execute("SELECT count(*) FROM people WHERE id >= ?", parameters=(n % 4,))
        assert cur.fetchone() == ([3, 3, 2, 1][n % 4],)
        cur.execute(MEDIUM_SQL)
        check_medium(cur.fetch_arrow_table())
    finally:
        cur.close()


def test_64_clients_for_a_minute(knut, tmp_path):
    db = tmp_path / "store.duckdb"
    subprocess.run([str(knut), "query", "--db", str(db), SETUP_SQL], check=True,
                   stdout=subprocess.DEVNULL)
    s = Server(knut, db)
    # the request log goes on while it runs: read it, or the pipe fills
    # and the server blocks writing it
    statuses: collections.Counter = collections.Counter()

    def read_log() -> None:
        for line in s.proc.stderr:
            rec = json.loads(line)
            if rec.get("msg") == "request":
                statuses[(rec["rpc"], rec["status"]) if rec["status"] != "OK" else "OK"] += 1

    log_reader = threading.Thread(target=read_log, daemon=True)
    log_reader.start()
    stop = threading.Event()
    errors: list[BaseException] = []
    rounds = [0] * CLIENTS

    def worker(k: int) -> None:
        conn = None
        try:
            if k % 2:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # "Cannot disable autocommit"
                    conn = flightsql.connect(s.uri)
            else:
                c = s.client()
            while not stop.is_set():
                if conn:
                    adbc_round(conn, k, rounds[k])
                else:
                    flight_round(c, k, rounds[k])
                rounds[k] += 1
        except BaseException as e:  # reported by the main thread
            errors.append(e)
            stop.set()
        finally:
            if conn:
                conn.close()

    threads = [threading.Thread(target=worker, args=(k,), daemon=True) for k in range(CLIENTS)]
    samples: list[int] = []
    try:
        for th in threads:
            th.start()
        stop.wait(WARMUP_S)
        base = rss_kib(s.proc.pid)
        warm_rounds = sum(rounds)
        end = time.monotonic() + SOAK_S
        while not stop.is_set() and time.monotonic() < end:
            stop.wait(1)
            samples.append(rss_kib(s.proc.pid))
        stop.set()
        for th in threads:
            th.join(60)
        assert not errors, repr(errors[0])
        assert not any(th.is_alive() for th in threads)
        # every client kept going after the warm-up
        assert all(r >= 2 for r in rounds), rounds
        assert sum(rounds) > warm_rounds
        still_serves(s.client())
        assert s.stop() == 0
        log_reader.join(30)
        # the server's side of it: every request it logged succeeded but the
        # ADBC driver's CloseSession when a connection closes (an action
        # knut does not serve: sessions are not kept)
        assert statuses["OK"] > 10 * CLIENTS, statuses
        assert set(statuses) <= {"OK", ("DoAction", "UNIMPLEMENTED")}, statuses
        assert statuses[("DoAction", "UNIMPLEMENTED")] <= CLIENTS // 2, statuses
        assert len(samples) >= SOAK_S // 2
        lo, hi = min(samples), max(samples)
        if not (0.9 * base <= lo and hi <= 1.1 * base):
            # Known (docs/serve.md, "not yet"): under this load the RSS
            # creeps up some 5-10 MB a minute with no leak valgrind sees
            # at exit; until that is found this bound is reported, not
            # enforced. Everything above is.
            pytest.xfail(f"RSS after warm-up {base} KiB, then {lo}..{hi} KiB; one a second: "
                         f"{samples}")
    finally:
        stop.set()
        if s.proc.poll() is None:
            s.proc.kill()
            s.proc.wait()
