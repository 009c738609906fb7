"""`knut load`: whole GraphAr graphs into a real FalkorDB and into the
embedded store. Every vertex and edge property is compared with what
`knut gar cat --format json` reads from the same files (FalkorDB keeps
timestamps to the second, so those are compared to the second). Also:
loading twice gives the same graph, GRAPH.BULK (fresh graph) and UNWIND
(--no-bulk) build equal graphs, and a FalkorDB killed mid-load gives exit 1,
an error naming host:port and no "done" line."""
from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from peers import FalkorDB

DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "graphar-testing"
LDBC = DATA / "ldbc_sample/parquet/ldbc_sample_timestamp.graph.yml"
MODERN = DATA / "modern_graph/modern_graph.graph.yml"


def url(peer):
    return f"redis://127.0.0.1:{peer.port}"


def jsonl(text):
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def gar_rows(run_knut, graph, typ):
    r = run_knut("gar", "cat", "-f", "json", graph, typ)
    assert r.returncode == 0, r.stderr
    return jsonl(r.stdout)


def norm(v, seconds):
    """Comparable form of a value: timestamps cut to the second for FalkorDB,
    floats rounded to FalkorDB's 15 significant digits."""
    if isinstance(v, float):
        return float(f"{v:.6g}")
    if isinstance(v, list):
        return [norm(x, seconds) for x in v]
    if seconds and isinstance(v, str) and len(v) >= 19 and v[10] == "T" and v[4] == "-":
        return v[:19]
    return v


def expected(run_knut, graph, info):
    """{(kind, type): sorted rows} from gar cat, keyed like the loaded graph."""
    out = {}
    for vtype, props in info["vertices"].items():
        rows = gar_rows(run_knut, graph, vtype)
        out[("v", vtype)] = [{"_gar_id": r["_graphArVertexIndex"], **{p: r.get(p) for p in props}}
                             for r in rows]
    for (src, et, dst), props in info["edges"].items():
        rows = gar_rows(run_knut, graph, f"{src},{et},{dst}")
        out[("e", et)] = [{"s": r["_graphArSrcIndex"], "d": r["_graphArDstIndex"],
                           **{p: r.get(p) for p in props}} for r in rows]
    return out


def falkor_rows(run_knut, peer, graph, info):
    out = {}
    base = ["graph", "query", "-f", "json", "--falkordb", url(peer), "--graph", graph]
    for vtype, props in info["vertices"].items():
        cols = ", ".join(["n._gar_id AS _gar_id"] + [f"n.`{p}` AS `{p}`" for p in props])
        r = run_knut(*base, f"MATCH (n:`{vtype}`) RETURN {cols} ORDER BY n._gar_id")
        assert r.returncode == 0, r.stderr
        out[("v", vtype)] = jsonl(r.stdout)
    for (src, et, dst), props in info["edges"].items():
        cols = ", ".join(["a._gar_id AS s", "b._gar_id AS d"] + [f"e.`{p}` AS `{p}`" for p in props])
        r = run_knut(*base, f"MATCH (a:`{src}`)-[e:`{et}`]->(b:`{dst}`) RETURN {cols}")
        assert r.returncode == 0, r.stderr
        out[("e", et)] = jsonl(r.stdout)
    return out


def store_rows(run_knut, db, info):
    out = {}
    tables = {}
    for cat in ("_knut_vertex_labels", "_knut_edge_types"):
        r = run_knut("query", "--db", db, "-f", "json", f"SELECT * FROM {cat}")
        assert r.returncode == 0, r.stderr
        for row in jsonl(r.stdout):
            tables[row.get("label") or row.get("type")] = row["table_name"]
    for vtype, props in info["vertices"].items():
        cols = ", ".join(['"_gar_id"'] + [f'"{p}"' for p in props])
        r = run_knut("query", "--db", db, "-f", "json",
                     f'SELECT {cols} FROM "{tables[vtype]}" ORDER BY "_gar_id"')
        assert r.returncode == 0, r.stderr
        out[("v", vtype)] = jsonl(r.stdout)
    for (src, et, dst), props in info["edges"].items():
        cols = ", ".join(['a."_gar_id" AS s', 'b."_gar_id" AS d'] + [f'e."{p}"' for p in props])
        r = run_knut("query", "--db", db, "-f", "json",
                     f'SELECT {cols} FROM "{tables[et]}" e JOIN "{tables[src]}" a '
                     f'ON a._knut_vid = e._knut_src JOIN "{tables[dst]}" b ON b._knut_vid = e._knut_dst')
        assert r.returncode == 0, r.stderr
        out[("e", et)] = jsonl(r.stdout)
    return out


