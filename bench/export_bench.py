#!/usr/bin/env python3
"""`knut export -f parquet` against DuckDB's own `COPY ... TO 'x.parquet'`.

A mixed table (int64, double, varchar, date, timestamp, a nullable int,
a decimal) of --rows rows (default 5,000,000) is built once in a DuckDB
file with `knut query`. Then, in one run, each in its own process:

  knut     knut export -f parquet --db FILE -o out.parquet "SELECT * FROM t"
  anchor   python -c "duckdb.connect(FILE, read_only=True).execute(
               \"COPY (SELECT * FROM t) TO 'x.parquet' (FORMAT parquet,
               COMPRESSION snappy)\")"   (the duckdb package, same engine
           version as knut embeds: tests/requirements.txt)

and, for reference, `knut export -f graphar --label t --chunk-rows 262144`
over the same rows (no anchor: a different, larger output).

Both Parquet runs use the same threads and memory_limit. Times are wall
clock; memory is the child's peak RSS (wait4's ru_maxrss; the anchor's
includes the Python interpreter, ~30 MB). The outputs are checked to have
the same row count and schema (not timed).

    .venv/bin/python bench/export_bench.py [--rows 5000000] [--knut build/knut]
        [--threads 2] [--memory-limit 1GB] [--workdir /tmp/knut-export-bench]
"""

from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[1]

TABLE_SQL = """
CREATE OR REPLACE TABLE t AS
SELECT i AS id, i * 0.25 AS score, 'name-' || (i % 100000)::VARCHAR AS name,
  md5(i::VARCHAR) AS h, DATE '2000-01-01' + (i % 9000)::INTEGER AS day,
  TIMESTAMP '2020-01-01' + to_seconds(i) AS ts,
  CASE WHEN i % 7 = 0 THEN NULL ELSE i % 1000 END AS maybe,
  (i % 100000)::DECIMAL(12, 2) / 100 AS price
FROM range({n}) r(i)"""


def run(cmd):
    """Runs cmd; returns (seconds, peak RSS in MB)."""
    with tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        p = subprocess.Popen([str(c) for c in cmd], stdout=subprocess.DEVNULL, stderr=err)
        _, status, ru = os.wait4(p.pid, 0)
        secs = time.perf_counter() - t0
        if os.waitstatus_to_exitcode(status) != 0:
            err.seek(0)
            sys.exit(f"failed: {' '.join(map(str, cmd))}\n{err.read()[-3000:]}")
        return secs, ru.ru_maxrss / 1024.0


ANCHOR = """
import sys, duckdb
db, out, threads, mem = sys.argv[1:]
con = duckdb.connect(db, read_only=True, config={"threads": threads, "memory_limit": mem})
con.execute("COPY (SELECT * FROM t) TO '" + out.replace("'", "''") +
            "' (FORMAT parquet, COMPRESSION snappy)")
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=5_000_000)
    ap.add_argument("--knut", default=str(REPO / "build" / "knut"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--memory-limit", default="1GB")
    ap.add_argument("--workdir", default="/tmp/knut-export-bench")
    a = ap.parse_args()
    import pyarrow.parquet as pq

    work = pathlib.Path(a.workdir)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    db = work / "t.duckdb"
    print(f"building {a.rows:,} rows in {db} ...", flush=True)
    run([a.knut, "query", "--db", db, TABLE_SQL.format(n=a.rows)])

    common = ["--db", db, "--threads", a.threads, "--memory-limit", a.memory_limit]
    k_out, d_out, g_out = work / "knut.parquet", work / "duckdb.parquet", work / "gar"
    k_secs, k_rss = run([a.knut, "export", "-f", "parquet", "-o", k_out, *common,
                         "SELECT * FROM t"])
    d_secs, d_rss = run([sys.executable, "-c", ANCHOR, db, d_out, str(a.threads),
                         a.memory_limit])
    g_secs, g_rss = run([a.knut, "export", "-f", "graphar", "-o", g_out, "--label", "t",
                         "--key", "id", "--chunk-rows", "262144", *common, "SELECT * FROM t"])

    kf, df = pq.ParquetFile(k_out), pq.ParquetFile(d_out)
    assert kf.metadata.num_rows == df.metadata.num_rows == a.rows
    assert kf.schema_arrow == df.schema_arrow, (kf.schema_arrow, df.schema_arrow)

    n = a.rows
    print(f"\nexport of {n:,} rows (8 mixed columns) to Parquet, threads={a.threads}, "
          f"memory_limit={a.memory_limit}")
    print(f"{'':28}{'seconds':>9}{'rows/s':>14}{'peak RSS MB':>13}{'file MB':>9}")
    for name, s, r, f in (("knut export -f parquet", k_secs, k_rss, k_out),
                          ("duckdb COPY TO (anchor)", d_secs, d_rss, d_out)):
        print(f"{name:28}{s:9.2f}{n / s:14,.0f}{r:13.0f}{f.stat().st_size / 2**20:9.1f}")
    gsize = sum(p.stat().st_size for p in g_out.rglob("*") if p.is_file())
    print(f"{'knut export -f graphar':28}{g_secs:9.2f}{n / g_secs:14,.0f}{g_rss:13.0f}"
          f"{gsize / 2**20:9.1f}")
    print(f"\nratio knut/anchor: throughput {d_secs / k_secs:.2f}x, peak RSS "
          f"{k_rss / d_rss:.2f}x")


if __name__ == "__main__":
    main()
