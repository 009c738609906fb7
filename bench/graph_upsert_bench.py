#!/usr/bin/env python3
"""Incremental upsert throughput into FalkorDB: knut's sink vs one query per row.

Starts a fresh FalkorDB the way the integration tests do (tests/integration/
peers.py), generates N vertices with an int64 key and 3 properties (int64,
double, string), and upserts them twice, once creating every vertex and once
updating every vertex:

  sink:    tests/tools/knut_sink_tool (knut_graph_falkor_sink: range index
           on the key created and waited for, UNWIND MERGE batches rendered
           within a byte budget, pipelined), timed inside the tool around
           knut_graph_sink_apply (index creation included in the first run);
  per-row: redis-py sending one parameterised GRAPH.QUERY per row,
           `CYPHER id=.. a=.. b=.. c=.. MERGE (n:V {id: $id}) SET n.a = $a, ...`,
           no pipelining, with the same range index created before timing.

Both graphs are checked afterwards (count and a sum over every property).
The "server ms" columns are FalkorDB's own execution time summed over the
queries, which shows where an update goes: a MERGE on an int64 key costs
the server ~25-55 us per row in the range-index lookup (a RediSearch
numeric range-tree leaf is scanned for each value), which is why the sink
looks integer keys up once per batch and updates existing vertices by node
id. --key string keeps the same data with a string key (a TAG index, MERGE
only), to show the difference. See docs/graph.md, "Update throughput".

    .venv/bin/python bench/graph_upsert_bench.py [--rows N] [--baseline-rows M]
        [--key int|string] [--tool build/tests/knut_sink_tool]
        [--sink-arg=--batch-rows --sink-arg=2000 ...]
"""

import argparse
import json
import pathlib
import subprocess
import sys
import tempfile
import time

import pyarrow as pa

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "integration"))
from peers import FalkorDB  # noqa: E402

PER_ROW = ("CYPHER id={id} a={a} b={b} c={c} "
           "MERGE (n:V {{id: $id}}) SET n.a = $a, n.b = $b, n.c = $c")


def table(n, gen, key):
    ids = pa.array(range(n), pa.int64()) if key == "int" else pa.array([f"k{i}" for i in range(n)])
    return pa.table({
        "id": ids,
        "a": pa.array([i * 7 + gen for i in range(n)], pa.int64()),
        "b": pa.array([i * 0.5 + gen for i in range(n)], pa.float64()),
        "c": pa.array([f"name {i} gen {gen}" for i in range(n)]),
    })


def sink_run(tool, peer, graph, path, tmp, extra):
    spec = tmp / "spec.json"
    spec.write_text(json.dumps([{"kind": "vertex", "file": str(path), "labels": ["V"],
                                 "keys": ["id"]}]))
    r = subprocess.run([str(tool), "--falkordb", f"redis://{peer.host}:{peer.port}",
                        "--graph", graph, *extra, str(spec)], capture_output=True, text=True,
                       check=False)
    if r.returncode != 0:
        sys.exit(f"knut_sink_tool failed: {r.stderr}")
    return json.loads(r.stdout)


def quote(s):
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


def server_ms(reply):
    """FalkorDB's 'Query internal execution time' of a --compact reply."""
    for line in reply[-1]:
        if line.startswith(b"Query internal execution time:"):
            return float(line.split()[-2])
    return 0.0


def per_row_run(client, graph, t, limit):
    cols = [t.column(k).to_pylist()[:limit] for k in ("id", "a", "b", "c")]
    server = 0.0
    t0 = time.perf_counter()
    for i, a, b, c in zip(*cols):
        key = quote(i) if isinstance(i, str) else i
        server += server_ms(client.execute_command(
            "GRAPH.QUERY", graph, PER_ROW.format(id=key, a=a, b=repr(b), c=quote(c)),
            "--compact"))
    return time.perf_counter() - t0, server


def check(peer, graph, n, gen):
    res = peer.query(graph, "MATCH (n:V) RETURN count(n), sum(n.a), sum(n.b), "
                     "sum(size(n.c))")[1][0]
    want_a = sum(i * 7 + gen for i in range(n))
    assert int(float(res[2])) == int(sum(i * 0.5 + gen for i in range(n))), (graph, res)
    assert res[0] == n and int(float(res[1])) == want_a, (graph, res, n, want_a)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=100000)
    ap.add_argument("--baseline-rows", type=int, default=0,
                    help="rows for the per-row run (default: --rows)")
    ap.add_argument("--key", choices=("int", "string"), default="int",
                    help="type of the merge key (default int64)")
    ap.add_argument("--sink-arg", action="append", default=[],
                    help="extra knut_sink_tool argument (repeat: --sink-arg=--pipeline "
                         "--sink-arg=8)")
    ap.add_argument("--tool", default=str(REPO / "build" / "tests" / "knut_sink_tool"))
    a = ap.parse_args()
    n = a.rows
    nb = a.baseline_rows or n
    with tempfile.TemporaryDirectory(prefix="knut-gbench-") as d:
        tmp = pathlib.Path(d)
        files = []
        for gen in (0, 1):
            p = tmp / f"v{gen}.arrows"
            t = table(n, gen, a.key)
            with pa.ipc.new_stream(str(p), t.schema) as w:
                w.write_table(t)
            files.append((p, t))
        with FalkorDB(tmp / "falkordb") as peer:
            results = {}
            for gen, what in ((0, "insert"), (1, "update")):
                st = sink_run(a.tool, peer, "sink", files[gen][0], tmp, a.sink_arg)
                assert st["vertices_written"] == n
                results[("sink", what)] = n / st["seconds"]
                results[("sink ms", what)] = st["server"]["execution_ms"]
            check(peer, "sink", n, 1)
            with peer.client(socket_timeout=60) as c:
                c.execute_command("GRAPH.QUERY", "rows", "CREATE INDEX FOR (n:V) ON (n.id)")
                while peer.query("rows", "CALL db.indexes() YIELD status RETURN status")[1][0][0] \
                        != b"OPERATIONAL":
                    time.sleep(0.01)
                for gen, what in ((0, "insert"), (1, "update")):
                    secs, ms = per_row_run(c, "rows", files[gen][1], nb)
                    results[("per-row", what)] = nb / secs
                    results[("per-row ms", what)] = ms
            check(peer, "rows", nb, 1)
    key = "int64" if a.key == "int" else "string"
    print(f"{n} vertex upserts ({key} key + 3 properties), per-row baseline on {nb} rows")
    print(f"{'':8} {'sink rows/s':>14} {'per-row rows/s':>16} {'ratio':>8}"
          f" {'sink server us/row':>19} {'per-row server us/row':>22}")
    for what in ("insert", "update"):
        s, r = results[("sink", what)], results[("per-row", what)]
        print(f"{what:8} {s:14,.0f} {r:16,.0f} {s / r:7.1f}x"
              f" {results[('sink ms', what)] * 1000 / n:19.1f}"
              f" {results[('per-row ms', what)] * 1000 / nb:22.1f}")


if __name__ == "__main__":
    main()
