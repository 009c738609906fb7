"""GraphAr graphs served by `knut serve --config serve.yml` (`graphar:`
sources): every vertex type and edge type a table of the graph's schema,
the vertex index and the src/dst indices as columns. Graphs written by the
reference (the graphar package, in a subprocess: garref.py), by
`knut gar import`, and the official corpus; queried through the ADBC Flight
SQL driver and pyarrow.flight with exact rows, a vertex-edge-vertex join,
GetTables; bad sources stop the start with a message naming the file.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import adbc_driver_flightsql.dbapi as flightsql
import pyarrow as pa
import pytest

import flightsql_wire as w
import garref
from test_gar_read import EDGES, REF_WRITE
from test_serve import Server, fetch, still_serves

REPO = Path(__file__).resolve().parents[2]
CORPUS = Path("/work/shared/data/graphar-testing")
if not CORPUS.is_dir():
    CORPUS = REPO / "third_party" / "graphar-testing"

NAMES = ["ann", 'say "hi", bob', "", "zoë", "line\nbreak", "eve"]


def rows(conn, sql: str) -> list[tuple]:
    cur = conn.cursor()
    try:
        cur.execute(sql)
        return [tuple(r.values()) for r in cur.fetch_arrow_table().to_pylist()]
    finally:
        cur.close()


def table(conn, sql: str) -> pa.Table:
    cur = conn.cursor()
    try:
        cur.execute(sql)
        return cur.fetch_arrow_table()
    finally:
        cur.close()


def serve_fails(knut, cfg: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(knut), "serve", "--memory", "--addr", "127.0.0.1:0",
                           "--config", str(cfg)], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def refgraph(tmp_path_factory) -> Path:
    """The reference's tiny graph: person (id in Parquet, name in CSV, chunks
    of 2), person_knows_person by source (Parquet) and by dest (CSV), with
    `since` and `note` in CSV."""
    d = tmp_path_factory.mktemp("ref")
    garref.run(REF_WRITE, d, json.dumps(NAMES), json.dumps(EDGES))
    return d


def test_reference_graph_rows_join_and_listing(knut, tmp_path, refgraph):
    cfg = tmp_path / "serve.yml"
    cfg.write_text(f"""
graphar:
  - path: {refgraph}/tiny.graph.yml            # schema: the graph's name
  - path: {refgraph}                           # a folder with one graph YAML
    schema: tiny_dst
    adj_list: ordered_by_dest
