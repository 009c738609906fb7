#!/usr/bin/env python3
"""Streaming aggregation: knut's native pipeline engine vs pyspark
Structured Streaming in local mode (the anchor), same input, same query.

--rows rows (default 10M) of (ts, k, v) are generated once with `knut
query` as --files Parquet files, event time moving forward evenly
(three hours of event time over all rows) with up to 2 minutes of jitter back (so some rows are late). Both engines
read the folder as a stream, one file per micro-batch, and compute

    tumbling 1-minute windows by k: count(*), sum(v), watermark 5 minutes,
    append output mode, trigger available-now

knut: a spec with `WINDOW TUMBLING (INTERVAL 1 MINUTE)` and
`read_parquet(...) WATERMARK ts DELAY OF INTERVAL 5 MINUTES` (threads 2,
memory_limit --memory); Spark: readStream.parquet (maxFilesPerTrigger 1)
.withWatermark.groupBy(window, k) into a parquet sink
(spark.sql.shuffle.partitions 2, local[2]). The emitted windows are
compared (count, sum of counts and of sums) before the figures print.
Spark appends only windows closed by the watermark, as knut does, so both
leave the last ~5 minutes open. Peak RSS: the knut process's (wait4); for
Spark the process tree (driver + JVM), sampled every 100 ms.

    .venv/bin/python bench/pipeline_stream_bench.py [--rows N] [--files F]
        [--memory 1GB] [--knut build/knut] [--no-spark]
"""

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import textwrap
import time

REPO = pathlib.Path(__file__).resolve().parents[1]

GEN = """COPY (SELECT make_timestamp(1767268800000000 + i * {step}
                                - (hash(i) % 120000000)::BIGINT) AS ts,
       (hash(i * 3) % 16)::INTEGER AS k, (hash(i * 7) % 100)::BIGINT AS v
FROM range({lo}, {hi}) t(i)) TO '{out}' (FORMAT parquet)"""

SQL = """CREATE STREAMING TABLE agg WINDOW TUMBLING (INTERVAL 1 MINUTE)
AS SELECT window_start, window_end, k, count(*) AS n, sum(v) AS total
FROM read_parquet('in/*.parquet') WATERMARK ts DELAY OF INTERVAL 5 MINUTES
GROUP BY ALL;
"""

SPARK = """
import sys
from pyspark.sql import SparkSession, functions as F
src, out, chk = sys.argv[1:4]
spark = (SparkSession.builder.master("local[2]").appName("bench")
         .config("spark.sql.shuffle.partitions", "2")
         .config("spark.sql.session.timeZone", "UTC")
         .config("spark.ui.enabled", "false").getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
schema = spark.read.parquet(src).schema
q = (spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).parquet(src)
     .withColumn("ts", F.col("ts").cast("timestamp"))  # NTZ -> TIMESTAMP (UTC session)
     .withWatermark("ts", "5 minutes")
     .groupBy(F.window("ts", "1 minute"), "k")
     .agg(F.count("*").alias("n"), F.sum("v").alias("total"))
     .select(F.col("window.start").alias("window_start"),
             F.col("window.end").alias("window_end"), "k", "n", "total")
     .writeStream.outputMode("append").format("parquet")
     .option("path", out).option("checkpointLocation", chk)
     .trigger(availableNow=True).start())
q.awaitTermination()
spark.stop()
"""


def knut(binary, *args):
    p = subprocess.run([binary, *map(str, args)], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"knut {' '.join(map(str, args))} failed:\n{p.stderr}")
    return p.stdout


def tree_rss(pid):
    """RSS bytes of pid and its descendants."""
    kids, total = {}, 0
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                kids.setdefault(ppid, []).append(int(d))
            except (OSError, IndexError, ValueError):
                pass
    todo = [pid]
    while todo:
        p = todo.pop()
        todo += kids.get(p, [])
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) * 1024
        except OSError:
            pass
    return total


def timed(cmd, env=None, sample=False):
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    peak = 0
    if sample:
        while p.poll() is None:
            peak = max(peak, tree_rss(p.pid))
            time.sleep(0.1)
        err = p.stderr.read()
        rc = p.returncode
    else:
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = rc = os.waitstatus_to_exitcode(status)
        err = p.stderr.read()
        peak = ru.ru_maxrss * 1024
        # CPU seconds too: on a shared machine wall time says little.
        print(f"  ({cmd[0].rsplit('/', 1)[-1]}: {ru.ru_utime + ru.ru_stime:.1f} CPU s)")
    if rc != 0:
        sys.exit(f"{cmd[0]} failed ({rc}):\n{err.decode()[-3000:]}")
    return time.monotonic() - t0, peak


def summary(binary, db, sql):
    out = knut(binary, "query", "--db", db, "--format", "json", sql) if db else knut(
        binary, "query", "--format", "json", sql)
    return json.loads(out.splitlines()[0])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--files", type=int, default=20)
    ap.add_argument("--memory", default="1GB")
    ap.add_argument("--knut", default=str(REPO / "build" / "knut"))
    ap.add_argument("--no-spark", action="store_true")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="knut-stream-bench-") as tmp:
        tmp = pathlib.Path(tmp)
        src = tmp / "proj" / "in"
        src.mkdir(parents=True)
        per = a.rows // a.files
        step = max(1, 3 * 3600 * 10**6 // a.rows)  # three hours of event time
        for i in range(a.files):
            knut(a.knut, "query", GEN.format(lo=i * per, hi=(i + 1) * per, step=step,
                                             out=src / f"{i:04d}.parquet"))
        proj = tmp / "proj"
        (proj / "t").mkdir()
        (proj / "t" / "agg.sql").write_text(SQL)
        (proj / "pipeline.yml").write_text(textwrap.dedent(f"""\
            name: bench
            storage: storage
            configuration:
              threads: '2'
              memory_limit: {a.memory}
              knut.max_files_per_update: '1'
            libraries:
              - glob:
                  include: t/**
            """))
        secs, rss = timed([a.knut, "pipeline", "run", str(proj), "--json"])
        db = proj / "storage" / "pipeline.duckdb"
        check = "SELECT count(*) AS windows, sum(n) AS rows, sum(total) AS total FROM {}"
        native = summary(a.knut, db, check.format("agg"))
        print(f"rows {a.rows:,} in {a.files} files; windows emitted {native['windows']:,} "
              f"(rows {native['rows']:,}, sum {native['total']:,})")
        print(f"knut native       {secs:8.2f} s  {a.rows / secs:12,.0f} rows/s  "
              f"peak RSS {rss / 2**20:7.0f} MiB  (memory_limit {a.memory})")
        if a.no_spark:
            return
        script = tmp / "spark_job.py"
        script.write_text(SPARK)
        out, chk = tmp / "spark_out", tmp / "spark_chk"
        env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
        ssecs, srss = timed([sys.executable, str(script), str(src), str(out), str(chk)], env,
                            sample=True)
        spark = summary(a.knut, None, check.format(f"read_parquet('{out}/*.parquet')"))
        same = spark == native
        print(f"pyspark streaming {ssecs:8.2f} s  {a.rows / ssecs:12,.0f} rows/s  "
              f"peak RSS {srss / 2**20:7.0f} MiB  (process tree)")
        print(f"ratio: knut is {ssecs / secs:.1f}x faster, {srss / max(rss, 1):.1f}x less memory; "
              f"results {'equal' if same else 'DIFFER: ' + json.dumps(spark)}")


if __name__ == "__main__":
    main()
