#!/usr/bin/env python3
"""DoGet of a 10M-row mixed table over loopback: `knut serve` vs pyarrow.flight.

One DuckDB file is made with `knut query`: table `t` of N rows (int64,
int32, double, varchar, timestamp, decimal(12,2)) and `t_small` of N/10.
Three servers, each its own process on 127.0.0.1, serve `SELECT * FROM t`:

  knut:    `knut serve --db FILE`; GetFlightInfo(CommandStatementQuery),
           then DoGet of its ticket;
  memory:  a pyarrow.flight server holding the whole table in memory
           (loaded with DuckDB's Python client before the clock starts) and
           answering DoGet with it: the C++ Arrow Flight limit (anchor a);
  duckdb:  a pyarrow.flight server whose DoGet runs the SQL through DuckDB's
           Python client and streams its record batch reader: what a user
           would write instead (anchor b).

The client is pyarrow.flight in this process, reading every batch and
keeping none. Each server is fresh per size and transport; best of --reps.
Reported: rows/s, GB/s (the Arrow buffer bytes of the result, the same
count for all three), each server's peak RSS (VmHWM from /proc, so the
memory server's includes its table), the ratios; the same with TLS
(a self-signed certificate made with openssl); knut's peak RSS for
t_small vs t and for the same columns computed from range() at both sizes
(it should not grow with the result); and the latency of
1,000 `SELECT 1`: through ADBC against knut (its cursor prepares, gets the
FlightInfo, DoGets and closes per query), and one DoGet of a kept ticket,
knut vs the duckdb server.

    .venv/bin/python bench/serve_bench.py [--knut build/knut] [--rows N] [--reps R]
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import pyarrow as pa
import pyarrow.flight as fl

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "integration"))
import flightsql_wire as w  # noqa: E402

COLUMNS_SQL = """SELECT
  i::BIGINT AS id,
  (i % 1000)::INTEGER AS k,
  i * 0.25 AS d,
  'name-' || (i % 100003)::VARCHAR AS s,
  TIMESTAMP '2020-01-01' + INTERVAL (i) SECOND AS ts,
  ((i % 1000003) / 100)::DECIMAL(12, 2) AS amount
