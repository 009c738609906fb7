"""`knut export`: SQL and Cypher rows to Parquet and GraphAr (docs/cli.md).

Outputs are read back by pyarrow.parquet, by the GraphAr reference package
(in a subprocess, garref.py) and by `knut gar validate`; Cypher rows come
from a real FalkorDB (peers.py). Memory is checked as the child's peak RSS
(wait4, through tests/integration/peak_rss.py), never as a time.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import garref
from peers import FalkorDB

KNUT = os.environ.get("KNUT_BIN", str(Path(__file__).resolve().parents[2] / "build" / "knut"))
PEAK_RSS = Path(__file__).with_name("peak_rss.py")


def knut(*args, cwd=None, env=None, input=None):
    return subprocess.run([KNUT, *map(str, args)], capture_output=True, text=True, timeout=600,
                          cwd=cwd, env=env, input=input)


def ok(p):
    assert p.returncode == 0, (p.returncode, p.stdout[-2000:], p.stderr[-2000:])
    return p


def leftovers(d: Path):
    """Anything a failed export may have left: temp files and staging dirs."""
    return sorted(x.name for x in d.iterdir() if "knut-" in x.name)


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "g.duckdb"
    ok(knut("query", "--db", path,
            "CREATE TABLE person AS SELECT range AS id, 'name-' || range AS name, "
            "range * 0.5 AS score, DATE '2020-01-01' + (range % 100)::INT AS day, "
            "CASE WHEN range % 10 = 3 THEN NULL ELSE range % 7 END AS maybe "
            "FROM range(10000); "
            "CREATE TABLE knows AS SELECT range % 1000 AS src, (range * 7) % 1000 AS dst, "
            "range AS since FROM range(5000)"))
    return path


# ---- Parquet -----------------------------------------------------------------

def test_parquet_from_duckdb_file(db, tmp_path):
    out = tmp_path / "p.parquet"
    ok(knut("export", "-f", "parquet", "-o", out, "--db", db,
            "SELECT * FROM person ORDER BY id;"))
    t = pq.read_table(out)
    assert t.num_rows == 10000
    assert t.column_names == ["id", "name", "score", "day", "maybe"]
    assert t.column("name")[1234].as_py() == "name-1234"
    assert t.column("maybe").null_count == 1000
    assert leftovers(tmp_path) == []


def test_parquet_from_files_in_memory(tmp_path):
    src = tmp_path / "in.csv"
    src.write_text("a,b\n1,x\n2,y\n3,\n")
    out = tmp_path / "out.parquet"
    ok(knut("export", "-f", "parquet", "-o", out, "--compression", "zstd",
            f"SELECT a, b FROM read_csv('{src}') WHERE a > 1"))
    t = pq.read_table(out)
    assert t.to_pydict() == {"a": [2, 3], "b": ["y", None]}
    assert pq.ParquetFile(out).metadata.row_group(0).column(0).compression == "ZSTD"


def test_parquet_sql_from_stdin(tmp_path):
    out = tmp_path / "s.parquet"
    ok(knut("export", "-f", "parquet", "-o", out, "-", input="SELECT 42 AS answer\n"))
    assert pq.read_table(out).to_pydict() == {"answer": [42]}


def test_existing_output_refused_unless_overwrite(tmp_path):
    out = tmp_path / "x.parquet"
    out.write_text("keep me")
    p = knut("export", "-f", "parquet", "-o", out, "SELECT 1 AS a")
    assert p.returncode == 1 and "exists" in p.stderr and "--overwrite" in p.stderr
    assert out.read_text() == "keep me"
    ok(knut("export", "-f", "parquet", "-o", out, "--overwrite", "SELECT 1 AS a"))
    assert pq.read_table(out).to_pydict() == {"a": [1]}


def test_failing_query_leaves_nothing(tmp_path):
    out = tmp_path / "f.parquet"
    # fails after DuckDB has written rows: the temp file is gone, out absent
    p = knut("export", "-f", "parquet", "-o", out,
             "SELECT CASE WHEN range > 1500000 THEN error('boom at ' || range) ELSE range END "
             "AS v FROM range(3000000)")
    assert p.returncode == 1
    assert "boom at" in p.stderr and "the query" in p.stderr
    assert not out.exists() and leftovers(tmp_path) == []
    p = knut("export", "-f", "parquet", "-o", out, "SELECT * FROM no_such_table")
    assert p.returncode == 1 and "no_such_table" in p.stderr
    assert list(tmp_path.iterdir()) == []


def test_sigint_mid_export_leaves_nothing(tmp_path):
    out = tmp_path / "i.parquet"
    proc = subprocess.Popen([KNUT, "export", "-f", "parquet", "-o", str(out), "--threads", "1",
                             "SELECT range, md5(range::VARCHAR) FROM range(1000000000)"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # interrupted once it is writing (the temp file is there)
        for _ in range(600):
            if leftovers(tmp_path) or proc.poll() is not None:
                break
            time.sleep(0.05)
        assert leftovers(tmp_path), "the export never started writing"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1 and "interrupted (signal 2): nothing written" in err
    assert list(tmp_path.iterdir()) == []


def test_failing_overwrite_keeps_the_old_file(tmp_path):
    out = tmp_path / "old.parquet"
    ok(knut("export", "-f", "parquet", "-o", out, "SELECT 7 AS a"))
    p = knut("export", "-f", "parquet", "-o", out, "--overwrite", "SELECT error('no') AS a")
    assert p.returncode == 1
    assert pq.read_table(out).to_pydict() == {"a": [7]}
    assert leftovers(tmp_path) == []


def test_bad_db_file_is_named(tmp_path):
    p = knut("export", "-f", "parquet", "-o", tmp_path / "o.parquet", "--db",
             tmp_path / "missing.duckdb", "SELECT 1")
    assert p.returncode == 1 and "missing.duckdb" in p.stderr
    bad = tmp_path / "bad.duckdb"
    bad.write_bytes(b"not a database at all" * 100)
    p = knut("export", "-f", "parquet", "-o", tmp_path / "o.parquet", "--db", bad, "SELECT 1")
    assert p.returncode == 1 and "bad.duckdb" in p.stderr
    assert not (tmp_path / "o.parquet").exists()


def test_large_result_in_bounded_memory(tmp_path):
    """6M rows (~300 MB of values) stream through with a peak RSS well under them."""
    out = tmp_path / "big.parquet"
    sql = ("SELECT range AS id, 'name-' || range AS name, range * 0.5 AS score, "
           "md5(range::VARCHAR) AS h FROM range(6000000)")
    peak = tmp_path / "peak.json"  # knut's own peak RSS, from a small launcher's wait4
    proc = subprocess.run([sys.executable, str(PEAK_RSS), str(peak), "--", KNUT, "export", "-f",
                           "parquet", "-o", str(out), "--memory-limit", "256MB", "--threads", "2",
                           sql], capture_output=True, text=True, timeout=600)
    res = json.loads(peak.read_text())
    assert res["returncode"] == 0, proc.stderr
    assert pq.ParquetFile(out).metadata.num_rows == 6000000
    peak_mb = res["maxrss_kb"] / 1024
    assert peak_mb < 450, f"peak RSS {peak_mb:.0f} MB"


# ---- GraphAr -----------------------------------------------------------------

GAR_READ = r"""
import json, sys, graphar
from graphar._core import AdjListType as A
gi = graphar.GraphInfo.load(sys.argv[1])
out = {"validated": gi.is_validated(), "v": {}, "e": None}
for vi in gi.get_vertex_infos():
    vc = graphar.VerticesCollection.Make(gi, vi.get_type())
    names = [p.name for g in vi.get_property_groups() for p in g.get_properties()]
    first = None
    for v in vc:
        first = [v.property(n) for n in names[:2]]
        break
    out["v"][vi.get_type()] = {"size": vc.size(), "names": names, "first": first}
