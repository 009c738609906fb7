#!/usr/bin/env python3
"""Sync benchmark: `knut sync` throughput against `knut load` of the same
graph, file-to-queryable latency of the running loop, and peak RSS of one
large file into the embedded store.

1. Throughput. Parquet drops of companies, people and employment (one
   folder per table, several files each) are synced with `knut sync --once`
   into a fresh FalkorDB graph and into a fresh embedded store. The anchor
   (the ceiling) is `knut load --graphar` of the same graph written as
   GraphAr by `knut gar import` from the same files: into FalkorDB with
   `--no-bulk` (the same batched UNWIND MERGE path as the sync sink) and
   with GRAPH.BULK, and into the embedded store (`--db`). Rates are input
   rows per second; ratios are sync / load (1.0 = as fast as the load).
2. Latency. `knut sync` runs as a loop (a long --interval, so only inotify
   wakes it). 100 files of 100 event rows are written one after the other,
   each to a temporary name (`.x.parquet.tmp`, skipped by sync) and renamed
   in. Into FalkorDB the file's moment is when a GRAPH.RO_QUERY polling
   for its last row first finds it. Into the embedded store (its DuckDB file
   is locked by the sync process) the moment is the arrival of the sync's
   JSON log record `table synced` of the round that committed the file
   (KNUT_LOG_FORMAT=json): the commit, not a reader's query.
3. Memory. One Parquet file of 10M rows synced with `--once` into a fresh
   embedded store; peak RSS is the kernel's VmHWM of the sync process
   (polled from /proc/PID/status) and wait4's ru_maxrss.

Every count is checked against what was generated.

    .venv/bin/python bench/sync_bench.py --knut build/knut            # full (~5-10 min)
    .venv/bin/python bench/sync_bench.py --people 100000 --big 1000000 --files 20   # quick
"""
from __future__ import annotations

import argparse
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "integration"))

from peers import FalkorDB  # noqa: E402


def run(cmd, cwd=None, env=None):
    r = subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit(f"failed: {' '.join(map(str, cmd))}\n{r.stdout}\n{r.stderr}")
    return r


