#!/usr/bin/env python3
"""GraphAr write and scan: `knut gar import` / `knut gar cat` against anchors.

An LDBC-like graph is generated once as Parquet source tables (with knut
query, i.e. DuckDB): person (id int64, firstName, lastName, gender strings,
birthday date) and person_knows_person (src, dst int64 keys, creationDate
timestamp). Then, in one run:

write, full size
  knut     `knut gar import` (DuckDB: key mapping, sorts, chunk COPYs;
           --memory-limit bounds its buffer pool, it spills past that)
  anchor   pyarrow writing the same layout: the same chunk sizes, vertex
           index column, ordered_by_source and ordered_by_dest adj lists
           sorted by (key, other end), edge_count<i>, padded int64 offsets,
           vertex counts, Parquet with the same codec. The reference package
           (`graphar`) cannot be the full-size anchor: its builders take one
           row at a time from Python and cannot write date or timestamp.
write, subset (int64/string only, what the reference builders accept)
  knut     `knut gar import` of the subset
  ref      the reference's VerticesBuilder/EdgesBuilder (graphar 0.13.0.dev1,
           row at a time; the rows are parsed from CSV first, not timed)
scan, full size
  knut     `knut gar cat GRAPH person -f arrow > /dev/null` (every property
           group joined on the vertex index) and `... person_knows_person
           --adj-list ordered_by_source` (adj list + properties)
  anchor   pyarrow.dataset streaming the same chunk files (each group's files
           read on their own: no join, so less work than knut does)
scan, subset
  knut     `knut gar cat` as above on the graph the reference wrote
  ref      VerticesCollection / EdgesCollection iteration reading every
           property (the reference can read int64 and string only)

Every step runs in its own process; times are wall clock, memory is the
child's peak RSS (getrusage via wait4). Sanity checks (not timed): both
full-size outputs have the same files and count bytes, and `graphar check`
accepts knut's graph.

    .venv/bin/python bench/graphar_bench.py [--vertices 1000000]
        [--edges 10000000] [--knut build/knut] [--workdir /tmp/knut-gar-bench]
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[1]


def run(cmd, cwd=None, stdout=subprocess.DEVNULL):
    """Runs cmd; returns (seconds, peak RSS in MB, stdout text). Output goes
    to temp files, so wait4 can reap the child and report its rusage."""
    with tempfile.TemporaryFile("w+") as err, tempfile.TemporaryFile("w+") as out:
        t0 = time.perf_counter()
        p = subprocess.Popen([str(c) for c in cmd], cwd=cwd, stderr=err,
                             stdout=out if stdout == subprocess.PIPE else stdout)
        _, status, ru = os.wait4(p.pid, 0)
        secs = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        out.seek(0)
        if p.returncode != 0:
            sys.exit(f"failed ({p.returncode}): {' '.join(map(str, cmd))}\n{err.read()[-3000:]}")
        return secs, ru.ru_maxrss / 1024.0, out.read()


def py(snippet, *args, cwd=None, stdout=subprocess.PIPE):
    return run([sys.executable, "-c", snippet, *args], cwd=cwd, stdout=stdout)


# ---- source tables ----------------------------------------------------------

PERSON_SQL = """
SELECT {base} + (i * 7919) % {n} AS id,
  ['Jan','Maria','Ali','Chen','Olga','Raj','Ana','Yuki','Omar','Lena'][1 + (hash(i) % 10)::INTEGER]
    || ((i * 13) % 100)::VARCHAR AS firstName,
  ['Smith','Garcia','Kim','Ivanova','Singh','Nguyen','Muller','Rossi','Sato','Diaz']
    [1 + (hash(i + 1) % 10)::INTEGER] AS lastName,
  CASE WHEN hash(i + 2) % 2 = 0 THEN 'male' ELSE 'female' END AS gender,
  DATE '1950-01-01' + (hash(i + 3) % 20000)::INTEGER AS birthday
FROM range({n}) t(i)"""

KNOWS_SQL = """
SELECT {base} + (hash(e) % {n})::BIGINT AS src, {base} + (hash(e * 31 + 7) % {n})::BIGINT AS dst,
  TIMESTAMP '2010-01-01' + to_milliseconds((hash(e + 5) % 100000000000)::BIGINT) AS creationDate
