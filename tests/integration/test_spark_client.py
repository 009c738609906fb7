"""knut's Spark Connect client (knut spark sql/version) against a real
Spark Connect server started from the pyspark package (spark_peer.py).

The server is the peer for every check: the types of a SQL result as
Arrow (and the same rows as pyspark's own client gets them), a large
result streamed in bounded memory across the server's stream cuts
(ReattachExecute), progress events of a multi-stage query, an interrupt
that stops the job on the server (its UI's REST API says so), the bearer
token, Spark's error class and SQLSTATE, and a server that is not there.
"""
from __future__ import annotations

import json
import signal
import subprocess
import threading
import time
import uuid

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.ipc as ipc
import pytest

from peers import free_port
from spark_peer import spark_connect  # noqa: F401  (the session fixture)

ALL_TYPES = (
    "SELECT CAST(-128 AS TINYINT) i8, CAST(-32768 AS SMALLINT) i16, -2147483648 i32, "
    "9223372036854775807L i64, CAST(1.5 AS FLOAT) f32, CAST(2.25 AS DOUBLE) f64, "
    "CAST('12345678901234567890.123456789' AS DECIMAL(38,9)) dec, "
    "CAST(-1.5 AS DECIMAL(5,1)) dec_small, 'héllo' s, X'00FF' bin, true b, "
    "DATE'2024-02-29' dt, TIMESTAMP'2024-02-29 12:34:56.123456 UTC' ts, "
    "TIMESTAMP_NTZ'2024-02-29 12:34:56.123456' ntz, array(1, NULL, 3) arr, "
    "named_struct('x', 1, 'y', 'z') st, map('k', 1, 'l', 2) m, CAST(NULL AS INT) n, "
    "array(named_struct('a', array(1))) nested")

EXPECTED_TYPES = {
    "i8": pa.int8(), "i16": pa.int16(), "i32": pa.int32(), "i64": pa.int64(),
    "f32": pa.float32(), "f64": pa.float64(), "dec": pa.decimal128(38, 9),
    "dec_small": pa.decimal128(5, 1), "s": pa.string(), "bin": pa.binary(),
    "b": pa.bool_(), "dt": pa.date32(), "ntz": pa.timestamp("us"),
    "arr": pa.list_(pa.field("element", pa.int32())),
    "st": pa.struct([pa.field("x", pa.int32(), False), pa.field("y", pa.string(), False)]),
    "m": pa.map_(pa.string(), pa.int32()), "n": pa.int32(),
}


def spark(run_knut, peer, *args, token=True, **kw):
    env = {}
    opts = ["--connect", kw.pop("url", peer.url)]
    if token:
        opts += ["--token-file", str(peer.token_file), "--allow-insecure-token"]
    return run_knut("spark", args[0], *opts, *args[1:], env=env, **kw)


def knut_arrow(knut, peer, sql, *extra, url=None):
    p = subprocess.run([str(knut), "spark", "sql", "--connect", url or peer.url,
                        "--token-file", str(peer.token_file), "--allow-insecure-token",
                        "-f", "arrow", *extra, sql], capture_output=True, timeout=300)
    assert p.returncode == 0, p.stderr.decode()
    return ipc.open_stream(pa.BufferReader(p.stdout)).read_all(), p.stderr.decode()


def pyspark_arrow(peer, sql):
    from pyspark.sql import SparkSession
    # pyspark speaks plaintext with a token only to "localhost"
    url = f"sc://localhost:{peer.port}/;token={peer.token}"
    s = SparkSession.builder.remote(url).getOrCreate()
    try:
        return s.sql(sql).toArrow()
    finally:
        s.stop()


def test_version(run_knut, spark_connect):
    p = spark(run_knut, spark_connect, "version")
    assert p.returncode == 0, p.stderr
    import pyspark
    assert p.stdout.strip() == pyspark.__version__


