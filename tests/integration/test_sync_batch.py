"""A table arriving in several files in one round (docs/sync.md, "Several
files in one round"): the files' staged rows are read through a view, not
copied; where every key occurs once the sets are plain scans, and where a
key repeats (within a file or across files) the last row of the key wins,
exactly as before. Each way the sync tells the two apart is covered: one
integer key over a narrow span (a bitmap), one over a wide span and a text
key (a grouping), and two keys (an edge). On the embedded store, into a
new FalkorDB graph (GRAPH.BULK) and into FalkorDB with --no-bulk (MERGE).
"""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

CONFIG = """\
tables:
  things:
    path: drops/things/
    vertices:
      - labels: [Thing]
        keys: [k]
  links:
    path: drops/links/
    edges:
      - type: LINK
        from: {label: Thing, keys: {k: a}}
        to: {label: Thing, keys: {k: b}}
"""

KEYS = {
    "narrow": lambda i: i,                   # a bitmap over the span
    "wide": lambda i: i * (1 << 40),         # span too wide for a bitmap: grouping
    "text": lambda i: f"key-{i}",            # not an integer: grouping
}


def land(root, kind, repeat):
    """3 files of things 0..8 (and links i -> i+1); with repeat, key 4 is in
    files 0 and 2 and key 7 twice in file 2 (last row: v = 'last'), and
    the link 1 -> 2 in files 0 and 1."""
    key = KEYS[kind]
    for t in ("things", "links"):
        (root / "drops" / t).mkdir(parents=True, exist_ok=True)
    parts = [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    vals = [[f"v{i}" for i in p] for p in parts]
    if repeat:
        parts[0].append(4)
        vals[0].append("early")
        parts[2] += [4, 7, 7]
        vals[2] += ["last", "early", "last"]
    for n, (p, v) in enumerate(zip(parts, vals)):
        pq.write_table(pa.table({"k": [key(i) for i in p], "v": v}),
                       root / "drops" / "things" / f"t-{n}.parquet")
    links = [[(0, 1), (1, 2)], [(2, 3), (3, 4)], [(4, 5), (5, 6), (6, 7), (7, 8)]]
    tags = [["x"] * len(x) for x in links]
    if repeat:
        links[1].append((1, 2))
        tags[1].append("last")
    for n, (ls, tg) in enumerate(zip(links, tags)):
        pq.write_table(pa.table({"a": [key(a) for a, _ in ls], "b": [key(b) for _, b in ls],
                                 "tag": tg}),
                       root / "drops" / "links" / f"l-{n}.parquet")


def expected(kind, repeat):
    key = KEYS[kind]
    things = {key(i): f"v{i}" for i in range(9)}
    links = {(key(i), key(i + 1)): "x" for i in range(8)}
    if repeat:
        things[key(4)] = "last"
        things[key(7)] = "last"
        links[(key(1), key(2))] = "last"
    return sorted(things.items()), sorted(links.items())


def from_store(run_knut, db):
    def q(sql):
        r = run_knut("query", "--db", db, "-f", "json", sql)
        assert r.returncode == 0, r.stderr
        return [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
    things = sorted((r["k"], r["v"]) for r in q("SELECT k, v FROM v_Thing"))
    links = q("SELECT s.k AS a, d.k AS b, e.tag FROM e_LINK e "
              "JOIN v_Thing s ON s._knut_vid = e._knut_src "
              "JOIN v_Thing d ON d._knut_vid = e._knut_dst")
    return things, sorted(((r["a"], r["b"]), r["tag"]) for r in links)


def from_falkordb(falkordb, graph):
    dec = lambda x: x.decode() if isinstance(x, bytes) else x  # noqa: E731
    things = falkordb.query(graph, "MATCH (n:Thing) RETURN n.k, n.v")[1]
    links = falkordb.query(graph, "MATCH (a)-[e:LINK]->(b) RETURN a.k, b.k, e.tag")[1]
    return (sorted((dec(k), dec(v)) for k, v in things),
            sorted(((dec(a), dec(b)), dec(t)) for a, b, t in links))


@pytest.mark.parametrize("repeat", [False, True], ids=["unique", "repeated"])
@pytest.mark.parametrize("kind", sorted(KEYS))
@pytest.mark.parametrize("sink", ["store", "bulk", "merge"])
def test_several_files_last_row_of_a_key_wins(run_knut, tmp_path, request, sink, kind, repeat):
    (tmp_path / "sync.yml").write_text(CONFIG)
    land(tmp_path, kind, repeat)
    args = ["sync", "--once", "--config", tmp_path / "sync.yml"]
    if sink == "store":
        args += ["--store", tmp_path / "s.duckdb"]
    else:
        falkordb = request.getfixturevalue("falkordb")
        args += ["--falkordb", f"redis://{falkordb.host}:{falkordb.port}", "--graph", "g",
                 "--ledger", tmp_path / "ledger.json"] + (["--no-bulk"] if sink == "merge" else [])
    r = run_knut(*args, cwd=tmp_path, env={"KNUT_LOG_FORMAT": "json", "KNUT_LOG": "info"})
    assert r.returncode == 0, r.stderr
    recs = [json.loads(x) for x in r.stderr.splitlines() if x.startswith("{")]
    synced = {x["table"]: x for x in recs if x.get("msg") == "table synced"}
    assert synced["things"]["files"] == 3 and synced["links"]["files"] == 3, synced
    if sink != "store":
        want = "bulk" if sink == "bulk" else "merge"
        assert {x["path"] for x in synced.values()} == {want}, synced
    got = (from_store(run_knut, tmp_path / "s.duckdb") if sink == "store"
           else from_falkordb(falkordb, "g"))
    assert got == expected(kind, repeat)
    # the staging engine kept nothing of the batch around for the next round
    r2 = run_knut(*args, cwd=tmp_path)
    assert r2.returncode == 0, r2.stderr
