"""Exactly once into FalkorDB: the ledger in the FalkorDB server (`ledger:
falkordb`), committed with the graph in one MULTI/EXEC under the table's
lease (docs/sync.md "Exactly once into FalkorDB"; the server's behaviour:
the evidence in that section).

- kill -9 of `knut sync` and of FalkorDB (appendonly yes, appendfsync
  always) at random moments over 50 rounds of new files. After every kill,
  with nothing running, the invariant is checked on the server:

    for every file F of the `events` table (each row a vertex with a
    globally unique id and the property f = F's number):
      F recorded done  =>  the graph holds every row of F;
      F not done       =>  the graph holds all of F's rows or none
                           (a commit whose outcome was not seen is rolled
                           back in the ledger and replayed: MERGE);
      never some but not all of F's rows, and no id twice.

  At the end a settled sync must equal the model of the four tables of
  syncmodel.py exactly, with every file done.
- A lost lease: an instance whose lease was taken over between its check
  and its EXEC writes nothing to the graph (WATCH fences the write), and
  the new holder syncs the file once.

The RNG is seeded (KNUT_CRASH_SEED=N replays a run; the seed is in every
message).
"""

from __future__ import annotations

import functools
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from syncmodel import (CONFIG, SEED, Model, PersistentFalkorDB, assert_all_done,
                       assert_graph_is_model, graph_falkor, killed_run, make_root, settle)

ROUNDS = 50
GRAPH = "once"
EVENTS = """\
  events:
    path: events/
    format: csv
    vertices: [{labels: [Ev], keys: [id], properties: [f, v]}]
"""


class QuietStartFalkorDB(PersistentFalkorDB):
    """Ready once its log says so, without a command during the AOF load:
    Valkey 8.0 + FalkorDB 4.16 can die at an assertion ('!server.in_exec')
    when a client's command arrives while the load replays a MULTI/EXEC
    of GRAPH.QUERY (docs/operations.md, "The ledger in the FalkorDB
    server"). Nothing of knut runs during the restart."""

    name = "falkordb_aof"

    def is_ready(self):
        ready = self.log_path.read_text(errors="replace").count("Ready to accept connections")
        return ready > getattr(self, "_ready_seen", 0) and super().is_ready()

    def restart(self):
        self._ready_seen = self.log_path.read_text(errors="replace").count(
            "Ready to accept connections")
        super().restart()


class Events:
    """Files of unique ids: file n holds ids n*1000+1 .. n*1000+rows."""

    def __init__(self, rng):
        self.rng, self.rows, self.n = rng, {}, 0

    def land(self, root: Path) -> None:
        self.n += 1
        k = self.rng.choice((1, 5, 40, 400))
        self.rows[self.n] = k
        ids = range(self.n * 1000 + 1, self.n * 1000 + k + 1)
        tmp = root / "events" / f".e{self.n:05d}.csv"
        tmp.write_text("id,f,v\n" + "".join(f"{i},{self.n},x{i}\n" for i in ids))
        os.rename(tmp, root / "events" / f"e{self.n:05d}.csv")


def ledger_done(client) -> set[str]:
    out = set()
    for field, val in client.hgetall("knut:sync:sync:ledger").items():
        e = json.loads(val)
        if e["status"] == "done":
            out.add(e["path"])
    return out


def check_invariant(fdb, events: Events, where: str) -> int:
    with fdb.client() as c:
        done = ledger_done(c)
        rows = c.execute_command("GRAPH.QUERY", GRAPH,
                                 "MATCH (e:Ev) RETURN e.f, count(e), count(DISTINCT e.id)")[1] \
            if c.exists(GRAPH) else []
    got = {f: (n, d) for f, n, d in rows}
    for f, want in events.rows.items():
        n, distinct = got.get(f, (0, 0))
        path = f"events/e{f:05d}.csv"
        assert n == distinct, f"seed {SEED}: {where}: file {path}: an id twice ({n} rows, {distinct} ids)"
        assert n in (0, want), f"seed {SEED}: {where}: file {path}: {n} of its {want} rows in the graph"
        if path in done:
            assert n == want, f"seed {SEED}: {where}: file {path} is done but only {n} of {want} rows are in the graph"
    return sum(1 for f in events.rows if f"events/e{f:05d}.csv" in done)


def kill_server_now(fdb, then_wait: float) -> None:
    """The server first, mid-round (then the sync is killed)."""
    os.kill(fdb.pid, signal.SIGKILL)
    fdb.proc.wait()
    time.sleep(then_wait)