FROM range({m}) t(e)"""

BASE = 100_000_000


def generate(knut, d: pathlib.Path, n, m, sub_n, sub_m):
    meta = {"n": n, "m": m, "sub_n": sub_n, "sub_m": sub_m, "v": 1}
    mf = d / "sources.json"
    if mf.is_file() and json.loads(mf.read_text()) == meta:
        print(f"sources: reusing {d}")
        return
    d.mkdir(parents=True, exist_ok=True)
    person = PERSON_SQL.format(base=BASE, n=n)
    knows = KNOWS_SQL.format(base=BASE, n=n, m=m)
    sub_p = PERSON_SQL.format(base=BASE, n=sub_n)
    # The subset holds what the reference builders take: int64 and string.
    sub_k = f"SELECT src, dst, epoch_ms(creationDate) AS creationDate FROM ({KNOWS_SQL})".format(
        base=BASE, n=sub_n, m=sub_m)
    sql = (f"COPY ({person}) TO 'person.parquet' (FORMAT parquet);"
           f"COPY ({knows}) TO 'knows.parquet' (FORMAT parquet);"
           f"COPY (SELECT id, firstName, lastName, gender FROM ({sub_p})) TO 'person_sub.csv' "
           "(FORMAT csv, HEADER);"
           f"COPY ({sub_k}) TO 'knows_sub.csv' (FORMAT csv, HEADER)")
    secs, _, _ = run([knut, "query", sql], cwd=d)
    mf.write_text(json.dumps(meta))
    print(f"sources: {n} vertices, {m} edges (+ subset {sub_n}/{sub_m}) in {secs:.1f} s")


def config(out, person, knows, vchunk, echunk, mem, threads, full):
    groups = ("      - properties: [id]\n      - properties: [firstName, lastName, gender]\n" +
              ("      - properties: [birthday]\n" if full else ""))
    return f"""graph: ldbc
output: {out}
vertex_chunk_size: {vchunk}
edge_chunk_size: {echunk}
settings: {{memory_limit: {mem}, threads: {threads}}}
vertices:
  - type: person
    table: {person}
    key: id
    property_groups:
{groups}edges:
  - type: knows
    src: {{type: person, key: src}}
    dst: {{type: person, key: dst}}
    table: {knows}
    adj_lists: [ordered_by_source, ordered_by_dest]
    properties: [creationDate]
