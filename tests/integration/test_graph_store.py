"""End-to-end tests of the embedded graph store and `knut graph export`.

A store file is filled from Arrow IPC files written by pyarrow, through the
store's sink (tests/tools/knut_gstore_tool.c), then checked from outside:
`knut query` on the file shows the rows, applying the same mutation again
changes nothing, a delete set removes a vertex with its edges, and the
GraphAr export is accepted by `knut gar validate`, by the GraphAr reference
package (in a subprocess, see garref.py; it reads only int64 and string
properties) and read back by `knut gar cat` with every value as stored.
"""
import datetime as dt
import json
import os
import pathlib
import subprocess

import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

import garref

REPO = pathlib.Path(__file__).resolve().parents[2]
KNUT = os.environ.get("KNUT_BIN", str(REPO / "build" / "knut"))


def tool_path():
    """knut_gstore_tool from the build KNUT_BIN belongs to, else build/tests."""
    for d in (pathlib.Path(KNUT).resolve().parent / "tests", REPO / "build" / "tests"):
        p = d / "knut_gstore_tool"
        if os.access(p, os.X_OK):
            return p
    return None


@pytest.fixture(scope="module", autouse=True)
def binaries_exist():
    if not os.access(KNUT, os.X_OK):
        pytest.fail(f"knut binary not found at {KNUT} (build it or set KNUT_BIN)")
    if tool_path() is None:
        pytest.fail("knut_gstore_tool not found next to KNUT_BIN's build (tests/) "
                    "or in build/tests")


def run(*args, check=0):
    p = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=300)
    if check is not None:
        assert p.returncode == check, (args, p.returncode, p.stdout[-2000:], p.stderr[-2000:])
    return p


def apply(db, spec):
    """Applies spec (a list of sets) to the store db; returns the stats."""
    spec_file = db.parent / "spec.json"
    spec_file.write_text(json.dumps(spec))
    p = run(tool_path(), db, "apply", spec_file)
    return json.loads(p.stdout)


def query(db, sql):
    """Rows of `knut query --db db -f json sql` as dicts."""
    p = run(KNUT, "query", "--db", db, "-f", "json", sql)
    return [json.loads(line) for line in p.stdout.splitlines()]


def write_ipc(path, table):
    with ipc.new_stream(str(path), table.schema) as w:
        w.write_table(table)
    return str(path)


# What the store should hold, in the JSON `knut query` and `knut gar cat`
# print (dates and timestamps as ISO 8601; timestamps have whole
# milliseconds since GraphAr keeps milliseconds).
PEOPLE = [
    {"id": 1, "name": "ada", "born": "1990-01-02", "joined": "2024-02-29T12:34:56.789",
     "score": 0.5, "tags": ["a", "b"]},
    {"id": 2, "name": None, "born": "1969-12-31", "joined": None, "score": None, "tags": []},
    {"id": 3, "name": "chen", "born": None, "joined": "1970-01-01T00:00:00", "score": -2.25,
     "tags": None},
    {"id": 4, "name": "dana", "born": "2000-02-29", "joined": "2001-01-01T00:00:01",
     "score": 1e10, "tags": ["x", None]},
]
COMPANIES = [{"id": 10, "name": "acme"}, {"id": 20, "name": "globex"}]
# (person, company, since); person 99 does not exist: the edge is skipped.
WORKS_AT = [(1, 10, 2020), (2, 10, 2021), (3, 20, 2022), (4, 20, 2023), (99, 10, 2024)]


def people_table():
    def date(s):
        return None if s is None else dt.date.fromisoformat(s)

    def ts(s):
        return None if s is None else dt.datetime.fromisoformat(s)

    return pa.table({
        "id": pa.array([p["id"] for p in PEOPLE], pa.int64()),
        "name": pa.array([p["name"] for p in PEOPLE], pa.string()),
        "born": pa.array([date(p["born"]) for p in PEOPLE], pa.date32()),
        "joined": pa.array([ts(p["joined"]) for p in PEOPLE], pa.timestamp("us")),
        "score": pa.array([p["score"] for p in PEOPLE], pa.float64()),
        "tags": pa.array([p["tags"] for p in PEOPLE], pa.list_(pa.string())),
    })


