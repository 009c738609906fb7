"""`knut sync` with `mode: full`: a table's files are its whole snapshot.

Two full tables (people with a foreign-key edge, knows with an edge step)
are synced into the embedded store and into a real FalkorDB: the first
snapshot, then a second one with a row removed, one changed and one added,
and edges whose endpoints both stay but that the snapshot no longer has.
The final graph is compared exactly. Also: a removed file deletes its rows
and is forgotten by the ledger (a re-added copy syncs again), a rerun with
no change is idle, an emptied folder is refused while a header-only file
empties the table, a failed file blocks the whole snapshot, and a second
table writing a full table's label is a config error naming both.
"""

from __future__ import annotations

import json
import os

import pytest

CONFIG = """\
store: graph.duckdb
tables:
  people:
    path: people/
    format: csv
    mode: full
    vertices:
      - labels: [Person]
        keys: [id]
        properties: [name]
    fk_edges:
      - type: MANAGED_BY
        column: manager
        to: {label: Person, key: id}
  knows:
    path: knows/
    format: csv
    mode: full
    edges:
      - type: KNOWS
        from: {label: Person, keys: {id: a}}
        to: {label: Person, keys: {id: b}}
        properties: [since]
"""

P1 = "id,name,manager\n1,Ann,\n2,Bob,1\n3,Cid,1\n"
P2 = "id,name,manager\n4,Dan,2\n"
K1 = "a,b,since\n1,3,2020\n3,4,2021\n4,1,2022\n"
# second snapshot: Bob removed, Cid renamed and managed by Dan, Eve added;
# 1->3 and 4->1 gone (their endpoints stay), 3->4 changed, 1->4 added
P1_2 = "id,name,manager\n1,Ann,\n3,Cyd,4\n5,Eve,3\n"
K1_2 = "a,b,since\n3,4,2023\n1,4,2024\n"

FINAL_PEOPLE = [(1, "Ann"), (3, "Cyd"), (4, "Dan"), (5, "Eve")]
FINAL_MANAGED = [(3, 4), (5, 3)]  # 4->2 went with Bob, 3->1 with the snapshot
FINAL_KNOWS = [(1, 4, 2024), (3, 4, 2023)]


@pytest.fixture
def lake(tmp_path):
    d = tmp_path / "lake"
    (d / "people").mkdir(parents=True)
    (d / "knows").mkdir()
    (d / "sync.yml").write_text(CONFIG)
    return d


def put(path, text):
    # a new mtime even within the file system's timestamp granularity
    st = path.stat() if path.exists() else None
    path.write_text(text)
    if st is not None:
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def logs(proc):
    return [json.loads(x) for x in proc.stderr.splitlines() if x.strip().startswith("{")]


def table_log(proc, table):
    recs = [r for r in logs(proc) if r.get("table") == table and r["msg"].startswith("table")]
    assert len(recs) == 1, proc.stderr
    return recs[0]


def round_msg(proc):
    return [r for r in logs(proc) if r["msg"].startswith("round")][-1]["msg"]


def sync(run_knut, lake, *args):
    return run_knut("sync", "--once", "--config", lake / "sync.yml", *args,
                    env={"KNUT_LOG_FORMAT": "json"})


def status(run_knut, lake, *args):
    r = run_knut("sync", "status", "--config", lake / "sync.yml", "--json", *args)
    doc = json.loads(r.stdout)
    assert r.returncode == (1 if doc["failed"] else 0), r.stderr  # 1: a file failed
    return doc["files"]


class Store:
    """Reads the embedded store back with `knut query`."""

    def __init__(self, run_knut, lake):
        self.run_knut, self.lake = run_knut, lake

    def q(self, sql):
        r = self.run_knut("query", "--db", self.lake / "graph.duckdb", "--format", "json", sql)
        assert r.returncode == 0, r.stderr
        return [json.loads(x) for x in r.stdout.splitlines() if x.strip()]

    def people(self):
        return [(x["id"], x["name"]) for x in self.q("SELECT id, name FROM v_Person ORDER BY id")]

    def edges(self, etype, prop=None):
        extra = f", e.{prop} AS p" if prop else ""
        rows = self.q(f"SELECT a.id AS s, b.id AS d{extra} FROM e_{etype} e "
                      "JOIN v_Person a ON a._knut_vid = e._knut_src "
                      "JOIN v_Person b ON b._knut_vid = e._knut_dst ORDER BY s, d")
        return [(x["s"], x["d"], x["p"]) if prop else (x["s"], x["d"]) for x in rows]