"""


# ---- anchors ----------------------------------------------------------------

ANCHOR_WRITE = r"""
import json, math, os, struct, sys
import pyarrow as pa, pyarrow.compute as pc, pyarrow.parquet as pq
a = json.loads(sys.argv[1])
src, out, vcs, ecs = a["src"], a["out"], a["vchunk"], a["echunk"]
def put(t, path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    pq.write_table(t, path, compression="snappy")
def count(path, v):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    open(path, "wb").write(struct.pack("<q", v))
person = pq.read_table(f"{src}/person.parquet")
n = person.num_rows
idx = pc.subtract(pc.cumulative_sum(pa.array([1] * n, pa.int64())), 1)
V = f"{out}/vertex/person/"
for g in (["id"], ["firstName", "lastName", "gender"], ["birthday"]):
    for c in range(math.ceil(n / vcs)):
        cols = {"_graphArVertexIndex": idx.slice(c * vcs, vcs)}
        cols.update({k: person[k].slice(c * vcs, vcs) for k in g})
        put(pa.table(cols), f"{V}{'_'.join(g)}/chunk{c}")
count(f"{V}vertex_count", n)
knows = pq.read_table(f"{src}/knows.parquet")
s = pc.cast(pc.index_in(knows["src"], value_set=person["id"]), pa.int64())
d = pc.cast(pc.index_in(knows["dst"], value_set=person["id"]), pa.int64())
assert s.null_count == 0 and d.null_count == 0
edges = pa.table({"s": s, "d": d, "creationDate": pc.cast(knows["creationDate"], pa.timestamp("ms"))})
del knows, s, d
nparts = math.ceil(n / vcs)
verts = pa.table({"v": idx})
for adj, key, other in (("ordered_by_source", "s", "d"), ("ordered_by_dest", "d", "s")):
    E = f"{out}/edge/person_knows_person/{adj}/"
    t = edges.sort_by([(key, "ascending"), (other, "ascending")])
    deg = t.group_by(key).aggregate([(key, "count")]).rename_columns(["v", "n"])
    deg = verts.join(deg, "v", join_type="left outer").sort_by("v")
    deg = pc.fill_null(deg["n"], 0)
    start = 0
    for i in range(nparts):
        dd = deg.slice(i * vcs, vcs)
        offs = pa.concat_arrays([pa.array([0], pa.int64()),
                                 pc.cumulative_sum(dd.combine_chunks())])
        if len(offs) < vcs + 1:  # padded to vcs + 1 entries, as C++
            offs = pa.concat_arrays([offs, pa.array([offs[-1].as_py()] * (vcs + 1 - len(offs)),
                                                    pa.int64())])
        put(pa.table({"_graphArOffset": offs}), f"{E}offset/chunk{i}")
        cnt = offs[-1].as_py()
        for j in range(math.ceil(cnt / ecs)):
            sl = t.slice(start + j * ecs, min(ecs, cnt - j * ecs))
            put(pa.table({"_graphArSrcIndex": sl["s"], "_graphArDstIndex": sl["d"]}),
                f"{E}adj_list/part{i}/chunk{j}")
            put(sl.select(["creationDate"]), f"{E}creationDate/part{i}/chunk{j}")
        count(f"{E}edge_count{i}", cnt)
        start += cnt
    count(f"{E}vertex_count", n)
"""

ANCHOR_SCAN = r"""
import glob, sys
import pyarrow.dataset as ds
root, what = sys.argv[1], sys.argv[2]
if what == "vertices":
    dirs = [d for d in sorted(glob.glob(f"{root}/vertex/person/*/")) if "labels" not in d]
else:
    base = f"{root}/edge/person_knows_person/ordered_by_source"
    dirs = [f"{base}/adj_list/", f"{base}/creationDate/"]
rows = 0
for d in dirs:
    files = sorted(glob.glob(f"{d}**/chunk*", recursive=True))
    for b in ds.dataset(files, format="parquet").to_batches():
        rows += b.num_rows
print(rows)
"""

REF_WRITE = r"""
import csv, json, os, sys, time
import graphar as ga
from graphar._core import AdjListType as A, FileType as F, Type, InfoVersion
a = json.loads(sys.argv[1])
out = a["out"].rstrip("/") + "/"
os.makedirs(out, exist_ok=True)
rows = list(csv.reader(open(a["person"])))[1:]
edges = list(csv.reader(open(a["knows"])))[1:]
t0 = time.perf_counter()
ver = InfoVersion.parse("gar/v1")
P = lambda n, t, pk=False: ga.Property(n, ga.DataType(t), pk, not pk)
vi = ga.VertexInfo("person", a["vchunk"], [
    ga.PropertyGroup([P("id", Type.INT64, True)], F.PARQUET),
    ga.PropertyGroup([P("firstName", Type.STRING), P("lastName", Type.STRING),
                      P("gender", Type.STRING)], F.PARQUET)], [], "vertex/person/", ver)
ei = ga.EdgeInfo("person", "knows", "person", a["echunk"], a["vchunk"], a["vchunk"], True,
                 [ga.AdjacentList(A.ordered_by_source, F.PARQUET),
                  ga.AdjacentList(A.ordered_by_dest, F.PARQUET)],
                 [ga.PropertyGroup([P("creationDate", Type.INT64)], F.PARQUET)],
                 "edge/person_knows_person/", ver)
g = ga.GraphInfo("ldbc", [vi], [ei], [], out, ver)
vi.save(out + "person.vertex.yaml"); ei.save(out + "person_knows_person.edge.yaml")
g.save(out + "ldbc.graph.yml")
index = {}
vb = ga.VerticesBuilder.Make(vi, out)
for i, (vid, first, last, gender) in enumerate(rows):
    index[vid] = i
    v = ga.BuilderVertex()
    v.AddProperty("id", int(vid)); v.AddProperty("firstName", first)
    v.AddProperty("lastName", last); v.AddProperty("gender", gender)
    vb.AddVertex(v)
vb.Dump()
for adj in (A.ordered_by_source, A.ordered_by_dest):
    eb = ga.EdgesBuilder.Make(ei, out, adj, len(rows))
    for s, d, c in edges:
        e = ga.BuilderEdge(index[s], index[d]); e.AddProperty("creationDate", int(c))
        eb.AddEdge(e)
    eb.Dump()
print(json.dumps({"builders_s": time.perf_counter() - t0}))
"""

REF_SCAN = r"""
import json, sys, graphar
from graphar._core import AdjListType as A
gi = graphar.GraphInfo.load(sys.argv[1])
n = 0
for v in graphar.VerticesCollection.Make(gi, "person"):
    v.id(); v.property("id"); v.property("firstName"); v.property("lastName"); v.property("gender")
    n += 1
m = 0
for e in graphar.EdgesCollection.Make(gi, "person", "knows", "person", A.ordered_by_source):
    e.source(); e.destination(); e.property("creationDate")
    m += 1
print(json.dumps([n, m]))
"""


def files(root: pathlib.Path):
    return {str(p.relative_to(root)) for p in root.rglob("*")
            if p.is_file() and not p.name.endswith((".yml", ".yaml"))}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vertices", type=int, default=1_000_000)
    ap.add_argument("--edges", type=int, default=10_000_000)
    ap.add_argument("--subset-vertices", type=int, default=100_000)
    ap.add_argument("--subset-edges", type=int, default=1_000_000)
    ap.add_argument("--vchunk", type=int, default=65536)
    ap.add_argument("--echunk", type=int, default=262144)
    ap.add_argument("--memory-limit", default="1GB", help="knut's DuckDB memory_limit")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--knut", default=os.environ.get("KNUT_BIN") or str(REPO / "build" / "knut"))
    ap.add_argument("--graphar-cli", default=str(REPO / ".venv" / "bin" / "graphar"))
    ap.add_argument("--workdir", default="/tmp/knut-gar-bench")
    a = ap.parse_args()
    knut = pathlib.Path(a.knut).resolve()
    w = pathlib.Path(a.workdir)
    src = w / "src"
    t_start = time.perf_counter()
    generate(knut, src, a.vertices, a.edges, a.subset_vertices, a.subset_edges)
    for d in ("knut", "pyarrow", "knut_sub", "ref_sub"):
        shutil.rmtree(w / d, ignore_errors=True)
    results = []

    def timed(f, *args, **kw):
        # Each step starts with no dirty pages of the one before: the
        # VM's disk writeback would otherwise bill one step for another.
        os.sync()
        return f(*args, **kw)

    def row(name, k, anchor, anchor_name):
        results.append((name, k, anchor, anchor_name))
        print(f"  {name}: knut {k[0]:.2f} s {k[1]:.0f} MB | {anchor_name} {anchor[0]:.2f} s "
              f"{anchor[1]:.0f} MB", flush=True)

    # -- write, full size
    cfg = w / "import.yml"
    cfg.write_text(config(w / "knut", src / "person.parquet", src / "knows.parquet", a.vchunk,
                          a.echunk, a.memory_limit, a.threads, True))
    k = timed(run, [knut, "gar", "import", "-c", cfg, "-q"])
    an = timed(py, ANCHOR_WRITE, json.dumps({"src": str(src), "out": str(w / "pyarrow"),
                                             "vchunk": a.vchunk, "echunk": a.echunk}))
    row(f"write {a.vertices} V + {a.edges} E", k, an, "pyarrow")
    mine, theirs = files(w / "knut"), files(w / "pyarrow")
    assert mine == theirs, f"layouts differ: {sorted(mine ^ theirs)[:10]}"
    for f in mine:
        if "count" in f:
            assert (w / "knut" / f).read_bytes() == (w / "pyarrow" / f).read_bytes(), f
    for y in (w / "knut").glob("*.y*ml"):
        shutil.copy(y, w / "pyarrow" / y.name)
    chk = subprocess.run([a.graphar_cli, "check", "-p", str(w / "knut" / "ldbc.graph.yml")],
                         capture_output=True, text=True)
    print(f"  checks: same {len(mine)} files and counts as the anchor; graphar check: "
          f"{'valid' if chk.returncode == 0 else 'INVALID ' + chk.stdout[-300:]}")

    # -- write, subset (reference builders)
    cfg = w / "import_sub.yml"
    cfg.write_text(config(w / "knut_sub", src / "person_sub.csv", src / "knows_sub.csv",
                          a.vchunk, a.echunk, a.memory_limit, a.threads, False))
    k = timed(run, [knut, "gar", "import", "-c", cfg, "-q"])
    r = timed(py, REF_WRITE, json.dumps({
        "out": str(w / "ref_sub"), "person": str(src / "person_sub.csv"),
        "knows": str(src / "knows_sub.csv"), "vchunk": a.vchunk, "echunk": a.echunk}))
    builders = json.loads(r[2])["builders_s"]
    row(f"write {a.subset_vertices} V + {a.subset_edges} E (int64/string)", k,
        (builders, r[1]), "graphar builders")

    # -- scans, full size
    g = w / "knut"
    for what, typ in (("vertices", "person"), ("edges", "person_knows_person")):
        cmd = [knut, "gar", "cat", g, typ, "-f", "arrow"]
        if what == "edges":
            cmd += ["--adj-list", "ordered_by_source"]
        k = run(cmd)
        an = py(ANCHOR_SCAN, str(g), what)
        row(f"scan {what} ({an[2].strip()} group rows)", k, an, "pyarrow.dataset")

    # -- scans, subset written by the reference
    g = w / "ref_sub" / "ldbc.graph.yml"
    k1 = run([knut, "gar", "cat", g, "person", "-f", "arrow"])
    k2 = run([knut, "gar", "cat", g, "person_knows_person", "--adj-list", "ordered_by_source",
              "-f", "arrow"])
    r = py(REF_SCAN, str(g))
    row(f"scan subset V+E {json.loads(r[2])}", (k1[0] + k2[0], max(k1[1], k2[1])), r,
        "graphar collections")

    print(f"\n{'step':<48} {'knut s':>8} {'MB':>6} {'anchor':<20} {'s':>8} {'MB':>6} "
          f"{'knut/anchor':>11}")
    for name, k, an, an_name in results:
        print(f"{name:<48} {k[0]:>8.2f} {k[1]:>6.0f} {an_name:<20} {an[0]:>8.2f} {an[1]:>6.0f} "
              f"{k[0] / an[0]:>11.2f}")
    print(f"\ntotal bench time {time.perf_counter() - t_start:.0f} s (workdir {w})")


if __name__ == "__main__":
    main()
