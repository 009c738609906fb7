"""`knut sync`: the ordering contract (docs/sync.md, "The ordering contract").

Each test reproduces one ordering hole of the sync before it was closed
(each failed on the code before the change):

- edges wait for the tables that write their endpoint labels, whatever the
  config order (both sinks), and a table skipped because another instance
  holds its lease holds back the tables whose edges need it (shared Valkey
  ledger, FalkorDB);
- a cdc table's files are one changelog: a failed file holds back the later
  ones until it is fixed or skipped (`knut sync retry --skip`), and a file
  that changes behind an applied one is refused, not replayed;
- within a round each cdc key follows its last event (file, then row, or
  `sequence_by`), in one file or across files (both sinks, vertices and
  edges);
- a config fix retries what the old config failed, and `knut sync retry`
  re-queues failed files on purpose.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

GRAPH = "order"


def records(stderr: str) -> list[dict]:
    return [json.loads(x) for x in stderr.splitlines() if x.strip().startswith("{")]


class Store:
    """The embedded store of a lake: ids of a label, pairs of an edge type."""

    def __init__(self, run_knut, lake: Path):
        self.run_knut, self.lake, self.args = run_knut, lake, ()

    def q(self, sql):
        r = self.run_knut("query", "--db", self.lake / "graph.duckdb", "--format", "json", sql)
        assert r.returncode == 0, r.stderr
        return [json.loads(x) for x in r.stdout.splitlines() if x.strip()]

    def ids(self, label):
        try:
            return sorted(x["id"] for x in self.q(f"SELECT id FROM v_{label}"))
        except AssertionError:  # the table does not exist yet
            return []

    def edges(self, type_):
        try:
            rows = self.q(f"SELECT s.id AS a, d.id AS b FROM e_{type_} e "
                          "JOIN v_Person s ON s._knut_vid = e._knut_src "
                          "JOIN v_Company d ON d._knut_vid = e._knut_dst ORDER BY ALL")
        except AssertionError:
            return []
        return [(x["a"], x["b"]) for x in rows]


class Falkor:
    def __init__(self, falkordb, tmp: Path):
        self.f = falkordb
        self.args = ("--falkordb", f"redis://{falkordb.host}:{falkordb.port}", "--graph", GRAPH,
                     "--ledger", str(tmp / "ledger.json"))

    def ids(self, label):
        return sorted(r[0] for r in self.f.query(GRAPH, f"MATCH (n:{label}) RETURN n.id")[1])

    def edges(self, type_):
        rows = self.f.query(GRAPH, f"MATCH (a:Person)-[:{type_}]->(b:Company) "
                            "RETURN a.id, b.id ORDER BY a.id, b.id")[1]
        return [tuple(r) for r in rows]


@pytest.fixture(params=["store", "falkordb"])
def sink(request, run_knut, tmp_path):
    lake = tmp_path / "lake"
    lake.mkdir()
    if request.param == "store":
        return lake, Store(run_knut, lake)
    return lake, Falkor(request.getfixturevalue("falkordb"), tmp_path)


def sync(run_knut, lake, *args, cfg="sync.yml", ok=True):
    r = run_knut("sync", "--once", "--config", lake / cfg, *args,
                 env={"KNUT_LOG_FORMAT": "json"})
    if ok:
        assert r.returncode == 0, r.stderr
    return r


def status(run_knut, lake, *args, cfg="sync.yml"):
    r = run_knut("sync", "status", "--config", lake / cfg, "--json", *args)
    doc = json.loads(r.stdout)
    assert r.returncode == (1 if doc["failed"] else 0), r.stderr  # 1: a file failed
    return {Path(x["path"]).name: x for x in doc["files"]}


# ---- the table order: edges after the tables of their endpoint labels ----

# config pieces: the vertex tables and the WORKS_AT edge step
PEOPLE = "  people:\n    path: people.csv\n    vertices: [{labels: [Person], keys: [id]}]\n"
COMPANIES = "  companies:\n    path: companies.csv\n    vertices: [{labels: [Company], keys: [id]}]\n"
WORKS_AT = ("    edges: [{type: WORKS_AT, from: {label: Person, keys: {id: person_id}},\n"
            "             to: {label: Company, keys: {id: company_id}}}]\n")
EMPLOYMENT = "  employment:\n    path: employment.csv\n" + WORKS_AT
# employment listed first, but it needs Person and Company
EDGES_FIRST = "store: graph.duckdb\ntables:\n" + EMPLOYMENT + PEOPLE + COMPANIES


def test_edges_wait_for_their_endpoint_tables(run_knut, sink):
    lake, g = sink
    (lake / "sync.yml").write_text(EDGES_FIRST)
    (lake / "people.csv").write_text("id\n1\n2\n")
    (lake / "companies.csv").write_text("id\n10\n")
    (lake / "employment.csv").write_text("person_id,company_id\n1,10\n2,10\n")
    r = sync(run_knut, lake, *g.args)
    order = [x["table"] for x in records(r.stderr) if x["msg"] == "table synced"]
    assert order == ["people", "companies", "employment"], r.stderr
    assert g.edges("WORKS_AT") == [(1, 10), (2, 10)]


def test_edge_cycle_falls_back_to_config_order(run_knut, tmp_path):
    lake = tmp_path / "lake"
    lake.mkdir()
    (lake / "sync.yml").write_text("""\