class Falkor:
    """Reads the FalkorDB graph back with redis-py."""

    def __init__(self, falkordb, graph):
        self.f, self.graph = falkordb, graph

    def rows(self, cypher):
        out = self.f.query(self.graph, cypher)[1]
        return [tuple(v.decode() if isinstance(v, bytes) else v for v in r) for r in out]

    def people(self):
        return self.rows("MATCH (p:Person) RETURN p.id, p.name ORDER BY p.id")

    def edges(self, etype, prop=None):
        extra = f", e.{prop}" if prop else ""
        return self.rows(f"MATCH (a:Person)-[e:{etype}]->(b:Person) RETURN a.id, b.id{extra} "
                         "ORDER BY a.id, b.id")


def two_snapshots(run_knut, lake, g, args=()):
    put(lake / "people" / "p1.csv", P1)
    put(lake / "people" / "p2.csv", P2)
    put(lake / "knows" / "k1.csv", K1)
    r = sync(run_knut, lake, *args)
    assert r.returncode == 0, r.stderr
    assert g.people() == [(1, "Ann"), (2, "Bob"), (3, "Cid"), (4, "Dan")]
    assert g.edges("MANAGED_BY") == [(2, 1), (3, 1), (4, 2)]
    assert g.edges("KNOWS", "since") == [(1, 3, 2020), (3, 4, 2021), (4, 1, 2022)]

    put(lake / "people" / "p1.csv", P1_2)
    put(lake / "knows" / "k1.csv", K1_2)
    r = sync(run_knut, lake, *args)
    assert r.returncode == 0, r.stderr
    ppl = table_log(r, "people")
    assert (ppl["files"], ppl["rows"], ppl["deletes"]) == (2, 4, 1)  # the whole snapshot
    assert g.people() == FINAL_PEOPLE
    assert g.edges("MANAGED_BY") == FINAL_MANAGED
    assert g.edges("KNOWS", "since") == FINAL_KNOWS

    r = sync(run_knut, lake, *args)  # nothing changed: idle, graph as it was
    assert r.returncode == 0 and round_msg(r) == "round idle", r.stderr
    assert table_log(r, "people")["files"] == 0 and table_log(r, "knows")["files"] == 0
    assert g.people() == FINAL_PEOPLE

    os.utime(lake / "people" / "p2.csv")  # touched, same bytes: still idle
    r = sync(run_knut, lake, *args)
    assert r.returncode == 0 and round_msg(r) == "round idle", r.stderr


def removed_file(run_knut, lake, g, args=(), status_args=()):
    saved = (lake / "people" / "p2.csv").read_text()
    (lake / "people" / "p2.csv").unlink()
    r = sync(run_knut, lake, *args)
    assert r.returncode == 0, r.stderr
    assert g.people() == [(1, "Ann"), (3, "Cyd"), (5, "Eve")]  # Dan went with his file
    assert g.edges("MANAGED_BY") == [(5, 3)]
    assert g.edges("KNOWS", "since") == []  # both ended at Dan
    st = status(run_knut, lake, *status_args)
    assert sorted((x["table"], os.path.basename(x["path"]), x["state"]) for x in st) == [
        ("knows", "k1.csv", "done"), ("people", "p1.csv", "done")]
    # re-added with its old bytes: the ledger forgot it, so it syncs again
    put(lake / "people" / "p2.csv", saved)
    assert any(x["state"] == "pending" for x in status(run_knut, lake, *status_args))
    r = sync(run_knut, lake, *args)
    assert r.returncode == 0 and table_log(r, "people")["files"] == 2, r.stderr
    assert g.people() == FINAL_PEOPLE


def test_full_embedded_store(run_knut, lake):
    g = Store(run_knut, lake)
    two_snapshots(run_knut, lake, g)
    led = g.q('SELECT "table", status, round FROM _knut_sync_ledger ORDER BY "table", path')
    assert [(x["table"], x["status"]) for x in led] == [
        ("knows", "done"), ("people", "done"), ("people", "done")]
    removed_file(run_knut, lake, g)


def test_full_falkordb(run_knut, lake, falkordb, tmp_path):
    url = f"redis://{falkordb.host}:{falkordb.port}"
    ledger = tmp_path / "ledger.json"
    args = ("--falkordb", url, "--graph", "full", "--ledger", ledger)
    g = Falkor(falkordb, "full")
    two_snapshots(run_knut, lake, g, args)
    removed_file(run_knut, lake, g, args, ("--falkordb", url, "--ledger", ledger))