""")
    s = Server(knut, None, "--config", str(cfg))
    try:
        with flightsql.connect(s.uri) as conn:
            t = table(conn, "SELECT * FROM tiny.person ORDER BY _graphArVertexIndex")
            assert t.schema.names == ["_graphArVertexIndex", "id", "name"]
            assert [f.type for f in t.schema] == [pa.int64(), pa.int64(), pa.string()]
            assert [tuple(r.values()) for r in t.to_pylist()] == \
                [(i, 1000 + i, n) for i, n in enumerate(NAMES)]
            want = sorted((a, b, 2000 + 10 * a + b, f"{NAMES[a]}->{NAMES[b]}") for a, b in EDGES)
            for schema in ("tiny", "tiny_dst"):  # Parquet adj list, then CSV
                t = table(conn, f"SELECT * FROM {schema}.person_knows_person")
                assert t.schema.names == ["_graphArSrcIndex", "_graphArDstIndex", "since", "note"]
                assert sorted(tuple(r.values()) for r in t.to_pylist()) == want, schema
            # vertex - edge - vertex: the indices join
            got = rows(conn, """
                SELECT a.id AS a_id, a.name AS a_name, b.id AS b_id, b.name AS b_name, e.since
                FROM tiny.person a
                JOIN tiny.person_knows_person e ON e._graphArSrcIndex = a._graphArVertexIndex
                JOIN tiny.person b ON b._graphArVertexIndex = e._graphArDstIndex
                ORDER BY 1, 3""")
            assert got == sorted((1000 + a, NAMES[a], 1000 + b, NAMES[b], 2000 + 10 * a + b)
                                 for a, b in EDGES)
            objs = conn.adbc_get_objects(depth="tables", catalog_filter="tiny%").read_all()
            seen = sorted((c["catalog_name"], sc["db_schema_name"], tb["table_name"])
                          for c in objs.to_pylist() for sc in c["catalog_db_schemas"]
                          for tb in sc["db_schema_tables"])
            assert seen == [(c, "main", t) for c in ("tiny", "tiny_dst")
                            for t in ("person", "person_knows_person")]
            assert conn.adbc_get_table_schema("person_knows_person", catalog_filter="tiny",
                                              db_schema_filter="main").names == \
                ["_graphArSrcIndex", "_graphArDstIndex", "since", "note"]
        c = s.client()
        _, t = fetch(c, w.get_tables(catalog="tiny", table_pattern="person%"))
        assert sorted(zip(t.column("catalog_name").to_pylist(),
                          t.column("db_schema_name").to_pylist(),
                          t.column("table_name").to_pylist(),
                          t.column("table_type").to_pylist())) == \
            [("tiny", "main", "person", "VIEW"), ("tiny", "main", "person_knows_person", "VIEW")]
        _, t = fetch(c, w.statement_query(
            "SELECT count(*) AS n FROM tiny.person_knows_person WHERE _graphArSrcIndex = 0"))
        assert t.column("n").to_pylist() == [sum(1 for a, _ in EDGES if a == 0)]
        still_serves(c)
    finally:
        assert s.stop() == 0


IMPORT_YML = """
graph: social
output: out
vertex_chunk_size: 4
edge_chunk_size: 8
vertices:
  - type: person
    table: people.parquet
    key: id
    labels: [admin, staff]
    label_column: roles
    property_groups:
      - properties: [id]
      - file_type: csv
        properties:
          - {name: fullName, column: name}
          - birthday
edges:
  - type: knows
    src: {type: person, key: a}
    dst: {type: person, key: b}
    table: knows.csv
    adj_lists: [ordered_by_source, {type: unordered_by_dest, file_type: csv}]
    properties: [since]