def test_every_type_is_mapped_exactly(knut, spark_connect):
    t, _ = knut_arrow(knut, spark_connect, ALL_TYPES)
    assert t.num_rows == 1
    for name, typ in EXPECTED_TYPES.items():
        # str(): a map's entry field names and flags are not part of the type
        assert str(t.schema.field(name).type) == str(typ), (name, t.schema.field(name).type)
    # a timestamp with time zone carries the session's zone
    ts = t.schema.field("ts").type
    assert ts.unit == "us" and ts.tz is not None
    row = t.to_pylist()[0]
    import datetime as dt
    from decimal import Decimal
    assert row["i8"] == -128 and row["i16"] == -32768 and row["i32"] == -2**31
    assert row["i64"] == 2**63 - 1 and row["f32"] == 1.5 and row["f64"] == 2.25
    assert row["dec"] == Decimal("12345678901234567890.123456789")
    assert row["dec_small"] == Decimal("-1.5")
    assert row["s"] == "héllo" and row["bin"] == b"\x00\xff" and row["b"] is True
    assert row["dt"] == dt.date(2024, 2, 29)
    assert row["ts"] == dt.datetime(2024, 2, 29, 12, 34, 56, 123456, tzinfo=dt.timezone.utc)
    assert row["ntz"] == dt.datetime(2024, 2, 29, 12, 34, 56, 123456)
    assert row["arr"] == [1, None, 3]
    assert row["st"] == {"x": 1, "y": "z"}
    assert row["m"] == [("k", 1), ("l", 2)]
    assert row["n"] is None
    assert row["nested"] == [{"a": [1]}]
    # pyspark's own client gets the same values from the same server
    ref = pyspark_arrow(spark_connect, ALL_TYPES)
    assert ref.column_names == t.column_names
    for name in t.column_names:
        assert ref.column(name).to_pylist() == t.column(name).to_pylist(), name


def test_json_and_csv_render_the_rows(run_knut, spark_connect):
    p = spark(run_knut, spark_connect, "sql", "-f", "json",
              "SELECT id, CAST(id AS STRING) s FROM range(3) ORDER BY id")
    assert p.returncode == 0, p.stderr
    assert [json.loads(x) for x in p.stdout.splitlines()] == \
        [{"id": i, "s": str(i)} for i in range(3)]
    p = spark(run_knut, spark_connect, "sql", "-f", "csv", "SELECT 1 AS a WHERE false")
    assert p.returncode == 0, p.stderr
    assert p.stdout == "a\n"  # an empty result still has its columns