def timed(cmd, cwd=None, env=None):
    """Runs cmd; returns (seconds, peak RSS MiB, stdout, stderr). The peak is
    wait4's ru_maxrss of the process (exact), cross-checked by polling VmHWM."""
    t0 = time.monotonic()
    p = subprocess.Popen([str(c) for c in cmd], cwd=cwd, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    outs = {}
    readers = [threading.Thread(target=lambda k=k, f=f: outs.__setitem__(k, f.read()), daemon=True)
               for k, f in (("out", p.stdout), ("err", p.stderr))]
    for th in readers:
        th.start()
    hwm = 0
    while True:
        try:
            for line in Path(f"/proc/{p.pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    hwm = max(hwm, int(line.split()[1]))
        except (OSError, ValueError):
            pass
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        time.sleep(0.02)
    secs = time.monotonic() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    for th in readers:
        th.join()
    if p.returncode != 0:
        sys.exit(f"failed ({p.returncode}): {' '.join(map(str, cmd))}\n{outs['out']}\n"
                 f"{outs['err'][-4000:]}")
    return secs, max(hwm, ru.ru_maxrss) / 1024, outs["out"], outs["err"]


def write_drops(d: Path, people: int, companies: int, files: int):
    """people/companies/employment Parquet drops; returns row counts per table."""
    for t in ("people", "companies", "employment"):
        (d / "drops" / t).mkdir(parents=True)
    per = -(-people // files)
    for k in range(files):
        lo, hi = k * per, min(people, (k + 1) * per)
        if lo >= hi:
            break
        ids = pa.array(range(lo, hi), pa.int64())
        pq.write_table(pa.table({
            "person_id": ids,
            "first_name": pa.array([f"first{i % 5000}" for i in range(lo, hi)]),
            "last_name": pa.array([f"last{i % 7919}" for i in range(lo, hi)]),
            "age": pa.array([18 + i % 60 for i in range(lo, hi)], pa.int64()),
            "score": pa.array([(i % 1000) / 8.0 for i in range(lo, hi)], pa.float64()),
        }), d / "drops" / "people" / f"people-{k:04d}.parquet")
        # one job per person: (person, company) pairs are unique, so every row is one edge
        pq.write_table(pa.table({
            "person_id": ids,
            "company_id": pa.array([(i * 2654435761) % companies for i in range(lo, hi)],
                                   pa.int64()),
            "title": pa.array([f"title{i % 37}" for i in range(lo, hi)]),
            "since": pa.array([1262304000 + i % 300000000 for i in range(lo, hi)], pa.int64()),
        }), d / "drops" / "employment" / f"employment-{k:04d}.parquet")
    pq.write_table(pa.table({
        "company_id": pa.array(range(companies), pa.int64()),
        "name": pa.array([f"company{i}" for i in range(companies)]),
        "city": pa.array([f"city{i % 211}" for i in range(companies)]),
    }), d / "drops" / "companies" / "companies-0000.parquet")
    return {"companies": companies, "people": people, "employment": people}


def incremental_drop(d: Path, people: int, companies: int, n: int) -> int:
    """n people rows: ids people - n/2 .. people + n/2 (half exist), with their jobs."""
    lo, hi = people - n // 2, people + n // 2
    pq.write_table(pa.table({
        "person_id": pa.array(range(lo, hi), pa.int64()),
        "first_name": pa.array([f"again{i % 5000}" for i in range(lo, hi)]),
        "last_name": pa.array([f"last{i % 7919}" for i in range(lo, hi)]),
        "age": pa.array([19 + i % 60 for i in range(lo, hi)], pa.int64()),
        "score": pa.array([(i % 1000) / 4.0 for i in range(lo, hi)], pa.float64()),
    }), d / "drops" / "people" / "people-inc.parquet")
    pq.write_table(pa.table({
        "person_id": pa.array(range(lo, hi), pa.int64()),
        "company_id": pa.array([(i * 2654435761) % companies for i in range(lo, hi)], pa.int64()),
        "title": pa.array([f"title{i % 37}" for i in range(lo, hi)]),
        "since": pa.array([1262304000 + i % 300000000 for i in range(lo, hi)], pa.int64()),
    }), d / "drops" / "employment" / "employment-inc.parquet")
    return hi - lo


SYNC_YML = """\
tables:
  companies:
    path: drops/companies/
    vertices:
      - labels: [Company]
        keys: [company_id]
        rename: {company_id: id}
  people:
    path: drops/people/
    vertices:
      - labels: [Person]
        keys: [person_id]
        rename: {person_id: id}
  employment:
    path: drops/employment/
    edges:
      - type: WORKS_AT
        from: {label: Person, keys: {id: person_id}}
        to: {label: Company, keys: {id: company_id}}
"""

GAR_YML = """\
graph: bench
output: gar
vertices:
  - type: Company
    table: drops/companies/*.parquet
    key: company_id
    properties: [{name: id, column: company_id, primary: true}, name, city]
  - type: Person
    table: drops/people/*.parquet
    key: person_id
    properties: [{name: id, column: person_id, primary: true}, first_name, last_name, age, score]
edges:
  - type: WORKS_AT
    src: {type: Person, key: person_id}
    dst: {type: Company, key: company_id}
    table: drops/employment/*.parquet
    adj_lists: [ordered_by_source]
"""


def falkor_counts(peer, graph):
    with peer.client() as c:
        n = c.execute_command("GRAPH.RO_QUERY", graph, "MATCH (n) RETURN count(n)")[1][0][0]
        e = c.execute_command("GRAPH.RO_QUERY", graph, "MATCH ()-[e]->() RETURN count(e)")[1][0][0]
    return n, e


def store_counts(knut, db):
    sql = ("SELECT (SELECT count(*) FROM v_Person) + (SELECT count(*) FROM v_Company),"
           " (SELECT count(*) FROM e_WORKS_AT)")
    out = run([knut, "query", "--db", db, "-f", "csv", sql]).stdout.strip().splitlines()
    a, b = out[-1].split(",")
    return int(a), int(b)


def throughput(a, d: Path, peer, url):
    t0 = time.monotonic()
    rows = write_drops(d, a.people, a.companies, a.files)
    total = sum(rows.values())
    want = (a.people + a.companies, a.people)
    (d / "sync.yml").write_text(SYNC_YML)
    (d / "gar.yml").write_text(GAR_YML)
    run([a.knut, "gar", "import", "-q", "-c", "gar.yml"], cwd=d)
    gar = d / "gar" / "bench.graph.yml"
    print(f"generated {total:,} rows ({rows}) in {a.files} files per table, and GraphAr, "
          f"in {time.monotonic() - t0:.1f} s", flush=True)

    res = []

    def one(name, cmd, counts, env=None):
        secs, mb, out, err = timed(cmd, cwd=d, env=env)
        got = counts()
        flag = "" if got == want else f"  WARNING counts {got} != {want}"
        print(f"  {name:34s} {secs:7.2f} s {total / secs:12,.0f} rows/s  peak {mb:5.0f} MiB{flag}",
              flush=True)
        res.append((name, secs))
        return secs

    env = dict(os.environ, KNUT_LOG="warn")
    print("throughput (input rows / wall time of the process):")
    s_f = one("sync --once -> FalkorDB", [a.knut, "sync", "--once", "--config", "sync.yml",
                                          "--falkordb", url, "--graph", "sync",
                                          "--ledger", d / "sync.ledger.json"],
              lambda: falkor_counts(peer, "sync"), env)
    s_m = None
    if not a.no_merge:
        s_m = one("sync --once --no-bulk -> FalkorDB", [a.knut, "sync", "--once", "--config",
                                                        "sync.yml", "--falkordb", url, "--graph",
                                                        "syncm", "--no-bulk", "--ledger",
                                                        d / "syncm.ledger.json"],
                  lambda: falkor_counts(peer, "syncm"), env)
    # a later, incremental round: one more people file (half updates, half
    # new) and its employment rows, MERGEd into the graph the first round made
    inc = incremental_drop(d, a.people, a.companies, a.people // 10)
    for g, ledger in (("sync", "sync.ledger.json"), ("syncm", "syncm.ledger.json")):
        if g == "syncm" and s_m is None:
            continue
        secs, mb, _, _ = timed([a.knut, "sync", "--once", "--config", "sync.yml", "--falkordb",
                                url, "--graph", g, "--ledger", d / ledger], cwd=d, env=env)
        n, e = falkor_counts(peer, g)
        flag = "" if (n, e) == (want[0] + inc // 2, want[1] + inc // 2) else \
            f"  WARNING counts {(n, e)}"
        made = "bulk" if g == "sync" else "MERGE"
        print(f"  round 2 ({2 * inc:,} rows) -> graph made by {made:5s} {secs:7.2f} s "
              f"{2 * inc / secs:12,.0f} rows/s  peak {mb:5.0f} MiB{flag}", flush=True)
    for t in ("people", "employment"):
        (d / "drops" / t / f"{t}-inc.parquet").unlink()
    l_f = one("load --no-bulk -> FalkorDB", [a.knut, "load", "-q", "--graphar", gar, "--falkordb",
                                             url, "--graph", "load", "--no-bulk"],
              lambda: falkor_counts(peer, "load"))
    l_b = one("load (GRAPH.BULK) -> FalkorDB", [a.knut, "load", "-q", "--graphar", gar,
                                                "--falkordb", url, "--graph", "bulk"],
              lambda: falkor_counts(peer, "bulk"))
    with peer.client() as c:
        for g in ("sync", "syncm", "load", "bulk"):
            c.execute_command("GRAPH.DELETE", g)
    s_s = one("sync --once -> embedded store", [a.knut, "sync", "--once", "--config", "sync.yml",
                                                "--store", d / "sync.duckdb"],
              lambda: store_counts(a.knut, d / "sync.duckdb"), env)
    l_s = one("load -> embedded store", [a.knut, "load", "-q", "--graphar", gar, "--db",
                                         d / "load.duckdb"],
              lambda: store_counts(a.knut, d / "load.duckdb"))
    if s_m:
        print(f"  ratio sync (bulk first round) / sync --no-bulk: {s_m / s_f:6.1f}x", flush=True)
    print(f"  ratio sync/load FalkorDB (UNWIND): {l_f / s_f:5.2f}   "
          f"sync/load FalkorDB (bulk): {l_b / s_f:5.2f}   "
          f"sync/load embedded store: {l_s / s_s:5.2f}", flush=True)
    shutil.rmtree(d / "drops", ignore_errors=True)
    shutil.rmtree(d / "gar", ignore_errors=True)
    for f in ("sync.duckdb", "load.duckdb"):
        (d / f).unlink(missing_ok=True)


LAT_YML = """\
tables:
  events:
    path: drops/
    format: parquet
    vertices:
      - labels: [Event]
        keys: [event_id]
        rename: {event_id: id}
"""


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def latency(a, d: Path, peer, url, sink: str):
    """Per file: rename-in time to queryable (FalkorDB) / committed (store), in ms."""
    w = d / f"lat-{sink}"
    (w / "drops").mkdir(parents=True)
    (w / "sync.yml").write_text(LAT_YML)
    cmd = [a.knut, "sync", "--config", "sync.yml", "--interval", "3600"]
    cmd += (["--falkordb", url, "--graph", "lat", "--ledger", w / "ledger.json"] if sink == "falkordb"
            else ["--store", w / "lat.duckdb"])
    env = dict(os.environ, KNUT_LOG_FORMAT="json", KNUT_LOG="info")
    p = subprocess.Popen([str(c) for c in cmd], cwd=w, env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    synced: queue.Queue = queue.Queue()

    def reader():  # time-stamps each record as it arrives
        for line in p.stderr:
            now = time.monotonic()
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if rec.get("msg") == "table synced" and rec.get("files", 0) > 0:
                synced.put((now, rec["files"]))
            elif rec.get("level") == "error":
                print(f"    sync: {line.strip()}", flush=True)

    th = threading.Thread(target=reader, daemon=True)
    th.start()
    lat = []
    client = peer.client() if sink == "falkordb" else None
    try:
        time.sleep(1.0)  # the first (idle) round and the inotify watch
        rows = 100
        for k in range(a.lat_files):
            t = pa.table({"event_id": pa.array(range(k * rows, (k + 1) * rows), pa.int64()),
                          "v": pa.array([float(k)] * rows)})
            tmp, final = w / "drops" / f".ev-{k:04d}.parquet.tmp", w / "drops" / f"ev-{k:04d}.parquet"
            pq.write_table(t, tmp)
            t0 = time.monotonic()
            os.rename(tmp, final)
            last = (k + 1) * rows - 1
            deadline = t0 + 30
            if sink == "falkordb":
                q = f"CYPHER id={last} MATCH (n:Event {{id: $id}}) RETURN count(n)"
                while True:
                    try:
                        r = client.execute_command("GRAPH.RO_QUERY", "lat", q)
                        if r[1] and r[1][0][0] == 1:
                            break
                    except Exception:  # noqa: BLE001 - the graph does not exist yet
                        pass
                    if time.monotonic() > deadline:
                        sys.exit(f"file {final.name}: not queryable after 30 s")
                lat.append((time.monotonic() - t0) * 1000)
            else:
                try:
                    when, nfiles = synced.get(timeout=30)
                except queue.Empty:
                    sys.exit(f"file {final.name}: no 'table synced' record after 30 s")
                if nfiles != 1:
                    sys.exit(f"file {final.name}: committed with {nfiles - 1} other files")
                lat.append((when - t0) * 1000)
            time.sleep(0.02)  # files land one at a time
    finally:
        p.terminate()
        p.wait(timeout=60)
        if client:
            client.close()
    if sink == "falkordb":
        with peer.client() as c:
            got = c.execute_command("GRAPH.RO_QUERY", "lat", "MATCH (n:Event) RETURN count(n)")[1][0][0]
        if got != a.lat_files * 100:
            print(f"    WARNING: {got} events in FalkorDB, want {a.lat_files * 100}")
    else:
        got = store_counts_events(a.knut, w / "lat.duckdb")
        if got != a.lat_files * 100:
            print(f"    WARNING: {got} events in the store, want {a.lat_files * 100}")
    what = "queryable in FalkorDB" if sink == "falkordb" else "committed (log record) in store"
    print(f"  {what:32s} p50 {pct(lat, 50):7.1f} ms  p99 {pct(lat, 99):7.1f} ms  "
          f"max {max(lat):7.1f} ms  over {len(lat)} files (goal p50 <= 200 ms)", flush=True)
    shutil.rmtree(w, ignore_errors=True)


def store_counts_events(knut, db):
    out = run([knut, "query", "--db", db, "-f", "csv", "SELECT count(*) FROM v_Event"])
    return int(out.stdout.strip().splitlines()[-1])


def memory(a, d: Path):
    w = d / "mem"
    (w / "drops" / "people").mkdir(parents=True)
    f = w / "drops" / "people" / "big.parquet"
    t0 = time.monotonic()
    run([a.knut, "query",
         f"COPY (SELECT i AS person_id, 'first' || (i % 5000) AS first_name,"
         f" 'last' || (i % 7919) AS last_name, 18 + i % 60 AS age, (i % 1000) / 8.0 AS score"
         f" FROM range({a.big}) t(i)) TO '{f}' (FORMAT parquet)"])
    (w / "sync.yml").write_text("tables:\n  people:\n    path: drops/people/\n    vertices:\n"
                                "      - labels: [Person]\n        keys: [person_id]\n"
                                "        rename: {person_id: id}\n")
    print(f"generated one file of {a.big:,} rows ({f.stat().st_size / 2**20:.0f} MiB) in "
          f"{time.monotonic() - t0:.1f} s", flush=True)
    secs, mb, _, _ = timed([a.knut, "sync", "--once", "--config", "sync.yml", "--store",
                            w / "big.duckdb"], cwd=w, env=dict(os.environ, KNUT_LOG="warn"))
    got = run([a.knut, "query", "--db", w / "big.duckdb", "-f", "csv",
               "SELECT count(*) FROM v_Person"]).stdout.strip().splitlines()[-1]
    flag = "" if int(got) == a.big else f"  WARNING {got} vertices"
    print(f"  sync --once -> embedded store: {secs:7.2f} s {a.big / secs:12,.0f} rows/s  "
          f"peak RSS {mb:6.0f} MiB (goal < 512 MiB){flag}", flush=True)
    shutil.rmtree(w, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--people", type=int, default=1_000_000, help="people rows (= employment rows)")
    ap.add_argument("--companies", type=int, default=20_000)
    ap.add_argument("--files", type=int, default=10, help="files per people/employment table")
    ap.add_argument("--lat-files", type=int, default=100)
    ap.add_argument("--big", type=int, default=10_000_000, help="rows of the memory test's file")
    ap.add_argument("--only", choices=["throughput", "latency", "memory"], action="append")
    ap.add_argument("--knut", default=os.environ.get("KNUT_BIN", REPO / "build" / "knut"))
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    ap.add_argument("--no-merge", action="store_true",
                    help="skip the `sync --no-bulk` first round (the slow MERGE reference)")
    a = ap.parse_args()
    a.knut = Path(a.knut).resolve()
    parts = a.only or ["throughput", "latency", "memory"]
    d = Path(tempfile.mkdtemp(prefix="knut-sync-bench-"))
    peer = FalkorDB(d / "falkordb")
    try:
        peer.start()
        url = f"redis://127.0.0.1:{peer.port}"
        if "throughput" in parts:
            throughput(a, d, peer, url)
        if "latency" in parts:
            print(f"latency, file renamed in -> rows visible ({a.lat_files} files of 100 rows):",
                  flush=True)
            latency(a, d, peer, url, "falkordb")
            latency(a, d, peer, url, "store")
        if "memory" in parts:
            memory(a, d)
    finally:
        peer.stop()
        if not a.keep:
            shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