"""


def test_graph_of_knut_gar_import(knut, run_knut, tmp_path):
    """Several chunks, labels, a date and a timestamp, a CSV group: the
    served rows are the ones `knut gar cat` reads (which test_gar_read.py
    checks against the reference)."""
    for sql in [
        "COPY (SELECT 1000 + i AS id, 'name' || i AS name, DATE '1990-01-01' + (i * 40)::INTEGER "
        "AS birthday, CASE WHEN i % 3 = 0 THEN 'admin;staff' ELSE 'staff' END AS roles "
        "FROM range(10) t(i)) TO 'people.parquet' (FORMAT parquet)",
        "COPY (SELECT 1000 + i % 10 AS a, 1000 + (i * 3 + 1) % 10 AS b, TIMESTAMP '2024-01-01' "
        "+ to_hours(i) AS since FROM range(30) t(i)) TO 'knows.csv' (FORMAT csv, HEADER)"]:
        assert run_knut("query", sql, cwd=tmp_path).returncode == 0
    (tmp_path / "social.yml").write_text(IMPORT_YML)
    p = run_knut("gar", "import", "-q", "-c", tmp_path / "social.yml")
    assert p.returncode == 0, p.stderr
    graph = tmp_path / "out"
    cat = lambda t, *o: [json.loads(x) for x in run_knut(
        "gar", "cat", "-f", "json", *o, graph, t).stdout.splitlines()]
    cfg = tmp_path / "serve.yml"
    cfg.write_text("graphar:\n  - path: out\n    schema: g\n  - path: out/social.graph.yml\n"
                   "    schema: g_dst\n    adj_list: unordered_by_dest\n")
    s = Server(knut, None, "--config", str(cfg))
    try:
        with flightsql.connect(s.uri) as conn:
            t = table(conn, "SELECT * FROM g.person ORDER BY 1")
            assert t.schema.names == ["_graphArVertexIndex", "id", "fullName", "birthday",
                                      "admin", "staff"]
            assert t.schema.field("birthday").type == pa.date32()
            want = cat("person")
            assert len(want) == 10
            assert [{k: (v.isoformat() if k == "birthday" else v) for k, v in r.items()}
                    for r in t.to_pylist()] == want
            for schema, adj in (("g", "ordered_by_source"), ("g_dst", "unordered_by_dest")):
                t = table(conn, f"SELECT * FROM {schema}.person_knows_person")
                assert t.schema.field("since").type == pa.timestamp("us")
                got = sorted((r["_graphArSrcIndex"], r["_graphArDstIndex"],
                              r["since"].isoformat(sep=" ")) for r in t.to_pylist())
                ref = sorted((r["_graphArSrcIndex"], r["_graphArDstIndex"],
                              r["since"].replace("T", " ")) for r in cat(
                                  "person_knows_person", "--adj-list", adj))
                assert len(got) == 30 and got == ref, schema
            got = rows(conn, "SELECT a.id AS a_id, b.id AS b_id FROM g.person a JOIN g.person_knows_person e "
                             "ON a._graphArVertexIndex = e._graphArSrcIndex JOIN g.person b "
                             "ON b._graphArVertexIndex = e._graphArDstIndex ORDER BY 1, 2")
            assert got == sorted((1000 + i % 10, 1000 + (i * 3 + 1) % 10) for i in range(30))
            assert rows(conn, "SELECT count(*) FROM g.person WHERE admin") == [(4,)]
    finally:
        assert s.stop() == 0


@pytest.mark.parametrize("rel", ["ldbc_sample/parquet/ldbc_sample.graph.yml",
                                 "ldbc_sample/csv/ldbc_sample.graph.yml"])
def test_corpus_graph_matches_knut_gar_cat(knut, run_knut, tmp_path, rel):
    graph = CORPUS / rel
    cfg = tmp_path / "serve.yml"
    cfg.write_text(f"graphar:\n  - path: {graph}\n")
    s = Server(knut, None, "--config", str(cfg))
    try:
        with flightsql.connect(s.uri) as conn:
            got = table(conn, "SELECT * FROM ldbc_sample.person ORDER BY 1").to_pylist()
            want = [json.loads(x) for x in run_knut("gar", "cat", "-f", "json", graph,
                                                    "person").stdout.splitlines()]
            assert len(got) == 903 and got == want
            got = rows(conn, "SELECT _graphArSrcIndex, _graphArDstIndex, creationDate "
                             "FROM ldbc_sample.person_knows_person ORDER BY 1, 2, 3")
            want = sorted(tuple(json.loads(x).values()) for x in run_knut(
                "gar", "cat", "-f", "json", graph, "person_knows_person", "--adj-list",
                "ordered_by_source").stdout.splitlines())
            assert len(got) == 6626 and got == want
    finally:
        assert s.stop() == 0


def copy_graph(tmp_path: Path) -> Path:
    g = tmp_path / "g"
    shutil.copytree(CORPUS / "modern_graph", g)
    return g


@pytest.mark.parametrize("case", ["missing-graph", "missing-vertex-yml", "corrupt-vertex-yml",
                                  "not-yaml", "bad-adj-list", "unknown-key", "schema-taken"])
def test_bad_info_files_stop_the_start(knut, tmp_path, case):
    """A graph that cannot be loaded is a config error: exit 2, the message
    names serve.yml's line and the info file (and its line when it has one)."""
    g = copy_graph(tmp_path)
    item = f"  - path: {g}\n"
    where, what = "serve.yml:2:", None
    if case == "missing-graph":
        item = f"  - path: {tmp_path}/nope.graph.yml\n"
        what = f"{tmp_path}/nope.graph.yml: No such file or directory"
    elif case == "missing-vertex-yml":
        (g / "person.vertex.yml").unlink()
        what = "person.vertex.yml"
    elif case == "corrupt-vertex-yml":
        text = (g / "person.vertex.yml").read_text().replace("chunk_size: 2", "chunk_size: -4")
        (g / "person.vertex.yml").write_text(text)
        what = "person.vertex.yml:"
    elif case == "not-yaml":
        (g / "modern_graph.graph.yml").write_text("name: [modern\n")
        what = "modern_graph.graph.yml"
    elif case == "bad-adj-list":
        item += "    adj_list: by_source\n"
        where, what = "serve.yml:3:", "adj_list 'by_source': ordered_by_source"
    elif case == "unknown-key":
        item += "    shema: x\n"
        where, what = "serve.yml:3:", "unknown key 'shema' in a graphar source (did you mean"
    elif case == "schema-taken":
        item += f"  - path: {g}\n"
        where, what = "serve.yml:3:", "graphar schema 'modern_graph' is already a graphar schema"
    cfg = tmp_path / "serve.yml"
    cfg.write_text("graphar:\n" + item)
    r = serve_fails(knut, cfg)
    assert r.returncode == 2, r.stderr
    assert "knut serve: " in r.stderr and str(tmp_path / where) in r.stderr, r.stderr
    assert what in r.stderr, r.stderr
    assert "assertion failed" not in r.stderr


