"""A large file into the embedded store in several transactions (--txn-rows).

With a small --txn-rows a small file takes the chunked path a 10M-row file
takes by default (src/graph/store_chunk.c): each set's rows split by key
hash, one transaction per chunk, the ledger entry in the last. The graph
must be exactly what one transaction gives (last row of a key wins, an
edge finds the vertices of its own file, one vertex id and one label
membership per vertex), and a kill -9 after some chunks committed must
leave the file not done, so that the restart gives the exact final graph.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

N = 6000  # distinct people; every 7th id comes twice (the second row wins)
TXN_ROWS = 500

CONFIG = """\
tables:
  people:
    path: drops/people/
    missing_endpoints: skip  # wait/fail keep an apply in one transaction
    vertices:
      - labels: [Person, Employee]
        keys: [person_id]
        rename: {person_id: id}
    edges:
      - type: REPORTS_TO
        from: {label: Person, keys: {id: person_id}}
        to: {label: Person, keys: {id: boss_id}}
        properties: [since]
"""


def write_people(root: Path) -> dict[int, tuple[str, int, int]]:
    """One file; returns id -> (name, boss_id, since) as the last row has it."""
    ids, names, bosses, since = [], [], [], []
    for i in range(N):
        ids.append(i)
        names.append(f"first{i}")
        bosses.append((i * 7919) % N)  # a boss anywhere in the file, before or after
        since.append(2000 + i % 20)
    for i in range(0, N, 7):  # repeated keys later in the file: their last row wins
        ids.append(i)
        names.append(f"again{i}")
        bosses.append((i + 1) % N)
        since.append(1990)
    (root / "drops" / "people").mkdir(parents=True)
    pq.write_table(pa.table({
        "person_id": pa.array(ids, pa.int64()),
        "name": pa.array(names),
        "boss_id": pa.array(bosses, pa.int64()),
        "since": pa.array(since, pa.int64()),
    }), root / "drops" / "people" / "people-0001.parquet")
    want = {}
    for i, n, b, s in zip(ids, names, bosses, since):
        want[i] = (n, b, s)
    return want


def query(run_knut, db: Path, sql: str):
    r = run_knut("query", "--db", db, "--format", "json", sql)
    assert r.returncode == 0, r.stderr
    return [json.loads(x) for x in r.stdout.splitlines() if x.strip()]


def assert_graph(run_knut, db: Path, want):
    people = {x["id"]: x["name"] for x in query(run_knut, db, "SELECT id, name FROM v_Person")}
    assert people == {i: w[0] for i, w in want.items()}
    vids = query(run_knut, db, "SELECT count(DISTINCT _knut_vid) AS n FROM v_Person")
    assert vids == [{"n": N}]
    members = query(run_knut, db, "SELECT label, count(*) AS n, count(DISTINCT vid) AS d "
                                  "FROM _knut_vertex_labels_of GROUP BY label ORDER BY label")
    assert members == [{"label": "Employee", "n": N, "d": N}, {"label": "Person", "n": N, "d": N}]
    edges = {}
    for x in query(run_knut, db, "SELECT a.id AS s, b.id AS d, e.since FROM e_REPORTS_TO e "
                                 "JOIN v_Person a ON a._knut_vid = e._knut_src "
                                 "JOIN v_Person b ON b._knut_vid = e._knut_dst"):
        assert (x["s"], x["d"]) not in edges, x
        edges[(x["s"], x["d"])] = x["since"]
    # one edge per row of the file (an earlier row's edge to another boss
    # stays: edges are keyed by their endpoints), its last row's since
    expected = {}
    for i in range(N):
        expected[(i, (i * 7919) % N)] = 2000 + i % 20
    for i in range(0, N, 7):
        expected[(i, (i + 1) % N)] = 1990
    assert edges == expected


def sync_args(root: Path):
    return ("sync", "--once", "--config", root / "sync.yml", "--store", root / "graph.duckdb",
            "--txn-rows", str(TXN_ROWS))


def test_chunked_apply_equals_one_transaction(run_knut, tmp_path):
    want = write_people(tmp_path)
    (tmp_path / "sync.yml").write_text(CONFIG)
    r = run_knut(*sync_args(tmp_path), env={"KNUT_LOG": "debug", "KNUT_LOG_FORMAT": "json"})
    assert r.returncode == 0, r.stderr
    assert "chunk 2/" in r.stderr, r.stderr[-3000:]  # it did take the chunked path
    assert_graph(run_knut, tmp_path / "graph.duckdb", want)
    # the same file in one transaction (the default --txn-rows) gives the same graph
    one = tmp_path / "one"
    one.mkdir()
    (one / "drops").symlink_to(tmp_path / "drops")
    (one / "sync.yml").write_text(CONFIG)
    r = run_knut("sync", "--once", "--config", one / "sync.yml", "--store", one / "graph.duckdb",
                 env={"KNUT_LOG": "debug"})
    assert r.returncode == 0, r.stderr
    assert "chunk " not in r.stderr
    assert_graph(run_knut, one / "graph.duckdb", want)
    st = run_knut("sync", "status", "--config", tmp_path / "sync.yml", "--store",
                  tmp_path / "graph.duckdb", "--json")
    assert st.returncode == 0, st.stderr
    assert '"done"' in st.stdout and '"failed"' not in st.stdout.replace('"failed": 0', "")


def test_kill9_between_chunks_then_restart(knut, run_knut, tmp_path):
    want = write_people(tmp_path)
    (tmp_path / "sync.yml").write_text(CONFIG)
    log = tmp_path / "run.log"
    with open(log, "w") as lf:
        p = subprocess.Popen([str(knut), *(str(a) for a in sync_args(tmp_path))], stderr=lf,
                             stdout=subprocess.DEVNULL,
                             env=dict(os.environ, KNUT_LOG="debug", KNUT_LOG_FORMAT="json"))
        # kill once some chunks are committed and the ledger is not yet written
        end = time.monotonic() + 120
        while time.monotonic() < end and p.poll() is None and "chunk 3/" not in log.read_text():
            time.sleep(0.005)
        p.send_signal(signal.SIGKILL)
        rc = p.wait()
    text = log.read_text()
    assert rc == -signal.SIGKILL, text[-3000:]
    assert "chunk 3/" in text and '"table synced"' not in text, text[-3000:]
    # part of the file is in the store, and the file is not done
    part = query(run_knut, tmp_path / "graph.duckdb", "SELECT count(*) AS n FROM v_Person")
    assert 0 < part[0]["n"] < N, part
    st = run_knut("sync", "status", "--config", tmp_path / "sync.yml", "--store",
                  tmp_path / "graph.duckdb", "--json")
    assert st.returncode == 0, st.stderr
    assert '"pending"' in st.stdout, st.stdout
    # the restart applies the whole file again: the exact graph, the file done
    r = run_knut(*sync_args(tmp_path), env={"KNUT_LOG_FORMAT": "json"})
    assert r.returncode == 0, r.stderr
    assert '"table synced"' in r.stderr
    assert_graph(run_knut, tmp_path / "graph.duckdb", want)
    r = run_knut(*sync_args(tmp_path), env={"KNUT_LOG_FORMAT": "json"})
    assert r.returncode == 0 and '"round idle"' in r.stderr, r.stderr
