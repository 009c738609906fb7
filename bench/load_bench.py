#!/usr/bin/env python3
"""Loading benchmark: `knut load` (GraphAr in) against `falkordb-bulk-insert`
(CSV in) on one FalkorDB server, same LDBC-like graph.

The graph: Person vertices (id int, firstName string, lastName string,
age int, score double) and KNOWS edges (since int, weight double), random
endpoints. Generated with DuckDB through `knut query`, written as GraphAr
with `knut gar import` and as the equivalent CSVs for the bulk loader
(node file: id first; relation file: src, dst first). Both loaders build a
fresh graph (knut uses GRAPH.BULK then), the knut graph is deleted before
the bulk loader runs, and both graphs' counts are checked.

Prints both times, the ratio (bulk-loader time / knut time; the goal is
>= 2) and knut's peak RSS (from wait4, so only the knut process).

    .venv/bin/python bench/load_bench.py                  # 1M vertices, 5M edges
    .venv/bin/python bench/load_bench.py --vertices 100000 --edges 500000

falkordb-bulk-loader is installed into .venv on first use (bench only; it
is not a test requirement), pinned with a FalkorDB client that works with
the tests' redis==5.2.1: FalkorDB 1.2.0 declares redis<6, while 1.8.1
imports redis.driver_info (redis-py 6) and fails with "No module named
'redis.driver_info'".
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "integration"))

from peers import FalkorDB  # noqa: E402


def run(cmd, cwd=None):
    r = subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"failed: {' '.join(map(str, cmd))}\n{r.stdout}\n{r.stderr}")
    return r


BULK_LOADER_PINS = ["falkordb-bulk-loader==1.2.0", "FalkorDB==1.2.0"]


def bulk_loader() -> Path:
    exe = Path(sys.executable).parent / "falkordb-bulk-insert"
    probe = subprocess.run([sys.executable, "-c", "import falkordb_bulk_loader.bulk_insert"],
                           capture_output=True)
    if not exe.exists() or probe.returncode != 0:
        run([sys.executable, "-m", "pip", "install", "-q", *BULK_LOADER_PINS])
    return exe


def generate(knut, d: Path, nv: int, ne: int):
    q = lambda sql: run([knut, "query", sql], cwd=d)  # noqa: E731
    q(f"COPY (SELECT i AS id, 'first' || (i % 5000) AS firstName, 'last' || (i % 7919) AS lastName,"
      f" 18 + i % 60 AS age, (i % 1000) / 8.0 AS score FROM range({nv}) t(i))"
      " TO 'person.parquet' (FORMAT parquet)")
    q(f"COPY (SELECT (hash(i) % {nv})::BIGINT AS src, (hash(i + {ne}) % {nv})::BIGINT AS dst,"
      f" 1262304000 + i % 300000000 AS since, (i % 97) / 4.0 AS weight FROM range({ne}) t(i))"
      " TO 'knows.parquet' (FORMAT parquet)")
    q("COPY (SELECT id, firstName, lastName, age, score FROM 'person.parquet')"
      " TO 'Person.csv' (FORMAT csv, HEADER)")
    q("COPY (SELECT src, dst, since, weight FROM 'knows.parquet') TO 'KNOWS.csv' (FORMAT csv, HEADER)")
    (d / "bench.yml").write_text(
        "graph: bench\noutput: gar\nvertices:\n  - type: Person\n    table: person.parquet\n"
        "    key: id\nedges:\n  - type: KNOWS\n    src: {type: Person, key: src}\n"
        "    dst: {type: Person, key: dst}\n    table: knows.parquet\n"
        "    adj_lists: [ordered_by_source]\n")
    run([knut, "gar", "import", "-q", "-c", "bench.yml"], cwd=d)
    return d / "gar" / "bench.graph.yml"


def counts(peer, graph):
    with peer.client() as c:
        n = c.execute_command("GRAPH.RO_QUERY", graph, "MATCH (n) RETURN count(n)")[1][0][0]
        e = c.execute_command("GRAPH.RO_QUERY", graph, "MATCH ()-[e]->() RETURN count(e)")[1][0][0]
    return n, e


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vertices", type=int, default=1_000_000)
    ap.add_argument("--edges", type=int, default=5_000_000)
    ap.add_argument("--knut", default=os.environ.get("KNUT_BIN", REPO / "build" / "knut"))
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    a = ap.parse_args()
    a.knut = Path(a.knut).resolve()
    bl = bulk_loader()
    d = Path(tempfile.mkdtemp(prefix="knut-load-bench-"))
    peer = FalkorDB(d / "falkordb")
    try:
        t0 = time.monotonic()
        graph = generate(a.knut, d, a.vertices, a.edges)
        print(f"generated {a.vertices} vertices, {a.edges} edges in {time.monotonic() - t0:.1f} s",
              flush=True)
        peer.start()
        url = f"redis://127.0.0.1:{peer.port}"

        t0 = time.monotonic()
        p = subprocess.Popen([str(a.knut), "load", "-q", "--graphar", str(graph), "--falkordb", url,
                              "--graph", "knut"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
        _, status, ru = os.wait4(p.pid, 0)
        knut_s = time.monotonic() - t0
        out, err = p.stdout.read(), p.stderr.read()
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"knut load failed:\n{out}\n{err}")
        rss_mb = ru.ru_maxrss / 1024
        kn = counts(peer, "knut")
        print(f"knut load:            {knut_s:8.2f} s  {out.strip()}  peak RSS {rss_mb:.0f} MiB",
              flush=True)
        with peer.client() as c:
            c.execute_command("GRAPH.DELETE", "knut")

        t0 = time.monotonic()
        run([bl, "bulk", "-u", url, "-N", "Person", d / "Person.csv", "-R", "KNOWS",
             d / "KNOWS.csv"])
        bl_s = time.monotonic() - t0
        bn = counts(peer, "bulk")
        print(f"falkordb-bulk-insert: {bl_s:8.2f} s", flush=True)
        print(f"counts: knut {kn}, bulk loader {bn}")
        if kn != bn or kn != (a.vertices, a.edges):
            print("WARNING: counts differ")
        print(f"ratio (bulk loader / knut): {bl_s / knut_s:.2f}x  (goal >= 2x)")
        print(f"knut peak RSS: {rss_mb:.0f} MiB (goal < 500 MiB)")
    finally:
        peer.stop()
        if not a.keep:
            shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
