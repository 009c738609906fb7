#!/usr/bin/env python3
"""A 10M-row Spark SQL result streamed into Arrow: knut vs pyspark's client.

Starts one local Spark Connect server from the pyspark package (as the tests
do: tests/integration/spark_peer.py, with the server's default stream cut
and a 4 GiB driver),
then on the same server and query measures

  knut:    `knut spark sql --format arrow QUERY > /dev/null` (the rows decoded
           from Spark's Arrow batches and written out again as an IPC stream),
           wall time of the whole process (connect included) and its peak RSS;
  pyspark: `spark.sql(QUERY).toArrow()` in a fresh Python process, the time
           of that call only (imports and session start left out: in knut's
           favour they are not) and the process's peak RSS.

Each side runs the query once to warm the server (JIT, caches) and once
timed. Rows/s, peak RSS and the ratios are printed.

    .venv/bin/python bench/spark_client_bench.py [--knut build/knut] [--rows N]
"""
from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "integration"))
from spark_peer import SparkConnect  # noqa: E402

PYSPARK_SIDE = r"""
import resource, sys, time
from pyspark.sql import SparkSession
s = SparkSession.builder.remote(sys.argv[1]).getOrCreate()
t0 = time.perf_counter()
t = s.sql(sys.argv[2]).toArrow()
dt = time.perf_counter() - t0
print(t.num_rows, dt, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
s.stop()
"""


def run_knut(knut, peer, sql):
    cmd = [knut, "spark", "sql", "--connect", peer.url, "--token-file", str(peer.token_file),
           "--allow-insecure-token", "-f", "arrow", sql]
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    with open(os.devnull, "wb") as out:
        p = subprocess.run(cmd, stdout=out, stderr=subprocess.PIPE)
    dt = time.perf_counter() - t0
    if p.returncode:
        sys.exit(f"knut failed: {p.stderr.decode()}")
    # RUSAGE_CHILDREN's maxrss is the largest child so far: knut runs first
    return dt, max(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, before)


def run_pyspark(peer, sql):
    url = f"sc://localhost:{peer.port}/;token={peer.token}"
    p = subprocess.run([sys.executable, "-c", PYSPARK_SIDE, url, sql], capture_output=True,
                       text=True)
    if p.returncode:
        sys.exit(f"pyspark failed: {p.stderr[-2000:]}")
    rows, dt, rss = p.stdout.split()[-3:]
    return int(rows), float(dt), int(rss)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--knut", default=str(REPO / "build" / "knut"))
    ap.add_argument("--rows", type=int, default=10_000_000)
    a = ap.parse_args()
    sql = (f"SELECT id, id * 2 AS x, CAST(id AS STRING) AS s, id % 7 = 0 AS b, "
           f"CAST(id AS DOUBLE) / 3 AS d FROM range({a.rows})")
    with tempfile.TemporaryDirectory() as tmp:
        peer = SparkConnect(Path(tmp))
        peer.stream_cut_bytes = None
        peer.driver_memory = "4g"  # the server holds a 10M-row result's batches
        peer.start()
        try:
            tf = Path(tmp) / "token"
            tf.write_text(peer.token + "\n")
            peer.token_file = tf
            print(f"server: pyspark's Spark Connect on {peer.url}; query: {sql}")
            run_knut(a.knut, peer, sql)            # warm-up
            k_dt, k_rss = run_knut(a.knut, peer, sql)
            run_pyspark(peer, sql)                 # warm-up
            rows, p_dt, p_rss = run_pyspark(peer, sql)
        except SystemExit:
            print(peer.log_tail(60), file=sys.stderr)
            raise
        finally:
            peer.stop()
    assert rows == a.rows, rows
    print(f"{'':8} {'seconds':>8} {'rows/s':>12} {'peak RSS':>10}")
    print(f"{'knut':8} {k_dt:8.2f} {a.rows / k_dt:12,.0f} {k_rss / 1024:8.0f}MB")
    print(f"{'pyspark':8} {p_dt:8.2f} {a.rows / p_dt:12,.0f} {p_rss / 1024:8.0f}MB")
    print(f"ratio (knut rows/s / pyspark rows/s): {p_dt / k_dt:.2f}x; "
          f"memory (pyspark / knut): {p_rss / k_rss:.1f}x")


if __name__ == "__main__":
    main()
