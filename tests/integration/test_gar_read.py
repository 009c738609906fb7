"""End-to-end tests of `knut gar info` and `knut gar cat` against the
reference: the graphar package (run in a subprocess, see garref.py) reads
the same corpus graphs, and its vertex/edge counts and its int64/string
property values must equal what knut prints. Also: Arrow output types
(read back with pyarrow), graphs written by the reference's builders,
ORC and missing inputs, limits and usage errors.
"""
import datetime as dt
import json
import os
import pathlib
import shlex
import subprocess

import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

import garref

REPO = pathlib.Path(__file__).resolve().parents[2]
CORPUS = (REPO / ".." / "shared" / "data" / "graphar-testing").resolve()

# What the reference reads from a graph: every vertex type and every edge
# type per adj list, with ids and the int64/string properties (the only
# types its Python getters return), nulls as None.
REF_READ = r"""
import json, sys, graphar as ga
from graphar._core import AdjListType as A
g = ga.GraphInfo.load(sys.argv[1])
TYPES = ("int64", "string")
def props(info):
    return [p.name for pg in info.get_property_groups() for p in pg.get_properties()
            if p.type.to_type_name() in TYPES]
out = {"vertices": {}, "edges": {}}
for vi in g.get_vertex_infos():
    names = props(vi)
    vc = ga.VerticesCollection.Make(g, vi.get_type())
    rows = [[v.id()] + [v.property(n) if v.IsValid(n) else None for n in names] for v in vc]
    out["vertices"][vi.get_type()] = {"size": vc.size(), "props": names, "rows": rows}
for ei in g.get_edge_infos():
    s, e, d = ei.get_src_type(), ei.get_edge_type(), ei.get_dst_type()
    names = props(ei)
    for at in (A.ordered_by_source, A.ordered_by_dest, A.unordered_by_source,
               A.unordered_by_dest):
        if not ei.has_adjacent_list_type(at):
            continue
        ec = ga.EdgesCollection.Make(g, s, e, d, at)
        rows = [[x.source(), x.destination()] +
                [x.property(n) if x.IsValid(n) else None for n in names] for x in ec]
        out["edges"][f"{s},{e},{d}/{at.name}"] = {"size": ec.size(), "props": names,
                                                 "rows": rows}
print(json.dumps(out))
"""

GRAPHS = [
    "ldbc_sample/parquet/ldbc_sample.graph.yml",
    "ldbc_sample/csv/ldbc_sample.graph.yml",
    "neo4j/MovieGraph.graph.yml",
    "modern_graph/modern_graph.graph.yml",
]


def cat_json(run_knut, graph, type_, *opts):
    p = run_knut("gar", "cat", "-f", "json", *opts, graph, type_)
    assert p.returncode == 0, p.stderr
    return [json.loads(line) for line in p.stdout.splitlines()]


def ref_view(knut_value, ref_value):
    """knut's value as the reference shows it, for its two known quirks:
    - in CSV, Arrow's reader infers a type for every column first and casts
      it to the info's type afterwards, so a string column holding ISO
      timestamps comes back reformatted ("2010-07-30T15:19:53.298+0000" ->
      "2010-07-30 15:19:53.298000000Z"); knut keeps the text, as the info
      says string;
    - a null string is IsValid() and reads as "" (neo4j Movie.tagline).
    """
    if knut_value is None and ref_value == "":
        return ""
    if isinstance(knut_value, str) and isinstance(ref_value, str) and \
            ref_value.endswith("Z") and knut_value.endswith("+0000"):
        t = dt.datetime.strptime(knut_value, "%Y-%m-%dT%H:%M:%S.%f%z")
        return t.strftime("%Y-%m-%d %H:%M:%S.%f") + "000Z"
    return knut_value


