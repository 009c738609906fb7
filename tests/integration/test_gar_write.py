"""End-to-end tests of the GraphAr writer through `knut gar import`.

Source tables are generated as Parquet and CSV files, imported with a
config, and the written graph is checked by the reference:

* the `graphar` package (always in a subprocess, see garref.py) loads it,
  says it is validated, and reads the same number of vertices and edges
  and the same property values as the sources hold. It can read int64 and
  string properties only (not date, timestamp as such, double, bool, list,
  labels), so values are compared for those and the rest is checked with
  pyarrow against the types of the GraphAr spec (§4.1 of the reference);
* `graphar check` says the graph is valid;
* the reference's own writer (VerticesBuilder / EdgesBuilder) writes the
  same data into a second directory, and the two are compared file by
  file: the same set of files, the same column names and Arrow types, the
  same values, offsets and count bytes. Known differences, asserted as
  such: the index column is OPTIONAL in knut's Parquet (DuckDB 1.4 cannot
  write REQUIRED columns; Spark writes it OPTIONAL too) where the C++
  writer makes it REQUIRED, and the order of edges that tie on the sort
  key in ordered adj lists (the reference's std::sort is not stable; knut
  sorts by (key, other end, input row)).

Then the refusals, each naming the file:line:col of the config or the
table, row and column of the data.
"""
from __future__ import annotations

import json
import pathlib
import re
import subprocess
import textwrap

import pyarrow as pa
import pyarrow.parquet as pq
import pyarrow.csv as pacsv
import pytest

import garref

REPO = pathlib.Path(__file__).resolve().parents[2]
GRAPHAR_CLI = REPO / ".venv" / "bin" / "graphar"

N = 50        # vertices
E = 300       # edges
VCHUNK = 8
# Not 16: with 48 edges per part, a multiple of the chunk size, the
# reference's EdgesCollection iterator asks for a chunk past the last one
# and fails, also on a graph its own EdgesBuilder wrote.
ECHUNK = 15
ADJ = ["ordered_by_source", "ordered_by_dest", "unordered_by_source", "unordered_by_dest"]
KNOWS = "edge/person_knows_person"


def vid(i: int) -> int:
    """Key of the vertex with index i (input row i): a permutation of 1000..1049."""
    return 1000 + (i * 37) % N


def src_index(e: int) -> int:
    return (e * 7) % N