store: graph.duckdb
tables:
  a:
    path: a.csv
    vertices: [{labels: [A], keys: [id]}]
    fk_edges: [{type: TO_B, column: b, to: {label: B, key: id}}]
  b:
    path: b.csv
    vertices: [{labels: [B], keys: [id]}]
    fk_edges: [{type: TO_A, column: a, to: {label: A, key: id}}]
""")
    (lake / "a.csv").write_text("id,b\n1,2\n")
    (lake / "b.csv").write_text("id,a\n2,1\n")
    r = sync(run_knut, lake)
    recs = records(r.stderr)
    assert [x["table"] for x in recs if x["msg"] == "table synced"] == ["a", "b"]
    cyc = [x for x in recs if "cycle" in x["msg"]]
    assert len(cyc) == 1 and "'a', 'b'" in cyc[0]["msg"], r.stderr


SHARED = ("name: order\ntables:\n" + PEOPLE + COMPANIES + EMPLOYMENT
          + "  tags:\n    path: tags.csv\n    vertices: [{labels: [Tag], keys: [id]}]\n")


def test_skipped_table_holds_back_its_dependents(run_knut, valkey, falkordb, tmp_path):
    lake = tmp_path / "lake"
    lake.mkdir()
    (lake / "order.yml").write_text(SHARED)
    (lake / "people.csv").write_text("id\n1\n2\n")
    (lake / "companies.csv").write_text("id\n10\n")
    (lake / "employment.csv").write_text("person_id,company_id\n1,10\n2,10\n")
    (lake / "tags.csv").write_text("id\n7\n")
    url = f"redis://{valkey.host}:{valkey.port}"
    args = ("--falkordb", f"redis://{falkordb.host}:{falkordb.port}", "--graph", GRAPH,
            "--ledger-url", url, "--instance", "a")
    lease = "knut:sync:order:lease:people"
    with valkey.client() as c:  # another instance works on people
        c.set(lease, "b", px=60000)
    r = sync(run_knut, lake, *args, cfg="order.yml")
    recs = records(r.stderr)
    held = [x for x in recs if x["msg"] == "table held back"]
    assert [(x["table"], x["waits_for"]) for x in held] == [("employment", "people")], r.stderr
    assert "another instance holds its lease" in held[0]["reason"]
    st = status(run_knut, lake, "--ledger-url", url, cfg="order.yml")
    # the independent tables went on; employment's file is pending, not done
    assert st["companies.csv"]["state"] == "done" and st["tags.csv"]["state"] == "done"
    assert st["employment.csv"]["state"] == "pending", st
    assert falkordb.query(GRAPH, "MATCH ()-[e:WORKS_AT]->() RETURN count(e)")[1][0][0] == 0
    with valkey.client() as c:
        c.delete(lease)
    sync(run_knut, lake, *args, cfg="order.yml")
    assert Falkor(falkordb, tmp_path).edges("WORKS_AT") == [(1, 10), (2, 10)]
    st = status(run_knut, lake, "--ledger-url", url, cfg="order.yml")
    assert {x["state"] for x in st.values()} == {"done"}, st


# ---- cdc: the files of a changelog in name order ----

CDC = """\
store: graph.duckdb
tables:
  people:
    path: changes/
    format: csv
    mode: cdc
    vertices: [{labels: [Person], keys: [id], properties: [name]}]
