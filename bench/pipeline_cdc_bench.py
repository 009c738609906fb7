#!/usr/bin/env python3
"""AUTO CDC apply: knut's native pipeline engine vs a hand-written DuckDB
SQL merge (the limit), SCD2 and SCD1.

A changelog of --changes changes over --keys keys is generated once with
`knut query` as Parquet (sequence values distinct and out of order, ~10 %
deletes, a name and an amount per upsert). A pipeline loads it into a
streaming table `changes` and applies it with AUTO CDC into `target`.

Timed, each its own process, best of --reps:
  native: `knut pipeline run --full-refresh target` — the bronze table is
          idle, the CDC flow re-applies every change (the whole changelog
          into an empty target: the change log, the checks, the rows);
  hand:   `knut query` on the same database: one CREATE TABLE AS with the
          SQL a person would write for exactly this changelog (no checks,
          no change log, no incremental state).
Both run with DuckDB threads=2, memory_limit=2GB. The two results are
compared (must be equal) before the figures are printed. Memory is each
process's peak RSS.

    .venv/bin/python bench/pipeline_cdc_bench.py [--changes N] [--keys K]
        [--reps R] [--knut build/knut]
"""

import argparse
import os
import pathlib
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[1]

GEN = """COPY (SELECT hash(i) % {keys} AS id,
       CASE WHEN hash(i * 3) % 10 = 0 THEN NULL ELSE 'n' || (hash(i * 5) % 50) END AS name,
       CASE WHEN hash(i * 3) % 10 = 0 THEN NULL ELSE (hash(i * 7) % 100000) / 10.0 END AS amount,
       CASE WHEN hash(i * 3) % 10 = 0 THEN 'D' ELSE 'U' END AS op,
       (i * 7919) % 1000003 + (i // 1000003) * 1000003 AS seq
FROM range({changes}) t(i)) TO '{out}' (FORMAT parquet)"""

SETTINGS = "SET threads = 2; SET memory_limit = '2GB'; "

HAND = {
    2: """CREATE OR REPLACE TABLE hand AS
WITH e AS (SELECT id, name, amount, seq, op = 'D' AS del FROM changes),
h AS (SELECT *, NOT del AND (lag(del) OVER w IS DISTINCT FROM false
                             OR lag({'n': name, 'a': amount}) OVER w
                                IS DISTINCT FROM {'n': name, 'a': amount}) AS head
      FROM e WINDOW w AS (PARTITION BY id ORDER BY seq, del)),
b AS (SELECT *, lead(seq) OVER (PARTITION BY id ORDER BY seq, del) AS nxt
      FROM h WHERE head OR del)
SELECT id, name, amount, seq AS __START_AT, nxt AS __END_AT FROM b
WHERE head AND (nxt IS NULL OR nxt <> seq)""",
    1: """CREATE OR REPLACE TABLE hand AS
SELECT id, name, amount FROM (
  SELECT *, row_number() OVER (PARTITION BY id ORDER BY seq DESC, op = 'D' DESC) AS rn
  FROM changes) WHERE rn = 1 AND op <> 'D'""",
}


def timed(cmd):
    """(seconds, peak RSS in MiB) of one process."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    dt = time.perf_counter() - t0
    out, err = p.communicate()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{cmd[:3]} failed: {err.decode()[-2000:]}")
    return dt, ru.ru_maxrss / 1024


def query(knut, db, sql):
    p = subprocess.run([knut, "query", "--db", db, "--format", "csv", sql],
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(p.stderr)
    return p.stdout.strip().splitlines()[-1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--changes", type=int, default=1_000_000)
    ap.add_argument("--keys", type=int, default=200_000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--knut", default=str(REPO / "build" / "knut"))
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        (tmp / "d").mkdir()
        subprocess.run([a.knut, "query", GEN.format(keys=a.keys, changes=a.changes,
                                                    out=tmp / "d" / "changes.parquet")],
                       check=True, capture_output=True)
        print(f"changelog: {a.changes} changes over {a.keys} keys; threads=2, "
              f"memory_limit=2GB; best of {a.reps}")
        for scd in (2, 1):
            root = tmp / f"scd{scd}"
            (root / "t").mkdir(parents=True)
            (root / "d").symlink_to(tmp / "d")
            (root / "pipeline.yml").write_text(
                "name: bench\nstorage: storage\nconfiguration:\n  threads: '2'\n"
                "  memory_limit: 2GB\nlibraries:\n  - glob:\n      include: t/**\n")
            (root / "t" / "cdc.sql").write_text(
                "CREATE STREAMING TABLE changes AS SELECT * FROM read_parquet('d/*.parquet');\n"
                "CREATE STREAMING TABLE target;\n"
                "CREATE FLOW apply AS AUTO CDC INTO target FROM STREAM(changes) KEYS (id)\n"
                "  APPLY AS DELETE WHEN op = 'D' SEQUENCE BY seq COLUMNS * EXCEPT (op, seq)\n"
                f"  STORED AS SCD TYPE {scd};\n")
            db = root / "storage" / "pipeline.duckdb"
            subprocess.run([a.knut, "pipeline", "run", root], check=True, capture_output=True)
            native = min(timed([a.knut, "pipeline", "run", str(root), "--full-refresh",
                                "target"]) for _ in range(a.reps))
            hand = min(timed([a.knut, "query", "--db", str(db), SETTINGS + HAND[scd]])
                       for _ in range(a.reps))
            diff = query(a.knut, db, "SELECT (SELECT count(*) FROM (SELECT * FROM target "
                                     "EXCEPT ALL SELECT * FROM hand)) + (SELECT count(*) FROM "
                                     "(SELECT * FROM hand EXCEPT ALL SELECT * FROM target))")
            n = query(a.knut, db, "SELECT count(*) FROM target")
            if diff != "0":
                sys.exit(f"SCD{scd}: native and hand results differ in {diff} rows")
            print(f"SCD{scd} ({n} rows, equal): native {native[0]:.2f} s, "
                  f"{native[1]:.0f} MiB | hand SQL {hand[0]:.2f} s, {hand[1]:.0f} MiB | "
                  f"native/hand time {native[0] / hand[0]:.2f}x")


if __name__ == "__main__":
    main()