def dst_index(e: int) -> int:
    return (e * 11 + 3 + e // 50) % N


def knut_query(knut, sql, cwd):
    r = subprocess.run([str(knut), "query", sql], cwd=cwd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


@pytest.fixture(scope="module")
def src(tmp_path_factory, knut):
    """person.{parquet,csv} and knows.{parquet,csv}, written with knut query."""
    d = tmp_path_factory.mktemp("gar_src")
    person = f"""
        SELECT 1000 + (i * 37) % {N} AS id,
               CASE WHEN i % 11 = 5 THEN NULL ELSE 'first' || i END AS firstName,
               'last' || (i % 7) AS lastName,
               CASE WHEN i % 2 = 0 THEN 'male' ELSE 'female' END AS gender,
               DATE '1980-01-01' + (i * 97)::INTEGER AS birthday,
               i * 0.25 AS score,
               TIMESTAMP '2010-01-01 00:00:00.5' + to_minutes(i) AS joined,
               ['t' || (i % 3), 'u'] AS tags,
               CASE WHEN i % 4 = 0 THEN 'admin;guest' WHEN i % 4 = 1 THEN 'guest' ELSE '' END
                   AS roles
        FROM range({N}) t(i) ORDER BY i"""
    knows = f"""
        SELECT 1000 + (((e * 7) % {N}) * 37) % {N} AS src,
               1000 + (((e * 11 + 3 + e // 50) % {N}) * 37) % {N} AS dst,
               e * 3 AS weight, 'n' || e AS note,
               TIMESTAMP '2012-06-01 08:00:00' + to_seconds(e * 3600) AS creationDate
        FROM range({E}) t(e) ORDER BY e"""
    knut_query(knut, f"COPY ({person}) TO 'person.parquet' (FORMAT parquet)", d)
    knut_query(knut, f"COPY ({knows}) TO 'knows.parquet' (FORMAT parquet)", d)
    knut_query(knut, f"COPY (SELECT * EXCLUDE (tags) FROM ({person})) TO 'person.csv' "
                     "(FORMAT csv, HEADER)", d)
    knut_query(knut, f"COPY ({knows}) TO 'knows.csv' (FORMAT csv, HEADER)", d)
    return d


def write_config(d: pathlib.Path, name: str, text: str) -> pathlib.Path:
    p = d / name
    p.write_text(textwrap.dedent(text))
    return p


def import_graph(run_knut, cfg, *extra):
    r = run_knut("gar", "import", "-c", cfg, *extra)
    assert r.returncode == 0, r.stderr
    path = pathlib.Path(r.stdout.strip())
    assert path.is_file()
    return path


def graphar_check(graph_yml):
    r = subprocess.run([str(GRAPHAR_CLI), "check", "-p", str(graph_yml)], capture_output=True,
                       text=True, timeout=300)
    return r.returncode, r.stdout + r.stderr


READ_SNIPPET = r"""
import json, sys, graphar
from graphar._core import AdjListType as A
gi = graphar.GraphInfo.load(sys.argv[1])
out = {"validated": gi.is_validated(), "vertices": [], "edges": {}}
vc = graphar.VerticesCollection.Make(gi, "person")
out["vertex_size"] = vc.size()
for v in vc:
    out["vertices"].append([v.id(), v.property("id"), v.property("lastName"),
                            v.property("firstName") if v.IsValid("firstName") else None])
for t in sys.argv[2].split(","):
    ec = graphar.EdgesCollection.Make(gi, "person", "knows", "person", getattr(A, t))
    rows = [[e.source(), e.destination(), e.property("weight"), e.property("note")] for e in ec]
    out["edges"][t] = {"size": ec.size(), "rows": rows}
print(json.dumps(out))
"""


def expected_vertices():
    return [[i, vid(i), f"last{i % 7}", None if i % 11 == 5 else f"first{i}"] for i in range(N)]


def expected_edges():
    return sorted([src_index(e), dst_index(e), e * 3, f"n{e}"] for e in range(E))


CONFIG = """\
    graph: social
    output: {out}
    file_type: {ft}
    vertex_chunk_size: {vchunk}
    edge_chunk_size: {echunk}
    vertices:
      - type: person
        table: {person}
        key: id
        labels: [admin, guest]
        label_column: roles
        property_groups:
          - properties: [id]
          - properties: [lastName, gender]
          - properties: [firstName, birthday, score, joined{tags}]
    edges:
      - type: knows
        src: {{type: person, key: src}}
        dst: {{type: person, key: dst}}
        table: {knows}
        adj_lists: [{adj}]
        property_groups:
          - properties: [weight, note]
          - properties: [creationDate]
    """


def config(ft, out, ext):
    return CONFIG.format(out=out, ft=ft, vchunk=VCHUNK, echunk=ECHUNK, person=f"person.{ext}",
                         knows=f"knows.{ext}", adj=", ".join(ADJ),
                         tags=", tags" if ft == "parquet" else "")


REF_WRITER = r"""
import json, os, sys
import graphar as ga
from graphar._core import AdjListType as A, FileType as F, Type, InfoVersion
args = json.loads(sys.argv[1])
out = args["out"].rstrip("/") + "/"
os.makedirs(out, exist_ok=True)
ver = InfoVersion.parse("gar/v1")
ft = F.CSV if args["file_type"] == "csv" else F.PARQUET
T = {"int64": Type.INT64, "string": Type.STRING}
P = lambda n, t, pk=False: ga.Property(n, ga.DataType(T[t]), pk, not pk)
vi = ga.VertexInfo("person", args["vchunk"],
                   [ga.PropertyGroup([P(n, t, n == "id") for n, t in g], ft) for g in args["vgroups"]],
                   [], "vertex/person/", ver)
ei = ga.EdgeInfo("person", "knows", "person", args["echunk"], args["vchunk"], args["vchunk"], True,
                 [ga.AdjacentList(getattr(A, a), ft) for a in args["adj"]],
                 [ga.PropertyGroup([P(n, t) for n, t in g], ft) for g in args["egroups"]],
                 "edge/person_knows_person/", ver)
g = ga.GraphInfo("social", [vi], [ei], [], out, ver)
vi.save(out + "person.vertex.yaml"); ei.save(out + "person_knows_person.edge.yaml")
g.save(out + "social.graph.yml")
vb = ga.VerticesBuilder.Make(vi, out)
for row in args["vertices"]:
    v = ga.BuilderVertex()
    for k, val in row.items():
        v.AddProperty(k, val)
    vb.AddVertex(v)
vb.Dump()
for a in args["adj"]:
    eb = ga.EdgesBuilder.Make(ei, out, getattr(A, a), len(args["vertices"]))
    for s, d, props in args["edges"]:
        e = ga.BuilderEdge(s, d)
        for k, val in props.items():
            e.AddProperty(k, val)
        eb.AddEdge(e)
    eb.Dump()
print(json.dumps({"ok": g.is_validated()}))
"""


def reference_write(out: pathlib.Path, ft: str):
    """The same int64/string data, written by the reference's builders."""
    args = {
        "out": str(out), "file_type": ft, "vchunk": VCHUNK, "echunk": ECHUNK, "adj": ADJ,
        "vgroups": [[["id", "int64"]], [["lastName", "string"], ["gender", "string"]]],
        "egroups": [[["weight", "int64"], ["note", "string"]]],
        "vertices": [{"id": vid(i), "lastName": f"last{i % 7}",
                      "gender": "male" if i % 2 == 0 else "female"} for i in range(N)],
        "edges": [[src_index(e), dst_index(e), {"weight": e * 3, "note": f"n{e}"}]
                  for e in range(E)],
    }
    assert garref.run(REF_WRITER, json.dumps(args)) == {"ok": True}


def data_files(root: pathlib.Path, under: list[str]) -> set[str]:
    return {str(p.relative_to(root)) for u in under for p in (root / u).rglob("*") if p.is_file()}


def read_chunk(path: pathlib.Path, ft: str) -> pa.Table:
    return pq.read_table(path) if ft == "parquet" else pacsv.read_csv(path)


def compare_with_reference(ours: pathlib.Path, ref: pathlib.Path, ft: str):
    """File-by-file comparison of the parts both writers produced."""
    under = ["vertex/person/id", "vertex/person/lastName_gender", "vertex/person/vertex_count"]
    for a in ADJ:
        under += [f"{KNOWS}/{a}/adj_list", f"{KNOWS}/{a}/weight_note"]
    mine, theirs = data_files(ours, under), data_files(ref, under)
    for a in ADJ:
        mine |= {str(p.relative_to(ours)) for p in (ours / KNOWS / a).glob("*count*")}
        mine |= {str(p.relative_to(ours)) for p in (ours / KNOWS / a).glob("offset/*")}
        theirs |= {str(p.relative_to(ref)) for p in (ref / KNOWS / a).glob("*count*")}
        theirs |= {str(p.relative_to(ref)) for p in (ref / KNOWS / a).glob("offset/*")}
    assert mine == theirs
    assert len(mine) > 4 * 10
    for rel in sorted(mine):
        a, b = ours / rel, ref / rel
        if "count" in pathlib.Path(rel).name:
            assert a.read_bytes() == b.read_bytes(), rel
            continue
        ta, tb = read_chunk(a, ft), read_chunk(b, ft)
        # Same column names and Arrow types; nullability of the index column
        # differs in Parquet (OPTIONAL here, REQUIRED from C++).
        assert [(f.name, f.type) for f in ta.schema] == [(f.name, f.type) for f in tb.schema], rel
        if ft == "parquet" and rel.startswith("vertex/"):
            assert ta.schema.field("_graphArVertexIndex").nullable
            assert not tb.schema.field("_graphArVertexIndex").nullable
        # Ordered lists: rows tied on the sort key may come in another order
        # (compared per part below); everything else is identical.
        tie_order = "/ordered_by_" in rel and ("/adj_list/" in rel or "/weight_note/" in rel)
        if tie_order:
            continue
        if ft == "csv":
            # Same dialect: quoted header, quoted strings, bare numbers.
            assert a.read_bytes() == b.read_bytes(), rel
        assert ta.to_pylist() == tb.to_pylist(), rel
    # Ordered lists: per part, the same edges with the same properties.
    for a in ("ordered_by_source", "ordered_by_dest"):
        for part in sorted((ours / KNOWS / a / "adj_list").iterdir()):
            rows = []
            for side in (ours, ref):
                got = []
                for chunk in sorted((side / KNOWS / a / "adj_list" / part.name).iterdir(),
                                    key=lambda p: int(p.name[5:])):
                    adj = read_chunk(chunk, ft).to_pylist()
                    props = read_chunk(side / KNOWS / a / "weight_note" / part.name / chunk.name,
                                       ft).to_pylist()
                    got += [tuple(x.values()) + tuple(y.values()) for x, y in zip(adj, props)]
                rows.append(sorted(got))
            assert rows[0] == rows[1], f"{a}/{part.name}"
            key = 0 if a == "ordered_by_source" else 1
            mine_keys = [r[key] for r in read_chunk(
                ours / KNOWS / a / "adj_list" / part.name / "chunk0", ft).to_pylist()
                for r in [tuple(r.values())]]
            assert mine_keys == sorted(mine_keys)


@pytest.mark.parametrize("ft,ext", [("parquet", "parquet"), ("csv", "csv")])
def test_import_matches_reference(src, run_knut, tmp_path, ft, ext):
    cfg = write_config(src, f"import_{ft}.yml", config(ft, tmp_path / "knut", ext))
    graph = import_graph(run_knut, cfg)

    rc, text = graphar_check(graph)
    assert rc == 0 and "Graph is valid" in text, text

    got = garref.run(READ_SNIPPET, graph, ",".join(ADJ))
    assert got["validated"] is True
    assert got["vertex_size"] == N
    # The reference reads a null string as "" (IsValid is true for it);
    # pyarrow below sees the nulls themselves.
    assert [v[:3] + [v[3] or None] for v in got["vertices"]] == expected_vertices()
    for a in ADJ:
        assert got["edges"][a]["size"] == E
        assert sorted(got["edges"][a]["rows"]) == expected_edges(), a

    reference_write(tmp_path / "ref", ft)
    compare_with_reference(tmp_path / "knut", tmp_path / "ref", ft)

    # Types the reference cannot read, checked against the spec's Arrow types.
    v = tmp_path / "knut" / "vertex" / "person"
    t = read_chunk(v / "firstName_birthday_score_joined" / "chunk0", ft) if ft == "csv" else \
        read_chunk(v / "firstName_birthday_score_joined_tags" / "chunk0", ft)
    if ft == "parquet":
        assert [(f.name, f.type) for f in t.schema] == [
            ("_graphArVertexIndex", pa.int64()), ("firstName", pa.string()),
            ("birthday", pa.date32()), ("score", pa.float64()),
            ("joined", pa.timestamp("ms")), ("tags", pa.list_(pa.field("element", pa.string())))]
        assert t.column("tags").to_pylist()[:2] == [["t0", "u"], ["t1", "u"]]
        assert t.column("joined").to_pylist()[1].isoformat() == "2010-01-01T00:01:00.500000"
    else:
        assert t.column_names == ["_graphArVertexIndex", "firstName", "birthday", "score",
                                  "joined"]
    assert t.column("score").to_pylist()[:3] == [0.0, 0.25, 0.5]
    if ft == "csv":
        # Arrow reads empty CSV fields as "" unless told: unquoted empty is
        # null, quoted "" is the empty string.
        t = pacsv.read_csv(v / "firstName_birthday_score_joined" / "chunk0",
                           convert_options=pacsv.ConvertOptions(strings_can_be_null=True,
                                                                quoted_strings_can_be_null=False))
    assert t.column("firstName").to_pylist()[5] is None
    assert t.column("firstName").to_pylist()[4] == "first4"
    labels = pq.read_table(v / "labels" / "chunk0")
    assert [(f.name, f.type) for f in labels.schema] == [("admin", pa.bool_()),
                                                         ("guest", pa.bool_())]
    assert labels.column("admin").to_pylist() == [i % 4 == 0 for i in range(VCHUNK)]
    assert labels.column("guest").to_pylist() == [i % 4 in (0, 1) for i in range(VCHUNK)]
    e = read_chunk(tmp_path / "knut" / KNOWS / "ordered_by_source" / "creationDate" / "part0" /
                   "chunk0", ft)
    assert e.column_names == ["creationDate"]
    if ft == "parquet":
        assert e.schema.field("creationDate").type == pa.timestamp("ms")


def test_import_glob_query_and_key_order(src, run_knut, tmp_path):
    """Sources as a glob and as SQL; vertex indices in key order."""
    cfg = write_config(src, "import_query.yml", f"""\
        graph: q
        vertex_chunk_size: 16
        vertices:
          - type: person
            table: "person*.parquet"
            key: id
            order: key
            properties: [id, {{name: surname, column: lastName, type: string}}]
        edges:
          - type: knows
            src: {{type: person, key: a}}
            dst: {{type: person, key: b}}
            query: SELECT src AS a, dst AS b, weight FROM 'knows.parquet' WHERE weight < 300
            adj_lists: [{{type: ordered_by_source, file_type: csv}}]
        """)
    graph = import_graph(run_knut, cfg, "-o", tmp_path / "g")
    got = garref.run(READ_SNIPPET.replace('v.property("lastName")', 'v.property("surname")')
                     .replace('v.property("firstName") if v.IsValid("firstName") else None',
                              'None')
                     .replace(', e.property("note")', ''), graph, "ordered_by_source")
    assert got["validated"]
    assert [v[1] for v in got["vertices"]] == list(range(1000, 1000 + N))
    rows = got["edges"]["ordered_by_source"]["rows"]
    assert len(rows) == 100
    # Index = key - 1000 in key order.
    want = sorted([vid(src_index(e)) - 1000, vid(dst_index(e)) - 1000, e * 3] for e in range(100))
    assert sorted(rows) == want
    rc, text = graphar_check(graph)
    assert rc == 0, text


def test_unknown_endpoints_rejected_or_recorded(src, knut, run_knut, tmp_path):
    # Edge 41 (weight 123, row 42) points at a vertex that does not exist.
    knut_query(knut, "COPY (SELECT * REPLACE (CASE WHEN weight = 123 THEN 4242 ELSE dst END "
                     "AS dst) FROM 'knows.parquet') TO 'bad_knows.parquet' (FORMAT parquet)", src)
    base = f"""\
        graph: bad
        output: {tmp_path / 'bad'}
        vertices:
          - {{type: person, table: person.parquet, key: id, properties: [id]}}
        edges:
          - type: knows
            src: {{type: person, key: src}}
            dst: {{type: person, key: dst}}
            table: bad_knows.parquet
            properties: [weight]
        """
    cfg = write_config(src, "bad.yml", base)
    r = run_knut("gar", "import", "-c", cfg)
    assert r.returncode == 1
    assert "bad_knows.parquet: row 42: dst key (dst) = (4242) matches no 'person' vertex" \
        in r.stderr, r.stderr
    cfg = write_config(src, "skip.yml", base.rstrip(" ") + f"""\
            on_unknown_key: skip
            rejects: {tmp_path / 'rejects.parquet'}
        """)
    graph = import_graph(run_knut, cfg, "--overwrite")
    assert "1 rows skipped" in run_knut("gar", "import", "-c", cfg, "--overwrite").stderr
    rej = pq.read_table(tmp_path / "rejects.parquet").to_pylist()
    assert rej == [{"row": 42, "src": vid(src_index(41)), "dst": 4242, "weight": 123}]
    got = garref.run(READ_SNIPPET.replace('v.property("lastName")', 'None')
                     .replace('v.property("firstName") if v.IsValid("firstName") else None',
                              'None')
                     .replace(', e.property("note")', ''), graph, "ordered_by_source")
    assert got["edges"]["ordered_by_source"]["size"] == E - 1


# The config refused is a config error (exit 2); the data (or a config that
# does not fit the data) refused is exit 1 (docs/cli.md, "Exit codes").
@pytest.mark.parametrize("body,message,code", [
    # A typo in a key is refused at its position, not ignored.
    ("""\
     graph: g
     output: o
     vertices:
       - type: person
         tabel: person.parquet
     """, "bad.yml:5:12: vertices[0]: unknown key 'tabel'", 2),
    ("""\
     graph: g
     output: o
     vertices:
       - {type: person, table: person.parquet, key: id, chunk_size: -3}
     """, "bad.yml:4:64: vertices[0]: 'chunk_size' must be an integer > 0", 2),
    ("""\
     graph: g
     output: o
     vertices:
       - {type: person, table: person.parquet, key: id}
     edges:
       - {type: knows, src: {type: person, key: src}, dst: {type: city, key: dst},
          table: knows.parquet}
     """, "bad.yml:6:62: edges[0].dst: no vertex type 'city' in vertices", 2),
    ("""\
     graph: g
     output: o
     file_type: orc
     vertices:
       - {type: person, table: person.parquet, key: id}
     """, "bad.yml:3:12: file_type: file_type orc cannot be written", 2),
    ("""\
     graph: g
     output: o
     vertices:
       - type: person
         table: person.parquet
         key: id
         properties:
           - id
           - {name: x, column: nope}
     """, "bad.yml:9:9: vertex person property 'x': no column 'nope' in", 1),
    # Data errors name the table, row and column.
    ("""\
     graph: g
     output: o
     vertices:
       - type: person
         table: person.csv
         key: id
         properties: [id, {name: gender, type: int64}]
     """, "person.csv: row 1, column 'gender': cannot convert 'male' to BIGINT", 1),
    ("""\
     graph: g
     output: o
     vertices:
       - type: person
         table: person.csv
         key: gender
         properties: [id]
     """, "key (gender) = (male) appears 25 times (rows 1 and 49)", 1),
    # A key that does not even convert to the vertex key's type is unknown.
    ("""\
     graph: g
     output: o
     vertices:
       - {type: person, table: person.parquet, key: id, properties: [id]}
     edges:
       - type: knows
         src: {type: person, key: a}
         dst: {type: person, key: dst}
         query: "SELECT 'v' || src AS a, dst FROM 'knows.parquet'"
     """, "row 1: src key (a) = (v1000) matches no 'person' vertex (300 edge rows", 1),
])
def test_config_and_data_errors(src, run_knut, tmp_path, body, message, code):
    cfg = write_config(src, "bad.yml", body)
    r = run_knut("gar", "import", "-c", cfg, "-o", tmp_path / "out")
    assert r.returncode == code, r.stderr
    assert message in r.stderr, r.stderr


def test_usage_and_existing_output(src, run_knut, tmp_path):
    assert run_knut("gar", "import").returncode == 2
    r = run_knut("gar", "import", "--help")
    assert r.returncode == 0 and "--config FILE" in r.stdout and "Importing tables" in r.stdout
    assert run_knut("gar", "import", "-c", "x.yml", "--threads", "zero").returncode == 2
    cfg = write_config(src, "small.yml", """\
        graph: small
        vertices:
          - {type: person, table: person.parquet, key: id, properties: [id, lastName]}
        """)
    import_graph(run_knut, cfg, "-o", tmp_path / "s")
    r = run_knut("gar", "import", "-c", cfg, "-o", tmp_path / "s")
    assert r.returncode == 1 and "exists and is not empty" in r.stderr
    import_graph(run_knut, cfg, "-o", tmp_path / "s", "--overwrite")
    rc, text = graphar_check(tmp_path / "s" / "small.graph.yml")
    assert rc == 0, text


def test_docs_import_example(knut, run_knut, tmp_path):
    """The "Importing tables" example of docs/graphar.md runs as shown."""
    doc = (REPO / "docs" / "graphar.md").read_text()
    section = doc[doc.index("### Importing tables"):doc.index("### Testing the writer")]
    blocks = re.findall(r"```(\w+)\n(.*?)```", section, re.S)
    setup = [b for lang, b in blocks if lang == "sh" and b.startswith("knut query")][0]
    for line in setup.strip().splitlines():
        assert line.startswith('knut query "') and line.endswith('"')
        knut_query(knut, line[len('knut query "'):-1], tmp_path)
    (tmp_path / "social.yml").write_text([b for lang, b in blocks if lang == "yaml"][0])
    shown = [b for lang, b in blocks if lang == "sh" and b.startswith("$ knut gar import")][0]
    r = run_knut("gar", "import", "-c", "social.yml", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "out/social.graph.yml\n"
    for line in r.stderr.splitlines():  # timings vary; the rest must match
        assert re.sub(r"[0-9.]+ s$", "", line) in shown
    cat = shown[shown.index("$ knut gar cat"):].split("\n", 1)
    r = run_knut(*cat[0][len("$ knut "):].split(), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == cat[1]
    rc, text = graphar_check(tmp_path / "out" / "social.graph.yml")
    assert rc == 0 and "Graph is valid" in text, text


def tree(d: pathlib.Path) -> dict:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def test_failed_overwrite_leaves_the_old_graph(src, knut, run_knut, tmp_path):
    """`gar import --overwrite` writes beside the old graph and swaps the new
    one in only when every step succeeded. Before: a failed import left the
    vertices renumbered under the old edges, and `gar validate` said 0 errors."""
    knut_query(knut, "COPY (SELECT * REPLACE (CASE WHEN weight = 123 THEN 4242 ELSE dst END "
                     "AS dst) FROM 'knows.parquet') TO 'bad_knows2.parquet' (FORMAT parquet)", src)
    out = tmp_path / "g"

    def cfg(name, person_where, knows_table):
        return write_config(src, name, f"""\
            graph: swap
            output: {out}
            vertices:
              - type: person
                query: SELECT * FROM 'person.parquet' WHERE {person_where}
                key: id
                properties: [id]
            edges:
              - type: knows
                src: {{type: person, key: src}}
                dst: {{type: person, key: dst}}
                table: {knows_table}
            """)

    graph = import_graph(run_knut, cfg("good.yml", "true", "knows.parquet"))
    before = tree(out)
    # fewer vertices (renumbered), then an edge step that fails
    r = run_knut("gar", "import", "-c", cfg("bad.yml", "id % 2 = 0", "bad_knows2.parquet"),
                 "--overwrite")
    assert r.returncode == 1 and "matches no 'person' vertex" in r.stderr, r.stderr
    assert tree(out) == before
    assert [p.name for p in tmp_path.iterdir()] == ["g"]  # no staging left behind
    r = run_knut("gar", "validate", graph)
    assert r.returncode == 0, r.stdout + r.stderr
    # without --overwrite: refused before anything is written
    r = run_knut("gar", "import", "-c", cfg("good.yml", "true", "knows.parquet"))
    assert r.returncode == 1 and "pass --overwrite" in r.stderr, r.stderr
    # a good overwrite replaces the whole directory
    (out / "stale.txt").write_text("from before")
    graph = import_graph(run_knut, cfg("good.yml", "true", "knows.parquet"), "--overwrite")
    assert not (out / "stale.txt").exists()
    assert tree(out) == before
    assert [p.name for p in tmp_path.iterdir()] == ["g"]
