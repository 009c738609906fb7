"""`knut pipeline` graph sinks (docs/pipelines.md "Graph sinks"): a flow
INSERT INTO a sink declared under the spec's `sinks:` with sync.yml's
vertex/edge mapping, applied to the embedded store and to a real FalkorDB
(peers.py). Checks the exact graph after each run, that a STREAM()-fed sink
applies only new rows, the store-side offsets (exactly once when the
storage's commit was lost), and bad sink specs.
"""
import json
import os
import pathlib
import subprocess

import duckdb
import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
KNUT = os.environ.get("KNUT_BIN", str(REPO / "build" / "knut"))

SQL = """
CREATE STREAMING TABLE people AS SELECT * FROM read_csv('data/*.csv');
CREATE FLOW to_graph AS INSERT INTO people_graph
  SELECT id, name, friend FROM STREAM(people);
"""

MAPPING = """    vertices:
      - labels: [Person]
        keys: [id]
        properties: [name]
    edges:
      - type: KNOWS
        from: {label: Person, keys: {id: id}}
        to: {label: Person, keys: {id: friend}}
        properties: []
"""


def knut(*args, cwd=None, env=None):
    return subprocess.run([KNUT, *map(str, args)], capture_output=True, text=True, timeout=300,
                          cwd=cwd, env=env)


def spec(root: pathlib.Path, sink: str, sql: str = SQL) -> pathlib.Path:
    (root / "t").mkdir(parents=True, exist_ok=True)
    (root / "data").mkdir(exist_ok=True)
    (root / "pipeline.yml").write_text(
        "name: g\nstorage: storage\nlibraries:\n  - glob:\n      include: t/**\n"
        "sinks:\n  people_graph:\n" + sink + MAPPING)
    (root / "t" / "a.sql").write_text(sql)
    return root


def run(root, *extra, code=0):
    p = knut("pipeline", "run", root, "--json", *extra)
    assert p.returncode == code, (p.returncode, p.stdout, p.stderr)
    return [json.loads(x) for x in p.stdout.splitlines()]


def sink_event(events):
    return [e for e in events if e["flow"] == "to_graph"
            and e["status"] not in ("QUEUED", "PLANNING", "RUNNING")][-1]


def store_graph(path):
    con = duckdb.connect(str(path), read_only=True)
    try:
        people = con.execute("SELECT id, name FROM v_Person ORDER BY id").fetchall()
        knows = con.execute("SELECT a.id, b.id FROM e_KNOWS e "
                            "JOIN v_Person a ON a._knut_vid = e._knut_src "
                            "JOIN v_Person b ON b._knut_vid = e._knut_dst ORDER BY 1, 2").fetchall()
    finally:
        con.close()
    return people, knows


def test_embedded_store_incremental(tmp_path):
    root = spec(tmp_path, "    store: graph.duckdb\n")
    (root / "data" / "1.csv").write_text("id,name,friend\n1,ada,2\n2,bob,1\n")
    ev = sink_event(run(root))
    assert ev["status"] == "COMPLETED"
    assert ev["details"]["rows_in"] == 2 and ev["details"]["streams_read"] == {"people": 2}
    assert ev["details"]["vertices_written"] == 2 and ev["details"]["edges_written"] == 2
    assert store_graph(root / "graph.duckdb") == ([(1, "ada"), (2, "bob")], [(1, 2), (2, 1)])
    # nothing new: the sink flow is idle, the graph unchanged
    assert sink_event(run(root))["status"] == "IDLE"
    # a new drop: only its row is applied (an update of ada too)
    (root / "data" / "2.csv").write_text("id,name,friend\n3,cy,1\n1,ada2,3\n")
    ev = sink_event(run(root))
    assert ev["details"]["rows_in"] == 2 and ev["details"]["streams_read"] == {"people": 2}
    assert store_graph(root / "graph.duckdb") == (
        [(1, "ada2"), (2, "bob"), (3, "cy")], [(1, 2), (1, 3), (2, 1), (3, 1)])
    con = duckdb.connect(str(root / "graph.duckdb"), read_only=True)
    assert con.execute("SELECT pipeline, flow, source, hi FROM _knut_pipeline_offsets").fetchall() \
        == [("g", "to_graph", "people", 3)]
    con.close()


def test_embedded_store_offset_ahead_of_storage_is_exactly_once(tmp_path):
    """The store committed an update but the storage's checkpoint did not
    (a crash between the two commits): the next run starts from the
    store's offset, so no row is applied twice (an edge counter shows it)."""
    root = spec(tmp_path, "    store: graph.duckdb\n")
    (root / "data" / "1.csv").write_text("id,name,friend\n1,ada,2\n2,bob,1\n")
    run(root)
    con = duckdb.connect(str(root / "storage" / "pipeline.duckdb"))
    con.execute("DELETE FROM _knut.offsets WHERE flow = 'to_graph'")  # the lost commit
    con.close()
    ev = sink_event(run(root))
    assert ev["details"]["rows_in"] == 0 and ev["details"]["streams_read"] == {"people": 0}
    con = duckdb.connect(str(root / "storage" / "pipeline.duckdb"), read_only=True)
    assert con.execute("SELECT last_rowid FROM _knut.offsets WHERE flow = 'to_graph'").fetchall() == [(1,)]
    con.close()
    assert store_graph(root / "graph.duckdb") == ([(1, "ada"), (2, "bob")], [(1, 2), (2, 1)])