"""


def test_cdc_changelog_files_in_order(run_knut, tmp_path):
    lake = tmp_path / "lake"
    (lake / "changes").mkdir(parents=True)
    (lake / "sync.yml").write_text(CDC)
    g = Store(run_knut, lake)
    ch = lake / "changes"
    h = "_change_type,id,name\n"

    def names():
        return {x["id"]: x["name"] for x in g.q("SELECT id, name FROM v_Person")}

    (ch / "0001.csv").write_text(h + "INSERT,1,a\n")
    (ch / "0002.csv").write_text(h + "BOGUS,1,b\n")  # fails
    (ch / "0003.csv").write_text(h + "UPDATE_AFTER,1,c\nINSERT,2,x\n")
    assert sync(run_knut, lake, ok=False).returncode == 1
    st = status(run_knut, lake)
    assert [st[f]["state"] for f in ("0001.csv", "0002.csv", "0003.csv")] == \
        ["done", "failed", "pending"], st
    assert names() == {1: "a"}  # 0003 did not overtake the failed 0002
    (ch / "0002.csv").write_text(h + "UPDATE_AFTER,1,b\n")  # fixed
    sync(run_knut, lake)
    assert names() == {1: "c", 2: "x"}
    # an applied file rewritten behind a later one is refused, not replayed
    (ch / "0001.csv").write_text(h + "INSERT,1,old\n")
    (ch / "0004.csv").write_text(h + "INSERT,3,y\n")
    assert sync(run_knut, lake, ok=False).returncode == 1
    st = status(run_knut, lake)
    assert st["0001.csv"]["state"] == "failed" and "out of order" in st["0001.csv"]["reason"]
    assert st["0004.csv"]["state"] == "pending"  # held back by the failed 0001
    assert names() == {1: "c", 2: "x"}
    r = run_knut("sync", "retry", "--config", lake / "sync.yml", "--skip",
                 "--file", ch / "0001.csv")
    assert r.returncode == 0 and r.stdout.strip() == "skipped 1 failed file", r.stderr
    sync(run_knut, lake)
    assert names() == {1: "c", 2: "x", 3: "y"}
    assert {x["state"] for x in status(run_knut, lake).values()} == {"done"}


# ---- cdc: each key's last event within a round ----

CDC_BOTH = ("store: graph.duckdb\ntables:\n" + COMPANIES
            + "  people:\n    path: people/\n    format: csv\n    mode: cdc\n"
            "    vertices: [{labels: [Person], keys: [id]}]\n"
            "  jobs:\n    path: jobs/\n    format: csv\n    mode: cdc\n" + WORKS_AT)


def test_cdc_last_event_wins(run_knut, sink):
    lake, g = sink
    (lake / "people").mkdir()
    (lake / "jobs").mkdir()
    (lake / "sync.yml").write_text(CDC_BOTH)
    (lake / "companies.csv").write_text("id\n10\n")
    ph, jh = "_change_type,id\n", "_change_type,person_id,company_id\n"
    (lake / "people" / "0001.csv").write_text(ph + "INSERT,1\nINSERT,2\nINSERT,3\n")
    (lake / "jobs" / "0001.csv").write_text(jh + "INSERT,1,10\nINSERT,2,10\n")
    sync(run_knut, lake, *g.args)
    assert g.ids("Person") == [1, 2, 3] and g.edges("WORKS_AT") == [(1, 10), (2, 10)]
    # two files in one round (as after an outage); 1: deleted, then back in
    # the next file; 2: deleted and back in one file; 4: in, then out in the
    # next file; 5: in and out in one file
    (lake / "people" / "0002.csv").write_text(ph + "DELETE,1\nINSERT,4\nDELETE,2\nINSERT,2\n"
                                              "INSERT,5\nDELETE,5\n")
    (lake / "people" / "0003.csv").write_text(ph + "INSERT,1\nDELETE,4\n")
    (lake / "jobs" / "0002.csv").write_text(jh + "DELETE,1,10\nINSERT,3,10\n")
    (lake / "jobs" / "0003.csv").write_text(jh + "INSERT,1,10\nDELETE,3,10\n")
    sync(run_knut, lake, *g.args)
    # before: upserts ran before deletes, so 1 and 2 ended deleted
    assert g.ids("Person") == [1, 2, 3]
    # 1 -> 10: deleted, then inserted in the next file; 3 -> 10: in, then out
    assert g.edges("WORKS_AT") == [(1, 10), (2, 10)]


def test_cdc_sequence_by(run_knut, tmp_path):
    lake = tmp_path / "lake"
    (lake / "changes").mkdir(parents=True)
    (lake / "sync.yml").write_text(CDC.replace("    mode: cdc\n",
                                               "    mode: cdc\n    sequence_by: seq\n"))
    g = Store(run_knut, lake)
    h = "_change_type,id,name,seq\n"
    # rows out of sequence: 7's last event is the DELETE (seq 2), 8's the INSERT
    (lake / "changes" / "0001.csv").write_text(
        h + "DELETE,7,,2\nINSERT,7,a,1\nINSERT,8,b,2\nDELETE,8,,1\n")
    sync(run_knut, lake)
    assert g.ids("Person") == [8]
    assert g.q("SELECT name FROM v_Person")[0]["name"] == "b"
    assert "seq" not in g.q("SELECT * FROM v_Person")[0]  # properties: [name]


# ---- a config fix retries what the old config failed; knut sync retry ----

BAD_SQL = """\
store: graph.duckdb
tables:
  people:
    path: people/
    sql: SELECT id, nme AS name FROM input
    vertices: [{labels: [Person], keys: [id], properties: [name]}]