@pytest.fixture
def spec(tmp_path):
    """The mutation: people, companies and WORKS_AT edges."""
    people = write_ipc(tmp_path / "people.arrows", people_table())
    companies = write_ipc(tmp_path / "companies.arrows", pa.table({
        "id": pa.array([c["id"] for c in COMPANIES], pa.int64()),
        "name": pa.array([c["name"] for c in COMPANIES], pa.string()),
    }))
    works = write_ipc(tmp_path / "works.arrows", pa.table({
        "pid": pa.array([e[0] for e in WORKS_AT], pa.int64()),
        "cid": pa.array([e[1] for e in WORKS_AT], pa.int64()),
        "since": pa.array([e[2] for e in WORKS_AT], pa.int64()),
    }))
    return [
        {"kind": "vertex", "file": people, "labels": ["person"], "keys": ["id"]},
        {"kind": "vertex", "file": companies, "labels": ["company"], "keys": ["id"]},
        {"kind": "edge", "file": works, "type": "WORKS_AT",
         "src": {"label": "person", "keys": ["id"], "columns": ["pid"]},
         "dst": {"label": "company", "keys": ["id"], "columns": ["cid"]},
         "keys": [], "props": ["since"]},
    ]


EDGES_SQL = ("SELECT p.id AS pid, c.id AS cid, e.since FROM e_WORKS_AT e "
             "JOIN v_person p ON p._knut_vid = e._knut_src "
             "JOIN v_company c ON c._knut_vid = e._knut_dst ORDER BY pid")
PEOPLE_SQL = "SELECT * EXCLUDE (_knut_vid) FROM v_person ORDER BY id"


def stored_edges(db):
    return [(r["pid"], r["cid"], r["since"]) for r in query(db, EDGES_SQL)]


def test_apply_is_visible_and_idempotent(tmp_path, spec):
    db = tmp_path / "g.duckdb"
    first = apply(db, spec)
    assert first == {"rows": 4 + 2 + 5, "vertices_written": 6, "edges_written": 4,
                     "vertices_deleted": 0, "edges_deleted": 0, "edges_skipped": 1}
    assert query(db, PEOPLE_SQL) == PEOPLE
    assert query(db, "SELECT id, name FROM v_company ORDER BY id") == COMPANIES
    assert stored_edges(db) == [e for e in WORKS_AT if e[0] != 99]

    # The same mutation again: the same stats, and nothing new or changed.
    vids = query(db, "SELECT id, _knut_vid FROM v_person ORDER BY id")
    assert apply(db, spec) == first
    assert query(db, PEOPLE_SQL) == PEOPLE
    assert query(db, "SELECT id, _knut_vid FROM v_person ORDER BY id") == vids
    assert query(db, "SELECT count(*) AS n FROM e_WORKS_AT") == [{"n": 4}]
    assert query(db, "SELECT count(*) AS n FROM v_company") == [{"n": 2}]


def test_delete_removes_vertex_and_incident_edges(tmp_path, spec):
    db = tmp_path / "g.duckdb"
    apply(db, spec)
    gone = write_ipc(tmp_path / "gone.arrows", pa.table({"id": pa.array([3], pa.int64())}))
    stats = apply(db, [{"kind": "delete", "file": gone, "label": "person", "keys": ["id"]}])
    assert stats["vertices_deleted"] == 1
    assert stats["edges_deleted"] == 1
    assert query(db, PEOPLE_SQL) == [p for p in PEOPLE if p["id"] != 3]
    assert stored_edges(db) == [e for e in WORKS_AT if e[0] not in (3, 99)]
    # Deleting a key that is not there is no error and deletes nothing.
    stats = apply(db, [{"kind": "delete", "file": gone, "label": "person", "keys": ["id"]}])
    assert (stats["vertices_deleted"], stats["edges_deleted"]) == (0, 0)