def same_rows(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert [ref_view(a, b) for a, b in zip(g, w)] == w


def compare_with_reference(run_knut, graph):
    ref = garref.run(REF_READ, graph)
    info = run_knut("gar", "info", "-f", "json", graph)
    assert info.returncode == 0, info.stderr
    doc = json.loads(info.stdout)
    counts = {v["type"]: v["count"] for v in doc["vertices"]}
    edge_counts = {f'{e["src_type"]},{e["edge_type"]},{e["dst_type"]}/{a["type"]}': a["count"]
                   for e in doc["edges"] for a in e["adj_lists"]}
    for vtype, r in ref["vertices"].items():
        assert counts[vtype] == r["size"], vtype
        rows = cat_json(run_knut, graph, vtype)
        got = [[row["_graphArVertexIndex"]] + [row[n] for n in r["props"]] for row in rows]
        same_rows(got, r["rows"])
    assert ref["edges"], "the reference read no edges"
    for key, r in ref["edges"].items():
        assert edge_counts[key] == r["size"], key
        triple, adj = key.split("/")
        rows = cat_json(run_knut, graph, triple, "--adj-list", adj)
        got = [[row["_graphArSrcIndex"], row["_graphArDstIndex"]] + [row[n] for n in r["props"]]
               for row in rows]
        same_rows(got, r["rows"])
    return ref


@pytest.mark.parametrize("rel", GRAPHS)
def test_counts_and_values_match_reference(run_knut, rel):
    ref = compare_with_reference(run_knut, str(CORPUS / rel))
    if rel.startswith("ldbc_sample"):
        assert ref["vertices"]["person"]["size"] == 903
        assert ref["edges"]["person,knows,person/ordered_by_source"]["size"] == 6626


def test_info_text(run_knut):
    p = run_knut("gar", "info", CORPUS / "ldbc_sample" / "parquet" / "ldbc_sample.graph.yml")
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert out.startswith("graph ldbc_sample\n")
    assert "version     gar/v1" in out
    assert "vertex person\n  count       903 (10 chunks of 100)" in out
    assert "id                   int64        primary" in out
    assert "edge person_knows_person: person -[knows]- person (undirected)" in out
    assert "adj list ordered_by_source (parquet): 6626 edges in 10 parts" in out
    assert "adj list unordered_by_source (parquet): 6626 edges in 10 parts" in out
    # A directory with one graph YAML; metadata-only types say why counts are unknown.
    p = run_knut("gar", "info", CORPUS / "ldbc" / "parquet")
    assert p.returncode == 0, p.stderr
    assert "labels      university, company, public" in p.stdout
    assert "emails               string       cardinality=list" in p.stdout
    assert "count       unknown: " in p.stdout and "vertex/place/vertex_count" in p.stdout
    doc = json.loads(run_knut("gar", "info", "-f", "json", CORPUS / "ldbc" / "parquet").stdout)
    place = next(v for v in doc["vertices"] if v["type"] == "place")
    assert place["count"] is None and "vertex_count" in place["count_error"]


def test_arrow_types(knut, tmp_path):
    """The Arrow stream carries the reference's Arrow types."""
    def arrow(graph, type_):
        out = tmp_path / "out.arrows"
        with open(out, "wb") as f:
            p = subprocess.run([str(knut), "gar", "cat", "-f", "arrow", str(CORPUS / graph),
                                type_], stdout=f, stderr=subprocess.PIPE, timeout=120)
        assert p.returncode == 0, p.stderr
        return ipc.open_stream(pa.OSFile(str(out))).read_all()

    base = "ldbc_sample/parquet/"
    t = arrow(base + "ldbc_sample_timestamp.graph.yml", "person_knows-timestamp_person")
    assert t.num_rows == 6626
    assert t.schema.field("_graphArSrcIndex").type == pa.int64()
    assert t.schema.field("creationDate-timestamp").type == pa.timestamp("ms")
    assert t.column("creationDate-timestamp")[0].as_py().isoformat() == "2010-07-30T15:19:53.298000"
    t = arrow(base + "ldbc_sample_date.graph.yml", "person,knows-date,person")
    assert t.schema.field("creationDate-date").type == pa.date32()
    t = arrow(base + "ldbc_sample_with_feature.graph.yml", "person")
    assert t.schema.field("firstName").type == pa.large_string()
    assert t.schema.field("feature").type == pa.list_(pa.float32())
    assert t.column("feature")[1].as_py() == [1.0, 2.0, 3.0]
    t = arrow("ldbc/parquet/ldbc.graph.yml", "organisation")
    assert t.schema.names == ["_graphArVertexIndex", "name", "url", "id", "university",
                              "company", "public"]
    assert t.schema.field("public").type == pa.bool_()
    assert sum(t.column("university").to_pylist()) == 6380


# The reference writes a graph with its builders (int64 in Parquet, strings
# in CSV, so the CSV is Arrow's quoting dialect).
REF_WRITE = r"""
import json, sys, graphar as ga
from graphar._core import AdjListType as A, FileType as F, Type, InfoVersion
out = sys.argv[1] + "/"
names = json.loads(sys.argv[2])
edges = json.loads(sys.argv[3])
ver = InfoVersion.parse("gar/v1")
P = lambda n, t, pk=False: ga.Property(n, ga.DataType(t), pk, not pk)
vi = ga.VertexInfo("person", 2, [ga.PropertyGroup([P("id", Type.INT64, True)], F.PARQUET),
                                 ga.PropertyGroup([P("name", Type.STRING)], F.CSV)],
                   [], "vertex/person/", ver)
ei = ga.EdgeInfo("person", "knows", "person", 3, 2, 2, True,
                 [ga.AdjacentList(A.ordered_by_source, F.PARQUET),
                  ga.AdjacentList(A.ordered_by_dest, F.CSV)],
                 [ga.PropertyGroup([P("since", Type.INT64), P("note", Type.STRING)], F.CSV)],
                 "edge/person_knows_person/", ver)
g = ga.GraphInfo("tiny", [vi], [ei], [], out, ver)
vi.save(out + "person.vertex.yaml")
ei.save(out + "person_knows_person.edge.yaml")
g.save(out + "tiny.graph.yml")
vb = ga.VerticesBuilder.Make(vi, out)
for i, n in enumerate(names):
    v = ga.BuilderVertex(); v.AddProperty("id", 1000 + i); v.AddProperty("name", n); vb.AddVertex(v)
vb.Dump()
for at in (A.ordered_by_source, A.ordered_by_dest):
    eb = ga.EdgesBuilder.Make(ei, out, at, len(names))
    for s, d in edges:
        e = ga.BuilderEdge(s, d); e.AddProperty("since", 2000 + 10 * s + d)
        e.AddProperty("note", f"{names[s]}->{names[d]}"); eb.AddEdge(e)
    eb.Dump()
print(json.dumps({"ok": True}))
"""


# With 8 edges, part 0 of ordered_by_dest holds exactly one full edge chunk
# (3 edges): the reference's EdgesCollection then looks for a chunk1 that
# does not exist and fails on its own output, so only knut reads that one.
EDGES_FULL_PART = [[0, 1], [0, 2], [1, 2], [3, 4], [4, 0], [2, 3], [5, 5], [1, 0]]
EDGES = EDGES_FULL_PART + [[2, 0], [3, 3]]


@pytest.mark.parametrize("edges", [EDGES, EDGES_FULL_PART], ids=["ref-readable", "full-part"])
def test_reads_graphs_the_reference_writes(run_knut, tmp_path, edges):
    names = ["ann", 'say "hi", bob', "", "zoë", "line\nbreak", "eve"]
    garref.run(REF_WRITE, tmp_path, json.dumps(names), json.dumps(edges))
    graph = str(tmp_path / "tiny.graph.yml")
    rows = cat_json(run_knut, graph, "person")
    assert [r["_graphArVertexIndex"] for r in rows] == list(range(len(names)))
    assert [r["id"] for r in rows] == [1000 + i for i in range(len(names))]
    assert [r["name"] for r in rows] == names
    for adj, key in (("ordered_by_source", 0), ("ordered_by_dest", 1)):
        rows = cat_json(run_knut, graph, "person_knows_person", "--adj-list", adj)
        got = sorted((r["_graphArSrcIndex"], r["_graphArDstIndex"], r["since"], r["note"])
                     for r in rows)
        want = sorted((s, d, 2000 + 10 * s + d, f"{names[s]}->{names[d]}") for s, d in edges)
        assert got == want, adj
        keys = [(r["_graphArSrcIndex"], r["_graphArDstIndex"])[key] for r in rows]
        assert keys == sorted(keys), adj
    if edges is EDGES:  # and the reference agrees with what knut read
        compare_with_reference(run_knut, graph)
    doc = json.loads(run_knut("gar", "info", "-f", "json", graph).stdout)
    assert doc["vertices"][0]["count"] == len(names)
    assert [a["count"] for a in doc["edges"][0]["adj_lists"]] == [len(edges), len(edges)]


def test_orc_and_missing_inputs(run_knut, tmp_path):
    p = run_knut("gar", "cat", CORPUS / "ldbc_sample" / "orc", "person")
    assert p.returncode == 1
    assert "ORC chunks are not supported (DuckDB has no ORC reader)" in p.stderr
    assert "ldbc_sample/orc/vertex/person/id/chunk0" in p.stderr
    assert p.stdout == ""
    for cmd in (("info",), ("cat",)):
        args = ("gar", *cmd, tmp_path / "nope.graph.yml") + (("person",) if cmd == ("cat",) else ())
        p = run_knut(*args)
        assert p.returncode == 1, p.stderr
        assert "nope.graph.yml: No such file or directory" in p.stderr
    p = run_knut("gar", "cat", CORPUS / "modern_graph", "nobody")
    assert p.returncode == 1
    assert "no vertex or edge type 'nobody'" in p.stderr
    assert "person_created_software" in p.stderr
    # Several graph YAMLs in one directory: name one.
    p = run_knut("gar", "info", CORPUS / "ldbc_sample" / "parquet")
    assert p.returncode == 1 and "name one" in p.stderr
    # A chunk file gone: the message names it, before any row is printed.
    (tmp_path / "g").mkdir()
    os.system(f"cp -r '{CORPUS}/modern_graph/.' '{tmp_path}/g/'")
    os.remove(tmp_path / "g/vertex/person/name_age/chunk1")
    p = run_knut("gar", "cat", "-f", "csv", tmp_path / "g", "person")
    assert p.returncode == 1 and p.stdout == ""
    assert f"{tmp_path}/g/vertex/person/name_age/chunk1" in p.stderr


def test_limit_formats_and_usage(run_knut):
    g = CORPUS / "ldbc_sample" / "csv"
    rows = cat_json(run_knut, g, "person", "--limit", "150")
    assert len(rows) == 150 and rows[-1]["_graphArVertexIndex"] == 149
    p = run_knut("gar", "cat", "-f", "csv", "-n", "2", g, "person_knows_person")
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == [
        "_graphArSrcIndex,_graphArDstIndex,creationDate",
        "0,87,2010-07-30T15:19:53.298+0000",
        "0,623,2012-04-12T13:56:58.931+0000",
    ]
    p = run_knut("gar", "cat", g, "person", "-n", "3")
    assert p.returncode == 0 and "(3 rows)" in p.stdout and "Mahinda" in p.stdout
    for bad in (("gar", "cat", g), ("gar", "cat", "-f", "xml", g, "person"),
                ("gar", "cat", "-n", "0", g, "person"), ("gar", "info"),
                ("gar", "info", "--format", "yaml", g), ("gar", "cat", g, "person", "--bogus")):
        p = run_knut(*bad)
        assert p.returncode == 2, bad
    p = run_knut("gar", "cat", "--adj-list", "ordered_by_source", g, "person")
    assert p.returncode == 1 and "vertex type" in p.stderr


def doc_examples():
    """The `$ build/knut gar ...` examples of the Reading section of
    docs/graphar.md, with the output shown under each."""
    text = (REPO / "docs" / "graphar.md").read_text()
    section = text[text.index("\n## Reading\n"):]
    end = section.find("\n## ", 1)
    section = section if end < 0 else section[:end]
    examples = []
    for block in section.split("```sh\n")[1:]:
        lines = block[:block.index("```")].splitlines()
        assert lines and lines[0].startswith("$ build/knut gar "), lines[:1]
        examples.append((lines[0][2:], "\n".join(lines[1:]) + "\n"))
    return examples


@pytest.mark.parametrize("cmd,expected", doc_examples(), ids=lambda x: x[:60])
def test_docs_examples(knut, cmd, expected):
    args = shlex.split(cmd)
    merge = args[-1] == "2>&1"
    if merge:
        args = args[:-1]
    p = subprocess.run([str(knut), *args[1:]], cwd=REPO, capture_output=True, text=True,
                       timeout=120)
    out = p.stdout + (p.stderr if merge else "")
    assert out == expected
    assert p.returncode == (1 if merge else 0), p.stderr
