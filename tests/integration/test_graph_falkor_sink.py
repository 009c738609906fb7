"""The FalkorDB sink and `knut graph query` against a real FalkorDB.

Mutations are applied with tests/tools/knut_sink_tool (a JSON spec of sets,
each reading an Arrow IPC stream written here with pyarrow) and the graph is
read back with redis-py: counts, every property value, labels, composite
keys, edges found by composite endpoint keys, deletes with their incident
edges, upserts before deletes, idempotence, indexes, failures.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import os
import pathlib
import signal
import subprocess
import time

import pyarrow as pa
import pytest

from peers import REPO, FalkorDB


def _tool() -> pathlib.Path:
    candidates = []
    if os.environ.get("KNUT_SINK_TOOL"):
        candidates.append(pathlib.Path(os.environ["KNUT_SINK_TOOL"]))
    if os.environ.get("KNUT_BIN"):
        candidates.append(pathlib.Path(os.environ["KNUT_BIN"]).parent / "tests" / "knut_sink_tool")
    candidates.append(REPO / "build" / "tests" / "knut_sink_tool")
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return c
    pytest.fail("knut_sink_tool not built (looked in %s); set KNUT_SINK_TOOL" % candidates)


def url(peer, password=None):
    auth = f":{password}@" if password else ""
    return f"redis://{auth}{peer.host}:{peer.port}"


def write(path: pathlib.Path, table: pa.Table) -> str:
    with pa.ipc.new_stream(str(path), table.schema) as w:
        w.write_table(table)
    return str(path)


def apply(tmp_path, peer, graph, sets, *extra, check=True):
    spec = tmp_path / f"spec{time.monotonic_ns()}.json"
    spec.write_text(json.dumps(sets))
    r = subprocess.run([str(_tool()), "--falkordb", url(peer), "--graph", graph, *extra, str(spec)],
                       capture_output=True, text=True, timeout=300)
    if check and r.returncode != 0:
        pytest.fail(f"knut_sink_tool failed: {r.stderr}")
    stats = json.loads(r.stdout) if r.stdout.strip() else None
    return r, stats


def rows(peer, graph, cypher):
    return peer.query(graph, cypher)[1]


def count(peer, graph, cypher):
    return rows(peer, graph, cypher)[0][0]


HOSTILE = "O'Brien \"q\" \\ \n new line }) DETACH DELETE n //"


def people_table():
    return pa.table({
        "region": pa.array(["eu", "eu", "us"]),
        "id": pa.array([1, 2, 1], pa.int64()),
        "name": pa.array(["Ann", HOSTILE, "Cy"]),
        "score": pa.array([1.5, -2.25, None], pa.float64()),
        "n": pa.array([10, None, -7], pa.int32()),
        "active": pa.array([True, False, None]),
        "born": pa.array([dt.date(1990, 2, 28), dt.date(2000, 1, 1), None], pa.date32()),
        "seen": pa.array([dt.datetime(2024, 2, 29, 12, 34, 56), None,
                          dt.datetime(1999, 12, 31, 23, 59, 59)], pa.timestamp("ms", tz="UTC")),
        "tags": pa.array([["a", "b"], [], None], pa.list_(pa.string())),
    })


def people_set(tmp_path, table=None, **kw):
    s = {"kind": "vertex", "file": write(tmp_path / "people.arrows", table or people_table()),
         "labels": ["Person", "Employee"], "keys": ["region", "id"]}
    s.update(kw)
    return s


def knows_set(tmp_path):
    t = pa.table({
        "sr": ["eu", "eu", "us"], "si": pa.array([1, 2, 1], pa.int64()),
        "dr": ["eu", "us", "zz"], "di": pa.array([2, 1, 9], pa.int64()),
        "since": pa.array([dt.date(2020, 5, 1), dt.date(2021, 6, 2), dt.date(2022, 7, 3)]),
        "w": [0.5, 1.0, 2.0],
    })
    return {"kind": "edge", "file": write(tmp_path / "knows.arrows", t), "type": "KNOWS",
            "src": {"label": "Person", "keys": ["region", "id"], "columns": ["sr", "si"]},
            "dst": {"label": "Person", "keys": ["region", "id"], "columns": ["dr", "di"]},
            "keys": ["since"]}


def test_values_labels_composite_keys_and_edges(falkordb, tmp_path):
    r, st = apply(tmp_path, falkordb, "g", [people_set(tmp_path), knows_set(tmp_path)])
    assert st["vertices_written"] == 3
    assert st["edges_written"] == 2  # the third edge's destination does not exist
    assert st["server"]["nodes_created"] == 3
    assert st["server"]["relationships_created"] == 2
    assert count(falkordb, "g", "MATCH (n:Person:Employee) RETURN count(n)") == 3
    got = rows(falkordb, "g",
               "MATCH (n:Person) RETURN n.region, n.id, n.name, n.score, n.n, n.active, "
               "toString(n.born), toString(n.seen), n.tags, labels(n) ORDER BY n.region, n.id")
    assert got[0] == [b"eu", 1, b"Ann", b"1.5", 10, b"true", b"1990-02-28",
                      b"2024-02-29T12:34:56", b"[a, b]", b"[Person, Employee]"]
    assert got[1][:6] == [b"eu", 2, HOSTILE.encode(), b"-2.25", None, b"false"]
    assert got[1][6:9] == [b"2000-01-01", None, b"[]"]
    # nulls remove the property: it is absent, not stored as null
    assert got[2] == [b"us", 1, b"Cy", None, -7, None, None, b"1999-12-31T23:59:59", None,
                      b"[Person, Employee]"]
    assert count(falkordb, "g", "MATCH (n:Person {region: 'us', id: 1}) "
                 "RETURN size(keys(n))") == 5
    edges = rows(falkordb, "g", "MATCH (a)-[e:KNOWS]->(b) RETURN a.region, a.id, b.region, "
                 "b.id, toString(e.since), e.w ORDER BY a.id")
    assert edges == [[b"eu", 1, b"eu", 2, b"2020-05-01", b"0.5"],
                     [b"eu", 2, b"us", 1, b"2021-06-02", b"1"]]
    # datetime and date are stored as temporal types, not strings
    assert count(falkordb, "g", "MATCH (n:Person {id: 1, region: 'eu'}) "
                 "RETURN n.seen.year * 100 + n.born.month") == 202402


def test_indexes_are_operational_after_apply(falkordb, tmp_path):
    apply(tmp_path, falkordb, "g", [people_set(tmp_path), knows_set(tmp_path)])
    idx = rows(falkordb, "g", "CALL db.indexes() YIELD label, properties, status "
               "RETURN label, properties, status")
    assert idx == [[b"Person", b"[region, id]", b"OPERATIONAL"]]
    plan = falkordb.client().execute_command(
        "GRAPH.EXPLAIN", "g", "MATCH (n:Person {region: 'eu', id: 1}) RETURN n")
    assert any(b"Index Scan" in line for line in plan)


def test_idempotent(falkordb, tmp_path):
    sets = [people_set(tmp_path), knows_set(tmp_path)]
    _, first = apply(tmp_path, falkordb, "g", sets)
    snap = rows(falkordb, "g", "MATCH (n) OPTIONAL MATCH (n)-[e]->(m) RETURN n, e, m ORDER BY "
                "n.region, n.id, m.id")
    _, second = apply(tmp_path, falkordb, "g", sets)
    assert second["vertices_written"] == first["vertices_written"] == 3
    assert second["edges_written"] == first["edges_written"] == 2
    assert second["server"]["nodes_created"] == 0
    assert second["server"]["relationships_created"] == 0
    assert rows(falkordb, "g", "MATCH (n) OPTIONAL MATCH (n)-[e]->(m) RETURN n, e, m ORDER BY "
                "n.region, n.id, m.id") == snap
    assert count(falkordb, "g", "MATCH (n) RETURN count(n)") == 3
    assert count(falkordb, "g", "MATCH ()-[e]->() RETURN count(e)") == 2


def test_deletes_with_incident_edges_after_upserts(falkordb, tmp_path):
    apply(tmp_path, falkordb, "g", [people_set(tmp_path), knows_set(tmp_path)])
    # One mutation: upsert eu/3 and re-upsert eu/2, then delete eu/2 and eu/3.
    up = pa.table({"region": ["eu", "eu"], "id": pa.array([2, 3], pa.int64()), "name": ["x", "y"]})
    dl = pa.table({"region": ["eu", "eu", "xx"], "id": pa.array([2, 3, 1], pa.int64())})
    sets = [
        {"kind": "delete", "file": write(tmp_path / "d.arrows", dl), "label": "Person",
         "keys": ["region", "id"]},
        {"kind": "vertex", "file": write(tmp_path / "u.arrows", up), "labels": ["Person"],
         "keys": ["region", "id"]},
    ]
    _, st = apply(tmp_path, falkordb, "g", sets)
    assert st["vertices_written"] == 2
    assert st["vertices_deleted"] == 2  # eu/2 and eu/3 (upserted first), xx/1 absent
    assert st["edges_deleted"] == 2     # eu/1->eu/2 and eu/2->us/1
    assert rows(falkordb, "g", "MATCH (n:Person) RETURN n.region, n.id ORDER BY n.region, n.id") \
        == [[b"eu", 1], [b"us", 1]]
    assert count(falkordb, "g", "MATCH ()-[e]->() RETURN count(e)") == 0


def test_many_batches_pipelined(falkordb, tmp_path):
    n = 20000
    t = pa.table({"id": pa.array(range(n), pa.int64()), "v": pa.array(range(n), pa.int64())})
    s = {"kind": "vertex", "file": write(tmp_path / "many.arrows", t), "labels": ["N"],
         "keys": ["id"]}
    _, st = apply(tmp_path, falkordb, "g", [s], "--batch-rows", "700", "--pipeline", "3",
                  "--batch-bytes", "8000")
    assert st["vertices_written"] == n and st["rows"] == n
    assert count(falkordb, "g", "MATCH (n:N) RETURN count(n)") == n
    assert count(falkordb, "g", "MATCH (n:N) WHERE n.v = n.id RETURN count(n)") == n


def test_null_key_names_the_row_and_sends_nothing(falkordb, tmp_path):
    t = pa.table({"region": ["eu", "eu", "eu"], "id": pa.array([1, None, 3], pa.int64())})
    s = {"kind": "vertex", "file": write(tmp_path / "nk.arrows", t), "labels": ["Person"],
         "keys": ["region", "id"]}
    r, st = apply(tmp_path, falkordb, "g", [s], check=False)
    assert r.returncode == 1
    assert "row 1" in r.stderr and "'id'" in r.stderr and "Person" in r.stderr
    assert st["vertices_written"] == 0
    assert count(falkordb, "g", "MATCH (n) RETURN count(n)") == 0


def test_server_error_fails_the_apply(falkordb, tmp_path):
    # A unique constraint on Person.name makes the batch's second row fail
    # on the server: the whole query is rolled back and the apply fails.
    falkordb.query("g", "CREATE INDEX FOR (n:Person) ON (n.name)")
    with falkordb.client() as c:
        c.execute_command("GRAPH.CONSTRAINT", "CREATE", "g", "UNIQUE", "NODE", "Person",
                          "PROPERTIES", "1", "name")
    time.sleep(0.5)
    t = pa.table({"id": pa.array([1, 2], pa.int64()), "name": ["same", "same"]})
    s = {"kind": "vertex", "file": write(tmp_path / "u.arrows", t), "labels": ["Person"],
         "keys": ["id"]}
    r, st = apply(tmp_path, falkordb, "g", [s], check=False)
    assert r.returncode == 1
    assert f"{falkordb.host}:{falkordb.port}" in r.stderr
    assert "rows 0-1" in r.stderr
    assert st["vertices_written"] == 0
    assert count(falkordb, "g", "MATCH (n:Person) RETURN count(n)") == 0


def test_killed_server_mid_apply(start_peer, tmp_path):
    peer = start_peer(FalkorDB)
    n = 400000
    t = pa.table({"id": pa.array(range(n), pa.int64()), "a": pa.array(range(n), pa.int64()),
                  "s": pa.array([f"value {i}" for i in range(n)])})
    spec = tmp_path / "big.json"
    spec.write_text(json.dumps([{"kind": "vertex", "file": write(tmp_path / "big.arrows", t),
                                 "labels": ["Big"], "keys": ["id"]}]))
    proc = subprocess.Popen([str(_tool()), "--falkordb", url(peer), "--graph", "g",
                             "--batch-rows", "2000", "--pipeline", "2", str(spec)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # Kill once loading has visibly started.
    deadline = time.monotonic() + 60
    with peer.client() as c:
        while time.monotonic() < deadline:
            try:
                if c.execute_command("GRAPH.RO_QUERY", "g", "MATCH (n:Big) RETURN count(n)")[1][0][0] > 0:
                    break
            except Exception:
                pass
            time.sleep(0.01)
    os.kill(peer.pid, signal.SIGKILL)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, (out, err)
    assert f"127.0.0.1:{peer.port}" in err
    assert "set 'Big'" in err
    st = json.loads(out)
    assert st["vertices_written"] < n  # never a success report


# ---- knut graph query ----------------------------------------------------------


def seed(falkordb):
    falkordb.query("g", "CREATE (:P {id: 1, name: 'a,\"b', born: date('2020-01-02'), tags: [1, 2]}),"
                   " (:P {id: 2, name: 'c', born: date('2021-03-04'), tags: []})")


def test_graph_query_formats(falkordb, run_knut):
    seed(falkordb)
    q = "MATCH (p:P) RETURN p.id AS id, p.name AS name, p.born AS born, p.tags AS tags ORDER BY id"
    base = ["graph", "query", "--falkordb", url(falkordb), "--graph", "g"]
    r = run_knut(*base, q)
    assert r.returncode == 0, r.stderr
    assert "2020-01-02" in r.stdout and "(2 rows)" in r.stdout
    r = run_knut(*base, "-f", "csv", q)
    assert r.stdout.splitlines() == ["id,name,born,tags", '1,"a,""b",2020-01-02,"[1, 2]"',
                                     "2,c,2021-03-04,[]"]
    r = run_knut(*base, "-f", "json", "--read-only", q)
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    assert lines[0] == {"id": 1, "name": 'a,"b', "born": "2020-01-02", "tags": [1, 2]}
    r = subprocess.run([str(_knut_path()), *base, "-f", "arrow", q],
                       capture_output=True, timeout=60)
    assert r.returncode == 0
    t = pa.ipc.open_stream(io.BytesIO(r.stdout)).read_all()
    assert t.column("id").to_pylist() == [1, 2]
    assert t.column("born").to_pylist() == [dt.date(2020, 1, 2), dt.date(2021, 3, 4)]
    assert t.column("tags").to_pylist() == [[1, 2], []]
    r = run_knut(*["-" if a == q else a for a in base + [q]], input=q)
    assert r.returncode == 0 and "(2 rows)" in r.stdout
    r = run_knut(*base, "--stats", "MATCH (p:P {id: 2}) SET p.x = 1")
    assert r.returncode == 0 and "properties set: 1" in r.stderr and r.stdout == ""


def _knut_path():
    return pathlib.Path(os.environ.get("KNUT_BIN") or REPO / "build" / "knut")


def test_graph_query_errors(falkordb, run_knut, start_peer):
    base = ["graph", "query", "--falkordb", url(falkordb), "--graph", "g"]
    r = run_knut(*base, "MATCH (n RETURN n")
    assert r.returncode == 1
    assert f"{falkordb.host}:{falkordb.port}" in r.stderr and "Invalid input" in r.stderr
    r = run_knut(*base, "--read-only", "CREATE (:X)")
    assert r.returncode == 1 and "read-only" in r.stderr.lower()
    r = run_knut("graph", "query", "--graph", "g", "RETURN 1")
    assert r.returncode == 2
    r = run_knut("graph", "query", "--help")
    assert r.returncode == 0 and "Examples:" in r.stdout

    class Locked(FalkorDB):
        name = "falkordb_locked"

        def server_args(self):
            return super().server_args() + ["--requirepass", "right-secret-4711"]

        def client(self, **kw):
            kw.setdefault("password", "right-secret-4711")
            return super().client(**kw)

    locked = start_peer(Locked)
    r = run_knut("graph", "query", "--falkordb", url(locked, "wrong-secret-0815"),
                 "--graph", "g", "RETURN 1")
    assert r.returncode == 1
    assert "wrong-secret-0815" not in r.stdout + r.stderr
    assert f"{locked.host}:{locked.port}" in r.stderr
    r = run_knut("graph", "query", "--falkordb", url(locked, "right-secret-4711"),
                 "--graph", "g", "-f", "csv", "RETURN 41 + 1 AS x")
    assert r.returncode == 0 and r.stdout.splitlines() == ["x", "42"]
    assert "right-secret-4711" not in r.stderr


def test_integer_key_updates_by_node_id(falkordb, tmp_path):
    """Vertex sets keyed by one integer column update existing vertices by
    node id after one range lookup per batch (falkor_sink_probe.c). The
    result must be exactly what MERGE gives: new rows created, existing
    ones updated (extra labels and temporal properties included), a key
    held by two nodes updates both, and keys stored as another type are
    left to MERGE."""
    g = "byid"
    n = 3000

    def table(gen, ids):
        return pa.table({"id": pa.array(ids, pa.int64()),
                         "a": pa.array([i * 10 + gen for i in ids], pa.int64()),
                         "d": pa.array([dt.date(2020, 1, 1 + gen)] * len(ids), pa.date32())})

    def vset(t, name):
        return {"kind": "vertex", "file": write(tmp_path / f"{name}.arrows", t),
                "labels": ["V", "Extra"], "keys": ["id"]}

    _, st = apply(tmp_path, falkordb, g, [vset(table(0, list(range(n))), "v0")],
                  "--batch-rows", "700")
    assert st["vertices_written"] == n and st["server"]["nodes_created"] == n
    # A second node with key 5 (made outside the sink) and a float key 7.5.
    falkordb.query(g, "CREATE (:V {id: 5, a: -1}), (:V {id: 7.5, a: -1})")
    # Update every existing row plus 500 new ones, in shuffled order.
    ids = list(range(n + 500))
    ids = ids[1::2] + ids[0::2]
    _, st = apply(tmp_path, falkordb, g, [vset(table(1, ids), "v1")], "--batch-rows", "700")
    assert st["vertices_written"] == n + 500
    assert st["server"]["nodes_created"] == 500
    assert count(falkordb, g, "MATCH (n:V) RETURN count(n)") == n + 500 + 2
    assert count(falkordb, g, "MATCH (n:V:Extra) WHERE n.a = n.id * 10 + 1 "
                              "AND n.d = date('2020-01-02') RETURN count(n)") == n + 500 + 1
    assert count(falkordb, g, "MATCH (n:V {id: 5}) RETURN count(n)") == 2
    assert count(falkordb, g, "MATCH (n:V {id: 5}) WHERE n.a = 51 RETURN count(n)") == 2
    assert count(falkordb, g, "MATCH (n:V) WHERE n.id = 7.5 RETURN n.a") == -1
    # Idempotent: the same rows again change nothing but the values set.
    _, st = apply(tmp_path, falkordb, g, [vset(table(1, ids), "v2")])
    assert st["server"]["nodes_created"] == 0
    assert count(falkordb, g, "MATCH (n:V) RETURN count(n)") == n + 500 + 2