REF_SNIPPET = r"""
import json, sys, graphar
from graphar._core import AdjListType as A
gi = graphar.GraphInfo.load(sys.argv[1])
out = {"validated": gi.is_validated(), "people": [], "companies": []}
vc = graphar.VerticesCollection.Make(gi, "person")
out["person_size"] = vc.size()
for v in vc:
    out["people"].append([v.id(), v.property("id"), v.property("name")])
cc = graphar.VerticesCollection.Make(gi, "company")
out["company_size"] = cc.size()
for v in cc:
    out["companies"].append([v.id(), v.property("id"), v.property("name")])
ec = graphar.EdgesCollection.Make(gi, "person", "WORKS_AT", "company", A.ordered_by_source)
out["edge_size"] = ec.size()
out["edges"] = [[e.source(), e.destination(), e.property("since")] for e in ec]
print(json.dumps(out))
"""


def gar_cat(out, type_name):
    p = run(KNUT, "gar", "cat", out, type_name, "--format", "json")
    return [json.loads(line) for line in p.stdout.splitlines()]


def test_export_agrees_with_validator_reference_and_cat(tmp_path, spec):
    db = tmp_path / "g.duckdb"
    apply(db, spec)
    gone = write_ipc(tmp_path / "gone.arrows", pa.table({"id": pa.array([3], pa.int64())}))
    apply(db, [{"kind": "delete", "file": gone, "label": "person", "keys": ["id"]}])
    people = [p for p in PEOPLE if p["id"] != 3]
    edges = [e for e in WORKS_AT if e[0] not in (3, 99)]

    out = tmp_path / "gar"
    run(KNUT, "graph", "export", "--db", db, "--out", out, "--name", "work")
    p = run(KNUT, "gar", "validate", out)
    assert "0 errors" in p.stdout + p.stderr

    # knut gar cat: every person property with its type, nulls included.
    # Vertex indices follow the store's vertex ids.
    vid = {r["id"]: r["_knut_vid"] for r in query(db, "SELECT id, _knut_vid FROM v_person")}
    order = sorted(vid, key=vid.get)
    cat = gar_cat(out, "person")
    assert [r.pop("_graphArVertexIndex") for r in cat] == list(range(len(people)))
    assert cat == [next(p for p in people if p["id"] == i) for i in order]
    index_of = {r["id"]: k for k, r in enumerate(cat)}

    companies = gar_cat(out, "company")
    cindex_of = {r["id"]: r["_graphArVertexIndex"] for r in companies}
    assert sorted((r["id"], r["name"]) for r in companies) == [
        (c["id"], c["name"]) for c in COMPANIES]
    cat_edges = gar_cat(out, "person_WORKS_AT_company")
    assert sorted((r["_graphArSrcIndex"], r["_graphArDstIndex"], r["since"]) for r in cat_edges) \
        == sorted((index_of[pid], cindex_of[cid], since) for pid, cid, since in edges)

    # The reference reads the same graph: sizes, ids, names, edges.
    ref = garref.run(REF_SNIPPET, out / "work.graph.yml")
    assert ref["validated"] is True
    assert ref["person_size"] == len(people)
    # The reference reads a null string as "" (IsValid is true for it; see
    # test_gar_write.py), so only that is expected of it for person 2.
    assert ref["people"] == [[k, r["id"], "" if r["name"] is None else r["name"]]
                             for k, r in enumerate(cat)]
    assert any(r["name"] is None for r in cat)
    assert ref["company_size"] == len(COMPANIES)
    assert sorted(ref["companies"]) == sorted(
        [r["_graphArVertexIndex"], r["id"], r["name"]] for r in companies)
    assert ref["edge_size"] == len(edges)
    assert sorted(ref["edges"]) == sorted(
        [index_of[pid], cindex_of[cid], since] for pid, cid, since in edges)