FROM range({rows}) r(i)"""
TABLE_SQL = "CREATE TABLE {name} AS " + COLUMNS_SQL + ";\n"

# ---- the anchor servers (run as `serve_bench.py --peer KIND ...`) ----


def peer_main(kind: str, db: str, cert: str | None, key: str | None) -> None:
    import duckdb

    con = duckdb.connect(db, read_only=True)

    class Peer(fl.FlightServerBase):
        def __init__(self, location, **kw):
            super().__init__(location, **kw)
            self.tables: dict[str, pa.Table] = {}
            if kind == "memory":  # loaded before the clock starts
                for name in ("t", "t_small"):
                    self.tables[f"SELECT * FROM {name}"] = \
                        con.execute(f"SELECT * FROM {name}").fetch_arrow_table()

        def do_get(self, context, ticket):
            sql = ticket.ticket.decode()
            if kind == "memory":
                return fl.RecordBatchStream(self.tables[sql])
            # one cursor per call: DuckDB connections are not shared across threads
            reader = con.cursor().execute(sql).fetch_record_batch()
            return fl.RecordBatchStream(reader)

    tls = dict(tls_certificates=[fl.CertKeyPair(Path(cert).read_bytes(),
                                                Path(key).read_bytes())]) if cert else {}
    scheme = "grpc+tls" if cert else "grpc"
    srv = Peer(f"{scheme}://127.0.0.1:0", **tls)
    print(f"listening on 127.0.0.1:{srv.port}", flush=True)
    srv.serve()


# ---- the bench ----


class Proc:
    """A server process that prints `listening on HOST:PORT` first."""

    def __init__(self, args: list[str]):
        self.p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                  text=True)
        line = self.p.stdout.readline()
        if not line.startswith("listening on "):
            self.p.kill()
            raise RuntimeError(f"{args[0]} did not start: {line!r}")
        self.port = int(line.strip().rsplit(":", 1)[1])

    def hwm_mib(self) -> float:
        for line in Path(f"/proc/{self.p.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        raise RuntimeError("no VmHWM")

    def stop(self) -> None:
        self.p.terminate()
        try:
            self.p.wait(30)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()


def start(kind: str, knut: Path, db: Path, certs: tuple[Path, Path] | None) -> Proc:
    if kind == "knut":
        # KNUT_LOG=warn: no request log (stderr is not read here)
        args = ["env", "KNUT_LOG=warn", str(knut), "serve", "--db", str(db),
                "--addr", "127.0.0.1:0"]
        if certs:
            args += ["--tls-cert", str(certs[0]), "--tls-key", str(certs[1])]
        return Proc(args)
    args = [sys.executable, __file__, "--peer", kind, "--db", str(db)]
    if certs:
        args += ["--cert", str(certs[0]), "--key", str(certs[1])]
    return Proc(args)


def client(port: int, certs) -> fl.FlightClient:
    if certs:
        return fl.FlightClient(f"grpc+tls://127.0.0.1:{port}",
                               tls_root_certs=certs[0].read_bytes())
    return fl.FlightClient(f"grpc://127.0.0.1:{port}")


def ticket_of(kind: str, c: fl.FlightClient, sql: str) -> fl.Ticket:
    if kind == "knut":
        info = c.get_flight_info(fl.FlightDescriptor.for_command(w.statement_query(sql)))
        return info.endpoints[0].ticket
    return fl.Ticket(sql.encode())


def drain(c: fl.FlightClient, t: fl.Ticket) -> tuple[int, int]:
    rows = nbytes = 0
    for chunk in c.do_get(t):
        rows += chunk.data.num_rows
        nbytes += chunk.data.nbytes
    return rows, nbytes


def doget_run(kind: str, knut: Path, db: Path, table: str, certs, reps: int,
              sql: str | None = None) -> dict:
    sql = sql or f"SELECT * FROM {table}"
    p = start(kind, knut, db, certs)
    try:
        c = client(p.port, certs)
        best = float("inf")
        for _ in range(reps):
            t0 = time.perf_counter()
            rows, nbytes = drain(c, ticket_of(kind, c, sql))  # knut: GetFlightInfo counted
            best = min(best, time.perf_counter() - t0)
        c.close()
        return {"s": best, "rows": rows, "bytes": nbytes, "rss": p.hwm_mib()}
    finally:
        p.stop()


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def latency(knut: Path, db: Path, n: int) -> list[tuple[str, float, float]]:
    import adbc_driver_flightsql.dbapi as flightsql
    out = []
    k = start("knut", knut, db, None)
    d = start("duckdb", knut, db, None)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            conn = flightsql.connect(f"grpc://127.0.0.1:{k.port}")
        cur = conn.cursor()
        times = []
        for i in range(n + 50):
            t0 = time.perf_counter()
            cur.execute("SELECT 1")
            assert cur.fetchall() == [(1,)]
            if i >= 50:  # the first 50 warm up
                times.append(time.perf_counter() - t0)
        cur.close()
        conn.close()
        out.append(("ADBC execute+fetch, knut", pct(times, .5), pct(times, .99)))
        for name, p in (("knut", k), ("duckdb", d)):
            c = client(p.port, None)
            t = ticket_of(name, c, "SELECT 1")
            times = []
            for i in range(n + 50):
                t0 = time.perf_counter()
                assert c.do_get(t).read_all().num_rows == 1
                if i >= 50:
                    times.append(time.perf_counter() - t0)
            c.close()
            out.append((f"pyarrow DoGet of a kept ticket, {name}", pct(times, .5),
                        pct(times, .99)))
    finally:
        k.stop()
        d.stop()
    return out


def make_certs(d: Path) -> tuple[Path, Path]:
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                    "key.pem", "-out", "cert.pem", "-days", "1", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
                   cwd=d, check=True, capture_output=True)
    return d / "cert.pem", d / "key.pem"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--knut", default=str(REPO / "build" / "knut"))
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--peer", choices=("memory", "duckdb"), help=argparse.SUPPRESS)
    ap.add_argument("--db", help=argparse.SUPPRESS)
    ap.add_argument("--cert", help=argparse.SUPPRESS)
    ap.add_argument("--key", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.peer:
        return peer_main(a.peer, a.db, a.cert, a.key)
    knut = Path(a.knut).resolve()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        db = tmp / "bench.duckdb"
        sql = TABLE_SQL.format(name="t", rows=a.rows) + \
            TABLE_SQL.format(name="t_small", rows=a.rows // 10)
        subprocess.run([str(knut), "query", "--db", str(db), sql], check=True,
                       stdout=subprocess.DEVNULL)
        certs = make_certs(tmp)
        print(f"{a.rows} rows of (int64, int32, double, varchar, timestamp, decimal(12,2)); "
              f"best of {a.reps}")
        print(f"{'transport':9} {'server':7} {'rows':>9} {'s':>7} {'Mrows/s':>8} {'GB/s':>6} "
              f"{'RSS MB':>7} {'knut/it':>8}")
        results = {}
        for tname, tc in (("plain", None), ("TLS", certs)):
            for kind in ("knut", "memory", "duckdb"):
                r = doget_run(kind, knut, db, "t", tc, a.reps)
                results[(tname, kind)] = r
                ratio = (r["s"] / results[(tname, "knut")]["s"])
                print(f"{tname:9} {kind:7} {r['rows']:9} {r['s']:7.2f} "
                      f"{r['rows'] / r['s'] / 1e6:8.2f} {r['bytes'] / r['s'] / 1e9:6.2f} "
                      f"{r['rss']:7.0f} {ratio:8.2f}", flush=True)
            base = results[(tname, "knut")]
            for kind in ("memory", "duckdb"):
                assert results[(tname, kind)]["rows"] == base["rows"] == a.rows
        small = doget_run("knut", knut, db, "t_small", None, 1)
        big = results[("plain", "knut")]
        print(f"knut peak RSS, table scan: {small['rows']} rows {small['rss']:.0f} MB, "
              f"{big['rows']} rows {big['rss']:.0f} MB (x{big['rss'] / small['rss']:.2f} "
              f"for x{big['rows'] / small['rows']:.0f} the rows)")
        # the same columns computed from range(): no table blocks in DuckDB's
        # buffer cache, so what is left is the cost of the result itself
        gsmall, gbig = (doget_run("knut", knut, db, "", None, 1,
                                  COLUMNS_SQL.format(rows=n)) for n in (a.rows // 10, a.rows))
        print(f"knut peak RSS, computed: {gsmall['rows']} rows {gsmall['rss']:.0f} MB, "
              f"{gbig['rows']} rows {gbig['rss']:.0f} MB (x{gbig['rss'] / gsmall['rss']:.2f})")
        print(f"latency of {a.queries} `SELECT 1`:")
        for name, p50, p99 in latency(knut, db, a.queries):
            print(f"  {name:40} p50 {p50 * 1e3:6.2f} ms  p99 {p99 * 1e3:6.2f} ms")


if __name__ == "__main__":
    main()
