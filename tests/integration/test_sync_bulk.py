"""`knut sync`'s first round at bulk speed (docs/sync.md, "First round at
bulk speed"): into a FalkorDB graph that does not exist, the tables that
qualify go in with GRAPH.BULK, later rounds with MERGE, and the graph is
the same as a run forced to MERGE (--no-bulk) makes. Also: a table the
bulk cannot take (dates, an edge with a missing endpoint, cdc) goes MERGE
with its usual semantics, a kill -9 during the bulk leaves nothing
recorded and the rerun is exact, and a table arriving in several files
into the embedded store equals the same rows in one file.
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

CONFIG = """\
tables:
  companies:
    path: drops/companies/
    vertices:
      - labels: [Company]
        keys: [company_id]
        rename: {company_id: id}
  people:
    path: drops/people/
    vertices:
      - labels: [Person]
        keys: [person_id]
        rename: {person_id: id}
  employment:
    path: drops/employment/
    edges:
      - type: WORKS_AT
        from: {label: Person, keys: {id: person_id}}
        to: {label: Company, keys: {id: company_id}}
"""


def land(root: Path, people: range, companies: int, files: int, tag: str = "a"):
    for t in ("people", "companies", "employment"):
        (root / "drops" / t).mkdir(parents=True, exist_ok=True)
    ids = list(people)
    per = -(-len(ids) // files)
    for k in range(files):
        part = ids[k * per:(k + 1) * per]
        if not part:
            break
        pq.write_table(pa.table({
            "person_id": pa.array(part, pa.int64()),
            "name": pa.array([f"p{i}" if i % 7 else None for i in part]),  # some nulls
            "age": pa.array([20 + i % 50 for i in part], pa.int64()),
            "score": pa.array([i / 4.0 for i in part], pa.float64()),
            "active": pa.array([i % 2 == 0 for i in part]),
        }), root / "drops" / "people" / f"people-{tag}{k:03d}.parquet")
        pq.write_table(pa.table({
            "person_id": pa.array(part, pa.int64()),
            "company_id": pa.array([i % companies for i in part], pa.int64()),
            "title": pa.array([f"t{i % 5}" for i in part]),
        }), root / "drops" / "employment" / f"employment-{tag}{k:03d}.parquet")
    pq.write_table(pa.table({
        "company_id": pa.array(range(companies), pa.int64()),
        "name": pa.array([f"c{i}" for i in range(companies)]),
    }), root / "drops" / "companies" / f"companies-{tag}.parquet")


def url(falkordb):
    return f"redis://{falkordb.host}:{falkordb.port}"


def sync(run_knut, root: Path, falkordb, graph: str, *extra, ledger="ledger.json"):
    r = run_knut("sync", "--once", "--config", root / "sync.yml", "--falkordb", url(falkordb),
                 "--graph", graph, "--ledger", root / ledger, *extra, cwd=root,
                 env={"KNUT_LOG_FORMAT": "json", "KNUT_LOG": "info"})
    recs = [json.loads(line) for line in r.stderr.splitlines() if line.startswith("{")]
    return r, recs


def paths(recs):
    """table -> the path field of its `table synced` record (files > 0)."""
    return {r["table"]: r["path"] for r in recs
            if r.get("msg") == "table synced" and r.get("files", 0) > 0}


def dump(falkordb, graph):
    """Every node (labels, properties) and edge (type, endpoint ids, props), sorted."""
    nodes = falkordb.query(graph, "MATCH (n) RETURN labels(n), properties(n)")[1]
    edges = falkordb.query(graph, "MATCH (a)-[e]->(b) RETURN type(e), a.id, b.id, "
                                  "properties(e)")[1]
    norm = lambda rows: sorted(repr(r) for r in rows)  # noqa: E731
    return norm(nodes), norm(edges)


def test_first_round_bulk_then_merge_same_graph(run_knut, tmp_path, falkordb):
    root = tmp_path
    (root / "sync.yml").write_text(CONFIG)
    land(root, range(0, 3000), 40, 3)
    r, recs = sync(run_knut, root, falkordb, "g")
    assert r.returncode == 0, r.stderr
    assert paths(recs) == {"companies": "bulk", "people": "bulk", "employment": "bulk"}
    # no temporary key left, the graph is there
    keys = sorted(k.decode() for k in falkordb.client().keys("*"))
    assert "g" in keys and not any(k.endswith(":knut-bulk") for k in keys), keys
    # the same files forced to MERGE
    ref = tmp_path / "ref"
    ref.mkdir()
    (ref / "sync.yml").write_text(CONFIG)
    land(ref, range(0, 3000), 40, 3)
    r2, recs2 = sync(run_knut, ref, falkordb, "ref", "--no-bulk")
    assert r2.returncode == 0, r2.stderr
    assert set(paths(recs2).values()) == {"merge"}
    assert dump(falkordb, "g") == dump(falkordb, "ref")
    n, e = dump(falkordb, "g")
    assert len(n) == 3040 and len(e) == 3000
    # a second round: new and updated rows, MERGE into both, still equal
    for d in (root, ref):
        land(d, range(2500, 4000), 40, 2, tag="b")
    r, recs = sync(run_knut, root, falkordb, "g")
    assert r.returncode == 0, r.stderr
    assert set(paths(recs).values()) == {"merge"}, paths(recs)
    r2, _ = sync(run_knut, ref, falkordb, "ref", "--no-bulk")
    assert r2.returncode == 0, r2.stderr
    assert dump(falkordb, "g") == dump(falkordb, "ref")
    assert falkordb.query("g", "MATCH (n:Person) RETURN count(n)")[1][0][0] == 4000
    # the key index the MERGE path needs exists
    idx = falkordb.query("g", "CALL db.indexes() YIELD label, properties RETURN label, properties")
    assert sorted((x[0].decode(), x[1].decode()) for x in idx[1]) == [("Company", "[id]"),
                                                                      ("Person", "[id]")], idx
    # every file is done in the ledger
    st = run_knut("sync", "status", "--config", root / "sync.yml", "--falkordb", url(falkordb),
                  "--ledger", root / "ledger.json", "--json", cwd=root)
    assert st.returncode == 0, st.stderr
    assert json.loads(st.stdout)["failed"] == 0


def test_edge_with_missing_endpoint_goes_merge(run_knut, tmp_path, falkordb):
    """An edge row whose endpoint is not in the bulk: the table goes MERGE,
    missing_endpoints: skip skips it as always, the vertex tables stay bulk."""
    root = tmp_path
    (root / "sync.yml").write_text(CONFIG.replace(
        "  employment:\n    path: drops/employment/\n",
        "  employment:\n    path: drops/employment/\n    missing_endpoints: skip\n"))
    land(root, range(0, 100), 5, 1)
    pq.write_table(pa.table({"person_id": pa.array([100000], pa.int64()),
                             "company_id": pa.array([1], pa.int64()),
                             "title": pa.array(["x"])}),
                   root / "drops" / "employment" / "employment-z.parquet")
    r, recs = sync(run_knut, root, falkordb, "m")
    assert r.returncode == 0, r.stderr
    assert paths(recs) == {"companies": "bulk", "people": "bulk", "employment": "merge"}
    assert falkordb.query("m", "MATCH ()-[e:WORKS_AT]->() RETURN count(e)")[1][0][0] == 100


def test_dates_and_cdc_go_merge(run_knut, tmp_path, falkordb):
    root = tmp_path
    (root / "sync.yml").write_text("""\
