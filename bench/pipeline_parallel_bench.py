#!/usr/bin/env python3
"""`knut pipeline run --parallel N` vs the serial run (--parallel 1, the
anchor), same spec, same input.

The spec has --branches independent branches, each a streaming table over
its own folder of --files small CSV drops and a materialized view
aggregating it, plus one gold view joining every branch: the shape where
running flows side by side can pay (many small flows, each mostly fixed
cost). Every configuration runs in a fresh copy of the project (a first,
full run), best of --reps; the gold table and every branch's row count
are compared with the serial run's before the figures print.

    .venv/bin/python bench/pipeline_parallel_bench.py [--branches 16]
        [--files 20] [--rows 2000] [--parallel 2,4] [--reps 3] [--threads T]
        [--knut build/knut]
"""

import argparse
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

import duckdb

REPO = pathlib.Path(__file__).resolve().parents[1]


def project(root: pathlib.Path, branches: int, files: int, rows: int, threads: int) -> None:
    (root / "t").mkdir(parents=True)
    conf = f"configuration:\n  threads: '{threads}'\n" if threads else ""
    (root / "pipeline.yml").write_text(
        "name: bench\nstorage: storage\n" + conf +
        "libraries:\n  - glob:\n      include: t/**\n")
    sql = []
    for b in range(branches):
        d = root / f"in{b}"
        d.mkdir()
        for f in range(files):
            lo = f * rows
            (d / f"{f:04d}.csv").write_text(
                "k,v\n" + "".join(f"{(i * 7 + b) % 97},{(i * 13) % 1000}\n"
                                  for i in range(lo, lo + rows)))
        sql.append(f"CREATE STREAMING TABLE raw{b} AS SELECT * FROM read_csv('in{b}/*.csv');\n"
                   f"CREATE MATERIALIZED VIEW agg{b} AS SELECT k, count(*) AS n, sum(v) AS s "
                   f"FROM raw{b} GROUP BY k;\n")
    sql.append("CREATE MATERIALIZED VIEW gold AS SELECT k, "
               + " + ".join(f"coalesce(agg{b}.s, 0)" for b in range(branches))
               + " AS total FROM agg0 "
               + " ".join(f"FULL JOIN agg{b} USING (k)" for b in range(1, branches)) + ";\n")
    (root / "t" / "p.sql").write_text("".join(sql))


def result(root: pathlib.Path, branches: int):
    con = duckdb.connect(str(root / "storage" / "pipeline.duckdb"), read_only=True)
    try:
        gold = con.execute("SELECT * FROM gold ORDER BY ALL").fetchall()
        counts = [con.execute(f"SELECT count(*) FROM raw{b}").fetchone()[0]
                  for b in range(branches)]
        return gold, counts
    finally:
        con.close()


def timed_run(knut: str, src: pathlib.Path, work: pathlib.Path, n: int, branches: int):
    if work.exists():
        shutil.rmtree(work)
    shutil.copytree(src, work)
    t0 = time.perf_counter()
    p = subprocess.run([knut, "pipeline", "run", str(work), "--parallel", str(n)],
                       capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"--parallel {n} failed: {p.stderr}")
    return dt, result(work, branches)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--branches", type=int, default=16)
    ap.add_argument("--files", type=int, default=20)
    ap.add_argument("--rows", type=int, default=2000)
    ap.add_argument("--parallel", default="2,4")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0,
                    help="DuckDB threads per query (configuration: threads); 0: DuckDB's "
                         "default, every core")
    ap.add_argument("--knut", default=str(REPO / "build" / "knut"))
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        src = tmp / "src"
        project(src, a.branches, a.files, a.rows, a.threads)
        flows = a.branches * 2 + 1
        print(f"{a.branches} branches x {a.files} CSV files x {a.rows} rows; {flows} flows; "
              f"DuckDB threads {a.threads or 'default'}")
        best = {}
        want = None
        for n in [1] + [int(x) for x in a.parallel.split(",")]:
            times = []
            for _ in range(a.reps):
                dt, got = timed_run(a.knut, src, tmp / f"p{n}", n, a.branches)
                if want is None:
                    want = got
                if got != want:
                    sys.exit(f"--parallel {n}: the tables differ from --parallel 1")
                times.append(dt)
            best[n] = min(times)
        base = best[1]
        print("| --parallel | best wall time | vs --parallel 1 |")
        print("|---|---|---|")
        for n, t in best.items():
            print(f"| {n} | {t:.2f} s | {base / t:.2f}x |")
        print("tables equal to the serial run's: yes")


if __name__ == "__main__":
    main()