def compare(got, want, seconds):
    assert set(got) == set(want)
    for k in want:
        g = sorted((json.dumps({c: norm(v, seconds) for c, v in r.items()}, sort_keys=True)
                    for r in got[k]))
        w = sorted((json.dumps({c: norm(v, seconds) for c, v in r.items()}, sort_keys=True)
                    for r in want[k]))
        assert len(g) == len(w), k
        assert g == w, k


LDBC_INFO = {"vertices": {"person": ["id", "firstName", "lastName", "gender"]},
             "edges": {("person", "knows-timestamp", "person"): ["creationDate-timestamp"]}}
MODERN_INFO = {"vertices": {"person": ["id", "name", "age"], "software": ["id", "name", "lang"]},
               "edges": {("person", "knows", "person"): ["weight"],
                         ("person", "created", "software"): ["weight"]}}


@pytest.fixture(scope="module")
def typed(tmp_path_factory, knut):
    """A small graph with every GraphAr type (and nulls), made by gar import."""
    d = tmp_path_factory.mktemp("typed")

    def q(sql):
        subprocess.run([str(knut), "query", sql], cwd=d, check=True, capture_output=True)

    q("COPY (SELECT 100 + i AS id, 'name ''' || i || '\"\n' AS name, DATE '1990-01-01' + (i * 40)::INTEGER AS born,"
      " TIMESTAMP '2024-01-01 10:00:00.250' + to_seconds(i * 3601) AS seen,"
      " (i * 1.5 + 0.25)::DOUBLE AS score, i % 2 = 0 AS flag,"
      " CASE WHEN i % 3 = 0 THEN NULL ELSE i END AS maybe,"
      " [i, i + 1]::BIGINT[] AS nums, ['a' || i, 'b']::VARCHAR[] AS tags"
      " FROM range(50) t(i)) TO 'people.parquet' (FORMAT parquet)")
    q("COPY (SELECT 100 + i % 50 AS a, 100 + (i % 50 + 1 + (i // 50) * 7) % 50 AS b, (i * 0.5)::DOUBLE AS w,"
      " DATE '2020-02-02' + i::INTEGER AS since FROM range(120) t(i)) TO 'knows.parquet' (FORMAT parquet)")
    (d / "typed.yml").write_text(
        "graph: typed\noutput: out\nvertex_chunk_size: 16\nedge_chunk_size: 32\n"
        "vertices:\n  - type: P\n    table: people.parquet\n    key: id\n"
        "edges:\n  - type: K\n    src: {type: P, key: a}\n    dst: {type: P, key: b}\n"
        "    table: knows.parquet\n    properties: [w, since]\n")
    r = subprocess.run([str(knut), "gar", "import", "-q", "-c", "typed.yml"], cwd=d,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return d / "out" / "typed.graph.yml"


TYPED_INFO = {"vertices": {"P": ["id", "name", "born", "seen", "score", "flag", "maybe", "nums",
                                 "tags"]},
              "edges": {("P", "K", "P"): ["w", "since"]}}


@pytest.mark.parametrize("graph,info", [(LDBC, LDBC_INFO), (MODERN, MODERN_INFO)],
                         ids=["ldbc", "modern"])
@pytest.mark.parametrize("bulk", [True, False], ids=["bulk", "unwind"])
def test_load_falkordb_values(falkordb, run_knut, graph, info, bulk):
    args = ["load", "--graphar", graph, "--falkordb", url(falkordb), "--graph", "g"]
    r = run_knut(*args, *([] if bulk else ["--no-bulk"]))
    assert r.returncode == 0, r.stderr
    assert "done:" in r.stdout
    assert ("(bulk)" in r.stdout) == bulk
    want = expected(run_knut, graph, info)
    compare(falkor_rows(run_knut, falkordb, "g", info), want, seconds=True)
    # JSON progress (stderr is not a terminal): one line per set, then done.
    logs = jsonl(r.stderr)
    assert [x["msg"] for x in logs] == ["set loaded"] * len(want) + ["done"]
    assert logs[-1]["vertices"] == sum(len(v) for k, v in want.items() if k[0] == "v")
    assert logs[-1]["edges"] == sum(len(v) for k, v in want.items() if k[0] == "e")


def test_load_falkordb_typed(falkordb, run_knut, typed):
    want = expected(run_knut, typed, TYPED_INFO)
    for g, extra in (("bulk", []), ("unwind", ["--no-bulk", "--batch-rows", "7"])):
        r = run_knut("load", "--graphar", typed, "--falkordb", url(falkordb), "--graph", g, *extra)
        assert r.returncode == 0, r.stderr
        assert f"({g})" in r.stdout
        compare(falkor_rows(run_knut, falkordb, g, TYPED_INFO), want, seconds=True)


def test_load_twice_same_graph(falkordb, run_knut):
    counts = []
    for _ in range(3):  # bulk first (fresh graph), then UNWIND MERGE twice
        r = run_knut("load", "--graphar", LDBC, "--falkordb", url(falkordb), "--graph", "g")
        assert r.returncode == 0, r.stderr
        n = falkordb.query("g", "MATCH (n) RETURN count(n)")[1][0][0]
        e = falkordb.query("g", "MATCH ()-[e]->() RETURN count(e)")[1][0][0]
        counts.append((n, e))
    assert counts == [(903, 6626)] * 3
    compare(falkor_rows(run_knut, falkordb, "g", LDBC_INFO), expected(run_knut, LDBC, LDBC_INFO),
            seconds=True)


@pytest.mark.parametrize("graph,info", [(LDBC, LDBC_INFO), (MODERN, MODERN_INFO)],
                         ids=["ldbc", "modern"])
def test_load_store_values(tmp_path, run_knut, graph, info):
    db = tmp_path / "g.duckdb"
    for _ in range(2):  # the second load changes nothing
        r = run_knut("load", "--graphar", graph, "--db", db)
        assert r.returncode == 0, r.stderr
        assert "(embedded)" in r.stdout
        compare(store_rows(run_knut, db, info), expected(run_knut, graph, info), seconds=False)


def test_load_store_typed(tmp_path, run_knut, typed):
    db = tmp_path / "t.duckdb"
    r = run_knut("load", "--graphar", typed, "--db", db)
    assert r.returncode == 0, r.stderr
    compare(store_rows(run_knut, db, TYPED_INFO), expected(run_knut, typed, TYPED_INFO),
            seconds=False)


@pytest.mark.parametrize("bulk", [True, False], ids=["bulk", "unwind"])
def test_load_killed_falkordb(start_peer, knut, tmp_path, bulk):
    peer = start_peer(FalkorDB)
    # A graph large enough that the load is still running when the kill
    # lands (bulk loading is ~10x faster than UNWIND, so it gets more rows).
    d = tmp_path
    n = 3000000 if bulk else 300000
    subprocess.run([str(knut), "query",
                    f"COPY (SELECT i AS id, 'n' || i AS name FROM range({n}) t(i)) "
                    "TO 'v.parquet' (FORMAT parquet)"], cwd=d, check=True)
    subprocess.run([str(knut), "query",
                    f"COPY (SELECT i AS a, (i * 7) % {n} AS b FROM range({n}) t(i)) "
                    "TO 'e.parquet' (FORMAT parquet)"], cwd=d, check=True)
    (d / "big.yml").write_text(
        "graph: big\noutput: out\nvertices:\n  - type: V\n    table: v.parquet\n    key: id\n"
        "edges:\n  - type: E\n    src: {type: V, key: a}\n    dst: {type: V, key: b}\n"
        "    table: e.parquet\n")
    subprocess.run([str(knut), "gar", "import", "-q", "-c", "big.yml"], cwd=d, check=True)
    args = [str(knut), "load", "--graphar", str(d / "out/big.graph.yml"), "--falkordb", url(peer),
            "--graph", "g", "--batch-rows", "1000"]
    proc = subprocess.Popen(args + ([] if bulk else ["--no-bulk"]), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    if bulk:
        # Kill as soon as the first GRAPH.BULK call created the graph key.
        deadline = time.monotonic() + 60
        with peer.client() as c:
            while time.monotonic() < deadline and not c.exists("g"):
                time.sleep(0.005)
    else:
        deadline = time.monotonic() + 60
        with peer.client() as c:
            while time.monotonic() < deadline:
                try:
                    if c.execute_command("GRAPH.RO_QUERY", "g", "MATCH (n:V) RETURN count(n)")[1][0][0] > 0:
                        break
                except Exception:
                    pass
                time.sleep(0.01)
    os.kill(peer.pid, signal.SIGKILL)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, (out, err)
    assert f"127.0.0.1:{peer.port}" in err
    assert "done" not in out
    assert '"done"' not in err


def test_load_usage(run_knut):
    r = run_knut("load", "--help")
    assert r.returncode == 0 and "--graphar PATH" in r.stdout and "Examples:" in r.stdout
    r = run_knut("load", "--graphar", LDBC)
    assert r.returncode == 2
    r = run_knut("load", "--graphar", LDBC, "--db", "x", "--batch-rows", "0")
    assert r.returncode == 2


# ---- --mapping: tables + a sync config ------------------------------------

LAKE = Path(__file__).resolve().parents[2] / "examples" / "lakehouse"


def _lake_copy(tmp_path):
    dst = tmp_path / "lake"
    subprocess.run(["cp", "-r", str(LAKE), str(dst)], check=True)
    return dst


def test_load_mapping_into_store_and_falkordb(knut, falkordb, tmp_path):
    lake = _lake_copy(tmp_path)
    db = tmp_path / "g.duckdb"
    r = subprocess.run([str(knut), "load", "--mapping", str(lake / "sync.yml"), "--db", str(db)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("done: 4 files, 30 rows")
    # a one-shot load leaves no sync status snapshot beside the store
    assert not (tmp_path / "g.duckdb.status.json").exists()
    q = subprocess.run([str(knut), "query", "--db", str(db), "-f", "csv",
                        "SELECT (SELECT count(*) FROM v_Person), (SELECT count(*) FROM v_Company),"
                        " (SELECT count(*) FROM e_WORKS_AT), (SELECT count(*) FROM e_REPORTS_TO)"],
                       capture_output=True, text=True, check=True)
    store_counts = [int(x) for x in q.stdout.splitlines()[1].split(",")]
    assert store_counts == [10, 4, 9, 9]
    # The same tables into FalkorDB give the same graph, and a second load converges.
    for _ in range(2):
        r = subprocess.run([str(knut), "load", "--mapping", str(lake / "sync.yml"),
                            "--falkordb", url(falkordb), "--graph", "lake"],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        with falkordb.client() as c:
            got = [c.execute_command("GRAPH.QUERY", "lake", q)[1][0][0] for q in (
                "MATCH (n:Person) RETURN count(n)", "MATCH (n:Company) RETURN count(n)",
                "MATCH ()-[e:WORKS_AT]->() RETURN count(e)",
                "MATCH ()-[e:REPORTS_TO]->() RETURN count(e)")]
        assert got == store_counts


def test_load_mapping_bad_file_fails(knut, tmp_path):
    lake = _lake_copy(tmp_path)
    (lake / "companies.csv").write_text("company_id,name\n1,a,extra,columns\n\x00\x01")
    r = subprocess.run([str(knut), "load", "--mapping", str(lake / "sync.yml"),
                        "--db", str(tmp_path / "g.duckdb")], capture_output=True, text=True)
    assert r.returncode == 1
    assert "failed" in r.stderr and "done:" not in r.stdout
    r = subprocess.run([str(knut), "load", "--mapping", str(lake / "sync.yml"),
                        "--graphar", "x", "--db", "y"], capture_output=True, text=True)
    assert r.returncode == 2
    # --batch-rows is the GraphAr loader's: refused with --mapping, not ignored
    r = subprocess.run([str(knut), "load", "--mapping", str(lake / "sync.yml"),
                        "--batch-rows", "10", "--db", "y"], capture_output=True, text=True)
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "--batch-rows is for --graphar" in r.stderr, r.stderr


def test_load_mapping_no_bulk_merges(knut, falkordb, tmp_path):
    """--no-bulk reaches the sync engine: a new graph gets MERGE, not GRAPH.BULK."""
    lake = _lake_copy(tmp_path)
    r = subprocess.run([str(knut), "load", "--mapping", str(lake / "sync.yml"), "--no-bulk",
                        "--falkordb", url(falkordb), "--graph", "lake"],
                       capture_output=True, text=True, env={**os.environ, "KNUT_LOG": "info"})
    assert r.returncode == 0, r.stderr
    assert "merge" in r.stderr and "bulk" not in r.stderr, r.stderr
    # the control: without --no-bulk the new graph is bulk-loaded
    b = subprocess.run([str(knut), "load", "--mapping", str(lake / "sync.yml"),
                        "--falkordb", url(falkordb), "--graph", "lake2"],
                       capture_output=True, text=True, env={**os.environ, "KNUT_LOG": "info"})
    assert b.returncode == 0 and "bulk" in b.stderr, b.stderr
    with falkordb.client() as c:
        assert c.execute_command("GRAPH.QUERY", "lake",
                                 "MATCH (n:Person) RETURN count(n)")[1][0][0] == 10


def test_load_mapping_progress_json_lines_and_bar(knut, tmp_path):
    lake = _lake_copy(tmp_path)
    r = subprocess.run([str(knut), "load", "--mapping", str(lake / "sync.yml"),
                        "--db", str(tmp_path / "g.duckdb")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    # the load's progress records (the store may warn too: employment runs
    # after people_changes, whose deleted Ken leaves one edge without its
    # endpoint; docs/sync.md, the ordering contract)
    logs = [x for x in jsonl(r.stderr) if x.get("target") == "load"]
    assert [x["msg"] for x in logs][-1] == "done" and logs[0]["msg"] == "round loaded"
    rounds = [x for x in logs if x["msg"] == "round loaded"]
    assert rounds[-1]["files"] == rounds[-1]["files_total"] == 4
    assert rounds[-1]["rows"] == 30 and sum(x["round_rows"] for x in rounds) == 30
    assert logs[-1]["files"] == 4 and logs[-1]["method"] == "embedded"
    # On a terminal: the bar, ending at 100 % of the files.
    import pty
    pid, fd = pty.fork()
    if pid == 0:
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
        os.execv(str(knut), [str(knut), "load", "--mapping", str(lake / "sync.yml"),
                             "--db", str(tmp_path / "g2.duckdb")])
    out = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, out
    assert b"[##############################] 100% 4/4 files 30 rows" in out
    # A second load into the same store finds nothing new: no bar, no round lines.
    r = subprocess.run([str(knut), "load", "--mapping", str(lake / "sync.yml"),
                        "--db", str(tmp_path / "g.duckdb")], capture_output=True, text=True)
    assert r.returncode == 0 and [x["msg"] for x in jsonl(r.stderr)] == ["done"]


LABELED_CONFIG = """\
graph: social
output: {out}
vertex_chunk_size: 4
edge_chunk_size: 8
vertices:
  - type: person
    table: {people}
    key: id
    labels: [admin, staff]
    label_column: roles
    properties: [id, name]
  - type: doc
    query: "SELECT i AS n, i % 2 = 0 AS even FROM range(5) t(i)"
    key: n
    labels: [{{name: Even, column: even}}]
    properties: [n]
edges:
  - type: knows
    src: {{type: person, key: a}}
    dst: {{type: person, key: b}}
    query: "SELECT 1000 + i AS a, 1000 + (i * 3 + 1) % 10 AS b FROM range(10) t(i)"
"""


def person_labels(i):
    return {"person"} | ({"admin"} if i % 3 == 0 else set()) | \
        ({"staff"} if i % 3 in (0, 1) else set())


@pytest.fixture(scope="module")
def labeled(tmp_path_factory, knut):
    """A GraphAr graph with per-vertex label columns (V/labels/chunk<c>),
    written by `knut gar import` (the reference's Python builders cannot
    write labels) and accepted by the reference's info loader."""
    import garref
    d = tmp_path_factory.mktemp("labeled")
    people = d / "people.parquet"
    r = subprocess.run([str(knut), "query",
                        f"COPY (SELECT 1000 + i AS id, 'name' || i AS name, CASE WHEN i % 3 = 0 "
                        f"THEN 'admin;staff' WHEN i % 3 = 1 THEN 'staff' ELSE '' END AS roles "
                        f"FROM range(10) t(i)) TO '{people}' (FORMAT parquet)"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    cfg = d / "social.yml"
    cfg.write_text(LABELED_CONFIG.format(out=d / "out", people=people))
    r = subprocess.run([str(knut), "gar", "import", "--config", str(cfg)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert (d / "out" / "vertex" / "person" / "labels" / "chunk0").is_file()
    assert garref.info(d / "out" / "social.graph.yml")["validated"]
    return d / "out"


def test_load_graphar_labels_falkordb(falkordb, run_knut, labeled):
    want = {("person", 1000 + i): person_labels(i) for i in range(10)}
    want.update({("doc", i): {"doc"} | ({"Even"} if i % 2 == 0 else set()) for i in range(5)})
    # GRAPH.BULK on a new graph, UNWIND with --no-bulk, then UNWIND again
    # over the loaded graph: the same labels every time.
    for graph, extra in (("lb", []), ("lu", ["--no-bulk"]), ("lb", [])):
        r = run_knut("load", "--graphar", labeled, "--falkordb", url(falkordb), "--graph", graph,
                     "-q", *extra)
        assert r.returncode == 0, r.stderr
        rows = falkordb.query(graph, "MATCH (n) RETURN labels(n)[0], coalesce(n.id, n.n), "
                                     "labels(n)")[1]
        # the verbose reply prints a list as one "[a, b]" string
        got = {(t.decode(), k): set(ls.decode().strip("[]").split(", ")) for t, k, ls in rows}
        assert got == want, graph
        knows = falkordb.query(graph, "MATCH (:admin)-[e:knows]->() RETURN count(e)")[1][0][0]
        assert knows == 4


def test_load_graphar_labels_store(tmp_path, run_knut, labeled):
    db = tmp_path / "g.duckdb"
    for _ in range(2):  # a second load changes nothing
        r = run_knut("load", "--graphar", labeled, "--db", db, "-q")
        assert r.returncode == 0, r.stderr
        r = run_knut("query", "--db", db, "-f", "json",
                     "SELECT p.id, list_sort(list(l.label)) AS labels FROM v_person p "
                     "JOIN _knut_vertex_labels_of l ON l.vid = p._knut_vid GROUP BY p.id "
                     "ORDER BY p.id")
        assert r.returncode == 0, r.stderr
        got = {x["id"]: set(x["labels"]) for x in jsonl(r.stdout)}
        assert got == {1000 + i: person_labels(i) for i in range(10)}
        r = run_knut("query", "--db", db, "-f", "csv", "SELECT count(*) FROM "
                     "_knut_vertex_labels_of WHERE label = 'Even'")
        assert r.stdout.splitlines()[1] == "3"
