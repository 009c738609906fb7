"""Edge delete sets through the FalkorDB sink, against a real FalkorDB.

Mutations go through tests/tools/knut_sink_tool (helpers shared with
test_graph_falkor_sink.py); the graph is read back with redis-py. Covered:
edges found by composite endpoint keys, a missing edge (or endpoint, or
type) deleting nothing, an upsert and a delete of one edge in one mutation
ending deleted, parallel edges of other types and every vertex left alone,
edge keys, null keys refused naming the row, hostile values staying values.
"""

from __future__ import annotations

import pyarrow as pa

from test_graph_falkor_sink import HOSTILE, apply, count, rows, write

CITY = {"label": "City", "keys": ["country", "name"], "columns": ["country", "city"]}
PERSON = {"label": "Person", "keys": ["id"], "columns": ["pid"]}


def seed_sets(tmp_path):
    people = pa.table({"id": pa.array([1, 2], pa.int64()), "nm": ["ann", "bob"]})
    # fr/paris and us/paris differ in the first key only; the third city's
    # name would end the query text if it were ever spliced into it
    cities = pa.table({"country": ["fr", "us", "fr"], "name": ["paris", "paris", HOSTILE]})
    works = pa.table({"pid": pa.array([1, 1, 2, 2], pa.int64()),
                      "country": ["fr", "us", "fr", "fr"],
                      "city": ["paris", "paris", HOSTILE, "paris"]})
    lives = pa.table({"pid": pa.array([1], pa.int64()), "country": ["fr"], "city": ["paris"]})
    return [
        {"kind": "vertex", "file": write(tmp_path / "p.arrows", people), "labels": ["Person"],
         "keys": ["id"]},
        {"kind": "vertex", "file": write(tmp_path / "c.arrows", cities), "labels": ["City"],
         "keys": ["country", "name"]},
        edge("edge", tmp_path / "w.arrows", works, "WORKS_AT"),
        edge("edge", tmp_path / "l.arrows", lives, "LIVES_IN"),
    ]


def edge(kind, path, table, type_, keys=()):
    return {"kind": kind, "file": write(path, table), "type": type_, "src": PERSON, "dst": CITY,
            "keys": list(keys), **({"props": []} if kind == "edge" else {})}


def edges(peer, type_="WORKS_AT"):
    got = rows(peer, "g", f"MATCH (a:Person)-[e:{type_}]->(b:City) "
               "RETURN a.id, b.country, b.name ORDER BY a.id, b.country, b.name")
    return [(r[0], r[1].decode(), r[2].decode()) for r in got]


SEEDED = [(1, "fr", "paris"), (1, "us", "paris"), (2, "fr", HOSTILE), (2, "fr", "paris")]


def test_composite_keys_missing_edges_and_parallel_types(falkordb, tmp_path):
    apply(tmp_path, falkordb, "g", seed_sets(tmp_path))
    assert edges(falkordb) == SEEDED
    dl = pa.table({"pid": pa.array([1, 2, 2, 1, 9, 1], pa.int64()),
                   "country": ["us", "fr", "fr", "fr", "fr", "xx"],
                   "city": ["paris", HOSTILE, HOSTILE, HOSTILE, "paris", "yy"]})
    # rows 0-1 name edges (row 2 repeats row 1); 1->fr/HOSTILE is no edge,
    # person 9 and city xx/yy do not exist; NEVER is a type nobody wrote
    _, st = apply(tmp_path, falkordb, "g", [
        edge("edge_delete", tmp_path / "d.arrows", dl, "WORKS_AT"),
        edge("edge_delete", tmp_path / "n.arrows", dl, "NEVER"),
    ])
    assert st["rows"] == 12
    assert st["edges_deleted"] == 2
    assert st["vertices_deleted"] == 0
    assert st["server"]["relationships_deleted"] == 2
    assert st["server"]["nodes_deleted"] == 0
    assert edges(falkordb) == [(1, "fr", "paris"), (2, "fr", "paris")]
    # the parallel LIVES_IN edge (same pair as a WORKS_AT edge) and every vertex stay
    assert edges(falkordb, "LIVES_IN") == [(1, "fr", "paris")]
    assert count(falkordb, "g", "MATCH (n:Person) RETURN count(n)") == 2
    assert count(falkordb, "g", "MATCH (n:City) RETURN count(n)") == 3
    # deleting the same rows again is harmless
    _, st = apply(tmp_path, falkordb, "g",
                  [edge("edge_delete", tmp_path / "d2.arrows", dl, "WORKS_AT")])
    assert st["edges_deleted"] == 0
    assert edges(falkordb) == [(1, "fr", "paris"), (2, "fr", "paris")]


def test_upsert_and_delete_in_one_mutation_ends_deleted(falkordb, tmp_path):
    apply(tmp_path, falkordb, "g", seed_sets(tmp_path))
    one = pa.table({"pid": pa.array([2], pa.int64()), "country": ["us"], "city": ["paris"]})
    # the delete set comes first in the spec: sinks order by kind
    _, st = apply(tmp_path, falkordb, "g", [
        edge("edge_delete", tmp_path / "d.arrows", one, "WORKS_AT"),
        edge("edge", tmp_path / "u.arrows", one, "WORKS_AT"),
    ])
    assert st["edges_written"] == 1
    assert st["edges_deleted"] == 1
    assert st["server"]["relationships_created"] == 1
    assert st["server"]["relationships_deleted"] == 1
    assert edges(falkordb) == SEEDED


def test_edge_keys_and_null_keys(falkordb, tmp_path):
    people, cities = seed_sets(tmp_path)[:2]
    holds = pa.table({"pid": pa.array([1, 1, 2], pa.int64()), "country": ["fr"] * 3,
                      "city": ["paris"] * 3, "role": ["boss", "dev", "dev"]})
    apply(tmp_path, falkordb, "g",
          [people, cities, edge("edge", tmp_path / "h.arrows", holds, "HOLDS", ["role"])])
    roles = "MATCH (a:Person)-[e:HOLDS]->(:City) RETURN a.id, e.role ORDER BY a.id, e.role"
    assert rows(falkordb, "g", roles) == [[1, b"boss"], [1, b"dev"], [2, b"dev"]]
    one = pa.table({"pid": pa.array([1], pa.int64()), "country": ["fr"], "city": ["paris"],
                    "role": ["dev"]})
    # with the edge key: only that edge of the pair
    _, st = apply(tmp_path, falkordb, "g",
                  [edge("edge_delete", tmp_path / "k.arrows", one, "HOLDS", ["role"])])
    assert st["edges_deleted"] == 1
    assert rows(falkordb, "g", roles) == [[1, b"boss"], [2, b"dev"]]
    # a null endpoint key fails the apply naming the set, row and column
    bad = pa.table({"pid": pa.array([2, None], pa.int64()), "country": ["fr", "fr"],
                    "city": ["paris", "paris"]})
    r, _ = apply(tmp_path, falkordb, "g",
                 [edge("edge_delete", tmp_path / "b.arrows", bad, "HOLDS")], check=False)
    assert r.returncode == 1
    assert "set 'HOLDS': row 1, column 'pid': source key is null" in r.stderr
    # nothing of that batch was sent
    assert rows(falkordb, "g", roles) == [[1, b"boss"], [2, b"dev"]]
    # without edge keys: every HOLDS edge of the pair
    _, st = apply(tmp_path, falkordb, "g",
                  [edge("edge_delete", tmp_path / "a.arrows", one, "HOLDS")])
    assert st["edges_deleted"] == 1
    assert rows(falkordb, "g", roles) == [[2, b"dev"]]