def test_batch_fed_sink_applies_all_rows_each_run(tmp_path):
    sql = """
CREATE MATERIALIZED VIEW people AS SELECT * FROM read_csv('data/*.csv');
CREATE FLOW to_graph AS INSERT INTO people_graph SELECT id, name, friend FROM people;
"""
    root = spec(tmp_path, "    store: graph.duckdb\n", sql)
    (root / "data" / "1.csv").write_text("id,name,friend\n1,ada,2\n2,bob,1\n")
    assert sink_event(run(root))["details"]["rows_in"] == 2
    ev = sink_event(run(root))  # MERGE: the same graph again
    assert ev["status"] == "COMPLETED" and ev["details"]["rows_in"] == 2
    assert store_graph(root / "graph.duckdb") == ([(1, "ada"), (2, "bob")], [(1, 2), (2, 1)])


def test_failed_sink_apply_leaves_checkpoint(tmp_path):
    """missing_endpoints: fail and an edge to a vertex no row makes: the
    flow fails, the store is unchanged and the offset did not move; fixed
    input then applies every row once."""
    root = spec(tmp_path, "    store: graph.duckdb\n    missing_endpoints: fail\n")
    (root / "data" / "1.csv").write_text("id,name,friend\n1,ada,9\n")
    ev = sink_event(run(root, code=1))
    assert ev["status"] == "FAILED" and "people_graph" in ev["message"]
    con = duckdb.connect(str(root / "storage" / "pipeline.duckdb"), read_only=True)
    assert con.execute("SELECT count(*) FROM _knut.offsets WHERE flow = 'to_graph'").fetchone() \
        == (0,)
    con.close()
    (root / "data" / "2.csv").write_text("id,name,friend\n9,zed,1\n")
    ev = sink_event(run(root))
    assert ev["details"]["rows_in"] == 2
    assert store_graph(root / "graph.duckdb") == ([(1, "ada"), (9, "zed")], [(1, 9), (9, 1)])


def test_falkordb_sink(tmp_path, falkordb):
    root = spec(tmp_path, f"    falkordb: redis://{falkordb.host}:{falkordb.port}\n"
                          "    graph: pipe_people\n")
    (root / "data" / "1.csv").write_text("id,name,friend\n1,ada,2\n2,bob,1\n")
    ev = sink_event(run(root))
    assert ev["status"] == "COMPLETED" and ev["details"]["vertices_written"] == 2

    def graph():
        p = falkordb.query("pipe_people", "MATCH (p:Person) RETURN p.id, p.name ORDER BY p.id")[1]
        k = falkordb.query("pipe_people", "MATCH (a:Person)-[:KNOWS]->(b:Person) "
                                          "RETURN a.id, b.id ORDER BY a.id, b.id")[1]
        dec = lambda r: tuple(v.decode() if isinstance(v, bytes) else v for v in r)  # noqa: E731
        return [dec(r) for r in p], [dec(r) for r in k]

    assert graph() == ([(1, "ada"), (2, "bob")], [(1, 2), (2, 1)])
    (root / "data" / "2.csv").write_text("id,name,friend\n3,cy,1\n")
    ev = sink_event(run(root))
    assert ev["details"]["rows_in"] == 1
    assert graph() == ([(1, "ada"), (2, "bob"), (3, "cy")], [(1, 2), (2, 1), (3, 1)])


@pytest.mark.parametrize("sink,message", [
    ("    graph: x\n", "needs exactly one of 'store:'"),
    ("    store: g.duckdb\n    falkordb: redis://127.0.0.1:1\n", "needs exactly one of"),
    ("    falkordb: http://x\n", "must be a redis:// URL"),
    ("    store: g.duckdb\n    missing_endpoints: wait\n", "must be skip or fail"),
    ("    store: g.duckdb\n    stor: x\n", "unknown key 'stor'"),
])
def test_bad_sink_spec(tmp_path, sink, message):
    root = spec(tmp_path, sink)
    p = knut("pipeline", "validate", root)
    assert p.returncode == 1 and message in p.stdout + p.stderr, (p.stdout, p.stderr)
    assert "pipeline.yml:" in p.stdout + p.stderr


def test_sink_is_never_read(tmp_path):
    root = spec(tmp_path, "    store: g.duckdb\n",
                SQL + "CREATE MATERIALIZED VIEW back AS SELECT * FROM people_graph;\n")
    p = knut("pipeline", "validate", root)
    assert p.returncode == 1 and "reads sink 'people_graph'" in p.stdout + p.stderr


def test_docs_complete_example(tmp_path):
    """The complete example of docs/pipelines.md (bronze file drops -> silver
    with expectations -> gold CDC SCD2 -> a graph sink) runs and gives the
    graph shown there."""
    import re
    page = (REPO / "docs" / "pipelines.md").read_text()
    blocks = re.findall(r"<!-- full-(file|output): ([^>]+?) -->\n```[a-z]*\n(.*?)```", page, re.S)
    files = {name: text for kind, name, text in blocks if kind == "file"}
    outputs = [(name, text) for kind, name, text in blocks if kind == "output"]
    assert len(files) == 5 and len(outputs) == 1
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    events = run(tmp_path)
    assert all(e["status"] != "FAILED" for e in events)
    sql, want = outputs[0]
    p = knut("query", "--db", tmp_path / "graph.duckdb", "--format", "csv", sql)
    assert p.returncode == 0, p.stderr
    assert p.stdout.replace("\r\n", "\n") == want
    con = duckdb.connect(str(tmp_path / "storage" / "pipeline.duckdb"), read_only=True)
    assert con.execute("SELECT op FROM changes__quarantine").fetchall() == [("MERGE",)]
    assert con.execute("SELECT count(*) FROM customers").fetchone() == (4,)
    con.close()