def test_bad_chunks_stop_the_start(knut, tmp_path):
    """A chunk file gone, a CSV chunk whose header differs, ORC chunks: the
    start fails (exit 1) naming serve.yml's line, the table and the file."""
    g = copy_graph(tmp_path)
    cfg = tmp_path / "serve.yml"
    cfg.write_text(f"graphar:\n  - path: {g}\n")
    gone = g / "vertex" / "person" / "name_age" / "chunk1"
    gone.unlink()
    r = serve_fails(knut, cfg)
    assert r.returncode == 1, r.stderr
    assert f"{cfg}:2:" in r.stderr and "modern_graph.person" in r.stderr
    assert f"{gone}: No such file or directory" in r.stderr, r.stderr
    shutil.rmtree(g)
    g = copy_graph(tmp_path)
    chunks = sorted((g / "vertex" / "person" / "name_age").glob("chunk*"))
    assert len(chunks) > 1
    text = chunks[1].read_text().splitlines()
    text[0] = ",".join(reversed(text[0].split(",")))
    chunks[1].write_text("\n".join(text) + "\n")
    r = serve_fails(knut, cfg)
    assert r.returncode != 0 and f"{chunks[1]}: its header differs" in r.stderr, r.stderr
    cfg.write_text(f"graphar:\n  - path: {CORPUS}/ldbc_sample/orc\n")
    r = serve_fails(knut, cfg)
    assert r.returncode != 0, r.stderr
    assert "ORC chunks are not supported" in r.stderr and "ldbc_sample/orc/vertex/person" in \
        r.stderr, r.stderr


def test_graphar_tables_authorized_by_their_name(knut, tmp_path, refgraph):
    """An allow-list identity reads the GraphAr tables it is given (the
    binder must see through the views: no list or struct constant in them
    may defeat duckdb_get_table_names) and no other."""
    import pyarrow.flight as fl
    auth = tmp_path / "serve.auth"
    auth.write_text("token bi t-bi\nallow bi tiny.person\n")
    auth.chmod(0o600)
    cfg = tmp_path / "serve.yml"
    cfg.write_text(f"graphar:\n  - path: {refgraph}\n")
    s = Server(knut, None, "--config", str(cfg), "--auth-file", str(auth))
    try:
        c = s.client()
        bi = fl.FlightCallOptions(headers=[(b"authorization", b"Bearer t-bi")])
        info = c.get_flight_info(fl.FlightDescriptor.for_command(w.statement_query(
            "SELECT count(*) AS n FROM tiny.person")), bi)
        assert c.do_get(info.endpoints[0].ticket, bi).read_all().column("n").to_pylist() == \
            [len(NAMES)]
        with pytest.raises(fl.FlightUnauthorizedError, match="may not read"):
            c.get_flight_info(fl.FlightDescriptor.for_command(w.statement_query(
                "SELECT * FROM tiny.person_knows_person")), bi)
        info = c.get_flight_info(fl.FlightDescriptor.for_command(w.get_tables()), bi)
        t = c.do_get(info.endpoints[0].ticket, bi).read_all()
        assert list(zip(t.column("catalog_name").to_pylist(),
                        t.column("table_name").to_pylist())) == [("tiny", "person")]
    finally:
        assert s.stop() == 0