if len(sys.argv) > 2:
    s, t, d = sys.argv[2].split(",")
    ec = graphar.EdgesCollection.Make(gi, s, t, d, A.ordered_by_source)
    out["e"] = {"size": ec.size(),
                "rows": sorted([e.source(), e.destination(), e.property("since")] for e in ec)}
print(json.dumps(out))
"""


def validate(graph_yml):
    p = ok(knut("gar", "validate", graph_yml))
    assert "0 errors" in p.stdout + p.stderr


def test_graphar_vertices_chunked(db, tmp_path):
    out = tmp_path / "gar"
    ok(knut("export", "-f", "graphar", "-o", out, "--db", db, "--label", "person",
            "--chunk-rows", "3000", "--name", "social", "SELECT * FROM person ORDER BY id"))
    chunks = sorted((out / "vertex/person").glob("*/chunk*"))
    assert len(chunks) == 4  # 10000 rows / 3000 per chunk
    assert all(pq.read_metadata(c).num_rows <= 3000 for c in chunks)
    validate(out / "social.graph.yml")
    ref = garref.run(GAR_READ, out / "social.graph.yml")
    assert ref["validated"]
    v = ref["v"]["person"]
    assert v["size"] == 10000
    assert v["names"] == ["id", "name", "score", "day", "maybe"]
    assert v["first"] == [0, "name-0"]
    assert leftovers(tmp_path) == []


def test_graphar_edges_with_endpoints(db, tmp_path):
    out = tmp_path / "gar"
    ok(knut("export", "-f", "graphar", "-o", out, "--db", db, "--edge", "person,knows,person",
            "--chunk-rows", "1024", "SELECT src, dst, since FROM knows"))
    validate(out / "graph.graph.yml")
    ref = garref.run(GAR_READ, out / "graph.graph.yml", "person,knows,person")
    assert ref["validated"]
    assert ref["v"]["person"]["size"] == 1000  # the distinct endpoint keys
    assert ref["e"]["size"] == 5000
    # keys 0..999 in key order: index == key
    assert ref["e"]["rows"] == sorted([i % 1000, (i * 7) % 1000, i] for i in range(5000))
    for part in (out / "edge/person_knows_person").rglob("chunk*"):
        if "offset" not in str(part):
            assert pq.read_metadata(part).num_rows <= 1024


def test_graphar_edge_column_names(tmp_path):
    out = tmp_path / "gar"
    ok(knut("export", "-f", "graphar", "-o", out, "--edge", "a,r,b", "--src-column", "x",
            "--dst-column", "y", "--file-type", "csv",
            "SELECT 'k' || (range % 5) AS x, range AS y, range AS since FROM range(20)"))
    validate(out / "graph.graph.yml")
    ref = garref.run(GAR_READ, out / "graph.graph.yml", "a,r,b")
    assert ref["v"]["a"]["size"] == 5 and ref["v"]["b"]["size"] == 20
    assert ref["e"]["size"] == 20
    p = knut("export", "-f", "graphar", "-o", tmp_path / "g2", "--edge", "a,r,b",
             "SELECT 1 AS x, 2 AS y")
    assert p.returncode == 1 and "no column 'src'" in p.stderr
    assert not (tmp_path / "g2").exists() and leftovers(tmp_path) == []


def test_graphar_duplicate_key_fails_and_leaves_nothing(tmp_path):
    out = tmp_path / "gar"
    p = knut("export", "-f", "graphar", "-o", out, "--label", "t", "--key", "k",
             "SELECT range % 3 AS k, range AS v FROM range(10)")
    assert p.returncode == 1 and "key (k) = (0) appears 4 times" in p.stderr
    assert not out.exists() and leftovers(tmp_path) == []


def test_graphar_failure_keeps_old_graph(tmp_path):
    out = tmp_path / "gar"
    ok(knut("export", "-f", "graphar", "-o", out, "--label", "t", "SELECT 1 AS id"))
    before = sorted(str(p.relative_to(out)) for p in out.rglob("*"))
    p = knut("export", "-f", "graphar", "-o", out, "--label", "t", "--overwrite",
             "SELECT CASE WHEN range = 5 THEN error('late failure') ELSE range END AS id "
             "FROM range(10)")
    assert p.returncode == 1 and "late failure" in p.stderr
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*")) == before
    p = knut("export", "-f", "graphar", "-o", out, "--label", "t", "SELECT 2 AS id")
    assert p.returncode == 1 and "--overwrite" in p.stderr
    assert leftovers(tmp_path) == []


def test_iceberg_is_its_own_option(tmp_path):
    # Iceberg output is --iceberg TABLE (tests/integration/test_iceberg_write.py),
    # not a --format: a table is appended to, not written under --out
    p = knut("export", "-f", "iceberg", "-o", tmp_path / "x", "SELECT 1")
    assert p.returncode == 2
    h = ok(knut("export", "--help")).stdout
    assert "--iceberg TABLE" in h and "not built" not in h


@pytest.mark.parametrize("args,msg", [
    (["-o", "x", "SELECT 1"], "--format"),
    (["-f", "parquet", "SELECT 1"], "--out"),
    (["-f", "parquet", "-o", "x"], "SQL"),
    (["-f", "graphar", "-o", "x", "SELECT 1"], "--label"),
    (["-f", "parquet", "-o", "x", "--label", "a", "SELECT 1"], "graphar"),
    (["-f", "graphar", "-o", "x", "--label", "a", "--compression", "zstd", "SELECT 1"],
     "parquet"),
    (["-f", "parquet", "-o", "x", "--cypher", "RETURN 1", "SELECT 1"], "not both"),
    (["-f", "parquet", "-o", "x", "--falkordb", "redis://h", "SELECT 1"], "--cypher"),
])
def test_usage_errors(tmp_path, args, msg):
    env = {k: v for k, v in os.environ.items() if not k.startswith("KNUT_")}
    p = knut("export", *args, cwd=tmp_path, env=env)
    assert p.returncode == 2 and msg in p.stderr, p.stderr
    assert list(tmp_path.iterdir()) == []


def test_bad_edge_spec(tmp_path):
    p = knut("export", "-f", "graphar", "-o", tmp_path / "g", "--edge", "a,b", "SELECT 1")
    assert p.returncode == 1 and "SRC,TYPE,DST" in p.stderr


# ---- Cypher on a real FalkorDB ------------------------------------------------

class SecureFalkorDB(FalkorDB):
    """FalkorDB behind --requirepass."""

    name = "falkordb_export"
    password = "exp0rt-s3cret"

    def command(self):
        return super().command() + ["--requirepass", self.password]

    def client(self, **kw):
        kw.setdefault("password", self.password)
        return super().client(**kw)


def test_cypher_to_parquet_and_graphar(start_peer, tmp_path):
    peer = start_peer(SecureFalkorDB)
    peer.query("social", "UNWIND range(0, 999) AS i CREATE (:Person {id: i, name: 'p' + "
                         "toString(i), age: i % 90})")
    peer.query("social", "MATCH (a:Person), (b:Person) WHERE b.id = (a.id * 3) % 1000 "
                         "CREATE (a)-[:KNOWS {since: a.id}]->(b)")
    pw = tmp_path / "pw"
    pw.write_text(SecureFalkorDB.password + "\n")
    url = f"redis://{peer.host}:{peer.port}"
    out = tmp_path / "people.parquet"
    p = ok(knut("export", "-f", "parquet", "-o", out, "--falkordb", url,
                "--falkordb-password-file", pw, "--graph", "social", "--cypher",
                "MATCH (p:Person) RETURN p.id AS id, p.name AS name, p.age AS age "
                "ORDER BY p.id"))
    assert SecureFalkorDB.password not in p.stderr
    t = pq.read_table(out).to_pydict()
    assert t["id"] == list(range(1000)) and t["name"][7] == "p7" and t["age"][95] == 5

    gar = tmp_path / "gar"
    ok(knut("export", "-f", "graphar", "-o", gar, "--edge", "Person,KNOWS,Person",
            "--chunk-rows", "256", "--falkordb", url, "--graph", "social", "--cypher",
            "MATCH (a)-[k:KNOWS]->(b) WHERE a.id % 3 <> 1 "
            "RETURN a.id AS src, b.id AS dst, k.since AS since",
            env={**os.environ, "KNUT_FALKORDB_PASSWORD": SecureFalkorDB.password}))
    validate(gar / "graph.graph.yml")
    ref = garref.run(GAR_READ, gar / "graph.graph.yml", "Person,KNOWS,Person")
    pairs = [(i, (i * 3) % 1000) for i in range(1000) if i % 3 != 1]
    rank = {k: n for n, k in enumerate(sorted({k for p in pairs for k in p}))}
    assert ref["v"]["Person"]["size"] == len(rank)  # vertex index = rank of the key
    want = sorted([rank[a], rank[b], a] for a, b in pairs)
    assert ref["e"]["size"] == len(want) and ref["e"]["rows"] == want


def test_cypher_errors_name_the_peer(start_peer, tmp_path):
    peer = start_peer(SecureFalkorDB)
    url = f"redis://{peer.host}:{peer.port}"
    out = tmp_path / "o.parquet"
    env = {**os.environ, "KNUT_FALKORDB_PASSWORD": SecureFalkorDB.password}
    p = knut("export", "-f", "parquet", "-o", out, "--falkordb", url, "--graph", "g",
             "--cypher", "MATCH (n RETURN n", env=env)
    assert p.returncode == 1 and f"{peer.host}:{peer.port}" in p.stderr
    p = knut("export", "-f", "parquet", "-o", out, "--falkordb", url, "--graph", "g",
             "--cypher", "RETURN 1 AS one",
             env={**os.environ, "KNUT_FALKORDB_PASSWORD": "wrong"})
    assert p.returncode == 1 and "wrong" not in p.stderr
    p = knut("export", "-f", "parquet", "-o", out, "--falkordb", "redis://127.0.0.1:1",
             "--graph", "g", "--cypher", "RETURN 1")
    assert p.returncode == 1 and "127.0.0.1:1" in p.stderr
    assert list(tmp_path.iterdir()) == []