tables:
  events:
    path: drops/events/
    vertices:
      - labels: [Event]
        keys: [id]
  changes:
    path: drops/changes/
    mode: cdc
    vertices:
      - labels: [Thing]
        keys: [id]
""")
    (root / "drops" / "events").mkdir(parents=True)
    (root / "drops" / "changes").mkdir(parents=True)
    import datetime as dt
    pq.write_table(pa.table({"id": pa.array([1, 2], pa.int64()),
                             "at": pa.array([dt.date(2024, 1, 1), dt.date(2024, 2, 1)])}),
                   root / "drops" / "events" / "e.parquet")
    pq.write_table(pa.table({"id": pa.array([1, 2, 1], pa.int64()),
                             "_change_type": pa.array(["INSERT", "INSERT", "DELETE"])}),
                   root / "drops" / "changes" / "c.parquet")
    r, recs = sync(run_knut, root, falkordb, "d")
    assert r.returncode == 0, r.stderr
    assert set(paths(recs).values()) == {"merge"}, paths(recs)
    assert falkordb.query("d", "MATCH (n:Event) WHERE n.at = date('2024-02-01') "
                               "RETURN count(n)")[1][0][0] == 1
    assert falkordb.query("d", "MATCH (n:Thing) RETURN n.id")[1] == [[2]]


def test_kill9_during_bulk_then_exact(knut, run_knut, tmp_path, falkordb):
    """Killed while GRAPH.BULK runs: no file done, no graph; the rerun is exact."""
    root = tmp_path
    (root / "sync.yml").write_text(CONFIG)
    land(root, range(0, 400000), 1000, 4)
    cmd = [str(knut), "sync", "--once", "--config", str(root / "sync.yml"), "--falkordb",
           url(falkordb), "--graph", "k", "--ledger", str(root / "ledger.json")]
    env = dict(os.environ, KNUT_LOG="warn")
    p = subprocess.Popen(cmd, cwd=root, env=env, stderr=subprocess.PIPE, text=True)
    # wait until the temporary key exists (the bulk has begun), then kill
    c = falkordb.client()
    end = time.monotonic() + 120
    while time.monotonic() < end and p.poll() is None and not c.exists("k:knut-bulk"):
        time.sleep(0.002)
    began = c.exists("k:knut-bulk")
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=60)
    assert began, f"the bulk never began (rc {p.returncode}): {p.stderr.read()[-2000:]}"
    assert not c.exists("k"), "the graph appeared before the bulk was complete"
    ledger = root / "ledger.json"
    if ledger.exists():
        assert '"done"' not in ledger.read_text()
    r, recs = sync(run_knut, root, falkordb, "k")
    assert r.returncode == 0, r.stderr
    assert paths(recs) == {"companies": "bulk", "people": "bulk", "employment": "bulk"}
    assert falkordb.query("k", "MATCH (n) RETURN count(n)")[1][0][0] == 401000
    assert falkordb.query("k", "MATCH ()-[e]->() RETURN count(e)")[1][0][0] == 400000
    assert not c.exists("k:knut-bulk")


def test_store_multi_file_table_same_as_one_file(run_knut, tmp_path):
    """Ten files of a table in one round into the embedded store: the same
    graph as the rows in one file (and a later round still upserts)."""
    def store_dump(db):
        q = ("SELECT (SELECT count(*) FROM v_Person), (SELECT count(*) FROM v_Company), "
             "(SELECT count(*) FROM e_WORKS_AT), (SELECT sum(age) FROM v_Person), "
             "(SELECT count(name) FROM v_Person), (SELECT string_agg(title, ',' ORDER BY title) "
             "FROM (SELECT DISTINCT title FROM e_WORKS_AT))")
        r = run_knut("query", "--db", db, "-f", "csv", q)
        assert r.returncode == 0, r.stderr
        return r.stdout.strip().splitlines()[-1]

    dumps = []
    for files in (10, 1):
        root = tmp_path / f"f{files}"
        root.mkdir()
        (root / "sync.yml").write_text(CONFIG)
        land(root, range(0, 5000), 30, files)
        r = run_knut("sync", "--once", "--config", root / "sync.yml", "--store",
                     root / "g.duckdb", cwd=root)
        assert r.returncode == 0, r.stderr
        land(root, range(4000, 6000), 30, 2, tag="b")
        r = run_knut("sync", "--once", "--config", root / "sync.yml", "--store",
                     root / "g.duckdb", cwd=root)
        assert r.returncode == 0, r.stderr
        dumps.append(store_dump(root / "g.duckdb"))
    assert dumps[0] == dumps[1]
    assert dumps[0].startswith("6000,30,6000,")


def test_falkordb_renames_a_graph_key(falkordb):
    """What the bulk round relies on, and what an exactly-once variant would:
    RENAMENX of a graph key (also inside MULTI/EXEC) keeps its nodes, edges
    and indexes, and refuses a target that exists."""
    c = falkordb.client()
    c.execute_command("GRAPH.QUERY", "src", "CREATE (:A {id: 1})-[:R {w: 2}]->(:B {id: 2})")
    c.execute_command("GRAPH.QUERY", "src", "CREATE INDEX FOR (n:A) ON (n.id)")
    pipe = c.pipeline(transaction=True)
    pipe.renamenx("src", "dst")
    pipe.set("ledger-entry", "1")
    assert pipe.execute() == [True, True]
    assert not c.exists("src")
    r = c.execute_command("GRAPH.RO_QUERY", "dst", "MATCH (a:A {id: 1})-[e:R]->(b) RETURN b.id, e.w")
    assert r[1] == [[2, 2]]
    idx = c.execute_command("GRAPH.RO_QUERY", "dst",
                            "CALL db.indexes() YIELD label RETURN label")[1]
    assert idx == [[b"A"]]
    c.execute_command("GRAPH.QUERY", "other", "CREATE (:C)")
    assert c.renamenx("other", "dst") is False  # the target exists: nothing moves
    assert c.exists("other")
    assert c.execute_command("GRAPH.RO_QUERY", "dst", "MATCH (n) RETURN count(n)")[1] == [[2]]


def test_bulk_failure_falls_back_to_merge(run_knut, tmp_path, falkordb):
    """A value the bulk encoder refuses mid-set (a NUL inside a string
    property) fails the bulk: the temporary key goes, a warning says why, and
    the same round runs the MERGE path, ending as a --no-bulk run does."""
    outs = []
    for graph, extra in (("f", ()), ("fref", ("--no-bulk",))):
        root = tmp_path / graph
        (root / "drops" / "people").mkdir(parents=True)
        (root / "sync.yml").write_text("tables:\n  people:\n    path: drops/people/\n"
                                       "    vertices:\n      - labels: [Person]\n"
                                       "        keys: [id]\n")
        pq.write_table(pa.table({"id": pa.array([1, 2, 3], pa.int64()),
                                 "note": pa.array(["a", "b\x00c", "d"])}),
                       root / "drops" / "people" / "p.parquet")
        r, recs = sync(run_knut, root, falkordb, graph, *extra)
        outs.append((r.returncode, [(x.get("msg"), x.get("files"), x.get("failed_files"))
                                    for x in recs if x.get("msg") == "table synced"]))
        if not extra:
            warns = [x["msg"] for x in recs if x.get("level") == "warn"]
            assert any("GRAPH.BULK" in w and "NUL" in w for w in warns), r.stderr
            assert not falkordb.client().exists("f:knut-bulk")
            assert paths(recs).get("people", "merge") == "merge"
    assert outs[0] == outs[1]
    g = [falkordb.query(x, "MATCH (n) RETURN n.id ORDER BY n.id")[1]
         if falkordb.client().exists(x) else None for x in ("f", "fref")]
    assert g[0] == g[1]
