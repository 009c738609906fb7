#!/usr/bin/env python3
"""Arrow IPC stream throughput: knut's reader/writer against pyarrow's.

Generates 10M rows of mixed types once (int64, double, utf8 of 10-20 bytes,
bool with nulls, timestamp[us]) with pyarrow, saves them as an IPC stream in
a temporary folder, then in the same run measures:

  read:  the whole file into memory (knut: knut_ipc_bench's reader over a file
         descriptor, every batch FULL-validated; pyarrow: open_stream over an
         OSFile, read_all)
  stream: the whole file as a streaming consumer reads it, each batch let go
         before the next is read (knut: the same reader, each batch released;
         pyarrow: iterating open_stream over an OSFile)
  write: the batches each holds in memory to a file (knut: knut_ipc_bench's
         writer over a file descriptor; pyarrow: new_stream over an OSFile)

Headline numbers ("cold") time each operation once in a fresh process, best
of --reps processes: a process that reads a stream starts with no memory to
reuse. The "warm" lines repeat the operation --reps times inside one process,
where pyarrow's allocator (mimalloc) hands back pages already faulted in;
knut recycles message bodies only within one reader (src/arrow/ipc_batch.c),
so "read", whose batches outlive their reader, gets fresh pages each time
while "stream" reuses them. They are shown for transparency. knut's output
file is read back with pyarrow and compared with the input.

    .venv/bin/python bench/arrow_ipc_bench.py [--rows N] [--reps R]
        [--bench build/tests/knut_ipc_bench]
"""

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import pyarrow as pa
import pyarrow.compute as pc

REPO = pathlib.Path(__file__).resolve().parents[1]


def make_table(rows, batch_rows):
    idx = pa.array(range(rows), pa.int64())
    mixed = pc.bit_wise_and(pc.multiply(idx, 2654435761), 0xFFFFFFFF)  # a cheap hash
    text = pc.binary_join_element_wise("user-", pc.cast(pc.multiply(mixed, 3), pa.string()),
                                       "-x", "")
    flag = pc.equal(pc.bit_wise_and(mixed, 1), 0)
    flag = pc.if_else(pc.equal(pc.bit_wise_and(idx, 7), 3), pa.scalar(None, pa.bool_()), flag)
    ts = pc.cast(pc.add(pc.multiply(idx, 1000), 1_700_000_000_000_000), pa.timestamp("us"))
    table = pa.table({
        "id": pc.add(mixed, -(1 << 31)),
        "value": pc.multiply(pc.cast(mixed, pa.float64()), 0.001),
        "name": text,
        "flag": flag,
        "ts": ts,
    })
    return table.combine_chunks(), batch_rows


def write_stream(path, schema, batches):
    with pa.OSFile(str(path), "wb") as f:
        with pa.ipc.new_stream(f, schema) as w:
            for b in batches:
                w.write_batch(b)


def best_of(reps, fn):
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
        del result
    return best


def py_read(path):
    with pa.OSFile(str(path)) as f:
        return pa.ipc.open_stream(f).read_all()


def py_stream(path):
    rows = 0
    with pa.OSFile(str(path)) as f:
        for batch in pa.ipc.open_stream(f):  # the previous batch is freed here
            rows += batch.num_rows
    return rows


def worker(op, data, out, reps):
    """Times pyarrow in this process; prints seconds (best of reps)."""
    if op == "read":
        print(best_of(reps, lambda: py_read(data)))
    elif op == "stream":
        print(best_of(reps, lambda: py_stream(data)))
    else:
        held = py_read(data)
        batches = held.to_batches()
        print(best_of(reps, lambda: write_stream(out, held.schema, batches)))