def test_kill9_sync_and_server(knut, run_knut, tmp_path, start_peer):
    fdb = start_peer(QuietStartFalkorDB)
    # events first: every round commits it before the others
    root = make_root(tmp_path, "name: sync\nledger: falkordb\ntables:\n" + EVENTS +
                     CONFIG.split("tables:\n", 1)[1], ("events",))
    url = f"redis://{fdb.host}:{fdb.port}"
    args = ("--falkordb", url, "--graph", GRAPH, "--instance", "once")
    rng = random.Random(SEED)
    model, events = Model(rng), Events(rng)
    log = root / "runs.log"
    server_kills = 0
    for i in range(ROUNDS):
        model.land(root)
        events.land(root)
        delay = rng.uniform(0.0, 1.0)
        kill_server = rng.random() < 0.3
        server_first = functools.partial(kill_server_now, fdb, rng.uniform(0.0, 0.2))
        rc = killed_run(knut, root, args, log, i, delay,
                        ("--interval", "0.05", "--falkordb-timeout", "5"),
                        server_first if kill_server else None)
        # a server killed before the sync loaded its ledger: it exits 1 at start
        last = log.read_text().rstrip().rsplit("\n", 1)[-1]
        ok = rc == -signal.SIGKILL or (kill_server and rc == 1 and
                                       last.startswith("knut sync: valkey 127.0.0.1"))
        assert ok, f"seed {SEED}: run {i} exited {rc}:\n{log.read_text()[-3000:]}"
        if kill_server:
            server_kills += 1
            fdb.restart()
            with fdb.client() as c:  # keep the AOF short: restarts load an RDB base
                c.bgrewriteaof()
        check_invariant(fdb, events, f"after kill {i}")
    committed = len(re.findall(r'"table synced","round":\d+,"table":"\w+","files":[1-9]',
                               log.read_text()))
    print(f"seed {SEED}: {committed} table commits over {ROUNDS} killed runs, "
          f"{server_kills} server kills")
    assert committed >= 1 and server_kills >= 5, f"seed {SEED}: {committed} commits, {server_kills} server kills"
    settle(run_knut, root, args)
    assert check_invariant(fdb, events, "settled") == len(events.rows)
    assert_graph_is_model(graph_falkor(fdb, GRAPH), model.expected())
    assert_all_done(run_knut, root, ("--falkordb", url), model.seq + events.n)
    with fdb.client() as c:  # no journal left behind
        assert not c.keys("knut:sync:sync:pending:*")


def test_lost_lease_cannot_write_the_graph(knut, run_knut, tmp_path, start_peer):
    """Instance a stops (gdb) right before its apply; meanwhile its lease
    is taken over by b (as after an expiry). a's EXEC must write nothing,
    neither graph nor ledger; then b syncs the file, once."""
    gdb = shutil.which("gdb")
    if not gdb:
        pytest.skip("gdb is not installed (scripts/setup.sh --test)")
    fdb = start_peer(PersistentFalkorDB)
    root = tmp_path / "lake"
    (root / "events").mkdir(parents=True)
    (root / "sync.yml").write_text("name: sync\nledger: falkordb\ntables:\n" + EVENTS)
    (root / "events" / "e1.csv").write_text("id,f,v\n1,1,a\n2,1,b\n")
    url = f"redis://{fdb.host}:{fdb.port}"
    lease = "knut:sync:sync:lease:events"
    cmd = [gdb, "-q", "-batch", "-ex", "break knut_graph_falkor_sink_set_tx", "-ex", "run",
           "-ex", f"shell {sys.executable} -c \"import redis; "
                  f"redis.Redis(port={fdb.port}).set('{lease}', 'b', px=60000)\"",
           "-ex", "delete", "-ex", "continue",
           "--args", str(knut), "sync", "--once", "--config", str(root / "sync.yml"),
           "--falkordb", url, "--graph", GRAPH, "--instance", "a"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, KNUT_LOG_FORMAT="json"), check=False)
    assert "Breakpoint 1," in r.stdout, r.stdout + r.stderr
    assert "lease lost" in r.stderr, r.stderr
    assert "[Inferior 1 (process" in r.stdout and "exited with code 01" in r.stdout, r.stdout
    with fdb.client() as c:
        assert c.get(lease) == b"b"
        assert not c.exists(GRAPH) or c.execute_command(
            "GRAPH.QUERY", GRAPH, "MATCH (e:Ev) RETURN count(e)")[1] == [[0]]
        assert c.hlen("knut:sync:sync:ledger") == 0
        c.delete(lease)  # b is done with it (or its lease expired)
    r = run_knut("sync", "--once", "--config", root / "sync.yml", "--falkordb", url,
                 "--graph", GRAPH, "--instance", "b")
    assert r.returncode == 0, r.stderr
    with fdb.client() as c:
        assert c.execute_command("GRAPH.QUERY", GRAPH,
                                 "MATCH (e:Ev) RETURN count(e), count(DISTINCT e.id)")[1] == [[2, 2]]
        assert len(ledger_done(c)) == 1