def test_full_falkordb_pages_under_resultset_size(run_knut, lake, falkordb, tmp_path):
    """Keys are listed in pages after the last id: a RESULTSET_SIZE smaller
    than the graph (and than a page) still finds every stale vertex."""
    url = f"redis://{falkordb.host}:{falkordb.port}"
    args = ("--falkordb", url, "--graph", "pages", "--ledger", tmp_path / "l.json")
    g = Falkor(falkordb, "pages")
    put(lake / "people" / "p1.csv",
        "id,name,manager\n" + "".join(f"{i},n{i},\n" for i in range(1, 301)))
    assert sync(run_knut, lake, *args).returncode == 0
    with falkordb.client() as c:
        c.execute_command("GRAPH.CONFIG", "SET", "RESULTSET_SIZE", 70)
    try:
        # keep every third person
        put(lake / "people" / "p1.csv",
            "id,name,manager\n" + "".join(f"{i},n{i},\n" for i in range(3, 301, 3)))
        r = sync(run_knut, lake, *args)
        assert r.returncode == 0, r.stderr
        assert table_log(r, "people")["deletes"] == 200
    finally:
        with falkordb.client() as c:
            c.execute_command("GRAPH.CONFIG", "SET", "RESULTSET_SIZE", -1)
    ids = g.rows("MATCH (p:Person) RETURN p.id ORDER BY p.id")
    assert [x[0] for x in ids] == list(range(3, 301, 3))


def test_empty_snapshot_refused_unless_an_empty_file(run_knut, lake):
    g = Store(run_knut, lake)
    put(lake / "people" / "p1.csv", P1)
    put(lake / "knows" / "k1.csv", K1)
    assert sync(run_knut, lake).returncode == 0
    (lake / "people" / "p1.csv").unlink()
    r = sync(run_knut, lake)
    assert r.returncode == 1
    err = table_log(r, "people")["error"]
    assert "every file is gone" in err and "refusing" in err
    assert len(g.people()) == 3  # nothing deleted
    # a file with the header only: the table is meant to be empty
    put(lake / "people" / "none.csv", "id,name,manager\n")
    r = sync(run_knut, lake)
    assert r.returncode == 0, r.stderr
    assert table_log(r, "people")["deletes"] == 3
    assert g.people() == [] and g.edges("MANAGED_BY") == []
    assert [os.path.basename(x["path"]) for x in status(run_knut, lake)
            if x["table"] == "people"] == ["none.csv"]


def test_failed_file_blocks_the_snapshot(run_knut, lake):
    g = Store(run_knut, lake)
    put(lake / "people" / "p1.csv", P1)
    put(lake / "people" / "p2.csv", P2)
    assert sync(run_knut, lake).returncode == 0
    put(lake / "people" / "p1.csv", P1_2)
    put(lake / "people" / "p2.csv", "id,name,manager\n,NoKey,\n")  # null key: fails
    r = sync(run_knut, lake)
    assert r.returncode == 1
    assert table_log(r, "people")["failed_files"] == 1
    assert g.people() == [(1, "Ann"), (2, "Bob"), (3, "Cid"), (4, "Dan")]  # nothing applied
    r = sync(run_knut, lake)  # still incomplete: a clear error, nothing applied
    assert r.returncode == 1 and "snapshot incomplete" in table_log(r, "people")["error"]
    put(lake / "people" / "p2.csv", P2)  # fixed
    r = sync(run_knut, lake)
    assert r.returncode == 0, r.stderr
    assert g.people() == [(1, "Ann"), (3, "Cyd"), (4, "Dan"), (5, "Eve")]


def test_config_full_table_owns_its_labels_and_types(run_knut, lake):
    cfg = lake / "sync.yml"
    cfg.write_text(CONFIG + """\
  more_people:
    path: more/
    vertices:
      - labels: [Human, Person]
        keys: [id]
""")
    r = run_knut("sync", "--once", "--config", cfg)
    assert r.returncode == 2
    assert (f"{cfg}:27:9: table 'more_people': label 'Person' belongs to full table 'people' "
            f"({cfg}:8:9)") in r.stderr
    cfg.write_text(CONFIG + """\
  friends:
    path: friends/
    edges:
      - type: KNOWS
        from: {label: Person, keys: {id: a}}
        to: {label: Person, keys: {id: b}}
""")
    r = run_knut("sync", "--once", "--config", cfg)
    assert r.returncode == 2
    assert "table 'friends': edge type 'KNOWS' belongs to full table 'knows'" in r.stderr
    assert f"{cfg}:27:9" in r.stderr and f"{cfg}:20:9" in r.stderr


def test_key_types_that_differ_still_compare(run_knut, lake):
    """A foreign-key column left empty in every row reads as text (CSV
    inference): the stored integer keys still compare, so the old edges are
    found absent and deleted while every vertex stays."""
    g = Store(run_knut, lake)
    put(lake / "people" / "p1.csv", P1)
    assert sync(run_knut, lake).returncode == 0
    assert g.edges("MANAGED_BY") == [(2, 1), (3, 1)]
    put(lake / "people" / "p1.csv", "id,name,manager\n1,Ann,\n2,Bob,\n3,Cid,\n")
    r = sync(run_knut, lake)
    assert r.returncode == 0, r.stderr
    assert table_log(r, "people")["deletes"] == 0
    assert g.people() == [(1, "Ann"), (2, "Bob"), (3, "Cid")]
    assert g.edges("MANAGED_BY") == []
