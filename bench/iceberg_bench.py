#!/usr/bin/env python3
"""Full read of an Iceberg table: `knut iceberg cat` against pyiceberg.

A table of --rows rows (default 10,000,000: int64, double, varchar, date,
timestamp) in --files Parquet files (default 20) is written once with
pyiceberg (its SQL catalog on SQLite), and a position delete file removing
1% of the rows (every 100th row of each file) is committed on top (with
pyiceberg's manifest writers, as tests/integration/iceberg_fixtures.py
does). Then, in one run, each in its own process:

  knut     knut iceberg cat -f arrow -c catalog.db db.t > /dev/null
           (the rows as an Arrow IPC stream: every value converted and written)
  anchor   python -c "SqlCatalog(...).load_table('db.t').scan().to_arrow()"
           (pyiceberg 0.12's read into one Arrow table in memory)

Times are wall clock; memory is the child's peak RSS (wait4's
ru_maxrss; the anchor's includes the Python interpreter). The table is
built and the output checked in child processes too, so this process stays
small: Linux carries a parent's peak RSS into every child it forks. Both must
return rows-minus-deletes rows (checked, not timed). The Iceberg issue's
goal is knut >= 2x pyiceberg on this read, with RSS bounded.

    .venv/bin/python bench/iceberg_bench.py [--rows 10000000] [--files 20]
        [--knut build/knut] [--workdir /tmp/knut-iceberg-bench] [--repeat 3]
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
sys.path.insert(0, str(REPO / "tests" / "integration"))


def run(cmd, stdout=subprocess.DEVNULL):
    """Runs cmd; returns (seconds, peak RSS in MB)."""
    with tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        p = subprocess.Popen([str(c) for c in cmd], stdout=stdout, stderr=err)
        _, status, ru = os.wait4(p.pid, 0)
        secs = time.perf_counter() - t0
        if os.waitstatus_to_exitcode(status) != 0:
            err.seek(0)
            sys.exit(f"failed: {' '.join(map(str, cmd))}\n{err.read()[-3000:]}")
        return secs, ru.ru_maxrss / 1024.0


def build(work: pathlib.Path, rows: int, files: int) -> int:
    """Writes the table; returns the number of rows left after the deletes."""
    import pyarrow as pa
    import pyarrow.compute as pc

    import iceberg_fixtures as F
    cat = F.catalog(work)
    per = rows // files
    tbl = None
    for k in range(files):
        lo = k * per
        ids = pa.array(range(lo, lo + per), pa.int64())
        batch = pa.table({
            "id": ids,
            "score": pc.multiply(pc.cast(ids, pa.float64()), 0.25),
            "name": pc.binary_join_element_wise("name-", pc.cast(pc.bit_wise_and(ids, 65535),
                                                                 pa.string()), ""),
            "day": pc.cast(pc.cast(pc.bit_wise_and(ids, 8191), pa.int32()), pa.date32()),
            "ts": pc.cast(pc.multiply(ids, 1_000_000), pa.timestamp("us")),
        })
        if tbl is None:
            tbl = cat.create_table("db.t", schema=batch.schema)
        tbl.append(batch)
    tbl = cat.load_table("db.t")
    data = [t.file for t in tbl.scan().plan_files()]
    deletes = {f.file_path: list(range(0, f.record_count, 100)) for f in data}
    F.add_position_deletes(tbl, deletes)
    return per * files - sum(len(v) for v in deletes.values())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--files", type=int, default=20)
    ap.add_argument("--knut", default=str(REPO / "build" / "knut"))
    ap.add_argument("--workdir", default="/tmp/knut-iceberg-bench")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--build-only", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--count", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.count:  # a child: the rows of an Arrow IPC stream file
        import pyarrow.ipc as ipc
        with ipc.open_stream(pathlib.Path(args.count).read_bytes()) as r:
            print(sum(b.num_rows for b in r))
        return
    work = pathlib.Path(args.workdir)
    if args.build_only:  # a child: write the table, print the rows kept
        print(build(work, args.rows, args.files))
        return
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    t0 = time.perf_counter()
    want = int(subprocess.run([sys.executable, __file__, "--build-only", "--rows", str(args.rows),
                               "--files", str(args.files), "--workdir", str(work)],
                              check=True, capture_output=True, text=True).stdout.split()[-1])
    print(f"table: {args.rows} rows in {args.files} files, {args.rows - want} deleted by "
          f"position, written by pyiceberg in {time.perf_counter() - t0:.1f} s")

    catalog = work / "catalog.db"
    out = work / "knut.arrows"
    knut_cmd = [args.knut, "iceberg", "cat", "-f", "arrow", "-c", catalog, "db.t"]
    anchor = [sys.executable, "-c",
              "import sys; from pyiceberg.catalog.sql import SqlCatalog; "
              f"c = SqlCatalog('default', uri='sqlite:///{catalog}', "
              f"warehouse='file://{work}/wh'); t = c.load_table('db.t').scan().to_arrow(); "
              f"sys.exit(0 if t.num_rows == {want} else 3)"]

    # Correctness once (not timed): knut's row count.
    with open(out, "wb") as f:
        run(knut_cmd, stdout=f)
    got = int(subprocess.run([sys.executable, __file__, "--count", str(out)], check=True,
                             capture_output=True, text=True).stdout)
    out.unlink()
    if got != want:
        sys.exit(f"knut read {got} rows, expected {want}")

    kt, kr, at, ar = [], [], [], []
    for _ in range(args.repeat):
        s, m = run(knut_cmd)
        kt.append(s)
        kr.append(m)
        s, m = run(anchor)
        at.append(s)
        ar.append(m)
    k, a = min(kt), min(at)
    print(f"knut iceberg cat -f arrow   {k:7.2f} s  peak RSS {max(kr):7.0f} MB")
    print(f"pyiceberg scan().to_arrow() {a:7.2f} s  peak RSS {max(ar):7.0f} MB")
    print(f"ratio (pyiceberg time / knut time): {a / k:.2f}x   (best of {args.repeat})")

    # The changelog of the delete commit (a full read of both snapshots and
    # their difference: 1% of the rows come out as DELETEs). No anchor:
    # pyiceberg has no changelog scan.
    snaps = subprocess.run([args.knut, "iceberg", "snapshots", "-f", "json", "-c", catalog,
                            "db.t"], check=True, capture_output=True, text=True).stdout
    import json
    parent = [json.loads(line) for line in snaps.splitlines()][-2]["snapshot_id"]
    ct, cr = [], []
    for _ in range(args.repeat):
        s, m = run([args.knut, "iceberg", "changes", "-f", "arrow", "--from", parent, "-c",
                    catalog, "db.t"])
        ct.append(s)
        cr.append(m)
    print(f"knut iceberg changes (the delete commit, {args.rows - want} DELETEs) "
          f"{min(ct):7.2f} s  peak RSS {max(cr):7.0f} MB")


if __name__ == "__main__":
    main()
