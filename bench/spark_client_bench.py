#!/usr/bin/env python3
"""A 10M-row Spark SQL result streamed into Arrow: knut vs pyspark's client.

Starts one local Spark Connect server from the pyspark package (as the tests
do: tests/integration/spark_peer.py, with the server's default stream cut
and a 4 GiB driver),
then on the same server and query measures

  knut:    `knut spark sql --format arrow QUERY > /dev/null` (the rows decoded
           from Spark's Arrow batches and written out again as an IPC stream),
           wall time of the whole process (connect included), its CPU time
           and peak RSS (wait4: that child only);
  pyspark: `spark.sql(QUERY).toArrow()` in a fresh Python process, the time
           and CPU of that call only (imports and session start left out: in
           knut's favour they are not) and the process's peak RSS.

Each side runs the query once to warm the server (JIT, caches), then the
sides take turns, --rounds timed runs each (knut, pyspark, knut, ...), so
a load change on the shared machine hits both; the best run of each side
counts. For every timed run the server's own log says how long its sender
waited for the client to take the data (ExecuteGrpcResponseSender's
waitingForSend, summed over the operation's streams) and for results:
that splits the time between the client and the server. Rows/s, CPU,
peak RSS and the ratios are printed.

    .venv/bin/python bench/spark_client_bench.py [--knut build/knut] [--rows N] [--rounds R]
"""
from __future__ import annotations

import argparse
import os
import re
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
r0 = resource.getrusage(resource.RUSAGE_SELF)
t0 = time.perf_counter()
t = s.sql(sys.argv[2]).toArrow()
dt = time.perf_counter() - t0
r1 = resource.getrusage(resource.RUSAGE_SELF)
cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
print(t.num_rows, dt, cpu, r1.ru_maxrss)
s.stop()
"""

SENDER = re.compile(r"opId=[0-9a-f-]+.*waitingForResults=([\d.]+) ms waitingForSend=([\d.]+) ms")


class ServerLog:
    """The server's sender statistics for what ran since the last mark."""

    def __init__(self, path: Path):
        self.path, self.pos = path, 0

    def mark(self):
        self.pos = self.path.stat().st_size

    def waits(self) -> tuple[float, float]:
        """(seconds waiting for results, seconds waiting for the client)."""
        with open(self.path, "rb") as f:
            f.seek(self.pos)
            text = f.read().decode(errors="replace")
        res = send = 0.0
        for m in SENDER.finditer(text):
            res += float(m.group(1))
            send += float(m.group(2))
        return res / 1000, send / 1000


def run_knut(knut, peer, sql):
    cmd = [knut, "spark", "sql", "--connect", peer.url, "--token-file", str(peer.token_file),
           "--allow-insecure-token", "-f", "arrow", sql]
    t0 = time.perf_counter()
    with open(os.devnull, "wb") as out:
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.PIPE)
        err = p.stderr.read()
        _, status, ru = os.wait4(p.pid, 0)
    dt = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode:
        sys.exit(f"knut failed: {err.decode()}")
    return dt, ru.ru_utime + ru.ru_stime, ru.ru_maxrss


def run_pyspark(peer, sql):
    url = f"sc://localhost:{peer.port}/;token={peer.token}"
    p = subprocess.run([sys.executable, "-c", PYSPARK_SIDE, url, sql], capture_output=True,
                       text=True)
    if p.returncode:
        sys.exit(f"pyspark failed: {p.stderr[-2000:]}")
    rows, dt, cpu, rss = p.stdout.split()[-4:]
    assert int(rows) == ROWS[0], rows
    return float(dt), float(cpu), int(rss)


ROWS = [0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--knut", default=str(REPO / "build" / "knut"))
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args()
    ROWS[0] = a.rows
    sql = (f"SELECT id, id * 2 AS x, CAST(id AS STRING) AS s, id % 7 = 0 AS b, "
           f"CAST(id AS DOUBLE) / 3 AS d FROM range({a.rows})")
    runs = {"knut": [], "pyspark": []}
    with tempfile.TemporaryDirectory() as tmp:
        peer = SparkConnect(Path(tmp))
        peer.stream_cut_bytes = None
        peer.driver_memory = "4g"  # the server holds a 10M-row result's batches
        peer.start()
        log = ServerLog(peer.log_path)
        try:
            tf = Path(tmp) / "token"
            tf.write_text(peer.token + "\n")
            peer.token_file = tf
            print(f"server: pyspark's Spark Connect on {peer.url}; query: {sql}")
            run_knut(a.knut, peer, sql)            # warm-up
            run_pyspark(peer, sql)                 # warm-up
            for _ in range(a.rounds):
                for side in ("knut", "pyspark"):
                    log.mark()
                    r = run_knut(a.knut, peer, sql) if side == "knut" else run_pyspark(peer, sql)
                    time.sleep(1)  # the sender's last statistics line
                    runs[side].append(r + log.waits())
                    dt, cpu, rss, wres, wsend = runs[side][-1]
                    print(f"  {side:8} {dt:7.2f} s  cpu {cpu:6.2f} s  server waited: results "
                          f"{wres:6.2f} s, client {wsend:6.2f} s", flush=True)
        except SystemExit:
            print(peer.log_tail(60), file=sys.stderr)
            raise
        finally:
            peer.stop()
    k = min(runs["knut"])
    p = min(runs["pyspark"])
    print(f"best of {a.rounds} (taking turns):")
    print(f"{'':8} {'seconds':>8} {'rows/s':>12} {'CPU s':>7} {'peak RSS':>10} "
          f"{'server waited for client':>25}")
    for name, (dt, cpu, rss, _, wsend) in (("knut", k), ("pyspark", p)):
        print(f"{name:8} {dt:8.2f} {a.rows / dt:12,.0f} {cpu:7.2f} {rss / 1024:8.0f}MB "
              f"{wsend:23.2f} s")
    print(f"ratio (knut rows/s / pyspark rows/s): {p[0] / k[0]:.2f}x; "
          f"memory (pyspark / knut): {p[2] / k[2]:.1f}x; CPU (pyspark / knut): "
          f"{p[1] / k[1]:.1f}x")


if __name__ == "__main__":
    main()