def rss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def test_large_result_streams_in_bounded_memory(knut, spark_connect):
    n = 3_000_000
    proc = subprocess.Popen(
        [str(knut), "spark", "sql", "--connect", spark_connect.url, "--token-file",
         str(spark_connect.token_file), "--allow-insecure-token", "--events", "-f", "arrow",
         f"SELECT id, id * 2 AS x, CAST(id AS STRING) AS s FROM range({n})"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    peak = [0]
    stop = threading.Event()

    def sample():
        while not stop.is_set():
            peak[0] = max(peak[0], rss_kb(proc.pid))
            time.sleep(0.05)
    t = threading.Thread(target=sample)
    t.start()
    rows = total = 0
    try:
        for batch in ipc.open_stream(proc.stdout):
            rows += batch.num_rows
            total += pc.sum(batch.column("id")).as_py() or 0
        err = proc.stderr.read().decode()
        assert proc.wait(timeout=300) == 0, err
    finally:
        stop.set()
        t.join()
        if proc.poll() is None:
            proc.kill()
    assert rows == n and total == n * (n - 1) // 2
    # ~80 MB of result; the client holds one server message at a time
    assert 0 < peak[0] < 200_000, f"peak RSS {peak[0]} KB"
    # the server cuts reattachable streams every 4 MiB (spark_peer.py): the
    # client went back each time and lost or repeated no row
    events = [json.loads(x) for x in err.splitlines() if x.startswith("{")]
    assert any(e["event"] == "reattach" for e in events)
    assert sum(e["rows"] for e in events if e["event"] == "batch") == n


def test_progress_events_for_a_multi_stage_query(run_knut, spark_connect):
    # one session for both calls: the report interval is a session setting
    url = f"{spark_connect.url};session_id={uuid.uuid4()}"
    p = spark(run_knut, spark_connect, "sql", "SET spark.connect.progress.reportInterval=100ms",
              url=url)
    assert p.returncode == 0, p.stderr
    p = spark(run_knut, spark_connect, "sql", "--events", "-f", "csv",
              "SELECT k, count(*) AS c FROM (SELECT id % 7 AS k FROM range(0, 20000000, 1, 4)) "
              "GROUP BY k ORDER BY k", url=url, timeout=600)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[1:] == [f"{k},{len(range(k, 20000000, 7))}" for k in range(7)]
    events = [json.loads(x) for x in p.stderr.splitlines() if x.startswith("{")]
    progress = [e for e in events if e["event"] == "progress"]
    assert progress, p.stderr
    stages = {s["stage_id"]: s for e in progress for s in e["stages"]}
    assert len(stages) >= 2, stages  # the scan and the aggregation after the shuffle
    scan = min(stages.values(), key=lambda s: s["stage_id"])
    assert scan["num_tasks"] == 4
    for s in stages.values():
        assert 0 <= s["num_completed_tasks"] <= s["num_tasks"]


def test_interrupt_stops_the_query_on_the_server(knut, spark_connect):
    sql = "SELECT count(*) FROM range(0, 100000000000, 1, 2) WHERE id % 1000003 = 7"
    proc = subprocess.Popen(
        [str(knut), "spark", "sql", "--connect", spark_connect.url, "--token-file",
         str(spark_connect.token_file), "--allow-insecure-token", "--events", sql],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # wait until the job runs on the server (a progress event with a stage)
        for line in proc.stderr:
            if line.startswith("{") and json.loads(line).get("stages"):
                break
        proc.send_signal(signal.SIGINT)
        rest = proc.stderr.read()
        assert proc.wait(timeout=120) == 130, rest
        assert "interrupted" in rest
    finally:
        if proc.poll() is None:
            proc.kill()
    # the job of that query ends on the server (not left running)
    deadline = time.monotonic() + 180
    running = None
    while time.monotonic() < deadline:
        try:
            jobs = spark_connect.jobs()
        except OSError:  # the UI answers slowly on a busy machine: ask again
            time.sleep(1)
            continue
        running = [j for j in jobs if j["status"] == "RUNNING"]
        if not running:
            break
        time.sleep(0.5)
    assert running == [], running
    # killed, not finished: a cancelled Spark job reads FAILED
    assert any(j["status"] == "FAILED" for j in jobs)


def test_token_is_sent_and_a_wrong_one_refused(run_knut, spark_connect, tmp_path):
    bad = tmp_path / "bad"
    bad.write_text("not-the-token\n")
    p = run_knut("spark", "sql", "--connect", spark_connect.url, "--token-file", str(bad),
                 "--allow-insecure-token", "SELECT 1")
    assert p.returncode == 1
    assert "refused the credentials: Invalid authentication token" in p.stderr
    assert "not-the-token" not in p.stderr
    p = run_knut("spark", "sql", "--connect", spark_connect.url, "SELECT 1")
    assert p.returncode == 1 and "No authentication token provided" in p.stderr
    # a token is not sent over plaintext unless allowed
    p = run_knut("spark", "sql", "--connect", spark_connect.url, "--token-file",
                 str(spark_connect.token_file), "SELECT 1")
    assert p.returncode == 1 and "use_ssl=true" in p.stderr and "plain text" in p.stderr
    assert spark_connect.token not in p.stderr + p.stdout
    # the right one, from the environment
    p = run_knut("spark", "sql", "--connect", spark_connect.url, "--allow-insecure-token",
                 "-f", "csv", "SELECT 41 + 1 AS x",
                 env={"SPARK_CONNECT_AUTHENTICATE_TOKEN": spark_connect.token})
    assert p.returncode == 0 and p.stdout == "x\n42\n", p.stderr


@pytest.mark.parametrize("sql, cls, state", [
    ("SELECT * FROM no_such_table", "TABLE_OR_VIEW_NOT_FOUND", "42P01"),
    ("SELEC 1", "PARSE_SYNTAX_ERROR", "42601"),
    ("SELECT no_such_column FROM range(1)", "UNRESOLVED_COLUMN.WITH_SUGGESTION", "42703"),
])
def test_bad_sql_gives_the_error_class_and_sqlstate(run_knut, spark_connect, sql, cls, state):
    p = spark(run_knut, spark_connect, "sql", sql)
    assert p.returncode == 1
    assert f"Spark error {cls} (SQLSTATE {state})" in p.stderr, p.stderr
    assert spark_connect.url.rstrip("/") in p.stderr


def test_runtime_error_mid_stream(run_knut, spark_connect):
    p = spark(run_knut, spark_connect, "sql",
              "SELECT assert_true(id < 5, 'id too big') FROM range(10)")
    assert p.returncode == 1
    assert "id too big" in p.stderr


def test_spark_down_names_the_server(run_knut):
    port = free_port()
    p = run_knut("spark", "sql", "--connect", f"sc://127.0.0.1:{port}/", "SELECT 1")
    assert p.returncode == 1
    assert f"Spark Connect server sc://127.0.0.1:{port} is not reachable" in p.stderr
    p = run_knut("spark", "version", "--connect", f"sc://127.0.0.1:{port}/")
    assert p.returncode == 1 and f"sc://127.0.0.1:{port}" in p.stderr


@pytest.mark.parametrize("url, words", [
    ("http://x:1/", "expected sc://host:port/"),
    ("sc://x:99999/", "port must be a number"),
    ("sc://x:1/;tokn=abc", "unknown parameter 'tokn'"),
    ("sc://x:1/;session_id=abc", "must be a UUID"),
    ("sc://x:1/;use_ssl=maybe", "must be true or false"),
])
def test_bad_urls_are_refused_clearly(run_knut, url, words):
    p = run_knut("spark", "sql", "--connect", url, "SELECT 1")
    assert p.returncode == 1 and words in p.stderr, p.stderr


class DroppingProxy:
    """Fault injection (a TCP proxy, not a Spark fake): forwards loopback
    connections to the real server and cuts the first one after `cut`
    bytes from the server, as a dropped network connection would."""

    def __init__(self, target_port: int, cut: int):
        import socket
        self.target_port, self.cut, self.cuts = target_port, cut, 0
        self.lsock = socket.socket()
        self.lsock.bind(("127.0.0.1", 0))
        self.lsock.listen(8)
        self.port = self.lsock.getsockname()[1]
        self.stop = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        import socket
        first = True
        while not self.stop.is_set():
            try:
                c, _ = self.lsock.accept()
            except OSError:
                return
            s = socket.create_connection(("127.0.0.1", self.target_port))
            limit = self.cut if first else None
            first = False
            threading.Thread(target=self._pipe, args=(c, s, None), daemon=True).start()
            threading.Thread(target=self._pipe, args=(s, c, limit), daemon=True).start()

    def _pipe(self, src, dst, limit):
        import socket
        sent = 0
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
                sent += len(data)
                if limit is not None and sent >= limit:
                    self.cuts += 1
                    break
        except OSError:
            pass
        for sock in (src, dst):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

    def close(self):
        self.stop.set()
        self.lsock.close()


def test_a_dropped_connection_is_reattached(knut, spark_connect):
    n = 1_000_000
    proxy = DroppingProxy(spark_connect.port, cut=1 << 20)
    try:
        t, err = knut_arrow(knut, spark_connect, f"SELECT id FROM range({n})", "--events",
                            url=f"sc://127.0.0.1:{proxy.port}/")
    finally:
        proxy.close()
    assert proxy.cuts >= 1
    # every row once, in order, although the first connection died mid-stream
    assert t.num_rows == n
    assert t.column("id").to_pylist() == list(range(n))
    assert any(json.loads(x)["event"] == "reattach" for x in err.splitlines()
               if x.startswith("{"))