"""


def test_config_fix_retries_failed_files(run_knut, tmp_path):
    lake = tmp_path / "lake"
    (lake / "people").mkdir(parents=True)
    (lake / "sync.yml").write_text(BAD_SQL)
    (lake / "people" / "p1.csv").write_text("id,name\n1,ann\n")
    assert sync(run_knut, lake, ok=False).returncode == 1
    assert status(run_knut, lake)["p1.csv"]["state"] == "failed"
    r = sync(run_knut, lake)  # same config: not read again
    assert [x["msg"] for x in records(r.stderr) if x["msg"].startswith("round")] == ["round idle"]
    (lake / "sync.yml").write_text(BAD_SQL.replace("nme AS name", "name"))
    sync(run_knut, lake)
    assert status(run_knut, lake)["p1.csv"]["state"] == "done"
    assert Store(run_knut, lake).ids("Person") == [1]


def test_retry_requeues_failed_files(run_knut, tmp_path):
    lake = tmp_path / "lake"
    (lake / "people").mkdir(parents=True)
    (lake / "sync.yml").write_text(BAD_SQL.replace("nme AS name", "name"))
    (lake / "people" / "p1.csv").write_text("name\nann\n")  # no key column
    (lake / "people" / "p2.csv").write_text("id,name\n2,bob\n")
    assert sync(run_knut, lake, ok=False).returncode == 1
    r = sync(run_knut, lake)
    assert not [x for x in records(r.stderr) if x["msg"] == "file failed"]  # idle
    r = run_knut("sync", "retry", "--config", lake / "sync.yml", "--table", "people")
    assert r.returncode == 0 and r.stdout.strip() == "re-queued 1 failed file", r.stderr
    r = sync(run_knut, lake, ok=False)  # read again (and fails again: it is still bad)
    failed = [x for x in records(r.stderr) if x["msg"] == "file failed"]
    assert [Path(x["file"]).name for x in failed] == ["p1.csv"], r.stderr
    assert status(run_knut, lake)["p2.csv"]["state"] == "done"
    r = run_knut("sync", "retry", "--config", lake / "sync.yml", "--table", "nope")
    assert r.returncode != 0 and "no table 'nope'" in r.stderr
    r = run_knut("sync", "--help")
    assert "knut sync retry" in r.stdout + r.stderr