def fresh(cmd, reps):
    """Best of reps fresh processes; each prints its time (or knut's JSON)."""
    results = []
    for _ in range(reps):
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit("%s failed: %s" % (cmd[0], r.stderr))
        results.append(json.loads(r.stdout))
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--batch-rows", type=int, default=1 << 17)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--bench", default=os.environ.get(
        "KNUT_IPC_BENCH", str(REPO / "build" / "tests" / "knut_ipc_bench")))
    ap.add_argument("--worker", nargs=3, metavar=("OP", "DATA", "OUT"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.worker[0], args.worker[1], args.worker[2], args.reps)
        return
    if not pathlib.Path(args.bench).exists():
        sys.exit("knut_ipc_bench not found at %s (build the tests or pass --bench)" % args.bench)

    with tempfile.TemporaryDirectory(prefix="knut-ipc-bench-") as tmp:
        tmp = pathlib.Path(tmp)
        data, out_py, out_knut = tmp / "data.arrows", tmp / "py.arrows", tmp / "knut.arrows"
        t0 = time.perf_counter()
        table, batch_rows = make_table(args.rows, args.batch_rows)
        write_stream(data, table.schema, table.to_batches(max_chunksize=batch_rows))
        del table
        size = data.stat().st_size
        print("data: %d rows, %.1f MB, batches of %d rows, %s (generated in %.1fs)" % (
            args.rows, size / 1e6, batch_rows, "int64, double, utf8, bool+nulls, timestamp[us]",
            time.perf_counter() - t0))

        me = [sys.executable, __file__]
        cold = {
            ("pyarrow", "read"): min(fresh(me + ["--reps", "1", "--worker", "read", str(data),
                                                 str(out_py)], args.reps)),
            ("pyarrow", "write"): min(fresh(me + ["--reps", "1", "--worker", "write", str(data),
                                                  str(out_py)], args.reps)),
        }
        cold[("pyarrow", "stream")] = min(fresh(me + ["--reps", "1", "--worker", "stream",
                                                      str(data), str(out_py)], args.reps))
        k = fresh([args.bench, str(data), str(out_knut), "1"], args.reps)
        cold[("knut", "read")] = min(x["read_s"] for x in k)
        cold[("knut", "write")] = min(x["write_s"] for x in k)
        # its own processes: streaming after a whole-file read would start warm
        ks = fresh([args.bench, str(data), str(out_knut), "1", "s"], args.reps)
        cold[("knut", "stream")] = min(x["stream_s"] for x in ks)
        warm = {
            ("pyarrow", op): fresh(me + ["--reps", str(args.reps), "--worker", op,
                                         str(data), str(out_py)], 1)[0]
            for op in ("read", "write", "stream")
        }
        kw = fresh([args.bench, str(data), str(out_knut), str(args.reps)], 1)[0]
        warm[("knut", "read")] = kw["read_s"]
        warm[("knut", "write")] = kw["write_s"]
        warm[("knut", "stream")] = fresh([args.bench, str(data), str(out_knut),
                                          str(args.reps), "s"], 1)[0]["stream_s"]
        assert k[0]["rows"] == args.rows and ks[0]["rows"] == args.rows, (k, ks)
        nbytes = {("pyarrow", "read"): size, ("knut", "read"): k[0]["bytes_in"],
                  ("pyarrow", "stream"): size, ("knut", "stream"): ks[0]["bytes_in"],
                  ("pyarrow", "write"): out_py.stat().st_size,
                  ("knut", "write"): k[0]["bytes_out"]}

        # knut wrote the same data: pyarrow reads it back equal
        assert py_read(out_knut).equals(py_read(data)), "knut's output differs from the input"

    rows = args.rows
    for title, t in (("cold: one operation per fresh process, best of %d" % args.reps, cold),
                     ("warm: %d operations in one process, best" % args.reps, warm)):
        print(title)
        print("  %-8s %-6s %10s %14s %8s" % ("", "", "MB/s", "rows/s", "seconds"))
        for op in ("read", "stream", "write"):
            for side in ("pyarrow", "knut"):
                secs = t[(side, op)]
                print("  %-8s %-6s %10.0f %14.3e %8.3f" % (
                    side, op, nbytes[(side, op)] / 1e6 / secs, rows / secs, secs))
        print("  ratio knut/pyarrow (throughput): read %.2f, stream %.2f, write %.2f" % (
            t[("pyarrow", "read")] / t[("knut", "read")],
            t[("pyarrow", "stream")] / t[("knut", "stream")],
            t[("pyarrow", "write")] / t[("knut", "write")]))


if __name__ == "__main__":
    main()
