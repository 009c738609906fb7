#!/usr/bin/env python3
"""Viewer layout: knut's layered DAG layout vs Graphviz `dot` (the anchor).

A pipeline of --flows flows is generated once (materialized views in 25
SQL files; each flow after the first 20 reads 1-3 earlier ones, mostly
near it, sometimes far back, so edges span several layers), loaded and
resolved once. Then:
  knut:   tests/tools/knut_viewer_bench times knut_viewer_graph_from_pipeline
          (graph + layered layout + edge routes) --reps times in one
          process, best and median in ms;
  anchor: `dot -Tsvg` (Graphviz, the same layered-layout family) on the
          same DAG from `knut pipeline show --format dot`, one process
          per rep (its time includes starting and writing the SVG: an
          upper bound for its layout), best of --anchor-reps.
The issue's target is < 100 ms for 500 flows (printed, not asserted).

    .venv/bin/python bench/viewer_layout_bench.py [--flows 500] [--reps 20]
        [--tool build/tests/knut_viewer_bench] [--knut build/knut]
"""

import argparse
import json
import pathlib
import random
import shutil
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[1]


def make_pipeline(root: pathlib.Path, flows: int) -> None:
    rnd = random.Random(16)
    (root / "sql").mkdir(parents=True)
    (root / "pipeline.yml").write_text(
        "name: bench\nstorage: storage\nlibraries:\n  - glob:\n      include: sql/**\n")
    files = [[] for _ in range(25)]
    for i in range(flows):
        if i < 20:
            body = f"SELECT {i} AS id, 'x' AS v"
        else:
            reads = set()
            for _ in range(rnd.randint(1, 3)):
                j = i - rnd.randint(1, 12) if rnd.random() < 0.8 else rnd.randrange(i)
                reads.add(max(j, 0))
            body = " UNION ALL ".join(f"SELECT id, v FROM f{j:04d}" for j in sorted(reads))
        files[i % 25].append(f"CREATE MATERIALIZED VIEW f{i:04d} AS {body};\n")
    for k, stmts in enumerate(files):
        (root / "sql" / f"part{k:02d}.sql").write_text("".join(stmts))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--flows", type=int, default=500)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--anchor-reps", type=int, default=1)
    ap.add_argument("--tool", default=str(REPO / "build/tests/knut_viewer_bench"))
    ap.add_argument("--knut", default=str(REPO / "build/knut"))
    ap.add_argument("--svg", help="also write knut's SVG of the layout here")
    a = ap.parse_args()
    dot = shutil.which("dot")
    if not dot:
        print("the anchor needs Graphviz: apt-get install graphviz", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp) / "p"
        make_pipeline(root, a.flows)
        cmd = [a.tool, str(root / "pipeline.yml"), str(a.reps)] + (["--svg", a.svg] if a.svg else [])
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        k = json.loads(out)
        dot_src = subprocess.run([a.knut, "pipeline", "show", str(root), "--format", "dot"],
                                 check=True, capture_output=True, text=True).stdout
        # the same DAG as knut lays out: flows only (dot's file nodes aside)
        times = []
        for _ in range(a.anchor_reps):
            t0 = time.perf_counter()
            subprocess.run([dot, "-Tsvg", "-o", "/dev/null"], input=dot_src, text=True,
                           check=True)
            times.append((time.perf_counter() - t0) * 1000)
    best_dot = min(times)
    print(f"{k['flows']} flows: {k['nodes']} nodes, {k['edges']} edges, {k['layers']} layers, "
          f"drawing {k['width']}x{k['height']} px")
    print(f"knut layout      best {k['best_ms']:9.2f} ms  median {k['median_ms']:9.2f} ms  "
          f"({k['reps']} reps, one process)")
    print(f"graphviz dot     best {best_dot:9.2f} ms  (whole process, {a.anchor_reps} reps)")
    print(f"ratio dot/knut (best): {best_dot / max(k['best_ms'], 1e-6):.1f}x   "
          f"target knut < 100 ms: {'met' if k['best_ms'] < 100 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
